/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sandbox.c - run untrusted work in a child that cannot hurt its parent
 * (tmatch__sandbox_run, tmatch__sandbox_exec in placement_private.h).
 *
 * The plugin's parent is slurmstepd, partly root. Everything the job's
 * user wrote (the --treematch value, the profile, the job's environment)
 * is parsed in such a child, never in slurmstepd, as OpenSSH parses the
 * network in its unprivileged child. The plugin's child is a program of
 * its own (the helper, started with execveat from a descriptor the root
 * side opened at init: a clean memory image, an empty environment); the
 * CLI's children (a mapping, an XML reader) are forks of the CLI.
 *
 * Between fork (for the helper, a vfork-like clone) and exec (or the body)
 * the child only arranges its descriptors: stdio on /dev/null, the result
 * pipe as fd 3 (and the helper's input as fd 4, the root side's word to
 * read it as fd 5), every other one closed. Then, in this order
 * (tmatch__sandbox_confine, which the helper runs after exec and, when it
 * was started ahead of its step, once that word came):
 *   1. default signal handlers and an empty mask; oom_score_adj raised to
 *      0 when it inherited less (slurmstepd runs at -1000, its tasks at 0);
 *   2. becomes the job's user for good: supplementary groups, then real,
 *      effective and saved gid and uid, each read back; when the user is
 *      not root, getting uid 0 back must fail; not dumpable; then, as the
 *      user, enters the job's working directory when given one (a helper
 *      started ahead of its step is not yet in it);
 *   3. PR_SET_PDEATHSIG (a change of uid clears it, so after 2), then its
 *      parent checked: a parent already gone ends the child;
 *   4. rlimits: no core, CPU = time limit + 1 s per thread, address space
 *      = what it maps now + the memory limit, no file writes, 16
 *      descriptors;
 *   5. PR_SET_NO_NEW_PRIVS and a seccomp allow-list built with libseccomp
 *      for the machine's own architecture (below): files open for reading
 *      only; no exec, fork, socket, ptrace, signal to another process,
 *      ioctl, mount...; anything else kills it (SIGSYS).
 * A step that fails exits with a code of enum below, and the parent says
 * which. The child never logs.
 *
 * The parent watches the child for its whole life: it reads the result
 * pipe (at most max_result bytes, or through the caller's feed) and waits
 * on a pidfd, both against the one deadline; at the deadline, when the
 * child sends too much or something refused, it SIGKILLs it, whatever the
 * pipe's state (a child that closed the pipe and sleeps is killed all the
 * same). It then waits for the child's end at most `grace` seconds: a
 * process in uninterruptible sleep (a hung NFS or FUSE read) cannot die
 * before that sleep ends, and slurmstepd must not wait for it; such a child
 * is handed back as pending (the plugin reaps it without blocking at the
 * step's end; if it outlives slurmstepd, init reaps it).
 */
#include "placement/placement_private.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RESULT_FD   3
#define HIGH_FD     10  /* above every descriptor the child arranges (0 to 6) */
#define GRACE_SLEEP 2.0 /* seconds after SIGKILL before giving up on the child's end */

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

/*
 * keep[i] on fd 3 + i, stdio on /dev/null, every other descriptor closed.
 * Everything is first copied above the range it will land in (HIGH_FD), so that no
 * descriptor is overwritten before it is moved, whichever numbers they
 * had (/dev/null opening as fd 3 once put the pipe on 0, 1 and 2).
 * Async-signal-safe: it runs between fork and exec in slurmstepd.
 */
int tmatch__sandbox_fds(const int *keep, int nkeep)
{
	int high[4], null, null_high;

	if (nkeep < 0 || nkeep > 4)
		return -1;
	for (int i = 0; i < nkeep; i++)
		if ((high[i] = fcntl(keep[i], F_DUPFD_CLOEXEC, HIGH_FD)) < 0)
			return -1;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || (null_high = fcntl(null, F_DUPFD_CLOEXEC, HIGH_FD)) < 0)
		return -1;
	close(null);
	for (int fd = 0; fd < 3; fd++)
		if (dup2(null_high, fd) < 0) /* dup2 clears O_CLOEXEC */
			return -1;
	for (int i = 0; i < nkeep; i++)
		if (dup2(high[i], RESULT_FD + i) < 0)
			return -1;
	if (close_range(RESULT_FD + (unsigned)nkeep, ~0U, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = RESULT_FD + nkeep; fd < (max > 0 ? max : 65536); fd++)
			close((int)fd);
	}
	return 0;
}

