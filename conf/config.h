/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h - the one option grammar of treematch, shared by the plugin's
 * plugstack.conf arguments, its --treematch=... user option and an optional
 * admin file. Slurm-free: the plugin hands strings in, gets a validated
 * struct (or an error message naming the source, line, column) back.
 *
 * Grammar: a list of `key=value` items.
 *   plugstack.conf arguments: one item per argv word
 *       required treematch.so failure=fallback max_ranks=65536 default=off
 *   user option (--treematch=...): items separated by ','; the first item
 *       may be a bare path, short for profile=PATH ("off" alone disables;
 *       "learn" or "learn:NAME" is learn mode: the profile is the store's
 *       entry for the step's MPI program and task count, recorded by the
 *       first run; a file named learn is ./learn):
 *       --treematch=app.yml,mapper=greedy,metric=msgs
 *   admin file: one item per line ("key = value" also accepted), '#' starts
 *       a comment, blank lines ignored.
 *
 * Keys (one shared table; unknown keys are rejected with the list of valid
 * ones). "admin" keys may only come from plugstack.conf or the admin file.
 *   profile=PATH            profile to read (user)
 *   mapper=NAME[+refine]    checked with tmatch_map_check_name (user, admin default)
 *   metric=bytes|msgs|avg   what drives placement (default: the profile's placement_metric)
 *   coll=on|off             include collective traffic: on, any coll_edges; off, none;
 *                           default: those the profile says are the messages collectives
 *                           send (collectives: wire, what treematch record writes)
 *   failure=fallback|fail   what to do when mapping fails (default fallback)
 *   verbose=N               0..9 (default 0)
 *   dry_run=on|off          compute and report, do not bind (default off)
 *   seed=N                  mapper seed (default 1, as treematch map)
 *   mpi_pin=on|off          also export the MPI's own binding variables (default off)
 *   max_ranks=N             limit on profile ranks (default 1048576); user may only lower it
 *   max_file_size=N[K|M|G]  limit on profile size (default 256M); user may only lower it
 *   max_map_time=SECONDS    mapper time cap (default 10); user may only lower it
 *   max_map_memory=N[K|M|G] memory the mapping may add on a node (default 1G); user may
 *                           only lower it
 *   default=on|off|learn    (admin) apply treematch without --treematch (default off);
 *                           learn: every job in learn mode (below)
 *   allowed_mappers=a:b:c   (admin) mappers users may choose ("" = all)
 *   exclusive_only=on|off   (admin) only act on jobs with whole nodes (default off)
 *   topology_xml=PATH       (admin) hwloc XML used instead of the live node (tests)
 *   plan=PATH               a compiled step plan (`treematch layout --plan`): each node
 *                           reads its own slice instead of the profile
 *   store=DIR               (admin) the site store of learned profiles (each user's
 *                           DIR/UID), instead of each user's XDG cache
 *   min_gain=PCT            learn mode: keep Slurm's binding when the placement gains
 *                           less than PCT % of the node's cost (default 2)
 *   search_time=SECONDS     more search the default mapper may add on each node
 *                           (`treematch map --search-time`; default 0, none): at most half
 *                           of max_map_time is used; user may only lower it
 *   nic_env=on|off          GPU steps: give each task the variables its MPI library's
 *                           transport reads for its card (UCX_NET_DEVICES, FI_EFA_IFACE,
 *                           FI_CXI_DEVICE_NAME: tmatch_place_nic_vars; default on); the
 *                           user may only turn it off
 *
 * Precedence: built-in defaults < admin (plugstack.conf, then the admin file:
 * later items override earlier ones) < user, except that the user may only
 * tighten the admin's policy: limits only lowered, failure=fail never undone,
 * nic_env=off never undone, mappers only from allowed_mappers
 * (tmatch_config_merge).
 */
#ifndef TMATCH_PLACEMENT_CONFIG_H
#define TMATCH_PLACEMENT_CONFIG_H

#include "treematch/treematch.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tmatch_config_failure {
	TMATCH_FAILURE_FALLBACK = 0, /* log, keep the default placement, run the job */
	TMATCH_FAILURE_FAIL = 1,     /* refuse to start the job step */
};

/* Who wrote the items being parsed. */
enum tmatch_config_source {
	TMATCH_CONFIG_ADMIN = 0, /* plugstack.conf or the admin file: every key allowed */
	TMATCH_CONFIG_USER = 1,  /* --treematch=...: admin-only keys rejected */
};

#define TMATCH_CONFIG_PATH_MAX 1024

