/* SPDX-License-Identifier: BSD-3-Clause */
/* cmd_layout.c - `treematch layout`. PLACEHOLDER until its issue lands. */
#include "cli/cli.h"

int tmatch_cli_layout(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tmatch_cli_error("'layout' is not available in this build");
	return 2;
}
