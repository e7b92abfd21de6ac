/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sandbox.c - run a function in a forked child that cannot hurt its parent
 * (see tmatch__sandbox_run in placement_private.h).
 *
 * The plugin's parent is slurmstepd, partly root. Everything the job's
 * user wrote (the --treematch value, the profile, the job's environment)
 * is parsed in such a child, never in slurmstepd, as OpenSSH parses the
 * network in its unprivileged child. The child, in this order:
 *   1. dies with its parent (PR_SET_PDEATHSIG), default signal handlers;
 *   2. has /dev/null as stdio, its result pipe as fd 3, nothing else open;
 *   3. becomes the job's user for good: supplementary groups, then real,
 *      effective and saved gid and uid, each read back with getresgid and
 *      getresuid; when the user is not root, getting uid 0 back must fail;
 *      not dumpable, so the user's other processes cannot ptrace it;
 *   4. rlimits: no core, CPU = time limit + 1 s, address space = what it
 *      maps now + the memory limit, no file writes, 16 descriptors;
 *   5. PR_SET_NO_NEW_PRIVS and a seccomp allow-list (below): files may be
 *      opened for reading only; no exec, fork, socket, ptrace, kill, ioctl,
 *      mount...; anything else kills it (SIGSYS);
 *   6. runs the function, which writes its result on fd 3, then _exit(0).
 * A step that fails exits with a code from enum below before running the
 * function, and the parent says which. The child never logs: slurmstepd's
 * logging takes locks another thread may have held at fork time.
 *
 * The parent reads at most max_result bytes until EOF, SIGKILLs the child
 * at the wall-clock deadline or when it sends too much, always reaps it,
 * and hands the bytes back unread: the caller checks every one of them.
 */
#include "placement/placement_private.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit codes of a child that could not set itself up. */
enum {
	EXIT_IDS = 120,     /* could not become the user */
	EXIT_FDS = 121,     /* could not arrange its descriptors */
	EXIT_LIMITS = 122,  /* could not set its rlimits */
	EXIT_FILTER = 123,  /* could not install the seccomp filter */
	EXIT_WRITE = 124,   /* could not write its result */
	EXIT_NOSPACE = 125, /* could not set the address-space limit */
};

#define RESULT_FD 3

double tmatch__place_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- child --------------------------------------------------------------- */

/* Bytes of address space the process has now (0 if unknown). */
size_t tmatch__address_space_now(void)
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

/* stdio on /dev/null, the pipe on RESULT_FD, every other descriptor closed. */
static int arrange_fds(int wfd)
{
	int null = open("/dev/null", O_RDWR);

	if (null < 0)
		return -1;
	if (wfd != RESULT_FD) {
		if (dup2(wfd, RESULT_FD) < 0)
			return -1;
		if (null == RESULT_FD)
			null = wfd; /* the old pipe number becomes /dev/null's below */
	}
	if ((null != 0 && dup2(null, 0) < 0) || (null != 1 && dup2(null, 1) < 0) ||
	    (null != 2 && dup2(null, 2) < 0))
		return -1;
	if (fcntl(RESULT_FD, F_SETFD, 0) < 0)
		return -1;
	if (close_range(RESULT_FD + 1, ~0U, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = RESULT_FD + 1; fd < (max > 0 ? max : 65536); fd++)
			close((int)fd);
	}
	return 0;
}

/* The job's user for good, checked. */
static int become(const tmatch__sandbox_t *sb)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	/* slurmstepd has dropped only its effective uid; take it back to
	   change groups, then give up all three. */
	if (geteuid() != 0 && (getuid() == 0 || (getresuid(&r, &e, &s) == 0 && s == 0)))
		if (seteuid(0) < 0)
			return -1;
	if (geteuid() == 0 && setgroups((size_t)sb->ngroups, sb->groups) < 0)
		return -1;
	if (setresgid(sb->gid, sb->gid, sb->gid) < 0 || setresuid(sb->uid, sb->uid, sb->uid) < 0)
		return -1;
	if (getresuid(&r, &e, &s) < 0 || r != sb->uid || e != sb->uid || s != sb->uid ||
	    getresgid(&rg, &eg, &sg) < 0 || rg != sb->gid || eg != sb->gid || sg != sb->gid)
		return -1;
	if (sb->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return -1;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -1;
	return 0;
}

static int limit(int resource, rlim_t value)
{
	struct rlimit rl = {.rlim_cur = value, .rlim_max = value};

	return setrlimit(resource, &rl);
}

/* ---- the seccomp allow-list ---------------------------------------------- */

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef SANDBOX_ARCH
#define ALLOW(nr)                                                                                  \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                           \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define ANSWER(nr, err)                                                                            \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                           \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (SECCOMP_RET_DATA & (err)))
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
/* Allowed when argument i's low 32 bits pass `test` (a BPF jump on k whose
   true branch skips `skip` instructions), else the error. Each of these
   blocks returns once it has loaded an argument, so the syscall number
   stays in the accumulator for the next test. */
#define ALLOW_IF_ARG(nr, i, test, k, jt, jf, error)                                                \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4),                                           \
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(i)),                                         \
	    BPF_JUMP(BPF_JMP | (test) | BPF_K, (k), (jt), (jf)),                                   \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                                          \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (error))
