/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_config.c - `treematch config check`: a site's configuration of the
 * plugin read as the plugin reads it, every problem with FILE:LINE:COLUMN,
 * before it is deployed (placement/site.c does the checking).
 */
#include "cli/cli.h"
#include "placement/site.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: treematch config check [PLUGSTACK_FILE] [--slurm-conf FILE]\n"
	        "                              [--topology-conf FILE]\n"
	        "\n"
	        "Reads the plugin stack (default: PlugStackConfig of slurm.conf, else\n"
	        "plugstack.conf beside it) and the files it includes, the line that loads\n"
	        "treematch.so and its arguments, the admin file, the site's default\n"
	        "profile, topology XML and store, and topology.conf, as the plugin will.\n"
	        "Prints each problem as FILE:LINE:COLUMN: what to fix, and exits 1 when\n"
	        "there is one, 0 when the plugin will read it all.\n"
	        "  --slurm-conf FILE     the slurm.conf to start from (default: $SLURM_CONF,\n"
	        "                        else /etc/slurm/slurm.conf)\n"
	        "  --topology-conf FILE  topology.conf (default: beside slurm.conf, if any)\n");
}

static void print_problem(void *arg, const tmatch_error_t *problem)
{
	(void)arg;
	tmatch_cli_report(problem);
}

static int check(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"slurm-conf", required_argument, NULL, 'S'},
	    {"topology-conf", required_argument, NULL, 'T'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *slurm_conf = getenv("SLURM_CONF"), *tconf = NULL, *stack = NULL;
	tmatch_place_site_t site;
	tmatch_error_t err;
	char policy[2048];
	int c, n;

	optind = 1;
	opterr = 0;
	while ((c = tmatch_cli_getopt(argc, argv, "h", longopts)) != -1) {
		switch (c) {
		case 'S':
			slurm_conf = optarg;
			break;
		case 'T':
			tconf = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return tmatch_cli_bad_option("config check", argv, "h", longopts);
		}
	}
	if (optind < argc)
		stack = argv[optind++];
	if (optind < argc) {
		tmatch_cli_error("config check: one plugin stack file at most, not '%s' too",
		                 argv[optind]);
		tmatch_cli_usage_hint("config check");
		return 2;
	}
	tmatch_error_clear(&err);
	n = tmatch_place_site_check(stack, slurm_conf, tconf, print_problem, NULL, &site, &err);
	if (n < 0) {
		tmatch_cli_report(&err);
		return 1;
	}
	printf("plugin stack: %s\n", site.plugstack);
	if (site.nlines > 0) {
		tmatch_config_format(&site.cfg, policy, sizeof(policy));
		printf("line: %s:%d: %s %s\n", site.line_file, site.line,
		       site.required ? "required" : "optional", site.plugin);
		printf("admin file: %s\n", site.admin_file[0] ? site.admin_file : "none");
		printf("policy: %s\n", policy);
	}
	printf("topology.conf: %s\n", site.topology_conf[0] ? site.topology_conf : "none");
	if (n > 0) {
		tmatch_cli_error("config check: %d problem%s", n, n == 1 ? "" : "s");
		return 1;
	}
	printf("problems: none\n");
	return 0;
}

int tmatch_cli_config(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return check(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	tmatch_cli_error("config: expected the subcommand 'check'");
	tmatch_cli_usage_hint("config");
	return 2;
}
