/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen.c - write one benchmark pattern as a Matrix Market file.
 *
 *   gen PATTERN N [--seed S] [--permute SEED] [-o FILE]
 *   gen --tree N            print the reference machine tree for N ranks
 *   gen --bound PATTERN N ARITY...   a proven lower bound on the hop-bytes of
 *                           any placement of the stencil on the full tree of
 *                           these arities (top down; unit cost per level)
 *   gen --min-cut PATTERN N SIZE     the fewest stencil edges any split into
 *                           parts of SIZE ranks cuts (e.g. one per switch)
 *
 * Without -o the matrix goes to stdout.
 */
#include "bench/patterns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: gen PATTERN N [--seed S] [--permute SEED] [-o FILE]\n"
	        "       gen --tree N\n"
	        "       gen --bound stencil2d|stencil3d N ARITY...\n"
	        "       gen --min-cut stencil2d|stencil3d N SIZE\n"
	        "patterns: stencil2d stencil3d cg alltoall hier random geometric mesh powerlaw\n");
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/*
 * --bound and --min-cut: argv[2] the pattern, argv[3] N, then the arities
 * (--bound) or the part size (--min-cut). Prints one number.
 */
static int bounds(int argc, char **argv)
{
	int arity[32], depth = argc - 4, *leaves = NULL;
	long n, v, span = 1;
	double lb;

	if (depth < 1 || depth > 32 || parse_int(argv[3], 2, 1L << 30, &n))
		goto bad;
	for (int l = 0; l < depth; l++) {
		if (parse_int(argv[4 + l], 1, 1L << 30, &v))
			goto bad;
		arity[l] = (int)v;
		span *= v;
		if (span > n)
			goto bad;
	}
	if (!strcmp(argv[1], "--min-cut")) {
		if (depth != 1)
			goto bad;
		lb = (double)bench_stencil_min_cut(argv[2], (int)n, arity[0]);
	} else {
		if (span != n) {
			fprintf(stderr, "gen: the arities must multiply to N\n");
			return 2;
		}
		leaves = malloc((size_t)n * sizeof(*leaves));
		if (!leaves) {
			fprintf(stderr, "gen: out of memory\n");
			return 1;
		}
		for (int i = 0; i < n; i++)
			leaves[i] = i;
		lb = bench_stencil_lower_bound(argv[2], (int)n, arity, depth, leaves, (int)n);
		free(leaves);
	}
	if (lb < 0) {
		fprintf(stderr,
		        "gen: %s %ld: no bound (stencil2d or stencil3d, sizes dividing N)\n",
		        argv[2], n);
		return 2;
	}
	printf("%.0f\n", lb);
	return 0;
bad:
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *pattern = NULL, *out = "-";
	long n = -1, seed = 42, pseed = -1, v;
	char err[256], tree[128];
	int *perm = NULL, rc = 1;

	if (argc == 3 && !strcmp(argv[1], "--tree")) {
		if (parse_int(argv[2], 8, 1L << 30, &n) || n % 8) {
			fprintf(stderr, "gen: --tree needs a multiple of 8\n");
			return 2;
		}
		bench_reference_tree((int)n, tree, sizeof(tree));
		puts(tree);
		return 0;
	}
	if (argc >= 5 && (!strcmp(argv[1], "--bound") || !strcmp(argv[1], "--min-cut")))
		return bounds(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			if (parse_int(argv[++i], 0, 1L << 62, &seed))
				goto bad;
		} else if (!strcmp(argv[i], "--permute") && i + 1 < argc) {
			if (parse_int(argv[++i], 0, 1L << 62, &pseed))
				goto bad;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!pattern) {
			pattern = argv[i];
		} else if (n < 0 && !parse_int(argv[i], 2, 1L << 30, &v)) {
			n = v;
		} else {
			goto bad;
		}
	}
	if (!pattern || n < 0)
		goto bad;
	if (pseed >= 0) {
		perm = malloc((size_t)n * sizeof(*perm));
		if (!perm) {
			fprintf(stderr, "gen: out of memory\n");
			return 1;
		}
		bench_permutation((int)n, (uint64_t)pseed, perm);
	}
	if (bench_pattern_write_mtx(pattern, (int)n, (uint64_t)seed, perm, out, NULL, err,
	                            sizeof(err))) {
		fprintf(stderr, "gen: %s\n", err);
		goto out;
	}
	rc = 0;
out:
	free(perm);
	return rc;
bad:
	usage(stderr);
	return 2;
}
