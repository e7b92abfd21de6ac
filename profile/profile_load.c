/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_load.c - the comm-profile v1 loader.
 *
 * Streams libyaml events (yaml_parser_parse) with a small recursive descent
 * parser: no document tree, one event alive at a time, edges appended to
 * growable arrays. Every event goes through next_event(), which refuses
 * aliases and anchors, caps nesting depth and scalar length. The input is
 * read through a handler that enforces the size limit for non-regular files.
 *
 * Streaming rule: `ranks` and `metrics` must come before `edges`,
 * `coll_edges` and `matrix` (so every row is checked where it stands).
 */
#include "profile/profile_private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

enum col_kind { COL_SRC, COL_DST, COL_BYTES, COL_MSGS, COL_SKIP };
#define MAX_COLS 16

/* Top-level keys we know (bits of loader.seen). */
enum {
	K_FORMAT = 1 << 0,
	K_VERSION = 1 << 1,
	K_RANKS = 1 << 2,
	K_METRICS = 1 << 3,
	K_DIRECTED = 1 << 4,
	K_PLACEMENT = 1 << 5,
	K_PROVENANCE = 1 << 6,
	K_EDGES = 1 << 7,
	K_COLL = 1 << 8,
	K_MATRIX = 1 << 9,
	K_COLLECTIVES = 1 << 10,
	K_STATS = 1 << 11,
};

struct loader {
	yaml_parser_t parser;
	yaml_event_t ev;
	int have_ev;
	const char *name;
	tmatch_profile_limits_t lim;
	tmatch_log_fn log;
	void *log_arg;
	tmatch_error_t *err;
	int depth;
	/* fd input */
	int fd;
	size_t total;
	int too_big;
	int read_errno;
	/* result being built */
	tmatch_profile_t *p;
	unsigned seen;
	uint64_t version;
	tmatch_profile_coll_t coll; /* the `collectives` key (version 2) */
	yaml_mark_t placement_mark, coll_mark;
	size_t nself;
	/* dense matrix, converted to edges at the end (needs `directed`) */
	uint64_t *dense;
	uint32_t *row_line;
	int dense_metric; /* TMATCH_PROFILE_HAS_* */
	size_t diag_nonzero;
};

/* ------------------------------------------------------------------------ */

static int failv(struct loader *L, const yaml_mark_t *m, int errnum, const char *fmt, va_list ap)
{
	tmatch_error_vset(L->err, 0, L->name, m ? (int)m->line + 1 : 0, m ? (int)m->column + 1 : 0,
	                  fmt, ap);
	errno = errnum;
	return -1;
}

static int fail(struct loader *L, const yaml_mark_t *m, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct loader *L, const yaml_mark_t *m, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	failv(L, m, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

static void warn(struct loader *L, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn(struct loader *L, const yaml_mark_t *m, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!L->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (m)
		tmatch_log_printf(L->log, L->log_arg, TMATCH_LOG_WARNING, "%s:%d:%d: %s", L->name,
		                  (int)m->line + 1, (int)m->column + 1, buf);
	else
		tmatch_log_printf(L->log, L->log_arg, TMATCH_LOG_WARNING, "%s: %s", L->name, buf);
}

static const char *event_what(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return "a single value";
	case YAML_SEQUENCE_START_EVENT:
		return "a list";
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	case YAML_SEQUENCE_END_EVENT:
		return "the end of a list";
	case YAML_MAPPING_END_EVENT:
		return "the end of a mapping";
	default:
		return "something else";
	}
}

/* Fetch the next event, applying the safety rules. */
static int next_event(struct loader *L)
{
	if (L->have_ev) {
		yaml_event_delete(&L->ev);
		L->have_ev = 0;
	}
	if (!yaml_parser_parse(&L->parser, &L->ev)) {
		if (L->too_big)
			return fail(L, NULL, EFBIG, "file is larger than the limit of %zu bytes",
			            L->lim.max_file_size);
		if (L->read_errno)
			return fail(L, NULL, L->read_errno, "read error: %s",
			            strerror(L->read_errno));
		if (L->parser.error == YAML_MEMORY_ERROR)
			return fail(L, NULL, ENOMEM, "out of memory while parsing");
		yaml_mark_t m = L->parser.problem_mark;
		if (L->parser.error == YAML_READER_ERROR)
			return fail(
			    L, NULL, EINVAL,
			    "cannot decode the file (%s at byte %zu): save it as UTF-8 text",
			    L->parser.problem ? L->parser.problem : "invalid input",
			    L->parser.problem_offset);
		if (L->parser.context)
			return fail(L, &m, EINVAL,
			            "YAML syntax error: %s %s: fix the indentation "
			            "or brackets around this point",
			            L->parser.problem ? L->parser.problem : "invalid",
			            L->parser.context);
		return fail(
		    L, &m, EINVAL,
		    "YAML syntax error: %s: fix the indentation or brackets around this point",
		    L->parser.problem ? L->parser.problem : "invalid");
	}
	L->have_ev = 1;
	const yaml_event_t *ev = &L->ev;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return fail(
		    L, &ev->start_mark, EINVAL,
		    "YAML aliases (*name) are not allowed in a profile: write the values out");
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor)
			goto anchor;
		if (ev->data.scalar.length > L->lim.max_scalar_len)
			return fail(L, &ev->start_mark, EINVAL,
			            "value is %zu bytes long, the limit is %zu: shorten it",
			            ev->data.scalar.length, L->lim.max_scalar_len);
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if ((ev->type == YAML_SEQUENCE_START_EVENT && ev->data.sequence_start.anchor) ||
		    (ev->type == YAML_MAPPING_START_EVENT && ev->data.mapping_start.anchor))
			goto anchor;
		if (++L->depth > L->lim.max_depth)
			return fail(L, &ev->start_mark, EINVAL,
			            "nesting deeper than %d levels: a profile needs at most 4",
			            L->lim.max_depth);
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		L->depth--;
		break;
	default:
		break;
	}
	return 0;
anchor:
	return fail(L, &ev->start_mark, EINVAL,
	            "YAML anchors (&name) are not allowed in a profile: remove the anchor");
}

/* Skip the node whose first event is current. */
static int skip_node(struct loader *L)
{
	int level = 0;

	do {
		switch (L->ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			level++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			level--;
			break;
		default:
			break;
		}
		if (level == 0)
			return 0;
		if (next_event(L))
			return -1;
	} while (1);
}

static int is_scalar(const struct loader *L)
{
	return L->ev.type == YAML_SCALAR_EVENT;
}

