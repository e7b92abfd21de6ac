/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inputs.c - how every front end turns a --topology SPEC or a profile file
 * into the mapping core's objects, in one place.
 *
 *   SPEC: "tleaf h a0 c0 ..."          treematch/ (tmatch_topo_from_tleaf)
 *         "synthetic:<hwloc string>"   affinity/
 *         "xml:<file>"                 affinity/
 *         "local"                      affinity/
 *         "cluster:<topology file>,<nodelist>,<node topology>"  affinity/
 *   FILE: *.mtx, *.mat                 treematch/ (tmatch_comm_load)
 *         *.yml, *.yaml                profile/ (through tmatch_place_comm)
 *         a compiled profile (any name: recognised by its first bytes), whole
 *         or only some ranks' rows (tmatch_place_comm_load_ranks)
 */
#include "placement/placement_private.h"
#include "conf/topology.h"
#include "placement/inputs.h"
#include "placement/matrix.h"
#include "placement/node.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/*
 * affinity/ specs. A node spec is "synthetic:<hwloc string>", "xml:<file>" or
 * "local"; a cluster spec is "cluster:<topology file>,<nodelist>,<node spec>"
 * where the topology file (topology.yaml: its cluster default; or
 * topology.conf) may be empty or "none" (one flat switch) and the node
 * list is a Slurm hostlist (its commas inside brackets are part of it).
 */
int tmatch_place_node_spec(const char *spec, tmatch_affinity_opts_t *o, tmatch_error_t *err)
{
	if (!spec || !o)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_place_node_spec: NULL");
	if (!strncmp(spec, "synthetic:", 10)) {
		o->source = TMATCH_AFFINITY_SRC_SYNTHETIC;
		o->input = spec + 10;
	} else if (!strncmp(spec, "xml:", 4)) {
		o->source = TMATCH_AFFINITY_SRC_XML;
		o->input = spec + 4;
	} else if (!strcmp(spec, "local")) {
		o->source = TMATCH_AFFINITY_SRC_LIVE;
		o->use_current_binding = 1; /* stay inside what this shell may use */
	} else {
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "unknown node topology '%.64s': give "
		                        "synthetic:<hwloc string>, xml:FILE or local",
		                        spec);
	}
	return 0;
}

/* What the XML child sends: 'X' and the export, or 'E', errno and the error. */
#define XML_CHILD_MAX_BYTES ((size_t)64 << 20)

__attribute__((noreturn)) static void xml_child(void *arg, int fd)
{
	const tmatch_affinity_opts_t *o = arg;
	tmatch_error_t e;
	size_t len = 0;
	char *x;

	tmatch_error_clear(&e);
	x = tmatch_affinity_xml_export(o, &len, &e);
	if (x) {
		if (tmatch__write_all(fd, "X", 1) < 0 || tmatch__write_all(fd, x, len) < 0)
			_exit(1);
	} else {
		int code = errno ? errno : EINVAL;

		if (tmatch__write_all(fd, "E", 1) < 0 ||
		    tmatch__write_all(fd, &code, sizeof(code)) < 0 ||
		    tmatch__write_all(fd, &e, sizeof(e)) < 0)
			_exit(1);
	}
	_exit(0);
}

/* hwloc's export of the XML file of opts, made by a child (see
   tmatch_place_node_load): a buffer the caller frees, the export at
   buf + 1 (*len bytes, NUL-terminated). NULL with err. */
