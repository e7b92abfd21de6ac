/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_plan.c - `treematch plan`: look into a compiled step plan (made by
 * `treematch layout --plan`) the way a node does.
 *
 *   plan show FILE              what the plan is bound to, one node's slice
 *                               looked up with --node
 *   plan node FILE NODE         that node's placement from its slice alone,
 *                               exactly as the plugin computes it (dry run)
 *   plan check FILE PROFILE     whether the profile is still the one planned
 *                               (size, modification time and content)
 */
#include "cli/cli.h"
#include "cli/json.h"
#include "placement/env.h"
#include "placement/node.h"
#include "placement/plan.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char show_usage[] =
    "usage: treematch plan show FILE [--node NAME] [--json]\n"
    "\n"
    "What a compiled step plan is bound to (job, step, tasks, nodes, the profile's\n"
    "size, time and content, the node model) and, with --node, that node's slice.\n"
    "\n"
    "      --node NAME   also print NAME's ranks and their leaves\n"
    "      --json        the same as one JSON document (treematch(1))\n"
    "  -h, --help        this help\n";

static const char node_usage[] =
    "usage: treematch plan node FILE NAME [--topology SPEC] [--cpus-per-task N]\n"
    "\n"
    "NAME's placement from its slice of the plan alone, exactly as the plugin\n"
    "computes it on that node, printed as the plugin's verbose lines (nothing is\n"
    "bound).\n"
    "\n"
    "  -t, --topology SPEC       the node's tree: synthetic:..., xml:FILE or local\n"
    "                            (default local)\n"
    "  -c, --cpus-per-task N     CPUs per task (default 1)\n"
    "  -h, --help                this help\n";

static const char check_usage[] =
    "usage: treematch plan check FILE PROFILE\n"
    "\n"
    "Whether PROFILE is still the one the plan was made from (size, modification\n"
    "time, content); exit status 1 when not.\n"
    "\n"
    "  -h, --help   this help\n";

static void usage(FILE *out)
{
	fputs("usage: treematch plan show FILE [--node NAME]\n"
	      "usage: treematch plan node FILE NAME [--topology SPEC] [--cpus-per-task N]\n"
	      "usage: treematch plan check FILE PROFILE\n"
	      "\n"
	      "A compiled step plan (treematch layout --plan) holds, per node, its ranks,\n"
	      "their leaves, its switch position and the traffic among its ranks; each node's\n"
	      "plugin reads only its own slice. treematch plan COMMAND --help for each.\n",
	      out);
}

/* The plan's header (slice NULL) or node's slice. 0, or 1 with the message. */
static int open_plan(const char *path, const char *node, tmatch_place_plan_bind_t *bind,
                     uint32_t *nnodes, tmatch_place_slice_t **slice)
{
	tmatch_error_t err;
	FILE *f;
	int rc;

	tmatch_error_clear(&err);
	if (!(f = tmatch_file_open(path, NULL, &err))) {
		tmatch_cli_report(&err);
		return 1;
	}
	rc = tmatch_place_plan_read_head(fileno(f), path, bind, nnodes, &err);
	if (rc == 0 && slice)
		rc = (*slice = tmatch_place_plan_read_slice(fileno(f), path, node, &err)) ? 0 : -1;
	fclose(f);
	if (rc < 0)
		tmatch_cli_report(&err);
	return rc < 0;
}

static void print_bind(const tmatch_place_plan_bind_t *b, uint32_t nnodes)
{
	printf("job: %llu\n", (unsigned long long)b->job_id);
	if (b->step_id == TMATCH_PLAN_ANY_STEP)
		printf("step: any\n");
	else
		printf("step: %u\n", b->step_id);
	printf("tasks: %u\nnodes: %u\nmapper: %s\n", b->ntasks, nnodes, b->mapper);
	{
		time_t t = (time_t)(b->profile_mtime_ns / 1000000000ULL);
		char when[64] = "?";
		struct tm tm;

		/* the local time, to the nanosecond the plan compares */
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		printf("profile: %llu bytes, modified %s.%09llu",
		       (unsigned long long)b->profile_size, when,
		       (unsigned long long)(b->profile_mtime_ns % 1000000000ULL));
		if (localtime_r(&t, &tm) && strftime(when, sizeof(when), " %z", &tm))
			fputs(when, stdout);
		printf(", content %016llx\n", (unsigned long long)b->profile_hash);
	}
	printf("node model: %016llx\n", (unsigned long long)b->node_sig);
}

/* The options of show and check: --node and --json (show only) and --help; the
   positional arguments left in argv[optind..]. 0, 1 after --help, 2. */
