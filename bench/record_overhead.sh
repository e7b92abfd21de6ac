#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# record_overhead.sh - the recorder's cost per point-to-point call, for each
# MPI ABI: bench/record_overhead (one rank, Isend-to-self + Recv + Wait) run
# REPS times plain and REPS times with libtreematch-record-<abi>.so
# preloaded (alternating), pinned to one CPU; prints minimum and median ns
# per iteration and their differences, on MPI_COMM_WORLD and on a dup'ed communicator. Then the
# time rank 0 takes at MPI_Finalize to gather and write the profile of a
# RANKS-rank LAMMPS run (needs lmp; skipped otherwise).
#
#   BUILDDIR=/abs/build sh bench/record_overhead.sh
#   ITERS=2000000 REPS=7 CPU=1 RANKS=64
set -u
B=${BUILDDIR:?BUILDDIR must be set}
S=${SRCDIR:-$(pwd)}
ITERS=${ITERS:-2000000}
REPS=${REPS:-7}
CPU=${CPU:-1}
RANKS=${RANKS:-64}
W=$B/bench/record
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
unset TREEMATCH_RECORD_COLLECTIVES TREEMATCH_RECORD_VERBOSE

# Plain and recorded runs alternate, so that a load change hits both; the
# minimum is the least disturbed run, the median the typical one.
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "%s %s", v[1], v[int((NR + 1) / 2)] }'; }

runs() { # abi mode -> files $W/plain and $W/rec, one ns/iteration per line
	: >"$W/plain"
	: >"$W/rec"
	for r in $(seq "$REPS"); do
		taskset -c "$CPU" "$B/bench/record_overhead.$1" "$ITERS" "$2" >>"$W/plain"
		LD_PRELOAD=$B/profiler/libtreematch-record-$1.so \
			TREEMATCH_RECORD_OUTPUT=$W/selfloop.yml \
			taskset -c "$CPU" "$B/bench/record_overhead.$1" "$ITERS" "$2" >>"$W/rec"
	done
}

echo "# recorder overhead: $ITERS iterations of Isend-to-self + Recv + Wait (8 B), thread CPU time,"
echo "# $REPS alternating runs each, pinned to CPU $CPU; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-6s %12s %12s %12s %12s %10s %10s\n' MPI comm "plain min" "rec min" \
	"plain med" "rec med" "d(min)" "d(med)"
for abi in openmpi mpich; do
	for mode in world dup; do
		runs "$abi" "$mode"
		set -- $(stats <"$W/plain") $(stats <"$W/rec")
		printf '%-8s %-6s %12s %12s %12s %12s %10s %10s\n' "$abi" "$mode" "$1" "$3" "$2" "$4" \
			"$(awk -v a="$1" -v b="$3" 'BEGIN { printf "%+.1f", b - a }')" \
			"$(awk -v a="$2" -v b="$4" 'BEGIN { printf "%+.1f", b - a }')"
	done
done

if [ "$RANKS" -gt 0 ] && command -v lmp >/dev/null 2>&1; then
	echo "# finalize: gather + write of a $RANKS-rank LAMMPS profile (Open MPI, oversubscribed)"
	(cd "$W" && TREEMATCH_RECORD_VERBOSE=1 timeout 900 "$B/bin/treematch" record \
		-o "$W/lammps$RANKS.yml" -- mpirun.openmpi --oversubscribe -np "$RANKS" \
		lmp -in "$S/tests/mpi/in.melt" -log none -screen none 2>&1 |
		grep -E 'treematch(-record)?:')
fi
