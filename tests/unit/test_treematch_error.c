/* SPDX-License-Identifier: BSD-3-Clause */
/* test_treematch_error.c - error formatting and setting, logging, numbers and the PRNG. */
#include "treematch/treematch_private.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

Test(error, format_leaves_out_what_does_not_apply)
{
	tmatch_error_t e;
	char buf[800];

	tmatch_error_clear(&e);
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "");
	tmatch_error_set(&e, 0, "f.mtx", 3, 7, "bad %s", "thing");
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "f.mtx:3:7: bad thing");
	tmatch_error_set(&e, 0, "f.mtx", 3, 0, "x");
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "f.mtx:3: x");
	tmatch_error_set(&e, 0, "f.mtx", 0, 0, "x");
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "f.mtx: x");
	tmatch_error_set(&e, 0, NULL, 0, 0, "just %d", 5);
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "just 5");
	tmatch_error_set(&e, 0, NULL, 1, 4, "tok");
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "column 4: tok");
	cr_assert_str_eq(tmatch_error_format(NULL, buf, sizeof(buf)), "");
	tmatch_error_set(NULL, 0, "x", 1, 1, "ignored"); /* no crash */
	tmatch_error_clear(NULL);
	/* truncation is safe */
	tmatch_error_set(&e, 0, "f.mtx", 3, 7, "long message");
	cr_assert_str_eq(tmatch_error_format(&e, buf, 6), "f.mtx");
}

Test(error, set_returns_minus_one_and_sets_errno_unless_zero)
{
	tmatch_error_t e;
	char buf[64];

	errno = 0;
	cr_assert_eq(tmatch_error_set(&e, EINVAL, "p.yml", 2, 0, "bad"), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_str_eq(tmatch_error_format(&e, buf, sizeof(buf)), "p.yml:2: bad");
	errno = ENOENT;
	cr_assert_eq(tmatch_error_set(NULL, 0, NULL, 0, 0, "x"), -1);
	cr_assert_eq(errno, ENOENT, "errnum 0 leaves errno alone");
	cr_assert_eq(tmatch_error_set(NULL, ERANGE, NULL, 0, 0, "x"), -1);
	cr_assert_eq(errno, ERANGE, "errno is set even without an error struct");
}

Test(error, parse_u64_takes_digits_only_up_to_max)
{
	uint64_t v = 7;

	cr_assert_eq(tmatch_parse_u64("42", 2, 100, &v), 0);
	cr_assert_eq(v, 42);
	cr_assert_eq(tmatch_parse_u64("18446744073709551615", 20, UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	v = 7;
	cr_assert_eq(tmatch_parse_u64("18446744073709551616", 20, UINT64_MAX, &v), -1);
	cr_assert_eq(tmatch_parse_u64("101", 3, 100, &v), -1);
	cr_assert_eq(tmatch_parse_u64("-1", 2, 100, &v), -1);
	cr_assert_eq(tmatch_parse_u64(" 1", 2, 100, &v), -1);
	cr_assert_eq(tmatch_parse_u64("1x", 2, 100, &v), -1);
	cr_assert_eq(tmatch_parse_u64("", 0, 100, &v), -1);
	cr_assert_eq(tmatch_parse_u64(NULL, 3, 100, &v), -1);
	cr_assert_eq(v, 7, "a failed parse leaves the output alone");
	cr_assert_eq(tmatch_parse_u64("123", 2, 100, &v), 0, "only len bytes are read");
	cr_assert_eq(v, 12);
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
	got[0] = '\0';
	tmatch_log_printf(logger, got, TMATCH_LOG_DEBUG, "%s-%d", "direct", 3);
	cr_assert_str_eq(got, "3:direct-3");
	tmatch_log_printf(NULL, got, TMATCH_LOG_DEBUG, "ignored"); /* no callback, no crash */
}

Test(error, closest_name_finds_slips_only)
{
	static const char *const keys[] = {
	    "format",     "version", "ranks",      "metrics", "directed",  "placement_metric",
	    "provenance", "edges",   "coll_edges", "matrix",  "max_ranks", "max_file_size"};
	static const struct {
		const char *word;
		int want; /* index in keys, -1 none */
	} cases[] = {
	    {"placement_metrc", 5}, /* a letter dropped */
	    {"directd", 4},
	    {"metric", 3},   /* the name without its last letter */
	    {"metricss", 3}, /* one letter too many */
	    {"ranks", -1},   /* the name itself is not a slip */
	    {"rnaks", 2},    /* two letters swapped */
	    {"max_rank", 10},
	    {"colledges", 8},    /* the underscore dropped */
	    {"x-site-note", -1}, /* another key: ignored, not corrected */
	    {"edge", 7},
	    {"foo", -1},
	    {"ed", -1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(tmatch_closest_name(cases[i].word, strlen(cases[i].word), keys,
		                                 sizeof(keys) / sizeof(keys[0])),
		             cases[i].want, "%s", cases[i].word);
	cr_expect_eq(tmatch_closest_name(NULL, 0, keys, 3), -1);
	cr_expect_eq(tmatch_closest_name("x", 1, NULL, 0), -1);
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
