/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_affinity_cli.c - `treematch topology show`: levels, arities, CPU sets
 * and positions printed for XML, synthetic and cluster trees, a GPU node's
 * GPUs, cards and links after them; usage errors
 * exit 2, bad input exits 1 with a message naming file, line and column.
 * Runs the CLI that `make` built in TMATCH_BUILDDIR.
 */
#include "cli_helpers.h"
#include "gpu_xml.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIX    TMATCH_SRCDIR "/tests/fixtures/affinity/"
#define MAXOUT (1 << 20)

/* Run the CLI with args; stdout and stderr into *out (caller frees). */
static int run(char **out, const char *const *args)
{
	const char *argv[32];
	int i = 0;

	argv[i++] = cli_path();
	while (*args && i < 31)
		argv[i++] = *args++;
	argv[i] = NULL;
	*out = malloc(MAXOUT);
	cr_assert_not_null(*out);
	return cli_run((char *const *)argv, NULL, *out, NULL, MAXOUT);
}

Test(cli, show_xml)
{
	const char *args[] = {"topology", "show", "--xml", FIX "partial-7c.xml",
	                      "--smt",    "core", NULL};
	char *out;
	cr_assert_eq(run(&out, args), 0, "%s", out);
	cr_assert(strstr(out, "tleaf: tleaf 2 2 1 5 1\n"), "%s", out);
	cr_assert(strstr(out, "level 0: node     arity 2\n"), "%s", out);
	cr_assert(strstr(out, "level 2: core     (leaves)\n"), "%s", out);
	cr_assert(strstr(out, "leaf 5: node localhost cpus 14,42 mask 0x40000004000 at "
	                      "node=0/1,package=1/2,numa=0/1,l3=0/1,l2=0/2,core=0/2\n"),
	          "%s", out);
	free(out);
}

/* A GPU node: the CPU tree as without I/O, then its GPUs and cards. */
Test(cli, show_gpus_and_cards)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 2,
	                     .gpus_per_numa = 1,
	                     .nics_per_numa = 1,
	                     .backend = "nvml",
	                     .links = "NVLinkBandwidth"};
	char xml[64], *out;
	const char *args[] = {"topology", "show", "--xml", xml, NULL};

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	cr_assert_eq(run(&out, args), 0, "%s", out);
	cr_expect(strstr(out, "tleaf: tleaf 2 2 1 2 1\n"), "%s", out);
	cr_expect(strstr(out, "gpus: 2 (NVML)\ngpu 0: nvml0 \"Test GPU\" pci 0000:10:00.0 cpus "
	                      "0-1 package 0 numa 0 island 0 nic mlx5_0\n"),
	          "%s", out);
	cr_expect(strstr(out, "nics: 2\nnic 0: mlx5_0 (OpenFabrics, ib0) pci 0000:80:00.0 cpus 0-1 "
	                      "package 0 numa 0\n"),
	          "%s", out);
	cr_expect(strstr(out, "links NVLinkBandwidth (MB/s):\n"), "%s", out);
	free(out);
	unlink(xml);
}

Test(cli, show_cluster)
{
	const char *args[] = {"topology",
	                      "show",
	                      "--synthetic",
	                      "pack:2 core:2 pu:1",
	                      "--topology-conf",
	                      FIX "topo-2level.conf",
	                      "-w",
	                      "n[1-2,5]",
	                      NULL};
	char *out;
	cr_assert_eq(run(&out, args), 0, "%s", out);
	cr_assert_null(strstr(out, "treematch:"), "%s", out);
	cr_assert(strstr(out, "level 0: switch1  arity 2\n"), "%s", out);
	cr_assert(strstr(out, "node 2: n5 allowed cpus 0-3 mask 0xf\n"), "%s", out);
	cr_assert(strstr(out, "node n5 cpus 3 mask 0x8 at switch1=0/1,switch=1/2,node=0/1,"
	                      "package=1/2,core=1/2\n"),
	          "%s", out);
	free(out);
}

