/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu.c - GPU steps: which GPUs a step has as Slurm says it, how Slurm
 * binds them to tasks, and the decision that gives each task its CPUs, its
 * GPUs and its network card together (placement/gpu.h, "GPUs and network
 * cards"); the in-order placement Slurm makes without a profile, and what
 * either gives (traffic by kind of GPU link, the targets' counts).
 *
 * The free decision maps the node's ranks onto a tree whose levels follow
 * the GPUs' hierarchy: package, GPU island (NVLink/xGMI), NUMA node, PCI
 * device (partitions of one device), unit (the GPUs one task gets), slot
 * (the tasks that share a unit), levels that do not branch left out. Each
 * slot stands for a CPU slot of the node tree inside its unit's locality,
 * chosen before the mapping, so the mapper decides ranks, GPUs and CPUs in
 * one go with the project's mappers.
 */
#include "placement/placement_private.h"
#include "placement/env.h"
#include "placement/gpu.h"
#include "placement/node.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const tmatch_place_gpu_link_names[TMATCH_GPU_LINK_KINDS] = {
    "same-gpu", "same-device", "direct-link", "island", "same-package", "across-packages"};

/* ------------------------------------------------------------------------ */
/* The step's GPUs                                                           */

int tmatch_place_gpu_env_has_gpus(const tmatch_place_gpu_env_t *env)
{
	return env && env->step_gpus && env->step_gpus[0];
}

int tmatch_place_gpu_unknown(const tmatch_affinity_devices_t *dev,
                             const tmatch_place_gpu_env_t *env)
{
	hwloc_bitmap_t set;
	int i, bad = -1;

	if (!dev || !tmatch_place_gpu_env_has_gpus(env) || !(set = hwloc_bitmap_alloc()))
		return -1;
	if (tmatch_affinity_cpuset_parse(env->step_gpus, NULL, set, NULL) == 0) {
		hwloc_bitmap_foreach_begin(i, set)
		{
			if (bad < 0 && tmatch_affinity_devices_gpu_of_index(dev, i) < 0)
				bad = i;
		}
		hwloc_bitmap_foreach_end();
	}
	hwloc_bitmap_free(set);
	return bad;
}

/* cgroup.conf says ConstrainDevices=yes (keys are case-insensitive). */
static int constrain_devices(const char *conf)
{
	const char *p = conf;

	while (p && *p) {
		const char *end = strchr(p, '\n'), *v;
		size_t len = end ? (size_t)(end - p) : strlen(p);

		while (len && isspace((unsigned char)*p)) {
			p++;
			len--;
		}
		if (len > 16 && !strncasecmp(p, "ConstrainDevices", 16)) {
			for (v = p + 16; v < p + len && isspace((unsigned char)*v); v++)
				;
			if (v < p + len && *v == '=') {
				for (v++; v < p + len && isspace((unsigned char)*v); v++)
					;
				if ((size_t)(p + len - v) >= 3 && !strncasecmp(v, "yes", 3))
					return 1;
				if ((size_t)(p + len - v) >= 4 && !strncasecmp(v, "true", 4))
					return 1;
			}
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

int tmatch_place_gpu_step(const tmatch_affinity_devices_t *dev, const tmatch_place_gpu_env_t *env,
                          tmatch_place_gpu_step_t *step, tmatch_error_t *err)
{
	const char *vendor[4];
	hwloc_bitmap_t set, other = NULL;
	int rc = -1, i;

	if (!dev || !env || !step)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_gpu_step: invalid argument");
	memset(step, 0, sizeof(*step));
	step->node_gpus = dev->ngpus;
	if (!env->step_gpus || !*env->step_gpus)
		return 1;
	if (!(set = hwloc_bitmap_alloc()) || !(other = hwloc_bitmap_alloc())) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	if (tmatch_affinity_cpuset_parse(env->step_gpus, "SLURM_STEP_GPUS", set, err) < 0)
		goto out;
	if (hwloc_bitmap_iszero(set)) {
		rc = 1;
		goto out;
	}
	hwloc_bitmap_foreach_begin(i, set)
	{
		int pos = tmatch_affinity_devices_gpu_of_index(dev, i);

		if (pos < 0 || step->ngpus == TMATCH_PLACE_MAX_GPUS) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "SLURM_STEP_GPUS names GPU %d, and this node has %d GPU%s "
			                 "(%s): check the node's gres.conf against hwloc",
			                 i, dev->ngpus, dev->ngpus == 1 ? "" : "s",
			                 dev->ngpus ? dev->gpu[0].backend : "none found");
			memset(step, 0, sizeof(*step));
			goto out;
		}
		step->gpu[step->ngpus] = pos;
		step->index[step->ngpus++] = i;
	}
	hwloc_bitmap_foreach_end();
	vendor[0] = env->cuda;
	vendor[1] = env->rocr;
	vendor[2] = env->ze;
	vendor[3] = env->ordinal;
	for (int v = 0; v < 4; v++) {
		if (!vendor[v])
			continue;
		step->vars |= 1u << v;
		/* the step's list numbered from 0 where SLURM_STEP_GPUS is not:
		   Slurm numbers GPUs as a task sees them */
		if (tmatch_affinity_cpuset_parse(vendor[v], NULL, other, NULL) == 0 &&
		    !hwloc_bitmap_isequal(other, set))
			step->relative = 1;
	}
	step->constrained = step->relative || constrain_devices(env->cgroup_conf);
	rc = 0;
out:
	hwloc_bitmap_free(set);
	hwloc_bitmap_free(other);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Slurm's binding of GPUs to tasks (src/common/gres.c, _get_usable_gres)    */

/* One token "V" or "V*N" of a map or mask list: where it ends, and its
   repetition count in *mult (Slurm: 0 or less "using 1 instead"). */
static const char *bind_token(const char *p, long long *mult)
{
	const char *star = NULL, *end = p;

	while (*end && *end != ',' && *end != ';' && *end != '+') {
		if (*end == '*')
			star = end;
		end++;
	}
	*mult = star ? strtoll(star + 1, NULL, 10) : 1;
	if (*mult <= 0)
		*mult = 1;
	if (*mult > INT_MAX)
		*mult = INT_MAX;
	return end;
}

/* The token of map_gpu or mask_gpu for local task i: the tokens repeated
   in turn; -1 when the list has none. */
static long long bind_value(const char *list, int task, const char **tok_out)
{
	long long total = 0, at, mult;
	const char *p, *end;

	for (p = list; *p && *p != ';' && *p != '+' && total <= (long long)INT_MAX * 16;) {
		end = bind_token(p, &mult);
		total += mult;
		p = *end == ',' ? end + 1 : end;
	}
	if (total <= 0)
		return -1;
	at = task % total;
	for (p = list; *p && *p != ';' && *p != '+';) {
		end = bind_token(p, &mult);
		if (at < mult) {
			*tok_out = p;
			return 0;
		}
		at -= mult;
		p = *end == ',' ? end + 1 : end;
	}
	return -1;
}

/* N of "gpu:per_task:N" (0 when the binding is not per task). */
static int tres_bind_per_task(const char *tres_bind)
{
	const char *p = tres_bind ? strstr(tres_bind, "gpu:") : NULL;
	long n;

	if (!p)
		return 0;
	p += 4;
	if (!strncasecmp(p, "verbose,", 8))
		p += 8;
	if (strncasecmp(p, "per_task:", 9) != 0)
		return 0;
	n = strtol(p + 9, NULL, 10);
	return n > 0 && n <= TMATCH_PLACE_MAX_GPUS ? (int)n : 0;
}

int tmatch_place_gpu_slurm_bind(const char *tres_bind, const tmatch_place_gpu_step_t *step,
                                int nlocal, int *kind, int *gpus, int *count, tmatch_error_t *err)
{
	const char *p = tres_bind ? strstr(tres_bind, "gpu:") : NULL;
	const char *list = NULL;
	long per = 0;
	int k = TMATCH_GPU_BIND_NONE;

	if (!kind || !step || nlocal < 0 || (gpus && !count))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_gpu_slurm_bind: invalid argument");
	if (p) {
		p += 4;
		if (!strncasecmp(p, "verbose,", 8))
			p += 8;
		if (!strncasecmp(p, "single:", 7)) {
			k = TMATCH_GPU_BIND_SINGLE;
			per = strtol(p + 7, NULL, 0);
			if (per <= 0 || per > INT_MAX)
				per = 1; /* Slurm: "Defaulting to 1" */
		} else if (!strncasecmp(p, "closest", 7)) {
			k = TMATCH_GPU_BIND_CLOSEST;
		} else if (!strncasecmp(p, "map_gpu:", 8) || !strncasecmp(p, "map:", 4)) {
			/* map: and mask: are 23.11's words for them (--tres-bind) */
			k = TMATCH_GPU_BIND_MAP;
			list = strchr(p, ':') + 1;
		} else if (!strncasecmp(p, "mask_gpu:", 9) || !strncasecmp(p, "mask:", 5)) {
			k = TMATCH_GPU_BIND_MASK;
			list = strchr(p, ':') + 1;
		} else if (!strncasecmp(p, "per_task:", 9)) {
			k = TMATCH_GPU_BIND_PER_TASK;
			per = strtol(p + 9, NULL, 10);
			if (per <= 0 || per > TMATCH_PLACE_MAX_GPUS)
				k = TMATCH_GPU_BIND_NONE; /* Slurm binds nothing then */
		}
	}
	*kind = k;
	if (!gpus || k == TMATCH_GPU_BIND_NONE || k == TMATCH_GPU_BIND_CLOSEST || !step->ngpus)
		return 0;
	for (int i = 0; i < nlocal; i++) {
		int *row = gpus + (size_t)i * (size_t)step->ngpus, n = 0;

		if (k == TMATCH_GPU_BIND_PER_TASK) {
			for (long j = (long)i * per; j < (long)(i + 1) * per && j < step->ngpus;
			     j++)
				// n < the GPUs per task, the row's size
				// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
				row[n++] = step->gpu[j];
		} else if (k == TMATCH_GPU_BIND_SINGLE) {
			row[n++] = step->gpu[(i / per) % step->ngpus];
		} else {
			const char *tok = NULL;
			long long v;
			int nbits = step->node_gpus < 63 ? step->node_gpus : 63;

			if (bind_value(list, i, &tok) < 0 || !tok)
				return tmatch_error_set(
				    err, EINVAL, NULL, 0, 0, "--gpu-bind=%s: no value for task %d",
				    k == TMATCH_GPU_BIND_MAP ? "map_gpu" : "mask_gpu", i);
			v = strtoll(tok, NULL, 0);
			if (k == TMATCH_GPU_BIND_MAP ? v < 0 || v >= step->node_gpus
			                             : v < 1 || v >= (1LL << nbits))
				return tmatch_error_set(
				    err, EINVAL, NULL, 0, 0,
				    "--gpu-bind: %lld is not a GPU %s of this node's "
				    "%d GPUs",
				    v, k == TMATCH_GPU_BIND_MAP ? "number" : "mask",
				    step->node_gpus);
			for (int s = 0; s < step->ngpus; s++) {
				/* allocation-relative numbers under ConstrainDevices, else the
				   node's; what is not the step's is dropped */
				int bit = step->relative ? s : step->index[s];

				if (k == TMATCH_GPU_BIND_MAP ? v == bit
				                             : bit < 63 && ((v >> bit) & 1))
					row[n++] = step->gpu[s];
			}
		}
		if (n == 0)
			// n == 0 here: row has room for at least one GPU
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
			row[n++] = step->gpu[0]; /* Slurm: "Binding to the first device" */
		count[i] = n;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The decision                                                              */

#define NKEYS 5 /* package, island, NUMA node, device, unit */

struct unit {
	int first, ngpu; /* its GPUs: ugpu[first .. first + ngpu) */
	int key[NKEYS];
	hwloc_bitmap_t where;         /* the CPUs of its GPUs' localities */
	hwloc_const_bitmap_t package; /* its first GPU's package */
	int cap;                      /* tasks it takes */
	int nslot, *slot;             /* the leaves of its tasks */
	int nic;
};

struct plan {
	const tmatch_place_gpu_in_t *in;
	int nu;
	struct unit *u;
	int *ugpu; /* GPUs of the units, in unit order */
	int *real; /* the node tree's real leaves, in leaf order */
	int nreal;
	char *used;  /* [nreal] */
	int outside; /* slots outside their unit's locality */
};

static void plan_free(struct plan *p)
{
	for (int i = 0; p->u && i < p->nu; i++) {
		hwloc_bitmap_free(p->u[i].where);
		free(p->u[i].slot);
	}
	free(p->u);
	free(p->ugpu);
	free(p->real);
	free(p->used);
}

static const tmatch_affinity_gpu_t *gpu_at(const struct plan *p, int pos)
{
	return &p->in->dev->gpu[pos];
}

/* Order of GPUs by where they are: package, island, NUMA node, device,
   index. */
static int gpu_before(const tmatch_affinity_devices_t *d, int a, int b)
{
	const tmatch_affinity_gpu_t *x = &d->gpu[a], *y = &d->gpu[b];

	if (x->package != y->package)
		return x->package < y->package;
	if (x->island != y->island)
		return x->island < y->island;
	if (x->numa != y->numa)
		return x->numa < y->numa;
	if (x->device != y->device)
		return x->device < y->device;
	return x->index < y->index;
}

static int unit_set(struct plan *p, struct unit *u)
{
	const tmatch_affinity_gpu_t *g0 = gpu_at(p, p->ugpu[u->first]);

	if (!(u->where = hwloc_bitmap_alloc()))
		return -1;
	for (int j = 0; j < u->ngpu; j++)
		hwloc_bitmap_or(u->where, u->where, gpu_at(p, p->ugpu[u->first + j])->cpuset);
	u->package = g0->package_cpuset;
	u->key[0] = g0->package;
	u->key[1] = g0->island;
	u->key[2] = g0->numa;
	u->key[3] = g0->device;
	u->nic = -1;
	return 0;
}

/* Free decision: the step's GPUs, sorted by where they are, in units of k. */
static int make_units_free(struct plan *p, int k, int per_unit, tmatch_error_t *err)
{
	const tmatch_place_gpu_in_t *in = p->in;
	int ng = in->step->ngpus, nl = in->nlocal;

	if (k > ng)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "%d GPUs per task, and the step has %d GPU%s here", k, ng,
		                        ng == 1 ? "" : "s");
	p->nu = ng / k;
	if (p->nu < 1 || k < 1)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "no GPU for the tasks here");
	if (per_unit > 0 && (long)per_unit * p->nu < nl)
		return tmatch_error_set(
		    err, EINVAL, NULL, 0, 0, "%d tasks here for %d GPU unit%s of %d task%s each",
		    nl, p->nu, p->nu == 1 ? "" : "s", per_unit, per_unit == 1 ? "" : "s");
	if (!(p->ugpu = calloc((size_t)ng, sizeof(int))) ||
	    !(p->u = calloc((size_t)p->nu + 1, sizeof(*p->u))))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	for (int i = 0; i < ng; i++) {
		int g = in->step->gpu[i], j = i;

		while (j > 0 && gpu_before(in->dev, g, p->ugpu[j - 1])) {
			p->ugpu[j] = p->ugpu[j - 1];
			j--;
		}
		p->ugpu[j] = g;
	}
	for (int u = 0; u < p->nu; u++) {
		struct unit *x = &p->u[u];

		x->first = u * k;
		x->ngpu = k;
		if (unit_set(p, x) < 0)
			return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		/* every unit its share of the tasks, the first ones one more:
		   no GPU idle while another holds two tasks more */
		x->cap = per_unit > 0 ? per_unit : nl / p->nu + (u < nl % p->nu);
	}
	return 0;
}

/* Follow: the distinct GPU sets Slurm gave, in the order of their first task. */
static int make_units_fixed(struct plan *p, int *unit_of, tmatch_error_t *err)
{
	const tmatch_place_gpu_in_t *in = p->in;
	int nl = in->nlocal, stride = in->step->ngpus, used = 0;

	if (!(p->ugpu = calloc((size_t)nl * (size_t)stride + 1, sizeof(int))) ||
	    !(p->u = calloc((size_t)nl + 1, sizeof(*p->u))))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	for (int i = 0; i < nl; i++) {
		const int *row = in->fixed + (size_t)i * (size_t)stride;
		int n = in->fixed_count[i], u;

		if (n < 1 || n > stride)
			return tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                        "task %d is bound to %d GPUs", i, n);
		for (u = 0; u < p->nu; u++)
			if (p->u[u].ngpu == n &&
			    !memcmp(p->ugpu + p->u[u].first, row, (size_t)n * sizeof(int)))
				break;
		if (u == p->nu) {
			for (int j = 0; j < n; j++)
				if (row[j] < 0 || row[j] >= in->dev->ngpus)
					return tmatch_error_set(
					    err, EINVAL, NULL, 0, 0,
					    "task %d is bound to GPU %d, not one of "
					    "the node's",
					    i, row[j]);
			p->u[u].first = used;
			p->u[u].ngpu = n;
			memcpy(p->ugpu + used, row, (size_t)n * sizeof(int));
			used += n;
			if (unit_set(p, &p->u[u]) < 0)
				return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			p->nu++;
		}
		p->u[u].cap++;
		unit_of[i] = u;
	}
	return 0;
}

/* The first free real leaf inside `set` (NULL: any), or -1. */
static int take_leaf(struct plan *p, hwloc_const_bitmap_t set)
{
	for (int r = 0; r < p->nreal; r++) {
		hwloc_const_bitmap_t cpus;

		if (p->used[r])
			continue;
		cpus = tmatch_affinity_leaf_cpuset(p->in->tree, p->real[r]);
		if (set && (!cpus || !hwloc_bitmap_isincluded(cpus, set)))
			continue;
		p->used[r] = 1;
		return p->real[r];
	}
	return -1;
}

/* CPU slots of every unit: inside its locality first (units of the smallest
   localities first), then for the tasks that still lack one the nearest:
   in the package, else anywhere. */
static int assign_slots(struct plan *p, tmatch_error_t *err)
{
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(p->in->tree);
	int nleaves = tmatch_topo_nb_leaves(topo), *order, total = 0, need = p->in->nlocal;

	if (p->nu < 1 || !p->u || nleaves < 1)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "no GPU unit or CPU slot here");
	if (!(p->real = calloc((size_t)nleaves + 1, sizeof(int))) ||
	    !(p->used = calloc((size_t)nleaves + 1, 1)) ||
	    !(order = calloc((size_t)p->nu + 1, sizeof(int))))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	for (int l = 0; l < nleaves; l++)
		if (tmatch_affinity_leaf_is_real(p->in->tree, l))
			p->real[p->nreal++] = l;
	for (int u = 0; u < p->nu; u++) {
		int j = u, w = hwloc_bitmap_weight(p->u[u].where);

		if (!(p->u[u].slot = calloc((size_t)p->u[u].cap + 1, sizeof(int)))) {
			free(order);
			return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		}
		while (j > 0 && hwloc_bitmap_weight(p->u[order[j - 1]].where) > w) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = u;
	}
	for (int o = 0; o < p->nu; o++) {
		struct unit *x = &p->u[order[o]];
		int leaf;

		while (x->nslot < x->cap && (leaf = take_leaf(p, x->where)) >= 0)
			x->slot[x->nslot++] = leaf;
		total += x->nslot;
	}
	free(order);
	for (int pass = 0; pass < 2 && total < need; pass++)
		for (int progress = 1; progress && total < need;) {
			progress = 0;
			for (int u = 0; u < p->nu && total < need; u++) {
				struct unit *x = &p->u[u];
				int leaf;

				if (x->nslot >= x->cap)
					continue;
				leaf = take_leaf(p, pass == 0 ? x->package : NULL);
				if (leaf < 0)
					continue;
				x->slot[x->nslot++] = leaf;
				p->outside++;
				total++;
				progress = 1;
			}
		}
	if (total < need)
		return tmatch_error_set(err, EOVERFLOW, NULL, 0, 0,
		                        "%d tasks for %d CPU slot%s here: more tasks than CPUs",
		                        need, p->nreal, p->nreal == 1 ? "" : "s");
	return 0;
}

/* Each unit's card: the closest to its first GPU, cards of equal
   closeness in turn (fewest units so far, then the lowest). */
static int assign_nics(struct plan *p)
{
	const tmatch_affinity_devices_t *d = p->in->dev;
	int *load;

	if (!d->nnics)
		return 0;
	if (!p->u || !p->ugpu || !(load = calloc((size_t)d->nnics, sizeof(int))))
		return -1;
	for (int u = 0; u < p->nu; u++) {
		int g = p->ugpu[p->u[u].first], best = 0;

		for (int k = 1; k < d->nnics; k++) {
			int rk = d->nic_rank[g * d->nnics + k],
			    rb = d->nic_rank[g * d->nnics + best];

			if (rk < rb || (rk == rb && load[k] < load[best]))
				best = k;
		}
		p->u[u].nic = best;
		load[best]++;
	}
	free(load);
	return 0;
}

/* The mapping tree over the units' slots: levels package, island, NUMA
   node, device, unit, slot, those that do not branch left out. leaf_of[u
   * maxcap + j] is the leaf of slot j of unit u. */
static tmatch_topo_t *unit_tree(struct plan *p, int *order, int *leaf_of, int maxcap,
                                tmatch_error_t *err)
{
	int idx[NKEYS + 1][TMATCH_PLACE_MAX_GPUS], arity[NKEYS + 1], depth = 0, ar[NKEYS + 1];
	tmatch_topo_t *topo;
	int *allowed, na = 0;
	long long leaves = 1;

	/* units sorted by their keys (the unit's own position last) */
	for (int a = 0; a < p->nu; a++) {
		int j = a;

		order[a] = a;
		while (j > 0) {
			const struct unit *x = &p->u[order[j - 1]], *y = &p->u[a];
			int c = 0;

			for (int k = 0; k < NKEYS - 1 && !c; k++)
				c = (x->key[k] > y->key[k]) - (x->key[k] < y->key[k]);
			if (c <= 0)
				break;
			order[j] = order[j - 1];
			j--;
		}
		order[j] = a;
	}
	/* a unit's child index at each level among the units sharing its keys
	   above; the unit level counts units of the same device */
	for (int l = 0; l < NKEYS; l++) {
		arity[l] = 1;
		for (int a = 0; a < p->nu; a++) {
			int same_above = a > 0, same_here;

			for (int k = 0; a > 0 && k < l; k++)
				same_above &= p->u[order[a]].key[k] == p->u[order[a - 1]].key[k];
			if (l < NKEYS - 1)
				same_here = same_above &&
				            p->u[order[a]].key[l] == p->u[order[a - 1]].key[l];
			else
				same_here = 0; /* each unit its own child */
			idx[l][a] = !same_above ? 0 : same_here ? idx[l][a - 1] : idx[l][a - 1] + 1;
			if (idx[l][a] + 1 > arity[l])
				arity[l] = idx[l][a] + 1;
		}
	}
	for (int l = 0; l < NKEYS; l++)
		if (arity[l] > 1)
			ar[depth++] = arity[l];
	if (maxcap > 1)
		ar[depth++] = maxcap;
	if (depth == 0)
		ar[depth++] = 1;
	for (int l = 0; l < depth; l++)
		leaves *= ar[l];
	if (leaves > (1 << 24))
		return tmatch_error_set(err, E2BIG, NULL, 0, 0, "too many GPU slots"), NULL;
	if (!(topo = tmatch_topo_create(depth, ar, NULL, err)))
		return NULL;
	if (!(allowed = malloc((size_t)leaves * sizeof(int)))) {
		tmatch_topo_destroy(topo);
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory"), NULL;
	}
	for (int a = 0; a < p->nu; a++) {
		long long base = 0;

		for (int l = 0; l < NKEYS; l++)
			if (arity[l] > 1)
				base = base * arity[l] + idx[l][a];
		base *= maxcap > 1 ? maxcap : 1;
		for (int j = 0; j < p->u[order[a]].nslot; j++) {
			leaf_of[order[a] * maxcap + j] = (int)(base + j);
			allowed[na++] = (int)(base + j);
		}
	}
	if (tmatch_topo_set_allowed(topo, allowed, na, err) < 0) {
		free(allowed);
		tmatch_topo_destroy(topo);
		return NULL;
	}
	free(allowed);
	return topo;
}

static int out_alloc(tmatch_place_gpu_out_t *out, int nlocal, int stride)
{
	memset(out, 0, sizeof(*out));
	out->nlocal = nlocal;
	out->stride = stride > 0 ? stride : 1;
	out->leaf = calloc((size_t)nlocal + 1, sizeof(int));
	out->ngpus = calloc((size_t)nlocal + 1, sizeof(int));
	out->gpu = calloc((size_t)nlocal * (size_t)out->stride + 1, sizeof(int));
	out->nic = calloc((size_t)nlocal + 1, sizeof(int));
	return out->leaf && out->ngpus && out->gpu && out->nic ? 0 : -1;
}

void tmatch_place_gpu_out_free(tmatch_place_gpu_out_t *out)
{
	if (!out)
		return;
	free(out->leaf);
	free(out->ngpus);
	free(out->gpu);
	free(out->nic);
	memset(out, 0, sizeof(*out));
}

/* Task i on slot j of unit u. */
static void give(const struct plan *p, tmatch_place_gpu_out_t *out, int i, int u, int j)
{
	const struct unit *x = &p->u[u];

	out->leaf[i] = x->slot[j];
	out->ngpus[i] = x->ngpu;
	memcpy(out->gpu + (size_t)i * (size_t)out->stride, p->ugpu + x->first,
	       (size_t)x->ngpu * sizeof(int));
	out->nic[i] = x->nic;
}

static int check_in(const tmatch_place_gpu_in_t *in, tmatch_error_t *err)
{
	/* -1 spelled out after each message: the static analysers do not see
	   what tmatch_error_set returns */
	if (!in || !in->tree || !in->dev || !in->step || in->nlocal < 1 || in->step->ngpus < 1 ||
	    in->step->ngpus > TMATCH_PLACE_MAX_GPUS || in->gpus_per_task < 0 ||
	    in->tasks_per_gpu < 0 || (in->fixed && !in->fixed_count)) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "tmatch_place_gpu_decide: invalid argument");
		return -1;
	}
	for (int i = 0; i < in->step->ngpus; i++)
		if (in->step->gpu[i] < 0 || in->step->gpu[i] >= in->dev->ngpus) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "the step's GPU %d is not one of the node's",
			                 in->step->gpu[i]);
			return -1;
		}
	if (in->comm && tmatch_comm_order(in->comm) != in->nlocal) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "the traffic has %d ranks for %d tasks here",
		                 tmatch_comm_order(in->comm), in->nlocal);
		return -1;
	}
	return 0;
}

