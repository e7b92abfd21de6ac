/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/inputs.h - the front ends' inputs: a --topology SPEC or a profile
 * file into the core's objects, the cluster's network found as Slurm finds
 * it, a node's tree loaded from a spec (inputs.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_INPUTS_H
#define TMATCH_PLACEMENT_INPUTS_H

#include "affinity/affinity.h"
#include "conf/topology.h"
#include "treematch/treematch.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A --topology SPEC as the mapping core's tree: "tleaf DEPTH A0 C0 ..." (or
 * starting with a digit), "synthetic:<hwloc string>", "xml:FILE", "local"
 * (this machine, within the caller's binding) or
 * "cluster:<topology file>,<nodelist>,<node spec>" (a topology.yaml, its
 * cluster default, or a topology.conf; empty or "none" = one flat switch;
 * the node list's commas inside brackets are its own). -1/NULL with err saying which forms exist.
 */
tmatch_topo_t *tmatch_place_topo_load(const char *spec, tmatch_error_t *err);

/*
 * The affinity tree (with CPU sets and node names) of a node spec
 * ("synthetic:", "xml:", "local") or a "cluster:" spec. `base` (NULL =
 * defaults) gives the SMT, cpus-per-task and restriction options;
 * conf_path/nodes (NULL = none) make a cluster tree of a node spec.
 */
tmatch_affinity_tree_t *tmatch_place_tree_load(const char *spec, const tmatch_affinity_opts_t *base,
                                               const char *conf_path, const char *nodes,
                                               tmatch_error_t *err);

/*
 * The network of the cluster a front end runs in, found as Slurm finds it:
 * the file (`override`, else topology.yaml, else topology.conf, beside
 * slurm_conf, NULL = /etc/slurm/slurm.conf; "none" = no file), slurm.conf's
 * text (its partitions' and nodes' Topology=), the job's `partition` (NULL:
 * the default one). 0 (net->path NULL when there is no file: one flat
 * switch), -1/ENOMEM. Clear it with tmatch_place_network_clear.
 */
typedef struct tmatch_place_network {
	char *path;
	char *slurm_conf;
	tmatch_conf_topo_sel_t sel;
} tmatch_place_network_t;
int tmatch_place_network_find(const char *override, const char *slurm_conf, const char *partition,
                              tmatch_place_network_t *net);
void tmatch_place_network_clear(tmatch_place_network_t *net);

/*
 * Set `opts`' source and input from a node spec: "synthetic:<string>",
 * "xml:FILE" or "local" (this machine, use_current_binding). -1/EINVAL (opts
 * untouched) for anything else.
 */
int tmatch_place_node_spec(const char *spec, tmatch_affinity_opts_t *opts, tmatch_error_t *err);

/*
 * tmatch_affinity_node_load for a front end: an XML file (a user's, in the
 * CLI) is loaded by hwloc in a child process first (placement/sandbox.c,
 * 10 s, 1 GiB), which hands back hwloc's own export of it: hwloc 2.9's
 * XML reader crashes on some crafted files, and then only the child dies
 * ("XML reader process died with signal 11"). Other sources load here.
 */
tmatch_affinity_tree_t *tmatch_place_node_load(const tmatch_affinity_opts_t *opts,
                                               tmatch_error_t *err);

/*
 * The tree the plugin would build for `nlocal` tasks of cpus_per_task CPUs
 * (tmatch_place_node_tree: a core per task, hardware threads when needed)
 * on a node spec ("xml:FILE" read by a child as tmatch_place_node_load
 * does, "synthetic:...", "local"), with its I/O devices when io. *smt
 * (may be NULL) as tmatch_place_node_tree.
 */
tmatch_affinity_tree_t *tmatch_place_node_tree_load(const char *spec, int nlocal, int cpus_per_task,
                                                    int io, int *smt, tmatch_error_t *err);

/*
 * A profile file as the matrix to map: .mtx and .mat through the core's
 * readers, .yml/.yaml and compiled profiles through the profile loader and
 * tmatch_place_comm with the plugin's defaults (its placement_metric, the
 * collectives it says are placed by; warnings to `log`). EINVAL for another
 * extension.
 */
tmatch_comm_t *tmatch_place_comm_load(const char *path, tmatch_log_fn log, void *log_arg,
                                      tmatch_error_t *err);
/* The same, and in *metric the tmatch_profile_metric_t of the numbers (the
   profile's placement_metric), -1 for a matrix file (its own units). */
tmatch_comm_t *tmatch_place_comm_load_metric(const char *path, tmatch_log_fn log, void *log_arg,
                                             int *metric, tmatch_error_t *err);
/* The matrix of ranks[0..n) only, as tmatch_comm_submatrix of the whole
   would give; a compiled profile is read for those ranks' rows only. */
tmatch_comm_t *tmatch_place_comm_load_ranks(const char *path, const int *ranks, int n,
                                            tmatch_log_fn log, void *log_arg, tmatch_error_t *err);

/*
 * hwloc dlopens its plugins (GL/X11, OpenCL, PCI, libxml2 and ICU) at its
 * first topology: about 25 ms, and every fork then copies the larger
 * address space. The node tree needs none of them (hwloc's own XML reader
 * reads the admin's topology_xml), so slurmstepd sets HWLOC_PLUGINS_BLACKLIST
 * to this unless it is set already. The CLI keeps libxml2 for the XML files
 * users give it, and loads them in a child (tmatch_place_node_load): hwloc
 * 2.9's own reader crashed on a crafted one under fuzzing.
 */
#define TMATCH_PLACE_HWLOC_BLACKLIST                                                               \
	"hwloc_gl,hwloc_opencl,hwloc_pci,hwloc_xml_libxml,hwloc_cuda,hwloc_nvml,hwloc_rsmi,"       \
	"hwloc_levelzero"

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_INPUTS_H */
