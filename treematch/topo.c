/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo.c - balanced machine trees: creation, the tleaf text form, the
 * allowed-leaf set and distances.
 *
 * In the tleaf form "tleaf h a0 c0 ... a(h-1) c(h-1)", c_l is the cost of
 * one unit of traffic going through the links between depth l and depth
 * l + 1; the cost of a pair whose common ancestor is at depth l is then
 * cost[l] = c_l + c_(l+1) + ... + c_(h-1). With every c_l = 1 this is the
 * number of levels climbed, the default of tmatch_topo_create().
 */
#include "treematch/treematch_private.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(tmatch_error_t *err, int column, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(tmatch_error_t *err, int column, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tmatch_error_vset(err, 0, NULL, column > 0 ? 1 : 0, column, fmt, ap);
	va_end(ap);
	errno = errnum;
	return -1;
}

tmatch_topo_t *tmatch_topo_create(int depth, const int *arity, const double *cost,
                                  tmatch_error_t *err)
{
	tmatch_topo_t *t;
	long long leaves = 1;

	if (depth < 0 || depth > TMATCH_MAX_DEPTH) {
		fail(err, 0, EINVAL, "tree depth %d is out of range: use 0..%d", depth,
		     TMATCH_MAX_DEPTH);
		return NULL;
	}
	if (depth > 0 && !arity) {
		fail(err, 0, EINVAL, "tmatch_topo_create: arity is NULL");
		return NULL;
	}
	for (int l = 0; l < depth; l++) {
		if (arity[l] < 1) {
			fail(err, 0, EINVAL, "arity %d at level %d: every arity must be >= 1",
			     arity[l], l);
			return NULL;
		}
		leaves *= arity[l];
		if (leaves > INT_MAX) {
			fail(
			    err, 0, EINVAL,
			    "the tree has more than %d leaves: use fewer levels or smaller arities",
			    INT_MAX);
			return NULL;
		}
		if (cost && (!isfinite(cost[l]) || cost[l] < 0)) {
			fail(err, 0, EINVAL, "cost at level %d must be finite and >= 0", l);
			return NULL;
		}
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		fail(err, 0, ENOMEM, "out of memory");
		return NULL;
	}
	t->depth = depth;
	t->span[depth] = 1;
	for (int l = depth - 1; l >= 0; l--) {
		t->arity[l] = arity[l];
		t->span[l] = t->span[l + 1] * arity[l];
		t->cost[l] = cost ? cost[l] : (double)(depth - l);
	}
	t->nb_leaves = t->span[0];
	t->nb_allowed = t->nb_leaves;
	return t;
}

/* One token of a tleaf string: [start, end) and its 1-based column. */
static const char *next_token(const char *p, const char **end)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	if (!*p)
		return NULL;
	*end = p;
	while (**end && !isspace((unsigned char)**end))
		(*end)++;
	return p;
}

/* The token [s, e) as a string in buf of `size` bytes; -1 if empty or too long. */
static int token_copy(const char *s, const char *e, char *buf, size_t size)
{
	size_t len = (size_t)(e - s);

	if (len == 0 || len >= size)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 0;
}

static int parse_int_token(const char *s, const char *e, long *out)
{
	char buf[32], *stop;

	if (token_copy(s, e, buf, sizeof(buf)) || !isdigit((unsigned char)buf[0]))
		return -1;
	errno = 0;
	*out = strtol(buf, &stop, 10);
	if (errno || *stop)
		return -1;
	return 0;
}

static int parse_double_token(const char *s, const char *e, double *out)
{
	char buf[64], *stop;

	if (token_copy(s, e, buf, sizeof(buf)) ||
	    (!isdigit((unsigned char)buf[0]) && buf[0] != '.' && buf[0] != '+'))
		return -1;
	errno = 0;
	*out = strtod(buf, &stop);
	if (errno || *stop || !isfinite(*out) || *out < 0)
		return -1;
	return 0;
}

