/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_trace.c - the recorder's time-independent trace, for `treematch
 * predict` (SimGrid's replay): with TREEMATCH_RECORD_TRACE=DIR, each rank
 * writes DIR/rank-R.txt, in SMPI's time-independent format, one line per MPI
 * call it makes and, between two calls, the time it computed:
 *
 *   R init | R compute FLOPS | R send DST TAG BYTES 6 | R isend ... |
 *   R recv SRC TAG BYTES 6 | R irecv ... | R wait SRC DST TAG | R waitall N |
 *   R barrier | R bcast BYTES ROOT 6 |
 *   R reduce BYTES 0 ROOT 6 | R allreduce BYTES 0 6 | R alltoall B B 6 6 |
 *   R allgather B B 6 6 | R gather B B ROOT 6 6 | R scatter B B ROOT 6 6 |
 *   R alltoallv ST S0.. RT R0.. 6 6 | R allgatherv S R0.. 6 6 |
 *   R gatherv S R0.. ROOT 6 6 | R scatterv S0.. R ROOT 6 6 |
 *   R reducescatter R0.. 0 6 | R finalize
 * (MPI_Scan and MPI_Exscan, which SMPI's replay lacks, are written as an
 * allreduce of their size: the same exchange pattern's upper bound)
 *
 * ranks in MPI_COMM_WORLD, sizes in bytes (SMPI's type 6, MPI_BYTE), compute
 * as flops at TMATCH__TRACE_FLOPS per second of the thread's CPU time (a
 * replay on cores of that speed reproduces it; CPU time, not wall time, so
 * that a loaded or oversubscribed recording computes what it did). At MPI_Finalize rank 0 writes
 * the index DIR/trace.txt (one rank's file per line). A collective on a smaller communicator
 * (rows and columns of a process grid, a split) is written as the point-to-point messages of
 * a usual algorithm between its members (tmatch__lower, record_coll.c, which the profile
 * counts too); MPI_Sendrecv
 * as an exchange (isend, irecv, two waits); completions and wildcard receives as the run
 * observed them (tmatch__trace_completed); each start of a persistent request as the isend or
 * irecv it begins (tmatch__trace_started). The C and Fortran wrappers write through the same
 * trace points (record_wrap.c). What a replay cannot reproduce (a call this file does not
 * trace: non-blocking and persistent collectives, one-sided calls; threads) is named in
 * DIR/NOT-REPLAYABLE instead of the index, and `treematch predict` says so.
 *
 * Off (no TREEMATCH_RECORD_TRACE), every wrapper pays one test of a flag.
 */
#include "profiler/record_private.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REQ_CAP 8192 /* requests in flight one rank may have */

struct req {
	MPI_Request req;
	int used, src, dst, tag;
	MPI_Comm comm; /* a wildcard receive's, to name its source in world ranks */
	long pos;      /* a wildcard receive: where its source and tag go in the file, else -1 */
};

/* The blank a wildcard receive leaves for "SOURCE TAG", filled at completion. */
#define WILD_FIELD "%-11d %-11d"
#define WILD_BLANK "                       "

static struct {
	FILE *f;
	char dir[PATH_MAX];
	double last;          /* end of the last traced call */
	char unsupported[96]; /* the first thing a replay cannot reproduce */
	double finalizing;    /* when MPI_Finalize was entered (0: not seen) */
	struct req *reqs;     /* REQ_CAP, open addressing on the handle's bytes */
	int pending;          /* traced requests not completed yet (MPI_PROC_NULL's aside) */
} tr;

int tmatch__tracing_on;

static unsigned req_hash(MPI_Request r)
{
	const unsigned char *p = (const unsigned char *)&r;
	unsigned h = 2166136261u;

	/* the handle's own bytes: a pointer in Open MPI, an int in MPICH */
	// NOLINTNEXTLINE(bugprone-sizeof-expression)
	for (size_t i = 0; i < sizeof(r); i++)
		h = (h ^ p[i]) * 16777619u;
	return h % REQ_CAP;
}

/*
 * The entry of handle r: add, a free slot for it (one handle may stand for
 * several requests: MPI libraries hand out one completed handle for every
 * request that completed at once, MPI_PROC_NULL's or an eager send's);
 * else the first entry with that handle that is a real message, or the
 * first at all.
 */
static struct req *req_find(MPI_Request r, int add)
{
	unsigned h = req_hash(r);
	struct req *any = NULL;

	for (unsigned k = 0; k < REQ_CAP; k++) {
		struct req *e = &tr.reqs[(h + k) % REQ_CAP];

		if (!e->used)
			return add ? e : any;
		// NOLINTNEXTLINE(bugprone-sizeof-expression): the handle's bytes, as hashed
		if (!add && !memcmp(&e->req, &r, sizeof(r))) {
			if (e->src != -2)
				return e;
			if (!any)
				any = e;
		}
	}
	return add ? NULL : any;
}

static void req_forget(struct req *e)
{
	/* backward-shift deletion keeps the probe chains whole */
	unsigned i = (unsigned)(e - tr.reqs), j = i;

	e->used = 0;
	for (;;) {
		j = (j + 1) % REQ_CAP;
		if (!tr.reqs[j].used)
			return;
		unsigned h = req_hash(tr.reqs[j].req);
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			tr.reqs[i] = tr.reqs[j];
			tr.reqs[j].used = 0;
			i = j;
		}
	}
}

/* The thread's CPU time: what it computed, whatever the load or the
   oversubscription (a rank waiting for a core does not compute). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *tmatch__trace_dir(void)
{
	return tr.dir[0] ? tr.dir : NULL;
}

void tmatch__trace_unsupported(const char *what)
{
	if (tmatch__tracing_on && !tr.unsupported[0])
		snprintf(tr.unsupported, sizeof(tr.unsupported), "%s", what);
}

void tmatch__trace_setup(int provided)
{
	const char *dir = getenv("TREEMATCH_RECORD_TRACE");
	char path[PATH_MAX + 32];

	if (!dir || !*dir || strlen(dir) >= sizeof(tr.dir))
		return;
	snprintf(tr.dir, sizeof(tr.dir), "%s", dir);
	snprintf(path, sizeof(path), "%s/rank-%d.txt", dir, tmatch__st.world_rank);
	tr.reqs = calloc(REQ_CAP, sizeof(*tr.reqs));
	tr.f = tr.reqs ? fopen(path, "w") : NULL;
	if (!tr.f) {
		free(tr.reqs);
		tr.reqs = NULL;
		tr.dir[0] = '\0';
		return;
	}
	setvbuf(tr.f, NULL, _IOFBF, 1 << 20);
	fprintf(tr.f, "%d init\n", tmatch__st.world_rank);
	tmatch__tracing_on = 1;
	if (provided == MPI_THREAD_MULTIPLE)
		tmatch__trace_unsupported("MPI_THREAD_MULTIPLE");
	tr.last = cpu_now();
}

/* The compute from the end of the last traced call to `at`, then the action. */
static void action_at(double at, const char *fmt, va_list ap)
{
	double fl = (at - tr.last) * TMATCH__TRACE_FLOPS;

	if (fl >= 1)
		fprintf(tr.f, "%d compute %.0f\n", tmatch__st.world_rank, fl);
	fprintf(tr.f, "%d ", tmatch__st.world_rank);
	vfprintf(tr.f, fmt, ap);
	fputc('\n', tr.f);
}

/* Before a traced call: the compute since the last one, then the action. */
void tmatch__trace_action(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	action_at(cpu_now(), fmt, ap);
	va_end(ap);
}

double tmatch__trace_clock(void)
{
	return cpu_now();
}

void tmatch__trace_action_at(double at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	action_at(at, fmt, ap);
	va_end(ap);
}

void tmatch__trace_paused(double t0)
{
	tr.last += cpu_now() - t0;
}

void tmatch__trace_finalizing(void)
{
	tr.finalizing = cpu_now();
}

void tmatch__trace_done(void)
{
	tr.last = cpu_now();
}

int tmatch__trace_world(MPI_Comm comm, int rank)
{
	int w = rank < 0 ? rank : tmatch__comm_to_world(comm, rank);

	if (w < 0)
		tmatch__trace_unsupported(rank == MPI_ANY_SOURCE ? "MPI_ANY_SOURCE"
		                                                 : "a peer outside MPI_COMM_WORLD");
	return w;
}

/* Tag of the messages a collective on a smaller communicator is written as
   (apart from the application's, which are below MPI_TAG_UB's minimum). */
#define COLL_TAG 1073741824
/* ... and of a cancelled wildcard receive, completed by the rank itself */
#define CANCEL_TAG (COLL_TAG + 1)

/* One more action of the same call: no compute before it. */
static void trace_more(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace_more(const char *fmt, ...)
{
	va_list ap;

	fprintf(tr.f, "%d ", tmatch__st.world_rank);
	va_start(ap, fmt);
	vfprintf(tr.f, fmt, ap);
	va_end(ap);
	fputc('\n', tr.f);
}

void tmatch__trace_exchange(double at, int to, int stag, unsigned long long sbytes, int from,
                            int rtag, unsigned long long rbytes, int *first)
{
	int me = tmatch__st.world_rank;

	if (*first)
		tmatch__trace_action_at(at, "isend %d %d %llu 6", to, stag, sbytes);
	else
		trace_more("isend %d %d %llu 6", to, stag, sbytes);
	trace_more("irecv %d %d %llu 6", from, rtag, rbytes);
	trace_more("wait %d %d %d", me, to, stag);
	trace_more("wait %d %d %d", from, me, rtag);
	*first = 0;
}

/* The lowering's messages as trace lines, under COLL_TAG: the first line
   of the call after its compute (first). */
struct coll_out {
	int first;
};

static void coll_msg(void *arg, int send, int w, unsigned long long bytes)
{
	struct coll_out *o = arg;

	if (o->first)
		tmatch__trace_action("%s %d %d %llu 6", send ? "send" : "recv", w, COLL_TAG, bytes);
	else
		trace_more("%s %d %d %llu 6", send ? "send" : "recv", w, COLL_TAG, bytes);
	o->first = 0;
}

static void coll_exchange(void *arg, int to, unsigned long long sbytes, int from,
                          unsigned long long rbytes)
{
	struct coll_out *o = arg;

	tmatch__trace_exchange(cpu_now(), to, COLL_TAG, sbytes, from, COLL_TAG, rbytes, &o->first);
}

/*
 * Where a collective on comm stands: 1 when comm has MPI_COMM_WORLD's
 * group (SMPI's own action), 0 when there is nothing to write (one member,
 * MPI_ROOT or MPI_PROC_NULL of an intercommunicator, or a communicator it
 * cannot translate: then said), else -1 with this rank's place and the
 * size: the messages are to be written.
 */
static int coll_members(MPI_Comm comm, int root, int *me, int *n)
{
	int res = MPI_UNEQUAL;

	PMPI_Comm_compare(comm, MPI_COMM_WORLD, &res);
	if (res == MPI_IDENT || res == MPI_CONGRUENT)
		return 1;
	if (PMPI_Comm_rank(comm, me) != MPI_SUCCESS || PMPI_Comm_size(comm, n) != MPI_SUCCESS ||
	    tmatch__comm_to_world(comm, 0) < 0) {
		tmatch__trace_unsupported("a collective on a communicator it cannot translate");
		return 0;
	}
	return *n < 2 || root < 0 || root >= *n ? 0 : -1;
}

int tmatch__trace_coll(MPI_Comm comm, const struct tmatch__coll *c)
{
	int me = 0, n = 0, w = coll_members(comm, c->root, &me, &n);
	struct coll_out o = {1};
	struct tmatch__lower_sink out = {coll_msg, coll_exchange, &o};

	if (w >= 0)
		return w;
	if (tmatch__lower(comm, c, me, n, &out) < 0)
		tmatch__trace_unsupported("a collective it does not know");
	return 0;
}

char *tmatch__trace_counts(const int counts[], MPI_Datatype type, unsigned long long *total)
{
	int n = tmatch__st.world_size, sz = 0;
	size_t cap = (size_t)n * 21 + 1, len = 0;
	char *s = malloc(cap);

	*total = 0;
	if (!s)
		return NULL;
	if (counts && PMPI_Type_size(type, &sz) != MPI_SUCCESS)
		sz = 0;
	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		unsigned long long b =
		    counts && counts[i] > 0 ? (unsigned long long)counts[i] * (unsigned)sz : 0;

		*total += b;
		len += (size_t)snprintf(s + len, cap - len, "%s%llu", i ? " " : "", b);
	}
	return s;
}

void tmatch__trace_request(MPI_Request req, int src, int dst, int tag)
{
	tmatch__trace_request_at(req, src, dst, tag, MPI_COMM_NULL, -1);
}

void tmatch__trace_request_at(MPI_Request req, int src, int dst, int tag, MPI_Comm comm, long pos)
{
	struct req *e = req_find(req, 1);

	if (!e) {
		tmatch__trace_unsupported("more than 8192 requests in flight");
		return;
	}
	if (src != -2)
		tr.pending++;
	e->used = 1;
	e->req = req;
	e->src = src;
	e->dst = dst;
	e->tag = tag;
	e->comm = comm;
	e->pos = pos;
}

/* A request with MPI_PROC_NULL: its completion is no message (src -2). */
void tmatch__trace_request_null(MPI_Request req)
{
	tmatch__trace_request_at(req, -2, -2, 0, MPI_COMM_NULL, -1);
}

void tmatch__trace_request_freed(MPI_Request req)
{
	struct req *e = req == MPI_REQUEST_NULL ? NULL : req_find(req, 0);

	if (e) {
		tr.pending -= e->src != -2;
		req_forget(e);
	}
}

void tmatch__trace_started(MPI_Request req, const struct tmatch__persist_def *d, int *first)
{
	int me = tmatch__st.world_rank, w;

	if (!d) {
		tmatch__trace_unsupported("MPI_Start of a request that is not a send or receive");
		return;
	}
	if (d->rank == MPI_PROC_NULL) {
		tmatch__trace_request_null(req);
		return;
	}
	if (!d->send && (d->rank == MPI_ANY_SOURCE || d->tag == MPI_ANY_TAG)) {
		long pos = tmatch__trace_irecv_wild(d->bytes, first);

		tmatch__trace_request_at(req, -1, me, d->tag, d->comm, pos);
		return;
	}
	w = d->world;
	if (w < 0)
		tmatch__trace_unsupported("a peer outside MPI_COMM_WORLD");
	if (*first)
		tmatch__trace_action("%s %d %d %llu 6", d->send ? "isend" : "irecv", w, d->tag,
		                     (unsigned long long)d->bytes);
	else
		trace_more("%s %d %d %llu 6", d->send ? "isend" : "irecv", w, d->tag,
		           (unsigned long long)d->bytes);
	*first = 0;
	if (d->send)
		tmatch__trace_request(req, me, w, d->tag);
	else
		tmatch__trace_request_at(req, w, me, d->tag, d->comm, -1);
}

long tmatch__trace_irecv_wild(unsigned long long bytes, int *first)
{
	long pos;

	if (*first)
		tmatch__trace_action("irecv");
	else
		trace_more("irecv");
	*first = 0;
	/* back over the newline: the blank goes on the same line */
	if (fflush(tr.f) || (pos = ftell(tr.f)) < 1 || fseek(tr.f, pos - 1, SEEK_SET)) {
		tmatch__trace_unsupported("MPI_ANY_SOURCE (the trace file cannot be rewritten)");
		return -1;
	}
	fprintf(tr.f, " " WILD_BLANK " %llu 6\n", bytes);
	return pos;
}

/* A wildcard receive completed with `st`: its source and tag into its blank. */
static void fill_wild(struct req *e, MPI_Comm comm, const MPI_Status *st)
{
	long end;

	if (!st) {
		tmatch__trace_unsupported("MPI_ANY_SOURCE (completed without a status)");
		return;
	}
	e->src = tmatch__trace_world(comm, st->MPI_SOURCE);
	e->tag = st->MPI_TAG;
	if (fflush(tr.f) || (end = ftell(tr.f)) < 0 || fseek(tr.f, e->pos, SEEK_SET) ||
	    fprintf(tr.f, WILD_FIELD, e->src, e->tag) != (int)sizeof(WILD_BLANK) - 1 ||
	    fflush(tr.f) || fseek(tr.f, end, SEEK_SET))
		tmatch__trace_unsupported("MPI_ANY_SOURCE (the trace file cannot be rewritten)");
	e->pos = -1;
}

static int cancelled(const MPI_Status *st)
{
	int flag = 0;

	return PMPI_Test_cancelled(st, &flag) == MPI_SUCCESS && flag;
}

/*
 * A cancelled wildcard receive (HPCC's RandomAccess cancels those it no
 * longer needs) matched nothing, but its line is written: it becomes a
 * receive from the rank itself under a tag of its own, which a send to
 * itself then completes, and a wait retires. Any other cancelled request
 * had a peer that a replay would wait for: not reproducible.
 */
static void retire_cancelled(struct req *e, double t0, int *wrote)
{
	MPI_Status self;
	int me = tmatch__st.world_rank;

	if (e->pos < 0) {
		tmatch__trace_unsupported("a cancelled request");
		return;
	}
	self.MPI_SOURCE = 0;
	self.MPI_TAG = CANCEL_TAG;
	fill_wild(e, MPI_COMM_SELF, &self);
	if (*wrote)
		trace_more("send %d %d 0 6", me, CANCEL_TAG);
	else
		tmatch__trace_action_at(t0, "send %d %d 0 6", me, CANCEL_TAG);
	trace_more("wait %d %d %d", me, me, CANCEL_TAG);
	*wrote = 1;
}

void tmatch__trace_completed(double t0, const MPI_Request done[], const MPI_Status st[], int k,
                             int all)
{
	struct req stack[64], *got = k <= 64 ? stack : malloc(sizeof(*got) * (size_t)k);
	int n = 0, wrote = 0;

	if (!got) {
		tmatch__trace_unsupported("a completion call (out of memory)");
		return;
	}
	/* the entries the call completed, MPI_PROC_NULL's dropped */
	for (int i = 0; i < k; i++) {
		struct req *e = done[i] == MPI_REQUEST_NULL ? NULL : req_find(done[i], 0);

		if (!e) {
			/* an inactive persistent request completes at once, nothing */
			if (done[i] != MPI_REQUEST_NULL && !tmatch__persist_find(done[i], NULL))
				tmatch__trace_unsupported(
				    "a completion of a request it did not trace");
			continue;
		}
		if (e->src != -2 && st && cancelled(&st[i])) {
			retire_cancelled(e, t0, &wrote);
			tr.pending--;
		} else if (e->src != -2) {
			if (e->pos >= 0)
				fill_wild(e, e->comm, st ? &st[i] : NULL);
			got[n++] = *e;
			tr.pending--;
		}
		req_forget(e);
	}
	/* SMPI's waitall completes every pending request of the rank: it stands
	   for an MPI_Waitall that completed all of them; else one wait each */
	if (all && n > 0 && tr.pending == 0) {
		tmatch__trace_action_at(t0, "waitall %d", n);
	} else {
		for (int i = 0; i < n; i++)
			if (i == 0 && !wrote)
				tmatch__trace_action_at(t0, "wait %d %d %d", got[i].src, got[i].dst,
				                        got[i].tag);
			else
				trace_more("wait %d %d %d", got[i].src, got[i].dst, got[i].tag);
	}
	if (got != stack)
		free(got);
	if (n == 0 && !wrote) /* nothing completed: the call's own time is not compute */
		tr.last += cpu_now() - t0;
	else
		tr.last = cpu_now();
}

/* In MPI_Finalize (before the profile's own gathers): every rank's file
   ends; rank 0 writes the index, or NOT-REPLAYABLE with the first reason
   any rank met. */
void tmatch__trace_finish(void)
{
	struct tmatch__state *st = &tmatch__st;
	int bad = tr.unsupported[0] != 0, any = 0, who = -1;
	char why[sizeof(tr.unsupported)] = "", path[PATH_MAX + 32];
	FILE *f;

	if (!tmatch__tracing_on)
		return;
	for (int i = 0; i < REQ_CAP; i++)
		if (tr.reqs[i].used && tr.reqs[i].pos >= 0)
			tmatch__trace_unsupported("MPI_ANY_SOURCE (a receive never completed)");
	if (tr.finalizing > 0)
		tmatch__trace_action_at(tr.finalizing, "finalize");
	else
		tmatch__trace_action("finalize");
	tmatch__tracing_on = 0;
	fclose(tr.f);
	tr.f = NULL;
	free(tr.reqs);
	tr.reqs = NULL;
	snprintf(path, sizeof(path), "%s/rank-%d.txt", tr.dir, st->world_rank);
	if (tmatch__trace_compute_estimate(path) < 0)
		fprintf(stderr,
		        "treematch-record: rank %d: %s keeps the compute as measured (it could not "
		        "be rewritten)\n",
		        st->world_rank, path);
	PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (any) {
		int mine = bad ? st->world_rank : st->world_size;
		/* the lowest rank with a reason sends it to rank 0 */
		PMPI_Allreduce(&mine, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (who == 0 && st->world_rank == 0)
			memcpy(why, tr.unsupported, sizeof(why));
		else if (st->world_rank == who)
			PMPI_Send(tr.unsupported, (int)sizeof(why), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
		else if (st->world_rank == 0)
			PMPI_Recv(why, (int)sizeof(why), MPI_CHAR, who, 0, MPI_COMM_WORLD,
			          MPI_STATUS_IGNORE);
		why[sizeof(why) - 1] = '\0';
	}
	if (st->world_rank != 0)
		return;
	if (any) {
		snprintf(path, sizeof(path), "%s/NOT-REPLAYABLE", tr.dir);
		if ((f = fopen(path, "w"))) {
			fprintf(f, "rank %d used %s, which a replay cannot reproduce\n", who, why);
			fclose(f);
		}
		return;
	}
	snprintf(path, sizeof(path), "%s/trace.txt", tr.dir);
	if ((f = fopen(path, "w"))) {
		for (int r = 0; r < st->world_size; r++)
			fprintf(f, "rank-%d.txt\n", r);
		fclose(f);
	}
}
