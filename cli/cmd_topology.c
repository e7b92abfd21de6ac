/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_topology.c - `treematch topology show`: the tree of a node (live, XML,
 * synthetic) or of a step's nodes under topology.conf switches, with its
 * levels, arities, CPU sets and leaf positions, and a node's GPUs and
 * network cards with their locality and the links between GPUs.
 */
#include "cli/cli.h"
#include "cli/json.h"
#include "placement/inputs.h"
#include "placement/node.h"
#include "affinity/affinity.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* The levels of a topo into the JSON document (the leaves' level named
   `leaf`). */
static void json_levels(tmatch_cli_json_t *j, const tmatch_topo_t *topo, const char *leaf)
{
	int depth = tmatch_topo_depth(topo);

	tmatch_cli_json_array(j, "levels");
	for (int l = 0; l <= depth; l++) {
		const char *name = l < depth ? tmatch_topo_level_name(topo, l) : leaf;

		tmatch_cli_json_object(j, NULL);
		tmatch_cli_json_int(j, "depth", l);
		tmatch_cli_json_string(j, "name", name && *name ? name : NULL);
		if (l < depth)
			tmatch_cli_json_int(j, "arity", tmatch_topo_arity(topo, l));
		else
			tmatch_cli_json_null(j, "arity");
		tmatch_cli_json_end(j);
	}
	tmatch_cli_json_end(j);
}

/* The head of both documents: the tleaf string and the leaf counts. */
static void json_head(tmatch_cli_json_t *j, const tmatch_topo_t *topo, int usable)
{
	char tleaf[1024];

	tmatch_topo_format(topo, tleaf, sizeof(tleaf));
	tmatch_cli_json_init(j, stdout);
	tmatch_cli_json_object(j, NULL);
	tmatch_cli_json_string(j, "tleaf", tleaf);
	tmatch_cli_json_int(j, "leaf_count", tmatch_topo_nb_leaves(topo));
	tmatch_cli_json_int(j, "usable_leaves", usable);
}

/* --json of a tleaf: its levels and each leaf's position. */
static int json_tleaf(const tmatch_topo_t *topo)
{
	int depth = tmatch_topo_depth(topo), nleaves = tmatch_topo_nb_leaves(topo);
	tmatch_cli_json_t j;

	json_head(&j, topo, tmatch_topo_nb_allowed(topo));
	json_levels(&j, topo, "leaf");
	tmatch_cli_json_array(&j, "nodes");
	tmatch_cli_json_end(&j);
	tmatch_cli_json_array(&j, "leaves");
	for (int leaf = 0; leaf < nleaves; leaf++) {
		int below = nleaves;

		tmatch_cli_json_object(&j, NULL);
		tmatch_cli_json_int(&j, "leaf", leaf);
		tmatch_cli_json_null(&j, "node");
		tmatch_cli_json_null(&j, "cpus");
		tmatch_cli_json_null(&j, "mask");
		tmatch_cli_json_array(&j, "position");
		for (int l = 0; l < depth; l++) {
			int a = tmatch_topo_arity(topo, l);
			char name[24];

			below /= a;
			snprintf(name, sizeof(name), "level%d", l);
			tmatch_cli_json_object(&j, NULL);
			tmatch_cli_json_string(&j, "level", name);
			tmatch_cli_json_int(&j, "index", leaf / below % a);
			tmatch_cli_json_int(&j, "count", a);
			tmatch_cli_json_end(&j);
		}
		tmatch_cli_json_end(&j);
		tmatch_cli_json_end(&j);
	}
	tmatch_cli_json_end(&j);
	tmatch_cli_json_end(&j);
	return tmatch_cli_output_close(stdout, "-") < 0;
}

/* --json of a tree with CPUs: levels, nodes and their allowed CPUs, every
   usable leaf with its node, CPUs and position. */
