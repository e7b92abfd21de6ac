/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tmpdir.h - where the unit tests make their temporary files: $TMPDIR
 * (`make check` points it at the build directory's tmp/, which must be
 * empty again when the tests end), else /tmp. Header-only because every
 * test is its own binary.
 */
#ifndef TMATCH_TESTS_TMPDIR_H
#define TMATCH_TESTS_TMPDIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

/* Room for a temporary name (TMPDIR and the name); a longer TMPDIR fails
   the test that asks, saying so. */
#define TM_TMP_MAX 256

static inline const char *tm_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

/* "$TMPDIR/NAME" into buf (NAME may end in XXXXXX for mkstemp/mkdtemp). */
static inline char *tm_tmpname(char *buf, size_t len, const char *name)
{
	cr_assert_lt((size_t)snprintf(buf, len, "%s/%s", tm_tmpdir(), name), len,
	             "TMPDIR is too long");
	return buf;
}

/* A new directory "$TMPDIR/PREFIX-XXXXXX" in buf. */
static inline char *tm_mkdtemp(char *buf, size_t len, const char *prefix)
{
	char name[64];

	snprintf(name, sizeof(name), "%s-XXXXXX", prefix);
	tm_tmpname(buf, len, name);
	cr_assert_not_null(mkdtemp(buf), "mkdtemp %s", buf);
	return buf;
}

/* rm -rf path (a directory this test made). */
static inline void tm_rmtree(const char *path)
{
	char cmd[4200];

	if (!path || !path[0])
		return;
	cr_assert_lt((size_t)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path), sizeof(cmd));
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

#endif