static const char *sval(const struct loader *L)
{
	return (const char *)L->ev.data.scalar.value;
}

static size_t slen(const struct loader *L)
{
	return L->ev.data.scalar.length;
}

static int scalar_is(const struct loader *L, const char *word)
{
	size_t n = strlen(word);
	return is_scalar(L) && slen(L) == n && memcmp(sval(L), word, n) == 0;
}

/*
 * Step to the next key of the mapping being read and past it. Returns 1 with
 * the key's value current, *key set to the key's index in names (-1 for any
 * other key, scalar or not) and *key_mark to where the key stands; 0 at the
 * end of the mapping; -1 on error.
 */
static int next_key(struct loader *L, const char *const *names, int nnames, int *key,
                    yaml_mark_t *key_mark)
{
	if (next_event(L))
		return -1;
	if (L->ev.type == YAML_MAPPING_END_EVENT)
		return 0;
	*key = -1;
	for (int i = 0; i < nnames && *key < 0; i++)
		if (scalar_is(L, names[i]))
			*key = i;
	*key_mark = L->ev.start_mark;
	if (!is_scalar(L) && skip_node(L))
		return -1;
	if (next_event(L))
		return -1;
	return 1;
}

static int expect_scalar(struct loader *L, const char *what, const char *hint)
{
	if (is_scalar(L))
		return 0;
	return fail(L, &L->ev.start_mark, EINVAL, "'%s' must be %s, found %s", what, hint,
	            event_what(&L->ev));
}

/* Current event must be a plain decimal integer <= max. Callers zero *out:
   clang-analyzer does not inline the variadic fail(), so it cannot see that
   every error path returns -1 before they read it. */
static int get_uint(struct loader *L, const char *what, uint64_t max, uint64_t *out)
{
	if (expect_scalar(L, what, "a non-negative integer"))
		return -1;
	if (L->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    !tmatch_parse_u64(sval(L), slen(L), max, out))
		return 0;
	if (L->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'%s' must be a non-negative integer, found a quoted string: remove "
		            "the quotes",
		            what);
	const char *d = tmatch__describe_scalar(sval(L), slen(L));
	if (!strcmp(d, "a number too large"))
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'%s' is too large: the largest accepted value is %llu", what,
		            (unsigned long long)max);
	return fail(L, &L->ev.start_mark, EINVAL,
	            "'%s' must be a non-negative integer, found %s: write whole numbers without "
	            "sign, decimal point or exponent",
	            what, d);
}

static int get_bool(struct loader *L, const char *what, int *out)
{
	if (expect_scalar(L, what, "true or false"))
		return -1;
	if (L->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if (scalar_is(L, "true") || scalar_is(L, "True") || scalar_is(L, "yes")) {
			*out = 1;
			return 0;
		}
		if (scalar_is(L, "false") || scalar_is(L, "False") || scalar_is(L, "no")) {
			*out = 0;
			return 0;
		}
	}
	return fail(L, &L->ev.start_mark, EINVAL, "'%s' must be true or false", what);
}

static int metric_bit(const struct loader *L)
{
	if (scalar_is(L, "bytes"))
		return TMATCH_PROFILE_HAS_BYTES;
	if (scalar_is(L, "msgs"))
		return TMATCH_PROFILE_HAS_MSGS;
	return 0;
}

/* ------------------------------------------------------------------------ */

static int parse_format(struct loader *L)
{
	if (expect_scalar(L, "format", "comm-profile"))
		return -1;
	if (!scalar_is(L, "comm-profile"))
		return fail(L, &L->ev.start_mark, EINVAL,
		            "this is not a communication profile: 'format' must be comm-profile");
	return 0;
}

static int parse_version(struct loader *L)
{
	uint64_t v = 0;

	if (get_uint(L, "version", INT_MAX, &v))
		return -1;
	if (v < 1 || v > TMATCH_PROFILE_VERSION)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "profile version %llu is not supported: this reader understands "
		            "versions 1 and %d (convert the file or upgrade treematch)",
		            (unsigned long long)v, TMATCH_PROFILE_VERSION);
	L->version = v;
	return 0;
}

/* collectives: wire | logical (what coll_edges hold; version 2) */
static int parse_collectives(struct loader *L)
{
	if (expect_scalar(L, "collectives", "wire or logical"))
		return -1;
	if (scalar_is(L, "wire"))
		L->coll = TMATCH_COLL_WIRE;
	else if (scalar_is(L, "logical"))
		L->coll = TMATCH_COLL_LOGICAL;
	else
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'collectives' must be wire (the messages collectives send, placed "
		            "by) or logical (a logical model, placed by only with coll=on)");
	L->coll_mark = L->ev.start_mark;
	return 0;
}

static int parse_ranks(struct loader *L)
{
	uint64_t v = 0;

	if (get_uint(L, "ranks", UINT64_MAX, &v))
		return -1;
	if (v == 0)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'ranks' is 0: a profile has at least 1 rank");
	if (v > (uint64_t)L->lim.max_ranks)
		return fail(L, &L->ev.start_mark, E2BIG,
		            "'ranks' is %llu, above the limit of %d ranks", (unsigned long long)v,
		            L->lim.max_ranks);
	L->p->ranks = (int)v;
	return 0;
}

static int parse_metrics(struct loader *L)
{
	unsigned m = 0;

	if (L->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'metrics' must be a list such as [bytes, msgs], found %s",
		            event_what(&L->ev));
	yaml_mark_t start = L->ev.start_mark;
	for (;;) {
		if (next_event(L))
			return -1;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (expect_scalar(L, "metrics entry", "bytes or msgs"))
			return -1;
		int bit = metric_bit(L);
		if (!bit) {
			warn(L, &L->ev.start_mark,
			     "unknown metric ignored (this reader knows bytes and msgs)");
			continue;
		}
		if (m & (unsigned)bit)
			return fail(L, &L->ev.start_mark, EINVAL,
			            "metric listed twice in 'metrics': list each metric once");
		m |= (unsigned)bit;
	}
	if (!m)
		return fail(L, &start, EINVAL,
		            "'metrics' names no known metric: list bytes, msgs or both");
	L->p->metrics = m;
	return 0;
}

