/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_affinity_node.c - node trees from saved XML topologies of real machine
 * shapes and from synthetic strings: levels kept and merged, padding of
 * partial nodes, SMT policies, --cpus-per-task groups sharing caches, Slurm
 * core numbers, CPU list and mask text, positions, and bad arguments.
 * Never touches the binding of the test process.
 */
#include "affinity/affinity.h"
#include "affinity/affinity_private.h"
#include "tests/unit/cpuset_text.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX     TMATCH_SRCDIR "/tests/fixtures/affinity/"
#define INTEL   FIX "intel-2s-14c-smt.xml"
#define INTEL1S FIX "intel-1s-14c.xml"
#define AMD     FIX "amd-2s-64c-nps4.xml"
#define PARTIAL FIX "partial-7c.xml"

static tmatch_affinity_tree_t *load(const char *xml, int smt, int cpt, const char *restr,
                                    const char *cores)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = xml;
	o.smt = smt;
	o.cpus_per_task = cpt;
	o.restrict_cpus = restr;
	o.alloc_cores = cores;
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s: %s", xml, err.msg);
	return t;
}

static void tleaf_of(const tmatch_affinity_tree_t *t, char *buf, size_t len)
{
	tmatch_topo_format(tmatch_affinity_tree_topo(t), buf, len);
}

/*
 * Invariants every tree must satisfy: the topo's allowed leaves are exactly
 * the real leaves, every real leaf's CPUs are inside the node's allowed set,
 * leaves do not share CPUs, and (when nothing is left over) the leaves cover
 * the units of the allowed set.
 */
static void check_invariants(const tmatch_affinity_tree_t *t, int expect_cover)
{
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(t);
	int n = tmatch_topo_nb_leaves(topo), real = 0, leaf;
	hwloc_bitmap_t seen = hwloc_bitmap_alloc();
	for (leaf = 0; leaf < n; leaf++) {
		tmatch_error_t err;
		hwloc_const_bitmap_t set;
		int isreal = tmatch_affinity_leaf_is_real(t, leaf);
		cr_assert_eq(isreal, tmatch_topo_is_allowed(topo, leaf), "leaf %d", leaf);
		if (!isreal) {
			cr_assert_null(tmatch_affinity_leaf_cpuset(t, leaf));
			continue;
		}
		real++;
		set = tmatch_affinity_leaf_cpuset(t, leaf);
		cr_assert_not_null(set);
		cr_assert_eq(
		    tmatch_affinity_check_inside(t, tmatch_affinity_leaf_node(t, leaf), set, &err),
		    1, "leaf %d cpus %s: %s", leaf, list_of(set), err.msg);
		cr_assert(!hwloc_bitmap_intersects(set, seen), "leaf %d shares CPUs", leaf);
		hwloc_bitmap_or(seen, seen, set);
	}
	cr_assert_eq(real, tmatch_affinity_tree_nb_slots(t));
	cr_assert_eq(real, tmatch_topo_nb_allowed(topo));
	if (expect_cover) {
		const char *a = list_of(tmatch_affinity_tree_allowed_cpuset(t, 0)),
		           *b = list_of(seen);
		cr_assert_str_eq(b, a, "leaves cover %s, allowed %s", b, a);
	}
	hwloc_bitmap_free(seen);
}

struct shape_case {
	const char *xml;
	int smt, cpt;
	const char *restr, *cores;
	int slots;
	const char *tleaf;
	const char *leaf0, *leaf1; /* CPU lists of the first two real leaves */
	int cover;                 /* leaves cover the allowed set exactly */
};

