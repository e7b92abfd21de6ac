/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_learn.c - learn mode's decisions (placement/learn.c) and the
 * step's other decisions of issue 34 (placement/step.c): srun's one learn
 * decision per step and its text on the wire, what a node does with it,
 * min_gain, the site store a user falls back from, the job's working
 * directory under srun --chdir, and which node failures stop the step.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "placement/learn.h"
#include "placement/node.h"
#include "placement/step.h"
#include "profiler/mpiabi.h"
#include "tmpdir.h"

#define EXAMPLES TMATCH_SRCDIR "/profile/examples/"
#define MPIDIR   TMATCH_BUILDDIR "/tests/mpi/"

static char root[256];
static char said[4096]; /* what the decision told the user, one line each */

static void setup(void)
{
	tm_mkdtemp(root, sizeof(root), "tm-learn");
	setenv("XDG_CACHE_HOME", root, 1);
	said[0] = '\0';
}

static void teardown(void)
{
	tm_rmtree(root);
}

TestSuite(learn, .init = setup, .fini = teardown);

static void say(void *arg, int level, const char *msg)
{
	size_t n = strlen(said);

	(void)arg;
	snprintf(said + n, sizeof(said) - n, "%d %s\n", level, msg);
}

/* srun's decision for an 8-task MPI step (job 42, step 7) under cfg. */
static void decide(const tmatch_config_t *cfg, char *const *argv, tmatch_place_learn_t *d)
{
	tmatch_place_learn_in_t in;

	memset(&in, 0, sizeof(in));
	in.cfg = cfg;
	in.mpi_program = tmatch_mpiabi_program;
	in.argv = argv;
	in.path_env = "/usr/bin:/bin";
	in.job_cwd = "/";
	in.ntasks = 8;
	in.job_id = 42;
	in.step_id = 7;
	said[0] = '\0';
	cr_assert_eq(tmatch_place_learn_decide(&in, d, say, NULL), 0);
}

static void learn_config(tmatch_config_t *cfg)
{
	tmatch_error_t err;

	tmatch_config_init(cfg);
	cr_assert_eq(tmatch_config_parse_string(cfg, "learn", TMATCH_CONFIG_USER, "test", &err), 0,
	             "%s", err.msg);
}

