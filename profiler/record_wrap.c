/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_wrap.c - the C bindings the recorder interposes (MPI_X calls
 * PMPI_X after counting). What is counted, and the collective model, are
 * documented in profiler/README.md; keep the two in step.
 *
 * Every wrapper counts only when tmatch__on(): set up, not finalized, and not
 * reached from one of our Fortran wrappers (which have counted already).
 */
#include "profiler/record_private.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API TMATCH_RECORD_VISIBLE

/* Forward CALL; when tracing, write ACTION before and stamp the end after. */
#define TRACED(ACTION, CALL)                                                                       \
	do {                                                                                       \
		int traced_ = tmatch__tracing(), rc_;                                              \
		if (traced_) {                                                                     \
			ACTION;                                                                    \
		}                                                                                  \
		rc_ = CALL;                                                                        \
		if (traced_)                                                                       \
			tmatch__trace_done();                                                      \
		return rc_;                                                                        \
	} while (0)

/* What a replay cannot reproduce: said in the trace's directory. */
#define UNTRACED(NAME)                                                                             \
	do {                                                                                       \
		if (tmatch__tracing())                                                             \
			tmatch__trace_unsupported(NAME);                                           \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Init                                                                      */

API int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv), provided = MPI_THREAD_SINGLE;

	if (rc == MPI_SUCCESS) {
		PMPI_Query_thread(&provided);
		tmatch__record_setup(provided);
	}
	return rc;
}

API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		tmatch__record_setup(*provided);
	return rc;
}

/* The profile is written from inside MPI_Finalize (record_profile.c); the
   trace's last compute ends here, before the MPI library's own finalizing,
   whose waits spin longer the busier the machine. */
API int MPI_Finalize(void)
{
	if (tmatch__tracing())
		tmatch__trace_finalizing();
	return PMPI_Finalize();
}

/* ------------------------------------------------------------------------ */
/* Calls the trace does not write, which wait for other ranks (a new        */
/* communicator agrees on its members, a probe waits for a message): their */
/* time is not compute (the more loaded the machine, the longer they spin) */

#define PAUSED(CALL)                                                                               \
	do {                                                                                       \
		double t0_ = tmatch__tracing() ? tmatch__trace_clock() : -1;                       \
		int rc_ = CALL;                                                                    \
		if (t0_ >= 0)                                                                      \
			tmatch__trace_paused(t0_);                                                 \
		return rc_;                                                                        \
	} while (0)

API int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
	PAUSED(PMPI_Comm_split(comm, color, key, out));
}

API int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
	PAUSED(PMPI_Comm_split_type(comm, type, key, info, out));
}

API int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	PAUSED(PMPI_Comm_dup(comm, out));
}

API int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out)
{
	PAUSED(PMPI_Comm_create(comm, group, out));
}

API int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                        int reorder, MPI_Comm *out)
{
	PAUSED(PMPI_Cart_create(comm, ndims, dims, periods, reorder, out));
}

API int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *out)
{
	PAUSED(PMPI_Cart_sub(comm, remain, out));
}

API int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	PAUSED(PMPI_Probe(source, tag, comm, status));
}

API int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	PAUSED(PMPI_Iprobe(source, tag, comm, flag, status));
}

/* ------------------------------------------------------------------------ */
/* Point-to-point                                                            */

/* ---- trace points: the actions of a call, from its C arguments; the C
   wrappers here and the Fortran ones (record_fortran.c) both use them ---- */

void tmatch__tp_send(MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type)
{
	if (dest >= 0)
		tmatch__trace_action("send %d %d %llu 6", tmatch__trace_world(comm, dest), tag,
		                     (unsigned long long)tmatch__bytes(count, type));
}

int tmatch__tp_isend(MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type)
{
	int w;

	if (dest < 0)
		return -1;
	w = tmatch__trace_world(comm, dest);
	tmatch__trace_action("isend %d %d %llu 6", w, tag,
	                     (unsigned long long)tmatch__bytes(count, type));
	return w < 0 ? -2 : w;
}

void tmatch__tp_isend_done(MPI_Request req, int w, int tag)
{
	if (w == -1)
		tmatch__trace_request_null(req);
	else
		tmatch__trace_request(req, tmatch__st.world_rank, w, tag);
}

void tmatch__tp_recv(MPI_Comm comm, int source, int tag, int count, MPI_Datatype type)
{
	if (source != MPI_PROC_NULL)
		tmatch__trace_action("recv %d %d %llu 6", tmatch__trace_world(comm, source), tag,
		                     (unsigned long long)tmatch__bytes(count, type));
}

void tmatch__tp_recv_matched(double t0, MPI_Comm comm, const MPI_Status *st, int count,
                             MPI_Datatype type)
{
	if (st->MPI_SOURCE != MPI_PROC_NULL)
		tmatch__trace_action_at(t0, "recv %d %d %llu 6",
		                        tmatch__trace_world(comm, st->MPI_SOURCE), st->MPI_TAG,
		                        (unsigned long long)tmatch__bytes(count, type));
}

long tmatch__tp_irecv(MPI_Comm comm, int source, int tag, int count, MPI_Datatype type, int *w)
{
	unsigned long long bytes = tmatch__bytes(count, type);
	int first = 1;

	*w = -1;
	if (source == MPI_PROC_NULL)
		return -2;
	if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG) /* written when it completes */
		return tmatch__trace_irecv_wild(bytes, &first);
	*w = tmatch__trace_world(comm, source);
	tmatch__trace_action("irecv %d %d %llu 6", *w, tag, bytes);
	return -1;
}

