/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * env.c - what a placed task gets (its environment) and what the user is
 * told (one line per task, one summary per node). Every string is as long
 * as it needs to be: CPU sets of thousands of CPUs fit.
 */
#include "placement/placement_private.h"
#include "placement/env.h"
#include "placement/gpu.h"
#include "placement/node.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new string from a format, NULL with errno = ENOMEM. */
static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* Append an entry that takes ownership of `value` (NULL: out of memory). */
static int env_put(tmatch_place_env_t *env, int *n, const char *name, int overwrite, char *value)
{
	if (!value)
		return -1;
	snprintf(env[*n].name, sizeof(env[*n].name), "%s", name);
	env[*n].value = value;
	env[*n].overwrite = overwrite;
	(*n)++;
	return 0;
}

/* OMP_PLACES for a CPU set: one place per CPU, "{0},{1},{4}". */
static char *omp_places(hwloc_const_bitmap_t set)
{
	size_t len = 1, used = 0;
	char *s;
	int c;

	hwloc_bitmap_foreach_begin(c, set)
	{
		len += (size_t)snprintf(NULL, 0, ",{%d}", c);
	}
	hwloc_bitmap_foreach_end();
	if (!(s = malloc(len))) {
		errno = ENOMEM;
		return NULL;
	}
	s[0] = '\0';
	hwloc_bitmap_foreach_begin(c, set)
	{
		used += (size_t)snprintf(s + used, len - used, "%s{%d}", used ? "," : "", c);
	}
	hwloc_bitmap_foreach_end();
	return s;
}

/* Most entries an environment has (9 TREEMATCH_*, 3 OMP_*, 5 MPI; GPU
   steps: 2 TREEMATCH_*, 4 vendors' variables, CUDA_DEVICE_ORDER,
   SLURM_STEP_GPUS, TMATCH_PLACE_NIC_VARS for the card). */
#define MAX_ENV 27

/* Unset `name` in the task (an entry without a value). */
static void env_unset(tmatch_place_env_t *env, int *n, const char *name)
{
	snprintf(env[*n].name, sizeof(env[*n].name), "%s", name);
	env[*n].value = NULL;
	env[*n].overwrite = 1;
	(*n)++;
}

/* A task's GPUs as a list: their indices, or (visible) the numbers the
   task's variables give them: their rank among the step's GPUs when Slurm
   numbers them as the task sees them (ConstrainDevices). */
static char *gpu_list(const tmatch_place_node_t *node, const tmatch_place_task_t *t, int visible)
{
	const tmatch_place_gpu_step_t *st = node->gpu_step;
	char *s = malloc((size_t)t->ngpus * 12 + 1);
	size_t used = 0;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s[0] = '\0';
	for (int j = 0; j < t->ngpus; j++) {
		int v = -1;

		for (int i = 0; i < st->ngpus; i++)
			if (st->gpu[i] == t->gpu[j])
				v = visible && st->relative ? i : st->index[i];
		used += (size_t)snprintf(s + used, 13, "%s%d", j ? "," : "", v);
	}
	return s;
}

