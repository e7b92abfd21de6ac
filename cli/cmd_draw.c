/* SPDX-License-Identifier: BSD-3-Clause */
/* cmd_draw.c - `treematch draw`. PLACEHOLDER until its issue lands. */
#include "cli/cli.h"

int tmatch_cli_draw(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tmatch_cli_error("'draw' is not available in this build");
	return 2;
}
