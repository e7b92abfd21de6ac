/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_baselines.c - the mappings everything else is compared with: packed
 * (rank i on the i-th allowed leaf), round-robin over the top level first,
 * and a seeded random permutation of the allowed leaves.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <stdlib.h>

static int *allowed_list(const tmatch_topo_t *topo, tmatch_error_t *err)
{
	int *list = calloc((size_t)(topo->nb_allowed ? topo->nb_allowed : 1), sizeof(*list));
	int k = 0;

	if (!list) {
		tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	for (int leaf = 0; leaf < topo->nb_leaves && k < topo->nb_allowed; leaf++)
		if (!topo->allowed || topo->allowed[leaf])
			list[k++] = leaf;
	return list;
}

int tmatch__map_packed(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                       const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	(void)opts;
	(void)err;
	for (int r = 0, leaf = 0; r < comm->n; leaf++)
		if (!topo->allowed || topo->allowed[leaf])
			leaf_of_rank[r++] = leaf;
	return 0;
}

/*
 * Allowed leaves under node v (depth l) in round-robin order: the orders of
 * its children, interleaved one leaf at a time, so consecutive positions go
 * to different children for as long as several still have free leaves.
 * Writes them to out and returns how many.
 */
static int rr_order(const tmatch_topo_t *topo, int l, int v, int *out, int *scratch)
{
	int k, cnt = 0, *start, *len, total = 0;

	if (l == topo->depth) {
		if (topo->allowed[v])
			out[cnt++] = v;
		return cnt;
	}
	k = topo->arity[l];
	if (k == 1)
		return rr_order(topo, l + 1, v, out, scratch);
	start = malloc(sizeof(int) * 2 * (size_t)k);
	if (!start)
		return -1;
	len = start + k;
	/* children's orders, one after the other, in scratch */
	for (int c = 0; c < k; c++) {
		start[c] = total;
		len[c] = rr_order(topo, l + 1, v * k + c, scratch + total, out);
		if (len[c] < 0) {
			free(start);
			return -1;
		}
		total += len[c];
	}
	for (int round = 0; cnt < total; round++)
		for (int c = 0; c < k; c++)
			if (round < len[c])
				out[cnt++] = scratch[start[c] + round];
	free(start);
	return cnt;
}

int tmatch__map_rr(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                   const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	int *order, *scratch;

	(void)opts;
	if (!topo->allowed) {
		/* digits of the rank, top level least significant */
		for (int r = 0; r < comm->n; r++) {
			int leaf = 0, rest = r;
			for (int l = 0; l < topo->depth; l++) {
				leaf += (rest % topo->arity[l]) * topo->span[l + 1];
				rest /= topo->arity[l];
			}
			leaf_of_rank[r] = leaf;
		}
		return 0;
	}
	/* zeroed: rr_order() swaps the two buffers level by level, every read
	   position has been written, and clang-analyzer cannot follow the swap */
	order = calloc((size_t)topo->nb_allowed + 1, sizeof(int));
	scratch = calloc((size_t)topo->nb_allowed + 1, sizeof(int));
	if (!order || !scratch || rr_order(topo, 0, 0, order, scratch) < 0) {
		free(order);
		free(scratch);
		tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	for (int r = 0; r < comm->n; r++)
		leaf_of_rank[r] = order[r];
	free(order);
	free(scratch);
	return 0;
}

int tmatch__map_random(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                       const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	tmatch__rng_t rng;
	int *list = allowed_list(topo, err), a = topo->nb_allowed;

	if (!list)
		return -1;
	tmatch__rng_seed(&rng, opts->seed);
	/* Fisher-Yates, stopped once the first n places are drawn. */
	for (int r = 0; r < comm->n; r++) {
		int j = r + (int)tmatch__rng_below(&rng, (uint64_t)(a - r));
		// r < comm->n <= nb_allowed, the list's length (the mapper contract), and j < a
		// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		int t = list[r];
		// j = r + below(a - r) < a
		// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		list[r] = list[j];
		list[j] = t;
		leaf_of_rank[r] = list[r];
	}
	free(list);
	return 0;
}
