/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * launch.h - starting a program with the recorder preloaded, the part that
 * `treematch record` (cli/cmd_record.c) and srun --treematch-record
 * (spank/record.c) share: where the profile goes, which recorder library,
 * and the environment of the recorded processes. The front ends parse their
 * own options, pick the MPI ABI (profiler/mpiabi.h) and apply the
 * environment their way (setenv before exec, spank_setenv).
 *
 * Conventions of treematch/treematch.h: 0/-1 + errno + optional
 * tmatch_error_t; no global state; no printing. Linked from libtreematch.a,
 * not exported by the shared library.
 */
#ifndef TMATCH_PROFILER_LAUNCH_H
#define TMATCH_PROFILER_LAUNCH_H

#include "profiler/mpiabi.h"
#include "treematch/treematch.h"

/*
 * The absolute path the profile `file` will be written to: its directory
 * must exist and be writable, and it must name a file. A new string the
 * caller frees, or NULL with err->msg saying what is wrong, without naming
 * `file` (the front end prefixes its option): "name a file", "cannot write
 * in directory DIR: <reason>", "path too long".
 */
char *tmatch_record_output_path(const char *file, tmatch_error_t *err);

/* The directory the recorders are installed in (TMATCH_RECORD_LIBDIR at build). */
const char *tmatch_record_default_libdir(void);

/*
 * The recorder library for `abi` into buf: in `dir` alone when it is given
 * (an option, $TREEMATCH_RECORD_LIBDIR), else in the first of the `nextra`
 * directories `extra` that has it (a build tree), else in the installed
 * directory. -1 with err naming the missing file (ENOENT) or ENAMETOOLONG.
 */
int tmatch_record_locate(const char *dir, const char *const *extra, int nextra, tmatch_mpiabi_t abi,
                         char *buf, size_t len, tmatch_error_t *err);

/*
 * What the recorder makes of collectives (TREEMATCH_RECORD_COLLECTIVES):
 * WIRE, the default, the messages of a usual algorithm between world ranks
 * (the same the trace replays), placed by (profile version 2, collectives:
 * wire); LOGICAL, the logical model (collectives: logical, placed by only
 * with coll=on); OFF, point-to-point only (a version 1 profile).
 */
typedef enum tmatch_record_coll {
	TMATCH_RECORD_COLL_WIRE = 0,
	TMATCH_RECORD_COLL_LOGICAL = 1,
	TMATCH_RECORD_COLL_OFF = 2,
} tmatch_record_coll_t;

/* "wire", "logical", "off" (the front ends' option values; NULL or "" =
   wire) into *out; -1/EINVAL with err naming them. */
int tmatch_record_coll_parse(const char *name, tmatch_record_coll_t *out, tmatch_error_t *err);

/* One variable of a recorded process; value NULL = unset it. */
typedef struct tmatch_record_env {
	const char *name;
	char *value;
} tmatch_record_env_t;

#define TMATCH_RECORD_ENV_MAX 4

/*
 * The environment of a recorded process: LD_PRELOAD = the recorder before
 * the user's own preload (`old_preload`, may be NULL), TREEMATCH_RECORD_OUTPUT
 * = `output`, TREEMATCH_RECORD_COLLECTIVES = wire, logical or off, and
 * TREEMATCH_RECORD_VERBOSE = "1" when `verbose`. Returns the number of
 * entries written to env[TMATCH_RECORD_ENV_MAX] (free the values with
 * tmatch_record_env_free), -1 with errno (EINVAL, ENOMEM).
 */
int tmatch_record_env(const char *recorder, const char *old_preload, const char *output,
                      tmatch_record_coll_t collectives, int verbose, tmatch_record_env_t *env);
void tmatch_record_env_free(tmatch_record_env_t *env, int n);

#endif /* TMATCH_PROFILER_LAUNCH_H */
