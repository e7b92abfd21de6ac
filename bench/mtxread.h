/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mtxread.h - the benchmark's own CSR of a Matrix Market file, for the
 * yardstick (scotch_map) and the independent hop-bytes check of our
 * evaluator: the file is read by the library's one reader
 * (tmatch_matrix_read), the matrix is built here, apart from
 * tmatch_comm_from_edges. Every entry as given is added to both (i,j) and
 * (j,i) (w(i,j) = sum of the (i,j) and (j,i) entries), the diagonal and
 * zero entries dropped, duplicates merged; both triangles in CSR with
 * columns increasing.
 */
#ifndef TMATCH_BENCH_MTXREAD_H
#define TMATCH_BENCH_MTXREAD_H

#include <stddef.h>

typedef struct bench_csr {
	int n;
	size_t nnz;      /* stored entries (both triangles) */
	size_t *row_ptr; /* n + 1 */
	int *col;
	double *w;
} bench_csr_t;

/* 0 or -1 with a message "file:line:column: what" in err. */
int bench_csr_load_mtx(const char *path, bench_csr_t *out, char *err, size_t errlen);
void bench_csr_free(bench_csr_t *csr);

/*
 * The arities and costs of a "tleaf h a0 c0 ..." string (through
 * tmatch_topo_from_tleaf). Returns the depth (1..16) or -1 with err set.
 */
int bench_parse_tleaf(const char *spec, int *arity, double *cost, char *err, size_t errlen);

#endif /* TMATCH_BENCH_MTXREAD_H */