tmatch_topo_t *tmatch_topo_from_tleaf(const char *spec, tmatch_error_t *err)
{
	const char *p, *tok, *end = NULL;
	int arity[TMATCH_MAX_DEPTH];
	double cost[TMATCH_MAX_DEPTH], acc = 0;
	long depth, v;
	long long leaves = 1;
	tmatch_topo_t *t;

	if (!spec) {
		fail(err, 0, EINVAL, "tmatch_topo_from_tleaf: spec is NULL");
		return NULL;
	}
	p = spec;
	tok = next_token(p, &end);
	if (tok && (size_t)(end - tok) == 5 && !strncmp(tok, "tleaf", 5)) {
		p = end;
		tok = next_token(p, &end);
	}
	if (!tok) {
		fail(err, (int)(p - spec) + 1, EINVAL,
		     "missing depth: write \"tleaf DEPTH ARITY0 COST0 ...\", e.g. \"tleaf 2 4 1 8 "
		     "1\"");
		return NULL;
	}
	if (parse_int_token(tok, end, &depth) || depth < 1 || depth > TMATCH_MAX_DEPTH) {
		fail(err, (int)(tok - spec) + 1, EINVAL,
		     "bad depth: expected an integer in 1..%d (the number of levels)",
		     TMATCH_MAX_DEPTH);
		return NULL;
	}
	p = end;
	for (long l = 0; l < depth; l++) {
		tok = next_token(p, &end);
		if (!tok) {
			fail(err, (int)strlen(spec) + 1, EINVAL,
			     "missing arity of level %ld: depth %ld needs %ld arity/cost pairs", l,
			     depth, depth);
			return NULL;
		}
		if (parse_int_token(tok, end, &v) || v < 1) {
			/* the digits alone: strtol says too big as it says not a number */
			int digits = (int)strspn(tok, "0123456789");

			fail(err, (int)(tok - spec) + 1, EINVAL,
			     digits > 0 && digits == (int)(end - tok) && tok[0] != '0'
			         ? "bad arity of level %ld: at most %lld leaves in all"
			         : "bad arity of level %ld: expected a positive integer",
			     l, TMATCH_TOPO_MAX_LEAVES);
			return NULL;
		}
		if (v > INT_MAX) {
			fail(err, (int)(tok - spec) + 1, EINVAL,
			     "bad arity of level %ld: at most %lld leaves in all", l,
			     TMATCH_TOPO_MAX_LEAVES);
			return NULL;
		}
		arity[l] = (int)v;
		leaves *= v;
		if (leaves > TMATCH_TOPO_MAX_LEAVES) {
			fail(err, (int)(tok - spec) + 1, EINVAL,
			     "the tree has more than %lld leaves at level %ld: use smaller arities",
			     TMATCH_TOPO_MAX_LEAVES, l);
			return NULL;
		}
		p = end;
		tok = next_token(p, &end);
		if (!tok) {
			fail(err, (int)strlen(spec) + 1, EINVAL,
			     "missing cost of level %ld: depth %ld needs %ld arity/cost pairs", l,
			     depth, depth);
			return NULL;
		}
		if (parse_double_token(tok, end, &cost[l])) {
			fail(err, (int)(tok - spec) + 1, EINVAL,
			     "bad cost of level %ld: expected a finite number >= 0", l);
			return NULL;
		}
		p = end;
	}
	tok = next_token(p, &end);
	if (tok) {
		fail(err, (int)(tok - spec) + 1, EINVAL,
		     "unexpected text after %ld arity/cost pairs: remove it or raise the depth",
		     depth);
		return NULL;
	}
	/* Per-level link costs -> cost of a pair by the depth of its common ancestor. */
	for (long l = depth - 1; l >= 0; l--) {
		acc += cost[l];
		cost[l] = acc;
	}
	t = tmatch_topo_create((int)depth, arity, cost, err);
	return t;
}

tmatch_topo_t *tmatch_topo_dup(const tmatch_topo_t *topo, tmatch_error_t *err)
{
	tmatch_topo_t *t;

	if (!topo) {
		fail(err, 0, EINVAL, "tmatch_topo_dup: topo is NULL");
		return NULL;
	}
	t = malloc(sizeof(*t));
	if (!t) {
		fail(err, 0, ENOMEM, "out of memory");
		return NULL;
	}
	*t = *topo;
	if (topo->allowed) {
		t->allowed = malloc((size_t)topo->nb_leaves);
		if (!t->allowed) {
			free(t);
			fail(err, 0, ENOMEM, "out of memory");
			return NULL;
		}
		memcpy(t->allowed, topo->allowed, (size_t)topo->nb_leaves);
	}
	return t;
}

void tmatch_topo_destroy(tmatch_topo_t *topo)
{
	if (!topo)
		return;
	free(topo->allowed);
	free(topo);
}

int tmatch_topo_depth(const tmatch_topo_t *topo)
{
	if (!topo) {
		errno = EINVAL;
		return -1;
	}
	return topo->depth;
}

int tmatch_topo_arity(const tmatch_topo_t *topo, int level)
{
	if (!topo || level < 0 || level >= topo->depth) {
		errno = EINVAL;
		return -1;
	}
	return topo->arity[level];
}

double tmatch_topo_cost(const tmatch_topo_t *topo, int level)
{
	if (!topo || level < 0 || level > topo->depth) {
		errno = EINVAL;
		return -1;
	}
	return level == topo->depth ? 0 : topo->cost[level];
}

int tmatch_topo_nb_leaves(const tmatch_topo_t *topo)
{
	if (!topo) {
		errno = EINVAL;
		return -1;
	}
	return topo->nb_leaves;
}

