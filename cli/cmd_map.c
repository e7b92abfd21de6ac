/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_map.c - `treematch map` (compute a placement) and `treematch eval`
 * (metrics of a placement next to packed and round-robin).
 *
 * The plain mapping format, written by map and read by eval (through the
 * library's reader, tmatch_map_read), is one line per rank: "RANK LEAF"
 * (decimal, leaves numbered depth first).
 */
#include "cli/cli.h"
#include "cli/json.h"
#include "placement/gpu.h"
#include "placement/inputs.h"
#include "placement/launcher.h"
#include "placement/node.h"
#include "treematch/internal.h"
#include "treematch/treematch.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_mappers(FILE *out)
{
	const char *const *names = tmatch_map_mappers();
	for (int i = 0; names[i]; i++)
		fprintf(out, "%s%s", i ? ", " : "", names[i]);
}

/*
 * --allowed LIST or @FILE: leaves (depth first) separated by commas or
 * white space, "A-B" for a range. Errors give the column (and, for a
 * file, the line). Returns 0 with *out (malloc'd) and *count set.
 */
/* 1-based column of `at` in the line starting at `start`. */
static int column_of(const char *at, const char *start)
{
	return (int)(at - start) + 1;
}

static int parse_allowed(const char *arg, int nleaves, int **out, int *count, tmatch_error_t *err)
{
	char *text = NULL;
	const char *origin = "--allowed", *p;
	int *leaves = NULL, cnt = 0, cap = 0, line = 1, rc = -1;
	const char *line_start;

	if (arg[0] == '@') {
		tmatch_error_t e;
		size_t len;

		origin = arg + 1;
		/* a CPU list: 1 MiB is some 200,000 CPUs */
		tmatch_error_clear(&e);
		if (!(text = tmatch_file_read(origin, (size_t)1 << 20, &len, &e))) {
			snprintf(err->file, sizeof(err->file), "%s", origin);
			snprintf(err->msg, sizeof(err->msg), "%s", e.msg);
			return -1;
		}
	} else if (!(text = strdup(arg))) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -1;
	}
#define BADA(at, ...)                                                                              \
	do {                                                                                       \
		snprintf(err->file, sizeof(err->file), "%s", origin);                              \
		err->line = arg[0] == '@' ? line : 1;                                              \
		err->column = column_of((at), line_start);                                         \
		snprintf(err->msg, sizeof(err->msg), __VA_ARGS__);                                 \
		goto out;                                                                          \
	} while (0)
	p = line_start = text;
	for (;;) {
		long a, b;
		const char *end;
		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
			if (*p == '\n') {
				line++;
				line_start = p + 1;
			}
			p++;
		}
		if (!*p)
			break;
		switch (tmatch__list_item(p, nleaves - 1L, &a, &b, &end)) {
		case 0:
			break;
		case TMATCH__LIST_NO_NUMBER:
			BADA(p, "expected a leaf number or a range A-B");
		case TMATCH__LIST_NO_END:
			BADA(end, "expected the end of the range");
		case TMATCH__LIST_TOO_BIG:
			BADA(p, "leaf out of range: the topology has leaves 0..%d", nleaves - 1);
		default:
			BADA(p, "empty range %ld-%ld: write the smaller leaf first", a, b);
		}
		if (*end && *end != ',' && *end != ' ' && *end != '\t' && *end != '\r' &&
		    *end != '\n')
			BADA(end, "unexpected character: separate leaves with commas");
		for (long v = a; v <= b; v++) {
			if (cnt == cap) {
				int *t;
				cap = cap ? 2 * cap : 256;
				if (cap > nleaves)
					cap = nleaves + 1;
				t = realloc(leaves, sizeof(int) * (size_t)cap);
				if (!t) {
					snprintf(err->msg, sizeof(err->msg), "out of memory");
					goto out;
				}
				leaves = t;
			}
			if (cnt >= nleaves)
				BADA(p,
				     "more leaves than the topology has: a leaf is listed twice");
			leaves[cnt++] = (int)v;
		}
		p = end;
	}
#undef BADA
	if (cnt == 0) {
		snprintf(err->file, sizeof(err->file), "%s", origin);
		snprintf(err->msg, sizeof(err->msg), "no leaf listed");
		goto out;
	}
	*out = leaves;
	*count = cnt;
	leaves = NULL;
	rc = 0;
out:
	free(leaves);
	free(text);
	return rc;
}

/* Apply --allowed to topo (NULL arg: nothing). */
static int apply_allowed(tmatch_topo_t *topo, const char *arg)
{
	tmatch_error_t err;
	int *leaves = NULL, count = 0, rc;

	if (!arg)
		return 0;
	tmatch_error_clear(&err);
	if (parse_allowed(arg, tmatch_topo_nb_leaves(topo), &leaves, &count, &err)) {
		tmatch_cli_report(&err);
		return -1;
	}
	tmatch_error_clear(&err);
	rc = tmatch_topo_set_allowed(topo, leaves, count, &err);
	if (rc) {
		snprintf(err.file, sizeof(err.file), "%s", arg[0] == '@' ? arg + 1 : "--allowed");
		tmatch_cli_report(&err);
	}
	free(leaves);
	return rc;
}

/*
 * The inputs of map and eval: the topology, its --allowed leaves, the
 * profile. Reports what fails; the caller destroys what was loaded.
 */
static int load_inputs(const char *topology, const char *allowed, const char *profile,
                       tmatch_topo_t **topo, tmatch_comm_t **comm)
{
	tmatch_error_t err;

	tmatch_error_clear(&err);
	if (!(*topo = tmatch_place_topo_load(topology, &err))) {
		tmatch_cli_report_value("--topology", topology, &err);
		return -1;
	}
	if (apply_allowed(*topo, allowed))
		return -1;
	if (!profile) /* the caller loads it */
		return 0;
	tmatch_error_clear(&err);
	if (!(*comm = tmatch_place_comm_load(profile, tmatch_cli_log, NULL, &err))) {
		tmatch_cli_report(&err);
		return -1;
	}
	return 0;
}

/*
 * --ranks LIST: global ranks "0-3,8" (commas, "A-B" ranges), in the order
 * given. Range and repetition are checked by tmatch_comm_submatrix. Returns
 * 0 with *out (malloc'd) and *count set, or -1 after reporting.
 */
