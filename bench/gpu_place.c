/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_place.c - issue 36's figures: the decision of GPU steps
 * (placement/gpu.c) per machine, and its time.
 *
 * Time: a node's whole work as the plugin does it, each step timed and the
 * median of REPS: the node tree with its devices from the admin's XML (the
 * root side: tmatch_place_node_tree with io), the devices, the step's GPUs
 * from SLURM_STEP_GPUS, and the decision on the node's traffic (the
 * helper). On a node of 8 GPUs and 128 cores (2 packages x 4 NUMA nodes x
 * 16 cores, a GPU and a card per NUMA node, NVLink among the GPUs of a
 * package) with 128 ranks of the bench's patterns, in order and permuted,
 * against the plugin's usual 50 ms. hwloc runs as in slurmstepd, without
 * its plugins (HWLOC_PLUGINS_BLACKLIST).
 *
 * Targets, on every real node of ../shared/topologies ($TMATCH_TOPOLOGIES)
 * and on the 8-GPU node, at one rank per GPU and at the most ranks per GPU
 * the node's CPUs hold (up to 4): ranks outside their GPU's CPUs, CPUs and
 * GPUs given twice, cards off the GPU's package, and the heavy traffic of
 * cliques (rank r in clique r % packages) between GPUs of two packages, as
 * a percentage of in-order's (target: at most 10 %).
 *
 *   gpu_place [--reps N] [--out FILE.md]          (make bench-gpu)
 */
#include "affinity/affinity.h"
#include "bench/patterns.h"
#include "placement/gpu.h"
#include "placement/inputs.h"
#include "placement/node.h"
#include "tests/unit/gpu_xml.h"

#include <errno.h>
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

/* CPU time of the whole process (the mapper's threads too). */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct edges {
	int *src, *dst;
	double *w;
	size_t n, cap;
};

static void emit(void *arg, int i, int j, double w)
{
	struct edges *e = arg;

	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 1024;
		e->src = realloc(e->src, e->cap * sizeof(int));
		e->dst = realloc(e->dst, e->cap * sizeof(int));
		e->w = realloc(e->w, e->cap * sizeof(double));
		if (!e->src || !e->dst || !e->w) {
			fprintf(stderr, "gpu_place: out of memory\n");
			exit(1);
		}
	}
	e->src[e->n] = i;
	e->dst[e->n] = j;
	e->w[e->n++] = w;
}