static char *xml_via_child(const tmatch_affinity_opts_t *opts, size_t *len, tmatch_error_t *err)
{
	tmatch__sandbox_t sb;
	tmatch_error_t e;
	size_t got = 0, cap = XML_CHILD_MAX_BYTES + 1 + sizeof(int) + sizeof(e);
	char *buf;

	if (!(buf = malloc(cap + 1))) {
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	memset(&sb, 0, sizeof(sb));
	sb.filter = 1;
	sb.max_time = 10;
	sb.max_memory = (size_t)1 << 30;
	sb.max_result = cap;
	sb.what = "XML reader";
	tmatch_error_clear(&e);
	if (tmatch__sandbox_run(&sb, xml_child, (void *)opts, buf, &got, &e) < 0) {
		tmatch_error_set(err, errno, opts->input, 0, 0,
		                 "hwloc could not read this XML topology: %s; check it with "
		                 "lstopo --input FILE, or write it again with lstopo FILE.xml",
		                 e.msg);
	} else if (got > 0 && buf[0] == 'X') {
		buf[got] = '\0';
		*len = got - 1;
		return buf;
	} else if (got == 1 + sizeof(int) + sizeof(e) && buf[0] == 'E') {
		int code;

		memcpy(&code, buf + 1, sizeof(code));
		memcpy(&e, buf + 1 + sizeof(code), sizeof(e));
		e.file[sizeof(e.file) - 1] = '\0';
		e.msg[sizeof(e.msg) - 1] = '\0';
		if (err)
			*err = e;
		errno = code > 0 && code < 4096 ? code : EINVAL;
	} else {
		tmatch_error_set(err, EPROTO, opts->input, 0, 0,
		                 "the XML reader process sent no result");
	}
	free(buf);
	return NULL;
}

tmatch_affinity_tree_t *tmatch_place_node_load(const tmatch_affinity_opts_t *opts,
                                               tmatch_error_t *err)
{
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *tree;
	size_t len = 0;
	char *buf;

	if (!opts || opts->source != TMATCH_AFFINITY_SRC_XML || !opts->input || opts->xml_buffer)
		return tmatch_affinity_node_load(opts, err);
	if (!(buf = xml_via_child(opts, &len, err)))
		return NULL;
	o = *opts;
	o.xml_buffer = buf + 1;
	o.xml_len = len;
	tree = tmatch_affinity_node_load(&o, err);
	free(buf);
	return tree;
}

tmatch_affinity_tree_t *tmatch_place_node_tree_load(const char *spec, int nlocal, int cpus_per_task,
                                                    int io, int *smt, tmatch_error_t *err)
{
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *tree;
	size_t len = 0;
	char *buf = NULL;

	tmatch_affinity_opts_init(&o);
	o.cpus_per_task = cpus_per_task;
	o.io = io;
	if (tmatch_place_node_spec(spec, &o, err) < 0)
		return NULL;
	if (o.source == TMATCH_AFFINITY_SRC_XML) {
		if (!(buf = xml_via_child(&o, &len, err)))
			return NULL;
		o.xml_buffer = buf + 1;
		o.xml_len = len;
	}
	tree = tmatch_place_node_tree(&o, nlocal, smt, err);
	free(buf);
	return tree;
}

tmatch_affinity_tree_t *tmatch_place_tree_load(const char *spec, const tmatch_affinity_opts_t *base,
                                               const char *conf_path, const char *nodes,
                                               tmatch_error_t *err)
{
	tmatch_affinity_opts_t o;
	tmatch_affinity_tree_t *node = NULL, *cluster = NULL;
	tmatch_affinity_conf_t *conf = NULL;
	char *copy = NULL;

	if (base)
		o = *base;
	else
		tmatch_affinity_opts_init(&o);
	if (!strncmp(spec, "cluster:", 8)) {
		char *p, *nl, *nt;
		int depth = 0;
		copy = strdup(spec + 8);
		if (!copy) {
			tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			return NULL;
		}
		nl = strchr(copy, ',');
		nt = NULL;
		if (nl) {
			*nl++ = '\0';
			for (p = nl; *p; p++) {
				if (*p == '[')
					depth++;
				else if (*p == ']')
					depth--;
				else if (*p == ',' && depth == 0) {
					*p = '\0';
					nt = p + 1;
					break;
				}
			}
		}
		if (!nl || !nt || !*nl) {
			tmatch_error_set(
			    err, EINVAL, NULL, 0, 0,
			    "cluster topology needs cluster:<topology.yaml or "
			    ".conf>,<nodelist>,<node "
			    "topology>, e.g. cluster:topology.conf,n[1-4],synthetic:pack:2 core:8");
			goto out;
		}
		conf_path = (*copy && strcmp(copy, "none") != 0) ? copy : NULL;
		nodes = nl;
		spec = nt;
	}
	if (tmatch_place_node_spec(spec, &o, err) < 0)
		goto out;
	node = tmatch_place_node_load(&o, err);
	if (!node || !nodes) {
		cluster = node;
		node = NULL;
		goto out;
	}
	if (conf_path && !(conf = tmatch_conf_topology_load(conf_path, err)))
		goto out;
	cluster = tmatch_affinity_cluster_build(conf, nodes, node, NULL, err);
out:
	tmatch_affinity_conf_destroy(conf);
	tmatch_affinity_tree_destroy(node);
	free(copy);
	return cluster;
}

int tmatch_place_network_find(const char *override, const char *slurm_conf, const char *partition,
                              tmatch_place_network_t *net)
{
	memset(net, 0, sizeof(*net));
	if (override && !strcmp(override, "none"))
		return 0;
	net->path = tmatch_conf_topology_find(override, slurm_conf, 1);
	if (!net->path && errno == ENOMEM)
		return -1;
	/* slurm.conf's Topology= keys: none when it cannot be read */
	net->slurm_conf =
	    tmatch_conf_slurm_read(slurm_conf && *slurm_conf ? slurm_conf : NULL, NULL);
	net->sel.slurm_conf = net->slurm_conf;
	net->sel.slurm_conf_name = slurm_conf && *slurm_conf ? slurm_conf : "/etc/slurm/slurm.conf";
	net->sel.partition = partition && *partition ? partition : NULL;
	return 0;
}

void tmatch_place_network_clear(tmatch_place_network_t *net)
{
	if (!net)
		return;
	free(net->path);
	free(net->slurm_conf);
	memset(net, 0, sizeof(*net));
}

tmatch_topo_t *tmatch_place_topo_load(const char *spec, tmatch_error_t *err)
{
	if (!spec || !*spec) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "empty --topology: give a tleaf string, "
		                 "synthetic:..., xml:FILE, local or cluster:...");
		return NULL;
	}
	if (!strncmp(spec, "tleaf", 5) || (spec[0] >= '0' && spec[0] <= '9'))
		return tmatch_topo_from_tleaf(spec, err);
	if (!strncmp(spec, "synthetic:", 10) || !strncmp(spec, "xml:", 4) ||
	    !strcmp(spec, "local") || !strncmp(spec, "cluster:", 8)) {
		tmatch_affinity_tree_t *tree = tmatch_place_tree_load(spec, NULL, NULL, NULL, err);
		tmatch_topo_t *topo = tree ? tmatch_affinity_tree_topo_dup(tree, err) : NULL;
		tmatch_affinity_tree_destroy(tree);
		return topo;
	}
	tmatch_error_set(err, EINVAL, NULL, 0, 0,
	                 "unknown topology '%.64s': give a tleaf string (\"tleaf 2 4 1 8 1\"), "
	                 "synthetic:<hwloc string>, xml:FILE, local or cluster:CONF,NODES,NODETOPO",
	                 spec);
	return NULL;
}

