/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node.c - a node's placement: whether the policy applies to this step
 * here, the tree of the step's CPUs (SMT policy, CPUs per task), the
 * node's sub-matrix, the mapping (in a limited child for the plugin), the
 * packed baseline, and each task's CPU set and position.
 */
#include "placement/placement_private.h"
#include "conf/topology.h"
#include "placement/gpu.h"
#include "placement/inputs.h"
#include "placement/matrix.h"
#include "placement/node.h"
#include "placement/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

int tmatch_place_job_has_whole_node(const char *job_cores, int node_cores)
{
	hwloc_bitmap_t set;
	int n = -1;

	if (!job_cores || node_cores <= 0 || !(set = hwloc_bitmap_alloc()))
		return 0;
	if (tmatch_affinity_cpuset_parse(job_cores, "core list", set, NULL) == 0)
		n = hwloc_bitmap_weight(set);
	hwloc_bitmap_free(set);
	return n > 0 && n >= node_cores;
}

int tmatch_place_smt_policy(int cpus_per_task)
{
	/* as Slurm counts CPUs: one task per core (all its hardware threads),
	   with -c N N hardware threads per task */
	return cpus_per_task > 1 ? TMATCH_AFFINITY_SMT_ALL : TMATCH_AFFINITY_SMT_CORE;
}

tmatch_affinity_tree_t *tmatch_place_node_tree(const tmatch_affinity_opts_t *opts, int nlocal,
                                               int *smt_used, tmatch_error_t *err)
{
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *t = NULL;
	int cpt, ncpus;
	char name[80];

	if (!opts || nlocal < 1) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_place_node_tree: invalid argument");
		return NULL;
	}
	o = *opts;
	cpt = o.cpus_per_task > 1 ? o.cpus_per_task : 1;
	/* "node n0: " before the message, nothing when the caller names it */
	if (o.node_name)
		snprintf(name, sizeof(name), "node %.64s: ", o.node_name);
	else
		name[0] = '\0';
	o.smt = tmatch_place_smt_policy(cpt);
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
	ncpus = hwloc_bitmap_weight(tmatch_affinity_tree_allowed_cpuset(t, 0));
	if (cpt > 1)
		tmatch_error_set(err, EOVERFLOW, NULL, 0, 0,
		                 "%s%d tasks of %d CPUs for %d CPU%s: more CPUs asked than "
		                 "the step has here (oversubscribed, e.g. --overcommit); ask for "
		                 "fewer tasks per node or more CPUs",
		                 name, nlocal, cpt, ncpus, ncpus == 1 ? "" : "s");
	else
		tmatch_error_set(
		    err, EOVERFLOW, NULL, 0, 0,
		    "%s%d tasks for %d CPU%s: more tasks than CPUs "
		    "(oversubscribed, e.g. --overcommit); ask for fewer tasks per node "
		    "or more CPUs",
		    name, nlocal, ncpus, ncpus == 1 ? "" : "s");
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

const char *tmatch_place_checked_nodelist(const char *nodelist, int node_count)
{
	if (!nodelist || !*nodelist || node_count < 1 ||
	    tmatch_affinity_hostlist_count(nodelist, node_count, NULL) != node_count)
		return NULL;
	return nodelist;
}

char *tmatch_place_node_name(const char *nodelist, int node_index, int node_count)
{
	return tmatch_place_node_name_hash(nodelist, node_index, node_count, NULL);
}

char *tmatch_place_node_name_hash(const char *nodelist, int node_index, int node_count,
                                  uint64_t *nodes_hash)
{
	char **names = NULL, *name = NULL;
	int n = 0;

	nodelist = tmatch_place_checked_nodelist(nodelist, node_count);
	if (nodelist && node_index >= 0)
		names = tmatch_affinity_hostlist_expand(nodelist, &n, NULL);
	name = strdup(names && node_index < n ? names[node_index] : "localhost");
	if (nodes_hash)
		*nodes_hash = names ? tmatch_place_nodes_hash(names, n) : 0;
	tmatch_affinity_hostlist_free(names);
	if (!name)
		errno = ENOMEM;
	return name;
}

