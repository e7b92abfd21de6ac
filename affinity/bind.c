/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bind.c - apply a CPU set to a process through hwloc, read the effective
 * binding back, convert Slurm core numbers, and check that a set stays
 * inside what the step may use. CPU sets are hwloc bitmaps throughout.
 */
#include "affinity/affinity_private.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static int check_node(const tmatch_affinity_tree_t *tree, int node, tmatch_error_t *err)
{
	if (!tree || node < 0 || node >= tree->nb_nodes)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "no tree, or node %d is not in it",
		                        node);
	return 0;
}

/* 1 inside, 0 outside (err names the CPUs outside), -1 on ENOMEM. */
static int inside(const tmatch_affinity_tree_t *tree, int node, hwloc_const_bitmap_t set,
                  tmatch_error_t *err)
{
	hwloc_const_bitmap_t allowed = tree->nodes[node].allowed;
	hwloc_bitmap_t out;
	char *list = NULL, *ok = NULL;

	if (!hwloc_bitmap_iszero(set) && hwloc_bitmap_isincluded(set, allowed))
		return 1;
	if (hwloc_bitmap_iszero(set)) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "empty CPU set");
		return 0;
	}
	out = hwloc_bitmap_alloc();
	if (out)
		hwloc_bitmap_andnot(out, set, allowed);
	list = out ? tmatch_affinity_cpuset_list(out) : NULL;
	ok = tmatch_affinity_cpuset_list(allowed);
	hwloc_bitmap_free(out);
	if (!list || !ok) {
		free(list);
		free(ok);
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	}
	tmatch_error_set(err, EINVAL, NULL, 0, 0,
	                 "CPUs %s are outside the allowed set %s of node %s", list, ok,
	                 tree->nodes[node].name);
	free(list);
	free(ok);
	return 0;
}

int tmatch_affinity_check_inside(const tmatch_affinity_tree_t *tree, int node,
                                 hwloc_const_bitmap_t set, tmatch_error_t *err)
{
	if (check_node(tree, node, err) < 0)
		return -1;
	if (!set)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "NULL CPU set");
	return inside(tree, node, set, err);
}

int tmatch_affinity_cores_to_cpuset(const tmatch_affinity_tree_t *tree, int node, const char *cores,
                                    hwloc_bitmap_t out, tmatch_error_t *err)
{
	hwloc_bitmap_t set;
	int rc;

	if (check_node(tree, node, err) < 0)
		return -1;
	if (!out)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "NULL CPU set");
	if (!(set = hwloc_bitmap_alloc()))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	rc = tmatch__cores_to_cpuset(tree->nodes[node].topo, cores, set, err);
	if (rc == 0)
		hwloc_bitmap_copy(out, set);
	hwloc_bitmap_free(set);
	return rc;
}

static int bind_set(const tmatch_affinity_tree_t *tree, int node, pid_t pid,
                    hwloc_const_bitmap_t set, tmatch_error_t *err)
{
	const struct tmatch__node *nd = &tree->nodes[node];
	int r;
	if (inside(tree, node, set, err) != 1)
		return -1;
	if (!nd->this_system || !nd->topo)
		return tmatch_error_set(
		    err, ENOSYS, NULL, 0, 0,
		    "the topology of node %s is not this machine's: nothing bound "
		    "(load it live, or XML with this_system)",
		    nd->name);
	if (pid)
		r = hwloc_set_proc_cpubind(nd->topo, pid, set, HWLOC_CPUBIND_PROCESS);
	else
		r = hwloc_set_cpubind(nd->topo, set, HWLOC_CPUBIND_PROCESS);
	if (r < 0) {
		int e = errno;
		return tmatch_error_set(err, e, NULL, 0, 0, "cannot bind process %ld: %s",
		                        (long)pid, strerror(e));
	}
	return 0;
}

int tmatch_affinity_bind_leaf(const tmatch_affinity_tree_t *tree, int leaf, pid_t pid,
                              tmatch_error_t *err)
{
	hwloc_const_bitmap_t set = tmatch_affinity_leaf_cpuset(tree, leaf);
	if (!set)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "leaf %d is not a usable leaf of this tree", leaf);
	return bind_set(tree, tmatch_affinity_leaf_node(tree, leaf), pid, set, err);
}

int tmatch_affinity_bind_cpuset(const tmatch_affinity_tree_t *tree, int node, pid_t pid,
                                hwloc_const_bitmap_t set, tmatch_error_t *err)
{
	if (check_node(tree, node, err) < 0)
		return -1;
	if (!set)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "NULL CPU set");
	return bind_set(tree, node, pid, set, err);
}

int tmatch_affinity_get_cpuset(pid_t pid, hwloc_bitmap_t set, tmatch_error_t *err)
{
	/* Read the kernel's mask directly: no topology needed, any size. */
	size_t ncpu = 1024;
	cpu_set_t *cs = NULL;
	hwloc_bitmap_t tmp = NULL;
	int rc = -1;
	size_t i;

	if (!set)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "NULL CPU set");
	for (;;) {
		size_t sz = CPU_ALLOC_SIZE(ncpu);
		cs = CPU_ALLOC(ncpu);
		if (!cs) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			goto out;
		}
		CPU_ZERO_S(sz, cs);
		if (sched_getaffinity(pid, sz, cs) == 0)
			break;
		if (errno != EINVAL || ncpu >= (1u << 22)) {
			int e = errno;
			tmatch_error_set(err, e, NULL, 0, 0,
			                 "cannot read the binding of process %ld: %s", (long)pid,
			                 strerror(e));
			goto out;
		}
		CPU_FREE(cs);
		cs = NULL;
		ncpu *= 2;
	}
	if (!(tmp = hwloc_bitmap_alloc())) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	for (i = 0; i < ncpu; i++)
		if (CPU_ISSET_S(i, CPU_ALLOC_SIZE(ncpu), cs))
			hwloc_bitmap_set(tmp, (unsigned)i);
	hwloc_bitmap_copy(set, tmp);
	rc = 0;
out:
	if (cs)
		CPU_FREE(cs);
	hwloc_bitmap_free(tmp);
	return rc;
}
