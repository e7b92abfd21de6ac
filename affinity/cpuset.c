/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpuset.c - errors, kind names, and CPU sets written the way Slurm writes
 * them: lists "0-3,8" and masks "0x10f".
 */
#include "affinity/affinity_private.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[TMATCH__K_COUNT] = {
    [TMATCH__K_VIRTUAL] = "virtual", [TMATCH__K_CLUSTER] = "cluster", [TMATCH__K_SWITCH] = "switch",
    [TMATCH__K_NODE] = "node",       [TMATCH__K_PACKAGE] = "package", [TMATCH__K_DIE] = "die",
    [TMATCH__K_NUMA] = "numa",       [TMATCH__K_GROUP] = "group",     [TMATCH__K_L3] = "l3",
    [TMATCH__K_L2] = "l2",           [TMATCH__K_CORE] = "core",       [TMATCH__K_PU] = "pu",
    [TMATCH__K_SLOT] = "slot",
};

const char *tmatch__kind_name(int kind)
{
	if (kind < 0 || kind >= TMATCH__K_COUNT)
		return "?";
	return kind_names[kind];
}

/* Largest CPU number we accept in a list (hwloc handles more, Slurm too, but
   a typo like "0-99999999" should not allocate gigabytes). */
#define MAX_CPU 1048575

static int parse_num(const char *s, size_t *i, long *out)
{
	long v = 0;
	size_t start = *i;
	while (s[*i] >= '0' && s[*i] <= '9') {
		v = v * 10 + (s[*i] - '0');
		if (v > MAX_CPU)
			return -1;
		(*i)++;
	}
	if (*i == start)
		return -1;
	*out = v;
	return 0;
}

int tmatch__cpulist_parse(const char *s, hwloc_bitmap_t set, int *col)
{
	size_t i = 0;
	hwloc_bitmap_zero(set);
	if (!s)
		goto bad;
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	if (!s[i])
		goto bad;
	for (;;) {
		long a, b;
		if (parse_num(s, &i, &a) < 0)
			goto bad;
		b = a;
		if (s[i] == '-') {
			i++;
			if (parse_num(s, &i, &b) < 0 || b < a)
				goto bad;
		}
		if (hwloc_bitmap_set_range(set, (unsigned)a, (int)b) < 0)
			goto bad;
		if (s[i] == ',') {
			i++;
			continue;
		}
		while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')
			i++;
		if (s[i])
			goto bad;
		return 0;
	}
bad:
	if (col)
		*col = (int)i + 1;
	errno = EINVAL;
	return -1;
}

/* Append with snprintf semantics: *pos counts the full length. */
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(*pos < len ? buf + *pos : NULL, *pos < len ? len - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

int tmatch__cpulist_format(hwloc_const_bitmap_t set, char *buf, size_t len)
{
	size_t pos = 0;
	int first = 1;
	int i = hwloc_bitmap_first(set);
	if (buf && len)
		buf[0] = '\0';
	if (!buf)
		len = 0;
	while (i >= 0) {
		int j = i;
		while (hwloc_bitmap_isset(set, (unsigned)j + 1))
			j++;
		if (j > i)
			put(buf, len, &pos, "%s%d-%d", first ? "" : ",", i, j);
		else
			put(buf, len, &pos, "%s%d", first ? "" : ",", i);
		first = 0;
		i = hwloc_bitmap_next(set, j);
	}
	return pos > INT_MAX ? INT_MAX : (int)pos;
}

int tmatch__cpumask_format(hwloc_const_bitmap_t set, char *buf, size_t len)
{
	size_t pos = 0;
	int last = hwloc_bitmap_last(set);
	int nib;
	if (buf && len)
		buf[0] = '\0';
	if (!buf)
		len = 0;
	put(buf, len, &pos, "0x");
	if (last < 0) {
		put(buf, len, &pos, "0");
		return (int)pos;
	}
	for (nib = last / 4; nib >= 0; nib--) {
		unsigned v = 0, b;
		for (b = 0; b < 4; b++)
			if (hwloc_bitmap_isset(set, (unsigned)nib * 4 + b))
				v |= 1u << b;
		put(buf, len, &pos, "%x", v);
	}
	return pos > INT_MAX ? INT_MAX : (int)pos;
}

int tmatch_affinity_cpulist_to_mask(const char *cpulist, char *buf, size_t len, tmatch_error_t *err)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int col = 0, rc = -1;
	if (!set)
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	if (!buf && len) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "NULL buffer with a non-zero length");
		goto out;
	}
	if (tmatch__cpulist_parse(cpulist, set, &col) < 0) {
		tmatch_error_set(err, EINVAL, NULL, 0, col,
		                 "malformed CPU list at column %d: write it like \"0-3,8\"", col);
		goto out;
	}
	rc = tmatch__cpumask_format(set, buf, len);
out:
	hwloc_bitmap_free(set);
	return rc;
}