static int json_tree(const tmatch_affinity_tree_t *tree)
{
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(tree);
	int nleaves = tmatch_topo_nb_leaves(topo), rc = 0;
	tmatch_cli_json_t j;

	json_head(&j, topo, tmatch_affinity_tree_nb_slots(tree));
	{
		/* the leaves' level: the last of a real leaf's position */
		tmatch_affinity_pos_t first;
		const char *leaf_level = NULL;

		for (int leaf = 0; leaf < nleaves && !leaf_level; leaf++)
			if (tmatch_affinity_leaf_is_real(tree, leaf) &&
			    tmatch_affinity_leaf_position(tree, leaf, &first, NULL) == 0 &&
			    first.nlevels > 0)
				leaf_level = first.level[first.nlevels - 1].name;
		json_levels(&j, topo, leaf_level);
	}
	tmatch_cli_json_array(&j, "nodes");
	for (int n = 0; n < tmatch_affinity_tree_nb_nodes(tree); n++) {
		hwloc_const_bitmap_t set = tmatch_affinity_tree_allowed_cpuset(tree, n);
		char *list = tmatch_affinity_cpuset_list(set),
		     *mask = tmatch_affinity_cpuset_mask(set);

		tmatch_cli_json_object(&j, NULL);
		tmatch_cli_json_int(&j, "index", n);
		tmatch_cli_json_string(&j, "name", tmatch_affinity_tree_node_name(tree, n));
		tmatch_cli_json_string(&j, "allowed_cpus", list);
		tmatch_cli_json_string(&j, "mask", mask);
		tmatch_cli_json_end(&j);
		rc |= !list || !mask;
		free(list);
		free(mask);
	}
	tmatch_cli_json_end(&j);
	tmatch_cli_json_array(&j, "leaves");
	for (int leaf = 0; leaf < nleaves; leaf++) {
		hwloc_const_bitmap_t set;
		tmatch_affinity_pos_t pos;
		char *list, *mask;

		if (!tmatch_affinity_leaf_is_real(tree, leaf))
			continue;
		set = tmatch_affinity_leaf_cpuset(tree, leaf);
		list = tmatch_affinity_cpuset_list(set);
		mask = tmatch_affinity_cpuset_mask(set);
		tmatch_cli_json_object(&j, NULL);
		tmatch_cli_json_int(&j, "leaf", leaf);
		tmatch_cli_json_string(
		    &j, "node",
		    tmatch_affinity_tree_node_name(tree, tmatch_affinity_leaf_node(tree, leaf)));
		tmatch_cli_json_string(&j, "cpus", list);
		tmatch_cli_json_string(&j, "mask", mask);
		tmatch_cli_json_array(&j, "position");
		if (tmatch_affinity_leaf_position(tree, leaf, &pos, NULL) == 0)
			for (int l = 0; l < pos.nlevels; l++) {
				tmatch_cli_json_object(&j, NULL);
				tmatch_cli_json_string(&j, "level", pos.level[l].name);
				tmatch_cli_json_int(&j, "index", pos.level[l].index);
				tmatch_cli_json_int(&j, "count", pos.level[l].count);
				tmatch_cli_json_end(&j);
			}
		tmatch_cli_json_end(&j);
		tmatch_cli_json_end(&j);
		rc |= !list || !mask;
		free(list);
		free(mask);
	}
	tmatch_cli_json_end(&j);
	tmatch_cli_json_end(&j);
	if (rc)
		tmatch_cli_error("out of memory");
	return (tmatch_cli_output_close(stdout, "-") < 0) | rc;
}

/* A tleaf tree (no CPUs, costs): its levels and where each leaf sits, in
   the form of the other trees' description. */