/* GPUs per task of a free decision. */
static int units_of(const tmatch_place_gpu_in_t *in)
{
	int k = in->gpus_per_task, n = in->nlocal, ng = in->step->ngpus;

	if (k <= 0)
		k = n > 0 && ng >= n ? ng / n : 1;
	return k;
}

int tmatch_place_gpu_decide(const tmatch_place_gpu_in_t *in, tmatch_place_gpu_out_t *out,
                            tmatch_error_t *err)
{
	struct plan p;
	tmatch_place_gpu_out_t o;
	tmatch_topo_t *topo = NULL;
	int *unit_of = NULL, *order = NULL, *leaf_of = NULL, *leaf_of_rank = NULL, maxcap = 1;
	int rc = -1, k;

	if (check_in(in, err) < 0 || !out)
		return out ? -1 : tmatch_error_set(err, EINVAL, NULL, 0, 0, "invalid argument");
	if (!in->fixed && !in->comm)
		return tmatch_place_gpu_in_order(in, out, err);
	memset(&p, 0, sizeof(p));
	p.in = in;
	k = units_of(in);
	if (out_alloc(&o, in->nlocal, in->fixed ? in->step->ngpus : k) < 0 ||
	    !(unit_of = calloc((size_t)in->nlocal + 1, sizeof(int)))) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	if (in->fixed ? make_units_fixed(&p, unit_of, err) < 0
	              : make_units_free(&p, k, in->tasks_per_gpu, err) < 0)
		goto out;
	if (p.nu < 1 || !p.u || !p.ugpu) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no GPU for the tasks here");
		goto out;
	}
	if (assign_slots(&p, err) < 0 || assign_nics(&p) < 0) {
		if (!err || !err->msg[0])
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	if (in->fixed) {
		/* each unit's tasks on its slots, in the hint's order */
		int *next = calloc((size_t)p.nu, sizeof(int)), *tasks;

		if (!next || !(tasks = calloc((size_t)in->nlocal + 1, sizeof(int)))) {
			free(next);
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			goto out;
		}
		for (int i = 0; i < in->nlocal; i++) {
			int j = i;

			tasks[i] = i;
			while (j > 0 && in->hint && in->hint[tasks[j - 1]] > in->hint[i]) {
				tasks[j] = tasks[j - 1];
				j--;
			}
			tasks[j] = i;
		}
		for (int t = 0; t < in->nlocal; t++) {
			int i = tasks[t];

			give(&p, &o, i, unit_of[i], next[unit_of[i]]++);
		}
		free(next);
		free(tasks);
	} else {
		tmatch_map_opts_t mopts;

		for (int u = 0; u < p.nu; u++)
			if (p.u[u].nslot > maxcap)
				maxcap = p.u[u].nslot;
		order = calloc((size_t)p.nu + 1, sizeof(int));
		leaf_of = calloc((size_t)p.nu * (size_t)maxcap + 1, sizeof(int));
		leaf_of_rank = calloc((size_t)in->nlocal + 1, sizeof(int));
		if (!order || !leaf_of || !leaf_of_rank) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			goto out;
		}
		if (p.nu > TMATCH_PLACE_MAX_GPUS) {
			tmatch_error_set(err, E2BIG, NULL, 0, 0, "too many GPU units");
			goto out;
		}
		if (!(topo = unit_tree(&p, order, leaf_of, maxcap, err)))
			goto out;
		tmatch_map_opts_init(&mopts);
		mopts.mapper = in->mapper;
		mopts.seed = in->seed;
		mopts.time_budget = in->time_budget;
		if (tmatch_map_compute(in->comm, topo, &mopts, leaf_of_rank, err) < 0)
			goto out;
		for (int i = 0; i < in->nlocal; i++) {
			int found = 0;

			for (int u = 0; u < p.nu && !found; u++)
				for (int j = 0; j < p.u[u].nslot && !found; j++)
					// u < p.nu and j < its nslot <= maxcap: inside leaf_of
					// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
					if (leaf_of[u * maxcap + j] == leaf_of_rank[i]) {
						give(&p, &o, i, u, j);
						found = 1;
					}
			if (!found) {
				tmatch_error_set(err, EPROTO, NULL, 0, 0,
				                 "the mapper put rank %d on no GPU slot", i);
				goto out;
			}
		}
	}
	o.outside = p.outside;
	*out = o;
	memset(&o, 0, sizeof(o));
	rc = 0;
