/* SPDX-License-Identifier: BSD-3-Clause */
/* cmd_profile.c - `treematch profile`. PLACEHOLDER until its issue lands. */
#include "cli/cli.h"

int tmatch_cli_profile(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tmatch_cli_error("'profile' is not available in this build");
	return 2;
}
