/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * anneal.c - a slow search, to measure how far the default mapper is from
 * what a long search finds (bench/headroom.sh, bench-only).
 *
 *   anneal --topology TLEAF --profile F.mtx [--allowed @FILE] [--moves N]
 *          [--temperature T] [--seed S] [-o FILE]
 *
 * Maps the profile with the library's default mapper, then runs simulated
 * annealing from that placement: a move takes a random rank, one of its
 * neighbours and a random allowed leaf in a random subtree around that
 * neighbour, and swaps the rank there (or moves it, if the leaf is free);
 * it is accepted with the Metropolis rule. The temperature falls
 * geometrically from T (default: the median pair weight, so that moving one
 * typical pair one level apart is first accepted with probability 1/e) to
 * T / 1000 over N moves (default 40000 per rank). Prints the default's
 * hop-bytes and the best seen, both from tmatch_eval, and writes the best
 * placement ("RANK LEAF" lines) to FILE, so a caller can score it itself.
 *
 * This is an oracle, not a mapper: at the default budget it runs for
 * seconds to minutes where the default mapper takes milliseconds.
 */
#include "treematch/treematch.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct annealer {
	const tmatch_comm_t *comm;
	int n, depth, nleaves;
	long span[TMATCH_MAX_DEPTH + 1];
	const unsigned char *allowed; /* NULL: every leaf */
	int *leaf_of_rank, *rank_of_leaf;
	uint64_t rng[2];
};

