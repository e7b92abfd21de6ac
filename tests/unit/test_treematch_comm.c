/* SPDX-License-Identifier: BSD-3-Clause */
/* test_treematch_comm.c - the sparse matrix and its two file formats (one reader each). */
#include "treematch/treematch_private.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmp_text.h"
#include "tmpdir.h"

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

/*
 * Edges given sorted, src < dst, each pair once (a finished undirected
 * profile) take the path without buckets; the same edges shuffled and some
 * given as (dst, src) take the general one: both give the same matrix,
 * entry by entry, rows sorted.
 */
Test(comm, from_edges_sorted_input_same_as_shuffled)
{
	enum { N = 300, E = 2000 };
	static int s1[E], d1[E], s2[E], d2[E], perm[E];
	static double w1[E], w2[E];
	tmatch__rng_t rng;
	size_t m = 0;

	tmatch__rng_seed(&rng, 7);
	/* distinct pairs i < j, generated in sorted order */
	for (int i = 0; i < N && m < E; i++)
		for (int j = i + 1; j < N && m < E; j++)
			if (tmatch__rng_below(&rng, 20) == 0) {
				s1[m] = i;
				d1[m] = j;
				w1[m] = (double)(tmatch__rng_below(&rng, 1000)) / 4; /* zeros too */
				m++;
			}
	for (size_t k = 0; k < m; k++)
		perm[k] = (int)k;
	for (size_t k = m - 1; k > 0; k--) {
		size_t r = tmatch__rng_below(&rng, k + 1);
		int t = perm[k];
		perm[k] = perm[r];
		perm[r] = t;
	}
	for (size_t k = 0; k < m; k++) {
		int flip = (int)(k % 2);
		s2[k] = flip ? d1[perm[k]] : s1[perm[k]];
		d2[k] = flip ? s1[perm[k]] : d1[perm[k]];
		w2[k] = w1[perm[k]];
	}
	tmatch_error_t err;
	tmatch_comm_t *a = tmatch_comm_from_edges(N, m, s1, d1, w1, &err);
	tmatch_comm_t *b = tmatch_comm_from_edges(N, m, s2, d2, w2, &err);
	cr_assert_not_null(a, "%s", err.msg);
	cr_assert_not_null(b, "%s", err.msg);
	cr_assert_eq(a->nnz, b->nnz);
	cr_assert_eq(a->total, b->total);
	for (int i = 0; i <= N; i++)
		cr_assert_eq(a->row_ptr[i], b->row_ptr[i], "row_ptr[%d]", i);
	for (size_t k = 0; k < a->nnz; k++) {
		cr_assert_eq(a->col[k], b->col[k], "col[%zu]", k);
		cr_assert_eq(a->w[k], b->w[k], "w[%zu]", k);
	}
	tmatch_comm_destroy(a);
	tmatch_comm_destroy(b);
}

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

/* Edges for tmatch_comm_from_sorted_edges: n given, a second pass that may
   differ from the first, a source that fails. */
struct sorted_src {
	const int *i, *j;
	const double *w;
	int n, passes, change_second, fail;
};

static int sorted_src(void *sarg, tmatch_edge_visit_fn visit, void *varg)
{
	struct sorted_src *s = sarg;

	if (s->fail) {
		errno = EIO;
		return -1;
	}
	s->passes++;
	for (int e = 0; e < s->n - (s->passes == 2 && s->change_second); e++)
		visit(varg, s->i[e], s->j[e], s->w[e]);
	return 0;
}