/* Default handlers, nothing blocked: what a fresh process has. */
static void default_signals(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int tmatch__sandbox_oom_reset(const char *path)
{
	char buf[16];
	ssize_t r;
	int fd;

	if (!path)
		path = "/proc/self/oom_score_adj";
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	if (atoi(buf) >= 0)
		return 0; /* a value above 0 is the user's to keep */
	/* raising it needs no privilege; writing the file needs its owner */
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	r = write(fd, "0\n", 2);
	close(fd);
	return r == 2 ? 0 : -1;
}

/* slurmstepd has dropped only its effective uid (and an exec under it
   kept the real one): take root back, to set what follows and then give
   it up for good. */
static int regain_root(void)
{
	uid_t r, e, s;

	if (geteuid() != 0 && (getuid() == 0 || (getresuid(&r, &e, &s) == 0 && s == 0)))
		return seteuid(0);
	return 0;
}

/* The job's user for good, checked. */
static int become(const tmatch__sandbox_t *sb)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	if (regain_root() < 0)
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

/* What parsing, mapping (TreeMatch, METIS, Scotch), hwloc's XML reader and
   the C library's malloc, stdio and threads need. Names absent from an
   architecture (open, stat, mmap2, the *_time64 calls...) are skipped. */
static const char *const allowed_calls[] = {
    /* descriptors already open, files by name (open and openat below) */
    "read", "write", "readv", "writev", "pread64", "preadv", "close", "fstat", "fstat64",
    "newfstatat", "fstatat64", "statx", "stat", "stat64", "lstat", "lstat64", "lseek", "_llseek",
    "getdents64", "readlinkat", "readlink", "faccessat", "faccessat2", "access", "getcwd", "fcntl",
    "fcntl64",
    /* memory, threads' synchronisation */
    "mmap", "mmap2", "munmap", "mremap", "mprotect", "brk", "madvise", "futex", "futex_time64",
    "set_robust_list", "get_robust_list", "rseq",
    /* who and where it is, time */
    "getpid", "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid", "getresuid",
    "getresgid", "getgroups", "getuid32", "geteuid32", "getgid32", "getegid32", "getresuid32",
    "getresgid32", "getgroups32", "clock_gettime", "clock_gettime64", "clock_getres",
    "clock_getres_time64", "clock_nanosleep", "clock_nanosleep_time64", "nanosleep", "gettimeofday",
    "getrusage", "times", "sysinfo", "uname", "sched_getaffinity", "sched_yield", "getrandom",
    "getrlimit", "ugetrlimit",
    /* its own signals, its end */
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigreturn", "sigaltstack", "exit",
    "exit_group"};

/* O_TMPFILE without its O_DIRECTORY bit: opendir() must still work */
#define WRITE_FLAGS                                                                                \
	((scmp_datum_t)(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND |                         \
	                (O_TMPFILE & ~O_DIRECTORY)))
/* What pthread_create asks of clone, and what no thread needs. */
#define THREAD_FLAGS                                                                               \
	((scmp_datum_t)(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD))
#define NOT_THREAD_FLAGS                                                                           \
	((scmp_datum_t)(CLONE_VFORK | CLONE_PARENT | CLONE_PTRACE | CLONE_UNTRACED | CLONE_NEWNS | \
	                CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |            \
	                CLONE_NEWPID | CLONE_NEWNET))

/* One rule for the call `name`, if arch has it. libseccomp takes the
   machine's own numbering (names it lacks have pseudo-numbers) and
   translates it for arch. 0, or -1. */
static int rule(scmp_filter_ctx ctx, uint32_t arch, uint32_t action, const char *name, unsigned n,
                const struct scmp_arg_cmp *cmp)
{
	int nr;

	if (seccomp_syscall_resolve_name_arch(arch, name) < 0)
		return 0; /* not a call of this architecture */
	nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return -1;
	return seccomp_rule_add_array(ctx, action, nr, n, cmp) < 0 ? -1 : 0;
}

int tmatch__sandbox_filter_new(uint32_t arch, pid_t self, void **out)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	/* clone's flags: its first argument, its second on s390 */
	unsigned flags_arg = arch == SCMP_ARCH_S390X || arch == SCMP_ARCH_S390 ? 1 : 0;
	uint32_t eacces = SCMP_ACT_ERRNO(EACCES);
	int rc = 0;

	*out = NULL;
	if (!ctx)
		return -1;
	if (arch == 0)
		arch = seccomp_arch_native();
	/* Another architecture's calls (x86_64's x32 and i386 among them)
	   kill the process. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 ||
	    (arch != seccomp_arch_native() && /* native first: one byte order per filter */
	     (seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE) < 0 || seccomp_arch_add(ctx, arch) < 0)))
		goto fail;
	for (size_t i = 0; i < sizeof(allowed_calls) / sizeof(allowed_calls[0]); i++)
		rc |= rule(ctx, arch, SCMP_ACT_ALLOW, allowed_calls[i], 0, NULL);
	/* open for reading only: a write, create, truncate or append flag is
	   answered EACCES (each flag its own rule: rules of one call are OR-ed) */
	{
		const scmp_datum_t bits[] = {O_WRONLY, O_RDWR,   O_CREAT,
		                             O_TRUNC,  O_APPEND, O_TMPFILE & ~O_DIRECTORY};

		rc |= rule(ctx, arch, SCMP_ACT_ALLOW, "openat", 1,
		           (struct scmp_arg_cmp[]){SCMP_A2(SCMP_CMP_MASKED_EQ, WRITE_FLAGS, 0)});
		rc |= rule(ctx, arch, SCMP_ACT_ALLOW, "open", 1,
		           (struct scmp_arg_cmp[]){SCMP_A1(SCMP_CMP_MASKED_EQ, WRITE_FLAGS, 0)});
		for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
			rc |= rule(
			    ctx, arch, eacces, "openat", 1,
			    (struct scmp_arg_cmp[]){SCMP_A2(SCMP_CMP_MASKED_EQ, bits[b], bits[b])});
			rc |= rule(
			    ctx, arch, eacces, "open", 1,
			    (struct scmp_arg_cmp[]){SCMP_A1(SCMP_CMP_MASKED_EQ, bits[b], bits[b])});
		}
	}
	/* threads, not processes: clone with the thread flags and none of a
	   process's or a namespace's; clone3 says ENOSYS (the C library then
	   uses clone, whose flags a filter can read) */
	rc |= rule(ctx, arch, SCMP_ACT_ALLOW, "clone", 1,
	           (struct scmp_arg_cmp[]){{flags_arg, SCMP_CMP_MASKED_EQ,
	                                    THREAD_FLAGS | NOT_THREAD_FLAGS, THREAD_FLAGS}});
	rc |= rule(ctx, arch, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
	/* signals to itself only (raise, abort): any other target kills */
	rc |= rule(ctx, arch, SCMP_ACT_ALLOW, "kill", 1,
	           (struct scmp_arg_cmp[]){SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self)});
	rc |= rule(ctx, arch, SCMP_ACT_ALLOW, "tgkill", 1,
	           (struct scmp_arg_cmp[]){SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self)});
	/* its own limits, which without CAP_SYS_RESOURCE only go down */
	rc |= rule(ctx, arch, SCMP_ACT_ALLOW, "prlimit64", 1,
	           (struct scmp_arg_cmp[]){SCMP_A0(SCMP_CMP_EQ, 0)});
	/* a shared lock on the learn store's lock file, never an exclusive one */
	rc |= rule(ctx, arch, SCMP_ACT_ALLOW, "flock", 1,
	           (struct scmp_arg_cmp[]){SCMP_A1(SCMP_CMP_EQ, LOCK_SH)});
	rc |= rule(ctx, arch, SCMP_ACT_ALLOW, "flock", 1,
	           (struct scmp_arg_cmp[]){SCMP_A1(SCMP_CMP_EQ, LOCK_SH | LOCK_NB)});
	rc |= rule(ctx, arch, SCMP_ACT_ERRNO(ENOTTY), "ioctl", 0, NULL); /* isatty() */
	if (rc)
		goto fail;
	*out = ctx;
	return 0;
