/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_profile.c - `treematch profile convert|check|stats`.
 *
 * convert reads what tools already produce (Matrix Market, TreeMatch dense
 * .mat, plain edge lists, Open MPI pml monitoring .prof files, or a profile)
 * and writes a comm-profile v1 file through the library's writer. check
 * validates and summarises; stats adds distributions.
 */
#include "cli/cli.h"
#include "profile/profile.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void log_stderr(void *arg, int level, const char *msg)
{
	int verbose = arg ? *(int *)arg : 1;

	if (level <= TMATCH_LOG_WARNING || verbose > 1)
		fprintf(stderr, "treematch: %s: %s\n",
		        level == TMATCH_LOG_ERROR     ? "error"
		        : level == TMATCH_LOG_WARNING ? "warning"
		                                      : "info",
		        msg);
}

static int report(const tmatch_error_t *err)
{
	char buf[1024];

	tmatch_cli_error("%s", tmatch_error_format(err, buf, sizeof(buf)));
	return 1;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* ------------------------------------------------------------------------ */
/* Input readers: each fills a list of raw edges, then one builder call.     */

struct raw {
	size_t n, cap;
	int *src, *dst;
	uint64_t *bytes, *msgs;
	int max_rank;
	int have_msgs;
	int edge_cols; /* columns of the edge lists read so far (all must agree) */
	int set_coll;  /* for .prof: coll edges kept apart */
	unsigned char *coll;
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
	errno = 0;
	unsigned long long v = strtoull(tok, &end, 10);
	if (!*end && !errno && v <= (unsigned long long)INT64_MAX) {
		*out = v;
		return 0;
	}
	d = strtod(tok, &end);
	if (*end || !isfinite(d) || d < 0 || d >= 9.2e18 || d != floor(d))
		return -1;
	*out = (uint64_t)d;
	return 0;
}

static int parse_index(const char *tok, int base, int *out)
{
	char *end;
	long v;

	if (!tok)
		return -1;
	errno = 0;
	v = strtol(tok, &end, 10);
	if (*end || errno || v < base || v - base >= TMATCH_PROFILE_DEFAULT_MAX_RANKS)
		return -1;
	*out = (int)(v - base);
	return 0;
}

#define BAD_LINE(path, line, ...)                                                                  \
	do {                                                                                       \
		char msg_[400];                                                                    \
		snprintf(msg_, sizeof(msg_), __VA_ARGS__);                                         \
		tmatch_cli_error("%s:%lu: %s", path, (unsigned long)(line), msg_);                 \
		goto out;                                                                          \
	} while (0)

/* Matrix Market coordinate: general -> directed, symmetric -> undirected. */
static int read_mtx(const char *path, struct raw *r, int *ranks, int *directed)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lineno = 0, nnz = 0, seen = 0;
	int rc = -1, pattern = 0, n = -1;

	if (!f) {
		tmatch_cli_error("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	*directed = 1;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (lineno == 1) {
			char obj[32], fmt[32], field[32], sym[32];
			if (sscanf(line, "%%%%MatrixMarket %31s %31s %31s %31s", obj, fmt, field,
			           sym) != 4 ||
			    strcmp(fmt, "coordinate") != 0)
				BAD_LINE(path, lineno,
				         "expected a '%%%%MatrixMarket matrix coordinate "
				         "<field> <symmetry>' header");
			if (!strcmp(field, "pattern"))
				pattern = 1;
			else if (strcmp(field, "integer") != 0 && strcmp(field, "real") != 0)
				BAD_LINE(path, lineno,
				         "field must be integer, real or pattern (not complex)");
			if (!strcmp(sym, "symmetric"))
				*directed = 0;
			else if (strcmp(sym, "general") != 0)
				BAD_LINE(path, lineno, "symmetry must be general or symmetric");
			continue;
		}
		if (line[0] == '%')
			continue;
		char *save = NULL, *a = strtok_r(line, " \t\r\n", &save);
		if (!a)
			continue;
		char *b = strtok_r(NULL, " \t\r\n", &save), *c = strtok_r(NULL, " \t\r\n", &save);
		if (n < 0) {
			int m;
			uint64_t z;
			if (parse_index(a, 0, &n) || parse_index(b, 0, &m) || parse_weight(c, &z) ||
			    n != m || n < 1)
				BAD_LINE(path, lineno,
				         "expected the size line 'N N NNZ' of a square matrix with "
				         "at most %d rows",
				         TMATCH_PROFILE_DEFAULT_MAX_RANKS);
			nnz = (size_t)z;
			continue;
		}
		int i, j;
		uint64_t w = 1;
		if (parse_index(a, 1, &i) || parse_index(b, 1, &j) || i >= n || j >= n)
			BAD_LINE(path, lineno, "indices must be integers from 1 to %d", n);
		if (!pattern && parse_weight(c, &w))
			BAD_LINE(path, lineno,
			         "value must be a non-negative whole number (scale real data "
			         "first)");
		if (++seen > nnz)
			BAD_LINE(path, lineno, "more entries than the %zu announced", nnz);
		if (w && raw_push(r, i, j, w, 0, 0))
			BAD_LINE(path, lineno, "out of memory");
	}
	if (n < 0) {
		tmatch_cli_error("%s: no size line: not a Matrix Market file", path);
		goto out;
	}
	if (seen < nnz) {
		tmatch_cli_error("%s: %zu entries announced, %zu found", path, nnz, seen);
		goto out;
	}
	*ranks = n;
	rc = 0;
out:
	free(line);
	fclose(f);
	return rc;
}