static const struct shape_case shape_cases[] = {
    /* 2-socket Intel with SMT: one PU per core by default; L3, NUMA, L2 merged */
    {INTEL, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL, 28, "tleaf 2 2 1 14 1", "0", "1", 0},
    {INTEL, TMATCH_AFFINITY_SMT_CORE, 1, NULL, NULL, 28, "tleaf 2 2 1 14 1", "0,28", "1,29", 1},
    {INTEL, TMATCH_AFFINITY_SMT_ALL, 1, NULL, NULL, 56, "tleaf 3 2 1 14 1 2 1", "0", "28", 1},
    /* 14-core socket: the root over 14 cores, nothing else branches */
    {INTEL1S, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL, 14, "tleaf 1 14 1", "0", "1", 1},
    /* AMD NPS4: package, NUMA, L3 (8 per socket) all branch */
    {AMD, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL, 128, "tleaf 4 2 1 4 1 2 1 8 1", "0", "1", 0},
    {AMD, TMATCH_AFFINITY_SMT_CORE, 1, NULL, NULL, 128, "tleaf 4 2 1 4 1 2 1 8 1", "0,128", "1,129",
     1},
    /* partial allocation saved as XML: 5 + 2 cores, padded to 2 x 5 */
    {PARTIAL, TMATCH_AFFINITY_SMT_CORE, 1, NULL, NULL, 7, "tleaf 2 2 1 5 1", "0,28", "1,29", 1},
    /* odd cores of the full node through an OS CPU list */
    {INTEL, TMATCH_AFFINITY_SMT_CORE, 1, "1,3,5,7,9,15,17,29,31,33,35,37,43,45", NULL, 7,
     "tleaf 2 2 1 5 1", "1,29", "3,31", 1},
    /* the same through Slurm abstract core numbers */
    {INTEL, TMATCH_AFFINITY_SMT_CORE, 1, NULL, "1,3,5,7,9,15,17", 7, "tleaf 2 2 1 5 1", "1,29",
     "3,31", 1},
    /* both restrictions intersect: cores 0-3 minus CPU 2's core */
    {INTEL, TMATCH_AFFINITY_SMT_ONE, 1, "0-1,3,28-29,31", "0-3", 3, "tleaf 1 3 1", "0", "1", 0},
    /* a single allowed core: one level, one leaf */
    {INTEL, TMATCH_AFFINITY_SMT_ONE, 1, "5", NULL, 1, "tleaf 1 1 1", "5", NULL, 1},
    /* groups of cores for --cpus-per-task */
    {INTEL, TMATCH_AFFINITY_SMT_ONE, 2, NULL, NULL, 14, "tleaf 2 2 1 7 1", "0-1", "2-3", 0},
    {AMD, TMATCH_AFFINITY_SMT_ONE, 4, NULL, NULL, 32, "tleaf 4 2 1 4 1 2 1 2 1", "0-3", "4-7", 0},
    {AMD, TMATCH_AFFINITY_SMT_ALL, 2, NULL, NULL, 128, "tleaf 4 2 1 4 1 2 1 8 1", "0,128", "1,129",
     1},
    /* SMT core: Slurm's CPUs are threads, so 2 CPUs = 1 core, 4 CPUs = 2 cores */
    {INTEL, TMATCH_AFFINITY_SMT_CORE, 2, NULL, NULL, 28, "tleaf 2 2 1 14 1", "0,28", "1,29", 1},
    {INTEL, TMATCH_AFFINITY_SMT_CORE, 4, NULL, NULL, 14, "tleaf 2 2 1 7 1", "0-1,28-29",
     "2-3,30-31", 1},
    {INTEL, TMATCH_AFFINITY_SMT_CORE, 3, NULL, NULL, 14, "tleaf 2 2 1 7 1", "0-1,28-29",
     "2-3,30-31", 1},
    /* 7 cores by 3: a group in socket 0, one across sockets, one core left */
    {PARTIAL, TMATCH_AFFINITY_SMT_ONE, 3, NULL, NULL, 2, "tleaf 1 2 1", "0-2", "3-4,14", 0},
};