fail:
	seccomp_release(ctx);
	return -1;
}

void tmatch__sandbox_filter_free(void *ctx)
{
	if (ctx)
		seccomp_release(ctx);
}

/* The filter built ahead (tmatch__sandbox_filter_ahead), NULL = not yet. */
static void *filter_ahead;

void tmatch__sandbox_filter_ahead(void)
{
	if (!filter_ahead && tmatch__sandbox_filter_new(0, getpid(), &filter_ahead) < 0)
		filter_ahead = NULL;
}

static int install_filter(void)
{
	void *ctx = filter_ahead;
	int rc;

	filter_ahead = NULL;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    (!ctx && tmatch__sandbox_filter_new(0, getpid(), &ctx) < 0)) {
		if (ctx)
			seccomp_release(ctx);
		return -1;
	}
	rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc < 0 ? -1 : 0;
}

int tmatch__sandbox_confine(const tmatch__sandbox_t *sb, pid_t parent, size_t base)
{
	default_signals();
	if (sb->become && regain_root() < 0)
		return TMATCH__SANDBOX_EXIT_IDS;
	if (tmatch__sandbox_oom_reset(NULL) < 0)
		return TMATCH__SANDBOX_EXIT_OOM;
	if (sb->become && become(sb) < 0)
		return TMATCH__SANDBOX_EXIT_IDS;
	/* as the user: a directory of theirs they may not enter stays shut */
	if (sb->cwd && chdir(sb->cwd) < 0)
		return TMATCH__SANDBOX_EXIT_CWD;
	/* Dies with its parent. A change of uid clears the setting, so it
	   comes now; a parent that died before it is seen by getppid(). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		return TMATCH__SANDBOX_EXIT_PARENT;
	if (limit(RLIMIT_CORE, 0) < 0 || limit(RLIMIT_NOFILE, 16) < 0 ||
	    (sb->filter && limit(RLIMIT_FSIZE, 0) < 0))
		return TMATCH__SANDBOX_EXIT_LIMITS;
	/* CPU: the time limit rounded up, plus one second, for each thread a
	   mapping may run (the parent's wall clock normally strikes first;
	   this one holds if it cannot). */
	if (sb->max_time > 0 &&
	    limit(RLIMIT_CPU, ((rlim_t)ceil(sb->max_time) + 1) * TMATCH_MAP_MAX_THREADS) < 0)
		return TMATCH__SANDBOX_EXIT_LIMITS;
	if (sb->max_memory > 0 &&
	    limit(RLIMIT_AS, base <= SIZE_MAX - sb->max_memory ? (rlim_t)(base + sb->max_memory)
	                                                       : RLIM_INFINITY) < 0)
		return TMATCH__SANDBOX_EXIT_NOSPACE;
	if (sb->filter && install_filter() < 0)
		return TMATCH__SANDBOX_EXIT_FILTER;
	return 0;
}

