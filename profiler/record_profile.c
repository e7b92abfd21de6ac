/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_profile.c - the recorder's profile: set up at MPI_Init (every rank
 * or none), and at MPI_Finalize the gather of every rank's rows and the
 * atomic write of one comm-profile YAML file by world rank 0 (version 2,
 * `collectives: wire` or `logical`, when collectives are recorded; version
 * 1, point-to-point only, with TREEMATCH_RECORD_COLLECTIVES=off).
 *
 * Environment (set by `treematch record` and by srun --treematch-record):
 *   TREEMATCH_RECORD_OUTPUT       profile to write (absolute path advised);
 *                                 unset: the library stays passive
 *   TREEMATCH_RECORD_COLLECTIVES  wire (default): collectives as the
 *                                 messages of record_coll.c's lowering;
 *                                 logical: the logical model; off: none
 *   TREEMATCH_RECORD_VERBOSE      1: rank 0 reports the write and its time
 *   TREEMATCH_RECORD_DENSE_MAX    largest job with dense counters (default
 *                                 65536; tests set 0 to exercise the hash)
 *   TREEMATCH_RECORD_TRACE        also the time-independent trace there
 *                                 (record_trace.c), with a copy of the
 *                                 profile, DIR/profile.yml
 *
 * Messages go to stderr and start with "treematch-record:"; the library never
 * aborts the application: if the profile cannot be written, it says why and
 * MPI_Finalize goes on.
 */
#include "profiler/record_private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef TMATCH_VERSION
#define TMATCH_VERSION "unknown"
#endif

static char out_path[PATH_MAX];

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n = snprintf(buf, sizeof buf, "treematch-record: ");

	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", buf);
}

/* ------------------------------------------------------------------------ */
/* Finalize: gather and write                                                */

/* One gathered edge: kind, src, dst, msgs, bytes (all as uint64 on the wire). */
#define EDGE_WORDS 5

static int edge_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* Local rows: P2P and COLL as (me -> peer), GET as (peer -> me). */
static uint64_t *local_edges(int *n_out)
{
	struct tmatch__state *st = &tmatch__st;
	size_t n = 0, cap = 64;
	uint64_t *e = malloc(cap * EDGE_WORDS * sizeof *e);

	if (!e)
		return NULL;
	for (int k = 0; k < TMATCH__NKINDS; k++) {
		const struct tmatch__counters *c = &st->kind[k];
		for (uint32_t i = 0; c->cells && i < c->cap; i++) {
			int peer = c->dense ? (int)i : c->keys[i];
			if (peer < 0 || (!c->cells[i].msgs && !c->cells[i].bytes))
				continue;
			if (n == cap) {
				uint64_t *ne = realloc(e, cap * 2 * EDGE_WORDS * sizeof *e);
				if (!ne) {
					free(e);
					return NULL;
				}
				e = ne;
				cap *= 2;
			}
			uint64_t *r = e + n * EDGE_WORDS;
			r[0] = k == TMATCH__COLL ? 1 : 0; /* edges / coll_edges */
			r[1] = (uint64_t)(k == TMATCH__GET ? peer : st->world_rank);
			r[2] = (uint64_t)(k == TMATCH__GET ? st->world_rank : peer);
			r[3] = c->cells[i].msgs;
			r[4] = c->cells[i].bytes;
			n++;
		}
	}
	*n_out = (int)n;
	return e;
}

/* Write s as a double-quoted YAML scalar, control characters dropped. */
static void put_quoted(FILE *f, const char *s, size_t max)
{
	fputc('"', f);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch == 0x7f)
			continue;
		if (ch == '"' || ch == '\\')
			fputc('\\', f);
		fputc(ch, f);
	}
	fputc('"', f);
}

static void put_edges(FILE *f, const char *key, const uint64_t *e, size_t n, uint64_t set)
{
	size_t rows = 0;

	for (size_t i = 0; i < n; i++)
		rows += e[i * EDGE_WORDS] == set && e[i * EDGE_WORDS + 1] != e[i * EDGE_WORDS + 2];
	fprintf(f, "%s:\n  columns: [src, dst, msgs, bytes]\n  data:%s\n", key, rows ? "" : " []");
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = e + i * EDGE_WORDS;
		if (r[0] == set && r[1] != r[2])
			fprintf(f, "    - [%llu, %llu, %llu, %llu]\n", (unsigned long long)r[1],
			        (unsigned long long)r[2], (unsigned long long)r[3],
			        (unsigned long long)r[4]);
	}
}

