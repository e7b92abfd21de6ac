/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_affinity_cluster.c - cluster trees: switches of topology.conf (1, 2
 * and 3 levels) over the step's nodes over node trees, pruning, merging,
 * padding of unbalanced switch trees, the flat fallback, SLURM_TOPOLOGY_ADDR,
 * tasks-per-node capacity, leaf node names and positions, and that every
 * mapping stays on real leaves inside each node's allowed CPUs.
 */
#include "affinity/affinity.h"
#include "conf/topology.h"
#include "tests/unit/cpuset_text.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FIX  TMATCH_SRCDIR "/tests/fixtures/affinity/"
#define NODE "pack:2 l3:1 l2:4 l1d:1 core:1 pu:2" /* 8 cores, 16 PUs */

static tmatch_affinity_tree_t *node_tree(const char *synthetic, const char *restr)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
	o.input = synthetic;
	o.restrict_cpus = restr;
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s", err.msg);
	return t;
}

static tmatch_affinity_tree_t *cluster(const char *conf_file, const char *nodes,
                                       const tmatch_affinity_tree_t *nt, const int *cap)
{
	tmatch_error_t err;
	tmatch_affinity_conf_t *c = NULL;
	tmatch_affinity_tree_t *t;
	if (conf_file) {
		c = tmatch_conf_topology_load(conf_file, &err);
		cr_assert_not_null(c, "%s", err.msg);
	}
	t = tmatch_affinity_cluster_build(c, nodes, nt, cap, &err);
	cr_assert_not_null(t, "%s", err.msg);
	tmatch_affinity_conf_destroy(c);
	return t;
}

static void tleaf(const tmatch_affinity_tree_t *t, char *buf, size_t len)
{
	tmatch_topo_format(tmatch_affinity_tree_topo(t), buf, len);
}

/* Map a ring onto the tree with the core and check every rank's leaf. */
static void check_mapping(const tmatch_affinity_tree_t *t)
{
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(t);
	int n = tmatch_affinity_tree_nb_slots(t), i, *src, *map;
	tmatch_comm_t *comm;
	tmatch_map_opts_t mo;
	tmatch_error_t err;
	src = malloc(sizeof(int) * (size_t)n * 2);
	map = malloc(sizeof(int) * (size_t)n);
	for (i = 0; i < n; i++) {
		src[i] = i;
		src[n + i] = (i + 1) % n;
	}
	comm = tmatch_comm_from_edges(n, (size_t)n, src, src + n, NULL, &err);
	cr_assert_not_null(comm, "%s", err.msg);
	tmatch_map_opts_init(&mo);
	cr_assert_eq(tmatch_map_compute(comm, topo, &mo, map, &err), 0, "%s", err.msg);
	for (i = 0; i < n; i++) {
		int node = tmatch_affinity_leaf_node(t, map[i]);
		cr_assert_geq(node, 0, "rank %d on padding leaf %d", i, map[i]);
		cr_assert_not_null(tmatch_affinity_leaf_cpuset(t, map[i]));
		cr_assert_eq(tmatch_affinity_check_inside(
		                 t, node, tmatch_affinity_leaf_cpuset(t, map[i]), &err),
		             1, "%s", err.msg);
	}
	tmatch_comm_destroy(comm);
	free(src);
	free(map);
}

struct cl_case {
	const char *conf; /* NULL = flat */
	const char *nodes;
	const char *tleaf;
	int slots;
	const char *pos0; /* position of the first leaf */
};

