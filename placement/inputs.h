/* SPDX-License-Identifier: BSD-3-Clause */
/* inputs.h - --topology SPEC and --profile FILE, parsed once for all subcommands. */
#ifndef TMATCH_CLI_INPUTS_H
#define TMATCH_CLI_INPUTS_H

#include "treematch/treematch.h"

#include <stdio.h>

/* err must not be NULL. Returns NULL with err filled on failure. */
tmatch_topo_t *tmatch_cli_load_topology(const char *spec, tmatch_error_t *err);
tmatch_comm_t *tmatch_cli_load_profile(const char *path, tmatch_error_t *err);

/*
 * The affinity tree behind a synthetic:/xml:/local/cluster: spec, with its
 * leaf table (CPU sets, node names). `base` (NULL = defaults) gives the SMT,
 * cpus-per-task and restriction options; conf_path/nodes (NULL = none) make
 * a cluster tree of a node spec. err must not be NULL.
 */
struct tmatch_affinity_tree;
struct tmatch_affinity_opts;
struct tmatch_affinity_tree *tmatch_cli_load_affinity_tree(const char *spec,
                                                           const struct tmatch_affinity_opts *base,
                                                           const char *conf_path, const char *nodes,
                                                           tmatch_error_t *err);

#endif
