/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * affinity_build.c - how long building a node tree takes: hwloc XML load,
 * restriction, merge and padding, for the 128-core AMD node (2 x 64 cores,
 * SMT 2, 8 NUMA nodes, 16 L3) and a few variants, plus the cluster tree of
 * 64 such nodes under a 3-level topology.conf. The target is < 20 ms for
 * the 128-core node from XML.
 *
 *   affinity_build [--reps N] [--xml FILE] [--conf FILE]
 */
#include "affinity/affinity.h"
#include "conf/topology.h"

#include <hwloc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Wall-clock time, and the CPU time of this process: on a loaded machine
   the CPU time is what the build itself costs, the wall time what a task
   launch would wait. */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double *cpu_t; /* CPU times of the current case, beside the wall times */

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp);
	qsort(cpu_t, (size_t)n, sizeof(*cpu_t), cmp);
	printf("| %-52s | %8.2f | %8.2f | %8.2f | %8.2f |\n", what, t[0], t[n / 2], t[n - 1],
	       cpu_t[n / 2]);
}

static int run(const char *what, const char *xml, int smt, int cpt, const char *restr, int reps)
{
	double *t = malloc(sizeof(double) * (size_t)reps);
	int i;
	for (i = 0; i < reps; i++) {
		tmatch_affinity_opts_t o;
		tmatch_error_t err;
		tmatch_affinity_tree_t *tree;
		double t0, c0;
		tmatch_affinity_opts_init(&o);
		o.source = TMATCH_AFFINITY_SRC_XML;
		o.input = xml;
		o.smt = smt;
		o.cpus_per_task = cpt;
		o.restrict_cpus = restr;
		t0 = now_ms();
		c0 = cpu_ms();
		tree = tmatch_affinity_node_load(&o, &err);
		t[i] = now_ms() - t0;
		cpu_t[i] = cpu_ms() - c0;
		if (!tree) {
			fprintf(stderr, "affinity_build: %s: %s\n", xml, err.msg);
			free(t);
			return -1;
		}
		tmatch_affinity_tree_destroy(tree);
	}
	report(what, t, reps);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *xml = "tests/fixtures/affinity/amd-2s-64c-nps4.xml";
	const char *conf = "tests/fixtures/affinity/topo-3level.conf";
	int reps = 50, i;
	double *t;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--xml") && i + 1 < argc)
			xml = argv[++i];
		else if (!strcmp(argv[i], "--conf") && i + 1 < argc)
			conf = argv[++i];
		else {
			fprintf(stderr,
			        "usage: affinity_build [--reps N] [--xml FILE] [--conf FILE]\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	printf("Node tree build from XML (%s), %d runs, wall-clock milliseconds\n"
	       "(min, median, max) and median CPU milliseconds of the process\n\n",
	       xml, reps);
	cpu_t = malloc(sizeof(double) * (size_t)reps);
	printf("| %-52s | %8s | %8s | %8s | %8s |\n", "case", "min", "median", "max", "CPU med");
	printf("|%s|----------|----------|----------|----------|\n",
	       "------------------------------------------------------");
	/* hwloc alone, with the filters node_load uses: the floor under our build */
	t = malloc(sizeof(double) * (size_t)reps);
	for (i = 0; i < reps; i++) {
		hwloc_topology_t topo;
		double t0 = now_ms(), c0 = cpu_ms();
		hwloc_topology_init(&topo);
		hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
		hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
		hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
		if (hwloc_topology_set_xml(topo, xml) < 0 || hwloc_topology_load(topo) < 0) {
			fprintf(stderr, "affinity_build: hwloc cannot load %s\n", xml);
			return 1;
		}
		t[i] = now_ms() - t0;
		cpu_t[i] = cpu_ms() - c0;
		hwloc_topology_destroy(topo);
	}
	report("hwloc XML load only (reference)", t, reps);
	free(t);
	if (run("128 cores, one PU per core", xml, TMATCH_AFFINITY_SMT_ONE, 1, NULL, reps) < 0 ||
	    run("256 PUs (--smt all)", xml, TMATCH_AFFINITY_SMT_ALL, 1, NULL, reps) < 0 ||
	    run("128 cores, 4 cores per task", xml, TMATCH_AFFINITY_SMT_ONE, 4, NULL, reps) < 0 ||
	    run("odd partial allocation (37 cores)", xml, TMATCH_AFFINITY_SMT_ONE, 1,
	        "1,3,5,7,9,11,13,15,17,40-52,100-114", reps) < 0)
		return 1;

	/* cluster tree: 16 nodes under 3 switch levels over the 128-core node */
	{
		tmatch_affinity_opts_t o;
		tmatch_error_t err;
		tmatch_affinity_tree_t *node;
		tmatch_affinity_conf_t *c;
		tmatch_affinity_opts_init(&o);
		o.source = TMATCH_AFFINITY_SRC_XML;
		o.input = xml;
		node = tmatch_affinity_node_load(&o, &err);
		c = tmatch_conf_topology_load(conf, &err);
		if (!node || !c) {
			fprintf(stderr, "affinity_build: %s\n", err.msg);
			return 1;
		}
		t = malloc(sizeof(double) * (size_t)reps);
		for (i = 0; i < reps; i++) {
			double t0 = now_ms(), c0 = cpu_ms();
			tmatch_affinity_tree_t *cl =
			    tmatch_affinity_cluster_build(c, "cn[001-016]", node, NULL, &err);
			t[i] = now_ms() - t0;
			cpu_t[i] = cpu_ms() - c0;
			if (!cl) {
				fprintf(stderr, "affinity_build: %s\n", err.msg);
				return 1;
			}
			tmatch_affinity_tree_destroy(cl);
		}
		report("cluster tree, 16 nodes x 128 cores, 3 switch levels", t, reps);
		free(t);
		tmatch_affinity_conf_destroy(c);
		tmatch_affinity_tree_destroy(node);
	}
	free(cpu_t);
	return 0;
}
