/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu.c - the GPUs and network cards of a node (affinity.h,
 * tmatch_affinity_tree_devices), read from hwloc's PCI and OS devices of a
 * node tree loaded with opts.io.
 *
 * A GPU is an OS device of the first backend the node has in this order:
 * NVML, RSMI, Level Zero, CUDA, OpenCL (one backend only, so that each
 * device is counted once: hwloc shows an H100 as nvml0, cuda0 and
 * opencl0d0); without any, a PCI device of class display or processing
 * accelerator from NVIDIA, AMD or Intel (what slurmstepd sees: it loads
 * none of hwloc's vendor plugins). Its locality is the CPU set of its
 * nearest non-I/O ancestor, as hwloc's hwloc_get_non_io_ancestor_obj
 * gives it. GPU links come from hwloc's distance matrices NVLinkBandwidth,
 * XGMIBandwidth and XGMIHops (homogeneous, or heterogeneous with NVSwitches
 * and CPU packages in them); islands are the sets of GPUs those links join,
 * through switches too, else the GPUs of one xGMI hive (XGMIHiveID).
 */
#include "affinity/affinity_private.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The GPU backends, best first: the management libraries number GPUs as
   Slurm's AutoDetect does. */
enum { BK_NVML, BK_RSMI, BK_ZE, BK_CUDA, BK_OPENCL, BK_PCI, BK_COUNT };
static const char *const backend_names[BK_COUNT] = {"NVML", "RSMI",   "LevelZero",
                                                    "CUDA", "OpenCL", "PCI"};

/* The names of the link matrices hwloc has between GPUs. */
static const char *const link_names[] = {"NVLinkBandwidth", "XGMIBandwidth", "XGMIHops"};
#define NLINK_NAMES 3

/* The number after `prefix` that ends `name` ("nvml12" -> 12), -1 if none. */
static int number_after(const char *name, const char *prefix)
{
	size_t l = strlen(prefix);
	long v = 0;

	if (strncmp(name, prefix, l) != 0 || !isdigit((unsigned char)name[l]))
		return -1;
	for (const char *p = name + l; *p; p++) {
		if (!isdigit((unsigned char)*p) || v > 1000000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return (int)v;
}

/* The backend of a GPU OS device and its index, or -1. */
static int gpu_backend(hwloc_obj_t o, int *index)
{
	const char *n = o->name;
	int i;

	if (!n || o->type != HWLOC_OBJ_OS_DEVICE ||
	    (o->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
	     o->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC))
		return -1;
	if ((i = number_after(n, "nvml")) >= 0)
		return *index = i, BK_NVML;
	if ((i = number_after(n, "rsmi")) >= 0)
		return *index = i, BK_RSMI;
	if ((i = number_after(n, "ze")) >= 0) /* a root device; "ze0.1" is a subdevice */
		return *index = i, BK_ZE;
	if ((i = number_after(n, "cuda")) >= 0)
		return *index = i, BK_CUDA;
	if (!strncmp(n, "opencl", 6) && isdigit((unsigned char)n[6])) {
		const char *d = strchr(n + 6, 'd');

		if (d && (i = number_after(d, "d")) >= 0 && n[6] == '0' && d == n + 7)
			return *index = i, BK_OPENCL; /* platform 0 only */
	}
	return -1;
}

/* A PCI device that is a GPU without any OS device saying so. */
static int pci_is_gpu(hwloc_obj_t o)
{
	unsigned cls = o->attr->pcidev.class_id, v = o->attr->pcidev.vendor_id;

	if (o->type != HWLOC_OBJ_PCI_DEVICE)
		return 0;
	if (v != 0x10de && v != 0x1002 && v != 0x8086)
		return 0;
	return (cls >> 8) == 0x03 || (cls >> 8) == 0x12; /* display, processing accelerator */
}

static int vendor_of(hwloc_obj_t osdev, hwloc_obj_t pci)
{
	const char *v = osdev ? hwloc_obj_get_info_by_name(osdev, "GPUVendor") : NULL;

	if (pci) {
		switch (pci->attr->pcidev.vendor_id) {
		case 0x10de:
			return TMATCH_GPU_VENDOR_NVIDIA;
		case 0x1002:
			return TMATCH_GPU_VENDOR_AMD;
		case 0x8086:
			return TMATCH_GPU_VENDOR_INTEL;
		default:
			break;
		}
	}
	if (v && (strstr(v, "NVIDIA") || strstr(v, "Nvidia")))
		return TMATCH_GPU_VENDOR_NVIDIA;
	if (v && (strstr(v, "AMD") || strstr(v, "Advanced Micro")))
		return TMATCH_GPU_VENDOR_AMD;
	if (v && strstr(v, "Intel"))
		return TMATCH_GPU_VENDOR_INTEL;
	if (osdev && osdev->name) {
		if (!strncmp(osdev->name, "nvml", 4) || !strncmp(osdev->name, "cuda", 4))
			return TMATCH_GPU_VENDOR_NVIDIA;
		if (!strncmp(osdev->name, "rsmi", 4))
			return TMATCH_GPU_VENDOR_AMD;
		if (!strncmp(osdev->name, "ze", 2))
			return TMATCH_GPU_VENDOR_INTEL;
	}
	return TMATCH_GPU_VENDOR_OTHER;
}

static hwloc_obj_t pci_of(hwloc_obj_t o)
{
	for (; o; o = o->parent)
		if (o->type == HWLOC_OBJ_PCI_DEVICE)
			return o;
	return NULL;
}

static void busid_of(hwloc_obj_t pci, char *buf, size_t len)
{
	buf[0] = '\0';
	if (pci)
		snprintf(buf, len, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain & 0xffffu,
		         pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static void copy_info(hwloc_obj_t o, const char *name, char *buf, size_t len)
{
	const char *v = o ? hwloc_obj_get_info_by_name(o, name) : NULL;

	if (v && !buf[0]) {
		size_t i;

		/* printable text only: the file may be anyone's */
		for (i = 0; v[i] && i + 1 < len; i++)
			buf[i] = isprint((unsigned char)v[i]) ? v[i] : '?';
		buf[i] = '\0';
	}
}

/* Locality of an I/O object: CPUs, package and NUMA node. */
static int locality(hwloc_topology_t topo, hwloc_obj_t io, hwloc_bitmap_t *cpuset, int *package,
                    int *numa)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, io), p;

	*package = -1;
	*numa = -1;
	*cpuset = hwloc_bitmap_dup(anc && anc->cpuset ? anc->cpuset
	                                              : hwloc_topology_get_topology_cpuset(topo));
	if (!*cpuset)
		return -1;
	if (!anc)
		return 0;
	for (p = anc; p; p = p->parent)
		if (p->type == HWLOC_OBJ_PACKAGE) {
			*package = (int)p->logical_index;
			break;
		}
	if (*package < 0 && anc->cpuset) {
		/* a Group or NUMA node inside one package (hwloc puts them above it
		   on some machines): the package holding all its CPUs */
		hwloc_obj_t pk = hwloc_get_obj_covering_cpuset(topo, anc->cpuset);

		for (; pk; pk = pk->parent)
			if (pk->type == HWLOC_OBJ_PACKAGE) {
				*package = (int)pk->logical_index;
				break;
			}
	}
	if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1)
		*numa = hwloc_bitmap_first(anc->nodeset);
	return 0;
}

void tmatch_affinity_devices_destroy(tmatch_affinity_devices_t *d)
{
	if (!d)
		return;
	for (int i = 0; d->gpu && i < d->ngpus; i++) {
		hwloc_bitmap_free(d->gpu[i].cpuset);
		hwloc_bitmap_free(d->gpu[i].package_cpuset);
	}
	for (int i = 0; d->nic && i < d->nnics; i++)
		hwloc_bitmap_free(d->nic[i].cpuset);
	for (int i = 0; d->link && i < d->nlinks; i++)
		free(d->link[i].value);
	free(d->gpu);
	free(d->nic);
	free(d->link);
	free(d->nic_rank);
	free(d);
}

/* What the scan keeps of each GPU beside the public fields. */
struct scan {
	hwloc_obj_t *osdev; /* [ngpus] the OS device (NULL for PCI-only GPUs) */
	hwloc_obj_t *pci;   /* [ngpus] its PCI device or NULL */
	hwloc_obj_t *nicobj;
};

static int cmp_int(int a, int b)
{
	return (a > b) - (a < b);
}

/* Natural order of names: "mlx5_2" before "mlx5_10". */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			long x = strtol(a, (char **)&a, 10), y = strtol(b, (char **)&b, 10);

			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

/* Sort GPUs by index (stable on ties: hwloc's order), with the scan's
   arrays in step: a small insertion sort, nodes have tens of GPUs. */
static void sort_gpus(tmatch_affinity_devices_t *d, struct scan *s)
{
	for (int i = 1; i < d->ngpus; i++) {
		tmatch_affinity_gpu_t g = d->gpu[i];
		hwloc_obj_t os = s->osdev[i], pci = s->pci[i];
		int j = i;

		while (j > 0 && cmp_int(d->gpu[j - 1].index, g.index) > 0) {
			d->gpu[j] = d->gpu[j - 1];
			s->osdev[j] = s->osdev[j - 1];
			s->pci[j] = s->pci[j - 1];
			j--;
		}
		d->gpu[j] = g;
		s->osdev[j] = os;
		s->pci[j] = pci;
	}
}

static void sort_nics(tmatch_affinity_devices_t *d, struct scan *s)
{
	for (int i = 1; i < d->nnics; i++) {
		tmatch_affinity_nic_t n = d->nic[i];
		hwloc_obj_t o = s->nicobj[i];
		int j = i;

		while (j > 0 && natural_cmp(d->nic[j - 1].name, n.name) > 0) {
			d->nic[j] = d->nic[j - 1];
			s->nicobj[j] = s->nicobj[j - 1];
			j--;
		}
		d->nic[j] = n;
		s->nicobj[j] = o;
	}
}

static int find_gpus(hwloc_topology_t topo, tmatch_affinity_devices_t *d, struct scan *s)
{
	int best = BK_COUNT, n = 0, idx;
	hwloc_obj_t o = NULL;

	while ((o = hwloc_get_next_osdev(topo, o)))
		if ((idx = gpu_backend(o, &idx)) >= 0 && idx < best)
			best = idx;
	if (best == BK_COUNT) {
		o = NULL;
		while ((o = hwloc_get_next_pcidev(topo, o)))
			if (pci_is_gpu(o))
				best = BK_PCI;
	}
	if (best == BK_COUNT)
		return 0;
	/* count, then fill */
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		o = NULL;
		if (best == BK_PCI) {
			while ((o = hwloc_get_next_pcidev(topo, o))) {
				if (!pci_is_gpu(o))
					continue;
				if (pass) {
					s->osdev[n] = NULL;
					s->pci[n] = o;
					d->gpu[n].index = n; /* PCI bus order: hwloc's order */
				}
				n++;
			}
		} else {
			while ((o = hwloc_get_next_osdev(topo, o))) {
				if (gpu_backend(o, &idx) != best)
					continue;
				if (pass) {
					s->osdev[n] = o;
					s->pci[n] = pci_of(o);
					d->gpu[n].index = idx;
				}
				n++;
			}
		}
		if (!pass) {
			d->gpu = calloc((size_t)n, sizeof(*d->gpu));
			s->osdev = calloc((size_t)n, sizeof(hwloc_obj_t));
			s->pci = calloc((size_t)n, sizeof(hwloc_obj_t));
			if (!d->gpu || !s->osdev || !s->pci)
				return -1;
		}
	}
	d->ngpus = n;
	sort_gpus(d, s);
	for (int i = 0; i < n; i++) {
		tmatch_affinity_gpu_t *g = &d->gpu[i];
		hwloc_obj_t os = s->osdev[i], pci = s->pci[i];

		snprintf(g->backend, sizeof(g->backend), "%s", backend_names[best]);
		if (os)
			snprintf(g->name, sizeof(g->name), "%.31s", os->name);
		else
			snprintf(g->name, sizeof(g->name), "gpu%d", g->index);
		g->vendor = vendor_of(os, pci);
		copy_info(os, "GPUModel", g->model, sizeof(g->model));
		copy_info(pci, "PCIDevice", g->model, sizeof(g->model));
		copy_info(os, "NVIDIAUUID", g->uuid, sizeof(g->uuid));
		copy_info(os, "AMDUUID", g->uuid, sizeof(g->uuid));
		copy_info(os, "LevelZeroUUID", g->uuid, sizeof(g->uuid));
		busid_of(pci, g->busid, sizeof(g->busid));
		g->island = -1;
		if (locality(topo, os ? os : pci, &g->cpuset, &g->package, &g->numa) < 0)
			return -1;
		{
			hwloc_obj_t pk = g->package >= 0
			                     ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE,
			                                             (unsigned)g->package)
			                     : NULL;

			g->package_cpuset = hwloc_bitmap_dup(
			    pk && pk->cpuset ? pk->cpuset
			                     : hwloc_topology_get_topology_cpuset(topo));
			if (!g->package_cpuset)
				return -1;
		}
	}
	/* devices and partitions: GPUs sharing a PCI device, in index order */
	for (int i = 0, ndev = 0; i < n; i++) {
		int first = i;

		for (int j = 0; j < i; j++)
			if (s->pci[j] && s->pci[j] == s->pci[i]) {
				first = j;
				break;
			}
		if (first == i) {
			d->gpu[i].device = ndev++;
			d->gpu[i].partition = 0;
		} else {
			d->gpu[i].device = d->gpu[first].device;
			d->gpu[i].partition = d->gpu[first].npartitions;
		}
		d->gpu[first].npartitions++;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (d->gpu[j].device == d->gpu[i].device && d->gpu[j].partition == 0)
				d->gpu[i].npartitions = d->gpu[j].npartitions;
	return 0;
}

/* hwloc's name of a Slingshot card's CXI device: "cxi" and digits. */
static int is_cxi(const char *name)
{
	return !strncmp(name, "cxi", 3) && name[3] &&
	       strspn(name + 3, "0123456789") == strlen(name + 3);
}

/* A network card OS device: OpenFabrics, or a Slingshot interface (hwloc
   2.10 marks them; older ones only by the names HPE gives them, hsnN, and
   hsiN in some exported files). */
static const char *nic_kind(hwloc_obj_t o)
{
	if (o->type != HWLOC_OBJ_OS_DEVICE || !o->name)
		return NULL;
	if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
		return "OpenFabrics";
	if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK &&
	    ((o->subtype && !strcmp(o->subtype, "Slingshot")) || !strncmp(o->name, "hsi", 3) ||
	     !strncmp(o->name, "hsn", 3)))
		return "Slingshot";
	return NULL;
}

