/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * network.c - a cluster's network as one tree of switches
 * (tmatch_affinity_conf_t): its builder (network.h), the one owner of that
 * tree, its accessors, and the network of SLURM_TOPOLOGY_ADDR values. The
 * readers of Slurm's files (conf/: topology.conf's lines, topology.yaml's
 * entries) add to the builder, and it checks names, parents, cycles and
 * the caps once, for every format. Node and switch lists are hostlists
 * (hostlist.c). The networks of Slurm's topology plugins become switches:
 *   tree     SwitchName=s0 Nodes=n[1-2] / SwitchName=top Switches=s[0-1]
 *   block    BlockName=b1 Nodes=n[1-4] ... BlockSizes=4,16: the base
 *            blocks are the lowest switches; Slurm's aggregated blocks
 *            (runs of 2, 4, 8... consecutive base blocks, the levels
 *            BlockSizes allows) the switches above them
 *   ring     RingName=r0 Nodes=n[1-8]: the nodes in ring order in nested
 *            segments, pairs, then fours, up to the ring (the link from its
 *            last node back to its first is the one the tree loses)
 *   torus3d  topology.yaml only (conf/topology_yaml.c): its tiles
 * and slurm.conf's NodeName ... Topology= lines (read by conf/slurm_conf.c)
 * then move nodes, as slurmctld does (tmatch_affinity_net_finish).
 */
#include "affinity/affinity_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tmatch_affinity_conf_destroy(tmatch_affinity_conf_t *conf)
{
	int i, j;
	if (!conf)
		return;
	for (i = 0; i < conf->nsw; i++) {
		free(conf->sw[i].name);
		free(conf->sw[i].child);
		for (j = 0; j < conf->sw[i].nnodes; j++)
			free(conf->sw[i].nodes[j]);
		free(conf->sw[i].nodes);
	}
	free(conf->sw);
	free(conf);
}

/* ------------------------------------------------------------------------ */
/* The builder                                                               */

/* Pending references, resolved once every switch is known. */
struct ref {
	int sw;        /* the switch whose Switches= this is */
	char *list;    /* hostlist of child switches */
	int line, col; /* of the value */
};

/* A switch name and its index, sorted by name: lookups in O(log n), so a
   file of 100,000 switches is not read in quadratic time. */
struct name_index {
	const char *name;
	int sw;
};

/* Slurm's limit on the nodes of a ring (topology/ring). */
#define RING_MAX_NODES 16

struct tmatch_affinity_net {
	tmatch_affinity_conf_t *conf;
	const char *file;
	tmatch_error_t *err;
	int kind; /* enum tmatch_affinity_net_kind of what was added */
	struct ref *refs;
	int nrefs, cap_refs;
	int cap_sw;               /* switches allocated in conf->sw */
	long names;               /* names made so far (switches and nodes) */
	size_t bytes;             /* ... and their characters, NULs included */
	size_t sw_bytes;          /* the switches' names' characters */
	long refs_named;          /* names in the Switches= lists resolved so far */
	size_t refs_bytes;        /* ... and their characters */
	struct name_index *index; /* [nindex]: the switches the file names */
	int nindex;
	int yaml;    /* topology.yaml's keys in messages, else topology.conf's */
	int nblocks; /* base blocks: conf->sw[0 .. nblocks-1] */
	long bsizes[TMATCH_AFFINITY_NET_BLOCK_LEVELS];
	int nbsizes, bsizes_line, bsizes_col;
};

static const char *const kind_names[] = {"nothing", "tree", "block", "ring", "torus3d", "flat"};

/* The keys of the file's syntax, for messages: a name, a node list, a
   list of child switches. */
enum { KEY_NAME, KEY_NODES, KEY_CHILDREN };

static const char *key(const tmatch_affinity_net_t *b, int what)
{
	static const char *const conf[][3] = {{"SwitchName=", "Nodes=", "Switches="},
	                                      {"BlockName=", "Nodes=", "Switches="},
	                                      {"RingName=", "Nodes=", "Switches="}};
	static const char *const yaml[][3] = {{"switch:", "nodes:", "children:"},
	                                      {"block:", "nodes:", "children:"},
	                                      {"ring:", "nodes:", "children:"},
	                                      {"name:", "nodes:", "children:"}};
	int k = b->kind == TMATCH_AFFINITY_NET_BLOCK   ? 1
	        : b->kind == TMATCH_AFFINITY_NET_RING  ? 2
	        : b->kind == TMATCH_AFFINITY_NET_TORUS ? 3
	                                               : 0;

	return b->yaml ? yaml[k][what] : conf[k < 3 ? k : 0][what];
}

