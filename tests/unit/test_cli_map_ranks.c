/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_map_ranks.c - `treematch map --ranks LIST` places the listed
 * global ranks exactly where the SPANK plugin's node plan (placement/)
 * places the same ranks on one node: both map tmatch_comm_submatrix of the
 * profile. Also its --budget option. Runs the CLI `make` built.
 */
#include "placement/node.h"

#include "tests/unit/cli_helpers.h"
#include "tests/unit/spank_profiles.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE "pack:2 core:2 pu:1"

static char profile_path[TM_TMP_MAX];

static void write_profile(void)
{
	int fd;

	tm_tmpname(profile_path, sizeof(profile_path), "test_cli_map_ranks_XXXXXX.yml");
	fd = mkstemps(profile_path, 4);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, pairs8, sizeof(pairs8) - 1), (ssize_t)sizeof(pairs8) - 1);
	close(fd);
}

static void remove_profile(void)
{
	unlink(profile_path);
}

TestSuite(cli_map_ranks, .init = write_profile, .fini = remove_profile);

/* The plugin's placement of these ranks of `text` on one node `node`, the
   site's search_time set to `search`: the call its glue makes. */
static tmatch_place_node_t *plugin_plan_of(const char *text, const char *node, const int *ranks,
                                           int n, int total, double search)
{
	tmatch_place_node_in_t in;
	tmatch_config_t cfg;
	tmatch_profile_t *p;
	tmatch_place_node_t *plan = NULL;
	tmatch_error_t err;

	p = tmatch_profile_load_buffer(text, strlen(text), "p.yml", NULL, NULL, NULL, &err);
	cr_assert_not_null(p, "%s", err.msg);
	tmatch_config_init(&cfg);
	cfg.search_time = search;
	memset(&in, 0, sizeof(in));
	in.cfg = &cfg;
	in.profile = p;
	in.user_profile = 1;
	in.topology = node;
	in.node_name = "n1";
	in.node_count = 2;
	in.ranks = ranks;
	in.nlocal = n;
	in.ntasks_total = total;
	in.isolate = 1;
	cr_assert_eq(tmatch_place_node(&in, &plan, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(plan->status, TMATCH_PLACE_PLACED);
	tmatch_profile_destroy(p);
	return plan;
}

static tmatch_place_node_t *plugin_plan(const int *ranks, int n)
{
	return plugin_plan_of(pairs8, "synthetic:" NODE, ranks, n, 8, 0);
}

Test(cli_map_ranks, same_leaves_as_the_plugin)
{
	static const struct {
		const char *arg;
		int n, ranks[4];
	} cases[] = {
	    {"4-7", 4, {4, 5, 6, 7}},     {"0-3", 4, {0, 1, 2, 3}}, {"6,4,7,5", 4, {6, 4, 7, 5}},
	    {"0,4,1,5", 4, {0, 4, 1, 5}}, {"2-3", 2, {2, 3}},       {"7", 1, {7}},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {
		    (char *)cli_path(), "map",     "--profile",          profile_path, "--topology",
		    "synthetic:" NODE,  "--ranks", (char *)cases[i].arg, NULL};
		char out[4096], err[4096], *line, *save = NULL;
		tmatch_place_node_t *plan = plugin_plan(cases[i].ranks, cases[i].n);
		int k = 0;

		cr_assert_eq(cli_run(argv, NULL, out, err, sizeof(out)), 0, "--ranks %s: %s",
		             cases[i].arg, err);
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			int rank, leaf;

			cr_assert_eq(sscanf(line, "%d %d", &rank, &leaf), 2, "line '%s'", line);
			cr_assert_lt(k, cases[i].n, "--ranks %s: too many lines", cases[i].arg);
			cr_expect_eq(rank, cases[i].ranks[k], "--ranks %s line %d: global rank",
			             cases[i].arg, k);
			cr_expect_eq(leaf, plan->task[k].leaf,
			             "--ranks %s rank %d: CLI leaf %d, plugin %d", cases[i].arg,
			             rank, leaf, plan->task[k].leaf);
			k++;
		}
		cr_expect_eq(k, cases[i].n, "--ranks %s: one line per listed rank", cases[i].arg);
		tmatch_place_node_destroy(plan);
	}
}

Test(cli_map_ranks, bad_lists)
{
	static const struct {
		const char *arg;
		int status;
		const char *msg;
	} cases[] = {
	    {"", 2, "--ranks"},       {"4,,5", 2, "column 3"}, {"5-4", 2, "--ranks"},
	    {"a", 2, "column 1"},     {"1,", 2, "--ranks"},    {"4,9", 1, "rank 9"},
	    {"4,5,4", 1, "repeated"}, {"0-8", 1, "0..7"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {
		    (char *)cli_path(), "map",     "--profile",          profile_path, "--topology",
		    "synthetic:" NODE,  "--ranks", (char *)cases[i].arg, NULL};
		char out[4096], err[4096];

		cr_expect_eq(cli_run(argv, NULL, out, err, sizeof(out)), cases[i].status,
		             "--ranks '%s': %s", cases[i].arg, err);
		cr_expect(strstr(err, cases[i].msg) != NULL, "--ranks '%s': '%s' lacks '%s'",
		          cases[i].arg, err, cases[i].msg);
		cr_expect_eq(out[0], '\0', "--ranks '%s': nothing on stdout: %s", cases[i].arg,
		             out);
	}
}

/* --budget: a number of seconds, said when refused; with --stats, what auto did with it. */
Test(cli_map_ranks, budget)
{
	static const char *const bad[] = {"", "x", "-1", "1e3", "3601", "0x10", NULL};
	char out[8192], err[8192];

	for (int i = 0; bad[i]; i++) {
		char *argv[] = {(char *)cli_path(), "map",          "--profile",
		                profile_path,       "--topology",   "tleaf 2 2 1 4 1",
		                "--budget",         (char *)bad[i], NULL};
		cr_expect_eq(cli_run(argv, NULL, out, err, sizeof(out)), 2, "--budget '%s'",
		             bad[i]);
		cr_expect(strstr(err, "--budget") && strstr(err, "seconds"), "--budget '%s': %s",
		          bad[i], err);
	}
	{
		char *argv[] = {
		    (char *)cli_path(), "map",      "--profile", profile_path, "--topology",
		    "tleaf 2 2 1 4 1",  "--budget", "0.5",       "--stats",    NULL};
		cr_assert_eq(cli_run(argv, NULL, out, err, sizeof(out)), 0, "%s", err);
		cr_expect(strstr(err, "auto: search of 0.5 s") != NULL, "%s", err);
	}
	{
		char *argv[] = {
		    (char *)cli_path(), "map",      "--profile", profile_path, "--topology",
		    "tleaf 2 2 1 4 1",  "--budget", "0.000001",  "--stats",    NULL};
		cr_assert_eq(cli_run(argv, NULL, out, err, sizeof(out)), 0, "%s", err);
		cr_expect(strstr(err, "too small") != NULL, "%s", err);
	}
}

/* A 64-rank profile, 4 seeded random partners each (a profile the search improves). */
static char *random64(void)
{
	size_t cap = 64 * 4 * 32 + 256, off;
	char *t = malloc(cap);
	uint64_t x = 88172645463325252ULL;
	char seen[64][64] = {{0}};

	cr_assert_not_null(t);
	off = (size_t)snprintf(t, cap,
	                       "format: comm-profile\nversion: 1\nranks: 64\n"
	                       "metrics: [bytes]\ndirected: false\nedges:\n");
	for (int i = 0; i < 64; i++)
		for (int k = 0; k < 4; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
			int j = (int)(x % 64);
			if (j != i && !seen[i][j] && !seen[j][i]++)
				off += (size_t)snprintf(t + off, cap - off, "  - [%d, %d, %d]\n", i,
				                        j, 100 + (int)(x >> 40) % 9900);
		}
	return t;
}

/* The site's search_time: the same leaves as treematch map --budget (it is
   the same search, counted in steps), and not those of the default. */
Test(cli_map_ranks, plugin_search_time_is_map_budget)
{
	char *text = random64(), path[64] = "/tmp/test_cli_map_budget_XXXXXX.yml", out[8192],
	     err[8192], *line, *save = NULL;
	int fd = mkstemps(path, 4), ranks[64], k = 0, differ = 0;
	tmatch_place_node_t *plan, *plain;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	for (int i = 0; i < 64; i++)
		ranks[i] = i;
	plan = plugin_plan_of(text, "synthetic:pack:2 l3:4 core:8 pu:1", ranks, 64, 64, 1.0);
	plain = plugin_plan_of(text, "synthetic:pack:2 l3:4 core:8 pu:1", ranks, 64, 64, 0);
	{
		char *argv[] = {(char *)cli_path(),
		                "map",
		                "--profile",
		                path,
		                "--topology",
		                "synthetic:pack:2 l3:4 core:8 pu:1",
		                "--ranks",
		                "0-63",
		                "--budget",
		                "1",
		                NULL};
		cr_assert_eq(cli_run(argv, NULL, out, err, sizeof(out)), 0, "%s", err);
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), k++) {
		int rank, leaf;

		cr_assert_eq(sscanf(line, "%d %d", &rank, &leaf), 2, "line '%s'", line);
		cr_assert_lt(k, 64);
		cr_expect_eq(leaf, plan->task[k].leaf, "rank %d: CLI leaf %d, plugin %d", rank,
		             leaf, plan->task[k].leaf);
		differ += plain->task[k].leaf != plan->task[k].leaf;
	}
	cr_expect_eq(k, 64);
	cr_expect_gt(differ, 0, "the search changed the placement");
	cr_expect_leq(plan->cost, plain->cost);
	tmatch_place_node_destroy(plan);
	tmatch_place_node_destroy(plain);
	unlink(path);
	free(text);
}
