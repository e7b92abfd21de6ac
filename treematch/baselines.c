/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * baselines.c - the mappings everything else is compared with: packed
 * (rank i on the i-th allowed leaf), round-robin over the top level first,
 * and a seeded random permutation of the allowed leaves.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <stdlib.h>

static int *allowed_list(const tmatch_topo_t *topo, tmatch_error_t *err)
{
	int *list = malloc(sizeof(*list) * (size_t)(topo->nb_allowed ? topo->nb_allowed : 1));
	int k = 0;

	if (!list) {
		tmatch__error_set(err, NULL, 0, 0, "out of memory");
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
 * The round-robin position of a leaf: its digits (child index at each
 * level) read with the top level as the least significant one, so that
 * consecutive positions differ first at the top of the tree.
 */
static long long rr_key(const tmatch_topo_t *topo, int leaf)
{
	long long key = 0, weight = 1;
	for (int l = 0; l < topo->depth; l++) {
		key += (long long)((leaf / topo->span[l + 1]) % topo->arity[l]) * weight;
		weight *= topo->arity[l];
	}
	return key;
}

struct keyed {
	long long key;
	int leaf;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

int tmatch__map_rr(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                   const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	struct keyed *k;
	int cnt = 0;

	(void)opts;
	if (!topo->allowed) {
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
	k = malloc(sizeof(*k) * (size_t)(topo->nb_allowed ? topo->nb_allowed : 1));
	if (!k) {
		tmatch__error_set(err, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	for (int leaf = 0; leaf < topo->nb_leaves; leaf++)
		if (topo->allowed[leaf]) {
			k[cnt].key = rr_key(topo, leaf);
			k[cnt++].leaf = leaf;
		}
	qsort(k, (size_t)cnt, sizeof(*k), cmp_keyed); /* keys are distinct */
	for (int r = 0; r < comm->n; r++)
		leaf_of_rank[r] = k[r].leaf;
	free(k);
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
		int t = list[r];
		list[r] = list[j];
		list[j] = t;
		leaf_of_rank[r] = list[r];
	}
	free(list);
	return 0;
}