Test(cli, errors)
{
	const char *bad_conf[] = {"topology",
	                          "show",
	                          "--synthetic",
	                          "core:2 pu:1",
	                          "--topology-conf",
	                          FIX "bad-unknown-key.conf",
	                          "--nodes",
	                          "n1",
	                          NULL};
	const char *no_nodes[] = {"topology", "show", "--topology-conf", FIX "topo-1level.conf",
	                          NULL};
	const char *bad_smt[] = {"topology", "show", "--smt", "two", NULL};
	const char *no_sub[] = {"topology", "list", NULL};
	const char *two_src[] = {"topology", "show", "--xml", "a", "--synthetic", "b", NULL};
	char *out;
	cr_assert_eq(run(&out, bad_conf), 1);
	cr_assert(strstr(out, "treematch: " FIX "bad-unknown-key.conf:3:15: unknown key 'Node'"),
	          "%s", out);
	free(out);
	cr_assert_eq(run(&out, no_nodes), 2);
	cr_assert(strstr(out, "--nodelist"), "%s", out);
	free(out);
	cr_assert_eq(run(&out, bad_smt), 2);
	cr_assert(strstr(out, "one, core or all"), "%s", out);
	free(out);
	cr_assert_eq(run(&out, no_sub), 2);
	free(out);
	cr_assert_eq(run(&out, two_src), 2);
	free(out);
}

/* --nodes, the old name of --nodelist, still works and says so once. */
Test(cli, nodes_is_nodelist)
{
	const char *args[] = {"topology", "show",   "--synthetic", "core:2 pu:1",
	                      "--nodes",  "n[1-2]", NULL};
	char *out;
	cr_assert_eq(run(&out, args), 0, "%s", out);
	cr_assert(strstr(out, "treematch: topology show: --nodes is now --nodelist (-w)"), "%s",
	          out);
	cr_assert(strstr(out, "node 1: n2 allowed cpus 0-1"), "%s", out);
	free(out);
}

/* --json: one document with the levels, the nodes and every usable leaf,
   the same facts as the text; a tleaf has no CPUs (null). */
Test(cli, show_json)
{
	char *argv[] = {(char *)cli_path(),
	                "topology",
	                "show",
	                "--synthetic",
	                "pack:2 core:2 pu:2",
	                "--topology-conf",
	                FIX "topo-2level.conf",
	                "-w",
	                "n[1-2,5]",
	                "--json",
	                NULL};
	char *tleaf[] = {(char *)cli_path(), "topology", "show", "-t",
	                 "tleaf 2 2 1 3 1",  "--json",   NULL};
	char *out = malloc(MAXOUT), *err = malloc(MAXOUT), q[4096];

	cr_assert_eq(cli_run(argv, NULL, out, err, MAXOUT), 0, "%s", err);
	cr_assert_eq(cli_jq(out,
	                    ".leaf_count, .usable_leaves, (.levels | length), "
	                    ".levels[0].name, .levels[-1].name, .levels[-1].arity, "
	                    ".nodes[2].name, .nodes[2].allowed_cpus, .nodes[2].mask",
	                    q, sizeof(q)),
	             0, "%s", q);
	cr_assert_str_eq(q, "16\n12\n5\nswitch1\ncore\nnull\nn5\n0-7\n0xff\n");
	/* a leaf is a whole core of two hardware threads, as the plugin binds */
	cr_assert_eq(cli_jq(out,
	                    ".leaves[11] | .leaf, .node, .cpus, .mask, "
	                    "(.position | map(\"\\(.level)=\\(.index)/\\(.count)\") | join(\",\"))",
	                    q, sizeof(q)),
	             0, "%s", q);
	cr_assert_str_eq(q, "11\nn5\n6-7\n0xc0\nswitch1=0/1,switch=1/2,node=0/1,package=1/2,"
	                    "core=1/2\n");
	cr_assert_eq(cli_run(tleaf, NULL, out, err, MAXOUT), 0, "%s", err);
	cr_assert_eq(cli_jq(out,
	                    ".tleaf, .leaf_count, .leaves[5].node, "
	                    "(.leaves[5].position | map(.index) | join(\",\"))",
	                    q, sizeof(q)),
	             0, "%s", q);
	cr_assert_str_eq(q, "tleaf 2 2 1 3 1\n6\nnull\n1,2\n");
	free(out);
	free(err);
}
