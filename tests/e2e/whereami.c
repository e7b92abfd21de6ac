/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * whereami - a task of the end-to-end tests: prints one line with its
 * global rank, node, the CPUs it may run on (read back from
 * /proc/self/status, i.e. what the kernel enforces) and the placement
 * variables treematch.so exported.
 *
 *   rank=3 node=n1 cpus=1 tm_cpus=1 omp=2 pos=node=0/1,core=1/2
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : "-";
}

int main(void)
{
	char line[4096], cpus[4096] = "?";
	FILE *f = fopen("/proc/self/status", "r");

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
	printf("rank=%s node=%s cpus=%s tm_cpus=%s omp=%s places=%s bind=%s pos=%s levels=%s "
	       "index=%s count=%s\n",
	       env("SLURM_PROCID"), env("SLURMD_NODENAME"), cpus, env("TREEMATCH_CPUS"),
	       env("OMP_NUM_THREADS"), env("OMP_PLACES"), env("OMP_PROC_BIND"),
	       env("TREEMATCH_POSITION"), env("TREEMATCH_LEVELS"), env("TREEMATCH_INDEX"),
	       env("TREEMATCH_COUNT"));
	return 0;
}
