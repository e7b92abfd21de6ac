/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * treematch.c - the SPANK glue of treematch.so: --treematch=PROFILE for
 * srun, sbatch and salloc. Registers the option, reads SPANK items and the
 * profile (as the job's user), hands them to the placement layer
 * (placement/: every decision lives there, unit-tested without
 * Slurm), binds in slurm_spank_task_init and turns errors into Slurm
 * messages. Nothing else.
 *
 *   srun (local):       parse and merge the options, load the profile as
 *                       the user, check it against the step's task count:
 *                       any problem fails srun before anything runs.
 *   slurmstepd:         the root side (init, init_post_opt, user_init: uid
 *                       0 or only the effective uid dropped) reads Slurm's
 *                       items, the admin's arguments and files, builds the
 *                       node tree of the step's CPUs, and hands the rest to
 *                       the helper (placement/helper.c: the job's user for
 *                       good, sandboxed), which parses the user's value,
 *                       node list and profile and maps; the root side
 *                       checks what comes back. It never parses a byte the
 *                       user wrote. task_init (in the task, as the user)
 *                       binds each task and exports its placement. A
 *                       problem logs one line and follows
 *                       failure=fallback|fail; never a crash, never a
 *                       drained node. docs/security.md has the model.
 *   sbatch/salloc:      the option is registered so #SBATCH lines work;
 *                       its syntax and profile are checked at submission.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm_version.h>
#include <slurm/spank.h>

#include "conf/topology.h"
#include "placement/env.h"
#include "placement/gpu.h"
#include "placement/helper.h"
#include "placement/inputs.h"
#include "placement/learn.h"
#include "placement/node.h"
#include "placement/plan.h"
#include "conf/plugstack.h"
#include "placement/step.h"
#include "spank/spank_private.h"

SPANK_PLUGIN(treematch, 1);

/* The companions (spank/record.c, spank/learn.c), through their tables. */
#define HOOK(name, sp, ac, av) (tmatch__spank_record_hooks.name((sp), (ac), (av)))

/*
 * Plugin state. Each process (srun, one slurmstepd per step and node, the
 * forked task children) has its own copy; nothing is shared.
 */
static struct {
	char *user_value;             /* --treematch value, NULL if not given */
	int user_value_bad;           /* slurmstepd: the value was too long to keep */
	tmatch_config_t cfg;          /* effective configuration (slurmstepd: the admin's
	                                 until the helper says what the user tightened) */
	int cfg_ok;                   /* cfg computed */
	int user_profile;             /* the profile comes from the user (not an admin default) */
	tmatch_profile_t *prof;       /* srun: kept from init_post_opt to local_user_init */
	tmatch_affinity_tree_t *node; /* the tree binding goes through */
	tmatch_place_node_t *plan;    /* this node's placement */
	double local_seconds;         /* srun: time spent in init_post_opt + local_user_init */
	int node_failed;              /* a problem was found on the node */
	char node_msg[700];           /* its one line */
	/* slurmstepd: the admin's files, read at init while it is root (22.05
	   to 26.05 call user_init with the job user's effective uid) */
	char *topology_conf; /* topology.yaml's or topology.conf's text, NULL = none */
	char *topology_file; /* its path */
	char *slurm_conf;    /* slurm.conf's text (its Topology= keys), NULL = none */
	char *topology_xml;  /* topology_xml's bytes, NULL = none */
	char *cgroup_conf;   /* cgroup.conf's text (GPU steps: ConstrainDevices), NULL = none */
	size_t topology_xml_len;
	char topology_xml_error[600];       /* why topology_xml could not be read */
	int helper_open;                    /* the helper program was opened at init, */
	int helper_fd;                      /* on this descriptor */
	char helper_error[700];             /* why it could not be */
	pid_t helper_pending;               /* a helper killed that had not ended yet */
	tmatch_affinity_devices_t *devices; /* a GPU step's devices (the plan's refer to them) */
	int ac;                             /* the plugstack.conf arguments, kept by init for */
	char **av;                          /* the option callback (Slurm's own array) */
	/* slurmstepd: the helper started at init_post_opt, by this process (the
	   only one that may run or abandon it) */
	tmatch_place_helper_started_t *started;
	pid_t started_by;
	uint32_t job_id; /* srun: the job, from local_user_init (exit has none) */
} st;

/* Wall clock (CLOCK_MONOTONIC) for the plugin's own timers. */
static double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the calling thread: what the plugin costs, whatever the load. */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int opt_cb(int val, const char *optarg, int remote);

static struct spank_option options[] = {
    {"treematch", "profile[,opts]",
     "Place tasks with TreeMatch from communication profile <profile> (a file, "
     "'off' or 'help'; see treematch(8))",
     1, 0, opt_cb},
    SPANK_OPTIONS_TABLE_END,
};

static void lib_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level == TMATCH_LOG_PROGRESS)
		return; /* for a terminal's progress line: not for Slurm's logs */
	if (level <= TMATCH_LOG_WARNING)
		slurm_info("treematch: %s", msg);
	else
		slurm_debug("treematch: %s", msg);
}

static const char *errmsg(const tmatch_error_t *err, char *buf, size_t len)
{
	return tmatch_error_format(err, buf, len);
}

/* The longest --treematch value slurmstepd keeps (a file name and options). */
#define MAX_USER_VALUE 4096

static void check_user_value(void);

/* A problem the user must fix (spank_private.h): srun's exit status on a
   required plugin's failure, 1; srun's clean-up process removes a step it
   created already. */
void tmatch__spank_stop_local(const char *msg)
{
	slurm_error("treematch: %s", msg);
	exit(1);
}

#define stop_local tmatch__spank_stop_local

