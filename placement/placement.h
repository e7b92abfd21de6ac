/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement.h - every decision of the SPANK plugin, without Slurm.
 *
 * spank/treematch.c only reads SPANK items and hands them here; this file
 * decides whether a step is handled, computes where each local task goes,
 * what the task's environment gets and what the user is told. It is linked
 * into the plugin and into the unit tests (tests/unit/test_placement_plan.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; no printing, no global state.
 *
 * Index spaces: `local` = the task's index on this node (S_TASK_ID), `rank`
 * = its global task id (S_TASK_GLOBAL_ID, the MPI_COMM_WORLD rank under
 * srun), `leaf` = a leaf of the node tree's topo.
 */
#ifndef TMATCH_PLACEMENT_PLACEMENT_H
#define TMATCH_PLACEMENT_PLACEMENT_H

#include "affinity/affinity.h"
#include "placement/config.h"
#include "profile/profile.h"
#include "treematch/treematch.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Slurm's special step ids (slurm.h), repeated so this file needs no Slurm. */
#define TMATCH_STEP_PENDING     0xfffffffdu
#define TMATCH_STEP_EXTERN      0xfffffffcu
#define TMATCH_STEP_BATCH       0xfffffffbu
#define TMATCH_STEP_INTERACTIVE 0xfffffffau

/* 1 for the steps the plugin acts on (ordinary srun steps), 0 for the batch
   script, the extern container, interactive and pending steps. */
int tmatch_spank_step_is_handled(uint32_t step_id);

/*
 * exclusive_only: 1 when the job's cores on this node (S_JOB_ALLOC_CORES,
 * "0-3,8") cover all `node_cores` cores of the node, 0 otherwise (also for
 * a missing or malformed list).
 */
int tmatch_spank_job_has_whole_node(const char *job_cores, int node_cores);

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

/*
 * What the user's --treematch value asks for before the grammar sees it:
 * TMATCH_SPANK_VALUE_HELP for "help" (print tmatch_spank_help_text and stop),
 * TMATCH_SPANK_VALUE_OPTIONS for anything else (including "off": the grammar
 * turns that into enabled=0). -1/EINVAL for NULL or an empty value.
 */
enum { TMATCH_SPANK_VALUE_OPTIONS = 0, TMATCH_SPANK_VALUE_HELP = 1 };
int tmatch_spank_classify_value(const char *value, tmatch_error_t *err);

/* The text printed for --treematch=help (static, never NULL). */
const char *tmatch_spank_help_text(void);

/*
 * Effective configuration: built-in defaults, then plugstack.conf arguments
 * (argc/argv as SPANK passes them), then the admin file named by the
 * `admin_file=PATH` argument if any (already opened by the caller: admin_fd,
 * -1 = none), then the user's value (NULL = no --treematch). Limits are
 * capped by the admin's, a mapper outside allowed_mappers is refused.
 * Returns 0, or -1 with err naming the source ("plugstack.conf",
 * "--treematch") and what to fix; on error *out is unchanged.
 */
int tmatch_spank_config(int argc, char *const *argv, int admin_fd, const char *user_value,
                        tmatch_config_t *out, tmatch_error_t *err);

/* The admin file named in argv ("admin_file=PATH"), or NULL. Static storage in argv. */
const char *tmatch_spank_admin_file(int argc, char *const *argv);

/* Profile limits from the effective configuration. */
void tmatch_spank_limits(const tmatch_config_t *cfg, tmatch_profile_limits_t *lim);

/*
 * The check srun runs before launching anything: the profile has exactly
 * `ntasks` ranks (ntasks <= 0: unknown, not checked) and the mapper name is
 * valid. -1/EINVAL with a message saying what to fix.
 */
int tmatch_spank_check_profile(const tmatch_config_t *cfg, const tmatch_profile_t *prof, int ntasks,
                               tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* The node tree                                                             */

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
tmatch_affinity_tree_t *tmatch_spank_node_tree(const tmatch_affinity_opts_t *opts, int nlocal,
                                               int *smt_used, tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* The plan of one node                                                      */

typedef struct tmatch_spank_task {
	int rank;           /* global rank */
	int leaf;           /* leaf of the node tree */
	char cpulist[512];  /* OS CPU list, "0-1,4" */
	char cpumask[160];  /* Slurm-style mask, "0x13" */
	char levels[160];   /* "switch,node,package,core" */
	char index[160];    /* "0,1,0,5" */
	char count[160];    /* "2,4,1,2" */
	char position[384]; /* "switch=0/2,node=1/4,package=0/1,core=1/2" */
} tmatch_spank_task_t;

typedef struct tmatch_spank_plan {
	int ntasks;                /* tasks on this node */
	tmatch_spank_task_t *task; /* [ntasks], by local id */
	char node_name[64];
	int node_index, node_count;
	int cpus_per_task;
	char mapper[64];
	double cost;        /* the mapping's cost on the node tree (tmatch_eval) */
	double cost_packed; /* the same for tasks packed in leaf order (Slurm's block default) */
	double map_seconds; /* wall time of the mapping */
	double node_cpu_seconds; /* CPU time of the same (thread CPU clock), set by the caller */
	double node_seconds; /* wall time of the whole node plan (profile, tree, mapping), set by
	                        the caller; 0 = unknown */
} tmatch_spank_plan_t;

/* Inputs about the step on this node, read by the glue from SPANK items. */
typedef struct tmatch_spank_node_info {
	const char *node_name; /* "n1" */
	int node_index;        /* S_JOB_NODEID */
	int node_count;        /* S_JOB_NNODES */
	int cpus_per_task;     /* SLURM_CPUS_PER_TASK, 0/1 = one */
	const int *ranks;      /* [nlocal] global rank of each local task */
	int nlocal;
	int ntasks_total; /* S_JOB_TOTAL_TASK_COUNT */
	/* Cluster tree of the step (switches, nodes), only used for the
	   position: NULL = this node only, with node=node_index/node_count. */
	const tmatch_affinity_tree_t *cluster;
	int cluster_node; /* this node's index in `cluster` */
} tmatch_spank_node_info_t;

/*
 * Map this node's tasks. The profile's rows for the node's ranks give a
 * sub-matrix (weights between ranks of other nodes are dropped: a SPANK
 * plugin cannot move tasks between nodes); it is mapped onto `node` (the
 * step's CPUs on this node, cpus_per_task cores per leaf) with cfg's mapper,
 * metric and seed, capped by max_map_time. Fails (-1, err says why, one line)
 * when the node has fewer slots than tasks (EOVERFLOW), the profile's rank
 * count differs from the step's (EINVAL), the mapping fails or exceeds its
 * time budget (ETIME). The mapping runs in a child process with hard limits
 * (tmatch__place_isolate_map): also ENOMEM over max_map_memory, EIO when it
 * crashes. *out is set only on success; free with
 * tmatch_spank_plan_destroy.
 */
int tmatch_spank_plan_compute(const tmatch_config_t *cfg, const tmatch_profile_t *prof,
                              const tmatch_affinity_tree_t *node,
                              const tmatch_spank_node_info_t *info, tmatch_spank_plan_t **out,
                              tmatch_error_t *err);

void tmatch_spank_plan_destroy(tmatch_spank_plan_t *plan);

/* ------------------------------------------------------------------------ */
/* What a task gets                                                          */

typedef struct tmatch_spank_env {
	char name[48];
	char value[512];
	int overwrite; /* 0: only when the user has not set it */
} tmatch_spank_env_t;

#define TMATCH_SPANK_MAX_ENV 32

/*
 * The environment of local task `local`: TREEMATCH_RANK, TREEMATCH_CPUS,
 * TREEMATCH_CPU_MASK, TREEMATCH_LEVELS, TREEMATCH_INDEX, TREEMATCH_COUNT,
 * TREEMATCH_POSITION, TREEMATCH_MAPPER, TREEMATCH_DRY_RUN (overwritten);
 * OMP_NUM_THREADS, OMP_PLACES, OMP_PROC_BIND when cpus_per_task > 1 (only if
 * unset); with mpi_pin the variables that keep Open MPI, MPICH/Hydra, Intel
 * MPI and MVAPICH from re-pinning (only if unset). Returns the number of
 * entries written to env[0..max), -1/EINVAL for a bad local id.
 */
int tmatch_spank_task_env(const tmatch_spank_plan_t *plan, const tmatch_config_t *cfg, int local,
                          tmatch_spank_env_t *env, int max);

/*
 * One line per task in the style of --cpu-bind=verbose:
 * "treematch: cpu-bind=MAP - n0, task  1  1 [4242]: cpus 1 mask 0x2 set"
 * ("... not set (dry-run)" in dry-run). snprintf-style.
 */
int tmatch_spank_verbose_line(const tmatch_spank_plan_t *plan, int local, long pid, int dry_run,
                              char *buf, size_t len);

/*
 * The node's summary: "treematch: n0: 4 tasks mapped by treematch in 0.3 ms,
 * cost 12 (packed 20, -40.0%)". snprintf-style.
 */
int tmatch_spank_summary_line(const tmatch_spank_plan_t *plan, int dry_run, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_PLACEMENT_H */
