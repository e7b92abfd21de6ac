/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conf_config.c - the option grammar: the three front ends over one key
 * table, the error positions, admin-only keys and the merge precedence.
 */
#include "conf/config.h"
#include "profile/profile.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

Test(conf_config, defaults)
{
	tmatch_config_t c;

	tmatch_config_init(&c);
	cr_expect_eq(c.enabled, 0);
	cr_expect_eq(c.metric, -1);
	cr_expect_eq(c.coll, -1, "the collectives the profile says are placed by");
	cr_expect_eq(c.failure, TMATCH_FAILURE_FALLBACK);
	cr_expect_eq(c.max_ranks, 1048576);
	cr_expect_eq(c.max_file_size, (size_t)256 << 20);
	cr_expect_str_eq(c.profile, "");
	tmatch_config_init(NULL);
}

/* The plugin and `treematch map` must place identically by default. */
Test(conf_config, default_seed_is_the_library_default)
{
	tmatch_config_t c;
	tmatch_map_opts_t m;

	tmatch_config_init(&c);
	tmatch_map_opts_init(&m);
	cr_expect_eq(c.seed, m.seed);
}

Test(conf_config, user_string)
{
	tmatch_config_t c;
	tmatch_error_t err;

	tmatch_config_init(&c);
	cr_assert_eq(tmatch_config_parse_string(&c,
	                                        "app.yml,mapper=greedy,metric=avg,coll=on,seed=42",
	                                        TMATCH_CONFIG_USER, NULL, &err),
	             0, "%s", err.msg);
	cr_expect_str_eq(c.profile, "app.yml");
	cr_expect_eq(c.enabled, 1);
	cr_expect_str_eq(c.mapper, "greedy");
	cr_expect_eq(c.metric, TMATCH_METRIC_AVG);
	cr_expect_eq(c.coll, 1);
	cr_expect_eq(c.seed, 42);
	tmatch_config_init(&c);
	cr_assert_eq(
	    tmatch_config_parse_string(&c, "app.yml,coll=off", TMATCH_CONFIG_USER, NULL, &err), 0,
	    "%s", err.msg);
	cr_expect_eq(c.coll, 0, "off: not even the profile's wire collectives");

	tmatch_config_init(&c);
	cr_assert_eq(tmatch_config_parse_string(&c, "off", TMATCH_CONFIG_USER, NULL, &err), 0);
	cr_expect_eq(c.enabled, 0);
	cr_assert_eq(tmatch_config_parse_string(&c,
	                                        "profile=x.yml,failure=fail,dry_run=yes,"
	                                        "verbose=3,max_map_time=2.5",
	                                        TMATCH_CONFIG_USER, NULL, &err),
	             0, "%s", err.msg);
	cr_expect_eq(c.failure, TMATCH_FAILURE_FAIL);
	cr_expect_eq(c.dry_run, 1);
	cr_expect_eq(c.verbose, 3);
	cr_expect_float_eq(c.max_map_time, 2.5, 1e-12);
}

static void expect_fail(const char *opts, enum tmatch_config_source src, const char *frag,
                        int column)
{
	tmatch_config_t c, before;
	tmatch_error_t err;

	tmatch_config_init(&c);
	c.verbose = 2;
	before = c;
	errno = 0;
	cr_expect_eq(tmatch_config_parse_string(&c, opts, src, "--treematch", &err), -1,
	             "'%s' accepted", opts);
	cr_expect_eq(errno, EINVAL, "'%s'", opts);
	cr_expect_not_null(strstr(err.msg, frag), "'%s': '%s' lacks '%s'", opts, err.msg, frag);
	cr_expect_eq(err.column, column, "'%s': column %d", opts, err.column);
	cr_expect_str_eq(err.file, "--treematch");
	cr_expect(!memcmp(&c, &before, sizeof(c)), "'%s' changed the config on failure", opts);
}

