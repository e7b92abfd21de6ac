/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_treematch.c - TreeMatch (Jeannot, Mercier, Tessier 2013): group the ranks
 * bottom-up, one tree level at a time, by communication affinity; aggregate
 * the matrix between levels; map the hierarchy of groups onto the tree top
 * down.
 *
 * What this implementation adds to the paper:
 * - Levels of composite arity are split into levels of prime arity, the
 *   smallest factor at the bottom (the greatest non-trivial divisor rule of
 *   section 4.2.1, proven optimal by Mann 2016), so an arity of 14 becomes
 *   2 then 7 and is never enumerated as C(p, 14).
 * - Everything is sparse: the matrix of every level is a CSR built from the
 *   previous one in O(nnz). A dense p x p array only exists for the exact
 *   grouping, whose candidate count (computed in saturating integers) is at
 *   most opts->exact_max_groups.
 * - Grouping: the exact independent-set heuristic of the paper when the
 *   candidate groups are few; otherwise a greedy on the pairs sorted by
 *   decreasing weight (the bucket method, with a full deterministic sort),
 *   completed by affinity and region growing. Both are followed by a few
 *   deterministic passes of pairwise swaps between groups.
 * - Partial allocations: when only some leaves are allowed, the number of
 *   ranks under every tree node (its quota) is fixed top down first, filling
 *   the nodes with the most allowed leaves first; nodes are then described
 *   by their "shape" (the multiset of the shapes of their non-empty children)
 *   and a group may only be formed in the shape of an existing node, so the
 *   final traversal always finds a place for every group and never uses a
 *   leaf that is not allowed. With every leaf allowed the paper's artificial
 *   (zero-traffic) processes are used instead, so group sizes stay free.
 *
 * No wall clock is read; the result depends only on the inputs and options.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_EXACT_MAX_GROUPS 30000
#define EXACT_HARD_MAX           (1L << 22)
#define EXACT_MAX_ITEMS          512 /* dense p x p scratch of the exact method */
#define DEFAULT_SWAP_PASSES      4
#define PORTFOLIO_MAX_DEGREE     32    /* above: one tie-breaking rule only */
#define PORTFOLIO_MAX_RANKS      65536 /* above: one run (see tmatch__map_treematch) */
#define SWAP_WORK_FACTOR         8     /* edges scanned per edge of the level, all passes */
#define SWAP_CANDIDATES          4     /* groups tried per item */

/* The matrix between the items of one level. Items >= n have no edges. */
struct graph {
	int n;
	size_t *rp;
	int *col;
	double *w;
	int owned;
};

static void graph_free(struct graph *g)
{
	if (g->owned) {
		free(g->rp);
		free(g->col);
		free(g->w);
	}
	memset(g, 0, sizeof(*g));
}

/*
 * The kinds of parent a level may form. Type t has nent[t] entries
 * (child shape, how many), count[t] instances numbered first[t]...
 */
struct types {
	int ntypes;
	int *nent, *off, *count, *first;
	int *ent_shape, *ent_cnt;
	int total_groups;
};

static void types_free(struct types *T)
{
	free(T->nent);
	free(T->off);
	free(T->count);
	free(T->first);
	free(T->ent_shape);
	free(T->ent_cnt);
	memset(T, 0, sizeof(*T));
}

/* One grouping step: G groups of at most k members (items of the level below). */
struct step {
	int k;       /* slots per group (the arity of this level) */
	int G;       /* groups formed */
	int p;       /* items grouped (including artificial ones) */
	int p_real;  /* items that stand for ranks or real groups */
	int *member; /* G * k, -1 = empty */
	int *gtype;  /* G */
};

struct ctx {
	const tmatch_map_opts_t *opts;
	tmatch_error_t *err;
	long exact_max;
	int swap_passes;
	int used_exact;     /* set when some level ran the exact method */
	int tie_bfs;        /* break weight ties by breadth-first position, not index */
	int quota_in_order; /* partial sets: fill children in index order, not largest first */
};

static int oom(struct ctx *c)
{
	tmatch_error_set(c->err, 0, NULL, 0, 0, "out of memory in the treematch mapper");
	errno = ENOMEM;
	return -1;
}

/* C(p, k) saturated at cap, in integers (the reference used floating point). */
static long long binom_capped(long long p, long long k, long long cap)
{
	long long c = 1;
	if (k < 0 || k > p)
		return 0;
	if (k > p - k)
		k = p - k;
	for (long long i = 1; i <= k; i++) {
		long long f = p - k + i;
		if (c > (LLONG_MAX / f))
			return cap + 1;
		c = c * f / i;
		if (c > cap)
			return cap + 1;
	}
	return c;
}

/* ------------------------------------------------------------------------ */
/* Grouping state                                                            */

struct gstate {
	const struct graph *gr;
	const int *ishape; /* NULL: every item has shape 0 */
	const struct types *T;
	int p, k, G;
	int *gtype, *member, *fill, *uoff, *used, *group_of, *topen;
};

static int ishape_of(const struct gstate *s, int i)
{
	return s->ishape ? s->ishape[i] : 0;
}

/* Entry of shape sh in group g's type, -1 if none. */
static int entry_of(const struct gstate *s, int t, int sh)
{
	const struct types *T = s->T;
	for (int e = 0; e < T->nent[t]; e++)
		if (T->ent_shape[T->off[t] + e] == sh)
			return e;
	return -1;
}

static int free_slots(const struct gstate *s, int g, int sh)
{
	int t = s->gtype[g], e;
	if (t < 0)
		return 0;
	e = entry_of(s, t, sh);
	if (e < 0)
		return 0;
	return s->T->ent_cnt[s->T->off[t] + e] - s->used[s->uoff[g] + e];
}

static void add_item(struct gstate *s, int g, int i)
{
	int t = s->gtype[g], e = entry_of(s, t, ishape_of(s, i));
	s->used[s->uoff[g] + e]++;
	s->member[(size_t)g * (size_t)s->k + (size_t)s->fill[g]++] = i;
	s->group_of[i] = g;
}

static void remove_item(struct gstate *s, int g, int i)
{
	int t = s->gtype[g], e = entry_of(s, t, ishape_of(s, i));
	int *m = s->member + (size_t)g * (size_t)s->k;
	s->used[s->uoff[g] + e]--;
	for (int j = 0; j < s->fill[g]; j++)
		if (m[j] == i) {
			memmove(m + j, m + j + 1, sizeof(*m) * (size_t)(s->fill[g] - j - 1));
			break;
		}
	m[--s->fill[g]] = -1;
	s->group_of[i] = -1;
}

/* Open a new group of the first type with room for items of shapes a and b (b < 0: one). */
static int open_group(struct gstate *s, int sa, int sb)
{
	const struct types *T = s->T;
	for (int t = 0; t < T->ntypes; t++) {
		int ea, eb, need_same;
		if (s->topen[t] >= T->first[t] + T->count[t])
			continue;
		ea = entry_of(s, t, sa);
		if (ea < 0)
			continue;
		if (sb >= 0) {
			eb = entry_of(s, t, sb);
			if (eb < 0)
				continue;
			need_same = (ea == eb) ? 2 : 1;
			if (T->ent_cnt[T->off[t] + ea] < need_same)
				continue;
		}
		{
			int g = s->topen[t]++;
			s->gtype[g] = t;
			return g;
		}
	}
	return -1;
}