static int parse_ranks(const char *arg, int **out, int *count)
{
	const char *p = arg;
	int *ranks = NULL, cnt = 0, cap = 0;

	while (*p) {
		long a, b;
		const char *end;

		if (tmatch__list_item(p, INT_MAX, &a, &b, &end) != 0 || (*end && *end != ','))
			goto bad;
		for (long v = a; v <= b; v++) {
			if (cnt == cap) {
				int *t;

				if (cap > INT_MAX / 4)
					goto bad;
				cap = cap ? 2 * cap : 64;
				t = realloc(ranks, sizeof(*t) * (size_t)cap);
				if (!t) {
					free(ranks);
					tmatch_cli_error("out of memory");
					return -1;
				}
				ranks = t;
			}
			ranks[cnt++] = (int)v;
		}
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	}
	if (cnt == 0)
		goto bad;
	*out = ranks;
	*count = cnt;
	return 0;
bad:
	free(ranks);
	tmatch_cli_error("--ranks, column %d: expected global ranks such as \"0-3,8\" "
	                 "(commas, A-B ranges with A <= B)",
	                 (int)(p - arg) + 1);
	return -1;
}

static void map_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: treematch map --profile FILE --topology SPEC [--allowed LEAVES] [--ranks "
	    "LIST]\n"
	    "                     [--mapper NAME] [--seed N] [--search-time S] [--format FMT]\n"
	    "                     [--stats] [--gpus-per-task N] [--gpus LIST]\n"
	    "                     [--ntasks-per-gpu N] [--gpu-bind SPEC]\n"
	    "\n"
	    "Place every rank of a communication profile on a distinct leaf of a machine\n"
	    "tree and print the placement.\n"
	    "\n"
	    "  -p, --profile FILE    communication matrix: .mtx, .mat, .yml/.yaml\n"
	    "  -t, --topology SPEC   \"tleaf DEPTH A0 C0 ...\", synthetic:..., xml:FILE, local,\n"
	    "                        cluster:CONF,NODES,NODETOPO\n"
	    "  -a, --allowed LEAVES  only these leaves may get a rank: \"0-7,16,18-20\" or\n"
	    "                        @FILE with the same list (commas or white space)\n"
	    "  -r, --ranks LIST      map only these global ranks (\"4-7\", \"0,3,5\"): the\n"
	    "                        profile restricted to them, as the SPANK plugin maps\n"
	    "                        one node's tasks; lines keep the global rank numbers\n"
	    "  -m, --mapper NAME     one of: ");
	print_mappers(out);
	fprintf(out,
	        "\n"
	        "                        optionally with +refine (default: %s)\n"
	        "  -s, --seed N          seed of every random choice (default: 1)\n"
	        "  -b, --search-time S   auto: add up to S seconds of search (iterated local\n"
	        "                        search) to its best candidate, counted in steps so\n"
	        "                        the placement is the same on any machine; left out\n"
	        "                        when too small for the profile (default: 0, none);\n"
	        "                        the plugin's search_time= (--budget: its old name)\n"
	        "      --progress[=WHEN] a progress line on stderr: always, never or auto\n"
	        "                        (default: when stderr is a terminal)\n"
	        "  -f, --format FMT      plain: one line \"RANK LEAF\" per rank (default);\n"
	        "                        yaml: a small mapping document;\n"
	        "                        openmpi: a rankfile (mpirun --rankfile F, Open MPI 4,\n"
	        "                        or --map-by rankfile:file=F, Open MPI 5);\n"
	        "                        mpich: \"-bind-to user:...\" for mpiexec (Hydra);\n"
	        "                        impi: I_MPI_PIN_PROCESSOR_LIST=... (Intel MPI);\n"
	        "                        srun: \"--cpu-bind=map_cpu:...\" (and with GPUs\n"
	        "                        \"--gpu-bind=map_gpu:...\");\n"
	        "                        bindings: \"RANK cpus=CPULIST gpus=LIST nic=NAME\"\n"
	        "                        (CPUs as /proc's Cpus_allowed_list, GPUs by the N of\n"
	        "                        hwloc's nvmlN, rsmiN...; - where none), then the\n"
	        "                        card's variables the plugin sets (UCX_NET_DEVICES=,\n"
	        "                        FI_EFA_IFACE=, FI_CXI_DEVICE_NAME=)\n"
	        "      --stats           metrics and run time of the placement on stderr\n"
	        "\n"
	        "GPUs (one node: --topology xml:FILE or local; CPUs as the plugin gives a task,\n"
	        "a core each): each rank gets its CPUs, GPUs and network card together, the\n"
	        "ranks that exchange most the GPUs with the fastest links, CPUs inside their\n"
	        "GPU's locality, the card closest to their GPU.\n"
	        "      --gpus-per-task N GPUs of each rank (default: the GPUs over the ranks,\n"
	        "                        at least 1)\n"
	        "      --gpus LIST       the GPUs the step has (\"0-3\", by index; default all)\n"
	        "      --ntasks-per-gpu N\n"
	        "                        ranks sharing a GPU, as srun's (default: as many as\n"
	        "                        needed; --tasks-per-gpu is its old name)\n"
	        "      --gpu-bind SPEC   keep a binding as Slurm makes it (map_gpu:L,\n"
	        "                        mask_gpu:L, single:N, per_task:N; closest: ours)\n"
	        "                        and make the CPUs follow it\n"
	        "  -h, --help            this help\n",
	        TMATCH_DEFAULT_MAPPER);
}

static void print_metrics_stderr(const tmatch_metrics_t *m, int depth, double secs)
{
	fprintf(stderr, "treematch: hop_bytes %.10g\n", m->hop_bytes);
	fprintf(stderr, "treematch: cost %.10g\n", m->cost);
	fprintf(stderr, "treematch: congestion %.10g (node at depth %d, index %d)\n", m->congestion,
	        m->max_node_depth, m->max_node_index);
	fprintf(stderr, "treematch: dilation avg %.6g max %d\n", m->dilation_avg, m->dilation_max);
	for (int l = 0; l < depth; l++)
		fprintf(stderr, "treematch: traffic with common ancestor at depth %d: %.10g\n", l,
		        m->level_traffic[l]);
	fprintf(stderr, "treematch: mapping time %.3f s\n", secs);
}

static void yaml_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

/*
 * --format openmpi|mpich|impi|srun: the placement as the launcher takes it.
 * The machine is loaded again as CPUs (the mapping only needed its tree);
 * its leaves are numbered as the topology's. 0, or -1 after reporting.
 */
