/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_spank_glue.c - loads the real treematch.so with dlopen, from a
 * binary that defines mock spank_* and slurm_* functions (linked with
 * -rdynamic so the plugin's undefined symbols resolve here), and drives its
 * callbacks the way srun, sbatch and slurmstepd do, GPU steps too (Slurm's
 * variables as 22.05 sets them on the test cluster). Also checks that the
 * man page documents every option and argument the plugin accepts.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dlfcn.h>
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "conf/config.h"
#include "hostile.h"
#include "gpu_xml.h"
#include "tmpdir.h"

/* ------------------------------------------------------------------------ */
/* The mock Slurm                                                            */

#define MAX_OPTS 8
#define MAX_ENV  64

static struct {
	spank_context_t ctx;
	uint32_t jobid, stepid, nnodes, nodeid, nlocal, ntotal;
	int argc; /* S_JOB_ARGV */
	char **argv;
	int kills; /* slurm_kill_job_step calls: a node stopped the step */
	uint32_t killed_job, killed_step;
	uint32_t cpt;
	uid_t uid; /* S_JOB_UID, S_JOB_GID: the tester unless a test says */
	gid_t gid;
	int no_job_user;    /* S_JOB_UID and S_JOB_GID fail, as an item Slurm lacks */
	int register_fails; /* spank_option_register refuses every option */
	char *step_cores, *job_cores;
	int task_id; /* -1: not in a task */
	struct spank_option opts[MAX_OPTS];
	int nopts;
	char getenv_names[MAX_ENV][64], getenv_values[MAX_ENV][256];
	int ngetenv;
	char setenv_names[MAX_ENV][64], setenv_values[MAX_ENV][4096];
	int nsetenv;
	char log[16384];
} mock;

static void mock_log(const char *kind, const char *fmt, va_list ap)
{
	size_t used = strlen(mock.log);

	if (used + 2 >= sizeof(mock.log))
		return;
	used += (size_t)snprintf(mock.log + used, sizeof(mock.log) - used, "%s: ", kind);
	if (used < sizeof(mock.log))
		used += (size_t)vsnprintf(mock.log + used, sizeof(mock.log) - used, fmt, ap);
	if (used + 1 < sizeof(mock.log))
		strcat(mock.log, "\n");
}

#define MOCK_LOGGER(fn, kind)                                                                      \
	void fn(const char *fmt, ...)                                                              \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		mock_log(kind, fmt, ap);                                                           \
		va_end(ap);                                                                        \
	}
MOCK_LOGGER(slurm_info, "info")
MOCK_LOGGER(slurm_error, "error")
MOCK_LOGGER(slurm_verbose, "verbose")
MOCK_LOGGER(slurm_debug, "debug")
MOCK_LOGGER(slurm_debug2, "debug2")
MOCK_LOGGER(slurm_debug3, "debug3")
MOCK_LOGGER(slurm_spank_log, "user")

/* Slurm's API the plugin calls from slurmstepd (spank/stop.c), with the
   signature of the release it is built against. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
int slurm_kill_job_step(slurm_step_id_t *step_id, uint16_t signal, uint16_t flags)
{
	(void)signal, (void)flags;
	mock.killed_job = step_id->job_id;
	mock.killed_step = step_id->step_id;
	mock.kills++;
	return 0;
}
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
int slurm_kill_job_step(uint32_t job_id, uint32_t step_id, uint16_t signal, uint16_t flags)
{
	(void)signal, (void)flags;
	mock.killed_job = job_id;
	mock.killed_step = step_id;
	mock.kills++;
	return 0;
}
#else
int slurm_kill_job_step(uint32_t job_id, uint32_t step_id, uint16_t signal)
{
	(void)signal;
	mock.killed_job = job_id;
	mock.killed_step = step_id;
	mock.kills++;
	return 0;
}
#endif

char *slurm_strerror(int errnum)
{
	return strerror(errnum);
}

spank_context_t spank_context(void)
{
	return mock.ctx;
}

int spank_remote(spank_t sp)
{
	(void)sp;
	return mock.ctx == S_CTX_REMOTE;
}

const char *spank_strerror(spank_err_t err)
{
	return err == ESPANK_SUCCESS ? "Success" : "mock error";
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	(void)sp;
	if (mock.register_fails || mock.nopts >= MAX_OPTS)
		return ESPANK_ERROR;
	mock.opts[mock.nopts++] = *opt;
	return ESPANK_SUCCESS;
}

spank_err_t spank_option_getopt(spank_t sp, struct spank_option *opt, char **optarg)
{
	(void)sp, (void)opt, (void)optarg;
	return ESPANK_ERROR;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	va_list ap;
	spank_err_t rc = ESPANK_SUCCESS;

	(void)sp;
	va_start(ap, item);
	switch (item) {
	case S_JOB_UID:
		if (mock.no_job_user)
			rc = ESPANK_BAD_ARG;
		else
			*va_arg(ap, uid_t *) = mock.uid;
		break;
	case S_JOB_GID:
		if (mock.no_job_user)
			rc = ESPANK_BAD_ARG;
		else
			*va_arg(ap, gid_t *) = mock.gid;
		break;
	case S_JOB_ID:
		*va_arg(ap, uint32_t *) = mock.jobid;
		break;
	case S_JOB_STEPID:
		*va_arg(ap, uint32_t *) = mock.stepid;
		break;
	case S_JOB_ARGV:
		if (!mock.argv) {
			rc = ESPANK_NOT_AVAIL;
		} else {
			*va_arg(ap, int *) = mock.argc;
			*va_arg(ap, char ***) = mock.argv;
		}
		break;
	case S_JOB_NNODES:
		*va_arg(ap, uint32_t *) = mock.nnodes;
		break;
	case S_JOB_NODEID:
		*va_arg(ap, uint32_t *) = mock.nodeid;
		break;
	case S_JOB_LOCAL_TASK_COUNT:
		*va_arg(ap, uint32_t *) = mock.nlocal;
		break;
	case S_JOB_TOTAL_TASK_COUNT:
		*va_arg(ap, uint32_t *) = mock.ntotal;
		break;
	case S_STEP_CPUS_PER_TASK:
		*va_arg(ap, uint32_t *) = mock.cpt;
		break;
	case S_STEP_ALLOC_CORES:
		*va_arg(ap, char **) = mock.step_cores;
		break;
	case S_JOB_ALLOC_CORES:
		*va_arg(ap, char **) = mock.job_cores;
		break;
	case S_TASK_ID:
		if (mock.task_id < 0)
			rc = ESPANK_NOT_TASK;
		else
			*va_arg(ap, int *) = mock.task_id;
		break;
	case S_JOB_LOCAL_TO_GLOBAL_ID: {
		uint32_t local = va_arg(ap, uint32_t);

		*va_arg(ap, uint32_t *) = local + mock.nodeid * mock.nlocal;
		break;
	}
	default:
		rc = ESPANK_BAD_ARG;
	}
	va_end(ap);
	return rc;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	(void)sp;
	for (int i = 0; i < mock.ngetenv; i++)
		if (strcmp(mock.getenv_names[i], var) == 0) {
			snprintf(buf, (size_t)len, "%s", mock.getenv_values[i]);
			return ESPANK_SUCCESS;
		}
	return ESPANK_ENV_NOEXIST;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	(void)sp, (void)overwrite;
	if (mock.nsetenv >= MAX_ENV)
		return ESPANK_ERROR;
	snprintf(mock.setenv_names[mock.nsetenv], 64, "%s", var);
	snprintf(mock.setenv_values[mock.nsetenv], sizeof(mock.setenv_values[0]), "%s", val);
	mock.nsetenv++;
	return ESPANK_SUCCESS;
}

spank_err_t spank_unsetenv(spank_t sp, const char *var)
{
	(void)sp;
	for (int i = 0; i < mock.nsetenv; i++)
		if (strcmp(mock.setenv_names[i], var) == 0)
			mock.setenv_names[i][0] = '\0';
	return ESPANK_SUCCESS;
}

static const char *set_value(const char *name)
{
	for (int i = mock.nsetenv - 1; i >= 0; i--)
		if (strcmp(mock.setenv_names[i], name) == 0)
			return mock.setenv_values[i];
	return NULL;
}

static void job_setenv(const char *name, const char *value)
{
	snprintf(mock.getenv_names[mock.ngetenv], 64, "%s", name);
	snprintf(mock.getenv_values[mock.ngetenv], 256, "%s", value);
	mock.ngetenv++;
}

/* ------------------------------------------------------------------------ */
/* The plugin                                                                */

typedef int (*spank_fn)(spank_t, int, char **);

static void *plugin;
static spank_t SP = (spank_t)(uintptr_t)0x1;
static char step_cores[32], job_cores[32];

static spank_fn fn(const char *name)
{
	spank_fn f = (spank_fn)(uintptr_t)dlsym(plugin, name);

	cr_assert_not_null(f, "plugin lacks %s", name);
	return f;
}

