/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * layout.c - the node of every rank of a step (`treematch layout`, used by
 * treematch-srun and the cli_filter path): the profile's ranks onto the
 * allocation's tree of switches (topology.conf) over nodes over task slots,
 * each node offering as many slots as Slurm gives it tasks, next to Slurm's
 * own block and cyclic layouts of the same tasks.
 */
#include "placement/placement_private.h"
#include "conf/topology.h"
#include "placement/inputs.h"
#include "placement/layout.h"
#include "placement/plan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tmatch_place_tasks_per_node(const char *spec, int nnodes, int *cap, tmatch_error_t *err)
{
	const char *p = spec;
	int filled = 0;

	if (!spec || !*spec)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "empty tasks-per-node");
	if (nnodes < 1 || !cap)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_tasks_per_node: no node");
	while (*p) {
		char *end;
		long v, times = 1;
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > INT_MAX)
			return tmatch_error_set(
			    err, EINVAL, NULL, 0, 0,
			    "tasks-per-node '%.64s', column %d: expected a count "
			    "such as 4, 2(x3) or 4,4,2",
			    spec, (int)(p - spec) + 1);
		p = end;
		if (*p == '(') {
			if (p[1] != 'x')
				return tmatch_error_set(
				    err, EINVAL, NULL, 0, 0,
				    "tasks-per-node '%.64s', column %d: expected "
				    "(xN) after a count",
				    spec, (int)(p - spec) + 1);
			errno = 0;
			times = strtol(p + 2, &end, 10);
			if (end == p + 2 || errno || times < 1 || *end != ')')
				return tmatch_error_set(
				    err, EINVAL, NULL, 0, 0,
				    "tasks-per-node '%.64s', column %d: expected "
				    "(xN) with N >= 1",
				    spec, (int)(p - spec) + 1);
			p = end + 1;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return tmatch_error_set(
			    err, EINVAL, NULL, 0, 0,
			    "tasks-per-node '%.64s', column %d: unexpected '%c'", spec,
			    (int)(p - spec) + 1, *p);
		/* a single plain count applies to every node */
		if (filled == 0 && !*p && times == 1 && !strchr(spec, '(') && !strchr(spec, ','))
			times = nnodes;
		if (times > nnodes - filled)
			return tmatch_error_set(
			    err, EINVAL, NULL, 0, 0,
			    "tasks-per-node '%.64s' gives more than the %d nodes", spec, nnodes);
		for (long k = 0; k < times; k++)
			cap[filled++] = (int)v;
	}
	if (filled != nnodes)
		return tmatch_error_set(
		    err, EINVAL, NULL, 0, 0,
		    "tasks-per-node '%.64s' gives %d nodes, the node list has %d", spec, filled,
		    nnodes);
	return 0;
}

static int sum_caps(const int *cap, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += cap[i];
	return s > INT_MAX ? INT_MAX : (int)s;
}

int tmatch_place_caps_from_slurm(const char *tasks_per_node, const char *cpus_per_node,
                                 const char *cpus_per_task, int nnodes, int ntasks, int *cap,
                                 tmatch_error_t *err)
{
	int per = cpus_per_task && atoi(cpus_per_task) > 0 ? atoi(cpus_per_task) : 1;

	if (tasks_per_node && tmatch_place_tasks_per_node(tasks_per_node, nnodes, cap, err) == 0 &&
	    sum_caps(cap, nnodes) >= ntasks)
		return 0;
	if (cpus_per_node && tmatch_place_tasks_per_node(cpus_per_node, nnodes, cap, err) == 0) {
		for (int i = 0; i < nnodes; i++)
			cap[i] /= per;
		return 0;
	}
	return tmatch_error_set(err, EINVAL, NULL, 0, 0,
	                        "give --tasks-per-node (no usable SLURM_TASKS_PER_NODE or "
	                        "SLURM_JOB_CPUS_PER_NODE in the environment)");
}

