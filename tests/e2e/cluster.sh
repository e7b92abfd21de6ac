#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# cluster.sh - a real, throwaway Slurm (munge + slurmctld + slurmd) for the
# end-to-end tests and `make demo`. Needs root. Writes nothing under /etc:
# every file lives in the cluster directory (and the munge socket in a
# world-traversable directory under /tmp, which munged insists on).
#
#   cluster.sh start [options]   (re)start a cluster; prints the SLURM_CONF line
#   cluster.sh stop              stop everything it started, by PID
#   cluster.sh status            exit 0 when the cluster answers
#   cluster.sh munge-dir         print the cluster's munge socket directory
#                                (tests/tmp_check.sh: whose /tmp entry it is)
#
# Options (also read from the environment named in brackets):
#   --dir DIR          cluster directory [TMATCH_CLUSTER_DIR; default
#                      $BUILDDIR/e2e/cluster, or /tmp/tmatch-cluster]
#   --nodes 1|4|4lo    one node on loopback; four nodes in network namespaces
#                      on a private bridge under two switches; four slurmd on
#                      loopback (fallback when namespaces are unavailable)
#   --task-plugin P    task/affinity (default) or task/none
#   --cgroup           task/cgroup,task/affinity and proctrack/cgroup with
#                      ConstrainCores: each step confined to its cpuset
#                      cgroup (cgroup v1, or v2 without systemd); start
#                      fails when the host does not allow it
#   --shape SHAPE      declare nodes of this shape instead of `slurmd -C`'s,
#                      e.g. "CPUs=64 Sockets=2 CoresPerSocket=32
#                      ThreadsPerCore=1" (slurmd then runs with
#                      config_overrides; pair it with task/none and a
#                      topology_xml + dry_run plugin setting: benchmarks)
#   --plugstack FILE   copy FILE to the cluster's plugstack.conf (tests may
#                      also rewrite DIR/etc/plugstack.conf between steps:
#                      Slurm reads it again for every srun and every step)
#   --gpus N           a GPU GRES of N stand-in devices (character files
#                      DIR/dev/fakegpuI, major 195 minor I, which no driver
#                      serves), gres.conf AutoDetect=off; with two sockets
#                      each socket's half gets Cores= of that socket
#   --sockets2         one node of two sockets of one core (slurmd sees
#                      hwloc's HWLOC_SYNTHETIC="package:2 core:1 pu:1"; the
#                      machine needs 2 CPUs): GPUs and NICs on both sides
#   --constrain-devices  --cgroup with ConstrainDevices=yes (each step, and
#                      each task Slurm binds GPUs to, confined to its
#                      devices; Slurm then numbers GPUs as the task sees them)
#   --topology FILE    four nodes: copy FILE (topology.yaml or topology.conf,
#                      by its name) next to slurm.conf instead of the
#                      two-switch topology.conf (which stays beside a
#                      topology.yaml: Slurm ignores it then)
#   --topology-plugin P  TopologyPlugin (default topology/tree)
#   --partition-opts S  more keys on the partition's line ("Topology=NAME")
#
# Start is idempotent: a cluster already running in DIR is stopped first.
# Stop is safe to call at any time, any number of times, and never kills a
# process it cannot prove belongs to this cluster.
set -eu

usage() {
	echo "usage: cluster.sh start [--dir D] [--nodes 1|4|4lo] [--task-plugin P] [--cgroup] [--plugstack F]" >&2
	echo "                        [--gpus N] [--sockets2] [--constrain-devices]" >&2
	echo "                        [--topology F] [--topology-plugin P] [--partition-opts S]" >&2
	echo "       cluster.sh stop|status [--dir D]" >&2
	exit 2
}

cmd=${1:-}
[ -n "$cmd" ] || usage
shift
if [ -n "${TMATCH_CLUSTER_DIR:-}" ]; then
	DIR=$TMATCH_CLUSTER_DIR