static int print_launcher(const char *topology, const int *leaf, const int *ranks, int n,
                          int launcher)
{
	tmatch_error_t err;
	tmatch_affinity_tree_t *tree;
	char *text = NULL;
	int hwthreads = 0;

	tmatch_affinity_opts_t opts;
	char host[256] = "localhost";
	int local = !strcmp(topology, "local");

	/* This machine by its name, a cluster's nodes by theirs; a node read from
	   a file or a string is "+n0", the first host mpirun is given. */
	tmatch_affinity_opts_init(&opts);
	opts.smt = tmatch_place_smt_policy(1); /* bound as the plugin binds */
	if (local && gethostname(host, sizeof(host) - 1) == 0)
		opts.node_name = host;
	tmatch_error_clear(&err);
	tree = tmatch_place_tree_load(topology, &opts, NULL, NULL, &err);
	if (tree)
		text = tmatch_place_launcher_text(tree, leaf, ranks, n, launcher,
		                                  local || !strncmp(topology, "cluster:", 8),
		                                  &hwthreads, &err);
	tmatch_affinity_tree_destroy(tree);
	if (!text) {
		tmatch_cli_report(&err);
		return -1;
	}
	fputs(text, stdout);
	free(text);
	if (hwthreads)
		tmatch_cli_error("note: this rankfile counts hardware threads: run mpirun with "
		                 "--use-hwthread-cpus (Open MPI 4) or --map-by "
		                 "rankfile:file=FILE:hwtcpus (Open MPI 5)");
	return 0;
}

/* The GPU options of map. */
enum {
	OPT_GPUS_PER_TASK = 256,
	OPT_GPUS,
	OPT_TASKS_PER_GPU,
	OPT_GPU_BIND,
	/* the old name of --ntasks-per-gpu (map's --budget is OLD_NAME itself) */
	OPT_TASKS_PER_GPU_OLD = TMATCH_CLI_OLD_NAME + 1
};
struct gpu_args {
	int on, per_task, per_gpu;
	const char *list, *bind;
};

/* One of the GPU options into *g (the GPU decision is on). 0, or -1 after
   saying what the option wants. */
static int gpu_option(const char *command, int opt, const char *arg, struct gpu_args *g)
{
	uint64_t v;

	g->on = 1;
	if (opt == OPT_TASKS_PER_GPU_OLD) {
		tmatch_cli_renamed(command, "--tasks-per-gpu N", "--ntasks-per-gpu, as srun's");
		opt = OPT_TASKS_PER_GPU;
	}
	if (opt == OPT_GPUS) {
		g->list = arg;
	} else if (opt == OPT_GPU_BIND) {
		g->bind = arg;
	} else if (tmatch_cli_number(arg, TMATCH_PLACE_MAX_GPUS * 64, &v) || v < 1) {
		tmatch_cli_error("--%s '%s': expected a positive integer",
		                 opt == OPT_GPUS_PER_TASK ? "gpus-per-task" : "ntasks-per-gpu",
		                 arg);
		return -1;
	} else {
		*(opt == OPT_GPUS_PER_TASK ? &g->per_task : &g->per_gpu) = (int)v;
	}
	return 0;
}

/* Every GPU of the node as a SLURM_STEP_GPUS list ("0,1,2"), in buf. */
static void all_gpus(const tmatch_affinity_devices_t *dev, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int g = 0; g < dev->ngpus && used + 12 < len; g++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", g ? "," : "",
		                         dev->gpu[g].index);
}

static void print_gpu_stats(const char *what, const tmatch_place_gpu_eval_t *e)
{
	fprintf(stderr, "treematch: %s:", what);
	for (int k = 0; k < TMATCH_GPU_LINK_KINDS; k++)
		fprintf(stderr, " %s %.6g", tmatch_place_gpu_link_names[k], e->traffic[k]);
	fprintf(stderr,
	        "; GPUs on two packages %.6g of %.6g; outside their GPU's CPUs %d, CPUs shared "
	        "%d, GPUs shared %d, cards off the GPU's package %d\n",
	        e->across_packages, e->total, e->outside, e->cpu_shared, e->gpu_shared,
	        e->nic_astray);
}

/*
 * map on one node with its GPUs (or only --format bindings): the plugin's
 * tree of task slots, the node's devices, the decision of placement/gpu.c.
 */
/* The GPU placement's input for one node of n ranks, as map and eval give it. */
static void gpu_in(tmatch_place_gpu_in_t *in, const tmatch_affinity_tree_t *tree,
                   const tmatch_affinity_devices_t *dev, const tmatch_place_gpu_step_t *step,
                   const tmatch_comm_t *comm, int n, const struct gpu_args *gpu)
{
	memset(in, 0, sizeof(*in));
	in->tree = tree;
	in->dev = dev;
	in->step = step;
	in->comm = comm;
	in->nlocal = n;
	in->gpus_per_task = gpu->per_task;
	in->tasks_per_gpu = gpu->per_gpu;
}

