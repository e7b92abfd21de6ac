/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_profile_import.c - tmatch_profile_import without the CLI: what each
 * input format becomes (directed or not, metrics, source), the format names,
 * and the bad-argument paths (errno checked, nothing built).
 */
#include "profile/profile.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CDIR TMATCH_SRCDIR "/tests/fixtures/profile/convert/"

static tmatch_profile_t *import1(const char *file, const tmatch_profile_import_opts_t *o)
{
	const char *paths[] = {file};
	tmatch_error_t err;
	tmatch_profile_t *p = tmatch_profile_import(paths, 1, o, NULL, NULL, &err);

	cr_assert_not_null(p, "%s: %s", file, err.msg);
	return p;
}

Test(profile_import, each_format_gives_its_profile)
{
	tmatch_profile_t *p = import1(CDIR "ring4.mtx", NULL);
	int src, dst;
	uint64_t bytes;

	/* symmetric Matrix Market: undirected, one triangle, raw values */
	cr_expect_eq(tmatch_profile_ranks(p), 4);
	cr_expect_eq(tmatch_profile_directed(p), 0);
	cr_expect_eq(tmatch_profile_nedges(p, TMATCH_PROFILE_P2P), 4);
	cr_assert_eq(tmatch_profile_edge(p, TMATCH_PROFILE_P2P, 0, &src, &dst, &bytes, NULL), 0);
	cr_expect(src == 0 && dst == 1 && bytes == 100, "(%d, %d, %lu)", src, dst,
	          (unsigned long)bytes);
	cr_expect_str_eq(tmatch_profile_info(p, "source"), "Matrix Market");
	cr_expect_null(tmatch_profile_info(p, "tool"), "the caller names the tool");
	tmatch_profile_destroy(p);

	/* symmetric dense matrix: undirected */
	p = import1(CDIR "sym3.mat", NULL);
	cr_expect_eq(tmatch_profile_ranks(p), 3);
	cr_expect_eq(tmatch_profile_directed(p), 0);
	cr_expect_str_eq(tmatch_profile_info(p, "source"), "TreeMatch dense matrix");
	tmatch_profile_destroy(p);

	/* an edge list with msgs: directed, both metrics */
	p = import1(CDIR "small.edges", NULL);
	cr_expect_eq(tmatch_profile_directed(p), 1);
	cr_expect_eq(tmatch_profile_metrics(p), TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS);
	tmatch_profile_destroy(p);
}

Test(profile_import, options_change_the_result)
{
	tmatch_profile_import_opts_t o;
	tmatch_profile_t *p;
	const char *two[] = {CDIR "rs.0.prof", CDIR "rs.1.prof"};
	tmatch_error_t err;

	char path[TM_TMP_MAX];
	int fd = mkstemp(tm_tmpname(path, sizeof(path), "tm-import-XXXXXX"));
	FILE *f = fdopen(fd, "w");

	cr_assert_not_null(f);
	fputs("# each pair once\n0 1 4096\n2 1 100\n", f);
	fclose(f);
	memset(&o, 0, sizeof(o));
	o.undirected = 1;
	o.ranks = 6;
	p = import1(path, &o);
	cr_expect_eq(tmatch_profile_directed(p), 0);
	cr_expect_eq(tmatch_profile_ranks(p), 6);
	cr_expect_eq(tmatch_profile_metrics(p), TMATCH_PROFILE_HAS_BYTES);
	tmatch_profile_destroy(p);
	unlink(path);

	memset(&o, 0, sizeof(o));
	o.coll = 'w';
	p = tmatch_profile_import(two, 2, &o, NULL, NULL, &err);
	cr_assert_not_null(p, "%s", err.msg);
	cr_expect_gt(tmatch_profile_nedges(p, TMATCH_PROFILE_COLL), 0);
	tmatch_profile_destroy(p);
	o.coll = 0;
	p = tmatch_profile_import(two, 2, &o, NULL, NULL, &err);
	cr_assert_not_null(p, "%s", err.msg);
	cr_expect_eq(tmatch_profile_nedges(p, TMATCH_PROFILE_COLL), 0);
	tmatch_profile_destroy(p);
}