/* S_STEP_CPUS_PER_TASK of the next plugin loaded (srun -c). */
static uint32_t step_cpt = 1;

static void load_plugin(spank_context_t ctx)
{
	memset(&mock, 0, sizeof(mock));
	mock.ctx = ctx;
	mock.task_id = -1;
	mock.nnodes = 1;
	mock.cpt = step_cpt;
	mock.uid = getuid();
	mock.gid = getgid();
	snprintf(step_cores, sizeof(step_cores), "0");
	snprintf(job_cores, sizeof(job_cores), "0");
	mock.step_cores = step_cores;
	mock.job_cores = job_cores;
	plugin = dlopen(TMATCH_BUILDDIR "/spank/treematch.so", RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(plugin, "dlopen: %s", dlerror());
}

/* slurmstepd's plugstack.conf line in this harness always names the build
   tree's helper program (the packages install it where the plugin looks). */
static int call(const char *name, int ac, char **av)
{
	static char helper[] = "helper=" TMATCH_BUILDDIR "/spank/treematch-helper";
	char *args[16];

	if (mock.ctx != S_CTX_REMOTE)
		return fn(name)(SP, ac, av);
	cr_assert_lt(ac, 15);
	for (int i = 0; i < ac; i++)
		args[i] = av[i];
	args[ac] = helper;
	return fn(name)(SP, ac + 1, args);
}

/* The profile and topology files a test uses, removed at the end. */
static char profile_path[TM_TMP_MAX], xml_path[TM_TMP_MAX];

static char conf_dir[64];

/* Tests that end with the plugin's exit() leave their files to this. */
static void remove_files_at_exit(void)
{
	char cmd[128];

	if (profile_path[0])
		unlink(profile_path);
	if (conf_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", conf_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", conf_dir);
	}
}

static void write_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	static int registered;

	if (!registered++)
		atexit(remove_files_at_exit);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void write_profile(int ranks)
{
	char text[512];

	snprintf(text, sizeof(text),
	         "format: comm-profile\nversion: 1\nranks: %d\nmetrics: [bytes]\ndirected: false\n"
	         "edges:%s\n",
	         ranks, ranks > 1 ? "\n  - [0, 1, 100]" : " []");
	tm_tmpname(profile_path, sizeof(profile_path), "test_spank_glue_XXXXXX");
	write_file(profile_path, text);
}

