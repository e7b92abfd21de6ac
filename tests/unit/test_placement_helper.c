/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_helper.c - the plugin's privilege separation
 * (placement/helper.c, placement/sandbox.c): what the helper process is
 * (its uids and gids from /proc, its descriptors, its filter, that it
 * cannot get root back), what it decides with the user's value (tighten,
 * never loosen), that hostile inputs cost the root side nothing, and that
 * the root side refuses every forged result.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <signal.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "placement/placement_private.h"
#include "placement/env.h"
#include "placement/gpu.h"
#include "placement/helper.h"
#include "placement/learn.h"
#include "placement/node.h"
#include "treematch/treematch_private.h"
#include "profiler/mpiabi.h"
#include "hostile.h"
#include "spank_profiles.h"
#include "gpu_xml.h"
#include "tmpdir.h"

/* The build tree's helper program. */
#define HELPER TMATCH_BUILDDIR "/spank/treematch-helper"

/* The job's user the helper becomes: nobody when the tests run as root,
   else the tester (who has no root to give up). */
static uid_t target_uid(void)
{
	return geteuid() == 0 ? 65534 : getuid();
}

static gid_t target_gid(void)
{
	return geteuid() == 0 ? 65534 : getgid();
}

/* This test's directory every user can enter (removed when it ends). */
static char public_root[256];

static void public_cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", public_root);
	if (public_root[0] && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", public_root);
}

static const char *public_dir(void)
{
	if (!public_root[0]) {
		tm_mkdtemp(public_root, sizeof(public_root), "tm-helper");
		cr_assert_eq(chmod(public_root, 0755), 0);
		atexit(public_cleanup);
	}
	return public_root;
}

/* A file every user can read, in a directory every user can enter. */
static void write_public(char *path, size_t len, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, len, "%s/%s", public_dir(), name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(path, 0644), 0);
}

/* Removes a file write_public made (the directory goes when the test ends:
   other files of the test may still be in it). */
static void remove_public(const char *path)
{
	cr_expect_eq(unlink(path), 0, "%s", path);
}

/* ---- the helper process -------------------------------------------------- */

/* In the sandbox: /proc/self/status's identity lines, then "fd N" for each
   open descriptor other than the one listing them. */
static void probe_body(void *arg, int fd)
{
	static const char *keys[] = {"Uid:", "Gid:", "Groups:", "NoNewPrivs:", "Seccomp:"};
	char line[512];
	FILE *f = fopen("/proc/self/status", "r");
	DIR *d;
	struct dirent *e;

	(void)arg;
	while (f && fgets(line, sizeof(line), f))
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (strncmp(line, keys[k], strlen(keys[k])) == 0)
				tmatch__write_all(fd, line, strlen(line));
	if (f)
		fclose(f);
	d = opendir("/proc/self/fd");
	if (!d) {
		snprintf(line, sizeof(line), "opendir: %s\n", strerror(errno));
		tmatch__write_all(fd, line, strlen(line));
	}
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(line, sizeof(line), "fd %s\n", e->d_name);
		tmatch__write_all(fd, line, strlen(line));
	}
	if (d)
		closedir(d);
}

static void sandbox_for(tmatch__sandbox_t *sb, int filter)
{
	memset(sb, 0, sizeof(*sb));
	sb->become = 1;
	sb->uid = target_uid();
	sb->gid = target_gid();
	sb->filter = filter;
	sb->max_time = 10;
	sb->max_memory = (size_t)256 << 20;
	sb->max_result = 4096;
}

Test(placement_helper, helper_is_the_user_for_good_with_nothing_inherited)
{
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[4097], want[128];
	size_t got = 0;
	int leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC: as slurmstepd's may be */

	cr_assert_geq(leak, 0);
	sandbox_for(&sb, 1);
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch__sandbox_run(&sb, probe_body, NULL, buf, &got, &err), 0, "%s", err.msg);
	buf[got] = '\0';
	/* real, effective, saved and filesystem ids: all four the user's */
	snprintf(want, sizeof(want), "Uid:\t%u\t%u\t%u\t%u\n", (unsigned)sb.uid, (unsigned)sb.uid,
	         (unsigned)sb.uid, (unsigned)sb.uid);
	cr_assert_not_null(strstr(buf, want), "%s", buf);
	snprintf(want, sizeof(want), "Gid:\t%u\t%u\t%u\t%u\n", (unsigned)sb.gid, (unsigned)sb.gid,
	         (unsigned)sb.gid, (unsigned)sb.gid);
	cr_assert_not_null(strstr(buf, want), "%s", buf);
	if (geteuid() == 0) { /* none given: none, not root's */
		const char *g = strstr(buf, "Groups:");

		cr_assert_not_null(g, "%s", buf);
		cr_assert_eq(strcspn(g, "\n"), strcspn(g, "0123456789\n"), "%s", buf);
	}
	cr_assert_not_null(strstr(buf, "NoNewPrivs:\t1\n"), "%s", buf);
	cr_assert_not_null(strstr(buf, "Seccomp:\t2\n"), "%s", buf);
	/* stdio on /dev/null and the result pipe: nothing of the parent's */
	cr_assert_not_null(strstr(buf, "fd 3\n"), "%s", buf);
	snprintf(want, sizeof(want), "fd %d\n", leak > 3 ? leak : 4);
	cr_assert_null(strstr(buf, want), "%s", buf);
	cr_assert_null(strstr(buf, "fd 4\n"), "%s", buf);
	close(leak);
}

/* Without the filter (which would kill it first): every way back to uid 0. */
static void regain_body(void *arg, int fd)
{
	char line[128];
	int a = setuid(0), b = seteuid(0), c = setresuid(0, 0, 0), d = setgid(0);

	(void)arg;
	snprintf(line, sizeof(line), "%d %d %d %d %u %u", a, b, c, d, (unsigned)getuid(),
	         (unsigned)geteuid());
	tmatch__write_all(fd, line, strlen(line));
}

Test(placement_helper, helper_cannot_get_root_back)
{
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[129], want[64];
	size_t got = 0;

	sandbox_for(&sb, 0);
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch__sandbox_run(&sb, regain_body, NULL, buf, &got, &err), 0, "%s",
	             err.msg);
	buf[got] = '\0';
	snprintf(want, sizeof(want), "-1 -1 -1 -1 %u %u", (unsigned)sb.uid, (unsigned)sb.uid);
	cr_assert_neq(sb.uid, 0);
	cr_assert_str_eq(buf, want);
}

static void socket_body(void *arg, int fd)
{
	(void)arg;
	(void)fd;
	socket(AF_INET, SOCK_STREAM, 0);
}

static void write_open_body(void *arg, int fd)
{
	char line[64];
	int w = open(arg, O_WRONLY | O_CREAT, 0600);

	snprintf(line, sizeof(line), "%d %d", w, w < 0 ? errno : 0);
	tmatch__write_all(fd, line, strlen(line));
}

Test(placement_helper, filter_refuses_sockets_and_writes)
{
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[65], want[32], created[300];
	size_t got = 0;

	sandbox_for(&sb, 1);
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch__sandbox_run(&sb, socket_body, NULL, buf, &got, &err), -1);
	cr_assert_eq(errno, EPERM);
	cr_assert_not_null(strstr(err.msg, "system-call filter"), "%s", err.msg);

	snprintf(created, sizeof(created), "%s/created", public_dir());
	cr_assert_eq(tmatch__sandbox_run(&sb, write_open_body, created, buf, &got, &err), 0, "%s",
	             err.msg);
	buf[got] = '\0';
	snprintf(want, sizeof(want), "-1 %d", EACCES);
	cr_assert_str_eq(buf, want);
	cr_assert_neq(access(created, F_OK), 0);
}

/* The auto mapper's crew inside the filter: pieces that each sleep 20 ms,
   so two threads both take some; the distinct thread ids are reported. */
struct crew_seen {
	pid_t tid[8];
};

static void crew_piece(void *arg, int i)
{
	struct crew_seen *s = arg;
	struct timespec ts = {0, 20 * 1000 * 1000};

	s->tid[i] = gettid();
	nanosleep(&ts, NULL);
}

static void threads_body(void *arg, int fd)
{
	static const struct tmatch__crew_ops ops = {NULL, NULL, crew_piece, NULL};
	struct crew_seen s;
	int order[8], distinct = 0;
	char line[32];

	(void)arg;
	for (int i = 0; i < 8; i++)
		order[i] = i;
	tmatch__crew_run(8, order, &ops, &s, 2);
	for (int i = 0; i < 8; i++) {
		int seen = 0;

		for (int k = 0; k < i; k++)
			seen |= s.tid[k] == s.tid[i];
		distinct += !seen;
	}
	snprintf(line, sizeof(line), "%d", distinct);
	tmatch__write_all(fd, line, strlen(line));
}

Test(placement_helper, filter_lets_the_mapper_use_threads)
{
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[65];
	size_t got = 0;

	sandbox_for(&sb, 1);
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch__sandbox_run(&sb, threads_body, NULL, buf, &got, &err), 0, "%s",
	             err.msg);
	buf[got] = '\0';
	cr_assert_str_eq(buf, "2");
}

/* Survives only where the filter is loose: writes what the call returned. */
static void report_call(int fd, long r)
{
	char line[64];

	snprintf(line, sizeof(line), "%ld %d", r, r < 0 ? errno : 0);
	tmatch__write_all(fd, line, strlen(line));
}

static void kill_other_body(void *arg, int fd)
{
	(void)arg;
	report_call(fd, kill(1, 0)); /* init, slurmstepd or any other process */
}

static void fork_body(void *arg, int fd)
{
	long r;

	(void)arg;
	/* clone as fork() makes it: a new process, not a thread */
	r = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	if (r == 0)
		_exit(0);
	report_call(fd, r);
}

static void flock_ex_body(void *arg, int fd)
{
	int f = open(arg, O_RDONLY);

	report_call(fd, flock(f, LOCK_EX | LOCK_NB)); /* a writer's lock, blocking the store */
}

/* Finding 10 of issue 33: kill() of another process, a fork-style clone and
   an exclusive flock were answered EPERM (or allowed) instead of ending
   the helper. Each now kills it with SIGSYS. */
Test(placement_helper, filter_kills_signals_to_others_forks_and_exclusive_locks)
{
	static const struct {
		tmatch__sandbox_fn body;
		const char *what;
	} cases[] = {{kill_other_body, "kill"}, {fork_body, "clone"}, {flock_ex_body, "flock"}};
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[65], path[PATH_MAX];
	size_t got = 0;

	write_public(path, sizeof(path), "lock", "");
	sandbox_for(&sb, 1);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		tmatch_error_clear(&err);
		got = 0;
		cr_expect_eq(tmatch__sandbox_run(&sb, cases[c].body, path, buf, &got, &err), -1,
		             "%s: the helper survived (it said \"%.*s\")", cases[c].what, (int)got,
		             buf);
		cr_expect_eq(errno, EPERM, "%s", cases[c].what);
		cr_expect_not_null(strstr(err.msg, "killed by its system-call filter"), "%s: %s",
		                   cases[c].what, err.msg);
	}
	remove_public(path);
}

/* ---- the filter on every architecture Debian builds Slurm for ------------ */

/* A classic-BPF machine as the kernel runs a seccomp program, on the
   seccomp_data of an architecture of either byte order. */
struct bpf_data {
	unsigned char bytes[64]; /* struct seccomp_data as that architecture lays it out */
	int big_endian;
};

