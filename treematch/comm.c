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
	if (sorted) {
		/* Edges sorted by (src, dst), src < dst, each pair once (a finished
		   undirected profile): appending each to both rows in this order
		   leaves every row sorted (smaller sources first, then its own
		   destinations), so the buckets below and their 12 bytes per entry
		   are not needed. */
		for (size_t e = 0; e < nedges; e++) {
			double w = weight ? weight[e] : 1.0;
			if (w == 0)
				continue;
			c->col[pos[src[e]]] = dst[e];
			c->w[pos[src[e]]++] = w;
			c->col[pos[dst[e]]] = src[e];
			c->w[pos[dst[e]]++] = w;
		}
		goto merged;
	}
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
merged:
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
