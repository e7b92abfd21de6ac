/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_fortran.c - the gfortran bindings (`use mpi` and mpif.h: the
 * lower-case symbols with one trailing underscore; `use mpi_f08`: the same
 * with _f08_, aliases, see the end) of the calls record_wrap.c counts or
 * traces (receives and completions are traced only).
 *
 * Why they are needed: Open MPI's Fortran layer calls PMPI_X directly, so a
 * C-only PMPI tool sees nothing of a Fortran program. MPICH's Fortran layer
 * calls MPI_X, which would reach our C wrappers a second time: while a
 * Fortran wrapper forwards, tmatch__in_fortran is raised and the C wrappers
 * neither count nor trace. The real Fortran entry point is found with
 * dlsym(RTLD_NEXT, name), once per symbol. The trace goes through
 * record_wrap.c's trace points, given the handles converted to C; a status
 * the program ignores is replaced by ours when the trace needs it.
 *
 * Not covered: MPI_IN_PLACE in Fortran MPI_(I)ALLTOALLV/W (the send counts
 * are used; in the trace too) and at a gather's root (its send size).
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

/* Raised by an mpi_f08 "ts" entry point (mpi_send_f08ts_: each choice
   buffer a Fortran descriptor, passed on untouched) around its call of the
   wrapper it shares with `use mpi`: that wrapper then forwards to the
   library's ts entry point. */
static __thread int fwd_ts;

/* Declare the pointer type T, forward to the real NAME (or NAME's ts entry
   point, see fwd_ts) with ARGS. */
