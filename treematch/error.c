/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * error.c - the error struct every parsing/validating function fills, and
 * the logging helper that goes through the caller's callback.
 */
#include "treematch/treematch_private.h"

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

void tmatch__error_vset(tmatch_error_t *err, const char *file, int line, int column,
                        const char *fmt, va_list ap)
{
	if (!err)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line > 0 ? line : 0;
	err->column = column > 0 ? column : 0;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

void tmatch__error_set(tmatch_error_t *err, const char *file, int line, int column, const char *fmt,
                       ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	tmatch__error_vset(err, file, line, column, fmt, ap);
	va_end(ap);
}

void tmatch__log(const tmatch_map_opts_t *opts, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!opts || !opts->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	opts->log(opts->log_arg, level, buf);
}