/* A synthetic machine saved as XML (not this system). */
static void write_xml_of(const char *synthetic)
{
	hwloc_topology_t topo;
	int fd;

	tm_tmpname(xml_path, sizeof(xml_path), "test_spank_glue_xml_XXXXXX");
	fd = mkstemp(xml_path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(hwloc_topology_init(&topo), 0);
	cr_assert_eq(hwloc_topology_set_synthetic(topo, synthetic), 0);
	cr_assert_eq(hwloc_topology_load(topo), 0);
	cr_assert_eq(hwloc_topology_export_xml(topo, xml_path, 0), 0);
	hwloc_topology_destroy(topo);
}

/* A synthetic 2-package, 4-core machine saved as XML (not this system). */
static void write_xml(void)
{
	write_xml_of("pack:2 core:2 pu:1");
}

static void cleanup(void)
{
	if (plugin) {
		/* Slurm always ends with slurm_spank_exit: it frees the state. */
		spank_fn done = (spank_fn)(uintptr_t)dlsym(plugin, "slurm_spank_exit");

		if (done)
			done(SP, 0, NULL);
		dlclose(plugin);
		plugin = NULL;
	}
	if (profile_path[0])
		unlink(profile_path);
	if (xml_path[0])
		unlink(xml_path);
	profile_path[0] = xml_path[0] = '\0';
}

static struct spank_option *treematch_option(void)
{
	for (int i = 0; i < mock.nopts; i++)
		if (strcmp(mock.opts[i].name, "treematch") == 0)
			return &mock.opts[i];
	cr_assert_fail("--treematch not registered");
	return NULL;
}

/* ------------------------------------------------------------------------ */

TestSuite(spank_glue, .fini = cleanup);

Test(spank_glue, exports_only_spank_symbols)
{
	const char *name;

	load_plugin(S_CTX_LOCAL);
	name = dlsym(plugin, "plugin_name");
	cr_assert_not_null(name);
	cr_expect_str_eq(name, "treematch");
	cr_expect_str_eq((const char *)dlsym(plugin, "plugin_type"), "spank");
	cr_expect_null(dlsym(plugin, "tmatch_spank_plan_compute"));
	cr_expect_null(dlsym(plugin, "tmatch_map_compute"));
	cr_expect_null(dlsym(plugin, "tmatch_profile_load_fd"));
}

Test(spank_glue, option_registered_in_every_context)
{
	static const spank_context_t ctxs[] = {S_CTX_LOCAL, S_CTX_REMOTE, S_CTX_ALLOCATOR};

	for (size_t i = 0; i < 3; i++) {
		struct spank_option *o;

		load_plugin(ctxs[i]);
		cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
		o = treematch_option();
		cr_expect_eq(o->has_arg, 1);
		cr_expect_not_null(o->cb);
		cr_expect(strstr(o->usage, "profile") != NULL);
		cleanup();
	}
}

/* An option Slurm refuses to register: srun, sbatch and salloc stop; in
   slurmstepd init fails only where Slurm reads slurm_spank_init_failure_mode
   (25.05+: the job fails), since before that a failed init drains the node.
   Both of the plugin's options (--treematch, --treematch-record) alike. */
Test(spank_glue, a_refused_option_fails_init_only_where_the_node_is_not_drained)
{
	static const spank_context_t ctxs[] = {S_CTX_LOCAL, S_CTX_REMOTE, S_CTX_ALLOCATOR};

	for (size_t i = 0; i < 3; i++) {
		int job_failure;

		load_plugin(ctxs[i]);
		job_failure = dlsym(plugin, "slurm_spank_init_failure_mode") != NULL;
		mock.register_fails = 1;
		if (ctxs[i] == S_CTX_REMOTE && !job_failure)
			cr_expect_eq(call("slurm_spank_init", 0, NULL), 0,
			             "slurmstepd without the failure mode: %s", mock.log);
		else
			cr_expect_eq(call("slurm_spank_init", 0, NULL), -1, "context %d: %s",
			             (int)ctxs[i], mock.log);
		cr_expect(strstr(mock.log, "cannot register --treematch") != NULL, "%s", mock.log);
		cleanup();
	}
}

Test(spank_glue, option_callback_accepts_a_good_value)
{
	struct spank_option *o;
	char value[96];

	write_profile(2);
	load_plugin(S_CTX_LOCAL);
	cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
	o = treematch_option();
	snprintf(value, sizeof(value), "%s,verbose=1", profile_path);
	cr_expect_eq(o->cb(o->val, value, 0), 0, "%s", mock.log);
	cr_expect_eq(o->cb(o->val, "off", 0), 0, "%s", mock.log);
	cr_expect_eq(o->cb(o->val, "learn", 0), 0, "%s", mock.log);
	/* slurmstepd calls it twice; both fine, nothing read there. */
	cr_expect_eq(o->cb(o->val, "p.yml", 1), 0);
	cr_expect_eq(o->cb(o->val, "p.yml", 1), 0);
}

/* A mistake in the value stops srun, sbatch or salloc (status 1) in the
   option callback, before anything is asked of Slurm. */
static void stops(const char *value)
{
	struct spank_option *o;

	load_plugin(S_CTX_LOCAL);
	cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
	o = treematch_option();
	o->cb(o->val, value, 0);
	cr_assert_fail("%s did not stop srun", value);
}

Test(spank_glue, an_unknown_key_stops_srun, .exit_code = 1)
{
	stops("p.yml,bogus_key=1");
}

Test(spank_glue, an_empty_value_stops_srun, .exit_code = 1)
{
	stops("");
}

Test(spank_glue, help_prints_and_exits, .exit_code = 0, .init = cr_redirect_stderr)
{
	struct spank_option *o;

	load_plugin(S_CTX_LOCAL);
	cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
	o = treematch_option();
	o->cb(o->val, "help", 0);
	cr_assert_fail("help did not exit");
}

/*
 * A bad profile fails the option callback: the one failure Slurm honours
 * from an "optional" plugin (the package's line) before srun, sbatch or
 * salloc asks for an allocation.
 */
Test(spank_glue, a_missing_profile_stops_srun, .exit_code = 1)
{
	stops("/nonexistent/prof.yml");
}

Test(spank_glue, a_missing_profile_stops_sbatch, .exit_code = 1)
{
	struct spank_option *o;

	load_plugin(S_CTX_ALLOCATOR);
	cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
	o = treematch_option();
	o->cb(o->val, "/nonexistent/prof.yml", 0);
	cr_assert_fail("sbatch not stopped");
}

Test(spank_glue, a_malformed_profile_stops_srun, .exit_code = 1)
{
	snprintf(profile_path, sizeof(profile_path), "/tmp/test_spank_glue_XXXXXX");
	write_file(profile_path, "format: comm-profile\nversion: 1\nranks: [2\n");
	stops(profile_path);
}

/* srun with a 4-rank profile up to local_user_init, whose result it
   returns: the step's task count is known to the plugin then. */
static int srun_step_of(uint32_t ntasks)
{
	struct spank_option *o;

	write_profile(4);
	load_plugin(S_CTX_LOCAL);
	cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
	o = treematch_option();
	cr_assert_eq(o->cb(o->val, profile_path, 0), 0);
	cr_assert_eq(call("slurm_spank_init_post_opt", 0, NULL), 0, "%s", mock.log);
	mock.ntotal = ntasks;
	return call("slurm_spank_local_user_init", 0, NULL);
}

/* A wrong count stops srun, which an optional plugin's -1 would not. */
Test(spank_glue, srun_stops_on_a_wrong_rank_count, .exit_code = 1)
{
	srun_step_of(6);
	cr_assert_fail("a wrong rank count did not stop srun");
}

Test(spank_glue, srun_accepts_the_right_rank_count)
{
	cr_expect_eq(srun_step_of(4), 0, "%s", mock.log);
	cr_expect_eq(call("slurm_spank_exit", 0, NULL), 0);
}

/*
 * A typo in the admin's arguments: named with the file, line and column of
 * plugstack.conf (found from slurm.conf as Slurm finds it); a user who asked
 * for treematch is stopped, the others are told once and run.
 */
static void write_site(const char *plugstack_text)
{
	char path[128];
	FILE *f;

	snprintf(conf_dir, sizeof(conf_dir), "/tmp/test_spank_glue_conf_XXXXXX");
	cr_assert_not_null(mkdtemp(conf_dir));
	atexit(remove_files_at_exit);
	snprintf(path, sizeof(path), "%s/slurm.conf", conf_dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "ClusterName=test\nplugstackconfig=%s/stack.conf # ours\n", conf_dir);
	fclose(f);
	snprintf(path, sizeof(path), "%s/stack.conf", conf_dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(plugstack_text, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/slurm.conf", conf_dir);
	setenv("SLURM_CONF", path, 1);
}

static void remove_site(void)
{
	char cmd[128];

	unsetenv("SLURM_CONF");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", conf_dir);
	cr_expect_eq(system(cmd), 0);
	conf_dir[0] = '\0';
}

static char *typo_argv[] = {"max_map_time=10", "failure=fallbak"};

static void write_typo_site(void)
{
	write_site("# site\ninclude /nonexistent.d/*.conf\n"
	           "optional /usr/lib/slurm/treematch.so  max_map_time=10 failure=fallbak\n");
}

/* The user who asked: stopped, told where the site's typo is. */
Test(spank_glue, a_typo_of_the_site_stops_srun_treematch, .exit_code = 1,
     .init = cr_redirect_stderr)
{
	struct spank_option *o;

	write_typo_site();
	write_profile(2);
	load_plugin(S_CTX_LOCAL);
	cr_assert_eq(call("slurm_spank_init", 2, typo_argv), 0);
	o = treematch_option();
	o->cb(o->val, profile_path, 0);
	cr_assert_fail("not stopped");
}

/* The others: one line naming the file, line and column, and srun goes on. */
Test(spank_glue, a_typo_of_the_site_is_named_and_other_sruns_run)
{
	write_typo_site();
	load_plugin(S_CTX_LOCAL);
	cr_assert_eq(call("slurm_spank_init", 2, typo_argv), 0);
	cr_expect_eq(call("slurm_spank_init_post_opt", 2, typo_argv), 0);
	cr_expect(strstr(mock.log, "stack.conf:3:55: 'failure' must be") != NULL, "%s", mock.log);
	cr_expect(strstr(mock.log, "treematch is off") != NULL, "%s", mock.log);
	remove_site();
}

Test(spank_glue, a_missing_admin_file_is_named_with_its_plugstack_line)
{
	char *argv[] = {"admin_file=/nonexistent/treematch.conf"};

	write_site("required treematch.so admin_file=/nonexistent/treematch.conf\n");
	load_plugin(S_CTX_LOCAL);
	cr_assert_eq(call("slurm_spank_init", 1, argv), 0);
	cr_expect_eq(call("slurm_spank_init_post_opt", 1, argv), 0);
	cr_expect(strstr(mock.log, "stack.conf:1:23: cannot open admin file /nonexistent") != NULL,
	          "%s", mock.log);
	remove_site();
}

/* slurmstepd on one node: user_init maps, task_init exports (and binds). */
static void remote_step(int ntasks, const char *cores, char **argv, int argc,
                        const char *user_value)
{
	struct spank_option *o;

	load_plugin(S_CTX_REMOTE);
	snprintf(step_cores, sizeof(step_cores), "%s", cores);
	mock.nlocal = mock.ntotal = (uint32_t)ntasks;
	mock.jobid = 77;
	mock.stepid = 5;
	job_setenv("SLURM_STEP_NODELIST", "n0");
	cr_assert_eq(call("slurm_spank_init", argc, argv), 0);
	if (user_value) {
		o = treematch_option();
		cr_assert_eq(o->cb(o->val, user_value, 1), 0);
	}
	cr_assert_eq(call("slurm_spank_init_post_opt", argc, argv), 0);
	cr_assert_eq(call("slurm_spank_user_init", argc, argv), 0, "%s", mock.log);
}

/* The children of this process now (from /proc). */
static int children(void)
{
	char path[64], buf[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f))
		for (char *p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
			n++;
	if (f)
		fclose(f);
	return n;
}

/* slurmstepd starts the helper at init_post_opt, ahead of user_init; a
   step that fails in between (Slurm's own set-up) ends at exit without
   user_init: the helper goes with it. One that gets there runs it. */
Test(spank_glue, helper_started_ahead_goes_with_its_step)
{
	char value[TM_TMP_MAX + 64], xmlarg[TM_TMP_MAX + 64];
	char *argv[1];
	struct spank_option *o;

	write_profile(4);
	write_xml();
	snprintf(xmlarg, sizeof(xmlarg), "topology_xml=%s", xml_path);
	argv[0] = xmlarg;
	snprintf(value, sizeof(value), "%s,dry_run=on", profile_path);
	for (int reach_user_init = 0; reach_user_init < 2; reach_user_init++) {
		load_plugin(S_CTX_REMOTE);
		snprintf(step_cores, sizeof(step_cores), "0-3");
		mock.nlocal = mock.ntotal = 4;
		mock.jobid = 77;
		mock.stepid = 5;
		job_setenv("SLURM_STEP_NODELIST", "n0");
		cr_assert_eq(call("slurm_spank_init", 1, argv), 0);
		o = treematch_option();
		cr_assert_eq(o->cb(o->val, value, 1), 0);
		cr_assert_eq(children(), 0);
		cr_assert_eq(call("slurm_spank_init_post_opt", 1, argv), 0);
		cr_expect_eq(children(), 1, "the helper waits for user_init");
		if (reach_user_init) {
			cr_assert_eq(call("slurm_spank_user_init", 1, argv), 0, "%s", mock.log);
			cr_expect_eq(children(), 0, "user_init ran and reaped it");
			mock.task_id = 0;
			mock.nsetenv = 0;
			cr_assert_eq(call("slurm_spank_task_init", 1, argv), 0, "%s", mock.log);
			cr_expect_not_null(set_value("TREEMATCH_CPUS"), "placed: %s", mock.log);
		}
		cr_expect_eq(call("slurm_spank_exit", 0, NULL), 0);
		cr_expect_eq(children(), 0, "no helper outlives its step");
	}
}

Test(spank_glue, dry_run_exports_and_binds_nothing)
{
	char value[TM_TMP_MAX + 64], xmlarg[TM_TMP_MAX + 64];
	char *argv[1];
	cpu_set_t before, after;

	write_profile(4);
	write_xml();
	snprintf(xmlarg, sizeof(xmlarg), "topology_xml=%s", xml_path);
	argv[0] = xmlarg;
	snprintf(value, sizeof(value), "%s,dry_run=on", profile_path);
	remote_step(4, "0-3", argv, 1, value);
	cr_assert_eq(sched_getaffinity(0, sizeof(before), &before), 0);
	for (int t = 0; t < 4; t++) {
		mock.task_id = t;
		mock.nsetenv = 0;
		cr_assert_eq(call("slurm_spank_task_init", 1, argv), 0, "%s", mock.log);
		cr_assert_not_null(set_value("TREEMATCH_CPUS"), "task %d: %s", t, mock.log);
		cr_expect_str_eq(set_value("TREEMATCH_DRY_RUN"), "1");
		cr_expect_not_null(strstr(set_value("TREEMATCH_POSITION"), "package="));
	}
	cr_assert_eq(sched_getaffinity(0, sizeof(after), &after), 0);
	cr_expect(CPU_EQUAL(&before, &after), "dry-run changed the affinity");
	cr_expect(strstr(mock.log, "not set (dry-run)") != NULL, "%s", mock.log);
	cr_expect(strstr(mock.log, "packed") != NULL, "%s", mock.log);
}

/* 4 tasks of 1024 CPUs on a 4096-PU node: the whole list and mask reach the
   task's environment (the plan kept 160 bytes of mask before: 640 CPUs). */
Test(spank_glue, dry_run_on_4096_pus_exports_whole_masks)
{
	char value[TM_TMP_MAX + 64], xmlarg[TM_TMP_MAX + 64];
	char *argv[1];

	write_profile(4);
	write_xml_of("pack:4 core:512 pu:2");
	snprintf(xmlarg, sizeof(xmlarg), "topology_xml=%s", xml_path);
	argv[0] = xmlarg;
	snprintf(value, sizeof(value), "%s,dry_run=on", profile_path);
	step_cpt = 1024;
	remote_step(4, "0-2047", argv, 1, value);
	step_cpt = 1;
	for (int t = 0; t < 4; t++) {
		const char *cpus, *mask;
		int lo;

		mock.task_id = t;
		mock.nsetenv = 0;
		cr_assert_eq(call("slurm_spank_task_init", 1, argv), 0, "%s", mock.log);
		cpus = set_value("TREEMATCH_CPUS");
		mask = set_value("TREEMATCH_CPU_MASK");
		cr_assert_not_null(cpus, "task %d: %s", t, mock.log);
		cr_assert_not_null(mask);
		lo = atoi(cpus);
		cr_expect_eq(lo % 1024, 0, "task %d: %s", t, cpus);
		{
			char want[32];
			snprintf(want, sizeof(want), "%d-%d", lo, lo + 1023);
			cr_expect_str_eq(cpus, want);
		}
		/* 0x, 256 f's, then a zero digit for each 4 CPUs below lo */
		cr_expect_eq(strlen(mask), 2 + 256 + (size_t)lo / 4, "task %d: mask of %zu chars",
		             t, strlen(mask));
		cr_expect_eq(strspn(mask + 2, "f"), 256);
		cr_expect_eq(strspn(mask + 258, "0"), (size_t)lo / 4);
		cr_expect_str_eq(set_value("OMP_NUM_THREADS"), "1024");
	}
	cr_expect(strstr(mock.log, "not set (dry-run)") != NULL, "%s", mock.log);
}

Test(spank_glue, binds_task_on_this_machine)
{
	cpu_set_t set;

	write_profile(1);
	remote_step(1, "0", NULL, 0, profile_path);
	mock.task_id = 0;
	cr_assert_eq(call("slurm_spank_task_init", 0, NULL), 0, "%s", mock.log);
	cr_assert_not_null(set_value("TREEMATCH_CPUS"), "%s", mock.log);
	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	cr_expect_eq(CPU_COUNT(&set), 1);
	cr_expect(CPU_ISSET(atoi(set_value("TREEMATCH_CPUS")), &set));
}

/* ------------------------------------------------------------------------ */
/* GPU steps                                                                  */

/* The kind of card gpu_step's node has (gpu_xml_write's nic_kind). */
static const char *gpu_step_cards;

/* A node of 2 packages of one core (CPUs 0 and 1 of this machine), 2 GPUs
   and an InfiniBand card (else gpu_step_cards) per package; 2 tasks of a
   profile of 2 ranks; the step's GPUs and the vendors' lists as Slurm sets
   them in user_init. */
/* The site's plugstack arguments of a GPU step: topology_xml, and
   gpu_step_site when set. */
static const char *gpu_step_site;

static int gpu_argc(void)
{
	return gpu_step_site ? 2 : 1;
}

static char *const *gpu_argv(void)
{
	static char xmlarg[96], sitearg[64];
	static char *argv[2];

	snprintf(xmlarg, sizeof(xmlarg), "topology_xml=%s", xml_path);
	snprintf(sitearg, sizeof(sitearg), "%s", gpu_step_site ? gpu_step_site : "");
	argv[0] = xmlarg;
	argv[1] = sitearg;
	return argv;
}

static void gpu_step(const char *step_gpus, const char *vendor, const char *opts)
{
	gpu_node_spec_t spec = {.packages = 2,
	                        .numa_per_package = 1,
	                        .cores_per_numa = 1,
	                        .gpus_per_numa = 2,
	                        .nics_per_numa = 1,
	                        .backend = "nvml",
	                        .nic_kind = gpu_step_cards};
	char *const *argv;
	char value[160];

	write_profile(2);
	snprintf(value, sizeof(value), "%s%s", profile_path, opts);
	cr_assert_eq(gpu_xml_write(&spec, xml_path, sizeof(xml_path)), 0);
	argv = gpu_argv();
	/* no site cgroup.conf: the numbering shows in the lists */
	setenv("SLURM_CONF", "/nonexistent/slurm.conf", 1);
	load_plugin(S_CTX_REMOTE);
	snprintf(step_cores, sizeof(step_cores), "0-1");
	mock.nlocal = mock.ntotal = 2;
	job_setenv("SLURM_STEP_NODELIST", "n0");
	job_setenv("SLURM_STEP_GPUS", step_gpus);
	job_setenv("CUDA_VISIBLE_DEVICES", vendor);
	job_setenv("ROCR_VISIBLE_DEVICES", vendor);
	job_setenv("GPU_DEVICE_ORDINAL", vendor);
	cr_assert_eq(call("slurm_spank_init", gpu_argc(), (char **)argv), 0);
	{
		struct spank_option *o = treematch_option();

		cr_assert_eq(o->cb(o->val, value, 1), 0);
	}
	cr_assert_eq(call("slurm_spank_init_post_opt", gpu_argc(), (char **)argv), 0);
	cr_assert_eq(call("slurm_spank_user_init", gpu_argc(), (char **)argv), 0, "%s", mock.log);
}

/* task_init of local task `task` of the GPU step, its variables afresh. */
static void gpu_task_init(int task)
{
	mock.task_id = task;
	mock.nsetenv = 0;
	cr_assert_eq(call("slurm_spank_task_init", gpu_argc(), (char **)gpu_argv()), 0, "%s",
	             mock.log);
}

/* The GPU's package: GPUs 0 and 1 are package 0's, 2 and 3 package 1's. */
static int gpu_cpu(int gpu)
{
	return gpu / 2;
}

/* --gpus=4, 2 tasks: each task its two GPUs of one package, its CPU there,
   CUDA's variable alone (AMD's and OpenCL's unset: NVIDIA GPUs), the card
   of its package for UCX. */
Test(spank_glue, gpu_step_gets_gpus_cpus_and_card)
{
	int seen[2] = {0, 0};

	gpu_step("0,1,2,3", "0,1,2,3", ",verbose=1");
	for (int t = 0; t < 2; t++) {
		const char *cvd, *cpus, *nic;
		cpu_set_t set;

		gpu_task_init(t);
		cvd = set_value("CUDA_VISIBLE_DEVICES");
		cpus = set_value("TREEMATCH_CPUS");
		nic = set_value("TREEMATCH_NIC");
		cr_assert_not_null(cvd, "task %d: %s", t, mock.log);
		cr_assert_not_null(cpus);
		cr_expect(!strcmp(cvd, "0,1") || !strcmp(cvd, "2,3"), "task %d: %s", t, cvd);
		cr_expect_eq(atoi(cpus), gpu_cpu(atoi(cvd)), "task %d: GPUs %s, CPUs %s", t, cvd,
		             cpus);
		cr_expect_str_eq(set_value("TREEMATCH_GPUS"), cvd);
		cr_expect_str_eq(set_value("SLURM_STEP_GPUS"), cvd);
		cr_expect_str_eq(set_value("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
		cr_expect_null(set_value("ROCR_VISIBLE_DEVICES"));
		cr_expect_null(set_value("GPU_DEVICE_ORDINAL"));
		cr_expect_str_eq(nic, gpu_cpu(atoi(cvd)) ? "mlx5_8" : "mlx5_0");
		cr_expect_not_null(set_value("UCX_NET_DEVICES"));
		cr_expect_eq(sched_getaffinity(0, sizeof(set), &set), 0);
		cr_expect(CPU_ISSET(atoi(cpus), &set) && CPU_COUNT(&set) == 1, "task %d", t);
		seen[atoi(cvd) / 2]++;
	}
	cr_expect(seen[0] == 1 && seen[1] == 1, "GPUs given twice");
	cr_expect(strstr(mock.log, "gpu-bind=MAP - n0, task  0  0 [") != NULL, "%s", mock.log);
}

/* gpu_step on a node of `cards`, then task_init of local task `task`. */
static void gpu_card_task(const char *cards, const char *opts, int task)
{
	gpu_step_cards = cards;
	gpu_step("0,1,2,3", "0,1,2,3", opts);
	gpu_step_cards = NULL;
	gpu_task_init(task);
}

/* Slingshot cards (hwloc 2.14's cxiN beside hsnN): each task the CXI
   device of its package for libfabric's cxi provider, nothing for UCX or
   openib (which would misread it), said on the verbose line. */
Test(spank_glue, gpu_step_gives_the_slingshot_card_to_libfabric)
{
	gpu_step_cards = "cxi";
	gpu_step("0,1,2,3", "0,1,2,3", ",verbose=1");
	gpu_step_cards = NULL;
	for (int t = 0; t < 2; t++) {
		const char *nic, *cvd;
		char said[160];

		gpu_task_init(t);
		cvd = set_value("CUDA_VISIBLE_DEVICES");
		nic = set_value("TREEMATCH_NIC");
		cr_assert_not_null(cvd, "%s", mock.log);
		cr_assert_not_null(nic, "%s", mock.log);
		cr_expect_str_eq(nic, gpu_cpu(atoi(cvd)) ? "cxi1" : "cxi0", "task %d", t);
		cr_assert_not_null(set_value("FI_CXI_DEVICE_NAME"), "task %d: %s", t, mock.log);
		cr_expect_str_eq(set_value("FI_CXI_DEVICE_NAME"), nic);
		cr_expect_null(set_value("UCX_NET_DEVICES"));
		cr_expect_null(set_value("OMPI_MCA_btl_openib_if_include"));
		cr_expect_null(set_value("FI_EFA_IFACE"));
		snprintf(said, sizeof(said), "nic %s (FI_CXI_DEVICE_NAME=%s) set", nic, nic);
		cr_expect(strstr(mock.log, said) != NULL, "%s not in %s", said, mock.log);
	}
}

/* An EFA card: libfabric's efa provider's variable, the verbs device. */
Test(spank_glue, gpu_step_gives_the_efa_card_to_libfabric)
{
	gpu_card_task("efa", "", 1);
	cr_assert_not_null(set_value("TREEMATCH_NIC"), "%s", mock.log);
	cr_expect_str_eq(set_value("TREEMATCH_NIC"),
	                 atoi(set_value("CUDA_VISIBLE_DEVICES")) / 2 ? "rdmap144s0" : "rdmap128s0");
	cr_assert_not_null(set_value("FI_EFA_IFACE"), "%s", mock.log);
	cr_expect_str_eq(set_value("FI_EFA_IFACE"), set_value("TREEMATCH_NIC"));
	cr_expect_null(set_value("UCX_NET_DEVICES"));
	cr_expect_null(set_value("FI_CXI_DEVICE_NAME"));
}

/* nic_env=off from the user: no card variable, none said (TREEMATCH_NIC
   stays). */
Test(spank_glue, gpu_step_without_the_card_variables)
{
	gpu_card_task("cxi", ",nic_env=off,verbose=1", 0);
	cr_expect_not_null(set_value("TREEMATCH_NIC"), "%s", mock.log);
	cr_expect_null(set_value("FI_CXI_DEVICE_NAME"));
	cr_expect(strstr(mock.log, "FI_CXI_DEVICE_NAME") == NULL, "%s", mock.log);
}

/* The site's nic_env=off holds against a user's nic_env=on: no card
   variable set or said on the nodes (srun says the refusal). */
Test(spank_glue, gpu_step_keeps_the_sites_nic_env_off)
{
	gpu_step_site = "nic_env=off";
	gpu_card_task("cxi", ",nic_env=on,verbose=1", 0);
	gpu_step_site = NULL;
	cr_expect_not_null(set_value("TREEMATCH_NIC"), "%s", mock.log);
	cr_expect_null(set_value("FI_CXI_DEVICE_NAME"), "%s", mock.log);
	cr_expect(strstr(mock.log, "FI_CXI_DEVICE_NAME") == NULL, "%s", mock.log);
}

/* ConstrainDevices: Slurm numbers the step's GPUs 1 and 3 as 0 and 1. */
Test(spank_glue, gpu_step_numbers_as_the_task_sees_them)
{

	gpu_step("1,3", "0,1", "");
	for (int t = 0; t < 2; t++) {
		const char *cvd, *gpus;

		gpu_task_init(t);
		cvd = set_value("CUDA_VISIBLE_DEVICES");
		gpus = set_value("TREEMATCH_GPUS");
		cr_assert_not_null(cvd, "%s", mock.log);
		cr_assert_not_null(gpus);
		cr_expect(!strcmp(gpus, "1") || !strcmp(gpus, "3"), "%s", gpus);
		cr_expect_eq(atoi(cvd), atoi(gpus) == 1 ? 0 : 1, "GPU %s numbered %s", gpus, cvd);
		cr_expect_eq(atoi(set_value("TREEMATCH_CPUS")), gpu_cpu(atoi(gpus)));
	}
}

/* --gpu-bind=map_gpu:3,0: Slurm's GPUs kept (its variables untouched), the
   CPUs and cards follow them. */
Test(spank_glue, gpu_step_follows_slurms_binding)
{
	static const int want[2] = {3, 0};

	gpu_step("0,1,2,3", "0,1,2,3", ",verbose=1");
	job_setenv("SLURMD_TRES_BIND", "gpu:map_gpu:3,0");
	for (int t = 0; t < 2; t++) {
		gpu_task_init(t);
		cr_expect_null(set_value("CUDA_VISIBLE_DEVICES"), "task %d: Slurm's variable set",
		               t);
		cr_assert_not_null(set_value("TREEMATCH_GPUS"), "%s", mock.log);
		cr_expect_eq(atoi(set_value("TREEMATCH_GPUS")), want[t]);
		cr_expect_eq(atoi(set_value("TREEMATCH_CPUS")), gpu_cpu(want[t]), "task %d", t);
	}
	cr_expect(strstr(mock.log, "Slurm's GPUs, cpus follow") != NULL, "%s", mock.log);
}

/* --gpu-bind=closest with ConstrainDevices: Slurm's binding kept whole. */
Test(spank_glue, gpu_step_keeps_closest_when_devices_are_confined)
{
	cpu_set_t before, after;

	gpu_step("1,3", "0,1", "");
	job_setenv("SLURMD_TRES_BIND", "gpu:closest");
	cr_assert_eq(sched_getaffinity(0, sizeof(before), &before), 0);
	mock.task_id = 0;
	cr_assert_eq(call("slurm_spank_task_init", gpu_argc(), (char **)gpu_argv()), 0, "%s",
	             mock.log);
	cr_assert_eq(sched_getaffinity(0, sizeof(after), &after), 0);
	cr_expect(CPU_EQUAL(&before, &after), "bound although Slurm's binding is kept");
	cr_expect_null(set_value("CUDA_VISIBLE_DEVICES"));
	cr_expect_str_eq(set_value("TREEMATCH_GPUS"), "");
	cr_expect(strstr(mock.log, "closest with ConstrainDevices") != NULL, "%s", mock.log);
}

/* dry_run: said, nothing set but TREEMATCH_*, nothing bound. */
Test(spank_glue, gpu_step_dry_run_reports_only)
{
	cpu_set_t before, after;

	gpu_step("0,1,2,3", "0,1,2,3", ",dry_run=on");
	cr_assert_eq(sched_getaffinity(0, sizeof(before), &before), 0);
	mock.task_id = 1;
	cr_assert_eq(call("slurm_spank_task_init", gpu_argc(), (char **)gpu_argv()), 0, "%s",
	             mock.log);
	cr_assert_eq(sched_getaffinity(0, sizeof(after), &after), 0);
	cr_expect(CPU_EQUAL(&before, &after));
	cr_expect_null(set_value("CUDA_VISIBLE_DEVICES"));
	cr_expect_null(set_value("UCX_NET_DEVICES"));
	cr_expect_null(set_value("OMPI_MCA_btl_openib_if_include"));
	cr_expect_not_null(set_value("TREEMATCH_GPUS"));
	cr_expect(strstr(mock.log, "gpu-bind=MAP - n0, task  1  1") != NULL, "%s", mock.log);
	cr_expect(strstr(mock.log, "not set (dry-run)") != NULL, "%s", mock.log);
	/* what would be set for the card is said */
	cr_expect(strstr(mock.log, "(UCX_NET_DEVICES=mlx5_") != NULL, "%s", mock.log);
}

/* Slurm names a GPU hwloc does not show: one line, Slurm's binding. */
Test(spank_glue, gpu_step_with_an_unknown_gpu_falls_back)
{

	gpu_step("0,9", "0,9", "");
	cr_expect(strstr(mock.log, "SLURM_STEP_GPUS names GPU 9, and this node has 4 GPUs") != NULL,
	          "%s", mock.log);
	cr_expect(strstr(mock.log, "falling back to Slurm's binding") != NULL, "%s", mock.log);
	gpu_task_init(0);
	cr_expect_null(set_value("TREEMATCH_CPUS"));
}

Test(spank_glue, batch_step_is_left_alone)
{
	write_profile(1);
	mock.stepid = 0; /* set again by load_plugin; overridden below */
	load_plugin(S_CTX_REMOTE);
	mock.stepid = 0xfffffffbu;
	mock.nlocal = mock.ntotal = 1;
	cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
	treematch_option()->cb(0, profile_path, 1);
	cr_assert_eq(call("slurm_spank_user_init", 0, NULL), 0);
	mock.task_id = 0;
	cr_assert_eq(call("slurm_spank_task_init", 0, NULL), 0);
	cr_expect_null(set_value("TREEMATCH_CPUS"));
	cr_expect_eq(mock.log[0], '\0', "%s", mock.log);
}

Test(spank_glue, node_problem_falls_back)
{
	/* 9 tasks on 1 core: more than its hardware threads on any machine. */
	write_profile(9);
	remote_step(9, "0", NULL, 0, profile_path);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 0, NULL), 0);
	cr_expect_null(set_value("TREEMATCH_CPUS"));
	cr_expect(strstr(mock.log, "error: treematch: node n0: 9 tasks for ") != NULL, "%s",
	          mock.log);
	cr_expect(strstr(mock.log, "oversubscribed") != NULL, "%s", mock.log);
	cr_expect(strstr(mock.log, "falling back") != NULL, "%s", mock.log);
	cr_expect(strstr(strstr(mock.log, "falling back") + 1, "falling back") == NULL,
	          "said once: %s", mock.log);
}

/* failure=fail: the node's tasks do not start, and the node cancels the
   whole step once, from user_init, so that no task on another node waits
   for this node's (issue 34); failure=fallback cancels nothing. */
Test(spank_glue, node_problem_fails_step_when_asked)
{
	char *argv[] = {"failure=fail"};

	/* a step of two nodes: cancelled once its first task here has ended
	   (slurmstepd has then told srun the node's tasks were launched),
	   never from user_init */
	write_profile(9);
	remote_step(9, "0", argv, 1, profile_path);
	mock.nnodes = 2;
	cr_expect_eq(mock.kills, 0, "cancelled before the launch answer: %s", mock.log);
	mock.task_id = 1;
	cr_expect_eq(call("slurm_spank_task_init", 1, argv), -1);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 1, argv), -1);
	cr_expect(strstr(mock.log, "failure=fail") != NULL, "%s", mock.log);
	cr_expect_eq(mock.kills, 0, "%s", mock.log);
	mock.task_id = 1;
	cr_expect_eq(call("slurm_spank_task_exit", 1, argv), 0);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_exit", 1, argv), 0);
	cr_expect_eq(mock.kills, 1, "cancelled once, from the first task_exit");
	cr_expect_eq(mock.killed_job, 77);
	cr_expect_eq(mock.killed_step, 5);
	cleanup();

	/* one node: its tasks all fail and Slurm ends the step, no cancel */
	write_profile(9);
	remote_step(9, "0", argv, 1, profile_path);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 1, argv), -1);
	cr_expect_eq(call("slurm_spank_task_exit", 1, argv), 0);
	cr_expect_eq(mock.kills, 0, "a one-node step cancelled: %s", mock.log);
	cleanup();

	write_profile(9);
	remote_step(9, "0", NULL, 0, profile_path);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 0, NULL), 0);
	cr_expect_eq(mock.kills, 0, "fallback: the step runs");
}

