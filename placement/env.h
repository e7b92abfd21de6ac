/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/env.h - what a task gets: its environment and the lines the user
 * is told per task and per node (env.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_ENV_H
#define TMATCH_PLACEMENT_ENV_H

#include "conf/config.h"
#include "placement/node.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tmatch_place_env {
	char name[48];
	char *value;   /* any length; freed by tmatch_place_env_free; NULL: unset */
	int overwrite; /* 0: only when the user has not set it */
} tmatch_place_env_t;

/*
 * The environment of local task `local`: TREEMATCH_RANK, TREEMATCH_CPUS,
 * TREEMATCH_CPU_MASK, TREEMATCH_LEVELS, TREEMATCH_INDEX, TREEMATCH_COUNT,
 * TREEMATCH_POSITION, TREEMATCH_MAPPER, TREEMATCH_DRY_RUN (overwritten);
 * OMP_NUM_THREADS, OMP_PLACES, OMP_PROC_BIND when cpus_per_task > 1 (only if
 * unset); with mpi_pin (and not dry_run) the variables that keep Open MPI,
 * MPICH/Hydra, Intel MPI and MVAPICH from re-pinning (only if unset).
 * A GPU step: TREEMATCH_GPUS (the GPUs' indices) and TREEMATCH_NIC (the
 * card, "" for none); when the GPUs are the decision's (gpu_mode OURS) and
 * not dry_run, the vendor's variable, numbered as the task sees its GPUs
 * (CUDA_VISIBLE_DEVICES with CUDA_DEVICE_ORDER=PCI_BUS_ID, ROCR_VISIBLE_DEVICES
 * or ZE_AFFINITY_MASK; another vendor's, and GPU_DEVICE_ORDINAL, unset:
 * value NULL) and SLURM_STEP_GPUS; with Slurm's GPUs (FOLLOW) its
 * variables stay; not dry_run and cfg->nic_env: the card's variables of
 * tmatch_place_nic_vars (only if unset). Values are as long as they need to be. Returns the number
 * of entries in *env (free with tmatch_place_env_free), -1 with errno (EINVAL for a bad local id or
 * a skipped node, ENOMEM).
 */
int tmatch_place_task_env(const tmatch_place_node_t *node, const tmatch_config_t *cfg, int local,
                          tmatch_place_env_t **env);
void tmatch_place_env_free(tmatch_place_env_t *env, int n);

/*
 * The variables an MPI library or its transport reads to choose the card
 * `nic`, by kind of card, each only where the card is of the kind that
 * library takes that name for:
 *   InfiniBand/RoCE of NVIDIA (Mellanox), OpenFabrics mlx*: UCX_NET_DEVICES
 *     and OMPI_MCA_btl_openib_if_include, "mlx5_0:1" (UCX, Open MPI 4's openib);
 *   AWS EFA, OpenFabrics of PCI vendor 0x1d0f: FI_EFA_IFACE, the verbs
 *     device's name (libfabric's efa provider, 1.22 and later);
 *   HPE Slingshot whose CXI device hwloc shows (cxiN, hwloc 2.14 and later):
 *     FI_CXI_DEVICE_NAME (libfabric's cxi provider, Cray MPICH).
 * A Slingshot card known only by its interface (hsiN, hsnN) gets none: its
 * CXI device's number cannot be told from the interface's. Fills var[] and
 * returns how many (0 for none or a NULL nic).
 */
#define TMATCH_PLACE_NIC_VARS 2
typedef struct tmatch_place_nic_var {
	const char *name;
	char value[40];
} tmatch_place_nic_var_t;
int tmatch_place_nic_vars(const tmatch_affinity_nic_t *nic,
                          tmatch_place_nic_var_t var[TMATCH_PLACE_NIC_VARS]);

/*
 * One line per task in the style of --cpu-bind=verbose, in a new string:
 * "treematch: cpu-bind=MAP - n0, task  1  1 [4242]: cpus 1 mask 0x2 set"
 * ("... not set (dry-run)" in dry-run). NULL with errno.
 */
char *tmatch_place_verbose_line(const tmatch_place_node_t *node, int local, long pid, int dry_run);

/*
 * A GPU step's second line per task, in the style of --gpu-bind=verbose:
 * "treematch: gpu-bind=MAP - n0, task  1  1 [4242]: gpus 2 (nvml2) nic
 * mlx5_0 (UCX_NET_DEVICES=mlx5_0:1 OMPI_MCA_btl_openib_if_include=mlx5_0:1)
 * set" (the decision's GPUs; the card's variables, tmatch_place_nic_vars,
 * when nic_env), "... gpus 3 (nvml3) nic hsi0, Slurm's GPUs, cpus follow"
 * (FOLLOW), "... Slurm's binding kept: WHY" (KEEP; why may be NULL); "not
 * set (dry-run)". NULL with errno (EINVAL when the task has no GPU).
 */
char *tmatch_place_gpu_verbose_line(const tmatch_place_node_t *node, int local, long pid,
                                    int dry_run, int nic_env, const char *why);

/*
 * The node's summary, in a new string: "treematch: n0: 4 task(s) mapped by
 * treematch in 0.3 ms, cost 12 (packed 20, -40.0%)", and when the policy's
 * search_time was cut (tmatch_place_search_time) ", search_time=30 s cut to
 * 5 s (half of max_map_time)". NULL with errno.
 */
char *tmatch_place_summary_line(const tmatch_place_node_t *node, int dry_run);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_ENV_H */
