/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen.c - write one benchmark pattern as a Matrix Market file.
 *
 *   gen PATTERN N [--seed S] [--permute SEED] [-o FILE]
 *   gen --tree N            print the reference machine tree for N ranks
 *
 * Without -o the matrix goes to stdout.
 */
#include "bench/patterns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: gen PATTERN N [--seed S] [--permute SEED] [-o FILE]\n"
	             "       gen --tree N\n"
	             "patterns: stencil2d stencil3d cg alltoall hier random\n");
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