int tmatch_place_layout_block(int ntasks, int nnodes, const int *cap, int *node_of_rank)
{
	int node = 0, used = 0;
	for (int r = 0; r < ntasks; r++) {
		while (node < nnodes && used >= cap[node]) {
			node++;
			used = 0;
		}
		if (node == nnodes)
			return -1;
		node_of_rank[r] = node;
		used++;
	}
	return 0;
}

int tmatch_place_layout_cyclic(int ntasks, int nnodes, const int *cap, int *node_of_rank)
{
	int *used = calloc((size_t)(nnodes > 0 ? nnodes : 1), sizeof(int)), node = 0, rc = -1;
	if (!used)
		return -1;
	for (int r = 0; r < ntasks; r++) {
		int tries = 0;
		while (used[node] >= cap[node] && tries < nnodes) {
			node = (node + 1) % nnodes;
			tries++;
		}
		if (tries == nnodes)
			goto out;
		node_of_rank[r] = node;
		used[node]++;
		node = (node + 1) % nnodes;
	}
	rc = 0;
out:
	free(used);
	return rc;
}

void tmatch_place_traffic(const tmatch_comm_t *comm, const int *node_of_rank,
                          const int *switch_of_node, tmatch_place_traffic_t *t)
{
	int n = tmatch_comm_order(comm);
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < n; i++) {
		const int *cols;
		const double *w;
		int deg = tmatch_comm_row(comm, i, &cols, &w);
		for (int k = 0; k < deg; k++) {
			int j = cols[k], a, b;
			if (j <= i)
				continue;
			// node_of_rank holds ntasks >= the order
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			a = node_of_rank[i];
			// as above
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			b = node_of_rank[j];
			if (a == b)
				t->node += w[k];
			else if (switch_of_node[a] == switch_of_node[b])
				t->sw += w[k];
			else
				t->across += w[k];
			t->total += w[k];
		}
	}
}

tmatch_comm_t *tmatch_place_comm_widen(const tmatch_comm_t *comm, int ntasks, tmatch_error_t *err)
{
	int n = tmatch_comm_order(comm);
	size_t nnz = tmatch_comm_nnz(comm), e = 0;
	int *src, *dst;
	double *w;
	tmatch_comm_t *out = NULL;

	if (!comm || ntasks < n) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_place_comm_widen: fewer tasks than the matrix's ranks");
		return NULL;
	}
	src = malloc((nnz ? nnz : 1) * sizeof(int));
	dst = malloc((nnz ? nnz : 1) * sizeof(int));
	w = malloc((nnz ? nnz : 1) * sizeof(double));
	if (!src || !dst || !w) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto done;
	}
	for (int i = 0; i < n; i++) {
		const int *cols;
		const double *ws;
		int deg = tmatch_comm_row(comm, i, &cols, &ws);
		for (int k = 0; k < deg; k++)
			if (cols[k] > i) { /* each pair once: the weight is the pair's total */
				// each of the nnz entries once
				// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
				src[e] = i;
				dst[e] = cols[k];
				w[e++] = ws[k];
			}
	}
	out = tmatch_comm_from_edges(ntasks, e, src, dst, w, err);
done:
	free(src);
	free(dst);
	free(w);
	return out;
}

/* ------------------------------------------------------------------------ */

void tmatch_place_layout_destroy(tmatch_place_layout_t *l)
{
	if (!l)
		return;
	for (int i = 0; l->node_name && i < l->nnodes; i++)
		free(l->node_name[i]);
	free(l->node_name);
	free(l->cap);
	free(l->node_of_rank);
	free(l->switch_of_node);
	free(l->leaf_in_node);
	free(l->prefix);
	free(l);
}

/* The nodes given a task, in a new layout (names and capacities). EDOM when
   none may run a task or the ranks do not fit. */
