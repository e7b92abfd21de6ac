/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_xml.h - GPU nodes the tests (and bench/gpu_place.c) design
 * themselves, written as hwloc XML: packages of NUMA nodes of cores, GPUs
 * (as NVML, RSMI or Level Zero OS devices under their PCI devices, or as
 * bare PCI devices; optionally split in partitions), network cards, and a
 * GPU link matrix. hwloc has no call that adds PCI or OS devices to a
 * topology, so the XML is written here, with hwloc's own bitmap printer
 * for the CPU sets. And where the real machines' XML files are
 * (../shared/topologies, or $TMATCH_TOPOLOGIES).
 */
#ifndef TMATCH_TESTS_GPU_XML_H
#define TMATCH_TESTS_GPU_XML_H

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct gpu_node_spec {
	int packages;
	int numa_per_package;
	int cores_per_numa;
	int smt;             /* hardware threads per core (PUs of core c: c, c + ncores...) */
	int gpus_per_numa;   /* on every NUMA node */
	int partitions;      /* GPUs per PCI device (MI300A CPX: 6); 0/1 = whole */
	int nics_per_numa;   /* OpenFabrics cards on every NUMA node... */
	int nic_numa_stride; /* ...of every stride-th NUMA node of the machine (0/1: all) */
	const char *backend; /* "nvml", "rsmi", "ze", "cuda", or "pci" (no OS device) */
	/* GPU links: "NVLinkBandwidth" or "XGMIBandwidth" between the GPUs of
	   one island of island_gpus consecutive GPUs (0: all of them); NULL =
	   none */
	const char *links;
	int island_gpus;
	/* the cards: NULL or "mlx5" (InfiniBand: ibN beside mlx5_N), "cxi" (HPE
	   Slingshot as hwloc 2.14 shows it: hsnN then cxiN, subtype Slingshot),
	   "hsn" (the same card as hwloc 2.9 shows it: the interface hsnN alone,
	   no subtype) or "efa" (AWS EFA: the verbs device rdmapBUSs0) */
	const char *nic_kind;
} gpu_node_spec_t;

static inline void gpu_xml_set(FILE *f, const char *attr, hwloc_const_bitmap_t set)
{
	char buf[4096];

	hwloc_bitmap_snprintf(buf, sizeof(buf), set);
	fprintf(f, " %s=\"%s\" complete_%s=\"%s\"", attr, buf, attr, buf);
}

/* The XML of a node of that design in a new file, its path in `path`
   (mkstemp's template "/tmp/tmatch-gpu-XXXXXX.xml"). 0 or -1. */