static int opt_cb(int val, const char *optarg, int remote)
{
	tmatch_config_t probe;
	tmatch_error_t err;
	char buf[900];
	int kind;

	(void)val;
	free(st.user_value);
	st.user_value = NULL;
	if (remote) {
		/* slurmstepd, root: keep the bytes, parse nothing (the helper does). */
		st.user_value_bad = !optarg || strnlen(optarg, MAX_USER_VALUE + 1) > MAX_USER_VALUE;
		if (!st.user_value_bad && !(st.user_value = strdup(optarg)))
			return -1;
		return 0;
	}
	tmatch_error_clear(&err);
	kind = tmatch_place_classify_value(optarg, &err);
	if (kind < 0)
		stop_local(errmsg(&err, buf, sizeof(buf)));
	if (kind == TMATCH_PLACE_VALUE_HELP) {
		fputs(tmatch_place_help_text(), stderr);
		exit(0);
	}
	/* Syntax only; the profile itself is read in init_post_opt. */
	tmatch_config_init(&probe);
	if (tmatch_config_parse_string(&probe, optarg, TMATCH_CONFIG_USER, "--treematch", &err) < 0)
		stop_local(errmsg(&err, buf, sizeof(buf)));
	st.user_value = strdup(optarg);
	if (!st.user_value)
		return -1;
	check_user_value();
	return 0;
}

/*
 * hwloc's plugins (placement/inputs.h, TMATCH_PLACE_HWLOC_BLACKLIST) stay out of
 * slurmstepd unless the admin set HWLOC_PLUGINS_BLACKLIST. Tasks do not
 * inherit it (they get the job's environment).
 */
static void read_admin_files(spank_t sp, int ac, char **av);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	st.ac = ac;
	st.av = av;
	if (spank_context() == S_CTX_REMOTE) {
		setenv("HWLOC_PLUGINS_BLACKLIST", TMATCH_PLACE_HWLOC_BLACKLIST, 0);
		tmatch__spank_stop_init();
		read_admin_files(sp, ac, av);
	}
	/* by index within the table: spank_option_register takes a non-const
	   pointer, after which clang-analyzer 21 no longer knew the table's end */
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]) && options[i].name; i++) {
		struct spank_option *o = &options[i];
		spank_err_t rc = spank_option_register(sp, o);

#ifdef TMATCH_TEST_FAIL_INIT
		/* tests/e2e's failinit.so only: slurmstepd's registration refused
		   (Slurm's own refusals cannot be caused from outside) */
		if (spank_context() == S_CTX_REMOTE)
			rc = ESPANK_NOSPACE;
#endif
		if (rc != ESPANK_SUCCESS && spank_context() != S_CTX_SLURMD &&
		    spank_context() != S_CTX_JOB_SCRIPT) {
			slurm_error("treematch: cannot register --%s: %s", o->name,
			            spank_strerror(rc));
			/* where a failure here would drain the node, go on */
			if (tmatch__spank_init_may_fail())
				return -1;
		}
	}
	return HOOK(init, sp, ac, av);
}

/* Open the admin file named by admin_file= (as whoever runs us: srun is the
   user, slurmstepd root in slurm_spank_init). -1 when none; -1 and
   err (about that argument of plugstack.conf) when it cannot be opened. */
static int open_admin_file(int ac, char **av, int *fd, tmatch_error_t *err)
{
	const char *path = tmatch_place_admin_file(ac, av);
	int e, index = 0;

	*fd = -1;
	if (!path)
		return 0;
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (*fd < 0) {
		e = errno;
		for (int i = 0; i < ac; i++)
			if (av[i] && strncmp(av[i], "admin_file=", 11) == 0)
				index = i + 1; /* the last one, as tmatch_place_admin_file */
		return tmatch_error_set(err, e, "plugstack.conf", 0, index,
		                        "cannot open admin file %s: %s", path, strerror(e));
	}
	return 0;
}

/* Effective configuration into st.cfg: with the user's value in srun,
   salloc and sbatch; the admin's alone in slurmstepd (the helper merges the
   user's). Returns 0, or -1 with err (a problem of the admin's arguments
   names the file, line and column of plugstack.conf). */
static int compute_config_err(int ac, char **av, tmatch_error_t *err)
{
	int fd = -1, rc;

	if (st.cfg_ok)
		return 0;
	tmatch_error_clear(err);
	rc = open_admin_file(ac, av, &fd, err);
	if (rc == 0)
		rc = tmatch_place_config(ac, av, fd,
		                         spank_context() == S_CTX_REMOTE ? NULL : st.user_value,
		                         &st.cfg, err);
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		/* the admin's arguments: say which file and line they are on */
		tmatch_place_plugstack_where(getenv("SLURM_CONF"), ac, av, err);
		return -1;
	}
	if (spank_context() != S_CTX_REMOTE)
		st.user_profile = tmatch_place_user_profile(st.user_value);
	st.cfg_ok = 1;
	/* said once, in srun/salloc/sbatch: the nodes keep the site's values */
	if (st.cfg.refused[0] &&
	    (spank_context() == S_CTX_LOCAL || spank_context() == S_CTX_ALLOCATOR))
		slurm_spank_log("treematch: ignored, users may only tighten the site's policy: %s",
		                st.cfg.refused);
	return 0;
}