#define FORWARD(NAME, T, ARGS)                                                                     \
	do {                                                                                       \
		static void *slot, *slot_ts;                                                       \
		int ts_ = fwd_ts;                                                                  \
		T real;                                                                            \
		fwd_ts = 0;                                                                        \
		real = (T)(ts_ ? next_fn(#NAME "f08ts_", &slot_ts) : next_fn(#NAME, &slot));       \
		if (!ierr)                                                                         \
			ierr = &spare_ierr;                                                        \
		tmatch__in_fortran++;                                                              \
		real ARGS;                                                                         \
		tmatch__in_fortran--;                                                              \
	} while (0)

/* NAME's mpi_f08 ts entry point (NAMEf08ts_: mpi_send_ -> mpi_send_f08ts_),
   PARAMS and ARGS those of NAME: the wrapper of NAME, forwarding to the
   library's own ts entry point. Open MPI 6's mpi_f08 has only these for
   the calls with a buffer (they call PMPI_* directly); MPICH's call the C
   MPI_*, which the C wrappers then leave to this one. */
#define F08TS(NAME, PARAMS, ARGS)                                                                  \
	API void NAME##f08ts_ PARAMS;                                                              \
	API void NAME##f08ts_ PARAMS                                                               \
	{                                                                                          \
		fwd_ts = 1;                                                                        \
		NAME ARGS;                                                                         \
		fwd_ts = 0;                                                                        \
	}

/* A call the trace does not hold (as its C binding): said at finalize. */
#define FUNTRACED(NAME)                                                                            \
	do {                                                                                       \
		if (tmatch__tracing())                                                             \
			tmatch__trace_unsupported(#NAME);                                          \
	} while (0)

static int fon(void)
{
	return tmatch__st.ready && !tmatch__in_fortran;
}

/*
 * Fortran statuses: a call the caller asked for none (MPI_STATUS_IGNORE,
 * MPI_STATUSES_IGNORE) gets ours when the trace needs what it matched;
 * FSTAT integers each, the layout of MPI_Status (MPI_Status_f2c reads it).
 */
#define FSTAT     ((int)((sizeof(MPI_Status) + sizeof(F) - 1) / sizeof(F)))
#define FSTAT_MAX 16
_Static_assert(FSTAT <= FSTAT_MAX, "a Fortran status fits FSTAT_MAX integers");

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

/* the end of the trace's last compute (as MPI_Finalize in record_wrap.c) */
API void mpi_finalize_(F *ierr);
API void mpi_finalize_(F *ierr)
{
	if (tmatch__tracing())
		tmatch__trace_finalizing();
	FORWARD(mpi_finalize_, init_t, (ierr));
}

/* ------------------------------------------------------------------------ */
/* Calls not traced that wait for other ranks: not compute (record_wrap.c)  */

#define F_PAUSED(NAME, ARGS, ...)                                                                  \
	API void NAME(__VA_ARGS__, F *ierr);                                                       \
	API void NAME(__VA_ARGS__, F *ierr)                                                        \
	{                                                                                          \
		double t0_ = tmatch__tracing() ? tmatch__trace_clock() : -1;                       \
		FORWARD(NAME, __typeof__(&NAME), WITH_IERR ARGS);                                  \
		if (t0_ >= 0)                                                                      \
			tmatch__trace_paused(t0_);                                                 \
	}

#define WITH_IERR(...) (__VA_ARGS__, ierr)

F_PAUSED(mpi_comm_split_, (comm, color, key, out), F *comm, F *color, F *key, F *out)
F_PAUSED(mpi_comm_split_type_, (comm, type, key, info, out), F *comm, F *type, F *key, F *info,
         F *out)
F_PAUSED(mpi_comm_dup_, (comm, out), F *comm, F *out)
F_PAUSED(mpi_comm_create_, (comm, group, out), F *comm, F *group, F *out)
F_PAUSED(mpi_cart_create_, (comm, ndims, dims, periods, reorder, out), F *comm, F *ndims, F *dims,
         F *periods, F *reorder, F *out)
F_PAUSED(mpi_cart_sub_, (comm, remain, out), F *comm, F *remain, F *out)
F_PAUSED(mpi_probe_, (source, tag, comm, status), F *source, F *tag, F *comm, F *status)
F_PAUSED(mpi_iprobe_, (source, tag, comm, flag, status), F *source, F *tag, F *comm, F *flag,
         F *status)

/* ------------------------------------------------------------------------ */
/* Point-to-point                                                            */

typedef void (*send_t)(void *, F *, F *, F *, F *, F *, F *);
typedef void (*isend_t)(void *, F *, F *, F *, F *, F *, F *, F *);

#define F_BLOCKING(NAME)                                                                           \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr);            \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)             \
	{                                                                                          \
		int traced_ = tmatch__tracing();                                                   \
		if (fon())                                                                         \
			fcount_send(comm, dest, count, type);                                      \
		if (traced_)                                                                       \
			tmatch__tp_send(MPI_Comm_f2c(*comm), *dest, *tag, *count,                  \
			                MPI_Type_f2c(*type));                                      \
		FORWARD(NAME, send_t, (buf, count, type, dest, tag, comm, ierr));                  \
		if (traced_)                                                                       \
			tmatch__trace_done();                                                      \
	}                                                                                          \
	F08TS(NAME, (void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr),             \
	      (buf, count, type, dest, tag, comm, ierr))

#define F_NONBLOCKING(NAME)                                                                        \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr);    \
	API void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)     \
	{                                                                                          \
		int traced_ = tmatch__tracing(), w_ = -1;                                          \
		if (fon())                                                                         \
			fcount_send(comm, dest, count, type);                                      \
		if (traced_)                                                                       \
			w_ = tmatch__tp_isend(MPI_Comm_f2c(*comm), *dest, *tag, *count,            \
			                      MPI_Type_f2c(*type));                                \
		FORWARD(NAME, isend_t, (buf, count, type, dest, tag, comm, req, ierr));            \
		if (traced_ && *ierr == MPI_SUCCESS)                                               \
			tmatch__tp_isend_done(MPI_Request_f2c(*req), w_, *tag);                    \
		if (traced_ && w_ != -1)                                                           \
			tmatch__trace_done();                                                      \
	}                                                                                          \
	F08TS(NAME, (void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr),     \
	      (buf, count, type, dest, tag, comm, req, ierr))

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
	}                                                                                          \
	F08TS(NAME, (void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr),     \
	      (buf, count, type, dest, tag, comm, req, ierr))

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

/* Starts of persistent requests: counted and traced as in C (the handles,
   converted, stay the same across the call). */
static int fstarted(F n, const F reqs[])
{
	MPI_Request stack[64], *h = stack;

	if (!fon() || n < 1)
		return 0;
	/* handles: a pointer in Open MPI, an int in MPICH */
	// NOLINTNEXTLINE(bugprone-sizeof-expression)
	if (n > 64 && !(h = malloc(sizeof(*h) * (size_t)n))) {
		FUNTRACED(MPI_Startall(out of memory));
		return 0;
	}
	for (F i = 0; i < n; i++)
		h[i] = MPI_Request_f2c(reqs[i]);
	tmatch__tp_started((int)n, h);
	if (h != stack)
		free(h);
	return tmatch__tracing();
}

API void mpi_start_(F *req, F *ierr);
API void mpi_start_(F *req, F *ierr)
{
	int traced = fstarted(1, req);

	FORWARD(mpi_start_, start_t, (req, ierr));
	if (traced)
		tmatch__trace_done();
}

API void mpi_startall_(F *n, F *reqs, F *ierr);
API void mpi_startall_(F *n, F *reqs, F *ierr)
{
	int traced = fstarted(*n, reqs);

	FORWARD(mpi_startall_, startall_t, (n, reqs, ierr));
	if (traced)
		tmatch__trace_done();
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

/*
 * mpi_f08's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE (many = 1): MPICH's
 * are their own objects, whose addresses mpi.h gives as the pointers
 * MPI_F08_STATUS(ES)_IGNORE (MPI 3; Open MPI 4.1's mpi.h lacks them, and
 * Open MPI's mpi_f08 passes the `use mpi` ones): looked up once, NULL when
 * the library has none.
 */
static const void *f08_ignore(int many)
{
	static void *slot[2];
	static const char *const name[2] = {"MPI_F08_STATUS_IGNORE", "MPI_F08_STATUSES_IGNORE"};
	void **var = __atomic_load_n(&slot[many], __ATOMIC_ACQUIRE);

	if (!var) {
		var = dlsym(RTLD_DEFAULT, name[many]);
		__atomic_store_n(&slot[many], var ? var : (void *)&slot[many], __ATOMIC_RELEASE);
	}
	return var && var != (void **)&slot[many] ? *var : NULL;
}

/* A status (or an array of them) the caller asked not to have. */
static int fignored(const F *status)
{
	return status == MPI_F_STATUS_IGNORE || status == MPI_F_STATUSES_IGNORE ||
	       (status &&
	        ((const void *)status == f08_ignore(0) || (const void *)status == f08_ignore(1)));
}

/* The caller's status, or ours when it asked for none. */
static F *fstatus(F *status, F own[FSTAT_MAX])
{
	return fignored(status) ? own : status;
}

/* After a Fortran sendrecv entered at t0 (tracing): as in C. */
static void fsendrecv_done(double t0, const F *comm, const F *dest, const F *stag, uint64_t sbytes,
                           const F *src, uint64_t rbytes, const F *status)
{
	MPI_Status st;

	MPI_Status_f2c(status, &st);
	tmatch__tp_sendrecv(t0, MPI_Comm_f2c(*comm), sbytes, *dest, *stag, rbytes, *src, &st);
}

API void mpi_sendrecv_(void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount,
                       F *rtype, F *src, F *rtag, F *comm, F *status, F *ierr);
API void mpi_sendrecv_(void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount,
                       F *rtype, F *src, F *rtag, F *comm, F *status, F *ierr)
{
	int traced = tmatch__tracing();
	double t0 = traced ? tmatch__trace_clock() : 0;
	F own[FSTAT_MAX] = {0}, *st = traced ? fstatus(status, own) : status;

	if (fon())
		fcount_send(comm, dest, scount, stype);
	FORWARD(mpi_sendrecv_, sendrecv_t,
	        (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, st, ierr));
	if (traced && *ierr == MPI_SUCCESS)
		fsendrecv_done(t0, comm, dest, stag, fbytes(scount, stype), src,
		               fbytes(rcount, rtype), st);
	if (traced)
		tmatch__trace_done();
}

API void mpi_sendrecv_replace_(void *buf, F *count, F *type, F *dest, F *stag, F *src, F *rtag,
                               F *comm, F *status, F *ierr);
API void mpi_sendrecv_replace_(void *buf, F *count, F *type, F *dest, F *stag, F *src, F *rtag,
                               F *comm, F *status, F *ierr)
{
	int traced = tmatch__tracing();
	double t0 = traced ? tmatch__trace_clock() : 0;
	F own[FSTAT_MAX] = {0}, *st = traced ? fstatus(status, own) : status;

	if (fon())
		fcount_send(comm, dest, count, type);
	FORWARD(mpi_sendrecv_replace_, sendrecv_replace_t,
	        (buf, count, type, dest, stag, src, rtag, comm, st, ierr));
	if (traced && *ierr == MPI_SUCCESS)
		fsendrecv_done(t0, comm, dest, stag, fbytes(count, type), src, fbytes(count, type),
		               st);
	if (traced)
		tmatch__trace_done();
}

/* ------------------------------------------------------------------------ */
/* Receives and completions: traced only (nothing to count), as in C         */

typedef void (*recv_t)(void *, F *, F *, F *, F *, F *, F *, F *);

API void mpi_recv_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *status, F *ierr);
API void mpi_recv_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *status, F *ierr)
{
	int traced = tmatch__tracing(), wild = *src == MPI_ANY_SOURCE || *tag == MPI_ANY_TAG;
	double t0 = traced ? tmatch__trace_clock() : 0;
	F own[FSTAT_MAX] = {0}, *st = traced && wild ? fstatus(status, own) : status;

	if (traced && !wild)
		tmatch__tp_recv(MPI_Comm_f2c(*comm), *src, *tag, *count, MPI_Type_f2c(*type));
	FORWARD(mpi_recv_, recv_t, (buf, count, type, src, tag, comm, st, ierr));
	if (traced && wild && *ierr == MPI_SUCCESS) {
		MPI_Status cst;

		MPI_Status_f2c(st, &cst);
		tmatch__tp_recv_matched(t0, MPI_Comm_f2c(*comm), &cst, *count, MPI_Type_f2c(*type));
	}
	if (traced)
		tmatch__trace_done();
}

