/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_plan.c - libFuzzer harness for the compiled step plan's reader
 * (tmatch_place_plan_read_slice, placement/plan.c), which each node's helper
 * runs on a file the user wrote. The first byte picks the node looked up
 * (n1..n8), the rest is the file. An accepted slice must be what the reader
 * promises: its node's name, ranks ascending below the step's task count,
 * leaves below the tree cap, a matrix of its ranks, a position of at most
 * the levels a tree may have.
 */
#include "placement/plan.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tmatch_place_slice_t *s;
	tmatch_error_t err;
	char node[8];
	const char *path;
	FILE *f;

	if (size < 1 || size > (1 << 20))
		return 0;
	snprintf(node, sizeof(node), "n%d", 1 + data[0] % 8);
	path = fuzz_file(data + 1, size - 1);
	f = fopen(path, "r");
	if (!f)
		abort();
	tmatch_error_clear(&err);
	s = tmatch_place_plan_read_slice(fileno(f), path, node, &err);
	fclose(f);
	if (!s) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	if (strcmp(s->node, node) != 0 || s->nranks < 1 || s->nranks > 65536 || !s->comm ||
	    tmatch_comm_order(s->comm) != s->nranks || s->prefix.nlevels < 0 ||
	    s->prefix.nlevels > TMATCH_AFFINITY_MAX_LEVELS)
		abort();
	for (int i = 0; i < s->nranks; i++)
		if (s->rank[i] < 0 || (uint32_t)s->rank[i] >= s->bind.ntasks ||
		    (i && s->rank[i] <= s->rank[i - 1]) || s->leaf[i] < 0 ||
		    s->leaf[i] >= TMATCH_TOPO_MAX_LEAVES)
			abort();
	tmatch_place_slice_destroy(s);
	return 0;
}
