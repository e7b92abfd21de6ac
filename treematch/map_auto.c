/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_auto.c - the default mapper: run the candidate mappers that fit the size
 * of the problem, refine the most promising ones, keep the lowest hop-bytes.
 *
 * The policy is a table (struct candidate): each candidate, in the order
 * they are made (ties keep the earlier one), with a predicate saying when
 * it runs over the input's size class (SIZE_NODE, SIZE_LARGE, SIZE_HUGE,
 * SIZE_VAST), its density and, for the largest, its numbering; how many
 * candidates are refined is one more function of the same (refine_count).
 * Nothing depends on the clock, so the result is the same on every run for
 * a given seed:
 *   - bisect (graph partitioning) wins on permuted and irregular inputs,
 *     dense ones included (a permuted hierarchical pattern on a 7^4 tree or
 *     a partial allocation: 2-4 % below the other candidates); on dense
 *     matrices above DENSE_SMALL_RANKS it runs with one seed only, METIS
 *     then works on every pair (about 2.5 s for 4096 ranks);
 *   - treematch wins on dense, hierarchical patterns and on friendly
 *     orders; on sparse inputs it is skipped above REFINE_ONE ranks unless
 *     the order looks friendly (packed within FRIENDLY_RATIO of bisect), to
 *     keep 16384 ranks well under 0.5 s; above TREEMATCH_MAX_RANKS it runs
 *     instead of the bisection, alone with packed and rcm and not refined,
 *     when the numbering has locality (tmatch__order_is_local) or the
 *     matrix is stencil-like (at most SPARSE_DEGREE entries per rank, where
 *     TreeMatch breaks ties breadth first whatever the numbering) and the
 *     leaves are not a flat row of slots (FLAT_SLOTS): a
 *     1,048,576-rank stencil3d in order in 0.9 s at 0.756 of packed, where
 *     the bisection took 17 s for 0.790 (refined: 0.787), the same with its
 *     ranks permuted 0.1 % below the bisection's cost, refined, in a fifth
 *     of its time and memory; otherwise (irregular graphs: TreeMatch 22 %
 *     above the bisection on a random geometric graph) it is skipped;
 *   - treematch@bisect: TreeMatch on the ranks renumbered in bisect's leaf
 *     order, which gives TreeMatch a friendly order whatever the user's
 *     numbering (a permuted 16384-rank stencil: 4 % less than bisect); above
 *     REFINE_ONE ranks it runs only when plain treematch did not and the
 *     average degree is at most SPARSE_DEGREE (stencil-like: where it gains;
 *     on random or butterfly graphs it gained nothing and cost 0.1-0.3 s);
 *   - bisect-spread: the bisection with the top level's children given
 *     shares of the ranks in proportion to their room, on sparse
 *     node-size inputs with fewer ranks than leaves (32 ranks on 2 nodes of
 *     24 cores: 16 + 16 rather than 24 + 8 can cost less);
 *   - packed (the identity) is hard to beat when ranks are numbered in a
 *     friendly order;
 *   - greedy and rcm are cheap and sometimes best on odd shapes (greedy is
 *     left out on dense matrices above DENSE_SMALL_RANKS, its queue holds
 *     every edge, and above TREEMATCH_MAX_RANKS ranks, where it never won;
 *     rcm too above TREEMATCH_MAX_RANKS when the bisection ran);
 * Up to REFINE_ALL ranks the candidates are made and refined by a crew of
 * threads (make_node_size): the same placement, in less wall time.
 * Bisection runs with several seeds up to 4096 sparse ranks (bisect_tries).
 * Up to REFINE_ALL ranks every candidate is refined; above, only the
 * REFINE_TOP best unrefined ones are (only the best above REFINE_ONE ranks
 * and on dense matrices, where a pass is costly and rarely changes the
 * order).
 *
 * One input needs no candidate: the same traffic between every pair of
 * ranks with every allowed leaf used (a plain all-to-all). Every placement
 * then costs the same and packed is kept at once (4096 ranks: about 5 s
 * CPU of candidates before, none now).
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFINE_ALL          1024
#define REFINE_TOP          2
#define REFINE_ONE          8192
#define TREEMATCH_MAX_RANKS 65536
#define DENSE_DEGREE        64
/* Dense inputs up to this many ranks are still cheap: greedy runs, the
   bisection tries several seeds, the budgeted search adds starts. */
#define DENSE_SMALL_RANKS 256
/* Above this many matrix entries METIS is not asked (its indices, its memory). */
#define BISECT_MAX_NNZ ((size_t)1 << 30)
#define MAX_CAND       48
#define FRIENDLY_RATIO 1.5
#define SPARSE_DEGREE  6
/* A lowest level this wide is a row of equivalent slots (a layout's node):
   which ranks share one is a partition, the bisection's strength; TreeMatch
   climbs it in binary steps of arbitrary groups (1,048,576 permuted stencil
   ranks on 8192 nodes of 128: 11.8 % of the traffic across switches, the
   bisection 6.2 %). */