static void run_shapes(const struct shape_case *c)
{
	tmatch_affinity_tree_t *t = load(c->xml, c->smt, c->cpt, c->restr, c->cores);
	char buf[256];
	int leaf, k = 0;
	cr_assert_eq(tmatch_affinity_tree_nb_slots(t), c->slots, "%s smt %d cpt %d: %d slots",
	             c->xml, c->smt, c->cpt, tmatch_affinity_tree_nb_slots(t));
	tleaf_of(t, buf, sizeof(buf));
	cr_assert_str_eq(buf, c->tleaf, "%s smt %d cpt %d", c->xml, c->smt, c->cpt);
	for (leaf = 0; leaf < tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(t)) && k < 2;
	     leaf++) {
		const char *want = k == 0 ? c->leaf0 : c->leaf1;
		if (!tmatch_affinity_leaf_is_real(t, leaf))
			continue;
		if (!want)
			break;
		cr_assert_str_eq(list_of(tmatch_affinity_leaf_cpuset(t, leaf)), want,
		                 "real leaf #%d", k);
		k++;
	}
	check_invariants(t, c->cover);
	tmatch_affinity_tree_destroy(t);
}

Test(node, shapes)
{
	size_t i;
	for (i = 0; i < sizeof(shape_cases) / sizeof(shape_cases[0]); i++)
		run_shapes(&shape_cases[i]);
}

/* With groups of cores, the CPUs of one task share the closest cache: on the
   AMD node 4 cores per task never span two L3s (8 cores each, numbered
   8k..8k+7). */
Test(node, groups_stay_in_one_l3)
{
	/* 8 CPUs per task = 4 cores of 2 threads */
	tmatch_affinity_tree_t *t = load(AMD, TMATCH_AFFINITY_SMT_CORE, 8, NULL, NULL);
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(t);
	int leaf;
	for (leaf = 0; leaf < tmatch_topo_nb_leaves(topo); leaf++) {
		hwloc_const_bitmap_t set = tmatch_affinity_leaf_cpuset(t, leaf);
		int first, i;
		if (!set)
			continue;
		first = hwloc_bitmap_first(set);
		cr_assert_eq(hwloc_bitmap_weight(set), 8, "4 cores x 2 PUs");
		hwloc_bitmap_foreach_begin(i, set)
		{
			cr_assert_eq((i % 128) / 8, (first % 128) / 8, "leaf %d spans L3s", leaf);
		}
		hwloc_bitmap_foreach_end();
	}
	check_invariants(t, 1);
	tmatch_affinity_tree_destroy(t);
}

static void count_log(void *arg, int level, const char *msg)
{
	(void)msg;
	if (level == TMATCH_LOG_WARNING)
		(*(int *)arg)++;
}

Test(node, leftover_cores_are_reported)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;
	int warnings = 0;
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = PARTIAL;
	o.cpus_per_task = 3;
	o.log = count_log;
	o.log_arg = &warnings;
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(warnings, 1);
	tmatch_affinity_tree_destroy(t);
}

Test(node, synthetic_and_level_names)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;
	const tmatch_topo_t *topo;
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
	o.input = "pack:2 l3:2 l2:2 l1d:1 core:1 pu:2";
	o.node_name = "n7";
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s", err.msg);
	topo = tmatch_affinity_tree_topo(t);
	cr_assert_eq(tmatch_topo_depth(topo), 3);
	cr_assert_str_eq(tmatch_topo_level_name(topo, 0), "node");
	cr_assert_str_eq(tmatch_topo_level_name(topo, 1), "package");
	cr_assert_str_eq(tmatch_topo_level_name(topo, 2), "l3");
	cr_assert_str_eq(tmatch_affinity_tree_node_name(t, 0), "n7");
	cr_assert_eq(tmatch_affinity_tree_nb_nodes(t), 1);
	check_invariants(t, 0);
	tmatch_affinity_tree_destroy(t);
}

