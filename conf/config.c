/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - the option grammar shared by plugstack.conf arguments, the
 * user's --treematch=... value and the admin file: one key table, one value
 * parser per type, three thin front ends, one merge rule.
 */
#include "conf/config.h"
#include "profile/profile.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum kind {
	T_PATH,
	T_MAPPER,
	T_METRIC,
	T_BOOL,
	T_FAILURE,
	T_INT,
	T_U64,
	T_SIZE,
	T_SECONDS,
	T_MAPPERS
};

enum key_id {
	KEY_PROFILE,
	KEY_MAPPER,
	KEY_METRIC,
	KEY_COLL,
	KEY_FAILURE,
	KEY_VERBOSE,
	KEY_DRY_RUN,
	KEY_SEED,
	KEY_MPI_PIN,
	KEY_MAX_RANKS,
	KEY_MAX_FILE_SIZE,
	KEY_MAX_MAP_TIME,
	KEY_MAX_MAP_MEMORY,
	KEY_DEFAULT,
	KEY_ALLOWED_MAPPERS,
	KEY_EXCLUSIVE_ONLY,
	KEY_TOPOLOGY_XML,
	KEY_PLAN,
	KEY_STORE,
	KEY_MIN_GAIN,
	KEY_SEARCH_TIME,
	KEY_NIC_ENV,
	KEY_COUNT
};

static const struct key {
	const char *name;
	enum kind kind;
	int admin_only;
	long min, max; /* T_INT */
	const char *hint;
} keys[KEY_COUNT] = {
    [KEY_PROFILE] = {"profile", T_PATH, 0, 0, 0, "a file path"},
    [KEY_MAPPER] = {"mapper", T_MAPPER, 0, 0, 0, "a mapper name"},
    [KEY_METRIC] = {"metric", T_METRIC, 0, 0, 0, "bytes, msgs or avg"},
    [KEY_COLL] = {"coll", T_BOOL, 0, 0, 0, "on or off"},
    [KEY_FAILURE] = {"failure", T_FAILURE, 0, 0, 0, "fallback or fail"},
    [KEY_VERBOSE] = {"verbose", T_INT, 0, 0, 9, "0 to 9"},
    [KEY_DRY_RUN] = {"dry_run", T_BOOL, 0, 0, 0, "on or off"},
    [KEY_SEED] = {"seed", T_U64, 0, 0, 0, "a non-negative integer"},
    [KEY_MPI_PIN] = {"mpi_pin", T_BOOL, 0, 0, 0, "on or off"},
    [KEY_MAX_RANKS] = {"max_ranks", T_INT, 0, 1, TMATCH_PROFILE_DEFAULT_MAX_RANKS, "1 to 1048576"},
    [KEY_MAX_FILE_SIZE] = {"max_file_size", T_SIZE, 0, 0, 0,
                           "a size in bytes, with an optional K, M or G suffix"},
    [KEY_MAX_MAP_TIME] = {"max_map_time", T_SECONDS, 0, 0, 0,
                          "seconds, more than 0 and at most 3600"},
    [KEY_MAX_MAP_MEMORY] = {"max_map_memory", T_SIZE, 0, 0, 0,
                            "a size in bytes, with an optional K, M or G suffix"},
    [KEY_DEFAULT] = {"default", T_BOOL, 1, 0, 0, "on or off"},
    [KEY_ALLOWED_MAPPERS] = {"allowed_mappers", T_MAPPERS, 1, 0, 0,
                             "mapper names separated by ':'"},
    [KEY_EXCLUSIVE_ONLY] = {"exclusive_only", T_BOOL, 1, 0, 0, "on or off"},
    [KEY_TOPOLOGY_XML] = {"topology_xml", T_PATH, 1, 0, 0, "a file path"},
    [KEY_PLAN] = {"plan", T_PATH, 0, 0, 0, "a file path"},
    [KEY_STORE] = {"store", T_PATH, 1, 0, 0, "a directory path"},
    [KEY_MIN_GAIN] = {"min_gain", T_INT, 0, 0, 100, "0 to 100 (percent)"},
    [KEY_SEARCH_TIME] = {"search_time", T_SECONDS, 0, 0, 0, "seconds, from 0 to 3600"},
    [KEY_NIC_ENV] = {"nic_env", T_BOOL, 0, 0, 0, "on or off"},
};

