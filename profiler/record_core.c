/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_core.c - the state of the preloadable recorder: per-peer counters,
 * communicator-to-world rank translation, persistent requests, and, at
 * MPI_Finalize, the gather of every rank's row and the atomic write of one
 * comm-profile v1 YAML file by world rank 0.
 *
 * Environment (set by `treematch record` and by srun --treematch-record):
 *   TREEMATCH_RECORD_OUTPUT       profile to write (absolute path advised);
 *                                 unset: the library stays passive
 *   TREEMATCH_RECORD_COLLECTIVES  1: model collectives into coll_edges
 *   TREEMATCH_RECORD_VERBOSE      1: rank 0 reports the write and its time
 *   TREEMATCH_RECORD_DENSE_MAX    largest job with dense counters (default
 *                                 65536; tests set 0 to exercise the hash)
 *
 * Messages go to stderr and start with "treematch-record:"; the library never
 * aborts the application: if the profile cannot be written, it says why and
 * MPI_Finalize goes on.
 */
#include "profiler/record_private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
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

struct tmatch__state tmatch__st;
__thread int tmatch__in_fortran __attribute__((tls_model("initial-exec")));

static char out_path[PATH_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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
/* Counters                                                                  */

static int counters_init(struct tmatch__counters *c, int world_size, long dense_max)
{
	memset(c, 0, sizeof *c);
	if (world_size <= dense_max) {
		c->dense = 1;
		c->cap = (uint32_t)world_size;
		c->cells = calloc((size_t)world_size, sizeof *c->cells);
		return c->cells ? 0 : -1;
	}
	c->cap = TMATCH__RECORD_HASH_CAP;
	c->cells = calloc(c->cap, sizeof *c->cells);
	c->keys = malloc(c->cap * sizeof *c->keys);
	if (!c->cells || !c->keys)
		return -1;
	for (uint32_t i = 0; i < c->cap; i++)
		c->keys[i] = -1;
	return 0;
}

static void counters_fini(struct tmatch__counters *c)
{
	free(c->cells);
	free(c->keys);
	memset(c, 0, sizeof *c);
}

static struct tmatch__cell *counters_slot(struct tmatch__counters *c, int world)
{
	if (c->dense)
		return &c->cells[world];
	uint32_t mask = c->cap - 1;
	uint32_t h = ((uint32_t)world * 2654435761u) & mask;
	for (uint32_t probe = 0; probe < c->cap; probe++, h = (h + 1) & mask) {
		int32_t k = __atomic_load_n(&c->keys[h], __ATOMIC_ACQUIRE);
		if (k == world)
			return &c->cells[h];
		if (k == -1) {
			int32_t expect = -1;
			if (__atomic_compare_exchange_n(&c->keys[h], &expect, world, 0,
			                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
			    expect == world)
				return &c->cells[h];
		}
	}
	return NULL;
}

void tmatch__add(enum tmatch__kind kind, int world, uint64_t msgs, uint64_t bytes)
{
	struct tmatch__state *st = &tmatch__st;
	struct tmatch__cell *cell;

	if (world < 0 || world >= st->world_size ||
	    !(cell = counters_slot(&st->kind[kind], world))) {
		__atomic_fetch_add(&st->lost, msgs, __ATOMIC_RELAXED);
		return;
	}
	if (st->atomic) {
		__atomic_fetch_add(&cell->msgs, msgs, __ATOMIC_RELAXED);
		__atomic_fetch_add(&cell->bytes, bytes, __ATOMIC_RELAXED);
	} else {
		/* MPI calls are serialised (thread level < MULTIPLE): plain adds. */
		cell->msgs += msgs;
		cell->bytes += bytes;
	}
}

/* ------------------------------------------------------------------------ */
/* Rank translation, cached on the communicator and in a per-thread slot     */

struct xlat {
	int size;
	int map[]; /* rank -> world rank, -1 if not in MPI_COMM_WORLD */
};

/* Bumped whenever a cached table dies, so per-thread caches never go stale. */
static unsigned xlat_gen;
static __thread MPI_Comm tl_comm;
static __thread struct xlat *tl_xlat;
static __thread unsigned tl_gen; /* xlat_gen + 1 when tl_* is valid, 0 otherwise */

/* Frees the tables of both communicator keyvals (rank maps, neighbour lists). */
static int xlat_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)extra;
	__atomic_fetch_add(&xlat_gen, 1, __ATOMIC_ACQ_REL);
	free(val);
	return MPI_SUCCESS;
}

