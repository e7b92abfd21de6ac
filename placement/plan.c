/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plan.c - the SPANK plugin's decisions, without Slurm (see placement.h).
 */
#include "placement/placement_private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tmatch_spank_step_is_handled(uint32_t step_id)
{
	switch (step_id) {
	case TMATCH_STEP_PENDING:
	case TMATCH_STEP_EXTERN:
	case TMATCH_STEP_BATCH:
	case TMATCH_STEP_INTERACTIVE:
		return 0;
	default:
		/* Any other id at the top of the range is a special step of a
		   newer Slurm: leave it alone too. */
		return step_id < 0xfffffff0u;
	}
}

/* Number of entries of a list "0-3,8" (-1 if malformed). */
static int count_list(const char *list)
{
	int n = 0;
	const char *p = list;

	while (p && *p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0)
			return -1;
		if (*end == '-') {
			const char *q = end + 1;

			hi = strtol(q, &end, 10);
			if (end == q || hi < lo)
				return -1;
		}
		n += (int)(hi - lo + 1);
		if (*end == '\0')
			break;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
	return n;
}

int tmatch_spank_job_has_whole_node(const char *job_cores, int node_cores)
{
	int n = job_cores ? count_list(job_cores) : -1;

	return n > 0 && node_cores > 0 && n >= node_cores;
}

int tmatch_spank_classify_value(const char *value, tmatch_error_t *err)
{
	if (!value || !*value) {
		tmatch_error_set(err, 0, NULL, 0, 0, "--treematch needs a value: a profile path, off, or help");
		errno = EINVAL;
		return -1;
	}
	if (strcmp(value, "help") == 0)
		return TMATCH_SPANK_VALUE_HELP;
	return TMATCH_SPANK_VALUE_OPTIONS;
}

const char *tmatch_spank_help_text(void)
{
	return "treematch: --treematch=VALUE places each task where TreeMatch says, from a\n"
	       "treematch: communication profile (see treematch(8), treematch-profile(5)).\n"
	       "treematch:   --treematch=PROFILE[,key=value...]   use this profile\n"
	       "treematch:   --treematch=off                      disable (even if the site "
	       "enables it)\n"
	       "treematch:   --treematch=help                     this text\n"
	       "treematch: keys: mapper=NAME[+refine]  metric=bytes|msgs|avg  coll=on|off\n"
	       "treematch:       verbose=N  dry_run=on|off  seed=N  mpi_pin=on|off\n"
	       "treematch:       failure=fallback|fail  max_ranks=N  max_file_size=N[K|M|G]\n"
	       "treematch:       max_map_time=SECONDS  max_map_memory=N[K|M|G]\n"
	       "treematch: example: srun -n 8 --treematch=app.yml,verbose=1 ./app\n";
}

static const char admin_file_key[] = "admin_file=";

const char *tmatch_spank_admin_file(int argc, char *const *argv)
{
	const char *file = NULL;

	for (int i = 0; i < argc; i++)
		if (argv[i] && strncmp(argv[i], admin_file_key, sizeof(admin_file_key) - 1) == 0)
			file = argv[i] + sizeof(admin_file_key) - 1;
	return file;
}

int tmatch_spank_config(int argc, char *const *argv, int admin_fd, const char *user_value,
                        tmatch_config_t *out, tmatch_error_t *err)
{
	tmatch_config_t admin, user, merged;
	char **args = NULL;
	int nargs = 0, rc = -1;

	if (!out || argc < 0 || (argc > 0 && !argv)) {
		tmatch_error_set(err, 0, NULL, 0, 0, "tmatch_spank_config: invalid argument");
		errno = EINVAL;
		return -1;
	}
	tmatch_config_init(&admin);
	/* admin_file= is the plugin's own argument, not a key of the grammar. */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	for (int i = 0; i < argc; i++)
		if (argv[i] && strncmp(argv[i], admin_file_key, sizeof(admin_file_key) - 1) != 0)
			args[nargs++] = argv[i];
	if (tmatch_config_parse_argv(&admin, nargs, args, "plugstack.conf", err) < 0)
		goto out;
	if (admin_fd >= 0 &&
	    tmatch_config_parse_fd(&admin, admin_fd, tmatch_spank_admin_file(argc, argv), err) < 0)
		goto out;
	merged = admin;
	if (user_value) {
		if (tmatch_spank_classify_value(user_value, err) != TMATCH_SPANK_VALUE_OPTIONS) {
			if (err && !err->msg[0])
				tmatch_error_set(err, 0, NULL, 0, 0,
				                  "--treematch=help cannot be combined with a job");
			errno = EINVAL;
			goto out;
		}
		tmatch_config_init(&user);
		if (tmatch_config_parse_string(&user, user_value, TMATCH_CONFIG_USER, "--treematch",
		                               err) < 0)
			goto out;
		if (tmatch_config_merge(&admin, &user, &merged, err) < 0)
			goto out;
	}
	*out = merged;
	rc = 0;
out:
	free(args);
	return rc;
}