static const char *const key_names[KEY_COUNT + 1] = {
    "profile",
    "mapper",
    "metric",
    "coll",
    "failure",
    "verbose",
    "dry_run",
    "seed",
    "mpi_pin",
    "max_ranks",
    "max_file_size",
    "max_map_time",
    "max_map_memory",
    "default",
    "allowed_mappers",
    "exclusive_only",
    "topology_xml",
    "plan",
    "store",
    "min_gain",
    "search_time",
    "nic_env",
    NULL,
};

const char *const *tmatch_config_keys(void)
{
	return key_names;
}

void tmatch_config_init(tmatch_config_t *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->metric = -1;
	cfg->coll = -1;
	cfg->failure = TMATCH_FAILURE_FALLBACK;
	cfg->max_ranks = TMATCH_PROFILE_DEFAULT_MAX_RANKS;
	cfg->max_file_size = TMATCH_PROFILE_DEFAULT_MAX_FILE_SIZE;
	cfg->max_map_time = 10.0;
	cfg->max_map_memory = (size_t)1 << 30;
	cfg->min_gain = 2;
	cfg->nic_env = 1;
	/* The same default seed as the library and `treematch map`, so a
	   placement computed by hand and one made at launch agree. */
	tmatch_map_opts_t mopts;
	tmatch_map_opts_init(&mopts);
	cfg->seed = mopts.seed;
}

/* Where an item came from, for messages. */
struct where {
	const char *name;
	int line;
	int column;
};

