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
#include "affinity/network.h"

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
	char **nodes; /* names, NULL-terminated */
	int ncap;     /* entries nodes has room for (its NULL included) */
	int made;     /* 1: made by us (an aggregated block, a segment, a tile),
	                 not named in the file: no file's name refers to it */
};

struct tmatch_affinity_conf {
	int nsw;
	struct tmatch__sw *sw;
	int kind;      /* enum tmatch_affinity_net_kind */
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
