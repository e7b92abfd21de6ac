/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology.c - which of Slurm's network files describes the cluster, found
 * where Slurm finds it (topology.yaml before topology.conf, beside
 * slurm.conf), read whole within bounds, told apart and handed to its
 * reader (topology_yaml.c, topology_conf.c) with slurm.conf's say on it
 * (slurm_conf.c). The readers give affinity/'s network
 * (tmatch_affinity_conf_t).
 */
#include "conf/conf_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* topology.yaml by its name (.yaml, .yml), topology.conf by .conf, else by
   the text: YAML starts with "---", "- " or "key:", topology.conf with
   Key=Value. */
static int is_yaml(const char *name, const char *text)
{
	const char *p = text;
	size_t word;

	if (name && (ends_with(name, ".yaml") || ends_with(name, ".yml")))
		return 1;
	if (name && ends_with(name, ".conf"))
		return 0;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p != '#')
			break;
		p += strcspn(p, "\n");
	}
	if (!strncmp(p, "---", 3) || *p == '-' || *p == '{' || *p == '[')
		return 1;
	word = strcspn(p, "=: \t\r\n");
	return p[word] == ':';
}

tmatch_affinity_conf_t *tmatch_conf_topology_parse_sel(const char *text, const char *name,
                                                       const tmatch_conf_topo_sel_t *sel,
                                                       tmatch_error_t *err)
{
	struct tmatch_affinity_slurm_topo st;
	tmatch_affinity_conf_t *conf = NULL;
	const char *file = name ? name : "<string>";

	memset(&st, 0, sizeof(st));
	if (!text) {
		tmatch_error_set(err, EINVAL, file, 0, 0, "no topology text");
		return NULL;
	}
	if (sel && sel->slurm_conf &&
	    tmatch__slurm_topo_parse(sel->slurm_conf,
	                             sel->slurm_conf_name ? sel->slurm_conf_name : "slurm.conf",
	                             sel->partition, &st, err) < 0)
		return NULL;
	if (is_yaml(name, text)) {
		conf = tmatch__topo_yaml_parse(text, strlen(text), file, sel, &st, err);
	} else if (sel && sel->topology && strcmp(sel->topology, "default") != 0) {
		tmatch_error_set(err, EINVAL, file, 0, 0,
		                 "topology '%.64s' asked for, but a topology.conf describes one "
		                 "network, named 'default'",
		                 sel->topology);
	} else {
		conf = tmatch__topo_conf_parse(text, file, &st, err);
	}
	tmatch__slurm_topo_clear(&st);
	return conf;
}

tmatch_affinity_conf_t *tmatch_conf_topology_parse(const char *text, const char *name,
                                                   tmatch_error_t *err)
{
	return tmatch_conf_topology_parse_sel(text, name, NULL, err);
}

char *tmatch_conf_topology_find(const char *override, const char *slurm_conf, int yaml)
{
	static const char *const names[2] = {"topology.yaml", "topology.conf"};
	const char *conf = slurm_conf && *slurm_conf ? slurm_conf : "/etc/slurm/slurm.conf";
	const char *slash;
	char *path = NULL;

	if (override && *override) {
		if (!(path = strdup(override)))
			errno = ENOMEM;
		return path;
	}
	slash = strrchr(conf, '/');
	for (int i = yaml ? 0 : 1; i < 2; i++) {
		if (asprintf(&path, "%.*s/%s", slash ? (int)(slash - conf) : 1, slash ? conf : ".",
		             names[i]) < 0) {
			errno = ENOMEM;
			return NULL;
		}
		if (access(path, R_OK) == 0)
			return path;
		free(path);
		path = NULL;
	}
	errno = ENOENT;
	return NULL;
}

/* Either file whole: 64 MiB at most, no NUL byte. */
#define MAX_TOPOLOGY_FILE ((size_t)64 << 20)

tmatch_affinity_conf_t *tmatch_conf_topology_load_sel(const char *path,
                                                      const tmatch_conf_topo_sel_t *sel,
                                                      tmatch_error_t *err)
{
	size_t len = 0;
	char *text;
	tmatch_affinity_conf_t *conf = NULL;

	if (!path) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "no topology file path");
		return NULL;
	}
	/* regular files only: a FIFO would hang */
	text = tmatch_file_read(path, MAX_TOPOLOGY_FILE, &len, err);
	if (!text)
		return NULL;
	if (strlen(text) != len)
		tmatch_error_set(err, EINVAL, path, 0, 0, "contains a NUL byte: not a text file");
	else
		conf = tmatch_conf_topology_parse_sel(text, path, sel, err);
	free(text);
	return conf;
}

tmatch_affinity_conf_t *tmatch_conf_topology_load(const char *path, tmatch_error_t *err)
{
	return tmatch_conf_topology_load_sel(path, NULL, err);
}