static int fail(tmatch_error_t *err, const struct where *w, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(tmatch_error_t *err, const struct where *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tmatch_error_vset(err, EINVAL, w->name, w->line, w->column, fmt, ap);
	va_end(ap);
	return -1;
}

static int streq(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !memcmp(s, word, n);
}

static int parse_bool(const char *v, size_t n, int *out)
{
	if (streq(v, n, "on") || streq(v, n, "yes") || streq(v, n, "true") || streq(v, n, "1"))
		*out = 1;
	else if (streq(v, n, "off") || streq(v, n, "no") || streq(v, n, "false") ||
	         streq(v, n, "0"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int copy_text(char *dst, size_t cap, const char *v, size_t n)
{
	if (n == 0 || n >= cap)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return -1;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return 0;
}

static void key_list(char *buf, size_t len, int user)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < KEY_COUNT && off < len; k++) {
		if (user && keys[k].admin_only)
			continue;
		int w = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", keys[k].name);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* Check one mapper name (with optional +refine). */
static int check_mapper(const char *name, const struct where *w, tmatch_error_t *err)
{
	tmatch_error_t e;

	if (tmatch_map_check_name(name, &e) == 0)
		return 0;
	return fail(err, w, "%s", e.msg[0] ? e.msg : "unknown mapper");
}

static int set_item(tmatch_config_t *cfg, const char *k, size_t kn, const char *v, size_t vn,
                    enum tmatch_config_source source, const struct where *w, tmatch_error_t *err)
{
	char list[400], tmp[512];
	int id = -1;

	for (int i = 0; i < KEY_COUNT; i++)
		if (streq(k, kn, keys[i].name))
			id = i;
	if (id < 0) {
		const char *names[KEY_COUNT];
		int near;

		for (int i = 0; i < KEY_COUNT; i++)
			names[i] = keys[i].name;
		near = tmatch_closest_name(k, kn, names, KEY_COUNT);
		if (near >= 0 && (!keys[near].admin_only || source != TMATCH_CONFIG_USER))
			return fail(err, w, "unknown option '%.*s': did you mean '%s'?",
			            (int)(kn > 40 ? 40 : kn), k, keys[near].name);
		key_list(list, sizeof(list), source == TMATCH_CONFIG_USER);
		return fail(err, w, "unknown option '%.*s': valid options are %s",
		            (int)(kn > 40 ? 40 : kn), k, list);
	}
	const struct key *key = &keys[id];
	if (key->admin_only && source == TMATCH_CONFIG_USER)
		return fail(err, w,
		            "'%s' can only be set by the administrator (plugstack.conf "
		            "or the admin file)",
		            key->name);
	if (vn == 0)
		return fail(err, w, "'%s' needs a value: %s", key->name, key->hint);

	int b;
	uint64_t u;
	switch (key->kind) {
	case T_PATH: {
		char *dst = id == KEY_PROFILE ? cfg->profile
		            : id == KEY_PLAN  ? cfg->plan
		            : id == KEY_STORE ? cfg->store
		                              : cfg->topology_xml;
		if (copy_text(dst, TMATCH_CONFIG_PATH_MAX, v, vn))
			return fail(err, w,
			            "'%s' must be a path shorter than %d bytes without "
			            "control characters",
			            key->name, TMATCH_CONFIG_PATH_MAX);
		if (id == KEY_PROFILE) {
			cfg->enabled = 1;
			cfg->learn = 0;
		}
		break;
	}
	case T_MAPPER:
		if (copy_text(tmp, sizeof(cfg->mapper), v, vn))
			return fail(err, w, "'mapper' is too long: give a mapper name");
		if (check_mapper(tmp, w, err))
			return -1;
		memcpy(cfg->mapper, tmp, vn + 1);
		break;
	case T_MAPPERS: {
		if (copy_text(tmp, sizeof(cfg->allowed_mappers), v, vn))
			return fail(err, w, "'allowed_mappers' is too long");
		char *save = NULL, scratch[sizeof(tmp)];
		memcpy(scratch, tmp, vn + 1);
		for (char *t = strtok_r(scratch, ":", &save); t; t = strtok_r(NULL, ":", &save))
			if (check_mapper(t, w, err))
				return -1;
		memcpy(cfg->allowed_mappers, tmp, vn + 1);
		break;
	}
	case T_METRIC:
		if (streq(v, vn, "bytes"))
			cfg->metric = TMATCH_METRIC_BYTES;
		else if (streq(v, vn, "msgs"))
			cfg->metric = TMATCH_METRIC_MSGS;
		else if (streq(v, vn, "avg"))
			cfg->metric = TMATCH_METRIC_AVG;
		else
			return fail(err, w, "'metric' must be bytes, msgs or avg");
		break;
	case T_FAILURE:
		if (streq(v, vn, "fallback"))
			cfg->failure = TMATCH_FAILURE_FALLBACK;
		else if (streq(v, vn, "fail"))
			cfg->failure = TMATCH_FAILURE_FAIL;
		else
			return fail(err, w, "'failure' must be fallback or fail");
		break;
	case T_BOOL:
		if (id == KEY_DEFAULT && streq(v, vn, "learn")) {
			cfg->enabled = 1;
			cfg->learn = 1;
			cfg->profile[0] = '\0';
			break;
		}
		if (parse_bool(v, vn, &b))
			return fail(err, w, "'%s' must be on or off", key->name);
		if (id == KEY_COLL)
			cfg->coll = b;
		else if (id == KEY_DRY_RUN)
			cfg->dry_run = b;
		else if (id == KEY_MPI_PIN)
			cfg->mpi_pin = b;
		else if (id == KEY_NIC_ENV)
			cfg->nic_env = b;
		else if (id == KEY_DEFAULT)
			cfg->enabled = b;
		else
			cfg->exclusive_only = b;
		break;
	case T_INT:
		if (tmatch_parse_u64(v, vn, (uint64_t)key->max, &u) || (long)u < key->min)
			return fail(err, w, "'%s' must be an integer from %s", key->name,
			            key->hint);
		if (id == KEY_VERBOSE)
			cfg->verbose = (int)u;
		else if (id == KEY_MIN_GAIN)
			cfg->min_gain = (int)u;
		else
			cfg->max_ranks = (int)u;
		break;
	case T_U64:
		if (tmatch_parse_u64(v, vn, UINT64_MAX, &u))
			return fail(err, w, "'%s' must be %s", key->name, key->hint);
		cfg->seed = u;
		break;
	case T_SIZE:
		if (tmatch_parse_size(v, vn, (uint64_t)SIZE_MAX / 2, &u))
			return fail(err, w, "'%s' must be %s (more than 0)", key->name, key->hint);
		if (id == KEY_MAX_MAP_MEMORY)
			cfg->max_map_memory = (size_t)u;
		else
			cfg->max_file_size = (size_t)u;
		break;
	case T_SECONDS: {
		char num[32], *end;
		if (vn >= sizeof(num))
			return fail(err, w, "'%s' must be %s", key->name, key->hint);
		memcpy(num, v, vn);
		num[vn] = '\0';
		errno = 0;
		double d = strtod(num, &end);
		/* search_time may be 0 (no search), max_map_time may not */
		if (*end || errno || !isfinite(d) ||
		    !(d > 0 || (d == 0 && id == KEY_SEARCH_TIME)) || d > 3600 || num[0] == '-' ||
		    num[0] == '+' || num[0] == ' ')
			return fail(err, w, "'%s' must be %s", key->name, key->hint);
		if (id == KEY_SEARCH_TIME)
			cfg->search_time = d;
		else
			cfg->max_map_time = d;
		break;
	}
	}
	cfg->set_mask |= 1u << id;
	return 0;
}

/* "key=value" (the '=' may be surrounded by blanks when `blanks`). */
static int parse_kv(tmatch_config_t *cfg, const char *s, size_t n, int blanks,
                    enum tmatch_config_source source, const struct where *w, tmatch_error_t *err)
{
	const char *eq = memchr(s, '=', n);

	if (!eq)
		return fail(err, w,
		            "expected key=value, found no '=': options are written "
		            "like mapper=greedy");
	size_t kn = (size_t)(eq - s);
	const char *v = eq + 1;
	size_t vn = n - kn - 1;
	if (blanks) {
		while (kn && (s[kn - 1] == ' ' || s[kn - 1] == '\t'))
			kn--;
		while (vn && (*v == ' ' || *v == '\t'))
			v++, vn--;
		while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t' || v[vn - 1] == '\r'))
			vn--;
	}
	if (kn == 0)
		return fail(err, w, "missing option name before '='");
	return set_item(cfg, s, kn, v, vn, source, w, err);
}

int tmatch_config_parse_argv(tmatch_config_t *cfg, int argc, char *const *argv, const char *name,
                             tmatch_error_t *err)
{
	tmatch_config_t tmp;
	struct where w = {name ? name : "plugstack.conf", 0, 0};

	if (!cfg || argc < 0 || (argc > 0 && !argv))
		return fail(err, &w, "invalid arguments");
	tmp = *cfg;
	for (int i = 0; i < argc; i++) {
		w.column = i + 1;
		if (!argv[i])
			return fail(err, &w, "argument %d is missing", i + 1);
		if (parse_kv(&tmp, argv[i], strlen(argv[i]), 0, TMATCH_CONFIG_ADMIN, &w, err))
			return -1;
	}
	*cfg = tmp;
	return 0;
}

int tmatch_config_parse_string(tmatch_config_t *cfg, const char *opts,
                               enum tmatch_config_source source, const char *name,
                               tmatch_error_t *err)
{
	tmatch_config_t tmp;
	struct where w = {name ? name : "--treematch", 0, 1};

	if (!cfg || !opts || (source != TMATCH_CONFIG_ADMIN && source != TMATCH_CONFIG_USER))
		return fail(err, &w, "invalid arguments");
	if (!*opts)
		return fail(err, &w,
		            "empty option: give a profile, e.g. --treematch=app.yml, "
		            "or key=value items separated by ','");
	tmp = *cfg;
	const char *s = opts;
	int first = 1;
	for (;;) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		w.column = (int)(s - opts) + 1;
		if (n == 0)
			return fail(err, &w, "empty item: remove the extra ','");
		if (first && !memchr(s, '=', n)) {
			if (streq(s, n, "off") || streq(s, n, "no") || streq(s, n, "none")) {
				tmp.enabled = 0;
				tmp.set_mask |= 1u << KEY_DEFAULT;
			} else if (streq(s, n, "learn") || (n >= 6 && !strncmp(s, "learn:", 6))) {
				if (n >= 6 && (n == 6 || n - 6 >= sizeof(tmp.learn_name) ||
				               copy_text(tmp.learn_name, sizeof(tmp.learn_name),
				                         s + 6, n - 6) ||
				               strpbrk(tmp.learn_name, "/ ")))
					return fail(
					    err, &w,
					    "learn:NAME wants a name of at most %zu characters, "
					    "without '/' or blanks",
					    sizeof(tmp.learn_name) - 1);
				if (n < 6)
					tmp.learn_name[0] = '\0';
				tmp.learn = 1;
				tmp.enabled = 1;
				tmp.profile[0] = '\0';
				tmp.set_mask |= 1u << KEY_PROFILE;
			} else if (set_item(&tmp, "profile", 7, s, n, TMATCH_CONFIG_ADMIN, &w,
			                    err)) {
				return -1;
			}
		} else if (parse_kv(&tmp, s, n, 0, source, &w, err)) {
			return -1;
		}
		first = 0;
		if (!end)
			break;
		s = end + 1;
	}
	*cfg = tmp;
	return 0;
}

int tmatch_config_parse_text(tmatch_config_t *cfg, const char *text, size_t len, const char *name,
                             tmatch_error_t *err)
{
	tmatch_config_t tmp;
	struct where w = {name ? name : "<admin file>", 0, 0};

	if (!cfg || (!text && len))
		return fail(err, &w, "invalid arguments");
	tmp = *cfg;
	size_t pos = 0;
	for (int line = 1; pos < len; line++) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl ? 1 : 0);
		w.line = line;
		if (memchr(s, '\0', n)) {
			w.column = (int)((const char *)memchr(s, '\0', n) - s) + 1;
			return fail(err, &w, "NUL byte in the file: save it as text");
		}
		size_t i = 0;
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i == n || s[i] == '#')
			continue;
		w.column = (int)i + 1;
		if (parse_kv(&tmp, s + i, n - i, 1, TMATCH_CONFIG_ADMIN, &w, err))
			return -1;
	}
	*cfg = tmp;
	return 0;
}

