/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/learn.h - learn mode: the store's key of a step, srun's one decision
 * per step, the nodes following it, the recording collected (learn.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_LEARN_H
#define TMATCH_PLACEMENT_LEARN_H

#include "affinity/affinity.h"
#include "conf/config.h"
#include "placement/node.h"
#include "profile/profile.h"
#include "treematch/treematch.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The MPI program of a command line: the first word of argv that names an
 * executable (a path, or found in path_env) linking an MPI library, its path
 * in exe; 0, or -1 with err. Reading ELF files is the profiler's
 * (profiler/mpiabi.c, tmatch_mpiabi_program), which placement does not
 * include: the front end that starts the decision hands it over.
 */
typedef int (*tmatch_place_mpi_program_fn)(char *const argv[], const char *path_env, char *exe,
                                           size_t len, tmatch_error_t *err);

/*
 * Learn mode (learn.c). learn_key: the store key of a step: its MPI program
 * (mpi_program's answer, relative names of argv taken against cwd; its
 * path in exe), ntasks and cfg->learn_name. 0; 1 when the step runs no MPI
 * program (nothing is learned, why in err); -1.
 */
int tmatch_place_learn_key(const tmatch_config_t *cfg, tmatch_place_mpi_program_fn mpi_program,
                           char *const argv[], const char *path_env, const char *cwd, int ntasks,
                           tmatch_profile_store_key_t *key, char *exe, size_t len,
                           tmatch_error_t *err);

/*
 * The one learn decision of a step: srun makes it (learn_decide), every node
 * follows it (learn_follow, and the tasks record when it says so). It
 * travels with the step in the job's environment, TMATCH_PLACE_LEARN_ENV.
 */
#define TMATCH_PLACE_LEARN_ENV "TREEMATCH_LEARN"
typedef enum {
	TMATCH_PLACE_LEARN_NONE = 0,   /* not learned: Slurm's binding, nothing recorded */
	TMATCH_PLACE_LEARN_RECORD = 1, /* nothing stored: every task of the step records */
	TMATCH_PLACE_LEARN_PLACE = 2,  /* placed from the entry stem, the version checksum */
} tmatch_place_learn_what_t;

typedef struct tmatch_place_learn {
	tmatch_place_learn_what_t what;
	uint64_t job_id;
	uint32_t step_id;
	char stem[17];        /* the store entry (RECORD: the one the recording is stored as) */
	uint64_t checksum;    /* PLACE: the version srun found (its .meta's checksum) */
	char store[PATH_MAX]; /* the store's directory (RECORD, PLACE) */
	/* srun only, not on the wire: the key and the MPI program */
	tmatch_profile_store_key_t key;
	char exe[PATH_MAX];
} tmatch_place_learn_t;

typedef struct tmatch_place_learn_in {
	const tmatch_config_t *cfg; /* srun's: learn mode, learn_name, store (the site's) */
	tmatch_place_mpi_program_fn mpi_program; /* the front end's (tmatch_mpiabi_program) */
	char *const *argv;                       /* the step's command line (S_JOB_ARGV) */
	const char *path_env;                    /* PATH */
	const char *job_cwd;    /* the step's working directory (tmatch_place_job_cwd) */
	const char *xdg, *home; /* XDG_CACHE_HOME, HOME (NULL: the environment's) */
	int ntasks;
	uint64_t job_id;
	uint32_t step_id;
} tmatch_place_learn_in_t;

/*
 * srun, before the step: key the step, open the store (the site's, or the
 * user's own when the site's directory for them cannot be used: said once;
 * a site directory not made yet is recorded into, root makes it on the
 * nodes), look the entry up (a damaged one is discarded, said): PLACE with
 * its stem and checksum, else RECORD; NONE when the step runs no MPI
 * program (said at TMATCH_LOG_INFO) or the store cannot be used (said at
 * TMATCH_LOG_WARNING). What a user is told goes to log: WARNING always,
 * INFO in verbose mode. -1 only on bad arguments.
 */
int tmatch_place_learn_decide(const tmatch_place_learn_in_t *in, tmatch_place_learn_t *d,
                              tmatch_log_fn log, void *log_arg);
/* "1 JOB STEP none", "1 JOB STEP record STEM STORE", "1 JOB STEP place STEM
   SUM STORE" (SUM 16 hex digits, STORE the rest of the line). parse: 0 and
   *d when text is a decision for job_id.step_id; -1 with err (ENOENT: none,
   or another step's, EINVAL: malformed). */
int tmatch_place_learn_format(const tmatch_place_learn_t *d, char *buf, size_t len);
int tmatch_place_learn_parse(const char *text, uint64_t job_id, uint32_t step_id,
                             tmatch_place_learn_t *d, tmatch_error_t *err);

/*
 * A node (the helper, as the user): follow srun's decision (decision: the
 * job's TMATCH_PLACE_LEARN_ENV). PLACE_STEP: the entry srun chose checks
 * (read only, by its checksum): cfg->profile is its path. RECORD_STEP: the
 * step records (every node, whatever its own view of the store). The
 * others keep Slurm's binding and record nothing: NOT_LEARNED, srun
 * decided so (and said why); NO_DECISION, none for this step (*err_no
 * ENOENT) or a malformed one (EINVAL); GONE, the entry stem is gone
 * (ENOENT), replaced (ESTALE) or damaged (EPROTO) here, or the store cannot
 * be read (*err_no). Codes, not text: the helper sends them as they are.
 */
typedef enum {
	TMATCH_PLACE_LEARN_PLACE_STEP = 0,
	TMATCH_PLACE_LEARN_RECORD_STEP = 1,
	TMATCH_PLACE_LEARN_NOT_LEARNED = 2,
	TMATCH_PLACE_LEARN_NO_DECISION = 3,
	TMATCH_PLACE_LEARN_GONE = 4,
} tmatch_place_learn_step_t;
tmatch_place_learn_step_t tmatch_place_learn_follow(tmatch_config_t *cfg, const char *decision,
                                                    uint64_t job_id, uint32_t step_id,
                                                    char stem[17], int *err_no);

/* Is a placement from a learned profile worth it: 1 when it is not learned
   or gains at least cfg->min_gain percent over the packed placement; 0
   when it does not. *gain (NULL: not wanted): the gain in percent, 0 when
   not learned or below 0. */
int tmatch_place_learn_gain_ok(const tmatch_config_t *cfg, const tmatch_place_node_t *plan,
                               double *gain);

/* RECORD: where the tasks record (the store's .rec-JOB.STEP.yml). collect
   (srun, when the step ends): store what the step recorded under d->key and
   remove the recording, said through log. site_prepare (the root side, as
   root): the user's directory in the admin's site store, made at their
   first step when the site directory is root's. */
int tmatch_place_learn_recording(const tmatch_place_learn_t *d, char *path, size_t len);
int tmatch_place_learn_collect(const tmatch_place_learn_t *d, tmatch_log_fn log, void *log_arg);
int tmatch_place_learn_site_prepare(const tmatch_config_t *cfg, uid_t uid, gid_t gid,
                                    tmatch_error_t *err);

/*
 * The stored profile a learning step is placed from (read only: no last
 * use, nothing removed): its MPI program in argv (found by mpi_program, as
 * for tmatch_place_learn_key) keys the entry of the store srun's decision
 * reads (the site's store= or the user's; xdg, home: the job's, NULL: the
 * caller's). 1 and its path in `path` (the program in exe); 0 when nothing
 * is stored yet (the step will be recorded); -1 with err when the step
 * cannot learn (no MPI program) or the store fails.
 */
int tmatch_place_learn_find(const tmatch_config_t *cfg, tmatch_place_mpi_program_fn mpi_program,
                            char *const argv[], const char *path_env, const char *cwd, int ntasks,
                            const char *xdg, const char *home, char *path, size_t len, char *exe,
                            size_t exelen, tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_LEARN_H */
