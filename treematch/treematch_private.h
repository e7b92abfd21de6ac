/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * treematch_private.h - internals shared by the files of treematch/.
 * Tests may include it; nothing outside treematch/ and tests/ does.
 */
#ifndef TMATCH_TREEMATCH_PRIVATE_H
#define TMATCH_TREEMATCH_PRIVATE_H

#include "treematch/internal.h"
#include "treematch/treematch.h"

#include <stdarg.h>
#include <stdio.h>

struct tmatch_topo {
	int depth;                      /* levels below the root */
	int arity[TMATCH_MAX_DEPTH];    /* arity[l]: children of a node at depth l */
	double cost[TMATCH_MAX_DEPTH];  /* cost[l]: unit cost, common ancestor at depth l */
	int span[TMATCH_MAX_DEPTH + 1]; /* leaves under one node at depth l; span[depth] = 1 */
	int nb_leaves;                  /* span[0] */
	unsigned char *allowed;         /* NULL = all leaves allowed, else nb_leaves flags */
	int nb_allowed;
	char level_name[TMATCH_MAX_DEPTH][24];
};

struct tmatch_comm {
	int n;
	size_t nnz;      /* stored entries, both triangles */
	size_t *row_ptr; /* n + 1 */
	int *col;        /* nnz, increasing within a row */
	double *w;       /* nnz */
	double total;    /* sum over unordered pairs */
};