void tmatch_spank_limits(const tmatch_config_t *cfg, tmatch_profile_limits_t *lim)
{
	tmatch_profile_limits_init(lim);
	if (cfg->max_ranks > 0 && cfg->max_ranks < lim->max_ranks)
		lim->max_ranks = cfg->max_ranks;
	if (cfg->max_file_size > 0 && cfg->max_file_size < lim->max_file_size)
		lim->max_file_size = cfg->max_file_size;
}

int tmatch_spank_check_profile(const tmatch_config_t *cfg, const tmatch_profile_t *prof, int ntasks,
                               tmatch_error_t *err)
{
	if (!cfg || !prof) {
		tmatch_error_set(err, 0, NULL, 0, 0, "tmatch_spank_check_profile: invalid argument");
		errno = EINVAL;
		return -1;
	}
	if (ntasks > 0 && tmatch_profile_check_ranks(prof, ntasks, err) < 0)
		return -1;
	if (cfg->mapper[0] && tmatch_map_check_name(cfg->mapper, err) < 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------------ */

/* CPUs (PUs) the tree may use on its node 0, -1 if unknown. */
static int tree_cpus(const tmatch_affinity_tree_t *t)
{
	char list[4096];

	if (tmatch_affinity_tree_allowed_cpus(t, 0, list, sizeof(list), NULL) < 0)
		return -1;
	return count_list(list);
}

tmatch_affinity_tree_t *tmatch_spank_node_tree(const tmatch_affinity_opts_t *opts, int nlocal,
                                               int *smt_used, tmatch_error_t *err)
{
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *t = NULL;
	int cpt, ncpus;
	char e[sizeof(err->msg)];
	const char *name;

	if (!opts || nlocal < 1) {
		tmatch_error_set(err, 0, NULL, 0, 0, "tmatch_spank_node_tree: invalid argument");
		errno = EINVAL;
		return NULL;
	}
	o = *opts;
	cpt = o.cpus_per_task > 1 ? o.cpus_per_task : 1;
	name = o.node_name ? o.node_name : "localhost";
	/* As Slurm counts CPUs: one task per core (all its hardware threads),
	   with -c N N hardware threads per task. */
	o.smt = cpt > 1 ? TMATCH_AFFINITY_SMT_ALL : TMATCH_AFFINITY_SMT_CORE;
	t = tmatch_affinity_node_load(&o, err);
	if (!t)
		return NULL;
	if (tmatch_affinity_tree_nb_slots(t) >= nlocal)
		goto done;
	if (o.smt == TMATCH_AFFINITY_SMT_CORE) {
		/* More tasks than cores: Slurm put several tasks on one core's
		   hardware threads. One slot per hardware thread, if enough. */
		tmatch_affinity_tree_t *pus;

		o.smt = TMATCH_AFFINITY_SMT_ALL;
		pus = tmatch_affinity_node_load(&o, err);
		if (!pus)
			goto fail;
		tmatch_affinity_tree_destroy(t);
		t = pus;
		if (tmatch_affinity_tree_nb_slots(t) >= nlocal)
			goto done;
	}
	/* True oversubscription (srun --overcommit): no placement keeps every
	   task on CPUs of its own. */
	ncpus = tree_cpus(t);
	if (cpt > 1)
		snprintf(e, sizeof(e),
		         "node %s: %d tasks of %d CPUs for %d CPU%s: more CPUs asked than the "
		         "step has here (oversubscribed, e.g. --overcommit); ask for fewer tasks "
		         "per node or more CPUs",
		         name, nlocal, cpt, ncpus, ncpus == 1 ? "" : "s");
	else
		snprintf(e, sizeof(e),
		         "node %s: %d tasks for %d CPU%s: more tasks than CPUs (oversubscribed, "
		         "e.g. --overcommit); ask for fewer tasks per node or more CPUs",
		         name, nlocal, ncpus, ncpus == 1 ? "" : "s");
	tmatch_error_set(err, 0, NULL, 0, 0, "%s", e);
	tmatch_affinity_tree_destroy(t);
	errno = EOVERFLOW;
	return NULL;
done:
	if (smt_used)
		*smt_used = o.smt;
	return t;
fail:
	tmatch_affinity_tree_destroy(t);
	return NULL;
}

/* ------------------------------------------------------------------------ */

static void log_to_nowhere(void *arg, int level, const char *msg)
{
	(void)arg, (void)level, (void)msg;
}

/* Position strings of one leaf: from the cluster tree when there is one. */
static int fill_position(const tmatch_affinity_tree_t *node, int leaf,
                         const tmatch_spank_node_info_t *info, tmatch_spank_task_t *t,
                         tmatch_error_t *err)
{
	tmatch_affinity_pos_t pos, npos;

	memset(&pos, 0, sizeof(pos));
	if (tmatch_affinity_leaf_position(node, leaf, &npos, err) < 0)
		return -1;
	if (info->cluster) {
		/* The same slot in the cluster tree: the k-th real leaf of this
		   node there is the k-th real leaf of the node tree. */
		int k = 0, found = -1, nl = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(node));
		int cl = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(info->cluster));

		for (int l = 0; l < leaf && l < nl; l++)
			k += tmatch_affinity_leaf_is_real(node, l);
		for (int l = 0; l < cl; l++) {
			if (!tmatch_affinity_leaf_is_real(info->cluster, l) ||
			    tmatch_affinity_leaf_node(info->cluster, l) != info->cluster_node)
				continue;
			if (k-- == 0) {
				found = l;
				break;
			}
		}
		if (found >= 0 &&
		    tmatch_affinity_leaf_position(info->cluster, found, &pos, NULL) == 0)
			goto format;
	}
	/* No cluster tree: node=i/n, then the node's own levels. */
	pos.nlevels = 0;
	snprintf(pos.level[0].name, sizeof(pos.level[0].name), "node");
	pos.level[0].index = info->node_index;
	pos.level[0].count = info->node_count > 0 ? info->node_count : 1;
	pos.level[0].global = info->node_index;
	pos.nlevels = 1;
	for (int i = 0; i < npos.nlevels && pos.nlevels < TMATCH_AFFINITY_MAX_LEVELS; i++)
		if (strcmp(npos.level[i].name, "node") != 0)
			pos.level[pos.nlevels++] = npos.level[i];
format:
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_LEVELS, t->levels, sizeof(t->levels));
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_INDEX, t->index, sizeof(t->index));
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_COUNT, t->count, sizeof(t->count));
	tmatch_affinity_pos_format(&pos, TMATCH_AFFINITY_POS_FULL, t->position,
	                           sizeof(t->position));
	return 0;
}

