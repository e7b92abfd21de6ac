/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * patterns.c - benchmark pattern generators (see patterns.h, and the
 * "Patterns" section of bench/README.md for the definitions).
 */
#include "bench/patterns.h"
#include "treematch/treematch_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const bench_pattern_names[] = {
    "stencil2d", "stencil3d", "cg", "alltoall", "hier", "random", NULL,
};

const char *const bench_family_names[] = {
    "geometric",
    "mesh",
    "powerlaw",
    NULL,
};

/*
 * The generator is the library's own (treematch/rng.c): one xoshiro256**
 * for the mappers and the bench, so a seed means the same thing in both.
 */
static double rng_unit(tmatch__rng_t *rng)
{
	/* 53 random bits, shifted into (0, 1] so that pow(u, -1/a) is finite */
	return ((double)(tmatch__rng_next(rng) >> 11) + 1.0) / 9007199254740992.0;
}

void bench_permutation(int n, uint64_t seed, int *perm)
{
	tmatch__rng_t rng;
	tmatch__rng_seed(&rng, seed);
	for (int i = 0; i < n; i++)
		perm[i] = i;
	for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
		int j = (int)tmatch__rng_below(&rng, (uint64_t)i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* ---------------------------------------------------------------------- */
/* Patterns                                                                */

/* Links each new rank of powerlaw makes (Barabasi-Albert's m). */
#define POWERLAW_M 3

/* Largest divisor of n not above sqrt(n). */
static int divisor_below_sqrt(int n)
{
	int best = 1;
	for (int d = 1; (long)d * d <= n; d++)
		if (n % d == 0)
			best = d;
	return best;
}

static int is_pow2(int n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

int bench_pattern_is_dense(const char *pattern)
{
	return !strcmp(pattern, "alltoall") || !strcmp(pattern, "hier");
}

int bench_pattern_check(const char *pattern, int n, char *err, size_t errlen)
{
	int known = 0;
	for (int i = 0; bench_pattern_names[i]; i++)
		if (!strcmp(pattern, bench_pattern_names[i]))
			known = 1;
	for (int i = 0; bench_family_names[i]; i++)
		if (!strcmp(pattern, bench_family_names[i]))
			known = 1;
	if (!known) {
		snprintf(err, errlen,
		         "unknown pattern '%.40s': use stencil2d, stencil3d, cg, alltoall, "
		         "hier, random, geometric, mesh or powerlaw",
		         pattern);
		return -1;
	}
	if (n < 2) {
		snprintf(err, errlen, "%s needs at least 2 ranks, not %d", pattern, n);
		return -1;
	}
	if (!strcmp(pattern, "cg") && !is_pow2(n)) {
		snprintf(err, errlen, "cg needs a power of two ranks, not %d", n);
		return -1;
	}
	if (!strcmp(pattern, "powerlaw") && n < POWERLAW_M + 1) {
		snprintf(err, errlen, "powerlaw needs at least %d ranks", POWERLAW_M + 1);
		return -1;
	}
	if (!strcmp(pattern, "random") && n < 5) {
		snprintf(err, errlen, "random needs at least 5 ranks (4 partners each)");
		return -1;
	}
	return 0;
}

struct sink {
	const int *perm;
	bench_emit_fn emit;
	void *arg;
};

static void put(const struct sink *s, int i, int j, double w)
{
	if (i == j || w == 0)
		return;
	if (s->perm) {
		i = s->perm[i];
		j = s->perm[j];
	}
	if (i > j) {
		int t = i;
		i = j;
		j = t;
	}
	s->emit(s->arg, i, j, w);
}

/* Every edge of the stencils carries this volume. */
#define STENCIL_WEIGHT 1000

int bench_stencil_dims(const char *pattern, int n, int dims[3])
{
	if (n < 1)
		return 0;
	if (!strcmp(pattern, "stencil2d")) {
		dims[1] = divisor_below_sqrt(n);
		dims[0] = n / dims[1];
		dims[2] = 1;
		return 2;
	}
	if (!strcmp(pattern, "stencil3d")) {
		int pz = 1;
		for (int d = 1; (long)d * d * d <= n; d++)
			if (n % d == 0)
				pz = d;
		dims[2] = pz;
		dims[1] = divisor_below_sqrt(n / pz);
		dims[0] = n / pz / dims[1];
		return 3;
	}
	return 0;
}

static void gen_stencil2d(int n, const struct sink *s)
{
	int d[3], px, py;

	bench_stencil_dims("stencil2d", n, d);
	px = d[0];
	py = d[1];
	for (int y = 0; y < py; y++)
		for (int x = 0; x < px; x++) {
			int r = y * px + x;
			if (x + 1 < px)
				put(s, r, r + 1, STENCIL_WEIGHT);
			if (y + 1 < py)
				put(s, r, r + px, STENCIL_WEIGHT);
		}
}

static void gen_stencil3d(int n, const struct sink *s)
{
	int d[3], px, py, pz;

	bench_stencil_dims("stencil3d", n, d);
	px = d[0];
	py = d[1];
	pz = d[2];
	for (int z = 0; z < pz; z++)
		for (int y = 0; y < py; y++)
			for (int x = 0; x < px; x++) {
				int r = (z * py + y) * px + x;
				if (x + 1 < px)
					put(s, r, r + 1, STENCIL_WEIGHT);
				if (y + 1 < py)
					put(s, r, r + px, STENCIL_WEIGHT);
				if (z + 1 < pz)
					put(s, r, r + px * py, STENCIL_WEIGHT);
			}
}

static void gen_cg(int n, const struct sink *s)
{
	int lg = 0;
	while ((1 << (lg + 1)) <= n)
		lg++;
	int nprows = 1 << (lg / 2), npcols = n / nprows;
	for (int r = 0; r < n; r++) {
		int row = r / npcols, col = r % npcols, t;
		for (int b = 1; b < npcols; b <<= 1) {
			int q = row * npcols + (col ^ b);
			if (r < q)
				put(s, r, q, 1000);
		}
		if (nprows == npcols)
			t = col * npcols + row;
		else
			t = 2 * ((col / 2) * nprows + row) + col % 2;
		if (r < t) /* the partner map is an involution: each pair once */
			put(s, r, t, 1000);
	}
}

static void gen_alltoall(int n, const struct sink *s)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			put(s, i, j, 100);
}

static void gen_hier(int n, const struct sink *s)
{
	static const long block[] = {2, 8, 32, 256, 2048, 16384};
	static const double weight[] = {10000, 2000, 400, 80, 16, 3, 1};
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			int k = 0;
			while (k < 6 && i / block[k] != j / block[k])
				k++;
			put(s, i, j, weight[k]);
		}
}

/*
 * 4 distinct random partners per rank, Pareto(1.2) weights with scale 100,
 * rounded to integers and capped at 1e6 so that Scotch's 32-bit edge loads
 * cannot overflow.
 */
static void gen_random(int n, uint64_t seed, const struct sink *s)
{
	tmatch__rng_t rng;
	tmatch__rng_seed(&rng, seed);
	for (int i = 0; i < n; i++) {
		int got[4], k = 0;
		while (k < 4) {
			int j = (int)tmatch__rng_below(&rng, (uint64_t)n), dup = (j == i);
			for (int q = 0; q < k; q++)
				dup |= (got[q] == j);
			if (dup)
				continue;
			got[k++] = j;
			double w = floor(100.0 * pow(rng_unit(&rng), -1.0 / 1.2));
			put(s, i, j, w > 1e6 ? 1e6 : w);
		}
	}
}

/*
 * geometric: n points uniform in the unit square, in generation order (so
 * the numbering has no locality), every pair closer than r linked, r chosen
 * for an average degree of 8 (pi r^2 n = 8); closer pairs exchange more, as
 * particles' halos do: 100 + 900 (1 - d / r), rounded. Pairs are found
 * through a grid of r x r cells, each point compared with its own cell and
 * the next ones, so the time is linear in n.
 */
static int gen_geometric(int n, uint64_t seed, const struct sink *s)
{
	double r = sqrt(8.0 / (M_PI * n)), *x = malloc(sizeof(double) * 2 * (size_t)n);
	int g = (int)(1.0 / r) > 0 ? (int)(1.0 / r) : 1;
	int *head = malloc(sizeof(int) * (size_t)g * (size_t)g),
	    *next = malloc(sizeof(int) * (size_t)n);
	tmatch__rng_t rng;

	if (!x || !head || !next) {
		free(x);
		free(head);
		free(next);
		return -1;
	}
	tmatch__rng_seed(&rng, seed);
	for (int c = 0; c < g * g; c++)
		head[c] = -1;
	for (int i = 0; i < n; i++) {
		int cx, cy;
		x[2 * i] = rng_unit(&rng) - 1e-12;
		x[2 * i + 1] = rng_unit(&rng) - 1e-12;
		cx = (int)(x[2 * i] * g);
		cy = (int)(x[2 * i + 1] * g);
		cx = cx < g ? cx : g - 1;
		cy = cy < g ? cy : g - 1;
		next[i] = head[cy * g + cx];
		head[cy * g + cx] = i;
	}
	for (int cy = 0; cy < g; cy++)
		for (int cx = 0; cx < g; cx++)
			for (int i = head[cy * g + cx]; i >= 0; i = next[i])
				/* this cell (pairs i < j) and the four after it */
				for (int k = 0; k < 5; k++) {
					static const int dx[] = {0, 1, -1, 0, 1},
					                 dy[] = {0, 0, 1, 1, 1};
					int nx = cx + dx[k], ny = cy + dy[k];
					if (nx < 0 || nx >= g || ny >= g)
						continue;
					for (int j = head[ny * g + nx]; j >= 0; j = next[j]) {
						double ex = x[2 * i] - x[2 * j],
						       ey = x[2 * i + 1] - x[2 * j + 1];
						double d = sqrt(ex * ex + ey * ey);
						if ((k == 0 && j <= i) || d >= r)
							continue;
						put(s, i, j, floor(100.5 + 900.0 * (1.0 - d / r)));
					}
				}
	free(x);
	free(head);
	free(next);
	return 0;
}

/*
 * mesh: a Delaunay-like triangulation, as a 2D unstructured mesh decomposed
 * into n subdomains looks. The px x py grid of stencil2d (row-major
 * numbering), each point moved by up to 0.35 in x and y (seeded), each cell
 * split by its shorter diagonal (the Delaunay choice for a convex
 * quadrilateral of nearly equal sides); a neighbour pair exchanges in
 * proportion to the length of the face between them: 1000 x that length
 * in grid units, rounded.
 */
static int gen_mesh(int n, uint64_t seed, const struct sink *s)
{
	int d[3], px, py;
	double *x = malloc(sizeof(double) * 2 * (size_t)n);
	tmatch__rng_t rng;

	if (!x)
		return -1;
	bench_stencil_dims("stencil2d", n, d);
	px = d[0];
	py = d[1];
	tmatch__rng_seed(&rng, seed);
	for (int i = 0; i < n; i++) {
		x[2 * i] = i % px + 0.7 * (rng_unit(&rng) - 0.5);
		x[2 * i + 1] = i / px + 0.7 * (rng_unit(&rng) - 0.5);
	}
#define MESH_LEN(a, b) hypot(x[2 * (a)] - x[2 * (b)], x[2 * (a) + 1] - x[2 * (b) + 1])
	for (int yy = 0; yy < py; yy++)
		for (int xx = 0; xx < px; xx++) {
			int r = yy * px + xx;
			if (xx + 1 < px)
				put(s, r, r + 1, floor(0.5 + 1000.0 * MESH_LEN(r, r + 1)));
			if (yy + 1 < py)
				put(s, r, r + px, floor(0.5 + 1000.0 * MESH_LEN(r, r + px)));
			if (xx + 1 < px && yy + 1 < py) {
				double d1 = MESH_LEN(r, r + px + 1), d2 = MESH_LEN(r + 1, r + px);
				if (d1 <= d2)
					put(s, r, r + px + 1, floor(0.5 + 1000.0 * d1));
				else
					put(s, r + 1, r + px, floor(0.5 + 1000.0 * d2));
			}
		}
#undef MESH_LEN
	free(x);
	return 0;
}

/*
 * powerlaw: Barabasi-Albert preferential attachment. The first POWERLAW_M + 1
 * ranks form a clique; each later rank links to POWERLAW_M distinct earlier
 * ranks, each drawn with probability proportional to its degree (a uniform
 * pick among the endpoints of the edges so far). Degrees follow a power law
 * of exponent 3: a few hubs talk to many ranks. Every link carries 1000; the
 * numbering is the arrival order, hubs first.
 */
static int gen_powerlaw(int n, uint64_t seed, const struct sink *s)
{
	size_t cap = 2 * ((size_t)POWERLAW_M * (size_t)n + POWERLAW_M * POWERLAW_M), ne = 0;
	int *end = malloc(sizeof(int) * cap);
	tmatch__rng_t rng;

	if (!end)
		return -1;
	tmatch__rng_seed(&rng, seed);
	for (int i = 0; i <= POWERLAW_M; i++)
		for (int j = i + 1; j <= POWERLAW_M; j++) {
			put(s, i, j, 1000);
			end[ne++] = i;
			end[ne++] = j;
		}
	for (int i = POWERLAW_M + 1; i < n; i++) {
		int got[POWERLAW_M], k = 0;
		size_t before = ne;
		while (k < POWERLAW_M) {
			int j = end[tmatch__rng_below(&rng, (uint64_t)before)], dup = 0;
			for (int q = 0; q < k; q++)
				dup |= got[q] == j;
			if (dup)
				continue;
			got[k++] = j;
			put(s, i, j, 1000);
			end[ne++] = i;
			end[ne++] = j;
		}
	}
	free(end);
	return 0;
}

int bench_pattern_generate(const char *pattern, int n, uint64_t seed, const int *perm,
                           bench_emit_fn emit, void *arg, char *err, size_t errlen)
{
	struct sink s = {perm, emit, arg};

	if (bench_pattern_check(pattern, n, err, errlen))
		return -1;
	if (!strcmp(pattern, "stencil2d"))
		gen_stencil2d(n, &s);
	else if (!strcmp(pattern, "stencil3d"))
		gen_stencil3d(n, &s);
	else if (!strcmp(pattern, "cg"))
		gen_cg(n, &s);
	else if (!strcmp(pattern, "alltoall"))
		gen_alltoall(n, &s);
	else if (!strcmp(pattern, "hier"))
		gen_hier(n, &s);
	else if (!strcmp(pattern, "random"))
		gen_random(n, seed, &s);
	else if ((!strcmp(pattern, "geometric") ? gen_geometric(n, seed, &s)
	          : !strcmp(pattern, "mesh")    ? gen_mesh(n, seed, &s)
	                                        : gen_powerlaw(n, seed, &s)) != 0) {
		snprintf(err, errlen, "%s: out of memory for %d ranks", pattern, n);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Lower bound of the stencils                                             */

/*
 * Smallest edge boundary of a set of s cells of the infinite grid Z^k (k = 2
 * or 3), i.e. how many grid edges leave it. Every grid line parallel to an
 * axis that meets the set crosses its boundary at least twice, so the
 * boundary is at least twice the sum of the sizes of the set's k projections
 * along the axes; by the Loomis-Whitney inequality the product of those
 * sizes is at least s^(k-1). Hence 2 * min { sum a_i : a_i >= 1 integers,
 * prod a_i >= s^(k-1) }: for k = 2 this is 2 * ceil(2 sqrt(s)), the exact
 * minimum perimeter of s cells (Harary and Harborth, 1976); for k = 3 it is
 * at least 6 s^(2/3), reached by cubes.
 */
long bench_min_boundary(long s, int k)
{
	long best = -1;

	if (s <= 0)
		return 0;
	if (k == 2) {
		long m = (long)ceil(2 * sqrt((double)s));
		while (m > 0 && (m - 1) * (m - 1) >= 4 * s) /* exact ceil(sqrt(4s)) */
			m--;
		while (m * m < 4 * s)
			m++;
		return 2 * m;
	}
	/* k == 3, t = s^2. Above 2^16 cells the real bound 3 t^(1/3), rounded up,
	   is used (a few less edges at most); below, the smallest a + b + c with
	   a <= b <= c and abc >= t, searched over a <= ceil(t^(1/3)) and
	   b <= ceil(sqrt(t / a)). */
	double t = (double)s * (double)s;
	if (s > 65536)
		return 2 * (long)ceil(3 * cbrt(t) - 1e-9);
	for (long a = 1; a <= (long)ceil(cbrt(t)) + 1; a++)
		for (long b = a; b <= (long)ceil(sqrt(t / (double)a)) + 1; b++) {
			long c = (long)ceil(t / ((double)a * (double)b) - 1e-9);
			if (c < b)
				c = b;
			if (best < 0 || a + b + c < best)
				best = a + b + c;
		}
	return 2 * best;
}

/* Grid edges leaving the whole grid of the stencil (k = 2 or 3 dimensions). */
static long outer_boundary(int k, const int dims[3])
{
	return k == 2 ? 2L * (dims[0] + dims[1])
	              : 2L * ((long)dims[0] * dims[1] + (long)dims[1] * dims[2] +
	                      (long)dims[0] * dims[2]);
}

long bench_stencil_min_cut(const char *pattern, int n, int size)
{
	int dims[3], k = bench_stencil_dims(pattern, n, dims);
	long all;

	if (k == 0 || size < 1 || n % size)
		return -1;
	all = (long)(n / size) * bench_min_boundary(size, k);
	return all > outer_boundary(k, dims) ? (all - outer_boundary(k, dims)) / 2 : 0;
}

double bench_stencil_lower_bound(const char *pattern, int n, const int *arity, int depth,
                                 const int *leaves, int count)
{
	int dims[3], k = bench_stencil_dims(pattern, n, dims);
	long span = 1, outer, *per = NULL;
	double cut_sum = 0;

	if (k == 0 || count != n || depth < 1)
		return -1;
	outer = outer_boundary(k, dims);
	per = malloc((size_t)count * sizeof(*per));
	if (!per)
		return -1;
	/* Levels from the leaves up: depth, depth - 1, ..., 1. */
	for (int l = depth; l >= 1; l--) {
		long boundary = 0, parts = 0;

		if (l < depth)
			span *= arity[l];
		/* leaves are increasing: each subtree's leaves are consecutive */
		for (int i = 0; i < count;) {
			long node = leaves[i] / span, size = 0;
			while (i < count && leaves[i] / span == node)
				size++, i++;
			per[parts++] = size;
		}
		for (long p = 0, last = -1, b = 0; p < parts; p++) {
			if (per[p] != last) /* the subtrees of a level mostly have one size */
				b = bench_min_boundary(last = per[p], k);
			boundary += b;
		}
		if (boundary > outer)
			cut_sum += (double)(boundary - outer) / 2;
	}
	free(per);
	return 2.0 * STENCIL_WEIGHT * cut_sum;
}

/* ---------------------------------------------------------------------- */
/* Matrix Market output                                                    */

struct writer {
	FILE *f;
	size_t count;
	int failed;
};

static void count_one(void *arg, int i, int j, double w)
{
	(void)i, (void)j, (void)w;
	((struct writer *)arg)->count++;
}

static void write_one(void *arg, int i, int j, double w)
{
	struct writer *wr = arg;
	if (fprintf(wr->f, "%d %d %.17g\n", i + 1, j + 1, w) < 0)
		wr->failed = 1;
	wr->count++;
}

int bench_pattern_write_mtx(const char *pattern, int n, uint64_t seed, const int *perm,
                            const char *path, size_t *nnz_out, char *err, size_t errlen)
{
	struct writer wr = {NULL, 0, 0};
	char tmp[4096];
	int to_stdout = !strcmp(path, "-"), rc = -1;
	size_t expected;

	if (bench_pattern_generate(pattern, n, seed, perm, count_one, &wr, err, errlen))
		return -1;
	expected = wr.count;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "path too long");
		return -1;
	}
	wr.f = to_stdout ? stdout : fopen(tmp, "w");
	if (!wr.f) {
		snprintf(err, errlen, "%.200s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(wr.f, "%%%%MatrixMarket matrix coordinate real general\n");
	fprintf(wr.f, "%% slurm-treematch bench: %s, %d ranks, seed %llu%s\n", pattern, n,
	        (unsigned long long)seed, perm ? ", ranks permuted" : "");
	fprintf(wr.f, "%d %d %zu\n", n, n, expected);
	wr.count = 0;
	bench_pattern_generate(pattern, n, seed, perm, write_one, &wr, err, errlen);
	if (to_stdout) {
		if (fflush(stdout) != 0 || wr.failed) {
			snprintf(err, errlen, "write to stdout failed");
			goto out;
		}
	} else if (fclose(wr.f) != 0 || wr.failed || wr.count != expected) {
		snprintf(err, errlen, "%.200s: write failed", tmp);
		unlink(tmp);
		goto out;
	} else if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "%.200s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (nnz_out)
		*nnz_out = expected;
	rc = 0;
out:
	return rc;
}

/* ---------------------------------------------------------------------- */

int bench_reference_tree(int n, char *buf, size_t len)
{
	int nodes = n / 8;
	if (nodes <= 16)
		return snprintf(buf, len, "tleaf 4 1 1 %d 1 2 1 4 1", nodes);
	return snprintf(buf, len, "tleaf 4 %d 1 16 1 2 1 4 1", nodes / 16);
}
