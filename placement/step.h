/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/step.h - the step: is it handled, what --treematch=VALUE asks, the
 * effective policy (conf/config.h: built-in defaults < plugstack.conf <
 * admin file < the user's value), what srun checks before the step starts,
 * and the profile read as whoever calls (step.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_STEP_H
#define TMATCH_PLACEMENT_STEP_H

#include "conf/config.h"
#include "profile/profile.h"
#include "treematch/treematch.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Slurm's special step ids (slurm.h), repeated so this file needs no Slurm. */
#define TMATCH_STEP_PENDING     0xfffffffdu
#define TMATCH_STEP_EXTERN      0xfffffffcu
#define TMATCH_STEP_BATCH       0xfffffffbu
#define TMATCH_STEP_INTERACTIVE 0xfffffffau

/* 1 for the steps the plugin acts on (ordinary srun steps), 0 for the batch
   script, the extern container, interactive and pending steps. */
int tmatch_place_step_is_handled(uint32_t step_id);

/*
 * What the user's --treematch value asks for before the grammar sees it:
 * TMATCH_PLACE_VALUE_HELP for "help" (print tmatch_place_help_text and stop),
 * TMATCH_PLACE_VALUE_OPTIONS for anything else (including "off": the grammar
 * turns that into enabled=0). -1/EINVAL for NULL or an empty value.
 */
enum { TMATCH_PLACE_VALUE_OPTIONS = 0, TMATCH_PLACE_VALUE_HELP = 1 };
int tmatch_place_classify_value(const char *value, tmatch_error_t *err);

/* The text printed for --treematch=help (static, never NULL). */
const char *tmatch_place_help_text(void);

/*
 * Effective configuration: built-in defaults, then plugstack.conf arguments
 * (argc/argv as SPANK passes them), then the admin file named by the
 * `admin_file=PATH` argument if any (already opened by the caller: admin_fd,
 * -1 = none), then the user's value (NULL = no --treematch). Limits are
 * capped by the admin's, a mapper outside allowed_mappers is refused.
 * Returns 0, or -1 with err naming the source ("plugstack.conf",
 * "--treematch") and what to fix; on error *out is unchanged.
 */
int tmatch_place_config(int argc, char *const *argv, int admin_fd, const char *user_value,
                        tmatch_config_t *out, tmatch_error_t *err);

/* The user's value over an admin configuration already computed (the last
   step of tmatch_place_config): what the plugin's helper does as the user. */
int tmatch_place_config_user(const tmatch_config_t *admin, const char *user_value,
                             tmatch_config_t *out, tmatch_error_t *err);

/* The admin file named in argv ("admin_file=PATH"), or NULL. Points into argv. */
const char *tmatch_place_admin_file(int argc, char *const *argv);

/* The helper program named in argv ("helper=PATH": an install elsewhere than
   the packages', a build tree's), or NULL. Points into argv. */
const char *tmatch_place_helper_path(int argc, char *const *argv);

/* 1 when the user's --treematch value names a profile itself (then the
   profile is the user's, not the admin's default), 0 otherwise. */
int tmatch_place_user_profile(const char *user_value);

/*
 * The step plan a node places from: plan= (the user's or the admin's),
 * else the job's TREEMATCH_PLAN (plan_env: set by `treematch layout --plan
 * --exec`; NULL = none). NULL: the node maps from the profile.
 */
const char *tmatch_place_plan_path(const tmatch_config_t *cfg, const char *plan_env);

/*
 * What a node places from (the helper, as the user, the user's value
 * merged): learn mode, the step plan and the profile asked in one order.
 * OFF: placement off, or no profile and not learning: Slurm's binding (a
 * plan alone is not enough: it is checked against the profile it was made
 * from). LEARN: learn mode and no profile yet: srun's decision comes first
 * (tmatch_place_learn_follow names the profile in cfg->profile, or ends the
 * step's placement), then ask again. PLAN: this node's slice of the step
 * plan *plan (tmatch_place_plan_path), the profile only stamped; a plan of
 * another step is refused (tmatch_place_plan_matches), never replaced by
 * the profile. PROFILE: the profile, read whole. *plan is NULL but for PLAN.
 */
typedef enum {
	TMATCH_PLACE_FROM_OFF = 0,
	TMATCH_PLACE_FROM_LEARN = 1,
	TMATCH_PLACE_FROM_PLAN = 2,
	TMATCH_PLACE_FROM_PROFILE = 3,
} tmatch_place_source_t;
tmatch_place_source_t tmatch_place_source(const tmatch_config_t *cfg, const char *plan_env,
                                          const char **plan);

/*
 * What a problem found before the step starts (the profile unreadable or of
 * the wrong size) does: 1 = fail the step, when the profile is the user's
 * or the policy says failure=fail; 0 = go on without placement (an admin
 * default that does not fit this step is not the user's problem).
 */
int tmatch_place_must_fail(const tmatch_config_t *cfg, int user_profile);

/*
 * Does a problem found on a node stop the whole step: with failure=fail,
 * yes (the node cancels the step, so that no task elsewhere waits for this
 * node's in MPI_Init); with failure=fallback, no (Slurm's binding, the step
 * runs everywhere).
 */
int tmatch_place_stop_step(const tmatch_config_t *cfg, int node_failed);

/*
 * The working directory a launcher gives the job, which the nodes read
 * relative profile paths against: the last -D/--chdir among its own
 * options (words[0..nopts): -D DIR, -DDIR, a cluster of flags ending in D,
 * --chdir DIR, --chdir=DIR, an unambiguous start of --chdir), else env_dir
 * (SLURM_WORKING_DIR, which srun reads as -D; NULL for sbatch and salloc),
 * else `cwd`, the launcher's own; a relative one is taken from cwd. nopts
 * < 0: the options end at the first word that is not one (sbatch's script,
 * salloc's command). The line is read through step.c's table of srun's
 * options, as tmatch_place_srun_ntasks reads it: a value given in a
 * separate word is skipped for the short options and their long names
 * (-J -DX, --job-name -DX: the job's name), not for long options without
 * a letter (--comment -D is read as -D). -1 when cwd is not absolute or
 * out is too short.
 * profile_in_job_dir: cfg->profile made absolute against job_cwd when it is
 * relative (srun then checks the file the nodes read); -1 when too long.
 */
int tmatch_place_job_cwd(char *const words[], int nwords, int nopts, const char *env_dir,
                         const char *cwd, char *out, size_t len);
int tmatch_place_profile_in_job_dir(tmatch_config_t *cfg, const char *job_cwd);

/* Profile limits from the effective configuration. */
void tmatch_place_limits(const tmatch_config_t *cfg, tmatch_profile_limits_t *lim);

/*
 * The check srun runs before launching anything: the profile has exactly
 * `ntasks` ranks (ntasks <= 0: unknown, not checked) and the mapper name is
 * valid. -1/EINVAL with a message saying what to fix.
 */
int tmatch_place_check_profile(const tmatch_config_t *cfg, const tmatch_profile_t *prof, int ntasks,
                               tmatch_error_t *err);

/*
 * The task count srun's own command line gives, known before srun asks
 * Slurm for an allocation (SPANK says it only once the step exists): the
 * last -n N, -nN, --ntasks N or --ntasks=N among srun's options, argv[1] up
 * to argv[nopt - 1] (nopt: where getopt stopped, srun's first non-option
 * word; 0 or less when unknown: up to the command, and a "--opt WORD" of a
 * long option without a letter, whose WORD may be the command, gives up),
 * read through step.c's table of srun's options as tmatch_place_job_cwd
 * reads the line. 0 when the line does not say it for sure: no -n (a
 * count implied by -N, --ntasks-per-node or the allocation), a
 * heterogeneous step, a letter srun does not have, a value that is not a
 * positive number.
 */
int tmatch_place_srun_ntasks(int argc, char *const *argv, int nopt);

/*
 * Load the profile cfg->profile (a regular file, opened without blocking,
 * within cfg's size and rank limits) as whoever calls. NULL with one line
 * in msg ("cannot read profile P: ...", "bad profile: F:L:C: ...") and errno.
 * _err: the same with the parts apart: *opened 0 when the file could not
 * be opened (err: errno), 1 when it did not load (err: file, line, column).
 */
tmatch_profile_t *tmatch_place_load_profile(const tmatch_config_t *cfg, tmatch_log_fn log,
                                            void *log_arg, char *msg, size_t len);
tmatch_profile_t *tmatch_place_load_profile_err(const tmatch_config_t *cfg, tmatch_log_fn log,
                                                void *log_arg, int *opened, tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_STEP_H */