static void put_provenance(FILE *f, const char *names, int len, double wall)
{
	struct tmatch__state *st = &tmatch__st;
	char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
	char exe[PATH_MAX] = "";
	char created[32] = "";
	int liblen = 0;
	time_t now = time(NULL);
	struct tm tm;
	const char *app, *job, *step;
	ssize_t r;

	PMPI_Get_library_version(lib, &liblen);
	lib[MPI_MAX_LIBRARY_VERSION_STRING] = '\0';
	lib[strcspn(lib, "\r\n")] = '\0';
	r = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[r > 0 ? r : 0] = '\0';
	app = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	if (gmtime_r(&now, &tm))
		strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);

	fputs("provenance:\n  tool: {name: treematch-record, version: ", f);
	put_quoted(f, TMATCH_VERSION, 64);
	fputs("}\n  mpi_library: ", f);
	put_quoted(f, lib, 200);
	fputs("\n  application: {name: ", f);
	put_quoted(f, app, 200);
	fprintf(f, "}\n  created: \"%s\"\n", created);
	job = getenv("SLURM_JOB_ID");
	step = getenv("SLURM_STEP_ID");
	if (job && *job && strspn(job, "0123456789") == strlen(job)) {
		fprintf(f, "  job: {id: %s", job);
		if (step && *step && strspn(step, "0123456789") == strlen(step))
			fprintf(f, ", step: %s", step);
		fputs("}\n", f);
	}
	/* nodes in order of their first rank; each rank listed once */
	fputs("  nodes:\n", f);
	char *done = calloc((size_t)st->world_size, 1);
	for (int i = 0; done && i < st->world_size; i++) {
		if (done[i])
			continue;
		const char *ni = names + (size_t)i * (size_t)len;
		fputs("    - {name: ", f);
		put_quoted(f, ni, (size_t)len);
		fputs(", ranks: [", f);
		for (int j = i, first = 1; j < st->world_size; j++)
			if (!done[j] &&
			    !strncmp(ni, names + (size_t)j * (size_t)len, (size_t)len)) {
				done[j] = 1;
				fprintf(f, first ? "%d" : ", %d", j);
				first = 0;
			}
		fputs("]}\n", f);
	}
	free(done);
	fprintf(f, "  scope: [p2p%s%s]\n",
	        st->collectives == TMATCH__COLL_WIRE      ? ", coll_wire"
	        : st->collectives == TMATCH__COLL_LOGICAL ? ", coll_logical"
	                                                  : "",
	        st->used_rma ? ", rma" : "");
	fprintf(f, "  wall_time_s: %.3f\n", wall);
}

/* Sort by (set, src, dst) and merge duplicates (put and get on one pair):
   the number of rows left. */
static size_t merge_edges(uint64_t *e, size_t n)
{
	size_t m = 0;

	qsort(e, n, EDGE_WORDS * sizeof *e, edge_cmp);
	for (size_t i = 0; i < n; i++) {
		uint64_t *r = e + i * EDGE_WORDS;
		if (m && !edge_cmp(e + (m - 1) * EDGE_WORDS, r)) {
			e[(m - 1) * EDGE_WORDS + 3] += r[3];
			e[(m - 1) * EDGE_WORDS + 4] += r[4];
		} else {
			memmove(e + m * EDGE_WORDS, r, EDGE_WORDS * sizeof *e);
			m++;
		}
	}
	return m;
}

