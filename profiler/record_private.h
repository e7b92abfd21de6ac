/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_private.h - internals shared by the files of the preloadable
 * recorder (libtreematch-record-<abi>.so): record_core.c (counters, rank
 * translation, persistent requests), record_coll.c (what a collective
 * sends: the lowering the trace writes and the profile counts, and the
 * logical model), record_trace.c (the time-independent trace),
 * record_profile.c (set up at MPI_Init; at MPI_Finalize the gather and the
 * YAML writer), record_wrap.c (the C MPI bindings) and record_fortran.c (the
 * gfortran bindings). Calls go one way: wrap, fortran > profile > trace >
 * coll > core.
 *
 * Why there is process-global state here, against STYLE.md: an LD_PRELOAD
 * interposer has no caller that could own a context; MPI itself is the
 * process-global object it observes. The state is one struct, set up once
 * in MPI_Init* and torn down once at MPI_Finalize.
 *
 * Index spaces: `world` = MPI_COMM_WORLD rank; `rank` = rank in the
 * communicator (or window) of the call.
 */
#ifndef TMATCH_PROFILER_RECORD_PRIVATE_H
#define TMATCH_PROFILER_RECORD_PRIVATE_H

#include <mpi.h>
#include <stdint.h>

#define TMATCH_RECORD_VISIBLE __attribute__((visibility("default")))

/* Counters for one kind of traffic: dense up to this many ranks, hashed beyond. */
#define TMATCH__RECORD_DENSE_MAX 65536
/* Distinct peers per rank and kind kept when hashed (more go to `lost`). */
#define TMATCH__RECORD_HASH_CAP (1u << 17)

struct tmatch__cell {
	uint64_t msgs;
	uint64_t bytes;
};

struct tmatch__counters {
	int dense;     /* 1: cells[world]; 0: open addressing on keys[] */
	uint32_t cap;  /* number of cells */
	int32_t *keys; /* hashed only: world rank or -1 */
	struct tmatch__cell *cells;
};

/* Kinds of traffic, each with its own counters. */
enum tmatch__kind {
	TMATCH__P2P = 0,  /* user point-to-point and one-sided puts: this rank -> peer */
	TMATCH__GET = 1,  /* one-sided gets: peer -> this rank */
	TMATCH__COLL = 2, /* collectives (wire or logical, st.collectives): this rank -> peer */
	TMATCH__NKINDS = 3,
};

/* What coll_edges hold (TREEMATCH_RECORD_COLLECTIVES). */
enum tmatch__coll_model {
	TMATCH__COLL_WIRE = 0,    /* default: the messages of tmatch__lower, in world ranks */
	TMATCH__COLL_LOGICAL = 1, /* "logical": one message per pair that depends on another */
	TMATCH__COLL_OFF = 2,     /* "off": no coll_edges (a version 1 profile) */
};

struct tmatch__state {
	int ready;       /* set up (counting active) */
	int finalized;   /* written or given up */
	int atomic;      /* MPI_THREAD_MULTIPLE: counters need atomic adds */
	int collectives; /* enum tmatch__coll_model */
	int world_size;
	int world_rank;
	int comm_keyval; /* translation tables cached on communicators */
	int win_keyval;  /* ... and on windows */
	int nbr_keyval;  /* outgoing neighbours cached on topology communicators */
	int self_keyval; /* MPI_COMM_SELF attribute: its deletion is our finalize */
	MPI_Group world_group;
	double t_init;
	uint64_t lost; /* peers not in MPI_COMM_WORLD, or hash overflow */
	int used_rma;  /* a one-sided call was counted */
	struct tmatch__counters kind[TMATCH__NKINDS];
};

extern struct tmatch__state tmatch__st;

/* Thread-local: > 0 while a Fortran wrapper forwards to the MPI library, so
 * that C wrappers reached from it (MPICH) do not count a second time. */
extern __thread int tmatch__in_fortran __attribute__((tls_model("initial-exec")));

/* Called after a successful MPI_Init / MPI_Init_thread (C or Fortran):
   record_profile.c, which sets up the core (counters, the world's group,
   the keyvals of the cached tables: -1 when out of memory or MPI failed)
   and at MPI_Finalize tears it down. */
