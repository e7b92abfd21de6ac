/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_gpu.c - GPU steps (placement/gpu.c): the step's GPUs as
 * Slurm says them, Slurm's binding of GPUs to tasks as slurmstepd computes
 * it (checked against what Slurm 22.05 gave on the test cluster), the
 * decision (every rank's CPUs, GPUs and card together) on the real nodes of
 * ../shared/topologies and on nodes of our own design, the targets
 * measured on each (CPUs inside the GPU's locality, nothing given twice,
 * the card on the GPU's package, heavy cliques kept on one package: at most
 * 10 % of in-order's heavy traffic across packages), the binding of each
 * GPU per machine, following Slurm's explicit bindings, the bindings file,
 * and bad arguments.
 */
#include "affinity/affinity.h"
#include "placement/env.h"
#include "placement/gpu.h"
#include "placement/inputs.h"
#include "placement/node.h"
#include "tests/unit/gpu_xml.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
	tmatch_affinity_tree_t *tree;
	tmatch_affinity_devices_t *dev;
	tmatch_place_gpu_step_t step;
};

/* The plugin's tree for nlocal tasks and the node's devices; every GPU in
   the step unless `gpus` lists them. */
static void node_load(struct node *n, const char *xml, int nlocal, const char *gpus)
{
	char spec[4200], all[2048] = "";
	tmatch_error_t err;
	tmatch_place_gpu_env_t env = {0};

	snprintf(spec, sizeof(spec), "xml:%s", xml);
	n->tree = tmatch_place_node_tree_load(spec, nlocal, 1, 1, NULL, &err);
	cr_assert_not_null(n->tree, "%s: %s", xml, err.msg);
	n->dev = tmatch_affinity_tree_devices(n->tree, 0, &err);
	cr_assert_not_null(n->dev, "%s", err.msg);
	for (int g = 0; g < n->dev->ngpus; g++)
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%d", g ? "," : "",
		         n->dev->gpu[g].index);
	env.step_gpus = gpus ? gpus : all;
	cr_assert_eq(tmatch_place_gpu_step(n->dev, &env, &n->step, &err), 0, "%s", err.msg);
}

static void node_free(struct node *n)
{
	tmatch_affinity_devices_destroy(n->dev);
	tmatch_affinity_tree_destroy(n->tree);
}

/* Ranks in cliques (rank r in clique r % k) exchanging `heavy` with each
   other, and a ring of `light` through all of them. */
static tmatch_comm_t *cliques(int n, int k, double heavy, double light)
{
	int *src = malloc(sizeof(int) * (size_t)(n * n + n)),
	    *dst = malloc(sizeof(int) * (size_t)(n * n + n));
	double *w = malloc(sizeof(double) * (size_t)(n * n + n));
	size_t e = 0;
	tmatch_comm_t *c;

	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (heavy > 0 && a % k == b % k) {
				src[e] = a;
				dst[e] = b;
				w[e++] = heavy;
			}
	for (int a = 0; light > 0 && a < n && n > 1; a++) {
		src[e] = a;
		dst[e] = (a + 1) % n;
		w[e++] = light;
	}
	c = tmatch_comm_from_edges(n, e, src, dst, w, NULL);
	cr_assert_not_null(c);
	free(src);
	free(dst);
	free(w);
	return c;
}

static void in_init(tmatch_place_gpu_in_t *in, const struct node *n, const tmatch_comm_t *comm,
                    int nlocal)
{
	memset(in, 0, sizeof(*in));
	in->tree = n->tree;
	in->dev = n->dev;
	in->step = &n->step;
	in->comm = comm;
	in->nlocal = nlocal;
	in->seed = 1;
}

/* Packages that hold a GPU of the step. */
static int gpu_packages(const struct node *n)
{
	int seen[64] = {0}, count = 0;

	for (int i = 0; i < n->step.ngpus; i++) {
		int p = n->dev->gpu[n->step.gpu[i]].package + 1;

		if (p >= 0 && p < 64 && !seen[p]++)
			count++;
	}
	return count;
}

/*
 * The targets on one node for nlocal ranks (per_gpu tasks per GPU,
 * 1 GPU each): CPUs inside the GPU's locality, no CPU twice, no GPU twice
 * unless asked, the card on the GPU's package where it has one, and cliques
 * that in-order spreads over packages kept on one: at most 10 % of
 * in-order's heavy traffic between GPUs of two packages.
 */
static void check_targets(const char *what, const struct node *n, int nlocal, int per_gpu)
{
	int k = gpu_packages(n);
	tmatch_comm_t *all = cliques(nlocal, k, 1000, 1), *heavy = cliques(nlocal, k, 1000, 0);
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t ours, inorder;
	tmatch_place_gpu_eval_t e, h_ours, h_in;
	tmatch_error_t err;

	in_init(&in, n, all, nlocal);
	in.gpus_per_task = 1;
	cr_assert_eq(tmatch_place_gpu_decide(&in, &ours, &err), 0, "%s: %s", what, err.msg);
	cr_assert_eq(tmatch_place_gpu_in_order(&in, &inorder, &err), 0, "%s: %s", what, err.msg);
	cr_assert_eq(tmatch_place_gpu_evaluate(&in, &ours, &e, &err), 0, "%s", err.msg);
	cr_expect_eq(e.outside, 0, "%s: %d ranks outside their GPU's CPUs", what, e.outside);
	cr_expect_eq(ours.outside, 0, "%s", what);
	cr_expect_eq(e.cpu_shared, 0, "%s: %d ranks share CPUs", what, e.cpu_shared);
	if (per_gpu == 1)
		cr_expect_eq(e.gpu_shared, 0, "%s: %d GPUs given twice", what, e.gpu_shared);
	cr_expect_eq(e.nic_astray, 0, "%s: %d cards off their GPU's package", what, e.nic_astray);
	for (int i = 0; i < nlocal; i++) {
		cr_expect_eq(ours.ngpus[i], 1, "%s", what);
		cr_expect(tmatch_affinity_leaf_is_real(n->tree, ours.leaf[i]), "%s", what);
	}
	in.comm = heavy;
	cr_assert_eq(tmatch_place_gpu_evaluate(&in, &ours, &h_ours, &err), 0);
	cr_assert_eq(tmatch_place_gpu_evaluate(&in, &inorder, &h_in, &err), 0);
	if (k > 1 && nlocal >= 2 * k) { /* cliques of two ranks or more */
		cr_expect_gt(h_in.across_packages, 0, "%s: in-order does not spread the cliques",
		             what);
		cr_expect_leq(h_ours.across_packages, 0.10 * h_in.across_packages,
		              "%s: %.6g of the heavy traffic across packages, in-order %.6g", what,
		              h_ours.across_packages, h_in.across_packages);
	}
	tmatch_place_gpu_out_free(&ours);
	tmatch_place_gpu_out_free(&inorder);
	tmatch_comm_destroy(all);
	tmatch_comm_destroy(heavy);
}