static int parse_placement(struct loader *L)
{
	tmatch_profile_metric_t m;

	if (expect_scalar(L, "placement_metric", "bytes, msgs or avg"))
		return -1;
	if (scalar_is(L, "bytes"))
		m = TMATCH_METRIC_BYTES;
	else if (scalar_is(L, "msgs"))
		m = TMATCH_METRIC_MSGS;
	else if (scalar_is(L, "avg"))
		m = TMATCH_METRIC_AVG;
	else
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'placement_metric' must be bytes, msgs or avg");
	L->p->placement_metric = m;
	L->placement_mark = L->ev.start_mark;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Provenance                                                                */

static int set_info_here(struct loader *L, int key, const char *what)
{
	if (!is_scalar(L)) {
		warn(L, &L->ev.start_mark, "provenance %s ignored: expected a single value", what);
		return skip_node(L);
	}
	if (!tmatch__info_valid(sval(L), slen(L))) {
		warn(L, &L->ev.start_mark,
		     "provenance %s ignored: longer than %d bytes or holding control characters",
		     what, TMATCH__INFO_MAX_LEN);
		return 0;
	}
	char *s = strndup(sval(L), slen(L));
	if (!s)
		return fail(L, NULL, ENOMEM, "out of memory");
	free(L->p->info[key]);
	L->p->info[key] = s;
	return 0;
}

/* application: NAME | {name: NAME}; tool: NAME | {name: NAME, version: V} */
static int parse_named(struct loader *L, int key, int version_key, const char *what)
{
	static const char *const names[] = {"name", "version"};
	yaml_mark_t km;
	int k, r;

	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return set_info_here(L, key, what);
	while ((r = next_key(L, names, version_key >= 0 ? 2 : 1, &k, &km)) > 0) {
		if (k < 0) {
			if (skip_node(L))
				return -1;
		} else if (set_info_here(L, k == 1 && version_key >= 0 ? version_key : key, what)) {
			return -1;
		}
	}
	return r;
}

static int check_created(struct loader *L)
{
	const char *s = sval(L);
	size_t n = slen(L);
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	int ok = n >= sizeof(shape) - 1;

	for (size_t i = 0; ok && i < sizeof(shape) - 1; i++) {
		char c = s[i];
		if (shape[i] == 'd')
			ok = c >= '0' && c <= '9';
		else if (shape[i] == 'T')
			ok = c == 'T' || c == 't' || c == ' ';
		else
			ok = c == shape[i];
	}
	if (!ok)
		warn(L, &L->ev.start_mark,
		     "provenance 'created' is not an RFC 3339 date (YYYY-MM-DDTHH:MM:SSZ)");
	return 0;
}

static int parse_nodes(struct loader *L)
{
	uint64_t v = 0;
	int count = 0, rpn = -1;

	if (is_scalar(L)) {
		if (get_uint(L, "provenance nodes", INT_MAX, &v))
			return -1;
		L->p->nodes = (int)v;
		return 0;
	}
	if (L->ev.type != YAML_SEQUENCE_START_EVENT) {
		warn(L, &L->ev.start_mark,
		     "provenance 'nodes' ignored: expected a number or a list");
		return skip_node(L);
	}
	for (;;) {
		if (next_event(L))
			return -1;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		count++;
		if (L->ev.type != YAML_MAPPING_START_EVENT) {
			rpn = 0;
			if (skip_node(L))
				return -1;
			continue;
		}
		static const char *const names[] = {"ranks"};
		yaml_mark_t km;
		int nr = -1, k, r;
		while ((r = next_key(L, names, 1, &k, &km)) > 0) {
			if (k == 0 && L->ev.type == YAML_SEQUENCE_START_EVENT) {
				nr = 0;
				for (;;) {
					if (next_event(L))
						return -1;
					if (L->ev.type == YAML_SEQUENCE_END_EVENT)
						break;
					nr++;
					if (skip_node(L))
						return -1;
				}
			} else if (skip_node(L)) {
				return -1;
			}
		}
		if (r < 0)
			return -1;
		if (nr < 0)
			rpn = 0;
		else if (rpn == -1)
			rpn = nr;
		else if (rpn != nr)
			rpn = 0;
	}
	L->p->nodes = count;
	L->p->ranks_per_node = rpn > 0 ? rpn : 0;
	return 0;
}

static int parse_provenance(struct loader *L)
{
	uint64_t v = 0;

	if (L->ev.type != YAML_MAPPING_START_EVENT) {
		warn(L, &L->ev.start_mark, "'provenance' ignored: expected a mapping");
		return skip_node(L);
	}
	for (;;) {
		if (next_event(L))
			return -1;
		if (L->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		if (!is_scalar(L)) {
			if (skip_node(L) || next_event(L) || skip_node(L))
				return -1;
			continue;
		}
		int key = -1, kind = 0;
		if (scalar_is(L, "application"))
			key = TMATCH__INFO_APPLICATION, kind = 1;
		else if (scalar_is(L, "tool"))
			key = TMATCH__INFO_TOOL, kind = 2;
		else if (scalar_is(L, "tool_version"))
			key = TMATCH__INFO_TOOL_VERSION;
		else if (scalar_is(L, "mpi_library"))
			key = TMATCH__INFO_MPI_LIBRARY;
		else if (scalar_is(L, "created"))
			key = TMATCH__INFO_CREATED, kind = 3;
		else if (scalar_is(L, "source"))
			key = TMATCH__INFO_SOURCE;
		else if (scalar_is(L, "nodes"))
			kind = 4;
		else if (scalar_is(L, "ranks_per_node"))
			kind = 5;
		if (next_event(L))
			return -1;
		int rc;
		switch (kind) {
		case 1:
			rc = parse_named(L, key, -1, "application");
			break;
		case 2:
			rc = parse_named(L, key, TMATCH__INFO_TOOL_VERSION, "tool");
			break;
		case 3:
			rc = set_info_here(L, key, "created");
			if (!rc && is_scalar(L) && L->p->info[key])
				rc = check_created(L);
			break;
		case 4:
			rc = parse_nodes(L);
			break;
		case 5:
			rc = get_uint(L, "provenance ranks_per_node", INT_MAX, &v);
			if (!rc)
				L->p->ranks_per_node = (int)v;
			break;
		default:
			rc =
			    key >= 0 ? set_info_here(L, key, tmatch__info_keys[key]) : skip_node(L);
			break;
		}
		if (rc)
			return -1;
	}
}

/* ------------------------------------------------------------------------ */
/* Edges                                                                     */

static int need_header(struct loader *L, const char *what)
{
	if (!(L->seen & K_RANKS))
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'%s' comes before 'ranks': put format, version, ranks and metrics "
		            "at the top of the file",
		            what);
	if (!(L->seen & K_METRICS))
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'%s' comes before 'metrics': put format, version, ranks and metrics "
		            "at the top of the file",
		            what);
	return 0;
}

