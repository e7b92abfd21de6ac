/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * affinity.h - the machine tree of exactly the resources a job step received,
 * and binding tasks inside it.
 *
 * Three pieces:
 *   - the node tree: hwloc's view of one node (live, XML file or synthetic
 *     string), restricted to the CPUs the step may use, with the levels that
 *     add no branching merged away and one leaf per task slot (a core, a PU,
 *     or a group of cores for --cpus-per-task);
 *   - the cluster's network (its switches, read from Slurm's files by conf/:
 *     treematch/topology.h) and the cluster tree of a node list: switches
 *     over nodes over node trees;
 *   - binding: apply a leaf's CPU set to a process, read the effective
 *     binding back, print CPU sets the way Slurm does ("0-1,4", "0x13").
 *
 * CPU sets are hwloc bitmaps (hwloc_bitmap_t, of pu_os numbers) from end to
 * end, as in hwloc's own tools: any number of CPUs, no fixed-size buffer.
 * Text is made only at the edge, in strings the caller frees
 * (tmatch_affinity_cpuset_list/mask), and CPU lists are read by one reader
 * (tmatch_affinity_cpuset_parse).
 *
 * A tree (tmatch_affinity_tree_t) owns a balanced tmatch_topo_t for the
 * mapping core and, beside it, a leaf table: for every leaf of that topo,
 * whether it is real or padding, its node name, its CPU set, and its position
 * in the hierarchy. Unbalanced machines (partial nodes, odd core counts,
 * switches with different numbers of nodes) are padded to the maximum arity
 * of each level, and the padding leaves are disallowed in the topo (the
 * "virtual resources" of the TreeMatch paper). No core the step may use is
 * lost, except cores left over when cpus_per_task does not divide them.
 *
 * A node tree loaded with its I/O devices (opts.io) also describes the
 * node's GPUs and network cards (tmatch_affinity_tree_devices): hwloc's PCI
 * and OS devices, each with the CPUs it is closest to, and the links hwloc
 * measured between GPUs.
 *
 * Of hwloc, this header exposes the bitmap type only; topologies stay
 * inside affinity/ behind the opaque tree type.
 *
 * Index spaces: `leaf` is a leaf of the tree's topo (0..tmatch_topo_nb_leaves-1,
 * depth first, padding included); `pu_os` an OS CPU number (what
 * sched_setaffinity and /proc show); `core_abstract` Slurm's abstract core
 * index (S_STEP_ALLOC_CORES: cores numbered socket by socket, which is hwloc's
 * core logical order). The only conversion from core_abstract to pu_os is
 * tmatch_affinity_cores_to_cpus() (and the alloc_cores option, which uses it).
 *
 * Errors: 0/-1 (or pointer/NULL) with errno set, and the optional
 * tmatch_error_t filled (file, line and column where there is one). Nothing
 * here prints, exits or keeps global state.
 */
#ifndef TMATCH_AFFINITY_H
#define TMATCH_AFFINITY_H

#include "treematch/treematch.h"

#include <hwloc.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most levels a position can have (switch levels + node + node levels). */
#define TMATCH_AFFINITY_MAX_LEVELS 16

/* ------------------------------------------------------------------------ */
/* Options of a node tree                                                    */

/* A synthetic description is one node: at most this many processing units
   and children per object (hwloc's cost grows with their squares). */
#define TMATCH_AFFINITY_SYNTHETIC_MAX_PUS   4096
#define TMATCH_AFFINITY_SYNTHETIC_MAX_ARITY 256

enum tmatch_affinity_source {
	TMATCH_AFFINITY_SRC_LIVE = 0,      /* this machine, through hwloc */
	TMATCH_AFFINITY_SRC_XML = 1,       /* opts.input = path of an hwloc XML file */
	TMATCH_AFFINITY_SRC_SYNTHETIC = 2, /* opts.input = hwloc synthetic string,
	                                      e.g. "pack:2 l3:1 l2:14 l1:1 core:1 pu:2" */
};

enum tmatch_affinity_smt {
	/* One leaf per core, bound to the core's first allowed PU (default). */
	TMATCH_AFFINITY_SMT_ONE = 0,
	/* One leaf per core, bound to all the core's allowed PUs (Slurm's default
	   task binding to a core). */
	TMATCH_AFFINITY_SMT_CORE = 1,
	/* One leaf per allowed PU: hardware threads are separate slots. */
	TMATCH_AFFINITY_SMT_ALL = 2,
};

