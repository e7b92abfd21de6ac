/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * learn.c - learn mode (--treematch=learn, default=learn): which store entry
 * a step uses, where its recording goes, and the one decision per step that
 * srun makes and every node follows.
 *
 * The entry is keyed by the step's MPI program: the first word of its
 * command line that links an MPI library (profiler/mpiabi.c, handed over
 * by the front end as mpi_program: placement includes no profiler), so that
 * `srun ./wrapper.sh ./app` learns about app, and a step that runs no MPI
 * program learns nothing.
 *
 * srun decides, once, before the step starts (learn_decide): record (nothing
 * stored: every task of the step is recorded), place (from the stored entry
 * STEM whose profile has checksum SUM), or none. The decision travels with
 * the step in the job's environment (TREEMATCH_LEARN, learn_format and
 * learn_parse), as a step plan does; no node looks the store up on its own.
 * A recording step must have the recorder in every task, or the recorder's
 * collectives never match and MPI waits forever: a node records whatever its
 * own view of the store, and a node that cannot follow a place decision
 * (learn_follow: the entry is gone, replaced or damaged) keeps Slurm's
 * binding and never records. srun stores what the step recorded and removes
 * the recording (learn_collect).
 */
#include "placement/placement_private.h"
#include "placement/learn.h"
#include "placement/node.h"

#include <errno.h>
#include <inttypes.h>
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

/* ---- srun: the decision -------------------------------------------------- */

/*
 * The user's store for srun: the site's (site/<uid>) when the admin gave
 * one, else their own. A site directory of the user's that someone else
 * made (squatted) or that cannot be used sends the user to their own store,
 * said once (here, in srun; the nodes follow the decision). A missing one
 * that the user cannot make (a site directory of root's: root makes it at
 * the first step on a node) is not opened: its path goes to *pending.
 */
static tmatch_profile_store_t *open_store(const tmatch_config_t *cfg, const char *xdg,
                                          const char *home, char *pending, size_t plen,
                                          tmatch_log_fn log, void *log_arg, tmatch_error_t *err)
{
	tmatch_profile_store_t *s;
	tmatch_error_t e;

	pending[0] = '\0';
	if (!cfg->store[0])
		return tmatch_profile_store_open(NULL, xdg, home, TMATCH_STORE_CREATE, err);
	tmatch_error_clear(&e);
	s = tmatch_profile_store_open(cfg->store, xdg, home, TMATCH_STORE_CREATE, &e);
	if (s)
		return s;
	if (errno == ENOENT && e.file[0] && strcmp(e.file, cfg->store) != 0) {
		snprintf(pending, plen, "%s", e.file);
		return NULL;
	}
	tmatch_log_printf(log, log_arg, TMATCH_LOG_WARNING,
	                  "learn: the site store cannot be used (%s%s%s): using your own store",
	                  e.file, e.file[0] ? ": " : "", e.msg);
	return tmatch_profile_store_open(NULL, xdg, home, TMATCH_STORE_CREATE, err);
}