/* 1 if the file at path starts like a compiled profile (any name). */
static int is_compiled(const char *path)
{
	char head[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), ok = 0;

	if (fd >= 0) {
		ok = pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
		     tmatch_profile_is_compiled(head, sizeof(head));
		close(fd);
	}
	return ok;
}

tmatch_comm_t *tmatch_place_comm_load_ranks(const char *path, const int *ranks, int n,
                                            tmatch_log_fn log, void *log_arg, tmatch_error_t *err)
{
	tmatch_comm_t *full, *sub;
	int fd;

	if (path && is_compiled(path)) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			tmatch_error_set(err, errno, path, 0, 0, "cannot open: %s",
			                 strerror(errno));
			return NULL;
		}
		sub = tmatch_profile_compiled_comm(fd, path, ranks, n, -1,
		                                   tmatch_place_comm_sets(-1), NULL, err);
		close(fd);
		return sub;
	}
	full = tmatch_place_comm_load(path, log, log_arg, err);
	if (!full)
		return NULL;
	sub = tmatch_comm_submatrix(full, ranks, n, err);
	tmatch_comm_destroy(full);
	return sub;
}

tmatch_comm_t *tmatch_place_comm_load(const char *path, tmatch_log_fn log, void *log_arg,
                                      tmatch_error_t *err)
{
	return tmatch_place_comm_load_metric(path, log, log_arg, NULL, err);
}

tmatch_comm_t *tmatch_place_comm_load_metric(const char *path, tmatch_log_fn log, void *log_arg,
                                             int *metric, tmatch_error_t *err)
{
	tmatch_profile_t *p;
	tmatch_comm_t *comm;

	if (metric)
		*metric = -1;
	if (!path) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_place_comm_load: NULL path");
		return NULL;
	}
	if (tmatch_matrix_format_of(path))
		return tmatch_comm_load(path, err);
	if (!has_suffix(path, ".yml") && !has_suffix(path, ".yaml") && !is_compiled(path)) {
		tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                 "%.200s: unknown profile format: use .yml/.yaml, .mtx, .mat or "
		                 "a compiled profile (treematch profile compile)",
		                 path);
		return NULL;
	}
	/* the profile's placement metric and the edges the plugin counts (as
	   tmatch_place_comm(p, -1, -1)), read straight into its matrix */
	if (!metric)
		return tmatch_profile_load_comm(path, NULL, -1, tmatch_place_comm_sets(-1), log,
		                                log_arg, err);
	/* draw: the metric's name too */
	p = tmatch_profile_load(path, NULL, log, log_arg, err);
	if (!p)
		return NULL;
	comm = tmatch_place_comm(p, -1, -1, err);
	if (!comm && err && !err->file[0])
		snprintf(err->file, sizeof(err->file), "%s", path);
	if (comm)
		*metric = (int)tmatch_profile_placement_metric(p);
	tmatch_profile_destroy(p);
	return comm;
}