static const char *const col_names[] = {"src", "dst", "bytes", "msgs"};

static void describe_cols(const enum col_kind *cols, int ncols, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < ncols && off < len; c++) {
		int n = snprintf(buf + off, len - off, "%s%s", c ? ", " : "",
		                 cols[c] == COL_SKIP ? "(ignored)" : col_names[cols[c]]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

/* One data row; current event is its first event. */
static int parse_row(struct loader *L, struct tmatch__edges *e, const enum col_kind *cols,
                     int ncols)
{
	uint64_t v[4] = {0, 0, 0, 0}, x = 0;
	yaml_mark_t start = L->ev.start_mark;
	char desc[128];
	int c;

	if (L->ev.type != YAML_SEQUENCE_START_EVENT) {
		describe_cols(cols, ncols, desc, sizeof(desc));
		return fail(L, &start, EINVAL, "an edge must be a list [%s], found %s", desc,
		            event_what(&L->ev));
	}
	for (c = 0;; c++) {
		if (next_event(L))
			return -1;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (c >= ncols) {
			describe_cols(cols, ncols, desc, sizeof(desc));
			return fail(L, &L->ev.start_mark, EINVAL,
			            "edge has more than %d values: the columns are [%s]", ncols,
			            desc);
		}
		if (cols[c] == COL_SKIP) {
			if (skip_node(L))
				return -1;
			continue;
		}
		const char *what = col_names[cols[c]];
		if (cols[c] <= COL_DST) {
			if (get_uint(L, what, UINT64_MAX, &x))
				return -1;
			if (x >= (uint64_t)L->p->ranks)
				return fail(
				    L, &L->ev.start_mark, EINVAL,
				    "%s rank %llu is out of range: the profile has %d ranks, "
				    "numbered 0 to %d",
				    what, (unsigned long long)x, L->p->ranks, L->p->ranks - 1);
		} else if (get_uint(L, what, TMATCH__WEIGHT_MAX, &x)) {
			return -1;
		}
		v[cols[c]] = x;
	}
	if (c < ncols) {
		describe_cols(cols, ncols, desc, sizeof(desc));
		return fail(L, &start, EINVAL, "edge has %d values, expected %d: [%s]", c, ncols,
		            desc);
	}
	if (v[COL_SRC] == v[COL_DST]) {
		if (L->nself++ < 3)
			warn(L, &start, "self edge (%llu, %llu) ignored",
			     (unsigned long long)v[COL_SRC], (unsigned long long)v[COL_DST]);
		return 0;
	}
	if (L->p->set[0].n + L->p->set[1].n >= L->lim.max_edges)
		return fail(L, &start, EFBIG,
		            "more than %zu edges: the limit is reached (max_edges)",
		            L->lim.max_edges);
	if (tmatch__edges_push(e, L->p->metrics, (int)v[COL_SRC], (int)v[COL_DST], v[COL_BYTES],
	                       v[COL_MSGS], (uint32_t)start.line + 1))
		return fail(L, NULL, ENOMEM, "out of memory after %zu edges", e->n);
	return 0;
}

static int parse_rows(struct loader *L, struct tmatch__edges *e, const enum col_kind *cols,
                      int ncols, const char *what)
{
	if (L->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail(L, &L->ev.start_mark, EINVAL, "'%s' must be a list of edges, found %s",
		            what, event_what(&L->ev));
	for (;;) {
		if (next_event(L))
			return -1;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		if (parse_row(L, e, cols, ncols))
			return -1;
	}
}

static int default_cols(const struct loader *L, enum col_kind *cols)
{
	int n = 0;

	cols[n++] = COL_SRC;
	cols[n++] = COL_DST;
	if (L->p->metrics & TMATCH_PROFILE_HAS_BYTES)
		cols[n++] = COL_BYTES;
	if (L->p->metrics & TMATCH_PROFILE_HAS_MSGS)
		cols[n++] = COL_MSGS;
	return n;
}

static int parse_columns(struct loader *L, enum col_kind *cols, int *ncols, const char *what)
{
	unsigned got = 0;
	int n = 0;
	yaml_mark_t start = L->ev.start_mark;

	if (L->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail(L, &start, EINVAL,
		            "'%s.columns' must be a list such as [src, dst, bytes, msgs], found %s",
		            what, event_what(&L->ev));
	for (;;) {
		if (next_event(L))
			return -1;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (expect_scalar(L, "columns entry", "a column name"))
			return -1;
		if (n >= MAX_COLS)
			return fail(L, &L->ev.start_mark, EINVAL, "more than %d columns", MAX_COLS);
		enum col_kind k = COL_SKIP;
		for (int i = 0; i < 4; i++)
			if (scalar_is(L, col_names[i]))
				k = (enum col_kind)i;
		if ((n == 0 && k != COL_SRC) || (n == 1 && k != COL_DST))
			return fail(L, &L->ev.start_mark, EINVAL,
			            "'%s.columns' must start with src, dst", what);
		if (k == COL_BYTES && !(L->p->metrics & TMATCH_PROFILE_HAS_BYTES))
			return fail(L, &L->ev.start_mark, EINVAL,
			            "column bytes is not in 'metrics': add it there or drop the "
			            "column");
		if (k == COL_MSGS && !(L->p->metrics & TMATCH_PROFILE_HAS_MSGS))
			return fail(L, &L->ev.start_mark, EINVAL,
			            "column msgs is not in 'metrics': add it there or drop the "
			            "column");
		if (k != COL_SKIP && (got & (1u << k)))
			return fail(L, &L->ev.start_mark, EINVAL,
			            "column listed twice in '%s.columns'", what);
		if (k != COL_SKIP)
			got |= 1u << k;
		cols[n++] = k;
	}
	if (n < 2)
		return fail(L, &start, EINVAL, "'%s.columns' must start with src, dst", what);
	if (((L->p->metrics & TMATCH_PROFILE_HAS_BYTES) && !(got & (1u << COL_BYTES))) ||
	    ((L->p->metrics & TMATCH_PROFILE_HAS_MSGS) && !(got & (1u << COL_MSGS))))
		return fail(L, &start, EINVAL,
		            "'%s.columns' must list every metric of 'metrics' once", what);
	*ncols = n;
	return 0;
}

/* edges: [[...], ...] | {columns: [...], data: [[...], ...]} */
static int parse_edges(struct loader *L, struct tmatch__edges *e, const char *what)
{
	static const char *const names[] = {"columns", "data"};
	enum col_kind cols[MAX_COLS];
	int ncols, have_cols = 0, have_data = 0, k, r;
	yaml_mark_t km;

	if (need_header(L, what))
		return -1;
	ncols = default_cols(L, cols);
	if (L->ev.type == YAML_SEQUENCE_START_EVENT)
		return parse_rows(L, e, cols, ncols, what);
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'%s' must be a list of edges or a mapping with columns and data",
		            what);
	while ((r = next_key(L, names, 2, &k, &km)) > 0) {
		if (k == 0) {
			if (have_cols || have_data)
				return fail(L, &km, EINVAL,
				            "'%s.columns' must come once, before '%s.data'", what,
				            what);
			if (parse_columns(L, cols, &ncols, what))
				return -1;
			have_cols = 1;
		} else if (k == 1) {
			if (have_data)
				return fail(L, &km, EINVAL, "'%s.data' given twice", what);
			if (parse_rows(L, e, cols, ncols, what))
				return -1;
			have_data = 1;
		} else if (skip_node(L)) {
			return -1;
		}
	}
	return r;
}

/* matrix: {metric: bytes|msgs, rows: [[...] x ranks]} */
static int parse_matrix_rows(struct loader *L)
{
	int n = L->p->ranks, i = 0;
	yaml_mark_t start = L->ev.start_mark;

	if (L->ev.type != YAML_SEQUENCE_START_EVENT)
		return fail(L, &start, EINVAL, "'matrix.rows' must be a list of %d rows", n);
	for (;;) {
		if (next_event(L))
			return -1;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (i >= n)
			return fail(L, &L->ev.start_mark, EINVAL,
			            "'matrix.rows' has more than %d rows: it needs exactly one row "
			            "per rank",
			            n);
		if (L->ev.type != YAML_SEQUENCE_START_EVENT)
			return fail(L, &L->ev.start_mark, EINVAL,
			            "matrix row %d must be a list of %d values", i, n);
		yaml_mark_t rm = L->ev.start_mark;
		L->row_line[i] = (uint32_t)rm.line + 1;
		int j = 0;
		for (;;) {
			if (next_event(L))
				return -1;
			if (L->ev.type == YAML_SEQUENCE_END_EVENT)
				break;
			if (j >= n)
				return fail(L, &L->ev.start_mark, EINVAL,
				            "matrix row %d has more than %d values", i, n);
			uint64_t x = 0;
			if (get_uint(L, "matrix value", TMATCH__WEIGHT_MAX, &x))
				return -1;
			if (i == j && x)
				L->diag_nonzero++;
			L->dense[(size_t)i * (size_t)n + (size_t)j] = x;
			j++;
		}
		if (j < n)
			return fail(L, &rm, EINVAL, "matrix row %d has %d values, expected %d", i,
			            j, n);
		i++;
	}
	if (i < n)
		return fail(L, &start, EINVAL,
		            "'matrix.rows' has %d rows, expected %d (one per rank)", i, n);
	return 0;
}

static int parse_matrix(struct loader *L)
{
	static const char *const names[] = {"metric", "rows"};
	int have_rows = 0, k, r;
	unsigned metric = 0;
	yaml_mark_t km;

	if (need_header(L, "matrix"))
		return -1;
	if (L->p->ranks > L->lim.max_matrix_ranks)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'matrix' is only allowed up to %d ranks (this profile has %d): use "
		            "the sparse 'edges' form",
		            L->lim.max_matrix_ranks, L->p->ranks);
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "'matrix' must be a mapping with metric and rows");
	size_t n = (size_t)L->p->ranks;
	L->dense = calloc(n * n, sizeof(*L->dense));
	L->row_line = calloc(n, sizeof(*L->row_line));
	if (!L->dense || !L->row_line)
		return fail(L, NULL, ENOMEM, "out of memory for a %zu x %zu matrix", n, n);
	while ((r = next_key(L, names, 2, &k, &km)) > 0) {
		if (k == 0) {
			if (have_rows)
				return fail(L, &km, EINVAL,
				            "'matrix.metric' must come before 'matrix.rows'");
			if (expect_scalar(L, "matrix.metric", "bytes or msgs"))
				return -1;
			metric = (unsigned)metric_bit(L);
			if (!metric)
				return fail(L, &L->ev.start_mark, EINVAL,
				            "'matrix.metric' must be bytes or msgs");
		} else if (k == 1) {
			if (have_rows)
				return fail(L, &km, EINVAL, "'matrix.rows' given twice");
			if (parse_matrix_rows(L))
				return -1;
			have_rows = 1;
		} else if (skip_node(L)) {
			return -1;
		}
	}
	if (r < 0)
		return -1;
	if (!metric) {
		if (L->p->metrics != TMATCH_PROFILE_HAS_BYTES &&
		    L->p->metrics != TMATCH_PROFILE_HAS_MSGS)
			return fail(L, &L->ev.start_mark, EINVAL,
			            "'matrix' needs 'metric: bytes' or 'metric: msgs' when the "
			            "profile lists two metrics");
		metric = L->p->metrics;
	}
	if (L->p->metrics != metric)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "a 'matrix' holds one metric: set 'metrics' to exactly the matrix's "
		            "metric, or use 'edges' for several metrics");
	if (!have_rows)
		return fail(L, &L->ev.start_mark, EINVAL, "'matrix' has no 'rows'");
	L->dense_metric = (int)metric;
	return 0;
}

