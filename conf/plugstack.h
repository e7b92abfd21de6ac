/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf/plugstack.h - plugstack.conf as Slurm reads it: the lines that load the
 * plugin, the files they include, where an argument is (plugstack.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_CONF_PLUGSTACK_H
#define TMATCH_CONF_PLUGSTACK_H

#include "conf/config.h"
#include "treematch/treematch.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * plugstack.conf (conf/plugstack.c): the lines that load the plugin.
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

/* conf/plugstack.c, placement/site.c: one problem to `report` (if any)
   with its place, counted in *count. */
void tmatch__place_report(tmatch_place_plugstack_problem_fn report, void *arg, int *count,
                          const char *file, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

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

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_CONF_PLUGSTACK_H */
