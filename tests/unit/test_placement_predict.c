/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_predict.c - what `treematch predict` hands SimGrid
 * (placement/predict.c): a time-independent trace read into the traffic it
 * describes, damaged and foreign traces refused with the file and line,
 * the machine description, and the platform written from the tree.
 * And the command itself, replaying tests/fixtures/predict/halo8 with
 * SimGrid: the scrambled halo is predicted faster when mapped; the mappers
 * place by a profile as the plugin does (its auto is treematch map's).
 */
#include "cli_helpers.h"
#include "placement/inputs.h"
#include "placement/predict.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX   TMATCH_SRCDIR "/tests/fixtures/predict/"
#define HALO  FIX "halo8.txt"
#define CLUS2 "cluster:none,n[1-2],synthetic:pack:2 core:2 pu:1"

/* `treematch ARGS...` (args[0] is the subcommand); its stdout and stderr in out. */
static int predict_cli(char **args, char *out, size_t len)
{
	char *argv[16];
	int n = 0;

	argv[n++] = (char *)cli_path();
	while (*args && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	return cli_run(argv, NULL, out, NULL, len);
}

Test(predict, trace_gives_the_traffic_of_the_halo)
{
	tmatch_error_t err;
	tmatch_place_trace_t *t;
	int perm[8], pos[8];

	memset(&err, 0, sizeof(err));
	t = tmatch_place_trace_load(HALO, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(t->nranks, 8);
	for (int i = 0; i < 8; i++)
		perm[i] = (5 * i + 3) % 8;
	for (int i = 0; i < 8; i++)
		pos[perm[i]] = i;
	/* each rank sends 2 x 1 MiB to each ring neighbour, and receives as much */
	for (int r = 0; r < 8; r++)
		for (int q = 0; q < 8; q++) {
			int d = (pos[r] - pos[q] + 8) % 8;
			double want = (d == 1 || d == 7) ? 2.0 * 2 * 131072 * 8 : 0;

			cr_assert_eq(tmatch_comm_get(t->comm, r, q), want, "%d-%d", r, q);
		}
	tmatch_place_trace_destroy(t);
}

/* A copy of the halo trace in a fresh directory, rank 3's file made by
   `edit` (a sed script) from the original. Returns the index's path. */
static const char *damaged_copy(char *dir, const char *edit)
{
	static char index[TM_TMP_MAX + 64];
	char cmd[2048];

	tm_tmpname(dir, TM_TMP_MAX, "tm-predict-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
	         "cp -r %s/halo8 %s/halo8.txt '%s/' && sed -e '%s' %s/halo8/rank-3.txt "
	         ">'%s/halo8/rank-3.txt'",
	         FIX, FIX, dir, edit, FIX, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(index, sizeof(index), "%s/halo8.txt", dir);
	return index;
}

static void clean(const char *dir)
{

	tm_rmtree(dir);
}

Test(predict, damaged_traces_name_the_file_and_line)
{
	static const struct {
		const char *edit, *says;
		int line;
	} cases[] = {
	    {"/finalize/d", "truncated", 0},
	    {"5s/.*/3 isend 9 0 131072 0/", "out of range", 5},
	    {"5s/.*/3 isend 1 0 131072 99/", "out of range", 5},
	    {"5s/.*/3 isend 1 0 99999999999999999999 0/", "more than 18 digits", 5},
	    {"5s/.*/2 compute 1/", "a line of rank 2 in rank 3's file", 5},
	    {"1s/.*/3 compute 1/", "starts with \"3 init\"", 1},
	    {"$a 3 compute 1", "after \"finalize\"", 0},
	    {"5s/.*/garbage/", "not a time-independent trace line", 5},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dir[TM_TMP_MAX], file[TM_TMP_MAX + 64];
		tmatch_error_t err;
		const char *index = damaged_copy(dir, cases[i].edit);

		memset(&err, 0, sizeof(err));
		errno = 0;
		cr_assert_null(tmatch_place_trace_load(index, &err), "case %zu accepted", i);
		cr_assert_neq(errno, 0);
		snprintf(file, sizeof(file), "%s/halo8/rank-3.txt", dir);
		cr_assert_str_eq(err.file, file, "case %zu: %s", i, err.msg);
		cr_assert(strstr(err.msg, cases[i].says), "case %zu: %s", i, err.msg);
		if (cases[i].line)
			cr_assert_eq(err.line, cases[i].line, "case %zu", i);
		clean(dir);
	}
}

Test(predict, foreign_and_missing_files)
{
	tmatch_error_t err;

	memset(&err, 0, sizeof(err));
	cr_assert_null(tmatch_place_trace_load(TMATCH_SRCDIR "/profile/examples/ring-4.yml", &err));
	cr_assert(strstr(err.msg, "not a trace index"), "%s", err.msg);
	cr_assert_null(tmatch_place_trace_load(FIX "missing.txt", &err));
	cr_assert_eq(errno, ENOENT);
	cr_assert_null(tmatch_place_trace_load(FIX "halo8", &err)); /* a directory */
	cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

Test(predict, machine_description)
{
	tmatch_place_machine_t m;
	tmatch_error_t err;
	tmatch_topo_t *topo;
	char path[TM_TMP_MAX];
	int fd = mkstemp(tm_tmpname(path, sizeof(path), "tm-machine-XXXXXX"));

	cr_assert_geq(fd, 0);
	close(fd);
	memset(&err, 0, sizeof(err));
	topo = tmatch_place_topo_load(CLUS2, &err);
	cr_assert_not_null(topo, "%s", err.msg);
	tmatch_place_machine_init(&m, topo);
	cr_assert_str_eq(m.speed, "1Gf");
	cr_assert_str_eq(m.bw[1], "12.5GBps"); /* node */
	cr_assert_str_eq(m.lat[3], "10ns");    /* core */

	write_text(path, "# a slower network\nnode = 1.25GBps 5us\nspeed = 2.5Gf  # per core\n");
	cr_assert_eq(tmatch_place_machine_load(&m, topo, path, &err), 0, "%s", err.msg);
	cr_assert_str_eq(m.bw[1], "1.25GBps");
	cr_assert_str_eq(m.lat[1], "5us");
	cr_assert_str_eq(m.speed, "2.5Gf");

	write_text(path, "node = 1.25GBps 5us\nswitch = 10GBps 1us\n");
	cr_assert_eq(tmatch_place_machine_load(&m, topo, path, &err), -1);
	cr_assert_eq(err.line, 2);
	cr_assert(strstr(err.msg, "no level 'switch'") && strstr(err.msg, "node, package, core"),
	          "%s", err.msg);
	write_text(path, "node = fast 5us\n");
	cr_assert_eq(tmatch_place_machine_load(&m, topo, path, &err), -1);
	cr_assert(strstr(err.msg, "bandwidth and a latency"), "%s", err.msg);
	write_text(path, "speed = 3GHz\n");
	cr_assert_eq(tmatch_place_machine_load(&m, topo, path, &err), -1);
	cr_assert_str_eq(err.file, path);
	unlink(path);
	tmatch_topo_destroy(topo);
}

/* The three line readers of predict.c (the index, a rank's file, the
   machine description) go through the shared bounded reader: a line over
   the format's limit is refused with the file and line, a last line
   without its newline is read like the others. */
Test(predict, long_lines_refused_last_line_without_newline_read)
{
	char dir[TM_TMP_MAX], file[TM_TMP_MAX + 64], cmd[TM_TMP_MAX * 2 + 128], *text;
	tmatch_place_machine_t m;
	tmatch_place_trace_t *t;
	tmatch_error_t err;
	tmatch_topo_t *topo;
	const char *index;
	size_t n;

	/* rank 3's file without its final newline: still a whole trace */
	index = damaged_copy(dir, "");
	snprintf(file, sizeof(file), "%s/halo8/rank-3.txt", dir);
	snprintf(cmd, sizeof(cmd), "truncate -s -1 '%s'", file);
	cr_assert_eq(system(cmd), 0);
	memset(&err, 0, sizeof(err));
	t = tmatch_place_trace_load(index, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(t->nranks, 8);
	cr_assert_gt(tmatch_comm_get(t->comm, 3, 0) + tmatch_comm_get(t->comm, 3, 6), 0);
	tmatch_place_trace_destroy(t);

	/* the index without its final newline: all eight ranks */
	snprintf(cmd, sizeof(cmd), "truncate -s -1 '%s'", index);
	cr_assert_eq(system(cmd), 0);
	t = tmatch_place_trace_load(index, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(t->nranks, 8);
	tmatch_place_trace_destroy(t);

	/* a trace line of 4097 bytes on line 2 of rank 3's file; 4096 are read */
	text = malloc(8192);
	cr_assert_not_null(text);
	for (size_t want = 4096; want <= 4097; want++) {
		/* "3 init\n" (7 bytes), then a line of `want` bytes */
		n = (size_t)snprintf(text, 8192, "3 init\n3 compute 1");
		memset(text + n, ' ', 7 + want - n);
		snprintf(text + 7 + want, 8192 - 7 - want, "\n3 finalize\n");
		write_text(file, text);
		memset(&err, 0, sizeof(err));
		t = tmatch_place_trace_load(index, &err);
		if (want == 4096) {
			cr_assert_not_null(t, "%s", err.msg);
			tmatch_place_trace_destroy(t);
			continue;
		}
		cr_assert_null(t);
		cr_assert_eq(errno, EINVAL);
		cr_assert_str_eq(err.file, file);
		cr_assert_eq(err.line, 2);
		cr_assert(strstr(err.msg, "a line longer than 4096 bytes"), "%s", err.msg);
	}
	/* an index line longer than a path */
	memset(text, 'a', PATH_MAX + 1);
	text[PATH_MAX + 1] = '\0';
	write_text(index, text);
	cr_assert_null(tmatch_place_trace_load(index, &err));
	cr_assert_str_eq(err.file, index);
	cr_assert_eq(err.line, 1);
	cr_assert(strstr(err.msg, "a line longer than"), "%s", err.msg);

	/* the machine description: a last line without newline applies, a
	   line over 1 KiB is refused */
	memset(&err, 0, sizeof(err));
	topo = tmatch_place_topo_load(CLUS2, &err);
	cr_assert_not_null(topo, "%s", err.msg);
	tmatch_place_machine_init(&m, topo);
	snprintf(file, sizeof(file), "%s/machine", dir);
	write_text(file, "node = 1.25GBps 5us\nspeed = 2.5Gf");
	cr_assert_eq(tmatch_place_machine_load(&m, topo, file, &err), 0, "%s", err.msg);
	cr_assert_str_eq(m.speed, "2.5Gf");
	n = (size_t)snprintf(text, 8192, "speed = 3Gf\n# ");
	memset(text + n, '-', 1100);
	snprintf(text + n + 1100, 8192 - n - 1100, "\n");
	write_text(file, text);
	cr_assert_eq(tmatch_place_machine_load(&m, topo, file, &err), -1);
	cr_assert_str_eq(err.file, file);
	cr_assert_eq(err.line, 2);
	cr_assert(strstr(err.msg, "a line longer than 1024 bytes"), "%s", err.msg);
	free(text);
	tmatch_topo_destroy(topo);
	clean(dir);
}

Test(predict, prediction_file_written_read_and_refused_when_damaged)
{
	const char *names[] = {"packed", "rr", "auto", "has blank", "/x/cyclic.map"};
	const double secs[] = {0.25, 0.5, 0.125, 1, 0.75};
	char dir[TM_TMP_MAX], path[PATH_MAX], fifo[PATH_MAX];
	double mapped, packed;
	tmatch_error_t err;
	FILE *f;
	tm_tmpname(dir, sizeof(dir), "tm-prediction-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/app.yml.predict", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	cr_assert_eq(tmatch_place_prediction_write(f, "trace t\nnext", names, secs, 5), 0);
	cr_assert_eq(fclose(f), 0);
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch_place_prediction_read(path, "auto", &mapped, &packed, &err), 0, "%s",
	             err.msg);
	cr_assert_float_eq(mapped, 0.125, 1e-12);
	cr_assert_float_eq(packed, 0.25, 1e-12);
	cr_assert_eq(tmatch_place_prediction_read(path, "/x/cyclic.map", &mapped, &packed, &err),
	             0);
	cr_assert_float_eq(mapped, 0.75, 1e-12);
	/* a name with a blank is left out; a mapping not predicted: 1 */
	cr_assert_eq(tmatch_place_prediction_read(path, "has", &mapped, &packed, &err), 1);
	cr_assert_lt(mapped, 0);
	cr_assert_float_eq(packed, 0.25, 1e-12);

	/* damaged: file and line, never the text */
	static const struct {
		const char *text;
		int line;
	} bad[] = {
	    {"", 0},
	    {"treematch-prediction 2\npacked 1\n", 1},
	    {"treematch-prediction 1\npacked 1\nauto\n", 3},
	    {"treematch-prediction 1\npacked -1\n", 2},
	    {"treematch-prediction 1\npacked 1e999\n", 2},
	    {"treematch-prediction 1\npacked 1 2\n", 2},
	    {"treematch-prediction 1\n\n# c\nsecret nan\n", 4},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_text(path, bad[i].text);
		tmatch_error_clear(&err);
		cr_assert_eq(tmatch_place_prediction_read(path, "auto", &mapped, &packed, &err), -1,
		             "case %zu", i);
		cr_assert_str_eq(err.file, path, "case %zu", i);
		cr_assert_eq(err.line, bad[i].line, "case %zu: %s", i, err.msg);
		cr_assert_null(strstr(err.msg, "secret"), "%s", err.msg);
	}
	/* a NUL byte, a FIFO, more than 64 KiB */
	cr_assert_not_null(f = fopen(path, "w"));
	fwrite("treematch-prediction 1\npacked\0 1\n", 1, 34, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(tmatch_place_prediction_read(path, "auto", &mapped, &packed, &err), -1);
	cr_assert_not_null(strstr(err.msg, "NUL"), "%s", err.msg);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(tmatch_place_prediction_read(fifo, "auto", &mapped, &packed, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("treematch-prediction 1\n", f);
	for (int i = 0; i < 7000; i++)
		fputs("# ........\n", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(tmatch_place_prediction_read(path, "auto", &mapped, &packed, &err), -1);
	cr_assert_eq(errno, EFBIG);
	unlink(fifo);
	unlink(path);
	rmdir(dir);
}

Test(predict, platform_has_a_host_per_leaf_and_a_link_per_edge)
{
	tmatch_place_machine_t m;
	tmatch_error_t err;
	tmatch_topo_t *topo;
	char path[TM_TMP_MAX], cmd[TM_TMP_MAX + 64], line[512];
	int fd = mkstemp(tm_tmpname(path, sizeof(path), "tm-platform-XXXXXX")), hosts = 0,
	    routers = 0, links = 0, routes = 0;
	FILE *f;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	memset(&err, 0, sizeof(err));
	topo = tmatch_place_topo_load(CLUS2, &err);
	cr_assert_not_null(topo, "%s", err.msg);
	tmatch_place_machine_init(&m, topo);
	cr_assert_eq(tmatch_place_platform_write(f, topo, &m, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(f), 0);
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f)) {
		hosts += strstr(line, "<host ") != NULL;
		routers += strstr(line, "<router ") != NULL;
		links += strstr(line, "<link ") != NULL;
		routes += strstr(line, "<route ") != NULL;
	}
	fclose(f);
	/* 2 nodes x 2 packages x 2 cores: 8 hosts; root + 2 + 4 inner nodes;
	   2 + 4 + 8 edges, each a link and two one-way routes */
	cr_assert_eq(hosts, 8);
	cr_assert_eq(routers, 7);
	cr_assert_eq(links, 14);
	cr_assert_eq(routes, 28);
	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", path);
	cr_assert_eq(system(cmd), 0, "not well-formed XML");
	unlink(path);
	tmatch_topo_destroy(topo);
}

#ifdef TMATCH_SMPIRUN
/* The command, with SimGrid: mapped, the scrambled halo crosses fewer node
   links than packed or round robin, and is predicted faster. */
Test(predict, command_predicts_the_mapped_halo_faster, .timeout = 120)
{
	static char out[1 << 14];
	double packed = 0, rr = 0, mapped = 0;
	char save[TM_TMP_MAX];
	char *argv[] = {"predict", "--trace", HALO, "--topology", CLUS2, "--save", save, NULL};
	double saved_mapped, saved_packed;
	tmatch_error_t err;
	char *p;
	int fd = mkstemp(tm_tmpname(save, sizeof(save), "tm-predict-save-XXXXXX"));

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(predict_cli(argv, out, sizeof(out)), 0, "%s", out);
	cr_assert((p = strstr(out, "\npacked ")), "%s", out);
	packed = strtod(p + 8, NULL);
	cr_assert((p = strstr(out, "\nrr ")), "%s", out);
	rr = strtod(p + 4, NULL);
	cr_assert((p = strstr(out, "\nauto ")), "%s", out);
	mapped = strtod(p + 6, NULL);
	cr_assert_gt(packed, 0, "%s", out);
	cr_assert_lt(mapped, packed, "%s", out);
	cr_assert_lt(mapped, rr, "%s", out);
	/* --save kept what it printed, for the plugin */
	tmatch_error_clear(&err);
	cr_assert_eq(tmatch_place_prediction_read(save, "auto", &saved_mapped, &saved_packed, &err),
	             0, "%s", err.msg);
	cr_assert_float_eq(saved_mapped, mapped, 1e-5 * mapped);
	cr_assert_float_eq(saved_packed, packed, 1e-5 * packed);
	unlink(save);
}
#else
/* Built without SimGrid: the command says how to get it. */
Test(predict, command_says_how_to_enable_simgrid)
{
	static char out[1 << 12];
	char *argv[] = {"predict", "--trace", HALO, "--topology", CLUS2, NULL};

	cr_assert_eq(predict_cli(argv, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "built without SimGrid") && strstr(out, "libsimgrid-dev"), "%s", out);
}
#endif

#ifdef TMATCH_SMPIRUN
/* The lines of FILE, blanks for newlines, into out (the placement a hostfile
   or a mapping names); for a hostfile the 'h' of each host is left out. */
static void placement_of(const char *file, int hostfile, char *out, size_t len)
{
	FILE *f = fopen(file, "r");
	char line[256];
	size_t n = 0;

	cr_assert_not_null(f, "%s", file);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f) && n + 16 < len) {
		int a = -1, b = -1;

		if (hostfile ? sscanf(line, "h%d", &a) == 1 : sscanf(line, "%d %d", &b, &a) == 2)
			n += (size_t)snprintf(out + n, len - n, "%d ", a);
	}
	fclose(f);
}

/* With a profile, the mappers place by it through the plugin's matrix: auto
   is treematch map's placement of that profile; trace:auto maps the trace.
   Without one, the header says the trace's matrix is used; a profile of
   other ranks is refused. */
Test(predict, command_places_by_the_profile_as_the_plugin, .timeout = 120)
{
	static char out[1 << 14];
	char keep[] = "/tmp/tm-predict-keep-XXXXXX", path[PATH_MAX + 32];
	char predicted[512], mapped[512];
	const char *prof = TMATCH_SRCDIR "/tests/fixtures/profile/valid/lammps-8.yml";
	char *argv[] = {"predict",    "--trace",    HALO,        "--topology", CLUS2,
	                "--profile",  (char *)prof, "--mapping", "auto",       "--mapping",
	                "trace:auto", "--keep",     keep,        NULL};
	char *map[] = {"map", "-p", (char *)prof, "-t", CLUS2, NULL};
	char *none[] = {"predict", "--trace",   HALO,     "--topology",
	                CLUS2,     "--mapping", "packed", NULL};
	char *other[] = {"predict",
	                 "--trace",
	                 HALO,
	                 "--topology",
	                 CLUS2,
	                 "--profile",
	                 TMATCH_SRCDIR "/tests/fixtures/profile/valid/ring-4.yml",
	                 NULL};
	FILE *f;

	cr_assert_not_null(mkdtemp(keep));
	cr_assert_eq(predict_cli(argv, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "placements from ") &&
	              strstr(out, "lammps-8.yml as the plugin places "
	                          "by it (bytes, point-to-point)"),
	          "%s", out);
	snprintf(path, sizeof(path), "%s/mapping0.hosts", keep);
	placement_of(path, 1, predicted, sizeof(predicted));
	cr_assert_eq(predict_cli(map, out, sizeof(out)), 0, "%s", out);
	snprintf(path, sizeof(path), "%s/map.out", keep);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(out, f);
	fclose(f);
	placement_of(path, 0, mapped, sizeof(mapped));
	cr_expect_str_eq(predicted, mapped, "predict's auto is the plugin's placement");
	snprintf(path, sizeof(path), "rm -rf '%s'", keep);
	cr_assert_eq(system(path), 0);

	cr_assert_eq(predict_cli(none, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "placements from the trace's send matrix (no profile beside it)"),
	          "%s", out);
	cr_assert_eq(predict_cli(other, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "ring-4.yml has 4 ranks, the trace 8"), "%s", out);
}

Test(predict, command_refuses_too_many_ranks_and_bad_machines)
{
	static char out[1 << 14];
	char *small[] = {"predict", "--trace", HALO, "--topology", "tleaf 1 4 1", NULL};
	char *bad[] = {"predict", "--trace", HALO, "--topology", CLUS2, "--machine", HALO, NULL};

	cr_assert_eq(predict_cli(small, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "8 ranks") && strstr(out, "only 4 slots"), "%s", out);
	cr_assert_eq(predict_cli(bad, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "halo8.txt:1:"), "%s", out);
}
#endif
