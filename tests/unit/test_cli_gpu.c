/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_gpu.c - the CLI on GPU nodes: `treematch map --gpus-per-task N
 * [--gpus LIST] [--ntasks-per-gpu N] [--gpu-bind SPEC]` with --format
 * bindings (each rank's CPUs inside its GPU's locality, its card on its
 * NUMA node), srun (--gpu-bind=map_gpu:) and the launchers that cannot say
 * GPUs; `treematch eval --bindings` (traffic by GPU link next to in-order),
 * `treematch draw --bindings` (the GPUs drawn); usage errors exit 2, bad
 * input exits 1 naming the file, line and column. Runs the CLI `make` built.
 */
#include "tests/unit/cli_helpers.h"
#include "tests/unit/gpu_xml.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXOUT (1 << 20)

static char xml[64], topo[80], profile[64];

/* 2 packages of 2 NUMA nodes of 4 cores; one GPU and one card per NUMA
   node; NVLink between the GPUs of a package. 8 ranks in 2 cliques (r % 2)
   that Slurm's in-order binding spreads over both packages. */
static void setup(void)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 2,
	                     .cores_per_numa = 4,
	                     .gpus_per_numa = 1,
	                     .nics_per_numa = 1,
	                     .backend = "nvml",
	                     .links = "NVLinkBandwidth",
	                     .island_gpus = 2};
	FILE *f;
	int fd, e = 0;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	snprintf(topo, sizeof(topo), "xml:%s", xml);
	snprintf(profile, sizeof(profile), "/tmp/test_cli_gpu_XXXXXX.mtx");
	fd = mkstemps(profile, 4);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	for (int a = 0; a < 8; a++)
		for (int b = a + 1; b < 8; b++)
			e += a % 2 == b % 2;
	fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n8 8 %d\n", e);
	for (int a = 0; a < 8; a++)
		for (int b = a + 1; b < 8; b++)
			if (a % 2 == b % 2)
				fprintf(f, "%d %d 1000\n", a + 1, b + 1);
	fclose(f);
}

static void teardown(void)
{
	unlink(xml);
	unlink(profile);
}

TestSuite(cli_gpu, .init = setup, .fini = teardown);

static int run(char **out, char **err, const char *const *args)
{
	const char *argv[40];
	int i = 0;

	argv[i++] = cli_path();
	while (*args && i < 39)
		argv[i++] = *args++;
	argv[i] = NULL;
	*out = malloc(MAXOUT);
	*err = malloc(MAXOUT);
	cr_assert(*out && *err);
	return cli_run((char *const *)argv, NULL, *out, *err, MAXOUT);
}

/* The NUMA node of a core of this design (4 cores per NUMA node). */
static int numa_of_cpu(int cpu)
{
	return cpu / 4;
}

Test(cli_gpu, map_bindings)
{
	const char *args[] = {"map", "-p",       profile,    "-t",      topo, "--gpus-per-task",
	                      "1",   "--format", "bindings", "--stats", NULL};
	char *out, *err, *line, *save = NULL;
	int lines = 0, package_of_clique[2] = {-1, -1};

	cr_assert_eq(run(&out, &err, args), 0, "%s", err);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int rank, cpu, gpu, nic;

		cr_assert_eq(
		    sscanf(line, "%d cpus=%d gpus=%d nic=mlx5_%d", &rank, &cpu, &gpu, &nic), 4,
		    "%s", line);
		cr_expect_eq(numa_of_cpu(cpu), gpu, "%s: CPUs outside the GPU's NUMA node", line);
		cr_expect_eq(nic / 8, gpu, "%s: not the card of the GPU's NUMA node", line);
		if (package_of_clique[rank % 2] < 0)
			package_of_clique[rank % 2] = gpu / 2;
		cr_expect_eq(package_of_clique[rank % 2], gpu / 2, "%s: clique split", line);
		lines++;
	}
	cr_expect_eq(lines, 4 + 4, "%d lines", lines);
	cr_expect(strstr(err, "traffic by GPU link, this placement:"), "%s", err);
	cr_expect(strstr(err, "traffic by GPU link, in order:"), "%s", err);
	free(out);
	free(err);
}

/* Two ranks per GPU on GPUs 1 and 3 only; srun's lists; an explicit
   binding kept with the CPUs following it. */