int tmatch_affinity_net_error(tmatch_affinity_net_t *b, int errnum, int line, int col,
                              const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tmatch_error_vset(b->err, errnum, b->file, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

int tmatch_affinity_net_empty(const tmatch_affinity_net_t *b)
{
	return b->conf->nsw == 0 && b->kind != TMATCH_AFFINITY_NET_BLOCK;
}

static int oom(tmatch_affinity_net_t *b)
{
	return tmatch_error_set(b->err, ENOMEM, NULL, 0, 0, "out of memory");
}

static int too_many(tmatch_affinity_net_t *b, int line, int col, const char *key)
{
	return tmatch_affinity_net_error(
	    b, E2BIG, line, col,
	    "the file names more than %ld nodes and switches, or more than %zu MiB of "
	    "names, in all (at this %s): this is not a cluster's network",
	    TMATCH_TOPOLOGY_CONF_NAMES, TMATCH_TOPOLOGY_CONF_BYTES >> 20, key);
}

tmatch_affinity_net_t *tmatch_affinity_net_new(const char *file, int yaml, tmatch_error_t *err)
{
	tmatch_affinity_net_t *b = calloc(1, sizeof(*b));

	if (b)
		b->conf = calloc(1, sizeof(*b->conf));
	if (!b || !b->conf) {
		free(b);
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	b->file = file ? file : "<string>";
	b->err = err;
	b->yaml = yaml;
	snprintf(b->conf->file, sizeof(b->conf->file), "%s", b->file);
	snprintf(b->conf->name, sizeof(b->conf->name), "default");
	return b;
}

void tmatch_affinity_net_free(tmatch_affinity_net_t *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nrefs; i++)
		free(b->refs[i].list);
	free(b->refs);
	free(b->index);
	tmatch_affinity_conf_destroy(b->conf);
	free(b);
}

int tmatch_affinity_net_set_kind(tmatch_affinity_net_t *b, int kind, int line, int col)
{
	if (b->kind != TMATCH_AFFINITY_NET_NONE && b->kind != kind)
		return tmatch_affinity_net_error(
		    b, EINVAL, line, col,
		    "a %s entry in a %s topology: one topology describes one network "
		    "(give the other its own topology in topology.yaml)",
		    kind_names[kind], kind_names[b->kind]);
	b->kind = kind;
	b->conf->kind = kind;
	return 0;
}

int tmatch_affinity_net_new_switch(tmatch_affinity_net_t *b, const char *name, int made, int line,
                                   int col)
{
	tmatch_affinity_conf_t *conf = b->conf;
	struct tmatch__sw *s;
	size_t len = strlen(name) + 1;

	/* a switch's own name counts with the lists' (a file of a million
	   SwitchName= lines took 130 MB) */
	if (b->names >= TMATCH_TOPOLOGY_CONF_NAMES || len > TMATCH_TOPOLOGY_CONF_BYTES - b->bytes)
		return too_many(b, line, col, key(b, KEY_NAME));
	/* never true (the count only grows from 0): said for clang-analyzer
	   21, which loses it across aggregate_blocks and sees a negative index */
	if (conf->nsw < 0)
		return oom(b);
	if (conf->nsw == b->cap_sw) {
		int ncap = b->cap_sw ? 2 * b->cap_sw : 16;
		struct tmatch__sw *v = realloc(conf->sw, (size_t)ncap * sizeof(*conf->sw));

		if (!v)
			return oom(b);
		conf->sw = v;
		b->cap_sw = ncap;
	}
	s = &conf->sw[conf->nsw];
	memset(s, 0, sizeof(*s));
	if (!(s->name = strdup(name)))
		return oom(b);
	conf->nsw++;
	b->names++;
	b->bytes += len;
	b->sw_bytes += len;
	s->line = line;
	s->col = col;
	s->speed = 1;
	s->parent = -1;
	s->made = made;
	return conf->nsw - 1;
}

/* The names of one list, at most `max` of them in `max_bytes` (NULs
   included; *bytes gets what they take): counted before anything is
   made, their bytes capped while they are made. NULL with the error set,
   or with errno E2BIG and no message past either cap (the caller says
   which). */
static char **expand_within(tmatch_affinity_net_t *b, const char *list, long max, size_t max_bytes,
                            int *cnt, size_t *bytes, int line, int col, const char *key)
{
	tmatch_error_t e;
	char **v = NULL;

	tmatch_error_clear(&e);
	if (max < 1) {
		errno = E2BIG;
		return NULL;
	}
	if (tmatch_affinity_hostlist_count(list, max, &e) >= 0 || errno != E2BIG)
		v = tmatch__hostlist_expand_max(list, max, max_bytes, cnt, bytes, &e);
	if (!v && errno != E2BIG)
		tmatch_affinity_net_error(b, errno, line, col + (e.column > 0 ? e.column - 1 : 0),
		                          "bad %s: %s", key, e.msg);
	return v;
}

char **tmatch_affinity_net_expand(tmatch_affinity_net_t *b, const char *list, int *count, int line,
                                  int col, const char *what)
{
	size_t bytes = 0;
	char k[40];
	char **v;

	snprintf(k, sizeof(k), "%s hostlist", what ? what : key(b, KEY_NODES));
	v = expand_within(b, list, TMATCH_TOPOLOGY_CONF_NAMES - b->names,
	                  TMATCH_TOPOLOGY_CONF_BYTES - b->bytes, count, &bytes, line, col, k);
	if (!v) {
		if (errno == E2BIG)
			too_many(b, line, col, k);
		return NULL;
	}
	b->names += *count;
	b->bytes += bytes;
	return v;
}

/* Append the names v[0..n-1] (taken, NULL-terminated) to switch sw's
   nodes. The array at least doubles when it grows: slurm.conf's moves add
   nodes one at a time (a NodeName=n[1-200000] Topology= line is 200,000
   appends), which growing by what is added made quadratic wherever realloc
   cannot extend in place (1.6 GB and a minute under ASan, fuzz_topology). */
static int take_nodes(tmatch_affinity_net_t *b, int sw, char **v, int n)
{
	struct tmatch__sw *s = &b->conf->sw[sw];
	size_t need = (size_t)s->nnodes + (size_t)n + 1;

	if (!s->nodes) {
		s->nodes = v;
		s->nnodes = n;
		s->ncap = n + 1;
		return 0;
	}
	if (need > (size_t)s->ncap) {
		size_t ncap = 2 * need; /* need <= the names' cap + 1: fits an int */
		char **nv = realloc(s->nodes, ncap * sizeof(*nv));

		if (!nv) {
			tmatch_affinity_hostlist_free(v);
			return oom(b);
		}
		s->nodes = nv;
		s->ncap = (int)ncap;
	}
	memcpy(s->nodes + s->nnodes, v, (size_t)n * sizeof(*v));
	s->nnodes += n;
	s->nodes[s->nnodes] = NULL;
	free(v); /* the names moved */
	return 0;
}

int tmatch_affinity_net_add_node(tmatch_affinity_net_t *b, int sw, const char *node, int line,
                                 int col)
{
	size_t len = strlen(node) + 1;
	char **v;

	if (b->names >= TMATCH_TOPOLOGY_CONF_NAMES || len > TMATCH_TOPOLOGY_CONF_BYTES - b->bytes)
		return too_many(b, line, col, "node");
	v = calloc(2, sizeof(*v));
	if (!v || !(v[0] = strdup(node))) {
		free(v);
		return oom(b);
	}
	b->names++;
	b->bytes += len;
	return take_nodes(b, sw, v, 1);
}

int tmatch_affinity_net_add_child(tmatch_affinity_net_t *b, int parent, int child)
{
	struct tmatch__sw *s = &b->conf->sw[parent];

	/* capacity doubles at every power of two: no field keeps it */
	if (s->nchild == 0 || (s->nchild & (s->nchild - 1)) == 0) {
		int *c = realloc(s->child, (size_t)(s->nchild ? 2 * s->nchild : 2) * sizeof(int));

		if (!c)
			return oom(b);
		s->child = c;
	}
	s->child[s->nchild++] = child;
	b->conf->sw[child].parent = parent;
	return 0;
}

int tmatch_affinity_net_add_switch(tmatch_affinity_net_t *b, const char *name, int line, int col,
                                   const char *nodes, int nodes_line, int nodes_col,
                                   const char *switches, int sw_line, int sw_col, long speed)
{
	int sw;

	if (tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_TREE, line, col) < 0)
		return -1;
	sw = tmatch_affinity_net_new_switch(b, name, 0, line, col);
	if (sw < 0)
		return -1;
	b->conf->sw[sw].speed = speed;
	if (nodes) {
		int cnt = 0;
		char **v = tmatch_affinity_net_expand(b, nodes, &cnt, nodes_line, nodes_col, NULL);

		if (!v || take_nodes(b, sw, v, cnt) < 0)
			return -1;
	}
	if (switches) {
		struct ref *r = b->refs;

		if (b->nrefs == b->cap_refs) { /* doubling: 100,000 lines stay linear */
			int ncap = b->cap_refs ? 2 * b->cap_refs : 16;

			r = realloc(b->refs, (size_t)ncap * sizeof(*r));
			if (!r)
				return oom(b);
			b->cap_refs = ncap;
		}
		b->refs = r;
		r[b->nrefs].list = strdup(switches);
		if (!r[b->nrefs].list)
			return oom(b);
		r[b->nrefs].sw = sw;
		r[b->nrefs].line = sw_line;
		r[b->nrefs].col = sw_col;
		b->nrefs++;
	}
	return 0;
}

int tmatch_affinity_net_add_block(tmatch_affinity_net_t *b, const char *name, int line, int col,
                                  const char *nodes, int nodes_line, int nodes_col)
{
	int sw;

	if (tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_BLOCK, line, col) < 0)
		return -1;
	if (b->nblocks >= (1 << 20))
		return too_many(b, line, col, "block");
	sw = tmatch_affinity_net_new_switch(b, name, 0, line, col);
	if (sw < 0)
		return -1;
	b->nblocks++;
	if (nodes) {
		int cnt = 0;
		char **v = tmatch_affinity_net_expand(b, nodes, &cnt, nodes_line, nodes_col, NULL);

		if (!v || take_nodes(b, sw, v, cnt) < 0)
			return -1;
	}
	return 0;
}

