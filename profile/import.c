/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * import.c - profiles from what other tools write: Matrix Market and
 * TreeMatch .mat files (read by the core's one reader, tmatch_matrix_read),
 * plain edge lists and Open MPI pml monitoring .prof files. Each reader
 * fills a list of raw directed edges; one builder makes the profile.
 */
#include "profile/profile_private.h"
#include "treematch/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const format_names[] = {
    [TMATCH_PROFILE_FROM_MTX] = "mtx",     [TMATCH_PROFILE_FROM_MAT] = "mat",
    [TMATCH_PROFILE_FROM_EDGES] = "edges", [TMATCH_PROFILE_FROM_OMPI] = "ompi",
    [TMATCH_PROFILE_FROM_YAML] = "yaml",
};
#define NFORMATS ((int)(sizeof(format_names) / sizeof(format_names[0])))

/* What a converted profile records as its "source". */
static const char *const format_source[] = {
    [TMATCH_PROFILE_FROM_MTX] = "Matrix Market",
    [TMATCH_PROFILE_FROM_MAT] = "TreeMatch dense matrix",
    [TMATCH_PROFILE_FROM_EDGES] = "edge list",
    [TMATCH_PROFILE_FROM_OMPI] = "Open MPI pml monitoring",
};

int tmatch_profile_format_parse(const char *name, int *format, tmatch_error_t *err)
{
	for (int f = 1; name && f < NFORMATS; f++)
		if (!strcmp(name, format_names[f])) {
			if (format)
				*format = f;
			return 0;
		}
	return tmatch_error_set(err, EINVAL, NULL, 0, 0,
	                        "unknown format '%.64s': use mtx, mat, edges, ompi or yaml",
	                        name ? name : "(null)");
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

int tmatch_profile_format_of(const char *path)
{
	if (!path)
		return 0;
	if (has_suffix(path, ".mtx"))
		return TMATCH_PROFILE_FROM_MTX;
	if (has_suffix(path, ".mat"))
		return TMATCH_PROFILE_FROM_MAT;
	if (has_suffix(path, ".prof"))
		return TMATCH_PROFILE_FROM_OMPI;
	/* the compiled form: the YAML loader recognises it by its first bytes */
	if (has_suffix(path, ".yml") || has_suffix(path, ".yaml") || has_suffix(path, ".compiled"))
		return TMATCH_PROFILE_FROM_YAML;
	return TMATCH_PROFILE_FROM_EDGES;
}

/* ------------------------------------------------------------------------ */
/* Raw edges                                                                 */

struct raw {
	size_t n, cap;
	int *src, *dst;
	uint64_t *bytes, *msgs;
	unsigned char *coll;
	int max_rank;
	int have_msgs;
	int edge_cols; /* columns of the edge lists read so far (all must agree) */
};

static int raw_push(struct raw *r, int s, int d, uint64_t b, uint64_t m, int coll)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		int *ns = realloc(r->src, cap * sizeof(int));
		if (ns)
			r->src = ns;
		int *nd = realloc(r->dst, cap * sizeof(int));
		if (nd)
			r->dst = nd;
		uint64_t *nb = realloc(r->bytes, cap * sizeof(uint64_t));
		if (nb)
			r->bytes = nb;
		uint64_t *nm = realloc(r->msgs, cap * sizeof(uint64_t));
		if (nm)
			r->msgs = nm;
		unsigned char *nc = realloc(r->coll, cap);
		if (nc)
			r->coll = nc;
		if (!ns || !nd || !nb || !nm || !nc)
			return -1;
		r->cap = cap;
	}
	r->src[r->n] = s;
	r->dst[r->n] = d;
	r->bytes[r->n] = b;
	r->msgs[r->n] = m;
	r->coll[r->n] = (unsigned char)coll;
	r->n++;
	if (s > r->max_rank)
		r->max_rank = s;
	if (d > r->max_rank)
		r->max_rank = d;
	return 0;
}

static void raw_free(struct raw *r)
{
	free(r->src);
	free(r->dst);
	free(r->bytes);
	free(r->msgs);
	free(r->coll);
}