/* compute_config_err, the problem logged. */
static int compute_config(int ac, char **av)
{
	tmatch_error_t err;
	char buf[900];

	if (compute_config_err(ac, av, &err) < 0) {
		slurm_error("treematch: %s", errmsg(&err, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}

/* The helper program as installed (the Makefile gives LIBEXECDIR's),
   unless plugstack.conf says helper=PATH. */
#ifndef TMATCH_HELPER_PATH
#define TMATCH_HELPER_PATH "/usr/libexec/treematch/treematch-helper"
#endif
/* slurmstepd, slurm_spank_init, as root: the helper program, opened once
   and started from this descriptor at each step's user_init. */
static void open_helper(int ac, char **av)
{
	const char *path = tmatch_place_helper_path(ac, av);
	tmatch_error_t err;

	tmatch_error_clear(&err);
	st.helper_fd = tmatch_place_helper_open(path ? path : TMATCH_HELPER_PATH, &err);
	st.helper_open = st.helper_fd >= 0;
	if (!st.helper_open)
		errmsg(&err, st.helper_error, sizeof(st.helper_error));
}

/* The network as the slurm.conf slurmstepd itself uses (its own
   SLURM_CONF, not the job's) describes it: topology.yaml, else
   topology.conf, beside it, with slurm.conf's text (its Topology= keys);
   and the admin's topology_xml: at most 16 and 64 MiB each, read, not
   parsed (the helper parses them). */
#define MAX_TOPOLOGY_CONF (16 * 1024 * 1024)
#define MAX_TOPOLOGY_XML  (64 * 1024 * 1024)
/* topology.yaml exists for Slurm from 25.05 on: before, slurmctld reads
   topology.conf only, whatever lies beside it, and so does the plugin */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
#define SLURM_READS_YAML 1
#else
#define SLURM_READS_YAML 0
#endif

/* cgroup.conf beside slurmstepd's slurm.conf (ConstrainDevices: how Slurm
   numbers a GPU step's GPUs): the admin's text, at most 64 KiB, or NULL. */
#define MAX_CGROUP_CONF (64 * 1024)

static char *cgroup_conf_text(void)
{
	const char *conf = getenv("SLURM_CONF");
	const char *slash;
	char path[PATH_MAX];
	size_t len;

	if (!conf || !*conf)
		conf = "/etc/slurm/slurm.conf";
	slash = strrchr(conf, '/');
	if (snprintf(path, sizeof(path), "%.*s/cgroup.conf", slash ? (int)(slash - conf) : 1,
	             slash ? conf : ".") >= (int)sizeof(path))
		return NULL;
	return tmatch_file_read(path, MAX_CGROUP_CONF, &len, NULL);
}

/* Root, before slurmstepd drops privileges: the job user's directory in the
   admin's site store, made at their first step on this node so that nobody
   else can make it first (learn mode). Only the admin's settings and
   Slurm's items are read. */
static void site_store_prepare(spank_t sp)
{
	tmatch_error_t err;
	uid_t uid = 0;
	gid_t gid = 0;
	char buf[900];

	if (!st.cfg.store[0] || TM_ITEM(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    TM_ITEM(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
		return;
	tmatch_error_clear(&err);
	if (tmatch_place_learn_site_prepare(&st.cfg, uid, gid, &err) < 0)
		slurm_info("treematch: learn: %s", errmsg(&err, buf, sizeof(buf)));
}

/*
 * slurmstepd, slurm_spank_init: the admin's policy (plugstack.conf, the
 * admin_file), topology.yaml or topology.conf (and slurm.conf), topology_xml
 * and cgroup.conf (for GPU steps, not parsed here), read now, as root, and
 * kept for user_init, which Slurm calls with the job user's effective uid: a
 * file only root may read was lost there. Nothing the user wrote is read.
 */
static void read_admin_files(spank_t sp, int ac, char **av)
{
	uint32_t stepid = 0, nnodes = 1;
	tmatch_error_t err;
	char *path;

	if (TM_ITEM(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS ||
	    !tmatch_place_step_is_handled(stepid) || compute_config(ac, av) < 0)
		return;
	open_helper(ac, av);
	site_store_prepare(sp);
	if (TM_ITEM(sp, S_JOB_NNODES, &nnodes) == ESPANK_SUCCESS && nnodes > 1 &&
	    (path = tmatch_conf_topology_find(NULL, getenv("SLURM_CONF"), SLURM_READS_YAML))) {
		size_t len;

		st.topology_conf = tmatch_file_read(path, MAX_TOPOLOGY_CONF, &len, NULL);
		if (st.topology_conf) {
			st.topology_file = path;
			st.slurm_conf = tmatch_conf_slurm_read(getenv("SLURM_CONF"), NULL);
		} else {
			free(path);
		}
	}
	st.cgroup_conf = cgroup_conf_text();
	if (st.cfg.topology_xml[0]) {
		tmatch_error_clear(&err);
		st.topology_xml = tmatch_file_read(st.cfg.topology_xml, MAX_TOPOLOGY_XML,
		                                   &st.topology_xml_len, &err);
		if (!st.topology_xml)
			errmsg(&err, st.topology_xml_error, sizeof(st.topology_xml_error));
	}
}

/* srun, salloc, sbatch (the user): load the configured profile. NULL with msg. */
static tmatch_profile_t *load_profile(char *msg, size_t len)
{
	return tmatch_place_load_profile(&st.cfg, lib_log, NULL, msg, len);
}

/* The launcher's own command line (/proc/self/cmdline, at most 256 KiB),
   every word, the program's name first, in *words (free both). */
#define MAX_CMDLINE (256 * 1024)

static int launcher_words(char **text, char ***words)
{
	size_t len = 0;
	ssize_t got = 1;
	int n = 0, fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	*words = NULL;
	/* a file of /proc: its size is not known before it is read */
	*text = fd >= 0 ? malloc(MAX_CMDLINE) : NULL;
	while (*text && len < MAX_CMDLINE && got > 0)
		if ((got = read(fd, *text + len, MAX_CMDLINE - len)) > 0)
			len += (size_t)got;
	if (fd >= 0)
		close(fd);
	if (!*text || got < 0 || len == 0 || len == MAX_CMDLINE ||
	    !(*words = calloc(len + 1, sizeof(**words))))
		return 0;
	for (size_t i = 0, start = 0; i < len; i++) {
		if ((*text)[i] != '\0')
			continue;
		(*words)[n++] = *text + start;
		start = i + 1;
	}
	return n;
}

/* The job's working directory as srun (local: its options end where the
   step's command, S_JOB_ARGV, begins, or where srun's getopt stopped),
   sbatch or salloc gives it. */
static void launcher_job_cwd(spank_t sp, char *out, size_t len)
{
	char cwd[PATH_MAX], *text = NULL, **words = NULL, **argv = NULL;
	int n = launcher_words(&text, &words) - 1, argc = 0, nopts = -1;
	int local = spank_context() == S_CTX_LOCAL;

	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	if (n < 0)
		n = 0;
	if (local && TM_ITEM2(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS && argc <= n)
		nopts = n - argc;
	else if (local && optind > 1 && optind - 1 <= n)
		nopts = optind - 1;
	if (tmatch_place_job_cwd(n > 0 ? words + 1 : NULL, n, nopts,
	                         local ? getenv("SLURM_WORKING_DIR") : NULL, cwd, out, len) < 0)
		snprintf(out, len, "%s", cwd);
	free(words);
	free(text);
}

/* srun, salloc, sbatch: the profile, from the job's working directory
   (NULL: already there), read and checked (ntasks: the step's, or 0). A
   problem the user must fix stops the command; a site default that does
   not fit is dropped. */
static void check_profile(int ntasks, const char *job_cwd)
{
	tmatch_error_t err;
	char msg[1000];

	if (!st.cfg.enabled || !st.cfg.profile[0])
		return;
	tmatch_error_clear(&err);
	if (!st.prof) { /* not read yet */
		if (job_cwd && tmatch_place_profile_in_job_dir(&st.cfg, job_cwd) < 0) {
			slurm_error("treematch: profile %s: the path is too long in %s",
			            st.cfg.profile, job_cwd);
			exit(1); /* as stop_local */
		}
		if (!(st.prof = load_profile(msg, sizeof(msg)))) {
			if (tmatch_place_must_fail(&st.cfg, st.user_profile))
				stop_local(msg);
			slurm_spank_log("treematch: %s; site default not applied", msg);
			st.cfg.enabled = 0;
			return;
		}
		if (tmatch_place_check_profile(&st.cfg, st.prof, 0, &err) < 0)
			stop_local(errmsg(&err, msg, sizeof(msg)));
	}
	if (ntasks > 0 && tmatch_place_check_profile(&st.cfg, st.prof, ntasks, &err) < 0) {
		if (tmatch_place_must_fail(&st.cfg, st.user_profile))
			stop_local(errmsg(&err, msg, sizeof(msg)));
		slurm_spank_log("treematch: site default profile not applied: %s",
		                errmsg(&err, msg, sizeof(msg)));
		st.cfg.enabled = 0;
	}
}

/* The user's value in srun, sbatch, salloc (from the option callback):
   the site's policy, then the user's profile read and checked when its
   path is absolute (a relative one waits for --chdir: init_post_opt); a
   problem stops the command. */
static void check_user_value(void)
{
	char msg[1000], line[1200];
	tmatch_error_t err;

	st.cfg_ok = 0;
	tmatch_profile_destroy(st.prof);
	st.prof = NULL;
	if (compute_config_err(st.ac, st.av, &err) < 0) {
		snprintf(line, sizeof(line),
		         "%s (the site's configuration of treematch: --treematch cannot be used "
		         "until the administrator fixes it)",
		         errmsg(&err, msg, sizeof(msg)));
		stop_local(line);
	}
	if (!st.cfg.enabled || st.cfg.profile[0] != '/' || !st.user_profile)
		return; /* off, learn, relative, or the site's default: init_post_opt */
	check_profile(0, NULL);
}

/* srun's own words and where getopt stopped in them: the task count given
   there, 0 when it does not say for sure. */
static int srun_ntasks(void)
{
	char *text = NULL, **words = NULL;
	int n = launcher_words(&text, &words), ntasks = 0;

	if (n > 0)
		ntasks = tmatch_place_srun_ntasks(n, words, optind);
	free(words);
	free(text);
	return ntasks;
}

/* slurmstepd: the user asked for a placement, or the admin's default
   places every step (the helper decides the rest). */
static int node_wants_plan(void)
{
	return st.user_value || st.user_value_bad ||
	       (st.cfg.enabled && (st.cfg.profile[0] || st.cfg.learn));
}

/*
 * slurmstepd, init_post_opt, as root: the helper of a step to place is
 * started now, so that its exec, its linking and what it sets up without
 * input overlap Slurm's own preparation of the step (switch and MPI
 * plugins, cgroups, PAM, I/O) before user_init, where it gets its input.
 * It waits until then having read nothing. When it cannot be started
 * here, user_init starts one and says why.
 */
static void start_helper_ahead(spank_t sp)
{
	uint32_t stepid = 0;
	tmatch_error_t err;

	if (!st.cfg_ok || !st.helper_open || st.user_value_bad || !node_wants_plan() ||
	    TM_ITEM(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS ||
	    !tmatch_place_step_is_handled(stepid))
		return;
	tmatch_error_clear(&err);
	st.started = tmatch_place_helper_start(st.helper_fd, &err);
	st.started_by = getpid();
}

/* The helper started ahead and not run: killed and reaped, by the process
   that started it (Slurm's CONTAIN_SPANK runs user_init in a clone of
   slurmstepd, which leaves it to slurmstepd's exit). */
static void abandon_started(void)
{
	pid_t left;

	if (!st.started || st.started_by != getpid())
		return;
	left = tmatch_place_helper_abandon(st.started);
	st.started = NULL;
	if (left > 0 && !st.helper_pending)
		st.helper_pending = left;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	char job_cwd[PATH_MAX], msg[1000];
	tmatch_error_t err;
	double t0 = wall_seconds();
	int ntasks;

	if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR) {
		if (compute_config_err(ac, av, &err) < 0) {
			/* the site's typo: said on every srun, but only the jobs that
			   asked for treematch stop (the option callback stopped them) */
			slurm_spank_log("treematch: %s: treematch is off until the administrator "
			                "fixes it",
			                errmsg(&err, msg, sizeof(msg)));
			return HOOK(init_post_opt, sp, ac, av);
		}
		/* the profile from the job's working directory (--chdir), before
		   anything is allocated */
		if (st.cfg.enabled && st.cfg.profile[0] && !st.prof) {
			launcher_job_cwd(sp, job_cwd, sizeof(job_cwd));
			check_profile(0, job_cwd);
		}
		/* srun: the rank count too, when its command line gives the task
		   count (SPANK says it only once the step exists) */
		if (ctx == S_CTX_LOCAL && st.cfg.enabled && st.prof && (ntasks = srun_ntasks()) > 0)
			check_profile(ntasks, NULL);
		st.local_seconds = wall_seconds() - t0;
	} else if (ctx == S_CTX_REMOTE) {
		start_helper_ahead(sp);
	}
	return HOOK(init_post_opt, sp, ac, av);
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	uint32_t ntasks = 0;
	char job_cwd[PATH_MAX];
	double t0 = wall_seconds();

	if (TM_ITEM(sp, S_JOB_ID, &st.job_id) != ESPANK_SUCCESS)
		st.job_id = 0;
	if (!st.cfg_ok)
		return HOOK(local_user_init, sp, ac, av);
	launcher_job_cwd(sp, job_cwd, sizeof(job_cwd));
	if (st.cfg.enabled && st.cfg.profile[0]) {
		if (TM_ITEM(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS)
			ntasks = 0;
		check_profile((int)ntasks, job_cwd);
		st.local_seconds += wall_seconds() - t0;
		if (st.cfg.verbose >= 2 && st.prof)
			slurm_spank_log("treematch: srun: profile %s checked in %.2f ms",
			                st.cfg.profile, st.local_seconds * 1e3);
	}
	tmatch__spank_learn_hooks.local_user_init(sp, &st.cfg, job_cwd);
	return HOOK(local_user_init, sp, ac, av);
}

static void node_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void node_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st.node_msg, sizeof(st.node_msg), fmt, ap);
	va_end(ap);
	st.node_failed = 1;
	/* One line, in slurmd's log and (forwarded by slurmstepd) on srun's stderr. */
	if (st.cfg_ok && st.cfg.failure == TMATCH_FAILURE_FAIL)
		slurm_error("treematch: %s (failure=fail: the tasks are not started)", st.node_msg);
	else if (st.cfg_ok)
		slurm_error("treematch: %s: falling back to Slurm's binding", st.node_msg);
	else
		slurm_error("treematch: %s", st.node_msg);
}

/* The node list of the job's environment (22.05 has no item for it),
   copied, not parsed: the helper checks it against S_JOB_NNODES. */
#define MAX_NODELIST (64 * 1024)

static char *job_nodelist(spank_t sp)
{
	char *buf = malloc(MAX_NODELIST);

	if (buf && spank_getenv(sp, "SLURM_STEP_NODELIST", buf, MAX_NODELIST) != ESPANK_SUCCESS &&
	    spank_getenv(sp, "SLURM_NODELIST", buf, MAX_NODELIST) != ESPANK_SUCCESS) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* A variable of the job's environment, copied (at most 8 KiB), not parsed:
   the helper reads it as the user. NULL when unset or longer. */
#define MAX_JOB_VAR 8192

static char *job_env_copy(spank_t sp, const char *name)
{
	char *buf = malloc(MAX_JOB_VAR);

	if (buf && spank_getenv(sp, name, buf, MAX_JOB_VAR) != ESPANK_SUCCESS) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* TREEMATCH_PLAN: set by `treematch layout --plan --exec`; TREEMATCH_LEARN:
   srun's learn decision for the step. The helper reads no environment:
   these copies are all it has. */

/* Slurm's words on a step's GPUs in the job's environment (user_init: the
   step's lists), copied, not parsed: the helper reads them. */
enum { GPU_VARS = 5 };
static const char *const gpu_vars[GPU_VARS] = {"SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES",
                                               "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
                                               "GPU_DEVICE_ORDINAL"};

/* The job user's supplementary groups: slurmstepd has set them before
   user_init. Group 0 is kept only when it is the job's own group. */
static int job_groups(gid_t job_gid, gid_t **groups)
{
	int n = getgroups(0, NULL), k = 0;

	*groups = NULL;
	if (n <= 0 || n > 65536) /* NGROUPS_MAX is 65536 on Linux */
		return 0;
	/* n is bounded by NGROUPS_MAX above */
	// NOLINTNEXTLINE(clang-analyzer-optin.taint.TaintedAlloc)
	*groups = calloc((size_t)n, sizeof(**groups));
	if (!*groups || (n = getgroups(n, *groups)) < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if ((*groups)[i] != 0 || job_gid == 0)
			(*groups)[k++] = (*groups)[i];
	return k;
}

/* The whole work of a node, root side: read the step's items and the
   admin's files, build the node tree, run the helper on the rest, keep
   what it sent once checked. */
static void plan_node(spank_t sp)
{
	double t0 = wall_seconds(), c0 = cpu_seconds();
	tmatch_place_node_in_t in;
	tmatch_place_node_prep_t prep;
	tmatch_place_helper_in_t hin;
	tmatch_place_helper_out_t hout;
	tmatch_error_t err;
	uint32_t nodeid = 0, nnodes = 1, nlocal = 0, ntotal = 0, cpt = 0, jobid = 0, stepid = 0;
	uid_t uid = 0;
	gid_t gid = 0, *groups = NULL;
	char *step_cores = NULL, *job_cores = NULL, *nodelist = NULL, *plan = NULL, *part = NULL;
	char *learn = NULL;
	char *gpu_copy[GPU_VARS] = {NULL};
	tmatch_place_gpu_env_t gpu_env;
	int *ranks = NULL, ngroups;

	memset(&prep, 0, sizeof(prep));
	tmatch_error_clear(&err);
	TM_ITEM(sp, S_JOB_NODEID, &nodeid);
	TM_ITEM(sp, S_JOB_NNODES, &nnodes);
	TM_ITEM(sp, S_JOB_LOCAL_TASK_COUNT, &nlocal);
	TM_ITEM(sp, S_JOB_TOTAL_TASK_COUNT, &ntotal);
	TM_ITEM(sp, S_STEP_ALLOC_CORES, &step_cores);
	TM_ITEM(sp, S_JOB_ALLOC_CORES, &job_cores);
	TM_ITEM(sp, S_JOB_ID, &jobid);
	TM_ITEM(sp, S_JOB_STEPID, &stepid);
	/* uint32_t, as spank.h says: a narrower variable was overwritten. */
	if (TM_ITEM(sp, S_STEP_CPUS_PER_TASK, &cpt) != ESPANK_SUCCESS || cpt < 1)
		cpt = 1;
	if (st.user_value_bad) {
		st.cfg.failure = TMATCH_FAILURE_FAIL; /* the user asked; it cannot be done */
		node_fail("node %u: the --treematch value is longer than %d bytes", nodeid,
		          MAX_USER_VALUE);
		goto out;
	}
	/* The helper becomes the job's user as Slurm names it, or does not run:
	   never whoever slurmstepd happens to be (root). */
	if (TM_ITEM(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    TM_ITEM(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
		node_fail("node %u: Slurm does not give the job's user and group (S_JOB_UID, "
		          "S_JOB_GID): not placed",
		          nodeid);
		goto out;
	}
	if (nlocal > 65536 || nnodes < 1 || nodeid >= nnodes) {
		node_fail("node %u: Slurm gave %u local tasks on node %u of %u: not placed", nodeid,
		          nlocal, nodeid, nnodes);
		goto out;
	}
	ranks = calloc(nlocal ? nlocal : 1, sizeof(*ranks));
	if (!ranks) {
		node_fail("node %u: out of memory", nodeid);
		goto out;
	}
	for (uint32_t i = 0; i < nlocal; i++) {
		uint32_t g = 0;

		if (TM_ITEM2(sp, S_JOB_LOCAL_TO_GLOBAL_ID, i, &g) != ESPANK_SUCCESS) {
			node_fail("node %u: cannot read the global id of local task %u", nodeid, i);
			goto out;
		}
		ranks[i] = (int)g;
	}
	if (st.cfg.topology_xml[0] && !st.topology_xml) {
		node_fail("node %u: %s", nodeid, st.topology_xml_error);
		goto out;
	}
	if (!st.helper_open) {
		node_fail("node %u: %s", nodeid,
		          st.helper_error[0] ? st.helper_error : "no helper program");
		goto out;
	}
	nodelist = job_nodelist(sp);
	plan = job_env_copy(sp, "TREEMATCH_PLAN");
	if (nnodes > 1 && nodelist && !plan)
		part = job_env_copy(sp, "SLURM_JOB_PARTITION");

	/* A GPU step: Slurm's lists and the admin's cgroup.conf, for the helper */
	memset(&gpu_env, 0, sizeof(gpu_env));
	for (int i = 0; i < GPU_VARS; i++)
		gpu_copy[i] = job_env_copy(sp, gpu_vars[i]);
	gpu_env.step_gpus = gpu_copy[0];
	gpu_env.cuda = gpu_copy[1];
	gpu_env.rocr = gpu_copy[2];
	gpu_env.ze = gpu_copy[3];
	gpu_env.ordinal = gpu_copy[4];
	if (tmatch_place_gpu_env_has_gpus(&gpu_env))
		gpu_env.cgroup_conf = st.cgroup_conf;

	memset(&in, 0, sizeof(in));
	in.cfg = &st.cfg;
	in.topology_xml_text = st.topology_xml;
	in.topology_xml_len = st.topology_xml_len;
	in.gpu_env = &gpu_env;
	in.step_cores = step_cores;
	in.job_cores = job_cores;
	in.cpus_per_task = (int)cpt;
	in.nlocal = (int)nlocal;
	in.log = lib_log;
	tmatch_place_node_prepare(&in, &prep);

	ngroups = job_groups(gid, &groups);
	memset(&hin, 0, sizeof(hin));
	hin.helper_fd = st.helper_fd;
	if (st.started && st.started_by == getpid()) {
		hin.started = st.started; /* spent by the run */
		st.started = NULL;
	}
	hin.admin = &st.cfg;
	hin.user_value = st.user_value;
	hin.nodelist = nodelist;
	/* the switches, for the positions (a plan carries them) */
	hin.topology_conf = nnodes > 1 && nodelist && !plan ? st.topology_conf : NULL;
	hin.topology_file = hin.topology_conf ? st.topology_file : NULL;
	hin.slurm_conf = hin.topology_conf ? st.slurm_conf : NULL;
	hin.partition = hin.topology_conf ? part : NULL;
	hin.node_index = (int)nodeid;
	hin.node_count = (int)nnodes;
	hin.nlocal = (int)nlocal;
	hin.ntasks_total = (int)ntotal;
	hin.cpus_per_task = (int)cpt;
	hin.ranks = ranks;
	hin.step_cores = step_cores;
	hin.job_cores = job_cores;
	hin.job_id = jobid;
	hin.step_id = stepid;
	hin.plan_env = plan;
	/* learn mode: srun's decision for the step, copied, not parsed */
	hin.learn_env = learn = job_env_copy(sp, TMATCH_PLACE_LEARN_ENV);
	hin.prep = &prep;
	hin.gpu_env = &gpu_env;
	hin.uid = uid;
	hin.gid = gid;
	hin.groups = groups;
	hin.ngroups = ngroups;
	if (tmatch_place_helper_run(&hin, &hout, &err) < 0) {
		st.helper_pending = hout.pending;
		st.cfg = hout.cfg;
		tmatch_affinity_devices_destroy(hout.devices);
		node_fail("%s", err.msg);
		goto out;
	}
	st.cfg = hout.cfg;
	st.user_profile = hout.user_profile;
	if (!hout.plan)
		goto out; /* --treematch=off */
	if (hout.plan->status == TMATCH_PLACE_SKIPPED) {
		if (hout.plan->why_level >= TMATCH_LOG_DEBUG)
			slurm_debug("treematch: %s", hout.plan->why);
		else
			slurm_spank_log("treematch: %s", hout.plan->why);
		tmatch_place_node_destroy(hout.plan);
		goto out;
	}
	st.plan = hout.plan;
	st.devices = hout.devices;
	/* a note the user did not ask for (verbose prints it): the admin's */
	if (st.plan->note[0] && !st.cfg.verbose && !st.cfg.dry_run)
		slurm_info("treematch: %s", st.plan->note);
	st.node = prep.tree; /* the tree the helper's leaves were checked on */
	prep.tree = NULL;
	st.plan->node_seconds = wall_seconds() - t0;
	st.plan->node_cpu_seconds = cpu_seconds() - c0;
out:
	tmatch_place_node_prep_clear(&prep);
	free(learn);
	for (int i = 0; i < GPU_VARS; i++)
		free(gpu_copy[i]);
	free(nodelist);
	free(plan);
	free(part);
	free(groups);
	free(ranks);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	uint32_t stepid = 0;

	if (spank_remote(sp) == 1 && TM_ITEM(sp, S_JOB_STEPID, &stepid) == ESPANK_SUCCESS &&
	    tmatch_place_step_is_handled(stepid)) {
		/* The admin's policy, read at init as root (said there when it
		   failed); the user's value goes to the helper. */
		if (!st.cfg_ok)
			node_fail("the site's configuration of treematch has an error (said at "
			          "init): Slurm's binding kept");
		else if (node_wants_plan())
			plan_node(sp);
		abandon_started(); /* when plan_node stopped before running it */
		/* this node's tasks fail in task_init; the other nodes' must not
		   wait for them: the whole step is cancelled once the first of
		   them has ended (slurm_spank_task_exit; not from here, stop.c) */
		if (tmatch_place_stop_step(st.cfg_ok ? &st.cfg : NULL, st.node_failed))
			tmatch__spank_stop_ask(1);
	}
	return HOOK(user_init, sp, ac, av);
}

/* A GPU step's task: what Slurm did to it (SLURMD_TRES_BIND, its own
   SLURM_STEP_GPUS), read here in the task as its user, decides whose GPUs
   it has and, following Slurm's, its CPUs and card (placement/gpu.c). */
#define MAX_TRES_BIND 4096

static void gpu_task(spank_t sp, int local, char *why, size_t len)
{
	char *tres = malloc(MAX_TRES_BIND), *own = malloc(MAX_JOB_VAR);

	if (tres && spank_getenv(sp, "SLURMD_TRES_BIND", tres, MAX_TRES_BIND) != ESPANK_SUCCESS)
		tres[0] = '\0';
	if (own && spank_getenv(sp, "SLURM_STEP_GPUS", own, MAX_JOB_VAR) != ESPANK_SUCCESS)
		own[0] = '\0';
	if (!tres || !own ||
	    tmatch_place_gpu_task(st.plan, st.node, local, tres, own, SLURM_VERSION_NUMBER, why,
	                          len) < 0) {
		/* cannot tell: keep Slurm's binding rather than guess */
		st.plan->task[local].gpu_mode = TMATCH_GPU_MODE_KEEP;
		snprintf(why, len, "Slurm's GPU binding could not be read: kept");
	}
	free(tres);
	free(own);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	tmatch_place_env_t *env = NULL;
	tmatch_error_t err;
	char *line = NULL, *list = NULL, buf[900], why[400] = "";
	int local = -1, n, rc = 0;
	pid_t pid = getpid();
	double t0 = wall_seconds();

	if (TM_ITEM(sp, S_TASK_ID, &local) != ESPANK_SUCCESS)
		local = -1;
	if (st.node_failed && st.cfg_ok && st.cfg.failure == TMATCH_FAILURE_FAIL)
		return -1; /* said once by node_fail() */
	if (st.plan && local >= 0 && local < st.plan->ntasks) {
		const tmatch_place_task_t *t = &st.plan->task[local];

		if (st.plan->gpu_step)
			gpu_task(sp, local, why, sizeof(why));
		n = tmatch_place_task_env(st.plan, &st.cfg, local, &env);
		for (int i = 0; i < n; i++) {
			if (env[i].value)
				spank_setenv(sp, env[i].name, env[i].value, env[i].overwrite);
			else
				spank_unsetenv(sp, env[i].name);
		}
		tmatch_place_env_free(env, n);
		if (!st.cfg.dry_run && t->gpu_mode != TMATCH_GPU_MODE_KEEP) {
			tmatch_error_clear(&err);
			if (tmatch_affinity_bind_cpuset(st.node, 0, 0, t->cpuset, &err) < 0) {
				list = tmatch_affinity_cpuset_list(t->cpuset);
				line = NULL;
				if (asprintf(&line, "%s: task %d: cannot bind to CPUs %s: %s",
				             st.plan->node_name, local, list ? list : "?",
				             errmsg(&err, buf, sizeof(buf))) < 0)
					line = NULL;
				if (tmatch_place_stop_step(&st.cfg, 1)) {
					slurm_spank_log(
					    "treematch: %s (failure=fail: step aborted)",
					    line ? line : "cannot bind");
					tmatch__spank_stop_ask(0);
					rc = -1;
					goto out;
				}
				/* One line for the user (local task 0), the rest in the log. */
				if (local == 0)
					slurm_spank_log(
					    "treematch: %s: falling back to Slurm's binding",
					    line ? line : "cannot bind");
				else
					slurm_debug(
					    "treematch: %s: falling back to Slurm's binding",
					    line ? line : "cannot bind");
				spank_setenv(sp, "TREEMATCH_CPUS", "", 1);
				goto hook;
			}
		}
		if (st.cfg.verbose > 0 || st.cfg.dry_run) {
			if (local == 0 &&
			    (line = tmatch_place_summary_line(st.plan, st.cfg.dry_run))) {
				slurm_spank_log("%s", line);
				free(line);
			}
			if (local == 0 && st.plan->note[0])
				slurm_spank_log("treematch: %s", st.plan->note);
			/* Slurm's binding kept: no CPU line of ours */
			line = t->gpu_mode == TMATCH_GPU_MODE_KEEP
			           ? NULL
			           : tmatch_place_verbose_line(st.plan, local, (long)pid,
			                                       st.cfg.dry_run);
			if (line && st.cfg.verbose >= 2)
				slurm_spank_log("%s (task_init %.3f ms)", line,
				                (wall_seconds() - t0) * 1e3);
			else if (line)
				slurm_spank_log("%s", line);
			free(line);
			line = NULL;
			if (t->ngpus > 0 &&
			    (line = tmatch_place_gpu_verbose_line(
			         st.plan, local, (long)pid, st.cfg.dry_run, st.cfg.nic_env, why)))
				slurm_spank_log("%s", line);
		} else if (why[0] && local == 0) {
			/* Slurm's binding kept for this task: said once */
			slurm_spank_log("treematch: %s: task %d: %s", st.plan->node_name, local,
			                why);
		}
	}
	/* srun's learn decision: every task records, or none does */
	if (local >= 0 && tmatch__spank_record_hooks.learn(sp) < 0) {
		tmatch__spank_stop_ask(0);
		rc = -1;
		goto out;
	}
hook:
	rc = HOOK(task_init, sp, ac, av);
out:
	free(line);
	free(list);
	return rc;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	/* slurmstepd, after it has told srun this node's tasks were launched */
	if (spank_remote(sp) == 1)
		tmatch__spank_stop_asked(sp);
	return HOOK(task_exit, sp, ac, av);
}

/* srun ends: the plan the cli_filter made for this srun's step (`treematch
   layout --srun-pid`), beside the profile or in the store, goes too. */
static void remove_srun_plan(void)
{
	char dir[TMATCH_CONFIG_PATH_MAX], path[TMATCH_CONFIG_PATH_MAX + 64];
	const char *slash = strrchr(st.cfg.profile, '/');
	struct stat sb;

	if (!st.cfg_ok || !st.cfg.enabled || st.job_id == 0)
		return;
	if (st.cfg.learn) {
		/* the store's directory, where the learned profile is */
		tmatch_profile_store_t *s = tmatch_profile_store_open(
		    st.cfg.store[0] ? st.cfg.store : NULL, NULL, NULL, 0, NULL);

		if (!s)
			return;
		snprintf(dir, sizeof(dir), "%s", tmatch_profile_store_path(s));
		tmatch_profile_store_close(s);
	} else if (st.cfg.profile[0]) {
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - st.cfg.profile) : 1,
		         slash ? st.cfg.profile : ".");
	} else {
		return;
	}
	if (tmatch_place_plan_srun_path(dir, st.job_id, (long)getpid(), path, sizeof(path)) == 0 &&
	    lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == getuid())
		unlink(path);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	int rc = HOOK(exit, sp, ac, av);

	if (spank_context() == S_CTX_LOCAL) {
		remove_srun_plan();
		tmatch__spank_learn_hooks.exit();
	}

	tmatch_place_node_destroy(st.plan);
	tmatch_affinity_devices_destroy(st.devices);
	tmatch_affinity_tree_destroy(st.node);
	tmatch_profile_destroy(st.prof);
	free(st.user_value);
	free(st.topology_conf);
	free(st.topology_file);
	free(st.slurm_conf);
	free(st.topology_xml);
	free(st.cgroup_conf);
	abandon_started(); /* a step that failed before user_init */
	if (st.helper_open)
		close(st.helper_fd);
	/* a helper killed in uninterruptible sleep: reaped if it has ended
	   since; if it outlives slurmstepd, init reaps it */
	tmatch_place_helper_reap(st.helper_pending);
	memset(&st, 0, sizeof(st));
	return rc;
}
