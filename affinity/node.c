/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node.c - the tree of one node from hwloc (live, XML or synthetic),
 * restricted to the CPUs the step may use.
 *
 * The hwloc tree is walked once. Packages, dies, groups, NUMA nodes, L3 and
 * L2 caches, cores and PUs that hold an allowed CPU become explicit nodes;
 * everything else (L1 caches, Misc) is looked through. A unit is a core
 * (SMT one/core) or a PU (SMT all). With cpus_per_task > 1 units are then
 * grouped bottom-up: a group is formed in the smallest subtree that still
 * holds enough units, so a task's CPUs share the closest cache.
 */
#include "affinity/affinity_private.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The largest hwloc XML accepted: a node of thousands of PUs with its
   caches, NUMA distances and I/O stays under a few MiB. */
#define MAX_XML_BYTES ((size_t)64 << 20)

void tmatch_affinity_opts_init(tmatch_affinity_opts_t *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->source = TMATCH_AFFINITY_SRC_LIVE;
	opts->cpus_per_task = 1;
	opts->smt = TMATCH_AFFINITY_SMT_ONE;
}

int tmatch_affinity_smt_parse(const char *name, int *smt, tmatch_error_t *err)
{
	static const char *const names[] = {"one", "core", "all"};
	int i;
	for (i = 0; name && smt && i < 3; i++) {
		if (!strcmp(name, names[i])) {
			*smt = i;
			return 0;
		}
	}
	return tmatch_error_set(err, EINVAL, NULL, 0, 0,
	                        "unknown SMT policy '%.32s': use one, core or all",
	                        name ? name : "(null)");
}

int tmatch__cores_to_cpuset(hwloc_topology_t topo, const char *cores, hwloc_bitmap_t out,
                            tmatch_error_t *err)
{
	hwloc_bitmap_t idx = hwloc_bitmap_alloc();
	int rc = -1, ncores, i;
	hwloc_obj_type_t type = HWLOC_OBJ_CORE;
	if (!idx)
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	if (tmatch_affinity_cpuset_parse(cores, "core list", idx, err) < 0)
		goto out;
	ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	if (ncores <= 0) { /* no cores known: Slurm counts PUs as cores */
		type = HWLOC_OBJ_PU;
		ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	}
	hwloc_bitmap_zero(out);
	hwloc_bitmap_foreach_begin(i, idx)
	{
		/* Slurm's abstract core index = core logical index (socket-major). */
		hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, (unsigned)i);
		if (!core) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "core %d does not exist: this node has cores 0-%d", i,
			                 ncores - 1);
			hwloc_bitmap_zero(out);
			goto out;
		}
		hwloc_bitmap_or(out, out, core->cpuset);
	}
	hwloc_bitmap_foreach_end();
	rc = 0;
out:
	hwloc_bitmap_free(idx);
	return rc;
}

struct build {
	const tmatch_affinity_opts_t *opts;
	hwloc_const_bitmap_t allowed;
	int nunits;
};

static int kind_of(hwloc_obj_t obj)
{
	switch (obj->type) {
	case HWLOC_OBJ_PACKAGE:
		return TMATCH__K_PACKAGE;
	case HWLOC_OBJ_DIE:
		return TMATCH__K_DIE;
	case HWLOC_OBJ_GROUP:
		return TMATCH__K_GROUP;
	case HWLOC_OBJ_L3CACHE:
		return TMATCH__K_L3;
	case HWLOC_OBJ_L2CACHE:
		return TMATCH__K_L2;
	case HWLOC_OBJ_CORE:
		return TMATCH__K_CORE;
	case HWLOC_OBJ_PU:
		return TMATCH__K_PU;
	default:
		return -1;
	}
}

static struct tmatch__xnode *add_new(struct tmatch__xnode *parent, int kind)
{
	struct tmatch__xnode *x = tmatch__xnode_new(kind);
	if (!x)
		return NULL;
	if (tmatch__xnode_add(parent, x) < 0) {
		free(x);
		return NULL;
	}
	return x;
}