elif [ -n "${BUILDDIR:-}" ]; then
	DIR=$BUILDDIR/e2e/cluster
else
	DIR=/tmp/tmatch-cluster
fi
NODES=1
TASK_PLUGIN=task/affinity
CGROUP=0
PLUGSTACK=
TOPOLOGY=
TOPOLOGY_PLUGIN=topology/tree
PARTITION_OPTS=
SHAPE=${TMATCH_NODE_SHAPE:-}
GPUS=0
SOCKETS2=0
CONSTRAIN_DEVICES=0
while [ $# -gt 0 ]; do
	case $1 in
	--dir) DIR=$2; shift 2 ;;
	--nodes) NODES=$2; shift 2 ;;
	--task-plugin) TASK_PLUGIN=$2; shift 2 ;;
	--plugstack) PLUGSTACK=$2; shift 2 ;;
	--shape) SHAPE=$2; shift 2 ;;
	--topology) TOPOLOGY=$2; shift 2 ;;
	--topology-plugin) TOPOLOGY_PLUGIN=$2; shift 2 ;;
	--partition-opts) PARTITION_OPTS=$2; shift 2 ;;
	--cgroup) CGROUP=1; shift ;;
	--gpus) GPUS=$2; shift 2 ;;
	--sockets2) SOCKETS2=1; shift ;;
	--constrain-devices) CGROUP=1; CONSTRAIN_DEVICES=1; shift ;;
	*) usage ;;
	esac
done
case $NODES in 1 | 4 | 4lo) ;; *) usage ;; esac
case $GPUS in '' | *[!0-9]*) usage ;; esac
if [ "$GPUS" -gt 0 ] || [ "$SOCKETS2" = 1 ]; then
	[ "$NODES" = 1 ] || { echo "cluster.sh: --gpus and --sockets2 take one node" >&2; exit 2; }
fi
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd -P)
CONF=$DIR/etc/slurm.conf
PIDS=$DIR/pids

# Names derived from the directory, so two clusters (the CI's, a developer's
# demo) never share ports, namespaces, bridge or subnet. Two chroots share
# the host's network but both build in /src: TMATCH_CLUSTER_SALT (set by
# .ci/in-root.sh to the release's name) tells their clusters apart.
HASH=$(printf '%s%s' "$DIR" "${TMATCH_CLUSTER_SALT:-}" | cksum | cut -d' ' -f1)
TAG=$(printf '%05d' $((HASH % 100000)))
# Ports below the kernel's ephemeral range: a port inside it can be held at
# that moment by any client socket on the machine (an srun, munge, the
# other release's cluster in CI) and slurmctld then cannot listen ("Address
# already in use"; CI's Debian 13 cgroup cluster got 33290 and hung).
EPH_LOW=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
SLOTS=$(((EPH_LOW - 20000) / 10))
[ "$SLOTS" -ge 100 ] || SLOTS=1200 # an odd range: keep below 32768 anyway
PORT_BASE=$((20000 + (HASH % SLOTS) * 10))
NET=10.$((100 + HASH % 100)).$((HASH / 100 % 250 + 1))
BRIDGE=tmbr$TAG
NS_PREFIX=tmatch-$TAG-n
MUNGE_DIR=/tmp/tmatch-munge-$TAG
# Job ids apart too: the chroots share the host's cgroup tree, where Slurm's
# cgroup v2 plugin names a job's cgroup by its id alone
# (system.slice/slurmstepd.scope/job_3); forky's job 3 ending killed the task
# of trixie's job 3 (CI, e2e-cgroup, "task 0: Killed").
FIRST_JOB_ID=$((1 + HASH % 60000 * 1000))

log() { echo "cluster: $*" >&2; }

