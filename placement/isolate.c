/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate.c - a mapping in a sandboxed child (tmatch__place_isolate_map in
 * placement_private.h; the child's limits are placement/sandbox.c's).
 *
 * Why: within the limits a mapping may take ~20 s CPU and ~300 MB, and the
 * bisection mapper calls METIS, which touches process-global state
 * (srand/random, swaps SIGABRT/SIGTERM handlers during each call). In a
 * child none of this reaches the caller.
 *
 * Wire format on the pipe, child to parent, native byte order (same host):
 *   struct frame_head { magic, status, len }  then len payload bytes:
 *   status 0: len = n * sizeof(int), the leaf of each rank;
 *   status errno (> 0): len = sizeof(tmatch_error_t), the mapper's message.
 * The parent trusts none of it: magic, sizes, NUL-termination of the
 * message, n and every leaf (tmatch_map_validate) are checked.
 */
#include "placement/placement_private.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAME_MAGIC 0x544d4931u /* "TMI1" */

struct frame_head {
	uint32_t magic;
	int32_t status; /* 0 = leaves follow, else errno and a tmatch_error_t */
	uint32_t len;   /* payload bytes */
};

struct job {
	const tmatch_comm_t *comm;
	const tmatch_topo_t *topo;
	const tmatch_map_opts_t *mopts;
	tmatch__place_compute_fn compute;
	int n;
};

/* In the child: map, send the leaves or the error. */
static void child_map(void *arg, int fd)
{
	const struct job *j = arg;
	struct frame_head h;
	tmatch_error_t e;
	int *leaf_of = malloc((size_t)j->n * sizeof(*leaf_of));

	tmatch_error_clear(&e);
	memset(&h, 0, sizeof(h));
	h.magic = FRAME_MAGIC;
	if (!leaf_of) {
		h.status = ENOMEM;
		snprintf(e.msg, sizeof(e.msg), "out of memory");
	} else if (j->compute(j->comm, j->topo, j->mopts, leaf_of, &e) < 0) {
		h.status = errno > 0 ? errno : EIO;
		if (!e.msg[0])
			snprintf(e.msg, sizeof(e.msg), "mapping failed: %s", strerror(h.status));
	}
	h.len = h.status == 0 ? (uint32_t)((size_t)j->n * sizeof(*leaf_of)) : (uint32_t)sizeof(e);
	if (tmatch__write_all(fd, &h, sizeof(h)) < 0 ||
	    tmatch__write_all(fd, h.status == 0 ? (const void *)leaf_of : (const void *)&e, h.len) <
	        0)
		_exit(124);
}

int tmatch__place_isolate_map(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                              const tmatch_map_opts_t *mopts, double max_time, size_t max_memory,
                              tmatch__place_compute_fn compute, int *leaf_of, tmatch_error_t *err)
{
	tmatch__sandbox_t sb;
	struct frame_head h;
	struct job j;
	size_t got = 0, want;
	char *buf = NULL, mem[32];
	int rc = -1, saved;

	if (!comm || !topo || !mopts || !leaf_of || !(max_time >= 0) || isinf(max_time)) {
		tmatch_error_set(err, 0, NULL, 0, 0, "tmatch__place_isolate_map: invalid argument");
		errno = EINVAL;
		return -1;
	}
	j.comm = comm;
	j.topo = topo;
	j.mopts = mopts;
	j.compute = compute ? compute : tmatch_map_compute;
	j.n = tmatch_comm_order(comm);
	if (j.n < 1) {
		tmatch_error_set(err, 0, NULL, 0, 0,
		                 "tmatch__place_isolate_map: empty communication matrix");
		errno = EINVAL;
		return -1;
	}
	tmatch__format_size(max_memory, mem, sizeof(mem));
	memset(&sb, 0, sizeof(sb));
	sb.filter = 1;
	sb.max_time = max_time;
	sb.max_memory = max_memory;
	/* The frame is at most a header and the larger of the two payloads. */
	want = (size_t)j.n * sizeof(int);
	sb.max_result = sizeof(h) + (want > sizeof(tmatch_error_t) ? want : sizeof(tmatch_error_t));
	buf = malloc(sb.max_result);
	if (!buf) {
		tmatch_error_set(err, 0, NULL, 0, 0, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	if (tmatch__sandbox_run(&sb, child_map, &j, buf, &got, err) < 0)
		goto out;
	if (got < sizeof(h)) {
		tmatch_error_set(err, EPROTO, NULL, 0, 0, "mapping process ended without a result");
		goto out;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != FRAME_MAGIC || h.len != got - sizeof(h) ||
	    (h.status == 0 && h.len != want) ||
	    (h.status != 0 && (h.len != sizeof(tmatch_error_t) || h.status < 0))) {
		tmatch_error_set(err, EPROTO, NULL, 0, 0,
		                 "mapping process sent a malformed result");
		goto out;
	}
	if (h.status != 0) {
		tmatch_error_t e;

		memcpy(&e, buf + sizeof(h), sizeof(e));
		e.file[sizeof(e.file) - 1] = '\0';
		e.msg[sizeof(e.msg) - 1] = '\0';
		if (h.status == ENOMEM) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0,
			                 "mapping ran out of memory (max_map_memory=%s)", mem);
			goto out;
		}
		if (err) {
			*err = e;
			if (!err->msg[0])
				snprintf(err->msg, sizeof(err->msg), "mapping failed");
		}
		errno = h.status < 4096 ? h.status : EIO;
		goto out;
	}
	/* Leaves: in range, allowed, distinct. */
	if (tmatch_map_validate(topo, (const int *)(const void *)(buf + sizeof(h)), j.n, err) < 0) {
		saved = errno;
		if (err) {
			char m[sizeof(err->msg)];

			snprintf(m, sizeof(m), "mapping process sent an invalid placement: %.400s",
			         err->msg);
			memcpy(err->msg, m, sizeof(m));
		}
		errno = saved ? saved : EPROTO;
		goto out;
	}
	memcpy(leaf_of, buf + sizeof(h), want);
	rc = 0;
out:
	saved = errno;
	free(buf);
	errno = saved;
	return rc;
}