static uint32_t bpf_word(const struct bpf_data *d, uint32_t k)
{
	const unsigned char *b = d->bytes + k;

	cr_assert_leq(k + 4, sizeof(d->bytes));
	return d->big_endian
	           ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
	           : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static void bpf_put(struct bpf_data *d, size_t off, uint64_t v, size_t len)
{
	for (size_t i = 0; i < len; i++)
		d->bytes[off + (d->big_endian ? len - 1 - i : i)] = (unsigned char)(v >> (8 * i));
}

static uint32_t bpf_run(const struct sock_filter *f, size_t n, const struct bpf_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t src = BPF_SRC(i->code) == BPF_X ? x : i->k;

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			a = BPF_MODE(i->code) == BPF_ABS   ? bpf_word(d, i->k)
			    : BPF_MODE(i->code) == BPF_MEM ? mem[i->k % BPF_MEMWORDS]
			    : BPF_MODE(i->code) == BPF_LEN ? 64
			                                   : i->k;
			break;
		case BPF_LDX:
			x = BPF_MODE(i->code) == BPF_MEM   ? mem[i->k % BPF_MEMWORDS]
			    : BPF_MODE(i->code) == BPF_LEN ? 64
			                                   : i->k;
			break;
		case BPF_ST:
			mem[i->k % BPF_MEMWORDS] = a;
			break;
		case BPF_STX:
			mem[i->k % BPF_MEMWORDS] = x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD:
				a += src;
				break;
			case BPF_SUB:
				a -= src;
				break;
			case BPF_MUL:
				a *= src;
				break;
			case BPF_DIV:
				a = src ? a / src : 0;
				break;
			case BPF_OR:
				a |= src;
				break;
			case BPF_AND:
				a &= src;
				break;
			case BPF_LSH:
				a <<= src;
				break;
			case BPF_RSH:
				a >>= src;
				break;
			case BPF_NEG:
				a = -a;
				break;
			default:
				cr_assert_fail("BPF ALU op %#x", i->code);
			}
			break;
		case BPF_JMP: {
			int yes;

			if (BPF_OP(i->code) == BPF_JA) {
				pc += i->k;
				break;
			}
			yes = BPF_OP(i->code) == BPF_JEQ   ? a == src
			      : BPF_OP(i->code) == BPF_JGT ? a > src
			      : BPF_OP(i->code) == BPF_JGE ? a >= src
			                                   : (a & src) != 0;
			pc += yes ? i->jt : i->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : i->k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		}
	}
	cr_assert_fail("the BPF program ran off its end");
	return 0;
}

/* What the filter built for `arch` answers to call `name` with args. */
static uint32_t filter_answer(const struct sock_filter *f, size_t n, uint32_t arch, int big,
                              const char *name, const uint64_t args[6])
{
	struct bpf_data d;
	int nr = seccomp_syscall_resolve_name_arch(arch, name);

	cr_assert_geq(nr, 0, "no %s on architecture %#x", name, arch);
	memset(&d, 0, sizeof(d));
	d.big_endian = big;
	bpf_put(&d, 0, (uint32_t)nr, 4);
	bpf_put(&d, 4, arch, 4);
	for (int i = 0; i < 6; i++)
		bpf_put(&d, 16 + 8 * (size_t)i, args[i], 8);
	return bpf_run(f, n, &d);
}

/* Finding 9 of issue 33: the raw BPF filter existed for x86_64 and aarch64
   only; ppc64el, s390x and riscv64 nodes ran the helper unfiltered. The
   allow-list is now built by libseccomp for the machine it runs on; here it
   is built for each of Debian's 64-bit architectures and run. */
Test(placement_helper, filter_is_built_for_every_architecture)
{
	static const struct {
		const char *name;
		uint32_t arch;
		int big_endian, clone_flags_arg;
	} arches[] = {
	    {"amd64", SCMP_ARCH_X86_64, 0, 0},    {"arm64", SCMP_ARCH_AARCH64, 0, 0},
	    {"ppc64el", SCMP_ARCH_PPC64LE, 0, 0}, {"s390x", SCMP_ARCH_S390X, 1, 1},
	    {"riscv64", SCMP_ARCH_RISCV64, 0, 0},
	};
	const uint64_t self = 4242, thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
	                                     CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
	                                     CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;

	for (size_t a = 0; a < sizeof(arches) / sizeof(arches[0]); a++) {
		uint32_t arch = arches[a].arch;
		int big = arches[a].big_endian, fa = arches[a].clone_flags_arg;
		uint64_t none[6] = {0}, rdonly[6] = {(uint64_t)-100, 0x1000, O_RDONLY},
		         wronly[6] = {(uint64_t)-100, 0x1000, O_WRONLY | O_CREAT},
		         mine[6] = {self, SIGABRT}, other[6] = {self + 1, SIGKILL},
		         shared[6] = {3, LOCK_SH}, excl[6] = {3, LOCK_EX}, thr[6] = {0},
		         proc[6] = {0};
		struct sock_filter prog[4096];
		void *ctx = NULL;
		int fd = memfd_create("bpf", 0);
		ssize_t len;
		size_t n;

		cr_assert_geq(fd, 0);
		cr_assert_eq(tmatch__sandbox_filter_new(arch, (pid_t)self, &ctx), 0, "%s",
		             arches[a].name);
		cr_assert_eq(seccomp_export_bpf(ctx, fd), 0);
		tmatch__sandbox_filter_free(ctx);
		len = pread(fd, prog, sizeof(prog), 0);
		close(fd);
		cr_assert_gt(len, 0);
		n = (size_t)len / sizeof(prog[0]);
		for (size_t i = 0; big && i < n; i++) { /* written in the target's byte order */
			prog[i].code = __builtin_bswap16(prog[i].code);
			prog[i].k = __builtin_bswap32(prog[i].k);
		}
		thr[fa] = thread;
		proc[fa] = SIGCHLD;
#define ANSWER(call, args) filter_answer(prog, n, arch, big, call, args)
		cr_expect_eq(ANSWER("read", none), SCMP_ACT_ALLOW, "%s read", arches[a].name);
		cr_expect_eq(ANSWER("mmap", none), SCMP_ACT_ALLOW, "%s mmap", arches[a].name);
		cr_expect_eq(ANSWER("openat", rdonly), SCMP_ACT_ALLOW, "%s openat", arches[a].name);
		cr_expect_eq(ANSWER("openat", wronly), SCMP_ACT_ERRNO(EACCES), "%s openat w",
		             arches[a].name);
		cr_expect_eq(ANSWER("ioctl", none), SCMP_ACT_ERRNO(ENOTTY), "%s", arches[a].name);
		cr_expect_eq(ANSWER("clone", thr), SCMP_ACT_ALLOW, "%s thread", arches[a].name);
		cr_expect_eq(ANSWER("clone", proc), SCMP_ACT_KILL_PROCESS, "%s fork",
		             arches[a].name);
		cr_expect_eq(ANSWER("kill", mine), SCMP_ACT_ALLOW, "%s raise", arches[a].name);
		cr_expect_eq(ANSWER("tgkill", mine), SCMP_ACT_ALLOW, "%s abort", arches[a].name);
		cr_expect_eq(ANSWER("kill", other), SCMP_ACT_KILL_PROCESS, "%s kill",
		             arches[a].name);
		cr_expect_eq(ANSWER("flock", shared), SCMP_ACT_ALLOW, "%s", arches[a].name);
		cr_expect_eq(ANSWER("flock", excl), SCMP_ACT_KILL_PROCESS, "%s", arches[a].name);
		/* ppc64el and s390x also multiplex sockets through socketcall */
		if (seccomp_syscall_resolve_name_arch(arch, "socket") >= 0)
			cr_expect_eq(ANSWER("socket", none), SCMP_ACT_KILL_PROCESS, "%s socket",
			             arches[a].name);
		if (seccomp_syscall_resolve_name_arch(arch, "socketcall") >= 0)
			cr_expect_eq(ANSWER("socketcall", none), SCMP_ACT_KILL_PROCESS,
			             "%s socketcall", arches[a].name);
		cr_expect_eq(ANSWER("execve", none), SCMP_ACT_KILL_PROCESS, "%s execve",
		             arches[a].name);
		cr_expect_eq(ANSWER("ptrace", none), SCMP_ACT_KILL_PROCESS, "%s ptrace",
		             arches[a].name);
		cr_expect_eq(ANSWER("setuid", none), SCMP_ACT_KILL_PROCESS, "%s setuid",
		             arches[a].name);
#undef ANSWER
		{
			/* a call of another architecture (its compat ABI) kills too */
			struct bpf_data d;

			memset(&d, 0, sizeof(d));
			d.big_endian = big;
			bpf_put(&d, 4, SCMP_ARCH_X86, 4);
			cr_expect_eq(bpf_run(prog, n, &d), SCMP_ACT_KILL_PROCESS, "%s",
			             arches[a].name);
		}
	}
}

/* ---- the helper's life, watched whole ------------------------------------ */

static void closed_pipe_body(void *arg, int fd)
{
	struct timespec ts = {30, 0};

	(void)arg;
	close(fd);
	nanosleep(&ts, NULL); /* no CPU, no pipe: only the wall clock can end it */
}

/* Finding 4 of issue 33: once the result pipe was closed the parent waited
   for the child without a deadline; a helper that closes fd 3 and sleeps
   held slurmstepd. It is killed at the deadline like any other. */
Test(placement_helper, helper_that_closes_its_pipe_and_sleeps_is_killed_in_time, .timeout = 15)
{
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[16];
	size_t got = 0;

	sandbox_for(&sb, 1);
	sb.max_time = 0.5;
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch__sandbox_run(&sb, closed_pipe_body, NULL, buf, &got, &err), -1);
	cr_expect_eq(errno, ETIME);
	cr_expect_str_eq(err.msg, "mapping exceeded max_map_time=0.5 s, killed");
}

static int kill_nothing(pid_t pid, int pidfd)
{
	(void)pid, (void)pidfd;
	return 0; /* as SIGKILL does to a process in uninterruptible sleep, for now */
}

/* A child that cannot end yet (a hung NFS read): slurmstepd waits the
   grace period after SIGKILL, no longer, and the child is handed back to
   be reaped later. */
Test(placement_helper, child_that_cannot_end_yet_is_left_pending, .timeout = 15)
{
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[16];
	size_t got = 0;
	pid_t pending = -1;
	int status;

	sandbox_for(&sb, 1);
	sb.max_time = 0.3;
	sb.grace = 0.3;
	sb.send_kill = kill_nothing;
	sb.pending = &pending;
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch__sandbox_run(&sb, closed_pipe_body, NULL, buf, &got, &err), -1);
	cr_expect_eq(errno, ETIME);
	cr_expect_not_null(strstr(err.msg, "did not end within 0.3 s of SIGKILL"), "%s", err.msg);
	cr_assert_gt(pending, 0);
	tmatch__sandbox_reap(pending); /* still there: returns at once */
	cr_assert_eq(kill(pending, 0), 0, "reaped too early");
	cr_assert_eq(kill(pending, SIGKILL), 0);
	cr_assert_eq(waitpid(pending, &status, 0), pending);
	cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* ---- descriptors ---------------------------------------------------------- */