void tmatch__record_setup(int provided);
int tmatch__core_init(long dense_max);
void tmatch__core_fini(void);
/* Counting is on (set up, not finalized, not inside a Fortran forward). */
static inline int tmatch__on(void)
{
	return tmatch__st.ready && !tmatch__in_fortran;
}

/*
 * `rank` of `comm` (remote group for an intercommunicator) -> world rank;
 * -1 when not in MPI_COMM_WORLD (a spawned peer) or not translatable.
 */
int tmatch__comm_to_world(MPI_Comm comm, int rank);
int tmatch__win_to_world(MPI_Win win, int rank);

/* A neighbour that is MPI_PROC_NULL (a non-periodic Cartesian border). */
#define TMATCH__NBR_NULL (-2)

/* The outgoing neighbours of a communicator's virtual topology. */
struct tmatch__nbrs {
	int n;       /* number of send blocks of a neighbourhood collective */
	int world[]; /* block i goes to this world rank; -1: outside MPI_COMM_WORLD */
};

/*
 * Outgoing neighbours of `comm`, in the order of the send buffer blocks of
 * the neighbourhood collectives: MPI_Cart: for each dimension, the source and
 * destination of MPI_Cart_shift(d, 1) (TMATCH__NBR_NULL at a non-periodic
 * border); MPI_Graph: MPI_Graph_neighbors; MPI_Dist_graph: the destinations
 * of MPI_Dist_graph_neighbors. Computed once, cached on the communicator
 * (freed with it). NULL when `comm` has no topology or on error.
 */
const struct tmatch__nbrs *tmatch__comm_neighbors(MPI_Comm comm);

/* Add msgs/bytes towards (or, for TMATCH__GET, from) world rank `world`. */
void tmatch__add(enum tmatch__kind kind, int world, uint64_t msgs, uint64_t bytes);

/* Size in bytes of count elements of type (0 when unknown); counts are
   MPI 4's large counts (MPI_Count) or ints. */
static inline uint64_t tmatch__bytes(int64_t count, MPI_Datatype type)
{
	int sz = 0;
	if (count <= 0 || PMPI_Type_size(type, &sz) != MPI_SUCCESS || sz < 0)
		return 0;
	return (uint64_t)count * (uint64_t)sz;
}

/* One point-to-point message of count x type to `rank` of `comm`. */
static inline void tmatch__count_send(MPI_Comm comm, int rank, int64_t count, MPI_Datatype type)
{
	if (rank < 0) /* MPI_PROC_NULL */
		return;
	tmatch__add(TMATCH__P2P, tmatch__comm_to_world(comm, rank), 1, tmatch__bytes(count, type));
}

/*
 * Persistent requests (MPI_Send_init and its kin, MPI_Recv_init): what each
 * handle stands for, from its creation to MPI_Request_free. Each start of
 * a send counts one message; a traced start is written as the isend or
 * irecv it begins.
 */
struct tmatch__persist_def {
	int send;      /* 1: a send, 0: a receive */
	int rank, tag; /* as given: rank may be MPI_PROC_NULL or MPI_ANY_SOURCE, tag MPI_ANY_TAG */
	int world;     /* rank in MPI_COMM_WORLD (when rank >= 0; -1: none) */
	uint64_t bytes;
	MPI_Comm comm; /* a wildcard receive's, to name its source at completion */
};
/* The definition of a request made by one of the *_init calls. */
static inline struct tmatch__persist_def
tmatch__persist_def(int send, MPI_Comm comm, int rank, int tag, int64_t count, MPI_Datatype type)
{
	struct tmatch__persist_def d = {send, rank, tag, -1, tmatch__bytes(count, type), comm};

	if (rank >= 0)
		d.world = tmatch__comm_to_world(comm, rank);
	return d;
}
void tmatch__persist_add(MPI_Request req, const struct tmatch__persist_def *def);
/* 1 with *def (when def is not NULL) when req is a persistent request */
int tmatch__persist_find(MPI_Request req, struct tmatch__persist_def *def);
/* The same at MPI_Start: a send counts one message. */
int tmatch__persist_start(MPI_Request req, struct tmatch__persist_def *def);
void tmatch__persist_forget(MPI_Request req);

