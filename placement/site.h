/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/site.h - a site's configuration of the plugin as the plugin reads it
 * (`treematch config check`) and the site's policy as srun's plugin
 * computes it (site.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_SITE_H
#define TMATCH_PLACEMENT_SITE_H

#include "conf/config.h"
#include "conf/plugstack.h"
#include "treematch/treematch.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_SITE_H */
