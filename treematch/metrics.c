/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics.c - the metrics of a mapping on a tree: hop-bytes, tree cost,
 * traffic per level of common ancestor, the heaviest node uplink and the
 * Hoefler-Snir congestion and dilation, and the check that a mapping is one
 * rank per allowed leaf (tmatch_map_validate), which every metric needs.
 *
 * Every tree node at depth >= 1 has one uplink (to its parent); a pair of
 * ranks whose common ancestor is at depth c uses the uplinks of both
 * leaves' ancestors at depths c+1..depth, i.e. 2 x (depth - c) hops.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tmatch__map_check(const tmatch_topo_t *topo, const int *leaf_of_rank, int n, int *bad_rank,
                      tmatch_error_t *err)
{
	unsigned char *used = NULL;
	int rc = -1;

	if (!topo || (!leaf_of_rank && n > 0) || n < 0) {
		tmatch_error_set(err, 0, NULL, 0, 0, "invalid argument to tmatch_map_validate");
		errno = EINVAL;
		return -1;
	}
	used = calloc((size_t)topo->nb_leaves, 1);
	if (!used) {
		tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	for (int r = 0; r < n; r++) {
		int leaf = leaf_of_rank[r];
		if (bad_rank)
			*bad_rank = r;
		if (leaf < 0 || leaf >= topo->nb_leaves) {
			tmatch_error_set(err, 0, NULL, 0, 0, "rank %d is on leaf %d, outside 0..%d",
			                 r, leaf, topo->nb_leaves - 1);
			goto out;
		}
		if (topo->allowed && !topo->allowed[leaf]) {
			tmatch_error_set(err, 0, NULL, 0, 0,
			                 "rank %d is on leaf %d, which is not allowed", r, leaf);
			goto out;
		}
		if (used[leaf]) {
			tmatch_error_set(err, 0, NULL, 0, 0,
			                 "rank %d is on leaf %d, already used by another rank", r,
			                 leaf);
			goto out;
		}
		used[leaf] = 1;
	}
	if (bad_rank)
		*bad_rank = -1;
	rc = 0;
out:
	free(used);
	if (rc)
		errno = EINVAL;
	return rc;
}

int tmatch_map_validate(const tmatch_topo_t *topo, const int *leaf_of_rank, int n,
                        tmatch_error_t *err)
{
	return tmatch__map_check(topo, leaf_of_rank, n, NULL, err);
}

double tmatch__hop_bytes(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                         const int *leaf_of_rank)
{
	struct tmatch__codes k;
	uint64_t *code = NULL;
	double hb = 0;

	/* the ranks' leaf codes when the tree has them and the memory is there
	   (mappers compare many candidates: a division per level and edge was
	   a tenth of TreeMatch's time on a dense 256-rank matrix); the sums
	   are the same either way */
	if (tmatch__codes_init(topo, &k) == 0 && (code = malloc(sizeof(*code) * (size_t)comm->n)))
		for (int i = 0; i < comm->n; i++)
			code[i] = tmatch__leaf_code(topo, &k, leaf_of_rank[i]);
	for (int i = 0; i < comm->n; i++) {
		int li = leaf_of_rank[i];
		for (size_t e = comm->row_ptr[i]; e < comm->row_ptr[i + 1]; e++) {
			int j = comm->col[e];
			if (j <= i)
				continue;
			hb += comm->w[e] * 2.0 *
			      (code ? tmatch__code_distance(&k, code[i], code[j])
			            : tmatch__distance(topo, li, leaf_of_rank[j]));
		}
	}
	free(code);
	return hb;
}

int tmatch__order_is_local(const tmatch_comm_t *comm, const tmatch_topo_t *topo)
{
	double near = 0, all = 0;
	int b = 1;

	for (int l = topo->depth - 1; l >= 0 && b == 1; l--)
		b = topo->span[l];
	for (int i = 0; i < comm->n; i++)
		for (size_t e = comm->row_ptr[i]; e < comm->row_ptr[i + 1]; e++) {
			all += comm->w[e];
			if (comm->col[e] / b == i / b)
				near += comm->w[e];
		}
	/* and well above what a random numbering keeps there, (B - 1) / (n - 1) */
	return all > 0 && near >= TMATCH__LOCAL_ORDER_MIN * all &&
	       near * (comm->n - 1) >= 4.0 * (b - 1) * all;
}

static int cmp_by_leaf(const void *a, const void *b, void *arg)
{
	const int *leaf = arg;
	int la = leaf[*(const int *)a], lb = leaf[*(const int *)b];
	return (la > lb) - (la < lb);
}

int tmatch_eval(const tmatch_comm_t *comm, const tmatch_topo_t *topo, const int *leaf_of_rank,
                tmatch_metrics_t *out, tmatch_error_t *err)
{
	tmatch_metrics_t m;
	int n, D, *order = NULL, rc = -1;
	double *ext = NULL, traffic = 0;

	if (!comm || !topo || !leaf_of_rank || !out) {
		tmatch_error_set(err, 0, NULL, 0, 0, "tmatch_eval: NULL argument");
		errno = EINVAL;
		return -1;
	}
	n = comm->n;
	if (n > topo->nb_leaves) {
		tmatch_error_set(err, 0, NULL, 0, 0, "%d ranks cannot be mapped on %d leaves", n,
		                 topo->nb_leaves);
		errno = EINVAL;
		return -1;
	}
	/* Metrics of a mapping that is not one leaf per rank would be meaningless. */
	if (tmatch_map_validate(topo, leaf_of_rank, n, err))
		return -1;
	D = topo->depth;
	memset(&m, 0, sizeof(m));
	order = malloc(sizeof(*order) * (size_t)(n ? n : 1));
	ext = malloc(sizeof(*ext) * (size_t)(n ? n : 1));
	if (!order || !ext) {
		tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		int li = leaf_of_rank[i];
		for (size_t e = comm->row_ptr[i]; e < comm->row_ptr[i + 1]; e++) {
			int j = comm->col[e], d;
			double w = comm->w[e];
			if (j <= i)
				continue;
			d = tmatch__distance(topo, li, leaf_of_rank[j]);
			m.hop_bytes += w * 2.0 * d;
			m.cost += w * (d ? topo->cost[D - d] : 0);
			m.level_traffic[D - d] += w;
			traffic += w;
			if (w > 0 && 2 * d > m.dilation_max)
				m.dilation_max = 2 * d;
		}
	}
	m.dilation_avg = traffic > 0 ? m.hop_bytes / traffic : 0;

	/* Uplink traffic of each node holding ranks: ranks in leaf order make
	   every node a contiguous run; sum what each rank sends outside it. */
	for (int i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, (size_t)n, sizeof(*order), cmp_by_leaf, (void *)leaf_of_rank);
	m.max_node_traffic = -1;
	for (int l = 1; l <= D; l++) {
		int span = topo->span[l];
		for (int i = 0; i < n; i++) {
			int li = leaf_of_rank[i];
			ext[i] = 0;
			for (size_t e = comm->row_ptr[i]; e < comm->row_ptr[i + 1]; e++)
				if (li / span != leaf_of_rank[comm->col[e]] / span)
					ext[i] += comm->w[e];
		}
		for (int a = 0; a < n;) {
			int node = leaf_of_rank[order[a]] / span, b = a;
			double sum = 0;
			while (b < n && leaf_of_rank[order[b]] / span == node)
				sum += ext[order[b++]];
			if (sum > m.max_node_traffic) {
				m.max_node_traffic = sum;
				m.max_node_depth = l;
				m.max_node_index = node;
			}
			a = b;
		}
	}
	if (m.max_node_traffic < 0) {
		m.max_node_traffic = 0;
		m.max_node_depth = 0;
		m.max_node_index = 0;
	}
	m.congestion = m.max_node_traffic; /* every link has capacity 1 */
	*out = m;
	rc = 0;
out:
	free(order);
	free(ext);
	return rc;
}
