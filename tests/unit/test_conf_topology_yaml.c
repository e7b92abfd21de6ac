/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conf_topology_yaml.c - the networks of Slurm's topology plugins
 * as switch trees: every kind of topology.yaml (tree, block, flat, ring,
 * torus3d), topology.conf's BlockName/BlockSizes and RingName lines, the
 * choice of a topology (given, the partition's in slurm.conf, the cluster
 * default, the first), slurm.conf's NodeName ... Topology= moves, the file
 * found as Slurm finds it (topology.yaml first), and a block topology
 * keeping a block's nodes under one switch of the cluster tree. The bad
 * files and their messages are test_conf_topology_conf.c's fixtures.
 */
#include "affinity/affinity_private.h"
#include "conf/topology.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX TMATCH_SRCDIR "/tests/fixtures/affinity/"

static tmatch_affinity_conf_t *pick(const char *file, const char *topology, const char *slurm,
                                    const char *partition)
{
	tmatch_conf_topo_sel_t sel = {topology, partition, slurm, "slurm.conf"};
	tmatch_error_t err;
	tmatch_affinity_conf_t *c;

	tmatch_error_clear(&err);
	c = tmatch_conf_topology_load_sel(file, &sel, &err);
	cr_assert_not_null(c, "%s (%s): %s:%d:%d %s", file, topology ? topology : "default",
	                   err.file, err.line, err.column, err.msg);
	return c;
}

static const struct tmatch__sw *sw(const tmatch_affinity_conf_t *c, const char *name)
{
	for (int i = 0; i < c->nsw; i++)
		if (!strcmp(c->sw[i].name, name))
			return &c->sw[i];
	cr_assert_fail("no switch %s", name);
	return NULL;
}

/* The switch a node is under, or NULL. */
static const struct tmatch__sw *under(const tmatch_affinity_conf_t *c, const char *node)
{
	for (int i = 0; i < c->nsw; i++)
		for (int j = 0; j < c->sw[i].nnodes; j++)
			if (!strcmp(c->sw[i].nodes[j], node))
				return &c->sw[i];
	return NULL;
}

static const char *parent(const tmatch_affinity_conf_t *c, const struct tmatch__sw *s)
{
	return s->parent >= 0 ? c->sw[s->parent].name : "-";
}

Test(topology_yaml, tree_is_the_cluster_default)
{
	tmatch_affinity_conf_t *c = pick(FIX "topology.yaml", NULL, NULL, NULL);

	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "tree");
	cr_assert_str_eq(tmatch_affinity_conf_name(c), "ib");
	cr_assert_eq(c->nsw, 3);
	cr_assert_eq(sw(c, "top")->level, 1);
	cr_assert_eq(sw(c, "s1")->nnodes, 8);
	cr_assert_str_eq(parent(c, sw(c, "s2")), "top");
	cr_assert_eq(under(c, "node09"), sw(c, "s2"));
	tmatch_affinity_conf_destroy(c);
}

Test(topology_yaml, blocks_aggregated_as_slurm_does)
{
	/* block_sizes 4, 16: base blocks of 4 nodes, aggregates of 4 blocks */
	tmatch_affinity_conf_t *c = pick(FIX "topology.yaml", "nvl", NULL, NULL);

	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "block");
	cr_assert_eq(c->nsw, 5);
	for (int i = 1; i <= 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "b%d", i);
		cr_assert_eq(sw(c, name)->level, 0);
		cr_assert_eq(sw(c, name)->nnodes, 4);
		cr_assert_str_eq(parent(c, sw(c, name)), "b1..b4");
	}
	cr_assert_eq(sw(c, "b1..b4")->level, 1);
	cr_assert(sw(c, "b1..b4")->made);
	tmatch_affinity_conf_destroy(c);

	/* no sizes: 1, 2, 4 ... blocks; the last block fits the level below */
	c = pick(FIX "topology-one.yaml", NULL, NULL, NULL);
	cr_assert_str_eq(tmatch_affinity_conf_name(c), "only");
	cr_assert_eq(c->nsw, 5);
	cr_assert_str_eq(parent(c, sw(c, "a")), "a..b");
	cr_assert_str_eq(parent(c, sw(c, "b")), "a..b");
	cr_assert_str_eq(parent(c, sw(c, "c")), "a..c");
	cr_assert_str_eq(parent(c, sw(c, "a..b")), "a..c");
	cr_assert_eq(sw(c, "a..c")->level, 2);
	tmatch_affinity_conf_destroy(c);
}

