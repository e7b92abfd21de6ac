/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_affinity_gpu.c - a node's GPUs and network cards
 * (tmatch_affinity_tree_devices): on the real nodes of ../shared/topologies
 * (each GPU's index, backend, locality, package, island, nearest card;
 * MI300A's partitions; the link matrices), on nodes these tests write
 * themselves (tests/unit/gpu_xml.h: every backend, bare PCI GPUs,
 * partitions, islands, cards on some NUMA nodes only), with and without
 * I/O (the CPU tree is the same), and bad arguments.
 */
#include "affinity/affinity.h"
#include "affinity/affinity_private.h"
#include "tests/unit/gpu_xml.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* this_system: the XML describes this machine (the admin's topology_xml) */
static tmatch_affinity_tree_t *load_xml(const char *xml, int io, int this_system)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;

	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = xml;
	o.io = io;
	o.this_system = this_system;
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s: %s", xml, err.msg);
	return t;
}

static tmatch_affinity_tree_t *load_io(const char *xml, int io)
{
	return load_xml(xml, io, 0);
}

static tmatch_affinity_devices_t *devices_as(const char *xml, int this_system)
{
	tmatch_affinity_tree_t *t = load_xml(xml, 1, this_system);
	tmatch_error_t err;
	tmatch_affinity_devices_t *d = tmatch_affinity_tree_devices(t, 0, &err);

	cr_assert_not_null(d, "%s: %s", xml, err.msg);
	tmatch_affinity_tree_destroy(t);
	return d;
}

static tmatch_affinity_devices_t *devices_of(const char *xml)
{
	return devices_as(xml, 0);
}

static int nearest_nic(const tmatch_affinity_devices_t *d, int g)
{
	int best = -1;

	for (int k = 0; k < d->nnics; k++)
		if (best < 0 || d->nic_rank[g * d->nnics + k] < d->nic_rank[g * d->nnics + best])
			best = k;
	return best;
}

static char *list_of(hwloc_const_bitmap_t set)
{
	char *s = tmatch_affinity_cpuset_list(set);

	cr_assert_not_null(s);
	return s;
}

/* ------------------------------------------------------------------------ */
/* Nodes of our own design                                                   */

Test(affinity_gpu, four_nvlink_gpus_on_two_packages)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 2,
	                     .cores_per_numa = 4,
	                     .smt = 2,
	                     .gpus_per_numa = 1,
	                     .nics_per_numa = 1,
	                     .backend = "nvml",
	                     .links = "NVLinkBandwidth",
	                     .island_gpus = 2};
	char xml[64];
	tmatch_affinity_devices_t *d;
	char *l;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	d = devices_of(xml);
	cr_expect_eq(d->ngpus, 4);
	cr_expect_eq(d->nnics, 4);
	cr_expect_eq(d->npackages, 2);
	cr_expect_eq(d->nlinks, 1);
	for (int g = 0; g < d->ngpus; g++) {
		cr_expect_eq(d->gpu[g].index, g);
		cr_expect_str_eq(d->gpu[g].backend, "NVML");
		cr_expect_eq(d->gpu[g].vendor, TMATCH_GPU_VENDOR_NVIDIA);
		cr_expect_eq(d->gpu[g].package, g / 2, "gpu %d package %d", g, d->gpu[g].package);
		cr_expect_eq(d->gpu[g].numa, g);
		cr_expect_eq(d->gpu[g].island, g / 2 * 2, "gpu %d island %d", g, d->gpu[g].island);
		cr_expect_eq(d->gpu[g].npartitions, 1);
		/* the card on the GPU's own NUMA node */
		cr_expect_eq(d->nic[nearest_nic(d, g)].numa, g);
	}
	/* cores 4-7 of NUMA node 1, and their second threads 20-23 */
	l = list_of(d->gpu[1].cpuset);
	cr_expect_str_eq(l, "4-7,20-23");
	free(l);
	cr_expect_str_eq(d->nic[0].name, "mlx5_0");
	cr_expect_str_eq(d->nic[0].netdev, "ib0");
	cr_expect_str_eq(d->nic[0].kind, "OpenFabrics");
	cr_expect_str_eq(d->gpu[2].busid, "0002:10:00.0");
	cr_expect_eq(tmatch_affinity_devices_link(d, "NVLinkBandwidth", 0, 1), 100000);
	cr_expect_eq(tmatch_affinity_devices_link(d, "NVLinkBandwidth", 1, 2), 0);
	cr_expect_eq(tmatch_affinity_devices_link(d, "XGMIBandwidth", 0, 1), 0);
	cr_expect_eq(tmatch_affinity_devices_gpu_of_index(d, 3), 3);
	cr_expect_eq(tmatch_affinity_devices_gpu_of_index(d, 4), -1);
	tmatch_affinity_devices_destroy(d);
	unlink(xml);
}

