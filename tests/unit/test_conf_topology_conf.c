/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conf_topology_conf.c - topology.conf files with 1, 2 and 3 switch
 * levels, every invalid fixture (topology.conf and topology.yaml) with the
 * error (line, column, text) it states in its first line, the caps.
 */
#include "affinity/affinity.h"
#include "conf/topology.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX TMATCH_SRCDIR "/tests/fixtures/affinity/"

static tmatch_affinity_conf_t *load(const char *name)
{
	tmatch_error_t err;
	tmatch_affinity_conf_t *c = tmatch_conf_topology_load(name, &err);
	cr_assert_not_null(c, "%s: %s:%d:%d %s", name, err.file, err.line, err.column, err.msg);
	return c;
}

static int sw_index(const tmatch_affinity_conf_t *c, const char *name)
{
	int i;
	for (i = 0; i < tmatch_affinity_conf_nb_switches(c); i++)
		if (!strcmp(tmatch_affinity_conf_switch_name(c, i), name))
			return i;
	cr_assert_fail("switch %s not found", name);
	return -1;
}

Test(conf, one_level)
{
	tmatch_affinity_conf_t *c = load(FIX "topo-1level.conf");
	cr_assert_eq(tmatch_affinity_conf_nb_switches(c), 1);
	cr_assert_str_eq(tmatch_affinity_conf_switch_name(c, 0), "s0");
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, 0), 0);
	cr_assert_eq(tmatch_affinity_conf_switch_speed(c, 0), 100);
	tmatch_affinity_conf_destroy(c);
}

Test(conf, two_levels)
{
	tmatch_affinity_conf_t *c = load(FIX "topo-2level.conf");
	cr_assert_eq(tmatch_affinity_conf_nb_switches(c), 4);
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, sw_index(c, "s2")), 0);
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, sw_index(c, "top")), 1);
	/* LinkSpeed came from a continuation line */
	cr_assert_eq(tmatch_affinity_conf_switch_speed(c, sw_index(c, "top")), 400);
	cr_assert_eq(tmatch_affinity_conf_switch_speed(c, sw_index(c, "s0")), 1);
	tmatch_affinity_conf_destroy(c);
}

Test(conf, three_levels)
{
	tmatch_affinity_conf_t *c = load(FIX "topo-3level.conf");
	cr_assert_eq(tmatch_affinity_conf_nb_switches(c), 7);
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, sw_index(c, "leaf3")), 0);
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, sw_index(c, "agg2")), 1);
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, sw_index(c, "core")), 2);
	tmatch_affinity_conf_destroy(c);
}

Test(conf, from_string)
{
	tmatch_error_t err;
	tmatch_affinity_conf_t *c = tmatch_conf_topology_parse(
	    "# comment only\n\n  SwitchName=a Nodes=n[1-2] # trailing\r\n"
	    "SWITCHNAME=b \\\n  \\\n  Switches=a\n",
	    "inline", &err);
	cr_assert_not_null(c, "%d:%d %s", err.line, err.column, err.msg);
	cr_assert_eq(tmatch_affinity_conf_nb_switches(c), 2);
	cr_assert_eq(tmatch_affinity_conf_switch_level(c, 1), 1);
	tmatch_affinity_conf_destroy(c);

	c = tmatch_conf_topology_parse("SwitchName=a Nodes=n1\nSwitchName=b Bogus=1\n", NULL, &err);
	cr_assert_null(c);
	cr_assert_str_eq(err.file, "<string>");
	cr_assert_eq(err.line, 2);
	cr_assert_eq(err.column, 14);

	c = tmatch_conf_topology_parse("# nothing\n", "empty", &err);
	cr_assert_null(c);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "no SwitchName"), "%s", err.msg);
}

/* Every bad-*.conf states "# expect-error: LINE:COL: text" on its first line. */
Test(conf, invalid_fixtures)
{
	DIR *d = opendir(FIX);
	struct dirent *e;
	int seen = 0;
	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char path[1024], first[256], text[200];
		int line, col;
		FILE *f;
		tmatch_error_t err;
		tmatch_affinity_conf_t *c;
		if (strncmp(e->d_name, "bad-", 4) ||
		    (!strstr(e->d_name, ".conf") && !strstr(e->d_name, ".yaml")))
			continue;
		snprintf(path, sizeof(path), FIX "%s", e->d_name);
		f = fopen(path, "r");
		cr_assert_not_null(f);
		cr_assert_not_null(fgets(first, sizeof(first), f));
		fclose(f);
		first[strcspn(first, "\n")] = '\0';
		cr_assert_eq(sscanf(first, "# expect-error: %d:%d: %199[^\n]", &line, &col, text),
		             3, "%s: first line must state the expected error", e->d_name);
		errno = 0;
		c = tmatch_conf_topology_load(path, &err);
		cr_assert_null(c, "%s parsed", e->d_name);
		cr_assert_eq(errno, EINVAL, "%s", e->d_name);
		cr_assert_str_eq(err.file, path);
		cr_assert_eq(err.line, line, "%s: line %d, want %d (%s)", e->d_name, err.line, line,
		             err.msg);
		cr_assert_eq(err.column, col, "%s: column %d, want %d (%s)", e->d_name, err.column,
		             col, err.msg);
		cr_assert(strstr(err.msg, text), "%s: '%s' lacks '%s'", e->d_name, err.msg, text);
		seen++;
	}
	closedir(d);
	cr_assert_geq(seen, 10);
}

