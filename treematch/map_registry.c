/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map_registry.c - the mapper registry and the public entry point that
 * dispatches to it, with the "+refine" suffix handled in one place.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The mappers, in the order of --help: one list, from which both the
 * registry and the names tmatch_map_mappers() returns are made.
 */
#define MAPPERS(X)                                                                                 \
	X("auto", tmatch__map_auto,                                                                \
	  "run the candidates that fit the budget, refine, keep the best")                         \
	X("treematch", tmatch__map_treematch, "TreeMatch: bottom-up grouping level by level")      \
	X("greedy", tmatch__map_greedy, "Hoefler-Snir greedy graph embedding")                     \
	X("rcm", tmatch__map_rcm, "reverse Cuthill-McKee order matched to the leaf order")         \
	X("bisect", tmatch__map_bisect, "recursive bisection of ranks and machine together")       \
	X("packed", tmatch__map_packed, "rank i on the i-th allowed leaf")                         \
	X("rr", tmatch__map_rr, "round-robin: spread over the top level first")                    \
	X("random", tmatch__map_random, "seeded random permutation")
#define REGISTRY_ENTRY(name, fn, summary) {name, fn, summary},
#define REGISTRY_NAME(name, fn, summary)  name,

static const struct tmatch__mapper registry[] = {MAPPERS(REGISTRY_ENTRY){NULL, NULL, NULL}};

static const char *const mapper_names[] = {MAPPERS(REGISTRY_NAME) NULL};

const char *const *tmatch_map_mappers(void)
{
	return mapper_names;
}

static const char refine_suffix[] = "+refine";

static const struct tmatch__mapper *find(const char *name)
{
	for (const struct tmatch__mapper *m = registry; m->name; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

/* Split "name+refine": returns the registry entry, sets *refine. */
static const struct tmatch__mapper *lookup(const char *name, int *refine)
{
	size_t len = strlen(name), slen = sizeof(refine_suffix) - 1;
	char base[64];

	*refine = 0;
	if (len > slen && strcmp(name + len - slen, refine_suffix) == 0) {
		*refine = 1;
		len -= slen;
	}
	if (len == 0 || len >= sizeof(base))
		return NULL;
	memcpy(base, name, len);
	base[len] = '\0';
	return find(base);
}

int tmatch_map_check_name(const char *name, tmatch_error_t *err)
{
	int refine;
	char list[256] = "";

	if (name && lookup(name, &refine))
		return 0;
	for (const struct tmatch__mapper *m = registry; m->name; m++) {
		strncat(list, m->name, sizeof(list) - strlen(list) - 1);
		if (m[1].name)
			strncat(list, ", ", sizeof(list) - strlen(list) - 1);
	}
	tmatch_error_set(err, 0, NULL, 0, 0,
	                 "unknown mapper '%.64s': use one of %s, optionally with +refine",
	                 name ? name : "(null)", list);
	errno = EINVAL;
	return -1;
}

void tmatch_map_opts_init(tmatch_map_opts_t *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->mapper = TMATCH_DEFAULT_MAPPER;
	opts->seed = 1;
}

int tmatch_map_compute(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                       const tmatch_map_opts_t *opts, int *leaf_of_rank, tmatch_error_t *err)
{
	tmatch_map_opts_t defaults;
	const struct tmatch__mapper *m;
	int refine, n, *tmp = NULL, rc = -1;

	if (!comm || !topo || !leaf_of_rank) {
		tmatch_error_set(err, 0, NULL, 0, 0, "tmatch_map_compute: NULL argument");
		errno = EINVAL;
		return -1;
	}
	if (!opts) {
		tmatch_map_opts_init(&defaults);
		opts = &defaults;
	}
	n = comm->n;
	if (n > topo->nb_allowed) {
		tmatch_error_set(err, 0, NULL, 0, 0,
		                 "%d ranks do not fit on %d usable leaves: ask for fewer tasks "
		                 "or a larger allocation",
		                 n, topo->nb_allowed);
		errno = EINVAL;
		return -1;
	}
	m = lookup(opts->mapper && *opts->mapper ? opts->mapper : TMATCH_DEFAULT_MAPPER, &refine);
	if (!m)
		return tmatch_map_check_name(opts->mapper, err);

	/* Work on a copy so that a failure leaves the output untouched. */
	tmp = malloc(sizeof(*tmp) * (size_t)(n > 0 ? n : 1));
	if (!tmp) {
		tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	if (m->fn(comm, topo, opts, tmp, err) != 0)
		goto out;
	if (refine && tmatch__refine(comm, topo, opts, tmp, err) != 0)
		goto out;
	if (tmatch_map_validate(topo, tmp, n, err) != 0) {
		/* A mapper bug, never the user's: say so rather than bind wrongly. */
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err ? err->msg : "");
		tmatch_error_set(err, 0, NULL, 0, 0, "internal error in mapper '%s': %s", m->name,
		                 why);
		errno = EINVAL;
		goto out;
	}
	memcpy(leaf_of_rank, tmp, sizeof(*tmp) * (size_t)n);
	rc = 0;
out:
	free(tmp);
	return rc;
}
