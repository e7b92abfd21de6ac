/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_bigcpu.c - nodes of 1024 and 4096 hardware threads (hwloc
 * synthetic topologies saved as XML, as the plugin's topology_xml reads
 * them): every task's CPU set, its list and mask as the user sees them (in
 * TREEMATCH_CPUS, TREEMATCH_CPU_MASK, the verbose line), tasks of 1024
 * CPUs, the dry-run path, and a real bind of a 4096-bit set on this
 * machine's CPUs. The expected strings are computed here, digit by digit,
 * not by the library's printers.
 *
 * Synthetic numbering: core c of such a node has the PUs 2c and 2c+1.
 */
#include "placement/env.h"
#include "placement/node.h"
#include "tests/unit/cpuset_text.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A synthetic node saved as XML in /tmp; the caller unlinks it. */
static void write_xml(const char *synthetic, char *path, size_t len)
{
	hwloc_topology_t topo;
	int fd;

	tm_tmpname(path, len, "test_bigcpu_XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(hwloc_topology_init(&topo), 0);
	cr_assert_eq(hwloc_topology_set_synthetic(topo, synthetic), 0);
	cr_assert_eq(hwloc_topology_load(topo), 0);
	cr_assert_eq(hwloc_topology_export_xml(topo, path, 0), 0);
	hwloc_topology_destroy(topo);
}

/* A profile of n ranks on a ring (each rank talks to the next). */
static tmatch_profile_t *ring(int n)
{
	tmatch_error_t err;
	tmatch_profile_t *p = tmatch_profile_create(n, TMATCH_PROFILE_HAS_BYTES, 0, &err);

	cr_assert_not_null(p, "%s", err.msg);
	for (int i = 0; i < (n > 2 ? n : n - 1); i++)
		cr_assert_eq(tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, i, (i + 1) % n,
		                                     (uint64_t)(100 + i % 7), 0, NULL, NULL, &err),
		             0, "%s", err.msg);
	cr_assert_eq(tmatch_profile_finish(p, NULL, NULL, &err), 0, "%s", err.msg);
	return p;
}

/* The mask of CPUs lo..hi as Slurm writes it, built nibble by nibble. */
static char *expected_mask(int lo, int hi)
{
	int top = hi / 4;
	char *s = malloc((size_t)top + 4);

	cr_assert_not_null(s);
	s[0] = '0', s[1] = 'x';
	for (int nib = top, k = 2; nib >= 0; nib--, k++) {
		unsigned v = 0;
		for (int b = 0; b < 4; b++)
			if (nib * 4 + b >= lo && nib * 4 + b <= hi)
				v |= 1u << b;
		s[k] = "0123456789abcdef"[v];
	}
	s[top + 3] = '\0';
	return s;
}

static const char *env_value(const tmatch_place_env_t *env, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(env[i].name, name))
			return env[i].value;
	return NULL;
}

/*
 * One task per core on a node of `pus` PUs (2 per core), in dry run through
 * tmatch_place_node: every task gets a whole core, all cores are used, and
 * the list, mask and verbose line of every task are exact.
 */
