#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# predict.sh - predicted run times of recorded applications under each
# placement (`treematch record --trace`, then `treematch predict`, SimGrid's
# replay): a halo exchange, a program whose traffic is all collectives on
# the rows and columns of a scrambled process grid, a NAS CG-style kernel,
# LAMMPS, GROMACS, HPCC, ScaLAPACK's LU test and two PETSc examples, those
# whose Debian packages are installed (`sh tests/install-deps.sh --bench`
# installs them all). Each application runs RECORDINGS times here under
# Open MPI with NP ranks (oversubscribed: this records what it sends and
# computes, its own speed does not matter), traced; each trace is replayed
# on two modelled clusters of 2 leaf switches x NODES nodes x 2 sockets x
# CORES cores under one top switch, whose uplinks are 1:1 (each switch's
# uplink carries all its nodes' links) and 4:1 oversubscribed. The first
# recording for: packed (Slurm's block), rr (the project's round robin over
# the leaves), cyclic (Slurm's cyclic: rank r on node r mod nodes), the
# mappers auto, treematch and greedy on the recorded profile (as the plugin
# places by it) and trace:auto (auto on everything the trace sends); the
# others for packed and auto, to give the spread of packed / auto. Then the
# plugin's own placement of the first recording, as treematch-srun makes it
# (`treematch layout --plan`, then each node's slice as its plugin computes
# it, `treematch plan node`), is compared rank by rank with the auto that
# was predicted. Prints a Markdown table; bench/results/predict.md keeps one.
#
#   BUILDDIR=/abs/build sh bench/predict.sh   NP=64 NODES=2 CORES=8 STEPS=200 RECORDINGS=3
#   ONLY=petsc ...                            only the applications whose name has it
set -u
B=${BUILDDIR:?BUILDDIR must be set}
S=${SRCDIR:-$(pwd)}
NP=${NP:-64}
NODES=${NODES:-2}
CORES=${CORES:-8}
STEPS=${STEPS:-200}
RECORDINGS=${RECORDINGS:-3}
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
. "$S/bench/predict_cluster.sh"
# Slurm's cyclic distribution: rank r on node r mod nodes, in core order there
per=$((2 * CORES))
awk -v np="$NP" -v nn="$nnodes" -v per="$per" \
	'BEGIN { for (r = 0; r < np; r++) print r, (r % nn) * per + int(r / nn) }' >"$W/cyclic.map"

mpicc.openmpi -O1 -o "$W/halo" "$S/tests/fixtures/predict/halo.c"
mpicc.openmpi -O1 -o "$W/collgrid" "$S/tests/fixtures/predict/collgrid.c"
mpicc.openmpi -O2 -o "$W/cgkernel" "$S/bench/apps/cgkernel.c"
sed "s/^run .*/run             $STEPS/" "$S/tests/mpi/in.melt" >"$W/in.melt"
# plugin NAME: the placement the plugin makes from NAME's first profile on the
# modelled cluster (treematch-srun: the layout and its plan, then each node's
# slice as that node's plugin computes it), as "RANK LEAF" lines, leaves
# numbered as in the cluster tree (node k's core c is leaf 2 CORES k + c)
plugin() {
	per=$((2 * CORES))
	"$TM" layout --profile "$W/$1.1.yml" --nodes "n[1-$nnodes]" --topology-conf "$W/topology.conf" \
		--tasks-per-node "$per" --node-topology "synthetic:pack:2 core:$CORES pu:1" \
		--plan "$W/$1.plan" --job-id 1 >"$W/$1.hosts" 2>"$W/$1.layout.err" || return 1
	k=1
	while [ "$k" -le "$nnodes" ]; do
		"$TM" plan node "$W/$1.plan" "n$k" --topology "synthetic:pack:2 core:$CORES pu:1" |
			awk -v k="$k" -v per="$per" '/cpu-bind=MAP/ {
				split($0, a, " task"); split(a[2], b, " ")
				match($0, /cpus [0-9]+/)
				print b[2], (k - 1) * per + substr($0, RSTART + 5, RLENGTH - 5) }' || return 1
		k=$((k + 1))
	done | sort -n
}

# predict NAME I MACHINE: replay recording I of NAME (the first under every
# placement, the others packed and auto)
predict() {
	if [ "$2" = 1 ]; then
		"$TM" predict --trace "$W/$1.$2.trace/trace.txt" --topology "$topo" \
			--machine "$W/$3.machine" --mapping packed --mapping rr --mapping "$W/cyclic.map" \
			--mapping auto --mapping treematch --mapping greedy --mapping trace:auto \
			--keep "$W/$1.$3.keep"
	else
		"$TM" predict --trace "$W/$1.$2.trace/trace.txt" --topology "$topo" \
			--machine "$W/$3.machine" --mapping packed --mapping auto
	fi
}

