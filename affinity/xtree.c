/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xtree.c - from an explicit, possibly unbalanced tree to the balanced
 * tmatch_topo_t the mapping core takes, plus the leaf table and the queries
 * on it (CPU sets, positions, description).
 *
 * Balancing follows the TreeMatch paper's virtual resources: leaves that are
 * shallower than the deepest get virtual single-child parents, and every
 * level is padded to its largest arity with leaves nobody may use.
 */
#include "affinity/affinity_private.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct tmatch__xnode *tmatch__xnode_new(int kind)
{
	struct tmatch__xnode *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->kind = kind;
	n->swlevel = -1;
	n->node = -1;
	return n;
}

int tmatch__xnode_add(struct tmatch__xnode *parent, struct tmatch__xnode *child)
{
	if (parent->nchild == parent->cap) {
		int cap = parent->cap ? 2 * parent->cap : 4;
		struct tmatch__xnode **c =
		    realloc(parent->child, (size_t)cap * sizeof(struct tmatch__xnode *));
		if (!c)
			return -1;
		parent->child = c;
		parent->cap = cap;
	}
	parent->child[parent->nchild++] = child;
	return 0;
}

int tmatch__xnode_raise(struct tmatch__xnode **slot, int levels)
{
	for (int k = 0; k < levels; k++) {
		struct tmatch__xnode *v = tmatch__xnode_new(TMATCH__K_VIRTUAL);
		if (!v || tmatch__xnode_add(v, *slot) < 0) {
			free(v);
			return -1;
		}
		*slot = v;
	}
	return 0;
}

void tmatch__xnode_free(struct tmatch__xnode *n)
{
	int i;
	if (!n)
		return;
	for (i = 0; i < n->nchild; i++)
		tmatch__xnode_free(n->child[i]);
	free(n->child);
	if (n->cpuset)
		hwloc_bitmap_free(n->cpuset);
	free(n);
}

struct tmatch__xnode *tmatch__xnode_copy(const struct tmatch__xnode *n)
{
	struct tmatch__xnode *c = tmatch__xnode_new(n->kind);
	int i;
	if (!c)
		return NULL;
	c->swlevel = n->swlevel;
	c->global = n->global;
	c->node = n->node;
	c->disabled = n->disabled;
	c->pos = n->pos;
	if (n->cpuset && !(c->cpuset = hwloc_bitmap_dup(n->cpuset)))
		goto fail;
	for (i = 0; i < n->nchild; i++) {
		struct tmatch__xnode *k = tmatch__xnode_copy(n->child[i]);
		if (!k)
			goto fail;
		if (tmatch__xnode_add(c, k) < 0) {
			tmatch__xnode_free(k);
			goto fail;
		}
	}
	return c;
fail:
	tmatch__xnode_free(c);
	return NULL;
}

/* ------------------------------------------------------------------------ */

static int max_depth(const struct tmatch__xnode *n)
{
	int i, m = 0;
	for (i = 0; i < n->nchild; i++) {
		int d = 1 + max_depth(n->child[i]);
		if (d > m)
			m = d;
	}
	return m;
}

/* Give every leaf depth `target` by inserting virtual nodes above it. */
static int equalize(struct tmatch__xnode *n, int depth, int target)
{
	int i;
	for (i = 0; i < n->nchild; i++) {
		struct tmatch__xnode *c = n->child[i];
		if (c->nchild == 0) {
			if (tmatch__xnode_raise(&n->child[i], target - depth - 1) < 0)
				return -1;
		} else if (equalize(c, depth + 1, target) < 0) {
			return -1;
		}
	}
	return 0;
}

/* 1 if every node at depth `d` (below n, at depth `cur`) has exactly one child. */
static int level_single(const struct tmatch__xnode *n, int cur, int d)
{
	int i;
	if (cur == d)
		return n->nchild == 1;
	for (i = 0; i < n->nchild; i++)
		if (!level_single(n->child[i], cur + 1, d))
			return 0;
	return 1;
}

/* Replace every node at depth d+1 (d >= 0) by its children: nodes at depth d
   have exactly one child each. */
static int splice_below(struct tmatch__xnode *n, int cur, int d)
{
	int i;
	if (cur == d) {
		struct tmatch__xnode *c = n->child[0];
		free(n->child);
		n->child = c->child;
		n->nchild = c->nchild;
		n->cap = c->cap;
		c->child = NULL;
		c->nchild = 0;
		tmatch__xnode_free(c);
		return 0;
	}
	for (i = 0; i < n->nchild; i++)
		splice_below(n->child[i], cur + 1, d);
	return 0;
}