Test(conf_config, user_errors)
{
	expect_fail("app.yml,bogus=1", TMATCH_CONFIG_USER,
	            "unknown option 'bogus': valid options are profile, mapper", 9);
	/* a slip: the option meant */
	expect_fail("app.yml,verbos=1", TMATCH_CONFIG_USER,
	            "unknown option 'verbos': did you mean 'verbose'?", 9);
	expect_fail("app.yml,max_rank=4", TMATCH_CONFIG_USER,
	            "unknown option 'max_rank': did you mean 'max_ranks'?", 9);
	expect_fail("app.yml,default=on", TMATCH_CONFIG_USER, "only be set by the administrator",
	            9);
	expect_fail("app.yml,mapper=nosuch", TMATCH_CONFIG_USER, "nosuch", 9);
	expect_fail("app.yml,,metric=bytes", TMATCH_CONFIG_USER, "empty item", 9);
	expect_fail("", TMATCH_CONFIG_USER, "empty option", 1);
	expect_fail("metric=time", TMATCH_CONFIG_USER, "bytes, msgs or avg", 1);
	expect_fail("a.yml,coll=maybe", TMATCH_CONFIG_USER, "on or off", 7);
	expect_fail("a.yml,verbose=10", TMATCH_CONFIG_USER, "0 to 9", 7);
	expect_fail("a.yml,max_ranks=0", TMATCH_CONFIG_USER, "1 to 1048576", 7);
	expect_fail("a.yml,max_map_time=nan", TMATCH_CONFIG_USER, "seconds", 7);
	expect_fail("a.yml,max_map_time=-1", TMATCH_CONFIG_USER, "seconds", 7);
	expect_fail("a.yml,max_file_size=12Q", TMATCH_CONFIG_USER, "size in bytes", 7);
	expect_fail("a.yml,mapper", TMATCH_CONFIG_USER, "expected key=value", 7);
	expect_fail("a.yml,failure=", TMATCH_CONFIG_USER, "needs a value", 7);
	expect_fail("a.yml,=x", TMATCH_CONFIG_USER, "missing option name", 7);
	/* the user list of keys does not offer admin-only keys */
	tmatch_config_t c;
	tmatch_error_t err;
	tmatch_config_init(&c);
	tmatch_config_parse_string(&c, "zzz=1", TMATCH_CONFIG_USER, NULL, &err);
	cr_expect_null(strstr(err.msg, "allowed_mappers"), "%s", err.msg);
}