/* An L2 shared by two cores branches, so it is kept as a level. */
Test(node, shared_l2_is_kept)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;
	char buf[64];
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
	o.input = "pack:1 l3:1 l2:4 l1d:2 core:1 pu:1";
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s", err.msg);
	tleaf_of(t, buf, sizeof(buf));
	cr_assert_str_eq(buf, "tleaf 2 4 1 2 1");
	cr_assert_str_eq(tmatch_topo_level_name(tmatch_affinity_tree_topo(t), 1), "l2");
	check_invariants(t, 1);
	tmatch_affinity_tree_destroy(t);
}

Test(node, positions)
{
	tmatch_affinity_tree_t *t = load(INTEL, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL);
	tmatch_affinity_pos_t pos;
	tmatch_error_t err;
	char buf[256];
	/* leaf 15 = second core of socket 1 (CPU 15) */
	cr_assert_str_eq(list_of(tmatch_affinity_leaf_cpuset(t, 15)), "15");
	cr_assert_eq(tmatch_affinity_leaf_position(t, 15, &pos, &err), 0, "%s", err.msg);
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_FULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "node=0/1,package=1/2,numa=0/1,l3=0/1,l2=1/14,core=1/14");
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_LEVELS, buf, sizeof(buf));
	cr_assert_str_eq(buf, "node,package,numa,l3,l2,core");
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_INDEX, buf, sizeof(buf));
	cr_assert_str_eq(buf, "0,1,0,0,1,1");
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_COUNT, buf, sizeof(buf));
	cr_assert_str_eq(buf, "1,2,1,1,14,14");
	cr_assert_eq(pos.level[5].global, 15);
	/* a short buffer is truncated, the length returned is the full one */
	cr_assert_eq(tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_LEVELS, buf, 5),
	             (int)strlen("node,package,numa,l3,l2,core"));
	cr_assert_str_eq(buf, "node");
	cr_assert_str_eq(kept_text(tmatch_affinity_pos_string(&pos, TMATCH_AFFINITY_POS_INDEX)),
	                 "0,1,0,0,1,1");
	errno = 0;
	cr_assert_null(tmatch_affinity_pos_string(&pos, 9));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_affinity_pos_format(&pos, 9, buf, sizeof(buf)), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_affinity_pos_format(NULL, 0, buf, sizeof(buf)), -1);
	cr_assert_eq(tmatch_affinity_leaf_position(t, -1, &pos, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_affinity_leaf_position(t, 1 << 20, &pos, NULL), -1);
	tmatch_affinity_tree_destroy(t);

	/* AMD: core 13 is core 5 of 8 in the second L3 of NUMA node 0 */
	t = load(AMD, TMATCH_AFFINITY_SMT_ALL, 1, NULL, NULL);
	cr_assert_str_eq(list_of(tmatch_affinity_leaf_cpuset(t, 27)), "141");
	tmatch_affinity_leaf_position(t, 27, &pos, NULL);
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_FULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "node=0/1,package=0/2,numa=0/4,l3=1/2,l2=5/8,core=5/8,pu=1/2");
	tmatch_affinity_tree_destroy(t);
}

Test(node, padding_leaves_of_partial_node)
{
	tmatch_affinity_tree_t *t = load(PARTIAL, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL);
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(t);
	int leaf;
	/* socket 1 has 2 of 5 slots: leaves 7, 8, 9 are padding */
	for (leaf = 7; leaf < 10; leaf++) {
		cr_assert(!tmatch_topo_is_allowed(topo, leaf));
		cr_assert(!tmatch_affinity_leaf_is_real(t, leaf));
		errno = 0;
		cr_assert_eq(tmatch_affinity_leaf_node(t, leaf), -1);
		cr_assert_eq(errno, EINVAL);
		errno = 0;
		cr_assert_null(tmatch_affinity_leaf_cpuset(t, leaf));
		cr_assert_eq(errno, EINVAL);
	}
	cr_assert_str_eq(list_of(tmatch_affinity_leaf_cpuset(t, 5)), "14");
	tmatch_affinity_tree_destroy(t);
}

