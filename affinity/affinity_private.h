/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * affinity_private.h - internals shared by the files of affinity/. Tests may
 * include it; nothing outside affinity/ does.
 *
 * The trees are built in two steps. First an explicit, possibly unbalanced
 * tree of `struct tmatch__xnode` (switches, nodes, hwloc objects, task
 * slots). Then tmatch__xtree_finish() makes every leaf the same depth
 * (virtual single-child nodes above shallow leaves), merges levels that do
 * not branch, pads every level to its maximum arity and numbers the leaves
 * of the resulting balanced tmatch_topo_t depth first.
 */
#ifndef TMATCH_AFFINITY_PRIVATE_H
#define TMATCH_AFFINITY_PRIVATE_H

#include "affinity/affinity.h"

#include <hwloc.h>
#include <stdarg.h>

/* What an explicit tree node stands for. */
enum tmatch__kind {
	TMATCH__K_VIRTUAL = 0, /* inserted to balance depths */
	TMATCH__K_CLUSTER,     /* root of a cluster tree without a top switch */
	TMATCH__K_SWITCH,
	TMATCH__K_NODE,
	TMATCH__K_PACKAGE,
	TMATCH__K_DIE,
	TMATCH__K_NUMA,
	TMATCH__K_GROUP,
	TMATCH__K_L3,
	TMATCH__K_L2,
	TMATCH__K_CORE,
	TMATCH__K_PU,
	TMATCH__K_SLOT, /* a group of cores for one multi-CPU task */
	TMATCH__K_COUNT
};

/* Position of a leaf, compact: kinds and numbers per level, outermost first. */
struct tmatch__pos {
	int n;
	unsigned char kind[TMATCH_AFFINITY_MAX_LEVELS];
	unsigned char swlevel[TMATCH_AFFINITY_MAX_LEVELS]; /* for switches */
	int index[TMATCH_AFFINITY_MAX_LEVELS];
	int count[TMATCH_AFFINITY_MAX_LEVELS];
	int global[TMATCH_AFFINITY_MAX_LEVELS];
};

struct tmatch__xnode {
	int kind;
	int swlevel; /* switches: Slurm level, 0 = just above nodes; levels: -1 */
	int global;  /* index among real objects of this kind (node- or cluster-wide) */
	int nchild, cap;
	struct tmatch__xnode **child;
	/* leaves only */
	hwloc_bitmap_t cpuset; /* owned */
	int node;              /* index in the tree's node table */
	int disabled;          /* real but not usable (beyond a node's capacity) */
	struct tmatch__pos pos;
};

/* Per-node data of a tree. */
struct tmatch__node {
	char *name;
	hwloc_topology_t topo;  /* shared with the node tree it came from; NULL for none */
	hwloc_bitmap_t allowed; /* owned */
	int this_system;
};

struct tmatch_affinity_tree {
	tmatch_topo_t *topo;
	int nb_leaves;
	struct tmatch__xnode **leaf; /* nb_leaves entries; NULL = padding */
	int nb_slots;
	struct tmatch__xnode *root; /* owns every xnode */
	char leaf_name[24];         /* kind of the leaves ("core", "pu", "slot") */
	int nb_nodes;
	struct tmatch__node *nodes;
	/* the hwloc topology every node refers to, owned (a cluster tree holds
	   a duplicate of its node tree's, so it outlives the node tree) */
	hwloc_topology_t owned_topo;
};

/* A switch of the cluster's network: a topology.conf or topology.yaml
   switch, a block, one of the switches made for an aggregated block, a
   ring's segment or a torus's tile. */
struct tmatch__sw {
	char *name;
	int line;     /* where it was defined */
	int col;      /* column of its name there */
	long speed;   /* LinkSpeed, 1 if not given */
	int parent;   /* switch index, -1 = top */
	int level;    /* 0 = no child switches */
	int nchild;   /* child switches */
	int *child;   /* switch indexes */
	int nnodes;   /* nodes directly below */
	char **nodes; /* names */
	int made;     /* 1: made by us (an aggregated block, a segment, a tile),
	                 not named in the file: no file's name refers to it */
};