/* In the sandbox: what fds 0-4 point to, one "N -> target" line each. */
static void fds_body(void *arg, int fd)
{
	char line[PATH_MAX + 32], link[32], target[PATH_MAX];

	(void)arg;
	for (int i = 0; i <= 4; i++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", i);
		n = readlink(link, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		snprintf(line, sizeof(line), "%d -> %s\n", i, n < 0 ? "-" : target);
		tmatch__write_all(fd, line, strlen(line));
	}
}

/* Finding 6 of issue 33: when fd 3 was free in the parent, /dev/null
   opened as fd 3 and the child's stdin, stdout and stderr all became the
   result pipe. Run from a process whose only descriptors are 0-2 (and the
   report's, far above). */
/* Runs fn(arg) in a child whose only descriptors are 0-2, `keep` (moved to
   fd 201; -1 = none) and the report, fd 200, which fn writes: into out. */
static void from_bare_process(void (*fn)(void *arg), void *arg, int keep, char *out, size_t len)
{
	int report[2], status;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(report), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (dup2(report[1], 200) < 0 || (keep >= 0 && dup2(keep, 201) < 0) ||
		    close_range(3, 199, 0) < 0)
			_exit(3);
		fn(arg);
		_exit(0);
	}
	close(report[1]);
	n = read(report[0], out, len - 1);
	close(report[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_gt(n, 0);
	out[n] = '\0';
}

static void sandbox_fds(void *arg)
{
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[1024];
	size_t got = 0;

	(void)arg;
	sandbox_for(&sb, 1);
	sb.max_result = sizeof(buf);
	tmatch_error_clear(&err);
	if (tmatch__sandbox_run(&sb, fds_body, NULL, buf, &got, &err) < 0)
		tmatch__write_all(200, err.msg, strlen(err.msg));
	else
		tmatch__write_all(200, buf, got);
}

Test(placement_helper, descriptors_with_fd_3_free_in_the_parent)
{
	char out[2048];

	from_bare_process(sandbox_fds, NULL, -1, out, sizeof(out));
	cr_expect_not_null(strstr(out, "0 -> /dev/null\n"), "%s", out);
	cr_expect_not_null(strstr(out, "1 -> /dev/null\n"), "%s", out);
	cr_expect_not_null(strstr(out, "2 -> /dev/null\n"), "%s", out);
	cr_expect_not_null(strstr(out, "3 -> pipe:["), "%s", out);
	cr_expect_not_null(strstr(out, "4 -> -\n"), "%s", out);
}

/* ---- oom_score_adj, death of the parent ----------------------------------- */

static void oom_body(void *arg, int fd)
{
	char buf[32];
	int f = open("/proc/self/oom_score_adj", O_RDONLY);
	ssize_t n = f < 0 ? -1 : read(f, buf, sizeof(buf));

	(void)arg;
	if (n > 0)
		tmatch__write_all(fd, buf, (size_t)n);
}

static int set_oom(const char *value)
{
	int f = open("/proc/self/oom_score_adj", O_WRONLY);
	int ok = f >= 0 && write(f, value, strlen(value)) == (ssize_t)strlen(value);

	if (f >= 0)
		close(f);
	return ok ? 0 : -1;
}

/* Finding 2 of issue 33: the helper kept slurmstepd's oom_score_adj
   (-1000): up to max_map_memory per step the OOM killer never picked. As
   slurmstepd (which needs CAP_SYS_RESOURCE to go below 0). */
Test(placement_helper, helper_leaves_slurmstepds_oom_score_adj)
{
	tmatch__sandbox_t sb;
	tmatch_error_t err;
	char buf[33];
	size_t got = 0;

	if (set_oom("-1000") < 0)
		cr_skip_test("oom_score_adj -1000 needs CAP_SYS_RESOURCE, which this machine's "
		             "root lacks: oom_score_adj_is_raised_to_zero checks the step");
	sandbox_for(&sb, 1);
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch__sandbox_run(&sb, oom_body, NULL, buf, &got, &err), 0, "%s", err.msg);
	set_oom("0");
	buf[got] = '\0';
	cr_expect_str_eq(buf, "0\n");
}

/* The same step on a stand-in for /proc/self/oom_score_adj: raised to 0
   from below, a value above 0 (the user's own) kept. */
Test(placement_helper, oom_score_adj_is_raised_to_zero)
{
	static const struct {
		const char *before, *after;
	} cases[] = {{"-1000\n", "0\n"}, {"-17\n", "0\n"}, {"0\n", "0\n"}, {"300\n", "300\n"}};
	char path[PATH_MAX], got[32];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		FILE *f;
		size_t n;

		write_public(path, sizeof(path), "oom_score_adj", cases[c].before);
		cr_assert_eq(tmatch__sandbox_oom_reset(path), 0);
		cr_assert_not_null(f = fopen(path, "r"));
		n = fread(got, 1, sizeof(got) - 1, f);
		fclose(f);
		got[n] = '\0';
		/* written over the value, as the kernel's file takes it: "0\n" then
		   what was left of a longer text */
		cr_expect_eq(strncmp(got, cases[c].after, strlen(cases[c].after)), 0, "%s -> %s",
		             cases[c].before, got);
		remove_public(path);
	}
	cr_expect_eq(tmatch__sandbox_oom_reset("/nonexistent/oom_score_adj"), -1);
}

/* Sleeps once it has said so through the FIFO at arg. */
static void ready_then_sleep_body(void *arg, int fd)
{
	struct timespec ts = {30, 0};
	int f = open(arg, O_WRONLY);

	(void)fd;
	if (f >= 0) {
		tmatch__write_all(f, "r", 1);
		close(f);
	}
	nanosleep(&ts, NULL);
}

/* The child of `parent` if it has one (from /proc), else 0. */
static pid_t child_of(pid_t parent)
{
	char path[64], buf[64];
	FILE *f;
	long pid = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)parent, (long)parent);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f))
		pid = atol(buf);
	if (f)
		fclose(f);
	return (pid_t)pid;
}

/* kill -9 of the root side: its helper, an orphan of ours now (the test
   process is a subreaper), must already be dying of SIGKILL. */
static void kill_root_side(pid_t root_side, pid_t helper)
{
	int status;
	pid_t r = 0;

	cr_assert_eq(kill(root_side, SIGKILL), 0);
	cr_assert_eq(waitpid(root_side, &status, 0), root_side);
	for (int i = 0; i < 100 && (r = waitpid(helper, &status, WNOHANG)) == 0; i++) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	if (r == 0) {
		kill(helper, SIGKILL);
		waitpid(helper, &status, 0);
		cr_assert_fail("the helper outlived its parent by 2 s");
	}
	cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* Finding 5 of issue 33: PR_SET_PDEATHSIG was set before the change of
   uid, which clears it: after kill -9 of the root side the helper lived
   on. Here the root side is a process of ours, killed while its helper
   sleeps; the helper must die with it (SIGKILL). */
Test(placement_helper, helper_dies_with_the_root_side, .timeout = 30)
{
	char dir[] = "/tmp/tm-pdeath-XXXXXX", fifo[64], c;
	pid_t root_side, helper = 0;
	int f;

	if (geteuid() == 0 && target_uid() == geteuid())
		cr_skip_test("needs a job user other than the tester");
	if (geteuid() != 0)
		cr_skip_test("a change of uid (what clears the setting) needs root");
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(fifo, sizeof(fifo), "%s/ready", dir);
	cr_assert_eq(mkfifo(fifo, 0666), 0);
	cr_assert_eq(chmod(fifo, 0666), 0);
	root_side = fork();
	cr_assert_geq(root_side, 0);
	if (root_side == 0) {
		tmatch__sandbox_t sb;
		tmatch_error_t err;
		char buf[16];
		size_t got = 0;

		sandbox_for(&sb, 0);
		sb.max_time = 60;
		tmatch__sandbox_run(&sb, ready_then_sleep_body, fifo, buf, &got, &err);
		_exit(0);
	}
	f = open(fifo, O_RDONLY);
	cr_assert_geq(f, 0);
	cr_assert_eq(read(f, &c, 1), 1); /* the helper has set itself up */
	close(f);
	helper = child_of(root_side);
	cr_assert_gt(helper, 0);
	kill_root_side(root_side, helper);
	unlink(fifo);
	rmdir(dir);
}

/* ---- what the helper decides --------------------------------------------- */

struct node {
	tmatch_config_t admin;
	tmatch_place_node_in_t nin;
	tmatch_place_node_prep_t prep;
	tmatch_place_helper_in_t in;
	tmatch_place_helper_out_t out;
	tmatch_error_t err;
	int ranks[8];
	char profile[PATH_MAX];
	char value[PATH_MAX + 128];
};

/* 8 tasks of an 8-rank step on a 2-socket, 8-core node, the pairs8 profile
   (spank_profiles.h) given by the user with `extra` options. */
static void node_setup(struct node *n, const char *extra)
{
	memset(n, 0, sizeof(*n));
	tmatch_config_init(&n->admin);
	for (int i = 0; i < 8; i++)
		n->ranks[i] = i;
	write_public(n->profile, sizeof(n->profile), "pairs8.yml", pairs8);
	snprintf(n->value, sizeof(n->value), "%.1024s%.64s", n->profile, extra ? extra : "");
	n->nin.cfg = &n->admin;
	n->nin.topology = "synthetic:pack:2 core:4 pu:1";
	n->nin.nlocal = 8;
	cr_assert_eq(tmatch_place_node_prepare(&n->nin, &n->prep), 0, "%s", n->prep.tree_error);
	n->in.admin = &n->admin;
	n->in.user_value = n->value;
	n->in.node_index = 0;
	n->in.node_count = 1;
	n->in.nlocal = 8;
	n->in.ntasks_total = 8;
	n->in.cpus_per_task = 1;
	n->in.ranks = n->ranks;
	n->in.prep = &n->prep;
	n->in.uid = target_uid();
	n->in.gid = target_gid();
	tmatch_error_clear(&n->err);
	n->in.helper_fd = tmatch_place_helper_open(HELPER, &n->err);
	cr_assert_geq(n->in.helper_fd, 0, "%s", n->err.msg);
}

static int node_run(struct node *n)
{
	return tmatch_place_helper_run(&n->in, &n->out, &n->err);
}

static void node_teardown(struct node *n)
{
	tmatch_place_node_destroy(n->out.plan);
	tmatch_place_node_prep_clear(&n->prep);
	if (n->in.helper_fd >= 0)
		close(n->in.helper_fd);
	n->in.helper_fd = -1;
}

/* node_setup with a ring of `ranks` ranks as the user's profile (large ones
   keep the helper busy a while), the step of as many tasks. */
static void node_with_ring(struct node *n, int ranks, double max_time)
{
	node_setup(n, NULL);
	write_public(n->profile, sizeof(n->profile), "ring.yml", "");
	cr_assert_eq(write_ring_profile(n->profile, ranks), 0);
	n->in.user_value = n->profile;
	n->in.ntasks_total = ranks;
	n->admin.max_map_time = max_time;
}

Test(placement_helper, places_the_node_as_the_user)
{
	struct node n;
	hwloc_bitmap_t seen = hwloc_bitmap_alloc();

	node_setup(&n, NULL);
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_not_null(n.out.plan);
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_PLACED);
	cr_assert_eq(n.out.plan->ntasks, 8);
	cr_assert_eq(n.out.user_profile, 1);
	cr_assert_str_eq(n.out.node_name, "localhost");
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(n.out.plan->task[i].rank, i);
		cr_assert(hwloc_bitmap_isincluded(n.out.plan->task[i].cpuset, n.out.plan->allowed));
		cr_assert_not(hwloc_bitmap_intersects(seen, n.out.plan->task[i].cpuset));
		hwloc_bitmap_or(seen, seen, n.out.plan->task[i].cpuset);
	}
	/* pairs8 talks across the halves: the mapping beats packing */
	cr_assert_lt(n.out.plan->cost, n.out.plan->cost_packed);
	hwloc_bitmap_free(seen);
	node_teardown(&n);
}

/* The leaves a run gave, in task order. */
static void leaves_of(const struct node *n, int *leaf)
{
	for (int i = 0; i < 8; i++)
		leaf[i] = n->out.plan->task[i].leaf;
}

