/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_treematch_map.c - the TreeMatch mapper and the baselines: optimality
 * on the paper's example and on small hierarchical matrices (checked by
 * brute force), the invariant (one allowed leaf per rank) on many shapes,
 * determinism, bad arguments, and the mapping file format.
 */
#include "treematch/treematch_private.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmp_text.h"
#include "tmpdir.h"

/* ------------------------------------------------------------------------ */
/* Helpers */

static tmatch_comm_t *dense_comm(int n, const double *m)
{
	int *s = malloc(sizeof(int) * (size_t)(n * n + 1)),
	    *d = malloc(sizeof(int) * (size_t)(n * n + 1));
	double *w = malloc(sizeof(double) * (size_t)(n * n + 1));
	size_t k = 0;
	tmatch_comm_t *c;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (m[i * n + j] > 0) {
				s[k] = i;
				d[k] = j;
				w[k++] = m[i * n + j];
			}
	c = tmatch_comm_from_edges(n, k, s, d, w, NULL);
	free(s);
	free(d);
	free(w);
	return c;
}

struct bf {
	const tmatch_topo_t *t;
	int n, L;
	const double *m;
	int *leaf;
	unsigned char *used;
	double best;
};

static void bf_rec(struct bf *b, int r, double cost)
{
	if (cost >= b->best)
		return;
	if (r == b->n) {
		b->best = cost;
		return;
	}
	for (int l = 0; l < b->L; l++) {
		double add = 0;
		if (b->used[l] || !tmatch_topo_is_allowed(b->t, l))
			continue;
		for (int q = 0; q < r; q++)
			add += b->m[r * b->n + q] * 2 * tmatch__distance(b->t, l, b->leaf[q]);
		b->used[l] = 1;
		b->leaf[r] = l;
		bf_rec(b, r + 1, cost + add);
		b->used[l] = 0;
	}
}

/* Minimum hop-bytes over every injective placement on allowed leaves. */
static double brute_force(const tmatch_topo_t *t, int n, const double *m)
{
	struct bf b = {t, n, tmatch_topo_nb_leaves(t), m, NULL, NULL, 1e300};
	b.leaf = calloc((size_t)n, sizeof(int));
	b.used = calloc((size_t)b.L, 1);
	bf_rec(&b, 0, 0);
	free(b.leaf);
	free(b.used);
	return b.best;
}

static int *map_with(const tmatch_comm_t *c, const tmatch_topo_t *t, const char *mapper,
                     uint64_t seed)
{
	tmatch_map_opts_t o;
	tmatch_error_t err;
	int n = tmatch_comm_order(c), *leaf = malloc(sizeof(int) * (size_t)(n ? n : 1));
	tmatch_map_opts_init(&o);
	o.mapper = mapper;
	o.seed = seed;
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch_map_compute(c, t, &o, leaf, &err), 0, "%s: %s", mapper, err.msg);
	/* the invariant, checked again here on every mapping */
	cr_assert_eq(tmatch_map_validate(t, leaf, n, &err), 0, "%s: %s", mapper, err.msg);
	return leaf;
}

/* ------------------------------------------------------------------------ */
/* The paper's Figure 5: 8 ranks on a 2 x 3 x 2 tree (12 leaves). */

static const double fig5[64] = {
    0,   1000, 10,  1,    100, 1,    1,   1,    1000, 0,   1000, 1,   1,    100, 1,    1,
    10,  1000, 0,   1000, 1,   1,    100, 1,    1,    1,   1000, 0,   1,    1,   1,    100,
    100, 1,    1,   1,    0,   1000, 10,  1,    1,    100, 1,    1,   1000, 0,   1000, 1,
    1,   1,    100, 1,    10,  1000, 0,   1000, 1,    1,   1,    100, 1,    1,   1000, 0,
};

Test(treematch, figure5_is_optimal)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 3 2 1 3 1 2 1", NULL);
	tmatch_comm_t *c = dense_comm(8, fig5);
	int *leaf = map_with(c, t, "treematch", 1);
	double opt = brute_force(t, 8, fig5);
	double hb = tmatch__hop_bytes(c, t, leaf);

	cr_assert_float_eq(hb, opt, 1e-9, "treematch %g, optimum %g", hb, opt);
	/* the paper's groups: pairs on one socket, {0..3} and {4..7} apart */
	for (int p = 0; p < 8; p += 2)
		cr_assert_eq(tmatch_topo_lca_depth(t, leaf[p], leaf[p + 1]), 2, "pair %d", p);
	cr_assert_eq(tmatch_topo_lca_depth(t, leaf[0], leaf[3]), 1);
	cr_assert_eq(tmatch_topo_lca_depth(t, leaf[4], leaf[7]), 1);
	cr_assert_eq(tmatch_topo_lca_depth(t, leaf[0], leaf[4]), 0);
	/* and it beats the naive packed placement the paper warns about */
	{
		int *packed = map_with(c, t, "packed", 1);
		cr_assert_lt(hb, tmatch__hop_bytes(c, t, packed));
		free(packed);
	}
	free(leaf);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

