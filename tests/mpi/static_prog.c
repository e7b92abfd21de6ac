/* SPDX-License-Identifier: BSD-3-Clause */
/* static_prog.c - linked with -static: the recorder's ABI selector must refuse it. */
#include <stdio.h>

int main(void)
{
	puts("static");
	return 0;
}
