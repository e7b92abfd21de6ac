/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_profile_convert.c - `treematch profile convert|check` end to end: each
 * input in tests/fixtures/profile/convert/ converts to its hand-checked
 * expected profile, the output loads, and bad input fails with the file and
 * line in the message.
 */
#include "profile/profile.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLI  TMATCH_BUILDDIR "/bin/treematch"
#define CDIR TMATCH_SRCDIR "/tests/fixtures/profile/convert"

/* Run a shell command, capture stdout+stderr; returns the exit status. */
static int run(const char *cmd, char *out, size_t len)
{
	char full[2048];
	FILE *p;
	size_t n = 0;

	snprintf(full, sizeof(full), "(%s) 2>&1", cmd);
	p = popen(full, "r");
	cr_assert_not_null(p);
	while (n + 1 < len) {
		size_t r = fread(out + n, 1, len - 1 - n, p);
		if (r == 0)
			break;
		n += r;
	}
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[1 << 16];
	size_t n;

	cr_assert_not_null(f, "cannot open %s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const struct {
	const char *args;
	const char *expected;
} cases[] = {
    {"ring4.mtx", "ring4.mtx.expected.yml"},
    {"--matrix sym3.mat", "sym3.mat.expected.yml"},
    {"small.edges", "small.edges.expected.yml"},
    {"--coll wire rs.0.prof rs.1.prof", "rs.wire.expected.yml"},
    {"--coll logical rs.0.prof rs.1.prof", "rs.logical.expected.yml"},
};

Test(conf_convert, inputs_give_expected_profiles)
{
	static char out[1 << 16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "cd %s && %s profile convert %s 2>/dev/null", CDIR, CLI,
		         cases[i].args);
		int rc = run(cmd, out, sizeof(out));
		cr_expect_eq(rc, 0, "%s: exit %d: %s", cases[i].args, rc, out);
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", CDIR, cases[i].expected);
		cr_expect_str_eq(out, slurp(path), "%s differs from %s", cases[i].args,
		                 cases[i].expected);
		tmatch_error_t err;
		tmatch_profile_t *p =
		    tmatch_profile_load_buffer(out, strlen(out), "out", NULL, NULL, NULL, &err);
		cr_expect_not_null(p, "%s: output does not load: %s", cases[i].args, err.msg);
		tmatch_profile_destroy(p);
	}
}

Test(conf_convert, edge_list_duplicates_are_summed_with_a_warning)
{
	static char out[1 << 16];
	int rc =
	    run("cd " CDIR " && " CLI " profile convert small.edges >/dev/null", out, sizeof(out));
	cr_expect_eq(rc, 0);
	cr_expect_not_null(strstr(out, "duplicate edges summed"), "%s", out);
}

Test(conf_convert, bad_inputs_name_file_and_line)
{
	static char out[4096];
	int rc = run("cd " CDIR " && " CLI " profile convert frac.mtx", out, sizeof(out));
	cr_expect_eq(rc, 1);
	cr_expect_not_null(strstr(out, "frac.mtx:3: value must be a non-negative whole number"),
	                   "%s", out);
	rc = run("cd " CDIR " && " CLI " profile convert --coll both rs.0.prof", out, sizeof(out));
	cr_expect_eq(rc, 2);
	rc = run("cd " CDIR " && " CLI " profile convert -n 2 small.edges", out, sizeof(out));
	cr_expect_eq(rc, 1);
	cr_expect_not_null(strstr(out, "rank 2 but --ntasks is 2"), "%s", out);
}

Test(conf_convert, check_reports_and_validates)
{
	static char out[1 << 14];
	int rc = run(CLI " profile check " TMATCH_SRCDIR "/profile/examples/lammps-8.yml", out,
	             sizeof(out));
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "ranks:            8"), "%s", out);
	cr_expect_not_null(strstr(out, "total bytes:      184173408 (100.0 %) point-to-point"),
	                   "%s", out);
	cr_expect_not_null(strstr(out, "min 3, mean 3.00, max 3"), "%s", out);
	cr_expect_not_null(strstr(out, "4      5  23643512"), "top pair: %s", out);
	rc = run(CLI " profile check -n 16 " TMATCH_SRCDIR "/profile/examples/lammps-8.yml", out,
	         sizeof(out));
	cr_expect_eq(rc, 1);
	cr_expect_not_null(strstr(out, "has 8 ranks but the job step has 16"), "%s", out);
	rc = run(CLI " profile check " TMATCH_SRCDIR "/tests/fixtures/profile/invalid/negative.yml",
	         out, sizeof(out));
	cr_expect_eq(rc, 1);
	cr_expect_not_null(strstr(out, "negative.yml:7:12:"), "%s", out);
	rc = run(CLI " profile stats " TMATCH_SRCDIR "/profile/examples/lammps-8.yml", out,
	         sizeof(out));
	cr_expect_eq(rc, 0);
	cr_expect_not_null(strstr(out, "recorded on:      2 nodes, 4 ranks per node"), "%s", out);
}

