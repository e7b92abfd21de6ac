/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_gpu_node.h - the GPU node the harnesses of GPU steps place on
 * (fuzz_helper.c, fuzz_gpu.c): two packages of 4 cores, each with two NVML
 * GPUs and an mlx5 card, as hwloc XML in a temporary file.
 */
#ifndef TMATCH_FUZZ_GPU_NODE_H
#define TMATCH_FUZZ_GPU_NODE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The GPU node: packages of 4 cores, each with two NVML GPUs and an mlx5
   card (hwloc XML, as the admin's topology_xml). Every object carries its
   nodesets: hwloc 2.15 refuses a Core or PU without them ("invalid normal
   or memory object"), and every replayed input then aborted on forky. */
static inline void fuzz_gpu_xml(FILE *f)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n"
	      "<object type=\"Machine\" os_index=\"0\" cpuset=\"0xff\" complete_cpuset=\"0xff\" "
	      "allowed_cpuset=\"0xff\" nodeset=\"0x3\" complete_nodeset=\"0x3\" "
	      "allowed_nodeset=\"0x3\" gp_index=\"1\">\n",
	      f);
	for (int p = 0, gp = 10; p < 2; p++, gp += 30) {
		unsigned m = 0xfu << (4 * p);

		fprintf(f,
		        "<object type=\"Package\" os_index=\"%d\" cpuset=\"0x%x\" "
		        "complete_cpuset=\"0x%x\" nodeset=\"0x%x\" complete_nodeset=\"0x%x\" "
		        "gp_index=\"%d\">\n<object type=\"NUMANode\" os_index=\"%d\" "
		        "cpuset=\"0x%x\" complete_cpuset=\"0x%x\" nodeset=\"0x%x\" "
		        "complete_nodeset=\"0x%x\" gp_index=\"%d\" local_memory=\"1073741824\"/>\n",
		        p, m, m, 1u << p, 1u << p, gp, p, m, m, 1u << p, 1u << p, gp + 1);
		for (int c = 0; c < 4; c++)
			fprintf(
			    f,
			    "<object type=\"Core\" os_index=\"%d\" cpuset=\"0x%x\" "
			    "complete_cpuset=\"0x%x\" nodeset=\"0x%x\" complete_nodeset=\"0x%x\" "
			    "gp_index=\"%d\"><object type=\"PU\" "
			    "os_index=\"%d\" cpuset=\"0x%x\" complete_cpuset=\"0x%x\" "
			    "nodeset=\"0x%x\" complete_nodeset=\"0x%x\" "
			    "gp_index=\"%d\"/></object>\n",
			    4 * p + c, 1u << (4 * p + c), 1u << (4 * p + c), 1u << p, 1u << p,
			    gp + 2 + 2 * c, 4 * p + c, 1u << (4 * p + c), 1u << (4 * p + c),
			    1u << p, 1u << p, gp + 3 + 2 * c);
		fprintf(f,
		        "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"0-1\" depth=\"0\" "
		        "bridge_pci=\"000%d:[00-ff]\">\n",
		        gp + 12, p);
		for (int g = 0; g < 2; g++)
			fprintf(
			    f,
			    "<object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"000%d:1%d:00.0\" "
			    "pci_type=\"0302 [10de:2330] [10de:16c1] a1\" pci_link_speed=\"0.0\">"
			    "<object type=\"OSDev\" gp_index=\"%d\" name=\"nvml%d\" "
			    "osdev_type=\"1\"/></object>\n",
			    gp + 13 + 2 * g, p, g, gp + 14 + 2 * g, 2 * p + g);
		fprintf(f,
		        "<object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"000%d:80:00.0\" "
		        "pci_type=\"0207 [15b3:101b] [15b3:0007] 00\" pci_link_speed=\"0.0\">"
		        "<object type=\"OSDev\" gp_index=\"%d\" name=\"mlx5_%d\" "
		        "osdev_type=\"3\"/></object>\n</object>\n</object>\n",
		        gp + 17, p, gp + 18, p);
	}
	fputs("</object>\n</topology>\n", f);
}

/* The node in a new temporary file (the caller unlinks it); aborts on
   failure. */
static inline const char *fuzz_gpu_node_file(void)
{
	static char path[] = "/tmp/fuzz_gpu_node_XXXXXX";
	FILE *f;
	int fd;

	if ((fd = mkstemp(path)) < 0 || !(f = fdopen(fd, "w")))
		abort();
	fuzz_gpu_xml(f);
	if (fclose(f) != 0)
		abort();
	return path;
}

#endif
