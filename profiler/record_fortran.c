/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_fortran.c - the gfortran bindings (`use mpi` and mpif.h: the
 * lower-case symbols with one trailing underscore; `use mpi_f08`: the same
 * with _f08_, aliases, see the end) of the calls record_wrap.c counts.
 *
 * Why they are needed: Open MPI's Fortran layer calls PMPI_X directly, so a
 * C-only PMPI tool sees nothing of a Fortran program. MPICH's Fortran layer
 * calls MPI_X, which would reach our C wrappers a second time: while a
 * Fortran wrapper forwards, tmatch__in_fortran is raised and the C wrappers
 * do not count. The real Fortran entry point is found with
 * dlsym(RTLD_NEXT, name), once per symbol.
 *
 * Not covered: MPI_IN_PLACE in Fortran MPI_(I)ALLTOALLV/W (the send counts
 * are used).
 */
#include "profiler/record_private.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define API TMATCH_RECORD_VISIBLE
typedef MPI_Fint F;

static void *next_fn(const char *name, void **slot)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		if (!fn) {
			fprintf(stderr,
			        "treematch-record: %s is not in the MPI library this program uses; "
			        "was it started with the recorder of another MPI?\n",
			        name);
			PMPI_Abort(MPI_COMM_WORLD, 1);
		}
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* Where ierr points when an mpi_f08 caller left its optional ierror out. */
static __thread F spare_ierr;

/* Declare the pointer type T, forward to the real NAME with ARGS. */
#define FORWARD(NAME, T, ARGS)                                                                     \
	do {                                                                                       \
		static void *slot;                                                                 \
		T real = (T)next_fn(#NAME, &slot);                                                 \
		if (!ierr)                                                                         \
			ierr = &spare_ierr;                                                        \
		if (tmatch__tracing_on)                                                            \
			tmatch__trace_unsupported("the Fortran bindings (not traced yet)");        \
		tmatch__in_fortran++;                                                              \
		real ARGS;                                                                         \
		tmatch__in_fortran--;                                                              \
	} while (0)

static int fon(void)
{
	return tmatch__st.ready && !tmatch__in_fortran;
}

static uint64_t fbytes(const F *count, const F *type)
{
	return tmatch__bytes(*count, MPI_Type_f2c(*type));
}

static void fcount_send(const F *comm, const F *dest, const F *count, const F *type)
{
	tmatch__count_send(MPI_Comm_f2c(*comm), *dest, *count, MPI_Type_f2c(*type));
}

/* ------------------------------------------------------------------------ */
/* Init                                                                      */

typedef void (*init_t)(F *);
typedef void (*init_thread_t)(F *, F *, F *);

API void mpi_init_(F *ierr);
API void mpi_init_(F *ierr)
{
	int provided = MPI_THREAD_SINGLE;

	FORWARD(mpi_init_, init_t, (ierr));
	if (*ierr == MPI_SUCCESS) {
		PMPI_Query_thread(&provided);
		tmatch__record_setup(provided);
	}
}

API void mpi_init_thread_(F *required, F *provided, F *ierr);
API void mpi_init_thread_(F *required, F *provided, F *ierr)
{
	FORWARD(mpi_init_thread_, init_thread_t, (required, provided, ierr));
	if (*ierr == MPI_SUCCESS)
		tmatch__record_setup(*provided);
}

/* ------------------------------------------------------------------------ */
/* Point-to-point                                                            */

typedef void (*send_t)(void *, F *, F *, F *, F *, F *, F *);
typedef void (*isend_t)(void *, F *, F *, F *, F *, F *, F *, F *);

#define F_BLOCKING(NAME)                                                                           \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr);            \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)             \
	{                                                                                          \
		if (fon())                                                                         \
			fcount_send(comm, dest, count, type);                                      \
		FORWARD(NAME, send_t, (buf, count, type, dest, tag, comm, ierr));                  \
	}

#define F_NONBLOCKING(NAME)                                                                        \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr);    \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)     \
	{                                                                                          \
		if (fon())                                                                         \
			fcount_send(comm, dest, count, type);                                      \
		FORWARD(NAME, isend_t, (buf, count, type, dest, tag, comm, req, ierr));            \
	}

/* What a persistent request stands for (a send, or a receive: send 0). */
static void fpersist_add(int send, const F *req, const F *comm, const F *rank, const F *tag,
                         const F *count, const F *type)
{
	struct tmatch__persist_def d = tmatch__persist_def(send, MPI_Comm_f2c(*comm), *rank, *tag,
	                                                   *count, MPI_Type_f2c(*type));

	tmatch__persist_add(MPI_Request_f2c(*req), &d);
}

#define F_PERSISTENT(NAME)                                                                         \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr);    \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)     \
	{                                                                                          \
		int on = fon();                                                                    \
		FORWARD(NAME, isend_t, (buf, count, type, dest, tag, comm, req, ierr));            \
		if (on && *ierr == MPI_SUCCESS)                                                    \
			fpersist_add(1, req, comm, dest, tag, count, type);                        \
	}

F_BLOCKING(mpi_send_)
F_BLOCKING(mpi_bsend_)
F_BLOCKING(mpi_ssend_)
F_BLOCKING(mpi_rsend_)
F_NONBLOCKING(mpi_isend_)
F_NONBLOCKING(mpi_ibsend_)
F_NONBLOCKING(mpi_issend_)
F_NONBLOCKING(mpi_irsend_)
F_PERSISTENT(mpi_send_init_)
F_PERSISTENT(mpi_bsend_init_)
F_PERSISTENT(mpi_ssend_init_)
F_PERSISTENT(mpi_rsend_init_)

API void mpi_recv_init_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *req, F *ierr);
API void mpi_recv_init_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *req, F *ierr)
{
	int on = fon();

	FORWARD(mpi_recv_init_, isend_t, (buf, count, type, src, tag, comm, req, ierr));
	if (on && *ierr == MPI_SUCCESS)
		fpersist_add(0, req, comm, src, tag, count, type);
}

