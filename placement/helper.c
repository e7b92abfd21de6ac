/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * helper.c - the plugin's privilege separation, after OpenSSH's: the wire
 * between slurmstepd's root side and its helper program, the helper
 * program's start, and the root side's checks (tmatch_place_helper_run in
 * placement/helper.h). What the helper does as the user is helper_job.c's; how it
 * is confined, sandbox.c's.
 *
 * The helper is a program of its own (treematch-helper), opened by the
 * root side at init and started with execveat from that descriptor: a
 * clean memory image, nothing of slurmstepd's (its credential, the
 * passwords of its plugins) and an empty environment. It takes:
 *
 *   fd 4, a sealed memfd written by the root side (native byte order: the
 *   same build on the same host, checked):
 *     struct tmatch__helper_input   the build, the parent's pid, the job's
 *                                   uid, gid and group count, the step's
 *                                   items, the admin's policy, the root
 *                                   side's node tree's signature
 *     gid_t groups[ngroups]         computed by the root side: no NSS here
 *     int32_t ranks[nlocal]
 *     strings, each uint32_t tag, uint32_t length, bytes with their NUL:
 *                                   the user's value, the job's node list,
 *                                   plan and learn decision (copied from
 *                                   the job's environment: the helper reads
 *                                   no environment), the step's and job's
 *                                   cores, hwloc's XML of the node,
 *                                   topology.conf's text;
 *
 * and answers on fd 3 (a pipe):
 *     struct tmatch__helper_hello   as soon as the user's value is merged:
 *                                   the node's name and what the user
 *                                   tightened, so a helper killed later is
 *                                   still reported under its node's name and
 *                                   the user's policy;
 *     struct tmatch__helper_head    placed, skipped, off or failed, with a
 *                                   message: a code and numbers and short
 *                                   names, never free text;
 *     struct tmatch__helper_task [ntasks], when placed: global rank, leaf,
 *                                   position; each record carries its size
 *                                   and version, so fields can be added.
 *
 * The root side reads the answer as it comes, one record at a time: each
 * field is checked before it is kept, a placed head may announce no more
 * tasks than Slurm's local count and the root side's tree has slots, and
 * each task's CPU set comes from the root side's own tree. The lines the
 * user reads are made here, from the codes (tmatch__helper_format).
 */
#include "placement/placement_private.h"
#include "placement/gpu.h"
#include "placement/helper.h"
#include "placement/inputs.h"
#include "placement/node.h"
#include "placement/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* ---- the helper program ------------------------------------------------- */

int tmatch_place_helper_open(const char *path, tmatch_error_t *err)
{
	char dir[PATH_MAX];
	struct stat st;
	uid_t me = geteuid();
	int fd;

	if (!path || path[0] != '/' || strlen(path) >= sizeof(dir))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "the helper program must be given by its absolute path "
		                        "(helper=)");
	/* each directory above it: written only by root (or the caller), or sticky */
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
		*slash = '\0';
		if (stat(dir[0] ? dir : "/", &st) < 0)
			return tmatch_error_set(err, errno, NULL, 0, 0,
			                        "the helper program %s: %s: %s", path,
			                        dir[0] ? dir : "/", strerror(errno));
		if ((st.st_uid != 0 && st.st_uid != me) ||
		    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
			return tmatch_error_set(err, EPERM, NULL, 0, 0,
			                        "the helper program %s is in %s, which others may "
			                        "change: not used",
			                        path, dir[0] ? dir : "/");
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return tmatch_error_set(err, errno, NULL, 0, 0,
		                        "cannot open the helper program %s: %s", path,
		                        strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR) ||
	    (st.st_uid != 0 && st.st_uid != me) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return tmatch_error_set(err, EPERM, NULL, 0, 0,
		                        "the helper program %s must be an executable file of "
		                        "root's that neither group nor others may write: not used",
		                        path);
	}
	return fd;
}

void tmatch_place_helper_reap(pid_t pid)
{
	tmatch__sandbox_reap(pid);
}

/* ---- the input, written by the root side ---------------------------------- */

struct wbuf {
	int fd;
	int failed;
};

static void put(struct wbuf *w, const void *p, size_t n)
{
	if (!w->failed && n && tmatch__write_all(w->fd, p, n) < 0)
		w->failed = 1;
}

static void put_tagged(struct wbuf *w, uint32_t tag, const char *s, size_t n)
{
	uint32_t head[2] = {tag, (uint32_t)n + 1};

	if (!s)
		return;
	if (n >= UINT32_MAX) {
		w->failed = 1;
		return;
	}
	put(w, head, sizeof(head));
	put(w, s, n);
	put(w, "", 1);
}

static void put_str(struct wbuf *w, uint32_t tag, const char *s)
{
	if (s)
		put_tagged(w, tag, s, strlen(s));
}

