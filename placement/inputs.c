/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inputs.c - how every subcommand turns a --topology SPEC or a --profile FILE
 * into the mapping core's objects, in one place.
 *
 *   SPEC: "tleaf h a0 c0 ..."          treematch/ (tmatch_topo_from_tleaf)
 *         "synthetic:<hwloc string>"   affinity/
 *         "xml:<file>"                 affinity/
 *         "local"                      affinity/
 *         "cluster:<topology.conf>,<nodelist>,<node topology>"  affinity/
 *   FILE: *.mtx, *.mat                 treematch/ (tmatch_comm_load)
 *         *.yml, *.yaml                conf/
 */
#include "placement/inputs.h"
#include "profile/profile.h"
#include "affinity/affinity.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/*
 * affinity/ specs. A node spec is "synthetic:<hwloc string>", "xml:<file>" or
 * "local"; a cluster spec is "cluster:<topology.conf>,<nodelist>,<node spec>"
 * where topology.conf may be empty or "none" (one flat switch) and the node
 * list is a Slurm hostlist (its commas inside brackets are part of it).
 */
static int node_opts(const char *spec, tmatch_affinity_opts_t *o)
{
	if (!strncmp(spec, "synthetic:", 10)) {
		o->source = TMATCH_AFFINITY_SRC_SYNTHETIC;
		o->input = spec + 10;
	} else if (!strncmp(spec, "xml:", 4)) {
		o->source = TMATCH_AFFINITY_SRC_XML;
		o->input = spec + 4;
	} else if (!strcmp(spec, "local")) {
		o->source = TMATCH_AFFINITY_SRC_LIVE;
		o->use_current_binding = 1; /* stay inside what this shell may use */
	} else {
		return -1;
	}
	return 0;
}

tmatch_affinity_tree_t *tmatch_cli_load_affinity_tree(const char *spec,
                                                      const tmatch_affinity_opts_t *base,
                                                      const char *conf_path, const char *nodes,
                                                      tmatch_error_t *err)
{
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *node = NULL, *cluster = NULL;
	tmatch_affinity_conf_t *conf = NULL;
	char *copy = NULL;

	if (base)
		o = *base;
	else
		tmatch_affinity_opts_init(&o);
	if (!strncmp(spec, "cluster:", 8)) {
		char *p, *nl, *nt;
		int depth = 0;
		copy = strdup(spec + 8);
		if (!copy) {
			snprintf(err->msg, sizeof(err->msg), "out of memory");
			errno = ENOMEM;
			return NULL;
		}
		nl = strchr(copy, ',');
		nt = NULL;
		if (nl) {
			*nl++ = '\0';
			for (p = nl; *p; p++) {
				if (*p == '[')
					depth++;
				else if (*p == ']')
					depth--;
				else if (*p == ',' && depth == 0) {
					*p = '\0';
					nt = p + 1;
					break;
				}
			}
		}
		if (!nl || !nt || !*nl) {
			snprintf(
			    err->msg, sizeof(err->msg),
			    "cluster topology needs cluster:<topology.conf>,<nodelist>,<node "
			    "topology>, e.g. cluster:topology.conf,n[1-4],synthetic:pack:2 core:8");
			errno = EINVAL;
			goto out;
		}
		conf_path = (*copy && strcmp(copy, "none") != 0) ? copy : NULL;
		nodes = nl;
		spec = nt;
	}
	if (node_opts(spec, &o) < 0) {
		snprintf(
		    err->msg, sizeof(err->msg),
		    "unknown node topology '%.64s': give synthetic:<hwloc string>, xml:FILE or "
		    "local",
		    spec);
		errno = EINVAL;
		goto out;
	}
	node = tmatch_affinity_node_load(&o, err);
	if (!node || !nodes) {
		cluster = node;
		node = NULL;
		goto out;
	}
	if (conf_path && !(conf = tmatch_affinity_conf_load(conf_path, err)))
		goto out;
	cluster = tmatch_affinity_cluster_build(conf, nodes, node, NULL, err);
out:
	tmatch_affinity_conf_destroy(conf);
	tmatch_affinity_tree_destroy(node);
	free(copy);
	return cluster;
}

tmatch_topo_t *tmatch_cli_load_topology(const char *spec, tmatch_error_t *err)
{
	if (!spec || !*spec) {
		snprintf(err->msg, sizeof(err->msg),
		         "empty --topology: give a tleaf string, "
		         "synthetic:..., xml:FILE, local or cluster:...");
		errno = EINVAL;
		return NULL;
	}
	if (!strncmp(spec, "tleaf", 5) || (spec[0] >= '0' && spec[0] <= '9'))
		return tmatch_topo_from_tleaf(spec, err);
	if (!strncmp(spec, "synthetic:", 10) || !strncmp(spec, "xml:", 4) ||
	    !strcmp(spec, "local") || !strncmp(spec, "cluster:", 8)) {
		tmatch_affinity_tree_t *tree =
		    tmatch_cli_load_affinity_tree(spec, NULL, NULL, NULL, err);
		tmatch_topo_t *topo = tree ? tmatch_affinity_tree_topo_dup(tree, err) : NULL;
		tmatch_affinity_tree_destroy(tree);
		return topo;
	}
	snprintf(err->msg, sizeof(err->msg),
	         "unknown topology '%.64s': give a tleaf string (\"tleaf 2 4 1 8 1\"), "
	         "synthetic:<hwloc string>, xml:FILE, local or cluster:CONF,NODES,NODETOPO",
	         spec);
	errno = EINVAL;
	return NULL;
}

/* conf/: a comm-profile; its placement_metric, point-to-point traffic. */
static void yaml_warning(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= TMATCH_LOG_WARNING)
		fprintf(stderr, "treematch: warning: %s\n", msg);
}

static tmatch_comm_t *load_yaml_profile(const char *path, tmatch_error_t *err)
{
	tmatch_profile_t *p = tmatch_profile_load(path, NULL, yaml_warning, NULL, err);
	tmatch_comm_t *comm;

	if (!p)
		return NULL;
	comm =
	    tmatch_profile_to_comm(p, tmatch_profile_placement_metric(p), TMATCH_PROFILE_P2P, err);
	if (!comm && err && !err->file[0])
		snprintf(err->file, sizeof(err->file), "%s", path);
	tmatch_profile_destroy(p);
	return comm;
}

tmatch_comm_t *tmatch_cli_load_profile(const char *path, tmatch_error_t *err)
{
	if (has_suffix(path, ".mtx") || has_suffix(path, ".mat"))
		return tmatch_comm_load(path, err);
	if (has_suffix(path, ".yml") || has_suffix(path, ".yaml"))
		return load_yaml_profile(path, err);
	snprintf(err->msg, sizeof(err->msg),
	         "%.200s: unknown profile format: use .yml/.yaml, .mtx or .mat", path);
	errno = EINVAL;
	return NULL;
}
