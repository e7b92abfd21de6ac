/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement_private.h - internals shared by the files of placement/. Tests
 * may include it; nothing outside placement/ and tests/ does.
 */
#ifndef TMATCH_PLACEMENT_PRIVATE_H
#define TMATCH_PLACEMENT_PRIVATE_H

#include "placement/placement.h"
#include "treematch/treematch.h"

#include <stddef.h>

/*
 * isolate.c: tmatch_map_compute(comm, topo, mopts) (or `compute`, when not
 * NULL: the tests' stand-in for a mapper that hangs or crashes) run in a
 * forked child, which is how the plugin maps on a node (slurmstepd must survive
 * whatever the mapping does). The child gets RLIMIT_AS = its current address
 * space + max_memory (0 = no memory limit), RLIMIT_CPU = ceil(max_time) + 1 s,
 * default signal dispositions, no stdio; the parent SIGKILLs it when
 * max_time seconds of wall time pass (0 = no time limit), always reaps it, and checks
 * every byte it sends back (length, then tmatch_map_validate).
 * On success leaf_of[tmatch_comm_order(comm)] is filled and 0 returned.
 * On failure -1, leaf_of untouched, err holds one line:
 *   ETIME   "mapping exceeded max_map_time=2 s, killed" (or its CPU limit)
 *   ENOMEM  "mapping ran out of memory (max_map_memory=1G)"
 *   EIO     "mapping process died with signal 11 (Segmentation fault)"
 *   EPROTO  the child sent nothing or something malformed
 *   else    the mapper's own error (errno and message from the child).
 */
typedef int (*tmatch__place_compute_fn)(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                                        const tmatch_map_opts_t *opts, int *leaf_of_rank,
                                        tmatch_error_t *err);
int tmatch__place_isolate_map(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                              const tmatch_map_opts_t *mopts, double max_time, size_t max_memory,
                              tmatch__place_compute_fn compute, int *leaf_of, tmatch_error_t *err);

/* CLOCK_MONOTONIC in seconds. */
double tmatch__place_now(void);

#endif /* TMATCH_PLACEMENT_PRIVATE_H */
