/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * launcher.c - a placement written for the launchers users start by hand:
 * Open MPI's rankfile, MPICH Hydra's -bind-to user:, Intel MPI's pinning
 * variables and srun's --cpu-bind lists (see tmatch_place_launcher_text).
 *
 * What each launcher counts, and so what is written:
 *   openmpi  "rank R=HOST slot=LIST", LIST = hwloc *logical* cores (or PUs,
 *            when a rank has part of a core: then mpirun must count hardware
 *            threads), the same syntax for Open MPI 4 (--rankfile F) and 5
 *            (--map-by rankfile:file=F); HOST is the node's name in a
 *            cluster, else "+n0" (the first host mpirun is given).
 *   mpich    "-bind-to user:A,B+C": the OS indexes of each local process's
 *            PUs, "+" inside a process, "," between processes.
 *   impi     I_MPI_PIN_PROCESSOR_LIST=A,B (OS indexes) when every rank has
 *            one PU, else I_MPI_PIN_DOMAIN=[m1,m2] (hex masks, no 0x).
 *   srun     --cpu-bind=map_cpu:A,B when every rank has one PU, else
 *            --cpu-bind=mask_cpu:0x..,0x..
 * The last three give one list that every node applies by local rank: they
 * can only say a placement whose nodes hold consecutive blocks of ranks, the
 * same number on each, with the same list; anything else is refused with
 * the reason (the rankfile, or srun --treematch, says any placement).
 */
#include "placement/placement_private.h"
#include "placement/launcher.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const launcher_names[] = {
    [TMATCH_LAUNCHER_OPENMPI] = "openmpi",
    [TMATCH_LAUNCHER_MPICH] = "mpich",
    [TMATCH_LAUNCHER_IMPI] = "impi",
    [TMATCH_LAUNCHER_SRUN] = "srun",
};
#define NB_LAUNCHERS ((int)(sizeof(launcher_names) / sizeof(launcher_names[0])))

int tmatch_place_launcher_parse(const char *name, int *launcher)
{
	for (int i = 0; name && i < NB_LAUNCHERS; i++)
		if (!strcmp(name, launcher_names[i])) {
			*launcher = i;
			return 0;
		}
	errno = EINVAL;
	return -1;
}

/* A growing string; on allocation failure `failed` is set and text dropped. */
struct text {
	char *s;
	size_t len, cap;
	int failed;
};

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		size_t room = t->cap - t->len;

		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if (t->s && (size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->len + (size_t)n + 1)
			cap *= 2;
		char *s = realloc(t->s, cap);
		if (!s) {
			t->failed = 1;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
}

/* "A+B+C" (sep "+") or "A,B" of the set's members. */
static void text_add_members(struct text *t, hwloc_const_bitmap_t set, const char *sep)
{
	int first = 1, i;

	hwloc_bitmap_foreach_begin(i, set)
	{
		text_add(t, "%s%d", first ? "" : sep, i);
		first = 0;
	}
	hwloc_bitmap_foreach_end();
}

static void text_add_mask(struct text *t, hwloc_const_bitmap_t set, int prefix)
{
	char *m = tmatch_affinity_cpuset_mask(set); /* "0x13" */

	if (!m) {
		t->failed = 1;
		return;
	}
	text_add(t, "%s", prefix ? m : m + 2);
	free(m);
}

struct slot {
	int rank, node;
	hwloc_const_bitmap_t cpus;
};

static int by_node_then_rank(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * The per-local-rank list every node must share: slots sorted by node then
 * rank; nodes in rank order, the same count, the same CPU sets. Returns the
 * number of ranks per node, or -1 with the reason in err.
 */
static int common_list(const struct slot *s, int n, const char *name, tmatch_error_t *err)
{
	int per = 0;

	while (per < n && s[per].node == s[0].node)
		per++;
	for (int i = 0; i < n; i++) {
		const struct slot *first = &s[i % per];
		int starts_block = i % per == 0, same_node = i && s[i].node == s[i - 1].node;

		if ((i && starts_block == same_node) || (i == n - 1 && n % per))
			return tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                        "%s: the nodes hold different numbers of ranks; "
			                        "only a rankfile (--format openmpi) or srun "
			                        "--treematch can say this placement",
			                        name);
		if (i && s[i].rank != s[i - 1].rank + 1)
			return tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                        "%s: ranks %d and %d are placed apart, but %s "
			                        "gives each node a block of consecutive ranks; use "
			                        "--format openmpi or srun --treematch",
			                        name, s[i - 1].rank, s[i].rank, name);
		if (!hwloc_bitmap_isequal(s[i].cpus, first->cpus))
			return tmatch_error_set(
			    err, EINVAL, NULL, 0, 0,
			    "%s: local rank %d has other CPUs on one node than "
			    "on another, but %s applies one list to every node; "
			    "use --format openmpi or srun --treematch",
			    name, i % per, name);
	}
	return per;
}