static int walk(struct build *b, hwloc_obj_t obj, struct tmatch__xnode *xp, int is_root)
{
	struct tmatch__xnode *cur = xp;
	int kind;
	unsigned i;

	if (!obj->cpuset || !hwloc_bitmap_intersects(obj->cpuset, b->allowed))
		return 0;
	kind = is_root ? -1 : kind_of(obj);
	if (kind == TMATCH__K_PU ||
	    (kind == TMATCH__K_CORE && b->opts->smt != TMATCH_AFFINITY_SMT_ALL)) {
		/* a unit: a core (SMT one/core) or a PU */
		struct tmatch__xnode *u = add_new(cur, kind);
		if (!u || !(u->cpuset = hwloc_bitmap_alloc()))
			return -1;
		hwloc_bitmap_and(u->cpuset, obj->cpuset, b->allowed);
		if (kind == TMATCH__K_CORE && b->opts->smt == TMATCH_AFFINITY_SMT_ONE)
			hwloc_bitmap_singlify(u->cpuset);
		u->node = 0;
		b->nunits++;
		return 0;
	}
	if (!is_root && obj->memory_arity > 0) {
		hwloc_obj_t m;
		for (m = obj->memory_first_child; m; m = m->next_sibling)
			if (m->type == HWLOC_OBJ_NUMANODE)
				break;
		if (m && kind == TMATCH__K_GROUP) {
			kind = TMATCH__K_NUMA; /* hwloc's group holding a NUMA node is that node */
		} else if (m) {
			/* a NUMA node inside a package (or cache): one level below it */
			if (kind >= 0 && !(cur = add_new(cur, kind)))
				return -1;
			kind = TMATCH__K_NUMA;
		}
	}
	if (kind >= 0) {
		cur = add_new(cur, kind);
		if (!cur)
			return -1;
	}
	for (i = 0; i < obj->arity; i++)
		if (walk(b, obj->children[i], cur, 0) < 0)
			return -1;
	return 0;
}

/* Drop explicit nodes left without units (cannot happen with a consistent
   topology, but a bad XML should not give empty subtrees). */
static void prune_empty(struct tmatch__xnode *n)
{
	int i, k = 0;
	for (i = 0; i < n->nchild; i++) {
		struct tmatch__xnode *c = n->child[i];
		if (c->nchild)
			prune_empty(c);
		if (c->nchild == 0 && !c->cpuset)
			tmatch__xnode_free(c);
		else
			n->child[k++] = c;
	}
	n->nchild = k;
}

/*
 * Positions of every unit. An object is numbered among the objects of its
 * kind inside its nearest "anchor" ancestor, every kind but L2 being an
 * anchor: a core is core 5 of 14 in its L3 (not 0 of 1 in its private L2),
 * a PU is PU 1 of 2 in its core. `global` counts the objects of a kind in
 * depth-first order over the whole node.
 */
static int is_anchor(int kind)
{
	return kind != TMATCH__K_L2;
}

static void count_kinds(const struct tmatch__xnode *n, int *tot)
{
	int i;
	for (i = 0; i < n->nchild; i++) {
		const struct tmatch__xnode *c = n->child[i];
		tot[c->kind]++;
		if (!is_anchor(c->kind))
			count_kinds(c, tot);
	}
}

static void positions(struct tmatch__xnode *n, const struct tmatch__pos *path, int *next,
                      const int *tot, int *global)
{
	int i;
	for (i = 0; i < n->nchild; i++) {
		struct tmatch__xnode *c = n->child[i];
		struct tmatch__pos p = *path;
		if (p.n < TMATCH_AFFINITY_MAX_LEVELS) {
			p.kind[p.n] = (unsigned char)c->kind;
			p.swlevel[p.n] = 0;
			p.index[p.n] = next[c->kind]++;
			p.count[p.n] = tot[c->kind];
			p.global[p.n] = global[c->kind];
			p.n++;
		}
		c->global = global[c->kind]++;
		if (c->nchild == 0) {
			c->pos = p;
		} else if (is_anchor(c->kind)) {
			int nnext[TMATCH__K_COUNT] = {0}, ntot[TMATCH__K_COUNT] = {0};
			count_kinds(c, ntot);
			positions(c, &p, nnext, ntot, global);
		} else {
			positions(c, &p, next, tot, global);
		}
	}
}

/* Largest number of CPUs in one unit (threads per core for SMT core). */
static int max_unit_weight(const struct tmatch__xnode *n)
{
	int i, m = 0;
	if (n->nchild == 0)
		return n->cpuset ? hwloc_bitmap_weight(n->cpuset) : 0;
	for (i = 0; i < n->nchild; i++) {
		int w = max_unit_weight(n->child[i]);
		if (w > m)
			m = w;
	}
	return m;
}