static int plan_options(const char *command, int argc, char **argv, const char *help,
                        const char **node, int *json)
{
	enum { O_NODE = 256, O_JSON };
	static const struct option longopts[] = {
	    {"node", required_argument, NULL, O_NODE},
	    {"json", no_argument, NULL, O_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *shortopts = "h";
	int c;

	optind = 1;
	opterr = 0;
	while ((c = tmatch_cli_getopt(argc, argv, shortopts, node ? longopts : longopts + 2)) !=
	       -1) {
		if (c == O_NODE && node) {
			*node = optarg;
		} else if (c == O_JSON && json) {
			*json = 1;
		} else if (c == 'h') {
			fputs(help, stdout);
			return 1;
		} else {
			return tmatch_cli_bad_option(command, argv, shortopts, longopts);
		}
	}
	return 0;
}

/* plan show --json: the header and, with --node, the slice. */
static int show_json(const char *path, const tmatch_place_plan_bind_t *b, uint32_t nnodes,
                     const tmatch_place_slice_t *s)
{
	time_t t = (time_t)(b->profile_mtime_ns / 1000000000ULL);
	char when[64] = "", hex[20];
	tmatch_cli_json_t j;
	struct tm tm;

	tmatch_cli_json_init(&j, stdout);
	tmatch_cli_json_object(&j, NULL);
	tmatch_cli_json_string(&j, "plan", path);
	tmatch_cli_json_int(&j, "job", (long long)b->job_id);
	if (b->step_id == TMATCH_PLAN_ANY_STEP)
		tmatch_cli_json_null(&j, "step");
	else
		tmatch_cli_json_int(&j, "step", b->step_id);
	tmatch_cli_json_int(&j, "tasks", b->ntasks);
	tmatch_cli_json_int(&j, "nodes", nnodes);
	tmatch_cli_json_string(&j, "mapper", b->mapper);
	tmatch_cli_json_object(&j, "profile");
	tmatch_cli_json_int(&j, "bytes", (long long)b->profile_size);
	/* UTC to the nanosecond the plan compares */
	if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%09lluZ",
		         (unsigned long long)(b->profile_mtime_ns % 1000000000ULL));
	tmatch_cli_json_string(&j, "modified", when[0] ? when : NULL);
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)b->profile_hash);
	tmatch_cli_json_string(&j, "content", hex);
	tmatch_cli_json_end(&j);
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)b->node_sig);
	tmatch_cli_json_string(&j, "node_model", hex);
	if (!s) {
		tmatch_cli_json_null(&j, "slice");
	} else {
		tmatch_cli_json_object(&j, "slice");
		tmatch_cli_json_string(&j, "node", s->node);
		tmatch_cli_json_int(&j, "traffic_entries",
		                    (long long)(tmatch_comm_nnz(s->comm) / 2));
		tmatch_cli_json_array(&j, "ranks");
		for (int i = 0; i < s->nranks; i++) {
			tmatch_cli_json_object(&j, NULL);
			tmatch_cli_json_int(&j, "rank", s->rank[i]);
			tmatch_cli_json_int(&j, "leaf", s->leaf[i]);
			tmatch_cli_json_end(&j);
		}
		tmatch_cli_json_end(&j);
		tmatch_cli_json_end(&j);
	}
	tmatch_cli_json_end(&j);
	return tmatch_cli_output_close(stdout, "-") < 0;
}

static int show(int argc, char **argv)
{
	tmatch_place_plan_bind_t bind;
	tmatch_place_slice_t *s = NULL;
	const char *node = NULL;
	uint32_t nnodes;
	int rc, json = 0;
	const char *path;

	if ((rc = plan_options("plan show", argc, argv, show_usage, &node, &json)))
		return rc == 1 ? 0 : rc;
	if (argc - optind != 1) {
		tmatch_cli_error("plan show: give one plan FILE");
		tmatch_cli_usage_hint("plan show");
		return 2;
	}
	argv += optind - 1;
	if (!(path = tmatch_cli_input(argv[1], "FILE")) ||
	    open_plan(path, node, &bind, &nnodes, node ? &s : NULL))
		return 1;
	if (json) {
		rc = show_json(argv[1], &bind, nnodes, s);
		tmatch_place_slice_destroy(s);
		return rc;
	}
	printf("plan: %s\n", argv[1]);
	print_bind(&bind, nnodes);
	if (!s)
		return 0;
	printf("slice: %s, %d ranks, %zu traffic entries\n", s->node, s->nranks,
	       tmatch_comm_nnz(s->comm) / 2);
	for (int i = 0; i < s->nranks; i++)
		printf("rank %d leaf %d\n", s->rank[i], s->leaf[i]);
	tmatch_place_slice_destroy(s);
	return 0;
}

