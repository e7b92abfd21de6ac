/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spank_private.h - hooks between the files of treematch.so.
 *
 * treematch.c owns the SPANK entry points. Optional companions built into
 * the same .so (spank/record.c: --treematch-record=out.yml) implement the
 * functions below; treematch.c declares them weak and calls each one that
 * is present, with the arguments of the SPANK callback of the same name,
 * after its own work. A hook returning -1 fails the callback (return -1
 * only where the step must fail). record_init registers the companion's
 * own options with spank_option_register().
 */
#ifndef TMATCH_SPANK_PRIVATE_H
#define TMATCH_SPANK_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "treematch/treematch.h"

int tmatch__spank_record_init(spank_t sp, int ac, char **av);
int tmatch__spank_record_init_post_opt(spank_t sp, int ac, char **av);
int tmatch__spank_record_local_user_init(spank_t sp, int ac, char **av);
int tmatch__spank_record_user_init(spank_t sp, int ac, char **av);
int tmatch__spank_record_task_init(spank_t sp, int ac, char **av);
int tmatch__spank_record_task_exit(spank_t sp, int ac, char **av);
int tmatch__spank_record_exit(spank_t sp, int ac, char **av);

/*
 * spank/isolate.c: tmatch_map_compute(comm, topo, mopts) run in a forked
 * child, which is how the plugin maps on a node (slurmstepd must survive
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
int tmatch__spank_isolate_map(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                              const tmatch_map_opts_t *mopts, double max_time, size_t max_memory,
                              int *leaf_of, tmatch_error_t *err);

/* Helpers shared by the plugin's files (defined in spank/isolate.c). */
/* CLOCK_MONOTONIC in seconds. */
double tmatch__spank_now(void);
#endif /* TMATCH_SPANK_PRIVATE_H */
