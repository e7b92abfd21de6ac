/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/gpu.h - a step's GPUs and network cards: what Slurm says of them,
 * how Slurm binds them, the decision of each task's CPUs, GPUs and card,
 * its evaluation and the bindings format (gpu.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_GPU_H
#define TMATCH_PLACEMENT_GPU_H

#include "affinity/affinity.h"
#include "treematch/treematch.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tmatch_place_node; /* placement/node.h */

/* Most GPUs a node's step may hold (MI300A CPX nodes have 24) and a task. */
#define TMATCH_PLACE_MAX_GPUS 256

/* The variables Slurm sets for a step's GPUs (its gres.conf flags). */
enum {
	TMATCH_GPU_VAR_CUDA = 1,    /* CUDA_VISIBLE_DEVICES */
	TMATCH_GPU_VAR_ROCR = 2,    /* ROCR_VISIBLE_DEVICES */
	TMATCH_GPU_VAR_ZE = 4,      /* ZE_AFFINITY_MASK */
	TMATCH_GPU_VAR_ORDINAL = 8, /* GPU_DEVICE_ORDINAL */
};

/* What Slurm says of the step's GPUs in the job's environment on this node
   (user_init: the step's lists, not yet a task's), copied, any may be NULL. */
typedef struct tmatch_place_gpu_env {
	const char *step_gpus;                  /* SLURM_STEP_GPUS: Slurm's indices on the node */
	const char *cuda, *rocr, *ze, *ordinal; /* the vendors' variables */
	const char *cgroup_conf; /* the admin's cgroup.conf text (ConstrainDevices) */
} tmatch_place_gpu_env_t;

/* The step's GPUs on this node. */
typedef struct tmatch_place_gpu_step {
	int ngpus;
	int gpu[TMATCH_PLACE_MAX_GPUS];   /* positions in devices->gpu, by index */
	int index[TMATCH_PLACE_MAX_GPUS]; /* their indices (Slurm's numbers on the node) */
	int node_gpus;                    /* the node's GPUs */
	/* 1: Slurm numbers GPUs as a task sees them (ConstrainDevices: a task
	   sees only its step's, or its own, GPUs, counted from 0) */
	int relative;
	/* 1: a task Slurm binds GPUs to can open only those (ConstrainDevices) */
	int constrained;
	unsigned vars; /* TMATCH_GPU_VAR_* Slurm set */
} tmatch_place_gpu_step_t;

/* 1 when Slurm names GPUs (SLURM_STEP_GPUS is set and not empty; nothing
   read of it): the node tree is then loaded with its devices. */
int tmatch_place_gpu_env_has_gpus(const tmatch_place_gpu_env_t *env);

/* The first GPU SLURM_STEP_GPUS names that dev lacks, or -1 (none, or no
   list that parses). */
int tmatch_place_gpu_unknown(const tmatch_affinity_devices_t *dev,
                             const tmatch_place_gpu_env_t *env);

/*
 * The step's GPUs from what Slurm says (SLURM_STEP_GPUS, checked against
 * the node's devices), whether its numbering is relative (the vendors'
 * variables differ from SLURM_STEP_GPUS, or cgroup.conf has
 * ConstrainDevices=yes). 0; 1 when the step has no GPU here (no
 * SLURM_STEP_GPUS, or an empty one); -1/EINVAL when SLURM_STEP_GPUS is
 * malformed or names a GPU the node does not have (err says which).
 */
int tmatch_place_gpu_step(const tmatch_affinity_devices_t *dev, const tmatch_place_gpu_env_t *env,
                          tmatch_place_gpu_step_t *step, tmatch_error_t *err);

/* How Slurm binds GPUs to tasks (SLURMD_TRES_BIND, a task's environment). */
enum {
	TMATCH_GPU_BIND_NONE = 0, /* every task sees the step's GPUs: ours to give */
	TMATCH_GPU_BIND_PER_TASK, /* --gpus-per-task: N GPUs to each task, in order */
	TMATCH_GPU_BIND_MAP,      /* --gpu-bind=map_gpu: */
	TMATCH_GPU_BIND_MASK,     /* --gpu-bind=mask_gpu: */
	TMATCH_GPU_BIND_SINGLE,   /* --gpu-bind=single:N, --ntasks-per-gpu */
	TMATCH_GPU_BIND_CLOSEST,  /* --gpu-bind=closest */
};

/*
 * Slurm's binding of the local tasks from its tres_bind string ("gpu:per_task:1",
 * "gpu:verbose,map_gpu:3,2", NULL or "" = none) as slurmstepd computes it:
 * *kind; for PER_TASK, MAP, MASK and SINGLE, task i's GPUs in
 * gpus[i * step->ngpus...] (positions in devices->gpu, count[i] of them;
 * map and mask values are node indices, or indices among the step's GPUs
 * when step->relative; an empty result is the step's first GPU, as Slurm
 * does). SINGLE is computed as without Cores= in gres.conf (every step GPU
 * near every task). gpus and count: arrays of nlocal * step->ngpus and
 * nlocal, or NULL to get the kind only. -1/EINVAL for a string Slurm would
 * refuse (a value outside the node's GPUs).
 */
int tmatch_place_gpu_slurm_bind(const char *tres_bind, const tmatch_place_gpu_step_t *step,
                                int nlocal, int *kind, int *gpus, int *count, tmatch_error_t *err);

/*
 * The decision: each local task's CPUs (a leaf of the node tree), GPUs and
 * network card together.
 *
 * Free (fixed NULL): the step's GPUs in units of gpus_per_task (0: as many
 * as the step has for each task, at least one) chosen close together; each
 * unit takes tasks_per_gpu tasks (0: as many as needed for all) on CPU slots
 * inside its GPUs' locality; the ranks are mapped (the tree: package, GPU
 * island, NUMA node, device, unit, slot) so that those that exchange most
 * share a GPU, an island, a package; each unit's card is the closest to its
 * first GPU, cards of equal closeness taken in turn.
 * Follow (fixed: Slurm's GPUs of each task, as tmatch_place_gpu_slurm_bind
 * gives them): the GPUs are kept, the CPUs follow them (inside each GPU's
 * locality, tasks in the order of `hint`, leaves of an earlier free
 * decision, else local order), and the cards.
 * CPUs come from the leaves of `tree` that are real; where a locality has
 * too few, the nearest (same package, then any), counted in *outside.
 */
typedef struct tmatch_place_gpu_in {
	const tmatch_affinity_tree_t *tree;
	const tmatch_affinity_devices_t *dev;
	const tmatch_place_gpu_step_t *step;
	const tmatch_comm_t *comm; /* nlocal x nlocal, local order (free decision only) */
	int nlocal;
	int gpus_per_task, tasks_per_gpu;
	const int *fixed, *fixed_count; /* follow: as tmatch_place_gpu_slurm_bind (a row of
	                                   step->ngpus per task) */
	const int *hint;                /* follow: [nlocal] leaves, NULL */
	const char *mapper;             /* NULL = TMATCH_DEFAULT_MAPPER */
	uint64_t seed;
	double time_budget;
} tmatch_place_gpu_in_t;

typedef struct tmatch_place_gpu_out {
	int nlocal;
	int *leaf;   /* [nlocal] */
	int stride;  /* GPUs a row of gpu holds */
	int *ngpus;  /* [nlocal] */
	int *gpu;    /* [nlocal * stride]: task i's in gpu[i * stride..], positions in
	                dev->gpu */
	int *nic;    /* [nlocal] position in dev->nic, -1 when the node has none */
	int outside; /* tasks whose CPUs are not all inside their first GPU's locality */
} tmatch_place_gpu_out_t;

int tmatch_place_gpu_decide(const tmatch_place_gpu_in_t *in, tmatch_place_gpu_out_t *out,
                            tmatch_error_t *err);
void tmatch_place_gpu_out_free(tmatch_place_gpu_out_t *out);

/*
 * In order, as Slurm gives them without a profile: task i the step's GPUs
 * i*k.. (k = gpus_per_task as in the decision; with more tasks than units,
 * a block of tasks per unit), the i-th real leaf, the closest card. What
 * `treematch eval` and the tests compare the decision with.
 */
int tmatch_place_gpu_in_order(const tmatch_place_gpu_in_t *in, tmatch_place_gpu_out_t *out,
                              tmatch_error_t *err);

/* The kinds of link between the GPUs of two tasks. */
enum {
	TMATCH_GPU_LINK_SAME = 0, /* one GPU */
	TMATCH_GPU_LINK_DEVICE,   /* partitions of one device (MI300A CPX) */
	TMATCH_GPU_LINK_DIRECT,   /* a direct NVLink/xGMI link */
	TMATCH_GPU_LINK_SWITCH,   /* one island, through NVSwitches or an xGMI hive */
	TMATCH_GPU_LINK_PACKAGE,  /* no link, one package (PCIe, host memory) */
	TMATCH_GPU_LINK_ACROSS,   /* no link, other packages */
	TMATCH_GPU_LINK_KINDS
};
extern const char *const tmatch_place_gpu_link_names[TMATCH_GPU_LINK_KINDS];

/* What a placement of GPUs gives: the traffic between tasks by the kind of
   link between their (first) GPUs, the traffic whose GPUs are on two
   packages (whatever the link), and the targets' counts. */
typedef struct tmatch_place_gpu_eval {
	double traffic[TMATCH_GPU_LINK_KINDS];
	double across_packages;
	double total;
	int outside;    /* tasks whose CPUs leave their first GPU's locality */
	int cpu_shared; /* tasks sharing a CPU with another task */
	int gpu_shared; /* GPUs given to more than one task */
	int nic_astray; /* tasks whose card is on another package while their
	                   GPU's package has one */
} tmatch_place_gpu_eval_t;

int tmatch_place_gpu_evaluate(const tmatch_place_gpu_in_t *in, const tmatch_place_gpu_out_t *out,
                              tmatch_place_gpu_eval_t *ev, tmatch_error_t *err);

/*
 * The bindings format (`treematch map --format bindings`, read by eval and
 * draw), one line per rank: "RANK cpus=CPULIST gpus=LIST nic=NAME", CPULIST
 * in the OS numbering of /proc's Cpus_allowed_list, LIST the GPUs' indices
 * (hwloc's nvmlN, rsmiN...), "-" where there is none, then the variables
 * the plugin would give the task for its card (tmatch_place_nic_vars), as
 * "NAME=VALUE" ("nic=cxi1 FI_CXI_DEVICE_NAME=cxi1"); '#' comments.
 * line: one such line (newline included) in a new string, NULL/ENOMEM.
 * read: every rank 0..n-1 once, CPUs that are one slot of `tree` (out->leaf),
 * GPUs and card of `dev` (the card's variables, which follow from the card,
 * skipped); -1 with err naming the file, line and column.
 */
char *tmatch_place_bindings_line(int rank, hwloc_const_bitmap_t cpus, const int *gpu_index,
                                 int ngpus, const tmatch_affinity_nic_t *nic);
int tmatch_place_bindings_read(const char *path, const tmatch_affinity_tree_t *tree,
                               const tmatch_affinity_devices_t *dev, int n,
                               tmatch_place_gpu_out_t *out, tmatch_error_t *err);

/*
 * Task `local` of a placed GPU step (node->gpu_step, node->devices), in its
 * own task_init, where Slurm's per-task binding shows: tres_bind is the
 * task's SLURMD_TRES_BIND, own_gpus its SLURM_STEP_GPUS. Which GPUs the
 * task has (task->gpu_mode):
 *   no binding, or --gpu-bind=closest, or --gpus-per-task with the
 *   decision's count and devices not confined: the decision's (OURS);
 *   --gpu-bind=map_gpu, mask_gpu, single, or --gpus-per-task with
 *   ConstrainDevices: Slurm's, and the task's CPUs, GPUs and card become
 *   those the decision gives when it follows Slurm's binding of every task
 *   of the node (the same computation in each task, so they agree)
 *   (FOLLOW); single is computed as without Cores= in gres.conf, and a
 *   task that sees another GPU (Cores= chose by its CPUs), or closest with
 *   ConstrainDevices: Slurm's CPUs and GPUs both kept (KEEP, why says it).
 *   slurm_version (SLURM_VERSION_NUMBER of the Slurm the plugin runs in)
 *   says how Slurm computes single (by the task's CPUs from 23.02) and
 *   per_task (from 23.11): where ConstrainDevices hides which GPUs those
 *   gave, Slurm's CPUs and GPUs are kept (KEEP).
 * 0, or -1 with errno (EINVAL: not a placed GPU step; ENOMEM).
 */
#define TMATCH_SLURM_23_02 0x170200u /* SLURM_VERSION_NUMBER of 23.02.0 */
#define TMATCH_SLURM_23_11 0x170b00u
int tmatch_place_gpu_task(struct tmatch_place_node *node, const tmatch_affinity_tree_t *tree,
                          int local, const char *tres_bind, const char *own_gpus,
                          unsigned slurm_version, char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_GPU_H */
