/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mtxread.h - a small, independent Matrix Market reader for the benchmark's
 * yardstick (scotch_map), so that Scotch's side does not depend on our
 * library. Reads "coordinate" matrices (real, integer or pattern; general
 * or symmetric), symmetrises them (w(i,j) = sum of (i,j) and (j,i) entries),
 * drops the diagonal and zero entries, merges duplicates, and returns both
 * triangles in CSR with columns increasing.
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

/* 0 or -1 with a message "file:line: what" in err. */
int bench_csr_load_mtx(const char *path, bench_csr_t *out, char *err, size_t errlen);
void bench_csr_free(bench_csr_t *csr);

/*
 * Parse "tleaf h a0 c0 ... a(h-1) c(h-1)" (leading "tleaf" optional).
 * Returns the depth (1..16) or -1.
 */
int bench_parse_tleaf(const char *spec, int *arity, double *cost, char *err, size_t errlen);

#endif /* TMATCH_BENCH_MTXREAD_H */