int tmatch_place_learn_decide(const tmatch_place_learn_in_t *in, tmatch_place_learn_t *d,
                              tmatch_log_fn log, void *log_arg)
{
	tmatch_profile_store_entry_t entry;
	tmatch_profile_store_t *s = NULL;
	tmatch_error_t err;
	char path[PATH_MAX], stem[17];
	int rc, e_no;

	memset(d, 0, sizeof(*d));
	if (!in || !in->cfg)
		return -1;
	d->job_id = in->job_id;
	d->step_id = in->step_id;
	d->what = TMATCH_PLACE_LEARN_NONE;
	tmatch_error_clear(&err);
	if (!in->argv || !in->argv[0]) {
		tmatch_log_printf(log, log_arg, TMATCH_LOG_WARNING,
		                  "learn: srun does not give the step's command line");
		return 0;
	}
	rc = tmatch_place_learn_key(in->cfg, in->mpi_program, in->argv, in->path_env, in->job_cwd,
	                            in->ntasks, &d->key, d->exe, sizeof(d->exe), &err);
	if (rc != 0) {
		/* a step without MPI is not learned: said in verbose mode only */
		tmatch_log_printf(log, log_arg, rc < 0 ? TMATCH_LOG_WARNING : TMATCH_LOG_INFO,
		                  "learn: %s", err.msg);
		return 0;
	}
	tmatch_profile_store_stem(&d->key, stem, sizeof(stem));
	s = open_store(in->cfg, in->xdg, in->home, d->store, sizeof(d->store), log, log_arg, &err);
	if (!s && !d->store[0]) {
		tmatch_log_printf(log, log_arg, TMATCH_LOG_WARNING, "learn: %s%s%s", err.file,
		                  err.file[0] ? ": " : "", err.msg);
		return 0;
	}
	if (s) {
		snprintf(d->store, sizeof(d->store), "%s", tmatch_profile_store_path(s));
		rc = tmatch_profile_store_get(s, &d->key, 0, path, sizeof(path), &entry, &err);
		e_no = errno;
		tmatch_profile_store_close(s);
		if (rc < 0) /* damaged, and discarded: recorded again */
			tmatch_log_printf(log, log_arg, TMATCH_LOG_WARNING, "learn: %s", err.msg);
		if (rc < 0 && e_no != EPROTO)
			return 0;
		if (rc == 1) {
			d->what = TMATCH_PLACE_LEARN_PLACE;
			snprintf(d->stem, sizeof(d->stem), "%s", entry.stem);
			d->checksum = entry.meta_sum;
			tmatch_log_printf(
			    log, log_arg, TMATCH_LOG_INFO,
			    "learn: placing %s at %d tasks from the stored profile %s", d->exe,
			    in->ntasks, stem);
			return 0;
		}
	}
	d->what = TMATCH_PLACE_LEARN_RECORD;
	snprintf(d->stem, sizeof(d->stem), "%s", stem);
	tmatch_log_printf(log, log_arg, TMATCH_LOG_INFO,
	                  "learn: nothing stored for %s at %d tasks: this run is recorded (store "
	                  "entry %s)",
	                  d->exe, in->ntasks, stem);
	return 0;
}

/* ---- the decision on the wire ------------------------------------------- */

static const char *const what_names[] = {"none", "record", "place"};

int tmatch_place_learn_format(const tmatch_place_learn_t *d, char *buf, size_t len)
{
	int n;

	if (!d || !buf || d->what < TMATCH_PLACE_LEARN_NONE || d->what > TMATCH_PLACE_LEARN_PLACE)
		return -1;
	if (d->what == TMATCH_PLACE_LEARN_PLACE)
		n = snprintf(buf, len, "1 %" PRIu64 " %" PRIu32 " place %s %016" PRIx64 " %s",
		             d->job_id, d->step_id, d->stem, d->checksum, d->store);
	else if (d->what == TMATCH_PLACE_LEARN_RECORD)
		n = snprintf(buf, len, "1 %" PRIu64 " %" PRIu32 " record %s %s", d->job_id,
		             d->step_id, d->stem, d->store);
	else
		n = snprintf(buf, len, "1 %" PRIu64 " %" PRIu32 " none", d->job_id, d->step_id);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* One decimal or hexadecimal word at *p, then one space (or the end). */
static int word_u64(const char **p, int base, uint64_t *v)
{
	char *end;

	if (**p < '0' || **p > 'f')
		return -1;
	errno = 0;
	*v = strtoull(*p, &end, base);
	if (errno || end == *p || (*end != ' ' && *end != '\0'))
		return -1;
	*p = *end ? end + 1 : end;
	return 0;
}

int tmatch_place_learn_parse(const char *text, uint64_t job_id, uint32_t step_id,
                             tmatch_place_learn_t *d, tmatch_error_t *err)
{
	const char *p = text;
	uint64_t v, job, step;
	size_t n;
	int w;

	if (!d)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_place_learn_parse: NULL");
	memset(d, 0, sizeof(*d));
	if (!p || !*p)
		return tmatch_error_set(
		    err, ENOENT, NULL, 0, 0,
		    "srun made no learn decision for this step (is treematch.so "
		    "in srun's plugstack.conf?)");
	if (strlen(p) > 2 * PATH_MAX || word_u64(&p, 10, &v) < 0 || v != 1 ||
	    word_u64(&p, 10, &job) < 0 || word_u64(&p, 10, &step) < 0 || step > UINT32_MAX)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "TREEMATCH_LEARN is not a learn decision of this version");
	if (job != job_id || step != step_id)
		return tmatch_error_set(
		    err, ENOENT, NULL, 0, 0,
		    "srun made no learn decision for this step (TREEMATCH_LEARN "
		    "is step %" PRIu64 ".%" PRIu64 "'s)",
		    job, step);
	d->job_id = job;
	d->step_id = (uint32_t)step;
	for (w = 0; w < 3; w++) {
		n = strlen(what_names[w]);
		if (!strncmp(p, what_names[w], n) && (p[n] == ' ' || p[n] == '\0'))
			break;
	}
	if (w == 3)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "TREEMATCH_LEARN: unknown decision");
	p += n + (p[n] == ' ');
	d->what = (tmatch_place_learn_what_t)w;
	if (d->what == TMATCH_PLACE_LEARN_NONE)
		return *p ? tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                             "TREEMATCH_LEARN: extra words")
		          : 0;
	if (strlen(p) < 17 || p[16] != ' ')
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "TREEMATCH_LEARN: no store entry");
	memcpy(d->stem, p, 16);
	d->stem[16] = '\0';
	for (int i = 0; i < 16; i++)
		if (!((d->stem[i] >= '0' && d->stem[i] <= '9') ||
		      (d->stem[i] >= 'a' && d->stem[i] <= 'f')))
			return tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                        "TREEMATCH_LEARN: not a store entry");
	p += 17;
	if (d->what == TMATCH_PLACE_LEARN_PLACE &&
	    (strlen(p) < 17 || p[16] != ' ' || word_u64(&p, 16, &d->checksum) < 0 || !d->checksum))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "TREEMATCH_LEARN: no checksum");
	if (p[0] != '/' || strlen(p) >= sizeof(d->store))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "TREEMATCH_LEARN: the store is not an absolute path");
	snprintf(d->store, sizeof(d->store), "%s", p);
	return 0;
}

