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
 * Where from: only slurm_spank_task_exit, in slurmstepd once it has sent
 * srun this node's launch answer. user_init and a task before its exec
 * (task_init) only ask for it, in a flag slurmstepd shares with its task
 * children (an anonymous shared page mapped at init). From those two
 * places the call itself fails on Slurm 24.11 and later: slurmstepd holds
 * its authentication lock for writing while the job user's privileges are
 * taken (drop_privileges, kept across the tasks' fork), so the RPC's
 * auth_g_create meets EDEADLK and slurmstepd dies ("fatal: auth_g_create:
 * pthread_rwlock_rdlock(): Resource deadlock avoided", CI, Debian 13); and
 * a cancel that reaches srun before the node's launch answer ("aborted
 * before step completely launched") left srun waiting on 26.05. A problem
 * every task of the node meets (user_init) does not cancel a one-node
 * step: its tasks all fail and Slurm ends the step by itself; a problem of
 * one task always cancels (the node's other tasks would wait for it).
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
#include <sys/mman.h>

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

/* The request, in memory slurmstepd shares with its tasks: 0 none,
   STOP_NODE (every task of the node failed), STOP_TASK (a task failed),
   STOP_SENT once sent. */
enum { STOP_NODE = 1, STOP_TASK = 2, STOP_SENT = 3 };
static volatile int *stop_flag;

void tmatch__spank_stop_init(void)
{
	void *page;

	if (stop_flag) {
		*stop_flag = 0; /* a step of its own */
		return;
	}
	page = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (page != MAP_FAILED)
		stop_flag = page;
	else
		slurm_error("treematch: no shared page for a failed node's cancel of the step: %s",
		            strerror(errno));
}

void tmatch__spank_stop_ask(int whole_node)
{
	int want = whole_node ? STOP_NODE : STOP_TASK;

	if (stop_flag && *stop_flag != STOP_SENT && *stop_flag < want)
		*stop_flag = want;
}

static int stop_step(spank_t sp)
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

void tmatch__spank_stop_asked(spank_t sp)
{
	uint32_t nnodes = 0;
	int want;

	if (!stop_flag || !*stop_flag || *stop_flag == STOP_SENT)
		return;
	want = *stop_flag;
	*stop_flag = STOP_SENT;
	if (want == STOP_NODE && TM_ITEM(sp, S_JOB_NNODES, &nnodes) == ESPANK_SUCCESS &&
	    nnodes == 1)
		return;
	stop_step(sp);
}
