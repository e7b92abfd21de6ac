/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * learn.c - srun's side of learn mode (--treematch=learn[:NAME], or the
 * admin's default=learn), where the user may write:
 *
 *   local_user_init: the step's one learn decision (placement/learn.c):
 *                    record, place from the stored entry STEM (by its
 *                    checksum), or none; a damaged entry is discarded here,
 *                    in one line. It goes to every node in srun's
 *                    environment, which the step inherits
 *                    (TREEMATCH_LEARN), and every node follows it: no node
 *                    looks the store up on its own.
 *   exit:            a recording step's recording (the store's hidden file
 *                    for this job and step) is checked and stored under the
 *                    step's key, then removed, stored or not.
 *
 * Learning never stops a step by itself: a problem is said in one line and
 * the step runs with Slurm's binding. Hooks called by spank/treematch.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "placement/learn.h"
#include "profiler/mpiabi.h"
#include "profiler/launch.h"
#include "spank/spank_private.h"

static struct {
	int verbose;
	tmatch_place_learn_t d; /* this step's decision */
} ln;

/* What learning tells the user: warnings always, the rest in verbose mode. */
static void learn_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= TMATCH_LOG_WARNING || ln.verbose > 0)
		slurm_spank_log("treematch: %s", msg);
}

/* A recording step needs the recorder of the program's MPI: checked here,
   as the tasks will look for it (TREEMATCH_RECORD_LIBDIR, else installed). */
static int recorder_found(const char *exe, char *msg, size_t len)
{
	char *words[2] = {(char *)exe, NULL}, lib[PATH_MAX];
	const char *libdir = getenv("TREEMATCH_RECORD_LIBDIR");
	tmatch_mpiabi_t abi;
	tmatch_error_t err;

	tmatch_error_clear(&err);
	if (tmatch_mpiabi_of_command(words, "", &abi, NULL, 0, &err) != 0 ||
	    tmatch_record_locate(libdir && *libdir ? libdir : NULL, NULL, 0, abi, lib, sizeof(lib),
	                         &err) < 0) {
		snprintf(msg, len, "%s", err.msg);
		return 0;
	}
	return 1;
}

int tmatch__spank_learn_local_user_init(spank_t sp, const tmatch_config_t *cfg, const char *job_cwd)
{
	tmatch_place_learn_in_t in;
	char **argv = NULL, text[2 * PATH_MAX + 128], msg[1024];
	/* read before unsetenv below, which may move the environment */
	const char *plan_env = getenv("TREEMATCH_PLAN");
	const int plan = plan_env && *plan_env;
	int argc = 0;
	uint32_t ntasks = 0, job = 0, step = 0;

	memset(&ln, 0, sizeof(ln));
	/* no decision of an earlier step may reach this one's nodes */
	unsetenv(TMATCH_PLACE_LEARN_ENV);
	if (!cfg->enabled || !cfg->learn || cfg->plan[0] || plan)
		return 0;
	ln.verbose = cfg->verbose;
	memset(&in, 0, sizeof(in));
	if (TM_ITEM2(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS && argc > 0)
		in.argv = argv;
	TM_ITEM(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks);
	TM_ITEM(sp, S_JOB_ID, &job);
	TM_ITEM(sp, S_JOB_STEPID, &step);
	in.cfg = cfg;
	in.mpi_program = tmatch_mpiabi_program;
	in.path_env = getenv("PATH");
	in.job_cwd = job_cwd;
	in.ntasks = (int)ntasks;
	in.job_id = job;
	in.step_id = step;
	tmatch_place_learn_decide(&in, &ln.d, learn_log, NULL);
	if (ln.d.what == TMATCH_PLACE_LEARN_RECORD && !recorder_found(ln.d.exe, msg, sizeof(msg))) {
		slurm_spank_log("treematch: learn: not learned, the step cannot be recorded: %s",
		                msg);
		ln.d.what = TMATCH_PLACE_LEARN_NONE;
	}
	if (tmatch_place_learn_format(&ln.d, text, sizeof(text)) < 0 ||
	    setenv(TMATCH_PLACE_LEARN_ENV, text, 1) < 0) {
		slurm_spank_log("treematch: learn: the store's path is too long: not learned");
		ln.d.what = TMATCH_PLACE_LEARN_NONE;
	}
	return 0;
}

int tmatch__spank_learn_exit(void)
{
	tmatch_place_learn_collect(&ln.d, learn_log, NULL);
	memset(&ln, 0, sizeof(ln));
	return 0;
}

const tmatch__spank_learn_hooks_t tmatch__spank_learn_hooks = {
    .local_user_init = tmatch__spank_learn_local_user_init,
    .exit = tmatch__spank_learn_exit,
};