/* (argument i) & mask == 0, else EACCES */
#define ALLOW_IF_CLEAR(nr, i, mask) ALLOW_IF_ARG(nr, i, BPF_JSET, mask, 1, 0, EACCES)
/* (argument i) & mask != 0, else EPERM */
#define ALLOW_IF_SET(nr, i, mask) ALLOW_IF_ARG(nr, i, BPF_JSET, mask, 0, 1, EPERM)
/* argument i == v, else EPERM */
#define ALLOW_IF_EQ(nr, i, v) ALLOW_IF_ARG(nr, i, BPF_JEQ, v, 0, 1, EPERM)
/* Allowed when argument i is entirely zero (a NULL pointer), else EPERM. */
#define ALLOW_IF_NULL(nr, i)                                                                       \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 6),                                           \
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(i)),                                         \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),                                          \
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(i) + 4),                                     \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),                                          \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                                          \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
/* O_TMPFILE without its O_DIRECTORY bit: opendir() must still work */
#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | (O_TMPFILE & ~O_DIRECTORY))

/*
 * What parsing, mapping (TreeMatch, METIS, Scotch) and the C library's
 * malloc, stdio and threads need, and nothing that reaches outside the
 * process: no exec, fork (threads only: clone with CLONE_THREAD), socket,
 * signals to others, ptrace, ioctl (answered ENOTTY: isatty), file creation or writing
 * other than write(2) on what is already open (the pipe and /dev/null).
 */
