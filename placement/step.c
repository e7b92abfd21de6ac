/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * step.c - the decisions about a step as a whole: is it handled, the
 * effective policy (defaults, plugstack.conf, admin file, the user's value),
 * whose profile it is, what srun checks and what a problem there does.
 */
#include "placement/placement_private.h"
#include "placement/matrix.h"
#include "placement/step.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tmatch_place_step_is_handled(uint32_t step_id)
{
	switch (step_id) {
	case TMATCH_STEP_PENDING:
	case TMATCH_STEP_EXTERN:
	case TMATCH_STEP_BATCH:
	case TMATCH_STEP_INTERACTIVE:
		return 0;
	default:
		/* Any other id at the top of the range is a special step of a
		   newer Slurm: leave it alone too. */
		return step_id < 0xfffffff0u;
	}
}

int tmatch_place_classify_value(const char *value, tmatch_error_t *err)
{
	if (!value || !*value)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "--treematch needs a value: a profile path, off, or help");
	if (strcmp(value, "help") == 0)
		return TMATCH_PLACE_VALUE_HELP;
	return TMATCH_PLACE_VALUE_OPTIONS;
}

const char *tmatch_place_help_text(void)
{
	return "treematch: --treematch=VALUE places each task where TreeMatch says, from a\n"
	       "treematch: communication profile (see treematch(8), treematch-profile(5)).\n"
	       "treematch:   --treematch=PROFILE[,key=value...]   use this profile\n"
	       "treematch:   --treematch=learn[:NAME]             record the program's first run,\n"
	       "treematch:                                        place the next ones from it\n"
	       "treematch:   --treematch=off                      disable (even if the site "
	       "enables it)\n"
	       "treematch:   --treematch=help                     this text\n"
	       "treematch: keys: mapper=NAME[+refine]  metric=bytes|msgs|avg  coll=on|off\n"
	       "treematch:       verbose=N  dry_run=on|off  seed=N  mpi_pin=on|off\n"
	       "treematch:       failure=fallback|fail  max_ranks=N  max_file_size=N[K|M|G]\n"
	       "treematch:       max_map_time=SECONDS  max_map_memory=N[K|M|G]\n"
	       "treematch:       plan=FILE (a step plan from treematch layout --plan)\n"
	       "treematch:       min_gain=PCT (learn: keep Slurm's binding below PCT % gain)\n"
	       "treematch:       search_time=SECONDS (more search by the default mapper)\n"
	       "treematch:       nic_env=off (GPU steps: no UCX_NET_DEVICES, FI_EFA_IFACE,\n"
	       "treematch:       FI_CXI_DEVICE_NAME for the task's card)\n"
	       "treematch: example: srun -n 8 --treematch=app.yml,verbose=1 ./app\n";
}

/* The plugin's own arguments, not keys of the policy grammar. */
static const char *const plugin_keys[] = {"admin_file=", "helper="};

static int plugin_key(const char *arg, const char *key)
{
	return arg && strncmp(arg, key, strlen(key)) == 0;
}

/* The last value of plugin argument `key`, or NULL. */
static const char *plugin_arg(int argc, char *const *argv, const char *key)
{
	const char *value = NULL;

	for (int i = 0; argv && i < argc; i++)
		if (plugin_key(argv[i], key))
			value = argv[i] + strlen(key);
	return value;
}

const char *tmatch_place_admin_file(int argc, char *const *argv)
{
	return plugin_arg(argc, argv, plugin_keys[0]);
}

const char *tmatch_place_helper_path(int argc, char *const *argv)
{
	return plugin_arg(argc, argv, plugin_keys[1]);
}

int tmatch_place_config(int argc, char *const *argv, int admin_fd, const char *user_value,
                        tmatch_config_t *out, tmatch_error_t *err)
{
	tmatch_config_t admin, merged;
	char **args = NULL;
	int nargs = 0, rc = -1, *index = NULL;

	if (!out || argc < 0 || (argc > 0 && !argv))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_config: invalid argument");
	tmatch_config_init(&admin);
	/* admin_file= and helper= are the plugin's own arguments, not keys of
	   the grammar. */
	args = calloc((size_t)argc + 1, sizeof(*args));
	index = calloc((size_t)argc + 1, sizeof(*index));
	if (!args || !index) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	for (int i = 0; i < argc; i++)
		if (argv[i] && !plugin_key(argv[i], plugin_keys[0]) &&
		    !plugin_key(argv[i], plugin_keys[1])) {
			index[nargs] = i + 1;
			args[nargs++] = argv[i];
		}
	if (tmatch_config_parse_argv(&admin, nargs, args, "plugstack.conf", err) < 0) {
		/* the column counts the arguments as written, admin_file= too */
		if (err && err->column >= 1 && err->column <= nargs)
			err->column = index[err->column - 1];
		goto out;
	}
	if (admin_fd >= 0 &&
	    tmatch_config_parse_fd(&admin, admin_fd, tmatch_place_admin_file(argc, argv), err) < 0)
		goto out;
	merged = admin;
	if (user_value && tmatch_place_config_user(&admin, user_value, &merged, err) < 0)
		goto out;
	*out = merged;
	rc = 0;
out:
	free(index);
	free(args);
	return rc;
}

