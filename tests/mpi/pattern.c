/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pattern.c - an MPI program with an exactly known communication pattern,
 * for the recorder's end-to-end tests. Needs exactly 4 ranks. The expected
 * profile is written by hand in tests/mpi/pattern*.expected; keep them in
 * step with this file (and with pattern_f.F90, which does the same).
 *
 *   pattern        point-to-point and collectives
 *   pattern rma    the same plus one-sided calls (below)
 *   pattern monitored   without step 10 and collectives_both, for a run
 *                       under Open MPI's monitoring (see
 *                       tests/e2e/test_record.sh)
 *
 * Point-to-point, W = MPI_COMM_WORLD:
 *   1. MPI_Send      r -> r+1: 3 x 100 int          (3 msgs, 1200 B)
 *   2. MPI_Isend     r -> r+2: 2 x 50 double        (2 msgs,  800 B)
 *   3. MPI_Ssend     0 -> 3:   7 char               (1 msg,     7 B)
 *   4. persistent    1 -> 2:   Send_init 16 int, started 5 times (5 msgs, 320 B)
 *   5. MPI_Sendrecv  r -> r-1: 10 int, then Sendrecv_replace 3 double (2 msgs, 64 B)
 *   6. split by r%2, key -r: sub-rank 0 -> 1 (world 2 -> 0, 3 -> 1): 4 x 8 byte
 *      dup of W: 3 -> 0: 1000 byte
 *   7. MPI_Send to MPI_PROC_NULL from 0: not counted
 *   8. derived type contiguous(3, int): 2 -> 1: 2 of them (1 msg, 24 B)
 *   9. MPI_Bsend     3 -> 2: 5 int                  (1 msg, 20 B)
 *  10. neighbourhood collectives, each called blocking and as its I- form
 *      (so every message below twice); counted as point-to-point:
 *      a. Cart 2x2, periods {1, 0}, on a split of W with cart rank c = (w+1)%4:
 *         dimension 0 (periodic, size 2) gives c^2 in both directions (world
 *         w+2), dimension 1 gives c^1 (world 3-w) and MPI_PROC_NULL.
 *         Neighbor_alltoall 3 int, Neighbor_allgather 1 double:
 *         w -> w+2: 2 x 2 x (12 + 8) B (8 msgs, 80 B); w -> 3-w: 4 msgs, 40 B
 *      b. Graph on W, the line 0-1-2-3; Neighbor_allgatherv r+1 int to each
 *         neighbour: 0->1 (2, 8), 1->0, 1->2 (2, 16), 2->1, 2->3 (2, 24), 3->2 (2, 32)
 *      c. Dist_graph on W, destinations {r+1, r-1} (mod 4):
 *         Neighbor_alltoallv: r+1 int to r+1, 2 int to r-1 but 0 from rank 0
 *         (a zero-byte block: not counted): r -> r+1 (2, 8(r+1)), r -> r-1 (2, 16);
 *         Neighbor_alltoallw: 1 double to r+1, 3 int to r-1:
 *         r -> r+1 (2, 16), r -> r-1 (2, 24)
 *      tests/mpi/pattern-neighbor.expected sums them by pair.
 * Collectives: Bcast 10 int from 0, Allreduce 2 double, Gather 1 int to 3,
 * Barrier; then each of these blocking and as its I- form (so twice):
 *   Barrier                        Bcast 5 int from 3
 *   Reduce 3 double to 2           Allreduce 1 int
 *   Gather 2 int to 0              Scatter 3 int from 1
 *   Allgather 1 double             Alltoall 2 int
 *   Gatherv to 1, r+1 int          Scatterv from 2, i+1 int to i
 *   Allgatherv 2 int               Alltoallv i+1 int to i
 *   Alltoallw 1 int to even i, 1 double to odd i
 *   Reduce_scatter counts {1, 2, 1, 2} int, Reduce_scatter_block 3 int
 *   Scan 1 double, Exscan 2 int
 * (tests/mpi/pattern-coll.expected adds them up per pair).
 * RMA (argument "rma"), each call on its own pair of ranks; a get flows
 * target -> origin, the kinds of Get_accumulate both ways. 4 ranks have 12
 * ordered pairs and Get_accumulate needs two more than are left, so it
 * shares 0 <-> 2 with Fetch_and_op, with another size:
 *   fence epoch:   Put 6 int 0 -> 1 (24 B); Get 2 double by 2 from 3 (3 -> 2, 16 B)
 *     Accumulate 7 int 2 -> 3 (28 B)
 *     Get_accumulate by 2 on 0, 3 float: 2 -> 0 and 0 -> 2 (12 B each)
 *   lock_all epoch (request-based calls need a passive target epoch):
 *     Rput 9 char 1 -> 0 (9 B); Rget 3 double by 1 from 2 (2 -> 1, 24 B)
 *     Raccumulate 3 int 1 -> 2 (12 B)
 *     Rget_accumulate by 3 on 0, 2 int: 3 -> 0 and 0 -> 3 (8 B each)
 *     Fetch_and_op by 0 on 2, 1 double: 0 -> 2 and 2 -> 0 (8 B each)
 *     Compare_and_swap by 1 on 3, 1 int: 1 -> 3 and 3 -> 1 (4 B each)
 *   (tests/mpi/pattern-rma.expected adds them to pattern.expected).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "pattern: %s failed\n", what);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

