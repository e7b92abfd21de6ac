/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stencils' lower bound that bench/RESULTS.md reports next to the
 * mappers: the smallest boundaries it is built from, hand-computed bounds
 * of small cases, and the bound against real placements (never above the
 * hop-bytes of any placement, equal to them where a placement is optimal).
 */
#include "bench/patterns.h"
#include "treematch/treematch.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

struct boundary_case {
	long cells;
	int dims;
	long expected;
};

/* Hand-counted: squares and cubes are optimal, a line of 2 cells has 6 (2D) / 10 (3D). */
static const struct boundary_case boundaries[] = {
    {1, 2, 4},  {2, 2, 6},   {3, 2, 8},    {4, 2, 8}, {5, 2, 10}, {8, 2, 12},
    {9, 2, 12}, {16, 2, 16}, {128, 2, 46}, {1, 3, 6}, {2, 3, 10}, {4, 3, 16},
    {8, 3, 24}, {27, 3, 54}, {64, 3, 96},  {0, 2, 0}, {0, 3, 0},
};

Test(bench_bound, smallest_boundaries)
{
	for (size_t i = 0; i < sizeof(boundaries) / sizeof(boundaries[0]); i++) {
		const struct boundary_case *c = &boundaries[i];
		cr_expect_eq(bench_min_boundary(c->cells, c->dims), c->expected,
		             "%ld cells in Z^%d: %ld, expected %ld", c->cells, c->dims,
		             bench_min_boundary(c->cells, c->dims), c->expected);
	}
}

Test(bench_bound, boundary_grows_with_size)
{
	for (int k = 2; k <= 3; k++)
		for (long s = 1; s < 3000; s++)
			cr_assert_leq(bench_min_boundary(s, k), bench_min_boundary(s + 1, k) + 2,
			              "Z^%d: %ld cells", k, s);
	/* the large-set formula stays at or below the searched minimum */
	cr_expect_leq(bench_min_boundary(65537, 3), bench_min_boundary(65536, 3) + 2);
}

static int *all_leaves(int n)
{
	int *l = malloc(sizeof(int) * (size_t)n);
	cr_assert_not_null(l);
	for (int i = 0; i < n; i++)
		l[i] = i;
	return l;
}

/*
 * 8 x 8 stencil2d on 1 switch x 8 nodes x 2 sockets x 4 cores, by hand:
 * node parts of 8 cells (boundary >= 12), socket parts of 4 (>= 8), cores
 * (4), the grid's outer boundary 32; cuts (96-32)/2 + (128-32)/2 +
 * (256-32)/2 = 32 + 48 + 112 = 192 edges, x 2 x 1000.
 */
Test(bench_bound, stencil2d_by_hand)
{
	const int arity[] = {1, 8, 2, 4};
	int *l = all_leaves(64);

	cr_expect_float_eq(bench_stencil_lower_bound("stencil2d", 64, arity, 4, l, 64), 384000.0,
	                   1e-9);
	/* 2 x 2 x 2 cube, one node of 2 sockets x 4 cores: sockets of 4 cells
	   (>= 16), cores (6), outer 24: (32-24)/2 + (48-24)/2 = 4 + 12 = 16 edges */
	const int arity3[] = {2, 4};
	cr_expect_float_eq(bench_stencil_lower_bound("stencil3d", 8, arity3, 2, l, 8), 32000.0,
	                   1e-9);
	free(l);
}

Test(bench_bound, not_a_stencil_or_wrong_count)
{
	const int arity[] = {2, 4};
	int *l = all_leaves(8);

	cr_expect_float_eq(bench_stencil_lower_bound("cg", 8, arity, 2, l, 8), -1.0, 1e-12);
	cr_expect_float_eq(bench_stencil_lower_bound("random", 8, arity, 2, l, 8), -1.0, 1e-12);
	cr_expect_float_eq(bench_stencil_lower_bound("stencil2d", 8, arity, 2, l, 7), -1.0, 1e-12);
	cr_expect_float_eq(bench_stencil_lower_bound("stencil2d", 8, arity, 0, l, 8), -1.0, 1e-12);
	free(l);
}

/* Sum the pattern into edge arrays to build a tmatch_comm_t. */
struct edges {
	int *src, *dst, n;
	double *w;
	size_t len, cap;
};

