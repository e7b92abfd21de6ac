/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology_conf.c - topology.conf (the topology/tree plugin's syntax), read
 * by us rather than through slurm_load_topo(), whose API changes between
 * Slurm releases, and where Slurm keeps it. Its node and switch lists are
 * hostlists (hostlist.c).
 *
 *   # comment
 *   SwitchName=s0 Nodes=n[1-2] LinkSpeed=100
 *   SwitchName=top Switches=s[0-1] \
 *       LinkSpeed=200
 */
#include "affinity/affinity_private.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

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

/* A logical line: characters with the physical line and column of each. */
struct lline {
	char *c;
	int *line, *col;
	size_t n, cap;
};

static int lline_put(struct lline *l, char ch, int line, int col)
{
	if (l->n + 1 >= l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		char *c = realloc(l->c, cap);
		int *li, *co;
		if (!c)
			return -1;
		l->c = c;
		li = realloc(l->line, cap * sizeof(int));
		if (!li)
			return -1;
		l->line = li;
		co = realloc(l->col, cap * sizeof(int));
		if (!co)
			return -1;
		l->col = co;
		l->cap = cap;
	}
	l->c[l->n] = ch;
	l->line[l->n] = line;
	l->col[l->n] = col;
	l->n++;
	l->c[l->n] = '\0';
	return 0;
}

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

struct parser {
	tmatch_affinity_conf_t *conf;
	const char *file;
	tmatch_error_t *err;
	struct ref *refs;
	int nrefs, cap_refs;
	int cap_sw;               /* switches allocated in conf->sw */
	long names;               /* SwitchName= and Nodes= names so far */
	size_t bytes;             /* ... and their characters, NULs included */
	size_t sw_bytes;          /* the SwitchName= names' characters */
	long refs_named;          /* names in the Switches= lists resolved so far */
	size_t refs_bytes;        /* ... and their characters */
	struct name_index *index; /* [conf->nsw] once every line is read */
};

static int name_index_cmp(const void *a, const void *b)
{
	const struct name_index *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->sw > y->sw) - (x->sw < y->sw);
}

