/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/node.h - a node's placement: the node tree of the step's CPUs, then
 * one call, tmatch_place_node(), from the step's items on this node to a
 * plain result (per local task: global rank, leaf, CPU set as an hwloc
 * bitmap, position; the node's figures), and its two halves for the
 * plugin's privilege separation (node.c).
 *
 * Index spaces: `local` = a task's index on its node (S_TASK_ID), `rank` =
 * its global task id (S_TASK_GLOBAL_ID, the MPI_COMM_WORLD rank under
 * srun), `leaf` = a leaf of the node tree's (or cluster tree's) topo.
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_NODE_H
#define TMATCH_PLACEMENT_NODE_H

#include "affinity/affinity.h"
#include "conf/config.h"
#include "conf/topology.h"
#include "placement/gpu.h"
#include "profile/profile.h"
#include "treematch/treematch.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the job's cores on this node (S_JOB_ALLOC_CORES, "0-3,8") cover
   all `node_cores` cores of the node, 0 otherwise (also for a missing or
   malformed list): what exclusive_only asks. */
int tmatch_place_job_has_whole_node(const char *job_cores, int node_cores);

/*
 * The tree of the step's CPUs on this node for `nlocal` tasks, built from
 * `opts` (source, restrictions, cpus_per_task, node_name; its smt field is
 * chosen here): one slot per core (the task gets all the core's hardware
 * threads, as Slurm counts a CPU per core), or, when the node has more
 * tasks than cores, one slot per hardware thread if that gives enough
 * slots (Slurm then placed tasks on sibling threads). With cpus_per_task >
 * 1 a slot is that many hardware threads. *smt_used (may be NULL) tells
 * which policy was taken. When even hardware threads are too few (true
 * oversubscription, srun --overcommit), fails with EOVERFLOW and one line
 * in err: "node n0: 4 tasks for 2 CPUs: ...". Other failures are those of
 * tmatch_affinity_node_load. Destroy with tmatch_affinity_tree_destroy.
 */
/* The plugin's SMT policy for a step's tasks of cpus_per_task CPUs, before
   more tasks than cores make it hardware threads: a whole core per task
   (TMATCH_AFFINITY_SMT_CORE), or hardware threads (SMT_ALL) with -c > 1.
   What a front end takes to show or bind as the plugin binds. */
int tmatch_place_smt_policy(int cpus_per_task);

tmatch_affinity_tree_t *tmatch_place_node_tree(const tmatch_affinity_opts_t *opts, int nlocal,
                                               int *smt_used, tmatch_error_t *err);

/* The step on this node, as the front end read it. */
typedef struct tmatch_place_node_in {
	const tmatch_config_t *cfg; /* the policy: mapper, metric, coll, seed, max_map_time,
	                               max_map_memory, exclusive_only, topology_xml, dry_run */
	/* The communication: a profile (cfg's metric and coll choose its matrix), or
	   a matrix when profile is NULL. Ranks are global. */
	const tmatch_profile_t *profile;
	const tmatch_comm_t *comm;
	/* Or this node's slice of a compiled step plan (plan.c): its leaves are
	   used when the node tree has the plan's shape, else its traffic is
	   mapped here; the profile is not read. */
	const struct tmatch_place_slice *slice;
	int user_profile; /* 0: the admin's default profile, which applies only to steps
	                     of its own size (others are skipped) */
	/* The step's items on this node. */
	const char *node_name;  /* "n1"; NULL = tmatch_place_node_name(nodelist, node_index) */
	int node_index;         /* S_JOB_NODEID */
	int node_count;         /* S_JOB_NNODES */
	const char *nodelist;   /* the step's nodes (SLURM_STEP_NODELIST); NULL = unknown */
	const char *step_cores; /* S_STEP_ALLOC_CORES, Slurm abstract cores; NULL = all */
	const char *job_cores;  /* S_JOB_ALLOC_CORES, for exclusive_only; NULL = unknown */
	int cpus_per_task;      /* 0/1 = one */
	const int *ranks;       /* [nlocal]: the global rank of each local task */
	int nlocal;
	int ntasks_total; /* S_JOB_TOTAL_TASK_COUNT */
	/* The hardware. topology: NULL = cfg->topology_xml when set (binding allowed
	   unless dry_run), else this machine; or "xml:FILE" / "synthetic:STRING"
	   (tests, dry runs; never bound). */
	const char *topology;
	/* The node's hwloc XML, already read, NUL at [topology_xml_len]:
	   cfg->topology_xml's bytes (slurmstepd reads the admin's files at init,
	   while it is root), or, without topology_xml, the machine as the root
	   side loaded it (tmatch_affinity_tree_xml), for the plugin's helper;
	   NULL = read cfg->topology_xml, or this machine. */
	const char *topology_xml_text;
	size_t topology_xml_len;
	/* The switches, for the position only (placement stays on the node): a
	   cluster tree the caller built, else topology_conf (a topology.yaml or
	   topology.conf path, the topology topology_sel picks, NULL = one flat
	   switch; a file that does not parse counts as NULL) over nodelist,
	   when node_count > 1. */
	const tmatch_affinity_tree_t *cluster;
	const char *topology_conf;
	const tmatch_conf_topo_sel_t *topology_sel;
	/* Map in a forked child limited to cfg->max_map_time and max_map_memory
	   (the caller must outlive whatever the mapping does); 0 = in process,
	   as in the plugin's helper, which is already such a child. */
	int isolate;
	tmatch_log_fn log; /* the node tree's warnings; NULL = silence */
	void *log_arg;
	/* A GPU step (NULL: none): what Slurm says of its GPUs here. The node
	   tree is then loaded with its devices (prepare), and each task gets
	   its CPUs, GPUs and card together (tmatch_place_gpu_decide, in
	   process even with isolate); without SLURM_STEP_GPUS, as without. */
	const tmatch_place_gpu_env_t *gpu_env;
} tmatch_place_node_in_t;