API void mpi_irecv_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *req, F *ierr);
API void mpi_irecv_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *req, F *ierr)
{
	int traced = tmatch__tracing(), w = -1;
	long pos = traced ? tmatch__tp_irecv(MPI_Comm_f2c(*comm), *src, *tag, *count,
	                                     MPI_Type_f2c(*type), &w)
	                  : -2;

	FORWARD(mpi_irecv_, isend_t, (buf, count, type, src, tag, comm, req, ierr));
	if (traced && *ierr == MPI_SUCCESS)
		tmatch__tp_irecv_done(MPI_Request_f2c(*req), MPI_Comm_f2c(*comm), w, *tag, pos);
	if (traced && pos != -2)
		tmatch__trace_done();
}

/*
 * A completion call: the n handles as C handles before it, the statuses it
 * fills (the caller's, or ours when it asked for none), then what it
 * completed written by tmatch__trace_completed, as in C.
 */
struct fdone {
	MPI_Request hs[64], *h;
	F ss[4 * FSTAT_MAX], *st; /* the statuses the call fills: n, or one */
	int st_ours, n;
	double t0;
};

static int fdone_begin(struct fdone *d, int n, const F reqs[], F *statuses, int nst)
{
	int ignore = fignored(statuses);
	size_t need = (size_t)(nst > 0 ? nst : 1) * FSTAT;

	d->n = n > 0 ? n : 0;
	d->h = d->n <= 64 ? d->hs : malloc(sizeof(MPI_Request) * (size_t)d->n);
	d->st_ours = ignore && need > sizeof(d->ss) / sizeof(F);
	d->st = !ignore ? statuses : d->st_ours ? malloc(sizeof(F) * need) : d->ss;
	if (!d->h || !d->st) {
		FUNTRACED(a Fortran completion call(out of memory));
		if (d->h != d->hs)
			free(d->h);
		if (d->st_ours)
			free(d->st);
		return -1;
	}
	for (int i = 0; i < d->n; i++)
		d->h[i] = MPI_Request_f2c(reqs[i]);
	d->t0 = tmatch__trace_clock();
	return 0;
}

/* The call completed `count` requests (MPI_UNDEFINED: none): handle
   h[idx[j] - 1] (Fortran's indices; NULL: j) with status j; `all`: a
   waitall's. */
static void fdone_end(struct fdone *d, int ok, int count, const F idx[], int all)
{
	MPI_Request hs[64], *h = hs;
	MPI_Status cs[64], *c = cs;
	int k = ok && count != MPI_UNDEFINED && count > 0 ? count : 0;

	if (k > 64) {
		// NOLINTNEXTLINE(bugprone-sizeof-expression): a handle, pointer or int
		h = malloc(sizeof(*h) * (size_t)k);
		c = malloc(sizeof(*c) * (size_t)k);
	}
	if (!h || !c) {
		FUNTRACED(a Fortran completion call(out of memory));
		k = 0;
	}
	for (int j = 0; j < k; j++) {
		int i = idx ? (int)idx[j] - 1 : j;

		h[j] = i >= 0 && i < d->n ? d->h[i] : MPI_REQUEST_NULL;
		MPI_Status_f2c(d->st + (size_t)j * FSTAT, &c[j]);
	}
	tmatch__trace_completed(d->t0, k ? h : NULL, k ? c : NULL, k, all);
	if (h != hs)
		free(h);
	if (c != cs)
		free(c);
	if (d->h != d->hs)
		free(d->h);
	if (d->st_ours)
		free(d->st);
}

typedef void (*wait_t)(F *, F *, F *);
typedef void (*waitall_t)(F *, F *, F *, F *);
typedef void (*waitany_t)(F *, F *, F *, F *, F *);
typedef void (*test_t)(F *, F *, F *, F *);
typedef void (*testany_t)(F *, F *, F *, F *, F *, F *);

API void mpi_wait_(F *req, F *status, F *ierr);
API void mpi_wait_(F *req, F *status, F *ierr)
{
	struct fdone d;

	if (!tmatch__tracing() || fdone_begin(&d, 1, req, status, 1) < 0) {
		FORWARD(mpi_wait_, wait_t, (req, status, ierr));
		return;
	}
	FORWARD(mpi_wait_, wait_t, (req, d.st, ierr));
	fdone_end(&d, *ierr == MPI_SUCCESS, 1, NULL, 0);
}

API void mpi_waitall_(F *n, F *reqs, F *statuses, F *ierr);
API void mpi_waitall_(F *n, F *reqs, F *statuses, F *ierr)
{
	struct fdone d;

	if (!tmatch__tracing() || fdone_begin(&d, *n, reqs, statuses, *n) < 0) {
		FORWARD(mpi_waitall_, waitall_t, (n, reqs, statuses, ierr));
		return;
	}
	FORWARD(mpi_waitall_, waitall_t, (n, reqs, d.st, ierr));
	fdone_end(&d, *ierr == MPI_SUCCESS, *n, NULL, 1);
}

API void mpi_waitany_(F *n, F *reqs, F *index, F *status, F *ierr);
API void mpi_waitany_(F *n, F *reqs, F *index, F *status, F *ierr)
{
	struct fdone d;

	if (!tmatch__tracing() || fdone_begin(&d, *n, reqs, status, 1) < 0) {
		FORWARD(mpi_waitany_, waitany_t, (n, reqs, index, status, ierr));
		return;
	}
	FORWARD(mpi_waitany_, waitany_t, (n, reqs, index, d.st, ierr));
	fdone_end(&d, *ierr == MPI_SUCCESS, *index == MPI_UNDEFINED ? 0 : 1, index, 0);
}

