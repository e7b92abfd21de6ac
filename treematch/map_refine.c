/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_refine.c - improve a complete mapping in place on the tree's hop-bytes.
 *
 * Two phases, both deterministic for a given seed:
 *
 * 1. Multilevel swap descent (Kernighan-Lin/FM style, hill climbing). For
 *    each level l of the tree, from the top down, the ranks are grouped by
 *    the node at depth l that holds them; a group moves rigidly (each rank
 *    keeps its offset inside the subtree), so swapping two groups exchanges
 *    the contents of two subtrees and leaves the cost inside them unchanged.
 *    The contracted graph of the groups gives the change of cost of a swap
 *    in O(degree x depth), or O(depth) from aggregates by subtree on dense
 *    levels (struct aggregates). Candidates for a group are the nodes next to (same
 *    parent as) the nodes of its neighbours, empty nodes included, so a
 *    swap is also a move. Only improving swaps are applied. Level l = depth
 *    is plain rank swaps and moves onto free leaves.
 *
 * 2. Threshold accepting (Dueck-Scheuer, as Hoefler-Snir use it): random
 *    rank swaps/moves near a neighbour, accepted while they worsen the cost
 *    by less than a shrinking threshold; the best mapping seen is kept and
 *    the descent of phase 1 runs again from it. Only on small inputs, where
 *    its cost is worth it. On dense ones a move is priced from per-rank
 *    aggregates by subtree in O(depth), not O(degree) (struct aggregates).
 *
 * The iteration budget (candidate evaluations) drives the result; the time
 * budget is only a safety cap, reported through the log when it is hit.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Threshold accepting runs when n is at most this. */
#define TA_MAX_RANKS 4096