/* The GPU entries of task t (see tmatch_place_task_env). */
static int gpu_env(const tmatch_place_node_t *node, const tmatch_place_task_t *t,
                   const tmatch_config_t *cfg, tmatch_place_env_t *e, int *n)
{
	static const struct {
		const char *name;
		int vendor;
		unsigned var;
	} vars[] = {
	    {"CUDA_VISIBLE_DEVICES", TMATCH_GPU_VENDOR_NVIDIA, TMATCH_GPU_VAR_CUDA},
	    {"ROCR_VISIBLE_DEVICES", TMATCH_GPU_VENDOR_AMD, TMATCH_GPU_VAR_ROCR},
	    {"ZE_AFFINITY_MASK", TMATCH_GPU_VENDOR_INTEL, TMATCH_GPU_VAR_ZE},
	    {"GPU_DEVICE_ORDINAL", -1, TMATCH_GPU_VAR_ORDINAL},
	};
	const tmatch_affinity_nic_t *nic =
	    node->devices && t->nic >= 0 && t->nic < node->devices->nnics
	        ? &node->devices->nic[t->nic]
	        : NULL;
	int keep = t->gpu_mode == TMATCH_GPU_MODE_KEEP;

	if (env_put(e, n, "TREEMATCH_GPUS", 1, keep ? format("%s", "") : gpu_list(node, t, 0)) ||
	    env_put(e, n, "TREEMATCH_NIC", 1, format("%s", nic && !keep ? nic->name : "")))
		return -1;
	if (cfg->dry_run || keep)
		return 0;
	if (t->gpu_mode == TMATCH_GPU_MODE_OURS) {
		/* the vendor's variable (or, for a vendor we cannot tell, those
		   Slurm set); the others unset: one device, one vendor's word */
		for (size_t v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
			int mine = node->gpu_vendor == TMATCH_GPU_VENDOR_OTHER
			               ? vars[v].vendor >= 0 && (node->gpu_step->vars & vars[v].var)
			               : vars[v].vendor == node->gpu_vendor;

			if (!mine)
				env_unset(e, n, vars[v].name);
			else if (env_put(e, n, vars[v].name, 1, gpu_list(node, t, 1)))
				return -1;
		}
		if ((node->gpu_vendor == TMATCH_GPU_VENDOR_NVIDIA &&
		     env_put(e, n, "CUDA_DEVICE_ORDER", 1, format("PCI_BUS_ID"))) ||
		    env_put(e, n, "SLURM_STEP_GPUS", 1, gpu_list(node, t, 0)))
			return -1;
	}
	if (cfg->nic_env) {
		tmatch_place_nic_var_t var[TMATCH_PLACE_NIC_VARS];
		int nv = tmatch_place_nic_vars(nic, var);

		for (int v = 0; v < nv; v++)
			if (env_put(e, n, var[v].name, 0, format("%s", var[v].value)))
				return -1;
	}
	return 0;
}

int tmatch_place_nic_vars(const tmatch_affinity_nic_t *nic,
                          tmatch_place_nic_var_t var[TMATCH_PLACE_NIC_VARS])
{
	int n = 0;

	if (!nic || !var)
		return 0;
	if (!strcmp(nic->kind, "OpenFabrics") && !strncmp(nic->name, "mlx", 3)) {
		/* UCX (Open MPI's pml ucx, MPICH's ch4:ucx) and Open MPI 4's
		   openib: DEVICE:PORT */
		var[n].name = "UCX_NET_DEVICES";
		snprintf(var[n++].value, sizeof(var[0].value), "%s:1", nic->name);
		var[n].name = "OMPI_MCA_btl_openib_if_include";
		snprintf(var[n++].value, sizeof(var[0].value), "%s:1", nic->name);
	} else if (!strcmp(nic->kind, "OpenFabrics") && nic->pci_vendor == 0x1d0f) {
		/* libfabric's efa provider keeps the verbs devices it lists
		   (fi_efa(7), efa_env_allows_nic) */
		var[n].name = "FI_EFA_IFACE";
		snprintf(var[n++].value, sizeof(var[0].value), "%s", nic->name);
	} else if (!strcmp(nic->kind, "Slingshot") && !strncmp(nic->name, "cxi", 3)) {
		/* libfabric's cxi provider keeps the CXI devices it lists
		   (fi_cxi(7)); Cray MPICH and Open MPI's ofi take what it shows */
		var[n].name = "FI_CXI_DEVICE_NAME";
		snprintf(var[n++].value, sizeof(var[0].value), "%s", nic->name);
	}
	return n;
}