char *tmatch_place_launcher_text(const tmatch_affinity_tree_t *tree, const int *leaf_of,
                                 const int *rank_ids, int n, int launcher, int host_names,
                                 int *hwthreads, tmatch_error_t *err)
{
	struct text t = {0};
	struct slot *s = NULL;
	hwloc_bitmap_t logical = NULL;
	int one_pu = 1, per = 0, unit = TMATCH_AFFINITY_UNIT_CORE;
	const char *name;

	if (!tree || !leaf_of || n <= 0 || launcher < 0 || launcher >= NB_LAUNCHERS) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_place_launcher_text: bad argument");
		return NULL;
	}
	name = launcher_names[launcher];
	s = calloc((size_t)n, sizeof(*s));
	logical = hwloc_bitmap_alloc();
	if (!s || !logical) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		s[i].rank = rank_ids ? rank_ids[i] : i;
		s[i].node = tmatch_affinity_leaf_node(tree, leaf_of[i]);
		s[i].cpus = tmatch_affinity_leaf_cpuset(tree, leaf_of[i]);
		if (s[i].node < 0 || !s[i].cpus) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "rank %d is on leaf %d, which has no CPUs", s[i].rank,
			                 leaf_of[i]);
			goto fail;
		}
		if (hwloc_bitmap_weight(s[i].cpus) != 1)
			one_pu = 0;
	}
	if (launcher == TMATCH_LAUNCHER_OPENMPI) {
		/* Whole cores for every rank, or hardware threads for all. */
		for (int i = 0; i < n && unit == TMATCH_AFFINITY_UNIT_CORE; i++)
			if (tmatch_affinity_cpuset_logical(tree, s[i].node, s[i].cpus, &unit,
			                                   logical, err))
				goto fail;
		for (int i = 0; i < n; i++) {
			int u = unit;

			if (tmatch_affinity_cpuset_logical(tree, s[i].node, s[i].cpus, &u, logical,
			                                   err))
				goto fail;
			if (host_names)
				text_add(&t, "rank %d=%s slot=", s[i].rank,
				         tmatch_affinity_tree_node_name(tree, s[i].node));
			else
				text_add(&t, "rank %d=+n%d slot=", s[i].rank, s[i].node);
			text_add_members(&t, logical, ",");
			text_add(&t, "\n");
		}
		if (hwthreads)
			*hwthreads = unit == TMATCH_AFFINITY_UNIT_PU;
		goto done;
	}
	qsort(s, (size_t)n, sizeof(*s), by_node_then_rank);
	if ((per = common_list(s, n, name, err)) < 0)
		goto fail;
	switch (launcher) {
	case TMATCH_LAUNCHER_MPICH:
		text_add(&t, "-bind-to user:");
		break;
	case TMATCH_LAUNCHER_IMPI:
		text_add(&t, one_pu ? "I_MPI_PIN_PROCESSOR_LIST=" : "I_MPI_PIN_DOMAIN=[");
		break;
	default:
		text_add(&t, one_pu ? "--cpu-bind=map_cpu:" : "--cpu-bind=mask_cpu:");
		break;
	}
	for (int i = 0; i < per; i++) {
		if (i)
			text_add(&t, ",");
		if (launcher == TMATCH_LAUNCHER_MPICH)
			text_add_members(&t, s[i].cpus, "+");
		else if (one_pu)
			text_add_members(&t, s[i].cpus, ",");
		else
			text_add_mask(&t, s[i].cpus, launcher == TMATCH_LAUNCHER_SRUN);
	}
	text_add(&t, "%s\n", launcher == TMATCH_LAUNCHER_IMPI && !one_pu ? "]" : "");
	if (hwthreads)
		*hwthreads = 0;
done:
	if (t.failed) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	hwloc_bitmap_free(logical);
	free(s);
	return t.s;
fail:
	hwloc_bitmap_free(logical);
	free(s);
	free(t.s);
	return NULL;
}

char *tmatch_place_launcher_gpus(int launcher, const int *gpu_index, const int *ngpus, int stride,
                                 int n, tmatch_error_t *err)
{
	struct text t = {0};
	int one = 1;

	if (!gpu_index || !ngpus || n <= 0 || stride <= 0 || launcher < 0 ||
	    launcher >= NB_LAUNCHERS) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_place_launcher_gpus: bad argument");
		return NULL;
	}
	if (launcher != TMATCH_LAUNCHER_SRUN) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "%s cannot give each rank its GPUs: use --format srun, "
		                 "--format bindings, or srun --treematch",
		                 launcher_names[launcher]);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (ngpus[i] != 1)
			one = 0;
	text_add(&t, one ? "--gpu-bind=map_gpu:" : "--gpu-bind=mask_gpu:");
	for (int i = 0; i < n; i++) {
		unsigned long long mask = 0;

		if (i)
			text_add(&t, ",");
		if (one) {
			text_add(&t, "%d", gpu_index[(size_t)i * (size_t)stride]);
			continue;
		}
		for (int j = 0; j < ngpus[i]; j++) {
			int g = gpu_index[(size_t)i * (size_t)stride + j];

			if (g < 0 || g >= 64) {
				free(t.s);
				tmatch_error_set(
				    err, EINVAL, NULL, 0, 0,
				    "srun's mask_gpu counts 64 GPUs, rank %d has GPU %d", i, g);
				return NULL;
			}
			mask |= 1ULL << g;
		}
		text_add(&t, "0x%llx", mask);
	}
	text_add(&t, "\n");
	if (t.failed) {
		free(t.s);
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	return t.s;
}
