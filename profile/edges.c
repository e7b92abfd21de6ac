/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * edges.c - helpers shared by the loader, the builder and the writer: growable
 * edge arrays, the O(n + ranks) sort and merge, and what a bad scalar looks
 * like.
 */
#include "profile/profile_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t elem, size_t cap)
{
	void *q;

	if (!*p && cap == 0)
		return 0;
	q = realloc(*p, cap * elem);
	if (!q)
		return -1;
	*p = q;
	return 0;
}

int tmatch__edges_reserve(struct tmatch__edges *e, unsigned metrics, size_t cap)
{
	if (cap <= e->cap)
		return 0;
	if (cap > SIZE_MAX / sizeof(uint64_t) || grow((void **)&e->src, sizeof(int), cap) ||
	    grow((void **)&e->dst, sizeof(int), cap) ||
	    ((metrics & TMATCH_PROFILE_HAS_BYTES) &&
	     grow((void **)&e->bytes, sizeof(uint64_t), cap)) ||
	    ((metrics & TMATCH_PROFILE_HAS_MSGS) &&
	     grow((void **)&e->msgs, sizeof(uint64_t), cap)) ||
	    (e->line && grow((void **)&e->line, sizeof(uint32_t), cap))) {
		errno = ENOMEM;
		return -1;
	}
	e->cap = cap;
	return 0;
}

int tmatch__edges_push(struct tmatch__edges *e, unsigned metrics, int src, int dst, uint64_t bytes,
                       uint64_t msgs, uint32_t line)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 64;

		if (cap > SIZE_MAX / sizeof(uint64_t)) {
			errno = ENOMEM;
			return -1;
		}
		/* Each array is grown on its own; a failure leaves the old
		   arrays valid (realloc keeps them) and cap unchanged. */
		if (grow((void **)&e->src, sizeof(int), cap) ||
		    grow((void **)&e->dst, sizeof(int), cap) ||
		    ((metrics & TMATCH_PROFILE_HAS_BYTES) &&
		     grow((void **)&e->bytes, sizeof(uint64_t), cap)) ||
		    ((metrics & TMATCH_PROFILE_HAS_MSGS) &&
		     grow((void **)&e->msgs, sizeof(uint64_t), cap)) ||
		    (line && grow((void **)&e->line, sizeof(uint32_t), cap)) ||
		    (!line && e->line && grow((void **)&e->line, sizeof(uint32_t), cap))) {
			errno = ENOMEM;
			return -1;
		}
		e->cap = cap;
	}
	e->src[e->n] = src;
	e->dst[e->n] = dst;
	if (e->bytes)
		e->bytes[e->n] = bytes;
	if (e->msgs)
		e->msgs[e->n] = msgs;
	if (e->line)
		e->line[e->n] = line;
	e->n++;
	return 0;
}

void tmatch__edges_free(struct tmatch__edges *e)
{
	free(e->src);
	free(e->dst);
	free(e->bytes);
	free(e->msgs);
	free(e->line);
	memset(e, 0, sizeof(*e));
}

/* Reorder one array by perm (new[k] = old[perm[k]]); the element type comes from
   the array itself (a type argument cannot be parenthesised). */
#define PERMUTE(arr)                                                                               \
	do {                                                                                       \
		if (arr) {                                                                         \
			__typeof__(*(arr)) *tmp_ = malloc((e->n ? e->n : 1) * sizeof(*tmp_));      \
			if (!tmp_)                                                                 \
				goto out;                                                          \
			for (size_t k_ = 0; k_ < e->n; k_++)                                       \
				tmp_[k_] = (arr)[perm[k_]];                                        \
			free(arr);                                                                 \
			(arr) = tmp_;                                                              \
		}                                                                                  \
	} while (0)