static int show_tleaf(const char *spec, int json)
{
	tmatch_error_t err;
	tmatch_topo_t *topo;
	char tleaf[1024];
	int depth, nleaves;

	tmatch_error_clear(&err);
	if (!(topo = tmatch_place_topo_load(spec, &err)))
		return tmatch_cli_report_value("--topology", spec, &err);
	if (json) {
		int rc = json_tleaf(topo);

		tmatch_topo_destroy(topo);
		return rc;
	}
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
	             "                               [--topology-conf FILE] [--nodelist LIST]\n"
	             "                               [--restrict CPULIST] [--alloc-cores LIST]\n"
	             "                               [--cpus-per-task N] [--smt one|core|all]\n"
	             "                               [--json]\n"
	             "       treematch topology show --topology SPEC   (synthetic:, xml:, local, "
	             "cluster:, tleaf)\n"
	             "\n"
	             "Prints the tree the mapper sees: one line per level (name, arity), the\n"
	             "allowed CPUs of each node, and one line per usable leaf (node, CPU list,\n"
	             "mask as Slurm prints them, position at every hardware level).\n"
	             "A node's GPUs and network cards follow, from hwloc's PCI and OS devices:\n"
	             "each with the CPUs it is closest to, its package and NUMA node, a GPU's\n"
	             "island (GPUs joined by NVLink or xGMI) and nearest card, and the link\n"
	             "matrices hwloc has (NVLinkBandwidth, XGMIBandwidth, XGMIHops).\n"
	             "\n"
	             "  -t, --topology SPEC       the tree (as map takes it)\n"
	             "      --xml FILE            the node is an hwloc XML export (- : stdin)\n"
	             "      --synthetic DESC      the node is an hwloc synthetic topology\n"
	             "      --topology-conf FILE  Slurm's topology.conf: switches above the nodes\n"
	             "  -w, --nodelist LIST       the allocation's nodes (alone: one flat switch)\n"
	             "      --restrict CPULIST    only these CPUs of each node\n"
	             "      --alloc-cores LIST    the cores Slurm allocated to the step\n"
	             "  -c, --cpus-per-task N     each leaf a group of N CPUs, as srun -c\n"
	             "      --smt one|core|all    a leaf on hardware threads (default: as the\n"
	             "                            plugin binds, core; all with -c > 1)\n"
	             "      --json                the same as one JSON document (treematch(1))\n"
	             "  -h, --help                this help\n");
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
	enum {
		O_XML = 256,
		O_SYNTHETIC,
		O_TOPOLOGY_CONF,
		O_RESTRICT,
		O_ALLOC_CORES,
		O_SMT,
		O_JSON,
		O_NODES = TMATCH_CLI_OLD_NAME, /* the old name of --nodelist */
	};
	static const struct option longopts[] = {
	    {"xml", required_argument, NULL, O_XML},
	    {"synthetic", required_argument, NULL, O_SYNTHETIC},
	    {"topology", required_argument, NULL, 't'},
	    {"topology-conf", required_argument, NULL, O_TOPOLOGY_CONF},
	    {"nodelist", required_argument, NULL, 'w'},
	    {"restrict", required_argument, NULL, O_RESTRICT},
	    {"alloc-cores", required_argument, NULL, O_ALLOC_CORES},
	    {"cpus-per-task", required_argument, NULL, 'c'},
	    {"smt", required_argument, NULL, O_SMT},
	    {"json", no_argument, NULL, O_JSON},
	    {"nodes", required_argument, NULL, O_NODES},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	tmatch_affinity_opts_t opts;
	tmatch_affinity_tree_t *tree = NULL;
	tmatch_error_t err;
	const char *conf = NULL, *nodes = NULL;
	char *spec = NULL, *text = NULL;
	int c, rc = 1, len, json = 0;
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
	while ((c = tmatch_cli_getopt(argc, argv, "t:w:c:h", longopts)) != -1) {
		char *s = NULL;
		switch (c) {
		case O_XML:
		case O_SYNTHETIC:
		case 't':
			if (spec) {
				tmatch_cli_error("topology show: give one of --xml, --synthetic, "
				                 "--topology or local");
				goto usage;
			}
			if (c == 't') {
				s = strdup(optarg);
			} else {
				const char *arg = optarg;
				size_t l;

				/* an XML from standard input or a pipe: a regular copy */
				if (c == O_XML && !(arg = tmatch_cli_input(optarg, "--xml")))
					goto out;
				l = strlen(arg) + 16;
				s = malloc(l);
				if (s)
					snprintf(s, l, "%s:%s", c == O_XML ? "xml" : "synthetic",
					         arg);
			}
			if (!s) {
				tmatch_cli_error("out of memory");
				goto out;
			}
			spec = s;
			break;
		case O_TOPOLOGY_CONF:
			conf = optarg;
			break;
		case O_NODES:
			tmatch_cli_renamed("topology show", "--nodes",
			                   "--nodelist (-w), as srun's");
			/* fall through */
		case 'w':
			nodes = optarg;
			break;
		case O_RESTRICT:
			opts.restrict_cpus = optarg;
			break;
		case O_ALLOC_CORES:
			opts.alloc_cores = optarg;
			break;
		case 'c':
			if (tmatch_cli_number(optarg, 1 << 20, &num) < 0 || num < 1) {
				tmatch_cli_error(
				    "--cpus-per-task wants a positive integer, not '%s'", optarg);
				goto usage;
			}
			opts.cpus_per_task = (int)num;
			break;
		case O_JSON:
			json = 1;
			break;
		case O_SMT:
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
			rc = tmatch_cli_bad_option("topology show", argv, "t:w:c:h", longopts);
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
		tmatch_cli_error("--topology-conf needs --nodelist LIST (the step's nodes)");
		goto usage;
	}
	opts.io = 1; /* the GPUs and network cards too */
	if (opts.smt < 0)
		opts.smt = tmatch_place_smt_policy(opts.cpus_per_task);
	if (!has_cpus(spec) && !conf && !nodes) {
		rc = show_tleaf(spec, json);
		goto out;
	}
	tree = tmatch_place_tree_load(spec, &opts, conf, nodes, &err);
	if (!tree) {
		char buf[1024];
		tmatch_cli_error("%s", tmatch_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	if (json) {
		rc = json_tree(tree);
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
