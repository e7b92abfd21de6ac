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