/* ------------------------------------------------------------------------ */
/* The real nodes                                                            */

/* Each machine, the ranks per GPU it is checked with (the CPUs of the XML
   file bound it: DGX-2's export holds 4), and each GPU's binding for one
   rank per GPU (whoever gets it): its CPUs and card. */
static const struct machine {
	const char *file;
	int per_gpu;
	int ranks; /* 0: per_gpu x the GPUs */
	const char *gpus;
	const char *bindings;
} machines[] = {
    {"flux-ipa20.xml", 2, 0, NULL,
     "0 cpus=42,154 nic=mlx5_0;1 cpus=14,126 nic=mlx5_2;2 cpus=98,210 nic=mlx5_3;"
     "3 cpus=70,182 nic=mlx5_3;"},
    {"flux-tuo.SPX.xml", 4, 0, NULL,
     "0 cpus=0,96 nic=hsi0;1 cpus=24,120 nic=hsi1;2 cpus=48,144 nic=hsi2;"
     "3 cpus=72,168 nic=hsi3;"},
    {"flux-tuo.CPX.xml", 1, 0, NULL,
     "0 cpus=0,96 nic=hsi0;1 cpus=1,97 nic=hsi0;2 cpus=2,98 nic=hsi0;3 cpus=3,99 nic=hsi0;"
     "4 cpus=4,100 nic=hsi0;5 cpus=5,101 nic=hsi0;6 cpus=24,120 nic=hsi1;7 cpus=25,121 "
     "nic=hsi1;8 cpus=26,122 nic=hsi1;9 cpus=27,123 nic=hsi1;10 cpus=28,124 nic=hsi1;"
     "11 cpus=29,125 nic=hsi1;12 cpus=48,144 nic=hsi2;13 cpus=49,145 nic=hsi2;14 cpus=50,146 "
     "nic=hsi2;15 cpus=51,147 nic=hsi2;16 cpus=52,148 nic=hsi2;17 cpus=53,149 nic=hsi2;"
     "18 cpus=72,168 nic=hsi3;19 cpus=73,169 nic=hsi3;20 cpus=74,170 nic=hsi3;21 cpus=75,171 "
     "nic=hsi3;22 cpus=76,172 nic=hsi3;23 cpus=77,173 nic=hsi3;"},
    {"mpibind-eas-tioga.xml", 4, 0, NULL,
     "0 cpus=48,112 nic=hsi0;1 cpus=56,120 nic=hsi0;2 cpus=16,80 nic=hsi1;3 cpus=24,88 "
     "nic=hsi1;4 cpus=0,64 nic=hsi2;5 cpus=8,72 nic=hsi2;6 cpus=32,96 nic=hsi3;7 cpus=40,104 "
     "nic=hsi3;"},
    {"hwloc-nvidiaDGX2.xml", 1, 0, "0,1,8,9",
     "0 cpus=0 nic=-;1 cpus=1 nic=-;8 cpus=24 nic=-;9 "
     "cpus=25 nic=-;"},
    {"hwloc-power8gpudistances.xml", 4, 0, NULL,
     "0 cpus=0-1 nic=-;1 cpus=8-9 nic=-;2 cpus=80-81 nic=-;3 cpus=88-89 nic=-;"},
    {"mpibind-coral-lassen.xml", 4, 0, NULL,
     "0 cpus=8-11 nic=mlx5_0;1 cpus=12-15 nic=mlx5_1;2 cpus=96-99 nic=mlx5_2;3 cpus=100-103 "
     "nic=mlx5_3;"},
    {"mpibind-cts1-pascal.xml", 4, 0, NULL, "0 cpus=0,36 nic=mlx5_0;1 cpus=1,37 nic=mlx5_0;"},
    {"mpibind-g4dnmetal.xml", 2, 0, NULL,
     "0 cpus=0,48 nic=rdmap197s0;1 cpus=1,49 nic=rdmap197s0;2 cpus=2,50 nic=rdmap197s0;"
     "3 cpus=3,51 nic=rdmap197s0;4 cpus=24,72 nic=rdmap197s0;5 cpus=25,73 nic=rdmap197s0;"
     "6 cpus=26,74 nic=rdmap197s0;7 cpus=27,75 nic=rdmap197s0;"},
    {"mpibind-epyc-corona.xml", 3, 0, NULL,
     "0 cpus=6,54 nic=mlx5_0;1 cpus=12,60 nic=mlx5_0;2 cpus=30,78 nic=mlx5_0;3 cpus=42,90 "
     "nic=mlx5_0;"},
};

/* "INDEX cpus=LIST nic=NAME;" for each GPU of one rank per GPU, by index. */
static void per_gpu_bindings(const struct node *n, char *buf, size_t len)
{
	int nl = n->step.ngpus;
	tmatch_comm_t *ring = cliques(nl, 1, 0, 1);
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t out;
	tmatch_error_t err;

	in_init(&in, n, ring, nl);
	in.gpus_per_task = 1;
	cr_assert_eq(tmatch_place_gpu_decide(&in, &out, &err), 0, "%s", err.msg);
	buf[0] = '\0';
	for (int s = 0; s < nl; s++)
		for (int i = 0; i < nl; i++) {
			char *cpus;

			if (out.gpu[(size_t)i * (size_t)out.stride] != n->step.gpu[s])
				continue;
			cpus = tmatch_affinity_cpuset_list(
			    tmatch_affinity_leaf_cpuset(n->tree, out.leaf[i]));
			snprintf(buf + strlen(buf), len - strlen(buf), "%d cpus=%s nic=%s;",
			         n->step.index[s], cpus,
			         out.nic[i] >= 0 ? n->dev->nic[out.nic[i]].name : "-");
			free(cpus);
		}
	tmatch_place_gpu_out_free(&out);
	tmatch_comm_destroy(ring);
}