# record NAME I COMMAND...: recording I of NAME, its profile and its trace
record() {
	rn=$1 ri=$2
	shift 2
	rm -rf "$W/$rn.$ri.trace"
	(cd "$W/$rn.run" && timeout 1800 "$TM" record -o "$W/$rn.$ri.yml" --trace "$W/$rn.$ri.trace" \
		-- mpirun.openmpi -np "$NP" "$@" >"$W/$rn.$ri.log" 2>&1) &&
		[ -s "$W/$rn.$ri.trace/trace.txt" ]
}

# app NAME COMMAND...: record + trace NP ranks of COMMAND RECORDINGS times
# (run in $W/NAME.run, where its input files are), then one row per cluster
app() {
	name=$1
	shift
	want "$name" || return 0
	mkdir -p "$W/$name.run"
	i=1
	while [ "$i" -le "$RECORDINGS" ]; do
		# a launch that fails is tried once more (under this load Open MPI
		# 4.1.4 sometimes loses a rank at exit); said below the table
		if ! record "$name" "$i" "$@"; then
			echo "$name: recording $i failed once ($(tail -n 1 "$W/$name.$i.log")), made again" \
				>>"$W/retried.txt"
			if ! record "$name" "$i" "$@"; then
				echo "| $name | - | not traced: $(tail -n 1 "$W/$name.$i.log") |"
				return
			fi
		fi
		for m in full over; do
			if ! predict "$name" "$i" "$m" >"$W/$name.$i.$m.out" 2>&1; then
				echo "| $name | $m | replay failed: $(tail -n 1 "$W/$name.$i.$m.out") |"
				return
			fi
		done
		i=$((i + 1))
	done
	for m in full over; do
		spread=$(i=1; while [ "$i" -le "$RECORDINGS" ]; do ratio "$W/$name.$i.$m.out"; echo; i=$((i + 1)); done |
			sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s (%.0f %%)", lo, hi, (lo > 0 ? 100 * (hi - lo) / lo : 0) }')
		awk -v app="$name" -v m="$m" -v spread="$spread" '
		/^#/ || /^mapping/ { next }
		{ t[++n] = $2 }
		END {
			up = m == "full" ? "1:1" : "4:1"
			printf "| %s | %s | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.2fx | %s |\n",
			    app, up, t[1], t[2], t[3], t[4], t[5], t[6], t[7], (t[4] > 0 ? t[1] / t[4] : 0), spread
		}' "$W/$name.1.$m.out"
	done
	# hop-bytes of the auto mapping against packed, from the recorded profile
	"$TM" map -p "$W/$name.1.yml" -t "$topo" >"$W/$name.auto.map" 2>/dev/null &&
		"$TM" eval -p "$W/$name.1.yml" -t "$topo" --mapping "$W/$name.auto.map" >"$W/$name.eval" 2>&1
	# the plugin's placement against the auto that was predicted
	if plugin "$name" >"$W/$name.plugin" 2>"$W/$name.plugin.err"; then
		sed 's/^h//' "$W/$name.over.keep/mapping3.hosts" | awk '{ print NR - 1, $1 }' >"$W/$name.predicted"
		same=$(awk 'NR == FNR { leaf[$1] = $2; next } ($1 in leaf) && leaf[$1] == $2' \
			"$W/$name.plugin" "$W/$name.predicted" | wc -l)
		echo "$name: $same of $NP" >>"$W/plugin.txt"
	else
		echo "$name: the plugin's placement could not be made ($(tail -n 1 "$W/$name.plugin.err"))" >>"$W/plugin.txt"
	fi
}

echo "# predicted run time (s): $NP ranks traced under Open MPI, replayed by SimGrid"
echo "# $(date -u +%Y-%m-%d), $(nproc) CPUs; 2 switches x $NODES nodes x 2 sockets x $CORES cores;"
echo "# the first of $RECORDINGS recordings, and packed / auto over all of them (min-max, spread)"
echo
echo "| application | uplinks | packed (block) | rr | cyclic | auto | treematch | greedy | trace:auto | packed / auto | $RECORDINGS recordings |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
start=$(date +%s)
: >"$W/plugin.txt"
: >"$W/retried.txt"
# 20 rounds: the phases repeat (their compute is the least time one took)
app halo "$W/halo" 20
# all collectives, on the rows and columns of a scrambled 8 x 8 grid
app collgrid "$W/collgrid" 20
# NAS CG's communication pattern (bench/apps/cgkernel.c), 2^20 rows, 15 iterations
app nas-cg-kernel "$W/cgkernel" 1048576 15
if command -v lmp >/dev/null 2>&1; then
	app lammps-melt lmp -in "$W/in.melt" -log none -screen none
fi
# GROMACS: a 6 nm box of SPC/E water (about 21,000 atoms), minimized, then
# 50 steps of MD with PME (mdrun picks its PME ranks and domain grid)
if want gromacs && command -v gmx_mpi >/dev/null 2>&1 && command -v gmx >/dev/null 2>&1; then
	G=$W/gromacs.run
	mkdir -p "$G"
	printf '#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spce.itp"\n' >"$G/topol.top"
	printf '[ system ]\nwater\n[ molecules ]\n' >>"$G/topol.top"
	# minimized to Fmax < 500 first, then 1 fs steps: the box is stable
	printf 'integrator = steep\nnsteps = 500\nemtol = 500\n' >"$G/em.mdp"
	printf 'integrator = md\nnsteps = 50\ndt = 0.001\ntcoupl = v-rescale\ntc-grps = System\n' \
		>"$G/md.mdp"
	printf 'tau-t = 0.1\nref-t = 300\nnstenergy = 0\nnstlog = 0\nnstcalcenergy = 50\n' \
		>>"$G/md.mdp"
	for f in em md; do
		printf 'cutoff-scheme = Verlet\ncoulombtype = PME\nrcoulomb = 1.0\nrvdw = 1.0\n' \
			>>"$G/$f.mdp"
	done
	if (cd "$G" && gmx -quiet solvate -cs spc216.gro -box 6 6 6 -o water.gro &&
		echo "SOL $(grep -c OW water.gro)" >>topol.top &&
		gmx -quiet grompp -f em.mdp -c water.gro -p topol.top -o em.tpr &&
		gmx -quiet mdrun -s em.tpr -deffnm em -ntmpi 1 -ntomp 2 &&
		gmx -quiet grompp -f md.mdp -c em.gro -p topol.top -o md.tpr) >"$G/prep.log" 2>&1; then
		app gromacs gmx_mpi -quiet mdrun -s "$G/md.tpr" -deffnm "$G/md" -ntomp 1 -nb cpu
	else
		echo "| gromacs | - | input not prepared: $(tail -n 1 "$G/prep.log") |"
	fi
fi
# HPCC (HPL, PTRANS, FFT, RandomAccess, b_eff...) on a P x Q grid, HPL N = 1000
if command -v hpcc >/dev/null 2>&1 && [ -r /usr/share/doc/hpcc/examples/_hpccinf.txt ]; then
	mkdir -p "$W/hpcc.run"
	sed -e "s/^2            Ps/$P            Ps/; s/^2            Qs/$Q            Qs/" \
		/usr/share/doc/hpcc/examples/_hpccinf.txt >"$W/hpcc.run/hpccinf.txt"
	app hpcc hpcc
fi
# ScaLAPACK's LU test (row and column communicators of BLACS), N = 1600
LU=/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests
if [ -x "$LU/xdlu" ]; then
	mkdir -p "$W/scalapack-lu.run"
	lu_input "$W/scalapack-lu.run"
	app scalapack-lu "$LU/xdlu"
fi
# PETSc's examples (libpetsc3.18-dev-examples or its successor): KSP's CG
# on a 2D Laplacian in row blocks (ex2) and on a 3D Laplacian on a 4 x 4 x
# 4 DMDA (ex45, Jacobi-preconditioned: its multigrid's setup sends every
# rank's rows to every other, 235,000 actions whose replays took over an
# hour here); their vector scatters are persistent requests started at
# every product
PX=$(ls -d /usr/share/petsc/*/share/petsc/examples/src/ksp/ksp/tutorials 2>/dev/null | tail -n 1)
if want petsc && [ -n "$PX" ] && [ -r "$PX/ex45.c" ] && pkg-config --exists PETSc; then
	for ex in ex2 ex45; do
		# shellcheck disable=SC2046 # pkg-config's flags are words
		mpicc.openmpi -O2 -o "$W/petsc-$ex" "$PX/$ex.c" $(pkg-config --cflags --libs PETSc) \
			>"$W/petsc-$ex.cc" 2>&1 ||
			echo "| petsc-$ex | - | not built: $(tail -n 1 "$W/petsc-$ex.cc") |"
	done
	[ -x "$W/petsc-ex2" ] &&
		app petsc-ksp-ex2 "$W/petsc-ex2" -m 256 -n 256 -ksp_type cg -pc_type jacobi \
			-ksp_max_it 50
	[ -x "$W/petsc-ex45" ] &&
		app petsc-ksp-ex45 "$W/petsc-ex45" -da_grid_x 33 -da_grid_y 33 -da_grid_z 33 \
			-pc_type jacobi -ksp_max_it 20
fi
echo
echo "one run: $(( ($(date +%s) - start) / 60 )) minutes"
sed 's/^/    /' "$W/retried.txt"
echo
echo "hop-bytes of auto's mapping, packed and round robin (treematch eval, first profile):"
echo
for f in "$W"/*.eval; do
	[ -f "$f" ] || continue
	echo "    $(basename "$f" .eval): $(grep -i 'hop' "$f" | head -n 1)"
done
echo
echo "the plugin's placement (treematch-srun: layout, plan, each node's slice) equal to the"
echo "predicted auto, ranks (first profile, 4:1 machine):"
echo
sed 's/^/    /' "$W/plugin.txt"