/* The helper's input, written into its memfd and sealed. 0, or -1 with err. */
static int input_write(int fd, const tmatch_place_helper_in_t *in, int probe, tmatch_error_t *err)
{
	struct tmatch__helper_input h;
	struct wbuf w = {fd, 0};
	const tmatch_affinity_tree_t *tree = in->prep->tree;
	char *xml = NULL, cwd[PATH_MAX];
	size_t xml_len = 0;

	memset(&h, 0, sizeof(h));
	h.magic = TMATCH__HELPER_INPUT_MAGIC;
	h.version = TMATCH__HELPER_WIRE_VERSION;
	h.size = sizeof(h);
	h.config_size = sizeof(tmatch_config_t);
	snprintf(h.build, sizeof(h.build), "%s", TMATCH_VERSION);
	h.parent = (int32_t)getpid();
	h.uid = (uint32_t)in->uid;
	h.gid = (uint32_t)in->gid;
	h.ngroups = in->ngroups;
	h.node_index = in->node_index;
	h.node_count = in->node_count;
	h.nlocal = in->nlocal;
	h.ntasks_total = in->ntasks_total;
	h.cpus_per_task = in->cpus_per_task;
	h.step_id = in->step_id;
	h.job_id = in->job_id;
	h.probe = probe;
	h.has_tree = tree != NULL;
	h.smt = in->prep->smt;
	h.whole = in->prep->whole;
	h.node_sig = tree ? tmatch_place_node_sig(tree) : 0;
	h.admin = *in->admin;
	/* the machine the tree was made from: the helper makes its own from it */
	if (tree && !(xml = tmatch_affinity_tree_xml(tree, &xml_len, err)))
		return -1;
	put(&w, &h, sizeof(h));
	put(&w, in->groups, (size_t)in->ngroups * sizeof(gid_t));
	_Static_assert(sizeof(int) == sizeof(int32_t), "ranks travel as the ints they are");
	put(&w, in->ranks, (size_t)in->nlocal * sizeof(int));
	put_str(&w, TMATCH__HIN_USER_VALUE, in->user_value);
	put_str(&w, TMATCH__HIN_NODELIST, in->nodelist);
	put_str(&w, TMATCH__HIN_PLAN, in->plan_env);
	put_str(&w, TMATCH__HIN_LEARN, in->learn_env);
	put_str(&w, TMATCH__HIN_STEP_CORES, in->step_cores);
	put_str(&w, TMATCH__HIN_JOB_CORES, in->job_cores);
	put_tagged(&w, TMATCH__HIN_NODE_XML, xml, xml_len);
	put_str(&w, TMATCH__HIN_TOPOLOGY_CONF, in->topology_conf);
	if (in->gpu_env) {
		put_str(&w, TMATCH__HIN_STEP_GPUS, in->gpu_env->step_gpus);
		put_str(&w, TMATCH__HIN_CUDA, in->gpu_env->cuda);
		put_str(&w, TMATCH__HIN_ROCR, in->gpu_env->rocr);
		put_str(&w, TMATCH__HIN_ZE, in->gpu_env->ze);
		put_str(&w, TMATCH__HIN_ORDINAL, in->gpu_env->ordinal);
		put_str(&w, TMATCH__HIN_CGROUP_CONF, in->gpu_env->cgroup_conf);
	}
	put_str(&w, TMATCH__HIN_TOPOLOGY_FILE, in->topology_file);
	put_str(&w, TMATCH__HIN_SLURM_CONF, in->slurm_conf);
	put_str(&w, TMATCH__HIN_PARTITION, in->partition);
	/* the job's working directory (Slurm entered it just before
	   user_init), which a helper started ahead did not inherit */
	put_str(&w, TMATCH__HIN_CWD, getcwd(cwd, sizeof(cwd)));
	put(&w, (const uint32_t[2]){TMATCH__HIN_END, 0}, 2 * sizeof(uint32_t));
	free(xml);
	if (w.failed ||
	    fcntl(w.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return tmatch_error_set(err, errno, NULL, 0, 0,
		                        "cannot start the mapping process: its input: %s",
		                        strerror(errno));
	return 0;
}

/* ---- the input, read by the helper ---------------------------------------- */

struct input {
	const struct tmatch__helper_input *h;
	tmatch_place_helper_in_t in;
	const char *node_xml;
	size_t node_xml_len;
	tmatch_place_gpu_env_t gpu; /* a GPU step's variables */
	const char *cwd;            /* the job's working directory, NULL = unknown */
};

/* The input on fd (mapped whole, read only), every length and count
   checked against the bytes there are. 0, or -1. */
static int input_read(int fd, struct input *d)
{
	const struct tmatch__helper_input *h;
	struct stat st;
	const char *p, *end, *str[TMATCH__HIN_COUNT] = {0};
	size_t len[TMATCH__HIN_COUNT] = {0}, need;

	memset(d, 0, sizeof(*d));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(*h) ||
	    (uint64_t)st.st_size > TMATCH__HELPER_MAX_INPUT)
		return -1;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	end = p + st.st_size;
	d->h = h = (const void *)p;
	if (h->magic != TMATCH__HELPER_INPUT_MAGIC || h->version != TMATCH__HELPER_WIRE_VERSION ||
	    h->size != sizeof(*h) || h->config_size != sizeof(tmatch_config_t) ||
	    strncmp(h->build, TMATCH_VERSION, sizeof(h->build)) != 0 || h->ngroups < 0 ||
	    h->ngroups > 65536 || h->nlocal < 0 || h->nlocal > TMATCH__HELPER_MAX_LOCAL ||
	    h->node_count < 1 || h->node_index < 0 || h->node_index >= h->node_count)
		return -1;
	need = sizeof(*h) + (size_t)h->ngroups * sizeof(gid_t) + (size_t)h->nlocal * 4;
	if (need > (size_t)(end - p))
		return -1;
	d->in.groups = (const gid_t *)(const void *)(p + sizeof(*h));
	d->in.ranks = (const int *)(const void *)(p + sizeof(*h) + h->ngroups * sizeof(gid_t));
	p += need;
	for (;;) {
		uint32_t tag[2];

		if ((size_t)(end - p) < sizeof(tag))
			return -1;
		memcpy(tag, p, sizeof(tag));
		p += sizeof(tag);
		if (tag[0] == TMATCH__HIN_END)
			break;
		if (tag[0] >= TMATCH__HIN_COUNT || tag[1] < 1 || tag[1] > (size_t)(end - p) ||
		    p[tag[1] - 1] != '\0')
			return -1;
		str[tag[0]] = p;
		len[tag[0]] = tag[1] - 1;
		p += tag[1];
	}
	d->in.admin = &h->admin;
	d->in.uid = (uid_t)h->uid;
	d->in.gid = (gid_t)h->gid;
	d->in.ngroups = h->ngroups;
	d->in.node_index = h->node_index;
	d->in.node_count = h->node_count;
	d->in.nlocal = h->nlocal;
	d->in.ntasks_total = h->ntasks_total;
	d->in.cpus_per_task = h->cpus_per_task;
	d->in.job_id = h->job_id;
	d->in.step_id = h->step_id;
	d->in.user_value = str[TMATCH__HIN_USER_VALUE];
	d->in.nodelist = str[TMATCH__HIN_NODELIST];
	d->in.plan_env = str[TMATCH__HIN_PLAN];
	d->in.learn_env = str[TMATCH__HIN_LEARN];
	d->in.step_cores = str[TMATCH__HIN_STEP_CORES];
	d->in.job_cores = str[TMATCH__HIN_JOB_CORES];
	d->in.topology_conf = str[TMATCH__HIN_TOPOLOGY_CONF];
	d->gpu.step_gpus = str[TMATCH__HIN_STEP_GPUS];
	d->gpu.cuda = str[TMATCH__HIN_CUDA];
	d->gpu.rocr = str[TMATCH__HIN_ROCR];
	d->gpu.ze = str[TMATCH__HIN_ZE];
	d->gpu.ordinal = str[TMATCH__HIN_ORDINAL];
	d->gpu.cgroup_conf = str[TMATCH__HIN_CGROUP_CONF];
	d->in.gpu_env = &d->gpu;
	d->in.topology_file = str[TMATCH__HIN_TOPOLOGY_FILE];
	d->in.slurm_conf = str[TMATCH__HIN_SLURM_CONF];
	d->in.partition = str[TMATCH__HIN_PARTITION];
	d->cwd = str[TMATCH__HIN_CWD];
	d->node_xml = str[TMATCH__HIN_NODE_XML];
	d->node_xml_len = len[TMATCH__HIN_NODE_XML];
	d->in.helper_fd = -1;
	return 0;
}

/* Tests: what the confined helper is, one fact per line. */
__attribute__((noreturn)) static void probe(int fd)
{
	static const char *const keys[] = {"Uid:", "Gid:", "Groups:", "NoNewPrivs:", "Seccomp:"};
	char line[PATH_MAX + 64], link[64], target[PATH_MAX];
	FILE *f = fopen("/proc/self/status", "r");
	int n = 0;
	ssize_t r;

	while (f && fgets(line, sizeof(line), f))
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (strncmp(line, keys[k], strlen(keys[k])) == 0)
				tmatch__helper_send(fd, line, strlen(line));
	if (f)
		fclose(f);
	for (int i = 0; i <= 5; i++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", i);
		r = readlink(link, target, sizeof(target) - 1);
		target[r < 0 ? 0 : r] = '\0';
		snprintf(line, sizeof(line), "fd %d -> %s\n", i, r < 0 ? "-" : target);
		tmatch__helper_send(fd, line, strlen(line));
	}
	r = readlink("/proc/self/exe", target, sizeof(target) - 1);
	target[r < 0 ? 0 : r] = '\0';
	for (char **e = environ; e && *e; e++)
		n++;
	snprintf(line, sizeof(line), "exe %s\nenviron %d\nppid %ld\n", target, n, (long)getppid());
	tmatch__helper_send(fd, line, strlen(line));
	if ((f = fopen("/proc/self/oom_score_adj", "r")) && fgets(target, 32, f)) {
		snprintf(line, sizeof(line), "oom_score_adj %s", target);
		tmatch__helper_send(fd, line, strlen(line));
	}
	if (f)
		fclose(f);
	_exit(0);
}

/* The root side's word that fd 4 is written and sealed (EOF: the step
   went on without the helper). 0, or -1. */
static int wait_word(int fd)
{
	char c;
	ssize_t r;

	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	close(fd);
	return r == 1 ? 0 : -1;
}

void tmatch__helper_main(void)
{
	tmatch__sandbox_t sb;
	tmatch_place_node_in_t nin;
	tmatch_place_node_prep_t prep;
	struct input d;
	int code, differs;

	/* Started ahead of its step, it dies with slurmstepd while it waits
	   (the uid change clears this; confine sets it again). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* What needs no input is done while slurmstepd prepares the step:
	   the filter built, hwloc's components loaded without its plugins
	   and kept (hwloc reads the variable only then: the environment is
	   empty again unless that failed). */
	tmatch__sandbox_filter_ahead();
	setenv("HWLOC_PLUGINS_BLACKLIST", TMATCH_PLACE_HWLOC_BLACKLIST, 1);
	if (tmatch_affinity_components_keep() == 0)
		unsetenv("HWLOC_PLUGINS_BLACKLIST");
	if (wait_word(TMATCH__HELPER_GO_FD) < 0 || input_read(TMATCH__HELPER_INPUT_FD, &d) < 0)
		_exit(TMATCH__SANDBOX_EXIT_INPUT);
	close(TMATCH__HELPER_INPUT_FD); /* mapped; the descriptor is not needed */
	memset(&sb, 0, sizeof(sb));
	sb.cwd = d.cwd;
	sb.become = 1;
	sb.uid = d.in.uid;
	sb.gid = d.in.gid;
	sb.groups = d.in.groups;
	sb.ngroups = d.in.ngroups;
	sb.filter = 1;
	sb.max_time = d.in.admin->max_map_time;
	sb.max_memory = d.in.admin->max_map_memory;
	code = tmatch__sandbox_confine(&sb, (pid_t)d.h->parent, tmatch__address_space_now());
	if (code)
		_exit(code);
	if (d.h->probe)
		probe(3);
	/* Its own node tree, from the machine the root side loaded, with the
	   same items: it must be the root side's (the leaves it sends back are
	   checked on that one). */
	memset(&nin, 0, sizeof(nin));
	nin.cfg = d.in.admin;
	nin.topology_xml_text = d.node_xml;
	nin.topology_xml_len = d.node_xml_len;
	nin.step_cores = d.in.step_cores;
	nin.job_cores = d.in.job_cores;
	nin.cpus_per_task = d.in.cpus_per_task;
	nin.nlocal = d.in.nlocal;
	nin.gpu_env = d.in.gpu_env; /* a GPU step: the devices too, as the root side */
	memset(&prep, 0, sizeof(prep));
	prep.whole = d.h->whole; /* the root side has no tree: nor has the helper */
	if (d.h->has_tree && d.node_xml)
		tmatch_place_node_prepare(&nin, &prep);
	differs = d.h->has_tree != (prep.tree != NULL) ||
	          (prep.tree && (prep.smt != d.h->smt || prep.whole != d.h->whole ||
	                         tmatch_place_node_sig(prep.tree) != d.h->node_sig));
	d.in.prep = &prep;
	tmatch__helper_job(&d.in, differs, 3);
}

/* ---- messages: codes, made into lines by the root side --------------------- */

static int name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '+';
}

