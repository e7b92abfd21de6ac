/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * site.c - a site's configuration of the plugin checked the way the plugin
 * will read it (`treematch config check`): its line in the plugin stack,
 * its arguments, the admin file, the site's default profile, topology XML
 * and store, and topology.conf. Every problem is reported with the file,
 * line and column it is in; nothing is printed here.
 */
#include "placement/placement_private.h"
#include "conf/topology.h"
#include "placement/inputs.h"
#include "conf/plugstack.h"
#include "placement/site.h"
#include "placement/step.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct check {
	tmatch_place_plugstack_problem_fn report;
	void *arg;
	int problems;
};

#define say(c, ...) tmatch__place_report((c)->report, (c)->arg, &(c)->problems, __VA_ARGS__)

static void say_err(struct check *c, const tmatch_error_t *e)
{
	c->problems++;
	if (c->report)
		c->report(c->arg, e);
}

/* An error about the file `path` (named when the error does not). */
static void say_about(struct check *c, tmatch_error_t *e, const char *path)
{
	if (!e->file[0])
		snprintf(e->file, sizeof(e->file), "%.*s", (int)sizeof(e->file) - 1, path);
	say_err(c, e);
}

/* The stack's problems (lines Slurm ignores) count as the check's. */
static void stack_problem(void *arg, const tmatch_error_t *problem)
{
	struct check *c = arg;

	if (c->report)
		c->report(c->arg, problem);
}

/* The plugin's arguments one at a time, so that a problem has its column;
   admin_file= is the plugin's own, not a key of the grammar. */
static void check_arguments(struct check *c, const tmatch_place_plugstack_line_t *l,
                            tmatch_config_t *cfg, tmatch_place_site_t *out)
{
	for (int i = 0; i < l->argc; i++) {
		tmatch_error_t e;

		if (strncmp(l->argv[i], "admin_file=", 11) == 0) {
			snprintf(out->admin_file, sizeof(out->admin_file), "%s", l->argv[i] + 11);
			out->admin_file_column = l->column[i];
			continue;
		}
		tmatch_error_clear(&e);
		if (tmatch_config_parse_argv(cfg, 1, &l->argv[i], l->file, &e) < 0) {
			e.line = l->line;
			e.column = l->column[i];
			say_err(c, &e);
		}
	}
}

/* The admin file: readable by the users (srun reads it as them), written
   by nobody else but its owner (users may not change the site's policy),
   and its items. */
static void check_admin_file(struct check *c, const tmatch_place_plugstack_line_t *l,
                             tmatch_config_t *cfg, const char *path, int column)
{
	struct stat st;
	tmatch_error_t e;
	FILE *f;

	tmatch_error_clear(&e);
	f = tmatch_file_open(path, NULL, &e);
	if (!f) {
		say(c, l->file, l->line, column, "cannot open admin file %s: %s", path,
		    errno == EINVAL ? "not a regular file" : strerror(errno));
		return;
	}
	if (fstat(fileno(f), &st) == 0) {
		if (!(st.st_mode & S_IROTH))
			say(c, path, 0, 0,
			    "srun reads the admin file as the user: make it world-readable "
			    "(chmod 644)");
		if (st.st_mode & (S_IWGRP | S_IWOTH))
			say(c, path, 0, 0,
			    "others than its owner may write the admin file, and change the site's "
			    "policy: chmod 644");
	}
	if (tmatch_config_parse_fd(cfg, fileno(f), path, &e) < 0)
		say_err(c, &e);
	fclose(f);
}

/* What the site's policy names: its default profile, its topology XML, its
   store. */
static void check_policy_files(struct check *c, const tmatch_config_t *cfg)
{
	tmatch_error_t e;

	if (cfg->profile[0]) {
		tmatch_profile_limits_t lim;
		tmatch_profile_t *p;

		tmatch_place_limits(cfg, &lim);
		tmatch_error_clear(&e);
		p = tmatch_profile_load(cfg->profile, &lim, NULL, NULL, &e);
		if (!p)
			say_about(c, &e, cfg->profile);
		tmatch_profile_destroy(p);
	}
	if (cfg->topology_xml[0]) {
		char spec[TMATCH_CONFIG_PATH_MAX + 8];
		tmatch_affinity_tree_t *t;

		snprintf(spec, sizeof(spec), "xml:%s", cfg->topology_xml);
		tmatch_error_clear(&e);
		t = tmatch_place_tree_load(spec, NULL, NULL, NULL, &e);
		if (!t)
			say_about(c, &e, cfg->topology_xml);
		tmatch_affinity_tree_destroy(t);
	}
	if (cfg->store[0]) {
		tmatch_profile_store_t *s;

		tmatch_error_clear(&e);
		/* the site's directory only: a user's own one is made by their jobs */
		s = tmatch_profile_store_open(cfg->store, NULL, NULL, 0, &e);
		if (!s && strcmp(e.file, cfg->store) == 0)
			say_err(c, &e);
		tmatch_profile_store_close(s);
	}
}