/* Started ahead (slurmstepd's init_post_opt), the helper waits, reading
   nothing and with no deadline running, for its input: started 1.5 s
   before a run whose limit is 1 s, it places as a helper started by the
   run itself. */
Test(placement_helper, started_ahead_places_as_started_now)
{
	struct node n;
	int now[8], ahead[8];
	struct timespec wait = {1, 500 * 1000 * 1000};

	node_setup(&n, NULL);
	n.admin.max_map_time = 1;
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	leaves_of(&n, now);
	tmatch_place_node_destroy(n.out.plan);
	n.out.plan = NULL;

	n.in.started = tmatch_place_helper_start(n.in.helper_fd, &n.err);
	cr_assert_not_null(n.in.started, "%s", n.err.msg);
	cr_assert_gt(child_of(getpid()), 0, "it runs before its input");
	nanosleep(&wait, NULL);
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_PLACED);
	leaves_of(&n, ahead);
	cr_expect_arr_eq(now, ahead, sizeof(now));
	cr_expect_eq(child_of(getpid()), 0, "the run reaped it");
	node_teardown(&n);
}

/* Started ahead from another directory, the helper reads a relative
   profile from the job's working directory: the root side's when it runs
   it (Slurm enters it just before user_init). */
Test(placement_helper, started_ahead_reads_from_the_jobs_directory)
{
	struct node n;
	char cwd[PATH_MAX];

	node_setup(&n, NULL);
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir("/"), 0);
	n.in.started = tmatch_place_helper_start(n.in.helper_fd, &n.err);
	cr_assert_not_null(n.in.started, "%s", n.err.msg);
	cr_assert_eq(chdir(public_dir()), 0);
	n.in.user_value = "pairs8.yml";
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_expect_eq(n.out.plan->status, TMATCH_PLACE_PLACED);
	cr_expect_eq(n.out.user_profile, 1);
	cr_assert_eq(chdir(cwd), 0);
	node_teardown(&n);
}

/* A helper gone before its word (its program ends at once, as a broken
   install would): the run fails with a line, and the root side lives on
   (the word to a closed socket is EPIPE; to a pipe it was SIGPIPE, which
   kills a process that does not ignore it). */
Test(placement_helper, helper_gone_before_its_word_fails_without_a_signal)
{
	struct node n;
	struct timespec wait = {0, 300 * 1000 * 1000};

	node_setup(&n, NULL);
	close(n.in.helper_fd);
	n.in.helper_fd = tmatch_place_helper_open("/usr/bin/true", &n.err);
	cr_assert_geq(n.in.helper_fd, 0, "%s", n.err.msg);
	n.in.started = tmatch_place_helper_start(n.in.helper_fd, &n.err);
	cr_assert_not_null(n.in.started, "%s", n.err.msg);
	nanosleep(&wait, NULL); /* it has ended by now */
	cr_assert_eq(node_run(&n), -1);
	cr_expect_neq(n.err.msg[0], '\0');
	cr_expect_eq(child_of(getpid()), 0, "reaped");
	node_teardown(&n);
}

/* A step that ends before user_init: the helper started ahead is killed
   and reaped, and nothing of it is left. */
Test(placement_helper, started_ahead_and_abandoned_leaves_nothing)
{
	struct node n;
	pid_t helper;
	int status;

	node_setup(&n, NULL);
	n.in.started = tmatch_place_helper_start(n.in.helper_fd, &n.err);
	cr_assert_not_null(n.in.started, "%s", n.err.msg);
	helper = child_of(getpid());
	cr_assert_gt(helper, 0);
	cr_expect_eq(tmatch_place_helper_abandon(n.in.started), 0, "it ended at once");
	n.in.started = NULL;
	cr_expect_eq(waitpid(helper, &status, WNOHANG), -1, "already reaped");
	cr_expect_eq(errno, ECHILD);
	node_teardown(&n);
}

/* The default mapper's search cut to half of max_map_time in the helper
   reaches the root side, whose summary line (verbose) says it. */
Test(placement_helper, search_time_cut_reaches_the_summary)
{
	struct node n;
	char *line;

	node_setup(&n, ",search_time=9");
	n.admin.search_time = 30;
	n.admin.max_map_time = 4;
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_not_null(n.out.plan);
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_PLACED, "%s", n.out.plan->why);
	cr_expect_float_eq(n.out.plan->search_time, 2, 1e-12);
	cr_expect_float_eq(n.out.plan->search_cut_from, 9, 1e-12, "the user's, not the site's");
	line = tmatch_place_summary_line(n.out.plan, 0);
	cr_assert_not_null(line);
	cr_expect(strstr(line, ", search_time=9 s cut to 2 s (half of max_map_time)"), "%s", line);
	free(line);
	node_teardown(&n);

	node_setup(&n, ",search_time=1.5"); /* within the half: nothing said */
	n.admin.search_time = 30;
	n.admin.max_map_time = 4;
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_expect_float_eq(n.out.plan->search_time, 1.5, 1e-12);
	cr_expect_float_eq(n.out.plan->search_cut_from, 0, 1e-12);
	line = tmatch_place_summary_line(n.out.plan, 0);
	cr_assert_not_null(line);
	cr_expect_null(strstr(line, "search_time"), "%s", line);
	free(line);
	node_teardown(&n);
}

Test(placement_helper, user_cannot_loosen_the_sites_failure_mode)
{
	struct node n;

	node_setup(&n, ",failure=fallback");
	n.admin.failure = TMATCH_FAILURE_FAIL;
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_eq(n.out.cfg.failure, TMATCH_FAILURE_FAIL);
	node_teardown(&n);
}

Test(placement_helper, user_tightens_the_time_limit_and_the_helper_is_killed)
{
	struct node n;

	node_setup(&n, ",max_map_time=0.000000001,failure=fail");
	cr_assert_eq(node_run(&n), -1);
	cr_assert_eq(errno, ETIME);
	cr_assert_str_eq(n.err.msg, "localhost: mapping exceeded max_map_time=1e-09 s, killed");
	cr_assert_eq(n.out.cfg.failure, TMATCH_FAILURE_FAIL); /* the user's, from the hello */
	cr_assert_null(n.out.plan);
	node_teardown(&n);
}

Test(placement_helper, malformed_user_value_is_the_helpers_problem)
{
	struct node n;

	node_setup(&n, ",bogus=1");
	cr_assert_eq(node_run(&n), -1);
	cr_assert_eq(errno, EINVAL);
	/* where, not what: the root side repeats nothing the user wrote */
	cr_assert_not_null(strstr(n.err.msg, "localhost: --treematch is refused here (column "),
	                   "%s", n.err.msg);
	cr_assert_null(strstr(n.err.msg, "bogus"), "%s", n.err.msg);
	node_teardown(&n);
}

/* The prediction beside the profile as `name`.predict (dir of n->profile). */
static void write_prediction(struct node *n, const char *text)
{
	char path[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s.predict", n->profile);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(path, 0644), 0);
}

Test(placement_helper, verbose_says_the_predicted_gain_kept_beside_the_profile)
{
	struct node n;

	/* none there: nothing said */
	node_setup(&n, ",verbose=1");
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_str_eq(n.out.plan->note, "");
	node_teardown(&n);

	node_setup(&n, ",verbose=1");
	write_prediction(&n, "treematch-prediction 1\n# trace t, topology x\n"
	                     "packed 0.4\nrr 0.5\nauto 0.1\n");
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_not_null(strstr(n.out.plan->note, "auto 0.1 s, packed 0.4 s: 4.00x"), "%s",
	                   n.out.plan->note);
	cr_assert_not_null(strstr(n.out.plan->note, "pairs8.yml.predict"), "%s", n.out.plan->note);
	node_teardown(&n);

	/* quiet without verbose, and on the step's other nodes */
	node_setup(&n, NULL);
	write_prediction(&n, "treematch-prediction 1\npacked 0.4\nauto 0.1\n");
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_str_eq(n.out.plan->note, "");
	node_teardown(&n);

	/* another mapper than the one predicted: says how to predict it */
	node_setup(&n, ",verbose=1,mapper=greedy");
	write_prediction(&n, "treematch-prediction 1\npacked 0.4\nauto 0.1\n");
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_not_null(strstr(n.out.plan->note, "no predicted time for mapper=greedy"), "%s",
	                   n.out.plan->note);
	node_teardown(&n);

	/* damaged: the file and line, none of its text, and the node still placed */
	node_setup(&n, ",verbose=1");
	write_prediction(&n, "treematch-prediction 1\npacked 0.4\nsecret-text here\n");
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_PLACED);
	cr_assert_not_null(strstr(n.out.plan->note, "pairs8.yml.predict:3"), "%s",
	                   n.out.plan->note);
	cr_assert_null(strstr(n.out.plan->note, "secret"), "%s", n.out.plan->note);
	node_teardown(&n);
}

/* Node 1 of a 2-node step (ranks 0-3 here), the network given as the root
   side reads it: its text, its path, slurm.conf's text and the partition. */
static void two_nodes(struct node *n, const char *text, const char *file, const char *slurm,
                      const char *partition)
{
	node_setup(n, NULL);
	tmatch_place_node_prep_clear(&n->prep);
	n->nin.nlocal = 4;
	cr_assert_eq(tmatch_place_node_prepare(&n->nin, &n->prep), 0, "%s", n->prep.tree_error);
	n->in.nlocal = 4;
	n->in.node_count = 2;
	n->in.nodelist = "n[1-2]";
	n->in.topology_conf = text;
	n->in.topology_file = file;
	n->in.slurm_conf = slurm;
	n->in.partition = partition;
}

/* The lowest switch level of task 0's position: "index/count", or "". */
static void lowest_switch(const struct node *n, char *buf, size_t len)
{
	const tmatch_affinity_pos_t *p = &n->out.plan->task[0].pos;

	buf[0] = '\0';
	for (int l = 0; l < p->nlevels; l++)
		if (!strcmp(p->level[l].name, "switch"))
			snprintf(buf, len, "%d/%d", p->level[l].index, p->level[l].count);
}

Test(placement_helper, positions_follow_the_partitions_topology)
{
	static const char yaml[] = "- topology: eth\n"
	                           "  cluster_default: true\n"
	                           "  flat: true\n"
	                           "- topology: ib\n"
	                           "  tree:\n"
	                           "    switches:\n"
	                           "      - switch: top\n"
	                           "        children: s[1-2]\n"
	                           "      - switch: s1\n"
	                           "        nodes: n1\n"
	                           "      - switch: s2\n"
	                           "        nodes: n2\n",
	                  slurm[] =
	                      "NodeName=n[1-2] CPUs=8\nPartitionName=p Nodes=ALL Topology=ib\n",
	                  torus[] = "- topology: t\n"
	                            "  torus3d:\n"
	                            "    toruses:\n"
	                            "      - name: pod\n"
	                            "        dims: {x: 2, y: 1, z: 1}\n"
	                            "        nodes: n[1-2]\n"
	                            "        placements:\n"
	                            "          - dims: {x: 3, y: 1, z: 1}\n";
	struct node n;
	char sw[32];

	/* the partition's topology: n1 under s1, one of the two switches */
	two_nodes(&n, yaml, "/etc/slurm/topology.yaml", slurm, "p");
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_PLACED);
	lowest_switch(&n, sw, sizeof(sw));
	cr_assert_str_eq(sw, "0/2");
	cr_assert_str_eq(n.out.plan->note, "");
	node_teardown(&n);
	/* another partition: the cluster default, flat: one switch over both */
	two_nodes(&n, yaml, "/etc/slurm/topology.yaml", slurm, "other");
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	lowest_switch(&n, sw, sizeof(sw));
	cr_assert_str_eq(sw, "0/1");
	node_teardown(&n);
	/* a torus the tree cannot hold: one flat switch, and a note that says
	   so, naming the file and line, without the file's text */
	two_nodes(&n, torus, "/etc/slurm/topology.yaml", NULL, NULL);
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_PLACED);
	lowest_switch(&n, sw, sizeof(sw));
	cr_assert_str_eq(sw, "0/1");
	cr_assert_not_null(
	    strstr(n.out.plan->note, "/etc/slurm/topology.yaml cannot be used (line 8, column 13)"),
	    "%s", n.out.plan->note);
	cr_assert_not_null(strstr(n.out.plan->note, "positions under one flat switch"), "%s",
	                   n.out.plan->note);
	node_teardown(&n);
}