static int node(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"topology", required_argument, NULL, 't'},
	    {"cpus-per-task", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *topology = "local", *path;
	tmatch_place_node_in_t in;
	tmatch_place_node_t *res = NULL;
	tmatch_place_slice_t *s = NULL;
	tmatch_place_plan_bind_t bind;
	tmatch_config_t cfg;
	tmatch_error_t err;
	uint64_t num;
	int c, cpt = 1, rc = 1;
	uint32_t nnodes;
	char *line;

	optind = 1;
	opterr = 0;
	while ((c = tmatch_cli_getopt(argc, argv, "t:c:h", longopts)) != -1) {
		if (c == 't') {
			topology = optarg;
		} else if (c == 'c') {
			if (tmatch_cli_number(optarg, 1 << 20, &num) < 0 || num < 1) {
				tmatch_cli_error("plan node: --cpus-per-task wants a positive "
				                 "integer, not '%s'",
				                 optarg);
				return 2;
			}
			cpt = (int)num;
		} else if (c == 'h') {
			fputs(node_usage, stdout);
			return 0;
		} else {
			return tmatch_cli_bad_option("plan node", argv, "t:c:h", longopts);
		}
	}
	if (argc - optind != 2) {
		tmatch_cli_error("plan node: give the plan FILE and the node NAME");
		tmatch_cli_usage_hint("plan node");
		return 2;
	}
	if (!(path = tmatch_cli_input(argv[optind], "FILE")) ||
	    open_plan(path, argv[optind + 1], &bind, &nnodes, &s) || !s)
		return 1;
	tmatch_error_clear(&err);
	tmatch_config_init(&cfg);
	cfg.dry_run = 1;
	memset(&in, 0, sizeof(in));
	in.cfg = &cfg;
	in.slice = s;
	in.user_profile = 1;
	in.node_name = s->node;
	in.node_count = 1;
	in.ranks = s->rank; /* Slurm starts them in rank order on the node */
	in.nlocal = s->nranks;
	in.ntasks_total = (int)s->bind.ntasks;
	in.cpus_per_task = cpt;
	in.topology = topology;
	in.log = tmatch_cli_log;
	if (tmatch_place_node(&in, &res, NULL, &err) < 0) {
		tmatch_cli_report(&err);
		goto out;
	}
	if (res->status != TMATCH_PLACE_PLACED) {
		printf("treematch: %s\n", res->why);
		rc = 0;
		goto out;
	}
	if ((line = tmatch_place_summary_line(res, 1))) {
		puts(line);
		free(line);
	}
	for (int i = 0; i < res->ntasks; i++)
		if ((line = tmatch_place_verbose_line(res, i, 0, 1))) {
			puts(line);
			free(line);
		}
	rc = 0;
out:
	tmatch_place_node_destroy(res);
	tmatch_place_slice_destroy(s);
	return rc;
}

static int check(int argc, char **argv)
{
	tmatch_place_plan_bind_t plan, now;
	tmatch_error_t err;
	uint32_t nnodes;
	FILE *f;

	int rc;

	if ((rc = plan_options("plan check", argc, argv, check_usage, NULL, NULL)))
		return rc == 1 ? 0 : rc;
	if (argc - optind != 2) {
		tmatch_cli_error("plan check: give the plan FILE and the PROFILE");
		tmatch_cli_usage_hint("plan check");
		return 2;
	}
	argv += optind - 1;
	if (open_plan(argv[1], NULL, &plan, &nnodes, NULL))
		return 1;
	memset(&now, 0, sizeof(now));
	tmatch_error_clear(&err);
	f = tmatch_file_open(argv[2], NULL, &err);
	if (!f || tmatch_place_profile_stamp(fileno(f), argv[2], plan.version, &now.profile_size,
	                                     &now.profile_mtime_ns, &now.profile_hash, &err) < 0) {
		if (f)
			fclose(f);
		tmatch_cli_report(&err);
		return 1;
	}
	fclose(f);
	if (now.profile_hash != plan.profile_hash || now.profile_size != plan.profile_size) {
		printf("%s: not the profile planned: its content differs\n", argv[2]);
		return 1;
	}
	if (now.profile_mtime_ns != plan.profile_mtime_ns) {
		printf("%s: the content planned, but modified since: nodes will not use the plan "
		       "(make it again, or restore the time with touch -d)\n",
		       argv[2]);
		return 1;
	}
	printf("%s: the profile planned (same size, time and content)\n", argv[2]);
	return 0;
}

int tmatch_cli_plan(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "show"))
		return show(argc - 1, argv + 1);
	if (!strcmp(argv[1], "node"))
		return node(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return check(argc - 1, argv + 1);
	tmatch_cli_error("unknown plan command '%s'", argv[1]);
	tmatch_cli_usage_hint("plan");
	return 2;
}
