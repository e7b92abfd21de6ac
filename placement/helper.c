/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * helper.c - the plugin's privilege separation (tmatch_place_helper_run in
 * placement.h), after OpenSSH's: slurmstepd's root side hands the helper
 * what it read from Slurm and the admin, the helper (a sandboxed child that
 * has become the job's user for good, placement/sandbox.c) parses
 * everything the user wrote and maps, and the root side reads back a small
 * fixed-size result and checks every field of it before it binds anything.
 *
 * Wire format on the pipe, helper to root side, native byte order (the same
 * binary on the same host):
 *   struct tmatch__helper_hello     as soon as the user's value is merged: the node's name
 *                    and what the user tightened (failure mode, time limit),
 *                    so a helper killed later is still reported under its
 *                    node's name and the user's policy;
 *   struct tmatch__helper_head      the outcome: placed, skipped (why), off, or failed (one
 *                    line);
 *   struct tmatch__helper_task [head.ntasks] when placed: global rank, leaf, position.
 * The root side recomputes each task's CPU set from its own node tree; the
 * helper's words are only leaves, positions and text, all checked.
 */
#include "placement/placement_private.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* ---- both sides ---------------------------------------------------------- */

tmatch_profile_t *tmatch_place_load_profile(const tmatch_config_t *cfg, tmatch_log_fn log,
                                            void *log_arg, char *msg, size_t len)
{
	tmatch_profile_limits_t lim;
	tmatch_profile_t *p;
	tmatch_error_t err;
	char buf[sizeof(err.msg) + sizeof(err.file) + 32];
	FILE *f;
	int err_no;

	tmatch_error_clear(&err);
	f = tmatch_file_open(cfg->profile, NULL, &err); /* regular files only, no FIFO wait */
	if (!f) {
		err_no = errno;
		snprintf(msg, len, "cannot read profile %.512s: %s", cfg->profile,
		         err_no == EINVAL ? "not a regular file" : strerror(err_no));
		errno = err_no;
		return NULL;
	}
	tmatch_place_limits(cfg, &lim);
	p = tmatch_profile_load_fd(fileno(f), cfg->profile, &lim, log, log_arg, &err);
	err_no = errno;
	fclose(f);
	if (!p)
		snprintf(msg, len, "bad profile: %s", tmatch_error_format(&err, buf, sizeof(buf)));
	errno = err_no;
	return p;
}

/* ---- the helper (a sandboxed child, as the job's user) ------------------- */

struct job {
	const tmatch_place_helper_in_t *in;
};

static void send_or_die(int fd, const void *buf, size_t len)
{
	if (tmatch__write_all(fd, buf, len) < 0)
		_exit(124);
}

/* Sends the outcome and ends the helper. */
static void finish(int fd, struct tmatch__helper_head *h)
{
	h->magic = TMATCH__HELPER_HEAD_MAGIC;
	h->version = TMATCH__HELPER_WIRE_VERSION;
	send_or_die(fd, h, sizeof(*h));
	_exit(0);
}

static void failed(int fd, struct tmatch__helper_head *h, int err_no, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void failed(int fd, struct tmatch__helper_head *h, int err_no, const char *fmt, ...)
{
	va_list ap;

	h->status = TMATCH__HELPER_OUT_FAILED;
	h->err_no = err_no > 0 ? err_no : EINVAL;
	va_start(ap, fmt);
	vsnprintf(h->msg, sizeof(h->msg), fmt, ap);
	va_end(ap);
	finish(fd, h);
}

/* The user asked for less memory than the site allows: the helper's own
   address-space limit comes down to what it maps now plus the user's figure
   (a limit it can never raise again). */
static void tighten_memory(size_t admin, size_t user)
{
	struct rlimit rl;
	size_t now;

	if (user == 0 || (admin != 0 && user >= admin) || getrlimit(RLIMIT_AS, &rl) < 0)
		return;
	now = tmatch__address_space_now();
	if (now == 0 || now > SIZE_MAX - user ||
	    (rl.rlim_cur != RLIM_INFINITY && (rlim_t)(now + user) >= rl.rlim_cur))
		return;
	rl.rlim_cur = rl.rlim_max = (rlim_t)(now + user);
	setrlimit(RLIMIT_AS, &rl);
}

/* Learn mode: cfg->profile becomes the store's entry for this step, read
   only (srun discarded a damaged one and stores what a first run recorded);
   or the helper ends here, saying why. Nothing stored yet: record this run
   (TMATCH__HELPER_OUT_LEARN), bound as Slurm binds. */
static void learn_profile(int fd, struct tmatch__helper_head *h, const tmatch_place_helper_in_t *in,
                          tmatch_config_t *cfg, const char *name)
{
	tmatch_profile_store_key_t key;
	tmatch_error_t e;
	char dir[PATH_MAX], exe[PATH_MAX] = "", path[PATH_MAX] = "";
	int rc = -1;

	tmatch_error_clear(&e);
	if (!in->argv || !in->argv[0])
		tmatch_error_set(&e, EINVAL, NULL, 0, 0, "the step's command line is unknown");
	else
		rc = tmatch_place_learn_key(cfg, in->argv, in->job_path, in->job_pwd,
		                            in->ntasks_total, &key, exe, sizeof(exe), &e);
	if (rc == 0 &&
	    tmatch_place_learn_dir(cfg, in->job_xdg, in->job_home, 0, dir, sizeof(dir), &e) < 0)
		rc = errno == ENOENT ? 2 : -1; /* no store yet: nothing stored */
	if (rc == 0)
		rc = tmatch_profile_store_get(dir, &key, TMATCH_STORE_READONLY, path, sizeof(path),
		                              &e) == 1
		         ? 3
		     : e.msg[0] ? -1
		                : 2;
	if (rc == 3 &&
	    snprintf(cfg->profile, sizeof(cfg->profile), "%s", path) < (int)sizeof(cfg->profile))
		return;
	/* learning is quiet: said in verbose mode, else in slurmd's log */
	h->why_level = cfg->verbose > 0 ? TMATCH_LOG_INFO : TMATCH_LOG_DEBUG;
	if (rc == 2) {
		h->status = TMATCH__HELPER_OUT_LEARN;
		snprintf(h->msg, sizeof(h->msg),
		         "%s: learning: nothing stored yet for %.200s at %d tasks: this run is "
		         "recorded",
		         name, exe, in->ntasks_total);
	} else {
		h->status = TMATCH__HELPER_OUT_SKIPPED;
		snprintf(h->msg, sizeof(h->msg), "%.60s: %.400s", name, e.msg);
	}
	finish(fd, h);
}

/* This node's slice of the step plan at path, once it is shown to be for
   this step (job, step, tasks, nodes, the profile as planned). NULL with
   one line in msg. */
static tmatch_place_slice_t *plan_slice(const tmatch_place_helper_in_t *in,
                                        const tmatch_config_t *cfg, const char *node,
                                        uint64_t nodes_hash, const char *path, char *msg,
                                        size_t len)
{
	tmatch_place_plan_bind_t step;
	tmatch_place_slice_t *slice = NULL;
	tmatch_error_t e;
	char why[256], buf[sizeof(e.msg) + sizeof(e.file) + 32];
	FILE *f;

	memset(&step, 0, sizeof(step));
	tmatch_error_clear(&e);
	if (!nodes_hash) {
		snprintf(msg, len, "plan %.400s not used: the step's node list is unknown", path);
		return NULL;
	}
	f = tmatch_file_open(path, NULL, &e);
	if (f) {
		slice = tmatch_place_plan_read_slice(fileno(f), path, node, &e);
		fclose(f);
	}
	if (!slice) {
		snprintf(msg, len, "plan not used: %s", tmatch_error_format(&e, buf, sizeof(buf)));
		return NULL;
	}
	f = tmatch_file_open(cfg->profile, NULL, &e);
	if (!f || tmatch_place_profile_stamp(fileno(f), cfg->profile, &step.profile_size,
	                                     &step.profile_mtime_ns, NULL, &e) < 0) {
		if (f)
			fclose(f);
		snprintf(msg, len, "plan not used: %s", tmatch_error_format(&e, buf, sizeof(buf)));
		goto fail;
	}
	fclose(f);
	step.job_id = in->job_id;
	step.step_id = in->step_id;
	step.ntasks = (uint32_t)in->ntasks_total;
	step.nodes_hash = nodes_hash;
	if (tmatch_place_plan_matches(&slice->bind, &step, why, sizeof(why)) < 0) {
		snprintf(msg, len, "plan %.200s is not for this step: %.200s", path, why);
		goto fail;
	}
	return slice;
fail:
	tmatch_place_slice_destroy(slice);
	return NULL;
}

/*
 * Verbose, on the step's first node: the predicted gain that `treematch
 * predict --save PROFILE.predict` kept beside the profile, as one line in
 * msg (numbers, the mapper's and the file's names: nothing of the file's
 * text); nothing when there is no such file.
 */
static void predicted_gain(const tmatch_config_t *cfg, char *msg, size_t len)
{
	const char *mapper = cfg->mapper[0] ? cfg->mapper : TMATCH_DEFAULT_MAPPER;
	char path[sizeof(cfg->profile) + 16], buf[sizeof(tmatch_error_t) + 32];
	double mapped, packed;
	tmatch_error_t e;
	int rc;

	if ((size_t)snprintf(path, sizeof(path), "%s.predict", cfg->profile) >= sizeof(path))
		return;
	tmatch_error_clear(&e);
	errno = 0;
	rc = tmatch_place_prediction_read(path, mapper, &mapped, &packed, &e);
	if (rc < 0 && errno == ENOENT)
		return;
	if (rc < 0)
		snprintf(msg, len, "prediction not read: %s",
		         tmatch_error_format(&e, buf, sizeof(buf)));
	else if (rc > 0)
		snprintf(msg, len,
		         "%.200s has no predicted time for mapper=%s and packed: treematch "
		         "predict -m packed -m %s --save it",
		         path, mapper, mapper);
	else
		snprintf(msg, len,
		         "predicted run time (%.200s, SimGrid's replay on the machine it names): "
		         "%s %.4g s, packed %.4g s: %.2fx",
		         path, mapper, mapped, packed, mapped > 0 ? packed / mapped : 0.0);
}

static void helper_body(void *arg, int fd)
{
	const tmatch_place_helper_in_t *in = ((const struct job *)arg)->in;
	tmatch_place_node_in_t nin;
	tmatch_place_node_t *plan = NULL;
	tmatch_affinity_conf_t *conf = NULL;
	tmatch_affinity_tree_t *cluster = NULL;
	tmatch_profile_t *prof = NULL;
	tmatch_place_slice_t *slice = NULL;
	uint64_t nodes_hash = 0;
	tmatch_config_t cfg = *in->admin;
	tmatch_error_t e;
	struct tmatch__helper_hello hello;
	struct tmatch__helper_head h;
	const char *nodelist;
	char *name, line[sizeof(h.msg)], buf[sizeof(e.msg) + sizeof(e.file) + 32];
	int user_profile = 0;

	memset(&h, 0, sizeof(h));
	memset(&hello, 0, sizeof(hello));
	tmatch_error_clear(&e);
	/* The node list of the job's environment, only once it names exactly
	   the step's node count (counted, not expanded). */
	nodelist = tmatch_place_checked_nodelist(in->nodelist, in->node_count);
	/* the node list is expanded once: this node's name, and the set's hash
	   a step plan must match */
	name = tmatch_place_node_name_hash(nodelist, in->node_index, in->node_count, &nodes_hash);
	snprintf(hello.node_name, sizeof(hello.node_name), "%s", name ? name : "localhost");
	if (in->user_value) {
		if (tmatch_place_config_user(in->admin, in->user_value, &cfg, &e) < 0)
			cfg = *in->admin; /* the site's policy decides what follows */
		else
			user_profile = tmatch_place_user_profile(in->user_value);
	}
	hello.magic = TMATCH__HELPER_HELLO_MAGIC;
	hello.version = TMATCH__HELPER_WIRE_VERSION;
	hello.failure = cfg.failure;
	hello.dry_run = cfg.dry_run;
	hello.verbose = cfg.verbose;
	hello.mpi_pin = cfg.mpi_pin;
	hello.user_profile = user_profile;
	hello.max_time = cfg.max_map_time;
	send_or_die(fd, &hello, sizeof(hello));
	if (e.msg[0])
		failed(fd, &h, EINVAL, "%s: %s", hello.node_name,
		       tmatch_error_format(&e, buf, sizeof(buf)));
	if (!name)
		failed(fd, &h, ENOMEM, "%s: out of memory", hello.node_name);
	if (cfg.enabled && cfg.learn && !cfg.plan[0] && !(in->plan_env && in->plan_env[0]))
		learn_profile(fd, &h, in, &cfg, name ? name : hello.node_name);
	if (!cfg.enabled || !cfg.profile[0]) {
		h.status = TMATCH__HELPER_OUT_OFF;
		finish(fd, &h);
	}
	tighten_memory(in->admin->max_map_memory, cfg.max_map_memory);

	if (cfg.plan[0] || (in->plan_env && in->plan_env[0])) {
		/* the step's plan: this node's slice only, the profile is not read */
		slice = plan_slice(in, &cfg, name, nodes_hash,
		                   cfg.plan[0] ? cfg.plan : in->plan_env, line, sizeof(line));
		if (!slice)
			failed(fd, &h, EINVAL, "%s: %s", name, line);
	} else if (!(prof = tmatch_place_load_profile(&cfg, NULL, NULL, line, sizeof(line)))) {
		failed(fd, &h, errno == ENOMEM ? ENOMEM : EINVAL, "%s: %s", name, line);
	}
	/* The switches, for the positions only (a plan has them); a
	   topology.conf that does not parse counts as none, as on the CLI. */
	if (!slice && in->node_count > 1 && nodelist) {
		if (in->topology_conf)
			conf = tmatch_affinity_conf_parse(in->topology_conf, "topology.conf", NULL);
		if (in->prep->tree)
			cluster = tmatch_affinity_cluster_build(conf, nodelist, in->prep->tree,
			                                        NULL, NULL);
	}
	memset(&nin, 0, sizeof(nin));
	nin.cfg = &cfg;
	nin.profile = prof;
	nin.slice = slice;
	nin.user_profile = user_profile;
	nin.node_name = name;
	nin.node_index = in->node_index;
	nin.node_count = in->node_count;
	nin.nodelist = nodelist;
	nin.cpus_per_task = in->cpus_per_task;
	nin.ranks = in->ranks;
	nin.nlocal = in->nlocal;
	nin.ntasks_total = in->ntasks_total;
	nin.cluster = cluster;
	nin.isolate = 0; /* this process is the isolation */
	tmatch_error_clear(&e);
	if (tmatch_place_node_decide(&nin, in->prep, &plan, &e) < 0)
		failed(fd, &h, errno, "%s", e.msg);
	if (cfg.learn && plan->status == TMATCH_PLACE_PLACED) {
		/* learned, not asked for: worth it only above min_gain */
		double gain = plan->cost_packed > 0
		                  ? 100.0 * (plan->cost_packed - plan->cost) / plan->cost_packed
		                  : 0;

		if (gain < cfg.min_gain) {
			h.status = TMATCH__HELPER_OUT_SKIPPED;
			h.why_level = cfg.verbose > 0 ? TMATCH_LOG_INFO : TMATCH_LOG_DEBUG;
			snprintf(h.msg, sizeof(h.msg),
			         "%s: the learned profile gains %.1f %% over Slurm's binding here, "
			         "less than min_gain=%d %%: Slurm's binding kept",
			         name, gain, cfg.min_gain);
			finish(fd, &h);
		}
	}
	if (plan->status == TMATCH_PLACE_SKIPPED) {
		h.status = TMATCH__HELPER_OUT_SKIPPED;
		h.why_level = plan->why_level;
		snprintf(h.msg, sizeof(h.msg), "%s", plan->why);
		finish(fd, &h);
	}
	h.status = TMATCH__HELPER_OUT_PLACED;
	if (cfg.verbose > 0 && in->node_index == 0 && !slice)
		predicted_gain(&cfg, h.msg, sizeof(h.msg));
	h.ntasks = plan->ntasks;
	h.cost = plan->cost;
	h.cost_packed = plan->cost_packed;
	h.map_seconds = plan->map_seconds;
	snprintf(h.mapper, sizeof(h.mapper), "%s", plan->mapper);
	h.magic = TMATCH__HELPER_HEAD_MAGIC;
	h.version = TMATCH__HELPER_WIRE_VERSION;
	send_or_die(fd, &h, sizeof(h));
	for (int i = 0; i < plan->ntasks; i++) {
		struct tmatch__helper_task t;

		memset(&t, 0, sizeof(t));
		t.rank = plan->task[i].rank;
		t.leaf = plan->task[i].leaf;
		t.pos = plan->task[i].pos;
		send_or_die(fd, &t, sizeof(t));
	}
	_exit(0); /* nothing to free: the process ends */
}

/* ---- the root side: checks every byte ------------------------------------ */

/* Copies a NUL-terminated field of at most cap bytes keeping only the
   characters `ok` accepts (others become '?'). -1 if not terminated. */
static int clean_text(char *dst, const char *src, size_t cap, int (*ok)(int))
{
	size_t n = strnlen(src, cap);

	if (n == cap)
		return -1;
	for (size_t i = 0; i < n; i++)
		dst[i] = ok((unsigned char)src[i]) ? src[i] : '?';
	dst[n] = '\0';
	return 0;
}

static int printable(int c)
{
	return c >= 0x20 && c < 0x7f;
}

static int name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '+';
}

static double on_hello(void *arg, const char *buf, size_t len)
{
	struct tmatch__helper_hello *hello = arg;

	memcpy(hello, buf, len < sizeof(*hello) ? len : sizeof(*hello));
	if (hello->magic != TMATCH__HELPER_HELLO_MAGIC ||
	    hello->version != TMATCH__HELPER_WIRE_VERSION)
		return -1;
	/* A limit the user gave counts from now; the site's still holds. */
	return hello->max_time > 0 && isfinite(hello->max_time) ? hello->max_time : 0;
}

/* A position as the helper sent it: levels in range, names [a-z0-9]. */
static int pos_ok(const tmatch_affinity_pos_t *p)
{
	if (p->nlevels < 0 || p->nlevels > TMATCH_AFFINITY_MAX_LEVELS)
		return 0;
	for (int l = 0; l < p->nlevels; l++) {
		size_t n = strnlen(p->level[l].name, sizeof(p->level[l].name));

		if (n == 0 || n == sizeof(p->level[l].name) || p->level[l].count < 1 ||
		    p->level[l].index < 0 || p->level[l].index >= p->level[l].count ||
		    p->level[l].global < 0)
			return 0;
		for (size_t i = 0; i < n; i++) {
			int c = (unsigned char)p->level[l].name[i];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
				return 0;
		}
	}
	return 1;
}

static int malformed(tmatch_error_t *err, const char *name, const char *what)
{
	return tmatch_error_set(err, EPROTO, NULL, 0, 0,
	                        "%s: mapping process sent a malformed result (%s)", name, what);
}

/* The placed tasks into out->plan: each leaf and rank checked, each CPU set
   taken from the root side's own tree. */
static int take_tasks(const tmatch_place_helper_in_t *in, const struct tmatch__helper_head *h,
                      const char *tasks, tmatch_place_helper_out_t *out, tmatch_error_t *err)
{
	const tmatch_affinity_tree_t *tree = in->prep->tree;
	const char *name = out->node_name;
	tmatch_place_node_t *plan;
	int *leaf_of;

	if (h->ntasks != in->nlocal || !tree)
		return malformed(err, name, "task count");
	leaf_of = malloc((size_t)in->nlocal * sizeof(*leaf_of));
	plan = calloc(1, sizeof(*plan));
	if (!leaf_of || !plan || !(plan->task = calloc((size_t)in->nlocal, sizeof(*plan->task))) ||
	    !(plan->allowed = hwloc_bitmap_dup(tmatch_affinity_tree_allowed_cpuset(tree, 0)))) {
		free(leaf_of);
		tmatch_place_node_destroy(plan);
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "%s: out of memory", name);
	}
	plan->ntasks = in->nlocal;
	for (int i = 0; i < in->nlocal; i++) {
		struct tmatch__helper_task t;

		memcpy(&t, tasks + (size_t)i * sizeof(t), sizeof(t));
		leaf_of[i] = t.leaf;
		plan->task[i].rank = t.rank;
		plan->task[i].leaf = t.leaf;
		plan->task[i].pos = t.pos;
		if (t.rank != in->ranks[i] || !pos_ok(&t.pos)) {
			malformed(err, name, t.rank != in->ranks[i] ? "rank" : "position");
			goto fail;
		}
	}
	/* In range, allowed (the step's CPUs), distinct. */
	if (tmatch_map_validate(tmatch_affinity_tree_topo(tree), leaf_of, in->nlocal, NULL) < 0) {
		malformed(err, name, "leaf");
		goto fail;
	}
	for (int i = 0; i < in->nlocal; i++) {
		hwloc_const_bitmap_t set = tmatch_affinity_leaf_cpuset(tree, leaf_of[i]);

		if (!set || !hwloc_bitmap_isincluded(set, plan->allowed) ||
		    !(plan->task[i].cpuset = hwloc_bitmap_dup(set))) {
			malformed(err, name, "CPU set");
			goto fail;
		}
	}
	free(leaf_of);
	plan->status = TMATCH_PLACE_PLACED;
	plan->cost = isfinite(h->cost) ? h->cost : 0;
	plan->cost_packed = isfinite(h->cost_packed) ? h->cost_packed : 0;
	plan->map_seconds = isfinite(h->map_seconds) && h->map_seconds >= 0 ? h->map_seconds : 0;
	if (clean_text(plan->mapper, h->mapper, sizeof(h->mapper), name_char) < 0)
		snprintf(plan->mapper, sizeof(plan->mapper), "?");
	if (clean_text(plan->note, h->msg, sizeof(h->msg), printable) < 0)
		plan->note[0] = '\0';
	out->plan = plan;
	return 0;
fail:
	free(leaf_of);
	tmatch_place_node_destroy(plan);
	return -1;
}