static tmatch_place_layout_t *layout_nodes(const tmatch_place_layout_in_t *in, tmatch_error_t *err)
{
	tmatch_place_layout_t *l = calloc(1, sizeof(*l));
	char **names = NULL;
	int n = 0;

	if (!l) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	names = tmatch_affinity_hostlist_expand(in->nodelist, &n, err);
	if (!names)
		goto fail;
	l->node_name = calloc((size_t)n, sizeof(*l->node_name));
	l->cap = calloc((size_t)n, sizeof(*l->cap));
	if (!l->node_name || !l->cap) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	/* Nodes given no task take no part (a capacity of 0 means "all" in a
	   cluster tree). */
	for (int i = 0; i < n; i++) {
		if (in->cap[i] == 0)
			continue;
		if (!(l->node_name[l->nnodes] = strdup(names[i]))) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			goto fail;
		}
		l->cap[l->nnodes++] = in->cap[i];
	}
	tmatch_affinity_hostlist_free(names);
	names = NULL;
	if (l->nnodes == 0) {
		tmatch_error_set(err, EDOM, NULL, 0, 0,
		                 "no node may run a task (tasks per node all 0)");
		goto fail;
	}
	l->nslots = sum_caps(l->cap, l->nnodes);
	if (l->nslots < in->ntasks) {
		tmatch_error_set(err, EDOM, NULL, 0, 0,
		                 "%d ranks do not fit: the %d nodes offer %d task slots",
		                 in->ntasks, l->nnodes, l->nslots);
		goto fail;
	}
	l->ntasks = in->ntasks;
	return l;
fail:
	tmatch_affinity_hostlist_free(names);
	tmatch_place_layout_destroy(l);
	return NULL;
}

/* The node model's real leaves in order ([model] of them), for a plan. */
struct model {
	int *real, nreal;
	uint64_t sig;
};

/* The tree of the used nodes: switches x nodes x slots (or node_topology);
   with m, what a plan needs of the node model. */
static tmatch_affinity_tree_t *layout_tree(const tmatch_place_layout_in_t *in,
                                           const tmatch_place_layout_t *l, struct model *m,
                                           tmatch_error_t *err)
{
	tmatch_affinity_opts_t aopts;
	tmatch_affinity_tree_t *node = NULL, *cluster = NULL;
	tmatch_affinity_conf_t *conf = NULL;
	tmatch_error_t e;
	char synth[64], *list = NULL;
	size_t need = 1;

	tmatch_affinity_opts_init(&aopts);
	if (in->node_topology) {
		if (strncmp(in->node_topology, "synthetic:", 10) != 0 &&
		    strncmp(in->node_topology, "xml:", 4) != 0) {
			tmatch_error_set(err, EDOM, NULL, 0, 0,
			                 "--node-topology '%s': give synthetic:<hwloc string> or "
			                 "xml:FILE",
			                 in->node_topology);
			return NULL;
		}
		tmatch_place_node_spec(in->node_topology, &aopts, NULL);
	} else {
		int maxcap = 1;
		for (int i = 0; i < l->nnodes; i++)
			if (l->cap[i] > maxcap)
				maxcap = l->cap[i];
		snprintf(synth, sizeof(synth), "core:%d pu:1", maxcap);
		aopts.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
		aopts.input = synth;
	}
	tmatch_error_clear(&e);
	node = tmatch_place_node_load(&aopts, &e);
	if (!node) {
		tmatch_error_set(err, errno, NULL, 0, 0, "node topology: %s", e.msg);
		return NULL;
	}
	if (m) {
		int nl = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(node));

		m->sig = tmatch_place_node_sig(node);
		if (!(m->real = malloc(sizeof(*m->real) * (size_t)(nl > 0 ? nl : 1)))) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			goto out;
		}
		for (int leaf = 0; leaf < nl; leaf++)
			if (tmatch_affinity_leaf_is_real(node, leaf))
				m->real[m->nreal++] = leaf;
	}
	if (in->topology_conf &&
	    !(conf = tmatch_conf_topology_load_sel(in->topology_conf, in->topology_sel, err)))
		goto out;
	for (int i = 0; i < l->nnodes; i++)
		need += strlen(l->node_name[i]) + 1;
	if (!(list = malloc(need))) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	list[0] = '\0';
	for (int i = 0; i < l->nnodes; i++) {
		if (i)
			strcat(list, ",");
		strcat(list, l->node_name[i]);
	}
	cluster = tmatch_affinity_cluster_build(conf, list, node, l->cap, err);