int tmatch_topo_set_allowed(tmatch_topo_t *topo, const int *leaves, int count, tmatch_error_t *err)
{
	unsigned char *flags;

	if (!topo)
		return fail(err, 0, EINVAL, "tmatch_topo_set_allowed: topo is NULL");
	if (!leaves) {
		free(topo->allowed);
		topo->allowed = NULL;
		topo->nb_allowed = topo->nb_leaves;
		return 0;
	}
	if (count < 0 || count > topo->nb_leaves)
		return fail(err, 0, EINVAL, "allowed leaf count %d is out of range 0..%d", count,
		            topo->nb_leaves);
	flags = calloc((size_t)topo->nb_leaves, 1);
	if (!flags)
		return fail(err, 0, ENOMEM, "out of memory");
	for (int i = 0; i < count; i++) {
		if (leaves[i] < 0 || leaves[i] >= topo->nb_leaves) {
			free(flags);
			return fail(err, 0, EINVAL, "allowed leaf #%d is %d, outside 0..%d", i,
			            leaves[i], topo->nb_leaves - 1);
		}
		if (flags[leaves[i]]) {
			free(flags);
			return fail(err, 0, EINVAL, "allowed leaf #%d (%d) is listed twice", i,
			            leaves[i]);
		}
		flags[leaves[i]] = 1;
	}
	free(topo->allowed);
	topo->allowed = flags;
	topo->nb_allowed = count;
	return 0;
}

int tmatch_topo_is_allowed(const tmatch_topo_t *topo, int leaf)
{
	if (!topo || leaf < 0 || leaf >= topo->nb_leaves) {
		errno = EINVAL;
		return 0;
	}
	return topo->allowed ? topo->allowed[leaf] != 0 : 1;
}

int tmatch_topo_nb_allowed(const tmatch_topo_t *topo)
{
	if (!topo) {
		errno = EINVAL;
		return -1;
	}
	return topo->nb_allowed;
}

int tmatch_topo_set_level_name(tmatch_topo_t *topo, int level, const char *name)
{
	if (!topo || level < 0 || level >= topo->depth || !name ||
	    strlen(name) >= sizeof(topo->level_name[0])) {
		errno = EINVAL;
		return -1;
	}
	snprintf(topo->level_name[level], sizeof(topo->level_name[level]), "%s", name);
	return 0;
}

const char *tmatch_topo_level_name(const tmatch_topo_t *topo, int level)
{
	if (!topo || level < 0 || level >= topo->depth) {
		errno = EINVAL;
		return NULL;
	}
	return topo->level_name[level];
}

int tmatch_topo_lca_depth(const tmatch_topo_t *topo, int leaf_a, int leaf_b)
{
	if (!topo || leaf_a < 0 || leaf_b < 0 || leaf_a >= topo->nb_leaves ||
	    leaf_b >= topo->nb_leaves) {
		errno = EINVAL;
		return -1;
	}
	return topo->depth - tmatch__distance(topo, leaf_a, leaf_b);
}

int tmatch__codes_init(const struct tmatch_topo *t, struct tmatch__codes *k)
{
	int bits = 0;

	memset(k, 0, sizeof(*k));
	for (int l = t->depth - 1; l >= 0; l--) {
		int w = 0;

		while ((1 << w) < t->arity[l])
			w++;
		if (bits + w > 64) /* lvl_of_bit has 64 entries: check before filling it */
			return 1;
		k->shift[l] = bits;
		for (int b = bits; b < bits + w; b++)
			k->lvl_of_bit[b] = (signed char)(t->depth - l);
		bits += w;
	}
	return 0;
}

uint64_t tmatch__leaf_code(const struct tmatch_topo *t, const struct tmatch__codes *k, int leaf)
{
	uint64_t code = 0;

	for (int l = 0; l < t->depth; l++)
		code |= (uint64_t)(leaf / t->span[l + 1] % t->arity[l]) << k->shift[l];
	return code;
}

int tmatch_topo_format(const tmatch_topo_t *topo, char *buf, size_t len)
{
	size_t off = 0;
	int n;

	if (!topo || (!buf && len > 0)) {
		errno = EINVAL;
		return -1;
	}
	if (len > 0)
		buf[0] = '\0';
#define APPEND(...)                                                                                \
	do {                                                                                       \
		n = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0,              \
		             __VA_ARGS__);                                                         \
		if (n < 0)                                                                         \
			return -1;                                                                 \
		off += (size_t)n;                                                                  \
	} while (0)
	APPEND("tleaf %d", topo->depth);
	for (int l = 0; l < topo->depth; l++) {
		double next = l + 1 < topo->depth ? topo->cost[l + 1] : 0;
		APPEND(" %d %.15g", topo->arity[l], topo->cost[l] - next);
	}
#undef APPEND
	return (int)off;
}
