/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile.c - the profile object: limits, metrics, accessors, the builder
 * used by converters, the canonical writer and the bridge to tmatch_comm_t.
 */
#include "profile/profile_private.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *const tmatch__info_keys[TMATCH__INFO_COUNT] = {
    "application", "tool", "tool_version", "mpi_library", "created", "source",
};

void tmatch_profile_limits_init(tmatch_profile_limits_t *lim)
{
	if (!lim)
		return;
	lim->max_file_size = TMATCH_PROFILE_DEFAULT_MAX_FILE_SIZE;
	lim->max_ranks = TMATCH_PROFILE_DEFAULT_MAX_RANKS;
	lim->max_edges = (size_t)64 << 20;
	lim->max_depth = 16;
	lim->max_scalar_len = 4096;
	lim->max_matrix_ranks = 1024;
	lim->allow_special = 0;
}

int tmatch_profile_metric_parse(const char *name, tmatch_profile_metric_t *out, tmatch_error_t *err)
{
	tmatch_profile_metric_t m;

	if (name && !strcmp(name, "bytes"))
		m = TMATCH_METRIC_BYTES;
	else if (name && !strcmp(name, "msgs"))
		m = TMATCH_METRIC_MSGS;
	else if (name && !strcmp(name, "avg"))
		m = TMATCH_METRIC_AVG;
	else {
		tmatch_error_set(err, 0, "", 0, 0,
		                 "unknown metric: valid metrics are bytes, msgs, avg");
		errno = EINVAL;
		return -1;
	}
	if (out)
		*out = m;
	return 0;
}

const char *tmatch_profile_metric_name(tmatch_profile_metric_t m)
{
	switch (m) {
	case TMATCH_METRIC_BYTES:
		return "bytes";
	case TMATCH_METRIC_MSGS:
		return "msgs";
	case TMATCH_METRIC_AVG:
		return "avg";
	}
	return "?";
}