static void check_plugin_file(struct check *c, const tmatch_place_plugstack_line_t *l)
{
	if (l->path[0] != '/')
		return; /* Slurm looks for it in PluginDir */
	if (access(l->path, R_OK) != 0)
		say(c, l->file, l->line, l->path_column, "cannot read the plugin %s: %s", l->path,
		    strerror(errno));
}

int tmatch_place_site_check(const char *plugstack, const char *slurm_conf,
                            const char *topology_conf, tmatch_place_plugstack_problem_fn report,
                            void *arg, tmatch_place_site_t *out, tmatch_error_t *err)
{
	tmatch_place_plugstack_line_t *lines = NULL;
	struct check c = {report, arg, 0};
	tmatch_place_site_t site;
	char *stack = NULL, *tconf = NULL;
	int n = 0, rc;

	memset(&site, 0, sizeof(site));
	tmatch_config_init(&site.cfg);
	if (!(stack = plugstack && *plugstack ? strdup(plugstack)
	                                      : tmatch_place_plugstack_find(slurm_conf)))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	snprintf(site.plugstack, sizeof(site.plugstack), "%s", stack);
	rc = tmatch_place_plugstack_read(stack, NULL, &lines, &n, stack_problem, &c, err);
	if (rc < 0) {
		free(stack);
		return -1;
	}
	c.problems += rc;
	site.nlines = n;
	if (n == 0) {
		say(&c, stack, 0, 0,
		    "no line loads treematch.so (here or in the files it includes): the plugin "
		    "is not in Slurm's plugin stack");
	} else {
		const tmatch_place_plugstack_line_t *l = &lines[0];

		site.line = l->line;
		site.required = l->required;
		snprintf(site.line_file, sizeof(site.line_file), "%s", l->file);
		snprintf(site.plugin, sizeof(site.plugin), "%s", l->path);
		check_plugin_file(&c, l);
		check_arguments(&c, l, &site.cfg, &site);
		if (site.admin_file[0])
			check_admin_file(&c, l, &site.cfg, site.admin_file, site.admin_file_column);
		check_policy_files(&c, &site.cfg);
		for (int i = 1; i < n; i++)
			say(&c, lines[i].file, lines[i].line, 1,
			    "treematch.so is loaded again (first at %s:%d): Slurm loads a plugin "
			    "once and this line fails; keep one",
			    l->file, l->line);
	}
	tconf = tmatch_conf_topology_find(topology_conf, slurm_conf, 1);
	if (tconf) {
		tmatch_affinity_conf_t *conf;
		tmatch_error_t e;

		snprintf(site.topology_conf, sizeof(site.topology_conf), "%s", tconf);
		tmatch_error_clear(&e);
		conf = tmatch_conf_topology_load(tconf, &e);
		if (!conf)
			say_err(&c, &e);
		tmatch_affinity_conf_destroy(conf);
	}
	tmatch_place_plugstack_free(lines, n);
	free(stack);
	free(tconf);
	if (out)
		*out = site;
	return c.problems;
}

int tmatch_place_site_policy(const char *slurm_conf, tmatch_config_t *cfg, tmatch_error_t *err)
{
	tmatch_place_plugstack_line_t *lines = NULL;
	const char *admin;
	char *stack;
	int n = 0, fd = -1, rc = 0;

	if (!cfg)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_site_policy: invalid argument");
	if (!(stack = tmatch_place_plugstack_find(slurm_conf)))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	/* no stack, or no line: the built-in defaults, as a site without it */
	if (tmatch_place_plugstack_read(stack, NULL, &lines, &n, NULL, NULL, NULL) < 0 || n == 0) {
		tmatch_config_init(cfg);
		goto out;
	}
	admin = tmatch_place_admin_file(lines[0].argc, lines[0].argv);
	if (admin && (fd = open(admin, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		rc = tmatch_error_set(err, errno, lines[0].file, lines[0].line, 0,
		                      "cannot open admin file %s: %s", admin, strerror(errno));
		goto out;
	}
	if ((rc = tmatch_place_config(lines[0].argc, lines[0].argv, fd, NULL, cfg, err)) < 0)
		tmatch_place_plugstack_where(slurm_conf, lines[0].argc, lines[0].argv, err);
out:
	if (fd >= 0)
		close(fd);
	tmatch_place_plugstack_free(lines, n);
	free(stack);
	return rc;
}
