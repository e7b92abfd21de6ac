/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.h - the project's cross-module internal tier: the one owner of a
 * few small pieces the formats of every module are made of, so that no
 * module keeps a copy of its own. Any module of ours may include it (the
 * front ends too); it is not installed and its functions are not exported
 * (HACKING.md, "Header tiers"; STYLE.md).
 *
 * - the pieces of the binary files (the compiled profile, the step plan,
 *   the store): little-endian words whatever the host, sections aligned on
 *   8 bytes, their corruption checksums (checksum.c: XXH3 in the versions
 *   written now, FNV-1a to read the older ones), pread of an exact length
 *   and write of all of a buffer;
 * - the bounded line reader of the text formats (textfile.c);
 * - an item of the ordered integer lists "A-B,C" (intlist.c).
 */
#ifndef TMATCH_INTERNAL_H
#define TMATCH_INTERNAL_H

#include "treematch/treematch.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

static inline void tmatch__put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void tmatch__put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t tmatch__get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t tmatch__get64(const unsigned char *p)
{
	return (uint64_t)tmatch__get32(p) | (uint64_t)tmatch__get32(p + 4) << 32;
}

static inline uint64_t tmatch__pad8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/*
 * The corruption checksum of a binary file's section or of a whole file.
 * The versions of the formats written now use XXH3, 64 bits (libxxhash:
 * fast, and made to catch damage); the older versions used a word-wise
 * FNV-1a, kept only to read their files (never to write one). Neither is
 * an identity: a program's is a SHA-256 (profile/store.c).
 */
typedef enum {
	TMATCH__SUM_FNV1A = 1, /* the older versions' (len a multiple of 8) */
	TMATCH__SUM_XXH3 = 2,  /* the versions written now */
} tmatch__sum_t;

#define TMATCH__FNV_BASIS 0xcbf29ce484222325ULL
#define TMATCH__FNV_PRIME 0x100000001b3ULL

/* The checksum of buf's len bytes. */
uint64_t tmatch__checksum(tmatch__sum_t algo, const void *buf, size_t len);

/* The checksum of the first size bytes of the file fd, read in chunks
   (FNV-1a: the tail zero-padded to a word). 0, or -1 on a short read or
   when memory is short (errno). */
int tmatch__checksum_fd(int fd, uint64_t size, tmatch__sum_t algo, uint64_t *sum);

/* XXH3 of bytes given piece by piece (a writer's output as it goes):
   begin (NULL when memory is short), update, end (the checksum; frees it). */
typedef struct tmatch__sum_stream tmatch__sum_stream_t;
tmatch__sum_stream_t *tmatch__sum_begin(void);
void tmatch__sum_update(tmatch__sum_stream_t *s, const void *buf, size_t len);
uint64_t tmatch__sum_end(tmatch__sum_stream_t *s);

/* pread exactly len bytes at off; -1 on a short read or an error. */
static inline int tmatch__pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* write(2) until done: 0, or -1 with errno. */
static inline int tmatch__write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Lines of a text file (textfile.c), none longer than max bytes. next returns
   the line without its end, NULL at the end of the file or when it stopped:
   then errnum is set (EINVAL: a NUL byte or a line too long; ENOMEM; EIO) and
   why says it in words for the message at line lineno + 1. */
typedef struct tmatch__lines {
	FILE *f;
	char *line;
	size_t cap, max;
	int lineno, errnum;
	int borrowed; /* f is the caller's (tmatch__lines_attach) */
	char why[64];
} tmatch__lines_t;

int tmatch__lines_open(tmatch__lines_t *l, const char *path, size_t max_line,
                       unsigned long long *size, tmatch_error_t *err);
/* The same over a stream the caller opened (standard input) and closes. */
void tmatch__lines_attach(tmatch__lines_t *l, FILE *f, size_t max_line);
char *tmatch__lines_next(tmatch__lines_t *l);
/* Where the reader stopped, as the error of path at line lineno + 1 (its
   errnum and why): -1, as tmatch_error_set. */
int tmatch__lines_error(const tmatch__lines_t *l, const char *path, tmatch_error_t *err);
void tmatch__lines_close(tmatch__lines_t *l);

/*
 * One item of an ordered integer list such as "0-3,8" (intlist.c): at s, a
 * decimal number or a range "A-B" with A <= B, each at most max (>= 0).
 * 0 with [*first, *last] and *end just past the item; else a code below,
 * *end at the character to blame (past B for a backward range, whose
 * *first and *last are A and B as written). The
 * separators between items are the format's, and the caller's to read.
 */
enum {
	TMATCH__LIST_NO_NUMBER = 1, /* no digit at s */
	TMATCH__LIST_NO_END,        /* "A-" and no digit after the '-' */
	TMATCH__LIST_TOO_BIG,       /* a number above max */
	TMATCH__LIST_BACKWARDS,     /* "A-B" with B < A */
};
int tmatch__list_item(const char *s, long max, long *first, long *last, const char **end);

#endif
