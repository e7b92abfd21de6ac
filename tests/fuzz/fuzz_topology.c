/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_topology.c - libFuzzer harness for a cluster's network as Slurm
 * describes it: topology.yaml (libyaml, conf/topology_yaml.c),
 * topology.conf's tree, block and ring lines (conf/topology_conf.c) and
 * slurm.conf's Topology= keys (conf/slurm_conf.c), through
 * tmatch_conf_topology_parse_sel. The first byte picks how the text is
 * read (bits 0-1: by its content, as topology.yaml, as topology.conf, or
 * split at a line "%%" into slurm.conf before and the topology after; bit
 * 2: ask for the topology "t"; bit 3: the job's partition is "p"). A reader
 * either accepts or says why; an accepted network is a forest (every
 * switch's parent lists it, levels one above the highest child, no cycle)
 * with each node under one switch, and the cluster tree of its first nodes
 * builds.
 */
#include "affinity/affinity_private.h"
#include "conf/topology.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tmatch_affinity_tree_t *node_tree(void)
{
	static tmatch_affinity_tree_t *t;

	if (!t) {
		tmatch_affinity_opts_t o;

		tmatch_affinity_opts_init(&o);
		o.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
		o.input = "pack:1 core:1 pu:1";
		if (!(t = tmatch_affinity_node_load(&o, NULL)))
			abort();
	}
	return t;
}

/* The forest's rules, and the cluster tree of at most 8 of its nodes. */
static void check(const tmatch_affinity_conf_t *c)
{
	char list[8 * 70] = "";
	size_t used = 0;
	int picked = 0;

	for (int i = 0; i < c->nsw; i++) {
		const struct tmatch__sw *s = &c->sw[i];
		int found = s->parent < 0, top = -1;

		if (s->parent >= c->nsw || s->parent == i)
			abort();
		for (int k = 0; s->parent >= 0 && k < c->sw[s->parent].nchild; k++)
			found |= c->sw[s->parent].child[k] == i;
		for (int k = 0; k < s->nchild; k++) {
			if (s->child[k] < 0 || s->child[k] >= c->nsw)
				abort();
			if (c->sw[s->child[k]].level > top)
				top = c->sw[s->child[k]].level;
		}
		if (!found || s->level != top + 1)
			abort();
		for (int k = 0; k < s->nnodes && picked < 8; k++) {
			size_t n = strlen(s->nodes[k]);

			/* plain names only: the list is a hostlist */
			if (n == 0 || n > 64 || strpbrk(s->nodes[k], "[],"))
				continue;
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
			                         picked ? "," : "", s->nodes[k]);
			picked++;
		}
	}
	if (picked) {
		tmatch_error_t err;
		tmatch_affinity_tree_t *t =
		    tmatch_affinity_cluster_build(c, list, node_tree(), NULL, &err);

		/* a node twice in the list (one name under two spellings) is refused */
		if (!t && !err.msg[0])
			abort();
		if (t && tmatch_affinity_tree_nb_nodes(t) != picked)
			abort();
		tmatch_affinity_tree_destroy(t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {NULL, "topology.yaml", "topology.conf", NULL};
	tmatch_conf_topo_sel_t sel = {NULL, NULL, NULL, "slurm.conf"};
	tmatch_affinity_conf_t *c;
	tmatch_error_t err;
	char *text = fuzz_text(data, size, 65536), *topo;

	if (!text)
		return 0;
	topo = text;
	if ((data[0] & 3) == 3) {
		char *cut = strstr(text, "\n%%\n");

		if (cut) {
			*cut = '\0';
			sel.slurm_conf = text;
			topo = cut + 4;
		}
	}
	if (data[0] & 4)
		sel.topology = "t";
	if (data[0] & 8)
		sel.partition = "p";
	tmatch_error_clear(&err);
	c = tmatch_conf_topology_parse_sel(topo, names[data[0] & 3], &sel, &err);
	if (!c && !err.msg[0])
		abort();
	if (c)
		check(c);
	tmatch_affinity_conf_destroy(c);
	free(text);
	return 0;
}