Test(placement_helper, off_is_nothing_to_do)
{
	struct node n;

	node_setup(&n, NULL);
	n.in.user_value = "off";
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_null(n.out.plan);
	cr_assert_eq(n.out.cfg.enabled, 0);
	node_teardown(&n);
}

Test(placement_helper, device_and_fifo_profiles_are_refused_at_once, .timeout = 20)
{
	struct node n;
	char fifo[PATH_MAX];

	node_setup(&n, NULL);
	n.in.user_value = "/dev/zero";
	cr_assert_eq(node_run(&n), -1);
	cr_assert_str_eq(n.err.msg, "localhost: cannot read profile /dev/zero: not a regular file");
	snprintf(fifo, sizeof(fifo), "%s/p.yml", public_dir());
	cr_assert_eq(mkfifo(fifo, 0666), 0);
	n.in.user_value = fifo;
	cr_assert_eq(node_run(&n), -1);
	cr_assert_not_null(strstr(n.err.msg, "not a regular file"), "%s", n.err.msg);
	node_teardown(&n);
}

Test(placement_helper, admin_default_of_another_size_is_skipped)
{
	struct node n;

	node_setup(&n, NULL);
	/* as plugstack.conf's profile= sets it */
	cr_assert_eq(
	    tmatch_config_parse_string(&n.admin, n.profile, TMATCH_CONFIG_ADMIN, "test", &n.err), 0,
	    "%s", n.err.msg);
	n.in.user_value = NULL;
	n.in.ntasks_total = 16; /* 8 here, 8 on another node */
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_not_null(n.out.plan);
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_SKIPPED);
	cr_assert_eq(n.out.plan->why_level, TMATCH_LOG_DEBUG);
	cr_assert_not_null(strstr(n.out.plan->why, "default profile has 8 ranks"), "%s",
	                   n.out.plan->why);
	node_teardown(&n);
}

/* ---- hostile inputs cost the root side nothing --------------------------- */

Test(placement_helper, forged_node_list_and_huge_profile_stay_in_the_helper, .timeout = 60)
{
	enum { RANKS = 1048576 };
	struct node n;
	long rss0;
	double cpu0;

	/* a 1,048,576-rank ring: ~300 MB of parsing, all of it in the helper */
	node_with_ring(&n, RANKS, 50);
	n.in.node_count = 2;
	n.in.nodelist = "n[0-999999]"; /* the job's environment, forged */

	rss0 = maxrss_kib();
	cpu0 = cpu_self();
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_lt(cpu_self() - cpu0, 0.2);
	cr_assert_leq(maxrss_kib() - rss0, 16 * 1024);
	/* the forged list names 1,000,000 nodes, not 2: not used */
	cr_assert_str_eq(n.out.node_name, "localhost");
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_PLACED);
	node_teardown(&n);
}

/* ---- the helper program, as the plugin starts it -------------------------- */

/* The probe's report of the helper (the node's input), from fd 201. */
static void helper_probe(void *arg)
{
	tmatch_place_helper_in_t in = *(const tmatch_place_helper_in_t *)arg;
	tmatch_error_t err;
	char buf[4096];
	size_t have = 0;

	in.helper_fd = 201;
	tmatch_error_clear(&err);
	if (tmatch__helper_probe(&in, buf, sizeof(buf), &have, &err) < 0)
		tmatch__write_all(200, err.msg, strlen(err.msg));
	else
		tmatch__write_all(200, buf, have);
}

/* The helper as the plugin runs it: a program of its own (finding 3: it
   was a fork of slurmstepd), nothing in its environment (finding 10: it
   read slurmstepd's HOME, XDG_CACHE_HOME and LD_LIBRARY_PATH), the job's
   user for good, filtered, stdio on /dev/null and the pipe on 3 (finding
   6), oom_score_adj 0 (finding 2). */
Test(placement_helper, helper_program_is_a_clean_confined_process)
{
	struct node n;
	char out[4096], want[PATH_MAX + 32], exe[PATH_MAX];
	ssize_t len;

	node_setup(&n, NULL);
	/* started from a process with fd 3 free, as finding 6 saw slurmstepd */
	from_bare_process(helper_probe, &n.in, n.in.helper_fd, out, sizeof(out));
	snprintf(want, sizeof(want), "Uid:\t%u\t%u\t%u\t%u\n", (unsigned)n.in.uid,
	         (unsigned)n.in.uid, (unsigned)n.in.uid, (unsigned)n.in.uid);
	cr_expect_not_null(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "Gid:\t%u\t%u\t%u\t%u\n", (unsigned)n.in.gid,
	         (unsigned)n.in.gid, (unsigned)n.in.gid, (unsigned)n.in.gid);
	cr_expect_not_null(strstr(out, want), "%s", out);
	cr_expect_not_null(strstr(out, "NoNewPrivs:\t1\n"), "%s", out);
	cr_expect_not_null(strstr(out, "Seccomp:\t2\n"), "%s", out);
	cr_expect_not_null(strstr(out, "fd 0 -> /dev/null\n"), "%s", out);
	cr_expect_not_null(strstr(out, "fd 1 -> /dev/null\n"), "%s", out);
	cr_expect_not_null(strstr(out, "fd 2 -> /dev/null\n"), "%s", out);
	cr_expect_not_null(strstr(out, "fd 3 -> pipe:["), "%s", out);
	cr_expect_not_null(strstr(out, "fd 4 -> -\n"), "its input is closed: %s", out);
	cr_expect_not_null(strstr(out, "fd 5 -> -\n"), "%s", out);
	len = readlink(HELPER, exe, sizeof(exe) - 1);
	snprintf(want, sizeof(want), "exe %s\n", len > 0 ? (exe[len] = '\0', exe) : HELPER);
	cr_expect_not_null(strstr(out, want), "%s", out);
	cr_expect_not_null(strstr(out, "environ 0\n"), "%s", out);
	cr_expect_not_null(strstr(out, "oom_score_adj 0\n"), "%s", out);
	node_teardown(&n);
}

/* Another process's memory holds `needle` (read through /proc, as root). */
static int memory_holds(pid_t pid, const char *needle)
{
	char path[64], line[512];
	FILE *maps;
	int mem, found = 0;
	size_t nlen = strlen(needle);
	static char chunk[1 << 20];

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%ld/mem", (long)pid);
	mem = open(path, O_RDONLY);
	while (maps && mem >= 0 && !found && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r')
			continue;
		for (unsigned long at = lo; at < hi && !found;) {
			size_t want = hi - at < sizeof(chunk) ? hi - at : sizeof(chunk);
			ssize_t r = pread(mem, chunk, want, (off_t)at);

			if (r <= 0)
				break;
			found = memmem(chunk, (size_t)r, needle, nlen) != NULL;
			at += (size_t)r > nlen ? (size_t)r - nlen : (size_t)r;
		}
	}
	if (maps)
		fclose(maps);
	if (mem >= 0)
		close(mem);
	return found;
}

/* What the watcher saw of the helper while the root side waited for it. */
struct seen_helper {
	pid_t root_side; /* the thread that starts it */
	pid_t pid;
	char exe[PATH_MAX];
	long environ_bytes;
	int holds_secret;
};

static char root_side_secret[64]; /* as slurmstepd holds its plugins' passwords */

static void *watch_helper(void *arg)
{
	struct seen_helper *s = arg;
	char path[64];
	double t0 = 0;

	for (int i = 0; i < 20000 && !s->pid; i++) { /* its start: at most 20 s */
		struct timespec ts = {0, 1000 * 1000};

		s->pid = child_of(s->root_side);
		if (!s->pid)
			nanosleep(&ts, NULL);
	}
	if (!s->pid)
		return NULL;
	/* a program of its own once exec'd; a fork keeps the parent's image */
	for (;;) {
		struct timespec ts = {0, 1000 * 1000}, now;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%ld/exe", (long)s->pid);
		n = readlink(path, s->exe, sizeof(s->exe) - 1);
		s->exe[n > 0 ? n : 0] = '\0';
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!t0)
			t0 = (double)now.tv_sec + now.tv_nsec * 1e-9;
		if (n <= 0 || !strstr(s->exe, "test_placement_helper") ||
		    (double)now.tv_sec + now.tv_nsec * 1e-9 - t0 > 0.3)
			break;
		nanosleep(&ts, NULL);
	}
	if (kill(s->pid, SIGSTOP) < 0)
		return NULL;
	{
		char buf[65536];
		int fd;
		ssize_t r;

		snprintf(path, sizeof(path), "/proc/%ld/environ", (long)s->pid);
		fd = open(path, O_RDONLY);
		s->environ_bytes = 0;
		while (fd >= 0 && (r = read(fd, buf, sizeof(buf))) > 0)
			s->environ_bytes += r;
		if (fd >= 0)
			close(fd);
	}
	s->holds_secret = memory_holds(s->pid, root_side_secret);
	kill(s->pid, SIGCONT);
	return NULL;
}

/* Finding 3 of issue 33: the helper was a fork of slurmstepd and held all
   its memory (the step credential, acct_gather's passwords) and its
   environment. Watched while it parses a large profile: another program,
   with nothing of the root side's memory or environment. */
Test(placement_helper, helper_holds_nothing_of_the_root_side, .timeout = 120)
{
	struct seen_helper seen;
	struct node n;
	pthread_t watcher;

	if (geteuid() != 0)
		cr_skip_test("reading another user's process memory needs root");
	snprintf(root_side_secret, sizeof(root_side_secret), "ProfileInfluxDBPass=%ld-%ld",
	         (long)getpid(), (long)time(NULL));
	node_with_ring(&n, 262144, 60);
	memset(&seen, 0, sizeof(seen));
	seen.root_side = (pid_t)syscall(SYS_gettid);
	cr_assert_eq(pthread_create(&watcher, NULL, watch_helper, &seen), 0);
	node_run(&n); /* the profile's size is not the step's: fails, after the parse */
	pthread_join(watcher, NULL);
	cr_assert_gt(seen.pid, 0, "the helper was never seen");
	cr_expect_null(strstr(seen.exe, "test_placement_helper"), "a fork of the root side: %s",
	               seen.exe);
	cr_expect_not_null(strstr(seen.exe, "treematch-helper"), "%s", seen.exe);
	cr_expect_eq(seen.environ_bytes, 0, "it has an environment");
	cr_expect_eq(seen.holds_secret, 0, "the root side's memory is in the helper");
	node_teardown(&n);
}

/* Finding 5, as the plugin runs its helper: the root side killed (-9)
   while the helper parses a large profile; the helper dies with it. */
