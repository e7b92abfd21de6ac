/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_record.c - `treematch record -o FILE [--collectives=MODE] [--mpi=ABI]
 * -- COMMAND...`: run an unmodified MPI program (directly or through mpirun)
 * with the recorder preloaded, then check the profile it wrote.
 *
 * The recorder for the program's MPI ABI is chosen from its DT_NEEDED
 * entries (profiler/mpiabi.h); the wrong one would crash the program. It is
 * looked for in --libdir, $TREEMATCH_RECORD_LIBDIR, next to this executable
 * (<dir>/profiler/ or <dir>/../profiler/, the build tree), then in the installed
 * directory (profiler/launch.h, shared with srun --treematch-record).
 */
#include "cli/cli.h"
#include "profile/profile.h"
#include "profiler/launch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void record_usage(FILE *out)
{
	fprintf(out,
	        "usage: treematch record -o FILE [--collectives=MODE] [--mpi=openmpi|mpich]\n"
	        "                        [--trace DIR] [--libdir DIR] [-v] -- COMMAND [ARG...]\n"
	        "\n"
	        "Run COMMAND (an MPI program, or mpirun/mpiexec running one) with the\n"
	        "recorder preloaded; at MPI_Finalize rank 0 writes the communication\n"
	        "profile FILE (comm-profile, treematch-profile(5)), which is then checked.\n"
	        "\n"
	        "  -o, --output FILE  profile to write (replaced atomically)\n"
	        "  --collectives=MODE what coll_edges hold: wire (the default: the messages\n"
	        "                     collectives send, placed by), logical (a logical model,\n"
	        "                     placed by only with coll=on) or off (none)\n"
	        "  --mpi=ABI          the program's MPI when it cannot be detected\n"
	        "                     (openmpi: libmpi.so.40, mpich: libmpich.so.12)\n"
	        "  --trace DIR        also write the run's time-independent trace there\n"
	        "                     (DIR/trace.txt, and the profile as DIR/profile.yml,\n"
	        "                     for treematch predict)\n"
	        "  --libdir DIR       where libtreematch-record-<abi>.so are\n"
	        "  -v, --verbose      report the detection and the write time\n"
	        "  --progress[=WHEN]  a progress line on stderr while the profile is checked:\n"
	        "                     always, never or auto (when stderr is a terminal)\n"
	        "\n"
	        "Under Slurm use srun --treematch-record=FILE instead.\n");
}

/* The recorder, see the file comment. */
static int find_recorder(const char *opt, tmatch_mpiabi_t abi, char *lib, size_t len,
                         tmatch_error_t *err)
{
	const char *env = getenv("TREEMATCH_RECORD_LIBDIR");
	char self[PATH_MAX], dirs[2][PATH_MAX + 16];
	const char *extra[2] = {NULL, NULL};
	int nextra = 0;
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(dirs[0], sizeof dirs[0], "%s/profiler", self);
			snprintf(dirs[1], sizeof dirs[1], "%s/../profiler", self);
			extra[0] = dirs[0];
			extra[1] = dirs[1];
			nextra = 2;
		}
	}
	return tmatch_record_locate(opt ? opt : env, extra, nextra, abi, lib, len, err);
}

/* Run cmd with the recorder, then check what it wrote. Returns the exit status. */
static int record(const char *out_abs, char **cmd, const char *mpi, const char *libdir,
                  const char *trace, tmatch_record_coll_t collectives, int verbose)
{
	char lib[PATH_MAX], which[PATH_MAX] = "", buf[1024];
	tmatch_mpiabi_t abi = TMATCH_MPIABI_NONE;
	tmatch_record_env_t env[TMATCH_RECORD_ENV_MAX];
	tmatch_error_t err;
	struct stat before, after;
	int nenv, existed, status = 0, rc;
	tmatch_profile_t *p;
	pid_t pid;

	if (mpi) {
		if (tmatch_mpiabi_parse(mpi, &abi, &err) != 0) {
			tmatch_cli_error("record: %s", err.msg);
			return 2;
		}
	} else if (tmatch_mpiabi_of_command(cmd, NULL, &abi, which, sizeof which, &err) != 0) {
		tmatch_cli_error("record: %s", err.msg);
		return 1;
	}
	if (find_recorder(libdir, abi, lib, sizeof lib, &err) != 0) {
		tmatch_cli_error("record: %s", err.msg);
		return 1;
	}
	if (verbose)
		fprintf(stderr, "treematch: record: %s%s%s -> %s recorder %s\n",
		        which[0] ? which : "",
		        which[0] ? " links " : "MPI given: ", tmatch_mpiabi_name(abi),
		        tmatch_mpiabi_name(abi), lib);

	/* a profile left by an earlier run must not pass for this run's */
	existed = stat(out_abs, &before) == 0;
	nenv = tmatch_record_env(lib, getenv("LD_PRELOAD"), out_abs, collectives, verbose, env);
	if (nenv < 0) {
		tmatch_cli_error("record: out of memory");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		tmatch_cli_error("record: fork: %s", strerror(errno));
		tmatch_record_env_free(env, nenv);
		return 1;
	}
	if (pid == 0) {
		for (int k = 0; k < nenv; k++)
			if (env[k].value)
				setenv(env[k].name, env[k].value, 1);
			else
				unsetenv(env[k].name);
		if (trace)
			setenv("TREEMATCH_RECORD_TRACE", trace, 1);
		else
			unsetenv("TREEMATCH_RECORD_TRACE");
		execvp(cmd[0], cmd);
		tmatch_cli_error("record: cannot run %s: %s", cmd[0], strerror(errno));
		_exit(127);
	}
	tmatch_record_env_free(env, nenv);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			tmatch_cli_error("record: waitpid: %s", strerror(errno));
			return 1;
		}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
	/* the program's own output is done: checking a large profile takes a while */
	tmatch_cli_progress("record: checking %s (%lld MB)", out_abs,
	                    (long long)(after.st_size >> 20));
	p = tmatch_profile_load(out_abs, NULL, tmatch_cli_log, NULL, &err);
	tmatch_cli_progress_done();
	if (!p) {
		tmatch_cli_error("record: the recorded profile does not load: %s",
		                 tmatch_error_format(&err, buf, sizeof buf));
		return 1;
	}
	fprintf(stderr, "treematch: recorded %s: %d ranks, %zu point-to-point edges", out_abs,
	        tmatch_profile_ranks(p), tmatch_profile_nedges(p, TMATCH_PROFILE_P2P));
	if (tmatch_profile_collectives(p) != TMATCH_COLL_UNSTATED)
		fprintf(stderr, ", %zu collective edges (%s)",
		        tmatch_profile_nedges(p, TMATCH_PROFILE_COLL),
		        tmatch_profile_coll_name(tmatch_profile_collectives(p)));
	fputc('\n', stderr);
	tmatch_profile_destroy(p);
	if (trace) {
		char index[PATH_MAX + 32], why[PATH_MAX + 32];

		snprintf(index, sizeof index, "%s/trace.txt", trace);
		snprintf(why, sizeof why, "%s/NOT-REPLAYABLE", trace);
		if (access(why, F_OK) == 0)
			tmatch_cli_error("record: the trace cannot be replayed: %s says why", why);
		else if (access(index, F_OK) == 0)
			fprintf(stderr, "treematch: traced %s (treematch predict --trace %s)\n",
			        trace, index);
		else
			tmatch_cli_error("record: no trace was written in %s", trace);
	}
	if (rc)
		tmatch_cli_error("record: the command exited with status %d", rc);
	return rc;
}