static int map_node(const char *profile, const char *topology, const int *ranks, int nranks,
                    const char *mapper, uint64_t seed, const char *format, int launcher, int stats,
                    const struct gpu_args *gpu)
{
	tmatch_error_t err;
	tmatch_comm_t *comm = NULL;
	tmatch_affinity_tree_t *tree = NULL;
	tmatch_affinity_devices_t *dev = NULL;
	tmatch_place_gpu_step_t *step = NULL;
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t out = {0}, hint = {0}, inorder = {0};
	int *fixed = NULL, *fixed_count = NULL, *leaf = NULL, *index = NULL, n, rc = 1, kind;
	char all[4 * TMATCH_PLACE_MAX_GPUS], *tres = NULL;
	double t0, t1;

	tmatch_error_clear(&err);
	comm =
	    ranks ? tmatch_place_comm_load_ranks(profile, ranks, nranks, tmatch_cli_log, NULL, &err)
	          : tmatch_place_comm_load(profile, tmatch_cli_log, NULL, &err);
	if (!comm) {
		if (ranks && !err.file[0])
			snprintf(err.file, sizeof(err.file), "--ranks");
		tmatch_cli_report(&err);
		goto out;
	}
	n = tmatch_comm_order(comm);
	if (n < 1) {
		tmatch_cli_error("%s: the profile has no ranks", profile);
		goto out;
	}
	if (!(tree = tmatch_place_node_tree_load(topology, n, 1, gpu->on, NULL, &err)) ||
	    !(dev = tmatch_affinity_tree_devices(tree, 0, &err))) {
		tmatch_cli_report(&err);
		goto out;
	}
	if (!(step = calloc(1, sizeof(*step))) || !(leaf = malloc((size_t)n * sizeof(int)))) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	gpu_in(&in, tree, dev, step, comm, n, gpu);
	in.mapper = mapper;
	in.seed = seed;
	t0 = now();
	if (gpu->on) {
		tmatch_place_gpu_env_t env = {0};

		if (!dev->ngpus) {
			tmatch_cli_error("%s: hwloc shows no GPU on this node", topology);
			goto out;
		}
		all_gpus(dev, all, sizeof(all));
		env.step_gpus = gpu->list ? gpu->list : all;
		if (tmatch_place_gpu_step(dev, &env, step, &err) != 0) {
			if (!err.msg[0])
				snprintf(err.msg, sizeof(err.msg), "--gpus: no GPU listed");
			snprintf(err.file, sizeof(err.file), "--gpus");
			tmatch_cli_report(&err);
			goto out;
		}
		kind = TMATCH_GPU_BIND_NONE;
		if (gpu->bind) {
			size_t l = strlen(gpu->bind) + 8;

			if (!(tres = malloc(l)) ||
			    !(fixed = malloc((size_t)n * (size_t)step->ngpus * sizeof(int))) ||
			    !(fixed_count = malloc((size_t)n * sizeof(int)))) {
				tmatch_cli_error("out of memory");
				goto out;
			}
			snprintf(tres, l, "gpu:%s", gpu->bind);
			if (tmatch_place_gpu_slurm_bind(tres, step, n, &kind, fixed, fixed_count,
			                                &err) < 0) {
				snprintf(err.file, sizeof(err.file), "--gpu-bind");
				tmatch_cli_report(&err);
				goto out;
			}
			if (kind == TMATCH_GPU_BIND_NONE) {
				tmatch_cli_error(
				    "--gpu-bind '%s': use map_gpu:LIST, mask_gpu:LIST, "
				    "single:N, per_task:N or closest",
				    gpu->bind);
				goto out;
			}
		}
		if (tmatch_place_gpu_decide(
		        &in,
		        kind == TMATCH_GPU_BIND_NONE || kind == TMATCH_GPU_BIND_CLOSEST ? &out
		                                                                        : &hint,
		        &err) < 0) {
			tmatch_cli_report(&err);
			goto out;
		}
		if (kind != TMATCH_GPU_BIND_NONE && kind != TMATCH_GPU_BIND_CLOSEST) {
			/* Slurm's GPUs kept, the CPUs follow them */
			in.fixed = fixed;
			in.fixed_count = fixed_count;
			in.hint = hint.leaf;
			if (tmatch_place_gpu_decide(&in, &out, &err) < 0) {
				tmatch_cli_report(&err);
				goto out;
			}
		}
		for (int r = 0; r < n; r++)
			leaf[r] = out.leaf[r];
	} else {
		tmatch_map_opts_t opts;
		int verbose = 1;

		tmatch_map_opts_init(&opts);
		opts.mapper = mapper;
		opts.seed = seed;
		opts.log = tmatch_cli_log;
		opts.log_arg = &verbose;
		if (tmatch_map_compute(comm, tmatch_affinity_tree_topo(tree), &opts, leaf, &err)) {
			tmatch_cli_report(&err);
			goto out;
		}
	}
	t1 = now();
	if (!(index = malloc(((size_t)n * (size_t)(out.stride ? out.stride : 1)) * sizeof(int)))) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	for (int r = 0; gpu->on && r < n; r++)
		for (int j = 0; j < out.ngpus[r]; j++)
			// j < out.ngpus[r] <= out.stride: inside the row
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			index[(size_t)r * (size_t)out.stride + j] =
			    dev->gpu[out.gpu[(size_t)r * (size_t)out.stride + j]].index;
	if (!strcmp(format, "bindings")) {
		for (int r = 0; r < n; r++) {
			char *line = tmatch_place_bindings_line(
			    ranks ? ranks[r] : r, tmatch_affinity_leaf_cpuset(tree, leaf[r]),
			    gpu->on ? index + (size_t)r * (size_t)out.stride : NULL,
			    gpu->on ? out.ngpus[r] : 0,
			    gpu->on && out.nic[r] >= 0 ? &dev->nic[out.nic[r]] : NULL);

			if (!line) {
				tmatch_cli_error("out of memory");
				goto out;
			}
			fputs(line, stdout);
			free(line);
		}
	} else if (launcher >= 0) {
		char *text, *gtext = NULL;
		int hwthreads = 0;

		text = tmatch_place_launcher_text(tree, leaf, ranks, n, launcher,
		                                  !strcmp(topology, "local"), &hwthreads, &err);
		if (text && gpu->on && launcher == TMATCH_LAUNCHER_SRUN)
			gtext = tmatch_place_launcher_gpus(launcher, index, out.ngpus, out.stride,
			                                   n, &err);
		if (!text || (gpu->on && launcher == TMATCH_LAUNCHER_SRUN && !gtext)) {
			free(text);
			tmatch_cli_report(&err);
			goto out;
		}
		if (gtext) /* one line: srun $(treematch map ... --format srun) */
			text[strlen(text) - 1] = ' ';
		fputs(text, stdout);
		if (gtext)
			fputs(gtext, stdout);
		free(text);
		free(gtext);
		if (gpu->on && launcher != TMATCH_LAUNCHER_SRUN)
			tmatch_cli_error("note: %s has no way to give each rank its GPUs: use "
			                 "--format srun or bindings",
			                 format);
	} else {
		for (int r = 0; r < n; r++)
			printf("%d %d\n", ranks ? ranks[r] : r, leaf[r]);
	}
	if (fflush(stdout) || ferror(stdout)) {
		tmatch_cli_error("cannot write the mapping to stdout");
		goto out;
	}
	if (stats && gpu->on) {
		tmatch_place_gpu_eval_t e_map, e_in;
		tmatch_place_gpu_in_t plain = in;

		plain.fixed = NULL;
		plain.fixed_count = NULL;
		if (tmatch_place_gpu_in_order(&plain, &inorder, &err) < 0 ||
		    tmatch_place_gpu_evaluate(&in, &out, &e_map, &err) < 0 ||
		    tmatch_place_gpu_evaluate(&in, &inorder, &e_in, &err) < 0) {
			tmatch_cli_report(&err);
			goto out;
		}
		fprintf(stderr, "treematch: %d ranks on %d GPU%s of %s, decided in %.3f s\n", n,
		        step->ngpus, step->ngpus == 1 ? "" : "s", topology, t1 - t0);
		print_gpu_stats("traffic by GPU link, this placement", &e_map);
		print_gpu_stats("traffic by GPU link, in order", &e_in);
	} else if (stats) {
		tmatch_metrics_t m;

		if (tmatch_eval(comm, tmatch_affinity_tree_topo(tree), leaf, &m, &err)) {
			tmatch_cli_report(&err);
			goto out;
		}
		print_metrics_stderr(&m, tmatch_topo_depth(tmatch_affinity_tree_topo(tree)),
		                     t1 - t0);
	}
	rc = 0;
out:
	tmatch_place_gpu_out_free(&out);
	tmatch_place_gpu_out_free(&hint);
	tmatch_place_gpu_out_free(&inorder);
	tmatch_affinity_devices_destroy(dev);
	tmatch_affinity_tree_destroy(tree);
	tmatch_comm_destroy(comm);
	free(step);
	free(fixed);
	free(fixed_count);
	free(leaf);
	free(index);
	free(tres);
	return rc;
}