/* waitsome and testsome: the requests at indices[0..outcount) */
#define F_SOME(NAME)                                                                               \
	API void NAME(F *n, F *reqs, F *outcount, F *indices, F *statuses, F *ierr);               \
	API void NAME(F *n, F *reqs, F *outcount, F *indices, F *statuses, F *ierr)                \
	{                                                                                          \
		struct fdone d;                                                                    \
		if (!tmatch__tracing() || fdone_begin(&d, *n, reqs, statuses, *n) < 0) {           \
			FORWARD(NAME, testany_t, (n, reqs, outcount, indices, statuses, ierr));    \
			return;                                                                    \
		}                                                                                  \
		FORWARD(NAME, testany_t, (n, reqs, outcount, indices, d.st, ierr));                \
		fdone_end(&d, *ierr == MPI_SUCCESS, *outcount, indices, 0);                        \
	}

F_SOME(mpi_waitsome_)
F_SOME(mpi_testsome_)

API void mpi_test_(F *req, F *flag, F *status, F *ierr);
API void mpi_test_(F *req, F *flag, F *status, F *ierr)
{
	struct fdone d;

	if (!tmatch__tracing() || fdone_begin(&d, 1, req, status, 1) < 0) {
		FORWARD(mpi_test_, test_t, (req, flag, status, ierr));
		return;
	}
	FORWARD(mpi_test_, test_t, (req, flag, d.st, ierr));
	fdone_end(&d, *ierr == MPI_SUCCESS, *flag ? 1 : 0, NULL, 0);
}

API void mpi_testall_(F *n, F *reqs, F *flag, F *statuses, F *ierr);
API void mpi_testall_(F *n, F *reqs, F *flag, F *statuses, F *ierr)
{
	struct fdone d;

	if (!tmatch__tracing() || fdone_begin(&d, *n, reqs, statuses, *n) < 0) {
		FORWARD(mpi_testall_, waitany_t, (n, reqs, flag, statuses, ierr));
		return;
	}
	FORWARD(mpi_testall_, waitany_t, (n, reqs, flag, d.st, ierr));
	fdone_end(&d, *ierr == MPI_SUCCESS, *flag ? *n : 0, NULL, 0);
}

API void mpi_testany_(F *n, F *reqs, F *index, F *flag, F *status, F *ierr);
API void mpi_testany_(F *n, F *reqs, F *index, F *flag, F *status, F *ierr)
{
	struct fdone d;

	if (!tmatch__tracing() || fdone_begin(&d, *n, reqs, status, 1) < 0) {
		FORWARD(mpi_testany_, testany_t, (n, reqs, index, flag, status, ierr));
		return;
	}
	FORWARD(mpi_testany_, testany_t, (n, reqs, index, flag, d.st, ierr));
	fdone_end(&d, *ierr == MPI_SUCCESS, *flag && *index != MPI_UNDEFINED ? 1 : 0, index, 0);
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
	FUNTRACED(mpi_put_);
	if (fon())
		fcount_rma(win, target, ocount, otype, 0);
	FORWARD(mpi_put_, put_t, (obuf, ocount, otype, target, tdisp, tcount, ttype, win, ierr));
}

API void mpi_get_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype,
                  F *win, F *ierr);
API void mpi_get_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype,
                  F *win, F *ierr)
{
	FUNTRACED(mpi_get_);
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
		FUNTRACED(NAME);                                                                   \
		if (fon())                                                                         \
			fcount_rma(win, target, ocount, otype, GET);                               \
		FORWARD(NAME, rput_t,                                                              \
		        (obuf, ocount, otype, target, tdisp, tcount, ttype, win, req, ierr));      \
	}                                                                                          \
	F08TS(NAME,                                                                                \
	      (void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype,   \
	       F *win, F *req, F *ierr),                                                           \
	      (obuf, ocount, otype, target, tdisp, tcount, ttype, win, req, ierr))

F_RMA_REQ(mpi_rput_, 0)
F_RMA_REQ(mpi_rget_, 1)

API void mpi_accumulate_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount,
                         F *ttype, F *op, F *win, F *ierr);
API void mpi_accumulate_(void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount,
                         F *ttype, F *op, F *win, F *ierr)
{
	FUNTRACED(mpi_accumulate_);
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
	FUNTRACED(mpi_raccumulate_);
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
	FUNTRACED(mpi_get_accumulate_);
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
	FUNTRACED(mpi_rget_accumulate_);
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
	FUNTRACED(mpi_fetch_and_op_);
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
	FUNTRACED(mpi_compare_and_swap_);
	if (fon())
		fcount_rma_both(win, target, &one_elem, type, &one_elem, type);
	FORWARD(mpi_compare_and_swap_, __typeof__(&mpi_compare_and_swap_),
	        (obuf, cbuf, rbuf, type, target, tdisp, win, ierr));
}

/* ------------------------------------------------------------------------ */
/* Collectives (counted and traced as in record_wrap.c)                      */

static int fcoll(void)
{
	return tmatch__counting_coll();
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
		tmatch__count_collv(c, TMATCH__COLL_ALLGATHERV, 0, NULL, MPI_DATATYPE_NULL,
		                    fbytes(&rcounts[me], rtype), rcounts, MPI_Type_f2c(*rtype), 0);
}

/* the send signature (MPI_IN_PLACE: not covered) */
static void fcount_alltoallw(const F *comm, const F *scounts, const F *stypes)
{
	MPI_Comm c = MPI_Comm_f2c(*comm);
	struct tmatch__coll coll = tmatch__coll1(TMATCH__COLL_ALLTOALLW, 0, 0, 0);
	int size = 0;
	MPI_Datatype *t;

	if (PMPI_Comm_size(c, &size) != MPI_SUCCESS || !(t = ctypes(stypes, size)))
		return;
	coll.scounts = scounts;
	coll.stypes = t;
	tmatch__count_coll(c, &coll);
	free(t);
}

#define WITH_REQ_IERR(...) (__VA_ARGS__, req, ierr)

/*
 * The blocking NAME and the non-blocking INAME of one collective, counted
 * alike: COUNT is the model, the variadic part the parameters both share
 * (before the request and ierr), ARGS their names in parentheses.
 */