out:
	tmatch_place_gpu_out_free(&o);
	tmatch_topo_destroy(topo);
	plan_free(&p);
	free(unit_of);
	free(order);
	free(leaf_of);
	free(leaf_of_rank);
	return rc;
}

int tmatch_place_gpu_in_order(const tmatch_place_gpu_in_t *in, tmatch_place_gpu_out_t *out,
                              tmatch_error_t *err)
{
	const tmatch_topo_t *topo;
	int k, nu, per, r = 0, nleaves;
	tmatch_place_gpu_out_t o;

	if (check_in(in, err) < 0 || !out)
		return out ? -1 : tmatch_error_set(err, EINVAL, NULL, 0, 0, "invalid argument");
	k = units_of(in);
	if (k > in->step->ngpus)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "%d GPUs per task, and the step has %d here", k,
		                        in->step->ngpus);
	nu = in->step->ngpus / k;
	per = in->tasks_per_gpu > 0 ? in->tasks_per_gpu : (in->nlocal + nu - 1) / nu;
	if (out_alloc(&o, in->nlocal, k) < 0) {
		tmatch_place_gpu_out_free(&o);
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	}
	topo = tmatch_affinity_tree_topo(in->tree);
	nleaves = tmatch_topo_nb_leaves(topo);
	for (int i = 0; i < in->nlocal; i++) {
		int u = i / per < nu ? i / per : nu - 1, g = in->step->gpu[u * k];
		const tmatch_affinity_devices_t *d = in->dev;

		while (r < nleaves && !tmatch_affinity_leaf_is_real(in->tree, r))
			r++;
		if (r >= nleaves) {
			tmatch_place_gpu_out_free(&o);
			return tmatch_error_set(err, EOVERFLOW, NULL, 0, 0,
			                        "%d tasks for fewer CPU slots here", in->nlocal);
		}
		o.leaf[i] = r++;
		o.ngpus[i] = k;
		memcpy(o.gpu + (size_t)i * (size_t)k, in->step->gpu + u * k,
		       (size_t)k * sizeof(int));
		o.nic[i] = -1;
		for (int c = 0; c < d->nnics; c++)
			if (o.nic[i] < 0 ||
			    d->nic_rank[g * d->nnics + c] < d->nic_rank[g * d->nnics + o.nic[i]])
				o.nic[i] = c;
	}
	*out = o;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* What a placement gives                                                    */