/* ---- a node: follow srun's decision ------------------------------------- */

tmatch_place_learn_step_t tmatch_place_learn_follow(tmatch_config_t *cfg, const char *decision,
                                                    uint64_t job_id, uint32_t step_id,
                                                    char stem[17], int *err_no)
{
	tmatch_place_learn_t d;
	tmatch_profile_store_t *s;
	tmatch_error_t e;
	char path[PATH_MAX];
	int rc;

	tmatch_error_clear(&e);
	stem[0] = '\0';
	*err_no = 0;
	if (tmatch_place_learn_parse(decision, job_id, step_id, &d, &e) < 0) {
		*err_no = errno == ENOENT ? ENOENT : EINVAL;
		return TMATCH_PLACE_LEARN_NO_DECISION;
	}
	if (d.what == TMATCH_PLACE_LEARN_RECORD)
		return TMATCH_PLACE_LEARN_RECORD_STEP;
	if (d.what == TMATCH_PLACE_LEARN_NONE)
		return TMATCH_PLACE_LEARN_NOT_LEARNED;
	/* the entry srun chose, by its checksum, read only */
	memcpy(stem, d.stem, sizeof(d.stem));
	s = tmatch_profile_store_open_path(d.store, TMATCH_STORE_READONLY, &e);
	rc = s ? tmatch_profile_store_find(s, d.stem, d.checksum, path, sizeof(path), &e) : -1;
	*err_no = rc == 0 ? ENOENT : errno > 0 && errno < 4096 ? errno : EIO;
	tmatch_profile_store_close(s);
	if (rc == 1 &&
	    snprintf(cfg->profile, sizeof(cfg->profile), "%s", path) < (int)sizeof(cfg->profile))
		return TMATCH_PLACE_LEARN_PLACE_STEP;
	if (rc == 1)
		*err_no = ENAMETOOLONG;
	return TMATCH_PLACE_LEARN_GONE;
}