#define F_COLL_PAIR(NAME, INAME, COUNT, TRACE, ARGS, ...)                                          \
	API void NAME(__VA_ARGS__, F *ierr);                                                       \
	API void NAME(__VA_ARGS__, F *ierr)                                                        \
	{                                                                                          \
		int traced_ = tmatch__tracing();                                                   \
		if (fcoll())                                                                       \
			COUNT;                                                                     \
		if (traced_)                                                                       \
			TRACE;                                                                     \
		FORWARD(NAME, __typeof__(&NAME), WITH_IERR ARGS);                                  \
		if (traced_)                                                                       \
			tmatch__trace_done();                                                      \
	}                                                                                          \
	API void INAME(__VA_ARGS__, F *req, F *ierr);                                              \
	API void INAME(__VA_ARGS__, F *req, F *ierr)                                               \
	{                                                                                          \
		FUNTRACED(INAME);                                                                  \
		if (fcoll())                                                                       \
			COUNT;                                                                     \
		FORWARD(INAME, __typeof__(&INAME), WITH_REQ_IERR ARGS);                            \
	}                                                                                          \
	F08TS(NAME, (__VA_ARGS__, F * ierr), WITH_IERR ARGS)                                       \
	F08TS(INAME, (__VA_ARGS__, F * req, F * ierr), WITH_REQ_IERR ARGS)

/* The trace points of the blocking ones (record_wrap.c), from Fortran
   arguments: C handles; counts arrays are MPI_Fint, an int. MPI_IN_PLACE
   (a Fortran address here) cannot be told: blocks are sized by the
   receive signature, valid either way, as the counting does. */
#define FC    MPI_Comm_f2c(*comm)
#define FT(T) MPI_Type_f2c(*(T))

F_COLL_PAIR(mpi_barrier_, mpi_ibarrier_, tmatch__count_coll1(FC, TMATCH__COLL_BARRIER, 0, 0, 0),
            tmatch__tp_barrier(FC), (comm), F *comm)
F_COLL_PAIR(mpi_bcast_, mpi_ibcast_,
            tmatch__count_coll1(FC, TMATCH__COLL_BCAST, *root, fbytes(count, type), 0),
            tmatch__tp_rooted(FC, 0, *count, FT(type), *root), (buf, count, type, root, comm),
            void *buf, F *count, F *type, F *root, F *comm)
F_COLL_PAIR(mpi_reduce_, mpi_ireduce_,
            tmatch__count_coll1(FC, TMATCH__COLL_REDUCE, *root, fbytes(count, type), 0),
            tmatch__tp_rooted(FC, 1, *count, FT(type), *root),
            (sbuf, rbuf, count, type, op, root, comm), void *sbuf, void *rbuf, F *count, F *type,
            F *op, F *root, F *comm)
F_COLL_PAIR(mpi_allreduce_, mpi_iallreduce_,
            tmatch__count_coll1(FC, TMATCH__COLL_ALLREDUCE, 0, fbytes(count, type), 0),
            tmatch__tp_allreduce(FC, *count, FT(type)), (sbuf, rbuf, count, type, op, comm),
            void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm)
F_COLL_PAIR(mpi_gather_, mpi_igather_,
            tmatch__count_coll1(FC, TMATCH__COLL_GATHER, *root, fbytes(scount, stype), 0),
            tmatch__tp_gather(FC, 0, *scount, FT(stype), *rcount, FT(rtype), *root),
            (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), void *sbuf, F *scount, F *stype,
            void *rbuf, F *rcount, F *rtype, F *root, F *comm)
F_COLL_PAIR(mpi_scatter_, mpi_iscatter_,
            tmatch__count_coll1(FC, TMATCH__COLL_SCATTER, *root, fbytes(scount, stype), 0),
            tmatch__tp_gather(FC, 1, *scount, FT(stype), *rcount, FT(rtype), *root),
            (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), void *sbuf, F *scount, F *stype,
            void *rbuf, F *rcount, F *rtype, F *root, F *comm)
/* allgather and alltoall: the receive signature, valid with and without MPI_IN_PLACE */
F_COLL_PAIR(mpi_allgather_, mpi_iallgather_,
            tmatch__count_coll1(FC, TMATCH__COLL_ALLGATHER, 0, fbytes(rcount, rtype), 0),
            tmatch__tp_blocks(FC, TMATCH__COLL_ALLGATHER, "allgather", fbytes(rcount, rtype),
                              fbytes(rcount, rtype)),
            (sbuf, scount, stype, rbuf, rcount, rtype, comm), void *sbuf, F *scount, F *stype,
            void *rbuf, F *rcount, F *rtype, F *comm)
F_COLL_PAIR(mpi_alltoall_, mpi_ialltoall_,
            tmatch__count_coll1(FC, TMATCH__COLL_ALLTOALL, 0, fbytes(rcount, rtype), 0),
            tmatch__tp_blocks(FC, TMATCH__COLL_ALLTOALL, "alltoall", fbytes(rcount, rtype),
                              fbytes(rcount, rtype)),
            (sbuf, scount, stype, rbuf, rcount, rtype, comm), void *sbuf, F *scount, F *stype,
            void *rbuf, F *rcount, F *rtype, F *comm)
F_COLL_PAIR(mpi_gatherv_, mpi_igatherv_,
            tmatch__count_coll1(FC, TMATCH__COLL_GATHERV, *root, fbytes(scount, stype), 0),
            tmatch__tp_gatherv(FC, *scount, FT(stype), rcounts, FT(rtype), *root),
            (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm), void *sbuf, F *scount,
            F *stype, void *rbuf, F *rcounts, F *displs, F *rtype, F *root, F *comm)
F_COLL_PAIR(mpi_scatterv_, mpi_iscatterv_,
            tmatch__count_collv(FC, TMATCH__COLL_SCATTERV, *root, scounts, FT(stype), 0, NULL,
                                FT(rtype), 0),
            tmatch__tp_scatterv(FC, scounts, FT(stype), *rcount, FT(rtype), *root),
            (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm), void *sbuf, F *scounts,
            F *displs, F *stype, void *rbuf, F *rcount, F *rtype, F *root, F *comm)
/* the block of each member: its receive count, valid with and without MPI_IN_PLACE */
F_COLL_PAIR(mpi_allgatherv_, mpi_iallgatherv_, fcount_allgatherv(comm, rcounts, rtype),
            tmatch__tp_allgatherv(FC, MPI_IN_PLACE, 0, FT(rtype), rcounts, FT(rtype)),
            (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm), void *sbuf, F *scount,
            F *stype, void *rbuf, F *rcounts, F *displs, F *rtype, F *comm)
