/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf/topology.h - Slurm's description of a cluster's network, read where
 * Slurm reads it: topology.yaml (Slurm 25.05 and later: several named
 * topologies, each tree, block, flat, ring or torus3d; the one a job uses
 * is its partition's Topology=, else the first with cluster_default: true,
 * else the first), topology.conf (SwitchName lines of topology/tree,
 * BlockName and BlockSizes lines of topology/block, RingName lines of
 * topology/ring) and slurm.conf's Topology= keys (a partition's topology;
 * NodeName ... Topology= lines that move or remove nodes, as slurmctld
 * does). What they describe is affinity/'s network, tmatch_affinity_conf_t
 * (treematch/affinity.h: its switches, the cluster tree built over it);
 * affinity/ keeps the switch tree's rules and caps, these readers hand
 * it the files' entries. Installed as treematch/topology.h.
 *
 * Conventions as in treematch/treematch.h: pointer/NULL with errno and an
 * optional tmatch_error_t naming the file, line and column; nothing here
 * includes Slurm or prints.
 */
#ifndef TMATCH_CONF_TOPOLOGY_H
#define TMATCH_CONF_TOPOLOGY_H

#include "treematch/treematch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* affinity/'s network (treematch/affinity.h), named here without its
   header: free it with tmatch_affinity_conf_destroy. */
typedef struct tmatch_affinity_conf tmatch_affinity_conf_t;

/* Which topology of a file, and slurm.conf's say on it. All may be NULL. */
typedef struct tmatch_conf_topo_sel {
	const char *topology;        /* a topology's name, chosen outright */
	const char *partition;       /* the job's partition (SLURM_JOB_PARTITION): its
	                                Topology= in slurm.conf; NULL: the Default=YES one */
	const char *slurm_conf;      /* slurm.conf's text (tmatch_conf_slurm_read) */
	const char *slurm_conf_name; /* labels its messages; NULL = "slurm.conf" */
} tmatch_conf_topo_sel_t;

/*
 * Read a topology.yaml or topology.conf (told apart by the name's .yaml,
 * .yml or .conf, else by the text) and pick its topology as `sel` says
 * (NULL: the cluster default, no slurm.conf). Comments (#), blank lines,
 * "\" line continuations, case-insensitive keys, hostlists "n[1-4,7]" of
 * topology.conf are handled; topology.yaml is read with libyaml, without
 * aliases, within the same caps (TMATCH_TOPOLOGY_CONF_NAMES, _BYTES).
 * Errors name the file, line and column: unknown key, a line or entry
 * without its name, duplicate names, unknown child switch, a switch with
 * two parents, a cycle, a node under two switches, malformed hostlist, two
 * kinds of network in one topology, bad BlockSizes, a ring of more than 16
 * nodes, a torus the tree cannot hold; slurm.conf's errors name
 * slurm.conf. `name` labels the errors of a text (NULL = "<string>").
 */
TMATCH_API tmatch_affinity_conf_t *tmatch_conf_topology_load(const char *path, tmatch_error_t *err);
TMATCH_API tmatch_affinity_conf_t *tmatch_conf_topology_parse(const char *text, const char *name,
                                                              tmatch_error_t *err);
TMATCH_API tmatch_affinity_conf_t *tmatch_conf_topology_load_sel(const char *path,
                                                                 const tmatch_conf_topo_sel_t *sel,
                                                                 tmatch_error_t *err);
TMATCH_API tmatch_affinity_conf_t *tmatch_conf_topology_parse_sel(const char *text,
                                                                  const char *name,
                                                                  const tmatch_conf_topo_sel_t *sel,
                                                                  tmatch_error_t *err);

/*
 * Where the network of a cluster is described, as Slurm looks for it:
 * `override` when given (an option, $TREEMATCH_TOPOLOGY_CONF), else
 * topology.yaml in the directory of the slurm.conf in use (`slurm_conf`,
 * the caller's $SLURM_CONF; NULL = /etc/slurm/slurm.conf) when it is
 * readable, else topology.conf there (Slurm ignores topology.conf when
 * topology.yaml exists). `yaml` 0: the Slurm in use predates topology.yaml
 * (before 25.05, which read topology.conf only), so topology.conf only. A
 * new string the caller frees, or NULL (ENOENT: no file, the cluster has
 * one flat switch; ENOMEM). The one place the plugin and the CLI find it.
 */
TMATCH_API char *tmatch_conf_topology_find(const char *override, const char *slurm_conf, int yaml);

/*
 * slurm.conf (`path`; NULL = /etc/slurm/slurm.conf) as the topology reader
 * takes it (tmatch_conf_topo_sel_t.slurm_conf): a regular file of at most
 * TMATCH_TOPOLOGY_CONF_BYTES, whole, NUL-terminated, the caller frees it.
 * NULL with err (ENOENT when there is none).
 */
TMATCH_API char *tmatch_conf_slurm_read(const char *path, tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_CONF_TOPOLOGY_H */
