/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.c - the benchmark driver behind `make bench`.
 *
 * For every case (pattern x size x ordered/permuted, odd machine shapes,
 * partial allocations) it writes the pattern as a .mtx file, runs every
 * mapper as a whole process (fork/exec of `treematch map ...` and of
 * `scotch_map`), measures wall time (median of --reps runs) and peak RSS
 * (wait4's ru_maxrss, largest over the runs), checks that repeated runs give
 * byte-identical mappings, scores every mapping with OUR evaluator
 * (tmatch_eval, linked from libtreematch) so all mappers are scored alike,
 * and prints markdown tables: per case, per mapper x pattern (cost ratio to
 * Scotch and time), and the targets of issues 2 and 3.
 *
 * Run `bench --help` for the options.
 */
#include "bench/mtxread.h"
#include "bench/patterns.h"
#include "placement/placement_private.h" /* tmatch__write_all */
#include "treematch/treematch.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef BENCH_HAVE_SCOTCH_H
#include <scotch.h> /* only for the version it reports; bench does not link Scotch */
#else
#define SCOTCH_VERSION    0
#define SCOTCH_RELEASE    0
#define SCOTCH_PATCHLEVEL 0
#endif

#define MAX_MAPPERS 12
#define MAX_CASES   512

/* ---------------------------------------------------------------------- */
/* Options                                                                 */

struct options {
	const char *treematch;   /* path of the treematch CLI */
	const char *scotch;      /* path of scotch_map */
	const char *workdir;     /* .mtx files and mappings */
	const char *out;         /* markdown copy (RESULTS.md), NULL = stdout only */
	const char *command;     /* the command line to record in the output */
	const char *scotch_link; /* scotch_map --link */
	int reps;                /* runs per mapper and case; time = median */
	int timeout;             /* seconds per run */
	int dense_max;           /* largest size for alltoall/hier */
	int full;                /* add 1,048,576-rank stencil3d (default mapper) */
	int permuted, odd, partial;
	char sizes[256], patterns[256], mappers[256];
	uint64_t seed;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: bench [--treematch PATH] [--scotch PATH] [--workdir DIR] [--out FILE]\n"
	           "             [--reps N] [--timeout SEC] [--sizes LIST] [--patterns LIST]\n"
	           "             [--mappers LIST] [--dense-max N] [--seed S] [--full]\n"
	           "             [--no-permuted] [--no-odd] [--no-partial] [--command TEXT]\n"
	           "defaults: --reps 3 --timeout 300 --sizes 64,256,1024,4096,16384\n"
	           "          --patterns stencil2d,stencil3d,cg,alltoall,hier,random\n"
	           "          --mappers treematch,greedy,rcm,bisect,auto,default,scotch\n"
	           "          --dense-max 4096 (alltoall and hier store every pair)\n"
	           "--full adds 1,048,576-rank stencil3d for the default mapper.\n");
}

/* ---------------------------------------------------------------------- */
/* Output: everything goes to stdout and, when --out is given, to a file.  */

static FILE *out_copy;

static void __attribute__((format(printf, 1, 2))) emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	if (out_copy) {
		va_start(ap, fmt);
		vfprintf(out_copy, fmt, ap);
		va_end(ap);
	}
}

static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---------------------------------------------------------------------- */
/* Running one mapper as a process                                         */

static volatile sig_atomic_t alarm_fired;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum run_status { RUN_OK, RUN_FAILED, RUN_TIMEOUT, RUN_UNAVAILABLE };

struct run {
	enum run_status status;
	double seconds;
	double cpu_seconds; /* user + system of the process */
	long maxrss_kib;
	char why[200]; /* first stderr line on failure */
};

/* Fork/exec argv with stdout to out_path and stderr to err_path. */
static void run_process(char *const argv[], const char *out_path, const char *err_path, int timeout,
                        struct run *r)
{
	struct rusage ru;
	struct sigaction sa;
	int status = 0;
	pid_t pid, w;
	double t0;

	memset(r, 0, sizeof(*r));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: wait4 must return EINTR */
	sigaction(SIGALRM, &sa, NULL);
	alarm_fired = 0;
	t0 = now();
	pid = fork();
	if (pid < 0) {
		r->status = RUN_FAILED;
		snprintf(r->why, sizeof(r->why), "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		setpgid(0, 0);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(126);
		close(fo);
		close(fe);
		execv(argv[0], argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	alarm((unsigned)timeout);
	for (;;) {
		w = wait4(pid, &status, 0, &ru);
		if (w == pid)
			break;
		if (w < 0 && errno == EINTR && alarm_fired) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			alarm_fired = 0;
			r->status = RUN_TIMEOUT;
			continue;
		}
		if (w < 0 && errno != EINTR) {
			r->status = RUN_FAILED;
			snprintf(r->why, sizeof(r->why), "wait4: %s", strerror(errno));
			alarm(0);
			return;
		}
	}
	alarm(0);
	r->seconds = now() - t0;
	r->cpu_seconds = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
	                 (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
	r->maxrss_kib = ru.ru_maxrss;
	if (r->status == RUN_TIMEOUT) {
		snprintf(r->why, sizeof(r->why), "timeout after %d s", timeout);
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		FILE *f = fopen(err_path, "r");
		char line[512] = "";
		r->status = RUN_FAILED;
		if (f) {
			while (fgets(line, sizeof(line), f))
				if (line[0] != '\n')
					break;
			fclose(f);
		}
		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, "not available in this build"))
			r->status = RUN_UNAVAILABLE;
		if (WIFSIGNALED(status))
			snprintf(r->why, sizeof(r->why), "killed by signal %d", WTERMSIG(status));
		else
			snprintf(r->why, sizeof(r->why), "exit %d: %.150s", WEXITSTATUS(status),
			         line);
	}
}

/*
 * The launcher: a small process forked at start-up, before the driver loads
 * any matrix, that does every fork/exec/wait4. Linux carries the peak RSS
 * of a process's memory image across exec into ru_maxrss, so a mapper
 * forked from the driver itself would report the driver's own footprint.
 */
static int launch_req = -1, launch_rep = -1;

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len > 0) {
		ssize_t r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int send_str(int fd, const char *s)
{
	int len = (int)strlen(s);
	return tmatch__write_all(fd, &len, sizeof(len)) || tmatch__write_all(fd, s, (size_t)len);
}

static char *recv_str(int fd)
{
	int len;
	char *s;
	if (read_all(fd, &len, sizeof(len)) || len < 0 || len > (1 << 20))
		return NULL;
	s = malloc((size_t)len + 1);
	if (!s || read_all(fd, s, (size_t)len)) {
		free(s);
		return NULL;
	}
	s[len] = '\0';
	return s;
}

/* Request: argc, argv strings, out path, err path, timeout. Reply: struct run. */
static void launcher_loop(int req, int rep)
{
	for (;;) {
		int argc, timeout, ok = 1;
		char *argv[32] = {NULL}, *out = NULL, *err = NULL;
		struct run r;
		if (read_all(req, &argc, sizeof(argc)) || argc < 1 || argc > 31)
			_exit(0); /* the driver is gone or done */
		for (int i = 0; i < argc; i++)
			ok &= (argv[i] = recv_str(req)) != NULL;
		out = recv_str(req);
		err = recv_str(req);
		ok &= out && err && !read_all(req, &timeout, sizeof(timeout));
		if (!ok)
			_exit(1);
		run_process(argv, out, err, timeout, &r);
		if (tmatch__write_all(rep, &r, sizeof(r)))
			_exit(1);
		for (int i = 0; i < argc; i++)
			free(argv[i]);
		free(out);
		free(err);
	}
}

static int launcher_start(void)
{
	int req[2], rep[2];
	pid_t pid;
	if (pipe(req) || pipe(rep))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(req[1]);
		close(rep[0]);
		launcher_loop(req[0], rep[1]);
	}
	close(req[0]);
	close(rep[1]);
	launch_req = req[1];
	launch_rep = rep[0];
	return 0;
}