/* One local task's placement. */
typedef struct tmatch_place_task {
	int rank;                  /* global rank */
	int leaf;                  /* leaf of the node tree */
	hwloc_bitmap_t cpuset;     /* its CPUs (pu_os), owned by the result */
	tmatch_affinity_pos_t pos; /* switch levels, node, then the node's levels */
	/* A GPU step: its GPUs (positions in the node's devices, ngpus of them,
	   owned by the result) and card (-1: none); gpu_mode says whose they are */
	int ngpus;
	int *gpu;
	int nic;
	int gpu_mode; /* enum tmatch_place_gpu_mode */
} tmatch_place_task_t;

/* Whose GPUs a task has (tmatch_place_gpu_task). */
enum tmatch_place_gpu_mode {
	TMATCH_GPU_MODE_OURS = 0, /* the decision's: its variables set to them */
	TMATCH_GPU_MODE_FOLLOW,   /* Slurm's binding kept, the CPUs and card follow */
	TMATCH_GPU_MODE_KEEP,     /* Slurm's binding of CPUs and GPUs both kept */
};

enum tmatch_place_status {
	TMATCH_PLACE_PLACED = 0,  /* task[] holds the placement */
	TMATCH_PLACE_SKIPPED = 1, /* the policy leaves this step to Slurm: see why */
};

/* A node's placement: plain data (no pointer into a tree or a profile). */
typedef struct tmatch_place_node {
	int status;     /* enum tmatch_place_status */
	int why_level;  /* SKIPPED: TMATCH_LOG_DEBUG (admin text) or TMATCH_LOG_INFO (user text) */
	char why[512];  /* SKIPPED: one line saying why, without the "treematch: " prefix */
	char note[512]; /* PLACED, verbose, first node: the predicted gain, or "" */
	int record;     /* SKIPPED in learn mode with nothing stored yet: record this run */
	int ntasks;     /* PLACED: tasks on this node */
	tmatch_place_task_t *task; /* [ntasks], by local id */
	char node_name[64];
	int node_index, node_count;
	int cpus_per_task;
	int smt;                /* enum tmatch_affinity_smt the node tree uses */
	hwloc_bitmap_t allowed; /* the step's CPUs on this node (PLACED) */
	char mapper[64];
	double cost;             /* the mapping's cost on the node tree (tmatch_eval) */
	double cost_packed;      /* the same for tasks packed in leaf order (Slurm's block) */
	double map_seconds;      /* wall time of the mapping */
	double node_cpu_seconds; /* CPU time of the whole node's work; set by the front end */
	double node_seconds;     /* wall time of the whole node's work (profile, tree, mapping);
	                            set by the front end, 0 = unknown */
	/* PLACED by the default mapper: the search it was given (search_time,
	   tmatch_place_search_time) and the policy's search_time when that was
	   cut to half of max_map_time (else 0) */
	double search_time, search_cut_from;
	/* A GPU step (PLACED): its GPUs here (NULL: not a GPU step), the GPUs
	   each task got from the decision, the vendor of its GPUs (enum
	   tmatch_affinity_gpu_vendor), and the node's devices when known (the
	   front end's, to name GPUs and cards; not owned) */
	tmatch_place_gpu_step_t *gpu_step;
	int gpus_per_task;
	int gpu_vendor;
	const tmatch_affinity_devices_t *devices;
} tmatch_place_node_t;

/*
 * The job's environment gives the node list (22.05's spank.h has no item for
 * it), so it is checked before anything is expanded: the list, when it
 * names exactly node_count hosts (S_JOB_NNODES; counted without expanding,
 * tmatch_affinity_hostlist_count), else NULL: a forged n[0-999999] in a
 * 2-node step costs one pass over its text, not a million names.
 */