/* A non-negative integral number (allows "12", "12.0", "1.2e3"). */
static int parse_weight(const char *tok, uint64_t *out)
{
	char *end;
	double d;

	if (!tok || !*tok || *tok == '-')
		return -1;
	if (tmatch_parse_u64(tok, strlen(tok), TMATCH__WEIGHT_MAX, out) == 0)
		return 0;
	errno = 0;
	d = strtod(tok, &end);
	if (*end || !isfinite(d) || d < 0 || d >= 9.2e18 || d != floor(d))
		return -1;
	*out = (uint64_t)d;
	return 0;
}

/* A rank written 0-based: 0 .. TMATCH_PROFILE_DEFAULT_MAX_RANKS - 1. */
static int parse_rank(const char *tok, int *out)
{
	uint64_t v;

	if (!tok ||
	    tmatch_parse_u64(tok, strlen(tok), TMATCH_PROFILE_DEFAULT_MAX_RANKS - 1, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

/* A problem on a line of an input: "path:line: msg". */
#define BAD_LINE(path, line, ...)                                                                  \
	do {                                                                                       \
		tmatch_error_set(err, EINVAL, path, (int)(line), 0, __VA_ARGS__);                  \
		goto out;                                                                          \
	} while (0)

/* Lines of the text formats, read by the internal tier's bounded reader:
   an edge or a monitoring line is short, 1 MiB is plenty. */
#define MAX_LINE ((size_t)1 << 20)
/* The reader stopped (a NUL byte, a line too long, a read error). */
#define BAD_READ(path, in)                                                                         \
	do {                                                                                       \
		tmatch__lines_error(in, path, err);                                                \
		goto out;                                                                          \
	} while (0)

static FILE *open_input(const char *path, tmatch_error_t *err)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;

	if (!f) {
		int e = errno;
		tmatch_error_set(err, e, path, 0, 0, "cannot open: %s", strerror(e));
	}
	return f;
}

static void close_input(FILE *f)
{
	if (f && f != stdin)
		fclose(f);
}

/* ------------------------------------------------------------------------ */
/* Matrix files, through the core's reader                                   */

/* Dense matrices are compared entry by entry for symmetry: a bound on rows. */
#define MAT_MAX_ROWS (1024 * 16)

struct matrix_ctx {
	struct raw *r;
	int dense; /* a .mat file */
};

static int matrix_entry(void *arg, const tmatch_matrix_entry_t *e, tmatch_error_t *err)
{
	const struct matrix_ctx *c = arg;
	struct raw *r = c->r;
	uint64_t w = 1;

	if (e->order > TMATCH_PROFILE_DEFAULT_MAX_RANKS)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "the matrix has %d rows: a profile has at most %d ranks",
		                        e->order, TMATCH_PROFILE_DEFAULT_MAX_RANKS);
	if (c->dense && e->row >= MAT_MAX_ROWS)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "dense matrices above %d rows: use Matrix Market",
		                        MAT_MAX_ROWS);
	if (e->text && parse_weight(e->text, &w))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "value must be a non-negative whole number (scale real "
		                        "data first)");
	if (w && raw_push(r, e->row, e->col, w, 0, 0))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	return 0;
}

/* Matrix Market: general -> directed, symmetric -> undirected (one triangle). */
static int read_mtx(const char *path, struct raw *r, int *ranks, int *directed, tmatch_error_t *err)
{
	struct matrix_ctx c = {r, 0};
	int symmetric = 0;

	if (tmatch_matrix_read(path, TMATCH_MATRIX_MTX, matrix_entry, &c, ranks, &symmetric, err))
		return -1;
	*directed = !symmetric;
	return 0;
}

/* TreeMatch dense: N lines of N numbers; a symmetric one becomes undirected. */
static int read_mat(const char *path, struct raw *r, int *ranks, int *directed, tmatch_error_t *err)
{
	struct matrix_ctx c = {r, 1};
	int n = 0;

	if (tmatch_matrix_read(path, TMATCH_MATRIX_MAT, matrix_entry, &c, &n, NULL, err))
		return -1;
	if (n > MAT_MAX_ROWS)
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "dense matrices above %d rows: use Matrix Market",
		                        MAT_MAX_ROWS);
	/* Entries are in row order; compare with a dense copy. */
	*directed = 0;
	{
		uint64_t *d = calloc((size_t)n * (size_t)n, sizeof(*d));
		if (!d)
			return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		for (size_t k = 0; k < r->n; k++)
			d[(size_t)r->src[k] * (size_t)n + (size_t)r->dst[k]] = r->bytes[k];
		for (size_t k = 0; k < r->n && !*directed; k++)
			if (d[(size_t)r->dst[k] * (size_t)n + (size_t)r->src[k]] != r->bytes[k])
				*directed = 1;
		free(d);
	}
	if (!*directed) { /* keep the upper triangle only */
		size_t w = 0;
		for (size_t k = 0; k < r->n; k++)
			if (r->src[k] < r->dst[k]) {
				r->src[w] = r->src[k];
				r->dst[w] = r->dst[k];
				r->bytes[w] = r->bytes[k];
				w++;
			}
		r->n = w;
	}
	*ranks = n;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Edge lists and Open MPI monitoring                                        */