/* What the step recorded, as its tasks would leave it. */
static void record_into(const tmatch_place_learn_t *d, const char *profile)
{
	char path[PATH_MAX], cmd[2 * PATH_MAX + 32];

	cr_assert_eq(tmatch_place_learn_recording(d, path, sizeof(path)), 0);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", profile, path);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(learn, record_first_then_place_from_the_entry_by_its_version)
{
	static char prog[] = MPIDIR "pattern.openmpi";
	char *argv[] = {"/usr/bin/env", prog, NULL}, text[2 * PATH_MAX], stem[17];
	int err_no;
	tmatch_config_t cfg;
	tmatch_place_learn_t d, p, back;
	tmatch_error_t err;

	learn_config(&cfg);
	decide(&cfg, argv, &d);
	cr_assert_eq(d.what, TMATCH_PLACE_LEARN_RECORD, "%s", said);
	cr_assert(strstr(said, "2 learn: nothing stored for") &&
	              strstr(said, "this run is recorded"),
	          "%s", said);
	cr_assert(strstr(d.store, root) == d.store, "%s", d.store);

	/* the text every node reads, and back */
	cr_assert_eq(tmatch_place_learn_format(&d, text, sizeof(text)), 0);
	cr_assert_eq(tmatch_place_learn_parse(text, 42, 7, &back, &err), 0, "%s", err.msg);
	cr_assert_eq(back.what, TMATCH_PLACE_LEARN_RECORD);
	cr_assert_str_eq(back.stem, d.stem);
	cr_assert_str_eq(back.store, d.store);

	/* the tasks recorded; srun stores it and removes the recording */
	record_into(&d, EXAMPLES "lammps-8.yml");
	said[0] = '\0';
	cr_assert_eq(tmatch_place_learn_collect(&d, say, NULL), 0, "%s", said);
	cr_assert(strstr(said, "stored the profile of"), "%s", said);
	cr_assert_eq(tmatch_place_learn_recording(&d, text, sizeof(text)), 0);
	cr_assert_eq(access(text, F_OK), -1, "the recording is removed");

	/* the next step is placed from that entry, that version of it */
	decide(&cfg, argv, &p);
	cr_assert_eq(p.what, TMATCH_PLACE_LEARN_PLACE, "%s", said);
	cr_assert_str_eq(p.stem, d.stem);
	cr_assert_neq(p.checksum, 0);
	cr_assert(strstr(said, "from the stored profile"), "%s", said);
	cr_assert_eq(tmatch_place_learn_format(&p, text, sizeof(text)), 0);
	cr_assert_eq(tmatch_place_learn_follow(&cfg, text, 42, 7, stem, &err_no),
	             TMATCH_PLACE_LEARN_PLACE_STEP, "%s", strerror(err_no));
	cr_assert(strstr(cfg.profile, p.stem) && strstr(cfg.profile, ".compiled"), "%s",
	          cfg.profile);

	/* stored again in between (another step's first run): not that
	   version, so Slurm's binding, and never a recording */
	record_into(&d, EXAMPLES "lammps-8.yml");
	cr_assert_eq(tmatch_place_learn_collect(&d, say, NULL), 0, "%s", said);
	cr_assert_eq(tmatch_place_learn_follow(&cfg, text, 42, 7, stem, &err_no),
	             TMATCH_PLACE_LEARN_GONE);
	cr_assert_eq(err_no, ESTALE, "replaced since: %s", strerror(err_no));
	cr_assert_str_eq(stem, p.stem);
}

Test(learn, a_damaged_entry_is_discarded_once_and_recorded_again)
{
	static char prog[] = MPIDIR "pattern.mpich";
	char *argv[] = {prog, NULL}, path[PATH_MAX + 32];
	tmatch_config_t cfg;
	tmatch_place_learn_t d;
	FILE *f;

	learn_config(&cfg);
	decide(&cfg, argv, &d);
	record_into(&d, EXAMPLES "lammps-8.yml");
	cr_assert_eq(tmatch_place_learn_collect(&d, say, NULL), 0);
	snprintf(path, sizeof(path), "%s/%s.compiled", d.store, d.stem);
	f = fopen(path, "r+");
	cr_assert_not_null(f);
	cr_assert_eq(fseek(f, 100, SEEK_SET), 0);
	fputc('~', f);
	cr_assert_eq(fclose(f), 0);
	decide(&cfg, argv, &d);
	cr_assert_eq(d.what, TMATCH_PLACE_LEARN_RECORD, "%s", said);
	cr_assert(strstr(said, "1 learn: discarded the stored profile"), "said always: %s", said);
}

Test(learn, steps_without_mpi_or_store_learn_nothing)
{
	char *argv[] = {"/bin/true", NULL}, stem[17];
	int err_no;
	tmatch_config_t cfg;
	tmatch_place_learn_t d;

	learn_config(&cfg);
	decide(&cfg, argv, &d);
	cr_assert_eq(d.what, TMATCH_PLACE_LEARN_NONE);
	cr_assert(strstr(said, "2 learn: not learned"), "in verbose mode only: %s", said);
	cr_assert_eq(tmatch_place_learn_follow(&cfg, "1 42 7 none", 42, 7, stem, &err_no),
	             TMATCH_PLACE_LEARN_NOT_LEARNED);

	/* a store open to others: not used, said */
	cr_assert_eq(chmod(root, 0777), 0);
	argv[0] = MPIDIR "pattern.openmpi";
	decide(&cfg, argv, &d);
	cr_assert_eq(d.what, TMATCH_PLACE_LEARN_NONE);
	cr_assert(strstr(said, "1 learn: ") && strstr(said, "writable by other users"), "%s", said);
	cr_assert_eq(chmod(root, 0700), 0);
}

/* A site store's directory someone else made: the user's own store, said
   once (srun); one not made yet (root makes it on the nodes): recorded
   into, at that path. */
Test(learn, site_store_squatted_or_not_made_yet)
{
	static char prog[] = MPIDIR "pattern.openmpi";
	char *argv[] = {prog, NULL}, site[300], theirs[400];
	tmatch_config_t cfg;
	tmatch_place_learn_t d;

	learn_config(&cfg);
	snprintf(site, sizeof(site), "%s/site", root);
	cr_assert_eq(mkdir(site, 01777), 0);
	cr_assert_eq(chmod(site, 01777), 0);
	snprintf(cfg.store, sizeof(cfg.store), "%s", site);
	snprintf(theirs, sizeof(theirs), "%s/%ld", site, (long)geteuid());
	if (geteuid() == 0) {
		cr_assert_eq(mkdir(theirs, 0700), 0);
		cr_assert_eq(chown(theirs, 65534, 65534), 0);
	} else {
		cr_assert_eq(mkdir(theirs, 0755), 0); /* theirs, but open to others */
	}
	decide(&cfg, argv, &d);
	cr_assert_eq(d.what, TMATCH_PLACE_LEARN_RECORD, "%s", said);
	cr_assert_eq(strncmp(d.store, root, strlen(root)), 0, "%s", d.store);
	cr_assert(strstr(d.store, "/treematch/store"), "the user's own store: %s", d.store);
	cr_assert(strstr(said, "1 learn: the site store cannot be used") &&
	              strstr(said, "using your own store"),
	          "%s", said);
	cr_assert_eq(strstr(strstr(said, "site store") + 1, "site store"), NULL, "once: %s", said);

	if (geteuid() != 0)
		return;
	/* root's site directory, the user's not made yet */
	cr_assert_eq(rmdir(theirs), 0);
	cr_assert_eq(chmod(site, 0755), 0);
	cr_assert_eq(chmod(root, 0755), 0);
	cr_assert_eq(seteuid(65534), 0);
	decide(&cfg, argv, &d);
	cr_assert_eq(seteuid(0), 0);
	cr_assert_eq(d.what, TMATCH_PLACE_LEARN_RECORD, "%s", said);
	snprintf(theirs, sizeof(theirs), "%s/65534", site);
	cr_assert_str_eq(d.store, theirs);
	/* the root side makes it, the user's */
	cr_assert_eq(tmatch_place_learn_site_prepare(&cfg, 65534, 65534, NULL), 0);
	cr_assert_eq(access(theirs, F_OK), 0);
}

Test(learn, decisions_on_the_wire_are_checked)
{
	static const char *const bad[] = {
	    "",
	    "2 42 7 none",
	    "1 42 7 maybe",
	    "1 42 7 none extra",
	    "1 42 7 record 0123456789abcdef relative/store",
	    "1 42 7 record 0123456789ABCDEF /s",
	    "1 42 7 record 0123 /s",
	    "1 42 7 place 0123456789abcdef /s",
	    "1 42 7 place 0123456789abcdef 0000000000000000 /s",
	    "1 42 99999999999 none",
	    "1 -42 7 none",
	};
	tmatch_place_learn_t d;
	tmatch_error_t err;
	char why[512], stem[17];
	int err_no;
	tmatch_config_t cfg;

	learn_config(&cfg);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tmatch_error_clear(&err);
		cr_expect_eq(tmatch_place_learn_parse(bad[i], 42, 7, &d, &err), -1, "%s", bad[i]);
		cr_expect(err.msg[0], "%s: says why", bad[i]);
		cr_expect_eq(tmatch_place_learn_follow(&cfg, bad[i], 42, 7, stem, &err_no),
		             TMATCH_PLACE_LEARN_NO_DECISION, "%s", bad[i]);
		/* the empty one is none at all; the others are malformed */
		cr_expect_eq(err_no, i == 0 ? ENOENT : EINVAL, "%s: %s", bad[i], strerror(err_no));
	}
	/* another step's decision is not this one's */
	cr_assert_eq(tmatch_place_learn_parse("1 42 6 none", 42, 7, &d, &err), -1);
	cr_assert_eq(errno, ENOENT);
	cr_assert_eq(tmatch_place_learn_parse(NULL, 42, 7, &d, &err), -1);
	cr_assert(strstr(err.msg, "srun made no learn decision"), "%s", err.msg);
	cr_assert_eq(tmatch_place_learn_parse("1 42 7 place 0123456789abcdef 00000000000000ff /a b",
	                                      42, 7, &d, &err),
	             0, "%s", err.msg);
	cr_assert_eq(d.checksum, 0xff);
	cr_assert_str_eq(d.store, "/a b");
	cr_assert_eq(tmatch_place_learn_follow(&cfg, "1 42 6 none", 42, 7, stem, &err_no),
	             TMATCH_PLACE_LEARN_NO_DECISION);
	cr_assert_eq(err_no, ENOENT, "another step's: none for this one");
	cr_assert_eq(tmatch_place_learn_follow(&cfg, "1 42 7 record 0123456789abcdef /a", 42, 7,
	                                       stem, &err_no),
	             TMATCH_PLACE_LEARN_RECORD_STEP);
	cr_assert_eq(tmatch_place_learn_format(NULL, why, sizeof(why)), -1);
}

