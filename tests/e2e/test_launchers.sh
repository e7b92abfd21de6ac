#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_launchers.sh - `treematch map --format openmpi|mpich` run by the real
# launchers, outside Slurm: Open MPI's mpirun with the rankfile (4.x:
# --rankfile, 5.x: --map-by rankfile:file=), MPICH's mpiexec (Hydra) with
# the -bind-to user: option. Each rank of tests/e2e/mpi_hello.c reports the
# CPUs the kernel lets it use after MPI_Init; each must be the CPU of the
# leaf `treematch map -f plain` gave it, found independently with hwloc-calc
# (the leaves of `local` are this machine's cores, depth first: core L#i;
# the plugin binds a rank to its core's first PU).
# Several seeds of the random mapper give different orders of the ranks.
# (srun's --cpu-bind list is run on the Slurm cluster by run.sh; Intel MPI
# is not in Debian: its variables are checked by the unit tests only.)
# Reports through tests/summary.sh; prints "launchers: N passed, N failed".
set -u

B=${BUILDDIR:?BUILDDIR must be set}
SRC=${SRCDIR:-$(pwd)}
NO_SLURM=1
. "$SRC/tests/e2e/lib.sh"
W=$B/e2e/launchers
rm -rf "$W"
mkdir -p "$W"
START=$(date +%s)

NCPU=$(hwloc-calc --number-of core machine:0 2>/dev/null || echo 0)
N=$NCPU
[ "$N" -gt 4 ] && N=4
# A chain of N ranks: every order of them is a different placement.
{
	echo "%%MatrixMarket matrix coordinate real symmetric"
	echo "$N $N $((N - 1))"
	i=2
	while [ $i -le "$N" ]; do
		echo "$i $((i - 1)) 100"
		i=$((i + 1))
	done
} >"$W/chain.mtx"

# want_cpus SEED: "rank cpu" lines, the CPU of each rank's leaf by hwloc-calc.
want_cpus() {
	"$TM" map -p "$W/chain.mtx" -t local -m random -s "$1" -f plain |
		while read -r rank leaf; do
			echo "$rank $(hwloc-calc --physical-output --intersect pu "core:$leaf" | cut -d, -f1)"
		done
}

# got_cpus FILE: "rank cpus" lines from mpi_hello's output.
got_cpus() {
	sed -n 's/^mpi rank=\([0-9]*\) .* cpus=\([^ ]*\) .*/\1 \2/p' "$1" | sort -n
}

# check NAME SEED OUT RC: the ranks ran where the mapping says.
check() {
	want_cpus "$2" | sort -n >"$W/want"
	got_cpus "$3" >"$W/got"
	if [ "$4" -eq 0 ] && [ "$(wc -l <"$W/got")" -eq "$N" ] && cmp -s "$W/want" "$W/got"; then
		pass "$1, seed $2: every rank on its mapped CPU ($(tr '\n' ' ' <"$W/got"))"
	else
		fail "$1, seed $2 (rc=$4)" "want: $(tr '\n' ' ' <"$W/want")" \
			"got:  $(tr '\n' ' ' <"$W/got")" "$(tail -n 5 "$3")"
	fi
}

if [ "$N" -lt 2 ]; then
	fail "launchers: this machine has $NCPU core(s); the tests need 2"
	e2e_finish launchers launchers
	exit 1
fi

for flavour in openmpi mpich; do
	if ! command -v "mpicc.$flavour" >/dev/null 2>&1; then
		fail "$flavour: mpicc.$flavour not installed (tests/install-deps.sh installs it)"
		continue
	fi
	exe=$W/mpi_hello.$flavour
	if ! "mpicc.$flavour" -O1 -o "$exe" "$SRC/tests/e2e/mpi_hello.c" >"$W/cc.$flavour" 2>&1; then
		fail_files "$flavour: cannot build mpi_hello" "$W/cc.$flavour"
		continue
	fi
	for seed in 1 2 3 4; do
		out=$W/$flavour.$seed.out
		if [ "$flavour" = openmpi ]; then
			"$TM" map -p "$W/chain.mtx" -t local -m random -s $seed -f openmpi >"$W/rankfile" ||
				{ fail "openmpi, seed $seed: treematch map failed"; continue; }
			case $(mpirun.openmpi --version 2>/dev/null | head -n 1) in
			*" 4."*) rf="--rankfile $W/rankfile --mca btl self,vader" ;;
			*) rf="--map-by rankfile:file=$W/rankfile --mca btl self,sm" ;;
			esac
			# shellcheck disable=SC2086 # rf is several words
			timeout 120 mpirun.openmpi $rf -np "$N" "$exe" >"$out" 2>&1
			rc=$?
		else
			opt=$("$TM" map -p "$W/chain.mtx" -t local -m random -s $seed -f mpich) ||
				{ fail "mpich, seed $seed: treematch map failed"; continue; }
			# shellcheck disable=SC2086 # "-bind-to user:..." is two words
			timeout 120 mpiexec.mpich $opt -n "$N" "$exe" >"$out" 2>&1
			rc=$?
		fi
		check "$flavour" $seed "$out" $rc
	done
done

# The seeds must have produced more than one order, or the checks above
# could not tell a launcher that ignores the placement from one that obeys.
orders=$(for s in 1 2 3 4; do want_cpus $s | tr '\n' ' '; echo; done | sort -u | wc -l)
if [ "$orders" -ge 2 ]; then
	pass "the seeds give $orders different placements"
else
	fail "the seeds give one placement only: pick seeds that differ"
fi

e2e_finish launchers launchers
[ "$FAILED" -eq 0 ]