Test(comm, from_sorted_edges_is_from_edges_and_rejects_bad_input)
{
	const int i[] = {0, 0, 1, 2, 2}, j[] = {1, 3, 3, 3, 4};
	const double w[] = {1.5, 2, 0, 7, 1e3};
	struct sorted_src s = {i, j, w, 5, 0, 0, 0};
	tmatch_error_t err;
	tmatch_comm_t *a = tmatch_comm_from_sorted_edges(5, sorted_src, &s, &err);
	tmatch_comm_t *b = tmatch_comm_from_edges(5, 5, i, j, w, &err);

	cr_assert_not_null(a, "%s", err.msg);
	cr_assert_eq(s.passes, 2);
	cr_assert_eq(a->nnz, b->nnz);
	cr_assert_eq(memcmp(a->row_ptr, b->row_ptr, sizeof(size_t) * 6), 0);
	cr_assert_eq(memcmp(a->col, b->col, sizeof(int) * a->nnz), 0);
	cr_assert_eq(memcmp(a->w, b->w, sizeof(double) * a->nnz), 0);
	cr_assert_eq(a->total, b->total);
	tmatch_comm_destroy(a);
	tmatch_comm_destroy(b);
	{ /* out of order, i >= j, out of range, a negative weight */
		const int bi[][2] = {{0, 0}, {1, 0}, {0, 0}, {0, 0}},
		          bj[][2] = {{2, 1}, {2, 0}, {1, 5}, {1, 2}};
		const double bw[][2] = {{1, 1}, {1, 1}, {1, 1}, {1, -1}};

		for (int k = 0; k < 4; k++) {
			struct sorted_src t = {bi[k], bj[k], bw[k], 2, 0, 0, 0};

			errno = 0;
			cr_assert_null(tmatch_comm_from_sorted_edges(5, sorted_src, &t, &err),
			               "case %d", k);
			cr_assert_eq(errno, EINVAL, "case %d", k);
			cr_assert(strstr(err.msg, "out of order, out of range"), "%s", err.msg);
		}
	}
	s.passes = 0;
	s.change_second = 1; /* one edge fewer the second time */
	errno = 0;
	cr_assert_null(tmatch_comm_from_sorted_edges(5, sorted_src, &s, &err));
	cr_assert_eq(errno, EINVAL);
	s.fail = 1; /* the source's error stands */
	errno = 0;
	cr_assert_null(tmatch_comm_from_sorted_edges(5, sorted_src, &s, &err));
	cr_assert_eq(errno, EIO);
	errno = 0;
	cr_assert_null(tmatch_comm_from_sorted_edges(-1, sorted_src, &s, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(tmatch_comm_from_sorted_edges(3, NULL, NULL, &err));
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

/* ------------------------------------------------------------------------ */
/* The one reader, through its callback                                      */

struct seen {
	int n, stop_at;
	int row[8], col[8], line[8], sym[8], order[8];
	double value[8];
	char text[8][32];
};

static int record_entry(void *arg, const tmatch_matrix_entry_t *e, tmatch_error_t *err)
{
	struct seen *s = arg;

	if (s->n == s->stop_at) {
		err->column = 9;
		snprintf(err->msg, sizeof(err->msg), "refused by the caller");
		errno = EDOM;
		return -1;
	}
	if (s->n < 8) {
		s->row[s->n] = e->row;
		s->col[s->n] = e->col;
		s->line[s->n] = e->line;
		s->sym[s->n] = e->symmetric;
		s->order[s->n] = e->order;
		s->value[s->n] = e->value;
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s", e->text ? e->text : "(pattern)");
	}
	s->n++;
	return 0;
}

Test(comm, reader_gives_each_entry_as_written)
{
	struct seen s = {.stop_at = -1};
	tmatch_error_t err;
	int order = -1, sym = -1;

	cr_assert_eq(tmatch_matrix_read(FIX "good_symmetric.mtx", TMATCH_MATRIX_MTX, record_entry,
	                                &s, &order, &sym, &err),
	             0, "%s", err.msg);
	cr_assert_eq(sym, 1);
	cr_assert_gt(order, 0);
	cr_assert_gt(s.n, 0);
	for (int i = 0; i < s.n && i < 8; i++) {
		cr_expect_eq(s.sym[i], 1);
		cr_expect_eq(s.order[i], order);
		cr_expect_geq(s.row[i], s.col[i], "a symmetric file stores ROW >= COL");
		cr_expect_float_eq(s.value[i], strtod(s.text[i], NULL), 1e-12, "%s", s.text[i]);
	}
	/* .mat: off-diagonal non-zero entries only, row by row */
	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	cr_assert_eq(tmatch_matrix_read(FIX "good_crlf.mat", TMATCH_MATRIX_MAT, record_entry, &s,
	                                &order, &sym, &err),
	             0, "%s", err.msg);
	cr_assert_eq(sym, 0);
	for (int i = 0; i < s.n && i < 8; i++) {
		cr_expect_neq(s.row[i], s.col[i]);
		cr_expect_neq(s.value[i], 0);
		cr_expect_eq(s.line[i], s.row[i] + 1);
	}
}

/* Numbers read without strtod where that is exact (short plain integers)
   must come out as strtod reads them, and indices with a sign or leading
   zeros as strtol reads them; long ones are still out of range. */
Test(comm, reader_numbers_as_strtod_and_strtol_read_them)
{
	static const char *const values[8] = {"+000042",
	                                      "999999999999999",
	                                      "9007199254740993",
	                                      "12345678901234567",
	                                      "2.5e1",
	                                      "1e300",
	                                      "0.1",
	                                      "3."};
	static const int rows[8] = {1, 2, 3, 3, 1, 2, 3, 2}, cols[8] = {2, 1, 1, 2, 3, 3, 2, 2};
	static const char *const idx[8][2] = {{"1", "2"},   {"2", "1"}, {"+3", "1"}, {"03", "2"},
	                                      {"1", "+03"}, {"2", "3"}, {"3", "2"},  {"2", "2"}};
	char text[1024];
	size_t len;
	struct seen s = {.stop_at = -1};
	tmatch_error_t err;
	int order = 0;
	char *path;

	len = (size_t)snprintf(text, sizeof(text),
	                       "%%%%MatrixMarket matrix coordinate real general\n3 3 8\n");
	for (int i = 0; i < 8; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %s %s\n", idx[i][0],
		                        idx[i][1], values[i]);
	path = tmp_text(text);
	cr_assert_eq(
	    tmatch_matrix_read(path, TMATCH_MATRIX_MTX, record_entry, &s, &order, NULL, &err), 0,
	    "%s", err.msg);
	unlink(path);
	cr_assert_eq(s.n, 8);
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(s.row[i], rows[i] - 1, "entry %d", i);
		cr_expect_eq(s.col[i], cols[i] - 1, "entry %d", i);
		cr_expect_str_eq(s.text[i], values[i]);
		cr_expect(s.value[i] == strtod(values[i], NULL), "%s read as %.17g", values[i],
		          s.value[i]);
	}
	/* .mat: the same numbers in a dense row */
	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	path = tmp_text("0 999999999999999 9007199254740993\n+000042 0 1e300\n0.1 3. 0\n");
	cr_assert_eq(
	    tmatch_matrix_read(path, TMATCH_MATRIX_MAT, record_entry, &s, &order, NULL, &err), 0,
	    "%s", err.msg);
	unlink(path);
	cr_assert_eq(s.n, 6);
	for (int i = 0; i < s.n; i++)
		cr_expect(s.value[i] == strtod(s.text[i], NULL), "%s read as %.17g", s.text[i],
		          s.value[i]);
	/* an index far beyond any int is out of range, not wrapped */
	path = tmp_text("%%MatrixMarket matrix coordinate real general\n3 3 1\n"
	                "2 18446744073709551618 1\n");
	cr_assert_eq(
	    tmatch_matrix_read(path, TMATCH_MATRIX_MTX, record_entry, &s, &order, NULL, &err), -1);
	unlink(path);
	cr_assert_eq(err.line, 3);
	cr_assert_eq(err.column, 3);
	cr_assert_str_eq(err.msg, "column index out of range 1..3");
}

Test(comm, reader_stops_where_the_caller_refuses)
{
	struct seen s = {.stop_at = 1};
	tmatch_error_t err;
	char *path = tmp_text(
	    "%%MatrixMarket matrix coordinate integer general\n% c\n3 3 2\n1 2 5\n2 3 7\n");
	int order = 77;
	errno = 0;
	cr_assert_eq(
	    tmatch_matrix_read(path, TMATCH_MATRIX_MTX, record_entry, &s, &order, NULL, &err), -1);
	cr_assert_eq(errno, EDOM, "the callback's errno comes back");
	cr_assert_str_eq(err.file, path);
	cr_assert_eq(err.line, 5, "the refused entry's line");
	cr_assert_eq(err.column, 9, "the callback's column");
	cr_assert_str_eq(err.msg, "refused by the caller");
	cr_assert_eq(order, 77, "outputs untouched on failure");
	cr_assert_str_eq(s.text[0], "5");
	unlink(path);
}

Test(comm, reader_rejects_bad_arguments)
{
	tmatch_error_t err;
	struct seen s = {.stop_at = -1};

	errno = 0;
	cr_assert_eq(
	    tmatch_matrix_read(NULL, TMATCH_MATRIX_MTX, record_entry, &s, NULL, NULL, &err), -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(tmatch_matrix_read(FIX "good_general.mtx", TMATCH_MATRIX_MTX, NULL, &s, NULL,
	                                NULL, &err),
	             -1);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(
	    tmatch_matrix_read(FIX "good_general.mtx", 42, record_entry, &s, NULL, NULL, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(s.n, 0);
	cr_assert_eq(tmatch_matrix_format_of("a.MTX"), TMATCH_MATRIX_MTX);
	cr_assert_eq(tmatch_matrix_format_of("a.mat"), TMATCH_MATRIX_MAT);
	cr_assert_eq(tmatch_matrix_format_of("a.yml"), 0);
	cr_assert_eq(tmatch_matrix_format_of(NULL), 0);
}

/* A file of `len` bytes: `head` then `fill` repeated (0: a hole). */
static void hostile_file(const char *path, const char *head, char fill, size_t len)
{
	FILE *f = fopen(path, "w");
	size_t n = strlen(head);

	cr_assert_not_null(f);
	fputs(head, f);
	if (fill)
		for (; n < len; n++)
			fputc(fill, f);
	cr_assert_eq(fclose(f), 0);
	if (!fill)
		cr_assert_eq(truncate(path, (off_t)len), 0);
}

static void refused(const char *path, int want_errno, const char *frag)
{
	tmatch_error_t err;
	struct timespec t0, t1;

	tmatch_error_clear(&err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	cr_assert_null(tmatch_comm_load(path, &err), "%s loaded", path);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_eq(errno, want_errno, "%s: errno %d: %s", path, errno, err.msg);
	cr_assert_str_eq(err.file, path);
	cr_assert(strstr(err.msg, frag), "%s: '%s' lacks '%s'", path, err.msg, frag);
	/* the bound for a hostile file; here it is milliseconds */
	cr_assert_lt((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9,
	             1.0, "%s", path);
}

Test(comm, hostile_files_are_refused_at_once, .timeout = 30)
{
	char dir[TM_TMP_MAX], p[TM_TMP_MAX + 64];
	tm_tmpname(dir, sizeof(dir), "tm-comm-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	/* a FIFO would block the open and never end */
	snprintf(p, sizeof(p), "%s/fifo.mtx", dir);
	cr_assert_eq(mkfifo(p, 0600), 0);
	refused(p, EINVAL, "not a regular file");
	snprintf(p, sizeof(p), "%s/zero.mtx", dir);
	cr_assert_eq(symlink("/dev/zero", p), 0);
	refused(p, EINVAL, "not a regular file");
	/* declared sizes a file of this size cannot describe */
	snprintf(p, sizeof(p), "%s/dims.mtx", dir);
	hostile_file(
	    p, "%%MatrixMarket matrix coordinate real general\n100000000 100000000 1\n1 2 3\n", ' ',
	    0);
	refused(p, EINVAL, "declares 100000000 ranks but the file has only");
	snprintf(p, sizeof(p), "%s/nnz.mtx", dir);
	hostile_file(p, "%%MatrixMarket matrix coordinate real general\n4 4 1000000000000\n1 2 3\n",
	             ' ', 0);
	refused(p, EINVAL, "announces 1000000000000 entries");
	/* a 3 GB sparse file (all NUL bytes but the banner) and one 17 MiB line */
	snprintf(p, sizeof(p), "%s/sparse.mtx", dir);
	hostile_file(p, "%%MatrixMarket matrix coordinate real general\n", 0, (size_t)3 << 30);
	refused(p, EINVAL, "line 2: a NUL byte");
	snprintf(p, sizeof(p), "%s/long.mat", dir);
	hostile_file(p, "1 ", '1', (size_t)17 << 20);
	refused(p, EINVAL, "line 1: a line longer than 16 MiB");
	/* a number longer than the reader's buffer: refused, not cut */
	{
		char head[512];

		snprintf(head, sizeof(head),
		         "%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 %0200d\n", 7);
		snprintf(p, sizeof(p), "%s/longnum.mtx", dir);
		hostile_file(p, head, ' ', 0);
		refused(p, EINVAL, "number longer than 127 characters");
	}
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	cr_assert_eq(system(p), 0);
}
