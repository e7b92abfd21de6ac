/* SPDX-License-Identifier: BSD-3-Clause */
/* test_treematch_eval.c - metrics against a naive recomputation. */
#include "treematch/treematch_private.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

/* Ancestor of a leaf at depth l, computed from child indices top down. */
static int naive_ancestor(const int *arity, int depth, int leaf, int l)
{
	int digits[TMATCH_MAX_DEPTH], node = 0;
	for (int x = depth - 1; x >= 0; x--) {
		digits[x] = leaf % arity[x];
		leaf /= arity[x];
	}
	for (int x = 0; x < l; x++)
		node = node * arity[x] + digits[x];
	return node;
}

static int naive_lca(const int *arity, int depth, int a, int b)
{
	int l = depth;
	while (naive_ancestor(arity, depth, a, l) != naive_ancestor(arity, depth, b, l))
		l--;
	return l;
}

static tmatch_comm_t *random_comm(int n, int edges, unsigned seed)
{
	int *s = malloc(sizeof(int) * (size_t)edges), *d = malloc(sizeof(int) * (size_t)edges);
	double *w = malloc(sizeof(double) * (size_t)edges);
	tmatch__rng_t r;
	tmatch_comm_t *c;
	tmatch__rng_seed(&r, seed);
	for (int e = 0; e < edges; e++) {
		s[e] = (int)tmatch__rng_below(&r, (uint64_t)n);
		d[e] = (int)tmatch__rng_below(&r, (uint64_t)n);
		w[e] = (double)(1 + tmatch__rng_below(&r, 100));
	}
	c = tmatch_comm_from_edges(n, (size_t)edges, s, d, w, NULL);
	free(s);
	free(d);
	free(w);
	return c;
}

Test(eval, metrics_match_naive_on_non_uniform_trees)
{
	const int shapes[][4] = {{3, 2, 5, 0}, {2, 7, 3, 0}, {5, 1, 3, 2}};
	const double costs[][4] = {{10, 4, 1, 0}, {7, 3, 2, 0}, {20, 9, 5, 1}};
	const int depth[] = {3, 3, 4};
	for (int s = 0; s < 3; s++) {
		tmatch_topo_t *t = tmatch_topo_create(depth[s], shapes[s], costs[s], NULL);
		int L = tmatch_topo_nb_leaves(t), n = L - 3,
		    *leaf = malloc(sizeof(int) * (size_t)L);
		tmatch_comm_t *c = random_comm(n, 4 * n, (unsigned)s + 7);
		tmatch_metrics_t m;
		tmatch_map_opts_t o;
		double hb = 0, cost = 0, lt[TMATCH_MAX_DEPTH + 1] = {0}, tot = 0, best = -1;
		int dmax = 0;

		tmatch_map_opts_init(&o);
		o.mapper = "random";
		o.seed = 99;
		cr_assert_eq(tmatch_map_compute(c, t, &o, leaf, NULL), 0);
		cr_assert_eq(tmatch_eval(c, t, leaf, &m, NULL), 0);
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++) {
				double w = tmatch_comm_get(c, i, j);
				int lca = naive_lca(shapes[s], depth[s], leaf[i], leaf[j]);
				hb += w * 2 * (depth[s] - lca);
				cost += w * costs[s][lca];
				lt[lca] += w;
				tot += w;
				if (w > 0 && 2 * (depth[s] - lca) > dmax)
					dmax = 2 * (depth[s] - lca);
			}
		cr_assert_float_eq(m.hop_bytes, hb, 1e-9 * hb);
		cr_assert_float_eq(tmatch__hop_bytes(c, t, leaf), hb, 1e-9 * hb);
		cr_assert_float_eq(m.cost, cost, 1e-9 * cost);
		for (int l = 0; l < depth[s]; l++)
			cr_assert_float_eq(m.level_traffic[l], lt[l], 1e-9 * (tot + 1));
		cr_assert_eq(m.dilation_max, dmax);
		cr_assert_float_eq(m.dilation_avg, hb / tot, 1e-9);
		/* heaviest uplink: traffic between a node's leaves and the rest */
		for (int l = 1; l <= depth[s]; l++) {
			int nodes = 1;
			for (int x = 0; x < l; x++)
				nodes *= shapes[s][x];
			for (int v = 0; v < nodes; v++) {
				double up = 0;
				int holds = 0;
				for (int i = 0; i < n; i++) {
					int in_i =
					    naive_ancestor(shapes[s], depth[s], leaf[i], l) == v;
					holds |= in_i;
					for (int j = i + 1; j < n; j++) {
						int in_j = naive_ancestor(shapes[s], depth[s],
						                          leaf[j], l) == v;
						if (in_i != in_j)
							up += tmatch_comm_get(c, i, j);
					}
				}
				if (holds && up > best)
					best = up;
			}
		}
		cr_assert_float_eq(m.max_node_traffic, best, 1e-9 * (best + 1));
		cr_assert_float_eq(m.congestion, best, 1e-9 * (best + 1));
		cr_assert_geq(m.max_node_depth, 1);
		tmatch_comm_destroy(c);
		tmatch_topo_destroy(t);
		free(leaf);
	}
}

Test(eval, rejects_bad_arguments_and_invalid_mappings)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 1 4 1", NULL);
	int s[] = {0}, d[] = {1}, ok[] = {0, 1}, dup[] = {2, 2}, out_of[] = {0, 4};
	tmatch_comm_t *c = tmatch_comm_from_edges(2, 1, s, d, NULL, NULL);
	tmatch_metrics_t m;
	tmatch_error_t err;
	errno = 0;
	cr_assert_eq(tmatch_eval(NULL, t, ok, &m, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_eval(c, NULL, ok, &m, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_eval(c, t, NULL, &m, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_eval(c, t, ok, NULL, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_eval(c, t, dup, &m, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "rank 1"), "%s", err.msg);
	errno = 0;
	cr_assert_eq(tmatch_eval(c, t, out_of, &m, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_eval(c, t, ok, &m, &err), 0);
	cr_assert_float_eq(m.hop_bytes, 2, 1e-12);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(eval, zero_traffic)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 2 2 1 2 1", NULL);
	tmatch_comm_t *c = tmatch_comm_from_edges(3, 0, NULL, NULL, NULL, NULL);
	int leaf[] = {3, 0, 1};
	tmatch_metrics_t m;
	cr_assert_eq(tmatch_eval(c, t, leaf, &m, NULL), 0);
	cr_assert_float_eq(m.hop_bytes, 0, 1e-12);
	cr_assert_float_eq(m.congestion, 0, 1e-12);
	cr_assert_eq(m.dilation_max, 0);
	cr_assert_float_eq(m.dilation_avg, 0, 1e-12);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}