typedef void (*start_t)(F *, F *);
typedef void (*startall_t)(F *, F *, F *);

static void fpersist_start(F req)
{
	struct tmatch__persist_def d;

	tmatch__persist_start(MPI_Request_f2c(req), &d);
}

API void mpi_start_(F *req, F *ierr);
API void mpi_start_(F *req, F *ierr)
{
	if (fon())
		fpersist_start(*req);
	FORWARD(mpi_start_, start_t, (req, ierr));
}

API void mpi_startall_(F *n, F *reqs, F *ierr);
API void mpi_startall_(F *n, F *reqs, F *ierr)
{
	if (fon())
		for (F i = 0; i < *n; i++)
			fpersist_start(reqs[i]);
	FORWARD(mpi_startall_, startall_t, (n, reqs, ierr));
}

API void mpi_request_free_(F *req, F *ierr);
API void mpi_request_free_(F *req, F *ierr)
{
	if (tmatch__st.ready)
		tmatch__persist_forget(MPI_Request_f2c(*req));
	FORWARD(mpi_request_free_, start_t, (req, ierr));
}

typedef void (*sendrecv_t)(void *, F *, F *, F *, F *, void *, F *, F *, F *, F *, F *, F *, F *);
typedef void (*sendrecv_replace_t)(void *, F *, F *, F *, F *, F *, F *, F *, F *, F *);

API void mpi_sendrecv_(void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount,
                       F *rtype, F *src, F *rtag, F *comm, F *status, F *ierr);
API void mpi_sendrecv_(void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount,
                       F *rtype, F *src, F *rtag, F *comm, F *status, F *ierr)
{
	if (fon())
		fcount_send(comm, dest, scount, stype);
	FORWARD(
	    mpi_sendrecv_, sendrecv_t,
	    (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status, ierr));
}

API void mpi_sendrecv_replace_(void *buf, F *count, F *type, F *dest, F *stag, F *src, F *rtag,
                               F *comm, F *status, F *ierr);
API void mpi_sendrecv_replace_(void *buf, F *count, F *type, F *dest, F *stag, F *src, F *rtag,
                               F *comm, F *status, F *ierr)
{
	if (fon())
		fcount_send(comm, dest, count, type);
	FORWARD(mpi_sendrecv_replace_, sendrecv_replace_t,
	        (buf, count, type, dest, stag, src, rtag, comm, status, ierr));
}

