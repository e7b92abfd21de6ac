/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * predict.c - what `treematch predict` hands SimGrid (SMPI's trace replay):
 * a time-independent trace read and checked, a platform made from the
 * project's own machine tree, and a hostfile made from a placement.
 *
 * The trace: an index file naming one file per rank (relative names are
 * relative to the index's directory), each "R init", then actions ("R send
 * DST TAG COUNT TYPE", "R compute FLOPS", ...), then "R finalize", R the
 * rank. SimGrid's own `smpirun -trace-ti` writes this format.
 *
 * The platform: one host per leaf of the tree, one router per inner node,
 * one link from each node to its parent, whose bandwidth and latency are
 * those of the node's level in the machine description (tmatch_place_
 * machine_*); routes follow the tree (Dijkstra over the links). So two
 * ranks on one socket share that socket's links only, and ranks on two
 * nodes cross both nodes' links and every switch link between them: the
 * oversubscription of an uplink is its bandwidth against the links below.
 */
#include "placement/placement_private.h"
#include "placement/predict.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TRACE_RANKS   65536
#define MAX_TRACE_LINE    4096       /* bytes of a trace's line (tmatch__lines) */
#define MAX_MACHINE_LINE  1024       /* bytes of a machine description's line */
#define MAX_TRACE_ACTIONS (1L << 26) /* per rank */

/* ---- the machine description --------------------------------------------- */

/* Defaults by level name: a fat node on a 100 Gb/s network. */
static const struct {
	const char *name;
	const char *bw, *lat;
} level_defaults[] = {
    {"switch", "12.5GBps", "2us"},  {"node", "12.5GBps", "1us"}, {"numa", "40GBps", "100ns"},
    {"package", "40GBps", "100ns"}, {"die", "60GBps", "80ns"},   {"group", "60GBps", "80ns"},
    {"l3", "80GBps", "50ns"},       {"l2", "100GBps", "20ns"},   {"core", "100GBps", "10ns"},
    {"pu", "100GBps", "10ns"},
};

/* The kind of a level's name: "switch1" is a switch. -1 when unknown. */
static int level_kind(const char *name)
{
	for (size_t i = 0; i < sizeof(level_defaults) / sizeof(level_defaults[0]); i++) {
		size_t n = strlen(level_defaults[i].name);

		if (!strncmp(name, level_defaults[i].name, n) &&
		    (!name[n] || isdigit((unsigned char)name[n])))
			return (int)i;
	}
	return -1;
}

/* A SimGrid quantity: a number and one of the units. */
static int quantity_ok(const char *v, const char *const *units)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (end == v || errno || !(x > 0) || isinf(x))
		return 0;
	for (; *units; units++)
		if (!strcmp(end, *units))
			return 1;
	return 0;
}

static const char *const bw_units[] = {"Bps",   "kBps",  "KBps",  "MBps",  "GBps", "TBps",
                                       "KiBps", "MiBps", "GiBps", "TiBps", "bps",  "kbps",
                                       "Mbps",  "Gbps",  "Tbps",  NULL};
static const char *const lat_units[] = {"s", "ms", "us", "ns", "ps", NULL};
static const char *const speed_units[] = {"f", "kf", "Mf", "Gf", "Tf", NULL};

/* A level's name; the leaves are cores when the tree does not say. */
static const char *level_name(const tmatch_topo_t *topo, int l)
{
	const char *name = tmatch_topo_level_name(topo, l);

	if ((!name || !*name) && l == tmatch_topo_depth(topo))
		return "core";
	return name && *name ? name : NULL;
}