/* run_process through the launcher (directly if it could not start). */
static void launch(char *const argv[], const char *out_path, const char *err_path, int timeout,
                   struct run *r)
{
	int argc = 0;
	if (launch_req < 0) {
		run_process(argv, out_path, err_path, timeout, r);
		return;
	}
	while (argv[argc])
		argc++;
	int bad = tmatch__write_all(launch_req, &argc, sizeof(argc));
	for (int i = 0; i < argc && !bad; i++)
		bad = send_str(launch_req, argv[i]);
	bad = bad || send_str(launch_req, out_path) || send_str(launch_req, err_path) ||
	      tmatch__write_all(launch_req, &timeout, sizeof(timeout)) ||
	      read_all(launch_rep, r, sizeof(*r));
	if (bad) {
		memset(r, 0, sizeof(*r));
		r->status = RUN_FAILED;
		snprintf(r->why, sizeof(r->why), "the launcher process failed");
	}
}

/* ---------------------------------------------------------------------- */
/* Mappings                                                                */

/* The mapping a mapper wrote, through the library's reader. */
static int read_mapping(const char *path, int n, int *leaf_of_rank, char *why, size_t len)
{
	tmatch_error_t err;

	if (access(path, R_OK) != 0) {
		snprintf(why, len, "no mapping written");
		return -1;
	}
	if (tmatch_map_read(path, n, leaf_of_rank, NULL, &err) < 0) {
		tmatch_error_format(&err, why, len);
		return -1;
	}
	return 0;
}

static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	int same = fa && fb;
	while (same) {
		int ca = getc(fa), cb = getc(fb);
		if (ca != cb)
			same = 0;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* ---------------------------------------------------------------------- */
/* Cases and results                                                       */

enum family { FAM_REFERENCE, FAM_ODD, FAM_PARTIAL, FAM_FULL };

struct mapper {
	const char *label; /* as printed */
	const char *name;  /* --mapper value; NULL = default (no --mapper) */
	int scotch;
	int unavailable;
	char unavailable_why[200];
};

struct result {
	int valid; /* a mapping was produced and scored */
	double hop_bytes;
	double seconds;     /* median wall time */
	double cpu_seconds; /* median user + system time */
	long maxrss_kib;    /* largest over the runs */
	int deterministic;
	char why[200];
};

struct bcase {
	enum family fam;
	char pattern[24];
	int permuted;
	int n;
	char tree[128];
	char shape[48];   /* short label of the machine (odd/partial) */
	char allowed[48]; /* "" = all leaves; else a name (the set is in a file) */
	double identity;  /* hop-bytes of rank i on the i-th allowed leaf */
	double bound;     /* proven lower bound of any placement (stencils), else -1 */
	struct result res[MAX_MAPPERS];
};

static struct mapper mappers[MAX_MAPPERS];
static int nmappers;
static struct bcase cases[MAX_CASES];
static int ncases;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const char *fmt_hb(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.4g", v);
	return buf;
}

/* The leaf set of a partial allocation. Returns the count, fills leaves. */
static int partial_leaves(const char *kind, int nleaves, uint64_t seed, int *leaves)
{
	int count = 0;
	if (!strcmp(kind, "half-nodes")) { /* a seeded half of the nodes, whole */
		int nodes = nleaves / 8, *perm = malloc((size_t)nodes * sizeof(int));
		unsigned char *take = calloc((size_t)nodes, 1);
		if (!perm || !take) {
			free(perm);
			free(take);
			return -1;
		}
		bench_permutation(nodes, seed, perm);
		for (int k = 0; k < nodes / 2; k++)
			take[perm[k]] = 1;
		for (int leaf = 0; leaf < nleaves; leaf++)
			if (take[leaf / 8])
				leaves[count++] = leaf;
		free(perm);
		free(take);
	} else if (!strcmp(kind, "6-of-8-cores")) { /* two cores per node busy */
		for (int leaf = 0; leaf < nleaves; leaf++)
			if (leaf % 8 != 3 && leaf % 8 != 7)
				leaves[count++] = leaf;
	} else { /* "scattered": a seeded 75 % of the leaves */
		int *perm = malloc((size_t)nleaves * sizeof(int));
		unsigned char *take = calloc((size_t)nleaves, 1);
		if (!perm || !take) {
			free(perm);
			free(take);
			return -1;
		}
		bench_permutation(nleaves, seed, perm);
		for (int k = 0; k < nleaves * 3 / 4; k++)
			take[perm[k]] = 1;
		for (int leaf = 0; leaf < nleaves; leaf++)
			if (take[leaf])
				leaves[count++] = leaf;
		free(perm);
		free(take);
	}
	return count;
}

static int in_list(const char *list, const char *word)
{
	size_t lw = strlen(word);
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ",");
		if (l == lw && !strncmp(p, word, lw))
			return 1;
		p += l;
		if (*p == ',')
			p++;
	}
	return 0;
}