/* ------------------------------------------------------------------------ */
/* Hierarchical matrices: ranks permuted; TreeMatch finds the optimum. */

struct hier_case {
	const char *tleaf;
	int n;
	unsigned seed;
};

Test(treematch, hierarchical_matrices_are_optimal)
{
	const struct hier_case cases[] = {
	    {"tleaf 3 2 1 2 1 2 1", 8, 1}, {"tleaf 2 2 1 4 1", 8, 2}, {"tleaf 2 4 1 2 1", 8, 3},
	    {"tleaf 2 3 1 2 1", 6, 4},     {"tleaf 2 2 1 3 1", 6, 5}, {"tleaf 2 2 1 4 1", 6, 6},
	    {"tleaf 1 7 1", 7, 7},         {"tleaf 2 2 1 3 1", 4, 8}, {"tleaf 3 2 1 2 1 2 1", 5, 9},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		tmatch_topo_t *t = tmatch_topo_from_tleaf(cases[k].tleaf, NULL);
		int n = cases[k].n, D = tmatch_topo_depth(t), perm[16];
		double m[256] = {0}, W[TMATCH_MAX_DEPTH + 1];
		tmatch__rng_t r;
		tmatch_comm_t *c;
		int *leaf;
		double opt, hb;

		/* weight by the depth of the common ancestor in the natural placement */
		for (int l = 0; l <= D; l++)
			W[l] = l == 0 ? 1 : W[l - 1] * 40;
		tmatch__rng_seed(&r, cases[k].seed);
		for (int i = 0; i < n; i++)
			perm[i] = i;
		for (int i = n - 1; i > 0; i--) {
			int j = (int)tmatch__rng_below(&r, (uint64_t)i + 1), x = perm[i];
			perm[i] = perm[j];
			perm[j] = x;
		}
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j)
					m[perm[i] * n + perm[j]] =
					    W[tmatch_topo_lca_depth(t, i, j)] +
					    (double)((i + j) % 3);
		c = dense_comm(n, m);
		leaf = map_with(c, t, "treematch", 1);
		opt = brute_force(t, n, m);
		hb = tmatch__hop_bytes(c, t, leaf);
		cr_assert_float_eq(hb, opt, 1e-9 * opt, "case %zu (%s, %d ranks): %g vs optimum %g",
		                   k, cases[k].tleaf, n, hb, opt);
		free(leaf);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

/* ------------------------------------------------------------------------ */
/* The invariant on many shapes, sizes, patterns and allowed sets. */

static tmatch_comm_t *pattern(int kind, int n, unsigned seed)
{
	tmatch__rng_t r;
	int cap = 8 * n + 8, *s = malloc(sizeof(int) * (size_t)cap),
	    *d = malloc(sizeof(int) * (size_t)cap);
	double *w = malloc(sizeof(double) * (size_t)cap);
	size_t k = 0;
	tmatch_comm_t *c;
	tmatch__rng_seed(&r, seed);
	if (kind == 1) { /* ring + skip: sparse, regular */
		for (int i = 0; i < n && n > 1; i++) {
			s[k] = i, d[k] = (i + 1) % n, w[k++] = 1000;
			s[k] = i, d[k] = (i + 3) % n, w[k++] = 10;
		}
	} else if (kind == 2) { /* random sparse, heavy-tailed weights */
		for (int i = 0; i < n && n > 1; i++)
			for (int e = 0; e < 4; e++) {
				s[k] = i;
				d[k] = (int)tmatch__rng_below(&r, (uint64_t)n);
				w[k++] = (double)(1 + tmatch__rng_below(&r, 10)) *
				         (double)(1 + tmatch__rng_below(&r, 1000));
			}
	} /* kind 0: all zero */
	c = tmatch_comm_from_edges(n, k, s, d, w, NULL);
	free(s);
	free(d);
	free(w);
	return c;
}

Test(treematch, invariant_on_many_shapes)
{
	const char *trees[] = {
	    "tleaf 1 14 1",
	    "tleaf 2 2 1 14 1",
	    "tleaf 2 14 1 2 1",
	    "tleaf 2 7 1 3 1",
	    "tleaf 3 5 1 1 1 3 1",
	    "tleaf 2 28 1 1 1",
	    "tleaf 2 6 1 5 1",
	    "tleaf 1 1 1",
	    "tleaf 3 2 1 8 1 2 1",
	    "tleaf 2 11 1 13 1",
	    "tleaf 4 3 1 2 1 2 1 4 1",
	    "tleaf 3 15 1 2 1 8 1",
	};
	const char *mappers[] = {"treematch", "packed", "rr", "random"};
	unsigned seed = 1;
	for (size_t ti = 0; ti < sizeof(trees) / sizeof(trees[0]); ti++) {
		tmatch_topo_t *t = tmatch_topo_from_tleaf(trees[ti], NULL);
		int L = tmatch_topo_nb_leaves(t);
		int sizes[] = {1, L / 3, L - 1, L};
		cr_assert_not_null(t, "%s", trees[ti]);
		for (int partial = 0; partial < 3; partial++) {
			int nallowed = L;
			if (partial) {
				/* a random half (partial 1) or every other leaf but one block
				   (partial 2) */
				int *al = malloc(sizeof(int) * (size_t)L);
				tmatch__rng_t r;
				nallowed = 0;
				tmatch__rng_seed(&r, seed++);
				for (int l = 0; l < L; l++)
					if (partial == 1 ? tmatch__rng_below(&r, 2) == 0
					                 : (l % 2 == 0 || l < L / 4))
						al[nallowed++] = l;
				if (nallowed == 0)
					al[nallowed++] = L - 1;
				cr_assert_eq(tmatch_topo_set_allowed(t, al, nallowed, NULL), 0);
				free(al);
			}
			for (int si = 0; si < 4; si++) {
				int n = sizes[si] > nallowed ? nallowed : sizes[si];
				if (n < 1)
					n = 1;
				for (int kind = 0; kind < 3; kind++) {
					tmatch_comm_t *c = pattern(kind, n, seed++);
					for (size_t mi = 0; mi < 4; mi++) {
						int *a = map_with(c, t, mappers[mi], 5);
						int *b = map_with(c, t, mappers[mi], 5);
						cr_assert_arr_eq(a, b, sizeof(int) * (size_t)n,
						                 "%s not deterministic on %s",
						                 mappers[mi], trees[ti]);
						free(a);
						free(b);
					}
					tmatch_comm_destroy(c);
				}
			}
			tmatch_topo_set_allowed(t, NULL, 0, NULL);
		}
		tmatch_topo_destroy(t);
	}
}

Test(treematch, partial_allocation_keeps_communicating_ranks_together)
{
	/* 2 nodes x 4 cores, only 2 cores allowed on each node: pairs (0,1) and
	   (2,3) talk a lot and must each share a node */
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 2 2 1 4 1", NULL);
	int allowed[] = {1, 3, 4, 6};
	double m[16] = {0};
	tmatch_comm_t *c;
	int *leaf;
	m[0 * 4 + 1] = m[1 * 4 + 0] = 1000;
	m[2 * 4 + 3] = m[3 * 4 + 2] = 1000;
	m[0 * 4 + 2] = m[2 * 4 + 0] = 1;
	cr_assert_eq(tmatch_topo_set_allowed(t, allowed, 4, NULL), 0);
	c = dense_comm(4, m);
	leaf = map_with(c, t, "treematch", 1);
	cr_assert_eq(tmatch_topo_lca_depth(t, leaf[0], leaf[1]), 1);
	cr_assert_eq(tmatch_topo_lca_depth(t, leaf[2], leaf[3]), 1);
	cr_assert_float_eq(tmatch__hop_bytes(c, t, leaf), brute_force(t, 4, m), 1e-9);
	free(leaf);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(treematch, fewer_ranks_than_leaves_are_packed_together)
{
	/* 4 ranks in a ring on 4 nodes x 4 cores: one node is enough */
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 2 4 1 4 1", NULL);
	tmatch_comm_t *c = pattern(1, 4, 1);
	int *leaf = map_with(c, t, "treematch", 1);
	for (int r = 1; r < 4; r++)
		cr_assert_eq(leaf[r] / 4, leaf[0] / 4, "rank %d on another node", r);
	free(leaf);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(treematch, many_ranks_on_odd_node_counts)
{
	/* the reference's slow sizes: 240, 320, 480 ranks on 2 x 8-core nodes */
	const int sizes[] = {240, 320, 480};
	for (int s = 0; s < 3; s++) {
		char spec[64];
		tmatch_topo_t *t;
		tmatch_comm_t *c = pattern(1, sizes[s], 3);
		int *leaf, *packed;
		snprintf(spec, sizeof(spec), "tleaf 3 %d 1 2 1 8 1", sizes[s] / 16);
		t = tmatch_topo_from_tleaf(spec, NULL);
		leaf = map_with(c, t, "treematch", 1);
		packed = map_with(c, t, "packed", 1);
		/* a ring is best packed in order; TreeMatch must not be worse */
		cr_assert_leq(tmatch__hop_bytes(c, t, leaf),
		              tmatch__hop_bytes(c, t, packed) * 1.0001);
		free(leaf);
		free(packed);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
	}
}

/* ------------------------------------------------------------------------ */
/* Baselines */

Test(baselines, packed_rr_random)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 2 2 1 4 1", NULL);
	tmatch_comm_t *c = pattern(0, 4, 1);
	int allowed[] = {0, 1, 2, 5};
	int *p = map_with(c, t, "packed", 1), *rr = map_with(c, t, "rr", 1);
	int *r1 = map_with(c, t, "random", 1), *r2 = map_with(c, t, "random", 2);
	const int want_rr[] = {0, 4, 1, 5}, want_rr_partial[] = {0, 5, 1, 2};
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(p[i], i);
		cr_assert_eq(rr[i], want_rr[i], "rr[%d] = %d", i, rr[i]);
	}
	cr_assert(memcmp(r1, r2, sizeof(int) * 4), "different seeds, same permutation");
	free(p);
	free(rr);
	free(r1);
	free(r2);
	cr_assert_eq(tmatch_topo_set_allowed(t, allowed, 4, NULL), 0);
	p = map_with(c, t, "packed", 1);
	rr = map_with(c, t, "rr", 1);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(p[i], allowed[i]);
		cr_assert_eq(rr[i], want_rr_partial[i], "rr[%d] = %d", i, rr[i]);
	}
	free(p);
	free(rr);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

/* ------------------------------------------------------------------------ */
/* Bad arguments */

Test(map, rejects_bad_arguments)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 1 4 1", NULL);
	tmatch_comm_t *c = pattern(1, 4, 1), *big = pattern(1, 5, 1);
	tmatch_map_opts_t o;
	tmatch_error_t err;
	int leaf[5] = {7, 7, 7, 7, 7}, bad[] = {0, 0}, ok[] = {0, 1};

	tmatch_map_opts_init(&o);
	errno = 0;
	cr_assert_eq(tmatch_map_compute(NULL, t, &o, leaf, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_map_compute(c, NULL, &o, leaf, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_map_compute(c, t, &o, NULL, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_map_compute(big, t, &o, leaf, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "do not fit"), "%s", err.msg);
	o.mapper = "nope";
	errno = 0;
	cr_assert_eq(tmatch_map_compute(c, t, &o, leaf, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "treematch"), "lists the names: %s", err.msg);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(leaf[i], 7, "failed call wrote its output");
	o.mapper = NULL; /* default */
	cr_assert_eq(tmatch_map_compute(c, t, &o, leaf, &err), 0);
	cr_assert_eq(tmatch_map_compute(c, t, NULL, leaf, &err), 0);
	errno = 0;
	cr_assert_eq(tmatch_map_check_name(NULL, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_map_check_name("treematch+refine", &err), 0);
	errno = 0;
	cr_assert_eq(tmatch_map_validate(NULL, ok, 2, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_map_validate(t, NULL, 2, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_map_validate(t, bad, 2, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "rank 1"));
	cr_assert_eq(tmatch_map_validate(t, ok, 2, &err), 0);
	tmatch_map_opts_init(NULL);
	cr_assert_not_null(tmatch_map_mappers());
	tmatch_comm_destroy(c);
	tmatch_comm_destroy(big);
	tmatch_topo_destroy(t);
}

Test(map, exact_threshold_and_budget_options_still_valid)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 3 4 1 2 1 4 1", NULL);
	tmatch_comm_t *c = pattern(2, 32, 4);
	const long exact[] = {1, 10, 1000000};
	for (int x = 0; x < 3; x++) {
		tmatch_map_opts_t o;
		int leaf[32];
		tmatch_map_opts_init(&o);
		o.mapper = "treematch";
		o.exact_max_groups = (int)exact[x];
		o.iter_budget = x + 1;
		cr_assert_eq(tmatch_map_compute(c, t, &o, leaf, NULL), 0);
		cr_assert_eq(tmatch_map_validate(t, leaf, 32, NULL), 0);
	}
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

/* ------------------------------------------------------------------------ */
/* The mapping file (tmatch_map_read, tmatch_map_load)                       */

Test(mapping_file, both_line_forms_comments_and_blank_lines)
{
	const char *path = tmp_text("# a comment\n2 5\n\n7   # rank 3 after rank 2\n0 1\n1 0\n");
	int leaf[4] = {-9, -9, -9, -9}, line[4];
	tmatch_error_t err;

	cr_assert_eq(tmatch_map_read(path, 4, leaf, line, &err), 0, "%s", err.msg);
	cr_expect(leaf[0] == 1 && leaf[1] == 0 && leaf[2] == 5 && leaf[3] == 7);
	cr_expect(line[0] == 5 && line[1] == 6 && line[2] == 2 && line[3] == 4);
	unlink(path);
}

Test(mapping_file, errors_name_line_and_column_and_leave_outputs_alone)
{
	static const struct {
		const char *text;
		int line, column;
		const char *frag;
	} cases[] = {
	    {"0 0\n1 x\n", 2, 3, "expected a non-negative integer"},
	    {"0 0\n1 2 3\n", 2, 0, "too many numbers"},
	    {"0 0\n0 1\n", 2, 0, "rank 0 is placed twice (first on line 1)"},
	    {"0 0\n5 1\n", 2, 0, "rank 5 is out of range: the profile has 2 ranks (0..1)"},
	    {"0 0\n", 0, 0, "rank 1 has no leaf"},
	    {"0 -1\n1 1\n", 1, 3, "expected a non-negative integer"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = tmp_text(cases[i].text);
		int leaf[2] = {-9, -9};
		tmatch_error_t err;

		errno = 0;
		cr_expect_eq(tmatch_map_read(path, 2, leaf, NULL, &err), -1, "case %zu", i);
		cr_expect_eq(errno, EINVAL, "case %zu", i);
		cr_expect_str_eq(err.file, path);
		cr_expect_eq(err.line, cases[i].line, "case %zu: line %d", i, err.line);
		cr_expect_eq(err.column, cases[i].column, "case %zu: column %d", i, err.column);
		cr_expect_not_null(strstr(err.msg, cases[i].frag), "case %zu: %s", i, err.msg);
		cr_expect(leaf[0] == -9 && leaf[1] == -9, "case %zu: output changed", i);
		unlink(path);
	}
}

Test(mapping_file, load_checks_the_leaves_on_the_tree_and_names_the_line)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 1 4 1", NULL);
	const char *path = tmp_text("0 3\n1 3\n");
	int leaf[2] = {-9, -9};
	tmatch_error_t err;

	cr_assert_not_null(t);
	errno = 0;
	cr_expect_eq(tmatch_map_load(path, t, 2, leaf, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(err.line, 2, "the line of the rank that reuses the leaf");
	cr_expect_not_null(strstr(err.msg, "already used"), "%s", err.msg);
	cr_expect_eq(leaf[0], -9);
	unlink(path);
	path = tmp_text("0 3\n1 2\n");
	cr_expect_eq(tmatch_map_load(path, t, 2, leaf, &err), 0, "%s", err.msg);
	cr_expect(leaf[0] == 3 && leaf[1] == 2);
	unlink(path);
	tmatch_topo_destroy(t);
}

/* A FIFO, a device, a binary file, one endless line: refused at once. */
Test(mapping_file, hostile_files_are_refused_at_once, .timeout = 10)
{
	char dir[TM_TMP_MAX], p[TM_TMP_MAX + 64];
	int leaf[2] = {-9, -9};
	tmatch_error_t err;
	FILE *f;
	tm_tmpname(dir, sizeof(dir), "tm-mapf-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/fifo", dir);
	cr_assert_eq(mkfifo(p, 0600), 0);
	errno = 0;
	cr_expect_eq(tmatch_map_read(p, 2, leaf, NULL, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_not_null(strstr(err.msg, "not a regular file"), "%s", err.msg);
	cr_expect_eq(tmatch_map_read("/dev/zero", 2, leaf, NULL, &err), -1);
	cr_expect_not_null(strstr(err.msg, "not a regular file"), "%s", err.msg);
	snprintf(p, sizeof(p), "%s/nul", dir);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("0 0\n1", f);
	fputc(0, f);
	fputs(" 1\n", f);
	fclose(f);
	cr_expect_eq(tmatch_map_read(p, 2, leaf, NULL, &err), -1);
	cr_expect_eq(err.line, 2);
	cr_expect_not_null(strstr(err.msg, "a NUL byte"), "%s", err.msg);
	snprintf(p, sizeof(p), "%s/long", dir);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("0 0 #", f);
	for (int i = 0; i < 70000; i++)
		fputc('x', f);
	fputs("\n1 1\n", f);
	fclose(f);
	cr_expect_eq(tmatch_map_read(p, 2, leaf, NULL, &err), -1);
	cr_expect_eq(err.line, 1);
	cr_expect_not_null(strstr(err.msg, "a line longer than 65536 bytes"), "%s", err.msg);
	cr_expect(leaf[0] == -9 && leaf[1] == -9, "outputs untouched");
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	cr_assert_eq(system(p), 0);
}

Test(mapping_file, bad_arguments)
{
	int leaf[2];
	tmatch_error_t err;
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 1 4 1", NULL);

	errno = 0;
	cr_expect_eq(tmatch_map_read(NULL, 2, leaf, NULL, &err), -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(tmatch_map_read("/tmp/x", 2, NULL, NULL, &err), -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(tmatch_map_read("/tmp/x", -1, leaf, NULL, &err), -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(tmatch_map_read("/nonexistent/tm.map", 2, leaf, NULL, &err), -1);
	cr_expect_eq(errno, ENOENT);
	cr_expect_not_null(strstr(err.msg, "cannot open"));
	errno = 0;
	cr_expect_eq(tmatch_map_load("/tmp/x", NULL, 2, leaf, &err), -1);
	cr_expect_eq(errno, EINVAL);
	tmatch_topo_destroy(t);
}

/* The plain format's writer and reader agree, the global rank numbers of a
   node's sub-matrix included, and the writer says when it cannot write. */
Test(mapping_file, written_then_read_back)
{
	const int leaf[5] = {7, 0, 3, 12, 5}, rank_of[5] = {4, 0, 9, 2, 1};
	int back[5] = {-1, -1, -1, -1, -1}, back_g[13];
	char path[] = "/tmp/tmatch-mapwrite-XXXXXX", *text = NULL;
	size_t len = 0;
	tmatch_error_t err;
	FILE *f;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_not_null(f = fdopen(fd, "w"));
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch_map_write(f, NULL, leaf, 5, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(tmatch_map_read(path, 5, back, NULL, &err), 0, "%s", err.msg);
	cr_assert_arr_eq(back, leaf, sizeof(leaf));
	cr_assert_not_null(text = tmatch_file_read(path, 1024, &len, &err));
	cr_assert_str_eq(text, "0 7\n1 0\n2 3\n3 12\n4 5\n");
	free(text);

	/* global ranks: rank_of[r] on each line, read back by its number */
	cr_assert_not_null(f = fopen(path, "w"));
	cr_assert_eq(tmatch_map_write(f, rank_of, leaf, 5, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(f), 0);
	for (int i = 0; i < 13; i++)
		back_g[i] = -1;
	cr_assert_eq(tmatch_map_read(path, 10, back_g, NULL, &err), -1,
	             "five of ten ranks is not a whole mapping");
	cr_assert_not_null(text = tmatch_file_read(path, 1024, &len, &err));
	cr_assert_str_eq(text, "4 7\n0 0\n9 3\n2 12\n1 5\n");
	free(text);
	unlink(path);

	/* a stream that cannot be written, and bad arguments */
	cr_assert_not_null(f = fopen("/dev/full", "w"));
	setvbuf(f, NULL, _IONBF, 0);
	errno = 0;
	cr_assert_eq(tmatch_map_write(f, NULL, leaf, 5, &err), -1);
	cr_assert_eq(errno, ENOSPC);
	cr_assert(strstr(err.msg, "cannot write the mapping"), "%s", err.msg);
	fclose(f);
	errno = 0;
	cr_assert_eq(tmatch_map_write(NULL, NULL, leaf, 5, NULL), -1);
	cr_assert_eq(errno, EINVAL);
}