Test(topology_yaml, flat_has_no_switch)
{
	const char *names[] = {"eth", "eth2"};

	for (int i = 0; i < 2; i++) {
		tmatch_affinity_conf_t *c = pick(FIX "topology.yaml", names[i], NULL, NULL);

		cr_assert_str_eq(tmatch_affinity_conf_kind(c), "flat");
		cr_assert_eq(tmatch_affinity_conf_nb_switches(c), 0);
		tmatch_affinity_conf_destroy(c);
	}
}

Test(topology_yaml, ring_as_nested_segments)
{
	/* r0: node01..06 in pairs, the first two pairs in a four, the ring on
	   top; r1 of two nodes holds them itself */
	tmatch_affinity_conf_t *c = pick(FIX "topology.yaml", "rings", NULL, NULL);

	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "ring");
	cr_assert_eq(under(c, "node01"), under(c, "node02"));
	cr_assert_neq(under(c, "node02"), under(c, "node03"));
	cr_assert_str_eq(under(c, "node01")->name, "r0/0-1");
	cr_assert_str_eq(parent(c, sw(c, "r0/0-1")), "r0/0-3");
	cr_assert_str_eq(parent(c, sw(c, "r0/2-3")), "r0/0-3");
	cr_assert_str_eq(parent(c, sw(c, "r0/4-5")), "r0");
	cr_assert_str_eq(parent(c, sw(c, "r0/0-3")), "r0");
	cr_assert_eq(sw(c, "r0")->level, 2);
	cr_assert_eq(under(c, "node07"), sw(c, "r1"));
	cr_assert_eq(sw(c, "r1")->nnodes, 2);
	tmatch_affinity_conf_destroy(c);
}

Test(topology_yaml, torus_as_its_placement_tiles)
{
	/* 4 x 2 x 2, nodes x first: node01 (0,0,0), node02 (1,0,0), node05
	   (0,1,0), node09 (0,0,1); tiles 2x1x1 under 2x2x2 under the torus */
	tmatch_affinity_conf_t *c = pick(FIX "topology.yaml", "pods", NULL, NULL);
	const struct tmatch__sw *t1 = under(c, "node01");

	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "torus3d");
	cr_assert_eq(t1, under(c, "node02"));
	cr_assert_neq(t1, under(c, "node03"));
	cr_assert_neq(t1, under(c, "node05"));
	cr_assert_eq(t1->nnodes, 2);
	cr_assert_eq(c->sw[t1->parent].nchild, 4);
	/* node01, 02, 05, 06, 09, 10, 13, 14 make the first 2x2x2 */
	cr_assert_eq(under(c, "node14")->parent, t1->parent);
	cr_assert_neq(under(c, "node03")->parent, t1->parent);
	cr_assert_str_eq(parent(c, &c->sw[t1->parent]), "pod1");
	cr_assert_eq(sw(c, "pod1")->level, 2);
	tmatch_affinity_conf_destroy(c);
}

Test(topology_conf, block_and_ring_lines)
{
	tmatch_affinity_conf_t *c = pick(FIX "topo-block.conf", NULL, NULL, NULL);

	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "block");
	cr_assert_str_eq(tmatch_affinity_conf_name(c), "default");
	cr_assert_str_eq(parent(c, sw(c, "b3")), "b1..b4");
	cr_assert_eq(under(c, "node12"), sw(c, "b3"));
	tmatch_affinity_conf_destroy(c);

	c = pick(FIX "topo-ring.conf", NULL, NULL, NULL);
	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "ring");
	/* eight nodes: four pairs, two fours, the ring */
	cr_assert_str_eq(parent(c, sw(c, "r0/6-7")), "r0/4-7");
	cr_assert_str_eq(parent(c, sw(c, "r0/0-3")), "r0");
	cr_assert_eq(sw(c, "r0")->level, 2);
	tmatch_affinity_conf_destroy(c);
}

static const char slurm_conf[] = "# slurm.conf's Topology= keys, nothing else is read\n"
                                 "ClusterName=x\n"
                                 "Include /nowhere/nodes.conf\n"
                                 "NodeName=DEFAULT CPUs=2\n"
                                 "NodeName=node[01-15] CPUs=2\n"
                                 "NodeName=node16 Topology=ib:top:s1\n"
                                 "NodeName=node17 Topology=ib:top:s3,nvl:b4\n"
                                 "PartitionName=DEFAULT Topology=nvl\n"
                                 "PartitionName=p1 Nodes=ALL Default=YES\n"
                                 "PartitionName=p2 Nodes=ALL Topology=rings \\\n"
                                 "   MaxTime=1\n"
                                 "PartitionName=p3 Nodes=ALL Topology=nope\n";

