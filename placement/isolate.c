/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate.c - the node's mapping runs in a forked child with hard limits
 * (see tmatch__place_isolate_map in placement_private.h).
 *
 * Why: the plugin maps inside slurmstepd, a daemon, on a profile the user
 * wrote. Within the limits a mapping may take ~20 s CPU and ~300 MB, and
 * the bisection mapper calls METIS, which touches process-global state
 * (srand/random, swaps SIGABRT/SIGTERM handlers during each call). In a
 * child none of this reaches slurmstepd: its memory is capped with
 * RLIMIT_AS, its CPU with RLIMIT_CPU, its wall time by the parent's poll()
 * deadline (then SIGKILL), and a crash kills only the child.
 *
 * The child only computes and writes; it never logs (slurmstepd's logging
 * takes locks another thread may have held at fork time) and leaves with
 * _exit. glibc's fork re-initialises the malloc locks in the child, so the
 * mapping core may allocate.
 *
 * Wire format on the pipe, child to parent, native byte order (same host):
 *   struct frame_head { magic, status, len }  then len payload bytes:
 *   status 0: len = n * sizeof(int), the leaf of each rank;
 *   status errno (> 0): len = sizeof(tmatch_error_t), the mapper's message.
 * The parent trusts none of it: magic, sizes, NUL-termination of the
 * message, n and every leaf (tmatch_map_validate) are checked.
 */
#include "placement/placement_private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAGIC 0x544d4931u /* "TMI1" */

struct frame_head {
	uint32_t magic;
	int32_t status; /* 0 = leaves follow, else errno and a tmatch_error_t */
	uint32_t len;   /* payload bytes */
};

double tmatch__place_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "1G", "64M", "300K" or bytes: as the admin would write max_map_memory. */
static void format_size(size_t bytes, char *buf, size_t len)
{
	static const char unit[] = "GMK";
	for (int i = 0; i < 3; i++) {
		size_t mult = (size_t)1 << (10 * (3 - i));

		if (bytes >= mult && bytes % mult == 0) {
			snprintf(buf, len, "%zu%c", bytes / mult, unit[i]);
			return;
		}
	}
	snprintf(buf, len, "%zu", bytes);
}

/* ---- child --------------------------------------------------------------- */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Bytes of address space the process has now (0 if unknown). */
static size_t address_space_now(void)
{
	char buf[128];
	unsigned long pages = 0;
	ssize_t r;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = '\0';
	if (sscanf(buf, "%lu", &pages) != 1)
		return 0;
	return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Everything the child does; never returns. */
static void child_run(int wfd, const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                      const tmatch_map_opts_t *mopts, tmatch__place_compute_fn compute, int n,
                      double max_time, size_t max_memory)
{
	struct sigaction sa;
	sigset_t all;
	struct rlimit rl;
	struct frame_head h;
	tmatch_error_t e;
	int *leaf_of = NULL, fd;

	/* Dies with slurmstepd. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	/* No stdio: nothing the mapper might print reaches the step's I/O. */
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	rl.rlim_cur = rl.rlim_max = 0;
	setrlimit(RLIMIT_CORE, &rl);
	/* CPU: the time limit rounded up, plus one second (the parent's wall
	   clock normally strikes first; this one holds if it cannot). */
	if (max_time > 0) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)ceil(max_time) + 1;
		setrlimit(RLIMIT_CPU, &rl);
	}
	/* Memory: what the process already maps (slurmstepd's, inherited) plus
	   max_map_memory for the mapping. */
	if (max_memory > 0) {
		size_t base = address_space_now();

		rl.rlim_cur = rl.rlim_max =
		    base <= SIZE_MAX - max_memory ? (rlim_t)(base + max_memory) : RLIM_INFINITY;
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(125);
	}
	tmatch_error_clear(&e);
	memset(&h, 0, sizeof(h));
	h.magic = FRAME_MAGIC;
	leaf_of = malloc((size_t)n * sizeof(*leaf_of));
	if (!leaf_of) {
		h.status = ENOMEM;
		snprintf(e.msg, sizeof(e.msg), "out of memory");
	} else if (compute(comm, topo, mopts, leaf_of, &e) < 0) {
		h.status = errno > 0 ? errno : EIO;
		if (!e.msg[0])
			snprintf(e.msg, sizeof(e.msg), "mapping failed: %s", strerror(h.status));
	}
	if (h.status == 0) {
		h.len = (uint32_t)((size_t)n * sizeof(*leaf_of));
		if (write_all(wfd, &h, sizeof(h)) < 0 || write_all(wfd, leaf_of, h.len) < 0)
			_exit(124);
	} else {
		h.len = (uint32_t)sizeof(e);
		if (write_all(wfd, &h, sizeof(h)) < 0 || write_all(wfd, &e, sizeof(e)) < 0)
			_exit(124);
	}
	_exit(0);
}