static const char *sysfs_root = "/sys";

void tmatch__affinity_set_sysfs_root(const char *root)
{
	sysfs_root = root ? root : "/sys";
}

/*
 * hwloc before 2.14 (Debian 12's 2.9, 13's 2.12) shows a Slingshot card by
 * its interface only, while libfabric's cxi provider names it by its CXI
 * device. On the machine itself the cxi driver lists those devices in
 * sysfs, class/cxi/cxiN, whose `device` link is the card's PCI function:
 * the card of that bus id takes the name. Not for another machine's XML.
 */
static void cxi_from_sysfs(hwloc_topology_t topo, tmatch_affinity_devices_t *d)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct dirent *e;
	DIR *dir;
	int need = 0;

	for (int k = 0; k < d->nnics; k++)
		if (!strcmp(d->nic[k].kind, "Slingshot") && !is_cxi(d->nic[k].name) &&
		    d->nic[k].busid[0])
			need = 1;
	if (!need || !hwloc_topology_is_thissystem(topo))
		return;
	snprintf(path, sizeof(path), "%s/class/cxi", sysfs_root);
	if (!(dir = opendir(path)))
		return;
	while ((e = readdir(dir))) {
		const char *bus;
		ssize_t n;

		if (!is_cxi(e->d_name) || strlen(e->d_name) >= sizeof(d->nic[0].name) ||
		    snprintf(path, sizeof(path), "%s/class/cxi/%s/device", sysfs_root, e->d_name) >=
		        (int)sizeof(path) ||
		    (n = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[n] = '\0';
		bus = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
		for (int k = 0; k < d->nnics; k++) {
			tmatch_affinity_nic_t *c = &d->nic[k];

			if (strcmp(c->kind, "Slingshot") != 0 || is_cxi(c->name) ||
			    strcasecmp(c->busid, bus) != 0)
				continue;
			if (!c->netdev[0])
				snprintf(c->netdev, sizeof(c->netdev), "%s", c->name);
			snprintf(c->name, sizeof(c->name), "%s", e->d_name);
		}
	}
	closedir(dir);
}

static int find_nics(hwloc_topology_t topo, tmatch_affinity_devices_t *d, struct scan *s)
{
	hwloc_obj_t o = NULL;
	int cap = 0;

	while ((o = hwloc_get_next_osdev(topo, o))) {
		const char *kind = nic_kind(o);
		hwloc_obj_t pci = pci_of(o), key = pci ? pci : o;
		int k;

		if (!kind)
			continue;
		for (k = 0; k < d->nnics; k++)
			if (s->nicobj[k] == key)
				break;
		if (k < d->nnics) {
			/* the card is known: an OpenFabrics name, or a Slingshot card's
			   CXI device (hwloc 2.14: "cxi0" beside "hsn0"), wins over the
			   interface */
			tmatch_affinity_nic_t *n = &d->nic[k];

			if ((!strcmp(kind, "OpenFabrics") && strcmp(n->kind, "OpenFabrics") != 0) ||
			    (!strcmp(kind, "Slingshot") && !strcmp(n->kind, "Slingshot") &&
			     is_cxi(o->name) && !is_cxi(n->name))) {
				snprintf(n->netdev, sizeof(n->netdev), "%s", n->name);
				snprintf(n->name, sizeof(n->name), "%.31s", o->name);
				snprintf(n->kind, sizeof(n->kind), "%s", kind);
			}
			continue;
		}
		if (d->nnics == cap) {
			int ncap = cap ? 2 * cap : 8;
			void *a = realloc(d->nic, (size_t)ncap * sizeof(*d->nic));
			void *b;

			if (!a)
				return -1;
			d->nic = a;
			if (!(b = realloc(s->nicobj, (size_t)ncap * sizeof(hwloc_obj_t))))
				return -1;
			s->nicobj = b;
			cap = ncap;
		}
		memset(&d->nic[d->nnics], 0, sizeof(d->nic[0]));
		s->nicobj[d->nnics] = key;
		snprintf(d->nic[d->nnics].name, sizeof(d->nic[0].name), "%.31s", o->name);
		snprintf(d->nic[d->nnics].kind, sizeof(d->nic[0].kind), "%s", kind);
		busid_of(pci, d->nic[d->nnics].busid, sizeof(d->nic[0].busid));
		d->nic[d->nnics].pci_vendor = pci ? pci->attr->pcidev.vendor_id : 0;
		if (locality(topo, key, &d->nic[d->nnics].cpuset, &d->nic[d->nnics].package,
		             &d->nic[d->nnics].numa) < 0)
			return -1;
		d->nnics++;
	}
	/* the interface of an OpenFabrics card ("ib0", "hsi0"), when it has one */
	for (int k = 0; k < d->nnics; k++) {
		o = NULL;
		while (!d->nic[k].netdev[0] && (o = hwloc_get_next_osdev(topo, o)))
			if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && o->name &&
			    (pci_of(o) ? pci_of(o) : o) == s->nicobj[k] &&
			    strcmp(o->name, d->nic[k].name) != 0)
				snprintf(d->nic[k].netdev, sizeof(d->nic[k].netdev), "%.31s",
				         o->name);
	}
	cxi_from_sysfs(topo, d);
	sort_nics(d, s);
	return 0;
}

