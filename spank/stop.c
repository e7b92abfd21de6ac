/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stop.c - stopping the whole step from one node, and what a failure of
 * slurm_spank_init means to Slurm.
 *
 * A problem found on one node under failure=fail, or a node that cannot
 * record a step srun decided to record, must stop every task of the step:
 * an MPI step whose ranks on one node never start leaves the others
 * waiting in MPI_Init (or in the recorder's collectives) forever. Slurm
 * does not do it by itself (measured on 22.05, 4 nodes, MPICH over pmi2: a
 * user_init or task_init that fails on one node, or a slurm_spank_init,
 * leaves the other nodes' tasks in MPI_Init until srun is killed, unless
 * the user gave srun --kill-on-bad-exit). So the node cancels the step
 * through slurmctld, as the job's user may (scancel JOB.STEP does the
 * same), with the signature of the release the plugin is built for.
 *
 * When: a problem found in user_init (every task of the node fails in
 * task_init) is cancelled from slurm_spank_task_exit, once slurmstepd has
 * sent srun this node's launch answer. Sent from user_init, the cancel
 * could reach srun first ("aborted before step completely launched"); on
 * 26.05 srun then waited for the node's task exits past its KillWait and
 * hung after "Timed out waiting for job step to complete" (seen once in
 * CI, 3 tasks on one node). A one-node step is not cancelled at all: its
 * tasks all fail, and Slurm ends the step by itself.
 *
 * Slurm 25.05 and later read slurm_spank_init_failure_mode: a failure of
 * slurm_spank_init then fails the job instead of draining the node (the
 * default, ESPANK_NODE_FAILURE). The plugin says ESPANK_JOB_FAILURE where
 * its spank.h has the symbol (TMATCH_HAVE_SPANK_FAILURE_MODE, found by
 * spank/module.mk); on older releases its slurm_spank_init never fails in
 * slurmstepd, since a failing one drains the node (a batch step's: "batch
 * job complete failure", measured on 22.05).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

/* slurm.h declares some callbacks without prototypes (26.05's, built with
   SLURM_PREFIX, is not a system header there) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <slurm/slurm.h>
#pragma GCC diagnostic pop
#include <slurm/spank.h>

#include "spank/spank_private.h"

#ifdef TMATCH_HAVE_SPANK_FAILURE_MODE
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

int tmatch__spank_init_may_fail(void)
{
#ifdef TMATCH_HAVE_SPANK_FAILURE_MODE
	return 1;
#else
	return spank_context() != S_CTX_REMOTE;
#endif
}

int tmatch__spank_stop_step(spank_t sp)
{
	uint32_t job = 0, step = 0;
	int rc;

	if (TM_ITEM(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    TM_ITEM(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return -1;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	{
		slurm_step_id_t id;

		memset(&id, 0, sizeof(id));
		id.job_id = job;
		id.step_het_comp = NO_VAL;
		id.step_id = step;
		rc = slurm_kill_job_step(&id, SIGKILL, 0);
	}
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
	rc = slurm_kill_job_step(job, step, SIGKILL, 0);
#else
	rc = slurm_kill_job_step(job, step, SIGKILL);
#endif
	if (rc != 0) {
		int e = errno;

		slurm_error("treematch: cannot cancel step %u.%u: %s", job, step,
		            slurm_strerror(e));
	}
	return rc;
}

int tmatch__spank_stop_other_nodes(spank_t sp)
{
	uint32_t nnodes = 0;

	if (TM_ITEM(sp, S_JOB_NNODES, &nnodes) == ESPANK_SUCCESS && nnodes == 1)
		return 0;
	return tmatch__spank_stop_step(sp);
}