typedef struct tmatch_config {
	int enabled;                          /* user: a profile was asked for; admin: default=on */
	char profile[TMATCH_CONFIG_PATH_MAX]; /* "" = none */
	char mapper[64];                      /* "" = TMATCH_DEFAULT_MAPPER */
	int metric;                           /* -1 = the profile's, else tmatch_profile_metric_t */
	int coll;    /* collective edges: 1 on, 0 off, -1 the profile's (tmatch_place_comm_sets) */
	int failure; /* enum tmatch_config_failure */
	int verbose; /* 0..9 */
	int dry_run;
	uint64_t seed;
	int mpi_pin;
	int max_ranks;
	size_t max_file_size;
	double max_map_time;       /* seconds, > 0 */
	size_t max_map_memory;     /* bytes the node's mapping process may add, > 0 */
	char allowed_mappers[512]; /* ':'-separated; "" = all */
	int exclusive_only;
	char topology_xml[TMATCH_CONFIG_PATH_MAX]; /* "" = none */
	char plan[TMATCH_CONFIG_PATH_MAX];         /* "" = none: map from the profile */
	int learn;           /* learn mode: the profile comes from the store (profile "") */
	char learn_name[64]; /* learn:NAME, part of the store's key; "" = none */
	char store[TMATCH_CONFIG_PATH_MAX]; /* admin: the site store; "" = each user's own */
	int min_gain;       /* learn mode: keep Slurm's binding below this gain, percent */
	double search_time; /* seconds of search auto may add (0 = none), <= 3600 */
	int nic_env;        /* GPU steps: set the card's variables (tmatch_place_nic_vars) */
	uint32_t set_mask;  /* bit k set when key k of the table was given (internal use) */
	char refused[320];  /* tmatch_config_merge: what the user asked that would loosen
	                       the admin's policy, ignored; one line, "" = none */
} tmatch_config_t;

/* Built-in defaults (values documented above). */
TMATCH_API void tmatch_config_init(tmatch_config_t *cfg);

/*
 * Parse plugstack.conf arguments (argv words, each key=value) into cfg.
 * `name` names the source in messages (e.g. "plugstack.conf"); the column of
 * an error is the 1-based index of the argument. On error cfg is unchanged.
 */
TMATCH_API int tmatch_config_parse_argv(tmatch_config_t *cfg, int argc, char *const *argv,
                                        const char *name, tmatch_error_t *err);

/*
 * Parse a ','-separated option string (the user's --treematch=... value when
 * source is TMATCH_CONFIG_USER). Columns in errors are 1-based byte offsets.
 * An empty string is an error (say what to give). On error cfg is unchanged.
 */
TMATCH_API int tmatch_config_parse_string(tmatch_config_t *cfg, const char *opts,
                                          enum tmatch_config_source source, const char *name,
                                          tmatch_error_t *err);

/*
 * Parse an admin file already opened by the caller (read to EOF, at most
 * 64 KiB; not closed). Errors name `name`, line and column.
 * On error cfg is unchanged.
 */
TMATCH_API int tmatch_config_parse_fd(tmatch_config_t *cfg, int fd, const char *name,
                                      tmatch_error_t *err);
/* Same from memory (tests). */
TMATCH_API int tmatch_config_parse_text(tmatch_config_t *cfg, const char *text, size_t len,
                                        const char *name, tmatch_error_t *err);

/*
 * Combine: out = admin, overridden by every key the user set, then
 * - limits (max_ranks, max_file_size, max_map_time, max_map_memory) = the
 *   lower of the two, and failure the stricter (fail over fallback): a
 *   user value that would loosen the admin's is ignored and named in
 *   out->refused ("failure=fallback (the site sets failure=fail)", ...), for
 *   the front end to say once;
 * - a user mapper must be in admin->allowed_mappers (when non-empty);
 * - admin-only keys keep the admin values.
 * out may alias admin. -1/EINVAL (out unchanged) when the user's mapper is
 * not allowed, with the allowed list in the message.
 */
TMATCH_API int tmatch_config_merge(const tmatch_config_t *admin, const tmatch_config_t *user,
                                   tmatch_config_t *out, tmatch_error_t *err);

/* NULL-terminated list of the valid keys (for help texts and the man page test). */
TMATCH_API const char *const *tmatch_config_keys(void);

/* Write the effective configuration as "key=value" items separated by ' '. snprintf-style. */
TMATCH_API int tmatch_config_format(const tmatch_config_t *cfg, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_CONFIG_H */
