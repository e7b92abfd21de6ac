/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * intlist.c - an item of the project's ordered integer lists ("0-3,8"):
 * CPU and core lists (affinity/cpuset.c), `treematch map --ranks` and
 * `--allowed` (cli/cmd_map.c). Each format keeps its own separators; the
 * numbers and ranges are read here only.
 */
#include "treematch/internal.h"

/* The decimal number at s, at most max: *end past it; -1 with *end at the
   first character that is not a digit (none read) or that makes it exceed. */
static int number(const char *s, long max, long *out, const char **end)
{
	unsigned long long v = 0;
	const char *p = s;

	if (max < 0) { /* nothing is small enough */
		*end = s;
		return -1;
	}
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned long long)(*p - '0');
		if (v > (unsigned long long)max) {
			*end = p;
			return -1;
		}
		p++;
	}
	*end = p;
	if (p == s)
		return -1;
	*out = (long)v;
	return 0;
}

int tmatch__list_item(const char *s, long max, long *first, long *last, const char **end)
{
	long a, b;

	if (!(*s >= '0' && *s <= '9')) {
		*end = s;
		return TMATCH__LIST_NO_NUMBER;
	}
	if (number(s, max, &a, end) < 0)
		return TMATCH__LIST_TOO_BIG;
	b = a;
	if (**end == '-') {
		const char *q = *end + 1;

		if (!(*q >= '0' && *q <= '9')) {
			*end = q;
			return TMATCH__LIST_NO_END;
		}
		if (number(q, max, &b, end) < 0)
			return TMATCH__LIST_TOO_BIG;
	}
	*first = a;
	*last = b;
	return b < a ? TMATCH__LIST_BACKWARDS : 0;
}
