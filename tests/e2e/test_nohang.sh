#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_nohang.sh - no step hangs (issue 34), on four nodes in network
# namespaces (tests/e2e/cluster.sh --nodes 4), with an MPI program (MPICH
# over pmi2), each srun bounded by a timeout that fails the test:
#   - learn: NOHANG_STEPS learn steps (default 40), NOHANG_PARALLEL at a time
#     (default 4), while the program's entry is forgotten, stored again and
#     damaged (bit flips, a truncated .meta) every 0.05-0.3 s: every step
#     ends, every rank of it runs, on each step every node records or none
#     does, and no recording is left in the store;
#   - learn: a recording step whose node n3 cannot load the recorder (an
#     empty directory mounted over it in n3's namespace) is stopped at once,
#     not left waiting;
#   - failure=fail with node n3's profile damaged (mounted over in n3's
#     namespace only; srun reads the good one): no rank gets past MPI_Init,
#     srun ends at once, n3 stays idle (never drained); failure=fallback:
#     every rank runs;
#   - srun --chdir: a relative profile is read in the job's directory, by
#     srun as by the nodes.
# bench/learn_soak.sh runs the first part with NOHANG_STEPS=500.
# Needs root; tears the cluster down on exit. Reports through summary.sh.
set -u

SRC=${SRCDIR:-$(pwd)}
B=${BUILDDIR:?BUILDDIR must be set}
. "$SRC/tests/e2e/lib.sh"
WORK=$B/e2e/nohang
export TMATCH_CLUSTER_DIR=$B/e2e/cluster-nohang
CLUSTER="sh $SRC/tests/e2e/cluster.sh"
T=${NOHANG_TIMEOUT:-60}       # seconds an srun may take before it counts as hung
STEPS=${NOHANG_STEPS:-40}     # learn steps under churn
PARALLEL=${NOHANG_PARALLEL:-4} # of them at a time
START=$(date +%s)
# the recorders of this build, not an installed copy
export TREEMATCH_RECORD_LIBDIR=$B/profiler
unset TREEMATCH_RECORD_OUTPUT TREEMATCH_RECORD_COLLECTIVES TREEMATCH_LEARN TREEMATCH_PLAN