/* MPI_IN_PLACE in ALLTOALLV and ALLTOALLW: the send counts are used (not covered) */
F_COLL_PAIR(mpi_alltoallv_, mpi_ialltoallv_,
            tmatch__count_collv(FC, TMATCH__COLL_ALLTOALLV, 0, scounts, FT(stype), 0, rcounts,
                                FT(rtype), 0),
            tmatch__tp_alltoallv(FC, scounts, FT(stype), rcounts, FT(rtype)),
            (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm), void *sbuf,
            F *scounts, F *sdispls, F *stype, void *rbuf, F *rcounts, F *rdispls, F *rtype, F *comm)
F_COLL_PAIR(mpi_alltoallw_, mpi_ialltoallw_, fcount_alltoallw(comm, scounts, stypes),
            FUNTRACED(mpi_alltoallw_),
            (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm), void *sbuf,
            F *scounts, F *sdispls, F *stypes, void *rbuf, F *rcounts, F *rdispls, F *rtypes,
            F *comm)
F_COLL_PAIR(mpi_reduce_scatter_, mpi_ireduce_scatter_,
            tmatch__count_collv(FC, TMATCH__COLL_REDUCE_SCATTER, 0, NULL, FT(type), 0, rcounts,
                                FT(type), 0),
            tmatch__tp_reduce_scatter(FC, rcounts, FT(type)), (sbuf, rbuf, rcounts, type, op, comm),
            void *sbuf, void *rbuf, F *rcounts, F *type, F *op, F *comm)
F_COLL_PAIR(mpi_reduce_scatter_block_, mpi_ireduce_scatter_block_,
            tmatch__count_coll1(FC, TMATCH__COLL_REDUCE_SCATTER_BLOCK, 0, 0, fbytes(rcount, type)),
            FUNTRACED(mpi_reduce_scatter_block_), (sbuf, rbuf, rcount, type, op, comm), void *sbuf,
            void *rbuf, F *rcount, F *type, F *op, F *comm)
/* scan and exscan: SMPI's replay has none, replayed as an allreduce of their size */
F_COLL_PAIR(mpi_scan_, mpi_iscan_,
            tmatch__count_coll1(FC, TMATCH__COLL_SCAN, 0, fbytes(count, type), 0),
            tmatch__tp_allreduce(FC, *count, FT(type)), (sbuf, rbuf, count, type, op, comm),
            void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm)
F_COLL_PAIR(mpi_exscan_, mpi_iexscan_,
            tmatch__count_coll1(FC, TMATCH__COLL_SCAN, 0, fbytes(count, type), 0),
            tmatch__tp_allreduce(FC, *count, FT(type)), (sbuf, rbuf, count, type, op, comm),
            void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm)

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
	FUNTRACED(a Fortran neighbourhood collective);
	if (fon())
		tmatch__neighbors(MPI_Comm_f2c(*comm), *count, MPI_Type_f2c(*type), NULL, NULL);
}

/* per-neighbour counts, and types when ftypes is not NULL (alltoallv, alltoallw) */
static void fneighbors_v(const F *comm, const F *counts, const F *type, const F *ftypes)
{
	MPI_Comm c = MPI_Comm_f2c(*comm);
	const struct tmatch__nbrs *nb;
	MPI_Datatype *types = NULL;

	FUNTRACED(a Fortran neighbourhood collective);
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
	}                                                                                          \
	F08TS(                                                                                     \
	    NAME,                                                                                  \
	    (void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm, F *ierr),  \
	    (sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr))                                \
	F08TS(INAME,                                                                               \
	      (void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm, F *req,  \
	       F *ierr),                                                                           \
	      (sbuf, scount, stype, rbuf, rcount, rtype, comm, req, ierr))

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
	}                                                                                          \
	F08TS(NAME,                                                                                \
	      (void *sbuf, F *scounts, void *sdispls, F *stype, void *rbuf, F *rcounts,            \
	       void *rdispls, F *rtype, F *comm, F *ierr),                                         \
	      (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, ierr))          \
	F08TS(INAME,                                                                               \
	      (void *sbuf, F *scounts, void *sdispls, F *stype, void *rbuf, F *rcounts,            \
	       void *rdispls, F *rtype, F *comm, F *req, F *ierr),                                 \
	      (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req, ierr))

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
 * Open MPI 4 and 5: every mpi_f08 entry point is mpi_<name>_f08_ and calls
 * PMPI_* through ompi_<name>_f, unseen by the C wrappers. Open MPI 6 and
 * MPICH: calls with a choice buffer are mpi_<name>_f08ts_ (F08TS above);
 * the others (init, start, request_free, barrier ...) are mpi_<name>_f08_
 * and call PMPI_* directly. Aliasing every name covers them.
 */
/* The ts entry points of the wrappers written out above (the families'
   are made with them). */
F08TS(mpi_recv_init_, (void *buf, F *count, F *type, F *src, F *tag, F *comm, F *req, F *ierr),
      (buf, count, type, src, tag, comm, req, ierr))
F08TS(mpi_sendrecv_,
      (void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount, F *rtype, F *src,
       F *rtag, F *comm, F *status, F *ierr),
      (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status, ierr))
F08TS(mpi_sendrecv_replace_,
      (void *buf, F *count, F *type, F *dest, F *stag, F *src, F *rtag, F *comm, F *status,
       F *ierr),
      (buf, count, type, dest, stag, src, rtag, comm, status, ierr))
F08TS(mpi_recv_, (void *buf, F *count, F *type, F *src, F *tag, F *comm, F *status, F *ierr),
      (buf, count, type, src, tag, comm, status, ierr))
F08TS(mpi_irecv_, (void *buf, F *count, F *type, F *src, F *tag, F *comm, F *req, F *ierr),
      (buf, count, type, src, tag, comm, req, ierr))
F08TS(mpi_put_,
      (void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype, F *win,
       F *ierr),
      (obuf, ocount, otype, target, tdisp, tcount, ttype, win, ierr))
F08TS(mpi_get_,
      (void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype, F *win,
       F *ierr),
      (obuf, ocount, otype, target, tdisp, tcount, ttype, win, ierr))
F08TS(mpi_accumulate_,
      (void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype, F *op,
       F *win, F *ierr),
      (obuf, ocount, otype, target, tdisp, tcount, ttype, op, win, ierr))
F08TS(mpi_raccumulate_,
      (void *obuf, F *ocount, F *otype, F *target, MPI_Aint *tdisp, F *tcount, F *ttype, F *op,
       F *win, F *req, F *ierr),
      (obuf, ocount, otype, target, tdisp, tcount, ttype, op, win, req, ierr))
