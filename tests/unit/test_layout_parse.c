/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_layout_parse.c - the pieces of `treematch layout` that need no
 * process: Slurm's tasks-per-node syntax, Slurm's block and cyclic layouts
 * (the baselines of --stats) and the traffic per level. The CLI file is
 * compiled in so its static helpers can be called directly.
 */
#include "cli/cmd_layout.c"

#include <criterion/criterion.h>
#include <stdarg.h>

/* cli/main.c is not linked into the test: the one symbol the file needs. */
void tmatch_cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

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
		char err[256] = "";
		int rc = parse_tasks_per_node(tpn_good[k].spec, tpn_good[k].nnodes, cap, err,
		                              sizeof(err));
		cr_assert_eq(rc, 0, "'%s': %s", tpn_good[k].spec, err);
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
		char err[256] = "";
		int rc = parse_tasks_per_node(tpn_bad_specs[k].spec, tpn_bad_specs[k].nnodes, cap,
		                              err, sizeof(err));
		cr_assert_eq(rc, -1, "'%s' was accepted", tpn_bad_specs[k].spec);
		cr_assert(strstr(err, tpn_bad_specs[k].msg), "'%s': message '%s' lacks '%s'",
		          tpn_bad_specs[k].spec, err, tpn_bad_specs[k].msg);
	}
}

Test(layout_tpn, from_environment)
{
	int cap[4];
	char err[256];

	/* SLURM_TASKS_PER_NODE holds the tasks: used as is */
	setenv("SLURM_TASKS_PER_NODE", "2(x4)", 1);
	setenv("SLURM_JOB_CPUS_PER_NODE", "8(x4)", 1);
	unsetenv("SLURM_CPUS_PER_TASK");
	cr_assert_eq(caps_from_env(4, 8, cap, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cap[0] + cap[1] + cap[2] + cap[3], 8);
	/* too few tasks there (salloc -N4 without -n): CPUs per node / cpus per task */
	setenv("SLURM_TASKS_PER_NODE", "1(x4)", 1);
	setenv("SLURM_CPUS_PER_TASK", "2", 1);
	cr_assert_eq(caps_from_env(4, 8, cap, err, sizeof(err)), 0, "%s", err);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(cap[i], 4);
	/* nothing usable */
	unsetenv("SLURM_TASKS_PER_NODE");
	unsetenv("SLURM_JOB_CPUS_PER_NODE");
	cr_assert_eq(caps_from_env(4, 8, cap, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--tasks-per-node"), "%s", err);
}

/* ------------------------------------------------------------------------ */
/* Block and cyclic                                                         */

Test(layout_slurm, block)
{
	int cap[3] = {3, 1, 2}, node[6];
	int want[6] = {0, 0, 0, 1, 2, 2};
	cr_assert_eq(layout_block(6, 3, cap, node), 0);
	for (int r = 0; r < 6; r++)
		cr_assert_eq(node[r], want[r], "rank %d on node %d, expected %d", r, node[r],
		             want[r]);
	cr_assert_eq(layout_block(7, 3, cap, node), -1, "7 ranks do not fit in 6 slots");
}

Test(layout_slurm, cyclic_skips_full_nodes)
{
	int cap[3] = {3, 1, 2}, node[6];
	int want[6] = {0, 1, 2, 0, 2, 0};
	cr_assert_eq(layout_cyclic(6, 3, cap, node), 0);
	for (int r = 0; r < 6; r++)
		cr_assert_eq(node[r], want[r], "rank %d on node %d, expected %d", r, node[r],
		             want[r]);
	cr_assert_eq(layout_cyclic(7, 3, cap, node), -1, "7 ranks do not fit in 6 slots");
}

Test(layout_slurm, fewer_ranks_than_slots)
{
	int cap[2] = {4, 4}, node[3];
	cr_assert_eq(layout_block(3, 2, cap, node), 0);
	cr_assert(node[0] == 0 && node[1] == 0 && node[2] == 0);
	cr_assert_eq(layout_cyclic(3, 2, cap, node), 0);
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
	struct level_traffic t;
	tmatch_error_t err;
	tmatch_comm_t *comm = tmatch_comm_from_edges(4, 4, src, dst, w, &err);

	cr_assert_not_null(comm, "%s", err.msg);
	traffic_per_level(comm, node_of_rank, switch_of_node, &t);
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
	wide = widen(comm, 6, &err);
	cr_assert_not_null(wide, "%s", err.msg);
	cr_assert_eq(tmatch_comm_order(wide), 6);
	cr_assert_float_eq(tmatch_comm_total(wide), tmatch_comm_total(comm), 1e-9);
	cr_assert_float_eq(tmatch_comm_get(wide, 0, 1), 3, 1e-9);
	cr_assert_float_eq(tmatch_comm_get(wide, 2, 1), 4, 1e-9);
	cr_assert_eq(tmatch_comm_row(wide, 5, NULL, NULL), 0);
	tmatch_comm_destroy(wide);
	tmatch_comm_destroy(comm);
}

Test(layout_conf, default_topology_conf_search)
{
	char buf[4096], dir[] = "/tmp/tm-layout-XXXXXX", path[4200];
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/topology.conf", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("SwitchName=s0 Nodes=n[1-2]\n", f);
	fclose(f);
	unsetenv("TREEMATCH_TOPOLOGY_CONF");
	snprintf(buf, sizeof(buf), "%s/slurm.conf", dir);
	setenv("SLURM_CONF", buf, 1);
	cr_assert_str_eq(default_topology_conf(buf, sizeof(buf)), path);
	setenv("TREEMATCH_TOPOLOGY_CONF", "/elsewhere/t.conf", 1);
	cr_assert_str_eq(default_topology_conf(buf, sizeof(buf)), "/elsewhere/t.conf");
	unlink(path);
	rmdir(dir);
}
