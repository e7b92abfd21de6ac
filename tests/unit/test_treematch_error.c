/* SPDX-License-Identifier: BSD-3-Clause */
/* test_treematch_error.c - error formatting, logging and the PRNG. */
#include "treematch/treematch_private.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(error, format_leaves_out_what_does_not_apply)
{
	tmatch_error_t e;
	char buf[800];

	tmatch_error_clear(&e);
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "");
	tmatch__error_set(&e, "f.mtx", 3, 7, "bad %s", "thing");
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "f.mtx:3:7: bad thing");
	tmatch__error_set(&e, "f.mtx", 3, 0, "x");
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "f.mtx:3: x");
	tmatch__error_set(&e, "f.mtx", 0, 0, "x");
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "f.mtx: x");
	tmatch__error_set(&e, NULL, 0, 0, "just %d", 5);
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "just 5");
	tmatch__error_set(&e, NULL, 1, 4, "tok");
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "column 4: tok");
	cr_assert_str_eq(tmatch_error_format(NULL, buf, sizeof(buf)), "");
	tmatch__error_set(NULL, "x", 1, 1, "ignored"); /* no crash */
	tmatch_error_clear(NULL);
	/* truncation is safe */
	tmatch__error_set(&e, "f.mtx", 3, 7, "long message");
	cr_assert_str_eq(tmatch_error_format(&e, buf, 6), "f.mtx");
}

static void logger(void *arg, int level, const char *msg)
{
	char *out = arg;
	snprintf(out, 64, "%d:%s", level, msg);
}

Test(error, log_goes_through_the_callback)
{
	tmatch_map_opts_t o;
	char got[64] = "";
	tmatch_map_opts_init(&o);
	tmatch__log(&o, TMATCH_LOG_INFO, "silent %d", 1); /* no callback: nothing */
	o.log = logger;
	o.log_arg = got;
	tmatch__log(&o, TMATCH_LOG_WARNING, "hello %d", 42);
	cr_assert_str_eq(got, "1:hello 42");
	tmatch__log(NULL, 0, "x");
}

Test(rng, seeded_sequences_repeat_and_differ)
{
	tmatch__rng_t a, b, c;
	int differ = 0;
	tmatch__rng_seed(&a, 42);
	tmatch__rng_seed(&b, 42);
	tmatch__rng_seed(&c, 43);
	for (int i = 0; i < 100; i++) {
		uint64_t x = tmatch__rng_next(&a);
		cr_assert_eq(x, tmatch__rng_next(&b));
		differ += x != tmatch__rng_next(&c);
	}
	cr_assert_gt(differ, 95);
}

Test(rng, below_is_in_range_and_covers_it)
{
	tmatch__rng_t r;
	int seen[7] = {0};
	tmatch__rng_seed(&r, 1);
	cr_assert_eq(tmatch__rng_below(&r, 1), 0);
	for (int i = 0; i < 7000; i++) {
		uint64_t x = tmatch__rng_below(&r, 7);
		cr_assert_lt(x, 7);
		seen[x]++;
	}
	for (int v = 0; v < 7; v++)
		cr_assert(seen[v] > 800 && seen[v] < 1200, "value %d seen %d times", v, seen[v]);
	for (int i = 0; i < 1000; i++)
		cr_assert_lt(tmatch__rng_below(&r, UINT64_MAX - 5), UINT64_MAX - 5);
}
