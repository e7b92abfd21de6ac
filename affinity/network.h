/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * network.h - the builder of a cluster's network (tmatch_affinity_conf_t,
 * network.c): what the readers of Slurm's files (conf/topology.h:
 * topology.conf, topology.yaml, slurm.conf's Topology= keys) hand their
 * entries to. The one place the switch tree's rules are kept (unique
 * names, one parent, no cycle, a node under one switch, the caps of
 * TMATCH_TOPOLOGY_CONF_NAMES and _BYTES, slurm.conf's NodeName ...
 * Topology= moves), whatever the format. The project's own: linked from
 * libtreematch.a, not exported, not installed.
 *
 * Every function returns 0 (or an index) or -1 with the error set, naming
 * the file and the line and column given.
 */
#ifndef TMATCH_AFFINITY_NETWORK_H
#define TMATCH_AFFINITY_NETWORK_H

#include "affinity/affinity.h"

/* What kind of network a conf describes (tmatch_affinity_conf_kind). */
enum tmatch_affinity_net_kind {
	TMATCH_AFFINITY_NET_NONE = 0, /* nothing read yet */
	TMATCH_AFFINITY_NET_TREE,
	TMATCH_AFFINITY_NET_BLOCK,
	TMATCH_AFFINITY_NET_RING,
	TMATCH_AFFINITY_NET_TORUS,
	TMATCH_AFFINITY_NET_FLAT,
};

/* Levels of aggregated blocks Slurm plans with: sizes 1, 2, 4 ... 32768
   base blocks (its MAX_BLOCK_LEVELS); BlockSizes= gives at most as many. */
#define TMATCH_AFFINITY_NET_BLOCK_LEVELS 16

/* A network being built from one file (opaque). */
typedef struct tmatch_affinity_net tmatch_affinity_net_t;

/* `file` labels the messages (NULL = "<string>"). yaml: messages name
   topology.yaml's keys (switch:, nodes:), else topology.conf's
   (SwitchName=, Nodes=). */
tmatch_affinity_net_t *tmatch_affinity_net_new(const char *file, int yaml, tmatch_error_t *err);
void tmatch_affinity_net_free(tmatch_affinity_net_t *b);
/* An error of the file the builder reads (its name, the line and column
   given) into the builder's error: -1. */
int tmatch_affinity_net_error(tmatch_affinity_net_t *b, int errnum, int line, int col,
                              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The network's kind (enum tmatch_affinity_net_kind), once per entry: a
   second kind in one topology is an error. */
int tmatch_affinity_net_set_kind(tmatch_affinity_net_t *b, int kind, int line, int col);
/* 1 when nothing added describes a network yet (no switch, block or ring;
   BlockSizes= alone is a block network). */
int tmatch_affinity_net_empty(const tmatch_affinity_net_t *b);
/* A switch named by the file (SwitchName=, switch:), its nodes and child
   switches as hostlists (NULL = none), its link speed. */
int tmatch_affinity_net_add_switch(tmatch_affinity_net_t *b, const char *name, int line, int col,
                                   const char *nodes, int nodes_line, int nodes_col,
                                   const char *switches, int sw_line, int sw_col, long speed);
/* A base block (BlockName=, block:); BlockSizes= (block_sizes:) in nodes. */
int tmatch_affinity_net_add_block(tmatch_affinity_net_t *b, const char *name, int line, int col,
                                  const char *nodes, int nodes_line, int nodes_col);
int tmatch_affinity_net_block_sizes(tmatch_affinity_net_t *b, const long *sizes, int n, int line,
                                    int col);
/* A ring (RingName=, ring:) of at most 16 nodes in order. */
int tmatch_affinity_net_add_ring(tmatch_affinity_net_t *b, const char *name, int line, int col,
                                 const char *nodes, int nodes_line, int nodes_col);
/* A switch (named by the file, or made: made = 1) without nodes yet: its
   index. A node by name under switch sw; sw's child switch. */
int tmatch_affinity_net_new_switch(tmatch_affinity_net_t *b, const char *name, int made, int line,
                                   int col);
int tmatch_affinity_net_add_node(tmatch_affinity_net_t *b, int sw, const char *node, int line,
                                 int col);
int tmatch_affinity_net_add_child(tmatch_affinity_net_t *b, int parent, int child);
/* Nodes of a hostlist (within the caps): a new array and its count.
   `what` names the list in messages (NULL: the file's nodes key). */
char **tmatch_affinity_net_expand(tmatch_affinity_net_t *b, const char *list, int *count, int line,
                                  int col, const char *what);

/*
 * slurm.conf's say on topologies (read by conf/slurm_conf.c): the
 * Topology= of the job's partition (or of the Default=YES one when no
 * partition is given; PartitionName=DEFAULT's when the partition names
 * none), and every NodeName line's Topology= ("topo:unit,...";
 * NodeName=DEFAULT's for the lines without one).
 */
struct tmatch_affinity_node_topo {
	char *nodes;    /* NodeName= hostlist */
	char *topology; /* its Topology= value */
	int line, col;  /* of the Topology= value */
};
struct tmatch_affinity_slurm_topo {
	const char *file;         /* labels the messages */
	char *partition_topology; /* NULL when none */
	int part_line, part_col;
	struct tmatch_affinity_node_topo *node;
	int nnode;
};

/*
 * The conf, once everything is added: references resolved, blocks
 * aggregated, then the NodeName ... Topology= lines of slurm.conf that name
 * this topology applied (slurm may be NULL), levels computed. `name` is the
 * topology's name ("default" for topology.conf). The builder is spent
 * either way (free it).
 */
tmatch_affinity_conf_t *tmatch_affinity_net_finish(tmatch_affinity_net_t *b, const char *name,
                                                   const struct tmatch_affinity_slurm_topo *slurm);

#endif /* TMATCH_AFFINITY_NETWORK_H */