/* rank 0: the merged rows e[n] to a temp file next to path, then renamed. */
static int write_profile(const char *path, const uint64_t *e, size_t n, const char *names,
                         int namelen, double wall, uint64_t lost)
{
	struct tmatch__state *st = &tmatch__st;
	char tmp[PATH_MAX + 16];
	FILE *f = NULL;
	int fd = -1, rc = -1;
	mode_t um;

	if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
		say("output path too long: %s", path);
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		say("cannot create a temporary file next to %s: %s", path, strerror(errno));
		return -1;
	}
	um = umask(0);
	umask(um);
	(void)fchmod(fd, 0666 & ~um);
	f = fdopen(fd, "w");
	if (!f)
		goto out;
	fd = -1;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	/* version 2 says what coll_edges hold (collectives: wire is placed by) */
	fprintf(f,
	        "format: comm-profile\nversion: %d\nranks: %d\nmetrics: [msgs, bytes]\n"
	        "directed: true\nplacement_metric: bytes\n",
	        st->collectives == TMATCH__COLL_OFF ? 1 : 2, st->world_size);
	if (st->collectives != TMATCH__COLL_OFF)
		fprintf(f, "collectives: %s\n",
		        st->collectives == TMATCH__COLL_WIRE ? "wire" : "logical");
	put_provenance(f, names, namelen, wall);
	put_edges(f, "edges", e, n, 0);
	if (st->collectives != TMATCH__COLL_OFF)
		put_edges(f, "coll_edges", e, n, 1);
	if (lost)
		fprintf(f, "stats: {unattributed_msgs: %llu}\n", (unsigned long long)lost);
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)
		goto out;
	if (fclose(f) != 0) {
		f = NULL;
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) != 0)
		goto out;
	/* make the rename durable */
	{
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof dir, ".");
		int dfd = open(dir, O_RDONLY | O_DIRECTORY);
		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
	}
	rc = 0;
out:
	if (rc != 0) {
		say("cannot write %s: %s", path, strerror(errno ? errno : EIO));
		if (f)
			fclose(f);
		if (fd >= 0)
			close(fd);
		unlink(tmp);
	}
	return rc;
}

static void finish(void)
{
	struct tmatch__state *st = &tmatch__st;
	int nloc = 0, size = st->world_size, root = st->world_rank == 0;
	uint64_t hdr[3], *hdrs = NULL, *all = NULL, *mine = NULL;
	int *counts = NULL, *displs = NULL;
	char name[MPI_MAX_PROCESSOR_NAME] = "", *names = NULL;
	int namelen = 0;
	double t0 = PMPI_Wtime(), wall = t0 - st->t_init;
	int ok = 1;

	if (st->finalized || !st->ready)
		return;
	tmatch__trace_finish();
	st->ready = 0;
	st->finalized = 1;

	mine = local_edges(&nloc);
	if (!mine) {
		nloc = 0;
		ok = 0;
	}
	hdr[0] = (uint64_t)nloc;
	hdr[1] = st->lost;
	hdr[2] = (uint64_t)st->used_rma;
	PMPI_Get_processor_name(name, &namelen);
	if (root) {
		hdrs = malloc((size_t)size * sizeof hdr);
		names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
		counts = malloc((size_t)size * sizeof *counts);
		displs = malloc((size_t)size * sizeof *displs);
	}
	/* every rank takes part in every collective, whatever failed locally */
	PMPI_Gather(hdr, 3, MPI_UINT64_T, hdrs, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	PMPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
	            0, MPI_COMM_WORLD);
	uint64_t total = 0, lost = 0;
	if (root && hdrs && counts && displs) {
		for (int i = 0; i < size; i++) {
			uint64_t words = hdrs[3 * i] * EDGE_WORDS;
			if (total + words > INT_MAX)
				words = 0, ok = 0; /* does not fit one Gatherv: dropped, reported */
			counts[i] = (int)words;
			displs[i] = (int)total;
			total += words;
			lost += hdrs[3 * i + 1];
			st->used_rma |= hdrs[3 * i + 2] != 0;
		}
		all = malloc((total ? total : 1) * sizeof *all);
	}
	if (root && (!hdrs || !names || !counts || !displs || !all)) {
		/* no memory at the root: receive nothing, report it */
		ok = 0;
		free(counts);
		counts = calloc((size_t)size, sizeof *counts);
		free(displs);
		displs = calloc((size_t)size, sizeof *displs);
		if (!all)
			all = malloc(sizeof *all);
	}
	PMPI_Gatherv(mine, nloc * EDGE_WORDS, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0,
	             MPI_COMM_WORLD);
	if (root) {
		if (!ok || !names) {
			say("out of memory gathering the profile; %s not written", out_path);
		} else {
			size_t rows = merge_edges(all, (size_t)(total / EDGE_WORDS));
			const char *dir = tmatch__trace_dir(),
			           *v = getenv("TREEMATCH_RECORD_VERBOSE");
			char copy[PATH_MAX + 16];

			if (write_profile(out_path, all, rows, names, MPI_MAX_PROCESSOR_NAME, wall,
			                  lost) == 0 &&
			    v && *v == '1')
				say("wrote %s: %d ranks, gather and write %.1f ms", out_path, size,
				    (PMPI_Wtime() - t0) * 1e3);
			/* the profile of the traced run, beside its trace (treematch
			   predict places by it) */
			if (dir &&
			    snprintf(copy, sizeof copy, "%s/profile.yml", dir) < (int)sizeof copy)
				write_profile(copy, all, rows, names, MPI_MAX_PROCESSOR_NAME, wall,
				              lost);
		}
	}
	free(all);
	free(mine);
	free(hdrs);
	free(names);
	free(counts);
	free(displs);
}

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)val;
	(void)extra;
	finish();
	tmatch__st.ready = 0;
	tmatch__core_fini();
	return MPI_SUCCESS;
}