/*
 * A collective call as the lowering, the trace and the counters see it:
 * its kind, root (rooted kinds), one size per member (sbytes sent, rbytes
 * received: they differ in gather and scatter) or per-member counts
 * (scounts of ssz-byte elements sent, rcounts received; NULL where the call
 * has none at this rank; alltoallw: the type of each member's block).
 * MPI_Scan and MPI_Exscan (which SMPI's replay lacks) are lowered as an
 * allreduce of their size, MPI_Reduce_scatter_block as a reduce-scatter of
 * rbytes per member.
 */
enum tmatch__coll_kind {
	TMATCH__COLL_BARRIER,
	TMATCH__COLL_BCAST,
	TMATCH__COLL_REDUCE,
	TMATCH__COLL_ALLREDUCE,
	TMATCH__COLL_GATHER,
	TMATCH__COLL_SCATTER,
	TMATCH__COLL_ALLGATHER,
	TMATCH__COLL_ALLTOALL,
	TMATCH__COLL_ALLTOALLV,
	TMATCH__COLL_ALLGATHERV,
	TMATCH__COLL_GATHERV,
	TMATCH__COLL_SCATTERV,
	TMATCH__COLL_REDUCE_SCATTER,
	TMATCH__COLL_SCAN,
	TMATCH__COLL_ALLTOALLW,
	TMATCH__COLL_REDUCE_SCATTER_BLOCK,
};
struct tmatch__coll {
	enum tmatch__coll_kind kind;
	int root;
	unsigned long long sbytes, rbytes;
	const int *scounts, *rcounts;
	int ssz, rsz;
	const MPI_Datatype *stypes, *rtypes; /* alltoallw only */
};
/* A collective of one size per member. */
static inline struct tmatch__coll tmatch__coll1(enum tmatch__coll_kind kind, int root,
                                                unsigned long long sbytes,
                                                unsigned long long rbytes)
{
	struct tmatch__coll c = {.kind = kind, .root = root, .sbytes = sbytes, .rbytes = rbytes};

	return c;
}
/* One with per-member counts (a NULL array has no type to size): -1 when
   a type's size is unknown. */
int tmatch__collv(struct tmatch__coll *c, enum tmatch__coll_kind kind, int root,
                  const int scounts[], MPI_Datatype stype, unsigned long long sbytes,
                  const int rcounts[], MPI_Datatype rtype, unsigned long long rbytes);

/*
 * The lowering (record_coll.c): the messages of a usual algorithm for the
 * collective c on comm, at member me of n, in world ranks - binomial trees
 * (as MPICH's) for bcast and reduce, a reduce then a bcast for allreduce,
 * scan, exscan and barrier (0 bytes), linear gather(v) and scatter(v), a
 * ring for allgather(v), pairwise exchanges for alltoall(v,w), a reduce then
 * a linear scatter for reduce-scatter. The trace writes them (a collective
 * on a smaller communicator) and the profile counts the sends (every
 * communicator): one lowering, so that a profile places by what a replay
 * of the trace sends. -1 for a kind it does not know.
 */
struct tmatch__lower_sink {
	/* a blocking message to (send 1) or from (send 0) world rank w */
	void (*msg)(void *arg, int send, int w, unsigned long long bytes);
	/* a send to `to` and a receive from `from` that proceed together */
	void (*exchange)(void *arg, int to, unsigned long long sbytes, int from,
	                 unsigned long long rbytes);
	void *arg;
};
int tmatch__lower(MPI_Comm comm, const struct tmatch__coll *c, int me, int n,
                  const struct tmatch__lower_sink *out);

/*
 * Count a collective into coll_edges (an intracommunicator's; nothing on
 * an intercommunicator): its lowered sends (wire, the default; zero-byte
 * messages only for a barrier) or, with TREEMATCH_RECORD_COLLECTIVES=
 * logical, the logical model of README.md. Each rank counts what it sends.
 */
void tmatch__count_coll(MPI_Comm comm, const struct tmatch__coll *c);
/* The same from one size per member (tmatch__coll1's arguments). */
void tmatch__count_coll1(MPI_Comm comm, enum tmatch__coll_kind kind, int root,
                         unsigned long long sbytes, unsigned long long rbytes);
/* The same from a call's per-member counts (those of gatherv and scatterv
   read at their root only); nothing when a type's size is unknown. */