Test(profile_import, bad_inputs_name_file_and_line)
{
	const char *frac[] = {CDIR "frac.mtx"};
	tmatch_error_t err;

	errno = 0;
	cr_assert_null(tmatch_profile_import(frac, 1, NULL, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_str_eq(err.file, CDIR "frac.mtx");
	cr_expect_eq(err.line, 3);
	cr_expect_not_null(strstr(err.msg, "whole number"), "%s", err.msg);
}

/* Edge lists and .prof files are read by the bounded line reader: a NUL
   byte or a line above 1 MiB stops the import at its line (getline took
   both: the long line, all blanks before "0 1 5", was read as an edge). */
Test(profile_import, edge_lines_are_bounded_and_text)
{
	char path[] = "/tmp/tmatch-import-XXXXXX.edges";
	const char *one[] = {path};
	tmatch_error_t err;
	int fd = mkstemps(path, 6);
	FILE *f;

	cr_assert_geq(fd, 0);
	cr_assert_not_null(f = fdopen(fd, "w"));
	fputs("0 1 10\n", f);
	for (int i = 0; i < (1 << 20) + 16; i++)
		fputc(' ', f);
	fputs("0 1 5\n", f);
	cr_assert_eq(fclose(f), 0);
	errno = 0;
	cr_assert_null(tmatch_profile_import(one, 1, NULL, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(err.line, 2);
	cr_expect_not_null(strstr(err.msg, "a line longer than 1 MiB"), "%s", err.msg);

	cr_assert_not_null(f = fopen(path, "w"));
	fputs("0 1 10\n1 2 3\n2 0", f);
	fputc('\0', f);
	fputs("7\n", f);
	cr_assert_eq(fclose(f), 0);
	errno = 0;
	cr_assert_null(tmatch_profile_import(one, 1, NULL, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(err.line, 3);
	cr_expect_not_null(strstr(err.msg, "NUL byte"), "%s", err.msg);
	unlink(path);
}

Test(profile_import, bad_arguments)
{
	tmatch_profile_import_opts_t o;
	const char *one[] = {CDIR "ring4.mtx"}, *two[] = {CDIR "ring4.mtx", CDIR "ring4.mtx"};
	tmatch_error_t err;
	int f = -1;

	memset(&o, 0, sizeof(o));
	errno = 0;
	cr_expect_null(tmatch_profile_import(NULL, 1, NULL, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tmatch_profile_import(one, 0, NULL, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tmatch_profile_import(two, 2, NULL, NULL, NULL, &err), "two matrices");
	cr_expect_eq(errno, EINVAL);
	o.coll = 'w';
	errno = 0;
	cr_expect_null(tmatch_profile_import(one, 1, &o, NULL, NULL, NULL), "coll on a matrix");
	cr_expect_eq(errno, EINVAL);
	o.coll = 0;
	o.format = 99;
	errno = 0;
	cr_expect_null(tmatch_profile_import(one, 1, &o, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL);

	cr_expect_eq(tmatch_profile_format_parse("ompi", &f, NULL), 0);
	cr_expect_eq(f, TMATCH_PROFILE_FROM_OMPI);
	errno = 0;
	cr_expect_eq(tmatch_profile_format_parse("csv", &f, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_not_null(strstr(err.msg, "mtx, mat, edges, ompi or yaml"), "%s", err.msg);
	cr_expect_eq(f, TMATCH_PROFILE_FROM_OMPI, "output untouched on failure");
	cr_expect_eq(tmatch_profile_format_parse(NULL, &f, NULL), -1);
	cr_expect_eq(tmatch_profile_format_of("x.prof"), TMATCH_PROFILE_FROM_OMPI);
	cr_expect_eq(tmatch_profile_format_of("x.yaml"), TMATCH_PROFILE_FROM_YAML);
	cr_expect_eq(tmatch_profile_format_of("x.txt"), TMATCH_PROFILE_FROM_EDGES);
	cr_expect_eq(tmatch_profile_format_of(NULL), 0);
}
