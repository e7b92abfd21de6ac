/* SPDX-License-Identifier: BSD-3-Clause */
/* mtxread.c - see mtxread.h. */
#include "bench/mtxread.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static int cmp_col(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int bench_csr_load_mtx(const char *path, bench_csr_t *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, ntrip = 0, declared = 0, lineno = 0;
	struct trip *t = NULL;
	int n = -1, pattern = 0, symmetric = 0, rc = -1;
	size_t *rp = NULL, *fill = NULL;
	int *col = NULL, *tmpcol = NULL;
	double *w = NULL;
	long rows, cols;

	if (!f) {
		snprintf(err, errlen, "%.200s: %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (lineno == 1) {
			if (strncasecmp(line, "%%MatrixMarket", 14) != 0 ||
			    !strcasestr(line, "coordinate")) {
				snprintf(err, errlen,
				         "%.200s:1: not a Matrix Market coordinate file", path);
				goto out;
			}
			pattern = strcasestr(line, "pattern") != NULL;
			symmetric = strcasestr(line, "symmetric") != NULL;
			continue;
		}
		if (line[0] == '%' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (n < 0) {
			unsigned long long nz;
			if (sscanf(line, "%ld %ld %llu", &rows, &cols, &nz) != 3 || rows != cols ||
			    rows < 1 || rows > (1L << 30)) {
				snprintf(err, errlen,
				         "%.200s:%zu: expected 'N N NNZ' with a square size", path,
				         lineno);
				goto out;
			}
			n = (int)rows;
			declared = (size_t)nz;
			t = malloc((declared ? declared : 1) * sizeof(*t));
			if (!t) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			continue;
		}
		char *p = line, *end;
		long i = strtol(p, &end, 10), j;
		double v = 1;
		if (end == p)
			goto bad;
		p = end;
		j = strtol(p, &end, 10);
		if (end == p)
			goto bad;
		p = end;
		if (!pattern) {
			v = strtod(p, &end);
			if (end == p)
				goto bad;
			p = end;
		}
		while (isspace((unsigned char)*p))
			p++;
		if (*p || i < 1 || i > n || j < 1 || j > n || !isfinite(v) || v < 0)
			goto bad;
		if (ntrip == declared) {
			snprintf(err, errlen, "%.200s:%zu: more entries than the %zu declared",
			         path, lineno, declared);
			goto out;
		}
		t[ntrip].i = (int)i - 1;
		t[ntrip].j = (int)j - 1;
		t[ntrip].w = v;
		ntrip++;
		continue;
	bad:
		snprintf(err, errlen, "%.200s:%zu: expected 'ROW COL%s' with indices in 1..%d",
		         path, lineno, pattern ? "" : " VALUE>=0", n);
		goto out;
	}
	if (n < 0) {
		snprintf(err, errlen, "%.200s: no size line", path);
		goto out;
	}
	(void)symmetric; /* a general file's (i,j) and (j,i) are summed anyway */

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
	free(tmpcol);
	free(fill);
	free(rp);
	free(col);
	free(w);
	free(t);
	free(line);
	fclose(f);
	return rc;
}

int bench_parse_tleaf(const char *spec, int *arity, double *cost, char *err, size_t errlen)
{
	const char *p = spec;
	char *end;
	long depth;

	while (isspace((unsigned char)*p))
		p++;
	if (!strncmp(p, "tleaf", 5))
		p += 5;
	depth = strtol(p, &end, 10);
	if (end == p || depth < 1 || depth > 16) {
		snprintf(err, errlen, "tleaf: expected a depth 1..16 first");
		return -1;
	}
	p = end;
	for (int l = 0; l < depth; l++) {
		long a = strtol(p, &end, 10);
		if (end == p || a < 1) {
			snprintf(err, errlen, "tleaf: level %d needs an arity >= 1", l);
			return -1;
		}
		p = end;
		double c = strtod(p, &end);
		if (end == p || !(c >= 0)) {
			snprintf(err, errlen, "tleaf: level %d needs a cost >= 0", l);
			return -1;
		}
		p = end;
		arity[l] = (int)a;
		cost[l] = c;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p) {
		snprintf(err, errlen, "tleaf: trailing text after %ld levels", depth);
		return -1;
	}
	return (int)depth;
}
