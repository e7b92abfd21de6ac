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
	int *allowed_prefix; /* allowed leaves in [0, i) */
	int *leaf_of_rank;
	int maxar;   /* the largest arity */
	int threads; /* place()'s crew (children_crew); 1 inside one of its pieces */
	/* scratch (scratch_alloc), one set per thread */
	int *loc; /* rank -> local index in the current subgraph, -1 outside */
	int *part, *tmp;
	idx_t *xadj, *adj, *adjw;
	double *conn; /* per part, for the balance repair */
	int *touched;
	/* large inputs (VAST_RANKS): each rank's node at depth guide_depth as
	   the coarse graph's partition placed it (NULL: no guide), and small
	   segments split by small_split instead of METIS */
	int *guide;
	int guide_depth;
	int fast_small;
	/* fewer ranks than leaves: the top level's children get shares in
	   proportion to their room (spread) instead of filled largest first */
	int spread_top;
};

static int capacity(const struct bisector *b, int l, int node)
{
	int span = b->t->span[l];

	return b->allowed_prefix[(node + 1) * span] - b->allowed_prefix[node * span];
}

/* A graph in METIS's CSR form (local vertex numbers); vwgt NULL: every
   vertex weighs 1 (the ranks), else a coarse graph's vertices. */
struct graph {
	int m;
	idx_t *xadj, *adj, *adjw, *vwgt;
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

/*
 * The subgraph of g induced by its vertices labelled j, into h (arrays
 * the caller made for g's size): glob[i] is h's vertex i in g, loc is
 * scratch (g's vertices to h's).
 */
static void induced(const struct graph *g, const int *label, int j, struct graph *h, int *loc,
                    int *glob)
{
	idx_t e = 0;

	h->m = 0;
	for (int v = 0; v < g->m; v++)
		if (label[v] == j) {
			loc[v] = h->m;
			glob[h->m++] = v;
		}
	for (int i = 0; i < h->m; i++) {
		int v = glob[i];

		h->xadj[i] = e;
		for (idx_t x = g->xadj[v]; x < g->xadj[v + 1]; x++)
			if (label[g->adj[x]] == j) {
				h->adj[e] = loc[g->adj[x]];
				h->adjw[e++] = g->adjw[x];
			}
	}
	h->xadj[h->m] = e;
}

/* ------------------------------------------------------------------------ */
/* Small segments of large inputs: bisection without METIS                  */

/*
 * On large inputs (VAST_RANKS) the lowest levels are tens of thousands of
 * segments of a few dozen ranks (a node's cores): METIS's set-up per call
 * then costs more than the split (8192 nodes of 128 ranks: about 6 s). Up
 * to SMALL_FAST_MAX ranks a segment is split here instead: recursive
 * bisection, each side grown greedily from a far vertex (twice, from both
 * ends of a breadth-first sweep) and refined by Fiduccia-Mattheyses passes
 * that keep the sizes exact. Deterministic: ties by lowest index.
 */
#define SMALL_FAST_MAX 64
#define FM_PASSES      4
#define FM_PATIENCE    24

/* The vertex farthest (breadth first) from `from`, lowest index on ties. */
static int far_vertex(const struct graph *g, int from, int *queue, int *seen)
{
	int head = 0, tail = 0, last = from;

	for (int v = 0; v < g->m; v++)
		seen[v] = 0;
	seen[from] = 1;
	queue[tail++] = from;
	while (head < tail) {
		int v = queue[head++];

		last = v;
		for (idx_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
			if (!seen[g->adj[e]]) {
				seen[g->adj[e]] = 1;
				queue[tail++] = (int)g->adj[e];
			}
	}
	return last;
}

/* gain[v]: what moving v to the other side saves (external - internal). */
static void side_gains(const struct graph *g, const int *side, double *gain)
{
	for (int v = 0; v < g->m; v++) {
		gain[v] = 0;
		for (idx_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
			gain[v] +=
			    side[g->adj[e]] != side[v] ? (double)g->adjw[e] : -(double)g->adjw[e];
	}
}

static void move_vertex(const struct graph *g, int *side, double *gain, int v)
{
	side[v] = !side[v];
	gain[v] = -gain[v];
	for (idx_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
		int u = (int)g->adj[e];

		gain[u] += side[u] == side[v] ? -2 * (double)g->adjw[e] : 2 * (double)g->adjw[e];
	}
}

/* The vertex of list[0..*n) (ascending) with the largest gain, the lowest
   on ties, taken out of the list (its order kept); -1 when it is empty. */
static int take_best(int *list, int *n, const double *gain)
{
	int pick = -1, at = 0;

	for (int i = 0; i < *n; i++)
		if (pick < 0 || gain[list[i]] > gain[pick]) {
			pick = list[i];
			at = i;
		}
	if (pick >= 0) {
		(*n)--;
		memmove(list + at, list + at + 1, sizeof(int) * (size_t)(*n - at));
	}
	return pick;
}

/*
 * Fiduccia-Mattheyses with exact sizes: each pass moves vertices once, the
 * best unlocked one from the side that holds at least its share (side 0
 * must end with size0), until FM_PATIENCE moves in a row found nothing
 * better, and goes back to the best point at which the sizes were exact.
 * The unlocked vertices of side s are kept in ascending order at
 * unlocked + s * m (2 * m ints), so a step scans one side's candidates only;
 * ties go to the lowest index. Returns the cut.
 */
static double fm_passes(const struct graph *g, int size0, int *side, double *gain, int *unlocked,
                        int *moved, double cut)
{
	int m = g->m;

	for (int pass = 0; pass < FM_PASSES; pass++) {
		int n0 = 0, best_at = 0, nm = 0, nfree[2] = {0, 0};
		double run = 0, best = 0;

		side_gains(g, side, gain);
		for (int v = 0; v < m; v++) {
			int s = side[v] != 0;

			unlocked[s * m + nfree[s]++] = v;
			n0 += !s;
		}
		for (int step = 0; step < m; step++) {
			int from = n0 > size0 || (n0 == size0 && step % 2 == 0) ? 0 : 1;
			int pick = take_best(unlocked + from * m, &nfree[from], gain); /* locked */

			if (pick < 0)
				break;
			run += gain[pick];
			move_vertex(g, side, gain, pick);
			n0 += from ? 1 : -1;
			moved[nm++] = pick;
			if (n0 == size0 && run > best + 1e-9) {
				best = run;
				best_at = nm;
			}
			if (nm - best_at > FM_PATIENCE)
				break;
		}
		for (int i = nm - 1; i >= best_at; i--) /* back to the best exact point */
			side[moved[i]] = !side[moved[i]];
		if (best_at == 0)
			break;
		cut -= best;
	}
	return cut;
}

/* side[v]: 0 for size0 vertices, 1 for the rest, with a small cut. -1 on ENOMEM. */
static int small_bisect(const struct graph *g, int size0, int *side)
{
	int m = g->m, rc = -1, *work = malloc(sizeof(int) * 6 * (size_t)(m ? m : 1));
	double *gain = calloc((size_t)(m ? m : 1), sizeof(double)), best = -1;
	int *queue, *seen, *trial, *moved, seeds[2];

	if (!work || !gain)
		goto out;
	if (size0 <= 0 || size0 >= m) { /* one side only */
		for (int v = 0; v < m; v++)
			side[v] = size0 <= 0;
		rc = 0;
		goto out;
	}
	queue = work;
	seen = work + m;
	trial = work + 2 * m;
	moved = work + 3 * m;
	seeds[0] = far_vertex(g, 0, queue, seen);
	seeds[1] = far_vertex(g, seeds[0], queue, seen);
	for (int t = 0; t < 2; t++) {
		/* rest: the space fm_passes takes next */
		int grown = 1, *rest = work + 4 * m, nrest = 0;
		double cut = 0;

		/* grow side 0 from the seed: the vertex most attached to it next
		   (rest: side 1, ascending; ties to the lowest index) */
		for (int v = 0; v < m; v++) {
			trial[v] = v != seeds[t];
			if (trial[v])
				rest[nrest++] = v;
		}
		side_gains(g, trial, gain);
		for (; grown < size0; grown++) /* rest is not empty: size0 < m */
			move_vertex(g, trial, gain, take_best(rest, &nrest, gain));
		for (int v = 0; v < m; v++)
			for (idx_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
				if (trial[v] != trial[g->adj[e]])
					cut += (double)g->adjw[e];
		cut = fm_passes(g, size0, trial, gain, work + 4 * m, moved, cut / 2);
		if (best < 0 || cut < best) {
			best = cut;
			memcpy(side, trial, sizeof(int) * (size_t)m);
		}
	}
	rc = 0;
out:
	free(work);
	free(gain);
	return rc;
}

/*
 * Split a small graph into k parts of exactly target[] vertices: the first
 * half of the parts against the second, then each side on its own. -1 on
 * ENOMEM.
 */
static int small_split(const struct graph *g, int k, const int *target, int *part)
{
	int h = k / 2, size0 = 0, rc = -1, *side = NULL, *loc = NULL, *glob = NULL, *sub = NULL;
	struct graph s = {0, NULL, NULL, NULL, NULL};

	if (k == 1) {
		for (int v = 0; v < g->m; v++)
			part[v] = 0;
		return 0;
	}
	for (int q = 0; q < h; q++)
		size0 += target[q];
	side = malloc(sizeof(int) * (size_t)g->m);
	if (!side)
		return -1;
	if (g->m <= SMALL_EXACT && size0 > 0 && size0 < g->m)
		split_exact2(g, size0, side);
	else if (small_bisect(g, size0, side) != 0)
		goto out;
	loc = malloc(sizeof(int) * (size_t)g->m);
	glob = calloc((size_t)g->m, sizeof(int));
	sub = calloc((size_t)g->m, sizeof(int));
	s.xadj = malloc(sizeof(idx_t) * ((size_t)g->m + 1));
	s.adj = malloc(sizeof(idx_t) * ((size_t)g->xadj[g->m] + 1));
	s.adjw = malloc(sizeof(idx_t) * ((size_t)g->xadj[g->m] + 1));
	if (!loc || !glob || !sub || !s.xadj || !s.adj || !s.adjw)
		goto out;
	for (int half = 0; half < 2; half++) {
		induced(g, side, half, &s, loc, glob);
		if (small_split(&s, half ? k - h : h, target + (half ? h : 0), sub) != 0)
			goto out;
		for (int i = 0; i < s.m; i++)
			// induced() wrote glob[i] < g->m for every i < s.m
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			part[glob[i]] = sub[i] + (half ? h : 0);
	}
	rc = 0;
out:
	free(side);
	free(loc);
	free(glob);
	free(sub);
	free(s.xadj);
	free(s.adj);
	free(s.adjw);
	return rc;
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
	if (!g->vwgt) {
		for (int q = 0; q < k; q++)
			tp[q] = (real_t)target[q] / (real_t)g->m;
	} else { /* a coarse graph's weights need not add up to the targets */
		double total = 0;

		for (int q = 0; q < k; q++)
			total += target[q];
		for (int q = 0; q < k; q++)
			tp[q] = (real_t)(target[q] / total);
	}
	METIS_SetDefaultOptions(options);
	options[METIS_OPTION_SEED] = (idx_t)(b->seed & 0x3fffffff);
	options[METIS_OPTION_UFACTOR] = 1;
	options[METIS_OPTION_NCUTS] = b->ncuts;
	options[METIS_OPTION_NUMBERING] = 0;
	/* METIS draws from the C library's one random() state, seeded at each
	   call: one call at a time in the process, or the auto mapper's
	   candidates on several threads would draw from each other's */
	pthread_mutex_lock(&metis_lock);
	ok = kway ? METIS_PartGraphKway(&nv, &ncon, g->xadj, g->adj, g->vwgt, NULL, g->adjw, &np,
	                                tp, &ub, options, &cut, ip)
	          : METIS_PartGraphRecursive(&nv, &ncon, g->xadj, g->adj, g->vwgt, NULL, g->adjw,
	                                     &np, tp, &ub, options, &cut, ip);
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
	/* ranks to exact sizes; a coarse graph's parts are near enough */
	if (!g->vwgt && repair_balance(b, g, k, target, size, part) != 0)
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
	struct graph h = {0, NULL, NULL, NULL, NULL};

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
		induced(g, gpart, j, &h, loc, glob);
		if (best_split(b, &h, per, target + j * per, sub) != 0)
			goto out;
		for (int i = 0; i < h.m; i++)
			// induced() wrote glob[i] < g->m for every i < h.m
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
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
	if (b->fast_small && g->m <= SMALL_FAST_MAX) {
		if (small_split(g, k, target, part) != 0) {
			errno = ENOMEM;
			return -1;
		}
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
	// xadj has room for the largest segment this scratch serves
	// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
	b->xadj[m] = e;
	for (int v = 0; v < m; v++)
		b->loc[b->perm[lo + v]] = -1;
}

/*
 * m ranks shared among the ar children in `order` (by decreasing room) in
 * proportion to their room, the remainder one each to those with the
 * largest fraction left (ties: the earlier), never above a child's room.
 */
static void spread(const struct bisector *b, int l, int m, int ar, const int *order, int *target)
{
	long long room = 0;
	int given = 0;

	for (int i = 0; i < ar; i++)
		room += capacity(b, l + 1, order[i]);
	for (int i = 0; i < ar; i++) {
		target[i] = room ? (int)((long long)m * capacity(b, l + 1, order[i]) / room) : 0;
		given += target[i];
	}
	while (given < m) {
		int best = -1;
		long long bf = -1;

		for (int i = 0; i < ar; i++) {
			long long f =
			    (long long)m * capacity(b, l + 1, order[i]) % (room ? room : 1);

			if (target[i] < capacity(b, l + 1, order[i]) && (best < 0 || f > bf)) {
				best = i;
				bf = f;
			}
		}
		if (best < 0)
			break;
		target[best]++;
		given++;
	}
}

/*
 * The children of `node` (depth l) that take m ranks: by decreasing
 * capacity (ties: lowest index) until m fits, then back in tree order
 * (deterministic, packs low leaves first). order and target get k entries;
 * returns k.
 */
static int choose_children(const struct bisector *b, int l, int node, int m, int *order,
                           int *target)
{
	int ar = b->t->arity[l], k = 0;

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
	if (l == 0 && b->spread_top) {
		spread(b, l, m, ar, order, target);
		for (int i = 0; i < ar; i++) /* the children given none drop out */
			if (target[i] > 0) {
				order[k] = order[i];
				target[k++] = target[i];
			}
	} else {
		for (int left = m; left > 0 && k < ar; k++) {
			int cap = capacity(b, l + 1, order[k]);
			target[k] = cap < left ? cap : left;
			left -= target[k];
		}
	}
	while (k > 0 && target[k - 1] == 0)
		k--;
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
	return k;
}

/* ------------------------------------------------------------------------ */
/* Large inputs: the upper levels guided by a coarse graph                  */

/*
 * Above VAST_RANKS ranks, METIS on the whole matrix is what costs: the
 * split of 1,048,576 ranks of a random geometric graph among 256 switches
 * alone took 9 s and 200 MB of METIS's own, the bisection 17 s and 380 MB
 * in all. The matrix is coarsened instead, by heavy-edge matching rounds
 * (ranks in a seeded random order, each with its unmatched neighbour of
 * heaviest traffic, at most COARSE_MAXW ranks to a coarse vertex) down to
 * 1/COARSEN_RATIO of the ranks; the coarse graph is split down the tree as
 * the ranks would be (METIS, its vertices weighing their ranks) over the
 * levels whose nodes hold more than VAST_RANKS leaves, each coarse vertex
 * ending on a node of the first level below. The ranks then follow their
 * coarse vertex at those levels, each split refined by greedy moves
 * (refine_split) and made exact by the balance repair METIS's splits get;
 * the levels below are split as before, on segments METIS handles
 * quickly, and their many smallest segments (a socket's cores) by
 * small_split. On that geometric graph: 12 s, 240 MB, hop-bytes 0.15 %
 * above the whole-matrix bisection's.
 */
#define VAST_RANKS    65536
#define COARSEN_RATIO 8
#define COARSE_MAXW   16

/* Whether the split at depth l follows the guide. */
static int guided(const struct bisector *b, int l)
{
	return l < b->guide_depth;
}

/*
 * Greedy boundary refinement of a k-way split: passes over the vertices,
 * each moved to the part it is most attached to when that saves traffic,
 * the part it leaves is not below 99 % of its target and the one it joins
 * not above 101 % (the coarse graph could not see these moves). The caller
 * makes the sizes exact.
 */
#define REFINE_PASSES 3
static void refine_split(struct bisector *b, const struct graph *g, const int *target, int *size,
                         int *part)
{
	for (int pass = 0; pass < REFINE_PASSES; pass++) {
		int moved = 0;

		for (int v = 0; v < g->m; v++) {
			int p = part[v], nt = 0, best_q = -1;
			double own = 0, best = 0;

			for (idx_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
				int q = part[g->adj[e]];

				if (q == p) {
					own += (double)g->adjw[e];
					continue;
				}
				if (b->conn[q] == 0)
					b->touched[nt++] = q;
				b->conn[q] += (double)g->adjw[e];
			}
			for (int i = 0; i < nt; i++) {
				int q = b->touched[i];

				if (b->conn[q] - own > best ||
				    (best_q >= 0 && q < best_q && b->conn[q] - own == best)) {
					// q < k, the parts size and target hold
					// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
					if (size[q] < target[q] + 1 + target[q] / 100 &&
					    size[p] > target[p] - 1 - target[p] / 100) {
						best = b->conn[q] - own;
						best_q = q;
					}
				}
				b->conn[q] = 0;
			}
			if (best_q >= 0) {
				part[v] = best_q;
				size[p]--;
				size[best_q]++;
				moved++;
			}
		}
		if (!moved)
			break;
	}
}

/* The ranks of the segment to the chosen children their coarse vertex went
   to (the first child when it went elsewhere), refined, made exact. */
static int guided_split(struct bisector *b, const struct graph *g, int l, int k, const int *order,
                        const int *target, int lo, int *part)
{
	int ratio = b->t->span[l + 1] / b->t->span[b->guide_depth], rc = -1;
	int *size = calloc((size_t)(k ? k : 1), sizeof(*size));

	if (!size) {
		errno = ENOMEM;
		return -1;
	}
	for (int v = 0; v < g->m; v++) {
		int child = b->guide[b->perm[lo + v]] / ratio, a = 0, z = k - 1;

		while (a < z) { /* order is increasing */
			int mid = (a + z) / 2;

			if (order[mid] < child)
				a = mid + 1;
			else
				z = mid;
		}
		part[v] = order[a] == child ? a : 0;
		size[part[v]]++;
	}
	refine_split(b, g, target, size, part);
	rc = repair_balance(b, g, k, target, size, part);
	free(size);
	return rc;
}

/* What a coarsening round reads: the matrix (weights scaled as
   build_subgraph scales them) or the previous round's coarse graph. */
struct cview {
	const struct tmatch_comm *c;
	double scale;
	const struct graph *g;
};

static int cv_n(const struct cview *v)
{
	return v->c ? v->c->n : v->g->m;
}

static size_t cv_begin(const struct cview *v, int i)
{
	return v->c ? v->c->row_ptr[i] : (size_t)v->g->xadj[i];
}

static int cv_col(const struct cview *v, size_t e)
{
	return v->c ? v->c->col[e] : (int)v->g->adj[e];
}

static idx_t cv_w(const struct cview *v, size_t e)
{
	double w;

	if (!v->c)
		return v->g->adjw[e];
	w = floor(v->c->w[e] * v->scale + 0.5);
	return w < 1 ? 1 : (idx_t)w;
}

static idx_t cv_vw(const struct cview *v, int i)
{
	return v->c ? 1 : v->g->vwgt[i];
}

static void graph_free(struct graph *g)
{
	free(g->xadj);
	free(g->adj);
	free(g->adjw);
	free(g->vwgt);
	memset(g, 0, sizeof(*g));
}

/*
 * One heavy-edge matching round over v: cmap[i] = i's coarse vertex, the
 * coarse graph into out (edges merged, weights and vertex weights summed).
 * -1 on ENOMEM.
 */
static int coarsen_round(const struct cview *v, tmatch__rng_t *rng, int *cmap, struct graph *out)
{
	int n = cv_n(v), nc = 0, rc = -1;
	int *order = malloc(sizeof(int) * (size_t)n), *mem = malloc(sizeof(int) * 2 * (size_t)n);
	int *mark = malloc(sizeof(int) * (size_t)n);
	size_t cap = cv_begin(v, n), e = 0;

	memset(out, 0, sizeof(*out));
	if (!order || !mem || !mark)
		goto out;
	for (int i = 0; i < n; i++) {
		int j = (int)tmatch__rng_below(rng, (uint64_t)i + 1);

		order[i] = j < i ? order[j] : i; /* an inside-out shuffle */
		order[j] = i;
		cmap[i] = -1;
	}
	for (int x = 0; x < n; x++) {
		int i = order[x], best = -1;
		idx_t bw = 0;

		if (cmap[i] >= 0)
			continue;
		for (size_t k = cv_begin(v, i); k < cv_begin(v, i + 1); k++) {
			int u = cv_col(v, k);
			idx_t w = cv_w(v, k);

			if (cmap[u] < 0 && u != i && cv_vw(v, i) + cv_vw(v, u) <= COARSE_MAXW &&
			    (w > bw || (w == bw && u < best))) {
				best = u;
				bw = w;
			}
		}
		mem[2 * nc] = i;
		mem[2 * nc + 1] = best;
		cmap[i] = nc;
		if (best >= 0)
			cmap[best] = nc;
		nc++;
	}
	out->m = nc;
	out->xadj = malloc(sizeof(idx_t) * ((size_t)nc + 1));
	out->vwgt = malloc(sizeof(idx_t) * (size_t)(nc ? nc : 1));
	out->adj = malloc(sizeof(idx_t) * (cap ? cap : 1));
	out->adjw = malloc(sizeof(idx_t) * (cap ? cap : 1));
	if (!out->xadj || !out->vwgt || !out->adj || !out->adjw)
		goto out;
	for (int c = 0; c < nc; c++)
		mark[c] = -1;
	for (int c = 0; c < nc; c++) {
		size_t start = e;

		out->xadj[c] = (idx_t)e;
		out->vwgt[c] = 0;
		for (int h = 0; h < 2; h++) {
			int i = mem[2 * c + h];

			if (i < 0)
				continue;
			out->vwgt[c] += cv_vw(v, i);
			for (size_t k = cv_begin(v, i); k < cv_begin(v, i + 1); k++) {
				int d = cmap[cv_col(v, k)];

				if (d == c)
					continue;
				if (mark[d] < 0 || (size_t)mark[d] < start) {
					mark[d] = (int)e;
					// e < xadj[m], the size adj was allocated with
					// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
					out->adj[e] = d;
					out->adjw[e++] = 0;
				}
				out->adjw[mark[d]] += cv_w(v, k);
			}
		}
	}
	out->xadj[nc] = (idx_t)e;
	{ /* the merged edges are fewer: give the rest back */
		idx_t *a = realloc(out->adj, sizeof(idx_t) * (e ? e : 1));
		idx_t *w = realloc(out->adjw, sizeof(idx_t) * (e ? e : 1));

		if (a)
			out->adj = a;
		if (w)
			out->adjw = w;
	}
	rc = 0;
out:
	if (rc)
		graph_free(out);
	free(order);
	free(mem);
	free(mark);
	return rc;
}

/* Scratch of the coarse graph's splits. */
struct cscratch {
	const struct graph *G;
	int *loc, *part, *tmp;
	struct graph sub;
	int *cnode; /* coarse vertex -> its node at guide_depth */
};

/* The coarse vertices cperm[lo..lo+m), weighing wsum ranks, under `node`
   at depth l, split down to guide_depth as place() splits ranks. */
static int cplace(struct bisector *b, struct cscratch *cs, int *cperm, int l, int node, int lo,
                  int m, int wsum)
{
	const struct graph *G = cs->G;
	int ar, k, rc = -1, *order = NULL, *target = NULL, *cnt = NULL, *wpart = NULL;

	if (m == 0)
		return 0;
	if (l == b->guide_depth) {
		for (int i = 0; i < m; i++)
			cs->cnode[cperm[lo + i]] = node;
		return 0;
	}
	ar = b->t->arity[l];
	order = malloc(sizeof(*order) * (size_t)ar);
	target = malloc(sizeof(*target) * (size_t)ar);
	cnt = malloc(sizeof(*cnt) * ((size_t)ar + 1));
	wpart = calloc((size_t)ar, sizeof(*wpart));
	if (!order || !target || !cnt || !wpart) {
		errno = ENOMEM;
		goto out;
	}
	k = choose_children(b, l, node, wsum, order, target);
	if (k <= 1) {
		rc = cplace(b, cs, cperm, l + 1, k ? order[0] : node * ar, lo, m, wsum);
		goto out;
	}
	{ /* the coarse subgraph, as build_subgraph makes the ranks' */
		idx_t e = 0;

		for (int i = 0; i < m; i++)
			cs->loc[cperm[lo + i]] = i;
		for (int i = 0; i < m; i++) {
			int c = cperm[lo + i];

			cs->sub.xadj[i] = e;
			cs->sub.vwgt[i] = G->vwgt[c];
			for (idx_t x = G->xadj[c]; x < G->xadj[c + 1]; x++)
				if (cs->loc[G->adj[x]] >= 0) {
					cs->sub.adj[e] = cs->loc[G->adj[x]];
					cs->sub.adjw[e++] = G->adjw[x];
				}
		}
		cs->sub.xadj[m] = e;
		cs->sub.m = m;
		for (int i = 0; i < m; i++)
			cs->loc[cperm[lo + i]] = -1;
	}
	if (metis_split(b, &cs->sub, k, target, 0, cs->part) != 0)
		goto out;
	for (int q = 0; q <= k; q++)
		cnt[q] = 0;
	for (int i = 0; i < m; i++) {
		cnt[cs->part[i] + 1]++;
		wpart[cs->part[i]] += (int)cs->sub.vwgt[i];
	}
	for (int q = 0; q < k; q++)
		cnt[q + 1] += cnt[q];
	for (int i = 0; i < m; i++)
		cs->tmp[cnt[cs->part[i]]++] = cperm[lo + i];
	memcpy(cperm + lo, cs->tmp, sizeof(int) * (size_t)m);
	for (int q = 0, off = lo; q < k; q++) {
		int mq = q ? cnt[q] - cnt[q - 1] : cnt[0];

		if (cplace(b, cs, cperm, l + 1, order[q], off, mq, wpart[q]) != 0)
			goto out;
		off += mq;
	}
	rc = 0;
out:
	free(order);
	free(target);
	free(cnt);
	free(wpart);
	return rc;
}

/*
 * b->guide: each rank's node at guide_depth, from the coarse graph's split
 * (left NULL when no level is guided). -1 on ENOMEM.
 */
static int make_guide(struct bisector *b)
{
	const struct tmatch_comm *c = b->c;
	const struct tmatch_topo *t = b->t;
	int n = c->n, rc = -1, *comp = NULL, *cmap = NULL, *cperm = NULL;
	struct graph cur = {0, NULL, NULL, NULL, NULL}, next;
	struct cscratch cs;
	struct cview v = {c, 1, NULL};
	double maxw = 0, tot = 0;
	tmatch__rng_t rng;

	memset(&cs, 0, sizeof(cs));
	b->guide_depth = 0;
	while (b->guide_depth < t->depth && t->span[b->guide_depth] > VAST_RANKS)
		b->guide_depth++;
	if (b->guide_depth == 0)
		return 0;
	for (size_t e = 0; e < c->nnz; e++) { /* build_subgraph's scale, whole matrix */
		maxw = c->w[e] > maxw ? c->w[e] : maxw;
		tot += c->w[e];
	}
	v.scale = maxw > 0 ? 1048576.0 / maxw : 1;
	if (tot * v.scale > 1e9)
		v.scale = 1e9 / tot;
	tmatch__rng_seed(&rng, b->seed ^ 0xc0a25eedULL);
	comp = malloc(sizeof(int) * (size_t)n);
	cmap = malloc(sizeof(int) * (size_t)n);
	if (!comp || !cmap)
		goto out;
	for (int i = 0; i < n; i++)
		comp[i] = i;
	for (;;) { /* rounds until 1/COARSEN_RATIO, or until they stop paying */
		int before = cv_n(&v);

		if (coarsen_round(&v, &rng, cmap, &next) != 0)
			goto out;
		for (int i = 0; i < n; i++)
			comp[i] = cmap[comp[i]];
		graph_free(&cur);
		cur = next;
		v.c = NULL;
		v.g = &cur;
		if (cur.m * COARSEN_RATIO <= n || cur.m * 20 > before * 19)
			break;
	}
	free(cmap);
	cmap = NULL;
	cs.G = &cur;
	cs.loc = malloc(sizeof(int) * (size_t)cur.m);
	cs.part = malloc(sizeof(int) * (size_t)cur.m);
	cs.tmp = malloc(sizeof(int) * (size_t)cur.m);
	cs.cnode = malloc(sizeof(int) * (size_t)cur.m);
	cs.sub.xadj = malloc(sizeof(idx_t) * ((size_t)cur.m + 1));
	cs.sub.vwgt = malloc(sizeof(idx_t) * (size_t)cur.m);
	cs.sub.adj = malloc(sizeof(idx_t) * ((size_t)cur.xadj[cur.m] + 1));
	cs.sub.adjw = malloc(sizeof(idx_t) * ((size_t)cur.xadj[cur.m] + 1));
	cperm = malloc(sizeof(int) * (size_t)cur.m);
	if (!cs.loc || !cs.part || !cs.tmp || !cs.cnode || !cs.sub.xadj || !cs.sub.vwgt ||
	    !cs.sub.adj || !cs.sub.adjw || !cperm)
		goto out;
	for (int i = 0; i < cur.m; i++) {
		cs.loc[i] = -1;
		cperm[i] = i;
	}
	if (cplace(b, &cs, cperm, 0, 0, 0, cur.m, n) != 0)
		goto out;
	for (int i = 0; i < n; i++) /* ranks to their coarse vertex's node */
		comp[i] = cs.cnode[comp[i]];
	b->guide = comp;
	comp = NULL;
	rc = 0;
out:
	if (rc)
		errno = ENOMEM;
	graph_free(&cur);
	graph_free(&cs.sub);
	free(cs.loc);
	free(cs.part);
	free(cs.tmp);
	free(cs.cnode);
	free(cperm);
	free(comp);
	free(cmap);
	return rc;
}

static void scratch_free(struct bisector *b)
{
	free(b->loc);
	free(b->part);
	free(b->tmp);
	free(b->xadj);
	free(b->adj);
	free(b->adjw);
	free(b->conn);
	free(b->touched);
	b->loc = b->part = b->tmp = b->touched = NULL;
	b->xadj = b->adj = b->adjw = NULL;
	b->conn = NULL;
}

/*
 * Scratch for segments of up to m ranks whose rows hold up to nnz matrix
 * entries: b's loc (over every rank, all -1), part, tmp, the subgraph's
 * arrays and the per-part conn and touched. -1 (ENOMEM) with b's scratch
 * freed.
 */
static int scratch_alloc(struct bisector *b, int m, size_t nnz)
{
	int n = b->c->n;

	b->loc = malloc(sizeof(int) * (size_t)n);
	b->part = malloc(sizeof(int) * (size_t)(m ? m : 1));
	b->tmp = malloc(sizeof(int) * (size_t)(m ? m : 1));
	b->xadj = malloc(sizeof(idx_t) * ((size_t)m + 1));
	b->adj = malloc(sizeof(idx_t) * (nnz ? nnz : 1));
	b->adjw = malloc(sizeof(idx_t) * (nnz ? nnz : 1));
	b->conn = calloc((size_t)b->maxar, sizeof(double));
	b->touched = malloc(sizeof(int) * (size_t)b->maxar);
	if (!b->loc || !b->part || !b->tmp || !b->xadj || !b->adj || !b->adjw || !b->conn ||
	    !b->touched) {
		scratch_free(b);
		errno = ENOMEM;
		return -1;
	}
	for (int q = 0; q < n; q++)
		b->loc[q] = -1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The children of a large segment on several threads                      */

/*
 * Once a segment is split, its children are independent subproblems: each
 * is split further from its own ranks alone (the seed is the call's, METIS
 * is seeded at every call), writes its own range of perm and its own
 * ranks' leaves, and reads only what no one writes (the matrix, the tree,
 * the guide). So the children of a segment of at least CREW_MIN_RANKS
 * ranks are placed by a crew (crew.c), each thread with its own scratch:
 * loc above all, which build_subgraph reads for every neighbour of the
 * segment, in or out of it. The placement is the one a single thread
 * makes, whatever the threads and the order the children finish in. Only
 * the first such split fans out (its pieces run with threads = 1): on a
 * 1,048,576-rank input it gives 256 pieces of 4096 ranks, plenty for the
 * CPUs. METIS calls still take metis_lock, one at a time: the other threads
 * meanwhile split small segments, build subgraphs and repair balances.
 * Smaller segments stay on one thread: below it a whole bisection takes
 * a few tenths of a second at most (8192 random ranks: 0.2 s), and auto
 * already runs its node-size candidates on a crew of its own. The other
 * threads' scratch is sized by the largest child, but for loc (every
 * rank): 4 MiB each on 1,048,576 ranks.
 */
#define CREW_MIN_RANKS 16384

static int place(struct bisector *b, int l, int node, int lo, int m);

struct fanout {
	int l;
	const int *order, *target, *off; /* the children: node, ranks, first in perm */
	pthread_mutex_t mu;
	struct bisector *idle[TMATCH__CREW_MAX]; /* the scratch sets not in use */
	int nidle;
	int err; /* errno of a piece that failed, 0: none */
};

static void fanout_work(void *arg, int q)
{
	struct fanout *f = arg;
	struct bisector *w = NULL;
	int rc = 0, e = 0;

	pthread_mutex_lock(&f->mu);
	if (!f->err) /* at most threads pieces run at once: never empty */
		w = f->idle[--f->nidle];
	pthread_mutex_unlock(&f->mu);
	if (!w)
		return;
	if (place(w, f->l + 1, f->order[q], f->off[q], f->target[q]) != 0) {
		rc = -1;
		e = errno ? errno : ENOMEM;
	}
	pthread_mutex_lock(&f->mu);
	if (rc && !f->err)
		f->err = e;
	f->idle[f->nidle++] = w;
	pthread_mutex_unlock(&f->mu);
}

/* place() of the k children of a segment (perm[lo..) already sorted by
   child) by a crew of up to b->threads threads. */
static int children_crew(struct bisector *b, int l, int k, const int *order, const int *target,
                         int lo)
{
	static const struct tmatch__crew_ops ops = {NULL, NULL, fanout_work, NULL};
	const struct tmatch_comm *c = b->c;
	struct bisector w[TMATCH__CREW_MAX];
	struct fanout f = {.l = l, .order = order, .target = target};
	int *off = malloc(sizeof(int) * (size_t)k), *seq = malloc(sizeof(int) * (size_t)k);
	int threads = b->threads < k ? b->threads : k, sets = 0, mmax = 0, rc = -1;
	size_t emax = 0;

	if (!off || !seq) {
		errno = ENOMEM;
		goto out;
	}
	/* the largest child and the most matrix entries a child's rows hold:
	   what the other threads' scratch must take */
	for (int q = 0, at = lo; q < k; q++) {
		size_t e = 0;

		for (int v = at; v < at + target[q]; v++)
			e += c->row_ptr[b->perm[v] + 1] - c->row_ptr[b->perm[v]];
		off[q] = at;
		seq[q] = q;
		at += target[q];
		mmax = target[q] > mmax ? target[q] : mmax;
		emax = e > emax ? e : emax;
	}
	f.off = off;
	/* the first thread has b's scratch (this segment's caller is done with
	   it); a thread whose scratch cannot be had is not started */
	for (; sets < threads; sets++) {
		w[sets] = *b;
		w[sets].threads = 1;
		if (sets > 0 && scratch_alloc(&w[sets], mmax, emax) != 0)
			break;
		f.idle[f.nidle++] = &w[sets];
	}
	pthread_mutex_init(&f.mu, NULL);
	if (tmatch__crew_run(k, seq, &ops, &f, f.nidle) != 0) {
		errno = ENOMEM;
	} else if (f.err) {
		errno = f.err;
	} else {
		rc = 0;
	}
	pthread_mutex_destroy(&f.mu);
	for (int i = 1; i < sets; i++) /* w[0]'s is b's */
		scratch_free(&w[i]);
out:
	free(off);
	free(seq);
	return rc;
}

/* ------------------------------------------------------------------------ */

/* Place perm[lo..lo+m) under node `node` at depth l. */
static int place(struct bisector *b, int l, int node, int lo, int m)
{
	const struct tmatch_topo *t = b->t;
	int ar, k, rc = -1;
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
	cnt = calloc((size_t)ar + 1, sizeof(*cnt)); /* the counting sort's, zero */
	if (!order || !target || !cnt) {
		errno = ENOMEM;
		goto out;
	}
	k = choose_children(b, l, node, m, order, target);
	if (k == 1) {
		rc = place(b, l + 1, order[0], lo, m);
		goto out;
	}
	build_subgraph(b, lo, m);
	{
		struct graph g = {m, b->xadj, b->adj, b->adjw, NULL};

		if (b->guide && guided(b, l) ? guided_split(b, &g, l, k, order, target, lo, b->part)
		                             : best_split(b, &g, k, target, b->part))
			goto out;
	}
	/* Counting sort of the segment by part. */
	for (int v = 0; v < m; v++)
		cnt[b->part[v] + 1]++;
	for (int q = 0; q < k; q++)
		cnt[q + 1] += cnt[q];
	for (int v = 0; v < m; v++)
		b->tmp[cnt[b->part[v]]++] = b->perm[lo + v];
	memcpy(b->perm + lo, b->tmp, sizeof(int) * (size_t)m);
	if (b->threads > 1 && m >= CREW_MIN_RANKS) {
		rc = children_crew(b, l, k, order, target, lo);
		goto out;
	}
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

static int map_bisect(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                      const tmatch_map_opts_t *opts, int spread_top, int *leaf_of_rank,
                      tmatch_error_t *err);

int tmatch__map_bisect(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                       const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	return map_bisect(comm, topo, opts, 0, leaf_of_rank, err);
}

int tmatch__map_bisect_spread(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                              const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	return map_bisect(comm, topo, opts, 1, leaf_of_rank, err);
}

static int map_bisect(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                      const tmatch_map_opts_t *opts, int spread_top, int *leaf_of_rank,
                      tmatch_error_t *err)
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
	b.fast_small = n > VAST_RANKS;
	b.spread_top = spread_top;
	b.maxar = 1;
	for (int l = 0; l < topo->depth; l++)
		b.maxar = topo->arity[l] > b.maxar ? topo->arity[l] : b.maxar;
	b.threads = n >= CREW_MIN_RANKS ? tmatch__crew_threads(TMATCH__CREW_MAX) : 1;
	b.allowed_prefix = malloc(sizeof(int) * ((size_t)nl + 1));
	if (!b.allowed_prefix) {
		errno = ENOMEM;
		goto out;
	}
	b.allowed_prefix[0] = 0;
	for (int lf = 0; lf < nl; lf++)
		b.allowed_prefix[lf + 1] =
		    b.allowed_prefix[lf] + (!topo->allowed || topo->allowed[lf] ? 1 : 0);
	/* before the ranks' arrays: the coarse graphs never sit beside them */
	if (b.fast_small && make_guide(&b) != 0)
		goto out;
	b.perm = malloc(sizeof(int) * (size_t)n);
	if (!b.perm || scratch_alloc(&b, n, nnz) != 0) {
		errno = ENOMEM;
		goto out;
	}
	for (int q = 0; q < n; q++)
		b.perm[q] = q;
	rc = place(&b, 0, 0, 0, n);
out:
	if (rc != 0)
		tmatch_error_set(err, 0, NULL, 0, 0, "bisect: %s",
		                 errno == ENOMEM ? "out of memory" : "partitioning failed");
	free(b.perm);
	scratch_free(&b);
	free(b.allowed_prefix);
	free(b.guide);
	return rc;
}
