/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/matrix.h - the matrix a placement maps: profile -> matrix, for the
 * plugin, map, layout, draw and predict alike (step.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_MATRIX_H
#define TMATCH_PLACEMENT_MATRIX_H

#include "profile/profile.h"
#include "treematch/treematch.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The symmetric matrix of `prof` that drives placement: `metric` (-1 = the
 * profile's placement_metric, else tmatch_profile_metric_t) over the
 * point-to-point edges, plus the collective ones by `coll`
 * (tmatch_place_comm_sets). The one place that choice is made, for the
 * plugin, `treematch map`, `layout`, `draw` and `predict`: one matrix for
 * one run.
 */
tmatch_comm_t *tmatch_place_comm(const tmatch_profile_t *prof, int metric, int coll,
                                 tmatch_error_t *err);
/*
 * The edge sets placement counts (TMATCH_PROFILE_*): point-to-point, and
 * the collectives when coll=on (1), none when off (0), and by default (-1)
 * those the profile says are the messages collectives send (`collectives:
 * wire`, what `treematch record` writes): a logical model or a version 1
 * profile's coll_edges only when asked.
 */
unsigned tmatch_place_comm_sets(int coll);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_MATRIX_H */
