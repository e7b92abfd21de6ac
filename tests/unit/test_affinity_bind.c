/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_affinity_bind.c - binding through hwloc and reading it back. Only
 * forked children are ever bound; the test process keeps its binding.
 */
#include "affinity/affinity.h"
#include "affinity/affinity_private.h"
#include "tests/unit/cpuset_text.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIX TMATCH_SRCDIR "/tests/fixtures/affinity/"

static tmatch_affinity_tree_t *live(void)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t;
	tmatch_affinity_opts_init(&o);
	o.use_current_binding = 1;
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s", err.msg);
	return t;
}

static int last_real_leaf(const tmatch_affinity_tree_t *t)
{
	int leaf = tmatch_topo_nb_leaves(tmatch_affinity_tree_topo(t)) - 1;
	while (leaf >= 0 && !tmatch_affinity_leaf_is_real(t, leaf))
		leaf--;
	cr_assert_geq(leaf, 0);
	return leaf;
}

/* The parent binds a waiting child by pid and reads it back. */
Test(bind, child_by_pid)
{
	tmatch_affinity_tree_t *t = live();
	const char *before, *after, *mask, *want, *wantmask;
	tmatch_error_t err;
	int leaf = last_real_leaf(t), fds[2], status;
	pid_t pid;
	cr_assert_not_null(before = binding_of(0, 0));
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char c;
		close(fds[1]);
		(void)!read(fds[0], &c, 1); /* wait for the parent */
		_exit(0);
	}
	close(fds[0]);
	cr_assert_eq(tmatch_affinity_bind_leaf(t, leaf, pid, &err), 0, "%s", err.msg);
	cr_assert_not_null(after = binding_of(pid, 0));
	cr_assert_not_null(mask = binding_of(pid, 1));
	want = list_of(tmatch_affinity_leaf_cpuset(t, leaf));
	wantmask = mask_of(tmatch_affinity_leaf_cpuset(t, leaf));
	cr_assert_str_eq(after, want);
	cr_assert_str_eq(mask, wantmask);
	(void)!write(fds[1], "x", 1);
	close(fds[1]);
	waitpid(pid, &status, 0);
	/* ours did not change */
	cr_assert_not_null(after = binding_of(0, 0));
	cr_assert_str_eq(after, before);
	tmatch_affinity_tree_destroy(t);
}

/* A child binds itself (pid 0, as the plugin does in task_init) and reports. */
Test(bind, child_binds_itself)
{
	tmatch_affinity_tree_t *t = live();
	const char *want;
	char got[256] = "";
	int leaf = last_real_leaf(t), fds[2], status;
	pid_t pid;
	want = list_of(tmatch_affinity_leaf_cpuset(t, leaf));
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		const char *list = "bind failed";
		close(fds[0]);
		if (tmatch_affinity_bind_cpuset(t, 0, 0, set_of(want), NULL) == 0)
			list = binding_of(0, 0);
		(void)!write(fds[1], list, strlen(list) + 1);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_gt(read(fds[0], got, sizeof(got) - 1), 0);
	close(fds[0]);
	waitpid(pid, &status, 0);
	cr_assert_str_eq(got, want);
	tmatch_affinity_tree_destroy(t);
}

Test(bind, refused_outside_or_not_this_machine)
{
	tmatch_affinity_tree_t *t = live();
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	/* outside the allowed set: nothing is bound (the pid would not even exist) */
	errno = 0;
	cr_assert_eq(tmatch_affinity_bind_cpuset(t, 0, 999999, set_of("100000"), &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "outside the allowed set"), "%s", err.msg);
	cr_assert_eq(tmatch_affinity_bind_cpuset(t, 0, 999999, NULL, &err), -1);
	cr_assert_eq(errno, EINVAL);
	{
		hwloc_bitmap_t empty = hwloc_bitmap_alloc();
		errno = 0;
		cr_assert_eq(tmatch_affinity_bind_cpuset(t, 0, 999999, empty, &err), -1);
		cr_assert_eq(errno, EINVAL);
		cr_assert(strstr(err.msg, "empty CPU set"), "%s", err.msg);
		hwloc_bitmap_free(empty);
	}
	cr_assert_eq(tmatch_affinity_bind_cpuset(t, 4, 0, set_of("0"), &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_affinity_bind_leaf(t, -1, 0, &err), -1);
	cr_assert_eq(errno, EINVAL);
	tmatch_affinity_tree_destroy(t);

	/* an XML topology is not this machine unless said so */
	tmatch_affinity_opts_init(&o);
	o.source = TMATCH_AFFINITY_SRC_XML;
	o.input = FIX "intel-1s-14c.xml";
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s", err.msg);
	errno = 0;
	cr_assert_eq(tmatch_affinity_bind_leaf(t, 0, 999999, &err), -1);
	cr_assert_eq(errno, ENOSYS);
	tmatch_affinity_tree_destroy(t);
}

Test(bind, read_back_errors)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	tmatch_error_t err;
	pid_t pid = fork();
	int status;
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0); /* reaped: the pid no longer exists */
	hwloc_bitmap_set(set, 3);
	errno = 0;
	cr_assert_eq(tmatch_affinity_get_cpuset(pid, set, &err), -1);
	cr_assert_eq(errno, ESRCH);
	cr_assert_str_eq(list_of(set), "3", "output untouched on failure");
	cr_assert_eq(tmatch_affinity_get_cpuset(0, NULL, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_affinity_get_cpuset(0, set, &err), 0);
	cr_assert_eq(strncmp(mask_of(set), "0x", 2), 0);
	cr_assert(!hwloc_bitmap_iszero(set));
	hwloc_bitmap_free(set);
}

/* The plugin's path: the live node restricted to Slurm's allocated cores. */
Test(bind, live_alloc_cores)
{
	tmatch_affinity_opts_t o;
	tmatch_error_t err;
	tmatch_affinity_tree_t *t, *full;
	char got[256];
	hwloc_bitmap_t want = hwloc_bitmap_alloc();
	int last;
	tmatch_affinity_opts_init(&o);
	full = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(full, "%s", err.msg);
	/* an allowed core, by Slurm's abstract index (= hwloc core logical index) */
	{
		hwloc_topology_t topo = full->nodes[0].topo;
		int pu = hwloc_bitmap_last(full->nodes[0].allowed);
		hwloc_obj_t obj = hwloc_get_pu_obj_by_os_index(topo, (unsigned)pu);
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, obj);
		last = core ? (int)core->logical_index : (int)obj->logical_index;
	}
	snprintf(got, sizeof(got), "%d", last);
	cr_assert_eq(tmatch_affinity_cores_to_cpuset(full, 0, got, want, &err), 0, "%s", err.msg);
	cr_assert(!hwloc_bitmap_iszero(want));
	o.alloc_cores = got;
	o.smt = TMATCH_AFFINITY_SMT_CORE;
	t = tmatch_affinity_node_load(&o, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(tmatch_affinity_tree_nb_slots(t), 1);
	/* the allowed CPUs are that core's (those of them the process may use) */
	cr_assert(hwloc_bitmap_isincluded(tmatch_affinity_tree_allowed_cpuset(t, 0), want),
	          "%s not in %s", list_of(tmatch_affinity_tree_allowed_cpuset(t, 0)),
	          list_of(want));
	hwloc_bitmap_free(want);
	tmatch_affinity_tree_destroy(t);
	tmatch_affinity_tree_destroy(full);
}