Test(conf_config, plugstack_argv)
{
	tmatch_config_t c;
	tmatch_error_t err;
	char *const good[] = {"default=on",
	                      "failure=fail",
	                      "max_ranks=4096",
	                      "allowed_mappers=greedy:packed",
	                      "max_file_size=16M",
	                      "exclusive_only=yes",
	                      "topology_xml=/etc/t.xml"};
	char *const bad[] = {"mapper=greedy", "max_ranks=abc"};

	tmatch_config_init(&c);
	cr_assert_eq(tmatch_config_parse_argv(&c, 7, good, "plugstack.conf", &err), 0, "%s",
	             err.msg);
	cr_expect_eq(c.enabled, 1);
	cr_expect_eq(c.failure, TMATCH_FAILURE_FAIL);
	cr_expect_eq(c.max_ranks, 4096);
	cr_expect_eq(c.max_file_size, (size_t)16 << 20);
	cr_expect_eq(c.exclusive_only, 1);
	cr_expect_str_eq(c.allowed_mappers, "greedy:packed");
	cr_expect_str_eq(c.topology_xml, "/etc/t.xml");
	errno = 0;
	cr_expect_eq(tmatch_config_parse_argv(&c, 2, bad, "plugstack.conf", &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(err.column, 2, "column is the argument index");
	cr_expect_str_eq(c.mapper, "", "unchanged on failure");
	char *const badmap[] = {"allowed_mappers=greedy:bogus"};
	cr_expect_eq(tmatch_config_parse_argv(&c, 1, badmap, "plugstack.conf", &err), -1);
	cr_expect_eq(tmatch_config_parse_argv(NULL, 1, badmap, "p", &err), -1);
	cr_expect_eq(tmatch_config_parse_argv(&c, 0, NULL, "p", &err), 0);
}

Test(conf_config, admin_file)
{
	tmatch_config_t c;
	tmatch_error_t err;
	const char good[] = "# treematch admin file\n"
	                    "\n"
	                    "  mapper = greedy+refine\n"
	                    "metric=msgs\r\n"
	                    "max_map_time = 30\n";
	const char bad[] = "mapper = greedy\n# comment\n   nosuch = 3\n";

	tmatch_config_init(&c);
	cr_assert_eq(tmatch_config_parse_text(&c, good, sizeof(good) - 1, "admin.conf", &err), 0,
	             "%s", err.msg);
	cr_expect_str_eq(c.mapper, "greedy+refine");
	cr_expect_eq(c.metric, TMATCH_METRIC_MSGS);
	cr_expect_float_eq(c.max_map_time, 30.0, 1e-12);
	errno = 0;
	cr_expect_eq(tmatch_config_parse_text(&c, bad, sizeof(bad) - 1, "admin.conf", &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(err.line, 3);
	cr_expect_eq(err.column, 4);
	cr_expect_str_eq(err.file, "admin.conf");
	cr_expect_not_null(strstr(err.msg, "allowed_mappers"), "admin sees every key: %s", err.msg);

	/* through an fd */
	int p[2];
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], good, sizeof(good) - 1), (ssize_t)sizeof(good) - 1);
	close(p[1]);
	tmatch_config_init(&c);
	cr_expect_eq(tmatch_config_parse_fd(&c, p[0], "admin.conf", &err), 0, "%s", err.msg);
	cr_expect_str_eq(c.mapper, "greedy+refine");
	close(p[0]);
	errno = 0;
	cr_expect_eq(tmatch_config_parse_fd(&c, -1, "admin.conf", &err), -1);
	cr_expect_eq(errno, EINVAL);
}

Test(conf_config, merge_precedence)
{
	tmatch_config_t admin, user, out;
	tmatch_error_t err;
	char *const args[] = {"max_ranks=1000", "max_map_time=5", "allowed_mappers=greedy:rcm",
	                      "mapper=rcm", "failure=fail"};

	tmatch_config_init(&admin);
	cr_assert_eq(tmatch_config_parse_argv(&admin, 5, args, "plugstack.conf", &err), 0, "%s",
	             err.msg);
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user,
	                                        "a.yml,max_ranks=50000,max_map_time=1,"
	                                        "mapper=greedy+refine,failure=fallback",
	                                        TMATCH_CONFIG_USER, NULL, &err),
	             0, "%s", err.msg);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0, "%s", err.msg);
	cr_expect_eq(out.max_ranks, 1000, "admin limit caps the user's");
	cr_expect_float_eq(out.max_map_time, 1.0, 1e-12, "the user may lower a limit");
	cr_expect_str_eq(out.mapper, "greedy+refine");
	cr_expect_eq(out.failure, TMATCH_FAILURE_FAIL, "failure=fail is never undone by the user");
	cr_expect_str_eq(out.refused, "failure=fallback (the site sets failure=fail), "
	                              "max_ranks=50000 (the site's limit is 1000)");
	cr_expect_str_eq(out.profile, "a.yml");
	cr_expect_eq(out.enabled, 1);

	/* a mapper outside the allowed list */
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "a.yml,mapper=packed", TMATCH_CONFIG_USER,
	                                        NULL, &err),
	             0);
	out.verbose = 7;
	errno = 0;
	cr_expect_eq(tmatch_config_merge(&admin, &user, &out, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_not_null(strstr(err.msg, "greedy:rcm"), "%s", err.msg);
	cr_expect_eq(out.verbose, 7, "out unchanged on failure");

	/* nothing set by the user: admin values, nothing refused */
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0);
	cr_expect_str_eq(out.mapper, "rcm");
	cr_expect_eq(out.failure, TMATCH_FAILURE_FAIL);
	cr_expect_str_eq(out.refused, "");

	/* tightening is taken and not reported; every loosening is */
	{
		tmatch_config_t soft, strict;
		char *const sargs[] = {"max_file_size=1M", "max_map_memory=64M", "max_map_time=2"};

		tmatch_config_init(&soft);
		cr_assert_eq(tmatch_config_parse_argv(&soft, 3, sargs, "plugstack.conf", &err), 0);
		tmatch_config_init(&user);
		cr_assert_eq(tmatch_config_parse_string(&user,
		                                        "a.yml,failure=fail,max_file_size=512K,"
		                                        "max_map_memory=32M,max_map_time=1",
		                                        TMATCH_CONFIG_USER, NULL, &err),
		             0, "%s", err.msg);
		cr_assert_eq(tmatch_config_merge(&soft, &user, &strict, &err), 0);
		cr_expect_eq(strict.failure, TMATCH_FAILURE_FAIL, "the user may tighten failure");
		cr_expect_eq(strict.max_file_size, (size_t)512 << 10);
		cr_expect_eq(strict.max_map_memory, (size_t)32 << 20);
		cr_expect_str_eq(strict.refused, "");
		tmatch_config_init(&user);
		cr_assert_eq(tmatch_config_parse_string(&user,
		                                        "a.yml,max_file_size=2M,max_map_memory=1G,"
		                                        "max_map_time=9",
		                                        TMATCH_CONFIG_USER, NULL, &err),
		             0, "%s", err.msg);
		cr_assert_eq(tmatch_config_merge(&soft, &user, &strict, &err), 0);
		cr_expect_eq(strict.max_file_size, (size_t)1 << 20);
		cr_expect_eq(strict.max_map_memory, (size_t)64 << 20);
		cr_expect_float_eq(strict.max_map_time, 2.0, 1e-12);
		cr_expect_not_null(strstr(strict.refused, "max_file_size=2097152"), "%s",
		                   strict.refused);
		cr_expect_not_null(strstr(strict.refused, "max_map_memory=1073741824"), "%s",
		                   strict.refused);
		cr_expect_not_null(strstr(strict.refused, "max_map_time=9 (the site's limit is 2)"),
		                   "%s", strict.refused);
	}
	cr_expect_eq(tmatch_config_merge(NULL, &user, &out, &err), -1);
}

