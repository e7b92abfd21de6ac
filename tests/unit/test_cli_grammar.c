/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_grammar.c - the one option grammar of treematch(1) as a user
 * meets it: the same letter is the same option in every command (draw -m
 * is the mapper, as in map and layout; -n the task count, as srun's), an
 * old name still works and says the new one once, and --json gives the
 * same facts as the text (eval, store list). The table itself is checked
 * against the commands' option tables in test_cli_manpages. Runs the CLI
 * `make` built; jq reads the JSON (tests/install-deps.sh).
 */
#include "cli_helpers.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUTLEN (1 << 16)

static char out[OUTLEN], err[OUTLEN], dir[64], profile[128];

/* treematch with the arguments up to the first NULL (at most 12). */
static int run(const char *first, ...)
{
	char *argv[14] = {(char *)cli_path(), (char *)first};
	int n = 2;
	va_list ap;

	va_start(ap, first);
	while (first && n < 13 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return cli_run(argv, NULL, out, err, OUTLEN);
}

static void setup(void)
{
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/test_cli_grammar_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	unsetenv("SLURM_CONF");
	snprintf(profile, sizeof(profile), "%s/p.yml", dir);
	f = fopen(profile, "w");
	cr_assert_not_null(f);
	fputs("format: comm-profile\nversion: 1\nranks: 4\nmetrics: [bytes]\n"
	      "directed: false\nedges:\n  - [0, 1, 100]\n  - [1, 2, 5]\n  - [2, 3, 100]\n"
	      "  - [0, 3, 7]\n",
	      f);
	fclose(f);
}

static void teardown(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(cli_grammar, .init = setup, .fini = teardown);

/* draw -m is the mapper (it was the mapping file; -M the mapper). */
Test(cli_grammar, draw_m_is_the_mapper_as_in_map)
{
	char svg[160];

	snprintf(svg, sizeof(svg), "%s/p.svg", dir);
	cr_assert_eq(
	    run("draw", "-p", profile, "-t", "tleaf 2 2 1 2 1", "-m", "greedy", "-o", svg, NULL), 0,
	    "%s", err);
	cr_expect_eq(access(svg, R_OK), 0);
	cr_expect_eq(
	    run("draw", "-p", profile, "-t", "tleaf 2 2 1 2 1", "-M", "greedy", "-o", svg, NULL), 2,
	    "%s", err);
}

/* -n is the task count, as srun's, in profile check and store find; the
   old --ranks still works and says what it is called now. */
Test(cli_grammar, n_is_ntasks_and_old_names_still_work)
{
	cr_expect_eq(run("profile", "check", "-q", "-n", "4", profile, NULL), 0, "%s", err);
	cr_expect_eq(run("profile", "check", "-q", "--ntasks", "5", profile, NULL), 1, "%s", err);
	cr_expect_eq(run("profile", "check", "-q", "--ranks", "4", profile, NULL), 0, "%s", err);
	cr_expect(strstr(err, "--ranks is now --ntasks (-n)") != NULL, "%s", err);
	cr_expect_eq(run("profile", "stats", "--collectives", profile, NULL), 0, "%s", err);
	cr_expect_eq(run("map", "-p", profile, "-t", "tleaf 2 2 1 2 1", "--search-time", "0", NULL),
	             0, "%s", err);
	cr_expect_eq(run("map", "-p", profile, "-t", "tleaf 2 2 1 2 1", "--budget", "0", NULL), 0,
	             "%s", err);
	cr_expect(strstr(err, "--budget is now --search-time") != NULL, "%s", err);
	/* a letter that meant something else elsewhere is refused, not guessed */
	cr_expect_eq(run("profile", "check", "-M", "bytes", profile, NULL), 2, "%s", err);
	cr_expect_eq(run("predict", "-T", "x", "-t", "tleaf 1 4 1", NULL), 2, "%s", err);
}

/* eval --json: the three placements' metrics, the same numbers as the
   table. */
Test(cli_grammar, eval_json)
{
	char mapping[128], q[4096], text[OUTLEN];
	const char *row;
	double hb_text = -1;
	int dmax_text = -1;
	FILE *f;

	snprintf(mapping, sizeof(mapping), "%s/m.txt", dir);
	f = fopen(mapping, "w");
	cr_assert_not_null(f);
	fputs("0 0\n1 1\n2 2\n3 3\n", f);
	fclose(f);
	cr_assert_eq(
	    run("eval", "-p", profile, "-t", "tleaf 2 2 1 2 1", "--mapping", mapping, NULL), 0,
	    "%s", err);
	snprintf(text, sizeof(text), "%s", out);
	row = strstr(text, "hop_bytes");
	cr_assert_not_null(row, "%s", text);
	cr_assert_eq(sscanf(row + 9, "%lf", &hb_text), 1);
	row = strstr(text, "dilation_max");
	cr_assert_not_null(row, "%s", text);
	cr_assert_eq(sscanf(row + 12, "%d", &dmax_text), 1);
	cr_assert_eq(run("eval", "-p", profile, "-t", "tleaf 2 2 1 2 1", "--mapping", mapping,
	                 "--json", NULL),
	             0, "%s", err);
	cr_assert_eq(cli_jq(out,
	                    ".placements | length, (map(.name) | join(\",\")), .[0].hop_bytes, "
	                    "(.[0].traffic_lca_depth | length), .[0].dilation_max",
	                    q, sizeof(q)),
	             0, "%s", q);
	{
		int n, depth, dmax;
		char names[64];
		double hb;

		cr_assert_eq(sscanf(q, "%d\n%63s\n%lf\n%d\n%d", &n, names, &hb, &depth, &dmax), 5,
		             "%s", q);
		cr_expect_eq(n, 3);
		cr_expect_str_eq(names, "mapping,packed,round-robin");
		cr_expect(hb == hb_text, "json %g, text %g", hb, hb_text);
		cr_expect_eq(depth, 2);
		cr_expect_eq(dmax, dmax_text);
	}
}

/* store list --json: an empty store is an empty array; an entry has its
   ranks, bytes, executable and UTC times. */
Test(cli_grammar, store_list_json)
{
	char cache[128], q[4096];

	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("XDG_CACHE_HOME", cache, 1);
	cr_assert_eq(run("store", "list", "--json", NULL), 0, "%s", err);
	cr_assert_eq(cli_jq(out, ".entries | length", q, sizeof(q)), 0, "%s", q);
	cr_expect_str_eq(q, "0\n");
	cr_assert_eq(run("store", "put", "/bin/true", profile, "--name", "demo", NULL), 0, "%s",
	             err);
	cr_assert_eq(run("store", "list", "--json", NULL), 0, "%s", err);
	unsetenv("XDG_CACHE_HOME");
	cr_assert_eq(cli_jq(out,
	                    ".entries | length, .[0].ranks, .[0].name, "
	                    "(.[0].entry | test(\"^[0-9a-f]{16}$\")), "
	                    "(.[0].last_used | test(\"^20[0-9-]{8}T[0-9:]{8}Z$\")), "
	                    "(.[0].bytes > 0)",
	                    q, sizeof(q)),
	             0, "%s", q);
	cr_expect_str_eq(q, "1\n4\ndemo\ntrue\ntrue\ntrue\n");
	cr_assert_eq(cli_jq(out, ".entries[0].executable | test(\"true$\")", q, sizeof(q)), 0, "%s",
	             out);
}

/* plan show --json: what the plan is bound to, and a node's slice with
   --node; the step of a plan for any step is null. */
Test(cli_grammar, plan_show_json)
{
	char plan[128], q[4096];

	snprintf(plan, sizeof(plan), "%s/p.plan", dir);
	cr_assert_eq(run("layout", "-p", profile, "-w", "n[1-2]", "--tasks-per-node", "2", "--plan",
	                 plan, "--job-id", "7", NULL),
	             0, "%s", err);
	cr_assert_eq(run("plan", "show", plan, "--json", NULL), 0, "%s", err);
	cr_assert_eq(cli_jq(out,
	                    ".job, .step, .tasks, .nodes, .slice, (.profile.bytes > 0), "
	                    "(.profile.modified | test(\"^20[0-9-]{8}T[0-9:]{8}[.][0-9]{9}Z$\")), "
	                    "(.profile.content | test(\"^[0-9a-f]{16}$\"))",
	                    q, sizeof(q)),
	             0, "%s", out);
	cr_expect_str_eq(q, "7\nnull\n4\n2\nnull\ntrue\ntrue\ntrue\n");
	cr_assert_eq(run("plan", "show", plan, "--node", "n2", "--json", NULL), 0, "%s", err);
	cr_assert_eq(cli_jq(out,
	                    ".slice.node, (.slice.ranks | length), "
	                    "(.slice.ranks | map(.rank) | sort | map(tostring) | join(\",\"))",
	                    q, sizeof(q)),
	             0, "%s", out);
	cr_expect_str_eq(q, "n2\n2\n2,3\n");
}

/* profile check and stats --json: the same numbers as the text; stats adds
   the distributions and the provenance. */
Test(cli_grammar, profile_stats_json)
{
	const char *lammps = TMATCH_SRCDIR "/profile/examples/lammps-8.yml";
	char q[4096];

	cr_assert_eq(run("profile", "check", "--json", lammps, NULL), 0, "%s", err);
	cr_assert_eq(cli_jq(out,
	                    ".ranks, .directed, (.metrics | join(\",\")), .edges.point_to_point, "
	                    ".total_bytes.point_to_point, .top_pairs[0].i, .top_pairs[0].j, "
	                    "(.top_pairs | length), (has(\"provenance\") | not)",
	                    q, sizeof(q)),
	             0, "%s", out);
	cr_expect_str_eq(q, "8\ntrue\nbytes,msgs\n24\n184173408\n4\n5\n5\ntrue\n");
	cr_assert_eq(run("profile", "stats", "--json", "--top", "2", lammps, NULL), 0, "%s", err);
	cr_assert_eq(cli_jq(out,
	                    "(.top_pairs | length), .degree.quartiles[1], .pairs, "
	                    "(.mean_message | floor), (.provenance | type)",
	                    q, sizeof(q)),
	             0, "%s", out);
	cr_expect_str_eq(q, "2\n3\n12\n7266\nobject\n");
	/* the text says the same */
	cr_assert_eq(run("profile", "stats", lammps, NULL), 0, "%s", err);
	cr_expect(strstr(out, "total bytes:      184173408 (100.0 %) point-to-point") != NULL, "%s",
	          out);
	cr_expect(strstr(out, "mean message:     7266.9 bytes") != NULL, "%s", out);
	/* what the summary counts: as the plugin (a version 1 profile's
	   collectives are not placed by), or as --collectives says */
	cr_assert_eq(run("profile", "check", "--json", lammps, NULL), 0, "%s", err);
	cr_assert_eq(cli_jq(out, ".collectives, .collectives_recorded", q, sizeof(q)), 1, "%s",
	             out); /* jq -e: false or null last is status 1 */
	cr_expect_str_eq(q, "false\nnull\n");
	cr_assert_eq(run("profile", "check", "--json", "--collectives", lammps, NULL), 0, "%s",
	             err);
	cr_assert_eq(cli_jq(out, ".collectives, .total_bytes.collective", q, sizeof(q)), 0, "%s",
	             out);
	cr_expect_str_eq(q, "true\n3370\n");
	cr_assert_eq(run("profile", "check", "--collectives=off", lammps, NULL), 0, "%s", err);
	cr_expect(strstr(out, "(used here: bytes, point-to-point only)") != NULL, "%s", out);
	cr_assert_eq(run("profile", "check", "--collectives=on", lammps, NULL), 0, "%s", err);
	cr_expect(strstr(out, "(used here: bytes, point-to-point and collectives)") != NULL, "%s",
	          out);
	cr_assert_eq(run("profile", "check", "--collectives=maybe", lammps, NULL), 2, "%s", out);
	cr_expect(strstr(err, "--collectives takes on or off") != NULL, "%s", err);
}

/* `-` is standard input wherever a profile, a mapping or a plan is read,
   and standard output where draw and convert write; a message about what
   came from standard input names it so, not the copy. */
Test(cli_grammar, dash_is_standard_input_and_output)
{
	char cmd[2048], mapping[128], plan[128];
	const char *tm = cli_path(), *tree = "'tleaf 2 2 1 2 1'";
	int rc;

	snprintf(mapping, sizeof(mapping), "%s/m.txt", dir);
	snprintf(plan, sizeof(plan), "%s/p.plan", dir);
#define SH(...)                                                                                    \
	(snprintf(cmd, sizeof(cmd), __VA_ARGS__),                                                  \
	 rc = cli_run((char *[]){"/bin/sh", "-c", cmd, NULL}, NULL, out, err, OUTLEN))
	SH("%s map -p - -t %s <%s >%s", tm, tree, profile, mapping);
	cr_assert_eq(rc, 0, "%s", err);
	SH("%s eval -p %s -t %s --mapping - <%s", tm, profile, tree, mapping);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "hop_bytes") != NULL, "%s", out);
	SH("%s eval -p - -t %s --mapping %s <%s", tm, tree, mapping, profile);
	cr_expect_eq(rc, 0, "%s", err);
	SH("%s profile check -q - <%s", tm, profile);
	cr_expect_eq(rc, 0, "%s", err);
	SH("%s profile stats --json - <%s", tm, profile);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "\"ranks\": 4") != NULL, "%s", out);
	SH("cd %s && %s draw -p - -t %s -m greedy -o - <%s", dir, tm, tree, profile);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strncmp(out, "<?xml", 5) == 0, "%.80s", out);
	snprintf(cmd, sizeof(cmd), "%s/-", dir);
	cr_expect_eq(access(cmd, F_OK), -1, "draw -o - wrote a file named '-'");
	SH("%s profile convert --from yaml - -o - <%s", tm, profile);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "ranks: 4") != NULL, "%s", out);
	SH("%s layout -p %s -w 'n[1-2]' --tasks-per-node 2 --plan %s --job-id 7 >/dev/null && "
	   "%s plan show - <%s",
	   tm, profile, plan, tm, plan);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "job: 7") != NULL, "%s", out);
	/* a mistake in what came from standard input */
	SH("printf 'format: comm-profile\\nversion: 1\\nranks: 2\\nmetrics: [bytes]\\n"
	   "edges:\\n  - [0, 1, x]\\n' | %s profile check -",
	   tm);
	cr_expect_eq(rc, 1, "%s", err);
	cr_expect(strstr(err, "treematch: (standard input):6:") != NULL, "%s", err);
#undef SH
}