/* A site store of root's: the root side makes the job user's directory at
   their first step, before anyone else can make it in their name. */
Test(spank_glue, site_store_directory_made_by_the_root_side)
{
	char site[TM_TMP_MAX], arg[TM_TMP_MAX + 16], mine[TM_TMP_MAX + 16];
	char *argv[1] = {arg};
	struct stat st;

	if (geteuid() != 0) { /* only root may give a directory away */
		cr_log_warn("not root: the root side's store directory is not tested");
		return;
	}
	cr_assert_not_null(mkdtemp(tm_tmpname(site, sizeof(site), "test_spank_glue_site_XXXXXX")));
	cr_assert_eq(chmod(site, 0755), 0);
	snprintf(arg, sizeof(arg), "store=%s", site);
	load_plugin(S_CTX_REMOTE);
	mock.uid = 65534;
	mock.gid = 65534;
	mock.stepid = 5;
	cr_assert_eq(call("slurm_spank_init", 1, argv), 0, "%s", mock.log);
	snprintf(mine, sizeof(mine), "%s/65534", site);
	cr_assert_eq(stat(mine, &st), 0, "%s", mock.log);
	cr_expect_eq(st.st_uid, 65534);
	cr_expect_eq(st.st_mode & 07777, 0700);
	/* not for the batch script, nor for root's own jobs */
	cleanup();
	cr_assert_eq(rmdir(mine), 0);
	load_plugin(S_CTX_REMOTE);
	mock.uid = 65534;
	mock.stepid = 0xfffffffb;
	cr_assert_eq(call("slurm_spank_init", 1, argv), 0);
	cr_expect_neq(stat(mine, &st), 0);
	cleanup();
	cr_assert_eq(rmdir(site), 0);
}