/* The bytes as they come: the hello, once in, may bring the deadline closer. */
struct incoming {
	char *buf;
	size_t got, cap;
	struct tmatch__helper_hello *hello;
	int hello_done;
};

static int feed(void *arg, const char *data, size_t len, double *limit)
{
	struct incoming *in = arg;

	if (len > in->cap - in->got)
		return -1;
	memcpy(in->buf + in->got, data, len);
	in->got += len;
	if (!in->hello_done && in->got >= sizeof(*in->hello)) {
		in->hello_done = 1;
		*limit = on_hello(in->hello, in->buf, sizeof(*in->hello));
		if (*limit < 0)
			return -1;
	}
	return 0;
}

int tmatch_place_helper_run(const tmatch_place_helper_in_t *in, tmatch_place_helper_out_t *out,
                            tmatch_error_t *err)
{
	const tmatch_config_t *admin;
	tmatch__sandbox_t sb;
	struct tmatch__helper_hello hello;
	struct job job = {in};
	struct incoming inc;
	tmatch_error_t e;
	int rc = -1, run;

	if (!in || !in->admin || !in->prep || !out || in->nlocal < 0 ||
	    in->nlocal > TMATCH__HELPER_MAX_LOCAL || (in->nlocal > 0 && !in->ranks) ||
	    in->node_count < 1 || in->node_index < 0 || in->ngroups < 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_helper_run: invalid argument");
	admin = in->admin;
	memset(&sb, 0, sizeof(sb));
	sb.become = in->become;
	sb.uid = in->uid;
	sb.gid = in->gid;
	sb.groups = in->groups;
	sb.ngroups = in->ngroups;
	sb.filter = 1;
	sb.max_time = admin->max_map_time;
	sb.max_memory = admin->max_map_memory;
	memset(&inc, 0, sizeof(inc));
	inc.cap = sizeof(hello) + sizeof(struct tmatch__helper_head) +
	          (size_t)in->nlocal * sizeof(struct tmatch__helper_task);
	inc.hello = &hello;
	sb.feed = feed;
	sb.feed_arg = &inc;
	inc.buf = malloc(inc.cap);
	tmatch_error_clear(&e);
	if (!inc.buf) {
		run = -1;
		tmatch_error_set(&e, ENOMEM, NULL, 0, 0, "out of memory");
	} else {
		run = tmatch__sandbox_run(&sb, helper_body, &job, NULL, NULL, &e);
	}
	rc = tmatch__helper_take(in, inc.buf, inc.got, run < 0 ? &e : NULL, run < 0 ? errno : 0,
	                         out, err);
	free(inc.buf);
	return rc;
}

int tmatch__helper_take(const tmatch_place_helper_in_t *in, const char *buf, size_t got,
                        const tmatch_error_t *run_error, int run_errno,
                        tmatch_place_helper_out_t *out, tmatch_error_t *err)
{
	const tmatch_config_t *admin = in->admin;
	struct tmatch__helper_hello hello;
	struct tmatch__helper_head h;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->cfg = *admin;
	snprintf(out->node_name, sizeof(out->node_name), "node %d", in->node_index);
	memset(&hello, 0, sizeof(hello));
	if (buf && got >= sizeof(hello))
		memcpy(&hello, buf, sizeof(hello));
	if (hello.magic != TMATCH__HELPER_HELLO_MAGIC ||
	    hello.version != TMATCH__HELPER_WIRE_VERSION)
		hello.magic = 0; /* not a hello: nothing in it counts */
	if (hello.magic) {
		/* What the user tightened holds, whatever happens next. */
		if (hello.failure == TMATCH_FAILURE_FAIL)
			out->cfg.failure = TMATCH_FAILURE_FAIL;
		out->cfg.dry_run = admin->dry_run || hello.dry_run;
		out->cfg.verbose = hello.verbose < 0 ? 0 : hello.verbose > 9 ? 9 : hello.verbose;
		out->cfg.mpi_pin = hello.mpi_pin != 0;
		out->user_profile = hello.user_profile != 0;
		if (clean_text(out->node_name, hello.node_name, sizeof(hello.node_name),
		               name_char) < 0 ||
		    !out->node_name[0])
			snprintf(out->node_name, sizeof(out->node_name), "node %d", in->node_index);
	}
	if (run_error)
		return tmatch_error_set(err, run_errno > 0 ? run_errno : EIO, NULL, 0, 0, "%s: %s",
		                        out->node_name, run_error->msg);
	if (got < sizeof(hello) + sizeof(h) || !hello.magic) {
		malformed(err, out->node_name, "too short");
		return -1;
	}
	memcpy(&h, buf + sizeof(hello), sizeof(h));
	if (h.magic != TMATCH__HELPER_HEAD_MAGIC || h.version != TMATCH__HELPER_WIRE_VERSION) {
		malformed(err, out->node_name, "version");
		return -1;
	}
	if (got != sizeof(hello) + sizeof(h) +
	               (h.status == TMATCH__HELPER_OUT_PLACED && h.ntasks >= 0
	                    ? (size_t)h.ntasks * sizeof(struct tmatch__helper_task)
	                    : 0)) {
		malformed(err, out->node_name, "length");
		return -1;
	}
	switch (h.status) {
	case TMATCH__HELPER_OUT_OFF:
		out->cfg.enabled = 0;
		rc = 0;
		break;
	case TMATCH__HELPER_OUT_FAILED: {
		char line[sizeof(h.msg)];

		if (clean_text(line, h.msg, sizeof(h.msg), printable) < 0 || !line[0]) {
			malformed(err, out->node_name, "message");
			break;
		}
		tmatch_error_set(err, h.err_no > 0 && h.err_no < 4096 ? h.err_no : EINVAL, NULL, 0,
		                 0, "%s", line);
		break;
	}
	case TMATCH__HELPER_OUT_SKIPPED:
	case TMATCH__HELPER_OUT_LEARN: {
		tmatch_place_node_t *plan = calloc(1, sizeof(*plan));

		if (!plan) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "%s: out of memory",
			                 out->node_name);
			break;
		}
		if (clean_text(plan->why, h.msg, sizeof(h.msg), printable) < 0) {
			free(plan);
			malformed(err, out->node_name, "message");
			break;
		}
		plan->status = TMATCH_PLACE_SKIPPED;
		plan->record = h.status == TMATCH__HELPER_OUT_LEARN;
		plan->why_level =
		    h.why_level == TMATCH_LOG_DEBUG ? TMATCH_LOG_DEBUG : TMATCH_LOG_INFO;
		out->plan = plan;
		rc = 0;
		break;
	}
	case TMATCH__HELPER_OUT_PLACED:
		rc = take_tasks(in, &h, buf + sizeof(hello) + sizeof(h), out, err);
		break;
	default:
		malformed(err, out->node_name, "status");
		break;
	}
	if (out->plan) {
		tmatch_place_node_t *p = out->plan;

		snprintf(p->node_name, sizeof(p->node_name), "%s", out->node_name);
		p->node_index = in->node_index;
		p->node_count = in->node_count;
		p->cpus_per_task = in->cpus_per_task > 1 ? in->cpus_per_task : 1;
		p->smt = in->prep->smt;
	}
	return rc;
}