const char *tmatch_place_checked_nodelist(const char *nodelist, int node_count);

/* The name of node `node_index` of a checked node list, in a new string;
   "localhost" when the list is unknown, malformed or does not name exactly
   node_count hosts. NULL/ENOMEM. */
char *tmatch_place_node_name(const char *nodelist, int node_index, int node_count);
/* The same, and from the one expansion *nodes_hash = tmatch_place_nodes_hash
   of the list's names (0 when the list is not checked). */
char *tmatch_place_node_name_hash(const char *nodelist, int node_index, int node_count,
                                  uint64_t *nodes_hash);

/*
 * Place this node's tasks, with every decision in order: an admin default
 * profile of another size than the step, or exclusive_only on a job without
 * the whole node, gives status SKIPPED (why says it); otherwise the node
 * tree of the step's CPUs (tmatch_place_node_tree: SMT policy, cpus per
 * task), the cluster tree for the positions, then tmatch_place_node_map.
 * On success *out (free with tmatch_place_node_destroy) and, when node_tree
 * is not NULL and the step was placed, *node_tree, the tree to bind through
 * (tmatch_affinity_bind_cpuset; destroy it with tmatch_affinity_tree_destroy).
 * Failures (-1) leave one line in err->msg, ready for the log:
 * "node n0: 4 tasks for 2 CPUs: ..." (EOVERFLOW), "n0: cannot build the node
 * topology: ...", "n0: <what the mapping said>" (EINVAL, ETIME, ENOMEM,
 * EIO...).
 */
int tmatch_place_node(const tmatch_place_node_in_t *in, tmatch_place_node_t **out,
                      tmatch_affinity_tree_t **node_tree, tmatch_error_t *err);

/*
 * tmatch_place_node in two halves, for the plugin, whose root side may only
 * touch what Slurm and the admin give it:
 * - prepare: from in->cfg's admin keys (topology_xml, exclusive_only),
 *   in->topology, step_cores, job_cores, cpus_per_task and nlocal only: the
 *   node tree (SMT policy, CPUs per task) or why not, and whether the job
 *   has the whole node. Reads no profile, no node list, no user option.
 *   -1 when there is no tree (prep->tree_error says why, without the node's
 *   name); the decision is still decide's.
 * - decide: everything else, in tmatch_place_node's order (default profile
 *   of another size, exclusive_only, no tree, the mapping).
 */
typedef struct tmatch_place_node_prep {
	tmatch_affinity_tree_t *tree; /* NULL: tree_errno and tree_error say why */
	int smt;                      /* enum tmatch_affinity_smt of the tree */
	int whole;                    /* 0: exclusive_only and the job lacks the whole node */
	int tree_errno;
	char tree_error[600];
} tmatch_place_node_prep_t;
int tmatch_place_node_prepare(const tmatch_place_node_in_t *in, tmatch_place_node_prep_t *prep);
int tmatch_place_node_decide(const tmatch_place_node_in_t *in, const tmatch_place_node_prep_t *prep,
                             tmatch_place_node_t **out, tmatch_error_t *err);
void tmatch_place_node_prep_clear(tmatch_place_node_prep_t *prep);

/*
 * The mapping part of tmatch_place_node on a node tree the caller built
 * (`node`: the step's CPUs on this node, cpus_per_task CPUs per leaf). The
 * matrix of the node's ranks (tmatch_place_comm of the profile, restricted
 * by tmatch_comm_submatrix to in->ranks: traffic with other nodes' ranks is
 * dropped, a plugin cannot move tasks between nodes) is mapped onto the
 * tree with cfg's mapper and seed, in a limited child when in->isolate;
 * the cost is compared with the packed placement; every task gets its CPU
 * set and position. Fails (-1, one line in err) when the node has fewer
 * slots than tasks (EOVERFLOW), the profile's rank count differs from the
 * step's (EINVAL), the mapping fails or exceeds its limits (ETIME, ENOMEM,
 * EIO). The skip decisions are not made here.
 */
int tmatch_place_node_map(const tmatch_place_node_in_t *in, const tmatch_affinity_tree_t *node,
                          tmatch_place_node_t **out, tmatch_error_t *err);

void tmatch_place_node_destroy(tmatch_place_node_t *node);

/* The default mapper's extra search on a node: cfg->search_time, at most
   half of cfg->max_map_time (the search is counted in steps: a slow node
   must still finish within the limit). *capped (may be NULL): 1 when the
   policy's search_time was cut to that half, which the node's summary says
   (tmatch_place_summary_line, verbose), else 0. */
double tmatch_place_search_time(const tmatch_config_t *cfg, int *capped);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_NODE_H */
