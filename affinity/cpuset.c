/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpuset.c - kind names, and CPU sets (hwloc bitmaps) the way Slurm writes
 * them: the one reader of CPU and core lists "0-3,8", and the list and mask
 * ("0x10f") forms, of any length, through hwloc's own printers.
 */
#include "affinity/affinity_private.h"
#include "treematch/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[TMATCH__K_COUNT] = {
    [TMATCH__K_VIRTUAL] = "virtual", [TMATCH__K_CLUSTER] = "cluster", [TMATCH__K_SWITCH] = "switch",
    [TMATCH__K_NODE] = "node",       [TMATCH__K_PACKAGE] = "package", [TMATCH__K_DIE] = "die",
    [TMATCH__K_NUMA] = "numa",       [TMATCH__K_GROUP] = "group",     [TMATCH__K_L3] = "l3",
    [TMATCH__K_L2] = "l2",           [TMATCH__K_CORE] = "core",       [TMATCH__K_PU] = "pu",
    [TMATCH__K_SLOT] = "slot",
};

const char *tmatch__kind_name(int kind)
{
	if (kind < 0 || kind >= TMATCH__K_COUNT)
		return "?";
	return kind_names[kind];
}

/* Largest CPU number we accept in a list (hwloc handles more, Slurm too, but
   a typo like "0-99999999" should not allocate gigabytes). */
#define MAX_CPU 1048575

int tmatch_affinity_cpuset_parse(const char *list, const char *what, hwloc_bitmap_t set,
                                 tmatch_error_t *err)
{
	hwloc_bitmap_t tmp;
	size_t i = 0;

	if (!set)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_affinity_cpuset_parse: NULL set");
	if (!(tmp = hwloc_bitmap_alloc()))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	if (!list)
		goto bad;
	while (list[i] == ' ' || list[i] == '\t')
		i++;
	if (!list[i])
		goto bad;
	for (;;) {
		long a, b;
		const char *end;
		int why = tmatch__list_item(list + i, MAX_CPU, &a, &b, &end);

		i = (size_t)(end - list);
		if (why)
			goto bad;
		if (hwloc_bitmap_set_range(tmp, (unsigned)a, (int)b) < 0) {
			hwloc_bitmap_free(tmp);
			return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		}
		if (list[i] == ',') {
			i++;
			continue;
		}
		while (list[i] == ' ' || list[i] == '\t' || list[i] == '\n')
			i++;
		if (list[i])
			goto bad;
		break;
	}
	hwloc_bitmap_copy(set, tmp);
	hwloc_bitmap_free(tmp);
	return 0;
bad:
	hwloc_bitmap_free(tmp);
	return tmatch_error_set(err, EINVAL, NULL, 0, (int)i + 1,
	                        "malformed %s at column %d: write it like \"0-3,8\"",
	                        what ? what : "CPU list", (int)i + 1);
}

char *tmatch_affinity_cpuset_list(hwloc_const_bitmap_t set)
{
	char *s = NULL;

	if (!set) {
		errno = EINVAL;
		return NULL;
	}
	if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s) {
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

char *tmatch_affinity_cpuset_mask(hwloc_const_bitmap_t set)
{
	char *s = NULL;

	if (!set) {
		errno = EINVAL;
		return NULL;
	}
	if (hwloc_bitmap_taskset_asprintf(&s, set) < 0 || !s) {
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

int tmatch_affinity_cpuset_logical(const tmatch_affinity_tree_t *tree, int node,
                                   hwloc_const_bitmap_t set, int *unit, hwloc_bitmap_t out,
                                   tmatch_error_t *err)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t covered = NULL, idx = NULL;
	hwloc_obj_t obj = NULL;
	hwloc_obj_type_t type;
	int rc = -1;

	if (!tree || node < 0 || node >= tree->nb_nodes || !set || !unit || !out)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_affinity_cpuset_logical: bad argument");
	topo = tree->nodes[node].topo;
	if (!topo)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "node %s has no hardware topology to number its cores",
		                        tree->nodes[node].name ? tree->nodes[node].name : "?");
	covered = hwloc_bitmap_alloc();
	idx = hwloc_bitmap_alloc();
	if (!covered || !idx) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	/* Cores first: the set as whole cores, if it is a union of them. */
	type = *unit == TMATCH_AFFINITY_UNIT_PU ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE;
	for (;;) {
		hwloc_bitmap_zero(covered);
		hwloc_bitmap_zero(idx);
		obj = NULL;
		while ((obj = hwloc_get_next_obj_by_type(topo, type, obj)) != NULL) {
			if (!obj->cpuset || !hwloc_bitmap_intersects(obj->cpuset, set))
				continue;
			if (!hwloc_bitmap_isincluded(obj->cpuset, set))
				break; /* a core only partly in the set */
			hwloc_bitmap_or(covered, covered, obj->cpuset);
			hwloc_bitmap_set(idx, obj->logical_index);
		}
		if (!obj && hwloc_bitmap_isequal(covered, set))
			break;
		if (type == HWLOC_OBJ_PU) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "CPUs not in the hardware topology of node %s",
			                 tree->nodes[node].name ? tree->nodes[node].name : "?");
			goto out;
		}
		type = HWLOC_OBJ_PU;
	}
	*unit = type == HWLOC_OBJ_PU ? TMATCH_AFFINITY_UNIT_PU : TMATCH_AFFINITY_UNIT_CORE;
	hwloc_bitmap_copy(out, idx);
	rc = 0;
out:
	hwloc_bitmap_free(covered);
	hwloc_bitmap_free(idx);
	return rc;
}
