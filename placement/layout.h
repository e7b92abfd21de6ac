/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/layout.h - a layout: the node of every rank over an allocation's
 * switch tree (`treematch layout`), with Slurm's block and cyclic layouts
 * and the traffic per level to compare (layout.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_LAYOUT_H
#define TMATCH_PLACEMENT_LAYOUT_H

#include "affinity/affinity.h"
#include "conf/topology.h"
#include "treematch/treematch.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Slurm's tasks-per-node syntax into cap[0..nnodes-1]: "4" (every node),
 * "2(x3),1", "4,4,2". -1/EINVAL with the column in the message.
 */
int tmatch_place_tasks_per_node(const char *spec, int nnodes, int *cap, tmatch_error_t *err);

/*
 * The capacities Slurm gives a step when none are named: tasks_per_node
 * (SLURM_TASKS_PER_NODE) when it parses and holds ntasks, else
 * cpus_per_node (SLURM_JOB_CPUS_PER_NODE) divided by cpus_per_task
 * (SLURM_CPUS_PER_TASK, NULL or < 1 = 1). Any string may be NULL.
 */
int tmatch_place_caps_from_slurm(const char *tasks_per_node, const char *cpus_per_node,
                                 const char *cpus_per_task, int nnodes, int ntasks, int *cap,
                                 tmatch_error_t *err);

/* Slurm's block layout (fill node 0, then node 1...) and cyclic layout (one
   rank per node in turn, skipping full nodes): -1 if the ranks do not fit. */
int tmatch_place_layout_block(int ntasks, int nnodes, const int *cap, int *node_of_rank);
int tmatch_place_layout_cyclic(int ntasks, int nnodes, const int *cap, int *node_of_rank);

/* Traffic (sum over unordered pairs) on the same node, under the same leaf
   switch, and across switches. */
typedef struct tmatch_place_traffic {
	double node, sw, across, total;
} tmatch_place_traffic_t;

void tmatch_place_traffic(const tmatch_comm_t *comm, const int *node_of_rank,
                          const int *switch_of_node, tmatch_place_traffic_t *t);

/* The matrix with `ntasks` >= its order ranks: the extra ranks are silent. */
tmatch_comm_t *tmatch_place_comm_widen(const tmatch_comm_t *comm, int ntasks, tmatch_error_t *err);

typedef struct tmatch_place_layout_in {
	const tmatch_comm_t *comm; /* the profile's matrix */
	int ntasks;                /* ranks to place, >= comm's order (more are silent) */
	const char *nodelist;      /* the allocation's nodes (hostlist) */
	const int *cap;            /* [nodes of nodelist] task slots of each; 0 = the node
	                              takes no part */
	const char *topology_conf; /* topology.yaml or topology.conf path, NULL = one flat
	                              switch */
	const tmatch_conf_topo_sel_t *topology_sel; /* its topology, NULL = the default */
	const char *node_topology; /* "synthetic:..." or "xml:FILE"; NULL = one level of
	                              slots */
	const char *mapper;        /* NULL = TMATCH_DEFAULT_MAPPER */
	uint64_t seed;
	int plan;          /* 1: also what a step plan needs (leaf_in_node, prefix, node_sig) */
	tmatch_log_fn log; /* the mapping's warnings and progress (NULL: none) */
	void *log_arg;
} tmatch_place_layout_in_t;

typedef struct tmatch_place_layout {
	int ntasks;
	int nnodes;          /* nodes with a capacity (the others take no part) */
	char **node_name;    /* [nnodes] */
	int *cap;            /* [nnodes] */
	int nslots;          /* sum of cap */
	int nodes_used;      /* nodes given at least one rank */
	int *node_of_rank;   /* [ntasks], index in node_name */
	int *switch_of_node; /* [nnodes], leaf switch (0 when there is none) */
	/* traffic per level of this layout and of Slurm's block and cyclic */
	tmatch_place_traffic_t traffic, block, cyclic;
	/* with in->plan: each rank's leaf in the node model, each node's switch
	   levels and node level, and the node model's tmatch_place_node_sig */
	int *leaf_in_node;             /* [ntasks] */
	tmatch_affinity_pos_t *prefix; /* [nnodes] */
	uint64_t node_sig;
} tmatch_place_layout_t;

/*
 * The node of every rank: the ranks onto the allocation's tree of switches
 * (topology.conf) over nodes over task slots, each node offering cap[i]
 * slots, with the mapper; the traffic per level against block and cyclic.
 * -1/EINVAL when no node may take a task or the ranks do not fit (err says
 * which), else the errors of the trees and of the mapping.
 */
int tmatch_place_layout(const tmatch_place_layout_in_t *in, tmatch_place_layout_t **out,
                        tmatch_error_t *err);
void tmatch_place_layout_destroy(tmatch_place_layout_t *layout);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_LAYOUT_H */