struct units {
	struct tmatch__xnode **v;
	int n, cap;
};

static int units_push(struct units *u, struct tmatch__xnode *x)
{
	if (u->n == u->cap) {
		int cap = u->cap ? 2 * u->cap : 16;
		struct tmatch__xnode **v =
		    realloc(u->v, (size_t)cap * sizeof(struct tmatch__xnode *));
		if (!v)
			return -1;
		u->v = v;
		u->cap = cap;
	}
	u->v[u->n++] = x;
	return 0;
}

/*
 * Group the units under n into slots of `cpt` units. Units that do not fill
 * a slot inside a child are passed up and grouped with their cousins here;
 * what does not fill a slot here goes to *left.
 */
static int group(struct tmatch__xnode *n, int cpt, struct units *left)
{
	struct units mine = {NULL, 0, 0};
	struct tmatch__xnode **kids = n->child;
	int nk = n->nchild, i, start, rc = -1;

	if (cpt < 1) { /* a slot holds at least one unit */
		errno = EINVAL;
		return -1;
	}
	n->child = NULL;
	n->nchild = n->cap = 0;
	for (i = 0; i < nk; i++) {
		struct tmatch__xnode *c = kids[i];
		kids[i] = NULL;
		if (c->nchild == 0) {
			if (units_push(&mine, c) < 0) {
				tmatch__xnode_free(c);
				goto out;
			}
			continue;
		}
		rc = group(c, cpt, &mine);
		if (c->nchild == 0) {
			tmatch__xnode_free(c);
		} else if (tmatch__xnode_add(n, c) < 0) {
			tmatch__xnode_free(c);
			rc = -1;
		}
		if (rc < 0)
			goto out;
		rc = -1;
	}
	for (start = 0; start + cpt <= mine.n; start += cpt) {
		struct tmatch__xnode *s = tmatch__xnode_new(TMATCH__K_SLOT);
		int j;
		if (!s || !(s->cpuset = hwloc_bitmap_alloc()) || tmatch__xnode_add(n, s) < 0) {
			tmatch__xnode_free(s);
			goto out;
		}
		s->node = 0;
		s->pos = mine.v[start]->pos;
		for (j = start; j < start + cpt; j++) {
			hwloc_bitmap_or(s->cpuset, s->cpuset, mine.v[j]->cpuset);
			tmatch__xnode_free(mine.v[j]);
			mine.v[j] = NULL;
		}
	}
	for (; start < mine.n; start++) {
		if (units_push(left, mine.v[start]) < 0)
			goto out;
		mine.v[start] = NULL;
	}
	rc = 0;
out:
	for (i = 0; i < nk; i++)
		tmatch__xnode_free(kids[i]);
	free(kids);
	for (i = 0; i < mine.n; i++)
		tmatch__xnode_free(mine.v[i]);
	free(mine.v);
	return rc;
}

static int restrict_by_list(hwloc_bitmap_t allowed, const char *list, const char *what,
                            tmatch_error_t *err)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	if (!set)
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	if (tmatch_affinity_cpuset_parse(list, what, set, err) < 0) {
		hwloc_bitmap_free(set);
		return -1;
	}
	hwloc_bitmap_and(allowed, allowed, set);
	hwloc_bitmap_free(set);
	return 0;
}

/*
 * The product of the arities of an hwloc synthetic description ("pack:2
 * core:4 pu:2": the number after each ':'), saturated past the cap: what
 * hwloc would build, known before it builds it.
 */
/* The processing units a synthetic description gives (the product of the
   numbers after ':', capped past the limit) and its largest arity. */
static long long synthetic_leaves(const char *desc, long long *max_arity)
{
	long long n = 1, cap = TMATCH_AFFINITY_SYNTHETIC_MAX_PUS;
	int depth = 0;

	*max_arity = 0;
	for (const char *p = desc; p && *p; p++) {
		unsigned long long d, any;
		const char *num = NULL;
		char *end;
		long long a;

		/* attributes, "(memory=1GB ...)", hold no counts */
		if (*p == '(' || *p == ')') {
			depth += *p == '(' ? 1 : depth > 0 ? -1 : 0;
			continue;
		}
		if (depth)
			continue;
		/* a count follows a ':' ("core:4", "l3 :7") or stands alone as a
		   word ("pack: 6351", "2 2 4": hwloc reads those too) */
		if (*p == ':')
			num = p + 1;
		else if ((p == desc || isspace((unsigned char)p[-1])) &&
		         (isdigit((unsigned char)*p) || *p == '+' || *p == '-'))
			num = p;
		if (!num)
			continue;
		/* as hwloc reads it (strtoul: blanks, a sign, 0x...), taking the
		   larger of the decimal and the prefixed readings; a minus sign
		   wraps to a huge count */
		errno = 0;
		d = strtoull(num, &end, 10);
		any = strtoull(num, &end, 0);
		a = errno || d > (unsigned long long)cap || any > (unsigned long long)cap
		        ? cap + 1
		        : (long long)(d > any ? d : any);
		if (a > *max_arity)
			*max_arity = a;
		if (a > 0)
			n = n > cap / a ? cap + 1 : n * a;
		if (end > p)
			p = end - 1; /* the number is read: go on after it */
	}
	return n;
}