int tmatch_cli_record(int argc, char **argv)
{
	const char *output = NULL, *mpi = NULL, *libdir = NULL, *trace = NULL;
	tmatch_record_coll_t collectives = TMATCH_RECORD_COLL_WIRE;
	int verbose = 0, i, rc;
	char *out_abs = NULL, trace_abs[PATH_MAX];
	tmatch_error_t err;

	/* the options below, as a table for the grammar's check (treematch(1)) */
	static const struct option table[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"collectives", optional_argument, NULL, 256},
	    {"mpi", required_argument, NULL, 257},
	    {"trace", required_argument, NULL, 258},
	    {"libdir", required_argument, NULL, 259},
	    {"verbose", no_argument, NULL, 'v'},
	    {"progress", optional_argument, NULL, 260},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};

	tmatch_cli_options("o:vh", table);
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
		} else if (!strcmp(a, "--collectives") || !strncmp(a, "--collectives=", 14)) {
			/* bare: the default, wire (kept for the scripts that asked for them) */
			if (tmatch_record_coll_parse(a[13] ? a + 14 : NULL, &collectives, &err) !=
			    0) {
				tmatch_cli_error("record: --%s", err.msg);
				return 2;
			}
		} else if (!strncmp(a, "--mpi=", 6)) {
			mpi = a + 6;
		} else if (!strcmp(a, "--mpi") && i + 1 < argc) {
			mpi = argv[++i];
		} else if (!strcmp(a, "--trace") && i + 1 < argc) {
			trace = argv[++i];
		} else if (!strncmp(a, "--trace=", 8)) {
			trace = a + 8;
		} else if (!strcmp(a, "--libdir") && i + 1 < argc) {
			libdir = argv[++i];
		} else if (!strncmp(a, "--libdir=", 9)) {
			libdir = a + 9;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (!strcmp(a, "--progress") || !strncmp(a, "--progress=", 11)) {
			if (tmatch_cli_progress_option(a[10] ? a + 11 : NULL) < 0) {
				tmatch_cli_error("record: --progress wants always, never or auto");
				return 2;
			}
		} else if (a[0] == '-') {
			tmatch_cli_error("record: unknown option '%s'", a);
			tmatch_cli_usage_hint("record");
			return 2;
		} else {
			break; /* the command, without "--" */
		}
	}
	if (!output || i >= argc) {
		tmatch_cli_error("record: %s",
		                 !output ? "-o FILE is required" : "no command given after --");
		tmatch_cli_usage_hint("record");
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
	if (!(out_abs = tmatch_record_output_path(output, &err))) {
		tmatch_cli_error("%s: %s", output, err.msg);
		return 1;
	}
	if (trace) {
		/* every rank writes there: made now, absolute for ranks elsewhere */
		if ((mkdir(trace, 0755) < 0 && errno != EEXIST) || !realpath(trace, trace_abs)) {
			tmatch_cli_error("record: --trace %s: %s", trace, strerror(errno));
			free(out_abs);
			return 1;
		}
		/* what an earlier run left must not pass for this run's */
		for (int k = 0; k < 2; k++) {
			char old[PATH_MAX + 32];

			snprintf(old, sizeof old, "%s/%s", trace_abs,
			         k ? "NOT-REPLAYABLE" : "trace.txt");
			unlink(old);
		}
		trace = trace_abs;
	}
	rc = record(out_abs, cmd, mpi, libdir, trace, collectives, verbose);
	free(out_abs);
	return rc;
}
