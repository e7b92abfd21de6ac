/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * helper_job.c - what the plugin's helper does once it is the job's user,
 * confined (tmatch__helper_job in placement_private.h): the user's value
 * over the site's policy, the node list, the learn store, the plan or the
 * profile, the node's decision, and what it sends back. Each decision
 * is a function of step.c, node.c or learn.c; this file orders them and
 * turns their outcomes into the wire's codes (helper.c): nothing it read
 * goes back as text.
 */
#include "placement/placement_private.h"
#include "conf/topology.h"
#include "placement/gpu.h"
#include "placement/helper.h"
#include "placement/learn.h"
#include "placement/node.h"
#include "placement/plan.h"
#include "placement/predict.h"
#include "placement/step.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The helper's ending, with a message. */
__attribute__((noreturn)) static void finish(int fd, struct tmatch__helper_head *h, int status,
                                             int code)
{
	h->status = status;
	h->msg.code = code;
	tmatch__helper_send_head(fd, h); /* ends the helper: not placed */
	_exit(0);
}

__attribute__((noreturn)) static void failed(int fd, struct tmatch__helper_head *h, int code,
                                             int err_no)
{
	h->msg.err_no = err_no > 0 && err_no < 4096 ? err_no : EINVAL;
	finish(fd, h, TMATCH__HELPER_OUT_FAILED, code);
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

/* Learn mode: srun's decision for the step, which every node follows
   (tmatch_place_learn_follow): cfg->profile becomes the entry srun chose,
   read only; or the helper ends here, saying why in codes. RECORD: this
   run is recorded (TMATCH__HELPER_OUT_LEARN), bound as Slurm binds. */
static void learn_profile(int fd, struct tmatch__helper_head *h, const tmatch_place_helper_in_t *in,
                          tmatch_config_t *cfg)
{
	char stem[17];
	int err_no;

	switch (
	    tmatch_place_learn_follow(cfg, in->learn_env, in->job_id, in->step_id, stem, &err_no)) {
	case TMATCH_PLACE_LEARN_PLACE_STEP:
		return;
	case TMATCH_PLACE_LEARN_RECORD_STEP:
		/* learning is quiet: said in verbose mode, else in slurmd's log */
		h->why_level = cfg->verbose > 0 ? TMATCH_LOG_INFO : TMATCH_LOG_DEBUG;
		h->msg.num[0] = in->ntasks_total;
		finish(fd, h, TMATCH__HELPER_OUT_LEARN, TMATCH__HMSG_LEARN_RECORD);
	case TMATCH_PLACE_LEARN_NOT_LEARNED:
		h->why_level = cfg->verbose > 0 ? TMATCH_LOG_INFO : TMATCH_LOG_DEBUG;
		finish(fd, h, TMATCH__HELPER_OUT_SKIPPED, TMATCH__HMSG_LEARN_NONE);
	case TMATCH_PLACE_LEARN_NO_DECISION:
		h->why_level = TMATCH_LOG_INFO;
		h->msg.err_no = err_no;
		finish(fd, h, TMATCH__HELPER_OUT_SKIPPED, TMATCH__HMSG_LEARN_NO_DECISION);
	default: /* GONE */
		h->why_level = cfg->verbose > 0 ? TMATCH_LOG_INFO : TMATCH_LOG_DEBUG;
		h->msg.err_no = err_no > 0 && err_no < 4096 ? err_no : EIO;
		tmatch__helper_msg_file(&h->msg, stem);
		finish(fd, h, TMATCH__HELPER_OUT_SKIPPED, TMATCH__HMSG_LEARN_GONE);
	}
}

/* Learned, not asked for: a placement worth it only above min_gain
   (tmatch_place_learn_gain_ok); the helper ends here when it is not. */
static void learn_min_gain(int fd, struct tmatch__helper_head *h, const tmatch_config_t *cfg,
                           const tmatch_place_node_t *plan)
{
	double gain;

	if (tmatch_place_learn_gain_ok(cfg, plan, &gain))
		return;
	h->why_level = cfg->verbose > 0 ? TMATCH_LOG_INFO : TMATCH_LOG_DEBUG;
	h->msg.val[0] = gain;
	h->msg.num[0] = cfg->min_gain;
	finish(fd, h, TMATCH__HELPER_OUT_SKIPPED, TMATCH__HMSG_MIN_GAIN);
}

/* This node's slice of the step plan at path, once it is shown to be for
   this step (job, step, tasks, nodes, the profile as planned); else the
   helper ends, saying why. */
static tmatch_place_slice_t *plan_slice(int fd, struct tmatch__helper_head *h,
                                        const tmatch_place_helper_in_t *in,
                                        const tmatch_config_t *cfg, const char *node,
                                        uint64_t nodes_hash, const char *path)
{
	tmatch_place_plan_bind_t step;
	tmatch_place_slice_t *slice = NULL;
	tmatch_error_t e;
	char why[256];
	FILE *f;
	int which;

	memset(&step, 0, sizeof(step));
	tmatch_error_clear(&e);
	tmatch__helper_msg_file(&h->msg, path);
	if (!nodes_hash)
		failed(fd, h, TMATCH__HMSG_PLAN_NODELIST, EINVAL);
	f = tmatch_file_open(path, NULL, &e);
	if (f) {
		slice = tmatch_place_plan_read_slice(fileno(f), path, node, &e);
		fclose(f);
	}
	if (!slice)
		failed(fd, h, TMATCH__HMSG_PLAN_BAD, errno);
	f = tmatch_file_open(cfg->profile, NULL, &e);
	if (!f ||
	    tmatch_place_profile_stamp(fileno(f), cfg->profile, slice->bind.version,
	                               &step.profile_size, &step.profile_mtime_ns, NULL, &e) < 0) {
		int err_no = errno;

		if (f)
			fclose(f);
		tmatch__helper_msg_file(&h->msg, cfg->profile);
		failed(fd, h, TMATCH__HMSG_PLAN_PROFILE, err_no);
	}
	fclose(f);
	step.job_id = in->job_id;
	step.step_id = in->step_id;
	step.ntasks = (uint32_t)in->ntasks_total;
	step.nodes_hash = nodes_hash;
	which = tmatch_place_plan_matches(&slice->bind, &step, why, sizeof(why));
	if (which) {
		const uint64_t mine[] = {0, slice->bind.job_id, slice->bind.step_id,
		                         slice->bind.ntasks},
		               theirs[] = {0, step.job_id, step.step_id, step.ntasks};

		h->msg.num[0] = which;
		if (which <= TMATCH_PLACE_PLAN_OTHER_TASKS) {
			h->msg.num[1] = (int64_t)(mine[which] & ((UINT64_C(1) << 53) - 1));
			h->msg.num[2] = (int64_t)(theirs[which] & ((UINT64_C(1) << 53) - 1));
		}
		failed(fd, h, TMATCH__HMSG_PLAN_OTHER, EINVAL);
	}
	return slice;
}

/*
 * Verbose, on the step's first node: the predicted gain that `treematch
 * predict --save PROFILE.predict` kept beside the profile, as a note (the
 * numbers, the mapper's and the file's names); nothing when there is no
 * such file.
 */
static void predicted_gain(const tmatch_config_t *cfg, struct tmatch__helper_msg *m)
{
	const char *mapper = cfg->mapper[0] ? cfg->mapper : TMATCH_DEFAULT_MAPPER;
	char path[sizeof(cfg->profile) + 16];
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
	tmatch__helper_msg_file(m, path);
	snprintf(m->name, sizeof(m->name), "%s", mapper); /* a mapper's name: checked by cfg */
	if (rc < 0) {
		m->code = TMATCH__HMSG_PREDICT_BAD;
		m->num[0] = e.line > 0 ? e.line : 0;
		m->err_no = errno > 0 && errno < 4096 ? errno : EINVAL;
	} else if (rc > 0) {
		m->code = TMATCH__HMSG_PREDICT_NONE;
	} else {
		m->code = TMATCH__HMSG_PREDICTED;
		m->val[0] = mapped;
		m->val[1] = packed;
	}
}

/* Records sent in chunks of up to 64 KiB rather than one write each: the
   root side then wakes once a chunk, not once a task. */
struct batch {
	int fd;
	size_t n;
	char buf[65536];
};

static void batch_flush(struct batch *b)
{
	if (b->n)
		tmatch__helper_send(b->fd, b->buf, b->n);
	b->n = 0;
}

static void batch_put(struct batch *b, const void *what, size_t len)
{
	if (len > sizeof(b->buf) - b->n)
		batch_flush(b);
	memcpy(b->buf + b->n, what, len);
	b->n += len;
}

static struct batch records;

/* A placed GPU step's section, after the task records (helper.c checks
   it): the step's GPUs, then each task's GPUs and card. */
static void send_gpus(int fd, const tmatch_place_node_t *plan)
{
	const tmatch_place_gpu_step_t *st = plan->gpu_step;
	struct tmatch__helper_gpu g;
	struct tmatch__helper_gpu_task r;
	int stride = plan->gpus_per_task > 0 ? plan->gpus_per_task : 1;
	size_t size =
	    offsetof(struct tmatch__helper_gpu_task, gpu) + (size_t)stride * sizeof(int32_t);

	memset(&g, 0, sizeof(g));
	g.magic = TMATCH__HELPER_GPU_MAGIC;
	g.version = TMATCH__HELPER_GPU_VERSION;
	g.ngpus = st->ngpus;
	g.relative = st->relative;
	g.constrained = st->constrained;
	g.stride = stride;
	g.node_gpus = st->node_gpus;
	g.vars = st->vars;
	for (int i = 0; i < st->ngpus && i < TMATCH_PLACE_MAX_GPUS; i++) {
		g.gpu[i] = st->gpu[i];
		g.index[i] = st->index[i];
	}
	tmatch__helper_send(fd, &g, sizeof(g));
	records.fd = fd;
	for (int i = 0; i < plan->ntasks; i++) {
		const tmatch_place_task_t *t = &plan->task[i];

		memset(&r, 0, sizeof(r));
		r.size = (uint32_t)size;
		r.version = TMATCH__HELPER_GPU_VERSION;
		r.ngpus = t->ngpus;
		r.nic = t->nic;
		for (int j = 0; j < t->ngpus && j < stride; j++)
			r.gpu[j] = t->gpu[j];
		batch_put(&records, &r, size);
	}
	batch_flush(&records);
}

/* The node's decision failed: which of its reasons (from the outcome, the
   decision itself is node.c's). */
__attribute__((noreturn)) static void decide_failed(int fd, struct tmatch__helper_head *h,
                                                    const tmatch_place_node_in_t *nin,
                                                    const tmatch_place_node_prep_t *prep,
                                                    int err_no)
{
	const tmatch_profile_t *prof = nin->profile;

	if (!prep->tree)
		failed(fd, h, TMATCH__HMSG_NO_TREE, prep->tree_errno);
	if (tmatch_place_gpu_env_has_gpus(nin->gpu_env)) {
		/* Slurm names a GPU this node's hwloc does not show */
		tmatch_affinity_devices_t *dev = tmatch_affinity_tree_devices(prep->tree, 0, NULL);
		int bad = tmatch_place_gpu_unknown(dev, nin->gpu_env);

		if (bad >= 0) {
			h->msg.num[0] = bad;
			h->msg.num[1] = dev->ngpus;
			if (dev->ngpus)
				snprintf(h->msg.name, sizeof(h->msg.name), "%s",
				         dev->gpu[0].backend);
			failed(fd, h, TMATCH__HMSG_GPU_UNKNOWN, EINVAL);
		}
		tmatch_affinity_devices_destroy(dev);
	}
	if (err_no == EOVERFLOW) {
		h->msg.num[0] = nin->nlocal;
		h->msg.num[1] = tmatch_affinity_tree_nb_slots(prep->tree);
		h->msg.num[2] = nin->cpus_per_task > 1 ? nin->cpus_per_task : 1;
		failed(fd, h, TMATCH__HMSG_SLOTS, err_no);
	}
	if (prof && tmatch_profile_ranks(prof) != nin->ntasks_total) {
		h->msg.num[0] = tmatch_profile_ranks(prof);
		h->msg.num[1] = nin->ntasks_total;
		failed(fd, h, TMATCH__HMSG_PROFILE_RANKS, EINVAL);
	}
	failed(fd, h, err_no == ENOMEM ? TMATCH__HMSG_NOMEM : TMATCH__HMSG_MAP, err_no);
}

void tmatch__helper_job(const tmatch_place_helper_in_t *in, int differs, int fd)
{
	const tmatch_place_node_prep_t *prep = in->prep;
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
	const char *nodelist, *plan_path;
	tmatch_place_source_t source;
	struct tmatch__helper_msg topo_note;
	char *name;
	int user_profile = 0, opened;

	memset(&h, 0, sizeof(h));
	memset(&hello, 0, sizeof(hello));
	memset(&topo_note, 0, sizeof(topo_note));
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
	hello.nic_env = cfg.nic_env;
	hello.user_profile = user_profile;
	hello.max_time = cfg.max_map_time;
	tmatch__helper_send(fd, &hello, sizeof(hello));
	if (e.msg[0]) {
		h.msg.num[0] = e.column > 0 ? e.column : 0;
		failed(fd, &h, TMATCH__HMSG_VALUE, EINVAL);
	}
	if (!name)
		failed(fd, &h, TMATCH__HMSG_NOMEM, ENOMEM);
	if (differs)
		failed(fd, &h, TMATCH__HMSG_TREE_DIFFERS, EPROTO);
	source = tmatch_place_source(&cfg, in->plan_env, &plan_path);
	if (source == TMATCH_PLACE_FROM_LEARN) {
		learn_profile(fd, &h, in, &cfg); /* cfg.profile: the entry srun chose */
		source = tmatch_place_source(&cfg, in->plan_env, &plan_path);
	}
	if (source == TMATCH_PLACE_FROM_OFF)
		finish(fd, &h, TMATCH__HELPER_OUT_OFF, TMATCH__HMSG_NONE);
	tighten_memory(in->admin->max_map_memory, cfg.max_map_memory);

	if (source == TMATCH_PLACE_FROM_PLAN) {
		/* the step's plan: this node's slice only, the profile is not read */
		slice = plan_slice(fd, &h, in, &cfg, name, nodes_hash, plan_path);
	} else if (!(prof = tmatch_place_load_profile_err(&cfg, NULL, NULL, &opened, &e))) {
		int err_no = errno;

		tmatch__helper_msg_file(&h.msg, cfg.profile);
		if (!opened)
			failed(fd, &h, TMATCH__HMSG_PROFILE_OPEN, err_no);
		if (err_no == ENOMEM)
			failed(fd, &h, TMATCH__HMSG_NOMEM, err_no);
		h.msg.num[0] = e.line > 0 ? e.line : 0;
		h.msg.num[1] = e.column > 0 ? e.column : 0;
		failed(fd, &h, TMATCH__HMSG_PROFILE_BAD, err_no);
	}
	/* The switches, for the positions only (a plan has them): the
	   partition's topology; a file that does not parse counts as none,
	   said in the placement's note. */
	if (!slice && in->node_count > 1 && nodelist) {
		if (in->topology_conf) {
			tmatch_conf_topo_sel_t sel = {NULL, in->partition, in->slurm_conf, NULL};
			const char *file = in->topology_file ? in->topology_file : "topology.conf";

			tmatch_error_clear(&e);
			conf = tmatch_conf_topology_parse_sel(in->topology_conf, file, &sel, &e);
			if (!conf) {
				int err_no = errno;

				tmatch__helper_msg_file(&topo_note, file);
				topo_note.code = TMATCH__HMSG_TOPOLOGY_BAD;
				topo_note.num[0] = e.line > 0 ? e.line : 0;
				topo_note.num[1] = e.column > 0 ? e.column : 0;
				topo_note.err_no = err_no > 0 && err_no < 4096 ? err_no : EINVAL;
			}
		}
		if (prep->tree)
			cluster =
			    tmatch_affinity_cluster_build(conf, nodelist, prep->tree, NULL, NULL);
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
	nin.gpu_env = in->gpu_env;
	tmatch_error_clear(&e);
	if (tmatch_place_node_decide(&nin, prep, &plan, &e) < 0)
		decide_failed(fd, &h, &nin, prep, errno);
	learn_min_gain(fd, &h, &cfg, plan);
	if (plan->status == TMATCH_PLACE_SKIPPED) {
		h.why_level = plan->why_level;
		if (!prep->whole)
			finish(fd, &h, TMATCH__HELPER_OUT_SKIPPED, TMATCH__HMSG_NOT_WHOLE);
		h.msg.num[0] = prof    ? tmatch_profile_ranks(prof)
		               : slice ? (int)slice->bind.ntasks
		                       : 0;
		h.msg.num[1] = in->ntasks_total;
		finish(fd, &h, TMATCH__HELPER_OUT_SKIPPED, TMATCH__HMSG_DEFAULT_SIZE);
	}
	if (cfg.verbose > 0 && in->node_index == 0 && !slice)
		predicted_gain(&cfg, &h.msg);
	if (topo_note.code && !h.msg.code)
		h.msg = topo_note;
	h.status = TMATCH__HELPER_OUT_PLACED;
	h.ntasks = plan->ntasks;
	h.cost = plan->cost;
	h.cost_packed = plan->cost_packed;
	h.map_seconds = plan->map_seconds;
	h.search_time = plan->search_time;
	h.search_cut_from = plan->search_cut_from;
	snprintf(h.mapper, sizeof(h.mapper), "%s", plan->mapper);
	h.gpu_step = plan->gpu_step != NULL;
	tmatch__helper_send_head(fd, &h);
	records.fd = fd;
	for (int i = 0; i < plan->ntasks; i++) {
		struct tmatch__helper_task t;

		memset(&t, 0, sizeof(t));
		t.size = sizeof(t);
		t.version = TMATCH__HELPER_TASK_VERSION;
		t.rank = plan->task[i].rank;
		t.leaf = plan->task[i].leaf;
		t.pos = plan->task[i].pos;
		batch_put(&records, &t, sizeof(t));
	}
	batch_flush(&records);
	if (plan->gpu_step)
		send_gpus(fd, plan);
	_exit(0); /* nothing to free: the process ends */
}
