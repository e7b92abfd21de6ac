/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli_helpers.h - for the unit tests that run the `treematch` CLI `make`
 * built in TMATCH_BUILDDIR: find it, run a program and capture what it
 * prints. Header-only (static inline) because every test is its own binary.
 */
#ifndef TMATCH_TESTS_CLI_HELPERS_H
#define TMATCH_TESTS_CLI_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The CLI `make` built: $TMATCH_CLI if set, else the build directory's. */
static inline const char *cli_path(void)
{
	static const char *const candidates[] = {TMATCH_BUILDDIR "/bin/treematch",
	                                         TMATCH_BUILDDIR "/treematch"};
	const char *env = getenv("TMATCH_CLI");
	struct stat st;

	if (env && *env)
		return env;
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (stat(candidates[i], &st) == 0 && S_ISREG(st.st_mode) &&
		    access(candidates[i], X_OK) == 0)
			return candidates[i];
	cr_assert_fail("the treematch CLI is not built in %s (run make first)", TMATCH_BUILDDIR);
	return NULL;
}

/* Read fd to its end into buf (NUL-terminated, truncated to len - 1). */
static inline void cli_read_all(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t got;

	while ((got = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)got;
	buf[n] = '\0';
	close(fd);
}

/*
 * Run argv (argv[0] is the program) with PATH set to `path` (NULL: inherit).
 * Its stdout goes into `out` and its stderr into `err`, or into `out` as well
 * when err is NULL; each buffer holds `len` bytes, NUL-terminated, truncated.
 * Returns the exit status, or -1 if the program did not exit normally.
 */
static inline int cli_run(char *const *argv, const char *path, char *out, char *err, size_t len)
{
	int po[2], pe[2] = {-1, -1}, status;
	pid_t pid;

	cr_assert_eq(pipe(po), 0);
	if (err)
		cr_assert_eq(pipe(pe), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(err ? pe[1] : po[1], 2);
		close(po[0]);
		close(po[1]);
		if (err) {
			close(pe[0]);
			close(pe[1]);
		}
		if (path)
			setenv("PATH", path, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	if (err)
		close(pe[1]);
	/* stdout first: stderr blocks the child only above a pipe's 64 KiB */
	cli_read_all(po[0], out, len);
	if (err)
		cli_read_all(pe[0], err, len);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A --json document checked by jq (tests/install-deps.sh installs it): the
 * document must parse, and `filter` (jq -r) prints into `out` (len bytes).
 * Returns jq's exit status: with -e, 1 when the filter's result is false or
 * null.
 */
static inline int cli_jq(const char *json, const char *filter, char *out, size_t len)
{
	char path[] = "/tmp/tmatch-jq-XXXXXX";
	char *argv[] = {"/usr/bin/jq", "-e", "-r", (char *)filter, path, NULL};
	int fd = mkstemp(path), rc;
	size_t n = strlen(json);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, json, n), (ssize_t)n);
	close(fd);
	cr_assert_eq(access(argv[0], X_OK), 0, "jq is not installed (sh tests/install-deps.sh)");
	rc = cli_run(argv, NULL, out, NULL, len);
	unlink(path);
	return rc;
}

#endif
