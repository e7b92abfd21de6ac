/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_record.c - `treematch record -o FILE [--collectives] [--mpi=ABI] --
 * COMMAND...`: run an unmodified MPI program (directly or through mpirun)
 * with the recorder preloaded, then check the profile it wrote.
 *
 * The recorder for the program's MPI ABI is chosen from its DT_NEEDED
 * entries (profiler/mpiabi.h); the wrong one would crash the program. It is
 * looked for in --libdir, $TREEMATCH_RECORD_LIBDIR, next to this executable
 * (<dir>/profiler/ or <dir>/../profiler/, the build tree), then in the installed
 * TMATCH_RECORD_LIBDIR.
 */
#include "cli/cli.h"
#include "profile/profile.h"
#include "profiler/mpiabi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TMATCH_RECORD_LIBDIR
#define TMATCH_RECORD_LIBDIR "/usr/local/lib/treematch"
#endif

static void record_usage(FILE *out)
{
	fprintf(out, "usage: treematch record -o FILE [--collectives] [--mpi=openmpi|mpich]\n"
	             "                        [--libdir DIR] [-v] -- COMMAND [ARG...]\n"
	             "\n"
	             "Run COMMAND (an MPI program, or mpirun/mpiexec running one) with the\n"
	             "recorder preloaded; at MPI_Finalize rank 0 writes the communication\n"
	             "profile FILE (comm-profile v1), which is then checked.\n"
	             "\n"
	             "  -o, --output FILE  profile to write (replaced atomically)\n"
	             "  --collectives      also record collectives (logical model, coll_edges)\n"
	             "  --mpi=ABI          the program's MPI when it cannot be detected\n"
	             "                     (openmpi: libmpi.so.40, mpich: libmpich.so.12)\n"
	             "  --libdir DIR       where libtreematch-record-<abi>.so are\n"
	             "  -v, --verbose      report the detection and the write time\n"
	             "\n"
	             "Under Slurm use srun --treematch-record=FILE instead.\n");
}

/* The recorder directory, see the file comment. */
static int find_libdir(const char *opt, tmatch_mpiabi_t abi, char *lib, size_t len,
                       tmatch_error_t *err)
{
	const char *env = getenv("TREEMATCH_RECORD_LIBDIR");
	char self[PATH_MAX], dir[PATH_MAX + 16];
	ssize_t n;

	if (opt)
		return tmatch_mpiabi_recorder(opt, abi, lib, len, err);
	if (env && *env)
		return tmatch_mpiabi_recorder(env, abi, lib, len, err);
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			static const char *const rel[] = {"/profiler", "/../profiler"};
			for (int i = 0; i < 2; i++) {
				snprintf(dir, sizeof dir, "%s%s", self, rel[i]);
				if (tmatch_mpiabi_recorder(dir, abi, lib, len, NULL) == 0)
					return 0;
			}
		}
	}
	return tmatch_mpiabi_recorder(TMATCH_RECORD_LIBDIR, abi, lib, len, err);
}

/* Absolute form of `path` whose directory must exist and be writable. */
static int absolute_output(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base;

	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		base = path + (slash - dir) + 1;
		if (dir[0] == '\0')
			snprintf(dir, sizeof dir, "/");
	} else {
		snprintf(dir, sizeof dir, ".");
		base = path;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		tmatch_cli_error("%s: the output must name a file", path);
		return -1;
	}
	if (!realpath(dir, real)) {
		tmatch_cli_error("%s: directory %s: %s", path, dir, strerror(errno));
		return -1;
	}
	if (access(real, W_OK) != 0) {
		tmatch_cli_error("%s: cannot write in directory %s: %s", path, real,
		                 strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(out, len, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) >= len) {
		tmatch_cli_error("%s: path too long", path);
		return -1;
	}
	return 0;
}

