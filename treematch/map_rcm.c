/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_rcm.c - reverse Cuthill-McKee mapping (Hoefler and Snir 2011, 3.3).
 *
 * The communication graph is renumbered by reverse Cuthill-McKee (per
 * connected component: start from a pseudo-peripheral vertex of low degree,
 * breadth first, neighbours by increasing degree, ties by lowest rank; the
 * whole order reversed). The machine side is the same transformation applied
 * to the tree restricted to its allowed leaves: on a tree, a Cuthill-McKee
 * order of the leaves visits whole subtrees one after the other, i.e. it is a
 * depth-first leaf order; children are taken by decreasing number of allowed
 * leaves (the roomiest first, as Cuthill-McKee orders by degree), and the
 * i-th rank of the RCM order goes to the i-th leaf of that order. Leaving
 * out the leaves that are not allowed is the paper's "remove vertices with
 * C(v) = 0".
 * O(nnz log degree + leaves).
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int degree(const struct tmatch_comm *c, int v)
{
	return (int)(c->row_ptr[v + 1] - c->row_ptr[v]);
}

/*
 * Breadth-first from `root` over unvisited vertices (mark == stamp means
 * visited in this run); appends to queue from *len. Neighbours by
 * increasing degree, ties by lowest index. Returns the last vertex and
 * sets *ecc to the number of levels.
 */
static int bfs(const struct tmatch_comm *c, int root, int *queue, int *len, int *mark, int stamp,
               int *nbr, int *ecc)
{
	int head = *len, level_end, levels = 0;

	queue[(*len)++] = root;
	mark[root] = stamp;
	level_end = *len;
	while (head < *len) {
		int v = queue[head++], nn = 0;
		for (size_t k = c->row_ptr[v]; k < c->row_ptr[v + 1]; k++)
			if (mark[c->col[k]] != stamp) {
				mark[c->col[k]] = stamp;
				// each vertex is marked once: at most n in nbr
				// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
				nbr[nn++] = c->col[k];
			}
		/* insertion sort by (degree, index): degrees are small in practice */
		for (int i = 1; i < nn; i++) {
			int x = nbr[i], dx = degree(c, x), j = i;
			while (j > 0 && (degree(c, nbr[j - 1]) > dx ||
			                 (degree(c, nbr[j - 1]) == dx && nbr[j - 1] > x))) {
				nbr[j] = nbr[j - 1];
				j--;
			}
			nbr[j] = x;
		}
		for (int i = 0; i < nn; i++)
			// and at most n in the queue
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			queue[(*len)++] = nbr[i];
		if (head == level_end && head < *len) {
			levels++;
			level_end = *len;
		}
	}
	*ecc = levels;
	return queue[*len - 1];
}

/*
 * Allowed leaves under node `node` at depth l, appended to out[*len]:
 * depth first, children with the most allowed leaves first (ties: lowest),
 * so the first ranks land where there is the most room together.
 */
static void leaf_order(const struct tmatch_topo *t, const int *prefix, int l, int node, int *out,
                       int *len, int want)
{
	int ar, order[64], *ord = order;

	if (*len >= want || prefix[(node + 1) * t->span[l]] == prefix[node * t->span[l]])
		return;
	if (l == t->depth) {
		out[(*len)++] = node;
		return;
	}
	ar = t->arity[l];
	if (ar > 64) {
		ord = malloc(sizeof(int) * (size_t)ar);
		if (!ord) { /* fall back to plain depth-first order */
			for (int i = 0; i < ar; i++)
				leaf_order(t, prefix, l + 1, node * ar + i, out, len, want);
			return;
		}
	}
	for (int i = 0; i < ar; i++) {
		int x = node * ar + i, sp = t->span[l + 1], j = i;
		int cx = prefix[(x + 1) * sp] - prefix[x * sp];
		while (j > 0 && prefix[(ord[j - 1] + 1) * sp] - prefix[ord[j - 1] * sp] < cx) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = x;
	}
	for (int i = 0; i < ar; i++)
		leaf_order(t, prefix, l + 1, ord[i], out, len, want);
	if (ord != order)
		free(ord);
}

int tmatch__map_rcm(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                    const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	const struct tmatch_comm *c = comm;
	int n = c->n, rc = -1, len = 0, stamp = 0, maxdeg = 0;
	int *queue = NULL, *mark = NULL, *nbr = NULL, *prefix = NULL, *leaves = NULL, nleaves = 0;

	(void)opts;
	if (n == 0)
		return 0;
	for (int v = 0; v < n; v++)
		if (degree(c, v) > maxdeg)
			maxdeg = degree(c, v);
	queue = malloc(sizeof(int) * (size_t)n);
	mark = calloc((size_t)n, sizeof(int));
	nbr = malloc(sizeof(int) * (size_t)(maxdeg + 1));
	prefix = malloc(sizeof(int) * ((size_t)topo->nb_leaves + 1));
	leaves = calloc((size_t)n, sizeof(int)); /* leaf_order() fills n of them */
	if (!queue || !mark || !nbr || !prefix || !leaves) {
		tmatch_error_set(err, 0, NULL, 0, 0, "rcm: out of memory");
		errno = ENOMEM;
		goto out;
	}
	/* mark: 0 = unvisited; final visits use stamp -1; probes use positive stamps. */
	for (int s = 0; s < n; s++) {
		int root = s, ecc = -1, base = len;
		if (mark[s] == -1)
			continue;
		/* Lowest degree vertex of the component, found with a probe BFS. */
		{
			int probe_len = base, e;
			stamp++;
			bfs(c, s, queue, &probe_len, mark, stamp, nbr, &e);
			for (int i = base; i < probe_len; i++)
				if (degree(c, queue[i]) < degree(c, root) ||
				    (degree(c, queue[i]) == degree(c, root) && queue[i] < root))
					root = queue[i];
		}
		/* Pseudo-peripheral: move to the far end while the eccentricity grows. */
		for (int iter = 0; iter < 8; iter++) {
			int probe_len = base, e, far;
			stamp++;
			far = bfs(c, root, queue, &probe_len, mark, stamp, nbr, &e);
			if (e <= ecc)
				break;
			ecc = e;
			if (far == root)
				break;
			root = far;
		}
		bfs(c, root, queue, &len, mark, -1, nbr, &ecc);
	}
	/* Reverse, then the i-th rank takes the i-th leaf of the machine order. */
	prefix[0] = 0;
	for (int lf = 0; lf < topo->nb_leaves; lf++)
		prefix[lf + 1] = prefix[lf] + (!topo->allowed || topo->allowed[lf]);
	leaf_order(topo, prefix, 0, 0, leaves, &nleaves, n);
	for (int i = 0; i < n; i++)
		leaf_of_rank[queue[n - 1 - i]] = leaves[i];
	rc = 0;
out:
	free(prefix);
	free(leaves);
	free(queue);
	free(mark);
	free(nbr);
	return rc;
}
