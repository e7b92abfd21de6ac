/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_inputs.c - the synthetic:/xml:/local/cluster: branches of a
 * --topology SPEC (placement/inputs.c).
 */
#include "placement/inputs.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

#define FIX TMATCH_SRCDIR "/tests/fixtures/affinity/"

static void expect_tleaf(const char *spec, const char *want)
{
	tmatch_error_t err;
	char buf[256];
	tmatch_topo_t *t;
	memset(&err, 0, sizeof(err));
	t = tmatch_place_topo_load(spec, &err);
	cr_assert_not_null(t, "%s: %s", spec, err.msg);
	tmatch_topo_format(t, buf, sizeof(buf));
	cr_assert_str_eq(buf, want, "%s", spec);
	tmatch_topo_destroy(t);
}

Test(inputs, node_specs)
{
	expect_tleaf("synthetic:pack:2 l3:1 l2:4 l1d:1 core:1 pu:2", "tleaf 2 2 1 4 1");
	expect_tleaf("xml:" FIX "intel-2s-14c-smt.xml", "tleaf 2 2 1 14 1");
	expect_tleaf("xml:" FIX "partial-7c.xml", "tleaf 2 2 1 5 1");
}

Test(inputs, cluster_specs)
{
	/* the node list's commas inside brackets belong to it */
	expect_tleaf("cluster:" FIX "topo-2level.conf,n[1-2,5],synthetic:pack:2 core:2 pu:1",
	             "tleaf 4 2 1 2 1 2 1 2 1");
	expect_tleaf("cluster:" FIX "topo-3level.conf,cn[001-016],xml:" FIX "intel-1s-14c.xml",
	             "tleaf 4 2 1 2 1 4 1 14 1");
	/* no topology.conf: one flat switch */
	expect_tleaf("cluster:,a,synthetic:core:3 pu:1", "tleaf 1 3 1"); /* one node: merged */
	expect_tleaf("cluster:none,x[1-3],synthetic:core:2 pu:1", "tleaf 2 3 1 2 1");
	/* topology.yaml: its cluster default (a tree of 2 switches of 8 nodes) */
	expect_tleaf("cluster:" FIX "topology.yaml,node[01-16],synthetic:core:2 pu:1",
	             "tleaf 3 2 1 8 1 2 1");
	/* topology.conf's blocks: 4 blocks of 4 nodes under their aggregate */
	expect_tleaf("cluster:" FIX "topo-block.conf,node[01-16],synthetic:core:2 pu:1",
	             "tleaf 3 4 1 4 1 2 1");
}

Test(inputs, local_tree_has_slots)
{
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;
	memset(&err, 0, sizeof(err));
	t = tmatch_place_tree_load("local", NULL, NULL, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_geq(tmatch_affinity_tree_nb_slots(t), 1);
	tmatch_affinity_tree_destroy(t);
}

Test(inputs, errors)
{
	static const struct {
		const char *spec, *text;
	} bad[] = {
	    {"cluster:" FIX "topo-2level.conf", "cluster:<topology.yaml or .conf>"},
	    {"cluster:" FIX "topo-2level.conf,n1", "cluster:<topology.yaml or .conf>"},
	    {"cluster:" FIX "topo-2level.conf,n1,tleaf 2 2 1 2 1", "unknown node topology"},
	    {"cluster:" FIX "topo-2level.conf,n99,synthetic:core:2 pu:1", "n99 is under no switch"},
	    {"cluster:" FIX "bad-cycle.conf,n1,synthetic:core:2 pu:1", "cycle"},
	    {"xml:" FIX "missing.xml", "cannot open"},
	    {"synthetic:nonsense", "invalid hwloc synthetic"},
	};
	size_t i;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tmatch_error_t err;
		memset(&err, 0, sizeof(err));
		errno = 0;
		cr_assert_null(tmatch_place_topo_load(bad[i].spec, &err), "%s", bad[i].spec);
		cr_assert_neq(errno, 0);
		cr_assert(strstr(err.msg, bad[i].text), "%s: '%s'", bad[i].spec, err.msg);
	}
}

/* The CLI's XML goes through a child and comes back as hwloc's export: the
   same tree, leaf by leaf, as loading the file in this process. */
Test(inputs, xml_child_gives_the_same_tree)
{
	static const char *const files[] = {"intel-2s-14c-smt.xml", "partial-7c.xml",
	                                    "amd-2s-64c-nps4.xml"};
	size_t f;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[512], a[128], b[128];
		tmatch_affinity_opts_t o;
		tmatch_affinity_tree_t *direct, *child;
		tmatch_error_t err;
		int n, i;

		snprintf(path, sizeof(path), FIX "%s", files[f]);
		tmatch_affinity_opts_init(&o);
		o.source = TMATCH_AFFINITY_SRC_XML;
		o.input = path;
		o.smt = TMATCH_AFFINITY_SMT_ALL;
		memset(&err, 0, sizeof(err));
		direct = tmatch_affinity_node_load(&o, &err);
		cr_assert_not_null(direct, "%s: %s", path, err.msg);
		child = tmatch_place_node_load(&o, &err);
		cr_assert_not_null(child, "%s: %s", path, err.msg);
		n = tmatch_affinity_tree_nb_slots(direct);
		cr_assert_eq(tmatch_affinity_tree_nb_slots(child), n, "%s", path);
		tmatch_topo_format(tmatch_affinity_tree_topo(direct), a, sizeof(a));
		tmatch_topo_format(tmatch_affinity_tree_topo(child), b, sizeof(b));
		cr_assert_str_eq(a, b, "%s", path);
		for (i = 0; i < tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(direct)); i++) {
			cr_assert_eq(tmatch_affinity_leaf_is_real(direct, i),
			             tmatch_affinity_leaf_is_real(child, i));
			if (!tmatch_affinity_leaf_is_real(direct, i))
				continue;
			hwloc_bitmap_list_snprintf(a, sizeof(a),
			                           tmatch_affinity_leaf_cpuset(direct, i));
			hwloc_bitmap_list_snprintf(b, sizeof(b),
			                           tmatch_affinity_leaf_cpuset(child, i));
			cr_assert_str_eq(a, b, "%s leaf %d", path, i);
		}
		tmatch_affinity_tree_destroy(direct);
		tmatch_affinity_tree_destroy(child);
	}
}

/* A crafted XML on which hwloc 2.9's own reader (no libxml2) segfaults
   (found by fuzz_specs): the child dies, the caller gets an error naming
   the file and goes on. With a reader that refuses it instead, the same
   error path, without the signal. */
Test(inputs, xml_that_crashes_hwloc_costs_only_the_child)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;

	setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_xml_libxml", 1);
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = FIX "crafted-hwloc-crash.xml";
	memset(&err, 0, sizeof(err));
	errno = 0;
	cr_assert_null(tmatch_place_node_load(&o, &err));
	cr_assert_neq(errno, 0);
	cr_assert_str_eq(err.file, o.input);
	cr_assert(strstr(err.msg, "hwloc c"), "%s", err.msg);
	if (strstr(err.msg, "died"))
		cr_assert(strstr(err.msg, "XML reader process died with signal"), "%s", err.msg);
	/* and through a --topology spec, as the CLI gives it */
	memset(&err, 0, sizeof(err));
	cr_assert_null(tmatch_place_topo_load("xml:" FIX "crafted-hwloc-crash.xml", &err));
	cr_assert_str_eq(err.file, o.input);
}
