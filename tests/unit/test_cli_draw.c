/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_draw.c - `treematch draw`: well-formed SVG (xmllint), the expected
 * number of cells and leaves, each rank at its leaf, downsampling of large
 * matrices and trees, byte-identical output, PNG, and the error messages.
 * Runs the CLI that `make` built in TMATCH_BUILDDIR.
 */
#include "treematch/treematch.h"
#include "cli_helpers.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLI    (char *)cli_path()
#define FIX    TMATCH_SRCDIR "/tests/fixtures/draw/"
#define RING8  FIX "ring8.mat"
#define TOPO8  "tleaf 2 2 10 4 1"
#define MAXOUT (1 << 16)

static char tmpdir[TM_TMP_MAX];

static void setup(void)
{
	tm_tmpname(tmpdir, sizeof(tmpdir), "test_cli_draw.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	tm_rmtree(tmpdir);
}

static const char *tmp(const char *name)
{
	static char buf[4][TM_TMP_MAX + 64];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

/* Occurrences of needle in [from, to). */
static int count(const char *from, const char *to, const char *needle)
{
	int n = 0;
	size_t nl = strlen(needle);
	for (const char *p = from; (p = strstr(p, needle)) && p + nl <= to; p += nl)
		n++;
	return n;
}

/* The text of group <g id="id"> (up to its "</g>"), as [*from, *to). */
static void group(const char *svg, const char *id, const char **from, const char **to)
{
	char open[64];
	snprintf(open, sizeof(open), "<g id=\"%s\">", id);
	*from = strstr(svg, open);
	cr_assert_not_null(*from, "no group %s", id);
	*to = strstr(*from, "</g>");
	cr_assert_not_null(*to, "group %s not closed", id);
}

static void assert_well_formed(const char *svg_path)
{
	char out[MAXOUT];
	char *argv[] = {"/usr/bin/xmllint", "--noout", (char *)svg_path, NULL};
	cr_assert_eq(access(argv[0], X_OK), 0,
	             "xmllint is missing: install libxml2-utils (tests/install-deps.sh)");
	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "xmllint: %s", out);
}

TestSuite(cli_draw, .init = setup, .fini = teardown);

Test(cli_draw, ring_with_mapping_file)
{
	char out[MAXOUT];
	char *argv[] = {CLI,   "draw",      "--profile",     RING8, "--topology",
	                TOPO8, "--mapping", FIX "ring8.map", "-o",  (char *)tmp("ring8.svg"),
	                NULL};
	tmatch_comm_t *comm = tmatch_comm_load(RING8, NULL);
	const char *from, *to;
	char *svg;

	cr_assert_not_null(comm);
	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	assert_well_formed(tmp("ring8.svg"));
	svg = slurp(tmp("ring8.svg"), NULL);

	/* One cell per non-zero entry, both triangles, in each heat map. */
	group(svg, "rank-order", &from, &to);
	cr_expect_eq(count(from, to, "class=\"cell\""), (int)tmatch_comm_nnz(comm));
	cr_expect_neq(strstr(svg, "<title>rank 0 x rank 4: 100000 matrix units</title>"), NULL);
	group(svg, "placement-order", &from, &to);
	cr_expect_eq(count(from, to, "class=\"cell\""), (int)tmatch_comm_nnz(comm));
	/* The two nodes of the tree split the placement order after 4 ranks:
	   one vertical and one horizontal boundary line. */
	cr_expect_eq(count(from, to, "<line"), 2);

	/* One box per leaf, each rank at the leaf the mapping gives it. */
	group(svg, "tree", &from, &to);
	cr_expect_eq(count(from, to, "class=\"leaf\""), 8);
	cr_expect_eq(count(from, to, "class=\"node\""), 1 + 2);
	cr_expect_neq(strstr(from, "<title>leaf 1: rank 4, 104000 matrix units</title>"), NULL);
	cr_expect_neq(strstr(from, "<title>leaf 3: rank 2, 4020 matrix units</title>"), NULL);
	cr_expect_neq(strstr(from, "<title>leaf 0: rank 0, 104000 matrix units</title>"), NULL);
	free(svg);
	tmatch_comm_destroy(comm);
}

Test(cli_draw, empty_and_disallowed_leaves)
{
	char out[MAXOUT];
	/* 8 ranks on 12 leaves: 4 leaves stay empty. */
	char *argv[] = {CLI,          "draw",
	                "--profile",  RING8,
	                "--topology", "tleaf 2 3 10 4 1",
	                "-o",         (char *)tmp("r.svg"),
	                NULL};
	const char *from, *to;
	char *svg;

	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	svg = slurp(tmp("r.svg"), NULL);
	group(svg, "tree", &from, &to);
	cr_expect_eq(count(from, to, "class=\"leaf\""), 12);
	cr_expect_eq(count(from, to, ": empty</title>"), 4);
	cr_expect_eq(count(from, to, ": rank "), 8);
	free(svg);
}

/* A ring of n ranks as a Matrix Market file. */
static void write_ring(const char *path, int n)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", n, n, n);
	for (int i = 0; i < n; i++)
		fprintf(f, "%d %d %d\n", i + 1, (i + 1) % n + 1, 100 + i);
	cr_assert_eq(fclose(f), 0);
}

