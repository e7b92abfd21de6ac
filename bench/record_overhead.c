/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_overhead.c - message-rate microbenchmark for the recorder: one rank
 * sends to itself (MPI_Isend + MPI_Recv + MPI_Wait, 8 bytes) in a tight
 * loop, on MPI_COMM_WORLD or on a dup'ed communicator (the rank-translation
 * path), and prints the nanoseconds of this thread's CPU time per iteration
 * (CLOCK_THREAD_CPUTIME_ID: time spent descheduled on a loaded machine does
 * not count; the loop never blocks). Run it with and without
 * the recorder preloaded (bench/record_overhead.sh); the difference is the
 * recorder's cost per point-to-point call.
 *
 *   record_overhead ITERATIONS world|dup
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 1000000;
	int dup = argc > 2 && !strcmp(argv[2], "dup");
	MPI_Comm comm = MPI_COMM_WORLD;
	double sbuf = 1, rbuf = 0, t0 = 0, t1 = 0;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	if (dup)
		MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	for (int pass = 0; pass < 2; pass++) { /* pass 0 warms up */
		long n = pass ? iters : iters / 10;
		t0 = cpu_ns();
		for (long i = 0; i < n; i++) {
			MPI_Isend(&sbuf, 1, MPI_DOUBLE, 0, 1, comm, &req);
			MPI_Recv(&rbuf, 1, MPI_DOUBLE, 0, 1, comm, MPI_STATUS_IGNORE);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		}
		t1 = cpu_ns();
	}
	printf("%.1f\n", (t1 - t0) / (double)iters);
	if (dup)
		MPI_Comm_free(&comm);
	MPI_Finalize();
	return 0;
}
