/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/launcher.h - a placement written for a launcher started by hand: Open
 * MPI's rankfile, Hydra, Intel MPI, srun's lists (launcher.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_LAUNCHER_H
#define TMATCH_PLACEMENT_LAUNCHER_H

#include "affinity/affinity.h"
#include "treematch/treematch.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	TMATCH_LAUNCHER_OPENMPI = 0, /* rankfile, Open MPI 4 and 5 */
	TMATCH_LAUNCHER_MPICH = 1,   /* Hydra: -bind-to user:... */
	TMATCH_LAUNCHER_IMPI = 2,    /* I_MPI_PIN_PROCESSOR_LIST / I_MPI_PIN_DOMAIN */
	TMATCH_LAUNCHER_SRUN = 3,    /* --cpu-bind=map_cpu / mask_cpu */
};

/* "openmpi", "mpich", "impi", "srun" -> *launcher; -1/EINVAL otherwise. */
int tmatch_place_launcher_parse(const char *name, int *launcher);

/*
 * The placement leaf_of[i] (leaves of `tree`) of the n ranks rank_ids[i]
 * (NULL: 0..n-1) written for `launcher`, in a new string the caller frees:
 * the rankfile, or the one option or variable (ending in a newline).
 * host_names: write the nodes' names in the rankfile, else "+n<index>".
 * *hwthreads (may be NULL) is set to 1 when the rankfile counts hardware
 * threads (mpirun then needs --use-hwthread-cpus, or :hwtcpus in Open MPI
 * 5's --map-by rankfile). NULL with err: EINVAL when the launcher cannot
 * express the placement (the reason, and what can), ENOMEM.
 */
char *tmatch_place_launcher_text(const tmatch_affinity_tree_t *tree, const int *leaf_of,
                                 const int *rank_ids, int n, int launcher, int host_names,
                                 int *hwthreads, tmatch_error_t *err);

/*
 * The GPUs of the n local ranks (rank i's indices in gpu_index[i * stride..],
 * ngpus[i] of them) for `launcher`, in a new string ending in a newline:
 * srun's "--gpu-bind=map_gpu:A,B" (one GPU each) or "mask_gpu:0x3,0xc".
 * The other launchers have no per-rank GPU option: NULL/EINVAL saying so.
 */
char *tmatch_place_launcher_gpus(int launcher, const int *gpu_index, const int *ngpus, int stride,
                                 int n, tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_LAUNCHER_H */