void tmatch__tp_irecv_done(MPI_Request req, MPI_Comm comm, int w, int tag, long pos)
{
	if (pos == -2)
		tmatch__trace_request_null(req);
	else
		tmatch__trace_request_at(req, w, tmatch__st.world_rank, tag, comm, pos);
}

#define BLOCKING_SEND(NAME)                                                                        \
	API int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,       \
	                   MPI_Comm comm)                                                          \
	{                                                                                          \
		if (tmatch__on())                                                                  \
			tmatch__count_send(comm, dest, count, type);                               \
		TRACED(tmatch__tp_send(comm, dest, tag, count, type),                              \
		       PMPI_##NAME(buf, count, type, dest, tag, comm));                            \
	}

#define NONBLOCKING_SEND(NAME)                                                                     \
	API int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,       \
	                   MPI_Comm comm, MPI_Request *req)                                        \
	{                                                                                          \
		int rc_, w_;                                                                       \
		if (tmatch__on())                                                                  \
			tmatch__count_send(comm, dest, count, type);                               \
		if (!tmatch__tracing())                                                            \
			return PMPI_##NAME(buf, count, type, dest, tag, comm, req);                \
		w_ = tmatch__tp_isend(comm, dest, tag, count, type);                               \
		rc_ = PMPI_##NAME(buf, count, type, dest, tag, comm, req);                         \
		if (rc_ == MPI_SUCCESS)                                                            \
			tmatch__tp_isend_done(*req, w_, tag);                                      \
		if (w_ != -1) /* MPI_PROC_NULL's wrote nothing: its time stays compute */          \
			tmatch__trace_done();                                                      \
		return rc_;                                                                        \
	}

#define PERSISTENT_SEND(NAME)                                                                      \
	API int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,       \
	                   MPI_Comm comm, MPI_Request *req)                                        \
	{                                                                                          \
		int rc = PMPI_##NAME(buf, count, type, dest, tag, comm, req);                      \
		if (rc == MPI_SUCCESS && tmatch__on()) {                                           \
			struct tmatch__persist_def d_ =                                            \
			    tmatch__persist_def(1, comm, dest, tag, count, type);                  \
			tmatch__persist_add(*req, &d_);                                            \
		}                                                                                  \
		return rc;                                                                         \
	}

BLOCKING_SEND(Send)
BLOCKING_SEND(Bsend)
BLOCKING_SEND(Ssend)
BLOCKING_SEND(Rsend)
NONBLOCKING_SEND(Isend)
NONBLOCKING_SEND(Ibsend)
NONBLOCKING_SEND(Issend)
NONBLOCKING_SEND(Irsend)
PERSISTENT_SEND(Send_init)
PERSISTENT_SEND(Bsend_init)
PERSISTENT_SEND(Ssend_init)
PERSISTENT_SEND(Rsend_init)

/* Receives and completions are traced only: nothing is counted on this side. */
API int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                 MPI_Status *status)
{
	MPI_Status st;
	double t0;
	int rc;

	if (source != MPI_ANY_SOURCE && tag != MPI_ANY_TAG)
		TRACED(tmatch__tp_recv(comm, source, tag, count, type),
		       PMPI_Recv(buf, count, type, source, tag, comm, status));
	if (!tmatch__tracing())
		return PMPI_Recv(buf, count, type, source, tag, comm, status);
	/* a wildcard: the message the run matched, which a replay then receives */
	t0 = tmatch__trace_clock();
	rc = PMPI_Recv(buf, count, type, source, tag, comm,
	               status == MPI_STATUS_IGNORE ? &st : status);
	if (status != MPI_STATUS_IGNORE)
		st = *status;
	if (rc == MPI_SUCCESS)
		tmatch__tp_recv_matched(t0, comm, &st, count, type);
	tmatch__trace_done();
	return rc;
}

API int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
	int rc, w;
	long pos;

	if (!tmatch__tracing())
		return PMPI_Irecv(buf, count, type, source, tag, comm, req);
	pos = tmatch__tp_irecv(comm, source, tag, count, type, &w);
	rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
	if (rc == MPI_SUCCESS)
		tmatch__tp_irecv_done(*req, comm, w, tag, pos);
	if (pos != -2) /* MPI_PROC_NULL's wrote nothing: its time stays compute */
		tmatch__trace_done();
	return rc;
}

/*
 * Completions: what the call completed is written after it, as the run
 * observed it: each request as a wait (the handles as they were before the
 * call, a wildcard receive's source and tag from its status); a test that
 * completed nothing leaves no line. The application's statuses are used,
 * or ours when it asked for none; up to ON_STACK handles and statuses live
 * on the stack.
 */
#define ON_STACK 64

struct done {
	MPI_Request hs[ON_STACK], *h; /* the handles before the call */
	MPI_Status ss[ON_STACK], *st; /* statuses the call fills */
	int st_malloced;              /* st is ours, from malloc */
	double t0;
};

/* Before the call: copy the n handles; statuses: the caller's, or ours. */
static int done_begin(struct done *d, int n, const MPI_Request reqs[], MPI_Status *statuses)
{
	int m = n > 0 ? n : 1;

	/* handles: a pointer in Open MPI, an int in MPICH; copied as bytes */
	// NOLINTNEXTLINE(bugprone-sizeof-expression)
	d->h = m <= ON_STACK ? d->hs : malloc(sizeof(MPI_Request) * (size_t)m);
	d->st_malloced = 0;
	if (statuses != MPI_STATUSES_IGNORE && statuses != MPI_STATUS_IGNORE) {
		d->st = statuses;
	} else if (m <= ON_STACK) {
		d->st = d->ss;
	} else {
		d->st = malloc(sizeof(MPI_Status) * (size_t)m);
		d->st_malloced = 1;
	}
	if (!d->h || !d->st) {
		tmatch__trace_unsupported("a completion call (out of memory)");
		if (d->h != d->hs)
			free(d->h);
		if (d->st_malloced)
			free(d->st);
		d->h = NULL;
		return -1;
	}
	if (n > 0)
		// NOLINTNEXTLINE(bugprone-sizeof-expression)
		memcpy(d->h, reqs, sizeof(MPI_Request) * (size_t)n);
	d->t0 = tmatch__trace_clock();
	return 0;
}