/* ------------------------------------------------------------------------ */
/* One-sided                                                                 */

typedef void (*put_t)(void *, F *, F *, F *, MPI_Aint *, F *, F *, F *, F *);
typedef void (*rput_t)(void *, F *, F *, F *, MPI_Aint *, F *, F *, F *, F *, F *);
typedef void (*acc_t)(void *, F *, F *, F *, MPI_Aint *, F *, F *, F *, F *, F *);

static void fcount_rma(const F *win, const F *target, const F *count, const F *type, int get)
{
	if (*target < 0)
		return;
	tmatch__st.used_rma = 1;
	tmatch__add(get ? TMATCH__GET : TMATCH__P2P,
	            tmatch__win_to_world(MPI_Win_f2c(*win), *target), 1, fbytes(count, type));
}

API void mpi_put_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype,
                  F *win, F *ierr);
API void mpi_put_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype,
                  F *win, F *ierr)
{
	if (fon())
		fcount_rma(win, target, ocount, otype, 0);
	FORWARD(mpi_put_, put_t, (obuf, ocount, otype, target, tdisp, tcount, ttype, win, ierr));
}

API void mpi_get_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype,
                  F *win, F *ierr);
API void mpi_get_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype,
                  F *win, F *ierr)
{
	if (fon())
		fcount_rma(win, target, ocount, otype, 1);
	FORWARD(mpi_get_, put_t, (obuf, ocount, otype, target, tdisp, tcount, ttype, win, ierr));
}

/* Rput and Rget: Put and Get with a request */
#define F_RMA_REQ(NAME, GET)                                                                       \
	API void NAME(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount,      \
	              F *ttype, F *win, F *req, F *ierr);                                          \
	API void NAME(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount,      \
	              F *ttype, F *win, F *req, F *ierr)                                           \
	{                                                                                          \
		if (fon())                                                                         \
			fcount_rma(win, target, ocount, otype, GET);                               \
		FORWARD(NAME, rput_t,                                                              \
		        (obuf, ocount, otype, target, tdisp, tcount, ttype, win, req, ierr));      \
	}

F_RMA_REQ(mpi_rput_, 0)
F_RMA_REQ(mpi_rget_, 1)

API void mpi_accumulate_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount,
                         F *ttype, F *op, F *win, F *ierr);
API void mpi_accumulate_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount,
                         F *ttype, F *op, F *win, F *ierr)
{
	if (fon())
		fcount_rma(win, target, ocount, otype, 0);
	FORWARD(mpi_accumulate_, acc_t,
	        (obuf, ocount, otype, target, tdisp, tcount, ttype, op, win, ierr));
}

API void mpi_raccumulate_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount,
                          F *ttype, F *op, F *win, F *req, F *ierr);
API void mpi_raccumulate_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount,
                          F *ttype, F *op, F *win, F *req, F *ierr)
{
	if (fon())
		fcount_rma(win, target, ocount, otype, 0);
	FORWARD(mpi_raccumulate_, __typeof__(&mpi_raccumulate_),
	        (obuf, ocount, otype, target, tdisp, tcount, ttype, op, win, req, ierr));
}

/* origin data to the target, the result back: as MPI_Get_accumulate in C */
static void fcount_rma_both(const F *win, const F *target, const F *ocount, const F *otype,
                            const F *rcount, const F *rtype)
{
	fcount_rma(win, target, ocount, otype, 0);
	fcount_rma(win, target, rcount, rtype, 1);
}

API void mpi_get_accumulate_(void *obuf, F *ocount, F *otype, void *rbuf, F *rcount, F *rtype,
                             F *target, MPI_Aint *tdisp, F *tcount, F *ttype, F *op, F *win,
                             F *ierr);
API void mpi_get_accumulate_(void *obuf, F *ocount, F *otype, void *rbuf, F *rcount, F *rtype,
                             F *target, MPI_Aint *tdisp, F *tcount, F *ttype, F *op, F *win,
                             F *ierr)
{
	if (fon())
		fcount_rma_both(win, target, ocount, otype, rcount, rtype);
	FORWARD(mpi_get_accumulate_, __typeof__(&mpi_get_accumulate_),
	        (obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount, ttype, op, win,
	         ierr));
}

