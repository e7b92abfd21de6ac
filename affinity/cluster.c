/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cluster.c - the tree of a step: the switches of the network (topology.conf
 * or topology.yaml: tree switches, blocks, ring segments, torus tiles) that lead to
 * the step's nodes, the nodes, and a copy of the node tree under each.
 *
 * Unbalanced switch trees are handled as the TreeMatch paper says: a node
 * that sits higher than the others gets virtual single-child switches above
 * it, so every node is at the same depth; then each level is padded to its
 * largest arity with leaves nobody may use.
 */
#include "affinity/affinity_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct nodeent {
	const char *name;
	int idx; /* position in the nodelist = node index */
};

static int nodeent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nodeent *)a)->name, ((const struct nodeent *)b)->name);
}

struct cbuild {
	const tmatch_affinity_conf_t *conf;
	char **names;
	int n;
	struct nodeent *sorted;
	int *node_sw;                                /* switch of node i (-1 = none) */
	int *has;                                    /* per switch: step nodes below */
	int counter[TMATCH_AFFINITY_MAX_LEVELS + 1]; /* per switch level */
	const tmatch_affinity_tree_t *nt;
	const int *capacity;
	int node_counter;
	tmatch_error_t *err;
};

/* Copy the node tree under node i and fix its leaves' node and position. */
static struct tmatch__xnode *make_node(struct cbuild *b, int i, const struct tmatch__pos *prefix,
                                       int index, int count)
{
	struct tmatch__xnode *x = tmatch__xnode_copy(b->nt->root);
	int used = 0, cap = b->capacity ? b->capacity[i] : 0;
	if (!x)
		return NULL;
	x->kind = TMATCH__K_NODE;
	x->global = i;
	/* depth-first over the copy: set node, prefix the position, apply capacity */
	{
		struct tmatch__xnode **todo = malloc(sizeof(struct tmatch__xnode *) * 64);
		int ntodo = 0, tcap = 64;
		if (!todo) {
			tmatch__xnode_free(x);
			return NULL;
		}
		todo[ntodo++] = x;
		while (ntodo) {
			struct tmatch__xnode *c = todo[--ntodo];
			int k;
			if (c->nchild == 0) {
				struct tmatch__pos p = *prefix;
				int m;
				if (p.n < TMATCH_AFFINITY_MAX_LEVELS) {
					p.kind[p.n] = TMATCH__K_NODE;
					p.swlevel[p.n] = 0;
					p.index[p.n] = index;
					p.count[p.n] = count;
					p.global[p.n] = i;
					p.n++;
				}
				/* the node tree's position starts with its own node level */
				for (m = 1; m < c->pos.n && p.n < TMATCH_AFFINITY_MAX_LEVELS; m++) {
					p.kind[p.n] = c->pos.kind[m];
					p.swlevel[p.n] = c->pos.swlevel[m];
					p.index[p.n] = c->pos.index[m];
					p.count[p.n] = c->pos.count[m];
					p.global[p.n] = c->pos.global[m];
					p.n++;
				}
				c->pos = p;
				c->node = i;
				if (c->cpuset && !c->disabled) {
					if (cap > 0 && used >= cap)
						c->disabled = 1;
					else
						used++;
				}
				continue;
			}
			/* push children in reverse so they pop in order */
			for (k = c->nchild - 1; k >= 0; k--) {
				if (ntodo == tcap) {
					struct tmatch__xnode **t =
					    realloc(todo, sizeof(struct tmatch__xnode *) * 2 *
					                      (size_t)tcap);
					if (!t) {
						free(todo);
						tmatch__xnode_free(x);
						return NULL;
					}
					todo = t;
					tcap *= 2;
				}
				todo[ntodo++] = c->child[k];
			}
		}
		free(todo);
	}
	return x;
}

static int find_node(const struct cbuild *b, const char *name)
{
	struct nodeent key = {name, 0}, *e;
	e = bsearch(&key, b->sorted, (size_t)b->n, sizeof(key), nodeent_cmp);
	return e ? e->idx : -1;
}