Test(topology_select, partition_default_given)
{
	tmatch_affinity_conf_t *c;
	tmatch_conf_topo_sel_t sel = {NULL, "p3", slurm_conf, "slurm.conf"};
	tmatch_error_t err;

	/* no partition: the Default=YES one, which takes PartitionName=DEFAULT's */
	c = pick(FIX "topology.yaml", NULL, slurm_conf, NULL);
	cr_assert_str_eq(tmatch_affinity_conf_name(c), "nvl");
	tmatch_affinity_conf_destroy(c);
	c = pick(FIX "topology.yaml", NULL, slurm_conf, "p2");
	cr_assert_str_eq(tmatch_affinity_conf_name(c), "rings");
	tmatch_affinity_conf_destroy(c);
	/* a name given outright wins */
	c = pick(FIX "topology.yaml", "eth", slurm_conf, "p2");
	cr_assert_str_eq(tmatch_affinity_conf_name(c), "eth");
	tmatch_affinity_conf_destroy(c);
	/* a partition slurm.conf does not know: the cluster default */
	c = pick(FIX "topology.yaml", NULL, slurm_conf, "elsewhere");
	cr_assert_str_eq(tmatch_affinity_conf_name(c), "ib");
	tmatch_affinity_conf_destroy(c);

	/* the partition's topology is not in the file: slurm.conf's line */
	tmatch_error_clear(&err);
	errno = 0;
	cr_assert_null(tmatch_conf_topology_load_sel(FIX "topology.yaml", &sel, &err));
	cr_assert_eq(errno, EINVAL);
	cr_assert_str_eq(err.file, "slurm.conf");
	cr_assert_eq(err.line, 12);
	cr_assert_not_null(strstr(err.msg, "'nope' is not in"), "%s", err.msg);
	sel.partition = NULL;
	sel.topology = "nowhere";
	cr_assert_null(tmatch_conf_topology_load_sel(FIX "topology.yaml", &sel, &err));
	cr_assert_not_null(strstr(err.msg, "no topology 'nowhere'"), "%s", err.msg);
	/* topology.conf holds one topology, "default" */
	sel.topology = "ib";
	cr_assert_null(tmatch_conf_topology_load_sel(FIX "topo-2level.conf", &sel, &err));
	cr_assert_not_null(strstr(err.msg, "named 'default'"), "%s", err.msg);
}

Test(topology_select, nodes_moved_as_slurmctld_does)
{
	/* ib: node16 moves from s2 to s1; node17 is put under s3, made under
	   top; nvl: node16 is named for ib only, so it leaves nvl */
	tmatch_affinity_conf_t *c = pick(FIX "topology.yaml", "ib", slurm_conf, NULL);

	cr_assert_eq(under(c, "node16"), sw(c, "s1"));
	cr_assert_eq(sw(c, "s2")->nnodes, 7);
	cr_assert_eq(under(c, "node17"), sw(c, "s3"));
	cr_assert_str_eq(parent(c, sw(c, "s3")), "top");
	cr_assert_eq(sw(c, "top")->level, 1);
	tmatch_affinity_conf_destroy(c);

	c = pick(FIX "topology.yaml", "nvl", slurm_conf, NULL);
	cr_assert_null(under(c, "node16"));
	cr_assert_eq(under(c, "node17"), sw(c, "b4"));
	cr_assert_eq(sw(c, "b4")->nnodes, 4);
	tmatch_affinity_conf_destroy(c);
}

Test(topology_select, bad_moves)
{
	static const struct {
		const char *conf, *topology, *text;
	} bad[] = {
	    {"NodeName=n1 Topology=ib:top\n", "ib", "'top' is not a leaf switch"},
	    {"NodeName=n1 Topology=ib:s9:s1\n", "ib", "no switch 's9' to start from"},
	    {"NodeName=n1 Topology=nvl:b9\n", "nvl", "has no block 'b9'"},
	    {"NodeName=n1 Topology=nvl:b1:b2\n", "nvl", "has no block"},
	    {"NodeName=n1 Topology=rings:r0:1\n", "rings", "moving nodes of a ring is not read"},
	    {"NodeName=n[1- Topology=ib:s1\n", "ib", "bad NodeName="},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tmatch_conf_topo_sel_t sel = {bad[i].topology, NULL, bad[i].conf, "s.conf"};
		tmatch_error_t err;

		tmatch_error_clear(&err);
		errno = 0;
		cr_assert_null(tmatch_conf_topology_load_sel(FIX "topology.yaml", &sel, &err), "%s",
		               bad[i].conf);
		cr_assert_eq(errno, EINVAL, "%s", bad[i].conf);
		cr_assert_str_eq(err.file, "s.conf");
		cr_assert_eq(err.line, 1, "%s", bad[i].conf);
		cr_assert_not_null(strstr(err.msg, bad[i].text), "%s: %s", bad[i].conf, err.msg);
	}
}

