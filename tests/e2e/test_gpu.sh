#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_gpu.sh - GPU steps end to end (issue 36): a one-node cluster of two
# one-core sockets (slurmd sees HWLOC_SYNTHETIC) with a GPU GRES of four
# stand-in devices (cluster.sh --gpus 4 --sockets2: AutoDetect=off, two
# GPUs per socket by Cores=), the node's hardware given to the plugin by
# the admin's topology_xml (written here: CPUs 0 and 1 of this machine, a
# package each, two NVML GPUs and an InfiniBand card per package). Each
# task reports, from inside, its CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES,
# GPU_DEVICE_ORDINAL, TREEMATCH_GPUS, TREEMATCH_NIC, UCX_NET_DEVICES and
# its CPUs (/proc/self/status): with --gpus, --gpus-per-task and
# --gpu-bind=map_gpu, nic_env=off, and with ConstrainDevices, where each task also
# opens its GPU's device file (ENXIO: allowed, no driver; EPERM: the
# devices cgroup forbids it). A real node's XML of ../shared/topologies in
# dry run when that folder is there.
#
#   BUILDDIR=... SRCDIR=... sh tests/e2e/test_gpu.sh   (make e2e-gpu)
set -u

SRC=${SRCDIR:-$(pwd)}
B=${BUILDDIR:-$SRC/build}
. "$SRC/tests/e2e/lib.sh"
SO=$B/spank/treematch.so
WORK=$B/e2e/work-gpu
export TMATCH_CLUSTER_DIR=$B/e2e/cluster-gpu
CLUSTER="sh $SRC/tests/e2e/cluster.sh"
T=${TMATCH_E2E_TIMEOUT:-90}
START=$(date +%s)
SHARED=${TMATCH_TOPOLOGIES:-$SRC/../shared/topologies}

trap 'e2e_finish e2e-gpu e2e-gpu' EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK"
if [ "$(id -u)" -ne 0 ]; then
	fail "e2e-gpu needs root to start munge and Slurm daemons (run as root, as CI does)"
	exit 1
fi
[ -f "$SO" ] || { fail "missing $SO: run make first"; exit 1; }
if [ "$(getconf _NPROCESSORS_ONLN)" -lt 2 ]; then
	echo "e2e-gpu: this machine has fewer than 2 CPUs: GPU suite not run"
	exit 0
fi

# The admin's topology_xml: this machine's CPUs 0 and 1 as two packages of
# one core, each with NVML GPUs (PCI 0000:1x:00.0 on package 0, 0001:1x on
# package 1) and an InfiniBand card mlx5_N.
XML=$WORK/node.xml
{
	cat <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
<object type="Machine" os_index="0" cpuset="0x3" complete_cpuset="0x3" allowed_cpuset="0x3" nodeset="0x3" complete_nodeset="0x3" allowed_nodeset="0x3" gp_index="1">
EOF
	gp=10
	for p in 0 1; do
		m=$((1 << p))
		echo " <object type=\"Package\" os_index=\"$p\" cpuset=\"0x$m\" complete_cpuset=\"0x$m\" nodeset=\"0x$m\" complete_nodeset=\"0x$m\" gp_index=\"$((gp + 1))\">"
		echo "  <object type=\"NUMANode\" os_index=\"$p\" cpuset=\"0x$m\" complete_cpuset=\"0x$m\" nodeset=\"0x$m\" complete_nodeset=\"0x$m\" gp_index=\"$((gp + 2))\" local_memory=\"1073741824\"/>"
		echo "  <object type=\"Core\" os_index=\"$p\" cpuset=\"0x$m\" complete_cpuset=\"0x$m\" nodeset=\"0x$m\" complete_nodeset=\"0x$m\" gp_index=\"$((gp + 3))\">"
		echo "   <object type=\"PU\" os_index=\"$p\" cpuset=\"0x$m\" complete_cpuset=\"0x$m\" nodeset=\"0x$m\" complete_nodeset=\"0x$m\" gp_index=\"$((gp + 4))\"/>"
		echo "  </object>"
		echo "  <object type=\"Bridge\" gp_index=\"$((gp + 5))\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"000$p:[00-ff]\">"
		for g in 0 1; do
			i=$((p * 2 + g))
			echo "   <object type=\"PCIDev\" gp_index=\"$((gp + 6 + g * 2))\" pci_busid=\"000$p:1$g:00.0\" pci_type=\"0302 [10de:2330] [10de:16c1] a1\" pci_link_speed=\"0.0\">"
			echo "    <object type=\"OSDev\" gp_index=\"$((gp + 7 + g * 2))\" name=\"nvml$i\" osdev_type=\"1\"/>"
			echo "   </object>"
		done
		echo "   <object type=\"PCIDev\" gp_index=\"$((gp + 11))\" pci_busid=\"000$p:80:00.0\" pci_type=\"0207 [15b3:101b] [15b3:0007] 00\" pci_link_speed=\"0.0\">"
		echo "    <object type=\"OSDev\" gp_index=\"$((gp + 12))\" name=\"ib$p\" osdev_type=\"2\"/>"
		echo "    <object type=\"OSDev\" gp_index=\"$((gp + 13))\" name=\"mlx5_$p\" osdev_type=\"3\"/>"
		echo "   </object>"
		echo "  </object>"
		echo " </object>"
		gp=$((gp + 20))
	done
	echo "</object>"
	echo "</topology>"
} >"$XML"