Test(conf_convert, several_edge_lists_add_up_and_quiet_check_is_silent)
{
	static char out[1 << 14];
	int rc = run("cd " CDIR " && " CLI " profile convert small.edges small.edges 2>/dev/null",
	             out, sizeof(out));
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "- [0, 1, 8212, 6]"), "%s", out);
	rc = run("cd " CDIR " && " CLI " profile convert ring4.mtx sym3.mat", out, sizeof(out));
	cr_expect_eq(rc, 2, "%s", out);
	rc = run(CLI " profile check -q " CDIR "/ring4.mtx.expected.yml", out, sizeof(out));
	cr_expect_eq(rc, 0);
	cr_expect_str_eq(out, "");
}

/* A Matrix Market file of `order` ranks with two entries, in /tmp. */
static void write_big_mtx(const char *path, long order)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fprintf(f,
	        "%%%%MatrixMarket matrix coordinate integer general\n%ld %ld 2\n1 2 5\n%ld 1 7\n",
	        order, order, order);
	fclose(f);
}

/*
 * The drift of issue 15: `profile convert` had its own Matrix Market reader,
 * which refused a matrix of exactly 1,048,576 ranks that `treematch map`
 * (tmatch_comm_load) read. Both go through tmatch_matrix_read now.
 */
Test(conf_convert, largest_profile_reads_alike_in_convert_and_map)
{
	static char out[1 << 14];
	const char *path = "/tmp/tm-convert-1048576.mtx";
	tmatch_error_t err;
	tmatch_comm_t *c;
	int rc;

	write_big_mtx(path, 1048576);
	c = tmatch_comm_load(path, &err);
	cr_assert_not_null(c, "the matrix loader refuses it: %s", err.msg);
	cr_expect_eq(tmatch_comm_order(c), 1048576);
	cr_expect_float_eq(tmatch_comm_get(c, 1048575, 0), 7, 1e-12);
	tmatch_comm_destroy(c);
	rc = run(CLI " profile convert /tmp/tm-convert-1048576.mtx", out, sizeof(out));
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "\nranks: 1048576\n"), "%s", out);
	cr_expect_not_null(strstr(out, "- [1048575, 0, 7]"), "%s", out);

	/* One more rank is more than a profile holds, and more silent ranks
	   than an 85-byte file may declare (issue 16): refused at the size line. */
	write_big_mtx(path, 1048577);
	rc = run(CLI " profile convert /tmp/tm-convert-1048576.mtx", out, sizeof(out));
	cr_expect_eq(rc, 1, "%s", out);
	cr_expect_not_null(strstr(out, "tm-convert-1048576.mtx:2:1: the size line declares 1048577 "
	                               "ranks but the file has only 85 bytes"),
	                   "%s", out);
	unlink(path);
}

/*
 * `treematch profile compile`: the compiled file of each example checks
 * like the YAML (same summary; the YAML's load warnings, e.g. duplicates
 * summed, are not repeated: the compiled form holds the merged edges),
 * converts back to the same YAML, and maps
 * a node's ranks (map --ranks, reading only their rows) as the YAML does.
 */
Test(conf_convert, compiled_profiles_behave_like_their_yaml)
{
	static const char *const ex[] = {"lammps-8.yml", "msgs_only.yml", "directed_dup.yml",
	                                 "ring-4.yml"};
	static char a[1 << 14], b[1 << 14];
	char dir[TM_TMP_MAX], cmd[2048];
	tm_tmpname(dir, sizeof(dir), "tm-compiled-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		const char *src = i ? TMATCH_SRCDIR "/tests/fixtures/profile/valid"
		                    : TMATCH_SRCDIR "/profile/examples";

		snprintf(cmd, sizeof(cmd), CLI " profile compile -o %s/p.bin %s/%s", dir, src,
		         ex[i]);
		cr_assert_eq(run(cmd, a, sizeof(a)), 0, "%s: %s", ex[i], a);
		snprintf(cmd, sizeof(cmd), CLI " profile check %s/%s 2>/dev/null | sed 1d", src,
		         ex[i]);
		cr_assert_eq(run(cmd, a, sizeof(a)), 0, "%s", a);
		snprintf(cmd, sizeof(cmd), CLI " profile check %s/p.bin | sed 1d", dir);
		cr_assert_eq(run(cmd, b, sizeof(b)), 0, "%s", b);
		cr_assert_str_eq(a, b, "%s: check differs", ex[i]);
		snprintf(cmd, sizeof(cmd), CLI " profile convert %s/%s 2>/dev/null", src, ex[i]);
		run(cmd, a, sizeof(a));
		snprintf(cmd, sizeof(cmd), CLI " profile convert --from yaml %s/p.bin", dir);
		cr_assert_eq(run(cmd, b, sizeof(b)), 0, "%s", b);
		cr_assert_str_eq(a, b, "%s: back to YAML differs", ex[i]);
		snprintf(cmd, sizeof(cmd),
		         CLI " map -p %s/%s --ranks 1,0 -t 'synthetic:pack:2 core:2 pu:1' -m "
		             "greedy 2>/dev/null",
		         src, ex[i]);
		cr_assert_eq(run(cmd, a, sizeof(a)), 0, "%s", a);
		snprintf(cmd, sizeof(cmd),
		         CLI " map -p %s/p.bin --ranks 1,0 -t 'synthetic:pack:2 core:2 pu:1' -m "
		             "greedy 2>/dev/null",
		         dir);
		cr_assert_eq(run(cmd, b, sizeof(b)), 0, "%s", b);
		cr_assert_str_eq(a, b, "%s: map --ranks differs", ex[i]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}