Test(topology_select, text_told_apart)
{
	tmatch_error_t err;
	tmatch_affinity_conf_t *c;

	tmatch_error_clear(&err);
	c = tmatch_conf_topology_parse("# a comment\n---\n- topology: t\n  flat: true\n", NULL,
	                               &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "flat");
	tmatch_affinity_conf_destroy(c);
	c = tmatch_conf_topology_parse("topology: t\nring:\n  rings:\n    - ring: r\n      nodes: "
	                               "n[1-3]\n",
	                               "inline", &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "ring");
	tmatch_affinity_conf_destroy(c);
	c = tmatch_conf_topology_parse("BlockName=a Nodes=n[1-2]\n", NULL, &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_assert_str_eq(tmatch_affinity_conf_kind(c), "block");
	tmatch_affinity_conf_destroy(c);
	/* a .conf name reads topology.conf's syntax whatever the text */
	errno = 0;
	cr_assert_null(tmatch_conf_topology_parse("- topology: t\n", "x.conf", &err));
	cr_assert_not_null(strstr(err.msg, "without '='"), "%s", err.msg);
	cr_assert_null(tmatch_affinity_conf_kind(NULL));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(tmatch_affinity_conf_name(NULL));
}

Test(topology_select, found_as_slurm_finds_it)
{
	char dir[] = "/tmp/tm-topo-XXXXXX", conf[80], path[80];
	char *found;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/slurm.conf", dir);
	errno = 0;
	cr_assert_null(tmatch_conf_topology_find(NULL, conf, 1));
	cr_assert_eq(errno, ENOENT);
	snprintf(path, sizeof(path), "%s/topology.conf", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("SwitchName=s Nodes=n1\n", f);
	fclose(f);
	found = tmatch_conf_topology_find(NULL, conf, 1);
	cr_assert_str_eq(found, path);
	free(found);
	/* Slurm ignores topology.conf once topology.yaml exists */
	snprintf(path, sizeof(path), "%s/topology.yaml", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("- topology: t\n  flat: true\n", f);
	fclose(f);
	found = tmatch_conf_topology_find(NULL, conf, 1);
	cr_assert_str_eq(found, path);
	free(found);
	/* a Slurm before 25.05 reads topology.conf whatever is beside it */
	found = tmatch_conf_topology_find(NULL, conf, 0);
	cr_assert_not_null(found);
	cr_assert_not_null(strstr(found, "/topology.conf"), "%s", found);
	free(found);
	found = tmatch_conf_topology_find("given.conf", conf, 1);
	cr_assert_str_eq(found, "given.conf");
	free(found);
	unlink(path);
	snprintf(path, sizeof(path), "%s/topology.conf", dir);
	unlink(path);
	rmdir(dir);
}

/* The cluster tree of a block topology: a block's nodes share the lowest
   switch, the next block's nodes do not. */
Test(topology_yaml, block_cluster_tree)
{
	tmatch_affinity_conf_t *c = pick(FIX "topology.yaml", "nvl", NULL, NULL);
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *node, *cl;
	tmatch_affinity_pos_t p[3];
	tmatch_error_t err;
	int leaf[3] = {0, 3, 4}, l; /* node01, node04, node05: one leaf each */

	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
	o.input = "pack:1 core:1 pu:1";
	node = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(node, "%s", err.msg);
	cl = tmatch_affinity_cluster_build(c, "node[01-08]", node, NULL, &err);
	cr_assert_not_null(cl, "%s", err.msg);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(tmatch_affinity_leaf_position(cl, leaf[i], &p[i], &err), 0, "%s",
		             err.msg);
	/* switch1 (the aggregate), switch (the blocks), node ... */
	cr_assert_str_eq(p[0].level[0].name, "switch1");
	for (l = 0; l < p[0].nlevels && strcmp(p[0].level[l].name, "switch"); l++)
		;
	cr_assert_lt(l, p[0].nlevels);
	cr_assert_eq(p[0].level[l].global, p[1].level[l].global);
	cr_assert_neq(p[0].level[l].global, p[2].level[l].global);
	cr_assert_eq(p[0].level[0].global, p[2].level[0].global);
	tmatch_affinity_tree_destroy(cl);
	tmatch_affinity_tree_destroy(node);
	tmatch_affinity_conf_destroy(c);
}