void tmatch__count_collv(MPI_Comm comm, enum tmatch__coll_kind kind, int root, const int scounts[],
                         MPI_Datatype stype, unsigned long long sbytes, const int rcounts[],
                         MPI_Datatype rtype, unsigned long long rbytes);
/* Counting collectives is on (set up, in a recorded mode, not in a Fortran forward). */
static inline int tmatch__counting_coll(void)
{
	return tmatch__on() && tmatch__st.collectives != TMATCH__COLL_OFF;
}

/*
 * Neighbourhood collectives (counted as point-to-point, see README.md): one
 * message to each outgoing neighbour i of counts[i] (or count) elements of
 * types[i] (or type); zero-byte blocks and MPI_PROC_NULL are not counted.
 */
void tmatch__neighbors(MPI_Comm comm, int count, MPI_Datatype type, const int counts[],
                       const MPI_Datatype types[]);

/*
 * The time-independent trace (record_trace.c), with TREEMATCH_RECORD_TRACE.
 * A wrapper asks tmatch__tracing(), writes its action before forwarding
 * (tmatch__trace_action, which first writes the compute since the last
 * call) and calls tmatch__trace_done() after. Ranks are world ranks.
 */
#define TMATCH__TRACE_FLOPS 1e9 /* flops per second of computing (1 Gf cores) */
extern int tmatch__tracing_on;
static inline int tmatch__tracing(void)
{
	return tmatch__tracing_on && !tmatch__in_fortran;
}
void tmatch__trace_setup(int provided);
/* MPI_Finalize was entered: the last compute ends now (not when the MPI
   library, inside it, gets to tmatch__trace_finish). */
void tmatch__trace_finalizing(void);
void tmatch__trace_finish(void);
/*
 * record_compute.c: the compute of the rank's finished trace file made to
 * repeat (each repeated phase's least time; the others divided by the
 * inflation the repeated ones showed), the file rewritten. 0, or -1 when it
 * could not be (the file is then kept as measured).
 */
int tmatch__trace_compute_estimate(const char *path);
/* The trace's directory (TREEMATCH_RECORD_TRACE) when this run is traced, else NULL. */
const char *tmatch__trace_dir(void);
void tmatch__trace_action(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The thread's CPU clock, and an action whose compute ends at `at` (a call
   entered then, whose outcome decides the action: written after it). */