tmatch_profile_t *tmatch_profile_create(int ranks, unsigned metrics, int directed,
                                        tmatch_error_t *err)
{
	tmatch_profile_t *p;

	if (ranks < 1 || ranks > TMATCH_PROFILE_DEFAULT_MAX_RANKS || metrics == 0 ||
	    (metrics & ~(TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS)) ||
	    (directed != 0 && directed != 1)) {
		tmatch_error_set(err, 0, "", 0, 0,
		                 "invalid profile: ranks must be 1..%d, metrics a mix of bytes "
		                 "and msgs, directed 0 or 1",
		                 TMATCH_PROFILE_DEFAULT_MAX_RANKS);
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		tmatch_error_set(err, 0, "", 0, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	p->ranks = ranks;
	p->metrics = metrics;
	p->directed = directed;
	p->placement_metric =
	    (metrics & TMATCH_PROFILE_HAS_BYTES) ? TMATCH_METRIC_BYTES : TMATCH_METRIC_MSGS;
	p->finished = 1;
	return p;
}

void tmatch_profile_destroy(tmatch_profile_t *p)
{
	if (!p)
		return;
	tmatch__edges_free(&p->set[0]);
	tmatch__edges_free(&p->set[1]);
	for (int i = 0; i < TMATCH__INFO_COUNT; i++)
		free(p->info[i]);
	free(p);
}

static int bad_arg(tmatch_error_t *err, const char *what)
{
	tmatch_error_set(err, 0, "", 0, 0, "invalid argument: %s", what);
	errno = EINVAL;
	return -1;
}

int tmatch_profile_ranks(const tmatch_profile_t *p)
{
	if (!p) {
		errno = EINVAL;
		return -1;
	}
	return p->ranks;
}

unsigned tmatch_profile_metrics(const tmatch_profile_t *p)
{
	return p ? p->metrics : 0;
}

int tmatch_profile_directed(const tmatch_profile_t *p)
{
	if (!p) {
		errno = EINVAL;
		return -1;
	}
	return p->directed;
}

tmatch_profile_metric_t tmatch_profile_placement_metric(const tmatch_profile_t *p)
{
	return p ? p->placement_metric : TMATCH_METRIC_BYTES;
}

static const char *const coll_names[] = {"", "wire", "logical"};

int tmatch_profile_coll_parse(const char *name, tmatch_profile_coll_t *out, tmatch_error_t *err)
{
	for (int c = TMATCH_COLL_WIRE; c <= TMATCH_COLL_LOGICAL; c++)
		if (name && out && !strcmp(name, coll_names[c])) {
			*out = (tmatch_profile_coll_t)c;
			return 0;
		}
	return bad_arg(err, "collectives must be wire or logical");
}

const char *tmatch_profile_coll_name(tmatch_profile_coll_t c)
{
	return c >= TMATCH_COLL_UNSTATED && c <= TMATCH_COLL_LOGICAL ? coll_names[c] : "?";
}

unsigned tmatch_profile_sets(const tmatch_profile_t *p, unsigned sets)
{
	return tmatch__profile_sets(sets, p ? p->coll : TMATCH_COLL_UNSTATED);
}

tmatch_profile_coll_t tmatch_profile_collectives(const tmatch_profile_t *p)
{
	return p ? p->coll : TMATCH_COLL_UNSTATED;
}

int tmatch_profile_set_collectives(tmatch_profile_t *p, tmatch_profile_coll_t c,
                                   tmatch_error_t *err)
{
	if (!p || c < TMATCH_COLL_UNSTATED || c > TMATCH_COLL_LOGICAL)
		return bad_arg(err, "no profile, or collectives not unstated, wire or logical");
	p->coll = c;
	return 0;
}

int tmatch_profile_set_placement_metric(tmatch_profile_t *p, tmatch_profile_metric_t m,
                                        tmatch_error_t *err)
{
	unsigned need;

	if (!p)
		return bad_arg(err, "no profile");
	switch (m) {
	case TMATCH_METRIC_BYTES:
		need = TMATCH_PROFILE_HAS_BYTES;
		break;
	case TMATCH_METRIC_MSGS:
		need = TMATCH_PROFILE_HAS_MSGS;
		break;
	case TMATCH_METRIC_AVG:
		need = TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS;
		break;
	default:
		return bad_arg(err, "unknown metric: valid metrics are bytes, msgs, avg");
	}
	if ((p->metrics & need) != need)
		return bad_arg(err, "the profile does not record the metrics this one needs");
	p->placement_metric = m;
	return 0;
}

int tmatch_profile_check_ranks(const tmatch_profile_t *p, int expected, tmatch_error_t *err)
{
	if (!p)
		return bad_arg(err, "no profile");
	if (p->ranks == expected)
		return 0;
	tmatch_error_set(err, 0, "", 0, 0,
	                 "the profile has %d ranks but the job step has %d tasks: record or "
	                 "convert a profile with %d ranks, or run %d tasks",
	                 p->ranks, expected, expected, p->ranks);
	errno = EINVAL;
	return -1;
}

static const struct tmatch__edges *get_set(const tmatch_profile_t *p, unsigned set)
{
	if (!p)
		return NULL;
	if (set == TMATCH_PROFILE_P2P)
		return &p->set[0];
	if (set == TMATCH_PROFILE_COLL)
		return &p->set[1];
	return NULL;
}

size_t tmatch_profile_nedges(const tmatch_profile_t *p, unsigned set)
{
	const struct tmatch__edges *e = get_set(p, set);
	return e ? e->n : 0;
}

int tmatch_profile_edge(const tmatch_profile_t *p, unsigned set, size_t idx, int *src, int *dst,
                        uint64_t *bytes, uint64_t *msgs)
{
	const struct tmatch__edges *e = get_set(p, set);

	if (!e || idx >= e->n || !p->finished) {
		errno = EINVAL;
		return -1;
	}
	if (src)
		*src = e->src[idx];
	if (dst)
		*dst = e->dst[idx];
	if (bytes)
		*bytes = e->bytes ? e->bytes[idx] : 0;
	if (msgs)
		*msgs = e->msgs ? e->msgs[idx] : 0;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Provenance                                                                */

static int info_index(const char *key)
{
	for (int i = 0; key && i < TMATCH__INFO_COUNT; i++)
		if (!strcmp(key, tmatch__info_keys[i]))
			return i;
	return -1;
}

const char *tmatch_profile_info(const tmatch_profile_t *p, const char *key)
{
	int i = info_index(key);
	return p && i >= 0 ? p->info[i] : NULL;
}

/* Valid UTF-8 made of characters YAML prints as they are. */
int tmatch__info_valid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	if (len > TMATCH__INFO_MAX_LEN)
		return 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int n;
		if (u[i] < 0x80) {
			if (u[i] < 0x20 || u[i] == 0x7f)
				return 0;
			i++;
			continue;
		}
		if ((u[i] & 0xe0) == 0xc0)
			cp = u[i] & 0x1f, n = 1;
		else if ((u[i] & 0xf0) == 0xe0)
			cp = u[i] & 0x0f, n = 2;
		else if ((u[i] & 0xf8) == 0xf0)
			cp = u[i] & 0x07, n = 3;
		else
			return 0;
		if (i + (size_t)n >= len)
			return 0;
		for (int k = 1; k <= n; k++) {
			if ((u[i + (size_t)k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (u[i + (size_t)k] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || cp < 0xa0 || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0x2028 ||
		    cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff)
			return 0;
		i += (size_t)n + 1;
	}
	return 1;
}

int tmatch_profile_set_info(tmatch_profile_t *p, const char *key, const char *value,
                            tmatch_error_t *err)
{
	int i = info_index(key);
	char *s = NULL;

	if (!p || i < 0)
		return bad_arg(err, "unknown provenance key: valid keys are application, tool, "
		                    "tool_version, mpi_library, created, source");
	if (value) {
		if (!tmatch__info_valid(value, strlen(value)))
			return bad_arg(err, "provenance value too long (1024 bytes at most), not "
			                    "UTF-8 or with control characters");
		s = strdup(value);
		if (!s) {
			tmatch_error_set(err, 0, "", 0, 0, "out of memory");
			errno = ENOMEM;
			return -1;
		}
	}
	free(p->info[i]);
	p->info[i] = s;
	return 0;
}

void tmatch_profile_layout(const tmatch_profile_t *p, int *nodes, int *ranks_per_node)
{
	if (nodes)
		*nodes = p ? p->nodes : 0;
	if (ranks_per_node)
		*ranks_per_node = p ? p->ranks_per_node : 0;
}

int tmatch_profile_set_layout(tmatch_profile_t *p, int nodes, int ranks_per_node,
                              tmatch_error_t *err)
{
	if (!p || nodes < 0 || ranks_per_node < 0)
		return bad_arg(err, "nodes and ranks_per_node must be >= 0");
	p->nodes = nodes;
	p->ranks_per_node = ranks_per_node;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Builder                                                                   */

int tmatch_profile_add_edge(tmatch_profile_t *p, unsigned set, int src, int dst, uint64_t bytes,
                            uint64_t msgs, tmatch_log_fn log, void *log_arg, tmatch_error_t *err)
{
	struct tmatch__edges *e;

	if (!p || (set != TMATCH_PROFILE_P2P && set != TMATCH_PROFILE_COLL))
		return bad_arg(err, "set must be TMATCH_PROFILE_P2P or TMATCH_PROFILE_COLL");
	if (src < 0 || src >= p->ranks || dst < 0 || dst >= p->ranks) {
		tmatch_error_set(err, 0, "", 0, 0,
		                 "edge (%d, %d) is out of range: the profile has %d ranks, "
		                 "numbered 0 to %d",
		                 src, dst, p->ranks, p->ranks - 1);
		errno = EINVAL;
		return -1;
	}
	if (bytes > TMATCH__WEIGHT_MAX || msgs > TMATCH__WEIGHT_MAX)
		return bad_arg(err, "weights must be below 2^63");
	if (src == dst) {
		tmatch_log_printf(log, log_arg, TMATCH_LOG_WARNING, "self edge (%d, %d) ignored",
		                  src, dst);
		return 0;
	}
	if (!p->directed && src > dst) {
		int t = src;
		src = dst;
		dst = t;
	}
	e = &p->set[set == TMATCH_PROFILE_COLL];
	if (e->n >= UINT32_MAX)
		return bad_arg(err, "too many edges");
	if (tmatch__edges_push(e, p->metrics, src, dst, bytes, msgs, 0)) {
		tmatch_error_set(err, 0, "", 0, 0, "out of memory");
		return -1;
	}
	p->finished = 0;
	return 0;
}

int tmatch_profile_finish(tmatch_profile_t *p, tmatch_log_fn log, void *log_arg,
                          tmatch_error_t *err)
{
	if (!p)
		return bad_arg(err, "no profile");
	for (int s = 0; s < 2; s++) {
		size_t ndup;
		uint32_t l1, l2;
		int a, b;
		const char *what = s ? "coll_edges" : "edges";
		if (tmatch__edges_sort_merge(&p->set[s], p->metrics, p->ranks, p->directed, &ndup,
		                             &l1, &l2, &a, &b)) {
			int e = errno;
			if (e == ENOMEM)
				tmatch_error_set(err, 0, "", 0, 0, "out of memory");
			else if (e == EOVERFLOW)
				tmatch_error_set(err, 0, "", 0, 0,
				                 "%s: the sum for (%d, %d) exceeds 2^63-1", what, a,
				                 b);
			else
				tmatch_error_set(err, 0, "", 0, 0,
				                 "%s: the pair (%d, %d) is given twice in an "
				                 "undirected profile: give each pair once",
				                 what, a, b);
			errno = e == ENOMEM ? ENOMEM : EINVAL;
			return -1;
		}
		if (ndup)
			tmatch_log_printf(log, log_arg, TMATCH_LOG_WARNING,
			                  "%s: %zu duplicate edges summed (first: (%d, %d))", what,
			                  ndup, a, b);
	}
	p->finished = 1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */

static void put_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void put_u64(FILE *out, uint64_t v)
{
	char buf[24];
	int i = (int)sizeof(buf);

	buf[--i] = '\0';
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fputs(buf + i, out);
}

static void put_columns(FILE *out, unsigned metrics)
{
	fputs("  columns: [src, dst", out);
	if (metrics & TMATCH_PROFILE_HAS_BYTES)
		fputs(", bytes", out);
	if (metrics & TMATCH_PROFILE_HAS_MSGS)
		fputs(", msgs", out);
	fputs("]\n", out);
}

static void put_edges(FILE *out, const tmatch_profile_t *p, int s, const char *key)
{
	const struct tmatch__edges *e = &p->set[s];

	fprintf(out, "%s:\n", key);
	put_columns(out, p->metrics);
	if (e->n == 0) {
		fputs("  data: []\n", out);
		return;
	}
	fputs("  data:\n", out);
	for (size_t k = 0; k < e->n; k++) {
		fputs("  - [", out);
		put_u64(out, (uint64_t)e->src[k]);
		fputs(", ", out);
		put_u64(out, (uint64_t)e->dst[k]);
		if (e->bytes) {
			fputs(", ", out);
			put_u64(out, e->bytes[k]);
		}
		if (e->msgs) {
			fputs(", ", out);
			put_u64(out, e->msgs[k]);
		}
		fputs("]\n", out);
	}
}

static int put_matrix(FILE *out, const tmatch_profile_t *p, tmatch_error_t *err)
{
	size_t n = (size_t)p->ranks;
	const struct tmatch__edges *e = &p->set[0];
	const uint64_t *w = e->bytes ? e->bytes : e->msgs;
	uint64_t *dense = calloc(n * n, sizeof(*dense));

	if (!dense) {
		tmatch_error_set(err, 0, "", 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	for (size_t k = 0; k < e->n; k++) {
		dense[(size_t)e->src[k] * n + (size_t)e->dst[k]] = w[k];
		if (!p->directed)
			dense[(size_t)e->dst[k] * n + (size_t)e->src[k]] = w[k];
	}
	fprintf(out, "matrix:\n  metric: %s\n  rows:\n", e->bytes ? "bytes" : "msgs");
	for (size_t i = 0; i < n; i++) {
		fputs("  - [", out);
		for (size_t j = 0; j < n; j++) {
			if (j)
				fputs(", ", out);
			put_u64(out, dense[i * n + j]);
		}
		fputs("]\n", out);
	}
	free(dense);
	return 0;
}

int tmatch_profile_write(const tmatch_profile_t *p, FILE *out, unsigned flags, tmatch_error_t *err)
{
	int has_prov = p && (p->nodes || p->ranks_per_node);

	if (!p || !out || (flags & ~TMATCH_PROFILE_WRITE_MATRIX))
		return bad_arg(err, "no profile, no stream or unknown flags");
	if (!p->finished)
		return bad_arg(err, "call tmatch_profile_finish() before writing");
	if ((flags & TMATCH_PROFILE_WRITE_MATRIX) &&
	    (p->ranks > 1024 ||
	     (p->metrics != TMATCH_PROFILE_HAS_BYTES && p->metrics != TMATCH_PROFILE_HAS_MSGS)))
		return bad_arg(err,
		               "the dense matrix form needs at most 1024 ranks and one metric");
	fputs("# Communication profile, see treematch-profile(5).\n", out);
	fprintf(out, "format: comm-profile\nversion: %d\nranks: %d\n",
	        p->coll == TMATCH_COLL_UNSTATED ? 1 : 2, p->ranks);
	fputs("metrics: [", out);
	if (p->metrics & TMATCH_PROFILE_HAS_BYTES)
		fputs((p->metrics & TMATCH_PROFILE_HAS_MSGS) ? "bytes, msgs" : "bytes", out);
	else
		fputs("msgs", out);
	fputs("]\n", out);
	fprintf(out, "directed: %s\n", p->directed ? "true" : "false");
	fprintf(out, "placement_metric: %s\n", tmatch_profile_metric_name(p->placement_metric));
	if (p->coll != TMATCH_COLL_UNSTATED)
		fprintf(out, "collectives: %s\n", tmatch_profile_coll_name(p->coll));
	for (int i = 0; i < TMATCH__INFO_COUNT; i++)
		has_prov |= p->info[i] != NULL;
	if (has_prov) {
		fputs("provenance:\n", out);
		for (int i = 0; i < TMATCH__INFO_COUNT; i++)
			if (p->info[i]) {
				fprintf(out, "  %s: ", tmatch__info_keys[i]);
				put_string(out, p->info[i]);
				fputc('\n', out);
			}
		if (p->nodes)
			fprintf(out, "  nodes: %d\n", p->nodes);
		if (p->ranks_per_node)
			fprintf(out, "  ranks_per_node: %d\n", p->ranks_per_node);
	}
	if (flags & TMATCH_PROFILE_WRITE_MATRIX) {
		if (put_matrix(out, p, err))
			return -1;
	} else {
		put_edges(out, p, 0, "edges");
	}
	if (p->set[1].n)
		put_edges(out, p, 1, "coll_edges");
	if (fflush(out) || ferror(out)) {
		int e = errno ? errno : EIO;
		tmatch_error_set(err, 0, "", 0, 0, "write error: %s", strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

int tmatch_profile_save(const tmatch_profile_t *p, const char *path, unsigned flags,
                        tmatch_error_t *err)
{
	FILE *f;
	int rc, e;

	if (!p || !path)
		return bad_arg(err, "no profile or no path");
	f = fopen(path, "w");
	if (!f) {
		e = errno;
		tmatch_error_set(err, 0, path, 0, 0, "cannot create: %s", strerror(e));
		errno = e;
		return -1;
	}
	rc = tmatch_profile_write(p, f, flags, err);
	e = errno;
	if (fclose(f) && !rc) {
		e = errno;
		tmatch_error_set(err, 0, path, 0, 0, "write error: %s", strerror(e));
		rc = -1;
	}
	if (rc && err && !err->file[0])
		snprintf(err->file, sizeof(err->file), "%s", path);
	errno = e;
	return rc;
}

/* ------------------------------------------------------------------------ */
/* To the mapping core                                                       */

/* The matrix weight of edge k under `metric` (the arrays it needs exist). */
static double edge_weight(const struct tmatch__edges *e, size_t k, tmatch_profile_metric_t metric)
{
	if (metric == TMATCH_METRIC_BYTES)
		return (double)e->bytes[k];
	if (metric == TMATCH_METRIC_MSGS)
		return (double)e->msgs[k];
	return e->msgs[k] ? (double)e->bytes[k] / (double)e->msgs[k] : 0.0;
}

tmatch_comm_t *tmatch_profile_to_comm(const tmatch_profile_t *p, tmatch_profile_metric_t metric,
                                      unsigned sets, tmatch_error_t *err)
{
	struct tmatch__edges tmp = {0};
	tmatch_comm_t *comm = NULL;
	double *w = NULL;
	unsigned need;
	size_t ndup;
	uint32_t l1, l2;
	int a, b;

	sets = tmatch_profile_sets(p, sets);
	if (!p || !sets || (sets & ~(TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL)) || !p->finished) {
		bad_arg(err, "no profile, unfinished profile or bad edge sets");
		return NULL;
	}
	switch (metric) {
	case TMATCH_METRIC_BYTES:
		need = TMATCH_PROFILE_HAS_BYTES;
		break;
	case TMATCH_METRIC_MSGS:
		need = TMATCH_PROFILE_HAS_MSGS;
		break;
	case TMATCH_METRIC_AVG:
		need = TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS;
		break;
	default:
		bad_arg(err, "unknown metric: valid metrics are bytes, msgs, avg");
		return NULL;
	}
	if ((p->metrics & need) != need) {
		tmatch_error_set(err, 0, "", 0, 0,
		                 "metric %s needs %s, but the profile records only %s: choose "
		                 "metric=%s",
		                 tmatch_profile_metric_name(metric),
		                 metric == TMATCH_METRIC_AVG ? "bytes and msgs"
		                                             : tmatch_profile_metric_name(metric),
		                 (p->metrics & TMATCH_PROFILE_HAS_BYTES) ? "bytes" : "msgs",
		                 (p->metrics & TMATCH_PROFILE_HAS_BYTES) ? "bytes" : "msgs");
		errno = EINVAL;
		return NULL;
	}
	size_t total = ((sets & TMATCH_PROFILE_P2P) ? p->set[0].n : 0) +
	               ((sets & TMATCH_PROFILE_COLL) ? p->set[1].n : 0);
	if (!p->directed && (total == ((sets & TMATCH_PROFILE_P2P) ? p->set[0].n : 0) ||
	                     total == ((sets & TMATCH_PROFILE_COLL) ? p->set[1].n : 0))) {
		/* One undirected set: its edges are already the matrix's, sorted
		   (src < dst) and merged. No copy, no sort: a 1,048,576-rank stencil
		   is built in ~100 MB less. */
		const struct tmatch__edges *e =
		    &p->set[(sets & TMATCH_PROFILE_P2P) && p->set[0].n == total ? 0 : 1];

		w = malloc((total ? total : 1) * sizeof(*w));
		if (!w) {
			tmatch_error_set(err, 0, "", 0, 0, "out of memory");
			errno = ENOMEM;
			goto out;
		}
		for (size_t k = 0; k < total; k++)
			w[k] = edge_weight(e, k, metric);
		comm = tmatch_comm_from_edges(p->ranks, total, e->src, e->dst, w, err);
		goto out;
	}
	if (tmatch__edges_reserve(&tmp, p->metrics, total ? total : 1)) {
		tmatch_error_set(err, 0, "", 0, 0, "out of memory");
		goto out;
	}
	for (int s = 0; s < 2; s++) {
		const struct tmatch__edges *e = &p->set[s];
		if (!(sets & (s ? TMATCH_PROFILE_COLL : TMATCH_PROFILE_P2P)))
			continue;
		for (size_t k = 0; k < e->n; k++) {
			int i = e->src[k], j = e->dst[k];
			if (tmatch__edges_push(&tmp, p->metrics, i < j ? i : j, i < j ? j : i,
			                       e->bytes ? e->bytes[k] : 0, e->msgs ? e->msgs[k] : 0,
			                       0)) {
				tmatch_error_set(err, 0, "", 0, 0, "out of memory");
				goto out;
			}
		}
	}
	if (tmatch__edges_sort_merge(&tmp, p->metrics, p->ranks, 1, &ndup, &l1, &l2, &a, &b)) {
		if (errno == ENOMEM)
			tmatch_error_set(err, 0, "", 0, 0, "out of memory");
		else
			tmatch_error_set(err, 0, "", 0, 0,
			                 "traffic between ranks %d and %d exceeds 2^63-1", a, b);
		errno = errno == ENOMEM ? ENOMEM : EINVAL;
		goto out;
	}
	w = malloc((tmp.n ? tmp.n : 1) * sizeof(*w));
	if (!w) {
		tmatch_error_set(err, 0, "", 0, 0, "out of memory");
		errno = ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < tmp.n; k++)
		w[k] = edge_weight(&tmp, k, metric);
	comm = tmatch_comm_from_edges(p->ranks, tmp.n, tmp.src, tmp.dst, w, err);
out:
	free(w);
	{
		int e = errno;
		tmatch__edges_free(&tmp);
		errno = e;
	}
	return comm;
}
