#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# launch_overhead.sh - what treematch.so adds to the launch of a 64-task
# step on one node, measured on a real throwaway Slurm (tests/e2e/cluster.sh)
# whose node is declared as 2 sockets x 32 cores; the plugin reads the hwloc
# XML of such a node and runs in dry-run (this machine has fewer CPUs), so
# all of its work but the sched_setaffinity calls is in the measure.
#
# Three launches of `srun -n 64 true`, interleaved, REPS times each, the
# node idle before each one:
#   none      plugstack.conf empty (Slurm alone)
#   loaded    plugin in plugstack.conf, no --treematch
#   treematch --treematch=<64-rank 8x8 stencil>,dry_run=on
# Then, as steps of one allocation: Slurm alone, the plugin from the
# profile, and from the step's compiled plan (treematch layout --plan).
# Prints the median and quartiles of each and the median differences, and
# the plugin's own node-side time (profile, tree, mapping) from its summary.
#
#   BUILDDIR=/abs/build SRCDIR=/abs/repo sh bench/launch_overhead.sh [REPS]
set -u
SRC=${SRCDIR:-$(pwd)}
B=${BUILDDIR:-$SRC/build}
REPS=${1:-${LAUNCH_REPS:-15}}
SO=$B/spank/treematch.so
# the plugin and the helper program this build made
PLUGIN_ARGS=$SO
[ -x "$B/spank/treematch-helper" ] && PLUGIN_ARGS="$SO helper=$B/spank/treematch-helper"
OUT=$B/bench/launch_overhead.txt
WORK=$B/bench/launch
export TMATCH_CLUSTER_DIR=$B/bench/launch-cluster
CLUSTER="sh $SRC/tests/e2e/cluster.sh"
SHAPE="CPUs=64 Sockets=2 CoresPerSocket=32 ThreadsPerCore=1"

mkdir -p "$WORK" "$(dirname "$OUT")"
trap '$CLUSTER stop >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM

[ -f "$SO" ] || { echo "launch_overhead: build $SO first (make)" >&2; exit 1; }
lstopo -f --of xml -i "pack:2 numa:2 l3:2 core:8 pu:1" "$WORK/node64.xml" || exit 1
awk 'BEGIN {
	print "format: comm-profile\nversion: 1\nranks: 64\nmetrics: [bytes]\ndirected: false\nedges:"
	for (i = 0; i < 8; i++) for (j = 0; j < 8; j++) {
		r = i * 8 + j
		if (j < 7) print "  - [" r ", " r + 1 ", 1000]"
		if (i < 7) print "  - [" r ", " r + 8 ", 500]"
	}
}' >"$WORK/stencil64.yml"

$CLUSTER start --nodes 1 --task-plugin task/none --shape "$SHAPE" >"$WORK/cluster.out" 2>&1 ||
	{ cat "$WORK/cluster.out" >&2; exit 1; }
export SLURM_CONF=$TMATCH_CLUSTER_DIR/etc/slurm.conf
PLUGSTACK=$TMATCH_CLUSTER_DIR/etc/plugstack.conf

idle() {
	n=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ] ||
		[ -z "$(sinfo -h -N -t idle -o %N 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -gt 600 ] && { echo "launch_overhead: node never idle" >&2; exit 1; }
		sleep 0.1
	done
}

ms() { # command...: prints elapsed milliseconds
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || { echo "launch_overhead: failed: $*" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

run_variant() {
	case $1 in
	none) : >"$PLUGSTACK"; set -- ;;
	loaded) echo "required $PLUGIN_ARGS topology_xml=$WORK/node64.xml" >"$PLUGSTACK"; set -- ;;
	treematch)
		echo "required $PLUGIN_ARGS topology_xml=$WORK/node64.xml" >"$PLUGSTACK"
		set -- "--treematch=$WORK/stencil64.yml,dry_run=on"
		;;
	esac
	idle
	ms timeout 120 srun -n 64 "$@" true
}

# One warm-up each (page cache, first step of the job ids).
for v in none loaded treematch; do run_variant $v >/dev/null; done
: >"$WORK/samples"
i=0
while [ $i -lt "$REPS" ]; do
	for v in none loaded treematch; do echo "$v $(run_variant $v)" >>"$WORK/samples"; done
	i=$((i + 1))
done

# Inside one allocation (steps of one job, as in a batch script): Slurm
# alone, the plugin from the profile, and the plugin from the step's
# compiled plan (treematch layout --plan, made once for the job), whose
# node reads only its slice.
TM=$B/bin/treematch
JOB=$(salloc --no-shell -n 64 -N 1 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
[ -n "$JOB" ] || { echo "launch_overhead: salloc --no-shell failed" >&2; exit 1; }
trap 'scancel "$JOB" 2>/dev/null; $CLUSTER stop >/dev/null 2>&1' EXIT
"$TM" layout --profile "$WORK/stencil64.yml" --nodelist n0 --tasks-per-node 64 \
	--node-topology "xml:$WORK/node64.xml" --plan "$WORK/step.plan" --job-id "$JOB" \
	-o /dev/null || exit 1
echo "required $PLUGIN_ARGS topology_xml=$WORK/node64.xml" >"$PLUGSTACK"
step_idle() {
	n=0
	while [ -n "$(squeue -h -s -j "$JOB" -o %i 2>/dev/null | grep -v 'extern')" ]; do
		n=$((n + 1))
		[ $n -gt 600 ] && { echo "launch_overhead: steps never end" >&2; exit 1; }
		sleep 0.1
	done
}
run_step() {
	case $1 in
	step_none) set -- ;;
	step_profile) set -- "--treematch=$WORK/stencil64.yml,dry_run=on" ;;
	step_plan) set -- "--treematch=$WORK/stencil64.yml,plan=$WORK/step.plan,dry_run=on" ;;
	esac
	step_idle
	ms timeout 120 srun --jobid="$JOB" -n 64 "$@" true
}
for v in step_none step_profile step_plan; do run_step $v >/dev/null; done
i=0
while [ $i -lt "$REPS" ]; do
	for v in step_none step_profile step_plan; do echo "$v $(run_step $v)" >>"$WORK/samples"; done
	i=$((i + 1))
