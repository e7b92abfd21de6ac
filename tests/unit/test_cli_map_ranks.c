/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_map_ranks.c - `treematch map --ranks LIST` places the listed
 * global ranks exactly where the SPANK plugin's node plan (placement/)
 * places the same ranks on one node: both map tmatch_comm_submatrix of the
 * profile. Also its --budget option. Runs the CLI `make` built.
 */
#include "placement/placement.h"

#include "tests/unit/cli_helpers.h"
#include "tests/unit/spank_profiles.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE "pack:2 core:2 pu:1"

static char profile_path[64];

static void write_profile(void)
{
	int fd;

	snprintf(profile_path, sizeof(profile_path), "/tmp/test_cli_map_ranks_XXXXXX.yml");
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

/* The plugin's placement of these ranks on one node NODE: the call its glue makes. */
static tmatch_place_node_t *plugin_plan(const int *ranks, int n)
{
	tmatch_place_node_in_t in;
	tmatch_config_t cfg;
	tmatch_profile_t *p;
	tmatch_place_node_t *plan = NULL;
	tmatch_error_t err;

	p = tmatch_profile_load_buffer(pairs8, strlen(pairs8), "p.yml", NULL, NULL, NULL, &err);
	cr_assert_not_null(p, "%s", err.msg);
	tmatch_config_init(&cfg);
	memset(&in, 0, sizeof(in));
	in.cfg = &cfg;
	in.profile = p;
	in.user_profile = 1;
	in.topology = "synthetic:" NODE;
	in.node_name = "n1";
	in.node_count = 2;
	in.ranks = ranks;
	in.nlocal = n;
	in.ntasks_total = 8;
	in.isolate = 1;
	cr_assert_eq(tmatch_place_node(&in, &plan, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(plan->status, TMATCH_PLACE_PLACED);
	tmatch_profile_destroy(p);
	return plan;
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
