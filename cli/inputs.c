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
#include "cli/inputs.h"
#include "conf/profile.h"

#include <errno.h>
#include <string.h>

static int has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
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
	comm = tmatch_profile_to_comm(p, tmatch_profile_placement_metric(p), TMATCH_PROFILE_P2P,
	                              err);
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