Test(cli_gpu, map_gpus_list_srun_and_gpu_bind)
{
	const char *srun[] = {"map",    "-p",  profile,    "-t",   topo,
	                      "--gpus", "1,3", "--format", "srun", NULL};
	const char *bind[] = {"map",      "-p",         profile,           "-t",
	                      topo,       "--gpu-bind", "map_gpu:3,2,1,0", "--format",
	                      "bindings", NULL};
	const char *ompi[] = {"map", "-p",       profile,   "-t", topo, "--gpus-per-task",
	                      "1",   "--format", "openmpi", NULL};
	char *out, *err, *p;
	int g[8], n = 0;

	cr_assert_eq(run(&out, &err, srun), 0, "%s", err);
	cr_expect(!strncmp(out, "--cpu-bind=map_cpu:", 19), "%s", out);
	p = strstr(out, " --gpu-bind=map_gpu:");
	cr_assert_not_null(p, "%s", out);
	p += strlen(" --gpu-bind=map_gpu:");
	while (n < 8 && sscanf(p, "%d", &g[n]) == 1) {
		cr_expect(g[n] == 1 || g[n] == 3, "GPU %d is not the step's", g[n]);
		n++;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	cr_expect_eq(n, 8);
	free(out);
	free(err);

	cr_assert_eq(run(&out, &err, bind), 0, "%s", err);
	for (int r = 0; r < 8; r++) {
		char want[32];
		const char *l;
		int cpu;

		snprintf(want, sizeof(want), "%d cpus=", r);
		l = strstr(out, want);
		cr_assert_not_null(l, "%s", out);
		cr_assert_eq(sscanf(l + strlen(want), "%d", &cpu), 1);
		cr_expect_eq(numa_of_cpu(cpu), 3 - r % 4, "rank %d on CPU %d: %s", r, cpu, out);
		snprintf(want, sizeof(want), "gpus=%d ", 3 - r % 4);
		cr_expect(strstr(l, want) && strstr(l, want) < strchr(l, '\n'), "%s", l);
	}
	free(out);
	free(err);

	cr_assert_eq(run(&out, &err, ompi), 0, "%s", err);
	cr_expect(strstr(out, "rank 0=+n0 slot="), "%s", out);
	cr_expect(strstr(err, "note: openmpi has no way to give each rank its GPUs"), "%s", err);
	free(out);
	free(err);
}

Test(cli_gpu, eval_and_draw_bindings)
{
	const char *map[] = {"map", "-p",       profile,    "-t", topo, "--gpus-per-task",
	                     "1",   "--format", "bindings", NULL};
	char *out, *err, bfile[64], svg[64];
	const char *eval[] = {"eval", "-p", profile, "-t", topo, "--bindings", bfile, NULL};
	const char *json[] = {"eval",       "-p",  profile,  "-t", topo,
	                      "--bindings", bfile, "--json", NULL};
	char q[256];
	const char *draw[] = {"draw",       "-p",  profile, "-t", topo,
	                      "--bindings", bfile, "-o",    svg,  NULL};
	double ours, inorder;
	char *text;
	size_t len;
	FILE *f;
	int fd;

	cr_assert_eq(run(&out, &err, map), 0, "%s", err);
	snprintf(bfile, sizeof(bfile), "/tmp/test_cli_gpu_b_XXXXXX");
	fd = mkstemp(bfile);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, out, strlen(out)), (ssize_t)strlen(out));
	close(fd);
	free(out);
	free(err);

	cr_assert_eq(run(&out, &err, eval), 0, "%s", err);
	cr_assert(strstr(out, "metric                               bindings         in-order\n"),
	          "%s", out);
	cr_assert_eq(sscanf(strstr(out, "gpus_on_two_packages"), "gpus_on_two_packages %lf %lf",
	                    &ours, &inorder),
	             2, "%s", out);
	cr_expect_eq(ours, 0, "%s", out);
	cr_expect_gt(inorder, 0, "%s", out);
	cr_expect(strstr(out, "ranks_outside_gpu_cpus                      0                6\n"),
	          "%s", out);
	free(out);
	free(err);

	/* --json: the same rows */
	cr_assert_eq(run(&out, &err, json), 0, "%s", err);
	cr_assert_eq(cli_jq(out,
	                    ".placements | length, (map(.name) | join(\",\")), "
	                    "(.[0].gpus_on_two_packages == 0), (.[1].gpus_on_two_packages > 0), "
	                    ".[0].ranks_outside_gpu_cpus, .[1].ranks_outside_gpu_cpus, "
	                    "(.[1].gpu_traffic | keys_unsorted | join(\",\"))",
	                    q, sizeof(q)),
	             0, "%s", q);
	cr_expect_str_eq(q,
	                 "2\nbindings,in-order\ntrue\ntrue\n0\n6\nsame_gpu,same_device,"
	                 "direct_link,island,same_package,across_packages\n",
	                 "%s", out);
	free(out);
	free(err);

	/* --bindings -: standard input, as every file the CLI reads */
	{
		char cmd[512];
		char *sh[] = {"/bin/sh", "-c", cmd, NULL};

		snprintf(cmd, sizeof(cmd), "%s eval -p %s -t '%s' --bindings - --json <%s",
		         cli_path(), profile, topo, bfile);
		out = malloc(MAXOUT);
		err = malloc(MAXOUT);
		cr_assert(out && err);
		cr_assert_eq(cli_run(sh, NULL, out, err, MAXOUT), 0, "%s", err);
		cr_assert_eq(cli_jq(out, ".placements[1].ranks_outside_gpu_cpus", q, sizeof(q)), 0,
		             "%s", out);
		cr_expect_str_eq(q, "6\n", "%s", out);
		free(out);
		free(err);
	}

	snprintf(svg, sizeof(svg), "/tmp/test_cli_gpu_XXXXXX.svg");
	fd = mkstemps(svg, 4);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(run(&out, &err, draw), 0, "%s", err);
	text = malloc(MAXOUT);
	f = fopen(svg, "r");
	cr_assert_not_null(f);
	len = fread(text, 1, MAXOUT - 1, f);
	text[len] = '\0';
	fclose(f);
	cr_expect(strstr(text, "<g id=\"gpus\">"), "no GPUs drawn");
	cr_expect(strstr(text, "nvml3 (package 1, numa 3): ranks "), "no GPU boxes");
	free(text);
	free(out);
	free(err);

	/* a bindings file that is not this node's */
	f = fopen(bfile, "w");
	fputs("0 cpus=0 gpus=0 nic=mlx5_0\n1 cpus=99 gpus=1\n", f);
	fclose(f);
	cr_assert_eq(run(&out, &err, eval), 1, "%s", out);
	cr_expect(strstr(err, ":2:8: CPUs 99 are not one task slot"), "%s", err);
	free(out);
	free(err);
	unlink(bfile);
	unlink(svg);
}

