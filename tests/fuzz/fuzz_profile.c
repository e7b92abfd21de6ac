/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_profile.c - libFuzzer harness for the profile loader.
 *
 * Loads the input from memory with tight limits; when it loads, checks the
 * round trip (write, load again, write again: both writes byte-identical,
 * same ranks and edges) and builds the mapping core's matrix for every
 * metric the profile records. Any mismatch aborts, which the fuzzer reports.
 *
 * Built two ways: with clang -fsanitize=fuzzer (make fuzz), and with any
 * compiler together with replay.c, which feeds it the corpus and the
 * regression inputs in `make check`.
 */
#include "profile/profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *arg, int level, const char *msg)
{
	(void)level;
	(void)msg;
	++*(int *)arg;
}

static char *dump(const tmatch_profile_t *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	if (tmatch_profile_write(p, f, 0, NULL))
		abort();
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tmatch_profile_limits_t lim;
	tmatch_error_t err;
	int warnings = 0;

	tmatch_profile_limits_init(&lim);
	lim.max_ranks = 4096;
	lim.max_matrix_ranks = 64;
	lim.max_edges = 100000;
	lim.max_file_size = 1 << 20;
	lim.max_scalar_len = 256;
	tmatch_profile_t *p =
	    tmatch_profile_load_buffer(data, size, "fuzz", &lim, quiet, &warnings, &err);
	if (!p) {
		/* An error must always carry a message. */
		if (!err.msg[0])
			abort();
		return 0;
	}
	size_t l1, l2;
	char *w1 = dump(p, &l1);
	tmatch_profile_t *q = tmatch_profile_load_buffer(w1, l1, "rt", &lim, NULL, NULL, &err);
	if (!q)
		abort();
	char *w2 = dump(q, &l2);
	if (l1 != l2 || memcmp(w1, w2, l1))
		abort();
	if (tmatch_profile_ranks(p) != tmatch_profile_ranks(q) ||
	    tmatch_profile_nedges(p, TMATCH_PROFILE_P2P) !=
	        tmatch_profile_nedges(q, TMATCH_PROFILE_P2P))
		abort();
	unsigned m = tmatch_profile_metrics(p);
	for (int metric = 0; metric < 3; metric++) {
		tmatch_comm_t *c =
		    tmatch_profile_to_comm(p, (tmatch_profile_metric_t)metric,
		                           TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL, &err);
		int possible = metric == TMATCH_METRIC_BYTES  ? (m & TMATCH_PROFILE_HAS_BYTES) != 0
		               : metric == TMATCH_METRIC_MSGS ? (m & TMATCH_PROFILE_HAS_MSGS) != 0
		                                              : m == 3u;
		if (possible && !c && !strstr(err.msg, "exceeds"))
			abort();
		if (!possible && c)
			abort();
		if (c && tmatch_comm_order(c) != tmatch_profile_ranks(p))
			abort();
		tmatch_comm_destroy(c);
	}
	free(w1);
	free(w2);
	tmatch_profile_destroy(q);
	tmatch_profile_destroy(p);
	return 0;
}