/* Depth of the CPU-side object two I/O objects share, and the hops between
   them through their common ancestor (hwloc's helper for that wants
   objects of the CPU tree: I/O objects have no depth order). */
static void closeness(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b, int *cpu_depth,
                      int *hops)
{
	hwloc_obj_t anc = NULL, p, q;
	int ha = 0, hb;

	for (p = a; p && !anc; p = p->parent, ha++) {
		hb = 0;
		for (q = b; q; q = q->parent, hb++)
			if (q == p) {
				anc = p;
				break;
			}
		if (anc)
			break;
	}
	*hops = anc ? ha + hb : 4095;
	p = anc ? hwloc_get_non_io_ancestor_obj(topo, anc) : NULL;
	if (anc && anc->type != HWLOC_OBJ_BRIDGE && anc->type != HWLOC_OBJ_PCI_DEVICE &&
	    anc->type != HWLOC_OBJ_OS_DEVICE)
		p = anc;
	*cpu_depth = p ? p->depth : 0;
}

static int rank_nics(hwloc_topology_t topo, tmatch_affinity_devices_t *d, struct scan *s)
{
	int maxdepth = hwloc_topology_get_depth(topo);

	if (!d->ngpus || !d->nnics)
		return 0;
	if (!(d->nic_rank = calloc((size_t)d->ngpus * (size_t)d->nnics, sizeof(int))))
		return -1;
	for (int g = 0; g < d->ngpus; g++)
		for (int k = 0; k < d->nnics; k++) {
			hwloc_obj_t go = s->osdev[g] ? s->osdev[g] : s->pci[g];
			int depth, hops;

			closeness(topo, go, s->nicobj[k], &depth, &hops);
			d->nic_rank[g * d->nnics + k] =
			    (maxdepth - depth) * 4096 + (hops < 4095 ? hops : 4095);
		}
	return 0;
}

