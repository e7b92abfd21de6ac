#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# predict_real.sh - how far `treematch predict` can be trusted: the same
# runs predicted by SimGrid and measured on the local Slurm cluster of
# tests/e2e/cluster.sh (4 slurmd "nodes" in network namespaces under 2
# switches, all on this machine's 2 cores; between nodes MPICH talks TCP
# over a bridge, inside a node shared memory). Two programs of 8 ranks,
# MPICH: the scrambled halo exchange (tests/fixtures/predict/halo.c, 1 MiB
# messages, ITERS rounds) and the NAS CG-style kernel (bench/apps/cgkernel.c).
# Each is recorded once with its trace on this host (mpiexec), then:
#   predicted  `treematch predict` on the cluster's own tree (topology.conf,
#              4 nodes of 2 cores) with a machine description of it
#              ($W/local.machine, stated in the output) for Slurm's block and
#              cyclic distributions and the mapper (auto);
#   measured   wall time of the step under salloc -N4 -n8: srun
#              --distribution=block, --distribution=cyclic, and treematch-srun
#              --treematch=PROFILE (nodes from the profile, then binding),
#              interleaved, median of REPS.
# Prints a Markdown table: both times, and whether the order of the three
# placements agrees. Needs root (the cluster), mpicc.mpich, libsimgrid-dev.
#
#   BUILDDIR=/abs/build sh bench/predict_real.sh      REPS=5 ITERS=300
set -u
B=${BUILDDIR:?BUILDDIR must be set}
S=${SRCDIR:-$(pwd)}
REPS=${REPS:-5}
ITERS=${ITERS:-300}
TM=$B/bin/treematch
W=$B/bench/predict-real
rm -rf "$W"
mkdir -p "$W"
export TMATCH_CLUSTER_DIR=$B/bench/predict-cluster
CLUSTER="sh $S/tests/e2e/cluster.sh"
trap '$CLUSTER stop >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM
unset LD_PRELOAD TREEMATCH_RECORD_TRACE

mpicc.mpich -O2 -o "$W/halo" "$S/tests/fixtures/predict/halo.c" &&
	mpicc.mpich -O2 -o "$W/cg" "$S/bench/apps/cgkernel.c" || exit 1
apps="halo cg"
cmd_of() { # app
	case $1 in halo) echo "$W/halo $ITERS" ;; cg) echo "$W/cg 262144 $((ITERS / 4))" ;; esac
}
for a in $apps; do
	# shellcheck disable=SC2046 # the command's words
	if ! "$TM" record --mpi=mpich -o "$W/$a.yml" --trace "$W/$a.trace" -- \
		mpiexec.mpich -n 8 $(cmd_of "$a") >"$W/$a.rec.log" 2>&1 ||
		[ ! -s "$W/$a.trace/trace.txt" ]; then
		echo "predict_real.sh: $a not recorded: $(tail -n 1 "$W/$a.rec.log")" >&2
		exit 1
	fi
done

$CLUSTER start --nodes 4 >"$W/cluster.out" 2>&1 || {
	cat "$W/cluster.out" >&2
	exit 1
}
export SLURM_CONF=$TMATCH_CLUSTER_DIR/etc/slurm.conf
CONF=$TMATCH_CLUSTER_DIR/etc/topology.conf
echo "required $B/spank/treematch.so helper=$B/spank/treematch-helper" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"
unset SLURM_JOB_ID SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS SLURM_NNODES \
	SLURM_HOSTFILE SLURM_DISTRIBUTION 2>/dev/null || true