int tmatch_config_parse_fd(tmatch_config_t *cfg, int fd, const char *name, tmatch_error_t *err)
{
	enum { CAP = 64 * 1024 };
	char *buf;
	size_t len = 0;
	int rc = -1;
	struct where w = {name ? name : "<admin file>", 0, 0};

	if (!cfg || fd < 0)
		return fail(err, &w, "invalid arguments");
	buf = malloc(CAP + 1);
	if (!buf) {
		tmatch_error_set(err, 0, w.name, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, CAP + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			tmatch_error_set(err, 0, w.name, 0, 0, "read error: %s", strerror(e));
			errno = e;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > CAP) {
			tmatch_error_set(err, 0, w.name, 0, 0,
			                 "file is larger than %d bytes: an admin file holds a few "
			                 "key = value lines",
			                 CAP);
			errno = EFBIG;
			goto out;
		}
	}
	rc = tmatch_config_parse_text(cfg, buf, len, w.name, err);
out:
	free(buf);
	return rc;
}

static int mapper_allowed(const char *list, const char *mapper)
{
	size_t base = strcspn(mapper, "+");
	const char *s = list;

	while (*s) {
		size_t n = strcspn(s, ":");
		if ((n == strlen(mapper) && !strncmp(s, mapper, n)) ||
		    (n == base && !strncmp(s, mapper, n)))
			return 1;
		s += n;
		if (*s == ':')
			s++;
	}
	return 0;
}

