/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conf_fixtures.c - the valid/invalid profile fixtures.
 *
 * tests/fixtures/profile/invalid/X.yml starts with "# expect: <fragment>": the
 * loader must refuse it with a message containing the fragment, naming the
 * file. tests/fixtures/profile/valid/X.yml starts with
 * "# expect: p2p=N coll=M [warn=<fragment>]": the loader must accept it with
 * that many edges (after merging), log the warning when one is named, and
 * round-trip exactly through the writer.
 */
#include "profile/profile.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXDIR TMATCH_SRCDIR "/tests/fixtures/profile"

struct logbuf {
	char text[4096];
};

static void capture(void *arg, int level, const char *msg)
{
	struct logbuf *b = arg;
	size_t n = strlen(b->text);

	(void)level;
	snprintf(b->text + n, sizeof(b->text) - n, "%s\n", msg);
}

static int read_expect(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[380];
	int ok = 0;

	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && !strncmp(line, "# expect: ", 10)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, len, "%s", line + 10);
		ok = 1;
	}
	fclose(f);
	return ok;
}

static int list_dir(const char *dir, char names[][256], int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d, "cannot open %s", dir);
	while ((de = readdir(d)) && n < max) {
		size_t l = strlen(de->d_name);
		if (l > 4 && !strcmp(de->d_name + l - 4, ".yml"))
			snprintf(names[n++], 256, "%s", de->d_name);
	}
	closedir(d);
	return n;
}

static char names[256][256];

Test(conf_fixtures, invalid_files_give_their_message)
{
	int n = list_dir(FIXDIR "/invalid", names, 256);

	cr_assert_geq(n, 30, "expected the invalid fixture set, found %d files", n);
	for (int i = 0; i < n; i++) {
		char path[1024], expect[400];
		tmatch_error_t err;
		snprintf(path, sizeof(path), FIXDIR "/invalid/%s", names[i]);
		cr_assert(read_expect(path, expect, sizeof(expect)), "%s has no '# expect:' line",
		          names[i]);
		errno = 0;
		tmatch_profile_t *p = tmatch_profile_load(path, NULL, NULL, NULL, &err);
		cr_expect_null(p, "%s loaded but must fail with '%s'", names[i], expect);
		tmatch_profile_destroy(p);
		if (p)
			continue;
		cr_expect_neq(errno, 0, "%s: errno not set", names[i]);
		cr_expect_not_null(strstr(err.msg, expect), "%s: message '%s' lacks '%s'", names[i],
		                   err.msg, expect);
		cr_expect_str_eq(err.file, path, "%s: error names file '%s'", names[i], err.file);
	}
}

Test(conf_fixtures, invalid_files_give_a_line_when_located)
{
	/* Every error found inside the document points at a line. */
	static const char *const located[] = {
	    "negative.yml",       "out_of_range.yml",      "undirected_dup.yml", "syntax.yml",
	    "alias.yml",          "dense_asym.yml",        "quoted.yml",         "deep.yml",
	    "misspelled_key.yml", "metric_for_metrics.yml"};
	for (size_t i = 0; i < sizeof(located) / sizeof(located[0]); i++) {
		char path[1024];
		tmatch_error_t err;
		snprintf(path, sizeof(path), FIXDIR "/invalid/%s", located[i]);
		tmatch_profile_t *p = tmatch_profile_load(path, NULL, NULL, NULL, &err);
		cr_assert_null(p);
		cr_expect_gt(err.line, 1, "%s: line %d", located[i], err.line);
	}
}

static char *dump(const tmatch_profile_t *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	cr_assert_not_null(f);
	cr_assert_eq(tmatch_profile_write(p, f, 0, NULL), 0);
	fclose(f);
	return buf;
}

Test(conf_fixtures, valid_files_load_and_round_trip)
{
	int n = list_dir(FIXDIR "/valid", names, 256);

	cr_assert_geq(n, 8, "expected the valid fixture set, found %d files", n);
	for (int i = 0; i < n; i++) {
		char path[1024], expect[400], warn[200] = "";
		size_t p2p, coll;
		struct logbuf log = {{0}};
		tmatch_error_t err;

		snprintf(path, sizeof(path), FIXDIR "/valid/%s", names[i]);
		cr_assert(read_expect(path, expect, sizeof(expect)), "%s has no '# expect:' line",
		          names[i]);
		cr_assert_eq(sscanf(expect, "p2p=%zu coll=%zu", &p2p, &coll), 2, "%s: bad expect",
		             names[i]);
		char *w = strstr(expect, "warn=");
		if (w)
			snprintf(warn, sizeof(warn), "%s", w + 5);
		tmatch_profile_t *p = tmatch_profile_load(path, NULL, capture, &log, &err);
		cr_expect_not_null(p, "%s: %s (line %d)", names[i], err.msg, err.line);
		if (!p)
			continue;
		cr_expect_eq(tmatch_profile_nedges(p, TMATCH_PROFILE_P2P), p2p, "%s: p2p %zu",
		             names[i], tmatch_profile_nedges(p, TMATCH_PROFILE_P2P));
		cr_expect_eq(tmatch_profile_nedges(p, TMATCH_PROFILE_COLL), coll, "%s: coll %zu",
		             names[i], tmatch_profile_nedges(p, TMATCH_PROFILE_COLL));
		if (warn[0])
			cr_expect_not_null(strstr(log.text, warn), "%s: no warning '%s' in '%s'",
			                   names[i], warn, log.text);
		else
			cr_expect_eq(log.text[0], '\0', "%s: unexpected warning '%s'", names[i],
			             log.text);
		size_t l1, l2;
		char *a = dump(p, &l1);
		tmatch_profile_t *q =
		    tmatch_profile_load_buffer(a, l1, "rt", NULL, NULL, NULL, &err);
		cr_expect_not_null(q, "%s: reload failed: %s", names[i], err.msg);
		if (q) {
			char *b = dump(q, &l2);
			cr_expect(l1 == l2 && !memcmp(a, b, l1), "%s: round trip differs",
			          names[i]);
			free(b);
		}
		free(a);
		tmatch_profile_destroy(q);
		tmatch_profile_destroy(p);
	}
}
