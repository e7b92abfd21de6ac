/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_compiled.c - libFuzzer harness for the compiled profile
 * (profile/compiled.c), both readers against each other.
 *
 * The input, as a file (memfd), is read whole (tmatch_profile_load_buffer)
 * and by rows (tmatch_profile_compiled_comm, for the ranks named by the
 * input's last bytes). When the whole read accepts it, the profile must
 * compile back to the same bytes (a file of version 1 or 2, sealed with
 * FNV-1a, to the same bytes but for the version word, 3, and the XXH3
 * seal), and the rows read alone must give the same matrix as the whole
 * profile cut down to those ranks (the row reader checks less - no
 * checksum - so it must accept whatever the whole reader accepts). Any
 * mismatch aborts.
 *
 * Built like fuzz_profile.c: clang -fsanitize=fuzzer (make fuzz), and with
 * replay.c in `make check`.
 */
#include "profile/profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_matrix(const tmatch_comm_t *a, const tmatch_comm_t *b)
{
	int n = tmatch_comm_order(a);

	if (tmatch_comm_order(b) != n)
		abort();
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (tmatch_comm_get(a, i, j) != tmatch_comm_get(b, i, j))
				abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tmatch_profile_limits_t lim;
	tmatch_profile_t *p;
	tmatch_error_t err;
	int fd, ranks[4], n = 0;

	tmatch_profile_limits_init(&lim);
	lim.max_ranks = 4096;
	lim.max_edges = 1 << 16;
	lim.max_file_size = 1 << 20;
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	p = tmatch_profile_load_buffer(data, size, "f", &lim, NULL, NULL, &err);
	/* ranks to read: the last bytes, as small numbers */
	for (size_t i = size; i > 0 && n < 4 && size - i < 4; i--)
		ranks[n++] = data[i - 1] % 8;
	for (int i = 1; i < n; i++)
		for (int j = 0; j < i; j++)
			if (ranks[i] == ranks[j])
				ranks[i] = -1;
	{
		int w = 0;
		for (int i = 0; i < n; i++)
			if (ranks[i] >= 0)
				ranks[w++] = ranks[i];
		n = w;
	}
	for (int metric = -1; metric < 3; metric++) {
		tmatch_comm_t *rows =
		    n ? tmatch_profile_compiled_comm(fd, "f", ranks, n, metric, 3, &lim, &err)
		      : NULL;

		if (p && tmatch_profile_is_compiled(data, size) && n &&
		    ranks[0] < tmatch_profile_ranks(p)) {
			int fits = 1;
			for (int i = 0; i < n; i++)
				fits &= ranks[i] < tmatch_profile_ranks(p);
			tmatch_comm_t *whole =
			    tmatch_profile_to_comm(p,
			                           metric < 0 ? tmatch_profile_placement_metric(p)
			                                      : (tmatch_profile_metric_t)metric,
			                           3, &err);
			if (fits && whole) {
				tmatch_comm_t *cut = tmatch_comm_submatrix(whole, ranks, n, &err);
				if (!rows ||
				    !cut) /* rows must read what the whole reader accepted */
					abort();
				same_matrix(rows, cut);
				tmatch_comm_destroy(cut);
			}
			tmatch_comm_destroy(whole);
		}
		tmatch_comm_destroy(rows);
	}
	if (p && tmatch_profile_is_compiled(data, size)) {
		/* compiles back to the same bytes */
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (!f || tmatch_profile_compile(p, f, &err))
			abort();
		fclose(f);
		/* bytes 8..12 the version, the last 8 the seal */
		if (len != size || memcmp(buf, data, 8) != 0 || buf[8] != 3 || buf[9] || buf[10] ||
		    buf[11] || memcmp(buf + 12, data + 12, size - 20) != 0 ||
		    (data[8] == 3 && memcmp(buf, data, size) != 0))
			abort();
		free(buf);
	}
	tmatch_profile_destroy(p);
	close(fd);
	return 0;
}
