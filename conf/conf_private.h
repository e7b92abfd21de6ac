/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_private.h - internals shared by the readers of Slurm's network files
 * in conf/ (topology.c, topology_conf.c, topology_yaml.c, slurm_conf.c,
 * slurm_kv.c). Tests may include it; nothing outside conf/ does. What the
 * readers read goes to affinity/'s builder (affinity/network.h).
 */
#ifndef TMATCH_CONF_PRIVATE_H
#define TMATCH_CONF_PRIVATE_H

#include "affinity/network.h"
#include "conf/topology.h"

#include <stddef.h>

/*
 * Slurm's Key=Value files (topology.conf, slurm.conf; slurm_kv.c):
 * logical lines ('#' comments, a trailing '\' continues), each split into
 * pairs, handed to fn (the values NUL-terminated in place, valid during the
 * call). lenient: a line with a word without '=' ("Include FILE") is
 * skipped, else it is an error. 0, or -1 with err set (or fn's -1).
 */
struct tmatch__kv {
	const char *key; /* not NUL-terminated: klen characters */
	size_t klen;
	char *val;
	int line, col;   /* of the key */
	int vline, vcol; /* of the value */
};
typedef int (*tmatch__kv_fn)(void *arg, struct tmatch__kv *kv, int n);
int tmatch__kv_read(const char *text, const char *file, int lenient, tmatch__kv_fn fn, void *arg,
                    tmatch_error_t *err);
/* The key, without regard to case. */
int tmatch__kv_is(const struct tmatch__kv *kv, const char *key) __attribute__((nonnull));

/* slurm.conf's Topology= keys (slurm_conf.c) into `out` (cleared with
   tmatch__slurm_topo_clear). Admin text, read as such: unknown keys are
   Slurm's. */
int tmatch__slurm_topo_parse(const char *text, const char *file, const char *partition,
                             struct tmatch_affinity_slurm_topo *out, tmatch_error_t *err);
void tmatch__slurm_topo_clear(struct tmatch_affinity_slurm_topo *st);

/* topology.conf (topology_conf.c): its lines into a new builder's conf. */
tmatch_affinity_conf_t *tmatch__topo_conf_parse(const char *text, const char *file,
                                                const struct tmatch_affinity_slurm_topo *slurm,
                                                tmatch_error_t *err);

/* topology.yaml (topology_yaml.c): the topology `sel` picks, into a new
   builder's conf. */
tmatch_affinity_conf_t *tmatch__topo_yaml_parse(const char *text, size_t len, const char *file,
                                                const tmatch_conf_topo_sel_t *sel,
                                                const struct tmatch_affinity_slurm_topo *slurm,
                                                tmatch_error_t *err);

#endif /* TMATCH_CONF_PRIVATE_H */
