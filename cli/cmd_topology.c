/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_topology.c - `treematch topology show`: the tree of a node (live, XML,
 * synthetic) or of a step's nodes under topology.conf switches, with its
 * levels, arities, CPU sets and leaf positions, and a node's GPUs and
 * network cards with their locality and the links between GPUs.
 */
#include "cli/cli.h"
#include "placement/placement.h"
#include "affinity/affinity.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* A tleaf tree (no CPUs, costs): its levels and where each leaf sits, in
   the form of the other trees' description. */
static int show_tleaf(const char *spec)
{
	tmatch_error_t err;
	tmatch_topo_t *topo;
	char tleaf[1024];
	int depth, nleaves;

	tmatch_error_clear(&err);
	if (!(topo = tmatch_place_topo_load(spec, &err)))
		return tmatch_cli_report_value("--topology", spec, &err);
	depth = tmatch_topo_depth(topo);
	nleaves = tmatch_topo_nb_leaves(topo);
	tmatch_topo_format(topo, tleaf, sizeof(tleaf));
	printf("tree: %d levels, %d leaves, %d usable (a tleaf: costs, no CPUs)\n", depth, nleaves,
	       tmatch_topo_nb_allowed(topo));
	printf("tleaf: %s\n", tleaf);
	for (int l = 0; l < depth; l++)
		printf("level %d: arity %d\n", l, tmatch_topo_arity(topo, l));
	printf("level %d: (leaves)\n", depth);
	for (int leaf = 0; leaf < nleaves; leaf++) {
		int below = nleaves;

		printf("leaf %d: at ", leaf);
		for (int l = 0; l < depth; l++) {
			int a = tmatch_topo_arity(topo, l);

			below /= a;
			printf("%slevel%d=%d/%d", l ? "," : "", l, leaf / below % a, a);
		}
		putchar('\n');
	}
	tmatch_topo_destroy(topo);
	return 0;
}

/* The forms of an affinity tree (with CPUs); anything else is a tleaf. */
static int has_cpus(const char *spec)
{
	return !strncmp(spec, "synthetic:", 10) || !strncmp(spec, "xml:", 4) ||
	       !strcmp(spec, "local") || !strncmp(spec, "cluster:", 8);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: treematch topology show [--xml FILE | --synthetic DESC | local]\n"
	             "                               [--topology-conf FILE] [--nodes LIST]\n"
	             "                               [--restrict CPULIST] [--alloc-cores LIST]\n"
	             "                               [--cpus-per-task N] [--smt one|core|all]\n"
	             "       treematch topology show --topology SPEC   (synthetic:, xml:, local, "
	             "cluster:)\n"
	             "\n"
	             "Prints the tree the mapper sees: one line per level (name, arity), the\n"
	             "allowed CPUs of each node, and one line per usable leaf (node, CPU list,\n"
	             "mask as Slurm prints them, position at every hardware level).\n"
	             "A node's GPUs and network cards follow, from hwloc's PCI and OS devices:\n"
	             "each with the CPUs it is closest to, its package and NUMA node, a GPU's\n"
	             "island (GPUs joined by NVLink or xGMI) and nearest card, and the link\n"
	             "matrices hwloc has (NVLinkBandwidth, XGMIBandwidth, XGMIHops).\n"
	             "--nodes alone gives one flat switch over the nodes.\n");
}

/* The node's GPUs and network cards, when it has any. */
static int show_devices(const tmatch_affinity_tree_t *tree)
{
	tmatch_affinity_devices_t *dev;
	tmatch_error_t err;
	char *text;
	int len;

	tmatch_error_clear(&err);
	if (!(dev = tmatch_affinity_tree_devices(tree, 0, &err)))
		return tmatch_cli_report(&err), -1;
	len = tmatch_affinity_devices_describe(dev, NULL, 0);
	if (len > 0 && (text = malloc((size_t)len + 1))) {
		tmatch_affinity_devices_describe(dev, text, (size_t)len + 1);
		fputs(text, stdout);
		free(text);
	} else if (len > 0) {
		tmatch_cli_error("out of memory");
		len = -1;
	}
	tmatch_affinity_devices_destroy(dev);
	return len < 0 ? -1 : 0;
}

