/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_bisect.c - recursive partitioning of ranks and machine together.
 *
 * Top down over the tree: at a node, the ranks assigned to it are split
 * among its children with minimum weighted cut and exact sizes, then each
 * child is handled the same way. A child's capacity is the number of allowed
 * leaves under it (partial nodes, padded trees); with fewer ranks than
 * leaves the children with the most room are filled first, so the ranks stay
 * as close together as the machine allows. All children of a node are at the
 * same distance from each other, so which part goes to which child does not
 * change the cost at this level.
 *
 * The split itself is METIS's multilevel recursive bisection (explicit seed,
 * so deterministic) followed by an exact-balance repair that moves the
 * vertices whose move costs least. METIS needs integer weights: they are
 * scaled so that the largest is about 2^20 and every non-zero weight stays
 * at least 1.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <math.h>
#include <metis.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Segments of at most this many ranks are bisected exactly. */
#define SMALL_EXACT 14
/* Two-stage groupings are tried on segments up to this many ranks. */
#define GROUPED_MAX 65536
/* ... at nodes of at most this many children (the groupings multiply). */
#define GROUPED_ARITY 32
/* ... and, inside another alternative, on segments up to this many. */
#define NESTED_MAX 512

static pthread_mutex_t metis_lock = PTHREAD_MUTEX_INITIALIZER;

struct bisector {
	const struct tmatch_comm *c;
	const struct tmatch_topo *t;
	uint64_t seed;
	int ncuts;           /* METIS tries this many bisections and keeps the best */
	int nested;          /* inside an alternative of best_split: primary split only */
	int *perm;           /* ranks, each tree node owns a contiguous segment */
	int *loc;            /* rank -> local index in the current subgraph, -1 outside */
	int *allowed_prefix; /* allowed leaves in [0, i) */
	int *part, *tmp;
	idx_t *xadj, *adj, *adjw;
	double *conn; /* per part, for the balance repair */
	int *touched;
	int *leaf_of_rank;
};

static int capacity(const struct bisector *b, int l, int node)
{
	int span = b->t->span[l];

	return b->allowed_prefix[(node + 1) * span] - b->allowed_prefix[node * span];
}

/* A graph in METIS's CSR form (local vertex numbers). */
struct graph {
	int m;
	idx_t *xadj, *adj, *adjw;
};

struct move {
	double gain;
	int v, q;
};

static int move_order(const void *pa, const void *pb)
{
	const struct move *a = pa, *b = pb;

	if (a->gain != b->gain)
		return a->gain > b->gain ? -1 : 1;
	return a->v - b->v;
}

/*
 * Make part sizes exactly `target`. In rounds: every vertex of an overfull
 * part gets its best move to an underfull part (largest gain = weight to
 * that part minus weight to its own; any underfull part when it has no edge
 * to one), then the moves are applied best first while the source is still
 * overfull and the destination still has room. O(segment x degree) per
 * round; METIS leaves little excess, so one or two rounds do.
 */
static int repair_balance(struct bisector *b, const struct graph *g, int k, const int *target,
                          int *size, int *part)
{
	struct move *mv = NULL;
	int rc = -1;

	for (;;) {
		int first_under = -1, nm = 0, moved = 0;

		for (int q = 0; q < k && first_under < 0; q++)
			if (size[q] < target[q])
				first_under = q;
		if (first_under < 0)
			break;
		for (int v = 0; v < g->m; v++) {
			int p = part[v], nt = 0, best_q = first_under;
			double own = 0, best;
			if (size[p] <= target[p])
				continue;
			if (!mv) {
				mv = malloc(sizeof(*mv) * (size_t)g->m);
				if (!mv) {
					errno = ENOMEM;
					goto out;
				}
			}
			for (idx_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
				int q = part[g->adj[e]];
				if (q == p) {
					own += (double)g->adjw[e];
				} else if (size[q] < target[q]) {
					if (b->conn[q] == 0)
						b->touched[nt++] = q;
					b->conn[q] += (double)g->adjw[e];
				}
			}
			best = -own;
			for (int i = 0; i < nt; i++) {
				int q = b->touched[i];
				if (b->conn[q] - own > best ||
				    (q < best_q && b->conn[q] - own == best)) {
					best = b->conn[q] - own;
					best_q = q;
				}
				b->conn[q] = 0;
			}
			mv[nm].gain = best;
			mv[nm].v = v;
			mv[nm].q = best_q;
			nm++;
		}
		if (nm > 0) /* mv is still NULL when no vertex was over its target */
			qsort(mv, (size_t)nm, sizeof(*mv), move_order);
		for (int i = 0; i < nm; i++) {
			int v = mv[i].v, p = part[v], q = mv[i].q;
			if (size[p] > target[p] && size[q] < target[q]) {
				size[p]--;
				size[q]++;
				part[v] = q;
				moved++;
			}
		}
		if (moved == 0) {
			/* cannot happen (an overfull part implies an underfull one); be safe */
			errno = EINVAL;
			goto out;
		}
	}
	rc = 0;
out:
	free(mv);
	return rc;
}