/* Every backend is read, each numbered by its own names; a node whose GPUs
   hwloc knows only as PCI devices (slurmstepd's view) numbers them in bus
   order. */
Test(affinity_gpu, backends_and_bare_pci)
{
	static const struct {
		const char *backend, *name0, *kind;
		int vendor;
	} cases[] = {
	    {"nvml", "nvml0", "NVML", TMATCH_GPU_VENDOR_NVIDIA},
	    {"rsmi", "rsmi0", "RSMI", TMATCH_GPU_VENDOR_AMD},
	    {"ze", "ze0", "LevelZero", TMATCH_GPU_VENDOR_INTEL},
	    {"cuda", "cuda0", "CUDA", TMATCH_GPU_VENDOR_NVIDIA},
	    {"pci", "gpu0", "PCI", TMATCH_GPU_VENDOR_NVIDIA},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		gpu_node_spec_t s = {.packages = 2,
		                     .numa_per_package = 1,
		                     .cores_per_numa = 2,
		                     .gpus_per_numa = 2,
		                     .backend = cases[c].backend};
		char xml[64];
		tmatch_affinity_devices_t *d;

		cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
		d = devices_of(xml);
		cr_expect_eq(d->ngpus, 4, "%s: %d GPUs", cases[c].backend, d->ngpus);
		cr_expect_str_eq(d->gpu[0].name, cases[c].name0);
		cr_expect_str_eq(d->gpu[0].backend, cases[c].kind);
		cr_expect_eq(d->gpu[0].vendor, cases[c].vendor, "%s", cases[c].backend);
		cr_expect_eq(d->gpu[3].package, 1);
		cr_expect_eq(d->gpu[3].index, 3);
		cr_expect_eq(d->gpu[3].island, -1); /* no link matrix */
		cr_expect_eq(d->nnics, 0);
		tmatch_affinity_devices_destroy(d);
		unlink(xml);
	}
}

/* MI300A in CPX mode: six GPUs per PCI device. */
Test(affinity_gpu, partitions_of_one_device)
{
	gpu_node_spec_t s = {.packages = 4,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 6,
	                     .gpus_per_numa = 1,
	                     .partitions = 6,
	                     .nics_per_numa = 1,
	                     .backend = "rsmi",
	                     .links = "XGMIBandwidth"};
	char xml[64];
	tmatch_affinity_devices_t *d;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	d = devices_of(xml);
	cr_assert_eq(d->ngpus, 24);
	for (int g = 0; g < 24; g++) {
		cr_expect_eq(d->gpu[g].device, g / 6);
		cr_expect_eq(d->gpu[g].partition, g % 6);
		cr_expect_eq(d->gpu[g].npartitions, 6);
		cr_expect_eq(d->gpu[g].package, g / 6);
		cr_expect_eq(d->gpu[g].island, 0);
		cr_expect_eq(d->nic[nearest_nic(d, g)].package, g / 6);
	}
	tmatch_affinity_devices_destroy(d);
	unlink(xml);
}

