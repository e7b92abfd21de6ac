/* SPDX-License-Identifier: BSD-3-Clause */
/* cmd_topology.c - `treematch topology`. PLACEHOLDER until its issue lands. */
#include "cli/cli.h"

int tmatch_cli_topology(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tmatch_cli_error("'topology' is not available in this build");
	return 2;
}