Test(node, slurm_cores_to_os_cpus)
{
	tmatch_affinity_tree_t *t = load(INTEL, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL);
	tmatch_error_t err;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	cr_assert_eq(tmatch_affinity_cores_to_cpuset(t, 0, "0-1,14", set, &err), 0);
	cr_assert_str_eq(list_of(set), "0-1,14,28-29,42");
	errno = 0;
	cr_assert_eq(tmatch_affinity_cores_to_cpuset(t, 0, "28", set, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "cores 0-27"), "%s", err.msg);
	cr_assert_str_eq(list_of(set), "0-1,14,28-29,42", "output untouched on failure");
	cr_assert_eq(tmatch_affinity_cores_to_cpuset(t, 0, "1-", set, &err), -1);
	cr_assert_eq(err.column, 3);
	cr_assert_eq(tmatch_affinity_cores_to_cpuset(t, 1, "0", set, &err), -1);
	cr_assert_eq(tmatch_affinity_cores_to_cpuset(NULL, 0, "0", set, &err), -1);
	cr_assert_eq(tmatch_affinity_cores_to_cpuset(t, 0, "0", NULL, &err), -1);
	tmatch_affinity_tree_destroy(t);

	t = load(AMD, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL);
	tmatch_affinity_cores_to_cpuset(t, 0, "127", set, &err);
	cr_assert_str_eq(list_of(set), "127,255");
	hwloc_bitmap_free(set);
	tmatch_affinity_tree_destroy(t);
}

Test(node, check_inside)
{
	tmatch_affinity_tree_t *t = load(PARTIAL, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL);
	tmatch_error_t err;
	cr_assert_eq(tmatch_affinity_check_inside(t, 0, set_of("0-4,28"), &err), 1);
	cr_assert_eq(tmatch_affinity_check_inside(t, 0, set_of("4-6"), &err), 0);
	cr_assert(strstr(err.msg, "CPUs 5-6 are outside"), "%s", err.msg);
	errno = 0;
	cr_assert_eq(tmatch_affinity_check_inside(t, 0, NULL, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_affinity_check_inside(t, 3, set_of("0"), &err), -1);
	cr_assert_eq(tmatch_affinity_check_inside(NULL, 0, set_of("0"), &err), -1);
	tmatch_affinity_tree_destroy(t);
}

struct mask_case {
	const char *list, *mask;
};

static const struct mask_case mask_cases[] = {
    {"0", "0x1"},
    {"0-1,4", "0x13"},
    {"3", "0x8"},
    {"0-63", "0xffffffffffffffff"},
    {"64", "0x10000000000000000"},
    {"1,3,5,7", "0xaa"},
    {" 2-3\n", "0xc"},
    {"", "0x0"}, /* see empty_set below */
};

static void run_masks(const struct mask_case *c)
{
	cr_assert_str_eq(mask_of(set_of(c->list)), c->mask, "%s", c->list);
}

Test(cpuset, masks)
{
	size_t i;
	for (i = 0; i + 1 < sizeof(mask_cases) / sizeof(mask_cases[0]); i++)
		run_masks(&mask_cases[i]);
}

Test(cpuset, empty_set)
{
	hwloc_bitmap_t s = hwloc_bitmap_alloc();
	cr_assert_str_eq(mask_of(s), "0x0");
	cr_assert_str_eq(list_of(s), "");
	hwloc_bitmap_free(s);
	errno = 0;
	cr_assert_null(tmatch_affinity_cpuset_list(NULL));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(tmatch_affinity_cpuset_mask(NULL));
}

Test(cpuset, list_round_trip)
{
	cr_assert_str_eq(list_of(set_of("0-1,4,6-9")), "0-1,4,6-9");
	cr_assert_str_eq(list_of(set_of("9,8,7,1,0")), "0-1,7-9");
}

/* Thousands of CPUs: no fixed buffer anywhere (4096 CPUs: a 1026-byte mask). */
Test(cpuset, any_number_of_cpus)
{
	const char *mask = mask_of(set_of("0-4095"));
	size_t n = strlen(mask);

	cr_assert_eq(n, 2 + 1024, "0x and 1024 hex digits, got %zu", n);
	cr_assert_eq(strspn(mask + 2, "f"), 1024);
	cr_assert_str_eq(list_of(set_of("4095")), "4095");
	mask = mask_of(set_of("4095"));
	cr_assert_eq(strlen(mask), 2 + 1024);
	cr_assert_eq(mask[2], '8');
	cr_assert_eq(strspn(mask + 3, "0"), 1023);
	cr_assert_str_eq(list_of(set_of("1,3,5-7,64,128-130,1023,4000-4001")),
	                 "1,3,5-7,64,128-130,1023,4000-4001");
}

Test(cpuset, bad_lists)
{
	static const struct {
		const char *list;
		int col;
	} bad[] = {{"", 1},   {"a", 1},    {"1,,2", 3},    {"3-1", 4},
	           {"1-", 3}, {"0-2x", 4}, {"99999999", 7}};
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	tmatch_error_t err;
	size_t i;
	hwloc_bitmap_set(set, 42);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		cr_assert_eq(tmatch_affinity_cpuset_parse(bad[i].list, "core list", set, &err), -1,
		             "'%s'", bad[i].list);
		cr_assert_eq(errno, EINVAL);
		cr_assert_eq(err.column, bad[i].col, "'%s': column %d", bad[i].list, err.column);
		cr_assert(strstr(err.msg, "malformed core list at column"), "%s", err.msg);
		cr_assert_str_eq(list_of(set), "42", "'%s': set untouched", bad[i].list);
	}
	cr_assert_eq(tmatch_affinity_cpuset_parse(NULL, NULL, set, &err), -1);
	cr_assert(strstr(err.msg, "malformed CPU list"), "%s", err.msg);
	cr_assert_eq(tmatch_affinity_cpuset_parse("1", NULL, NULL, &err), -1);
	cr_assert_eq(errno, EINVAL);
	hwloc_bitmap_free(set);
}