Test(placement_gpu, real_nodes)
{
	const char *dir = gpu_xml_shared_dir();

	if (!dir) {
		fprintf(stderr,
		        "placement_gpu: ../shared/topologies absent: real nodes not read\n");
		cr_skip_test("../shared/topologies absent");
	}
	for (size_t m = 0; m < sizeof(machines) / sizeof(machines[0]); m++) {
		const struct machine *x = &machines[m];
		char path[4200], got[4096], what[300];
		struct node n;
		int ranks;

		snprintf(path, sizeof(path), "%s/%s", dir, x->file);
		/* one rank per GPU: each GPU's binding */
		memset(&n, 0, sizeof(n));
		node_load(&n, path, 1, x->gpus);
		ranks = n.step.ngpus;
		node_free(&n);
		node_load(&n, path, ranks, x->gpus);
		per_gpu_bindings(&n, got, sizeof(got));
		cr_expect_str_eq(got, x->bindings, "%s: %s", x->file, got);
		snprintf(what, sizeof(what), "%s, 1 rank per GPU", x->file);
		check_targets(what, &n, ranks, 1);
		node_free(&n);
		/* several ranks per GPU */
		ranks = x->ranks ? x->ranks : x->per_gpu * ranks;
		if (x->per_gpu > 1) {
			node_load(&n, path, ranks, x->gpus);
			snprintf(what, sizeof(what), "%s, %d ranks per GPU", x->file, x->per_gpu);
			check_targets(what, &n, ranks, x->per_gpu);
			node_free(&n);
		}
	}
}

/* "NAME: VAR=VALUE VAR=VALUE;" for each card of the node: the variables
   tmatch_place_nic_vars gives a task on that card. */
static void nic_vars_text(const tmatch_affinity_devices_t *dev, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int k = 0; k < dev->nnics; k++) {
		tmatch_place_nic_var_t var[TMATCH_PLACE_NIC_VARS];
		int nv = tmatch_place_nic_vars(&dev->nic[k], var);

		snprintf(buf + strlen(buf), len - strlen(buf), "%s:", dev->nic[k].name);
		for (int v = 0; v < nv; v++)
			snprintf(buf + strlen(buf), len - strlen(buf), " %s=%s", var[v].name,
			         var[v].value);
		snprintf(buf + strlen(buf), len - strlen(buf), ";");
	}
}

/* Each kind of card gets the variables its library reads, and no other
   library's: InfiniBand UCX's and openib's, EFA libfabric's efa provider's
   (the verbs device), Slingshot the cxi provider's (the CXI device hwloc
   2.14 shows beside the interface, whichever hwloc lists first). */
Test(placement_gpu, nic_vars_by_kind_of_card)
{
	static const struct {
		const char *kind, *want;
	} cases[] = {
	    {"mlx5", "mlx5_0: UCX_NET_DEVICES=mlx5_0:1 OMPI_MCA_btl_openib_if_include=mlx5_0:1;"
	             "mlx5_8: UCX_NET_DEVICES=mlx5_8:1 OMPI_MCA_btl_openib_if_include=mlx5_8:1;"},
	    {"efa", "rdmap128s0: FI_EFA_IFACE=rdmap128s0;rdmap144s0: FI_EFA_IFACE=rdmap144s0;"},
	    {"cxi", "cxi0: FI_CXI_DEVICE_NAME=cxi0;cxi1: FI_CXI_DEVICE_NAME=cxi1;"},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		gpu_node_spec_t spec = {.packages = 2,
		                        .numa_per_package = 1,
		                        .cores_per_numa = 2,
		                        .gpus_per_numa = 1,
		                        .nics_per_numa = 1,
		                        .backend = !strcmp(cases[c].kind, "cxi") ? "rsmi" : "nvml",
		                        .nic_kind = cases[c].kind};
		char xml[64], got[1024];
		struct node n;

		cr_assert_eq(gpu_xml_write(&spec, xml, sizeof(xml)), 0);
		node_load(&n, xml, 2, NULL);
		cr_assert_eq(n.dev->nnics, 2, "%s", cases[c].kind);
		nic_vars_text(n.dev, got, sizeof(got));
		cr_expect_str_eq(got, cases[c].want, "%s: %s", cases[c].kind, got);
		if (!strcmp(cases[c].kind, "cxi")) {
			cr_expect_str_eq(n.dev->nic[0].kind, "Slingshot");
			cr_expect_str_eq(n.dev->nic[0].netdev, "hsn0");
			cr_expect_eq(n.dev->nic[0].pci_vendor, 0x17db);
		}
		node_free(&n);
		unlink(xml);
	}
	cr_expect_eq(tmatch_place_nic_vars(NULL, NULL), 0);
}

/* The real nodes' cards: H100's mlx5 (UCX), g4dn's EFA, and the Slingshot
   cards of files exported before hwloc showed CXI devices (only hsiN):
   none, their CXI device's name cannot be told. */