/* a path in a message: '?' stands for any other character */
static int path_char(int c)
{
	return name_char(c) || c == '/' || c == '?';
}

void tmatch__helper_msg_file(struct tmatch__helper_msg *m, const char *path)
{
	size_t n = path ? strlen(path) : 0, cap = sizeof(m->file) - 1, skip = 0, o = 0;

	if (n > cap) { /* the end names the file: "...", then the last characters */
		memcpy(m->file, "...", 3);
		o = 3;
		skip = n - (cap - 3);
	}
	for (size_t i = skip; i < n; i++)
		m->file[o++] = path_char((unsigned char)path[i]) ? path[i] : '?';
	m->file[o] = '\0';
}

/* A text field of the wire: terminated, every character passing `ok`. */
static int field_ok(const char *s, size_t cap, int (*ok)(int))
{
	size_t n = strnlen(s, cap);

	if (n == cap)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!ok((unsigned char)s[i]))
			return 0;
	return 1;
}

static const char *why_errno(int e)
{
	return e == EINVAL ? "not a regular file" : strerror(e);
}

int tmatch__helper_format(const struct tmatch__helper_msg *m, const char *node,
                          const tmatch_place_helper_in_t *in, char *line, size_t len)
{
	const char *file = m->file, *name = m->name;
	long long a = (long long)m->num[0], b = (long long)m->num[1], c = (long long)m->num[2];
	int e = m->err_no;

	if (e < 0 || e >= 4096 || !field_ok(m->file, sizeof(m->file), path_char) ||
	    !field_ok(m->name, sizeof(m->name), name_char) || !isfinite(m->val[0]) ||
	    !isfinite(m->val[1]) || fabs(m->val[0]) > 1e12 || fabs(m->val[1]) > 1e12)
		return -1;
	for (int i = 0; i < 3; i++)
		if (m->num[i] < 0 || m->num[i] > INT64_C(1) << 53)
			return -1;
	switch (m->code) {
	case TMATCH__HMSG_VALUE:
		snprintf(line, len,
		         "%s: --treematch is refused here (column %lld): srun checks the value and "
		         "says why",
		         node, a);
		return 0;
	case TMATCH__HMSG_NOMEM:
		snprintf(line, len, "%s: out of memory", node);
		return 0;
	case TMATCH__HMSG_PROFILE_OPEN:
		snprintf(line, len, "%s: cannot read profile %s: %s", node, file, why_errno(e));
		return 0;
	case TMATCH__HMSG_PROFILE_BAD:
		snprintf(line, len,
		         "%s: bad profile %s, line %lld, column %lld (%s): `treematch profile "
		         "check` says what to fix",
		         node, file, a, b, strerror(e));
		return 0;
	case TMATCH__HMSG_PROFILE_RANKS:
		snprintf(
		    line, len,
		    "%s: the profile has %lld ranks but the job step has %lld tasks: record or "
		    "convert a profile with %lld ranks, or run %lld tasks",
		    node, a, b, b, a);
		return 0;
	case TMATCH__HMSG_SLOTS:
		snprintf(line, len,
		         "%s: %lld tasks on this node but the step has only %lld slot(s) of %lld "
		         "CPU(s) here: ask for fewer tasks per node or more CPUs",
		         node, a, b, c);
		return 0;
	case TMATCH__HMSG_NO_TREE:                     /* the root side's own words */
		if (in->prep->tree_errno == EOVERFLOW) /* "node n0: 4 tasks for 2 CPUs: ..." */
			snprintf(line, len, "node %s: %s", node, in->prep->tree_error);
		else
			snprintf(line, len, "%s: cannot build the node topology: %s", node,
			         in->prep->tree_error[0] ? in->prep->tree_error : "no tree");
		return 0;
	case TMATCH__HMSG_GPU_UNKNOWN:
		snprintf(line, len,
		         "%s: SLURM_STEP_GPUS names GPU %lld, and this node has %lld GPU%s (%s): "
		         "check the node's gres.conf against hwloc",
		         node, a, b, b == 1 ? "" : "s", name[0] ? name : "none found");
		return 0;
	case TMATCH__HMSG_TREE_DIFFERS:
		snprintf(line, len,
		         "%s: the helper's node tree differs from slurmstepd's: not placed (are "
		         "treematch.so and treematch-helper of one build?)",
		         node);
		return 0;
	case TMATCH__HMSG_PLAN_NODELIST:
		snprintf(line, len, "%s: plan %s not used: the step's node list is unknown", node,
		         file);
		return 0;
	case TMATCH__HMSG_PLAN_BAD:
		if (e == ENOENT)
			snprintf(line, len, "%s: plan %s not used: it has no slice for this node",
			         node, file);
		else
			snprintf(line, len,
			         "%s: plan %s not used: %s (`treematch layout --plan` writes it "
			         "again)",
			         node, file, e == EINVAL ? "damaged, or not a plan" : strerror(e));
		return 0;
	case TMATCH__HMSG_PLAN_PROFILE:
		snprintf(line, len, "%s: plan not used: cannot read profile %s: %s", node, file,
		         why_errno(e));
		return 0;
	case TMATCH__HMSG_PLAN_OTHER: {
		char why[128];

		if (a == TMATCH_PLACE_PLAN_OTHER_JOB)
			snprintf(why, sizeof(why), "it was made for job %lld, this is job %lld", b,
			         c);
		else if (a == TMATCH_PLACE_PLAN_OTHER_STEP)
			snprintf(why, sizeof(why), "it was made for step %lld, this is step %lld",
			         b, c);
		else if (a == TMATCH_PLACE_PLAN_OTHER_TASKS)
			snprintf(why, sizeof(why), "it places %lld tasks, the step has %lld", b, c);
		else if (a == TMATCH_PLACE_PLAN_OTHER_NODES)
			snprintf(why, sizeof(why), "it was made for other nodes than the step's");
		else if (a == TMATCH_PLACE_PLAN_OTHER_PROFILE)
			snprintf(why, sizeof(why), "the profile changed since it was made");
		else
			return -1;
		snprintf(line, len, "%s: plan %s is not for this step: %s", node, file, why);
		return 0;
	}
	case TMATCH__HMSG_MAP:
		snprintf(line, len, "%s: the mapping failed: %s", node, strerror(e));
		return 0;
	case TMATCH__HMSG_DEFAULT_SIZE:
		snprintf(line, len,
		         "default profile has %lld ranks, step has %lld tasks: not applied", a, b);
		return 0;
	case TMATCH__HMSG_NOT_WHOLE:
		snprintf(line, len,
		         "%s: the job does not have the whole node (exclusive_only=on): Slurm's "
		         "binding kept",
		         node);
		return 0;
	case TMATCH__HMSG_LEARN_RECORD:
		snprintf(line, len,
		         "%s: learning: nothing stored yet for this program at %lld tasks: this "
		         "run is recorded",
		         node, a);
		return 0;
	case TMATCH__HMSG_LEARN_NONE:
		snprintf(line, len, "%s: learn: not learned (srun said why): Slurm's binding kept",
		         node);
		return 0;
	case TMATCH__HMSG_LEARN_NO_DECISION:
		snprintf(line, len,
		         "%s: learn: %s: Slurm's binding kept (srun and treematch.so of one "
		         "release?)",
		         node,
		         e == ENOENT ? "srun made no learn decision for this step"
		                     : "srun's learn decision is malformed");
		return 0;
	case TMATCH__HMSG_LEARN_GONE:
		snprintf(line, len,
		         "%s: learn: the stored profile %s that srun chose is %s here: Slurm's "
		         "binding kept (not recorded)",
		         node, file,
		         e == ENOENT   ? "gone"
		         : e == ESTALE ? "replaced since"
		         : e == EPROTO ? "damaged"
		                       : strerror(e));
		return 0;
	case TMATCH__HMSG_MIN_GAIN:
		snprintf(
		    line, len,
		    "%s: the learned profile gains %.1f %% over Slurm's binding here, less than "
		    "min_gain=%lld %%: Slurm's binding kept",
		    node, m->val[0], a);
		return 0;
	case TMATCH__HMSG_PREDICTED:
		snprintf(
		    line, len,
		    "predicted run time (%s, SimGrid's replay on the machine it names): %s %.4g "
		    "s, packed %.4g s: %.2fx",
		    file, name, m->val[0], m->val[1], m->val[0] > 0 ? m->val[1] / m->val[0] : 0.0);
		return 0;
	case TMATCH__HMSG_PREDICT_NONE:
		snprintf(line, len,
		         "%s has no predicted time for mapper=%s and packed: treematch predict "
		         "--mapping packed --mapping %s --save it",
		         file, name, name);
		return 0;
	case TMATCH__HMSG_PREDICT_BAD:
		snprintf(line, len, "prediction not read: %s:%lld (%s)", file, a, strerror(e));
		return 0;
	case TMATCH__HMSG_TOPOLOGY_BAD: {
		char where[96];

		if (e == EINVAL)
			snprintf(where, sizeof(where), "line %lld, column %lld", a, b);
		else
			snprintf(where, sizeof(where), "%s", strerror(e));
		snprintf(line, len,
		         "%s: the network's file %s cannot be used (%s): positions under one flat "
		         "switch (`treematch topology show --topology-conf FILE` says what to fix)",
		         node, file, where);
		return 0;
	}
	default:
		return -1;
	}
}