int tmatch_place_task_env(const tmatch_place_node_t *node, const tmatch_config_t *cfg, int local,
                          tmatch_place_env_t **env)
{
	const tmatch_place_task_t *t;
	tmatch_place_env_t *e;
	int n = 0;

	if (!node || !cfg || !env || node->status != TMATCH_PLACE_PLACED || local < 0 ||
	    local >= node->ntasks) {
		errno = EINVAL;
		return -1;
	}
	t = &node->task[local];
	if (!(e = calloc(MAX_ENV, sizeof(*e)))) {
		errno = ENOMEM;
		return -1;
	}
	if (env_put(e, &n, "TREEMATCH_RANK", 1, format("%d", t->rank)) ||
	    env_put(e, &n, "TREEMATCH_CPUS", 1, tmatch_affinity_cpuset_list(t->cpuset)) ||
	    env_put(e, &n, "TREEMATCH_CPU_MASK", 1, tmatch_affinity_cpuset_mask(t->cpuset)) ||
	    env_put(e, &n, "TREEMATCH_LEVELS", 1,
	            tmatch_affinity_pos_string(&t->pos, TMATCH_AFFINITY_POS_LEVELS)) ||
	    env_put(e, &n, "TREEMATCH_INDEX", 1,
	            tmatch_affinity_pos_string(&t->pos, TMATCH_AFFINITY_POS_INDEX)) ||
	    env_put(e, &n, "TREEMATCH_COUNT", 1,
	            tmatch_affinity_pos_string(&t->pos, TMATCH_AFFINITY_POS_COUNT)) ||
	    env_put(e, &n, "TREEMATCH_POSITION", 1,
	            tmatch_affinity_pos_string(&t->pos, TMATCH_AFFINITY_POS_FULL)) ||
	    env_put(e, &n, "TREEMATCH_MAPPER", 1, format("%s", node->mapper)) ||
	    env_put(e, &n, "TREEMATCH_DRY_RUN", 1, format("%d", cfg->dry_run ? 1 : 0)))
		goto nomem;
	if (node->cpus_per_task > 1 &&
	    (env_put(e, &n, "OMP_NUM_THREADS", 0, format("%d", node->cpus_per_task)) ||
	     env_put(e, &n, "OMP_PLACES", 0, omp_places(t->cpuset)) ||
	     env_put(e, &n, "OMP_PROC_BIND", 0, format("close"))))
		goto nomem;
	/* Keep the binding chosen here: Open MPI (mpirun inside the step and
	   direct launch), MPICH's Hydra, Intel MPI, MVAPICH2/3. */
	if (cfg->mpi_pin && !cfg->dry_run &&
	    (env_put(e, &n, "OMPI_MCA_hwloc_base_binding_policy", 0, format("none")) ||
	     env_put(e, &n, "HYDRA_BINDING", 0, format("none")) ||
	     env_put(e, &n, "I_MPI_PIN", 0, format("0")) ||
	     env_put(e, &n, "MV2_ENABLE_AFFINITY", 0, format("0")) ||
	     env_put(e, &n, "MVP_ENABLE_AFFINITY", 0, format("0"))))
		goto nomem;
	if (node->gpu_step && t->ngpus > 0 && gpu_env(node, t, cfg, e, &n) < 0)
		goto nomem;
	*env = e;
	return n;
nomem:
	tmatch_place_env_free(e, n);
	errno = ENOMEM;
	return -1;
}

void tmatch_place_env_free(tmatch_place_env_t *env, int n)
{
	if (!env)
		return;
	for (int i = 0; i < n; i++)
		free(env[i].value);
	free(env);
}

char *tmatch_place_verbose_line(const tmatch_place_node_t *node, int local, long pid, int dry_run)
{
	const tmatch_place_task_t *t;
	char *list, *mask, *line = NULL;

	if (!node || node->status != TMATCH_PLACE_PLACED || local < 0 || local >= node->ntasks) {
		errno = EINVAL;
		return NULL;
	}
	t = &node->task[local];
	list = tmatch_affinity_cpuset_list(t->cpuset);
	mask = tmatch_affinity_cpuset_mask(t->cpuset);
	if (list && mask)
		line =
		    format("treematch: cpu-bind=MAP - %s, task %2d %2d [%ld]: cpus %s mask %s %s",
		           node->node_name, local, t->rank, pid, list, mask,
		           dry_run ? "not set (dry-run)" : "set");
	free(list);
	free(mask);
	if (!line)
		errno = ENOMEM;
	return line;
}