/* ---- parent -------------------------------------------------------------- */

/* Waits for pid, retrying on EINTR. 0 and *status, or -1 (ECHILD: reaped
   elsewhere). */
static int reap(pid_t pid, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, 0);

		if (r == pid)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		return -1;
	}
}

int tmatch__place_isolate_map(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                              const tmatch_map_opts_t *mopts, double max_time, size_t max_memory,
                              tmatch__place_compute_fn compute, int *leaf_of, tmatch_error_t *err)
{
	struct frame_head h;
	size_t cap, got = 0, want;
	char *buf = NULL, mem[32];
	/* killed: why the child was stopped: 1 deadline, 2 poll or read error,
	   3 more bytes than any valid frame. */
	int pfd[2] = {-1, -1}, n, status = 0, killed = 0, rc = -1, eof = 0, saved;
	pid_t pid = -1;
	double deadline;

	if (!comm || !topo || !mopts || !leaf_of || !(max_time >= 0) || isinf(max_time)) {
		tmatch_error_set(err, 0, NULL, 0, 0, "tmatch__place_isolate_map: invalid argument");
		errno = EINVAL;
		return -1;
	}
	n = tmatch_comm_order(comm);
	if (n < 1) {
		tmatch_error_set(err, 0, NULL, 0, 0,
		                 "tmatch__place_isolate_map: empty communication matrix");
		errno = EINVAL;
		return -1;
	}
	format_size(max_memory, mem, sizeof(mem));
	/* The frame is at most a header and the larger of the two payloads. */
	want = (size_t)n * sizeof(int);
	cap = sizeof(h) + (want > sizeof(tmatch_error_t) ? want : sizeof(tmatch_error_t));
	buf = malloc(cap);
	if (!buf) {
		tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		saved = errno;
		tmatch_error_set(err, 0, NULL, 0, 0, "cannot start the mapping process: pipe: %s",
		                 strerror(saved));
		errno = saved;
		goto out;
	}
	deadline = max_time > 0 ? tmatch__place_now() + max_time : 0;
	pid = fork();
	if (pid < 0) {
		saved = errno;
		tmatch_error_set(err, 0, NULL, 0, 0, "cannot start the mapping process: fork: %s",
		                 strerror(saved));
		errno = saved;
		goto out;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_run(pfd[1], comm, topo, mopts, compute ? compute : tmatch_map_compute, n,
		          max_time, max_memory);
	}
	close(pfd[1]);
	pfd[1] = -1;

	/* Read to EOF, at most cap bytes, before the deadline. */
	while (!eof) {
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		double left = deadline > 0 ? deadline - tmatch__place_now() : 0;
		int ms = -1, pr;

		if (deadline > 0 && left <= 0) {
			killed = 1;
			break;
		}
		if (deadline > 0)
			ms = left * 1e3 > INT_MAX ? INT_MAX : (int)ceil(left * 1e3);
		pr = poll(&p, 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			killed = 2;
			break;
		}
		if (pr == 0)
			continue; /* the deadline check above decides */
		for (;;) {
			char extra;
			ssize_t r = got < cap ? read(pfd[0], buf + got, cap - got)
			                      : read(pfd[0], &extra, 1);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				killed = 2;
				break;
			}
			if (r == 0) {
				eof = 1;
				break;
			}
			if (got >= cap) {
				killed = 3; /* more than any valid frame */
				break;
			}
			got += (size_t)r;
			break;
		}
		if (killed)
			break;
	}
	if (killed)
		kill(pid, SIGKILL);
	if (reap(pid, &status) < 0)
		status = -1; /* reaped by someone else: judge by the frame alone */
	pid = -1;

	if (killed == 1) {
		tmatch_error_set(err, 0, NULL, 0, 0, "mapping exceeded max_map_time=%g s, killed",
		                 max_time);
		errno = ETIME;
		goto out;
	}
	if (status != -1 && WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (sig == SIGXCPU) {
			tmatch_error_set(
			    err, 0, NULL, 0, 0,
			    "mapping exceeded its CPU limit (max_map_time=%g s), killed", max_time);
			errno = ETIME;
		} else {
			tmatch_error_set(err, 0, NULL, 0, 0,
			                 "mapping process died with signal %d (%s)", sig,
			                 strsignal(sig));
			errno = EIO;
		}
		goto out;
	}
	if (killed) {
		tmatch_error_set(err, 0, NULL, 0, 0, "mapping process sent a malformed result (%s)",
		                 killed == 3 ? "too long" : "read error");
		errno = EPROTO;
		goto out;
	}
	if (got < sizeof(h)) {
		if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0)
			tmatch_error_set(err, 0, NULL, 0, 0,
			                 "mapping process exited with status %d without a result",
			                 WEXITSTATUS(status));
		else
			tmatch_error_set(err, 0, NULL, 0, 0,
			                 "mapping process ended without a result");
		errno = EPROTO;
		goto out;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != FRAME_MAGIC || h.len != got - sizeof(h) ||
	    (h.status == 0 && h.len != want) ||
	    (h.status != 0 && (h.len != sizeof(tmatch_error_t) || h.status < 0))) {
		tmatch_error_set(err, 0, NULL, 0, 0, "mapping process sent a malformed result");
		errno = EPROTO;
		goto out;
	}
	if (h.status != 0) {
		tmatch_error_t e;

		memcpy(&e, buf + sizeof(h), sizeof(e));
		e.file[sizeof(e.file) - 1] = '\0';
		e.msg[sizeof(e.msg) - 1] = '\0';
		if (h.status == ENOMEM) {
			tmatch_error_set(err, 0, NULL, 0, 0,
			                 "mapping ran out of memory (max_map_memory=%s)", mem);
			errno = ENOMEM;
			goto out;
		}
		if (err) {
			*err = e;
			if (!err->msg[0])
				snprintf(err->msg, sizeof(err->msg), "mapping failed");
		}
		errno = h.status < 4096 ? h.status : EIO;
		goto out;
	}
	/* Leaves: in range, allowed, distinct. */
	if (tmatch_map_validate(topo, (const int *)(const void *)(buf + sizeof(h)), n, err) < 0) {
		saved = errno;
		if (err) {
			char m[sizeof(err->msg)];

			snprintf(m, sizeof(m), "mapping process sent an invalid placement: %.400s",
			         err->msg);
			memcpy(err->msg, m, sizeof(m));
		}
		errno = saved ? saved : EPROTO;
		goto out;
	}
	memcpy(leaf_of, buf + sizeof(h), want);
	rc = 0;
out:
	saved = errno;
	if (pid > 0) {
		kill(pid, SIGKILL);
		reap(pid, &status);
	}
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	free(buf);
	errno = saved;
	return rc;
}