static int xlat_win_delete(MPI_Win win, int keyval, void *val, void *extra)
{
	(void)win;
	(void)keyval;
	(void)extra;
	free(val);
	return MPI_SUCCESS;
}

static struct xlat *xlat_of_group(MPI_Group group)
{
	int size = 0;
	struct xlat *x = NULL;
	int *ranks = NULL;

	if (PMPI_Group_size(group, &size) != MPI_SUCCESS || size < 0)
		return NULL;
	x = malloc(sizeof *x + (size_t)size * sizeof(int));
	ranks = malloc(((size_t)size + 1) * sizeof(int));
	if (!x || !ranks)
		goto fail;
	for (int i = 0; i < size; i++)
		ranks[i] = i;
	x->size = size;
	if (PMPI_Group_translate_ranks(group, size, ranks, tmatch__st.world_group, x->map) !=
	    MPI_SUCCESS)
		goto fail;
	for (int i = 0; i < size; i++)
		if (x->map[i] == MPI_UNDEFINED || x->map[i] < 0)
			x->map[i] = -1;
	free(ranks);
	return x;
fail:
	free(ranks);
	free(x);
	return NULL;
}

/*
 * The attribute `keyval` of comm, made by build(comm) the first time. build
 * runs without the lock (it may translate ranks, which takes it); of two
 * threads racing, the first to set the attribute wins.
 */
static void *comm_cached(MPI_Comm comm, int keyval, void *(*build)(MPI_Comm))
{
	void *x = NULL, *made;
	int flag = 0;

	if (PMPI_Comm_get_attr(comm, keyval, &x, &flag) == MPI_SUCCESS && flag)
		return x;
	made = build(comm);
	if (!made)
		return NULL;
	pthread_mutex_lock(&lock);
	if (PMPI_Comm_get_attr(comm, keyval, &x, &flag) == MPI_SUCCESS && flag) {
		free(made);
	} else if (PMPI_Comm_set_attr(comm, keyval, made) == MPI_SUCCESS) {
		x = made;
	} else {
		free(made);
		x = NULL;
	}
	pthread_mutex_unlock(&lock);
	return x;
}

static void *xlat_build(MPI_Comm comm)
{
	struct xlat *x = NULL;
	int inter = 0;
	MPI_Group group;

	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
		return NULL;
	if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
	    MPI_SUCCESS)
		return NULL;
	x = xlat_of_group(group);
	PMPI_Group_free(&group);
	return x;
}

static struct xlat *comm_xlat(MPI_Comm comm)
{
	return comm_cached(comm, tmatch__st.comm_keyval, xlat_build);
}

int tmatch__comm_to_world(MPI_Comm comm, int rank)
{
	struct xlat *x;
	unsigned gen;

	if (comm == MPI_COMM_WORLD)
		return rank;
	gen = __atomic_load_n(&xlat_gen, __ATOMIC_ACQUIRE) + 1;
	if (tl_gen == gen && tl_comm == comm) {
		x = tl_xlat;
	} else {
		x = comm_xlat(comm);
		if (!x)
			return -1;
		tl_comm = comm;
		tl_xlat = x;
		tl_gen = gen;
	}
	return rank < x->size ? x->map[rank] : -1;
}

/* ------------------------------------------------------------------------ */
/* Outgoing neighbours of a virtual topology, cached on the communicator     */

static void *nbrs_build(MPI_Comm comm)
{
	int topo = MPI_UNDEFINED, me = 0, n = 0, in = 0, weighted = 0, ok = 0;
	int *src = NULL, *dw = NULL;
	struct tmatch__nbrs *nb;

	if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS)
		return NULL;
	if (topo == MPI_CART) {
		ok = PMPI_Cartdim_get(comm, &n) == MPI_SUCCESS;
		n *= 2;
	} else if (topo == MPI_GRAPH) {
		ok = PMPI_Graph_neighbors_count(comm, me, &n) == MPI_SUCCESS;
	} else if (topo == MPI_DIST_GRAPH) {
		ok = PMPI_Dist_graph_neighbors_count(comm, &in, &n, &weighted) == MPI_SUCCESS;
	}
	if (!ok || n < 0 || in < 0 || !(nb = calloc(1, sizeof *nb + (size_t)n * sizeof(int))))
		return NULL;
	nb->n = n;
	if (topo == MPI_CART) {
		for (int d = 0; ok && d < n / 2; d++)
			ok = PMPI_Cart_shift(comm, d, 1, &nb->world[2 * d],
			                     &nb->world[2 * d + 1]) == MPI_SUCCESS;
	} else if (topo == MPI_GRAPH) {
		ok = PMPI_Graph_neighbors(comm, me, n, nb->world) == MPI_SUCCESS;
	} else {
		/* sources and weights asked for even when unweighted: simplest for both MPIs */
		src = malloc((2 * (size_t)in + 1) * sizeof *src);
		dw = malloc(((size_t)n + 1) * sizeof *dw);
		ok = src && dw &&
		     PMPI_Dist_graph_neighbors(comm, in, src, src + in, n, nb->world, dw) ==
		         MPI_SUCCESS;
	}
	free(src);
	free(dw);
	if (!ok) {
		free(nb);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		nb->world[i] = nb->world[i] == MPI_PROC_NULL
		                   ? TMATCH__NBR_NULL
		                   : tmatch__comm_to_world(comm, nb->world[i]);
	return nb;
}