int tmatch_place_config_user(const tmatch_config_t *admin, const char *user_value,
                             tmatch_config_t *out, tmatch_error_t *err)
{
	tmatch_config_t user;

	if (!admin || !user_value || !out)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_config_user: invalid argument");
	if (tmatch_place_classify_value(user_value, err) != TMATCH_PLACE_VALUE_OPTIONS) {
		if (err && !err->msg[0])
			tmatch_error_set(err, 0, NULL, 0, 0,
			                 "--treematch=help cannot be combined with a job");
		errno = EINVAL;
		return -1;
	}
	tmatch_config_init(&user);
	if (tmatch_config_parse_string(&user, user_value, TMATCH_CONFIG_USER, "--treematch", err) <
	    0)
		return -1;
	return tmatch_config_merge(admin, &user, out, err);
}

int tmatch_place_user_profile(const char *user_value)
{
	tmatch_config_t user;

	if (!user_value)
		return 0;
	tmatch_config_init(&user);
	return tmatch_config_parse_string(&user, user_value, TMATCH_CONFIG_USER, "--treematch",
	                                  NULL) == 0 &&
	       user.profile[0] != '\0';
}

const char *tmatch_place_plan_path(const tmatch_config_t *cfg, const char *plan_env)
{
	if (cfg && cfg->plan[0])
		return cfg->plan;
	return plan_env && plan_env[0] ? plan_env : NULL;
}

tmatch_place_source_t tmatch_place_source(const tmatch_config_t *cfg, const char *plan_env,
                                          const char **plan)
{
	*plan = NULL;
	if (!cfg || !cfg->enabled)
		return TMATCH_PLACE_FROM_OFF;
	/* learn= and profile= exclude each other: a learning step's profile
	   is the entry srun chose, whether a plan was made from it or not */
	if (cfg->learn && !cfg->profile[0])
		return TMATCH_PLACE_FROM_LEARN;
	if (!cfg->profile[0])
		return TMATCH_PLACE_FROM_OFF;
	*plan = tmatch_place_plan_path(cfg, plan_env);
	return *plan ? TMATCH_PLACE_FROM_PLAN : TMATCH_PLACE_FROM_PROFILE;
}

int tmatch_place_must_fail(const tmatch_config_t *cfg, int user_profile)
{
	return user_profile || (cfg && cfg->failure == TMATCH_FAILURE_FAIL);
}

void tmatch_place_limits(const tmatch_config_t *cfg, tmatch_profile_limits_t *lim)
{
	tmatch_profile_limits_init(lim);
	if (cfg->max_ranks > 0 && cfg->max_ranks < lim->max_ranks)
		lim->max_ranks = cfg->max_ranks;
	if (cfg->max_file_size > 0 && cfg->max_file_size < lim->max_file_size)
		lim->max_file_size = cfg->max_file_size;
}

tmatch_profile_t *tmatch_place_load_profile_err(const tmatch_config_t *cfg, tmatch_log_fn log,
                                                void *log_arg, int *opened, tmatch_error_t *err)
{
	tmatch_profile_limits_t lim;
	tmatch_profile_t *p;
	FILE *f;
	int err_no;

	*opened = 0;
	f = tmatch_file_open(cfg->profile, NULL, err); /* regular files only, no FIFO wait */
	if (!f)
		return NULL;
	*opened = 1;
	tmatch_place_limits(cfg, &lim);
	p = tmatch_profile_load_fd(fileno(f), cfg->profile, &lim, log, log_arg, err);
	err_no = errno;
	fclose(f);
	errno = err_no;
	return p;
}