Test(node, bad_arguments)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	int smt = -1;

	errno = 0;
	cr_assert_null(tmatch_affinity_node_load(NULL, &err));
	cr_assert_eq(errno, EINVAL);

	tmatch_affinity_opts_init(&o);
	o.source = 7;
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);

	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);
	o.input = FIX "does-not-exist.xml";
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, ENOENT);
	cr_assert_str_eq(err.file, FIX "does-not-exist.xml");
	o.input = FIX "topo-1level.conf"; /* not XML */
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);

	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
	o.input = "pack:2 bogus:3";
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "synthetic"), "%s", err.msg);

	o.input = "pack:2 core:2 pu:1";
	o.smt = 9;
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);
	o.smt = TMATCH_AFFINITY_SMT_ONE;
	o.cpus_per_task = -2;
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);
	o.cpus_per_task = 5; /* only 4 cores */
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "only 4 usable cores"), "%s", err.msg);
	o.cpus_per_task = 1;
	o.restrict_cpus = "0-1,x";
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(err.column, 5);
	o.restrict_cpus = "100-200"; /* no overlap */
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "no CPU"), "%s", err.msg);
	o.restrict_cpus = NULL;
	o.alloc_cores = "4";
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);
	o.alloc_cores = NULL;
	o.use_current_binding = 1; /* only for the live machine */
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_assert_eq(errno, EINVAL);

	cr_assert_eq(tmatch_affinity_smt_parse("all", &smt, &err), 0);
	cr_assert_eq(smt, TMATCH_AFFINITY_SMT_ALL);
	cr_assert_eq(tmatch_affinity_smt_parse("both", &smt, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "one, core or all"), "%s", err.msg);
	cr_assert_eq(smt, TMATCH_AFFINITY_SMT_ALL, "untouched on failure");

	/* accessors on NULL */
	tmatch_affinity_tree_destroy(NULL);
	tmatch_affinity_opts_init(NULL);
	cr_assert_null(tmatch_affinity_tree_topo(NULL));
	cr_assert_null(tmatch_affinity_tree_topo_dup(NULL, &err));
	cr_assert_eq(tmatch_affinity_tree_nb_slots(NULL), -1);
	cr_assert_eq(tmatch_affinity_tree_nb_nodes(NULL), -1);
	cr_assert_null(tmatch_affinity_tree_node_name(NULL, 0));
	cr_assert_eq(tmatch_affinity_leaf_is_real(NULL, 0), 0);
	cr_assert_eq(tmatch_affinity_tree_describe(NULL, NULL, 0), -1);
	cr_assert_null(tmatch_affinity_tree_allowed_cpuset(NULL, 0));
	cr_assert_null(tmatch_affinity_leaf_cpuset(NULL, 0));
}