/* After it: the `count` requests h[idx[j]] it completed, status st[j]
   (count may be MPI_UNDEFINED, idx NULL for 0..count-1). */
static void done_end(struct done *d, int rc, int count, const int idx[])
{
	int any = 0;

	if (!d->h)
		return;
	if (rc == MPI_SUCCESS && count != MPI_UNDEFINED)
		for (int j = 0; j < count; j++, any = 1)
			tmatch__trace_completed(d->t0, &d->h[idx ? idx[j] : j], &d->st[j], 1, 0);
	if (!any)
		tmatch__trace_completed(d->t0, NULL, NULL, 0, 0);
	if (d->h != d->hs)
		free(d->h);
	if (d->st_malloced)
		free(d->st);
}

API int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	struct done d;
	int rc;

	if (!tmatch__tracing() || done_begin(&d, 1, req, status) != 0)
		return PMPI_Wait(req, status);
	rc = PMPI_Wait(req, d.st);
	done_end(&d, rc, 1, NULL);
	return rc;
}

API int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	struct done d;
	int rc;

	if (!tmatch__tracing() || done_begin(&d, n, reqs, statuses) != 0)
		return PMPI_Waitall(n, reqs, statuses);
	rc = PMPI_Waitall(n, reqs, d.st);
	/* one waitall line, SMPI's own, whatever it completed */
	tmatch__trace_completed(d.t0, d.h, d.st, rc == MPI_SUCCESS ? n : 0, 1);
	if (d.h != d.hs)
		free(d.h);
	if (d.st_malloced)
		free(d.st);
	return rc;
}

API int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	struct done d;
	int rc;

	if (!tmatch__tracing() || done_begin(&d, n, reqs, status) != 0)
		return PMPI_Waitany(n, reqs, index, status);
	rc = PMPI_Waitany(n, reqs, index, d.st);
	done_end(&d, rc, *index == MPI_UNDEFINED ? 0 : 1, index);
	return rc;
}

API int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	struct done d;
	int rc;

	if (!tmatch__tracing() || done_begin(&d, n, reqs, statuses) != 0)
		return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
	rc = PMPI_Waitsome(n, reqs, outcount, indices, d.st);
	done_end(&d, rc, *outcount, indices);
	return rc;
}

API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	struct done d;
	int rc;

	if (!tmatch__tracing() || done_begin(&d, 1, req, status) != 0)
		return PMPI_Test(req, flag, status);
	rc = PMPI_Test(req, flag, d.st);
	done_end(&d, rc, *flag ? 1 : 0, NULL);
	return rc;
}

API int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	struct done d;
	int rc;

	if (!tmatch__tracing() || done_begin(&d, n, reqs, statuses) != 0)
		return PMPI_Testall(n, reqs, flag, statuses);
	rc = PMPI_Testall(n, reqs, flag, d.st);
	done_end(&d, rc, *flag ? n : 0, NULL);
	return rc;
}

API int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	struct done d;
	int rc;

	if (!tmatch__tracing() || done_begin(&d, n, reqs, status) != 0)
		return PMPI_Testany(n, reqs, index, flag, status);
	rc = PMPI_Testany(n, reqs, index, flag, d.st);
	done_end(&d, rc, *flag && *index != MPI_UNDEFINED ? 1 : 0, index);
	return rc;
}

API int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	struct done d;
	int rc;

	if (!tmatch__tracing() || done_begin(&d, n, reqs, statuses) != 0)
		return PMPI_Testsome(n, reqs, outcount, indices, statuses);
	rc = PMPI_Testsome(n, reqs, outcount, indices, d.st);
	done_end(&d, rc, *outcount, indices);
	return rc;
}

API int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
	int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, req);

	if (rc == MPI_SUCCESS && tmatch__on()) {
		struct tmatch__persist_def d =
		    tmatch__persist_def(0, comm, source, tag, count, type);

		tmatch__persist_add(*req, &d);
	}
	return rc;
}

/* Each start of a send counts a message; traced, each start is the isend
   or irecv it begins (the handles stay the same across the call). */
void tmatch__tp_started(int n, const MPI_Request reqs[])
{
	int first = 1;

	for (int i = 0; i < n; i++) {
		struct tmatch__persist_def d;
		int known = tmatch__persist_start(reqs[i], &d);

		if (tmatch__tracing())
			tmatch__trace_started(reqs[i], known ? &d : NULL, &first);
	}
}

API int MPI_Start(MPI_Request *req)
{
	int rc;

	if (!tmatch__on())
		return PMPI_Start(req);
	tmatch__tp_started(1, req);
	rc = PMPI_Start(req);
	if (tmatch__tracing())
		tmatch__trace_done();
	return rc;
}

API int MPI_Startall(int n, MPI_Request reqs[])
{
	int rc;

	if (!tmatch__on())
		return PMPI_Startall(n, reqs);
	tmatch__tp_started(n, reqs);
	rc = PMPI_Startall(n, reqs);
	if (tmatch__tracing())
		tmatch__trace_done();
	return rc;
}

API int MPI_Request_free(MPI_Request *req)
{
	if (tmatch__st.ready)
		tmatch__persist_forget(*req);
	if (tmatch__tracing())
		tmatch__trace_request_freed(*req);
	return PMPI_Request_free(req);
}