typedef struct tmatch_affinity_opts {
	int source;        /* enum tmatch_affinity_source */
	const char *input; /* XML path or synthetic string; unused for LIVE */
	/* Marks an XML topology as describing this machine, so binding through
	   it is allowed (hwloc's IS_THISSYSTEM). Ignored for LIVE (always true). */
	int this_system;
	/* XML only: the file's bytes already read, NUL at xml_buffer[xml_len]
	   (e.g. hwloc's export made by a child that loaded the file); input
	   still names the file in messages. NULL = read input. */
	const char *xml_buffer;
	size_t xml_len;
	/* Restrictions, intersected (each NULL / 0 = no restriction): */
	const char *restrict_cpus; /* OS CPU list, "0-3,8" (pu_os) */
	const char *alloc_cores;   /* Slurm abstract core list, "0-3" (S_STEP_ALLOC_CORES) */
	int use_current_binding;   /* LIVE only: the CPU binding of process `pid` */
	pid_t pid;                 /* 0 = the calling process */
	/* CPUs of one task (Slurm's --cpus-per-task); 0/1 = one. A leaf is a
	   group of that many cores with SMT_ONE, PUs with SMT_ALL, and with
	   SMT_CORE ceil(cpus_per_task / threads per core) whole cores, since
	   Slurm counts hardware threads as CPUs. */
	int cpus_per_task;
	int smt;               /* enum tmatch_affinity_smt */
	const char *node_name; /* name recorded in the leaves; NULL = "localhost" */
	tmatch_log_fn log;     /* warnings (e.g. cores left over); NULL = silence */
	void *log_arg;
	/* 1: also load the PCI and OS devices (GPUs, network cards) and the
	   distances between them, for tmatch_affinity_tree_devices; the CPU
	   tree is the same. 0 (default): CPUs only, hwloc's cheapest load. */
	int io;
} tmatch_affinity_opts_t;

/* Defaults: LIVE, no restriction, cpus_per_task 1, SMT_ONE. */
TMATCH_API void tmatch_affinity_opts_init(tmatch_affinity_opts_t *opts);

/*
 * Parse a --smt style name: "one", "core", "all". -1/EINVAL with the list of
 * valid names otherwise.
 */
TMATCH_API int tmatch_affinity_smt_parse(const char *name, int *smt, tmatch_error_t *err);

/*
 * hwloc's components found and loaded now (HWLOC_PLUGINS_BLACKLIST as the
 * environment says) and kept for the life of the process, so that later
 * loads skip that step (the plugin's helper does it while it waits for
 * its input). 0, or -1 when hwloc cannot (later loads find them again).
 */
TMATCH_API int tmatch_affinity_components_keep(void);

/*
 * Load the XML of opts (source XML) with hwloc and return hwloc's own export
 * of what it loaded (malloc'd, NUL-terminated, *len bytes before the NUL).
 * For a file a user wrote: a child runs this, so that hwloc crashing on a
 * crafted file costs the child only, and the parent loads the export
 * (placement/inputs.c). Errors as tmatch_affinity_node_load.
 */
