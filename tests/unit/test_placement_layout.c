/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_layout.c - the pieces of a layout (placement/layout.c)
 * that need no process: Slurm's tasks-per-node syntax, Slurm's block and
 * cyclic layouts (the baselines of `treematch layout --stats`), the traffic
 * per level, the silent ranks, where topology.conf is found, and a whole
 * layout on two switches.
 */
#include "conf/topology.h"
#include "placement/layout.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Tasks per node                                                           */

struct tpn_ok {
	const char *spec;
	int nnodes;
	int cap[8];
};

static const struct tpn_ok tpn_good[] = {
    {"4", 3, {4, 4, 4}},     {"2(x4)", 4, {2, 2, 2, 2}},     {"2(x3),1", 4, {2, 2, 2, 1}},
    {"4,4,2", 3, {4, 4, 2}}, {"1,3(x2),0", 4, {1, 3, 3, 0}}, {"64(x2)", 2, {64, 64}},
    {"7", 1, {7}},
};

Test(layout_tpn, good_specs)
{
	for (size_t k = 0; k < sizeof(tpn_good) / sizeof(tpn_good[0]); k++) {
		int cap[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
		tmatch_error_t err;
		int rc =
		    tmatch_place_tasks_per_node(tpn_good[k].spec, tpn_good[k].nnodes, cap, &err);
		cr_assert_eq(rc, 0, "'%s': %s", tpn_good[k].spec, err.msg);
		for (int i = 0; i < tpn_good[k].nnodes; i++)
			cr_assert_eq(cap[i], tpn_good[k].cap[i], "'%s' node %d: %d, expected %d",
			             tpn_good[k].spec, i, cap[i], tpn_good[k].cap[i]);
	}
}

struct tpn_bad {
	const char *spec;
	int nnodes;
	const char *msg; /* expected in the error */
};

static const struct tpn_bad tpn_bad_specs[] = {
    {"", 2, "empty"},
    {"x", 2, "column 1"},
    {"2(x", 2, "(xN)"},
    {"2(y3)", 3, "(xN)"},
    {"2(x0)", 2, "(xN)"},
    {"2(x3)", 2, "more than the 2 nodes"},
    {"2,2", 3, "gives 2 nodes, the node list has 3"},
    {"2,2,2", 2, "more than the 2 nodes"},
    {"2;2", 2, "unexpected ';'"},
    {"-1", 1, "column 1"},
    {"3,,", 2, "column 3"},
};

Test(layout_tpn, bad_specs)
{
	for (size_t k = 0; k < sizeof(tpn_bad_specs) / sizeof(tpn_bad_specs[0]); k++) {
		int cap[8] = {9, 9, 9, 9, 9, 9, 9, 9};
		tmatch_error_t err;
		int rc;

		errno = 0;
		rc = tmatch_place_tasks_per_node(tpn_bad_specs[k].spec, tpn_bad_specs[k].nnodes,
		                                 cap, &err);
		cr_assert_eq(rc, -1, "'%s' was accepted", tpn_bad_specs[k].spec);
		cr_assert_eq(errno, EINVAL);
		cr_assert(strstr(err.msg, tpn_bad_specs[k].msg), "'%s': message '%s' lacks '%s'",
		          tpn_bad_specs[k].spec, err.msg, tpn_bad_specs[k].msg);
	}
}

Test(layout_tpn, from_slurm_variables)
{
	int cap[4];
	tmatch_error_t err;

	/* SLURM_TASKS_PER_NODE holds the tasks: used as is */
	cr_assert_eq(tmatch_place_caps_from_slurm("2(x4)", "8(x4)", NULL, 4, 8, cap, &err), 0, "%s",
	             err.msg);
	cr_assert_eq(cap[0] + cap[1] + cap[2] + cap[3], 8);
	/* too few tasks there (salloc -N4 without -n): CPUs per node / cpus per task */
	cr_assert_eq(tmatch_place_caps_from_slurm("1(x4)", "8(x4)", "2", 4, 8, cap, &err), 0, "%s",
	             err.msg);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(cap[i], 4);
	/* nothing usable */
	cr_assert_eq(tmatch_place_caps_from_slurm(NULL, NULL, "2", 4, 8, cap, &err), -1);
	cr_assert(strstr(err.msg, "--tasks-per-node"), "%s", err.msg);
}

/* ------------------------------------------------------------------------ */
/* Block and cyclic                                                         */

Test(layout_slurm, block)
{
	int cap[3] = {3, 1, 2}, node[6];
	int want[6] = {0, 0, 0, 1, 2, 2};
	cr_assert_eq(tmatch_place_layout_block(6, 3, cap, node), 0);
	for (int r = 0; r < 6; r++)
		cr_assert_eq(node[r], want[r], "rank %d on node %d, expected %d", r, node[r],
		             want[r]);
	cr_assert_eq(tmatch_place_layout_block(7, 3, cap, node), -1,
	             "7 ranks do not fit in 6 slots");
}

Test(layout_slurm, cyclic_skips_full_nodes)
{
	int cap[3] = {3, 1, 2}, node[6];
	int want[6] = {0, 1, 2, 0, 2, 0};
	cr_assert_eq(tmatch_place_layout_cyclic(6, 3, cap, node), 0);
	for (int r = 0; r < 6; r++)
		cr_assert_eq(node[r], want[r], "rank %d on node %d, expected %d", r, node[r],
		             want[r]);
	cr_assert_eq(tmatch_place_layout_cyclic(7, 3, cap, node), -1,
	             "7 ranks do not fit in 6 slots");
}

Test(layout_slurm, fewer_ranks_than_slots)
{
	int cap[2] = {4, 4}, node[3];
	cr_assert_eq(tmatch_place_layout_block(3, 2, cap, node), 0);
	cr_assert(node[0] == 0 && node[1] == 0 && node[2] == 0);
	cr_assert_eq(tmatch_place_layout_cyclic(3, 2, cap, node), 0);
	cr_assert(node[0] == 0 && node[1] == 1 && node[2] == 0);
}

/* ------------------------------------------------------------------------ */
/* Traffic per level                                                        */

Test(layout_traffic, levels_add_up)
{
	/* pairs: (0,1) 5 same node, (0,2) 7 same switch, (1,3) 11 across, (2,3) 13 same node */
	int src[4] = {0, 0, 1, 2}, dst[4] = {1, 2, 3, 3};
	double w[4] = {5, 7, 11, 13};
	int node_of_rank[4] = {0, 0, 1, 2}, switch_of_node[3] = {0, 0, 1};
	tmatch_place_traffic_t t;
	tmatch_error_t err;
	tmatch_comm_t *comm = tmatch_comm_from_edges(4, 4, src, dst, w, &err);

	cr_assert_not_null(comm, "%s", err.msg);
	tmatch_place_traffic(comm, node_of_rank, switch_of_node, &t);
	cr_assert_float_eq(t.node, 5, 1e-9);
	cr_assert_float_eq(t.sw, 7, 1e-9);
	cr_assert_float_eq(t.across, 11 + 13, 1e-9);
	cr_assert_float_eq(t.total, 36, 1e-9);
	tmatch_comm_destroy(comm);
}

Test(layout_traffic, widen_keeps_weights_and_adds_silent_ranks)
{
	int src[2] = {0, 1}, dst[2] = {1, 2};
	double w[2] = {3, 4};
	tmatch_error_t err;
	tmatch_comm_t *comm = tmatch_comm_from_edges(3, 2, src, dst, w, &err), *wide;

	cr_assert_not_null(comm, "%s", err.msg);
	wide = tmatch_place_comm_widen(comm, 6, &err);
	cr_assert_not_null(wide, "%s", err.msg);
	cr_assert_eq(tmatch_comm_order(wide), 6);
	cr_assert_float_eq(tmatch_comm_total(wide), tmatch_comm_total(comm), 1e-9);
	cr_assert_float_eq(tmatch_comm_get(wide, 0, 1), 3, 1e-9);
	cr_assert_float_eq(tmatch_comm_get(wide, 2, 1), 4, 1e-9);
	cr_assert_eq(tmatch_comm_row(wide, 5, NULL, NULL), 0);
	tmatch_comm_destroy(wide);
	errno = 0;
	cr_assert_null(tmatch_place_comm_widen(comm, 2, &err), "fewer tasks than ranks");
	cr_assert_eq(errno, EINVAL);
	tmatch_comm_destroy(comm);
}

Test(layout_conf, topology_conf_found_as_slurm_finds_it)
{
	char buf[4096], dir[TM_TMP_MAX], path[4200];
	char *found;
	FILE *f;
	tm_tmpname(dir, sizeof(dir), "tm-layout-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/topology.conf", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("SwitchName=s0 Nodes=n[1-2]\n", f);
	fclose(f);
	snprintf(buf, sizeof(buf), "%s/slurm.conf", dir);
	found = tmatch_conf_topology_find(NULL, buf, 1);
	cr_assert_not_null(found);
	cr_assert_str_eq(found, path, "beside the slurm.conf in use");
	free(found);
	found = tmatch_conf_topology_find("/elsewhere/t.conf", buf, 1);
	cr_assert_str_eq(found, "/elsewhere/t.conf", "an explicit path wins");
	free(found);
	unlink(path);
	errno = 0;
	cr_assert_null(tmatch_conf_topology_find(NULL, buf, 1), "none beside slurm.conf: none");
	cr_assert_eq(errno, ENOENT);
	rmdir(dir);
}

/* ------------------------------------------------------------------------ */
/* A whole layout                                                           */

/* 8 ranks, pairs (i, i+4) heavy: block would split them across switches. */
static tmatch_comm_t *pairs_across(void)
{
	int src[8], dst[8];
	double w[8];
	tmatch_error_t err;
	tmatch_comm_t *c;

	for (int i = 0; i < 4; i++) {
		src[i] = i, dst[i] = i + 4, w[i] = 1000;
		src[4 + i] = i, dst[4 + i] = (i + 1) % 4, w[4 + i] = 1;
	}
	c = tmatch_comm_from_edges(8, 8, src, dst, w, &err);
	cr_assert_not_null(c, "%s", err.msg);
	return c;
}

Test(layout_whole, pairs_share_a_node_and_traffic_adds_up)
{
	char conf[TM_TMP_MAX];
	int fd = mkstemp(tm_tmpname(conf, sizeof(conf), "tm-layout-conf-XXXXXX")),
	    cap[5] = {2, 2, 0, 2, 2};
	tmatch_comm_t *comm = pairs_across();
	tmatch_place_layout_in_t in;
	tmatch_place_layout_t *l = NULL;
	tmatch_error_t err;
	FILE *f = fdopen(fd, "w");

	cr_assert_not_null(f);
	fputs("SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[3-5]\nSwitchName=top "
	      "Switches=s[0-1]\n",
	      f);
	fclose(f);
	memset(&in, 0, sizeof(in));
	in.comm = comm;
	in.ntasks = 8;
	in.nodelist = "n[1-5]";
	in.cap = cap;
	in.topology_conf = conf;
	in.seed = 1;
	cr_assert_eq(tmatch_place_layout(&in, &l, &err), 0, "%s", err.msg);
	cr_assert_eq(l->nnodes, 4, "n3 has no slot: it takes no part");
	cr_assert_str_eq(l->node_name[2], "n4");
	cr_assert_eq(l->nslots, 8);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(l->node_of_rank[i], l->node_of_rank[i + 4], "rank %d with %d", i,
		             i + 4);
	cr_expect_eq(l->switch_of_node[0], l->switch_of_node[1]);
	cr_expect_neq(l->switch_of_node[1], l->switch_of_node[2]);
	cr_expect_float_eq(l->traffic.node, 4000, 1e-9, "every heavy pair on one node");
	cr_expect_float_eq(l->traffic.total, l->block.total, 1e-9);
	cr_expect_float_eq(l->traffic.total, l->cyclic.total, 1e-9);
	cr_expect_gt(l->block.across, l->traffic.across);
	cr_expect_eq(l->nodes_used, 4);
	tmatch_place_layout_destroy(l);

	/* 9 ranks on 8 slots: the request does not fit (EDOM: a usage problem). */
	in.ntasks = 9;
	errno = 0;
	l = NULL;
	cr_assert_eq(tmatch_place_layout(&in, &l, &err), -1);
	cr_expect_eq(errno, EDOM);
	cr_expect_not_null(strstr(err.msg, "9 ranks do not fit: the 4 nodes offer 8 task slots"),
	                   "%s", err.msg);
	cr_expect_null(l);
	in.ntasks = 8;
	in.node_topology = "bogus";
	errno = 0;
	cr_assert_eq(tmatch_place_layout(&in, &l, &err), -1);
	cr_expect_eq(errno, EDOM);
	errno = 0;
	cr_assert_eq(tmatch_place_layout(NULL, &l, &err), -1);
	cr_expect_eq(errno, EINVAL);
	tmatch_place_layout_destroy(NULL);
	unlink(conf);
	tmatch_comm_destroy(comm);
}