struct refiner {
	const struct tmatch_comm *c;
	const struct tmatch_topo *t;
	const tmatch_map_opts_t *opts;
	int n;
	int *leaf_of_rank;
	int *rank_of_leaf; /* -1 when free */
	long steps;        /* candidate evaluations so far */
	long budget;
	double t0;
	int timed_out;
	long progress_every; /* budgeted search: a progress line each that many steps, 0 none */
	/* Leaf codes (tmatch__leaf_code): a distance is an XOR and a table look-up. */
	uint64_t *code;
	struct tmatch__codes codes;
	uint64_t *scode; /* code of the first leaf of each slot of the current level */
	/* level work space, sized for the leaf level (the largest) */
	int *slot_grp, *grp_slot, *mem_ptr, *mem, *stamp, *mark, *plist;
	double *pconn;
	size_t *cptr;
	int *cadj;
	double *cw;
	size_t ccap;
	/* The leaf level's graph on the matrix itself (leaf_view): a group is
	   one leaf, its rank's row the group's edges, their weights the
	   matrix's; cadj[k] the leaf of entry k's neighbour. The same edges in
	   the same order as the contracted graph would hold (no diagonal:
	   no_diagonal), without copying the weights (1,048,576 ranks: 8 bytes
	   an entry, 67 MB). */
	int no_diagonal;
	int leaf_view;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Account for `k` evaluations; returns 1 when a budget is exhausted. */
static int spend(struct refiner *r, long k)
{
	long before = r->steps;

	r->steps += k;
	if (r->progress_every > 0 && before / r->progress_every != r->steps / r->progress_every &&
	    r->steps < r->budget)
		tmatch__log(r->opts, TMATCH_LOG_PROGRESS, "search %ld%%",
		            r->steps / r->progress_every);
	if (r->steps >= r->budget)
		return 1;
	if (r->opts->time_budget > 0 && (before >> 12) != (r->steps >> 12) &&
	    now() - r->t0 > r->opts->time_budget) {
		r->timed_out = 1;
		return 1;
	}
	return r->timed_out;
}

/* Levels climbed between two distinct nodes of the current level (slot indices). */
static inline int slot_dist(const struct refiner *r, int x, int y)
{
	return r->codes.lvl_of_bit[63 - __builtin_clzll(r->scode[x] ^ r->scode[y])];
}

/* Levels climbed between two distinct leaves. */
static inline int leaf_dist(const struct refiner *r, int a, int b)
{
	if (a == b)
		return 0;
	return r->codes.lvl_of_bit[63 - __builtin_clzll(r->code[a] ^ r->code[b])];
}

/* Group g's edges: [*b, *e) in cadj/cw, or in the matrix under leaf_view. */
static inline void group_edges(const struct refiner *r, int g, size_t *b, size_t *e)
{
	if (!r->leaf_view) {
		*b = r->cptr[g];
		*e = r->cptr[g + 1];
	} else if (r->mem_ptr[g] < r->mem_ptr[g + 1]) {
		int q = r->mem[r->mem_ptr[g]];

		*b = r->c->row_ptr[q];
		*e = r->c->row_ptr[q + 1];
	} else {
		*b = *e = 0;
	}
}

/* The weight of edge k (the group at its other end: cadj[k]). */
static inline double edge_weight(const struct refiner *r, size_t k)
{
	return r->leaf_view ? r->c->w[k] : r->cw[k];
}

/*
 * Aggregates, on inputs dense enough: for items (ranks, or the groups of a
 * level) sitting on positions (leaves, or the slots of that level),
 * at[q * m + off[u] + x] is the weight from item q to the items placed
 * under node x of the level u above the positions (1 <= u < levels).
 * The change of cost of a swap then needs only the levels below the two
 * positions' common ancestor, O(depth) instead of O(degree), and an
 * accepted swap updates its items' neighbours on those levels only. The
 * sums are those over the edges, grouped differently (the same values for
 * integer weights). Threshold accepting prices its moves so, and the
 * descent its swaps of groups.
 */
struct aggregates {
	double *at;
	size_t m;
	int levels;
	size_t off[TMATCH_MAX_DEPTH + 1];
	/* node[x * levels + u]: the index of position x's ancestor u levels up
	   in a row of at (a look-up, not a division per level) */
	size_t *node;
	/* the graph of the items */
	const size_t *ptr;
	const int *adj;
	const double *w;
};

/* Aggregates are kept when the degree is this many times the levels, the
   table has at most this many entries per edge (clearing and filling it
   must cost no more than the swaps it prices) and at most AGG_MAX_ENTRIES
   (16 MiB). */
#define AGG_MIN_DEGREE_PER_LEVEL 2
#define AGG_MAX_ENTRIES_PER_EDGE 4
#define AGG_MAX_ENTRIES          ((size_t)1 << 21)

int tmatch__refine_aggregates = 1;
int tmatch__refine_leaf_view = 1;

static inline size_t agg_index(const struct aggregates *g, int u, int x)
{
	return g->node[(size_t)x * (size_t)g->levels + (size_t)u];
}

/* Free the table (again: a no-op). */
static void agg_free(struct aggregates *g)
{
	free(g->at);
	free(g->node);
	g->at = NULL;
	g->node = NULL;
}

/* Item q moves from position `from` to `to`, whose common ancestor is k
   levels up: its neighbours' aggregates follow on the levels below it. */
static void agg_move(struct aggregates *g, int q, int from, int to, int k)
{
	for (size_t e = g->ptr[q]; e < g->ptr[q + 1]; e++) {
		double *row = g->at + (size_t)g->adj[e] * g->m;

		for (int u = 1; u < k; u++) {
			row[agg_index(g, u, from)] -= g->w[e];
			row[agg_index(g, u, to)] += g->w[e];
		}
	}
}

/* The row length of the table of level l (0: aggregates do not pay or
   fit, for nitems items with nedges edges in all). */
static size_t agg_width(const struct refiner *r, int l, int nitems, size_t nedges)
{
	const struct tmatch_topo *t = r->t;
	size_t m = 0;

	if (!tmatch__refine_aggregates || l < 2 || nitems == 0 ||
	    nedges / (size_t)nitems < (size_t)(AGG_MIN_DEGREE_PER_LEVEL * l))
		return 0;
	for (int u = 1; u < l; u++)
		m += (size_t)(t->nb_leaves / t->span[l - u]);
	if (m * (size_t)nitems > AGG_MAX_ENTRIES ||
	    m * (size_t)nitems > AGG_MAX_ENTRIES_PER_EDGE * nedges)
		return 0;
	return m;
}

/*
 * The aggregates of the level l (its positions are the nodes at depth l) for
 * nitems items on the graph (ptr, adj, w), item q at pos[q]. 0 with the
 * table made, 1 when it does not pay, fit or get its memory (a speed-up
 * only: a user's lower max_map_memory must not fail the refinement).
 */
static int agg_init(const struct refiner *r, struct aggregates *g, int l, int nitems,
                    const size_t *ptr, const int *adj, const double *w, const int *pos)
{
	const struct tmatch_topo *t = r->t;
	int npos = t->nb_leaves / t->span[l];

	memset(g, 0, sizeof(*g));
	if (!agg_width(r, l, nitems, ptr[nitems]))
		return 1;
	g->levels = l;
	g->ptr = ptr;
	g->adj = adj;
	g->w = w;
	for (int u = 1; u < l; u++) {
		g->off[u] = g->m;
		g->m += (size_t)(t->nb_leaves / t->span[l - u]);
	}
	g->at = calloc(g->m * (size_t)nitems, sizeof(double));
	g->node = malloc(sizeof(size_t) * (size_t)npos * (size_t)l);
	if (!g->at || !g->node) {
		agg_free(g);
		return 1;
	}
	for (int x = 0; x < npos; x++)
		for (int u = 1; u < l; u++)
			g->node[(size_t)x * (size_t)l + (size_t)u] =
			    g->off[u] + (size_t)(x / (t->span[l - u] / t->span[l]));
	for (int q = 0; q < nitems; q++)
		for (size_t e = ptr[q]; e < ptr[q + 1]; e++)
			for (int u = 1; u < l; u++)
				g->at[(size_t)adj[e] * g->m + agg_index(g, u, pos[q])] += w[e];
	return 0;
}

/*
 * Change of cost when item a goes from position xa to xb, k levels apart,
 * and item b (-1: none) from xb to xa; wab is the weight between them.
 */
static double agg_delta(const struct aggregates *g, int a, int xa, int b, int xb, int k, double wab)
{
	const double *ra = g->at + (size_t)a * g->m;
	double d = 0;

	for (int u = 1; u < k; u++)
		d += ra[agg_index(g, u, xa)] - ra[agg_index(g, u, xb)];
	if (b >= 0 && k > 1) {
		const double *rb = g->at + (size_t)b * g->m;

		for (int u = 1; u < k; u++)
			d += rb[agg_index(g, u, xb)] - rb[agg_index(g, u, xa)];
		/* the edge (a, b) keeps its length: the sums above counted it */
		d += 2 * wab * (double)(k - 1);
	}
	return d;
}

/*
 * Build the groups of level l (group g = ranks under the node in slot g at
 * pass start) and their contracted graph. Returns -1 on ENOMEM.
 */
static int build_level(struct refiner *r, int l, int nslots)
{
	const struct tmatch_comm *c = r->c;
	int span = r->t->span[l];
	size_t e = 0;

	for (int s = 0; s <= nslots; s++)
		r->mem_ptr[s] = 0;
	for (int q = 0; q < r->n; q++)
		r->mem_ptr[r->leaf_of_rank[q] / span + 1]++;
	for (int s = 0; s < nslots; s++)
		r->mem_ptr[s + 1] += r->mem_ptr[s];
	for (int s = 0; s < nslots; s++)
		r->mark[s] = r->mem_ptr[s];
	for (int q = 0; q < r->n; q++)
		r->mem[r->mark[r->leaf_of_rank[q] / span]++] = q;

	for (int s = 0; s < nslots; s++) {
		r->scode[s] = r->code[s * span];
		r->mark[s] = -1;
		r->slot_grp[s] = s;
		r->grp_slot[s] = s;
	}
	/* the leaves: every rank's row as it is, unless aggregates would
	   want the copy */
	r->leaf_view = tmatch__refine_leaf_view && span == 1 && r->no_diagonal &&
	               !agg_width(r, l, nslots, c->nnz);
	if (r->leaf_view) {
		for (size_t k = 0; k < c->nnz; k++) /* ccap > nnz */
			r->cadj[k] = r->leaf_of_rank[c->col[k]];
		return 0;
	}
	for (int g = 0; g < nslots; g++) {
		size_t start = e;

		r->cptr[g] = e;
		for (int i = r->mem_ptr[g]; i < r->mem_ptr[g + 1]; i++) {
			int q = r->mem[i];
			for (size_t k = c->row_ptr[q]; k < c->row_ptr[q + 1]; k++) {
				int h = r->leaf_of_rank[c->col[k]] / span;
				if (h == g)
					continue;
				if (r->mark[h] < 0 || (size_t)r->mark[h] < start) {
					if (e == r->ccap) {
						size_t ncap = r->ccap * 2 + 16;
						int *na = realloc(r->cadj, ncap * sizeof(*na));
						if (!na)
							return -1;
						r->cadj = na;
						double *nw = realloc(r->cw, ncap * sizeof(*nw));
						if (!nw)
							return -1;
						r->cw = nw;
						r->ccap = ncap;
					}
					r->mark[h] = (int)e;
					r->cadj[e] = h;
					r->cw[e] = 0;
					e++;
				}
				r->cw[r->mark[h]] += c->w[k];
			}
		}
	}
	r->cptr[nslots] = e;
	return 0;
}

/* Change of cost (levels x weight) when group g goes to slot s and the group there to g's slot. */
static double swap_delta(const struct refiner *r, int g, int g2)
{
	int p = r->grp_slot[g], s = r->grp_slot[g2];
	double d = 0;
	size_t b, e;

	group_edges(r, g, &b, &e);
	for (size_t k = b; k < e; k++) {
		int h = r->cadj[k];
		if (h == g2)
			continue;
		int q = r->grp_slot[h];
		d += edge_weight(r, k) * (double)(slot_dist(r, s, q) - slot_dist(r, p, q));
	}
	group_edges(r, g2, &b, &e);
	for (size_t k = b; k < e; k++) {
		int h = r->cadj[k];
		if (h == g)
			continue;
		int q = r->grp_slot[h];
		d += edge_weight(r, k) * (double)(slot_dist(r, p, q) - slot_dist(r, s, q));
	}
	return d;
}

/* Whether every rank of group g lands on an allowed leaf when its group sits in slot s. */
static int fits(const struct refiner *r, int l, int g, int s)
{
	const struct tmatch_topo *t = r->t;
	int span = t->span[l];

	if (!t->allowed)
		return 1;
	for (int i = r->mem_ptr[g]; i < r->mem_ptr[g + 1]; i++) {
		int off = r->leaf_of_rank[r->mem[i]] - g * span;
		if (!t->allowed[s * span + off])
			return 0;
	}
	return 1;
}

/* Write the group positions of level l back into the rank/leaf arrays. */
static void commit_level(struct refiner *r, int l, int nslots)
{
	int span = r->t->span[l];

	for (int g = 0; g < nslots; g++) {
		int s = r->grp_slot[g];
		if (s == g)
			continue;
		for (int i = r->mem_ptr[g]; i < r->mem_ptr[g + 1]; i++) {
			int q = r->mem[i];
			r->leaf_of_rank[q] = s * span + (r->leaf_of_rank[q] - g * span);
		}
	}
	for (int lf = 0; lf < r->t->nb_leaves; lf++)
		r->rank_of_leaf[lf] = -1;
	for (int q = 0; q < r->n; q++)
		r->rank_of_leaf[r->leaf_of_rank[q]] = q;
}

/*
 * One descent at level l: repeated sweeps over the groups, each taking its
 * best improving swap. Returns the total gain (>= 0), or -1 on ENOMEM.
 */
static double descend_level(struct refiner *r, int l, int max_sweeps, double eps)
{
	const struct tmatch_topo *t = r->t;
	int nslots = t->nb_leaves / t->span[l], ar = t->arity[l - 1], up = t->depth - l;
	double gain = 0, *wg = NULL;
	int stop = 0, tick = 0, use_agg;
	struct aggregates agg;

	if (build_level(r, l, nslots) != 0)
		return -1;
	/* dense levels: swaps priced from the aggregates, wg[h] the weight from
	   the group at hand to group h */
	memset(&agg, 0, sizeof(agg)); /* freed at the end, made or not */
	use_agg = !r->leaf_view &&
	          agg_init(r, &agg, l, nslots, r->cptr, r->cadj, r->cw, r->grp_slot) == 0;
	if (use_agg && !(wg = calloc((size_t)nslots, sizeof(double)))) {
		agg_free(&agg);
		use_agg = 0;
	}
	for (int s = 0; s < nslots / ar; s++)
		r->stamp[s] = -1;
	for (int sweep = 0; sweep < max_sweeps && !stop; sweep++) {
		double sweep_gain = 0;

		for (int g = 0; g < nslots && !stop; g++) {
			size_t eb, ee, deg;
			int p, best_g2 = -1, np;
			double best = -eps;

			group_edges(r, g, &eb, &ee);
			deg = ee - eb;
			if (deg == 0)
				continue;
			p = r->grp_slot[g];
			/* Connection of g to each parent node holding a neighbour (FM gain
			   filter): only parents it is more attached to than its own are tried. */
			tick++;
			np = 0;
			r->stamp[p / ar] = tick;
			r->pconn[p / ar] = 0;
			for (size_t k = eb; k < ee; k++) {
				int par = r->grp_slot[r->cadj[k]] / ar;
				if (r->stamp[par] != tick) {
					r->stamp[par] = tick;
					r->pconn[par] = 0;
					r->plist[np++] = par;
				}
				r->pconn[par] += edge_weight(r, k);
				if (use_agg)
					wg[r->cadj[k]] = r->cw[k];
			}
			for (int i = 0; i < np && !stop; i++) {
				int par = r->plist[i];
				if (r->pconn[par] <= r->pconn[p / ar])
					continue;
				for (int s = par * ar; s < par * ar + ar; s++) {
					int g2 = r->slot_grp[s];
					double d = use_agg
					               ? agg_delta(&agg, g, p, g2, s,
					                           slot_dist(r, p, s) - up, wg[g2])
					               : swap_delta(r, g, g2);
					if (d < best && fits(r, l, g, s) && fits(r, l, g2, p)) {
						best = d;
						best_g2 = g2;
					}
				}
				if (spend(r, (long)ar * (long)(2 * deg + 1)))
					stop = 1;
			}
			if (use_agg)
				for (size_t k = eb; k < ee; k++)
					wg[r->cadj[k]] = 0;
			if (best_g2 >= 0) {
				int s = r->grp_slot[best_g2];

				if (use_agg) {
					agg_move(&agg, g, p, s, slot_dist(r, p, s) - up);
					agg_move(&agg, best_g2, s, p, slot_dist(r, p, s) - up);
				}
				r->grp_slot[g] = s;
				r->grp_slot[best_g2] = p;
				r->slot_grp[s] = g;
				r->slot_grp[p] = best_g2;
				sweep_gain -= best;
			}
		}
		gain += sweep_gain;
		if (sweep_gain <= eps)
			break;
	}
	agg_free(&agg);
	free(wg);
	commit_level(r, l, nslots);
	return gain;
}

/* Descent over every level until a full round gains (almost) nothing. */
static int descend(struct refiner *r, double eps, int max_rounds)
{
	for (int round = 0; round < max_rounds; round++) {
		double gain = 0;
		for (int l = 1; l <= r->t->depth; l++) {
			double g = descend_level(r, l, 4, eps);
			if (g < 0)
				return -1;
			gain += g;
			if (r->steps >= r->budget || r->timed_out)
				return 0;
		}
		if (gain <= eps)
			break;
	}
	return 0;
}

/* Change of levels x weight when rank a goes to leaf lb (and the rank there, if any, to a's leaf).
 */
static double rank_delta(const struct refiner *r, int a, int lb)
{
	const struct tmatch_comm *c = r->c;
	int la = r->leaf_of_rank[a], b = r->rank_of_leaf[lb];
	double d = 0;

	for (size_t k = c->row_ptr[a]; k < c->row_ptr[a + 1]; k++) {
		int h = c->col[k];
		if (h == b)
			continue;
		int lh = r->leaf_of_rank[h];
		d += c->w[k] * (double)(leaf_dist(r, lb, lh) - leaf_dist(r, la, lh));
	}
	if (b >= 0)
		for (size_t k = c->row_ptr[b]; k < c->row_ptr[b + 1]; k++) {
			int h = c->col[k];
			if (h == a)
				continue;
			int lh = r->leaf_of_rank[h];
			d += c->w[k] * (double)(leaf_dist(r, la, lh) - leaf_dist(r, lb, lh));
		}
	return d;
}

/* Total levels x weight of the mapping (hop-bytes / 2). */
static double level_cost(const struct refiner *r)
{
	return tmatch__hop_bytes(r->c, r->t, r->leaf_of_rank) / 2;
}

/* A random allowed leaf in the subtree, `up` levels above leaf `near`. */
static int random_leaf_near(const struct refiner *r, tmatch__rng_t *rng, int near, int up)
{
	const struct tmatch_topo *t = r->t;
	int span = t->span[t->depth - up], base = near / span * span;

	for (int tries = 0; tries < 8; tries++) {
		int lf = base + (int)tmatch__rng_below(rng, (uint64_t)span);
		if (!t->allowed || t->allowed[lf])
			return lf;
	}
	return -1;
}

/*
 * Threshold accepting on rank swaps. The threshold starts at 1.5 times
 * the average edge weight (one level of one average edge, and a half) and
 * shrinks linearly to zero over `rounds` rounds.
 */
static int threshold_accept(struct refiner *r, int *best_map, long iters)
{
	const struct tmatch_comm *c = r->c;
	const struct tmatch_topo *t = r->t;
	tmatch__rng_t rng;
	double cur = level_cost(r), best = cur;
	double avg = c->nnz ? 2 * c->total / (double)c->nnz : 0;
	int rounds = 20;
	long per_round = iters / rounds, avg_deg = r->n ? (long)(c->nnz / (size_t)r->n) : 0;

	struct aggregates g;
	int use_agg;

	if (c->nnz == 0 || r->n < 2 || per_round < 1)
		return 0;
	use_agg = agg_init(r, &g, t->depth, r->n, c->row_ptr, c->col, c->w, r->leaf_of_rank) == 0;
	tmatch__rng_seed(&rng, r->opts->seed ^ 0x7a5eedULL);
	memcpy(best_map, r->leaf_of_rank, sizeof(*best_map) * (size_t)r->n);
	for (int round = 0; round < rounds; round++) {
		double thr = avg * 1.5 * (double)(rounds - 1 - round) / (double)rounds;
		for (long it = 0; it < per_round; it++) {
			int a = (int)tmatch__rng_below(&rng, (uint64_t)r->n);
			size_t deg = c->row_ptr[a + 1] - c->row_ptr[a];
			int h, up, lb;
			double d;

			if (deg == 0)
				continue;
			h = c->col[c->row_ptr[a] + tmatch__rng_below(&rng, deg)];
			up = 1 + (int)tmatch__rng_below(&rng, (uint64_t)t->depth);
			lb = random_leaf_near(r, &rng, r->leaf_of_rank[h], up);
			if (lb < 0 || lb == r->leaf_of_rank[a])
				continue;
			{
				int la = r->leaf_of_rank[a], b = r->rank_of_leaf[lb];
				int k = leaf_dist(r, la, lb);

				/* siblings: every distance stays, the change is 0 */
				if (use_agg)
					d = agg_delta(&g, a, la, b, lb, k,
					              b >= 0 && k > 1 ? tmatch_comm_get(c, a, b)
					                              : 0);
				else
					d = k > 1 ? rank_delta(r, a, lb) : 0;
			}
			if (d < thr) {
				int la = r->leaf_of_rank[a], b = r->rank_of_leaf[lb];

				if (use_agg) {
					int k = leaf_dist(r, la, lb);

					agg_move(&g, a, la, lb, k);
					if (b >= 0)
						agg_move(&g, b, lb, la, k);
				}
				r->leaf_of_rank[a] = lb;
				r->rank_of_leaf[lb] = a;
				r->rank_of_leaf[la] = b;
				if (b >= 0)
					r->leaf_of_rank[b] = la;
				cur += d;
			}
		}
		if (cur < best - 1e-9 * (best > 0 ? best : 1)) {
			best = cur;
			memcpy(best_map, r->leaf_of_rank, sizeof(*best_map) * (size_t)r->n);
		}
		if (spend(r, per_round * (long)(2 * avg_deg + 1)))
			break;
	}
	agg_free(&g);
	/* Always end on the best mapping seen (never worse than the start). */
	memcpy(r->leaf_of_rank, best_map, sizeof(*best_map) * (size_t)r->n);
	for (int lf = 0; lf < t->nb_leaves; lf++)
		r->rank_of_leaf[lf] = -1;
	for (int q = 0; q < r->n; q++)
		r->rank_of_leaf[r->leaf_of_rank[q]] = q;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* 3. Iterated local search (the budgeted mode)                              */

/* Exchange the contents of two leaves (either may be free). */
static void swap_leaves(struct refiner *r, int la, int lb)
{
	int a = r->rank_of_leaf[la], b = r->rank_of_leaf[lb];

	r->rank_of_leaf[la] = b;
	r->rank_of_leaf[lb] = a;
	if (a >= 0)
		r->leaf_of_rank[a] = lb;
	if (b >= 0)
		r->leaf_of_rank[b] = la;
}

/* Change of levels x weight when the contents of leaves la and lb are exchanged. */
static double leaves_delta(const struct refiner *r, int la, int lb)
{
	int a = r->rank_of_leaf[la], b = r->rank_of_leaf[lb];

	if (a >= 0)
		return rank_delta(r, a, lb);
	return b >= 0 ? rank_delta(r, b, la) : 0;
}

/* The search's work lists: ranks to look at again, and the swaps to undo. */
struct search {
	int *queue, *inq, nq;
	int *undo; /* leaf pairs, in the order applied */
	long nundo, capundo;
	double delta; /* change of cost of the swaps applied since it was zeroed */
};

static void enqueue(struct search *s, int a)
{
	if (!s->inq[a]) {
		s->inq[a] = 1;
		s->queue[s->nq++] = a;
	}
}

/*
 * Apply a swap of leaves that changes the cost by d, remember it, and queue
 * the ranks it concerns. Returns -1 on ENOMEM.
 */
static int apply(struct refiner *r, struct search *s, int la, int lb, double d)
{
	const struct tmatch_comm *c = r->c;

	if (s->nundo + 2 > s->capundo) {
		long cap = s->capundo ? 2 * s->capundo : 1024;
		int *u = realloc(s->undo, sizeof(int) * (size_t)cap);
		if (!u)
			return -1;
		s->undo = u;
		s->capundo = cap;
	}
	s->undo[s->nundo++] = la;
	s->undo[s->nundo++] = lb;
	s->delta += d;
	swap_leaves(r, la, lb);
	for (int k = 0; k < 2; k++) {
		int a = r->rank_of_leaf[k ? lb : la];
		if (a < 0)
			continue;
		enqueue(s, a);
		for (size_t e = c->row_ptr[a]; e < c->row_ptr[a + 1]; e++)
			enqueue(s, c->col[e]);
	}
	return 0;
}

/*
 * Candidates of rank a, after VieM's N_C neighbourhoods (Schulz and Traeff):
 * the ranks at most two hops away in the communication graph (swapping with
 * them brings a next to its partners), and the leaves beside each
 * partner's leaf, free ones included (moves). Hubs look at their NC_WIDTH
 * first partners and as many of theirs. Applies the best improving swap;
 * returns 1 if one was applied, 0 if none, -1 on ENOMEM.
 */
#define NC_WIDTH 24

/* The best candidate so far of improve_rank. */
struct pick {
	double delta;
	int leaf;
	long tried;
};

static void consider(const struct refiner *r, int la, int lb, struct pick *p)
{
	double d = leaves_delta(r, la, lb);

	p->tried++;
	if (d < p->delta) {
		p->delta = d;
		p->leaf = lb;
	}
}

static int improve_rank(struct refiner *r, struct search *s, int a, double eps)
{
	const struct tmatch_comm *c = r->c;
	const struct tmatch_topo *t = r->t;
	int la = r->leaf_of_rank[a], low = t->span[t->depth - 1];
	size_t deg = c->row_ptr[a + 1] - c->row_ptr[a];
	struct pick p = {-eps, -1, 0};

	for (size_t e = c->row_ptr[a]; e < c->row_ptr[a + 1] && e < c->row_ptr[a] + NC_WIDTH; e++) {
		int h = c->col[e], lh = r->leaf_of_rank[h];
		/* the leaves beside h's (its lowest subtree) */
		for (int lb = lh / low * low; lb < lh / low * low + low; lb++)
			if (lb != la && (!t->allowed || t->allowed[lb]))
				consider(r, la, lb, &p);
		/* the partners of h */
		for (size_t f = c->row_ptr[h];
		     f < c->row_ptr[h + 1] && f < c->row_ptr[h] + NC_WIDTH; f++) {
			int lb = r->leaf_of_rank[c->col[f]];
			if (lb != la && lb / low != lh / low)
				consider(r, la, lb, &p);
		}
	}
	spend(r, p.tried * (long)(2 * deg + 2));
	if (p.leaf < 0)
		return 0;
	return apply(r, s, la, p.leaf, p.delta) ? -1 : 1;
}

/* Best-improvement descent from the queued ranks until none improves. Returns -1 on ENOMEM. */
static int local_search(struct refiner *r, struct search *s, double eps)
{
	while (s->nq > 0 && r->steps < r->budget && !r->timed_out) {
		int a = s->queue[--s->nq];
		s->inq[a] = 0;
		if (improve_rank(r, s, a, eps) < 0)
			return -1;
	}
	while (s->nq > 0) /* budget out: empty the queue */
		s->inq[s->queue[--s->nq]] = 0;
	return 0;
}

/*
 * Iterated local search: from the current mapping, a few random swaps
 * around a random rank (a kick), then the N_C descent from the ranks
 * they touched; kept when the cost does not grow, undone otherwise. Each
 * round costs in proportion to the neighbourhood it touches, not to n, so
 * a budget goes as far on 100,000 ranks as on 1,000.
 */
static int iterated_search(struct refiner *r, double eps)
{
	const struct tmatch_comm *c = r->c;
	const struct tmatch_topo *t = r->t;
	struct search s;
	tmatch__rng_t rng;
	int rc = -1;

	memset(&s, 0, sizeof(s));
	s.queue = malloc(sizeof(int) * (size_t)r->n);
	s.inq = calloc((size_t)r->n, sizeof(int));
	if (!s.queue || !s.inq)
		goto out;
	tmatch__rng_seed(&rng, r->opts->seed ^ 0x11505eedULL);
	/* the descent from every rank first */
	for (int a = r->n - 1; a >= 0; a--)
		enqueue(&s, a);
	if (local_search(r, &s, eps) != 0)
		goto out;
	while (r->steps < r->budget && !r->timed_out) {
		int x = (int)tmatch__rng_below(&rng, (uint64_t)r->n), kicks;
		size_t deg = c->row_ptr[x + 1] - c->row_ptr[x];

		if (deg == 0) {
			spend(r, 1);
			continue;
		}
		s.nundo = 0;
		s.delta = 0;
		kicks = 1 + (int)tmatch__rng_below(&rng, 3);
		for (int k = 0; k < kicks; k++) {
			/* x, or one of its partners, to a leaf near a partner's partner */
			int y = c->col[c->row_ptr[x] + tmatch__rng_below(&rng, deg)];
			size_t dy = c->row_ptr[y + 1] - c->row_ptr[y];
			int z = c->col[c->row_ptr[y] + tmatch__rng_below(&rng, dy)];
			int up = 1 + (int)tmatch__rng_below(&rng, (uint64_t)t->depth);
			int who = k % 2 ? y : x;
			int lb = random_leaf_near(r, &rng, r->leaf_of_rank[z], up);
			if (lb < 0 || lb == r->leaf_of_rank[who])
				continue;
			if (apply(r, &s, r->leaf_of_rank[who], lb,
			          leaves_delta(r, r->leaf_of_rank[who], lb)) != 0)
				goto out;
		}
		spend(r, kicks * (long)(4 * deg + 2));
		if (local_search(r, &s, eps) != 0)
			goto out;
		if (s.delta <= eps) /* kept: no worse */
			continue;
		for (long u = s.nundo - 2; u >= 0; u -= 2) /* undo, newest first */
			swap_leaves(r, s.undo[u], s.undo[u + 1]);
	}
	rc = 0;
out:
	free(s.queue);
	free(s.inq);
	free(s.undo);
	return rc;
}

/* Free what refiner_init allocated. */
static void refiner_free(struct refiner *r)
{
	free(r->leaf_of_rank);
	free(r->rank_of_leaf);
	free(r->slot_grp);
	free(r->grp_slot);
	free(r->mem_ptr);
	free(r->mem);
	free(r->stamp);
	free(r->mark);
	free(r->plist);
	free(r->pconn);
	free(r->cptr);
	free(r->cadj);
	free(r->cw);
	free(r->code);
	free(r->scode);
}

/*
 * Set up a refiner on a copy of leaf_of_rank with `budget` steps. Returns 0,
 * 1 when the tree is too wide for the leaf codes (nothing to do), -1 on
 * ENOMEM (err set); refiner_free in every case.
 */
static int refiner_init(struct refiner *r, const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                        const tmatch_map_opts_t *opts, const int *leaf_of_rank, long budget,
                        tmatch_error_t *err)
{
	int nl = topo->nb_leaves;

	memset(r, 0, sizeof(*r));
	r->c = comm;
	r->t = topo;
	r->opts = opts;
	r->n = comm->n;
	r->t0 = now();
	r->budget = budget;
	r->leaf_of_rank = malloc(sizeof(int) * (size_t)r->n);
	r->rank_of_leaf = malloc(sizeof(int) * (size_t)nl);
	r->slot_grp = malloc(sizeof(int) * (size_t)nl);
	r->grp_slot = malloc(sizeof(int) * (size_t)nl);
	r->mem_ptr = malloc(sizeof(int) * ((size_t)nl + 1));
	r->mem = malloc(sizeof(int) * (size_t)r->n);
	r->stamp = malloc(sizeof(int) * (size_t)nl);
	r->mark = malloc(sizeof(int) * (size_t)nl);
	r->plist = malloc(sizeof(int) * (size_t)nl);
	r->pconn = malloc(sizeof(double) * (size_t)nl);
	r->cptr = malloc(sizeof(size_t) * ((size_t)nl + 1));
	r->ccap = comm->nnz + 16;
	r->cadj = malloc(sizeof(int) * r->ccap);
	r->cw = malloc(sizeof(double) * r->ccap);
	r->code = malloc(sizeof(uint64_t) * (size_t)nl);
	r->scode = malloc(sizeof(uint64_t) * (size_t)nl);
	if (!r->plist || !r->pconn || !r->code || !r->scode || !r->leaf_of_rank ||
	    !r->rank_of_leaf || !r->slot_grp || !r->grp_slot || !r->mem_ptr || !r->mem ||
	    !r->stamp || !r->mark || !r->cptr || !r->cadj || !r->cw) {
		tmatch_error_set(err, 0, NULL, 0, 0, "refine: out of memory");
		errno = ENOMEM;
		return -1;
	}
	if (tmatch__codes_init(topo, &r->codes) != 0) {
		tmatch__log(opts, TMATCH_LOG_INFO,
		            "refine: tree too wide to encode leaf paths in 64 bits; not refined");
		return 1;
	}
	for (int lf = 0; lf < nl; lf++)
		r->code[lf] = tmatch__leaf_code(topo, &r->codes, lf);
	memcpy(r->leaf_of_rank, leaf_of_rank, sizeof(int) * (size_t)r->n);
	r->no_diagonal = 1;
	for (int q = 0; q < r->n && r->no_diagonal; q++)
		for (size_t k = comm->row_ptr[q]; k < comm->row_ptr[q + 1]; k++)
			if (comm->col[k] == q)
				r->no_diagonal = 0;
	for (int lf = 0; lf < nl; lf++)
		r->rank_of_leaf[lf] = -1;
	for (int q = 0; q < r->n; q++)
		r->rank_of_leaf[r->leaf_of_rank[q]] = q;
	return 0;
}

/* The refinement's default budget: about 32 evaluations of every edge per level. */
long tmatch__refine_budget(const tmatch_comm_t *comm, const tmatch_topo_t *topo)
{
	/* 12 on huge inputs: keeps 1M ranks well under a minute; capped for dense ones */
	double per = comm->n <= 65536 ? 32.0 : 12.0;
	double b = per * (double)(comm->nnz + (size_t)comm->n) * topo->depth + 2e6;
	double cap = 2e7 + 4.0 * (double)comm->nnz;

	return (long)(b < cap ? b : cap);
}

/* The end of refine and search: keep the result if no worse, say so. */
static void refiner_finish(struct refiner *r, const char *what, double before, int *leaf_of_rank)
{
	double after = level_cost(r);

	if (r->timed_out)
		tmatch__log(r->opts, TMATCH_LOG_WARNING,
		            "%s: time budget of %g s hit after %ld steps; the result may "
		            "depend on machine speed",
		            what, r->opts->time_budget, r->steps);
	/* Never worse than the input (a safety net; every step is non-increasing). */
	if (after <= before)
		memcpy(leaf_of_rank, r->leaf_of_rank, sizeof(int) * (size_t)r->n);
	tmatch__log(r->opts, TMATCH_LOG_DEBUG, "%s: hop-bytes %.6g -> %.6g in %ld steps", what,
	            2 * before, 2 * (after <= before ? after : before), r->steps);
}

int tmatch__refine(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                   const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	struct refiner r;
	int rc, *start = NULL;
	double before, eps;

	if (comm->n < 2 || comm->nnz == 0 || topo->depth == 0)
		return 0;
	rc = refiner_init(
	    &r, comm, topo, opts, leaf_of_rank,
	    opts->iter_budget > 0 ? opts->iter_budget : tmatch__refine_budget(comm, topo), err);
	if (rc != 0) {
		refiner_free(&r);
		return rc > 0 ? 0 : -1;
	}
	start = malloc(sizeof(int) * (size_t)r.n);
	if (!start)
		goto nomem;
	/* A few full rounds over every level, then threshold accepting on small inputs. */
	before = level_cost(&r);
	eps = 1e-12 * comm->total * topo->depth;
	if (descend(&r, eps, 16) != 0)
		goto nomem;
	if (r.n <= TA_MAX_RANKS && r.steps < r.budget && !r.timed_out) {
		long left = r.budget - r.steps;
		long tacap = 64L * r.n;
		long ta = left / 2 < tacap ? left / 2 : tacap;
		if (threshold_accept(&r, start, ta) != 0)
			goto nomem;
		if (descend(&r, eps, 16) != 0)
			goto nomem;
	}
	refiner_finish(&r, "refine", before, leaf_of_rank);
	free(start);
	refiner_free(&r);
	return 0;
nomem:
	tmatch_error_set(err, 0, NULL, 0, 0, "refine: out of memory");
	errno = ENOMEM;
	free(start);
	refiner_free(&r);
	return -1;
}

int tmatch__search(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                   const tmatch_map_opts_t *opts, long steps, int *leaf_of_rank,
                   tmatch_error_t *err)
{
	struct refiner r;
	int rc;
	double before, eps;

	if (comm->n < 2 || comm->nnz == 0 || topo->depth == 0 || steps <= 0)
		return 0;
	rc = refiner_init(&r, comm, topo, opts, leaf_of_rank, steps, err);
	if (rc != 0) {
		refiner_free(&r);
		return rc > 0 ? 0 : -1;
	}
	before = level_cost(&r);
	eps = 1e-12 * comm->total * topo->depth;
	r.progress_every = r.budget / 100 > 0 ? r.budget / 100 : 0;
	/* the kicks and N_C descents, then the level descent on what they left */
	if (iterated_search(&r, eps) != 0) {
		tmatch_error_set(err, 0, NULL, 0, 0, "search: out of memory");
		errno = ENOMEM;
		refiner_free(&r);
		return -1;
	}
	r.progress_every = 0; /* the last descent: short, and past the 100 % */
	r.budget = r.steps + tmatch__refine_budget(comm, topo);
	if (descend(&r, eps, 16) != 0) {
		tmatch_error_set(err, 0, NULL, 0, 0, "search: out of memory");
		errno = ENOMEM;
		refiner_free(&r);
		return -1;
	}
	refiner_finish(&r, "search", before, leaf_of_rank);
	refiner_free(&r);
	return 0;
}
