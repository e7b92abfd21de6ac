/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_treematch_mappers.c - the mappers of issue 3 (greedy, rcm, bisect,
 * refine, auto) and every registered mapper with and without +refine:
 * injective onto allowed leaves on odd arities, partial allocations, fewer
 * ranks than leaves, one rank and all-zero matrices; refinement never
 * worsens; same seed, same mapping; known optima on block structures; auto
 * keeps the lowest cost of its candidates and is never above bisect, dense
 * inputs included.
 */
#include "treematch/treematch_private.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Fixtures                                                                  */

static tmatch_topo_t *tree(const char *spec)
{
	tmatch_error_t err;
	tmatch_topo_t *t = tmatch_topo_from_tleaf(spec, &err);

	cr_assert_not_null(t, "%s: %s", spec, err.msg);
	return t;
}

/* Keep about `percent` % of the leaves (seeded), at least `min`. */
static void restrict_leaves(tmatch_topo_t *t, int percent, int min, uint64_t seed)
{
	int nl = tmatch_topo_nb_leaves(t), na = 0, *keep = malloc(sizeof(int) * (size_t)nl);
	tmatch__rng_t rng;

	cr_assert_not_null(keep);
	tmatch__rng_seed(&rng, seed);
	for (int lf = 0; lf < nl; lf++)
		if ((int)tmatch__rng_below(&rng, 100) < percent || nl - lf <= min - na)
			keep[na++] = lf;
	cr_assert_eq(tmatch_topo_set_allowed(t, keep, na, NULL), 0);
	free(keep);
}

struct edges {
	int *src, *dst;
	double *w;
	size_t len, cap;
};

static void add_edge(struct edges *e, int a, int b, double w)
{
	if (e->len == e->cap) {
		e->cap = e->cap * 2 + 64;
		e->src = realloc(e->src, sizeof(int) * e->cap);
		e->dst = realloc(e->dst, sizeof(int) * e->cap);
		e->w = realloc(e->w, sizeof(double) * e->cap);
		cr_assert(e->src && e->dst && e->w);
	}
	e->src[e->len] = a;
	e->dst[e->len] = b;
	e->w[e->len] = w;
	e->len++;
}

static tmatch_comm_t *build(int n, struct edges *e)
{
	tmatch_error_t err;
	tmatch_comm_t *c = tmatch_comm_from_edges(n, e->len, e->src, e->dst, e->w, &err);

	cr_assert_not_null(c, "%s", err.msg);
	free(e->src);
	free(e->dst);
	free(e->w);
	memset(e, 0, sizeof(*e));
	return c;
}

/* Seeded random sparse graph: `deg` random partners per rank, weights 1..1000. */
static tmatch_comm_t *random_comm(int n, int deg, uint64_t seed)
{
	struct edges e = {0};
	tmatch__rng_t rng;

	tmatch__rng_seed(&rng, seed);
	for (int r = 0; r < n; r++)
		for (int k = 0; k < deg && n > 1; k++)
			add_edge(&e, r, (int)tmatch__rng_below(&rng, (uint64_t)n),
			         (double)(1 + tmatch__rng_below(&rng, 1000)));
	return build(n, &e);
}

/* A seeded random permutation of 0..n-1 (Fisher-Yates); the identity when seed is 0. */
static int *shuffled(int n, uint64_t seed)
{
	int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	tmatch__rng_t rng;

	cr_assert_not_null(p);
	for (int i = 0; i < n; i++)
		p[i] = i;
	if (seed) {
		tmatch__rng_seed(&rng, seed);
		for (int i = n - 1; i > 0; i--) {
			int j = (int)tmatch__rng_below(&rng, (uint64_t)i + 1), x = p[i];
			p[i] = p[j];
			p[j] = x;
		}
	}
	return p;
}

/* px x py 5-point stencil, ranks optionally permuted by a seeded shuffle. */
static tmatch_comm_t *stencil(int px, int py, uint64_t perm_seed)
{
	struct edges e = {0};
	int *p = shuffled(px * py, perm_seed);

	for (int y = 0; y < py; y++)
		for (int x = 0; x < px; x++) {
			if (x + 1 < px)
				add_edge(&e, p[y * px + x], p[y * px + x + 1], 1000);
			if (y + 1 < py)
				add_edge(&e, p[y * px + x], p[(y + 1) * px + x], 1000);
		}
	free(p);
	return build(px * py, &e);
}

static int *map_with(const tmatch_comm_t *c, const tmatch_topo_t *t, const char *mapper,
                     uint64_t seed)
{
	tmatch_map_opts_t o;
	tmatch_error_t err;
	int n = tmatch_comm_order(c), *m = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));

	cr_assert_not_null(m);
	tmatch_map_opts_init(&o);
	o.mapper = mapper;
	o.seed = seed;
	cr_assert_eq(tmatch_map_compute(c, t, &o, m, &err), 0, "mapper %s: %s", mapper, err.msg);
	cr_assert_eq(tmatch_map_validate(t, m, n, &err), 0, "mapper %s: %s", mapper, err.msg);
	return m;
}

static const char *const ours[] = {"greedy", "rcm", "bisect", "auto"};
#define NOURS (sizeof(ours) / sizeof(ours[0]))

/* ------------------------------------------------------------------------ */
/* Every mapper on many shapes                                               */

struct shape {
	const char *spec;
	int percent; /* allowed leaves, 100 = all */
	int ranks;   /* 0 = as many as allowed leaves */
	int deg;     /* random partners per rank; 0 = all-zero matrix */
};