/* The GPU an object of a distance matrix stands for, or -1. */
static int gpu_of_obj(const tmatch_affinity_devices_t *d, const struct scan *s, hwloc_obj_t o)
{
	int found = -1, n = 0;

	for (int g = 0; g < d->ngpus; g++)
		if (s->osdev[g] == o || (!s->osdev[g] && s->pci[g] == o))
			return g;
	/* another OS device of the same PCI device (cuda0 for nvml0), when
	   that device holds one GPU only */
	if (o->type != HWLOC_OBJ_OS_DEVICE && o->type != HWLOC_OBJ_PCI_DEVICE)
		return -1;
	for (int g = 0; g < d->ngpus; g++)
		if (s->pci[g] && s->pci[g] == pci_of(o)) {
			found = g;
			n++;
		}
	return n == 1 ? found : -1;
}

/* Union-find over the objects of a matrix. */
static int uf_find(int *parent, int i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

static void uf_join(int *parent, int a, int b)
{
	a = uf_find(parent, a);
	b = uf_find(parent, b);
	if (a != b)
		parent[a > b ? a : b] = a > b ? b : a;
}

/* A matrix object that may carry GPU traffic between others: a switch
   (PCI device or bridge, an OS device), not a CPU package. */
static int is_switch(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_PCI_DEVICE || o->type == HWLOC_OBJ_BRIDGE ||
	       o->type == HWLOC_OBJ_OS_DEVICE;
}

static int read_links(hwloc_topology_t topo, tmatch_affinity_devices_t *d, struct scan *s)
{
	int ng = d->ngpus, *gparent = NULL, *linked = NULL, rc = -1;

	if (!ng)
		return 0;
	if (!(d->link = calloc(NLINK_NAMES, sizeof(*d->link))) ||
	    !(gparent = malloc((size_t)ng * sizeof(int))) ||
	    !(linked = calloc((size_t)ng, sizeof(int))))
		goto out;
	for (int g = 0; g < ng; g++)
		gparent[g] = g;
	for (int l = 0; l < NLINK_NAMES; l++) {
		struct hwloc_distances_s *dist[4];
		unsigned nr = 4;
		tmatch_affinity_links_t *lk = &d->link[d->nlinks];
		int any = 0;

		if (hwloc_distances_get_by_name(topo, link_names[l], &nr, dist, 0) < 0 || nr == 0)
			continue;
		if (nr > 4)
			nr = 4;
		if (!(lk->value = calloc((size_t)ng * (size_t)ng, sizeof(double)))) {
			for (unsigned m = 0; m < nr; m++)
				hwloc_distances_release(topo, dist[m]);
			goto out;
		}
		snprintf(lk->name, sizeof(lk->name), "%s", link_names[l]);
		lk->bandwidth = strstr(link_names[l], "Bandwidth") != NULL;
		for (unsigned m = 0; m < nr; m++) {
			struct hwloc_distances_s *ds = dist[m];
			unsigned no = ds->nbobjs;
			int *gi = malloc(no * sizeof(int)), *parent = malloc(no * sizeof(int));

			if (!gi || !parent) {
				free(gi);
				free(parent);
				for (; m < nr; m++)
					hwloc_distances_release(topo, dist[m]);
				goto out;
			}
			for (unsigned i = 0; i < no; i++) {
				gi[i] = ds->objs[i] ? gpu_of_obj(d, s, ds->objs[i]) : -1;
				parent[i] = (int)i;
				any |= gi[i] >= 0;
			}
			for (unsigned i = 0; i < no; i++)
				for (unsigned j = 0; j < no; j++) {
					double v = (double)ds->values[i * no + j];

					if (i == j || v <= 0)
						continue;
					if (gi[i] >= 0 && gi[j] >= 0)
						lk->value[gi[i] * ng + gi[j]] = v;
					/* islands: bandwidth between GPUs and switches, not
					   through CPU packages */
					if (lk->bandwidth && ds->objs[i] && ds->objs[j] &&
					    (gi[i] >= 0 || is_switch(ds->objs[i])) &&
					    (gi[j] >= 0 || is_switch(ds->objs[j])))
						uf_join(parent, (int)i, (int)j);
				}
			/* GPUs of one component of this matrix are one island */
			for (unsigned i = 0; lk->bandwidth && i < no; i++)
				for (unsigned j = i + 1; gi[i] >= 0 && j < no; j++)
					if (gi[j] >= 0 &&
					    uf_find(parent, (int)i) == uf_find(parent, (int)j)) {
						uf_join(gparent, gi[i], gi[j]);
						linked[gi[i]] = linked[gi[j]] = 1;
					}
			free(gi);
			free(parent);
			hwloc_distances_release(topo, ds);
		}
		if (any) {
			d->nlinks++;
		} else {
			free(lk->value);
			lk->value = NULL;
		}
	}
	/* no link matrix: the GPUs of one xGMI hive are one island */
	for (int g = 0; g < ng && !d->nlinks; g++) {
		const char *hive =
		    s->osdev[g] ? hwloc_obj_get_info_by_name(s->osdev[g], "XGMIHiveID") : NULL;

		if (!hive || strspn(hive, "0") == strlen(hive))
			continue;
		for (int h = 0; h < g; h++) {
			const char *o = s->osdev[h]
			                    ? hwloc_obj_get_info_by_name(s->osdev[h], "XGMIHiveID")
			                    : NULL;

			if (o && !strcmp(o, hive)) {
				uf_join(gparent, h, g);
				linked[h] = linked[g] = 1;
			}
		}
	}
	/* an island is named by its lowest GPU (position in gpu[]) */
	for (int g = 0; g < ng; g++)
		d->gpu[g].island = linked[g] ? uf_find(gparent, g) : -1;
	rc = 0;
out:
	free(gparent);
	free(linked);
	return rc;
}

tmatch_affinity_devices_t *tmatch_affinity_tree_devices(const tmatch_affinity_tree_t *tree,
                                                        int node, tmatch_error_t *err)
{
	tmatch_affinity_devices_t *d;
	struct scan s = {NULL, NULL, NULL};
	hwloc_topology_t topo;

	if (!tree || node < 0 || node >= tree->nb_nodes) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_affinity_tree_devices: invalid argument");
		return NULL;
	}
	if (!(d = calloc(1, sizeof(*d))))
		goto nomem;
	topo = tree->nodes[node].topo;
	d->npackages = 1;
	if (!topo)
		return d;
	if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE) > 1)
		d->npackages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
	if (find_gpus(topo, d, &s) < 0 || find_nics(topo, d, &s) < 0 ||
	    rank_nics(topo, d, &s) < 0 || read_links(topo, d, &s) < 0)
		goto nomem;
	free(s.osdev);
	free(s.pci);
	free(s.nicobj);
	return d;