static int gstate_init(struct gstate *s, const struct graph *gr, const int *ishape,
                       const struct types *T, int p, int k)
{
	int nu = 0;
	memset(s, 0, sizeof(*s));
	s->gr = gr;
	s->ishape = ishape;
	s->T = T;
	s->p = p;
	s->k = k;
	s->G = T->total_groups;
	s->gtype = malloc(sizeof(int) * (size_t)s->G);
	s->member = malloc(sizeof(int) * (size_t)s->G * (size_t)k);
	s->fill = calloc((size_t)s->G, sizeof(int));
	s->uoff = malloc(sizeof(int) * (size_t)s->G);
	s->group_of = malloc(sizeof(int) * (size_t)(p ? p : 1));
	s->topen = malloc(sizeof(int) * (size_t)T->ntypes);
	if (!s->gtype || !s->member || !s->fill || !s->uoff || !s->group_of || !s->topen)
		return -1;
	for (int t = 0; t < T->ntypes; t++) {
		s->topen[t] = T->first[t];
		for (int g = T->first[t]; g < T->first[t] + T->count[t]; g++) {
			s->uoff[g] = nu;
			nu += T->nent[t];
		}
	}
	s->used = calloc((size_t)(nu ? nu : 1), sizeof(int));
	if (!s->used)
		return -1;
	for (int g = 0; g < s->G; g++)
		s->gtype[g] = -1;
	for (size_t x = 0; x < (size_t)s->G * (size_t)k; x++)
		s->member[x] = -1;
	for (int i = 0; i < p; i++)
		s->group_of[i] = -1;
	return 0;
}

static void gstate_free(struct gstate *s)
{
	free(s->fill);
	free(s->uoff);
	free(s->used);
	free(s->group_of);
	free(s->topen);
	/* gtype and member are handed over to the step on success */
}

/* ------------------------------------------------------------------------ */
/* Exact grouping (paper, section 4.1): all candidate k-groups, valued by the
 * traffic they leave outside, chosen smallest first as an independent set. */

struct cand {
	double value;
	int idx;
};

