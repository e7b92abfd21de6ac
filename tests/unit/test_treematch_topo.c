/* SPDX-License-Identifier: BSD-3-Clause */
/* test_treematch_topo.c - machine trees: creation, tleaf, allowed sets, LCA. */
#include "treematch/treematch_private.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

Test(topo, create_any_arity)
{
	const int shapes[][4] = {{3, 5, 7, 0}, {14, 2, 0, 0}, {28, 1, 6, 0}, {1, 1, 1, 0}};
	const int depth[] = {3, 2, 3, 3};
	for (int s = 0; s < 4; s++) {
		tmatch_topo_t *t = tmatch_topo_create(depth[s], shapes[s], NULL, NULL);
		int leaves = 1;
		cr_assert_not_null(t);
		for (int l = 0; l < depth[s]; l++) {
			leaves *= shapes[s][l];
			cr_assert_eq(tmatch_topo_arity(t, l), shapes[s][l]);
			cr_assert_float_eq(tmatch_topo_cost(t, l), depth[s] - l, 1e-12);
		}
		cr_assert_eq(tmatch_topo_nb_leaves(t), leaves);
		cr_assert_eq(tmatch_topo_nb_allowed(t), leaves);
		cr_assert_eq(tmatch_topo_depth(t), depth[s]);
		tmatch_topo_destroy(t);
	}
	tmatch_topo_destroy(NULL);
}

