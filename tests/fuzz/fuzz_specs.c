/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_specs.c - libFuzzer harness for the machine descriptions and the
 * mapping file: the first byte picks
 *   0  a --topology spec, tleaf or synthetic: (tmatch_place_topo_load); an
 *      accepted tleaf tree must print back to a spec that loads to the same
 *      text;
 *   1  an hwloc XML file (tmatch_affinity_node_load, read by us then given to
 *      hwloc as bytes); an accepted tree has at least one slot;
 *   2  a mapping file for 1..64 ranks on a 64-leaf tree (tmatch_map_read,
 *      tmatch_map_load): an accepted mapping places every rank on a distinct
 *      leaf of the tree;
 *   3  a cluster: the first line is the node list, the rest topology.conf
 *      (tmatch_place_tree_load "cluster:" with a small synthetic node): an
 *      accepted tree has 4 slots per node.
 * Files go through fuzz_file (an in-memory regular file). Specs whose trees would be large only
 * cost time: the readers' caps are tested by the unit tests, so inputs over 65,536 leaves are
 * skipped here.
 */
#include "affinity/affinity.h"
#include "placement/inputs.h"
#include "tests/fuzz/fuzz_input.h"
#include "treematch/treematch.h"

#include <ctype.h>
#include <dlfcn.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static hwloc_topology_t plugins_kept;

/* hwloc's components as the CLI's XML reader child loads them: users' XML
   files reach only the CLI, which reads them with libxml2 in a child
   (tmatch_place_node_load); slurmstepd reads only the admin's. The
   plugins that neither needs stay out, for speed. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl,hwloc_opencl,hwloc_pci", 0);
	/* libxml2 keeps what it last parsed in globals; hwloc's plugin unloads
	   it before the end, and LeakSanitizer then counted those blocks as
	   leaks of an unknown module (specs-corpus/xml-libxml-leak). */
	dlopen("libxml2.so.2", RTLD_NOW | RTLD_NODELETE);
	/* hwloc loads its plugins when the first topology is made and unloads
	   them when the last is destroyed: one kept for the whole run spares
	   a dlopen and dlclose per input, and the leak check those set off
	   (dlclose leaves glibc's own blocks behind, so libFuzzer ran the
	   input again), as in the CLI, which loads them once. */
	if (hwloc_topology_init(&plugins_kept) < 0)
		abort();
	return 0;
}

#define MAX_LEAVES 65536.0

/* An upper bound of the leaves a spec could describe: the product of the
   numbers after ':' (synthetic) or of every number (tleaf, costs included). */
static double leaves_bound(const char *s, int synthetic)
{
	double prod = 1;

	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p) || (p > s && isdigit((unsigned char)p[-1])))
			continue;
		if (synthetic && (p == s || p[-1] != ':'))
			continue;
		prod *= strtod(p, NULL) + 1;
		if (prod > MAX_LEAVES)
			return prod;
	}
	return prod;
}

static void topo_spec(const char *text)
{
	int synthetic = !strncmp(text, "synthetic:", 10);
	tmatch_error_t err;
	tmatch_topo_t *t;

	if (!synthetic && strncmp(text, "tleaf", 5) && !isdigit((unsigned char)text[0]))
		return; /* xml:, local and cluster: name files or this machine */
	if (leaves_bound(text, synthetic) > MAX_LEAVES)
		return;
	tmatch_error_clear(&err);
	t = tmatch_place_topo_load(text, &err);
	if (!t) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (tmatch_topo_nb_leaves(t) < 1)
		abort();
	if (!synthetic) { /* the printed form loads back to itself */
		char a[4096], b[4096];
		tmatch_topo_t *u;

		if (tmatch_topo_format(t, a, sizeof(a)) < 0)
			abort();
		u = tmatch_topo_from_tleaf(a, &err);
		if (!u || tmatch_topo_format(u, b, sizeof(b)) < 0 || strcmp(a, b) != 0 ||
		    tmatch_topo_nb_leaves(u) != tmatch_topo_nb_leaves(t))
			abort();
		tmatch_topo_destroy(u);
	}
	tmatch_topo_destroy(t);
}

static void xml_file(const uint8_t *data, size_t size)
{
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *tree;
	tmatch_error_t err;

	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = fuzz_file(data, size);
	tmatch_error_clear(&err);
	tree = tmatch_affinity_node_load(&o, &err);
	if (!tree) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (tmatch_affinity_tree_nb_slots(tree) < 1)
		abort();
	tmatch_affinity_tree_destroy(tree);
}

static void mapping_file(const uint8_t *data, size_t size)
{
	static tmatch_topo_t *topo;
	int leaf[64], line[64], used[64] = {0}, n;
	const char *path;
	tmatch_error_t err;

	if (!topo && !(topo = tmatch_topo_from_tleaf("tleaf 3 4 10 4 5 4 1", NULL)))
		abort();
	if (size < 1)
		return;
	n = 1 + data[0] % 64;
	path = fuzz_file(data + 1, size - 1);
	tmatch_error_clear(&err);
	if (tmatch_map_read(path, n, leaf, line, &err) < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	for (int r = 0; r < n; r++)
		if (leaf[r] < 0 || line[r] < 1)
			abort();
	if (tmatch_map_load(path, topo, n, leaf, &err) < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	for (int r = 0; r < n; r++) {
		if (leaf[r] >= 64 || used[leaf[r]])
			abort();
		used[leaf[r]] = 1;
	}
}

static void cluster(char *text)
{
	char *nl = strchr(text, '\n'), *spec;
	const char *conf;
	tmatch_affinity_tree_t *tree;
	tmatch_error_t err;
	long nodes;
	size_t need;

	if (!nl)
		return;
	*nl = '\0';
	tmatch_error_clear(&err);
	nodes = tmatch_affinity_hostlist_count(text, 256, &err);
	if (nodes < 1 || nodes > 256)
		return;
	conf = fuzz_file((const uint8_t *)nl + 1, strlen(nl + 1));
	need = strlen(conf) + strlen(text) + 64;
	spec = malloc(need);
	if (!spec)
		return;
	snprintf(spec, need, "cluster:%s,%s,synthetic:pack:2 core:2 pu:1", conf, text);
	tree = tmatch_place_tree_load(spec, NULL, NULL, NULL, &err);
	free(spec);
	if (!tree) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (tmatch_affinity_tree_nb_slots(tree) != 4 * tmatch_affinity_tree_nb_nodes(tree) ||
	    tmatch_affinity_tree_nb_nodes(tree) != nodes)
		abort();
	tmatch_affinity_tree_destroy(tree);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, 65536);

	if (!text)
		return 0;
	switch (data[0] & 3) {
	case 0:
		topo_spec(text);
		break;
	case 1:
		xml_file(data + 1, size - 1);
		break;
	case 2:
		mapping_file(data + 1, size - 1);
		break;
	default:
		cluster(text);
		break;
	}
	free(text);
	return 0;
}
