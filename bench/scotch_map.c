/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scotch_map.c - the benchmark's yardstick: map a communication matrix onto
 * a tree-leaf machine with Scotch (Debian's libscotch), quality strategy,
 * 0 % imbalance, and print the result in our plain "RANK LEAF" format.
 *
 *   scotch_map --topology "tleaf h a0 c0 ..." --profile F.mtx
 *              [--allowed LEAVES] [--link hop|one|tleaf] [-o FILE]
 *
 * LEAVES is a comma list of leaves and ranges ("0-7,16,18-20") or @FILE
 * holding such lists/whitespace-separated leaves: a partial allocation,
 * given to Scotch as a sub-architecture (SCOTCH_archSub).
 *
 * Leaf numbering: Scotch's tleaf numbers terminals by their index at the
 * last level, i.e. depth first from the root like our trees. Levels of arity
 * 1 (which Scotch rejects) are dropped: that changes no leaf number.
 *
 * Link costs (--link): Scotch's tleaf distance between two domains is the
 * link cost of the level they sit at, so
 *   hop   (default) cost of a level = 2 x levels climbed to it, as hop-bytes
 *   one   every level 1 (what reference-figures.md used)
 *   tleaf the costs written in the tleaf string (rounded, at least 1)
 *
 * Scotch uses integer edge loads: weights are rounded to the nearest integer
 * (at least 1). The mapping is scored by our own evaluator, not by Scotch.
 * If Scotch ever puts two ranks on one leaf (it should not with 0 %
 * imbalance and unit vertex weights), the extra ranks are moved to the free
 * allowed leaves in order and stderr says how many ("repaired N").
 */
#include "bench/mtxread.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <scotch.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: scotch_map --topology TLEAF --profile FILE.mtx [--allowed LEAVES]\n"
	             "                  [--link hop|one|tleaf] [-o FILE]\n");
}

