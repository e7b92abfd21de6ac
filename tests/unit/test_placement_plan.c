/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_plan.c - the plugin's decisions (placement/) without
 * Slurm: step filtering, option values, configuration merging, the node
 * plan on synthetic hwloc topologies, the task environment and the lines
 * shown to the user.
 */
#include "placement/env.h"
#include "placement/node.h"
#include "placement/step.h"
#include "tests/unit/spank_profiles.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <hwloc.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 0-3 heavy, 1-2 heavy, light ring between: packed (0,1 | 2,3) is bad. */
static const char pairs4[] = "format: comm-profile\n"
                             "version: 1\n"
                             "ranks: 4\n"
                             "metrics: [bytes]\n"
                             "directed: false\n"
                             "edges:\n"
                             "  - [0, 3, 100000]\n"
                             "  - [1, 2, 100000]\n"
                             "  - [0, 1, 10]\n"
                             "  - [2, 3, 10]\n";

static tmatch_profile_t *load(const char *text)
{
	tmatch_error_t err;
	tmatch_profile_t *p =
	    tmatch_profile_load_buffer(text, strlen(text), "test.yml", NULL, NULL, NULL, &err);

	cr_assert_not_null(p, "profile: %s", err.msg);
	return p;
}

static tmatch_affinity_tree_t *synthetic(const char *spec, int cpt)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;

	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
	o.input = spec;
	o.cpus_per_task = cpt;
	o.smt = TMATCH_AFFINITY_SMT_CORE;
	o.node_name = "n0";
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "tree %s: %s", spec, err.msg);
	return t;
}

static void info_init(tmatch_place_node_in_t *info, const int *ranks, int nlocal, int total)
{
	memset(info, 0, sizeof(*info));
	info->node_name = "n0";
	info->node_index = 0;
	info->node_count = 1;
	info->cpus_per_task = 1;
	info->ranks = ranks;
	info->nlocal = nlocal;
	info->ntasks_total = total;
	info->isolate = 1; /* in a limited child, the library's isolation path */
	info->user_profile = 1;
}

/* A task's CPU list, mask or position as text (kept until 16 more calls). */
static const char *text_of(char *s)
{
	static char *ring[16];
	static int next;

	cr_assert_not_null(s);
	free(ring[next]);
	ring[next] = s;
	next = (next + 1) % 16;
	return s;
}

static const char *cpus(const tmatch_place_node_t *plan, int a)
{
	return text_of(tmatch_affinity_cpuset_list(plan->task[a].cpuset));
}

static const char *cpumask(const tmatch_place_node_t *plan, int a)
{
	return text_of(tmatch_affinity_cpuset_mask(plan->task[a].cpuset));
}

static const char *position(const tmatch_place_node_t *plan, int a, int what)
{
	return text_of(tmatch_affinity_pos_string(&plan->task[a].pos, what));
}

/* Number of CPUs in a list "0-3,8" (hwloc's own list reader: an independent check). */
static int count_list(const char *list)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int n;

	cr_assert_not_null(set);
	cr_assert_eq(hwloc_bitmap_list_sscanf(set, list), 0, "bad list %s", list);
	n = hwloc_bitmap_weight(set);
	hwloc_bitmap_free(set);
	return n;
}

/* Every task on its own CPUs, none shared (the invariant of every plan). */
static void check_disjoint(const tmatch_place_node_t *plan)
{
	for (int a = 0; a < plan->ntasks; a++) {
		cr_assert_neq(cpus(plan, a)[0], '\0');
		for (int b = a + 1; b < plan->ntasks; b++) {
			cr_assert_neq(plan->task[a].leaf, plan->task[b].leaf);
			cr_assert_str_neq(cpus(plan, a), cpus(plan, b));
			cr_assert(
			    !hwloc_bitmap_intersects(plan->task[a].cpuset, plan->task[b].cpuset));
		}
	}
}

/* One node's inputs (profile, synthetic tree, default options) and its plan. */
struct node_case {
	tmatch_profile_t *p;
	tmatch_affinity_tree_t *t;
	tmatch_place_node_in_t info;
	tmatch_config_t cfg;
	tmatch_error_t err;
};

static void case_init(struct node_case *c, const char *profile, const char *spec, int cpt,
                      const int *ranks, int nlocal, int total)
{
	c->p = load(profile);
	c->t = synthetic(spec, cpt);
	tmatch_config_init(&c->cfg);
	info_init(&c->info, ranks, nlocal, total);
	c->info.cpus_per_task = cpt;
	c->info.cfg = &c->cfg;
	c->info.profile = c->p;
}

/* The plan of the case's inputs, which must succeed. */
static tmatch_place_node_t *case_plan(struct node_case *c)
{
	tmatch_place_node_t *plan = NULL;

	c->info.cfg = &c->cfg;
	c->info.profile = c->p;
	cr_assert_eq(tmatch_place_node_map(&c->info, c->t, &plan, &c->err), 0, "%s", c->err.msg);
	cr_assert_eq(plan->status, TMATCH_PLACE_PLACED);
	return plan;
}

/* The mapping of the case's inputs as they stand (may fail). */
static int map_again(struct node_case *c, tmatch_place_node_t **plan)
{
	c->info.cfg = &c->cfg;
	c->info.profile = c->p;
	return tmatch_place_node_map(&c->info, c->t, plan, &c->err);
}

static void case_fini(struct node_case *c)
{
	tmatch_affinity_tree_destroy(c->t);
	tmatch_profile_destroy(c->p);
}

