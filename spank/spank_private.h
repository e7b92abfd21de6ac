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

#endif /* TMATCH_SPANK_PRIVATE_H */