API void mpi_rget_accumulate_(void *obuf, F *ocount, F *otype, void *rbuf, F *rcount, F *rtype,
                              F *target, MPI_Aint *tdisp, F *tcount, F *ttype, F *op, F *win,
                              F *req, F *ierr);
API void mpi_rget_accumulate_(void *obuf, F *ocount, F *otype, void *rbuf, F *rcount, F *rtype,
                              F *target, MPI_Aint *tdisp, F *tcount, F *ttype, F *op, F *win,
                              F *req, F *ierr)
{
	if (fon())
		fcount_rma_both(win, target, ocount, otype, rcount, rtype);
	FORWARD(mpi_rget_accumulate_, __typeof__(&mpi_rget_accumulate_),
	        (obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount, ttype, op, win,
	         req, ierr));
}

/* one element of type each way (the compare value is not counted) */
static const F one_elem = 1;

API void mpi_fetch_and_op_(void *obuf, void *rbuf, F *type, F *target, MPI_Aint *tdisp, F *op,
                           F *win, F *ierr);
API void mpi_fetch_and_op_(void *obuf, void *rbuf, F *type, F *target, MPI_Aint *tdisp, F *op,
                           F *win, F *ierr)
{
	if (fon())
		fcount_rma_both(win, target, &one_elem, type, &one_elem, type);
	FORWARD(mpi_fetch_and_op_, __typeof__(&mpi_fetch_and_op_),
	        (obuf, rbuf, type, target, tdisp, op, win, ierr));
}

API void mpi_compare_and_swap_(void *obuf, void *cbuf, void *rbuf, F *type, F *target,
                               MPI_Aint *tdisp, F *win, F *ierr);
API void mpi_compare_and_swap_(void *obuf, void *cbuf, void *rbuf, F *type, F *target,
                               MPI_Aint *tdisp, F *win, F *ierr)
{
	if (fon())
		fcount_rma_both(win, target, &one_elem, type, &one_elem, type);
	FORWARD(mpi_compare_and_swap_, __typeof__(&mpi_compare_and_swap_),
	        (obuf, cbuf, rbuf, type, target, tdisp, win, ierr));
}

/* ------------------------------------------------------------------------ */
/* Collectives (the model of record_wrap.c)                                  */

static int fcoll(void)
{
	return fon() && tmatch__st.collectives;
}

/* Fortran type handles -> C, n of them (malloc'd; NULL when out of memory) */
static MPI_Datatype *ctypes(const F *ftypes, int n)
{
	MPI_Datatype *t = malloc(((size_t)(n > 0 ? n : 0) + 1) * sizeof(MPI_Datatype));

	for (int i = 0; t && i < n; i++)
		t[i] = MPI_Type_f2c(ftypes[i]);
	return t;
}

/* the receive signature, valid with and without MPI_IN_PLACE */
static void fcount_allgatherv(const F *comm, const F *rcounts, const F *rtype)
{
	MPI_Comm c = MPI_Comm_f2c(*comm);
	int me = 0, inter = 1;

	if (PMPI_Comm_test_inter(c, &inter) == MPI_SUCCESS && !inter &&
	    PMPI_Comm_rank(c, &me) == MPI_SUCCESS)
		tmatch__coll_all(c, fbytes(&rcounts[me], rtype));
}

/* the send signature (MPI_IN_PLACE: not covered) */
static void fcount_alltoallw(const F *comm, const F *scounts, const F *stypes)
{
	MPI_Comm c = MPI_Comm_f2c(*comm);
	int size = 0;
	MPI_Datatype *t;

	if (PMPI_Comm_size(c, &size) != MPI_SUCCESS || !(t = ctypes(stypes, size)))
		return;
	tmatch__coll_w(c, scounts, t);
	free(t);
}

#define WITH_IERR(...)     (__VA_ARGS__, ierr)
#define WITH_REQ_IERR(...) (__VA_ARGS__, req, ierr)