/* ---- the answer, written by the helper ------------------------------------- */

void tmatch__helper_send(int fd, const void *what, size_t len)
{
	if (tmatch__write_all(fd, what, len) < 0)
		_exit(TMATCH__SANDBOX_EXIT_WRITE);
}

void tmatch__helper_send_head(int fd, struct tmatch__helper_head *h)
{
	h->magic = TMATCH__HELPER_HEAD_MAGIC;
	h->version = TMATCH__HELPER_WIRE_VERSION;
	h->task_size = sizeof(struct tmatch__helper_task);
	tmatch__helper_send(fd, h, sizeof(*h));
	if (h->status != TMATCH__HELPER_OUT_PLACED)
		_exit(0);
}

/* ---- the answer, read by the root side -------------------------------------- */

enum stage { HELLO, HEAD, TASKS, GPU, GPU_TASKS, DONE };

/* The root side's reading in progress. */
struct take {
	const tmatch_place_helper_in_t *in;
	tmatch_place_helper_out_t *out;
	enum stage stage;
	union {
		struct tmatch__helper_hello hello;
		struct tmatch__helper_head head;
		struct tmatch__helper_task task;
		struct tmatch__helper_gpu gpu;
		struct tmatch__helper_gpu_task gpu_task;
	} part; /* the record being read */
	size_t have;
	struct tmatch__helper_hello hello;
	struct tmatch__helper_head head;
	tmatch_place_node_t *plan; /* PLACED: the tasks so far */
	unsigned char *seen;       /* leaves taken */
	/* a GPU step: the devices of the root side's tree, the step's GPUs as
	   the helper sent them (checked), the GPU records taken so far */
	tmatch_affinity_devices_t *dev;
	tmatch_place_gpu_step_t *gpu_step;
	int stride, gpu_tasks;
	const char *bad; /* why the bytes were refused */
	int nomem;
};