/* Plain edge list: "src dst bytes [msgs]", 0-based, '#' comments. */
static int read_edgelist(const char *path, struct raw *r, tmatch_error_t *err)
{
	FILE *f = open_input(path, err);
	tmatch__lines_t in;
	char *line;
	size_t lineno = 0;
	int rc = -1, ncols = r->edge_cols;

	if (!f)
		return -1;
	tmatch__lines_attach(&in, f, MAX_LINE);
	while ((line = tmatch__lines_next(&in))) {
		lineno = (size_t)in.lineno;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *save = NULL, *tok[5];
		int k = 0;
		for (char *t = strtok_r(line, " \t\r\n,", &save); t && k < 5;
		     t = strtok_r(NULL, " \t\r\n,", &save))
			tok[k++] = t;
		if (k == 0)
			continue;
		if (k < 3 || k > 4)
			BAD_LINE(path, lineno, "expected 'src dst bytes [msgs]'");
		if (ncols && k != ncols)
			BAD_LINE(path, lineno, "every line must have the same number of columns");
		ncols = k;
		int s, d;
		uint64_t b, m = 0;
		if (parse_rank(tok[0], &s) || parse_rank(tok[1], &d))
			BAD_LINE(path, lineno, "src and dst must be ranks from 0 to %d",
			         TMATCH_PROFILE_DEFAULT_MAX_RANKS - 1);
		if (parse_weight(tok[2], &b) || (k == 4 && parse_weight(tok[3], &m)))
			BAD_LINE(path, lineno, "bytes and msgs must be non-negative whole numbers");
		if (raw_push(r, s, d, b, m, 0)) {
			tmatch_error_set(err, ENOMEM, path, (int)lineno, 0, "out of memory");
			goto out;
		}
	}
	if (in.errnum)
		BAD_READ(path, &in);
	r->edge_cols = ncols;
	r->have_msgs = ncols == 4;
	rc = 0;
out:
	tmatch__lines_close(&in);
	close_input(f);
	return rc;
}

/*
 * Open MPI pml monitoring: "KIND\tsrc\tdst\tN bytes\tM msgs sent[\thist]".
 * E lines are point-to-point; with coll = 'w' the I lines (wire traffic of
 * collectives) go to coll_edges, with coll = 'l' the C lines (logical).
 */
static int read_prof(const char *path, struct raw *r, int coll, tmatch_error_t *err)
{
	FILE *f = open_input(path, err);
	tmatch__lines_t in;
	char *line;
	size_t lineno = 0;
	int rc = -1;

	if (!f)
		return -1;
	tmatch__lines_attach(&in, f, MAX_LINE);
	while ((line = tmatch__lines_next(&in))) {
		lineno = (size_t)in.lineno;
		char kind[8];
		int s, d;
		unsigned long long b, m;
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (sscanf(line, "%7s", kind) != 1)
			continue;
		int is_e = !strcmp(kind, "E"), is_i = !strcmp(kind, "I"), is_c = !strcmp(kind, "C");
		if (!is_e && !is_i && !is_c)
			continue; /* D, O2A, A2O, A2A, S, R: per-communicator or one-sided */
		if (sscanf(line, "%*s %d %d %llu bytes %llu msgs", &s, &d, &b, &m) != 4 || s < 0 ||
		    d < 0 || s >= TMATCH_PROFILE_DEFAULT_MAX_RANKS ||
		    d >= TMATCH_PROFILE_DEFAULT_MAX_RANKS || b > INT64_MAX || m > INT64_MAX)
			BAD_LINE(path, lineno,
			         "expected '%s<TAB>src<TAB>dst<TAB>N bytes<TAB>M msgs sent'", kind);
		if (is_e || (is_i && coll == 'w') || (is_c && coll == 'l'))
			if (raw_push(r, s, d, b, m, !is_e)) {
				tmatch_error_set(err, ENOMEM, path, (int)lineno, 0,
				                 "out of memory");
				goto out;
			}
	}
	if (in.errnum)
		BAD_READ(path, &in);
	r->have_msgs = 1;
	rc = 0;
out:
	tmatch__lines_close(&in);
	close_input(f);
	/* close_input() above closed f unless it is stdin */
	// NOLINTNEXTLINE(clang-analyzer-unix.Stream)
	return rc;
}
#undef BAD_LINE