/* ------------------------------------------------------------------------ */

static void log_to_nowhere(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	(void)msg;
}

/* Position of a leaf of this node's tree: from the cluster tree when there
   is one (switches, node), else node=i/n before the node's own levels. */
static int leaf_position(const tmatch_affinity_tree_t *node, int leaf,
                         const tmatch_affinity_tree_t *cluster, int cluster_node,
                         const tmatch_place_node_in_t *in, tmatch_affinity_pos_t *pos,
                         tmatch_error_t *err)
{
	tmatch_affinity_pos_t npos;

	memset(pos, 0, sizeof(*pos));
	if (tmatch_affinity_leaf_position(node, leaf, &npos, err) < 0)
		return -1;
	if (in->slice && in->slice->prefix.nlevels > 0) {
		/* the planner's switches and node, then this node's own levels */
		*pos = in->slice->prefix;
		for (int i = 0; i < npos.nlevels && pos->nlevels < TMATCH_AFFINITY_MAX_LEVELS; i++)
			if (strcmp(npos.level[i].name, "node") != 0)
				pos->level[pos->nlevels++] = npos.level[i];
		return 0;
	}
	if (cluster) {
		/* The same slot in the cluster tree: the k-th real leaf of this
		   node there is the k-th real leaf of the node tree. */
		int k = 0, found = -1, nl = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(node));
		int cl = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(cluster));

		for (int l = 0; l < leaf && l < nl; l++)
			k += tmatch_affinity_leaf_is_real(node, l);
		for (int l = 0; l < cl; l++) {
			if (!tmatch_affinity_leaf_is_real(cluster, l) ||
			    tmatch_affinity_leaf_node(cluster, l) != cluster_node)
				continue;
			if (k-- == 0) {
				found = l;
				break;
			}
		}
		if (found >= 0 && tmatch_affinity_leaf_position(cluster, found, pos, NULL) == 0)
			return 0;
		memset(pos, 0, sizeof(*pos));
	}
	snprintf(pos->level[0].name, sizeof(pos->level[0].name), "node");
	pos->level[0].index = in->node_index;
	pos->level[0].count = in->node_count > 0 ? in->node_count : 1;
	pos->level[0].global = in->node_index;
	pos->nlevels = 1;
	for (int i = 0; i < npos.nlevels && pos->nlevels < TMATCH_AFFINITY_MAX_LEVELS; i++)
		if (strcmp(npos.level[i].name, "node") != 0)
			pos->level[pos->nlevels++] = npos.level[i];
	return 0;
}

static tmatch_place_node_t *result_new(const tmatch_place_node_in_t *in, const char *node_name)
{
	tmatch_place_node_t *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	snprintf(r->node_name, sizeof(r->node_name), "%s", node_name ? node_name : "localhost");
	r->node_index = in->node_index;
	r->node_count = in->node_count;
	r->cpus_per_task = in->cpus_per_task > 1 ? in->cpus_per_task : 1;
	snprintf(r->mapper, sizeof(r->mapper), "%s",
	         in->cfg->mapper[0] ? in->cfg->mapper : TMATCH_DEFAULT_MAPPER);
	return r;
}

void tmatch_place_node_destroy(tmatch_place_node_t *node)
{
	if (!node)
		return;
	for (int i = 0; node->task && i < node->ntasks; i++) {
		hwloc_bitmap_free(node->task[i].cpuset);
		free(node->task[i].gpu);
	}
	free(node->task);
	free(node->gpu_step);
	hwloc_bitmap_free(node->allowed);
	free(node);
}