/* Turn the dense matrix into p2p edges, once `directed` is known. */
static int matrix_to_edges(struct loader *L)
{
	int n = L->p->ranks;
	struct tmatch__edges *e = &L->p->set[0];

	if (L->diag_nonzero)
		warn(L, NULL, "%zu non-zero diagonal values of 'matrix' ignored (self traffic)",
		     L->diag_nonzero);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			uint64_t x = L->dense[(size_t)i * (size_t)n + (size_t)j];
			if (i == j)
				continue;
			if (!L->p->directed) {
				uint64_t y = L->dense[(size_t)j * (size_t)n + (size_t)i];
				if (x != y) {
					yaml_mark_t m = {0, L->row_line[i] - 1, 0};
					return fail(
					    L, &m, EINVAL,
					    "matrix is not symmetric: row %d column %d differs "
					    "from row %d column %d, but 'directed' is false "
					    "(set directed: true, or fix the values)",
					    i, j, j, i);
				}
				if (j < i)
					continue;
			}
			if (!x)
				continue;
			uint64_t b = L->dense_metric == TMATCH_PROFILE_HAS_BYTES ? x : 0;
			uint64_t m = L->dense_metric == TMATCH_PROFILE_HAS_MSGS ? x : 0;
			if (tmatch__edges_push(e, L->p->metrics, i, j, b, m, L->row_line[i]))
				return fail(L, NULL, ENOMEM, "out of memory");
		}
	return 0;
}

