/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record.c - the --treematch-record=FILE[,collectives=MODE][,mpi=ABI] option of
 * treematch.so: record the step's communication profile with the
 * preloadable recorder, for the MPI the program is linked with.
 *
 *   srun (local):  check the value, refuse --treematch in the same step
 *                  (local_user_init: getopt works from there on),
 *                  turn FILE into an absolute path in a writable directory
 *                  and pass it to the tasks (TREEMATCH_RECORD_OUTPUT in
 *                  srun's environment, which the step inherits).
 *   task_init:     find the program's MPI ABI from its DT_NEEDED entries
 *                  (profiler/mpiabi.h) and preload the matching recorder
 *                  (LD_PRELOAD, prepended to the user's). A program whose
 *                  MPI cannot be told fails the step with a message: the
 *                  wrong recorder would crash it.
 *
 * The recorders live in the installed directory (profiler/launch.h), or in
 * $TREEMATCH_RECORD_LIBDIR of the job's environment (tests, private installs:
 * the preload only affects the user's own tasks); the output path and the
 * task's environment are made by profiler/launch.c, as for `treematch
 * record`. Hooks called by spank/treematch.c (see spank_private.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "profiler/launch.h"
#include "placement/learn.h"
#include "placement/step.h"
#include "spank/spank_private.h"

static struct {
	char *value;  /* the option's value, NULL when not given */
	int too_long; /* given, but longer than MAX_REC_VALUE: not kept */
} rec;

struct rec_opts {
	char file[PATH_MAX];
	tmatch_record_coll_t collectives;
	int abi_given;
	tmatch_mpiabi_t abi;
};

/* The longest value kept: a file name and the suffixes. In slurmstepd (root)
   a longer one is not copied; task_init, as the user, says so. */
#define MAX_REC_VALUE (PATH_MAX + 64)

static int rec_cb(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	/* called more than once in slurmstepd: keep the last value */
	free(rec.value);
	rec.value = NULL;
	rec.too_long = optarg && strnlen(optarg, MAX_REC_VALUE + 1) > MAX_REC_VALUE;
	if (rec.too_long)
		return 0; /* said where it can be: srun, or the task (as the user) */
	rec.value = strdup(optarg ? optarg : "");
	return rec.value ? 0 : -1;
}

static struct spank_option rec_option = {
    "treematch-record",
    "file[,collectives=wire|logical|off][,mpi=openmpi|mpich]",
    "Record the step's MPI communication profile into <file> (written at MPI_Finalize); "
    "replay it with --treematch=<file>. See treematch(8)",
    1,
    0,
    rec_cb};

/* FILE[,collectives[=MODE]][,mpi=ABI]: the suffixes are taken from the right. */
static int parse_value(const char *value, struct rec_opts *o, char *msg, size_t len)
{
	char buf[PATH_MAX + 64];
	char *comma;
	tmatch_error_t err;

	memset(o, 0, sizeof *o);
	if (!value || !*value || strlen(value) >= sizeof buf) {
		snprintf(msg, len, "--treematch-record needs a file name");
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", value);
	while ((comma = strrchr(buf, ','))) {
		const char *opt = comma + 1;
		if (!strcmp(opt, "collectives") || !strncmp(opt, "collectives=", 12)) {
			if (tmatch_record_coll_parse(opt[11] ? opt + 12 : NULL, &o->collectives,
			                             &err) != 0) {
				snprintf(msg, len, "--treematch-record: %s", err.msg);
				return -1;
			}
		} else if (!strncmp(opt, "mpi=", 4)) {
			if (tmatch_mpiabi_parse(opt + 4, &o->abi, &err) != 0) {
				snprintf(msg, len, "--treematch-record: %s", err.msg);
				return -1;
			}
			o->abi_given = 1;
		} else {
			snprintf(msg, len,
			         "--treematch-record: unknown option '%.40s': valid options are "
			         "collectives=wire|logical|off, mpi=openmpi, mpi=mpich",
			         opt);
			return -1;
		}
		*comma = '\0';
	}
	if (!buf[0]) {
		snprintf(msg, len, "--treematch-record needs a file name before its options");
		return -1;
	}
	if (strlen(buf) >= sizeof o->file) {
		snprintf(msg, len, "--treematch-record: file name too long");
		return -1;
	}
	memcpy(o->file, buf, strlen(buf) + 1);
	return 0;
}

int tmatch__spank_record_init(spank_t sp, int ac, char **av)
{
	spank_err_t rc = spank_option_register(sp, &rec_option);

	(void)ac;
	(void)av;
	if (rc != ESPANK_SUCCESS && spank_context() != S_CTX_SLURMD &&
	    spank_context() != S_CTX_JOB_SCRIPT) {
		slurm_error("treematch: cannot register --treematch-record: %s",
		            spank_strerror(rc));
		/* as --treematch's: where a failure here would drain the node, go on */
		return tmatch__spank_init_may_fail() ? -1 : 0;
	}
	return 0;
}

int tmatch__spank_record_init_post_opt(spank_t sp, int ac, char **av)
{
	struct rec_opts o;
	char msg[PATH_MAX + 200], *abs;
	tmatch_error_t err;
	int rc;

	(void)ac;
	(void)av;
	/* srun, sbatch, salloc: a mistake stops the command (an optional
	   plugin's -1 here would be ignored) */
	if (rec.too_long && spank_remote(sp) != 1) {
		snprintf(msg, sizeof msg, "--treematch-record: the value is longer than %d bytes",
		         MAX_REC_VALUE);
		tmatch__spank_stop_local(msg);
	}
	if (!rec.value || spank_remote(sp) == 1)
		return 0;
	if (parse_value(rec.value, &o, msg, sizeof msg) != 0)
		tmatch__spank_stop_local(msg);
	if (spank_context() != S_CTX_LOCAL)
		return 0; /* sbatch/salloc: syntax only; each srun checks the rest */
	if (!(abs = tmatch_record_output_path(o.file, &err))) {
		snprintf(msg, sizeof msg, "--treematch-record=%.200s: %s", o.file, err.msg);
		tmatch__spank_stop_local(msg);
	}
	/* srun's environment is the step's: the tasks find the file here */
	rc = setenv("TREEMATCH_RECORD_OUTPUT", abs, 1);
	free(abs);
	if (rc != 0) {
		snprintf(msg, sizeof msg, "--treematch-record: %s", strerror(errno));
		tmatch__spank_stop_local(msg);
	}
	return 0;
}

/* spank_option_getopt is valid from local_user_init on (spank(8)). */
int tmatch__spank_record_local_user_init(spank_t sp, int ac, char **av)
{
	struct rec_opts o;
	char msg[PATH_MAX + 200];
	char *place = NULL;
	struct spank_option placement = {"treematch", NULL, NULL, 1, 0, NULL};

	(void)ac;
	(void)av;
	if (!rec.value || parse_value(rec.value, &o, msg, sizeof msg) != 0)
		return 0;
	if (spank_option_getopt(sp, &placement, &place) == ESPANK_SUCCESS && place &&
	    strcmp(place, "off") != 0) {
		snprintf(msg, sizeof msg,
		         "--treematch-record and --treematch=%.200s in the same step are refused: "
		         "record first, then run with --treematch=%.200s",
		         place, o.file);
		tmatch__spank_stop_local(msg);
	}
	return 0;
}

int tmatch__spank_record_user_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	return 0;
}

/* Preload the recorder of the program's MPI (abi NULL: found from the
   command line) into this task, writing to out. -1 with msg. */
static int preload(spank_t sp, const char *out, tmatch_record_coll_t collectives,
                   const tmatch_mpiabi_t *abi_given, char *msg, size_t len)
{
	char path[8192], libdir[PATH_MAX], lib[PATH_MAX], old[8192];
	int argc = 0, n, rc = 0;
	char **argv = NULL;
	tmatch_mpiabi_t abi;
	tmatch_record_env_t env[TMATCH_RECORD_ENV_MAX];
	tmatch_error_t err;

	tmatch_error_clear(&err);
	if (abi_given) {
		abi = *abi_given;
	} else {
		if (TM_ITEM2(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1) {
			snprintf(msg, len, "cannot read the step's command line");
			return -1;
		}
		if (spank_getenv(sp, "PATH", path, sizeof path) != ESPANK_SUCCESS)
			path[0] = '\0';
		if (tmatch_mpiabi_of_command(argv, path, &abi, NULL, 0, &err) != 0) {
			snprintf(msg, len, "%.600s", err.msg);
			return -1;
		}
	}
	/* The job's own TREEMATCH_RECORD_LIBDIR (tests, private installs: the
	   preload only affects the user's own tasks), else the installed one. */
	if (spank_getenv(sp, "TREEMATCH_RECORD_LIBDIR", libdir, sizeof libdir) != ESPANK_SUCCESS)
		libdir[0] = '\0';
	if (tmatch_record_locate(libdir, NULL, 0, abi, lib, sizeof lib, &err) != 0) {
		snprintf(msg, len, "%s", err.msg);
		return -1;
	}
	if (spank_getenv(sp, "LD_PRELOAD", old, sizeof old) != ESPANK_SUCCESS)
		old[0] = '\0';
	n = tmatch_record_env(lib, old, out, collectives, 0, env);
	for (int i = 0; i < n && rc == 0; i++) {
		if (env[i].value)
			rc = spank_setenv(sp, env[i].name, env[i].value, 1) != ESPANK_SUCCESS;
		else
			spank_unsetenv(sp, env[i].name);
	}
	if (n >= 0)
		tmatch_record_env_free(env, n);
	if (n < 0 || rc) {
		snprintf(msg, len, "cannot set the task's environment");
		return -1;
	}
	return 0;
}

/* Fail this task with a message, once per node (local task 0). */
static int task_fail(spank_t sp, const char *msg)
{
	int local = -1;

	if (TM_ITEM(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || local == 0)
		slurm_error("treematch: --treematch-record: %s", msg);
	return -1;
}

int tmatch__spank_record_task_init(spank_t sp, int ac, char **av)
{
	struct rec_opts o;
	char msg[PATH_MAX + 300], out[PATH_MAX];
	uint32_t stepid = 0;

	(void)ac;
	(void)av;
	if ((!rec.value && !rec.too_long) || spank_remote(sp) != 1)
		return 0;
	if (TM_ITEM(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS ||
	    !tmatch_place_step_is_handled(stepid))
		return 0;
	if (rec.too_long) {
		snprintf(msg, sizeof msg, "the value is longer than %d bytes", MAX_REC_VALUE);
		return task_fail(sp, msg);
	}
	if (parse_value(rec.value, &o, msg, sizeof msg) != 0)
		return task_fail(sp, msg);
	if (spank_getenv(sp, "TREEMATCH_RECORD_OUTPUT", out, sizeof out) != ESPANK_SUCCESS ||
	    out[0] != '/')
		snprintf(out, sizeof out, "%s", o.file);
	if (preload(sp, out, o.collectives, o.abi_given ? &o.abi : NULL, msg, sizeof msg) < 0) {
		if (strstr(msg, "cannot tell which MPI"))
			snprintf(msg + strlen(msg), sizeof msg - strlen(msg),
			         " (as --treematch-record=%.200s,mpi=openmpi)", o.file);
		return task_fail(sp, msg);
	}
	return 0;
}

/*
 * Learn mode: srun decided that this step records (its TREEMATCH_LEARN, in
 * the job's environment, read here in the task, as the user). Every task of
 * the step must have the recorder, whatever this node thinks of the store:
 * the recorder's collectives need every rank. The output is srun's choice,
 * the store's hidden file for this step, which srun stores and removes when
 * the step ends (spank/learn.c). A task that cannot have the recorder (a
 * node whose installation differs) fails: its step is stopped by the
 * caller rather than left waiting.
 */
int tmatch__spank_record_learn(spank_t sp)
{
	char text[2 * PATH_MAX + 128], out[PATH_MAX], msg[PATH_MAX + 300];
	uint32_t job = 0, step = 0;
	int local = -1;
	tmatch_place_learn_t d;
	tmatch_error_t err;

	tmatch_error_clear(&err);
	if (TM_ITEM(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    TM_ITEM(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    !tmatch_place_step_is_handled(step) ||
	    spank_getenv(sp, TMATCH_PLACE_LEARN_ENV, text, sizeof text) != ESPANK_SUCCESS ||
	    tmatch_place_learn_parse(text, job, step, &d, &err) < 0 ||
	    d.what != TMATCH_PLACE_LEARN_RECORD)
		return 0;
	if (tmatch_place_learn_recording(&d, out, sizeof out) < 0) {
		snprintf(msg, sizeof msg, "the recording's path is too long");
	} else if (preload(sp, out, TMATCH_RECORD_COLL_WIRE, NULL, msg, sizeof msg) == 0) {
		return 0; /* recorded with the collectives' messages, as the plugin places */
	}
	if (TM_ITEM(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || local == 0) {
		/* the node by Slurm's name for it: 26.05 no longer puts
		   "slurmstepd-NODE:" before a task's messages */
		char node[72] = "";
		uint32_t id = 0;

		if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS ||
		    !node[0] ||
		    strspn(node,
		           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") !=
		        strlen(node)) {
			if (TM_ITEM(sp, S_JOB_NODEID, &id) == ESPANK_SUCCESS)
				snprintf(node, sizeof node, "node %u", id);
			else
				snprintf(node, sizeof node, "a node");
		}
		slurm_error("treematch: learn: %s: srun decided to record this step, and this "
		            "node cannot (%s): the step is stopped, its other tasks would wait "
		            "for these forever; run it with --treematch=off",
		            node, msg);
	}
	return -1;
}

int tmatch__spank_record_task_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	return 0;
}

int tmatch__spank_record_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	free(rec.value);
	rec.value = NULL;
	rec.too_long = 0;
	return 0;
}

const tmatch__spank_record_hooks_t tmatch__spank_record_hooks = {
    .init = tmatch__spank_record_init,
    .init_post_opt = tmatch__spank_record_init_post_opt,
    .local_user_init = tmatch__spank_record_local_user_init,
    .user_init = tmatch__spank_record_user_init,
    .task_init = tmatch__spank_record_task_init,
    .task_exit = tmatch__spank_record_task_exit,
    .exit = tmatch__spank_record_exit,
    .learn = tmatch__spank_record_learn,
};
