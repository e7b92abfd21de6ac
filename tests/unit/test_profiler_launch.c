/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_profiler_launch.c - what `treematch record` and srun
 * --treematch-record share (profiler/launch.c): the profile's absolute
 * path, the recorder's lookup, the recorded process's environment.
 */
#include "profiler/launch.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Test(launch, output_path_is_absolute_in_a_writable_directory)
{
	char cwd[PATH_MAX], want[PATH_MAX + 16];
	tmatch_error_t err;
	char *p;

	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	p = tmatch_record_output_path("prof.yml", &err);
	cr_assert_not_null(p, "%s", err.msg);
	snprintf(want, sizeof want, "%s/prof.yml", cwd);
	cr_expect_str_eq(p, want);
	free(p);
	p = tmatch_record_output_path("/tmp/./x.yml", &err);
	cr_assert_not_null(p, "%s", err.msg);
	cr_expect_str_eq(p, "/tmp/x.yml");
	free(p);
	p = tmatch_record_output_path("/x.yml", &err);
	if (p) /* only when / is writable (root) */
		cr_expect_str_eq(p, "/x.yml");
	free(p);
}

Test(launch, output_path_refusals_say_what_to_fix)
{
	static const struct {
		const char *file;
		const char *msg;
	} cases[] = {
	    {"", "name a file"},
	    {"/tmp/", "name a file"},
	    {"/tmp/..", "name a file"},
	    {"/nonexistent/x.yml", "cannot write in directory /nonexistent: "},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tmatch_error_t err;

		errno = 0;
		cr_expect_null(tmatch_record_output_path(cases[i].file, &err), "'%s'",
		               cases[i].file);
		cr_expect_neq(errno, 0);
		cr_expect_not_null(strstr(err.msg, cases[i].msg), "'%s': %s", cases[i].file,
		                   err.msg);
		cr_expect_null(strstr(err.msg, "x.yml"), "the file is the caller's to name: %s",
		               err.msg);
	}
	cr_expect_null(tmatch_record_output_path(NULL, NULL));
}

Test(launch, recorder_lookup_order)
{
	char buf[PATH_MAX];
	tmatch_error_t err;
	const char *extra[] = {"/nonexistent", TMATCH_BUILDDIR "/profiler"};

	/* an explicit directory alone */
	errno = 0;
	cr_expect_eq(tmatch_record_locate("/nonexistent", extra, 2, TMATCH_MPIABI_MPICH, buf,
	                                  sizeof buf, &err),
	             -1);
	cr_expect_eq(errno, ENOENT);
	cr_expect_not_null(strstr(err.msg, "/nonexistent/libtreematch-record-mpich.so"), "%s",
	                   err.msg);
	/* else the first extra directory that has it */
	cr_assert_eq(
	    tmatch_record_locate(NULL, extra, 2, TMATCH_MPIABI_MPICH, buf, sizeof buf, &err), 0,
	    "%s", err.msg);
	cr_expect_str_eq(buf, TMATCH_BUILDDIR "/profiler/libtreematch-record-mpich.so");
	cr_assert_eq(
	    tmatch_record_locate("", extra, 2, TMATCH_MPIABI_OPENMPI, buf, sizeof buf, &err), 0,
	    "an empty directory is none: %s", err.msg);
	/* else the installed one (named in the message when missing) */
	if (tmatch_record_locate(NULL, NULL, 0, TMATCH_MPIABI_MPICH, buf, sizeof buf, &err) < 0)
		cr_expect_not_null(strstr(err.msg, tmatch_record_default_libdir()), "%s", err.msg);
	cr_expect_eq(tmatch_record_default_libdir()[0], '/');
}

static const char *value(const tmatch_record_env_t *env, int n, const char *name, int *found)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(env[i].name, name)) {
			*found = 1;
			return env[i].value;
		}
	*found = 0;
	return NULL;
}

Test(launch, environment_of_the_recorded_process)
{
	tmatch_record_env_t env[TMATCH_RECORD_ENV_MAX];
	int n, found;

	n = tmatch_record_env("/lib/rec.so", "/u/mine.so", "/tmp/p.yml", TMATCH_RECORD_COLL_LOGICAL,
	                      0, env);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(value(env, n, "LD_PRELOAD", &found), "/lib/rec.so:/u/mine.so",
	                 "the recorder first, the user's preload kept");
	cr_expect_str_eq(value(env, n, "TREEMATCH_RECORD_OUTPUT", &found), "/tmp/p.yml");
	cr_expect_str_eq(value(env, n, "TREEMATCH_RECORD_COLLECTIVES", &found), "logical");
	tmatch_record_env_free(env, n);
	n = tmatch_record_env("/lib/rec.so", "", "/tmp/p.yml", TMATCH_RECORD_COLL_WIRE, 1, env);
	cr_assert_eq(n, 4);
	cr_expect_str_eq(value(env, n, "LD_PRELOAD", &found), "/lib/rec.so");
	cr_expect_str_eq(value(env, n, "TREEMATCH_RECORD_COLLECTIVES", &found), "wire",
	                 "said, not left to an inherited value");
	cr_expect_str_eq(value(env, n, "TREEMATCH_RECORD_VERBOSE", &found), "1");
	tmatch_record_env_free(env, n);
	n = tmatch_record_env("/lib/rec.so", NULL, "/tmp/p.yml", TMATCH_RECORD_COLL_OFF, 0, env);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(value(env, n, "TREEMATCH_RECORD_COLLECTIVES", &found), "off");
	tmatch_record_env_free(env, n);
	errno = 0;
	cr_expect_eq(tmatch_record_env(NULL, NULL, "/tmp/p.yml", 0, 0, env), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(tmatch_record_env("/lib/rec.so", NULL, NULL, 0, 0, env), -1);
	cr_expect_eq(
	    tmatch_record_env("/lib/rec.so", NULL, "/tmp/p.yml", (tmatch_record_coll_t)3, 0, env),
	    -1);
	tmatch_record_env_free(NULL, 0);
}

Test(launch, collectives_modes_by_name)
{
	tmatch_record_coll_t c = TMATCH_RECORD_COLL_OFF;
	tmatch_error_t err;

	cr_expect_eq(tmatch_record_coll_parse(NULL, &c, &err), 0);
	cr_expect_eq(c, TMATCH_RECORD_COLL_WIRE, "the default: the messages collectives send");
	cr_expect_eq(tmatch_record_coll_parse("logical", &c, &err), 0);
	cr_expect_eq(c, TMATCH_RECORD_COLL_LOGICAL, "the old model, by name");
	cr_expect_eq(tmatch_record_coll_parse("off", &c, &err), 0);
	cr_expect_eq(c, TMATCH_RECORD_COLL_OFF);
	cr_expect_eq(tmatch_record_coll_parse("", &c, &err), 0);
	cr_expect_eq(c, TMATCH_RECORD_COLL_WIRE);
	errno = 0;
	cr_expect_eq(tmatch_record_coll_parse("both", &c, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(c, TMATCH_RECORD_COLL_WIRE, "left as it was");
	cr_expect_not_null(strstr(err.msg, "wire"), "%s", err.msg);
}
