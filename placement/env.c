/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * env.c - what a placed task gets (its environment) and what the user is
 * told (one line per task, one summary per node). Every string is as long
 * as it needs to be: CPU sets of thousands of CPUs fit.
 */
#include "placement/placement_private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new string from a format, NULL with errno = ENOMEM. */
static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* Append an entry that takes ownership of `value` (NULL: out of memory). */
static int env_put(tmatch_place_env_t *env, int *n, const char *name, int overwrite, char *value)
{
	if (!value)
		return -1;
	snprintf(env[*n].name, sizeof(env[*n].name), "%s", name);
	env[*n].value = value;
	env[*n].overwrite = overwrite;
	(*n)++;
	return 0;
}

/* OMP_PLACES for a CPU set: one place per CPU, "{0},{1},{4}". */
static char *omp_places(hwloc_const_bitmap_t set)
{
	size_t len = 1, used = 0;
	char *s;
	int c;

	hwloc_bitmap_foreach_begin(c, set)
	{
		len += (size_t)snprintf(NULL, 0, ",{%d}", c);
	}
	hwloc_bitmap_foreach_end();
	if (!(s = malloc(len))) {
		errno = ENOMEM;
		return NULL;
	}
	s[0] = '\0';
	hwloc_bitmap_foreach_begin(c, set)
	{
		used += (size_t)snprintf(s + used, len - used, "%s{%d}", used ? "," : "", c);
	}
	hwloc_bitmap_foreach_end();
	return s;
}

/* Most entries an environment has (9 TREEMATCH_*, 3 OMP_*, 5 MPI). */
#define MAX_ENV 17

int tmatch_place_task_env(const tmatch_place_node_t *node, const tmatch_config_t *cfg, int local,
                          tmatch_place_env_t **env)
{
	const tmatch_place_task_t *t;
	tmatch_place_env_t *e;
	int n = 0;

	if (!node || !cfg || !env || node->status != TMATCH_PLACE_PLACED || local < 0 ||
	    local >= node->ntasks) {
		errno = EINVAL;
		return -1;
	}
	t = &node->task[local];
	if (!(e = calloc(MAX_ENV, sizeof(*e)))) {
		errno = ENOMEM;
		return -1;
	}
	if (env_put(e, &n, "TREEMATCH_RANK", 1, format("%d", t->rank)) ||
	    env_put(e, &n, "TREEMATCH_CPUS", 1, tmatch_affinity_cpuset_list(t->cpuset)) ||
	    env_put(e, &n, "TREEMATCH_CPU_MASK", 1, tmatch_affinity_cpuset_mask(t->cpuset)) ||
	    env_put(e, &n, "TREEMATCH_LEVELS", 1,
	            tmatch_affinity_pos_string(&t->pos, TMATCH_AFFINITY_POS_LEVELS)) ||
	    env_put(e, &n, "TREEMATCH_INDEX", 1,
	            tmatch_affinity_pos_string(&t->pos, TMATCH_AFFINITY_POS_INDEX)) ||
	    env_put(e, &n, "TREEMATCH_COUNT", 1,
	            tmatch_affinity_pos_string(&t->pos, TMATCH_AFFINITY_POS_COUNT)) ||
	    env_put(e, &n, "TREEMATCH_POSITION", 1,
	            tmatch_affinity_pos_string(&t->pos, TMATCH_AFFINITY_POS_FULL)) ||
	    env_put(e, &n, "TREEMATCH_MAPPER", 1, format("%s", node->mapper)) ||
	    env_put(e, &n, "TREEMATCH_DRY_RUN", 1, format("%d", cfg->dry_run ? 1 : 0)))
		goto nomem;
	if (node->cpus_per_task > 1 &&
	    (env_put(e, &n, "OMP_NUM_THREADS", 0, format("%d", node->cpus_per_task)) ||
	     env_put(e, &n, "OMP_PLACES", 0, omp_places(t->cpuset)) ||
	     env_put(e, &n, "OMP_PROC_BIND", 0, format("close"))))
		goto nomem;
	/* Keep the binding chosen here: Open MPI (mpirun inside the step and
	   direct launch), MPICH's Hydra, Intel MPI, MVAPICH2/3. */
	if (cfg->mpi_pin && !cfg->dry_run &&
	    (env_put(e, &n, "OMPI_MCA_hwloc_base_binding_policy", 0, format("none")) ||
	     env_put(e, &n, "HYDRA_BINDING", 0, format("none")) ||
	     env_put(e, &n, "I_MPI_PIN", 0, format("0")) ||
	     env_put(e, &n, "MV2_ENABLE_AFFINITY", 0, format("0")) ||
	     env_put(e, &n, "MVP_ENABLE_AFFINITY", 0, format("0"))))
		goto nomem;
	*env = e;
	return n;
nomem:
	tmatch_place_env_free(e, n);
	errno = ENOMEM;
	return -1;
}

void tmatch_place_env_free(tmatch_place_env_t *env, int n)
{
	if (!env)
		return;
	for (int i = 0; i < n; i++)
		free(env[i].value);
	free(env);
}

char *tmatch_place_verbose_line(const tmatch_place_node_t *node, int local, long pid, int dry_run)
{
	const tmatch_place_task_t *t;
	char *list, *mask, *line = NULL;

	if (!node || node->status != TMATCH_PLACE_PLACED || local < 0 || local >= node->ntasks) {
		errno = EINVAL;
		return NULL;
	}
	t = &node->task[local];
	list = tmatch_affinity_cpuset_list(t->cpuset);
	mask = tmatch_affinity_cpuset_mask(t->cpuset);
	if (list && mask)
		line =
		    format("treematch: cpu-bind=MAP - %s, task %2d %2d [%ld]: cpus %s mask %s %s",
		           node->node_name, local, t->rank, pid, list, mask,
		           dry_run ? "not set (dry-run)" : "set");
	free(list);
	free(mask);
	if (!line)
		errno = ENOMEM;
	return line;
}

char *tmatch_place_summary_line(const tmatch_place_node_t *node, int dry_run)
{
	double gain = 0.0;
	char total[80] = "";

	if (!node || node->status != TMATCH_PLACE_PLACED) {
		errno = EINVAL;
		return NULL;
	}
	if (node->cost_packed > 0.0)
		gain = 100.0 * (node->cost - node->cost_packed) / node->cost_packed;
	if (node->node_seconds > 0.0)
		snprintf(total, sizeof(total), " (node plan %.1f ms, cpu %.1f ms)",
		         node->node_seconds * 1e3, node->node_cpu_seconds * 1e3);
	return format("treematch: %s: %d task(s) mapped by %s in %.1f ms%s, cost %.6g "
	              "(packed %.6g, %+.1f%%)%s",
	              node->node_name, node->ntasks, node->mapper, node->map_seconds * 1e3, total,
	              node->cost, node->cost_packed, gain,
	              dry_run ? ", dry-run: nothing bound" : "");
}