Test(learn, min_gain_decides_whether_a_learned_placement_is_kept)
{
	tmatch_config_t cfg;
	tmatch_place_node_t plan;
	double gain;

	learn_config(&cfg);
	memset(&plan, 0, sizeof(plan));
	plan.status = TMATCH_PLACE_PLACED;
	plan.cost_packed = 100;
	plan.cost = 99; /* 1 % */
	cr_assert_eq(tmatch_place_learn_gain_ok(&cfg, &plan, &gain), 0);
	cr_assert_float_eq(gain, 1.0, 1e-9);
	plan.cost = 101; /* worse than packed: no gain, not a negative one */
	cr_assert_eq(tmatch_place_learn_gain_ok(&cfg, &plan, &gain), 0);
	cr_assert_float_eq(gain, 0.0, 1e-9);
	plan.cost = 98; /* 2 %: enough */
	cr_assert_eq(tmatch_place_learn_gain_ok(&cfg, &plan, &gain), 1);
	cfg.min_gain = 0;
	plan.cost = 100;
	cr_assert_eq(tmatch_place_learn_gain_ok(&cfg, &plan, &gain), 1);
	/* not learned (a profile the user named): always kept */
	cfg.min_gain = 50;
	cfg.learn = 0;
	cr_assert_eq(tmatch_place_learn_gain_ok(&cfg, &plan, &gain), 1);
	cfg.learn = 1;
	plan.status = TMATCH_PLACE_SKIPPED;
	cr_assert_eq(tmatch_place_learn_gain_ok(&cfg, &plan, &gain), 1);
	cr_assert_eq(tmatch_place_learn_gain_ok(&cfg, NULL, NULL), 1);
}