Test(conf_config, keys_and_format)
{
	const char *const *k = tmatch_config_keys();
	int n = 0;
	char buf[2048];
	tmatch_config_t c;

	for (; k[n]; n++)
		;
	cr_expect_eq(n, 22);
	cr_expect_str_eq(k[0], "profile");
	tmatch_config_init(&c);
	cr_expect_gt(tmatch_config_format(&c, buf, sizeof(buf)), 0);
	cr_expect_not_null(strstr(buf, " coll=profile "), "%s", buf);
	for (int i = 0; i < n; i++) {
		char key[64];
		snprintf(key, sizeof(key), "%s=", k[i]);
		cr_expect_not_null(strstr(buf, key), "format lacks %s", k[i]);
	}
}

Test(conf_config, max_map_memory_is_an_admin_capped_size)
{
	tmatch_config_t admin, user, out;
	tmatch_error_t err;
	char *const args[] = {"max_map_memory=512M"};

	tmatch_config_init(&admin);
	cr_expect_eq(admin.max_map_memory, (size_t)1 << 30, "default 1 GiB");
	cr_assert_eq(tmatch_config_parse_argv(&admin, 1, args, "plugstack.conf", &err), 0, "%s",
	             err.msg);
	cr_expect_eq(admin.max_map_memory, (size_t)512 << 20);
	cr_expect_eq(admin.max_file_size, (size_t)256 << 20, "a size key sets only itself");
	/* a user may lower it, never raise it */
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "a.yml,max_map_memory=2G",
	                                        TMATCH_CONFIG_USER, NULL, &err),
	             0, "%s", err.msg);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0, "%s", err.msg);
	cr_expect_eq(out.max_map_memory, (size_t)512 << 20, "admin limit caps the user's");
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "a.yml,max_map_memory=64M",
	                                        TMATCH_CONFIG_USER, NULL, &err),
	             0, "%s", err.msg);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0, "%s", err.msg);
	cr_expect_eq(out.max_map_memory, (size_t)64 << 20, "the user may lower it");
	/* bad values name the key and the column */
	errno = 0;
	cr_expect_eq(tmatch_config_parse_string(&user, "a.yml,max_map_memory=0", TMATCH_CONFIG_USER,
	                                        NULL, &err),
	             -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(err.column, 7);
	cr_expect_not_null(strstr(err.msg, "max_map_memory"), "%s", err.msg);
	cr_expect_eq(tmatch_config_parse_string(&user, "a.yml,max_map_memory=1T",
	                                        TMATCH_CONFIG_USER, NULL, &err),
	             -1);
	cr_expect_not_null(strstr(err.msg, "size in bytes"), "%s", err.msg);
	cr_expect_eq(out.max_map_memory, (size_t)64 << 20, "output untouched on failure");
}