int tmatch_place_learn_gain_ok(const tmatch_config_t *cfg, const tmatch_place_node_t *plan,
                               double *gain)
{
	double g;

	if (gain)
		*gain = 0;
	if (!cfg || !plan || !cfg->learn || plan->status != TMATCH_PLACE_PLACED)
		return 1;
	/* learned, not asked for: worth it only above min_gain */
	g = plan->cost_packed > 0 ? 100.0 * (plan->cost_packed - plan->cost) / plan->cost_packed
	                          : 0;
	if (gain)
		*gain = g < 0 ? 0 : g;
	return g >= cfg->min_gain;
}

/* ---- the recording ------------------------------------------------------- */

int tmatch_place_learn_recording(const tmatch_place_learn_t *d, char *path, size_t len)
{
	char name[64];

	if (!d || d->what != TMATCH_PLACE_LEARN_RECORD ||
	    tmatch_profile_store_recording_name(d->job_id, d->step_id, name, sizeof(name)) < 0)
		return -1;
	return (size_t)snprintf(path, len, "%s/%s", d->store, name) >= len ? -1 : 0;
}

int tmatch_place_learn_collect(const tmatch_place_learn_t *d, tmatch_log_fn log, void *log_arg)
{
	tmatch_profile_store_t *s;
	tmatch_error_t err;
	char stem[17];
	int rc;

	if (!d || d->what != TMATCH_PLACE_LEARN_RECORD)
		return 0;
	tmatch_error_clear(&err);
	if (!(s = tmatch_profile_store_open_path(d->store, 0, &err))) {
		tmatch_log_printf(log, log_arg, TMATCH_LOG_WARNING,
		                  "learn: the recorded profile is not stored: %s%s%s", err.file,
		                  err.file[0] ? ": " : "", err.msg);
		return -1;
	}
	rc = tmatch_profile_store_take_recording(s, &d->key, d->job_id, d->step_id, d->exe,
	                                         TMATCH_STORE_DEFAULT_MAX, &err);
	tmatch_profile_store_close(s);
	tmatch_profile_store_stem(&d->key, stem, sizeof(stem));
	if (rc < 0)
		tmatch_log_printf(log, log_arg, TMATCH_LOG_WARNING,
		                  "learn: the recorded profile is not stored: %s", err.msg);
	else if (rc == 0)
		tmatch_log_printf(log, log_arg, TMATCH_LOG_INFO,
		                  "learn: the step left no profile: not learned");
	else if (rc == 1)
		tmatch_log_printf(log, log_arg, TMATCH_LOG_INFO,
		                  "learn: stored the profile of %s at %d tasks (entry %s)", d->exe,
		                  d->key.ranks, stem);
	return rc < 0 ? -1 : 0;
}

int tmatch_place_learn_site_prepare(const tmatch_config_t *cfg, uid_t uid, gid_t gid,
                                    tmatch_error_t *err)
{
	if (!cfg || !cfg->store[0] || uid == 0)
		return 0;
	return tmatch_profile_store_make_user_dir(cfg->store, uid, gid, err);
}

int tmatch_place_learn_find(const tmatch_config_t *cfg, tmatch_place_mpi_program_fn mpi_program,
                            char *const argv[], const char *path_env, const char *cwd, int ntasks,
                            const char *xdg, const char *home, char *path, size_t len, char *exe,
                            size_t exelen, tmatch_error_t *err)
{
	tmatch_profile_store_key_t key;
	tmatch_profile_store_t *s;
	tmatch_error_t e;
	int rc;

	if (!path || len == 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "learn: no buffer");
	rc = tmatch_place_learn_key(cfg, mpi_program, argv, path_env, cwd, ntasks, &key, exe,
	                            exelen, err);
	if (rc != 0)
		return -1; /* no MPI program in the command line, or an error */
	/* the store srun's decision reads (tmatch_place_learn_decide), opened
	   read only: nothing made, no last use */
	tmatch_error_clear(&e);
	s = tmatch_profile_store_open(cfg->store[0] ? cfg->store : NULL, xdg, home, 0, &e);
	if (!s && errno == ENOENT)
		return 0; /* no store yet: nothing stored */
	rc = s ? tmatch_profile_store_get(s, &key, TMATCH_STORE_READONLY, path, len, NULL, &e) : -1;
	tmatch_profile_store_close(s);
	if (rc >= 0)
		return rc;
	if (err)
		*err = e;
	return -1;
}
