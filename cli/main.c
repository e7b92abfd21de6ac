/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - `treematch` command-line tool: dispatch to the subcommands.
 */
#include "cli/cli.h"
#include "treematch/treematch.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
    {"map", tmatch_cli_map, "compute a placement of ranks onto a machine tree"},
    {"eval", tmatch_cli_eval, "metrics of a placement, next to packed and round-robin"},
    {"profile", tmatch_cli_profile, "convert, check and summarise communication profiles"},
    {"topology", tmatch_cli_topology, "show machine and cluster trees"},
    {"layout", tmatch_cli_layout, "rank-to-node layout (hostfile) for an allocation"},
    {"plan", tmatch_cli_plan, "inspect a compiled step plan, one node's placement from it"},
    {"predict", tmatch_cli_predict,
     "predicted run time of each placement (SimGrid replay of a trace)"},
    {"store", tmatch_cli_store, "the store of learned profiles: list, show, find, put, forget, gc"},
    {"draw", tmatch_cli_draw, "draw a profile and a placement as SVG"},
    {"record", tmatch_cli_record, "record a profile from an unmodified MPI run"},
    {"config", tmatch_cli_config, "check a site's configuration of the plugin before deploying it"},
    {NULL, NULL, NULL},
};

/* ---- the progress line ------------------------------------------------- */

static struct {
	int mode;    /* TMATCH_CLI_PROGRESS_AUTO, _ALWAYS or _NEVER */
	int shown;   /* a line is on the terminal, to be cleared */
	int printed; /* one was printed (what holds it) */
	double last; /* when the last one was printed (CLOCK_MONOTONIC) */
	char what[160];
} progress;

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int tmatch_cli_progress_option(const char *value)
{
	if (!value || !strcmp(value, "always"))
		progress.mode = TMATCH_CLI_PROGRESS_ALWAYS;
	else if (!strcmp(value, "never"))
		progress.mode = TMATCH_CLI_PROGRESS_NEVER;
	else if (!strcmp(value, "auto"))
		progress.mode = TMATCH_CLI_PROGRESS_AUTO;
	else
		return -1;
	return 0;
}

static int progress_on(void)
{
	return progress.mode == TMATCH_CLI_PROGRESS_ALWAYS ||
	       (progress.mode == TMATCH_CLI_PROGRESS_AUTO && isatty(STDERR_FILENO));
}

void tmatch_cli_progress(const char *fmt, ...)
{
	char line[sizeof(progress.what)];
	int tty = isatty(STDERR_FILENO);
	double now;
	va_list ap;

	if (!progress_on())
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	now = mono_now();
	/* a terminal's line is rewritten at most 5 times a second; a pipe or
	   file (--progress=always) gets one line a second */
	if (progress.printed && now - progress.last < (tty ? 0.2 : 1.0) &&
	    !strncmp(line, progress.what, strcspn(line, "0123456789")))
		return;
	progress.printed = 1;
	snprintf(progress.what, sizeof(progress.what), "%s", line);
	progress.last = now;
	if (tty)
		fprintf(stderr, "\r\033[Ktreematch: %s", line);
	else
		fprintf(stderr, "treematch: %s\n", line);
	fflush(stderr);
	progress.shown = tty;
}