static void collect(void *arg, int i, int j, double w)
{
	struct edges *e = arg;
	if (e->len == e->cap) {
		e->cap = e->cap * 2 + 64;
		e->src = realloc(e->src, e->cap * sizeof(int));
		e->dst = realloc(e->dst, e->cap * sizeof(int));
		e->w = realloc(e->w, e->cap * sizeof(double));
		cr_assert(e->src && e->dst && e->w);
	}
	e->src[e->len] = i;
	e->dst[e->len] = j;
	e->w[e->len++] = w;
}

struct placed_case {
	const char *pattern;
	int n;
	const char *tree;
	int depth, arity[6];
	int every_other_node; /* a partial allocation: nodes 0, 2, 4, ... */
};

static const struct placed_case placed[] = {
    {"stencil2d", 256, "tleaf 4 2 1 16 1 2 1 4 1", 4, {2, 16, 2, 4}, 0},
    {"stencil3d", 256, "tleaf 4 2 1 16 1 2 1 4 1", 4, {2, 16, 2, 4}, 0},
    {"stencil2d", 729, "tleaf 6 3 1 3 1 3 1 3 1 3 1 3 1", 6, {3, 3, 3, 3, 3, 3}, 0},
    {"stencil3d", 625, "tleaf 4 5 1 5 1 5 1 5 1", 4, {5, 5, 5, 5}, 0},
    {"stencil3d", 128, "tleaf 4 2 1 16 1 2 1 4 1", 4, {2, 16, 2, 4}, 1},
};

/*
 * The bound is a bound: every mapper's placement costs at least as much, and
 * the default one is close on the reference-like trees (within 1 % on 256
 * ranks of 2 x 16 x 2 x 4, where the bound is nearly tight).
 */
Test(bench_bound, below_every_placement)
{
	static const char *const mappers[] = {"packed", "rr", "random", "greedy", "bisect", "auto"};

	for (size_t c = 0; c < sizeof(placed) / sizeof(placed[0]); c++) {
		const struct placed_case *pc = &placed[c];
		struct edges e = {0};
		tmatch_error_t err;
		char why[200];
		tmatch_topo_t *topo = tmatch_topo_from_tleaf(pc->tree, &err);
		int nl, *leaves, count = 0, *map = malloc(sizeof(int) * (size_t)pc->n);
		double lb, best = -1;

		cr_assert_not_null(topo, "%s", err.msg);
		nl = tmatch_topo_nb_leaves(topo);
		leaves = malloc(sizeof(int) * (size_t)nl);
		cr_assert(map && leaves);
		for (int lf = 0; lf < nl; lf++)
			if (!pc->every_other_node || (lf / 8) % 2 == 0)
				leaves[count++] = lf;
		cr_assert_eq(count, pc->n);
		if (pc->every_other_node)
			cr_assert_eq(tmatch_topo_set_allowed(topo, leaves, count, &err), 0, "%s",
			             err.msg);
		cr_assert_eq(bench_pattern_generate(pc->pattern, pc->n, 42, NULL, collect, &e, why,
		                                    sizeof(why)),
		             0, "%s", why);
		tmatch_comm_t *comm = tmatch_comm_from_edges(pc->n, e.len, e.src, e.dst, e.w, &err);
		cr_assert_not_null(comm, "%s", err.msg);
		lb = bench_stencil_lower_bound(pc->pattern, pc->n, pc->arity, pc->depth, leaves,
		                               count);
		cr_assert_gt(lb, 0, "%s on %s: no bound", pc->pattern, pc->tree);
		for (size_t m = 0; m < sizeof(mappers) / sizeof(mappers[0]); m++) {
			tmatch_map_opts_t opts;
			tmatch_metrics_t met;

			tmatch_map_opts_init(&opts);
			opts.mapper = mappers[m];
			cr_assert_eq(tmatch_map_compute(comm, topo, &opts, map, &err), 0, "%s",
			             err.msg);
			cr_assert_eq(tmatch_eval(comm, topo, map, &met, &err), 0, "%s", err.msg);
			cr_expect_geq(met.hop_bytes, lb,
			              "%s on %s: %s costs %g, below the bound %g", pc->pattern,
			              pc->tree, mappers[m], met.hop_bytes, lb);
			if (best < 0 || met.hop_bytes < best)
				best = met.hop_bytes;
		}
		if (c < 2)
			cr_expect_leq(best, 1.01 * lb, "%s on %s: best placement %g, bound %g",
			              pc->pattern, pc->tree, best, lb);
		tmatch_comm_destroy(comm);
		tmatch_topo_destroy(topo);
		free(e.src);
		free(e.dst);
		free(e.w);
		free(map);
		free(leaves);
	}
}