static size_t stage_size(const struct take *t)
{
	switch (t->stage) {
	case HELLO:
		return sizeof(struct tmatch__helper_hello);
	case HEAD:
		return sizeof(struct tmatch__helper_head);
	case GPU:
		return sizeof(struct tmatch__helper_gpu);
	case GPU_TASKS: /* stride is 1 .. TMATCH_PLACE_MAX_GPUS, checked */
		return offsetof(struct tmatch__helper_gpu_task, gpu) +
		       (size_t)t->stride * sizeof(int32_t);
	default:
		return sizeof(struct tmatch__helper_task);
	}
}

/* The hello: the node's name (checked) and what the user tightened, which
   holds whatever happens next; a limit the user gave counts from now. */
static void on_hello(struct take *t, double *limit)
{
	const tmatch_config_t *admin = t->in->admin;
	struct tmatch__helper_hello *h = &t->hello;
	tmatch_place_helper_out_t *out = t->out;

	*h = t->part.hello;
	if (h->magic != TMATCH__HELPER_HELLO_MAGIC || h->version != TMATCH__HELPER_WIRE_VERSION) {
		t->bad = "version";
		return;
	}
	if (h->failure == TMATCH_FAILURE_FAIL)
		out->cfg.failure = TMATCH_FAILURE_FAIL;
	out->cfg.dry_run = admin->dry_run || h->dry_run;
	out->cfg.verbose = h->verbose < 0 ? 0 : h->verbose > 9 ? 9 : h->verbose;
	out->cfg.mpi_pin = h->mpi_pin != 0;
	/* the user may turn the card's variables off, never on */
	out->cfg.nic_env = admin->nic_env && h->nic_env != 0;
	out->user_profile = h->user_profile != 0;
	if (field_ok(h->node_name, sizeof(h->node_name), name_char) && h->node_name[0])
		snprintf(out->node_name, sizeof(out->node_name), "%s", h->node_name);
	if (h->max_time > 0 && isfinite(h->max_time))
		*limit = h->max_time;
	t->stage = HEAD;
}

static void on_head(struct take *t)
{
	const tmatch_place_helper_in_t *in = t->in;
	const tmatch_affinity_tree_t *tree = in->prep->tree;
	struct tmatch__helper_head *h = &t->head;
	int nleaves;

	*h = t->part.head;
	if (h->magic != TMATCH__HELPER_HEAD_MAGIC || h->version != TMATCH__HELPER_WIRE_VERSION) {
		t->bad = "version";
		return;
	}
	if (h->status < TMATCH__HELPER_OUT_PLACED || h->status > TMATCH__HELPER_OUT_LEARN) {
		t->bad = "status";
		return;
	}
	if (h->status != TMATCH__HELPER_OUT_PLACED) {
		t->stage = DONE;
		return;
	}
	/* a GPU section only where the root side loaded the devices for one */
	if (h->gpu_step != 0 && (h->gpu_step != 1 || !tmatch_place_gpu_env_has_gpus(in->gpu_env))) {
		t->bad = "GPU step";
		return;
	}
	/* no more tasks than Slurm's and than the tree has slots: the frame's
	   size is the root side's own, whatever the helper says */
	if (h->task_size != sizeof(struct tmatch__helper_task)) {
		t->bad = "task record";
		return;
	}
	if (!tree || h->ntasks != in->nlocal || h->ntasks < 1 ||
	    h->ntasks > tmatch_affinity_tree_nb_slots(tree)) {
		t->bad = "task count";
		return;
	}
	nleaves = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(tree));
	t->plan = calloc(1, sizeof(*t->plan));
	t->seen = calloc((size_t)nleaves, 1);
	if (!t->plan || !t->seen ||
	    !(t->plan->task = calloc((size_t)in->nlocal, sizeof(*t->plan->task))) ||
	    !(t->plan->allowed = hwloc_bitmap_dup(tmatch_affinity_tree_allowed_cpuset(tree, 0)))) {
		t->nomem = 1;
		t->bad = "out of memory";
		return;
	}
	t->stage = TASKS;
}

