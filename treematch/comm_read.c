/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comm_read.c - the two matrix file formats, each read in one place:
 * Matrix Market coordinate (.mtx) and the TreeMatch dense text matrix
 * (.mat). tmatch_matrix_read() tokenises, checks every number, index and
 * count, and hands each entry to a callback; the matrix loaders
 * (tmatch_comm_load_mtx/mat) and the profile importer are its callbacks.
 *
 * Weights in the loaders: the weight of a pair is the sum of what the input
 * gives for (i, j) and for (j, i). A symmetric Matrix Market file stores one
 * triangle of a matrix whose other triangle is equal, so its entry counts
 * twice, exactly as the same matrix written out in "general" form would.
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

/* The longest line either format may have: a dense .mat row of 2 million
   small weights. A file of one huge line (a sparse file, /dev/zero copied)
   is refused there instead of being read into memory whole. */
#define MAX_LINE ((size_t)16 << 20)

/* Ranks a matrix may declare beyond its size in bytes (silent ranks): the
   largest profile's rank count, whose rows cost some 16 MB. */
#define SILENT_RANKS (1LL << 20)

struct reader {
	tmatch__lines_t l;
	const char *path;
	unsigned long long size; /* bytes of the file, from fstat before reading */
};

#define read_line(r) tmatch__lines_next(&(r)->l)

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
/* The longest number token either format accepts (the values are copied to
   a buffer of NUMBER_MAX + 1 bytes for strtod). */
#define NUMBER_MAX 127