static int link_kind(const tmatch_affinity_devices_t *d, int a, int b)
{
	const tmatch_affinity_gpu_t *x = &d->gpu[a], *y = &d->gpu[b];

	if (a == b)
		return TMATCH_GPU_LINK_SAME;
	if (x->device == y->device)
		return TMATCH_GPU_LINK_DEVICE;
	for (int l = 0; l < d->nlinks; l++)
		if (d->link[l].bandwidth && d->link[l].value[a * d->ngpus + b] > 0)
			return TMATCH_GPU_LINK_DIRECT;
	if (x->island >= 0 && x->island == y->island)
		return TMATCH_GPU_LINK_SWITCH;
	if (x->package == y->package)
		return TMATCH_GPU_LINK_PACKAGE;
	return TMATCH_GPU_LINK_ACROSS;
}

int tmatch_place_gpu_evaluate(const tmatch_place_gpu_in_t *in, const tmatch_place_gpu_out_t *o,
                              tmatch_place_gpu_eval_t *ev, tmatch_error_t *err)
{
	const tmatch_affinity_devices_t *d;
	int *holders, n;

	if (!in || !in->dev || !in->tree || !o || !ev || o->nlocal != in->nlocal)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_gpu_evaluate: invalid argument");
	d = in->dev;
	n = in->nlocal;
	memset(ev, 0, sizeof(*ev));
	if (!(holders = calloc((size_t)d->ngpus + 1, sizeof(int))))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	for (int i = 0; i < n; i++) {
		int g = o->ngpus[i] ? o->gpu[(size_t)i * (size_t)o->stride] : -1;
		hwloc_const_bitmap_t cpus = tmatch_affinity_leaf_cpuset(in->tree, o->leaf[i]);

		for (int j = 0; j < o->ngpus[i]; j++)
			holders[o->gpu[(size_t)i * (size_t)o->stride + j]]++;
		if (g >= 0 && (!cpus || !hwloc_bitmap_isincluded(cpus, d->gpu[g].cpuset)))
			ev->outside++;
		for (int j = 0; j < n; j++)
			if (j != i && cpus &&
			    hwloc_bitmap_intersects(
			        cpus, tmatch_affinity_leaf_cpuset(in->tree, o->leaf[j]))) {
				ev->cpu_shared++;
				break;
			}
		if (g >= 0 && o->nic[i] >= 0 && d->nic[o->nic[i]].package != d->gpu[g].package)
			for (int c = 0; c < d->nnics; c++)
				if (d->nic[c].package == d->gpu[g].package) {
					ev->nic_astray++;
					break;
				}
		if (g < 0 || !in->comm)
			continue;
		{
			const int *cols;
			const double *w;
			int m = tmatch_comm_row(in->comm, i, &cols, &w);

			for (int e = 0; e < m; e++) {
				int j = cols[e], h;

				if (j <= i || !o->ngpus[j])
					continue;
				h = o->gpu[(size_t)j * (size_t)o->stride];
				ev->traffic[link_kind(d, g, h)] += w[e];
				if (d->gpu[g].package != d->gpu[h].package)
					ev->across_packages += w[e];
				ev->total += w[e];
			}
		}
	}
	for (int g = 0; g < d->ngpus; g++)
		ev->gpu_shared += holders[g] > 1;
	free(holders);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The bindings format: "RANK cpus=LIST gpus=LIST nic=NAME"                  */

static int add_list(char **s, size_t *len, const int *v, int n)
{
	for (int i = 0; i < n; i++) {
		char num[16];
		int k = snprintf(num, sizeof(num), "%s%d", i ? "," : "", v[i]);
		char *t = realloc(*s, *len + (size_t)k + 1);

		if (!t)
			return -1;
		memcpy(t + *len, num, (size_t)k + 1);
		*s = t;
		*len += (size_t)k;
	}
	return 0;
}

char *tmatch_place_bindings_line(int rank, hwloc_const_bitmap_t cpus, const int *gpu_index,
                                 int ngpus, const tmatch_affinity_nic_t *nic)
{
	char *list = cpus ? tmatch_affinity_cpuset_list(cpus) : NULL, *gl = NULL, *line = NULL;
	tmatch_place_nic_var_t var[TMATCH_PLACE_NIC_VARS];
	char vars[TMATCH_PLACE_NIC_VARS * 96] = "";
	int nv = tmatch_place_nic_vars(nic, var);
	size_t gn = 0;

	for (int v = 0; v < nv; v++)
		snprintf(vars + strlen(vars), sizeof(vars) - strlen(vars), " %s=%s", var[v].name,
		         var[v].value);
	if (!list || (ngpus > 0 && add_list(&gl, &gn, gpu_index, ngpus) < 0) ||
	    asprintf(&line, "%d cpus=%s gpus=%s nic=%s%s\n", rank, list, gl ? gl : "-",
	             nic && nic->name[0] ? nic->name : "-", vars) < 0)
		line = NULL;
	free(list);
	free(gl);
	if (!line)
		errno = ENOMEM;
	return line;
}

/* The largest bindings file read: a line of some 100 bytes per rank. */
#define MAX_BINDINGS_BYTES ((size_t)256 << 20)

/* The column, from 1, of `at` in `line`. */
static int column_at(const char *at, const char *line)
{
	return (int)(at - line) + 1;
}

int tmatch_place_bindings_read(const char *path, const tmatch_affinity_tree_t *tree,
                               const tmatch_affinity_devices_t *dev, int n,
                               tmatch_place_gpu_out_t *out, tmatch_error_t *err)
{
	tmatch_place_gpu_out_t o;
	hwloc_bitmap_t set = NULL;
	char *text = NULL, *line, *next;
	int rc = -1, lineno = 0, nleaves, *seen = NULL;
	size_t len;

	if (!path || !tree || !dev || n < 1 || !out)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_bindings_read: invalid argument");
	nleaves = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(tree));
	if (out_alloc(&o, n, dev->ngpus > 0 ? dev->ngpus : 1) < 0 ||
	    !(set = hwloc_bitmap_alloc()) || !(seen = calloc((size_t)n, sizeof(int)))) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	if (!(text = tmatch_file_read(path, MAX_BINDINGS_BYTES, &len, err)))
		goto out;
	if (strlen(text) != len) {
		tmatch_error_set(err, EINVAL, path, 0, 0, "a NUL byte: not a bindings file");
		goto out;
	}
	for (line = text; line; line = next) {
		char *p = line, *end;
		long rank;
		int have_cpus = 0;

		lineno++;
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			continue;
#define BAD(at, ...)                                                                               \
	do {                                                                                       \
		tmatch_error_set(err, EINVAL, path, lineno, column_at((at), line), __VA_ARGS__);   \
		goto out;                                                                          \
	} while (0)
		errno = 0;
		rank = strtol(p, &end, 10);
		if (end == p || errno || rank < 0 || (*end != ' ' && *end != '\t'))
			BAD(p, "expected a rank: lines are 'RANK cpus=LIST gpus=LIST nic=NAME'");
		if (rank >= n)
			BAD(p, "rank %ld is out of range: the profile has %d ranks", rank, n);
		if (seen[rank])
			BAD(p, "rank %ld is bound twice (first on line %d)", rank, seen[rank]);
		seen[rank] = lineno;
		o.ngpus[rank] = 0;
		o.nic[rank] = -1;
		for (p = end; *p;) {
			char *tok, *val, save;

			while (*p == ' ' || *p == '\t' || *p == '\r')
				p++;
			if (!*p || *p == '#')
				break;
			tok = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\r')
				p++;
			save = *p;
			*p = '\0';
			if (!(val = strchr(tok, '=')))
				BAD(tok, "expected KEY=VALUE (cpus=, gpus=, nic=)");
			val++;
			if (!strncmp(tok, "cpus=", 5)) {
				int leaf = -1;

				if (tmatch_affinity_cpuset_parse(val, "cpus", set, NULL) < 0)
					BAD(val, "cpus=: expected a CPU list such as 0-3,8");
				for (int l = 0; l < nleaves && leaf < 0; l++) {
					hwloc_const_bitmap_t c =
					    tmatch_affinity_leaf_cpuset(tree, l);

					if (c && hwloc_bitmap_isequal(c, set))
						leaf = l;
				}
				if (leaf < 0)
					BAD(val,
					    "CPUs %s are not one task slot of this topology (a "
					    "core, or "
					    "the hardware threads the plugin gives a task)",
					    val);
				o.leaf[rank] = leaf;
				have_cpus = 1;
			} else if (!strncmp(tok, "gpus=", 5)) {
				int i;

				if (strcmp(val, "-") != 0) {
					if (tmatch_affinity_cpuset_parse(val, "gpus", set, NULL) <
					    0)
						BAD(val,
						    "gpus=: expected GPU indices such as 0,1 or -");
					hwloc_bitmap_foreach_begin(i, set)
					{
						int pos =
						    tmatch_affinity_devices_gpu_of_index(dev, i);

						if (pos < 0 || o.ngpus[rank] >= o.stride)
							BAD(val,
							    "GPU %d is not one of this node's %d",
							    i, dev->ngpus);
						o.gpu[(size_t)rank * (size_t)o.stride +
						      o.ngpus[rank]++] = pos;
					}
					hwloc_bitmap_foreach_end();
				}
			} else if (!strncmp(tok, "nic=", 4)) {
				if (strcmp(val, "-") != 0) {
					for (int k = 0; k < dev->nnics && o.nic[rank] < 0; k++)
						if (!strcmp(dev->nic[k].name, val))
							o.nic[rank] = k;
					if (o.nic[rank] < 0)
						BAD(val, "no network card %.64s on this node", val);
				}
			} else if (*tok < 'A' || *tok > 'Z' ||
			           strspn(tok,
			                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			                  "0123456789_") != (size_t)(val - 1 - tok)) {
				BAD(tok, "unknown key: use cpus=, gpus= and nic= (and the "
				         "card's variables, NAME=VALUE)");
			} /* else the card's variable: it follows from nic= */
			*p = save;
		}
		if (!have_cpus)
			BAD(line, "rank %ld has no cpus=LIST", rank);
#undef BAD
	}
	for (int r = 0; r < n; r++)
		if (!seen[r]) {
			tmatch_error_set(err, EINVAL, path, 0, 0,
			                 "rank %d has no line: the bindings must give all %d ranks",
			                 r, n);
			goto out;
		}
	*out = o;
	memset(&o, 0, sizeof(o));
	rc = 0;
out:
	tmatch_place_gpu_out_free(&o);
	hwloc_bitmap_free(set);
	free(seen);
	free(text);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* A task of a placed GPU step, in its own task_init                         */

int tmatch_place_gpu_task(tmatch_place_node_t *node, const tmatch_affinity_tree_t *tree, int local,
                          const char *tres_bind, const char *own_gpus, unsigned slurm_version,
                          char *why, size_t len)
{
	const tmatch_place_gpu_step_t *st;
	tmatch_place_task_t *t;
	tmatch_place_gpu_in_t in;
	tmatch_place_gpu_out_t out = {0};
	tmatch_error_t err;
	int kind, *fixed = NULL, *count = NULL, *hint = NULL, rc = -1, mode;

	if (why && len)
		why[0] = '\0';
	if (!node || !tree || local < 0 || local >= node->ntasks || !node->gpu_step ||
	    !node->devices) {
		errno = EINVAL;
		return -1;
	}
	st = node->gpu_step;
	t = &node->task[local];
	if (tmatch_place_gpu_slurm_bind(tres_bind, st, node->ntasks, &kind, NULL, NULL, NULL) < 0)
		kind = TMATCH_GPU_BIND_NONE;
	switch (kind) {
	case TMATCH_GPU_BIND_NONE:
		mode = TMATCH_GPU_MODE_OURS;
		break;
	case TMATCH_GPU_BIND_CLOSEST:
		/* ours are the closest to the CPUs; a task confined to Slurm's keeps them */
		mode = st->constrained ? TMATCH_GPU_MODE_KEEP : TMATCH_GPU_MODE_OURS;
		break;
	default:
		/* --gpus-per-task: the same count, ours unless the devices are confined */
		mode = kind == TMATCH_GPU_BIND_PER_TASK && !st->constrained &&
		               tres_bind_per_task(tres_bind) == node->gpus_per_task
		           ? TMATCH_GPU_MODE_OURS
		           : TMATCH_GPU_MODE_FOLLOW;
		break;
	}
	/* Slurm 23.02 (single) and 23.11 (per_task) choose these by each task's
	   CPUs: where a task sees only its own GPUs (ConstrainDevices) which
	   they are cannot be computed nor seen here; Slurm's CPUs go with them */
	if (mode == TMATCH_GPU_MODE_FOLLOW && st->relative &&
	    ((kind == TMATCH_GPU_BIND_SINGLE && slurm_version >= TMATCH_SLURM_23_02) ||
	     (kind == TMATCH_GPU_BIND_PER_TASK && slurm_version >= TMATCH_SLURM_23_11))) {
		mode = TMATCH_GPU_MODE_KEEP;
		snprintf(why, len,
		         "with ConstrainDevices this Slurm binds %s by the tasks' CPUs: Slurm's "
		         "CPUs and GPUs kept",
		         kind == TMATCH_GPU_BIND_SINGLE ? "single" : "per_task");
	}
	if (kind == TMATCH_GPU_BIND_CLOSEST && mode == TMATCH_GPU_MODE_KEEP)
		snprintf(why, len,
		         "--gpu-bind=closest with ConstrainDevices: Slurm's GPUs follow its CPU "
		         "binding, both kept");
	if (mode != TMATCH_GPU_MODE_FOLLOW) {
		t->gpu_mode = mode;
		return 0;
	}
	/* Slurm's GPUs for every task of the node, as slurmstepd computes them,
	   and the CPUs after them: the same in every task, so they agree */
	fixed = calloc((size_t)node->ntasks * (size_t)st->ngpus + 1, sizeof(int));
	count = calloc((size_t)node->ntasks + 1, sizeof(int));
	hint = calloc((size_t)node->ntasks + 1, sizeof(int));
	if (!fixed || !count || !hint) {
		errno = ENOMEM;
		goto out;
	}
	tmatch_error_clear(&err);
	if (tmatch_place_gpu_slurm_bind(tres_bind, st, node->ntasks, &kind, fixed, count, &err) <
	    0) {
		t->gpu_mode = TMATCH_GPU_MODE_KEEP;
		snprintf(why, len, "Slurm's GPU binding not understood (%.200s): kept", err.msg);
		rc = 0;
		goto out;
	}
	if (kind == TMATCH_GPU_BIND_SINGLE && !st->relative && own_gpus && *own_gpus) {
		/* single takes the GPUs near the task's CPUs (gres.conf's Cores=):
		   the task sees which it got; computed without Cores= otherwise */
		hwloc_bitmap_t set = hwloc_bitmap_alloc(), mine = hwloc_bitmap_alloc();
		int same = 0;

		if (set && mine && tmatch_affinity_cpuset_parse(own_gpus, NULL, set, NULL) == 0) {
			for (int j = 0; j < count[local]; j++) {
				// j < count[local] <= st->ngpus: inside the task's row of fixed[]
				// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
				int g = fixed[(size_t)local * (size_t)st->ngpus + j];

				// fixed[] holds indices of the step's GPUs, below devices->ngpus
				// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
				hwloc_bitmap_set(mine, (unsigned)node->devices->gpu[g].index);
			}
			same = hwloc_bitmap_isequal(set, mine);
		}
		hwloc_bitmap_free(set);
		hwloc_bitmap_free(mine);
		if (!same) {
			t->gpu_mode = TMATCH_GPU_MODE_KEEP;
			snprintf(why, len,
			         "--gpu-bind=single gave GPU %.64s by the task's CPUs (gres.conf "
			         "Cores=): Slurm's binding kept",
			         own_gpus);
			rc = 0;
			goto out;
		}
	}
	for (int i = 0; i < node->ntasks; i++)
		hint[i] = node->task[i].leaf;
	memset(&in, 0, sizeof(in));
	in.tree = tree;
	in.dev = node->devices;
	in.step = st;
	in.nlocal = node->ntasks;
	in.fixed = fixed;
	in.fixed_count = count;
	in.hint = hint;
	if (tmatch_place_gpu_decide(&in, &out, &err) < 0) {
		t->gpu_mode = TMATCH_GPU_MODE_KEEP;
		snprintf(why, len, "the CPUs cannot follow Slurm's GPU binding (%.200s): kept",
		         err.msg);
		rc = 0;
		goto out;
	}
	{
		hwloc_const_bitmap_t set = tmatch_affinity_leaf_cpuset(tree, out.leaf[local]);
		int *g = malloc(((size_t)out.ngpus[local] + 1) * sizeof(int));
		hwloc_bitmap_t cpus = set ? hwloc_bitmap_dup(set) : NULL;

		if (!g || !cpus) {
			free(g);
			hwloc_bitmap_free(cpus);
			errno = ENOMEM;
			goto out;
		}
		memcpy(g, out.gpu + (size_t)local * (size_t)out.stride,
		       (size_t)out.ngpus[local] * sizeof(int));
		free(t->gpu);
		hwloc_bitmap_free(t->cpuset);
		t->gpu = g;
		t->ngpus = out.ngpus[local];
		t->cpuset = cpus;
		t->leaf = out.leaf[local];
		t->nic = out.nic[local];
		t->gpu_mode = TMATCH_GPU_MODE_FOLLOW;
	}
	rc = 0;
out:
	tmatch_place_gpu_out_free(&out);
	free(fixed);
	free(count);
	free(hint);
	return rc;
}
