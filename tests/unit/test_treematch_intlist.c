/* SPDX-License-Identifier: BSD-3-Clause */
/* tmatch__list_item: the one reader of an item of the integer lists
   (CPU lists, --ranks, --allowed), and where it blames a bad one. */
#include <criterion/criterion.h>
#include <limits.h>

#include "treematch/internal.h"

static const struct {
	const char *s;
	long max;
	int why;
	long first, last;
	int end; /* offset of *end */
} cases[] = {
    {"7", 10, 0, 7, 7, 1},
    {"0-3,8", 10, 0, 0, 3, 3},
    {"007-010 x", 10, 0, 7, 10, 7},
    {"3-3", 3, 0, 3, 3, 3},
    {"", 10, TMATCH__LIST_NO_NUMBER, 0, 0, 0},
    {",1", 10, TMATCH__LIST_NO_NUMBER, 0, 0, 0},
    {"-1", 10, TMATCH__LIST_NO_NUMBER, 0, 0, 0},
    {" 1", 10, TMATCH__LIST_NO_NUMBER, 0, 0, 0},
    {"4-", 10, TMATCH__LIST_NO_END, 0, 0, 2},
    {"4--5", 10, TMATCH__LIST_NO_END, 0, 0, 2},
    {"11", 10, TMATCH__LIST_TOO_BIG, 0, 0, 1},
    {"2-123", 20, TMATCH__LIST_TOO_BIG, 0, 0, 4},
    {"0", -1, TMATCH__LIST_TOO_BIG, 0, 0, 0},
    {"99999999999999999999999", INT_MAX, TMATCH__LIST_TOO_BIG, 0, 0, 9},
    {"2147483647", INT_MAX, 0, INT_MAX, INT_MAX, 10},
    {"5-2,", 10, TMATCH__LIST_BACKWARDS, 5, 2, 3},
};

Test(intlist, items_and_where_a_bad_one_is_blamed)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long a = -7, b = -7;
		const char *end = NULL;
		int why = tmatch__list_item(cases[i].s, cases[i].max, &a, &b, &end);

		cr_assert_eq(why, cases[i].why, "'%s': code %d, wanted %d", cases[i].s, why,
		             cases[i].why);
		cr_assert_eq(end - cases[i].s, cases[i].end, "'%s': end at %td, wanted %d",
		             cases[i].s, end - cases[i].s, cases[i].end);
		if (why == 0 || why == TMATCH__LIST_BACKWARDS)
			cr_assert(a == cases[i].first && b == cases[i].last,
			          "'%s': [%ld, %ld], wanted [%ld, %ld]", cases[i].s, a, b,
			          cases[i].first, cases[i].last);
		else
			cr_assert(a == -7 && b == -7, "'%s': outputs written on failure",
			          cases[i].s);
	}
}