/* --search-time: seconds, 0 to 3600, a plain decimal number. */
static int parse_budget(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || strspn(s, "0123456789.") != strlen(s))
		return -1;
	v = strtod(s, &end);
	if (*end || !(v >= 0 && v <= 3600))
		return -1;
	*out = v;
	return 0;
}

int tmatch_cli_map(int argc, char **argv)
{
	enum { O_STATS = OPT_GPU_BIND + 1, O_PROGRESS, O_BUDGET = TMATCH_CLI_OLD_NAME };
	static const struct option longopts[] = {
	    {"profile", required_argument, NULL, 'p'},
	    {"topology", required_argument, NULL, 't'},
	    {"mapper", required_argument, NULL, 'm'},
	    {"seed", required_argument, NULL, 's'},
	    {"format", required_argument, NULL, 'f'},
	    {"stats", no_argument, NULL, O_STATS},
	    {"allowed", required_argument, NULL, 'a'},
	    {"ranks", required_argument, NULL, 'r'},
	    {"search-time", required_argument, NULL, 'b'},
	    {"gpus-per-task", required_argument, NULL, OPT_GPUS_PER_TASK},
	    {"gpus", required_argument, NULL, OPT_GPUS},
	    {"ntasks-per-gpu", required_argument, NULL, OPT_TASKS_PER_GPU},
	    {"gpu-bind", required_argument, NULL, OPT_GPU_BIND},
	    {"progress", optional_argument, NULL, O_PROGRESS},
	    {"budget", required_argument, NULL, O_BUDGET},
	    {"tasks-per-gpu", required_argument, NULL, OPT_TASKS_PER_GPU_OLD},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct gpu_args gpu = {0, 0, 0, NULL, NULL};
	const char *profile = NULL, *topology = NULL, *mapper = TMATCH_DEFAULT_MAPPER;
	const char *allowed = NULL, *ranks_arg = NULL;
	int *ranks = NULL, nranks = 0;
	const char *format = "plain";
	int stats = 0, opt, rc = 1, n, launcher = -1, verbose;
	uint64_t seed = 1;
	double budget = 0;
	tmatch_error_t err;
	tmatch_topo_t *topo = NULL;
	tmatch_comm_t *comm = NULL;
	tmatch_map_opts_t opts;
	int *leaf = NULL;
	double t0, t1;

	optind = 1;
	opterr = 0;
	while ((opt = tmatch_cli_getopt(argc, argv, "p:t:m:s:b:f:a:r:h", longopts)) != -1) {
		switch (opt) {
		case 'p':
			profile = optarg;
			break;
		case 'a':
			allowed = optarg;
			break;
		case 'r':
			ranks_arg = optarg;
			break;
		case 't':
			topology = optarg;
			break;
		case 'm':
			mapper = optarg;
			break;
		case 's':
			if (tmatch_cli_seed(optarg, &seed) < 0)
				return 2;
			break;
		case O_BUDGET:
			tmatch_cli_renamed("map", "--budget", "--search-time (-b)");
			/* fall through */
		case 'b':
			if (parse_budget(optarg, &budget)) {
				tmatch_cli_error(
				    "--search-time '%s': expected seconds from 0 to 3600, "
				    "e.g. 2 or 0.5",
				    optarg);
				return 2;
			}
			break;
		case 'f':
			format = optarg;
			break;
		case O_STATS:
			stats = 1;
			break;
		case OPT_GPUS_PER_TASK:
		case OPT_TASKS_PER_GPU:
		case OPT_TASKS_PER_GPU_OLD:
		case OPT_GPUS:
		case OPT_GPU_BIND:
			if (gpu_option("map", opt, optarg, &gpu) < 0)
				return 2;
			break;
		case O_PROGRESS:
			if (tmatch_cli_progress_option(optarg) < 0) {
				tmatch_cli_error("map: --progress wants always, never or auto");
				return 2;
			}
			break;
		case 'h':
			map_usage(stdout);
			return 0;
		default:
			return tmatch_cli_bad_option("map", argv, "p:t:m:s:b:f:a:r:h", longopts);
		}
	}
	if (optind < argc) {
		tmatch_cli_error("map: unexpected argument '%s'", argv[optind]);
		tmatch_cli_usage_hint("map");
		return 2;
	}
	if (!profile || !topology) {
		tmatch_cli_error("map: --profile and --topology are required");
		tmatch_cli_usage_hint("map");
		return 2;
	}
	if (!(profile = tmatch_cli_input(profile, "--profile")))
		return 1;
	if (strcmp(format, "plain") != 0 && strcmp(format, "yaml") != 0 &&
	    strcmp(format, "bindings") != 0 && tmatch_place_launcher_parse(format, &launcher)) {
		tmatch_cli_error("map: --format '%s': use plain, yaml, bindings, openmpi, mpich, "
		                 "impi or srun",
		                 format);
		return 2;
	}
	if ((gpu.on || !strcmp(format, "bindings")) &&
	    (!strncmp(topology, "tleaf", 5) || !strncmp(topology, "cluster:", 8) ||
	     isdigit((unsigned char)topology[0]))) {
		tmatch_cli_error("map: %s needs one node's hardware: give --topology xml:FILE, "
		                 "synthetic:... or local",
		                 gpu.on ? "GPUs" : "--format bindings");
		return 2;
	}
	if (gpu.on && !strcmp(format, "yaml")) {
		tmatch_cli_error("map: --format yaml has no GPUs: use bindings, plain or srun");
		return 2;
	}
	if (launcher >= 0 && !strncmp(topology, "tleaf", 5)) {
		tmatch_cli_error("map: --format %s needs a machine with CPUs: give --topology "
		                 "synthetic:..., xml:FILE, local or cluster:...",
		                 format);
		return 2;
	}
	tmatch_error_clear(&err);
	if (tmatch_map_check_name(mapper, &err)) {
		tmatch_cli_report(&err);
		return 2;
	}
	if (ranks_arg && parse_ranks(ranks_arg, &ranks, &nranks))
		return 2;
	tmatch_cli_progress("map: reading %s", profile);
	if (gpu.on || !strcmp(format, "bindings")) {
		if (allowed) {
			tmatch_cli_error("map: --allowed is for leaves of a tree: with GPUs or "
			                 "bindings, give the step's CPUs in the topology");
			free(ranks);
			return 2;
		}
		rc = map_node(profile, topology, ranks, nranks, mapper, seed, format, launcher,
		              stats, &gpu);
		free(ranks);
		return rc;
	}
	if (load_inputs(topology, allowed, ranks ? NULL : profile, &topo, &comm))
		goto out;
	if (ranks) {
		/* The same sub-profile the SPANK plugin maps for one node; from a
		   compiled profile, only these ranks' rows are read. */
		tmatch_error_clear(&err);
		comm = tmatch_place_comm_load_ranks(profile, ranks, nranks, tmatch_cli_log, NULL,
		                                    &err);
		if (!comm) {
			if (!err.file[0])
				snprintf(err.file, sizeof(err.file), "--ranks");
			tmatch_cli_report(&err);
			goto out;
		}
	}
	n = tmatch_comm_order(comm);
	if (ranks && n != nranks) { /* the submatrix has one row per listed rank */
		tmatch_cli_error("--ranks: internal error, %d rows for %d ranks", n, nranks);
		goto out;
	}
	leaf = malloc(sizeof(*leaf) * (size_t)(n ? n : 1));
	if (!leaf) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	tmatch_map_opts_init(&opts);
	opts.mapper = mapper;
	opts.seed = seed;
	opts.search_time = budget;
	/* warnings always; with --stats, what auto chose and searched too */
	verbose = stats ? 2 : 1;
	opts.log = tmatch_cli_log;
	opts.log_arg = &verbose;
	t0 = now();
	tmatch_error_clear(&err);
	tmatch_cli_progress("map: mapping %d ranks with %s", n, mapper);
	if (tmatch_map_compute(comm, topo, &opts, leaf, &err)) {
		tmatch_cli_report(&err);
		goto out;
	}
	t1 = now();
	tmatch_cli_progress_done();
	if (launcher >= 0) {
		if (print_launcher(topology, leaf, ranks, n, launcher))
			goto out;
	} else if (!strcmp(format, "plain")) {
		if (tmatch_map_write(stdout, ranks, leaf, n, &err) < 0) {
			tmatch_cli_report(&err);
			goto out;
		}
	} else {
		char tl[1024];
		tmatch_topo_format(topo, tl, sizeof(tl));
		printf("# treematch mapping: rank r runs on leaf leaf_of_rank[r] (depth first)\n");
		printf("mapper: ");
		yaml_string(stdout, mapper);
		printf("\nseed: %llu\ntopology: ", (unsigned long long)seed);
		yaml_string(stdout, tl);
		printf("\nleaves: %d\nranks: %d\nleaf_of_rank: [", tmatch_topo_nb_leaves(topo), n);
		for (int r = 0; r < n; r++)
			printf("%s%d", r ? (r % 16 ? ", " : ",\n  ") : "", leaf[r]);
		printf("]\n");
		if (ranks) {
			/* leaf_of_rank[i] is the leaf of global rank global_rank[i]. */
			printf("global_rank: [");
			for (int r = 0; r < n; r++)
				printf("%s%d", r ? (r % 16 ? ", " : ",\n  ") : "", ranks[r]);
			printf("]\n");
		}
	}
	if (fflush(stdout) || ferror(stdout)) {
		tmatch_cli_error("cannot write the mapping to stdout");
		goto out;
	}
	if (stats) {
		tmatch_metrics_t m;
		tmatch_error_clear(&err);
		if (tmatch_eval(comm, topo, leaf, &m, &err)) {
			tmatch_cli_report(&err);
			goto out;
		}
		fprintf(stderr, "treematch: mapper %s, %d ranks on %d leaves (%d allowed)\n",
		        mapper, n, tmatch_topo_nb_leaves(topo), tmatch_topo_nb_allowed(topo));
		print_metrics_stderr(&m, tmatch_topo_depth(topo), t1 - t0);
	}
	rc = 0;
out:
	free(ranks);
	free(leaf);
	tmatch_comm_destroy(comm);
	tmatch_topo_destroy(topo);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* eval                                                                      */

static void eval_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: treematch eval --profile FILE --topology SPEC --mapping FILE\n"
	    "                      [--allowed LEAVES] [--json]\n"
	    "       treematch eval --profile FILE --topology SPEC --bindings FILE\n"
	    "                      [--gpus-per-task N] [--gpus LIST] [--ntasks-per-gpu N]\n"
	    "                      [--json]\n"
	    "\n"
	    "Print the metrics of a placement (hop-bytes, tree cost, congestion, dilation,\n"
	    "traffic per level) next to those of the packed and round-robin placements.\n"
	    "\n"
	    "  -p, --profile FILE    communication matrix: .mtx, .mat, .yml/.yaml\n"
	    "  -t, --topology SPEC   the machine tree, as for treematch map\n"
	    "      --mapping FILE    one line \"RANK LEAF\" per rank (treematch map's output);\n"
	    "                        blank lines and lines starting with '#' are ignored\n"
	    "  -a, --allowed LEAVES  the leaves the placement may use, as for map (the\n"
	    "                        packed and round-robin columns use them too)\n"
	    "      --bindings FILE   a placement with GPUs (treematch map's bindings\n"
	    "                        format) on one node: its traffic by the kind of link\n"
	    "                        between the ranks' GPUs (same GPU, partitions of one\n"
	    "                        device, NVLink/xGMI link, one island, one package, two\n"
	    "                        packages), ranks outside their GPU's CPUs, CPUs and\n"
	    "                        GPUs shared, cards off their GPU's package, next to\n"
	    "                        Slurm's in-order binding (--gpus-per-task, --gpus and\n"
	    "                        --ntasks-per-gpu as for map)\n"
	    "      --json            the same as one JSON document (treematch(1))\n"
	    "  -h, --help            this help\n");
}