/* A send-receive; with MPI_PROC_NULL on one side, not replayable as one. */
/*
 * After MPI_Sendrecv(_replace), entered at t0: its send and its receive
 * as an exchange (tmatch__trace_exchange), the receive's source and tag
 * from the status (so wildcards are what the run matched); with
 * MPI_PROC_NULL on one side, the other side's message alone.
 */
void tmatch__tp_sendrecv(double t0, MPI_Comm comm, unsigned long long sbytes, int dest, int stag,
                         unsigned long long rbytes, int source, const MPI_Status *st)
{
	int first = 1;
	int to = dest == MPI_PROC_NULL ? -1 : tmatch__trace_world(comm, dest);
	int from = source == MPI_PROC_NULL ? -1 : tmatch__trace_world(comm, st->MPI_SOURCE);

	if (to >= 0 && from >= 0)
		tmatch__trace_exchange(t0, to, stag, sbytes, from, st->MPI_TAG, rbytes, &first);
	else if (to >= 0)
		tmatch__trace_action_at(t0, "send %d %d %llu 6", to, stag, sbytes);
	else if (from >= 0)
		tmatch__trace_action_at(t0, "recv %d %d %llu 6", from, st->MPI_TAG, rbytes);
}

API int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                     void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                     MPI_Comm comm, MPI_Status *status)
{
	MPI_Status st;
	double t0;
	int rc;

	if (tmatch__on())
		tmatch__count_send(comm, dest, scount, stype);
	if (!tmatch__tracing())
		return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,
		                     rtag, comm, status);
	t0 = tmatch__trace_clock();
	rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
	                   status == MPI_STATUS_IGNORE ? &st : status);
	if (status != MPI_STATUS_IGNORE)
		st = *status;
	if (rc == MPI_SUCCESS)
		tmatch__tp_sendrecv(t0, comm, tmatch__bytes(scount, stype), dest, stag,
		                    tmatch__bytes(rcount, rtype), source, &st);
	tmatch__trace_done();
	return rc;
}

API int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag,
                             int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status st;
	double t0;
	int rc;

	if (tmatch__on())
		tmatch__count_send(comm, dest, count, type);
	if (!tmatch__tracing())
		return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm,
		                             status);
	t0 = tmatch__trace_clock();
	rc = PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm,
	                           status == MPI_STATUS_IGNORE ? &st : status);
	if (status != MPI_STATUS_IGNORE)
		st = *status;
	if (rc == MPI_SUCCESS)
		tmatch__tp_sendrecv(t0, comm, tmatch__bytes(count, type), dest, stag,
		                    tmatch__bytes(count, type), source, &st);
	tmatch__trace_done();
	return rc;
}

#if MPI_VERSION >= 4
API int MPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                      void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                      MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Isendrecv");
	if (tmatch__on())
		tmatch__count_send(comm, dest, scount, stype);
	return PMPI_Isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
	                      comm, req);
}

API int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag,
                              int source, int rtag, MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Isendrecv_replace");
	if (tmatch__on())
		tmatch__count_send(comm, dest, count, type);
	return PMPI_Isendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, req);
}
#endif

/* ------------------------------------------------------------------------ */
/* One-sided: puts and accumulates flow origin -> target, gets target -> origin */

static void count_rma(MPI_Win win, int target, int count, MPI_Datatype type, int get)
{
	if (target < 0) /* MPI_PROC_NULL */
		return;
	tmatch__st.used_rma = 1;
	tmatch__add(get ? TMATCH__GET : TMATCH__P2P, tmatch__win_to_world(win, target), 1,
	            tmatch__bytes(count, type));
}

API int MPI_Put(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                int tcount, MPI_Datatype ttype, MPI_Win win)
{
	UNTRACED("MPI_Put");
	if (tmatch__on())
		count_rma(win, target, ocount, otype, 0);
	return PMPI_Put(obuf, ocount, otype, target, tdisp, tcount, ttype, win);
}

API int MPI_Rput(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                 int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
	UNTRACED("MPI_Rput");
	if (tmatch__on())
		count_rma(win, target, ocount, otype, 0);
	return PMPI_Rput(obuf, ocount, otype, target, tdisp, tcount, ttype, win, req);
}

API int MPI_Get(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                MPI_Datatype ttype, MPI_Win win)
{
	UNTRACED("MPI_Get");
	if (tmatch__on())
		count_rma(win, target, ocount, otype, 1);
	return PMPI_Get(obuf, ocount, otype, target, tdisp, tcount, ttype, win);
}

API int MPI_Rget(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                 MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
	UNTRACED("MPI_Rget");
	if (tmatch__on())
		count_rma(win, target, ocount, otype, 1);
	return PMPI_Rget(obuf, ocount, otype, target, tdisp, tcount, ttype, win, req);
}

API int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                       int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	UNTRACED("MPI_Accumulate");
	if (tmatch__on())
		count_rma(win, target, ocount, otype, 0);
	return PMPI_Accumulate(obuf, ocount, otype, target, tdisp, tcount, ttype, op, win);
}

API int MPI_Raccumulate(const void *obuf, int ocount, MPI_Datatype otype, int target,
                        MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win,
                        MPI_Request *req)
{
	UNTRACED("MPI_Raccumulate");
	if (tmatch__on())
		count_rma(win, target, ocount, otype, 0);
	return PMPI_Raccumulate(obuf, ocount, otype, target, tdisp, tcount, ttype, op, win, req);
}

/* Get_accumulate and its kin: the origin data goes to the target, the result
 * comes back (both counted whatever the op, MPI_NO_OP included) */