/* " (NAME=VALUE NAME=VALUE)" of the card's variables, "" for none. */
static void nic_vars_said(const tmatch_affinity_nic_t *nic, char *buf, size_t len)
{
	tmatch_place_nic_var_t var[TMATCH_PLACE_NIC_VARS];
	int nv = tmatch_place_nic_vars(nic, var);
	size_t used = 0;

	buf[0] = '\0';
	for (int v = 0; v < nv && used < len; v++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s=%s%s", v ? " " : " (",
		                         var[v].name, var[v].value, v == nv - 1 ? ")" : "");
}

char *tmatch_place_gpu_verbose_line(const tmatch_place_node_t *node, int local, long pid,
                                    int dry_run, int nic_env, const char *why)
{
	const tmatch_place_task_t *t;
	const tmatch_affinity_nic_t *nic;
	char *names = NULL, *list = NULL, *line = NULL;
	char vars[TMATCH_PLACE_NIC_VARS * 96] = "";
	size_t len = 0;

	if (!node || node->status != TMATCH_PLACE_PLACED || local < 0 || local >= node->ntasks ||
	    !node->gpu_step || node->task[local].ngpus < 1) {
		errno = EINVAL;
		return NULL;
	}
	t = &node->task[local];
	if (t->gpu_mode == TMATCH_GPU_MODE_KEEP)
		return format("treematch: gpu-bind=SLURM - %s, task %2d %2d [%ld]: Slurm's binding "
		              "kept%s%s",
		              node->node_name, local, t->rank, pid, why && *why ? ": " : "",
		              why ? why : "");
	if (!(list = gpu_list(node, t, 0)))
		return NULL;
	for (int j = 0; node->devices && j < t->ngpus; j++) {
		const char *nm = node->devices->gpu[t->gpu[j]].name;
		char *more = realloc(names, len + strlen(nm) + 3);

		if (!more)
			goto out;
		names = more;
		len += (size_t)sprintf(names + len, "%s%s", j ? ", " : "", nm);
	}
	nic = node->devices && t->nic >= 0 && t->nic < node->devices->nnics
	          ? &node->devices->nic[t->nic]
	          : NULL;
	if (nic_env)
		nic_vars_said(nic, vars, sizeof(vars));
	line = format("treematch: gpu-bind=%s - %s, task %2d %2d [%ld]: gpus %s (%s) nic %s%s%s %s",
	              t->gpu_mode == TMATCH_GPU_MODE_FOLLOW ? "SLURM" : "MAP", node->node_name,
	              local, t->rank, pid, list, names ? names : "?", nic ? nic->name : "-", vars,
	              t->gpu_mode == TMATCH_GPU_MODE_FOLLOW ? ", Slurm's GPUs, cpus follow" : "",
	              dry_run ? "not set (dry-run)" : "set");
out:
	free(list);
	free(names);
	if (!line)
		errno = ENOMEM;
	return line;
}

char *tmatch_place_summary_line(const tmatch_place_node_t *node, int dry_run)
{
	double gain = 0.0;
	char total[80] = "", search[96] = "";

	if (!node || node->status != TMATCH_PLACE_PLACED) {
		errno = EINVAL;
		return NULL;
	}
	if (node->cost_packed > 0.0)
		gain = 100.0 * (node->cost - node->cost_packed) / node->cost_packed;
	if (node->node_seconds > 0.0)
		snprintf(total, sizeof(total), " (node plan %.1f ms, cpu %.1f ms)",
		         node->node_seconds * 1e3, node->node_cpu_seconds * 1e3);
	if (node->search_cut_from > node->search_time)
		snprintf(search, sizeof(search),
		         ", search_time=%g s cut to %g s (half of max_map_time)",
		         node->search_cut_from, node->search_time);
	return format("treematch: %s: %d task(s) mapped by %s in %.1f ms%s, cost %.6g "
	              "(packed %.6g, %+.1f%%)%s%s",
	              node->node_name, node->ntasks, node->mapper, node->map_seconds * 1e3, total,
	              node->cost, node->cost_packed, gain, search,
	              dry_run ? ", dry-run: nothing bound" : "");
}