Test(node, describe_is_deterministic)
{
	tmatch_affinity_tree_t *a = load(PARTIAL, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL);
	tmatch_affinity_tree_t *b = load(PARTIAL, TMATCH_AFFINITY_SMT_ONE, 1, NULL, NULL);
	int la = tmatch_affinity_tree_describe(a, NULL, 0);
	char *ta = malloc((size_t)la + 1), *tb = malloc((size_t)la + 1);
	cr_assert_eq(tmatch_affinity_tree_describe(a, ta, (size_t)la + 1), la);
	cr_assert_eq(tmatch_affinity_tree_describe(b, tb, (size_t)la + 1), la);
	cr_assert_str_eq(ta, tb);
	cr_assert(strstr(ta, "level 1: package  arity 5\n"), "%s", ta);
	cr_assert(strstr(ta, "leaf 5: node localhost cpus 14 mask 0x4000 at "), "%s", ta);
	cr_assert(strstr(ta, "3 padding"), "%s", ta);
	free(ta);
	free(tb);
	tmatch_affinity_tree_destroy(a);
	tmatch_affinity_tree_destroy(b);
}

/* Every mapping the core computes on a node tree lands on real leaves whose
   CPUs are inside the allowed set. */
Test(node, mappings_stay_inside)
{
	static const char *const xmls[] = {INTEL, AMD, PARTIAL};
	size_t x;
	for (x = 0; x < sizeof(xmls) / sizeof(xmls[0]); x++) {
		tmatch_affinity_tree_t *t =
		    load(xmls[x], TMATCH_AFFINITY_SMT_ONE, 1, x == 1 ? "0-37,64-99" : NULL, NULL);
		const tmatch_topo_t *topo = tmatch_affinity_tree_topo(t);
		int n = tmatch_affinity_tree_nb_slots(t), i, *src, *dst, *map;
		tmatch_comm_t *comm;
		tmatch_map_opts_t mo;
		tmatch_error_t err;
		src = malloc(sizeof(int) * (size_t)n * 2);
		dst = src + n;
		for (i = 0; i < n; i++) {
			src[i] = i;
			dst[i] = (i * 7 + 3) % n;
		}
		comm = tmatch_comm_from_edges(n, (size_t)n, src, dst, NULL, &err);
		cr_assert_not_null(comm, "%s", err.msg);
		map = malloc(sizeof(int) * (size_t)n);
		tmatch_map_opts_init(&mo);
		mo.mapper = "treematch";
		if (tmatch_map_check_name("treematch", NULL) < 0)
			mo.mapper = NULL;
		cr_assert_eq(tmatch_map_compute(comm, topo, &mo, map, &err), 0, "%s", err.msg);
		for (i = 0; i < n; i++) {
			cr_assert(tmatch_affinity_leaf_is_real(t, map[i]), "rank %d on padding", i);
			cr_assert_eq(tmatch_affinity_check_inside(
			                 t, 0, tmatch_affinity_leaf_cpuset(t, map[i]), &err),
			             1, "%s", err.msg);
		}
		free(map);
		free(src);
		tmatch_comm_destroy(comm);
		tmatch_affinity_tree_destroy(t);
	}
}

