/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement_private.h - internals shared by the files of placement/. Tests
 * may include it; nothing outside placement/ and tests/ does.
 */
#ifndef TMATCH_PLACEMENT_PRIVATE_H
#define TMATCH_PLACEMENT_PRIVATE_H

#include "placement/gpu.h"
#include "placement/helper.h"
#include "conf/plugstack.h"
#include "treematch/treematch.h"
#include "treematch/internal.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * isolate.c: tmatch_map_compute(comm, topo, mopts) (or `compute`, when not
 * NULL: the tests' stand-in for a mapper that hangs or crashes) run in a
 * forked child, which is how the plugin maps on a node (slurmstepd must survive
 * whatever the mapping does). The child gets RLIMIT_AS = its current address
 * space + max_memory (0 = no memory limit), RLIMIT_CPU = ceil(max_time) + 1 s,
 * default signal dispositions, no stdio; the parent SIGKILLs it when
 * max_time seconds of wall time pass (0 = no time limit), always reaps it, and checks
 * every byte it sends back (length, then tmatch_map_validate).
 * On success leaf_of[tmatch_comm_order(comm)] is filled and 0 returned.
 * On failure -1, leaf_of untouched, err holds one line:
 *   ETIME   "mapping exceeded max_map_time=2 s, killed" (or its CPU limit)
 *   ENOMEM  "mapping ran out of memory (max_map_memory=1G)"
 *   EIO     "mapping process died with signal 11 (Segmentation fault)"
 *   EPROTO  the child sent nothing or something malformed
 *   else    the mapper's own error (errno and message from the child).
 */
typedef int (*tmatch__place_compute_fn)(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                                        const tmatch_map_opts_t *opts, int *leaf_of_rank,
                                        tmatch_error_t *err);
int tmatch__place_isolate_map(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                              const tmatch_map_opts_t *mopts, double max_time, size_t max_memory,
                              tmatch__place_compute_fn compute, int *leaf_of, tmatch_error_t *err);

/*
 * sandbox.c: untrusted work in a child that cannot hurt the caller
 * (placement/sandbox.c says what the child gives up, in which order).
 *
 * tmatch__sandbox_run: body(arg, fd) in a forked child, which writes its
 * result on fd; tmatch__sandbox_exec: the program open on sb->exec_fd (the
 * plugin's helper), its result pipe on fd 3 and sb->input_fd on fd 4, an
 * empty environment (it confines itself: tmatch__sandbox_confine). The
 * bytes go to sb->feed as they come, or (run, no feed) into buf, at most
 * max_result of them (*got), unchecked. The child is watched for its whole
 * life against one deadline, SIGKILLed at it (or when the bytes are
 * refused), and its end waited for at most sb->grace seconds more (0 = 2
 * s): a child in uninterruptible sleep is then left in *sb->pending (> 0)
 * for tmatch__sandbox_reap. 0 when the child exited normally (check the bytes),
 * else -1 and one line in err:
 *   ETIME   "mapping exceeded max_map_time=2 s, killed" (or its CPU limit,
 *           or "... did not end within 2 s of SIGKILL ...")
 *   ENOMEM  "mapping ran out of memory (max_map_memory=1G)"
 *   EIO     "mapping process died with signal 11 (Segmentation fault)"
 *   EPERM   the child could not give up what it must, or its filter killed it
 *   EPROTO  too many bytes, bytes the feed refused, or an exit status
 *           without a result
 */
typedef struct tmatch__sandbox {
	int become;          /* 1: become uid/gid/groups for good (checked) */
	uid_t uid;           /* the job's user */
	gid_t gid;           /* its primary group */
	const gid_t *groups; /* its supplementary groups */
	int ngroups;
	int filter;        /* 1: no file writes, PR_SET_NO_NEW_PRIVS, seccomp allow-list */
	double max_time;   /* wall seconds, 0 = none (then CPU unlimited too) */
	size_t max_memory; /* address space the child may add, 0 = none */
	size_t max_result; /* bytes, when there is no feed */
	/* Optional: takes the bytes as they arrive; 0 to go on, -1 to refuse
	   them (the child is killed, EPROTO). *limit (0 as called): a
	   wall-time limit counted from now that may only bring the deadline
	   closer. */
	int (*feed)(void *feed_arg, const char *data, size_t len, double *limit);
	void *feed_arg;
	/* Names the child in messages ("XML reader"); NULL = "mapping", with
	   the limits named by the admin's keys (max_map_time=...). */
	const char *what;
	int exec_fd;     /* tmatch__sandbox_exec: the program to run */
	int input_fd;    /* tmatch__sandbox_exec: its fd 4, -1 = none */
	int go_fd;       /* tmatch__sandbox_exec: its fd 5 (the word to read fd 4), -1 = none */
	const char *cwd; /* the directory to enter once it is the user, NULL = stay */
	double grace;    /* seconds to wait for the end after SIGKILL; 0 = 2 */
	/* Tests: how SIGKILL is sent (a stand-in that does nothing is a child
	   that cannot die yet); NULL = tmatch__sandbox_send_kill. */
	int (*send_kill)(pid_t pid, int pidfd);
	/* Optional: where a killed child that did not end goes (else 0). */
	pid_t *pending;
} tmatch__sandbox_t;
typedef void (*tmatch__sandbox_fn)(void *arg, int fd);
int tmatch__sandbox_run(const tmatch__sandbox_t *sb, tmatch__sandbox_fn body, void *arg, char *buf,
                        size_t *got, tmatch_error_t *err);