/* A forked child: its descriptors, its confinement, the body. */
__attribute__((noreturn)) static void child_run(const tmatch__sandbox_t *sb, pid_t parent, int wfd,
                                                tmatch__sandbox_fn body, void *arg)
{
	size_t base = 0;
	int code;

	if (tmatch__sandbox_fds(&wfd, 1) < 0)
		_exit(TMATCH__SANDBOX_EXIT_FDS);
	if (sb->max_memory > 0)
		base = tmatch__address_space_now(); /* before /proc is out of reach */
	if ((code = tmatch__sandbox_confine(sb, parent, base)) != 0)
		_exit(code);
	body(arg, RESULT_FD);
	_exit(0);
}

/* The helper program, from the caller's descriptor: result pipe on fd 3,
   its input on fd 4 and the root side's word to read it on fd 5, nothing
   else, an empty environment. */
__attribute__((noreturn)) static void child_exec(const tmatch__sandbox_t *sb, int wfd)
{
	static char name[] = "treematch-helper";
	char *const argv[] = {name, NULL}, *const envp[] = {NULL};
	int keep[4] = {wfd}, n = 1, fd;

	if (sb->input_fd >= 0)
		keep[n++] = sb->input_fd;
	if (sb->go_fd >= 0)
		keep[n++] = sb->go_fd;
	keep[n] = sb->exec_fd;
	/* the program's own descriptor last, closed by the exec itself */
	if (tmatch__sandbox_fds(keep, n + 1) < 0 ||
	    fcntl(fd = RESULT_FD + n, F_SETFD, FD_CLOEXEC) < 0)
		_exit(TMATCH__SANDBOX_EXIT_FDS);
	syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
	fexecve(fd, argv, envp);
	_exit(TMATCH__SANDBOX_EXIT_EXEC);
}

