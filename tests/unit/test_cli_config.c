/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_config.c - `treematch config check`: a site's configuration of
 * the plugin read as the plugin reads it. A good one exits 0 and says what
 * was read; every problem (a line Slurm ignores, a typo in an argument, the
 * admin file's items and mode, a missing default profile, a second line,
 * topology.conf) is one FILE:LINE:COLUMN line, and the status is 1.
 */
#include "cli_helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUTLEN (1 << 16)

static char dir[64], path[192];
static char out[OUTLEN], err[OUTLEN];

static const char *at(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_cli_config_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(mkdir(at("plugstack.conf.d"), 0755), 0);
	put("slurm.conf", "ClusterName=test\n");
	put("p2.yml", "format: comm-profile\nversion: 1\nranks: 2\nmetrics: [bytes]\n"
	              "directed: false\nedges:\n  - [0, 1, 100]\n");
	put("topology.conf", "SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[3-4]\n"
	                     "SwitchName=top Switches=s[0-1]\n");
}

static void teardown(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(cli_config, .init = setup, .fini = teardown);

/* `treematch config check [stack]` with SLURM_CONF in the directory. */
static int check(const char *stack)
{
	char conf[192], *argv[] = {(char *)cli_path(), "config", "check", NULL, NULL};

	snprintf(conf, sizeof(conf), "%s/slurm.conf", dir);
	setenv("SLURM_CONF", conf, 1);
	argv[3] = (char *)stack;
	return cli_run(argv, NULL, out, err, OUTLEN);
}

Test(cli_config, a_good_configuration_exits_0)
{
	char text[512];

	put("plugstack.conf", "include plugstack.conf.d/*.conf\n");
	snprintf(text, sizeof(text),
	         "# the site\noptional %s/treematch.so failure=fallback max_map_time=10 "
	         "admin_file=%s/admin.conf\n",
	         dir, dir);
	put("treematch.so", "");
	put("plugstack.conf.d/treematch.conf", text);
	snprintf(text, sizeof(text), "default = on\nprofile = %s/p2.yml\n", dir);
	put("admin.conf", text);
	chmod(at("admin.conf"), 0644);
	cr_assert_eq(check(NULL), 0, "%s%s", out, err);
	cr_expect_str_eq(err, "");
	cr_expect(strstr(out, "plugstack.conf.d/treematch.conf:2: optional ") != NULL, "%s", out);
	cr_expect(strstr(out, "max_map_time=10") != NULL, "%s", out);
	cr_expect(strstr(out, "topology.conf: ") != NULL && strstr(out, "problems: none"), "%s",
	          out);
}

Test(cli_config, every_problem_has_its_file_line_and_column)
{
	char text[512];

	put("stack.conf", "include plugstack.conf.d/*.conf\nrequird other.so\n");
	snprintf(
	    text, sizeof(text),
	    "optional %s/none/treematch.so max_map_time=10 failure=fallbak admin_file=%s/a.conf\n"
	    "required treematch.so\n",
	    dir, dir);
	put("plugstack.conf.d/t.conf", text);
	put("a.conf", "default = on\nprofile = /nonexistent/site.yml\nmax_rank = 5\n");
	chmod(at("a.conf"), 0666);
	put("topology.conf", "SwitchName=top Switches=s[0-1]\n");
	cr_assert_eq(check(at("stack.conf")), 1, "%s%s", out, err);
	/* the line Slurm ignores */
	cr_expect(strstr(err, "stack.conf:2:1: 'requird' is not required") != NULL, "%s", err);
	/* the plugin file, at its column */
	cr_expect(strstr(err, "t.conf:1:10: cannot read the plugin") != NULL, "%s", err);
	/* the argument's typo, at the argument's column */
	{
		char want[160];

		snprintf(want, sizeof(want), "t.conf:1:%zu: 'failure' must be",
		         strlen("optional ") + strlen(dir) +
		             strlen("/none/treematch.so max_map_time=10 ") + 1);
		cr_expect(strstr(err, want) != NULL, "%s in %s", want, err);
	}
	/* the admin file: others may write it, and a misspelled key */
	cr_expect(strstr(err, "a.conf: others than its owner may write") != NULL, "%s", err);
	cr_expect(strstr(err, "a.conf:3:1: unknown option 'max_rank': did you mean 'max_ranks'?") !=
	              NULL,
	          "%s", err);
	/* a second line */
	cr_expect(strstr(err, "t.conf:2:1: treematch.so is loaded again") != NULL, "%s", err);
	/* topology.conf */
	cr_expect(strstr(err, "topology.conf:1:") != NULL, "%s", err);
	cr_expect(strstr(err, "treematch: config check: 7 problems") != NULL, "%s", err);
}

Test(cli_config, the_site_default_profile_is_read)
{
	char text[512];

	snprintf(text, sizeof(text), "optional treematch.so profile=%s/bad.yml\n", dir);
	put("plugstack.conf", text);
	put("bad.yml", "format: comm-profile\nversion: 1\nranks: [2\n");
	cr_assert_eq(check(NULL), 1, "%s%s", out, err);
	cr_expect(strstr(err, "bad.yml:3:") != NULL, "%s", err);
}

Test(cli_config, no_line_for_the_plugin_and_an_unreadable_stack)
{
	put("plugstack.conf", "# nothing\n");
	cr_assert_eq(check(NULL), 1, "%s%s", out, err);
	cr_expect(strstr(err, "plugstack.conf: no line loads treematch.so") != NULL, "%s", err);
	cr_assert_eq(check(at("none.conf")), 1, "%s%s", out, err);
	cr_expect(strstr(err, "none.conf") != NULL, "%s", err);
}

Test(cli_config, usage_errors_say_where_the_options_are)
{
	char *argv[] = {(char *)cli_path(), "config", "check", "--bogus", NULL};

	cr_assert_eq(cli_run(argv, NULL, out, err, OUTLEN), 2);
	cr_expect(strstr(err, "'treematch config check --help' lists the options") != NULL, "%s",
	          err);
	cr_expect_lt(strlen(err), 200, "one line, not the usage: %s", err);
}
