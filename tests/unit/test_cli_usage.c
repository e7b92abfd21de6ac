/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_usage.c - what a first hour with the CLI runs into: a mistake in
 * the options is one line saying what is wrong and where the options are
 * (not the whole usage), `treematch help CMD` is CMD's help, `plan show`
 * prints dates, `store list` has a header and stays in its columns and
 * creates nothing, `profile convert -n` takes the documented 1,048,576,
 * and a limit the CLI sets says how to raise it (not "ask the
 * administrator"). Runs the CLI `make` built.
 */
#include "cli_helpers.h"

#include <criterion/criterion.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUTLEN (1 << 16)

static char out[OUTLEN], err[OUTLEN], dir[64];

/* treematch with the arguments up to the first NULL (at most 8). */
static int run(const char *first, ...)
{
	char *argv[10] = {(char *)cli_path(), (char *)first};
	int n = 2;
	va_list ap;

	va_start(ap, first);
	while (first && n < 9 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return cli_run(argv, NULL, out, err, OUTLEN);
}

static int nlines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_cli_usage_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	unsetenv("SLURM_CONF");
}

static void teardown(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(cli_usage, .init = setup, .fini = teardown);

Test(cli_usage, an_option_mistake_is_one_line_and_where_the_options_are)
{
	static const char *const cmds[][2] = {
	    {"map", NULL},          {"eval", NULL},       {"profile", "convert"},
	    {"profile", "compile"}, {"profile", "check"}, {"profile", "stats"},
	    {"topology", "show"},   {"layout", NULL},     {"plan", "show"},
	    {"plan", "node"},       {"plan", "check"},    {"predict", NULL},
	    {"store", "list"},      {"store", "find"},    {"draw", NULL},
	    {"record", NULL},       {"config", "check"},
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char want[96];

		if (cmds[i][1])
			snprintf(want, sizeof(want), "'treematch %s %s --help' lists the options",
			         cmds[i][0], cmds[i][1]);
		else
			snprintf(want, sizeof(want), "'treematch %s --help' lists the options",
			         cmds[i][0]);
		cr_expect_eq(cmds[i][1] ? run(cmds[i][0], cmds[i][1], "--bogus", NULL, NULL, NULL)
		                        : run(cmds[i][0], "--bogus", NULL, NULL, NULL, NULL),
		             2, "%s %s", cmds[i][0], cmds[i][1] ? cmds[i][1] : "");
		cr_expect(strstr(err, "unknown option '--bogus'") && strstr(err, want), "%s %s: %s",
		          cmds[i][0], cmds[i][1] ? cmds[i][1] : "", err);
		cr_expect_eq(nlines(err), 2, "%s %s: %s", cmds[i][0], cmds[i][1] ? cmds[i][1] : "",
		             err);
	}
	/* a missing value and a value where none is taken, said as such */
	cr_expect_eq(run("map", "--profile", NULL, NULL, NULL, NULL), 2);
	cr_expect(strstr(err, "map: --profile needs a value") != NULL, "%s", err);
	cr_expect_eq(run("map", "--stats=1", NULL, NULL, NULL, NULL), 2);
	cr_expect(strstr(err, "map: --stats takes no value") != NULL, "%s", err);
	cr_expect_eq(run("nosuch", NULL, NULL, NULL, NULL, NULL), 2);
	cr_expect_eq(nlines(err), 2, "%s", err);
}

Test(cli_usage, help_command_is_that_commands_help)
{
	cr_assert_eq(run("help", "map", NULL, NULL, NULL, NULL), 0, "%s", err);
	cr_expect(strncmp(out, "usage: treematch map ", 21) == 0, "%s", out);
	cr_assert_eq(run("help", "profile", "check", NULL, NULL, NULL), 0, "%s", err);
	cr_expect(strncmp(out, "usage: treematch profile check", 30) == 0, "%s", out);
	cr_expect_eq(run("help", "nosuch", NULL, NULL, NULL, NULL), 2);
	cr_assert_eq(run("help", NULL, NULL, NULL, NULL, NULL), 0);
	cr_expect(strstr(out, "commands:") != NULL, "%s", out);
}

Test(cli_usage, plan_show_prints_the_profile_time_as_a_date)
{
	char profile[128], plan[128];
	regex_t re;

	snprintf(profile, sizeof(profile), "%s/p.mtx", dir);
	snprintf(plan, sizeof(plan), "%s/p.plan", dir);
	{
		FILE *f = fopen(profile, "w");

		cr_assert_not_null(f);
		fputs("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 5\n", f);
		fclose(f);
	}
	{
		char *argv[] = {(char *)cli_path(),
		                "layout",
		                "-p",
		                profile,
		                "-w",
		                "n[1-2]",
		                "--tasks-per-node",
		                "1",
		                "--plan",
		                plan,
		                "--job-id",
		                "7",
		                NULL};

		cr_assert_eq(cli_run(argv, NULL, out, err, OUTLEN), 0, "%s", err);
	}
	cr_assert_eq(run("plan", "show", plan, NULL, NULL, NULL), 0, "%s", err);
	cr_assert_eq(regcomp(&re,
	                     "profile: [0-9]+ bytes, modified 2[0-9]{3}-[0-9]{2}-[0-9]{2} "
	                     "[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{9} [-+][0-9]{4}, content",
	                     REG_EXTENDED),
	             0);
	cr_expect_eq(regexec(&re, out, 0, NULL, 0), 0, "%s", out);
	regfree(&re);
}

Test(cli_usage, store_list_has_a_header_and_creates_nothing)
{
	char site[128], mine[160], profile[128], cache[128];
	struct stat st;

	snprintf(site, sizeof(site), "%s/site", dir);
	cr_assert_eq(mkdir(site, 01777), 0);
	cr_assert_eq(chmod(site, 01777), 0);
	cr_assert_eq(run("store", "list", "--site", site, NULL, NULL), 0, "%s", err);
	snprintf(mine, sizeof(mine), "%s/%ld", site, (long)geteuid());
	cr_expect_eq(stat(mine, &st), -1, "store list made %s", mine);
	cr_expect(strstr(out, "0 entries") != NULL, "%s", out);
	/* an entry: under the header, in its columns, the name column kept */
	snprintf(profile, sizeof(profile), "%s/p.yml", dir);
	{
		FILE *f = fopen(profile, "w");

		cr_assert_not_null(f);
		fputs("format: comm-profile\nversion: 1\nranks: 2\nmetrics: [bytes]\n"
		      "directed: false\nedges:\n  - [0, 1, 5]\n",
		      f);
		fclose(f);
	}
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("XDG_CACHE_HOME", cache, 1);
	cr_assert_eq(run("store", "put", "/bin/true", profile, NULL, NULL), 0, "%s", err);
	cr_assert_eq(run("store", "list", NULL, NULL, NULL, NULL), 0, "%s", err);
	unsetenv("XDG_CACHE_HOME");
	cr_expect(strncmp(out, "ENTRY ", 6) == 0 && strstr(out, "RANKS") && strstr(out, "NAME") &&
	              strstr(out, "EXECUTABLE"),
	          "%s", out);
	{
		char *second = strchr(out, '\n') + 1;
		const char *exe = strchr(second, '/'), *col = strstr(out, "EXECUTABLE");

		cr_assert_not_null(exe, "%s", out);
		cr_expect_eq(exe - second, col - out, "the executable is in its column:\n%s", out);
	}
}

Test(cli_usage, convert_takes_the_documented_rank_limit)
{
	char edges[128];
	FILE *f;

	snprintf(edges, sizeof(edges), "%s/e.txt", dir);
	f = fopen(edges, "w");
	cr_assert_not_null(f);
	fputs("0 1 10\n", f);
	fclose(f);
	cr_expect_eq(run("profile", "convert", "-n", "1048576", edges, NULL), 0, "%s", err);
	cr_expect(strstr(out, "ranks: 1048576") != NULL);
	cr_expect_eq(run("profile", "convert", "-n", "1048577", edges, NULL), 2);
	cr_expect(strstr(err, "1 to 1048576") != NULL, "%s", err);
}

Test(cli_usage, a_limit_of_the_cli_says_how_to_raise_it)
{
	char profile[128];
	FILE *f;

	snprintf(profile, sizeof(profile), "%s/p.yml", dir);
	f = fopen(profile, "w");
	cr_assert_not_null(f);
	fputs("format: comm-profile\nversion: 1\nranks: 4\nmetrics: [bytes]\n"
	      "directed: false\nedges: []\n",
	      f);
	fclose(f);
	cr_expect_eq(run("profile", "check", "--max-ranks", "2", profile, NULL), 1);
	cr_expect(strstr(err, "above the limit of 2 ranks (--max-ranks N raises it)"), "%s", err);
	cr_expect(strstr(err, "administrator") == NULL, "%s", err);
}

/* A tleaf is a --topology SPEC like the others (treematch(1), Inputs). */
Test(cli_usage, topology_show_takes_a_tleaf)
{
	cr_assert_eq(run("topology", "show", "--topology", "tleaf 2 2 10 3 1", NULL, NULL), 0, "%s",
	             err);
	cr_expect(strstr(out, "tree: 2 levels, 6 leaves") &&
	              strstr(out, "tleaf: tleaf 2 2 10 3 1") &&
	              strstr(out, "leaf 5: at level0=1/2,level1=2/3\n"),
	          "%s", out);
}

/* A column in an option's value names the option and its text. */
Test(cli_usage, a_column_of_a_value_names_the_option)
{
	cr_expect_eq(
	    run("topology", "show", "--topology", "tleaf 2 99999999999 10 8 1", NULL, NULL), 1);
	cr_expect(strstr(err, "--topology 'tleaf 2 99999999999 10 8 1': column 9: bad arity of "
	                      "level 0: at most") != NULL,
	          "%s", err);
}

/*
 * On a node with hardware threads the plugin binds a task to a whole core
 * (tmatch_place_smt_policy): topology show and the launcher formats say
 * the same CPUs, not the core's first thread.
 */
Test(cli_usage, smt_nodes_are_shown_and_bound_as_the_plugin_binds)
{
	char profile[128];
	FILE *f;

	cr_assert_eq(run("topology", "show", "--synthetic", "pack:1 core:2 pu:2", NULL, NULL), 0,
	             "%s", err);
	cr_expect(strstr(out, "leaf 0: node localhost cpus 0-1 mask 0x3") &&
	              strstr(out, "leaf 1: node localhost cpus 2-3 mask 0xc"),
	          "%s", out);
	/* one thread per leaf only when asked */
	cr_assert_eq(
	    run("topology", "show", "--synthetic", "pack:1 core:2 pu:2", "--smt", "one", NULL), 0);
	cr_expect(strstr(out, "leaf 1: node localhost cpus 2 mask 0x4") != NULL, "%s", out);
	snprintf(profile, sizeof(profile), "%s/p.mtx", dir);
	f = fopen(profile, "w");
	cr_assert_not_null(f);
	fputs("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 5\n", f);
	fclose(f);
	cr_assert_eq(run("map", "-p", profile, "-t", "synthetic:pack:1 core:2 pu:2", NULL), 0, "%s",
	             err);
	cr_assert_eq(
	    run("map", "-p", profile, "-t", "synthetic:pack:1 core:2 pu:2", "-f", "srun", NULL), 0,
	    "%s", err);
	cr_expect(strstr(out, "--cpu-bind=mask_cpu:0x3,0xc") || strstr(out, "mask_cpu:0xc,0x3"),
	          "%s", out);
	cr_assert_eq(
	    run("map", "-p", profile, "-t", "synthetic:pack:1 core:2 pu:2", "-f", "mpich", NULL), 0,
	    "%s", err);
	cr_expect(strstr(out, "0+1") && strstr(out, "2+3"), "%s", out);
	cr_assert_eq(
	    run("map", "-p", profile, "-t", "synthetic:pack:1 core:2 pu:2", "-f", "openmpi", NULL),
	    0, "%s", err);
	cr_expect(strstr(err, "hardware threads") == NULL, "a whole core per rank: %s", err);
}

/*
 * Long work says how far it is on standard error: on a terminal a line
 * rewritten in place and cleared before the result; piped, nothing unless
 * --progress asks. The result is the same either way.
 */
Test(cli_usage, progress_line_on_a_terminal_or_when_asked)
{
	static char quiet_out[OUTLEN];
	const char *profile = TMATCH_SRCDIR "/docs/examples/stencil32.mtx";
	char cmd[1024];

	/* piped: no progress, the placement on stdout */
	cr_assert_eq(run("map", "-p", profile, "-t", "tleaf 3 2 100 2 10 8 1", "-b", "1", NULL), 0,
	             "%s", err);
	cr_expect_str_eq(err, "");
	memcpy(quiet_out, out, sizeof(quiet_out));
	/* asked: lines, and the same placement */
	cr_assert_eq(run("map", "-p", profile, "-t", "tleaf 3 2 100 2 10 8 1", "-b", "1",
	                 "--progress", NULL),
	             0, "%s", err);
	cr_expect_str_eq(out, quiet_out);
	cr_expect(strstr(err, "treematch: map: reading ") &&
	              strstr(err, "treematch: map: mapping ") && strstr(err, "treematch: search"),
	          "%s", err);
	cr_assert_eq(run("map", "-p", profile, "-t", "tleaf 3 2 100 2 10 8 1", "-b", "1",
	                 "--progress=never", NULL),
	             0);
	cr_expect_str_eq(err, "");
	cr_expect_eq(run("map", "--progress=sometimes", NULL), 2);
	/* a terminal (script(1) gives one): rewritten in place, then cleared */
	snprintf(
	    cmd, sizeof(cmd),
	    "script -qec \"%s map -p %s -t 'tleaf 3 2 100 2 10 8 1' -b 1 >/dev/null\" /dev/null",
	    cli_path(), profile);
	{
		char *argv[] = {"/bin/sh", "-c", cmd, NULL};

		cr_assert_eq(cli_run(argv, NULL, out, err, OUTLEN), 0, "%s", err);
	}
	cr_expect(strstr(out, "\r\033[Ktreematch: map: reading ") != NULL, "%s", out);
	cr_expect(strlen(out) >= 4 && !strcmp(out + strlen(out) - 4, "\r\033[K"),
	          "the line is cleared at the end: %s", out);
}