/* A synthetic description is one node, checked before hwloc builds
   anything: hwloc took 47 s for "pack:6351 pu:2" and 6 s and 190 MB for
   16,384 processing units (found by fuzz_specs). The largest accepted
   shapes stay well under a second. */
Test(node, synthetic_beyond_one_node_is_refused_at_once, .timeout = 10)
{
	static const char *const bad[] = {"pack:10000 core:10000 pu:1",
	                                  "pack:99999999999999999999 pu:2",
	                                  "pack:6351 pu:2",
	                                  "pack:3 l3:1711 core:1 pu:2",
	                                  "pack:16 core:256 pu:2",
	                                  "core:257 pu:1",
	                                  "pack: 6351 pu:2",
	                                  "pack:\t+6351 pu:2",
	                                  "core:0x1000 pu:1",
	                                  "core:-1 pu:1",
	                                  "pa:2 l3 :7 l1:1 core:1 8888888882",
	                                  "2 2000 pu:1"};
	static const char *const good[] = {"pack:16 core:256 pu:1", "pack:256 core:16 pu:1",
	                                   "core:256 pu:16"};
	tmatch_affinity_opts_t o;
	tmatch_error_t err;

	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.input = bad[i];
		errno = 0;
		cr_assert_null(tmatch_affinity_node_load(&o, &err), "%s", bad[i]);
		cr_expect_eq(errno, EINVAL);
		cr_expect(strstr(err.msg,
		                 "not one node: give at most 4096 processing units and 256 "
		                 "children"),
		          "%s: %s", bad[i], err.msg);
	}
	o.smt = TMATCH_AFFINITY_SMT_ALL; /* a slot per processing unit */
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		tmatch_affinity_tree_t *t;

		o.input = good[i];
		t = tmatch_affinity_node_load(&o, &err);
		cr_assert_not_null(t, "%s: %s", good[i], err.msg);
		cr_expect_eq(tmatch_affinity_tree_nb_slots(t), 4096, "%s", good[i]);
		tmatch_affinity_tree_destroy(t);
	}
}

/* The XML file is read by us, bounded, from a regular file: hwloc never
   opens a FIFO (which would block) or reads a huge file whole. */
Test(node, hostile_xml_files_are_refused_at_once, .timeout = 10)
{
	char dir[TM_TMP_MAX], p[TM_TMP_MAX + 64];
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	int fd;
	tm_tmpname(dir, sizeof(dir), "tm-xml-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = p;
	snprintf(p, sizeof(p), "%s/fifo.xml", dir);
	cr_assert_eq(mkfifo(p, 0600), 0);
	errno = 0;
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_str_eq(err.file, p);
	cr_expect_not_null(strstr(err.msg, "not a regular file"), "%s", err.msg);
	snprintf(p, sizeof(p), "%s/huge.xml", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)65 << 20), 0); /* sparse: costs nothing */
	close(fd);
	errno = 0;
	cr_assert_null(tmatch_affinity_node_load(&o, &err));
	cr_expect_eq(errno, EFBIG);
	cr_expect_not_null(strstr(err.msg, "more than the 67108864"), "%s", err.msg);
	/* the bytes still reach hwloc whole: a real XML loads as before */
	o.input = INTEL1S;
	{
		tmatch_affinity_tree_t *t = tmatch_affinity_node_load(&o, &err);

		cr_assert_not_null(t, "%s", err.msg);
		cr_expect_eq(tmatch_affinity_tree_nb_slots(t), 14);
		tmatch_affinity_tree_destroy(t);
	}
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	cr_assert_eq(system(p), 0);
}