Test(cli_draw, large_inputs_are_downsampled)
{
	char out[MAXOUT];
	const char *prof = tmp("ring200.mtx");
	/* 200 ranks on 256 leaves, blocks of 4 ranks -> 50 x 50 cells; the tree
	   cut where it has at most 64 boxes: 4 x 8 = 32 nodes. */
	char *argv[] = {CLI,           "draw",       "--profile",
	                (char *)prof,  "--topology", "tleaf 3 4 10 8 5 8 1",
	                "--max-cells", "50",         "--max-leaves",
	                "64",          "-o",         (char *)tmp("big.svg"),
	                NULL};
	const char *from, *to;
	size_t len;
	char *svg;

	write_ring(prof, 200);
	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	assert_well_formed(tmp("big.svg"));
	svg = slurp(tmp("big.svg"), &len);
	cr_expect_neq(strstr(svg, "each cell sums a block of 4 x 4 ranks"), NULL);
	/* Ring in rank order: 50 diagonal blocks, 49 + 49 off-diagonal ones and
	   the two corners that close the ring. */
	group(svg, "rank-order", &from, &to);
	cr_expect_eq(count(from, to, "class=\"cell\""), 50 + 2 * 49 + 2);
	group(svg, "placement-order", &from, &to);
	cr_expect_leq(count(from, to, "class=\"cell\""), 50 * 50);
	cr_expect_geq(count(from, to, "class=\"cell\""), 50);
	group(svg, "tree", &from, &to);
	cr_expect_eq(count(from, to, "class=\"leaf\""), 32);
	cr_expect_leq(len, 200000u, "SVG of %zu bytes", len);
	free(svg);
}

