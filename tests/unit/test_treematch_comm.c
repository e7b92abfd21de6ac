/* SPDX-License-Identifier: BSD-3-Clause */
/* test_treematch_comm.c - the sparse matrix and its two file formats. */
#include "treematch/treematch_private.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#define FIX TMATCH_SRCDIR "/tests/fixtures/treematch/"

Test(comm, from_edges_merges_and_sorts)
{
	int src[] = {0, 1, 2, 3, 3, 2, 1};
	int dst[] = {1, 0, 2, 0, 1, 0, 3};
	double w[] = {1, 2, 9, 4, 5, 0, 6};
	tmatch_error_t err;
	tmatch_comm_t *c = tmatch_comm_from_edges(4, 7, src, dst, w, &err);
	const int *cols;
	const double *ws;

	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_eq(tmatch_comm_order(c), 4);
	/* pairs: (0,1)=3, (0,3)=4, (1,3)=11; self (2,2) and zero (2,0) dropped */
	cr_assert_eq(tmatch_comm_nnz(c), 6);
	cr_assert_float_eq(tmatch_comm_total(c), 18, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 0, 1), 3, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 1, 0), 3, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 3, 1), 11, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 2, 0), 0, 1e-12);
	cr_assert_eq(tmatch_comm_row(c, 3, &cols, &ws), 2);
	cr_assert_eq(cols[0], 0);
	cr_assert_eq(cols[1], 1);
	cr_assert_float_eq(ws[1], 11, 1e-12);
	cr_assert_eq(tmatch_comm_row(c, 2, &cols, NULL), 0);
	tmatch_comm_destroy(c);
}

Test(comm, from_edges_null_weight_and_empty)
{
	int src[] = {0, 0}, dst[] = {1, 1};
	tmatch_comm_t *c = tmatch_comm_from_edges(2, 2, src, dst, NULL, NULL);
	cr_assert_not_null(c);
	cr_assert_float_eq(tmatch_comm_get(c, 0, 1), 2, 1e-12);
	tmatch_comm_destroy(c);
	c = tmatch_comm_from_edges(5, 0, NULL, NULL, NULL, NULL);
	cr_assert_not_null(c);
	cr_assert_eq(tmatch_comm_nnz(c), 0);
	cr_assert_eq(tmatch_comm_order(c), 5);
	tmatch_comm_destroy(c);
	tmatch_comm_destroy(NULL);
}

Test(comm, from_edges_large_rows_sorted)
{
	/* a reverse-ordered star: rows must still come out sorted */
	enum { N = 1000 };
	int src[N - 1], dst[N - 1];
	for (int i = 0; i < N - 1; i++) {
		src[i] = N - 1 - i;
		dst[i] = 0;
	}
	tmatch_comm_t *c = tmatch_comm_from_edges(N, N - 1, src, dst, NULL, NULL);
	const int *cols;
	cr_assert_not_null(c);
	cr_assert_eq(tmatch_comm_row(c, 0, &cols, NULL), N - 1);
	for (int i = 1; i < N - 1; i++)
		cr_assert_lt(cols[i - 1], cols[i]);
	tmatch_comm_destroy(c);
}

struct bad_edge {
	int n, s, d;
	double w;
	const char *frag;
};

Test(comm, from_edges_rejects_bad_input)
{
	const struct bad_edge cases[] = {
	    {3, 0, 3, 1, "outside 0..2"},     {3, -1, 0, 1, "outside"},
	    {3, 0, 1, -1, "finite and >= 0"}, {3, 0, 1, NAN, "finite"},
	    {3, 0, 1, INFINITY, "finite"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int s[2] = {0, cases[i].s}, d[2] = {1, cases[i].d};
		double w[2] = {1, cases[i].w};
		tmatch_error_t err;
		errno = 0;
		cr_assert_null(tmatch_comm_from_edges(cases[i].n, 2, s, d, w, &err));
		cr_assert_eq(errno, EINVAL);
		cr_assert(strstr(err.msg, cases[i].frag), "case %zu: %s", i, err.msg);
		cr_assert(strstr(err.msg, "edge 1"), "names the edge: %s", err.msg);
	}
	errno = 0;
	cr_assert_null(tmatch_comm_from_edges(-1, 0, NULL, NULL, NULL, NULL));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_comm_from_edges(3, 2, NULL, NULL, NULL, NULL));
	cr_assert_eq(errno, EINVAL);
}

Test(comm, accessors_reject_bad_arguments)
{
	int s[] = {0}, d[] = {1};
	tmatch_comm_t *c = tmatch_comm_from_edges(2, 1, s, d, NULL, NULL);
	errno = 0;
	cr_assert_eq(tmatch_comm_order(NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_comm_nnz(NULL), 0);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_comm_total(NULL), 0);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_comm_row(c, 2, NULL, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_comm_row(NULL, 0, NULL, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_comm_get(c, 0, 5), 0);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_comm_get(NULL, 0, 0), 0);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_comm_load(NULL, NULL));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_comm_load_mtx(NULL, NULL));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tmatch_comm_load_mat(NULL, NULL));
	cr_assert_eq(errno, EINVAL);
	tmatch_comm_destroy(c);
}