/* The cluster tree and this node's index in it, or NULL. */
static tmatch_affinity_tree_t *build_cluster(const tmatch_place_node_in_t *in,
                                             const tmatch_affinity_tree_t *node, int *owned)
{
	tmatch_affinity_conf_t *conf = NULL;
	tmatch_affinity_tree_t *cluster;

	*owned = 0;
	if (in->cluster)
		return (tmatch_affinity_tree_t *)in->cluster;
	if (in->node_count <= 1 || !tmatch_place_checked_nodelist(in->nodelist, in->node_count))
		return NULL;
	if (in->topology_conf)
		conf = tmatch_conf_topology_load_sel(in->topology_conf, in->topology_sel, NULL);
	cluster = tmatch_affinity_cluster_build(conf, in->nodelist, node, NULL, NULL);
	tmatch_affinity_conf_destroy(conf);
	*owned = cluster != NULL;
	return cluster;
}

static int find_node(const tmatch_affinity_tree_t *cluster, const char *name)
{
	for (int i = 0; cluster && i < tmatch_affinity_tree_nb_nodes(cluster); i++)
		if (strcmp(tmatch_affinity_tree_node_name(cluster, i), name) == 0)
			return i;
	return -1;
}

/* Where each local task's rank sits in the slice (a new array), or NULL
   with err when the slice does not hold exactly the node's ranks. */
static int *slice_order(const tmatch_place_node_in_t *in, tmatch_error_t *err)
{
	const tmatch_place_slice_t *s = in->slice;
	int *at;

	if (s->nranks != in->nlocal) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "the plan puts %d tasks on %s, Slurm started %d here: the plan "
		                 "is not for this step's distribution",
		                 s->nranks, s->node, in->nlocal);
		return NULL;
	}
	if (!(at = calloc((size_t)in->nlocal, sizeof(*at)))) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (int a = 0; a < in->nlocal; a++) {
		int lo = 0, hi = s->nranks, r = in->ranks[a];

		while (lo < hi) { /* s->rank is ascending */
			int mid = lo + (hi - lo) / 2;

			if (s->rank[mid] < r)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == s->nranks || s->rank[lo] != r) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "Slurm started rank %d on %s, the plan puts it elsewhere: "
			                 "the plan is not for this step's distribution",
			                 r, s->node);
			free(at);
			return NULL;
		}
		at[a] = lo;
	}
	return at;
}

/*
 * A GPU step's decision (placement/gpu.c) into leaf_of and res: the node's
 * devices, the step's GPUs from Slurm's words, each task's GPUs and card.
 * 0 with res->gpu_step set; 0 with nothing done when Slurm names no GPU
 * here (or the tree has no devices); -1 with err.
 */
static int gpu_map(const tmatch_place_node_in_t *in, const tmatch_affinity_tree_t *node,
                   const tmatch_comm_t *sub, tmatch_place_node_t *res, int *leaf_of,
                   tmatch_error_t *err)
{
	tmatch_affinity_devices_t *dev = tmatch_affinity_tree_devices(node, 0, err);
	tmatch_place_gpu_step_t *step = calloc(1, sizeof(*step));
	tmatch_place_gpu_in_t gin;
	tmatch_place_gpu_out_t out = {0};
	int rc = -1, r;

	if (!dev || !step) {
		if (dev)
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	r = tmatch_place_gpu_step(dev, in->gpu_env, step, err);
	if (r != 0) {
		rc = r > 0 ? 0 : -1; /* no GPU here: CPUs only */
		goto out;
	}
	memset(&gin, 0, sizeof(gin));
	gin.tree = node;
	gin.dev = dev;
	gin.step = step;
	gin.comm = sub;
	gin.nlocal = in->nlocal;
	gin.mapper = in->cfg->mapper[0] ? in->cfg->mapper : NULL;
	gin.seed = in->cfg->seed;
	gin.time_budget = in->cfg->max_map_time;
	if (tmatch_place_gpu_decide(&gin, &out, err) < 0)
		goto out;
	for (int a = 0; a < in->nlocal; a++) {
		tmatch_place_task_t *t = &res->task[a];

		leaf_of[a] = out.leaf[a];
		t->ngpus = out.ngpus[a];
		t->nic = out.nic[a];
		if (!(t->gpu = malloc(((size_t)t->ngpus + 1) * sizeof(int)))) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			goto out;
		}
		memcpy(t->gpu, out.gpu + (size_t)a * (size_t)out.stride,
		       (size_t)t->ngpus * sizeof(int));
	}
	res->gpus_per_task = out.stride;
	res->gpu_vendor = dev->gpu[step->gpu[0]].vendor;
	res->gpu_step = step;
	step = NULL;
	snprintf(res->mapper + strlen(res->mapper), sizeof(res->mapper) - strlen(res->mapper),
	         "+gpus");
	rc = 0;
out:
	tmatch_place_gpu_out_free(&out);
	tmatch_affinity_devices_destroy(dev);
	free(step);
	return rc;
}