tmatch_profile_t *tmatch_place_load_profile(const tmatch_config_t *cfg, tmatch_log_fn log,
                                            void *log_arg, char *msg, size_t len)
{
	tmatch_profile_t *p;
	tmatch_error_t err;
	char buf[sizeof(err.msg) + sizeof(err.file) + 32];
	int opened, err_no;

	tmatch_error_clear(&err);
	p = tmatch_place_load_profile_err(cfg, log, log_arg, &opened, &err);
	err_no = errno;
	if (!p && !opened)
		snprintf(msg, len, "cannot read profile %.512s: %s", cfg->profile,
		         err_no == EINVAL ? "not a regular file" : strerror(err_no));
	else if (!p) /* over a limit: the site's (or the user's own lower one) */
		snprintf(msg, len, "bad profile: %s%s", tmatch_error_format(&err, buf, sizeof(buf)),
		         err_no == EFBIG   ? " (max_file_size: the administrator sets the limit)"
		         : err_no == E2BIG ? " (max_ranks: the administrator sets the limit)"
		                           : "");
	errno = err_no;
	return p;
}

int tmatch_place_check_profile(const tmatch_config_t *cfg, const tmatch_profile_t *prof, int ntasks,
                               tmatch_error_t *err)
{
	if (!cfg || !prof)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_check_profile: invalid argument");
	if (ntasks > 0 && tmatch_profile_check_ranks(prof, ntasks, err) < 0) {
		/* which profile: the user's, the site's or a learned one */
		if (err && !err->file[0] && cfg->profile[0])
			snprintf(err->file, sizeof(err->file), "%.*s", (int)sizeof(err->file) - 1,
			         cfg->profile);
		return -1;
	}
	if (cfg->mapper[0] && tmatch_map_check_name(cfg->mapper, err) < 0)
		return -1;
	return 0;
}

tmatch_comm_t *tmatch_place_comm(const tmatch_profile_t *prof, int metric, int coll,
                                 tmatch_error_t *err)
{
	if (!prof) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_place_comm: no profile");
		return NULL;
	}
	if (metric < 0)
		metric = (int)tmatch_profile_placement_metric(prof);
	return tmatch_profile_to_comm(prof, (tmatch_profile_metric_t)metric,
	                              tmatch_place_comm_sets(coll), err);
}

unsigned tmatch_place_comm_sets(int coll)
{
	return TMATCH_PROFILE_P2P | (coll > 0   ? TMATCH_PROFILE_COLL
	                             : coll < 0 ? TMATCH_PROFILE_COLL_WIRE
	                                        : 0);
}

int tmatch_place_profile_in_job_dir(tmatch_config_t *cfg, const char *job_cwd)
{
	char path[TMATCH_CONFIG_PATH_MAX];

	if (!cfg || !cfg->profile[0] || cfg->profile[0] == '/' || !job_cwd || job_cwd[0] != '/')
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", job_cwd, cfg->profile) >= sizeof(path))
		return -1;
	memcpy(cfg->profile, path, sizeof(path));
	return 0;
}

int tmatch_place_stop_step(const tmatch_config_t *cfg, int node_failed)
{
	return node_failed && cfg && cfg->failure == TMATCH_FAILURE_FAIL;
}

/* ------------------------------------------------------------------------ */
/* srun's command line                                                       */

/*
 * The options of srun (and of sbatch and salloc) that the walker below must
 * know to read srun's command line before srun does: every short letter
 * (Slurm 22.05 to 26.05 have the same ones) with its long name and whether
 * it takes a value. A value is attached ("-n8", "--ntasks=8") or the next
 * word ("-n 8", "--ntasks 8", whatever it looks like: "-J -n8" names the
 * job "-n8"); an optional one only attached ("-I5", "--immediate=5").
 * `prefix`: the shortest start of "--name" srun takes for it (getopt's
 * unambiguous abbreviations; 0: the whole name). Long options not here
 * (--mpi, --comment, ...) are read as srun's getopt reads them only where
 * the caller knows where srun's options end.
 */
enum { SRUN_FLAG, SRUN_VALUE, SRUN_ATTACHED };

