/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cgkernel.c - the communication of NAS CG (NPB 3, class-independent): the
 * ranks form an nprows x npcols grid (npcols = nprows or 2 x nprows, a power
 * of two in all); each iteration multiplies a sparse block (local work),
 * sums the partial results along its row by recursive halving with the
 * partners col XOR 2^k (MPI_Sendrecv of halving segments, as NPB's
 * reduce-exchange), exchanges its segment with its transpose partner, and
 * makes two dot products (the same exchanges on one double). The ranks
 * are numbered row by row, as NPB numbers them.
 *
 *   mpirun -np P cgkernel [N [ITERATIONS]]     (P a power of two, N % P == 0)
 *
 * For `make bench-predict`: a NAS-style kernel whose trace SimGrid replays.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The local sparse product: 13 non-zeros per row (NPB CG's nonzer + 1). */
static void spmv(const double *x, double *y, int n, int it)
{
	for (int i = 0; i < n; i++) {
		double s = 0;
		for (int k = 0; k < 13; k++)
			s += x[(i * 7 + k * 31 + it) % n] * (1.0 + 0.001 * k);
		y[i] = s;
	}
}

/* Sum len doubles of v over the row: exchanges with col XOR 2^k, halving. */
static void row_sum(double *v, double *tmp, int len, int col, int npcols, int row, MPI_Comm c)
{
	for (int bit = npcols / 2; bit >= 1; bit /= 2) {
		int peer = row * npcols + (col ^ bit), half = len > 1 ? len / 2 : 1;

		MPI_Sendrecv(v, half, MPI_DOUBLE, peer, bit, tmp, half, MPI_DOUBLE, peer, bit, c,
		             MPI_STATUS_IGNORE);
		for (int i = 0; i < half; i++)
			v[i] += tmp[i];
		len = half;
	}
}

int main(int argc, char **argv)
{
	int rank, np, nprows = 1, npcols, row, col, trans, n, iters;
	double *x, *y, *tmp, dot[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	n = argc > 1 ? atoi(argv[1]) : 1 << 16;
	iters = argc > 2 ? atoi(argv[2]) : 15;
	if ((np & (np - 1)) || n < np || n % np || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "cgkernel: P a power of two, N a multiple of P\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	while (nprows * nprows * 4 <= np)
		nprows *= 2; /* nprows = 2^floor(log2(P) / 2) */
	npcols = np / nprows;
	row = rank / npcols;
	col = rank % npcols;
	/* the transpose partner (NPB: exch_proc), for square and 1 x 2 grids */
	trans = npcols == nprows ? col * npcols + row : 2 * ((col / 2) * nprows + row) + col % 2;
	n /= nprows; /* one block row of the vector */
	x = malloc(sizeof(double) * (size_t)n);
	y = malloc(sizeof(double) * (size_t)n);
	tmp = malloc(sizeof(double) * (size_t)n);
	if (!x || !y || !tmp)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < n; i++)
		x[i] = 1.0 / (1 + (i + rank) % 17);
	for (int it = 0; it < iters; it++) {
		spmv(x, y, n, it);
		row_sum(y, tmp, n, col, npcols, row, MPI_COMM_WORLD);
		if (trans != rank)
			MPI_Sendrecv(y, n / npcols, MPI_DOUBLE, trans, 99, x, n / npcols,
			             MPI_DOUBLE, trans, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (int d = 0; d < 2; d++) {
			dot[d] = y[d] * x[d];
			row_sum(&dot[d], tmp, 1, col, npcols, row, MPI_COMM_WORLD);
		}
		for (int i = 0; i < n; i++)
			x[i] = 0.5 * x[i] + 1e-6 * y[i] / (1 + dot[0] * dot[0]);
	}
	if (rank == 0)
		printf("cgkernel: %d ranks (%d x %d), %d iterations, x[0] = %.6f\n", np, nprows,
		       npcols, iters, x[0]);
	free(x);
	free(y);
	free(tmp);
	MPI_Finalize();
	return 0;
}