/*
 * hwloc's topology for opts, loaded: this machine, the XML (opts->xml_buffer,
 * or the file read here, bounded, from a regular file: hwloc is given bytes,
 * never a path it would read whole or wait on, such as a FIFO) or the
 * synthetic description. *src names it for messages.
 */
static hwloc_topology_t topo_load(const tmatch_affinity_opts_t *opts, int *this_system,
                                  const char **src, tmatch_error_t *err)
{
	hwloc_topology_t topo;
	unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
	const char *bytes = opts->xml_buffer;
	char *xml = NULL;
	size_t len = opts->xml_len;
	int rc;

	*this_system = 0;
	if (hwloc_topology_init(&topo) < 0) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "cannot initialise hwloc");
		return NULL;
	}
	/* I/O only when asked (GPU steps, `topology show`): the CPU tree is the
	   same either way. From a file, every device (NVSwitches are bridges of
	   class "other", and GPU link matrices name them); from this machine
	   what hwloc deems important (GPUs, network cards, their bridges). */
	hwloc_topology_set_io_types_filter(topo, !opts->io ? HWLOC_TYPE_FILTER_KEEP_NONE
	                                         : opts->source == TMATCH_AFFINITY_SRC_LIVE
	                                             ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT
	                                             : HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_NONE);
	if (opts->source == TMATCH_AFFINITY_SRC_XML) {
		*src = opts->input;
		if (!bytes &&
		    !(bytes = xml = tmatch_file_read(opts->input, MAX_XML_BYTES, &len, err)))
			goto fail;
		if (len >= MAX_XML_BYTES || bytes[len] != '\0' ||
		    hwloc_topology_set_xmlbuffer(topo, bytes, (int)len + 1) < 0) {
			tmatch_error_set(err, EINVAL, opts->input, 0, 0,
			                 "hwloc cannot use this XML topology file");
			goto fail;
		}
		if (opts->this_system) {
			flags |= HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM;
			*this_system = 1;
		}
	} else if (opts->source == TMATCH_AFFINITY_SRC_SYNTHETIC) {
		long long arity;

		*src = "synthetic description";
		/* one node: hwloc's cost grows with the square of its processing
		   units and of an object's children (16,384 PUs: 6 s, 190 MB) */
		if (synthetic_leaves(opts->input, &arity) > TMATCH_AFFINITY_SYNTHETIC_MAX_PUS ||
		    arity > TMATCH_AFFINITY_SYNTHETIC_MAX_ARITY) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "the synthetic description is not one node: give at most "
			                 "%d processing units and %d children per object (larger "
			                 "machines: cluster:, or a tleaf tree)",
			                 TMATCH_AFFINITY_SYNTHETIC_MAX_PUS,
			                 TMATCH_AFFINITY_SYNTHETIC_MAX_ARITY);
			goto fail;
		}
		if (hwloc_topology_set_synthetic(topo, opts->input) < 0) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "invalid hwloc synthetic description '%.200s' (example: "
			                 "\"pack:2 l3:1 l2:14 l1:1 core:1 pu:2\")",
			                 opts->input);
			goto fail;
		}
	} else {
		*this_system = 1;
	}
	hwloc_topology_set_flags(topo, flags);
	rc = hwloc_topology_load(topo);
	free(xml);
	xml = NULL;
	if (rc < 0) {
		tmatch_error_set(
		    err, EINVAL, opts->source == TMATCH_AFFINITY_SRC_XML ? opts->input : NULL, 0, 0,
		    "hwloc cannot load %s: %s",
		    opts->source == TMATCH_AFFINITY_SRC_XML ? "this XML topology" : *src,
		    strerror(errno));
		goto fail;
	}
	return topo;