/* A position as the helper sent it: levels in range, names [a-z0-9]. */
static int lower_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int pos_ok(const tmatch_affinity_pos_t *p)
{
	if (p->nlevels < 0 || p->nlevels > TMATCH_AFFINITY_MAX_LEVELS)
		return 0;
	for (int l = 0; l < p->nlevels; l++)
		if (!p->level[l].name[0] ||
		    !field_ok(p->level[l].name, sizeof(p->level[l].name), lower_alnum) ||
		    p->level[l].count < 1 || p->level[l].index < 0 ||
		    p->level[l].index >= p->level[l].count || p->level[l].global < 0)
			return 0;
	return 1;
}

/* One task: its record's size and version, its rank Slurm's, its leaf in
   range, allowed and not taken, its position; its CPU set the tree's. */
static void on_task(struct take *t)
{
	const tmatch_affinity_tree_t *tree = t->in->prep->tree;
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(tree);
	const struct tmatch__helper_task *r = &t->part.task;
	tmatch_place_node_t *plan = t->plan;
	tmatch_place_task_t *task = &plan->task[plan->ntasks];
	hwloc_const_bitmap_t set;

	if (r->size != sizeof(*r) || r->version != TMATCH__HELPER_TASK_VERSION) {
		t->bad = "task record";
		return;
	}
	if (r->rank != t->in->ranks[plan->ntasks]) {
		t->bad = "rank";
		return;
	}
	if (r->leaf < 0 || r->leaf >= tmatch_topo_nb_leaves(topo) ||
	    !tmatch_topo_is_allowed(topo, r->leaf) || t->seen[r->leaf]) {
		t->bad = "leaf";
		return;
	}
	if (!pos_ok(&r->pos)) {
		t->bad = "position";
		return;
	}
	set = tmatch_affinity_leaf_cpuset(tree, r->leaf);
	if (!set || !hwloc_bitmap_isincluded(set, plan->allowed)) {
		t->bad = "CPU set";
		return;
	}
	if (!(task->cpuset = hwloc_bitmap_dup(set))) {
		t->nomem = 1;
		t->bad = "out of memory";
		return;
	}
	t->seen[r->leaf] = 1;
	task->rank = r->rank;
	task->leaf = r->leaf;
	task->pos = r->pos;
	task->nic = -1;
	if (++plan->ntasks == t->in->nlocal)
		t->stage = t->head.gpu_step ? GPU : DONE;
}

/* The GPU section's head, against the devices of the root side's own tree:
   the step's GPUs among them, ascending, with their indices; the numbering
   flags 0 or 1; the stride within the step's GPUs. */
static void on_gpu(struct take *t)
{
	const struct tmatch__helper_gpu *g = &t->part.gpu;
	tmatch_affinity_devices_t *dev;
	tmatch_place_gpu_step_t *st;

	if (g->magic != TMATCH__HELPER_GPU_MAGIC || g->version != TMATCH__HELPER_GPU_VERSION) {
		t->bad = "GPU version";
		return;
	}
	if (!(t->dev = dev = tmatch_affinity_tree_devices(t->in->prep->tree, 0, NULL)) ||
	    !(t->gpu_step = st = calloc(1, sizeof(*st)))) {
		t->nomem = 1;
		t->bad = "out of memory";
		return;
	}
	if (dev->ngpus > TMATCH_PLACE_MAX_GPUS || g->ngpus < 1 || g->ngpus > dev->ngpus ||
	    g->node_gpus != dev->ngpus || g->stride < 1 || g->stride > g->ngpus ||
	    (g->relative != 0 && g->relative != 1) ||
	    (g->constrained != 0 && g->constrained != 1) || g->vars > 15u) {
		t->bad = "GPU step";
		return;
	}
	for (int i = 0; i < g->ngpus; i++) {
		if (g->gpu[i] < 0 || g->gpu[i] >= dev->ngpus || (i && g->gpu[i] <= g->gpu[i - 1]) ||
		    g->index[i] != dev->gpu[g->gpu[i]].index) {
			t->bad = "GPU";
			return;
		}
		st->gpu[i] = g->gpu[i];
		st->index[i] = g->index[i];
	}
	st->ngpus = g->ngpus;
	st->relative = g->relative;
	st->constrained = g->constrained;
	st->node_gpus = g->node_gpus;
	st->vars = g->vars;
	t->stride = g->stride;
	t->stage = GPU_TASKS;
}

/* A task's GPUs and card: its record's size and version, 1 .. stride GPUs
   of the step's, a card of the node's (or none). */
static void on_gpu_task(struct take *t)
{
	const struct tmatch__helper_gpu_task *r = &t->part.gpu_task;
	const tmatch_place_gpu_step_t *st = t->gpu_step;
	tmatch_place_task_t *task = &t->plan->task[t->gpu_tasks];

	if (r->size != stage_size(t) || r->version != TMATCH__HELPER_GPU_VERSION) {
		t->bad = "task's GPU record";
		return;
	}
	if (r->ngpus < 1 || r->ngpus > t->stride || r->nic < -1 || r->nic >= t->dev->nnics) {
		t->bad = "task's GPUs";
		return;
	}
	for (int j = 0; j < r->ngpus; j++) {
		int in_step = 0;

		for (int i = 0; i < st->ngpus && !in_step; i++)
			in_step = st->gpu[i] == r->gpu[j];
		if (!in_step) {
			t->bad = "task's GPUs";
			return;
		}
	}
	if (!(task->gpu = calloc((size_t)r->ngpus, sizeof(int)))) {
		t->nomem = 1;
		t->bad = "out of memory";
		return;
	}
	for (int j = 0; j < r->ngpus; j++)
		task->gpu[j] = r->gpu[j];
	task->ngpus = r->ngpus;
	task->nic = r->nic;
	if (++t->gpu_tasks == t->in->nlocal) {
		/* the plan's GPUs refer to the root side's devices */
		t->plan->gpu_step = t->gpu_step;
		t->plan->gpus_per_task = t->stride;
		t->plan->gpu_vendor = t->dev->gpu[st->gpu[0]].vendor;
		t->plan->devices = t->dev;
		t->gpu_step = NULL;
		t->stage = DONE;
	}
}