void tmatch_place_machine_init(tmatch_place_machine_t *m, const tmatch_topo_t *topo)
{
	int depth = tmatch_topo_depth(topo);

	memset(m, 0, sizeof(*m));
	snprintf(m->speed, sizeof(m->speed), "1Gf");
	for (int l = 1; l <= depth && l <= TMATCH_PLACE_MACHINE_LEVELS - 1; l++) {
		const char *name = level_name(topo, l);
		int k = name ? level_kind(name) : -1;

		/* unnamed: the leaves are cores, the level above them packages,
		   higher ones nodes and switches */
		if (k < 0)
			k = l == depth ? 8 : l == depth - 1 ? 3 : l == 1 ? 0 : 1;
		snprintf(m->bw[l], sizeof(m->bw[l]), "%s", level_defaults[k].bw);
		snprintf(m->lat[l], sizeof(m->lat[l]), "%s", level_defaults[k].lat);
	}
}

int tmatch_place_machine_load(tmatch_place_machine_t *m, const tmatch_topo_t *topo,
                              const char *path, tmatch_error_t *err)
{
	tmatch__lines_t in;
	char *line;
	int lineno = 0, depth = tmatch_topo_depth(topo), rc = 0;

	if (tmatch__lines_open(&in, path, MAX_MACHINE_LINE, NULL, err) < 0)
		return -1;
	while ((line = tmatch__lines_next(&in))) {
		char key[64], a[32], b[32], extra[2];
		char *hash = strchr(line, '#');
		int n, found = 0;

		lineno = in.lineno;
		if (hash)
			*hash = '\0';
		n = sscanf(line, " %63[^= \t] = %31s %31s %1s", key, a, b, extra);
		if (n <= 0)
			continue;
		if (!strcmp(key, "speed")) {
			if (n != 2 || !quantity_ok(a, speed_units)) {
				rc = tmatch_error_set(
				    err, EINVAL, path, lineno, 0,
				    "speed wants one value such as 2.5Gf (flops per "
				    "second of one core)");
				break;
			}
			snprintf(m->speed, sizeof(m->speed), "%s", a);
			continue;
		}
		if (n != 3 || !quantity_ok(a, bw_units) || !quantity_ok(b, lat_units)) {
			rc = tmatch_error_set(err, EINVAL, path, lineno, 0,
			                      "'%s' wants a bandwidth and a latency, such as "
			                      "'node = 12.5GBps 1us'",
			                      key);
			break;
		}
		for (int l = 1; l <= depth && l < TMATCH_PLACE_MACHINE_LEVELS; l++) {
			const char *name = level_name(topo, l);

			if (name && !strcmp(name, key)) {
				snprintf(m->bw[l], sizeof(m->bw[l]), "%s", a);
				snprintf(m->lat[l], sizeof(m->lat[l]), "%s", b);
				found = 1;
			}
		}
		if (!found) {
			char names[512] = "";

			for (int l = 1; l <= depth; l++) {
				const char *name = level_name(topo, l);
				size_t u = strlen(names);

				snprintf(names + u, sizeof(names) - u, "%s%s", u ? ", " : "",
				         name ? name : "(unnamed)");
			}
			rc = tmatch_error_set(
			    err, EINVAL, path, lineno, 0,
			    "the machine tree has no level '%s': its levels are %s "
			    "(and speed)",
			    key, names);
			break;
		}
	}
	if (rc == 0 && in.errnum)
		rc = tmatch__lines_error(&in, path, err);
	tmatch__lines_close(&in);
	return rc;
}

/* ---- the platform and the hostfile --------------------------------------- */