F08TS(mpi_get_accumulate_,
      (void *obuf, F *ocount, F *otype, void *rbuf, F *rcount, F *rtype, F *target, MPI_Aint *tdisp,
       F *tcount, F *ttype, F *op, F *win, F *ierr),
      (obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount, ttype, op, win, ierr))
F08TS(mpi_rget_accumulate_,
      (void *obuf, F *ocount, F *otype, void *rbuf, F *rcount, F *rtype, F *target, MPI_Aint *tdisp,
       F *tcount, F *ttype, F *op, F *win, F *req, F *ierr),
      (obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount, ttype, op, win, req, ierr))
F08TS(mpi_fetch_and_op_,
      (void *obuf, void *rbuf, F *type, F *target, MPI_Aint *tdisp, F *op, F *win, F *ierr),
      (obuf, rbuf, type, target, tdisp, op, win, ierr))
F08TS(mpi_compare_and_swap_,
      (void *obuf, void *cbuf, void *rbuf, F *type, F *target, MPI_Aint *tdisp, F *win, F *ierr),
      (obuf, cbuf, rbuf, type, target, tdisp, win, ierr))
F08TS(mpi_neighbor_allgatherv_,
      (void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, F *rtype, F *comm,
       F *ierr),
      (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, ierr))
F08TS(mpi_ineighbor_allgatherv_,
      (void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, F *rtype, F *comm,
       F *req, F *ierr),
      (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req, ierr))

/*
 * MPI 4's large counts in mpi_f08 (mpi_send_c_f08ts_ ...: a count is an
 * INTEGER(MPI_COUNT_KIND), passed by reference): point-to-point and the
 * collectives of one count are counted as the others; a trace does not
 * hold them (said at finalize). The v-collectives', neighbourhood ones' and
 * one-sided large-count forms are not counted.
 */
typedef MPI_Count C;

static void ccount_send(const F *comm, const F *dest, const C *count, const F *type)
{
	tmatch__count_send(MPI_Comm_f2c(*comm), *dest, *count, MPI_Type_f2c(*type));
}

static uint64_t cbytes(const C *count, const F *type)
{
	return tmatch__bytes(*count, MPI_Type_f2c(*type));
}

#define C_SEND(NAME)                                                                               \
	API void NAME(void *buf, C *count, F *type, F *dest, F *tag, F *comm, F *ierr);            \
	API void NAME(void *buf, C *count, F *type, F *dest, F *tag, F *comm, F *ierr)             \
	{                                                                                          \
		FUNTRACED(NAME);                                                                   \
		if (fon())                                                                         \
			ccount_send(comm, dest, count, type);                                      \
		FORWARD(NAME, __typeof__(&(NAME)), (buf, count, type, dest, tag, comm, ierr));     \
	}
#define C_ISEND(NAME, PERSIST)                                                                     \
	API void NAME(void *buf, C *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr);    \
	API void NAME(void *buf, C *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)     \
	{                                                                                          \
		int on_ = fon();                                                                   \
		FUNTRACED(NAME);                                                                   \
		if (on_ && (PERSIST) == -1)                                                        \
			ccount_send(comm, dest, count, type);                                      \
		FORWARD(NAME, __typeof__(&(NAME)),                                                 \
		        (buf, count, type, dest, tag, comm, req, ierr));                           \
		if (on_ && (PERSIST) >= 0 && *ierr == MPI_SUCCESS) {                               \
			struct tmatch__persist_def d_ =                                            \
			    tmatch__persist_def((PERSIST), MPI_Comm_f2c(*comm), *dest, *tag,       \
			                        *count, MPI_Type_f2c(*type));                      \
			tmatch__persist_add(MPI_Request_f2c(*req), &d_);                           \
		}                                                                                  \
	}

/* Each under both names: mpi_send_c_f08ts_ (Open MPI 6, MPICH 5) and
   mpi_send_f08ts_large_ (MPICH 4). */