/* Weight of the edges inside the set `mask` (bit v = local vertex v in part 0). */
static idx_t mask_cut(const struct graph *g, unsigned mask)
{
	idx_t cut = 0;

	for (int v = 0; v < g->m; v++)
		for (idx_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
			if (((mask >> v) & 1) != ((mask >> g->adj[e]) & 1))
				cut += g->adjw[e];
	return cut;
}

/* Exact minimum cut bisection of a small graph (m <= SMALL_EXACT), ties by lowest mask. */
static void split_exact2(const struct graph *g, int size0, int *part)
{
	unsigned best_mask = 0;
	idx_t best = -1;

	for (unsigned mask = 1; mask < (1u << g->m); mask++) {
		if (__builtin_popcount(mask) != size0)
			continue;
		if (2 * size0 == g->m && !(mask & 1u))
			continue; /* equal halves: vertex 0 in part 0 gives every cut once */
		idx_t cut = mask_cut(g, mask);
		if (best < 0 || cut < best) {
			best = cut;
			best_mask = mask;
		}
	}
	for (int v = 0; v < g->m; v++)
		part[v] = (best_mask >> v) & 1 ? 0 : 1;
}

/* Cut weight of a partition. */
static double part_cut(const struct graph *g, const int *part)
{
	double cut = 0;

	for (int v = 0; v < g->m; v++)
		for (idx_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
			if (part[v] != part[g->adj[e]])
				cut += (double)g->adjw[e];
	return cut / 2;
}

/* METIS (recursive or k-way) into k parts, repaired to the exact sizes. */
static int metis_split(struct bisector *b, const struct graph *g, int k, const int *target,
                       int kway, int *part)
{
	idx_t nv = g->m, ncon = 1, np = k, cut = 0, options[METIS_NOPTIONS];
	real_t *tp = NULL, ub = 1.001f;
	idx_t *ip = NULL;
	int *size = NULL, rc = -1, ok;

	tp = malloc(sizeof(*tp) * (size_t)k);
	size = calloc((size_t)k, sizeof(*size));
	ip = malloc(sizeof(*ip) * (size_t)g->m);
	if (!tp || !size || !ip) {
		errno = ENOMEM;
		goto out;
	}
	for (int q = 0; q < k; q++)
		tp[q] = (real_t)target[q] / (real_t)g->m;
	METIS_SetDefaultOptions(options);
	options[METIS_OPTION_SEED] = (idx_t)(b->seed & 0x3fffffff);
	options[METIS_OPTION_UFACTOR] = 1;
	options[METIS_OPTION_NCUTS] = b->ncuts;
	options[METIS_OPTION_NUMBERING] = 0;
	/* METIS draws from the C library's one random() state, seeded at each
	   call: one call at a time in the process, or the auto mapper's
	   candidates on several threads would draw from each other's */
	pthread_mutex_lock(&metis_lock);
	ok = kway ? METIS_PartGraphKway(&nv, &ncon, g->xadj, g->adj, NULL, NULL, g->adjw, &np, tp,
	                                &ub, options, &cut, ip)
	          : METIS_PartGraphRecursive(&nv, &ncon, g->xadj, g->adj, NULL, NULL, g->adjw, &np,
	                                     tp, &ub, options, &cut, ip);
	pthread_mutex_unlock(&metis_lock);
	if (ok != METIS_OK) {
		errno = ENOMEM;
		goto out;
	}
	for (int v = 0; v < g->m; v++) {
		int q = (int)ip[v];
		if (q < 0 || q >= k)
			q = 0;
		part[v] = q;
		size[q]++;
	}
	if (repair_balance(b, g, k, target, size, part) != 0)
		goto out;
	rc = 0;
out:
	free(tp);
	free(size);
	free(ip);
	return rc;
}

static int best_split(struct bisector *b, const struct graph *g, int k, const int *target,
                      int *part);

/*
 * Split in two stages: first into f groups of k/f consecutive parts, then
 * each group into its parts. This is the bisection order Scotch-like
 * recursive bipartitioning of the machine would not take on its own (a
 * 9 x 8 grid on 6 nodes: 3 strips, then halves, cuts 25 edges; halves
 * first cuts 29).
 */
static int grouped_split(struct bisector *b, const struct graph *g, int k, const int *target, int f,
                         int *part)
{
	int per = k / f, rc = -1, gt[64] = {0};
	int *gpart = malloc(sizeof(int) * (size_t)g->m), *loc = malloc(sizeof(int) * (size_t)g->m);
	int *glob = malloc(sizeof(int) * (size_t)g->m), *sub = malloc(sizeof(int) * (size_t)g->m);
	struct graph h = {0, NULL, NULL, NULL};

	h.xadj = malloc(sizeof(idx_t) * ((size_t)g->m + 1));
	h.adj = malloc(sizeof(idx_t) * ((size_t)g->xadj[g->m] + 1));
	h.adjw = malloc(sizeof(idx_t) * ((size_t)g->xadj[g->m] + 1));
	if (!gpart || !loc || !glob || !sub || !h.xadj || !h.adj || !h.adjw || f > 64) {
		errno = ENOMEM;
		goto out;
	}
	for (int j = 0; j < f; j++) {
		gt[j] = 0;
		for (int q = j * per; q < (j + 1) * per; q++)
			gt[j] += target[q];
	}
	if (best_split(b, g, f, gt, gpart) != 0)
		goto out;
	for (int j = 0; j < f; j++) {
		idx_t e = 0;
		h.m = 0;
		for (int v = 0; v < g->m; v++)
			if (gpart[v] == j) {
				loc[v] = h.m;
				glob[h.m++] = v;
			}
		for (int i = 0; i < h.m; i++) {
			int v = glob[i];
			h.xadj[i] = e;
			for (idx_t x = g->xadj[v]; x < g->xadj[v + 1]; x++)
				if (gpart[g->adj[x]] == j) {
					h.adj[e] = loc[g->adj[x]];
					h.adjw[e] = g->adjw[x];
					e++;
				}
		}
		h.xadj[h.m] = e;
		if (best_split(b, &h, per, target + j * per, sub) != 0)
			goto out;
		for (int i = 0; i < h.m; i++)
			part[glob[i]] = j * per + sub[i];
	}
	rc = 0;
out:
	free(gpart);
	free(loc);
	free(glob);
	free(sub);
	free(h.xadj);
	free(h.adj);
	free(h.adjw);
	return rc;
}

/*
 * Split graph g into k parts of exactly target[] vertices with a small cut.
 * Tries METIS's recursive bisection and, for part counts that are not a
 * power of two or uneven targets (partial allocations), and at most
 * GROUPED_ARITY parts, its k-way partitioner and every two-stage grouping;
 * keeps the smallest cut (ties: the first tried).
 */
static int best_split(struct bisector *b, const struct graph *g, int k, const int *target,
                      int *part)
{
	int ones = 1, uneven = 0, rc = -1, *alt = NULL, ncuts = b->ncuts;
	double best;

	for (int q = 0; q < k; q++)
		ones &= target[q] == 1;
	if (k == 1 || g->xadj[g->m] == 0 || ones) {
		/* One part, no edges, or one rank per child (children are equidistant). */
		int q = 0, used = 0;
		for (int v = 0; v < g->m; v++) {
			while (used == target[q]) {
				q++;
				used = 0;
			}
			part[v] = q;
			used++;
		}
		return 0;
	}
	if (k == 2 && g->m <= SMALL_EXACT) {
		split_exact2(g, target[0], part);
		return 0;
	}
	if (metis_split(b, g, k, target, 0, part) != 0)
		return -1;
	for (int q = 1; q < k; q++)
		uneven |= target[q] != target[0];
	if (k == 2 || k > GROUPED_ARITY || ((k & (k - 1)) == 0 && !uneven) || g->m > GROUPED_MAX ||
	    (b->nested && g->m > NESTED_MAX))
		return 0;
	alt = malloc(sizeof(int) * (size_t)g->m);
	if (!alt) {
		errno = ENOMEM;
		return -1;
	}
	best = part_cut(g, part);
	/* alternatives get one METIS try each and no alternatives of their own
	   (ncuts holds the caller's value, restored at out) */
	b->ncuts = 1;
	b->nested = 1;
	for (int f = 1; f < k; f++) {
		double c;
		if (k % f != 0 || f > 64)
			continue;
		/* f == 1 stands for METIS k-way */
		if ((f == 1 ? metis_split(b, g, k, target, 1, alt)
		            : grouped_split(b, g, k, target, f, alt)) != 0)
			goto out;
		c = part_cut(g, alt);
		if (c < best) {
			best = c;
			memcpy(part, alt, sizeof(int) * (size_t)g->m);
		}
	}
	rc = 0;
out:
	b->ncuts = ncuts;
	b->nested = 0;
	free(alt);
	return rc;
}

/* Build the subgraph induced by perm[lo..lo+m) in CSR with integer weights. */
static void build_subgraph(struct bisector *b, int lo, int m)
{
	const struct tmatch_comm *c = b->c;
	double maxw = 0, tot = 0, scale;
	idx_t e = 0;

	for (int v = 0; v < m; v++)
		b->loc[b->perm[lo + v]] = v;
	for (int v = 0; v < m; v++) {
		int q = b->perm[lo + v];
		for (size_t k = c->row_ptr[q]; k < c->row_ptr[q + 1]; k++)
			if (b->loc[c->col[k]] >= 0) {
				if (c->w[k] > maxw)
					maxw = c->w[k];
				tot += c->w[k];
			}
	}
	scale = maxw > 0 ? 1048576.0 / maxw : 1;
	if (tot * scale > 1e9)
		scale = 1e9 / tot;
	for (int v = 0; v < m; v++) {
		int q = b->perm[lo + v];
		b->xadj[v] = e;
		for (size_t k = c->row_ptr[q]; k < c->row_ptr[q + 1]; k++) {
			int u = b->loc[c->col[k]];
			if (u < 0)
				continue;
			double w = floor(c->w[k] * scale + 0.5);
			b->adj[e] = u;
			b->adjw[e] = w < 1 ? 1 : (idx_t)w;
			e++;
		}
	}
	// xadj has n + 1 entries, m <= n
	// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
	b->xadj[m] = e;
	for (int v = 0; v < m; v++)
		b->loc[b->perm[lo + v]] = -1;
}

/* Place perm[lo..lo+m) under node `node` at depth l. */
static int place(struct bisector *b, int l, int node, int lo, int m)
{
	const struct tmatch_topo *t = b->t;
	int ar, k = 0, rc = -1;
	int *order = NULL, *target = NULL, *cnt = NULL;

	if (m == 0)
		return 0;
	if (l == t->depth) {
		b->leaf_of_rank[b->perm[lo]] = node; /* m == 1, capacity checked by the caller */
		return 0;
	}
	ar = t->arity[l];
	order = malloc(sizeof(*order) * (size_t)ar);
	target = malloc(sizeof(*target) * (size_t)ar);
	cnt = malloc(sizeof(*cnt) * ((size_t)ar + 1));
	if (!order || !target || !cnt) {
		errno = ENOMEM;
		goto out;
	}
	/* Children by decreasing capacity (ties: lowest index), fill until m fits. */
	for (int i = 0; i < ar; i++)
		order[i] = node * ar + i;
	for (int i = 1; i < ar; i++) {
		int x = order[i], cx = capacity(b, l + 1, x), j = i;
		while (j > 0 && capacity(b, l + 1, order[j - 1]) < cx) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	for (int left = m; left > 0 && k < ar; k++) {
		int cap = capacity(b, l + 1, order[k]);
		target[k] = cap < left ? cap : left;
		left -= target[k];
	}
	while (k > 0 && target[k - 1] == 0)
		k--;
	/* Keep the chosen children in tree order (deterministic, packs low leaves first). */
	for (int i = 1; i < k; i++) {
		int x = order[i], tx = target[i], j = i;
		while (j > 0 && order[j - 1] > x) {
			order[j] = order[j - 1];
			target[j] = target[j - 1];
			j--;
		}
		order[j] = x;
		target[j] = tx;
	}
	if (k == 1) {
		rc = place(b, l + 1, order[0], lo, m);
		goto out;
	}
	build_subgraph(b, lo, m);
	{
		struct graph g = {m, b->xadj, b->adj, b->adjw};
		if (best_split(b, &g, k, target, b->part) != 0)
			goto out;
	}
	/* Counting sort of the segment by part. */
	for (int q = 0; q <= k; q++)
		cnt[q] = 0;
	for (int v = 0; v < m; v++)
		cnt[b->part[v] + 1]++;
	for (int q = 0; q < k; q++)
		cnt[q + 1] += cnt[q];
	for (int v = 0; v < m; v++)
		b->tmp[cnt[b->part[v]]++] = b->perm[lo + v];
	memcpy(b->perm + lo, b->tmp, sizeof(int) * (size_t)m);
	for (int q = 0, off = lo; q < k; q++) {
		if (place(b, l + 1, order[q], off, target[q]) != 0)
			goto out;
		off += target[q];
	}
	rc = 0;
out:
	free(order);
	free(target);
	free(cnt);
	return rc;
}

int tmatch__map_bisect(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                       const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	struct bisector b;
	int n = comm->n, nl = topo->nb_leaves, rc = -1;
	size_t nnz = comm->nnz;

	memset(&b, 0, sizeof(b));
	if (n == 0)
		return 0;
	if (nnz > (size_t)0x7fffffff) {
		tmatch_error_set(err, 0, NULL, 0, 0,
		                 "bisect: %zu matrix entries exceed what METIS indexes; use "
		                 "the treematch or greedy mapper",
		                 nnz);
		errno = EOVERFLOW;
		return -1;
	}
	b.c = comm;
	b.t = topo;
	b.seed = opts->seed;
	/* two METIS tries per split: about 1-2 % less cut for twice the METIS time */
	b.ncuts = n <= 32768 ? 2 : 1;
	b.leaf_of_rank = leaf_of_rank;
	b.perm = calloc((size_t)n, sizeof(int));
	b.loc = malloc(sizeof(int) * (size_t)n);
	b.tmp = malloc(sizeof(int) * (size_t)n);
	b.part = malloc(sizeof(int) * (size_t)n);
	b.xadj = malloc(sizeof(idx_t) * ((size_t)n + 1));
	b.adj = malloc(sizeof(idx_t) * (nnz ? nnz : 1));
	b.adjw = malloc(sizeof(idx_t) * (nnz ? nnz : 1));
	b.allowed_prefix = malloc(sizeof(int) * ((size_t)nl + 1));
	{
		int maxar = 1;
		for (int l = 0; l < topo->depth; l++)
			if (topo->arity[l] > maxar)
				maxar = topo->arity[l];
		b.conn = calloc((size_t)maxar, sizeof(double));
		b.touched = malloc(sizeof(int) * (size_t)maxar);
	}
	if (!b.conn || !b.touched || !b.perm || !b.loc || !b.tmp || !b.part || !b.xadj || !b.adj ||
	    !b.adjw || !b.allowed_prefix) {
		errno = ENOMEM;
		goto out;
	}
	b.allowed_prefix[0] = 0;
	for (int lf = 0; lf < nl; lf++)
		b.allowed_prefix[lf + 1] =
		    b.allowed_prefix[lf] + (!topo->allowed || topo->allowed[lf] ? 1 : 0);
	for (int q = 0; q < n; q++) {
		b.perm[q] = q;
		b.loc[q] = -1;
	}
	rc = place(&b, 0, 0, 0, n);
out:
	if (rc != 0)
		tmatch_error_set(err, 0, NULL, 0, 0, "bisect: %s",
		                 errno == ENOMEM ? "out of memory" : "partitioning failed");
	free(b.perm);
	free(b.loc);
	free(b.tmp);
	free(b.part);
	free(b.xadj);
	free(b.adj);
	free(b.adjw);
	free(b.allowed_prefix);
	free(b.conn);
	free(b.touched);
	return rc;
}