int tmatch__sandbox_exec(const tmatch__sandbox_t *sb, tmatch_error_t *err);
/*
 * tmatch__sandbox_exec in two halves, for a program started ahead of its
 * input (the plugin's helper, at slurmstepd's init_post_opt): _start
 * spawns it (0, or -1 with err); _finish watches it from then on, against
 * the deadline counted from its call, and ends as tmatch__sandbox_exec
 * (c is spent either way). A child never finished is _abandoned: killed,
 * its end waited for at most 2 s; its pid when it did not end (for
 * tmatch__sandbox_reap), else 0.
 */
typedef struct tmatch__child {
	pid_t pid; /* 0: none */
	int pidfd; /* -1 before Linux 5.3 */
	int rfd;   /* the result pipe's read end */
} tmatch__child_t;
int tmatch__sandbox_exec_start(const tmatch__sandbox_t *sb, tmatch__child_t *c,
                               tmatch_error_t *err);
int tmatch__sandbox_exec_finish(const tmatch__sandbox_t *sb, tmatch__child_t *c,
                                tmatch_error_t *err);
pid_t tmatch__sandbox_abandon(tmatch__child_t *c);
/* SIGKILL through the pidfd when there is one, else by pid. */
int tmatch__sandbox_send_kill(pid_t pid, int pidfd);
/* Reaps pid if it has ended; never waits. */
void tmatch__sandbox_reap(pid_t pid);

/* Exit codes of a child that could not set itself up. */
enum {
	TMATCH__SANDBOX_EXIT_CWD = 116,     /* could not enter the job's working directory */
	TMATCH__SANDBOX_EXIT_INPUT = 117,   /* the helper could not read its input */
	TMATCH__SANDBOX_EXIT_OOM = 118,     /* could not set its oom_score_adj */
	TMATCH__SANDBOX_EXIT_EXEC = 119,    /* the helper program could not be started */
	TMATCH__SANDBOX_EXIT_IDS = 120,     /* could not become the user */
	TMATCH__SANDBOX_EXIT_FDS = 121,     /* could not arrange its descriptors */
	TMATCH__SANDBOX_EXIT_LIMITS = 122,  /* could not set its rlimits */
	TMATCH__SANDBOX_EXIT_FILTER = 123,  /* could not install the seccomp filter */
	TMATCH__SANDBOX_EXIT_WRITE = 124,   /* could not write its result */
	TMATCH__SANDBOX_EXIT_NOSPACE = 125, /* could not set the address-space limit */
	TMATCH__SANDBOX_EXIT_PARENT = 126,  /* its parent was gone */
};

/*
 * In the child: stdio on /dev/null and keep[i] on fd 3 + i (at most 4),
 * every other descriptor closed; async-signal-safe. Then confine: default
 * signals, oom_score_adj back to 0, the user for good (sb->become),
 * PR_SET_PDEATHSIG with getppid() == parent checked, rlimits (the address
 * space counted from base), the filter. 0, or the TMATCH__SANDBOX_EXIT_*
 * code of the step that failed.
 */
int tmatch__sandbox_fds(const int *keep, int nkeep);
int tmatch__sandbox_confine(const tmatch__sandbox_t *sb, pid_t parent, size_t base);
/* oom_score_adj (path: NULL = /proc/self/oom_score_adj; tests give a
   stand-in) raised to 0 when below, as Slurm sets its tasks': 0, or -1. */
int tmatch__sandbox_oom_reset(const char *path);