alive() { # pid: 0 when the process exists and is not a zombie
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] &&
		[ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# Stop one process by PID: TERM, wait up to $2 seconds, then KILL.
stop_pid() {
	pid=$1
	alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	n=0
	while alive "$pid" && [ $n -lt $(($2 * 10)) ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if alive "$pid"; then
		kill -KILL "$pid" 2>/dev/null || true
		n=0
		while alive "$pid" && [ $n -lt 50 ]; do
			sleep 0.1
			n=$((n + 1))
		done
	fi
}

stop_pidfile() { # file seconds
	[ -f "$1" ] || return 0
	stop_pid "$(cat "$1")" "$2"
	rm -f "$1"
}

# PIDs of this shell and its ancestors: never touched by the sweep.
ancestors() {
	p=$$
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		echo "$p"
		p=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null || true)
	done
}

# Processes whose environment names this cluster's slurm.conf: srun, sbatch,
# slurmstepd and job tasks left behind. Killed by PID. Only those under the
# same root directory as this shell: CI's two chroots see each other's
# processes in /proc, and both name /src/build/e2e/cluster/etc/slurm.conf.
sweep() {
	keep=$(ancestors)
	myroot=$(stat -L -c %d:%i "/proc/$$/root/" 2>/dev/null || echo '?')
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		case " $(echo $keep) " in *" $pid "*) continue ;; esac
		[ "$(stat -L -c %d:%i "$d/root/" 2>/dev/null)" = "$myroot" ] || continue
		if { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$CONF"; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
}

do_stop() {
	[ -d "$PIDS" ] || return 0
	if [ -f "$CONF" ] && [ -f "$PIDS/slurmctld.pid" ] && alive "$(cat "$PIDS/slurmctld.pid")"; then
		jobs=$(SLURM_CONF=$CONF timeout 10 squeue -h -o %i 2>/dev/null || true)
		if [ -n "$jobs" ]; then
			# shellcheck disable=SC2086
			SLURM_CONF=$CONF timeout 10 scancel $jobs 2>/dev/null || true
		fi
	fi
	for f in "$PIDS"/slurmd-*.pid; do
		[ -e "$f" ] || continue
		stop_pid "$(cat "$f")" 10 &
	done
	wait
	rm -f "$PIDS"/slurmd-*.pid
	for i in 1 2 3 4; do
		ns=$NS_PREFIX$i
		if [ -e "/run/netns/$ns" ]; then
			for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
			ip netns del "$ns" 2>/dev/null || true
		fi
		# The namespace lives on while killed processes are still dying, and
		# its veth with it: deleting the host end removes the pair now, so
		# the next start can make it again.
		if ip link show "tmv$TAG$i" >/dev/null 2>&1; then ip link del "tmv$TAG$i" 2>/dev/null || true; fi
	done
	if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE" 2>/dev/null || true; fi
	sweep
	# task/cgroup: Slurm 22.05 leaves its empty cgroups behind (v1: the
	# cpuset and, with ConstrainDevices, devices hierarchies); rmdir takes
	# only those without tasks or children, so a cluster still running
	# elsewhere keeps its own
	if [ -f "$DIR/cgroup-used" ]; then
		for c in devices cpuset; do
			[ -d "/sys/fs/cgroup/$c/slurm_n0" ] || continue
			find "/sys/fs/cgroup/$c/slurm_n0" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		done
	fi
	rm -f "$DIR/cgroup-used"
	stop_pidfile "$PIDS/slurmctld.pid" 10
	stop_pidfile "$PIDS/munged.pid" 5
	rm -rf "$MUNGE_DIR"
}

write_conf() {
	PROCTRACK=proctrack/linuxproc
	if [ "$CGROUP" = 1 ]; then
		PROCTRACK=proctrack/cgroup
		TASK_PLUGIN=task/cgroup,task/affinity
	fi
	shape=$(slurmd -C | head -n 1)
	field() { printf '%s\n' "$shape" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	cpus=$(field CPUs)
	sockets=$(field SocketsPerBoard)
	cores=$(field CoresPerSocket)
	threads=$(field ThreadsPerCore)
	shape="CPUs=$cpus Sockets=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=1000"
	[ -z "$SHAPE" ] || shape="$SHAPE RealMemory=1000"
	[ "$SOCKETS2" = 0 ] || shape="CPUs=2 Sockets=2 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=1000"
	gres=
	[ "$GPUS" = 0 ] || gres=" Gres=gpu:$GPUS"
	case $NODES in
	4) ctl_addr=$NET.1 ;;
	*) ctl_addr=127.0.0.1 ;;
	esac
	cat >"$CONF" <<EOF
# Generated by tests/e2e/cluster.sh for a throwaway test cluster.
ClusterName=tmatch$TAG
SlurmctldHost=localhost($ctl_addr)
SlurmctldPort=$PORT_BASE
SlurmdPort=$((PORT_BASE + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_DIR/munge.sock
StateSaveLocation=$DIR/state
FirstJobId=$FIRST_JOB_ID
SlurmdSpoolDir=$DIR/spool/%n
TmpFS=$DIR/tmpfs/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=$PROCTRACK
TaskPlugin=$TASK_PLUGIN
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
PlugStackConfig=$DIR/etc/plugstack.conf
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
KillWait=3
InactiveLimit=0
MinJobAge=5
SlurmdTimeout=30
SlurmctldTimeout=30
# Both releases' suites share 2 cores in CI: srun once timed out talking to
# a starved slurmctld at the default 10 s.
MessageTimeout=30
EOF
	[ -z "$SHAPE" ] || echo "SlurmdParameters=config_overrides" >>"$CONF"
	[ "$GPUS" = 0 ] || printf 'GresTypes=gpu\nDebugFlags=Gres\n' >>"$CONF"
	write_gres
	case $NODES in
	1)
		echo "NodeName=n0 NodeHostname=$(hostname) NodeAddr=127.0.0.1 $shape$gres State=UNKNOWN" >>"$CONF"
		;;
	4)
		echo "TopologyPlugin=$TOPOLOGY_PLUGIN" >>"$CONF"
		for i in 1 2 3 4; do
			echo "NodeName=n$i NodeAddr=$NET.$((10 + i)) $shape State=UNKNOWN" >>"$CONF"
		done
		;;
	4lo)
		echo "TopologyPlugin=$TOPOLOGY_PLUGIN" >>"$CONF"
		for i in 1 2 3 4; do
			echo "NodeName=n$i NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=$((PORT_BASE + 1 + i)) $shape State=UNKNOWN" >>"$CONF"
		done
		;;
	esac
	echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP $PARTITION_OPTS" >>"$CONF"
	rm -f "$DIR/etc/topology.yaml" "$DIR/etc/topology.conf"
	if [ "$NODES" != 1 ]; then
		cat >"$DIR/etc/topology.conf" <<EOF
