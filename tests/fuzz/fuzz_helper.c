/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_helper.c - libFuzzer harness for the one parser slurmstepd's root
 * side runs on bytes a user can influence: tmatch__helper_take, reading
 * what the plugin's helper sent back (placement/helper.c). Whatever the
 * bytes, an accepted result must hold exactly the step's tasks, their
 * global ranks, distinct CPU sets inside the step's, and printable text
 * (the root side's own lines, made from the message codes).
 *
 * The step: 8 tasks (ranks 0-7) on a synthetic 2-package, 4-core node, or
 * (bit 4 of the first byte) on a node of the same CPUs with 4 GPUs and 2
 * cards, whose GPU section must then name only the step's GPUs and the
 * node's cards. Bit 0 of the first byte says whether the sandbox is said
 * to have killed the helper (then only the hello may count), bits 1-3 in
 * which chunks the bytes arrive (the root side reads them as the pipe
 * gives them).
 */
#include "placement/placement_private.h"
#include "placement/gpu.h"
#include "placement/helper.h"
#include "placement/node.h"
#include "tests/fuzz/fuzz_gpu_node.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tmatch_config_t admin;
static tmatch_place_node_prep_t prep, gprep;
static int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
static const tmatch_place_gpu_env_t gpu_env = {.step_gpus = "0-3"};

/* The harness's own node cannot be built: said, since every input would
   otherwise abort without a word. */
static void setup_failed(const char *topology, const tmatch_place_node_prep_t *p)
{
	fprintf(stderr, "fuzz_helper: the harness's node %s: %s (errno %d)\n", topology,
	        p->tree_error[0] ? p->tree_error : "no tree", p->tree_errno);
	abort();
}

static void setup(void)
{
	tmatch_place_node_in_t nin;
	char spec[64];
	const char *path;

	tmatch_config_init(&admin);
	memset(&nin, 0, sizeof(nin));
	nin.cfg = &admin;
	nin.topology = "synthetic:pack:2 core:4 pu:1";
	nin.nlocal = 8;
	if (tmatch_place_node_prepare(&nin, &prep) < 0 || !prep.tree)
		setup_failed(nin.topology, &prep);
	path = fuzz_gpu_node_file();
	snprintf(spec, sizeof(spec), "xml:%s", path);
	nin.topology = spec;
	nin.gpu_env = &gpu_env;
	if (tmatch_place_node_prepare(&nin, &gprep) < 0 || !gprep.tree)
		setup_failed(nin.topology, &gprep);
	unlink(path);
}

static int printable(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n == cap)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t chunks[8] = {0, 1, 2, 3, 7, 64, 461, 4096};
	tmatch_place_helper_in_t in;
	tmatch_place_helper_out_t out;
	tmatch_error_t err, killed;
	hwloc_bitmap_t seen;
	int rc;

	if (!prep.tree)
		setup();
	if (size < 1)
		return 0;
	memset(&in, 0, sizeof(in));
	in.admin = &admin;
	in.node_count = 1;
	in.nlocal = 8;
	in.ntasks_total = 8;
	in.ranks = ranks;
	in.prep = (data[0] & 0x10) ? &gprep : &prep;
	in.gpu_env = (data[0] & 0x10) ? &gpu_env : NULL;
	tmatch_error_clear(&err);
	tmatch_error_clear(&killed);
	strcpy(killed.msg, "mapping exceeded max_map_time=1 s, killed");
	rc = tmatch__helper_take(&in, (const char *)data + 1, size - 1, chunks[(data[0] >> 1) & 7],
	                         (data[0] & 1) ? &killed : NULL, 62, &out, &err);
	if (!printable(out.node_name, sizeof(out.node_name)) || out.cfg.verbose < 0 ||
	    out.cfg.verbose > 9 || out.cfg.failure < admin.failure)
		abort();
	if (rc < 0) {
		if (out.plan || !err.msg[0] || !printable(err.msg, sizeof(err.msg)))
			abort();
		return 0;
	}
	if (data[0] & 1)
		abort(); /* a killed helper is never a success */
	if (!out.plan)
		return 0; /* off */
	if (out.plan->status == TMATCH_PLACE_SKIPPED) {
		if (!printable(out.plan->why, sizeof(out.plan->why)))
			abort();
	} else {
		seen = hwloc_bitmap_alloc();
		if (out.plan->status != TMATCH_PLACE_PLACED || out.plan->ntasks != 8)
			abort();
		for (int i = 0; i < 8; i++) {
			hwloc_const_bitmap_t set = out.plan->task[i].cpuset;

			if (out.plan->task[i].rank != i || !set || hwloc_bitmap_iszero(set) ||
			    !hwloc_bitmap_isincluded(set, out.plan->allowed) ||
			    hwloc_bitmap_intersects(set, seen))
				abort();
			hwloc_bitmap_or(seen, seen, set);
		}
		hwloc_bitmap_free(seen);
		if (!printable(out.plan->mapper, sizeof(out.plan->mapper)) ||
		    !printable(out.plan->note, sizeof(out.plan->note)))
			abort();
		/* GPUs: only the step's, each task's at most the stride, cards the
		   node's; only on the GPU node */
		if (out.plan->gpu_step) {
			const tmatch_place_gpu_step_t *st = out.plan->gpu_step;

			if (!(data[0] & 0x10) || !out.devices || st->ngpus < 1 ||
			    st->ngpus > out.devices->ngpus)
				abort();
			for (int i = 0; i < 8; i++) {
				const tmatch_place_task_t *t = &out.plan->task[i];

				if (t->ngpus < 1 || t->ngpus > out.plan->gpus_per_task ||
				    t->nic < -1 || t->nic >= out.devices->nnics)
					abort();
				for (int j = 0; j < t->ngpus; j++) {
					int in_step = 0;

					for (int g = 0; g < st->ngpus; g++)
						in_step |= st->gpu[g] == t->gpu[j];
					if (!in_step)
						abort();
				}
			}
		} else if (out.devices) {
			abort();
		}
	}
	tmatch_place_node_destroy(out.plan);
	tmatch_affinity_devices_destroy(out.devices);
	return 0;
}