static int install_filter(void)
{
	uint32_t self = (uint32_t)getpid();
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
	    /* x32 system calls */
	    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#endif
	    ALLOW(SYS_read),
	    ALLOW(SYS_write),
	    ALLOW(SYS_readv),
	    ALLOW(SYS_writev),
	    ALLOW(SYS_pread64),
	    ALLOW(SYS_close),
	    ALLOW(SYS_fstat),
	    ALLOW(SYS_newfstatat),
	    ALLOW(SYS_statx),
	    ALLOW(SYS_lseek),
	    ALLOW(SYS_getdents64),
	    ALLOW(SYS_readlinkat),
	    ALLOW(SYS_faccessat),
	    ALLOW(SYS_getcwd),
	    ALLOW(SYS_fcntl),
	    ALLOW(SYS_flock), /* a shared lock on the store of learned profiles (read only) */
#ifdef SYS_faccessat2
	    ALLOW(SYS_faccessat2),
#endif
#ifdef __x86_64__
	    ALLOW(SYS_stat),
	    ALLOW(SYS_lstat),
	    ALLOW(SYS_access),
	    ALLOW(SYS_readlink),
	    ALLOW_IF_CLEAR(SYS_open, 1, WRITE_FLAGS),
#endif
	    ALLOW_IF_CLEAR(SYS_openat, 2, WRITE_FLAGS),
	    ALLOW(SYS_mmap),
	    ALLOW(SYS_munmap),
	    ALLOW(SYS_mremap),
	    ALLOW(SYS_mprotect),
	    ALLOW(SYS_brk),
	    ALLOW(SYS_madvise),
	    ALLOW(SYS_futex),
	    ALLOW(SYS_set_robust_list),
	    ALLOW(SYS_get_robust_list),
#ifdef SYS_rseq
	    ALLOW(SYS_rseq),
#endif
	    ALLOW(SYS_getpid),
	    ALLOW(SYS_gettid),
	    ALLOW(SYS_getuid),
	    ALLOW(SYS_geteuid),
	    ALLOW(SYS_getgid),
	    ALLOW(SYS_getegid),
	    ALLOW(SYS_getresuid),
	    ALLOW(SYS_getresgid),
	    ALLOW(SYS_getgroups),
	    ALLOW(SYS_clock_gettime),
	    ALLOW(SYS_clock_getres),
	    ALLOW(SYS_clock_nanosleep),
	    ALLOW(SYS_nanosleep),
	    ALLOW(SYS_gettimeofday),
	    ALLOW(SYS_getrusage),
	    ALLOW(SYS_times),
	    ALLOW(SYS_sysinfo),
	    ALLOW(SYS_uname),
	    ALLOW(SYS_sched_getaffinity),
	    ALLOW(SYS_sched_yield),
	    ALLOW(SYS_getrandom),
	    ALLOW(SYS_rt_sigaction),
	    ALLOW(SYS_rt_sigprocmask),
	    ALLOW(SYS_rt_sigreturn),
	    ALLOW(SYS_sigaltstack),
	    ALLOW(SYS_exit),
	    ALLOW(SYS_exit_group),
	    /* its own limits only; without CAP_SYS_RESOURCE they only go down */
	    ALLOW_IF_EQ(SYS_prlimit64, 0, 0),
	    ALLOW_IF_SET(SYS_clone, 0, CLONE_THREAD), /* threads, not processes */
	    /* signals to itself only: raise() and abort() */
	    ALLOW_IF_EQ(SYS_tgkill, 0, self),
	    ALLOW_IF_EQ(SYS_kill, 0, self),
	    ANSWER(SYS_ioctl, ENOTTY),
#ifdef SYS_clone3
	    ANSWER(SYS_clone3, ENOSYS), /* the C library then uses clone */
#endif
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = {.len = (unsigned short)(sizeof(f) / sizeof(f[0])), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}
#else
static int install_filter(void)
{
	/* No filter written for this architecture: no new privileges at least. */
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}
#endif

/* Everything the child does; never returns. */
static void child_run(const tmatch__sandbox_t *sb, int wfd, tmatch__sandbox_fn body, void *arg)
{
	struct sigaction sa;
	sigset_t none;
	size_t base = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (sb->max_memory > 0)
		base = tmatch__address_space_now(); /* before /proc is out of reach */
	if (arrange_fds(wfd) < 0)
		_exit(EXIT_FDS);
	if (sb->become && become(sb) < 0)
		_exit(EXIT_IDS);
	if (limit(RLIMIT_CORE, 0) < 0 || limit(RLIMIT_NOFILE, 16) < 0 ||
	    (sb->filter && limit(RLIMIT_FSIZE, 0) < 0))
		_exit(EXIT_LIMITS);
	/* CPU: the time limit rounded up, plus one second, for each thread a
	   mapping may run (the parent's wall clock normally strikes first;
	   this one holds if it cannot). */
	if (sb->max_time > 0 &&
	    limit(RLIMIT_CPU, ((rlim_t)ceil(sb->max_time) + 1) * TMATCH_MAP_MAX_THREADS) < 0)
		_exit(EXIT_LIMITS);
	if (sb->max_memory > 0 &&
	    limit(RLIMIT_AS, base <= SIZE_MAX - sb->max_memory ? (rlim_t)(base + sb->max_memory)
	                                                       : RLIM_INFINITY) < 0)
		_exit(EXIT_NOSPACE);
	if (sb->filter && install_filter() < 0)
		_exit(EXIT_FILTER);
	body(arg, RESULT_FD);
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

/* "1G", "64M", "300K" or bytes: as the admin would write max_map_memory. */
void tmatch__format_size(size_t bytes, char *buf, size_t len)
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

/* Why a child that exited `code` sent nothing usable. */
static const char *setup_failure(int code)
{
	switch (code) {
	case EXIT_IDS:
		return "could not become the job's user";
	case EXIT_FDS:
		return "could not close its descriptors";
	case EXIT_LIMITS:
		return "could not set its resource limits";
	case EXIT_FILTER:
		return "could not install its system-call filter";
	case EXIT_WRITE:
		return "could not send its result";
	default:
		return NULL;
	}
}

/* Reads to EOF, at most sb->max_result bytes, before *deadline (0 = none);
   once sb->first_size bytes are in, sb->first may bring the deadline
   closer (*shown: the limit messages name). 0, or why the child must be
   killed: 1 deadline, 2 poll or read error, 3 too long, 4 refused. */
static int read_result(const tmatch__sandbox_t *sb, int fd, char *buf, size_t *got,
                       double *deadline, double *shown)
{
	size_t cap = sb->max_result;
	int first_done = !sb->first || sb->first_size == 0 || sb->first_size > cap;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		double left = *deadline > 0 ? *deadline - tmatch__place_now() : 0;
		int ms = -1, pr;
		char extra;
		ssize_t r;

		if (*deadline > 0 && left <= 0)
			return 1;
		if (*deadline > 0)
			ms = left * 1e3 > INT_MAX ? INT_MAX : (int)ceil(left * 1e3);
		pr = poll(&p, 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return 2;
		if (pr == 0)
			continue; /* the deadline check above decides */
		r = *got < cap ? read(fd, buf + *got, cap - *got) : read(fd, &extra, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return 2;
		if (r == 0)
			return 0;
		if (*got >= cap)
			return 3;
		*got += (size_t)r;
		if (!first_done && *got >= sb->first_size) {
			double t = sb->first(sb->first_arg, buf, sb->first_size);
			double now = tmatch__place_now();

			first_done = 1;
			if (t < 0 || isnan(t))
				return 4;
			if (t > 0 && (*deadline <= 0 || now + t < *deadline)) {
				*deadline = now + t;
				*shown = t;
			}
		}
	}
}

int tmatch__sandbox_run(const tmatch__sandbox_t *sb, tmatch__sandbox_fn body, void *arg, char *buf,
                        size_t *got, tmatch_error_t *err)
{
	char mem[32];
	int pfd[2] = {-1, -1}, status = 0, killed, saved;
	double deadline, shown;
	pid_t pid;
	const char *why, *what = sb && sb->what ? sb->what : "mapping";
	/* The plugin's limits are the admin's keys; other callers' are not. */
	const char *tkey = sb && sb->what ? "" : "max_map_time=";
	const char *mkey = sb && sb->what ? "" : "max_map_memory=";

	*got = 0;
	if (!sb || !body || !buf || !(sb->max_time >= 0) || isinf(sb->max_time) ||
	    sb->ngroups < 0 || (sb->ngroups > 0 && !sb->groups))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch__sandbox_run: invalid argument");
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return tmatch_error_set(err, errno, NULL, 0, 0,
		                        "cannot start the %s process: pipe: %s", what,
		                        strerror(errno));
	pid = fork();
	if (pid < 0) {
		saved = errno;
		close(pfd[0]);
		close(pfd[1]);
		return tmatch_error_set(err, saved, NULL, 0, 0,
		                        "cannot start the %s process: fork: %s", what,
		                        strerror(saved));
	}
	if (pid == 0) {
		close(pfd[0]);
		child_run(sb, pfd[1], body, arg);
	}
	close(pfd[1]);
	shown = sb->max_time;
	deadline = sb->max_time > 0 ? tmatch__place_now() + sb->max_time : 0;
	killed = read_result(sb, pfd[0], buf, got, &deadline, &shown);
	close(pfd[0]);
	if (killed)
		kill(pid, SIGKILL);
	if (reap(pid, &status) < 0)
		status = -1; /* reaped by someone else: judge by the bytes alone */

	tmatch__format_size(sb->max_memory, mem, sizeof(mem));
	if (killed == 1)
		return tmatch_error_set(err, ETIME, NULL, 0, 0, "%s exceeded %s%g s, killed", what,
		                        tkey, shown);
	if (status != -1 && WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (sig == SIGXCPU)
			return tmatch_error_set(err, ETIME, NULL, 0, 0,
			                        "%s exceeded its CPU limit (%s%g s), killed", what,
			                        tkey, shown);
		if (sig == SIGSYS)
			return tmatch_error_set(err, EPERM, NULL, 0, 0,
			                        "%s process killed by its system-call filter "
			                        "(signal %d, %s)",
			                        what, sig, strsignal(sig));
		return tmatch_error_set(err, EIO, NULL, 0, 0, "%s process died with signal %d (%s)",
		                        what, sig, strsignal(sig));
	}
	if (killed)
		return tmatch_error_set(err, EPROTO, NULL, 0, 0,
		                        "%s process sent a malformed result (%s)", what,
		                        killed == 3   ? "too long"
		                        : killed == 4 ? "refused"
		                                      : "read error");
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		if (WEXITSTATUS(status) == EXIT_NOSPACE)
			return tmatch_error_set(err, ENOMEM, NULL, 0, 0,
			                        "%s ran out of memory (%s%s)", what, mkey, mem);
		if ((why = setup_failure(WEXITSTATUS(status))))
			return tmatch_error_set(err, EPERM, NULL, 0, 0, "%s process %s", what, why);
		return tmatch_error_set(err, EPROTO, NULL, 0, 0,
		                        "%s process exited with status %d without a result", what,
		                        WEXITSTATUS(status));
	}
	return 0;
}