SwitchName=s0 Nodes=n[1-2]
SwitchName=s1 Nodes=n[3-4]
SwitchName=top Switches=s[0-1]
EOF
		case ${TOPOLOGY##*/} in
		"") ;;
		*.yaml | *.yml) cp "$TOPOLOGY" "$DIR/etc/topology.yaml" ;;
		*) cp "$TOPOLOGY" "$DIR/etc/topology.conf" ;;
		esac
	fi
	# Our own cgroup.conf keeps slurmd away from /etc/slurm/cgroup.conf.
	# Slurm 23.02 and later probe cgroups at start even with
	# proctrack/linuxproc and task/affinity, and fail on a cgroup v2 host
	# that does not delegate them; "disabled" (unknown to 22.05) skips that.
	# With --cgroup: the step's cores only, without systemd (no dbus here).
	major=$(slurmd -V | sed -n 's/^slurm[^ ]* \([0-9]*\)\..*/\1/p')
	if [ "$CGROUP" = 1 ]; then
		printf 'CgroupPlugin=autodetect\nConstrainCores=yes\nIgnoreSystemd=yes\n' >"$DIR/etc/cgroup.conf"
		[ "$CONSTRAIN_DEVICES" = 0 ] || echo "ConstrainDevices=yes" >>"$DIR/etc/cgroup.conf"
	elif [ "${major:-0}" -ge 23 ] 2>/dev/null; then
		echo "CgroupPlugin=disabled" >"$DIR/etc/cgroup.conf"
	else
		: >"$DIR/etc/cgroup.conf"
	fi
	if [ -n "$PLUGSTACK" ]; then
		cp "$PLUGSTACK" "$DIR/etc/plugstack.conf"
	elif [ ! -f "$DIR/etc/plugstack.conf" ]; then
		: >"$DIR/etc/plugstack.conf"
	fi
}