/* ------------------------------------------------------------------------ */

static int finish_set(struct loader *L, int s)
{
	struct tmatch__edges *e = &L->p->set[s];
	const char *what = s ? "coll_edges" : "edges";
	size_t ndup;
	uint32_t dup_line, first_line;
	int a, b;

	if (!L->p->directed)
		for (size_t k = 0; k < e->n; k++)
			if (e->src[k] > e->dst[k]) {
				int t = e->src[k];
				e->src[k] = e->dst[k];
				e->dst[k] = t;
			}
	if (tmatch__edges_sort_merge(e, L->p->metrics, L->p->ranks, L->p->directed, &ndup,
	                             &dup_line, &first_line, &a, &b)) {
		yaml_mark_t m = {0, dup_line ? dup_line - 1 : 0, 0};
		if (errno == ENOMEM)
			return fail(L, NULL, ENOMEM, "out of memory sorting %zu edges", e->n);
		if (errno == EOVERFLOW)
			return fail(
			    L, dup_line ? &m : NULL, EINVAL,
			    "%s: the sum of the duplicate rows for (%d, %d) exceeds 2^63-1: "
			    "check the values",
			    what, a, b);
		return fail(L, dup_line ? &m : NULL, EINVAL,
		            "%s: the pair (%d, %d) is given twice (first at line %u); with "
		            "directed: false each pair appears once: merge the rows or set "
		            "directed: true",
		            what, a, b, first_line);
	}
	if (ndup) {
		yaml_mark_t m = {0, dup_line ? dup_line - 1 : 0, 0};
		warn(L, dup_line ? &m : NULL,
		     "%s: %zu duplicate rows summed (the first one is (%d, %d), first seen at "
		     "line %u)",
		     what, ndup, a, b, first_line);
	}
	free(e->line);
	e->line = NULL;
	return 0;
}

static int check_required(struct loader *L, const yaml_mark_t *end)
{
	static const struct {
		unsigned bit;
		const char *msg;
	} req[] = {
	    {K_FORMAT, "missing 'format: comm-profile' at the top of the file"},
	    {K_VERSION, "missing 'version: 2' (or 1)"},
	    {K_RANKS, "missing 'ranks: N' (the number of MPI ranks)"},
	    {K_METRICS, "missing 'metrics' (for example [bytes, msgs])"},
	};
	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		if (!(L->seen & req[i].bit))
			return fail(L, end, EINVAL, "%s", req[i].msg);
	if ((L->seen & K_MATRIX) && (L->seen & K_EDGES))
		return fail(L, end, EINVAL,
		            "give the point-to-point traffic either as 'edges' or as 'matrix', "
		            "not both");
	/* version 1 said nothing of its collectives (placed by only with coll=on) */
	if (L->version >= 2)
		L->p->coll = (L->seen & K_COLLECTIVES) ? L->coll : TMATCH_COLL_WIRE;
	else if (L->seen & K_COLLECTIVES)
		warn(L, &L->coll_mark,
		     "'collectives' is a key of version 2, ignored in this version 1 profile: "
		     "write 'version: 2' to have it count");
	tmatch_profile_metric_t pm = L->p->placement_metric;
	unsigned need = pm == TMATCH_METRIC_BYTES ? TMATCH_PROFILE_HAS_BYTES
	                : pm == TMATCH_METRIC_MSGS
	                    ? TMATCH_PROFILE_HAS_MSGS
	                    : TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS;
	if ((L->p->metrics & need) != need) {
		if (!(L->seen & K_PLACEMENT) && (L->p->metrics & TMATCH_PROFILE_HAS_MSGS)) {
			/* Default bytes, but only msgs recorded: use msgs. */
			L->p->placement_metric = TMATCH_METRIC_MSGS;
		} else {
			return fail(L, &L->placement_mark, EINVAL,
			            "'placement_metric: %s' needs metrics this profile does not "
			            "record: add them to 'metrics' or choose another",
			            tmatch_profile_metric_name(pm));
		}
	}
	return 0;
}