const struct tmatch__nbrs *tmatch__comm_neighbors(MPI_Comm comm)
{
	return comm_cached(comm, tmatch__st.nbr_keyval, nbrs_build);
}

int tmatch__win_to_world(MPI_Win win, int rank)
{
	struct xlat *x = NULL;
	int flag = 0;
	MPI_Group group;

	if (rank < 0)
		return -1;
	if (PMPI_Win_get_attr(win, tmatch__st.win_keyval, &x, &flag) != MPI_SUCCESS || !flag) {
		pthread_mutex_lock(&lock);
		if (PMPI_Win_get_attr(win, tmatch__st.win_keyval, &x, &flag) != MPI_SUCCESS ||
		    !flag) {
			x = NULL;
			if (PMPI_Win_get_group(win, &group) == MPI_SUCCESS) {
				x = xlat_of_group(group);
				PMPI_Group_free(&group);
			}
			if (x && PMPI_Win_set_attr(win, tmatch__st.win_keyval, x) != MPI_SUCCESS) {
				free(x);
				x = NULL;
			}
		}
		pthread_mutex_unlock(&lock);
		if (!x)
			return -1;
	}
	return rank < x->size ? x->map[rank] : -1;
}

/* ------------------------------------------------------------------------ */
/* Persistent requests                                                       */

#define PERSIST_BUCKETS 1024

struct persist {
	struct persist *next;
	MPI_Request req;
	struct tmatch__persist_def def;
};

static struct persist *persist_tab[PERSIST_BUCKETS];

static unsigned persist_hash(MPI_Request req)
{
	uint64_t k = 0;
	/* the handle's own bytes: an int (MPICH) or a pointer (Open MPI) */
	memcpy(&k, &req, sizeof(MPI_Request) < sizeof k ? sizeof(MPI_Request) : sizeof k);
	k ^= k >> 17;
	k *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(k >> 40) % PERSIST_BUCKETS;
}

void tmatch__persist_add(MPI_Request req, const struct tmatch__persist_def *def)
{
	unsigned h = persist_hash(req);
	struct persist *p;

	pthread_mutex_lock(&lock);
	for (p = persist_tab[h]; p; p = p->next)
		if (p->req == req)
			break;
	if (!p && (p = malloc(sizeof *p))) {
		p->req = req;
		p->next = persist_tab[h];
		persist_tab[h] = p;
	}
	if (p)
		p->def = *def;
	pthread_mutex_unlock(&lock);
}

