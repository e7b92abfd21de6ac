/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_launcher.c - a placement written for Open MPI, MPICH,
 * Intel MPI and srun (placement/launcher.c): the text of each, the logical
 * numbering of the rankfile, and the placements a one-list launcher cannot
 * say. The real launchers run them in tests/e2e/test_launchers.sh.
 */
#include "placement/inputs.h"
#include "placement/launcher.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The text for `launcher` of leaf_of[] on the tree of `spec`; err on NULL. */
static char *text_of(const char *spec, const int *leaf_of, const int *ranks, int n, int launcher,
                     int names, int *hwt, tmatch_error_t *err)
{
	tmatch_affinity_tree_t *tree;
	char *text;

	memset(err, 0, sizeof(*err));
	tree = tmatch_place_tree_load(spec, NULL, NULL, NULL, err);
	cr_assert_not_null(tree, "%s: %s", spec, err->msg);
	text = tmatch_place_launcher_text(tree, leaf_of, ranks, n, launcher, names, hwt, err);
	tmatch_affinity_tree_destroy(tree);
	return text;
}

static void expect(const char *spec, const int *leaf_of, int n, int launcher, int names,
                   const char *want, int want_hwt)
{
	tmatch_error_t err;
	int hwt = -1;
	char *t = text_of(spec, leaf_of, NULL, n, launcher, names, &hwt, &err);

	cr_assert_not_null(t, "%s: %s", spec, err.msg);
	cr_assert_str_eq(t, want, "%s", spec);
	cr_assert_eq(hwt, want_hwt, "%s: hwthreads %d", spec, hwt);
	free(t);
}

static void refused(const char *spec, const int *leaf_of, int n, int launcher, const char *why)
{
	tmatch_error_t err;
	char *t = text_of(spec, leaf_of, NULL, n, launcher, 0, NULL, &err);

	cr_assert_null(t, "%s: accepted", spec);
	cr_assert_eq(errno, EINVAL);
	cr_assert_not_null(strstr(err.msg, why), "%s: '%s' lacks '%s'", spec, err.msg, why);
}

Test(launcher, names)
{
	static const char *const names[] = {"openmpi", "mpich", "impi", "srun"};
	int l = -1;

	for (int i = 0; i < 4; i++) {
		cr_assert_eq(tmatch_place_launcher_parse(names[i], &l), 0);
		cr_assert_eq(l, i);
	}
	cr_assert_eq(tmatch_place_launcher_parse("mvapich", &l), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_place_launcher_parse(NULL, &l), -1);
}

/* One PU per core: whole cores, logical = OS numbering in a synthetic node. */
Test(launcher, one_pu_per_core)
{
	static const char *node = "synthetic:pack:2 core:2 pu:1";
	static const int leaf[] = {3, 0, 2, 1};

	expect(node, leaf, 4, TMATCH_LAUNCHER_OPENMPI, 0,
	       "rank 0=+n0 slot=3\nrank 1=+n0 slot=0\nrank 2=+n0 slot=2\nrank 3=+n0 slot=1\n", 0);
	expect(node, leaf, 4, TMATCH_LAUNCHER_MPICH, 0, "-bind-to user:3,0,2,1\n", 0);
	expect(node, leaf, 4, TMATCH_LAUNCHER_IMPI, 0, "I_MPI_PIN_PROCESSOR_LIST=3,0,2,1\n", 0);
	expect(node, leaf, 4, TMATCH_LAUNCHER_SRUN, 0, "--cpu-bind=map_cpu:3,0,2,1\n", 0);
}

/*
 * Two hardware threads per core: a leaf is one PU of its core (OS indexes
 * 0,2,4,6 in hwloc's synthetic numbering), so the rankfile counts logical
 * PUs and says so.
 */
Test(launcher, smt_leaves_are_hwthreads)
{
	static const char *node = "synthetic:pack:2 core:2 pu:2";
	static const int leaf[] = {1, 3};

	expect(node, leaf, 2, TMATCH_LAUNCHER_OPENMPI, 0, "rank 0=+n0 slot=2\nrank 1=+n0 slot=6\n",
	       1);
	expect(node, leaf, 2, TMATCH_LAUNCHER_MPICH, 0, "-bind-to user:2,6\n", 0);
}

/* An XML node whose OS numbering is not the logical one (cores of a package
   are 0,2,4,..): the rankfile counts logical cores, the others OS PUs. */
Test(launcher, logical_versus_os_numbers)
{
	static const char *node =
	    "xml:" TMATCH_SRCDIR "/tests/fixtures/affinity/intel-2s-14c-smt.xml";
	tmatch_affinity_tree_t *tree;
	tmatch_error_t err;
	int leaf[2] = {0, 14}; /* first core of each package */
	char *ompi, *mpich;

	memset(&err, 0, sizeof(err));
	tree = tmatch_place_tree_load(node, NULL, NULL, NULL, &err);
	cr_assert_not_null(tree, "%s", err.msg);
	ompi =
	    tmatch_place_launcher_text(tree, leaf, NULL, 2, TMATCH_LAUNCHER_OPENMPI, 0, NULL, &err);
	mpich =
	    tmatch_place_launcher_text(tree, leaf, NULL, 2, TMATCH_LAUNCHER_MPICH, 0, NULL, &err);
	cr_assert_not_null(ompi, "%s", err.msg);
	cr_assert_not_null(mpich, "%s", err.msg);
	/* Each rank's OS PU, as MPICH takes it, is the first PU of the leaf. */
	for (int i = 0; i < 2; i++) {
		hwloc_const_bitmap_t cpus = tmatch_affinity_leaf_cpuset(tree, leaf[i]);
		char want[64];

		snprintf(want, sizeof(want), "%s%d", i ? "," : "user:", hwloc_bitmap_first(cpus));
		cr_assert_not_null(strstr(mpich, want), "'%s' lacks '%s'", mpich, want);
	}
	/* The rankfile counts hwloc's logical PUs: leaf 14 is the 15th core's
	   first PU, logical PU 28 whatever its OS index. */
	cr_assert_str_eq(ompi, "rank 0=+n0 slot=0\nrank 1=+n0 slot=28\n");
	free(ompi);
	free(mpich);
	tmatch_affinity_tree_destroy(tree);
}