int tmatch_spank_plan_compute(const tmatch_config_t *cfg, const tmatch_profile_t *prof,
                              const tmatch_affinity_tree_t *node,
                              const tmatch_spank_node_info_t *info, tmatch_spank_plan_t **out,
                              tmatch_error_t *err)
{
	const tmatch_topo_t *topo;
	tmatch_comm_t *full = NULL, *sub = NULL;
	tmatch_spank_plan_t *plan = NULL;
	tmatch_map_opts_t mopts;
	tmatch_metrics_t m_map, m_packed;
	int *leaf_of = NULL, *packed = NULL;
	int rc = -1, nleaves, slots, metric;
	double t0;

	if (!cfg || !prof || !node || !info || !out || info->nlocal < 1 || !info->ranks) {
		tmatch_error_set(err, 0, NULL, 0, 0, "tmatch_spank_plan_compute: invalid argument");
		errno = EINVAL;
		return -1;
	}
	if (tmatch_profile_check_ranks(prof, info->ntasks_total, err) < 0)
		return -1;
	topo = tmatch_affinity_tree_topo(node);
	nleaves = tmatch_topo_nb_leaves(topo);
	slots = tmatch_affinity_tree_nb_slots(node);
	if (info->nlocal > slots) {
		tmatch_error_set(
		    err, 0, NULL, 0, 0,
		    "%d tasks on this node but the step has only %d slot(s) of %d CPU(s) here: "
		    "ask for fewer tasks per node or more CPUs",
		    info->nlocal, slots, info->cpus_per_task > 1 ? info->cpus_per_task : 1);
		errno = EOVERFLOW;
		return -1;
	}
	metric = cfg->metric >= 0 ? cfg->metric : (int)tmatch_profile_placement_metric(prof);
	full =
	    tmatch_profile_to_comm(prof, (tmatch_profile_metric_t)metric,
	                           TMATCH_PROFILE_P2P | (cfg->coll ? TMATCH_PROFILE_COLL : 0), err);
	if (!full)
		goto out;
	/* One implementation with `treematch map --ranks`. */
	sub = tmatch_comm_submatrix(full, info->ranks, info->nlocal, err);
	if (!sub)
		goto out;

	plan = calloc(1, sizeof(*plan));
	leaf_of = calloc((size_t)info->nlocal, sizeof(*leaf_of));
	packed = calloc((size_t)info->nlocal, sizeof(*packed));
	if (!plan || !leaf_of || !packed)
		goto nomem;
	plan->task = calloc((size_t)info->nlocal, sizeof(*plan->task));
	if (!plan->task)
		goto nomem;

	tmatch_map_opts_init(&mopts);
	mopts.mapper = cfg->mapper[0] ? cfg->mapper : NULL;
	mopts.seed = cfg->seed;
	mopts.time_budget = cfg->max_map_time;
	mopts.log = log_to_nowhere;
	t0 = tmatch__place_now();
	/* In a child with hard limits: slurmstepd must outlive the mapping
	   (time, memory, METIS's global state, a crash). The deadline is
	   enforced while it runs, not checked after. */
	if (tmatch__place_isolate_map(sub, topo, &mopts, cfg->max_map_time, cfg->max_map_memory,
	                              NULL, leaf_of, err) < 0)
		goto out;
	plan->map_seconds = tmatch__place_now() - t0;
	if (tmatch_map_validate(topo, leaf_of, info->nlocal, err) < 0)
		goto out;
	/* Slurm's default block placement: local task i on the i-th slot. */
	for (int l = 0, i = 0; l < nleaves && i < info->nlocal; l++)
		if (tmatch_topo_is_allowed(topo, l))
			packed[i++] = l;
	if (tmatch_eval(sub, topo, leaf_of, &m_map, err) < 0 ||
	    tmatch_eval(sub, topo, packed, &m_packed, err) < 0)
		goto out;

	plan->ntasks = info->nlocal;
	snprintf(plan->node_name, sizeof(plan->node_name), "%s",
	         info->node_name ? info->node_name : "localhost");
	plan->node_index = info->node_index;
	plan->node_count = info->node_count;
	plan->cpus_per_task = info->cpus_per_task > 1 ? info->cpus_per_task : 1;
	snprintf(plan->mapper, sizeof(plan->mapper), "%s",
	         cfg->mapper[0] ? cfg->mapper : TMATCH_DEFAULT_MAPPER);
	plan->cost = m_map.cost;
	plan->cost_packed = m_packed.cost;
	for (int a = 0; a < info->nlocal; a++) {
		tmatch_spank_task_t *t = &plan->task[a];

		t->rank = info->ranks[a];
		t->leaf = leaf_of[a];
		if (tmatch_affinity_leaf_cpulist(node, t->leaf, t->cpulist, sizeof(t->cpulist)) <
		        0 ||
		    tmatch_affinity_leaf_cpumask(node, t->leaf, t->cpumask, sizeof(t->cpumask)) <
		        0) {
			tmatch_error_set(err, 0, NULL, 0, 0, "leaf %d of the node tree has no CPU set", t->leaf);
			errno = EINVAL;
			goto out;
		}
		if (fill_position(node, t->leaf, info, t, err) < 0)
			goto out;
	}
	*out = plan;
	plan = NULL;
	rc = 0;
	goto out;
nomem:
	tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
	errno = ENOMEM;
out:
	tmatch_spank_plan_destroy(plan);
	tmatch_comm_destroy(sub);
	tmatch_comm_destroy(full);
	free(leaf_of);
	free(packed);
	return rc;
}