static int parse_document(struct loader *L)
{
	if (next_event(L)) /* STREAM-START */
		return -1;
	if (next_event(L))
		return -1;
	if (L->ev.type == YAML_STREAM_END_EVENT)
		return fail(L, NULL, EINVAL,
		            "file is empty: a profile starts with 'format: comm-profile'");
	/* DOCUMENT-START */
	if (next_event(L))
		return -1;
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "a profile is a YAML mapping starting with 'format: comm-profile', "
		            "found %s",
		            event_what(&L->ev));
	for (;;) {
		if (next_event(L))
			return -1;
		if (L->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (!is_scalar(L)) {
			/* A complex key: not ours, skip key and value. */
			if (skip_node(L) || next_event(L) || skip_node(L))
				return -1;
			continue;
		}
		static const struct {
			const char *name;
			unsigned bit;
		} keys[] = {
		    {"format", K_FORMAT},
		    {"version", K_VERSION},
		    {"ranks", K_RANKS},
		    {"metrics", K_METRICS},
		    {"directed", K_DIRECTED},
		    {"placement_metric", K_PLACEMENT},
		    {"provenance", K_PROVENANCE},
		    {"edges", K_EDGES},
		    {"coll_edges", K_COLL},
		    {"matrix", K_MATRIX},
		    {"collectives", K_COLLECTIVES},
		    {"stats", K_STATS},
		};
		unsigned bit = 0;
		const char *kname = NULL;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (scalar_is(L, keys[i].name)) {
				bit = keys[i].bit;
				kname = keys[i].name;
			}
		if (bit && (L->seen & bit))
			return fail(L, &L->ev.start_mark, EINVAL,
			            "key '%s' is given twice: keep one", kname);
		if (!bit) {
			/* a slip of one of ours is a mistake; another key is a later
			   version's, ignored (the file's text is not echoed) */
			const char *names[sizeof(keys) / sizeof(keys[0])];
			int near;

			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
				names[i] = keys[i].name;
			near = tmatch_closest_name(sval(L), slen(L), names,
			                           sizeof(keys) / sizeof(keys[0]));
			if (near >= 0)
				return fail(
				    L, &L->ev.start_mark, EINVAL,
				    "this key is not one of the format's: did you mean '%s'?",
				    names[near]);
			warn(L, &L->ev.start_mark,
			     "a key this version of the format does not know: ignored");
		}
		L->seen |= bit;
		if (next_event(L))
			return -1;
		int rc = 0;
		switch (bit) {
		case K_FORMAT:
			rc = parse_format(L);
			break;
		case K_VERSION:
			rc = parse_version(L);
			break;
		case K_RANKS:
			rc = parse_ranks(L);
			break;
		case K_METRICS:
			rc = parse_metrics(L);
			break;
		case K_DIRECTED:
			rc = get_bool(L, "directed", &L->p->directed);
			break;
		case K_PLACEMENT:
			rc = parse_placement(L);
			break;
		case K_PROVENANCE:
			rc = parse_provenance(L);
			break;
		case K_EDGES:
			rc = parse_edges(L, &L->p->set[0], "edges");
			break;
		case K_COLL:
			rc = parse_edges(L, &L->p->set[1], "coll_edges");
			break;
		case K_MATRIX:
			rc = parse_matrix(L);
			break;
		case K_COLLECTIVES:
			rc = parse_collectives(L);
			break;
		case K_STATS: /* the recorder's counters: informative only */
			rc = skip_node(L);
			break;
		default:
			rc = skip_node(L); /* unknown keys are ignored (later versions) */
			break;
		}
		if (rc)
			return -1;
	}
	yaml_mark_t end = L->ev.end_mark;
	if (next_event(L)) /* DOCUMENT-END */
		return -1;
	if (next_event(L))
		return -1;
	if (L->ev.type != YAML_STREAM_END_EVENT)
		return fail(L, &L->ev.start_mark, EINVAL,
		            "a profile file holds one YAML document: remove the second one");
	if (check_required(L, &end))
		return -1;
	if (L->dense && matrix_to_edges(L))
		return -1;
	if (L->nself > 3)
		warn(L, NULL, "%zu self edges ignored in total", L->nself);
	for (int s = 0; s < 2; s++)
		if (finish_set(L, s))
			return -1;
	L->p->finished = 1;
	int any = 0;
	for (int s = 0; s < 2 && !any; s++) {
		const struct tmatch__edges *e = &L->p->set[s];
		for (size_t k = 0; k < e->n && !any; k++)
			any = (e->bytes && e->bytes[k]) || (e->msgs && e->msgs[k]);
	}
	if (!any)
		warn(L, NULL, "the profile records no traffic: placement will be the default one");
	return 0;
}

static int read_handler(void *data, unsigned char *buffer, size_t size, size_t *size_read)
{
	struct loader *L = data;
	ssize_t n;

	*size_read = 0;
	do
		n = read(L->fd, buffer, size);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		L->read_errno = errno;
		return 0;
	}
	L->total += (size_t)n;
	if (L->total > L->lim.max_file_size) {
		L->too_big = 1;
		return 0;
	}
	*size_read = (size_t)n;
	return 1;
}

static tmatch_profile_t *load_common(struct loader *L, tmatch_error_t *err)
{
	tmatch_profile_t *res = NULL;
	tmatch_error_t local = {{0}, 0, 0, {0}};

	L->err = err ? err : &local;
	L->p = tmatch_profile_create(1, TMATCH_PROFILE_HAS_BYTES, 1, NULL);
	if (!L->p) {
		fail(L, NULL, ENOMEM, "out of memory");
		goto out;
	}
	L->p->metrics = 0;
	L->p->ranks = 0;
	if (parse_document(L))
		goto out;
	res = L->p;
	L->p = NULL;
out:
	if (L->have_ev)
		yaml_event_delete(&L->ev);
	yaml_parser_delete(&L->parser);
	free(L->dense);
	free(L->row_line);
	if (L->p) {
		int e = errno;
		tmatch_profile_destroy(L->p);
		errno = e;
	}
	return res;
}

