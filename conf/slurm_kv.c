/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slurm_kv.c - Slurm's Key=Value files, the one reader of their lines for
 * topology.conf (topology_conf.c) and slurm.conf (slurm_conf.c): '#'
 * comments, a trailing '\' continues a line, values in double quotes,
 * keys of any case, every pair with the line and column of its key and
 * its value.
 */
#include "conf/conf_private.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

#define MAX_KV 64 /* pairs on one line: Slurm's NodeName lines have about 30 keys */

/* Split one logical line into Key=Value pairs (values in double quotes may
   hold blanks). 0, 1 for a line with a word without '=' (lenient: skipped),
   -1 with the error set. */
static int split_pairs(struct lline *l, const char *file, int lenient, struct tmatch__kv *kv,
                       int *nkv, tmatch_error_t *err)
{
	size_t i = 0;

	*nkv = 0;
	for (;;) {
		size_t ks, ke, vs, ve;

		while (i < l->n && isspace((unsigned char)l->c[i]))
			i++;
		if (i >= l->n)
			return 0;
		ks = i;
		while (i < l->n && !isspace((unsigned char)l->c[i]) && l->c[i] != '=')
			i++;
		ke = i;
		if (i >= l->n || l->c[i] != '=') {
			if (lenient)
				return 1;
			return tmatch_error_set(err, EINVAL, file, l->line[ks], l->col[ks],
			                        "expected Key=Value, found '%.40s' without '='",
			                        l->c + ks);
		}
		if (ke == ks)
			return tmatch_error_set(err, EINVAL, file, l->line[ks], l->col[ks],
			                        "missing key before '='");
		vs = ++i;
		if (i < l->n && l->c[i] == '"') {
			vs = ++i;
			while (i < l->n && l->c[i] != '"')
				i++;
			if (i >= l->n)
				return tmatch_error_set(err, EINVAL, file, l->line[vs - 1],
				                        l->col[vs - 1], "a quote without its end");
			ve = i++;
		} else {
			while (i < l->n && !isspace((unsigned char)l->c[i]))
				i++;
			ve = i;
		}
		if (ve == vs)
			return tmatch_error_set(err, EINVAL, file, l->line[ks], l->col[ks],
			                        "empty value for %.*s",
			                        (int)(ke - ks > 40 ? 40 : ke - ks), l->c + ks);
		if (*nkv == MAX_KV)
			return tmatch_error_set(err, EINVAL, file, l->line[ks], l->col[ks],
			                        "more than %d keys on one line", MAX_KV);
		/* the line's own characters: the key and the value, cut */
		kv[*nkv].key = l->c + ks;
		kv[*nkv].klen = ke - ks;
		kv[*nkv].val = l->c + vs;
		kv[*nkv].line = l->line[ks];
		kv[*nkv].col = l->col[ks];
		kv[*nkv].vline = l->line[vs];
		kv[*nkv].vcol = l->col[vs];
		(*nkv)++;
		l->c[ve] = '\0';
		if (ve == i && i < l->n)
			i++; /* past the blank the value's end took */
	}
}

int tmatch__kv_read(const char *text, const char *file, int lenient, tmatch__kv_fn fn, void *arg,
                    tmatch_error_t *err)
{
	struct lline l = {NULL, NULL, NULL, 0, 0};
	struct tmatch__kv kv[MAX_KV];
	const char *s = text;
	int line = 1, col = 1, rc = -1;

	for (;;) {
		int in_comment = 0, cont = 0, nkv = 0, r;

		l.n = 0;
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
		if (l.n) {
			r = split_pairs(&l, file, lenient, kv, &nkv, err);
			if (r < 0 || (r == 0 && nkv > 0 && fn(arg, kv, nkv) < 0))
				goto out;
		}
		if (*s == '\0')
			break;
	}
	rc = 0;
	goto out;
oom:
	tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
out:
	free(l.c);
	free(l.line);
	free(l.col);
	return rc;
}

int tmatch__kv_is(const struct tmatch__kv *kv, const char *key)
{
	return kv->klen == strlen(key) && !strncasecmp(kv->key, key, kv->klen);
}