/* ---- the step (step.c) ----------------------------------------------------- */

static const char *cwd_of(int nopts, const char *env_dir, char *const *words)
{
	static char out[PATH_MAX];
	int n = 0;

	while (words[n])
		n++;
	cr_assert_eq(tmatch_place_job_cwd(words, n, nopts, env_dir, "/home/u/A", out, sizeof(out)),
	             0);
	return out;
}

/* Issue 34: `cd A; srun --chdir=B --treematch=p.yml` checked A/p.yml and
   placed from B/p.yml. */
Test(learn, the_jobs_working_directory_as_srun_gives_it)
{
	char *plain[] = {"-n", "4", "--treematch=p.yml", "./app", NULL};
	char *eq[] = {"--chdir=B", "-n4", "./app", NULL};
	char *sep[] = {"--chdir", "/abs", "./app", NULL};
	char *prefix[] = {"--chd=B", "./app", NULL};
	char *shortsep[] = {"-D", "B", "./app", NULL};
	char *shortcat[] = {"-DB", "./app", NULL};
	char *cluster[] = {"-lD", "B", "./app", NULL};
	char *valued[] = {"-J", "-DX", "-lDB", "./app", NULL};
	char *last[] = {"-D", "X", "--chdir=B", "./app", NULL};
	char *after[] = {"./app", "-D", "X", NULL};
	char *ddash[] = {"--", "-D", "X", NULL};
	char *notchdir[] = {"--c=B", "--cpus-per-task=2", "./app", NULL};
	tmatch_config_t cfg;

	cr_expect_str_eq(cwd_of(3, NULL, plain), "/home/u/A");
	cr_expect_str_eq(cwd_of(2, NULL, eq), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(2, NULL, sep), "/abs");
	cr_expect_str_eq(cwd_of(1, NULL, prefix), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(2, NULL, shortsep), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(1, NULL, shortcat), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(2, NULL, cluster), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(3, NULL, valued), "/home/u/A/B", "-J's value is -DX");
	cr_expect_str_eq(cwd_of(3, NULL, last), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(0, NULL, after), "/home/u/A", "the program's own -D");
	cr_expect_str_eq(cwd_of(-1, NULL, after), "/home/u/A", "sbatch: the script's own -D");
	cr_expect_str_eq(cwd_of(-1, NULL, ddash), "/home/u/A");
	cr_expect_str_eq(cwd_of(2, NULL, notchdir), "/home/u/A");
	/* SLURM_WORKING_DIR is srun's -D unless one is given */
	cr_expect_str_eq(cwd_of(3, "/env", plain), "/env");
	cr_expect_str_eq(cwd_of(3, "rel", plain), "/home/u/A/rel");
	cr_expect_str_eq(cwd_of(2, "/env", eq), "/home/u/A/B");
	cr_expect_eq(tmatch_place_job_cwd(plain, 4, 3, NULL, "relative", NULL, 0), -1);

	/* the profile srun reads is the one the nodes read */
	tmatch_config_init(&cfg);
	snprintf(cfg.profile, sizeof(cfg.profile), "p.yml");
	cr_assert_eq(tmatch_place_profile_in_job_dir(&cfg, "/home/u/A/B"), 0);
	cr_expect_str_eq(cfg.profile, "/home/u/A/B/p.yml");
	cr_assert_eq(tmatch_place_profile_in_job_dir(&cfg, "/elsewhere"), 0);
	cr_expect_str_eq(cfg.profile, "/home/u/A/B/p.yml", "absolute: kept");
}

