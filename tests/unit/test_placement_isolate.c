/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_isolate.c - the node's mapping in a forked child with hard
 * limits (placement/isolate.c), without Slurm: the result equals the in-process
 * one; a mapper over the time limit is killed; a memory limit too small,
 * a crash, a wrong or missing answer are each reported in one line; the
 * caller's output is untouched on failure; no child is ever left behind.
 *
 * The child's mapper is replaced here by child_compute(), which behaves as
 * `mode` says (the `compute` argument of tmatch__place_isolate_map).
 */
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#include "treematch/treematch.h"

enum mode { REAL, HANG, CRASH, CPU_SIGNAL, HOG, DUPLICATES, SILENT_EXIT, MAPPER_ERROR };
static enum mode mode = REAL;

/* Under AddressSanitizer (make check SANITIZE=1) a failed allocation
   returns NULL, as with the plain allocator, instead of ending the child. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

#include "placement/placement_private.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static int child_compute(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                         const tmatch_map_opts_t *opts, int *leaf_of, tmatch_error_t *err)
{
	switch (mode) {
	case REAL:
		break;
	case HANG:
		for (;;)
			sleep(1);
	case CRASH:
		raise(SIGSEGV);
		break;
	case CPU_SIGNAL:
		raise(SIGXCPU);
		break;
	case HOG: {
		/* 4 GiB at once: over any limit set by the tests below. */
		void *p = mmap(NULL, (size_t)4 << 30, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			snprintf(err->msg, sizeof(err->msg), "out of memory");
			errno = ENOMEM;
			return -1;
		}
		_exit(99); /* the limit did not hold: the test sees no result */
	}
	case DUPLICATES:
		for (int i = 0; i < tmatch_comm_order(comm); i++)
			leaf_of[i] = 0;
		return 0;
	case SILENT_EXIT:
		_exit(3);
	case MAPPER_ERROR:
		snprintf(err->file, sizeof(err->file), "mapper.c");
		err->line = 7;
		snprintf(err->msg, sizeof(err->msg), "no good placement");
		errno = EDOM;
		return -1;
	}
	return tmatch_map_compute(comm, topo, opts, leaf_of, err);
}

/* n ranks on a ring, heavy pairs (2i, 2i+1). */
static tmatch_comm_t *ring(int n)
{
	int *src = calloc((size_t)n, sizeof(int)), *dst = calloc((size_t)n, sizeof(int));
	double *w = calloc((size_t)n, sizeof(double));
	tmatch_error_t err;
	tmatch_comm_t *c;

	cr_assert(src && dst && w);
	for (int i = 0; i < n; i++) {
		src[i] = i;
		dst[i] = (i + 1) % n;
		w[i] = i % 2 == 0 ? 1000.0 : 1.0 + i % 7;
	}
	c = tmatch_comm_from_edges(n, (size_t)n, src, dst, w, &err);
	cr_assert_not_null(c, "%s", err.msg);
	free(src);
	free(dst);
	free(w);
	return c;
}

static tmatch_topo_t *tree(const char *tleaf)
{
	tmatch_error_t err;
	tmatch_topo_t *t = tmatch_topo_from_tleaf(tleaf, &err);

	cr_assert_not_null(t, "%s", err.msg);
	return t;
}

/* Every child of this process has been reaped. */
static void expect_no_child(void)
{
	errno = 0;
	cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1, "a child is left behind");
	cr_expect_eq(errno, ECHILD);
}

/* A failing call leaves leaf_of as it was. */
static void expect_untouched(const int *leaf_of, int n)
{
	for (int i = 0; i < n; i++)
		cr_expect_eq(leaf_of[i], -7, "leaf_of[%d] changed on failure", i);
}

struct outcome {
	int rc, err_no;
	tmatch_error_t err;
};

static struct outcome run(enum mode m, const tmatch_comm_t *c, const tmatch_topo_t *t,
                          double max_time, size_t max_mem, int *leaf_of)
{
	tmatch_map_opts_t o;
	struct outcome r;

	mode = m;
	tmatch_map_opts_init(&o);
	memset(&r, 0, sizeof(r));
	for (int i = 0; i < tmatch_comm_order(c); i++)
		leaf_of[i] = -7;
	errno = 0;
	r.rc =
	    tmatch__place_isolate_map(c, t, &o, max_time, max_mem, child_compute, leaf_of, &r.err);
	r.err_no = errno;
	mode = REAL;
	return r;
}