Test(placement_gpu, nic_vars_on_real_nodes)
{
	static const struct {
		const char *file, *want;
	} cases[] = {
	    {"flux-ipa20.xml",
	     "mlx5_0: UCX_NET_DEVICES=mlx5_0:1 OMPI_MCA_btl_openib_if_include=mlx5_0:1;"
	     "mlx5_1: UCX_NET_DEVICES=mlx5_1:1 OMPI_MCA_btl_openib_if_include=mlx5_1:1;"
	     "mlx5_2: UCX_NET_DEVICES=mlx5_2:1 OMPI_MCA_btl_openib_if_include=mlx5_2:1;"
	     "mlx5_3: UCX_NET_DEVICES=mlx5_3:1 OMPI_MCA_btl_openib_if_include=mlx5_3:1;"},
	    {"mpibind-g4dnmetal.xml", "rdmap197s0: FI_EFA_IFACE=rdmap197s0;"},
	    {"mpibind-eas-tioga.xml", "hsi0:;hsi1:;hsi2:;hsi3:;"},
	    {"flux-tuo.SPX.xml", "hsi0:;hsi1:;hsi2:;hsi3:;"},
	};
	const char *dir = gpu_xml_shared_dir();

	if (!dir) {
		fprintf(stderr,
		        "placement_gpu: ../shared/topologies absent: real cards not read\n");
		cr_skip_test("../shared/topologies absent");
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char path[4200], got[1024];
		struct node n;

		snprintf(path, sizeof(path), "%s/%s", dir, cases[c].file);
		node_load(&n, path, 1, NULL);
		nic_vars_text(n.dev, got, sizeof(got));
		cr_expect_str_eq(got, cases[c].want, "%s: %s", cases[c].file, got);
		node_free(&n);
	}
}

/* ------------------------------------------------------------------------ */
/* Nodes of our own design                                                   */

static const gpu_node_spec_t designs[] = {
    /* 8 GPUs on 2 packages of 4 NUMA nodes, NVLink pairs, cards on every other NUMA */
    {.packages = 2,
     .numa_per_package = 4,
     .cores_per_numa = 16,
     .gpus_per_numa = 1,
     .nics_per_numa = 1,
     .nic_numa_stride = 2,
     .backend = "nvml",
     .links = "NVLinkBandwidth",
     .island_gpus = 2},
    /* 4 packages, 2 NUMA nodes each, 2 GPUs per NUMA, one card per package */
    {.packages = 4,
     .numa_per_package = 2,
     .cores_per_numa = 8,
     .smt = 2,
     .gpus_per_numa = 2,
     .nics_per_numa = 1,
     .nic_numa_stride = 2,
     .backend = "rsmi",
     .links = "XGMIBandwidth"},
    /* 2 packages of one NUMA node, 3 devices of 4 partitions each, Level Zero */
    {.packages = 2,
     .numa_per_package = 1,
     .cores_per_numa = 24,
     .gpus_per_numa = 3,
     .partitions = 4,
     .nics_per_numa = 2,
     .backend = "ze"},
    /* bare PCI GPUs (what slurmstepd sees), 3 packages */
    {.packages = 3,
     .numa_per_package = 2,
     .cores_per_numa = 4,
     .gpus_per_numa = 1,
     .nics_per_numa = 1,
     .backend = "pci"},
};

Test(placement_gpu, nodes_of_our_design)
{
	for (size_t d = 0; d < sizeof(designs) / sizeof(designs[0]); d++) {
		char xml[64], what[64];
		struct node n;
		int ng, slots;

		cr_assert_eq(gpu_xml_write(&designs[d], xml, sizeof(xml)), 0);
		node_load(&n, xml, 1, NULL);
		ng = n.step.ngpus;
		slots = tmatch_affinity_tree_nb_slots(n.tree);
		node_free(&n);
		for (int per = 1; per <= 3 && per * ng <= slots; per++) {
			node_load(&n, xml, per * ng, NULL);
			snprintf(what, sizeof(what), "design %zu, %d per GPU", d, per);
			check_targets(what, &n, per * ng, per);
			node_free(&n);
		}
		unlink(xml);
	}
}

/* Several GPUs per rank: they are taken close together (one NUMA node,
   one island), and the rank's CPUs inside their locality. */
Test(placement_gpu, gpus_per_task_close_together)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 2,
	                     .cores_per_numa = 4,
	                     .gpus_per_numa = 2,
	                     .nics_per_numa = 1,
	                     .backend = "nvml",
	                     .links = "NVLinkBandwidth",
	                     .island_gpus = 2};
	char xml[64];
	struct node n;
	tmatch_comm_t *c = cliques(4, 1, 0, 1);
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t out;
	tmatch_place_gpu_eval_t e;
	tmatch_error_t err;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	node_load(&n, xml, 4, NULL);
	in_init(&in, &n, c, 4);
	cr_assert_eq(tmatch_place_gpu_decide(&in, &out, &err), 0, "%s", err.msg);
	cr_assert_eq(out.stride, 2);
	for (int i = 0; i < 4; i++) {
		int a = out.gpu[i * 2], b = out.gpu[i * 2 + 1];

		cr_expect_eq(out.ngpus[i], 2);
		cr_expect_eq(n.dev->gpu[a].numa, n.dev->gpu[b].numa, "rank %d: GPUs %d and %d", i,
		             a, b);
		cr_expect_eq(n.dev->gpu[a].island, n.dev->gpu[b].island);
	}
	cr_assert_eq(tmatch_place_gpu_evaluate(&in, &out, &e, &err), 0);
	cr_expect_eq(e.outside, 0);
	cr_expect_eq(e.gpu_shared, 0);
	tmatch_place_gpu_out_free(&out);
	/* 3 GPUs per task on 8 GPUs, 2 tasks: refused when asked for more */
	in.gpus_per_task = 9;
	cr_expect_eq(tmatch_place_gpu_decide(&in, &out, &err), -1);
	cr_expect_eq(errno, EINVAL);
	node_free(&n);
	tmatch_comm_destroy(c);
	unlink(xml);
}

/* More ranks than GPUs: every GPU its share (4 or 5 of 18 ranks on 4 GPUs),
   the ranks that exchange most on one GPU. */