/*
 * The seccomp allow-list as a libseccomp filter for `arch` (an SCMP_ARCH_*
 * value, 0 = this machine's), signals allowed to `self` only; *ctx, free
 * with tmatch__sandbox_filter_free. Tests export it for other
 * architectures and run it.
 */
int tmatch__sandbox_filter_new(uint32_t arch, pid_t self, void **ctx);
/* The helper, while it waits for its input: its own filter built now, so
   that confining it later only loads it (built then when this failed). */
void tmatch__sandbox_filter_ahead(void);
void tmatch__sandbox_filter_free(void *ctx);

/* Bytes of address space the calling process maps now (0 if unknown). */
size_t tmatch__address_space_now(void);

/* "1G", "64M", "300K" or bytes, as an admin writes max_map_memory. */
void tmatch__format_size(size_t bytes, char *buf, size_t len);

/* CLOCK_MONOTONIC in seconds. */
double tmatch__place_now(void);

/*
 * helper.c: the wire between the plugin's root side and its helper
 * program (the format is described in helper.c).
 *
 * Root side to helper: one sealed memfd, the helper's fd 4: struct
 * tmatch__helper_input, the groups, the ranks, then tagged strings; then
 * one byte on fd 5 (a Unix socket) once fd 4 is written and sealed.
 */
#define TMATCH__HELPER_INPUT_MAGIC  0x314a4d54u /* "TMJ1" */
#define TMATCH__HELPER_HELLO_MAGIC  0x31484d54u /* "TMH1" */
#define TMATCH__HELPER_HEAD_MAGIC   0x31524d54u /* "TMR1" */
#define TMATCH__HELPER_WIRE_VERSION 6u
#define TMATCH__HELPER_TASK_VERSION 1u
#define TMATCH__HELPER_MAX_LOCAL    65536 /* tasks on one node the root side will read back */
#define TMATCH__HELPER_MAX_INPUT    ((size_t)96 << 20) /* bytes of input the helper takes */
#define TMATCH__HELPER_INPUT_FD     4
#define TMATCH__HELPER_GO_FD        5 /* one byte: fd 4 is written; EOF: never will be */

struct tmatch__helper_input {
	uint32_t magic, version;
	uint32_t size;        /* sizeof(struct tmatch__helper_input) */
	uint32_t config_size; /* sizeof(tmatch_config_t) */
	char build[32];       /* TMATCH_VERSION: plugin and helper of one build */
	int32_t parent;       /* the root side's pid: the helper's parent */
	uint32_t uid, gid;    /* S_JOB_UID, S_JOB_GID */
	int32_t ngroups;      /* gid_t groups[ngroups] follow */
	int32_t node_index, node_count, nlocal, ntasks_total, cpus_per_task;
	uint32_t step_id;
	uint64_t job_id;
	int32_t probe; /* tests: the helper reports on itself instead */
	/* the root side's node tree, which the helper's must equal */
	int32_t has_tree, smt, whole;
	uint64_t node_sig;
	tmatch_config_t admin; /* plugstack.conf and the admin file */
	                       /* int32_t ranks[nlocal], then the strings */
};

/* The strings: uint32_t tag, uint32_t length (with the final NUL), bytes. */
enum {
	TMATCH__HIN_END = 0,
	TMATCH__HIN_USER_VALUE = 1, /* --treematch as received */
	TMATCH__HIN_NODELIST,       /* the job's SLURM_STEP_NODELIST (SLURM_NODELIST) */
	TMATCH__HIN_PLAN,           /* the job's TREEMATCH_PLAN */
	TMATCH__HIN_LEARN,          /* the job's TREEMATCH_LEARN: srun's learn decision
	                               (copied by the root side: the helper has no
	                               environment of its own) */
	TMATCH__HIN_STEP_CORES,     /* S_STEP_ALLOC_CORES */
	TMATCH__HIN_JOB_CORES,      /* S_JOB_ALLOC_CORES */
	TMATCH__HIN_NODE_XML,       /* hwloc's XML of the node, as the root side loaded it */
	TMATCH__HIN_TOPOLOGY_CONF,  /* topology.yaml's or topology.conf's text */
	TMATCH__HIN_TOPOLOGY_FILE,  /* its path (names it, tells the two apart) */
	TMATCH__HIN_SLURM_CONF,     /* slurm.conf's text (its Topology= keys) */
	TMATCH__HIN_PARTITION,      /* the job's SLURM_JOB_PARTITION */
	TMATCH__HIN_STEP_GPUS,      /* a GPU step: the job's SLURM_STEP_GPUS, */
	TMATCH__HIN_CUDA,           /* CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, */
	TMATCH__HIN_ROCR,           /* ZE_AFFINITY_MASK, GPU_DEVICE_ORDINAL */
	TMATCH__HIN_ZE,
	TMATCH__HIN_ORDINAL,
	TMATCH__HIN_CGROUP_CONF, /* the admin's cgroup.conf (read at init) */
	TMATCH__HIN_CWD,         /* the root side's working directory: the job's */
	TMATCH__HIN_COUNT
};