/* eval --json: each placement's metrics, the mapping first. */
static int eval_json(const char *const names[3], const tmatch_metrics_t m[3], int depth)
{
	tmatch_cli_json_t j;

	tmatch_cli_json_init(&j, stdout);
	tmatch_cli_json_object(&j, NULL);
	tmatch_cli_json_array(&j, "placements");
	for (int x = 0; x < 3; x++) {
		tmatch_cli_json_object(&j, NULL);
		tmatch_cli_json_string(&j, "name", names[x]);
		tmatch_cli_json_number(&j, "hop_bytes", m[x].hop_bytes);
		tmatch_cli_json_number(&j, "cost", m[x].cost);
		tmatch_cli_json_number(&j, "congestion", m[x].congestion);
		tmatch_cli_json_number(&j, "dilation_avg", m[x].dilation_avg);
		tmatch_cli_json_int(&j, "dilation_max", m[x].dilation_max);
		tmatch_cli_json_number(&j, "max_node_traffic", m[x].max_node_traffic);
		tmatch_cli_json_int(&j, "max_node_depth", m[x].max_node_depth);
		tmatch_cli_json_int(&j, "max_node_index", m[x].max_node_index);
		tmatch_cli_json_array(&j, "traffic_lca_depth");
		for (int l = 0; l < depth; l++)
			tmatch_cli_json_number(&j, NULL, m[x].level_traffic[l]);
		tmatch_cli_json_end(&j);
		tmatch_cli_json_end(&j);
	}
	tmatch_cli_json_end(&j);
	tmatch_cli_json_end(&j);
	return tmatch_cli_output_close(stdout, "-") < 0;
}

