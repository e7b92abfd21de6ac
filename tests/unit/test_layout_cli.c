/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_layout_cli.c - `treematch layout` as users run it: the hostfile puts
 * heavy pairs that block distribution splits under one switch, respects
 * every node's task count, is byte-identical run to run, --stats adds up
 * and beats block, --exec hands the hostfile to the command and removes it,
 * and bad input gets a message saying what to fix. Runs the CLI that `make`
 * built in TMATCH_BUILDDIR.
 */
#include "cli_helpers.h"
#include "old_formats.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#define MAXOUT (1 << 16)

static char dir[TM_TMP_MAX];
static char conf_path[TM_TMP_MAX + 64], split_path[TM_TMP_MAX + 64], ring_path[TM_TMP_MAX + 64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/*
 * Four nodes under two switches (the e2e cluster's shape), 2 tasks each.
 * split.mtx: heavy pairs (0,4) (1,5) (2,6) (3,7): block puts ranks 0-3 under
 * s0 and 4-7 under s1, so all heavy traffic crosses switches.
 */
static void setup(void)
{
	tm_tmpname(dir, sizeof(dir), "tm-layout-cli-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(conf_path, sizeof(conf_path), "%s/topology.conf", dir);
	snprintf(split_path, sizeof(split_path), "%s/split.mtx", dir);
	snprintf(ring_path, sizeof(ring_path), "%s/ring.mtx", dir);
	write_file(conf_path, "# two leaf switches\n"
	                      "SwitchName=s0 Nodes=n[1-2]\n"
	                      "SwitchName=s1 Nodes=n[3-4]\n"
	                      "SwitchName=top Switches=s[0-1]\n");
	write_file(split_path, "%%MatrixMarket matrix coordinate real general\n"
	                       "8 8 8\n"
	                       "1 5 1000\n2 6 1000\n3 7 1000\n4 8 1000\n"
	                       "1 2 10\n3 4 10\n5 6 10\n7 8 10\n");
	write_file(ring_path, "%%MatrixMarket matrix coordinate real general\n"
	                      "6 6 6\n"
	                      "1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 6 1\n1 6 1\n");
	unsetenv("SLURM_JOB_NODELIST");
	unsetenv("SLURM_TASKS_PER_NODE");
	unsetenv("SLURM_JOB_CPUS_PER_NODE");
	unsetenv("SLURM_CONF");
	unsetenv("TREEMATCH_TOPOLOGY_CONF");
}

static void teardown(void)
{
	tm_rmtree(dir);
}

TestSuite(layout_cli, .init = setup, .fini = teardown);

/* Run the CLI with argv (NULL-terminated, without argv[0]); capture. */
static int run(char *const args[], char *out, char *err)
{
	char *argv[32];
	int k = 0;

	argv[k++] = (char *)cli_path();
	for (int i = 0; args[i] && k < 31; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	return cli_run(argv, NULL, out, err, MAXOUT);
}

/* Split a hostfile into names[rank]; returns the number of lines. */
static int lines(char *text, char **names, int max)
{
	int n = 0;
	for (char *tok = strtok(text, "\n"); tok && n < max; tok = strtok(NULL, "\n"))
		names[n++] = tok;
	return n;
}

static int switch_of(const char *node)
{
	return (!strcmp(node, "n1") || !strcmp(node, "n2")) ? 0 : 1;
}

Test(layout_cli, heavy_pairs_share_a_switch_and_node)
{
	static char out[MAXOUT], err[MAXOUT];
	char *names[16];
	int counts[5] = {0};
	char *args[] = {"layout",          "--profile", split_path,         "--nodelist", "n[1-4]",
	                "--topology-conf", conf_path,   "--tasks-per-node", "2(x4)",      NULL};

	cr_assert_eq(run(args, out, err), 0, "stderr: %s", err);
	cr_assert_eq(lines(out, names, 16), 8, "one line per rank expected:\n%s", out);
	for (int r = 0; r < 8; r++) {
		cr_assert(names[r][0] == 'n' && names[r][1] >= '1' && names[r][1] <= '4' &&
		              !names[r][2],
		          "rank %d: '%s' is not a node of the list", r, names[r]);
		counts[names[r][1] - '0']++;
	}
	for (int i = 1; i <= 4; i++)
		cr_assert_eq(counts[i], 2, "node n%d got %d ranks, its capacity is 2", i,
		             counts[i]);
	for (int r = 0; r < 4; r++) {
		cr_assert_eq(switch_of(names[r]), switch_of(names[r + 4]),
		             "heavy pair (%d,%d) split across switches: %s, %s", r, r + 4, names[r],
		             names[r + 4]);
		cr_assert_str_eq(names[r], names[r + 4], "heavy pair (%d,%d) not on one node", r,
		                 r + 4);
	}
}

Test(layout_cli, byte_identical_runs)
{
	static char a[MAXOUT], b[MAXOUT], err[MAXOUT];
	char *args[] = {"layout",          "-p",      split_path,         "-w", "n[1-4]",
	                "--topology-conf", conf_path, "--tasks-per-node", "2",  NULL};
	cr_assert_eq(run(args, a, err), 0, "%s", err);
	cr_assert_eq(run(args, b, err), 0, "%s", err);
	cr_assert_str_eq(a, b);
}

Test(layout_cli, capacities_are_respected)
{
	static char out[MAXOUT], err[MAXOUT];
	char *names[16];
	int counts[5] = {0};
	/* node n3 runs nothing, n1 three tasks */
	char *args[] = {"layout",          "-p",      split_path,         "-w",      "n[1-4]",
	                "--topology-conf", conf_path, "--tasks-per-node", "3,3,0,2", NULL};

	cr_assert_eq(run(args, out, err), 0, "%s", err);
	cr_assert_eq(lines(out, names, 16), 8);
	for (int r = 0; r < 8; r++)
		counts[names[r][1] - '0']++;
	cr_assert(counts[1] <= 3 && counts[2] <= 3 && counts[3] == 0 && counts[4] <= 2,
	          "counts %d %d %d %d exceed 3,3,0,2", counts[1], counts[2], counts[3], counts[4]);
}

Test(layout_cli, more_tasks_than_profile_and_env_defaults)
{
	static char out[MAXOUT], err[MAXOUT];
	char *names[16];
	char *args[] = {"layout", "-p", ring_path, "--ntasks", "8", NULL};

	/* inside an allocation: nodes, tasks and topology.conf from the environment */
	setenv("SLURM_JOB_NODELIST", "n[1-4]", 1);
	setenv("SLURM_TASKS_PER_NODE", "2(x4)", 1);
	setenv("TREEMATCH_TOPOLOGY_CONF", conf_path, 1);
	cr_assert_eq(run(args, out, err), 0, "%s", err);
	cr_assert_eq(lines(out, names, 16), 8, "8 ranks (6 from the profile, 2 silent)");
}

Test(layout_cli, stats_add_up_and_beat_block)
{
	static char out[MAXOUT], err[MAXOUT];
	char *args[] = {"layout",   "-p",
	                split_path, "-w",
	                "n[1-4]",   "--topology-conf",
	                conf_path,  "--tasks-per-node",
	                "2(x4)",    "--stats",
	                "-o",       "/dev/null",
	                NULL};
	double v[3][6];
	char *p;

	cr_assert_eq(run(args, out, err), 0, "%s", err);
	const char *labels[3] = {"treematch", "block", "cyclic"};
	for (int k = 0; k < 3; k++) {
		char key[32];
		snprintf(key, sizeof(key), "\n%s ", labels[k]);
		p = strstr(out, key);
		cr_assert_not_null(p, "no '%s' line in:\n%s", labels[k], out);
		cr_assert_eq(sscanf(p + strlen(key), "%lf %lf%% %lf %lf%% %lf %lf%%", &v[k][0],
		                    &v[k][1], &v[k][2], &v[k][3], &v[k][4], &v[k][5]),
		             6, "cannot parse: %.80s", p);
		cr_assert_float_eq(v[k][0] + v[k][2] + v[k][4], 4040, 1e-6,
		                   "%s: levels do not add up to the total traffic", labels[k]);
	}
	/* block: every heavy pair across switches; ours: none */
	cr_assert_float_eq(v[1][4], 4000, 1e-6);
	cr_assert_float_eq(v[0][4], 0, 1e-6);
	cr_assert(strstr(out, "across switches vs block: -100.0 %"), "%s", out);
}

Test(layout_cli, exec_gets_the_hostfile_and_it_is_removed)
{
	static char out[MAXOUT], err[MAXOUT];
	char *names[16], path[TM_TMP_MAX + 64];
	char *args[] = {"layout",
	                "-p",
	                split_path,
	                "-w",
	                "n[1-4]",
	                "--topology-conf",
	                conf_path,
	                "--tasks-per-node",
	                "2",
	                "--exec",
	                "sh",
	                "-c",
	                "echo $SLURM_HOSTFILE; echo $SLURM_DISTRIBUTION; cat $SLURM_HOSTFILE; "
	                "exit 3",
	                NULL};

	cr_assert_eq(run(args, out, err), 3, "the command's exit status is returned: %s", err);
	cr_assert_eq(lines(out, names, 16), 10, "%s", out);
	snprintf(path, sizeof(path), "%s", names[0]);
	cr_assert_str_eq(names[1], "arbitrary");
	cr_assert_neq(access(path, F_OK), 0, "%s was left behind", path);
}

struct bad_case {
	const char *what;
	char *args[16];
	int status;
	const char *msg;
};

Test(layout_cli, bad_input_says_what_to_fix)
{
	static char out[MAXOUT], err[MAXOUT];
	struct bad_case cases[] = {
	    {"no profile", {"layout", "-w", "n1", "--tasks-per-node", "1", NULL}, 2, "--profile"},
	    {"no nodes",
	     {"layout", "-p", split_path, "--tasks-per-node", "2", NULL},
	     2,
	     "--nodelist"},
	    {"bad tasks",
	     {"layout", "-p", split_path, "-w", "n[1-4]", "--tasks-per-node", "2(x9)", NULL},
	     2,
	     "more than the 4 nodes"},
	    {"too few slots",
	     {"layout", "-p", split_path, "-w", "n[1-4]", "--tasks-per-node", "1", NULL},
	     2,
	     "do not fit"},
	    {"few ntasks",
	     {"layout", "-p", split_path, "-w", "n[1-4]", "--tasks-per-node", "2", "-n", "4", NULL},
	     2,
	     "less than the 8 ranks"},
	    {"bad mapper",
	     {"layout", "-p", split_path, "-w", "n[1-4]", "--tasks-per-node", "2", "-m", "nope",
	      NULL},
	     2,
	     "unknown mapper"},
	    {"exec without command",
	     {"layout", "-p", split_path, "-w", "n[1-4]", "--tasks-per-node", "2", "--exec", NULL},
	     2,
	     "--exec needs a command"},
	    {"node not in conf",
	     {"layout", "-p", split_path, "-w", "n[1-3],x9", "--topology-conf", conf_path,
	      "--tasks-per-node", "2", NULL},
	     1,
	     "x9"},
	    {"missing profile",
	     {"layout", "-p", "/nonexistent.mtx", "-w", "n1", NULL},
	     1,
	     "/nonexistent.mtx"},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int st = run(cases[k].args, out, err);
		cr_assert_eq(st, cases[k].status, "%s: exit %d, expected %d (%s)", cases[k].what,
		             st, cases[k].status, err);
		cr_assert(strstr(err, cases[k].msg), "%s: message '%s' lacks '%s'", cases[k].what,
		          err, cases[k].msg);
		cr_assert(strncmp(err, "treematch: ", 11) == 0, "%s: '%s'", cases[k].what, err);
		cr_assert_eq(out[0], '\0', "%s: printed a hostfile anyway", cases[k].what);
	}
}

/* plan check of the plan `plan` turned into version 1 (FNV-1a sealed, its
   profile's content hashed with FNV-1a: built here from the plan written
   now) hashes the profile as that version did; the plan written now
   records the profile's XXH3. The plan is put back as it was. */
static void check_as_version_1(char *plan, char *out, char *err)
{
	char *check[] = {"plan", "check", plan, split_path, NULL};
	unsigned char *b = NULL, *prof = NULL, *orig;
	size_t len, plen;

	orig = tm_slurp(plan, &len);
	prof = tm_slurp(split_path, &plen);
	b = malloc(len);
	cr_assert_not_null(b);
	memcpy(b, orig, len);
	cr_assert_eq(tm_get_le(b + 56, 8), (uint64_t)XXH3_64bits(prof, plen),
	             "a plan written now records the profile's XXH3");
	cr_assert_eq(tm_plan_to_v1(b, len, tm_fnv_words(prof, plen)), 0);
	tm_spill(plan, b, len);
	cr_assert_eq(run(check, out, err), 0, "version 1: %s%s", out, err);
	cr_assert_not_null(strstr(out, "the profile planned"), "%s", out);
	/* the same plan of version 1 recording the XXH3: not what it hashed */
	cr_assert_eq(tm_plan_to_v1(b, len, (uint64_t)XXH3_64bits(prof, plen)), 0);
	tm_spill(plan, b, len);
	cr_assert_eq(run(check, out, err), 1, "%s%s", out, err);
	cr_assert_not_null(strstr(out, "its content differs"), "%s", out);
	tm_spill(plan, orig, len);
	free(orig);
	free(b);
	free(prof);
}

/* layout --plan: the plan's slices agree with the hostfile; plan show,
   node and check read it back as a node would (a plan of version 1 too);
   --exec exports it. */
Test(layout_cli, plan_matches_the_hostfile_and_reads_back)
{
	static char out[MAXOUT], err[MAXOUT], hosts[MAXOUT];
	char plan[TM_TMP_MAX + 64], *names[16], node_arg[8];
	char *lay[] = {"layout",   "-p",
	               split_path, "-w",
	               "n[1-4]",   "--topology-conf",
	               conf_path,  "--tasks-per-node",
	               "2",        "--plan",
	               plan,       "--job-id",
	               "42",       NULL};
	char *show[] = {"plan", "show", plan, "--node", node_arg, NULL};
	char *check[] = {"plan", "check", plan, split_path, NULL};
	char *node[] = {"plan", "node", plan, node_arg, "-t", "synthetic:core:2 pu:1", NULL};

	snprintf(plan, sizeof(plan), "%s/step.plan", dir);
	cr_assert_eq(run(lay, hosts, err), 0, "%s", err);
	cr_assert_eq(lines(hosts, names, 16), 8);
	for (int i = 1; i <= 4; i++) {
		char want[64] = "";

		snprintf(node_arg, sizeof(node_arg), "n%d", i);
		cr_assert_eq(run(show, out, err), 0, "%s", err);
		cr_expect_not_null(strstr(out, "job: 42\nstep: any\ntasks: 8\nnodes: 4\n"), "%s",
		                   out);
		/* the slice holds exactly the ranks the hostfile sends there */
		for (int r = 0; r < 8; r++)
			if (!strcmp(names[r], node_arg))
				snprintf(want + strlen(want), sizeof(want) - strlen(want),
				         "rank %d leaf", r);
		{
			char got[64] = "", *p = out;

			while ((p = strstr(p, "\nrank "))) {
				int r;

				if (sscanf(p + 1, "rank %d", &r) == 1)
					snprintf(got + strlen(got), sizeof(got) - strlen(got),
					         "rank %d leaf", r);
				p++;
			}
			cr_expect_str_eq(got, want, "%s", node_arg);
		}
		cr_assert_eq(run(node, out, err), 0, "%s", err);
		cr_expect_not_null(strstr(out, "2 task(s) mapped by plan-"), "%s", out);
	}
	cr_expect_eq(run(check, out, err), 0, "%s%s", out, err);
	cr_expect_not_null(strstr(out, "the profile planned"), "%s", out);
	check_as_version_1(plan, out, err);
	/* the same bytes written again: the content matches, the time does not */
	{
		FILE *f = fopen(split_path, "r+");
		int c;

		cr_assert_not_null(f);
		c = fgetc(f);
		rewind(f);
		fputc(c, f);
		fclose(f);
	}
	cr_expect_eq(run(check, out, err), 1);
	cr_expect_not_null(strstr(out, "modified since"), "%s", out);
	snprintf(node_arg, sizeof(node_arg), "n9");
	cr_expect_eq(run(show, out, err), 1);
	cr_expect_not_null(strstr(err, "no slice for node n9"), "%s", err);
	/* a plan needs its job */
	lay[12] = "0";
	cr_expect_eq(run(lay, out, err), 2);
	cr_expect_not_null(strstr(err, "--plan needs the job"), "%s", err);
}

Test(layout_cli, exec_exports_the_plan)
{
	static char out[MAXOUT], err[MAXOUT];
	char plan[TM_TMP_MAX + 64];
	char *args[] = {"layout",
	                "-p",
	                split_path,
	                "-w",
	                "n[1-4]",
	                "--topology-conf",
	                conf_path,
	                "--tasks-per-node",
	                "2",
	                "--plan",
	                plan,
	                "--job-id",
	                "7",
	                "-x",
	                "sh",
	                "-c",
	                "echo $TREEMATCH_PLAN",
	                NULL};

	snprintf(plan, sizeof(plan), "%s/x.plan", dir);
	cr_assert_eq(run(args, out, err), 0, "%s", err);
	cr_expect_eq(strncmp(out, plan, strlen(plan)), 0, "%s", out);
	cr_expect_eq(access(plan, R_OK), 0);
}

/* The site: slurm.conf and a plugin stack with this line, in dir. */
static void site(const char *line)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/plugstack.conf", dir);
	write_file(path, line);
	snprintf(path, sizeof(path), "%s/slurm.conf", dir);
	write_file(path, "ClusterName=test\n");
	setenv("SLURM_CONF", path, 1);
}

static int hosts(char *out)
{
	char *names[16];

	return lines(out, names, 16);
}

/*
 * --treematch VALUE, the cli_filter's question: the profile srun
 * --treematch=VALUE places the step from, read as the plugin reads it over
 * the site's policy; nothing to lay out is no output and status 0.
 */
Test(layout_cli, treematch_values_as_the_plugin_reads_them)
{
	static char out[MAXOUT], err[MAXOUT];
	char value[160], line[256];
	char *user[] = {"layout",  "--treematch",      value, "-w", "n[1-4]", "--topology-conf",
	                conf_path, "--tasks-per-node", "2",   NULL};
	char *sized[] = {"layout", "--treematch", "verbose=1",       "-n",      "6",
	                 "-w",     "n[1-4]",      "--topology-conf", conf_path, "--tasks-per-node",
	                 "2",      NULL};

	site("# no line for the plugin\n");
	snprintf(value, sizeof(value), "%s,verbose=1", split_path);
	cr_assert_eq(run(user, out, err), 0, "%s", err);
	cr_expect_eq(hosts(out), 8, "%s", out);
	snprintf(value, sizeof(value), "off");
	cr_assert_eq(run(user, out, err), 0, "%s", err);
	cr_expect_str_eq(out, "");
	cr_expect(strstr(err, "not laid out") && strstr(err, "off"), "%s", err);
	/* options alone: the site's default profile, for steps of its size */
	snprintf(value, sizeof(value), "verbose=1");
	cr_assert_eq(run(user, out, err), 0, "%s", err);
	cr_expect_str_eq(out, "");
	cr_expect(strstr(err, "no profile") != NULL, "%s", err);
	snprintf(line, sizeof(line), "optional treematch.so profile=%s\n", split_path);
	site(line);
	cr_assert_eq(run(user, out, err), 0, "%s", err);
	cr_expect_eq(hosts(out), 8, "%s", out);
	cr_assert_eq(run(sized, out, err), 0, "%s", err);
	cr_expect_str_eq(out, "");
	cr_expect(strstr(err, "has 8 ranks, the step 6 tasks") != NULL, "%s", err);
	/* the site's typo: where it is */
	site("optional treematch.so failure=fallbak\n");
	cr_assert_eq(run(user, out, err), 1, "%s", err);
	cr_expect(strstr(err, "plugstack.conf:1:23: 'failure'") != NULL, "%s", err);
	unsetenv("SLURM_CONF");
}

/* learn: the profile stored for the step's MPI program at its task count. */
Test(layout_cli, learn_lays_out_from_the_stored_profile)
{
	static char out[MAXOUT], err[MAXOUT];
	char cache[128], program[160], cmd[512];
	char *learn[] = {"layout", "--treematch", "learn",           "-n",      "8",
	                 "-w",     "n[1-4]",      "--topology-conf", conf_path, "--tasks-per-node",
	                 "2",      "--",          "/usr/bin/env",    program,   "-x",
	                 NULL};
	char *plain[] = {"layout", "--treematch", "learn",           "-n",      "8",
	                 "-w",     "n[1-4]",      "--topology-conf", conf_path, "--tasks-per-node",
	                 "2",      "--",          "/bin/true",       NULL};
	char yml[160];
	char *convert[] = {"profile", "convert", "-o", yml, split_path, NULL};
	char *put[] = {"store", "put", program, yml, NULL};

	site("# none\n");
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("XDG_CACHE_HOME", cache, 1);
	snprintf(program, sizeof(program), "%s/app", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", TMATCH_BUILDDIR "/tests/mpi/pattern.openmpi",
	         program);
	cr_assert_eq(system(cmd), 0);
	/* nothing stored yet: this run is recorded, not laid out */
	cr_assert_eq(run(learn, out, err), 0, "%s", err);
	cr_expect_str_eq(out, "");
	cr_expect(strstr(err, "nothing stored yet for") && strstr(err, "app at 8 tasks"), "%s",
	          err);
	snprintf(yml, sizeof(yml), "%s/split.yml", dir);
	cr_assert_eq(run(convert, out, err), 0, "%s", err);
	cr_assert_eq(run(put, out, err), 0, "%s", err);
	cr_assert_eq(run(learn, out, err), 0, "%s", err);
	cr_expect_eq(hosts(out), 8, "%s", out);
	/* a step without an MPI program learns nothing */
	cr_assert_eq(run(plain, out, err), 0, "%s", err);
	cr_expect_str_eq(out, "");
	cr_expect(strstr(err, "not laid out: learning: not learned") != NULL, "%s", err);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("SLURM_CONF");
}

/* The cli_filter's plan: beside the profile, named for its srun, printed
   last; the plan a node reads back. */
Test(layout_cli, the_filter_gets_a_plan_named_for_its_srun)
{
	static char out[MAXOUT], err[MAXOUT];
	char want[256], *nl;
	char *args[] = {"layout", "--treematch",     split_path, "--srun-pid",       "4242", "-w",
	                "n[1-4]", "--topology-conf", conf_path,  "--tasks-per-node", "2",    NULL};
	struct stat sb;

	site("# none\n");
	setenv("SLURM_JOB_ID", "77", 1);
	cr_assert_eq(run(args, out, err), 0, "%s", err);
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_CONF");
	snprintf(want, sizeof(want), "treematch-plan=%s/.treematch-plan.77.4242\n", dir);
	nl = strstr(out, "treematch-plan=");
	cr_assert_not_null(nl, "%s", out);
	cr_expect_str_eq(nl, want);
	*nl = '\0';
	cr_expect_eq(hosts(out), 8, "%s", out);
	cr_expect_eq(stat(want + 15, &sb), -1, "the path ends with a newline");
	want[strlen(want) - 1] = '\0';
	cr_expect_eq(stat(want + 15, &sb), 0, "%s", want + 15);
}