int tmatch_place_platform_write(FILE *out, const tmatch_topo_t *topo,
                                const tmatch_place_machine_t *m, tmatch_error_t *err)
{
	int depth = tmatch_topo_depth(topo);
	long count[TMATCH_PLACE_MACHINE_LEVELS];

	if (depth < 1 || depth >= TMATCH_PLACE_MACHINE_LEVELS)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "predict: a tree of %d levels cannot be simulated", depth);
	/* count[l]: nodes at level l */
	count[0] = 1;
	for (int l = 1; l <= depth; l++)
		count[l] = count[l - 1] * tmatch_topo_arity(topo, l - 1);
	char shape[256];

	tmatch_topo_format(topo, shape, sizeof(shape));
	fprintf(out,
	        "<?xml version='1.0'?>\n"
	        "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
	        "<!-- made by treematch predict from the tree %s -->\n"
	        "<platform version=\"4.1\">\n"
	        "<zone id=\"machine\" routing=\"DijkstraCache\">\n",
	        shape);
	for (long h = 0; h < count[depth]; h++)
		fprintf(out, "  <host id=\"h%ld\" speed=\"%s\"/>\n", h, m->speed);
	for (int l = 0; l < depth; l++)
		for (long i = 0; i < count[l]; i++)
			fprintf(out, "  <router id=\"r%d_%ld\"/>\n", l, i);
	for (int l = 1; l <= depth; l++)
		for (long i = 0; i < count[l]; i++)
			fprintf(out,
			        "  <link id=\"l%d_%ld\" bandwidth=\"%s\" latency=\"%s\" "
			        "sharing_policy=\"SPLITDUPLEX\"/>\n",
			        l, i, m->bw[l], m->lat[l]);
	for (int l = 1; l <= depth; l++)
		for (long i = 0; i < count[l]; i++) {
			long parent = i / tmatch_topo_arity(topo, l - 1);

			if (l == depth)
				fprintf(out,
				        "  <route src=\"h%ld\" dst=\"r%d_%ld\" symmetrical=\"NO\">"
				        "<link_ctn id=\"l%d_%ld\" direction=\"UP\"/></route>\n"
				        "  <route src=\"r%d_%ld\" dst=\"h%ld\" symmetrical=\"NO\">"
				        "<link_ctn id=\"l%d_%ld\" direction=\"DOWN\"/></route>\n",
				        i, l - 1, parent, l, i, l - 1, parent, i, l, i);
			else
				fprintf(
				    out,
				    "  <route src=\"r%d_%ld\" dst=\"r%d_%ld\" symmetrical=\"NO\">"
				    "<link_ctn id=\"l%d_%ld\" direction=\"UP\"/></route>\n"
				    "  <route src=\"r%d_%ld\" dst=\"r%d_%ld\" symmetrical=\"NO\">"
				    "<link_ctn id=\"l%d_%ld\" direction=\"DOWN\"/></route>\n",
				    l, i, l - 1, parent, l, i, l - 1, parent, l, i, l, i);
		}
	fprintf(out, "</zone>\n</platform>\n");
	if (ferror(out))
		return tmatch_error_set(err, EIO, NULL, 0, 0, "predict: cannot write the platform");
	return 0;
}

int tmatch_place_trace_index_write(FILE *out, const tmatch_place_trace_t *t)
{
	for (int r = 0; r < t->nranks; r++) {
		char abs[PATH_MAX];

		fprintf(out, "%s\n", realpath(t->files[r], abs) ? abs : t->files[r]);
	}
	return ferror(out) ? -1 : 0;
}

int tmatch_place_hostfile_write(FILE *out, const int *leaf_of_rank, int n)
{
	for (int r = 0; r < n; r++)
		fprintf(out, "h%d\n", leaf_of_rank[r]);
	return ferror(out) ? -1 : 0;
}

/* ---- the trace ------------------------------------------------------------ */

/* Bytes of one element of SMPI's datatype index (smpi_replay's encoding). */
static int type_size(long t)
{
	static const int size[] = {8, 4, 1, 2, 8, 4, 1, 16, 4, 8, 16};

	return t >= 0 && t < (long)(sizeof(size) / sizeof(size[0])) ? size[t] : 0;
}

void tmatch_place_trace_destroy(tmatch_place_trace_t *t)
{
	if (!t)
		return;
	for (int r = 0; r < t->nranks; r++)
		free(t->files[r]);
	free(t->files);
	tmatch_comm_destroy(t->comm);
	free(t);
}

/* What rank r sends to each peer, summed over its file (sparse). */
struct sends {
	double *to;   /* [nranks] */
	int *touched; /* peers with to[] > 0, in first-seen order */
	int ntouched;
	int *src, *dst; /* the edge list of every rank */
	double *w;
	size_t nedges, cap;
};