static void count_rma_both(MPI_Win win, int target, int ocount, MPI_Datatype otype, int rcount,
                           MPI_Datatype rtype)
{
	count_rma(win, target, ocount, otype, 0);
	count_rma(win, target, rcount, rtype, 1);
}

API int MPI_Get_accumulate(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount,
                           MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
                           MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	UNTRACED("MPI_Get_accumulate");
	if (tmatch__on())
		count_rma_both(win, target, ocount, otype, rcount, rtype);
	return PMPI_Get_accumulate(obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount,
	                           ttype, op, win);
}

API int MPI_Rget_accumulate(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf,
                            int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
                            MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req)
{
	UNTRACED("MPI_Rget_accumulate");
	if (tmatch__on())
		count_rma_both(win, target, ocount, otype, rcount, rtype);
	return PMPI_Rget_accumulate(obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount,
	                            ttype, op, win, req);
}

/* one element of type each way; the compare value of Compare_and_swap is not counted */
API int MPI_Fetch_and_op(const void *obuf, void *rbuf, MPI_Datatype type, int target,
                         MPI_Aint tdisp, MPI_Op op, MPI_Win win)
{
	UNTRACED("MPI_Fetch_and_op");
	if (tmatch__on())
		count_rma_both(win, target, 1, type, 1, type);
	return PMPI_Fetch_and_op(obuf, rbuf, type, target, tdisp, op, win);
}

API int MPI_Compare_and_swap(const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype type,
                             int target, MPI_Aint tdisp, MPI_Win win)
{
	UNTRACED("MPI_Compare_and_swap");
	if (tmatch__on())
		count_rma_both(win, target, 1, type, 1, type);
	return PMPI_Compare_and_swap(obuf, cbuf, rbuf, type, target, tdisp, win);
}

/* ------------------------------------------------------------------------ */
/* Collectives: counted into coll_edges (record_coll.c: the lowering's sends */
/* or the logical model), traced (on MPI_COMM_WORLD's group SMPI's action,    */
/* on a smaller communicator the lowering's messages)                        */

#define COLL tmatch__counting_coll()

/* The block each member sends in allgather(v) and alltoall; with MPI_IN_PLACE
   the receive signature gives it. */
static uint64_t block_bytes(const void *sbuf, int scount, MPI_Datatype stype, int rcount,
                            MPI_Datatype rtype)
{
	return sbuf == MPI_IN_PLACE ? tmatch__bytes(rcount, rtype) : tmatch__bytes(scount, stype);
}

static uint64_t allgatherv_block(MPI_Comm comm, const void *sbuf, int scount, MPI_Datatype stype,
                                 const int rcounts[], MPI_Datatype rtype)
{
	int me = 0;

	if (sbuf != MPI_IN_PLACE)
		return tmatch__bytes(scount, stype);
	return PMPI_Comm_rank(comm, &me) == MPI_SUCCESS ? tmatch__bytes(rcounts[me], rtype) : 0;
}

static void count_alltoallw(MPI_Comm comm, const void *sbuf, const int scounts[],
                            const MPI_Datatype stypes[], const int rcounts[],
                            const MPI_Datatype rtypes[])
{
	struct tmatch__coll c = tmatch__coll1(TMATCH__COLL_ALLTOALLW, 0, 0, 0);

	c.scounts = sbuf == MPI_IN_PLACE ? rcounts : scounts;
	c.stypes = sbuf == MPI_IN_PLACE ? rtypes : stypes;
	c.rcounts = rcounts;
	c.rtypes = rtypes;
	tmatch__count_coll(comm, &c);
}

/* ---- trace points (also record_fortran.c's): on MPI_COMM_WORLD's group
   SMPI's own action, on a smaller communicator the lowering's messages ---- */

/* A v-collective c: 1 when the caller writes SMPI's action. */
static int trace_v(MPI_Comm comm, enum tmatch__coll_kind kind, int root, const int scounts[],
                   MPI_Datatype stype, unsigned long long sbytes, const int rcounts[],
                   MPI_Datatype rtype, unsigned long long rbytes)
{
	struct tmatch__coll c;

	if (tmatch__collv(&c, kind, root, scounts, stype, sbytes, rcounts, rtype, rbytes) < 0) {
		tmatch__trace_unsupported("a v-collective with a type of unknown size");
		return 0;
	}
	return tmatch__trace_coll(comm, &c);
}

static int trace1(MPI_Comm comm, enum tmatch__coll_kind kind, int root, unsigned long long sbytes,
                  unsigned long long rbytes)
{
	struct tmatch__coll c = tmatch__coll1(kind, root, sbytes, rbytes);

	return tmatch__trace_coll(comm, &c);
}

/* The v-collectives, traced with their counts in bytes per world rank
   (SMPI's formats) on MPI_COMM_WORLD's group. */
void tmatch__tp_alltoallv(MPI_Comm comm, const int scounts[], MPI_Datatype stype,
                          const int rcounts[], MPI_Datatype rtype)
{
	unsigned long long st, rt;
	char *sc, *rc;

	if (!trace_v(comm, TMATCH__COLL_ALLTOALLV, 0, scounts, stype, 0, rcounts, rtype, 0))
		return;
	sc = tmatch__trace_counts(scounts, stype, &st);
	rc = tmatch__trace_counts(rcounts, rtype, &rt);
	if (sc && rc)
		tmatch__trace_action("alltoallv %llu %s %llu %s 6 6", st, sc, rt, rc);
	else
		tmatch__trace_unsupported("a v-collective (out of memory)");
	free(sc);
	free(rc);
}

/* allgatherv: SCOUNT RCOUNTS...; gatherv: SCOUNT RCOUNTS... ROOT (the
   counts only at the root); scatterv: SCOUNTS... RCOUNT ROOT (only at the
   root); reducescatter: RCOUNTS... 0. */
