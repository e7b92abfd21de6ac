/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_predict.c - `treematch predict`: the run time of a recorded run under
 * each placement, from SimGrid's replay of its time-independent trace on a
 * platform made from the machine tree (placement/predict.c).
 *
 * The placements are made from the profile recorded with the trace
 * (DIR/profile.yml, or --profile), through the plugin's own profile-to-
 * matrix function (tmatch_place_comm, its defaults): `auto` here is what
 * srun --treematch=PROFILE places on that machine, and what --save keeps
 * for verbose=1. trace:NAME maps the trace's own send matrix instead (all
 * it sends, for comparison), as does every mapper when there is no profile.
 *
 * SimGrid is optional: found at build time (smpirun and smpireplaymain);
 * without it the command says how to enable it. The replays run one after
 * the other in a temporary directory (--keep DIR keeps them).
 */
#include "cli/cli.h"
#include "placement/inputs.h"
#include "placement/matrix.h"
#include "placement/predict.h"
#include "treematch/internal.h"
#include "treematch/treematch.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_MAPPINGS 16

static const char usage_text[] =
    "usage: treematch predict --trace INDEX --topology SPEC [--profile FILE]\n"
    "                         [--machine FILE] [--mapping M]... [--keep DIR]\n"
    "                         [--save FILE]\n"
    "\n"
    "Replay a recorded run's time-independent trace on a simulated machine (SimGrid)\n"
    "under each placement, and print the predicted time of each and its ratio to\n"
    "packed. The mappers place by the profile as the plugin does (its matrix).\n"
    "\n"
    "      --trace INDEX     the trace's index file (one rank's file per line)\n"
    "  -t, --topology SPEC   the machine tree: tleaf, synthetic:, xml: or cluster:\n"
    "  -p, --profile FILE    the profile the mappers place by, as the plugin places\n"
    "                        by it (default: profile.yml beside INDEX, which treematch\n"
    "                        record writes with a trace; without one, the trace's matrix)\n"
    "      --machine FILE    link bandwidths and latencies per level, core speed\n"
    "                        (\"node = 12.5GBps 1us\", \"speed = 1Gf\"; treematch(1))\n"
    "      --mapping M       packed, rr, auto or another mapper, trace:MAPPER (that\n"
    "                        mapper on the trace's own send matrix), or a mapping\n"
    "                        FILE; repeat it (default: packed, rr and auto)\n"
    "      --keep DIR        keep the platform, hostfiles and SimGrid's output\n"
    "      --save FILE       keep the predicted times in FILE; as PROFILE.predict\n"
    "                        beside a profile, the plugin's verbose=1 prints the\n"
    "                        predicted gain when a job uses that profile\n"
    "      --progress[=WHEN] a progress line on stderr: always, never or auto (when\n"
    "                        stderr is a terminal, the default)\n"
    "  -h, --help            this help\n";

#if defined(TMATCH_SMPIRUN) && defined(TMATCH_SMPI_REPLAY)
/* The time SimGrid printed ("Simulation time 0.0123"), or -1. */
static double simulated_time(const char *log)
{
	tmatch__lines_t in;
	double t = -1;
	const char *line;

	if (tmatch__lines_open(&in, log, 1 << 20, NULL, NULL) < 0)
		return -1;
	while ((line = tmatch__lines_next(&in))) {
		const char *p = strstr(line, "Simulation time ");
		if (p)
			t = strtod(p + 16, NULL);
	}
	tmatch__lines_close(&in);
	return t;
}

/* The last line of a file, for a message (SimGrid's own output). */
static void last_line(const char *path, char *buf, size_t len)
{
	tmatch__lines_t in;
	const char *line;

	snprintf(buf, len, "no output");
	if (tmatch__lines_open(&in, path, 1 << 20, NULL, NULL) < 0)
		return;
	while ((line = tmatch__lines_next(&in)))
		if (line[0])
			snprintf(buf, len, "%s", line);
	tmatch__lines_close(&in);
}

