/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_private.h - internals shared by the files of profile/ (the
 * profile object, its loaders and writers, the compiled form, the store);
 * tests may include it, nothing else does.
 */
#ifndef TMATCH_PROFILE_PRIVATE_H
#define TMATCH_PROFILE_PRIVATE_H

#include "profile/profile.h"

#include <stdarg.h>
#include <stdint.h>

/* Largest weight accepted in a profile: 2^63 - 1. */
#define TMATCH__WEIGHT_MAX ((uint64_t)INT64_MAX)

/* Provenance strings (tmatch_profile_info keys, in this order). */
enum {
	TMATCH__INFO_APPLICATION,
	TMATCH__INFO_TOOL,
	TMATCH__INFO_TOOL_VERSION,
	TMATCH__INFO_MPI_LIBRARY,
	TMATCH__INFO_CREATED,
	TMATCH__INFO_SOURCE,
	TMATCH__INFO_COUNT
};
extern const char *const tmatch__info_keys[TMATCH__INFO_COUNT];
#define TMATCH__INFO_MAX_LEN 1024
/* 1 if s[0..len) is valid UTF-8 that YAML prints as is, without control characters. */
int tmatch__info_valid(const char *s, size_t len);

/* One edge set, as parallel growable arrays. */
struct tmatch__edges {
	size_t n, cap;
	int *src;
	int *dst;
	uint64_t *bytes; /* NULL when the profile does not record bytes */
	uint64_t *msgs;  /* NULL when the profile does not record msgs */
	uint32_t *line;  /* source line of each edge while loading; NULL otherwise */
};

struct tmatch_profile {
	int ranks;
	unsigned metrics; /* TMATCH_PROFILE_HAS_* */
	int directed;
	tmatch_profile_metric_t placement_metric;
	tmatch_profile_coll_t coll;  /* what set[1] holds */
	int finished;                /* edges sorted and merged */
	struct tmatch__edges set[2]; /* [0] = P2P (edges), [1] = COLL (coll_edges) */
	char *info[TMATCH__INFO_COUNT];
	int nodes;
	int ranks_per_node;
};

/* Append one edge (arrays grow by doubling). -1/ENOMEM. `line` 0 = unknown. */
int tmatch__edges_push(struct tmatch__edges *e, unsigned metrics, int src, int dst, uint64_t bytes,
                       uint64_t msgs, uint32_t line);
void tmatch__edges_free(struct tmatch__edges *e);
/* Make room for `cap` edges in one step. -1/ENOMEM (arrays still valid). */
int tmatch__edges_reserve(struct tmatch__edges *e, unsigned metrics, size_t cap);

/*
 * Sort by (src, dst) in O(n + ranks) (two stable counting passes), then
 * merge equal pairs. directed: duplicates summed (count in *ndup, first
 * duplicate's line in *dup_line); undirected: the first duplicate fails
 * (-1/EINVAL with *dup_line / *first_line set). A sum >= 2^63 fails with
 * EOVERFLOW. On failure the set is left sorted but unmerged.
 */
int tmatch__edges_sort_merge(struct tmatch__edges *e, unsigned metrics, int ranks, int directed,
                             size_t *ndup, uint32_t *dup_line, uint32_t *first_line, int *dup_src,
                             int *dup_dst);

/* Describe what a non-integer scalar looks like ("a negative number", ...). */
const char *tmatch__describe_scalar(const char *s, size_t len);

/* The edge sets `sets` asks for in p, TMATCH_PROFILE_COLL_WIRE resolved
   against what its collectives are (coll). */
static inline unsigned tmatch__profile_sets(unsigned sets, tmatch_profile_coll_t coll)
{
	if (sets & TMATCH_PROFILE_COLL_WIRE)
		sets = (sets & ~TMATCH_PROFILE_COLL_WIRE) |
		       (coll == TMATCH_COLL_WIRE ? TMATCH_PROFILE_COLL : 0);
	return sets;
}

/* compiled.c: a compiled profile in memory (the loaders call it when
   tmatch_profile_is_compiled says so). */
tmatch_profile_t *tmatch__profile_load_compiled(const void *data, size_t len, const char *name,
                                                const tmatch_profile_limits_t *lim,
                                                tmatch_error_t *err);

/*
 * The matrix tmatch_profile_to_comm(profile, metric, sets) would give, read
 * straight from a whole compiled profile when that profile is undirected and
 * only one of `sets` has edges (a converted matrix): no profile, no copy of
 * the edges, and when `mapped` (data is a read-only mapping of the file) its
 * pages go back to the file as they are read. metric < 0: the profile's
 * placement metric. *direct = 0 with NULL when the profile is not such a
 * one (load it whole); otherwise the matrix, or NULL with err set (a file
 * the loader refuses gets the loader's message).
 */
tmatch_comm_t *tmatch__profile_compiled_matrix(const void *data, size_t len, int mapped,
                                               const char *name, const tmatch_profile_limits_t *lim,
                                               int metric, unsigned sets, int *direct,
                                               tmatch_error_t *err);

#endif /* TMATCH_PROFILE_PRIVATE_H */
