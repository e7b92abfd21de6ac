/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * learn.c - srun's side of learn mode (--treematch=learn[:NAME], or the
 * admin's default=learn), where the user may write:
 *
 *   local_user_init: the step's key (its MPI program, task count, name:
 *                    placement/learn.c) and the store; a damaged entry is
 *                    discarded here, in one line, before any node reads it.
 *                    The nodes look the entry up themselves (read only):
 *                    found, they place from it; not, the tasks record.
 *   exit:            what the tasks recorded (the store's hidden file for
 *                    this job and step) is checked and stored under the
 *                    step's key, then removed.
 *
 * Learning never stops a step: a problem is said in one line and the step
 * runs with Slurm's binding. Hooks called by spank/treematch.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "placement/placement.h"
#include "profiler/mpiabi.h"
#include "spank/spank_private.h"

static struct {
	int record; /* nothing stored: the tasks record, srun stores at exit */
	int verbose;
	uint32_t job, step;
	char dir[PATH_MAX], exe[PATH_MAX];
	tmatch_profile_store_key_t key;
} ln;

int tmatch__spank_learn_local_user_init(spank_t sp, const tmatch_config_t *cfg)
{
	char cwd[PATH_MAX], path[PATH_MAX], stem[17];
	char **argv = NULL;
	int argc = 0, rc;
	uint32_t ntasks = 0;
	tmatch_error_t err;

	memset(&ln, 0, sizeof(ln));
	if (!cfg->enabled || !cfg->learn || cfg->plan[0])
		return 0;
	ln.verbose = cfg->verbose;
	tmatch_error_clear(&err);
	if (TM_ITEM2(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 ||
	    TM_ITEM(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS ||
	    TM_ITEM(sp, S_JOB_ID, &ln.job) != ESPANK_SUCCESS ||
	    TM_ITEM(sp, S_JOB_STEPID, &ln.step) != ESPANK_SUCCESS) {
		slurm_spank_log("treematch: learn: srun does not give the step's command line");
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	rc = tmatch_place_learn_key(cfg, tmatch_mpiabi_program, argv, getenv("PATH"), cwd,
	                            (int)ntasks, &ln.key, ln.exe, sizeof(ln.exe), &err);
	if (rc == 0 && tmatch_place_learn_dir(cfg, NULL, NULL, 1, ln.dir, sizeof(ln.dir), &err) < 0)
		rc = -1;
	if (rc != 0) {
		/* a step without MPI is not learned: said in verbose mode only */
		if (rc < 0 || cfg->verbose > 0)
			slurm_spank_log("treematch: learn: %s", err.msg);
		return 0;
	}
	tmatch_profile_store_stem(&ln.key, stem, sizeof(stem));
	rc = tmatch_profile_store_get(ln.dir, &ln.key, 0, path, sizeof(path), &err);
	if (rc < 0)
		slurm_spank_log("treematch: learn: %s", err.msg);
	if (rc == 1) {
		if (cfg->verbose > 0)
			slurm_spank_log("treematch: learn: placing %s at %u tasks from the stored "
			                "profile %s",
			                ln.exe, ntasks, stem);
		return 0;
	}
	ln.record = 1;
	if (cfg->verbose > 0)
		slurm_spank_log("treematch: learn: nothing stored for %s at %u tasks: this run is "
		                "recorded (store entry %s)",
		                ln.exe, ntasks, stem);
	return 0;
}

int tmatch__spank_learn_exit(void)
{
	char rec[PATH_MAX], stem[17];
	tmatch_error_t err;

	if (!ln.record)
		return 0;
	ln.record = 0;
	if (tmatch_place_learn_recording(ln.dir, ln.job, ln.step, rec, sizeof(rec)) < 0 ||
	    access(rec, F_OK) != 0) {
		if (ln.verbose > 0)
			slurm_spank_log("treematch: learn: the step left no profile: not learned");
		return 0;
	}
	tmatch_error_clear(&err);
	tmatch_profile_store_stem(&ln.key, stem, sizeof(stem));
	if (tmatch_profile_store_put(ln.dir, &ln.key, rec, ln.exe, TMATCH_STORE_DEFAULT_MAX, &err) <
	    0)
		slurm_spank_log("treematch: learn: the recorded profile is not stored: %s",
		                err.msg);
	else if (ln.verbose > 0)
		slurm_spank_log("treematch: learn: stored the profile of %s at %d tasks (entry %s)",
		                ln.exe, ln.key.ranks, stem);
	unlink(rec);
	return 0;
}