/*
 * The blocking NAME and the non-blocking INAME of one collective, counted
 * alike: COUNT is the model, the variadic part the parameters both share
 * (before the request and ierr), ARGS their names in parentheses.
 */
#define F_COLL_PAIR(NAME, INAME, COUNT, ARGS, ...)                                                 \
	API void NAME(__VA_ARGS__, F *ierr);                                                       \
	API void NAME(__VA_ARGS__, F *ierr)                                                        \
	{                                                                                          \
		if (fcoll())                                                                       \
			COUNT;                                                                     \
		FORWARD(NAME, __typeof__(&NAME), WITH_IERR ARGS);                                  \
	}                                                                                          \
	API void INAME(__VA_ARGS__, F *req, F *ierr);                                              \
	API void INAME(__VA_ARGS__, F *req, F *ierr)                                               \
	{                                                                                          \
		if (fcoll())                                                                       \
			COUNT;                                                                     \
		FORWARD(INAME, __typeof__(&INAME), WITH_REQ_IERR ARGS);                            \
	}

F_COLL_PAIR(mpi_barrier_, mpi_ibarrier_, tmatch__coll_barrier(MPI_Comm_f2c(*comm)), (comm), F *comm)
F_COLL_PAIR(mpi_bcast_, mpi_ibcast_,
            tmatch__coll_bcast(MPI_Comm_f2c(*comm), *root, fbytes(count, type)),
            (buf, count, type, root, comm), void *buf, F *count, F *type, F *root, F *comm)
F_COLL_PAIR(mpi_reduce_, mpi_ireduce_,
            tmatch__coll_to_root(MPI_Comm_f2c(*comm), *root, fbytes(count, type)),
            (sbuf, rbuf, count, type, op, root, comm), void *sbuf, void *rbuf, F *count, F *type,
            F *op, F *root, F *comm)
F_COLL_PAIR(mpi_allreduce_, mpi_iallreduce_,
            tmatch__coll_all(MPI_Comm_f2c(*comm), fbytes(count, type)),
            (sbuf, rbuf, count, type, op, comm), void *sbuf, void *rbuf, F *count, F *type, F *op,
            F *comm)
F_COLL_PAIR(mpi_gather_, mpi_igather_,
            tmatch__coll_to_root(MPI_Comm_f2c(*comm), *root, fbytes(scount, stype)),
            (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), void *sbuf, F *scount, F *stype,
            void *rbuf, F *rcount, F *rtype, F *root, F *comm)
F_COLL_PAIR(mpi_scatter_, mpi_iscatter_,
            tmatch__coll_bcast(MPI_Comm_f2c(*comm), *root, fbytes(scount, stype)),
            (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), void *sbuf, F *scount, F *stype,
            void *rbuf, F *rcount, F *rtype, F *root, F *comm)
/* allgather and alltoall: the receive signature, valid with and without MPI_IN_PLACE */
F_COLL_PAIR(mpi_allgather_, mpi_iallgather_,
            tmatch__coll_all(MPI_Comm_f2c(*comm), fbytes(rcount, rtype)),
            (sbuf, scount, stype, rbuf, rcount, rtype, comm), void *sbuf, F *scount, F *stype,
            void *rbuf, F *rcount, F *rtype, F *comm)
F_COLL_PAIR(mpi_alltoall_, mpi_ialltoall_,
            tmatch__coll_all(MPI_Comm_f2c(*comm), fbytes(rcount, rtype)),
            (sbuf, scount, stype, rbuf, rcount, rtype, comm), void *sbuf, F *scount, F *stype,
            void *rbuf, F *rcount, F *rtype, F *comm)
F_COLL_PAIR(mpi_gatherv_, mpi_igatherv_,
            tmatch__coll_to_root(MPI_Comm_f2c(*comm), *root, fbytes(scount, stype)),
            (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm), void *sbuf, F *scount,
            F *stype, void *rbuf, F *rcounts, F *displs, F *rtype, F *root, F *comm)