/* The bytes as they come: each record, once whole, checked and kept. */
static int take_feed(void *arg, const char *data, size_t len, double *limit)
{
	struct take *t = arg;

	while (len && !t->bad) {
		size_t size = stage_size(t), n;

		if (t->stage == DONE) {
			t->bad = "too long";
			break;
		}
		n = size - t->have < len ? size - t->have : len;
		memcpy((char *)&t->part + t->have, data, n);
		t->have += n;
		data += n;
		len -= n;
		if (t->have < size)
			break;
		t->have = 0;
		if (t->stage == HELLO)
			on_hello(t, limit);
		else if (t->stage == HEAD)
			on_head(t);
		else if (t->stage == GPU)
			on_gpu(t);
		else if (t->stage == GPU_TASKS)
			on_gpu_task(t);
		else
			on_task(t);
	}
	return t->bad ? -1 : 0;
}

static void take_start(struct take *t, const tmatch_place_helper_in_t *in,
                       tmatch_place_helper_out_t *out)
{
	memset(t, 0, sizeof(*t));
	t->in = in;
	t->out = out;
	memset(out, 0, sizeof(*out));
	out->cfg = *in->admin;
	snprintf(out->node_name, sizeof(out->node_name), "node %d", in->node_index);
}

static int malformed(tmatch_error_t *err, const char *name, const char *what)
{
	return tmatch_error_set(err, EPROTO, NULL, 0, 0,
	                        "%s: mapping process sent a malformed result (%s)", name, what);
}

/* Which messages each ending may carry. */
static int code_fits(int status, int code)
{
	switch (status) {
	case TMATCH__HELPER_OUT_FAILED:
		return code >= TMATCH__HMSG_VALUE && code <= TMATCH__HMSG_MAP;
	case TMATCH__HELPER_OUT_SKIPPED:
		return code >= TMATCH__HMSG_DEFAULT_SIZE && code <= TMATCH__HMSG_MIN_GAIN &&
		       code != TMATCH__HMSG_LEARN_RECORD;
	case TMATCH__HELPER_OUT_LEARN:
		return code == TMATCH__HMSG_LEARN_RECORD;
	case TMATCH__HELPER_OUT_PLACED:
		return code == TMATCH__HMSG_NONE ||
		       (code >= TMATCH__HMSG_PREDICTED && code <= TMATCH__HMSG_TOPOLOGY_BAD);
	default:
		return code == TMATCH__HMSG_NONE;
	}
}

/* The helper has ended (run_error: how, when not cleanly): the result. */
static int take_end(struct take *t, const tmatch_error_t *run_error, int run_errno,
                    tmatch_error_t *err)
{
	tmatch_place_helper_out_t *out = t->out;
	struct tmatch__helper_head *h = &t->head;
	const char *name = out->node_name;
	tmatch_place_node_t *plan = t->plan;
	char line[sizeof(plan->why)];
	int rc = -1;

	t->plan = NULL;
	free(t->seen);
	t->seen = NULL;
	free(t->gpu_step);
	t->gpu_step = NULL;
	if (t->nomem)
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "%s: out of memory", name);
	else if (t->bad)
		malformed(err, name, t->bad);
	else if (run_error)
		tmatch_error_set(err, run_errno > 0 ? run_errno : EIO, NULL, 0, 0, "%s: %s", name,
		                 run_error->msg);
	else if (t->stage != DONE)
		malformed(err, name, "too short");
	else if (!code_fits(h->status, h->msg.code) ||
	         (h->msg.code &&
	          tmatch__helper_format(&h->msg, name, t->in, line, sizeof(line)) < 0))
		malformed(err, name, "message");
	else
		rc = 0;
	if (rc < 0)
		goto out;
	switch (h->status) {
	case TMATCH__HELPER_OUT_OFF:
		out->cfg.enabled = 0;
		break;
	case TMATCH__HELPER_OUT_FAILED:
		rc = tmatch_error_set(err, h->msg.err_no > 0 ? h->msg.err_no : EINVAL, NULL, 0, 0,
		                      "%s", line);
		break;
	case TMATCH__HELPER_OUT_SKIPPED:
	case TMATCH__HELPER_OUT_LEARN:
		if (!(plan = calloc(1, sizeof(*plan)))) {
			rc = tmatch_error_set(err, ENOMEM, NULL, 0, 0, "%s: out of memory", name);
			break;
		}
		plan->status = TMATCH_PLACE_SKIPPED;
		plan->record = h->status == TMATCH__HELPER_OUT_LEARN;
		plan->why_level =
		    h->why_level == TMATCH_LOG_DEBUG ? TMATCH_LOG_DEBUG : TMATCH_LOG_INFO;
		snprintf(plan->why, sizeof(plan->why), "%s", line);
		break;
	default: /* PLACED */
		plan->status = TMATCH_PLACE_PLACED;
		plan->cost = isfinite(h->cost) ? h->cost : 0;
		plan->cost_packed = isfinite(h->cost_packed) ? h->cost_packed : 0;
		plan->map_seconds =
		    isfinite(h->map_seconds) && h->map_seconds >= 0 ? h->map_seconds : 0;
		/* the search as the policy's limits allow (3600 s at most) */
		if (isfinite(h->search_time) && h->search_time > 0 && h->search_time <= 3600 &&
		    isfinite(h->search_cut_from) && h->search_cut_from <= 3600) {
			plan->search_time = h->search_time;
			if (h->search_cut_from > h->search_time)
				plan->search_cut_from = h->search_cut_from;
		}
		if (field_ok(h->mapper, sizeof(h->mapper), name_char))
			snprintf(plan->mapper, sizeof(plan->mapper), "%s", h->mapper);
		else
			snprintf(plan->mapper, sizeof(plan->mapper), "?");
		if (h->msg.code)
			snprintf(plan->note, sizeof(plan->note), "%s", line);
		break;
	}
	if (rc == 0 && plan) {
		snprintf(plan->node_name, sizeof(plan->node_name), "%s", out->node_name);
		plan->node_index = t->in->node_index;
		plan->node_count = t->in->node_count;
		plan->cpus_per_task = t->in->cpus_per_task > 1 ? t->in->cpus_per_task : 1;
		plan->smt = t->in->prep->smt;
		if (plan->gpu_step) {
			out->devices = t->dev; /* the caller's, after the plan */
			t->dev = NULL;
		}
		out->plan = plan;
		plan = NULL;
	}
out:
	tmatch_affinity_devices_destroy(t->dev);
	t->dev = NULL;
	tmatch_place_node_destroy(plan);
	return rc;
}

