#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# demo.sh - `make demo`: start a throwaway one-node Slurm, run a job with
# srun --treematch= on an example profile, show where each task was bound
# (read back from /proc by the task itself) next to Slurm's default
# placement, and the mapping's cost against that default; then tear it
# all down. Needs root (munge and the Slurm daemons).
#
#   BUILDDIR=/abs/build SRCDIR=/abs/repo sh tests/e2e/demo.sh
set -u
SRC=${SRCDIR:-$(pwd)}
B=${BUILDDIR:-$SRC/build}
SO=$B/spank/treematch.so
# the plugin and the helper program this build made
PLUGIN_ARGS=$SO
[ -x "$B/spank/treematch-helper" ] && PLUGIN_ARGS="$SO helper=$B/spank/treematch-helper"
W=$B/tests/e2e/whereami
WORK=$B/demo
export TMATCH_CLUSTER_DIR=$B/demo/cluster
CLUSTER="sh $SRC/tests/e2e/cluster.sh"

trap '$CLUSTER stop >/dev/null 2>&1; echo "demo: cluster stopped"' EXIT
trap 'exit 130' INT TERM

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (it starts munged, slurmctld and slurmd)"
[ -f "$SO" ] && [ -x "$W" ] || die "build first: make"
mkdir -p "$WORK"

# An 8-rank job whose heavy partners are i and i+4 (a transposed
# decomposition): Slurm's block placement puts every pair on different
# packages. `ranks` = what fits this machine for the real run.
profile() { # file ranks
	awk -v n="$2" 'BEGIN {
		print "# demo: rank i talks most to i+n/2, a little to its neighbours"
		print "format: comm-profile\nversion: 1\nranks: " n "\nmetrics: [bytes]\ndirected: false\nedges:"
		h = int(n / 2)
		for (i = 0; i < h; i++) print "  - [" i ", " i + h ", 1000000]"
		if (h > 1) for (i = 0; i + 1 < n; i++) print "  - [" i ", " i + 1 ", 1000]"
	}' >"$1"
}
NCPU=$(nproc)
NP=$NCPU
[ "$NP" -gt 8 ] && NP=8
[ "$NP" -lt 2 ] && die "needs at least 2 CPUs"
NP=$((NP / 2 * 2))
profile "$WORK/demo-$NP.yml" "$NP"
profile "$WORK/demo-8.yml" 8

say "Starting a throwaway Slurm: munged, slurmctld, slurmd on 127.0.0.1 (state in $TMATCH_CLUSTER_DIR)"
$CLUSTER start --nodes 1 >"$WORK/cluster.out" 2>&1 || { cat "$WORK/cluster.out"; die "cluster did not start"; }
export SLURM_CONF=$TMATCH_CLUSTER_DIR/etc/slurm.conf
echo "required $PLUGIN_ARGS" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"
sinfo -N -o '%N %C %T' | sed 's/^/   /'
echo "   plugstack.conf: $(cat "$TMATCH_CLUSTER_DIR/etc/plugstack.conf")"

say "srun --help shows the option"
srun --help | grep -A1 -- '--treematch=profile' | sed 's/^/   /'

say "Slurm's default placement: srun -n $NP whereami"
(cd "$WORK" && timeout 120 srun -n "$NP" "$W") | sort -t= -k2 -n |
	awk '{ print "   " $1, $2, $3 }'

say "With TreeMatch: srun -n $NP --treematch=demo-$NP.yml,verbose=1 whereami"
(cd "$WORK" && timeout 120 srun -n "$NP" --treematch="demo-$NP.yml,verbose=1" "$W" 2>"$WORK/run.err") |
	sort -t= -k2 -n | awk '{ print "   " $1, $2, $3, $4, $8 }'
grep 'mapped by' "$WORK/run.err" | sed 's/^/   /'
grep -v 'mapped by' "$WORK/run.err" | sort -k7 -n | sed 's/^/   /'

if [ "$NCPU" -lt 8 ]; then
	say "A larger node: 8 tasks on 2 packages x 4 cores (hwloc XML, dry-run: this machine has $NCPU CPUs)"
	lstopo -f --of xml -i "pack:2 core:4 pu:1" "$WORK/node8.xml" 2>/dev/null || die "lstopo failed"
	$CLUSTER start --nodes 1 --task-plugin task/none \
		--shape "CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=1" >"$WORK/cluster.out" 2>&1 ||
		{ cat "$WORK/cluster.out"; die "cluster did not restart"; }
	echo "required $PLUGIN_ARGS topology_xml=$WORK/node8.xml" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"
	echo "   Slurm's default (block) placement: task i on core i, i.e. ranks 0-3 on package 0, 4-7 on package 1"
	echo "   srun -n 8 --treematch=demo-8.yml,dry_run=on true"
	(cd "$WORK" && timeout 120 srun -n 8 --treematch="demo-8.yml,dry_run=on" true >"$WORK/run8.out" 2>&1)
	grep 'mapped by' "$WORK/run8.out" | sed 's/^/   /'
	grep 'cpu-bind=MAP' "$WORK/run8.out" | sort -k7 -n | sed 's/^/   /'
fi

say "Tearing down"