/* Hand-counted cuts: 16 x 16 in 8 x 8 squares cuts 32 edges, 32 x 32 in 16
   x 16 squares 64; 8 x 8 x 4 in 4 x 4 x 4 cubes two planes of 32; one part
   cuts none. */
Test(bench_bound, fewest_edges_cut_by_equal_parts)
{
	cr_expect_eq(bench_stencil_min_cut("stencil2d", 256, 64), 32);
	cr_expect_eq(bench_stencil_min_cut("stencil2d", 1024, 256), 64);
	cr_expect_eq(bench_stencil_min_cut("stencil3d", 256, 64), 64);
	cr_expect_eq(bench_stencil_min_cut("stencil2d", 256, 256), 0);
	cr_expect_eq(bench_stencil_min_cut("stencil2d", 256, 3), -1, "3 does not divide 256");
	cr_expect_eq(bench_stencil_min_cut("random", 256, 64), -1);
}

/* ------------------------------------------------------------------------ */
/* The generated graph families of `make bench-peers`                        */

static struct edges family(const char *name, int n, uint64_t seed)
{
	struct edges e;
	char err[200];

	memset(&e, 0, sizeof(e));
	e.n = n;
	cr_assert_eq(bench_pattern_generate(name, n, seed, NULL, collect, &e, err, sizeof(err)), 0,
	             "%s", err);
	for (size_t k = 0; k < e.len; k++) {
		cr_assert(e.src[k] < e.dst[k] && e.src[k] >= 0 && e.dst[k] < n,
		          "%s: pair %d %d out of order or range", name, e.src[k], e.dst[k]);
		cr_assert_gt(e.w[k], 0);
	}
	return e;
}

static void edges_free(struct edges *e)
{
	free(e->src);
	free(e->dst);
	free(e->w);
}

Test(bench_families, seeded_and_shaped_as_documented)
{
	for (int f = 0; bench_family_names[f]; f++) {
		struct edges a = family(bench_family_names[f], 1024, 42);
		struct edges b = family(bench_family_names[f], 1024, 42);
		struct edges c = family(bench_family_names[f], 1024, 43);
		int same = a.len == c.len;

		cr_assert_eq(a.len, b.len);
		cr_assert_arr_eq(a.src, b.src, a.len * sizeof(int), "same seed, same graph");
		cr_assert_arr_eq(a.w, b.w, a.len * sizeof(double));
		for (size_t k = 0; same && k < a.len; k++)
			same = a.src[k] == c.src[k] && a.dst[k] == c.dst[k] && a.w[k] == c.w[k];
		cr_assert(!same, "%s: another seed, another graph", bench_family_names[f]);
		edges_free(&a);
		edges_free(&b);
		edges_free(&c);
	}
}

Test(bench_families, geometric_mesh_and_powerlaw_degrees)
{
	struct edges g = family("geometric", 4096, 7), m = family("mesh", 1024, 7);
	struct edges p = family("powerlaw", 4096, 7);
	int *deg = calloc(4096, sizeof(int)), maxdeg = 0;

	/* geometric: pi r^2 n = 8 expected neighbours (fewer at the border) */
	cr_assert(g.len > 4096 * 3.5 && g.len < 4096 * 4.0, "geometric: %zu pairs", g.len);
	/* mesh: a 32 x 32 grid, its 31 x 32 x 2 sides and one diagonal per cell */
	cr_assert_eq(m.len, 31 * 32 * 2 + 31 * 31);
	/* powerlaw: a clique of 4, then 3 links per rank; hubs far above the
	   mean degree of 6 */
	cr_assert_eq(p.len, 6 + 3 * (4096 - 4));
	for (size_t k = 0; k < p.len; k++) {
		deg[p.src[k]]++;
		deg[p.dst[k]]++;
	}
	for (int i = 0; i < 4096; i++)
		maxdeg = deg[i] > maxdeg ? deg[i] : maxdeg;
	cr_assert_gt(maxdeg, 60, "powerlaw: largest degree %d", maxdeg);
	free(deg);
	edges_free(&g);
	edges_free(&m);
	edges_free(&p);
}