static uint64_t next(struct annealer *a) /* xorshift128+ */
{
	uint64_t s1 = a->rng[0];
	const uint64_t s0 = a->rng[1];

	a->rng[0] = s0;
	s1 ^= s1 << 23;
	a->rng[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
	return a->rng[1] + s0;
}

static double unit(struct annealer *a)
{
	return (double)(next(a) >> 11) * (1.0 / 9007199254740992.0);
}

/* Levels climbed from leaf x to the common ancestor with leaf y. */
static int levels(const struct annealer *a, int x, int y)
{
	int l = a->depth;

	while (x / a->span[l] != y / a->span[l])
		l--;
	return a->depth - l;
}

/* Change of levels x weight when rank r goes to leaf lb, the rank there (if any) to r's leaf. */
static double delta(const struct annealer *a, int r, int lb)
{
	int la = a->leaf_of_rank[r], other = a->rank_of_leaf[lb];
	const int *cols;
	const double *w;
	double d = 0;
	int deg = tmatch_comm_row(a->comm, r, &cols, &w);

	for (int k = 0; k < deg; k++)
		if (cols[k] != other) {
			int lh = a->leaf_of_rank[cols[k]];
			d += w[k] * (levels(a, lb, lh) - levels(a, la, lh));
		}
	if (other < 0)
		return d;
	deg = tmatch_comm_row(a->comm, other, &cols, &w);
	for (int k = 0; k < deg; k++)
		if (cols[k] != r) {
			int lh = a->leaf_of_rank[cols[k]];
			d += w[k] * (levels(a, la, lh) - levels(a, lb, lh));
		}
	return d;
}

static void anneal(struct annealer *a, long moves, double t0, int *best_map)
{
	double cur = 0, best = 0;

	memcpy(best_map, a->leaf_of_rank, sizeof(int) * (size_t)a->n);
	for (long m = 0; m < moves; m++) {
		double t = t0 * pow(1e-3, (double)m / (double)moves), d;
		int r = (int)(next(a) % (uint64_t)a->n), h, up, lb, la, other;
		const int *cols;
		int deg = tmatch_comm_row(a->comm, r, &cols, NULL);
		long sp;

		if (deg <= 0)
			continue;
		h = cols[next(a) % (uint64_t)deg];
		up = 1 + (int)(next(a) % (uint64_t)a->depth);
		sp = a->span[a->depth - up];
		lb = (int)(a->leaf_of_rank[h] / sp * sp + (long)(next(a) % (uint64_t)sp));
		la = a->leaf_of_rank[r];
		if (lb == la || (a->allowed && !a->allowed[lb]))
			continue;
		d = delta(a, r, lb);
		if (d > 0 && unit(a) >= exp(-d / t))
			continue;
		other = a->rank_of_leaf[lb];
		a->leaf_of_rank[r] = lb;
		a->rank_of_leaf[lb] = r;
		a->rank_of_leaf[la] = other;
		if (other >= 0)
			a->leaf_of_rank[other] = la;
		cur += d;
		if (cur < best - 1e-9) {
			best = cur;
			memcpy(best_map, a->leaf_of_rank, sizeof(int) * (size_t)a->n);
		}
	}
}

/* "@FILE" holding leaf numbers separated by commas or white space. */
static int read_leaves(const char *arg, int nleaves, int **out, int *count)
{
	FILE *f;
	int c = 0, cap = 0, *l = NULL, v;

	if (arg[0] != '@') {
		fprintf(stderr, "anneal: --allowed takes @FILE\n");
		return -1;
	}
	f = fopen(arg + 1, "r");
	if (!f) {
		fprintf(stderr, "anneal: %s: %s\n", arg + 1, strerror(errno));
		return -1;
	}
	for (;;) {
		int ch = fgetc(f);
		if (ch == EOF)
			break;
		if (ch == ',' || ch == ' ' || ch == '\n' || ch == '\t')
			continue;
		ungetc(ch, f);
		if (fscanf(f, "%d", &v) != 1 || v < 0 || v >= nleaves) {
			fprintf(stderr, "anneal: %s: expected leaf numbers in 0..%d\n", arg + 1,
			        nleaves - 1);
			fclose(f);
			free(l);
			return -1;
		}
		if (c == cap) {
			int *nl = realloc(l, sizeof(int) * (size_t)(cap = cap * 2 + 64));
			if (!nl) {
				fclose(f);
				free(l);
				return -1;
			}
			l = nl;
		}
		l[c++] = v;
	}
	fclose(f);
	*out = l;
	*count = c;
	return 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Median weight over the stored pairs, 0 if none (or out of memory). */
static double median_weight(const tmatch_comm_t *comm)
{
	size_t nnz = tmatch_comm_nnz(comm), k = 0;
	double *all = nnz ? malloc(sizeof(double) * nnz) : NULL, med;

	if (!all)
		return 0;
	for (int i = 0; i < tmatch_comm_order(comm); i++) {
		const double *w;
		int deg = tmatch_comm_row(comm, i, NULL, &w);
		for (int j = 0; j < deg; j++)
			all[k++] = w[j];
	}
	qsort(all, k, sizeof(double), cmp_double);
	med = k ? all[k / 2] : 0;
	free(all);
	return med;
}

static double score(const tmatch_comm_t *comm, const tmatch_topo_t *topo, const int *map)
{
	tmatch_metrics_t m;
	tmatch_error_t err;

	return tmatch_eval(comm, topo, map, &m, &err) == 0 ? m.hop_bytes : -1;
}

int main(int argc, char **argv)
{
	const char *tree = NULL, *profile = NULL, *allowed_arg = NULL, *out_path = NULL;
	long moves = -1;
	double t0 = -1;
	uint64_t seed = 1;
	tmatch_error_t err;
	tmatch_map_opts_t opts;
	tmatch_topo_t *topo = NULL;
	tmatch_comm_t *comm = NULL;
	struct annealer a;
	int rc = 1, *leaves = NULL, count = 0, *best = NULL;
	unsigned char *allowed = NULL;

	memset(&a, 0, sizeof(a));
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--topology") && v)
			tree = v, i++;
		else if (!strcmp(argv[i], "--profile") && v)
			profile = v, i++;
		else if (!strcmp(argv[i], "--allowed") && v)
			allowed_arg = v, i++;
		else if (!strcmp(argv[i], "--moves") && v)
			moves = atol(v), i++;
		else if (!strcmp(argv[i], "--temperature") && v)
			t0 = atof(v), i++;
		else if (!strcmp(argv[i], "--seed") && v)
			seed = strtoull(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "-o") && v)
			out_path = v, i++;
		else {
			fprintf(stderr,
			        "usage: anneal --topology TLEAF --profile F.mtx [--allowed @FILE] "
			        "[--moves N] [--temperature T] [--seed S] [-o FILE]\n");
			return 2;
		}
	}
	if (!tree || !profile) {
		fprintf(stderr, "anneal: --topology and --profile are required\n");
		return 2;
	}
	tmatch_error_clear(&err);
	topo = tmatch_topo_from_tleaf(tree, &err);
	comm = topo ? tmatch_comm_load(profile, &err) : NULL;
	if (!topo || !comm) {
		char buf[600];
		fprintf(stderr, "anneal: %s\n", tmatch_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	a.comm = comm;
	a.n = tmatch_comm_order(comm);
	a.depth = tmatch_topo_depth(topo);
	a.nleaves = tmatch_topo_nb_leaves(topo);
	a.span[a.depth] = 1;
	for (int l = a.depth - 1; l >= 0; l--)
		a.span[l] = a.span[l + 1] * tmatch_topo_arity(topo, l);
	if (allowed_arg) {
		if (read_leaves(allowed_arg, a.nleaves, &leaves, &count) != 0 ||
		    tmatch_topo_set_allowed(topo, leaves, count, &err) != 0) {
			fprintf(stderr, "anneal: allowed leaves: %s\n", err.msg);
			goto out;
		}
		allowed = calloc((size_t)a.nleaves, 1);
		if (!allowed)
			goto out;
		for (int k = 0; k < count; k++)
			allowed[leaves[k]] = 1;
		a.allowed = allowed;
	}
	a.leaf_of_rank = malloc(sizeof(int) * (size_t)a.n);
	a.rank_of_leaf = malloc(sizeof(int) * (size_t)a.nleaves);
	best = malloc(sizeof(int) * (size_t)a.n);
	if (!a.leaf_of_rank || !a.rank_of_leaf || !best || a.depth < 1)
		goto out;
	tmatch_map_opts_init(&opts);
	if (tmatch_map_compute(comm, topo, &opts, a.leaf_of_rank, &err) != 0) {
		fprintf(stderr, "anneal: default mapper: %s\n", err.msg);
		goto out;
	}
	for (int lf = 0; lf < a.nleaves; lf++)
		a.rank_of_leaf[lf] = -1;
	for (int r = 0; r < a.n; r++)
		a.rank_of_leaf[a.leaf_of_rank[r]] = r;
	if (moves < 0)
		moves = 40000L * a.n;
	if (t0 <= 0 && (t0 = median_weight(comm)) <= 0)
		t0 = 1;
	a.rng[0] = seed * 0x9e3779b97f4a7c15ULL + 1;
	a.rng[1] = seed ^ 0xda942042e4dd58b5ULL;
	printf("default %.10g\n", score(comm, topo, a.leaf_of_rank));
	anneal(&a, moves, t0, best);
	if (tmatch_map_validate(topo, best, a.n, &err) != 0) {
		fprintf(stderr, "anneal: internal error, invalid placement: %s\n", err.msg);
		goto out;
	}
	printf("annealed %.10g\nmoves %ld\ntemperature %g\n", score(comm, topo, best), moves, t0);
	if (out_path) {
		FILE *f = fopen(out_path, "w");
		if (!f) {
			fprintf(stderr, "anneal: %s: %s\n", out_path, strerror(errno));
			goto out;
		}
		if (tmatch_map_write(f, NULL, best, a.n, NULL) < 0) {
			fclose(f);
			goto out;
		}
		if (fclose(f) != 0)
			goto out;
	}
	rc = 0;
out:
	tmatch_topo_destroy(topo);
	tmatch_comm_destroy(comm);
	free(leaves);
	free(allowed);
	free(a.leaf_of_rank);
	free(a.rank_of_leaf);
	free(best);
	return rc;
}
