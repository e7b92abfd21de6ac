/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostile.h - shared by the hostile-input tests of the plugin's root side
 * (test_placement_helper, test_spank_glue): what a call costs the calling
 * process alone (its children, the plugin's helper among them, are not
 * counted), and the large profiles they throw at it.
 */
#ifndef TMATCH_TESTS_HOSTILE_H
#define TMATCH_TESTS_HOSTILE_H

#include <stdio.h>
#include <sys/resource.h>

static inline double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Peak resident set size so far, KiB. */
static inline long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A ring of `ranks` ranks as a YAML profile into path (which exists):
   1,048,576 ranks are ~25 MB, ~300 MB once parsed. 0 or -1. */
static inline int write_ring_profile(const char *path, int ranks)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f,
	        "format: comm-profile\nversion: 1\nranks: %d\nmetrics: [bytes]\n"
	        "directed: false\nedges:\n",
	        ranks);
	for (int i = 0; i < ranks; i++)
		fprintf(f, "  - [%d, %d, 1000]\n", i, (i + 1) % ranks);
	return fclose(f) == 0 ? 0 : -1;
}

#endif /* TMATCH_TESTS_HOSTILE_H */