F_COLL_PAIR(mpi_scatterv_, mpi_iscatterv_,
            tmatch__coll_scatterv(MPI_Comm_f2c(*comm), *root, scounts, MPI_Type_f2c(*stype)),
            (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm), void *sbuf, F *scounts,
            F *displs, F *stype, void *rbuf, F *rcount, F *rtype, F *root, F *comm)
F_COLL_PAIR(mpi_allgatherv_, mpi_iallgatherv_, fcount_allgatherv(comm, rcounts, rtype),
            (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm), void *sbuf, F *scount,
            F *stype, void *rbuf, F *rcounts, F *displs, F *rtype, F *comm)
/* MPI_IN_PLACE in ALLTOALLV and ALLTOALLW: the send counts are used (not covered) */
F_COLL_PAIR(mpi_alltoallv_, mpi_ialltoallv_,
            tmatch__coll_v(MPI_Comm_f2c(*comm), scounts, MPI_Type_f2c(*stype)),
            (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm), void *sbuf,
            F *scounts, F *sdispls, F *stype, void *rbuf, F *rcounts, F *rdispls, F *rtype, F *comm)
F_COLL_PAIR(mpi_alltoallw_, mpi_ialltoallw_, fcount_alltoallw(comm, scounts, stypes),
            (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm), void *sbuf,
            F *scounts, F *sdispls, F *stypes, void *rbuf, F *rcounts, F *rdispls, F *rtypes,
            F *comm)
F_COLL_PAIR(mpi_reduce_scatter_, mpi_ireduce_scatter_,
            tmatch__coll_v(MPI_Comm_f2c(*comm), rcounts, MPI_Type_f2c(*type)),
            (sbuf, rbuf, rcounts, type, op, comm), void *sbuf, void *rbuf, F *rcounts, F *type,
            F *op, F *comm)
F_COLL_PAIR(mpi_reduce_scatter_block_, mpi_ireduce_scatter_block_,
            tmatch__coll_all(MPI_Comm_f2c(*comm), fbytes(rcount, type)),
            (sbuf, rbuf, rcount, type, op, comm), void *sbuf, void *rbuf, F *rcount, F *type, F *op,
            F *comm)
F_COLL_PAIR(mpi_scan_, mpi_iscan_, tmatch__coll_scan(MPI_Comm_f2c(*comm), fbytes(count, type)),
            (sbuf, rbuf, count, type, op, comm), void *sbuf, void *rbuf, F *count, F *type, F *op,
            F *comm)
F_COLL_PAIR(mpi_exscan_, mpi_iexscan_, tmatch__coll_scan(MPI_Comm_f2c(*comm), fbytes(count, type)),
            (sbuf, rbuf, count, type, op, comm), void *sbuf, void *rbuf, F *count, F *type, F *op,
            F *comm)

/* ------------------------------------------------------------------------ */
/* Neighbourhood collectives (counted with point-to-point, as in C)          */

typedef void (*allgather_t)(void *, F *, F *, void *, F *, F *, F *, F *);
/* also the shape of ineighbor_allgather/alltoall and neighbor_allgatherv */
typedef void (*gather_t)(void *, F *, F *, void *, F *, F *, F *, F *, F *);
typedef void (*alltoallv_t)(void *, F *, F *, F *, void *, F *, F *, F *, F *, F *);
typedef void (*inallgatherv_t)(void *, F *, F *, void *, F *, F *, F *, F *, F *, F *);
typedef void (*inalltoallv_t)(void *, F *, F *, F *, void *, F *, F *, F *, F *, F *, F *);
typedef void (*nalltoallw_t)(void *, F *, MPI_Aint *, F *, void *, F *, MPI_Aint *, F *, F *, F *);
typedef void (*inalltoallw_t)(void *, F *, MPI_Aint *, F *, void *, F *, MPI_Aint *, F *, F *, F *,
                              F *);

/* same count and type to every neighbour (allgather, allgatherv, alltoall) */
static void fneighbors(const F *comm, const F *count, const F *type)
{
	if (fon())
		tmatch__neighbors(MPI_Comm_f2c(*comm), *count, MPI_Type_f2c(*type), NULL, NULL);
}