/* The blocking and the non-blocking form of one neighbourhood collective. */
#define BOTH(NAME, INAME, ...)                                                                     \
	do {                                                                                       \
		MPI_Request r_;                                                                    \
		NAME(__VA_ARGS__);                                                                 \
		INAME(__VA_ARGS__, &r_);                                                           \
		MPI_Wait(&r_, MPI_STATUS_IGNORE);                                                  \
	} while (0)

static void neighbors(int rank)
{
	int sbuf[16] = {0}, rbuf[16];
	double d[1] = {0}, dr[4];
	MPI_Comm ring, cart, graph, dist;

	/* a */
	int dims[2] = {2, 2}, periods[2] = {1, 0}, lo, hi;
	MPI_Comm_split(MPI_COMM_WORLD, 0, (rank + 1) % 4, &ring);
	MPI_Cart_create(ring, 2, dims, periods, 0, &cart);
	MPI_Comm_rank(cart, &lo);
	check(lo == (rank + 1) % 4, "cart rank");
	MPI_Cart_shift(cart, 1, 1, &lo, &hi);
	check((lo == MPI_PROC_NULL) != (hi == MPI_PROC_NULL), "cart border");
	BOTH(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, sbuf, 3, MPI_INT, rbuf, 3, MPI_INT,
	     cart);
	BOTH(MPI_Neighbor_allgather, MPI_Ineighbor_allgather, d, 1, MPI_DOUBLE, dr, 1, MPI_DOUBLE,
	     cart);
	MPI_Comm_free(&cart);
	MPI_Comm_free(&ring);

	/* b */
	int index[4] = {1, 3, 5, 6}, edges[6] = {1, 0, 2, 1, 3, 2};
	int deg = rank == 0 || rank == 3 ? 1 : 2, rc[2], rd[2] = {0, 4};
	MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph);
	for (int i = 0; i < deg; i++)
		rc[i] = 1 + edges[index[rank] - deg + i];
	BOTH(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, sbuf, rank + 1, MPI_INT, rbuf, rc,
	     rd, MPI_INT, graph);
	MPI_Comm_free(&graph);

	/* c */
	int up = (rank + 1) % 4, down = (rank + 3) % 4;
	int dst[2] = {up, down}, src[2] = {down, up};
	int sc[2] = {rank + 1, rank == 0 ? 0 : 2}, rcv[2] = {down + 1, up == 0 ? 0 : 2};
	int sd[2] = {0, 4}, rdv[2] = {0, 4};
	int weights[2] = {1, 1};
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, weights, 2, dst, weights,
	                               MPI_INFO_NULL, 0, &dist);
	BOTH(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, sbuf, sc, sd, MPI_INT, rbuf, rcv, rdv,
	     MPI_INT, dist);
	/* what comes back from down (its r+1 block) and up (its r-1 block) is the same */
	int wc[2] = {1, 3};
	MPI_Aint wd[2] = {0, 8};
	MPI_Datatype wt[2] = {MPI_DOUBLE, MPI_INT};
	BOTH(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, sbuf, wc, wd, wt, rbuf, wc, wd, wt,
	     dist);
	MPI_Comm_free(&dist);
}