int tmatch_affinity_net_block_sizes(tmatch_affinity_net_t *b, const long *sizes, int n, int line,
                                    int col)
{
	if (tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_BLOCK, line, col) < 0)
		return -1;
	if (b->nbsizes)
		return tmatch_affinity_net_error(b, EINVAL, line, col,
		                                 "the block sizes are given twice");
	if (n < 1 || n > TMATCH_AFFINITY_NET_BLOCK_LEVELS)
		return tmatch_affinity_net_error(
		    b, EINVAL, line, col,
		    "%d block sizes: give 1 to %d (the base block's nodes, then larger "
		    "sizes)",
		    n, TMATCH_AFFINITY_NET_BLOCK_LEVELS);
	memcpy(b->bsizes, sizes, (size_t)n * sizeof(*sizes));
	b->nbsizes = n;
	b->bsizes_line = line;
	b->bsizes_col = col;
	return 0;
}

/* Two items under one new made switch named "NAME/a-b" (ring positions). */
static int ring_segment(tmatch_affinity_net_t *b, const char *ring, int first, int last, int line,
                        int col)
{
	char name[96];

	snprintf(name, sizeof(name), "%.64s/%d-%d", ring, first, last);
	return tmatch_affinity_net_new_switch(b, name, 1, line, col);
}