#define FLAT_SLOTS 32

/*
 * The input as the policy sees it: its size class, its density and, for
 * the largest sparse inputs, whether the ranks are numbered with locality.
 * Every choice below (which candidates run, how many are refined) is a
 * function of this alone, never of the clock.
 */
enum size_class {
	SIZE_NODE,  /* up to REFINE_ALL ranks: made by a crew, all refined (sparse) */
	SIZE_LARGE, /* up to REFINE_ONE: the REFINE_TOP cheapest refined */
	SIZE_HUGE,  /* up to TREEMATCH_MAX_RANKS: the cheapest refined */
	SIZE_VAST   /* above */
};

struct policy {
	const tmatch_comm_t *comm;
	const tmatch_topo_t *topo;
	enum size_class size;
	int dense; /* more than DENSE_DEGREE entries per rank */
	/* SIZE_VAST and sparse, and the ranks numbered with locality, or the
	   matrix stencil-like (at most SPARSE_DEGREE entries per rank) on a
	   tree whose leaves are not a flat row of FLAT_SLOTS or more: TreeMatch
	   in place of the bisection, and not refined */
	int treematch_instead;
};

/* The candidates, in the order they are made (ties keep the earlier). */
enum cand_kind {
	C_BISECT,
	C_PACKED,
	C_TREEMATCH,
	C_GREEDY,
	C_RCM,
	C_SPREAD,
	C_REORDERED,
	NB_KINDS
};

struct cand {
	const char *name;
	uint64_t seed;
	int *map;
	double cost;
	enum cand_kind kind;
	int refined;
};

/* What the large inputs' path has made so far, for the predicates that look. */
struct made {
	const struct cand *cand;
	int nc;
	int ran[NB_KINDS]; /* the kinds found eligible */
};

/*
 * Whether the ranks look numbered in a friendly order: packed (the
 * identity) within FRIENDLY_RATIO of the best candidate so far. TreeMatch
 * only wins on large sparse inputs in that case, so it is skipped otherwise.
 */
static int friendly(const struct made *m)
{
	double packed = -1, best = -1;

	for (int i = 0; i < m->nc; i++) {
		if (m->cand[i].kind == C_PACKED)
			packed = m->cand[i].cost;
		if (best < 0 || m->cand[i].cost < best)
			best = m->cand[i].cost;
	}
	return packed < 0 || packed <= FRIENDLY_RATIO * best;
}

/*
 * TreeMatch on the ranks renumbered in the order of `by`'s leaves. TreeMatch
 * is at its best on ranks numbered in a friendly order; a bisection's leaf
 * order is such an order, whatever the user's numbering was. Returns 0 and
 * fills map, -1 on failure (err set).
 */
static int treematch_reordered(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                               const tmatch_map_opts_t *opts, const int *by, int *map,
                               tmatch_error_t *err)
{
	int n = comm->n, rc = -1, *new_of = NULL, *rank_at = NULL, *src = NULL, *dst = NULL;
	int *tmp = NULL;
	double *w = NULL;
	size_t ne = 0;
	tmatch_comm_t *re = NULL;

	/* zeroed: new_of[] stays in range even if `by` were not injective */
	new_of = calloc((size_t)n, sizeof(int));
	rank_at = malloc(sizeof(int) * (size_t)topo->nb_leaves);
	tmp = malloc(sizeof(int) * (size_t)n);
	src = malloc(sizeof(int) * (comm->nnz / 2 + 1));
	dst = malloc(sizeof(int) * (comm->nnz / 2 + 1));
	w = malloc(sizeof(double) * (comm->nnz / 2 + 1));
	if (!new_of || !rank_at || !tmp || !src || !dst || !w) {
		errno = ENOMEM;
		tmatch_error_set(err, 0, NULL, 0, 0, "auto: out of memory");
		goto out;
	}
	for (int lf = 0; lf < topo->nb_leaves; lf++)
		rank_at[lf] = -1;
	for (int r = 0; r < n; r++)
		rank_at[by[r]] = r;
	for (int lf = 0, k = 0; lf < topo->nb_leaves; lf++)
		if (rank_at[lf] >= 0)
			new_of[rank_at[lf]] = k++;
	for (int i = 0; i < n; i++)
		for (size_t k = comm->row_ptr[i]; k < comm->row_ptr[i + 1]; k++)
			if (comm->col[k] > i) {
				src[ne] = new_of[i];
				dst[ne] = new_of[comm->col[k]];
				w[ne] = comm->w[k];
				ne++;
			}
	re = tmatch_comm_from_edges(n, ne, src, dst, w, err);
	if (!re || tmatch__map_treematch(re, topo, opts, tmp, err) != 0)
		goto out;
	for (int r = 0; r < n; r++)
		map[r] = tmp[new_of[r]];
	rc = 0;
out:
	tmatch_comm_destroy(re);
	free(new_of);
	free(rank_at);
	free(tmp);
	free(src);
	free(dst);
	free(w);
	return rc;
}

