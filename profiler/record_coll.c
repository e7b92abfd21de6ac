/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_coll.c - what a collective sends, in world ranks. A PMPI library
 * sees the call, not the messages the MPI library's algorithm sends inside
 * it; the recorder stands them in by the messages of a usual algorithm
 * between the members of the communicator (tmatch__lower: binomial trees,
 * rings, pairwise exchanges). The trace writes them (record_trace.c, on a
 * communicator smaller than the world's) and the profile counts them
 * (coll_edges, on every communicator, the default "wire" model): one
 * lowering, so that a profile places by what a replay of the trace sends.
 * With TREEMATCH_RECORD_COLLECTIVES=logical the profile counts the logical
 * model instead (who must get data from whom, one message per pair; Open
 * MPI's coll monitoring's convention). profiler/README.md documents both.
 */
#include "profiler/record_private.h"

#include <stddef.h>

int tmatch__collv(struct tmatch__coll *c, enum tmatch__coll_kind kind, int root,
                  const int scounts[], MPI_Datatype stype, unsigned long long sbytes,
                  const int rcounts[], MPI_Datatype rtype, unsigned long long rbytes)
{
	*c = tmatch__coll1(kind, root, sbytes, rbytes);
	c->scounts = scounts;
	c->rcounts = rcounts;
	if ((scounts && (PMPI_Type_size(stype, &c->ssz) != MPI_SUCCESS || c->ssz < 0)) ||
	    (rcounts && (PMPI_Type_size(rtype, &c->rsz) != MPI_SUCCESS || c->rsz < 0)))
		return -1;
	return 0;
}

/* Bytes of member m's block: sent (sblock) and received (rblock); 0 without counts. */
static unsigned long long sblock(const struct tmatch__coll *c, int m)
{
	if (!c->scounts || c->scounts[m] <= 0)
		return 0;
	if (c->stypes)
		return tmatch__bytes(c->scounts[m], c->stypes[m]);
	return (unsigned long long)c->scounts[m] * (unsigned)c->ssz;
}

static unsigned long long rblock(const struct tmatch__coll *c, int m)
{
	if (!c->rcounts || c->rcounts[m] <= 0)
		return 0;
	if (c->rtypes)
		return tmatch__bytes(c->rcounts[m], c->rtypes[m]);
	return (unsigned long long)c->rcounts[m] * (unsigned)c->rsz;
}

/* ------------------------------------------------------------------------ */
/* The lowering                                                              */

static void msg(MPI_Comm comm, const struct tmatch__lower_sink *out, int send, int m,
                unsigned long long bytes)
{
	out->msg(out->arg, send, tmatch__comm_to_world(comm, m), bytes);
}

static void exchange(MPI_Comm comm, const struct tmatch__lower_sink *out, int to,
                     unsigned long long sbytes, int from, unsigned long long rbytes)
{
	out->exchange(out->arg, tmatch__comm_to_world(comm, to), sbytes,
	              tmatch__comm_to_world(comm, from), rbytes);
}

/* Binomial trees over the ranks relative to root (as MPICH's). */
static void bcast(MPI_Comm comm, const struct tmatch__lower_sink *out, int me, int n, int root,
                  unsigned long long b)
{
	int rel = (me - root + n) % n, mask = 1;

	while (mask < n) {
		if (rel & mask) {
			msg(comm, out, 0, (rel - mask + root) % n, b);
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (rel + mask < n)
			msg(comm, out, 1, (rel + mask + root) % n, b);
}

static void reduce(MPI_Comm comm, const struct tmatch__lower_sink *out, int me, int n, int root,
                   unsigned long long b)
{
	int rel = (me - root + n) % n;

	for (int mask = 1; mask < n; mask <<= 1) {
		if (rel & mask) {
			msg(comm, out, 1, (rel - mask + root) % n, b);
			break;
		}
		if (rel + mask < n)
			msg(comm, out, 0, (rel + mask + root) % n, b);
	}
}

/* A reduce of `total` to member 0, then member m's block from 0. */
static void reduce_scatter(MPI_Comm comm, const struct tmatch__lower_sink *out,
                           const struct tmatch__coll *c, int me, int n)
{
	int block = c->kind == TMATCH__COLL_REDUCE_SCATTER_BLOCK;
	unsigned long long total = 0;

	for (int m = 0; m < n; m++)
		total += block ? c->rbytes : rblock(c, m);
	reduce(comm, out, me, n, 0, total);
	for (int m = 1; m < n; m++)
		if (me == 0)
			msg(comm, out, 1, m, block ? c->rbytes : rblock(c, m));
		else if (me == m)
			msg(comm, out, 0, 0, block ? c->rbytes : rblock(c, m));
}

int tmatch__lower(MPI_Comm comm, const struct tmatch__coll *c, int me, int n,
                  const struct tmatch__lower_sink *out)
{
	int root = c->root;

	switch (c->kind) {
	case TMATCH__COLL_BARRIER:
	case TMATCH__COLL_ALLREDUCE:
	case TMATCH__COLL_SCAN:
		reduce(comm, out, me, n, 0, c->kind == TMATCH__COLL_BARRIER ? 0 : c->sbytes);
		bcast(comm, out, me, n, 0, c->kind == TMATCH__COLL_BARRIER ? 0 : c->sbytes);
		break;
	case TMATCH__COLL_BCAST:
		bcast(comm, out, me, n, root, c->sbytes);
		break;
	case TMATCH__COLL_REDUCE:
		reduce(comm, out, me, n, root, c->sbytes);
		break;
	case TMATCH__COLL_GATHER:
	case TMATCH__COLL_SCATTER:
		for (int m = 0; m < n; m++) {
			int in = (c->kind == TMATCH__COLL_GATHER) == (me == root);

			if ((me != root && m == root) || (me == root && m != root))
				msg(comm, out, !in, m, in ? c->rbytes : c->sbytes);
		}
		break;
	case TMATCH__COLL_ALLGATHER: /* a ring: n - 1 blocks to the right */
		for (int s = 1; s < n; s++)
			exchange(comm, out, (me + 1) % n, c->sbytes, (me - 1 + n) % n, c->sbytes);
		break;
	case TMATCH__COLL_ALLTOALL: /* pairwise: step s with me + s and me - s */
		for (int s = 1; s < n; s++)
			exchange(comm, out, (me + s) % n, c->sbytes, (me - s + n) % n, c->sbytes);
		break;
	case TMATCH__COLL_ALLTOALLV:
	case TMATCH__COLL_ALLTOALLW:
		for (int s = 1; s < n; s++) {
			int to = (me + s) % n, from = (me - s + n) % n;

			exchange(comm, out, to, sblock(c, to), from, rblock(c, from));
		}
		break;
	case TMATCH__COLL_ALLGATHERV: /* a ring: at step s the block of me - s + 1 goes right */
		for (int s = 1; s < n; s++)
			exchange(comm, out, (me + 1) % n, rblock(c, (me - s + 1 + n) % n),
			         (me - 1 + n) % n, rblock(c, (me - s + n) % n));
		break;
	case TMATCH__COLL_GATHERV:
	case TMATCH__COLL_SCATTERV: {
		int gather = c->kind == TMATCH__COLL_GATHERV;

		for (int m = 0; m < n; m++)
			if (me != root && m == root)
				msg(comm, out, gather, root, gather ? c->sbytes : c->rbytes);
			else if (me == root && m != root)
				msg(comm, out, !gather, m, gather ? rblock(c, m) : sblock(c, m));
		break;
	}
	case TMATCH__COLL_REDUCE_SCATTER:
	case TMATCH__COLL_REDUCE_SCATTER_BLOCK:
		reduce_scatter(comm, out, c, me, n);
		break;
	default:
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Counting: the lowered sends                                               */

struct count_sink {
	int barrier; /* its zero-byte messages are what it is made of: counted */
};

static void count_msg(void *arg, int send, int w, unsigned long long bytes)
{
	const struct count_sink *s = arg;

	if (send && (bytes || s->barrier))
		tmatch__add(TMATCH__COLL, w, 1, bytes);
}

static void count_exchange(void *arg, int to, unsigned long long sbytes, int from,
                           unsigned long long rbytes)
{
	(void)from;
	(void)rbytes;
	count_msg(arg, 1, to, sbytes);
}

/* ------------------------------------------------------------------------ */
/* Counting: the logical model                                               */

static void add(MPI_Comm comm, int m, unsigned long long bytes)
{
	tmatch__add(TMATCH__COLL, tmatch__comm_to_world(comm, m), 1, bytes);
}

/* every other member gets `bytes`, or its own block (per_member; none when
   its count is 0 and skip_empty) */
static void to_all(MPI_Comm comm, const struct tmatch__coll *c, int me, int n,
                   unsigned long long bytes, int per_member, int skip_empty)
{
	for (int m = 0; m < n; m++)
		if (m != me && (!per_member || !skip_empty || (c->scounts && c->scounts[m] > 0)))
			add(comm, m, per_member ? sblock(c, m) : bytes);
}

static void logical(MPI_Comm comm, const struct tmatch__coll *c, int me, int n)
{
	int root = c->root;

	switch (c->kind) {
	case TMATCH__COLL_BARRIER: /* every rank -> 0 and 0 -> every rank */
		if (me != 0)
			add(comm, 0, 0);
		else
			to_all(comm, c, me, n, 0, 0, 0);
		break;
	case TMATCH__COLL_BCAST:
	case TMATCH__COLL_SCATTER:
		if (me == root)
			to_all(comm, c, me, n, c->sbytes, 0, 0);
		break;
	case TMATCH__COLL_REDUCE:
	case TMATCH__COLL_GATHER:
	case TMATCH__COLL_GATHERV:
		if (me != root && root >= 0 && root < n)
			add(comm, root, c->sbytes);
		break;
	case TMATCH__COLL_ALLREDUCE:
	case TMATCH__COLL_ALLGATHER:
	case TMATCH__COLL_ALLTOALL:
	case TMATCH__COLL_ALLGATHERV:
		to_all(comm, c, me, n, c->sbytes, 0, 0);
		break;
	case TMATCH__COLL_REDUCE_SCATTER_BLOCK:
		to_all(comm, c, me, n, c->rbytes, 0, 0);
		break;
	case TMATCH__COLL_SCATTERV:
		if (me == root)
			to_all(comm, c, me, n, 0, 1, 1);
		break;
	case TMATCH__COLL_ALLTOALLV: /* the per-peer counts, non-zero ones */
		to_all(comm, c, me, n, 0, 1, 1);
		break;
	case TMATCH__COLL_ALLTOALLW: /* every peer, its count and type */
		to_all(comm, c, me, n, 0, 1, 0);
		break;
	case TMATCH__COLL_REDUCE_SCATTER: { /* member m gets its block rcounts[m] */
		struct tmatch__coll v = *c;

		v.scounts = c->rcounts;
		v.ssz = c->rsz;
		to_all(comm, &v, me, n, 0, 1, 1);
		break;
	}
	case TMATCH__COLL_SCAN: /* i -> i + 1 */
		if (me + 1 < n)
			add(comm, me + 1, c->sbytes);
		break;
	}
}

void tmatch__count_coll(MPI_Comm comm, const struct tmatch__coll *c)
{
	int inter = 1, me = 0, n = 0;

	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
	    PMPI_Comm_size(comm, &n) != MPI_SUCCESS || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
	    n < 2)
		return;
	if (tmatch__st.collectives == TMATCH__COLL_LOGICAL) {
		logical(comm, c, me, n);
	} else if (c->root >= 0 && c->root < n) {
		struct count_sink s = {c->kind == TMATCH__COLL_BARRIER};
		struct tmatch__lower_sink out = {count_msg, count_exchange, &s};

		tmatch__lower(comm, c, me, n, &out);
	}
}

void tmatch__count_collv(MPI_Comm comm, enum tmatch__coll_kind kind, int root, const int scounts[],
                         MPI_Datatype stype, unsigned long long sbytes, const int rcounts[],
                         MPI_Datatype rtype, unsigned long long rbytes)
{
	struct tmatch__coll c;
	int me = -1;

	/* a rooted v-collective's counts (and types) mean something at its root only */
	if ((kind == TMATCH__COLL_GATHERV || kind == TMATCH__COLL_SCATTERV) &&
	    (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS || me != root))
		scounts = rcounts = NULL;
	if (tmatch__collv(&c, kind, root, scounts, stype, sbytes, rcounts, rtype, rbytes) == 0)
		tmatch__count_coll(comm, &c);
}

void tmatch__count_coll1(MPI_Comm comm, enum tmatch__coll_kind kind, int root,
                         unsigned long long sbytes, unsigned long long rbytes)
{
	struct tmatch__coll c = tmatch__coll1(kind, root, sbytes, rbytes);

	tmatch__count_coll(comm, &c);
}
