/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mapping_file.c - the plain mapping format that `treematch map` writes and
 * `treematch eval`, `treematch draw` and the benchmark read: one line per
 * rank, "RANK LEAF", or a lone "LEAF" for the rank after the previous
 * line's; '#' starts a comment; blank lines are ignored. The one reader,
 * and the one writer (tmatch_map_write).
 * A regular file only, lines up to 64 KiB (two numbers and a comment).
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORM     "(lines are 'RANK LEAF' or 'LEAF')"
#define MAX_LINE ((size_t)64 << 10)

int tmatch_map_read(const char *path, int n, int *leaf_of_rank, int *line_of_rank,
                    tmatch_error_t *err)
{
	tmatch__lines_t l;
	char *line;
	int lineno = 0, next = 0, rc = -1, *leaf = NULL, *at = NULL;

	if (!path || n < 0 || (n > 0 && !leaf_of_rank))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_map_read: invalid argument");
	if (tmatch__lines_open(&l, path, MAX_LINE, NULL, err) < 0)
		return -1;
	/* Work on copies: a failure leaves the outputs untouched. */
	leaf = malloc(sizeof(*leaf) * (size_t)(n ? n : 1));
	at = malloc(sizeof(*at) * (size_t)(n ? n : 1));
	if (!leaf || !at) {
		tmatch_error_set(err, ENOMEM, path, 0, 0, "out of memory");
		goto out;
	}
	for (int r = 0; r < n; r++)
		leaf[r] = -1;
	while ((line = tmatch__lines_next(&l))) {
		long v[3];
		int nv = 0;
		char *p = line, *end;

		lineno = l.lineno;
		while (nv < 3) {
			while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
				p++;
			if (!*p || *p == '#')
				break;
			errno = 0;
			v[nv] = strtol(p, &end, 10);
			if (end == p || errno || v[nv] < 0 || v[nv] > INT_MAX ||
			    (*end && !strchr(" \t\r\n#", *end))) {
				tmatch_error_set(err, EINVAL, path, lineno, (int)(p - line) + 1,
				                 "expected a non-negative integer " FORM);
				goto out;
			}
			nv++;
			p = end;
		}
		if (nv == 0)
			continue;
		if (nv == 3) {
			tmatch_error_set(err, EINVAL, path, lineno, 0, "too many numbers " FORM);
			goto out;
		}
		long rank = nv == 2 ? v[0] : next;
		if (rank >= n) {
			tmatch_error_set(
			    err, EINVAL, path, lineno, 0,
			    "rank %ld is out of range: the profile has %d ranks (0..%d)", rank, n,
			    n - 1);
			goto out;
		}
		if (leaf[rank] >= 0) {
			tmatch_error_set(err, EINVAL, path, lineno, 0,
			                 "rank %ld is placed twice (first on line %d)", rank,
			                 at[rank]);
			goto out;
		}
		leaf[rank] = (int)(nv == 2 ? v[1] : v[0]);
		at[rank] = lineno;
		next = (int)rank + 1;
	}
	if (l.errnum) {
		tmatch__lines_error(&l, path, err);
		goto out;
	}
	for (int r = 0; r < n; r++)
		if (leaf[r] < 0) {
			tmatch_error_set(err, EINVAL, path, 0, 0,
			                 "rank %d has no leaf: the mapping must place all %d ranks",
			                 r, n);
			goto out;
		}
	if (n > 0) {
		memcpy(leaf_of_rank, leaf, sizeof(*leaf) * (size_t)n);
		if (line_of_rank)
			memcpy(line_of_rank, at, sizeof(*at) * (size_t)n);
	}
	rc = 0;
out:
	free(leaf);
	free(at);
	tmatch__lines_close(&l);
	return rc;
}

int tmatch_map_load(const char *path, const tmatch_topo_t *topo, int n, int *leaf_of_rank,
                    tmatch_error_t *err)
{
	int *leaf = NULL, *line = NULL, bad = -1, rc = -1;

	if (!path || !topo || n < 0 || (n > 0 && !leaf_of_rank))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_map_load: invalid argument");
	leaf = malloc(sizeof(*leaf) * (size_t)(n ? n : 1));
	line = malloc(sizeof(*line) * (size_t)(n ? n : 1));
	if (!leaf || !line) {
		tmatch_error_set(err, ENOMEM, path, 0, 0, "out of memory");
		goto out;
	}
	if (tmatch_map_read(path, n, leaf, line, err) < 0)
		goto out;
	if (tmatch__map_check(topo, leaf, n, &bad, err) < 0) {
		/* name the line that placed the offending rank */
		if (err) {
			char msg[sizeof(err->msg)];

			snprintf(msg, sizeof(msg), "%s", err->msg);
			tmatch_error_set(err, 0, path, bad >= 0 ? line[bad] : 0, 0, "%s", msg);
		}
		errno = EINVAL;
		goto out;
	}
	if (n > 0)
		memcpy(leaf_of_rank, leaf, sizeof(*leaf) * (size_t)n);
	rc = 0;
out:
	free(leaf);
	free(line);
	return rc;
}

int tmatch_map_write(FILE *out, const int *rank_of, const int *leaf_of_rank, int n,
                     tmatch_error_t *err)
{
	if (!out || !leaf_of_rank || n < 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_map_write: no file or mapping");
	for (int r = 0; r < n; r++)
		if (fprintf(out, "%d %d\n", rank_of ? rank_of[r] : r, leaf_of_rank[r]) < 0)
			return tmatch_error_set(err, errno ? errno : EIO, NULL, 0, 0,
			                        "cannot write the mapping: %s",
			                        strerror(errno ? errno : EIO));
	return 0;
}