static const struct srun_option {
	const char *name;
	char letter;
	unsigned char kind;
	unsigned char srun; /* 0: sbatch's and salloc's only */
	unsigned char prefix;
} srun_options[] = {
    {"account", 'A', SRUN_VALUE, 1, 0},
    {"extra-node-info", 'B', SRUN_VALUE, 1, 0},
    {"constraint", 'C', SRUN_VALUE, 1, 0},
    {"chdir", 'D', SRUN_VALUE, 1, 4}, /* --ch: no other long option starts so */
    {"preserve-env", 'E', SRUN_FLAG, 1, 0},
    {"nodefile", 'F', SRUN_VALUE, 1, 0},
    {"gpus", 'G', SRUN_VALUE, 1, 0},
    {"hold", 'H', SRUN_FLAG, 1, 0},
    {"immediate", 'I', SRUN_ATTACHED, 1, 0},
    {"job-name", 'J', SRUN_VALUE, 1, 0},
    {"kill-on-bad-exit", 'K', SRUN_ATTACHED, 1, 0},
    {"licenses", 'L', SRUN_VALUE, 1, 0},
    {"clusters", 'M', SRUN_VALUE, 1, 0},
    {"nodes", 'N', SRUN_VALUE, 1, 0},
    {"overcommit", 'O', SRUN_FLAG, 1, 0},
    {"quiet", 'Q', SRUN_FLAG, 1, 0},
    {"core-spec", 'S', SRUN_VALUE, 1, 0},
    {"threads", 'T', SRUN_VALUE, 1, 0},
    {"version", 'V', SRUN_FLAG, 1, 0},
    {"wait", 'W', SRUN_VALUE, 1, 0},
    {"disable-status", 'X', SRUN_FLAG, 1, 0},
    {"no-allocate", 'Z', SRUN_FLAG, 1, 0},
    {"array", 'a', SRUN_VALUE, 0, 0},
    {"begin", 'b', SRUN_VALUE, 1, 0},
    {"cpus-per-task", 'c', SRUN_VALUE, 1, 0},
    {"dependency", 'd', SRUN_VALUE, 1, 0},
    {"error", 'e', SRUN_VALUE, 1, 0},
    {"help", 'h', SRUN_FLAG, 1, 0},
    {"input", 'i', SRUN_VALUE, 1, 0},
    {"no-kill", 'k', SRUN_ATTACHED, 1, 0},
    {"label", 'l', SRUN_FLAG, 1, 0},
    {"distribution", 'm', SRUN_VALUE, 1, 0},
    {"ntasks", 'n', SRUN_VALUE, 1, 0}, /* --ntask is --ntasks-per-* too */
    {"output", 'o', SRUN_VALUE, 1, 0},
    {"partition", 'p', SRUN_VALUE, 1, 0},
    {"qos", 'q', SRUN_VALUE, 1, 0},
    {"relative", 'r', SRUN_VALUE, 1, 0},
    {"oversubscribe", 's', SRUN_FLAG, 1, 0},
    {"time", 't', SRUN_VALUE, 1, 0},
    {"unbuffered", 'u', SRUN_FLAG, 1, 0},
    {"verbose", 'v', SRUN_FLAG, 1, 0},
    {"nodelist", 'w', SRUN_VALUE, 1, 0},
    {"exclude", 'x', SRUN_VALUE, 1, 0},
};

#define SRUN_OPTIONS (sizeof(srun_options) / sizeof(srun_options[0]))

/* The table's entry of a letter (srun_only: srun's letters only), or NULL. */
static const struct srun_option *srun_letter(char c, int srun_only)
{
	for (size_t k = 0; k < SRUN_OPTIONS; k++)
		if (srun_options[k].letter == c && (srun_options[k].srun || !srun_only))
			return &srun_options[k];
	return NULL;
}

/* The table's entry of a long option word ("--name", "--name=VALUE", or a
   start of "--name" srun takes), its value after '=' in *value; or NULL. */
static const struct srun_option *srun_long(const char *word, int srun_only, const char **value)
{
	const char *eq = strchr(word, '=');
	size_t n = eq ? (size_t)(eq - word) : strlen(word);

	for (size_t k = 0; k < SRUN_OPTIONS; k++) {
		const struct srun_option *o = &srun_options[k];
		size_t full = 2 + strlen(o->name);

		if ((o->srun || !srun_only) && n <= full && n >= (o->prefix ? o->prefix : full) &&
		    !strncmp(word + 2, o->name, n - 2)) {
			*value = eq ? eq + 1 : NULL;
			return o;
		}
	}
	return NULL;
}

/* How a walk ended. */
enum {
	WALK_END,    /* the options ended: the command, "--" or the last word */
	WALK_UNSURE, /* a word the walk cannot read for sure (see srun_walk) */
	WALK_HET,    /* a heterogeneous step (strict): several of everything */
	WALK_STOPPED /* fn asked to stop */
};

