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
 *    in O(degree x depth). Candidates for a group are the nodes next to (same
 *    parent as) the nodes of its neighbours, empty nodes included, so a
 *    swap is also a move. Only improving swaps are applied. Level l = depth
 *    is plain rank swaps and moves onto free leaves.
 *
 * 2. Threshold accepting (Dueck-Scheuer, as Hoefler-Snir use it): random
 *    rank swaps/moves near a neighbour, accepted while they worsen the cost
 *    by less than a shrinking threshold; the best mapping seen is kept and
 *    the descent of phase 1 runs again from it. Only on small inputs, where
 *    its cost is worth it.
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
	/* Leaf codes: the child index at each level in fixed bit fields, so the
	   depth of a common ancestor is the highest differing bit (lvl_of_bit). */
	uint64_t *code;
	signed char lvl_of_bit[64];
	uint64_t *scode; /* code of the first leaf of each slot of the current level */
	/* level work space, sized for the leaf level (the largest) */
	int *slot_grp, *grp_slot, *mem_ptr, *mem, *stamp, *mark, *plist;
	double *pconn;
	size_t *cptr;
	int *cadj;
	double *cw;
	size_t ccap;
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
	return r->lvl_of_bit[63 - __builtin_clzll(r->scode[x] ^ r->scode[y])];
}

/* Levels climbed between two distinct leaves. */
static inline int leaf_dist(const struct refiner *r, int a, int b)
{
	if (a == b)
		return 0;
	return r->lvl_of_bit[63 - __builtin_clzll(r->code[a] ^ r->code[b])];
}

/*
 * Fill the leaf codes. Returns 0, or 1 when the tree needs more than 64 bits
 * (then the caller leaves refinement out).
 */