/* Build switch s (which has step nodes below it). */
static struct tmatch__xnode *make_switch(struct cbuild *b, int s, const struct tmatch__pos *prefix,
                                         int index, int count)
{
	const struct tmatch__sw *sw = &b->conf->sw[s];
	struct tmatch__xnode *x = tmatch__xnode_new(TMATCH__K_SWITCH);
	struct tmatch__pos p = *prefix;
	int k, nsub = 0, nn = 0, pos = 0;
	if (!x)
		return NULL;
	x->swlevel = sw->level;
	x->global = b->counter[sw->level < TMATCH_AFFINITY_MAX_LEVELS ? sw->level : 0]++;
	if (p.n < TMATCH_AFFINITY_MAX_LEVELS) {
		p.kind[p.n] = TMATCH__K_SWITCH;
		p.swlevel[p.n] = (unsigned char)sw->level;
		p.index[p.n] = index;
		p.count[p.n] = count;
		p.global[p.n] = x->global;
		p.n++;
	}
	for (k = 0; k < sw->nchild; k++)
		if (b->has[sw->child[k]])
			nsub++;
	for (k = 0; k < b->n; k++)
		if (b->node_sw[k] == s)
			nn++;
	for (k = 0; k < sw->nchild; k++) {
		struct tmatch__xnode *c;
		if (!b->has[sw->child[k]])
			continue;
		c = make_switch(b, sw->child[k], &p, pos++, nsub + nn);
		if (!c || tmatch__xnode_add(x, c) < 0) {
			tmatch__xnode_free(c);
			goto fail;
		}
	}
	/* the step's nodes under this switch, in nodelist order */
	for (k = 0; k < b->n; k++) {
		struct tmatch__xnode *c;
		if (b->node_sw[k] != s)
			continue;
		c = make_node(b, k, &p, pos++, nsub + nn);
		if (!c || tmatch__xnode_add(x, c) < 0) {
			tmatch__xnode_free(c);
			goto fail;
		}
	}
	return x;
fail:
	tmatch__xnode_free(x);
	return NULL;
}

/* Depth of the nodes (kind NODE) below n; max and min. */
static void node_depths(const struct tmatch__xnode *n, int d, int *mn, int *mx)
{
	int i;
	if (n->kind == TMATCH__K_NODE) {
		if (d < *mn)
			*mn = d;
		if (d > *mx)
			*mx = d;
		return;
	}
	for (i = 0; i < n->nchild; i++)
		node_depths(n->child[i], d + 1, mn, mx);
}

/* Put virtual switches above nodes that are higher than `target`. */
static int lower_nodes(struct tmatch__xnode *n, int d, int target)
{
	int i;
	for (i = 0; i < n->nchild; i++) {
		struct tmatch__xnode *c = n->child[i];
		if (c->kind == TMATCH__K_NODE) {
			if (tmatch__xnode_raise(&n->child[i], target - d - 1) < 0)
				return -1;
		} else if (lower_nodes(c, d + 1, target) < 0) {
			return -1;
		}
	}
	return 0;
}

