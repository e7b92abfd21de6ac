/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_affinity_hostlist.c - Slurm hostlists: expansion, errors with their
 * column, the caps, a long bracket; and the network of SLURM_TOPOLOGY_ADDR
 * values (affinity/network.c).
 */
#include "affinity/affinity.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hl_case {
	const char *in;
	const char *out; /* names joined by spaces */
};

static const struct hl_case hostlist_cases[] = {
    {"n1", "n1"},
    {"n[1-4,7]", "n1 n2 n3 n4 n7"},
    {"cn[001-003]", "cn001 cn002 cn003"},
    {"a,b,c[9-10]", "a b c9 c10"},
    {"r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2"},
    {"ib-x[08-10]", "ib-x08 ib-x09 ib-x10"},
    {"login[1,3],n[1-2]", "login1 login3 n1 n2"},
    /* Slurm's separators: blanks and tabs too; empty items skipped */
    {"a b\tc,,d", "a b c d"},
    {"n[1-3]-ib[1-2]", "n1-ib1 n1-ib2 n2-ib1 n2-ib2 n3-ib1 n3-ib2"},
};

static void run_expand(const struct hl_case *c)
{
	tmatch_error_t err;
	int n = -1, i;
	char **v = tmatch_affinity_hostlist_expand(c->in, &n, &err);
	char joined[256] = "";
	cr_assert_not_null(v, "%s: %s", c->in, err.msg);
	for (i = 0; i < n; i++) {
		if (i)
			strcat(joined, " ");
		strcat(joined, v[i]);
	}
	cr_assert_null(v[n]);
	cr_assert_str_eq(joined, c->out);
	tmatch_affinity_hostlist_free(v);
}

Test(hostlist, expand)
{
	size_t i;
	for (i = 0; i < sizeof(hostlist_cases) / sizeof(hostlist_cases[0]); i++)
		run_expand(&hostlist_cases[i]);
}

Test(hostlist, errors)
{
	static const struct {
		const char *in;
		int col;
	} bad[] = {{"", 1},     {"n[", 3},        {"n[1-", 5}, {"n[2-1]", 5}, {"n]", 2},
	           {"n[a]", 3}, {"n[1-2]-ib", 7}, {", ,", 1},  {"a,n[1]x", 7}};
	tmatch_error_t err;
	size_t i;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		cr_assert_null(tmatch_affinity_hostlist_expand(bad[i].in, NULL, &err), "'%s'",
		               bad[i].in);
		cr_assert_eq(errno, EINVAL, "'%s'", bad[i].in);
		cr_assert_eq(err.column, bad[i].col, "'%s': column %d", bad[i].in, err.column);
	}
	cr_assert_null(tmatch_affinity_hostlist_expand(NULL, NULL, &err));
	tmatch_affinity_hostlist_free(NULL);
}

/* Too many names, or names too long in all: E2BIG, before the names are
   made (the count) or once their bytes reach the cap (1 GB otherwise). */
Test(hostlist, too_big)
{
	char *list = malloc(1100);
	tmatch_error_t err;
	int n = -1;

	cr_assert_not_null(list);
	errno = 0;
	cr_assert_null(tmatch_affinity_hostlist_expand("n[1-999999999]", NULL, &err));
	cr_expect_eq(errno, E2BIG);
	cr_expect_eq(err.column, 2, "%d", err.column);
	/* 1,000,000 names of 1,001 characters: under the count, over the bytes */
	memset(list, 'x', 1000);
	strcpy(list + 1000, "[000000-999999]");
	errno = 0;
	cr_assert_null(tmatch_affinity_hostlist_expand(list, &n, &err));
	cr_expect_eq(errno, E2BIG);
	cr_expect_not_null(strstr(err.msg, "bytes of names"), "%s", err.msg);
	/* the same count of short names fits */
	{
		char **v = tmatch_affinity_hostlist_expand("x[000000-999999]", &n, &err);

		cr_assert_not_null(v, "%s", err.msg);
		cr_expect_eq(n, 1000000);
		cr_expect_str_eq(v[999999], "x999999");
		tmatch_affinity_hostlist_free(v);
	}
	free(list);
}

/* SLURM_NODELIST of a scattered allocation: hundreds of items in one bracket. */
Test(hostlist, long_bracket)
{
	char list[8192];
	size_t p = 0;
	int i, n = 0;
	tmatch_error_t err;
	char **v;
	p += (size_t)snprintf(list + p, sizeof(list) - p, "ib-n[");
	for (i = 0; i < 600; i++)
		p += (size_t)snprintf(list + p, sizeof(list) - p, "%s%d", i ? "," : "", 2 * i + 1);
	snprintf(list + p, sizeof(list) - p, "]");
	v = tmatch_affinity_hostlist_expand(list, &n, &err);
	cr_assert_not_null(v, "%s", err.msg);
	cr_assert_eq(n, 600);
	cr_assert_str_eq(v[0], "ib-n1");
	cr_assert_str_eq(v[599], "ib-n1199");
	tmatch_affinity_hostlist_free(v);
}

Test(conf, topology_addr)
{
	static const char *const addrs[] = {"top.s0.n1", "top.s0.n2", "top.s1.n3", "top.s1.n4"};
	static const char *const bad[] = {"top.s0.n1", "s0.n2"};
	static const char *const clash[] = {"a.s0.n1", "b.s0.n2"};
	tmatch_error_t err;
	tmatch_affinity_conf_t *c = tmatch_affinity_conf_from_addrs(addrs, 4, &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_eq(tmatch_affinity_conf_nb_switches(c), 3);
	cr_assert_str_eq(tmatch_affinity_conf_switch_name(c, 0), "top");
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, 0), 1);
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, 1), 0);
	tmatch_affinity_conf_destroy(c);
	errno = 0;
	cr_assert_null(tmatch_affinity_conf_from_addrs(bad, 2, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(tmatch_affinity_conf_from_addrs(clash, 2, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "disagree"), "%s", err.msg);
	cr_assert_null(tmatch_affinity_conf_from_addrs(NULL, 0, &err));
	cr_assert_eq(errno, EINVAL);
}
