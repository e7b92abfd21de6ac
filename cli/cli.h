/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.h - the subcommands of the `treematch` tool. Each group lives in its
 * own file (cli/cmd_<group>.c) and is entered with argv[0] = the subcommand
 * name. Exit codes: 0 success, 1 bad input or failure, 2 usage error.
 */
#ifndef TMATCH_CLI_H
#define TMATCH_CLI_H

#include <stdint.h>
#include <stdio.h>

int tmatch_cli_map(int argc, char **argv);      /* cmd_map.c: map */
int tmatch_cli_eval(int argc, char **argv);     /* cmd_map.c: eval */
int tmatch_cli_profile(int argc, char **argv);  /* cmd_profile.c: profile convert|check|stats */
int tmatch_cli_topology(int argc, char **argv); /* cmd_topology.c: topology show */
int tmatch_cli_layout(int argc, char **argv);   /* cmd_layout.c: layout */
int tmatch_cli_draw(int argc, char **argv);     /* cmd_draw.c: draw */
int tmatch_cli_record(int argc, char **argv);   /* cmd_record.c: record */
int tmatch_cli_plan(int argc, char **argv);     /* cmd_plan.c: plan show|node|check */
int tmatch_cli_store(int argc, char **argv);    /* cmd_store.c: store list|show|find|put|... */
int tmatch_cli_predict(int argc, char **argv);  /* cmd_predict.c: predict */
int tmatch_cli_config(int argc, char **argv);   /* cmd_config.c: config check */

/* After a usage error: one line saying where the options are listed
   ("treematch: 'treematch map --help' lists the options"), not the list. */
void tmatch_cli_usage_hint(const char *command);

/*
 * getopt_long (run with opterr = 0) returned '?' or ':': say in one line
 * what is wrong with the option argv[optind - 1] (unknown, needs a value,
 * takes none) and where the options are listed. Returns 2 (usage error).
 */
struct option;
/* An option given by its old name (before the one grammar of
   treematch(1)): one line saying the new one; the option still works. */
void tmatch_cli_renamed(const char *command, const char *old, const char *now);
int tmatch_cli_bad_option(const char *command, char *const *argv, const char *shortopts,
                          const struct option *longopts);

/*
 * The one option grammar (treematch(1), OPTION GRAMMAR) is checked against
 * the commands' own option tables: with TREEMATCH_OPTION_TABLE=1 in the
 * environment, tmatch_cli_options prints the table (one line per long
 * option: name, letter, argument, "old" for an old name) and exits 0;
 * otherwise it does nothing. tmatch_cli_getopt is getopt_long (no index)
 * that does so on its first call. An old name's val is TMATCH_CLI_OLD_NAME
 * or above.
 */
#define TMATCH_CLI_OLD_NAME 0x4000
void tmatch_cli_options(const char *shortopts, const struct option *longopts);
int tmatch_cli_getopt(int argc, char *const *argv, const char *shortopts,
                      const struct option *longopts);

/*
 * A progress line on standard error for work that can take seconds: on a
 * terminal one line rewritten in place (cleared by the next message or by
 * tmatch_cli_progress_done), elsewhere nothing unless --progress asks
 * (then a line at most every second). The library's TMATCH_LOG_PROGRESS
 * messages come here through tmatch_cli_log.
 */
enum {
	TMATCH_CLI_PROGRESS_AUTO = 0,
	TMATCH_CLI_PROGRESS_ALWAYS = 1,
	TMATCH_CLI_PROGRESS_NEVER = 2
};
/* --progress[=WHEN]: always (also NULL, the bare option), never or auto
   (a terminal only, the default). -1 for anything else. */
int tmatch_cli_progress_option(const char *value);
void tmatch_cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tmatch_cli_progress_done(void);

/*
 * cli/files.c: `-` and pipes where a file is taken or written.
 * input: `path` itself when it is a regular file (or missing: the loader
 * says so); for `-` (standard input) or a pipe (`<(...)`, a FIFO), the name
 * of a temporary regular copy, named with the extension its first bytes
 * call for (.yml, .mtx, .mat, .compiled) and removed when the command ends.
 * NULL after saying why (`what` names the option in the message).
 * output: standard output for `-` (or NULL), else the file opened with
 * `mode` (NULL = "w"); NULL after saying why. output_close: flush stdout or
 * close the file; -1 after saying a write failed.
 */
const char *tmatch_cli_input(const char *path, const char *what);
/* The name the user gave for a copy tmatch_cli_input made (`-` is
   "(standard input)"); any other path as it is. Messages name that. */
const char *tmatch_cli_input_given(const char *path);
FILE *tmatch_cli_output(const char *path, const char *mode);
int tmatch_cli_output_close(FILE *f, const char *path);

/* Print "treematch: <msg>" to stderr. */
void tmatch_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The library's log callback for every subcommand: "treematch: warning: msg"
 * (errors and warnings; info and debug too when *(int *)arg > 1).
 */
void tmatch_cli_log(void *arg, int level, const char *msg);

/*
 * The value of a numeric option: decimal digits only (no sign, no blank),
 * at most `max` (tmatch_parse_u64, as the plugin's settings). 0 with *out,
 * or -1 (the caller says what the option wants).
 */
int tmatch_cli_number(const char *s, uint64_t max, uint64_t *out);

/* --seed N of every command (map, layout, draw): 0 with *seed, or -1 after
   saying what --seed wants. */
int tmatch_cli_seed(const char *s, uint64_t *seed);

/* Print a library error as "treematch: file:line:column: msg"; returns 1. */
struct tmatch_error;
int tmatch_cli_report(const struct tmatch_error *err);

/* The same for an error in an option's value (no file): "treematch:
   --topology 'tleaf 2 x': column 9: msg", so that the column has its text. */
int tmatch_cli_report_value(const char *option, const char *value, const struct tmatch_error *err);

#endif /* TMATCH_CLI_H */