static struct bcase *add_case(enum family fam, const char *pattern, int permuted, int n,
                              const char *tree, const char *shape, const char *allowed)
{
	struct bcase *c;
	if (ncases == MAX_CASES)
		return NULL;
	c = &cases[ncases++];
	memset(c, 0, sizeof(*c));
	c->fam = fam;
	snprintf(c->pattern, sizeof(c->pattern), "%s", pattern);
	c->permuted = permuted;
	c->n = n;
	snprintf(c->tree, sizeof(c->tree), "%s", tree);
	snprintf(c->shape, sizeof(c->shape), "%s", shape);
	snprintf(c->allowed, sizeof(c->allowed), "%s", allowed);
	c->bound = -1;
	return c;
}

static void plan(const struct options *o)
{
	static const char *const odd_trees[][2] = {
	    {"a3: 3^6", "tleaf 6 3 1 3 1 3 1 3 1 3 1 3 1"}, {"a5: 5^4", "tleaf 4 5 1 5 1 5 1 5 1"},
	    {"a6: 6^4", "tleaf 4 6 1 6 1 6 1 6 1"},         {"a7: 7^4", "tleaf 4 7 1 7 1 7 1 7 1"},
	    {"a10: 10^3", "tleaf 3 10 1 10 1 10 1"},        {"a14: 14^3", "tleaf 3 14 1 14 1 14 1"},
	    {"3x10x2x14", "tleaf 4 3 1 10 1 2 1 14 1"},
	};
	static const char *const partial_kinds[] = {"half-nodes", "6-of-8-cores", "scattered"};
	char tree[128];
	char sizes[256];

	snprintf(sizes, sizeof(sizes), "%s", o->sizes);
	for (int p = 0; bench_pattern_names[p]; p++) {
		const char *pat = bench_pattern_names[p];
		if (!in_list(o->patterns, pat))
			continue;
		for (char *tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
			int n = atoi(tok);
			char why[128];
			if (n < 8 || n % 8 || bench_pattern_check(pat, n, why, sizeof(why)))
				continue;
			if (bench_pattern_is_dense(pat) && n > o->dense_max)
				continue;
			bench_reference_tree(n, tree, sizeof(tree));
			add_case(FAM_REFERENCE, pat, 0, n, tree, "reference", "");
			/* permuting alltoall changes nothing; random is random already */
			if (o->permuted && strcmp(pat, "alltoall") && strcmp(pat, "random"))
				add_case(FAM_REFERENCE, pat, 1, n, tree, "reference", "");
		}
		snprintf(sizes, sizeof(sizes), "%s", o->sizes);
	}
	if (o->odd) {
		for (size_t t = 0; t < sizeof(odd_trees) / sizeof(odd_trees[0]); t++) {
			char err[256];
			int ar[16], d;
			double co[16];
			long leaves = 1;
			d = bench_parse_tleaf(odd_trees[t][1], ar, co, err, sizeof(err));
			for (int l = 0; l < d; l++)
				leaves *= ar[l];
			for (int p = 0; bench_pattern_names[p]; p++) {
				const char *pat = bench_pattern_names[p];
				int n = (int)leaves;
				if (!in_list(o->patterns, pat) || !strcmp(pat, "alltoall"))
					continue;
				if (!strcmp(pat, "cg")) /* a power of two: a partly used machine */
					while (n & (n - 1))
						n &= n - 1;
				add_case(FAM_ODD, pat, 0, n, odd_trees[t][1], odd_trees[t][0], "");
				if (o->permuted && strcmp(pat, "random"))
					add_case(FAM_ODD, pat, 1, n, odd_trees[t][1],
					         odd_trees[t][0], "");
			}
		}
	}
	if (o->partial) {
		const char *ptree = "tleaf 4 4 1 16 1 2 1 4 1"; /* 512 cores */
		for (size_t k = 0; k < 3; k++) {
			int *leaves = malloc(512 * sizeof(int)), n;
			n = partial_leaves(partial_kinds[k], 512, o->seed + 7, leaves);
			free(leaves);
			for (int p = 0; bench_pattern_names[p]; p++) {
				const char *pat = bench_pattern_names[p];
				char why[128];
				if (!in_list(o->patterns, pat) || !strcmp(pat, "alltoall") ||
				    bench_pattern_check(pat, n, why, sizeof(why)))
					continue;
				add_case(FAM_PARTIAL, pat, 0, n, ptree, "4x16x2x4",
				         partial_kinds[k]);
				if (o->permuted && strcmp(pat, "random"))
					add_case(FAM_PARTIAL, pat, 1, n, ptree, "4x16x2x4",
					         partial_kinds[k]);
			}
		}
	}
	if (o->full) {
		bench_reference_tree(1048576, tree, sizeof(tree));
		add_case(FAM_FULL, "stencil3d", 0, 1048576, tree, "reference", "");
	}
}

/* ---------------------------------------------------------------------- */
/* Running a case                                                          */