int tmatch_cli_topology(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"xml", required_argument, NULL, 'x'},
	    {"synthetic", required_argument, NULL, 's'},
	    {"topology", required_argument, NULL, 't'},
	    {"topology-conf", required_argument, NULL, 'c'},
	    {"nodes", required_argument, NULL, 'n'},
	    {"restrict", required_argument, NULL, 'r'},
	    {"alloc-cores", required_argument, NULL, 'a'},
	    {"cpus-per-task", required_argument, NULL, 'p'},
	    {"smt", required_argument, NULL, 'm'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	tmatch_affinity_opts_t opts;
	tmatch_affinity_tree_t *tree = NULL;
	tmatch_error_t err;
	const char *conf = NULL, *nodes = NULL;
	char *spec = NULL, *text = NULL;
	int c, rc = 1, len;
	uint64_t num;

	tmatch_affinity_opts_init(&opts);
	opts.smt = -1; /* not given: as the plugin binds */
	memset(&err, 0, sizeof(err));
	if (argc < 2 || strcmp(argv[1], "show") != 0) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage(stdout);
			return 0;
		}
		tmatch_cli_error("topology: expected the subcommand 'show'");
		tmatch_cli_usage_hint("topology");
		return 2;
	}
	argc--;
	argv++;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		char *s = NULL;
		switch (c) {
		case 'x':
		case 's':
		case 't':
			if (spec) {
				tmatch_cli_error("topology show: give one of --xml, --synthetic, "
				                 "--topology or local");
				goto usage;
			}
			if (c == 't') {
				s = strdup(optarg);
			} else {
				size_t l = strlen(optarg) + 16;
				s = malloc(l);
				if (s)
					snprintf(s, l, "%s:%s", c == 'x' ? "xml" : "synthetic",
					         optarg);
			}
			if (!s) {
				tmatch_cli_error("out of memory");
				goto out;
			}
			spec = s;
			break;
		case 'c':
			conf = optarg;
			break;
		case 'n':
			nodes = optarg;
			break;
		case 'r':
			opts.restrict_cpus = optarg;
			break;
		case 'a':
			opts.alloc_cores = optarg;
			break;
		case 'p':
			if (tmatch_cli_number(optarg, 1 << 20, &num) < 0 || num < 1) {
				tmatch_cli_error(
				    "--cpus-per-task wants a positive integer, not '%s'", optarg);
				goto usage;
			}
			opts.cpus_per_task = (int)num;
			break;
		case 'm':
			if (tmatch_affinity_smt_parse(optarg, &opts.smt, &err) < 0) {
				tmatch_cli_error("--smt: %s", err.msg);
				goto usage;
			}
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto out;
		default:
			rc = tmatch_cli_bad_option("topology show", argv, "h", longopts);
			goto out;
		}
	}
	for (; optind < argc; optind++) {
		if (!strcmp(argv[optind], "local") && !spec) {
			spec = strdup("local");
			if (!spec) {
				tmatch_cli_error("out of memory");
				goto out;
			}
			continue;
		}
		tmatch_cli_error("topology show: unexpected argument '%s'", argv[optind]);
		goto usage;
	}
	if (!spec && !(spec = strdup("local"))) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	if (conf && !nodes) {
		tmatch_cli_error("--topology-conf needs --nodes LIST (the step's nodes)");
		goto usage;
	}
	opts.io = 1; /* the GPUs and network cards too */
	if (opts.smt < 0)
		opts.smt = tmatch_place_smt_policy(opts.cpus_per_task);
	if (!has_cpus(spec) && !conf && !nodes) {
		rc = show_tleaf(spec);
		goto out;
	}
	tree = tmatch_place_tree_load(spec, &opts, conf, nodes, &err);
	if (!tree) {
		char buf[1024];
		tmatch_cli_error("%s", tmatch_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	len = tmatch_affinity_tree_describe(tree, NULL, 0);
	text = malloc((size_t)len + 1);
	if (!text) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	tmatch_affinity_tree_describe(tree, text, (size_t)len + 1);
	fputs(text, stdout);
	if (tmatch_affinity_tree_nb_nodes(tree) == 1 && show_devices(tree) < 0)
		goto out;
	rc = 0;
	goto out;
usage:
	tmatch_cli_usage_hint("topology show");
	rc = 2;
out:
	free(text);
	free(spec);
	tmatch_affinity_tree_destroy(tree);
	return rc;
}