Test(placement_gpu, ranks_share_gpus_evenly)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 12,
	                     .gpus_per_numa = 2,
	                     .backend = "nvml"};
	char xml[64];
	struct node n;
	tmatch_comm_t *c = cliques(18, 4, 1000, 1);
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t out;
	tmatch_place_gpu_eval_t e;
	tmatch_error_t err;
	int held[4] = {0};

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	node_load(&n, xml, 18, NULL);
	in_init(&in, &n, c, 18);
	cr_assert_eq(tmatch_place_gpu_decide(&in, &out, &err), 0, "%s", err.msg);
	for (int i = 0; i < 18; i++)
		held[out.gpu[i * out.stride]]++;
	for (int g = 0; g < 4; g++)
		cr_expect(held[g] == 4 || held[g] == 5, "GPU %d holds %d ranks", g, held[g]);
	cr_assert_eq(tmatch_place_gpu_evaluate(&in, &out, &e, &err), 0);
	cr_expect_eq(e.outside, 0);
	cr_expect_eq(e.cpu_shared, 0);
	/* most of the cliques' traffic on one GPU */
	cr_expect_gt(e.traffic[TMATCH_GPU_LINK_SAME], 0.5 * e.total, "%.6g of %.6g",
	             e.traffic[TMATCH_GPU_LINK_SAME], e.total);
	tmatch_place_gpu_out_free(&out);
	/* --ntasks-per-gpu=2 for 18 ranks on 4 GPUs: too few */
	in.tasks_per_gpu = 2;
	cr_expect_eq(tmatch_place_gpu_decide(&in, &out, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect(strstr(err.msg, "18 tasks here for 4 GPU units of 2 tasks"), "%s", err.msg);
	node_free(&n);
	tmatch_comm_destroy(c);
	unlink(xml);
}

/* The step's cores on one package only: GPUs of the other package get the
   nearest CPUs left, counted as outside; nothing is given twice. */
Test(placement_gpu, too_few_cpus_near_a_gpu)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 4,
	                     .gpus_per_numa = 1,
	                     .backend = "nvml"};
	char xml[64], spec[80];
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	struct node n;
	tmatch_place_gpu_env_t env = {.step_gpus = "0,1"};
	tmatch_comm_t *c = cliques(2, 1, 0, 1);
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t out;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	snprintf(spec, sizeof(spec), "xml:%s", xml);
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = xml;
	o.io = 1;
	o.alloc_cores = "0-1"; /* package 0's */
	n.tree = tmatch_place_node_tree(&o, 2, NULL, &err);
	cr_assert_not_null(n.tree, "%s", err.msg);
	n.dev = tmatch_affinity_tree_devices(n.tree, 0, &err);
	cr_assert_eq(tmatch_place_gpu_step(n.dev, &env, &n.step, &err), 0);
	in_init(&in, &n, c, 2);
	cr_assert_eq(tmatch_place_gpu_decide(&in, &out, &err), 0, "%s", err.msg);
	cr_expect_eq(out.outside, 1);
	cr_expect_neq(out.leaf[0], out.leaf[1]);
	cr_expect_neq(out.gpu[0], out.gpu[out.stride]);
	tmatch_place_gpu_out_free(&out);
	node_free(&n);
	tmatch_comm_destroy(c);
	unlink(xml);
}

/* ------------------------------------------------------------------------ */
/* Slurm's words                                                             */

Test(placement_gpu, step_from_slurm)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 1,
	                     .gpus_per_numa = 2,
	                     .backend = "nvml"};
	char xml[64];
	struct node n;
	tmatch_place_gpu_env_t env = {0};
	tmatch_place_gpu_step_t st;
	tmatch_error_t err;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	node_load(&n, xml, 2, NULL);
	/* --gpus-per-task=1 without ConstrainDevices (Slurm 22.05 on the test
	   cluster): the same list everywhere */
	env.step_gpus = "0,2";
	env.cuda = env.rocr = env.ze = env.ordinal = "0,2";
	cr_assert_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), 0, "%s", err.msg);
	cr_expect_eq(st.ngpus, 2);
	cr_expect_eq(st.index[1], 2);
	cr_expect_eq(st.gpu[1], 2);
	cr_expect_eq(st.relative, 0);
	cr_expect_eq(st.constrained, 0);
	cr_expect_eq(st.vars, 15u);
	/* with ConstrainDevices the vendors' lists count from 0 */
	env.cuda = env.rocr = env.ze = env.ordinal = "0,1";
	cr_assert_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), 0);
	cr_expect_eq(st.relative, 1);
	cr_expect_eq(st.constrained, 1);
	/* GPUs 0,1: the lists agree, cgroup.conf tells */
	env.step_gpus = "0-1";
	env.rocr = env.ze = env.ordinal = NULL;
	env.cgroup_conf = "# site\nCgroupPlugin=autodetect\n  constraindevices = Yes\n";
	cr_assert_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), 0);
	cr_expect_eq(st.relative, 0);
	cr_expect_eq(st.constrained, 1);
	cr_expect_eq(st.vars, (unsigned)TMATCH_GPU_VAR_CUDA);
	env.cgroup_conf = "ConstrainDevices=no\nConstrainCores=yes\n";
	cr_assert_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), 0);
	cr_expect_eq(st.constrained, 0);
	/* no GPU */
	env.step_gpus = NULL;
	cr_expect_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), 1);
	env.step_gpus = "";
	cr_expect_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), 1);
	/* a GPU the node does not have, a malformed list */
	env.step_gpus = "1,7";
	cr_expect_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect(strstr(err.msg, "SLURM_STEP_GPUS names GPU 7, and this node has 4 GPUs"), "%s",
	          err.msg);
	cr_expect_eq(st.ngpus, 0);
	env.step_gpus = "0,x";
	cr_expect_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), -1);
	cr_expect(strstr(err.msg, "SLURM_STEP_GPUS"), "%s", err.msg);
	cr_expect_eq(tmatch_place_gpu_step(NULL, &env, &st, &err), -1);
	node_free(&n);
	unlink(xml);
}

/* Slurm's bindings as slurmstepd 22.05 made them on the test cluster (4
   stand-in GPUs, two sockets with Cores= per socket, 2 tasks): per_task:1
   gave 0 / 2, map_gpu:3,2,1,0 gave 3 / 2; with ConstrainDevices the same
   devices (the tasks could open those only). */
