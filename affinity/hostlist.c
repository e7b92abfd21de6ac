/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostlist.c - Slurm hostlists, "n[1-4,7],login[01-02]": the one reader, for
 * topology.conf, the step's node list and `treematch layout --nodes`.
 */
#include "affinity/affinity_private.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hostlists larger than this are refused (a typo like n[1-999999999]). */
#define MAX_HOSTS 1000000

/* ------------------------------------------------------------------------ */
/* Hostlists                                                                 */

struct names {
	char **v;
	int n, cap;
};

static int names_push(struct names *a, char *s)
{
	if (a->n + 1 >= a->cap) {
		int cap = a->cap ? 2 * a->cap : 16;
		char **v = realloc(a->v, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
	return 0;
}

void tmatch_affinity_hostlist_free(char **names)
{
	char **p;
	if (!names)
		return;
	for (p = names; *p; p++)
		free(*p);
	free(names);
}

/*
 * Expand item s[0..len) (no top-level commas): text and [ranges] pieces,
 * cartesian product in order. `base` is the item's column offset.
 */
/* Parse a number of up to 9 digits at s[*i]; -1 if none or too long. */
static long parse_index(const char *s, size_t len, size_t *i)
{
	long v = 0;
	size_t st = *i;
	while (*i < len && isdigit((unsigned char)s[*i])) {
		v = v * 10 + (s[*i] - '0');
		if (v > 999999999)
			return -1;
		(*i)++;
	}
	return *i == st ? -1 : v;
}

/* Append prefix + every name of `tail` (or prefix alone when tail is NULL). */
static int push_joined(struct names *out, const char *prefix, const struct names *tail)
{
	int t;
	if (!tail) {
		char *name = strdup(prefix);
		if (!name || names_push(out, name) < 0) {
			free(name);
			return -1;
		}
		return 0;
	}
	for (t = 0; t < tail->n; t++) {
		size_t l = strlen(prefix) + strlen(tail->v[t]) + 1;
		char *name = malloc(l);
		if (!name || names_push(out, name) < 0) {
			free(name);
			return -1;
		}
		snprintf(name, l, "%s%s", prefix, tail->v[t]);
	}
	return 0;
}

/*
 * Expand item s[0..len) (no top-level commas): text and [ranges] pieces,
 * cartesian product in order. `base` is the item's column offset.
 * Returns 0, -1 (syntax, *col set) or -2 (out of memory).
 */
static int expand_item(const char *s, size_t len, int base, struct names *out, int *col)
{
	size_t i, j, pre;
	const char *lb = memchr(s, '[', len), *rb;
	struct names tail = {NULL, 0, 0};
	int rc = -1, have_tail;

	for (i = 0; i < len && s[i] != '['; i++) {
		if (s[i] == ']' || isspace((unsigned char)s[i]) || s[i] == '=') {
			*col = base + (int)i + 1;
			return -1;
		}
	}
	if (!lb) {
		if (len == 0) {
			*col = base + 1;
			return -1;
		}
		{
			char *name = strndup(s, len);
			if (!name || names_push(out, name) < 0) {
				free(name);
				return -2;
			}
		}
		return 0;
	}
	pre = (size_t)(lb - s);
	rb = memchr(lb, ']', len - pre);
	if (!rb) {
		/* point at the first character that cannot be in a range */
		for (i = pre + 1;
		     i < len && (isdigit((unsigned char)s[i]) || s[i] == '-' || s[i] == ','); i++)
			;
		*col = base + (int)i + 1;
		return -1;
	}
	j = (size_t)(rb - s) + 1; /* after ']' */
	have_tail = j < len;
	if (have_tail) {
		rc = expand_item(s + j, len - j, base + (int)j, &tail, col);
		if (rc < 0)
			goto out;
		rc = -1;
	}
	i = pre + 1;
	for (;;) {
		size_t st = i, st2;
		long lo, hi, v;
		int width;
		lo = parse_index(s, len, &i);
		if (lo < 0) {
			*col = base + (int)i + 1;
			goto out;
		}
		width = (int)(i - st);
		hi = lo;
		if (s[i] == '-') {
			st2 = ++i;
			hi = parse_index(s, len, &i);
			if (hi < 0 || hi < lo) {
				*col = base + (int)(hi < 0 ? i : st2) + 1;
				goto out;
			}
		}
		if (s + i != rb && s[i] != ',') {
			*col = base + (int)i + 1;
			goto out;
		}
		if ((hi - lo + 1) * (have_tail ? tail.n : 1) + out->n > MAX_HOSTS) {
			*col = base + (int)pre + 1;
			goto out;
		}
		for (v = lo; v <= hi; v++) {
			char prefix[512];
			int plen =
			    snprintf(prefix, sizeof(prefix), "%.*s%0*ld", (int)pre, s, width, v);
			if (plen < 0 || (size_t)plen >= sizeof(prefix)) {
				*col = base + 1;
				goto out;
			}
			if (push_joined(out, prefix, have_tail ? &tail : NULL) < 0) {
				rc = -2;
				goto out;
			}
		}
		if (s + i == rb)
			break;
		i++; /* ',' */
	}
	rc = 0;
out:
	tmatch_affinity_hostlist_free(tail.v);
	return rc;
}

/* -1 syntax error (col set), -2 out of memory. */
static int expand_list(const char *s, size_t len, int base, struct names *out, int *col)
{
	size_t i = 0, start = 0;
	int depth = 0;
	if (len == 0) {
		*col = base + 1;
		return -1;
	}
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] == '[')
			depth++;
		else if (i < len && s[i] == ']')
			depth--;
		if (i == len || (s[i] == ',' && depth == 0)) {
			int rc = expand_item(s + start, i - start, base + (int)start, out, col);
			if (rc < 0)
				return rc;
			start = i + 1;
		}
	}
	if (depth != 0) {
		*col = base + (int)len;
		return -1;
	}
	return 0;
}

