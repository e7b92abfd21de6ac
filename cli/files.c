/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * files.c - `-` and pipes wherever the CLI takes or writes a file. The
 * library opens regular files only (a FIFO must not block the plugin), by
 * name, and tells formats by their extension: an input given as `-`
 * (standard input) or as a pipe (`<(...)`, a FIFO) is copied once into a
 * temporary regular file named with the extension its first bytes call for,
 * removed when the command ends; `-` as an output is standard output.
 */
#include "cli/cli.h"
#include "profile/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most a pipe may hand over: more than any profile a loader takes
   (256 MiB by default), less than a full disk. */
#define MAX_SPOOL   ((off_t)4 << 30)
#define MAX_SPOOLED 8

static char *spooled[MAX_SPOOLED];
static const char *given[MAX_SPOOLED]; /* as the user wrote it (argv) */
static int nspooled;

static void remove_spooled(void)
{
	for (int i = 0; i < nspooled; i++) {
		unlink(spooled[i]);
		free(spooled[i]);
	}
	nspooled = 0;
}

/* The extension a profile or matrix starting with head[0..n) is read by. */
static const char *extension_of(const unsigned char *head, size_t n)
{
	size_t i = 0;

	if (tmatch_profile_is_compiled(head, n))
		return ".compiled";
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
		i++;
	if (n - i >= 14 && !memcmp(head + i, "%%MatrixMarket", 14))
		return ".mtx";
	if (i < n && (head[i] == '.' || (head[i] >= '0' && head[i] <= '9')))
		return ".mat"; /* N lines of N numbers */
	return ".yml";
}

const char *tmatch_cli_input(const char *path, const char *what)
{
	unsigned char buf[65536];
	const char *tmp = getenv("TMPDIR");
	char name[4096];
	struct stat st;
	ssize_t got = 0;
	size_t head = 0;
	off_t total = 0;
	int in, out = -1;

	if (!path)
		return NULL;
	if (strcmp(path, "-") != 0 && (stat(path, &st) != 0 || S_ISREG(st.st_mode)))
		return path; /* a file, or a name the loader will say is missing */
	if (nspooled == MAX_SPOOLED) {
		tmatch_cli_error("%s: too many inputs from pipes", what);
		return NULL;
	}
	in = strcmp(path, "-") != 0 ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (in < 0) {
		tmatch_cli_error("%s %s: %s", what, path, strerror(errno));
		return NULL;
	}
	/* the first bytes say the format, hence the name */
	while (head < sizeof(buf) && (got = read(in, buf + head, sizeof(buf) - head)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		head += (size_t)got;
	}
	if (got >= 0) {
		snprintf(name, sizeof(name), "%s/treematch-input-XXXXXX%s",
		         tmp && *tmp ? tmp : "/tmp", extension_of(buf, head));
		out = mkstemps(name, (int)strlen(extension_of(buf, head)));
	}
	while (out >= 0 && got >= 0) {
		if (head && write(out, buf, head) != (ssize_t)head)
			break;
		total += (off_t)head;
		if (total > MAX_SPOOL || (got = read(in, buf, sizeof(buf))) == 0) {
			got = total > MAX_SPOOL ? -2 : 0;
			break;
		}
		if (got < 0 && errno == EINTR)
			got = head = 0;
		else
			head = got > 0 ? (size_t)got : 0;
	}
	if (in != STDIN_FILENO)
		close(in);
	if (out < 0 || got != 0 || close(out) != 0) {
		int e = errno;

		if (out >= 0) {
			close(out);
			unlink(name);
		}
		if (got == -2)
			tmatch_cli_error("%s %s: more than %lld GiB: give a file", what,
			                 strcmp(path, "-") != 0 ? path : "(standard input)",
			                 (long long)(MAX_SPOOL >> 30));
		else
			tmatch_cli_error("%s %s: cannot copy it to %s: %s", what,
			                 strcmp(path, "-") != 0 ? path : "(standard input)",
			                 tmp && *tmp ? tmp : "/tmp", strerror(e));
		return NULL;
	}
	given[nspooled] = path;
	if (!(spooled[nspooled] = strdup(name))) {
		unlink(name);
		tmatch_cli_error("out of memory");
		return NULL;
	}
	if (nspooled++ == 0)
		atexit(remove_spooled);
	return spooled[nspooled - 1];
}

const char *tmatch_cli_input_given(const char *path)
{
	for (int i = 0; path && i < nspooled; i++)
		if (!strcmp(path, spooled[i]))
			return strcmp(given[i], "-") != 0 ? given[i] : "(standard input)";
	return path;
}

FILE *tmatch_cli_output(const char *path, const char *mode)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	if (!(f = fopen(path, mode ? mode : "w")))
		tmatch_cli_error("%s: cannot write: %s", path, strerror(errno));
	return f;
}

int tmatch_cli_output_close(FILE *f, const char *path)
{
	int bad;

	if (!f)
		return -1;
	bad = f == stdout ? fflush(f) != 0 || ferror(f) : fclose(f) != 0;
	if (bad)
		tmatch_cli_error("%s: write error",
		                 path && strcmp(path, "-") != 0 ? path : "stdout");
	return bad ? -1 : 0;
}