Test(placement_gpu, slurm_bindings)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 1,
	                     .gpus_per_numa = 2,
	                     .backend = "nvml"};
	static const struct {
		const char *tres, *step, *vendor;
		int nlocal, kind;
		const char *expect; /* GPU positions of each task, "0|2" */
	} cases[] = {
	    {"gpu:per_task:1", "0,2", "0,2", 2, TMATCH_GPU_BIND_PER_TASK, "0|2"},
	    {"gpu:per_task:1", "0,2", "0,1", 2, TMATCH_GPU_BIND_PER_TASK, "0|2"},
	    {"gpu:per_task:2", "0-3", "0-3", 2, TMATCH_GPU_BIND_PER_TASK, "0,1|2,3"},
	    {"gpu:map_gpu:3,2,1,0", "0-3", "0-3", 2, TMATCH_GPU_BIND_MAP, "3|2"},
	    {"gpu:verbose,map_gpu:3,2,1,0", "0-3", "0-3", 4, TMATCH_GPU_BIND_MAP, "3|2|1|0"},
	    /* relative under ConstrainDevices: the step's second and first GPU */
	    {"gpu:map_gpu:1,0", "1,3", "0,1", 2, TMATCH_GPU_BIND_MAP, "3|1"},
	    /* a GPU outside the step: the step's first, as Slurm */
	    {"gpu:map_gpu:0", "2,3", "2,3", 1, TMATCH_GPU_BIND_MAP, "2"},
	    {"gpu:map_gpu:0*2,3", "0-3", "0-3", 4, TMATCH_GPU_BIND_MAP, "0|0|3|0"},
	    {"gpu:mask_gpu:0x3,0xc", "0-3", "0-3", 2, TMATCH_GPU_BIND_MASK, "0,1|2,3"},
	    /* Slurm 23.11's words (--tres-bind), another TRES after a '+' */
	    {"gres/gpu:map:3,2+gres/nic:closest", "0-3", "0-3", 2, TMATCH_GPU_BIND_MAP, "3|2"},
	    {"gres/gpu:verbose,mask:0xc,0x3", "0-3", "0-3", 2, TMATCH_GPU_BIND_MASK, "2,3|0,1"},
	    {"gres/gpu:per_task:2", "0-3", "0-3", 2, TMATCH_GPU_BIND_PER_TASK, "0,1|2,3"},
	    {"gres/gpu:none", "0-3", "0-3", 2, TMATCH_GPU_BIND_NONE, ""},
	    {"gpu:single:2", "0-3", "0-3", 4, TMATCH_GPU_BIND_SINGLE, "0|0|1|1"},
	    {"gpu:single:1", "0,1", "0,1", 3, TMATCH_GPU_BIND_SINGLE, "0|1|0"},
	    {"gpu:closest", "0-3", "0-3", 2, TMATCH_GPU_BIND_CLOSEST, ""},
	    {NULL, "0-3", "0-3", 2, TMATCH_GPU_BIND_NONE, ""},
	    {"", "0-3", "0-3", 2, TMATCH_GPU_BIND_NONE, ""},
	};
	char xml[64];
	struct node n;
	tmatch_error_t err;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	node_load(&n, xml, 2, NULL);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		tmatch_place_gpu_env_t env = {.step_gpus = cases[c].step, .cuda = cases[c].vendor};
		tmatch_place_gpu_step_t st;
		int gpus[64], count[8], kind = -1;
		char got[128] = "";

		cr_assert_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), 0);
		cr_assert_eq(tmatch_place_gpu_slurm_bind(cases[c].tres, &st, cases[c].nlocal, &kind,
		                                         gpus, count, &err),
		             0, "%s: %s", cases[c].tres, err.msg);
		cr_expect_eq(kind, cases[c].kind, "%s", cases[c].tres);
		for (int i = 0; kind != TMATCH_GPU_BIND_NONE && kind != TMATCH_GPU_BIND_CLOSEST &&
		                i < cases[c].nlocal;
		     i++)
			for (int j = 0; j < count[i]; j++)
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d",
				         j   ? ","
				         : i ? "|"
				             : "",
				         gpus[i * st.ngpus + j]);
		cr_expect_str_eq(got, cases[c].expect, "%s on %s: %s", cases[c].tres, cases[c].step,
		                 got);
	}
	{
		tmatch_place_gpu_env_t env = {.step_gpus = "0-3"};
		tmatch_place_gpu_step_t st;
		int gpus[64], count[8], kind;

		cr_assert_eq(tmatch_place_gpu_step(n.dev, &env, &st, &err), 0);
		errno = 0;
		cr_expect_eq(
		    tmatch_place_gpu_slurm_bind("gpu:map_gpu:4", &st, 1, &kind, gpus, count, &err),
		    -1);
		cr_expect_eq(errno, EINVAL);
		cr_expect(strstr(err.msg, "4 is not a GPU number of this node's 4 GPUs"), "%s",
		          err.msg);
		cr_expect_eq(tmatch_place_gpu_slurm_bind("gpu:mask_gpu:0x10", &st, 1, &kind, gpus,
		                                         count, &err),
		             -1);
		cr_expect_eq(
		    tmatch_place_gpu_slurm_bind("gpu:map_gpu:", &st, 1, &kind, gpus, count, &err),
		    -1);
		cr_expect_eq(tmatch_place_gpu_slurm_bind("gpu:per_task:1", NULL, 1, &kind, gpus,
		                                         count, &err),
		             -1);
		/* the kind alone */
		cr_expect_eq(
		    tmatch_place_gpu_slurm_bind("gpu:single:1", &st, 1, &kind, NULL, NULL, &err),
		    0);
		cr_expect_eq(kind, TMATCH_GPU_BIND_SINGLE);
	}
	node_free(&n);
	unlink(xml);
}

/* An explicit binding is kept and the CPUs follow it: inside each GPU's
   locality, the ranks in the order of an earlier decision. */