/*
 * Helper to root side, on the pipe (fd 3): a hello as soon as the user's
 * value is merged, a head, and when placed one record per local task; a
 * GPU step placed then has a GPU section: its head, and one record per
 * local task.
 * No free text: every message is a code whose fields the root side
 * checks and formats (tmatch__helper_format).
 */
enum {
	TMATCH__HELPER_OUT_PLACED = 0,
	TMATCH__HELPER_OUT_SKIPPED = 1,
	TMATCH__HELPER_OUT_OFF = 2,
	TMATCH__HELPER_OUT_FAILED = 3,
	TMATCH__HELPER_OUT_LEARN = 4, /* learn mode, nothing stored yet: record this run */
};

struct tmatch__helper_hello {
	uint32_t magic, version;
	int32_t failure, dry_run, verbose, mpi_pin, user_profile, nic_env;
	double max_time;
	char node_name[64];
};

/* The messages: what each code says and which fields it fills. */
enum tmatch__helper_code {
	TMATCH__HMSG_NONE = 0,
	/* FAILED */
	TMATCH__HMSG_VALUE,         /* the --treematch value: num[0] its column */
	TMATCH__HMSG_NOMEM,         /* out of memory */
	TMATCH__HMSG_PROFILE_OPEN,  /* file: the profile, err_no */
	TMATCH__HMSG_PROFILE_BAD,   /* file, num[0] line, num[1] column, err_no */
	TMATCH__HMSG_PROFILE_RANKS, /* num[0] the profile's ranks, num[1] the step's tasks */
	TMATCH__HMSG_SLOTS,         /* num[0] tasks, num[1] slots, num[2] CPUs per slot */
	TMATCH__HMSG_NO_TREE,       /* the root side's tree error says it */
	TMATCH__HMSG_TREE_DIFFERS,  /* the helper's node tree is not the root side's */
	TMATCH__HMSG_PLAN_NODELIST, /* file: the plan; the node list is unknown */
	TMATCH__HMSG_PLAN_BAD,      /* file, err_no (ENOENT: no slice for this node) */
	TMATCH__HMSG_PLAN_PROFILE,  /* file: the profile, err_no */
	TMATCH__HMSG_PLAN_OTHER,    /* file, num[0] which binding, num[1] plan's, num[2] step's */
	TMATCH__HMSG_GPU_UNKNOWN,   /* num[0] a GPU Slurm names, num[1] the node's, name: backend */
	TMATCH__HMSG_MAP,           /* the mapping failed: err_no */
	/* SKIPPED */
	TMATCH__HMSG_DEFAULT_SIZE,      /* num[0] the default profile's ranks, num[1] tasks */
	TMATCH__HMSG_NOT_WHOLE,         /* exclusive_only, the job lacks the whole node */
	TMATCH__HMSG_LEARN_RECORD,      /* (LEARN) srun decided: the step records */
	TMATCH__HMSG_LEARN_NONE,        /* srun decided: not learned (srun said why) */
	TMATCH__HMSG_LEARN_NO_DECISION, /* no decision of srun's for this step: err_no */
	TMATCH__HMSG_LEARN_GONE,        /* file: srun's entry, gone, replaced or damaged here */
	TMATCH__HMSG_MIN_GAIN,          /* val[0] the gain, num[0] min_gain */
	/* PLACED: the verbose note */
	TMATCH__HMSG_PREDICTED,    /* file, name: mapper, val[0] mapped, val[1] packed */
	TMATCH__HMSG_PREDICT_NONE, /* file, name: mapper */
	TMATCH__HMSG_PREDICT_BAD,  /* file, num[0] line, err_no */
	TMATCH__HMSG_TOPOLOGY_BAD, /* file: the network's, num[0] line, num[1] column, err_no */
	TMATCH__HMSG_COUNT
};

struct tmatch__helper_msg {
	int32_t code;   /* enum tmatch__helper_code */
	int32_t err_no; /* an errno value, or 0 */
	int64_t num[3];
	double val[2];
	char file[128]; /* a path, [A-Za-z0-9._+/-] ('?' for others), long ones cut */
	char name[64];  /* a mapper's name, [A-Za-z0-9._+-] */
};

