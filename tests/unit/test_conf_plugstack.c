/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_plugstack.c - plugstack.conf read as Slurm reads it: the
 * lines that load treematch.so with the column of each argument, includes
 * (relative to the including file, globs, loops bounded), the lines Slurm
 * ignores reported, where the file is from slurm.conf, and an error of the
 * admin's arguments placed on its line.
 */
#include "conf/plugstack.h"
#include "placement/step.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	char sub[96];

	snprintf(dir, sizeof(dir), "/tmp/test_plugstack_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/plugstack.conf.d", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
}

static void teardown(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(plugstack, .init = setup, .fini = teardown);

struct seen {
	int n;
	tmatch_error_t last;
};

static void collect(void *arg, const tmatch_error_t *problem)
{
	struct seen *s = arg;

	s->n++;
	s->last = *problem;
}

static char *at(const char *name)
{
	static char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

Test(plugstack, keeps_the_plugin_lines_with_their_columns)
{
	tmatch_place_plugstack_line_t *l = NULL;
	struct seen seen = {0};
	tmatch_error_t err;
	int n = -1;

	put("plugstack.conf", "# Slurm's plugin stack\n"
	                      "required /usr/lib/other.so a=1\n"
	                      "\n"
	                      "include plugstack.conf.d/*.conf\n"
	                      "include /nonexistent/*.conf   # nothing: not a problem\n");
	put("plugstack.conf.d/a.conf",
	    "optional\t/usr/lib/x86_64-linux-gnu/slurm-wlm/treematch.so failure=fail  verbose=1 "
	    "# the site\n");
	put("plugstack.conf.d/b.conf", "requird /x.so\nrequired\n");
	put("plugstack.conf.d/c.txt", "required treematch.so not=read\n");
	cr_assert_eq(
	    tmatch_place_plugstack_read(at("plugstack.conf"), NULL, &l, &n, collect, &seen, &err),
	    2, "%s", err.msg);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(l[0].file, at("plugstack.conf.d/a.conf"));
	cr_expect_eq(l[0].line, 1);
	cr_expect_eq(l[0].required, 0);
	cr_expect_str_eq(l[0].path, "/usr/lib/x86_64-linux-gnu/slurm-wlm/treematch.so");
	cr_expect_eq(l[0].path_column, 10);
	cr_assert_eq(l[0].argc, 2);
	cr_expect_str_eq(l[0].argv[0], "failure=fail");
	cr_expect_eq(l[0].column[0], 59);
	cr_expect_str_eq(l[0].argv[1], "verbose=1");
	cr_expect_eq(l[0].column[1], 73);
	/* the two lines Slurm ignores, each with its place */
	cr_expect_eq(seen.n, 2);
	cr_expect_str_eq(seen.last.file, at("plugstack.conf.d/b.conf"));
	cr_expect_eq(seen.last.line, 2);
	cr_expect(strstr(seen.last.msg, "needs the plugin's path") != NULL, "%s", seen.last.msg);
	tmatch_place_plugstack_free(l, n);
}

Test(plugstack, an_unreadable_stack_and_an_include_loop)
{
	tmatch_place_plugstack_line_t *l = NULL;
	tmatch_error_t err;
	int n = 0;

	errno = 0;
	cr_expect_eq(tmatch_place_plugstack_read(at("none.conf"), NULL, &l, &n, NULL, NULL, &err),
	             -1);
	cr_expect(strstr(err.msg, "No such file") || strstr(err.msg, "cannot"), "%s", err.msg);
	put("plugstack.conf", "include plugstack.conf\n");
	cr_expect_eq(
	    tmatch_place_plugstack_read(at("plugstack.conf"), NULL, &l, &n, NULL, NULL, &err), -1);
	cr_expect(strstr(err.msg, "nested") != NULL, "%s", err.msg);
	errno = 0;
	cr_expect_eq(tmatch_place_plugstack_read(NULL, NULL, &l, &n, NULL, NULL, &err), -1);
	cr_expect_eq(errno, EINVAL);
	tmatch_place_plugstack_free(NULL, 0);
}

Test(plugstack, found_from_slurm_conf)
{
	char *p;

	put("slurm.conf", "ClusterName=x\n#PlugStackConfig=/not/this\n");
	p = tmatch_place_plugstack_find(at("slurm.conf"));
	cr_expect_str_eq(p, at("plugstack.conf"));
	free(p);
	put("slurm.conf", "ClusterName=x\n  plugstackconfig=/etc/slurm/stack.conf  # site\n");
	p = tmatch_place_plugstack_find(at("slurm.conf"));
	cr_expect_str_eq(p, "/etc/slurm/stack.conf");
	free(p);
	/* an unreadable slurm.conf: Slurm's default place beside it */
	p = tmatch_place_plugstack_find(at("missing/slurm.conf"));
	cr_expect_str_eq(p, at("missing/plugstack.conf"));
	free(p);
}

Test(plugstack, an_admin_error_is_placed_on_its_line)
{
	char *argv[] = {"admin_file=/etc/t.conf", "failure=fallbak"};
	tmatch_config_t cfg;
	tmatch_error_t err;

	put("slurm.conf", "ClusterName=x\n");
	put("plugstack.conf", "include plugstack.conf.d/*.conf\n");
	put("plugstack.conf.d/t.conf",
	    "# ours\noptional treematch.so other=1\n"
	    "optional treematch.so admin_file=/etc/t.conf failure=fallbak\n");
	cr_assert_eq(tmatch_place_config(2, argv, -1, NULL, &cfg, &err), -1);
	/* the index counts admin_file= too */
	cr_expect_str_eq(err.file, "plugstack.conf");
	cr_expect_eq(err.column, 2);
	cr_expect_eq(tmatch_place_plugstack_where(at("slurm.conf"), 2, argv, &err), 0);
	cr_expect_str_eq(err.file, at("plugstack.conf.d/t.conf"));
	cr_expect_eq(err.line, 3);
	cr_expect_eq(err.column, 46);
}
