/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checksum.c - the corruption checksums of the binary files (the compiled
 * profile, the step plan, the store's entries; treematch/internal.h): XXH3,
 * 64 bits, from Debian's libxxhash for the versions written now, and the
 * word-wise FNV-1a of the older versions, only to read their files.
 */
#include "treematch/internal.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define CHUNK ((size_t)1 << 20)

/* FNV-1a over the 8-byte little-endian words of buf, continuing from h. */
static uint64_t fnv1a_words(uint64_t h, const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i + 8 <= len; i += 8)
		h = (h ^ tmatch__get64(buf + i)) * TMATCH__FNV_PRIME;
	return h;
}

uint64_t tmatch__checksum(tmatch__sum_t algo, const void *buf, size_t len)
{
	if (algo == TMATCH__SUM_XXH3)
		return (uint64_t)XXH3_64bits(buf, len);
	return fnv1a_words(TMATCH__FNV_BASIS, buf, len);
}

struct tmatch__sum_stream {
	XXH3_state_t *st;
};

tmatch__sum_stream_t *tmatch__sum_begin(void)
{
	tmatch__sum_stream_t *s = malloc(sizeof(*s));

	if (s && (s->st = XXH3_createState()) != NULL && XXH3_64bits_reset(s->st) == XXH_OK)
		return s;
	if (s)
		XXH3_freeState(s->st);
	free(s);
	errno = ENOMEM;
	return NULL;
}

void tmatch__sum_update(tmatch__sum_stream_t *s, const void *buf, size_t len)
{
	if (s && len)
		XXH3_64bits_update(s->st, buf, len); /* fails only on a NULL input */
}

uint64_t tmatch__sum_end(tmatch__sum_stream_t *s)
{
	uint64_t h;

	if (!s)
		return 0;
	h = (uint64_t)XXH3_64bits_digest(s->st);
	XXH3_freeState(s->st);
	free(s);
	return h;
}

int tmatch__checksum_fd(int fd, uint64_t size, tmatch__sum_t algo, uint64_t *sum)
{
	unsigned char *buf = malloc(CHUNK);
	tmatch__sum_stream_t *st = NULL;
	uint64_t h = TMATCH__FNV_BASIS, off = 0;

	if (!buf || (algo == TMATCH__SUM_XXH3 && !(st = tmatch__sum_begin()))) {
		free(buf);
		errno = ENOMEM;
		return -1;
	}
	while (off < size) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;

		if (tmatch__pread_all(fd, buf, n, off) < 0) {
			tmatch__sum_end(st);
			free(buf);
			errno = errno ? errno : EIO;
			return -1;
		}
		if (st) {
			tmatch__sum_update(st, buf, n);
		} else { /* n < CHUNK when it is not a whole number of words */
			size_t padded = (size_t)tmatch__pad8(n);

			memset(buf + n, 0, padded - n);
			h = fnv1a_words(h, buf, padded);
		}
		off += n;
	}
	free(buf);
	*sum = st ? tmatch__sum_end(st) : h;
	return 0;
}