/* eval --bindings --json: the bindings' placement, then in-order's when
   the node has GPUs (n of them: 1 or 2). */
static int eval_bindings_json(const tmatch_place_gpu_eval_t *e, const tmatch_metrics_t *m, int n)
{
	static const char *const names[2] = {"bindings", "in-order"};
	tmatch_cli_json_t j;

	tmatch_cli_json_init(&j, stdout);
	tmatch_cli_json_object(&j, NULL);
	tmatch_cli_json_array(&j, "placements");
	for (int x = 0; x < n; x++) {
		tmatch_cli_json_object(&j, NULL);
		tmatch_cli_json_string(&j, "name", names[x]);
		tmatch_cli_json_object(&j, "gpu_traffic");
		for (int k = 0; k < TMATCH_GPU_LINK_KINDS; k++) {
			char key[32];

			/* the text's link names, as JSON's words: same-gpu is same_gpu */
			snprintf(key, sizeof(key), "%s", tmatch_place_gpu_link_names[k]);
			for (char *c = key; *c; c++)
				*c = *c == '-' ? '_' : *c;
			tmatch_cli_json_number(&j, key, e[x].traffic[k]);
		}
		tmatch_cli_json_end(&j);
		tmatch_cli_json_number(&j, "gpus_on_two_packages", e[x].across_packages);
		tmatch_cli_json_number(&j, "gpu_traffic_total", e[x].total);
		tmatch_cli_json_int(&j, "ranks_outside_gpu_cpus", e[x].outside);
		tmatch_cli_json_int(&j, "ranks_sharing_cpus", e[x].cpu_shared);
		tmatch_cli_json_int(&j, "gpus_shared", e[x].gpu_shared);
		tmatch_cli_json_int(&j, "cards_off_gpu_package", e[x].nic_astray);
		tmatch_cli_json_number(&j, "hop_bytes", m[x].hop_bytes);
		tmatch_cli_json_number(&j, "cost", m[x].cost);
		tmatch_cli_json_end(&j);
	}
	tmatch_cli_json_end(&j);
	tmatch_cli_json_end(&j);
	return tmatch_cli_output_close(stdout, "-") < 0;
}

/* eval --bindings: the placement of a bindings file next to in-order. */
static int eval_bindings(const char *profile, const char *topology, const char *bindings,
                         const struct gpu_args *gpu, int json)
{
	tmatch_error_t err;
	tmatch_comm_t *comm = NULL;
	tmatch_affinity_tree_t *tree = NULL;
	tmatch_affinity_devices_t *dev = NULL;
	tmatch_place_gpu_step_t *step = NULL;
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t got = {0}, inorder = {0};
	tmatch_place_gpu_eval_t e[2];
	tmatch_metrics_t m[2];
	tmatch_place_gpu_env_t env = {0};
	char all[4 * TMATCH_PLACE_MAX_GPUS];
	int n, rc = 1, have_gpus;

	tmatch_error_clear(&err);
	if (!strncmp(topology, "tleaf", 5) || !strncmp(topology, "cluster:", 8) ||
	    isdigit((unsigned char)topology[0])) {
		tmatch_cli_error("eval: --bindings needs one node's hardware: give --topology "
		                 "xml:FILE, synthetic:... or local");
		return 2;
	}
	if (!(profile = tmatch_cli_input(profile, "--profile")) ||
	    !(bindings = tmatch_cli_input(bindings, "--bindings")))
		return 1;
	if (!(comm = tmatch_place_comm_load(profile, tmatch_cli_log, NULL, &err)))
		goto fail;
	n = tmatch_comm_order(comm);
	if (!(tree = tmatch_place_node_tree_load(topology, n > 0 ? n : 1, 1, 1, NULL, &err)) ||
	    !(dev = tmatch_affinity_tree_devices(tree, 0, &err)) ||
	    tmatch_place_bindings_read(bindings, tree, dev, n, &got, &err) < 0)
		goto fail;
	if (!(step = calloc(1, sizeof(*step)))) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	all_gpus(dev, all, sizeof(all));
	env.step_gpus = gpu->list ? gpu->list : all;
	have_gpus = dev->ngpus && tmatch_place_gpu_step(dev, &env, step, &err) == 0;
	if (!have_gpus && err.msg[0])
		goto fail;
	gpu_in(&in, tree, dev, step, comm, n, gpu);
	if (have_gpus && tmatch_place_gpu_in_order(&in, &inorder, &err) < 0)
		goto fail;
	if (tmatch_place_gpu_evaluate(&in, &got, &e[0], &err) < 0 ||
	    (have_gpus && tmatch_place_gpu_evaluate(&in, &inorder, &e[1], &err) < 0) ||
	    tmatch_eval(comm, tmatch_affinity_tree_topo(tree), got.leaf, &m[0], &err) < 0 ||
	    (have_gpus &&
	     tmatch_eval(comm, tmatch_affinity_tree_topo(tree), inorder.leaf, &m[1], &err) < 0))
		goto fail;
	if (json) {
		rc = eval_bindings_json(e, m, have_gpus ? 2 : 1);
		goto out;
	}
	printf("%-28s %16s", "metric", "bindings");
	if (have_gpus)
		printf(" %16s", "in-order");
	printf("\n");
#define ROW2(label, fmt, a, b)                                                                     \
	do {                                                                                       \
		printf("%-28s " fmt, label, a);                                                    \
		if (have_gpus)                                                                     \
			printf(" " fmt, b);                                                        \
		printf("\n");                                                                      \
	} while (0)
	for (int k = 0; k < TMATCH_GPU_LINK_KINDS; k++) {
		char label[48];

		snprintf(label, sizeof(label), "gpu_traffic_%s", tmatch_place_gpu_link_names[k]);
		ROW2(label, "%16.10g", e[0].traffic[k], e[1].traffic[k]);
	}
	ROW2("gpus_on_two_packages", "%16.10g", e[0].across_packages, e[1].across_packages);
	ROW2("gpu_traffic_total", "%16.10g", e[0].total, e[1].total);
	ROW2("ranks_outside_gpu_cpus", "%16d", e[0].outside, e[1].outside);
	ROW2("ranks_sharing_cpus", "%16d", e[0].cpu_shared, e[1].cpu_shared);
	ROW2("gpus_shared", "%16d", e[0].gpu_shared, e[1].gpu_shared);
	ROW2("cards_off_gpu_package", "%16d", e[0].nic_astray, e[1].nic_astray);
	ROW2("hop_bytes", "%16.10g", m[0].hop_bytes, m[1].hop_bytes);
	ROW2("cost", "%16.10g", m[0].cost, m[1].cost);
#undef ROW2
	rc = 0;
	goto out;
fail:
	tmatch_cli_report(&err);
out:
	tmatch_place_gpu_out_free(&got);
	tmatch_place_gpu_out_free(&inorder);
	tmatch_affinity_devices_destroy(dev);
	tmatch_affinity_tree_destroy(tree);
	tmatch_comm_destroy(comm);
	free(step);
	return rc;
}