/* ------------------------------------------------------------------------ */

Test(placement_plan, special_steps_are_skipped)
{
	static const struct {
		uint32_t id;
		int handled;
	} cases[] = {
	    {0, 1},
	    {7, 1},
	    {TMATCH_STEP_BATCH, 0},
	    {TMATCH_STEP_EXTERN, 0},
	    {TMATCH_STEP_INTERACTIVE, 0},
	    {TMATCH_STEP_PENDING, 0},
	    {0xfffffff9u, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(tmatch_place_step_is_handled(cases[i].id), cases[i].handled,
		             "step %#x", cases[i].id);
}

Test(placement_plan, whole_node_for_exclusive_only)
{
	cr_expect_eq(tmatch_place_job_has_whole_node("0-3", 4), 1);
	cr_expect_eq(tmatch_place_job_has_whole_node("0,1,2-3", 4), 1);
	cr_expect_eq(tmatch_place_job_has_whole_node("0-2", 4), 0);
	cr_expect_eq(tmatch_place_job_has_whole_node("1", 2), 0);
	cr_expect_eq(tmatch_place_job_has_whole_node(NULL, 2), 0);
	cr_expect_eq(tmatch_place_job_has_whole_node("", 2), 0);
	cr_expect_eq(tmatch_place_job_has_whole_node("0-x", 2), 0);
	cr_expect_eq(tmatch_place_job_has_whole_node("3-1", 2), 0);
	cr_expect_eq(tmatch_place_job_has_whole_node("0-1", 0), 0);
}

Test(placement_plan, option_values)
{
	tmatch_error_t err;

	errno = 0;
	cr_expect_eq(tmatch_place_classify_value(NULL, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(tmatch_place_classify_value("", &err), -1);
	cr_expect(strstr(err.msg, "profile path") != NULL, "%s", err.msg);
	cr_expect_eq(tmatch_place_classify_value("help", NULL), TMATCH_PLACE_VALUE_HELP);
	cr_expect_eq(tmatch_place_classify_value("off", NULL), TMATCH_PLACE_VALUE_OPTIONS);
	cr_expect_eq(tmatch_place_classify_value("a.yml,verbose=1", NULL),
	             TMATCH_PLACE_VALUE_OPTIONS);
	cr_expect(strstr(tmatch_place_help_text(), "--treematch=off") != NULL);
	/* printed as it is, not as a format: one '%' */
	cr_expect(strstr(tmatch_place_help_text(), "%%") == NULL, "%s", tmatch_place_help_text());
	cr_expect(strstr(tmatch_place_help_text(), "PCT % gain") != NULL);
}

Test(placement_plan, admin_file_argument)
{
	char *argv[] = {"failure=fail", "admin_file=/etc/a.conf", "verbose=1",
	                "helper=/opt/tm/libexec/treematch/treematch-helper"};
	tmatch_config_t cfg;
	tmatch_error_t err;

	cr_expect_null(tmatch_place_admin_file(0, NULL));
	cr_expect_null(tmatch_place_admin_file(1, argv));
	cr_expect_str_eq(tmatch_place_admin_file(3, argv), "/etc/a.conf");
	cr_expect_null(tmatch_place_helper_path(3, argv));
	cr_expect_str_eq(tmatch_place_helper_path(4, argv),
	                 "/opt/tm/libexec/treematch/treematch-helper");
	/* the plugin's own arguments, not keys of the policy */
	tmatch_error_clear(&err);
	cr_expect_eq(tmatch_place_config(4, argv, -1, NULL, &cfg, &err), 0, "%s", err.msg);
}

/* Which plan a node places from: plan= (the user's or the site's) over
   the job's TREEMATCH_PLAN, else none (the profile). */
Test(placement_plan, plan_path_decision)
{
	tmatch_config_t cfg;

	tmatch_config_init(&cfg);
	cr_expect_null(tmatch_place_plan_path(&cfg, NULL));
	cr_expect_null(tmatch_place_plan_path(&cfg, ""));
	cr_expect_str_eq(tmatch_place_plan_path(&cfg, "/job/env.plan"), "/job/env.plan");
	snprintf(cfg.plan, sizeof(cfg.plan), "/user.plan");
	cr_expect_str_eq(tmatch_place_plan_path(&cfg, "/job/env.plan"), "/user.plan");
	cr_expect_str_eq(tmatch_place_plan_path(&cfg, NULL), "/user.plan");
}

/* What a node places from: off, srun's learn decision first, the plan,
   the profile; each branch once, and the plan named only when taken. */
Test(placement_plan, source_decision)
{
	tmatch_config_t cfg;
	const char *plan = "unset";

	cr_expect_eq(tmatch_place_source(NULL, "/job/env.plan", &plan), TMATCH_PLACE_FROM_OFF);
	cr_expect_null(plan);
	/* off: a plan in the job's environment changes nothing */
	tmatch_config_init(&cfg);
	plan = "unset";
	cr_expect_eq(tmatch_place_source(&cfg, "/job/env.plan", &plan), TMATCH_PLACE_FROM_OFF);
	cr_expect_null(plan);
	/* on, but no profile: a plan alone is refused (it is checked against
	   the profile it was made from) */
	cfg.enabled = 1;
	cr_expect_eq(tmatch_place_source(&cfg, "/job/env.plan", &plan), TMATCH_PLACE_FROM_OFF);
	cr_expect_null(plan);
	/* the profile itself */
	snprintf(cfg.profile, sizeof(cfg.profile), "/p.yml");
	cr_expect_eq(tmatch_place_source(&cfg, NULL, &plan), TMATCH_PLACE_FROM_PROFILE);
	cr_expect_null(plan);
	cr_expect_eq(tmatch_place_source(&cfg, "", &plan), TMATCH_PLACE_FROM_PROFILE);
	/* the plan: the job's, or plan= over it */
	cr_expect_eq(tmatch_place_source(&cfg, "/job/env.plan", &plan), TMATCH_PLACE_FROM_PLAN);
	cr_expect_str_eq(plan, "/job/env.plan");
	snprintf(cfg.plan, sizeof(cfg.plan), "/user.plan");
	cr_expect_eq(tmatch_place_source(&cfg, "/job/env.plan", &plan), TMATCH_PLACE_FROM_PLAN);
	cr_expect_str_eq(plan, "/user.plan");
	cfg.enabled = 0;
	cr_expect_eq(tmatch_place_source(&cfg, NULL, &plan), TMATCH_PLACE_FROM_OFF);
	cr_expect_null(plan);
	/* learn mode: srun's decision first, plan or not (the cli_filter
	   plans a learning step from the entry it found) ... */
	tmatch_config_init(&cfg);
	cr_assert_eq(tmatch_config_parse_string(&cfg, "learn", TMATCH_CONFIG_USER, NULL, NULL), 0);
	cr_expect_eq(tmatch_place_source(&cfg, "/job/env.plan", &plan), TMATCH_PLACE_FROM_LEARN);
	cr_expect_null(plan);
	cr_expect_eq(tmatch_place_source(&cfg, NULL, &plan), TMATCH_PLACE_FROM_LEARN);
	/* ... then the entry it names, through the plan when there is one */
	snprintf(cfg.profile, sizeof(cfg.profile), "/store/0123456789abcdef.compiled");
	cr_expect_eq(tmatch_place_source(&cfg, "/job/env.plan", &plan), TMATCH_PLACE_FROM_PLAN);
	cr_expect_str_eq(plan, "/job/env.plan");
	cr_expect_eq(tmatch_place_source(&cfg, NULL, &plan), TMATCH_PLACE_FROM_PROFILE);
	cr_expect_null(plan);
}

/* The default mapper's search on a node: search_time, within half of
   max_map_time; whether it was cut is said. */
Test(placement_plan, search_time_decision)
{
	tmatch_config_t cfg;
	int capped = -1;

	tmatch_config_init(&cfg);
	cfg.max_map_time = 10;
	cfg.search_time = 0;
	cr_expect_float_eq(tmatch_place_search_time(&cfg, &capped), 0, 1e-12);
	cr_expect_eq(capped, 0, "no search: nothing cut");
	cfg.search_time = 3;
	cr_expect_float_eq(tmatch_place_search_time(&cfg, &capped), 3, 1e-12);
	cr_expect_eq(capped, 0);
	cfg.search_time = 5;
	cr_expect_float_eq(tmatch_place_search_time(&cfg, &capped), 5, 1e-12);
	cr_expect_eq(capped, 0, "exactly half: as asked");
	cfg.search_time = 30;
	cr_expect_float_eq(tmatch_place_search_time(&cfg, &capped), 5, 1e-12,
	                   "half of max_map_time");
	cr_expect_eq(capped, 1);
	cfg.max_map_time = 0.5;
	cfg.search_time = 1;
	cr_expect_float_eq(tmatch_place_search_time(&cfg, NULL), 0.25, 1e-12);
}

Test(placement_plan, config_admin_then_user)
{
	char *argv[] = {"failure=fail", "default=on", "max_ranks=100"};
	tmatch_config_t cfg;
	tmatch_error_t err;

	cr_assert_eq(tmatch_place_config(3, argv, -1, NULL, &cfg, &err), 0, "%s", err.msg);
	cr_expect_eq(cfg.failure, TMATCH_FAILURE_FAIL);
	cr_expect_eq(cfg.enabled, 1);
	cr_assert_eq(tmatch_place_config(3, argv, -1, "off", &cfg, &err), 0, "%s", err.msg);
	cr_expect_eq(cfg.enabled, 0, "the user's off wins over default=on");
	cr_assert_eq(tmatch_place_config(3, argv, -1, "p.yml,verbose=2,max_ranks=50", &cfg, &err),
	             0, "%s", err.msg);
	cr_expect_str_eq(cfg.profile, "p.yml");
	cr_expect_eq(cfg.verbose, 2);
	cr_expect_eq(cfg.max_ranks, 50);
	cr_assert_eq(tmatch_place_config(3, argv, -1, "p.yml,max_ranks=500", &cfg, &err), 0, "%s",
	             err.msg);
	cr_expect_eq(cfg.max_ranks, 100, "the admin's limit caps the user's");
}

Test(placement_plan, config_errors_leave_output_alone)
{
	char *bad_admin[] = {"nonsense=1"};
	char *allowed[] = {"allowed_mappers=greedy:rcm"};
	tmatch_config_t cfg;
	tmatch_error_t err;

	memset(&cfg, 0x5a, sizeof(cfg));
	cr_expect_eq(tmatch_place_config(1, bad_admin, -1, NULL, &cfg, &err), -1);
	cr_expect(strstr(err.msg, "nonsense") != NULL, "%s", err.msg);
	cr_expect_eq(((unsigned char *)&cfg)[0], 0x5a);
	cr_expect_eq(tmatch_place_config(0, NULL, -1, "p.yml,bogus=1", &cfg, &err), -1);
	cr_expect_eq(tmatch_place_config(0, NULL, -1, "help", &cfg, &err), -1);
	cr_expect_eq(tmatch_place_config(1, allowed, -1, "p.yml,mapper=random", &cfg, &err), -1);
	cr_expect(strstr(err.msg, "greedy") != NULL, "allowed list named: %s", err.msg);
	cr_expect_eq(tmatch_place_config(1, allowed, -1, "p.yml,mapper=greedy", &cfg, &err), 0,
	             "%s", err.msg);
	errno = 0;
	cr_expect_eq(tmatch_place_config(-1, NULL, -1, NULL, &cfg, &err), -1);
	cr_expect_eq(errno, EINVAL);
}

Test(placement_plan, config_reads_admin_file)
{
	char path[TM_TMP_MAX];
	int fd = mkstemp(tm_tmpname(path, sizeof(path), "test_placement_plan_XXXXXX"));
	const char text[] = "# site policy\nfailure = fail\nverbose = 3\n";
	char arg[TM_TMP_MAX + 16];
	char *argv[1];
	tmatch_config_t cfg;
	tmatch_error_t err;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	lseek(fd, 0, SEEK_SET);
	snprintf(arg, sizeof(arg), "admin_file=%s", path);
	argv[0] = arg;
	cr_expect_eq(tmatch_place_config(1, argv, fd, "p.yml", &cfg, &err), 0, "%s", err.msg);
	cr_expect_eq(cfg.failure, TMATCH_FAILURE_FAIL);
	cr_expect_eq(cfg.verbose, 3);
	close(fd);
	unlink(path);
}

Test(placement_plan, check_profile_rank_count)
{
	tmatch_profile_t *p = load(pairs4);
	tmatch_config_t cfg;
	tmatch_error_t err;

	tmatch_config_init(&cfg);
	cr_expect_eq(tmatch_place_check_profile(&cfg, p, 4, &err), 0, "%s", err.msg);
	cr_expect_eq(tmatch_place_check_profile(&cfg, p, 0, &err), 0, "unknown count not checked");
	cr_expect_eq(tmatch_place_check_profile(&cfg, p, 6, &err), -1);
	cr_expect(strstr(err.msg, "4") && strstr(err.msg, "6"), "both numbers: %s", err.msg);
	/* the message names the profile it is about */
	snprintf(cfg.profile, sizeof(cfg.profile), "app.yml");
	cr_expect_eq(tmatch_place_check_profile(&cfg, p, 6, &err), -1);
	cr_expect_str_eq(err.file, "app.yml");
	snprintf(cfg.mapper, sizeof(cfg.mapper), "nosuch");
	cr_expect_eq(tmatch_place_check_profile(&cfg, p, 4, &err), -1);
	cr_expect(strstr(err.msg, "nosuch") != NULL, "%s", err.msg);
	errno = 0;
	cr_expect_eq(tmatch_place_check_profile(NULL, p, 4, &err), -1);
	cr_expect_eq(errno, EINVAL);
	tmatch_profile_destroy(p);
}

/* srun's task count from its command line, before it asks for anything. */
Test(placement_plan, srun_task_count_from_its_command_line)
{
	static const struct {
		const char *line; /* words separated by ' ' */
		int nopt;         /* getopt's optind; 0 = unknown */
		int want;
	} cases[] = {
	    {"srun -n 8 ./app", 0, 8},
	    {"srun -n8 --treematch=a.yml ./app -n 4", 0, 8},
	    {"srun --ntasks=16 ./app", 0, 16},
	    {"srun --ntasks 16 -l ./app", 0, 16},
	    {"srun -ln 6 ./app", 0, 6},
	    {"srun -ln6 ./app", 0, 6},
	    {"srun -n 4 -n 6 ./app", 0, 6},                /* the last one, as srun */
	    {"srun -p debug -N 2 -n 8 ./app", 0, 8},       /* values skipped */
	    {"srun -J -n8 ./app", 0, 0},                   /* -J's value is "-n8" */
	    {"srun -Jn8 ./app", 0, 0},                     /* the job name n8 */
	    {"srun -I5 -n 3 ./app", 0, 3},                 /* an attached optional value */
	    {"srun -N 2 --ntasks-per-node=4 ./app", 0, 0}, /* implied: not guessed */
	    {"srun ./app -n 4", 0, 0},                     /* the application's option */
	    {"srun -- -n 4", 0, 0},
	    {"srun -n 2 : -n 4 ./b", 0, 0}, /* heterogeneous */
	    {"srun --het-group=0 -n 2 ./a", 0, 0},
	    {"srun -n zero ./app", 0, 0},
	    {"srun -n 0 ./app", 0, 0},
	    {"srun -n", 0, 0},
	    {"srun -y -n 2 ./app", 0, 0},         /* not srun's: do not guess */
	    {"srun --mpi pmix -n 4 ./app", 0, 0}, /* "pmix" may be the command */
	    {"srun --mpi pmix -n 4 ./app", 5, 4}, /* getopt said where they end */
	    {"srun --mpi pmix -n 4 ./app -n 2", 5, 4},
	    {"srun -n 4 ./app -n 2", 3, 4},
	    /* one reader for this and the working directory (step.c's table
	       of srun's options): the forms only one of two readers took */
	    {"srun -n 4 ./app", 0, 4},
	    {"srun -n4 ./app", 0, 4},
	    {"srun --ntasks=4 ./app", 0, 4},
	    {"srun --ntasks 4 ./app", 0, 4},
	    /* a long option of the table takes the next word, whatever it is */
	    {"srun --chdir /x -n 4 ./app", 0, 4},
	    {"srun --ch /x -n 4 ./app", 0, 4},
	    {"srun -D /x -n 4 ./app", 0, 4},
	    {"srun -DB -n 4 ./app", 0, 4},
	    {"srun --job-name x -n 4 ./app", 0, 4},
	    {"srun --job-name -n8 ./app", 0, 0}, /* the job is named "-n8" */
	    {"srun --job-name=-n8 -n 2 ./app", 0, 2},
	    {"srun -J -n8 -n 2 ./app", 0, 2},
	    {"srun --nodes 2 --ntasks 4 ./app", 0, 4},
	    /* a long flag of the table: what follows is the command */
	    {"srun -n 4 --label ./app", 0, 4},
	    {"srun -n 4 --label ./app -n 2", 0, 4},
	    /* an optional value is attached only */
	    {"srun --immediate -n 3 ./app", 0, 3},
	    {"srun --immediate=5 -n 3 ./app", 0, 3},
	    /* sbatch's -a is not srun's */
	    {"srun -a 1 -n 4 ./app", 0, 0},
	    {"srun --array=1 -n 4 ./app", 0, 4}, /* not in the table: an unknown long */
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char buf[128], *argv[16];
		int argc = 0;

		snprintf(buf, sizeof(buf), "%s", cases[c].line);
		for (char *w = strtok(buf, " "); w && argc < 16; w = strtok(NULL, " "))
			argv[argc++] = w;
		cr_expect_eq(tmatch_place_srun_ntasks(argc, argv, cases[c].nopt), cases[c].want,
		             "%s (optind %d)", cases[c].line, cases[c].nopt);
	}
	cr_expect_eq(tmatch_place_srun_ntasks(0, NULL, 0), 0);
}

Test(placement_plan, maps_pairs_together_and_beats_packed)
{
	const int ranks[] = {0, 1, 2, 3};
	struct node_case c;
	tmatch_place_node_t *plan;

	case_init(&c, pairs4, "pack:2 core:2 pu:1", 1, ranks, 4, 4);
	plan = case_plan(&c);
	cr_assert_eq(plan->ntasks, 4);
	check_disjoint(plan);
	/* 0 and 3 share a package, so do 1 and 2. */
	cr_expect_eq(plan->task[0].leaf / 2, plan->task[3].leaf / 2);
	cr_expect_eq(plan->task[1].leaf / 2, plan->task[2].leaf / 2);
	cr_expect_lt(plan->cost, plan->cost_packed, "%g vs packed %g", plan->cost,
	             plan->cost_packed);
	for (int a = 0; a < 4; a++) {
		cr_expect_eq(plan->task[a].rank, a);
		cr_expect(strncmp(position(plan, a, TMATCH_AFFINITY_POS_FULL), "node=0/1", 8) == 0,
		          "%s", position(plan, a, TMATCH_AFFINITY_POS_FULL));
		cr_expect(strstr(position(plan, a, TMATCH_AFFINITY_POS_LEVELS), "package") != NULL,
		          "%s", position(plan, a, TMATCH_AFFINITY_POS_LEVELS));
	}
	tmatch_place_node_destroy(plan);
	case_fini(&c);
}

Test(placement_plan, same_inputs_same_plan)
{
	const int ranks[] = {0, 1, 2, 3, 4, 5, 6, 7};
	struct node_case c;
	tmatch_place_node_t *a, *b;

	case_init(&c, pairs8, "pack:2 core:4 pu:1", 1, ranks, 8, 8);
	a = case_plan(&c);
	b = case_plan(&c);
	for (int i = 0; i < 8; i++)
		cr_expect_eq(a->task[i].leaf, b->task[i].leaf);
	check_disjoint(a);
	tmatch_place_node_destroy(a);
	tmatch_place_node_destroy(b);
	case_fini(&c);
}

Test(placement_plan, second_node_uses_its_global_ranks)
{
	const int ranks[] = {4, 5, 6, 7};
	struct node_case c;
	tmatch_place_node_t *plan;

	case_init(&c, pairs8, "pack:2 core:2 pu:1", 1, ranks, 4, 8);
	c.info.node_name = "n2";
	c.info.node_index = 1;
	c.info.node_count = 2;
	plan = case_plan(&c);
	check_disjoint(plan);
	/* Within the node 4-6 and 5-7 talk: each pair on one package. */
	cr_expect_eq(plan->task[0].leaf / 2, plan->task[2].leaf / 2);
	cr_expect_eq(plan->task[1].leaf / 2, plan->task[3].leaf / 2);
	cr_expect_eq(plan->task[0].rank, 4);
	cr_expect_eq(plan->task[3].rank, 7);
	cr_expect(strncmp(position(plan, 0, TMATCH_AFFINITY_POS_FULL), "node=1/2", 8) == 0, "%s",
	          position(plan, 0, TMATCH_AFFINITY_POS_FULL));
	cr_expect_str_eq(plan->node_name, "n2");
	tmatch_place_node_destroy(plan);
	case_fini(&c);
}

Test(placement_plan, refuses_oversubscription_and_wrong_counts)
{
	const int ranks[] = {0, 1, 2, 3, 4, 5, 6, 7};
	const int dup[] = {0, 0};
	struct node_case c;
	tmatch_place_node_t *plan = NULL;

	case_init(&c, pairs8, "pack:1 core:2 pu:1", 1, ranks, 4, 8);
	errno = 0;
	cr_expect_eq(map_again(&c, &plan), -1);
	cr_expect_eq(errno, EOVERFLOW);
	cr_expect(strstr(c.err.msg, "slot(s)") != NULL, "%s", c.err.msg);
	cr_expect_null(plan);
	info_init(&c.info, ranks, 2, 6);
	cr_expect_eq(map_again(&c, &plan), -1);
	cr_expect(strstr(c.err.msg, "8") && strstr(c.err.msg, "6"), "%s", c.err.msg);
	info_init(&c.info, dup, 2, 8);
	cr_expect_eq(map_again(&c, &plan), -1);
	cr_expect(strstr(c.err.msg, "repeated") != NULL, "%s", c.err.msg);
	info_init(&c.info, ranks, 0, 8);
	errno = 0;
	cr_expect_eq(map_again(&c, &plan), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(plan);
	tmatch_place_node_destroy(NULL);
	case_fini(&c);
}

static const tmatch_place_env_t *find_env(const tmatch_place_env_t *env, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(env[i].name, name) == 0)
			return &env[i];
	return NULL;
}

Test(placement_plan, cpus_per_task_groups_and_openmp)
{
	const int ranks[] = {0, 1, 2, 3};
	struct node_case c;
	tmatch_place_node_t *plan;
	tmatch_place_env_t *env = NULL;
	const tmatch_place_env_t *e;
	int n;

	case_init(&c, pairs4, "pack:2 core:4 pu:1", 2, ranks, 4, 4);
	plan = case_plan(&c);
	check_disjoint(plan);
	for (int a = 0; a < 4; a++)
		cr_expect(strchr(cpus(plan, a), '-') || strchr(cpus(plan, a), ','),
		          "two CPUs per task: %s", cpus(plan, a));
	n = tmatch_place_task_env(plan, &c.cfg, 0, &env);
	cr_assert_gt(n, 0);
	e = find_env(env, n, "OMP_NUM_THREADS");
	cr_assert_not_null(e);
	cr_expect_str_eq(e->value, "2");
	cr_expect_eq(e->overwrite, 0, "the user's own setting wins");
	e = find_env(env, n, "OMP_PLACES");
	cr_assert_not_null(e);
	cr_expect_eq(e->value[0], '{');
	cr_expect(strstr(e->value, "},{") != NULL, "%s", e->value);
	cr_expect_not_null(find_env(env, n, "OMP_PROC_BIND"));
	e = find_env(env, n, "TREEMATCH_CPUS");
	cr_assert_not_null(e);
	cr_expect_str_eq(e->value, cpus(plan, 0));
	cr_expect_eq(e->overwrite, 1);
	tmatch_place_env_free(env, n);
	tmatch_place_node_destroy(plan);
	case_fini(&c);
}

Test(placement_plan, task_env_and_mpi_pinning)
{
	const int ranks[] = {0, 1, 2, 3};
	static const char *const mpi_vars[] = {"OMPI_MCA_hwloc_base_binding_policy",
	                                       "HYDRA_BINDING", "I_MPI_PIN", "MV2_ENABLE_AFFINITY"};
	struct node_case c;
	tmatch_place_node_t *plan;
	tmatch_place_env_t *env = NULL;
	int n;

	case_init(&c, pairs4, "pack:2 core:2 pu:1", 1, ranks, 4, 4);
	plan = case_plan(&c);
	n = tmatch_place_task_env(plan, &c.cfg, 2, &env);
	cr_expect_str_eq(find_env(env, n, "TREEMATCH_RANK")->value, "2");
	cr_expect_not_null(find_env(env, n, "TREEMATCH_POSITION"));
	cr_expect_not_null(find_env(env, n, "TREEMATCH_LEVELS"));
	cr_expect_not_null(find_env(env, n, "TREEMATCH_INDEX"));
	cr_expect_not_null(find_env(env, n, "TREEMATCH_COUNT"));
	cr_expect_null(find_env(env, n, "OMP_NUM_THREADS"), "no OpenMP without -c");
	for (size_t i = 0; i < 4; i++)
		cr_expect_null(find_env(env, n, mpi_vars[i]));
	cr_expect_eq(n, 9, "the nine TREEMATCH_ variables");
	tmatch_place_env_free(env, n);
	c.cfg.mpi_pin = 1;
	n = tmatch_place_task_env(plan, &c.cfg, 2, &env);
	for (size_t i = 0; i < 4; i++) {
		const tmatch_place_env_t *e = find_env(env, n, mpi_vars[i]);

		cr_assert_not_null(e, "%s", mpi_vars[i]);
		cr_expect_eq(e->overwrite, 0);
	}
	cr_expect_eq(n, 14, "and five for the MPIs");
	tmatch_place_env_free(env, n);
	c.cfg.dry_run = 1;
	n = tmatch_place_task_env(plan, &c.cfg, 2, &env);
	cr_expect_null(find_env(env, n, mpi_vars[0]), "nothing to keep in a dry run");
	cr_expect_str_eq(find_env(env, n, "TREEMATCH_DRY_RUN")->value, "1");
	tmatch_place_env_free(env, n);
	env = (tmatch_place_env_t *)1;
	errno = 0;
	cr_expect_eq(tmatch_place_task_env(plan, &c.cfg, 4, &env), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(env, (tmatch_place_env_t *)1, "output untouched on failure");
	cr_expect_eq(tmatch_place_task_env(NULL, &c.cfg, 0, &env), -1);
	cr_expect_eq(tmatch_place_task_env(plan, &c.cfg, 0, NULL), -1);
	tmatch_place_env_free(NULL, 0);
	tmatch_place_node_destroy(plan);
	case_fini(&c);
}

/* A placed node's search (given, cut from) and what its summary says of
   it (NULL: nothing). */
static void expect_search(const tmatch_place_node_t *plan, double given, double cut_from,
                          const char *said)
{
	const char *line = text_of(tmatch_place_summary_line(plan, 0));

	cr_expect_float_eq(plan->search_time, given, 1e-12);
	cr_expect_float_eq(plan->search_cut_from, cut_from, 1e-12);
	if (said)
		cr_expect(strstr(line, said), "%s", line);
	else
		cr_expect_null(strstr(line, "search_time"), "%s", line);
}

/* The search a node's default mapper was given, and the summary saying
   when the policy's search_time was cut to half of max_map_time (the
   user sees it with verbose); a named mapper searches nothing. */
Test(placement_plan, search_time_cut_is_said_in_the_summary)
{
	static const struct {
		double search;
		const char *mapper;
		double given, cut_from;
		const char *said;
	} cases[] = {
	    {30, "", 2, 30, ", search_time=30 s cut to 2 s (half of max_map_time)"},
	    {1.5, "", 1.5, 0, NULL},    /* within the half: as asked, nothing said */
	    {30, "greedy", 0, 0, NULL}, /* a named mapper: no search */
	};
	const int ranks[] = {0, 1, 2, 3};
	struct node_case c;

	case_init(&c, pairs4, "pack:2 core:2 pu:1", 1, ranks, 4, 4);
	c.cfg.max_map_time = 4;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tmatch_place_node_t *plan;

		c.cfg.search_time = cases[i].search;
		snprintf(c.cfg.mapper, sizeof(c.cfg.mapper), "%s", cases[i].mapper);
		plan = case_plan(&c);
		expect_search(plan, cases[i].given, cases[i].cut_from, cases[i].said);
		tmatch_place_node_destroy(plan);
	}
	case_fini(&c);
}

Test(placement_plan, lines_for_the_user)
{
	const int ranks[] = {0, 1, 2, 3};
	struct node_case c;
	tmatch_place_node_t *plan;
	const char *line;
	char want[1024];

	case_init(&c, pairs4, "pack:2 core:2 pu:1", 1, ranks, 4, 4);
	plan = case_plan(&c);
	line = text_of(tmatch_place_verbose_line(plan, 1, 4242, 0));
	snprintf(want, sizeof(want), "cpus %s mask %s set", cpus(plan, 1), cpumask(plan, 1));
	cr_expect(strncmp(line, "treematch: ", 11) == 0, "%s", line);
	cr_expect(strstr(line, "n0, task  1  1 [4242]") != NULL, "%s", line);
	cr_expect(strstr(line, want) != NULL, "%s", line);
	line = text_of(tmatch_place_verbose_line(plan, 1, 4242, 1));
	cr_expect(strstr(line, "not set (dry-run)") != NULL, "%s", line);
	line = text_of(tmatch_place_summary_line(plan, 0));
	cr_expect(strncmp(line, "treematch: n0: 4 task(s)", 24) == 0, "%s", line);
	cr_expect(strstr(line, "packed") != NULL, "%s", line);
	cr_expect_null(tmatch_place_verbose_line(plan, 9, 1, 0));
	cr_expect_null(tmatch_place_summary_line(NULL, 0));
	tmatch_place_node_destroy(plan);
	case_fini(&c);
}

/* ------------------------------------------------------------------------ */
/* SMT and oversubscription: the node tree for the node's task count, on a
   saved 2-socket Intel with 2 hardware threads per core. */

static void smt_opts(tmatch_affinity_opts_t *o, const char *cores, int cpt)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/tests/fixtures/affinity/intel-2s-14c-smt.xml",
	         TMATCH_SRCDIR);
	tmatch_affinity_opts_init(o);
	o->source = TMATCH_AFFINITY_SRC_XML;
	o->input = path;
	o->alloc_cores = cores;
	o->cpus_per_task = cpt;
	o->node_name = "n0";
}

Test(placement_plan, smt_policy_follows_the_task_count)
{
	static const struct {
		const char *cores; /* S_STEP_ALLOC_CORES */
		int cpt, nlocal;
		int smt;         /* expected policy, -1 = EOVERFLOW */
		int slots;       /* of the tree chosen */
		int cpus;        /* CPUs per slot */
		const char *msg; /* expected in the error */
	} cases[] = {
	    {"0-1", 1, 1, TMATCH_AFFINITY_SMT_CORE, 2, 2, NULL},
	    {"0-1", 1, 2, TMATCH_AFFINITY_SMT_CORE, 2, 2, NULL},
	    {"0-1", 1, 3, TMATCH_AFFINITY_SMT_ALL, 4, 1, NULL},
	    {"0-1", 1, 4, TMATCH_AFFINITY_SMT_ALL, 4, 1, NULL},
	    {"0-1", 1, 5, -1, 0, 0, "node n0: 5 tasks for 4 CPUs: "},
	    {"0", 1, 8, -1, 0, 0, "node n0: 8 tasks for 2 CPUs: "},
	    {"0", 2, 2, -1, 0, 0, "node n0: 2 tasks of 2 CPUs for 2 CPUs: "},
	    {"0-27", 1, 28, TMATCH_AFFINITY_SMT_CORE, 28, 2, NULL},
	    {"0-27", 1, 56, TMATCH_AFFINITY_SMT_ALL, 56, 1, NULL},
	    {"0-27", 1, 57, -1, 0, 0, "node n0: 57 tasks for 56 CPUs: "},
	    {"0-1", 2, 2, TMATCH_AFFINITY_SMT_ALL, 2, 2, NULL},
	    {"0-1", 2, 3, -1, 0, 0, "node n0: 3 tasks of 2 CPUs for 4 CPUs: "},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tmatch_affinity_opts_t o;
		tmatch_affinity_tree_t *t;
		tmatch_error_t err;
		int smt = 99;

		smt_opts(&o, cases[i].cores, cases[i].cpt);
		errno = 0;
		t = tmatch_place_node_tree(&o, cases[i].nlocal, &smt, &err);
		if (cases[i].smt < 0) {
			cr_expect_null(t, "case %zu", i);
			cr_expect_eq(errno, EOVERFLOW, "case %zu", i);
			cr_expect(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
			          "case %zu: '%s', want '%s...'", i, err.msg, cases[i].msg);
			cr_expect(strstr(err.msg, "oversubscribed") != NULL, "%s", err.msg);
			cr_expect_null(strchr(err.msg, '\n'), "one line: %s", err.msg);
			cr_expect_eq(smt, 99, "case %zu: output untouched on failure", i);
			tmatch_affinity_tree_destroy(t);
			continue;
		}
		cr_assert_not_null(t, "case %zu: %s", i, err.msg);
		cr_expect_eq(smt, cases[i].smt, "case %zu", i);
		cr_expect_eq(tmatch_affinity_tree_nb_slots(t), cases[i].slots, "case %zu", i);
		for (int l = 0, k = 0; l < tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(t));
		     l++) {
			const char *list;

			if (!tmatch_affinity_leaf_is_real(t, l))
				continue;
			list =
			    text_of(tmatch_affinity_cpuset_list(tmatch_affinity_leaf_cpuset(t, l)));
			cr_expect_eq(count_list(list), cases[i].cpus, "case %zu slot %d: %s", i,
			             k++, list);
		}
		tmatch_affinity_tree_destroy(t);
	}
}

Test(placement_plan, node_tree_bad_arguments)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;

	smt_opts(&o, "0-1", 1);
	errno = 0;
	cr_expect_null(tmatch_place_node_tree(NULL, 2, NULL, &err));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tmatch_place_node_tree(&o, 0, NULL, &err));
	cr_expect_eq(errno, EINVAL);
	o.input = "/nonexistent/topology.xml";
	cr_expect_null(tmatch_place_node_tree(&o, 2, NULL, &err));
	cr_expect_neq(err.msg[0], '\0');
}