static const struct shape shapes[] = {
    {"tleaf 3 3 1 3 1 3 1", 100, 0, 3},
    {"tleaf 2 5 1 5 1", 100, 0, 4},
    {"tleaf 3 6 1 2 1 6 1", 100, 0, 3},
    {"tleaf 3 7 1 3 1 2 1", 100, 0, 2},
    {"tleaf 3 10 1 10 1 2 1", 100, 0, 4},
    {"tleaf 2 14 1 14 1", 100, 0, 3},
    {"tleaf 4 2 1 14 1 2 1 7 1", 100, 0, 3},
    {"tleaf 3 4 1 2 1 4 1", 60, 0, 3},          /* partial allocation */
    {"tleaf 3 5 1 6 1 7 1", 45, 0, 4},          /* partial, odd arities */
    {"tleaf 3 10 1 2 1 7 1", 70, 50, 3},        /* partial and fewer ranks */
    {"tleaf 4 2 1 2 1 2 1 4 1", 100, 21, 4},    /* fewer ranks than leaves */
    {"tleaf 3 3 1 5 1 14 1", 100, 100, 2},      /* fewer ranks, arity 14 */
    {"tleaf 2 4 1 4 1", 100, 1, 0},             /* a single rank */
    {"tleaf 3 4 1 3 1 2 1", 100, 0, 0},         /* all-zero matrix */
    {"tleaf 3 4 1 3 1 2 1", 50, 7, 0},          /* all-zero, partial, fewer */
    {"tleaf 1 9 1", 100, 9, 8},                 /* one level */
    {"tleaf 5 2 1 3 1 2 1 5 1 2 1", 100, 0, 3}, /* deep, mixed */
    {"tleaf 2 100 1 2 1", 70, 0, 3},            /* wide and partial */
    {"tleaf 2 12 1 6 1", 80, 0, 4},             /* composite arity, partial */
};