static int sends_flush(struct sends *s, int r)
{
	for (int k = 0; k < s->ntouched; k++) {
		int p = s->touched[k];

		if (s->nedges == s->cap) {
			size_t c = s->cap ? 2 * s->cap : 1024;
			int *a = realloc(s->src, c * sizeof(*a)),
			    *b = a ? realloc(s->dst, c * sizeof(*b)) : NULL;
			double *w = b ? realloc(s->w, c * sizeof(*w)) : NULL;

			if (a)
				s->src = a;
			if (b)
				s->dst = b;
			if (!w)
				return -1;
			s->w = w;
			s->cap = c;
		}
		s->src[s->nedges] = r;
		s->dst[s->nedges] = p;
		s->w[s->nedges++] = s->to[p];
		s->to[p] = 0;
	}
	s->ntouched = 0;
	return 0;
}

/* Whether a line holds a run of more than 18 digits (which sscanf's %ld
   would clamp without a word): such a number is out of range here. */
static int long_number(const char *line)
{
	for (size_t run = 0; *line; line++) {
		run = isdigit((unsigned char)*line) ? run + 1 : 0;
		if (run > 18)
			return 1;
	}
	return 0;
}

/* One rank's file: "R init" ... "R finalize", every line of rank R; the
   bytes it sends added to s. */
static int read_rank(const tmatch_place_trace_t *t, int r, struct sends *s, tmatch_error_t *err)
{
	const char *path = t->files[r];
	tmatch__lines_t in;
	char *line;
	int lineno = 0, state = 0, rc = 0; /* state: 0 before init, 1 inside, 2 after finalize */
	long actions = 0;

	if (tmatch__lines_open(&in, path, MAX_TRACE_LINE, NULL, err) < 0)
		return -1;
	while (rc == 0 && (line = tmatch__lines_next(&in))) {
		char act[32];
		long rank, a[6] = {0, 0, 0, 0, 0, 0};
		int n = sscanf(line, "%ld %31s %ld %ld %ld %ld %ld %ld", &rank, act, &a[0], &a[1],
		               &a[2], &a[3], &a[4], &a[5]);

		lineno = in.lineno;
		if (!line[strspn(line, " \t")])
			continue;
		if (long_number(line))
			rc = tmatch_error_set(err, ERANGE, path, lineno, 0,
			                      "a number of more than 18 digits: out of range");
		else if (n < 2)
			rc = tmatch_error_set(
			    err, EPROTO, path, lineno, 0,
			    "not a time-independent trace line (\"RANK ACTION ...\")");
		else if (rank != r)
			rc = tmatch_error_set(err, EPROTO, path, lineno, 0,
			                      "a line of rank %ld in rank %d's file", rank, r);
		else if (state == 0 && strcmp(act, "init") != 0)
			rc = tmatch_error_set(err, EPROTO, path, lineno, 0,
			                      "a rank's trace starts with \"%d init\"", r);
		else if (state == 2)
			rc = tmatch_error_set(err, EPROTO, path, lineno, 0,
			                      "an action after \"finalize\"");
		else if (++actions > MAX_TRACE_ACTIONS)
			rc = tmatch_error_set(err, EFBIG, path, lineno, 0,
			                      "more than %ld actions for one rank",
			                      MAX_TRACE_ACTIONS);
		if (rc)
			break;
		if (!strcmp(act, "init")) {
			state = 1;
		} else if (!strcmp(act, "finalize")) {
			state = 2;
		} else if (!strcmp(act, "send") || !strcmp(act, "isend") ||
		           !strcmp(act, "sendRecv")) {
			/* send DST TAG COUNT [TYPE]; sendRecv SCOUNT DST RCOUNT SRC [STYPE RTYPE]
			 */
			int sr = act[4] == 'R';
			long dst = sr ? a[1] : a[0], count = sr ? a[0] : a[2];
			long type = sr ? (n >= 7 ? a[4] : 0) : (n >= 6 ? a[3] : 0);
			int ts = type_size(type);

			if ((sr ? n < 6 : n < 5) || dst < 0 || dst >= t->nranks || count < 0 ||
			    !ts) {
				rc = tmatch_error_set(
				    err, EPROTO, path, lineno, 0,
				    "%s: a peer or size out of range for %d ranks", act, t->nranks);
				break;
			}
			if (dst != r && count > 0) {
				if (s->to[dst] == 0)
					s->touched[s->ntouched++] = (int)dst;
				s->to[dst] += (double)count * ts;
			}
		}
	}
	if (rc == 0 && in.errnum)
		rc = tmatch__lines_error(&in, path, err);
	tmatch__lines_close(&in);
	if (rc)
		return -1;
	if (state != 2)
		return tmatch_error_set(err, EPROTO, path, lineno, 0,
		                        "the trace ends before \"%d finalize\": truncated?", r);
	if (sends_flush(s, r) < 0)
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	return 0;
}

