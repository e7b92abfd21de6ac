/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comm.c - the symmetric sparse communication matrix (CSR, both triangles):
 * built from an edge list, read row by row. Its file formats are in
 * comm_read.c.
 */
#include "treematch/treematch_private.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void *fail_null(tmatch_error_t *err, const char *file, int line, int column, int errnum,
                       const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void *fail_null(tmatch_error_t *err, const char *file, int line, int column, int errnum,
                       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tmatch_error_vset(err, 0, file, line, column, fmt, ap);
	va_end(ap);
	errno = errnum;
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* From sorted edges, in two passes over a source                           */

struct sorted_build {
	tmatch_comm_t *c;
	size_t *pos; /* filling: row i's next entry; NULL while counting */
	int n, last_i, last_j, bad;
};

static void sorted_visit(void *varg, int i, int j, double w)
{
	struct sorted_build *b = varg;
	tmatch_comm_t *c = b->c;

	if (b->bad)
		return;
	if (i < 0 || j <= i || j >= b->n || !isfinite(w) || w < 0 || i < b->last_i ||
	    (i == b->last_i && j <= b->last_j)) {
		b->bad = 1;
		return;
	}
	b->last_i = i;
	b->last_j = j;
	if (w == 0)
		return;
	if (!b->pos) { /* counting, in row_ptr[row + 1] */
		c->row_ptr[i + 1]++;
		c->row_ptr[j + 1]++;
		return;
	}
	if (b->pos[i] >= c->row_ptr[i + 1] || b->pos[j] >= c->row_ptr[j + 1]) {
		b->bad = 1; /* not the edges counted */
		return;
	}
	c->col[b->pos[i]] = j;
	c->w[b->pos[i]++] = w;
	c->col[b->pos[j]] = i;
	c->w[b->pos[j]++] = w;
}

tmatch_comm_t *tmatch_comm_from_sorted_edges(int n, tmatch_edge_source_fn source, void *sarg,
                                             tmatch_error_t *err)
{
	struct sorted_build b = {NULL, NULL, n, -1, -1, 0};
	tmatch_comm_t *c;
	size_t m2;

	if (n < 0 || !source)
		return fail_null(err, NULL, 0, 0, EINVAL,
		                 "tmatch_comm_from_sorted_edges: invalid argument");
	c = b.c = calloc(1, sizeof(*c));
	if (!c || !(c->row_ptr = calloc((size_t)n + 1, sizeof(*c->row_ptr))))
		goto nomem;
	c->n = n;
	if (source(sarg, sorted_visit, &b) != 0)
		goto fail;
	if (b.bad)
		goto bad;
	for (int i = 0; i < n; i++) /* counts -> row starts */
		c->row_ptr[i + 1] += c->row_ptr[i];
	m2 = c->row_ptr[n];
	b.pos = malloc(sizeof(*b.pos) * ((size_t)n + 1));
	/* zeroed: clang-analyzer cannot see that the fill writes every entry */
	c->col = calloc(m2 ? m2 : 1, sizeof(*c->col));
	c->w = calloc(m2 ? m2 : 1, sizeof(*c->w));
	if (!b.pos || !c->col || !c->w)
		goto nomem;
	memcpy(b.pos, c->row_ptr, sizeof(*b.pos) * ((size_t)n + 1));
	b.last_i = b.last_j = -1;
	if (source(sarg, sorted_visit, &b) != 0)
		goto fail;
	for (int i = 0; i < n && !b.bad; i++) /* every row filled to its end */
		b.bad = b.pos[i] != c->row_ptr[i + 1];
	if (b.bad)
		goto bad;
	free(b.pos);
	c->nnz = m2;
	c->total = 0;
	for (size_t e = 0; e < m2; e++)
		c->total += c->w[e];
	c->total /= 2;
	return c;
bad:
	free(b.pos);
	tmatch_comm_destroy(c);
	return fail_null(err, NULL, 0, 0, EINVAL,
	                 "edges out of order, out of range, or not the same twice");
nomem:
	free(b.pos);
	tmatch_comm_destroy(c);
	return fail_null(err, NULL, 0, 0, ENOMEM, "out of memory building a %d x %d matrix", n, n);
fail:
	free(b.pos);
	tmatch_comm_destroy(c);
	return NULL;
}

/* An array of sorted edges as a source. */
struct edge_array {
	const int *src, *dst;
	const double *w;
	size_t n;
};

static int array_source(void *sarg, tmatch_edge_visit_fn visit, void *varg)
{
	const struct edge_array *a = sarg;

	for (size_t e = 0; e < a->n; e++)
		visit(varg, a->src[e], a->dst[e], a->w ? a->w[e] : 1.0);
	return 0;
}

tmatch_comm_t *tmatch_comm_from_edges(int n, size_t nedges, const int *src, const int *dst,
                                      const double *weight, tmatch_error_t *err)
{
	tmatch_comm_t *c = NULL;
	size_t *cnt = NULL, *pos = NULL, kept = 0, m2, k;
	int *brow = NULL, sorted = 1;
	double *bw = NULL;

	if (n < 0)
		return fail_null(err, NULL, 0, 0, EINVAL, "matrix order %d is negative", n);
	if (nedges > 0 && (!src || !dst))
		return fail_null(err, NULL, 0, 0, EINVAL,
		                 "tmatch_comm_from_edges: NULL edge array");
	if (nedges > SIZE_MAX / 4)
		return fail_null(err, NULL, 0, 0, EINVAL, "too many edges");
	for (size_t e = 0; e < nedges; e++) {
		double w = weight ? weight[e] : 1.0;
		if (src[e] < 0 || src[e] >= n || dst[e] < 0 || dst[e] >= n)
			return fail_null(err, NULL, 0, 0, EINVAL,
			                 "edge %zu (%d, %d): rank outside 0..%d", e, src[e], dst[e],
			                 n - 1);
		if (!isfinite(w) || w < 0)
			return fail_null(err, NULL, 0, 0, EINVAL,
			                 "edge %zu (%d, %d): weight %g must be finite and >= 0", e,
			                 src[e], dst[e], w);
		sorted &= src[e] < dst[e] && (e == 0 || src[e] > src[e - 1] ||
		                              (src[e] == src[e - 1] && dst[e] > dst[e - 1]));
	}
	if (sorted) {
		/* Edges sorted by (src, dst), src < dst, each pair once (a finished
		   undirected profile): appended to both rows in this order, every
		   row comes out sorted, with no buckets and no merging. */
		struct edge_array a = {src, dst, weight, nedges};

		return tmatch_comm_from_sorted_edges(n, array_source, &a, err);
	}
	cnt = calloc((size_t)n + 1, sizeof(*cnt));
	pos = calloc((size_t)n + 1, sizeof(*pos));
	c = calloc(1, sizeof(*c));
	if (!cnt || !pos || !c)
		goto nomem;
	for (size_t e = 0; e < nedges; e++) {
		double w = weight ? weight[e] : 1.0;
		if (src[e] == dst[e] || w == 0)
			continue;
		cnt[src[e]]++;
		cnt[dst[e]]++;
		kept++;
	}
	m2 = 2 * kept;
	c->n = n;
	c->row_ptr = calloc((size_t)n + 1, sizeof(*c->row_ptr));
	/* zeroed: clang-analyzer cannot see that pass 1 fills every bucket */
	if (!sorted) {
		brow = calloc(m2 ? m2 : 1, sizeof(*brow));
		bw = calloc(m2 ? m2 : 1, sizeof(*bw));
	}
	/* zeroed: clang-analyzer cannot see that the passes below fill every entry */
	c->col = calloc(m2 ? m2 : 1, sizeof(*c->col));
	c->w = calloc(m2 ? m2 : 1, sizeof(*c->w));
	if (!c->row_ptr || (!sorted && (!brow || !bw)) || !c->col || !c->w)
		goto nomem;
	pos[0] = 0;
	for (int i = 0; i < n; i++)
		pos[i + 1] = pos[i] + cnt[i];
	for (int i = 0; i <= n; i++)
		c->row_ptr[i] = pos[i];
	/* Pass 1: bucket directed entries by column. */
	for (size_t e = 0; e < nedges; e++) {
		double w = weight ? weight[e] : 1.0;
		if (src[e] == dst[e] || w == 0)
			continue;
		brow[pos[dst[e]]] = src[e];
		bw[pos[dst[e]]++] = w;
		brow[pos[src[e]]] = dst[e];
		bw[pos[src[e]]++] = w;
	}
	/* Pass 2: columns in increasing order into their rows -> sorted rows. */
	for (int i = 0; i < n; i++)
		pos[i] = c->row_ptr[i];
	for (int col = 0; col < n; col++) {
		for (size_t e = c->row_ptr[col]; e < c->row_ptr[col + 1]; e++) {
			int r = brow[e];
			c->col[pos[r]] = col;
			c->w[pos[r]++] = bw[e];
		}
	}
	free(brow);
	free(bw);
	brow = NULL;
	bw = NULL;

	/* Merge duplicates in place. */
	k = 0;
	c->total = 0;
	for (int i = 0; i < n; i++) {
		size_t start = c->row_ptr[i], end = c->row_ptr[i + 1];
		c->row_ptr[i] = k;
		for (size_t e = start; e < end; e++) {
			if (k > c->row_ptr[i] && c->col[k - 1] == c->col[e]) {
				c->w[k - 1] += c->w[e];
			} else {
				c->col[k] = c->col[e];
				c->w[k++] = c->w[e];
			}
		}
	}
	c->row_ptr[n] = k;
	c->nnz = k;
	for (size_t e = 0; e < k; e++) {
		if (!isfinite(c->w[e])) {
			tmatch_comm_destroy(c);
			c = NULL;
			fail_null(err, NULL, 0, 0, ERANGE,
			          "a pair's total weight overflows a double");
			goto out;
		}
		c->total += c->w[e];
	}
	c->total /= 2;
	if (k > 0 && k < m2) {
		int *nc = realloc(c->col, k * sizeof(*nc));
		double *nw = realloc(c->w, k * sizeof(*nw));
		if (nc)
			c->col = nc;
		if (nw)
			c->w = nw;
	}
	goto out;
nomem:
	tmatch_comm_destroy(c);
	c = NULL;
	fail_null(err, NULL, 0, 0, ENOMEM, "out of memory building a %d x %d matrix", n, n);
out:
	free(cnt);
	free(pos);
	free(brow);
	free(bw);
	return c;
}

void tmatch_comm_destroy(tmatch_comm_t *comm)
{
	if (!comm)
		return;
	free(comm->row_ptr);
	free(comm->col);
	free(comm->w);
	free(comm);
}

int tmatch_comm_order(const tmatch_comm_t *comm)
{
	if (!comm) {
		errno = EINVAL;
		return -1;
	}
	return comm->n;
}

size_t tmatch_comm_nnz(const tmatch_comm_t *comm)
{
	if (!comm) {
		errno = EINVAL;
		return 0;
	}
	return comm->nnz;
}

double tmatch_comm_total(const tmatch_comm_t *comm)
{
	if (!comm) {
		errno = EINVAL;
		return 0;
	}
	return comm->total;
}

int tmatch_comm_row(const tmatch_comm_t *comm, int i, const int **cols, const double **weights)
{
	if (!comm || i < 0 || i >= comm->n) {
		errno = EINVAL;
		return -1;
	}
	if (cols)
		*cols = comm->col + comm->row_ptr[i];
	if (weights)
		*weights = comm->w + comm->row_ptr[i];
	return (int)(comm->row_ptr[i + 1] - comm->row_ptr[i]);
}

double tmatch_comm_get(const tmatch_comm_t *comm, int i, int j)
{
	size_t lo, hi;

	if (!comm || i < 0 || j < 0 || i >= comm->n || j >= comm->n) {
		errno = EINVAL;
		return 0;
	}
	lo = comm->row_ptr[i];
	hi = comm->row_ptr[i + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (comm->col[mid] < j)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < comm->row_ptr[i + 1] && comm->col[lo] == j ? comm->w[lo] : 0;
}