static const struct cl_case cluster_cases[] = {
    /* one switch level: switch over nodes over packages over cores */
    {FIX "topo-1level.conf", "n[1-4]", "tleaf 3 4 1 2 1 4 1", 32,
     "switch=0/1,node=0/4,package=0/2,l3=0/1,l2=0/4,core=0/4"},
    /* two levels, the step spans three leaf switches of 2, 2, 3 nodes */
    {FIX "topo-2level.conf", "n[1-7]", "tleaf 4 3 1 3 1 2 1 4 1", 56,
     "switch1=0/1,switch=0/3,node=0/2,package=0/2,l3=0/1,l2=0/4,core=0/4"},
    /* two levels, step inside one leaf switch: the top switch is pruned */
    {FIX "topo-2level.conf", "n[5-6]", "tleaf 3 2 1 2 1 4 1", 16,
     "switch1=0/1,switch=0/1,node=0/2,package=0/2,l3=0/1,l2=0/4,core=0/4"},
    /* three levels, all 16 nodes */
    {FIX "topo-3level.conf", "cn[001-016]", "tleaf 5 2 1 2 1 4 1 2 1 4 1", 128,
     "switch2=0/1,switch1=0/2,switch=0/2,node=0/4,package=0/2,l3=0/1,l2=0/4,core=0/4"},
    /* three levels, one node per aggregation switch: non-branching levels merged */
    {FIX "topo-3level.conf", "cn[001,009]", "tleaf 3 2 1 2 1 4 1", 16,
     "switch2=0/1,switch1=0/2,switch=0/1,node=0/1,package=0/2,l3=0/1,l2=0/4,core=0/4"},
    /* a node directly under the top switch: a virtual switch above it */
    {FIX "topo-unbalanced.conf", "n[1-4]", "tleaf 4 2 1 3 1 2 1 4 1", 32,
     "switch1=0/1,switch=0/2,node=0/3,package=0/2,l3=0/1,l2=0/4,core=0/4"},
    /* no topology.conf: one flat switch */
    {NULL, "a,b,c", "tleaf 3 3 1 2 1 4 1", 24,
     "switch=0/1,node=0/3,package=0/2,l3=0/1,l2=0/4,core=0/4"},
};

static void run_shapes(const struct cl_case *c)
{
	tmatch_affinity_tree_t *nt = node_tree(NODE, NULL), *t;
	tmatch_affinity_pos_t pos;
	char buf[256];
	int leaf;
	t = cluster(c->conf, c->nodes, nt, NULL);
	tmatch_affinity_tree_destroy(nt); /* the cluster tree does not depend on it */
	tleaf(t, buf, sizeof(buf));
	cr_assert_str_eq(buf, c->tleaf, "%s %s", c->conf ? c->conf : "flat", c->nodes);
	cr_assert_eq(tmatch_affinity_tree_nb_slots(t), c->slots);
	for (leaf = 0; !tmatch_affinity_leaf_is_real(t, leaf); leaf++)
		;
	cr_assert_eq(tmatch_affinity_leaf_position(t, leaf, &pos, NULL), 0);
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_FULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, c->pos0);
	check_mapping(t);
	tmatch_affinity_tree_destroy(t);
}

Test(cluster, shapes)
{
	size_t i;
	for (i = 0; i < sizeof(cluster_cases) / sizeof(cluster_cases[0]); i++)
		run_shapes(&cluster_cases[i]);
}

Test(cluster, leaves_know_their_node)
{
	tmatch_affinity_tree_t *nt = node_tree(NODE, NULL);
	tmatch_affinity_tree_t *t = cluster(FIX "topo-2level.conf", "n[3,1,5]", nt, NULL);
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(t);
	tmatch_affinity_pos_t pos;
	int leaf, per_node[3] = {0, 0, 0};
	/* node indexes follow the node list order */
	cr_assert_eq(tmatch_affinity_tree_nb_nodes(t), 3);
	cr_assert_str_eq(tmatch_affinity_tree_node_name(t, 0), "n3");
	cr_assert_str_eq(tmatch_affinity_tree_node_name(t, 2), "n5");
	for (leaf = 0; leaf < tmatch_topo_nb_leaves(topo); leaf++) {
		int node = tmatch_affinity_leaf_node(t, leaf);
		if (node >= 0)
			per_node[node]++;
	}
	cr_assert_eq(per_node[0], 8);
	cr_assert_eq(per_node[1], 8);
	cr_assert_eq(per_node[2], 8);
	/* switches in topology.conf order: s0 (n1) first, so leaf 0 is on n1 */
	cr_assert_str_eq(tmatch_affinity_tree_node_name(t, tmatch_affinity_leaf_node(t, 0)), "n1");
	tmatch_affinity_leaf_position(t, 0, &pos, NULL);
	cr_assert_eq(pos.level[2].global, 1, "node global index = node list index");
	cr_assert_str_eq(list_of(tmatch_affinity_leaf_cpuset(t, 0)), "0");
	cr_assert_str_eq(list_of(tmatch_affinity_tree_allowed_cpuset(t, 2)), "0-15");
	tmatch_affinity_tree_destroy(t);
	tmatch_affinity_tree_destroy(nt);
}