/*
 * Bisection is cheap and seed-sensitive on small inputs: try several seeds
 * there, as many as a node's time allows: 24 up to 64 ranks, 12 up to 128,
 * 6 up to 256 (each refined; on random, power-law and geometric graphs of
 * 64-128 ranks the best of 6 was 0.1-0.6 % above VieM's strong
 * configuration, of 24 or 12 at or below it on 4 of 6 such cases). Up to
 * 4096 ranks a second seed still pays (1.2-1.7 % on a 6^4
 * stencil3d and a 14^3 cg, 0.15 % on average over the bench's 1025-4096-rank
 * sparse cases, for 0.05-0.2 s); at 16384 it gained nothing. Dense matrices
 * above 256 ranks get one try: METIS works on every pair (about 2.5 s for
 * 4096 ranks); up to 256, as many as DENSE_BISECT_PAIRS pairs allow (a
 * 256-rank all-pairs pattern: 2 tries of 7 ms, where 6 cost 42 ms of a
 * node's 50 and found the same).
 */
#define DENSE_BISECT_PAIRS ((size_t)1 << 17)
static int bisect_tries(const struct policy *p)
{
	int n = p->comm->n;

	if (p->dense && n > DENSE_SMALL_RANKS)
		return 1;
	if (p->dense) {
		size_t k = DENSE_BISECT_PAIRS / p->comm->nnz;
		return k < 1 ? 1 : k > 6 ? 6 : (int)k;
	}
	return n <= 64 ? 24 : n <= 128 ? 12 : n <= 256 ? 6 : n <= 1024 ? 3 : n <= 4096 ? 2 : 1;
}

/*
 * Whether every pair of ranks exchanges the same volume and the ranks fill
 * every allowed leaf: then every placement costs the sum of the distances
 * between all pairs of allowed leaves, and no candidate can beat packed.
 */
static int uniform_everywhere(const tmatch_comm_t *comm, const tmatch_topo_t *topo)
{
	size_t n = (size_t)comm->n;

	if (comm->n < 2 || comm->n != topo->nb_allowed || comm->nnz != n * (n - 1))
		return 0;
	for (size_t k = 1; k < comm->nnz; k++)
		if (comm->w[k] != comm->w[0])
			return 0;
	return 1;
}

/*
 * Eligibility, one predicate per candidate over the policy (and, on large
 * inputs, what was made before it). Node-size inputs ask before anything is
 * made: their predicates must not need `made` (SIZE_NODE answers first).
 */
static int always(const struct policy *p, const struct made *m)
{
	(void)p;
	(void)m;
	return 1;
}

/* METIS, unless the matrix is too large for it, or TreeMatch runs in its
   place (treematch_instead). */
static int bisect_eligible(const struct policy *p, const struct made *m)
{
	(void)m;
	return p->comm->nnz <= BISECT_MAX_NNZ && !p->treematch_instead;
}

/*
 * TreeMatch: always on dense inputs and in place of the bisection
 * (treematch_instead); on sparse ones up to REFINE_ONE ranks, then up to
 * TREEMATCH_MAX_RANKS when the numbering looks friendly (made after the
 * bisection and packed); never above on other sparse inputs.
 */
static int treematch_eligible(const struct policy *p, const struct made *m)
{
	if (p->dense || p->treematch_instead || p->size <= SIZE_LARGE)
		return 1;
	return p->size == SIZE_HUGE && friendly(m);
}

/* Greedy's queue holds every edge: not on dense inputs above
   DENSE_SMALL_RANKS, and never on the largest inputs, where it never won. */
static int greedy_eligible(const struct policy *p, const struct made *m)
{
	(void)m;
	return !(p->dense && p->comm->n > DENSE_SMALL_RANKS) && p->size != SIZE_VAST;
}

/* RCM, except above TREEMATCH_MAX_RANKS beside the bisection: there it
   never won (131,072 permuted ranks of the random, geometric, mesh,
   power-law and cg patterns: 1.35-2.2 times the unrefined bisection's
   hop-bytes; 1,048,576 ranks of a random geometric graph: 2.0 times, for
   1.9 s of the 25). In place of the bisection (treematch_instead), or
   when it failed, it still runs. */