int tmatch_affinity_net_add_ring(tmatch_affinity_net_t *b, const char *name, int line, int col,
                                 const char *nodes, int nodes_line, int nodes_col)
{
	/* item k of the current level: a switch (sw[k] >= 0) or a node (-1),
	   covering ring positions first[k] .. last[k] */
	int sw[RING_MAX_NODES], first[RING_MAX_NODES], last[RING_MAX_NODES];
	int ring, cnt = 0, n, k;
	long total;
	char **v;

	if (tmatch_affinity_net_set_kind(b, TMATCH_AFFINITY_NET_RING, line, col) < 0)
		return -1;
	if (!nodes)
		return tmatch_affinity_net_error(b, EINVAL, line, col, "ring '%.64s' has no nodes",
		                                 name);
	total = tmatch_affinity_hostlist_count(nodes, RING_MAX_NODES, NULL);
	if (total < 0 && errno == E2BIG)
		return tmatch_affinity_net_error(
		    b, EINVAL, nodes_line, nodes_col,
		    "ring '%.64s' has more than %d nodes, Slurm's limit", name, RING_MAX_NODES);
	ring = tmatch_affinity_net_new_switch(b, name, 0, line, col);
	if (ring < 0)
		return -1;
	v = tmatch_affinity_net_expand(b, nodes, &cnt, nodes_line, nodes_col, NULL);
	if (!v)
		return -1;
	if (cnt > RING_MAX_NODES) { /* counted above; checked again for the analyser */
		tmatch_affinity_hostlist_free(v);
		return tmatch_affinity_net_error(b, EINVAL, nodes_line, nodes_col,
		                                 "ring '%.64s' is too long", name);
	}
	if (cnt <= 2)
		return take_nodes(b, ring, v, cnt);
	/* level 0: the nodes in pairs, each pair a segment */
	for (n = 0, k = 0; k < cnt; k += 2, n++) {
		int seg = ring_segment(b, name, k, k + 1 < cnt ? k + 1 : k, nodes_line, nodes_col);

		if (seg < 0 ||
		    tmatch_affinity_net_add_node(b, seg, v[k], nodes_line, nodes_col) < 0 ||
		    (k + 1 < cnt &&
		     tmatch_affinity_net_add_node(b, seg, v[k + 1], nodes_line, nodes_col) < 0))
			goto fail;
		sw[n] = seg;
		first[n] = k;
		last[n] = k + 1 < cnt ? k + 1 : k;
	}
	tmatch_affinity_hostlist_free(v);
	v = NULL;
	/* then pairs of segments, until two or fewer remain under the ring; a
	   segment without a partner goes up as it is */
	while (n > 2) {
		int m = 0;

		for (k = 0; k < n; k += 2, m++) {
			int seg;

			if (k + 1 == n) {
				sw[m] = sw[k];
				first[m] = first[k];
				last[m] = last[k];
				continue;
			}
			seg = ring_segment(b, name, first[k], last[k + 1], nodes_line, nodes_col);
			if (seg < 0 || tmatch_affinity_net_add_child(b, seg, sw[k]) < 0 ||
			    tmatch_affinity_net_add_child(b, seg, sw[k + 1]) < 0)
				return -1;
			sw[m] = seg;
			first[m] = first[k];
			last[m] = last[k + 1];
		}
		n = m;
	}
	for (k = 0; k < n; k++)
		if (tmatch_affinity_net_add_child(b, ring, sw[k]) < 0)
			return -1;
	return 0;
fail:
	tmatch_affinity_hostlist_free(v);
	return -1;
}

static int name_index_cmp(const void *a, const void *b)
{
	const struct name_index *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->sw > y->sw) - (x->sw < y->sw);
}

