/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * textfile.c - how the library opens the files it is given and reads their
 * lines: tmatch_file_open accepts only a regular file (a FIFO must not block
 * the reader, a device must not feed it forever), and the line reader never
 * holds more than the caller's longest line, so a file of one huge line or a
 * binary file is refused at its first bad line instead of read whole.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *tmatch_file_open(const char *path, unsigned long long *size, tmatch_error_t *err)
{
	struct stat st;
	FILE *f;
	int fd, e;

	if (!path) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no file name");
		return NULL;
	}
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		tmatch_error_set(err, e, path, 0, 0, "cannot open: %s", strerror(e));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		tmatch_error_set(
		    err, EINVAL, path, 0, 0,
		    "not a regular file: give the data as a file (not a pipe or device)");
		return NULL;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 || !(f = fdopen(fd, "r"))) {
		e = errno;
		close(fd);
		tmatch_error_set(err, e, path, 0, 0, "cannot open: %s", strerror(e));
		return NULL;
	}
	if (size)
		*size = (unsigned long long)st.st_size;
	return f;
}

int tmatch__lines_open(tmatch__lines_t *l, const char *path, size_t max_line,
                       unsigned long long *size, tmatch_error_t *err)
{
	memset(l, 0, sizeof(*l));
	l->max = max_line;
	l->f = tmatch_file_open(path, size, err);
	return l->f ? 0 : -1;
}

void tmatch__lines_attach(tmatch__lines_t *l, FILE *f, size_t max_line)
{
	memset(l, 0, sizeof(*l));
	l->max = max_line;
	l->f = f;
	l->borrowed = 1;
}

/* Stop reading: l->errnum and l->why say why (the caller names the line). */
static char *lines_stop(tmatch__lines_t *l, int errnum, const char *why)
{
	l->errnum = errnum;
	snprintf(l->why, sizeof(l->why), "%s", why);
	return NULL;
}

char *tmatch__lines_next(tmatch__lines_t *l)
{
	size_t len = 0;
	int c;

	if (l->errnum)
		return NULL;
	// closed by tmatch__lines_close
	// NOLINTNEXTLINE(clang-analyzer-unix.Stream)
	while ((c = getc_unlocked(l->f)) != EOF) {
		if (c == '\0')
			return lines_stop(l, EINVAL, "a NUL byte: this is not a text file");
		if (len + 2 > l->cap) {
			size_t ncap = l->cap ? l->cap * 2 : 256;
			char *t;

			if (ncap > l->max + 2)
				ncap = l->max + 2;
			if (len + 2 > ncap) {
				char why[sizeof(l->why)];

				if (l->max >= (size_t)1 << 20)
					snprintf(why, sizeof(why), "a line longer than %zu MiB",
					         l->max >> 20);
				else
					snprintf(why, sizeof(why), "a line longer than %zu bytes",
					         l->max);
				return lines_stop(l, EINVAL, why);
			}
			if (!(t = realloc(l->line, ncap)))
				return lines_stop(l, ENOMEM, "out of memory");
			l->line = t;
			l->cap = ncap;
		}
		l->line[len++] = (char)c;
		if (c == '\n')
			break;
	}
	if (ferror(l->f))
		return lines_stop(l, EIO, "read error");
	if (len == 0)
		return NULL;
	l->line[len] = '\0';
	l->lineno++;
	while (len > 0 && (l->line[len - 1] == '\n' || l->line[len - 1] == '\r'))
		l->line[--len] = '\0';
	return l->line;
}

int tmatch__lines_error(const tmatch__lines_t *l, const char *path, tmatch_error_t *err)
{
	return tmatch_error_set(err, l->errnum, path, l->lineno + 1, 0, "%s", l->why);
}

void tmatch__lines_close(tmatch__lines_t *l)
{
	if (l->f && !l->borrowed)
		fclose(l->f);
	free(l->line);
	memset(l, 0, sizeof(*l));
}

char *tmatch_file_read(const char *path, size_t max_bytes, size_t *len, tmatch_error_t *err)
{
	unsigned long long size = 0;
	char *text;
	size_t got;
	FILE *f;

	if (!path || !len)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_file_read: invalid argument"),
		       NULL;
	f = tmatch_file_open(path, &size, err); /* regular files only */
	if (!f)
		return NULL;
	if (size > max_bytes) {
		fclose(f);
		tmatch_error_set(err, EFBIG, path, 0, 0,
		                 "%llu bytes, more than the %zu this file may have", size,
		                 max_bytes);
		return NULL;
	}
	text = malloc((size_t)size + 1);
	if (!text) {
		fclose(f);
		tmatch_error_set(err, ENOMEM, path, 0, 0, "out of memory");
		return NULL;
	}
	/* What fstat announced, no more: a file growing meanwhile is cut. */
	got = fread(text, 1, (size_t)size, f);
	if (ferror(f)) {
		fclose(f);
		free(text);
		tmatch_error_set(err, EIO, path, 0, 0, "read error");
		return NULL;
	}
	fclose(f);
	/* got <= size, and the text has size + 1 bytes */
	// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
	text[got] = '\0';
	*len = got;
	return text;
}