/* Append leaves from "a,b-c" or whitespace-separated text. */
static int parse_leaves(const char *s, int nleaves, unsigned char *mark, int *count)
{
	const char *p = s;
	while (*p) {
		char *end;
		if (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			p++;
			continue;
		}
		long a = strtol(p, &end, 10), b;
		if (end == p)
			return -1;
		p = end;
		b = a;
		if (*p == '-') {
			p++;
			b = strtol(p, &end, 10);
			if (end == p)
				return -1;
			p = end;
		}
		if (a < 0 || b < a || b >= nleaves)
			return -1;
		for (long x = a; x <= b; x++)
			if (!mark[x]) {
				mark[x] = 1;
				(*count)++;
			}
	}
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	if (!f)
		return NULL;
	do {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2 + 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap = cap * 2 + 8192;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	const char *topo = NULL, *profile = NULL, *allowed_spec = NULL, *link = "hop";
	const char *outpath = NULL;
	int arity[16], depth, sdepth = 0, n = 0, nleaves = 1, nallowed, rc = 1, repaired = 0;
	double cost[16];
	SCOTCH_Num sizetab[16], linktab[16];
	char err[512];
	bench_csr_t g = {0};
	unsigned char *mark = NULL, *used = NULL;
	int *vnumtab = NULL;
	SCOTCH_Num *verttab = NULL, *edgetab = NULL, *edlotab = NULL, *parttab = NULL;
	SCOTCH_Graph graph;
	SCOTCH_Arch arch, subarch;
	SCOTCH_Strat strat;
	int graph_ok = 0, arch_ok = 0, sub_ok = 0, strat_ok = 0;
	FILE *out = stdout;
	double t0, t_map;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--topology") && i + 1 < argc) {
			topo = argv[++i];
		} else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
			profile = argv[++i];
		} else if (!strcmp(argv[i], "--allowed") && i + 1 < argc) {
			allowed_spec = argv[++i];
		} else if (!strcmp(argv[i], "--link") && i + 1 < argc) {
			link = argv[++i];
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			outpath = argv[++i];
		} else {
			fprintf(stderr, "scotch_map: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!topo || !profile) {
		usage(stderr);
		return 2;
	}
	if (strcmp(link, "hop") && strcmp(link, "one") && strcmp(link, "tleaf")) {
		fprintf(stderr, "scotch_map: --link must be hop, one or tleaf\n");
		return 2;
	}
	depth = bench_parse_tleaf(topo, arity, cost, err, sizeof(err));
	if (depth < 0) {
		fprintf(stderr, "scotch_map: %s\n", err);
		return 2;
	}
	for (int l = 0; l < depth; l++) {
		if ((long)nleaves * arity[l] > (1L << 30)) {
			fprintf(stderr, "scotch_map: tree too large\n");
			return 2;
		}
		nleaves *= arity[l];
		if (arity[l] < 2)
			continue; /* Scotch rejects arity 1; dropping it renumbers nothing */
		sizetab[sdepth] = arity[l];
		if (!strcmp(link, "hop"))
			linktab[sdepth] = 2 * (depth - l);
		else if (!strcmp(link, "one"))
			linktab[sdepth] = 1;
		else
			linktab[sdepth] = cost[l] < 1 ? 1 : (SCOTCH_Num)llround(cost[l]);
		sdepth++;
	}
	if (sdepth == 0) {
		sizetab[0] = 1; /* a one-leaf machine: nothing to map */
		linktab[0] = 1;
	}

	t0 = now();
	if (bench_csr_load_mtx(profile, &g, err, sizeof(err))) {
		fprintf(stderr, "scotch_map: %s\n", err);
		goto out;
	}
	mark = calloc((size_t)nleaves, 1);
	used = calloc((size_t)nleaves, 1);
	if (!mark || !used)
		goto oom;
	nallowed = 0;
	if (allowed_spec) {
		char *text = NULL;
		int bad;
		if (allowed_spec[0] == '@') {
			text = slurp(allowed_spec + 1);
			if (!text) {
				fprintf(stderr, "scotch_map: %s: %s\n", allowed_spec + 1,
				        strerror(errno));
				goto out;
			}
		}
		bad = parse_leaves(text ? text : allowed_spec, nleaves, mark, &nallowed);
		free(text);
		if (bad) {
			fprintf(stderr,
			        "scotch_map: --allowed: expected leaves or ranges in 0..%d\n",
			        nleaves - 1);
			goto out;
		}
	} else {
		memset(mark, 1, (size_t)nleaves);
		nallowed = nleaves;
	}
	n = g.n;
	if (g.n > nallowed) {
		fprintf(stderr, "scotch_map: %d ranks but only %d allowed leaves\n", g.n, nallowed);
		goto out;
	}

	/* Scotch graph: CSR with integer loads. */
	verttab = malloc(((size_t)g.n + 1) * sizeof(*verttab));
	edgetab = malloc((g.nnz ? g.nnz : 1) * sizeof(*edgetab));
	edlotab = malloc((g.nnz ? g.nnz : 1) * sizeof(*edlotab));
	parttab = malloc(((size_t)g.n ? (size_t)g.n : 1) * sizeof(*parttab));
	vnumtab = malloc((size_t)nallowed * sizeof(*vnumtab));
	if (!verttab || !edgetab || !edlotab || !parttab || !vnumtab)
		goto oom;
	if (g.nnz > (size_t)INT32_MAX) {
		fprintf(stderr, "scotch_map: too many entries for 32-bit Scotch\n");
		goto out;
	}
	for (int i = 0; i <= g.n; i++)
		verttab[i] = (SCOTCH_Num)g.row_ptr[i];
	for (size_t k = 0; k < g.nnz; k++) {
		double v = llround(g.w[k]);
		edgetab[k] = g.col[k];
		edlotab[k] = v < 1 ? 1 : v > 1e9 ? 1000000000 : (SCOTCH_Num)v;
	}
	bench_csr_free(&g);
	for (int leaf = 0, k = 0; leaf < nleaves; leaf++)
		if (mark[leaf])
			vnumtab[k++] = leaf;

	if (SCOTCH_graphInit(&graph))
		goto scotch_fail;
	graph_ok = 1;
	if (SCOTCH_graphBuild(&graph, 0, n, verttab, NULL, NULL, NULL, verttab[n], edgetab,
	                      edlotab))
		goto scotch_fail;
	if (SCOTCH_archInit(&arch))
		goto scotch_fail;
	arch_ok = 1;
	if (SCOTCH_archTleaf(&arch, sdepth ? sdepth : 1, sizetab, linktab))
		goto scotch_fail;
	if (nallowed < nleaves) {
		if (SCOTCH_archInit(&subarch))
			goto scotch_fail;
		sub_ok = 1;
		if (SCOTCH_archSub(&subarch, &arch, nallowed, vnumtab))
			goto scotch_fail;
	}
	if (SCOTCH_stratInit(&strat))
		goto scotch_fail;
	strat_ok = 1;
	if (SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATQUALITY, nallowed, 0.0))
		goto scotch_fail;
	t_map = now();
	if (SCOTCH_graphMap(&graph, sub_ok ? &subarch : &arch, &strat, parttab))
		goto scotch_fail;
	t_map = now() - t_map;

	/* Terminal numbers of a sub-architecture are indices into vnumtab. */
	for (int r = 0; r < n; r++) {
		long term = parttab[r];
		if (term < 0 || term >= nallowed) {
			fprintf(stderr, "scotch_map: Scotch returned terminal %ld for rank %d\n",
			        term, r);
			goto out;
		}
		int leaf = vnumtab[term];
		if (used[leaf]) {
			parttab[r] = -1; /* repaired below */
			repaired++;
		} else {
			used[leaf] = 1;
			parttab[r] = leaf;
		}
	}
	for (int r = 0, next = 0; r < n; r++) {
		if (parttab[r] >= 0)
			continue;
		while (next < nallowed && used[vnumtab[next]])
			next++;
		parttab[r] = vnumtab[next];
		used[vnumtab[next]] = 1;
	}
	if (outpath) {
		out = fopen(outpath, "w");
		if (!out) {
			fprintf(stderr, "scotch_map: %s: %s\n", outpath, strerror(errno));
			goto out;
		}
	}
	fprintf(out, "# rank leaf (Scotch %d.%d.%d, quality strategy, 0%% imbalance)\n",
	        SCOTCH_VERSION, SCOTCH_RELEASE, SCOTCH_PATCHLEVEL);
	for (int r = 0; r < n; r++)
		fprintf(out, "%d %d\n", r, (int)parttab[r]);
	if ((out != stdout ? fclose(out) : fflush(out)) != 0) {
		fprintf(stderr, "scotch_map: write failed\n");
		goto out;
	}
	fprintf(stderr, "scotch_map: %d ranks, graphMap %.6f s, total %.6f s, repaired %d\n", n,
	        t_map, now() - t0, repaired);
	rc = 0;
	goto out;
scotch_fail:
	fprintf(stderr, "scotch_map: Scotch failed (see its message above)\n");
	goto out;
oom:
	fprintf(stderr, "scotch_map: out of memory\n");
out:
	if (strat_ok)
		SCOTCH_stratExit(&strat);
	if (sub_ok)
		SCOTCH_archExit(&subarch);
	if (arch_ok)
		SCOTCH_archExit(&arch);
	if (graph_ok)
		SCOTCH_graphExit(&graph);
	bench_csr_free(&g);
	free(mark);
	free(used);
	free(vnumtab);
	free(verttab);
	free(edgetab);
	free(edlotab);
	free(parttab);
	return rc;
}
