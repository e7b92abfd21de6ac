/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_greedy.c - greedy graph embedding (Hoefler and Snir 2011, Algorithm 1) on
 * a machine tree.
 *
 * The heaviest unplaced rank (largest sum of its edge weights) starts a
 * component; then the heaviest edge from a placed rank to an unplaced one is
 * taken from a priority queue and the unplaced end goes on the free leaf
 * nearest to its placed partner. On a tree the nearest free leaf is found by
 * climbing to the lowest ancestor that still has room (the capacity of a
 * subtree is its number of free allowed leaves) and descending into the
 * first child with room; the "shortest path" of the paper is this climb, and
 * a subtree's capacity is the only link capacity a balanced tree carries.
 * Cost O(nnz log nnz + n x depth x arity).
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct edge {
	double w;
	int from; /* placed rank */
	int to;   /* unplaced rank */
};

/* Heap order: heavier first, then lower `to`, then lower `from`. */
static int before(const struct edge *a, const struct edge *b)
{
	if (a->w != b->w)
		return a->w > b->w;
	if (a->to != b->to)
		return a->to < b->to;
	return a->from < b->from;
}

static void heap_push(struct edge *h, size_t *len, struct edge e)
{
	size_t i = (*len)++;

	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&e, &h[p]))
			break;
		// the heap holds at most the edges it was allocated for
		// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		h[i] = h[p];
		i = p;
	}
	// as above
	// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
	h[i] = e;
}

static struct edge heap_pop(struct edge *h, size_t *len)
{
	struct edge top = h[0], last = h[--(*len)];
	size_t i = 0, n = *len;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n > 0)
		h[i] = last;
	return top;
}

struct freetree {
	const struct tmatch_topo *t;
	int depth; /* t->depth read once (for the analyser, leaf_of_rank may alias t) */
	int *count[TMATCH_MAX_DEPTH + 1]; /* free allowed leaves under node i at depth l */
};

static void take_leaf(struct freetree *f, int leaf)
{
	for (int l = 0; l <= f->depth; l++)
		f->count[l][leaf / f->t->span[l]]--;
}

/* The free allowed leaf nearest to `near` (lowest common ancestor deepest), or -1. */
static int nearest_free(const struct freetree *f, int near)
{
	const struct tmatch_topo *t = f->t;
	int l = f->depth, node;

	while (l >= 0 && f->count[l][near / t->span[l]] == 0)
		l--;
	if (l < 0)
		return -1;
	node = near / t->span[l];
	/* Descend: prefer the child towards `near`, else the first child with room. */
	for (; l < f->depth; l++) {
		int ar = t->arity[l], towards = near / t->span[l + 1], next = -1;
		if (towards / ar == node && f->count[l + 1][towards] > 0) {
			next = towards;
		} else {
			for (int i = 0; i < ar; i++)
				if (f->count[l + 1][node * ar + i] > 0) {
					next = node * ar + i;
					break;
				}
		}
		node = next;
	}
	return node;
}

/*
 * Where a new component starts: descend from the root into the child with
 * the most free leaves (ties: lowest), so that it has room to grow.
 */
static int roomiest_free(const struct freetree *f)
{
	const struct tmatch_topo *t = f->t;
	int node = 0;

	if (f->count[0][0] == 0)
		return -1;
	for (int l = 0; l < f->depth; l++) {
		int ar = t->arity[l], best = node * ar;
		for (int i = 1; i < ar; i++)
			if (f->count[l + 1][node * ar + i] > f->count[l + 1][best])
				best = node * ar + i;
		node = best;
	}
	return node;
}

int tmatch__map_greedy(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                       const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	const struct tmatch_comm *c = comm;
	struct freetree f;
	int n = c->n, rc = -1, next_heavy = 0;
	int *order = NULL;
	double *vw = NULL;
	struct edge *heap = NULL;
	size_t hlen = 0;

	(void)opts;
	memset(&f, 0, sizeof(f));
	f.t = topo;
	f.depth = topo->depth;
	if (f.depth < 0 || f.depth > TMATCH_MAX_DEPTH) { /* tmatch_topo_create's bounds */
		tmatch_error_set(err, 0, NULL, 0, 0, "greedy: tree depth %d out of range", f.depth);
		errno = EINVAL;
		return -1;
	}
	if (n == 0)
		return 0;
	for (int l = 0; l <= f.depth; l++) {
		f.count[l] = calloc((size_t)(topo->nb_leaves / topo->span[l]), sizeof(int));
		if (!f.count[l])
			goto nomem;
	}
	for (int lf = 0; lf < topo->nb_leaves; lf++)
		if (!topo->allowed || topo->allowed[lf])
			for (int l = 0; l <= f.depth; l++)
				f.count[l][lf / topo->span[l]]++;
	order = malloc(sizeof(*order) * (size_t)n);
	vw = calloc((size_t)n, sizeof(*vw));
	heap = malloc(sizeof(*heap) * (c->nnz ? c->nnz : 1));
	if (!order || !vw || !heap)
		goto nomem;
	for (int q = 0; q < n; q++) {
		order[q] = q;
		leaf_of_rank[q] = -1;
		for (size_t k = c->row_ptr[q]; k < c->row_ptr[q + 1]; k++)
			vw[q] += c->w[k];
	}
	/* Ranks by decreasing weight, ties by lowest rank (merge sort for determinism). */
	{
		int *tmp = malloc(sizeof(*tmp) * (size_t)n);
		if (!tmp)
			goto nomem;
		for (int width = 1; width < n; width *= 2)
			for (int lo = 0; lo < n; lo += 2 * width) {
				int mid = lo + width < n ? lo + width : n;
				int hi = lo + 2 * width < n ? lo + 2 * width : n;
				int i = lo, j = mid, o = lo;
				while (i < mid && j < hi)
					tmp[o++] =
					    vw[order[j]] > vw[order[i]] ? order[j++] : order[i++];
				while (i < mid)
					tmp[o++] = order[i++];
				while (j < hi)
					tmp[o++] = order[j++];
				memcpy(order + lo, tmp + lo, sizeof(int) * (size_t)(hi - lo));
			}
		free(tmp);
	}
	for (int placed = 0; placed < n;) {
		int m, from = -1, lf;

		if (hlen > 0) {
			struct edge e = heap_pop(heap, &hlen);
			if (leaf_of_rank[e.to] >= 0)
				continue;
			m = e.to;
			from = e.from;
		} else {
			// a rank is unplaced while placed < n
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			while (leaf_of_rank[order[next_heavy]] >= 0)
				next_heavy++;
			m = order[next_heavy];
		}
		/* next to its placed partner; a new component where there is most room */
		lf = from >= 0 ? nearest_free(&f, leaf_of_rank[from]) : roomiest_free(&f);
		leaf_of_rank[m] = lf;
		take_leaf(&f, lf);
		placed++;
		for (size_t k = c->row_ptr[m]; k < c->row_ptr[m + 1]; k++)
			if (leaf_of_rank[c->col[k]] < 0) {
				struct edge e = {c->w[k], m, c->col[k]};
				heap_push(heap, &hlen, e);
			}
	}
	rc = 0;
	goto out;
nomem:
	tmatch_error_set(err, 0, NULL, 0, 0, "greedy: out of memory");
	errno = ENOMEM;
out:
	for (int l = 0; l <= f.depth; l++)
		free(f.count[l]);
	free(order);
	free(vw);
	free(heap);
	return rc;
}
