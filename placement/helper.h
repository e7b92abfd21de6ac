/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/helper.h - the plugin's privilege separation, its transport: the helper
 * program opened as root, started for each step with what the root side
 * read, its answer checked field by field (helper.c, helper_job.c,
 * sandbox.c; docs/security.md).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_HELPER_H
#define TMATCH_PLACEMENT_HELPER_H

#include "conf/config.h"
#include "placement/gpu.h"
#include "placement/node.h"
#include "treematch/treematch.h"

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The helper program, opened by the root side at init (slurmstepd is root
 * there) and started from this descriptor for each step: path must name a
 * regular, executable file owned by root (or by the caller, when the caller
 * is not root: tests, a developer's build) that neither group nor others may
 * write, in directories that are the same or sticky. The descriptor
 * (O_CLOEXEC), or -1 with err saying which condition fails.
 */
int tmatch_place_helper_open(const char *path, tmatch_error_t *err);

/*
 * The helper started ahead of its step (slurmstepd's init_post_opt, as
 * root): it execs, links and sets up what needs no input while Slurm
 * prepares the step (switch, MPI, cgroups, PAM, I/O), then waits, having
 * read nothing, for the root side's word. Only the process that started
 * it may run it (tmatch_place_helper_in_t.started) or abandon it. NULL
 * with err when it cannot be started (then run starts one itself).
 */
typedef struct tmatch_place_helper_started tmatch_place_helper_started_t;
tmatch_place_helper_started_t *tmatch_place_helper_start(int helper_fd, tmatch_error_t *err);
/* Killed, reaped (at most 2 s), freed: 0, or its pid when it did not end
   (reap it later with tmatch_place_helper_reap). */
pid_t tmatch_place_helper_abandon(tmatch_place_helper_started_t *h);

/* The helper program's main (spank/helper_main.c, a front end of its own,
   so declared here): its input from fd 4, its confinement, then
   tmatch__helper_job. Never returns. */
__attribute__((noreturn)) void tmatch__helper_main(void);

/*
 * What slurmstepd's root side hands the helper: only what Slurm and the
 * admin gave it, read but not parsed. Everything the user wrote (the
 * --treematch value, the node list of the job's environment, the profile)
 * is parsed in the helper.
 */
typedef struct tmatch_place_helper_in {
	int helper_fd;                /* tmatch_place_helper_open's descriptor */
	const tmatch_config_t *admin; /* plugstack.conf + admin file, read as root */
	const char *user_value;       /* the --treematch value as received; NULL = none */
	const char *nodelist;         /* SLURM_STEP_NODELIST of the job's environment, NULL */
	const char *topology_conf;    /* topology.yaml's or topology.conf's text (read as
	                                 root), NULL = none */
	const char *topology_file;    /* its path: names it, tells the two apart */
	const char *slurm_conf;       /* slurm.conf's text (read as root), NULL = none */
	const char *partition;        /* SLURM_JOB_PARTITION of the job's environment, NULL */
	int node_index, node_count;   /* S_JOB_NODEID, S_JOB_NNODES */
	int nlocal, ntasks_total;     /* S_JOB_LOCAL_TASK_COUNT, S_JOB_TOTAL_TASK_COUNT */
	int cpus_per_task;            /* S_STEP_CPUS_PER_TASK */
	const int *ranks;             /* [nlocal] S_JOB_LOCAL_TO_GLOBAL_ID */
	const char *step_cores;       /* S_STEP_ALLOC_CORES: the helper makes its own tree */
	const char *job_cores;        /* S_JOB_ALLOC_CORES */
	uint64_t job_id;              /* S_JOB_ID, what a step plan must be for */
	uint32_t step_id;             /* S_JOB_STEPID */
	const char *plan_env;         /* TREEMATCH_PLAN of the job's environment, NULL: the
	                                 plan when the user's value names none */
	const char *learn_env;        /* TREEMATCH_LEARN of the job's environment (srun's
	                                 learn decision, tmatch_place_learn_follow), NULL */
	const tmatch_place_node_prep_t *prep; /* the node tree, built from the items */
	/* A GPU step: Slurm's variables of the job's environment and the admin's
	   cgroup.conf, copied, not parsed (NULL: none) */
	const tmatch_place_gpu_env_t *gpu_env;
	uid_t uid;           /* S_JOB_UID: the helper becomes it for good */
	gid_t gid;           /* S_JOB_GID */
	const gid_t *groups; /* the user's supplementary groups */
	int ngroups;
	/* the helper started ahead (tmatch_place_helper_start), NULL = start
	   one now; the run spends it either way */
	tmatch_place_helper_started_t *started;
} tmatch_place_helper_in_t;

typedef struct tmatch_place_helper_out {
	/* The policy tasks follow: the admin's, with what the user tightened
	   (failure=fail, dry_run) and chose (verbose, mpi_pin). enabled = 0:
	   the user said off. */
	tmatch_config_t cfg;
	int user_profile;
	char node_name[64];        /* this node's name (checked characters) */
	tmatch_place_node_t *plan; /* PLACED or SKIPPED; NULL when off or failed */
	pid_t pending;             /* > 0: a helper killed but not ended (uninterruptible sleep):
	                              reap it later, without waiting (tmatch_place_helper_reap) */
	/* a GPU step placed: the node's devices, from the root side's own tree,
	   that plan's GPUs and cards refer to (destroy it after the plan) */
	tmatch_affinity_devices_t *devices;
} tmatch_place_helper_out_t;

/* Reaps a pending helper if it has ended; never waits. */
void tmatch_place_helper_reap(pid_t pid);

/*
 * Run the helper program (in->helper_fd; placement/sandbox.c: a clean
 * memory image with no environment, the job's user for good, no other
 * descriptor, no new privileges, a seccomp allow-list, the admin's time
 * and memory limits, which the user may only lower), hand it in's fields
 * and check what it sends as it comes: versions and lengths, every rank
 * against in->ranks, every leaf in range, allowed and distinct on
 * prep->tree, positions; no more tasks than the tree has slots; CPU sets
 * come from prep->tree; messages are codes the root side formats. 0 with
 * *out (plan NULL when the user said off); -1 with one line in err ("n0:
 * bad profile ...", "n0: mapping exceeded max_map_time=2 s, killed") and
 * out->cfg the policy to follow (failure mode). Free out->plan with
 * tmatch_place_node_destroy.
 */
int tmatch_place_helper_run(const tmatch_place_helper_in_t *in, tmatch_place_helper_out_t *out,
                            tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_HELPER_H */