Test(placement_gpu, cpus_follow_slurms_binding)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 2,
	                     .cores_per_numa = 4,
	                     .gpus_per_numa = 1,
	                     .nics_per_numa = 1,
	                     .backend = "nvml"};
	char xml[64];
	struct node n;
	tmatch_comm_t *c = cliques(4, 2, 1000, 1);
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t out;
	tmatch_place_gpu_eval_t e;
	tmatch_error_t err;
	int fixed[16], count[4], kind;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	node_load(&n, xml, 4, NULL);
	cr_assert_eq(tmatch_place_gpu_slurm_bind("gpu:map_gpu:3,3,0,1", &n.step, 4, &kind, fixed,
	                                         count, &err),
	             0);
	in_init(&in, &n, c, 4);
	in.fixed = fixed;
	in.fixed_count = count;
	cr_assert_eq(tmatch_place_gpu_decide(&in, &out, &err), 0, "%s", err.msg);
	cr_expect_eq(out.gpu[0], 3);
	cr_expect_eq(out.gpu[out.stride], 3);
	cr_expect_eq(out.gpu[2 * out.stride], 0);
	cr_expect_eq(out.gpu[3 * out.stride], 1);
	cr_assert_eq(tmatch_place_gpu_evaluate(&in, &out, &e, &err), 0);
	cr_expect_eq(e.outside, 0);
	cr_expect_eq(e.cpu_shared, 0);
	cr_expect_eq(e.gpu_shared, 1);
	cr_expect_eq(n.dev->nic[out.nic[0]].numa, 3);
	tmatch_place_gpu_out_free(&out);
	node_free(&n);
	tmatch_comm_destroy(c);
	unlink(xml);
}

/* ------------------------------------------------------------------------ */
/* The bindings file                                                         */

static char *write_text(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/tmatch-bind-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

Test(placement_gpu, bindings_file)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 2,
	                     .gpus_per_numa = 1,
	                     .nics_per_numa = 1,
	                     .backend = "rsmi"};
	static const struct {
		const char *text, *msg;
		int line, col;
	} bad[] = {
	    {"0 cpus=0 gpus=0 nic=mlx5_0\n1 cpus=5\n", "CPUs 5 are not one task slot", 2, 8},
	    {"0 cpus=0\n0 cpus=1\n", "rank 0 is bound twice (first on line 1)", 2, 1},
	    {"0 cpus=0\n2 cpus=1\n", "rank 2 is out of range", 2, 1},
	    {"0 cpus=0 gpus=7\n1 cpus=1\n", "GPU 7 is not one of this node's 2", 1, 15},
	    {"0 cpus=0 nic=eth0\n1 cpus=1\n", "no network card eth0", 1, 14},
	    {"0 cpus=0 colour=red\n1 cpus=1\n", "unknown key", 1, 10},
	    {"0 cpus=0\n", "rank 1 has no line", 0, 0},
	    {"x cpus=0\n", "expected a rank", 1, 1},
	    {"0 gpus=1\n1 cpus=1\n", "rank 0 has no cpus=LIST", 1, 1},
	};
	char xml[64], *line, *path;
	struct node n;
	tmatch_place_gpu_out_t out;
	tmatch_error_t err;
	int g1 = 1;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	node_load(&n, xml, 2, NULL);
	line = tmatch_place_bindings_line(1, tmatch_affinity_leaf_cpuset(n.tree, 1), &g1, 1,
	                                  &n.dev->nic[1]);
	cr_assert_str_eq(line, "1 cpus=1 gpus=1 nic=mlx5_8 UCX_NET_DEVICES=mlx5_8:1 "
	                       "OMPI_MCA_btl_openib_if_include=mlx5_8:1\n");
	free(line);
	line = tmatch_place_bindings_line(0, tmatch_affinity_leaf_cpuset(n.tree, 0), NULL, 0, NULL);
	cr_assert_str_eq(line, "0 cpus=0 gpus=- nic=-\n");
	free(line);
	path = write_text("# a comment\n1 cpus=1 gpus=1 nic=mlx5_8 UCX_NET_DEVICES=mlx5_8:1\n\n"
	                  "0 cpus=0 gpus=- nic=-\n");
	cr_assert_eq(tmatch_place_bindings_read(path, n.tree, n.dev, 2, &out, &err), 0, "%s",
	             err.msg);
	cr_expect_eq(out.leaf[1], 1);
	cr_expect_eq(out.ngpus[1], 1);
	cr_expect_eq(out.gpu[out.stride], 1);
	cr_expect_eq(out.nic[1], 1);
	cr_expect_eq(out.ngpus[0], 0);
	cr_expect_eq(out.nic[0], -1);
	tmatch_place_gpu_out_free(&out);
	unlink(path);
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		path = write_text(bad[b].text);
		tmatch_error_clear(&err);
		errno = 0;
		cr_expect_eq(tmatch_place_bindings_read(path, n.tree, n.dev, 2, &out, &err), -1,
		             "%s", bad[b].text);
		cr_expect_eq(errno, EINVAL);
		cr_expect(strstr(err.msg, bad[b].msg), "%s: %s", bad[b].text, err.msg);
		cr_expect_str_eq(err.file, path);
		cr_expect_eq(err.line, bad[b].line, "%s: line %d", bad[b].text, err.line);
		cr_expect_eq(err.column, bad[b].col, "%s: column %d", bad[b].text, err.column);
		unlink(path);
	}
	errno = 0;
	cr_expect_eq(tmatch_place_bindings_read("/nonexistent/b", n.tree, n.dev, 2, &out, &err),
	             -1);
	cr_expect_eq(errno, ENOENT);
	node_free(&n);
	unlink(xml);
}