/*
 * Learn mode, a recording step: every task records, whatever this node
 * thinks of the store, because srun said so (TREEMATCH_LEARN, for this
 * job and step); a decision of another step is ignored; a node that
 * cannot load the recorder stops the step rather than leave the other
 * nodes' recorded ranks waiting for its own (issue 34).
 */
Test(spank_glue, a_recording_step_records_on_every_node)
{
	static char prog[] = TMATCH_BUILDDIR "/tests/mpi/pattern.mpich";
	static char *cmd[] = {prog, NULL};
	char decision[256], out[300];

	snprintf(decision, sizeof(decision), "1 77 5 record 0123456789abcdef %s/store",
	         tm_tmpdir());
	snprintf(out, sizeof(out), "%s/store/.rec-77.5.yml", tm_tmpdir());
	for (int found = 1; found >= 0; found--) {
		remote_step(2, "0", NULL, 0, "learn");
		mock.argc = 1;
		mock.argv = cmd;
		job_setenv("PATH", "/usr/bin:/bin");
		job_setenv("TREEMATCH_LEARN", decision);
		job_setenv("TREEMATCH_RECORD_LIBDIR",
		           found ? TMATCH_BUILDDIR "/profiler" : "/nonexistent");
		job_setenv("SLURMD_NODENAME", "n7");
		for (int t = 0; t < 2; t++) {
			mock.task_id = t;
			cr_assert_eq(call("slurm_spank_task_init", 0, NULL), found ? 0 : -1, "%s",
			             mock.log);
		}
		if (found) {
			cr_expect_str_eq(set_value("TREEMATCH_RECORD_OUTPUT"), out);
			cr_expect(set_value("LD_PRELOAD") && strstr(set_value("LD_PRELOAD"),
			                                            "libtreematch-record-mpich.so"),
			          "%s", mock.log);
			cr_expect_eq(mock.kills, 0);
		} else {
			cr_expect_null(set_value("LD_PRELOAD"));
			cr_expect(strstr(mock.log, "treematch: learn: n7: srun decided to record"),
			          "the node is named (26.05 does not): %s", mock.log);
			cr_expect(strstr(mock.log, "this node cannot") &&
			              strstr(mock.log, "the step is stopped"),
			          "%s", mock.log);
			/* asked by the tasks, sent once by slurmstepd when the first
			   ends, even in a one-node step (a task apart from the rest) */
			cr_expect_eq(mock.kills, 0, "cancelled from a task before its exec");
			for (int t = 0; t < 2; t++) {
				mock.task_id = t;
				cr_expect_eq(call("slurm_spank_task_exit", 0, NULL), 0);
			}
			cr_expect_eq(mock.kills, 1, "the step is cancelled once");
		}
		cleanup();
	}

	/* another step's decision: not this step's, nothing recorded */
	snprintf(decision, sizeof(decision), "1 77 4 record 0123456789abcdef %s/store",
	         tm_tmpdir());
	remote_step(2, "0", NULL, 0, "learn");
	mock.argc = 1;
	mock.argv = cmd;
	job_setenv("TREEMATCH_LEARN", decision);
	job_setenv("TREEMATCH_RECORD_LIBDIR", TMATCH_BUILDDIR "/profiler");
	mock.task_id = 0;
	cr_assert_eq(call("slurm_spank_task_init", 0, NULL), 0, "%s", mock.log);
	cr_expect_null(set_value("LD_PRELOAD"));
}