/* Replace each node at depth d (d >= 1) by its single child. */
static void lift_into(struct tmatch__xnode *n, int cur, int d)
{
	int i;
	for (i = 0; i < n->nchild; i++) {
		if (cur + 1 == d) {
			struct tmatch__xnode *c = n->child[i];
			n->child[i] = c->child[0];
			c->nchild = 0;
			tmatch__xnode_free(c);
		} else {
			lift_into(n->child[i], cur + 1, d);
		}
	}
}

/* Merge the levels that add no branching; keeps the leaves and the upper
   of two levels in one-to-one correspondence (package over l3, core under
   l2). Returns the new depth. */
static int merge_levels(struct tmatch__xnode *root, int depth)
{
	int d = 0;
	while (d < depth && depth > 1) {
		if (!level_single(root, 0, d)) {
			d++;
			continue;
		}
		if (d + 1 == depth) {
			if (d == 0)
				break;         /* root over a single leaf: keep one level */
			lift_into(root, 0, d); /* drop the leaves' parents */
		} else {
			splice_below(root, 0, d); /* drop the level under d */
		}
		depth--;
	}
	return depth;
}

struct walk {
	tmatch_affinity_tree_t *tree;
	int depth;
	const int *arity;
	int *stride;
	int *allowed;
	int nallowed;
};

static void number_leaves(struct walk *w, struct tmatch__xnode *n, int d, long base)
{
	int i;
	if (d == w->depth) {
		w->tree->leaf[base] = n;
		if (n->kind != TMATCH__K_VIRTUAL && n->cpuset && !n->disabled)
			w->allowed[w->nallowed++] = (int)base;
		return;
	}
	for (i = 0; i < n->nchild; i++)
		number_leaves(w, n->child[i], d + 1, base + (long)i * w->stride[d]);
}

/* Name of the level at depth d: the kind of its first non-virtual node. */
static int level_kind(const struct tmatch__xnode *n, int cur, int d, int *swlevel)
{
	int i;
	if (cur == d) {
		*swlevel = n->swlevel;
		return n->kind;
	}
	for (i = 0; i < n->nchild; i++) {
		int k = level_kind(n->child[i], cur + 1, d, swlevel);
		if (k != TMATCH__K_VIRTUAL)
			return k;
	}
	return TMATCH__K_VIRTUAL;
}

static void arity_at(const struct tmatch__xnode *n, int cur, int *arity)
{
	int i;
	if (n->nchild > arity[cur])
		arity[cur] = n->nchild;
	for (i = 0; i < n->nchild; i++)
		arity_at(n->child[i], cur + 1, arity);
}

static void level_label(int kind, int swlevel, char *buf, size_t len)
{
	if (kind == TMATCH__K_SWITCH && swlevel > 0)
		snprintf(buf, len, "switch%d", swlevel);
	else
		snprintf(buf, len, "%s", tmatch__kind_name(kind));
}

int tmatch__xtree_finish(tmatch_affinity_tree_t *tree, struct tmatch__xnode *root,
                         tmatch_error_t *err)
{
	int depth, d, arity[TMATCH_MAX_DEPTH + 1], stride[TMATCH_MAX_DEPTH] = {0};
	long leaves = 1;
	struct walk w;
	int rc = -1;

	tree->root = root;
	if (root->nchild == 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "the tree has no usable CPU");
	depth = max_depth(root);
	if (equalize(root, 0, depth) < 0)
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	depth = merge_levels(root, depth);
	if (depth > TMATCH_MAX_DEPTH)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "the tree has %d levels, more than the %d the mapper takes",
		                        depth, TMATCH_MAX_DEPTH);
	memset(arity, 0, sizeof(arity));
	arity_at(root, 0, arity);
	for (d = depth - 1; d >= 0; d--) {
		stride[d] = (int)leaves;
		leaves *= arity[d];
		if (leaves > INT_MAX / 2)
			return tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                        "the padded tree would have too many leaves");
	}
	if (leaves < 1)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "the tree has no usable CPU");
	tree->topo = tmatch_topo_create(depth, arity, NULL, err);
	if (!tree->topo)
		return -1;
	tree->nb_leaves = (int)leaves;
	tree->leaf = calloc((size_t)leaves, sizeof(struct tmatch__xnode *));
	w.allowed = malloc((size_t)leaves * sizeof(int));
	if (!tree->leaf || !w.allowed) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	w.tree = tree;
	w.depth = depth;
	w.arity = arity;
	w.stride = stride;
	w.nallowed = 0;
	number_leaves(&w, root, 0, 0);
	if (w.nallowed == 0) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "the tree has no usable CPU");
		goto out;
	}
	if (tmatch_topo_set_allowed(tree->topo, w.allowed, w.nallowed, err) < 0)
		goto out;
	tree->nb_slots = w.nallowed;
	for (d = 0; d <= depth; d++) {
		char name[24];
		int sw = -1, k = level_kind(root, 0, d, &sw);
		level_label(k, sw, name, sizeof(name));
		if (d < depth)
			tmatch_topo_set_level_name(tree->topo, d, name);
		else
			snprintf(tree->leaf_name, sizeof(tree->leaf_name), "%s", name);
	}
	rc = 0;
