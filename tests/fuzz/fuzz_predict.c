/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_predict.c - libFuzzer harness for the readers of `treematch
 * predict` and of the prediction the plugin reads (placement/predict.c):
 * the first byte picks the prediction file (read for "auto"), the machine
 * description (against a named node tree) or a time-independent trace:
 * the rest split at each 0x01 byte into the index and up to four rank
 * files r0..r3 beside it. A reader either accepts or says why; an
 * accepted prediction has finite times, an accepted trace its ranks.
 */
#include "placement/inputs.h"
#include "placement/predict.h"
#include "tests/fuzz/fuzz_input.h"
#include "treematch/treematch.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RANK_FILES 4

static void prediction(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	double mapped = 0, packed = 0;
	tmatch_error_t err;
	int rc;

	tmatch_error_clear(&err);
	rc = tmatch_place_prediction_read(path, "auto", &mapped, &packed, &err);
	if (rc < 0 && !err.msg[0])
		abort();
	if (rc == 0 && !(isfinite(mapped) && mapped >= 0 && isfinite(packed) && packed >= 0))
		abort();
	if (rc == 1 && mapped >= 0 && packed >= 0)
		abort();
}

static void machine(const uint8_t *data, size_t size)
{
	static tmatch_topo_t *topo;
	const char *path = fuzz_file(data, size);
	tmatch_place_machine_t m;
	tmatch_error_t err;

	if (!topo && !(topo = tmatch_place_topo_load(
	                   "cluster:none,n[1-2],synthetic:pack:2 core:2 pu:1", NULL)))
		abort();
	tmatch_error_clear(&err);
	tmatch_place_machine_init(&m, topo);
	if (tmatch_place_machine_load(&m, topo, path, &err) < 0 && !err.msg[0])
		abort();
	for (int l = 0; l < TMATCH_PLACE_MACHINE_LEVELS; l++)
		if (!memchr(m.bw[l], 0, sizeof(m.bw[l])) || !memchr(m.lat[l], 0, sizeof(m.lat[l])))
			abort();
}

/* Write len bytes to dir/name, or remove it when len is -1. */
static void put(const char *dir, const char *name, const uint8_t *p, long len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (len < 0) {
		unlink(path);
		return;
	}
	if (!(f = fopen(path, "w")) || fwrite(p, 1, (size_t)len, f) != (size_t)len || fclose(f))
		abort();
}

static char dir[] = "/tmp/fuzz-predict-XXXXXX";

/* At exit: the trace's files and their directory go (make check replays
   this harness: it must leave nothing behind). */
static void remove_dir(void)
{
	put(dir, "idx", NULL, -1);
	for (int k = 0; k < RANK_FILES; k++) {
		char name[8];

		snprintf(name, sizeof(name), "r%d", k);
		put(dir, name, NULL, -1);
	}
	rmdir(dir);
}

static void trace(const uint8_t *data, size_t size)
{
	static int made;
	const uint8_t *part = data, *end = data + size;
	char index[128];
	tmatch_place_trace_t *t;
	tmatch_error_t err;

	if (!made && (!(made = mkdtemp(dir) != NULL) || atexit(remove_dir) != 0))
		abort();
	for (int k = -1; k < RANK_FILES; k++) {
		const uint8_t *cut = part ? memchr(part, 1, (size_t)(end - part)) : NULL;
		char name[8];

		snprintf(name, sizeof(name), k < 0 ? "idx" : "r%d", k);
		put(dir, name, part, part ? (cut ? cut : end) - part : -1);
		part = cut ? cut + 1 : NULL;
	}
	snprintf(index, sizeof(index), "%s/idx", dir);
	tmatch_error_clear(&err);
	t = tmatch_place_trace_load(index, &err);
	if (!t && !err.msg[0])
		abort();
	if (t && (t->nranks < 1 || tmatch_comm_order(t->comm) != t->nranks))
		abort();
	tmatch_place_trace_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		prediction(data + 1, size - 1);
		break;
	case 1:
		machine(data + 1, size - 1);
		break;
	default:
		trace(data + 1, size - 1);
		break;
	}
	return 0;
}
