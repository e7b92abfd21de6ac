/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comm.c - the symmetric sparse communication matrix (CSR, both triangles)
 * and its two file formats: Matrix Market coordinate (.mtx) and the
 * TreeMatch dense text matrix (.mat).
 *
 * Weights: the weight of a pair is the sum of what the input gives for
 * (i, j) and for (j, i). A symmetric Matrix Market file stores one triangle
 * of a matrix whose other triangle is equal, so its entry counts twice,
 * exactly as the same matrix written out in "general" form would.
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
	int *brow = NULL;
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
	brow = calloc(m2 ? m2 : 1, sizeof(*brow));
	bw = calloc(m2 ? m2 : 1, sizeof(*bw));
	c->col = malloc((m2 ? m2 : 1) * sizeof(*c->col));
	c->w = malloc((m2 ? m2 : 1) * sizeof(*c->w));
	if (!c->row_ptr || !brow || !bw || !c->col || !c->w)
		goto nomem;
	/* Pass 1: bucket directed entries by column. */
	pos[0] = 0;
	for (int i = 0; i < n; i++)
		pos[i + 1] = pos[i] + cnt[i];
	for (int i = 0; i <= n; i++)
		c->row_ptr[i] = pos[i];
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

/* ------------------------------------------------------------------------ */
/* Reading text files                                                        */

struct reader {
	FILE *f;
	const char *path;
	char *line;
	size_t cap;
	int lineno;
};

/* Next line without its "\n" / "\r\n"; NULL at end of file. */
static char *read_line(struct reader *r)
{
	ssize_t len = getline(&r->line, &r->cap, r->f);
	if (len < 0)
		return NULL;
	r->lineno++;
	while (len > 0 && (r->line[len - 1] == '\n' || r->line[len - 1] == '\r'))
		r->line[--len] = '\0';
	return r->line;
}