Test(mappers, every_mapper_every_shape_is_valid)
{
	const char *const *names = tmatch_map_mappers();

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		tmatch_topo_t *t = tree(shapes[s].spec);
		if (shapes[s].percent < 100)
			restrict_leaves(t, shapes[s].percent, shapes[s].ranks, 77 + s);
		int n = shapes[s].ranks ? shapes[s].ranks : tmatch_topo_nb_allowed(t);
		tmatch_comm_t *c = random_comm(n, shapes[s].deg, 5 + s);

		for (int i = 0; names[i]; i++)
			for (int refine = 0; refine < 2; refine++) {
				char name[64];
				snprintf(name, sizeof(name), "%s%s", names[i],
				         refine ? "+refine" : "");
				free(map_with(c, t, name, 3)); /* map_with validates */
			}
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

Test(mappers, registry_lists_ours_with_refine_variants)
{
	for (size_t i = 0; i < NOURS; i++) {
		char name[64];
		cr_assert_eq(tmatch_map_check_name(ours[i], NULL), 0, "%s", ours[i]);
		snprintf(name, sizeof(name), "%s+refine", ours[i]);
		cr_assert_eq(tmatch_map_check_name(name, NULL), 0, "%s", name);
	}
	errno = 0;
	cr_assert_eq(tmatch_map_check_name("bisect+refine+refine", NULL), -1);
	cr_assert_eq(errno, EINVAL);
}

Test(mappers, too_many_ranks_is_einval_and_output_untouched)
{
	tmatch_topo_t *t = tree("tleaf 2 2 1 3 1");
	tmatch_comm_t *c = random_comm(7, 2, 1);
	tmatch_map_opts_t o;
	tmatch_error_t err;
	int m[7];

	for (size_t i = 0; i < NOURS; i++) {
		tmatch_map_opts_init(&o);
		o.mapper = ours[i];
		for (int r = 0; r < 7; r++)
			m[r] = -5;
		errno = 0;
		cr_assert_eq(tmatch_map_compute(c, t, &o, m, &err), -1);
		cr_assert_eq(errno, EINVAL);
		for (int r = 0; r < 7; r++)
			cr_assert_eq(m[r], -5);
	}
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

/* ------------------------------------------------------------------------ */
/* Refinement                                                                */

Test(refine, never_increases_hop_bytes)
{
	static const char *const specs[] = {"tleaf 3 4 1 2 1 4 1", "tleaf 3 5 1 3 1 7 1",
	                                    "tleaf 2 10 1 14 1", "tleaf 4 3 1 2 1 2 1 6 1"};

	for (uint64_t seed = 1; seed <= 24; seed++) {
		tmatch_topo_t *t = tree(specs[seed % 4]);
		if (seed % 3 == 0)
			restrict_leaves(t, 70, 4, seed);
		int na = tmatch_topo_nb_allowed(t), n = seed % 2 ? na : na * 2 / 3;
		tmatch_comm_t *c = random_comm(n, 1 + (int)(seed % 5), seed);
		tmatch_map_opts_t o;
		int *m = map_with(c, t, "random", seed);
		double before = tmatch__hop_bytes(c, t, m), after;

		tmatch_map_opts_init(&o);
		o.seed = seed;
		if (seed % 4 == 1)
			o.iter_budget = 1 + (long)seed * 50; /* tiny budgets stop anywhere */
		cr_assert_eq(tmatch__refine(c, t, &o, m, NULL), 0);
		cr_assert_eq(tmatch_map_validate(t, m, n, NULL), 0);
		after = tmatch__hop_bytes(c, t, m);
		cr_assert_leq(after, before, "seed %llu: %g > %g", (unsigned long long)seed, after,
		              before);
		free(m);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

/*
 * tmatch__refine from a random placement, with *toggle 1 and 0, on one
 * of specs (by seed) with every leaf or three quarters of them used, the
 * matrix made by comm_of: the placements must be the same, and better
 * than the start.
 */
static void refine_same_either_way(int *toggle, const char *const specs[3],
                                   tmatch_comm_t *(*comm_of)(int n, uint64_t seed))
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		tmatch_topo_t *t = tree(specs[seed % 3]);
		int nl = tmatch_topo_nb_leaves(t), n = seed % 2 ? nl : nl * 3 / 4;
		tmatch_comm_t *c = comm_of(n, seed);
		int *on = map_with(c, t, "random", seed), *off = malloc(sizeof(int) * (size_t)n);
		tmatch_map_opts_t o;
		double start = tmatch__hop_bytes(c, t, on);

		cr_assert_not_null(off);
		memcpy(off, on, sizeof(int) * (size_t)n);
		tmatch_map_opts_init(&o);
		o.seed = seed;
		cr_assert_eq(tmatch__refine(c, t, &o, on, NULL), 0);
		*toggle = 0;
		cr_assert_eq(tmatch__refine(c, t, &o, off, NULL), 0);
		*toggle = 1;
		cr_assert_eq(tmatch_map_validate(t, on, n, NULL), 0);
		cr_expect_lt(tmatch__hop_bytes(c, t, on), start, "seed %llu",
		             (unsigned long long)seed);
		for (int q = 0; q < n; q++)
			cr_assert_eq(on[q], off[q], "seed %llu, rank %d: leaf %d, %d",
			             (unsigned long long)seed, q, on[q], off[q]);
		free(on);
		free(off);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

static tmatch_comm_t *dense_comm(int n, uint64_t seed)
{
	return random_comm(n, n / 2, seed); /* degree > 4 x depth */
}

static tmatch_comm_t *sparse_comm(int n, uint64_t seed)
{
	return seed == 6 ? stencil(16, n / 16, 5) : random_comm(n, 4, seed);
}

/* Threshold accepting's aggregates (dense inputs) only regroup the sums
   of its moves: with integer weights the placements are the same with and
   without them, on full trees and with free leaves (moves onto them). */
Test(refine, aggregates_place_as_the_sums_over_edges)
{
	static const char *const specs[] = {"tleaf 3 2 1 3 1 16 1", "tleaf 4 2 1 2 1 4 1 4 1",
	                                    "tleaf 2 4 1 24 1"};

	refine_same_either_way(&tmatch__refine_aggregates, specs, dense_comm);
}

/*
 * The descent reads the leaf level's edges from the matrix itself (no copy
 * of it: 100 MB at 1,048,576 ranks): the same placements as from the
 * contracted copy, on sparse inputs in any numbering, on full and partial
 * trees.
 */
Test(refine, leaf_level_from_the_matrix_places_as_from_its_copy)
{
	static const char *const specs[] = {"tleaf 3 4 1 8 1 16 1", "tleaf 4 2 1 4 1 2 1 32 1",
	                                    "tleaf 2 16 1 32 1"};

	refine_same_either_way(&tmatch__refine_leaf_view, specs, sparse_comm);
}

Test(refine, improves_a_bad_mapping)
{
	tmatch_topo_t *t = tree("tleaf 3 4 1 4 1 4 1");
	tmatch_comm_t *c = stencil(8, 8, 0);
	int *m = map_with(c, t, "random", 9);
	double before = tmatch__hop_bytes(c, t, m);
	tmatch_map_opts_t o;

	tmatch_map_opts_init(&o);
	cr_assert_eq(tmatch__refine(c, t, &o, m, NULL), 0);
	/* a random placement of a stencil is far from optimal: expect a real gain */
	cr_assert_lt(tmatch__hop_bytes(c, t, m), 0.8 * before);
	free(m);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(refine, finds_the_optimum_of_a_pairing)
{
	/* 8 disjoint heavy pairs on 4 x 2 x 2: optimum = every pair in one socket */
	struct edges e = {0};
	tmatch_topo_t *t = tree("tleaf 3 4 1 2 1 2 1");
	tmatch_comm_t *c;
	tmatch_map_opts_t o;
	int *m;

	for (int i = 0; i < 8; i++)
		add_edge(&e, i, i + 8, 100);
	c = build(16, &e);
	m = map_with(c, t, "packed", 1); /* worst case: every pair crosses the root */
	tmatch_map_opts_init(&o);
	cr_assert_eq(tmatch__refine(c, t, &o, m, NULL), 0);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(m[i] / 2, m[i + 8] / 2, "pair %d on leaves %d and %d", i, m[i],
		             m[i + 8]);
	free(m);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

/* ------------------------------------------------------------------------ */
/* Determinism                                                               */

Test(mappers, same_seed_same_mapping)
{
	tmatch_topo_t *t = tree("tleaf 3 6 1 2 1 5 1");
	tmatch_comm_t *c = random_comm(55, 3, 42);

	restrict_leaves(t, 80, 55, 4);
	for (size_t i = 0; i < NOURS; i++)
		for (int refine = 0; refine < 2; refine++) {
			char name[64];
			snprintf(name, sizeof(name), "%s%s", ours[i], refine ? "+refine" : "");
			int *a = map_with(c, t, name, 11), *b = map_with(c, t, name, 11);
			cr_assert_arr_eq(a, b, sizeof(int) * 55, "%s differs between runs", name);
			free(a);
			free(b);
		}
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

/* auto's node-size candidates run on a crew: the placement is the one
   one thread finds, on sparse (every candidate refined) and dense inputs,
   whole and partial trees. */
/* The placement of `mapper` on every CPU this process may use and on one
   of them (the crew's threads then come to 1) are the same. */
static void same_on_one_thread(const tmatch_comm_t *c, const tmatch_topo_t *t, const char *mapper,
                               uint64_t seed)
{
	int n = tmatch_comm_order(c), *many, *single;
	cpu_set_t all, one;

	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &all)) {
			CPU_SET(cpu, &one);
			break;
		}
	many = map_with(c, t, mapper, seed);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	cr_assert_eq(tmatch__crew_threads(TMATCH__CREW_MAX), 1);
	single = map_with(c, t, mapper, seed);
	cr_assert_eq(sched_setaffinity(0, sizeof(all), &all), 0);
	cr_assert_arr_eq(many, single, sizeof(int) * (size_t)n, "%s, seed %llu", mapper,
	                 (unsigned long long)seed);
	free(many);
	free(single);
}

Test(mappers, auto_places_the_same_on_one_thread_or_several)
{
	static const char *const specs[] = {"tleaf 3 2 1 4 1 16 1", "tleaf 4 2 1 2 1 4 1 4 1"};

	for (uint64_t seed = 1; seed <= 4; seed++) {
		tmatch_topo_t *t = tree(specs[seed % 2]);
		int nl = tmatch_topo_nb_leaves(t), n = seed <= 2 ? nl : nl * 3 / 4;
		tmatch_comm_t *c = random_comm(n, seed % 2 ? 3 : n, seed);

		same_on_one_thread(c, t, "auto", seed);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

/* Large enough that the bisection places the children of its first split
   on several threads; all the leaves, then part of them (uneven children). */
Test(mappers, bisect_places_the_same_on_one_thread_or_several)
{
	for (uint64_t seed = 1; seed <= 2; seed++) {
		tmatch_topo_t *t =
		    tree(seed == 1 ? "tleaf 4 16 1 16 1 8 1 8 1" : "tleaf 4 20 1 16 1 8 1 8 1");
		int n = seed == 1 ? 16384 : 17000;
		tmatch_comm_t *c = random_comm(n, 3, seed);

		same_on_one_thread(c, t, "bisect", seed);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

/* ------------------------------------------------------------------------ */
/* Known optima                                                              */

/* Permuted block-diagonal matrix: blocks of `bs` ranks, each a clique. */
static tmatch_comm_t *blocks(int nb, int bs, uint64_t seed, int **block_of)
{
	struct edges e = {0};
	int n = nb * bs, *p = shuffled(n, seed);

	*block_of = malloc(sizeof(int) * (size_t)n);
	cr_assert_not_null(*block_of);
	for (int i = 0; i < n; i++)
		(*block_of)[p[i]] = i / bs;
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < bs; i++)
			for (int j = i + 1; j < bs; j++)
				add_edge(&e, p[b * bs + i], p[b * bs + j], 10 + (i + j) % 3);
	free(p);
	return build(n, &e);
}

Test(mappers, block_diagonal_blocks_land_in_subtrees)
{
	static const struct {
		const char *spec;
		int nb, bs, span; /* span = leaves of the subtree a block must fill */
	} cases[] = {
	    {"tleaf 3 4 1 2 1 4 1", 4, 8, 8},
	    {"tleaf 2 5 1 6 1", 5, 6, 6},
	    {"tleaf 3 3 1 7 1 2 1", 3, 14, 14},
	    {"tleaf 3 2 1 10 1 3 1", 20, 3, 3},
	};
	static const char *const exact[] = {"greedy", "rcm", "bisect", "auto", "treematch+refine"};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int *block_of;
		tmatch_topo_t *t = tree(cases[k].spec);
		tmatch_comm_t *c = blocks(cases[k].nb, cases[k].bs, 100 + k, &block_of);
		int n = cases[k].nb * cases[k].bs;

		for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
			int *m = map_with(c, t, exact[i], 1);
			for (int a = 0; a < n; a++)
				for (int b = 0; b < n; b++)
					if (block_of[a] == block_of[b])
						cr_assert_eq(
						    m[a] / cases[k].span, m[b] / cases[k].span,
						    "%s on %s: ranks %d and %d of one block split",
						    exact[i], cases[k].spec, a, b);
			free(m);
		}
		free(block_of);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

Test(mappers, partial_blocks_use_the_roomy_subtrees)
{
	/* 2 nodes x 4 cores, node 0 has 1 allowed core, node 1 all 4: a 4-clique goes on node 1 */
	static const int allowed[] = {0, 4, 5, 6, 7};
	struct edges e = {0};
	tmatch_topo_t *t = tree("tleaf 2 2 1 4 1");
	tmatch_comm_t *c;

	cr_assert_eq(tmatch_topo_set_allowed(t, allowed, 5, NULL), 0);
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			add_edge(&e, i, j, 5);
	c = build(4, &e);
	for (size_t i = 0; i < NOURS; i++) {
		int *m = map_with(c, t, ours[i], 1);
		for (int r = 0; r < 4; r++)
			cr_assert_geq(m[r], 4, "%s put rank %d on node 0", ours[i], r);
		free(m);
	}
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(mappers, permuted_stencil_close_to_ordered)
{
	/* 16 x 8 stencil on 4 nodes x 2 sockets x 16 cores... as 8 x 16 leaves */
	tmatch_topo_t *t = tree("tleaf 3 8 1 2 1 8 1");
	tmatch_comm_t *ordered = stencil(16, 8, 0), *permuted = stencil(16, 8, 99);
	int *mo = map_with(ordered, t, "packed", 1);
	double packed = tmatch__hop_bytes(ordered, t, mo);

	for (size_t i = 0; i < NOURS; i++) {
		if (strcmp(ours[i], "rcm") == 0 || strcmp(ours[i], "greedy") == 0)
			continue; /* no quality promise for these alone */
		int *m = map_with(permuted, t, ours[i], 1);
		/* packed on the ordered stencil is a good placement; ours must match it
		   within 5 % without knowing the order */
		cr_assert_leq(tmatch__hop_bytes(permuted, t, m), 1.05 * packed, "%s", ours[i]);
		free(m);
	}
	free(mo);
	tmatch_comm_destroy(ordered);
	tmatch_comm_destroy(permuted);
	tmatch_topo_destroy(t);
}

/* ------------------------------------------------------------------------ */
/* auto                                                                      */

/* Hop-bytes of treematch run on the ranks renumbered by bisect's leaf order, then refined. */
static double treematch_on_bisect_order(const tmatch_comm_t *c, const tmatch_topo_t *t,
                                        uint64_t seed)
{
	int n = tmatch_comm_order(c), nl = tmatch_topo_nb_leaves(t), k = 0;
	int *by = map_with(c, t, "bisect", seed), *rank_at = malloc(sizeof(int) * (size_t)nl);
	int *new_of = malloc(sizeof(int) * (size_t)n), *m, *back = malloc(sizeof(int) * (size_t)n);
	struct edges e = {0};
	tmatch_comm_t *re;
	tmatch_map_opts_t o;
	double h;

	cr_assert(rank_at && new_of && back);
	for (int lf = 0; lf < nl; lf++)
		rank_at[lf] = -1;
	for (int r = 0; r < n; r++)
		rank_at[by[r]] = r;
	for (int lf = 0; lf < nl; lf++)
		if (rank_at[lf] >= 0)
			new_of[rank_at[lf]] = k++;
	for (int i = 0; i < n; i++) {
		const int *cols;
		const double *w;
		int len = tmatch_comm_row(c, i, &cols, &w);
		for (int j = 0; j < len; j++)
			if (cols[j] > i)
				add_edge(&e, new_of[i], new_of[cols[j]], w[j]);
	}
	re = build(n, &e);
	m = map_with(re, t, "treematch", seed);
	for (int r = 0; r < n; r++)
		back[r] = m[new_of[r]];
	tmatch_map_opts_init(&o);
	o.seed = seed;
	cr_assert_eq(tmatch__refine(c, t, &o, back, NULL), 0); /* refined in the user's numbering */
	h = tmatch__hop_bytes(c, t, back);
	free(by);
	free(rank_at);
	free(new_of);
	free(m);
	free(back);
	tmatch_comm_destroy(re);
	return h;
}

Test(mappers, auto_keeps_the_lowest_cost_candidate)
{
	static const char *const cands[] = {"bisect+refine", "treematch+refine", "greedy+refine",
	                                    "packed+refine", "rcm+refine"};
	static const char *const specs[] = {"tleaf 3 4 1 2 1 4 1", "tleaf 3 5 1 2 1 7 1",
	                                    "tleaf 2 10 1 6 1"};

	for (int s = 0; s < 3; s++) {
		tmatch_topo_t *t = tree(specs[s]);
		int n = tmatch_topo_nb_allowed(t) - s;
		tmatch_comm_t *c = random_comm(n, 3, 17 + (uint64_t)s);
		int *a = map_with(c, t, "auto", 5);
		double best = -1, got = tmatch__hop_bytes(c, t, a);

		for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
			int *m = map_with(c, t, cands[i], 5);
			double h = tmatch__hop_bytes(c, t, m);
			if (best < 0 || h < best)
				best = h;
			free(m);
		}
		cr_assert_leq(got, best, "%s: auto %g above a candidate's %g", specs[s], got, best);
		/* auto also tries bisect with the next seeds on small inputs (24 up to
		   64 ranks, 12 up to 128, 6 up to 256) */
		for (uint64_t k = 1; k < 24; k++) {
			int *m = map_with(c, t, "bisect+refine", 5 + k);
			double h = tmatch__hop_bytes(c, t, m);
			if (h < best)
				best = h;
			free(m);
		}
		/* ... and treematch on the ranks renumbered in the first bisection's leaf order */
		{
			double h = treematch_on_bisect_order(c, t, 5);
			if (h < best)
				best = h;
		}
		/* (with fewer ranks than leaves, also the bisection with spread
		   shares, which no mapper name reaches: at or below) */
		if (n == tmatch_topo_nb_allowed(t))
			cr_assert_eq(got, best, "%s: auto %g, best candidate %g", specs[s], got,
			             best);
		else
			cr_assert_leq(got, best, "%s: auto %g, best candidate %g", specs[s], got,
			              best);
		free(a);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

/* Dense hierarchical traffic (every pair talks, less across bigger blocks), ranks shuffled. */
static tmatch_comm_t *dense_hier(int n, uint64_t perm_seed)
{
	static const int block[] = {2, 8, 32, 256};
	static const double weight[] = {10000, 2000, 400, 80, 16};
	struct edges e = {0};
	int *p = shuffled(n, perm_seed);

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			int k = 0;
			while (k < 4 && i / block[k] != j / block[k])
				k++;
			add_edge(&e, p[i], p[j], weight[k]);
		}
	free(p);
	return build(n, &e);
}

Test(mappers, auto_is_never_above_bisect_on_dense_inputs)
{
	/* odd arities, one partial allocation: where the split matters most */
	static const char *const specs[] = {"tleaf 3 5 1 6 1 10 1", "tleaf 3 7 1 7 1 7 1",
	                                    "tleaf 4 2 1 8 1 2 1 4 1"};

	for (int s = 0; s < 3; s++) {
		tmatch_topo_t *t = tree(specs[s]);
		int n;
		tmatch_comm_t *c;
		int *a, *b;

		if (s == 2)
			restrict_leaves(t, 75, 96, 11);
		n = tmatch_topo_nb_allowed(t);
		c = dense_hier(n, 29 + (uint64_t)s);
		cr_assert_gt(tmatch_comm_nnz(c) / (size_t)n, 64, "%s: not dense", specs[s]);
		a = map_with(c, t, "auto", 3);
		b = map_with(c, t, "bisect", 3);
		cr_assert_leq(tmatch__hop_bytes(c, t, a), tmatch__hop_bytes(c, t, b),
		              "%s: auto above bisect", specs[s]);
		free(a);
		free(b);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

/* Every pair of the n ranks exchanges `w`, except the pairs (i, i + n/2 + 1) with `heavy`. */
static tmatch_comm_t *alltoall(int n, double w, double heavy)
{
	struct edges e = {0};

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			add_edge(&e, i, j, j == i + n / 2 + 1 ? heavy : w);
	return build(n, &e);
}

Test(mappers, auto_keeps_packed_when_every_placement_costs_the_same)
{
	static const char *const specs[] = {"tleaf 3 3 1 5 1 7 1", "tleaf 2 4 1 8 1"};

	for (int s = 0; s < 2; s++) {
		tmatch_topo_t *t = tree(specs[s]);
		int n, *a, *p, *b;
		tmatch_comm_t *c;

		if (s == 1)
			restrict_leaves(t, 60, 8, 5);
		n = tmatch_topo_nb_allowed(t);
		c = alltoall(n, 7, 7);
		a = map_with(c, t, "auto", 1);
		p = map_with(c, t, "packed", 1);
		b = map_with(c, t, "bisect", 1);
		cr_assert_arr_eq(a, p, sizeof(int) * (size_t)n, "%s", specs[s]);
		/* what makes packed as good as any: another placement costs the same */
		cr_assert_eq(tmatch__hop_bytes(c, t, b), tmatch__hop_bytes(c, t, a), "%s",
		             specs[s]);
		free(a);
		free(p);
		free(b);
		tmatch_comm_destroy(c);
		/* one heavier pair per rank: placements differ, auto does better than packed */
		c = alltoall(n, 7, 700);
		a = map_with(c, t, "auto", 1);
		p = map_with(c, t, "packed", 1);
		cr_assert_lt(tmatch__hop_bytes(c, t, a), tmatch__hop_bytes(c, t, p), "%s",
		             specs[s]);
		free(a);
		free(p);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

/* The info line in which auto names the candidate it kept. */
struct kept_log {
	char kept[160];
};

static void kept_log(void *arg, int level, const char *msg)
{
	struct kept_log *k = arg;

	if (level == TMATCH_LOG_INFO && strncmp(msg, "auto: kept ", 11) == 0)
		snprintf(k->kept, sizeof(k->kept), "%s", msg + 11);
}

Test(mappers, numbering_with_locality_is_told_from_a_permuted_one)
{
	tmatch_topo_t *t = tree("tleaf 3 8 1 64 1 8 1"), *small = tree("tleaf 2 4 1 4 1");
	tmatch_comm_t *ordered = stencil(64, 64, 0), *permuted = stencil(64, 64, 99);
	tmatch_comm_t *none = random_comm(4096, 0, 1), *tiny = stencil(4, 4, 99);

	cr_assert(tmatch__order_is_local(ordered, t));
	/* 16 ranks in groups of 4: any order keeps about a fifth together */
	cr_assert_not(tmatch__order_is_local(tiny, small));
	cr_assert_not(tmatch__order_is_local(permuted, t));
	cr_assert_not(tmatch__order_is_local(none, t), "no traffic has no locality");
	tmatch_comm_destroy(ordered);
	tmatch_comm_destroy(permuted);
	tmatch_comm_destroy(none);
	tmatch_comm_destroy(tiny);
	tmatch_topo_destroy(t);
	tmatch_topo_destroy(small);
}

/*
 * Above 65,536 ranks auto runs TreeMatch in place of the bisection when
 * the numbering has locality (1,048,576 ranks: 0.9 s instead of 17 s, and
 * a lower cost) or the matrix is stencil-like whatever its numbering
 * (TreeMatch then breaks ties breadth first), unless the leaves are a flat
 * row of slots (a layout's nodes), where the bisection cuts less; on
 * irregular graphs the bisection runs, its upper levels guided by a
 * coarse graph.
 */
Test(mappers, auto_above_65536_ranks_follows_the_numbering_and_the_graph, .timeout = 300)
{
	tmatch_topo_t *t = tree("tleaf 4 576 1 16 1 2 1 4 1"); /* 73,728 leaves */
	tmatch_topo_t *flat = tree("tleaf 3 36 1 16 1 128 1"); /* rows of 128 slots */
	tmatch_comm_t *ordered = stencil(288, 256, 0), *permuted = stencil(288, 256, 7);
	tmatch_comm_t *irregular = random_comm(288 * 256, 4, 3);
	struct kept_log k = {{0}};
	tmatch_map_opts_t o;
	tmatch_error_t err;
	int n = 288 * 256, *a = malloc(sizeof(int) * (size_t)n);
	int *tm = map_with(ordered, t, "treematch", 1), *bi = map_with(ordered, t, "bisect", 1);
	int *tp = map_with(permuted, t, "treematch", 1), *pk = map_with(irregular, t, "packed", 1);
	double h_tm = tmatch__hop_bytes(ordered, t, tm), h_bi = tmatch__hop_bytes(ordered, t, bi);

	cr_assert_not_null(a);
	tmatch_map_opts_init(&o);
	o.seed = 1;
	o.log = kept_log;
	o.log_arg = &k;
	cr_assert_eq(tmatch_map_compute(ordered, t, &o, a, &err), 0, "%s", err.msg);
	cr_assert_eq(strncmp(k.kept, "treematch seed", 14), 0, "kept %s", k.kept);
	/* in place of the bisection: TreeMatch, packed and rcm */
	cr_assert_not_null(strstr(k.kept, " of 3 candidates"), "kept %s", k.kept);
	cr_assert_eq(tmatch__hop_bytes(ordered, t, a), h_tm);
	cr_assert_leq(h_tm, h_bi, "treematch %g above the bisection's %g", h_tm, h_bi);
	/* the permuted stencil: breadth-first ties keep TreeMatch close to the
	   ordered cost, and auto keeps it */
	cr_assert_leq(tmatch__hop_bytes(permuted, t, tp), 1.05 * h_tm);
	k.kept[0] = 0;
	cr_assert_eq(tmatch_map_compute(permuted, t, &o, a, &err), 0, "%s", err.msg);
	cr_assert_eq(strncmp(k.kept, "treematch seed", 14), 0, "kept %s", k.kept);
	cr_assert_eq(tmatch__hop_bytes(permuted, t, a), tmatch__hop_bytes(permuted, t, tp));
	/* on rows of 128 slots the bisection, guided, within 5 % of TreeMatch
	   on the ordered ranks */
	k.kept[0] = 0;
	cr_assert_eq(tmatch_map_compute(permuted, flat, &o, a, &err), 0, "%s", err.msg);
	cr_assert_eq(tmatch_map_validate(flat, a, n, &err), 0, "%s", err.msg);
	cr_assert_eq(strncmp(k.kept, "bisect", 6), 0, "kept %s", k.kept);
	{
		int *ft = map_with(ordered, flat, "treematch", 1);

		cr_assert_leq(tmatch__hop_bytes(permuted, flat, a),
		              1.05 * tmatch__hop_bytes(ordered, flat, ft));
		free(ft);
	}
	/* an irregular graph (8 entries per rank): the bisection, the same
	   twice; beside it only packed (rcm never won there) */
	k.kept[0] = 0;
	cr_assert_eq(tmatch_map_compute(irregular, t, &o, a, &err), 0, "%s", err.msg);
	cr_assert_eq(tmatch_map_validate(t, a, n, &err), 0, "%s", err.msg);
	cr_assert_eq(strncmp(k.kept, "bisect", 6), 0, "kept %s", k.kept);
	cr_assert_not_null(strstr(k.kept, " of 2 candidates"), "kept %s", k.kept);
	{
		int *rc = map_with(irregular, t, "rcm", 1);

		cr_assert_lt(tmatch__hop_bytes(irregular, t, a),
		             tmatch__hop_bytes(irregular, t, rc));
		free(rc);
	}
	cr_assert_lt(tmatch__hop_bytes(irregular, t, a),
	             0.95 * tmatch__hop_bytes(irregular, t, pk));
	{
		int *again = map_with(irregular, t, "bisect", 1),
		    *once = map_with(irregular, t, "bisect", 1);

		cr_assert_eq(memcmp(again, once, sizeof(int) * (size_t)n), 0,
		             "bisect not deterministic");
		free(again);
		free(once);
	}
	free(a);
	free(tm);
	free(bi);
	free(tp);
	free(pk);
	tmatch_comm_destroy(ordered);
	tmatch_comm_destroy(permuted);
	tmatch_comm_destroy(irregular);
	tmatch_topo_destroy(t);
	tmatch_topo_destroy(flat);
}

/*
 * Fewer ranks than leaves: two 16-rank tori with a light link between them
 * on 2 nodes of 2 x 12 cores. Filling the roomier node first (24 + 8)
 * splits a torus across nodes; auto also tries the bisection with the
 * shares spread (16 + 16), which keeps each torus in a node (it kept 24 +
 * 8, 9 % more, before).
 */
Test(mappers, auto_spreads_a_partial_allocation_when_that_costs_less)
{
	tmatch_topo_t *t = tree("tleaf 3 2 1 2 1 12 1");
	struct edges e = {0};
	tmatch_comm_t *c;
	int *a, per_node[2] = {0, 0};

	for (int blk = 0; blk < 2; blk++)
		for (int y = 0; y < 4; y++)
			for (int x = 0; x < 4; x++) {
				int r = blk * 16 + y * 4 + x;

				add_edge(&e, r, blk * 16 + y * 4 + (x + 1) % 4, 100);
				add_edge(&e, r, blk * 16 + (y + 1) % 4 * 4 + x, 100);
			}
	for (int i = 0; i < 16; i++)
		add_edge(&e, i, 16 + i, 1);
	c = build(32, &e);
	a = map_with(c, t, "auto", 1);
	for (int r = 0; r < 32; r++)
		per_node[a[r] / 24]++;
	cr_assert_eq(per_node[0], 16, "%d + %d ranks per node", per_node[0], per_node[1]);
	cr_assert_eq(tmatch__hop_bytes(c, t, a), 16096);
	free(a);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(mappers, default_is_auto)
{
	tmatch_topo_t *t = tree("tleaf 3 4 1 2 1 4 1");
	tmatch_comm_t *c = stencil(8, 4, 3);
	tmatch_map_opts_t o;
	int a[32], *b = map_with(c, t, "auto", 1);

	tmatch_map_opts_init(&o);
	cr_assert_str_eq(o.mapper, "auto");
	cr_assert_eq(tmatch_map_compute(c, t, NULL, a, NULL), 0);
	cr_assert_arr_eq(a, b, sizeof(a));
	free(b);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

struct log_count {
	int warnings;
};

static void count_log(void *arg, int level, const char *msg)
{
	(void)msg;
	if (level == TMATCH_LOG_WARNING)
		((struct log_count *)arg)->warnings++;
}

Test(refine, time_budget_is_a_safety_cap_reported_through_the_log)
{
	tmatch_topo_t *t = tree("tleaf 3 8 1 4 1 8 1");
	tmatch_comm_t *c = random_comm(256, 6, 8);
	int *m = map_with(c, t, "random", 2);
	double before = tmatch__hop_bytes(c, t, m);
	struct log_count lc = {0};
	tmatch_map_opts_t o;

	tmatch_map_opts_init(&o);
	o.time_budget = 1e-9; /* expires at the first clock check */
	o.log = count_log;
	o.log_arg = &lc;
	cr_assert_eq(tmatch__refine(c, t, &o, m, NULL), 0);
	cr_assert_eq(tmatch_map_validate(t, m, 256, NULL), 0);
	cr_assert_leq(tmatch__hop_bytes(c, t, m), before);
	cr_assert_eq(lc.warnings, 1, "the cap being hit is logged once as a warning");
	free(m);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(refine, iteration_budget_drives_the_result)
{
	tmatch_topo_t *t = tree("tleaf 3 4 1 4 1 4 1");
	tmatch_comm_t *c = stencil(8, 8, 21);
	tmatch_map_opts_t o;
	int *small = map_with(c, t, "random", 4), *large = map_with(c, t, "random", 4);

	tmatch_map_opts_init(&o);
	o.iter_budget = 50;
	cr_assert_eq(tmatch__refine(c, t, &o, small, NULL), 0);
	o.iter_budget = 5000000;
	cr_assert_eq(tmatch__refine(c, t, &o, large, NULL), 0);
	/* a larger budget goes at least as far (the descent is the same prefix) */
	cr_assert_leq(tmatch__hop_bytes(c, t, large), tmatch__hop_bytes(c, t, small));
	free(small);
	free(large);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

/* ------------------------------------------------------------------------ */
/* The budgeted search (tmatch__search, auto's --budget)                     */

Test(search, never_worse_valid_and_deterministic)
{
	tmatch_topo_t *t = tree("tleaf 3 8 1 4 1 8 1");
	tmatch_comm_t *c = random_comm(256, 6, 31);
	tmatch_map_opts_t o;

	tmatch_map_opts_init(&o);
	for (uint64_t seed = 1; seed <= 4; seed++) {
		int *a = map_with(c, t, "bisect+refine", seed),
		    *b = map_with(c, t, "bisect+refine", seed);
		double before = tmatch__hop_bytes(c, t, a);

		o.seed = seed;
		cr_assert_eq(tmatch__search(c, t, &o, 2000000, a, NULL), 0);
		cr_assert_eq(tmatch__search(c, t, &o, 2000000, b, NULL), 0);
		cr_assert_eq(tmatch_map_validate(t, a, 256, NULL), 0);
		cr_assert_leq(tmatch__hop_bytes(c, t, a), before);
		cr_assert_arr_eq(a, b, 256 * sizeof(int), "same seed and steps, same mapping");
		free(a);
		free(b);
	}
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(search, improves_on_the_refinement_of_a_random_mapping)
{
	tmatch_topo_t *t = tree("tleaf 3 4 1 4 1 8 1");
	tmatch_comm_t *c = random_comm(128, 4, 77);
	int *m = map_with(c, t, "random+refine", 3);
	double refined = tmatch__hop_bytes(c, t, m);
	tmatch_map_opts_t o;

	tmatch_map_opts_init(&o);
	cr_assert_eq(tmatch__search(c, t, &o, 20000000, m, NULL), 0);
	/* the refinement stops at a local optimum of its swaps: the kicks and
	   the N_C descent get below it */
	cr_assert_lt(tmatch__hop_bytes(c, t, m), refined);
	free(m);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(search, moves_ranks_onto_free_leaves_of_a_partial_tree)
{
	tmatch_topo_t *t = tree("tleaf 3 4 1 4 1 4 1");
	tmatch_comm_t *c = random_comm(40, 4, 5);
	int *m;
	tmatch_map_opts_t o;

	restrict_leaves(t, 50, 40, 9);
	m = map_with(c, t, "random", 6);
	tmatch_map_opts_init(&o);
	double before = tmatch__hop_bytes(c, t, m);
	cr_assert_eq(tmatch__search(c, t, &o, 5000000, m, NULL), 0);
	cr_assert_eq(tmatch_map_validate(t, m, 40, NULL), 0, "only allowed leaves, one rank each");
	cr_assert_lt(tmatch__hop_bytes(c, t, m), before);
	free(m);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

struct info_log {
	int left_out, searched;
};

static void info_log(void *arg, int level, const char *msg)
{
	struct info_log *l = arg;

	if (level != TMATCH_LOG_INFO)
		return;
	l->left_out += strstr(msg, "too small") != NULL;
	l->searched += strstr(msg, "auto: search of") != NULL;
}

Test(search, auto_with_a_budget_is_never_above_auto_and_deterministic)
{
	tmatch_topo_t *t = tree("tleaf 3 8 1 4 1 8 1");
	tmatch_comm_t *c = random_comm(256, 5, 12);
	tmatch_map_opts_t o;
	int a[256], b[256], plain[256];
	struct info_log l = {0, 0};

	tmatch_map_opts_init(&o);
	cr_assert_eq(tmatch_map_compute(c, t, &o, plain, NULL), 0);
	o.search_time = 0.5;
	o.log = info_log;
	o.log_arg = &l;
	cr_assert_eq(tmatch_map_compute(c, t, &o, a, NULL), 0);
	cr_assert_eq(tmatch_map_compute(c, t, &o, b, NULL), 0);
	cr_assert_eq(l.searched, 2, "the search ran, and said so");
	cr_assert_arr_eq(a, b, sizeof(a),
	                 "the budget is counted in steps, not read from the clock");
	cr_assert_leq(tmatch__hop_bytes(c, t, a), tmatch__hop_bytes(c, t, plain));
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(search, auto_leaves_out_a_budget_too_small_to_search)
{
	tmatch_topo_t *t = tree("tleaf 3 8 1 4 1 8 1");
	tmatch_comm_t *c = random_comm(256, 5, 12);
	tmatch_map_opts_t o;
	int a[256], plain[256];
	struct info_log l = {0, 0};

	tmatch_map_opts_init(&o);
	cr_assert_eq(tmatch_map_compute(c, t, &o, plain, NULL), 0);
	o.search_time = 1e-6; /* 20 steps: not one pass over the edges */
	o.log = info_log;
	o.log_arg = &l;
	cr_assert_eq(tmatch_map_compute(c, t, &o, a, NULL), 0);
	cr_assert_eq(l.left_out, 1);
	cr_assert_eq(l.searched, 0);
	cr_assert_arr_eq(a, plain, sizeof(a), "left out: the default mapping");
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}
