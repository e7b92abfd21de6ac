/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostlist.c - Slurm hostlists, "n[1-4,7],login[01-02]": the one reader, for
 * topology.conf, the step's node list and `treematch layout --nodes`.
 *
 * Slurm's grammar (src/common/hostlist.c, the same from 22.05 to 26.05):
 * items separated by commas, blanks or tabs outside brackets (empty ones
 * skipped), an item is text and [ranges] groups whose product it names,
 * and nothing may follow an item's last ']' ("n[1-2]-ib" is refused by
 * scontrol, and so here).
 */
#include "affinity/affinity_private.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Hostlists                                                                 */

/* The names made so far, and what they may reach: a count and the bytes of
   their characters (a million names of 1,000 characters would be 1 GB). */
struct names {
	char **v;
	int n, cap;
	long max;         /* names */
	size_t bytes;     /* characters made, each name's NUL included */
	size_t max_bytes; /* ... at most */
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

/* A name longer than this is refused (host names are at most 255 bytes);
   it also bounds the number of [ranges] groups in an item. */
#define MAX_NAME 1024

/* One [lo-hi] range of a group, its digits' width kept for zero padding. */
struct range {
	long lo, hi;
	int width;
};

/* An item's pieces: text[k] then group k, ..., then the trailing text. */
struct piece {
	size_t text, text_len; /* the text before the group (or the tail) */
	int first, nranges;    /* its ranges in the range array */
	long size;             /* names the group gives */
};

/*
 * Expand item s[0..len) (no top-level commas): text and [ranges] pieces,
 * cartesian product in order (the first group varies slowest). Iterative:
 * the pieces are read once, then the names are counted by an odometer, so
 * neither deep nesting nor many groups use the stack. `base` is the item's
 * column offset. Returns 0, -1 (syntax, *col set), -2 (out of memory), -3
 * (a name longer than MAX_NAME) or -4 (more than out->max names or
 * out->max_bytes of them).
 */
static int expand_item(const char *s, size_t len, int base, struct names *out, int *col)
{
	struct piece pc[MAX_NAME / 2 + 2];
	struct range *rg = NULL;
	int np = 0, nr = 0, cap = 0, rc = -1, *at = NULL;
	long total = 1, *val = NULL;
	size_t i = 0, text = 0;
	char *name = NULL;

	for (;;) {
		/* text up to '[' or the end */
		for (; i < len && s[i] != '['; i++)
			if (s[i] == ']' || isspace((unsigned char)s[i]) || s[i] == '=') {
				*col = base + (int)i + 1;
				goto out;
			}
		if (np >= (int)(sizeof(pc) / sizeof(pc[0])) - 1) {
			*col = base + 1;
			rc = -3; /* every group adds a character: names too long */
			goto out;
		}
		pc[np].text = text;
		pc[np].text_len = i - text;
		pc[np].first = nr;
		pc[np].nranges = 0;
		pc[np].size = 1;
		if (i == len)
			break;
		/* a group: ranges up to ']' */
		pc[np].size = 0;
		for (i++;;) {
			size_t st = i, st2;
			long lo, hi;
			int width;

			lo = parse_index(s, len, &i);
			if (lo < 0) {
				*col = base + (int)i + 1;
				goto out;
			}
			width = (int)(i - st); /* "01" pads to two digits */
			hi = lo;
			if (i < len && s[i] == '-') {
				st2 = ++i;
				hi = parse_index(s, len, &i);
				if (hi < 0 || hi < lo) {
					*col = base + (int)(hi < 0 ? i : st2) + 1;
					goto out;
				}
			}
			if (i >= len || (s[i] != ',' && s[i] != ']')) {
				*col = base + (int)i + 1;
				goto out;
			}
			if (nr == cap) {
				struct range *r2;
				cap = cap ? 2 * cap : 8;
				r2 = realloc(rg, sizeof(*rg) * (size_t)cap);
				if (!r2) {
					rc = -2;
					goto out;
				}
				rg = r2;
			}
			rg[nr].lo = lo;
			rg[nr].hi = hi;
			rg[nr].width = width;
			nr++;
			pc[np].nranges++;
			pc[np].size += hi - lo + 1;
			if (pc[np].size > out->max) {
				*col = base + (int)pc[np].text + (int)pc[np].text_len + 1;
				rc = -4;
				goto out;
			}
			if (s[i++] == ']')
				break;
		}
		if (total > out->max / pc[np].size) {
			*col = base + (int)pc[np].text + (int)pc[np].text_len + 1;
			rc = -4;
			goto out;
		}
		total *= pc[np].size;
		np++;
		text = i;
	}
	if (len == 0) {
		*col = base + 1;
		goto out;
	}
	if (np > 0 && pc[np].text_len > 0) {
		/* text after the last group: Slurm refuses the item */
		*col = base + (int)pc[np].text + 1;
		rc = -5;
		goto out;
	}
	if (total + out->n > out->max) {
		*col = base + 1;
		rc = -4;
		goto out;
	}
	/* the odometer: at[g] = range of group g, val[g] = its current value */
	at = calloc((size_t)np + 1, sizeof(*at));
	val = calloc((size_t)np + 1, sizeof(*val));
	name = malloc(MAX_NAME + 16);
	if (!at || !val || !name) {
		rc = -2;
		goto out;
	}
	for (int g = 0; g < np; g++)
		val[g] = rg[pc[g].first].lo;
	for (long k = 0; k < total; k++) {
		size_t n = 0;
		char *copy;

		for (int g = 0; g <= np; g++) {
			if (n + pc[g].text_len > MAX_NAME) {
				*col = base + 1;
				rc = -3;
				goto out;
			}
			memcpy(name + n, s + pc[g].text, pc[g].text_len);
			n += pc[g].text_len;
			if (g < np)
				n += (size_t)snprintf(name + n, 16, "%0*ld",
				                      rg[pc[g].first + at[g]].width, val[g]);
			if (n > MAX_NAME) {
				*col = base + 1;
				rc = -3;
				goto out;
			}
		}
		if (n + 1 > out->max_bytes - out->bytes) {
			*col = base + 1;
			rc = -4;
			goto out;
		}
		out->bytes += n + 1;
		copy = strndup(name, n);
		if (!copy || names_push(out, copy) < 0) {
			free(copy);
			rc = -2;
			goto out;
		}
		/* next: the last group turns fastest */
		for (int g = np - 1; g >= 0; g--) {
			const struct range *r = &rg[pc[g].first + at[g]];

			if (val[g] < r->hi) {
				val[g]++;
				break;
			}
			if (at[g] + 1 < pc[g].nranges) {
				at[g]++;
				val[g] = rg[pc[g].first + at[g]].lo;
				break;
			}
			at[g] = 0;
			val[g] = rg[pc[g].first].lo;
		}
	}
	rc = 0;
out:
	free(rg);
	free(at);
	free(val);
	free(name);
	return rc;
}

/* A separator of Slurm's hostlists, outside brackets. */
static int is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t';
}

