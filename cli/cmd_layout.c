/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_layout.c - `treematch layout`: a communication-aware rank-to-node
 * layout for an allocation, as a hostfile for srun --distribution=arbitrary.
 *
 * Why a hostfile: inside a step Slurm decides which node each rank goes to
 * before any SPANK hook runs, and SLURM_HOSTFILE set from srun's own hooks
 * is ignored. Set before srun, with --distribution=arbitrary, it is obeyed
 * (Slurm 22.05 and later). So the global placement is computed here, before
 * srun; the SPANK plugin (srun --treematch=profile.yml) then binds the ranks
 * inside each node as usual.
 *
 * The mapping: the profile's ranks onto the allocation's tree of switches
 * (topology.conf) over nodes over task slots, each node offering as many
 * slots as Slurm gives it tasks (the affinity module's cluster tree with a
 * per-node capacity), with the default mapper or --mapper.
 *
 * --stats prints the traffic per level (same node, same leaf switch, across
 * switches) of this layout next to Slurm's block and cyclic layouts of the
 * same tasks. --exec runs a command (normally srun ...) with SLURM_HOSTFILE
 * set to a temporary hostfile, SLURM_DISTRIBUTION=arbitrary, and
 * SLURM_NTASKS/SLURM_NPROCS/SLURM_NNODES set to the layout's task and node
 * counts (srun reads them as -n and -N; inside sbatch they would hold the
 * job's), waits for it and removes the file.
 */
#include "affinity/affinity.h"
#include "cli/cli.h"
#include "placement/inputs.h"
#include "treematch/treematch.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: treematch layout --profile FILE [--nodes HOSTLIST] [--topology-conf FILE]\n"
	    "                        [--tasks-per-node SPEC] [--ntasks N] [--mapper NAME]\n"
	    "                        [--node-topology SPEC] [--seed N] [--stats] [-o FILE]\n"
	    "                        [--exec COMMAND [ARGS...]]\n"
	    "\n"
	    "Compute which node each rank should run on so that heavy talkers share a node\n"
	    "or a switch, and print it as a hostfile (one node name per rank, in rank order)\n"
	    "for srun --distribution=arbitrary:\n"
	    "\n"
	    "  treematch layout --profile app.yml > hosts\n"
	    "  SLURM_HOSTFILE=hosts srun --distribution=arbitrary --treematch=app.yml ./app\n"
	    "\n"
	    "or in one step (see also treematch-srun(1)):\n"
	    "\n"
	    "  treematch layout --profile app.yml --exec srun --treematch=app.yml ./app\n"
	    "\n"
	    "options:\n"
	    "  -p, --profile FILE        communication profile (.yml, .yaml, .mtx, .mat)\n"
	    "  -N, --nodes HOSTLIST      the allocation's nodes (default $SLURM_JOB_NODELIST)\n"
	    "  -c, --topology-conf FILE  Slurm topology.conf (default: $TREEMATCH_TOPOLOGY_CONF,\n"
	    "                            else topology.conf beside $SLURM_CONF, else\n"
	    "                            /etc/slurm/topology.conf; none found = one switch)\n"
	    "  -t, --tasks-per-node SPEC tasks each node may run, in Slurm's syntax: \"4\" for\n"
	    "                            all, \"2(x3),1\" or \"4,4,2\" per node (default\n"
	    "                            $SLURM_TASKS_PER_NODE when it holds the tasks, else\n"
	    "                            $SLURM_JOB_CPUS_PER_NODE / $SLURM_CPUS_PER_TASK)\n"
	    "  -n, --ntasks N            ranks to place (default: the profile's; more ranks\n"
	    "                            than the profile are placed as silent ranks)\n"
	    "  -M, --mapper NAME         mapper (default %s)\n"
	    "  -T, --node-topology SPEC  the inside of a node, synthetic:... or xml:FILE\n"
	    "                            (default: one level of task slots)\n"
	    "  -s, --seed N              seed of the mapper (default 1)\n"
	    "  -S, --stats               traffic per level vs Slurm's block and cyclic layouts\n"
	    "                            (to stderr, or stdout when -o is given)\n"
	    "  -o, --output FILE         write the hostfile there (default stdout)\n"
	    "  -x, --exec COMMAND ...    run COMMAND with SLURM_HOSTFILE and\n"
	    "                            SLURM_DISTRIBUTION=arbitrary, SLURM_NTASKS and\n"
	    "                            SLURM_NNODES set; must come last\n"
	    "  -h, --help                this help\n",
	    TMATCH_DEFAULT_MAPPER);
}

