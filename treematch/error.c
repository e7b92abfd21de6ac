/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * error.c - the error struct every parsing/validating function of the library
 * fills (tmatch_error_set: the one helper, for every module), logging
 * through the caller's callback, and the decimal reader of the text formats.
 */
#include "treematch/treematch_private.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void tmatch_error_clear(tmatch_error_t *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

const char *tmatch_error_format(const tmatch_error_t *err, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	if (!err) {
		buf[0] = '\0';
		return buf;
	}
	if (err->file[0] && err->line > 0 && err->column > 0)
		snprintf(buf, len, "%s:%d:%d: %s", err->file, err->line, err->column, err->msg);
	else if (err->file[0] && err->line > 0)
		snprintf(buf, len, "%s:%d: %s", err->file, err->line, err->msg);
	else if (err->file[0])
		snprintf(buf, len, "%s: %s", err->file, err->msg);
	else if (err->column > 0)
		snprintf(buf, len, "column %d: %s", err->column, err->msg);
	else
		snprintf(buf, len, "%s", err->msg);
	return buf;
}

int tmatch_error_vset(tmatch_error_t *err, int errnum, const char *file, int line, int column,
                      const char *fmt, va_list ap)
{
	if (err) {
		snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
		err->line = line > 0 ? line : 0;
		err->column = column > 0 ? column : 0;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	}
	if (errnum)
		errno = errnum;
	return -1;
}

int tmatch_error_set(tmatch_error_t *err, int errnum, const char *file, int line, int column,
                     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tmatch_error_vset(err, errnum, file, line, column, fmt, ap);
	va_end(ap);
	return -1;
}

void tmatch_log_vprintf(tmatch_log_fn log, void *arg, int level, const char *fmt, va_list ap)
{
	char buf[1024];

	if (!log)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log(arg, level, buf);
}

void tmatch_log_printf(tmatch_log_fn log, void *arg, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tmatch_log_vprintf(log, arg, level, fmt, ap);
	va_end(ap);
}

int tmatch_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || len == 0 || len > 20)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return -1;
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (v > max)
		return -1;
	if (out)
		*out = v;
	return 0;
}

int tmatch_parse_size(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t mult = 1, v;
	char last;

	if (!s || len == 0)
		return -1;
	last = s[len - 1];
	if (last == 'K' || last == 'k')
		mult = (uint64_t)1 << 10, len--;
	else if (last == 'M' || last == 'm')
		mult = (uint64_t)1 << 20, len--;
	else if (last == 'G' || last == 'g')
		mult = (uint64_t)1 << 30, len--;
	if (tmatch_parse_u64(s, len, UINT64_MAX / mult, &v) || v == 0 || v * mult > max)
		return -1;
	if (out)
		*out = v * mult;
	return 0;
}

/* Optimal string alignment distance of a[0..la) and b[0..lb), or a value
   above `cap` as soon as it must exceed it (names are short). */
static size_t osa(const char *a, size_t la, const char *b, size_t lb, size_t cap)
{
	size_t d[34][34];

	if (la > 32 || lb > 32)
		return cap + 1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[la][lb];
}

int tmatch_closest_name(const char *word, size_t len, const char *const *names, size_t n)
{
	size_t best_d = (size_t)-1;
	int best = -1;

	if (!word || !names || len == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t ln, cap, dist, diff;

		if (!names[i])
			continue;
		ln = strlen(names[i]);
		cap = (ln > 4 && len > 4) ? 2 : 1;
		dist = osa(word, len, names[i], ln, cap);
		if (dist == 0)
			return -1; /* not a slip: the name itself */
		/* a prefix of the name, or the name and a little more */
		diff = len < ln ? ln - len : len - ln;
		if (dist > cap && diff > 0 && diff <= 2 && len >= 3 && ln >= 3 &&
		    !strncmp(word, names[i], len < ln ? len : ln))
			dist = diff;
		if (dist <= cap && dist < best_d) {
			best_d = dist;
			best = (int)i;
		}
	}
	return best;
}