MOUNTED=""
# in_n3 CMD...: CMD in node n3's mount namespace, under slurmd's root
# directory (a chroot's in CI: entering a mount namespace alone puts the
# process at that namespace's root, the host's /, where /src is not)
in_n3() {
	n3pid=$(cat "$TMATCH_CLUSTER_DIR/pids/slurmd-n3.pid")
	nsenter --target="$n3pid" --mount --root "$@"
}
cleanup() {
	for m in $MOUNTED; do
		in_n3 umount "$m" 2>/dev/null || true
	done
	[ -f "$WORK/churn.stop" ] || : >"$WORK/churn.stop" 2>/dev/null
	e2e_finish nohang test_nohang
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$WORK"
mkdir -p "$WORK/A" "$WORK/B"
if [ "$(id -u)" -ne 0 ]; then
	fail "the no-hang tests need root (munge and Slurm daemons, mounts in a node's namespace)"
	exit 1
fi
HELLO=$WORK/mpi_hello.mpich
if ! mpicc.mpich -O1 -o "$HELLO" "$SRC/tests/e2e/mpi_hello.c" >"$WORK/mpicc.log" 2>&1; then
	fail_files "build mpi_hello with MPICH" "$WORK/mpicc.log"
	exit 1
fi
# a wrapper that notes each task it starts, then runs the program
cat >"$WORK/started.sh" <<'EOF'
#!/bin/sh
echo "$SLURM_PROCID $(hostname)" >>"$STARTED"
exec "$@"
EOF
chmod 755 "$WORK/started.sh"

profile4() { # file: 4 ranks, a ring
	printf 'format: comm-profile\nversion: 1\nranks: 4\nmetrics: [bytes]\ndirected: false\nedges:\n  - [0, 1, 1000]\n  - [1, 2, 10]\n  - [2, 3, 1000]\n  - [3, 0, 10]\n' >"$1"
}
profile4 "$WORK/p4.yml"
printf 'format: comm-profile\nversion: 1\nranks: [4\n' >"$WORK/bad.yml"

if ! $CLUSTER start --nodes 4 >"$WORK/cluster.out" 2>&1; then
	fail_files "cluster start --nodes 4" "$WORK/cluster.out"
	exit 1
fi
export SLURM_CONF=$TMATCH_CLUSTER_DIR/etc/slurm.conf
echo "required $PLUGIN_ARGS" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"

# on_n3 SOURCE TARGET: bind SOURCE over TARGET in node n3's namespace only
on_n3() {
	in_n3 mount --bind "$1" "$2" && MOUNTED="$MOUNTED $2"
}
off_n3() {
	in_n3 umount "$1"
	MOUNTED=$(echo "$MOUNTED" | tr ' ' '\n' | grep -vxF "$1" | tr '\n' ' ')
}

# step NAME SECONDS srun-args...: in $WORK, bounded; NAME.out, .err, .rc, .time
step() {
	name=$1 secs=$2
	shift 2
	t0=$(date +%s.%N)
	(cd "$WORK" && timeout "$secs" srun "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null)
	echo $? >"$WORK/$name.rc"
	# seconds with two decimals, "0.41" for a step under a second (awk:
	# the Debian roots CI builds have no bc)
	awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f\n", a - b }' >"$WORK/$name.time"
}
ranks_ran() { # NAME N: N ranks got through MPI_Init and talked
	[ "$(grep -c "^mpi rank=.* size=$2 .* sum=$2\$" "$WORK/$1.out")" = "$2" ]
}

# ---------------------------------------------------------------------------
# learn steps while the entry is forgotten, stored again and damaged

export XDG_CACHE_HOME=$WORK/xdg
STORE=$XDG_CACHE_HOME/treematch/store
LEARN="--treematch=learn,verbose=1,min_gain=0"

# the entry's name, and a first recording
step learn0 "$T" -N4 -n4 --mpi=pmi2 "$LEARN" "$HELLO"
STEM=$("$TM" store put "$HELLO" "$WORK/p4.yml" 2>"$WORK/put.err" | sed -n 's/^stored //p')
if [ "$(cat "$WORK/learn0.rc")" != 0 ] || ! ranks_ran learn0 4 || [ -z "$STEM" ]; then
	fail_files "learn: a first step records and its entry is stored" "$WORK/learn0.err" "$WORK/put.err"
	exit 1
fi

# the churn: forget, store again, damage, in a loop until told to stop
churn() {
	i=0
	while [ ! -f "$WORK/churn.stop" ]; do
		i=$((i + 1))
		case $((i % 6)) in
		0 | 3) "$TM" store forget "$STEM" >/dev/null 2>&1 ;;
		1 | 4) "$TM" store put "$HELLO" "$WORK/p4.yml" >/dev/null 2>&1 ;;
		2) [ -f "$STORE/$STEM.compiled" ] &&
			printf '\377' | dd of="$STORE/$STEM.compiled" bs=1 seek=$((40 + i % 64)) conv=notrunc 2>/dev/null ;;
		5) [ -f "$STORE/$STEM.meta" ] && truncate -s 100 "$STORE/$STEM.meta" ;;
		esac
		sleep "0.$(printf '%02d' $((5 + (i * 37) % 26)))"
	done
	echo "$i" >"$WORK/churn.rounds"
}
rm -f "$WORK/churn.stop"
churn &
CHURN=$!

i=0
while [ $i -lt "$STEPS" ]; do
	n=0
	pids=""
	while [ $n -lt "$PARALLEL" ] && [ $i -lt "$STEPS" ]; do
		i=$((i + 1))
		n=$((n + 1))
		step "l$i" "$T" -N4 -n4 --mpi=pmi2 "$LEARN" "$HELLO" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p"; done
done
: >"$WORK/churn.stop"
wait "$CHURN"