/* per-neighbour counts, and types when ftypes is not NULL (alltoallv, alltoallw) */
static void fneighbors_v(const F *comm, const F *counts, const F *type, const F *ftypes)
{
	MPI_Comm c = MPI_Comm_f2c(*comm);
	const struct tmatch__nbrs *nb;
	MPI_Datatype *types = NULL;

	if (!fon() || !(nb = tmatch__comm_neighbors(c)))
		return;
	if (ftypes && !(types = ctypes(ftypes, nb->n)))
		return;
	tmatch__neighbors(c, 0, type ? MPI_Type_f2c(*type) : MPI_DATATYPE_NULL, counts, types);
	free(types);
}

#define F_NEIGHBOR_SAME(NAME, INAME)                                                               \
	API void NAME(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm,   \
	              F *ierr);                                                                    \
	API void NAME(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm,   \
	              F *ierr)                                                                     \
	{                                                                                          \
		fneighbors(comm, scount, stype);                                                   \
		FORWARD(NAME, allgather_t,                                                         \
		        (sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr));                   \
	}                                                                                          \
	API void INAME(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm,  \
	               F *req, F *ierr);                                                           \
	API void INAME(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm,  \
	               F *req, F *ierr)                                                            \
	{                                                                                          \
		fneighbors(comm, scount, stype);                                                   \
		FORWARD(INAME, gather_t,                                                           \
		        (sbuf, scount, stype, rbuf, rcount, rtype, comm, req, ierr));              \
	}

F_NEIGHBOR_SAME(mpi_neighbor_allgather_, mpi_ineighbor_allgather_)
F_NEIGHBOR_SAME(mpi_neighbor_alltoall_, mpi_ineighbor_alltoall_)

API void mpi_neighbor_allgatherv_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts,
                                  F *displs, F *rtype, F *comm, F *ierr);
API void mpi_neighbor_allgatherv_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts,
                                  F *displs, F *rtype, F *comm, F *ierr)
{
	fneighbors(comm, scount, stype);
	FORWARD(mpi_neighbor_allgatherv_, gather_t,
	        (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, ierr));
}

API void mpi_ineighbor_allgatherv_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts,
                                   F *displs, F *rtype, F *comm, F *req, F *ierr);
API void mpi_ineighbor_allgatherv_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts,
                                   F *displs, F *rtype, F *comm, F *req, F *ierr)
{
	fneighbors(comm, scount, stype);
	FORWARD(mpi_ineighbor_allgatherv_, inallgatherv_t,
	        (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req, ierr));
}

/* alltoallv (one type: TYPE = stype) and alltoallw (TYPES = stypes); the displacements
 * (F for v, MPI_Aint for w) are only passed on */
#define F_NEIGHBOR_V(NAME, INAME, T, IT, TYPE, TYPES)                                              \
	API void NAME(void *sbuf, F *scounts, void *sdispls, F *stype, void *rbuf, F *rcounts,     \
	              void *rdispls, F *rtype, F *comm, F *ierr);                                  \
	API void NAME(void *sbuf, F *scounts, void *sdispls, F *stype, void *rbuf, F *rcounts,     \
	              void *rdispls, F *rtype, F *comm, F *ierr)                                   \
	{                                                                                          \
		fneighbors_v(comm, scounts, TYPE, TYPES);                                          \
		FORWARD(                                                                           \
		    NAME, T,                                                                       \
		    (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, ierr));   \
	}                                                                                          \
	API void INAME(void *sbuf, F *scounts, void *sdispls, F *stype, void *rbuf, F *rcounts,    \
	               void *rdispls, F *rtype, F *comm, F *req, F *ierr);                         \
	API void INAME(void *sbuf, F *scounts, void *sdispls, F *stype, void *rbuf, F *rcounts,    \
	               void *rdispls, F *rtype, F *comm, F *req, F *ierr)                          \
	{                                                                                          \
		fneighbors_v(comm, scounts, TYPE, TYPES);                                          \
		FORWARD(INAME, IT,                                                                 \
		        (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req,  \
		         ierr));                                                                   \
	}

F_NEIGHBOR_V(mpi_neighbor_alltoallv_, mpi_ineighbor_alltoallv_, alltoallv_t, inalltoallv_t, stype,
             NULL)