Test(placement_isolate, same_result_as_in_process)
{
	const char *const *names = tmatch_map_mappers();
	tmatch_comm_t *c = ring(48);
	tmatch_topo_t *t = tree("tleaf 3 2 10 4 3 8 1");
	int in[48], out[48];

	for (int k = 0; names[k]; k++) {
		tmatch_map_opts_t o;
		tmatch_error_t err;
		struct outcome r;

		tmatch_map_opts_init(&o);
		o.mapper = names[k];
		cr_assert_eq(tmatch_map_compute(c, t, &o, in, &err), 0, "%s: %s", names[k],
		             err.msg);
		mode = REAL;
		errno = 0;
		r.rc = tmatch__place_isolate_map(c, t, &o, 10.0, (size_t)1 << 30, child_compute,
		                                 out, &r.err);
		cr_assert_eq(r.rc, 0, "%s: %s", names[k], r.err.msg);
		cr_expect_arr_eq(in, out, sizeof(in), "mapper %s: isolated result differs",
		                 names[k]);
		expect_no_child();
	}
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(placement_isolate, hung_mapper_is_killed_at_max_map_time)
{
	tmatch_comm_t *c = ring(8);
	tmatch_topo_t *t = tree("tleaf 2 2 2 4 1");
	int leaf_of[8];
	struct outcome r = run(HANG, c, t, 0.2, (size_t)1 << 30, leaf_of);

	cr_expect_eq(r.rc, -1);
	cr_expect_eq(r.err_no, ETIME);
	cr_expect_str_eq(r.err.msg, "mapping exceeded max_map_time=0.2 s, killed");
	expect_untouched(leaf_of, 8);
	expect_no_child();
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(placement_isolate, real_mapper_on_a_big_profile_is_killed)
{
	/* 65536 ranks cannot be mapped in 20 ms. */
	tmatch_comm_t *c = ring(65536);
	tmatch_topo_t *t = tree("tleaf 3 64 10 32 5 32 1");
	int *leaf_of = malloc(65536 * sizeof(int));
	struct outcome r;

	cr_assert_not_null(leaf_of);
	r = run(REAL, c, t, 0.02, (size_t)1 << 30, leaf_of);
	cr_expect_eq(r.rc, -1);
	cr_expect_eq(r.err_no, ETIME);
	cr_expect_not_null(strstr(r.err.msg, "exceeded max_map_time=0.02 s"), "%s", r.err.msg);
	expect_untouched(leaf_of, 65536);
	expect_no_child();
	free(leaf_of);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(placement_isolate, memory_limit_reports_out_of_memory)
{
	tmatch_comm_t *c = ring(8);
	tmatch_topo_t *t = tree("tleaf 2 2 2 4 1");
	int leaf_of[8];
	struct outcome r = run(HOG, c, t, 10.0, (size_t)64 << 20, leaf_of);

	cr_expect_eq(r.rc, -1);
	cr_expect_eq(r.err_no, ENOMEM, "%s", r.err.msg);
	cr_expect_str_eq(r.err.msg, "mapping ran out of memory (max_map_memory=64M)");
	expect_untouched(leaf_of, 8);
	expect_no_child();
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(placement_isolate, real_mapper_under_a_tiny_memory_limit)
{
	/* The real mapper with 4 KiB to spare. The child inherits the free
	   heap of this process, so a mapper that falls back to a leaner
	   strategy may still fit: then its placement must be valid. Otherwise
	   exactly the out-of-memory line. Either way no child is left and
	   this process goes on. */
	tmatch_comm_t *c = ring(16384);
	tmatch_topo_t *t = tree("tleaf 3 16 10 32 5 32 1");
	int *leaf_of = malloc(16384 * sizeof(int));
	struct outcome r;
	tmatch_error_t err;

	cr_assert_not_null(leaf_of);
	r = run(REAL, c, t, 30.0, (size_t)4 << 10, leaf_of);
	if (r.rc == 0) {
		cr_expect_eq(tmatch_map_validate(t, leaf_of, 16384, &err), 0, "%s", err.msg);
	} else {
		cr_expect_eq(r.err_no, ENOMEM, "%s", r.err.msg);
		cr_expect_str_eq(r.err.msg, "mapping ran out of memory (max_map_memory=4K)");
		expect_untouched(leaf_of, 16384);
	}
	expect_no_child();
	free(leaf_of);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(placement_isolate, crash_is_reported_with_its_signal)
{
	tmatch_comm_t *c = ring(8);
	tmatch_topo_t *t = tree("tleaf 2 2 2 4 1");
	int leaf_of[8];
	struct outcome r = run(CRASH, c, t, 10.0, (size_t)1 << 30, leaf_of);
	char want[128];

	snprintf(want, sizeof(want), "mapping process died with signal %d (%s)", SIGSEGV,
	         strsignal(SIGSEGV));
	cr_expect_eq(r.rc, -1);
	cr_expect_eq(r.err_no, EIO);
	cr_expect_str_eq(r.err.msg, want);
	expect_untouched(leaf_of, 8);
	expect_no_child();

	r = run(CPU_SIGNAL, c, t, 2.0, (size_t)1 << 30, leaf_of);
	cr_expect_eq(r.rc, -1);
	cr_expect_eq(r.err_no, ETIME);
	cr_expect_str_eq(r.err.msg, "mapping exceeded its CPU limit (max_map_time=2 s), killed");
	expect_no_child();
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(placement_isolate, child_answers_are_checked)
{
	tmatch_comm_t *c = ring(8);
	tmatch_topo_t *t = tree("tleaf 2 2 2 4 1");
	int leaf_of[8];
	struct outcome r;

	/* Duplicate leaves: refused by tmatch_map_validate in the parent. */
	r = run(DUPLICATES, c, t, 10.0, (size_t)1 << 30, leaf_of);
	cr_expect_eq(r.rc, -1);
	cr_expect_neq(r.err_no, 0);
	cr_expect_not_null(strstr(r.err.msg, "mapping process sent an invalid placement: "), "%s",
	                   r.err.msg);
	expect_untouched(leaf_of, 8);
	expect_no_child();

	/* No answer at all. */
	r = run(SILENT_EXIT, c, t, 10.0, (size_t)1 << 30, leaf_of);
	cr_expect_eq(r.rc, -1);
	cr_expect_eq(r.err_no, EPROTO);
	cr_expect_str_eq(r.err.msg, "mapping process exited with status 3 without a result");
	expect_untouched(leaf_of, 8);
	expect_no_child();

	/* The mapper's own error comes back whole. */
	r = run(MAPPER_ERROR, c, t, 10.0, (size_t)1 << 30, leaf_of);
	cr_expect_eq(r.rc, -1);
	cr_expect_eq(r.err_no, EDOM);
	cr_expect_str_eq(r.err.msg, "no good placement");
	cr_expect_str_eq(r.err.file, "mapper.c");
	cr_expect_eq(r.err.line, 7);
	expect_untouched(leaf_of, 8);
	expect_no_child();
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}

Test(placement_isolate, bad_arguments)
{
	tmatch_comm_t *c = ring(8);
	tmatch_topo_t *t = tree("tleaf 2 2 2 4 1");
	tmatch_map_opts_t o;
	tmatch_error_t err;
	int leaf_of[8];

	tmatch_map_opts_init(&o);
	errno = 0;
	cr_expect_eq(tmatch__place_isolate_map(NULL, t, &o, 1.0, 0, child_compute, leaf_of, &err),
	             -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(tmatch__place_isolate_map(c, NULL, &o, 1.0, 0, child_compute, leaf_of, &err),
	             -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(tmatch__place_isolate_map(c, t, NULL, 1.0, 0, child_compute, leaf_of, &err),
	             -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(tmatch__place_isolate_map(c, t, &o, 1.0, 0, child_compute, NULL, &err), -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(tmatch__place_isolate_map(c, t, &o, -1.0, 0, child_compute, leaf_of, NULL),
	             -1);
	cr_expect_eq(errno, EINVAL);
	/* A mapper error (too many ranks for the tree) is not a crash. */
	tmatch_topo_t *small = tree("tleaf 1 4 1");
	mode = REAL;
	errno = 0;
	cr_expect_eq(tmatch__place_isolate_map(c, small, &o, 5.0, 0, child_compute, leaf_of, &err),
	             -1);
	cr_expect_neq(errno, 0);
	cr_expect_neq(err.msg[0], '\0');
	expect_no_child();
	tmatch_topo_destroy(small);
	tmatch_comm_destroy(c);
	tmatch_topo_destroy(t);
}