int tmatch_place_node_map(const tmatch_place_node_in_t *in, const tmatch_affinity_tree_t *node,
                          tmatch_place_node_t **out, tmatch_error_t *err)
{
	const tmatch_config_t *cfg;
	const tmatch_topo_t *topo;
	tmatch_comm_t *full = NULL, *sub = NULL;
	tmatch_affinity_tree_t *cluster = NULL;
	tmatch_place_node_t *res = NULL;
	tmatch_map_opts_t mopts;
	tmatch_metrics_t m_map, m_packed;
	int *leaf_of = NULL, *packed = NULL, *slice_of = NULL, own_cluster = 0, cluster_node = -1;
	const tmatch_place_slice_t *slice = NULL;
	int rc = -1, nleaves, slots, order, mapped = 0, search_capped = 0;
	char *name = NULL;
	double t0;

	if (!in || !in->cfg || (!in->profile && !in->comm && !in->slice) || !node || !out ||
	    in->nlocal < 1 || !in->ranks)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_node_map: invalid argument");
	cfg = in->cfg;
	if (in->profile && tmatch_profile_check_ranks(in->profile, in->ntasks_total, err) < 0)
		return -1;
	if (!in->profile && !in->slice && (order = tmatch_comm_order(in->comm)) != in->ntasks_total)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "the matrix has %d ranks but the job step has %d tasks",
		                        order, in->ntasks_total);
	topo = tmatch_affinity_tree_topo(node);
	nleaves = tmatch_topo_nb_leaves(topo);
	slots = tmatch_affinity_tree_nb_slots(node);
	if (in->nlocal > slots)
		return tmatch_error_set(
		    err, EOVERFLOW, NULL, 0, 0,
		    "%d tasks on this node but the step has only %d slot(s) of %d CPU(s) here: "
		    "ask for fewer tasks per node or more CPUs",
		    in->nlocal, slots, in->cpus_per_task > 1 ? in->cpus_per_task : 1);
	/* one read of in->slice: clang-analyzer 21 did not see that the slice
	   stays the same, reading it again after the calls below */
	slice = in->slice;
	if (slice && !(slice_of = slice_order(in, err)))
		goto out;
	if (in->profile) {
		full = tmatch_place_comm(in->profile, cfg->metric, cfg->coll, err);
		if (!full)
			goto out;
	}
	/* One implementation with `treematch map --ranks`; a slice is already
	   this node's, in its own order. */
	if (in->slice)
		sub = tmatch_comm_submatrix(in->slice->comm, slice_of, in->nlocal, err);
	else
		sub = tmatch_comm_submatrix(full ? full : in->comm, in->ranks, in->nlocal, err);
	if (!sub)
		goto out;
	name = in->node_name ? strdup(in->node_name)
	                     : tmatch_place_node_name(in->nodelist, in->node_index, in->node_count);
	res = name ? result_new(in, name) : NULL;
	leaf_of = calloc((size_t)in->nlocal, sizeof(*leaf_of));
	packed = calloc((size_t)in->nlocal, sizeof(*packed));
	if (!res || !leaf_of || !packed)
		goto nomem;
	res->task = calloc((size_t)in->nlocal, sizeof(*res->task));
	res->allowed = hwloc_bitmap_dup(tmatch_affinity_tree_allowed_cpuset(node, 0));
	if (!res->task || !res->allowed)
		goto nomem;

	tmatch_map_opts_init(&mopts);
	mopts.mapper = cfg->mapper[0] ? cfg->mapper : NULL;
	mopts.seed = cfg->seed;
	mopts.time_budget = cfg->max_map_time;
	mopts.search_time = tmatch_place_search_time(cfg, &search_capped);
	mopts.log = log_to_nowhere;
	t0 = tmatch__place_now();
	if (in->gpu_env && !slice && gpu_map(in, node, sub, res, leaf_of, err) < 0)
		goto out; /* a GPU step: CPUs, GPUs and cards decided together */
	if (res->gpu_step) {
		/* decided above */
	} else if (slice && slice_of && slice->bind.node_sig != 0 &&
	           slice->bind.node_sig == tmatch_place_node_sig(node)) {
		/* the planner modelled this very tree: its leaves, checked below */
		for (int a = 0; a < in->nlocal; a++)
			// slice_of has nlocal
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			leaf_of[a] = slice->leaf[slice_of[a]];
		snprintf(res->mapper, sizeof(res->mapper), "plan-%s", slice->bind.mapper);
	} else if (in->isolate) {
		/* In a child with hard limits: slurmstepd must outlive the mapping
		   (time, memory, METIS's global state, a crash). The deadline is
		   enforced while it runs, not checked after. */
		if (tmatch__place_isolate_map(sub, topo, &mopts, cfg->max_map_time,
		                              cfg->max_map_memory, NULL, leaf_of, err) < 0)
			goto out;
		mapped = 1;
	} else {
		if (tmatch_map_compute(sub, topo, &mopts, leaf_of, err) < 0)
			goto out;
		mapped = 1;
	}
	if (mapped && !strcmp(res->mapper, TMATCH_DEFAULT_MAPPER)) {
		/* the default mapper's search (a named mapper has none) */
		res->search_time = mopts.search_time;
		res->search_cut_from = search_capped ? cfg->search_time : 0;
	}
	if (in->slice && strncmp(res->mapper, "plan-", 5) != 0)
		snprintf(res->mapper + strlen(res->mapper),
		         sizeof(res->mapper) - strlen(res->mapper), "-on-plan-slice");
	res->map_seconds = tmatch__place_now() - t0;
	if (tmatch_map_validate(topo, leaf_of, in->nlocal, err) < 0)
		goto out;
	/* Slurm's default block placement: local task i on the i-th slot. */
	for (int l = 0, i = 0; l < nleaves && i < in->nlocal; l++)
		if (tmatch_topo_is_allowed(topo, l))
			packed[i++] = l;
	if (tmatch_eval(sub, topo, leaf_of, &m_map, err) < 0 ||
	    tmatch_eval(sub, topo, packed, &m_packed, err) < 0)
		goto out;
	res->cost = m_map.cost;
	res->cost_packed = m_packed.cost;

	cluster = in->slice ? NULL : build_cluster(in, node, &own_cluster);
	cluster_node = find_node(cluster, res->node_name);
	if (cluster_node < 0)
		cluster = NULL;
	for (int a = 0; a < in->nlocal; a++) {
		tmatch_place_task_t *t = &res->task[a];
		hwloc_const_bitmap_t set;

		// ranks has nlocal (the contract)
		// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		t->rank = in->ranks[a];
		t->leaf = leaf_of[a];
		if (!res->gpu_step)
			t->nic = -1;
		set = tmatch_affinity_leaf_cpuset(node, t->leaf);
		if (!set) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "leaf %d of the node tree has no CPU set", t->leaf);
			goto out;
		}
		if (!(t->cpuset = hwloc_bitmap_dup(set)))
			goto nomem;
		if (leaf_position(node, t->leaf, cluster, cluster_node, in, &t->pos, err) < 0)
			goto out;
	}
	res->ntasks = in->nlocal;
	res->status = TMATCH_PLACE_PLACED;
	*out = res;
	res = NULL;
	rc = 0;
	goto out;