Test(placement_helper, helper_program_dies_with_the_root_side, .timeout = 60)
{
	struct node n;
	pid_t root_side, helper = 0;

	if (geteuid() != 0)
		cr_skip_test("a change of uid (what clears the setting) needs root");
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	node_with_ring(&n, 1048576, 50);
	root_side = fork();
	cr_assert_geq(root_side, 0);
	if (root_side == 0) {
		node_run(&n);
		_exit(0);
	}
	/* started from its own program, confined (its setup is a few ms) */
	for (int i = 0; i < 10000; i++) {
		char path[64], exe[PATH_MAX];
		struct timespec ts = {0, 1000 * 1000};
		ssize_t len;

		helper = child_of(root_side);
		snprintf(path, sizeof(path), "/proc/%ld/exe", (long)helper);
		len = helper ? readlink(path, exe, sizeof(exe) - 1) : -1;
		if (len > 0 && (exe[len] = '\0', strstr(exe, "treematch-helper")))
			break;
		helper = 0;
		nanosleep(&ts, NULL);
	}
	cr_assert_gt(helper, 0, "the helper was never seen");
	{
		struct timespec ts = {0, 300 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	kill_root_side(root_side, helper);
	node_teardown(&n);
}

/* The stand-in for a helper whose parser runs hostile code. */
#define HOSTILE TMATCH_BUILDDIR "/tests/unit/hostile_helper"

/* Finding 10 of issue 33: the root side's result buffer grew 460 bytes per
   local task, so above ~36,000 local tasks (MaxTasksPerNode goes to
   65,536) a hostile helper took it past +16 MiB. It reads one record at a
   time now, and a head may not announce more tasks than Slurm's count and
   the tree's slots. At 65,536 local tasks: a head of 65,536 tasks on an
   8-slot node, and a helper that floods 100 MB after its last task. */
Test(placement_helper, hostile_helper_costs_the_root_side_nothing_at_65536_local_tasks,
     .timeout = 60)
{
	enum { LOCAL = 65536 };
	struct node n;
	int *ranks = malloc(LOCAL * sizeof(*ranks));
	tmatch_error_t err;
	long rss0;
	double cpu0;

	cr_assert_not_null(ranks);
	for (int i = 0; i < LOCAL; i++)
		ranks[i] = i;
	node_setup(&n, NULL);
	close(n.in.helper_fd);
	tmatch_error_clear(&err);
	n.in.helper_fd = tmatch_place_helper_open(HOSTILE, &err);
	cr_assert_geq(n.in.helper_fd, 0, "%s", err.msg);

	n.in.ranks = ranks;
	for (int c = 0; c < 2; c++) {
		/* "count" for 65,536 local tasks; "flood" after 8 valid tasks */
		n.in.user_value = c ? "flood" : "count";
		n.in.nlocal = n.in.ntasks_total = c ? 8 : LOCAL;
		rss0 = maxrss_kib();
		cpu0 = cpu_self();
		cr_assert_eq(node_run(&n), -1);
		cr_expect_lt(cpu_self() - cpu0, 0.2);
		cr_expect_leq(maxrss_kib() - rss0, 16 * 1024, "root side peak RSS +%ld KiB",
		              maxrss_kib() - rss0);
		cr_expect_str_eq(n.err.msg,
		                 c ? "n0: mapping process sent a malformed result (too long)"
		                   : "n0: mapping process sent a malformed result (task "
		                     "count)");
	}
	n.in.ranks = n.ranks;
	free(ranks);
	node_teardown(&n);
}

/* ---- forged results ------------------------------------------------------ */

struct frame {
	struct tmatch__helper_hello hello;
	struct tmatch__helper_head head;
	struct tmatch__helper_task task[8];
};

/* A well-formed result placing task i on leaf 7 - i. */
static void frame_init(struct frame *f)
{
	memset(f, 0, sizeof(*f));
	f->hello.magic = TMATCH__HELPER_HELLO_MAGIC;
	f->hello.version = TMATCH__HELPER_WIRE_VERSION;
	snprintf(f->hello.node_name, sizeof(f->hello.node_name), "n7");
	f->head.magic = TMATCH__HELPER_HEAD_MAGIC;
	f->head.version = TMATCH__HELPER_WIRE_VERSION;
	f->head.status = TMATCH__HELPER_OUT_PLACED;
	f->head.ntasks = 8;
	f->head.task_size = sizeof(f->task[0]);
	snprintf(f->head.mapper, sizeof(f->head.mapper), "treematch");
	for (int i = 0; i < 8; i++) {
		f->task[i].size = sizeof(f->task[i]);
		f->task[i].version = TMATCH__HELPER_TASK_VERSION;
		f->task[i].rank = i;
		f->task[i].leaf = 7 - i;
		f->task[i].pos.nlevels = 1;
		snprintf(f->task[i].pos.level[0].name, sizeof(f->task[i].pos.level[0].name),
		         "core");
		f->task[i].pos.level[0].index = 7 - i;
		f->task[i].pos.level[0].count = 8;
	}
}

/* A head alone, failed with message code `code`. */
static void failed_init(struct frame *f, int code, int err_no)
{
	frame_init(f);
	f->head.status = TMATCH__HELPER_OUT_FAILED;
	f->head.msg.code = code;
	f->head.msg.err_no = err_no;
}

static int take_in(struct node *n, const void *f, size_t len, size_t chunk)
{
	tmatch_place_node_destroy(n->out.plan);
	tmatch_affinity_devices_destroy(n->out.devices); /* a GPU step's, after its plan */
	n->out.plan = NULL;
	n->out.devices = NULL;
	tmatch_error_clear(&n->err);
	return tmatch__helper_take(&n->in, f, len, chunk, NULL, 0, &n->out, &n->err);
}

static int take(struct node *n, const struct frame *f, size_t len)
{
	return take_in(n, f, len, 0);
}

#define HEAD_ONLY (sizeof(struct tmatch__helper_hello) + sizeof(struct tmatch__helper_head))

#define REFUSED(n, f, len, what)                                                                   \
	do {                                                                                       \
		cr_assert_eq(take((n), (f), (len)), -1, "accepted: %s", what);                     \
		cr_assert_eq(errno, EPROTO);                                                       \
		cr_assert_not_null(strstr((n)->err.msg, "n7: mapping process sent a malformed "    \
		                                        "result (" what ")"),                      \
		                   "%s", (n)->err.msg);                                            \
		cr_assert_null((n)->out.plan);                                                     \
	} while (0)

Test(placement_helper, root_side_refuses_every_forged_result)
{
	struct node n;
	struct frame f;

	node_setup(&n, NULL);
	frame_init(&f);
	cr_assert_eq(take(&n, &f, sizeof(f)), 0, "%s", n.err.msg);
	cr_assert_eq(n.out.plan->task[0].leaf, 7);
	cr_assert(hwloc_bitmap_isequal(n.out.plan->task[0].cpuset,
	                               tmatch_affinity_leaf_cpuset(n.prep.tree, 7)));

	REFUSED(&n, &f, sizeof(f) - 1, "too short");
	REFUSED(&n, &f, sizeof(f.hello) + 3, "too short");
	{
		char longer[sizeof(f) + 1];

		memcpy(longer, &f, sizeof(f));
		longer[sizeof(f)] = 0;
		REFUSED(&n, (const struct frame *)(const void *)longer, sizeof(longer), "too long");
	}
	frame_init(&f);
	f.task[3].rank = 4;
	REFUSED(&n, &f, sizeof(f), "rank");
	frame_init(&f);
	f.task[2].leaf = 8;
	REFUSED(&n, &f, sizeof(f), "leaf");
	frame_init(&f);
	f.task[2].leaf = f.task[1].leaf;
	REFUSED(&n, &f, sizeof(f), "leaf");
	frame_init(&f);
	f.task[0].leaf = -1;
	REFUSED(&n, &f, sizeof(f), "leaf");
	frame_init(&f);
	f.task[5].pos.nlevels = TMATCH_AFFINITY_MAX_LEVELS + 1;
	REFUSED(&n, &f, sizeof(f), "position");
	frame_init(&f);
	f.task[5].pos.level[0].name[0] = 'C';
	REFUSED(&n, &f, sizeof(f), "position");
	frame_init(&f);
	memset(f.task[5].pos.level[0].name, 'a', sizeof(f.task[5].pos.level[0].name));
	REFUSED(&n, &f, sizeof(f), "position");
	frame_init(&f);
	f.task[5].pos.level[0].index = 8;
	REFUSED(&n, &f, sizeof(f), "position");
	frame_init(&f);
	f.task[4].size = sizeof(f.task[4]) + 8; /* a longer record of a later version */
	REFUSED(&n, &f, sizeof(f), "task record");
	frame_init(&f);
	f.task[4].version = 2;
	REFUSED(&n, &f, sizeof(f), "task record");
	frame_init(&f);
	f.head.task_size = 8;
	REFUSED(&n, &f, sizeof(f), "task record");
	frame_init(&f);
	f.head.ntasks = 7;
	REFUSED(&n, &f, sizeof(f) - sizeof(f.task[0]), "task count");
	frame_init(&f);
	f.head.version = 1;
	REFUSED(&n, &f, sizeof(f), "version");
	frame_init(&f);
	f.hello.version = 1; /* nothing of it counts, the node's name neither */
	cr_assert_eq(take(&n, &f, sizeof(f)), -1);
	cr_assert_str_eq(n.err.msg, "node 0: mapping process sent a malformed result (version)");
	frame_init(&f);
	f.head.status = 9;
	REFUSED(&n, &f, HEAD_ONLY, "status");
	/* a message: a code of its ending, fields in bounds, nothing else */
	failed_init(&f, TMATCH__HMSG_COUNT, EINVAL);
	REFUSED(&n, &f, HEAD_ONLY, "message");
	failed_init(&f, TMATCH__HMSG_PREDICTED, 0); /* a note, not a failure */
	REFUSED(&n, &f, HEAD_ONLY, "message");
	failed_init(&f, TMATCH__HMSG_PROFILE_OPEN, 5000);
	REFUSED(&n, &f, HEAD_ONLY, "message");
	failed_init(&f, TMATCH__HMSG_PROFILE_RANKS, 0);
	f.head.msg.num[0] = -4;
	REFUSED(&n, &f, HEAD_ONLY, "message");
	failed_init(&f, TMATCH__HMSG_PROFILE_OPEN, ENOENT);
	memset(f.head.msg.file, 'x', sizeof(f.head.msg.file)); /* not terminated */
	REFUSED(&n, &f, HEAD_ONLY, "message");
	frame_init(&f);
	f.head.msg.code = TMATCH__HMSG_PREDICTED;
	f.head.msg.val[0] = NAN;
	REFUSED(&n, &f, sizeof(f), "message");
	node_teardown(&n);
}

/* The bytes as a pipe gives them: any cut between records or inside one
   reads the same. */
Test(placement_helper, root_side_reads_the_result_in_any_chunks)
{
	static const size_t chunks[] = {1, 3, 64, 461, 4096};
	struct node n;
	struct frame f;

	node_setup(&n, NULL);
	frame_init(&f);
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		cr_assert_eq(take_in(&n, &f, sizeof(f), chunks[c]), 0, "chunk %zu: %s", chunks[c],
		             n.err.msg);
		cr_assert_eq(n.out.plan->ntasks, 8);
		cr_assert_eq(n.out.plan->task[7].leaf, 0);
		f.task[6].leaf = f.task[5].leaf;
		cr_assert_eq(take_in(&n, &f, sizeof(f), chunks[c]), -1, "chunk %zu", chunks[c]);
		cr_assert_not_null(strstr(n.err.msg, "(leaf)"), "%s", n.err.msg);
		frame_init(&f);
	}
	node_teardown(&n);
}

/* Finding 3 of issue 33: the helper's failure text (511 printable bytes)
   reached srun. Its messages are codes now: the line the user reads is
   made on the root side from checked numbers and names. */
Test(placement_helper, root_side_says_what_the_codes_mean_and_nothing_else)
{
	struct node n;
	struct frame f;

	node_setup(&n, NULL);
	failed_init(&f, TMATCH__HMSG_PROFILE_BAD, EINVAL);
	tmatch__helper_msg_file(&f.head.msg, "/home/u/a b\x1b[2J.yml");
	f.head.msg.num[0] = 12;
	f.head.msg.num[1] = 5;
	cr_assert_eq(take(&n, &f, HEAD_ONLY), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_str_eq(n.err.msg, "n7: bad profile /home/u/a?b??2J.yml, line 12, column 5 "
	                            "(Invalid argument): `treematch profile check` says what "
	                            "to fix");
	failed_init(&f, TMATCH__HMSG_PROFILE_RANKS, EINVAL);
	f.head.msg.num[0] = 1048576;
	f.head.msg.num[1] = 2;
	cr_assert_eq(take(&n, &f, HEAD_ONLY), -1);
	cr_assert_not_null(strstr(n.err.msg, "n7: the profile has 1048576 ranks but the job "
	                                     "step has 2 tasks"),
	                   "%s", n.err.msg);
	/* a long path keeps its end */
	failed_init(&f, TMATCH__HMSG_PROFILE_OPEN, EACCES);
	{
		char path[400];

		memset(path, 'd', sizeof(path));
		memcpy(path + sizeof(path) - 9, "/p.yml", 7);
		tmatch__helper_msg_file(&f.head.msg, path);
	}
	cr_assert_eq(take(&n, &f, HEAD_ONLY), -1);
	cr_assert_not_null(strstr(n.err.msg, "n7: cannot read profile ...ddd"), "%s", n.err.msg);
	cr_assert_not_null(strstr(n.err.msg, "/p.yml: Permission denied"), "%s", n.err.msg);
	node_teardown(&n);
}

Test(placement_helper, policy_of_a_hello_holds_when_the_helper_is_killed)
{
	struct node n;
	struct frame f;
	tmatch_error_t killed;

	node_setup(&n, NULL);
	/* killed after its hello: the node's name and the user's failure=fail
	   still count; a hello cannot loosen the site's */
	frame_init(&f);
	f.hello.failure = TMATCH_FAILURE_FAIL;
	f.hello.dry_run = 0;
	n.admin.dry_run = 1;
	tmatch_error_clear(&killed);
	snprintf(killed.msg, sizeof(killed.msg), "mapping exceeded max_map_time=2 s, killed");
	cr_assert_eq(tmatch__helper_take(&n.in, (const char *)&f, sizeof(f.hello), 0, &killed,
	                                 ETIME, &n.out, &n.err),
	             -1);
	cr_assert_eq(errno, ETIME);
	cr_assert_str_eq(n.err.msg, "n7: mapping exceeded max_map_time=2 s, killed");
	cr_assert_eq(n.out.cfg.failure, TMATCH_FAILURE_FAIL);
	cr_assert_eq(n.out.cfg.dry_run, 1);

	/* a node name of other characters is not repeated */
	snprintf(f.hello.node_name, sizeof(f.hello.node_name), "../\n");
	cr_assert_eq(tmatch__helper_take(&n.in, (const char *)&f, sizeof(f.hello), 0, &killed,
	                                 ETIME, &n.out, &n.err),
	             -1);
	cr_assert_str_eq(n.err.msg, "node 0: mapping exceeded max_map_time=2 s, killed");

	/* killed before it: the node's index, the site's policy */
	n.admin.failure = TMATCH_FAILURE_FALLBACK;
	cr_assert_eq(tmatch__helper_take(&n.in, NULL, 0, 0, &killed, ETIME, &n.out, &n.err), -1);
	cr_assert_str_eq(n.err.msg, "node 0: mapping exceeded max_map_time=2 s, killed");
	cr_assert_eq(n.out.cfg.failure, TMATCH_FAILURE_FALLBACK);
	node_teardown(&n);
}

/* ---- learn mode ----------------------------------------------------------- */

#define MPIDIR TMATCH_BUILDDIR "/tests/mpi/"

/* A store the job's user owns, under the public directory. */
static void learn_store(char *dir, size_t dlen)
{
	char sub[PATH_MAX];

	snprintf(sub, sizeof(sub), "%s/treematch", public_dir());
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(dir, dlen, "%s/treematch/store", public_dir());
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(chown(dir, target_uid(), target_gid()), 0);
}

/* The helper of an 8-task step (job 42, step 3) whose user says `value`,
   srun's learn decision `decision` (NULL: none); it must answer. */
static void learn_run(struct node *n, const char *value, const char *decision)
{
	node_setup(n, NULL);
	n->in.user_value = value;
	n->in.job_id = 42;
	n->in.step_id = 3;
	n->in.learn_env = decision;
	cr_assert_eq(node_run(n), 0, "%s", n->err.msg);
}

static void learn_skipped(struct node *n, int record, const char *why)
{
	cr_assert_not_null(n->out.plan);
	cr_assert_eq(n->out.plan->status, TMATCH_PLACE_SKIPPED, "%s", n->out.plan->why);
	cr_assert_eq(n->out.plan->record, record, "%s", n->out.plan->why);
	cr_assert(strstr(n->out.plan->why, why), "%s", n->out.plan->why);
	node_teardown(n);
}

/* Every node follows srun's one decision (issue 34): it records when srun
   says so, places from the very entry srun chose, and otherwise keeps
   Slurm's binding without ever recording on its own. */
Test(placement_helper, learn_follows_sruns_decision)
{
	char dir[1024], exe[PATH_MAX], prof[PATH_MAX + 32], program[1024], dec[2 * PATH_MAX];
	char *mpi_argv[] = {"/usr/bin/env", program, NULL};
	tmatch_profile_store_key_t key;
	tmatch_profile_store_entry_t entry;
	tmatch_profile_store_t *s;
	tmatch_place_learn_t d;
	struct node n;
	FILE *f;
	int rc;

	learn_store(dir, sizeof(dir));
	snprintf(program, sizeof(program), "%s/pattern.openmpi", public_dir());
	snprintf(prof, sizeof(prof), "cp %s '%s' && chmod 755 '%s'", MPIDIR "pattern.openmpi",
	         program, program);
	cr_assert_eq(system(prof), 0, "%s", prof);
	memset(&d, 0, sizeof(d));
	d.job_id = 42;
	d.step_id = 3;
	snprintf(d.store, sizeof(d.store), "%s", dir);

	/* record: every node records, the store as it is */
	d.what = TMATCH_PLACE_LEARN_RECORD;
	snprintf(d.stem, sizeof(d.stem), "0123456789abcdef");
	cr_assert_eq(tmatch_place_learn_format(&d, dec, sizeof(dec)), 0);
	learn_run(&n, "learn,verbose=1", dec);
	cr_assert_eq(n.out.plan->why_level, TMATCH_LOG_INFO);
	learn_skipped(&n, 1, "learning: nothing stored yet");

	/* what the run recorded, stored: place from it, by its checksum */
	node_setup(&n, NULL);
	cr_assert_eq(tmatch_place_learn_key(&n.admin, tmatch_mpiabi_program, mpi_argv,
	                                    "/usr/bin:/bin", "/", 8, &key, exe, sizeof(exe),
	                                    &n.err),
	             0, "%s", n.err.msg);
	f = fopen(n.profile, "r");
	cr_assert_not_null(f);
	/* as the job's user, as srun would */
	cr_assert_eq(setegid(target_gid()), 0);
	cr_assert_eq(seteuid(target_uid()), 0);
	s = tmatch_profile_store_open_path(dir, 0, &n.err);
	rc = s ? tmatch_profile_store_put(s, &key, fileno(f), n.profile, exe, 0, &n.err) : -1;
	if (rc == 0)
		rc = tmatch_profile_store_get(s, &key, 0, prof, sizeof(prof), &entry, &n.err);
	tmatch_profile_store_close(s);
	cr_assert_eq(seteuid(getuid()), 0);
	cr_assert_eq(setegid(getgid()), 0);
	fclose(f);
	cr_assert_eq(rc, 1, "%s", n.err.msg);
	node_teardown(&n);
	d.what = TMATCH_PLACE_LEARN_PLACE;
	snprintf(d.stem, sizeof(d.stem), "%s", entry.stem);
	d.checksum = entry.meta_sum;
	cr_assert_eq(tmatch_place_learn_format(&d, dec, sizeof(dec)), 0);
	learn_run(&n, "learn", dec);
	cr_assert_not_null(n.out.plan);
	cr_assert_eq(n.out.plan->status, TMATCH_PLACE_PLACED, "%s (%s)", n.out.plan->why, dec);
	cr_assert_eq(n.out.plan->ntasks, 8);
	cr_assert_lt(n.out.plan->cost, n.out.plan->cost_packed);
	node_teardown(&n);

	/* a gain below min_gain keeps Slurm's binding, and says so */
	learn_run(&n, "learn,min_gain=100,verbose=1", dec);
	learn_skipped(&n, 0, "less than min_gain=100 %");

	/* no decision, another step's, or none: Slurm's binding, no recording,
	   whatever this node's store holds */
	learn_run(&n, "learn,verbose=1", NULL);
	learn_skipped(&n, 0, "srun made no learn decision");
	dec[2] = '9'; /* job 92 */
	learn_run(&n, "learn,verbose=1", dec);
	learn_skipped(&n, 0, "srun made no learn decision for this step");
	learn_run(&n, "learn,verbose=1", "1 42 3 maybe");
	learn_skipped(&n, 0, "srun's learn decision is malformed");
	learn_run(&n, "learn,verbose=1", "1 42 3 none");
	learn_skipped(&n, 0, "not learned");

	/* the entry srun chose, replaced since (another checksum): not used,
	   not recorded */
	d.checksum ^= 1;
	cr_assert_eq(tmatch_place_learn_format(&d, dec, sizeof(dec)), 0);
	learn_run(&n, "learn,verbose=1", dec);
	learn_skipped(&n, 0, "replaced since");
	d.checksum ^= 1;
	cr_assert_eq(tmatch_place_learn_format(&d, dec, sizeof(dec)), 0);

	/* damaged: the node (read only) does not use it, nor removes it */
	snprintf(prof, sizeof(prof), "%.3900s/%.16s.compiled", dir, entry.stem);
	f = fopen(prof, "r+");
	cr_assert_not_null(f);
	cr_assert_eq(fseek(f, 40, SEEK_SET), 0);
	fputc('~', f);
	cr_assert_eq(fclose(f), 0);
	learn_run(&n, "learn", dec);
	learn_skipped(&n, 0, "is damaged");
	cr_assert_eq(access(prof, F_OK), 0, "the node never removes it");

	/* gone */
	cr_assert_eq(unlink(prof), 0);
	snprintf(prof, sizeof(prof), "%.3900s/%.16s.meta", dir, entry.stem);
	cr_assert_eq(unlink(prof), 0);
	learn_run(&n, "learn", dec);
	learn_skipped(&n, 0, "is gone");
}

/* Finding 10 of issue 33: with no HOME in its environment the helper asked
   getpwuid, whose NSS client (nscd's socket) got it killed by its own
   filter. The helper reads no environment and asks NSS nothing: srun's
   decision names the store by its absolute path. */
Test(placement_helper, learn_without_home_asks_nss_nothing)
{
	char dir[1024], dec[2 * PATH_MAX];
	tmatch_place_learn_t d;
	struct node n;

	learn_store(dir, sizeof(dir));
	/* as slurmstepd, started without HOME or XDG_CACHE_HOME; the job has
	   none either */
	unsetenv("HOME");
	unsetenv("XDG_CACHE_HOME");
	memset(&d, 0, sizeof(d));
	d.job_id = 42;
	d.step_id = 3;
	d.what = TMATCH_PLACE_LEARN_PLACE;
	d.checksum = 1;
	snprintf(d.stem, sizeof(d.stem), "0123456789abcdef");
	snprintf(d.store, sizeof(d.store), "%s", dir);
	cr_assert_eq(tmatch_place_learn_format(&d, dec, sizeof(dec)), 0);
	/* the store reached and looked into, the helper not killed */
	learn_run(&n, "learn,verbose=1", dec);
	learn_skipped(&n, 0, "is gone");
	d.what = TMATCH_PLACE_LEARN_RECORD;
	cr_assert_eq(tmatch_place_learn_format(&d, dec, sizeof(dec)), 0);
	learn_run(&n, "learn,verbose=1", dec);
	learn_skipped(&n, 1, "learning: nothing stored yet");
}

/* ---- GPU steps ------------------------------------------------------------ */

/* The node of node_setup with GPUs: 2 packages of 4 cores, 2 GPUs and a
   card per package (an XML of our design), Slurm naming GPUs as env says. */
static void gpu_node_setup(struct node *n, tmatch_place_gpu_env_t *env, char *xml, size_t len,
                           char *spec, size_t slen)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 4,
	                     .gpus_per_numa = 2,
	                     .nics_per_numa = 1,
	                     .backend = "nvml"};

	cr_assert_eq(gpu_xml_write(&s, xml, len), 0);
	snprintf(spec, slen, "xml:%s", xml);
	node_setup(n, NULL);
	tmatch_place_node_prep_clear(&n->prep);
	n->nin.topology = spec;
	n->nin.gpu_env = env;
	cr_assert_eq(tmatch_place_node_prepare(&n->nin, &n->prep), 0, "%s", n->prep.tree_error);
	n->in.gpu_env = env;
}