/* Log through the options' callback (no-op when opts or its callback is NULL). */
static inline void tmatch__log(const tmatch_map_opts_t *opts, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void tmatch__log(const tmatch_map_opts_t *opts, int level, const char *fmt, ...)
{
	va_list ap;

	if (!opts || !opts->log)
		return;
	va_start(ap, fmt);
	tmatch_log_vprintf(opts->log, opts->log_arg, level, fmt, ap);
	va_end(ap);
}

/* Deterministic PRNG (splitmix64 seeded xoshiro256**); no globals. */
typedef struct tmatch__rng {
	uint64_t s[4];
} tmatch__rng_t;
void tmatch__rng_seed(tmatch__rng_t *rng, uint64_t seed);
uint64_t tmatch__rng_next(tmatch__rng_t *rng);
/* Uniform in [0, bound), bound > 0, without modulo bias. */
uint64_t tmatch__rng_below(tmatch__rng_t *rng, uint64_t bound);

/*
 * Leaf codes: a leaf's child index at each level in a bit field of its own,
 * the top level in the highest bits, so the distance between two leaves is
 * the level of the highest bit in which their codes differ: an XOR and a
 * count of leading zeros instead of a division per level.
 */
struct tmatch__codes {
	int shift[TMATCH_MAX_DEPTH];
	signed char lvl_of_bit[64]; /* levels climbed when this bit differs */
};
/* 0, or 1 when the tree needs more than 64 bits (then use tmatch__distance). */
int tmatch__codes_init(const struct tmatch_topo *t, struct tmatch__codes *k);
uint64_t tmatch__leaf_code(const struct tmatch_topo *t, const struct tmatch__codes *k, int leaf);
/* tmatch__distance of the leaves with these codes. */
static inline int tmatch__code_distance(const struct tmatch__codes *k, uint64_t a, uint64_t b)
{
	return a == b ? 0 : k->lvl_of_bit[63 - __builtin_clzll(a ^ b)];
}

/* Levels climbed from the leaves to the common ancestor of two leaves. */
static inline int tmatch__distance(const struct tmatch_topo *t, int a, int b)
{
	int l = t->depth; /* a and b share their node at depth l iff a/span[l] == b/span[l] */
	while (a / t->span[l] != b / t->span[l])
		l--;
	return t->depth - l;
}

/*
 * A mapper fills leaf_of_rank[0..n-1] with distinct allowed leaves.
 * It may assume: comm and topo valid, n <= nb_allowed, opts non-NULL.
 * Returns 0, or -1 with errno and err set (ENOMEM, ETIME for budget...).
 */
typedef int (*tmatch__mapper_fn)(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                                 const tmatch_map_opts_t *opts, int *leaf_of_rank,
                                 tmatch_error_t *err);

struct tmatch__mapper {
	const char *name;
	tmatch__mapper_fn fn;
	const char *summary; /* one line, for --help and error messages */
};

/*
 * Mappers, one file each (map_<name>.c). The files of this module depend on
 * each other one way only:
 *   error, rng, topo, comm, comm_read, comm_sub     the objects
 *   metrics                                          tmatch_eval, hop-bytes, validation
 *   map_refine, map_treematch, map_greedy, map_rcm,  the mappers (metrics only)
 *   map_bisect, map_baselines
 *   map_auto                                         the mappers above, map_refine
 *   map_registry                                     every mapper: tmatch_map_compute
 */
int tmatch__map_treematch(const tmatch_comm_t *, const tmatch_topo_t *, const tmatch_map_opts_t *,
                          int *, tmatch_error_t *);
int tmatch__map_packed(const tmatch_comm_t *, const tmatch_topo_t *, const tmatch_map_opts_t *,
                       int *, tmatch_error_t *);
int tmatch__map_rr(const tmatch_comm_t *, const tmatch_topo_t *, const tmatch_map_opts_t *, int *,
                   tmatch_error_t *);
int tmatch__map_random(const tmatch_comm_t *, const tmatch_topo_t *, const tmatch_map_opts_t *,
                       int *, tmatch_error_t *);
int tmatch__map_greedy(const tmatch_comm_t *, const tmatch_topo_t *, const tmatch_map_opts_t *,
                       int *, tmatch_error_t *);
int tmatch__map_rcm(const tmatch_comm_t *, const tmatch_topo_t *, const tmatch_map_opts_t *, int *,
                    tmatch_error_t *);
int tmatch__map_bisect(const tmatch_comm_t *, const tmatch_topo_t *, const tmatch_map_opts_t *,
                       int *, tmatch_error_t *);
int tmatch__map_auto(const tmatch_comm_t *, const tmatch_topo_t *, const tmatch_map_opts_t *, int *,
                     tmatch_error_t *);
/* The bisection with the top level's children given shares in proportion
   to their room rather than filled largest first (fewer ranks than
   leaves): one of auto's candidates, not a mapper of its own. */
int tmatch__map_bisect_spread(const tmatch_comm_t *, const tmatch_topo_t *,
                              const tmatch_map_opts_t *, int *, tmatch_error_t *);

/*
 * Improve a complete mapping in place (swaps and moves on the tree cost,
 * then threshold accepting). Never makes it worse. Deterministic for a seed;
 * bounded by opts->iter_budget and opts->time_budget.
 */
int tmatch__refine(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                   const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err);

/* Whether threshold accepting may use its aggregates on dense inputs (1,
   the default); the unit tests compare both ways (same placements for
   integer weights). */
extern int tmatch__refine_aggregates;

/* Whether the descent reads the leaf level's edges from the matrix itself
   rather than from a copy (1, the default); the unit tests compare both
   ways (the same placements: the same edges in the same order). */
extern int tmatch__refine_leaf_view;

/* The steps tmatch__refine takes by default on this input. */
long tmatch__refine_budget(const tmatch_comm_t *comm, const tmatch_topo_t *topo);

/*
 * The budgeted search (map_refine.c): iterated local search with VieM's N_C
 * neighbourhoods for `steps` evaluation steps, then the level descent.
 * Never makes the mapping worse; deterministic for a seed and a step count
 * (opts->time_budget stays a safety cap).
 */
int tmatch__search(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                   const tmatch_map_opts_t *opts, long steps, int *leaf_of_rank,
                   tmatch_error_t *err);

/* tmatch_map_validate, also saying which rank is wrong (*bad_rank, -1 if none). */
int tmatch__map_check(const tmatch_topo_t *topo, const int *leaf_of_rank, int n, int *bad_rank,
                      tmatch_error_t *err);

/*
 * Whether the ranks are numbered in an order with locality: at least
 * TMATCH__LOCAL_ORDER_MIN of the traffic, and 4 times what a random
 * numbering would keep, joins ranks r and s with r / B == s / B, B the
 * leaves under the lowest tree node holding more than one (what packed
 * puts side by side). A stencil numbered along its grid keeps 16-40 %
 * there, a permuted or random one about B / n. O(nnz), no memory.
 */
#define TMATCH__LOCAL_ORDER_MIN 0.05
int tmatch__order_is_local(const tmatch_comm_t *comm, const tmatch_topo_t *topo);

/*
 * A crew (crew.c): work(arg, p) for every piece p in [0, n) on up to
 * `threads` threads, the caller's included. A thread takes the first piece
 * of `order` not taken yet whose ready() says it may start (NULL: always)
 * and, when exclusive() says so (NULL: never), while no other exclusive
 * piece runs; done() follows work(). ready, exclusive and done are called
 * under the crew's lock. Returns 0 when every piece is done, -1 (ENOMEM)
 * before any started. The pieces must not depend on each other's timing.
 */
#define TMATCH__CREW_MAX TMATCH_MAP_MAX_THREADS
struct tmatch__crew_ops {
	int (*ready)(void *arg, int piece);
	int (*exclusive)(void *arg, int piece);
	void (*work)(void *arg, int piece);
	void (*done)(void *arg, int piece);
};
int tmatch__crew_run(int n, const int *order, const struct tmatch__crew_ops *ops, void *arg,
                     int threads);
/* The CPUs this process may run on, at most max. */
int tmatch__crew_threads(int max);

/* Hop-bytes of a mapping (cheap, used by mappers to compare candidates). */
double tmatch__hop_bytes(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                         const int *leaf_of_rank);

#endif /* TMATCH_TREEMATCH_PRIVATE_H */