/* The helper program's child, as vfork makes it: slurmstepd's memory is
   shared, not copied (its page tables are large; fork copied them for a
   child that only moves descriptors and calls execveat), and slurmstepd
   waits until the exec. Every signal stays blocked until then, so no
   handler of slurmstepd's runs on the child's stack; the helper resets the
   mask itself. The child touches nothing but its own stack and
   descriptors. */
struct spawned {
	const tmatch__sandbox_t *sb;
	int wfd;
};

static int spawned_child(void *arg)
{
	const struct spawned *s = arg;

	child_exec(s->sb, s->wfd);
}

#define SPAWN_STACK (64 * 1024)

static pid_t spawn(const tmatch__sandbox_t *sb, int wfd)
{
	struct spawned s = {sb, wfd};
	sigset_t all, old;
	char *stack;
	pid_t pid;
	int saved;

	stack = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* the stack grows down on every architecture Debian builds for */
	pid = clone(spawned_child, stack + SPAWN_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &s);
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	munmap(stack, SPAWN_STACK);
	errno = saved;
	return pid;
}

/* ---- parent -------------------------------------------------------------- */

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
	case TMATCH__SANDBOX_EXIT_IDS:
		return "could not become the job's user";
	case TMATCH__SANDBOX_EXIT_FDS:
		return "could not arrange its descriptors";
	case TMATCH__SANDBOX_EXIT_LIMITS:
		return "could not set its resource limits";
	case TMATCH__SANDBOX_EXIT_FILTER:
		return "could not install its system-call filter";
	case TMATCH__SANDBOX_EXIT_WRITE:
		return "could not send its result";
	case TMATCH__SANDBOX_EXIT_PARENT:
		return "lost its parent while starting";
	case TMATCH__SANDBOX_EXIT_OOM:
		return "could not set its oom_score_adj";
	case TMATCH__SANDBOX_EXIT_EXEC:
		return "could not be started (exec)";
	case TMATCH__SANDBOX_EXIT_INPUT:
		return "could not read its input";
	case TMATCH__SANDBOX_EXIT_CWD:
		return "could not enter the job's working directory";
	default:
		return NULL;
	}
}

static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

int tmatch__sandbox_send_kill(pid_t pid, int pidfd)
{
#ifdef SYS_pidfd_send_signal
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
		return 0;
#endif
	(void)pidfd;
	return kill(pid, SIGKILL);
}

/* The child's end, if it has come: 1 and *status; 0 not yet; -1 reaped
   elsewhere (ECHILD). */
