/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_pending.c - TEMPORARY placeholders for the mappers of issue 3 so the
 * tree links while they are written. Each is deleted from here when its own
 * file lands; this file must be gone before issue 3 is closed.
 */
#include "treematch/treematch_private.h"

#include <errno.h>

static int pending(const char *name, tmatch_error_t *err)
{
	tmatch__error_set(err, NULL, 0, 0, "mapper '%s' is not available in this build", name);
	errno = ENOSYS;
	return -1;
}

int tmatch__map_greedy(const tmatch_comm_t *c, const tmatch_topo_t *t, const tmatch_map_opts_t *o,
                       int *l, tmatch_error_t *err)
{
	(void)c, (void)t, (void)o, (void)l;
	return pending("greedy", err);
}

int tmatch__map_rcm(const tmatch_comm_t *c, const tmatch_topo_t *t, const tmatch_map_opts_t *o,
                    int *l, tmatch_error_t *err)
{
	(void)c, (void)t, (void)o, (void)l;
	return pending("rcm", err);
}

int tmatch__map_bisect(const tmatch_comm_t *c, const tmatch_topo_t *t, const tmatch_map_opts_t *o,
                       int *l, tmatch_error_t *err)
{
	(void)c, (void)t, (void)o, (void)l;
	return pending("bisect", err);
}

int tmatch__map_auto(const tmatch_comm_t *c, const tmatch_topo_t *t, const tmatch_map_opts_t *o,
                     int *l, tmatch_error_t *err)
{
	return tmatch__map_treematch(c, t, o, l, err);
}

int tmatch__refine(const tmatch_comm_t *c, const tmatch_topo_t *t, const tmatch_map_opts_t *o,
                   int *l, tmatch_error_t *err)
{
	(void)c, (void)t, (void)o, (void)l;
	return pending("refine", err);
}