/* smpirun -replay in dir; -1 with a message when it failed. */
static double replay(const char *dir, const char *name, int n)
{
	char np[16], platform[PATH_MAX], hosts[PATH_MAX], log[PATH_MAX], index[PATH_MAX], why[512];
	pid_t pid;
	int status;
	double t;

	snprintf(np, sizeof(np), "%d", n);
	snprintf(platform, sizeof(platform), "%s/platform.xml", dir);
	snprintf(hosts, sizeof(hosts), "%s/%s.hosts", dir, name);
	snprintf(log, sizeof(log), "%s/%s.log", dir, name);
	snprintf(index, sizeof(index), "%s/trace.txt", dir);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execl(TMATCH_SMPIRUN, "smpirun", "-np", np, "-platform", platform, "-hostfile",
		      hosts, "-no-privatize", "--cfg=smpi/simulate-computation:yes", "-replay",
		      index, TMATCH_SMPI_REPLAY, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		tmatch_cli_error("predict: cannot run SimGrid: %s", strerror(errno));
		return -1;
	}
	t = simulated_time(log);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || t < 0) {
		last_line(log, why, sizeof(why));
		tmatch_cli_error("predict: SimGrid's replay of %s failed (%s): %s; its output is "
		                 "kept in %s",
		                 name, WIFEXITED(status) ? "exit status" : "killed", why, log);
		return -2;
	}
	return t;
}

struct run {
	const char *name;
	int *leaf;
	double time;
};

/* Leaves of each mapping: a mapper's name (on the profile's matrix, or
   on the trace's with trace:), or a mapping file. */
static int place(const tmatch_place_trace_t *tr, const tmatch_comm_t *profile,
                 const tmatch_topo_t *topo, struct run *r)
{
	const tmatch_comm_t *comm = profile ? profile : tr->comm;
	const char *name = r->name;
	tmatch_map_opts_t opts;
	tmatch_error_t err;

	tmatch_error_clear(&err);
	if (!(r->leaf = calloc((size_t)tr->nranks, sizeof(*r->leaf)))) {
		tmatch_cli_error("out of memory");
		return 1;
	}
	if (!strncmp(name, "trace:", 6)) {
		comm = tr->comm;
		name += 6;
		if (tmatch_map_check_name(name, &err) < 0)
			return tmatch_cli_report(&err);
	}
	if (tmatch_map_check_name(name, NULL) == 0) {
		/* the plugin's options: its default seed, no search budget */
		tmatch_map_opts_init(&opts);
		opts.mapper = name;
		if (tmatch_map_compute(comm, topo, &opts, r->leaf, &err) < 0)
			return tmatch_cli_report(&err);
		return 0;
	}
	if (strchr(name, '/') || access(name, F_OK) == 0) {
		if (tmatch_map_load(name, topo, tr->nranks, r->leaf, &err) < 0)
			return tmatch_cli_report(&err);
		return 0;
	}
	tmatch_cli_error("predict: --mapping %s is neither a mapper (packed, rr, auto, ...), "
	                 "trace:MAPPER nor a file",
	                 name);
	return 2;
}

/*
 * The profile the placements come from: --profile, else profile.yml beside
 * the trace's index when there is one (*path NULL: none, the trace's
 * matrix). Its matrix as the plugin makes it, and what it holds, in *what.
 */
static int profile_matrix(const char *trace, const char **path, char *found, size_t len, int nranks,
                          tmatch_comm_t **comm, char *what, size_t wlen)
{
	const char *slash = strrchr(trace, '/');
	tmatch_profile_t *p;
	tmatch_error_t err;
	int rc = 1, coll;

	*comm = NULL;
	if (!*path) {
		snprintf(found, len, "%.*sprofile.yml", slash ? (int)(slash - trace + 1) : 0,
		         trace);
		if (access(found, F_OK) != 0) {
			snprintf(what, wlen, "the trace's send matrix (no profile beside it)");
			return 0;
		}
		*path = found;
	}
	tmatch_error_clear(&err);
	if (!(p = tmatch_profile_load(*path, NULL, tmatch_cli_log, NULL, &err)))
		return tmatch_cli_report(&err);
	if (tmatch_profile_ranks(p) != nranks) {
		tmatch_cli_error(
		    "predict: %s has %d ranks, the trace %d: give the profile recorded "
		    "with this trace (--profile)",
		    tmatch_cli_input_given(*path), tmatch_profile_ranks(p), nranks);
		goto out;
	}
	if (!(*comm = tmatch_place_comm(p, -1, -1, &err))) {
		rc = tmatch_cli_report(&err);
		goto out;
	}
	coll = (tmatch_profile_sets(p, tmatch_place_comm_sets(-1)) & TMATCH_PROFILE_COLL) != 0;
	snprintf(what, wlen, "%s as the plugin places by it (%s, point-to-point%s)",
	         tmatch_cli_input_given(*path),
	         tmatch_profile_metric_name(tmatch_profile_placement_metric(p)),
	         coll ? " and collectives" : "");
	rc = 0;
out:
	tmatch_profile_destroy(p);
	return rc;
}

