/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * helper_main.c - treematch-helper, the program treematch.so's root side
 * starts for each step from a descriptor it opened at init: it reads its
 * input (fd 4), becomes the job's user for good, confines itself, parses
 * what the user wrote and maps, and answers on fd 3
 * (placement/helper.c, docs/security.md). Run by hand it only fails: it
 * has no privilege of its own.
 */
#include "placement/helper.h"

int main(void)
{
	tmatch__helper_main();
}