F_NEIGHBOR_V(mpi_neighbor_alltoallw_, mpi_ineighbor_alltoallw_, nalltoallw_t, inalltoallw_t, NULL,
             stype)

/* ------------------------------------------------------------------------ */
/* mpi_f08                                                                   */

/*
 * The mpi_f08 entry points (`use mpi_f08`: mpi_send_f08_ ...) take what the
 * `use mpi` ones take: a TYPE(MPI_Comm) etc. is the INTEGER handle it holds,
 * TYPE(MPI_Status) has the layout of INTEGER(MPI_STATUS_SIZE), and a left-out
 * optional ierror is a NULL pointer (FORWARD then passes spare_ierr). So each
 * is an alias of the wrapper above, which goes on to the library's `use mpi`
 * entry point: in Open MPI both call the same ompi_*_f function (which calls
 * PMPI_*); in MPICH the `use mpi` ones call MPI_*, whose C wrappers do not
 * count a second time.
 *
 * Open MPI: every mpi_f08 entry point is mpi_<name>_f08_ and calls PMPI_*
 * through ompi_<name>_f, unseen by the C wrappers. MPICH: calls with a choice
 * buffer are mpi_<name>_f08ts_ and call the C MPI_*, which the C wrappers
 * count; the others (init, start, request_free, barrier ...) are
 * mpi_<name>_f08_ and call PMPI_* directly. Aliasing every name covers both.
 */
#define F08(NAME)                                                                                  \
	extern __typeof__(NAME##_) NAME##_f08_                                                     \
	    __attribute__((alias(#NAME "_"), visibility("default")));

F08(mpi_init)
F08(mpi_init_thread)
F08(mpi_send)
F08(mpi_bsend)
F08(mpi_ssend)
F08(mpi_rsend)
F08(mpi_isend)
F08(mpi_ibsend)
F08(mpi_issend)
F08(mpi_irsend)
F08(mpi_send_init)
F08(mpi_bsend_init)
F08(mpi_ssend_init)
F08(mpi_rsend_init)
F08(mpi_recv_init)
F08(mpi_start)
F08(mpi_startall)
F08(mpi_request_free)
F08(mpi_sendrecv)
F08(mpi_sendrecv_replace)
F08(mpi_put)
F08(mpi_rput)
F08(mpi_get)
F08(mpi_rget)
F08(mpi_accumulate)
F08(mpi_get_accumulate)
F08(mpi_raccumulate)
F08(mpi_rget_accumulate)
F08(mpi_fetch_and_op)
F08(mpi_compare_and_swap)
F08(mpi_barrier)
F08(mpi_ibarrier)
F08(mpi_bcast)
F08(mpi_ibcast)
F08(mpi_reduce)
F08(mpi_ireduce)
F08(mpi_allreduce)
F08(mpi_iallreduce)
F08(mpi_gather)
F08(mpi_igather)
F08(mpi_scatter)
F08(mpi_iscatter)
F08(mpi_allgather)
F08(mpi_iallgather)
F08(mpi_alltoall)
F08(mpi_ialltoall)
F08(mpi_gatherv)
F08(mpi_igatherv)
F08(mpi_scatterv)
F08(mpi_iscatterv)
F08(mpi_allgatherv)
F08(mpi_iallgatherv)
F08(mpi_alltoallv)
F08(mpi_ialltoallv)
F08(mpi_alltoallw)
F08(mpi_ialltoallw)
F08(mpi_reduce_scatter)
F08(mpi_ireduce_scatter)
F08(mpi_reduce_scatter_block)
F08(mpi_ireduce_scatter_block)
F08(mpi_scan)
F08(mpi_iscan)
F08(mpi_exscan)
F08(mpi_iexscan)
F08(mpi_neighbor_allgather)
F08(mpi_ineighbor_allgather)
F08(mpi_neighbor_allgatherv)
F08(mpi_ineighbor_allgatherv)
F08(mpi_neighbor_alltoall)
F08(mpi_ineighbor_alltoall)
F08(mpi_neighbor_alltoallv)
F08(mpi_ineighbor_alltoallv)
F08(mpi_neighbor_alltoallw)
F08(mpi_ineighbor_alltoallw)