static int rcm_eligible(const struct policy *p, const struct made *m)
{
	if (p->size != SIZE_VAST)
		return 1;
	for (int i = 0; i < m->nc; i++)
		if (m->cand[i].kind == C_BISECT)
			return 0;
	return 1;
}

/* TreeMatch on the first bisection's order: sparse inputs up to REFINE_ONE
   ranks, and up to TREEMATCH_MAX_RANKS on stencil-like ones (at most
   SPARSE_DEGREE entries per rank) when plain TreeMatch did not run. */
static int reordered_eligible(const struct policy *p, const struct made *m)
{
	if (p->dense || p->size > SIZE_HUGE)
		return 0;
	return p->size <= SIZE_LARGE ||
	       (!m->ran[C_TREEMATCH] && p->comm->nnz <= SPARSE_DEGREE * (size_t)p->comm->n);
}

/*
 * The bisection with the top level's shares spread (tmatch__map_bisect_spread)
 * on allocations with more leaves than ranks: filling the roomiest child
 * first is not always best (LAMMPS, 32 ranks on 2 nodes of 2 x 12 cores:
 * 16 + 16 costs 0.9 % less than 24 + 8). Sparse node-size inputs only,
 * where every candidate is refined: a candidate more cannot take another's
 * refinement.
 */
static int spread_eligible(const struct policy *p, const struct made *m)
{
	(void)m;
	return p->comm->n < p->topo->nb_allowed && p->size == SIZE_NODE && !p->dense;
}

/* As many seeds as the bisection's, at most 6. */
static int spread_tries(const struct policy *p)
{
	int t = bisect_tries(p);

	return t < 6 ? t : 6;
}

/* Whether refining a candidate of this kind pays: not TreeMatch's in place
   of the bisection (its swaps ran at every level: on 1,048,576 ranks, 1 s
   more and nothing gained in order, 9 s for 0.8 % permuted). */
static int treematch_refine_pays(const struct policy *p)
{
	return !p->treematch_instead;
}

struct candidate {
	const char *name;
	tmatch__mapper_fn fn; /* NULL: TreeMatch on the first bisection's order */
	int (*eligible)(const struct policy *p, const struct made *m);
	int (*tries)(const struct policy *p);       /* seeds opts->seed, +1, ...; NULL: one */
	int (*refine_pays)(const struct policy *p); /* NULL: always */
};

/* Called directly, not through the registry (which lists this mapper too). */
static const struct candidate candidates[NB_KINDS] = {
    [C_BISECT] = {"bisect", tmatch__map_bisect, bisect_eligible, bisect_tries, NULL},
    [C_PACKED] = {"packed", tmatch__map_packed, always, NULL, NULL},
    [C_TREEMATCH] = {"treematch", tmatch__map_treematch, treematch_eligible, NULL,
                     treematch_refine_pays},
    [C_GREEDY] = {"greedy", tmatch__map_greedy, greedy_eligible, NULL, NULL},
    [C_RCM] = {"rcm", tmatch__map_rcm, rcm_eligible, NULL, NULL},
    [C_SPREAD] = {"bisect-spread", tmatch__map_bisect_spread, spread_eligible, spread_tries, NULL},
    [C_REORDERED] = {"treematch@bisect", NULL, reordered_eligible, NULL, NULL},
};

static int tries_of(const struct policy *p, enum cand_kind k)
{
	return candidates[k].tries ? candidates[k].tries(p) : 1;
}

/* How many candidates are refined, the cheapest unrefined first: every one
   on sparse node-size inputs (the crew already did), else REFINE_TOP on
   sparse inputs up to REFINE_ONE ranks, else one. */
static int refine_count(const struct policy *p)
{
	if (p->size == SIZE_NODE && !p->dense)
		return MAX_CAND;
	return p->dense || p->size >= SIZE_HUGE ? 1 : REFINE_TOP;
}

static void policy_init(struct policy *p, const tmatch_comm_t *comm, const tmatch_topo_t *topo)
{
	int n = comm->n;

	p->comm = comm;
	p->topo = topo;
	p->size = n <= REFINE_ALL            ? SIZE_NODE
	          : n <= REFINE_ONE          ? SIZE_LARGE
	          : n <= TREEMATCH_MAX_RANKS ? SIZE_HUGE
	                                     : SIZE_VAST;
	p->dense = n > 0 && comm->nnz / (size_t)n > DENSE_DEGREE;
	p->treematch_instead =
	    p->size == SIZE_VAST && !p->dense &&
	    (tmatch__order_is_local(comm, topo) ||
	     (comm->nnz <= SPARSE_DEGREE * (size_t)n && topo->arity[topo->depth - 1] < FLAT_SLOTS));
}