P2=$WORK/p2.yml
printf 'format: comm-profile\nversion: 1\nranks: 2\nmetrics: [bytes]\ndirected: false\nedges:\n  - [0, 1, 1000]\n' >"$P2"

# In the task: its variables and CPUs on one line; with DEV, which of the
# stand-in devices it may open (allowed: ENXIO, forbidden: EPERM).
REPORT='
cpus=$(awk "/^Cpus_allowed_list/ { print \$2 }" /proc/self/status)
open=
if [ -n "${DEV:-}" ]; then
	for i in 0 1 2 3; do
		if cat "$DEV/fakegpu$i" 2>&1 | grep -q "No such device"; then open="$open$i"; fi
	done
fi
echo "rank=$SLURM_PROCID cvd=${CUDA_VISIBLE_DEVICES-unset} rocr=${ROCR_VISIBLE_DEVICES-unset} ord=${GPU_DEVICE_ORDINAL-unset} tm=${TREEMATCH_GPUS-unset} nic=${TREEMATCH_NIC-unset} ucx=${UCX_NET_DEVICES-unset} cpus=$cpus open=${open:-none}"'

# field OUT RANK KEY: a value of one rank's line
field() {
	awk -v r="$2" -v k="$3" '$1 == "rank=" r {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] }
	}' "$1"
}

start_cluster() { # cluster.sh options
	if ! $CLUSTER start --gpus 4 --sockets2 "$@" >"$WORK/cluster.out" 2>&1; then
		why=$(grep -h -i -m1 'error' "$TMATCH_CLUSTER_DIR"/log/slurmd-*.log "$WORK/cluster.out" 2>/dev/null |
			cut -c1-160)
		echo "e2e-gpu: the GPU cluster ($*) did not start (${why:-see $WORK/cluster.out})"
		return 1
	fi
	. "$TMATCH_CLUSTER_DIR/env"
	echo "required $PLUGIN_ARGS failure=fail topology_xml=$XML" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"
}

# gpus_ok OUT: each rank's GPUs are one package's (0,1 with CPU 0 or 2,3
# with CPU 1, as cvd and TREEMATCH_GPUS, global numbering), the card that
# package's, AMD's and OpenCL's variables unset, the two ranks apart
gpus_ok() {
	awk '
	/^rank=/ {
		n++
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		pk = v["cpus"]
		if (v["cvd"] != v["tm"] || v["rocr"] != "unset" || v["ord"] != "unset") bad++
		split(v["tm"], g, ",")
		for (j in g) if (int(g[j] / 2) != pk) bad++
		if (v["nic"] != "mlx5_" pk || v["ucx"] != "mlx5_" pk ":1") bad++
		seen[pk]++
	}
	END { exit !(n == 2 && bad == 0 && seen[0] == 1 && seen[1] == 1) }' "$1"
}