/*
 * One walk of a launcher's options, words[0..end): fn(entry, value, ctx) for
 * each option of the table, in order (value NULL: a flag, an optional value
 * not given, a value option that is the last word); fn returning nonzero
 * stops the walk. end_known: the caller knows the options end at `end`
 * (srun's getopt said where), so words before it that are not options are
 * values; otherwise the options end at the first such word (the command,
 * sbatch's script), and "--opt WORD" of a long option the table does not
 * have ends the walk (WALK_UNSURE: WORD may be the command). A long option
 * whose value is a separate word that starts with '-' is not given it (the
 * table's options are). strict (srun's own line): a letter srun does not
 * have is WALK_UNSURE, ':' or --het-group WALK_HET; otherwise the letters of
 * srun, sbatch and salloc are read, and others taken for flags.
 */
static int srun_walk(char *const words[], int end, int end_known, int strict,
                     int (*fn)(const struct srun_option *o, const char *value, void *ctx),
                     void *ctx)
{
	for (int i = 0; i < end; i++) {
		const char *w = words[i], *v = NULL;
		const struct srun_option *o;

		if (!w || !strcmp(w, "--"))
			return WALK_END;
		if (strict && (!strcmp(w, ":") || !strncmp(w, "--het-group", 11)))
			return WALK_HET;
		if (w[0] != '-' || !w[1]) {
			if (!end_known)
				return WALK_END; /* the command, sbatch's script */
			continue;                /* a value srun's getopt took */
		}
		if (w[1] == '-') {
			if ((o = srun_long(w, strict, &v))) {
				if (!v && o->kind == SRUN_VALUE && i + 1 < end)
					v = words[++i];
				if (fn(o, v, ctx))
					return WALK_STOPPED;
			} else if (!strchr(w, '=') && i + 1 < end && words[i + 1] &&
			           words[i + 1][0] != '-') {
				if (!end_known)
					return WALK_UNSURE;
				i++; /* its value */
			}
			continue;
		}
		for (const char *c = w + 1; *c; c++) {
			if (!(o = srun_letter(*c, strict))) {
				if (strict)
					return WALK_UNSURE;
				continue;
			}
			if (o->kind == SRUN_FLAG) {
				if (fn(o, NULL, ctx))
					return WALK_STOPPED;
				continue;
			}
			/* the rest of the word is the value, else the next word */
			v = c[1] ? c + 1 : NULL;
			if (!v && o->kind == SRUN_VALUE && i + 1 < end)
				v = words[++i];
			if (fn(o, v, ctx))
				return WALK_STOPPED;
			break;
		}
	}
	return WALK_END;
}

/* tmatch_place_job_cwd's reader: the last -D/--chdir. */
static int take_chdir(const struct srun_option *o, const char *value, void *ctx)
{
	if (o->letter == 'D' && value)
		*(const char **)ctx = value;
	return 0;
}

int tmatch_place_job_cwd(char *const words[], int nwords, int nopts, const char *env_dir,
                         const char *cwd, char *out, size_t len)
{
	const char *dir = env_dir && *env_dir ? env_dir : NULL;
	int n;

	if (!cwd || cwd[0] != '/' || !out || len == 0 || (nwords > 0 && !words))
		return -1;
	(void)srun_walk(words, nopts >= 0 && nopts < nwords ? nopts : nwords, nopts >= 0, 0,
	                take_chdir, &dir);
	if (!dir || !*dir)
		n = snprintf(out, len, "%s", cwd);
	else if (dir[0] == '/')
		n = snprintf(out, len, "%s", dir);
	else
		n = snprintf(out, len, "%s/%s", cwd, dir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The number after -n: 1 to 2^31-1, digits only; 0 when it is not one. */
static int srun_count(const char *s)
{
	uint64_t v;

	return s && tmatch_parse_u64(s, strlen(s), INT32_MAX, &v) == 0 && v > 0 ? (int)v : 0;
}

/* tmatch_place_srun_ntasks's reader: the last -n/--ntasks; one that is not
   a count stops the walk. */
static int take_ntasks(const struct srun_option *o, const char *value, void *ctx)
{
	int *n = ctx;

	if (o->letter != 'n')
		return 0;
	*n = srun_count(value);
	return *n == 0;
}

int tmatch_place_srun_ntasks(int argc, char *const *argv, int nopt)
{
	int end = nopt > 0 && nopt <= argc ? nopt : argc, n = 0;

	if (!argv || argc < 2)
		return 0;
	return srun_walk(argv + 1, end - 1, nopt > 0, 1, take_ntasks, &n) == WALK_END ? n : 0;
}
