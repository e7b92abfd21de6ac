/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_input.h - what the harnesses do with libFuzzer's bytes: the input
 * after its first (selector) byte as a string, and bytes as a file for the
 * readers that take a path.
 */
#ifndef TMATCH_FUZZ_INPUT_H
#define TMATCH_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* data[1..size) NUL-terminated (free it); NULL when size is 0 or over max. */
static inline char *fuzz_text(const uint8_t *data, size_t size, size_t max)
{
	char *text;

	if (size < 1 || size > max || !(text = malloc(size)))
		return NULL;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	return text;
}

/* The bytes as the one in-memory file of the process, named through /proc
   (a regular file, as the readers require); the path stays valid. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

#endif
