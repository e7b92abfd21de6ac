/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement_private.h - internals shared by the files of placement/. Tests
 * may include it; nothing outside placement/ and tests/ does.
 */
#ifndef TMATCH_PLACEMENT_PRIVATE_H
#define TMATCH_PLACEMENT_PRIVATE_H

#include "placement/placement.h"
#include "treematch/treematch.h"
#include "treematch/binfmt.h"

#include <stddef.h>
#include <sys/types.h>

/*
 * isolate.c: tmatch_map_compute(comm, topo, mopts) (or `compute`, when not
 * NULL: the tests' stand-in for a mapper that hangs or crashes) run in a
 * forked child, which is how the plugin maps on a node (slurmstepd must survive
 * whatever the mapping does). The child gets RLIMIT_AS = its current address
 * space + max_memory (0 = no memory limit), RLIMIT_CPU = ceil(max_time) + 1 s,
 * default signal dispositions, no stdio; the parent SIGKILLs it when
 * max_time seconds of wall time pass (0 = no time limit), always reaps it, and checks
 * every byte it sends back (length, then tmatch_map_validate).
 * On success leaf_of[tmatch_comm_order(comm)] is filled and 0 returned.
 * On failure -1, leaf_of untouched, err holds one line:
 *   ETIME   "mapping exceeded max_map_time=2 s, killed" (or its CPU limit)
 *   ENOMEM  "mapping ran out of memory (max_map_memory=1G)"
 *   EIO     "mapping process died with signal 11 (Segmentation fault)"
 *   EPROTO  the child sent nothing or something malformed
 *   else    the mapper's own error (errno and message from the child).
 */
typedef int (*tmatch__place_compute_fn)(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                                        const tmatch_map_opts_t *opts, int *leaf_of_rank,
                                        tmatch_error_t *err);
int tmatch__place_isolate_map(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                              const tmatch_map_opts_t *mopts, double max_time, size_t max_memory,
                              tmatch__place_compute_fn compute, int *leaf_of, tmatch_error_t *err);

/*
 * sandbox.c: run body(arg, fd) in a forked child that writes its result on
 * fd and cannot hurt the caller (placement/sandbox.c says what the child
 * gives up, in which order). The caller gets at most max_result bytes in
 * buf (*got of them), unchecked. 0 when the child exited normally (check
 * the bytes), else -1 and one line in err:
 *   ETIME   "mapping exceeded max_map_time=2 s, killed" (or its CPU limit)
 *   ENOMEM  "mapping ran out of memory (max_map_memory=1G)"
 *   EIO     "mapping process died with signal 11 (Segmentation fault)"
 *   EPERM   the child could not give up what it must, or its filter killed it
 *   EPROTO  too many bytes, or an exit status without a result
 */
typedef struct tmatch__sandbox {
	int become;          /* 1: become uid/gid/groups for good (checked) */
	uid_t uid;           /* the job's user */
	gid_t gid;           /* its primary group */
	const gid_t *groups; /* its supplementary groups */
	int ngroups;
	int filter;        /* 1: no file writes, PR_SET_NO_NEW_PRIVS, seccomp allow-list */
	double max_time;   /* wall seconds, 0 = none (then CPU unlimited too) */
	size_t max_memory; /* address space the child may add, 0 = none */
	size_t max_result; /* bytes */
	/* Optional: called once the first first_size bytes are in (buf holds
	   them); returns a wall-time limit counted from now that may only bring
	   the deadline closer (0 = keep it), or < 0 to kill the child (EPROTO). */
	size_t first_size;
	double (*first)(void *first_arg, const char *buf, size_t len);
	void *first_arg;
	/* Names the child in messages ("XML reader"); NULL = "mapping", with
	   the limits named by the admin's keys (max_map_time=...). */
	const char *what;
} tmatch__sandbox_t;
typedef void (*tmatch__sandbox_fn)(void *arg, int fd);
int tmatch__sandbox_run(const tmatch__sandbox_t *sb, tmatch__sandbox_fn body, void *arg, char *buf,
                        size_t *got, tmatch_error_t *err);

/* Bytes of address space the calling process maps now (0 if unknown). */
size_t tmatch__address_space_now(void);

/* "1G", "64M", "300K" or bytes, as an admin writes max_map_memory. */
void tmatch__format_size(size_t bytes, char *buf, size_t len);

/* CLOCK_MONOTONIC in seconds. */
double tmatch__place_now(void);

/*
 * helper.c: the wire format of the plugin's helper (see helper.c), and the
 * root side's reading of it: `buf` (got bytes) as the helper sent it;
 * run_error (and run_errno), when not NULL, is why the sandbox ended it (the hello, if
 * any, still names the node and the user's policy). 0 or -1 as
 * tmatch_place_helper_run. Tests feed it forged bytes.
 */
#include <stdint.h>
#define TMATCH__HELPER_HELLO_MAGIC  0x31484d54u /* "TMH1" */
#define TMATCH__HELPER_HEAD_MAGIC   0x31524d54u /* "TMR1" */
#define TMATCH__HELPER_WIRE_VERSION 1u
#define TMATCH__HELPER_MAX_LOCAL    65536 /* tasks on one node the root side will read back */

enum {
	TMATCH__HELPER_OUT_PLACED = 0,
	TMATCH__HELPER_OUT_SKIPPED = 1,
	TMATCH__HELPER_OUT_OFF = 2,
	TMATCH__HELPER_OUT_FAILED = 3,
	TMATCH__HELPER_OUT_LEARN = 4, /* learn mode, nothing stored yet: record this run */
};

struct tmatch__helper_hello {
	uint32_t magic, version;
	int32_t failure, dry_run, verbose, mpi_pin, user_profile;
	double max_time;
	char node_name[64];
};

struct tmatch__helper_head {
	uint32_t magic, version;
	int32_t status, err_no, why_level, ntasks;
	double cost, cost_packed, map_seconds;
	char mapper[64];
	char msg[512]; /* FAILED: the line; SKIPPED: why */
};

struct tmatch__helper_task {
	int32_t rank, leaf;
	tmatch_affinity_pos_t pos;
};

int tmatch__helper_take(const tmatch_place_helper_in_t *in, const char *buf, size_t got,
                        const tmatch_error_t *run_error, int run_errno,
                        tmatch_place_helper_out_t *out, tmatch_error_t *err);

#endif /* TMATCH_PLACEMENT_PRIVATE_H */