static int loader_init(struct loader *L, const char *name, const tmatch_profile_limits_t *lim,
                       tmatch_log_fn log, void *log_arg, tmatch_error_t *err)
{
	memset(L, 0, sizeof(*L));
	L->name = name;
	L->log = log;
	L->log_arg = log_arg;
	L->fd = -1;
	if (lim)
		L->lim = *lim;
	else
		tmatch_profile_limits_init(&L->lim);
	if (L->lim.max_ranks < 1 || L->lim.max_depth < 3 || L->lim.max_scalar_len < 16 ||
	    L->lim.max_edges == 0 || L->lim.max_edges > UINT32_MAX || L->lim.max_file_size == 0 ||
	    L->lim.max_matrix_ranks < 0) {
		tmatch_error_set(err, 0, name, 0, 0,
		                 "invalid limits: max_ranks >= 1, max_depth >= 3, "
		                 "max_scalar_len >= 16, 1 <= max_edges <= 2^32-1, "
		                 "max_file_size >= 1");
		errno = EINVAL;
		return -1;
	}
	if (!yaml_parser_initialize(&L->parser)) {
		tmatch_error_set(err, 0, name, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

tmatch_profile_t *tmatch_profile_load_buffer(const void *buf, size_t len, const char *name,
                                             const tmatch_profile_limits_t *lim, tmatch_log_fn log,
                                             void *log_arg, tmatch_error_t *err)
{
	struct loader L;

	if (!name)
		name = "<buffer>";
	if (!buf && len) {
		tmatch_error_set(err, 0, name, 0, 0, "no buffer given");
		errno = EINVAL;
		return NULL;
	}
	if (loader_init(&L, name, lim, log, log_arg, err))
		return NULL;
	if (len > L.lim.max_file_size) {
		tmatch_error_set(err, 0, name, 0, 0,
		                 "profile is %zu bytes, larger than the limit of %zu bytes", len,
		                 L.lim.max_file_size);
		yaml_parser_delete(&L.parser);
		errno = EFBIG;
		return NULL;
	}
	if (tmatch_profile_is_compiled(buf, len)) {
		yaml_parser_delete(&L.parser);
		return tmatch__profile_load_compiled(buf, len, name, &L.lim, err);
	}
	yaml_parser_set_input_string(&L.parser, buf ? buf : (const void *)"", len);
	return load_common(&L, err);
}

/*
 * A regular file that starts (at fd's offset) like a compiled profile is
 * mapped and handed to compiled.c: returns 1 with *out set (NULL and err on
 * failure). 0 when it is YAML (nothing consumed: pread leaves the offset).
 */
static int load_if_compiled(int fd, const struct stat *st, const char *name,
                            const tmatch_profile_limits_t *lim, tmatch_profile_t **out,
                            tmatch_error_t *err)
{
	char head[8];
	off_t off = lseek(fd, 0, SEEK_CUR);
	size_t len;
	void *map;

	if (off < 0 || off >= st->st_size || pread(fd, head, sizeof(head), off) != sizeof(head) ||
	    !tmatch_profile_is_compiled(head, sizeof(head)))
		return 0;
	len = (size_t)(st->st_size - off);
	map = mmap(NULL, len + (size_t)(off % sysconf(_SC_PAGESIZE)), PROT_READ, MAP_PRIVATE, fd,
	           off - off % sysconf(_SC_PAGESIZE));
	if (map == MAP_FAILED) {
		int e = errno;
		tmatch_error_set(err, 0, name, 0, 0, "cannot read: %s", strerror(e));
		errno = e;
		return 1;
	}
	*out = tmatch__profile_load_compiled((char *)map + off % sysconf(_SC_PAGESIZE), len, name,
	                                     lim, err);
	munmap(map, len + (size_t)(off % sysconf(_SC_PAGESIZE)));
	return 1;
}

tmatch_profile_t *tmatch_profile_load_fd(int fd, const char *name,
                                         const tmatch_profile_limits_t *lim, tmatch_log_fn log,
                                         void *log_arg, tmatch_error_t *err)
{
	struct loader L;
	struct stat st;

	if (!name)
		name = "<fd>";
	if (fd < 0) {
		tmatch_error_set(err, 0, name, 0, 0, "invalid file descriptor");
		errno = EBADF;
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;
		tmatch_error_set(err, 0, name, 0, 0, "cannot stat: %s", strerror(e));
		errno = e;
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		tmatch_error_set(err, 0, name, 0, 0, "is a directory: give a profile file");
		errno = EISDIR;
		return NULL;
	}
	if (loader_init(&L, name, lim, log, log_arg, err))
		return NULL;
	if (!S_ISREG(st.st_mode) && !L.lim.allow_special) {
		tmatch_error_set(err, 0, name, 0, 0,
		                 "not a regular file (a pipe, device or socket): give a profile "
		                 "file");
		yaml_parser_delete(&L.parser);
		errno = EINVAL;
		return NULL;
	}
	if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > (uintmax_t)L.lim.max_file_size) {
		tmatch_error_set(err, 0, name, 0, 0,
		                 "profile is %jd bytes, larger than the limit of %zu bytes",
		                 (intmax_t)st.st_size, L.lim.max_file_size);
		yaml_parser_delete(&L.parser);
		errno = EFBIG;
		return NULL;
	}
	if (S_ISREG(st.st_mode)) {
		tmatch_profile_t *p = NULL;
		int compiled = load_if_compiled(fd, &st, name, &L.lim, &p, err);

		if (compiled) {
			yaml_parser_delete(&L.parser);
			return p;
		}
	}
	L.fd = fd;
	yaml_parser_set_input(&L.parser, read_handler, &L);
	return load_common(&L, err);
}

/* A profile path opened without waiting on a FIFO, then for blocking
   reads (pipes, when allowed, wait for data). -1 with err set. */
static int open_profile(const char *path, tmatch_error_t *err)
{
	int fd, e, fl;

	if (!path || !*path) {
		tmatch_error_set(err, 0, "", 0, 0, "no profile path given");
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		tmatch_error_set(err, 0, path, 0, 0, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

tmatch_profile_t *tmatch_profile_load(const char *path, const tmatch_profile_limits_t *lim,
                                      tmatch_log_fn log, void *log_arg, tmatch_error_t *err)
{
	tmatch_profile_t *p;
	int fd = open_profile(path, err), e;

	if (fd < 0)
		return NULL;
	p = tmatch_profile_load_fd(fd, path, lim, log, log_arg, err);
	e = errno;
	close(fd);
	errno = e;
	return p;
}

/*
 * A whole compiled profile in a regular file within the size limit, its
 * matrix read straight from the mapped file when it can be
 * (tmatch__profile_compiled_matrix): 1 with *out set (or NULL and err),
 * 0 when the profile must be loaded whole.
 */
static int matrix_if_compiled(int fd, const char *path, const tmatch_profile_limits_t *lim,
                              int metric, unsigned sets, tmatch_comm_t **out, tmatch_error_t *err)
{
	tmatch_profile_limits_t dflt;
	struct stat st;
	char head[8];
	size_t len;
	void *map;
	int direct = 0;

	if (!lim) {
		tmatch_profile_limits_init(&dflt);
		lim = &dflt;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 8 ||
	    (uintmax_t)st.st_size > (uintmax_t)lim->max_file_size ||
	    pread(fd, head, sizeof(head), 0) != sizeof(head) ||
	    !tmatch_profile_is_compiled(head, sizeof(head)))
		return 0;
	len = (size_t)st.st_size;
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 0; /* the whole load says why */
	*out = tmatch__profile_compiled_matrix(map, len, 1, path, lim, metric, sets, &direct, err);
	{
		int e = errno;
		munmap(map, len);
		errno = e;
	}
	return direct;
}

tmatch_comm_t *tmatch_profile_load_comm(const char *path, const tmatch_profile_limits_t *lim,
                                        int metric, unsigned sets, tmatch_log_fn log, void *log_arg,
                                        tmatch_error_t *err)
{
	tmatch_profile_t *p;
	tmatch_comm_t *comm = NULL;
	int fd = open_profile(path, err), e;

	if (fd < 0)
		return NULL;
	if (matrix_if_compiled(fd, path, lim, metric, sets, &comm, err)) {
		e = errno;
		close(fd);
		errno = e;
		return comm;
	}
	p = tmatch_profile_load_fd(fd, path, lim, log, log_arg, err);
	e = errno;
	close(fd);
	errno = e;
	if (!p)
		return NULL;
	if (metric < 0)
		metric = (int)tmatch_profile_placement_metric(p);
	comm = tmatch_profile_to_comm(p, (tmatch_profile_metric_t)metric, sets, err);
	if (!comm && err && !err->file[0])
		snprintf(err->file, sizeof(err->file), "%s", path);
	e = errno;
	tmatch_profile_destroy(p);
	errno = e;
	return comm;
}