/* ------------------------------------------------------------------------ */

tmatch_profile_t *tmatch_profile_import(const char *const *paths, int npaths,
                                        const tmatch_profile_import_opts_t *opts, tmatch_log_fn log,
                                        void *log_arg, tmatch_error_t *err)
{
	tmatch_profile_import_opts_t o;
	struct raw r;
	tmatch_profile_t *p = NULL;
	int n = 0, directed = 1, format, rc = -1;

	if (!paths || npaths < 1 || !paths[0]) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_profile_import: no input");
		return NULL;
	}
	if (opts)
		o = *opts;
	else
		memset(&o, 0, sizeof(o));
	format = o.format ? o.format : tmatch_profile_format_of(paths[0]);
	if (format < 1 || format >= NFORMATS || o.ranks < 0 ||
	    (npaths > 1 && format != TMATCH_PROFILE_FROM_EDGES &&
	     format != TMATCH_PROFILE_FROM_OMPI) ||
	    (o.coll && (format != TMATCH_PROFILE_FROM_OMPI || (o.coll != 'w' && o.coll != 'l')))) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_profile_import: bad format, rank count, number of inputs "
		                 "or collective mode");
		return NULL;
	}
	if (format == TMATCH_PROFILE_FROM_YAML) {
		tmatch_profile_limits_t lim;

		tmatch_profile_limits_init(&lim);
		lim.allow_special = 1; /* a converter may read /dev/stdin */
		return tmatch_profile_load(paths[0], &lim, log, log_arg, err);
	}
	memset(&r, 0, sizeof(r));
	r.max_rank = -1;
	if (format == TMATCH_PROFILE_FROM_MTX) {
		if (read_mtx(paths[0], &r, &n, &directed, err))
			goto out;
	} else if (format == TMATCH_PROFILE_FROM_MAT) {
		if (read_mat(paths[0], &r, &n, &directed, err))
			goto out;
	} else if (format == TMATCH_PROFILE_FROM_EDGES) {
		for (int i = 0; i < npaths; i++)
			if (read_edgelist(paths[i], &r, err))
				goto out;
		directed = !o.undirected;
	} else {
		for (int i = 0; i < npaths; i++)
			if (read_prof(paths[i], &r, o.coll, err))
				goto out;
	}
	if (!n)
		n = o.ranks ? o.ranks : r.max_rank + 1;
	if (o.ranks && o.ranks != n) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "--ntasks %d does not match the %d ranks of the input", o.ranks,
		                 n);
		goto out;
	}
	if (r.max_rank >= n) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "the input names rank %d but --ntasks is %d", r.max_rank, n);
		goto out;
	}
	if (n < 1) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no edges in the input: give --ntasks N");
		goto out;
	}
	p = tmatch_profile_create(
	    n, TMATCH_PROFILE_HAS_BYTES | (r.have_msgs ? TMATCH_PROFILE_HAS_MSGS : 0), directed,
	    err);
	if (!p)
		goto out;
	for (size_t k = 0; k < r.n; k++)
		if (tmatch_profile_add_edge(p, r.coll[k] ? TMATCH_PROFILE_COLL : TMATCH_PROFILE_P2P,
		                            r.src[k], r.dst[k], r.bytes[k], r.msgs[k], log, log_arg,
		                            err))
			goto out;
	if (tmatch_profile_finish(p, log, log_arg, err))
		goto out;
	/* the I lines are what the collectives' algorithms sent: placed by */
	if (o.coll)
		p->coll = o.coll == 'w' ? TMATCH_COLL_WIRE : TMATCH_COLL_LOGICAL;
	tmatch_profile_set_info(p, "source", format_source[format], NULL);
	rc = 0;
out:
	raw_free(&r);
	if (rc) {
		tmatch_profile_destroy(p);
		p = NULL;
	}
	return p;
}
