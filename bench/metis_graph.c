/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metis_graph.c - a profile as a METIS graph file, the input of the peer
 * mappers `make bench-peers` compares with (SharedMap, KaHIP's process
 * mapping, VieM).
 *
 *   metis_graph PROFILE OUT.graph [VERTICES]
 *
 * PROFILE is anything `treematch map` reads (.mtx, .mat, .yml); the matrix
 * is the one our mappers see (both directions of a pair summed). VERTICES
 * (at least the ranks) pads the graph with vertices without edges: the
 * peers place exactly one vertex per PE, so fewer ranks than leaves (a
 * partial allocation) reach them as that many ranks plus idle ones. The file:
 * "n m 001" (edge weights) then, per vertex, "neighbour weight ..." (1-based). METIS formats
 * take integer weights, and KaHIP's refinement keeps its gains in bucket
 * queues as large as the largest gain: byte counts as they are (up to 1e9
 * per pair in recorded profiles) made kaffpa take 13 s on 64 ranks, 0.3 s
 * once scaled. So weights are scaled down so that the largest is at most
 * WEIGHT_MAX, rounded, at least 1 (a pair below 1/WEIGHT_MAX of the largest
 * counts as that much); the scale goes to stderr. The peers only read this
 * file to choose; every placement is then scored on the original profile by
 * our evaluator.
 */
#include "placement/inputs.h"
#include "treematch/treematch_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define WEIGHT_MAX 65536.0

int main(int argc, char **argv)
{
	tmatch_error_t err;
	tmatch_comm_t *c;
	double scale = 1;
	FILE *f;
	int rc = 1;
	long nv = 0;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: metis_graph PROFILE OUT.graph [VERTICES]\n");
		return 2;
	}
	tmatch_error_clear(&err);
	c = tmatch_place_comm_load(argv[1], NULL, NULL, &err);
	if (!c) {
		fprintf(stderr, "metis_graph: %s\n", err.msg);
		return 1;
	}
	if (argc == 4) {
		char *end;

		nv = strtol(argv[3], &end, 10);
		if (*end || end == argv[3] || nv < c->n || nv > (1L << 30)) {
			fprintf(stderr,
			        "metis_graph: VERTICES must be a number from %d (the ranks)\n",
			        c->n);
			goto out;
		}
	}
	if (nv < c->n)
		nv = c->n;
	for (size_t k = 0; k < c->nnz; k++)
		if (c->w[k] * scale > WEIGHT_MAX)
			scale = WEIGHT_MAX / c->w[k];
	f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		goto out;
	}
	fprintf(f, "%ld %zu 001\n", nv, c->nnz / 2); /* 001: edge weights */
	for (int i = 0; i < c->n; i++) {
		for (size_t k = c->row_ptr[i]; k < c->row_ptr[i + 1]; k++) {
			double w = floor(c->w[k] * scale + 0.5);
			fprintf(f, "%s%d %.0f", k > c->row_ptr[i] ? " " : "", c->col[k] + 1,
			        w < 1 ? 1 : w);
		}
		fputc('\n', f);
	}
	for (long i = c->n; i < nv; i++) /* idle vertices: empty lines */
		fputc('\n', f);
	if (fclose(f) != 0) {
		perror(argv[2]);
		goto out;
	}
	fprintf(stderr, "metis_graph: %d vertices, %zu edges, weights x %.6g\n", c->n, c->nnz / 2,
	        scale);
	rc = 0;
out:
	tmatch_comm_destroy(c);
	return rc;
}