/* The working directory through the one table of srun's options (step.c),
   as the task count reads the line: the forms one reader took alone. */
Test(learn, the_working_directory_through_the_table_of_srun_options)
{
	char *ntasks_sep[] = {"--ntasks", "4", "-D", "B", "./app", NULL};
	char *ntasks_eq[] = {"--ntasks=4", "-D", "B", "./app", NULL};
	char *n_sep[] = {"-n", "4", "--chdir=B", "./app", NULL};
	char *n_cat[] = {"-n4", "--chdir", "B", "./app", NULL};
	char *named[] = {"-D", "B", "--job-name", "-DX", "./app", NULL};
	char *named_eq[] = {"--job-name=-DX", "-DB", "./app", NULL};
	char *flag[] = {"--label", "-D", "B", "./app", NULL};
	char *array[] = {"-a", "1-3", "-D", "B", "./script", NULL};
	char *comment[] = {"-D", "B", "--comment", "-DX", "./app", NULL};
	char *dangling[] = {"-D", "B", "--chdir", NULL};

	/* sbatch and salloc (the options end at the first word not one) */
	cr_expect_str_eq(cwd_of(-1, NULL, ntasks_sep), "/home/u/A/B", "--ntasks' value");
	cr_expect_str_eq(cwd_of(-1, NULL, ntasks_eq), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(-1, NULL, n_sep), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(-1, NULL, n_cat), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(-1, NULL, array), "/home/u/A/B", "sbatch's -a takes a value");
	/* a value that looks like an option is the option's */
	cr_expect_str_eq(cwd_of(4, NULL, named), "/home/u/A/B", "the job is named -DX");
	cr_expect_str_eq(cwd_of(2, NULL, named_eq), "/home/u/A/B");
	cr_expect_str_eq(cwd_of(3, NULL, flag), "/home/u/A/B");
	/* a long option the table does not have: its separate value is not
	   skipped (tmatch_place_job_cwd's comment) */
	cr_expect_str_eq(cwd_of(4, NULL, comment), "/home/u/A/X");
	cr_expect_str_eq(cwd_of(3, NULL, dangling), "/home/u/A/B");
}

Test(learn, which_node_failures_stop_the_step)
{
	tmatch_config_t cfg;

	tmatch_config_init(&cfg);
	cr_expect_eq(tmatch_place_stop_step(&cfg, 1), 0, "fallback: every node runs");
	cfg.failure = TMATCH_FAILURE_FAIL;
	cr_expect_eq(tmatch_place_stop_step(&cfg, 1), 1);
	cr_expect_eq(tmatch_place_stop_step(&cfg, 0), 0);
	cr_expect_eq(tmatch_place_stop_step(NULL, 1), 0, "no policy known: never");
}
