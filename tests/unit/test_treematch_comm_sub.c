/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_treematch_comm_sub.c - tmatch_comm_submatrix: the matrix of some
 * ranks, in the list's order (the plugin's per-node sub-profile and
 * `treematch map --ranks`).
 */
#include "treematch/treematch.h"

#include <criterion/criterion.h>
#include <errno.h>

/* 6 ranks: a weighted ring 0-1-2-3-4-5-0 plus the chord 1-4. */
static tmatch_comm_t *ring6(void)
{
	const int src[] = {0, 1, 2, 3, 4, 5, 1};
	const int dst[] = {1, 2, 3, 4, 5, 0, 4};
	const double w[] = {10, 20, 30, 40, 50, 60, 7};
	tmatch_error_t err;
	tmatch_comm_t *c = tmatch_comm_from_edges(6, 7, src, dst, w, &err);

	cr_assert_not_null(c, "%s", err.msg);
	return c;
}

Test(comm_sub, entries_follow_the_list_order)
{
	static const struct {
		int n;
		int ranks[6];
	} cases[] = {
	    {6, {0, 1, 2, 3, 4, 5}},
	    {6, {5, 3, 1, 0, 2, 4}},
	    {3, {4, 1, 5}},
	    {2, {2, 3}},
	    {2, {0, 3}},
	    {1, {2}},
	};
	tmatch_comm_t *full = ring6();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tmatch_error_t err;
		tmatch_comm_t *sub = tmatch_comm_submatrix(full, cases[i].ranks, cases[i].n, &err);
		double total = 0;

		cr_assert_not_null(sub, "case %zu: %s", i, err.msg);
		cr_expect_eq(tmatch_comm_order(sub), cases[i].n);
		for (int a = 0; a < cases[i].n; a++)
			for (int b = 0; b < cases[i].n; b++) {
				double want = a == b ? 0
				                     : tmatch_comm_get(full, cases[i].ranks[a],
				                                       cases[i].ranks[b]);

				cr_expect_eq(tmatch_comm_get(sub, a, b), want, "case %zu (%d,%d)",
				             i, a, b);
				if (a < b)
					total += want;
			}
		cr_expect_eq(tmatch_comm_total(sub), total, "case %zu", i);
		tmatch_comm_destroy(sub);
	}
	tmatch_comm_destroy(full);
}

Test(comm_sub, the_chord_survives_alone)
{
	const int ranks[] = {4, 1};
	tmatch_comm_t *full = ring6(), *sub = tmatch_comm_submatrix(full, ranks, 2, NULL);

	cr_assert_not_null(sub);
	cr_expect_eq(tmatch_comm_get(sub, 0, 1), 7);
	cr_expect_eq(tmatch_comm_total(sub), 7);
	tmatch_comm_destroy(sub);
	tmatch_comm_destroy(full);
}

Test(comm_sub, bad_arguments)
{
	const int repeated[] = {1, 2, 1}, out_of_range[] = {0, 6}, negative[] = {-1};
	tmatch_comm_t *full = ring6();
	tmatch_error_t err;

	errno = 0;
	cr_expect_null(tmatch_comm_submatrix(NULL, repeated, 1, &err));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tmatch_comm_submatrix(full, NULL, 1, &err));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tmatch_comm_submatrix(full, repeated, 0, &err));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tmatch_comm_submatrix(full, repeated, 3, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect(strstr(err.msg, "rank 1") && strstr(err.msg, "repeated"), "%s", err.msg);
	errno = 0;
	cr_expect_null(tmatch_comm_submatrix(full, out_of_range, 2, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect(strstr(err.msg, "rank 6") && strstr(err.msg, "0..5"), "%s", err.msg);
	cr_expect_null(tmatch_comm_submatrix(full, negative, 1, NULL));
	tmatch_comm_destroy(full);
}