out:
	free(list);
	tmatch_affinity_conf_destroy(conf);
	tmatch_affinity_tree_destroy(node);
	return cluster;
}

/* Leaf switch of every node, from a real leaf's position (0: no switch level);
   with l->prefix, also the node's levels down to itself. */
static void leaf_switches(const tmatch_affinity_tree_t *cluster, tmatch_place_layout_t *l)
{
	int nleaves = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(cluster));

	for (int i = 0; i < l->nnodes; i++)
		l->switch_of_node[i] = -1;
	for (int leaf = 0; leaf < nleaves; leaf++) {
		tmatch_affinity_pos_t pos;
		int node = tmatch_affinity_leaf_is_real(cluster, leaf)
		               ? tmatch_affinity_leaf_node(cluster, leaf)
		               : -1;
		if (node < 0 || node >= l->nnodes || l->switch_of_node[node] >= 0)
			continue;
		l->switch_of_node[node] = 0; /* no switch level: one switch */
		if (tmatch_affinity_leaf_position(cluster, leaf, &pos, NULL) < 0)
			continue;
		for (int k = 0; k < pos.nlevels; k++) {
			if (!strcmp(pos.level[k].name, "switch"))
				l->switch_of_node[node] = pos.level[k].global;
			if (l->prefix && !strcmp(pos.level[k].name, "node")) {
				l->prefix[node] = pos;
				l->prefix[node].nlevels = k + 1;
			}
		}
	}
	for (int i = 0; i < l->nnodes; i++)
		if (l->switch_of_node[i] < 0)
			l->switch_of_node[i] = 0; /* a node without slots */
}

/* For a plan: each rank's leaf in the node model (the k-th real leaf of its
   node in the cluster is the model's k-th real leaf), room for the prefixes. */
static int plan_parts(const tmatch_affinity_tree_t *cluster, const int *leaf, const struct model *m,
                      tmatch_place_layout_t *l, tmatch_error_t *err)
{
	int nleaves = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(cluster)), rc = -1;
	int *ordinal = malloc(sizeof(*ordinal) * (size_t)(nleaves > 0 ? nleaves : 1));
	int *seen = calloc((size_t)l->nnodes, sizeof(*seen));

	l->leaf_in_node = malloc(sizeof(*l->leaf_in_node) * (size_t)(l->ntasks ? l->ntasks : 1));
	l->prefix = calloc((size_t)l->nnodes, sizeof(*l->prefix));
	l->node_sig = m->sig;
	if (!ordinal || !seen || !l->leaf_in_node || !l->prefix) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	for (int c = 0; c < nleaves; c++) {
		int node = tmatch_affinity_leaf_is_real(cluster, c)
		               ? tmatch_affinity_leaf_node(cluster, c)
		               : -1;

		ordinal[c] = node >= 0 && node < l->nnodes ? seen[node]++ : -1;
	}
	for (int r = 0; r < l->ntasks; r++) {
		int k = ordinal[leaf[r]];

		if (k < 0 || k >= m->nreal) {
			tmatch_error_set(err, EIO, NULL, 0, 0,
			                 "internal error: rank %d has no leaf in the node model",
			                 r);
			goto out;
		}
		l->leaf_in_node[r] = m->real[k];
	}
	rc = 0;
out:
	free(ordinal);
	free(seen);
	return rc;
}

