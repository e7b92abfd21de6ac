#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# predict.sh - predicted run times of recorded applications under each
# placement (`treematch record --trace`, then `treematch predict`, SimGrid's
# replay). Each application runs once here under Open MPI with NP ranks
# (oversubscribed: this records what it sends and computes, its own speed
# does not matter), traced; then its trace is replayed on two modelled
# clusters of 2 leaf switches x NODES nodes x 2 sockets x CORES cores under
# one top switch, whose uplinks are 1:1 (each switch's uplink carries all its
# nodes' links) and 4:1 oversubscribed, for: packed (Slurm's block), rr (the
# project's round robin over the leaves), cyclic (Slurm's cyclic: rank r on
# node r mod nodes), and the mappers auto, treematch and greedy. Prints a
# Markdown table; bench/results/predict.md keeps one.
#
#   BUILDDIR=/abs/build sh bench/predict.sh        NP=64 NODES=2 CORES=8 STEPS=200
set -u
B=${BUILDDIR:?BUILDDIR must be set}
S=${SRCDIR:-$(pwd)}
NP=${NP:-64}
NODES=${NODES:-2}
CORES=${CORES:-8}
STEPS=${STEPS:-200}
TM=$B/bin/treematch
W=$B/bench/predict
rm -rf "$W"
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
unset LD_PRELOAD TREEMATCH_RECORD_TRACE

nnodes=$((2 * NODES))
slots=$((nnodes * 2 * CORES))
[ "$NP" -le "$slots" ] || { echo "NP=$NP ranks do not fit $slots slots" >&2; exit 2; }
{
	echo "SwitchName=s0 Nodes=n[1-$NODES]"
	echo "SwitchName=s1 Nodes=n[$((NODES + 1))-$nnodes]"
	echo "SwitchName=top Switches=s[0-1]"
} >"$W/topology.conf"
topo="cluster:$W/topology.conf,n[1-$nnodes],synthetic:pack:2 core:$CORES pu:1"
# 1:1: a leaf switch's uplink carries all its nodes' 12.5 GB/s links
awk -v n="$NODES" 'BEGIN { printf "node = 12.5GBps 1us\nswitch = %gGBps 2us\n", 12.5 * n }' \
	>"$W/full.machine"
awk -v n="$NODES" 'BEGIN { printf "node = 12.5GBps 1us\nswitch = %gGBps 2us\n", 12.5 * n / 4 }' \
	>"$W/over.machine"
# Slurm's cyclic distribution: rank r on node r mod nodes, in core order there
per=$((2 * CORES))
awk -v np="$NP" -v nn="$nnodes" -v per="$per" \
	'BEGIN { for (r = 0; r < np; r++) print r, (r % nn) * per + int(r / nn) }' >"$W/cyclic.map"

mpicc.openmpi -O1 -o "$W/halo" "$S/tests/fixtures/predict/halo.c"
sed "s/^run .*/run             $STEPS/" "$S/tests/mpi/in.melt" >"$W/in.melt"

# app NAME COMMAND...: record + trace NP ranks of COMMAND, then one row per cluster
app() {
	name=$1
	shift
	if ! (cd "$W" && timeout 1800 "$TM" record -o "$W/$name.yml" --trace "$W/$name.trace" -- \
		mpirun.openmpi -np "$NP" "$@" >"$W/$name.log" 2>&1) ||
		[ ! -s "$W/$name.trace/trace.txt" ]; then
		echo "| $name | - | not traced: $(tail -n 1 "$W/$name.log") |"
		return
	fi
	for m in full over; do
		if ! "$TM" predict --trace "$W/$name.trace/trace.txt" --topology "$topo" \
			--machine "$W/$m.machine" -m packed -m rr -m "$W/cyclic.map" -m auto \
			-m treematch -m greedy >"$W/$name.$m.out" 2>&1; then
			echo "| $name | $m | replay failed: $(tail -n 1 "$W/$name.$m.out") |"
			continue
		fi
		awk -v app="$name" -v m="$m" '
		/^#/ || /^mapping/ { next }
		{ t[++n] = $2 }
		END {
			ratio = t[4] > 0 ? t[1] / t[4] : 0
			up = m == "full" ? "1:1" : "4:1"
			printf "| %s | %s | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.2fx |\n",
			    app, up, t[1], t[2], t[3], t[4], t[5], t[6], ratio
		}' "$W/$name.$m.out"
	done
	# hop-bytes of the auto mapping against packed, from the recorded profile
	"$TM" map -p "$W/$name.yml" -t "$topo" >"$W/$name.auto.map" 2>/dev/null &&
		"$TM" eval -p "$W/$name.yml" -t "$topo" -M "$W/$name.auto.map" >"$W/$name.eval" 2>&1
}

echo "# predicted run time (s): $NP ranks traced under Open MPI, replayed by SimGrid"
echo "# $(date -u +%Y-%m-%d), $(nproc) CPUs; 2 switches x $NODES nodes x 2 sockets x $CORES cores"
echo
echo "| application | uplinks | packed (block) | rr | cyclic | auto | treematch | greedy | packed / auto |"
echo "|---|---|---|---|---|---|---|---|---|"
app halo "$W/halo"
if command -v lmp >/dev/null 2>&1; then
	app lammps-melt lmp -in "$W/in.melt" -log none -screen none
fi
echo
for f in "$W"/*.eval; do
	[ -f "$f" ] || continue
	echo "$(basename "$f" .eval): $(grep -i 'hop' "$f" | head -n 1)"
done