Test(spank_glue, admin_default_and_user_off)
{
	char arg[TM_TMP_MAX + 16];
	char *argv[2] = {"default=on", arg};

	write_profile(1);
	snprintf(arg, sizeof(arg), "profile=%s", profile_path);
	remote_step(1, "0", argv, 2, NULL);
	mock.task_id = 0;
	cr_assert_eq(call("slurm_spank_task_init", 2, argv), 0, "%s", mock.log);
	cr_expect_not_null(set_value("TREEMATCH_CPUS"), "admin default applied: %s", mock.log);
	cleanup();

	write_profile(1);
	snprintf(arg, sizeof(arg), "profile=%s", profile_path);
	remote_step(1, "0", argv, 2, "off");
	mock.task_id = 0;
	cr_assert_eq(call("slurm_spank_task_init", 2, argv), 0, "%s", mock.log);
	cr_expect_null(set_value("TREEMATCH_CPUS"), "user's off ignored");
}

/* ------------------------------------------------------------------------ */
/* Hostile users: the root side parses nothing they wrote                    */

/* As root, the job belongs to nobody (the helper must become it); else to
   the tester, who has no root to lose. */
static void job_of_nobody(void)
{
	if (geteuid() == 0) {
		mock.uid = 65534;
		mock.gid = 65534;
	}
}

