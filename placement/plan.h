/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/plan.h - the compiled step plan: a step's placement computed once
 * where the whole job is known, each node reading only its slice (plan.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_PLAN_H
#define TMATCH_PLACEMENT_PLAN_H

#include "affinity/affinity.h"
#include "treematch/treematch.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A step's placement computed once, where the whole job is known (`treematch
 * layout --plan`), so that each node reads only its own slice: the node's
 * ranks, their leaves in the planner's model of a node, the node's switch
 * position, and the traffic among its ranks (to map again when the node's
 * own tree differs from the model). The file is versioned and checksummed
 * (header, each index entry, each slice) and found by node name with a
 * binary search: a node reads O(log nodes + its tasks) bytes. The format is
 * in plan.c.
 */
#define TMATCH_PLAN_ANY_STEP 0xffffffffu

/* The plan format written (version 1, whose checksums and profile content
   hash were FNV-1a, is still read). */
#define TMATCH_PLACE_PLAN_VERSION 2u

/* What a plan is for; a node uses it only when all of it matches its step. */
typedef struct tmatch_place_plan_bind {
	uint64_t job_id;           /* the job it was made in (0: none, refused by nodes) */
	uint32_t step_id;          /* TMATCH_PLAN_ANY_STEP: any step of that job */
	uint32_t ntasks;           /* the step's tasks */
	uint64_t nodes_hash;       /* tmatch_place_nodes_hash of the nodes given ranks */
	uint64_t profile_size;     /* the profile file when planned: size, */
	uint64_t profile_mtime_ns; /* modification time, */
	uint64_t profile_hash;     /* content (tmatch_place_profile_stamp) */
	uint64_t node_sig;         /* tmatch_place_node_sig of the planner's node model */
	char mapper[32];           /* the mapper that made it (for messages) */
	uint32_t version;          /* of the plan read: its profile_hash's algorithm */
} tmatch_place_plan_bind_t;

typedef struct tmatch_place_plan_in {
	tmatch_place_plan_bind_t bind;
	const tmatch_comm_t *comm;           /* the profile's matrix (order <= ntasks) */
	int nnodes;                          /* nodes of node_name */
	char *const *node_name;              /* [nnodes], distinct */
	const int *node_of_rank;             /* [bind.ntasks] index in node_name */
	const int *leaf_of_rank;             /* [bind.ntasks] leaf of the node model */
	const tmatch_affinity_pos_t *prefix; /* [nnodes] switch levels then the node */
} tmatch_place_plan_in_t;

/* Write the plan of `in` (the nodes without a rank get no slice) to out.
   -1 with err (EINVAL, ENOMEM, EIO). */
int tmatch_place_plan_write(const tmatch_place_plan_in_t *in, FILE *out, tmatch_error_t *err);

/*
 * Where the plan of a step started by srun process `srun_pid` of job
 * `job_id` is kept when the cli_filter makes it (`treematch layout
 * --srun-pid`), in `dir` (the profile's directory, which the nodes read):
 * srun's side of the plugin removes that file when srun ends. 0, or -1
 * (EINVAL, ENAMETOOLONG).
 */
int tmatch_place_plan_srun_path(const char *dir, uint64_t job_id, long srun_pid, char *path,
                                size_t len);

/* One node's slice. */
typedef struct tmatch_place_slice {
	tmatch_place_plan_bind_t bind; /* the file's header */
	uint32_t nnodes;               /* slices in the file */
	char node[64];
	int nranks;
	int *rank;                    /* [nranks] global ranks, ascending */
	int *leaf;                    /* [nranks] their leaves in the node model */
	tmatch_affinity_pos_t prefix; /* switch levels then the node */
	tmatch_comm_t *comm;          /* traffic among rank[], in that order */
} tmatch_place_slice_t;

/*
 * The slice of `node` in the plan open on fd (path names it in messages):
 * header, the index entries the search visits and the slice are checked
 * (checksums, sizes, ranks ascending and below ntasks, edges inside the
 * slice, finite weights). NULL with err: ENOENT no slice for the node,
 * EINVAL a damaged or foreign file (what is wrong), ENOMEM, EIO.
 */
tmatch_place_slice_t *tmatch_place_plan_read_slice(int fd, const char *path, const char *node,
                                                   tmatch_error_t *err);
void tmatch_place_slice_destroy(tmatch_place_slice_t *slice);

/* The plan's header alone, checked as above: its bindings and slice count. */
int tmatch_place_plan_read_head(int fd, const char *path, tmatch_place_plan_bind_t *bind,
                                uint32_t *nnodes, tmatch_error_t *err);

/* The plan's own bindings against the step a node sees: 0, or which binding
   differs (> 0) with one line in why (the plan's value and the step's). */
enum {
	TMATCH_PLACE_PLAN_OTHER_JOB = 1,
	TMATCH_PLACE_PLAN_OTHER_STEP = 2,
	TMATCH_PLACE_PLAN_OTHER_TASKS = 3,
	TMATCH_PLACE_PLAN_OTHER_NODES = 4,
	TMATCH_PLACE_PLAN_OTHER_PROFILE = 5,
};
int tmatch_place_plan_matches(const tmatch_place_plan_bind_t *plan,
                              const tmatch_place_plan_bind_t *step, char *why, size_t len);

/* A set of node names as one number, whatever their order. */
uint64_t tmatch_place_nodes_hash(char *const *names, int n);

/* The shape of a node tree (levels, arities, which leaves are real) as one
   number: equal signatures number their leaves alike. 0 when it cannot be
   computed: a plan's leaves are then never taken as they are. */
uint64_t tmatch_place_node_sig(const tmatch_affinity_tree_t *node);

/* Size and modification time of the open file fd, and when hash is not
   NULL its content hash (reads it whole) as a plan of version plan_version
   records it (XXH3; FNV-1a for version 1). -1 with err on a read error. */
int tmatch_place_profile_stamp(int fd, const char *path, uint32_t plan_version, uint64_t *size,
                               uint64_t *mtime_ns, uint64_t *hash, tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_PLAN_H */