Test(cli_draw, output_is_deterministic)
{
	char out[MAXOUT];
	char *a[] = {CLI,      "draw", "--profile",          RING8, "--topology", TOPO8, "--mapper",
	             "greedy", "-o",   (char *)tmp("a.svg"), NULL};
	char *b[] = {CLI,      "draw", "--profile",          RING8, "--topology", TOPO8, "--mapper",
	             "greedy", "-o",   (char *)tmp("b.svg"), NULL};
	size_t la, lb;
	char *sa, *sb;

	cr_assert_eq(cli_run(a, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	cr_assert_eq(cli_run(b, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	sa = slurp(tmp("a.svg"), &la);
	sb = slurp(tmp("b.svg"), &lb);
	cr_expect_eq(la, lb);
	cr_expect_eq(memcmp(sa, sb, la < lb ? la : lb), 0);
	free(sa);
	free(sb);
}

Test(cli_draw, png_through_rsvg_convert)
{
	char out[MAXOUT];
	char *argv[] = {CLI,   "draw", "--profile",          RING8,   "--topology",
	                TOPO8, "-o",   (char *)tmp("p.svg"), "--png", (char *)tmp("p.png"),
	                NULL};
	unsigned char magic[8] = {0};
	FILE *f;

	cr_assert_eq(access("/usr/bin/rsvg-convert", X_OK), 0,
	             "rsvg-convert is missing: install librsvg2-bin (tests/install-deps.sh)");
	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	f = fopen(tmp("p.png"), "rb");
	cr_assert_not_null(f);
	cr_expect_eq(fread(magic, 1, 8, f), 8u);
	fclose(f);
	cr_expect_eq(memcmp(magic, "\x89PNG\r\n\x1a\n", 8), 0);
}

Test(cli_draw, png_without_rsvg_convert_says_what_to_install)
{
	char out[MAXOUT];
	char *argv[] = {CLI,   "draw", "--profile",          RING8,   "--topology",
	                TOPO8, "-o",   (char *)tmp("n.svg"), "--png", (char *)tmp("n.png"),
	                NULL};

	cr_expect_eq(cli_run(argv, tmpdir, out, NULL, sizeof(out)), 1);
	cr_expect_neq(strstr(out, "librsvg2-bin"), NULL, "message: %s", out);
	cr_expect_eq(access(tmp("n.svg"), R_OK), 0, "the SVG is still written");
	cr_expect_neq(access(tmp("n.png"), F_OK), 0);
}

Test(cli_draw, bad_mapping_files_name_file_and_line)
{
	static const struct {
		const char *file;
		const char *msg;
	} cases[] = {
	    {"bad-line.map", "bad-line.map:2:3: expected a non-negative integer"},
	    {"dup-rank.map", "dup-rank.map:3: rank 1 is placed twice"},
	    {"ring8.mat", "ring8.mat:1: too many numbers"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[MAXOUT], map[512];
		char *argv[] = {CLI,   "draw",      "--profile", RING8, "--topology",
		                TOPO8, "--mapping", map,         "-o",  (char *)tmp("x.svg"),
		                NULL};
		snprintf(map, sizeof(map), "%s%s", FIX, cases[i].file);
		cr_expect_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 1, "%s", cases[i].file);
		cr_expect_neq(strstr(out, cases[i].msg), NULL, "%s: got '%s'", cases[i].file, out);
	}
}

Test(cli_draw, missing_ranks_in_mapping)
{
	char out[MAXOUT];
	const char *map = tmp("short.map");
	char *argv[] = {CLI,   "draw",      "--profile", RING8, "--topology",
	                TOPO8, "--mapping", (char *)map, "-o",  (char *)tmp("x.svg"),
	                NULL};
	FILE *f = fopen(map, "w");

	cr_assert_not_null(f);
	fputs("0\n1\n2\n", f); /* lone leaves for ranks 0..2 only */
	fclose(f);
	cr_expect_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 1);
	cr_expect_neq(strstr(out, "rank 3 has no leaf"), NULL, "got '%s'", out);
}

Test(cli_draw, usage_errors)
{
	char out[MAXOUT];
	char *no_output[] = {CLI, "draw", "--profile", RING8, "--topology", TOPO8, NULL};
	char *both[] = {CLI,     "draw",     "--profile", RING8, "--topology", TOPO8, "--mapping",
	                "x.map", "--mapper", "greedy",    "-o",  "x.svg",      NULL};
	char *unknown[] = {CLI, "draw", "--colour", "red", NULL};
	char *bad_cells[] = {CLI, "draw", "--max-cells", "0", NULL};
	char *help[] = {CLI, "draw", "--help", NULL};

	cr_expect_eq(cli_run(no_output, NULL, out, NULL, sizeof(out)), 2);
	cr_expect_neq(strstr(out, "-o/--output"), NULL, "got '%s'", out);
	cr_expect_eq(cli_run(both, NULL, out, NULL, sizeof(out)), 2);
	cr_expect_neq(strstr(out, "not both"), NULL, "got '%s'", out);
	cr_expect_eq(cli_run(unknown, NULL, out, NULL, sizeof(out)), 2);
	cr_expect_neq(strstr(out, "--colour"), NULL, "got '%s'", out);
	cr_expect_eq(cli_run(bad_cells, NULL, out, NULL, sizeof(out)), 2);
	cr_expect_eq(cli_run(help, NULL, out, NULL, sizeof(out)), 0);
	cr_expect_neq(strstr(out, "--max-leaves"), NULL);
}

Test(cli_draw, unwritable_output)
{
	char out[MAXOUT];
	char *argv[] = {CLI,          "draw", "--profile", RING8,
	                "--topology", TOPO8,  "-o",        "/nonexistent/dir/x.svg",
	                NULL};
	cr_expect_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 1);
	cr_expect_neq(strstr(out, "/nonexistent/dir/x.svg: cannot write"), NULL, "got '%s'", out);
}

Test(cli_draw, title_is_escaped)
{
	char out[MAXOUT];
	char *argv[] = {CLI,   "draw",    "--profile",       RING8, "--topology",
	                TOPO8, "--title", "a<b & \"c\" 'd'", "-o",  (char *)tmp("t.svg"),
	                NULL};
	char *svg;

	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	assert_well_formed(tmp("t.svg"));
	svg = slurp(tmp("t.svg"), NULL);
	cr_expect_neq(strstr(svg, ">a&lt;b &amp; &quot;c&quot; &apos;d&apos;</text>"), NULL);
	free(svg);
}

/* --seed is read by one function for every command: one message. */
Test(cli_draw, every_command_says_the_same_of_a_bad_seed)
{
	const char *cmds[] = {"map", "layout", "draw"};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char out[MAXOUT], err[MAXOUT];
		char *argv[] = {CLI, (char *)cmds[i], "--seed", "12x", NULL};

		cr_assert_eq(cli_run(argv, NULL, out, err, sizeof(out)), 2, "%s: %s", cmds[i], err);
		cr_assert_not_null(
		    strstr(err, "treematch: --seed '12x': expected a non-negative integer\n"),
		    "%s said: %s", cmds[i], err);
	}
}

/* The fill colours of class=cls elements in [from, to), one per line. */
static int fills(const char *from, const char *to, const char *cls, char colours[][8], int max)
{
	char want[64];
	int n = 0;

	snprintf(want, sizeof(want), "class=\"%s\"", cls);
	for (const char *p = from; (p = strstr(p, want)) && p < to && n < max; p++) {
		const char *tag = p, *fill;

		while (tag > from && *tag != '<')
			tag--;
		fill = strstr(tag, "fill=\"#");
		cr_assert(fill && fill < p + 80, "no fill near %.60s", tag);
		memcpy(colours[n], fill + 6, 7);
		colours[n++][7] = '\0';
	}
	return n;
}

/* Two "#rrggbb" colours at most `tol` apart in each channel. */
static int close_colours(const char *a, const char *b, int tol)
{
	for (int i = 1; i < 7; i += 2) {
		unsigned x, y;

		if (sscanf(a + i, "%2x", &x) != 1 || sscanf(b + i, "%2x", &y) != 1)
			return 0;
		if ((int)x - (int)y > tol || (int)y - (int)x > tol)
			return 0;
	}
	return 1;
}

/*
 * Values 0.7 % apart are not drawn pale and dark: the matrices' log scale
 * spans at least a decade, the tree's is linear from 0; the legends give
 * the profile's units.
 */
Test(cli_draw, near_equal_traffic_looks_equal_with_its_units)
{
	char out[MAXOUT], colours[64][8];
	const char *from, *to;
	char *argv[] = {CLI,          "draw",
	                "--profile",  (char *)tmp("u.yml"),
	                "--topology", "tleaf 2 2 10 2 1",
	                "-o",         (char *)tmp("u.svg"),
	                NULL};
	char *svg;
	int n;
	FILE *f = fopen(tmp("u.yml"), "w");

	cr_assert_not_null(f);
	fputs("format: comm-profile\nversion: 1\nranks: 4\nmetrics: [bytes]\ndirected: false\n"
	      "edges:\n  - [0, 1, 1000]\n  - [1, 2, 1003]\n  - [2, 3, 1007]\n  - [0, 3, 1005]\n",
	      f);
	fclose(f);
	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	svg = slurp(tmp("u.svg"), NULL);
	group(svg, "rank-order", &from, &to);
	n = fills(from, to, "cell", colours, 64);
	cr_assert_eq(n, 8);
	for (int i = 1; i < n; i++)
		cr_expect(close_colours(colours[i], colours[0], 16), "cell %d: %s and %s", i,
		          colours[i], colours[0]);
	group(svg, "tree", &from, &to);
	n = fills(from, to, "leaf", colours, 64);
	cr_assert_eq(n, 4);
	for (int i = 1; i < n; i++)
		cr_expect(close_colours(colours[i], colours[0], 16), "leaf %d: %s and %s", i,
		          colours[i], colours[0]);
	cr_expect(strstr(svg, ">bytes, log</text>") != NULL);
	cr_expect(strstr(svg, "linear from 0</text>") != NULL);
	cr_expect(strstr(svg, "rank 0 x rank 1: 1000 bytes") != NULL);
	free(svg);
}

/* --range states the matrices' scale; a bad one is refused. */
Test(cli_draw, a_stated_range)
{
	char out[MAXOUT];
	char *argv[] = {CLI,   "draw",    "--profile", RING8, "--topology",
	                TOPO8, "--range", "1:1e6",     "-o",  (char *)tmp("r.svg"),
	                NULL};
	char *bad[] = {CLI,   "draw", "--profile",          RING8, "--topology", TOPO8, "--range",
	               "5:1", "-o",   (char *)tmp("r.svg"), NULL};
	char *svg;

	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	svg = slurp(tmp("r.svg"), NULL);
	cr_expect(strstr(svg, ">top 1e+06</text>") && strstr(svg, ">1 or less</text>"), "legend");
	/* a matrix file's numbers have its own units */
	cr_expect(strstr(svg, ">matrix units, log</text>") != NULL);
	free(svg);
	cr_expect_eq(cli_run(bad, NULL, out, NULL, sizeof(out)), 2);
	cr_expect(strstr(out, "--range wants LO:HI") != NULL, "%s", out);
}

/* A tree with node names shows them. */
Test(cli_draw, nodes_have_their_names)
{
	char out[MAXOUT], spec[300];
	char *argv[] = {CLI,  "draw", "--profile",          RING8, "--topology",
	                spec, "-o",   (char *)tmp("n.svg"), NULL};
	char *svg;
	FILE *f = fopen(tmp("topology.conf"), "w");

	cr_assert_not_null(f);
	fputs("SwitchName=s0 Nodes=c[1-2]\nSwitchName=s1 Nodes=c[3-4]\nSwitchName=top "
	      "Switches=s[0-1]\n",
	      f);
	fclose(f);
	snprintf(spec, sizeof(spec), "cluster:%s,c[1-4],synthetic:pack:1 core:2 pu:1",
	         tmp("topology.conf"));
	cr_assert_eq(cli_run(argv, NULL, out, NULL, sizeof(out)), 0, "draw failed: %s", out);
	assert_well_formed(tmp("n.svg"));
	svg = slurp(tmp("n.svg"), NULL);
	for (int i = 1; i <= 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), ">c%d</text>", i);
		cr_expect(strstr(svg, name) != NULL, "%s", name);
	}
	cr_expect(strstr(svg, " on c1: rank ") != NULL, "leaf tooltips name their node");
	free(svg);
}