/*
 * The budgeted mode: opts->search_time seconds, counted in steps at
 * TMATCH_SEARCH_STEPS_PER_S. Half buys more starts (bisection with further
 * seeds, each refined; a start is priced at the refinement's own budget;
 * none on dense matrices above 256 ranks, where METIS's time is not counted),
 * the rest iterated local search (tmatch__search) on the best mapping so
 * far. Left out, with a log line, when the budget does not buy one N_C pass
 * over every edge (the search would stop before its first kick).
 */
#define SEARCH_MAX_STARTS 16
static int search_best(const struct policy *pol, const tmatch_map_opts_t *opts, struct cand *best,
                       tmatch_error_t *err)
{
	const tmatch_comm_t *comm = pol->comm;
	const tmatch_topo_t *topo = pol->topo;
	double steps = opts->search_time * TMATCH_SEARCH_STEPS_PER_S;
	double pass = 64.0 * ((double)comm->nnz + (double)comm->n);
	double start_cost = (double)tmatch__refine_budget(comm, topo);
	int starts = (int)(steps / 2 / start_cost), n = comm->n;
	tmatch_map_opts_t sopt = *opts;
	tmatch_error_t cerr;
	int *map = NULL;

	if (steps < pass || steps > 9e18) {
		tmatch__log(opts, TMATCH_LOG_INFO,
		            "auto: search budget of %g s too small for %d ranks (needs %.2g s); "
		            "left out",
		            opts->search_time, n, pass / TMATCH_SEARCH_STEPS_PER_S);
		return 0;
	}
	starts = starts < SEARCH_MAX_STARTS ? starts : SEARCH_MAX_STARTS;
	/* METIS on a dense matrix above DENSE_SMALL_RANKS takes seconds
	   (bisect_tries), which the steps do not count: no more starts there */
	if (pol->dense && n > DENSE_SMALL_RANKS)
		starts = 0;
	if (starts > 0 && !(map = malloc(sizeof(int) * (size_t)n))) {
		errno = ENOMEM;
		tmatch_error_set(err, 0, NULL, 0, 0, "auto: out of memory");
		return -1;
	}
	for (int k = 0; k < starts; k++) {
		tmatch__log(opts, TMATCH_LOG_PROGRESS, "search: bisection %d of %d", k + 1, starts);
		sopt.seed = opts->seed + 1000 + (uint64_t)k;
		tmatch_error_clear(&cerr);
		if (tmatch__map_bisect(comm, topo, &sopt, map, &cerr) != 0 ||
		    tmatch__refine(comm, topo, &sopt, map, &cerr) != 0)
			break; /* out of memory: search with what there is */
		steps -= start_cost;
		double cost = tmatch__hop_bytes(comm, topo, map);
		if (cost < best->cost) {
			int *t = best->map;
			best->map = map;
			map = t;
			best->cost = cost;
			best->seed = sopt.seed;
			best->kind = C_BISECT;
			best->name = candidates[C_BISECT].name;
			best->refined = 1;
		}
	}
	free(map);
	sopt.seed = best->seed;
	if (tmatch__search(comm, topo, &sopt, (long)steps, best->map, err) != 0)
		return -1;
	best->cost = tmatch__hop_bytes(comm, topo, best->map);
	tmatch__log(opts, TMATCH_LOG_INFO, "auto: search of %g s: %d more starts, hop-bytes %.6g",
	            opts->search_time, starts, best->cost);
	return 0;
}

/*
 * Make one candidate of kind k into c with this seed (C_REORDERED:
 * TreeMatch on the ranks in the order of `by`'s leaves). 0 made, 1 skipped
 * (why in cerr), -1 out of memory.
 */
static int make_cand(const struct policy *pol, const tmatch_map_opts_t *opts, enum cand_kind k,
                     uint64_t seed, const int *by, struct cand *c, tmatch_error_t *cerr)
{
	const tmatch_comm_t *comm = pol->comm;
	const tmatch_topo_t *topo = pol->topo;
	tmatch_map_opts_t copt = *opts;
	int n = comm->n, *map = malloc(sizeof(int) * (size_t)n);

	if (!map)
		return -1;
	copt.seed = seed;
	tmatch_error_clear(cerr);
	if (k == C_REORDERED && !by) { /* nothing to order by */
		free(map);
		return 1;
	}
	if ((k == C_REORDERED ? treematch_reordered(comm, topo, &copt, by, map, cerr)
	                      : candidates[k].fn(comm, topo, &copt, map, cerr)) != 0 ||
	    tmatch_map_validate(topo, map, n, NULL) != 0) {
		free(map);
		return 1;
	}
	c->kind = k;
	c->name = candidates[k].name;
	c->seed = seed;
	c->map = map;
	c->cost = tmatch__hop_bytes(comm, topo, map);
	c->refined = 0;
	return 0;
}