if start_cluster; then
	# 1. --gpus=4: every task sees the four; the plugin gives each two
	#    GPUs of its package, its CPU there and the package's card
	timeout "$T" srun -n2 --gpus=4 --treematch="$P2,verbose=1" sh -c "$REPORT" \
		>"$WORK/gpus4.out" 2>"$WORK/gpus4.err"
	rc=$?
	if [ $rc -eq 0 ] && gpus_ok "$WORK/gpus4.out" && grep -q 'gpu-bind=MAP - n0, task' "$WORK/gpus4.err"; then
		pass "--gpus=4: each task two GPUs of its package, its CPU and card there ($(field "$WORK/gpus4.out" 0 cvd)/$(field "$WORK/gpus4.out" 0 cpus), $(field "$WORK/gpus4.out" 1 cvd)/$(field "$WORK/gpus4.out" 1 cpus))"
	else
		fail_files "--gpus=4: each task two GPUs of its package, its CPU and card there (rc=$rc)" \
			"$WORK/gpus4.out" "$WORK/gpus4.err"
	fi

	# 2. --gpus-per-task=1: Slurm allocates one GPU per socket (0 and 2);
	#    each task gets one, with the CPU of its package
	timeout "$T" srun -n2 --gpus-per-task=1 --treematch="$P2" sh -c "$REPORT" \
		>"$WORK/pertask.out" 2>"$WORK/pertask.err"
	rc=$?
	if [ $rc -eq 0 ] && gpus_ok "$WORK/pertask.out" &&
		[ "$(sed -n 's/.* tm=\([^ ]*\) .*/\1/p' "$WORK/pertask.out" | sort | tr '\n' ' ')" = "0 2 " ]; then
		pass "--gpus-per-task=1: GPUs 0 and 2, each with its package's CPU and card"
	else
		fail_files "--gpus-per-task=1: GPUs 0 and 2, each with its package's CPU and card (rc=$rc)" \
			"$WORK/pertask.out" "$WORK/pertask.err"
	fi

	# 3. --gpu-bind=map_gpu:3,0: Slurm's GPUs kept, CPUs and cards follow
	timeout "$T" srun -n2 --gpus=4 --gpu-bind=map_gpu:3,0 --treematch="$P2,verbose=1" sh -c "$REPORT" \
		>"$WORK/map.out" 2>"$WORK/map.err"
	rc=$?
	if [ $rc -eq 0 ] &&
		[ "$(field "$WORK/map.out" 0 cvd)" = 3 ] && [ "$(field "$WORK/map.out" 0 cpus)" = 1 ] &&
		[ "$(field "$WORK/map.out" 0 nic)" = mlx5_1 ] &&
		[ "$(field "$WORK/map.out" 1 cvd)" = 0 ] && [ "$(field "$WORK/map.out" 1 cpus)" = 0 ] &&
		[ "$(field "$WORK/map.out" 1 tm)" = 0 ] &&
		grep -q "Slurm's GPUs, cpus follow" "$WORK/map.err"; then
		pass "--gpu-bind=map_gpu:3,0 kept: task 0 GPU 3 on CPU 1, task 1 GPU 0 on CPU 0"
	else
		fail_files "--gpu-bind=map_gpu:3,0 kept, the CPUs follow (rc=$rc)" "$WORK/map.out" "$WORK/map.err"
	fi

	# 4. the same in dry run: said, not set
	timeout "$T" srun -n2 --gpus=4 --treematch="$P2,dry_run=on" sh -c "$REPORT" \
		>"$WORK/dry.out" 2>"$WORK/dry.err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(field "$WORK/dry.out" 0 cvd)" = 0,1,2,3 ] &&
		[ "$(field "$WORK/dry.out" 1 cvd)" = 0,1,2,3 ] && [ "$(field "$WORK/dry.out" 0 ucx)" = unset ] &&
		grep -q 'gpu-bind=MAP.*not set (dry-run)' "$WORK/dry.err"; then
		pass "dry_run: the GPUs said, Slurm's variables left as they were"
	else
		fail_files "dry_run: the GPUs said, Slurm's variables left as they were (rc=$rc)" \
			"$WORK/dry.out" "$WORK/dry.err"
	fi

	# 4b. nic_env=off: the card chosen (TREEMATCH_NIC), UCX's variable not set
	timeout "$T" srun -n2 --gpus=4 --treematch="$P2,nic_env=off" sh -c "$REPORT" \
		>"$WORK/nicoff.out" 2>"$WORK/nicoff.err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(field "$WORK/nicoff.out" 0 ucx)" = unset ] &&
		[ "$(field "$WORK/nicoff.out" 1 ucx)" = unset ] &&
		[ "$(field "$WORK/nicoff.out" 0 nic)" = "mlx5_$(field "$WORK/nicoff.out" 0 cpus)" ]; then
		pass "nic_env=off: the card said in TREEMATCH_NIC, UCX_NET_DEVICES left unset"
	else
		fail_files "nic_env=off: the card said in TREEMATCH_NIC, UCX_NET_DEVICES left unset (rc=$rc)" \
			"$WORK/nicoff.out" "$WORK/nicoff.err"
	fi

	# 5. a step without GPUs on the GPU node: CPUs only, nothing of GPUs
	timeout "$T" srun -n2 --treematch="$P2" sh -c "$REPORT" >"$WORK/cpu.out" 2>"$WORK/cpu.err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(field "$WORK/cpu.out" 0 tm)" = unset ] &&
		[ "$(sed -n 's/.* cpus=\([^ ]*\) .*/\1/p' "$WORK/cpu.out" | sort | tr '\n' ' ')" = "0 1 " ]; then
		pass "a step without GPUs: CPUs placed, no GPU variable"
	else
		fail_files "a step without GPUs: CPUs placed, no GPU variable (rc=$rc)" "$WORK/cpu.out" "$WORK/cpu.err"
	fi

	# 6. a real node's XML (dry run: its CPUs are not this machine's)
	if [ -r "$SHARED/flux-tuo.SPX.xml" ]; then
		echo "required $PLUGIN_ARGS failure=fail dry_run=on topology_xml=$SHARED/flux-tuo.SPX.xml" \
			>"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"
		timeout "$T" srun -n2 --gpus=4 --treematch="$P2,verbose=1" sh -c "$REPORT" \
			>"$WORK/tuo.out" 2>"$WORK/tuo.err"
		rc=$?
		if [ $rc -eq 0 ] && grep -q 'gpus 0,1 (rsmi0, rsmi1) nic hsi0 not set (dry-run)' "$WORK/tuo.err"; then
			pass "MI300A node's XML through Slurm (dry run): the step's CPUs are package 0's, so are its GPUs and card"
		else
			fail_files "MI300A node's XML through Slurm (dry run) (rc=$rc)" "$WORK/tuo.out" "$WORK/tuo.err"
		fi
	else
		echo "e2e-gpu: $SHARED absent: the real node's XML not run through Slurm"
	fi
	$CLUSTER stop >/dev/null 2>&1