done
step_idle
srun --jobid="$JOB" -n 64 --treematch="$WORK/stencil64.yml,plan=$WORK/step.plan,verbose=1,dry_run=on" \
	true >/dev/null 2>"$WORK/plan.err"
plan_summary=$(grep 'treematch: n0: 64 task' "$WORK/plan.err" | head -n 1)
scancel "$JOB"

# The plugin's own timers (verbose=2), VREPS launches: srun-side check,
# node plan (profile, hwloc tree, mapping: before any task is forked), and
# each task's task_init.
echo "required $PLUGIN_ARGS topology_xml=$WORK/node64.xml" >"$PLUGSTACK"
: >"$WORK/timers"
i=0
while [ $i -lt "${VREPS:-5}" ]; do
	idle
	timeout 120 srun -n 64 --treematch="$WORK/stencil64.yml,verbose=2,dry_run=on" true \
		>/dev/null 2>"$WORK/verbose.err"
	{
		sed -n 's/.*checked in \([0-9.]*\) ms.*/srun \1/p' "$WORK/verbose.err"
		sed -n 's/.*node plan \([0-9.]*\) ms.*/node \1/p' "$WORK/verbose.err"
		sed -n 's/.*node plan [0-9.]* ms, cpu \([0-9.]*\) ms.*/cpu \1/p' "$WORK/verbose.err"
		sed -n 's/.*task_init \([0-9.]*\) ms.*/task \1/p' "$WORK/verbose.err"
	} >>"$WORK/timers"
	i=$((i + 1))
done
summary=$(grep 'treematch: n0: 64 task' "$WORK/verbose.err" | head -n 1)

tmedian() { # kind: median of the plugin's timers of that kind
	grep "^$1 " "$WORK/timers" | cut -d' ' -f2 | sort -n | awk '
		{ v[NR] = $1 } END { if (NR) printf "%.2f", v[int((NR + 1) / 2)]; else printf "nan" }'
}

stats() { # variant: "median q1 q3"
	grep "^$1 " "$WORK/samples" | cut -d' ' -f2 | sort -n | awk '
		{ v[NR] = $1 }
		END { printf "%d %d %d\n", v[int((NR + 1) / 2)], v[int((NR + 3) / 4)], v[int((3 * NR + 1) / 4)] }'
}

{
	echo "# SPDX-License-Identifier: BSD-3-Clause"
	echo "# Launch overhead of treematch.so: srun -n 64 true on one node"
	echo "# (node declared 2x32 cores, plugin on the hwloc XML of that node, dry-run;"
	echo "#  $REPS interleaved launches each, node idle before each; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
	echo "# command: BUILDDIR=$B sh bench/launch_overhead.sh $REPS"
	printf '%-11s %9s %9s %9s\n' variant median_ms q1_ms q3_ms
	for v in none loaded treematch; do
		set -- $(stats $v)
		printf '%-11s %9s %9s %9s\n' "$v" "$1" "$2" "$3"
	done
	n=$(stats none | cut -d' ' -f1)
	l=$(stats loaded | cut -d' ' -f1)
	t=$(stats treematch | cut -d' ' -f1)
	echo "plugin loaded, not asked:   +$((l - n)) ms (median against none)"
	echo "plugin placing 64 tasks:    +$((t - n)) ms (median against none; target < 20 ms)"
	ts=$(tmedian srun)
	tn=$(tmedian node)
	tt=$(tmedian task)
	tc=$(tmedian cpu)
	echo "plugin's own timers (median of ${VREPS:-5} launches, verbose=2):"
	echo "  srun: options + profile check   $ts ms"
	echo "  slurmstepd: node plan           $tn ms   (profile, hwloc XML tree, mapping of 64 ranks; CPU $tc ms)"
	echo "  each task: task_init            $tt ms"
	echo "  total on the launch path        $(echo "$ts $tn $tt" | awk '{ printf "%.2f", $1 + $2 + $3 }') ms (target < 20 ms)"
	echo "last summary: ${summary#treematch: }"
	echo "Inside one allocation (srun --jobid: steps of one job, as in a batch script):"
	for v in step_none step_profile step_plan; do
		set -- $(stats $v)
		printf '%-13s %9s %9s %9s\n' "$v" "$1" "$2" "$3"
	done
	n=$(stats step_none | cut -d' ' -f1)
	echo "from the profile:           +$(($(stats step_profile | cut -d' ' -f1) - n)) ms (median against step_none)"
	echo "from the step's plan:       +$(($(stats step_plan | cut -d' ' -f1) - n)) ms (median against step_none; target < 20 ms)"
	echo "plan summary: ${plan_summary#treematch: }"
	echo "# On a loaded machine the wall-clock difference is the plugin's CPU time"
	echo "# multiplied by the run queue (load / CPUs): compare the CPU figure."
} | tee "$OUT"
