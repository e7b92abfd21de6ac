/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * patterns.h - the benchmark's communication patterns, exactly as defined in
 * the "Patterns" section of bench/README.md (stencil2d, stencil3d, cg,
 * alltoall, hier), plus seeded random sparse graphs and seeded random
 * permutations of any of them, and the machine trees they are mapped onto.
 *
 * Bench-only code: it lives in bench/ and is never part of libtreematch.
 * Generators stream each unordered pair {i, j} (i != j) with its weight, so
 * dense patterns never need an n x n array. A pair may be streamed more than
 * once (cg's transpose partner can also be a XOR partner): the readers sum
 * duplicates, as the pattern definition says ("added").
 */
#ifndef TMATCH_BENCH_PATTERNS_H
#define TMATCH_BENCH_PATTERNS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*bench_emit_fn)(void *arg, int i, int j, double w);

/* Known pattern names, NULL terminated: the set `make bench` runs. */
extern const char *const bench_pattern_names[];

/*
 * Generated graph families (bench/README.md), seeded: geometric (random
 * geometric graph), mesh (Delaunay-like triangulated mesh), powerlaw
 * (Barabasi-Albert). Accepted by every function here; `make bench-peers`
 * runs them.
 */
extern const char *const bench_family_names[];

/*
 * 0 if `pattern` can be generated for n ranks, else -1 with a reason in err
 * (cg needs a power of two; every pattern needs n >= 2).
 */
int bench_pattern_check(const char *pattern, int n, char *err, size_t errlen);

/* 1 if the pattern stores every pair (alltoall, hier). */
int bench_pattern_is_dense(const char *pattern);

/*
 * Stream the pattern. `seed` is used by random and the families only. If perm is not NULL,
 * rank r of the pattern becomes rank perm[r]. Returns 0, or -1 (unknown
 * pattern, bad n, out of memory) with err filled.
 */
int bench_pattern_generate(const char *pattern, int n, uint64_t seed, const int *perm,
                           bench_emit_fn emit, void *arg, char *err, size_t errlen);

/* Fill perm[0..n-1] with a seeded uniform random permutation. */
void bench_permutation(int n, uint64_t seed, int *perm);

/*
 * Write the pattern as a Matrix Market "coordinate real general" file with
 * one entry per streamed pair (row < column, 1-based). Returns 0 or -1.
 * *nnz_out (may be NULL) receives the number of entries written.
 */
int bench_pattern_write_mtx(const char *pattern, int n, uint64_t seed, const int *perm,
                            const char *path, size_t *nnz_out, char *err, size_t errlen);

/*
 * The reference machine tree for n ranks (a multiple of 8):
 * "tleaf 4 S 1 16 1 2 1 4 1" with S = n / 128 switches; below 128 ranks one
 * switch of n / 8 nodes. Returns snprintf's count.
 */
int bench_reference_tree(int n, char *buf, size_t len);

/*
 * The grid of stencil2d (2 dimensions) and stencil3d (3): dims[0] (fastest
 * varying), dims[1], dims[2] (1 in 2D). Returns the number of dimensions, 0
 * for any other pattern.
 */
int bench_stencil_dims(const char *pattern, int n, int dims[3]);

/* Smallest number of grid edges leaving s cells of Z^k (k = 2 or 3); see patterns.c. */
long bench_min_boundary(long s, int k);

/*
 * A proven lower bound on the hop-bytes of every placement of stencil2d or
 * stencil3d with n ranks onto exactly the `count` leaves `leaves`
 * (increasing) of the tree of `depth` levels with the given arities. The
 * hop-bytes of a placement are 2 x weight x the sum over depths 1..depth of
 * the edges cut between the subtrees of that depth; at each depth every
 * subtree holds as many ranks as it has leaves in the list, and the cut is
 * (sum of the subtrees' boundaries - the grid's outer boundary) / 2, each
 * boundary at least bench_min_boundary(). Returns -1 when the pattern is not
 * a stencil, count != n, or out of memory.
 */
double bench_stencil_lower_bound(const char *pattern, int n, const int *arity, int depth,
                                 const int *leaves, int count);

/*
 * The fewest grid edges that any split of stencil2d or stencil3d with n
 * ranks into parts of `size` ranks cuts: (n / size parts x the smallest
 * boundary of `size` cells - the grid's outer boundary) / 2, at least 0.
 * -1 when the pattern is not a stencil or size does not divide n.
 */
long bench_stencil_min_cut(const char *pattern, int n, int size);

#endif /* TMATCH_BENCH_PATTERNS_H */