Test(placement_gpu, bad_arguments)
{
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t out;
	tmatch_place_gpu_eval_t e;
	tmatch_error_t err;

	memset(&in, 0, sizeof(in));
	errno = 0;
	cr_expect_eq(tmatch_place_gpu_decide(&in, &out, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(tmatch_place_gpu_decide(NULL, &out, &err), -1);
	cr_expect_eq(tmatch_place_gpu_in_order(&in, &out, &err), -1);
	cr_expect_eq(tmatch_place_gpu_evaluate(&in, &out, &e, &err), -1);
	cr_expect_eq(tmatch_place_bindings_read(NULL, NULL, NULL, 1, &out, &err), -1);
	tmatch_place_gpu_out_free(NULL);
}

/* ------------------------------------------------------------------------ */
/* A task of a placed GPU step in its task_init                              */

struct placed {
	tmatch_place_node_t *plan;
	tmatch_affinity_tree_t *tree;
	tmatch_affinity_devices_t *dev;
	char xml[64];
};

/* 4 tasks of a 4-rank step on 2 packages of 2 cores with 2 GPUs each,
   Slurm naming `gpus` (vendor list `vendor`), placed as the plugin does. */
static void placed_step(struct placed *x, const char *gpus, const char *vendor)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 2,
	                     .gpus_per_numa = 2,
	                     .nics_per_numa = 1,
	                     .backend = "nvml"};
	tmatch_place_gpu_env_t env = {.step_gpus = gpus, .cuda = vendor};
	static const int ranks[4] = {0, 1, 2, 3};
	tmatch_place_node_in_t in;
	tmatch_config_t cfg;
	tmatch_comm_t *c = cliques(4, 2, 1000, 1);
	tmatch_error_t err;
	char spec[80];

	cr_assert_eq(gpu_xml_write(&s, x->xml, sizeof(x->xml)), 0);
	snprintf(spec, sizeof(spec), "xml:%s", x->xml);
	tmatch_config_init(&cfg);
	memset(&in, 0, sizeof(in));
	in.cfg = &cfg;
	in.comm = c;
	in.user_profile = 1;
	in.node_count = 1;
	in.ranks = ranks;
	in.nlocal = in.ntasks_total = 4;
	in.topology = spec;
	in.gpu_env = &env;
	cr_assert_eq(tmatch_place_node(&in, &x->plan, &x->tree, &err), 0, "%s", err.msg);
	cr_assert_not_null(x->plan->gpu_step);
	x->dev = tmatch_affinity_tree_devices(x->tree, 0, &err);
	x->plan->devices = x->dev;
	tmatch_comm_destroy(c);
}

static void placed_free(struct placed *x)
{
	tmatch_place_node_destroy(x->plan);
	tmatch_affinity_devices_destroy(x->dev);
	tmatch_affinity_tree_destroy(x->tree);
	unlink(x->xml);
}

static int mode_of(struct placed *x, int local, const char *tres, const char *own, unsigned version,
                   char *why)
{
	cr_assert_eq(tmatch_place_gpu_task(x->plan, x->tree, local, tres, own, version, why, 256),
	             0);
	return x->plan->task[local].gpu_mode;
}

#define SLURM_22_05 0x160508u
#define SLURM_24_11 0x180b00u

Test(placement_gpu, task_init_decides_whose_gpus)
{
	struct placed x;
	char why[256];
	int leaf;

	/* global numbering (no ConstrainDevices) */
	placed_step(&x, "0-3", "0,1,2,3");
	leaf = x.plan->task[0].leaf;
	cr_expect_eq(mode_of(&x, 0, NULL, "0-3", SLURM_22_05, why), TMATCH_GPU_MODE_OURS);
	cr_expect_eq(x.plan->task[0].leaf, leaf);
	cr_expect_eq(mode_of(&x, 0, "gpu:per_task:1", "0", SLURM_24_11, why), TMATCH_GPU_MODE_OURS);
	cr_expect_eq(mode_of(&x, 0, "gres/gpu:closest", "0,1", SLURM_24_11, why),
	             TMATCH_GPU_MODE_OURS);
	/* an explicit map, in 22.05's and 23.11's words: kept, the CPUs follow */
	for (int v = 0; v < 2; v++) {
		const char *tres = v ? "gres/gpu:map:3,2,1,0" : "gpu:map_gpu:3,2,1,0";

		for (int t = 0; t < 4; t++) {
			const tmatch_place_task_t *k = &x.plan->task[t];

			cr_expect_eq(mode_of(&x, t, tres, NULL, SLURM_24_11, why),
			             TMATCH_GPU_MODE_FOLLOW, "%s: %s", tres, why);
			cr_expect_eq(k->ngpus, 1);
			cr_expect_eq(k->gpu[0], 3 - t);
			cr_expect(hwloc_bitmap_isincluded(k->cpuset, x.dev->gpu[k->gpu[0]].cpuset),
			          "task %d outside GPU %d's CPUs", t, k->gpu[0]);
			cr_expect_eq(x.dev->nic[k->nic].package, x.dev->gpu[k->gpu[0]].package);
		}
	}
	/* single, seen to differ from the rule without Cores=: kept */
	cr_expect_eq(mode_of(&x, 1, "gpu:single:1", "3", SLURM_22_05, why), TMATCH_GPU_MODE_KEEP);
	cr_expect(strstr(why, "--gpu-bind=single gave GPU 3"), "%s", why);
	cr_expect_eq(mode_of(&x, 1, "gpu:single:1", "1", SLURM_22_05, why), TMATCH_GPU_MODE_FOLLOW,
	             "%s", why);
	placed_free(&x);

	/* ConstrainDevices: the step's GPUs 1 and 3 numbered 0 and 1 */
	placed_step(&x, "0-3", "0-3");
	x.plan->gpu_step->relative = x.plan->gpu_step->constrained = 1;
	cr_expect_eq(mode_of(&x, 0, "gpu:closest", NULL, SLURM_22_05, why), TMATCH_GPU_MODE_KEEP);
	cr_expect(strstr(why, "closest with ConstrainDevices"), "%s", why);
	cr_expect_eq(mode_of(&x, 0, "gpu:per_task:1", NULL, SLURM_22_05, why),
	             TMATCH_GPU_MODE_FOLLOW, "%s", why);
	cr_expect_eq(x.plan->task[0].gpu[0], 0);
	cr_expect_eq(mode_of(&x, 0, "gres/gpu:per_task:1", NULL, SLURM_24_11, why),
	             TMATCH_GPU_MODE_KEEP);
	cr_expect(strstr(why, "binds per_task by the tasks' CPUs"), "%s", why);
	cr_expect_eq(mode_of(&x, 2, "gres/gpu:single:1", NULL, SLURM_24_11, why),
	             TMATCH_GPU_MODE_KEEP);
	cr_expect_eq(mode_of(&x, 2, "gpu:single:1", NULL, SLURM_22_05, why),
	             TMATCH_GPU_MODE_FOLLOW);
	errno = 0;
	cr_expect_eq(tmatch_place_gpu_task(x.plan, x.tree, 9, NULL, NULL, 0, why, 256), -1);
	cr_expect_eq(errno, EINVAL);
	placed_free(&x);
}