out:
	free(w.allowed);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */

void tmatch_affinity_tree_destroy(tmatch_affinity_tree_t *tree)
{
	int i;
	if (!tree)
		return;
	tmatch_topo_destroy(tree->topo);
	free(tree->leaf);
	tmatch__xnode_free(tree->root);
	for (i = 0; i < tree->nb_nodes; i++) {
		free(tree->nodes[i].name);
		if (tree->nodes[i].allowed)
			hwloc_bitmap_free(tree->nodes[i].allowed);
	}
	free(tree->nodes);
	if (tree->owned_topo)
		hwloc_topology_destroy(tree->owned_topo);
	free(tree);
}

const tmatch_topo_t *tmatch_affinity_tree_topo(const tmatch_affinity_tree_t *tree)
{
	if (!tree) {
		errno = EINVAL;
		return NULL;
	}
	return tree->topo;
}

tmatch_topo_t *tmatch_affinity_tree_topo_dup(const tmatch_affinity_tree_t *tree,
                                             tmatch_error_t *err)
{
	if (!tree) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no tree");
		return NULL;
	}
	return tmatch_topo_dup(tree->topo, err);
}

int tmatch_affinity_tree_nb_slots(const tmatch_affinity_tree_t *tree)
{
	if (!tree) {
		errno = EINVAL;
		return -1;
	}
	return tree->nb_slots;
}

int tmatch_affinity_tree_nb_nodes(const tmatch_affinity_tree_t *tree)
{
	if (!tree) {
		errno = EINVAL;
		return -1;
	}
	return tree->nb_nodes;
}

const char *tmatch_affinity_tree_node_name(const tmatch_affinity_tree_t *tree, int node)
{
	if (!tree || node < 0 || node >= tree->nb_nodes) {
		errno = EINVAL;
		return NULL;
	}
	return tree->nodes[node].name;
}

hwloc_const_bitmap_t tmatch_affinity_tree_allowed_cpuset(const tmatch_affinity_tree_t *tree,
                                                         int node)
{
	if (!tree || node < 0 || node >= tree->nb_nodes) {
		errno = EINVAL;
		return NULL;
	}
	return tree->nodes[node].allowed;
}

static const struct tmatch__xnode *real_leaf(const tmatch_affinity_tree_t *tree, int leaf)
{
	const struct tmatch__xnode *n;
	if (!tree || leaf < 0 || leaf >= tree->nb_leaves)
		return NULL;
	n = tree->leaf[leaf];
	if (!n || n->kind == TMATCH__K_VIRTUAL || !n->cpuset || n->disabled)
		return NULL;
	return n;
}

int tmatch_affinity_leaf_is_real(const tmatch_affinity_tree_t *tree, int leaf)
{
	return real_leaf(tree, leaf) != NULL;
}

int tmatch_affinity_leaf_node(const tmatch_affinity_tree_t *tree, int leaf)
{
	const struct tmatch__xnode *n = real_leaf(tree, leaf);
	if (!n) {
		errno = EINVAL;
		return -1;
	}
	return n->node;
}

hwloc_const_bitmap_t tmatch_affinity_leaf_cpuset(const tmatch_affinity_tree_t *tree, int leaf)
{
	const struct tmatch__xnode *n = real_leaf(tree, leaf);

	if (!n) {
		errno = EINVAL;
		return NULL;
	}
	return n->cpuset;
}

int tmatch_affinity_leaf_position(const tmatch_affinity_tree_t *tree, int leaf,
                                  tmatch_affinity_pos_t *pos, tmatch_error_t *err)
{
	const struct tmatch__xnode *n = real_leaf(tree, leaf);
	int i;
	if (!n || !pos)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "leaf %d is not a usable leaf of this tree", leaf);
	memset(pos, 0, sizeof(*pos));
	pos->nlevels = n->pos.n;
	for (i = 0; i < n->pos.n; i++) {
		level_label(n->pos.kind[i], n->pos.swlevel[i], pos->level[i].name,
		            sizeof(pos->level[i].name));
		pos->level[i].index = n->pos.index[i];
		pos->level[i].count = n->pos.count[i];
		pos->level[i].global = n->pos.global[i];
	}
	return 0;
}