nomem:
	free(s.osdev);
	free(s.pci);
	free(s.nicobj);
	tmatch_affinity_devices_destroy(d);
	tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	return NULL;
}

int tmatch_affinity_devices_gpu_of_index(const tmatch_affinity_devices_t *d, int index)
{
	for (int g = 0; d && g < d->ngpus; g++)
		if (d->gpu[g].index == index)
			return g;
	return -1;
}

double tmatch_affinity_devices_link(const tmatch_affinity_devices_t *d, const char *name, int a,
                                    int b)
{
	if (!d || !name || a < 0 || b < 0 || a >= d->ngpus || b >= d->ngpus)
		return 0;
	for (int l = 0; l < d->nlinks; l++)
		if (!strcmp(d->link[l].name, name))
			return d->link[l].value[a * d->ngpus + b];
	return 0;
}

/* ------------------------------------------------------------------------ */

static void emit_where(struct tmatch__out *o, hwloc_const_bitmap_t set, int package, int numa)
{
	char *list = tmatch_affinity_cpuset_list(set);

	tmatch__emit(o, " cpus %s", list ? list : "?");
	free(list);
	if (package >= 0)
		tmatch__emit(o, " package %d", package);
	if (numa >= 0)
		tmatch__emit(o, " numa %d", numa);
}

