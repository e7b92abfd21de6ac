/* SPDX-License-Identifier: BSD-3-Clause */
/* cmd_map.c - `treematch map` and `treematch eval`. PLACEHOLDER. */
#include "cli/cli.h"

int tmatch_cli_map(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tmatch_cli_error("'map' is not available in this build");
	return 2;
}

int tmatch_cli_eval(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tmatch_cli_error("'eval' is not available in this build");
	return 2;
}