# The stand-in GPUs: character devices of NVIDIA's major that no driver
# serves (opening one gives ENXIO, or EPERM when a devices cgroup forbids
# it), and gres.conf without autodetection. Two sockets: the first half of
# the GPUs on socket 0's core, the rest on socket 1's.
write_gres() {
	: >"$DIR/etc/gres.conf"
	[ "$GPUS" -gt 0 ] || return 0
	rm -rf "$DIR/dev"
	mkdir -p "$DIR/dev"
	i=0
	while [ "$i" -lt "$GPUS" ]; do
		mknod "$DIR/dev/fakegpu$i" c 195 "$i"
		i=$((i + 1))
	done
	echo "AutoDetect=off" >"$DIR/etc/gres.conf"
	last=$((GPUS - 1))
	if [ "$SOCKETS2" = 1 ] && [ "$GPUS" -ge 2 ]; then
		half=$((GPUS / 2))
		echo "Name=gpu File=$DIR/dev/fakegpu[0-$((half - 1))] Cores=0" >>"$DIR/etc/gres.conf"
		echo "Name=gpu File=$DIR/dev/fakegpu[$half-$last] Cores=1" >>"$DIR/etc/gres.conf"
	else
		echo "Name=gpu File=$DIR/dev/fakegpu[0-$last]" >>"$DIR/etc/gres.conf"
	fi
}

start_munge() {
	mkdir -p "$DIR/munge"
	chmod 0700 "$DIR/munge"
	mkdir -p "$MUNGE_DIR"
	chmod 0755 "$MUNGE_DIR"
	mungekey --create --keyfile="$DIR/munge/munge.key" --force >/dev/null 2>&1 ||
		{ dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null; }
	chmod 0600 "$DIR/munge/munge.key"
	setsid munged -F --force --socket="$MUNGE_DIR/munge.sock" --key-file="$DIR/munge/munge.key" \
		--pid-file="$DIR/run/munged.pid" --log-file="$DIR/log/munged.log" \
		--seed-file="$DIR/munge/munged.seed" </dev/null >>"$DIR/log/munged.out" 2>&1 &
	echo $! >"$PIDS/munged.pid"
	wait_for "munged socket" 20 test -S "$MUNGE_DIR/munge.sock"
}

