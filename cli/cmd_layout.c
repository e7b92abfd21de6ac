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
 * The mapping (tmatch_place_layout in the placement layer): the profile's
 * ranks onto the allocation's tree of switches (topology.conf) over nodes
 * over task slots, each node offering as many slots as Slurm gives it tasks,
 * with the default mapper or --mapper. This file reads the options and the
 * environment, prints, and runs --exec.
 *
 * --stats prints the traffic per level (same node, same leaf switch, across
 * switches) of this layout next to Slurm's block and cyclic layouts of the
 * same tasks. --exec runs a command (normally srun ...) with SLURM_HOSTFILE
 * set to a temporary hostfile, SLURM_DISTRIBUTION=arbitrary, and
 * SLURM_NTASKS/SLURM_NPROCS/SLURM_NNODES set to the layout's task and node
 * counts (srun reads them as -n and -N; inside sbatch they would hold the
 * job's), waits for it and removes the file.
 */
#include "cli/cli.h"
#include "placement/inputs.h"
#include "placement/layout.h"
#include "placement/learn.h"
#include "placement/plan.h"
#include "placement/site.h"
#include "placement/step.h"
#include "profiler/mpiabi.h"

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
	    "usage: treematch layout --profile FILE | --treematch VALUE [--nodelist HOSTLIST]\n"
	    "                        [--topology-conf FILE] [--topology-name NAME]\n"
	    "                        [--tasks-per-node SPEC] [--ntasks N] [--mapper NAME]\n"
	    "                        [--node-topology SPEC] [--seed N] [--stats] [-o FILE]\n"
	    "                        [--plan FILE [--job-id N] [--step-id N]]\n"
	    "                        [--srun-pid PID] [--exec COMMAND [ARGS...] | -- COMMAND]\n"
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
	    "  -p, --profile FILE        communication profile (.yml, .yaml, .mtx, .mat; -:\n"
	    "                            standard input)\n"
	    "  -w, --nodelist HOSTLIST   the allocation's nodes (default $SLURM_JOB_NODELIST)\n"
	    "      --topology-conf FILE  Slurm's topology.yaml or topology.conf (default:\n"
	    "                            $TREEMATCH_TOPOLOGY_CONF, else topology.yaml, else\n"
	    "                            topology.conf, beside $SLURM_CONF, default\n"
	    "                            /etc/slurm/slurm.conf; none found = one switch)\n"
	    "      --topology-name NAME  the topology of topology.yaml (default: the one of\n"
	    "                            the partition $SLURM_JOB_PARTITION in slurm.conf,\n"
	    "                            else the cluster default)\n"
	    "      --tasks-per-node SPEC tasks each node may run, in Slurm's syntax: \"4\" for\n"
	    "                            all, \"2(x3),1\" or \"4,4,2\" per node (default\n"
	    "                            $SLURM_TASKS_PER_NODE when it holds the tasks, else\n"
	    "                            $SLURM_JOB_CPUS_PER_NODE / $SLURM_CPUS_PER_TASK)\n"
	    "  -n, --ntasks N            ranks to place (default: the profile's; more ranks\n"
	    "                            than the profile are placed as silent ranks)\n"
	    "  -m, --mapper NAME         mapper (default %s)\n"
	    "      --node-topology SPEC  the inside of a node, synthetic:... or xml:FILE\n"
	    "                            (default: one level of task slots)\n"
	    "  -s, --seed N              seed of the mapper (default 1)\n"
	    "      --stats               traffic per level vs Slurm's block and cyclic layouts\n"
	    "                            (to stderr, or stdout when -o is given)\n"
	    "  -o, --output FILE         write the hostfile there (default and -: stdout)\n"
	    "      --plan FILE           also write the step's compiled plan there: each node's\n"
	    "                            plugin then reads only its own slice (give\n"
	    "                            --treematch=PROFILE,plan=FILE, or let --exec set\n"
	    "                            TREEMATCH_PLAN); bound to the job, the nodes given\n"
	    "                            ranks and the profile as it is now\n"
	    "      --job-id N            the job the plan is for (default $SLURM_JOB_ID)\n"
	    "      --step-id N           the step it is for (default: any step of the job)\n"
	    "  -x, --exec COMMAND ...    run COMMAND with SLURM_HOSTFILE and\n"
	    "                            SLURM_DISTRIBUTION=arbitrary, SLURM_NTASKS and\n"
	    "                            SLURM_NNODES set; must come last\n"
	    "      --treematch VALUE     instead of --profile: the profile srun\n"
	    "                            --treematch=VALUE places the step from, read as the\n"
	    "                            plugin reads it over the site's policy (its default\n"
	    "                            profile; learn: the stored profile of the step's\n"
	    "                            program, given after --, at --ntasks); nothing to lay\n"
	    "                            out (off, nothing learned yet): no output, status 0\n"
	    "      --progress[=WHEN]     a progress line on stderr: always, never or auto (when\n"
	    "                            stderr is a terminal, the default)\n"
	    "      --srun-pid PID        the cli_filter's srun: the plan goes beside the profile\n"
	    "                            under the name that srun's plugin removes when srun\n"
	    "                            ends, printed last as treematch-plan=PATH\n"
	    "  -h, --help                this help\n",
	    TMATCH_DEFAULT_MAPPER);
}