/* 4 tasks on 2 SMT cores: one hardware thread each, and the pairs that talk
   (0-3, 1-2) share a core. */
Test(placement_plan, smt_plan_pairs_share_a_core)
{
	const int ranks[] = {0, 1, 2, 3};
	tmatch_affinity_opts_t o;
	struct node_case c;
	tmatch_place_node_t *plan;
	int smt = -1;

	smt_opts(&o, "0-1", 1);
	c.p = load(pairs4);
	c.t = tmatch_place_node_tree(&o, 4, &smt, &c.err);
	cr_assert_not_null(c.t, "%s", c.err.msg);
	cr_expect_eq(smt, TMATCH_AFFINITY_SMT_ALL);
	tmatch_config_init(&c.cfg);
	info_init(&c.info, ranks, 4, 4);
	c.info.cfg = &c.cfg;
	c.info.profile = c.p;
	plan = case_plan(&c);
	check_disjoint(plan);
	for (int a = 0; a < 4; a++)
		cr_expect_eq(count_list(cpus(plan, a)), 1, "%s", cpus(plan, a));
	cr_expect_eq(plan->task[0].leaf / 2, plan->task[3].leaf / 2);
	cr_expect_eq(plan->task[1].leaf / 2, plan->task[2].leaf / 2);
	/* Core 0 is PUs 0 and 28, core 1 PUs 1 and 29. */
	cr_expect(strcmp(cpus(plan, 0), cpus(plan, 3)) != 0);
	cr_expect_eq(atoi(cpus(plan, 0)) % 28, atoi(cpus(plan, 3)) % 28, "%s %s", cpus(plan, 0),
	             cpus(plan, 3));
	cr_expect_eq(atoi(cpus(plan, 1)) % 28, atoi(cpus(plan, 2)) % 28, "%s %s", cpus(plan, 1),
	             cpus(plan, 2));
	tmatch_place_node_destroy(plan);
	case_fini(&c);
}

/* The node list comes from the job's environment: trusted only when it names
   exactly the step's node count, checked before anything is expanded. */
Test(plan, nodelist_checked_against_the_node_count)
{
	char *name;

	cr_assert_str_eq(tmatch_place_checked_nodelist("n[1-2]", 2), "n[1-2]");
	cr_assert_null(tmatch_place_checked_nodelist("n[0-999999]", 2));
	cr_assert_null(tmatch_place_checked_nodelist("n[1-3]", 2));
	cr_assert_null(tmatch_place_checked_nodelist("n[1-", 2));
	cr_assert_null(tmatch_place_checked_nodelist(NULL, 2));
	name = tmatch_place_node_name("n[1-2]", 1, 2);
	cr_assert_str_eq(name, "n2");
	free(name);
	name = tmatch_place_node_name("n[0-999999]", 1, 2); /* forged: not expanded */
	cr_assert_str_eq(name, "localhost");
	free(name);
}
