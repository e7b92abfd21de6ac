/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement.h - the placement layer: every decision from "profile +
 * allocation + policy" to "CPU set of each task", and from "profile +
 * switch tree" to "node of each rank". The SPANK plugin (spank/), the CLI
 * (cli/) and the cli_filter path (through `treematch layout`) are front ends
 * over it: they parse arguments, read Slurm items, print, and call these
 * functions with explicit inputs. Nothing here includes Slurm or prints.
 *
 * Three parts:
 *   - the step: is it handled, the effective policy (placement/config.h:
 *     built-in defaults < plugstack.conf < admin file < the user's value),
 *     what to check in srun;
 *   - a node: one call, tmatch_place_node(), from the step's items on this
 *     node to a plain result (per local task: global rank, leaf, CPU set as
 *     an hwloc bitmap, position; the node's figures), then the task's
 *     environment and the lines shown to the user;
 *   - a layout: the node of every rank over an allocation's switch tree
 *     (`treematch layout`), with Slurm's block and cyclic layouts and the
 *     traffic per level to compare;
 *   and the front ends' inputs: a --topology SPEC or a profile file into the
 *   core's objects.
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state.
 *
 * This layer is the project's own: it is linked from libtreematch.a into the
 * plugin, the CLI and the tests, but not exported by libtreematch.so nor
 * installed (its interface will move with the de-privileged mapping helper
 * and the compiled step plan). The policy grammar, placement/config.h, is
 * public as before.
 *
 * Index spaces: `local` = a task's index on its node (S_TASK_ID), `rank` =
 * its global task id (S_TASK_GLOBAL_ID, the MPI_COMM_WORLD rank under
 * srun), `leaf` = a leaf of the node tree's (or cluster tree's) topo.
 */
#ifndef TMATCH_PLACEMENT_PLACEMENT_H
#define TMATCH_PLACEMENT_PLACEMENT_H

#include "affinity/affinity.h"
#include "placement/config.h"
#include "profile/profile.h"
#include "treematch/treematch.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* The step                                                                  */

/* Slurm's special step ids (slurm.h), repeated so this file needs no Slurm. */
#define TMATCH_STEP_PENDING     0xfffffffdu
#define TMATCH_STEP_EXTERN      0xfffffffcu
#define TMATCH_STEP_BATCH       0xfffffffbu
#define TMATCH_STEP_INTERACTIVE 0xfffffffau

/* 1 for the steps the plugin acts on (ordinary srun steps), 0 for the batch
   script, the extern container, interactive and pending steps. */
int tmatch_place_step_is_handled(uint32_t step_id);

/*
 * What the user's --treematch value asks for before the grammar sees it:
 * TMATCH_PLACE_VALUE_HELP for "help" (print tmatch_place_help_text and stop),
 * TMATCH_PLACE_VALUE_OPTIONS for anything else (including "off": the grammar
 * turns that into enabled=0). -1/EINVAL for NULL or an empty value.
 */
enum { TMATCH_PLACE_VALUE_OPTIONS = 0, TMATCH_PLACE_VALUE_HELP = 1 };
int tmatch_place_classify_value(const char *value, tmatch_error_t *err);

/* The text printed for --treematch=help (static, never NULL). */
const char *tmatch_place_help_text(void);

/*
 * Effective configuration: built-in defaults, then plugstack.conf arguments
 * (argc/argv as SPANK passes them), then the admin file named by the
 * `admin_file=PATH` argument if any (already opened by the caller: admin_fd,
 * -1 = none), then the user's value (NULL = no --treematch). Limits are
 * capped by the admin's, a mapper outside allowed_mappers is refused.
 * Returns 0, or -1 with err naming the source ("plugstack.conf",
 * "--treematch") and what to fix; on error *out is unchanged.
 */
int tmatch_place_config(int argc, char *const *argv, int admin_fd, const char *user_value,
                        tmatch_config_t *out, tmatch_error_t *err);

/* The user's value over an admin configuration already computed (the last
   step of tmatch_place_config): what the plugin's helper does as the user. */
int tmatch_place_config_user(const tmatch_config_t *admin, const char *user_value,
                             tmatch_config_t *out, tmatch_error_t *err);

/* The admin file named in argv ("admin_file=PATH"), or NULL. Points into argv. */
const char *tmatch_place_admin_file(int argc, char *const *argv);

/* The helper program named in argv ("helper=PATH": an install elsewhere than
   the packages', a build tree's), or NULL. Points into argv. */
const char *tmatch_place_helper_path(int argc, char *const *argv);

/*
 * plugstack.conf (placement/plugstack.c): the lines that load the plugin.
 * Slurm's grammar: '#' starts a comment, "required|optional PLUGIN [ARG...]"
 * or "include GLOB" (relative to the including file's directory). Each kept
 * line says where it is and the 1-based column of each argument.
 */
typedef struct tmatch_place_plugstack_line {
	char file[TMATCH_CONFIG_PATH_MAX];
	int line;
	int required;                      /* 1 "required", 0 "optional" */
	char path[TMATCH_CONFIG_PATH_MAX]; /* the plugin as written */
	int path_column;
	int argc;
	char **argv; /* its arguments */
	int *column; /* column[i]: where argv[i] starts in the line */
} tmatch_place_plugstack_line_t;

/* Called for each thing Slurm would ignore or complain about while reading
   (a line of another kind, an include it cannot read). */
typedef void (*tmatch_place_plugstack_problem_fn)(void *arg, const tmatch_error_t *problem);

/*
 * Read the plugin stack file `path` and the files it includes (at most 8
 * deep, 256 files, 1 MiB each), keeping the lines whose plugin's file name
 * is `plugin` (NULL: "treematch.so") into *lines (*nlines of them, in the
 * order Slurm reads them; free with tmatch_place_plugstack_free). Returns
 * the number of problems reported through `report` (>= 0), or -1 when
 * `path` itself cannot be read (err names it).
 */
int tmatch_place_plugstack_read(const char *path, const char *plugin,
                                tmatch_place_plugstack_line_t **lines, int *nlines,
                                tmatch_place_plugstack_problem_fn report, void *arg,
                                tmatch_error_t *err);
void tmatch_place_plugstack_free(tmatch_place_plugstack_line_t *lines, int n);

/* Where Slurm reads its plugin stack: PlugStackConfig= of `slurm_conf`
   (NULL: /etc/slurm/slurm.conf), else plugstack.conf beside it. A new
   string, NULL with errno ENOMEM. */
char *tmatch_place_plugstack_find(const char *slurm_conf);

/*
 * An error of tmatch_place_config about the plugin's own arguments (file
 * "plugstack.conf", column = the argument's index from 1) made to name the
 * real place: the file, line and column of that argument on the line that
 * loads treematch.so with exactly argc/argv (found from `slurm_conf` as
 * Slurm finds it). Left as it is when the line is not found. Returns 0.
 */
int tmatch_place_plugstack_where(const char *slurm_conf, int argc, char *const *argv,
                                 tmatch_error_t *err);

/* What tmatch_place_site_check found: the plugin's (first) line and the
   site's policy it gives. */
typedef struct tmatch_place_site {
	char plugstack[TMATCH_CONFIG_PATH_MAX]; /* the plugin stack read */
	int nlines;                             /* lines loading treematch.so */
	char line_file[TMATCH_CONFIG_PATH_MAX]; /* the first one's file and line */
	int line;
	int required;
	char plugin[TMATCH_CONFIG_PATH_MAX]; /* its plugin path */
	char admin_file[TMATCH_CONFIG_PATH_MAX];
	int admin_file_column;
	tmatch_config_t cfg;                        /* the site's policy (arguments, admin file) */
	char topology_conf[TMATCH_CONFIG_PATH_MAX]; /* "" when there is none */
} tmatch_place_site_t;

/*
 * A site's configuration of the plugin, checked as the plugin reads it:
 * the plugin stack `plugstack` (NULL: found from `slurm_conf` as Slurm
 * finds it) and its includes, the line that loads treematch.so (there must
 * be one), the plugin file, each argument, the admin file (items,
 * world-readable, written only by its owner), the site's default profile,
 * topology XML and store, and topology.conf (`topology_conf`, NULL: beside
 * slurm.conf when there is one). Each problem goes to `report` with its
 * file, line and column. Returns the number of problems (0: the plugin
 * will read it all), or -1 when the plugin stack itself cannot be read
 * (err). *out (may be NULL) says what was read.
 */
int tmatch_place_site_check(const char *plugstack, const char *slurm_conf,
                            const char *topology_conf, tmatch_place_plugstack_problem_fn report,
                            void *arg, tmatch_place_site_t *out, tmatch_error_t *err);

/*
 * The site's policy as the plugin computes it in srun: the first line of
 * the plugin stack (found from `slurm_conf`) that loads treematch.so, its
 * arguments and admin file, over the defaults (the defaults when there is
 * no such line). What a front end needs to do as the plugin would (the
 * site store, the site's default profile). 0, or -1 with err naming the
 * file, line and column.
 */
int tmatch_place_site_policy(const char *slurm_conf, tmatch_config_t *cfg, tmatch_error_t *err);

/* 1 when the user's --treematch value names a profile itself (then the
   profile is the user's, not the admin's default), 0 otherwise. */
int tmatch_place_user_profile(const char *user_value);

/*
 * The step plan a node places from: plan= (the user's or the admin's),
 * else the job's TREEMATCH_PLAN (plan_env: set by `treematch layout --plan
 * --exec`; NULL = none). NULL: the node maps from the profile.
 */
const char *tmatch_place_plan_path(const tmatch_config_t *cfg, const char *plan_env);

/*
 * What a node places from (the helper, as the user, the user's value
 * merged): learn mode, the step plan and the profile asked in one order.
 * OFF: placement off, or no profile and not learning: Slurm's binding (a
 * plan alone is not enough: it is checked against the profile it was made
 * from). LEARN: learn mode and no profile yet: srun's decision comes first
 * (tmatch_place_learn_follow names the profile in cfg->profile, or ends the
 * step's placement), then ask again. PLAN: this node's slice of the step
 * plan *plan (tmatch_place_plan_path), the profile only stamped; a plan of
 * another step is refused (tmatch_place_plan_matches), never replaced by
 * the profile. PROFILE: the profile, read whole. *plan is NULL but for PLAN.
 */
typedef enum {
	TMATCH_PLACE_FROM_OFF = 0,
	TMATCH_PLACE_FROM_LEARN = 1,
	TMATCH_PLACE_FROM_PLAN = 2,
	TMATCH_PLACE_FROM_PROFILE = 3,
} tmatch_place_source_t;
tmatch_place_source_t tmatch_place_source(const tmatch_config_t *cfg, const char *plan_env,
                                          const char **plan);

/*
 * What a problem found before the step starts (the profile unreadable or of
 * the wrong size) does: 1 = fail the step, when the profile is the user's
 * or the policy says failure=fail; 0 = go on without placement (an admin
 * default that does not fit this step is not the user's problem).
 */
int tmatch_place_must_fail(const tmatch_config_t *cfg, int user_profile);

/*
 * Does a problem found on a node stop the whole step: with failure=fail,
 * yes (the node cancels the step, so that no task elsewhere waits for this
 * node's in MPI_Init); with failure=fallback, no (Slurm's binding, the step
 * runs everywhere).
 */
int tmatch_place_stop_step(const tmatch_config_t *cfg, int node_failed);

/*
 * The working directory a launcher gives the job, which the nodes read
 * relative profile paths against: the last -D/--chdir among its own
 * options (words[0..nopts): -D DIR, -DDIR, a cluster of flags ending in D,
 * --chdir DIR, --chdir=DIR, an unambiguous start of --chdir), else env_dir
 * (SLURM_WORKING_DIR, which srun reads as -D; NULL for sbatch and salloc),
 * else `cwd`, the launcher's own; a relative one is taken from cwd. nopts
 * < 0: the options end at the first word that is not one (sbatch's script,
 * salloc's command). The line is read through step.c's table of srun's
 * options, as tmatch_place_srun_ntasks reads it: a value given in a
 * separate word is skipped for the short options and their long names
 * (-J -DX, --job-name -DX: the job's name), not for long options without
 * a letter (--comment -D is read as -D). -1 when cwd is not absolute or
 * out is too short.
 * profile_in_job_dir: cfg->profile made absolute against job_cwd when it is
 * relative (srun then checks the file the nodes read); -1 when too long.
 */
int tmatch_place_job_cwd(char *const words[], int nwords, int nopts, const char *env_dir,
                         const char *cwd, char *out, size_t len);
int tmatch_place_profile_in_job_dir(tmatch_config_t *cfg, const char *job_cwd);

/* Profile limits from the effective configuration. */
void tmatch_place_limits(const tmatch_config_t *cfg, tmatch_profile_limits_t *lim);

/*
 * The check srun runs before launching anything: the profile has exactly
 * `ntasks` ranks (ntasks <= 0: unknown, not checked) and the mapper name is
 * valid. -1/EINVAL with a message saying what to fix.
 */
int tmatch_place_check_profile(const tmatch_config_t *cfg, const tmatch_profile_t *prof, int ntasks,
                               tmatch_error_t *err);

/*
 * The task count srun's own command line gives, known before srun asks
 * Slurm for an allocation (SPANK says it only once the step exists): the
 * last -n N, -nN, --ntasks N or --ntasks=N among srun's options, argv[1] up
 * to argv[nopt - 1] (nopt: where getopt stopped, srun's first non-option
 * word; 0 or less when unknown: up to the command, and a "--opt WORD" of a
 * long option without a letter, whose WORD may be the command, gives up),
 * read through step.c's table of srun's options as tmatch_place_job_cwd
 * reads the line. 0 when the line does not say it for sure: no -n (a
 * count implied by -N, --ntasks-per-node or the allocation), a
 * heterogeneous step, a letter srun does not have, a value that is not a
 * positive number.
 */
int tmatch_place_srun_ntasks(int argc, char *const *argv, int nopt);

/* ------------------------------------------------------------------------ */
/* The matrix a placement maps                                               */

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

/* ------------------------------------------------------------------------ */
/* The node tree                                                             */

/* 1 when the job's cores on this node (S_JOB_ALLOC_CORES, "0-3,8") cover
   all `node_cores` cores of the node, 0 otherwise (also for a missing or
   malformed list): what exclusive_only asks. */
int tmatch_place_job_has_whole_node(const char *job_cores, int node_cores);

/*
 * The tree of the step's CPUs on this node for `nlocal` tasks, built from
 * `opts` (source, restrictions, cpus_per_task, node_name; its smt field is
 * chosen here): one slot per core (the task gets all the core's hardware
 * threads, as Slurm counts a CPU per core), or, when the node has more
 * tasks than cores, one slot per hardware thread if that gives enough
 * slots (Slurm then placed tasks on sibling threads). With cpus_per_task >
 * 1 a slot is that many hardware threads. *smt_used (may be NULL) tells
 * which policy was taken. When even hardware threads are too few (true
 * oversubscription, srun --overcommit), fails with EOVERFLOW and one line
 * in err: "node n0: 4 tasks for 2 CPUs: ...". Other failures are those of
 * tmatch_affinity_node_load. Destroy with tmatch_affinity_tree_destroy.
 */
/* The plugin's SMT policy for a step's tasks of cpus_per_task CPUs, before
   more tasks than cores make it hardware threads: a whole core per task
   (TMATCH_AFFINITY_SMT_CORE), or hardware threads (SMT_ALL) with -c > 1.
   What a front end takes to show or bind as the plugin binds. */
int tmatch_place_smt_policy(int cpus_per_task);

tmatch_affinity_tree_t *tmatch_place_node_tree(const tmatch_affinity_opts_t *opts, int nlocal,
                                               int *smt_used, tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* GPUs and network cards (gpu.c)                                            */

/* Most GPUs a node's step may hold (MI300A CPX nodes have 24) and a task. */
#define TMATCH_PLACE_MAX_GPUS 256

/* The variables Slurm sets for a step's GPUs (its gres.conf flags). */
enum {
	TMATCH_GPU_VAR_CUDA = 1,    /* CUDA_VISIBLE_DEVICES */
	TMATCH_GPU_VAR_ROCR = 2,    /* ROCR_VISIBLE_DEVICES */
	TMATCH_GPU_VAR_ZE = 4,      /* ZE_AFFINITY_MASK */
	TMATCH_GPU_VAR_ORDINAL = 8, /* GPU_DEVICE_ORDINAL */
};

/* What Slurm says of the step's GPUs in the job's environment on this node
   (user_init: the step's lists, not yet a task's), copied, any may be NULL. */
typedef struct tmatch_place_gpu_env {
	const char *step_gpus;                  /* SLURM_STEP_GPUS: Slurm's indices on the node */
	const char *cuda, *rocr, *ze, *ordinal; /* the vendors' variables */
	const char *cgroup_conf; /* the admin's cgroup.conf text (ConstrainDevices) */
} tmatch_place_gpu_env_t;

/* The step's GPUs on this node. */
typedef struct tmatch_place_gpu_step {
	int ngpus;
	int gpu[TMATCH_PLACE_MAX_GPUS];   /* positions in devices->gpu, by index */
	int index[TMATCH_PLACE_MAX_GPUS]; /* their indices (Slurm's numbers on the node) */
	int node_gpus;                    /* the node's GPUs */
	/* 1: Slurm numbers GPUs as a task sees them (ConstrainDevices: a task
	   sees only its step's, or its own, GPUs, counted from 0) */
	int relative;
	/* 1: a task Slurm binds GPUs to can open only those (ConstrainDevices) */
	int constrained;
	unsigned vars; /* TMATCH_GPU_VAR_* Slurm set */
} tmatch_place_gpu_step_t;

/* 1 when Slurm names GPUs (SLURM_STEP_GPUS is set and not empty; nothing
   read of it): the node tree is then loaded with its devices. */
int tmatch_place_gpu_env_has_gpus(const tmatch_place_gpu_env_t *env);

/* The first GPU SLURM_STEP_GPUS names that dev lacks, or -1 (none, or no
   list that parses). */
int tmatch_place_gpu_unknown(const tmatch_affinity_devices_t *dev,
                             const tmatch_place_gpu_env_t *env);

/*
 * The step's GPUs from what Slurm says (SLURM_STEP_GPUS, checked against
 * the node's devices), whether its numbering is relative (the vendors'
 * variables differ from SLURM_STEP_GPUS, or cgroup.conf has
 * ConstrainDevices=yes). 0; 1 when the step has no GPU here (no
 * SLURM_STEP_GPUS, or an empty one); -1/EINVAL when SLURM_STEP_GPUS is
 * malformed or names a GPU the node does not have (err says which).
 */
int tmatch_place_gpu_step(const tmatch_affinity_devices_t *dev, const tmatch_place_gpu_env_t *env,
                          tmatch_place_gpu_step_t *step, tmatch_error_t *err);

/* How Slurm binds GPUs to tasks (SLURMD_TRES_BIND, a task's environment). */
enum {
	TMATCH_GPU_BIND_NONE = 0, /* every task sees the step's GPUs: ours to give */
	TMATCH_GPU_BIND_PER_TASK, /* --gpus-per-task: N GPUs to each task, in order */
	TMATCH_GPU_BIND_MAP,      /* --gpu-bind=map_gpu: */
	TMATCH_GPU_BIND_MASK,     /* --gpu-bind=mask_gpu: */
	TMATCH_GPU_BIND_SINGLE,   /* --gpu-bind=single:N, --ntasks-per-gpu */
	TMATCH_GPU_BIND_CLOSEST,  /* --gpu-bind=closest */
};

/*
 * Slurm's binding of the local tasks from its tres_bind string ("gpu:per_task:1",
 * "gpu:verbose,map_gpu:3,2", NULL or "" = none) as slurmstepd computes it:
 * *kind; for PER_TASK, MAP, MASK and SINGLE, task i's GPUs in
 * gpus[i * step->ngpus...] (positions in devices->gpu, count[i] of them;
 * map and mask values are node indices, or indices among the step's GPUs
 * when step->relative; an empty result is the step's first GPU, as Slurm
 * does). SINGLE is computed as without Cores= in gres.conf (every step GPU
 * near every task). gpus and count: arrays of nlocal * step->ngpus and
 * nlocal, or NULL to get the kind only. -1/EINVAL for a string Slurm would
 * refuse (a value outside the node's GPUs).
 */
int tmatch_place_gpu_slurm_bind(const char *tres_bind, const tmatch_place_gpu_step_t *step,
                                int nlocal, int *kind, int *gpus, int *count, tmatch_error_t *err);

/*
 * The decision: each local task's CPUs (a leaf of the node tree), GPUs and
 * network card together.
 *
 * Free (fixed NULL): the step's GPUs in units of gpus_per_task (0: as many
 * as the step has for each task, at least one) chosen close together; each
 * unit takes tasks_per_gpu tasks (0: as many as needed for all) on CPU slots
 * inside its GPUs' locality; the ranks are mapped (the tree: package, GPU
 * island, NUMA node, device, unit, slot) so that those that exchange most
 * share a GPU, an island, a package; each unit's card is the closest to its
 * first GPU, cards of equal closeness taken in turn.
 * Follow (fixed: Slurm's GPUs of each task, as tmatch_place_gpu_slurm_bind
 * gives them): the GPUs are kept, the CPUs follow them (inside each GPU's
 * locality, tasks in the order of `hint`, leaves of an earlier free
 * decision, else local order), and the cards.
 * CPUs come from the leaves of `tree` that are real; where a locality has
 * too few, the nearest (same package, then any), counted in *outside.
 */
typedef struct tmatch_place_gpu_in {
	const tmatch_affinity_tree_t *tree;
	const tmatch_affinity_devices_t *dev;
	const tmatch_place_gpu_step_t *step;
	const tmatch_comm_t *comm; /* nlocal x nlocal, local order (free decision only) */
	int nlocal;
	int gpus_per_task, tasks_per_gpu;
	const int *fixed, *fixed_count; /* follow: as tmatch_place_gpu_slurm_bind (a row of
	                                   step->ngpus per task) */
	const int *hint;                /* follow: [nlocal] leaves, NULL */
	const char *mapper;             /* NULL = TMATCH_DEFAULT_MAPPER */
	uint64_t seed;
	double time_budget;
} tmatch_place_gpu_in_t;

typedef struct tmatch_place_gpu_out {
	int nlocal;
	int *leaf;   /* [nlocal] */
	int stride;  /* GPUs a row of gpu holds */
	int *ngpus;  /* [nlocal] */
	int *gpu;    /* [nlocal * stride]: task i's in gpu[i * stride..], positions in
	                dev->gpu */
	int *nic;    /* [nlocal] position in dev->nic, -1 when the node has none */
	int outside; /* tasks whose CPUs are not all inside their first GPU's locality */
} tmatch_place_gpu_out_t;

int tmatch_place_gpu_decide(const tmatch_place_gpu_in_t *in, tmatch_place_gpu_out_t *out,
                            tmatch_error_t *err);
void tmatch_place_gpu_out_free(tmatch_place_gpu_out_t *out);

/*
 * In order, as Slurm gives them without a profile: task i the step's GPUs
 * i*k.. (k = gpus_per_task as in the decision; with more tasks than units,
 * a block of tasks per unit), the i-th real leaf, the closest card. What
 * `treematch eval` and the tests compare the decision with.
 */
int tmatch_place_gpu_in_order(const tmatch_place_gpu_in_t *in, tmatch_place_gpu_out_t *out,
                              tmatch_error_t *err);

/* The kinds of link between the GPUs of two tasks. */
enum {
	TMATCH_GPU_LINK_SAME = 0, /* one GPU */
	TMATCH_GPU_LINK_DEVICE,   /* partitions of one device (MI300A CPX) */
	TMATCH_GPU_LINK_DIRECT,   /* a direct NVLink/xGMI link */
	TMATCH_GPU_LINK_SWITCH,   /* one island, through NVSwitches or an xGMI hive */
	TMATCH_GPU_LINK_PACKAGE,  /* no link, one package (PCIe, host memory) */
	TMATCH_GPU_LINK_ACROSS,   /* no link, other packages */
	TMATCH_GPU_LINK_KINDS
};
extern const char *const tmatch_place_gpu_link_names[TMATCH_GPU_LINK_KINDS];

/* What a placement of GPUs gives: the traffic between tasks by the kind of
   link between their (first) GPUs, the traffic whose GPUs are on two
   packages (whatever the link), and the targets' counts. */
typedef struct tmatch_place_gpu_eval {
	double traffic[TMATCH_GPU_LINK_KINDS];
	double across_packages;
	double total;
	int outside;    /* tasks whose CPUs leave their first GPU's locality */
	int cpu_shared; /* tasks sharing a CPU with another task */
	int gpu_shared; /* GPUs given to more than one task */
	int nic_astray; /* tasks whose card is on another package while their
	                   GPU's package has one */
} tmatch_place_gpu_eval_t;

int tmatch_place_gpu_evaluate(const tmatch_place_gpu_in_t *in, const tmatch_place_gpu_out_t *out,
                              tmatch_place_gpu_eval_t *ev, tmatch_error_t *err);

/*
 * The bindings format (`treematch map --format bindings`, read by eval and
 * draw), one line per rank: "RANK cpus=CPULIST gpus=LIST nic=NAME", CPULIST
 * in the OS numbering of /proc's Cpus_allowed_list, LIST the GPUs' indices
 * (hwloc's nvmlN, rsmiN...), "-" where there is none, then the variables
 * the plugin would give the task for its card (tmatch_place_nic_vars), as
 * "NAME=VALUE" ("nic=cxi1 FI_CXI_DEVICE_NAME=cxi1"); '#' comments.
 * line: one such line (newline included) in a new string, NULL/ENOMEM.
 * read: every rank 0..n-1 once, CPUs that are one slot of `tree` (out->leaf),
 * GPUs and card of `dev` (the card's variables, which follow from the card,
 * skipped); -1 with err naming the file, line and column.
 */
char *tmatch_place_bindings_line(int rank, hwloc_const_bitmap_t cpus, const int *gpu_index,
                                 int ngpus, const tmatch_affinity_nic_t *nic);
int tmatch_place_bindings_read(const char *path, const tmatch_affinity_tree_t *tree,
                               const tmatch_affinity_devices_t *dev, int n,
                               tmatch_place_gpu_out_t *out, tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* A node's placement                                                        */

/* The step on this node, as the front end read it. */
typedef struct tmatch_place_node_in {
	const tmatch_config_t *cfg; /* the policy: mapper, metric, coll, seed, max_map_time,
	                               max_map_memory, exclusive_only, topology_xml, dry_run */
	/* The communication: a profile (cfg's metric and coll choose its matrix), or
	   a matrix when profile is NULL. Ranks are global. */
	const tmatch_profile_t *profile;
	const tmatch_comm_t *comm;
	/* Or this node's slice of a compiled step plan (plan.c): its leaves are
	   used when the node tree has the plan's shape, else its traffic is
	   mapped here; the profile is not read. */
	const struct tmatch_place_slice *slice;
	int user_profile; /* 0: the admin's default profile, which applies only to steps
	                     of its own size (others are skipped) */
	/* The step's items on this node. */
	const char *node_name;  /* "n1"; NULL = tmatch_place_node_name(nodelist, node_index) */
	int node_index;         /* S_JOB_NODEID */
	int node_count;         /* S_JOB_NNODES */
	const char *nodelist;   /* the step's nodes (SLURM_STEP_NODELIST); NULL = unknown */
	const char *step_cores; /* S_STEP_ALLOC_CORES, Slurm abstract cores; NULL = all */
	const char *job_cores;  /* S_JOB_ALLOC_CORES, for exclusive_only; NULL = unknown */
	int cpus_per_task;      /* 0/1 = one */
	const int *ranks;       /* [nlocal]: the global rank of each local task */
	int nlocal;
	int ntasks_total; /* S_JOB_TOTAL_TASK_COUNT */
	/* The hardware. topology: NULL = cfg->topology_xml when set (binding allowed
	   unless dry_run), else this machine; or "xml:FILE" / "synthetic:STRING"
	   (tests, dry runs; never bound). */
	const char *topology;
	/* The node's hwloc XML, already read, NUL at [topology_xml_len]:
	   cfg->topology_xml's bytes (slurmstepd reads the admin's files at init,
	   while it is root), or, without topology_xml, the machine as the root
	   side loaded it (tmatch_affinity_tree_xml), for the plugin's helper;
	   NULL = read cfg->topology_xml, or this machine. */
	const char *topology_xml_text;
	size_t topology_xml_len;
	/* The switches, for the position only (placement stays on the node): a
	   cluster tree the caller built, else topology_conf (a topology.yaml or
	   topology.conf path, the topology topology_sel picks, NULL = one flat
	   switch; a file that does not parse counts as NULL) over nodelist,
	   when node_count > 1. */
	const tmatch_affinity_tree_t *cluster;
	const char *topology_conf;
	const tmatch_affinity_topo_sel_t *topology_sel;
	/* Map in a forked child limited to cfg->max_map_time and max_map_memory
	   (the caller must outlive whatever the mapping does); 0 = in process,
	   as in the plugin's helper, which is already such a child. */
	int isolate;
	tmatch_log_fn log; /* the node tree's warnings; NULL = silence */
	void *log_arg;
	/* A GPU step (NULL: none): what Slurm says of its GPUs here. The node
	   tree is then loaded with its devices (prepare), and each task gets
	   its CPUs, GPUs and card together (tmatch_place_gpu_decide, in
	   process even with isolate); without SLURM_STEP_GPUS, as without. */
	const tmatch_place_gpu_env_t *gpu_env;
} tmatch_place_node_in_t;

/* One local task's placement. */
typedef struct tmatch_place_task {
	int rank;                  /* global rank */
	int leaf;                  /* leaf of the node tree */
	hwloc_bitmap_t cpuset;     /* its CPUs (pu_os), owned by the result */
	tmatch_affinity_pos_t pos; /* switch levels, node, then the node's levels */
	/* A GPU step: its GPUs (positions in the node's devices, ngpus of them,
	   owned by the result) and card (-1: none); gpu_mode says whose they are */
	int ngpus;
	int *gpu;
	int nic;
	int gpu_mode; /* enum tmatch_place_gpu_mode */
} tmatch_place_task_t;

/* Whose GPUs a task has (tmatch_place_gpu_task). */
enum tmatch_place_gpu_mode {
	TMATCH_GPU_MODE_OURS = 0, /* the decision's: its variables set to them */
	TMATCH_GPU_MODE_FOLLOW,   /* Slurm's binding kept, the CPUs and card follow */
	TMATCH_GPU_MODE_KEEP,     /* Slurm's binding of CPUs and GPUs both kept */
};

enum tmatch_place_status {
	TMATCH_PLACE_PLACED = 0,  /* task[] holds the placement */
	TMATCH_PLACE_SKIPPED = 1, /* the policy leaves this step to Slurm: see why */
};

/* A node's placement: plain data (no pointer into a tree or a profile). */
typedef struct tmatch_place_node {
	int status;     /* enum tmatch_place_status */
	int why_level;  /* SKIPPED: TMATCH_LOG_DEBUG (admin text) or TMATCH_LOG_INFO (user text) */
	char why[512];  /* SKIPPED: one line saying why, without the "treematch: " prefix */
	char note[512]; /* PLACED, verbose, first node: the predicted gain, or "" */
	int record;     /* SKIPPED in learn mode with nothing stored yet: record this run */
	int ntasks;     /* PLACED: tasks on this node */
	tmatch_place_task_t *task; /* [ntasks], by local id */
	char node_name[64];
	int node_index, node_count;
	int cpus_per_task;
	int smt;                /* enum tmatch_affinity_smt the node tree uses */
	hwloc_bitmap_t allowed; /* the step's CPUs on this node (PLACED) */
	char mapper[64];
	double cost;             /* the mapping's cost on the node tree (tmatch_eval) */
	double cost_packed;      /* the same for tasks packed in leaf order (Slurm's block) */
	double map_seconds;      /* wall time of the mapping */
	double node_cpu_seconds; /* CPU time of the whole node's work; set by the front end */
	double node_seconds;     /* wall time of the whole node's work (profile, tree, mapping);
	                            set by the front end, 0 = unknown */
	/* PLACED by the default mapper: the search it was given (search_time,
	   tmatch_place_search_time) and the policy's search_time when that was
	   cut to half of max_map_time (else 0) */
	double search_time, search_cut_from;
	/* A GPU step (PLACED): its GPUs here (NULL: not a GPU step), the GPUs
	   each task got from the decision, the vendor of its GPUs (enum
	   tmatch_affinity_gpu_vendor), and the node's devices when known (the
	   front end's, to name GPUs and cards; not owned) */
	tmatch_place_gpu_step_t *gpu_step;
	int gpus_per_task;
	int gpu_vendor;
	const tmatch_affinity_devices_t *devices;
} tmatch_place_node_t;

/*
 * The job's environment gives the node list (22.05's spank.h has no item for
 * it), so it is checked before anything is expanded: the list, when it
 * names exactly node_count hosts (S_JOB_NNODES; counted without expanding,
 * tmatch_affinity_hostlist_count), else NULL: a forged n[0-999999] in a
 * 2-node step costs one pass over its text, not a million names.
 */
const char *tmatch_place_checked_nodelist(const char *nodelist, int node_count);

/* The name of node `node_index` of a checked node list, in a new string;
   "localhost" when the list is unknown, malformed or does not name exactly
   node_count hosts. NULL/ENOMEM. */
char *tmatch_place_node_name(const char *nodelist, int node_index, int node_count);
/* The same, and from the one expansion *nodes_hash = tmatch_place_nodes_hash
   of the list's names (0 when the list is not checked). */
char *tmatch_place_node_name_hash(const char *nodelist, int node_index, int node_count,
                                  uint64_t *nodes_hash);

/*
 * Place this node's tasks, with every decision in order: an admin default
 * profile of another size than the step, or exclusive_only on a job without
 * the whole node, gives status SKIPPED (why says it); otherwise the node
 * tree of the step's CPUs (tmatch_place_node_tree: SMT policy, cpus per
 * task), the cluster tree for the positions, then tmatch_place_node_map.
 * On success *out (free with tmatch_place_node_destroy) and, when node_tree
 * is not NULL and the step was placed, *node_tree, the tree to bind through
 * (tmatch_affinity_bind_cpuset; destroy it with tmatch_affinity_tree_destroy).
 * Failures (-1) leave one line in err->msg, ready for the log:
 * "node n0: 4 tasks for 2 CPUs: ..." (EOVERFLOW), "n0: cannot build the node
 * topology: ...", "n0: <what the mapping said>" (EINVAL, ETIME, ENOMEM,
 * EIO...).
 */
int tmatch_place_node(const tmatch_place_node_in_t *in, tmatch_place_node_t **out,
                      tmatch_affinity_tree_t **node_tree, tmatch_error_t *err);

/*
 * tmatch_place_node in two halves, for the plugin, whose root side may only
 * touch what Slurm and the admin give it:
 * - prepare: from in->cfg's admin keys (topology_xml, exclusive_only),
 *   in->topology, step_cores, job_cores, cpus_per_task and nlocal only: the
 *   node tree (SMT policy, CPUs per task) or why not, and whether the job
 *   has the whole node. Reads no profile, no node list, no user option.
 *   -1 when there is no tree (prep->tree_error says why, without the node's
 *   name); the decision is still decide's.
 * - decide: everything else, in tmatch_place_node's order (default profile
 *   of another size, exclusive_only, no tree, the mapping).
 */
typedef struct tmatch_place_node_prep {
	tmatch_affinity_tree_t *tree; /* NULL: tree_errno and tree_error say why */
	int smt;                      /* enum tmatch_affinity_smt of the tree */
	int whole;                    /* 0: exclusive_only and the job lacks the whole node */
	int tree_errno;
	char tree_error[600];
} tmatch_place_node_prep_t;
int tmatch_place_node_prepare(const tmatch_place_node_in_t *in, tmatch_place_node_prep_t *prep);
int tmatch_place_node_decide(const tmatch_place_node_in_t *in, const tmatch_place_node_prep_t *prep,
                             tmatch_place_node_t **out, tmatch_error_t *err);
void tmatch_place_node_prep_clear(tmatch_place_node_prep_t *prep);

/*
 * The mapping part of tmatch_place_node on a node tree the caller built
 * (`node`: the step's CPUs on this node, cpus_per_task CPUs per leaf). The
 * matrix of the node's ranks (tmatch_place_comm of the profile, restricted
 * by tmatch_comm_submatrix to in->ranks: traffic with other nodes' ranks is
 * dropped, a plugin cannot move tasks between nodes) is mapped onto the
 * tree with cfg's mapper and seed, in a limited child when in->isolate;
 * the cost is compared with the packed placement; every task gets its CPU
 * set and position. Fails (-1, one line in err) when the node has fewer
 * slots than tasks (EOVERFLOW), the profile's rank count differs from the
 * step's (EINVAL), the mapping fails or exceeds its limits (ETIME, ENOMEM,
 * EIO). The skip decisions are not made here.
 */
int tmatch_place_node_map(const tmatch_place_node_in_t *in, const tmatch_affinity_tree_t *node,
                          tmatch_place_node_t **out, tmatch_error_t *err);

void tmatch_place_node_destroy(tmatch_place_node_t *node);

/* The default mapper's extra search on a node: cfg->search_time, at most
   half of cfg->max_map_time (the search is counted in steps: a slow node
   must still finish within the limit). *capped (may be NULL): 1 when the
   policy's search_time was cut to that half, which the node's summary says
   (tmatch_place_summary_line, verbose), else 0. */
double tmatch_place_search_time(const tmatch_config_t *cfg, int *capped);

/*
 * Task `local` of a placed GPU step (node->gpu_step, node->devices), in its
 * own task_init, where Slurm's per-task binding shows: tres_bind is the
 * task's SLURMD_TRES_BIND, own_gpus its SLURM_STEP_GPUS. Which GPUs the
 * task has (task->gpu_mode):
 *   no binding, or --gpu-bind=closest, or --gpus-per-task with the
 *   decision's count and devices not confined: the decision's (OURS);
 *   --gpu-bind=map_gpu, mask_gpu, single, or --gpus-per-task with
 *   ConstrainDevices: Slurm's, and the task's CPUs, GPUs and card become
 *   those the decision gives when it follows Slurm's binding of every task
 *   of the node (the same computation in each task, so they agree)
 *   (FOLLOW); single is computed as without Cores= in gres.conf, and a
 *   task that sees another GPU (Cores= chose by its CPUs), or closest with
 *   ConstrainDevices: Slurm's CPUs and GPUs both kept (KEEP, why says it).
 *   slurm_version (SLURM_VERSION_NUMBER of the Slurm the plugin runs in)
 *   says how Slurm computes single (by the task's CPUs from 23.02) and
 *   per_task (from 23.11): where ConstrainDevices hides which GPUs those
 *   gave, Slurm's CPUs and GPUs are kept (KEEP).
 * 0, or -1 with errno (EINVAL: not a placed GPU step; ENOMEM).
 */
#define TMATCH_SLURM_23_02 0x170200u /* SLURM_VERSION_NUMBER of 23.02.0 */
#define TMATCH_SLURM_23_11 0x170b00u
int tmatch_place_gpu_task(tmatch_place_node_t *node, const tmatch_affinity_tree_t *tree, int local,
                          const char *tres_bind, const char *own_gpus, unsigned slurm_version,
                          char *why, size_t len);

/* ------------------------------------------------------------------------ */
/* The plugin's privilege separation (helper.c, helper_job.c, sandbox.c)     */

/*
 * Load the profile cfg->profile (a regular file, opened without blocking,
 * within cfg's size and rank limits) as whoever calls. NULL with one line
 * in msg ("cannot read profile P: ...", "bad profile: F:L:C: ...") and errno.
 * _err: the same with the parts apart: *opened 0 when the file could not
 * be opened (err: errno), 1 when it did not load (err: file, line, column).
 */
tmatch_profile_t *tmatch_place_load_profile(const tmatch_config_t *cfg, tmatch_log_fn log,
                                            void *log_arg, char *msg, size_t len);
tmatch_profile_t *tmatch_place_load_profile_err(const tmatch_config_t *cfg, tmatch_log_fn log,
                                                void *log_arg, int *opened, tmatch_error_t *err);

/*
 * The MPI program of a command line: the first word of argv that names an
 * executable (a path, or found in path_env) linking an MPI library, its path
 * in exe; 0, or -1 with err. Reading ELF files is the profiler's
 * (profiler/mpiabi.c, tmatch_mpiabi_program), which placement does not
 * include: the front end that starts the decision hands it over.
 */
typedef int (*tmatch_place_mpi_program_fn)(char *const argv[], const char *path_env, char *exe,
                                           size_t len, tmatch_error_t *err);

/*
 * The helper program, opened by the root side at init (slurmstepd is root
 * there) and started from this descriptor for each step: path must name a
 * regular, executable file owned by root (or by the caller, when the caller
 * is not root: tests, a developer's build) that neither group nor others may
 * write, in directories that are the same or sticky. The descriptor
 * (O_CLOEXEC), or -1 with err saying which condition fails.
 */
int tmatch_place_helper_open(const char *path, tmatch_error_t *err);

/* The helper program's main (spank/helper_main.c, a front end of its own,
   so declared here): its input from fd 4, its confinement, then
   tmatch__helper_job. Never returns. */
__attribute__((noreturn)) void tmatch__helper_main(void);

/*
 * What slurmstepd's root side hands the helper: only what Slurm and the
 * admin gave it, read but not parsed. Everything the user wrote (the
 * --treematch value, the node list of the job's environment, the profile)
 * is parsed in the helper.
 */
typedef struct tmatch_place_helper_in {
	int helper_fd;                /* tmatch_place_helper_open's descriptor */
	const tmatch_config_t *admin; /* plugstack.conf + admin file, read as root */
	const char *user_value;       /* the --treematch value as received; NULL = none */
	const char *nodelist;         /* SLURM_STEP_NODELIST of the job's environment, NULL */
	const char *topology_conf;    /* topology.yaml's or topology.conf's text (read as
	                                 root), NULL = none */
	const char *topology_file;    /* its path: names it, tells the two apart */
	const char *slurm_conf;       /* slurm.conf's text (read as root), NULL = none */
	const char *partition;        /* SLURM_JOB_PARTITION of the job's environment, NULL */
	int node_index, node_count;   /* S_JOB_NODEID, S_JOB_NNODES */
	int nlocal, ntasks_total;     /* S_JOB_LOCAL_TASK_COUNT, S_JOB_TOTAL_TASK_COUNT */
	int cpus_per_task;            /* S_STEP_CPUS_PER_TASK */
	const int *ranks;             /* [nlocal] S_JOB_LOCAL_TO_GLOBAL_ID */
	const char *step_cores;       /* S_STEP_ALLOC_CORES: the helper makes its own tree */
	const char *job_cores;        /* S_JOB_ALLOC_CORES */
	uint64_t job_id;              /* S_JOB_ID, what a step plan must be for */
	uint32_t step_id;             /* S_JOB_STEPID */
	const char *plan_env;         /* TREEMATCH_PLAN of the job's environment, NULL: the
	                                 plan when the user's value names none */
	const char *learn_env;        /* TREEMATCH_LEARN of the job's environment (srun's
	                                 learn decision, tmatch_place_learn_follow), NULL */
	const tmatch_place_node_prep_t *prep; /* the node tree, built from the items */
	/* A GPU step: Slurm's variables of the job's environment and the admin's
	   cgroup.conf, copied, not parsed (NULL: none) */
	const tmatch_place_gpu_env_t *gpu_env;
	uid_t uid;           /* S_JOB_UID: the helper becomes it for good */
	gid_t gid;           /* S_JOB_GID */
	const gid_t *groups; /* the user's supplementary groups */
	int ngroups;
} tmatch_place_helper_in_t;

typedef struct tmatch_place_helper_out {
	/* The policy tasks follow: the admin's, with what the user tightened
	   (failure=fail, dry_run) and chose (verbose, mpi_pin). enabled = 0:
	   the user said off. */
	tmatch_config_t cfg;
	int user_profile;
	char node_name[64];        /* this node's name (checked characters) */
	tmatch_place_node_t *plan; /* PLACED or SKIPPED; NULL when off or failed */
	pid_t pending;             /* > 0: a helper killed but not ended (uninterruptible sleep):
	                              reap it later, without waiting (tmatch_place_helper_reap) */
	/* a GPU step placed: the node's devices, from the root side's own tree,
	   that plan's GPUs and cards refer to (destroy it after the plan) */
	tmatch_affinity_devices_t *devices;
} tmatch_place_helper_out_t;

/* Reaps a pending helper if it has ended; never waits. */
void tmatch_place_helper_reap(pid_t pid);

/*
 * Learn mode (learn.c). learn_key: the store key of a step: its MPI program
 * (mpi_program's answer, relative names of argv taken against cwd; its
 * path in exe), ntasks and cfg->learn_name. 0; 1 when the step runs no MPI
 * program (nothing is learned, why in err); -1.
 */
int tmatch_place_learn_key(const tmatch_config_t *cfg, tmatch_place_mpi_program_fn mpi_program,
                           char *const argv[], const char *path_env, const char *cwd, int ntasks,
                           tmatch_profile_store_key_t *key, char *exe, size_t len,
                           tmatch_error_t *err);

/*
 * The one learn decision of a step: srun makes it (learn_decide), every node
 * follows it (learn_follow, and the tasks record when it says so). It
 * travels with the step in the job's environment, TMATCH_PLACE_LEARN_ENV.
 */
#define TMATCH_PLACE_LEARN_ENV "TREEMATCH_LEARN"
typedef enum {
	TMATCH_PLACE_LEARN_NONE = 0,   /* not learned: Slurm's binding, nothing recorded */
	TMATCH_PLACE_LEARN_RECORD = 1, /* nothing stored: every task of the step records */
	TMATCH_PLACE_LEARN_PLACE = 2,  /* placed from the entry stem, the version checksum */
} tmatch_place_learn_what_t;

typedef struct tmatch_place_learn {
	tmatch_place_learn_what_t what;
	uint64_t job_id;
	uint32_t step_id;
	char stem[17];        /* the store entry (RECORD: the one the recording is stored as) */
	uint64_t checksum;    /* PLACE: the version srun found (its .meta's checksum) */
	char store[PATH_MAX]; /* the store's directory (RECORD, PLACE) */
	/* srun only, not on the wire: the key and the MPI program */
	tmatch_profile_store_key_t key;
	char exe[PATH_MAX];
} tmatch_place_learn_t;

typedef struct tmatch_place_learn_in {
	const tmatch_config_t *cfg; /* srun's: learn mode, learn_name, store (the site's) */
	tmatch_place_mpi_program_fn mpi_program; /* the front end's (tmatch_mpiabi_program) */
	char *const *argv;                       /* the step's command line (S_JOB_ARGV) */
	const char *path_env;                    /* PATH */
	const char *job_cwd;    /* the step's working directory (tmatch_place_job_cwd) */
	const char *xdg, *home; /* XDG_CACHE_HOME, HOME (NULL: the environment's) */
	int ntasks;
	uint64_t job_id;
	uint32_t step_id;
} tmatch_place_learn_in_t;

/*
 * srun, before the step: key the step, open the store (the site's, or the
 * user's own when the site's directory for them cannot be used: said once;
 * a site directory not made yet is recorded into, root makes it on the
 * nodes), look the entry up (a damaged one is discarded, said): PLACE with
 * its stem and checksum, else RECORD; NONE when the step runs no MPI
 * program (said at TMATCH_LOG_INFO) or the store cannot be used (said at
 * TMATCH_LOG_WARNING). What a user is told goes to log: WARNING always,
 * INFO in verbose mode. -1 only on bad arguments.
 */
int tmatch_place_learn_decide(const tmatch_place_learn_in_t *in, tmatch_place_learn_t *d,
                              tmatch_log_fn log, void *log_arg);
/* "1 JOB STEP none", "1 JOB STEP record STEM STORE", "1 JOB STEP place STEM
   SUM STORE" (SUM 16 hex digits, STORE the rest of the line). parse: 0 and
   *d when text is a decision for job_id.step_id; -1 with err (ENOENT: none,
   or another step's, EINVAL: malformed). */
int tmatch_place_learn_format(const tmatch_place_learn_t *d, char *buf, size_t len);
int tmatch_place_learn_parse(const char *text, uint64_t job_id, uint32_t step_id,
                             tmatch_place_learn_t *d, tmatch_error_t *err);

/*
 * A node (the helper, as the user): follow srun's decision (decision: the
 * job's TMATCH_PLACE_LEARN_ENV). PLACE_STEP: the entry srun chose checks
 * (read only, by its checksum): cfg->profile is its path. RECORD_STEP: the
 * step records (every node, whatever its own view of the store). The
 * others keep Slurm's binding and record nothing: NOT_LEARNED, srun
 * decided so (and said why); NO_DECISION, none for this step (*err_no
 * ENOENT) or a malformed one (EINVAL); GONE, the entry stem is gone
 * (ENOENT), replaced (ESTALE) or damaged (EPROTO) here, or the store cannot
 * be read (*err_no). Codes, not text: the helper sends them as they are.
 */
typedef enum {
	TMATCH_PLACE_LEARN_PLACE_STEP = 0,
	TMATCH_PLACE_LEARN_RECORD_STEP = 1,
	TMATCH_PLACE_LEARN_NOT_LEARNED = 2,
	TMATCH_PLACE_LEARN_NO_DECISION = 3,
	TMATCH_PLACE_LEARN_GONE = 4,
} tmatch_place_learn_step_t;
tmatch_place_learn_step_t tmatch_place_learn_follow(tmatch_config_t *cfg, const char *decision,
                                                    uint64_t job_id, uint32_t step_id,
                                                    char stem[17], int *err_no);

/* Is a placement from a learned profile worth it: 1 when it is not learned
   or gains at least cfg->min_gain percent over the packed placement; 0
   when it does not. *gain (NULL: not wanted): the gain in percent, 0 when
   not learned or below 0. */
int tmatch_place_learn_gain_ok(const tmatch_config_t *cfg, const tmatch_place_node_t *plan,
                               double *gain);

/* RECORD: where the tasks record (the store's .rec-JOB.STEP.yml). collect
   (srun, when the step ends): store what the step recorded under d->key and
   remove the recording, said through log. site_prepare (the root side, as
   root): the user's directory in the admin's site store, made at their
   first step when the site directory is root's. */
int tmatch_place_learn_recording(const tmatch_place_learn_t *d, char *path, size_t len);
int tmatch_place_learn_collect(const tmatch_place_learn_t *d, tmatch_log_fn log, void *log_arg);
int tmatch_place_learn_site_prepare(const tmatch_config_t *cfg, uid_t uid, gid_t gid,
                                    tmatch_error_t *err);

/*
 * The stored profile a learning step is placed from (read only: no last
 * use, nothing removed): its MPI program in argv (found by mpi_program, as
 * for tmatch_place_learn_key) keys the entry of the store srun's decision
 * reads (the site's store= or the user's; xdg, home: the job's, NULL: the
 * caller's). 1 and its path in `path` (the program in exe); 0 when nothing
 * is stored yet (the step will be recorded); -1 with err when the step
 * cannot learn (no MPI program) or the store fails.
 */
int tmatch_place_learn_find(const tmatch_config_t *cfg, tmatch_place_mpi_program_fn mpi_program,
                            char *const argv[], const char *path_env, const char *cwd, int ntasks,
                            const char *xdg, const char *home, char *path, size_t len, char *exe,
                            size_t exelen, tmatch_error_t *err);

/*
 * predict.c: what `treematch predict` hands SimGrid's trace replay.
 *
 * A machine description: per level of the tree (1 .. depth, 0 is the root)
 * the bandwidth and latency of the link from each node of that level to its
 * parent, and the speed of a core, as SimGrid quantities ("12.5GBps",
 * "1us", "1Gf"). machine_init: defaults by level name (switch 12.5GBps 2us,
 * node 12.5GBps 1us, package 40GBps 100ns, l3 80GBps 50ns, core 100GBps
 * 10ns, ...; speed 1Gf). machine_load: "LEVEL = BANDWIDTH LATENCY" and
 * "speed = FLOPS" lines ('#' comments), LEVEL a level name of the tree;
 * errors name the file and line.
 * platform_write: the SimGrid platform of the tree: host hL per leaf L,
 * routers per inner node, a split-duplex link per tree edge, routes along
 * the tree. hostfile_write: rank r on host h<leaf_of_rank[r]>.
 * trace_load: a time-independent trace (the index file of one file per
 * rank, as smpirun -trace-ti writes it), every rank's file checked (its
 * rank on every line, init first, finalize last, peers and sizes in range),
 * and the bytes each rank sends each other (send, isend, sendRecv) as the
 * matrix a mapper takes. Errors name the file and line.
 */
#define TMATCH_PLACE_MACHINE_LEVELS 16
typedef struct tmatch_place_machine {
	char bw[TMATCH_PLACE_MACHINE_LEVELS][32];
	char lat[TMATCH_PLACE_MACHINE_LEVELS][32];
	char speed[32];
} tmatch_place_machine_t;

typedef struct tmatch_place_trace {
	int nranks;
	char **files;        /* [nranks], each rank's file */
	tmatch_comm_t *comm; /* bytes sent between ranks */
} tmatch_place_trace_t;

void tmatch_place_machine_init(tmatch_place_machine_t *m, const tmatch_topo_t *topo);
int tmatch_place_machine_load(tmatch_place_machine_t *m, const tmatch_topo_t *topo,
                              const char *path, tmatch_error_t *err);
int tmatch_place_platform_write(FILE *out, const tmatch_topo_t *topo,
                                const tmatch_place_machine_t *m, tmatch_error_t *err);
int tmatch_place_hostfile_write(FILE *out, const int *leaf_of_rank, int n);
/* The trace's index again, every file an absolute path (SimGrid reads the
   names relative to its own directory). */
int tmatch_place_trace_index_write(FILE *out, const tmatch_place_trace_t *t);
tmatch_place_trace_t *tmatch_place_trace_load(const char *index, tmatch_error_t *err);
void tmatch_place_trace_destroy(tmatch_place_trace_t *t);

/*
 * A prediction kept for the plugin (`treematch predict --save FILE`; beside
 * a profile as PROFILE.predict, the plugin's verbose mode prints the
 * predicted gain at launch): "treematch-prediction 1", '#' comments (the
 * first says what was predicted: `about`), then "MAPPING SECONDS" per
 * placement (names with blanks or of more than NAME characters are left
 * out). prediction_read, on a regular file of at most MAX bytes: 0 with the
 * predicted seconds of `mapping` and of packed, 1 when the file lacks one
 * of them (that one -1), -1 with err naming the file and line.
 */
#define TMATCH_PLACE_PREDICTION_MAX  (64 * 1024)
#define TMATCH_PLACE_PREDICTION_NAME 255
int tmatch_place_prediction_write(FILE *out, const char *about, const char *const names[],
                                  const double seconds[], int n);
int tmatch_place_prediction_read(const char *path, const char *mapping, double *mapped,
                                 double *packed, tmatch_error_t *err);

/*
 * Run the helper program (in->helper_fd; placement/sandbox.c: a clean
 * memory image with no environment, the job's user for good, no other
 * descriptor, no new privileges, a seccomp allow-list, the admin's time
 * and memory limits, which the user may only lower), hand it in's fields
 * and check what it sends as it comes: versions and lengths, every rank
 * against in->ranks, every leaf in range, allowed and distinct on
 * prep->tree, positions; no more tasks than the tree has slots; CPU sets
 * come from prep->tree; messages are codes the root side formats. 0 with
 * *out (plan NULL when the user said off); -1 with one line in err ("n0:
 * bad profile ...", "n0: mapping exceeded max_map_time=2 s, killed") and
 * out->cfg the policy to follow (failure mode). Free out->plan with
 * tmatch_place_node_destroy.
 */
int tmatch_place_helper_run(const tmatch_place_helper_in_t *in, tmatch_place_helper_out_t *out,
                            tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* What a task gets                                                          */

typedef struct tmatch_place_env {
	char name[48];
	char *value;   /* any length; freed by tmatch_place_env_free; NULL: unset */
	int overwrite; /* 0: only when the user has not set it */
} tmatch_place_env_t;

/*
 * The environment of local task `local`: TREEMATCH_RANK, TREEMATCH_CPUS,
 * TREEMATCH_CPU_MASK, TREEMATCH_LEVELS, TREEMATCH_INDEX, TREEMATCH_COUNT,
 * TREEMATCH_POSITION, TREEMATCH_MAPPER, TREEMATCH_DRY_RUN (overwritten);
 * OMP_NUM_THREADS, OMP_PLACES, OMP_PROC_BIND when cpus_per_task > 1 (only if
 * unset); with mpi_pin (and not dry_run) the variables that keep Open MPI,
 * MPICH/Hydra, Intel MPI and MVAPICH from re-pinning (only if unset).
 * A GPU step: TREEMATCH_GPUS (the GPUs' indices) and TREEMATCH_NIC (the
 * card, "" for none); when the GPUs are the decision's (gpu_mode OURS) and
 * not dry_run, the vendor's variable, numbered as the task sees its GPUs
 * (CUDA_VISIBLE_DEVICES with CUDA_DEVICE_ORDER=PCI_BUS_ID, ROCR_VISIBLE_DEVICES
 * or ZE_AFFINITY_MASK; another vendor's, and GPU_DEVICE_ORDINAL, unset:
 * value NULL) and SLURM_STEP_GPUS; with Slurm's GPUs (FOLLOW) its
 * variables stay; not dry_run and cfg->nic_env: the card's variables of
 * tmatch_place_nic_vars (only if unset). Values are as long as they need to be. Returns the number
 * of entries in *env (free with tmatch_place_env_free), -1 with errno (EINVAL for a bad local id or
 * a skipped node, ENOMEM).
 */
int tmatch_place_task_env(const tmatch_place_node_t *node, const tmatch_config_t *cfg, int local,
                          tmatch_place_env_t **env);
void tmatch_place_env_free(tmatch_place_env_t *env, int n);

/*
 * The variables an MPI library or its transport reads to choose the card
 * `nic`, by kind of card, each only where the card is of the kind that
 * library takes that name for:
 *   InfiniBand/RoCE of NVIDIA (Mellanox), OpenFabrics mlx*: UCX_NET_DEVICES
 *     and OMPI_MCA_btl_openib_if_include, "mlx5_0:1" (UCX, Open MPI 4's openib);
 *   AWS EFA, OpenFabrics of PCI vendor 0x1d0f: FI_EFA_IFACE, the verbs
 *     device's name (libfabric's efa provider, 1.22 and later);
 *   HPE Slingshot whose CXI device hwloc shows (cxiN, hwloc 2.14 and later):
 *     FI_CXI_DEVICE_NAME (libfabric's cxi provider, Cray MPICH).
 * A Slingshot card known only by its interface (hsiN, hsnN) gets none: its
 * CXI device's number cannot be told from the interface's. Fills var[] and
 * returns how many (0 for none or a NULL nic).
 */
#define TMATCH_PLACE_NIC_VARS 2
typedef struct tmatch_place_nic_var {
	const char *name;
	char value[40];
} tmatch_place_nic_var_t;
int tmatch_place_nic_vars(const tmatch_affinity_nic_t *nic,
                          tmatch_place_nic_var_t var[TMATCH_PLACE_NIC_VARS]);

/*
 * One line per task in the style of --cpu-bind=verbose, in a new string:
 * "treematch: cpu-bind=MAP - n0, task  1  1 [4242]: cpus 1 mask 0x2 set"
 * ("... not set (dry-run)" in dry-run). NULL with errno.
 */
char *tmatch_place_verbose_line(const tmatch_place_node_t *node, int local, long pid, int dry_run);

/*
 * A GPU step's second line per task, in the style of --gpu-bind=verbose:
 * "treematch: gpu-bind=MAP - n0, task  1  1 [4242]: gpus 2 (nvml2) nic
 * mlx5_0 (UCX_NET_DEVICES=mlx5_0:1 OMPI_MCA_btl_openib_if_include=mlx5_0:1)
 * set" (the decision's GPUs; the card's variables, tmatch_place_nic_vars,
 * when nic_env), "... gpus 3 (nvml3) nic hsi0, Slurm's GPUs, cpus follow"
 * (FOLLOW), "... Slurm's binding kept: WHY" (KEEP; why may be NULL); "not
 * set (dry-run)". NULL with errno (EINVAL when the task has no GPU).
 */
char *tmatch_place_gpu_verbose_line(const tmatch_place_node_t *node, int local, long pid,
                                    int dry_run, int nic_env, const char *why);

/*
 * The node's summary, in a new string: "treematch: n0: 4 task(s) mapped by
 * treematch in 0.3 ms, cost 12 (packed 20, -40.0%)", and when the policy's
 * search_time was cut (tmatch_place_search_time) ", search_time=30 s cut to
 * 5 s (half of max_map_time)". NULL with errno.
 */
char *tmatch_place_summary_line(const tmatch_place_node_t *node, int dry_run);

/* ------------------------------------------------------------------------ */
/* Inputs of the front ends                                                  */

/*
 * A --topology SPEC as the mapping core's tree: "tleaf DEPTH A0 C0 ..." (or
 * starting with a digit), "synthetic:<hwloc string>", "xml:FILE", "local"
 * (this machine, within the caller's binding) or
 * "cluster:<topology file>,<nodelist>,<node spec>" (a topology.yaml, its
 * cluster default, or a topology.conf; empty or "none" = one flat switch;
 * the node list's commas inside brackets are its own). -1/NULL with err saying which forms exist.
 */
tmatch_topo_t *tmatch_place_topo_load(const char *spec, tmatch_error_t *err);

/*
 * The affinity tree (with CPU sets and node names) of a node spec
 * ("synthetic:", "xml:", "local") or a "cluster:" spec. `base` (NULL =
 * defaults) gives the SMT, cpus-per-task and restriction options;
 * conf_path/nodes (NULL = none) make a cluster tree of a node spec.
 */
tmatch_affinity_tree_t *tmatch_place_tree_load(const char *spec, const tmatch_affinity_opts_t *base,
                                               const char *conf_path, const char *nodes,
                                               tmatch_error_t *err);

/*
 * The network of the cluster a front end runs in, found as Slurm finds it:
 * the file (`override`, else topology.yaml, else topology.conf, beside
 * slurm_conf, NULL = /etc/slurm/slurm.conf; "none" = no file), slurm.conf's
 * text (its partitions' and nodes' Topology=), the job's `partition` (NULL:
 * the default one). 0 (net->path NULL when there is no file: one flat
 * switch), -1/ENOMEM. Clear it with tmatch_place_network_clear.
 */
typedef struct tmatch_place_network {
	char *path;
	char *slurm_conf;
	tmatch_affinity_topo_sel_t sel;
} tmatch_place_network_t;
int tmatch_place_network_find(const char *override, const char *slurm_conf, const char *partition,
                              tmatch_place_network_t *net);
void tmatch_place_network_clear(tmatch_place_network_t *net);

/*
 * Set `opts`' source and input from a node spec: "synthetic:<string>",
 * "xml:FILE" or "local" (this machine, use_current_binding). -1/EINVAL (opts
 * untouched) for anything else.
 */
int tmatch_place_node_spec(const char *spec, tmatch_affinity_opts_t *opts, tmatch_error_t *err);

/*
 * tmatch_affinity_node_load for a front end: an XML file (a user's, in the
 * CLI) is loaded by hwloc in a child process first (placement/sandbox.c,
 * 10 s, 1 GiB), which hands back hwloc's own export of it: hwloc 2.9's
 * XML reader crashes on some crafted files, and then only the child dies
 * ("XML reader process died with signal 11"). Other sources load here.
 */
tmatch_affinity_tree_t *tmatch_place_node_load(const tmatch_affinity_opts_t *opts,
                                               tmatch_error_t *err);

/*
 * The tree the plugin would build for `nlocal` tasks of cpus_per_task CPUs
 * (tmatch_place_node_tree: a core per task, hardware threads when needed)
 * on a node spec ("xml:FILE" read by a child as tmatch_place_node_load
 * does, "synthetic:...", "local"), with its I/O devices when io. *smt
 * (may be NULL) as tmatch_place_node_tree.
 */
tmatch_affinity_tree_t *tmatch_place_node_tree_load(const char *spec, int nlocal, int cpus_per_task,
                                                    int io, int *smt, tmatch_error_t *err);

/*
 * A profile file as the matrix to map: .mtx and .mat through the core's
 * readers, .yml/.yaml and compiled profiles through the profile loader and
 * tmatch_place_comm with the plugin's defaults (its placement_metric, the
 * collectives it says are placed by; warnings to `log`). EINVAL for another
 * extension.
 */
tmatch_comm_t *tmatch_place_comm_load(const char *path, tmatch_log_fn log, void *log_arg,
                                      tmatch_error_t *err);
/* The same, and in *metric the tmatch_profile_metric_t of the numbers (the
   profile's placement_metric), -1 for a matrix file (its own units). */
tmatch_comm_t *tmatch_place_comm_load_metric(const char *path, tmatch_log_fn log, void *log_arg,
                                             int *metric, tmatch_error_t *err);
/* The matrix of ranks[0..n) only, as tmatch_comm_submatrix of the whole
   would give; a compiled profile is read for those ranks' rows only. */
tmatch_comm_t *tmatch_place_comm_load_ranks(const char *path, const int *ranks, int n,
                                            tmatch_log_fn log, void *log_arg, tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Layouts: the node of every rank                                           */

/*
 * Slurm's tasks-per-node syntax into cap[0..nnodes-1]: "4" (every node),
 * "2(x3),1", "4,4,2". -1/EINVAL with the column in the message.
 */
int tmatch_place_tasks_per_node(const char *spec, int nnodes, int *cap, tmatch_error_t *err);

/*
 * The capacities Slurm gives a step when none are named: tasks_per_node
 * (SLURM_TASKS_PER_NODE) when it parses and holds ntasks, else
 * cpus_per_node (SLURM_JOB_CPUS_PER_NODE) divided by cpus_per_task
 * (SLURM_CPUS_PER_TASK, NULL or < 1 = 1). Any string may be NULL.
 */
int tmatch_place_caps_from_slurm(const char *tasks_per_node, const char *cpus_per_node,
                                 const char *cpus_per_task, int nnodes, int ntasks, int *cap,
                                 tmatch_error_t *err);

/* Slurm's block layout (fill node 0, then node 1...) and cyclic layout (one
   rank per node in turn, skipping full nodes): -1 if the ranks do not fit. */
int tmatch_place_layout_block(int ntasks, int nnodes, const int *cap, int *node_of_rank);
int tmatch_place_layout_cyclic(int ntasks, int nnodes, const int *cap, int *node_of_rank);

/* Traffic (sum over unordered pairs) on the same node, under the same leaf
   switch, and across switches. */
typedef struct tmatch_place_traffic {
	double node, sw, across, total;
} tmatch_place_traffic_t;

void tmatch_place_traffic(const tmatch_comm_t *comm, const int *node_of_rank,
                          const int *switch_of_node, tmatch_place_traffic_t *t);

/* The matrix with `ntasks` >= its order ranks: the extra ranks are silent. */
tmatch_comm_t *tmatch_place_comm_widen(const tmatch_comm_t *comm, int ntasks, tmatch_error_t *err);

typedef struct tmatch_place_layout_in {
	const tmatch_comm_t *comm; /* the profile's matrix */
	int ntasks;                /* ranks to place, >= comm's order (more are silent) */
	const char *nodelist;      /* the allocation's nodes (hostlist) */
	const int *cap;            /* [nodes of nodelist] task slots of each; 0 = the node
	                              takes no part */
	const char *topology_conf; /* topology.yaml or topology.conf path, NULL = one flat
	                              switch */
	const tmatch_affinity_topo_sel_t *topology_sel; /* its topology, NULL = the default */
	const char *node_topology; /* "synthetic:..." or "xml:FILE"; NULL = one level of
	                              slots */
	const char *mapper;        /* NULL = TMATCH_DEFAULT_MAPPER */
	uint64_t seed;
	int plan;          /* 1: also what a step plan needs (leaf_in_node, prefix, node_sig) */
	tmatch_log_fn log; /* the mapping's warnings and progress (NULL: none) */
	void *log_arg;
} tmatch_place_layout_in_t;

typedef struct tmatch_place_layout {
	int ntasks;
	int nnodes;          /* nodes with a capacity (the others take no part) */
	char **node_name;    /* [nnodes] */
	int *cap;            /* [nnodes] */
	int nslots;          /* sum of cap */
	int nodes_used;      /* nodes given at least one rank */
	int *node_of_rank;   /* [ntasks], index in node_name */
	int *switch_of_node; /* [nnodes], leaf switch (0 when there is none) */
	/* traffic per level of this layout and of Slurm's block and cyclic */
	tmatch_place_traffic_t traffic, block, cyclic;
	/* with in->plan: each rank's leaf in the node model, each node's switch
	   levels and node level, and the node model's tmatch_place_node_sig */
	int *leaf_in_node;             /* [ntasks] */
	tmatch_affinity_pos_t *prefix; /* [nnodes] */
	uint64_t node_sig;
} tmatch_place_layout_t;

/*
 * The node of every rank: the ranks onto the allocation's tree of switches
 * (topology.conf) over nodes over task slots, each node offering cap[i]
 * slots, with the mapper; the traffic per level against block and cyclic.
 * -1/EINVAL when no node may take a task or the ranks do not fit (err says
 * which), else the errors of the trees and of the mapping.
 */
int tmatch_place_layout(const tmatch_place_layout_in_t *in, tmatch_place_layout_t **out,
                        tmatch_error_t *err);
void tmatch_place_layout_destroy(tmatch_place_layout_t *layout);

/* ------------------------------------------------------------------------ */
/* A placement for a launcher started by hand (launcher.c)                   */

enum {
	TMATCH_LAUNCHER_OPENMPI = 0, /* rankfile, Open MPI 4 and 5 */
	TMATCH_LAUNCHER_MPICH = 1,   /* Hydra: -bind-to user:... */
	TMATCH_LAUNCHER_IMPI = 2,    /* I_MPI_PIN_PROCESSOR_LIST / I_MPI_PIN_DOMAIN */
	TMATCH_LAUNCHER_SRUN = 3,    /* --cpu-bind=map_cpu / mask_cpu */
};

/* "openmpi", "mpich", "impi", "srun" -> *launcher; -1/EINVAL otherwise. */
int tmatch_place_launcher_parse(const char *name, int *launcher);

/*
 * The placement leaf_of[i] (leaves of `tree`) of the n ranks rank_ids[i]
 * (NULL: 0..n-1) written for `launcher`, in a new string the caller frees:
 * the rankfile, or the one option or variable (ending in a newline).
 * host_names: write the nodes' names in the rankfile, else "+n<index>".
 * *hwthreads (may be NULL) is set to 1 when the rankfile counts hardware
 * threads (mpirun then needs --use-hwthread-cpus, or :hwtcpus in Open MPI
 * 5's --map-by rankfile). NULL with err: EINVAL when the launcher cannot
 * express the placement (the reason, and what can), ENOMEM.
 */
char *tmatch_place_launcher_text(const tmatch_affinity_tree_t *tree, const int *leaf_of,
                                 const int *rank_ids, int n, int launcher, int host_names,
                                 int *hwthreads, tmatch_error_t *err);

/*
 * The GPUs of the n local ranks (rank i's indices in gpu_index[i * stride..],
 * ngpus[i] of them) for `launcher`, in a new string ending in a newline:
 * srun's "--gpu-bind=map_gpu:A,B" (one GPU each) or "mask_gpu:0x3,0xc".
 * The other launchers have no per-rank GPU option: NULL/EINVAL saying so.
 */
char *tmatch_place_launcher_gpus(int launcher, const int *gpu_index, const int *ngpus, int stride,
                                 int n, tmatch_error_t *err);

/*
 * hwloc dlopens its plugins (GL/X11, OpenCL, PCI, libxml2 and ICU) at its
 * first topology: about 25 ms, and every fork then copies the larger
 * address space. The node tree needs none of them (hwloc's own XML reader
 * reads the admin's topology_xml), so slurmstepd sets HWLOC_PLUGINS_BLACKLIST
 * to this unless it is set already. The CLI keeps libxml2 for the XML files
 * users give it, and loads them in a child (tmatch_place_node_load): hwloc
 * 2.9's own reader crashed on a crafted one under fuzzing.
 */
#define TMATCH_PLACE_HWLOC_BLACKLIST                                                               \
	"hwloc_gl,hwloc_opencl,hwloc_pci,hwloc_xml_libxml,hwloc_cuda,hwloc_nvml,hwloc_rsmi,"       \
	"hwloc_levelzero"

/* ------------------------------------------------------------------------ */
/* The compiled step plan (plan.c)                                           */

/*
 * A step's placement computed once, where the whole job is known (`treematch
 * layout --plan`), so that each node reads only its own slice: the node's
 * ranks, their leaves in the planner's model of a node, the node's switch
 * position, and the traffic among its ranks (to map again when the node's
 * own tree differs from the model). The file is versioned and checksummed
 * (header, each index entry, each slice) and found by node name with a
 * binary search: a node reads O(log nodes + its tasks) bytes. The format is
 * in plan.c.
 */
#define TMATCH_PLAN_ANY_STEP 0xffffffffu

/* What a plan is for; a node uses it only when all of it matches its step. */
typedef struct tmatch_place_plan_bind {
	uint64_t job_id;           /* the job it was made in (0: none, refused by nodes) */
	uint32_t step_id;          /* TMATCH_PLAN_ANY_STEP: any step of that job */
	uint32_t ntasks;           /* the step's tasks */
	uint64_t nodes_hash;       /* tmatch_place_nodes_hash of the nodes given ranks */
	uint64_t profile_size;     /* the profile file when planned: size, */
	uint64_t profile_mtime_ns; /* modification time, */
	uint64_t profile_hash;     /* content (tmatch_place_profile_stamp) */
	uint64_t node_sig;         /* tmatch_place_node_sig of the planner's node model */
	char mapper[32];           /* the mapper that made it (for messages) */
} tmatch_place_plan_bind_t;

typedef struct tmatch_place_plan_in {
	tmatch_place_plan_bind_t bind;
	const tmatch_comm_t *comm;           /* the profile's matrix (order <= ntasks) */
	int nnodes;                          /* nodes of node_name */
	char *const *node_name;              /* [nnodes], distinct */
	const int *node_of_rank;             /* [bind.ntasks] index in node_name */
	const int *leaf_of_rank;             /* [bind.ntasks] leaf of the node model */
	const tmatch_affinity_pos_t *prefix; /* [nnodes] switch levels then the node */
} tmatch_place_plan_in_t;

/* Write the plan of `in` (the nodes without a rank get no slice) to out.
   -1 with err (EINVAL, ENOMEM, EIO). */
int tmatch_place_plan_write(const tmatch_place_plan_in_t *in, FILE *out, tmatch_error_t *err);

/*
 * Where the plan of a step started by srun process `srun_pid` of job
 * `job_id` is kept when the cli_filter makes it (`treematch layout
 * --srun-pid`), in `dir` (the profile's directory, which the nodes read):
 * srun's side of the plugin removes that file when srun ends. 0, or -1
 * (EINVAL, ENAMETOOLONG).
 */
int tmatch_place_plan_srun_path(const char *dir, uint64_t job_id, long srun_pid, char *path,
                                size_t len);

/* One node's slice. */
typedef struct tmatch_place_slice {
	tmatch_place_plan_bind_t bind; /* the file's header */
	uint32_t nnodes;               /* slices in the file */
	char node[64];
	int nranks;
	int *rank;                    /* [nranks] global ranks, ascending */
	int *leaf;                    /* [nranks] their leaves in the node model */
	tmatch_affinity_pos_t prefix; /* switch levels then the node */
	tmatch_comm_t *comm;          /* traffic among rank[], in that order */
} tmatch_place_slice_t;

/*
 * The slice of `node` in the plan open on fd (path names it in messages):
 * header, the index entries the search visits and the slice are checked
 * (checksums, sizes, ranks ascending and below ntasks, edges inside the
 * slice, finite weights). NULL with err: ENOENT no slice for the node,
 * EINVAL a damaged or foreign file (what is wrong), ENOMEM, EIO.
 */
tmatch_place_slice_t *tmatch_place_plan_read_slice(int fd, const char *path, const char *node,
                                                   tmatch_error_t *err);
void tmatch_place_slice_destroy(tmatch_place_slice_t *slice);

/* The plan's header alone, checked as above: its bindings and slice count. */
int tmatch_place_plan_read_head(int fd, const char *path, tmatch_place_plan_bind_t *bind,
                                uint32_t *nnodes, tmatch_error_t *err);

/* The plan's own bindings against the step a node sees: 0, or which binding
   differs (> 0) with one line in why (the plan's value and the step's). */
enum {
	TMATCH_PLACE_PLAN_OTHER_JOB = 1,
	TMATCH_PLACE_PLAN_OTHER_STEP = 2,
	TMATCH_PLACE_PLAN_OTHER_TASKS = 3,
	TMATCH_PLACE_PLAN_OTHER_NODES = 4,
	TMATCH_PLACE_PLAN_OTHER_PROFILE = 5,
};
int tmatch_place_plan_matches(const tmatch_place_plan_bind_t *plan,
                              const tmatch_place_plan_bind_t *step, char *why, size_t len);

/* A set of node names as one number, whatever their order. */
uint64_t tmatch_place_nodes_hash(char *const *names, int n);

/* The shape of a node tree (levels, arities, which leaves are real) as one
   number: equal signatures number their leaves alike. 0 when it cannot be
   computed: a plan's leaves are then never taken as they are. */
uint64_t tmatch_place_node_sig(const tmatch_affinity_tree_t *node);

/* Size and modification time of the open file fd, and when hash is not
   NULL its content hash (reads it whole). -1 with err on a read error. */
int tmatch_place_profile_stamp(int fd, const char *path, uint64_t *size, uint64_t *mtime_ns,
                               uint64_t *hash, tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_PLACEMENT_H */