static void action_v(const char *name, const char *head, const int counts[], MPI_Datatype type,
                     const char *tail)
{
	unsigned long long t;
	char *c;

	c = tmatch__trace_counts(counts, type, &t);
	if (c)
		tmatch__trace_action("%s %s%s%s", name, head, c, tail);
	else
		tmatch__trace_unsupported("a v-collective (out of memory)");
	free(c);
}

void tmatch__tp_allgatherv(MPI_Comm comm, const void *sbuf, int scount, MPI_Datatype stype,
                           const int rcounts[], MPI_Datatype rtype)
{
	char head[32];

	if (!trace_v(comm, TMATCH__COLL_ALLGATHERV, 0, NULL, stype, 0, rcounts, rtype, 0))
		return;
	snprintf(head, sizeof head, "%llu ",
	         (unsigned long long)allgatherv_block(comm, sbuf, scount, stype, rcounts, rtype));
	action_v("allgatherv", head, rcounts, rtype, " 6 6");
}

void tmatch__tp_gatherv(MPI_Comm comm, int scount, MPI_Datatype stype, const int rcounts[],
                        MPI_Datatype rtype, int root)
{
	char head[32], tail[32];
	int me = -1;

	PMPI_Comm_rank(comm, &me);
	if (!trace_v(comm, TMATCH__COLL_GATHERV, root, NULL, stype, tmatch__bytes(scount, stype),
	             me == root ? rcounts : NULL, rtype, 0))
		return;
	snprintf(head, sizeof head, "%llu ", (unsigned long long)tmatch__bytes(scount, stype));
	snprintf(tail, sizeof tail, " %d 6 6", root);
	action_v("gatherv", head, me == root ? rcounts : NULL, rtype, tail);
}

void tmatch__tp_scatterv(MPI_Comm comm, const int scounts[], MPI_Datatype stype, int rcount,
                         MPI_Datatype rtype, int root)
{
	char tail[48];
	int me = -1;

	PMPI_Comm_rank(comm, &me);
	if (!trace_v(comm, TMATCH__COLL_SCATTERV, root, me == root ? scounts : NULL, stype, 0, NULL,
	             rtype, tmatch__bytes(rcount, rtype)))
		return;
	snprintf(tail, sizeof tail, " %llu %d 6 6",
	         (unsigned long long)tmatch__bytes(rcount, rtype), root);
	action_v("scatterv", "", me == root ? scounts : NULL, stype, tail);
}

void tmatch__tp_barrier(MPI_Comm comm)
{
	if (trace1(comm, TMATCH__COLL_BARRIER, 0, 0, 0))
		tmatch__trace_action("barrier");
}

/* bcast, and reduce with op (SMPI's "reduce BYTES 0 ROOT 6") */
void tmatch__tp_rooted(MPI_Comm comm, int reduce, int count, MPI_Datatype type, int root)
{
	unsigned long long b = tmatch__bytes(count, type);

	if (trace1(comm, reduce ? TMATCH__COLL_REDUCE : TMATCH__COLL_BCAST, root, b, b))
		tmatch__trace_action(reduce ? "reduce %llu 0 %d 6" : "bcast %llu %d 6", b, root);
}

/* allreduce; also scan and exscan, which SMPI's replay lacks: replayed as
   an allreduce of their size */
void tmatch__tp_allreduce(MPI_Comm comm, int count, MPI_Datatype type)
{
	unsigned long long b = tmatch__bytes(count, type);

	if (trace1(comm, TMATCH__COLL_ALLREDUCE, 0, b, b))
		tmatch__trace_action("allreduce %llu 0 6", b);
}

/* gather (scatter 0) or scatter (1) of one block per member */
void tmatch__tp_gather(MPI_Comm comm, int scatter, int scount, MPI_Datatype stype, int rcount,
                       MPI_Datatype rtype, int root)
{
	unsigned long long sb = tmatch__bytes(scount, stype), rb = tmatch__bytes(rcount, rtype);

	if (trace1(comm, scatter ? TMATCH__COLL_SCATTER : TMATCH__COLL_GATHER, root, sb, rb))
		tmatch__trace_action("%s %llu %llu %d 6 6", scatter ? "scatter" : "gather", sb, rb,
		                     root);
}

void tmatch__tp_reduce_scatter(MPI_Comm comm, const int rcounts[], MPI_Datatype type)
{
	if (trace_v(comm, TMATCH__COLL_REDUCE_SCATTER, 0, NULL, type, 0, rcounts, type, 0))
		action_v("reducescatter", "", rcounts, type, " 0 6");
}

/* Allgather and alltoall: one block to and from every member. */
void tmatch__tp_blocks(MPI_Comm comm, enum tmatch__coll_kind kind, const char *name,
                       unsigned long long sbytes, unsigned long long rbytes)
{
	if (trace1(comm, kind, 0, sbytes, rbytes))
		tmatch__trace_action("%s %llu %llu 6 6", name, sbytes, rbytes);
}

/* ---- the wrappers: the blocking form counts and traces, the non-blocking
   one counts alike and marks the trace ---- */

API int MPI_Barrier(MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_BARRIER, 0, 0, 0);
	TRACED(tmatch__tp_barrier(comm), PMPI_Barrier(comm));
}

API int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Ibarrier");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_BARRIER, 0, 0, 0);
	return PMPI_Ibarrier(comm, req);
}

API int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_BCAST, root, tmatch__bytes(count, type), 0);
	TRACED(tmatch__tp_rooted(comm, 0, count, type, root),
	       PMPI_Bcast(buf, count, type, root, comm));
}