Test(conf, bad_arguments)
{
	tmatch_error_t err;
	errno = 0;
	cr_assert_null(tmatch_conf_topology_load(FIX "nope.conf", &err));
	cr_assert_eq(errno, ENOENT);
	cr_assert_null(tmatch_conf_topology_load(NULL, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(tmatch_conf_topology_parse(NULL, NULL, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_affinity_conf_nb_switches(NULL), -1);
	cr_assert_null(tmatch_affinity_conf_switch_name(NULL, 0));
	cr_assert_eq(tmatch_affinity_conf_switch_level(NULL, 0), -1);
	cr_assert_eq(tmatch_affinity_conf_switch_speed(NULL, 0), -1);
	tmatch_affinity_conf_destroy(NULL);
}

/* Mutated topology.conf texts never crash the parser: each gives a conf or
   an error with a message and a line (deterministic mutations). */
Test(conf, mutations_fail_cleanly)
{
	static const char *const files[] = {FIX "topo-2level.conf", FIX "topo-3level.conf"};
	static const char alphabet[] = "[]-,=\\#\n a1Ss0";
	unsigned long x = 12345;
	size_t f;
	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char text[4096];
		size_t len;
		FILE *fp = fopen(files[f], "r");
		int it;
		cr_assert_not_null(fp);
		len = fread(text, 1, sizeof(text) - 1, fp);
		fclose(fp);
		text[len] = '\0';
		for (it = 0; it < 400; it++) {
			char m[4096];
			int k, nmut = 1 + it % 4;
			tmatch_error_t err;
			tmatch_affinity_conf_t *c;
			memcpy(m, text, len + 1);
			for (k = 0; k < nmut; k++) {
				x = x * 6364136223846793005UL + 1442695040888963407UL;
				m[(x >> 33) % len] = alphabet[(x >> 17) % (sizeof(alphabet) - 1)];
			}
			memset(&err, 0, sizeof(err));
			errno = 0;
			c = tmatch_conf_topology_parse(m, "mutant", &err);
			if (c) {
				cr_assert_gt(tmatch_affinity_conf_nb_switches(c), 0);
				tmatch_affinity_conf_destroy(c);
			} else {
				cr_assert_neq(errno, 0, "iteration %d", it);
				cr_assert_neq(err.msg[0], '\0', "iteration %d", it);
				cr_assert_str_eq(err.file, "mutant");
			}
		}
	}
}

/*
 * 100,000 switches, flat under one top and in one chain: linear time and
 * no recursion (issue 16: this took 26-42 s, quadratic, and a deep chain
 * recursed once per level). The timeout is the regression guard.
 */
Test(conf, hundred_thousand_switches_flat_and_chained, .timeout = 30)
{
	enum { N = 100000 };
	char *text = malloc((size_t)N * 48 + 64), *p;
	tmatch_affinity_conf_t *c;
	tmatch_error_t err;

	cr_assert_not_null(text);
	p = text;
	for (int i = 0; i < N; i++)
		p += sprintf(p, "SwitchName=s%d Nodes=n%d\n", i, i);
	sprintf(p, "SwitchName=top Switches=s[0-%d]\n", N - 1);
	c = tmatch_conf_topology_parse(text, "flat", &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_expect_eq(tmatch_affinity_conf_nb_switches(c), N + 1);
	cr_expect_eq(tmatch_affinity_conf_switch_level(c, N), 1);
	tmatch_affinity_conf_destroy(c);

	p = text;
	for (int i = 0; i < N - 1; i++)
		p += sprintf(p, "SwitchName=s%d Switches=s%d\n", i, i + 1);
	sprintf(p, "SwitchName=s%d Nodes=n0\n", N - 1);
	c = tmatch_conf_topology_parse(text, "chain", &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_expect_eq(tmatch_affinity_conf_switch_level(c, 0), N - 1);

	/* the same chain closed into a cycle: found, and named */
	tmatch_affinity_conf_destroy(c);
	sprintf(p, "SwitchName=s%d Switches=s0\n", N - 1);
	c = tmatch_conf_topology_parse(text, "cycle", &err);
	cr_assert_null(c);
	cr_expect_not_null(strstr(err.msg, "part of a cycle"), "%s", err.msg);
	free(text);
}

/* Switches count too: their names with the nodes' (a file of 888,856
   SwitchName= lines took 130 MB), and the Switches= lists may name each
   switch once at most, before their names are made. */
Test(conf, switches_are_capped, .timeout = 10)
{
	enum { N = (int)TMATCH_TOPOLOGY_CONF_NAMES + 1 };
	char *text = malloc((size_t)N * 24 + 64), *p = text;
	tmatch_error_t err;

	cr_assert_not_null(text);
	for (int i = 0; i < N; i++)
		p += sprintf(p, "SwitchName=s%d\n", i);
	errno = 0;
	cr_assert_null(tmatch_conf_topology_parse(text, "flood.conf", &err));
	cr_expect_eq(errno, E2BIG);
	cr_expect_eq(err.line, N);
	cr_expect_not_null(strstr(err.msg, "SwitchName="), "%s", err.msg);
	errno = 0;
	cr_assert_null(tmatch_conf_topology_parse("SwitchName=a Nodes=n1\n"
	                                          "SwitchName=b Switches=a,x[1-99999]\n",
	                                          "refs.conf", &err));
	cr_expect_eq(errno, E2BIG);
	cr_expect_eq(err.line, 2);
	cr_expect_not_null(strstr(err.msg, "more switches than the 2 that SwitchName= defines"),
	                   "%s", err.msg);
	free(text);
}

/* A FIFO named as topology.conf is refused at once, not waited on. */
Test(conf, fifo_is_refused_without_waiting, .timeout = 10)
{
	char dir[TM_TMP_MAX], path[TM_TMP_MAX + 64];
	tmatch_error_t err;
	tm_tmpname(dir, sizeof(dir), "tm-conf-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/topology.conf", dir);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_assert_null(tmatch_conf_topology_load(path, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_str_eq(err.file, path);
	cr_expect_not_null(strstr(err.msg, "not a regular file"), "%s", err.msg);
	unlink(path);
	rmdir(dir);
}

/* A few bracket groups multiply: lines that each stay under the hostlist
   cap must not add up to millions of names (1.6 million took 13 s under
   ASan). The whole file may name at most TMATCH_TOPOLOGY_CONF_NAMES. */
Test(conf, names_are_capped_over_the_whole_file, .timeout = 10)
{
	static const char text[] = "SwitchName=a Nodes=c[1-1000]n[1-200]\n"
	                           "SwitchName=b Nodes=d[1-1000]n[1-200]\n"
	                           "SwitchName=top Switches=a,b\n";
	tmatch_affinity_conf_t *c;
	tmatch_error_t err;

	errno = 0;
	c = tmatch_conf_topology_parse(text, "many.conf", &err);
	cr_assert_null(c);
	cr_expect_eq(errno, E2BIG);
	cr_expect_str_eq(err.file, "many.conf");
	cr_expect_eq(err.line, 2);
	cr_expect_not_null(strstr(err.msg, "more than 262144 nodes and switches"), "%s", err.msg);
	/* one such line alone is a (huge) cluster */
	c = tmatch_conf_topology_parse("SwitchName=a Nodes=c[1-1000]n[1-200]\n", "one.conf", &err);
	cr_assert_not_null(c, "%s", err.msg);
	tmatch_affinity_conf_destroy(c);
}

/* fuzz_specs' slow inputs (specs-corpus/cluster-*-slow): 95 and 203 bytes
   whose groups multiply to 884,736 names took 0.85 s / 75 MB and
   1.3 s / 172 MB; they are now refused before a name is made. Names under
   the count but long are capped by their bytes, at the line that passes. */
Test(conf, multiplied_groups_and_long_names_are_refused, .timeout = 10)
{
	static const char groups[] =
	    "SwitchName=le0 Nodes=an[003-004]glwitch-n[1-48]DX[001-004]g[1-48]odn[1-48]\n";
	char *text = malloc(1024);
	tmatch_affinity_conf_t *c;
	tmatch_error_t err;
	size_t n;

	cr_assert_not_null(text);
	errno = 0;
	cr_assert_null(tmatch_conf_topology_parse(groups, "groups.conf", &err));
	cr_expect_eq(errno, E2BIG);
	cr_expect_eq(err.line, 1);
	cr_expect_eq(err.column, 22, "%d", err.column);
	/* 3 x 50,000 names of 116 bytes (NUL included): 17.4 MB over three lines */
	n = 0;
	for (int line = 0; line < 3; line++) {
		n += (size_t)sprintf(text + n, "SwitchName=s%d Nodes=", line);
		memset(text + n, 'a' + line, 110);
		n += 110;
		n += (size_t)sprintf(text + n, "[00000-49999]\n");
	}
	errno = 0;
	c = tmatch_conf_topology_parse(text, "long.conf", &err);
	cr_assert_null(c);
	cr_expect_eq(errno, E2BIG);
	cr_expect_eq(err.line, 3);
	cr_expect_not_null(strstr(err.msg, "16 MiB of names"), "%s", err.msg);
	/* two of those lines (11.6 MB) are read */
	strstr(text, "s2 ")[-11] = '\0';
	c = tmatch_conf_topology_parse(text, "long.conf", &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_expect_eq(tmatch_affinity_conf_nb_switches(c), 2);
	tmatch_affinity_conf_destroy(c);
	free(text);
}