Test(cluster, capacity_limits_slots)
{
	tmatch_affinity_tree_t *nt = node_tree(NODE, NULL);
	static const int cap[] = {3, 0, 8};
	tmatch_affinity_tree_t *t = cluster(NULL, "n[1-3]", nt, cap);
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(t);
	int leaf, per_node[3] = {0, 0, 0};
	cr_assert_eq(tmatch_affinity_tree_nb_slots(t), 3 + 8 + 8);
	cr_assert_eq(tmatch_topo_nb_allowed(topo), 19);
	for (leaf = 0; leaf < tmatch_topo_nb_leaves(topo); leaf++) {
		int node = tmatch_affinity_leaf_node(t, leaf);
		if (node >= 0)
			per_node[node]++;
	}
	cr_assert_eq(per_node[0], 3);
	/* node 0 keeps its first three cores */
	cr_assert(tmatch_affinity_leaf_is_real(t, 2));
	cr_assert(!tmatch_affinity_leaf_is_real(t, 3));
	check_mapping(t);
	tmatch_affinity_tree_destroy(t);
	tmatch_affinity_tree_destroy(nt);
}

Test(cluster, partial_nodes)
{
	/* each node may use cores 0-2 and 4 only (PUs 0,2,4,8): 3 + 1 per socket */
	tmatch_affinity_tree_t *nt = node_tree(NODE, "0,2,4,8");
	tmatch_affinity_tree_t *t = cluster(FIX "topo-2level.conf", "n[1-4]", nt, NULL);
	char buf[128];
	tleaf(t, buf, sizeof(buf));
	cr_assert_str_eq(buf, "tleaf 4 2 1 2 1 2 1 3 1");
	cr_assert_eq(tmatch_affinity_tree_nb_slots(t), 16);
	check_mapping(t);
	tmatch_affinity_tree_destroy(t);
	tmatch_affinity_tree_destroy(nt);
}