static const char *check_number(const char *s, const char *e, int integer_only, const char **bad)
{
	const char *p = s;
	int digits = 0;

	if (e - s > NUMBER_MAX) {
		*bad = s;
		return "number longer than 127 characters: write it with an exponent (1.5e30)";
	}

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

/* 1-based column of `at` in the line starting at `start`. */
static int column_of(const char *at, const char *start)
{
	return (int)(at - start) + 1;
}

/* The digits a double holds exactly whatever they are (10^15 < 2^53). */
#define EXACT_DIGITS 15

/* A checked number token [s, e) as a NUL-terminated copy in buf and its
   value. Plain integers short enough to be exact, what most profiles hold,
   are converted here: strtod would give the same value, several times
   slower. */
static double token_value(const char *s, const char *e, char *buf, size_t len)
{
	size_t n = (size_t)(e - s);
	const char *d = s + (*s == '+');

	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (e - d <= EXACT_DIGITS) {
		unsigned long long v = 0;
		const char *q = d;

		while (q < e && isdigit((unsigned char)*q))
			v = v * 10 + (unsigned)(*q++ - '0');
		if (q == e)
			return (double)v;
	}
	return strtod(buf, NULL);
}

/* A checked integer token [s, e) ([+]digits): its value, or -1 when it is
   above max (max <= INT_MAX, so nothing overflows on the way). */
static long long token_index(const char *s, const char *e, long long max)
{
	long long v = 0;

	for (s += (*s == '+'); s < e; s++) {
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	return v;
}

/* Where a parse stopped, and why. */
struct where {
	int line, column, errnum;
	char msg[sizeof(((tmatch_error_t *)0)->msg)];
};

#define COL(p) column_of((p), line)
/* In the readers: record a parse error at the current line, column colp; go to out. */
#define BAD(colp, ...)                                                                             \
	do {                                                                                       \
		w->line = r->l.lineno;                                                             \
		w->column = (colp);                                                                \
		snprintf(w->msg, sizeof(w->msg), __VA_ARGS__);                                     \
		goto out;                                                                          \
	} while (0)
/* The callback refused an entry: its message, at the entry's line (column its own). */
#define EMIT(entry)                                                                                \
	do {                                                                                       \
		tmatch_error_t cb_;                                                                \
		cb_.file[0] = cb_.msg[0] = '\0'; /* not all 776 bytes: this runs per entry */      \
		cb_.line = cb_.column = 0;                                                         \
		errno = EINVAL;                                                                    \
		if (fn(arg, (entry), &cb_) != 0) {                                                 \
			w->errnum = errno ? errno : EINVAL;                                        \
			w->line = (entry)->line;                                                   \
			w->column = cb_.column;                                                    \
			snprintf(w->msg, sizeof(w->msg), "%s",                                     \
			         cb_.msg[0] ? cb_.msg : "entry refused");                          \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

enum mm_field { MM_REAL, MM_INTEGER, MM_PATTERN };

static int read_mtx(struct reader *r, tmatch_matrix_entry_fn fn, void *arg, int *order,
                    int *symmetric_out, struct where *w)
{
	char *line;
	const char *p, *e, *bad, *why;
	const char *tok[5], *tend[5];
	enum mm_field field = MM_REAL;
	int symmetric = 0, n = 0;
	long long rows, cols;
	unsigned long long nnz, seen = 0;
	char vbuf[NUMBER_MAX + 1];

	/* Banner. */
	line = read_line(r);
	if (!line) {
		w->line = 1;
		snprintf(w->msg, sizeof(w->msg),
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
#undef TOKEQ
	p = skip_ws(tend[4]);
	if (*p)
		BAD(COL(p), "unexpected text after the banner's symmetry field");

	/* Size line, after comments. */
	do
		line = read_line(r);
	while (line && (line[0] == '%' || is_blank(line)));
	if (!line) {
		w->line = r->l.lineno + 1;
		snprintf(w->msg, sizeof(w->msg), "missing size line \"ROWS COLS ENTRIES\"");
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
		/* Declared sizes bounded by the file: no allocation for ranks or
		   entries a file of this size cannot describe. An entry line takes
		   at least 4 bytes ("1 1\n"). Ranks may be silent, so up to
		   SILENT_RANKS of them need no bytes; beyond that, one byte each. */
		if ((unsigned long long)rows > r->size && rows > SILENT_RANKS)
			BAD(1,
			    "the size line declares %lld ranks but the file has only %llu bytes: "
			    "fix the size line",
			    rows, r->size);
		if (nnz > r->size / 4)
			BAD(1,
			    "the size line announces %llu entries, more than a file of %llu bytes "
			    "can hold: fix the size line",
			    nnz, r->size);
		n = (int)rows;
	}

	/* Entries. */
	while ((line = read_line(r))) {
		long long ij[2];
		tmatch_matrix_entry_t ent;

		if (line[0] == '%' || is_blank(line))
			continue;
		if (seen == nnz)
			BAD(COL(skip_ws(line)),
			    "more entries than the %llu announced in the size line", nnz);
		memset(&ent, 0, sizeof(ent));
		ent.value = 1;
		p = line;
		for (int t = 0; t < 2; t++) {
			p = skip_ws(p);
			e = token_end(p);
			if (p == e)
				BAD(COL(p), "expected \"ROW COL%s\"",
				    field == MM_PATTERN ? "" : " VALUE");
			if ((why = check_number(p, e, 1, &bad)))
				BAD(COL(bad), "%s index: %s", t ? "column" : "row", why);
			ij[t] = token_index(p, e, n);
			if (ij[t] < 1)
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
			ent.value = token_value(p, e, vbuf, sizeof(vbuf));
			ent.text = vbuf;
			if (!isfinite(ent.value))
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
		ent.row = (int)ij[0] - 1;
		ent.col = (int)ij[1] - 1;
		ent.order = n;
		ent.symmetric = symmetric;
		ent.line = r->l.lineno;
		EMIT(&ent);
		seen++;
	}
	if (ferror(r->l.f)) {
		w->errnum = EIO;
		BAD(0, "read error");
	}
	if (seen < nnz) {
		w->line = r->l.lineno + 1;
		snprintf(w->msg, sizeof(w->msg),
		         "file ends after %llu of the %llu entries announced in the size line",
		         seen, nnz);
		goto out;
	}
	*order = n;
	*symmetric_out = symmetric;
	return 0;
out:
	return -1;
}

static int read_mat(struct reader *r, tmatch_matrix_entry_fn fn, void *arg, int *order,
                    struct where *w)
{
	char *line;
	const char *p, *e, *bad, *why;
	long long n = -1, row = 0;
	int blank_at = 0;
	char vbuf[NUMBER_MAX + 1];

	while ((line = read_line(r))) {
		long long count = 0;

		if (is_blank(line)) {
			if (!blank_at)
				blank_at = r->l.lineno;
			continue;
		}
		if (blank_at)
			BAD(1, "blank line %d inside the matrix: remove it", blank_at);
		if (n >= 0 && row == n)
			BAD(COL(skip_ws(line)),
			    "more than %lld rows: a %lld x %lld matrix has %lld lines", n, n, n, n);
		p = line;
		for (;;) {
			tmatch_matrix_entry_t ent;

			p = skip_ws(p);
			if (!*p)
				break;
			e = token_end(p);
			if ((why = check_number(p, e, 0, &bad)))
				BAD(COL(bad), "%s", why);
			memset(&ent, 0, sizeof(ent));
			ent.value = token_value(p, e, vbuf, sizeof(vbuf));
			ent.text = vbuf;
			if (!isfinite(ent.value))
				BAD(COL(p), "value is too large for a double");
			if (n >= 0 && count == n)
				BAD(COL(p),
				    "row %lld has more than %lld values: every row needs exactly "
				    "%lld",
				    row + 1, n, n);
			if (ent.value != 0 && count != row) {
				ent.row = (int)row;
				ent.col = (int)count;
				ent.order = n >= 0 ? (int)n : 0;
				ent.line = r->l.lineno;
				EMIT(&ent);
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
	/* r->l.line is freed by tmatch__lines_close in tmatch_matrix_read; p points into it */
	// NOLINTNEXTLINE(clang-analyzer-unix.Malloc)
	if (ferror(r->l.f)) {
		w->errnum = EIO;
		BAD(0, "read error");
	}
	if (n < 0) {
		w->line = 0;
		snprintf(w->msg, sizeof(w->msg), "empty matrix: write N lines of N numbers");
		goto out;
	}
	if (row != n) {
		w->line = r->l.lineno + 1;
		snprintf(w->msg, sizeof(w->msg),
		         "file ends after %lld rows: the first row has %lld values, so %lld rows "
		         "are expected",
		         row, n, n);
		goto out;
	}
	*order = (int)n;
	return 0;
out:
	return -1;
}
#undef BAD
#undef EMIT
#undef COL

int tmatch_matrix_format_of(const char *path)
{
	size_t len = path ? strlen(path) : 0;

	if (len >= 4 && !strcasecmp(path + len - 4, ".mtx"))
		return TMATCH_MATRIX_MTX;
	if (len >= 4 && !strcasecmp(path + len - 4, ".mat"))
		return TMATCH_MATRIX_MAT;
	return 0;
}

int tmatch_matrix_read(const char *path, int format, tmatch_matrix_entry_fn fn, void *arg,
                       int *order, int *symmetric, tmatch_error_t *err)
{
	struct reader r;
	struct where w;
	int n = 0, sym = 0, rc;

	if (!path || !fn || (format != TMATCH_MATRIX_MTX && format != TMATCH_MATRIX_MAT))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_matrix_read: %s",
		                        !path ? "path is NULL"
		                        : !fn ? "callback is NULL"
		                              : "unknown format");
	memset(&r, 0, sizeof(r));
	memset(&w, 0, sizeof(w));
	w.errnum = EINVAL;
	r.path = path;
	/* A regular file: a FIFO or a device would block or never end. */
	if (tmatch__lines_open(&r.l, path, MAX_LINE, &r.size, err) < 0)
		return -1;
	if (format == TMATCH_MATRIX_MTX)
		rc = read_mtx(&r, fn, arg, &n, &sym, &w);
	else
		rc = read_mat(&r, fn, arg, &n, &w);
	if (r.l.errnum) { /* whatever the parser made of the early end */
		w.errnum = r.l.errnum;
		w.line = r.l.lineno + 1;
		w.column = 0;
		snprintf(w.msg, sizeof(w.msg), "line %d: %s", r.l.lineno + 1, r.l.why);
		rc = -1;
	}
	tmatch__lines_close(&r.l);
	if (rc < 0)
		return tmatch_error_set(err, w.errnum, path, w.line, w.column, "%s", w.msg);
	if (order)
		*order = n;
	if (symmetric)
		*symmetric = sym;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The loaders: entries into an edge list, then one matrix                   */

struct edges {
	int *src, *dst;
	double *w;
	size_t n, cap;
};

static int edge_entry(void *arg, const tmatch_matrix_entry_t *e, tmatch_error_t *err)
{
	struct edges *E = arg;

	if (E->n == E->cap) {
		size_t cap = E->cap ? 2 * E->cap : 1024;
		int *s = realloc(E->src, cap * sizeof(*s));
		if (s)
			E->src = s;
		int *d = realloc(E->dst, cap * sizeof(*d));
		if (d)
			E->dst = d;
		double *ww = realloc(E->w, cap * sizeof(*ww));
		if (ww)
			E->w = ww;
		if (!s || !d || !ww)
			return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		E->cap = cap;
	}
	E->src[E->n] = e->row;
	E->dst[E->n] = e->col;
	E->w[E->n++] = e->symmetric ? 2 * e->value : e->value;
	return 0;
}

static tmatch_comm_t *load(const char *path, int format, tmatch_error_t *err)
{
	struct edges E = {0};
	tmatch_comm_t *c = NULL;
	int n = 0;

	if (tmatch_matrix_read(path, format, edge_entry, &E, &n, NULL, err) == 0) {
		c = tmatch_comm_from_edges(n, E.n, E.src, E.dst, E.w, err);
		if (!c) {
			int e = errno;
			char why[sizeof(err->msg)];

			snprintf(why, sizeof(why), "%s",
			         err ? err->msg : "cannot build the matrix");
			tmatch_error_set(err, e, path, 0, 0, "%s", why);
		}
	}
	free(E.src);
	free(E.dst);
	free(E.w);
	return c;
}

tmatch_comm_t *tmatch_comm_load_mtx(const char *path, tmatch_error_t *err)
{
	if (!path) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_comm_load_mtx: path is NULL");
		return NULL;
	}
	return load(path, TMATCH_MATRIX_MTX, err);
}

tmatch_comm_t *tmatch_comm_load_mat(const char *path, tmatch_error_t *err)
{
	if (!path) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_comm_load_mat: path is NULL");
		return NULL;
	}
	return load(path, TMATCH_MATRIX_MAT, err);
}

tmatch_comm_t *tmatch_comm_load(const char *path, tmatch_error_t *err)
{
	int format;

	if (!path) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_comm_load: path is NULL");
		return NULL;
	}
	format = tmatch_matrix_format_of(path);
	if (!format) {
		tmatch_error_set(err, EINVAL, path, 0, 0,
		                 "unknown matrix format: name the file *.mtx (Matrix Market) or "
		                 "*.mat (TreeMatch dense matrix)");
		return NULL;
	}
	return load(path, format, err);
}