static int sort_edges(struct tmatch__edges *e, int ranks)
{
	size_t *count = NULL, *perm = NULL, *perm1 = NULL;
	int rc = -1;
	size_t k;

	for (k = 1; k < e->n; k++)
		if (e->src[k - 1] > e->src[k] ||
		    (e->src[k - 1] == e->src[k] && e->dst[k - 1] > e->dst[k]))
			break;
	if (k >= e->n)
		return 0; /* already sorted: the writer's output, most files */

	count = calloc((size_t)ranks + 1, sizeof(*count));
	/* zeroed: clang-analyzer cannot see the counting sort fills every slot */
	perm1 = calloc(e->n, sizeof(*perm1));
	perm = calloc(e->n, sizeof(*perm));
	if (!count || !perm1 || !perm)
		goto out;
	/* Pass 1: stable by dst. */
	for (k = 0; k < e->n; k++)
		count[e->dst[k] + 1]++;
	for (int r = 0; r < ranks; r++)
		count[r + 1] += count[r];
	for (k = 0; k < e->n; k++)
		perm1[count[e->dst[k]]++] = k;
	/* Pass 2: stable by src. */
	memset(count, 0, ((size_t)ranks + 1) * sizeof(*count));
	for (k = 0; k < e->n; k++)
		count[e->src[k] + 1]++;
	for (int r = 0; r < ranks; r++)
		count[r + 1] += count[r];
	for (k = 0; k < e->n; k++) {
		size_t i = perm1[k];
		perm[count[e->src[i]]++] = i;
	}
	free(perm1);
	perm1 = NULL;
	free(count);
	count = NULL;
	PERMUTE(e->src);
	PERMUTE(e->dst);
	PERMUTE(e->bytes);
	PERMUTE(e->msgs);
	PERMUTE(e->line);
	rc = 0;
out:
	if (rc)
		errno = ENOMEM;
	free(count);
	free(perm1);
	free(perm);
	return rc;
}

static int add_checked(uint64_t *acc, uint64_t v)
{
	if (v > TMATCH__WEIGHT_MAX - *acc)
		return -1;
	*acc += v;
	return 0;
}

int tmatch__edges_sort_merge(struct tmatch__edges *e, unsigned metrics, int ranks, int directed,
                             size_t *ndup, uint32_t *dup_line, uint32_t *first_line, int *dup_src,
                             int *dup_dst)
{
	size_t w = 0, dups = 0;

	(void)metrics;
	*ndup = 0;
	*dup_line = *first_line = 0;
	*dup_src = *dup_dst = -1;
	if (sort_edges(e, ranks))
		return -1;
	for (size_t k = 0; k < e->n; k++) {
		if (w > 0 && e->src[w - 1] == e->src[k] && e->dst[w - 1] == e->dst[k]) {
			if (dups == 0) {
				*dup_line = e->line ? e->line[k] : 0;
				*first_line = e->line ? e->line[w - 1] : 0;
				*dup_src = e->src[k];
				*dup_dst = e->dst[k];
			}
			dups++;
			if (!directed) {
				errno = EINVAL;
				return -1;
			}
			if ((e->bytes && add_checked(&e->bytes[w - 1], e->bytes[k])) ||
			    (e->msgs && add_checked(&e->msgs[w - 1], e->msgs[k]))) {
				*dup_line = e->line ? e->line[k] : 0;
				*dup_src = e->src[k];
				*dup_dst = e->dst[k];
				errno = EOVERFLOW;
				return -1;
			}
			continue;
		}
		if (w != k) {
			e->src[w] = e->src[k];
			e->dst[w] = e->dst[k];
			if (e->bytes)
				e->bytes[w] = e->bytes[k];
			if (e->msgs)
				e->msgs[w] = e->msgs[k];
			if (e->line)
				e->line[w] = e->line[k];
		}
		w++;
	}
	e->n = w;
	*ndup = dups;
	return 0;
}

static int ieq(const char *s, size_t len, const char *word)
{
	size_t n = strlen(word);
	if (n != len)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != word[i])
			return 0;
	}
	return 1;
}

const char *tmatch__describe_scalar(const char *s, size_t len)
{
	size_t i, digits = 0, other = 0, dots = 0, exps = 0;

	if (len == 0)
		return "an empty value";
	if (ieq(s, len, ".nan") || ieq(s, len, "nan") || ieq(s, len, ".inf") ||
	    ieq(s, len, "-.inf") || ieq(s, len, "+.inf") || ieq(s, len, "inf") ||
	    ieq(s, len, "-inf") || ieq(s, len, "infinity"))
		return "NaN or infinity";
	if (ieq(s, len, "true") || ieq(s, len, "false") || ieq(s, len, "yes") ||
	    ieq(s, len, "no") || ieq(s, len, "on") || ieq(s, len, "off"))
		return "a boolean";
	if (ieq(s, len, "null") || ieq(s, len, "~"))
		return "null";
	for (i = 0; i < len; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9')
			digits++;
		else if (c == '.')
			dots++;
		else if ((c == 'e' || c == 'E') && i > 0)
			exps++;
		else if ((c == '-' || c == '+') && (i == 0 || s[i - 1] == 'e' || s[i - 1] == 'E'))
			;
		else if (c == '_' || c == 'x' || c == 'o')
			other++;
		else
			return "text";
	}
	if (digits == 0)
		return "text";
	if (s[0] == '-')
		return "a negative number";
	if (dots || exps)
		return "a decimal number";
	if (other)
		return "a number in a form other than plain decimal digits";
	return "a number too large";
}