/* Refine candidate c with its own seed. 0, or -1 out of memory (err set). */
static int refine_cand(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                       const tmatch_map_opts_t *opts, struct cand *c, tmatch_error_t *err)
{
	tmatch_map_opts_t copt = *opts;
	double before = c->cost;

	copt.seed = c->seed;
	if (tmatch__refine(comm, topo, &copt, c->map, err) != 0)
		return -1;
	c->cost = tmatch__hop_bytes(comm, topo, c->map);
	c->refined = 1;
	tmatch__log(opts, TMATCH_LOG_DEBUG, "auto: %s seed %llu refined: %.10g -> %.10g", c->name,
	            (unsigned long long)c->seed, before, c->cost);
	return 0;
}

/*
 * Node-size inputs (SIZE_NODE): the candidates depend on the input's size
 * and density alone, so they are laid out first, then made, and refined
 * when every one is (sparse inputs), by a crew on the CPUs the process may
 * use. Each starts from the same inputs with its own seed, so the result is
 * the one a single thread finds. The bisections' METIS calls share the C
 * library's random state: their making is one crew piece at a time
 * (exclusive), kept busy back to back while the other threads refine what
 * they made and run the other candidates. TreeMatch on the first
 * bisection's order starts once that bisection is made.
 */
enum piece_kind {
	MAKE_BISECT,   /* bisection seed k, made (METIS) */
	REFINE_BISECT, /* ... then refined (sparse inputs) */
	OTHER,         /* another mapper, made (and refined on sparse inputs) */
	REORDERED      /* treematch@bisect (sparse inputs only), made and refined */
};

struct piece {
	enum piece_kind kind;
	enum cand_kind cand; /* MAKE_BISECT, OTHER, REORDERED: what it makes */
	uint64_t seed;
	int bisect;   /* MAKE_ and REFINE_BISECT: which bisection */
	int state;    /* 0 to do, 1 made, 2 skipped, -1 out of memory */
	int finished; /* done (under the crew's lock) */
	struct cand c;
	int *raw; /* MAKE_BISECT: the map before refinement, for treematch@bisect */
	tmatch_error_t err;
};

struct node_job {
	const struct policy *pol;
	const tmatch_map_opts_t *caller; /* its log callback, called one message at a time */
	tmatch_map_opts_t opts;
	int refine, nbisect;
	int make_of[MAX_CAND]; /* bisection k's MAKE_BISECT piece */
	struct piece p[2 * MAX_CAND];
	pthread_mutex_t log_mu;
};

static void node_log(void *arg, int level, const char *msg)
{
	struct node_job *j = arg;

	pthread_mutex_lock(&j->log_mu);
	j->caller->log(j->caller->log_arg, level, msg);
	pthread_mutex_unlock(&j->log_mu);
}

/* The bisection treematch@bisect follows: the first one made, -2 while
   that is not known yet, -1 when none was (under the crew's lock). */
static int node_first_bisect(const struct node_job *j)
{
	for (int k = 0; k < j->nbisect; k++) {
		const struct piece *mk = &j->p[j->make_of[k]];

		if (!mk->finished)
			return -2;
		if (mk->state == 1)
			return k;
	}
	return -1;
}

static int node_ready(void *arg, int i)
{
	struct node_job *j = arg;
	const struct piece *p = &j->p[i];

	if (p->kind == REFINE_BISECT)
		return j->p[j->make_of[p->bisect]].finished;
	if (p->kind == REORDERED)
		return node_first_bisect(j) != -2;
	return 1;
}

static int node_exclusive(void *arg, int i)
{
	return ((struct node_job *)arg)->p[i].kind == MAKE_BISECT;
}

static void node_done(void *arg, int i)
{
	((struct node_job *)arg)->p[i].finished = 1;
}

static void node_work(void *arg, int i)
{
	struct node_job *j = arg;
	struct piece *p = &j->p[i];
	const tmatch_comm_t *comm = j->pol->comm;
	const tmatch_topo_t *topo = j->pol->topo;
	const int *by = NULL;
	int rc;

	switch (p->kind) {
	case REFINE_BISECT: {
		struct piece *mk = &j->p[j->make_of[p->bisect]];

		if (mk->state == 1 && refine_cand(comm, topo, &j->opts, &mk->c, &p->err) != 0)
			p->state = -1;
		return;
	}
	case REORDERED: {
		/* ready() saw, under the crew's lock, the bisections it needs
		   finished: what they wrote no longer changes */
		int k = node_first_bisect(j);

		if (k < 0) {
			snprintf(p->err.msg, sizeof(p->err.msg), "no bisection to order by");
			p->state = 2;
			return;
		}
		by = j->p[j->make_of[k]].raw;
		break;
	}
	default:
		break;
	}
	rc = make_cand(j->pol, &j->opts, p->cand, p->seed, by, &p->c, &p->err);
	/* a bisection keeps its map as made: its refinement runs beside
	   treematch@bisect, which reads it */
	if (rc == 0 && p->kind == MAKE_BISECT && j->refine) {
		p->raw = malloc(sizeof(int) * (size_t)comm->n);
		if (p->raw)
			memcpy(p->raw, p->c.map, sizeof(int) * (size_t)comm->n);
		else
			rc = -1;
	}
	p->state = rc == 0 ? 1 : rc > 0 ? 2 : -1;
	if (p->state == 1 && p->kind != MAKE_BISECT && j->refine &&
	    refine_cand(comm, topo, &j->opts, &p->c, &p->err) != 0)
		p->state = -1;
}