double tmatch__trace_clock(void);
void tmatch__trace_action_at(double at, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * After a completion call entered at t0 (MPI_Wait*, MPI_Test*): the k
 * requests it completed, as the handles were before the call, with their
 * statuses (NULL: none asked for), each written as a wait (what the run
 * observed: a replay waits there), or as one waitall when `all`. With none,
 * the call's own time is not counted as compute.
 */
void tmatch__trace_completed(double t0, const MPI_Request done[], const MPI_Status st[], int k,
                             int all);
/*
 * A send and a receive that proceed together (MPI_Sendrecv, the steps of
 * a collective written as messages): isend, irecv and a wait for each,
 * with their tags (SMPI's own sendRecv action has a tag of its own, which
 * a peer's plain send or receive would not match). World ranks; compute
 * counted up to `at` for the first line of a call (*first).
 */
void tmatch__trace_exchange(double at, int to, int stag, unsigned long long sbytes, int from,
                            int rtag, unsigned long long rbytes, int *first);
void tmatch__trace_done(void);
/* A call entered at t0 that the trace does not write and that may wait for
   other ranks (creating a communicator, probing): its time is not compute. */
void tmatch__trace_paused(double t0);
void tmatch__trace_unsupported(const char *what);
/* world rank of `rank` of comm; marks the trace unreplayable when there is none */
int tmatch__trace_world(MPI_Comm comm, int rank);
/*
 * A collective c on comm: 1 when comm has MPI_COMM_WORLD's group (the
 * caller then writes SMPI's own action); on a smaller communicator, 0 after
 * writing the messages of tmatch__lower, which SMPI replays as
 * point-to-point (or nothing: one member, or said unreplayable).
 */
int tmatch__trace_coll(MPI_Comm comm, const struct tmatch__coll *c);
void tmatch__trace_request(MPI_Request req, int src, int dst, int tag);
/*
 * A receive from MPI_ANY_SOURCE or with MPI_ANY_TAG: its line is written
 * with a blank where the source and tag go (returned: its place in the
 * file, -1 when it cannot be), registered with the communicator, and filled
 * in when a completion names what it matched.
 */
long tmatch__trace_irecv_wild(unsigned long long bytes, int *first);
/* MPI_Start(all): the persistent request req (d: its definition, NULL when
   unknown) as the isend or irecv it begins; *first as in trace_exchange. */
void tmatch__trace_started(MPI_Request req, const struct tmatch__persist_def *d, int *first);
/* A request with MPI_PROC_NULL: known, so that its completion writes nothing. */
void tmatch__trace_request_null(MPI_Request req);
/* MPI_Request_free: the request will not be completed where the trace sees it. */
void tmatch__trace_request_freed(MPI_Request req);
void tmatch__trace_request_at(MPI_Request req, int src, int dst, int tag, MPI_Comm comm, long pos);
/*
 * Trace points (record_wrap.c): the actions of one call from its C
 * arguments, written by the C wrappers and by the Fortran ones alike
 * (record_fortran.c), the caller then forwarding and calling
 * tmatch__trace_done(). Sends: _isend returns the peer's world rank for
 * _isend_done (-1: MPI_PROC_NULL, nothing written). Receives: _recv before
 * a receive from a given peer, _recv_matched after a wildcard one (its
 * status); _irecv before (its place for _irecv_done: -2 MPI_PROC_NULL,
 * else the wildcard blank's or -1, *w the peer). _started counts and
 * traces the starts of persistent requests. Collectives: on
 * MPI_COMM_WORLD's group SMPI's own action, else its messages.
 */
void tmatch__tp_send(MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type);
int tmatch__tp_isend(MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type);
void tmatch__tp_isend_done(MPI_Request req, int w, int tag);
void tmatch__tp_recv(MPI_Comm comm, int source, int tag, int count, MPI_Datatype type);
void tmatch__tp_recv_matched(double t0, MPI_Comm comm, const MPI_Status *st, int count,
                             MPI_Datatype type);
long tmatch__tp_irecv(MPI_Comm comm, int source, int tag, int count, MPI_Datatype type, int *w);
void tmatch__tp_irecv_done(MPI_Request req, MPI_Comm comm, int w, int tag, long pos);
void tmatch__tp_started(int n, const MPI_Request reqs[]);
void tmatch__tp_sendrecv(double t0, MPI_Comm comm, unsigned long long sbytes, int dest, int stag,
                         unsigned long long rbytes, int source, const MPI_Status *st);
void tmatch__tp_barrier(MPI_Comm comm);
void tmatch__tp_rooted(MPI_Comm comm, int reduce, int count, MPI_Datatype type, int root);
void tmatch__tp_allreduce(MPI_Comm comm, int count, MPI_Datatype type);
void tmatch__tp_gather(MPI_Comm comm, int scatter, int scount, MPI_Datatype stype, int rcount,
                       MPI_Datatype rtype, int root);
void tmatch__tp_reduce_scatter(MPI_Comm comm, const int rcounts[], MPI_Datatype type);
void tmatch__tp_blocks(MPI_Comm comm, enum tmatch__coll_kind kind, const char *name,
                       unsigned long long sbytes, unsigned long long rbytes);
void tmatch__tp_allgatherv(MPI_Comm comm, const void *sbuf, int scount, MPI_Datatype stype,
                           const int rcounts[], MPI_Datatype rtype);
void tmatch__tp_gatherv(MPI_Comm comm, int scount, MPI_Datatype stype, const int rcounts[],
                        MPI_Datatype rtype, int root);
void tmatch__tp_scatterv(MPI_Comm comm, const int scounts[], MPI_Datatype stype, int rcount,
                         MPI_Datatype rtype, int root);
void tmatch__tp_alltoallv(MPI_Comm comm, const int scounts[], MPI_Datatype stype,
                          const int rcounts[], MPI_Datatype rtype);

/* "c0 c1 ... " in bytes for the world's ranks (counts NULL: zeros); free it.
   NULL when out of memory (the trace is then marked). */
char *tmatch__trace_counts(const int counts[], MPI_Datatype type, unsigned long long *total);

#endif /* TMATCH_PROFILER_RECORD_PRIVATE_H */