nomem:
	tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
out:
	if (res)
		res->ntasks = in->nlocal; /* free the CPU sets made so far */
	tmatch_place_node_destroy(res);
	if (own_cluster)
		tmatch_affinity_tree_destroy(cluster);
	tmatch_comm_destroy(sub);
	tmatch_comm_destroy(full);
	free(leaf_of);
	free(packed);
	free(slice_of);
	free(name);
	return rc;
}

/* A step the policy leaves to Slurm: a result saying why. */
static int skipped(const tmatch_place_node_in_t *in, const char *name, int level,
                   tmatch_place_node_t **out, tmatch_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int skipped(const tmatch_place_node_in_t *in, const char *name, int level,
                   tmatch_place_node_t **out, tmatch_error_t *err, const char *fmt, ...)
{
	tmatch_place_node_t *r = result_new(in, name);
	va_list ap;

	if (!r)
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "%s: out of memory", name);
	r->status = TMATCH_PLACE_SKIPPED;
	r->why_level = level;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	*out = r;
	return 0;
}

double tmatch_place_search_time(const tmatch_config_t *cfg, int *capped)
{
	/* the search is counted in steps, and a slow node must still finish
	   within max_map_time: half of it at most */
	double cap = cfg->max_map_time / 2;
	int cut = cfg->search_time > cap;

	if (capped)
		*capped = cut;
	return cut ? cap : cfg->search_time;
}