char **tmatch_affinity_hostlist_expand(const char *hostlist, int *count, tmatch_error_t *err)
{
	struct names out = {NULL, 0, 0};
	int col = 0, rc;
	if (!hostlist) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no hostlist");
		return NULL;
	}
	rc = expand_list(hostlist, strlen(hostlist), 0, &out, &col);
	if (rc < 0) {
		tmatch_affinity_hostlist_free(out.v);
		if (rc == -2)
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		else
			tmatch_error_set(err, EINVAL, NULL, 0, col,
			                 "malformed hostlist at column %d: write it like "
			                 "\"n[1-4,7],login01\"",
			                 col);
		return NULL;
	}
	if (count)
		*count = out.n;
	return out.v;
}

long tmatch_affinity_hostlist_count(const char *hostlist, long max, tmatch_error_t *err)
{
	long total = 0, item = 1, range = 0;
	size_t i, len;
	int in_br = 0;

	if (!hostlist || !*hostlist || max < 1) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no hostlist");
		return -1;
	}
	len = strlen(hostlist);
	/* One pass, no names made: an item's count is the product of its
	   bracket groups' sizes, a group's size the sum of its ranges'. Any
	   partial result above max stops it. */
	for (i = 0; i <= len; i++) {
		char c = i < len ? hostlist[i] : ',';

		if (in_br) {
			long lo, hi;

			lo = parse_index(hostlist, len, &i);
			hi = lo;
			if (lo >= 0 && i < len && hostlist[i] == '-') {
				i++;
				hi = parse_index(hostlist, len, &i);
			}
			if (lo < 0 || hi < lo || i >= len ||
			    (hostlist[i] != ',' && hostlist[i] != ']'))
				goto bad_at_i;
			range += hi - lo + 1;
			if (range > max)
				goto too_many;
			if (hostlist[i] == ']') {
				in_br = 0;
				if (item > max / range)
					goto too_many;
				item *= range;
			}
			continue;
		}
		if (c == '[') {
			in_br = 1;
			range = 0;
		} else if (c == ']') {
			goto bad_at_i;
		} else if (c == ',') {
			if (i == 0 || hostlist[i - 1] == ',')
				goto bad_at_i;
			total += item;
			if (total > max)
				goto too_many;
			item = 1;
		}
	}
	if (in_br)
		goto bad_at_i;
	return total;
bad_at_i:
	tmatch_error_set(err, EINVAL, NULL, 0, (int)i + 1,
	                 "malformed hostlist at column %d: write it like \"n[1-4,7],login01\"",
	                 (int)i + 1);
	return -1;
too_many:
	tmatch_error_set(err, E2BIG, NULL, 0, 0, "hostlist names more than %ld hosts", max);
	return -1;
}

/* ------------------------------------------------------------------------ */
/* topology.conf                                                             */