/* --save: the predicted times, for the plugin's verbose mode. */
static int save_prediction(const char *path, const char *trace, const char *profile,
                           const char *topology, const char *machine, const struct run *runs,
                           int nruns)
{
	const char *names[MAX_MAPPINGS];
	double seconds[MAX_MAPPINGS];
	char about[3 * PATH_MAX];
	FILE *f = fopen(path, "w");

	for (int i = 0; i < nruns; i++) {
		names[i] = runs[i].name;
		seconds[i] = runs[i].time;
	}
	snprintf(about, sizeof(about), "trace %s, profile %s, topology %s, machine %s", trace,
	         profile ? tmatch_cli_input_given(profile) : "(none: the trace's matrix)", topology,
	         machine ? machine : "(defaults)");
	if (!f) {
		tmatch_cli_error("predict: cannot write %s: %s", path, strerror(errno));
		return 1;
	}
	if ((tmatch_place_prediction_write(f, about, names, seconds, nruns) < 0) |
	    (fclose(f) != 0)) {
		tmatch_cli_error("predict: cannot write %s", path);
		return 1;
	}
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}
#endif

int tmatch_cli_predict(int argc, char **argv)
{
	enum { O_TRACE = 256, O_MACHINE, O_MAPPING, O_KEEP, O_SAVE };
	static const struct option longopts[] = {
	    {"trace", required_argument, NULL, O_TRACE},
	    {"topology", required_argument, NULL, 't'},
	    {"machine", required_argument, NULL, O_MACHINE},
	    {"mapping", required_argument, NULL, O_MAPPING},
	    {"keep", required_argument, NULL, O_KEEP},
	    {"save", required_argument, NULL, O_SAVE},
	    {"profile", required_argument, NULL, 'p'},
	    {"progress", optional_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *trace = NULL, *topology = NULL, *machine = NULL, *keep = NULL, *save = NULL;
	const char *profile = NULL;
	const char *names[MAX_MAPPINGS];
	int nruns = 0, c;

	optind = 1;
	opterr = 0;
	while ((c = tmatch_cli_getopt(argc, argv, "t:p:h", longopts)) != -1) {
		switch (c) {
		case 'p':
			profile = optarg;
			break;
		case O_TRACE:
			trace = optarg;
			break;
		case 't':
			topology = optarg;
			break;
		case O_MACHINE:
			machine = optarg;
			break;
		case O_MAPPING:
			if (nruns == MAX_MAPPINGS) {
				tmatch_cli_error("predict: at most %d --mapping", MAX_MAPPINGS);
				return 2;
			}
			names[nruns++] = optarg;
			break;
		case O_KEEP:
			keep = optarg;
			break;
		case O_SAVE:
			save = optarg;
			break;
		case 'P':
			if (tmatch_cli_progress_option(optarg) < 0) {
				tmatch_cli_error("predict: --progress wants always, never or auto");
				return 2;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return tmatch_cli_bad_option("predict", argv, "t:p:h", longopts);
		}
	}
	if (optind != argc) {
		tmatch_cli_error("predict: unexpected argument '%s'", argv[optind]);
		tmatch_cli_usage_hint("predict");
		return 2;
	}
	if (!trace || !topology) {
		tmatch_cli_error("predict: --trace and --topology are required");
		tmatch_cli_usage_hint("predict");
		return 2;
	}
#if !defined(TMATCH_SMPIRUN) || !defined(TMATCH_SMPI_REPLAY)
	(void)machine;
	(void)keep;
	(void)save;
	(void)names;
	(void)profile;
	tmatch_cli_error("predict: this treematch was built without SimGrid: install it "
	                 "(Debian: apt-get install libsimgrid-dev) and build again");
	return 1;
#else
	struct run runs[MAX_MAPPINGS];
	tmatch_place_trace_t *tr = NULL;
	tmatch_topo_t *topo = NULL;
	tmatch_comm_t *pcomm = NULL;
	tmatch_place_machine_t m;
	tmatch_error_t err;
	char dir[PATH_MAX] = "", found[PATH_MAX + 16], what[PATH_MAX + 128];
	int rc = 1;

	/* --profile -: standard input, copied once (the trace and machine are not) */
	if (profile && !(profile = tmatch_cli_input(profile, "--profile")))
		return 1;
	memset(runs, 0, sizeof(runs));
	for (int i = 0; i < nruns; i++)
		runs[i].name = names[i];
	if (nruns == 0) {
		runs[0].name = "packed";
		runs[1].name = "rr";
		runs[2].name = "auto";
		nruns = 3;
	}
	tmatch_error_clear(&err);
	if (!(topo = tmatch_place_topo_load(topology, &err)))
		return tmatch_cli_report_value("--topology", topology, &err);
	if (!(tr = tmatch_place_trace_load(trace, &err))) {
		rc = tmatch_cli_report(&err);
		goto out;
	}
	if (tr->nranks > tmatch_topo_nb_allowed(topo)) {
		tmatch_cli_error("predict: %s has %d ranks, the machine %s only %d slots: give a "
		                 "larger --topology",
		                 trace, tr->nranks, topology, tmatch_topo_nb_allowed(topo));
		goto out;
	}
	tmatch_place_machine_init(&m, topo);
	if (machine && tmatch_place_machine_load(&m, topo, machine, &err) < 0) {
		rc = tmatch_cli_report(&err);
		goto out;
	}
	if ((rc = profile_matrix(trace, &profile, found, sizeof(found), tr->nranks, &pcomm, what,
	                         sizeof(what))) != 0)
		goto out;
	for (int i = 0; i < nruns; i++)
		if ((rc = place(tr, pcomm, topo, &runs[i])) != 0)
			goto out;
	rc = 1;
	if (keep) {
		if (mkdir(keep, 0755) < 0 && errno != EEXIST) {
			tmatch_cli_error("predict: %s: %s", keep, strerror(errno));
			goto out;
		}
		snprintf(dir, sizeof(dir), "%s", keep);
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/treematch-predict-XXXXXX",
		         tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			tmatch_cli_error("predict: cannot make a directory in %s: %s",
			                 tmp && *tmp ? tmp : "/tmp", strerror(errno));
			dir[0] = '\0';
			goto out;
		}
	}
	{
		char path[PATH_MAX + 32];
		FILE *f;

		snprintf(path, sizeof(path), "%s/platform.xml", dir);
		if (!(f = fopen(path, "w")) || tmatch_place_platform_write(f, topo, &m, &err) < 0) {
			if (f)
				fclose(f);
			rc = err.msg[0] ? tmatch_cli_report(&err) : 1;
			goto out;
		}
		fclose(f);
		snprintf(path, sizeof(path), "%s/trace.txt", dir);
		if (!(f = fopen(path, "w")) || tmatch_place_trace_index_write(f, tr) < 0) {
			if (f)
				fclose(f);
			tmatch_cli_error("predict: cannot write %s", path);
			goto out;
		}
		fclose(f);
		for (int i = 0; i < nruns; i++) {
			char name[32];

			snprintf(name, sizeof(name), "mapping%d", i);
			snprintf(path, sizeof(path), "%s/%s.hosts", dir, name);
			if (!(f = fopen(path, "w")) ||
			    tmatch_place_hostfile_write(f, runs[i].leaf, tr->nranks) < 0) {
				if (f)
					fclose(f);
				tmatch_cli_error("predict: cannot write %s", path);
				goto out;
			}
			fclose(f);
			tmatch_cli_progress("predict: replaying %s, %d of %d", runs[i].name, i + 1,
			                    nruns);
			if ((runs[i].time = replay(dir, name, tr->nranks)) < 0) {
				if (runs[i].time < -1)
					keep = dir; /* the log says why: kept */
				goto out;
			}
		}
	}
	tmatch_cli_progress_done();
	printf("# %d ranks of %s on %s; SimGrid's replay (times in seconds)\n", tr->nranks, trace,
	       topology);
	printf("# placements from %s\n", what);
	printf("%-24s %14s %10s\n", "mapping", "predicted", "vs packed");
	{
		double base = runs[0].time;

		for (int i = 0; i < nruns; i++)
			if (!strcmp(runs[i].name, "packed"))
				base = runs[i].time;
		for (int i = 0; i < nruns; i++)
			printf("%-24s %14.6g %10.3f\n", runs[i].name, runs[i].time,
			       base > 0 ? runs[i].time / base : 0);
	}
	rc = save ? save_prediction(save, trace, profile, topology, machine, runs, nruns) : 0;
out:
	if (dir[0] && !keep && nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		tmatch_cli_error("predict: could not remove %s", dir);
	for (int i = 0; i < nruns; i++)
		free(runs[i].leaf);
	tmatch_place_trace_destroy(tr);
	tmatch_comm_destroy(pcomm);
	tmatch_topo_destroy(topo);
	return rc;
#endif
}
