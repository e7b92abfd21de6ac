/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spank_private.h - hooks between the files of treematch.so.
 *
 * treematch.c owns the SPANK entry points. Its companions built into the
 * same .so (spank/record.c: --treematch-record=out.yml; spank/learn.c)
 * fill the hook tables below; treematch.c calls each hook through its
 * table, with the arguments of the SPANK callback of the same name, after
 * its own work. A hook returning -1 fails the callback (return -1 only
 * where the step must fail). record_init registers the companion's own
 * options with spank_option_register().
 */
#ifndef TMATCH_SPANK_PRIVATE_H
#define TMATCH_SPANK_PRIVATE_H

/* Slurm's slurm_version.h has it (included before this header); the same
   definition here lets cppcheck, which reads no system header, evaluate the
   release tests of the #if lines. */
#ifndef SLURM_VERSION_NUM
#define SLURM_VERSION_NUM(a, b, c) (((a) << 16) + ((b) << 8) + (c))
#endif

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <slurm/spank.h>

#include "treematch/treematch.h"

/*
 * spank_get_item is variadic: a pointer of the wrong type compiles and then
 * overwrites the caller's stack (a uint16_t for S_STEP_CPUS_PER_TASK, a
 * uint32_t item, was one). Every call goes through TM_ITEM/TM_ITEM2, which
 * refuse at compile time an argument whose type is not the one spank.h
 * documents for that item (the same in Slurm 22.05 and 24.11; `make
 * check-spank-items` compares this table with the spank.h being built
 * against). An item missing from the table does not compile either.
 */
#define TM_ITEM_TYPE_S_JOB_UID              uid_t
#define TM_ITEM_TYPE_S_JOB_GID              gid_t
#define TM_ITEM_TYPE_S_JOB_ID               uint32_t
#define TM_ITEM_TYPE_S_JOB_STEPID           uint32_t
#define TM_ITEM_TYPE_S_JOB_NNODES           uint32_t
#define TM_ITEM_TYPE_S_JOB_NODEID           uint32_t
#define TM_ITEM_TYPE_S_JOB_LOCAL_TASK_COUNT uint32_t
#define TM_ITEM_TYPE_S_JOB_TOTAL_TASK_COUNT uint32_t
#define TM_ITEM_TYPE_S_TASK_ID              int
#define TM_ITEM_TYPE_S_TASK_GLOBAL_ID       uint32_t
#define TM_ITEM_TYPE_S_STEP_CPUS_PER_TASK   uint32_t
#define TM_ITEM_TYPE_S_JOB_ALLOC_CORES      char *
#define TM_ITEM_TYPE_S_STEP_ALLOC_CORES     char *
/* two-argument items: the type of the first argument, then of the pointer */
#define TM_ITEM_ARG_S_JOB_LOCAL_TO_GLOBAL_ID  uint32_t
#define TM_ITEM_TYPE_S_JOB_LOCAL_TO_GLOBAL_ID uint32_t
#define TM_ITEM_ARG_S_JOB_ARGV                int *
#define TM_ITEM_TYPE_S_JOB_ARGV               char **

#define TM_ITEM_CHECK(cond, what)                                                                  \
	((void)sizeof(struct {                                                                     \
		_Static_assert(cond, what);                                                        \
		int unused_;                                                                       \
	}))
/* clang-format 14 and 19 space _Generic's colons differently: left as is. */
// clang-format off
#define TM_ITEM(sp, item, ptr)                                                                     \
	(TM_ITEM_CHECK(_Generic((ptr), TM_ITEM_TYPE_##item * : 1, default : 0),                    \
	               #item " takes a pointer to the type spank.h gives it"),                     \
	 spank_get_item((sp), (item), (ptr)))
#define TM_ITEM2(sp, item, arg, ptr)                                                               \
	(TM_ITEM_CHECK(_Generic((arg), TM_ITEM_ARG_##item : 1, default : 0) &&                     \
	                   _Generic((ptr), TM_ITEM_TYPE_##item * : 1, default : 0),                \
	               #item " takes the argument types spank.h gives it"),                        \
	 spank_get_item((sp), (item), (arg), (ptr)))
// clang-format on

/*
 * treematch.c: srun, sbatch, salloc stop here with one line ("treematch:
 * msg") and status 1, before they ask Slurm for anything. Slurm honours a
 * failing option callback from any plugin, but a failing init_post_opt or
 * local_user_init only from a "required" one, and the package's line says
 * "optional": the plugin ends the command as srun does for a required one.
 */
__attribute__((noreturn)) void tmatch__spank_stop_local(const char *msg);

int tmatch__spank_record_init(spank_t sp, int ac, char **av);
int tmatch__spank_record_init_post_opt(spank_t sp, int ac, char **av);
int tmatch__spank_record_local_user_init(spank_t sp, int ac, char **av);
int tmatch__spank_record_user_init(spank_t sp, int ac, char **av);
int tmatch__spank_record_task_init(spank_t sp, int ac, char **av);
int tmatch__spank_record_task_exit(spank_t sp, int ac, char **av);
int tmatch__spank_record_exit(spank_t sp, int ac, char **av);
/* record.c: learn mode's recording in a task, when srun's decision for the
   step says so: 0 (recorded, or not a recording step); -1 when this task
   cannot be recorded (the step must stop; said once). */
struct tmatch_config;
int tmatch__spank_record_learn(spank_t sp);
/* learn.c: srun's side of learn mode: the step's one decision (in srun's
   environment, which the step inherits), and what the step recorded. */
int tmatch__spank_learn_local_user_init(spank_t sp, const struct tmatch_config *cfg,
                                        const char *job_cwd);
int tmatch__spank_learn_exit(void);
/* stop.c: cancel the whole step through slurmctld (a failure on one node
   must not leave the other nodes' tasks waiting). slurmstepd's init maps
   the request's shared flag; user_init (whole_node: every task of the node
   fails) or a task before its exec asks; slurm_spank_task_exit sends it.
   Whether slurm_spank_init may fail in this context without draining the
   node. */
void tmatch__spank_stop_init(void);
void tmatch__spank_stop_ask(int whole_node);
void tmatch__spank_stop_asked(spank_t sp);
int tmatch__spank_init_may_fail(void);

/*
 * The companions' hooks, as treematch.c calls them: each file fills its
 * table with its own functions (record.c, learn.c, both always linked), so
 * a hook renamed on one side is a compile error or an undefined symbol the
 * plugin's link refuses (spank/module.mk), never a call silently not made.
 */
typedef int (*tmatch__spank_hook_fn)(spank_t sp, int ac, char **av);
typedef struct tmatch__spank_record_hooks {
	tmatch__spank_hook_fn init, init_post_opt, local_user_init, user_init, task_init, task_exit,
	    exit;
	int (*learn)(spank_t sp);
} tmatch__spank_record_hooks_t;
extern const tmatch__spank_record_hooks_t tmatch__spank_record_hooks;
typedef struct tmatch__spank_learn_hooks {
	int (*local_user_init)(spank_t sp, const struct tmatch_config *cfg, const char *job_cwd);
	int (*exit)(void);
} tmatch__spank_learn_hooks_t;
extern const tmatch__spank_learn_hooks_t tmatch__spank_learn_hooks;

#endif /* TMATCH_SPANK_PRIVATE_H */