int tmatch_place_node_prepare(const tmatch_place_node_in_t *in, tmatch_place_node_prep_t *prep)
{
	tmatch_affinity_opts_t aopts;
	tmatch_error_t e;
	const char *xml;

	memset(prep, 0, sizeof(*prep));
	prep->whole = 1;
	if (!in || !in->cfg || in->nlocal < 0) {
		prep->tree_errno = EINVAL;
		snprintf(prep->tree_error, sizeof(prep->tree_error), "invalid argument");
		return -1;
	}
	tmatch_affinity_opts_init(&aopts);
	xml = in->cfg->topology_xml[0] ? in->cfg->topology_xml : NULL;
	tmatch_error_clear(&e);
	if (in->topology) {
		if (tmatch_place_node_spec(in->topology, &aopts, &e) < 0)
			goto fail;
	} else if (xml || in->topology_xml_text) {
		aopts.source = TMATCH_AFFINITY_SRC_XML;
		aopts.input = xml ? xml : "the node's XML";
		aopts.xml_buffer = in->topology_xml_text;
		aopts.xml_len = in->topology_xml_len;
		aopts.this_system = !in->cfg->dry_run;
	}
	aopts.alloc_cores = in->step_cores;
	aopts.cpus_per_task = in->cpus_per_task;
	aopts.log = in->log;
	aopts.log_arg = in->log_arg;
	/* a GPU step (Slurm named GPUs, the list not read here): the devices
	   too; CPU-only steps keep hwloc's cheapest load */
	aopts.io = tmatch_place_gpu_env_has_gpus(in->gpu_env);

	if (in->cfg->exclusive_only) {
		tmatch_affinity_opts_t whole = aopts;
		tmatch_affinity_tree_t *t;

		whole.alloc_cores = NULL;
		whole.cpus_per_task = 1;
		whole.smt = TMATCH_AFFINITY_SMT_CORE;
		t = tmatch_affinity_node_load(&whole, NULL);
		prep->whole = t && tmatch_place_job_has_whole_node(
		                       in->job_cores, tmatch_affinity_tree_nb_slots(t));
		tmatch_affinity_tree_destroy(t);
		if (!prep->whole)
			return 0; /* skipped: no tree needed */
	}
	prep->tree =
	    tmatch_place_node_tree(&aopts, in->nlocal > 0 ? in->nlocal : 1, &prep->smt, &e);
	if (prep->tree)
		return 0;
fail:
	prep->tree_errno = errno ? errno : EINVAL;
	tmatch_error_format(&e, prep->tree_error, sizeof(prep->tree_error));
	return -1;
}