/* Learn mode: the user's learn[:NAME], the admin's default=learn and
   store=, min_gain; a profile given after learn turns it off again. */
Test(conf_config, learn_mode)
{
	tmatch_config_t admin, user, out;
	tmatch_error_t err;
	char *argv[] = {"default=learn", "store=/var/cache/treematch", "min_gain=5"};

	tmatch_config_init(&user);
	cr_assert_eq(user.min_gain, 2);
	cr_assert_eq(tmatch_config_parse_string(&user, "learn", TMATCH_CONFIG_USER, "t", &err), 0,
	             "%s", err.msg);
	cr_expect(user.learn && user.enabled && !user.profile[0] && !user.learn_name[0]);
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "learn:lmp-in.lj,min_gain=0,verbose=1",
	                                        TMATCH_CONFIG_USER, "t", &err),
	             0, "%s", err.msg);
	cr_expect_str_eq(user.learn_name, "lmp-in.lj");
	cr_expect_eq(user.min_gain, 0);
	static const char *const bad[] = {"learn:a/b", "learn:a b", "learn:", "min_gain=101",
	                                  "learn,store=/tmp/x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tmatch_config_init(&user);
		memset(&err, 0, sizeof(err));
		cr_expect_eq(
		    tmatch_config_parse_string(&user, bad[i], TMATCH_CONFIG_USER, "t", &err), -1,
		    "%s accepted", bad[i]);
		cr_expect(err.msg[0], "%s: no message", bad[i]);
	}
	/* a file called learn is ./learn */
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "./learn", TMATCH_CONFIG_USER, "t", &err),
	             0);
	cr_expect(!user.learn && !strcmp(user.profile, "./learn"));

	tmatch_config_init(&admin);
	cr_assert_eq(tmatch_config_parse_argv(&admin, 3, argv, "plugstack.conf", &err), 0, "%s",
	             err.msg);
	cr_expect(admin.learn && admin.enabled);
	cr_expect_str_eq(admin.store, "/var/cache/treematch");
	cr_expect_eq(admin.min_gain, 5);
	/* the user's own profile replaces the admin's learning; off stops it */
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "app.yml", TMATCH_CONFIG_USER, "t", &err),
	             0);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0);
	cr_expect(!out.learn && !strcmp(out.profile, "app.yml"));
	cr_expect_str_eq(out.store, "/var/cache/treematch");
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "off", TMATCH_CONFIG_USER, "t", &err), 0);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0);
	cr_expect(!out.enabled);
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "learn:x", TMATCH_CONFIG_USER, "t", &err),
	             0);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0);
	cr_expect(out.learn && !strcmp(out.learn_name, "x") && out.min_gain == 5);
}