static tmatch_comm_t *pattern(const char *name, int n, int permuted)
{
	struct edges e = {0};
	int *perm = NULL;
	char err[256];
	tmatch_comm_t *c;

	if (permuted) {
		perm = malloc((size_t)n * sizeof(int));
		bench_permutation(n, 7, perm);
	}
	if (bench_pattern_generate(name, n, 1, perm, emit, &e, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpu_place: %s: %s\n", name, err);
		exit(1);
	}
	c = tmatch_comm_from_edges(n, e.n, e.src, e.dst, e.w, NULL);
	free(e.src);
	free(e.dst);
	free(e.w);
	free(perm);
	return c;
}

/* Cliques of ranks r % k exchanging `heavy`, a ring of `light`. */
static tmatch_comm_t *cliques(int n, int k, double heavy, double light)
{
	struct edges e = {0};
	tmatch_comm_t *c;

	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (heavy > 0 && a % k == b % k)
				emit(&e, a, b, heavy);
	for (int a = 0; light > 0 && n > 1 && a < n; a++)
		emit(&e, a, (a + 1) % n, light);
	c = tmatch_comm_from_edges(n, e.n, e.src, e.dst, e.w, NULL);
	free(e.src);
	free(e.dst);
	free(e.w);
	return c;
}

struct node {
	tmatch_affinity_tree_t *tree;
	tmatch_affinity_devices_t *dev;
	tmatch_place_gpu_step_t step;
};

/* What the plugin's root side and helper do on the node, timed; the step
   has the GPUs of `gpus` (Slurm's indices), NULL: all the node's. */
static int node_load(struct node *x, const char *xml, int nlocal, const char *gpus, double *t_tree,
                     double *t_dev, double *t_step)
{
	tmatch_affinity_opts_t o;
	tmatch_place_gpu_env_t env = {0};
	tmatch_error_t err;
	char list[2048] = "";
	double t0 = now();

	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = xml;
	o.this_system = 0;
	o.io = 1;
	if (!(x->tree = tmatch_place_node_tree(&o, nlocal, NULL, &err)))
		return -1;
	*t_tree = now() - t0;
	t0 = now();
	if (!(x->dev = tmatch_affinity_tree_devices(x->tree, 0, &err)))
		return -1;
	*t_dev = now() - t0;
	for (int g = 0; g < x->dev->ngpus; g++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d", g ? "," : "",
		         x->dev->gpu[g].index);
	env.step_gpus = gpus ? gpus : list;
	t0 = now();
	if (tmatch_place_gpu_step(x->dev, &env, &x->step, &err) != 0)
		return -1;
	*t_step = now() - t0;
	return 0;
}

static void node_free(struct node *x)
{
	tmatch_affinity_devices_destroy(x->dev);
	tmatch_affinity_tree_destroy(x->tree);
	memset(x, 0, sizeof(*x));
}

/* At most max of the node's GPUs whose CPUs the tree holds, in turns of
   one per package (each package's first not yet taken), as Slurm's
   indices in list: how many. */
static int gpus_near(const struct node *x, int max, char *list, size_t len)
{
	hwloc_const_bitmap_t allowed = tmatch_affinity_tree_allowed_cpuset(x->tree, 0);
	int taken[TMATCH_PLACE_MAX_GPUS] = {0}, n = 0, took = 1;

	list[0] = '\0';
	while (took && n < max) {
		int used[66] = {0}; /* packages (-1 .. 64) given one this turn */

		took = 0;
		for (int g = 0; g < x->dev->ngpus && g < TMATCH_PLACE_MAX_GPUS && n < max; g++) {
			const tmatch_affinity_gpu_t *d = &x->dev->gpu[g];
			int p = d->package < -1 ? 0 : d->package > 64 ? 65 : d->package + 1;

			if (taken[g] || used[p] || !hwloc_bitmap_intersects(d->cpuset, allowed))
				continue;
			taken[g] = used[p] = took = 1;
			snprintf(list + strlen(list), len - strlen(list), "%s%d", n ? "," : "",
			         d->index);
			n++;
		}
	}
	return n;
}

static void in_init(tmatch_place_gpu_in_t *in, const struct node *x, const tmatch_comm_t *c, int n)
{
	memset(in, 0, sizeof(*in));
	in->tree = x->tree;
	in->dev = x->dev;
	in->step = &x->step;
	in->comm = c;
	in->nlocal = n;
	in->seed = 1;
	in->gpus_per_task = 1;
}

static void time_row(FILE *out, const char *xml, const char *label, const char *pat, int n,
                     int permuted, int reps)
{
	double *tt = malloc((size_t)reps * sizeof(double) * 7), *td = tt + reps, *ts = td + reps,
	       *tp = ts + reps, *tw = tp + reps, *tc = tw + reps, *tcpu = tc + reps;
	tmatch_comm_t *c = pattern(pat, n, permuted);
	tmatch_place_gpu_eval_t e = {0}, ei = {0};

	for (int r = 0; r < reps; r++) {
		struct node x;
		tmatch_place_gpu_in_t in;
		tmatch_place_gpu_out_t o, io;
		tmatch_error_t err;
		double t0 = now(), c0 = cpu();

		if (node_load(&x, xml, n, NULL, &tt[r], &td[r], &ts[r]) < 0) {
			fprintf(stderr, "gpu_place: %s: cannot load\n", xml);
			exit(1);
		}
		in_init(&in, &x, c, n);
		{
			double t1 = now();

			if (tmatch_place_gpu_decide(&in, &o, &err) < 0) {
				fprintf(stderr, "gpu_place: %s: %s\n", label, err.msg);
				exit(1);
			}
			tp[r] = now() - t1;
		}
		tw[r] = now() - t0;
		tc[r] = cpu() - c0;
		{
			/* the plugin's CPU-only mapping of the same ranks on the node */
			tmatch_map_opts_t mo;
			int *leaf = malloc((size_t)n * sizeof(int));
			double c1 = cpu();

			tmatch_map_opts_init(&mo);
			mo.seed = 1;
			tmatch_map_compute(c, tmatch_affinity_tree_topo(x.tree), &mo, leaf, NULL);
			tcpu[r] = cpu() - c1;
			free(leaf);
		}
		if (r == 0) {
			tmatch_place_gpu_in_order(&in, &io, &err);
			tmatch_place_gpu_evaluate(&in, &o, &e, &err);
			tmatch_place_gpu_evaluate(&in, &io, &ei, &err);
			tmatch_place_gpu_out_free(&io);
		}
		tmatch_place_gpu_out_free(&o);
		node_free(&x);
	}
	fprintf(out,
	        "| %s | %s%s | %d | %.1f | %.2f | %.2f | %.1f | %.1f | **%.1f** | %s | %.1f | "
	        "%.4g / %.4g |\n",
	        label, pat, permuted ? " (permuted)" : "", n, median(tt, reps) * 1e3,
	        median(td, reps) * 1e3, median(ts, reps) * 1e3, median(tp, reps) * 1e3,
	        median(tw, reps) * 1e3, median(tc, reps) * 1e3,
	        median(tc, reps) * 1e3 <= 50 ? "yes" : "**no**", median(tcpu, reps) * 1e3,
	        e.across_packages, ei.across_packages);
	fflush(out);
	tmatch_comm_destroy(c);
	free(tt);
}

static void target_row(FILE *out, const char *label, const char *xml, int per_gpu)
{
	struct node x;
	double a, b, c;
	int n, k, seen[65] = {0};
	tmatch_comm_t *all, *heavy;
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t o, io;
	tmatch_place_gpu_eval_t e, he, hi;
	tmatch_error_t err;
	double t0, t;
	char list[1024] = "";
	const char *gpus = NULL;

	if (node_load(&x, xml, 1, NULL, &a, &b, &c) < 0) {
		fprintf(stderr, "gpu_place: %s: cannot load\n", xml);
		exit(1);
	}
	n = per_gpu * x.step.ngpus;
	if (n > tmatch_affinity_tree_nb_slots(x.tree)) {
		/* an export bound to a few CPUs (DGX-2's holds 4): a step of the
		   GPUs next to them, as Slurm with Cores= in gres.conf gives */
		int ng = gpus_near(&x, tmatch_affinity_tree_nb_slots(x.tree) / per_gpu, list,
		                   sizeof(list));

		node_free(&x);
		if (ng < 2)
			return;
		gpus = list;
		n = per_gpu * ng;
	} else {
		node_free(&x);
	}
	node_load(&x, xml, n, gpus, &a, &b, &c);
	k = 0;
	for (int i = 0; i < x.step.ngpus; i++) {
		int p = x.dev->gpu[x.step.gpu[i]].package + 1;

		if (p >= 0 && p <= 64 && !seen[p]++)
			k++;
	}
	all = cliques(n, k, 1000, 1);
	heavy = cliques(n, k, 1000, 0);
	in_init(&in, &x, all, n);
	t0 = now();
	if (tmatch_place_gpu_decide(&in, &o, &err) < 0) {
		fprintf(stderr, "gpu_place: %s: %s\n", label, err.msg);
		exit(1);
	}
	t = now() - t0;
	tmatch_place_gpu_in_order(&in, &io, &err);
	tmatch_place_gpu_evaluate(&in, &o, &e, &err);
	in.comm = heavy;
	tmatch_place_gpu_evaluate(&in, &o, &he, &err);
	tmatch_place_gpu_evaluate(&in, &io, &hi, &err);
	fprintf(out, "| %s | %d (%d/GPU) | %d | %d | %d | %d | %d | ", label, n, per_gpu,
	        x.step.ngpus, e.outside, e.cpu_shared, per_gpu == 1 ? e.gpu_shared : 0,
	        e.nic_astray);
	if (k > 1 && n >= 2 * k && hi.across_packages > 0)
		fprintf(out, "%.4g / %.4g = **%.1f %%** |", he.across_packages, hi.across_packages,
		        100.0 * he.across_packages / hi.across_packages);
	else
		fprintf(out, "- (%s) |", k > 1 ? "cliques of one rank" : "one package");
	fprintf(out, " %.1f |\n", t * 1e3);
	fflush(out);
	tmatch_place_gpu_out_free(&o);
	tmatch_place_gpu_out_free(&io);
	tmatch_comm_destroy(all);
	tmatch_comm_destroy(heavy);
	node_free(&x);
}

int main(int argc, char **argv)
{
	static const char *const machines[] = {
	    "flux-ipa20.xml",           "flux-tuo.SPX.xml",        "flux-tuo.CPX.xml",
	    "mpibind-eas-tioga.xml",    "hwloc-nvidiaDGX2.xml",    "hwloc-power8gpudistances.xml",
	    "mpibind-coral-lassen.xml", "mpibind-cts1-pascal.xml", "mpibind-g4dnmetal.xml",
	    "mpibind-epyc-corona.xml",
	};
	gpu_node_spec_t eight = {.packages = 2,
	                         .numa_per_package = 4,
	                         .cores_per_numa = 16,
	                         .gpus_per_numa = 1,
	                         .nics_per_numa = 1,
	                         .backend = "nvml",
	                         .links = "NVLinkBandwidth",
	                         .island_gpus = 4};
	const char *outpath = NULL, *dir = gpu_xml_shared_dir();
	char xml[64];
	int reps = 11;
	FILE *out = stdout;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			outpath = argv[++i];
		else {
			fprintf(stderr, "usage: gpu_place [--reps N] [--out FILE.md]\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	/* hwloc as slurmstepd runs it: none of its plugins (the admin's XML
	   read by hwloc's own reader) */
	setenv("HWLOC_PLUGINS_BLACKLIST", TMATCH_PLACE_HWLOC_BLACKLIST, 0);
	if (outpath && !(out = fopen(outpath, "w"))) {
		fprintf(stderr, "gpu_place: %s: %s\n", outpath, strerror(errno));
		return 1;
	}
	if (gpu_xml_write(&eight, xml, sizeof(xml)) < 0) {
		fprintf(stderr, "gpu_place: cannot write the 8-GPU node\n");
		return 1;
	}
	fprintf(out,
	        "# GPU steps: the decision per machine and its time (issue 36)\n\n"
	        "`make bench-gpu` (bench/gpu_place.c). Times in ms, median of %d runs, "
	        "each step as the plugin runs it on a node: the node tree with its "
	        "devices from the XML (`tree`), the devices (`dev`), the step's GPUs "
	        "(`step`), the decision (`decide`), all of it in wall time (`node`) and "
	        "in CPU time of the process, the mapper's threads included (`node "
	        "cpu`: what the node's work costs whatever else runs on the machine). "
	        "Target: node <= 50 ms at 8 GPUs and 128 ranks. Beside it, the CPU time "
	        "of the plugin's CPU-only mapping of the same ranks on the same node "
	        "(`cpu-only map`), and the traffic between GPUs of two packages, this "
	        "placement / Slurm's in-order.\n\n",
	        reps);
	fprintf(out, "| node | profile | ranks | tree | dev | step | decide | node | node cpu | "
	             "<= 50 ms | cpu-only map | two packages (ours / in-order) |\n"
	             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n");
	for (int p = 0; bench_pattern_names[p]; p++) {
		if (!strcmp(bench_pattern_names[p], "random"))
			continue;
		time_row(out, xml, "8 GPUs, 2 x 4 x 16 cores", bench_pattern_names[p], 128, 0,
		         reps);
		time_row(out, xml, "8 GPUs, 2 x 4 x 16 cores", bench_pattern_names[p], 128, 1,
		         reps);
	}
	fprintf(out, "\n## Targets per machine\n\n"
	             "Cliques (rank r in clique r %% packages, 1000 between the ranks of a "
	             "clique, a ring of 1 through all): ranks outside their GPU's CPUs, "
	             "ranks sharing CPUs, GPUs given twice (one rank per GPU), cards off the "
	             "GPU's package while it has one, the cliques' traffic between GPUs of "
	             "two packages against in-order's (target <= 10 %%), the decision's time "
	             "in ms.\n\n"
	             "| node | ranks | GPUs | outside | CPUs twice | GPUs twice | card off "
	             "package | cliques across packages | decide |\n"
	             "|---|---:|---:|---:|---:|---:|---:|---|---:|\n");
	for (int per = 1; per <= 4; per *= 2)
		target_row(out, "8 GPUs, 2 x 4 x 16 cores", xml, per);
	if (!dir) {
		fprintf(out, "\n../shared/topologies absent: the real nodes were not measured.\n");
	} else {
		for (size_t m = 0; m < sizeof(machines) / sizeof(machines[0]); m++) {
			char path[4200];

			snprintf(path, sizeof(path), "%s/%s", dir, machines[m]);
			for (int per = 1; per <= 4; per *= 2)
				target_row(out, machines[m], path, per);
		}
	}
	{
		/* wall times mean little on a loaded machine: say how loaded */
		FILE *la = fopen("/proc/loadavg", "r");
		char line[128] = "";

		if (la && fgets(line, sizeof(line), la))
			fprintf(out, "\nLoad average when measured (/proc/loadavg): %s", line);
		if (la)
			fclose(la);
		fprintf(out, "CPUs: %ld online.\n", sysconf(_SC_NPROCESSORS_ONLN));
	}
	unlink(xml);
	if (outpath)
		fclose(out);
	return 0;
}