/* Cards on every other NUMA node: a GPU without one on its NUMA node gets
   the one of its package, never another package's. */
Test(affinity_gpu, nearest_card_stays_on_the_package)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 4,
	                     .cores_per_numa = 2,
	                     .gpus_per_numa = 1,
	                     .nics_per_numa = 1,
	                     .nic_numa_stride = 4,
	                     .backend = "nvml"};
	char xml[64];
	tmatch_affinity_devices_t *d;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	d = devices_of(xml);
	cr_assert_eq(d->ngpus, 8);
	cr_assert_eq(d->nnics, 2);
	for (int g = 0; g < 8; g++)
		cr_expect_eq(d->nic[nearest_nic(d, g)].package, d->gpu[g].package, "gpu %d", g);
	tmatch_affinity_devices_destroy(d);
	unlink(xml);
}

/* I/O is loaded only when asked, and changes nothing of the CPU tree. */
Test(affinity_gpu, cpu_tree_is_the_same_with_io)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 2,
	                     .cores_per_numa = 3,
	                     .smt = 2,
	                     .gpus_per_numa = 2,
	                     .nics_per_numa = 1,
	                     .backend = "nvml"};
	char xml[64], *a, *b;
	tmatch_affinity_tree_t *t0, *t1;
	tmatch_affinity_devices_t *d;
	int la, lb;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	t0 = load_io(xml, 0);
	t1 = load_io(xml, 1);
	la = tmatch_affinity_tree_describe(t0, NULL, 0);
	lb = tmatch_affinity_tree_describe(t1, NULL, 0);
	cr_assert_eq(la, lb);
	a = malloc((size_t)la + 1);
	b = malloc((size_t)lb + 1);
	tmatch_affinity_tree_describe(t0, a, (size_t)la + 1);
	tmatch_affinity_tree_describe(t1, b, (size_t)lb + 1);
	cr_expect_str_eq(a, b);
	d = tmatch_affinity_tree_devices(t0, 0, NULL);
	cr_assert_not_null(d);
	cr_expect_eq(d->ngpus, 0);
	cr_expect_eq(d->nnics, 0);
	cr_expect_eq(tmatch_affinity_devices_describe(d, NULL, 0), 0);
	tmatch_affinity_devices_destroy(d);
	d = tmatch_affinity_tree_devices(t1, 0, NULL);
	cr_expect_eq(d->ngpus, 8);
	tmatch_affinity_devices_destroy(d);
	free(a);
	free(b);
	tmatch_affinity_tree_destroy(t0);
	tmatch_affinity_tree_destroy(t1);
	unlink(xml);
}