/* ------------------------------------------------------------------------ */
/* Tasks per node                                                           */

/*
 * Parse Slurm's tasks-per-node syntax into cap[0..nnodes-1]: "4" (every
 * node), "2(x3),1", "4,4,2". Returns 0, or -1 with a message in err.
 */
static int parse_tasks_per_node(const char *spec, int nnodes, int *cap, char *err, size_t len)
{
	const char *p = spec;
	int filled = 0;

	if (!spec || !*spec) {
		snprintf(err, len, "empty tasks-per-node");
		return -1;
	}
	while (*p) {
		char *end;
		long v, times = 1;
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > INT_MAX) {
			snprintf(err, len,
			         "tasks-per-node '%.64s', column %d: expected a count such as 4, "
			         "2(x3) or 4,4,2",
			         spec, (int)(p - spec) + 1);
			return -1;
		}
		p = end;
		if (*p == '(') {
			if (p[1] != 'x') {
				snprintf(err, len,
				         "tasks-per-node '%.64s', column %d: expected (xN) after a "
				         "count",
				         spec, (int)(p - spec) + 1);
				return -1;
			}
			errno = 0;
			times = strtol(p + 2, &end, 10);
			if (end == p + 2 || errno || times < 1 || *end != ')') {
				snprintf(
				    err, len,
				    "tasks-per-node '%.64s', column %d: expected (xN) with N >= 1",
				    spec, (int)(p - spec) + 1);
				return -1;
			}
			p = end + 1;
		}
		if (*p == ',')
			p++;
		else if (*p) {
			snprintf(err, len, "tasks-per-node '%.64s', column %d: unexpected '%c'",
			         spec, (int)(p - spec) + 1, *p);
			return -1;
		}
		/* a single plain count applies to every node */
		if (filled == 0 && !*p && times == 1 && !strchr(spec, '(') && !strchr(spec, ','))
			times = nnodes;
		if (times > nnodes - filled) {
			snprintf(err, len, "tasks-per-node '%.64s' gives more than the %d nodes",
			         spec, nnodes);
			return -1;
		}
		for (long k = 0; k < times; k++)
			cap[filled++] = (int)v;
	}
	if (filled != nnodes) {
		snprintf(err, len, "tasks-per-node '%.64s' gives %d nodes, the node list has %d",
		         spec, filled, nnodes);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Slurm's own layouts                                                      */

/* Block: node 0 takes ranks until it is full, then node 1, ... */
static int layout_block(int ntasks, int nnodes, const int *cap, int *node_of_rank)
{
	int node = 0, used = 0;
	for (int r = 0; r < ntasks; r++) {
		while (node < nnodes && used >= cap[node]) {
			node++;
			used = 0;
		}
		if (node == nnodes)
			return -1;
		node_of_rank[r] = node;
		used++;
	}
	return 0;
}

/* Cyclic: one rank per node in turn, skipping full nodes. */
static int layout_cyclic(int ntasks, int nnodes, const int *cap, int *node_of_rank)
{
	int *used = calloc((size_t)nnodes, sizeof(int)), node = 0, rc = -1;
	if (!used)
		return -1;
	for (int r = 0; r < ntasks; r++) {
		int tries = 0;
		while (used[node] >= cap[node] && tries < nnodes) {
			node = (node + 1) % nnodes;
			tries++;
		}
		if (tries == nnodes)
			goto out;
		node_of_rank[r] = node;
		used[node]++;
		node = (node + 1) % nnodes;
	}
	rc = 0;
out:
	free(used);
	return rc;
}

/* Traffic (sum over unordered pairs) on the same node, under the same leaf
   switch, and across switches. */
struct level_traffic {
	double node, sw, across, total;
};

static void traffic_per_level(const tmatch_comm_t *comm, const int *node_of_rank,
                              const int *switch_of_node, struct level_traffic *t)
{
	int n = tmatch_comm_order(comm);
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < n; i++) {
		const int *cols;
		const double *w;
		int deg = tmatch_comm_row(comm, i, &cols, &w);
		for (int k = 0; k < deg; k++) {
			int j = cols[k], a, b;
			if (j <= i)
				continue;
			a = node_of_rank[i];
			b = node_of_rank[j];
			if (a == b)
				t->node += w[k];
			else if (switch_of_node[a] == switch_of_node[b])
				t->sw += w[k];
			else
				t->across += w[k];
			t->total += w[k];
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Default topology.conf: env, beside SLURM_CONF, /etc/slurm. NULL = none. */
static const char *default_topology_conf(char *buf, size_t len)
{
	const char *env = getenv("TREEMATCH_TOPOLOGY_CONF"), *sc = getenv("SLURM_CONF");
	if (env && *env)
		return env;
	if (sc && *sc) {
		const char *slash = strrchr(sc, '/');
		if (slash) {
			snprintf(buf, len, "%.*s/topology.conf", (int)(slash - sc), sc);
			if (file_exists(buf))
				return buf;
		}
	}
	if (file_exists("/etc/slurm/topology.conf")) {
		snprintf(buf, len, "/etc/slurm/topology.conf");
		return buf;
	}
	return NULL;
}

static int sum_caps(const int *cap, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += cap[i];
	return s > INT_MAX ? INT_MAX : (int)s;
}

/*
 * Capacities from the environment: SLURM_TASKS_PER_NODE when it holds
 * ntasks, else SLURM_JOB_CPUS_PER_NODE / SLURM_CPUS_PER_TASK.
 */
static int caps_from_env(int nnodes, int ntasks, int *cap, char *err, size_t len)
{
	const char *tpn = getenv("SLURM_TASKS_PER_NODE"), *cpn = getenv("SLURM_JOB_CPUS_PER_NODE");
	const char *cpt = getenv("SLURM_CPUS_PER_TASK");
	int per = cpt && atoi(cpt) > 0 ? atoi(cpt) : 1;

	if (tpn && parse_tasks_per_node(tpn, nnodes, cap, err, len) == 0 &&
	    sum_caps(cap, nnodes) >= ntasks)
		return 0;
	if (cpn && parse_tasks_per_node(cpn, nnodes, cap, err, len) == 0) {
		for (int i = 0; i < nnodes; i++)
			cap[i] /= per;
		return 0;
	}
	snprintf(err, len,
	         "give --tasks-per-node (no usable SLURM_TASKS_PER_NODE or "
	         "SLURM_JOB_CPUS_PER_NODE in the environment)");
	return -1;
}

/* The profile with `ntasks` ranks: extra ranks are silent. */
static tmatch_comm_t *widen(const tmatch_comm_t *comm, int ntasks, tmatch_error_t *err)
{
	int n = tmatch_comm_order(comm);
	size_t nnz = tmatch_comm_nnz(comm), e = 0;
	int *src = malloc((nnz ? nnz : 1) * sizeof(int)),
	    *dst = malloc((nnz ? nnz : 1) * sizeof(int));
	double *w = malloc((nnz ? nnz : 1) * sizeof(double));
	tmatch_comm_t *out = NULL;

	if (!src || !dst || !w) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		errno = ENOMEM;
		goto done;
	}
	for (int i = 0; i < n; i++) {
		const int *cols;
		const double *ws;
		int deg = tmatch_comm_row(comm, i, &cols, &ws);
		for (int k = 0; k < deg; k++)
			if (cols[k] > i) { /* each pair once: the weight is the pair's total */
				src[e] = i;
				dst[e] = cols[k];
				w[e++] = ws[k];
			}
	}
	out = tmatch_comm_from_edges(ntasks, e, src, dst, w, err);
done:
	free(src);
	free(dst);
	free(w);
	return out;
}

/* ------------------------------------------------------------------------ */
/* --exec                                                                   */

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static int run_with_hostfile(const char *hostfile_text, long ntasks, int nnodes_used, char **cmd)
{
	char path[4096];
	const char *tmp = getenv("TMPDIR");
	struct sigaction sa;
	int fd, status = 0;
	size_t len = strlen(hostfile_text);
	pid_t pid;

	snprintf(path, sizeof(path), "%s/treematch-hosts.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		tmatch_cli_error("cannot create a hostfile in %s: %s", tmp && *tmp ? tmp : "/tmp",
		                 strerror(errno));
		return 1;
	}
	if (write(fd, hostfile_text, len) != (ssize_t)len || close(fd) != 0) {
		tmatch_cli_error("%s: write failed: %s", path, strerror(errno));
		unlink(path);
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		tmatch_cli_error("fork: %s", strerror(errno));
		unlink(path);
		return 1;
	}
	if (pid == 0) {
		char num[32];
		setenv("SLURM_HOSTFILE", path, 1);
		setenv("SLURM_DISTRIBUTION", "arbitrary", 1);
		/* srun reads these as -n and -N: inside sbatch they hold the job's
		   values, which need not match the layout's */
		snprintf(num, sizeof(num), "%ld", ntasks);
		setenv("SLURM_NTASKS", num, 1);
		setenv("SLURM_NPROCS", num, 1);
		snprintf(num, sizeof(num), "%d", nnodes_used);
		setenv("SLURM_NNODES", num, 1);
		execvp(cmd[0], cmd);
		tmatch_cli_error("cannot run '%s': %s", cmd[0], strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(path);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* ------------------------------------------------------------------------ */

static void print_stats(FILE *out, const char *label, const struct level_traffic *t)
{
	double tot = t->total > 0 ? t->total : 1;
	fprintf(out, "%-10s %14.6g %6.2f%% %14.6g %6.2f%% %14.6g %6.2f%%\n", label, t->node,
	        100 * t->node / tot, t->sw, 100 * t->sw / tot, t->across, 100 * t->across / tot);
}

int tmatch_cli_layout(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"profile", required_argument, NULL, 'p'},
	    {"nodes", required_argument, NULL, 'N'},
	    {"topology-conf", required_argument, NULL, 'c'},
	    {"tasks-per-node", required_argument, NULL, 't'},
	    {"ntasks", required_argument, NULL, 'n'},
	    {"mapper", required_argument, NULL, 'M'},
	    {"node-topology", required_argument, NULL, 'T'},
	    {"seed", required_argument, NULL, 's'},
	    {"stats", no_argument, NULL, 'S'},
	    {"output", required_argument, NULL, 'o'},
	    {"exec", no_argument, NULL, 'x'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *profile = NULL, *nodes = getenv("SLURM_JOB_NODELIST"), *conf_path = NULL;
	const char *tpn = NULL, *mapper = NULL, *node_spec = NULL, *output = NULL;
	long ntasks = -1, seed = 1;
	int stats = 0, exec_at = -1, c, rc = 1, nnodes = 0, nslots, n;
	char confbuf[4096], msg[512], ebuf[1024], synth[64], **names = NULL, *text = NULL;
	char *usednodes = NULL;
	int *cap = NULL, *leaf_of_rank = NULL, *node_tl = NULL, *node_block = NULL,
	    *node_cyclic = NULL, *switch_of_node = NULL;
	tmatch_error_t err;
	tmatch_comm_t *comm = NULL, *wide = NULL;
	tmatch_affinity_conf_t *conf = NULL;
	tmatch_affinity_tree_t *node_tree = NULL, *cluster = NULL;
	tmatch_affinity_opts_t aopts;
	tmatch_map_opts_t mopts;
	const tmatch_topo_t *topo;
	FILE *out = stdout, *sout = stderr;

	tmatch_error_clear(&err);
	/* --exec ends the options: everything after it is the command */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--exec") || !strcmp(argv[i], "-x")) {
			exec_at = i;
			break;
		}
	optind = 1;
	while ((c = getopt_long(exec_at > 0 ? exec_at : argc, argv, "p:N:c:t:n:M:T:s:So:h",
	                        longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'p':
			profile = optarg;
			break;
		case 'N':
			nodes = optarg;
			break;
		case 'c':
			conf_path = optarg;
			break;
		case 't':
			tpn = optarg;
			break;
		case 'n':
			errno = 0;
			ntasks = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || ntasks < 1 || ntasks > INT_MAX) {
				tmatch_cli_error("--ntasks '%s': expected a positive integer",
				                 optarg);
				return 2;
			}
			break;
		case 'M':
			mapper = optarg;
			break;
		case 'T':
			node_spec = optarg;
			break;
		case 's':
			errno = 0;
			seed = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || seed < 0) {
				tmatch_cli_error("--seed '%s': expected a non-negative integer",
				                 optarg);
				return 2;
			}
			break;
		case 'S':
			stats = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < (exec_at > 0 ? exec_at : argc)) {
		tmatch_cli_error("unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (exec_at > 0 && exec_at + 1 >= argc) {
		tmatch_cli_error("--exec needs a command, e.g. --exec srun ./app");
		return 2;
	}
	if (!profile) {
		tmatch_cli_error("layout needs --profile FILE");
		usage(stderr);
		return 2;
	}
	if (!nodes || !*nodes) {
		tmatch_cli_error("layout needs --nodes HOSTLIST (or run it inside an allocation, "
		                 "where SLURM_JOB_NODELIST is set)");
		return 2;
	}
	if (mapper && tmatch_map_check_name(mapper, &err)) {
		tmatch_cli_error("%s", err.msg);
		return 2;
	}
	if (!conf_path)
		conf_path = default_topology_conf(confbuf, sizeof(confbuf));
	else if (!strcmp(conf_path, "none"))
		conf_path = NULL;

	/* The profile. */
	comm = tmatch_cli_load_profile(profile, &err);
	if (!comm) {
		tmatch_cli_error("%s", tmatch_error_format(&err, ebuf, sizeof(ebuf)));
		goto out;
	}
	n = tmatch_comm_order(comm);
	if (ntasks < 0)
		ntasks = n;
	if (ntasks < n) {
		tmatch_cli_error("--ntasks %ld is less than the %d ranks of %s", ntasks, n,
		                 profile);
		rc = 2;
		goto out;
	}
	if (ntasks > n) {
		wide = widen(comm, (int)ntasks, &err);
		if (!wide) {
			tmatch_cli_error("%s", err.msg);
			goto out;
		}
	}

	/* Nodes and their capacities. */
	names = tmatch_affinity_hostlist_expand(nodes, &nnodes, &err);
	if (!names) {
		tmatch_cli_error("--nodes: %s", err.msg);
		rc = 2;
		goto out;
	}
	cap = calloc((size_t)nnodes, sizeof(int));
	if (!cap) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	if (tpn ? parse_tasks_per_node(tpn, nnodes, cap, msg, sizeof(msg))
	        : caps_from_env(nnodes, (int)ntasks, cap, msg, sizeof(msg))) {
		tmatch_cli_error("%s", msg);
		rc = 2;
		goto out;
	}
	/* Nodes given no task take no part (a capacity of 0 means "all" below). */
	{
		size_t need = 1;
		int k = 0;
		for (int i = 0; i < nnodes; i++)
			need += strlen(names[i]) + 1;
		usednodes = malloc(need);
		if (!usednodes) {
			tmatch_cli_error("out of memory");
			goto out;
		}
		usednodes[0] = '\0';
		for (int i = 0; i < nnodes; i++) {
			if (cap[i] == 0)
				continue;
			if (k)
				strcat(usednodes, ",");
			strcat(usednodes, names[i]);
			cap[k++] = cap[i];
		}
		nnodes = k;
		if (nnodes == 0) {
			tmatch_cli_error("no node may run a task (tasks per node all 0)");
			rc = 2;
			goto out;
		}
	}
	nslots = sum_caps(cap, nnodes);
	if (nslots < ntasks) {
		tmatch_cli_error("%ld ranks do not fit: the %d nodes offer %d task slots", ntasks,
		                 nnodes, nslots);
		rc = 2;
		goto out;
	}

	/* The tree: switches x nodes x slots (or the given node topology). */
	tmatch_affinity_opts_init(&aopts);
	if (node_spec) {
		if (!strncmp(node_spec, "synthetic:", 10)) {
			aopts.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
			aopts.input = node_spec + 10;
		} else if (!strncmp(node_spec, "xml:", 4)) {
			aopts.source = TMATCH_AFFINITY_SRC_XML;
			aopts.input = node_spec + 4;
		} else {
			tmatch_cli_error("--node-topology '%s': give synthetic:<hwloc string> or "
			                 "xml:FILE",
			                 node_spec);
			rc = 2;
			goto out;
		}
	} else {
		int maxcap = 1;
		for (int i = 0; i < nnodes; i++)
			if (cap[i] > maxcap)
				maxcap = cap[i];
		snprintf(synth, sizeof(synth), "core:%d pu:1", maxcap);
		aopts.source = TMATCH_AFFINITY_SRC_SYNTHETIC;
		aopts.input = synth;
	}
	node_tree = tmatch_affinity_node_load(&aopts, &err);
	if (!node_tree) {
		tmatch_cli_error("node topology: %s", err.msg);
		goto out;
	}
	if (conf_path && !(conf = tmatch_affinity_conf_load(conf_path, &err))) {
		tmatch_cli_error("%s", tmatch_error_format(&err, ebuf, sizeof(ebuf)));
		goto out;
	}
	cluster = tmatch_affinity_cluster_build(conf, usednodes, node_tree, cap, &err);
	if (!cluster) {
		tmatch_cli_error("%s", tmatch_error_format(&err, ebuf, sizeof(ebuf)));
		goto out;
	}
	topo = tmatch_affinity_tree_topo(cluster);

	/* Map. */
	leaf_of_rank = malloc((size_t)ntasks * sizeof(int));
	node_tl = malloc((size_t)ntasks * sizeof(int));
	node_block = malloc((size_t)ntasks * sizeof(int));
	node_cyclic = malloc((size_t)ntasks * sizeof(int));
	switch_of_node = calloc((size_t)nnodes, sizeof(int));
	if (!leaf_of_rank || !node_tl || !node_block || !node_cyclic || !switch_of_node) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	tmatch_map_opts_init(&mopts);
	if (mapper)
		mopts.mapper = mapper;
	mopts.seed = (uint64_t)seed;
	if (tmatch_map_compute(wide ? wide : comm, topo, &mopts, leaf_of_rank, &err)) {
		tmatch_cli_error("mapping failed: %s", err.msg);
		goto out;
	}
	for (int r = 0; r < ntasks; r++) {
		node_tl[r] = tmatch_affinity_leaf_node(cluster, leaf_of_rank[r]);
		if (node_tl[r] < 0 || node_tl[r] >= nnodes) {
			tmatch_cli_error("internal error: rank %d on leaf %d has no node", r,
			                 leaf_of_rank[r]);
			goto out;
		}
	}

	/* The hostfile, in rank order. */
	{
		size_t need = 1, pos = 0;
		for (int r = 0; r < ntasks; r++)
			need += strlen(tmatch_affinity_tree_node_name(cluster, node_tl[r])) + 1;
		text = malloc(need);
		if (!text) {
			tmatch_cli_error("out of memory");
			goto out;
		}
		for (int r = 0; r < ntasks; r++) {
			const char *name = tmatch_affinity_tree_node_name(cluster, node_tl[r]);
			size_t l = strlen(name);
			memcpy(text + pos, name, l);
			pos += l;
			text[pos++] = '\n';
		}
		text[pos] = '\0';
	}

	if (stats) {
		struct level_traffic t_tl, t_block, t_cyclic;
		const tmatch_comm_t *cm = wide ? wide : comm;
		int nleaves = tmatch_topo_nb_leaves(topo);
		/* Leaf switch of every node, from a real leaf's position. */
		for (int i = 0; i < nnodes; i++)
			switch_of_node[i] = -1;
		for (int leaf = 0; leaf < nleaves; leaf++) {
			tmatch_affinity_pos_t pos;
			int node = tmatch_affinity_leaf_is_real(cluster, leaf)
			               ? tmatch_affinity_leaf_node(cluster, leaf)
			               : -1;
			if (node < 0 || switch_of_node[node] >= 0)
				continue;
			switch_of_node[node] = 0; /* no switch level: one switch */
			if (tmatch_affinity_leaf_position(cluster, leaf, &pos, &err) == 0)
				for (int l = 0; l < pos.nlevels; l++)
					if (!strcmp(pos.level[l].name, "switch"))
						switch_of_node[node] = pos.level[l].global;
		}
		for (int i = 0; i < nnodes; i++)
			if (switch_of_node[i] < 0)
				switch_of_node[i] = 0; /* a node without slots */
		if (layout_block((int)ntasks, nnodes, cap, node_block) ||
		    layout_cyclic((int)ntasks, nnodes, cap, node_cyclic)) {
			tmatch_cli_error("internal error: block/cyclic layouts do not fit");
			goto out;
		}
		traffic_per_level(cm, node_tl, switch_of_node, &t_tl);
		traffic_per_level(cm, node_block, switch_of_node, &t_block);
		traffic_per_level(cm, node_cyclic, switch_of_node, &t_cyclic);
		if (output)
			sout = stdout;
		fprintf(sout,
		        "# treematch layout: %ld ranks on %d nodes (%d slots), topology %s, "
		        "mapper %s\n",
		        ntasks, nnodes, nslots, conf_path ? conf_path : "none (one switch)",
		        mapper ? mapper : TMATCH_DEFAULT_MAPPER);
		fprintf(sout, "%-10s %14s %7s %14s %7s %14s %7s\n", "# layout", "same-node", "",
		        "same-switch", "", "across-switch", "");
		print_stats(sout, "treematch", &t_tl);
		print_stats(sout, "block", &t_block);
		print_stats(sout, "cyclic", &t_cyclic);
		if (t_block.across > 0)
			fprintf(sout, "# across switches vs block: %+.1f %%, vs cyclic: %+.1f %%\n",
			        100 * (t_tl.across - t_block.across) / t_block.across,
			        t_cyclic.across > 0
			            ? 100 * (t_tl.across - t_cyclic.across) / t_cyclic.across
			            : 0.0);
		else
			fprintf(sout, "# across switches vs block: block has none\n");
		fflush(sout);
	}

	if (exec_at > 0) {
		int used = 0;
		for (int i = 0; i < nnodes; i++) {
			int any = 0;
			for (int r = 0; r < ntasks && !any; r++)
				any = node_tl[r] == i;
			used += any;
		}
		rc = run_with_hostfile(text, ntasks, used, argv + exec_at + 1);
		goto out;
	}
	if (output) {
		out = fopen(output, "w");
		if (!out) {
			tmatch_cli_error("%s: %s", output, strerror(errno));
			goto out;
		}
	}
	if (fputs(text, out) == EOF || (out == stdout ? fflush(out) : fclose(out)) != 0) {
		tmatch_cli_error("%s: write failed", output ? output : "stdout");
		goto out;
	}
	rc = 0;
out:
	free(text);
	free(usednodes);
	free(cap);
	free(leaf_of_rank);
	free(node_tl);
	free(node_block);
	free(node_cyclic);
	free(switch_of_node);
	tmatch_affinity_hostlist_free(names);
	tmatch_affinity_tree_destroy(cluster);
	tmatch_affinity_tree_destroy(node_tree);
	tmatch_affinity_conf_destroy(conf);
	tmatch_comm_destroy(wide);
	tmatch_comm_destroy(comm);
	return rc;
}
