/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tmp_text.h - for the unit tests that hand a reader a file: write a text to
 * a new file under /tmp and return its name (a static buffer, overwritten by
 * the next call; the test unlinks it). Header-only because every test is its
 * own binary.
 */
#ifndef TMATCH_TESTS_TMP_TEXT_H
#define TMATCH_TESTS_TMP_TEXT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include "tmpdir.h"

static inline char *tmp_text(const char *text)
{
	static char path[TM_TMP_MAX];
	int fd;
	FILE *f;

	tm_tmpname(path, sizeof(path), "tm-test-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

#endif