Test(comm, load_general_mtx)
{
	tmatch_error_t err;
	tmatch_comm_t *c = tmatch_comm_load(FIX "good_general.mtx", &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_eq(tmatch_comm_order(c), 4);
	cr_assert_float_eq(tmatch_comm_get(c, 0, 1), 15, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 2, 3), 26, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 0, 0), 0, 1e-12);
	cr_assert_float_eq(tmatch_comm_total(c), 41, 1e-12);
	tmatch_comm_destroy(c);
}

Test(comm, load_symmetric_mtx_counts_both_triangles)
{
	tmatch_error_t err;
	tmatch_comm_t *c = tmatch_comm_load(FIX "good_symmetric.mtx", &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_float_eq(tmatch_comm_get(c, 0, 1), 20, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 3, 2), 40, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 0, 2), 2, 1e-12);
	tmatch_comm_destroy(c);
}

Test(comm, load_pattern_mtx)
{
	tmatch_error_t err;
	tmatch_comm_t *c = tmatch_comm_load_mtx(FIX "good_pattern.mtx", &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_float_eq(tmatch_comm_get(c, 1, 2), 1, 1e-12);
	cr_assert_float_eq(tmatch_comm_get(c, 0, 2), 0, 1e-12);
	tmatch_comm_destroy(c);
}

Test(comm, load_mat_crlf_exponent_trailing_blank)
{
	tmatch_error_t err;
	tmatch_comm_t *c = tmatch_comm_load(FIX "good_crlf.mat", &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_eq(tmatch_comm_order(c), 3);
	cr_assert_float_eq(tmatch_comm_get(c, 0, 1), 2, 1e-12); /* 1 + 1 */
	cr_assert_float_eq(tmatch_comm_get(c, 0, 2), 5, 1e-12); /* 2.5e0 + 2.5 */
	cr_assert_float_eq(tmatch_comm_get(c, 1, 2), 0, 1e-12);
	tmatch_comm_destroy(c);
}

struct bad_file {
	const char *file;
	int line, column; /* -1: do not check the column */
	const char *frag;
};

Test(comm, bad_files_name_line_column_and_fix)
{
	const struct bad_file cases[] = {
	    {"bad_array.mtx", 1, 23, "coordinate"},
	    {"bad_banner.mtx", 1, 1, "%%MatrixMarket"},
	    {"bad_complex.mtx", 1, 34, "real, integer or pattern"},
	    {"bad_notsquare.mtx", 2, -1, "must be square"},
	    {"bad_index.mtx", 4, 3, "column index out of range 1..3"},
	    {"bad_negative.mtx", 3, 5, "negative"},
	    {"bad_short.mtx", 5, 0, "2 of the 3 entries"},
	    {"bad_long.mtx", 4, 1, "more entries than the 1"},
	    {"bad_integer.mtx", 3, 6, "integer"},
	    {"bad_upper.mtx", 3, -1, "above the diagonal"},
	    {"bad_extra.mtx", 3, 7, "one entry per line"},
	    {"bad_exponent.mtx", 3, 6, "exponent"},
	    {"bad_negative.mat", 3, 3, "negative"},
	    {"bad_comma.mat", 1, 4, "','"},
	    {"bad_ragged.mat", 2, -1, "row 2 has 2 values, expected 3"},
	    {"bad_short.mat", 3, 0, "3 rows are expected"},
	    {"bad_long.mat", 3, 1, "more than 2 rows"},
	    {"bad_garbage.mat", 1, 5, "expected a non-negative number"},
	    {"bad_blank.mat", 3, -1, "blank line 2"},
	    {"bad_nan.mat", 1, 3, "expected a non-negative number"},
	    {"bad_empty.mat", 0, 0, "empty matrix"},
	    {"bad_extension.txt", 0, 0, "*.mtx"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tmatch_error_t err;
		char path[512];
		snprintf(path, sizeof(path), FIX "%s", cases[i].file);
		tmatch_error_clear(&err);
		errno = 0;
		cr_assert_null(tmatch_comm_load(path, &err), "%s loaded", cases[i].file);
		cr_assert_eq(errno, EINVAL, "%s: errno %d", cases[i].file, errno);
		cr_assert_str_eq(err.file, path);
		cr_assert_eq(err.line, cases[i].line, "%s: line %d: %s", cases[i].file, err.line,
		             err.msg);
		if (cases[i].column >= 0)
			cr_assert_eq(err.column, cases[i].column, "%s: column %d: %s",
			             cases[i].file, err.column, err.msg);
		cr_assert(strstr(err.msg, cases[i].frag), "%s: '%s' lacks '%s'", cases[i].file,
		          err.msg, cases[i].frag);
	}
}

Test(comm, missing_file_is_reported)
{
	tmatch_error_t err;
	errno = 0;
	cr_assert_null(tmatch_comm_load(FIX "does_not_exist.mtx", &err));
	cr_assert_eq(errno, ENOENT);
	cr_assert(strstr(err.file, "does_not_exist.mtx"));
	cr_assert(strstr(err.msg, "cannot open"));
}
