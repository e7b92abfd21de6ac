/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_load.c - how long loading a large comm-profile takes, and how much
 * memory it needs.
 *
 *   profile_load gen NX NY NZ OUT.yml   write a 3-D 6-neighbour stencil
 *                                       profile (undirected, bytes + msgs)
 *                                       through the library's writer
 *   profile_load load FILE.yml          load it, build the core matrix, and
 *                                       print times and peak RSS
 *
 * bench/profile_load.sh runs both for 128 x 128 x 64 = 1,048,576 ranks.
 */
#include "profile/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long peak_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int gen(int nx, int ny, int nz, const char *out)
{
	tmatch_error_t err;
	char buf[700];
	int n = nx * ny * nz;
	tmatch_profile_t *p =
	    tmatch_profile_create(n, TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS, 0, &err);

	if (!p)
		goto fail;
	for (int z = 0; z < nz; z++)
		for (int y = 0; y < ny; y++)
			for (int x = 0; x < nx; x++) {
				int r = (z * ny + y) * nx + x;
				/* faces differ in size, as in a real halo exchange */
				if (x + 1 < nx &&
				    tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, r, r + 1,
				                            4096 * 3, 3, NULL, NULL, &err))
					goto fail;
				if (y + 1 < ny &&
				    tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, r, r + nx,
				                            4096 * 2, 2, NULL, NULL, &err))
					goto fail;
				if (z + 1 < nz &&
				    tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, r, r + nx * ny,
				                            4096, 1, NULL, NULL, &err))
					goto fail;
			}
	if (tmatch_profile_finish(p, NULL, NULL, &err) ||
	    tmatch_profile_set_info(p, "application", "stencil3d (synthetic)", &err) ||
	    tmatch_profile_save(p, out, 0, &err))
		goto fail;
	printf("wrote %s: %d ranks, %zu edges\n", out, n,
	       tmatch_profile_nedges(p, TMATCH_PROFILE_P2P));
	tmatch_profile_destroy(p);
	return 0;
fail:
	fprintf(stderr, "profile_load: %s\n", tmatch_error_format(&err, buf, sizeof(buf)));
	tmatch_profile_destroy(p);
	return 1;
}

static int load(const char *path)
{
	tmatch_error_t err;
	char buf[700];
	long rss0 = peak_rss_kib();
	double t0 = now(), c0 = cpu();
	tmatch_profile_t *p = tmatch_profile_load(path, NULL, NULL, NULL, &err);
	double t1 = now(), c1 = cpu();
	long rss1 = peak_rss_kib();

	if (!p) {
		fprintf(stderr, "profile_load: %s\n", tmatch_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	tmatch_comm_t *c = tmatch_profile_to_comm(p, TMATCH_METRIC_BYTES, TMATCH_PROFILE_P2P, &err);
	double t2 = now(), c2 = cpu();
	long rss2 = peak_rss_kib();
	if (!c) {
		fprintf(stderr, "profile_load: %s\n", tmatch_error_format(&err, buf, sizeof(buf)));
		tmatch_profile_destroy(p);
		return 1;
	}
	size_t e = tmatch_profile_nedges(p, TMATCH_PROFILE_P2P);
	printf("file:                %s\n", path);
	printf("ranks:               %d\n", tmatch_profile_ranks(p));
	printf("edges:               %zu\n", e);
	printf("load time:           %.3f s wall, %.3f s CPU\n", t1 - t0, c1 - c0);
	printf("peak RSS after load: %ld MiB (%.1f bytes per edge above the start)\n", rss1 / 1024,
	       (double)(rss1 - rss0) * 1024.0 / (double)e);
	printf("to_comm time:        %.3f s wall, %.3f s CPU\n", t2 - t1, c2 - c1);
	printf("peak RSS after comm: %ld MiB\n", rss2 / 1024);
	tmatch_comm_destroy(c);
	tmatch_profile_destroy(p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "gen"))
		return gen(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argv[5]);
	if (argc == 3 && !strcmp(argv[1], "load"))
		return load(argv[2]);
	fprintf(stderr, "usage: profile_load gen NX NY NZ OUT.yml | profile_load load FILE.yml\n");
	return 2;
}