/* The switch called `name`: through the index when it exists. */
static int find_switch_in(const struct parser *p, const char *name)
{
	struct name_index key = {name, 0}, *lo = p->index, *hi;
	size_t n;

	if (!p->index)
		return -1;
	/* lower bound: the first entry >= name (ties on sw do not matter) */
	n = (size_t)p->conf->nsw;
	hi = lo + n;
	while (lo < hi) {
		struct name_index *mid = lo + (hi - lo) / 2;

		if (strcmp(mid->name, key.name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->index + n && strcmp(lo->name, name) == 0 ? lo->sw : -1;
}

static int find_switch(const tmatch_affinity_conf_t *conf, const char *name)
{
	int i;
	for (i = 0; i < conf->nsw; i++)
		if (!strcmp(conf->sw[i].name, name))
			return i;
	return -1;
}

static int perr(struct parser *p, int errnum, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int perr(struct parser *p, int errnum, int line, int col, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tmatch_error_set(p->err, errnum, p->file, line, col, "%s", msg);
}

static int too_many(struct parser *p, int line, int col, const char *key)
{
	return perr(p, E2BIG, line, col,
	            "the file names more than %ld nodes and switches, or more than %zu MiB of "
	            "names, in all (at this %s): this is not a cluster's topology.conf",
	            TMATCH_TOPOLOGY_CONF_NAMES, TMATCH_TOPOLOGY_CONF_BYTES >> 20, key);
}

/* The names of one list, at most `max` of them in `max_bytes` (NULs
   included; *bytes gets what they take): counted before anything is
   made, their bytes capped while they are made. NULL with the error set,
   or with errno E2BIG and no message past either cap (the caller says
   which). */
static char **expand_within(struct parser *p, const char *list, long max, size_t max_bytes,
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
		perr(p, errno, line, col + (e.column > 0 ? e.column - 1 : 0), "bad %s: %s", key,
		     e.msg);
	return v;
}

/* Parse one logical line (comments already removed). */
static int parse_line(struct parser *p, struct lline *l)
{
	size_t i = 0;
	char *swname = NULL, *nodes = NULL, *switches = NULL;
	int sw_line = 0, sw_col = 0, nodes_line = 0, nodes_col = 0, swi_line = 0, swi_col = 0;
	long speed = 1;
	int rc = -1, have_speed = 0;
	struct tmatch__sw *s;

	for (;;) {
		size_t ks, ke, vs, ve;
		char *key, *val;
		while (i < l->n && isspace((unsigned char)l->c[i]))
			i++;
		if (i >= l->n)
			break;
		ks = i;
		while (i < l->n && !isspace((unsigned char)l->c[i]) && l->c[i] != '=')
			i++;
		ke = i;
		if (i >= l->n || l->c[i] != '=') {
			perr(p, EINVAL, l->line[ks], l->col[ks],
			     "expected Key=Value, found '%.40s' without '='", l->c + ks);
			goto out;
		}
		if (ke == ks) {
			perr(p, EINVAL, l->line[ks], l->col[ks], "missing key before '='");
			goto out;
		}
		vs = ++i;
		while (i < l->n && !isspace((unsigned char)l->c[i]))
			i++;
		ve = i;
		if (ve == vs) {
			perr(p, EINVAL, l->line[ks], l->col[ks], "empty value for %.*s",
			     (int)(ke - ks), l->c + ks);
			goto out;
		}
		key = l->c + ks;
		val = strndup(l->c + vs, ve - vs);
		if (!val) {
			perr(p, ENOMEM, 0, 0, "out of memory");
			goto out;
		}
#define KEYIS(k) (ke - ks == strlen(k) && !strncasecmp(key, k, ke - ks))
		if (KEYIS("SwitchName")) {
			if (swname) {
				free(val);
				perr(p, EINVAL, l->line[ks], l->col[ks],
				     "SwitchName given twice on one line");
				goto out;
			}
			swname = val;
			sw_line = l->line[vs];
			sw_col = l->col[vs];
		} else if (KEYIS("Nodes")) {
			free(nodes);
			nodes = val;
			nodes_line = l->line[vs];
			nodes_col = l->col[vs];
		} else if (KEYIS("Switches")) {
			free(switches);
			switches = val;
			swi_line = l->line[vs];
			swi_col = l->col[vs];
		} else if (KEYIS("LinkSpeed")) {
			char *end;
			errno = 0;
			speed = strtol(val, &end, 10);
			if (*end || errno || speed <= 0) {
				free(val);
				perr(p, EINVAL, l->line[vs], l->col[vs],
				     "LinkSpeed must be a positive integer");
				goto out;
			}
			have_speed = 1;
			free(val);
		} else if (KEYIS("BlockName") || KEYIS("BlockSizes")) {
			free(val);
			perr(p, EINVAL, l->line[ks], l->col[ks],
			     "%.*s belongs to the topology/block plugin: only the topology/tree "
			     "syntax (SwitchName, Switches, Nodes, LinkSpeed) is read",
			     (int)(ke - ks), key);
			goto out;
		} else {
			free(val);
			perr(p, EINVAL, l->line[ks], l->col[ks],
			     "unknown key '%.*s': valid keys are SwitchName, Switches, Nodes, "
			     "LinkSpeed",
			     (int)(ke - ks > 40 ? 40 : ke - ks), key);
			goto out;
		}
#undef KEYIS
	}
	if (!swname && !nodes && !switches && !have_speed) {
		rc = 0; /* blank */
		goto out;
	}
	if (!swname) {
		perr(p, EINVAL, l->line[0], l->col[0], "line has no SwitchName=");
		goto out;
	}
	/* a name defined twice is found once every line is read (resolve) */
	if (p->conf->nsw == p->cap_sw) {
		int ncap = p->cap_sw ? 2 * p->cap_sw : 16;
		struct tmatch__sw *v = realloc(p->conf->sw, (size_t)ncap * sizeof(*p->conf->sw));
		if (!v) {
			perr(p, ENOMEM, 0, 0, "out of memory");
			goto out;
		}
		p->conf->sw = v;
		p->cap_sw = ncap;
	}
	/* a switch's own name counts with the lists' (a file of a million
	   SwitchName= lines took 130 MB) */
	if (p->names >= TMATCH_TOPOLOGY_CONF_NAMES ||
	    strlen(swname) + 1 > TMATCH_TOPOLOGY_CONF_BYTES - p->bytes) {
		too_many(p, sw_line, sw_col, "SwitchName=");
		goto out;
	}
	p->names++;
	p->bytes += strlen(swname) + 1;
	p->sw_bytes += strlen(swname) + 1;
	s = &p->conf->sw[p->conf->nsw++];
	memset(s, 0, sizeof(*s));
	s->name = swname;
	swname = NULL;
	s->line = sw_line;
	s->col = sw_col;
	s->speed = speed;
	s->parent = -1;
	if (nodes) {
		int cnt = 0;
		size_t bytes = 0;
		char **v = expand_within(p, nodes, TMATCH_TOPOLOGY_CONF_NAMES - p->names,
		                         TMATCH_TOPOLOGY_CONF_BYTES - p->bytes, &cnt, &bytes,
		                         nodes_line, nodes_col, "Nodes= hostlist");
		if (!v) {
			if (errno == E2BIG)
				too_many(p, nodes_line, nodes_col, "Nodes= hostlist");
			goto out;
		}
		s->nodes = v;
		s->nnodes = cnt;
		p->names += cnt;
		p->bytes += bytes;
	}
	if (switches) {
		struct ref *r = p->refs;

		if (p->nrefs == p->cap_refs) { /* doubling: 100,000 lines stay linear */
			int ncap = p->cap_refs ? 2 * p->cap_refs : 16;

			r = realloc(p->refs, (size_t)ncap * sizeof(*r));
			if (!r) {
				perr(p, ENOMEM, 0, 0, "out of memory");
				goto out;
			}
			p->cap_refs = ncap;
		}
		p->refs = r;
		r[p->nrefs].sw = p->conf->nsw - 1;
		r[p->nrefs].list = switches;
		r[p->nrefs].line = swi_line;
		r[p->nrefs].col = swi_col;
		p->nrefs++;
		switches = NULL;
	}
	rc = 0;
out:
	free(swname);
	free(nodes);
	free(switches);
	return rc;
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
		if (--pending[up] == 0)
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

static int resolve(struct parser *p)
{
	tmatch_affinity_conf_t *conf = p->conf;
	int r, i, j, k;

	p->index = calloc((size_t)conf->nsw + 1, sizeof(*p->index));
	if (!p->index)
		return perr(p, ENOMEM, 0, 0, "out of memory");
	for (i = 0; i < conf->nsw; i++) {
		p->index[i].name = conf->sw[i].name;
		p->index[i].sw = i;
	}
	qsort(p->index, (size_t)conf->nsw, sizeof(*p->index), name_index_cmp);
	/* the second definition of a name is the error, at its line */
	for (i = 1; i < conf->nsw; i++)
		if (!strcmp(p->index[i - 1].name, p->index[i].name)) {
			const struct tmatch__sw *dup = &conf->sw[p->index[i].sw];

			return perr(p, EINVAL, dup->line, dup->col,
			            "switch '%.64s' is defined twice", dup->name);
		}
	for (r = 0; r < p->nrefs; r++) {
		struct ref *ref = &p->refs[r];
		struct tmatch__sw *s = &conf->sw[ref->sw];
		int cnt = 0;
		/* each switch has one parent at most: the lists name at most
		   every switch once, in the bytes of their names */
		size_t bytes = 0;
		char **v = expand_within(p, ref->list, conf->nsw - p->refs_named,
		                         p->sw_bytes - p->refs_bytes, &cnt, &bytes, ref->line,
		                         ref->col, "Switches= list");
		if (!v) {
			if (errno == E2BIG)
				perr(p, E2BIG, ref->line, ref->col,
				     "the Switches= lists name more switches than the %d that "
				     "SwitchName= defines, or longer names: each switch has one "
				     "parent",
				     conf->nsw);
			return -1;
		}
		p->refs_named += cnt;
		p->refs_bytes += bytes;
		s->child = calloc((size_t)cnt + 1, sizeof(int));
		if (!s->child) {
			tmatch_affinity_hostlist_free(v);
			return perr(p, ENOMEM, 0, 0, "out of memory");
		}
		for (k = 0; k < cnt; k++) {
			int c = find_switch_in(p, v[k]);
			if (c < 0) {
				perr(p, EINVAL, ref->line, ref->col,
				     "switch '%.64s' listed in Switches= of '%.64s' is not defined "
				     "by any SwitchName=",
				     v[k], s->name);
				tmatch_affinity_hostlist_free(v);
				return -1;
			}
			if (c == ref->sw) {
				perr(p, EINVAL, ref->line, ref->col, "switch '%.64s' lists itself",
				     s->name);
				tmatch_affinity_hostlist_free(v);
				return -1;
			}
			if (conf->sw[c].parent >= 0) {
				perr(p, EINVAL, ref->line, ref->col,
				     "switch '%.64s' has two parents ('%.64s' and '%.64s'): a tree "
				     "needs one",
				     v[k], conf->sw[conf->sw[c].parent].name, s->name);
				tmatch_affinity_hostlist_free(v);
				return -1;
			}
			conf->sw[c].parent = ref->sw;
			s->child[s->nchild++] = c;
		}
		tmatch_affinity_hostlist_free(v);
	}
	i = compute_levels(conf);
	if (i == -1)
		return perr(p, ENOMEM, 0, 0, "out of memory");
	if (i >= 0)
		return perr(p, EINVAL, conf->sw[i].line, 0,
		            "switch '%.64s' is part of a cycle of Switches=", conf->sw[i].name);
	/* a node under two switches: sort (name, switch) pairs, compare neighbours */
	{
		struct nref *v;
		size_t total = 0, m = 0;
		for (i = 0; i < conf->nsw; i++)
			total += (size_t)conf->sw[i].nnodes;
		if (total < 2)
			return 0;
		v = malloc(total * sizeof(*v));
		if (!v)
			return perr(p, ENOMEM, 0, 0, "out of memory");
		for (i = 0; i < conf->nsw; i++)
			for (j = 0; j < conf->sw[i].nnodes; j++) {
				v[m].name = conf->sw[i].nodes[j];
				v[m].sw = i;
				m++;
			}
		qsort(v, m, sizeof(*v), nref_cmp);
		for (k = 1; k < (int)m; k++)
			if (!strcmp(v[k - 1].name, v[k].name)) {
				perr(p, EINVAL, conf->sw[v[k].sw].line, 0,
				     "node '%.64s' is under two switches ('%.64s' and '%.64s')",
				     v[k].name, conf->sw[v[k - 1].sw].name, conf->sw[v[k].sw].name);
				free(v);
				return -1;
			}
		free(v);
	}
	return 0;
}

tmatch_affinity_conf_t *tmatch_affinity_conf_parse(const char *text, const char *name,
                                                   tmatch_error_t *err)
{
	struct parser p;
	struct lline l = {NULL, NULL, NULL, 0, 0};
	const char *s = text;
	int line = 1, col = 1, i;
	tmatch_affinity_conf_t *conf;

	memset(&p, 0, sizeof(p));
	p.file = name ? name : "<string>";
	p.err = err;
	if (!text) {
		tmatch_error_set(err, EINVAL, p.file, 0, 0, "no topology.conf text");
		return NULL;
	}
	conf = calloc(1, sizeof(*conf));
	if (!conf) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	snprintf(conf->file, sizeof(conf->file), "%s", p.file);
	p.conf = conf;
	for (;;) {
		int in_comment = 0, cont = 0;
		l.n = 0;
		if (l.c)
			l.c[0] = '\0';
		/* gather one logical line */
		for (;;) {
			char ch = *s;
			if (ch == '\0' || ch == '\n') {
				if (ch == '\n')
					s++;
				/* a trailing backslash (before the comment) continues */
				cont = 0;
				if (l.n > 0) {
					size_t k = l.n;
					while (k > 0 && (l.c[k - 1] == ' ' || l.c[k - 1] == '\t' ||
					                 l.c[k - 1] == '\r'))
						k--;
					if (k > 0 && l.c[k - 1] == '\\' && !in_comment) {
						l.n = k - 1;
						l.c[l.n] = ' ';
						cont = 1;
					}
				}
				line++;
				col = 1;
				in_comment = 0;
				if (cont && ch != '\0') {
					if (lline_put(&l, ' ', line, 1) < 0)
						goto oom;
					continue;
				}
				break;
			}
			s++;
			if (ch == '#')
				in_comment = 1;
			if (!in_comment && lline_put(&l, ch, line, col) < 0)
				goto oom;
			col++;
		}
		if (l.n && parse_line(&p, &l) < 0)
			goto fail;
		if (*s == '\0')
			break;
	}
	if (resolve(&p) < 0)
		goto fail;
	if (conf->nsw == 0) {
		tmatch_error_set(err, EINVAL, p.file, 0, 0,
		                 "no SwitchName= line: topology.conf describes no switch");
		goto fail;
	}
	goto done;
oom:
	tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
fail:
	tmatch_affinity_conf_destroy(conf);
	conf = NULL;
done:
	for (i = 0; i < p.nrefs; i++)
		free(p.refs[i].list);
	free(p.refs);
	free(p.index);
	free(l.c);
	free(l.line);
	free(l.col);
	return conf;
}

char *tmatch_affinity_conf_find(const char *override, const char *slurm_conf)
{
	const char *conf = slurm_conf && *slurm_conf ? slurm_conf : "/etc/slurm/slurm.conf";
	const char *slash;
	char *path = NULL;

	if (override && *override) {
		if (!(path = strdup(override)))
			errno = ENOMEM;
		return path;
	}
	slash = strrchr(conf, '/');
	if (asprintf(&path, "%.*s/topology.conf", slash ? (int)(slash - conf) : 1,
	             slash ? conf : ".") < 0) {
		errno = ENOMEM;
		return NULL;
	}
	if (access(path, R_OK) != 0) {
		free(path);
		errno = ENOENT;
		return NULL;
	}
	return path;
}

tmatch_affinity_conf_t *tmatch_affinity_conf_load(const char *path, tmatch_error_t *err)
{
	FILE *f;
	char *text = NULL;
	size_t len = 0, cap = 0;
	tmatch_affinity_conf_t *conf = NULL;
	if (!path) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no topology.conf path");
		return NULL;
	}
	f = tmatch_file_open(path, NULL, err); /* regular files only: a FIFO would hang */
	if (!f)
		return NULL;
	for (;;) {
		size_t n;
		if (len + 4096 + 1 > cap) {
			char *t;
			cap = cap ? cap * 2 : 8192;
			if (cap > (64u << 20)) {
				tmatch_error_set(err, EFBIG, path, 0, 0,
				                 "larger than 64 MiB: not a topology.conf");
				goto out;
			}
			t = realloc(text, cap);
			if (!t) {
				tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
				goto out;
			}
			text = t;
		}
		n = fread(text + len, 1, 4096, f);
		len += n;
		if (n < 4096)
			break;
	}
	if (ferror(f)) {
		tmatch_error_set(err, EIO, path, 0, 0, "read error");
		goto out;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		tmatch_error_set(err, EINVAL, path, 0, 0, "contains a NUL byte: not a text file");
		goto out;
	}
	conf = tmatch_affinity_conf_parse(text, path, err);
out:
	free(text);
	fclose(f);
	return conf;
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