fi

# 7. ConstrainDevices: Slurm numbers GPUs as each task sees them and
#    confines a task it binds to its own
if start_cluster --constrain-devices; then
	DEV=$TMATCH_CLUSTER_DIR/dev
	export DEV
	# no binding by Slurm, and GPU 0 held by another job: the step's GPUs
	# are not 0 and 1, Slurm numbers them 0 and 1 inside the step; the one
	# task gets both, numbered as it sees them, and can open them
	P1=$WORK/p1.yml
	printf 'format: comm-profile\nversion: 1\nranks: 1\nmetrics: [bytes]\ndirected: false\nedges: []\n' >"$P1"
	timeout "$T" srun -n1 --gpus=1 sleep 20 >"$WORK/cg-hold.out" 2>&1 &
	hold=$!
	sleep 2
	timeout "$T" srun -n1 --gpus=2 --treematch="$P1" sh -c "$REPORT" \
		>"$WORK/cg-gpus.out" 2>"$WORK/cg-gpus.err"
	rc=$?
	kill "$hold" 2>/dev/null
	wait "$hold" 2>/dev/null
	tm=$(field "$WORK/cg-gpus.out" 0 tm)
	if [ $rc -eq 0 ] && [ "$(field "$WORK/cg-gpus.out" 0 cvd)" = 0,1 ] && [ "$tm" != 0,1 ] &&
		[ "$(field "$WORK/cg-gpus.out" 0 open)" = "$(echo "$tm" | tr -d ,)" ]; then
		pass "ConstrainDevices, --gpus=2 beside another job: GPUs $tm given as 0,1, both open to the task"
	else
		fail_files "ConstrainDevices, --gpus=2 beside another job: numbered as the task sees them (rc=$rc)" \
			"$WORK/cg-gpus.out" "$WORK/cg-gpus.err" "$WORK/cg-hold.out"
	fi
	# --gpus-per-task=1: each task confined to Slurm's GPU, which it keeps,
	# the CPUs following
	timeout "$T" srun -n2 --gpus-per-task=1 --treematch="$P2" sh -c "$REPORT" \
		>"$WORK/cg-pt.out" 2>"$WORK/cg-pt.err"
	rc=$?
	o0=$(field "$WORK/cg-pt.out" 0 open) o1=$(field "$WORK/cg-pt.out" 1 open)
	if grep -q "binds per_task by the tasks' CPUs: Slurm's CPUs and GPUs kept" "$WORK/cg-pt.err"; then
		# 24.11 and later: Slurm binds each task's GPU by its CPUs, so the
		# plugin keeps both (said once per task); each task opens its own one
		if [ $rc -eq 0 ] && [ -n "$o0" ] && [ -n "$o1" ] && [ "$o0" != "$o1" ] &&
			[ "${#o0}" = 1 ] && [ "${#o1}" = 1 ] &&
			[ "$(field "$WORK/cg-pt.out" 0 cvd)" = 0 ] && [ "$(field "$WORK/cg-pt.out" 1 cvd)" = 0 ]; then
			pass "ConstrainDevices, --gpus-per-task=1, Slurm binding per task: its CPUs and GPUs kept, one GPU each"
		else
			fail_files "ConstrainDevices, --gpus-per-task=1, Slurm binding per task (rc=$rc)" \
				"$WORK/cg-pt.out" "$WORK/cg-pt.err"
		fi
	elif [ $rc -eq 0 ] &&
		[ "$(field "$WORK/cg-pt.out" 0 tm)" = "$o0" ] &&
		[ "$(field "$WORK/cg-pt.out" 1 tm)" = "$(field "$WORK/cg-pt.out" 1 open)" ] &&
		[ "$(field "$WORK/cg-pt.out" 0 cvd)" = 0 ] &&
		[ "$(field "$WORK/cg-pt.out" 0 cpus)" = "$(($(field "$WORK/cg-pt.out" 0 tm) / 2))" ] &&
		[ "$(field "$WORK/cg-pt.out" 1 cpus)" = "$(($(field "$WORK/cg-pt.out" 1 tm) / 2))" ]; then
		pass "ConstrainDevices, --gpus-per-task=1: Slurm's GPU kept (the only one the task opens), CPUs follow"
	else
		fail_files "ConstrainDevices, --gpus-per-task=1: Slurm's GPU kept, CPUs follow (rc=$rc)" \
			"$WORK/cg-pt.out" "$WORK/cg-pt.err"
	fi
else
	echo "e2e-gpu: no devices cgroup here: the ConstrainDevices cases not run"
fi