void tmatch_spank_plan_destroy(tmatch_spank_plan_t *plan)
{
	if (!plan)
		return;
	free(plan->task);
	free(plan);
}

/* ------------------------------------------------------------------------ */

static int env_add(tmatch_spank_env_t *env, int max, int n, const char *name, int overwrite,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int env_add(tmatch_spank_env_t *env, int max, int n, const char *name, int overwrite,
                   const char *fmt, ...)
{
	va_list ap;

	if (n >= max)
		return n;
	snprintf(env[n].name, sizeof(env[n].name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(env[n].value, sizeof(env[n].value), fmt, ap);
	va_end(ap);
	env[n].overwrite = overwrite;
	return n + 1;
}

/* OMP_PLACES for a CPU list: one place per CPU, "{0},{1},{4}". */
static void omp_places(const char *cpulist, char *buf, size_t len)
{
	const char *p = cpulist;
	size_t used = 0;

	buf[0] = '\0';
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi;

		if (end == p)
			break;
		hi = lo;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi && used + 24 < len; c++)
			used +=
			    (size_t)snprintf(buf + used, len - used, "%s{%ld}", used ? "," : "", c);
		p = *end == ',' ? end + 1 : end;
		if (p == end && *p)
			break;
	}
}

int tmatch_spank_task_env(const tmatch_spank_plan_t *plan, const tmatch_config_t *cfg, int local,
                          tmatch_spank_env_t *env, int max)
{
	const tmatch_spank_task_t *t;
	int n = 0;

	if (!plan || !cfg || !env || max < 0 || local < 0 || local >= plan->ntasks) {
		errno = EINVAL;
		return -1;
	}
	t = &plan->task[local];
	n = env_add(env, max, n, "TREEMATCH_RANK", 1, "%d", t->rank);
	n = env_add(env, max, n, "TREEMATCH_CPUS", 1, "%s", t->cpulist);
	n = env_add(env, max, n, "TREEMATCH_CPU_MASK", 1, "%s", t->cpumask);
	n = env_add(env, max, n, "TREEMATCH_LEVELS", 1, "%s", t->levels);
	n = env_add(env, max, n, "TREEMATCH_INDEX", 1, "%s", t->index);
	n = env_add(env, max, n, "TREEMATCH_COUNT", 1, "%s", t->count);
	n = env_add(env, max, n, "TREEMATCH_POSITION", 1, "%s", t->position);
	n = env_add(env, max, n, "TREEMATCH_MAPPER", 1, "%s", plan->mapper);
	n = env_add(env, max, n, "TREEMATCH_DRY_RUN", 1, "%d", cfg->dry_run ? 1 : 0);
	if (plan->cpus_per_task > 1) {
		char places[512];

		omp_places(t->cpulist, places, sizeof(places));
		n = env_add(env, max, n, "OMP_NUM_THREADS", 0, "%d", plan->cpus_per_task);
		n = env_add(env, max, n, "OMP_PLACES", 0, "%s", places);
		n = env_add(env, max, n, "OMP_PROC_BIND", 0, "close");
	}
	if (cfg->mpi_pin && !cfg->dry_run) {
		/* Keep the binding chosen here: Open MPI (mpirun inside the step
		   and direct launch), MPICH's Hydra, Intel MPI, MVAPICH2/3. */
		n = env_add(env, max, n, "OMPI_MCA_hwloc_base_binding_policy", 0, "none");
		n = env_add(env, max, n, "HYDRA_BINDING", 0, "none");
		n = env_add(env, max, n, "I_MPI_PIN", 0, "0");
		n = env_add(env, max, n, "MV2_ENABLE_AFFINITY", 0, "0");
		n = env_add(env, max, n, "MVP_ENABLE_AFFINITY", 0, "0");
	}
	return n;
}

int tmatch_spank_verbose_line(const tmatch_spank_plan_t *plan, int local, long pid, int dry_run,
                              char *buf, size_t len)
{
	const tmatch_spank_task_t *t;

	if (!plan || local < 0 || local >= plan->ntasks || (!buf && len)) {
		errno = EINVAL;
		return -1;
	}
	t = &plan->task[local];
	return snprintf(buf, len,
	                "treematch: cpu-bind=MAP - %s, task %2d %2d [%ld]: cpus %s mask %s %s",
	                plan->node_name, local, t->rank, pid, t->cpulist, t->cpumask,
	                dry_run ? "not set (dry-run)" : "set");
}

int tmatch_spank_summary_line(const tmatch_spank_plan_t *plan, int dry_run, char *buf, size_t len)
{
	double gain = 0.0;
	char total[80] = "";

	if (!plan || (!buf && len)) {
		errno = EINVAL;
		return -1;
	}
	if (plan->cost_packed > 0.0)
		gain = 100.0 * (plan->cost - plan->cost_packed) / plan->cost_packed;
	if (plan->node_seconds > 0.0)
		snprintf(total, sizeof(total), " (node plan %.1f ms, cpu %.1f ms)",
		         plan->node_seconds * 1e3, plan->node_cpu_seconds * 1e3);
	return snprintf(buf, len,
	                "treematch: %s: %d task(s) mapped by %s in %.1f ms%s, cost %.6g "
	                "(packed %.6g, %+.1f%%)%s",
	                plan->node_name, plan->ntasks, plan->mapper, plan->map_seconds * 1e3, total,
	                plan->cost, plan->cost_packed, gain,
	                dry_run ? ", dry-run: nothing bound" : "");
}