Test(topo, create_rejects_bad_arguments)
{
	int a[] = {4, 0}, big[] = {65536, 65536};
	double c[] = {1, -1};
	tmatch_error_t err;
	errno = 0;
	cr_assert_null(tmatch_topo_create(2, a, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, ">= 1"));
	errno = 0;
	cr_assert_null(tmatch_topo_create(2, big, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "leaves"));
	errno = 0;
	cr_assert_null(tmatch_topo_create(-1, a, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_topo_create(TMATCH_MAX_DEPTH + 1, a, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_topo_create(2, NULL, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	a[1] = 2;
	errno = 0;
	cr_assert_null(tmatch_topo_create(2, a, c, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "cost"));
}

Test(topo, tleaf_costs_accumulate_and_format_round_trips)
{
	tmatch_error_t err;
	char buf[128];
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 3 2 10 3 5 2 1", &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(tmatch_topo_nb_leaves(t), 12);
	cr_assert_float_eq(tmatch_topo_cost(t, 0), 16, 1e-12);
	cr_assert_float_eq(tmatch_topo_cost(t, 1), 6, 1e-12);
	cr_assert_float_eq(tmatch_topo_cost(t, 2), 1, 1e-12);
	cr_assert_float_eq(tmatch_topo_cost(t, 3), 0, 1e-12);
	cr_assert_eq(tmatch_topo_format(t, buf, sizeof(buf)), (int)strlen("tleaf 3 2 10 3 5 2 1"));
	cr_assert_str_eq(buf, "tleaf 3 2 10 3 5 2 1");
	/* snprintf-style: the length even when it does not fit */
	cr_assert_eq(tmatch_topo_format(t, buf, 4), (int)strlen("tleaf 3 2 10 3 5 2 1"));
	cr_assert_str_eq(buf, "tle");
	tmatch_topo_destroy(t);
	t = tmatch_topo_from_tleaf("  4 2 1 16 1 2 1 4 1 ", &err); /* "tleaf" optional */
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(tmatch_topo_nb_leaves(t), 256);
	tmatch_topo_destroy(t);
}

struct bad_tleaf {
	const char *spec;
	int column;
	const char *frag;
};

Test(topo, tleaf_errors_give_the_column)
{
	const struct bad_tleaf cases[] = {
	    {"tleaf", 6, "missing depth"},
	    {"tleaf x 2 1", 7, "bad depth"},
	    {"tleaf 0", 7, "bad depth"},
	    {"tleaf 17", 7, "bad depth"},
	    {"tleaf 2 4 1 x 1", 13, "bad arity of level 1"},
	    {"tleaf 2 4 1 0 1", 13, "bad arity of level 1"},
	    {"tleaf 2 4 1 -3 1", 13, "bad arity"},
	    {"tleaf 2 4 1", 12, "missing arity of level 1"},
	    {"tleaf 2 4 1 2", 14, "missing cost of level 1"},
	    {"tleaf 1 4 -1", 11, "bad cost"},
	    {"tleaf 1 4 nan", 11, "bad cost"},
	    {"tleaf 1 4 1 extra", 13, "unexpected text"},
	    {"tleaf 3 100000 1 100000 1 2 1", 18, "more than"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tmatch_error_t err;
		tmatch_error_clear(&err);
		errno = 0;
		cr_assert_null(tmatch_topo_from_tleaf(cases[i].spec, &err), "%s", cases[i].spec);
		cr_assert_eq(errno, EINVAL);
		cr_assert_eq(err.column, cases[i].column, "'%s': column %d (%s)", cases[i].spec,
		             err.column, err.msg);
		cr_assert(strstr(err.msg, cases[i].frag), "'%s': %s", cases[i].spec, err.msg);
	}
	errno = 0;
	cr_assert_null(tmatch_topo_from_tleaf(NULL, NULL));
	cr_assert_eq(errno, EINVAL);
}

Test(topo, allowed_set)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 2 2 1 4 1", NULL), *d;
	int ok[] = {1, 6, 3}, dup[] = {1, 1}, out[] = {8};
	tmatch_error_t err;
	cr_assert_eq(tmatch_topo_set_allowed(t, ok, 3, &err), 0);
	cr_assert_eq(tmatch_topo_nb_allowed(t), 3);
	cr_assert(tmatch_topo_is_allowed(t, 6));
	cr_assert(!tmatch_topo_is_allowed(t, 0));
	errno = 0;
	cr_assert_eq(tmatch_topo_set_allowed(t, dup, 2, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "twice"));
	errno = 0;
	cr_assert_eq(tmatch_topo_set_allowed(t, out, 1, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_set_allowed(t, ok, -1, &err), -1);
	cr_assert_eq(errno, EINVAL);
	/* failures left the set unchanged */
	cr_assert_eq(tmatch_topo_nb_allowed(t), 3);
	d = tmatch_topo_dup(t, &err);
	cr_assert_not_null(d);
	cr_assert_eq(tmatch_topo_nb_allowed(d), 3);
	cr_assert(tmatch_topo_is_allowed(d, 3));
	cr_assert(!tmatch_topo_is_allowed(d, 2));
	cr_assert_eq(tmatch_topo_set_allowed(t, NULL, 0, &err), 0);
	cr_assert_eq(tmatch_topo_nb_allowed(t), 8);
	cr_assert(tmatch_topo_is_allowed(t, 0));
	cr_assert_eq(tmatch_topo_nb_allowed(d), 3); /* deep copy */
	errno = 0;
	cr_assert(!tmatch_topo_is_allowed(t, 8));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_set_allowed(NULL, ok, 1, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_topo_dup(NULL, &err));
	cr_assert_eq(errno, EINVAL);
	tmatch_topo_destroy(t);
	tmatch_topo_destroy(d);
}

Test(topo, level_names)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 2 2 1 4 1", NULL);
	cr_assert_str_eq(tmatch_topo_level_name(t, 1), "");
	cr_assert_eq(tmatch_topo_set_level_name(t, 1, "core"), 0);
	cr_assert_str_eq(tmatch_topo_level_name(t, 1), "core");
	errno = 0;
	cr_assert_eq(tmatch_topo_set_level_name(t, 2, "x"), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_set_level_name(t, 0, "a name that is much too long"), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_set_level_name(t, 0, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_topo_level_name(t, -1));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_topo_level_name(NULL, 0));
	cr_assert_eq(errno, EINVAL);
	tmatch_topo_destroy(t);
}

Test(topo, accessors_reject_bad_arguments)
{
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 1 4 1", NULL);
	char buf[8];
	errno = 0;
	cr_assert_eq(tmatch_topo_depth(NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_arity(t, 1), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_arity(NULL, 0), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_cost(t, 2), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_nb_leaves(NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_nb_allowed(NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_lca_depth(t, 0, 4), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_lca_depth(NULL, 0, 0), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_format(NULL, buf, sizeof(buf)), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_topo_format(t, NULL, 5), -1);
	cr_assert_eq(errno, EINVAL);
	tmatch_topo_destroy(t);
}

/* Naive LCA: walk both leaves' child-index paths from the root. */
static int naive_lca(const int *arity, int depth, int a, int b)
{
	int da[TMATCH_MAX_DEPTH], db[TMATCH_MAX_DEPTH];
	for (int l = depth - 1; l >= 0; l--) {
		da[l] = a % arity[l];
		a /= arity[l];
		db[l] = b % arity[l];
		b /= arity[l];
	}
	for (int l = 0; l < depth; l++)
		if (da[l] != db[l])
			return l;
	return depth;
}

Test(topo, lca_on_non_uniform_trees_matches_naive)
{
	const int shapes[][4] = {{3, 2, 5, 0}, {2, 7, 3, 0}, {5, 1, 3, 2}, {14, 3, 1, 0}};
	const int depth[] = {3, 3, 4, 3};
	for (int s = 0; s < 4; s++) {
		tmatch_topo_t *t = tmatch_topo_create(depth[s], shapes[s], NULL, NULL);
		int L = tmatch_topo_nb_leaves(t);
		for (int a = 0; a < L; a++)
			for (int b = 0; b < L; b++)
				cr_assert_eq(tmatch_topo_lca_depth(t, a, b),
				             naive_lca(shapes[s], depth[s], a, b),
				             "shape %d leaves %d %d", s, a, b);
		tmatch_topo_destroy(t);
	}
}

/* A spec of more leaves than TMATCH_TOPO_MAX_LEAVES is refused before
   anything is built (1e8 leaves took 57 s and 4.3 GB); the cap itself is
   accepted. The timeout is the guard. */
Test(topo, tleaf_over_the_leaf_cap_is_refused_at_once, .timeout = 10)
{
	tmatch_error_t err;
	tmatch_topo_t *t;

	errno = 0;
	cr_assert_null(tmatch_topo_from_tleaf("tleaf 2 10000 0 10000 0", &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_not_null(strstr(err.msg, "more than 4194304 leaves at level 1"), "%s", err.msg);
	cr_expect_eq(err.column, 17, "%s", err.msg); /* the second 10000 */
	t = tmatch_topo_from_tleaf("tleaf 2 2048 10 2048 1", &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_expect_eq(tmatch_topo_nb_leaves(t), 4194304);
	tmatch_topo_destroy(t);
}