tmatch_place_trace_t *tmatch_place_trace_load(const char *index, tmatch_error_t *err)
{
	tmatch_place_trace_t *t = calloc(1, sizeof(*t));
	struct sends s;
	tmatch__lines_t in;
	char *line, dir[PATH_MAX];
	const char *slash = strrchr(index, '/');
	int lineno = 0, cap = 0;

	memset(&s, 0, sizeof(s));
	memset(&in, 0, sizeof(in)); /* closed on every path below */
	if (!t) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - index) : 1, slash ? index : ".");
	if (tmatch__lines_open(&in, index, PATH_MAX - 1, NULL, err) < 0) {
		char why[PATH_MAX + 32];

		/* the recorder says there when a run could not be traced */
		snprintf(why, sizeof(why), "%s/NOT-REPLAYABLE", dir);
		if (errno == ENOENT && access(why, F_OK) == 0)
			tmatch_error_set(err, ENOENT, index, 0, 0,
			                 "no trace: the recorder could not trace this run for a "
			                 "replay (%s says what it used)",
			                 why);
		goto fail;
	}
	while ((line = tmatch__lines_next(&in))) {
		char *path;

		lineno = in.lineno;
		if (!line[0])
			continue;
		if (t->nranks >= MAX_TRACE_RANKS) {
			tmatch_error_set(err, EFBIG, index, lineno, 0, "more than %d ranks",
			                 MAX_TRACE_RANKS);
			goto fail;
		}
		if (strchr(line, ' ')) {
			tmatch_error_set(
			    err, EPROTO, index, lineno, 0,
			    "not a trace index (one rank's file per line): give the index "
			    "file, as smpirun -trace-ti -trace-file writes it");
			goto fail;
		}
		if (t->nranks == cap) {
			char **f =
			    realloc(t->files, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(*f));

			if (!f) {
				tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
				goto fail;
			}
			t->files = f;
		}
		if (line[0] == '/')
			path = strdup(line);
		else if (asprintf(&path, "%s/%s", dir, line) < 0)
			path = NULL;
		if (!path) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			goto fail;
		}
		t->files[t->nranks++] = path;
	}
	if (in.errnum) {
		tmatch__lines_error(&in, index, err);
		goto fail;
	}
	tmatch__lines_close(&in);
	if (t->nranks < 1) {
		tmatch_error_set(err, EPROTO, index, 0, 0, "the trace index names no rank's file");
		goto fail;
	}
	s.to = calloc((size_t)t->nranks, sizeof(*s.to));
	s.touched = calloc((size_t)t->nranks, sizeof(*s.touched));
	if (!s.to || !s.touched) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto fail;
	}
	for (int r = 0; r < t->nranks; r++)
		if (read_rank(t, r, &s, err) < 0)
			goto fail;
	if (!(t->comm = tmatch_comm_from_edges(t->nranks, s.nedges, s.src, s.dst, s.w, err)))
		goto fail;
	free(s.to);
	free(s.touched);
	free(s.src);
	free(s.dst);
	free(s.w);
	return t;
