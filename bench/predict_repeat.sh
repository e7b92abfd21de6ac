#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# predict_repeat.sh - whether a recording's compute repeats on a loaded
# machine: each application is recorded RECORDINGS times with its compute
# as measured (TREEMATCH_RECORD_TRACE_RAW=1) and RECORDINGS times as the
# recorder writes it (repeated phases at their least time, the others
# divided by the inflation the repeated ones showed: profiler/
# record_compute.c), alternately, so that both see the same load. For each
# recording: the compute the trace holds (all ranks, in seconds of a
# 1 Gflop/s core) and the predicted packed / auto on the 4:1 cluster of
# bench/predict.sh; then the spread of each over the recordings ((max -
# min) / min). The load average is printed before and after.
#
#   BUILDDIR=/abs/build sh bench/predict_repeat.sh   NP=64 NODES=2 CORES=8 RECORDINGS=3
#   ONLY=halo ...                                    only the applications whose name has it
set -u
B=${BUILDDIR:?BUILDDIR must be set}
S=${SRCDIR:-$(pwd)}
NP=${NP:-64}
NODES=${NODES:-2}
CORES=${CORES:-8}
RECORDINGS=${RECORDINGS:-3}
TM=$B/bin/treematch
W=$B/bench/predict-repeat
rm -rf "$W"
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
unset LD_PRELOAD TREEMATCH_RECORD_TRACE TREEMATCH_RECORD_TRACE_RAW

. "$S/bench/predict_cluster.sh"
mpicc.openmpi -O1 -o "$W/halo" "$S/tests/fixtures/predict/halo.c"
mpicc.openmpi -O1 -o "$W/collgrid" "$S/tests/fixtures/predict/collgrid.c"
# spread: "min-max (N %)" of the numbers on stdin
spread() {
	sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 }
		END { printf "%s-%s (%.1f %%)", lo, hi, (lo > 0 ? 100 * (hi - lo) / lo : 0) }'
}

# one NAME MODE I COMMAND...: recording I of NAME in MODE (raw or estimate),
# as "compute ratio" in $W/NAME.MODE.I.fig
one() {
	on=$1 om=$2 oi=$3
	shift 3
	d=$W/$on.$om.$oi
	raw=0
	[ "$om" = raw ] && raw=1
	for try in 1 2; do # Open MPI 4.1.4 sometimes loses a rank at exit under load
		rm -rf "$d.trace"
		(cd "$W/$on.run" && TREEMATCH_RECORD_TRACE_RAW=$raw timeout 1800 "$TM" record \
			-o "$d.yml" --trace "$d.trace" -- mpirun.openmpi -np "$NP" "$@" >"$d.log" 2>&1) &&
			[ -s "$d.trace/trace.txt" ] && break
		[ "$try" = 2 ] && return 1
	done
	c=$(cat "$d.trace"/rank-*.txt | awk '$2 == "compute" { s += $3 } END { printf "%.4f", s / 1e9 }')
	"$TM" predict --trace "$d.trace/trace.txt" --topology "$topo" --machine "$W/over.machine" \
		-m packed -m auto >"$d.out" 2>&1 || return 1
	echo "$c $(ratio "$d.out" 3)" >"$d.fig"
}

# app NAME COMMAND...: RECORDINGS raw and estimated recordings, alternately
app() {
	name=$1
	shift
	want "$name" || return 0
	mkdir -p "$W/$name.run"
	i=1
	while [ "$i" -le "$RECORDINGS" ]; do
		for mode in raw estimate; do
			one "$name" "$mode" "$i" "$@" ||
				echo "| $name | $mode | recording $i failed: $(tail -n 1 "$W/$name.$mode.$i.log") |"
		done
		i=$((i + 1))
	done
	for mode in raw estimate; do
		cs=$(cat "$W/$name.$mode".[0-9]*.fig 2>/dev/null | awk '{ printf "%s ", $1 }')
		rs=$(cat "$W/$name.$mode".*.fig 2>/dev/null | awk '{ printf "%s ", $2 }')
		printf '| %s | %s | %s| %s | %s| %s |\n' "$name" "$mode" "$cs" \
			"$(echo "$cs" | tr ' ' '\n' | grep . | spread)" "$rs" \
			"$(echo "$rs" | tr ' ' '\n' | grep . | spread)"
	done
}

echo "# recorded compute and predicted packed / auto (4:1), $NP ranks under Open MPI"
echo "# $(date -u '+%Y-%m-%d %H:%M'), $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| application | compute | compute (s) per recording | spread | packed / auto per recording | spread |"
echo "|---|---|---|---|---|---|"
start=$(date +%s)
app halo "$W/halo" 20
app collgrid "$W/collgrid" 20
LU=/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests
if [ -x "$LU/xdlu" ] && want scalapack-lu; then
	mkdir -p "$W/scalapack-lu.run"
	lu_input "$W/scalapack-lu.run"
	app scalapack-lu "$LU/xdlu"
fi
echo
echo "$(( ($(date +%s) - start) / 60 )) minutes; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