Test(affinity_gpu, bad_arguments)
{
	tmatch_error_t err;
	char buf[8];

	errno = 0;
	cr_expect_null(tmatch_affinity_tree_devices(NULL, 0, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(tmatch_affinity_devices_describe(NULL, buf, sizeof(buf)), -1);
	cr_expect_eq(tmatch_affinity_devices_gpu_of_index(NULL, 0), -1);
	cr_expect_eq(tmatch_affinity_devices_link(NULL, "NVLinkBandwidth", 0, 0), 0);
	tmatch_affinity_devices_destroy(NULL);
	{
		gpu_node_spec_t s = {.packages = 1,
		                     .numa_per_package = 1,
		                     .cores_per_numa = 2,
		                     .gpus_per_numa = 1,
		                     .backend = "nvml"};
		char xml[64];
		tmatch_affinity_tree_t *t;

		cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
		t = load_io(xml, 1);
		errno = 0;
		cr_expect_null(tmatch_affinity_tree_devices(t, 1, &err));
		cr_expect_eq(errno, EINVAL);
		cr_expect_null(tmatch_affinity_tree_devices(t, -1, &err));
		tmatch_affinity_tree_destroy(t);
		unlink(xml);
	}
}

/* ------------------------------------------------------------------------ */
/* The real nodes of ../shared/topologies                                    */

/* What each machine must give: GPU count and backend, a GPU's locality and
   package, the islands, the nearest card of each GPU (by name, in index
   order; NULL: the node has none), partitions per device, link matrices. */
static const struct machine {
	const char *file;
	int ngpus;
	const char *backend;
	int nnics, npackages;
	int probe;              /* a GPU position whose locality is checked */
	const char *probe_cpus; /* its locality */
	int probe_package;      /* its package */
	const char *islands;    /* island of each GPU, "0,0,2,2" ("-1" none) */
	const char *nearest;    /* nearest card of each GPU, comma separated */
	int partitions;         /* GPUs per device */
	const char *links;      /* matrices, space separated */
} machines[] = {
    {"mpibind-eas-tioga.xml", 8, "RSMI", 4, 1, 0, "48-55,112-119", 0, "0,0,0,0,0,0,0,0",
     "hsi0,hsi0,hsi1,hsi1,hsi2,hsi2,hsi3,hsi3", 1, "XGMIBandwidth XGMIHops"},
    {"mpibind-cts1-pascal.xml", 2, "NVML", 1, 2, 1, "0-17,36-53", 0, "-1,-1", "mlx5_0,mlx5_0", 1,
     ""},
    {"mpibind-epyc-corona.xml", 4, "OpenCL", 1, 2, 3, "42-47,90-95", 1, "-1,-1,-1,-1",
     "mlx5_0,mlx5_0,mlx5_0,mlx5_0", 1, ""},
    {"flux-ipa20.xml", 4, "NVML", 4, 2, 2, "98-111,210-223", 1, "0,0,0,0",
     "mlx5_0,mlx5_2,mlx5_3,mlx5_3", 1, "NVLinkBandwidth"},
    {"flux-tuo.SPX.xml", 4, "RSMI", 4, 4, 3, "72-95,168-191", 3, "0,0,0,0", "hsi0,hsi1,hsi2,hsi3",
     1, "XGMIBandwidth XGMIHops"},
    {"flux-tuo.CPX.xml", 24, "RSMI", 4, 4, 13, "48-71,144-167", 2,
     "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0",
     "hsi0,hsi0,hsi0,hsi0,hsi0,hsi0,hsi1,hsi1,hsi1,hsi1,hsi1,hsi1,"
     "hsi2,hsi2,hsi2,hsi2,hsi2,hsi2,hsi3,hsi3,hsi3,hsi3,hsi3,hsi3",
     6, "XGMIBandwidth XGMIHops"},
    {"hwloc-nvidiaDGX2.xml", 16, "NVML", 0, 2, 9, "24-25", 1, "0,0,0,0,0,0,0,0,8,8,8,8,8,8,8,8",
     NULL, 1, "NVLinkBandwidth"},
    {"hwloc-power8gpudistances.xml", 4, "NVML", 0, 2, 2, "80-81,88-89,96-97,104-105", 1, "0,0,2,2",
     NULL, 1, "NVLinkBandwidth"},
    {"mpibind-coral-lassen.xml", 4, "NVML", 4, 2, 3, "96-175", 1, "-1,-1,-1,-1",
     "mlx5_0,mlx5_0,mlx5_2,mlx5_2", 1, ""},
    {"mpibind-g4dnmetal.xml", 8, "NVML", 1, 2, 5, "24-47,72-95", 1, "-1,-1,-1,-1,-1,-1,-1,-1",
     "rdmap197s0,rdmap197s0,rdmap197s0,rdmap197s0,rdmap197s0,rdmap197s0,rdmap197s0,"
     "rdmap197s0",
     1, ""},
};

Test(affinity_gpu, real_nodes)
{
	const char *dir = gpu_xml_shared_dir();

	if (!dir) {
		fprintf(stderr, "affinity_gpu: ../shared/topologies absent: real nodes not read\n");
		cr_skip_test("../shared/topologies absent");
	}
	for (size_t m = 0; m < sizeof(machines) / sizeof(machines[0]); m++) {
		const struct machine *x = &machines[m];
		char path[4200], islands[256] = "", nearest[512] = "", links[128] = "", *l;
		tmatch_affinity_devices_t *d;
		int partitions = 1;

		snprintf(path, sizeof(path), "%s/%s", dir, x->file);
		d = devices_of(path);
		cr_assert_eq(d->ngpus, x->ngpus, "%s: %d GPUs", x->file, d->ngpus);
		cr_expect_str_eq(d->gpu[0].backend, x->backend, "%s", x->file);
		cr_expect_eq(d->nnics, x->nnics, "%s: %d cards", x->file, d->nnics);
		cr_expect_eq(d->npackages, x->npackages, "%s: %d packages", x->file, d->npackages);
		l = list_of(d->gpu[x->probe].cpuset);
		cr_expect_str_eq(l, x->probe_cpus, "%s: gpu %d at %s", x->file, x->probe, l);
		free(l);
		cr_expect_eq(d->gpu[x->probe].package, x->probe_package, "%s", x->file);
		for (int g = 0; g < d->ngpus; g++) {
			cr_expect_eq(d->gpu[g].index, g, "%s: gpu %d has index %d", x->file, g,
			             d->gpu[g].index);
			snprintf(islands + strlen(islands), sizeof(islands) - strlen(islands),
			         "%s%d", g ? "," : "", d->gpu[g].island);
			if (d->nnics)
				snprintf(nearest + strlen(nearest),
				         sizeof(nearest) - strlen(nearest), "%s%s", g ? "," : "",
				         d->nic[nearest_nic(d, g)].name);
			if (d->gpu[g].npartitions > partitions)
				partitions = d->gpu[g].npartitions;
			/* every GPU's locality holds CPUs of its package only */
			cr_expect(!hwloc_bitmap_iszero(d->gpu[g].cpuset), "%s", x->file);
		}
		for (int i = 0; i < d->nlinks; i++)
			snprintf(links + strlen(links), sizeof(links) - strlen(links), "%s%s",
			         i ? " " : "", d->link[i].name);
		cr_expect_str_eq(islands, x->islands, "%s: islands %s", x->file, islands);
		if (x->nearest)
			cr_expect_str_eq(nearest, x->nearest, "%s: cards %s", x->file, nearest);
		cr_expect_eq(partitions, x->partitions, "%s", x->file);
		cr_expect_str_eq(links, x->links, "%s: links %s", x->file, links);
		tmatch_affinity_devices_destroy(d);
	}
}

/* What `treematch topology show` prints: each GPU with its locality,
   island and nearest card; the cards; the matrices. */
Test(affinity_gpu, describe)
{
	gpu_node_spec_t s = {.packages = 2,
	                     .numa_per_package = 1,
	                     .cores_per_numa = 2,
	                     .gpus_per_numa = 2,
	                     .nics_per_numa = 1,
	                     .backend = "rsmi",
	                     .links = "XGMIBandwidth",
	                     .island_gpus = 4};
	char xml[64], *text;
	tmatch_affinity_devices_t *d;
	int len;

	cr_assert_eq(gpu_xml_write(&s, xml, sizeof(xml)), 0);
	d = devices_of(xml);
	len = tmatch_affinity_devices_describe(d, NULL, 0);
	cr_assert_gt(len, 0);
	text = malloc((size_t)len + 1);
	cr_assert_eq(tmatch_affinity_devices_describe(d, text, (size_t)len + 1), len);
	cr_expect_not_null(strstr(text, "gpus: 4 (RSMI)\n"), "%s", text);
	cr_expect_not_null(
	    strstr(text, "gpu 2: rsmi2 \"Test GPU\" pci 0001:10:00.0 cpus 2-3 package 1 numa 1 "
	                 "island 0 nic mlx5_8\n"),
	    "%s", text);
	cr_expect_not_null(strstr(text, "nic 1: mlx5_8 (OpenFabrics, ib8) pci 0001:80:00.0 cpus "
	                                "2-3 package 1 numa 1\n"),
	                   "%s", text);
	cr_expect_not_null(strstr(text, "links XGMIBandwidth (MB/s):\n"), "%s", text);
	cr_expect_not_null(strstr(text, "     rsmi0  1000000   100000   100000   100000\n") == NULL
	                       ? strstr(text, "     rsmi0        0   100000   100000   100000\n")
	                       : NULL,
	                   "%s", text);
	free(text);
	tmatch_affinity_devices_destroy(d);
	unlink(xml);
}

/* Slingshot as hwloc 2.9 and 2.12 show it: the interface hsnN alone, no
   subtype. The card is found; on this machine (the admin's XML or the live
   topology) the cxi driver's sysfs names its CXI device by the card's PCI
   bus id, which libfabric's cxi provider wants; never from another
   machine's XML. */
Test(affinity_gpu, slingshot_interfaces_and_their_cxi_devices_from_sysfs)
{
	gpu_node_spec_t spec = {.packages = 2,
	                        .numa_per_package = 1,
	                        .cores_per_numa = 2,
	                        .gpus_per_numa = 1,
	                        .nics_per_numa = 1,
	                        .backend = "rsmi",
	                        .nic_kind = "hsn"};
	char xml[64], root[64] = "/tmp/tmatch-sysfs-XXXXXX", path[256], target[256];
	tmatch_affinity_devices_t *d;

	cr_assert_eq(gpu_xml_write(&spec, xml, sizeof(xml)), 0);
	cr_assert_not_null(mkdtemp(root));
	tmatch__affinity_set_sysfs_root(root);

	/* no class/cxi: the interfaces, as hwloc names them */
	d = devices_as(xml, 1);
	cr_assert_eq(d->nnics, 2);
	cr_expect_str_eq(d->nic[0].name, "hsn0");
	cr_expect_str_eq(d->nic[0].kind, "Slingshot");
	cr_expect_str_eq(d->nic[1].name, "hsn1");
	cr_expect_str_eq(d->nic[1].busid, "0001:80:00.0");
	tmatch_affinity_devices_destroy(d);

	/* the driver's devices, numbered across the cards' order */
	snprintf(path, sizeof(path), "%s/class", root);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/class/cxi", root);
	cr_assert_eq(mkdir(path, 0755), 0);
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/class/cxi/cxi%d", root, k);
		cr_assert_eq(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/class/cxi/cxi%d/device", root, k);
		snprintf(target, sizeof(target), "../../../devices/pci%04x:80/%04x:80:00.0", 1 - k,
		         1 - k);
		cr_assert_eq(symlink(target, path), 0);
	}
	d = devices_as(xml, 1);
	cr_assert_eq(d->nnics, 2);
	cr_expect_str_eq(d->nic[0].name, "cxi0");
	cr_expect_str_eq(d->nic[0].netdev, "hsn1");
	cr_expect_str_eq(d->nic[0].busid, "0001:80:00.0");
	cr_expect_eq(d->nic[0].package, 1);
	cr_expect_str_eq(d->nic[1].name, "cxi1");
	cr_expect_str_eq(d->nic[1].netdev, "hsn0");
	cr_expect_eq(d->nic[1].package, 0);
	tmatch_affinity_devices_destroy(d);

	/* another machine's XML: this machine's sysfs says nothing of it */
	d = devices_as(xml, 0);
	cr_expect_str_eq(d->nic[0].name, "hsn0");
	cr_expect_str_eq(d->nic[1].name, "hsn1");
	tmatch_affinity_devices_destroy(d);

	tmatch__affinity_set_sysfs_root(NULL);
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/class/cxi/cxi%d/device", root, k);
		unlink(path);
		snprintf(path, sizeof(path), "%s/class/cxi/cxi%d", root, k);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/class/cxi", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/class", root);
	rmdir(path);
	rmdir(root);
	unlink(xml);
}