Test(cluster, from_topology_addr)
{
	static const char *const addrs[] = {"top.s0.n1", "top.s0.n2", "top.s1.n3"};
	tmatch_affinity_tree_t *nt = node_tree("core:2 pu:1", NULL), *t;
	tmatch_error_t err;
	tmatch_affinity_conf_t *c = tmatch_affinity_conf_from_addrs(addrs, 3, &err);
	char buf[128];
	cr_assert_not_null(c, "%s", err.msg);
	t = tmatch_affinity_cluster_build(c, "n[1-3]", nt, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	tleaf(t, buf, sizeof(buf));
	cr_assert_str_eq(buf, "tleaf 3 2 1 2 1 2 1");
	cr_assert_eq(tmatch_affinity_tree_nb_slots(t), 6);
	tmatch_affinity_tree_destroy(t);
	tmatch_affinity_conf_destroy(c);
	tmatch_affinity_tree_destroy(nt);
}

Test(cluster, errors)
{
	tmatch_affinity_tree_t *nt = node_tree(NODE, NULL);
	tmatch_error_t err;
	tmatch_affinity_conf_t *c = tmatch_conf_topology_load(FIX "topo-2level.conf", &err);
	static const int toomany[] = {9};
	cr_assert_not_null(c);
	errno = 0;
	cr_assert_null(tmatch_affinity_cluster_build(c, "n[1-2],n9", nt, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "n9 is under no switch"), "%s", err.msg);
	cr_assert_null(tmatch_affinity_cluster_build(c, "n1,n1", nt, NULL, &err));
	cr_assert(strstr(err.msg, "twice"), "%s", err.msg);
	cr_assert_null(tmatch_affinity_cluster_build(c, "n[1-", nt, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(tmatch_affinity_cluster_build(c, "n1", nt, toomany, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(tmatch_affinity_cluster_build(c, "n1", NULL, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(tmatch_affinity_cluster_build(c, NULL, nt, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	tmatch_affinity_conf_destroy(c);
	tmatch_affinity_tree_destroy(nt);
}

/* Counting a hostlist without expanding it (what the plugin does to the
   job's SLURM_STEP_NODELIST before trusting it). */
Test(hostlist, count_without_expanding)
{
	static const struct {
		const char *list;
		long max, want;
	} ok[] = {
	    {"n1", 10, 1},
	    {"n[1-4,7]", 10, 5},
	    {"n[1-4,7],login[01-02]", 10, 7},
	    {"r[1-2]n[01-03]", 10, 6},
	    {"r[1-2]n[01-03]-ib[1]", 10, 6},
	    {"a,b,c", 3, 3},
	    {"a b,,c", 3, 3}, /* Slurm's separators, empty items skipped */
	};
	static const struct {
		const char *list;
		long max;
		int err;
	} bad[] = {
	    {"n[0-999999]", 2, E2BIG}, /* the forged list of a 2-node step */
	    {"n[0-999999999]x[0-999999999]", 1000000, E2BIG},
	    {"a,b,c", 2, E2BIG},
	    {"n[1-", 10, EINVAL},
	    {"n[4-1]", 10, EINVAL},
	    {"n]", 10, EINVAL},
	    {"n[1-2]-ib", 10, EINVAL}, /* text after the last ']': Slurm refuses it */
	    {"a,n[1]x,b", 10, EINVAL},
	    {", ", 10, EINVAL},
	    {"", 10, EINVAL},
	};
	tmatch_error_t err;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int n = -1;
		char **names = tmatch_affinity_hostlist_expand(ok[i].list, &n, &err);

		cr_assert_eq(tmatch_affinity_hostlist_count(ok[i].list, ok[i].max, &err),
		             ok[i].want, "%s: %s", ok[i].list, err.msg);
		cr_assert_eq(n, ok[i].want, "%s: the expansion agrees", ok[i].list);
		tmatch_affinity_hostlist_free(names);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		cr_assert_eq(tmatch_affinity_hostlist_count(bad[i].list, bad[i].max, &err), -1,
		             "%s", bad[i].list);
		cr_assert_eq(errno, bad[i].err, "%s: errno %d", bad[i].list, errno);
	}
}

/* Several groups: the first varies slowest, padding kept; 30,000 groups
   (which once recursed 30,000 deep and overflowed the stack) are refused
   with what is wrong. */
Test(hostlist, groups_in_order_and_deep_lists_refused)
{
	static const char *const want[] = {"r1-n01", "r1-n02", "r1-n5",
	                                   "r2-n01", "r2-n02", "r2-n5"};
	tmatch_error_t err;
	char **v;
	char *deep;
	int n = -1;

	v = tmatch_affinity_hostlist_expand("r[1-2]-n[01-02,5]", &n, &err);
	cr_assert_not_null(v, "%s", err.msg);
	cr_assert_eq(n, 6);
	for (int i = 0; i < 6; i++)
		cr_assert_str_eq(v[i], want[i]);
	tmatch_affinity_hostlist_free(v);
	deep = malloc(1 + 3 * 30000 + 1);
	cr_assert_not_null(deep);
	deep[0] = 'x';
	for (int i = 0; i < 30000; i++)
		memcpy(deep + 1 + 3 * i, "[1]", 3);
	deep[1 + 3 * 30000] = '\0';
	errno = 0;
	cr_assert_null(tmatch_affinity_hostlist_expand(deep, &n, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_not_null(strstr(err.msg, "longer than"), "%s", err.msg);
	cr_assert_eq(tmatch_affinity_hostlist_count(deep, 10, &err), 1, "counting stays iterative");
	free(deep);
}