/* every collective blocking and non-blocking */
static void collectives_both(int rank)
{
	_Alignas(8) int vs[32] = {0}, vr[32];
	double d = 1, dr;
	int inc[4] = {1, 2, 3, 4}, displs[4] = {0, 4, 8, 12}, two[4] = {2, 2, 2, 2};
	int mine[4] = {rank + 1, rank + 1, rank + 1, rank + 1}, rsc[4] = {1, 2, 1, 2};
	int ones[4] = {1, 1, 1, 1}, wd[4] = {0, 8, 16, 24};
	MPI_Datatype st[4] = {MPI_INT, MPI_DOUBLE, MPI_INT, MPI_DOUBLE};
	MPI_Datatype rt[4] = {st[rank], st[rank], st[rank], st[rank]};

	BOTH(MPI_Barrier, MPI_Ibarrier, MPI_COMM_WORLD);
	BOTH(MPI_Bcast, MPI_Ibcast, vs, 5, MPI_INT, 3, MPI_COMM_WORLD);
	BOTH(MPI_Reduce, MPI_Ireduce, vs, vr, 3, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
	BOTH(MPI_Allreduce, MPI_Iallreduce, vs, vr, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	BOTH(MPI_Gather, MPI_Igather, vs, 2, MPI_INT, vr, 2, MPI_INT, 0, MPI_COMM_WORLD);
	BOTH(MPI_Scatter, MPI_Iscatter, vs, 3, MPI_INT, vr, 3, MPI_INT, 1, MPI_COMM_WORLD);
	BOTH(MPI_Allgather, MPI_Iallgather, vs, 1, MPI_DOUBLE, vr, 1, MPI_DOUBLE, MPI_COMM_WORLD);
	BOTH(MPI_Alltoall, MPI_Ialltoall, vs, 2, MPI_INT, vr, 2, MPI_INT, MPI_COMM_WORLD);
	BOTH(MPI_Gatherv, MPI_Igatherv, vs, rank + 1, MPI_INT, vr, inc, displs, MPI_INT, 1,
	     MPI_COMM_WORLD);
	BOTH(MPI_Scatterv, MPI_Iscatterv, vs, inc, displs, MPI_INT, vr, rank + 1, MPI_INT, 2,
	     MPI_COMM_WORLD);
	BOTH(MPI_Allgatherv, MPI_Iallgatherv, vs, 2, MPI_INT, vr, two, displs, MPI_INT,
	     MPI_COMM_WORLD);
	BOTH(MPI_Alltoallv, MPI_Ialltoallv, vs, inc, displs, MPI_INT, vr, mine, displs, MPI_INT,
	     MPI_COMM_WORLD);
	BOTH(MPI_Alltoallw, MPI_Ialltoallw, vs, ones, wd, st, vr, ones, wd, rt, MPI_COMM_WORLD);
	BOTH(MPI_Reduce_scatter, MPI_Ireduce_scatter, vs, vr, rsc, MPI_INT, MPI_SUM,
	     MPI_COMM_WORLD);
	BOTH(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, vs, vr, 3, MPI_INT, MPI_SUM,
	     MPI_COMM_WORLD);
	BOTH(MPI_Scan, MPI_Iscan, &d, &dr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	check(dr == rank + 1, "scan");
	BOTH(MPI_Exscan, MPI_Iexscan, vs, vr, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* The request-based and atomic one-sided calls, on a window of 64 bytes
 * (no two calls on one target touch the same bytes). */
static void rma_passive(int rank, MPI_Win win)
{
	int iv[3] = {1, 2, 3}, ir[3];
	double d = 1, dr, dg[3];
	char cv[9] = "abcdefgh";
	MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
	MPI_Status st[3]; /* gcc warns on MPICH's MPI_STATUSES_IGNORE, (MPI_Status *)1 */

	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		MPI_Rput(cv, 9, MPI_CHAR, 0, 16, 9, MPI_CHAR, win, &req[0]);
		MPI_Rget(dg, 3, MPI_DOUBLE, 2, 32, 3, MPI_DOUBLE, win, &req[1]);
		MPI_Raccumulate(iv, 3, MPI_INT, 2, 0, 3, MPI_INT, MPI_SUM, win, &req[2]);
	}
	if (rank == 3)
		MPI_Rget_accumulate(iv, 2, MPI_INT, ir, 2, MPI_INT, 0, 0, 2, MPI_INT, MPI_SUM, win,
		                    &req[0]);
	if (rank == 0)
		MPI_Fetch_and_op(&d, &dr, MPI_DOUBLE, 2, 16, MPI_SUM, win);
	if (rank == 1)
		MPI_Compare_and_swap(&iv[0], &iv[1], &ir[0], MPI_INT, 3, 32, win);
	MPI_Waitall(3, req, st);
	MPI_Win_unlock_all(win);
}

int main(int argc, char **argv)
{
	int rank, size, rma = argc > 1 && !strcmp(argv[1], "rma");
	int full = !(argc > 1 && !strcmp(argv[1], "monitored"));
	int ibuf[100] = {0}, ibuf2[100];
	double dbuf[2][50] = {{0}}, drecv[2][50];
	MPI_Request reqs[4];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	check(size == 4, "4 ranks");
	int next = (rank + 1) % 4, prev = (rank + 3) % 4, opp = (rank + 2) % 4;

	/* 1 */
	for (int i = 0; i < 3; i++) {
		if (rank % 2 == 0) {
			MPI_Send(ibuf, 100, MPI_INT, next, 1, MPI_COMM_WORLD);
			MPI_Recv(ibuf2, 100, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(ibuf2, 100, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(ibuf, 100, MPI_INT, next, 1, MPI_COMM_WORLD);
		}
	}
	/* 2 */
	for (int i = 0; i < 2; i++) {
		MPI_Irecv(drecv[i], 50, MPI_DOUBLE, opp, 2, MPI_COMM_WORLD, &reqs[2 * i]);
		MPI_Isend(dbuf[i], 50, MPI_DOUBLE, opp, 2, MPI_COMM_WORLD, &reqs[2 * i + 1]);
	}
	MPI_Status sts[4];
	MPI_Waitall(4, reqs, sts);
	/* 3 */
	char text[8] = "abcdefg";
	if (rank == 0)
		MPI_Ssend(text, 7, MPI_CHAR, 3, 3, MPI_COMM_WORLD);
	if (rank == 3)
		MPI_Recv(text, 7, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	/* 4 */
	if (rank == 1 || rank == 2) {
		MPI_Request p;
		if (rank == 1)
			MPI_Send_init(ibuf, 16, MPI_INT, 2, 4, MPI_COMM_WORLD, &p);
		else
			MPI_Recv_init(ibuf2, 16, MPI_INT, 1, 4, MPI_COMM_WORLD, &p);
		for (int i = 0; i < 5; i++) {
			if (i % 2)
				MPI_Start(&p);
			else
				MPI_Startall(1, &p);
			MPI_Wait(&p, MPI_STATUS_IGNORE);
		}
		MPI_Request_free(&p);
	}
	/* 5 */
	MPI_Sendrecv(ibuf, 10, MPI_INT, prev, 5, ibuf2, 10, MPI_INT, next, 5, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
	MPI_Sendrecv_replace(dbuf[0], 3, MPI_DOUBLE, prev, 6, next, 6, MPI_COMM_WORLD,
	                     MPI_STATUS_IGNORE);
	/* 6 */
	MPI_Comm half, dup;
	int hrank;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
	MPI_Comm_rank(half, &hrank);
	check(hrank == (rank < 2 ? 1 : 0), "split order");
	for (int i = 0; i < 4; i++) {
		if (hrank == 0)
			MPI_Send(text, 8, MPI_BYTE, 1, 7, half);
		else
			MPI_Recv(text, 8, MPI_BYTE, 0, 7, half, MPI_STATUS_IGNORE);
	}
	MPI_Comm_free(&half);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	char kb[1000] = {0};
	if (rank == 3)
		MPI_Send(kb, 1000, MPI_BYTE, 0, 8, dup);
	if (rank == 0)
		MPI_Recv(kb, 1000, MPI_BYTE, 3, 8, dup, MPI_STATUS_IGNORE);
	MPI_Comm_free(&dup);
	/* 7 */
	if (rank == 0)
		MPI_Send(ibuf, 100, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD);
	/* 8 */
	MPI_Datatype tri;
	MPI_Type_contiguous(3, MPI_INT, &tri);
	MPI_Type_commit(&tri);
	if (rank == 2)
		MPI_Send(ibuf, 2, tri, 1, 10, MPI_COMM_WORLD);
	if (rank == 1)
		MPI_Recv(ibuf2, 2, tri, 2, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Type_free(&tri);
	/* 9 */
	if (rank == 3) {
		int bsize = 5 * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
		void *b = malloc((size_t)bsize);
		MPI_Buffer_attach(b, bsize);
		MPI_Bsend(ibuf, 5, MPI_INT, 2, 11, MPI_COMM_WORLD);
		MPI_Buffer_detach(&b, &bsize);
		free(b);
	}
	if (rank == 2)
		MPI_Recv(ibuf2, 5, MPI_INT, 3, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	/* 10 */
	if (full)
		neighbors(rank);
	/* collectives */
	MPI_Bcast(ibuf, 10, MPI_INT, 0, MPI_COMM_WORLD);
	double two[2] = {1, 2}, sum[2];
	MPI_Allreduce(two, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	check(sum[1] == 8, "allreduce");
	int one = rank, all[4];
	MPI_Gather(&one, 1, MPI_INT, all, 1, MPI_INT, 3, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (full)
		collectives_both(rank);
	/* RMA */
	if (rma) {
		MPI_Win win;
		double wbuf[8] = {0};
		float fv[3] = {1, 2, 3}, fr[3];
		MPI_Win_create(wbuf, sizeof wbuf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
		MPI_Win_fence(0, win);
		if (rank == 0)
			MPI_Put(ibuf, 6, MPI_INT, 1, 0, 6, MPI_INT, win);
		if (rank == 2)
			MPI_Get(drecv[0], 2, MPI_DOUBLE, 3, 0, 2, MPI_DOUBLE, win);
		if (rank == 2) {
			MPI_Accumulate(ibuf, 7, MPI_INT, 3, 16, 7, MPI_INT, MPI_SUM, win);
			MPI_Get_accumulate(fv, 3, MPI_FLOAT, fr, 3, MPI_FLOAT, 0, 40, 3, MPI_FLOAT,
			                   MPI_SUM, win);
		}
		MPI_Win_fence(0, win);
		rma_passive(rank, win);
		MPI_Win_free(&win);
	}
	MPI_Finalize();
	return 0;
}