/* -1 syntax error (col set), -2 out of memory, -3 name too long, -4 too many,
   -5 text after an item's last ']'. */
static int expand_list(const char *s, size_t len, int base, struct names *out, int *col)
{
	size_t i = 0, start = 0;
	int depth = 0;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] == '[')
			depth++;
		else if (i < len && s[i] == ']')
			depth--;
		if (i == len || (is_sep(s[i]) && depth == 0)) {
			/* empty items (",,", blanks) are skipped, as Slurm does */
			int rc = i > start ? expand_item(s + start, i - start, base + (int)start,
			                                 out, col)
			                   : 0;
			if (rc < 0)
				return rc;
			start = i + 1;
		}
	}
	if (depth != 0) {
		*col = base + (int)len;
		return -1;
	}
	if (out->n == 0) {
		*col = base + 1;
		return -1; /* no name at all */
	}
	return 0;
}

char **tmatch__hostlist_expand_max(const char *hostlist, long max, size_t max_bytes, int *count,
                                   size_t *bytes, tmatch_error_t *err)
{
	struct names out = {NULL, 0, 0, max, 0, max_bytes};
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
		else if (rc == -3)
			tmatch_error_set(err, EINVAL, NULL, 0, col,
			                 "hostlist item at column %d makes names longer than %d "
			                 "characters: host names are at most 255",
			                 col, MAX_NAME);
		else if (rc == -4)
			tmatch_error_set(err, E2BIG, NULL, 0, col,
			                 "hostlist names more than %ld hosts or more than %zu "
			                 "bytes of names (at column %d)",
			                 max, max_bytes, col);
		else if (rc == -5)
			tmatch_error_set(
			    err, EINVAL, NULL, 0, col,
			    "hostlist item goes on after its last ']' at column %d: Slurm "
			    "refuses that (n[1-2]-ib): name the hosts (n1-ib,n2-ib)",
			    col);
		else
			tmatch_error_set(err, EINVAL, NULL, 0, col,
			                 "malformed hostlist at column %d: write it like "
			                 "\"n[1-4,7],login01\"",
			                 col);
		return NULL;
	}
	if (count)
		*count = out.n;
	if (bytes)
		*bytes = out.bytes;
	return out.v;
}

char **tmatch_affinity_hostlist_expand(const char *hostlist, int *count, tmatch_error_t *err)
{
	return tmatch__hostlist_expand_max(hostlist, TMATCH_HOSTLIST_MAX, TMATCH_HOSTLIST_BYTES,
	                                   count, NULL, err);
}

long tmatch_affinity_hostlist_count(const char *hostlist, long max, tmatch_error_t *err)
{
	long total = 0, item = 1, range = 0;
	size_t i, len, tail = 0;
	int in_br = 0, groups = 0, chars = 0;

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
				groups++;
				tail = 0;
			}
			continue;
		}
		if (c == '[') {
			in_br = 1;
			range = 0;
			tail = 0;
		} else if (c == ']') {
			goto bad_at_i;
		} else if (is_sep(c)) {
			if (tail) { /* text after the item's last ']' */
				i = tail - 1;
				goto bad_tail;
			}
			if (chars || groups) { /* empty items are skipped */
				total += item;
				if (total > max)
					goto too_many;
			}
			item = 1;
			groups = chars = 0;
		} else {
			chars = 1;
			if (groups && !tail)
				tail = i + 1;
		}
	}
	if (total == 0) {
		i = 0;
		goto bad_at_i;
	}
	if (in_br)
		goto bad_at_i;
	return total;
bad_at_i:
	tmatch_error_set(err, EINVAL, NULL, 0, (int)i + 1,
	                 "malformed hostlist at column %d: write it like \"n[1-4,7],login01\"",
	                 (int)i + 1);
	return -1;
bad_tail:
	tmatch_error_set(err, EINVAL, NULL, 0, (int)i + 1,
	                 "hostlist item goes on after its last ']' at column %d: Slurm refuses "
	                 "that (n[1-2]-ib): name the hosts (n1-ib,n2-ib)",
	                 (int)i + 1);
	return -1;
too_many:
	tmatch_error_set(err, E2BIG, NULL, 0, 0, "hostlist names more than %ld hosts", max);
	return -1;
}

/* ------------------------------------------------------------------------ */
/* topology.conf                                                             */