/* What kind of network a conf describes (tmatch_affinity_conf_kind). */
enum tmatch__topo_kind {
	TMATCH__TOPO_NONE = 0, /* nothing read yet */
	TMATCH__TOPO_TREE,
	TMATCH__TOPO_BLOCK,
	TMATCH__TOPO_RING,
	TMATCH__TOPO_TORUS,
	TMATCH__TOPO_FLAT,
};

struct tmatch_affinity_conf {
	int nsw;
	struct tmatch__sw *sw;
	int kind;      /* enum tmatch__topo_kind */
	char name[64]; /* the topology's name (topology.yaml), "default" for topology.conf */
	char file[256];
};

/* Text of any length into a caller's buffer, snprintf-style: pos counts
   what the whole text needs, buf (len bytes) holds what fits. */
struct tmatch__out {
	char *buf;
	size_t len, pos;
};
void tmatch__emit(struct tmatch__out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * The builder of a conf (topology_conf.c), the one place the switch tree's
 * rules are kept (unique names, one parent, no cycle, a node under one
 * switch, the caps of TMATCH_TOPOLOGY_CONF_NAMES and _BYTES) whatever the
 * format: topology.conf's lines and topology.yaml's entries are added to it.
 * Every function returns 0 (or an index) or -1 with the error set, naming
 * the file and the line and column given.
 */
struct tmatch__topo_build;
/* yaml: messages name topology.yaml's keys (switch:, nodes:), else
   topology.conf's (SwitchName=, Nodes=). */
struct tmatch__topo_build *tmatch__topo_build_new(const char *file, int yaml, tmatch_error_t *err);
void tmatch__topo_build_free(struct tmatch__topo_build *b);
/* The network's kind, once per entry: a second kind in one topology is an error. */
int tmatch__topo_build_kind(struct tmatch__topo_build *b, int kind, int line, int col);
/* A switch named by the file (SwitchName=, switch:), its nodes and child
   switches as hostlists (NULL = none), its link speed. */
int tmatch__topo_add_switch(struct tmatch__topo_build *b, const char *name, int line, int col,
                            const char *nodes, int nodes_line, int nodes_col, const char *switches,
                            int sw_line, int sw_col, long speed);
/* A base block (BlockName=, block:); BlockSizes= (block_sizes:) in nodes. */
int tmatch__topo_add_block(struct tmatch__topo_build *b, const char *name, int line, int col,
                           const char *nodes, int nodes_line, int nodes_col);
int tmatch__topo_block_sizes(struct tmatch__topo_build *b, const long *sizes, int n, int line,
                             int col);
/* A ring (RingName=, ring:) of at most 16 nodes in order. */
int tmatch__topo_add_ring(struct tmatch__topo_build *b, const char *name, int line, int col,
                          const char *nodes, int nodes_line, int nodes_col);
/* A switch (named by the file, or made: made = 1) without nodes yet: its
   index. A node by name under switch sw; sw's child switch. */
int tmatch__topo_new_switch(struct tmatch__topo_build *b, const char *name, int made, int line,
                            int col);
int tmatch__topo_add_node(struct tmatch__topo_build *b, int sw, const char *node, int line,
                          int col);
int tmatch__topo_add_child(struct tmatch__topo_build *b, int parent, int child);
/* Nodes of a hostlist (within the caps): a new array and its count.
   `what` names the list in messages (NULL: the file's nodes key). */
char **tmatch__topo_expand(struct tmatch__topo_build *b, const char *list, int *count, int line,
                           int col, const char *what);
/*
 * The conf, once everything is added: references resolved, blocks
 * aggregated, then the NodeName ... Topology= lines of slurm.conf that name
 * this topology applied (slurm may be NULL), levels computed. `name` is the
 * topology's name ("default" for topology.conf). The builder is spent
 * either way (free it).
 */
struct tmatch__slurm_topo;
tmatch_affinity_conf_t *tmatch__topo_build_finish(struct tmatch__topo_build *b, const char *name,
                                                  const struct tmatch__slurm_topo *slurm);

/*
 * slurm.conf's say on topologies (slurm_conf.c): the Topology= of the
 * job's partition (or of the Default=YES one when no partition is given;
 * PartitionName=DEFAULT's when the partition names none), and every
 * NodeName line's Topology= ("topo:unit,..."; NodeName=DEFAULT's for the
 * lines without one). Admin text, read as such: unknown keys are Slurm's.
 */
struct tmatch__node_topo {
	char *nodes;    /* NodeName= hostlist */
	char *topology; /* its Topology= value */
	int line, col;  /* of the Topology= value */
};
struct tmatch__slurm_topo {
	const char *file;         /* labels the messages */
	char *partition_topology; /* NULL when none */
	int part_line, part_col;
	struct tmatch__node_topo *node;
	int nnode;
};
int tmatch__slurm_topo_parse(const char *text, const char *file, const char *partition,
                             struct tmatch__slurm_topo *out, tmatch_error_t *err);
void tmatch__slurm_topo_clear(struct tmatch__slurm_topo *st);

/*
 * Slurm's Key=Value files (topology.conf, slurm.conf; topology_conf.c):
 * logical lines ('#' comments, a trailing '\' continues), each split into
 * pairs, handed to fn (the values NUL-terminated in place, valid during the
 * call). lenient: a line with a word without '=' ("Include FILE") is
 * skipped, else it is an error. 0, or -1 with err set (or fn's -1).
 */
struct tmatch__kv {
	const char *key; /* not NUL-terminated: klen characters */
	size_t klen;
	char *val;
	int line, col;   /* of the key */
	int vline, vcol; /* of the value */
};
typedef int (*tmatch__kv_fn)(void *arg, struct tmatch__kv *kv, int n);
int tmatch__kv_read(const char *text, const char *file, int lenient, tmatch__kv_fn fn, void *arg,
                    tmatch_error_t *err);
/* The key, without regard to case. */
int tmatch__kv_is(const struct tmatch__kv *kv, const char *key);

/* topology.yaml (topology_yaml.c): the topology `sel` picks, into a new
   builder's conf. */
tmatch_affinity_conf_t *tmatch__topo_yaml_parse(const char *text, size_t len, const char *file,
                                                const tmatch_affinity_topo_sel_t *sel,
                                                const struct tmatch__slurm_topo *slurm,
                                                tmatch_error_t *err);

/* Kind names ("package", "l3", ...). */
const char *tmatch__kind_name(int kind);

/* Explicit trees. */
struct tmatch__xnode *tmatch__xnode_new(int kind);
int tmatch__xnode_add(struct tmatch__xnode *parent, struct tmatch__xnode *child);
void tmatch__xnode_free(struct tmatch__xnode *n);
/* Put `levels` virtual nodes above *slot (a parent's child pointer); 0/-1. */
int tmatch__xnode_raise(struct tmatch__xnode **slot, int levels);
struct tmatch__xnode *tmatch__xnode_copy(const struct tmatch__xnode *n);

/*
 * Turn `root` (ownership passes to the tree, also on failure) into tree's
 * balanced topo and leaf table. tree->nodes must already be set.
 */
int tmatch__xtree_finish(tmatch_affinity_tree_t *tree, struct tmatch__xnode *root,
                         tmatch_error_t *err);

/* tmatch_affinity_hostlist_expand within `max` names and `max_bytes` of
   their characters (NULs included): E2BIG beyond either. *bytes (when not
   NULL) gets the bytes the names take. */
char **tmatch__hostlist_expand_max(const char *hostlist, long max, size_t max_bytes, int *count,
                                   size_t *bytes, tmatch_error_t *err);

/* The abstract core -> OS CPU conversion (the only one). */
int tmatch__cores_to_cpuset(hwloc_topology_t topo, const char *cores, hwloc_bitmap_t out,
                            tmatch_error_t *err);

/* gpu.c: where sysfs is mounted ("/sys"; NULL sets it back): tests give a
   tree of their own to read Slingshot's CXI devices from. */
void tmatch__affinity_set_sysfs_root(const char *root);

#endif /* TMATCH_AFFINITY_PRIVATE_H */