static int is_blank(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0';
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static const char *token_end(const char *s)
{
	while (*s && *s != ' ' && *s != '\t')
		s++;
	return s;
}

/*
 * Check that [s, e) is a plain number: [+]digits[.digits][(e|E)[+-]digits]
 * (or .digits). Returns NULL when fine, else what is wrong; *bad is set to
 * the offending character.
 */
static const char *check_number(const char *s, const char *e, int integer_only, const char **bad)
{
	const char *p = s;
	int digits = 0;

	if (p < e && *p == '-') {
		*bad = p;
		return "negative number: communication volumes must be >= 0";
	}
	if (p < e && *p == '+')
		p++;
	while (p < e && isdigit((unsigned char)*p))
		p++, digits++;
	if (p < e && *p == '.' && !integer_only) {
		p++;
		while (p < e && isdigit((unsigned char)*p))
			p++, digits++;
	}
	if (!digits) {
		*bad = p;
		return integer_only ? "expected a non-negative integer"
		                    : "expected a non-negative number";
	}
	if (p < e && (*p == 'e' || *p == 'E') && !integer_only) {
		const char *q = p + 1;
		int ed = 0;
		if (q < e && (*q == '+' || *q == '-'))
			q++;
		while (q < e && isdigit((unsigned char)*q))
			q++, ed++;
		if (!ed) {
			*bad = p;
			return "malformed exponent";
		}
		p = q;
	}
	if (p != e) {
		*bad = p;
		if (*p == ',')
			return "unexpected ',': separate numbers with spaces or tabs";
		return integer_only ? "unexpected character in an integer"
		                    : "unexpected character in a number";
	}
	return NULL;
}

static double token_value(const char *s, const char *e)
{
	char buf[128];
	size_t len = (size_t)(e - s);
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return strtod(buf, NULL);
}

/* Growing edge list. */
struct edges {
	int *src, *dst;
	double *w;
	size_t n, cap;
};

static int edges_push(struct edges *E, int i, int j, double w)
{
	if (E->n == E->cap) {
		size_t cap = E->cap ? 2 * E->cap : 1024;
		int *s = realloc(E->src, cap * sizeof(*s));
		if (!s)
			return -1;
		E->src = s;
		int *d = realloc(E->dst, cap * sizeof(*d));
		if (!d)
			return -1;
		E->dst = d;
		double *ww = realloc(E->w, cap * sizeof(*ww));
		if (!ww)
			return -1;
		E->w = ww;
		E->cap = cap;
	}
	E->src[E->n] = i;
	E->dst[E->n] = j;
	E->w[E->n++] = w;
	return 0;
}

static void edges_free(struct edges *E)
{
	free(E->src);
	free(E->dst);
	free(E->w);
}

static int open_reader(struct reader *r, const char *path, tmatch_error_t *err)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->f = fopen(path, "r");
	if (!r->f) {
		int e = errno;
		tmatch_error_set(err, 0, path, 0, 0, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

static void close_reader(struct reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->line);
}

#define COL(p) ((int)((p)-line) + 1)
/* In the loaders: record a parse error at the current line, column colp; go to out. */
#define BAD(colp, ...)                                                                             \
	do {                                                                                       \
		lineno_err = r.lineno;                                                             \
		col_err = (colp);                                                                  \
		snprintf(msg, sizeof(msg), __VA_ARGS__);                                           \
		goto out;                                                                          \
	} while (0)

/*
 * The end of both loaders: the matrix of order n from the edges read, unless
 * a parse error was recorded (msg not empty); on failure NULL with errno
 * set and err naming path, line and column. Frees the edges, closes the file.
 */
static tmatch_comm_t *load_end(struct reader *r, struct edges *E, int n, const char *path, int line,
                               int column, int errnum, const char *msg, tmatch_error_t *err)
{
	tmatch_comm_t *c = NULL;
	char why[sizeof(((tmatch_error_t *)0)->msg)];

	if (!*msg) {
		c = tmatch_comm_from_edges(n, E->n, E->src, E->dst, E->w, err);
		if (!c) {
			errnum = errno;
			snprintf(why, sizeof(why), "%s",
			         err ? err->msg : "cannot build the matrix");
			msg = why;
			line = 0;
		}
	}
	if (!c) {
		tmatch_error_set(err, 0, path, line, column, "%s", msg);
		errno = errnum;
	}
	edges_free(E);
	close_reader(r);
	return c;
}

/* ------------------------------------------------------------------------ */
/* Matrix Market                                                             */

enum mm_field { MM_REAL, MM_INTEGER, MM_PATTERN };

tmatch_comm_t *tmatch_comm_load_mtx(const char *path, tmatch_error_t *err)
{
	struct reader r;
	struct edges E = {0};
	char *line;
	const char *p, *e, *bad, *why;
	const char *tok[5], *tend[5];
	enum mm_field field = MM_REAL;
	int symmetric = 0, n = 0;
	long long rows, cols;
	unsigned long long nnz, seen = 0;
	int lineno_err = 0, col_err = 0, errnum = EINVAL;
	char msg[sizeof(((tmatch_error_t *)0)->msg)] = "";

	if (!path)
		return fail_null(err, NULL, 0, 0, EINVAL, "tmatch_comm_load_mtx: path is NULL");
	if (open_reader(&r, path, err))
		return NULL;

	/* Banner. */
	line = read_line(&r);
	if (!line) {
		lineno_err = 1;
		snprintf(msg, sizeof(msg),
		         "empty file: a Matrix Market file starts with "
		         "\"%%%%MatrixMarket matrix coordinate real general\"");
		goto out;
	}
	p = line;
	for (int t = 0; t < 5; t++) {
		p = skip_ws(p);
		tok[t] = p;
		tend[t] = token_end(p);
		p = tend[t];
	}
#define TOKEQ(t, s) ((size_t)(tend[t] - tok[t]) == strlen(s) && !strncasecmp(tok[t], s, strlen(s)))
	if (!TOKEQ(0, "%%MatrixMarket"))
		BAD(1, "missing banner: the first line must be "
		       "\"%%%%MatrixMarket matrix coordinate real general\"");
	if (!TOKEQ(1, "matrix"))
		BAD(COL(tok[1]), "unsupported object: only \"matrix\" is supported");
	if (TOKEQ(2, "array"))
		BAD(COL(tok[2]), "dense \"array\" format is not supported: write the matrix in "
		                 "\"coordinate\" format");
	if (!TOKEQ(2, "coordinate"))
		BAD(COL(tok[2]), "unsupported format: expected \"coordinate\"");
	if (TOKEQ(3, "real"))
		field = MM_REAL;
	else if (TOKEQ(3, "integer"))
		field = MM_INTEGER;
	else if (TOKEQ(3, "pattern"))
		field = MM_PATTERN;
	else
		BAD(COL(tok[3]), "unsupported field: use real, integer or pattern");
	if (TOKEQ(4, "general"))
		symmetric = 0;
	else if (TOKEQ(4, "symmetric"))
		symmetric = 1;
	else
		BAD(COL(tok[4]), "unsupported symmetry: use general or symmetric");
	p = skip_ws(tend[4]);
	if (*p)
		BAD(COL(p), "unexpected text after the banner's symmetry field");

	/* Size line, after comments. */
	do
		line = read_line(&r);
	while (line && (line[0] == '%' || is_blank(line)));
	if (!line) {
		lineno_err = r.lineno + 1;
		snprintf(msg, sizeof(msg), "missing size line \"ROWS COLS ENTRIES\"");
		goto out;
	}
	{
		unsigned long long v[3];
		p = line;
		for (int t = 0; t < 3; t++) {
			p = skip_ws(p);
			e = token_end(p);
			if (p == e)
				BAD(COL(p), "size line needs three integers \"ROWS COLS ENTRIES\"");
			if ((why = check_number(p, e, 1, &bad)))
				BAD(COL(bad), "size line: %s", why);
			errno = 0;
			v[t] = strtoull(p, NULL, 10);
			if (errno)
				BAD(COL(p), "size line: number too large");
			p = e;
		}
		p = skip_ws(p);
		if (*p)
			BAD(COL(p), "unexpected text after \"ROWS COLS ENTRIES\"");
		rows = (long long)(v[0] > (unsigned long long)INT_MAX ? -1 : (long long)v[0]);
		cols = (long long)(v[1] > (unsigned long long)INT_MAX ? -1 : (long long)v[1]);
		nnz = v[2];
		if (rows < 0 || cols < 0)
			BAD(1, "matrix order exceeds %d ranks", INT_MAX);
		if (rows != cols)
			BAD(1, "matrix is %lld x %lld: a communication matrix must be square", rows,
			    cols);
		n = (int)rows;
	}

	/* Entries. */
	while ((line = read_line(&r))) {
		long long ij[2];
		double w = 1;

		if (line[0] == '%' || is_blank(line))
			continue;
		if (seen == nnz)
			BAD(COL(skip_ws(line)),
			    "more entries than the %llu announced in the size line", nnz);
		p = line;
		for (int t = 0; t < 2; t++) {
			p = skip_ws(p);
			e = token_end(p);
			if (p == e)
				BAD(COL(p), "expected \"ROW COL%s\"",
				    field == MM_PATTERN ? "" : " VALUE");
			if ((why = check_number(p, e, 1, &bad)))
				BAD(COL(bad), "%s index: %s", t ? "column" : "row", why);
			errno = 0;
			ij[t] = strtoll(p, NULL, 10);
			if (errno || ij[t] < 1 || ij[t] > n)
				BAD(COL(p), "%s index out of range 1..%d", t ? "column" : "row", n);
			p = e;
		}
		if (field != MM_PATTERN) {
			p = skip_ws(p);
			e = token_end(p);
			if (p == e)
				BAD(COL(p), "missing value after \"ROW COL\"");
			if ((why = check_number(p, e, field == MM_INTEGER, &bad)))
				BAD(COL(bad), "value: %s", why);
			w = token_value(p, e);
			if (!isfinite(w))
				BAD(COL(p), "value is too large for a double");
			p = e;
		}
		p = skip_ws(p);
		if (*p)
			BAD(COL(p), "unexpected text after the entry: one entry per line");
		if (symmetric && ij[1] > ij[0])
			BAD(1,
			    "entry above the diagonal in a symmetric file: store only ROW >= COL "
			    "or declare the matrix \"general\"");
		if (edges_push(&E, (int)ij[0] - 1, (int)ij[1] - 1, symmetric ? 2 * w : w)) {
			errnum = ENOMEM;
			BAD(0, "out of memory");
		}
		seen++;
	}
	if (ferror(r.f)) {
		errnum = EIO;
		BAD(0, "read error");
	}
	if (seen < nnz) {
		lineno_err = r.lineno + 1;
		snprintf(msg, sizeof(msg),
		         "file ends after %llu of the %llu entries announced in the size line",
		         seen, nnz);
		goto out;
	}
#undef TOKEQ
out:
	return load_end(&r, &E, n, path, lineno_err, col_err, errnum, msg, err);
}

/* ------------------------------------------------------------------------ */
/* TreeMatch dense matrix                                                    */

tmatch_comm_t *tmatch_comm_load_mat(const char *path, tmatch_error_t *err)
{
	struct reader r;
	struct edges E = {0};
	char *line;
	const char *p, *e, *bad, *why;
	long long n = -1, row = 0;
	int lineno_err = 0, col_err = 0, errnum = EINVAL, blank_at = 0;
	char msg[sizeof(((tmatch_error_t *)0)->msg)] = "";

	if (!path)
		return fail_null(err, NULL, 0, 0, EINVAL, "tmatch_comm_load_mat: path is NULL");
	if (open_reader(&r, path, err))
		return NULL;
	while ((line = read_line(&r))) {
		long long count = 0;

		if (is_blank(line)) {
			if (!blank_at)
				blank_at = r.lineno;
			continue;
		}
		if (blank_at)
			BAD(1, "blank line %d inside the matrix: remove it", blank_at);
		if (n >= 0 && row == n)
			BAD(COL(skip_ws(line)),
			    "more than %lld rows: a %lld x %lld matrix has %lld lines", n, n, n, n);
		p = line;
		for (;;) {
			p = skip_ws(p);
			if (!*p)
				break;
			e = token_end(p);
			if ((why = check_number(p, e, 0, &bad)))
				BAD(COL(bad), "%s", why);
			double w = token_value(p, e);
			if (!isfinite(w))
				BAD(COL(p), "value is too large for a double");
			if (n >= 0 && count == n)
				BAD(COL(p),
				    "row %lld has more than %lld values: every row needs exactly "
				    "%lld",
				    row + 1, n, n);
			if (w != 0 && count != row && edges_push(&E, (int)row, (int)count, w)) {
				errnum = ENOMEM;
				BAD(0, "out of memory");
			}
			count++;
			if (count > INT_MAX)
				BAD(COL(p), "too many values in one row");
			p = e;
		}
		if (n < 0)
			n = count;
		else if (count != n)
			BAD(COL(p), "row %lld has %lld values, expected %lld like the first row",
			    row + 1, count, n);
		row++;
	}
	if (ferror(r.f)) {
		errnum = EIO;
		BAD(0, "read error");
	}
	if (n < 0) {
		lineno_err = 0;
		snprintf(msg, sizeof(msg), "empty matrix: write N lines of N numbers");
		goto out;
	}
	if (row != n) {
		lineno_err = r.lineno + 1;
		snprintf(msg, sizeof(msg),
		         "file ends after %lld rows: the first row has %lld values, so %lld rows "
		         "are expected",
		         row, n, n);
		goto out;
	}
out:
	return load_end(&r, &E, (int)n, path, lineno_err, col_err, errnum, msg, err);
}

tmatch_comm_t *tmatch_comm_load(const char *path, tmatch_error_t *err)
{
	size_t len;

	if (!path)
		return fail_null(err, NULL, 0, 0, EINVAL, "tmatch_comm_load: path is NULL");
	len = strlen(path);
	if (len >= 4 && !strcasecmp(path + len - 4, ".mtx"))
		return tmatch_comm_load_mtx(path, err);
	if (len >= 4 && !strcasecmp(path + len - 4, ".mat"))
		return tmatch_comm_load_mat(path, err);
	return fail_null(err, path, 0, 0, EINVAL,
	                 "unknown matrix format: name the file *.mtx (Matrix Market) or *.mat "
	                 "(TreeMatch dense matrix)");
}