static void every_core(const char *synthetic, int pus)
{
	int ncores = pus / 2;
	char xml[64], spec[96];
	int *ranks = malloc(sizeof(int) * (size_t)ncores);
	unsigned char *used = calloc((size_t)ncores, 1);
	tmatch_profile_t *p = ring(ncores);
	tmatch_place_node_in_t in;
	tmatch_place_node_t *r = NULL;
	tmatch_config_t cfg;
	tmatch_error_t err;

	cr_assert(ranks && used);
	write_xml(synthetic, xml, sizeof(xml));
	snprintf(spec, sizeof(spec), "xml:%s", xml);
	for (int i = 0; i < ncores; i++)
		ranks[i] = i;
	tmatch_config_init(&cfg);
	snprintf(cfg.mapper, sizeof(cfg.mapper), "rcm");
	cfg.dry_run = 1;
	memset(&in, 0, sizeof(in));
	in.cfg = &cfg;
	in.profile = p;
	in.user_profile = 1;
	in.node_name = "big";
	in.node_count = 1;
	in.ranks = ranks;
	in.nlocal = ncores;
	in.ntasks_total = ncores;
	in.topology = spec;
	in.isolate = 1;
	cr_assert_eq(tmatch_place_node(&in, &r, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(r->status, TMATCH_PLACE_PLACED);
	cr_assert_eq(r->ntasks, ncores);
	cr_assert_eq(hwloc_bitmap_weight(r->allowed), pus);
	for (int t = 0; t < ncores; t++) {
		const tmatch_place_task_t *task = &r->task[t];
		int lo = hwloc_bitmap_first(task->cpuset), c = lo / 2;
		char want[32], *mask = expected_mask(2 * c, 2 * c + 1), *line;
		tmatch_place_env_t *env = NULL;
		int n;

		cr_assert_eq(hwloc_bitmap_weight(task->cpuset), 2, "task %d: a whole core", t);
		cr_assert_eq(lo % 2, 0, "task %d starts at PU %d", t, lo);
		cr_assert(!used[c], "core %d given twice", c);
		used[c] = 1;
		snprintf(want, sizeof(want), "%d-%d", 2 * c, 2 * c + 1);
		cr_assert_str_eq(list_of(task->cpuset), want, "task %d", t);
		cr_assert_str_eq(mask_of(task->cpuset), mask, "task %d", t);
		n = tmatch_place_task_env(r, &cfg, t, &env);
		cr_assert_gt(n, 0);
		cr_assert_str_eq(env_value(env, n, "TREEMATCH_CPUS"), want);
		cr_assert_str_eq(env_value(env, n, "TREEMATCH_CPU_MASK"), mask,
		                 "task %d: the environment holds the whole mask", t);
		tmatch_place_env_free(env, n);
		line = tmatch_place_verbose_line(r, t, 7, 1);
		cr_assert_not_null(line);
		cr_assert_not_null(strstr(line, mask), "task %d: mask in the verbose line", t);
		cr_assert_not_null(strstr(line, "not set (dry-run)"));
		free(line);
		free(mask);
	}
	/* the last core's mask is as long as the node: 0x and pus/4 digits */
	{
		char *last = expected_mask(pus - 2, pus - 1);
		cr_expect_eq(strlen(last), 2 + (size_t)pus / 4);
		free(last);
	}
	tmatch_place_node_destroy(r);
	tmatch_profile_destroy(p);
	unlink(xml);
	free(ranks);
	free(used);
}

Test(bigcpu, every_core_of_1024_pus)
{
	every_core("pack:2 core:256 pu:2", 1024);
}

Test(bigcpu, every_core_of_4096_pus)
{
	every_core("pack:4 core:512 pu:2", 4096);
}

/* Four tasks of 1024 CPUs each (srun -c 1024) on 4096 PUs: OpenMP places too. */
Test(bigcpu, tasks_of_1024_cpus)
{
	char xml[64], spec[96];
	int ranks[4] = {0, 1, 2, 3};
	tmatch_profile_t *p = ring(4);
	tmatch_place_node_in_t in;
	tmatch_place_node_t *r = NULL;
	tmatch_config_t cfg;
	tmatch_error_t err;
	hwloc_bitmap_t all = hwloc_bitmap_alloc();

	write_xml("pack:4 core:512 pu:2", xml, sizeof(xml));
	snprintf(spec, sizeof(spec), "xml:%s", xml);
	tmatch_config_init(&cfg);
	cfg.dry_run = 1;
	memset(&in, 0, sizeof(in));
	in.cfg = &cfg;
	in.profile = p;
	in.user_profile = 1;
	in.cpus_per_task = 1024;
	in.ranks = ranks;
	in.nlocal = 4;
	in.ntasks_total = 4;
	in.topology = spec;
	cr_assert_eq(tmatch_place_node(&in, &r, NULL, &err), 0, "%s", err.msg);
	for (int t = 0; t < 4; t++) {
		const tmatch_place_task_t *task = &r->task[t];
		int lo = hwloc_bitmap_first(task->cpuset), hi = hwloc_bitmap_last(task->cpuset);
		char want[32], *mask = expected_mask(lo, hi);
		tmatch_place_env_t *env = NULL;
		const char *places;
		int n;

		cr_assert_eq(hwloc_bitmap_weight(task->cpuset), 1024, "task %d", t);
		cr_assert_eq(hi - lo, 1023, "task %d: one package, contiguous", t);
		cr_assert_eq(lo % 1024, 0);
		cr_assert(!hwloc_bitmap_intersects(all, task->cpuset));
		hwloc_bitmap_or(all, all, task->cpuset);
		snprintf(want, sizeof(want), "%d-%d", lo, hi);
		cr_assert_str_eq(list_of(task->cpuset), want);
		n = tmatch_place_task_env(r, &cfg, t, &env);
		cr_assert_str_eq(env_value(env, n, "TREEMATCH_CPU_MASK"), mask);
		cr_assert_str_eq(env_value(env, n, "OMP_NUM_THREADS"), "1024");
		places = env_value(env, n, "OMP_PLACES");
		cr_assert_not_null(places);
		{
			/* 1024 places "{lo},{lo+1},...,{hi}" */
			int count = 0, next = lo;
			for (const char *q = places; *q; q++) {
				if (*q == '{') {
					cr_assert_eq(atoi(q + 1), next, "place %d", count);
					next++;
					count++;
				}
			}
			cr_assert_eq(count, 1024);
		}
		tmatch_place_env_free(env, n);
		free(mask);
	}
	cr_assert_eq(hwloc_bitmap_weight(all), 4096);
	hwloc_bitmap_free(all);
	tmatch_place_node_destroy(r);
	tmatch_profile_destroy(p);
	unlink(xml);
}

/*
 * A real bind: the 4096-PU XML as the plugin's topology_xml (this_system when
 * not in dry run), the step's cores restricted to the core holding a CPU
 * this process may use, two tasks on its two hardware threads; the task on
 * that CPU is bound in a child through a 4096-bit set and reads it back.
 */
Test(bigcpu, real_bind_through_a_4096_pu_topology)
{
	hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	tmatch_affinity_tree_t *tree = NULL;
	tmatch_place_node_in_t in;
	tmatch_place_node_t *r = NULL;
	tmatch_profile_t *p = ring(2);
	tmatch_config_t cfg;
	tmatch_error_t err;
	char xml[64], cores[16], got[64] = "";
	int ranks[2] = {0, 1}, cpu, task = -1, fds[2], status;
	pid_t pid;

	cr_assert_eq(tmatch_affinity_get_cpuset(0, mine, &err), 0, "%s", err.msg);
	cpu = hwloc_bitmap_first(mine);
	cr_assert_geq(cpu, 0);
	cr_assert_lt(cpu, 4096, "this machine's CPU %d is beyond the synthetic node", cpu);
	snprintf(cores, sizeof(cores), "%d", cpu / 2);
	write_xml("pack:4 core:512 pu:2", xml, sizeof(xml));
	tmatch_config_init(&cfg);
	snprintf(cfg.topology_xml, sizeof(cfg.topology_xml), "%s", xml);
	memset(&in, 0, sizeof(in));
	in.cfg = &cfg;
	in.profile = p;
	in.user_profile = 1;
	in.step_cores = cores;
	in.ranks = ranks;
	in.nlocal = 2;
	in.ntasks_total = 2;
	cr_assert_eq(tmatch_place_node(&in, &r, &tree, &err), 0, "%s", err.msg);
	cr_assert_not_null(tree);
	for (int t = 0; t < 2; t++) {
		cr_assert_eq(hwloc_bitmap_weight(r->task[t].cpuset), 1, "one thread each");
		if (hwloc_bitmap_isset(r->task[t].cpuset, (unsigned)cpu))
			task = t;
	}
	cr_assert_geq(task, 0, "a task on CPU %d", cpu);
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		const char *list = "bind failed";
		close(fds[0]);
		if (tmatch_affinity_bind_cpuset(tree, 0, 0, r->task[task].cpuset, NULL) == 0)
			list = binding_of(0, 0);
		(void)!write(fds[1], list, strlen(list) + 1);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_gt(read(fds[0], got, sizeof(got) - 1), 0);
	close(fds[0]);
	waitpid(pid, &status, 0);
	cr_expect_eq(atoi(got), cpu, "bound to '%s', expected %d", got, cpu);
	cr_expect_str_eq(got, list_of(r->task[task].cpuset));
	tmatch_affinity_tree_destroy(tree);
	tmatch_place_node_destroy(r);
	tmatch_profile_destroy(p);
	hwloc_bitmap_free(mine);
	unlink(xml);
}