# wait_for WHAT SECONDS COMMAND...: poll every 0.2 s.
wait_for() {
	what=$1 secs=$2
	shift 2
	n=0
	while ! "$@" >/dev/null 2>&1; do
		n=$((n + 1))
		if [ $n -gt $((secs * 5)) ]; then
			log "timed out after ${secs}s waiting for $what"
			for f in "$DIR"/log/*; do
				[ -f "$f" ] || continue
				echo "---- $f (last 15 lines)" >&2
				tail -n 15 "$f" >&2
			done
			return 1
		fi
		sleep 0.2
	done
}

setup_netns() {
	ip link add "$BRIDGE" type bridge
	ip addr add "$NET.1/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	{
		echo "127.0.0.1 localhost"
		for i in 1 2 3 4; do echo "$NET.$((10 + i)) n$i"; done
	} >"$DIR/etc/hosts"
	for i in 1 2 3 4; do
		ns=$NS_PREFIX$i
		ip netns add "$ns"
		ip link add "tmv$TAG$i" type veth peer name eth0 netns "$ns"
		ip link set "tmv$TAG$i" master "$BRIDGE" up
		ip -n "$ns" addr add "$NET.$((10 + i))/24" dev eth0
		ip -n "$ns" link set lo up
		ip -n "$ns" link set eth0 up
	done
}

idle_count() {
	SLURM_CONF=$CONF timeout 10 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l
}

nodes_idle() { [ "$(idle_count)" -ge "$1" ]; }

do_start() {
	[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
	for p in munged mungekey slurmctld slurmd sinfo srun; do
		command -v "$p" >/dev/null 2>&1 || { log "missing $p: run sh tests/install-deps.sh"; exit 1; }
	done
	do_stop
	rm -rf "$DIR/state" "$DIR/spool" "$DIR/tmpfs" "$DIR/log" "$DIR/run" "$PIDS"
	mkdir -p "$DIR/etc" "$DIR/state" "$DIR/log" "$DIR/run" "$PIDS"
	for n in n0 n1 n2 n3 n4; do mkdir -p "$DIR/spool/$n" "$DIR/tmpfs/$n"; done
	write_conf
	[ "$CGROUP" = 0 ] || : >"$DIR/cgroup-used"
	# the daemons' working directory, where a crash leaves its core: not
	# the caller's (a slurmd core once landed in the repository)
	cd "$DIR/run" || exit 1
	start_munge
	export SLURM_CONF="$CONF"
	setsid slurmctld -D -c -f "$CONF" </dev/null >>"$DIR/log/slurmctld.out" 2>&1 &
	echo $! >"$PIDS/slurmctld.pid"
	case $NODES in
	1)
		if [ "$SOCKETS2" = 1 ]; then
			# slurmd reads the node's shape from hwloc: two sockets here
			HWLOC_SYNTHETIC="package:2 core:1 pu:1" setsid slurmd -D -N n0 -f "$CONF" \
				</dev/null >>"$DIR/log/slurmd-n0.out" 2>&1 &
		else
			setsid slurmd -D -N n0 -f "$CONF" </dev/null >>"$DIR/log/slurmd-n0.out" 2>&1 &
		fi
		echo $! >"$PIDS/slurmd-n0.pid"
		want=1
		;;
	4lo)
		for i in 1 2 3 4; do
			setsid slurmd -D -N "n$i" -f "$CONF" </dev/null >>"$DIR/log/slurmd-n$i.out" 2>&1 &
			echo $! >"$PIDS/slurmd-n$i.pid"
		done
		want=4
		;;
	4)
		setup_netns
		for i in 1 2 3 4; do
			# nsenter --net only: `ip netns exec` would remount /sys and hide
			# the cgroup mounts slurmd 22.05 insists on.
			setsid nsenter --net="/run/netns/$NS_PREFIX$i" unshare --uts --mount --propagation private \
				sh -c "mount --bind '$DIR/etc/hosts' /etc/hosts && hostname n$i && exec slurmd -D -N n$i -f '$CONF'" \
				</dev/null >>"$DIR/log/slurmd-n$i.out" 2>&1 &
			echo $! >"$PIDS/slurmd-n$i.pid"
		done
		want=4
		;;
	esac
	if ! wait_for "$want idle node(s)" 60 nodes_idle "$want"; then
		do_stop
		exit 1
	fi
	printf 'export SLURM_CONF=%s\n' "$CONF" >"$DIR/env"
	echo "$NODES" >"$DIR/mode"
	echo "export SLURM_CONF=$CONF"
}

case $cmd in
start) do_start ;;
stop) do_stop ;;
status)
	[ -f "$CONF" ] && SLURM_CONF=$CONF timeout 10 sinfo -h >/dev/null 2>&1
	;;
munge-dir) echo "$MUNGE_DIR" ;;
*) usage ;;
esac