/* The switch the file names `name`: through the index. */
static int find_switch_in(const tmatch_affinity_net_t *b, const char *name)
{
	const struct name_index *lo = b->index, *hi;

	if (!b->index)
		return -1;
	/* lower bound: the first entry >= name (ties on sw do not matter) */
	hi = lo + b->nindex;
	while (lo < hi) {
		const struct name_index *mid = lo + (hi - lo) / 2;

		if (strcmp(mid->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->index + b->nindex && strcmp(lo->name, name) == 0 ? lo->sw : -1;
}

/*
 * Each switch's level (0 = no child switches, else 1 + its highest child's),
 * children before parents, without recursion: a switch is done once all its
 * children are. Every switch has one parent at most, so the switches never
 * done are exactly those on a cycle of Switches=. Linear in the switches.
 * Returns -1 (ENOMEM) or the index of a switch on a cycle, or -2 when none.
 */
static int compute_levels(tmatch_affinity_conf_t *conf)
{
	int n = conf->nsw, head = 0, tail = 0, i;
	int *pending = calloc((size_t)n + 1, sizeof(int)),
	    *queue = calloc((size_t)n + 1, sizeof(int));

	if (!pending || !queue) {
		free(pending);
		free(queue);
		return -1;
	}
	for (i = 0; i < n; i++) {
		conf->sw[i].level = 0;
		pending[i] = conf->sw[i].nchild;
		if (pending[i] == 0)
			queue[tail++] = i;
	}
	while (head < tail) {
		int c = queue[head++], up = conf->sw[c].parent;

		if (up < 0)
			continue;
		if (conf->sw[c].level + 1 > conf->sw[up].level)
			conf->sw[up].level = conf->sw[c].level + 1;
		/* each switch is queued once, when its last child is done */
		if (--pending[up] == 0)
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			queue[tail++] = up;
	}
	for (i = 0; i < n && pending[i] == 0; i++)
		;
	free(pending);
	free(queue);
	return i < n ? i : -2;
}

struct nref {
	const char *name;
	int sw;
};

static int nref_cmp(const void *a, const void *b)
{
	const struct nref *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->sw > y->sw) - (x->sw < y->sw);
}

static const char *noun(const tmatch_affinity_net_t *b)
{
	return b->kind == TMATCH_AFFINITY_NET_BLOCK  ? "block"
	       : b->kind == TMATCH_AFFINITY_NET_RING ? "ring"
	                                             : "switch";
}

/* The index of the names the file gives, and their duplicates. */
static int index_names(tmatch_affinity_net_t *b)
{
	tmatch_affinity_conf_t *conf = b->conf;

	free(b->index);
	b->nindex = 0;
	b->index = calloc((size_t)conf->nsw + 1, sizeof(*b->index));
	if (!b->index)
		return oom(b);
	for (int i = 0; i < conf->nsw; i++)
		if (!conf->sw[i].made) {
			b->index[b->nindex].name = conf->sw[i].name;
			b->index[b->nindex].sw = i;
			b->nindex++;
		}
	qsort(b->index, (size_t)b->nindex, sizeof(*b->index), name_index_cmp);
	/* the second definition of a name is the error, at its line */
	for (int i = 1; i < b->nindex; i++)
		if (!strcmp(b->index[i - 1].name, b->index[i].name)) {
			const struct tmatch__sw *dup = &conf->sw[b->index[i].sw];

			return tmatch_affinity_net_error(b, EINVAL, dup->line, dup->col,
			                                 "%s '%.64s' is defined twice", noun(b),
			                                 dup->name);
		}
	return 0;
}

static int resolve_refs(tmatch_affinity_net_t *b)
{
	tmatch_affinity_conf_t *conf = b->conf;

	for (int r = 0; r < b->nrefs; r++) {
		struct ref *ref = &b->refs[r];
		int cnt = 0;
		/* each switch has one parent at most: the lists name at most
		   every switch once, in the bytes of their names */
		size_t bytes = 0;
		char k[40];
		char **v;

		snprintf(k, sizeof(k), "%s list", key(b, KEY_CHILDREN));
		v = expand_within(b, ref->list, conf->nsw - b->refs_named,
		                  b->sw_bytes - b->refs_bytes, &cnt, &bytes, ref->line, ref->col,
		                  k);
		if (!v) {
			if (errno == E2BIG)
				tmatch_affinity_net_error(
				    b, E2BIG, ref->line, ref->col,
				    "the %s lists name more switches than the %d that %s defines, "
				    "or "
				    "longer names: each switch has one parent",
				    key(b, KEY_CHILDREN), conf->nsw, key(b, KEY_NAME));
			return -1;
		}
		b->refs_named += cnt;
		b->refs_bytes += bytes;
		for (int j = 0; j < cnt; j++) {
			int c = find_switch_in(b, v[j]);

			if (c < 0)
				tmatch_affinity_net_error(
				    b, EINVAL, ref->line, ref->col,
				    "switch '%.64s' listed in %s of '%.64s' is not defined by any "
				    "%s",
				    v[j], key(b, KEY_CHILDREN), conf->sw[ref->sw].name,
				    key(b, KEY_NAME));
			else if (c == ref->sw)
				tmatch_affinity_net_error(b, EINVAL, ref->line, ref->col,
				                          "switch '%.64s' lists itself", v[j]);
			else if (conf->sw[c].parent >= 0)
				tmatch_affinity_net_error(
				    b, EINVAL, ref->line, ref->col,
				    "switch '%.64s' has two parents ('%.64s' and '%.64s'): a tree "
				    "needs one",
				    v[j], conf->sw[conf->sw[c].parent].name,
				    conf->sw[ref->sw].name);
			if (c < 0 || c == ref->sw || conf->sw[c].parent >= 0) {
				tmatch_affinity_hostlist_free(v);
				return -1;
			}
			if (tmatch_affinity_net_add_child(b, ref->sw, c) < 0) {
				tmatch_affinity_hostlist_free(v);
				return -1;
			}
		}
		tmatch_affinity_hostlist_free(v);
	}
	return 0;
}

/* A node under two switches: sort (name, switch) pairs, compare neighbours. */
static int check_nodes_once(tmatch_affinity_net_t *b)
{
	tmatch_affinity_conf_t *conf = b->conf;
	struct nref *v;
	size_t total = 0, m = 0;

	for (int i = 0; i < conf->nsw; i++)
		total += (size_t)conf->sw[i].nnodes;
	if (total < 2)
		return 0;
	v = malloc(total * sizeof(*v));
	if (!v)
		return oom(b);
	for (int i = 0; i < conf->nsw; i++)
		for (int j = 0; j < conf->sw[i].nnodes; j++) {
			v[m].name = conf->sw[i].nodes[j];
			v[m].sw = i;
			m++;
		}
	qsort(v, m, sizeof(*v), nref_cmp);
	for (size_t k = 1; k < m; k++)
		if (!strcmp(v[k - 1].name, v[k].name)) {
			const struct tmatch__sw *x = &conf->sw[v[k - 1].sw],
			                        *y = &conf->sw[v[k].sw];

			tmatch_affinity_net_error(
			    b, EINVAL, y->line, 0,
			    "node '%.64s' is under two %s ('%.64s' and '%.64s')", v[k].name,
			    b->kind == TMATCH_AFFINITY_NET_BLOCK ? "blocks" : "switches", x->name,
			    y->name);
			free(v);
			return -1;
		}
	free(v);
	return 0;
}

/*
 * Slurm's aggregated blocks (its block_record_validate): the base block's
 * node count is the first block size (else the first block's nodes); the
 * sizes give the levels, sizes of 1, 2, 4 ... base blocks (1 to 8 when no
 * sizes are given), up to the first that holds every block. A level's
 * aggregate is a run of that many consecutive blocks in the file's order,
 * left out at the end when the blocks left fit the level below. Each
 * aggregate is a switch over the highest ones below it.
 */
static int aggregate_blocks(tmatch_affinity_net_t *b)
{
	tmatch_affinity_conf_t *conf = b->conf;
	long bblock = b->nbsizes ? b->bsizes[0] : 0, size[TMATCH_AFFINITY_NET_BLOCK_LEVELS];
	unsigned levels = 0;
	int nsize = 0, nb = b->nblocks, *top, rc = -1;

	for (int i = 0; i < nb && !bblock; i++)
		bblock = conf->sw[i].nnodes;
	if (!bblock)
		return tmatch_affinity_net_error(
		    b, EINVAL, conf->sw[0].line, 0,
		    "the blocks have no nodes and no block sizes are given");
	if (!b->nbsizes)
		levels = 0xf;
	for (int i = 0; i < b->nbsizes; i++) {
		long q = b->bsizes[i] > 0 && b->bsizes[i] % bblock == 0 ? b->bsizes[i] / bblock : 0;
		int l = 0;

		while (q > 1 && q % 2 == 0 && l < TMATCH_AFFINITY_NET_BLOCK_LEVELS) {
			q /= 2;
			l++;
		}
		if (q != 1 || l >= TMATCH_AFFINITY_NET_BLOCK_LEVELS)
			return tmatch_affinity_net_error(
			    b, EINVAL, b->bsizes_line, b->bsizes_col,
			    "block size %ld is not the base block's %ld nodes times a power of "
			    "two below %d",
			    b->bsizes[i], bblock, 1 << TMATCH_AFFINITY_NET_BLOCK_LEVELS);
		levels |= 1u << l;
	}
	for (int l = 0; l < TMATCH_AFFINITY_NET_BLOCK_LEVELS; l++)
		if (levels & (1u << l)) {
			size[nsize++] = 1L << l;
			if (size[nsize - 1] >= nb)
				break;
		}
	top = malloc((size_t)nb * sizeof(*top));
	if (!top)
		return oom(b);
	for (int i = 0; i < nb; i++)
		top[i] = i;
	for (int j = 1; j < nsize; j++)
		for (long start = 0; start < nb; start += size[j]) {
			long left = nb - start, end = start + (size[j] < left ? size[j] : left);
			char name[160];
			int agg;

			if (size[j] > left && size[j - 1] >= left)
				break; /* the last blocks fit the level below */
			snprintf(name, sizeof(name), "%.64s..%.64s", conf->sw[start].name,
			         conf->sw[end - 1].name);
			agg = tmatch_affinity_net_new_switch(b, name, 1, conf->sw[start].line, 0);
			if (agg < 0)
				goto out;
			for (long i = start; i < end; i++) {
				if ((i == start || top[i] != top[i - 1]) &&
				    tmatch_affinity_net_add_child(b, agg, top[i]) < 0)
					goto out;
			}
			for (long i = start; i < end; i++)
				top[i] = agg;
		}
	rc = 0;
out:
	free(top);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* slurm.conf's NodeName ... Topology=                                      */

/* One node's move: to switch `to`, or out of the topology (-1). */
struct move {
	const char *node;
	int to;
	long order; /* later lines win */
};

static int move_cmp(const void *a, const void *b)
{
	const struct move *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* The unit of "TOPO:UNIT" in a Topology= value that names this topology:
   a pointer into `value` and its length, or NULL when it names it not. */
static const char *unit_of(const char *value, const char *topo, size_t *len)
{
	size_t tl = strlen(topo);

	for (const char *t = value; *t;) {
		size_t n = strcspn(t, ",");

		if (n >= tl && !strncmp(t, topo, tl) && (n == tl || t[tl] == ':')) {
			*len = n == tl ? 0 : n - tl - 1;
			return n == tl ? t + n : t + tl + 1;
		}
		t += n;
		if (*t == ',')
			t++;
	}
	return NULL;
}

/*
 * Where a Topology= unit puts a node: a base block by name (block); a leaf
 * switch, "s1:s2:s3" naming switches from the top down, those after the
 * first made under the one before when they do not exist (tree, as
 * slurmctld does). The switch, or -1 with the error set at slurm.conf's
 * line.
 */
static int unit_switch(tmatch_affinity_net_t *b, const char *unit, size_t len,
                       const struct tmatch_affinity_slurm_topo *st,
                       const struct tmatch_affinity_node_topo *nt)
{
	char tok[256];
	int at = -1;

	if (b->kind != TMATCH_AFFINITY_NET_TREE && b->kind != TMATCH_AFFINITY_NET_BLOCK)
		return tmatch_error_set(
		    b->err, EINVAL, st->file, nt->line, nt->col,
		    "Topology= moves nodes of %s topology '%.64s': moving nodes "
		    "of a %s is not read (list them in %s instead)",
		    kind_names[b->kind], b->conf->name, kind_names[b->kind], b->file);
	for (size_t i = 0; i < len;) {
		size_t n = 0;
		int sw;

		while (i + n < len && unit[i + n] != ':')
			n++;
		if (n == 0 || n >= sizeof(tok))
			return tmatch_error_set(b->err, EINVAL, st->file, nt->line, nt->col,
			                        "Topology=%.*s: an empty or overlong name",
			                        (int)len, unit);
		memcpy(tok, unit + i, n);
		tok[n] = '\0';
		i += n + (i + n < len);
		sw = find_switch_in(b, tok);
		if (b->kind == TMATCH_AFFINITY_NET_BLOCK) {
			if (sw < 0 || sw >= b->nblocks || i < len)
				return tmatch_error_set(
				    b->err, EINVAL, st->file, nt->line, nt->col,
				    "Topology=%.64s:%.64s: block topology '%.64s' of "
				    "%s has no block '%.64s'",
				    b->conf->name, tok, b->conf->name, b->file, tok);
			return sw;
		}
		if (sw < 0 && at < 0)
			return tmatch_error_set(
			    b->err, EINVAL, st->file, nt->line, nt->col,
			    "Topology=%.64s:%.64s: topology '%.64s' of %s has no "
			    "switch '%.64s' to start from",
			    b->conf->name, tok, b->conf->name, b->file, tok);
		if (sw < 0) {
			sw = tmatch_affinity_net_new_switch(b, tok, 0, nt->line, nt->col);
			if (sw < 0 || tmatch_affinity_net_add_child(b, at, sw) < 0 ||
			    index_names(b) < 0)
				return -1;
		}
		at = sw;
	}
	if (at < 0 || b->conf->sw[at].nchild > 0)
		return tmatch_error_set(b->err, EINVAL, st->file, nt->line, nt->col,
		                        "Topology=%.64s:%.*s: '%.64s' is not a leaf switch",
		                        b->conf->name, (int)len, unit,
		                        at < 0 ? "" : b->conf->sw[at].name);
	return at;
}

/* slurm.conf's moves: every NodeName line with a Topology= value moves its
   nodes to the unit it gives this topology, or out of it when it names
   other topologies only. Later lines win. */
static int apply_moves(tmatch_affinity_net_t *b, const struct tmatch_affinity_slurm_topo *st)
{
	tmatch_affinity_conf_t *conf = b->conf;
	struct move *mv = NULL;
	char ***lists = NULL;
	size_t nmv = 0, cap = 0;
	int rc = -1, nl = 0;

	if (!st || st->nnode == 0)
		return 0;
	lists = calloc((size_t)st->nnode, sizeof(*lists));
	if (!lists)
		return oom(b);
	for (int r = 0; r < st->nnode; r++) {
		const struct tmatch_affinity_node_topo *nt = &st->node[r];
		size_t len = 0;
		const char *unit = unit_of(nt->topology, conf->name, &len);
		int to = -1, cnt = 0;
		tmatch_error_t e;

		if (unit && len > 0 && (to = unit_switch(b, unit, len, st, nt)) < 0)
			goto out;
		tmatch_error_clear(&e);
		lists[nl] = tmatch__hostlist_expand_max(nt->nodes, TMATCH_TOPOLOGY_CONF_NAMES,
		                                        TMATCH_TOPOLOGY_CONF_BYTES, &cnt, NULL, &e);
		if (!lists[nl]) {
			tmatch_error_set(b->err, errno, st->file, nt->line, 0, "bad NodeName=: %s",
			                 e.msg);
			goto out;
		}
		nl++;
		if (nmv + (size_t)cnt > (size_t)TMATCH_TOPOLOGY_CONF_NAMES) {
			too_many(b, nt->line, nt->col, "NodeName= of slurm.conf");
			goto out;
		}
		if (nmv + (size_t)cnt > cap) {
			size_t ncap = 2 * (nmv + (size_t)cnt);
			struct move *v = realloc(mv, ncap * sizeof(*v));

			if (!v) {
				oom(b);
				goto out;
			}
			mv = v;
			cap = ncap;
		}
		for (int k = 0; k < cnt; k++) {
			mv[nmv].node = lists[nl - 1][k];
			mv[nmv].to = to;
			mv[nmv].order = (long)nmv;
			nmv++;
		}
	}
	if (nmv == 0) {
		rc = 0;
		goto out;
	}
	qsort(mv, nmv, sizeof(*mv), move_cmp);
	{
		/* the last move of each node stands */
		size_t w = 0;

		for (size_t i = 0; i < nmv; i++) {
			if (w > 0 && !strcmp(mv[w - 1].node, mv[i].node))
				w--;
			mv[w++] = mv[i];
		}
		nmv = w;
	}
	/* out of the switches the file put them under ... */
	for (int s = 0; s < conf->nsw; s++) {
		struct tmatch__sw *sw = &conf->sw[s];
		int w = 0;

		for (int k = 0; k < sw->nnodes; k++) {
			/* binary search by name only */
			size_t lo = 0, hi = nmv;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (strcmp(mv[mid].node, sw->nodes[k]) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < nmv && !strcmp(mv[lo].node, sw->nodes[k])) {
				free(sw->nodes[k]);
				continue;
			}
			sw->nodes[w++] = sw->nodes[k];
		}
		sw->nnodes = w;
		if (sw->nodes)
			sw->nodes[w] = NULL;
	}
	/* ... and under the ones slurm.conf names */
	for (size_t i = 0; i < nmv; i++)
		if (mv[i].to >= 0 &&
		    tmatch_affinity_net_add_node(b, mv[i].to, mv[i].node, 0, 0) < 0)
			goto out;
	rc = 0;
out:
	for (int i = 0; i < nl; i++)
		tmatch_affinity_hostlist_free(lists[i]);
	free(lists);
	free(mv);
	return rc;
}

tmatch_affinity_conf_t *tmatch_affinity_net_finish(tmatch_affinity_net_t *b, const char *name,
                                                   const struct tmatch_affinity_slurm_topo *slurm)
{
	tmatch_affinity_conf_t *conf = b->conf;
	int i;

	if (name)
		snprintf(conf->name, sizeof(conf->name), "%s", name);
	if (conf->kind == TMATCH_AFFINITY_NET_NONE)
		conf->kind = TMATCH_AFFINITY_NET_FLAT;
	if (index_names(b) < 0 || resolve_refs(b) < 0)
		return NULL;
	if (b->kind == TMATCH_AFFINITY_NET_BLOCK && b->nblocks == 0) {
		tmatch_affinity_net_error(b, EINVAL, b->bsizes_line, b->bsizes_col,
		                          "block sizes but no block");
		return NULL;
	}
	if (b->nblocks > 0 && aggregate_blocks(b) < 0)
		return NULL;
	if (check_nodes_once(b) < 0 || apply_moves(b, slurm) < 0)
		return NULL;
	i = compute_levels(conf);
	if (i == -1) {
		oom(b);
		return NULL;
	}
	if (i >= 0) {
		tmatch_affinity_net_error(b, EINVAL, conf->sw[i].line, 0,
		                          "switch '%.64s' is part of a cycle", conf->sw[i].name);
		return NULL;
	}
	b->conf = NULL;
	return conf;
}

const char *tmatch_affinity_conf_kind(const tmatch_affinity_conf_t *conf)
{
	if (!conf) {
		errno = EINVAL;
		return NULL;
	}
	return kind_names[conf->kind == TMATCH_AFFINITY_NET_NONE ? TMATCH_AFFINITY_NET_TREE
	                                                         : conf->kind];
}

const char *tmatch_affinity_conf_name(const tmatch_affinity_conf_t *conf)
{
	if (!conf) {
		errno = EINVAL;
		return NULL;
	}
	return conf->name;
}

int tmatch_affinity_conf_nb_switches(const tmatch_affinity_conf_t *conf)
{
	if (!conf) {
		errno = EINVAL;
		return -1;
	}
	return conf->nsw;
}

/* Switch i of conf, or NULL with errno EINVAL. */
static const struct tmatch__sw *switch_at(const tmatch_affinity_conf_t *conf, int i)
{
	if (!conf || i < 0 || i >= conf->nsw) {
		errno = EINVAL;
		return NULL;
	}
	return &conf->sw[i];
}

const char *tmatch_affinity_conf_switch_name(const tmatch_affinity_conf_t *conf, int i)
{
	const struct tmatch__sw *s = switch_at(conf, i);
	return s ? s->name : NULL;
}

int tmatch_affinity_conf_switch_level(const tmatch_affinity_conf_t *conf, int i)
{
	const struct tmatch__sw *s = switch_at(conf, i);
	return s ? s->level : -1;
}

long tmatch_affinity_conf_switch_speed(const tmatch_affinity_conf_t *conf, int i)
{
	const struct tmatch__sw *s = switch_at(conf, i);
	return s ? s->speed : -1;
}

/* ------------------------------------------------------------------------ */
/* SLURM_TOPOLOGY_ADDR                                                        */

static int find_switch(const tmatch_affinity_conf_t *conf, const char *name)
{
	int i;
	for (i = 0; i < conf->nsw; i++)
		if (!strcmp(conf->sw[i].name, name))
			return i;
	return -1;
}

tmatch_affinity_conf_t *tmatch_affinity_conf_from_addrs(const char *const *addrs, int n,
                                                        tmatch_error_t *err)
{
	tmatch_affinity_conf_t *conf;
	int a, ncomp = -1;
	if (!addrs || n <= 0) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no SLURM_TOPOLOGY_ADDR values");
		return NULL;
	}
	conf = calloc(1, sizeof(*conf));
	if (!conf) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	snprintf(conf->file, sizeof(conf->file), "SLURM_TOPOLOGY_ADDR");
	snprintf(conf->name, sizeof(conf->name), "default");
	conf->kind = TMATCH_AFFINITY_NET_TREE;
	for (a = 0; a < n; a++) {
		char *copy, *tok, *save = NULL, *comp[TMATCH_AFFINITY_MAX_LEVELS];
		int k = 0, c, parent = -1;
		if (!addrs[a] || !*addrs[a]) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "SLURM_TOPOLOGY_ADDR #%d is empty", a);
			goto fail;
		}
		copy = strdup(addrs[a]);
		if (!copy)
			goto oom;
		for (tok = strtok_r(copy, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
			if (k == TMATCH_AFFINITY_MAX_LEVELS - 2) {
				free(copy);
				tmatch_error_set(err, EINVAL, NULL, 0, 0,
				                 "SLURM_TOPOLOGY_ADDR '%.64s' has too many levels",
				                 addrs[a]);
				goto fail;
			}
			comp[k++] = tok;
		}
		if (k == 0 || (ncomp >= 0 && k != ncomp)) {
			free(copy);
			tmatch_error_set(
			    err, EINVAL, NULL, 0, 0,
			    "SLURM_TOPOLOGY_ADDR '%.64s' does not have the %d levels of "
			    "the others",
			    addrs[a], ncomp);
			goto fail;
		}
		ncomp = k;
		for (c = 0; c < k - 1; c++) {
			int s = find_switch(conf, comp[c]);
			if (s < 0) {
				struct tmatch__sw *v =
				    realloc(conf->sw, (size_t)(conf->nsw + 1) * sizeof(*conf->sw));
				if (!v) {
					free(copy);
					goto oom;
				}
				conf->sw = v;
				s = conf->nsw++;
				memset(&v[s], 0, sizeof(v[s]));
				v[s].speed = 1;
				v[s].parent = parent;
				v[s].level = k - 2 - c;
				if (!(v[s].name = strdup(comp[c]))) {
					free(copy);
					goto oom;
				}
				if (parent >= 0) {
					struct tmatch__sw *ps = &conf->sw[parent];
					int *ch = realloc(ps->child,
					                  (size_t)(ps->nchild + 1) * sizeof(int));
					if (!ch) {
						free(copy);
						goto oom;
					}
					ps->child = ch;
					ps->child[ps->nchild++] = s;
				}
			} else if (conf->sw[s].parent != parent) {
				free(copy);
				tmatch_error_set(
				    err, EINVAL, NULL, 0, 0,
				    "SLURM_TOPOLOGY_ADDR values disagree on the parent of "
				    "switch '%.64s'",
				    conf->sw[s].name);
				goto fail;
			}
			parent = s;
		}
		if (parent >= 0) {
			struct tmatch__sw *ps = &conf->sw[parent];
			char **nv = realloc(ps->nodes, (size_t)(ps->nnodes + 1) * sizeof(char *));
			if (!nv) {
				free(copy);
				goto oom;
			}
			ps->nodes = nv;
			ps->ncap = ps->nnodes + 1;
			if (!(ps->nodes[ps->nnodes] = strdup(comp[k - 1]))) {
				free(copy);
				goto oom;
			}
			ps->nnodes++;
		}
		free(copy);
	}
	return conf;
oom:
	tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
fail:
	tmatch_affinity_conf_destroy(conf);
	return NULL;
}
