/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpuset_text.h - CPU sets (hwloc bitmaps) as text in the tests, through the
 * library's own printers: every string is kept until 32 more are made, so
 * several can be compared in one assertion.
 */
#ifndef TMATCH_TESTS_CPUSET_TEXT_H
#define TMATCH_TESTS_CPUSET_TEXT_H

#include "affinity/affinity.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static inline const char *kept_text(char *s)
{
	static char *ring[32];
	static int next;

	cr_assert_not_null(s, "out of memory");
	free(ring[next]);
	ring[next] = s;
	next = (next + 1) % 32;
	return s;
}

/* "0-1,4" and "0x13" of a set; NULL for a NULL set (a padding leaf). */
static inline const char *list_of(hwloc_const_bitmap_t set)
{
	return set ? kept_text(tmatch_affinity_cpuset_list(set)) : NULL;
}

static inline const char *mask_of(hwloc_const_bitmap_t set)
{
	return set ? kept_text(tmatch_affinity_cpuset_mask(set)) : NULL;
}

/* A set from a list, read by the library's reader (kept like the strings). */
static inline hwloc_bitmap_t set_of(const char *list)
{
	static hwloc_bitmap_t ring[32];
	static int next;
	tmatch_error_t err;

	if (!ring[next])
		ring[next] = hwloc_bitmap_alloc();
	cr_assert_not_null(ring[next]);
	cr_assert_eq(tmatch_affinity_cpuset_parse(list, NULL, ring[next], &err), 0, "%s: %s", list,
	             err.msg);
	next = (next + 1) % 32;
	return ring[(next + 31) % 32];
}

/* The binding of a process as a list and a mask (NULL on failure, errno set). */
static inline const char *binding_of(pid_t pid, int mask)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	const char *s = NULL;

	cr_assert_not_null(set);
	if (tmatch_affinity_get_cpuset(pid, set, NULL) == 0)
		s = mask ? mask_of(set) : list_of(set);
	hwloc_bitmap_free(set);
	return s;
}

#endif /* TMATCH_TESTS_CPUSET_TEXT_H */