/* --ntasks-per-gpu, as srun's; --tasks-per-gpu, its old name, still
   places the same and says once what it is called now. */
Test(cli_gpu, ntasks_per_gpu_and_its_old_name)
{
	const char *now[] = {"map", "-p",       profile,    "-t", topo, "--ntasks-per-gpu",
	                     "2",   "--format", "bindings", NULL};
	const char *old[] = {"map", "-p",       profile,    "-t", topo, "--tasks-per-gpu",
	                     "2",   "--format", "bindings", NULL};
	const char *few[] = {"map", "-p", profile, "-t", topo, "--ntasks-per-gpu", "0", NULL};
	char *out, *err, *out2, *err2;
	const char *said;

	cr_assert_eq(run(&out, &err, now), 0, "%s", err);
	cr_expect(!strstr(err, "old name"), "%s", err);
	cr_assert_eq(run(&out2, &err2, old), 0, "%s", err2);
	cr_expect_str_eq(out2, out);
	said = strstr(err2, "map: --tasks-per-gpu N is now --ntasks-per-gpu, as srun's");
	cr_expect(said, "%s", err2);
	cr_expect(said && !strstr(said + 6, "--tasks-per-gpu N is now"), "said more than once: %s",
	          err2);
	free(out);
	free(err);
	free(out2);
	free(err2);
	cr_expect_eq(run(&out, &err, few), 2, "%s", err);
	cr_expect(strstr(err, "--ntasks-per-gpu '0': expected a positive integer"), "%s", err);
	free(out);
	free(err);
}

Test(cli_gpu, errors)
{
	/* P and T stand for the profile and the topology */
	static const struct {
		const char *args[12];
		int status;
		const char *msg;
	} cases[] = {
	    {{"map", "-p", "P", "-t", "tleaf 1 4 1", "--gpus-per-task", "1"},
	     2,
	     "GPUs needs one node's hardware"},
	    {{"map", "-p", "P", "-t", "T", "--gpus-per-task", "0"},
	     2,
	     "--gpus-per-task '0': expected a positive integer"},
	    {{"map", "-p", "P", "-t", "T", "--gpus", "1,9"},
	     1,
	     "--gpus: SLURM_STEP_GPUS names GPU 9"},
	    {{"map", "-p", "P", "-t", "T", "--gpu-bind", "map_gpu:7"},
	     1,
	     "--gpu-bind: --gpu-bind: 7 is not a GPU number"},
	    {{"map", "-p", "P", "-t", "T", "--gpu-bind", "nearest"},
	     1,
	     "--gpu-bind 'nearest': use map_gpu:LIST"},
	    {{"map", "-p", "P", "-t", "T", "--gpus-per-task", "5"},
	     1,
	     "5 GPUs per task, and the step has 4 GPUs here"},
	    {{"map", "-p", "P", "-t", "T", "--gpus", "1", "--format", "yaml"},
	     2,
	     "--format yaml has no GPUs"},
	    {{"eval", "-p", "P", "-t", "tleaf 1 4 1", "--bindings", "/nonexistent"},
	     2,
	     "--bindings needs one node's hardware"},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *args[13] = {NULL};
		char *out, *err;
		int st;

		for (int i = 0; i < 12 && cases[c].args[i]; i++)
			args[i] = !strcmp(cases[c].args[i], "P")   ? profile
			          : !strcmp(cases[c].args[i], "T") ? topo
			                                           : cases[c].args[i];
		st = run(&out, &err, args);
		cr_expect_eq(st, cases[c].status, "case %zu: status %d: %s", c, st, err);
		cr_expect(strstr(err, cases[c].msg), "case %zu: %s", c, err);
		free(out);
		free(err);
	}
}