int tmatch_place_layout(const tmatch_place_layout_in_t *in, tmatch_place_layout_t **out,
                        tmatch_error_t *err)
{
	tmatch_place_layout_t *l = NULL;
	tmatch_affinity_tree_t *cluster = NULL;
	tmatch_comm_t *wide = NULL;
	const tmatch_comm_t *comm;
	tmatch_map_opts_t mopts;
	tmatch_error_t e;
	int *leaf = NULL, *block = NULL, *cyclic = NULL, rc = -1;
	unsigned char *used = NULL;
	struct model m = {NULL, 0, 0};

	if (!in || !in->comm || !in->nodelist || !in->cap || !out ||
	    in->ntasks < tmatch_comm_order(in->comm))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_layout: invalid argument");
	comm = in->comm;
	if (in->ntasks > tmatch_comm_order(comm)) {
		if (!(wide = tmatch_place_comm_widen(comm, in->ntasks, err)))
			return -1;
		comm = wide;
	}
	if (!(l = layout_nodes(in, err)))
		goto out;
	if (!(cluster = layout_tree(in, l, in->plan ? &m : NULL, err)))
		goto out;
	/* zeroed: clang-analyzer cannot see that the layouts fill every rank */
	l->node_of_rank = calloc((size_t)(in->ntasks ? in->ntasks : 1), sizeof(int));
	l->switch_of_node = calloc((size_t)l->nnodes, sizeof(int));
	leaf = calloc((size_t)(in->ntasks ? in->ntasks : 1), sizeof(int));
	block = calloc((size_t)(in->ntasks ? in->ntasks : 1), sizeof(int));
	cyclic = calloc((size_t)(in->ntasks ? in->ntasks : 1), sizeof(int));
	if (!l->node_of_rank || !l->switch_of_node || !leaf || !block || !cyclic) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	tmatch_map_opts_init(&mopts);
	if (in->mapper)
		mopts.mapper = in->mapper;
	mopts.seed = in->seed;
	mopts.log = in->log;
	mopts.log_arg = in->log_arg;
	tmatch_error_clear(&e);
	if (tmatch_map_compute(comm, tmatch_affinity_tree_topo(cluster), &mopts, leaf, &e)) {
		tmatch_error_set(err, errno, NULL, 0, 0, "mapping failed: %s", e.msg);
		goto out;
	}
	for (int r = 0; r < in->ntasks; r++) {
		int node = tmatch_affinity_leaf_node(cluster, leaf[r]);

		if (node < 0 || node >= l->nnodes) {
			tmatch_error_set(err, EIO, NULL, 0, 0,
			                 "internal error: rank %d on leaf %d has no node", r,
			                 leaf[r]);
			goto out;
		}
		l->node_of_rank[r] = node;
	}
	/* nodes holding a rank, in one pass (scanning the ranks once per node
	   took 2 s at 16,384 nodes) */
	used = calloc((size_t)l->nnodes, 1);
	if (!used) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	for (int r = 0; r < in->ntasks; r++)
		if (!used[l->node_of_rank[r]]) {
			used[l->node_of_rank[r]] = 1;
			l->nodes_used++;
		}
	if (in->plan && plan_parts(cluster, leaf, &m, l, err) < 0)
		goto out;
	leaf_switches(cluster, l);
	if (tmatch_place_layout_block(in->ntasks, l->nnodes, l->cap, block) ||
	    tmatch_place_layout_cyclic(in->ntasks, l->nnodes, l->cap, cyclic)) {
		tmatch_error_set(err, EIO, NULL, 0, 0,
		                 "internal error: block/cyclic layouts do not fit");
		goto out;
	}
	tmatch_place_traffic(comm, l->node_of_rank, l->switch_of_node, &l->traffic);
	tmatch_place_traffic(comm, block, l->switch_of_node, &l->block);
	tmatch_place_traffic(comm, cyclic, l->switch_of_node, &l->cyclic);
	*out = l;
	l = NULL;
	rc = 0;
out:
	tmatch_place_layout_destroy(l);
	tmatch_affinity_tree_destroy(cluster);
	tmatch_comm_destroy(wide);
	free(leaf);
	free(block);
	free(cyclic);
	free(used);
	free(m.real);
	return rc;
}
