/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_readers.c - libFuzzer harness for the text readers other than the
 * profile loader: the first byte picks Matrix Market or TreeMatch .mat
 * (tmatch_matrix_read, through an in-memory file: the reader takes a path), a
 * topology.conf text (tmatch_conf_topology_parse) or a Slurm hostlist
 * (tmatch_affinity_hostlist_count, then expand when it is small). A reader
 * either accepts or says why; an accepted matrix has the order it claims.
 */
#include "affinity/affinity.h"
#include "conf/topology.h"
#include "tests/fuzz/fuzz_input.h"
#include "treematch/treematch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_entry(void *arg, const tmatch_matrix_entry_t *e, tmatch_error_t *err)
{
	(void)e;
	(void)err;
	(*(long *)arg)++;
	return 0;
}

/* The reader takes a path: the input goes into fuzz_file. */
static void matrix(const uint8_t *data, size_t size, int format)
{
	const char *path = fuzz_file(data, size);
	tmatch_error_t err;
	long entries = 0;
	int order = 0, sym = 0;

	tmatch_error_clear(&err);
	if (tmatch_matrix_read(path, format, count_entry, &entries, &order, &sym, &err) == 0) {
		if (order < 0 || (unsigned long long)order > size + (1ULL << 20))
			abort();
	} else if (!err.msg[0]) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tmatch_error_t err;
	char *text = fuzz_text(data, size, 65536);

	if (!text)
		return 0;
	tmatch_error_clear(&err);
	switch (data[0] & 3) {
	case 0:
		matrix(data + 1, size - 1, TMATCH_MATRIX_MTX);
		break;
	case 1:
		matrix(data + 1, size - 1, TMATCH_MATRIX_MAT);
		break;
	case 2: {
		tmatch_affinity_conf_t *c = tmatch_conf_topology_parse(text, "fuzz", &err);

		if (!c && !err.msg[0])
			abort();
		tmatch_affinity_conf_destroy(c);
		break;
	}
	default: {
		long n = tmatch_affinity_hostlist_count(text, 4096, &err);

		if (n >= 0 && n <= 4096) {
			int count = 0;
			char **names = tmatch_affinity_hostlist_expand(text, &count, &err);

			if (names && count != n)
				abort();
			tmatch_affinity_hostlist_free(names);
		}
		break;
	}
	}
	free(text);
	return 0;
}