fail:
	free(xml);
	hwloc_topology_destroy(topo);
	return NULL;
}

/* hwloc's export of topo, in a buffer of ours. */
static char *export_xml(hwloc_topology_t topo, const char *name, size_t *len, tmatch_error_t *err)
{
	char *buf = NULL, *copy = NULL;
	int n = 0;

	if (hwloc_topology_export_xmlbuffer(topo, &buf, &n, 0) < 0 || n < 1) {
		tmatch_error_set(err, EINVAL, name, 0, 0,
		                 "hwloc cannot write this XML topology back: %s", strerror(errno));
	} else if ((size_t)n > MAX_XML_BYTES) {
		tmatch_error_set(err, EFBIG, name, 0, 0,
		                 "this XML topology grows beyond %zu MiB once loaded",
		                 MAX_XML_BYTES >> 20);
	} else if (!(copy = malloc((size_t)n))) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	} else {
		memcpy(copy, buf, (size_t)n); /* n counts the final NUL */
		*len = (size_t)n - 1;
	}
	if (buf)
		hwloc_free_xmlbuffer(topo, buf);
	return copy;
}

char *tmatch_affinity_xml_export(const tmatch_affinity_opts_t *opts, size_t *len,
                                 tmatch_error_t *err)
{
	hwloc_topology_t topo;
	const char *src = NULL;
	char *copy;
	int this_system;

	*len = 0;
	if (!opts || opts->source != TMATCH_AFFINITY_SRC_XML || !opts->input) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_affinity_xml_export: not an XML file");
		return NULL;
	}
	if (!(topo = topo_load(opts, &this_system, &src, err)))
		return NULL;
	copy = export_xml(topo, opts->input, len, err);
	hwloc_topology_destroy(topo);
	return copy;
}

char *tmatch_affinity_tree_xml(const tmatch_affinity_tree_t *tree, size_t *len, tmatch_error_t *err)
{
	if (!tree || !len || tree->nb_nodes != 1 || !tree->nodes[0].topo) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_affinity_tree_xml: not a node tree");
		return NULL;
	}
	*len = 0;
	return export_xml(tree->nodes[0].topo, NULL, len, err);
}

int tmatch_affinity_components_keep(void)
{
	/* hwloc counts its components' users: one topology never destroyed
	   keeps them loaded */
	static hwloc_topology_t kept;

	if (!kept && hwloc_topology_init(&kept) < 0)
		kept = NULL;
	return kept ? 0 : -1;
}

