/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plugstack.c - Slurm's plugstack.conf as Slurm reads it (src/common/spank.c,
 * the same from 22.05 to 26.05): '#' starts a comment anywhere, words are
 * separated by blanks, a line is "required|optional PLUGIN [ARG...]" or
 * "include GLOB" (a relative GLOB is relative to the including file's
 * directory; files matched in glob order), a line Slurm does not know is
 * ignored with an error. Where the file is: PlugStackConfig= in slurm.conf,
 * else plugstack.conf beside it. Only the lines that load treematch.so are
 * kept; the rest is read for its includes and its mistakes.
 */
#include "conf/plugstack.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Slurm reads a line into a PATH_MAX buffer; files are the admin's, but a
   loop of includes or a huge file must not hang or exhaust the reader. */
#define PLUGSTACK_MAX_BYTES (1u << 20)
#define PLUGSTACK_MAX_DEPTH 8
#define PLUGSTACK_MAX_FILES 256
#define SLURM_CONF_MAX      (4u << 20)

struct reader {
	const char *plugin; /* basename to keep ("treematch.so") */
	tmatch_place_plugstack_line_t *lines;
	int n, cap, files;
	tmatch_place_plugstack_problem_fn report;
	void *arg;
	int problems;
};

void tmatch__place_report(tmatch_place_plugstack_problem_fn report, void *arg, int *count,
                          const char *file, int line, int column, const char *fmt, ...)
{
	tmatch_error_t e;
	va_list ap;

	va_start(ap, fmt);
	tmatch_error_vset(&e, 0, file, line, column, fmt, ap);
	va_end(ap);
	(*count)++;
	if (report)
		report(arg, &e);
}

#define problem(r, ...) tmatch__place_report((r)->report, (r)->arg, &(r)->problems, __VA_ARGS__)

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int keep_line(struct reader *r, const char *file, int lineno, int required, char *words[],
                     int *cols, int nwords)
{
	tmatch_place_plugstack_line_t *l;

	if (r->n == r->cap) {
		int ncap = r->cap ? r->cap * 2 : 4;
		void *t = realloc(r->lines, (size_t)ncap * sizeof(*r->lines));

		if (!t)
			return -1;
		r->lines = t;
		r->cap = ncap;
	}
	l = &r->lines[r->n];
	memset(l, 0, sizeof(*l));
	snprintf(l->file, sizeof(l->file), "%s", file);
	snprintf(l->path, sizeof(l->path), "%s", words[1]);
	l->line = lineno;
	l->required = required;
	l->path_column = cols[1];
	l->argc = nwords - 2;
	l->argv = calloc((size_t)l->argc + 1, sizeof(*l->argv));
	l->column = calloc((size_t)l->argc + 1, sizeof(*l->column));
	if (!l->argv || !l->column) {
		free(l->argv);
		free(l->column);
		return -1;
	}
	for (int i = 0; i < l->argc; i++) {
		l->column[i] = cols[i + 2];
		if (!(l->argv[i] = strdup(words[i + 2]))) {
			for (int k = 0; k < i; k++)
				free(l->argv[k]);
			free(l->argv);
			free(l->column);
			return -1;
		}
	}
	r->n++;
	return 0;
}

static int read_file(struct reader *r, const char *path, int depth, tmatch_error_t *err);

static int include(struct reader *r, const char *file, int lineno, const char *pattern, int depth,
                   tmatch_error_t *err)
{
	char *full = NULL;
	glob_t gl;
	int rc = 0, g;

	if (pattern[0] != '/') {
		const char *slash = strrchr(file, '/');

		if (asprintf(&full, "%.*s/%s", slash ? (int)(slash - file) : 1, slash ? file : ".",
		             pattern) < 0)
			return tmatch_error_set(err, ENOMEM, file, lineno, 0, "out of memory");
		pattern = full;
	}
	memset(&gl, 0, sizeof(gl));
	g = glob(pattern, 0, NULL, &gl);
	if (g == 0) {
		for (size_t i = 0; i < gl.gl_pathc && rc == 0; i++)
			rc = read_file(r, gl.gl_pathv[i], depth + 1, err);
	} else if (g == GLOB_ABORTED) {
		problem(r, file, lineno, 0, "include %s: a directory it names cannot be read",
		        pattern);
	} else if (g == GLOB_NOSPACE) {
		rc = tmatch_error_set(err, ENOMEM, file, lineno, 0, "out of memory");
	}
	globfree(&gl);
	free(full);
	return rc;
}

/* One line: split as Slurm does (strtok on blanks after cutting at '#'),
   keeping each word's column. */
static int read_line(struct reader *r, const char *file, int lineno, char *line, int depth,
                     tmatch_error_t *err)
{
	char *words[512];
	int cols[512], n = 0;
	char *hash = strchr(line, '#'), *p = line;

	if (hash)
		*hash = '\0';
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			break;
		if (n == 512) {
			problem(r, file, lineno, (int)(p - line) + 1,
			        "more than 510 arguments: Slurm reads them, this check stops here");
			break;
		}
		cols[n] = (int)(p - line) + 1;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (*p)
			*p++ = '\0';
	}
	if (n == 0)
		return 0;
	if (strcmp(words[0], "include") == 0) {
		if (n < 2) {
			problem(r, file, lineno, cols[0],
			        "include needs a file or pattern: Slurm ignores this line");
			return 0;
		}
		return include(r, file, lineno, words[1], depth, err);
	}
	if (strcmp(words[0], "required") != 0 && strcmp(words[0], "optional") != 0) {
		problem(r, file, lineno, cols[0],
		        "'%s' is not required, optional or include: Slurm ignores this line",
		        words[0]);
		return 0;
	}
	if (n < 2) {
		problem(r, file, lineno, cols[0],
		        "%s needs the plugin's path: Slurm ignores this line", words[0]);
		return 0;
	}
	if (strcmp(base_name(words[1]), r->plugin) != 0)
		return 0;
	if (keep_line(r, file, lineno, strcmp(words[0], "required") == 0, words, cols, n) < 0)
		return tmatch_error_set(err, ENOMEM, file, lineno, 0, "out of memory");
	return 0;
}