/* TreeMatch dense: N lines of N numbers; symmetric -> undirected. */
static int read_mat(const char *path, struct raw *r, int *ranks, int *directed)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int rc = -1, n = -1, row = 0;

	if (!f) {
		tmatch_cli_error("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		char *save = NULL, *tok;
		int col = 0;
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (row >= 1024 * 16)
			BAD_LINE(path, lineno,
			         "dense matrices above 16384 rows: use Matrix Market");
		for (tok = strtok_r(line, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save), col++) {
			uint64_t w;
			if (parse_weight(tok, &w))
				BAD_LINE(path, lineno,
				         "column %d: values must be non-negative whole numbers",
				         col + 1);
			if (w && row != col && raw_push(r, row, col, w, 0, 0))
				BAD_LINE(path, lineno, "out of memory");
		}
		if (n < 0)
			n = col;
		else if (col != n)
			BAD_LINE(path, lineno, "row has %d values, the first row has %d", col, n);
		row++;
	}
	if (n < 1 || row != n) {
		tmatch_cli_error("%s: expected N rows of N values, found %d rows of %d", path, row,
		                 n < 0 ? 0 : n);
		goto out;
	}
	/* Symmetric input becomes an undirected profile (one triangle). */
	*directed = 0;
	{
		/* Entries are in row order; compare with a dense copy for small n,
		   otherwise keep directed. */
		if ((size_t)n * (size_t)n <= ((size_t)1 << 26)) {
			uint64_t *d = calloc((size_t)n * (size_t)n, sizeof(*d));
			if (!d) {
				tmatch_cli_error("out of memory");
				goto out;
			}
			for (size_t k = 0; k < r->n; k++)
				d[(size_t)r->src[k] * (size_t)n + (size_t)r->dst[k]] = r->bytes[k];
			for (size_t k = 0; k < r->n && !*directed; k++)
				if (d[(size_t)r->dst[k] * (size_t)n + (size_t)r->src[k]] !=
				    r->bytes[k])
					*directed = 1;
			free(d);
		} else {
			*directed = 1;
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
	}
	*ranks = n;
	rc = 0;
out:
	free(line);
	fclose(f);
	return rc;
}

/* Plain edge list: "src dst bytes [msgs]", 0-based, '#' comments. */
static int read_edgelist(const char *path, struct raw *r)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int rc = -1, ncols = r->edge_cols;

	if (!f) {
		tmatch_cli_error("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
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
		if (parse_index(tok[0], 0, &s) || parse_index(tok[1], 0, &d))
			BAD_LINE(path, lineno, "src and dst must be ranks from 0 to %d",
			         TMATCH_PROFILE_DEFAULT_MAX_RANKS - 1);
		if (parse_weight(tok[2], &b) || (k == 4 && parse_weight(tok[3], &m)))
			BAD_LINE(path, lineno, "bytes and msgs must be non-negative whole numbers");
		if (raw_push(r, s, d, b, m, 0))
			BAD_LINE(path, lineno, "out of memory");
	}
	r->edge_cols = ncols;
	r->have_msgs = ncols == 4;
	rc = 0;
out:
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

/*
 * Open MPI pml monitoring: "KIND\tsrc\tdst\tN bytes\tM msgs sent[\thist]".
 * E lines are point-to-point; with coll = 'w' the I lines (wire traffic of
 * collectives) go to coll_edges, with coll = 'l' the C lines (logical).
 */
static int read_prof(const char *path, struct raw *r, int coll)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int rc = -1;

	if (!f) {
		tmatch_cli_error("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		char kind[8];
		int s, d;
		unsigned long long b, m;
		if (line[0] == '#' || line[0] == '\n')
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
			if (raw_push(r, s, d, b, m, !is_e))
				BAD_LINE(path, lineno, "out of memory");
	}
	r->have_msgs = 1;
	rc = 0;
out:
	free(line);
	fclose(f);
	return rc;
}

static const char convert_usage[] =
    "usage: treematch profile convert [options] INPUT... \n"
    "  -f, --from FORMAT      mtx, mat, edges, ompi or yaml (default: by extension;\n"
    "                         .mtx .mat .prof .yml/.yaml, anything else is an edge list)\n"
    "  -o, --output FILE      write here (default: standard output)\n"
    "  -n, --ranks N          number of ranks (edge lists and .prof: default max index + 1)\n"
    "  -u, --undirected       edge list: each pair once (default: src -> dst)\n"
    "  -c, --coll MODE        ompi: add collective traffic, MODE wire (I lines) or\n"
    "                         logical (C lines); never both\n"
    "  -m, --matrix           write the dense matrix form (<= 1024 ranks, one metric)\n"
    "  -a, --application NAME record the application name in the provenance\n"
    "  -h, --help\n";

static int cmd_convert(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"from", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"ranks", required_argument, NULL, 'n'},
	    {"undirected", no_argument, NULL, 'u'},
	    {"coll", required_argument, NULL, 'c'},
	    {"matrix", no_argument, NULL, 'm'},
	    {"application", required_argument, NULL, 'a'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *from = NULL, *output = NULL, *app = NULL;
	int ranks = 0, undirected = 0, coll = 0, matrix = 0, c, rc = 1, directed = 1;
	struct raw r = {0};
	tmatch_profile_t *p = NULL;
	tmatch_error_t err;

	r.max_rank = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:n:uc:ma:h", lo, NULL)) != -1) {
		switch (c) {
		case 'f':
			from = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			if (parse_index(optarg, 0, &ranks) || ranks < 1) {
				tmatch_cli_error("--ranks must be from 1 to %d",
				                 TMATCH_PROFILE_DEFAULT_MAX_RANKS - 1);
				return 2;
			}
			break;
		case 'u':
			undirected = 1;
			break;
		case 'c':
			if (!strcmp(optarg, "wire"))
				coll = 'w';
			else if (!strcmp(optarg, "logical"))
				coll = 'l';
			else {
				tmatch_cli_error("--coll must be wire or logical");
				return 2;
			}
			break;
		case 'm':
			matrix = 1;
			break;
		case 'a':
			app = optarg;
			break;
		case 'h':
			fputs(convert_usage, stdout);
			return 0;
		default:
			fputs(convert_usage, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(convert_usage, stderr);
		return 2;
	}
	if (!from) {
		const char *in = argv[optind];
		from = has_suffix(in, ".mtx")                                ? "mtx"
		       : has_suffix(in, ".mat")                              ? "mat"
		       : has_suffix(in, ".prof")                             ? "ompi"
		       : (has_suffix(in, ".yml") || has_suffix(in, ".yaml")) ? "yaml"
		                                                             : "edges";
	}
	int nin = argc - optind;
	if (nin > 1 && strcmp(from, "ompi") != 0 && strcmp(from, "edges") != 0) {
		tmatch_cli_error("several inputs are added up only for edge lists and Open MPI "
		                 ".prof files");
		return 2;
	}
	if (coll && strcmp(from, "ompi") != 0) {
		tmatch_cli_error("--coll applies to Open MPI .prof input only");
		return 2;
	}
	if (!strcmp(from, "yaml")) {
		tmatch_profile_limits_t lim;
		tmatch_profile_limits_init(&lim);
		lim.allow_special = 1;
		p = tmatch_profile_load(argv[optind], &lim, log_stderr, NULL, &err);
		if (!p)
			return report(&err);
	} else {
		int n = 0;
		if (!strcmp(from, "mtx")) {
			if (read_mtx(argv[optind], &r, &n, &directed))
				goto out;
		} else if (!strcmp(from, "mat")) {
			if (read_mat(argv[optind], &r, &n, &directed))
				goto out;
		} else if (!strcmp(from, "edges")) {
			for (int i = optind; i < argc; i++)
				if (read_edgelist(argv[i], &r))
					goto out;
			directed = !undirected;
		} else if (!strcmp(from, "ompi")) {
			for (int i = optind; i < argc; i++)
				if (read_prof(argv[i], &r, coll))
					goto out;
		} else {
			tmatch_cli_error("unknown --from '%s': use mtx, mat, edges, ompi or yaml",
			                 from);
			rc = 2;
			goto out;
		}
		if (!n)
			n = ranks ? ranks : r.max_rank + 1;
		if (ranks && ranks != n) {
			tmatch_cli_error("--ranks %d does not match the %d ranks of the input",
			                 ranks, n);
			goto out;
		}
		if (r.max_rank >= n) {
			tmatch_cli_error("the input names rank %d but --ranks is %d", r.max_rank,
			                 n);
			goto out;
		}
		if (n < 1) {
			tmatch_cli_error("no edges in the input: give --ranks N");
			goto out;
		}
		unsigned metrics =
		    TMATCH_PROFILE_HAS_BYTES | (r.have_msgs ? TMATCH_PROFILE_HAS_MSGS : 0);
		p = tmatch_profile_create(n, metrics, directed, &err);
		if (!p) {
			report(&err);
			goto out;
		}
		for (size_t k = 0; k < r.n; k++)
			if (tmatch_profile_add_edge(
			        p, r.coll[k] ? TMATCH_PROFILE_COLL : TMATCH_PROFILE_P2P, r.src[k],
			        r.dst[k], r.bytes[k], r.msgs[k], log_stderr, NULL, &err)) {
				report(&err);
				goto out;
			}
		if (tmatch_profile_finish(p, log_stderr, NULL, &err)) {
			report(&err);
			goto out;
		}
		static const char *const tool_of[] = {
		    "mtx",   "Matrix Market", "mat",  "TreeMatch dense matrix",
		    "edges", "edge list",     "ompi", "Open MPI pml monitoring"};
		for (size_t i = 0; i < 8; i += 2)
			if (!strcmp(from, tool_of[i]))
				tmatch_profile_set_info(p, "source", tool_of[i + 1], NULL);
		tmatch_profile_set_info(p, "tool", "treematch profile convert", NULL);
		tmatch_profile_set_info(p, "tool_version", TMATCH_VERSION, NULL);
	}
	if (app && tmatch_profile_set_info(p, "application", app, &err)) {
		report(&err);
		goto out;
	}
	if (output) {
		if (tmatch_profile_save(p, output, matrix ? TMATCH_PROFILE_WRITE_MATRIX : 0,
		                        &err)) {
			report(&err);
			goto out;
		}
	} else if (tmatch_profile_write(p, stdout, matrix ? TMATCH_PROFILE_WRITE_MATRIX : 0,
	                                &err)) {
		report(&err);
		goto out;
	}
	rc = 0;
out:
	raw_free(&r);
	tmatch_profile_destroy(p);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* check and stats                                                           */

struct pair {
	int i, j;
	double w;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int summarise(const tmatch_profile_t *p, int metric, int coll, int top, int stats)
{
	tmatch_error_t err;
	unsigned sets = TMATCH_PROFILE_P2P | (coll ? TMATCH_PROFILE_COLL : 0);
	tmatch_comm_t *comm =
	    tmatch_profile_to_comm(p, (tmatch_profile_metric_t)metric, sets, &err);
	int n = tmatch_profile_ranks(p), nodes, rpn;
	unsigned m = tmatch_profile_metrics(p);
	uint64_t tb[2] = {0, 0}, tm[2] = {0, 0};
	struct pair *best = NULL;
	int nbest = 0, rc = 1;

	if (!comm)
		return report(&err);
	for (int s = 0; s < 2; s++) {
		unsigned set = s ? TMATCH_PROFILE_COLL : TMATCH_PROFILE_P2P;
		for (size_t k = 0; k < tmatch_profile_nedges(p, set); k++) {
			uint64_t b, g;
			tmatch_profile_edge(p, set, k, NULL, NULL, &b, &g);
			tb[s] += b; /* each < 2^63 and sums checked at load per pair; the
			               total may wrap only beyond 2^64 bytes */
			tm[s] += g;
		}
	}
	printf("ranks:            %d\n", n);
	printf("directed:         %s\n", tmatch_profile_directed(p) ? "yes" : "no");
	printf("metrics:          %s%s%s\n", (m & TMATCH_PROFILE_HAS_BYTES) ? "bytes" : "",
	       m == 3u ? ", " : "", (m & TMATCH_PROFILE_HAS_MSGS) ? "msgs" : "");
	printf("placement metric: %s (used here: %s%s)\n",
	       tmatch_profile_metric_name(tmatch_profile_placement_metric(p)),
	       tmatch_profile_metric_name((tmatch_profile_metric_t)metric),
	       coll ? ", with collectives" : "");
	printf("edges:            %zu point-to-point, %zu collective\n",
	       tmatch_profile_nedges(p, TMATCH_PROFILE_P2P),
	       tmatch_profile_nedges(p, TMATCH_PROFILE_COLL));
	printf("nonzeros:         %zu (symmetric, both triangles)\n", tmatch_comm_nnz(comm));
	if (m & TMATCH_PROFILE_HAS_BYTES)
		printf("total bytes:      %" PRIu64 " point-to-point, %" PRIu64 " collective\n",
		       tb[0], tb[1]);
	if (m & TMATCH_PROFILE_HAS_MSGS)
		printf("total msgs:       %" PRIu64 " point-to-point, %" PRIu64 " collective\n",
		       tm[0], tm[1]);
	int dmin = n, dmax = 0, isolated = 0;
	double dsum = 0;
	uint64_t *deg = stats ? malloc((size_t)n * sizeof(*deg)) : NULL;
	best = calloc((size_t)(top > 0 ? top : 1), sizeof(*best));
	if (!best || (stats && !deg)) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const int *cols;
		const double *w;
		int d = tmatch_comm_row(comm, i, &cols, &w);
		if (d < dmin)
			dmin = d;
		if (d > dmax)
			dmax = d;
		dsum += d;
		isolated += d == 0;
		if (deg)
			deg[i] = (uint64_t)d;
		for (int k = 0; k < d; k++) {
			if (cols[k] <= i || top <= 0)
				continue;
			int pos = nbest;
			while (pos > 0 && best[pos - 1].w < w[k])
				pos--;
			if (pos >= top)
				continue;
			if (nbest < top)
				nbest++;
			memmove(best + pos + 1, best + pos,
			        (size_t)(nbest - 1 - pos) * sizeof(*best));
			best[pos] = (struct pair){i, cols[k], w[k]};
		}
	}
	printf("degree:           min %d, mean %.2f, max %d; %d isolated rank%s\n", dmin, dsum / n,
	       dmax, isolated, isolated == 1 ? "" : "s");
	double total = tmatch_comm_total(comm);
	printf("top pairs (%s):\n", tmatch_profile_metric_name((tmatch_profile_metric_t)metric));
	for (int k = 0; k < nbest; k++)
		printf("  %6d %6d  %.0f  (%.1f%%)\n", best[k].i, best[k].j, best[k].w,
		       total > 0 ? 100.0 * best[k].w / total : 0.0);
	if (stats) {
		qsort(deg, (size_t)n, sizeof(*deg), cmp_u64);
		printf("degree quartiles: %" PRIu64 " / %" PRIu64 " / %" PRIu64 "\n", deg[n / 4],
		       deg[n / 2], deg[(3 * (size_t)n) / 4]);
		if (m == 3u && tm[0])
			printf("mean message:     %.1f bytes (point-to-point)\n",
			       (double)tb[0] / (double)tm[0]);
		if ((m & TMATCH_PROFILE_HAS_BYTES) && tb[0] + tb[1])
			printf("collective share: %.2f%% of bytes\n",
			       100.0 * (double)tb[1] / (double)(tb[0] + tb[1]));
		size_t pairs = tmatch_comm_nnz(comm) / 2;
		printf("pair density:     %.6f (%zu of %.0f pairs)\n",
		       n > 1 ? (double)pairs / ((double)n * (n - 1) / 2) : 0.0, pairs,
		       (double)n * (n - 1) / 2);
		const char *keys[] = {"application", "tool",    "tool_version",
		                      "mpi_library", "created", "source"};
		for (size_t i = 0; i < 6; i++)
			if (tmatch_profile_info(p, keys[i]))
				printf("%-17s %s\n", keys[i], tmatch_profile_info(p, keys[i]));
		tmatch_profile_layout(p, &nodes, &rpn);
		if (nodes)
			printf("recorded on:      %d nodes, %d ranks per node\n", nodes, rpn);
	}
	rc = 0;
out:
	free(deg);
	free(best);
	tmatch_comm_destroy(comm);
	return rc;
}

static const char check_usage[] =
    "usage: treematch profile %s [options] FILE\n"
    "  -n, --ranks N       fail unless the profile has N ranks\n"
    "  -M, --metric M      bytes, msgs or avg (default: the profile's placement_metric)\n"
    "  -c, --coll          include collective traffic\n"
    "  -t, --top K         show the K heaviest pairs (default 5)\n"
    "      --max-ranks N   rank limit (default 1048576)\n"
    "  -q, --quiet         only validate: no summary\n"
    "  -h, --help\n";

static int cmd_check(int argc, char **argv, int stats)
{
	static const struct option lo[] = {
	    {"ranks", required_argument, NULL, 'n'},
	    {"metric", required_argument, NULL, 'M'},
	    {"coll", no_argument, NULL, 'c'},
	    {"top", required_argument, NULL, 't'},
	    {"max-ranks", required_argument, NULL, 'R'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *name = stats ? "stats" : "check";
	int expect = -1, metric = -1, coll = 0, top = 5, quiet = 0, c, rc = 1;
	tmatch_profile_limits_t lim;
	tmatch_error_t err;
	tmatch_profile_t *p;

	tmatch_profile_limits_init(&lim);
	lim.allow_special = 1; /* a command-line tool may read /dev/stdin */
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:M:ct:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_index(optarg, 0, &expect)) {
				tmatch_cli_error("--ranks needs a number of ranks");
				return 2;
			}
			break;
		case 'M': {
			tmatch_profile_metric_t mm;
			if (tmatch_profile_metric_parse(optarg, &mm, &err)) {
				tmatch_cli_error("--metric: %s", err.msg);
				return 2;
			}
			metric = (int)mm;
			break;
		}
		case 'c':
			coll = 1;
			break;
		case 't':
			if (parse_index(optarg, 0, &top)) {
				tmatch_cli_error("--top needs a number");
				return 2;
			}
			break;
		case 'R':
			if (parse_index(optarg, 0, &lim.max_ranks) || lim.max_ranks < 1) {
				tmatch_cli_error("--max-ranks needs a positive number");
				return 2;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			printf(check_usage, name);
			return 0;
		default:
			fprintf(stderr, check_usage, name);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, check_usage, name);
		return 2;
	}
	p = tmatch_profile_load(argv[optind], &lim, log_stderr, NULL, &err);
	if (!p)
		return report(&err);
	if (expect >= 0 && tmatch_profile_check_ranks(p, expect, &err)) {
		snprintf(err.file, sizeof(err.file), "%s", argv[optind]);
		report(&err);
		goto out;
	}
	if (metric < 0)
		metric = (int)tmatch_profile_placement_metric(p);
	if (!quiet && summarise(p, metric, coll, top, stats))
		goto out;
	rc = 0;
out:
	tmatch_profile_destroy(p);
	return rc;
}

int tmatch_cli_profile(int argc, char **argv)
{
	static const char usage[] =
	    "usage: treematch profile <convert|check|stats> [options] ...\n"
	    "  convert  turn .mtx, .mat, edge lists or Open MPI .prof files into a profile\n"
	    "  check    validate a profile and summarise it\n"
	    "  stats    check plus distributions and provenance\n"
	    "See treematch-profile(5) for the format.\n";

	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "convert"))
		return cmd_convert(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1, 0);
	if (!strcmp(argv[1], "stats"))
		return cmd_check(argc - 1, argv + 1, 1);
	tmatch_cli_error("unknown profile command '%s'", argv[1]);
	fputs(usage, stderr);
	return 2;
}