/* The pieces of a node-size input, in the order a single thread makes the
   candidates (ties keep the earlier), each bisection's refinement a piece
   of its own. Returns how many; *reordered: treematch@bisect's, or -1. */
static int node_pieces(struct node_job *j, uint64_t seed0, int *reordered)
{
	static const struct made none = {NULL, 0, {0}};
	int np = 0;

	*reordered = -1;
	for (int k = 0; k < NB_KINDS; k++) {
		int tries;

		if (!candidates[k].eligible(j->pol, &none))
			continue;
		if (k == C_REORDERED) { /* it follows the first bisection made */
			if (j->nbisect > 0) {
				j->p[np].kind = REORDERED;
				j->p[np].cand = C_REORDERED;
				j->p[np].seed = seed0;
				*reordered = np++;
			}
			continue;
		}
		tries = tries_of(j->pol, (enum cand_kind)k);
		/* room for every candidate (treematch@bisect one more) and each
		   bisection's refinement */
		if (tries > MAX_CAND / 2)
			tries = MAX_CAND / 2;
		for (int t = 0; t < tries && np < MAX_CAND - 1; t++) {
			j->p[np].kind = k == C_BISECT ? MAKE_BISECT : OTHER;
			j->p[np].cand = (enum cand_kind)k;
			j->p[np].seed = seed0 + (uint64_t)t;
			j->p[np].bisect = t;
			if (k == C_BISECT)
				j->make_of[j->nbisect++] = np;
			np++;
		}
	}
	for (int k = 0; k < j->nbisect && j->refine; k++) {
		j->p[np].kind = REFINE_BISECT;
		j->p[np].bisect = k;
		np++;
	}
	return np;
}

static int make_node_size(const struct policy *pol, const tmatch_map_opts_t *opts,
                          struct cand *cand, int *nc, tmatch_error_t *err)
{
	static const struct tmatch__crew_ops ops = {node_ready, node_exclusive, node_work,
	                                            node_done};
	struct node_job *j = calloc(1, sizeof(*j));
	int np, order[2 * MAX_CAND] = {0}, no = 0, rc = 0, reordered;

	if (!j) {
		tmatch_error_set(err, 0, NULL, 0, 0, "auto: out of memory");
		errno = ENOMEM;
		return -1;
	}
	j->pol = pol;
	j->caller = opts;
	j->opts = *opts;
	if (opts->log) {
		j->opts.log = node_log;
		j->opts.log_arg = j;
	}
	j->refine = !pol->dense;
	np = node_pieces(j, opts->seed, &reordered);
	/* taken: the bisections first (one at a time, back to back), TreeMatch
	   (the longest other piece) and TreeMatch on the bisection's order,
	   then the others and the refinements, alternating */
	for (int i = 0; i < np; i++)
		if (j->p[i].kind == MAKE_BISECT)
			order[no++] = i;
	for (int i = 0; i < np; i++)
		if ((j->p[i].kind == OTHER && j->p[i].cand == C_TREEMATCH) || i == reordered)
			order[no++] = i;
	for (int i = 0, r = 0; i < np || r < np; i++, r++) {
		while (r < np && j->p[r].kind != REFINE_BISECT)
			r++;
		if (r < np)
			order[no++] = r;
		while (i < np && (j->p[i].kind != OTHER || j->p[i].cand == C_TREEMATCH))
			i++;
		if (i < np)
			order[no++] = i;
	}
	if (no != np) /* every piece once; else the pieces' own order does */
		for (no = 0; no < np; no++)
			order[no] = no;
	pthread_mutex_init(&j->log_mu, NULL);
	if (tmatch__crew_run(np, order, &ops, j, tmatch__crew_threads(TMATCH__CREW_MAX)) != 0) {
		for (int i = 0; i < np; i++)
			j->p[i].state = -1;
	}
	pthread_mutex_destroy(&j->log_mu);
	for (int i = 0; i < np; i++) {
		struct piece *p = &j->p[i];

		if (p->state == -1 && rc == 0) {
			*err = p->err;
			if (!err->msg[0])
				tmatch_error_set(err, 0, NULL, 0, 0, "auto: out of memory");
			errno = ENOMEM;
			rc = -1;
		}
		if (p->kind == REFINE_BISECT)
			continue;
		if (p->state == 2)
			tmatch__log(opts, TMATCH_LOG_DEBUG, "auto: candidate %s skipped: %s",
			            candidates[p->cand].name, p->err.msg);
		if (p->state == 1 && rc == 0)
			cand[(*nc)++] = p->c;
		else
			free(p->c.map);
		free(p->raw);
	}
	/* a failed refinement comes after its candidate: free what was kept */
	if (rc != 0) {
		for (int i = 0; i < *nc; i++)
			free(cand[i].map);
		*nc = 0;
	}
	free(j);
	return rc;
}