/* slurmstepd's root side for one node of a step of `nnodes` nodes, with
   the job's environment saying `nodelist`; its CPU time and peak-RSS
   growth in *cpu and *rss_kib. */
static void hostile_step(int nlocal, int nnodes, const char *nodelist, char **argv, int argc,
                         const char *user_value, double *cpu, long *rss_kib)
{
	struct spank_option *o;
	long rss0;
	double cpu0;

	load_plugin(S_CTX_REMOTE);
	job_of_nobody();
	mock.nnodes = (uint32_t)nnodes;
	mock.nlocal = (uint32_t)nlocal;
	mock.ntotal = (uint32_t)(nlocal * nnodes);
	if (nodelist)
		job_setenv("SLURM_STEP_NODELIST", nodelist);
	rss0 = maxrss_kib();
	cpu0 = cpu_self();
	cr_assert_eq(call("slurm_spank_init", argc, argv), 0);
	o = treematch_option();
	cr_assert_eq(o->cb(o->val, user_value, 1), 0);
	cr_assert_eq(call("slurm_spank_init_post_opt", argc, argv), 0);
	cr_assert_eq(call("slurm_spank_user_init", argc, argv), 0, "%s", mock.log);
	*cpu = cpu_self() - cpu0;
	*rss_kib = maxrss_kib() - rss0;
}

/* The targets: 0.2 s of CPU and 16 MiB over the baseline. */
#define ROOT_SIDE_CHEAP(cpu, rss)                                                                  \
	do {                                                                                       \
		cr_expect_lt((cpu), 0.2, "root side CPU %.3f s", (cpu));                           \
		cr_expect_leq((rss), 16 * 1024, "root side peak RSS +%ld KiB", (rss));             \
	} while (0)

static void make_public(const char *path)
{
	cr_assert_eq(chmod(path, 0644), 0);
}

Test(spank_glue, forged_node_list_costs_the_root_side_nothing)
{
	double cpu;
	long rss;

	write_profile(2);
	make_public(profile_path);
	hostile_step(1, 2, "n[0-999999]", NULL, 0, profile_path, &cpu, &rss);
	ROOT_SIDE_CHEAP(cpu, rss);
	mock.task_id = 0;
	cr_assert_eq(call("slurm_spank_task_init", 0, NULL), 0, "%s", mock.log);
	/* placed all the same, under no name the forged list gave */
	cr_expect_not_null(set_value("TREEMATCH_CPUS"), "%s", mock.log);
	cr_expect_null(strstr(mock.log, "error"), "%s", mock.log);
}

Test(spank_glue, huge_profile_is_parsed_only_in_the_helper, .timeout = 120)
{
	enum { RANKS = 1048576 };
	/* room for the parse under AddressSanitizer on a busy machine (~10 s) */
	char *argv[] = {"max_map_time=60"};
	double cpu;
	long rss;

	tm_tmpname(profile_path, sizeof(profile_path), "test_spank_glue_XXXXXX");
	write_file(profile_path, "");
	make_public(profile_path);
	cr_assert_eq(write_ring_profile(profile_path, RANKS), 0);
	hostile_step(1, 2, "n[0-1]", argv, 1, profile_path, &cpu, &rss);
	ROOT_SIDE_CHEAP(cpu, rss);
	/* 1,048,576 ranks for a 2-task step: the user's profile, the policy's
	   fallback, one line naming the node */
	cr_expect_not_null(strstr(mock.log, "error: treematch: n0: "), "%s", mock.log);
	cr_expect_not_null(strstr(mock.log, "1048576"), "%s", mock.log);
	cr_expect_not_null(strstr(mock.log, "falling back"), "%s", mock.log);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 1, argv), 0);
	cr_expect_null(set_value("TREEMATCH_CPUS"));
}

/* Each bad profile, under each policy: one line, fallback or a failed step. */
Test(spank_glue, malformed_profiles_end_in_the_configured_policy, .timeout = 60)
{
	static const char *const bodies[] = {
	    "\x7f"
	    "ELF\x02\x01\x01\x00\xff\xfe",
	    "format: comm-profile\nversion: 1\nranks: 2\nmetrics: [bytes]\nedges:\n  - [0, ",
	    "format: comm-profile\nversion: 1\nranks: 99999999999999999999999999\n",
	    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
	};
	char *fail_argv[] = {"failure=fail"};
	double cpu;
	long rss;

	for (size_t b = 0; b < sizeof(bodies) / sizeof(bodies[0]) + 1; b++) {
		for (int policy = 0; policy < 2; policy++) {
			const char *path = "/dev/zero"; /* and last, a device */

			if (b < sizeof(bodies) / sizeof(bodies[0])) {
				snprintf(profile_path, sizeof(profile_path),
				         "/tmp/test_spank_glue_XXXXXX");
				write_file(profile_path, bodies[b]);
				make_public(profile_path);
				path = profile_path;
			}
			hostile_step(1, 1, "n0", policy ? fail_argv : NULL, policy, path, &cpu,
			             &rss);
			ROOT_SIDE_CHEAP(cpu, rss);
			mock.task_id = 0;
			cr_expect_eq(
			    call("slurm_spank_task_init", policy, policy ? fail_argv : NULL),
			    policy ? -1 : 0, "body %zu policy %d: %s", b, policy, mock.log);
			cr_expect_null(set_value("TREEMATCH_CPUS"));
			cr_expect_not_null(strstr(mock.log, "error: treematch: n0: "), "%s",
			                   mock.log);
			cr_expect_not_null(
			    strstr(mock.log, policy ? "(failure=fail" : "falling back"),
			    "body %zu: %s", b, mock.log);
			cleanup();
		}
	}
}

Test(spank_glue, profile_is_opened_as_the_jobs_user)
{
	double cpu;
	long rss;

	write_profile(1);
	cr_assert_eq(chmod(profile_path, 0), 0); /* root could read it; the job's user not */
	hostile_step(1, 1, "n0", NULL, 0, profile_path, &cpu, &rss);
	cr_expect_not_null(strstr(mock.log, "Permission denied"), "%s", mock.log);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 0, NULL), 0);
	cr_expect_null(set_value("TREEMATCH_CPUS"));
}

Test(spank_glue, odd_items_and_values_end_in_the_policy)
{
	char *fail_argv[] = {"failure=fail"};
	char *longv = malloc(5001);
	double cpu;
	long rss;

	cr_assert_not_null(longv);
	memset(longv, 'a', 5000);
	longv[5000] = '\0';
	/* a value too long to be a file name: the user asked, it cannot be done */
	write_profile(1);
	hostile_step(1, 1, "n0", NULL, 0, longv, &cpu, &rss);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 0, NULL), -1, "%s", mock.log);
	cr_expect_not_null(strstr(mock.log, "longer than 4096 bytes"), "%s", mock.log);
	cleanup();
	free(longv);

	/* more local tasks than any node has: refused before anything runs;
	   MaxTasksPerNode's 65,536 on one core: the helper runs, says so */
	for (int c = 0; c < 2; c++) {
		int nlocal = c ? 65536 : 100000;

		write_profile(nlocal);
		make_public(profile_path);
		hostile_step(nlocal, 1, "n0", fail_argv, 1, profile_path, &cpu, &rss);
		ROOT_SIDE_CHEAP(cpu, rss);
		cr_expect_not_null(strstr(mock.log, c ? "node n0: 65536 tasks for "
		                                      : "Slurm gave 100000 local tasks"),
		                   "%s", mock.log);
		mock.task_id = 0;
		cr_expect_eq(call("slurm_spank_task_init", 1, fail_argv), -1);
		cleanup();
	}
}

/* Finding 7 of issue 33: without S_JOB_UID and S_JOB_GID the root side
   fell back to getuid() (0) and ran the helper as root, which read a
   profile only root may read. No helper now: the policy's fallback, or
   failure=fail. */