void tmatch_place_node_prep_clear(tmatch_place_node_prep_t *prep)
{
	if (!prep)
		return;
	tmatch_affinity_tree_destroy(prep->tree);
	memset(prep, 0, sizeof(*prep));
}

int tmatch_place_node_decide(const tmatch_place_node_in_t *in, const tmatch_place_node_prep_t *prep,
                             tmatch_place_node_t **out, tmatch_error_t *err)
{
	tmatch_place_node_in_t mine;
	tmatch_error_t e;
	char *name = NULL, buf[sizeof(e.msg) + sizeof(e.file) + 32];
	int rc = -1, total;

	if (!in || !in->cfg || (!in->profile && !in->comm && !in->slice) || !prep || !out ||
	    in->nlocal < 0 || (in->nlocal > 0 && !in->ranks))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_node: invalid argument");
	mine = *in;
	name = in->node_name ? strdup(in->node_name)
	                     : tmatch_place_node_name(in->nodelist, in->node_index, in->node_count);
	if (!name)
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	mine.node_name = name;
	total = in->profile ? tmatch_profile_ranks(in->profile)
	        : in->slice ? (int)in->slice->bind.ntasks
	                    : tmatch_comm_order(in->comm);
	if (!in->user_profile && total != in->ntasks_total) {
		/* An admin default profile only applies to steps of its size. */
		rc = skipped(in, name, TMATCH_LOG_DEBUG, out, err,
		             "default profile has %d ranks, step has %u tasks: not applied", total,
		             (unsigned)in->ntasks_total);
		goto out;
	}
	if (!prep->whole) {
		rc = skipped(in, name, TMATCH_LOG_INFO, out, err,
		             "%s: the job does not have the whole node (exclusive_only=on): "
		             "Slurm's binding kept",
		             name);
		goto out;
	}
	if (!prep->tree) {
		if (prep->tree_errno == EOVERFLOW) /* "node n0: 4 tasks for 2 CPUs: ..." */
			tmatch_error_set(err, EOVERFLOW, NULL, 0, 0, "node %s: %s", name,
			                 prep->tree_error);
		else
			tmatch_error_set(err, prep->tree_errno ? prep->tree_errno : EINVAL, NULL, 0,
			                 0, "%s: cannot build the node topology: %s", name,
			                 prep->tree_error);
		goto out;
	}
	tmatch_error_clear(&e);
	if (tmatch_place_node_map(&mine, prep->tree, out, &e) < 0) {
		int saved = errno;

		tmatch_error_set(err, saved, NULL, 0, 0, "%s: %s", name,
		                 tmatch_error_format(&e, buf, sizeof(buf)));
		goto out;
	}
	(*out)->smt = prep->smt;
	rc = 0;
out:
	free(name);
	return rc;
}

int tmatch_place_node(const tmatch_place_node_in_t *in, tmatch_place_node_t **out,
                      tmatch_affinity_tree_t **node_tree, tmatch_error_t *err)
{
	tmatch_place_node_prep_t prep;
	int rc;

	if (!in || !in->cfg || (!in->profile && !in->comm && !in->slice) || !out ||
	    in->nlocal < 0 || (in->nlocal > 0 && !in->ranks))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_node: invalid argument");
	/* The tree is built before the profile's size is known to matter: a
	   skipped step costs a tree, which only a plugin's node pays. */
	tmatch_place_node_prepare(in, &prep);
	rc = tmatch_place_node_decide(in, &prep, out, err);
	if (rc == 0 && node_tree && (*out)->status == TMATCH_PLACE_PLACED) {
		*node_tree = prep.tree;
		prep.tree = NULL;
	}
	tmatch_place_node_prep_clear(&prep);
	return rc;
}