/* Name one ignored loosening in cfg->refused (", "-separated, cut if long). */
__attribute__((format(printf, 2, 3))) static void refuse(tmatch_config_t *cfg, const char *fmt, ...)
{
	size_t n = strlen(cfg->refused);
	va_list ap;

	if (n && n + 2 < sizeof(cfg->refused)) {
		memcpy(cfg->refused + n, ", ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(cfg->refused + n, sizeof(cfg->refused) - n, fmt, ap);
	va_end(ap);
}

/* A user limit: taken when it lowers the admin's, else refused. */
static void lower_int(tmatch_config_t *cfg, const char *key, int *limit, int want)
{
	if (want <= *limit)
		*limit = want;
	else
		refuse(cfg, "%s=%d (the site's limit is %d)", key, want, *limit);
}

static void lower_size(tmatch_config_t *cfg, const char *key, size_t *limit, size_t want)
{
	if (want <= *limit)
		*limit = want;
	else
		refuse(cfg, "%s=%zu (the site's limit is %zu bytes)", key, want, *limit);
}

static void lower_seconds(tmatch_config_t *cfg, const char *key, double *limit, double want)
{
	if (want <= *limit)
		*limit = want;
	else
		refuse(cfg, "%s=%g (the site's limit is %g)", key, want, *limit);
}

int tmatch_config_merge(const tmatch_config_t *admin, const tmatch_config_t *user,
                        tmatch_config_t *out, tmatch_error_t *err)
{
	tmatch_config_t res;
	struct where w = {"--treematch", 0, 0};

	if (!admin || !user || !out)
		return fail(err, &w, "invalid arguments");
	res = *admin;
	uint32_t m = user->set_mask;
	if (m & (1u << KEY_PROFILE)) {
		memcpy(res.profile, user->profile, sizeof(res.profile));
		memcpy(res.learn_name, user->learn_name, sizeof(res.learn_name));
		res.learn = user->learn;
		res.enabled = user->enabled;
	}
	if (m & (1u << KEY_MIN_GAIN))
		res.min_gain = user->min_gain;
	if (m & (1u << KEY_DEFAULT))
		res.enabled = user->enabled;
	if (m & (1u << KEY_PLAN))
		memcpy(res.plan, user->plan, sizeof(res.plan));
	if (m & (1u << KEY_MAPPER)) {
		const char *chosen = user->mapper;
		if (admin->allowed_mappers[0] && !mapper_allowed(admin->allowed_mappers, chosen))
			return fail(err, &w,
			            "mapper '%s' is not allowed here: the administrator allows %s",
			            chosen, admin->allowed_mappers);
		memcpy(res.mapper, user->mapper, sizeof(res.mapper));
	}
	if (m & (1u << KEY_METRIC))
		res.metric = user->metric;
	if (m & (1u << KEY_COLL))
		res.coll = user->coll;
	res.refused[0] = '\0';
	if (m & (1u << KEY_FAILURE)) {
		if (user->failure >= admin->failure)
			res.failure = user->failure;
		else
			refuse(&res, "failure=fallback (the site sets failure=fail)");
	}
	if (m & (1u << KEY_VERBOSE))
		res.verbose = user->verbose;
	if (m & (1u << KEY_DRY_RUN))
		res.dry_run = user->dry_run;
	if (m & (1u << KEY_SEED))
		res.seed = user->seed;
	if (m & (1u << KEY_MPI_PIN))
		res.mpi_pin = user->mpi_pin;
	if (m & (1u << KEY_MAX_RANKS))
		lower_int(&res, "max_ranks", &res.max_ranks, user->max_ranks);
	if (m & (1u << KEY_MAX_FILE_SIZE))
		lower_size(&res, "max_file_size", &res.max_file_size, user->max_file_size);
	if (m & (1u << KEY_MAX_MAP_TIME))
		lower_seconds(&res, "max_map_time", &res.max_map_time, user->max_map_time);
	if (m & (1u << KEY_MAX_MAP_MEMORY))
		lower_size(&res, "max_map_memory", &res.max_map_memory, user->max_map_memory);
	if (m & (1u << KEY_SEARCH_TIME))
		lower_seconds(&res, "search_time", &res.search_time, user->search_time);
	if (m & (1u << KEY_NIC_ENV)) {
		if (admin->nic_env || !user->nic_env)
			res.nic_env = user->nic_env;
		else
			refuse(&res, "nic_env=on (the site sets nic_env=off)");
	}
	/* When the admin's default mapper is not in the allowed list, keep it
	   anyway: the admin chose both. */
	res.set_mask = admin->set_mask | user->set_mask;
	*out = res;
	return 0;
}

int tmatch_config_format(const tmatch_config_t *cfg, char *buf, size_t len)
{
	static const char *const metric[] = {"bytes", "msgs", "avg"};

	if (!cfg)
		return snprintf(buf, len, "%s", "");
	return snprintf(
	    buf, len,
	    "profile=%s mapper=%s metric=%s coll=%s failure=%s verbose=%d "
	    "dry_run=%s seed=%llu mpi_pin=%s max_ranks=%d max_file_size=%zu "
	    "max_map_time=%g max_map_memory=%zu default=%s allowed_mappers=%s exclusive_only=%s "
	    "topology_xml=%s plan=%s learn=%s%s%s store=%s min_gain=%d search_time=%g nic_env=%s",
	    cfg->profile, cfg->mapper[0] ? cfg->mapper : TMATCH_DEFAULT_MAPPER,
	    cfg->metric >= 0 && cfg->metric <= 2 ? metric[cfg->metric] : "profile",
	    cfg->coll > 0    ? "on"
	    : cfg->coll == 0 ? "off"
	                     : "profile",
	    cfg->failure == TMATCH_FAILURE_FAIL ? "fail" : "fallback", cfg->verbose,
	    cfg->dry_run ? "on" : "off", (unsigned long long)cfg->seed, cfg->mpi_pin ? "on" : "off",
	    cfg->max_ranks, cfg->max_file_size, cfg->max_map_time, cfg->max_map_memory,
	    cfg->enabled ? "on" : "off", cfg->allowed_mappers, cfg->exclusive_only ? "on" : "off",
	    cfg->topology_xml, cfg->plan, cfg->learn ? "on" : "off", cfg->learn_name[0] ? ":" : "",
	    cfg->learn_name, cfg->store, cfg->min_gain, cfg->search_time,
	    cfg->nic_env ? "on" : "off");
}
