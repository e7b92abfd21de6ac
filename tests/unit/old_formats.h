/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * old_formats.h - the binary files as the versions before XXH3 wrote them,
 * rebuilt byte by byte in the tests (independently of the library): their
 * word-wise FNV-1a checksum, and a step plan of version 1; a file's bytes
 * read whole and written back. Header-only because every test is its own
 * binary.
 */
#ifndef TMATCH_TESTS_OLD_FORMATS_H
#define TMATCH_TESTS_OLD_FORMATS_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline uint64_t tm_get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int k = n - 1; k >= 0; k--)
		v = v << 8 | p[k];
	return v;
}

static inline void tm_put_le(unsigned char *p, int n, uint64_t v)
{
	for (int k = 0; k < n; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

/* FNV-1a over the little-endian 8-byte words of p's n bytes, the tail
   zero-padded to a word: the older versions' checksum (compiled profile
   1 and 2, store 1 and 2, plan 1, and a plan 1's profile hash). */
static inline uint64_t tm_fnv_words(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i += 8) {
		unsigned char w[8] = {0};

		for (size_t k = 0; k < 8 && i + k < n; k++)
			w[k] = p[i + k];
		h = (h ^ tm_get_le(w, 8)) * 0x100000001b3ULL;
	}
	return h;
}

/*
 * The step plan of b (len bytes, as written now) turned into the version 1
 * a treematch before XXH3 wrote: version word 1, profile_hash the FNV-1a
 * given, header (0..120), index entries (their first 88 bytes) and slices
 * (all but their last 8 bytes) sealed with FNV-1a words. 0, or -1 when the
 * plan's index points outside b.
 */
static inline int tm_plan_to_v1(unsigned char *b, size_t len, uint64_t profile_hash)
{
	uint64_t nnodes;

	if (len < 128)
		return -1;
	nnodes = tm_get_le(b + 12, 4);
	if (128 + 96 * nnodes > len)
		return -1;
	tm_put_le(b + 8, 4, 1);
	tm_put_le(b + 56, 8, profile_hash);
	tm_put_le(b + 120, 8, tm_fnv_words(b, 120));
	for (uint64_t k = 0; k < nnodes; k++) {
		unsigned char *e = b + 128 + 96 * k;
		uint64_t off = tm_get_le(e + 64, 8), n = tm_get_le(e + 72, 8);

		if (off > len || n < 8 || n > len - off)
			return -1;
		tm_put_le(b + off + n - 8, 8, tm_fnv_words(b + off, (size_t)n - 8));
		tm_put_le(e + 88, 8, tm_fnv_words(e, 88));
	}
	return 0;
}

/* The bytes of a file, malloc'd, and their count. */
static inline unsigned char *tm_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long len;

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	cr_assert_gt(len, 0, "%s", path);
	rewind(f);
	buf = malloc((size_t)len);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return buf;
}

/* n bytes into the file path, replacing it. */
static inline void tm_spill(const char *path, const unsigned char *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(b, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

#endif /* TMATCH_TESTS_OLD_FORMATS_H */