hung=0 unstarted=0 failed=0 mixed=0 recorded=0 placed=0 kept=0
for k in $(seq 1 "$STEPS"); do
	rc=$(cat "$WORK/l$k.rc")
	rec=$(grep -c 'nothing stored yet' "$WORK/l$k.err")
	if [ "$rc" = 124 ] && ! grep -q '^treematch: n[1-4]: ' "$WORK/l$k.err"; then
		# no node of the step ever said a word: it never started (its
		# allocation was not granted), which is not a hang of the step
		unstarted=$((unstarted + 1))
		echo "    step l$k never started: $(tr '\n' '|' <"$WORK/l$k.err" | cut -c1-200)"
	elif [ "$rc" = 124 ]; then
		hung=$((hung + 1))
		echo "    step l$k hung (timeout ${T}s): $(tr '\n' '|' <"$WORK/l$k.err" | cut -c1-400)"
	elif [ "$rc" != 0 ] || ! ranks_ran "l$k" 4; then
		failed=$((failed + 1))
		echo "    step l$k ended with $rc: $(tr '\n' '|' <"$WORK/l$k.err" | cut -c1-400)"
	fi
	case $rec in
	0) ;;
	4) recorded=$((recorded + 1)) ;;
	*)
		mixed=$((mixed + 1))
		echo "    step l$k: $rec of 4 nodes recorded"
		;;
	esac
	[ "$rec" = 0 ] && grep -q 'task(s) mapped by' "$WORK/l$k.err" && placed=$((placed + 1))
	[ "$rec" = 0 ] && grep -q "Slurm's binding kept" "$WORK/l$k.err" && kept=$((kept + 1))
done
left=$(ls -A "$STORE" 2>/dev/null | grep '^\.rec-' | tr '\n' ' ')
echo "learn under churn: $STEPS steps ($PARALLEL at a time, $(cat "$WORK/churn.rounds") store changes): $hung hung, $unstarted never started, $failed failed, $recorded recorded on every node, $placed placed on some node, $kept kept Slurm's binding on some node, $mixed with some nodes recording and others not; recordings left: ${left:-none}; nodes: $(sinfo -h -N -o '%N %t' 2>&1 | tr '\n' ' ')"
if [ "$unstarted" != 0 ]; then
	fail "learn: every step got its allocation (the cluster stayed up)" "$unstarted never started" \
		"$(sinfo -N 2>&1)" "$(grep -h -i 'malloc\|abort\|segfault' "$TMATCH_CLUSTER_DIR"/log/*.out 2>/dev/null)"
fi
if [ "$hung" = 0 ]; then
	pass "learn: $STEPS steps under forget/store/damage churn, none hung (each bounded by ${T}s)"
else
	fail "learn: $STEPS steps under forget/store/damage churn, none hung (each bounded by ${T}s)" "$hung hung"
fi
if [ "$failed" = 0 ] && [ "$mixed" = 0 ]; then
	pass "learn: every step ran all its ranks; on each step every node recorded or none did"
else
	fail "learn: every step ran all its ranks; on each step every node recorded or none did" \
		"$failed failed, $mixed mixed"
fi
if [ -z "$left" ] && [ "$recorded" -gt 0 ]; then
	pass "learn: every recording was collected or removed by srun ($recorded recorded steps)"
else
	fail "learn: every recording was collected or removed by srun ($recorded recorded steps)" \
		"left: $left" "$(ls -la "$STORE")"
fi
[ "${NOHANG_ONLY_CHURN:-0}" = 1 ] && exit 0

# ---------------------------------------------------------------------------
# a recording step whose node n3 cannot load the recorder

"$TM" store forget "$STEM" >/dev/null 2>&1
mkdir -p "$WORK/empty"
if on_n3 "$WORK/empty" "$B/profiler"; then
	step norec "$T" -N4 -n4 --mpi=pmi2 "$LEARN" "$HELLO"
	off_n3 "$B/profiler"
	rc=$(cat "$WORK/norec.rc")
	left=$(ls -A "$STORE" 2>/dev/null | grep '^\.rec-' | tr '\n' ' ')
	name="learn: a node that cannot load the recorder stops the step at once (not hung), nothing left"
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$(cut -d. -f1 "$WORK/norec.time")" -lt 30 ] &&
		! ranks_ran norec 4 && grep -q 'n3: .*this node cannot' "$WORK/norec.err" && [ -z "$left" ]; then
		pass "$name"
	else
		fail_files "$name" "$WORK/norec.err" "$WORK/norec.rc" "$WORK/norec.time"
	fi