static int try_reap(pid_t pid, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

void tmatch__sandbox_reap(pid_t pid)
{
	int status;

	if (pid > 0)
		try_reap(pid, &status);
}

/* Waits at most `seconds` for the child's end (on its pidfd, else by
   polling). 1 reaped (*status), 0 still there, -1 reaped elsewhere. */
static int wait_end(pid_t pid, int pidfd, double seconds, int *status)
{
	double until = tmatch__place_now() + seconds;
	int r;

	while ((r = try_reap(pid, status)) == 0) {
		double left = until - tmatch__place_now();
		struct pollfd p = {.fd = pidfd, .events = POLLIN};

		if (left <= 0)
			return 0;
		if (pidfd >= 0) {
			poll(&p, 1, (int)ceil(left * 1e3));
		} else {
			struct timespec ts = {0, 5 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
	}
	return r;
}

/* Where the bytes go when the caller gave no feed: its buffer. */
struct into_buf {
	char *buf;
	size_t *got, cap;
};

static int feed_buf(void *arg, const char *data, size_t len, double *limit)
{
	struct into_buf *b = arg;

	(void)limit;
	if (len > b->cap - *b->got)
		return -1;
	memcpy(b->buf + *b->got, data, len);
	*b->got += len;
	return 0;
}

/*
 * Reads the pipe and watches the child until its end or the deadline
 * (*deadline, 0 = none; the feed may bring it closer, *shown is then the
 * limit it gave). Returns why the child must be killed, or OK when it
 * ended on its own (*status, *ended = 1, or -1 when reaped elsewhere).
 */
enum watch_end {
	WATCH_OK = 0,       /* the child ended; the bytes are all in */
	WATCH_DEADLINE = 1, /* the time limit passed */
	WATCH_IO = 2,       /* poll or read failed */
	WATCH_REFUSED = 3,  /* the feed refused the bytes (or there were too many) */
};

static enum watch_end watch(const tmatch__sandbox_t *sb, pid_t pid, int pidfd, int rfd,
                            double *deadline, double *shown, int *status, int *ended)
{
	int open_pipe = 1;

	for (;;) {
		struct pollfd p[2] = {{.fd = open_pipe ? rfd : -1, .events = POLLIN},
		                      {.fd = pidfd, .events = POLLIN}};
		double left = *deadline > 0 ? *deadline - tmatch__place_now() : 0;
		int ms = -1, pr;

		if (*deadline > 0 && left <= 0)
			return WATCH_DEADLINE;
		if (*deadline > 0)
			ms = left * 1e3 > INT_MAX ? INT_MAX : (int)ceil(left * 1e3);
		if (pidfd < 0 && !open_pipe && (ms < 0 || ms > 5))
			ms = 5; /* no pidfd: poll for the child's end */
		pr = poll(p, 2, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return WATCH_IO;
		if (open_pipe && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			char chunk[65536];
			ssize_t r = read(rfd, chunk, sizeof(chunk));

			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r < 0)
				return WATCH_IO;
			if (r == 0) {
				open_pipe = 0; /* EOF: now the child's end, before the deadline */
			} else {
				double t = 0;

				if (sb->feed(sb->feed_arg, chunk, (size_t)r, &t) < 0)
					return WATCH_REFUSED;
				if (t > 0 &&
				    (*deadline <= 0 || tmatch__place_now() + t < *deadline)) {
					*deadline = tmatch__place_now() + t;
					*shown = t;
				}
			}
			continue;
		}
		if ((pidfd >= 0 && (p[1].revents & POLLIN)) || (pidfd < 0 && !open_pipe)) {
			int r = try_reap(pid, status);

			if (r == 0)
				continue;
			*ended = r;
			/* ended with the pipe still open (a descendant holds it, or
			   the bytes are not read yet): what is there counts */
			while (open_pipe) {
				char chunk[65536];
				ssize_t n = read(rfd, chunk, sizeof(chunk));
				double t = 0;

				if (n <= 0)
					break;
				if (sb->feed(sb->feed_arg, chunk, (size_t)n, &t) < 0)
					return WATCH_REFUSED;
			}
			return WATCH_OK;
		}
	}
}

/* Fork (and exec, for the helper): the child, and the read end of its
   result pipe. 0, or -1 with err. */
static int start(const tmatch__sandbox_t *sb, tmatch__sandbox_fn body, void *arg,
                 tmatch__child_t *c, tmatch_error_t *err)
{
	int pfd[2] = {-1, -1}, saved;
	pid_t parent = getpid();
	const char *what = sb->what ? sb->what : "mapping";

	c->pid = 0;
	c->pidfd = c->rfd = -1;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return tmatch_error_set(err, errno, NULL, 0, 0,
		                        "cannot start the %s process: pipe: %s", what,
		                        strerror(errno));
	if (!body) /* tmatch__sandbox_exec */
		c->pid = spawn(sb, pfd[1]);
	else if ((c->pid = fork()) == 0)
		child_run(sb, parent, pfd[1], body, arg);
	if (c->pid < 0) {
		saved = errno;
		c->pid = 0;
		close(pfd[0]);
		close(pfd[1]);
		return tmatch_error_set(err, saved, NULL, 0, 0,
		                        "cannot start the %s process: fork: %s", what,
		                        strerror(saved));
	}
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	c->rfd = pfd[0];
	c->pidfd = pidfd_of(c->pid); /* -1 before Linux 5.3: the end is polled for */
	return 0;
}

/* Watch the started child from now on against the deadline, kill, reap;
   one line for every ending that is not a clean exit. */
static int finish(const tmatch__sandbox_t *sb, tmatch__child_t *c, tmatch_error_t *err)
{
	char mem[32];
	int status = 0, ended = 0;
	enum watch_end why;
	double deadline, shown;
	pid_t pid = c->pid;
	int pidfd = c->pidfd;
	const char *setup, *what = sb->what ? sb->what : "mapping";
	/* The plugin's limits are the admin's keys; other callers' are not. */
	const char *tkey = sb->what ? "" : "max_map_time=";
	const char *mkey = sb->what ? "" : "max_map_memory=";

	if (sb->pending)
		*sb->pending = 0;
	shown = sb->max_time;
	deadline = sb->max_time > 0 ? tmatch__place_now() + sb->max_time : 0;
	why = watch(sb, pid, pidfd, c->rfd, &deadline, &shown, &status, &ended);
	close(c->rfd);
	c->rfd = -1;
	c->pid = 0;
	c->pidfd = -1;
	if (why != WATCH_OK) {
		(sb->send_kill ? sb->send_kill : tmatch__sandbox_send_kill)(pid, pidfd);
		ended = wait_end(pid, pidfd, sb->grace > 0 ? sb->grace : GRACE_SLEEP, &status);
	}
	if (pidfd >= 0)
		close(pidfd);
	if (ended == 0) {
		/* killed, not ended: in uninterruptible sleep. Not waited for. */
		if (sb->pending)
			*sb->pending = pid;
		return tmatch_error_set(err, ETIME, NULL, 0, 0,
		                        "%s process %s and did not end within %g s of SIGKILL "
		                        "(uninterruptible sleep: a hung file system?); left to be "
		                        "reaped",
		                        what,
		                        why == WATCH_DEADLINE ? "exceeded its time limit"
		                                              : "sent a malformed result",
		                        sb->grace > 0 ? sb->grace : GRACE_SLEEP);
	}
	if (ended < 0)
		status = -1; /* reaped by someone else: judge by the bytes alone */

	tmatch__format_size(sb->max_memory, mem, sizeof(mem));
	if (why == WATCH_DEADLINE)
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
		if (why == WATCH_OK)
			return tmatch_error_set(err, EIO, NULL, 0, 0,
			                        "%s process died with signal %d (%s)", what, sig,
			                        strsignal(sig));
	}
	if (why != WATCH_OK)
		return tmatch_error_set(err, EPROTO, NULL, 0, 0,
		                        "%s process sent a malformed result (%s)", what,
		                        why == WATCH_IO        ? "read error"
		                        : sb->feed == feed_buf ? "too long"
		                                               : "refused");
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		if (WEXITSTATUS(status) == TMATCH__SANDBOX_EXIT_NOSPACE)
			return tmatch_error_set(err, ENOMEM, NULL, 0, 0,
			                        "%s ran out of memory (%s%s)", what, mkey, mem);
		if ((setup = setup_failure(WEXITSTATUS(status))))
			return tmatch_error_set(err, EPERM, NULL, 0, 0, "%s process %s", what,
			                        setup);
		return tmatch_error_set(err, EPROTO, NULL, 0, 0,
		                        "%s process exited with status %d without a result", what,
		                        WEXITSTATUS(status));
	}
	return 0;
}

static int launch(const tmatch__sandbox_t *sb, tmatch__sandbox_fn body, void *arg,
                  tmatch_error_t *err)
{
	tmatch__child_t c;

	if (start(sb, body, arg, &c, err) < 0)
		return -1;
	return finish(sb, &c, err);
}

static int bad_sandbox(const tmatch__sandbox_t *sb)
{
	return !sb || !(sb->max_time >= 0) || isinf(sb->max_time) || sb->ngroups < 0 ||
	       (sb->ngroups > 0 && !sb->groups) || sb->grace < 0;
}

int tmatch__sandbox_run(const tmatch__sandbox_t *sb, tmatch__sandbox_fn body, void *arg, char *buf,
                        size_t *got, tmatch_error_t *err)
{
	tmatch__sandbox_t mine;
	struct into_buf into;

	if (got)
		*got = 0;
	if (bad_sandbox(sb) || !body || (!sb->feed && (!buf || !got)))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch__sandbox_run: invalid argument");
	mine = *sb;
	mine.exec_fd = -1;
	mine.input_fd = -1;
	mine.go_fd = -1;
	if (!mine.feed) {
		into.buf = buf;
		into.got = got;
		into.cap = sb->max_result;
		mine.feed = feed_buf;
		mine.feed_arg = &into;
	}
	return launch(&mine, body, arg, err);
}

int tmatch__sandbox_exec_start(const tmatch__sandbox_t *sb, tmatch__child_t *c, tmatch_error_t *err)
{
	c->pid = 0;
	c->pidfd = c->rfd = -1;
	if (bad_sandbox(sb) || sb->exec_fd < 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch__sandbox_exec_start: invalid argument");
	return start(sb, NULL, NULL, c, err);
}

int tmatch__sandbox_exec_finish(const tmatch__sandbox_t *sb, tmatch__child_t *c,
                                tmatch_error_t *err)
{
	if (bad_sandbox(sb) || !sb->feed || !c || c->pid <= 0 || c->rfd < 0) {
		tmatch__sandbox_abandon(c); /* spent either way */
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch__sandbox_exec_finish: invalid argument");
	}
	return finish(sb, c, err);
}

pid_t tmatch__sandbox_abandon(tmatch__child_t *c)
{
	pid_t pid = c ? c->pid : 0;
	int status;

	if (pid <= 0)
		return 0;
	tmatch__sandbox_send_kill(pid, c->pidfd);
	if (wait_end(pid, c->pidfd, GRACE_SLEEP, &status) != 0)
		pid = 0; /* reaped (here or elsewhere) */
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->rfd >= 0)
		close(c->rfd);
	c->pid = 0;
	c->pidfd = c->rfd = -1;
	return pid;
}

int tmatch__sandbox_exec(const tmatch__sandbox_t *sb, tmatch_error_t *err)
{
	tmatch__child_t c;

	if (!sb || !sb->feed)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch__sandbox_exec: invalid argument");
	if (tmatch__sandbox_exec_start(sb, &c, err) < 0)
		return -1;
	return finish(sb, &c, err);
}