struct tmatch__helper_head {
	uint32_t magic, version;
	int32_t status, why_level, ntasks;
	uint32_t task_size; /* bytes of each task record: sizeof(struct tmatch__helper_task) */
	int32_t gpu_step;   /* 1: a GPU section follows the tasks */
	double cost, cost_packed, map_seconds;
	double search_time, search_cut_from; /* tmatch_place_node_t's */
	char mapper[64];
	struct tmatch__helper_msg msg; /* FAILED, SKIPPED: why; PLACED: a note, or none */
};

/* One local task; versioned with its length, so that fields can be added. */
struct tmatch__helper_task {
	uint32_t size;    /* sizeof(struct tmatch__helper_task) */
	uint32_t version; /* TMATCH__HELPER_TASK_VERSION */
	int32_t rank, leaf;
	tmatch_affinity_pos_t pos;
};

/*
 * A GPU step placed: after the task records, the GPU section's head (the
 * step's GPUs as positions in the node's devices and their indices, how
 * Slurm numbers them, the most GPUs a task holds), then one record per
 * local task of offsetof(gpu) + stride * 4 bytes: its GPU count, its card
 * (-1: none) and its GPUs (positions in the devices; unused words 0).
 */
#define TMATCH__HELPER_GPU_MAGIC   0x31474d54u /* "TMG1" */
#define TMATCH__HELPER_GPU_VERSION 1u
struct tmatch__helper_gpu {
	uint32_t magic, version;
	int32_t ngpus, relative, constrained, stride, node_gpus;
	uint32_t vars;
	int32_t gpu[TMATCH_PLACE_MAX_GPUS];
	int32_t index[TMATCH_PLACE_MAX_GPUS];
};

struct tmatch__helper_gpu_task {
	uint32_t size;    /* offsetof(gpu) + stride * sizeof(int32_t) */
	uint32_t version; /* TMATCH__HELPER_GPU_VERSION */
	int32_t ngpus, nic;
	int32_t gpu[TMATCH_PLACE_MAX_GPUS]; /* stride of them are sent */
};

/*
 * The root side's reading, as the bytes come (tmatch_place_helper_run
 * feeds it from the pipe; tests and the fuzzer feed it forged bytes, in
 * chunks of `chunk` bytes, 0 = all at once): the hello, the head, then
 * each task checked and kept the moment it arrives; nothing is buffered
 * beyond one record. run_error (and run_errno), when not NULL, is why the
 * sandbox ended it (the hello, if any, still names the node and the user's
 * policy). 0 or -1 as tmatch_place_helper_run.
 */
int tmatch__helper_take(const tmatch_place_helper_in_t *in, const char *buf, size_t got,
                        size_t chunk, const tmatch_error_t *run_error, int run_errno,
                        tmatch_place_helper_out_t *out, tmatch_error_t *err);

/* The line a message says, from its code and checked fields only ("n0" is
   the node's name): 0, or -1 when a field is out of its bounds. */
int tmatch__helper_format(const struct tmatch__helper_msg *m, const char *node,
                          const tmatch_place_helper_in_t *in, char *line, size_t len);

/* helper.c, in the helper: a path into a message's file field. */
void tmatch__helper_msg_file(struct tmatch__helper_msg *m, const char *path);

/*
 * helper_job.c: what the helper does as the user once confined, in order
 * (the user's value, the plan or the profile, the learn store, the node's
 * decision, min_gain, the prediction), sending its hello, head and tasks on
 * fd. in->prep is its own node tree, made from the root side's machine;
 * differs: it is not the root side's tree (then it fails, after its
 * hello). Never returns.
 */
__attribute__((noreturn)) void tmatch__helper_job(const tmatch_place_helper_in_t *in, int differs,
                                                  int fd);

/* helper.c: bytes onto the pipe (the helper ends with
   TMATCH__SANDBOX_EXIT_WRITE when it cannot); send_head ends the helper
   unless the head says placed (the tasks follow). */
void tmatch__helper_send(int fd, const void *what, size_t len);
void tmatch__helper_send_head(int fd, struct tmatch__helper_head *h);

/* Tests: run the helper with its input's probe set; its report in buf. */
int tmatch__helper_probe(const tmatch_place_helper_in_t *in, char *buf, size_t cap, size_t *got,
                         tmatch_error_t *err);

#endif /* TMATCH_PLACEMENT_PRIVATE_H */