/* TREEMATCH_RECORD_COLLECTIVES: wire unless it says logical or off. */
static enum tmatch__coll_model coll_model(const char *v)
{
	if (v && !strcmp(v, "logical"))
		return TMATCH__COLL_LOGICAL;
	if (v && (!strcmp(v, "off") || !strcmp(v, "0")))
		return TMATCH__COLL_OFF;
	return TMATCH__COLL_WIRE;
}

void tmatch__record_setup(int provided)
{
	struct tmatch__state *st = &tmatch__st;
	const char *out = getenv("TREEMATCH_RECORD_OUTPUT");
	const char *dm = getenv("TREEMATCH_RECORD_DENSE_MAX");
	MPI_Comm parent = MPI_COMM_NULL;
	enum { OK, UNSET, TOO_LONG, NO_RESOURCES } why = OK;
	int core = 0, have_attr = 0, all;

	if (st->ready || st->finalized)
		return;
	PMPI_Comm_rank(MPI_COMM_WORLD, &st->world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &st->world_size);
	PMPI_Comm_get_parent(&parent);
	if (parent != MPI_COMM_NULL) {
		/* only the job's own MPI_COMM_WORLD is recorded (same answer on every rank) */
		st->finalized = 1;
		return;
	}
	if (!out || !*out) {
		why = UNSET;
	} else if (strlen(out) >= sizeof out_path) {
		why = TOO_LONG;
	} else {
		snprintf(out_path, sizeof out_path, "%s", out);
		st->collectives = coll_model(getenv("TREEMATCH_RECORD_COLLECTIVES"));
		st->atomic = provided == MPI_THREAD_MULTIPLE;
		st->t_init = PMPI_Wtime();
		/* TREEMATCH_RECORD_DENSE_MAX (tests): hash even small jobs */
		core = 1;
		if (tmatch__core_init(dm && *dm ? strtol(dm, NULL, 10)
		                                : TMATCH__RECORD_DENSE_MAX) ||
		    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &st->self_keyval,
		                            NULL) != MPI_SUCCESS)
			why = NO_RESOURCES;
		else if (PMPI_Comm_set_attr(MPI_COMM_SELF, st->self_keyval, NULL) == MPI_SUCCESS)
			have_attr = 1;
		else
			why = NO_RESOURCES;
	}
	/* every rank records or none does: the gathers at finalize need them all */
	all = why == OK;
	PMPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (all) {
		st->ready = 1;
		tmatch__trace_setup(provided);
		return;
	}
	if (why == UNSET && st->world_rank == 0)
		say("TREEMATCH_RECORD_OUTPUT is not set: nothing is recorded "
		    "(run through `treematch record -o FILE` or srun --treematch-record)");
	else if (why == TOO_LONG && st->world_rank == 0)
		say("TREEMATCH_RECORD_OUTPUT is longer than %d bytes: nothing is recorded",
		    PATH_MAX - 1);
	else if (why == NO_RESOURCES)
		say("rank %d: cannot set up (out of memory or MPI error): nothing is recorded",
		    st->world_rank);
	else if (why == OK && st->world_rank == 0)
		say("another rank could not set up: nothing is recorded");
	if (have_attr)
		PMPI_Comm_delete_attr(MPI_COMM_SELF, st->self_keyval); /* runs self_delete */
	else if (core)
		tmatch__core_fini();
	st->finalized = 1;
}