/* Cluster trees: names in the rankfile; one list per node for the others. */
Test(launcher, cluster)
{
	static const char *c = "cluster:none,n[1-2],synthetic:pack:1 core:2 pu:1";
	static const int block[] = {1, 0, 3, 2}; /* n1: 1,0  n2: 1,0 */

	expect(c, block, 4, TMATCH_LAUNCHER_OPENMPI, 1,
	       "rank 0=n1 slot=1\nrank 1=n1 slot=0\nrank 2=n2 slot=1\nrank 3=n2 slot=0\n", 0);
	expect(c, block, 4, TMATCH_LAUNCHER_OPENMPI, 0,
	       "rank 0=+n0 slot=1\nrank 1=+n0 slot=0\nrank 2=+n1 slot=1\nrank 3=+n1 slot=0\n", 0);
	expect(c, block, 4, TMATCH_LAUNCHER_SRUN, 1, "--cpu-bind=map_cpu:1,0\n", 0);
	expect(c, block, 4, TMATCH_LAUNCHER_MPICH, 1, "-bind-to user:1,0\n", 0);
}

Test(launcher, one_list_refusals)
{
	static const char *c = "cluster:none,n[1-2],synthetic:pack:1 core:2 pu:1";
	static const int apart[] = {0, 2, 1, 3};     /* ranks 0,2 on n1 */
	static const int differ[] = {0, 1, 3, 2};    /* n1: 0,1  n2: 1,0 */
	static const int uneven[] = {0, 1, 2};       /* n1: 2 ranks, n2: 1 */
	static const int backwards[] = {2, 3, 0, 1}; /* ranks 0,1 on n2 */

	refused(c, apart, 4, TMATCH_LAUNCHER_SRUN, "ranks 0 and 2 are placed apart");
	refused(c, differ, 4, TMATCH_LAUNCHER_MPICH, "local rank 0 has other CPUs");
	refused(c, uneven, 3, TMATCH_LAUNCHER_IMPI, "different numbers of ranks");
	refused(c, backwards, 4, TMATCH_LAUNCHER_SRUN, "placed apart");
}

/* Ranks with several cores each (a node of 2 "slots" of 2 cores): masks. */
Test(launcher, multi_cpu_ranks)
{
	static const char *node = "synthetic:pack:2 core:2 pu:2";
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *tree;
	tmatch_error_t err;
	int leaf[2] = {1, 0}, hwt = -1;
	char *t;

	tmatch_affinity_opts_init(&o);
	o.cpus_per_task = 2;
	memset(&err, 0, sizeof(err));
	tree = tmatch_place_tree_load(node, &o, NULL, NULL, &err);
	cr_assert_not_null(tree, "%s", err.msg);
	t = tmatch_place_launcher_text(tree, leaf, NULL, 2, TMATCH_LAUNCHER_SRUN, 0, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_str_eq(t, "--cpu-bind=mask_cpu:0x50,0x5\n");
	free(t);
	t = tmatch_place_launcher_text(tree, leaf, NULL, 2, TMATCH_LAUNCHER_IMPI, 0, NULL, &err);
	cr_assert_str_eq(t, "I_MPI_PIN_DOMAIN=[50,5]\n");
	free(t);
	t = tmatch_place_launcher_text(tree, leaf, NULL, 2, TMATCH_LAUNCHER_MPICH, 0, NULL, &err);
	cr_assert_str_eq(t, "-bind-to user:4+6,0+2\n");
	free(t);
	t = tmatch_place_launcher_text(tree, leaf, NULL, 2, TMATCH_LAUNCHER_OPENMPI, 0, &hwt, &err);
	cr_assert_str_eq(t, "rank 0=+n0 slot=4,6\nrank 1=+n0 slot=0,2\n");
	cr_assert_eq(hwt, 1);
	free(t);
	tmatch_affinity_tree_destroy(tree);
}

/* --ranks: the rank numbers given, in the order given. */
Test(launcher, rank_ids)
{
	static const int leaf[] = {1, 0};
	static const int ranks[] = {6, 7};
	tmatch_error_t err;
	int hwt;
	char *t = text_of("synthetic:core:2 pu:1", leaf, ranks, 2, TMATCH_LAUNCHER_OPENMPI, 0, &hwt,
	                  &err);

	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_str_eq(t, "rank 6=+n0 slot=1\nrank 7=+n0 slot=0\n");
	free(t);
}

Test(launcher, bad_arguments)
{
	tmatch_error_t err;
	int leaf[1] = {0};

	memset(&err, 0, sizeof(err));
	cr_assert_null(tmatch_place_launcher_text(NULL, leaf, NULL, 1, 0, 0, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	leaf[0] = 99;
	cr_assert_null(
	    text_of("synthetic:core:2 pu:1", leaf, NULL, 1, TMATCH_LAUNCHER_SRUN, 0, NULL, &err));
	cr_assert_not_null(strstr(err.msg, "leaf 99"), "%s", err.msg);
}