/* The value's bits as an unsigned key in the same order (-0.0 as 0.0). */
static uint64_t cand_key(double v)
{
	uint64_t u;

	v += 0.0; /* -0.0 + 0.0 is +0.0: the two values are equal */
	memcpy(&u, &v, sizeof(u));
	return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/*
 * Keys in increasing order, tags (when given) moved with them, by a stable
 * radix sort a byte a pass; a pass whose byte is the same for every key is
 * skipped. kt and tt: scratch for n keys and n tags.
 */
static void radix_sort(uint64_t *key, int *tag, size_t n, uint64_t *kt, int *tt)
{
	uint64_t *ks = key, *kd = kt;
	int *ts = tag, *td = tt;

	for (int shift = 0; shift < 64; shift += 8) {
		size_t cnt[257] = {0}, same = 0;

		for (size_t i = 0; i < n; i++)
			cnt[((ks[i] >> shift) & 0xff) + 1]++;
		for (int b = 1; b <= 256; b++)
			same |= cnt[b] == n;
		if (same)
			continue;
		for (int b = 0; b < 256; b++)
			cnt[b + 1] += cnt[b];
		for (size_t i = 0; i < n; i++) {
			size_t d = cnt[(ks[i] >> shift) & 0xff]++;

			kd[d] = ks[i];
			if (tag)
				td[d] = ts[i];
		}
		{
			uint64_t *k = ks;
			int *t = ts;

			ks = kd;
			kd = k;
			ts = td;
			td = t;
		}
	}
	if (ks != key) {
		memcpy(key, ks, n * sizeof(*key));
		if (tag)
			memcpy(tag, ts, n * sizeof(*tag));
	}
}

/*
 * The candidates by increasing value, ties by idx: they come by increasing
 * idx, so a stable sort by value gives that order. A radix sort of their
 * keys, each computed once (qsort was a third of TreeMatch's time on 256
 * ranks). -1 on ENOMEM.
 */
static int sort_cands(struct cand *a, size_t n)
{
	/* keys and their scratch, then tags and theirs; the keys' room holds
	   the candidates in their new order at the end */
	uint64_t *key = malloc((sizeof(uint64_t) * 2 + sizeof(int) * 2) * (n ? n : 1));
	struct cand *out;
	int *tag;

	if (!key)
		return -1;
	tag = (int *)(key + 2 * n);
	out = (struct cand *)key;
	for (size_t i = 0; i < n; i++) {
		key[i] = cand_key(a[i].value);
		tag[i] = (int)i;
	}
	radix_sort(key, tag, n, key + n, tag + n);
	for (size_t i = 0; i < n; i++)
		out[i] = a[tag[i]];
	memcpy(a, out, n * sizeof(*a));
	free(key);
	return 0;
}

static int group_exact(struct ctx *c, struct gstate *s, long long ncand)
{
	long long made = 0; /* candidates made: ncand, the combinations of k of p */
	int p = s->p, k = s->k, rc = -1, *comb = NULL, *cmem = NULL;
	double *dm = NULL, *deg = NULL;
	struct cand *cand = NULL;
	unsigned char *taken = NULL;
	const struct graph *gr = s->gr;

	dm = calloc((size_t)p * (size_t)p, sizeof(*dm));
	deg = calloc((size_t)p, sizeof(*deg));
	comb = calloc((size_t)k + 1, sizeof(int));
	cmem = malloc(sizeof(int) * (size_t)ncand * (size_t)k);
	cand = malloc(sizeof(*cand) * (size_t)ncand);
	taken = calloc((size_t)p, 1);
	if (!dm || !deg || !comb || !cmem || !cand || !taken) {
		oom(c);
		goto out;
	}
	for (int i = 0; i < gr->n && i < p; i++)
		for (size_t e = gr->rp[i]; e < gr->rp[i + 1]; e++) {
			dm[(size_t)i * (size_t)p + (size_t)gr->col[e]] = gr->w[e];
			deg[i] += gr->w[e];
		}
	for (int j = 0; j < k; j++)
		comb[j] = j;
	for (long long x = 0; x < ncand; x++) {
		double v = 0, in = 0;

		made = x + 1;
		for (int a = 0; a < k; a++) {
			v += deg[comb[a]];
			for (int b = a + 1; b < k; b++)
				// comb[] < p
				// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
				in += dm[(size_t)comb[a] * (size_t)p + (size_t)comb[b]];
			cmem[(size_t)x * (size_t)k + (size_t)a] = comb[a];
		}
		cand[x].value = v - 2 * in;
		cand[x].idx = (int)x;
		/* next combination in lexicographic order */
		{
			int j = k - 1;
			while (j >= 0 && comb[j] == p - k + j)
				j--;
			if (j < 0)
				break;
			comb[j]++;
			for (int a = j + 1; a < k; a++)
				comb[a] = comb[a - 1] + 1;
		}
	}
	if (sort_cands(cand, (size_t)made) != 0) {
		oom(c);
		goto out;
	}
	for (long long x = 0; x < made; x++) {
		const int *m = cmem + (size_t)cand[x].idx * (size_t)k;
		int ok = 1, g;
		for (int a = 0; a < k && ok; a++)
			ok = !taken[m[a]];
		if (!ok)
			continue;
		g = open_group(s, s->T->ent_shape[0], -1);
		if (g < 0)
			break;
		for (int a = 0; a < k; a++) {
			taken[m[a]] = 1;
			add_item(s, g, m[a]);
		}
	}
	rc = 0;
out:
	free(dm);
	free(deg);
	free(comb);
	free(cmem);
	free(cand);
	free(taken);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Greedy grouping for large levels.                                         */

/* A pair by its items' positions (smaller first): the positions are the
   tie keys and give the items back (16 bytes: 1M ranks' pairs fit in 50 MB). */
struct wedge {
	double w;
	int ki, kj;
};

static inline int wedge_before(const struct wedge *x, const struct wedge *y)
{
	if (x->w != y->w)
		return x->w > y->w;
	if (x->ki != y->ki)
		return x->ki < y->ki;
	return x->kj < y->kj;
}

/* Whether a is already in order (pairs are gathered by increasing position:
   one weight class, e.g. a stencil's, needs no sort and no scratch). */
static int wedges_sorted(const struct wedge *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (wedge_before(&a[i], &a[i - 1]))
			return 0;
	return 1;
}

/*
 * Sort pairs heaviest first, ties by (ki, kj): insertion-sorted runs of
 * 16, then bottom-up merges through tmp (n entries). The order is total,
 * so the result is the same as any other sort's.
 */
static void sort_wedges(struct wedge *a, size_t n, struct wedge *tmp)
{
	struct wedge *src = a, *dst = tmp;
	for (size_t lo = 0; lo < n; lo += 16) {
		size_t hi = lo + 16 < n ? lo + 16 : n;
		for (size_t i = lo + 1; i < hi; i++) {
			struct wedge x = a[i];
			size_t j = i;
			while (j > lo && wedge_before(&x, &a[j - 1])) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = x;
		}
	}
	for (size_t width = 16; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = wedge_before(&src[j], &src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		{
			struct wedge *t = src;
			src = dst;
			dst = t;
		}
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/*
 * Breadth-first positions of the items, each component started from its
 * lowest-degree item (lowest index on ties). Used to break ties between
 * equal weights: pairs are then taken along a sweep through the graph,
 * whatever the numbering of the ranks, which keeps groups compact on
 * regular patterns whose ranks were permuted.
 */
static int bfs_positions(const struct graph *gr, int p, int *pos)
{
	int *queue = malloc(sizeof(int) * (size_t)(p ? p : 1)), *order, head = 0, tail = 0,
	    next = 0;
	if (!queue)
		return -1;
	order = malloc(sizeof(int) * (size_t)(p ? p : 1));
	if (!order) {
		free(queue);
		return -1;
	}
	for (int i = 0; i < p; i++) {
		pos[i] = -1;
		order[i] = i;
	}
	/* starts: items by increasing degree, then index (counting sort on degree) */
	{
		size_t maxd = 0;
		size_t *cnt;
		for (int i = 0; i < gr->n && i < p; i++)
			if (gr->rp[i + 1] - gr->rp[i] > maxd)
				maxd = gr->rp[i + 1] - gr->rp[i];
		cnt = calloc(maxd + 2, sizeof(size_t));
		if (!cnt) {
			free(queue);
			free(order);
			return -1;
		}
		for (int i = 0; i < p; i++)
			cnt[(i < gr->n ? gr->rp[i + 1] - gr->rp[i] : 0) + 1]++;
		for (size_t d = 1; d <= maxd + 1; d++)
			cnt[d] += cnt[d - 1];
		for (int i = 0; i < p; i++)
			order[cnt[i < gr->n ? gr->rp[i + 1] - gr->rp[i] : 0]++] = i;
		free(cnt);
	}
	for (int x = 0; x < p; x++) {
		int start = order[x];
		if (pos[start] >= 0)
			continue;
		pos[start] = next++;
		queue[tail++] = start;
		while (head < tail) {
			int v = queue[head++];
			if (v >= gr->n)
				continue;
			for (size_t e = gr->rp[v]; e < gr->rp[v + 1]; e++)
				if (pos[gr->col[e]] < 0) {
					pos[gr->col[e]] = next++;
					// each item is queued once (pos set)
					// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
					queue[tail++] = gr->col[e];
				}
		}
	}
	free(queue);
	free(order);
	return 0;
}

/* Scratch for per-item accumulation with a touched list. */
struct acc {
	double *v;
	int *touched;
	unsigned char *mark;
	int nt;
};

static void acc_add(struct acc *a, int x, double w)
{
	if (!a->mark[x]) {
		a->mark[x] = 1;
		a->v[x] = 0;
		// each item is touched once (mark)
		// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		a->touched[a->nt++] = x;
	}
	// set to 0 when first marked
	// NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign)
	a->v[x] += w;
}

static void acc_reset(struct acc *a)
{
	for (int t = 0; t < a->nt; t++)
		a->mark[a->touched[t]] = 0;
	a->nt = 0;
}

/* Fill group g from the unassigned neighbours of its members, most connected first. */
static void grow(struct gstate *s, struct acc *a, int g)
{
	const struct graph *gr = s->gr;
	int k = s->k;

	acc_reset(a);
	for (int j = 0; j < s->fill[g]; j++) {
		int m = s->member[(size_t)g * (size_t)k + (size_t)j];
		if (m >= gr->n)
			continue;
		for (size_t e = gr->rp[m]; e < gr->rp[m + 1]; e++)
			if (s->group_of[gr->col[e]] < 0)
				acc_add(a, gr->col[e], gr->w[e]);
	}
	for (;;) {
		int best = -1;
		for (int t = 0; t < a->nt; t++) {
			int x = a->touched[t];
			if (s->group_of[x] >= 0 || !free_slots(s, g, ishape_of(s, x)))
				continue;
			if (best < 0 || a->v[x] > a->v[best] || (x < best && a->v[x] == a->v[best]))
				best = x;
		}
		if (best < 0)
			break;
		add_item(s, g, best);
		if (best < gr->n)
			for (size_t e = gr->rp[best]; e < gr->rp[best + 1]; e++)
				if (s->group_of[gr->col[e]] < 0)
					acc_add(a, gr->col[e], gr->w[e]);
	}
	acc_reset(a);
}

#define NB_BUCKETS  13                /* pivots from a sample of 2^(NB_BUCKETS - 1) weights */
#define CHUNK_PAIRS ((size_t)1 << 21) /* pairs gathered and sorted at once */

/* Values in decreasing order: a radix sort of their keys, complemented
   (qsort of the sample was a third of TreeMatch's time on a dense 64-rank
   profile). -1 on ENOMEM. */
static int sort_desc(double *v, size_t n)
{
	uint64_t *key = malloc(sizeof(*key) * 2 * (n ? n : 1));

	if (!key)
		return -1;
	for (size_t i = 0; i < n; i++)
		key[i] = ~cand_key(v[i]);
	radix_sort(key, NULL, n, key + n, NULL);
	/* back from the keys (cand_key inverted; a -0.0 comes back as 0.0) */
	for (size_t i = 0; i < n; i++) {
		uint64_t u = ~key[i];

		u = u >> 63 ? u & ~(UINT64_C(1) << 63) : ~u;
		memcpy(&v[i], &u, sizeof(u));
	}
	free(key);
	return 0;
}

static int bucket_of(const double *piv, int npiv, double w)
{
	int b = 0;
	while (b < npiv && w < piv[b])
		b++;
	return b;
}

/* One pair, heaviest first: start a group or extend one. */
static void take_pair(struct gstate *s, int i, int j)
{
	int gi = s->group_of[i], gj = s->group_of[j];
	if (gi < 0 && gj < 0) {
		int g = open_group(s, ishape_of(s, i), ishape_of(s, j));
		if (g >= 0) {
			add_item(s, g, i);
			add_item(s, g, j);
		}
	} else if (gi >= 0 && gj < 0) {
		if (free_slots(s, gi, ishape_of(s, j)))
			add_item(s, gi, j);
	} else if (gj >= 0 && gi < 0) {
		if (free_slots(s, gj, ishape_of(s, i)))
			add_item(s, gj, i);
	}
}

/*
 * The pairs in decreasing weight order (ties by index), consumed bucket by
 * bucket as in the paper's FastGroupProcesses: pivots from a strided
 * sample split the weights into magnitude classes; a bucket is only
 * gathered and sorted when the previous ones did not group every item, so
 * a dense matrix is never sorted (or held as a pair list) as a whole. The
 * order seen is exactly that of a full sort.
 */
static int greedy_pairs(struct ctx *c, struct gstate *s)
{
	const struct graph *gr = s->gr;
	size_t m = 0, stride, ns = 0, cnt[NB_BUCKETS] = {0}, maxb = 0;
	double sample[1 << (NB_BUCKETS - 1)], piv[NB_BUCKETS - 1]; /* sample: ns filled */
	int npiv = 0, rc = -1, unassigned = 0, *pos = NULL, *item_at = NULL;
	struct wedge *E = NULL, *Etmp = NULL;
	unsigned char *bk = NULL;

	for (int i = 0; i < gr->n; i++)
		for (size_t e = gr->rp[i]; e < gr->rp[i + 1]; e++)
			if (gr->col[e] > i && gr->w[e] > 0)
				m++;
	if (m == 0)
		return 0;
	for (int i = 0; i < s->p; i++)
		unassigned += s->group_of[i] < 0;
	stride = m / (sizeof(sample) / sizeof(sample[0])) + 1;
	{
		size_t x = 0;
		for (int i = 0; i < gr->n; i++)
			for (size_t e = gr->rp[i]; e < gr->rp[i + 1]; e++)
				if (gr->col[e] > i && gr->w[e] > 0 && x++ % stride == 0 &&
				    ns < sizeof(sample) / sizeof(sample[0]))
					sample[ns++] = gr->w[e];
	}
	if (sort_desc(sample, ns) != 0)
		return oom(c);
	for (int b = 0; b < NB_BUCKETS - 1; b++) {
		size_t at = ((size_t)1 << (b + 1)) - 1;
		if (at >= ns)
			break;
		if (npiv > 0 && sample[at] == piv[npiv - 1])
			continue;
		piv[npiv++] = sample[at];
	}
	/* each pair's bucket plus one, by edge, once (0: not a pair counted
	   here): the gathering passes read it back */
	if (!(bk = calloc(gr->rp[gr->n], 1)))
		goto out;
	for (int i = 0; i < gr->n; i++)
		for (size_t e = gr->rp[i]; e < gr->rp[i + 1]; e++)
			if (gr->col[e] > i && gr->w[e] > 0) {
				bk[e] = (unsigned char)(bucket_of(piv, npiv, gr->w[e]) + 1);
				cnt[bk[e] - 1]++;
			}
	/* consecutive buckets are gathered together up to CHUNK_PAIRS pairs */
	for (int b = 0; b <= npiv; b++)
		if (cnt[b] > maxb)
			maxb = cnt[b];
	if (maxb < CHUNK_PAIRS)
		maxb = m < CHUNK_PAIRS ? m : CHUNK_PAIRS;
	/* the sort's scratch (Etmp) only when a gathered chunk is out of order */
	E = malloc(sizeof(*E) * maxb);
	pos = malloc(sizeof(int) * (size_t)s->p);
	if (pos && !c->tie_bfs)
		for (int i = 0; i < s->p; i++)
			pos[i] = i;
	/* positions back to items: bfs_positions numbers every item once */
	if (pos && c->tie_bfs && !bfs_positions(gr, s->p, pos) &&
	    (item_at = malloc(sizeof(int) * (size_t)s->p)))
		for (int i = 0; i < s->p; i++)
			item_at[pos[i]] = i;
	if (!E || !pos || (c->tie_bfs && !item_at))
		goto out;
	for (int b = 0, b2; b <= npiv && unassigned > 0; b = b2 + 1) {
		size_t k = 0, total = cnt[b];
		/* more buckets in one pass only while too few pairs to group the
		   items left: a dense matrix's light tail is never gathered */
		for (b2 = b; b2 < npiv && total < (size_t)unassigned && total + cnt[b2 + 1] <= maxb;
		     b2++)
			total += cnt[b2 + 1];
		if (!total)
			continue;
		for (int i = 0; i < gr->n; i++)
			for (size_t e = gr->rp[i]; e < gr->rp[i + 1]; e++) {
				if (bk[e] > b && bk[e] <= b2 + 1) {
					int a = pos[i], z = pos[gr->col[e]];
					// k < the edges counted in total
					// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
					E[k].w = gr->w[e];
					E[k].ki = a < z ? a : z;
					E[k++].kj = a < z ? z : a;
				}
			}
		if (!wedges_sorted(E, k)) {
			if (!Etmp && !(Etmp = malloc(sizeof(*E) * maxb)))
				goto out;
			sort_wedges(E, k, Etmp);
		}
		for (size_t x = 0; x < k; x++) {
			/* the items, lower index first (as the rows gave them) */
			int i = item_at ? item_at[E[x].ki] : E[x].ki;
			// kj < the items
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			int j = item_at ? item_at[E[x].kj] : E[x].kj;
			int before = (s->group_of[i] < 0) + (s->group_of[j] < 0);

			take_pair(s, i < j ? i : j, i < j ? j : i);
			unassigned -= before - ((s->group_of[i] < 0) + (s->group_of[j] < 0));
		}
	}
	rc = 0;
out:
	free(E);
	free(Etmp);
	free(pos);
	free(item_at);
	free(bk);
	return rc ? oom(c) : 0;
}

static int group_greedy(struct ctx *c, struct gstate *s)
{
	const struct graph *gr = s->gr;
	struct acc a = {0}, ga = {0};
	int rc = -1, p = s->p;

	a.v = malloc(sizeof(double) * (size_t)(p ? p : 1));
	a.touched = malloc(sizeof(int) * (size_t)(p ? p : 1));
	a.mark = calloc((size_t)(p ? p : 1), 1);
	ga.v = malloc(sizeof(double) * (size_t)(s->G ? s->G : 1));
	ga.touched = malloc(sizeof(int) * (size_t)(s->G ? s->G : 1));
	ga.mark = calloc((size_t)(s->G ? s->G : 1), 1);
	if (!a.v || !a.touched || !a.mark || !ga.v || !ga.touched || !ga.mark) {
		oom(c);
		goto out;
	}
	if (greedy_pairs(c, s))
		goto out;

	/* Items left with traffic: join the most connected group that has room,
	   else start a group and grow it from their neighbours. */
	for (int i = 0; i < gr->n; i++) {
		int best = -1, sh;
		if (s->group_of[i] >= 0 || gr->rp[i] == gr->rp[i + 1])
			continue;
		sh = ishape_of(s, i);
		acc_reset(&ga);
		for (size_t e = gr->rp[i]; e < gr->rp[i + 1]; e++) {
			int g = s->group_of[gr->col[e]];
			if (g >= 0 && free_slots(s, g, sh))
				acc_add(&ga, g, gr->w[e]);
		}
		for (int t = 0; t < ga.nt; t++) {
			int g = ga.touched[t];
			if (ga.v[g] > 0 && (best < 0 || ga.v[g] > ga.v[best] ||
			                    (g < best && ga.v[g] == ga.v[best])))
				best = g;
		}
		acc_reset(&ga);
		if (best < 0) {
			best = open_group(s, sh, -1);
			if (best >= 0) {
				add_item(s, best, i);
				grow(s, &a, best);
				continue;
			}
		}
		if (best >= 0)
			add_item(s, best, i);
	}
	/* Everything else (no traffic, artificial, or no room found above):
	   first group with room for its shape. Always succeeds because the
	   slots of each shape add up to the items of that shape. Free slots
	   only shrink from here on, so one forward pointer per shape will do. */
	{
		int maxsh = 0, *ptr;
		for (int t = 0; t < s->T->ntypes; t++)
			for (int g = s->topen[t]; g < s->T->first[t] + s->T->count[t]; g++)
				s->gtype[g] = t;
		for (int t = 0; t < s->T->ntypes; t++)
			s->topen[t] = s->T->first[t] + s->T->count[t];
		for (int i = 0; i < p; i++)
			if (ishape_of(s, i) > maxsh)
				maxsh = ishape_of(s, i);
		ptr = calloc((size_t)maxsh + 1, sizeof(int));
		if (!ptr) {
			oom(c);
			goto out;
		}
		for (int i = 0; i < p; i++) {
			int sh;
			if (s->group_of[i] >= 0)
				continue;
			sh = ishape_of(s, i);
			while (ptr[sh] < s->G && !free_slots(s, ptr[sh], sh))
				ptr[sh]++;
			if (ptr[sh] >= s->G) {
				free(ptr);
				tmatch_error_set(c->err, 0, NULL, 0, 0,
				                 "internal error in treematch: no room for item %d",
				                 i);
				errno = EINVAL;
				goto out;
			}
			add_item(s, ptr[sh], i);
		}
		free(ptr);
	}
	rc = 0;
out:
	free(a.v);
	free(a.touched);
	free(a.mark);
	free(ga.v);
	free(ga.touched);
	free(ga.mark);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Swap refinement: exchange two items of the same shape between groups when
 * that keeps more traffic inside groups. Deterministic, bounded passes. */

static double pair_w(const struct graph *gr, int i, int j)
{
	size_t lo, hi;
	if (i >= gr->n || j >= gr->n)
		return 0;
	lo = gr->rp[i];
	hi = gr->rp[i + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (gr->col[mid] < j)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < gr->rp[i + 1] && gr->col[lo] == j ? gr->w[lo] : 0;
}

/* Traffic between item i and the members of group g (other than i). */
static double conn_to(const struct gstate *s, int i, int g)
{
	const int *m = s->member + (size_t)g * (size_t)s->k;
	double v = 0;
	if (i >= s->gr->n)
		return 0;
	for (int x = 0; x < s->fill[g]; x++)
		if (m[x] != i)
			v += pair_w(s->gr, i, m[x]);
	return v;
}

/* Group g before group h among the candidates: more traffic, then lower index. */
static int more_connected(const struct acc *a, int g, int h)
{
	return a->v[g] > a->v[h] || (g < h && a->v[g] == a->v[h]);
}

/* The SWAP_CANDIDATES groups of a most connected, in that order, into top;
   returns how many (fewer when a reached fewer groups). */
static int top_groups(const struct acc *a, int *top)
{
	int ntop = 0;

	for (int u = 0; u < a->nt; u++) {
		int g = a->touched[u], x = ntop < SWAP_CANDIDATES ? ntop++ : SWAP_CANDIDATES;

		/* x: g's place, the less connected ones moving down (the last out) */
		for (; x > 0 && more_connected(a, g, top[x - 1]); x--)
			if (x < SWAP_CANDIDATES)
				top[x] = top[x - 1];
		if (x < SWAP_CANDIDATES)
			top[x] = g;
	}
	return ntop;
}

static int refine_swaps(struct ctx *c, struct gstate *s)
{
	const struct graph *gr = s->gr;
	struct acc ga = {0};
	int k = s->k, rc = -1;
	/* A deterministic work cap (edges scanned), so dense matrices stay cheap. */
	size_t work = 0, budget = SWAP_WORK_FACTOR * ((gr->n ? gr->rp[gr->n] : 0) + (size_t)s->p);

	if (s->k < 2 || s->G < 2 || c->swap_passes <= 0)
		return 0;
	ga.v = malloc(sizeof(double) * (size_t)s->G);
	ga.touched = malloc(sizeof(int) * (size_t)s->G);
	ga.mark = calloc((size_t)s->G, 1);
	if (!ga.v || !ga.touched || !ga.mark) {
		oom(c);
		goto out;
	}
	for (int pass = 0; pass < c->swap_passes; pass++) {
		long improved = 0;
		for (int i = 0; i < gr->n && work < budget; i++) {
			int A = s->group_of[i], sh = ishape_of(s, i), bestj = -1, bestB = -1;
			int top[SWAP_CANDIDATES], ntop;
			double inA, bestgain = 0;
			if (gr->rp[i] == gr->rp[i + 1])
				continue;
			acc_reset(&ga);
			for (size_t e = gr->rp[i]; e < gr->rp[i + 1]; e++) {
				int g = s->group_of[gr->col[e]];
				if (g != A)
					acc_add(&ga, g, gr->w[e]);
			}
			inA = conn_to(s, i, A);
			work += 2 * (gr->rp[i + 1] - gr->rp[i]) + (size_t)s->fill[A] * 16;
			/* only the few groups i is most connected to (the work counted
			   as for the selection sort that once chose them) */
			ntop = top_groups(&ga, top);
			work += (size_t)ntop * (size_t)ga.nt;
			for (int t = 0; t < ntop; t++) {
				int B = top[t];
				double base = ga.v[B] - inA;
				const int *mb = s->member + (size_t)B * (size_t)k;
				/* j will try the other way round on its own turn */
				if (base <= 0)
					continue;
				for (int x = 0; x < s->fill[B]; x++) {
					int j = mb[x];
					double gain;
					if (ishape_of(s, j) != sh)
						continue;
					gain = base + conn_to(s, j, A) - conn_to(s, j, B) -
					       2 * pair_w(gr, i, j);
					work += (2 * (size_t)s->fill[A] + (size_t)s->fill[B]) * 16;
					if (gain > bestgain + 1e-9 * (ga.v[B] + inA)) {
						bestgain = gain;
						bestj = j;
						bestB = B;
					}
				}
			}
			acc_reset(&ga);
			if (bestj >= 0) {
				remove_item(s, A, i);
				remove_item(s, bestB, bestj);
				add_item(s, A, bestj);
				add_item(s, bestB, i);
				improved++;
			}
		}
		if (!improved || work >= budget)
			break;
	}
	rc = 0;
out:
	free(ga.v);
	free(ga.touched);
	free(ga.mark);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Aggregation: traffic between groups, sparse. */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int aggregate(struct ctx *c, const struct gstate *s, struct graph *out)
{
	const struct graph *gr = s->gr;
	size_t cap = gr->n ? gr->rp[gr->n] : 0, k = 0;
	struct acc a = {0};
	int G = s->G, rc = -1;

	memset(out, 0, sizeof(*out));
	out->n = G;
	out->owned = 1;
	out->rp = malloc(sizeof(size_t) * ((size_t)G + 1));
	out->col = malloc(sizeof(int) * (cap ? cap : 1));
	out->w = malloc(sizeof(double) * (cap ? cap : 1));
	a.v = malloc(sizeof(double) * (size_t)(G ? G : 1));
	a.touched = malloc(sizeof(int) * (size_t)(G ? G : 1));
	a.mark = calloc((size_t)(G ? G : 1), 1);
	if (!out->rp || !out->col || !out->w || !a.v || !a.touched || !a.mark) {
		oom(c);
		goto out;
	}
	for (int g = 0; g < G; g++) {
		out->rp[g] = k;
		for (int j = 0; j < s->fill[g]; j++) {
			int m = s->member[(size_t)g * (size_t)s->k + (size_t)j];
			if (m < 0 || m >= gr->n)
				continue;
			for (size_t e = gr->rp[m]; e < gr->rp[m + 1]; e++) {
				int h = s->group_of[gr->col[e]];
				if (h != g)
					acc_add(&a, h, gr->w[e]);
			}
		}
		/* the groups reached, ascending: read off the marks when they are
		   a good part of all (dense levels), else sorted */
		if ((size_t)a.nt * 16 >= (size_t)G) {
			int t = 0;

			for (int h = 0; h < G; h++)
				if (a.mark[h])
					a.touched[t++] = h;
		} else {
			qsort(a.touched, (size_t)a.nt, sizeof(int), cmp_int);
		}
		for (int t = 0; t < a.nt; t++) {
			// k < the entries counted before
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			out->col[k] = a.touched[t];
			out->w[k++] = a.v[a.touched[t]];
		}
		acc_reset(&a);
	}
	// rp has G + 1 entries
	// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
	out->rp[G] = k;
	rc = 0;
out:
	free(a.v);
	free(a.touched);
	free(a.mark);
	if (rc)
		graph_free(out);
	return rc;
}

/* Traffic kept inside the groups (what the next level no longer sees). */
static double internal_weight(const struct gstate *s)
{
	const struct graph *gr = s->gr;
	double in = 0;
	for (int i = 0; i < gr->n; i++)
		for (size_t e = gr->rp[i]; e < gr->rp[i + 1]; e++)
			if (gr->col[e] > i && s->group_of[gr->col[e]] == s->group_of[i])
				in += gr->w[e];
	return in;
}

/* Group with one method (exact if ncand >= 0, else greedy), then refine. */
static int run_method(struct ctx *c, const struct graph *gr, const int *ishape, int p, int k,
                      const struct types *T, long long ncand, struct gstate *s)
{
	if (gstate_init(s, gr, ishape, T, p, k))
		return oom(c);
	/* the exact heuristic always completes when k divides p; greedy fills
	   whatever it would leave */
	if (ncand >= 0 && group_exact(c, s, ncand))
		return -1;
	if (group_greedy(c, s))
		return -1;
	return refine_swaps(c, s);
}

static void gstate_free_all(struct gstate *s)
{
	free(s->member);
	free(s->gtype);
	gstate_free(s);
	memset(s, 0, sizeof(*s));
}

/*
 * One level: group the p items (graph gr, shapes ishape) into the parent
 * types T. When the candidate groups are few, the paper's exact heuristic
 * and the greedy both run and the grouping keeping more traffic inside
 * wins (exact on ties).
 */
static int group_level(struct ctx *c, const struct graph *gr, const int *ishape, int p, int p_real,
                       int k, const struct types *T, struct step *st, struct graph *next)
{
	struct gstate s = {0}, s2 = {0};
	int rc = -1;
	long long ncand = -1;

	if (T->ntypes == 1 && T->nent[0] == 1 && T->ent_cnt[0] == k &&
	    (long long)T->count[0] * k == p && p <= EXACT_MAX_ITEMS)
		ncand = binom_capped(p, k, c->exact_max);
	if (ncand > c->exact_max)
		ncand = -1;
	if (ncand >= 0)
		c->used_exact = 1;
	if (run_method(c, gr, ishape, p, k, T, ncand, &s))
		goto out;
	if (ncand >= 0) {
		if (run_method(c, gr, ishape, p, k, T, -1, &s2))
			goto out;
		if (internal_weight(&s2) > internal_weight(&s)) {
			struct gstate t = s;
			s = s2;
			s2 = t;
		}
	}
	if (aggregate(c, &s, next))
		goto out;
	st->k = k;
	st->G = s.G;
	st->p = p;
	st->p_real = p_real;
	st->member = s.member;
	st->gtype = s.gtype;
	s.member = NULL;
	s.gtype = NULL;
	rc = 0;
out:
	gstate_free_all(&s);
	gstate_free_all(&s2);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* The tree seen by the algorithm: arity-1 levels dropped, composite arities
 * split into primes, largest at the top (same leaf numbering). */

struct eff {
	int depth;
	int *arity;
	long long *span; /* depth + 1 */
};

static int eff_build(const tmatch_topo_t *topo, struct eff *E)
{
	int cnt = 0;
	memset(E, 0, sizeof(*E));
	E->arity = malloc(sizeof(int) * (TMATCH_MAX_DEPTH * 32 + 1));
	E->span = malloc(sizeof(long long) * (TMATCH_MAX_DEPTH * 32 + 2));
	if (!E->arity || !E->span)
		return -1;
	for (int l = 0; l < topo->depth; l++) {
		int a = topo->arity[l], f[32], nf = 0;
		for (int q = 2; (long long)q * q <= a; q++)
			while (a % q == 0) {
				f[nf++] = q;
				a /= q;
			}
		if (a > 1)
			f[nf++] = a;
		/* f is ascending: the largest factor goes on top */
		for (int x = nf - 1; x >= 0; x--)
			E->arity[cnt++] = f[x];
	}
	E->depth = cnt;
	E->span[cnt] = 1;
	for (int e = cnt - 1; e >= 0; e--)
		E->span[e] = E->span[e + 1] * E->arity[e];
	return 0;
}

static void eff_free(struct eff *E)
{
	free(E->arity);
	free(E->span);
}

static void steps_free(struct step *st, int n)
{
	if (!st)
		return;
	for (int e = 0; e < n; e++) {
		free(st[e].member);
		free(st[e].gtype);
	}
	free(st);
}

/* ------------------------------------------------------------------------ */
/* Every leaf allowed: the paper's algorithm with artificial processes. */

static int map_full(struct ctx *c, const tmatch_comm_t *comm, const struct eff *E,
                    int *leaf_of_rank)
{
	struct step *st = calloc((size_t)E->depth + 1, sizeof(*st));
	struct graph gr = {0}, next;
	struct types T = {0};
	int p = comm->n, rc = -1, *node = NULL, *nnode = NULL;
	int nent = 1, off = 0, shape0 = 0, cnt, first = 0;

	if (!st)
		return oom(c);
	gr.n = comm->n;
	gr.rp = comm->row_ptr;
	gr.col = comm->col;
	gr.w = comm->w;
	T.ntypes = 1;
	T.nent = &nent;
	T.off = &off;
	T.ent_shape = &shape0;
	T.count = &cnt;
	T.first = &first;
	for (int e = E->depth - 1; e >= 0; e--) {
		int k = E->arity[e], P = (p + k - 1) / k * k, kk = k;
		T.ent_cnt = &kk;
		cnt = P / k;
		T.total_groups = cnt;
		if (group_level(c, &gr, NULL, P, p, k, &T, &st[e], &next))
			goto out;
		graph_free(&gr);
		gr = next;
		p = st[e].G;
	}
	/* Top down: group g of step e sits on node node[g]; its slot j is child j. */
	node = calloc((size_t)(comm->n > 1 ? comm->n : 1), sizeof(int));
	nnode = calloc((size_t)(comm->n > 1 ? comm->n : 1), sizeof(int));
	if (!node || !nnode) {
		oom(c);
		goto out;
	}
	node[0] = 0;
	for (int e = 0; e < E->depth; e++) {
		const struct step *s = &st[e];
		for (int g = 0; g < s->G; g++)
			for (int j = 0; j < s->k; j++) {
				int x = s->member[(size_t)g * (size_t)s->k + (size_t)j];
				if (x >= 0 && x < s->p_real)
					// x < p_real, nnode's length
					// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
					nnode[x] = node[g] * s->k + j;
			}
		{
			int *t = node;
			node = nnode;
			nnode = t;
		}
	}
	memcpy(leaf_of_rank, node, sizeof(int) * (size_t)comm->n);
	rc = 0;
out:
	graph_free(&gr);
	steps_free(st, E->depth + 1);
	free(node);
	free(nnode);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Partial allocations: quotas, shapes, shape-constrained grouping. */

struct plevel {
	int cnt;        /* non-empty nodes at this depth */
	int *node;      /* node index within the depth */
	int *quota;     /* ranks under it */
	int *cstart;    /* first child in the next depth's list */
	int *ccnt;      /* non-empty children */
	int *shape;     /* shape id at this depth */
	struct types T; /* shapes of this depth as parent types */
};

static size_t lower_bound(const int *a, size_t n, long long x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct capidx {
	int cap, j;
};

static int cmp_capidx(const void *a, const void *b)
{
	const struct capidx *x = a, *y = b;
	if (x->cap != y->cap)
		return (x->cap < y->cap) - (x->cap > y->cap);
	return (x->j > y->j) - (x->j < y->j);
}

/* Hash set of shape keys (sorted int arrays) -> ids. */
struct shapes {
	int n, cap;   /* ids, table size */
	int *slot;    /* cap: id or -1 */
	size_t *koff; /* per id: offset in keys */
	int *klen;    /* per id */
	int *kcount;  /* per id: nodes with it */
	int *keys;    /* concatenated */
	size_t kused, kcap;
};

static uint64_t hash_key(const int *k, int len)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)len;
	for (int i = 0; i < len; i++)
		h = (h ^ (uint64_t)(unsigned)k[i]) * 1099511628211ULL;
	return h;
}

static int shapes_intern(struct shapes *S, const int *key, int len)
{
	uint64_t h = hash_key(key, len);
	int mask = S->cap - 1;
	for (int x = (int)(h & (uint64_t)mask);; x = (x + 1) & mask) {
		int id = S->slot[x];
		if (id < 0) {
			if (S->kused + (size_t)len > S->kcap) {
				size_t nc = (S->kcap + (size_t)len) * 2;
				int *nk = realloc(S->keys, sizeof(int) * nc);
				if (!nk)
					return -1;
				S->keys = nk;
				S->kcap = nc;
			}
			id = S->n++;
			memcpy(S->keys + S->kused, key, sizeof(int) * (size_t)len);
			S->koff[id] = S->kused;
			S->klen[id] = len;
			S->kcount[id] = 1;
			S->kused += (size_t)len;
			S->slot[x] = id;
			return id;
		}
		if (S->klen[id] == len &&
		    !memcmp(S->keys + S->koff[id], key, sizeof(int) * (size_t)len)) {
			S->kcount[id]++;
			return id;
		}
	}
}

static int build_types_from_shapes(struct shapes *S, struct types *T)
{
	int ne = 0;
	memset(T, 0, sizeof(*T));
	T->ntypes = S->n;
	T->nent = malloc(sizeof(int) * (size_t)S->n);
	T->off = malloc(sizeof(int) * (size_t)S->n);
	T->count = malloc(sizeof(int) * (size_t)S->n);
	T->first = malloc(sizeof(int) * (size_t)S->n);
	T->ent_shape = malloc(sizeof(int) * (S->kused ? S->kused : 1));
	T->ent_cnt = malloc(sizeof(int) * (S->kused ? S->kused : 1));
	if (!T->nent || !T->off || !T->count || !T->first || !T->ent_shape || !T->ent_cnt)
		return -1;
	for (int t = 0; t < S->n; t++) {
		const int *k = S->keys + S->koff[t];
		T->off[t] = ne;
		T->nent[t] = 0;
		for (int x = 0; x < S->klen[t]; x++) {
			if (x > 0 && k[x] == k[x - 1]) {
				T->ent_cnt[ne - 1]++;
				continue;
			}
			// ne <= the keys counted
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			T->ent_shape[ne] = k[x];
			T->ent_cnt[ne++] = 1;
			T->nent[t]++;
		}
		T->count[t] = S->kcount[t];
		T->first[t] = T->total_groups;
		T->total_groups += S->kcount[t];
	}
	return 0;
}

static void plevels_free(struct plevel *L, int n)
{
	if (!L)
		return;
	for (int e = 0; e < n; e++) {
		free(L[e].node);
		free(L[e].quota);
		free(L[e].cstart);
		free(L[e].ccnt);
		free(L[e].shape);
		types_free(&L[e].T);
	}
	free(L);
}

/*
 * Phase 1, quotas top down: how many ranks each node holds, the children
 * with the most allowed leaves filled first (or in index order, the
 * portfolio's other variant). L[e] gets its non-empty nodes, their quotas
 * and where their children start in L[e + 1]. 0, or -1 (ENOMEM).
 */
static int partial_quotas(struct ctx *c, const tmatch_topo_t *topo, const struct eff *E, int n,
                          struct plevel *L)
{
	int D = E->depth, na = 0, maxk = 1, rc = -1;
	int *A = malloc(sizeof(int) * (size_t)topo->nb_allowed), *quota = NULL;
	struct capidx *ci = NULL;

	for (int e = 0; e < D; e++)
		if (E->arity[e] > maxk)
			maxk = E->arity[e];
	ci = malloc(sizeof(*ci) * (size_t)maxk);
	quota = malloc(sizeof(int) * (size_t)maxk);
	if (!A || !ci || !quota)
		goto out;
	for (int leaf = 0; leaf < topo->nb_leaves; leaf++)
		if (topo->allowed[leaf])
			A[na++] = leaf;
	L[0].cnt = 1;
	L[0].node = malloc(sizeof(int));
	L[0].quota = malloc(sizeof(int));
	if (!L[0].node || !L[0].quota)
		goto out;
	L[0].node[0] = 0;
	L[0].quota[0] = n;
	for (int e = 0; e < D; e++) {
		int k = E->arity[e], nc = 0;
		long long sp = E->span[e + 1];
		/* + 1: a level may have no node, and malloc(0) may return NULL */
		L[e].cstart = malloc(sizeof(int) * ((size_t)L[e].cnt + 1));
		L[e].ccnt = malloc(sizeof(int) * ((size_t)L[e].cnt + 1));
		/* children: at most min(n, cnt * k) are non-empty */
		long long maxc = (long long)L[e].cnt * k;
		if (maxc > n)
			maxc = n;
		L[e + 1].node = malloc(sizeof(int) * (size_t)(maxc ? maxc : 1));
		L[e + 1].quota = malloc(sizeof(int) * (size_t)(maxc ? maxc : 1));
		if (!L[e].cstart || !L[e].ccnt || !L[e + 1].node || !L[e + 1].quota)
			goto out;
		for (int v = 0; v < L[e].cnt; v++) {
			int q = L[e].quota[v];
			long long base = (long long)L[e].node[v] * k;
			for (int j = 0; j < k; j++) {
				long long lo = (base + j) * sp;
				ci[j].cap = (int)(lower_bound(A, (size_t)na, lo + sp) -
				                  lower_bound(A, (size_t)na, lo));
				ci[j].j = j;
			}
			if (!c->quota_in_order)
				qsort(ci, (size_t)k, sizeof(*ci), cmp_capidx);
			for (int j = 0; j < k; j++)
				quota[j] = 0;
			for (int x = 0; x < k && q > 0; x++) {
				int give = ci[x].cap < q ? ci[x].cap : q;
				quota[ci[x].j] = give;
				q -= give;
			}
			L[e].cstart[v] = nc;
			for (int j = 0; j < k; j++)
				if (quota[j] > 0) {
					// nc < the children counted
					// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
					L[e + 1].node[nc] = (int)(base + j);
					L[e + 1].quota[nc++] = quota[j];
				}
			L[e].ccnt[v] = nc - L[e].cstart[v];
		}
		L[e + 1].cnt = nc;
	}
	rc = 0;
out:
	free(A);
	free(ci);
	free(quota);
	return rc;
}

static void shapes_free(struct shapes *S)
{
	free(S->slot);
	free(S->koff);
	free(S->klen);
	free(S->kcount);
	free(S->keys);
	memset(S, 0, sizeof(*S));
}

/*
 * Phase 2, shapes bottom up: a leaf is shape 0, a node's shape the sorted
 * shapes of its non-empty children, interned per depth; the shapes of a
 * depth become the parent types (L[e].T) its grouping may form. 0, or -1
 * (ENOMEM).
 */
static int partial_shapes(const struct eff *E, struct plevel *L)
{
	int D = E->depth, maxk = 1, rc = -1, *key;
	struct shapes S = {0};

	for (int e = 0; e < D; e++)
		if (E->arity[e] > maxk)
			maxk = E->arity[e];
	key = malloc(sizeof(int) * (size_t)maxk);
	// L holds depth + 1 levels (0..D), D >= 1
	// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
	L[D].shape = calloc((size_t)L[D].cnt + 1, sizeof(int));
	if (!key || !L[D].shape)
		goto out;
	for (int e = D - 1; e >= 0; e--) {
		int cap = 16;
		while (cap < 2 * L[e].cnt)
			cap *= 2;
		S.cap = cap;
		S.slot = malloc(sizeof(int) * (size_t)cap);
		S.koff = malloc(sizeof(size_t) * ((size_t)L[e].cnt + 1));
		S.klen = malloc(sizeof(int) * ((size_t)L[e].cnt + 1));
		S.kcount = malloc(sizeof(int) * ((size_t)L[e].cnt + 1));
		L[e].shape = malloc(sizeof(int) * ((size_t)L[e].cnt + 1));
		if (!S.slot || !S.koff || !S.klen || !S.kcount || !L[e].shape)
			goto out;
		for (int x = 0; x < cap; x++)
			S.slot[x] = -1;
		for (int v = 0; v < L[e].cnt; v++) {
			int len = L[e].ccnt[v];
			for (int j = 0; j < len; j++)
				key[j] = L[e + 1].shape[L[e].cstart[v] + j];
			qsort(key, (size_t)len, sizeof(int), cmp_int);
			L[e].shape[v] = shapes_intern(&S, key, len);
			if (L[e].shape[v] < 0)
				goto out;
		}
		if (build_types_from_shapes(&S, &L[e].T))
			goto out;
		shapes_free(&S);
	}
	rc = 0;
out:
	shapes_free(&S);
	free(key);
	return rc;
}

/*
 * Phase 3, grouping bottom up: the items of step e are the groups of step
 * e + 1 (ranks at the bottom), each with the shape it was formed as, and a
 * group may only take the shape of a node of its depth. 0, or -1 (err
 * set).
 */
static int partial_group(struct ctx *c, const tmatch_comm_t *comm, const struct eff *E,
                         const struct plevel *L, struct step *st)
{
	struct graph gr = {0}, next;
	const int *ishape = NULL;
	int p = comm->n, rc = -1;

	gr.n = comm->n;
	gr.rp = comm->row_ptr;
	gr.col = comm->col;
	gr.w = comm->w;
	for (int e = E->depth - 1; e >= 0; e--) {
		if (group_level(c, &gr, ishape, p, p, E->arity[e], &L[e].T, &st[e], &next))
			goto out;
		graph_free(&gr);
		gr = next;
		p = st[e].G;
		ishape = st[e].gtype;
	}
	rc = 0;
out:
	graph_free(&gr);
	return rc;
}

/*
 * Phase 4, places top down: each group goes to a node of its shape, its
 * members to the first free children of matching shape; the ranks end on
 * the leaves of L[D]. 0, or -1 (err set).
 */
static int partial_place(struct ctx *c, const struct eff *E, const struct plevel *L,
                         const struct step *st, int n, int *leaf_of_rank)
{
	int D = E->depth, rc = -1;
	int *pos = calloc((size_t)(n > 1 ? n : 1), sizeof(int));
	int *npos = calloc((size_t)(n > 1 ? n : 1), sizeof(int));
	unsigned char *used = calloc((size_t)(n > 1 ? n : 1), 1);

	if (!pos || !npos || !used) {
		oom(c);
		goto out;
	}
	pos[0] = 0;
	for (int e = 0; e < D; e++) {
		const struct step *s = &st[e];
		const int *cshape = e + 1 < D ? st[e + 1].gtype : NULL;
		memset(used, 0, (size_t)L[e + 1].cnt);
		for (int g = 0; g < s->G; g++) {
			// g < s->G <= the ranks pos was allocated for
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			int v = pos[g];
			for (int j = 0; j < s->k; j++) {
				int x = s->member[(size_t)g * (size_t)s->k + (size_t)j], sh,
				    ch = -1;
				if (x < 0)
					continue;
				sh = cshape ? cshape[x] : 0;
				for (int y = L[e].cstart[v]; y < L[e].cstart[v] + L[e].ccnt[v]; y++)
					if (!used[y] && L[e + 1].shape[y] == sh) {
						ch = y;
						break;
					}
				if (ch < 0) {
					tmatch_error_set(
					    c->err, 0, NULL, 0, 0,
					    "internal error in treematch: shape mismatch");
					errno = EINVAL;
					goto out;
				}
				used[ch] = 1;
				npos[x] = ch;
			}
		}
		{
			int *t = pos;
			pos = npos;
			npos = t;
		}
	}
	for (int r = 0; r < n; r++)
		leaf_of_rank[r] = L[D].node[pos[r]];
	rc = 0;
out:
	free(pos);
	free(npos);
	free(used);
	return rc;
}

/* Partial allocations: the four phases above. */
static int map_partial(struct ctx *c, const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                       const struct eff *E, int *leaf_of_rank)
{
	int D = E->depth, rc = -1;
	struct plevel *L = calloc((size_t)D + 1, sizeof(*L));
	struct step *st = calloc((size_t)D + 1, sizeof(*st));

	if (!L || !st || partial_quotas(c, topo, E, comm->n, L) != 0 || partial_shapes(E, L) != 0) {
		oom(c);
		goto out;
	}
	if (partial_group(c, comm, E, L, st) != 0 ||
	    partial_place(c, E, L, st, comm->n, leaf_of_rank) != 0)
		goto out;
	rc = 0;
out:
	steps_free(st, D + 1);
	plevels_free(L, D + 1);
	return rc;
}

static int run_once(struct ctx *c, const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                    const struct eff *E, int *leaf_of_rank)
{
	if (E->depth == 0) {
		/* a single leaf (n <= allowed leaves means n == 1) */
		leaf_of_rank[0] = 0;
		return 0;
	}
	if (!topo->allowed || topo->nb_allowed == topo->nb_leaves)
		return map_full(c, comm, E, leaf_of_rank);
	return map_partial(c, comm, topo, E, leaf_of_rank);
}

int tmatch__map_treematch(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                          const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	struct ctx c = {opts, err, DEFAULT_EXACT_MAX_GROUPS, DEFAULT_SWAP_PASSES, 0, 0, 0};
	struct eff E;
	int rc = -1, *alt = NULL, used_exact = 0, one, local;
	long exact_max = DEFAULT_EXACT_MAX_GROUPS;
	double best = 0;

	if (comm->n == 0)
		return 0;
	if (opts->exact_max_groups > 0)
		exact_max = opts->exact_max_groups;
	if (exact_max > EXACT_HARD_MAX) /* candidates are stored: bound the memory */
		exact_max = EXACT_HARD_MAX;
	if (opts->iter_budget > 0 && opts->iter_budget < c.swap_passes)
		c.swap_passes = (int)opts->iter_budget;
	if (eff_build(topo, &E)) {
		oom(&c);
		goto out;
	}
	/*
	 * A small deterministic portfolio, the lowest hop-bytes wins (the
	 * earlier variant on ties):
	 * - ties between equal weights broken by rank index (best when the
	 *   numbering follows the structure, e.g. NAS CG's hypercube rows) or by
	 *   breadth-first position (best when the ranks were permuted);
	 * - when some level was small enough for the paper's exact heuristic,
	 *   the greedy-only run too: the exact heuristic optimises one level at
	 *   a time and lost to the greedy on 64-rank stencils.
	 * Above PORTFOLIO_MAX_RANKS ranks, one run: ties by index when the
	 * numbering has locality (tmatch__order_is_local), by breadth-first
	 * position otherwise. On 1,048,576-rank stencils the other variants
	 * gave the same grouping (or, index ties on permuted ranks, a 15 %
	 * worse one) for 2-3 times the time; the exact heuristic only reaches
	 * the top few levels there.
	 */
	one = comm->n > PORTFOLIO_MAX_RANKS;
	local = one && tmatch__order_is_local(comm, topo);
	alt = malloc(sizeof(int) * (size_t)comm->n);
	if (!alt) {
		oom(&c);
		goto out;
	}
	for (int variant = 0, have = 0; variant < 8; variant++) {
		int *dst = have ? alt : leaf_of_rank;
		/* dense matrices: the tie-breaking variants cost a lot for little */
		if (variant % 4 >= 2 &&
		    comm->nnz > (size_t)PORTFOLIO_MAX_DEGREE * (size_t)comm->n && comm->n > 256)
			continue;
		/* very large inputs: one run, with the tie rule the numbering calls for */
		if (one && (variant % 2 || (variant % 4 >= 2) == local))
			continue;
		/* partial allocations: quotas filled largest child first, or in order */
		if (variant >= 4 && (!topo->allowed || topo->nb_allowed == topo->nb_leaves))
			break;
		c.quota_in_order = variant >= 4;
		c.tie_bfs = variant % 4 >= 2;
		c.exact_max = variant % 2 ? 0 : exact_max;
		if (variant % 2 && !used_exact)
			continue;
		c.used_exact = 0;
		if (run_once(&c, comm, topo, &E, dst))
			goto out;
		if (variant % 2 == 0)
			used_exact = c.used_exact;
		if (have) {
			double hb = tmatch__hop_bytes(comm, topo, alt);
			if (hb < best) {
				best = hb;
				memcpy(leaf_of_rank, alt, sizeof(int) * (size_t)comm->n);
			}
		} else if (!one) { /* one run: nothing to compare it with */
			best = tmatch__hop_bytes(comm, topo, leaf_of_rank);
		}
		have = 1;
	}
	rc = 0;
out:
	free(alt);
	eff_free(&E);
	return rc;
}