int tmatch_affinity_devices_describe(const tmatch_affinity_devices_t *d, char *buf, size_t len)
{
	struct tmatch__out o = {buf, buf ? len : 0, 0};

	if (!d || (!buf && len)) {
		errno = EINVAL;
		return -1;
	}
	if (buf && len)
		buf[0] = '\0';
	if (d->ngpus)
		tmatch__emit(&o, "gpus: %d (%s)\n", d->ngpus, d->gpu[0].backend);
	for (int g = 0; g < d->ngpus; g++) {
		const tmatch_affinity_gpu_t *x = &d->gpu[g];

		tmatch__emit(&o, "gpu %d: %s", x->index, x->name);
		if (x->model[0])
			tmatch__emit(&o, " \"%s\"", x->model);
		if (x->busid[0])
			tmatch__emit(&o, " pci %s", x->busid);
		if (x->npartitions > 1)
			tmatch__emit(&o, " partition %d/%d", x->partition, x->npartitions);
		emit_where(&o, x->cpuset, x->package, x->numa);
		if (x->island >= 0)
			tmatch__emit(&o, " island %d", x->island);
		if (d->nnics) {
			int best = 0;

			for (int k = 1; k < d->nnics; k++)
				if (d->nic_rank[g * d->nnics + k] <
				    d->nic_rank[g * d->nnics + best])
					best = k;
			tmatch__emit(&o, " nic %s", d->nic[best].name);
		}
		tmatch__emit(&o, "\n");
	}
	if (d->nnics)
		tmatch__emit(&o, "nics: %d\n", d->nnics);
	for (int k = 0; k < d->nnics; k++) {
		const tmatch_affinity_nic_t *n = &d->nic[k];

		tmatch__emit(&o, "nic %d: %s (%s", k, n->name, n->kind);
		if (n->netdev[0])
			tmatch__emit(&o, ", %s", n->netdev);
		tmatch__emit(&o, ")");
		if (n->busid[0])
			tmatch__emit(&o, " pci %s", n->busid);
		emit_where(&o, n->cpuset, n->package, n->numa);
		tmatch__emit(&o, "\n");
	}
	for (int l = 0; l < d->nlinks; l++) {
		const tmatch_affinity_links_t *lk = &d->link[l];

		tmatch__emit(&o, "links %s%s:\n", lk->name, lk->bandwidth ? " (MB/s)" : "");
		tmatch__emit(&o, "  %8s", "");
		for (int j = 0; j < d->ngpus; j++)
			tmatch__emit(&o, " %8s", d->gpu[j].name);
		tmatch__emit(&o, "\n");
		for (int i = 0; i < d->ngpus; i++) {
			tmatch__emit(&o, "  %8s", d->gpu[i].name);
			for (int j = 0; j < d->ngpus; j++)
				tmatch__emit(&o, " %8.0f", lk->value[i * d->ngpus + j]);
			tmatch__emit(&o, "\n");
		}
	}
	return o.pos > INT_MAX ? INT_MAX : (int)o.pos;
}