API int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                   MPI_Request *req)
{
	UNTRACED("MPI_Ibcast");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_BCAST, root, tmatch__bytes(count, type), 0);
	return PMPI_Ibcast(buf, count, type, root, comm, req);
}

API int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                   MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_REDUCE, root, tmatch__bytes(count, type), 0);
	TRACED(tmatch__tp_rooted(comm, 1, count, type, root),
	       PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm));
}

API int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                    MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Ireduce");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_REDUCE, root, tmatch__bytes(count, type), 0);
	return PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req);
}

API int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_ALLREDUCE, 0, tmatch__bytes(count, type), 0);
	TRACED(tmatch__tp_allreduce(comm, count, type),
	       PMPI_Allreduce(sbuf, rbuf, count, type, op, comm));
}

API int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Iallreduce");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_ALLREDUCE, 0, tmatch__bytes(count, type), 0);
	return PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req);
}

API int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm)
{
	UNTRACED("MPI_Reduce_scatter_block");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_REDUCE_SCATTER_BLOCK, 0, 0,
		                    tmatch__bytes(rcount, type));
	return PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
}

API int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Ireduce_scatter_block");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_REDUCE_SCATTER_BLOCK, 0, 0,
		                    tmatch__bytes(rcount, type));
	return PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, req);
}

API int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                           MPI_Op op, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_collv(comm, TMATCH__COLL_REDUCE_SCATTER, 0, NULL, type, 0, rcounts,
		                    type, 0);
	TRACED(tmatch__tp_reduce_scatter(comm, rcounts, type),
	       PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm));
}

API int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Ireduce_scatter");
	if (COLL)
		tmatch__count_collv(comm, TMATCH__COLL_REDUCE_SCATTER, 0, NULL, type, 0, rcounts,
		                    type, 0);
	return PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, req);
}

API int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                 MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_SCAN, 0, tmatch__bytes(count, type), 0);
	TRACED(tmatch__tp_allreduce(comm, count, type),
	       PMPI_Scan(sbuf, rbuf, count, type, op, comm));
}

API int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Iscan");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_SCAN, 0, tmatch__bytes(count, type), 0);
	return PMPI_Iscan(sbuf, rbuf, count, type, op, comm, req);
}

API int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_SCAN, 0, tmatch__bytes(count, type), 0);
	TRACED(tmatch__tp_allreduce(comm, count, type),
	       PMPI_Exscan(sbuf, rbuf, count, type, op, comm));
}

API int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Iexscan");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_SCAN, 0, tmatch__bytes(count, type), 0);
	return PMPI_Iexscan(sbuf, rbuf, count, type, op, comm, req);
}

API int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, int root, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_GATHER, root, tmatch__bytes(scount, stype),
		                    0);
	TRACED(tmatch__tp_gather(comm, 0, scount, stype, rcount, rtype, root),
	       PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}

API int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Igather");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_GATHER, root, tmatch__bytes(scount, stype),
		                    0);
	return PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
}

API int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                    MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_GATHERV, root, tmatch__bytes(scount, stype),
		                    0);
	TRACED(tmatch__tp_gatherv(comm, scount, stype, rcounts, rtype, root),
	       PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));
}

API int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                     MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Igatherv");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_GATHERV, root, tmatch__bytes(scount, stype),
		                    0);
	return PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req);
}

API int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_SCATTER, root, tmatch__bytes(scount, stype),
		                    0);
	TRACED(tmatch__tp_gather(comm, 1, scount, stype, rcount, rtype, root),
	       PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}

API int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Iscatter");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_SCATTER, root, tmatch__bytes(scount, stype),
		                    0);
	return PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
}

API int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                     void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_collv(comm, TMATCH__COLL_SCATTERV, root, scounts, stype, 0, NULL,
		                    rtype, 0);
	TRACED(tmatch__tp_scatterv(comm, scounts, stype, rcount, rtype, root),
	       PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
}

API int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                      void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                      MPI_Request *req)
{
	UNTRACED("MPI_Iscatterv");
	if (COLL)
		tmatch__count_collv(comm, TMATCH__COLL_SCATTERV, root, scounts, stype, 0, NULL,
		                    rtype, 0);
	return PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
}

API int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_ALLGATHER, 0,
		                    block_bytes(sbuf, scount, stype, rcount, rtype), 0);
	TRACED(tmatch__tp_blocks(comm, TMATCH__COLL_ALLGATHER, "allgather",
	                         block_bytes(sbuf, scount, stype, rcount, rtype),
	                         tmatch__bytes(rcount, rtype)),
	       PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}

API int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Iallgather");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_ALLGATHER, 0,
		                    block_bytes(sbuf, scount, stype, rcount, rtype), 0);
	return PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

API int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_collv(comm, TMATCH__COLL_ALLGATHERV, 0, NULL, stype,
		                    allgatherv_block(comm, sbuf, scount, stype, rcounts, rtype),
		                    rcounts, rtype, 0);
	TRACED(tmatch__tp_allgatherv(comm, sbuf, scount, stype, rcounts, rtype),
	       PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
}

API int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                        MPI_Request *req)
{
	UNTRACED("MPI_Iallgatherv");
	if (COLL)
		tmatch__count_collv(comm, TMATCH__COLL_ALLGATHERV, 0, NULL, stype,
		                    allgatherv_block(comm, sbuf, scount, stype, rcounts, rtype),
		                    rcounts, rtype, 0);
	return PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
}

API int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_ALLTOALL, 0,
		                    block_bytes(sbuf, scount, stype, rcount, rtype), 0);
	TRACED(tmatch__tp_blocks(comm, TMATCH__COLL_ALLTOALL, "alltoall",
	                         block_bytes(sbuf, scount, stype, rcount, rtype),
	                         tmatch__bytes(rcount, rtype)),
	       PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}