fail:
	tmatch__lines_close(&in);
	free(s.to);
	free(s.touched);
	free(s.src);
	free(s.dst);
	free(s.w);
	tmatch_place_trace_destroy(t);
	return NULL;
}

/* ---- the prediction kept for the plugin ----------------------------------- */

#define PREDICTION_HEADER "treematch-prediction 1"

/* A mapping's name as a prediction file holds it: printable, no blank. */
static int prediction_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > TMATCH_PLACE_PREDICTION_NAME)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f)
			return 0;
	return 1;
}

int tmatch_place_prediction_write(FILE *out, const char *about, const char *const names[],
                                  const double seconds[], int n)
{
	fprintf(out, PREDICTION_HEADER "\n");
	if (about) {
		fputs("# ", out);
		for (const char *c = about; *c; c++) /* one line, whatever it holds */
			fputc(*c >= ' ' && *c < 0x7f ? *c : '?', out);
		fputc('\n', out);
	}
	for (int i = 0; i < n; i++)
		if (prediction_name_ok(names[i]) && isfinite(seconds[i]) && seconds[i] >= 0)
			fprintf(out, "%s %.9g\n", names[i], seconds[i]);
	return ferror(out) ? -1 : 0;
}

/* One "NAME SECONDS" line: 0 with its parts, -1 when it is not one. */
static int prediction_line(char *line, char **name, double *seconds)
{
	char *p = line + strspn(line, " \t"), *end;

	*name = p;
	p += strcspn(p, " \t");
	if (p == *name || !*p)
		return -1;
	*p++ = '\0';
	p += strspn(p, " \t");
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	*seconds = strtod(p, &end);
	if (errno || !isfinite(*seconds) || *seconds > 1e12 || end[strspn(end, " \t")] != '\0' ||
	    !prediction_name_ok(*name))
		return -1;
	return 0;
}

int tmatch_place_prediction_read(const char *path, const char *mapping, double *mapped,
                                 double *packed, tmatch_error_t *err)
{
	size_t len = 0;
	char *text = tmatch_file_read(path, TMATCH_PLACE_PREDICTION_MAX, &len, err), *line, *next;
	int lineno = 0, rc = 0;

	*mapped = *packed = -1;
	if (!text)
		return -1;
	if (strlen(text) != len) {
		free(text);
		return tmatch_error_set(err, EINVAL, path, 0, 0, "a NUL byte: not a text file");
	}
	for (line = text; line && rc == 0; line = next) {
		char *name;
		double s;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else if (!*line)
			break;
		line[strcspn(line, "\r")] = '\0';
		if (++lineno == 1) {
			if (strcmp(line, PREDICTION_HEADER) != 0)
				rc = tmatch_error_set(
				    err, EINVAL, path, 1, 0,
				    "not a prediction: the first line must be '%s' "
				    "(treematch predict --save writes it)",
				    PREDICTION_HEADER);
			continue;
		}
		if (!line[strspn(line, " \t")] || line[strspn(line, " \t")] == '#')
			continue;
		if (prediction_line(line, &name, &s) < 0) {
			rc =
			    tmatch_error_set(err, EINVAL, path, lineno, 0,
			                     "want 'MAPPING SECONDS', a mapping's name (at most %d "
			                     "characters, no blank) and its predicted time",
			                     TMATCH_PLACE_PREDICTION_NAME);
			break;
		}
		if (*mapped < 0 && !strcmp(name, mapping))
			*mapped = s;
		if (*packed < 0 && !strcmp(name, "packed"))
			*packed = s;
	}
	if (rc == 0 && lineno == 0)
		rc = tmatch_error_set(
		    err, EINVAL, path, 0, 0,
		    "empty: not a prediction (treematch predict --save writes it)");
	free(text);
	if (rc < 0)
		return -1;
	return *mapped >= 0 && *packed >= 0 ? 0 : 1;
}