else
	fail "mount in n3's namespace"
fi
unset XDG_CACHE_HOME

# ---------------------------------------------------------------------------
# failure=fail with a node that fails

export STARTED=$WORK/started
if on_n3 "$WORK/bad.yml" "$WORK/p4.yml"; then
	rm -f "$STARTED"
	step ffail "$T" -N4 -n4 --mpi=pmi2 --treematch="$WORK/p4.yml,failure=fail,verbose=1" \
		"$WORK/started.sh" "$HELLO"
	rc=$(cat "$WORK/ffail.rc")
	up=0
	node_up n3 && up=1
	state=$STATE
	started=$(cat "$STARTED" 2>/dev/null | wc -l)
	echo "failure=fail, n3's profile damaged: srun status $rc after $(cat "$WORK/ffail.time") s, $started of 4 tasks started, n3 $state"
	name="failure=fail, one node fails: no rank passes MPI_Init, srun ends at once, the node stays idle"
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$(cut -d. -f1 "$WORK/ffail.time")" -lt 30 ] &&
		! grep -q '^mpi rank=' "$WORK/ffail.out" && [ $up = 1 ] &&
		[ "$(grep -c 'treematch: n3: bad profile' "$WORK/ffail.err")" = 1 ]; then
		pass "$name"
	else
		fail_files "$name" "$WORK/ffail.err" "$WORK/ffail.rc" "$WORK/ffail.time"
	fi
	step ffall "$T" -N4 -n4 --mpi=pmi2 --treematch="$WORK/p4.yml,verbose=1" "$HELLO"
	name="failure=fallback, one node fails: every rank runs, that node with Slurm's binding"
	if [ "$(cat "$WORK/ffall.rc")" = 0 ] && ranks_ran ffall 4 &&
		grep -q "treematch: n3: bad profile.*falling back" "$WORK/ffall.err" &&
		[ "$(grep -c 'task(s) mapped by' "$WORK/ffall.err")" = 3 ]; then
		pass "$name"
	else
		fail_files "$name" "$WORK/ffall.err" "$WORK/ffall.out"
	fi
	off_n3 "$WORK/p4.yml"
	for n in n1 n2 n3 n4; do
		node_up "$n" || fail "node $n after the failing steps: $STATE (drained?)"
	done
else
	fail "mount in n3's namespace"
fi

# ---------------------------------------------------------------------------
# srun --chdir: a relative profile is the job's directory's

cp "$WORK/bad.yml" "$WORK/A/p4.yml"
profile4 "$WORK/B/p4.yml"
profile4 "$WORK/A/only-in-A.yml"
(cd "$WORK/A" && timeout "$T" srun --chdir="$WORK/B" -N4 -n4 --mpi=pmi2 \
	--treematch=p4.yml,verbose=1 "$HELLO" >"$WORK/cd1.out" 2>"$WORK/cd1.err" </dev/null)
rc1=$?
(cd "$WORK/A" && timeout "$T" srun -D "$WORK/B" -N4 -n4 --mpi=pmi2 \
	--treematch=only-in-A.yml "$HELLO" >"$WORK/cd2.out" 2>"$WORK/cd2.err" </dev/null)
rc2=$?
name="srun --chdir=B --treematch=p.yml: srun reads B/p.yml, as the nodes do"
if [ $rc1 = 0 ] && [ "$(grep -c 'task(s) mapped by' "$WORK/cd1.err")" = 4 ] &&
	[ $rc2 != 0 ] && grep -q "cannot read profile $WORK/B/only-in-A.yml" "$WORK/cd2.err"; then
	pass "$name"
else
	fail_files "$name" "$WORK/cd1.err" "$WORK/cd2.err"
fi
[ "$FAILED" -eq 0 ]
