#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# learn_overhead.sh - what learn mode's first run costs an application: the
# whole run's wall time with the recorder preloaded (as a learning task gets
# it: libtreematch-record-<abi>.so, TREEMATCH_RECORD_OUTPUT set, the profile
# written at MPI_Finalize) against the same run plain. REPS alternating runs
# each, median and minimum, for LAMMPS (in.melt, STEPS steps, Open MPI) and
# ScaLAPACK's LU test (xdlu: 200 factorizations up to LU_N on a 1 x NP
# grid, MPICH), on NP ranks.
# Prints a Markdown table (bench/results/learn_overhead.md keeps one).
#
#   BUILDDIR=/abs/build sh bench/learn_overhead.sh
#   REPS=5 NP=2 STEPS=10000 LU_N=600
set -u
B=${BUILDDIR:?BUILDDIR must be set}
S=${SRCDIR:-$(pwd)}
REPS=${REPS:-5}
NP=${NP:-2}
STEPS=${STEPS:-10000}
LU_N=${LU_N:-600}
W=$B/bench/learn
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
unset TREEMATCH_RECORD_COLLECTIVES TREEMATCH_RECORD_VERBOSE LD_PRELOAD

now() { date +%s.%N; }
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "%s %s", v[1], v[int((NR + 1) / 2)] }'; }

# case NAME ABI DIR COMMAND...: REPS alternating plain/recorded runs of
# COMMAND in DIR, one table row. A run that fails is reported, not timed.
bench_case() {
	name=$1 abi=$2 dir=$3
	shift 3
	: >"$W/$name.plain"
	: >"$W/$name.rec"
	for r in $(seq "$REPS"); do
		t0=$(now)
		(cd "$dir" && "$@" >"$W/$name.out" 2>&1) || { echo "| $name | failed: $W/$name.out |"; return; }
		t1=$(now)
		rm -f "$W/$name.yml"
		(cd "$dir" && LD_PRELOAD=$B/profiler/libtreematch-record-$abi.so \
			TREEMATCH_RECORD_OUTPUT=$W/$name.yml "$@" >"$W/$name.rec.out" 2>&1) ||
			{ echo "| $name | recorded run failed: $W/$name.rec.out |"; return; }
		t2=$(now)
		[ -s "$W/$name.yml" ] || { echo "| $name | no profile written |"; return; }
		echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$W/$name.plain"
		echo "$t1 $t2" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$W/$name.rec"
	done
	set -- $(stats <"$W/$name.plain") $(stats <"$W/$name.rec")
	edges=$(grep -c '^ *- *\[' "$W/$name.yml")
	awk -v n="$name" -v pmin="$1" -v pmed="$2" -v rmin="$3" -v rmed="$4" -v e="$edges" 'BEGIN {
		printf "| %s | %.2f | %.2f | %.2f | %.2f | %+.1f %% | %+.1f %% | %d |\n",
		    n, pmed, rmed, pmin, rmin, 100 * (rmed - pmed) / pmed, 100 * (rmin - pmin) / pmin, e
	}'
}

echo "# learn mode's first run: recorder preloaded against plain, $NP ranks, $REPS alternating runs"
echo "# $(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| application | plain median (s) | recorded median (s) | plain min (s) | recorded min (s) | overhead (median) | overhead (min) | edges recorded |"
echo "|---|---|---|---|---|---|---|---|"
if command -v lmp >/dev/null 2>&1; then
	sed "s/^run .*/run             $STEPS/" "$S/tests/mpi/in.melt" >"$W/in.melt"
	bench_case "lammps-melt-$STEPS" openmpi "$W" mpirun.openmpi -np "$NP" lmp -in in.melt \
		-log none -screen none
fi
LU=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests
if [ -x "$LU/xdlu" ]; then
	mkdir -p "$W/lu"
	# a 1 x NP grid (four times), ten matrix sizes up to LU_N (xdlu's
	# compiled-in memory caps it near 600 on 2 ranks) and five block
	# sizes: 200 factorizations, long enough to time
	{
		echo "'ScaLAPACK LU for bench/learn_overhead.sh'"
		echo "'treematch'"
		echo "'LU.out'"
		echo 6
		echo 10
		awk -v n="$LU_N" 'BEGIN { for (i = 1; i <= 10; i++) printf "%d ", int(n * i / 10); print "" }'
		awk -v n="$LU_N" 'BEGIN { for (i = 1; i <= 10; i++) printf "%d ", int(n * i / 10); print "" }'
		echo 5
		echo "8 16 24 32 48"
		echo 1
		echo 1
		echo 1
		echo 1
		echo 4
		echo "1 1 1 1"
		echo "$NP $NP $NP $NP"
		echo 1.0
		echo F
	} >"$W/lu/LU.dat"
	bench_case scalapack-xdlu mpich "$W/lu" mpiexec.mpich -n "$NP" "$LU/xdlu"
fi