static void gpu_node_teardown(struct node *n, const char *xml)
{
	tmatch_affinity_devices_destroy(n->out.devices);
	n->out.devices = NULL;
	node_teardown(n);
	unlink(xml);
}

/* The helper decides GPUs and cards with the CPUs, from Slurm's variables
   in its input; the root side takes them against its own tree's devices. */
Test(placement_helper, gpu_step_through_the_helper)
{
	tmatch_place_gpu_env_t env = {.step_gpus = "0-3", .cuda = "0,1,2,3"};
	struct node n;
	char xml[64], spec[80];
	int held[4] = {0};

	gpu_node_setup(&n, &env, xml, sizeof(xml), spec, sizeof(spec));
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_not_null(n.out.devices);
	cr_assert_not_null(n.out.plan->gpu_step);
	cr_assert_eq(n.out.plan->devices, n.out.devices);
	cr_assert_eq(n.out.plan->gpu_step->ngpus, 4);
	cr_assert_eq(n.out.plan->gpus_per_task, 1);
	cr_assert_eq(n.out.plan->gpu_vendor, TMATCH_GPU_VENDOR_NVIDIA);
	for (int i = 0; i < 8; i++) {
		const tmatch_place_task_t *t = &n.out.plan->task[i];

		cr_assert_eq(t->ngpus, 1);
		held[t->gpu[0]]++;
		cr_expect(hwloc_bitmap_isincluded(t->cpuset, n.out.devices->gpu[t->gpu[0]].cpuset),
		          "task %d outside its GPU's CPUs", i);
		cr_expect_eq(n.out.devices->nic[t->nic].package, t->gpu[0] / 2);
	}
	for (int g = 0; g < 4; g++)
		cr_expect_eq(held[g], 2, "GPU %d holds %d tasks", g, held[g]);
	cr_expect(strstr(n.out.plan->mapper, "+gpus") != NULL, "%s", n.out.plan->mapper);
	/* no GPU in Slurm's variables: the same node placed for its CPUs only */
	tmatch_affinity_devices_destroy(n.out.devices);
	n.out.devices = NULL;
	tmatch_place_node_destroy(n.out.plan);
	n.out.plan = NULL;
	n.in.gpu_env = NULL;
	cr_assert_eq(node_run(&n), 0, "%s", n.err.msg);
	cr_assert_null(n.out.plan->gpu_step);
	cr_assert_null(n.out.devices);
	gpu_node_teardown(&n, xml);
}