tmatch_affinity_tree_t *tmatch_affinity_cluster_build(const tmatch_affinity_conf_t *conf,
                                                      const char *nodelist,
                                                      const tmatch_affinity_tree_t *node_tree,
                                                      const int *capacity, tmatch_error_t *err)
{
	struct cbuild b;
	tmatch_affinity_tree_t *tree = NULL;
	struct tmatch__xnode *root = NULL;
	struct tmatch__pos prefix;
	int i, s;

	memset(&b, 0, sizeof(b));
	memset(&prefix, 0, sizeof(prefix));
	b.conf = conf;
	b.nt = node_tree;
	b.capacity = capacity;
	b.err = err;
	if (!node_tree || !node_tree->root || node_tree->nb_nodes != 1) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "the cluster tree needs a node tree");
		return NULL;
	}
	b.names = tmatch_affinity_hostlist_expand(nodelist, &b.n, err);
	if (!b.names)
		return NULL;
	if (b.n == 0) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "empty node list");
		goto fail;
	}
	b.sorted = malloc((size_t)b.n * sizeof(*b.sorted));
	b.node_sw = malloc((size_t)b.n * sizeof(int));
	if (!b.sorted || !b.node_sw)
		goto oom;
	for (i = 0; i < b.n; i++) {
		b.sorted[i].name = b.names[i];
		b.sorted[i].idx = i;
		b.node_sw[i] = -1;
		if (capacity && (capacity[i] < 0 || capacity[i] > node_tree->nb_slots)) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "node %s: %d tasks but the node tree has %d slots",
			                 b.names[i], capacity[i], node_tree->nb_slots);
			goto fail;
		}
	}
	qsort(b.sorted, (size_t)b.n, sizeof(*b.sorted), nodeent_cmp);
	for (i = 1; i < b.n; i++)
		if (!strcmp(b.sorted[i - 1].name, b.sorted[i].name)) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "node %.64s appears twice in the node list",
			                 b.sorted[i].name);
			goto fail;
		}

	if (conf && conf->nsw > 0) {
		int ntop = 0, top = -1;
		b.has = calloc((size_t)conf->nsw, sizeof(int));
		if (!b.has)
			goto oom;
		for (s = 0; s < conf->nsw; s++)
			for (i = 0; i < conf->sw[s].nnodes; i++) {
				int k = find_node(&b, conf->sw[s].nodes[i]);
				if (k >= 0) {
					int a;
					b.node_sw[k] = s;
					for (a = s; a >= 0; a = conf->sw[a].parent)
						b.has[a] = 1;
				}
			}
		for (i = 0; i < b.n; i++)
			if (b.node_sw[i] < 0) {
				tmatch_error_set(
				    err, EINVAL, conf->file, 0, 0,
				    "node %.64s is under no switch of this %s topology", b.names[i],
				    tmatch_affinity_conf_kind(conf));
				goto fail;
			}
		for (s = 0; s < conf->nsw; s++)
			if (conf->sw[s].parent < 0 && b.has[s]) {
				ntop++;
				top = s;
			}
		if (ntop == 1) {
			root = make_switch(&b, top, &prefix, 0, 1);
		} else {
			/* several top switches: a virtual root joins them */
			int pos = 0;
			root = tmatch__xnode_new(TMATCH__K_CLUSTER);
			for (s = 0; root && s < conf->nsw; s++) {
				struct tmatch__xnode *c;
				if (conf->sw[s].parent >= 0 || !b.has[s])
					continue;
				c = make_switch(&b, s, &prefix, pos++, ntop);
				if (!c || tmatch__xnode_add(root, c) < 0) {
					tmatch__xnode_free(c);
					goto oom;
				}
			}
		}
		if (!root)
			goto oom;
	} else {
		/* no topology.conf: one flat switch over every node */
		if (prefix.n < TMATCH_AFFINITY_MAX_LEVELS) {
			prefix.kind[0] = TMATCH__K_SWITCH;
			prefix.count[0] = 1;
			prefix.n = 1;
		}
		root = tmatch__xnode_new(TMATCH__K_SWITCH);
		if (!root)
			goto oom;
		root->swlevel = 0;
		for (i = 0; i < b.n; i++) {
			struct tmatch__xnode *c = make_node(&b, i, &prefix, i, b.n);
			if (!c || tmatch__xnode_add(root, c) < 0) {
				tmatch__xnode_free(c);
				goto oom;
			}
		}
	}
	{
		int mn = 1 << 30, mx = -1;
		node_depths(root, 0, &mn, &mx);
		if (mn < mx && lower_nodes(root, 0, mx) < 0)
			goto oom;
	}

	tree = calloc(1, sizeof(*tree));
	if (!tree)
		goto oom;
	tree->nodes = calloc((size_t)b.n, sizeof(*tree->nodes));
	if (!tree->nodes)
		goto oom;
	tree->nb_nodes = b.n;
	if (node_tree->owned_topo &&
	    hwloc_topology_dup(&tree->owned_topo, node_tree->owned_topo) < 0)
		goto oom;
	for (i = 0; i < b.n; i++) {
		tree->nodes[i].name = strdup(b.names[i]);
		tree->nodes[i].allowed = hwloc_bitmap_dup(node_tree->nodes[0].allowed);
		tree->nodes[i].topo = tree->owned_topo;
		tree->nodes[i].this_system = node_tree->nodes[0].this_system;
		if (!tree->nodes[i].name || !tree->nodes[i].allowed)
			goto oom;
	}
	{
		struct tmatch__xnode *r = root;
		root = NULL;
		if (tmatch__xtree_finish(tree, r, err) < 0)
			goto fail;
	}
	goto done;
oom:
	tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
fail:
	tmatch__xnode_free(root);
	tmatch_affinity_tree_destroy(tree);
	tree = NULL;
done:
	tmatch_affinity_hostlist_free(b.names);
	free(b.sorted);
	free(b.node_sw);
	free(b.has);
	return tree;
}