int tmatch__helper_take(const tmatch_place_helper_in_t *in, const char *buf, size_t got,
                        size_t chunk, const tmatch_error_t *run_error, int run_errno,
                        tmatch_place_helper_out_t *out, tmatch_error_t *err)
{
	struct take t;
	double limit = 0;

	take_start(&t, in, out);
	if (chunk == 0)
		chunk = got ? got : 1;
	for (size_t at = 0; at < got && !t.bad; at += chunk)
		take_feed(&t, buf + at, got - at < chunk ? got - at : chunk, &limit);
	return take_end(&t, run_error, run_errno, err);
}

static int bad_in(const tmatch_place_helper_in_t *in, const tmatch_place_helper_out_t *out)
{
	return !in || !in->admin || !in->prep || !out || in->helper_fd < 0 || in->nlocal < 0 ||
	       in->nlocal > TMATCH__HELPER_MAX_LOCAL || (in->nlocal > 0 && !in->ranks) ||
	       in->node_count < 1 || in->node_index < 0 || in->ngroups < 0 ||
	       (in->ngroups > 0 && !in->groups);
}

/* The sandbox of the helper program: the admin's limits name its endings
   (the helper sets them on itself). */
static void sandbox_of(const tmatch_place_helper_in_t *in, tmatch__sandbox_t *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->max_time = in->admin->max_map_time;
	sb->max_memory = in->admin->max_map_memory;
	sb->exec_fd = in->helper_fd;
	sb->input_fd = sb->go_fd = -1;
}

struct tmatch_place_helper_started {
	tmatch__child_t child;
	int input_fd; /* the memfd, the helper's fd 4 */
	int go_fd;    /* our end of the socket pair; the helper reads fd 5 */
};

tmatch_place_helper_started_t *tmatch_place_helper_start(int helper_fd, tmatch_error_t *err)
{
	tmatch_place_helper_started_t *h = calloc(1, sizeof(*h));
	tmatch__sandbox_t sb;
	int go[2] = {-1, -1};

	if (!h) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "cannot start the mapping process: %s",
		                 strerror(ENOMEM));
		return NULL;
	}
	/* the word goes over a socket, not a pipe: sent with MSG_NOSIGNAL, to
	   a helper already gone it is EPIPE, not slurmstepd's SIGPIPE */
	h->input_fd = memfd_create("treematch-helper-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (h->input_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) < 0) {
		tmatch_error_set(err, errno, NULL, 0, 0, "cannot start the mapping process: %s: %s",
		                 h->input_fd < 0 ? "memfd" : "socketpair", strerror(errno));
		goto fail;
	}
	memset(&sb, 0, sizeof(sb));
	sb.exec_fd = helper_fd;
	sb.input_fd = h->input_fd;
	sb.go_fd = go[0];
	if (tmatch__sandbox_exec_start(&sb, &h->child, err) < 0)
		goto fail;
	close(go[0]);
	h->go_fd = go[1];
	return h;
fail:
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (h->input_fd >= 0)
		close(h->input_fd);
	free(h);
	return NULL;
}

static void started_close(tmatch_place_helper_started_t *h)
{
	if (h->go_fd >= 0)
		close(h->go_fd);
	if (h->input_fd >= 0)
		close(h->input_fd);
	free(h);
}

pid_t tmatch_place_helper_abandon(tmatch_place_helper_started_t *h)
{
	pid_t pending;

	if (!h)
		return 0;
	pending = tmatch__sandbox_abandon(&h->child);
	started_close(h);
	return pending;
}

/* The helper's input written, its word given (and the socket closed: the
   helper sees no second one), then watched to its end by sb (the deadline
   counts from now). h is spent. */
static int give(tmatch_place_helper_started_t *h, const tmatch_place_helper_in_t *in, int probe,
                tmatch__sandbox_t *sb, tmatch_error_t *err)
{
	int rc = input_write(h->input_fd, in, probe, err);

	if (rc == 0 && send(h->go_fd, "g", 1, MSG_NOSIGNAL) != 1)
		rc = tmatch_error_set(err, errno, NULL, 0, 0,
		                      "cannot start the mapping process: its input: %s",
		                      strerror(errno));
	close(h->go_fd);
	h->go_fd = -1;
	if (rc == 0) {
		rc = tmatch__sandbox_exec_finish(sb, &h->child, err);
	} else {
		pid_t left = tmatch__sandbox_abandon(&h->child);

		if (left > 0 && sb->pending)
			*sb->pending = left;
	}
	started_close(h);
	return rc;
}

/* in->started, or one started now. NULL with err. */
static tmatch_place_helper_started_t *started_of(const tmatch_place_helper_in_t *in,
                                                 tmatch_error_t *err)
{
	return in->started ? in->started : tmatch_place_helper_start(in->helper_fd, err);
}

int tmatch_place_helper_run(const tmatch_place_helper_in_t *in, tmatch_place_helper_out_t *out,
                            tmatch_error_t *err)
{
	tmatch_place_helper_started_t *h;
	tmatch__sandbox_t sb;
	struct take t;
	tmatch_error_t e;
	int run = -1, run_errno = 0;

	if (bad_in(in, out)) {
		tmatch_place_helper_abandon(in ? in->started : NULL);
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_helper_run: invalid argument");
	}
	take_start(&t, in, out);
	tmatch_error_clear(&e);
	if ((h = started_of(in, &e))) {
		sandbox_of(in, &sb);
		sb.feed = take_feed;
		sb.feed_arg = &t;
		sb.pending = &out->pending;
		run = give(h, in, 0, &sb, &e);
	}
	if (run < 0)
		run_errno = errno;
	return take_end(&t, run < 0 ? &e : NULL, run_errno, err);
}

/* The probe's report, as it comes. */
struct report {
	char *buf;
	size_t cap, *got;
};

static int report_feed(void *arg, const char *data, size_t len, double *limit)
{
	struct report *r = arg;

	(void)limit;
	if (len > r->cap - *r->got)
		return -1;
	memcpy(r->buf + *r->got, data, len);
	*r->got += len;
	return 0;
}

int tmatch__helper_probe(const tmatch_place_helper_in_t *in, char *buf, size_t cap, size_t *got,
                         tmatch_error_t *err)
{
	tmatch_place_helper_out_t out;
	tmatch_place_helper_started_t *h;
	tmatch__sandbox_t sb;
	struct report r = {buf, cap, got};

	*got = 0;
	if (bad_in(in, &out) || !buf) {
		tmatch_place_helper_abandon(in ? in->started : NULL);
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch__helper_probe: invalid argument");
	}
	if (!(h = started_of(in, err)))
		return -1;
	sandbox_of(in, &sb);
	sb.feed = report_feed;
	sb.feed_arg = &r;
	return give(h, in, 1, &sb, err);
}