API int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Ialltoall");
	if (COLL)
		tmatch__count_coll1(comm, TMATCH__COLL_ALLTOALL, 0,
		                    block_bytes(sbuf, scount, stype, rcount, rtype), 0);
	return PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

API int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                      MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                      MPI_Datatype rtype, MPI_Comm comm)
{
	if (COLL)
		tmatch__count_collv(comm, TMATCH__COLL_ALLTOALLV, 0,
		                    sbuf == MPI_IN_PLACE ? rcounts : scounts,
		                    sbuf == MPI_IN_PLACE ? rtype : stype, 0, rcounts, rtype, 0);
	TRACED(tmatch__tp_alltoallv(comm, sbuf == MPI_IN_PLACE ? rcounts : scounts,
	                            sbuf == MPI_IN_PLACE ? rtype : stype, rcounts, rtype),
	       PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
}

API int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                       MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Ialltoallv");
	if (COLL)
		tmatch__count_collv(comm, TMATCH__COLL_ALLTOALLV, 0,
		                    sbuf == MPI_IN_PLACE ? rcounts : scounts,
		                    sbuf == MPI_IN_PLACE ? rtype : stype, 0, rcounts, rtype, 0);
	return PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
	                       req);
}

API int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                      const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                      const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
	UNTRACED("MPI_Alltoallw");
	if (COLL)
		count_alltoallw(comm, sbuf, scounts, stypes, rcounts, rtypes);
	return PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
}

API int MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                       const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                       const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                       MPI_Request *req)
{
	UNTRACED("MPI_Ialltoallw");
	if (COLL)
		count_alltoallw(comm, sbuf, scounts, stypes, rcounts, rtypes);
	return PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
	                       req);
}

/* ------------------------------------------------------------------------ */
/* Neighbourhood collectives: one message to each outgoing neighbour of the  */
/* virtual topology, counted with point-to-point (see README.md), so without */
/* --collectives too.                                                        */

void tmatch__neighbors(MPI_Comm comm, int count, MPI_Datatype type, const int counts[],
                       const MPI_Datatype types[])
{
	const struct tmatch__nbrs *nb = tmatch__comm_neighbors(comm);

	for (int i = 0; nb && i < nb->n; i++) {
		uint64_t bytes = tmatch__bytes(counts ? counts[i] : count, types ? types[i] : type);
		if (nb->world[i] != TMATCH__NBR_NULL && bytes > 0)
			tmatch__add(TMATCH__P2P, nb->world[i], 1, bytes);
	}
}

/* allgather and alltoall: the same block to (resp. a block for) each neighbour */
#define NEIGHBOR_SAME(NAME)                                                                        \
	API int MPI_Neighbor_##NAME(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,  \
	                            int rcount, MPI_Datatype rtype, MPI_Comm comm)                 \
	{                                                                                          \
		UNTRACED("MPI_Neighbor_" #NAME);                                                   \
		if (tmatch__on())                                                                  \
			tmatch__neighbors(comm, scount, stype, NULL, NULL);                        \
		return PMPI_Neighbor_##NAME(sbuf, scount, stype, rbuf, rcount, rtype, comm);       \
	}                                                                                          \
	API int MPI_Ineighbor_##NAME(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, \
	                             int rcount, MPI_Datatype rtype, MPI_Comm comm,                \
	                             MPI_Request *req)                                             \
	{                                                                                          \
		UNTRACED("MPI_Ineighbor_" #NAME);                                                  \
		if (tmatch__on())                                                                  \
			tmatch__neighbors(comm, scount, stype, NULL, NULL);                        \
		return PMPI_Ineighbor_##NAME(sbuf, scount, stype, rbuf, rcount, rtype, comm, req); \
	}

NEIGHBOR_SAME(allgather)
NEIGHBOR_SAME(alltoall)

API int MPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                const int rcounts[], const int displs[], MPI_Datatype rtype,
                                MPI_Comm comm)
{
	UNTRACED("MPI_Neighbor_allgatherv");
	if (tmatch__on())
		tmatch__neighbors(comm, scount, stype, NULL, NULL);
	return PMPI_Neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}

API int MPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                 const int rcounts[], const int displs[], MPI_Datatype rtype,
                                 MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Ineighbor_allgatherv");
	if (tmatch__on())
		tmatch__neighbors(comm, scount, stype, NULL, NULL);
	return PMPI_Ineighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
	                                 req);
}

API int MPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                               MPI_Datatype stype, void *rbuf, const int rcounts[],
                               const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
	UNTRACED("MPI_Neighbor_alltoallv");
	if (tmatch__on())
		tmatch__neighbors(comm, 0, stype, scounts, NULL);
	return PMPI_Neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
	                               comm);
}

API int MPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                                MPI_Datatype stype, void *rbuf, const int rcounts[],
                                const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                                MPI_Request *req)
{
	UNTRACED("MPI_Ineighbor_alltoallv");
	if (tmatch__on())
		tmatch__neighbors(comm, 0, stype, scounts, NULL);
	return PMPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
	                                rtype, comm, req);
}

API int MPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                               const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
	UNTRACED("MPI_Neighbor_alltoallw");
	if (tmatch__on())
		tmatch__neighbors(comm, 0, MPI_DATATYPE_NULL, scounts, stypes);
	return PMPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
	                               rtypes, comm);
}

API int MPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                                MPI_Comm comm, MPI_Request *req)
{
	UNTRACED("MPI_Ineighbor_alltoallw");
	if (tmatch__on())
		tmatch__neighbors(comm, 0, MPI_DATATYPE_NULL, scounts, stypes);
	return PMPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
	                                rtypes, comm, req);
}
