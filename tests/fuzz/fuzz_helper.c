/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_helper.c - libFuzzer harness for the one parser slurmstepd's root
 * side runs on bytes a user can influence: tmatch__helper_take, reading
 * what the plugin's helper sent back (placement/helper.c). Whatever the
 * bytes, an accepted result must hold exactly the step's tasks, their
 * global ranks, distinct CPU sets inside the step's, and printable text
 * (the root side's own lines, made from the message codes).
 *
 * The step: 8 tasks (ranks 0-7) on a synthetic 2-package, 4-core node.
 * The first byte chooses whether the sandbox is said to have killed the
 * helper (then only the hello may count), and in which chunks the bytes
 * arrive (the root side reads them as the pipe gives them).
 */
#include "placement/placement_private.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tmatch_config_t admin;
static tmatch_place_node_prep_t prep;
static int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};

static void setup(void)
{
	tmatch_place_node_in_t nin;

	tmatch_config_init(&admin);
	memset(&nin, 0, sizeof(nin));
	nin.cfg = &admin;
	nin.topology = "synthetic:pack:2 core:4 pu:1";
	nin.nlocal = 8;
	if (tmatch_place_node_prepare(&nin, &prep) < 0)
		abort();
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
	in.prep = &prep;
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
	}
	tmatch_place_node_destroy(out.plan);
	return 0;
}