static inline int gpu_xml_write(const gpu_node_spec_t *s, char *path, size_t len)
{
	int np = s->packages, nn = s->numa_per_package, nc = s->cores_per_numa;
	int smt = s->smt > 0 ? s->smt : 1, parts = s->partitions > 1 ? s->partitions : 1;
	int ncores = np * nn * nc, gp = 1, ngpu = 0, ndev = 0, ncard = 0, stride;
	const char *kind = s->nic_kind ? s->nic_kind : "mlx5";
	int *gpu_gp, fd;
	hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
	FILE *f;

	stride = s->nic_numa_stride > 1 ? s->nic_numa_stride : 1;
	snprintf(path, len, "/tmp/tmatch-gpu-XXXXXX.xml");
	fd = mkstemps(path, 4);
	if (fd < 0 || !(f = fdopen(fd, "w")) || !cpus || !nodes)
		return -1;
	gpu_gp = calloc((size_t)(np * nn * s->gpus_per_numa * parts + 1), sizeof(int));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM "
	           "\"hwloc2.dtd\">\n<topology version=\"2.0\">\n");
	hwloc_bitmap_set_range(cpus, 0, ncores * smt - 1);
	hwloc_bitmap_set_range(nodes, 0, np * nn - 1);
	fprintf(f, "<object type=\"Machine\" os_index=\"0\"");
	gpu_xml_set(f, "cpuset", cpus);
	fprintf(f, " allowed_cpuset=\"");
	{
		char b[4096];

		hwloc_bitmap_snprintf(b, sizeof(b), cpus);
		fprintf(f, "%s\"", b);
		gpu_xml_set(f, "nodeset", nodes);
		hwloc_bitmap_snprintf(b, sizeof(b), nodes);
		fprintf(f, " allowed_nodeset=\"%s\" gp_index=\"%d\">\n", b, gp++);
	}
	for (int p = 0; p < np; p++) {
		hwloc_bitmap_zero(cpus);
		for (int c = p * nn * nc; c < (p + 1) * nn * nc; c++)
			for (int t = 0; t < smt; t++)
				hwloc_bitmap_set(cpus, (unsigned)(c + t * ncores));
		hwloc_bitmap_zero(nodes);
		hwloc_bitmap_set_range(nodes, p * nn, (p + 1) * nn - 1);
		fprintf(f, " <object type=\"Package\" os_index=\"%d\"", p);
		gpu_xml_set(f, "cpuset", cpus);
		gpu_xml_set(f, "nodeset", nodes);
		fprintf(f, " gp_index=\"%d\">\n", gp++);
		for (int m = 0; m < nn; m++) {
			int numa = p * nn + m;

			hwloc_bitmap_zero(cpus);
			for (int c = numa * nc; c < (numa + 1) * nc; c++)
				for (int t = 0; t < smt; t++)
					hwloc_bitmap_set(cpus, (unsigned)(c + t * ncores));
			hwloc_bitmap_only(nodes, (unsigned)numa);
			fprintf(f, "  <object type=\"Group\"");
			gpu_xml_set(f, "cpuset", cpus);
			gpu_xml_set(f, "nodeset", nodes);
			fprintf(f, " gp_index=\"%d\" kind=\"1000\" subkind=\"0\">\n", gp++);
			fprintf(f, "   <object type=\"NUMANode\" os_index=\"%d\"", numa);
			gpu_xml_set(f, "cpuset", cpus);
			gpu_xml_set(f, "nodeset", nodes);
			fprintf(f, " gp_index=\"%d\" local_memory=\"1073741824\"/>\n", gp++);
			for (int c = numa * nc; c < (numa + 1) * nc; c++) {
				hwloc_bitmap_zero(cpus);
				for (int t = 0; t < smt; t++)
					hwloc_bitmap_set(cpus, (unsigned)(c + t * ncores));
				fprintf(f, "   <object type=\"Core\" os_index=\"%d\"", c);
				gpu_xml_set(f, "cpuset", cpus);
				gpu_xml_set(f, "nodeset", nodes);
				fprintf(f, " gp_index=\"%d\">\n", gp++);
				for (int t = 0; t < smt; t++) {
					hwloc_bitmap_only(cpus, (unsigned)(c + t * ncores));
					fprintf(f, "    <object type=\"PU\" os_index=\"%d\"",
					        c + t * ncores);
					gpu_xml_set(f, "cpuset", cpus);
					gpu_xml_set(f, "nodeset", nodes);
					fprintf(f, " gp_index=\"%d\"/>\n", gp++);
				}
				fprintf(f, "   </object>\n");
			}
			/* the NUMA node's host bridge: its GPUs and cards */
			fprintf(f,
			        "   <object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"0-1\" "
			        "depth=\"0\" bridge_pci=\"%04x:[00-ff]\">\n",
			        gp++, numa);
			for (int g = 0; g < s->gpus_per_numa; g++, ndev++) {
				int bus = 0x10 + g;

				fprintf(f,
				        "    <object type=\"PCIDev\" gp_index=\"%d\" "
				        "pci_busid=\"%04x:%02x:00.0\" pci_type=\"%s [%s:0001] "
				        "[%s:0001] 01\" pci_link_speed=\"0.0\">\n",
				        gp++, numa, bus,
				        !strcmp(s->backend, "rsmi") ? "1200" : "0302",
				        !strcmp(s->backend, "rsmi") ? "1002"
				        : !strcmp(s->backend, "ze") ? "8086"
				                                    : "10de",
				        !strcmp(s->backend, "rsmi") ? "1002"
				        : !strcmp(s->backend, "ze") ? "8086"
				                                    : "10de");
				for (int q = 0; q < parts && strcmp(s->backend, "pci") != 0; q++) {
					gpu_gp[ngpu] = gp;
					fprintf(
					    f,
					    "     <object type=\"OSDev\" gp_index=\"%d\" "
					    "name=\"%s%d\" osdev_type=\"%d\">\n"
					    "      <info name=\"GPUModel\" value=\"Test GPU\"/>\n"
					    "     </object>\n",
					    gp++, s->backend, ngpu,
					    !strcmp(s->backend, "cuda") ? 5 : 1);
					ngpu++;
				}
				fprintf(f, "    </object>\n");
			}
			for (int k = 0; numa % stride == 0 && k < s->nics_per_numa; k++, ncard++) {
				int bus = 0x80 + k;

				if (!strcmp(kind, "cxi") || !strcmp(kind, "hsn")) {
					/* hwloc 2.14 adds the CXI device and marks both;
					   2.9 shows the interface alone, unmarked */
					int cxi = !strcmp(kind, "cxi");

					fprintf(f,
					        "    <object type=\"PCIDev\" gp_index=\"%d\" "
					        "pci_busid=\"%04x:%02x:00.0\" pci_type=\"0200 "
					        "[17db:0501] "
					        "[17db:0000] 02\" pci_link_speed=\"0.0\">\n"
					        "     <object type=\"OSDev\" gp_index=\"%d\" "
					        "name=\"hsn%d\"%s osdev_type=\"2\"/>\n",
					        gp, numa, bus, gp + 1, ncard,
					        cxi ? " subtype=\"Slingshot\"" : "");
					if (cxi)
						fprintf(
						    f,
						    "     <object type=\"OSDev\" gp_index=\"%d\" "
						    "name=\"cxi%d\" "
						    "subtype=\"Slingshot\" osdev_type=\"2\"/>\n",
						    gp + 2, ncard);
					fprintf(f, "    </object>\n");
				} else if (!strcmp(kind, "efa"))
					fprintf(f,
					        "    <object type=\"PCIDev\" gp_index=\"%d\" "
					        "pci_busid=\"%04x:%02x:00.0\" pci_type=\"0200 "
					        "[1d0f:efa1] "
					        "[1d0f:efa1] 00\" pci_link_speed=\"0.0\">\n"
					        "     <object type=\"OSDev\" gp_index=\"%d\" "
					        "name=\"rdmap%ds0\" osdev_type=\"3\"/>\n"
					        "     <object type=\"OSDev\" gp_index=\"%d\" "
					        "name=\"eth%d\" "
					        "osdev_type=\"2\"/>\n"
					        "    </object>\n",
					        gp, numa, bus, gp + 1, numa * 16 + bus, gp + 2,
					        ncard);
				else
					fprintf(f,
					        "    <object type=\"PCIDev\" gp_index=\"%d\" "
					        "pci_busid=\"%04x:%02x:00.0\" pci_type=\"0207 "
					        "[15b3:101b] "
					        "[15b3:0007] 00\" pci_link_speed=\"0.0\">\n"
					        "     <object type=\"OSDev\" gp_index=\"%d\" "
					        "name=\"ib%d\" "
					        "osdev_type=\"2\"/>\n"
					        "     <object type=\"OSDev\" gp_index=\"%d\" "
					        "name=\"mlx5_%d\" osdev_type=\"3\"/>\n"
					        "    </object>\n",
					        gp, numa, bus, gp + 1, numa * 8 + k, gp + 2,
					        numa * 8 + k);
				gp += 3;
			}
			fprintf(f, "   </object>\n  </object>\n");
		}
		fprintf(f, " </object>\n");
	}
	fprintf(f, "</object>\n");
	if (s->links && ngpu > 1) {
		int isl = s->island_gpus > 0 ? s->island_gpus : ngpu;
		char line[64];

		fprintf(f,
		        "<distances2 type=\"OSDev\" nbobjs=\"%d\" kind=\"9\" name=\"%s\" "
		        "indexing=\"gp\">\n",
		        ngpu, s->links);
		{
			size_t n = 0;

			for (int i = 0; i < ngpu; i++)
				n += (size_t)snprintf(line, sizeof(line), "%d ", gpu_gp[i]);
			fprintf(f, "<indexes length=\"%zu\">", n);
			for (int i = 0; i < ngpu; i++)
				fprintf(f, "%d ", gpu_gp[i]);
			fprintf(f, "</indexes>\n");
		}
		for (int i = 0; i < ngpu; i++) {
			size_t n = 0;

			for (int j = 0; j < ngpu; j++)
				n += (size_t)snprintf(line, sizeof(line), "%d ",
				                      i == j               ? 1000000
				                      : i / isl == j / isl ? 100000
				                                           : 0);
			fprintf(f, "<u64values length=\"%zu\">", n);
			for (int j = 0; j < ngpu; j++)
				fprintf(f, "%d ",
				        i == j               ? 1000000
				        : i / isl == j / isl ? 100000
				                             : 0);
			fprintf(f, "</u64values>\n");
		}
		fprintf(f, "</distances2>\n");
	}
	fprintf(f, "</topology>\n");
	free(gpu_gp);
	hwloc_bitmap_free(cpus);
	hwloc_bitmap_free(nodes);
	(void)ndev;
	return fclose(f) == 0 ? 0 : -1;
}

/* The folder of the real nodes' XML: $TMATCH_TOPOLOGIES, else
   ../shared/topologies beside the source tree; NULL when absent. */
static inline const char *gpu_xml_shared_dir(void)
{
	static char dir[4096];
	const char *env = getenv("TMATCH_TOPOLOGIES");

	snprintf(dir, sizeof(dir), "%s", env && *env ? env : TMATCH_SRCDIR "/../shared/topologies");
	return access(dir, R_OK | X_OK) == 0 ? dir : NULL;
}

#endif /* TMATCH_TESTS_GPU_XML_H */