int tmatch__persist_find(MPI_Request req, struct tmatch__persist_def *def)
{
	unsigned h = persist_hash(req);
	int found = 0;

	pthread_mutex_lock(&lock);
	for (struct persist *p = persist_tab[h]; p; p = p->next)
		if (p->req == req) {
			if (def)
				*def = p->def;
			found = 1;
			break;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

int tmatch__persist_start(MPI_Request req, struct tmatch__persist_def *def)
{
	if (!tmatch__persist_find(req, def))
		return 0;
	if (def->send && def->rank >= 0)
		tmatch__add(TMATCH__P2P, def->world, 1, def->bytes);
	return 1;
}

void tmatch__persist_forget(MPI_Request req)
{
	unsigned h = persist_hash(req);

	pthread_mutex_lock(&lock);
	for (struct persist **pp = &persist_tab[h]; *pp; pp = &(*pp)->next)
		if ((*pp)->req == req) {
			struct persist *dead = *pp;
			*pp = dead->next;
			free(dead);
			break;
		}
	pthread_mutex_unlock(&lock);
}

static void persist_clear(void)
{
	for (int h = 0; h < PERSIST_BUCKETS; h++)
		while (persist_tab[h]) {
			struct persist *dead = persist_tab[h];
			persist_tab[h] = dead->next;
			free(dead);
		}
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
	fprintf(f, "  scope: [p2p%s%s]\n", st->collectives ? ", coll_logical" : "",
	        st->used_rma ? ", rma" : "");
	fprintf(f, "  wall_time_s: %.3f\n", wall);
}

/* rank 0: write everything to a temp file next to out_path, then rename. */
static int write_profile(uint64_t *e, size_t n, const char *names, int namelen, double wall,
                         uint64_t lost)
{
	struct tmatch__state *st = &tmatch__st;
	char tmp[PATH_MAX + 16];
	FILE *f = NULL;
	int fd = -1, rc = -1;
	mode_t um;

	/* sort by (set, src, dst) and merge duplicates (put and get on one pair) */
	qsort(e, n, EDGE_WORDS * sizeof *e, edge_cmp);
	size_t m = 0;
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
	n = m;

	if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", out_path) >= (int)sizeof tmp) {
		say("output path too long: %s", out_path);
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		say("cannot create a temporary file next to %s: %s", out_path, strerror(errno));
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
	fprintf(f,
	        "format: comm-profile\nversion: 1\nranks: %d\nmetrics: [msgs, bytes]\n"
	        "directed: true\nplacement_metric: bytes\n",
	        st->world_size);
	put_provenance(f, names, namelen, wall);
	put_edges(f, "edges", e, n, 0);
	if (st->collectives)
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
	if (rename(tmp, out_path) != 0)
		goto out;
	/* make the rename durable */
	{
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", out_path);
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
		say("cannot write %s: %s", out_path, strerror(errno ? errno : EIO));
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
		} else if (write_profile(all, (size_t)(total / EDGE_WORDS), names,
		                         MPI_MAX_PROCESSOR_NAME, wall, lost) == 0) {
			const char *v = getenv("TREEMATCH_RECORD_VERBOSE");
			if (v && *v == '1')
				say("wrote %s: %d ranks, gather and write %.1f ms", out_path, size,
				    (PMPI_Wtime() - t0) * 1e3);
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
	struct tmatch__state *st = &tmatch__st;
	(void)comm;
	(void)keyval;
	(void)val;
	(void)extra;
	finish();
	tmatch__st.ready = 0;
	persist_clear();
	PMPI_Group_free(&st->world_group);
	for (int k = 0; k < TMATCH__NKINDS; k++)
		counters_fini(&st->kind[k]);
	return MPI_SUCCESS;
}

void tmatch__record_setup(int provided)
{
	struct tmatch__state *st = &tmatch__st;
	const char *out = getenv("TREEMATCH_RECORD_OUTPUT");
	const char *coll = getenv("TREEMATCH_RECORD_COLLECTIVES");
	const char *dm = getenv("TREEMATCH_RECORD_DENSE_MAX");
	MPI_Comm parent = MPI_COMM_NULL;
	enum { OK, UNSET, TOO_LONG, NO_RESOURCES } why = OK;
	int have_group = 0, have_attr = 0, all;

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
		st->collectives = coll && *coll == '1';
		st->atomic = provided == MPI_THREAD_MULTIPLE;
		st->t_init = PMPI_Wtime();
		/* TREEMATCH_RECORD_DENSE_MAX (tests): hash even small jobs */
		long dense_max = dm && *dm ? strtol(dm, NULL, 10) : TMATCH__RECORD_DENSE_MAX;
		for (int k = 0; k < TMATCH__NKINDS; k++)
			if (counters_init(&st->kind[k], st->world_size, dense_max) != 0)
				why = NO_RESOURCES;
		if (why == OK && PMPI_Comm_group(MPI_COMM_WORLD, &st->world_group) == MPI_SUCCESS)
			have_group = 1;
		if (why != OK || !have_group ||
		    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, xlat_delete, &st->comm_keyval,
		                            NULL) != MPI_SUCCESS ||
		    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, xlat_delete, &st->nbr_keyval,
		                            NULL) != MPI_SUCCESS ||
		    PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, xlat_win_delete, &st->win_keyval,
		                           NULL) != MPI_SUCCESS ||
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
	if (have_attr) {
		PMPI_Comm_delete_attr(MPI_COMM_SELF, st->self_keyval); /* runs self_delete */
	} else {
		if (have_group)
			PMPI_Group_free(&st->world_group);
		for (int k = 0; k < TMATCH__NKINDS; k++)
			counters_fini(&st->kind[k]);
	}
	st->finalized = 1;
}