static int read_file(struct reader *r, const char *path, int depth, tmatch_error_t *err)
{
	tmatch_error_t e;
	char *text, *line, *next;
	size_t len;
	int lineno = 0, rc = 0;

	if (depth > PLUGSTACK_MAX_DEPTH)
		return tmatch_error_set(err, ELOOP, path, 0, 0,
		                        "includes nested more than %d deep (a loop?)",
		                        PLUGSTACK_MAX_DEPTH);
	if (++r->files > PLUGSTACK_MAX_FILES)
		return tmatch_error_set(err, E2BIG, path, 0, 0,
		                        "more than %d plugin stack files included",
		                        PLUGSTACK_MAX_FILES);
	tmatch_error_clear(&e);
	text = tmatch_file_read(path, PLUGSTACK_MAX_BYTES, &len, &e);
	if (!text) {
		if (depth == 0) {
			if (err)
				*err = e;
			return -1;
		}
		problem(r, e.file[0] ? e.file : path, 0, 0, "%s", e.msg);
		return 0;
	}
	for (line = text; line && rc == 0; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		else if (!*line)
			break; /* the end of the text */
		lineno++;
		if (strlen(line) >= 4096)
			problem(r, path, lineno, 4096,
			        "a line longer than 4095 bytes: Slurm reads it in pieces");
		rc = read_line(r, path, lineno, line, depth, err);
	}
	free(text);
	return rc;
}

int tmatch_place_plugstack_read(const char *path, const char *plugin,
                                tmatch_place_plugstack_line_t **lines, int *nlines,
                                tmatch_place_plugstack_problem_fn report, void *arg,
                                tmatch_error_t *err)
{
	struct reader r;

	if (!path || !lines || !nlines)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_plugstack_read: invalid argument");
	memset(&r, 0, sizeof(r));
	r.plugin = plugin && *plugin ? plugin : "treematch.so";
	r.report = report;
	r.arg = arg;
	if (read_file(&r, path, 0, err) < 0) {
		tmatch_place_plugstack_free(r.lines, r.n);
		return -1;
	}
	*lines = r.lines;
	*nlines = r.n;
	return r.problems;
}

void tmatch_place_plugstack_free(tmatch_place_plugstack_line_t *lines, int n)
{
	for (int i = 0; lines && i < n; i++) {
		for (int k = 0; k < lines[i].argc; k++)
			free(lines[i].argv[k]);
		free(lines[i].argv);
		free(lines[i].column);
	}
	free(lines);
}

char *tmatch_place_plugstack_find(const char *slurm_conf)
{
	const char *conf = slurm_conf && *slurm_conf ? slurm_conf : "/etc/slurm/slurm.conf";
	const char *slash = strrchr(conf, '/');
	char *text, *line, *path = NULL, *found = NULL;
	size_t len;

	/* PlugStackConfig= in slurm.conf (keys are case-insensitive), the last
	   one as Slurm keeps it; an unreadable slurm.conf: the default place */
	text = tmatch_file_read(conf, SLURM_CONF_MAX, &len, NULL);
	for (line = text; line;) {
		char *end = strchr(line, '\n'), *p = line;

		if (end)
			*end = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, "PlugStackConfig=", 16) == 0) {
			char *v = p + 16, *e = v;

			while (*e && !isspace((unsigned char)*e) && *e != '#')
				e++;
			*e = '\0';
			found = *v ? v : found;
		}
		line = end ? end + 1 : NULL;
	}
	if (found)
		path = strdup(found);
	else if (asprintf(&path, "%.*s/plugstack.conf", slash ? (int)(slash - conf) : 1,
	                  slash ? conf : ".") < 0)
		path = NULL;
	free(text);
	if (!path)
		errno = ENOMEM;
	return path;
}

/* The line whose arguments are exactly argv: where the plugin was loaded
   from (the first such line, as Slurm loads the plugin once). */
static const tmatch_place_plugstack_line_t *own_line(const tmatch_place_plugstack_line_t *lines,
                                                     int n, int argc, char *const *argv)
{
	for (int i = 0; i < n; i++) {
		int same = lines[i].argc == argc;

		for (int k = 0; same && k < argc; k++)
			same = argv[k] && strcmp(lines[i].argv[k], argv[k]) == 0;
		if (same)
			return &lines[i];
	}
	return NULL;
}

int tmatch_place_plugstack_where(const char *slurm_conf, int argc, char *const *argv,
                                 tmatch_error_t *err)
{
	tmatch_place_plugstack_line_t *lines = NULL;
	const tmatch_place_plugstack_line_t *own;
	char *path;
	int n = 0, index;

	if (!err || strcmp(err->file, "plugstack.conf") != 0)
		return 0;
	index = err->column;
	if (!(path = tmatch_place_plugstack_find(slurm_conf)))
		return 0;
	if (tmatch_place_plugstack_read(path, NULL, &lines, &n, NULL, NULL, NULL) >= 0 &&
	    (own = own_line(lines, n, argc, argv))) {
		snprintf(err->file, sizeof(err->file), "%.*s", (int)sizeof(err->file) - 1,
		         own->file);
		err->line = own->line;
		err->column = index >= 1 && index <= argc ? own->column[index - 1] : 0;
	}
	tmatch_place_plugstack_free(lines, n);
	free(path);
	return 0;
}