static int make_codes(struct refiner *r)
{
	const struct tmatch_topo *t = r->t;
	int shift[TMATCH_MAX_DEPTH] = {0}, bits = 0;

	for (int l = t->depth - 1; l >= 0; l--) {
		int w = 0;
		while ((1 << w) < t->arity[l])
			w++;
		if (bits + w > 64) /* lvl_of_bit has 64 entries: check before filling it */
			return 1;
		shift[l] = bits;
		bits += w;
		for (int b = shift[l]; b < shift[l] + w; b++)
			r->lvl_of_bit[b] = (signed char)(t->depth - l);
	}
	for (int lf = 0; lf < t->nb_leaves; lf++) {
		uint64_t code = 0;
		for (int l = 0; l < t->depth; l++) {
			int idx = lf / t->span[l + 1] % t->arity[l];
			code |= (uint64_t)idx << shift[l];
		}
		r->code[lf] = code;
	}
	return 0;
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

	for (size_t k = r->cptr[g]; k < r->cptr[g + 1]; k++) {
		int h = r->cadj[k];
		if (h == g2)
			continue;
		int q = r->grp_slot[h];
		d += r->cw[k] * (double)(slot_dist(r, s, q) - slot_dist(r, p, q));
	}
	for (size_t k = r->cptr[g2]; k < r->cptr[g2 + 1]; k++) {
		int h = r->cadj[k];
		if (h == g)
			continue;
		int q = r->grp_slot[h];
		d += r->cw[k] * (double)(slot_dist(r, p, q) - slot_dist(r, s, q));
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
	int nslots = t->nb_leaves / t->span[l], ar = t->arity[l - 1];
	double gain = 0;
	int stop = 0, tick = 0;

	if (build_level(r, l, nslots) != 0)
		return -1;
	for (int s = 0; s < nslots / ar; s++)
		r->stamp[s] = -1;
	for (int sweep = 0; sweep < max_sweeps && !stop; sweep++) {
		double sweep_gain = 0;

		for (int g = 0; g < nslots && !stop; g++) {
			size_t deg = r->cptr[g + 1] - r->cptr[g];
			int p, best_g2 = -1, np;
			double best = -eps;

			if (deg == 0)
				continue;
			p = r->grp_slot[g];
			/* Connection of g to each parent node holding a neighbour (FM gain
			   filter): only parents it is more attached to than its own are tried. */
			tick++;
			np = 0;
			r->stamp[p / ar] = tick;
			r->pconn[p / ar] = 0;
			for (size_t k = r->cptr[g]; k < r->cptr[g + 1]; k++) {
				int par = r->grp_slot[r->cadj[k]] / ar;
				if (r->stamp[par] != tick) {
					r->stamp[par] = tick;
					r->pconn[par] = 0;
					r->plist[np++] = par;
				}
				r->pconn[par] += r->cw[k];
			}
			for (int i = 0; i < np && !stop; i++) {
				int par = r->plist[i];
				if (r->pconn[par] <= r->pconn[p / ar])
					continue;
				for (int s = par * ar; s < par * ar + ar; s++) {
					int g2 = r->slot_grp[s];
					double d = swap_delta(r, g, g2);
					if (d < best && fits(r, l, g, s) && fits(r, l, g2, p)) {
						best = d;
						best_g2 = g2;
					}
				}
				if (spend(r, (long)ar * (long)(2 * deg + 1)))
					stop = 1;
			}
			if (best_g2 >= 0) {
				int s = r->grp_slot[best_g2];
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

	if (c->nnz == 0 || r->n < 2 || per_round < 1)
		return 0;
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
			d = rank_delta(r, a, lb);
			if (d < thr) {
				int la = r->leaf_of_rank[a], b = r->rank_of_leaf[lb];
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
	/* Always end on the best mapping seen (never worse than the start). */
	memcpy(r->leaf_of_rank, best_map, sizeof(*best_map) * (size_t)r->n);
	for (int lf = 0; lf < t->nb_leaves; lf++)
		r->rank_of_leaf[lf] = -1;
	for (int q = 0; q < r->n; q++)
		r->rank_of_leaf[r->leaf_of_rank[q]] = q;
	return 0;
}

int tmatch__refine(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                   const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	struct refiner r;
	int nl = topo->nb_leaves, rc = -1, *start = NULL;
	double before, after, eps;

	memset(&r, 0, sizeof(r));
	if (comm->n < 2 || comm->nnz == 0 || topo->depth == 0)
		return 0;
	r.c = comm;
	r.t = topo;
	r.opts = opts;
	r.n = comm->n;
	r.t0 = now();
	/* Default: a few full rounds over every level, then threshold accepting on small inputs. */
	if (opts->iter_budget > 0) {
		r.budget = opts->iter_budget;
	} else {
		/* about 32 evaluations of every edge per level (12 on huge inputs), capped for
		 * dense ones */
		double per =
		    comm->n <= 65536 ? 32.0 : 12.0; /* keeps 1M ranks well under a minute */
		double b = per * (double)(comm->nnz + (size_t)comm->n) * topo->depth + 2e6;
		double cap = 2e7 + 4.0 * (double)comm->nnz;
		r.budget = (long)(b < cap ? b : cap);
	}
	r.leaf_of_rank = malloc(sizeof(int) * (size_t)r.n);
	start = malloc(sizeof(int) * (size_t)r.n);
	r.rank_of_leaf = malloc(sizeof(int) * (size_t)nl);
	r.slot_grp = malloc(sizeof(int) * (size_t)nl);
	r.grp_slot = malloc(sizeof(int) * (size_t)nl);
	r.mem_ptr = malloc(sizeof(int) * ((size_t)nl + 1));
	r.mem = malloc(sizeof(int) * (size_t)r.n);
	r.stamp = malloc(sizeof(int) * (size_t)nl);
	r.mark = malloc(sizeof(int) * (size_t)nl);
	r.plist = malloc(sizeof(int) * (size_t)nl);
	r.pconn = malloc(sizeof(double) * (size_t)nl);
	r.cptr = malloc(sizeof(size_t) * ((size_t)nl + 1));
	r.ccap = comm->nnz + 16;
	r.cadj = malloc(sizeof(int) * r.ccap);
	r.cw = malloc(sizeof(double) * r.ccap);
	r.code = malloc(sizeof(uint64_t) * (size_t)nl);
	r.scode = malloc(sizeof(uint64_t) * (size_t)nl);
	if (!r.plist || !r.pconn || !r.code || !r.scode || !r.leaf_of_rank || !start ||
	    !r.rank_of_leaf || !r.slot_grp || !r.grp_slot || !r.mem_ptr || !r.mem || !r.stamp ||
	    !r.mark || !r.cptr || !r.cadj || !r.cw)
		goto nomem;
	if (make_codes(&r) != 0) {
		tmatch__log(opts, TMATCH_LOG_INFO,
		            "refine: tree too wide to encode leaf paths in 64 bits; not refined");
		rc = 0;
		goto out;
	}
	memcpy(r.leaf_of_rank, leaf_of_rank, sizeof(int) * (size_t)r.n);
	memcpy(start, leaf_of_rank, sizeof(int) * (size_t)r.n);
	for (int lf = 0; lf < nl; lf++)
		r.rank_of_leaf[lf] = -1;
	for (int q = 0; q < r.n; q++)
		r.rank_of_leaf[r.leaf_of_rank[q]] = q;

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
	after = level_cost(&r);
	if (r.timed_out)
		tmatch__log(opts, TMATCH_LOG_WARNING,
		            "refine: time budget of %g s hit after %ld steps; the result may "
		            "depend on machine speed",
		            opts->time_budget, r.steps);
	/* Never worse than the input (a safety net; every step above is non-increasing). */
	if (after <= before)
		memcpy(leaf_of_rank, r.leaf_of_rank, sizeof(int) * (size_t)r.n);
	tmatch__log(opts, TMATCH_LOG_DEBUG, "refine: hop-bytes %.6g -> %.6g in %ld steps",
	            2 * before, 2 * (after <= before ? after : before), r.steps);
	rc = 0;
	goto out;
nomem:
	tmatch_error_set(err, 0, NULL, 0, 0, "refine: out of memory");
	errno = ENOMEM;
out:
	free(r.leaf_of_rank);
	free(start);
	free(r.rank_of_leaf);
	free(r.slot_grp);
	free(r.grp_slot);
	free(r.mem_ptr);
	free(r.mem);
	free(r.stamp);
	free(r.mark);
	free(r.plist);
	free(r.pconn);
	free(r.cptr);
	free(r.cadj);
	free(r.cw);
	free(r.code);
	free(r.scode);
	return rc;
}
