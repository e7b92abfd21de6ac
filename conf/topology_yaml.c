/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology_yaml.c - topology.yaml, Slurm 25.05's description of a cluster's
 * networks (slurmctld reads it before topology.conf, which it then
 * ignores): one topology, or a list of them, each named and of one kind.
 *
 *   - topology: ib                 a name (partitions' Topology= use it)
 *     cluster_default: true        the topology of partitions naming none
 *     tree:
 *       switches:
 *         - switch: top
 *           children: s[1-2]       hostlists, as in topology.conf
 *         - switch: s1
 *           nodes: n[1-2]
 *   - topology: nvl
 *     block:
 *       block_sizes: [4, 16]       nodes of the base block, larger sizes
 *       blocks:
 *         - block: b1
 *           nodes: n[1-4]
 *   - topology: eth
 *     flat: true                   (or flat: {alpha_step_rank: true})
 *   - topology: rings
 *     ring:
 *       rings:
 *         - ring: r0
 *           nodes: n[1-8]          in ring order, at most 16
 *   - topology: pods
 *     torus3d:
 *       toruses:
 *         - name: pod1
 *           dims: {x: 4, y: 4, z: 2}
 *           nodes: n[1-32]         x fastest (or regions: anchor, dims, nodes)
 *           placements:            the job shapes, each a tiling of the torus
 *             - dims: {x: 2, y: 2, z: 1}
 *
 * Read with libyaml's event parser into a small bounded tree (no aliases or
 * anchors, nesting, values and nodes capped, built without recursion), then
 * the chosen topology is handed to affinity/'s builder (affinity/network.h), which
 * keeps every rule of the switch tree. A torus becomes its placement
 * shapes, the smallest tiles lowest; a shape that does not tile the torus
 * (or the next larger shape) is refused: the tree cannot hold it.
 */
#include "conf/conf_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* The bounds of the tree: topology.yaml of the largest machine (262,144
   nodes and switches, each entry a mapping of two or three pairs) fits,
   in at most about 150 MB. */
#define MAX_DEPTH 32
#define MAX_NODES (1L << 21)
/* Topologies in one file: a handful in practice (the names are checked
   pairwise). */
#define MAX_TOPOLOGIES 256

enum ykind { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	int kind; /* enum ykind */
	int plain;
	int line, col;            /* 1-based */
	int n;                    /* children (a mapping: keys and values, alternating) */
	struct ynode *kid, *last; /* first and last child */
	struct ynode *next;       /* next sibling */
	struct ynode *chain;      /* every node, to free them */
	size_t len;
	char s[]; /* scalar text, NUL-terminated ("" for the others) */
};

struct yreader {
	const char *file;
	tmatch_error_t *err;
	struct ynode *chain;
	long nodes;
};