/* A GPU step's whole answer, as the helper sends it: the frame of 8 tasks,
   the section's head, then per task its 20-byte record (stride 1). */
#define GPU_ROW (offsetof(struct tmatch__helper_gpu_task, gpu) + sizeof(int32_t))
struct gpu_wire {
	struct frame f;
	struct tmatch__helper_gpu g;
	struct tmatch__helper_gpu_task row[8];
	unsigned char bytes[sizeof(struct frame) + sizeof(struct tmatch__helper_gpu) + 8 * GPU_ROW];
	size_t len;
};

static void gpu_wire_pack(struct gpu_wire *w)
{
	unsigned char *p = w->bytes;

	memcpy(p, &w->f, sizeof(w->f));
	p += sizeof(w->f);
	memcpy(p, &w->g, sizeof(w->g));
	p += sizeof(w->g);
	for (int i = 0; i < 8; i++, p += GPU_ROW)
		memcpy(p, &w->row[i], GPU_ROW);
	w->len = (size_t)(p - w->bytes);
}

/* A well-formed GPU result: task i on leaf 7 - i, GPU (7 - i) / 2 and its
   package's card. */
static void gpu_wire_init(struct gpu_wire *w)
{
	memset(w, 0, sizeof(*w));
	frame_init(&w->f);
	w->f.head.gpu_step = 1;
	w->g.magic = TMATCH__HELPER_GPU_MAGIC;
	w->g.version = TMATCH__HELPER_GPU_VERSION;
	w->g.ngpus = 4;
	w->g.stride = 1;
	w->g.node_gpus = 4;
	w->g.vars = TMATCH_GPU_VAR_CUDA;
	for (int i = 0; i < 4; i++)
		w->g.gpu[i] = w->g.index[i] = i;
	for (int i = 0; i < 8; i++) {
		w->row[i].size = GPU_ROW;
		w->row[i].version = TMATCH__HELPER_GPU_VERSION;
		w->row[i].ngpus = 1;
		w->row[i].nic = (7 - i) / 4;
		w->row[i].gpu[0] = (7 - i) / 2;
	}
}

static int gpu_take(struct node *n, struct gpu_wire *w, size_t chunk)
{
	gpu_wire_pack(w);
	return take_in(n, w->bytes, w->len, chunk);
}

#define GPU_REFUSED(n, w, what)                                                                    \
	do {                                                                                       \
		cr_assert_eq(gpu_take((n), (w), 0), -1, "accepted: %s", what);                     \
		cr_assert_eq(errno, EPROTO);                                                       \
		cr_assert_not_null(strstr((n)->err.msg, "n7: mapping process sent a malformed "    \
		                                        "result (" what ")"),                      \
		                   "%s", (n)->err.msg);                                            \
		cr_assert_null((n)->out.plan);                                                     \
		cr_assert_null((n)->out.devices);                                                  \
	} while (0)

Test(placement_helper, root_side_refuses_every_forged_gpu_result)
{
	static const size_t chunks[] = {0, 1, 7, 20, 333};
	tmatch_place_gpu_env_t env = {.step_gpus = "0-3", .cuda = "0,1,2,3"};
	struct node n;
	struct gpu_wire w;
	char xml[64], spec[80];

	gpu_node_setup(&n, &env, xml, sizeof(xml), spec, sizeof(spec));
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		gpu_wire_init(&w);
		cr_assert_eq(gpu_take(&n, &w, chunks[c]), 0, "chunk %zu: %s", chunks[c], n.err.msg);
		cr_assert_not_null(n.out.devices);
		cr_assert_eq(n.out.plan->task[0].ngpus, 1);
		cr_assert_eq(n.out.plan->task[0].gpu[0], 3);
		cr_assert_eq(n.out.plan->task[0].nic, 1);
		cr_assert_eq(n.out.plan->task[7].gpu[0], 0);
		cr_assert_eq(n.out.plan->gpu_step->ngpus, 4);
	}
	/* a CPU-only result of a GPU step is still taken (the tasks keep Slurm's GPUs) */
	gpu_wire_init(&w);
	w.f.head.gpu_step = 0;
	cr_assert_eq(take_in(&n, &w.f, sizeof(w.f), 0), 0, "%s", n.err.msg);
	cr_assert_null(n.out.plan->gpu_step);

	gpu_wire_init(&w);
	w.f.head.gpu_step = 2;
	GPU_REFUSED(&n, &w, "GPU step");
	gpu_wire_init(&w);
	w.g.magic = 0;
	GPU_REFUSED(&n, &w, "GPU version");
	gpu_wire_init(&w);
	w.g.version = 2;
	GPU_REFUSED(&n, &w, "GPU version");
	gpu_wire_init(&w);
	w.g.ngpus = 5;
	GPU_REFUSED(&n, &w, "GPU step");
	gpu_wire_init(&w);
	w.g.stride = 0;
	GPU_REFUSED(&n, &w, "GPU step");
	gpu_wire_init(&w);
	w.g.node_gpus = 8;
	GPU_REFUSED(&n, &w, "GPU step");
	gpu_wire_init(&w);
	w.g.relative = 7;
	GPU_REFUSED(&n, &w, "GPU step");
	gpu_wire_init(&w);
	w.g.gpu[1] = 0; /* not ascending */
	GPU_REFUSED(&n, &w, "GPU");
	gpu_wire_init(&w);
	w.g.index[2] = 7; /* not the device's index */
	GPU_REFUSED(&n, &w, "GPU");
	gpu_wire_init(&w);
	w.g.ngpus = 2; /* the step has GPUs 0 and 1: task 0's GPU 3 is not its */
	GPU_REFUSED(&n, &w, "task's GPUs");
	gpu_wire_init(&w);
	w.row[3].nic = 2; /* 2 cards */
	GPU_REFUSED(&n, &w, "task's GPUs");
	gpu_wire_init(&w);
	w.row[3].ngpus = 0;
	GPU_REFUSED(&n, &w, "task's GPUs");
	gpu_wire_init(&w);
	w.row[6].gpu[0] = -1;
	GPU_REFUSED(&n, &w, "task's GPUs");
	gpu_wire_init(&w);
	w.row[5].size = sizeof(w.row[5]); /* a record larger than its stride */
	GPU_REFUSED(&n, &w, "task's GPU record");
	gpu_wire_init(&w);
	w.row[0].version = 9;
	GPU_REFUSED(&n, &w, "task's GPU record");
	/* cut short, or more after the last task's GPUs */
	gpu_wire_init(&w);
	gpu_wire_pack(&w);
	cr_assert_eq(take_in(&n, w.bytes, w.len - 1, 0), -1);
	cr_assert_not_null(strstr(n.err.msg, "(too short)"), "%s", n.err.msg);
	cr_assert_eq(take_in(&n, w.bytes, sizeof(w.f) + 8, 0), -1);
	cr_assert_not_null(strstr(n.err.msg, "(too short)"), "%s", n.err.msg);
	{
		unsigned char more[sizeof(w.bytes) + 1];

		memcpy(more, w.bytes, w.len);
		more[w.len] = 0;
		cr_assert_eq(take_in(&n, more, w.len + 1, 0), -1);
		cr_assert_not_null(strstr(n.err.msg, "(too long)"), "%s", n.err.msg);
	}
	/* a GPU section the root side did not ask for (no GPU step) */
	n.in.gpu_env = NULL;
	gpu_wire_init(&w);
	GPU_REFUSED(&n, &w, "GPU step");
	gpu_node_teardown(&n, xml);
}
