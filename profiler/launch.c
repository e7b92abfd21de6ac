/* SPDX-License-Identifier: BSD-3-Clause */
/* launch.c - see launch.h. */
#include "profiler/launch.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TMATCH_RECORD_LIBDIR
#define TMATCH_RECORD_LIBDIR "/usr/local/lib/treematch"
#endif

const char *tmatch_record_default_libdir(void)
{
	return TMATCH_RECORD_LIBDIR;
}

char *tmatch_record_output_path(const char *file, tmatch_error_t *err)
{
	char dir[PATH_MAX], real[PATH_MAX], *out = NULL;
	const char *base;
	char *slash;

	if (!file || !*file) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "name a file");
		return NULL;
	}
	if ((size_t)snprintf(dir, sizeof dir, "%s", file) >= sizeof dir) {
		tmatch_error_set(err, ENAMETOOLONG, NULL, 0, 0, "path too long");
		return NULL;
	}
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		base = file + (slash - dir) + 1;
		if (!dir[0])
			snprintf(dir, sizeof dir, "/");
	} else {
		snprintf(dir, sizeof dir, ".");
		base = file;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "name a file");
		return NULL;
	}
	if (!realpath(dir, real) || access(real, W_OK) != 0) {
		int e = errno;
		tmatch_error_set(err, e, NULL, 0, 0, "cannot write in directory %s: %s", dir,
		                 strerror(e));
		return NULL;
	}
	if (asprintf(&out, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) < 0) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	if (strlen(out) >= PATH_MAX) {
		free(out);
		tmatch_error_set(err, ENAMETOOLONG, NULL, 0, 0, "path too long");
		return NULL;
	}
	return out;
}

int tmatch_record_locate(const char *dir, const char *const *extra, int nextra, tmatch_mpiabi_t abi,
                         char *buf, size_t len, tmatch_error_t *err)
{
	if (dir && *dir)
		return tmatch_mpiabi_recorder(dir, abi, buf, len, err);
	for (int i = 0; extra && i < nextra; i++)
		if (extra[i] && tmatch_mpiabi_recorder(extra[i], abi, buf, len, NULL) == 0)
			return 0;
	return tmatch_mpiabi_recorder(tmatch_record_default_libdir(), abi, buf, len, err);
}

static int put(tmatch_record_env_t *env, int *n, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int put(tmatch_record_env_t *env, int *n, const char *name, const char *fmt, ...)
{
	va_list ap;
	char *v = NULL;
	int r = 0;

	if (fmt) {
		va_start(ap, fmt);
		r = vasprintf(&v, fmt, ap);
		va_end(ap);
	}
	if (r < 0)
		return -1;
	env[*n].name = name;
	env[*n].value = v;
	(*n)++;
	return 0;
}

static const char *const coll_names[] = {"wire", "logical", "off"};

int tmatch_record_coll_parse(const char *name, tmatch_record_coll_t *out, tmatch_error_t *err)
{
	for (int c = 0; c < 3; c++)
		if (!name || !*name || !strcmp(name, coll_names[c])) {
			*out = name && *name ? (tmatch_record_coll_t)c : TMATCH_RECORD_COLL_WIRE;
			return 0;
		}
	return tmatch_error_set(err, EINVAL, NULL, 0, 0,
	                        "collectives '%.40s': give wire (the default: the messages "
	                        "collectives send, placed by), logical or off",
	                        name);
}

int tmatch_record_env(const char *recorder, const char *old_preload, const char *output,
                      tmatch_record_coll_t collectives, int verbose, tmatch_record_env_t *env)
{
	int n = 0;
	const char *old = old_preload ? old_preload : "";

	if (!recorder || !output || !env || collectives < TMATCH_RECORD_COLL_WIRE ||
	    collectives > TMATCH_RECORD_COLL_OFF) {
		errno = EINVAL;
		return -1;
	}
	if (put(env, &n, "LD_PRELOAD", "%s%s%s", recorder, old[0] ? ":" : "", old) ||
	    put(env, &n, "TREEMATCH_RECORD_OUTPUT", "%s", output) ||
	    put(env, &n, "TREEMATCH_RECORD_COLLECTIVES", "%s", coll_names[collectives]) ||
	    (verbose && put(env, &n, "TREEMATCH_RECORD_VERBOSE", "1"))) {
		tmatch_record_env_free(env, n);
		errno = ENOMEM;
		return -1;
	}
	return n;
}

void tmatch_record_env_free(tmatch_record_env_t *env, int n)
{
	for (int i = 0; env && i < n; i++) {
		free(env[i].value);
		env[i].value = NULL;
	}
}