void tmatch_cli_progress_done(void)
{
	if (progress.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	progress.shown = 0;
}

void tmatch_cli_error(const char *fmt, ...)
{
	va_list ap;

	tmatch_cli_progress_done();
	fputs("treematch: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tmatch_cli_log(void *arg, int level, const char *msg)
{
	int verbose = arg ? *(int *)arg : 1;

	if (level == TMATCH_LOG_PROGRESS) {
		tmatch_cli_progress("%s", msg);
		return;
	}
	tmatch_cli_progress_done();
	/* arg: NULL or a verbosity: 1 errors and warnings, 2 and information,
	   3 and the mappers' debugging lines */
	if (level <= TMATCH_LOG_WARNING || (level == TMATCH_LOG_INFO && verbose > 1) || verbose > 2)
		fprintf(stderr, "treematch: %s: %s\n",
		        level == TMATCH_LOG_ERROR     ? "error"
		        : level == TMATCH_LOG_WARNING ? "warning"
		                                      : "info",
		        msg);
}

int tmatch_cli_number(const char *s, uint64_t max, uint64_t *out)
{
	return s ? tmatch_parse_u64(s, strlen(s), max, out) : -1;
}

int tmatch_cli_seed(const char *s, uint64_t *seed)
{
	if (tmatch_cli_number(s, UINT64_MAX, seed) == 0)
		return 0;
	tmatch_cli_error("--seed '%s': expected a non-negative integer", s ? s : "");
	return -1;
}

void tmatch_cli_usage_hint(const char *command)
{
	tmatch_cli_error("'treematch %s --help' lists the options", command);
}

void tmatch_cli_renamed(const char *command, const char *old, const char *now)
{
	tmatch_cli_error("%s: %s is now %s (treematch(1), the option grammar); the old name still "
	                 "works for a while",
	                 command, old, now);
}

void tmatch_cli_options(const char *shortopts, const struct option *longopts)
{
	const char *want = getenv("TREEMATCH_OPTION_TABLE");
	static const char *const kind[] = {"none", "required", "optional"};

	if (!want || strcmp(want, "1") != 0)
		return;
	for (const struct option *o = longopts; o && o->name; o++) {
		const char *s = o->val > 0 && o->val < 128 && o->val != ':' && shortopts
		                    ? strchr(shortopts, o->val)
		                    : NULL;

		printf("--%s\t%s%c\t%s\t%s\n", o->name, s ? "-" : "", s ? o->val : '-',
		       kind[o->has_arg >= 0 && o->has_arg <= 2 ? o->has_arg : 0],
		       o->val >= TMATCH_CLI_OLD_NAME ? "old" : "");
	}
	/* a letter no long option has: a meaning the grammar cannot check */
	for (const char *c = shortopts; c && *c; c++) {
		int claimed = 0;

		if (*c == ':' || *c == '+' || *c == '-')
			continue;
		for (const struct option *o = longopts; o && o->name; o++)
			claimed |= o->val == *c;
		if (!claimed)
			printf("-%c\t-%c\tletter only\t\n", *c, *c);
	}
	fflush(stdout);
	exit(0);
}

int tmatch_cli_getopt(int argc, char *const *argv, const char *shortopts,
                      const struct option *longopts)
{
	if (optind <= 1)
		tmatch_cli_options(shortopts, longopts);
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

int tmatch_cli_bad_option(const char *command, char *const *argv, const char *shortopts,
                          const struct option *longopts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const char *s = optopt ? strchr(shortopts, optopt) : NULL;

	if (arg[0] == '-' && arg[1] == '-') {
		size_t n = strcspn(arg + 2, "=");
		const struct option *o = longopts;

		for (; o && o->name; o++)
			if (strlen(o->name) == n && !strncmp(o->name, arg + 2, n))
				break;
		if (o && o->name && o->has_arg == required_argument)
			tmatch_cli_error("%s: --%s needs a value", command, o->name);
		else if (o && o->name)
			tmatch_cli_error("%s: --%s takes no value", command, o->name);
		else
			tmatch_cli_error("%s: unknown option '%.*s'", command, (int)n + 2, arg);
	} else if (optopt && s && s[1] == ':') {
		tmatch_cli_error("%s: -%c needs a value", command, optopt);
	} else if (optopt) {
		tmatch_cli_error("%s: unknown option '-%c'", command, optopt);
	} else {
		tmatch_cli_error("%s: unknown option '%s'", command, arg);
	}
	tmatch_cli_usage_hint(command);
	return 2;
}

int tmatch_cli_report_value(const char *option, const char *value, const tmatch_error_t *err)
{
	if (err->file[0] || err->column <= 0)
		return tmatch_cli_report(err);
	tmatch_cli_error("%s '%s': column %d: %s", option, value, err->column, err->msg);
	return 1;
}

int tmatch_cli_report(const tmatch_error_t *err)
{
	char buf[1024];
	tmatch_error_t named = *err;

	/* a copy of standard input or a pipe: the name the user gave */
	snprintf(named.file, sizeof(named.file), "%s", tmatch_cli_input_given(err->file));
	tmatch_cli_error("%s", tmatch_error_format(&named, buf, sizeof(buf)));
	return 1;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: treematch <command> [options]\n\ncommands:\n");
	for (const struct subcommand *s = subcommands; s->name; s++)
		fprintf(out, "  %-10s %s\n", s->name, s->summary);
	fprintf(out, "\nRun 'treematch <command> --help' for the options of a command.\n"
	             "See treematch(1).\n");
}

static const struct subcommand *find(const char *name)
{
	for (const struct subcommand *s = subcommands; s->name; s++)
		if (!strcmp(name, s->name))
			return s;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct subcommand *s;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* "help COMMAND [SUB]": that command's help */
	if (!strcmp(argv[1], "help") && argc >= 3 && (s = find(argv[2]))) {
		char *args[4] = {argv[2], argc >= 4 ? argv[3] : "--help", "--help", NULL};

		return s->fn(argc >= 4 ? 3 : 2, args);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc >= 3) {
			tmatch_cli_error("help: unknown command '%s'", argv[2]);
			tmatch_cli_error("'treematch --help' lists the commands");
			return 2;
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("treematch %s\n", TMATCH_VERSION);
		return 0;
	}
	if ((s = find(argv[1])))
		return s->fn(argc - 1, argv + 1);
	tmatch_cli_error("unknown command '%s'", argv[1]);
	tmatch_cli_error("'treematch --help' lists the commands");
	return 2;
}