Test(spank_glue, no_helper_without_the_jobs_user_from_slurm)
{
	char *fail_argv[] = {"failure=fail"};

	for (int policy = 0; policy < 2; policy++) {
		struct spank_option *o;

		write_profile(1);
		cr_assert_eq(chmod(profile_path, 0600), 0); /* root's: the job's user cannot */
		load_plugin(S_CTX_REMOTE);
		job_of_nobody();
		mock.no_job_user = 1;
		mock.nlocal = mock.ntotal = 1;
		job_setenv("SLURM_STEP_NODELIST", "n0");
		cr_assert_eq(call("slurm_spank_init", policy, fail_argv), 0);
		o = treematch_option();
		cr_assert_eq(o->cb(o->val, profile_path, 1), 0);
		cr_assert_eq(call("slurm_spank_init_post_opt", policy, fail_argv), 0);
		cr_assert_eq(call("slurm_spank_user_init", policy, fail_argv), 0, "%s", mock.log);
		mock.task_id = 0;
		cr_expect_eq(call("slurm_spank_task_init", policy, fail_argv), policy ? -1 : 0,
		             "%s", mock.log);
		cr_expect_null(set_value("TREEMATCH_CPUS"), "placed as someone: %s", mock.log);
		cr_expect_not_null(strstr(mock.log, "error: treematch: node 0: Slurm does not give "
		                                    "the job's user and group"),
		                   "%s", mock.log);
		cleanup();
	}
}

/* A file only root may read, in a directory of its own. */
static void write_root_file(char *path, size_t len, char *dir, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(path, 0600), 0);
}

/* Finding 8 of issue 33: Slurm 22.05 to 26.05 call user_init with the job
   user's effective uid, and the root side opened the admin file and
   topology.conf there: a 0600 admin file gave "Permission denied" and the
   site's policy was lost. They are read at init, as root; user_init runs
   here as Slurm's drop_privileges leaves it (setegid, seteuid). */
Test(spank_glue, admin_files_are_read_before_slurm_drops_the_effective_uid)
{
	char dir[] = "/tmp/test_spank_glue_etc_XXXXXX", admin[96], conf[96], tconf[96], xml[96],
	     arg_admin[128], arg_xml[128], cmd[160];
	char *argv[2] = {arg_admin, arg_xml};
	struct spank_option *o;
	hwloc_topology_t topo;
	const char *pos;

	if (geteuid() != 0)
		cr_skip_test("dropping the effective uid as slurmstepd does needs root");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0700), 0);
	/* the site's policy: a dry run; its switches; its node (4 cores) */
	write_root_file(admin, sizeof(admin), dir, "treematch.conf", "dry_run=on\n");
	write_root_file(conf, sizeof(conf), dir, "slurm.conf", "ClusterName=test\n");
	write_root_file(tconf, sizeof(tconf), dir, "topology.conf", "SwitchName=s0 Nodes=n[0-1]\n");
	snprintf(xml, sizeof(xml), "%s/node.xml", dir);
	cr_assert_eq(hwloc_topology_init(&topo), 0);
	cr_assert_eq(hwloc_topology_set_synthetic(topo, "pack:2 core:2 pu:1"), 0);
	cr_assert_eq(hwloc_topology_load(topo), 0);
	cr_assert_eq(hwloc_topology_export_xml(topo, xml, 0), 0);
	hwloc_topology_destroy(topo);
	cr_assert_eq(chmod(xml, 0600), 0);
	snprintf(arg_admin, sizeof(arg_admin), "admin_file=%s", admin);
	snprintf(arg_xml, sizeof(arg_xml), "topology_xml=%s", xml);
	setenv("SLURM_CONF", conf, 1);

	write_profile(2);
	make_public(profile_path);
	load_plugin(S_CTX_REMOTE);
	job_of_nobody();
	mock.nnodes = 2;
	mock.nlocal = 1;
	mock.ntotal = 2;
	job_setenv("SLURM_STEP_NODELIST", "n[0-1]");
	cr_assert_eq(call("slurm_spank_init", 2, argv), 0, "%s", mock.log); /* as root */
	o = treematch_option();
	cr_assert_eq(o->cb(o->val, profile_path, 1), 0);
	cr_assert_eq(call("slurm_spank_init_post_opt", 2, argv), 0);
	cr_assert_eq(setegid(65534), 0);
	cr_assert_eq(seteuid(65534), 0);
	cr_expect_eq(call("slurm_spank_user_init", 2, argv), 0, "%s", mock.log);
	cr_assert_eq(seteuid(0), 0);
	cr_assert_eq(setegid(0), 0);
	unsetenv("SLURM_CONF");
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 2, argv), 0, "%s", mock.log);
	cr_expect_null(strstr(mock.log, "error"), "%s", mock.log);
	cr_expect_str_eq(set_value("TREEMATCH_DRY_RUN") ? set_value("TREEMATCH_DRY_RUN") : "-", "1",
	                 "the admin file's dry_run=on was lost: %s", mock.log);
	pos = set_value("TREEMATCH_POSITION");
	cr_expect(pos && strstr(pos, "switch=") && strstr(pos, "package="),
	          "topology.conf's switch or the XML's packages missing: %s (%s)", pos ? pos : "-",
	          mock.log);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* --treematch-record with a value of 8000 bytes, given in context ctx. */
static void overlong_record_value(spank_context_t ctx)
{
	char *longv = malloc(8001);
	struct spank_option *o = NULL;

	cr_assert_not_null(longv);
	memset(longv, 'r', 8000);
	longv[8000] = '\0';
	load_plugin(ctx);
	mock.nlocal = mock.ntotal = 1;
	cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
	for (int i = 0; i < mock.nopts; i++)
		if (strcmp(mock.opts[i].name, "treematch-record") == 0)
			o = &mock.opts[i];
	cr_assert_not_null(o);
	cr_assert_eq(o->cb(o->val, longv, ctx == S_CTX_REMOTE), 0);
	free(longv);
}

/* srun: refused before anything runs (status 1, an optional plugin too) */
Test(spank_glue, overlong_record_value_stops_srun, .exit_code = 1)
{
	overlong_record_value(S_CTX_LOCAL);
	call("slurm_spank_init_post_opt", 0, NULL);
	cr_assert_fail("srun not stopped");
}

/* the node: the root side keeps nothing; the task (as the user) fails
   with the reason */
Test(spank_glue, overlong_record_value_is_not_kept_by_the_root_side)
{
	overlong_record_value(S_CTX_REMOTE);
	cr_assert_eq(call("slurm_spank_init_post_opt", 0, NULL), 0);
	mock.task_id = 0;
	cr_expect_eq(call("slurm_spank_task_init", 0, NULL), -1);
	cr_expect_not_null(strstr(mock.log, "longer than"), "%s", mock.log);
}

/* ------------------------------------------------------------------------ */

static char *read_man(void)
{
	FILE *f = fopen(TMATCH_SRCDIR "/spank/treematch.8", "r");
	char *text;
	long len;

	cr_assert_not_null(f, "spank/treematch.8 missing");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = calloc(1, (size_t)len + 1);
	cr_assert_not_null(text);
	cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return text;
}

/* groff escapes '-' as "\-" and '_' needs none; look for the plain key
   either way. */
static int documented(const char *man, const char *word)
{
	char esc[128];
	size_t j = 0;

	if (strstr(man, word))
		return 1;
	for (size_t i = 0; word[i] && j + 2 < sizeof(esc); i++) {
		if (word[i] == '-')
			esc[j++] = '\\';
		esc[j++] = word[i];
	}
	esc[j] = '\0';
	return strstr(man, esc) != NULL;
}

Test(spank_glue, man_page_documents_everything)
{
	char *man = read_man();
	static const char *const extra[] = {
	    "admin_file",
	    "helper=",
	    "TREEMATCH_RANK",
	    "TREEMATCH_CPUS",
	    "TREEMATCH_CPU_MASK",
	    "TREEMATCH_LEVELS",
	    "TREEMATCH_INDEX",
	    "TREEMATCH_COUNT",
	    "TREEMATCH_POSITION",
	    "TREEMATCH_MAPPER",
	    "TREEMATCH_DRY_RUN",
	    "OMP_NUM_THREADS",
	    "OMP_PLACES",
	    "OMP_PROC_BIND",
	    "plugstack.conf",
	    "off",
	    "help",
	};

	load_plugin(S_CTX_LOCAL);
	cr_assert_eq(call("slurm_spank_init", 0, NULL), 0);
	cr_assert_gt(mock.nopts, 0);
	for (int i = 0; i < mock.nopts; i++) {
		char opt[96];

		snprintf(opt, sizeof(opt), "--%s", mock.opts[i].name);
		cr_expect(documented(man, opt), "option %s not in treematch(8)", opt);
	}
	for (const char *const *k = tmatch_config_keys(); *k; k++) {
		char item[96];

		snprintf(item, sizeof(item), "%s=", *k);
		cr_expect(documented(man, item), "argument %s not in treematch(8)", item);
	}
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		cr_expect(documented(man, extra[i]), "%s not in treematch(8)", extra[i]);
	free(man);
}