static int yerr(const struct yreader *r, const struct ynode *at, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int yerr(const struct yreader *r, const struct ynode *at, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tmatch_error_vset(r->err, errnum, r->file, at ? at->line : 0, at ? at->col : 0, fmt, ap);
	va_end(ap);
	return -1;
}

static void free_nodes(struct yreader *r)
{
	while (r->chain) {
		struct ynode *n = r->chain;

		r->chain = n->chain;
		free(n);
	}
}

static struct ynode *new_node(struct yreader *r, int kind, const yaml_mark_t *m,
                              const unsigned char *text, size_t len)
{
	struct ynode *n;

	if (r->nodes >= MAX_NODES) {
		tmatch_error_set(r->err, E2BIG, r->file, (int)m->line + 1, (int)m->column + 1,
		                 "more than %ld YAML values: this is not a cluster's topology.yaml",
		                 MAX_NODES);
		return NULL;
	}
	n = calloc(1, sizeof(*n) + len + 1);
	if (!n) {
		tmatch_error_set(r->err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	n->kind = kind;
	if (len)
		memcpy(n->s, text, len);
	n->len = len;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	n->chain = r->chain;
	r->chain = n;
	r->nodes++;
	return n;
}

static void add_kid(struct ynode *parent, struct ynode *kid)
{
	if (parent->last)
		parent->last->next = kid;
	else
		parent->kid = kid;
	parent->last = kid;
	parent->n++;
}

static int parse_error(struct yreader *r, const yaml_parser_t *p)
{
	if (p->error == YAML_MEMORY_ERROR)
		return tmatch_error_set(r->err, ENOMEM, NULL, 0, 0, "out of memory");
	if (p->error == YAML_READER_ERROR)
		return tmatch_error_set(r->err, EINVAL, r->file, 0, 0,
		                        "cannot decode the file (%s at byte %zu): not UTF-8 text",
		                        p->problem ? p->problem : "invalid input",
		                        p->problem_offset);
	return tmatch_error_set(r->err, EINVAL, r->file, (int)p->problem_mark.line + 1,
	                        (int)p->problem_mark.column + 1, "YAML syntax error: %s%s%s",
	                        p->problem ? p->problem : "invalid", p->context ? " " : "",
	                        p->context ? p->context : "");
}

/* The document's root, or NULL with the error set (an empty file: an
   error too, topology.yaml describes at least one topology). */
static struct ynode *read_tree(struct yreader *r, const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ynode *stack[MAX_DEPTH], *root = NULL;
	int depth = 0, docs = 0, done = 0, ok = 0;

	if (!yaml_parser_initialize(&p)) {
		tmatch_error_set(r->err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done) {
		struct ynode *n = NULL;
		const yaml_char_t *anchor = NULL;

		if (!yaml_parser_parse(&p, &ev)) {
			parse_error(r, &p);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = ok = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				tmatch_error_set(r->err, EINVAL, r->file,
				                 (int)ev.start_mark.line + 1,
				                 (int)ev.start_mark.column + 1,
				                 "a second YAML document: topology.yaml is one");
				done = 1;
			}
			break;
		case YAML_ALIAS_EVENT:
			tmatch_error_set(r->err, EINVAL, r->file, (int)ev.start_mark.line + 1,
			                 (int)ev.start_mark.column + 1,
			                 "YAML aliases (*name) are not read: write the values out");
			done = 1;
			break;
		case YAML_SCALAR_EVENT:
			anchor = ev.data.scalar.anchor;
			if (anchor)
				break;
			if (ev.data.scalar.length > TMATCH_TOPOLOGY_CONF_BYTES) {
				tmatch_error_set(
				    r->err, EINVAL, r->file, (int)ev.start_mark.line + 1,
				    (int)ev.start_mark.column + 1,
				    "a value of %zu bytes: more than all the names one "
				    "topology may hold",
				    ev.data.scalar.length);
				done = 1;
				break;
			}
			n = new_node(r, Y_SCALAR, &ev.start_mark, ev.data.scalar.value,
			             ev.data.scalar.length);
			if (n)
				n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			else
				done = 1;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			anchor = ev.type == YAML_SEQUENCE_START_EVENT
			             ? ev.data.sequence_start.anchor
			             : ev.data.mapping_start.anchor;
			if (anchor)
				break;
			if (depth == MAX_DEPTH) {
				tmatch_error_set(
				    r->err, EINVAL, r->file, (int)ev.start_mark.line + 1,
				    (int)ev.start_mark.column + 1,
				    "nested deeper than %d levels: topology.yaml needs 8",
				    MAX_DEPTH);
				done = 1;
				break;
			}
			n = new_node(r, ev.type == YAML_SEQUENCE_START_EVENT ? Y_SEQ : Y_MAP,
			             &ev.start_mark, NULL, 0);
			if (!n)
				done = 1;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
		if (anchor) {
			tmatch_error_set(r->err, EINVAL, r->file, (int)ev.start_mark.line + 1,
			                 (int)ev.start_mark.column + 1,
			                 "YAML anchors (&name) are not read: remove the anchor");
			done = 1;
		}
		if (n) {
			if (depth > 0)
				add_kid(stack[depth - 1], n);
			else if (!root)
				root = n;
			if (n->kind != Y_SCALAR)
				stack[depth++] = n;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (ok && !root) {
		tmatch_error_set(r->err, EINVAL, r->file, 0, 0,
		                 "an empty file: topology.yaml describes at least one topology");
		return NULL;
	}
	return ok ? root : NULL;
}

/* ------------------------------------------------------------------------ */
/* The schema                                                                */

static const char *what_is(const struct ynode *n)
{
	return n->kind == Y_SCALAR ? "a single value" : n->kind == Y_SEQ ? "a list" : "a mapping";
}

static int want(const struct yreader *r, const struct ynode *n, int kind, const char *what)
{
	static const char *const kinds[] = {"a single value", "a list", "a mapping"};

	if (n->kind == kind)
		return 0;
	return yerr(r, n, EINVAL, "%s must be %s, found %s", what, kinds[kind], what_is(n));
}

/*
 * The values of a mapping's keys, by the names allowed (vals[i] for
 * keys[i], NULL when absent): an unknown or repeated key is an error at
 * the key, naming the keys allowed.
 */
static int get_keys(const struct yreader *r, const struct ynode *m, const char *what,
                    const char *const *keys, int nkeys, const struct ynode **vals)
{
	char list[256];
	size_t used = 0;

	if (want(r, m, Y_MAP, what) < 0)
		return -1;
	for (int i = 0; i < nkeys; i++) {
		vals[i] = NULL;
		used += (size_t)snprintf(list + used, used < sizeof(list) ? sizeof(list) - used : 0,
		                         "%s%s", i ? ", " : "", keys[i]);
	}
	for (const struct ynode *k = m->kid; k && k->next; k = k->next->next) {
		int i = 0;

		while (i < nkeys && !(k->kind == Y_SCALAR && !strcmp(k->s, keys[i])))
			i++;
		if (i == nkeys)
			return yerr(r, k, EINVAL, "unknown key%s%.40s%s in %s: valid keys are %s",
			            k->kind == Y_SCALAR ? " '" : "",
			            k->kind == Y_SCALAR ? k->s : "", k->kind == Y_SCALAR ? "'" : "",
			            what, list);
		if (vals[i])
			return yerr(r, k, EINVAL, "'%s' given twice in %s", keys[i], what);
		vals[i] = k->next;
	}
	return 0;
}

static int get_str(const struct yreader *r, const struct ynode *n, const char *what,
                   const char **out)
{
	if (want(r, n, Y_SCALAR, what) < 0)
		return -1;
	if (n->len == 0 || strlen(n->s) != n->len)
		return yerr(r, n, EINVAL, "%s must not be empty", what);
	*out = n->s;
	return 0;
}

static int get_bool(const struct yreader *r, const struct ynode *n, const char *what, int *out)
{
	static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no",
	                                                                       "off"};

	if (want(r, n, Y_SCALAR, what) < 0)
		return -1;
	for (int i = 0; n->plain && i < 3; i++) {
		if (!strcasecmp(n->s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(n->s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return yerr(r, n, EINVAL, "%s must be true or false", what);
}

static int get_uint(const struct yreader *r, const struct ynode *n, const char *what, uint64_t max,
                    uint64_t *out)
{
	if (want(r, n, Y_SCALAR, what) < 0)
		return -1;
	if (!n->plain || tmatch_parse_u64(n->s, n->len, max, out) < 0)
		return yerr(r, n, EINVAL, "%s must be a whole number from 0 to %llu", what,
		            (unsigned long long)max);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* tree, block, ring                                                         */

static int read_tree_kind(struct yreader *r, tmatch_affinity_net_t *b, const struct ynode *v)
{
	static const char *const keys[] = {"switches"}, *const skeys[] = {"switch", "children",
	                                                                  "nodes"};
	const struct ynode *k[1];

	if (get_keys(r, v, "tree", keys, 1, k) < 0)
		return -1;
	if (!k[0])
		return yerr(r, v, EINVAL, "a tree needs its switches: list");
	if (want(r, k[0], Y_SEQ, "switches") < 0)
		return -1;
	if (tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_TREE, v->line, v->col) < 0)
		return -1;
	for (const struct ynode *e = k[0]->kid; e; e = e->next) {
		const struct ynode *f[3];
		const char *name = NULL, *children = NULL, *nodes = NULL;

		if (get_keys(r, e, "a switch", skeys, 3, f) < 0)
			return -1;
		if (!f[0])
			return yerr(r, e, EINVAL, "a switch without its 'switch:' name");
		if (get_str(r, f[0], "switch", &name) < 0 ||
		    (f[1] && get_str(r, f[1], "children", &children) < 0) ||
		    (f[2] && get_str(r, f[2], "nodes", &nodes) < 0))
			return -1;
		if (tmatch_affinity_net_add_switch(b, name, f[0]->line, f[0]->col, nodes,
		                                   f[2] ? f[2]->line : 0, f[2] ? f[2]->col : 0,
		                                   children, f[1] ? f[1]->line : 0,
		                                   f[1] ? f[1]->col : 0, 1) < 0)
			return -1;
	}
	return 0;
}

/* The entries of a blocks: or rings: list, {block: NAME, nodes: LIST} or
   {ring: NAME, nodes: LIST}, each handed to `add`. */
typedef int (*add_fn)(tmatch_affinity_net_t *b, const char *name, int line, int col,
                      const char *nodes, int nodes_line, int nodes_col);

static int read_entries(struct yreader *r, tmatch_affinity_net_t *b, const struct ynode *list,
                        const char *listkey, const char *namekey, const char *what, add_fn add)
{
	const char *const keys[] = {namekey, "nodes"};

	if (want(r, list, Y_SEQ, listkey) < 0)
		return -1;
	for (const struct ynode *e = list->kid; e; e = e->next) {
		const struct ynode *f[2];
		const char *name = NULL, *nodes = NULL;

		if (get_keys(r, e, what, keys, 2, f) < 0)
			return -1;
		if (!f[0])
			return yerr(r, e, EINVAL, "%s without its '%s:' name", what, namekey);
		if (get_str(r, f[0], namekey, &name) < 0 ||
		    (f[1] && get_str(r, f[1], "nodes", &nodes) < 0))
			return -1;
		if (add(b, name, f[0]->line, f[0]->col, nodes, f[1] ? f[1]->line : 0,
		        f[1] ? f[1]->col : 0) < 0)
			return -1;
	}
	return 0;
}

static int read_block_kind(struct yreader *r, tmatch_affinity_net_t *b, const struct ynode *v)
{
	static const char *const keys[] = {"block_sizes", "blocks"};
	const struct ynode *k[2];

	if (get_keys(r, v, "block", keys, 2, k) < 0)
		return -1;
	if (!k[1])
		return yerr(r, v, EINVAL, "a block topology needs its blocks: list");
	if (tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_BLOCK, v->line, v->col) < 0 ||
	    read_entries(r, b, k[1], "blocks", "block", "a block", tmatch_affinity_net_add_block) <
	        0)
		return -1;
	if (k[0]) {
		long sizes[16] = {0};
		int n = 0;
		const struct ynode *one = k[0]->kind == Y_SCALAR ? k[0] : NULL;

		if (!one && want(r, k[0], Y_SEQ, "block_sizes") < 0)
			return -1;
		for (const struct ynode *e = one ? one : k[0]->kid; e; e = one ? NULL : e->next) {
			uint64_t x = 0;

			if (n == 16)
				return yerr(r, e, EINVAL, "more than 16 block sizes");
			if (get_uint(r, e, "a block size", 1u << 30, &x) < 0)
				return -1;
			if (x == 0)
				return yerr(r, e, EINVAL, "a block size must be positive");
			sizes[n++] = (long)x;
		}
		if (tmatch_affinity_net_block_sizes(b, sizes, n, k[0]->line, k[0]->col) < 0)
			return -1;
	}
	return 0;
}

static int read_ring_kind(struct yreader *r, tmatch_affinity_net_t *b, const struct ynode *v)
{
	static const char *const keys[] = {"rings"};
	const struct ynode *k[1];

	if (get_keys(r, v, "ring", keys, 1, k) < 0)
		return -1;
	if (!k[0])
		return yerr(r, v, EINVAL, "a ring topology needs its rings: list");
	if (tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_RING, v->line, v->col) < 0)
		return -1;
	return read_entries(r, b, k[0], "rings", "ring", "a ring", tmatch_affinity_net_add_ring);
}

/* ------------------------------------------------------------------------ */
/* torus3d                                                                   */

struct xyz {
	long v[3];
};

static int get_xyz(const struct yreader *r, const struct ynode *n, const char *what, long min,
                   struct xyz *out)
{
	static const char *const keys[] = {"x", "y", "z"};
	const struct ynode *k[3];

	if (get_keys(r, n, what, keys, 3, k) < 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		uint64_t x = 0;

		if (!k[i])
			return yerr(r, n, EINVAL, "%s needs x, y and z", what);
		if (get_uint(r, k[i], keys[i], 65535, &x) < 0)
			return -1;
		if ((long)x < min)
			return yerr(r, k[i], EINVAL, "%s: %s must be at least %ld", what, keys[i],
			            min);
		out->v[i] = (long)x;
	}
	return 0;
}

/* A placement shape: tiles of dims, from seed. */
struct shape {
	struct xyz dims, seed;
	const struct ynode *at;
};

static long volume(const struct xyz *d)
{
	return d->v[0] * d->v[1] * d->v[2];
}

static int shape_cmp(const void *a, const void *b)
{
	long x = volume(&((const struct shape *)a)->dims),
	     y = volume(&((const struct shape *)b)->dims);

	return (x > y) - (x < y);
}

/* The tile of shape s holding cell (c[0], c[1], c[2]) of a torus of dims t. */
static long tile_of(const struct shape *s, const struct xyz *t, const long *c)
{
	long tile = 0, scale = 1;

	for (int i = 0; i < 3; i++) {
		long off = ((c[i] - s->seed.v[i]) % t->v[i] + t->v[i]) % t->v[i];

		tile += scale * (off / s->dims.v[i]);
		scale *= t->v[i] / s->dims.v[i];
	}
	return tile;
}

/* Put the nodes of `list` on cells in x-major order within the box
   anchor .. anchor + dims - 1 of a torus of dims t. */
static int place_cells(struct yreader *r, tmatch_affinity_net_t *b, const struct ynode *at,
                       const char *list, const struct xyz *anchor, const struct xyz *box,
                       const struct xyz *t, char **cell, char ***lists, int *nlists)
{
	int cnt = 0;
	char **v = tmatch_affinity_net_expand(b, list, &cnt, at->line, at->col, NULL);

	if (!v)
		return -1;
	lists[(*nlists)++] = v;
	if (cnt > volume(box))
		return yerr(r, at, EINVAL, "%d nodes for %ld cells", cnt, volume(box));
	for (long i = 0; i < cnt; i++) {
		long x = anchor->v[0] + i % box->v[0], y = anchor->v[1] + i / box->v[0] % box->v[1],
		     z = anchor->v[2] + i / (box->v[0] * box->v[1]),
		     c = x + t->v[0] * (y + t->v[1] * z);

		if (cell[c])
			return yerr(r, at, EINVAL,
			            "cell (%ld,%ld,%ld) has two nodes, %.64s and %.64s", x, y, z,
			            cell[c], v[i]);
		cell[c] = v[i];
	}
	return 0;
}

/* The shapes of a torus, smallest first, each a tiling that nests in the
   next; -1 (refused) when one is not. */
static int torus_shapes(struct yreader *r, const struct ynode *pl, const struct xyz *t,
                        const char *name, struct shape *sh, int *nsh)
{
	static const char *const keys[] = {"dims", "anchor_seed", "anchor_spacing"};
	int n = 0;

	for (const struct ynode *e = pl->kid; e; e = e->next) {
		const struct ynode *f[3];
		struct xyz spacing = {{1, 1, 1}};

		if (n == 64)
			return yerr(r, e, EINVAL, "more than 64 placements in torus '%.64s'", name);
		if (get_keys(r, e, "a placement", keys, 3, f) < 0)
			return -1;
		if (!f[0])
			return yerr(r, e, EINVAL, "a placement needs its dims");
		memset(&sh[n], 0, sizeof(sh[n]));
		sh[n].at = e;
		if (get_xyz(r, f[0], "dims", 1, &sh[n].dims) < 0 ||
		    (f[1] && get_xyz(r, f[1], "anchor_seed", 0, &sh[n].seed) < 0))
			return -1;
		spacing = sh[n].dims;
		if (f[2] && get_xyz(r, f[2], "anchor_spacing", 1, &spacing) < 0)
			return -1;
		for (int i = 0; i < 3; i++)
			if (spacing.v[i] != sh[n].dims.v[i] || t->v[i] % sh[n].dims.v[i] != 0)
				return yerr(
				    r, e, EINVAL,
				    "torus '%.64s': placement %ldx%ldx%ld (anchor spacing "
				    "%ldx%ldx%ld) does not tile the %ldx%ldx%ld torus: the tree "
				    "of switches cannot hold it",
				    name, sh[n].dims.v[0], sh[n].dims.v[1], sh[n].dims.v[2],
				    spacing.v[0], spacing.v[1], spacing.v[2], t->v[0], t->v[1],
				    t->v[2]);
		n++;
	}
	qsort(sh, (size_t)n, sizeof(*sh), shape_cmp);
	for (int i = 1; i < n; i++)
		for (int a = 0; a < 3; a++) {
			long d = sh[i - 1].dims.v[a];

			if (sh[i].dims.v[a] % d != 0 ||
			    (sh[i].seed.v[a] - sh[i - 1].seed.v[a]) % d != 0)
				return yerr(
				    r, sh[i].at, EINVAL,
				    "torus '%.64s': placement %ldx%ldx%ld does not hold whole "
				    "%ldx%ldx%ld tiles: the tree of switches cannot hold both",
				    name, sh[i].dims.v[0], sh[i].dims.v[1], sh[i].dims.v[2],
				    sh[i - 1].dims.v[0], sh[i - 1].dims.v[1], sh[i - 1].dims.v[2]);
		}
	*nsh = n;
	return 0;
}

/* The switches of one torus: the smallest tiles over their nodes, each
   larger shape's tiles over the smaller ones, the torus on top. Tiles
   without a node have no switch. */
static int torus_switches(struct yreader *r, tmatch_affinity_net_t *b, const struct ynode *e,
                          const char *name, const struct xyz *t, char **cell,
                          const struct shape *sh, int nsh)
{
	long ncell = volume(t), nprev = 0, *prev = NULL, *prep = NULL;
	int top, rc = -1;

	top = tmatch_affinity_net_new_switch(b, name, 0, e->line, e->col);
	if (top < 0)
		return -1;
	if (nsh == 0) { /* no shape: the torus over its nodes */
		for (long c = 0; c < ncell; c++)
			if (cell[c] &&
			    tmatch_affinity_net_add_node(b, top, cell[c], e->line, e->col) < 0)
				return -1;
		return 0;
	}
	for (int l = 0; l < nsh; l++) {
		long ntile = ncell / volume(&sh[l].dims), n = l ? nprev : ncell;
		long *cur = malloc((size_t)ntile * sizeof(*cur)),
		     *rep = malloc((size_t)ntile * sizeof(*rep));

		if (!cur || !rep) {
			free(cur);
			free(rep);
			yerr(r, NULL, ENOMEM, "out of memory");
			goto out;
		}
		for (long k = 0; k < ntile; k++) {
			cur[k] = -1;
			rep[k] = -1;
		}
		/* level 0 takes the cells with a node, the others the tiles below */
		for (long i = 0; i < n; i++) {
			long c, k, pos[3];
			char tname[96];

			if (l ? prev[i] < 0 : !cell[i])
				continue;
			c = l ? prep[i] : i;
			pos[0] = c % t->v[0];
			pos[1] = c / t->v[0] % t->v[1];
			pos[2] = c / (t->v[0] * t->v[1]);
			k = tile_of(&sh[l], t, pos);
			if (cur[k] < 0) {
				snprintf(tname, sizeof(tname), "%.40s/%ldx%ldx%ld:%ld", name,
				         sh[l].dims.v[0], sh[l].dims.v[1], sh[l].dims.v[2], k);
				cur[k] = tmatch_affinity_net_new_switch(b, tname, 1, sh[l].at->line,
				                                        sh[l].at->col);
				rep[k] = c;
			}
			if (cur[k] < 0 ||
			    (l ? tmatch_affinity_net_add_child(b, (int)cur[k], (int)prev[i])
			       : tmatch_affinity_net_add_node(b, (int)cur[k], cell[c], e->line,
			                                      e->col)) < 0) {
				free(cur);
				free(rep);
				goto out;
			}
		}
		free(prev);
		free(prep);
		prev = cur;
		prep = rep;
		nprev = ntile;
	}
	for (long k = 0; k < nprev; k++)
		if (prev[k] >= 0 && tmatch_affinity_net_add_child(b, top, (int)prev[k]) < 0)
			goto out;
	rc = 0;
out:
	free(prev);
	free(prep);
	return rc;
}

static int read_torus_kind(struct yreader *r, tmatch_affinity_net_t *b, const struct ynode *v)
{
	static const char *const keys[] = {"toruses"},
	                         *const tkeys[] = {"name", "dims", "nodes", "regions",
	                                           "placements"},
	                         *const rkeys[] = {"anchor", "dims", "nodes"};
	const struct ynode *k[1];

	if (get_keys(r, v, "torus3d", keys, 1, k) < 0)
		return -1;
	if (!k[0])
		return yerr(r, v, EINVAL, "a torus3d topology needs its toruses: list");
	if (want(r, k[0], Y_SEQ, "toruses") < 0)
		return -1;
	if (tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_TORUS, v->line, v->col) < 0)
		return -1;
	for (const struct ynode *e = k[0]->kid; e; e = e->next) {
		const struct ynode *f[5];
		const char *name = NULL, *nodes = NULL;
		struct xyz t = {{1, 1, 1}}, zero = {{0, 0, 0}};
		struct shape sh[64];
		char **cell = NULL, ***lists = NULL;
		int nsh = 0, nlists = 0, rc = -1;

		memset(sh, 0, sizeof(sh));
		if (get_keys(r, e, "a torus", tkeys, 5, f) < 0)
			return -1;
		if (!f[0] || !f[1])
			return yerr(r, e, EINVAL, "a torus needs its name and dims");
		if (get_str(r, f[0], "name", &name) < 0 || get_xyz(r, f[1], "dims", 1, &t) < 0 ||
		    (f[2] && get_str(r, f[2], "nodes", &nodes) < 0))
			return -1;
		if (f[2] && f[3])
			return yerr(r, f[3], EINVAL,
			            "torus '%.64s': nodes and regions exclude each other", name);
		if (volume(&t) > TMATCH_TOPOLOGY_CONF_NAMES)
			return yerr(r, f[1], E2BIG, "torus '%.64s' has more than %ld cells", name,
			            TMATCH_TOPOLOGY_CONF_NAMES);
		if (f[3] && want(r, f[3], Y_SEQ, "regions") < 0)
			return -1;
		if (f[4] && (want(r, f[4], Y_SEQ, "placements") < 0 ||
		             torus_shapes(r, f[4], &t, name, sh, &nsh) < 0))
			return -1;
		cell = calloc((size_t)volume(&t), sizeof(*cell));
		lists = calloc((size_t)(f[3] ? f[3]->n : 0) + 1, sizeof(*lists));
		if (!cell || !lists) {
			yerr(r, NULL, ENOMEM, "out of memory");
			goto next;
		}
		if (nodes &&
		    place_cells(r, b, f[2], nodes, &zero, &t, &t, cell, lists, &nlists) < 0)
			goto next;
		for (const struct ynode *g = f[3] ? f[3]->kid : NULL; g; g = g->next) {
			const struct ynode *q[3];
			struct xyz anchor = zero, box = {{1, 1, 1}};
			const char *rn = NULL;

			if (get_keys(r, g, "a region", rkeys, 3, q) < 0)
				goto next;
			if (!q[1] || !q[2]) {
				yerr(r, g, EINVAL, "a region needs its dims and nodes");
				goto next;
			}
			if ((q[0] && get_xyz(r, q[0], "anchor", 0, &anchor) < 0) ||
			    get_xyz(r, q[1], "dims", 1, &box) < 0 ||
			    get_str(r, q[2], "nodes", &rn) < 0)
				goto next;
			for (int a = 0; a < 3; a++)
				if (anchor.v[a] + box.v[a] > t.v[a]) {
					yerr(r, g, EINVAL,
					     "torus '%.64s': the region does not fit in the torus "
					     "(no "
					     "wrap-around)",
					     name);
					goto next;
				}
			if (place_cells(r, b, q[2], rn, &anchor, &box, &t, cell, lists, &nlists) <
			    0)
				goto next;
		}
		rc = torus_switches(r, b, e, name, &t, cell, sh, nsh);
	next:
		for (int i = 0; i < nlists; i++)
			tmatch_affinity_hostlist_free(lists[i]);
		free(lists);
		free(cell);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The topologies                                                            */

static const char *const topo_keys[] = {"topology", "cluster_default", "block", "flat",
                                        "ring",     "torus3d",         "tree"};
enum { T_NAME, T_DEFAULT, T_BLOCK, T_FLAT, T_RING, T_TORUS, T_TREE, T_KEYS };

/* One topology's keys and kind (the index of its kind's key). */
struct topo {
	const struct ynode *node, *k[T_KEYS];
	const char *name;
	int dflt, kind;
};

static int read_topo(const struct yreader *r, const struct ynode *e, struct topo *t)
{
	int flat = 1;

	memset(t, 0, sizeof(*t));
	t->node = e;
	t->kind = -1;
	if (get_keys(r, e, "a topology", topo_keys, T_KEYS, t->k) < 0)
		return -1;
	if (!t->k[T_NAME])
		return yerr(r, e, EINVAL, "a topology without its 'topology:' name");
	if (get_str(r, t->k[T_NAME], "topology", &t->name) < 0 ||
	    (t->k[T_DEFAULT] && get_bool(r, t->k[T_DEFAULT], "cluster_default", &t->dflt) < 0))
		return -1;
	/* flat: false is no kind; flat: {...} is flat with options */
	if (t->k[T_FLAT] && t->k[T_FLAT]->kind == Y_SCALAR &&
	    get_bool(r, t->k[T_FLAT], "flat", &flat) < 0)
		return -1;
	for (int i = T_BLOCK; i < T_KEYS; i++) {
		if (!t->k[i] || (i == T_FLAT && !flat))
			continue;
		if (t->kind >= 0)
			return yerr(r, t->k[i], EINVAL,
			            "topology '%.64s' is %s and %s: one topology has one kind",
			            t->name, topo_keys[t->kind], topo_keys[i]);
		t->kind = i;
	}
	if (t->kind < 0)
		return yerr(
		    r, e, EINVAL,
		    "topology '%.64s' has no kind: give it one of block, flat, ring, torus3d, "
		    "tree",
		    t->name);
	return 0;
}

tmatch_affinity_conf_t *tmatch__topo_yaml_parse(const char *text, size_t len, const char *file,
                                                const tmatch_conf_topo_sel_t *sel,
                                                const struct tmatch_affinity_slurm_topo *slurm,
                                                tmatch_error_t *err)
{
	struct yreader r;
	struct ynode *root;
	struct topo t, pick;
	const char *want_name = NULL;
	int have = 0, rc = -1, n = 0;
	tmatch_affinity_conf_t *conf = NULL;
	tmatch_affinity_net_t *b = NULL;

	memset(&r, 0, sizeof(r));
	r.file = file;
	r.err = err;
	memset(&pick, 0, sizeof(pick));
	if (len > TMATCH_TOPOLOGY_CONF_BYTES) { /* the tree is about 10 times the text */
		tmatch_error_set(err, EFBIG, file, 0, 0,
		                 "larger than %zu MiB: not a cluster's topology.yaml",
		                 TMATCH_TOPOLOGY_CONF_BYTES >> 20);
		goto out;
	}
	root = read_tree(&r, text, len);
	if (!root)
		goto out;
	if (root->kind == Y_SCALAR) {
		yerr(&r, root, EINVAL, "topology.yaml must be a topology or a list of them");
		goto out;
	}
	if (sel && sel->topology && *sel->topology)
		want_name = sel->topology;
	else if (slurm && slurm->partition_topology)
		want_name = slurm->partition_topology;
	for (const struct ynode *e = root->kind == Y_SEQ ? root->kid : root; e;
	     e = root->kind == Y_SEQ ? e->next : NULL) {
		if (n == MAX_TOPOLOGIES) {
			yerr(&r, e, EINVAL, "more than %d topologies", MAX_TOPOLOGIES);
			goto out;
		}
		if (read_topo(&r, e, &t) < 0)
			goto out;
		for (const struct ynode *o = root->kind == Y_SEQ ? root->kid : NULL; o && o != e;
		     o = o->next)
			if (o->kind == Y_MAP) {
				/* names are few: a quadratic check is cheap beside the nodes */
				struct topo u;

				if (read_topo(&r, o, &u) == 0 && !strcmp(u.name, t.name)) {
					yerr(&r, t.k[T_NAME], EINVAL,
					     "topology '%.64s' is defined twice", t.name);
					goto out;
				}
			}
		n++;
		if (want_name ? !strcmp(t.name, want_name) && !have
		              : !have || (t.dflt && !pick.dflt)) {
			pick = t;
			have = 1;
		}
	}
	if (n == 0) {
		yerr(&r, root, EINVAL, "no topology in the list");
		goto out;
	}
	if (!have) {
		if (sel && sel->topology && *sel->topology)
			tmatch_error_set(err, EINVAL, file, 0, 0, "no topology '%.64s' in the file",
			                 want_name);
		else
			tmatch_error_set(
			    err, EINVAL, slurm->file, slurm->part_line, slurm->part_col,
			    "the partition's topology '%.64s' is not in %s", want_name, file);
		goto out;
	}
	b = tmatch_affinity_net_new(file, 1, err);
	if (!b)
		goto out;
	switch (pick.kind) {
	case T_TREE:
		rc = read_tree_kind(&r, b, pick.k[T_TREE]);
		break;
	case T_BLOCK:
		rc = read_block_kind(&r, b, pick.k[T_BLOCK]);
		break;
	case T_RING:
		rc = read_ring_kind(&r, b, pick.k[T_RING]);
		break;
	case T_TORUS:
		rc = read_torus_kind(&r, b, pick.k[T_TORUS]);
		break;
	default: /* flat: no switch */
		rc = tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_FLAT, pick.node->line,
		                                  pick.node->col);
		if (rc == 0 && pick.k[T_FLAT]->kind == Y_MAP) {
			static const char *const fkeys[] = {"alpha_step_rank"};
			const struct ynode *f[1];
			int alpha = 0;

			rc = get_keys(&r, pick.k[T_FLAT], "flat", fkeys, 1, f);
			if (rc == 0 && f[0])
				rc = get_bool(&r, f[0], "alpha_step_rank", &alpha);
		}
		break;
	}
	if (rc == 0)
		conf = tmatch_affinity_net_finish(b, pick.name, slurm);
out:
	tmatch_affinity_net_free(b);
	free_nodes(&r);
	return conf;
}
