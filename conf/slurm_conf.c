/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slurm_conf.c - what slurm.conf says about topologies, the one reader of
 * its Topology= keys (Slurm 25.05 and later):
 *
 *   PartitionName=gpu Nodes=g[1-64] Topology=nvl   the partition's topology
 *   PartitionName=DEFAULT Topology=ib              ... of the partitions
 *                                                  that name none
 *   NodeName=g[1-4] Topology=nvl:b1,ib:s1:s7       a node's place in named
 *                                                  topologies, overriding
 *                                                  topology.yaml (a block,
 *                                                  or a leaf switch with the
 *                                                  switches above it)
 *   NodeName=DEFAULT Topology=...                  ... of the NodeName lines
 *                                                  that give none
 *
 * The lines are Slurm's Key=Value (tmatch__kv_read, leniently: "Include"
 * lines and every other key are Slurm's business). The admin's file, but
 * read with the same bounds as any other. What it says goes to affinity/'s
 * builder (struct tmatch_affinity_slurm_topo, affinity/network.h), which
 * applies the moves.
 */
#include "conf/conf_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	struct tmatch_affinity_slurm_topo *out;
	const char *partition; /* NULL: the Default=YES partition */
	tmatch_error_t *err;
	int cap;
	char *dflt_node; /* NodeName=DEFAULT's Topology= */
	int dflt_line, dflt_col;
	char *dflt_part; /* PartitionName=DEFAULT's Topology= */
	int dflt_part_line, dflt_part_col;
	int part_found; /* the partition's line was read */
};

static int oom(struct reader *r)
{
	return tmatch_error_set(r->err, ENOMEM, NULL, 0, 0, "out of memory");
}

/* Replace *slot with a copy of val. */
static int keep(struct reader *r, char **slot, const char *val)
{
	char *c = strdup(val);

	if (!c)
		return oom(r);
	free(*slot);
	*slot = c;
	return 0;
}

static int node_line(struct reader *r, const struct tmatch__kv *name, const struct tmatch__kv *topo)
{
	struct tmatch_affinity_slurm_topo *o = r->out;
	struct tmatch_affinity_node_topo *nt;

	if (!strcmp(name->val, "DEFAULT")) {
		if (!topo)
			return 0;
		r->dflt_line = topo->vline;
		r->dflt_col = topo->vcol;
		return keep(r, &r->dflt_node, topo->val);
	}
	if (!topo && !r->dflt_node)
		return 0;
	if (o->nnode == r->cap) {
		int ncap = r->cap ? 2 * r->cap : 16;
		struct tmatch_affinity_node_topo *v = realloc(o->node, (size_t)ncap * sizeof(*v));

		if (!v)
			return oom(r);
		o->node = v;
		r->cap = ncap;
	}
	nt = &o->node[o->nnode];
	memset(nt, 0, sizeof(*nt));
	nt->line = topo ? topo->vline : r->dflt_line;
	nt->col = topo ? topo->vcol : r->dflt_col;
	nt->nodes = strdup(name->val);
	nt->topology = strdup(topo ? topo->val : r->dflt_node);
	o->nnode++;
	if (!nt->nodes || !nt->topology)
		return oom(r);
	return 0;
}

static int part_line(struct reader *r, const struct tmatch__kv *name, const struct tmatch__kv *topo,
                     int is_default)
{
	struct tmatch_affinity_slurm_topo *o = r->out;

	if (!strcmp(name->val, "DEFAULT")) {
		if (!topo)
			return 0;
		r->dflt_part_line = topo->vline;
		r->dflt_part_col = topo->vcol;
		return keep(r, &r->dflt_part, topo->val);
	}
	if (r->part_found || (r->partition ? strcmp(name->val, r->partition) != 0 : !is_default))
		return 0;
	r->part_found = 1;
	if (topo) {
		o->part_line = topo->vline;
		o->part_col = topo->vcol;
		return keep(r, &o->partition_topology, topo->val);
	}
	if (r->dflt_part) {
		o->part_line = r->dflt_part_line;
		o->part_col = r->dflt_part_col;
		return keep(r, &o->partition_topology, r->dflt_part);
	}
	return 0;
}

static int one_line(void *arg, struct tmatch__kv *kv, int n)
{
	struct reader *r = arg;
	const struct tmatch__kv *topo = NULL;
	int is_default = 0;

	for (int i = 1; i < n; i++) {
		if (tmatch__kv_is(&kv[i], "Topology"))
			topo = &kv[i];
		else if (tmatch__kv_is(&kv[i], "Default"))
			is_default = !strcasecmp(kv[i].val, "YES");
	}
	if (tmatch__kv_is(&kv[0], "NodeName"))
		return node_line(r, &kv[0], topo);
	if (tmatch__kv_is(&kv[0], "PartitionName"))
		return part_line(r, &kv[0], topo, is_default);
	return 0;
}

void tmatch__slurm_topo_clear(struct tmatch_affinity_slurm_topo *st)
{
	if (!st)
		return;
	for (int i = 0; i < st->nnode; i++) {
		free(st->node[i].nodes);
		free(st->node[i].topology);
	}
	free(st->node);
	free(st->partition_topology);
	memset(st, 0, sizeof(*st));
}

int tmatch__slurm_topo_parse(const char *text, const char *file, const char *partition,
                             struct tmatch_affinity_slurm_topo *out, tmatch_error_t *err)
{
	struct reader r;
	int rc;

	memset(out, 0, sizeof(*out));
	out->file = file;
	memset(&r, 0, sizeof(r));
	r.out = out;
	r.partition = partition && *partition ? partition : NULL;
	r.err = err;
	rc = tmatch__kv_read(text, file, 1, one_line, &r, err);
	free(r.dflt_node);
	free(r.dflt_part);
	if (rc < 0)
		tmatch__slurm_topo_clear(out);
	else
		out->file = file;
	return rc;
}

char *tmatch_conf_slurm_read(const char *path, tmatch_error_t *err)
{
	size_t len = 0;
	char *text = tmatch_file_read(path ? path : "/etc/slurm/slurm.conf",
	                              TMATCH_TOPOLOGY_CONF_BYTES, &len, err);

	if (text && strlen(text) != len) {
		tmatch_error_set(err, EINVAL, path, 0, 0, "contains a NUL byte: not a text file");
		free(text);
		return NULL;
	}
	return text;
}