int tmatch_cli_eval(int argc, char **argv)
{
	enum { O_MAPPING = OPT_GPU_BIND + 1, O_BINDINGS, O_JSON };
	static const struct option longopts[] = {
	    {"profile", required_argument, NULL, 'p'},
	    {"topology", required_argument, NULL, 't'},
	    {"mapping", required_argument, NULL, O_MAPPING},
	    {"allowed", required_argument, NULL, 'a'},
	    {"bindings", required_argument, NULL, O_BINDINGS},
	    {"gpus-per-task", required_argument, NULL, OPT_GPUS_PER_TASK},
	    {"gpus", required_argument, NULL, OPT_GPUS},
	    {"ntasks-per-gpu", required_argument, NULL, OPT_TASKS_PER_GPU},
	    {"json", no_argument, NULL, O_JSON},
	    {"tasks-per-gpu", required_argument, NULL, OPT_TASKS_PER_GPU_OLD},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct gpu_args gpu = {0, 0, 0, NULL, NULL};
	const char *bindings = NULL;
	const char *profile = NULL, *topology = NULL, *mapping = NULL, *allowed = NULL;
	const char *names[3] = {"mapping", "packed", "round-robin"};
	int opt, rc = 1, n, depth, json = 0, *leaf[3] = {NULL, NULL, NULL};
	tmatch_error_t err;
	tmatch_topo_t *topo = NULL;
	tmatch_comm_t *comm = NULL;
	tmatch_metrics_t m[3];
	tmatch_map_opts_t opts;

	optind = 1;
	opterr = 0;
	while ((opt = tmatch_cli_getopt(argc, argv, "p:t:a:h", longopts)) != -1) {
		switch (opt) {
		case 'a':
			allowed = optarg;
			break;
		case O_BINDINGS:
			bindings = optarg;
			break;
		case OPT_GPUS_PER_TASK:
		case OPT_TASKS_PER_GPU:
		case OPT_TASKS_PER_GPU_OLD:
		case OPT_GPUS:
			if (gpu_option("eval", opt, optarg, &gpu) < 0)
				return 2;
			break;
		case 'p':
			profile = optarg;
			break;
		case 't':
			topology = optarg;
			break;
		case O_MAPPING:
			mapping = optarg;
			break;
		case O_JSON:
			json = 1;
			break;
		case 'h':
			eval_usage(stdout);
			return 0;
		default:
			return tmatch_cli_bad_option("eval", argv, "p:t:a:h", longopts);
		}
	}
	if (optind < argc) {
		tmatch_cli_error("eval: unexpected argument '%s'", argv[optind]);
		tmatch_cli_usage_hint("eval");
		return 2;
	}
	if (bindings && !mapping && profile && topology && !allowed)
		return eval_bindings(profile, topology, bindings, &gpu, json);
	if (!profile || !topology || !mapping || bindings) {
		tmatch_cli_error("eval: --profile, --topology and --mapping (or --bindings) are "
		                 "required");
		tmatch_cli_usage_hint("eval");
		return 2;
	}
	if (!(profile = tmatch_cli_input(profile, "--profile")) ||
	    !(mapping = tmatch_cli_input(mapping, "--mapping")))
		return 1;
	if (load_inputs(topology, allowed, profile, &topo, &comm))
		goto out;
	n = tmatch_comm_order(comm);
	depth = tmatch_topo_depth(topo);
	for (int x = 0; x < 3; x++)
		if (!(leaf[x] = malloc(sizeof(int) * (size_t)(n ? n : 1))))
			goto nomem;
	tmatch_error_clear(&err);
	if (tmatch_map_load(mapping, topo, n, leaf[0], &err)) {
		tmatch_cli_report(&err);
		goto out;
	}
	tmatch_map_opts_init(&opts);
	for (int x = 1; x < 3; x++) {
		opts.mapper = x == 1 ? "packed" : "rr";
		tmatch_error_clear(&err);
		if (tmatch_map_compute(comm, topo, &opts, leaf[x], &err)) {
			tmatch_cli_report(&err);
			goto out;
		}
	}
	for (int x = 0; x < 3; x++) {
		tmatch_error_clear(&err);
		if (tmatch_eval(comm, topo, leaf[x], &m[x], &err)) {
			tmatch_cli_report(&err);
			goto out;
		}
	}
	if (json) {
		rc = eval_json(names, m, depth);
		goto out;
	}
	printf("%-28s", "metric");
	for (int x = 0; x < 3; x++)
		printf(" %16s", names[x]);
	printf("\n");
#define ROW(label, fmt, field)                                                                     \
	do {                                                                                       \
		printf("%-28s", label);                                                            \
		for (int x = 0; x < 3; x++)                                                        \
			printf(" " fmt, m[x].field);                                               \
		printf("\n");                                                                      \
	} while (0)
	ROW("hop_bytes", "%16.10g", hop_bytes);
	ROW("cost", "%16.10g", cost);
	ROW("congestion", "%16.10g", congestion);
	ROW("dilation_avg", "%16.6g", dilation_avg);
	ROW("dilation_max", "%16d", dilation_max);
	ROW("max_node_traffic", "%16.10g", max_node_traffic);
	ROW("max_node_depth", "%16d", max_node_depth);
	ROW("max_node_index", "%16d", max_node_index);
	for (int l = 0; l < depth; l++) {
		char label[48];
		snprintf(label, sizeof(label), "traffic_lca_depth_%d", l);
		ROW(label, "%16.10g", level_traffic[l]);
	}
#undef ROW
	rc = 0;
	goto out;
nomem:
	tmatch_cli_error("out of memory");
out:
	for (int x = 0; x < 3; x++)
		free(leaf[x]);
	tmatch_comm_destroy(comm);
	tmatch_topo_destroy(topo);
	return rc;
}
