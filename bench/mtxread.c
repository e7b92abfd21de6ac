/* SPDX-License-Identifier: BSD-3-Clause */
/* mtxread.c - see mtxread.h. */
#include "bench/mtxread.h"
#include "treematch/treematch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_csr_free(bench_csr_t *csr)
{
	if (!csr)
		return;
	free(csr->row_ptr);
	free(csr->col);
	free(csr->w);
	memset(csr, 0, sizeof(*csr));
}

struct trip {
	int i, j;
	double w;
};

struct trips {
	struct trip *t;
	size_t n, cap;
};

static int cmp_col(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Every entry as the file gives it (the library's reader checks the syntax). */
static int take_entry(void *arg, const tmatch_matrix_entry_t *e, tmatch_error_t *err)
{
	struct trips *T = arg;

	if (T->n == T->cap) {
		size_t cap = T->cap ? 2 * T->cap : 1024;
		struct trip *t = realloc(T->t, cap * sizeof(*t));
		if (!t)
			return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		T->t = t;
		T->cap = cap;
	}
	T->t[T->n].i = e->row;
	T->t[T->n].j = e->col;
	T->t[T->n++].w = e->value;
	return 0;
}

int bench_csr_load_mtx(const char *path, bench_csr_t *out, char *err, size_t errlen)
{
	struct trips T = {0};
	struct trip *t;
	size_t ntrip;
	int n = 0, rc = -1;
	size_t *rp = NULL, *fill = NULL;
	int *col = NULL;
	double *w = NULL;
	tmatch_error_t e;

	if (tmatch_matrix_read(path, TMATCH_MATRIX_MTX, take_entry, &T, &n, NULL, &e)) {
		tmatch_error_format(&e, err, errlen);
		free(T.t);
		return -1;
	}
	t = T.t;
	ntrip = T.n;

	/* Both directions of every off-diagonal nonzero entry. */
	rp = calloc((size_t)n + 1, sizeof(*rp));
	fill = calloc((size_t)n + 1, sizeof(*fill));
	if (!rp || !fill) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < ntrip; k++)
		if (t[k].i != t[k].j && t[k].w > 0) {
			rp[t[k].i + 1]++;
			rp[t[k].j + 1]++;
		}
	for (int i = 0; i < n; i++)
		rp[i + 1] += rp[i];
	col = malloc((rp[n] ? rp[n] : 1) * sizeof(*col));
	w = malloc((rp[n] ? rp[n] : 1) * sizeof(*w));
	if (!col || !w) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	memcpy(fill, rp, ((size_t)n + 1) * sizeof(*rp));
	/* Store (col, weight) so rows can be sorted by column, then merged. */
	for (size_t k = 0; k < ntrip; k++)
		if (t[k].i != t[k].j && t[k].w > 0) {
			col[fill[t[k].i]] = t[k].j;
			w[fill[t[k].i]++] = t[k].w;
			col[fill[t[k].j]] = t[k].i;
			w[fill[t[k].j]++] = t[k].w;
		}
	free(t);
	t = NULL;
	/* Sort each row by column (pairs packed in a scratch array) and merge. */
	size_t maxdeg = 0, outpos = 0;
	for (int i = 0; i < n; i++)
		if (rp[i + 1] - rp[i] > maxdeg)
			maxdeg = rp[i + 1] - rp[i];
	struct pair {
		int c;
		int pad;
		double v;
	} *sc = malloc((maxdeg ? maxdeg : 1) * sizeof(*sc));
	if (!sc) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	size_t start = 0;
	for (int i = 0; i < n; i++) {
		size_t end = rp[i + 1], d = end - start;
		for (size_t k = 0; k < d; k++) {
			sc[k].c = col[start + k];
			sc[k].pad = 0;
			sc[k].v = w[start + k];
		}
		qsort(sc, d, sizeof(*sc), cmp_col); /* c is the first member */
		rp[i] = outpos;
		for (size_t k = 0; k < d; k++) {
			if (outpos > rp[i] && col[outpos - 1] == sc[k].c) {
				w[outpos - 1] += sc[k].v;
			} else {
				col[outpos] = sc[k].c;
				w[outpos++] = sc[k].v;
			}
		}
		start = end;
	}
	rp[n] = outpos;
	free(sc);
	out->n = n;
	out->nnz = outpos;
	out->row_ptr = rp;
	out->col = col;
	out->w = w;
	rp = NULL;
	col = NULL;
	w = NULL;
	rc = 0;
out:
	free(fill);
	free(rp);
	free(col);
	free(w);
	free(t);
	return rc;
}

int bench_parse_tleaf(const char *spec, int *arity, double *cost, char *err, size_t errlen)
{
	tmatch_error_t e;
	tmatch_topo_t *topo = tmatch_topo_from_tleaf(spec, &e);
	int depth;

	if (!topo) {
		tmatch_error_format(&e, err, errlen);
		return -1;
	}
	depth = tmatch_topo_depth(topo);
	for (int l = 0; l < depth; l++) {
		arity[l] = tmatch_topo_arity(topo, l);
		cost[l] = tmatch_topo_cost(topo, l);
	}
	tmatch_topo_destroy(topo);
	return depth;
}