/* ------------------------------------------------------------------------ */
/* --exec                                                                   */

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static int run_with_hostfile(const char *hostfile_text, long ntasks, int nnodes_used,
                             const char *plan, char **cmd)
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
		if (plan)
			setenv("TREEMATCH_PLAN", plan, 1);
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

static mode_t umask_now(void)
{
	mode_t m = umask(077);

	umask(m);
	return m;
}

/* The compiled step plan of the layout, written to a temporary file then
   renamed onto path. 0, or 1 with the message printed. */
static int write_plan(const tmatch_place_layout_t *lay, const tmatch_comm_t *comm,
                      const char *profile, const char *path, uint64_t job_id, uint32_t step_id,
                      const char *mapper)
{
	tmatch_place_plan_in_t pin;
	tmatch_error_t err;
	char tmp[4096], **used = NULL;
	int nused = 0, fd, rc = 1;
	unsigned char *has = NULL;
	FILE *f;

	memset(&pin, 0, sizeof(pin));
	tmatch_error_clear(&err);
	f = tmatch_file_open(profile, NULL, &err);
	if (!f || tmatch_place_profile_stamp(fileno(f), profile, TMATCH_PLACE_PLAN_VERSION,
	                                     &pin.bind.profile_size, &pin.bind.profile_mtime_ns,
	                                     &pin.bind.profile_hash, &err) < 0) {
		if (f)
			fclose(f);
		tmatch_cli_report(&err);
		return 1;
	}
	fclose(f);
	/* the nodes given ranks: the step's node list */
	has = calloc((size_t)lay->nnodes, 1);
	used = calloc((size_t)lay->nnodes, sizeof(*used));
	if (!has || !used) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	for (int r = 0; r < lay->ntasks; r++)
		has[lay->node_of_rank[r]] = 1;
	for (int i = 0; i < lay->nnodes; i++)
		if (has[i])
			used[nused++] = lay->node_name[i];
	pin.bind.job_id = job_id;
	pin.bind.step_id = step_id;
	pin.bind.ntasks = (uint32_t)lay->ntasks;
	pin.bind.nodes_hash = tmatch_place_nodes_hash(used, nused);
	pin.bind.node_sig = lay->node_sig;
	snprintf(pin.bind.mapper, sizeof(pin.bind.mapper), "%s",
	         mapper ? mapper : TMATCH_DEFAULT_MAPPER);
	pin.comm = comm;
	pin.nnodes = lay->nnodes;
	pin.node_name = lay->node_name;
	pin.node_of_rank = lay->node_of_rank;
	pin.leaf_of_rank = lay->leaf_in_node;
	pin.prefix = lay->prefix;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		tmatch_cli_error("--plan: the file name is too long");
		goto out;
	}
	if ((fd = mkstemp(tmp)) < 0 || fchmod(fd, 0666 & ~umask_now()) != 0 ||
	    !(f = fdopen(fd, "w"))) {
		tmatch_cli_error("%s: %s", path, strerror(errno));
		goto out;
	}
	if (tmatch_place_plan_write(&pin, f, &err) < 0) {
		fclose(f);
		unlink(tmp);
		tmatch_cli_report(&err);
		goto out;
	}
	if (fsync(fileno(f)) != 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
		tmatch_cli_error("%s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(has);
	free(used);
	return rc;
}

/*
 * --treematch VALUE: the profile the plugin would place a step of ntasks
 * tasks running cmd from. 1 and its path; 0 when there is nothing to lay
 * out (said on stderr; *site_default = 1 when the profile is the site's,
 * which only applies to steps of its size); -1 when the value or the
 * site's configuration is wrong (said).
 */
static int profile_of_value(const char *value, long ntasks, char **cmd, char *path, size_t len,
                            int *site_default)
{
	tmatch_config_t site, cfg;
	tmatch_error_t err;
	char exe[PATH_MAX] = "", cwd[PATH_MAX];
	int rc;

	tmatch_error_clear(&err);
	if (tmatch_place_classify_value(value, &err) != TMATCH_PLACE_VALUE_OPTIONS) {
		if (err.msg[0])
			return tmatch_cli_report(&err), -1;
		tmatch_cli_error("not laid out: --treematch=help runs nothing");
		return 0;
	}
	if (tmatch_place_site_policy(getenv("SLURM_CONF"), &site, &err) < 0 ||
	    tmatch_place_config_user(&site, value, &cfg, &err) < 0)
		return tmatch_cli_report(&err), -1;
	*site_default = !tmatch_place_user_profile(value) && !cfg.learn;
	if (!cfg.enabled) {
		tmatch_cli_error(!strncmp(value, "off", 3) && (!value[3] || value[3] == ',')
		                     ? "not laid out: the step is not placed (--treematch=off)"
		                     : "not laid out: no profile (--treematch names none and the "
		                       "site sets no default)");
		return 0;
	}
	if (cfg.learn) {
		if (ntasks < 1 || !cmd || !cmd[0]) {
			tmatch_cli_error(
			    "learn: give the step's --ntasks and its command after --");
			return -1;
		}
		rc = tmatch_place_learn_find(&cfg, tmatch_mpiabi_program, cmd, getenv("PATH"),
		                             getcwd(cwd, sizeof(cwd)) ? cwd : NULL, (int)ntasks,
		                             NULL, NULL, path, len, exe, sizeof(exe), &err);
		if (rc == 1)
			return 1;
		if (rc == 0)
			tmatch_cli_error("not laid out: learning: nothing stored yet for %s at %ld "
			                 "tasks (this run is recorded)",
			                 exe, ntasks);
		else
			tmatch_cli_error("not laid out: learning: %s", err.msg);
		return 0;
	}
	if (snprintf(path, len, "%s", cfg.profile) >= (int)len)
		return tmatch_cli_error("--treematch: the profile's name is too long"), -1;
	return 1;
}

static void print_stats(FILE *out, const char *label, const tmatch_place_traffic_t *t)
{
	double tot = t->total > 0 ? t->total : 1;
	fprintf(out, "%-10s %14.6g %6.2f%% %14.6g %6.2f%% %14.6g %6.2f%%\n", label, t->node,
	        100 * t->node / tot, t->sw, 100 * t->sw / tot, t->across, 100 * t->across / tot);
}

int tmatch_cli_layout(int argc, char **argv)
{
	enum {
		O_TOPOLOGY_CONF = 256,
		O_TOPOLOGY_NAME,
		O_TASKS_PER_NODE,
		O_NODE_TOPOLOGY,
		O_STATS,
		O_PLAN,
		O_JOB_ID,
		O_STEP_ID,
		O_TREEMATCH,
		O_SRUN_PID,
		O_PROGRESS,
		O_NODES = TMATCH_CLI_OLD_NAME, /* the old name of --nodelist */
	};
	static const struct option longopts[] = {
	    {"profile", required_argument, NULL, 'p'},
	    {"nodelist", required_argument, NULL, 'w'},
	    {"topology-conf", required_argument, NULL, O_TOPOLOGY_CONF},
	    {"topology-name", required_argument, NULL, O_TOPOLOGY_NAME},
	    {"tasks-per-node", required_argument, NULL, O_TASKS_PER_NODE},
	    {"ntasks", required_argument, NULL, 'n'},
	    {"mapper", required_argument, NULL, 'm'},
	    {"node-topology", required_argument, NULL, O_NODE_TOPOLOGY},
	    {"seed", required_argument, NULL, 's'},
	    {"stats", no_argument, NULL, O_STATS},
	    {"output", required_argument, NULL, 'o'},
	    {"plan", required_argument, NULL, O_PLAN},
	    {"job-id", required_argument, NULL, O_JOB_ID},
	    {"step-id", required_argument, NULL, O_STEP_ID},
	    {"exec", no_argument, NULL, 'x'},
	    {"treematch", required_argument, NULL, O_TREEMATCH},
	    {"srun-pid", required_argument, NULL, O_SRUN_PID},
	    {"progress", optional_argument, NULL, O_PROGRESS},
	    {"nodes", required_argument, NULL, O_NODES},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *profile = NULL, *nodes = getenv("SLURM_JOB_NODELIST"), *conf_path = NULL;
	const char *tpn = NULL, *mapper = NULL, *node_spec = NULL, *output = NULL, *plan = NULL;
	const char *job_text = getenv("SLURM_JOB_ID"), *topo_name = NULL, *value = NULL;
	uint32_t step_id = TMATCH_PLAN_ANY_STEP;
	long ntasks = -1, srun_pid = 0;
	char value_profile[PATH_MAX], srun_plan[PATH_MAX + 64];
	int site_default = 0;
	uint64_t seed = 1, num, job_id = 0;
	int stats = 0, exec_at = -1, c, rc = 1, nnodes = 0, n, bad;
	char **names = NULL, *text = NULL, **step_cmd = NULL;
	tmatch_place_network_t net;
	int *cap = NULL;
	tmatch_error_t err;
	tmatch_comm_t *comm = NULL;
	tmatch_place_layout_in_t in;
	tmatch_place_layout_t *lay = NULL;
	FILE *out = stdout, *sout = stderr;

	tmatch_error_clear(&err);
	memset(&net, 0, sizeof(net));
	/* --exec ends the options: everything after it is the command */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (!strcmp(argv[i], "--exec") || !strcmp(argv[i], "-x")) {
			exec_at = i;
			break;
		}
	optind = 1;
	opterr = 0;
	while ((c = tmatch_cli_getopt(exec_at > 0 ? exec_at : argc, argv, "p:w:n:m:s:o:xh",
	                              longopts)) != -1) {
		switch (c) {
		case 'p':
			profile = optarg;
			break;
		case O_NODES:
			tmatch_cli_renamed("layout", "--nodes HOSTLIST",
			                   "--nodelist (-w), as srun's");
			/* fall through */
		case 'w':
			nodes = optarg;
			break;
		case O_TOPOLOGY_CONF:
			conf_path = optarg;
			break;
		case O_TOPOLOGY_NAME:
			topo_name = optarg;
			break;
		case O_TASKS_PER_NODE:
			tpn = optarg;
			break;
		case 'n':
			if (tmatch_cli_number(optarg, INT_MAX, &num) < 0 || num < 1) {
				tmatch_cli_error("--ntasks '%s': expected a positive integer",
				                 optarg);
				return 2;
			}
			ntasks = (long)num;
			break;
		case 'm':
			mapper = optarg;
			break;
		case O_NODE_TOPOLOGY:
			node_spec = optarg;
			break;
		case 's':
			if (tmatch_cli_seed(optarg, &seed) < 0)
				return 2;
			break;
		case O_STATS:
			stats = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case O_PLAN:
			plan = optarg;
			break;
		case O_JOB_ID:
			job_text = optarg;
			break;
		case O_STEP_ID:
			if (tmatch_cli_number(optarg, TMATCH_PLAN_ANY_STEP - 1, &num) < 0) {
				tmatch_cli_error("--step-id '%s': expected a step number", optarg);
				return 2;
			}
			step_id = (uint32_t)num;
			break;
		case O_TREEMATCH:
			value = optarg;
			break;
		case O_SRUN_PID:
			if (tmatch_cli_number(optarg, INT_MAX, &num) < 0 || num < 1) {
				tmatch_cli_error("--srun-pid '%s': expected a process id", optarg);
				return 2;
			}
			srun_pid = (long)num;
			break;
		case O_PROGRESS:
			if (tmatch_cli_progress_option(optarg) < 0) {
				tmatch_cli_error("layout: --progress wants always, never or auto");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return tmatch_cli_bad_option("layout", argv, "p:w:n:m:s:o:xh", longopts);
		}
	}
	/* "-- COMMAND": the step's command (learn mode) */
	if (exec_at < 0 && optind < argc && !strcmp(argv[optind - 1], "--")) {
		step_cmd = argv + optind;
		optind = argc;
	}
	if (optind < (exec_at > 0 ? exec_at : argc)) {
		tmatch_cli_error("unexpected argument '%s'", argv[optind]);
		tmatch_cli_usage_hint("layout");
		return 2;
	}
	if (value && profile) {
		tmatch_cli_error("give --profile or --treematch, not both");
		return 2;
	}
	if (value) {
		int got = profile_of_value(value, ntasks, step_cmd, value_profile,
		                           sizeof(value_profile), &site_default);

		if (got <= 0)
			return got < 0 ? 1 : 0;
		profile = value_profile;
	}
	if (exec_at > 0 && exec_at + 1 >= argc) {
		tmatch_cli_error("--exec needs a command, e.g. --exec srun ./app");
		return 2;
	}
	if (!profile) {
		tmatch_cli_error("layout needs --profile FILE");
		tmatch_cli_usage_hint("layout");
		return 2;
	}
	if (srun_pid > 0 && !plan) {
		/* beside the profile, which the nodes read, when it is writable */
		char dir[PATH_MAX];
		const char *slash = strrchr(profile, '/');
		uint64_t job = 0;

		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - profile) : 1,
		         slash ? profile : ".");
		if (job_text && tmatch_cli_number(job_text, UINT32_MAX, &job) == 0 && job > 0 &&
		    access(dir, W_OK) == 0 &&
		    tmatch_place_plan_srun_path(dir, job, srun_pid, srun_plan, sizeof(srun_plan)) ==
		        0)
			plan = srun_plan;
	}
	if (!nodes || !*nodes) {
		tmatch_cli_error(
		    "layout needs --nodelist HOSTLIST (or run it inside an allocation, "
		    "where SLURM_JOB_NODELIST is set)");
		return 2;
	}
	if (plan &&
	    (!job_text || tmatch_cli_number(job_text, UINT32_MAX, &job_id) < 0 || job_id == 0)) {
		tmatch_cli_error("--plan needs the job it is for: run it inside the allocation "
		                 "(SLURM_JOB_ID) or give --job-id N");
		return 2;
	}
	if (mapper && tmatch_map_check_name(mapper, &err)) {
		tmatch_cli_error("%s", err.msg);
		return 2;
	}
	/* the network as Slurm finds it, the partition's topology */
	if (tmatch_place_network_find(conf_path ? conf_path : getenv("TREEMATCH_TOPOLOGY_CONF"),
	                              getenv("SLURM_CONF"), getenv("SLURM_JOB_PARTITION"),
	                              &net) < 0) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	net.sel.topology = topo_name;
	conf_path = net.path;

	/* The profile ('-' or a pipe: a regular copy, for --plan's stamp too). */
	tmatch_cli_progress("layout: reading %s", profile);
	if (!(profile = tmatch_cli_input(profile, "--profile")))
		goto out;
	comm = tmatch_place_comm_load(profile, tmatch_cli_log, NULL, &err);
	if (!comm) {
		tmatch_cli_report(&err);
		goto out;
	}
	n = tmatch_comm_order(comm);
	if (site_default && ntasks > 0 && ntasks != n) {
		/* the plugin applies a site default only to steps of its size */
		tmatch_cli_error("not laid out: the site's default profile %s has %d ranks, the "
		                 "step %ld tasks",
		                 profile, n, ntasks);
		rc = 0;
		goto out;
	}
	if (ntasks < 0)
		ntasks = n;
	if (ntasks < n) {
		tmatch_cli_error("--ntasks %ld is less than the %d ranks of %s", ntasks, n,
		                 profile);
		rc = 2;
		goto out;
	}

	/* Nodes and their capacities. */
	names = tmatch_affinity_hostlist_expand(nodes, &nnodes, &err);
	if (!names) {
		tmatch_cli_error("--nodelist: %s", err.msg);
		rc = 2;
		goto out;
	}
	cap = calloc((size_t)nnodes, sizeof(int));
	if (!cap) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	if (tpn ? tmatch_place_tasks_per_node(tpn, nnodes, cap, &err)
	        : tmatch_place_caps_from_slurm(
	              getenv("SLURM_TASKS_PER_NODE"), getenv("SLURM_JOB_CPUS_PER_NODE"),
	              getenv("SLURM_CPUS_PER_TASK"), nnodes, (int)ntasks, cap, &err)) {
		tmatch_cli_error("%s", err.msg);
		rc = 2;
		goto out;
	}

	/* The layout. */
	memset(&in, 0, sizeof(in));
	in.comm = comm;
	in.ntasks = (int)ntasks;
	in.nodelist = nodes;
	in.cap = cap;
	in.topology_conf = conf_path;
	in.topology_sel = &net.sel;
	in.node_topology = node_spec;
	in.mapper = mapper;
	in.seed = seed;
	in.plan = plan != NULL;
	in.log = tmatch_cli_log;
	tmatch_cli_progress("layout: mapping %ld ranks onto %d nodes", ntasks, nnodes);
	if (tmatch_place_layout(&in, &lay, &err) < 0) {
		if (errno == EDOM) { /* the request does not fit the allocation */
			tmatch_cli_error("%s", err.msg);
			rc = 2;
		} else {
			tmatch_cli_report(&err);
		}
		goto out;
	}

	/* The hostfile, in rank order. */
	{
		size_t need = 1, pos = 0;
		for (int r = 0; r < ntasks; r++)
			need += strlen(lay->node_name[lay->node_of_rank[r]]) + 1;
		text = malloc(need);
		if (!text) {
			tmatch_cli_error("out of memory");
			goto out;
		}
		for (int r = 0; r < ntasks; r++) {
			const char *name = lay->node_name[lay->node_of_rank[r]];
			size_t l = strlen(name);
			memcpy(text + pos, name, l);
			pos += l;
			text[pos++] = '\n';
		}
		text[pos] = '\0';
	}

	if (plan)
		tmatch_cli_progress("layout: writing the plan %s", plan);
	if (plan && write_plan(lay, comm, profile, plan, job_id, step_id, mapper) != 0)
		goto out;
	tmatch_cli_progress_done();
	if (stats) {
		if (output)
			sout = stdout;
		fprintf(sout,
		        "# treematch layout: %ld ranks on %d nodes (%d slots), topology %s, "
		        "mapper %s\n",
		        ntasks, lay->nnodes, lay->nslots,
		        conf_path ? conf_path : "none (one switch)",
		        mapper ? mapper : TMATCH_DEFAULT_MAPPER);
		fprintf(sout, "%-10s %14s %7s %14s %7s %14s %7s\n", "# layout", "same-node", "",
		        "same-switch", "", "across-switch", "");
		print_stats(sout, "treematch", &lay->traffic);
		print_stats(sout, "block", &lay->block);
		print_stats(sout, "cyclic", &lay->cyclic);
		if (lay->block.across > 0)
			fprintf(sout, "# across switches vs block: %+.1f %%, vs cyclic: %+.1f %%\n",
			        100 * (lay->traffic.across - lay->block.across) / lay->block.across,
			        lay->cyclic.across > 0
			            ? 100 * (lay->traffic.across - lay->cyclic.across) /
			                  lay->cyclic.across
			            : 0.0);
		else
			fprintf(sout, "# across switches vs block: block has none\n");
		fflush(sout);
	}

	if (exec_at > 0) {
		rc = run_with_hostfile(text, ntasks, lay->nodes_used, plan, argv + exec_at + 1);
		goto out;
	}
	if (output && !(out = tmatch_cli_output(output, "w")))
		goto out;
	/* closed (or flushed) whether the write worked or not */
	bad = fputs(text, out) == EOF;
	if (plan == srun_plan)
		bad |= fprintf(out, "treematch-plan=%s\n", plan) < 0;
	/* out is stdout (flushed) or the file fopen gave (closed) */
	// NOLINTNEXTLINE(clang-analyzer-unix.Stream)
	bad |= (out == stdout ? fflush(out) : fclose(out)) != 0;
	if (bad) {
		tmatch_cli_error("%s: write failed", output ? output : "stdout");
		goto out;
	}
	rc = 0;
out:
	free(text);
	free(cap);
	tmatch_place_network_clear(&net);
	tmatch_affinity_hostlist_free(names);
	tmatch_place_layout_destroy(lay);
	tmatch_comm_destroy(comm);
	return rc;
}