TMATCH_API char *tmatch_affinity_xml_export(const tmatch_affinity_opts_t *opts, size_t *len,
                                            tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Trees                                                                     */

/* A node tree or a cluster tree: balanced topo + leaf table. Opaque. */
typedef struct tmatch_affinity_tree tmatch_affinity_tree_t;

/*
 * Build the tree of one node. Fails with EINVAL (bad options, unreadable
 * XML or synthetic string, a restriction that leaves no usable CPU, fewer
 * allowed cores than cpus_per_task), ENOENT (XML file missing) or ENOMEM.
 */
TMATCH_API tmatch_affinity_tree_t *tmatch_affinity_node_load(const tmatch_affinity_opts_t *opts,
                                                             tmatch_error_t *err);

/* destroy(NULL) is a no-op. */
TMATCH_API void tmatch_affinity_tree_destroy(tmatch_affinity_tree_t *tree);

/* The balanced tree for the mapper; owned by `tree`, valid until it is destroyed.
   Level l (the objects at depth l, l < depth) is named after its objects:
   "cluster" (a root joining several top switches), "switch" (Slurm level 0,
   just above nodes), "switch1", "switch2"... (higher Slurm levels), "node",
   "package", "die", "numa", "group", "l3", "l2", "core", "pu", "virtual"
   (inserted to balance depths). Leaves are cores, PUs, or "slot"s (groups
   of cores for cpus_per_task > 1). Padding leaves are not allowed. Costs
   are the core's default (one per level climbed). */
TMATCH_API const tmatch_topo_t *tmatch_affinity_tree_topo(const tmatch_affinity_tree_t *tree);

/* A copy of the topo the caller owns (e.g. to hand to code that destroys it). */
TMATCH_API tmatch_topo_t *tmatch_affinity_tree_topo_dup(const tmatch_affinity_tree_t *tree,
                                                        tmatch_error_t *err);

/* Number of real (allowed) leaves = task slots. */
TMATCH_API int tmatch_affinity_tree_nb_slots(const tmatch_affinity_tree_t *tree);

/*
 * hwloc's XML of the machine a node tree was built from, whole (before the
 * tree's restrictions), malloc'd and NUL-terminated, *len bytes before the
 * NUL: a node tree made again from it with the same options is the same
 * tree (the plugin hands it to its helper). NULL with err for a cluster
 * tree or when hwloc cannot write it.
 */
TMATCH_API char *tmatch_affinity_tree_xml(const tmatch_affinity_tree_t *tree, size_t *len,
                                          tmatch_error_t *err);

/* Number of nodes (1 for a node tree) and the name of node i. */
TMATCH_API int tmatch_affinity_tree_nb_nodes(const tmatch_affinity_tree_t *tree);
TMATCH_API const char *tmatch_affinity_tree_node_name(const tmatch_affinity_tree_t *tree, int node);

/* The union of the allowed CPUs of node `node`, owned by the tree (NULL/EINVAL
   for a bad node). */
TMATCH_API hwloc_const_bitmap_t
tmatch_affinity_tree_allowed_cpuset(const tmatch_affinity_tree_t *tree, int node);

/* 1 if the leaf is a real slot, 0 if padding or out of range. */
TMATCH_API int tmatch_affinity_leaf_is_real(const tmatch_affinity_tree_t *tree, int leaf);

/* Node index (0..nb_nodes-1) of a real leaf; -1/EINVAL for padding. */
TMATCH_API int tmatch_affinity_leaf_node(const tmatch_affinity_tree_t *tree, int leaf);

/* The leaf's CPU set, owned by the tree; NULL/EINVAL for padding or out of range. */
TMATCH_API hwloc_const_bitmap_t tmatch_affinity_leaf_cpuset(const tmatch_affinity_tree_t *tree,
                                                            int leaf);

/* ------------------------------------------------------------------------ */
/* GPUs and network cards of a node                                          */

enum tmatch_affinity_gpu_vendor {
	TMATCH_GPU_VENDOR_OTHER = 0,
	TMATCH_GPU_VENDOR_NVIDIA = 1, /* CUDA_VISIBLE_DEVICES */
	TMATCH_GPU_VENDOR_AMD = 2,    /* ROCR_VISIBLE_DEVICES */
	TMATCH_GPU_VENDOR_INTEL = 3,  /* ZE_AFFINITY_MASK */
};

/*
 * A GPU as Slurm counts them: a whole device, or one partition of a device
 * split in several (AMD MI300A in CPX mode: six per APU, one PCI device).
 * `index` is the number in hwloc's name of it, nvmlN, rsmiN, zeN (else
 * cudaN, openclPdN; for a device hwloc knows only as PCI, its rank in PCI
 * bus order): the order NVML, ROCm SMI and Level Zero enumerate GPUs,
 * which is the order Slurm's AutoDetect numbers them in (and a gres.conf
 * listing /dev/nvidia0.. in order).
 */
typedef struct tmatch_affinity_gpu {
	int index;
	char name[32];         /* hwloc's OS device: "nvml0", "rsmi3", "cuda1", "opencl0d2" */
	char backend[16];      /* "NVML", "RSMI", "LevelZero", "CUDA", "OpenCL", "PCI" */
	int vendor;            /* enum tmatch_affinity_gpu_vendor */
	char model[64];        /* "NVIDIA H100 80GB HBM3", "" when unknown */
	char busid[16];        /* its PCI device, "0000:6b:00.0" ("" when none) */
	char uuid[48];         /* NVIDIAUUID, AMDUUID..., "" when unknown */
	int device;            /* its PCI device among the node's GPU devices (0..) */
	int partition;         /* its rank among the GPUs of that device (0 unless split) */
	int npartitions;       /* GPUs of that device (1 unless split) */
	hwloc_bitmap_t cpuset; /* locality: the CPUs of its nearest non-I/O ancestor
	                          (pu_os; owned by the devices) */
	hwloc_bitmap_t package_cpuset; /* the CPUs of its package (the machine's when
	                                  package is -1; owned) */
	int package;                   /* logical index of the package of that ancestor, -1 when
	                                  the ancestor spans packages */
	int numa;   /* OS index of the NUMA node of that ancestor, -1 when several */
	int island; /* GPUs with the same island are joined by GPU links
	               (NVLink, xGMI; directly or through NVSwitches); -1 when
	               hwloc knows no link of this GPU */
} tmatch_affinity_gpu_t;

/* A network card for MPI's traffic: an OpenFabrics device (InfiniBand,
   RoCE, EFA), or an HPE Slingshot card (its CXI device, cxiN, where hwloc
   2.14 and later shows it, else its interface). */
typedef struct tmatch_affinity_nic {
	char name[32];   /* "mlx5_0", "rdmap197s0", "cxi0", "hsi0" */
	char netdev[32]; /* its network interface when it has one ("ibp94s0", "hsn0"), else "" */
	char kind[16];   /* "OpenFabrics", "Slingshot" */
	char busid[16];
	unsigned pci_vendor;   /* its PCI device's vendor (0x15b3 NVIDIA/Mellanox, 0x1d0f
	                          Amazon, 0x17db HPE), 0 when hwloc shows no PCI device */
	hwloc_bitmap_t cpuset; /* locality, as for GPUs (owned) */
	int package, numa;
} tmatch_affinity_nic_t;

/* A matrix hwloc measured between the GPUs (NVLinkBandwidth, XGMIBandwidth
   in MB/s, XGMIHops): value[i * ngpus + j] between gpu[i] and gpu[j], 0
   where hwloc gives no value (a link through a switch is not a value). */
typedef struct tmatch_affinity_links {
	char name[32];
	int bandwidth; /* 1 for a bandwidth (larger is closer), 0 for hops */
	double *value; /* [ngpus * ngpus], owned */
} tmatch_affinity_links_t;

typedef struct tmatch_affinity_devices {
	int ngpus;
	tmatch_affinity_gpu_t *gpu; /* by index */
	int nnics;
	tmatch_affinity_nic_t *nic; /* by name */
	int nlinks;
	tmatch_affinity_links_t *link;
	int npackages; /* the node's packages (1 when hwloc shows none) */
	/* nic_rank[g * nnics + k]: how close NIC k is to GPU g, smaller is
	   closer: first the deepest CPU-side object the two share (same NUMA
	   node, same package, the machine), then the hops between them in the
	   PCI tree (the same PCIe switch is closer) */
	int *nic_rank;
} tmatch_affinity_devices_t;

/*
 * The GPUs and network cards of node `node` of a tree loaded with opts.io
 * (with io = 0, or a machine without any, an empty set: ngpus = nnics = 0).
 * The GPUs are those of the first kind of hwloc OS device the node has, in
 * this order: NVML, RSMI, Level Zero (hwloc's management libraries), CUDA,
 * OpenCL, then PCI display and accelerator devices of NVIDIA, AMD or Intel
 * (a node read without the vendors' libraries, as slurmstepd does). NULL
 * with errno (ENOMEM, EINVAL). Free with tmatch_affinity_devices_destroy.
 */
TMATCH_API tmatch_affinity_devices_t *
tmatch_affinity_tree_devices(const tmatch_affinity_tree_t *tree, int node, tmatch_error_t *err);
TMATCH_API void tmatch_affinity_devices_destroy(tmatch_affinity_devices_t *devices);

/* The GPU of a given index, -1 when the node has none of that index. */
TMATCH_API int tmatch_affinity_devices_gpu_of_index(const tmatch_affinity_devices_t *devices,
                                                    int index);

/* The value of matrix `name` between gpu[a] and gpu[b] (positions in
   gpu[]), 0 when there is no such matrix or value. */
TMATCH_API double tmatch_affinity_devices_link(const tmatch_affinity_devices_t *devices,
                                               const char *name, int a, int b);

/*
 * What `treematch topology show` prints of them: one line per GPU and per
 * NIC (name, kind, PCI bus id, locality as a CPU list, package, NUMA node,
 * island), each GPU's nearest NIC, and the link matrices. snprintf-style;
 * "" when there is neither GPU nor NIC.
 */
TMATCH_API int tmatch_affinity_devices_describe(const tmatch_affinity_devices_t *devices, char *buf,
                                                size_t len);

/* ------------------------------------------------------------------------ */
/* CPU sets as text                                                          */

/*
 * Read a list of non-negative numbers "0-3,8" (ranges, commas, blanks at
 * either end; numbers up to 1048575) into `set`: the one reader of the CPU
 * and core lists Slurm and the options give. `what` names the list in the
 * message ("CPU list" when NULL). -1/EINVAL with the column, set untouched.
 */
TMATCH_API int tmatch_affinity_cpuset_parse(const char *list, const char *what, hwloc_bitmap_t set,
                                            tmatch_error_t *err);

/*
 * A set as Slurm prints it, in a new string the caller frees: the list
 * "0-1,4" (pu_os ranges) and the mask "0x13" (hex, lowest CPU = lowest bit,
 * no leading zeros; "0x0" when empty). NULL with errno (ENOMEM, EINVAL).
 */
TMATCH_API char *tmatch_affinity_cpuset_list(hwloc_const_bitmap_t set);
TMATCH_API char *tmatch_affinity_cpuset_mask(hwloc_const_bitmap_t set);

/*
 * The same CPUs as hwloc *logical* indexes on node `node` of the tree (what
 * `lstopo` prints as L#, and what Open MPI's rankfiles count): with *unit =
 * TMATCH_AFFINITY_UNIT_CORE on entry, the cores the set is made of if it is
 * a union of whole cores, else (and with TMATCH_AFFINITY_UNIT_PU on entry)
 * its PUs; *unit says which on return. -1/EINVAL for CPUs the node's
 * hardware does not have (out untouched).
 */
enum { TMATCH_AFFINITY_UNIT_CORE = 0, TMATCH_AFFINITY_UNIT_PU = 1 };
TMATCH_API int tmatch_affinity_cpuset_logical(const tmatch_affinity_tree_t *tree, int node,
                                              hwloc_const_bitmap_t set, int *unit,
                                              hwloc_bitmap_t out, tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Hierarchy position of a leaf                                              */

typedef struct tmatch_affinity_pos {
	int nlevels; /* outermost first: switch levels, node, package, numa, l3, l2, core */
	struct {
		char name[16]; /* "switch", "switch1", "node", "package", "numa", "l3", ... */
		int index;     /* index among its real siblings (0-based) */
		int count;     /* real siblings including itself */
		int global;    /* index among all real objects of this level: over the
		                  whole cluster for switches and nodes, over the node
		                  for levels inside a node */
	} level[TMATCH_AFFINITY_MAX_LEVELS];
} tmatch_affinity_pos_t;

/*
 * Position of a real leaf at every level the hardware has (also those merged
 * away from the topo because they do not branch). Inside a node, an object
 * is numbered among the objects of its kind in its nearest enclosing
 * object that is not an L2 cache: a core is "core=5/14" in its L3 (not 0/1
 * in its private L2), a PU "pu=1/2" in its core; counts are of the CPUs the
 * step may use. For a group of cores (cpus_per_task > 1) the levels describe
 * its first core.
 */
TMATCH_API int tmatch_affinity_leaf_position(const tmatch_affinity_tree_t *tree, int leaf,
                                             tmatch_affinity_pos_t *pos, tmatch_error_t *err);

/*
 * Environment-ready strings of a position:
 *   what = TMATCH_AFFINITY_POS_LEVELS  "switch,node,package,core"
 *          TMATCH_AFFINITY_POS_INDEX   "0,1,0,5"
 *          TMATCH_AFFINITY_POS_COUNT   "2,2,2,14"
 *          TMATCH_AFFINITY_POS_FULL    "switch=0/2,node=1/2,package=0/2,core=5/14"
 * snprintf-style return; -1/EINVAL for a bad `what`.
 */
enum {
	TMATCH_AFFINITY_POS_LEVELS = 0,
	TMATCH_AFFINITY_POS_INDEX = 1,
	TMATCH_AFFINITY_POS_COUNT = 2,
	TMATCH_AFFINITY_POS_FULL = 3,
};
TMATCH_API int tmatch_affinity_pos_format(const tmatch_affinity_pos_t *pos, int what, char *buf,
                                          size_t len);
/* The same in a new string the caller frees (NULL with errno). */
TMATCH_API char *tmatch_affinity_pos_string(const tmatch_affinity_pos_t *pos, int what);

/* ------------------------------------------------------------------------ */
/* Slurm core numbers, clamping                                              */

/*
 * Slurm abstract core list ("0-3") -> the CPUs (all PUs of each core, before
 * any restriction) of those cores in node `node` of the tree, into `out`.
 * The one place core_abstract becomes pu_os. EINVAL for a core index the
 * node does not have or a malformed list (out untouched).
 */
TMATCH_API int tmatch_affinity_cores_to_cpuset(const tmatch_affinity_tree_t *tree, int node,
                                               const char *cores, hwloc_bitmap_t out,
                                               tmatch_error_t *err);

/*
 * 1 if `set` is non-empty and inside the allowed set of node `node`, 0 if
 * not (err says which CPUs are outside), -1 for bad arguments or ENOMEM.
 */
TMATCH_API int tmatch_affinity_check_inside(const tmatch_affinity_tree_t *tree, int node,
                                            hwloc_const_bitmap_t set, tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Binding                                                                   */

/*
 * Bind process `pid` (0 = the calling process; its threads created later
 * inherit it) to the CPU set of real leaf `leaf`, through hwloc. The tree
 * must describe this machine: a node tree built LIVE or from XML with
 * this_system (ENOSYS otherwise). In a cluster tree the leaf's node tree
 * is used, which is only right on that node: the caller checks the node
 * name. The set is first checked to be inside the node's allowed set
 * (-1/EINVAL if not, nothing bound). Other failures carry the errno of the
 * system call (ESRCH, EPERM).
 */
TMATCH_API int tmatch_affinity_bind_leaf(const tmatch_affinity_tree_t *tree, int leaf, pid_t pid,
                                         tmatch_error_t *err);

/* Same with an explicit CPU set, checked against node `node`'s allowed set. */
TMATCH_API int tmatch_affinity_bind_cpuset(const tmatch_affinity_tree_t *tree, int node, pid_t pid,
                                           hwloc_const_bitmap_t set, tmatch_error_t *err);

/* The effective binding of `pid` (0 = calling process), of any size, into `set`.
   Needs no tree. */
TMATCH_API int tmatch_affinity_get_cpuset(pid_t pid, hwloc_bitmap_t set, tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* The network and the cluster tree                                         */

/*
 * A cluster's network, as Slurm describes it, as one tree of switches.
 * Opaque. Read from Slurm's files by conf/ (treematch/topology.h:
 * topology.yaml, topology.conf, slurm.conf's Topology= keys), or made from
 * SLURM_TOPOLOGY_ADDR values (below). The networks become switches: a
 * tree as written; blocks as the lowest switches with Slurm's aggregated
 * blocks (runs of 2, 4, 8... consecutive base blocks, as BlockSizes
 * allows) above them; a ring as nested segments of its nodes in order
 * (pairs, fours ... up to the ring: the link from its last node to its
 * first is lost); a 3D torus as its placement shapes, the smallest tiles
 * lowest (refused, EINVAL, when a shape does not tile the torus or the
 * next larger shape); flat as no switch. slurm.conf's NodeName ...
 * Topology= lines then move or remove nodes, as slurmctld does.
 */
typedef struct tmatch_affinity_conf tmatch_affinity_conf_t;

/*
 * Build a conf from SLURM_TOPOLOGY_ADDR values ("top.s0.n1", one per node,
 * all with the same number of components; the last one is the node). Used
 * when there is no topology.conf. EINVAL for inconsistent addresses. The
 * cluster tree needs every step node in it: when only this node's address
 * is known (a task sees only its own SLURM_TOPOLOGY_ADDR), build the
 * cluster tree with conf = NULL (one flat switch) instead.
 */
TMATCH_API tmatch_affinity_conf_t *tmatch_affinity_conf_from_addrs(const char *const *addrs, int n,
                                                                   tmatch_error_t *err);

TMATCH_API void tmatch_affinity_conf_destroy(tmatch_affinity_conf_t *conf);

/* The network's kind ("tree", "block", "ring", "torus3d", "flat") and the
   topology's name ("default" for a topology.conf); NULL/EINVAL for NULL. */
TMATCH_API const char *tmatch_affinity_conf_kind(const tmatch_affinity_conf_t *conf);
TMATCH_API const char *tmatch_affinity_conf_name(const tmatch_affinity_conf_t *conf);

/* Number of switches, and switch i's name, level (0 = above nodes), link speed. */
TMATCH_API int tmatch_affinity_conf_nb_switches(const tmatch_affinity_conf_t *conf);
TMATCH_API const char *tmatch_affinity_conf_switch_name(const tmatch_affinity_conf_t *conf, int i);
TMATCH_API int tmatch_affinity_conf_switch_level(const tmatch_affinity_conf_t *conf, int i);
TMATCH_API long tmatch_affinity_conf_switch_speed(const tmatch_affinity_conf_t *conf, int i);

/* The most names a hostlist may expand to, and the most bytes their
   characters may take (each name's NUL included): a million nodes, beyond
   any cluster, 25 MB and 0.2 s to make; a million names of 1,000
   characters would have been 1 GB. */
#define TMATCH_HOSTLIST_MAX   (1L << 20)
#define TMATCH_HOSTLIST_BYTES ((size_t)32 << 20)

/* What one topology.conf or topology.yaml may name in all (nodes,
   switches, blocks, rings): 262,144 nodes and switches, more than the
   largest machine, in 16 MiB of names (about 30 MB and 0.2 s to read and
   check). */
#define TMATCH_TOPOLOGY_CONF_NAMES (1L << 18)
#define TMATCH_TOPOLOGY_CONF_BYTES ((size_t)16 << 20)

/*
 * Expand a Slurm hostlist ("n[1-4,7],login[01-02]") into a NULL-terminated
 * array of names (free with tmatch_affinity_hostlist_free). Zero padding is
 * kept ("[01-02]" gives 01, 02). EINVAL with the column of the problem;
 * E2BIG for more than TMATCH_HOSTLIST_MAX names, refused before they are
 * made ("c[1-1000]n[1-2000]" is two million), or for names longer in all
 * than TMATCH_HOSTLIST_BYTES, refused when the cap is reached.
 */
TMATCH_API char **tmatch_affinity_hostlist_expand(const char *hostlist, int *count,
                                                  tmatch_error_t *err);
TMATCH_API void tmatch_affinity_hostlist_free(char **names);

/*
 * How many names a hostlist gives, counted in one pass without making them
 * (nothing allocated, no recursion): a list from the job's environment is
 * checked against Slurm's node count this way before it is expanded.
 * -1 with EINVAL (malformed: the column) or E2BIG (more than max names,
 * found as soon as a partial count passes max).
 */
TMATCH_API long tmatch_affinity_hostlist_count(const char *hostlist, long max, tmatch_error_t *err);

/*
 * The cluster tree of a step: switches of `conf` (NULL = one flat switch)
 * over the nodes of `nodelist` (hostlist; the step's nodes only; switches
 * without step nodes are pruned; switch levels that do not branch merged),
 * each node over a copy of `node_tree` (a node tree; every node is assumed
 * to have its shape and allowed CPUs, as Slurm allocates homogeneously).
 * `capacity` (NULL, or one entry per node in nodelist order) limits node i
 * to its first capacity[i] slots in leaf order (tasks per node, e.g.
 * SLURM_STEP_TASKS_PER_NODE); 0 = all slots. Nodes at different depths
 * under the switches get virtual single-child switches so the tree is
 * balanced, then every level is padded to its maximum arity. Fails with
 * EINVAL for a node absent from a non-NULL conf, a capacity larger than the
 * node's slots, or a nodelist error.
 */
TMATCH_API tmatch_affinity_tree_t *
tmatch_affinity_cluster_build(const tmatch_affinity_conf_t *conf, const char *nodelist,
                              const tmatch_affinity_tree_t *node_tree, const int *capacity,
                              tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Display                                                                   */

/*
 * Human-readable description: one line per level (name, arity, padding) and
 * one per real leaf (leaf index, node, CPU list, mask, position). Returns
 * the full length (snprintf-style); a short buffer is truncated.
 */
TMATCH_API int tmatch_affinity_tree_describe(const tmatch_affinity_tree_t *tree, char *buf,
                                             size_t len);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_AFFINITY_H */
