/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comm_sub.c - the communication matrix restricted to some ranks (the
 * sub-profile of one node's tasks): used by the SPANK plugin for each node
 * and by `treematch map --ranks`, so both map the same matrix.
 */
#include "treematch/treematch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

tmatch_comm_t *tmatch_comm_submatrix(const tmatch_comm_t *full, const int *ranks, int nranks,
                                     tmatch_error_t *err)
{
	int n;
	int *local_of = NULL, *src = NULL, *dst = NULL;
	double *w = NULL;
	size_t cap = 0, ne = 0;
	tmatch_comm_t *sub = NULL;

	if (err)
		tmatch_error_clear(err);
	if (!full || !ranks || nranks < 1) {
		if (err)
			snprintf(err->msg, sizeof(err->msg),
			         "tmatch_comm_submatrix: invalid argument (need a matrix and at "
			         "least one rank)");
		errno = EINVAL;
		return NULL;
	}
	n = tmatch_comm_order(full);
	if (n < 1) { /* no rank to keep; and local_of below has n entries */
		if (err)
			snprintf(err->msg, sizeof(err->msg), "the profile has no rank");
		errno = EINVAL;
		return NULL;
	}
	local_of = malloc((size_t)n * sizeof(*local_of));
	if (!local_of)
		goto nomem;
	for (int i = 0; i < n; i++)
		local_of[i] = -1;
	for (int a = 0; a < nranks; a++) {
		if (ranks[a] < 0 || ranks[a] >= n || local_of[ranks[a]] >= 0) {
			if (err)
				snprintf(err->msg, sizeof(err->msg),
				         "rank %d (entry %d of the list) is outside the profile's "
				         "ranks 0..%d or repeated",
				         ranks[a], a, n - 1);
			errno = EINVAL;
			goto out;
		}
		local_of[ranks[a]] = a;
	}
	for (int a = 0; a < nranks; a++) {
		const int *cols;
		const double *wts;
		int len = tmatch_comm_row(full, ranks[a], &cols, &wts);

		for (int k = 0; k < len; k++) {
			int b = local_of[cols[k]];

			if (b <= a) /* each unordered pair once; ranks not listed dropped */
				continue;
			if (ne == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				int *ns, *nd;
				double *nw;

				ns = realloc(src, ncap * sizeof(*ns));
				if (!ns)
					goto nomem;
				src = ns;
				nd = realloc(dst, ncap * sizeof(*nd));
				if (!nd)
					goto nomem;
				dst = nd;
				nw = realloc(w, ncap * sizeof(*nw));
				if (!nw)
					goto nomem;
				w = nw;
				cap = ncap;
			}
			src[ne] = a;
			dst[ne] = b;
			w[ne] = wts[k];
			ne++;
		}
	}
	sub = tmatch_comm_from_edges(nranks, ne, src, dst, w, err);
	goto out;
nomem:
	if (err)
		snprintf(err->msg, sizeof(err->msg), "out of memory");
	errno = ENOMEM;
out:
	free(local_of);
	free(src);
	free(dst);
	free(w);
	return sub;
}