int tmatch_affinity_pos_format(const tmatch_affinity_pos_t *pos, int what, char *buf, size_t len)
{
	size_t p = 0;
	int i;
	if (!pos || what < TMATCH_AFFINITY_POS_LEVELS || what > TMATCH_AFFINITY_POS_FULL ||
	    (!buf && len) || pos->nlevels < 0 || pos->nlevels > TMATCH_AFFINITY_MAX_LEVELS) {
		errno = EINVAL;
		return -1;
	}
	if (buf && len)
		buf[0] = '\0';
	for (i = 0; i < pos->nlevels; i++) {
		char item[64];
		int n;
		const char *sep = i ? "," : "";
		switch (what) {
		case TMATCH_AFFINITY_POS_LEVELS:
			n = snprintf(item, sizeof(item), "%s%s", sep, pos->level[i].name);
			break;
		case TMATCH_AFFINITY_POS_INDEX:
			n = snprintf(item, sizeof(item), "%s%d", sep, pos->level[i].index);
			break;
		case TMATCH_AFFINITY_POS_COUNT:
			n = snprintf(item, sizeof(item), "%s%d", sep, pos->level[i].count);
			break;
		default:
			n = snprintf(item, sizeof(item), "%s%s=%d/%d", sep, pos->level[i].name,
			             pos->level[i].index, pos->level[i].count);
			break;
		}
		if (n < 0)
			continue;
		if (buf && p < len)
			snprintf(buf + p, len - p, "%s", item);
		p += (size_t)n;
	}
	return p > INT_MAX ? INT_MAX : (int)p;
}

char *tmatch_affinity_pos_string(const tmatch_affinity_pos_t *pos, int what)
{
	int n = tmatch_affinity_pos_format(pos, what, NULL, 0);
	char *s;

	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	tmatch_affinity_pos_format(pos, what, s, (size_t)n + 1);
	return s;
}

/* ------------------------------------------------------------------------ */

void tmatch__emit(struct tmatch__out *o, const char *fmt, ...)
{
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(o->pos < o->len ? o->buf + o->pos : NULL,
	              o->pos < o->len ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

int tmatch_affinity_tree_describe(const tmatch_affinity_tree_t *tree, char *buf, size_t len)
{
	struct tmatch__out o = {buf, buf ? len : 0, 0};
	char tleaf[512];
	int d, depth, leaf, node;
	if (!tree || (!buf && len)) {
		errno = EINVAL;
		return -1;
	}
	if (buf && len)
		buf[0] = '\0';
	depth = tmatch_topo_depth(tree->topo);
	tmatch_topo_format(tree->topo, tleaf, sizeof(tleaf));
	tmatch__emit(&o, "tree: %d levels, %d leaves, %d usable (%d padding or unused)\n", depth,
	             tree->nb_leaves, tree->nb_slots, tree->nb_leaves - tree->nb_slots);
	tmatch__emit(&o, "tleaf: %s\n", tleaf);
	for (d = 0; d < depth; d++) {
		const char *name = tmatch_topo_level_name(tree->topo, d);
		tmatch__emit(&o, "level %d: %-8s arity %d\n", d, name && *name ? name : "?",
		             tmatch_topo_arity(tree->topo, d));
	}
	tmatch__emit(&o, "level %d: %-8s (leaves)\n", depth,
	             tree->leaf_name[0] ? tree->leaf_name : "leaf");
	for (node = 0; node < tree->nb_nodes; node++) {
		char *list = tmatch_affinity_cpuset_list(tree->nodes[node].allowed);
		char *mask = tmatch_affinity_cpuset_mask(tree->nodes[node].allowed);

		if (!list || !mask)
			goto nomem;
		tmatch__emit(&o, "node %d: %s allowed cpus %s mask %s\n", node,
		             tree->nodes[node].name, list, mask);
		free(list);
		free(mask);
		continue;
	nomem:
		free(list);
		free(mask);
		errno = ENOMEM;
		return -1;
	}
	for (leaf = 0; leaf < tree->nb_leaves; leaf++) {
		tmatch_affinity_pos_t pos;
		const struct tmatch__xnode *n = real_leaf(tree, leaf);
		char *list, *mask, *pstr;

		if (!n)
			continue;
		tmatch_affinity_leaf_position(tree, leaf, &pos, NULL);
		list = tmatch_affinity_cpuset_list(n->cpuset);
		mask = tmatch_affinity_cpuset_mask(n->cpuset);
		pstr = tmatch_affinity_pos_string(&pos, TMATCH_AFFINITY_POS_FULL);
		if (!list || !mask || !pstr) {
			free(list);
			free(mask);
			free(pstr);
			errno = ENOMEM;
			return -1;
		}
		tmatch__emit(&o, "leaf %d: node %s cpus %s mask %s at %s\n", leaf,
		             tree->nodes[tree->leaf[leaf]->node].name, list, mask, pstr);
		free(list);
		free(mask);
		free(pstr);
	}
	return o.pos > INT_MAX ? INT_MAX : (int)o.pos;
}
