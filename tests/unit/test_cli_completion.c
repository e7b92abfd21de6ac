/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_completion.c - the bash completion the packages install
 * (cli/treematch.bash) completes what the built CLI's --help says:
 * commands, subcommands, each command's options, the mappers.
 */
#include "cli_helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define OUTLEN (1 << 14)

/* What _treematch offers for the words typed (the last one being
   completed), one per line. */
static const char *complete(const char *typed)
{
	static char out[OUTLEN];
	char script[1024];
	char *argv[] = {"/bin/bash", "--norc", "--noprofile", "-c", script, NULL};

	snprintf(script, sizeof(script),
	         "source %s/cli/treematch.bash || exit 3; COMP_WORDS=(%s %s); "
	         "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); [[ $'%s' == *' ' ]] && "
	         "COMP_WORDS+=('') && COMP_CWORD=$((COMP_CWORD + 1)); _treematch; "
	         "printf '%%s\\n' \"${COMPREPLY[@]}\"",
	         TMATCH_SRCDIR, cli_path(), typed, typed);
	cr_assert_eq(cli_run(argv, NULL, out, NULL, OUTLEN), 0, "%s", out);
	return out;
}

static int offers(const char *typed, const char *word)
{
	const char *got = complete(typed);
	size_t n = strlen(word);

	for (const char *p = got; (p = strstr(p, word)); p++)
		if ((p == got || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

Test(cli_completion, commands_and_subcommands)
{
	cr_expect(offers("ma", "map"), "%s", complete("ma"));
	cr_expect(offers("co", "config"), "%s", complete("co"));
	cr_expect(!offers("ma", "eval"), "%s", complete("ma"));
	cr_expect(offers("profile ", "stats"), "%s", complete("profile "));
	cr_expect(offers("store ", "forget"), "%s", complete("store "));
	cr_expect(offers("plan ", "node"), "%s", complete("plan "));
}

Test(cli_completion, options_of_the_command_typed)
{
	cr_expect(offers("map --pro", "--profile"), "%s", complete("map --pro"));
	cr_expect(offers("profile check --", "--max-ranks"), "%s", complete("profile check --"));
	cr_expect(!offers("profile check --", "--profile"), "%s", complete("profile check --"));
	cr_expect(offers("config check --", "--slurm-conf"), "%s", complete("config check --"));
}

Test(cli_completion, values_from_the_lists)
{
	cr_expect(offers("map --mapper gr", "greedy"), "%s", complete("map --mapper gr"));
	cr_expect(offers("map -t lo", "local"), "%s", complete("map -t lo"));
	cr_expect(offers("topology show --smt ", "core"), "%s", complete("topology show --smt "));
}