tmatch_affinity_tree_t *tmatch_affinity_node_load(const tmatch_affinity_opts_t *opts,
                                                  tmatch_error_t *err)
{
	tmatch_affinity_tree_t *tree = NULL;
	hwloc_topology_t topo = NULL;
	hwloc_bitmap_t allowed = NULL, set = NULL;
	struct tmatch__xnode *root = NULL;
	struct build b;
	int cpt, this_system = 0, counter[TMATCH__K_COUNT];
	const char *src = "this machine";

	if (!opts) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no options");
		return NULL;
	}
	if (opts->source < TMATCH_AFFINITY_SRC_LIVE ||
	    opts->source > TMATCH_AFFINITY_SRC_SYNTHETIC) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "unknown topology source %d",
		                 opts->source);
		return NULL;
	}
	if (opts->source != TMATCH_AFFINITY_SRC_LIVE && (!opts->input || !*opts->input)) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no %s given for the node topology",
		                 opts->source == TMATCH_AFFINITY_SRC_XML ? "XML file"
		                                                         : "synthetic description");
		return NULL;
	}
	if (opts->smt < TMATCH_AFFINITY_SMT_ONE || opts->smt > TMATCH_AFFINITY_SMT_ALL) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "unknown SMT policy %d: use one, core or all", opts->smt);
		return NULL;
	}
	cpt = opts->cpus_per_task <= 0 ? 1 : opts->cpus_per_task;
	if (opts->cpus_per_task < 0 || cpt > 1 << 20) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "cpus_per_task %d is out of range",
		                 opts->cpus_per_task);
		return NULL;
	}
	if (opts->use_current_binding && opts->source != TMATCH_AFFINITY_SRC_LIVE) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "use_current_binding needs the live topology, not %s",
		                 opts->source == TMATCH_AFFINITY_SRC_XML ? "XML" : "synthetic");
		return NULL;
	}

	topo = topo_load(opts, &this_system, &src, err);
	if (!topo)
		return NULL;

	allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo));
	set = hwloc_bitmap_alloc();
	if (!allowed || !set) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	if (opts->restrict_cpus &&
	    restrict_by_list(allowed, opts->restrict_cpus, "CPU list", err) < 0)
		goto fail;
	if (opts->alloc_cores) {
		if (tmatch__cores_to_cpuset(topo, opts->alloc_cores, set, err) < 0)
			goto fail;
		hwloc_bitmap_and(allowed, allowed, set);
	}
	if (opts->use_current_binding) {
		int r = opts->pid
		            ? hwloc_get_proc_cpubind(topo, opts->pid, set, HWLOC_CPUBIND_PROCESS)
		            : hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS);
		if (r < 0) {
			tmatch_error_set(err, errno, NULL, 0, 0,
			                 "cannot read the CPU binding of process %ld: %s",
			                 (long)opts->pid, strerror(errno));
			goto fail;
		}
		hwloc_bitmap_and(allowed, allowed, set);
	}
	if (hwloc_bitmap_iszero(allowed)) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "no CPU of %.200s is left after the restrictions (CPU list, "
		                 "allocated cores, current binding): check that they overlap",
		                 src);
		goto fail;
	}

	root = tmatch__xnode_new(TMATCH__K_NODE);
	if (!root) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	b.opts = opts;
	b.allowed = allowed;
	b.nunits = 0;
	if (walk(&b, hwloc_get_root_obj(topo), root, 1) < 0) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	prune_empty(root);
	{
		struct tmatch__pos p;
		memset(&p, 0, sizeof(p));
		int next[TMATCH__K_COUNT] = {0}, tot[TMATCH__K_COUNT] = {0};
		memset(counter, 0, sizeof(counter));
		p.n = 1;
		p.kind[0] = TMATCH__K_NODE;
		p.count[0] = 1;
		count_kinds(root, tot);
		positions(root, &p, next, tot, counter);
	}
	if (cpt > 1 && opts->smt == TMATCH_AFFINITY_SMT_CORE) {
		/* Slurm counts CPUs = hardware threads: a task of cpt CPUs gets
		   ceil(cpt / threads per core) whole cores */
		int tpc = max_unit_weight(root);
		cpt = (cpt + tpc - 1) / (tpc > 0 ? tpc : 1);
	}
	if (cpt > 1) {
		struct units left = {NULL, 0, 0};
		int i;
		if (b.nunits < cpt) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "%d CPUs per task but only %d usable %s", cpt, b.nunits,
			                 opts->smt == TMATCH_AFFINITY_SMT_ALL ? "PUs" : "cores");
			goto fail;
		}
		if (group(root, cpt, &left) < 0) {
			free(left.v);
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			goto fail;
		}
		if (left.n)
			tmatch_log_printf(
			    opts->log, opts->log_arg, TMATCH_LOG_WARNING,
			    "%d %s left unused: %d is not a multiple of %d CPUs per task", left.n,
			    opts->smt == TMATCH_AFFINITY_SMT_ALL ? "PUs" : "cores", b.nunits, cpt);
		for (i = 0; i < left.n; i++)
			tmatch__xnode_free(left.v[i]);
		free(left.v);
	}

	tree = calloc(1, sizeof(*tree));
	if (!tree || !(tree->nodes = calloc(1, sizeof(*tree->nodes))) ||
	    !(tree->nodes[0].name = strdup(opts->node_name ? opts->node_name : "localhost"))) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	tree->nb_nodes = 1;
	tree->nodes[0].topo = topo;
	tree->nodes[0].allowed = allowed;
	tree->nodes[0].this_system = this_system;
	tree->owned_topo = topo;
	topo = NULL;
	allowed = NULL;
	hwloc_bitmap_free(set);
	set = NULL;
	{
		struct tmatch__xnode *r = root;
		root = NULL;
		if (tmatch__xtree_finish(tree, r, err) < 0)
			goto fail;
	}
	return tree;
fail:
	tmatch_affinity_tree_destroy(tree);
	tmatch__xnode_free(root);
	if (set)
		hwloc_bitmap_free(set);
	if (allowed)
		hwloc_bitmap_free(allowed);
	if (topo)
		hwloc_topology_destroy(topo);
	return NULL;
}
