/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pattern_mt.c - concurrent sends for the recorder under
 * MPI_THREAD_MULTIPLE (atomic counters, per-thread communicator cache).
 * Any number of ranks >= 2; 4 threads per rank. Thread t of rank r sends
 * ITER messages of (t + 1) doubles to rank r+1 on its own dup of
 * MPI_COMM_WORLD, alternating with ITER messages of 1 int to rank r-1 on
 * MPI_COMM_WORLD (tag t). So the recorder must find, for every rank r:
 *   r -> r+1: 4 * ITER msgs, ITER * 8 * (1+2+3+4) = 80 * ITER bytes
 *   r -> r-1: 4 * ITER msgs, 16 * ITER bytes
 * (with 2 ranks r+1 = r-1: 8 * ITER msgs, 96 * ITER bytes). The test script
 * derives these for the rank count it runs.
 *
 *   pattern_mt [ITER]      (default 500)
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

static int rank, size, iters = 500;
static MPI_Comm comms[THREADS];

static void *work(void *arg)
{
	int t = (int)(long)arg, next = (rank + 1) % size, prev = (rank + size - 1) % size;
	double d[THREADS] = {0}, dr[THREADS];
	int one = t, oner;

	for (int i = 0; i < iters; i++) {
		MPI_Request rq[4];
		MPI_Irecv(dr, t + 1, MPI_DOUBLE, prev, t, comms[t], &rq[0]);
		MPI_Irecv(&oner, 1, MPI_INT, next, t, MPI_COMM_WORLD, &rq[1]);
		MPI_Isend(d, t + 1, MPI_DOUBLE, next, t, comms[t], &rq[2]);
		MPI_Isend(&one, 1, MPI_INT, prev, t, MPI_COMM_WORLD, &rq[3]);
		MPI_Status st[4];
		MPI_Waitall(4, rq, st);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided;
	pthread_t th[THREADS];

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided != MPI_THREAD_MULTIPLE) {
		fprintf(stderr, "pattern_mt: MPI_THREAD_MULTIPLE not provided\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (argc > 1)
		iters = atoi(argv[1]);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int t = 0; t < THREADS; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, work, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < THREADS; t++)
		MPI_Comm_free(&comms[t]);
	MPI_Finalize();
	return 0;
}