# The model of this cluster: TCP through the bridge between nodes, shared
# memory inside one, and 8 ranks sharing 2 cores (a quarter core each).
cat >"$W/local.machine" <<'EOF'
switch = 1GBps 30us
node = 1GBps 30us
core = 4GBps 1us
speed = 0.25Gf
EOF
# Slurm's cyclic distribution: rank r on node r mod 4, its (r / 4)-th core
awk 'BEGIN { for (r = 0; r < 8; r++) print r, (r % 4) * 2 + int(r / 4) }' >"$W/cyclic.map"
TOPO="cluster:$CONF,n[1-4],synthetic:pack:1 core:2 pu:1"
for a in $apps; do
	"$TM" predict --trace "$W/$a.trace/trace.txt" --topology "$TOPO" \
		--machine "$W/local.machine" --mapping packed --mapping "$W/cyclic.map" --mapping auto \
		>"$W/$a.predict" 2>&1 || {
		cat "$W/$a.predict" >&2
		exit 1
	}
done

# The measured runs, inside one allocation, interleaved.
cat >"$W/inner.sh" <<EOF
#!/bin/sh
for rep in \$(seq $REPS); do
	for a in $apps; do
		case \$a in halo) c="$W/halo $ITERS" ;; cg) c="$W/cg 262144 $((ITERS / 4))" ;; esac
		for p in block cyclic treematch; do
			t0=\$(date +%s%N)
			case \$p in
			treematch) sh "$S/cli/treematch-srun" -n8 --mpi=pmi2 --treematch="$W/\$a.yml" \$c ;;
			*) srun -N4 -n8 --distribution=\$p --mpi=pmi2 \$c ;;
			esac >"$W/run.out" 2>&1 || { echo "\$a \$p failed: \$(tail -n 2 "$W/run.out")" >&2; exit 1; }
			t1=\$(date +%s%N)
			echo "\$a \$p \$(((t1 - t0) / 1000000))"
		done
	done
done
EOF
timeout 3000 salloc -N4 -n8 sh "$W/inner.sh" >"$W/times" 2>"$W/salloc.err" || {
	tail -n 5 "$W/salloc.err" >&2
	exit 1
}

median() { # app placement
	awk -v a="$1" -v p="$2" '$1 == a && $2 == p { print $3 }' "$W/times" | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] / 1000 }'
}
predicted() { # app row (1 packed, 2 cyclic, 3 auto)
	awk -v k="$2" '/^#/ || /^mapping/ { next } { if (++n == k) print $2 }' "$W/$1.predict"
}
order() { # three values: the order of the three placements, lowest first
	printf '%s block\n%s cyclic\n%s treematch\n' "$1" "$2" "$3" | sort -g |
		awk '{ printf "%s%s", (NR > 1 ? " < " : ""), $2 }'
}
spread() { # app: the largest (max - min) / median over the placements' runs, in %
	for p in block cyclic treematch; do
		awk -v a="$1" -v p="$p" '$1 == a && $2 == p { print $3 }' "$W/times" | sort -n |
			awk '{ v[NR] = $1 } END { printf "%.1f\n", 100 * (v[NR] - v[1]) / v[int((NR + 1) / 2)] }'
	done | sort -g | tail -n 1
}

echo "# predicted vs measured: 8 ranks (MPICH) on the local cluster, 4 nodes x 2 cores"
echo "# $(date -u +%Y-%m-%d), $(nproc) CPUs; measured: median of $REPS, wall time of the step (s)"
echo
echo "| application | | block | cyclic | treematch | order |"
echo "|---|---|---|---|---|---|"
for a in $apps; do
	pb=$(predicted "$a" 1)
	pc=$(predicted "$a" 2)
	pt=$(predicted "$a" 3)
	mb=$(median "$a" block)
	mc=$(median "$a" cyclic)
	mt=$(median "$a" treematch)
	po=$(order "$pb" "$pc" "$pt")
	mo=$(order "$mb" "$mc" "$mt")
	echo "| $a | predicted | $pb | $pc | $pt | $po |"
	echo "| $a | measured (runs spread up to $(spread "$a") %) | $mb | $mc | $mt | $mo |"
done
echo
echo "Model (local.machine): $(grep -v '^#' "$W/local.machine" | tr '\n' ';' | sed 's/;$//')"