static int mkdir_p(const char *dir)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	return mkdir(buf, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* Our own independent hop-bytes of "rank i on leaf map[i]" (checks tmatch_eval). */
static double own_hop_bytes(const bench_csr_t *g, const int *arity, int depth, const int *map)
{
	long span[17];
	double hb = 0;
	span[depth] = 1;
	for (int l = depth - 1; l >= 0; l--)
		span[l] = span[l + 1] * arity[l];
	for (int i = 0; i < g->n; i++)
		for (size_t k = g->row_ptr[i]; k < g->row_ptr[i + 1]; k++) {
			int j = g->col[k], l = depth;
			if (j <= i)
				continue;
			while (map[i] / span[l] != map[j] / span[l])
				l--;
			hb += g->w[k] * 2.0 * (depth - l);
		}
	return hb;
}

static void run_case(const struct options *o, struct bcase *c, int idx)
{
	char mtx[4096], allowed_path[4096], allowed_arg[4200], err[512];
	tmatch_error_t terr;
	tmatch_topo_t *topo = NULL;
	tmatch_comm_t *comm = NULL;
	int *perm = NULL, *map = NULL, *ident = NULL, *leaves = NULL, nleaves;
	tmatch_metrics_t m;

	tmatch_error_clear(&terr);
	snprintf(mtx, sizeof(mtx), "%s/%s%s-%d-s%llu.mtx", o->workdir, c->pattern,
	         c->permuted ? "-perm" : "", c->n, (unsigned long long)o->seed);
	if (access(mtx, R_OK) != 0) {
		if (c->permuted) {
			perm = malloc((size_t)c->n * sizeof(*perm));
			if (!perm) {
				note("out of memory");
				return;
			}
			bench_permutation(c->n, o->seed + 1000003ULL * (uint64_t)c->n, perm);
		}
		if (bench_pattern_write_mtx(c->pattern, c->n, o->seed, perm, mtx, NULL, err,
		                            sizeof(err))) {
			note("%s", err);
			free(perm);
			return;
		}
		free(perm);
	}
	topo = tmatch_topo_from_tleaf(c->tree, &terr);
	if (!topo) {
		note("topology '%s': %s", c->tree, terr.msg);
		return;
	}
	nleaves = tmatch_topo_nb_leaves(topo);
	leaves = malloc((size_t)nleaves * sizeof(int));
	map = malloc((size_t)c->n * sizeof(int));
	ident = malloc((size_t)c->n * sizeof(int));
	if (!leaves || !map || !ident) {
		note("out of memory");
		goto out;
	}
	allowed_arg[0] = '\0';
	if (c->allowed[0]) {
		int count = partial_leaves(c->allowed, nleaves, o->seed + 7, leaves);
		FILE *f;
		snprintf(allowed_path, sizeof(allowed_path), "%s/allowed-%s.txt", o->workdir,
		         c->allowed);
		f = fopen(allowed_path, "w");
		if (!f) {
			note("%s: %s", allowed_path, strerror(errno));
			goto out;
		}
		for (int k = 0; k < count; k++)
			fprintf(f, "%d%c", leaves[k], k + 1 < count ? ',' : '\n');
		fclose(f);
		if (tmatch_topo_set_allowed(topo, leaves, count, &terr)) {
			note("allowed set: %s", terr.msg);
			goto out;
		}
		snprintf(allowed_arg, sizeof(allowed_arg), "@%s", allowed_path);
	} else {
		for (int k = 0; k < nleaves; k++)
			leaves[k] = k;
	}
	{
		int ar[16], d;
		double co[16];
		d = bench_parse_tleaf(c->tree, ar, co, err, sizeof(err));
		int count = c->allowed[0] ? tmatch_topo_nb_allowed(topo) : nleaves;
		if (d > 0)
			c->bound =
			    bench_stencil_lower_bound(c->pattern, c->n, ar, d, leaves, count);
	}
	comm = tmatch_comm_load(mtx, &terr);
	if (!comm) {
		char buf[800];
		note("%s", tmatch_error_format(&terr, buf, sizeof(buf)));
		goto out;
	}
	if (tmatch_comm_order(comm) != c->n) {
		note("%s: order %d, expected %d", mtx, tmatch_comm_order(comm), c->n);
		goto out;
	}
	for (int r = 0; r < c->n; r++)
		ident[r] = leaves[r];
	if (tmatch_eval(comm, topo, ident, &m, &terr) == 0)
		c->identity = m.hop_bytes;
	/* Cross-check our evaluator on the identity with an independent sum. */
	if (c->n <= 20000) {
		bench_csr_t g = {0};
		int ar[16], d;
		double co[16];
		d = bench_parse_tleaf(c->tree, ar, co, err, sizeof(err));
		if (d > 0 && bench_csr_load_mtx(mtx, &g, err, sizeof(err)) == 0) {
			double own = own_hop_bytes(&g, ar, d, ident);
			if (fabs(own - c->identity) > 1e-9 * (own > 1 ? own : 1))
				note("EVALUATOR MISMATCH on %s: tmatch_eval %.17g, independent "
				     "%.17g",
				     mtx, c->identity, own);
			bench_csr_free(&g);
		}
	}

	for (int mi = 0; mi < nmappers; mi++) {
		struct mapper *mp = &mappers[mi];
		struct result *res = &c->res[mi];
		char outp[2][4200], errp[4200], nstr[32];
		char *argv[16];
		double times[16], cpus[16];
		int argc = 0, reps = o->reps;

		if (mp->unavailable) {
			snprintf(res->why, sizeof(res->why), "n/a");
			continue;
		}
		if (c->fam == FAM_FULL && (mp->name || mp->scotch))
			continue; /* the million-rank case is for the default mapper only */
		if (c->fam == FAM_FULL)
			reps = 1;
		if (mp->scotch) {
			argv[argc++] = (char *)o->scotch;
		} else {
			argv[argc++] = (char *)o->treematch;
			argv[argc++] = "map";
		}
		argv[argc++] = "--topology";
		argv[argc++] = c->tree;
		argv[argc++] = "--profile";
		argv[argc++] = mtx;
		if (mp->name) {
			argv[argc++] = "--mapper";
			argv[argc++] = (char *)mp->name;
		}
		if (mp->scotch && o->scotch_link) {
			argv[argc++] = "--link";
			argv[argc++] = (char *)o->scotch_link;
		}
		if (allowed_arg[0]) {
			argv[argc++] = "--allowed";
			argv[argc++] = allowed_arg;
		}
		argv[argc] = NULL;
		(void)nstr;
		snprintf(errp, sizeof(errp), "%s/case%d-%s.err", o->workdir, idx, mp->label);
		res->deterministic = 1;
		for (int rep = 0; rep < reps; rep++) {
			struct run r;
			snprintf(outp[rep ? 1 : 0], sizeof(outp[0]), "%s/case%d-%s.map%s",
			         o->workdir, idx, mp->label, rep ? ".again" : "");
			launch(argv, outp[rep ? 1 : 0], errp, o->timeout, &r);
			if (r.status == RUN_UNAVAILABLE) {
				mp->unavailable = 1;
				snprintf(mp->unavailable_why, sizeof(mp->unavailable_why), "%s",
				         r.why);
				snprintf(res->why, sizeof(res->why), "n/a");
				note("%s: not available in this build, skipped from now on",
				     mp->label);
				break;
			}
			if (r.status != RUN_OK) {
				snprintf(res->why, sizeof(res->why), "%s", r.why);
				note("case %d %s %s%s n=%d: %s: %s", idx, c->shape, c->pattern,
				     c->permuted ? " permuted" : "", c->n, mp->label, r.why);
				break;
			}
			times[rep] = r.seconds;
			cpus[rep] = r.cpu_seconds;
			if (r.maxrss_kib > res->maxrss_kib)
				res->maxrss_kib = r.maxrss_kib;
			if (rep > 0 && !same_file(outp[0], outp[1]))
				res->deterministic = 0;
			if (rep == 0) {
				if (read_mapping(outp[0], c->n, map, res->why, sizeof(res->why)))
					break;
				if (tmatch_map_validate(topo, map, c->n, &terr)) {
					snprintf(res->why, sizeof(res->why), "invalid: %.150s",
					         terr.msg);
					break;
				}
				if (tmatch_eval(comm, topo, map, &m, &terr)) {
					snprintf(res->why, sizeof(res->why), "eval: %.150s",
					         terr.msg);
					break;
				}
				res->hop_bytes = m.hop_bytes;
			}
			if (rep == reps - 1) {
				qsort(times, (size_t)reps, sizeof(double), cmp_double);
				qsort(cpus, (size_t)reps, sizeof(double), cmp_double);
				res->seconds = times[reps / 2];
				res->cpu_seconds = cpus[reps / 2];
				res->valid = 1;
			}
			/* a slow run is not repeated: its median would not move much */
			if (rep == 0 && r.seconds > 5 && reps > 1) {
				res->seconds = r.seconds;
				res->cpu_seconds = r.cpu_seconds;
				res->valid = 1;
				break;
			}
		}
		if (res->valid)
			note("    %-16s %8.3f s (cpu %.3f s) %7.1f MiB  hop-bytes %.6g", mp->label,
			     res->seconds, res->cpu_seconds, res->maxrss_kib / 1024.0,
			     res->hop_bytes);
		if (res->valid && !res->deterministic)
			note("case %d %s: two runs gave different mappings", idx, mp->label);
		unlink(outp[0]);
		unlink(outp[1]);
		if (res->valid)
			unlink(errp);
	}
out:
	free(leaves);
	free(map);
	free(ident);
	tmatch_comm_destroy(comm);
	tmatch_topo_destroy(topo);
}

/* ---------------------------------------------------------------------- */
/* Reports                                                                 */

static int scotch_index(void)
{
	for (int i = 0; i < nmappers; i++)
		if (mappers[i].scotch)
			return i;
	return -1;
}

static int default_index(void)
{
	for (int i = 0; i < nmappers; i++)
		if (!mappers[i].scotch && !mappers[i].name)
			return i;
	return -1;
}

static const char *case_label(const struct bcase *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", c->pattern, c->permuted ? " (perm)" : "");
	return buf;
}

static void cell(const struct result *r, const struct result *s, char *buf, size_t len)
{
	char hb[32];
	if (!r->valid) {
		snprintf(buf, len, "%s", r->why[0] ? r->why : "-");
		return;
	}
	if (s && s->valid && s->hop_bytes > 0)
		snprintf(buf, len, "%.3f / %.3g s (%.3g) / %.0f MiB%s", r->hop_bytes / s->hop_bytes,
		         r->seconds, r->cpu_seconds, r->maxrss_kib / 1024.0,
		         r->deterministic ? "" : " (nondet)");
	else
		snprintf(buf, len, "%s hb / %.3g s (%.3g) / %.0f MiB", fmt_hb(r->hop_bytes, hb, 32),
		         r->seconds, r->cpu_seconds, r->maxrss_kib / 1024.0);
}

static void print_case_tables(enum family fam, const char *title)
{
	int si = scotch_index(), any = 0;
	char lab[64], buf[256], hb[32];

	for (int k = 0; k < ncases; k++)
		any |= cases[k].fam == fam;
	if (!any)
		return;
	emit("\n## %s\n\n", title);
	emit("Each cell: hop-bytes ratio to Scotch / wall time of the whole process (median), "
	     "in parentheses its CPU time (user + system, median) / peak RSS. Scotch's own cell: "
	     "its hop-bytes / times / RSS.\n\n");
	emit("| machine | pattern | ranks | identity hop-bytes |");
	for (int i = 0; i < nmappers; i++)
		emit(" %s |", mappers[i].label);
	emit("\n|---|---|---|---|");
	for (int i = 0; i < nmappers; i++)
		emit("---|");
	emit("\n");
	for (int k = 0; k < ncases; k++) {
		const struct bcase *c = &cases[k];
		if (c->fam != fam)
			continue;
		char mach[128];
		if (c->allowed[0])
			snprintf(mach, sizeof(mach), "%s %s", c->shape, c->allowed);
		else if (fam == FAM_REFERENCE || fam == FAM_FULL)
			snprintf(mach, sizeof(mach), "%s", c->tree + 6);
		else
			snprintf(mach, sizeof(mach), "%s", c->shape);
		emit("| %s | %s | %d | %s |", mach, case_label(c, lab, sizeof(lab)), c->n,
		     fmt_hb(c->identity, hb, sizeof(hb)));
		for (int i = 0; i < nmappers; i++) {
			const struct result *s = (si >= 0 && i != si) ? &c->res[si] : NULL;
			cell(&c->res[i], s, buf, sizeof(buf));
			emit(" %s |", buf);
		}
		emit("\n");
	}
}

/* Per mapper x pattern: geometric mean and worst ratio to Scotch, wins, time. */
static void print_summary(void)
{
	int si = scotch_index();
	if (si < 0)
		return;
	emit("\n## Per mapper and pattern: cost ratio to Scotch and time\n\n");
	emit("All families (reference tree, odd shapes, partial allocations), ordered and "
	     "permuted. ratio = our hop-bytes / Scotch's (lower is better); geo-mean and worst "
	     "over the cases; `<=` = cases at or below Scotch; times = sums of median wall "
	     "(and CPU) times over the same cases, ours and Scotch's.\n\n");
	emit("| mapper | pattern | cases | geo-mean ratio | worst ratio | <= Scotch | wall (cpu) | "
	     "Scotch wall (cpu) |\n|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nmappers; i++) {
		if (i == si)
			continue;
		for (int p = 0; bench_pattern_names[p]; p++) {
			const char *pat = bench_pattern_names[p];
			int cnt = 0, le = 0;
			double lsum = 0, worst = 0, t = 0, ts = 0, tc = 0, tsc = 0;
			for (int k = 0; k < ncases; k++) {
				const struct bcase *c = &cases[k];
				const struct result *r = &c->res[i], *s = &c->res[si];
				if (strcmp(c->pattern, pat) || !r->valid || !s->valid ||
				    s->hop_bytes <= 0)
					continue;
				double ratio = r->hop_bytes / s->hop_bytes;
				cnt++;
				lsum += log(ratio);
				if (ratio > worst)
					worst = ratio;
				if (r->hop_bytes <= s->hop_bytes * (1 + 1e-12))
					le++;
				t += r->seconds;
				ts += s->seconds;
				tc += r->cpu_seconds;
				tsc += s->cpu_seconds;
			}
			if (!cnt)
				continue;
			emit("| %s | %s | %d | %.4f | %.4f | %d/%d | %.3g s (%.3g) | %.3g s (%.3g) "
			     "|\n",
			     mappers[i].label, pat, cnt, exp(lsum / cnt), worst, le, cnt, t, tc, ts,
			     tsc);
		}
	}
}

/* TreeMatch hop-bytes of the reference implementation (reference-figures.md). */
static double reference_tm(const char *pattern, int n)
{
	static const struct {
		const char *p;
		double v[5];
	} ref[] = {
	    {"stencil2d", {3.92e+05, 1.804e+06, 7.612e+06, 3.13e+07, 1.27e+08}},
	    {"stencil3d", {5.52e+05, 2.8e+06, 1.227e+07, 5.245e+07, 2.171e+08}},
	    {"cg", {4.24e+05, 2.64e+06, 1.411e+07, 6.931e+07, 3.272e+08}},
	    {"alltoall", {1.146e+06, 2.26e+07, 4.05e+08, 6.653e+09, 1.071e+11}},
	    {"hier", {4.255e+06, 3.144e+07, 1.761e+08, 1.073e+09, 6.71e+09}},
	};
	static const int sizes[5] = {64, 256, 1024, 4096, 16384};
	for (size_t k = 0; k < sizeof(ref) / sizeof(ref[0]); k++)
		if (!strcmp(ref[k].p, pattern))
			for (int s = 0; s < 5; s++)
				if (sizes[s] == n)
					return ref[k].v[s];
	return 0;
}

/*
 * The stencils against their proven lower bound (bench_stencil_lower_bound):
 * how much any mapper could still gain on them, and what the default's
 * geometric mean against Scotch would be if every stencil case reached its
 * bound while every other case kept its ratio.
 */
static void print_bounds(int si, int di)
{
	static const char *const fam_name[] = {"reference tree", "odd shapes",
	                                       "partial allocations", "one million ranks"};
	double lsum_d[4] = {0}, lsum_s[4] = {0}, all_now = 0, all_best = 0;
	int cnt[4] = {0}, all = 0, rows = 0;
	char hb[32];

	if (si < 0 || di < 0)
		return;
	for (int k = 0; k < ncases; k++) {
		const struct bcase *c = &cases[k];
		const struct result *d = &c->res[di], *s = &c->res[si];
		if (!d->valid || !s->valid || s->hop_bytes <= 0)
			continue;
		all++;
		all_now += log(d->hop_bytes / s->hop_bytes);
		all_best += log((c->bound > 0 ? c->bound : d->hop_bytes) / s->hop_bytes);
		if (c->bound <= 0)
			continue;
		if (!rows++) {
			emit("\n### Stencils against a proven lower bound\n\n");
			emit("bound = a lower bound on the hop-bytes of *every* placement of the "
			     "case: at each level of the tree, each subtree holds as many ranks "
			     "as it has leaves, and by the isoperimetric inequality of the grid "
			     "(Loomis-Whitney) that many cells have at least so many edges "
			     "leaving them (`bench_stencil_lower_bound` in bench/patterns.c). "
			     "default / bound close to 1 means no mapper can do much better; "
			     "bound / Scotch is the best ratio to Scotch any mapper could reach "
			     "(the bound is not always reachable: on odd shapes the subtrees "
			     "cannot all be squares or cubes).\n\n");
			emit("| machine | pattern | ranks | bound | %s / bound | Scotch / bound | "
			     "bound / Scotch |\n|---|---|---|---|---|---|---|\n",
			     mappers[di].label);
		}
		cnt[c->fam]++;
		lsum_d[c->fam] += log(d->hop_bytes / c->bound);
		lsum_s[c->fam] += log(s->hop_bytes / c->bound);
		emit("| %s%s%s | %s%s | %d | %s | %.4f | %.4f | %.4f |\n", c->shape,
		     c->allowed[0] ? " " : "", c->allowed, c->pattern, c->permuted ? " (perm)" : "",
		     c->n, fmt_hb(c->bound, hb, sizeof(hb)), d->hop_bytes / c->bound,
		     s->hop_bytes / c->bound, c->bound / s->hop_bytes);
	}
	if (!rows)
		return;
	emit("\n");
	for (int f = 0; f < 4; f++)
		if (cnt[f])
			emit("- %s: %s %.4f x the bound, Scotch %.4f x (geometric means over %d "
			     "cases)\n",
			     fam_name[f], mappers[di].label, exp(lsum_d[f] / cnt[f]),
			     exp(lsum_s[f] / cnt[f]), cnt[f]);
	emit("- if every stencil case reached its bound and every other case kept its "
	     "ratio, %s would be %.4f x Scotch on average (now %.4f)\n",
	     mappers[di].label, exp(all_best / all), exp(all_now / all));
}

static void print_targets(void)
{
	int si = scotch_index(), di = default_index(), ti = -1;
	char hb[32], hb2[32];

	for (int i = 0; i < nmappers; i++)
		if (mappers[i].name && !strcmp(mappers[i].name, "treematch"))
			ti = i;
	emit("\n## Targets\n\n");

	/* Quality against the reference TreeMatch, ordered patterns. */
	emit("### Quality vs the reference TreeMatch (ordered patterns, reference tree)\n\n");
	emit("ratio = ours / reference TreeMatch hop-bytes (<= 1 meets the target; the reference "
	     "figures have 4 significant digits, so up to 1.0005 counts as equal).\n\n");
	emit("| pattern | ranks | reference TreeMatch | treematch | ratio | %s | ratio |\n"
	     "|---|---|---|---|---|---|---|\n",
	     di >= 0 ? mappers[di].label : "default");
	int met = 0, total = 0;
	for (int k = 0; k < ncases; k++) {
		const struct bcase *c = &cases[k];
		double ref = reference_tm(c->pattern, c->n);
		if (c->fam != FAM_REFERENCE || c->permuted || ref == 0)
			continue;
		const struct result *t = ti >= 0 ? &c->res[ti] : NULL;
		const struct result *d = di >= 0 ? &c->res[di] : NULL;
		char a[64] = "-", b[64] = "-", ra[32] = "-", rb[32] = "-";
		if (t && t->valid) {
			fmt_hb(t->hop_bytes, a, sizeof(a));
			snprintf(ra, sizeof(ra), "%.4f", t->hop_bytes / ref);
			total++;
			met += t->hop_bytes <= ref * 1.0005; /* the reference has 4 digits */
		}
		if (d && d->valid) {
			fmt_hb(d->hop_bytes, b, sizeof(b));
			snprintf(rb, sizeof(rb), "%.4f", d->hop_bytes / ref);
		}
		emit("| %s | %d | %s | %s | %s | %s | %s |\n", c->pattern, c->n,
		     fmt_hb(ref, hb, sizeof(hb)), a, ra, b, rb);
	}
	emit("\ntreematch at or below the reference: %d of %d cases.\n", met, total);

	/* Default mapper vs Scotch on everything. */
	if (si >= 0 && di >= 0) {
		int cnt = 0, le = 0;
		double lsum = 0, worst = 0;
		const struct bcase *wc = NULL;
		for (int k = 0; k < ncases; k++) {
			const struct bcase *c = &cases[k];
			const struct result *d = &c->res[di], *s = &c->res[si];
			if (!d->valid || !s->valid || s->hop_bytes <= 0)
				continue;
			double ratio = d->hop_bytes / s->hop_bytes;
			cnt++;
			lsum += log(ratio);
			le += d->hop_bytes <= s->hop_bytes * (1 + 1e-12);
			if (ratio > worst) {
				worst = ratio;
				wc = c;
			}
		}
		if (cnt) {
			emit("\n### Default mapper (%s) vs Scotch, every case\n\n",
			     mappers[di].label);
			emit("- at or below Scotch: %d of %d cases (target: all)\n", le, cnt);
			emit("- geometric mean ratio: %.4f, i.e. %.1f %% %s Scotch (target: 5 %% "
			     "below)\n",
			     exp(lsum / cnt), fabs(1 - exp(lsum / cnt)) * 100,
			     exp(lsum / cnt) <= 1 ? "below" : "above");
			if (wc)
				emit("- worst: %.4f on %s%s, %d ranks, %s %s\n", worst, wc->pattern,
				     wc->permuted ? " (permuted)" : "", wc->n, wc->shape,
				     wc->allowed);
			int shown = 0;
			for (int k = 0; k < ncases; k++) {
				const struct bcase *c = &cases[k];
				const struct result *d = &c->res[di], *s = &c->res[si];
				if (!d->valid || !s->valid ||
				    d->hop_bytes <= s->hop_bytes * (1 + 1e-12))
					continue;
				if (!shown++)
					emit("- cases above Scotch:");
				emit(" %s%s/%d/%s%s%s (%.4f);", c->pattern,
				     c->permuted ? "-perm" : "", c->n, c->shape,
				     c->allowed[0] ? " " : "", c->allowed,
				     d->hop_bytes / s->hop_bytes);
			}
			if (shown)
				emit("\n");
		}
	}

	print_bounds(si, di);

	/* Speed and memory at 16384 random sparse; 1M stencil3d. */
	emit("\n### Speed and memory\n\n");
	for (int k = 0; k < ncases; k++) {
		const struct bcase *c = &cases[k];
		if (c->fam == FAM_REFERENCE && !strcmp(c->pattern, "random") && c->n == 16384 &&
		    di >= 0) {
			const struct result *d = &c->res[di];
			const struct result *s = si >= 0 ? &c->res[si] : NULL;
			if (d->valid && s && s->valid) {
				emit("- random sparse, 16384 ranks, whole process, wall: %s %.3g s "
				     "vs "
				     "Scotch %.3g s = %.2fx Scotch's time (target <= 0.5x): %s\n",
				     mappers[di].label, d->seconds, s->seconds,
				     d->seconds / s->seconds,
				     d->seconds <= 0.5 * s->seconds ? "met" : "NOT met");
				emit("- the same in CPU time (user + system, robust to the shared "
				     "machine; Scotch 7 runs threads): %.3g s vs %.3g s = %.2fx: "
				     "%s\n",
				     d->cpu_seconds, s->cpu_seconds,
				     s->cpu_seconds > 0 ? d->cpu_seconds / s->cpu_seconds : 0,
				     d->cpu_seconds <= 0.5 * s->cpu_seconds ? "met" : "NOT met");
			}
			if (d->valid)
				emit("- random sparse, 16384 ranks: peak RSS %.1f MiB (target < 64 "
				     "MiB): %s\n",
				     d->maxrss_kib / 1024.0,
				     d->maxrss_kib < 64 * 1024 ? "met" : "NOT met");
			else
				emit("- random sparse, 16384 ranks: %s failed: %s\n",
				     mappers[di].label, d->why);
		}
		if (c->fam == FAM_FULL && di >= 0) {
			const struct result *d = &c->res[di];
			if (d->valid)
				emit("- stencil3d, 1,048,576 ranks, whole process: %.3g s wall "
				     "(%.3g s "
				     "CPU), peak RSS %.0f MiB, hop-bytes %s (identity %s) (target "
				     "< 60 "
				     "s): %s\n",
				     d->seconds, d->cpu_seconds, d->maxrss_kib / 1024.0,
				     fmt_hb(d->hop_bytes, hb, sizeof(hb)),
				     fmt_hb(c->identity, hb2, sizeof(hb2)),
				     d->seconds < 60 ? "met" : "NOT met");
			else
				emit("- stencil3d, 1,048,576 ranks: %s\n", d->why);
		}
	}
}

/* ---------------------------------------------------------------------- */

static void add_mapper(const char *label, const char *name, int scotch)
{
	if (nmappers == MAX_MAPPERS)
		return;
	mappers[nmappers].label = label;
	mappers[nmappers].name = name;
	mappers[nmappers].scotch = scotch;
	nmappers++;
}

int main(int argc, char **argv)
{
	struct options o = {
	    .treematch = "build/bin/treematch",
	    .scotch = NULL,
	    .workdir = NULL,
	    .out = NULL,
	    .command = NULL,
	    .reps = 3,
	    .timeout = 300,
	    .dense_max = 4096,
	    .full = 0,
	    .permuted = 1,
	    .odd = 1,
	    .partial = 1,
	    .seed = 42,
	};
	static char scotch_default[4096], workdir_default[4096], default_label[64];
	char load0[128] = "?";
	time_t start = time(NULL);
	double t0 = now();

	snprintf(o.sizes, sizeof(o.sizes), "64,256,1024,4096,16384");
	snprintf(o.patterns, sizeof(o.patterns), "stencil2d,stencil3d,cg,alltoall,hier,random");
	snprintf(o.mappers, sizeof(o.mappers), "treematch,greedy,rcm,bisect,auto,default,scotch");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--full")) {
			o.full = 1;
		} else if (!strcmp(a, "--no-permuted")) {
			o.permuted = 0;
		} else if (!strcmp(a, "--no-odd")) {
			o.odd = 0;
		} else if (!strcmp(a, "--no-partial")) {
			o.partial = 0;
		} else if (!v) {
			goto bad;
		} else if (!strcmp(a, "--treematch")) {
			o.treematch = v, i++;
		} else if (!strcmp(a, "--scotch")) {
			o.scotch = v, i++;
		} else if (!strcmp(a, "--workdir")) {
			o.workdir = v, i++;
		} else if (!strcmp(a, "--out")) {
			o.out = v, i++;
		} else if (!strcmp(a, "--scotch-link")) {
			o.scotch_link = v, i++;
		} else if (!strcmp(a, "--command")) {
			o.command = v, i++;
		} else if (!strcmp(a, "--reps")) {
			o.reps = atoi(v), i++;
		} else if (!strcmp(a, "--timeout")) {
			o.timeout = atoi(v), i++;
		} else if (!strcmp(a, "--dense-max")) {
			o.dense_max = atoi(v), i++;
		} else if (!strcmp(a, "--seed")) {
			o.seed = strtoull(v, NULL, 10), i++;
		} else if (!strcmp(a, "--sizes")) {
			snprintf(o.sizes, sizeof(o.sizes), "%s", v), i++;
		} else if (!strcmp(a, "--patterns")) {
			snprintf(o.patterns, sizeof(o.patterns), "%s", v), i++;
		} else if (!strcmp(a, "--mappers")) {
			snprintf(o.mappers, sizeof(o.mappers), "%s", v), i++;
		} else {
			goto bad;
		}
	}
	if (o.reps < 1 || o.reps > 15 || o.timeout < 1)
		goto bad;
	if (!o.scotch) {
		/* scotch_map sits next to this program */
		snprintf(scotch_default, sizeof(scotch_default), "%s", argv[0]);
		char *slash = strrchr(scotch_default, '/');
		if (slash)
			snprintf(slash + 1,
			         sizeof(scotch_default) - (size_t)(slash + 1 - scotch_default),
			         "scotch_map");
		else
			snprintf(scotch_default, sizeof(scotch_default), "./scotch_map");
		o.scotch = scotch_default;
	}
	if (!o.workdir) {
		snprintf(workdir_default, sizeof(workdir_default), "/tmp/tmatch-bench-%d",
		         (int)getuid());
		o.workdir = workdir_default;
	}
	if (mkdir_p(o.workdir)) {
		note("%s: %s", o.workdir, strerror(errno));
		return 1;
	}
	if (access(o.treematch, X_OK) != 0) {
		note("%s: %s (build it first, or give --treematch)", o.treematch, strerror(errno));
		return 1;
	}

	/* Mappers: ours by name, the default (no --mapper), Scotch. */
	snprintf(default_label, sizeof(default_label), "default (%s)", TMATCH_DEFAULT_MAPPER);
	static const char *const ours[] = {"treematch", "greedy", "rcm", "bisect",
	                                   "auto",      "packed", "rr",  "random"};
	for (size_t k = 0; k < sizeof(ours) / sizeof(ours[0]); k++) {
		if (!in_list(o.mappers, ours[k]))
			continue;
		/* the default is run once, under its own label */
		if (!strcmp(ours[k], TMATCH_DEFAULT_MAPPER) && in_list(o.mappers, "default"))
			continue;
		add_mapper(ours[k], ours[k], 0);
	}
	if (in_list(o.mappers, "default"))
		add_mapper(default_label, NULL, 0);
	if (in_list(o.mappers, "scotch")) {
		if (access(o.scotch, X_OK) != 0)
			note("%s: %s: Scotch column left out", o.scotch, strerror(errno));
		else
			add_mapper("Scotch", NULL, 1);
	}

	if (launcher_start())
		note("cannot start the launcher process: peak RSS will include the driver's");
	plan(&o);
	if (o.out) {
		out_copy = fopen(o.out, "w");
		if (!out_copy)
			note("%s: %s (printing to stdout only)", o.out, strerror(errno));
	}
	{
		FILE *f = fopen("/proc/loadavg", "r");
		if (f) {
			if (!fgets(load0, sizeof(load0), f))
				load0[0] = '\0';
			load0[strcspn(load0, "\n")] = '\0';
			fclose(f);
		}
	}
	note("%d cases x %d mappers, %d run(s) each; data in %s", ncases, nmappers, o.reps,
	     o.workdir);
	for (int k = 0; k < ncases; k++) {
		note("[%d/%d] %s %s%s, %d ranks%s%s", k + 1, ncases, cases[k].shape,
		     cases[k].pattern, cases[k].permuted ? " (permuted)" : "", cases[k].n,
		     cases[k].allowed[0] ? ", " : "", cases[k].allowed);
		run_case(&o, &cases[k], k);
	}

	char stamp[64];
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M UTC", gmtime(&start));
	emit("# Benchmark results\n\n");
	emit("Produced by `%s` on %s (%ld s).\n\n", o.command ? o.command : "bench/bench", stamp,
	     (long)(now() - t0));
	emit("Machine: %ld CPUs, load average at start %s. **The machine was shared** with "
	     "other engineers building and testing at the same time: times are noisy; each time "
	     "is the median of %d runs (one run when it takes over 5 s) of the whole process "
	     "(fork/exec, load the .mtx, map, "
	     "write), peak RSS from wait4. Hop-bytes of every mapping (ours and Scotch's) are "
	     "computed by our evaluator (tmatch_eval), cross-checked on the identity mapping by "
	     "an independent sum. Scotch %d.%d.%d from Debian: SCOTCH_graphMap, "
	     "SCOTCH_STRATQUALITY, 0 %% imbalance (bench/scotch_map.c). Dense patterns "
	     "(alltoall, hier) are capped at %d ranks: at 16384 they have 268M nonzeros, too "
	     "much memory for us and for Scotch. Seeds: patterns %llu, permutations derived "
	     "from it.\n",
	     sysconf(_SC_NPROCESSORS_ONLN), load0, o.reps, SCOTCH_VERSION, SCOTCH_RELEASE,
	     SCOTCH_PATCHLEVEL, o.dense_max, (unsigned long long)o.seed);
	for (int i = 0; i < nmappers; i++)
		if (mappers[i].unavailable)
			emit("\n- `%s` was skipped: %s\n", mappers[i].label,
			     mappers[i].unavailable_why);
	print_targets();
	print_summary();
	print_case_tables(FAM_REFERENCE, "Reference tree (tleaf 4 S 1 16 1 2 1 4 1)");
	print_case_tables(FAM_ODD, "Odd machine shapes (arities 3, 5, 6, 7, 10, 14)");
	print_case_tables(FAM_PARTIAL,
	                  "Partial allocations (4 switches x 16 nodes x 2 x 4; ours with "
	                  "`treematch map --allowed`, Scotch with SCOTCH_archSub)");
	print_case_tables(FAM_FULL, "One million ranks (default mapper only)");
	if (out_copy)
		fclose(out_copy);
	return 0;
bad:
	usage(stderr);
	return 2;
}
