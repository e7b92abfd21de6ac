/* SPDX-License-Identifier: BSD-3-Clause */
/* cmd_record.c - `treematch record`. PLACEHOLDER until its issue lands. */
#include "cli/cli.h"

int tmatch_cli_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tmatch_cli_error("'record' is not available in this build");
	return 2;
}