/*
 * Inputs above REFINE_ALL ranks: the eligible candidates one after the
 * other (a predicate may look at what was made before it), each seed of
 * each. 0, or -1 out of memory.
 */
static int make_large(const struct policy *pol, const tmatch_map_opts_t *opts, struct cand *cand,
                      int *nc)
{
	struct made made = {cand, 0, {0}};
	tmatch_error_t cerr;

	for (int k = 0; k < NB_KINDS; k++) {
		const int *by = NULL;
		int tries;

		made.nc = *nc;
		if (!candidates[k].eligible(pol, &made))
			continue;
		made.ran[k] = 1;
		if (k == C_REORDERED) { /* it follows the first bisection made */
			if (*nc == 0 || cand[0].kind != C_BISECT)
				continue;
			by = cand[0].map;
		}
		tries = tries_of(pol, (enum cand_kind)k);
		for (int t = 0; t < tries && *nc < MAX_CAND; t++) {
			int r = make_cand(pol, opts, (enum cand_kind)k, opts->seed + (uint64_t)t,
			                  by, &cand[*nc], &cerr);

			if (r < 0)
				return -1;
			if (r > 0)
				tmatch__log(opts, TMATCH_LOG_DEBUG,
				            "auto: candidate %s skipped: %s", candidates[k].name,
				            cerr.msg);
			else
				(*nc)++;
		}
	}
	return 0;
}

int tmatch__map_auto(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                     const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	struct cand cand[MAX_CAND];
	struct policy pol;
	int n = comm->n, nc = 0, rc = -1, best = 0;

	memset(cand, 0, sizeof(cand));
	if (n == 0)
		return 0;
	if (uniform_everywhere(comm, topo)) {
		tmatch__log(opts, TMATCH_LOG_INFO,
		            "auto: the same traffic between every pair of ranks on every allowed "
		            "leaf: every placement costs the same, kept packed");
		return tmatch__map_packed(comm, topo, opts, leaf_of_rank, err);
	}
	policy_init(&pol, comm, topo);
	if (pol.size == SIZE_NODE) {
		if (make_node_size(&pol, opts, cand, &nc, err) != 0)
			goto out;
	} else if (make_large(&pol, opts, cand, &nc) != 0) {
		goto nomem;
	}
	if (nc == 0) {
		tmatch_error_set(err, 0, NULL, 0, 0, "auto: no candidate mapper succeeded");
		errno = ENOMEM;
		goto out;
	}
	/* Refine the cheapest unrefined candidates, as many as the policy says. */
	for (int pass = 0, left = refine_count(&pol); pass < nc && left > 0; pass++, left--) {
		int pick = -1;

		for (int i = 0; i < nc; i++)
			if (!cand[i].refined && (pick < 0 || cand[i].cost < cand[pick].cost))
				pick = i;
		if (pick < 0) /* every candidate already refined */
			break;
		if (candidates[cand[pick].kind].refine_pays &&
		    !candidates[cand[pick].kind].refine_pays(&pol))
			break;
		if (refine_cand(comm, topo, opts, &cand[pick], err) != 0)
			goto out;
	}
	/* Lowest cost; ties keep the earlier candidate. */
	for (int i = 1; i < nc; i++)
		if (cand[i].cost < cand[best].cost)
			best = i;
	if (opts->search_time > 0 && search_best(&pol, opts, &cand[best], err) != 0)
		goto out;
	tmatch__log(opts, TMATCH_LOG_INFO,
	            "auto: kept %s%s seed %llu (hop-bytes %.6g) of %d candidates", cand[best].name,
	            cand[best].refined ? "+refine" : "", (unsigned long long)cand[best].seed,
	            cand[best].cost, nc);
	memcpy(leaf_of_rank, cand[best].map, sizeof(int) * (size_t)n);
	rc = 0;
	goto out;
nomem:
	errno = ENOMEM;
	tmatch_error_set(err, 0, NULL, 0, 0, "auto: out of memory");
out:
	for (int i = 0; i < nc; i++)
		free(cand[i].map);
	return rc;
}
