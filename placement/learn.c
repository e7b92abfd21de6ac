/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * learn.c - learn mode (--treematch=learn, default=learn): which store entry
 * a step uses, and where its recording goes.
 *
 * The entry is keyed by the step's MPI program: the first word of its
 * command line that links an MPI library (profiler/mpiabi.c, handed over
 * by the front end as mpi_program: placement includes no profiler), so that
 * `srun ./wrapper.sh ./app` learns about app, and a step that runs no MPI
 * program learns nothing. srun (the user, before the step) and each node's
 * helper (the user, sandboxed) compute the same key from the same command
 * line; srun discards a damaged entry and stores what the first run
 * recorded (spank/learn.c), the nodes only read.
 */
#include "placement/placement_private.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 64 /* words of the command line examined */

int tmatch_place_learn_key(const tmatch_config_t *cfg, tmatch_place_mpi_program_fn mpi_program,
                           char *const argv[], const char *path_env, const char *cwd, int ntasks,
                           tmatch_profile_store_key_t *key, char *exe, size_t len,
                           tmatch_error_t *err)
{
	char *words[MAX_WORDS + 1], *joined[MAX_WORDS];
	tmatch_error_t e;
	int n = 0, rc;

	if (!cfg || !mpi_program || !argv || !argv[0] || !key || !exe || len == 0 || ntasks < 1)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "learn: no command or no tasks");
	/* relative names with a '/' are the job's, from its directory */
	for (; n < MAX_WORDS && argv[n]; n++) {
		joined[n] = NULL;
		words[n] = argv[n];
		if (argv[n][0] != '/' && strchr(argv[n], '/') && cwd && cwd[0] == '/') {
			size_t lc = strlen(cwd), la = strlen(argv[n]);

			if (lc + la + 2 > PATH_MAX || !(joined[n] = malloc(lc + la + 2)))
				continue;
			memcpy(joined[n], cwd, lc);
			joined[n][lc] = '/';
			memcpy(joined[n] + lc + 1, argv[n], la + 1);
			words[n] = joined[n];
		}
	}
	words[n] = NULL;
	tmatch_error_clear(&e);
	rc = mpi_program(words, path_env ? path_env : "", exe, len, &e);
	for (int i = 0; i < n; i++)
		free(joined[i]);
	if (rc != 0) {
		char *advice = strstr(e.msg, "; name it with"); /* the recorder's, not ours */

		if (advice)
			*advice = '\0';
		tmatch_error_set(err, errno ? errno : ENOENT, NULL, 0, 0,
		                 "not learned: the step runs no MPI program that can be recorded "
		                 "(%s)",
		                 e.msg);
		return 1;
	}
	if (tmatch_profile_store_key(exe, ntasks, cfg->learn_name[0] ? cfg->learn_name : NULL, key,
	                             err) < 0)
		return -1;
	return 0;
}

int tmatch_place_learn_dir(const tmatch_config_t *cfg, const char *xdg, const char *home,
                           int create, char *dir, size_t len, tmatch_error_t *err)
{
	return tmatch_profile_store_dir(cfg && cfg->store[0] ? cfg->store : NULL, xdg, home, create,
	                                dir, len, err);
}

int tmatch_place_learn_recording(const char *dir, uint64_t job_id, uint32_t step_id, char *path,
                                 size_t len)
{
	int n =
	    snprintf(path, len, "%s/.rec-%llu.%u.yml", dir, (unsigned long long)job_id, step_id);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}