#define C_SEND_BOTH(STEM) C_SEND(STEM##_c_f08ts_) C_SEND(STEM##_f08ts_large_)
#define C_ISEND_BOTH(STEM, PERSIST)                                                                \
	C_ISEND(STEM##_c_f08ts_, PERSIST) C_ISEND(STEM##_f08ts_large_, PERSIST)

C_SEND_BOTH(mpi_send)
C_SEND_BOTH(mpi_bsend)
C_SEND_BOTH(mpi_ssend)
C_SEND_BOTH(mpi_rsend)
C_ISEND_BOTH(mpi_isend, -1)
C_ISEND_BOTH(mpi_ibsend, -1)
C_ISEND_BOTH(mpi_issend, -1)
C_ISEND_BOTH(mpi_irsend, -1)
C_ISEND_BOTH(mpi_send_init, 1)
C_ISEND_BOTH(mpi_bsend_init, 1)
C_ISEND_BOTH(mpi_ssend_init, 1)
C_ISEND_BOTH(mpi_rsend_init, 1)
C_ISEND_BOTH(mpi_recv_init, 0)
/* receives: nothing to count */
C_ISEND_BOTH(mpi_irecv, -2)

#define C_RECV(NAME)                                                                               \
	API void NAME(void *buf, C *count, F *type, F *src, F *tag, F *comm, F *status, F *ierr);  \
	API void NAME(void *buf, C *count, F *type, F *src, F *tag, F *comm, F *status, F *ierr)   \
	{                                                                                          \
		FUNTRACED(NAME);                                                                   \
		FORWARD(NAME, __typeof__(&(NAME)),                                                 \
		        (buf, count, type, src, tag, comm, status, ierr));                         \
	}
#define C_SENDRECV(NAME)                                                                           \
	API void NAME(void *sbuf, C *scount, F *stype, F *dest, F *stag, void *rbuf, C *rcount,    \
	              F *rtype, F *src, F *rtag, F *comm, F *status, F *ierr);                     \
	API void NAME(void *sbuf, C *scount, F *stype, F *dest, F *stag, void *rbuf, C *rcount,    \
	              F *rtype, F *src, F *rtag, F *comm, F *status, F *ierr)                      \
	{                                                                                          \
		FUNTRACED(NAME);                                                                   \
		if (fon())                                                                         \
			ccount_send(comm, dest, scount, stype);                                    \
		FORWARD(NAME, __typeof__(&(NAME)),                                                 \
		        (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,    \
		         status, ierr));                                                           \
	}
#define C_SENDRECV_REPLACE(NAME)                                                                   \
	API void NAME(void *buf, C *count, F *type, F *dest, F *stag, F *src, F *rtag, F *comm,    \
	              F *status, F *ierr);                                                         \
	API void NAME(void *buf, C *count, F *type, F *dest, F *stag, F *src, F *rtag, F *comm,    \
	              F *status, F *ierr)                                                          \
	{                                                                                          \
		FUNTRACED(NAME);                                                                   \
		if (fon())                                                                         \
			ccount_send(comm, dest, count, type);                                      \
		FORWARD(NAME, __typeof__(&(NAME)),                                                 \
		        (buf, count, type, dest, stag, src, rtag, comm, status, ierr));            \
	}

C_RECV(mpi_recv_c_f08ts_)
C_RECV(mpi_recv_f08ts_large_)
C_SENDRECV(mpi_sendrecv_c_f08ts_)
C_SENDRECV(mpi_sendrecv_f08ts_large_)
C_SENDRECV_REPLACE(mpi_sendrecv_replace_c_f08ts_)
C_SENDRECV_REPLACE(mpi_sendrecv_replace_f08ts_large_)

/* the large-count forms of F_COLL_PAIR's collectives of one count */
#define C_COLL_PAIR(NAME, INAME, COUNT, ARGS, ...)                                                 \
	API void NAME(__VA_ARGS__, F *ierr);                                                       \
	API void NAME(__VA_ARGS__, F *ierr)                                                        \
	{                                                                                          \
		FUNTRACED(NAME);                                                                   \
		if (fcoll())                                                                       \
			COUNT;                                                                     \
		FORWARD(NAME, __typeof__(&(NAME)), WITH_IERR ARGS);                                \
	}                                                                                          \
	API void INAME(__VA_ARGS__, F *req, F *ierr);                                              \
	API void INAME(__VA_ARGS__, F *req, F *ierr)                                               \
	{                                                                                          \
		FUNTRACED(INAME);                                                                  \
		if (fcoll())                                                                       \
			COUNT;                                                                     \
		FORWARD(INAME, __typeof__(&(INAME)), WITH_REQ_IERR ARGS);                          \
	}

/* under both names, as the point-to-point ones */
#define C_COLL_BOTH(STEM, ISTEM, COUNT, ARGS, ...)                                                 \
	C_COLL_PAIR(STEM##_c_f08ts_, ISTEM##_c_f08ts_, COUNT, ARGS, __VA_ARGS__)                   \
	C_COLL_PAIR(STEM##_f08ts_large_, ISTEM##_f08ts_large_, COUNT, ARGS, __VA_ARGS__)

C_COLL_BOTH(mpi_bcast, mpi_ibcast,
            tmatch__count_coll1(FC, TMATCH__COLL_BCAST, *root, cbytes(count, type), 0),
            (buf, count, type, root, comm), void *buf, C *count, F *type, F *root, F *comm)
C_COLL_BOTH(mpi_reduce, mpi_ireduce,
            tmatch__count_coll1(FC, TMATCH__COLL_REDUCE, *root, cbytes(count, type), 0),
            (sbuf, rbuf, count, type, op, root, comm), void *sbuf, void *rbuf, C *count, F *type,
            F *op, F *root, F *comm)
C_COLL_BOTH(mpi_allreduce, mpi_iallreduce,
            tmatch__count_coll1(FC, TMATCH__COLL_ALLREDUCE, 0, cbytes(count, type), 0),
            (sbuf, rbuf, count, type, op, comm), void *sbuf, void *rbuf, C *count, F *type, F *op,
            F *comm)
C_COLL_BOTH(mpi_gather, mpi_igather,
            tmatch__count_coll1(FC, TMATCH__COLL_GATHER, *root, cbytes(scount, stype), 0),
            (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), void *sbuf, C *scount, F *stype,
            void *rbuf, C *rcount, F *rtype, F *root, F *comm)
C_COLL_BOTH(mpi_scatter, mpi_iscatter,
            tmatch__count_coll1(FC, TMATCH__COLL_SCATTER, *root, cbytes(scount, stype), 0),
            (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), void *sbuf, C *scount, F *stype,
            void *rbuf, C *rcount, F *rtype, F *root, F *comm)
C_COLL_BOTH(mpi_allgather, mpi_iallgather,
            tmatch__count_coll1(FC, TMATCH__COLL_ALLGATHER, 0, cbytes(rcount, rtype), 0),
            (sbuf, scount, stype, rbuf, rcount, rtype, comm), void *sbuf, C *scount, F *stype,
            void *rbuf, C *rcount, F *rtype, F *comm)
C_COLL_BOTH(mpi_alltoall, mpi_ialltoall,
            tmatch__count_coll1(FC, TMATCH__COLL_ALLTOALL, 0, cbytes(rcount, rtype), 0),
            (sbuf, scount, stype, rbuf, rcount, rtype, comm), void *sbuf, C *scount, F *stype,
            void *rbuf, C *rcount, F *rtype, F *comm)
C_COLL_BOTH(mpi_reduce_scatter_block, mpi_ireduce_scatter_block,
            tmatch__count_coll1(FC, TMATCH__COLL_REDUCE_SCATTER_BLOCK, 0, 0, cbytes(rcount, type)),
            (sbuf, rbuf, rcount, type, op, comm), void *sbuf, void *rbuf, C *rcount, F *type, F *op,
            F *comm)
C_COLL_BOTH(mpi_scan, mpi_iscan,
            tmatch__count_coll1(FC, TMATCH__COLL_SCAN, 0, cbytes(count, type), 0),
            (sbuf, rbuf, count, type, op, comm), void *sbuf, void *rbuf, C *count, F *type, F *op,
            F *comm)
C_COLL_BOTH(mpi_exscan, mpi_iexscan,
            tmatch__count_coll1(FC, TMATCH__COLL_SCAN, 0, cbytes(count, type), 0),
            (sbuf, rbuf, count, type, op, comm), void *sbuf, void *rbuf, C *count, F *type, F *op,
            F *comm)

#define F08(NAME)                                                                                  \
	extern __typeof__(NAME##_) NAME##_f08_                                                     \
	    __attribute__((alias(#NAME "_"), visibility("default")));

F08(mpi_init)
F08(mpi_init_thread)
F08(mpi_finalize)
F08(mpi_comm_split)
F08(mpi_comm_split_type)
F08(mpi_comm_dup)
F08(mpi_comm_create)
F08(mpi_cart_create)
F08(mpi_cart_sub)
F08(mpi_probe)
F08(mpi_iprobe)
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
F08(mpi_recv)
F08(mpi_irecv)
F08(mpi_wait)
F08(mpi_waitall)
F08(mpi_waitany)
F08(mpi_waitsome)
F08(mpi_test)
F08(mpi_testall)
F08(mpi_testany)
F08(mpi_testsome)
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