/* search_time: 0 (none) to 3600 s; the site sets it, a user may only lower it. */
Test(conf_config, search_time_only_lowered_by_the_user)
{
	tmatch_config_t admin, user, out;
	tmatch_error_t err;
	char *const args[] = {"search_time=0.5"};
	char line[2048];

	expect_fail("a.yml,search_time=-1", TMATCH_CONFIG_USER, "seconds, from 0 to 3600", 7);
	expect_fail("a.yml,search_time=3601", TMATCH_CONFIG_USER, "seconds, from 0 to 3600", 7);
	expect_fail("a.yml,search_time=inf", TMATCH_CONFIG_USER, "seconds, from 0 to 3600", 7);
	tmatch_config_init(&admin);
	cr_expect_float_eq(admin.search_time, 0.0, 1e-12, "none by default");
	cr_assert_eq(tmatch_config_parse_argv(&admin, 1, args, "plugstack.conf", &err), 0, "%s",
	             err.msg);
	cr_expect_float_eq(admin.search_time, 0.5, 1e-12);
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "a.yml,search_time=0", TMATCH_CONFIG_USER,
	                                        NULL, &err),
	             0, "%s", err.msg);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0, "%s", err.msg);
	cr_expect_float_eq(out.search_time, 0.0, 1e-12, "the user may turn it off");
	cr_expect_str_eq(out.refused, "");
	tmatch_config_init(&user);
	cr_assert_eq(tmatch_config_parse_string(&user, "a.yml,search_time=2", TMATCH_CONFIG_USER,
	                                        NULL, &err),
	             0, "%s", err.msg);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0, "%s", err.msg);
	cr_expect_float_eq(out.search_time, 0.5, 1e-12, "not raise it");
	cr_expect_str_eq(out.refused, "search_time=2 (the site's limit is 0.5)");
	tmatch_config_format(&out, line, sizeof(line));
	cr_expect_not_null(strstr(line, " search_time=0.5"), "%s", line);
}

/* nic_env: on by default; the site may turn it off and a user may not turn
   it back on; a user may turn it off where the site leaves it on. */
Test(conf_config, nic_env_only_turned_off_by_the_user)
{
	tmatch_config_t admin, user, out;
	tmatch_error_t err;
	char *const args[] = {"nic_env=off"};
	char line[2048];

	expect_fail("a.yml,nic_env=maybe", TMATCH_CONFIG_USER, "'nic_env' must be on or off", 7);
	tmatch_config_init(&admin);
	cr_expect(admin.nic_env, "on by default");
	tmatch_config_init(&user);
	cr_assert_eq(
	    tmatch_config_parse_string(&user, "a.yml,nic_env=off", TMATCH_CONFIG_USER, NULL, &err),
	    0, "%s", err.msg);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0, "%s", err.msg);
	cr_expect(!out.nic_env, "the user may turn it off");
	cr_expect_str_eq(out.refused, "");
	cr_assert_eq(tmatch_config_parse_argv(&admin, 1, args, "plugstack.conf", &err), 0, "%s",
	             err.msg);
	cr_expect(!admin.nic_env);
	tmatch_config_init(&user);
	cr_assert_eq(
	    tmatch_config_parse_string(&user, "a.yml,nic_env=on", TMATCH_CONFIG_USER, NULL, &err),
	    0, "%s", err.msg);
	cr_assert_eq(tmatch_config_merge(&admin, &user, &out, &err), 0, "%s", err.msg);
	cr_expect(!out.nic_env, "not back on");
	cr_expect_str_eq(out.refused, "nic_env=on (the site sets nic_env=off)");
	tmatch_config_format(&out, line, sizeof(line));
	cr_expect_not_null(strstr(line, " nic_env=off"), "%s", line);
}
