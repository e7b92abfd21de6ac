/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_hello - an MPI program of the end-to-end tests: every rank reports
 * the CPUs the kernel lets it run on, after MPI_Init (so any re-pinning by
 * the MPI library would show), and the ranks check they can talk.
 *
 *   mpi rank=1 size=2 cpus=1 tm_cpus=1 sum=2
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char line[4096], cpus[4096] = "?";
	const char *tm = getenv("TREEMATCH_CPUS");
	int rank, size, one = 1, sum = 0;
	FILE *f;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
			char *p = line + 18;

			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = '\0';
			snprintf(cpus, sizeof(cpus), "%s", p);
		}
	}
	if (f)
		fclose(f);
	printf("mpi rank=%d size=%d cpus=%s tm_cpus=%s sum=%d\n", rank, size, cpus,
	       tm && *tm ? tm : "-", sum);
	MPI_Finalize();
	return 0;
}