int tmatch_cli_record(int argc, char **argv)
{
	const char *output = NULL, *mpi = NULL, *libdir = NULL;
	int collectives = 0, verbose = 0, i;
	char out_abs[PATH_MAX], lib[PATH_MAX], which[PATH_MAX] = "";
	tmatch_mpiabi_t abi = TMATCH_MPIABI_NONE;
	tmatch_error_t err;
	char buf[1024];

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			record_usage(stdout);
			return 0;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
			output = argv[++i];
		} else if (!strncmp(a, "--output=", 9)) {
			output = a + 9;
		} else if (!strcmp(a, "--collectives")) {
			collectives = 1;
		} else if (!strncmp(a, "--mpi=", 6)) {
			mpi = a + 6;
		} else if (!strcmp(a, "--mpi") && i + 1 < argc) {
			mpi = argv[++i];
		} else if (!strcmp(a, "--libdir") && i + 1 < argc) {
			libdir = argv[++i];
		} else if (!strncmp(a, "--libdir=", 9)) {
			libdir = a + 9;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (a[0] == '-') {
			tmatch_cli_error("record: unknown option '%s' (valid: -o/--output, "
			                 "--collectives, --mpi, --libdir, -v/--verbose, --help)",
			                 a);
			record_usage(stderr);
			return 2;
		} else {
			break; /* the command, without "--" */
		}
	}
	if (!output || i >= argc) {
		tmatch_cli_error("record: %s",
		                 !output ? "-o FILE is required" : "no command given after --");
		record_usage(stderr);
		return 2;
	}
	char **cmd = argv + i;
	for (int j = 0; cmd[j]; j++)
		if (!strncmp(cmd[j], "--treematch=", 12) || !strcmp(cmd[j], "--treematch")) {
			tmatch_cli_error(
			    "record: recording and placing in the same run are refused: record "
			    "first without --treematch, then run with --treematch=%s",
			    output);
			return 2;
		}
	if (absolute_output(output, out_abs, sizeof out_abs) != 0)
		return 1;
	if (mpi) {
		if (tmatch_mpiabi_parse(mpi, &abi, &err) != 0) {
			tmatch_cli_error("record: %s", err.msg);
			return 2;
		}
	} else if (tmatch_mpiabi_of_command(cmd, NULL, &abi, which, sizeof which, &err) != 0) {
		tmatch_cli_error("record: %s", err.msg);
		return 1;
	}
	if (find_libdir(libdir, abi, lib, sizeof lib, &err) != 0) {
		tmatch_cli_error("record: %s", err.msg);
		return 1;
	}
	if (verbose)
		fprintf(stderr, "treematch: record: %s%s%s -> %s recorder %s\n",
		        which[0] ? which : "",
		        which[0] ? " links " : "MPI given: ", tmatch_mpiabi_name(abi),
		        tmatch_mpiabi_name(abi), lib);

	/* a profile left by an earlier run must not pass for this run's */
	struct stat before, after;
	int existed = stat(out_abs, &before) == 0;

	const char *old = getenv("LD_PRELOAD");
	char *preload = malloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
	if (!preload) {
		tmatch_cli_error("record: out of memory");
		return 1;
	}
	sprintf(preload, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");

	pid_t pid = fork();
	if (pid < 0) {
		tmatch_cli_error("record: fork: %s", strerror(errno));
		free(preload);
		return 1;
	}
	if (pid == 0) {
		setenv("LD_PRELOAD", preload, 1);
		setenv("TREEMATCH_RECORD_OUTPUT", out_abs, 1);
		if (collectives)
			setenv("TREEMATCH_RECORD_COLLECTIVES", "1", 1);
		else
			unsetenv("TREEMATCH_RECORD_COLLECTIVES");
		if (verbose)
			setenv("TREEMATCH_RECORD_VERBOSE", "1", 1);
		execvp(cmd[0], cmd);
		tmatch_cli_error("record: cannot run %s: %s", cmd[0], strerror(errno));
		_exit(127);
	}
	free(preload);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			tmatch_cli_error("record: waitpid: %s", strerror(errno));
			return 1;
		}
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (rc == 127 && WIFEXITED(status))
		return 127;

	if (stat(out_abs, &after) != 0 ||
	    (existed && after.st_ino == before.st_ino && after.st_dev == before.st_dev &&
	     after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	     after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)) {
		tmatch_cli_error("record: %s was not written%s: did the program call MPI_Init and "
		                 "MPI_Finalize, and is it linked with %s?",
		                 out_abs, rc ? " (the command failed)" : "",
		                 tmatch_mpiabi_name(abi));
		return rc ? rc : 1;
	}
	tmatch_profile_t *p = tmatch_profile_load(out_abs, NULL, tmatch_cli_log, NULL, &err);
	if (!p) {
		tmatch_cli_error("record: the recorded profile does not load: %s",
		                 tmatch_error_format(&err, buf, sizeof buf));
		return 1;
	}
	fprintf(stderr, "treematch: recorded %s: %d ranks, %zu point-to-point edges", out_abs,
	        tmatch_profile_ranks(p), tmatch_profile_nedges(p, TMATCH_PROFILE_P2P));
	if (collectives)
		fprintf(stderr, ", %zu collective edges",
		        tmatch_profile_nedges(p, TMATCH_PROFILE_COLL));
	fputc('\n', stderr);
	tmatch_profile_destroy(p);
	if (rc)
		tmatch_cli_error("record: the command exited with status %d", rc);
	return rc;
}
