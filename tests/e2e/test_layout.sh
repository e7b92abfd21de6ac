#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_layout.sh - end-to-end tests of the communication-aware rank-to-node
# layout (treematch layout, treematch-srun, the cli_filter that makes plain
# srun --treematch use it) on the four-node, two-switch
# test cluster of tests/e2e/cluster.sh (n1,n2 under s0; n3,n4 under s1;
# 2 CPUs each).
#
# The profile's heavy pairs are (0,4) (1,5) (2,6) (3,7): Slurm's block
# distribution puts ranks 0-3 under s0 and 4-7 under s1, splitting every
# pair across switches (checked first, so the test can fail). With the
# layout, each pair must land on one node, hence under one switch, as seen
# from SLURM_TOPOLOGY_ADDR and hostname inside the tasks; the plugin must
# still bind every task; MPI programs must still run. Prints PASS/FAIL per
# test and registers the counts with tests/summary.sh. Needs root; tears the
# cluster down on exit.
#
#   BUILDDIR=/abs/build SRCDIR=/abs/repo sh tests/e2e/test_layout.sh
set -u

SRC=${SRCDIR:-$(pwd)}
B=${BUILDDIR:-$SRC/build}
. "$SRC/tests/e2e/lib.sh"
SO=$B/spank/treematch.so
W=$B/tests/e2e/whereami
CLI=$TM
LAUNCHER=$SRC/cli/treematch-srun
WORK=$B/e2e/work-layout
export TMATCH_CLUSTER_DIR=$B/e2e/cluster-layout
CLUSTER="sh $SRC/tests/e2e/cluster.sh"
T=${TMATCH_E2E_TIMEOUT:-90}
export TREEMATCH=$CLI
START=$(date +%s)

trap 'e2e_finish e2e-layout e2e-layout' EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK"
if [ "$(id -u)" -ne 0 ]; then
	fail "e2e-layout needs root to start munge and Slurm daemons (run as root, as CI does)"
	exit 1
fi
for f in "$SO" "$W" "$CLI" "$LAUNCHER"; do
	if [ ! -f "$f" ]; then
		fail "missing $f: run make first"
		exit 1
	fi
done

# The profile: heavy pairs split by block distribution, light neighbours.
P=$WORK/split.yml
cat >"$P" <<'EOF'
format: comm-profile
version: 1
ranks: 8
metrics: [bytes]
directed: false
edges:
  - [0, 4, 100000]
  - [1, 5, 100000]
  - [2, 6, 100000]
  - [3, 7, 100000]
  - [0, 1, 10]
  - [2, 3, 10]
  - [4, 5, 10]
  - [6, 7, 10]
EOF

# A task that reports where it landed: rank, hostname, topology address.
REPORT='echo "rank=$SLURM_PROCID host=$(hostname) node=$SLURMD_NODENAME addr=$SLURM_TOPOLOGY_ADDR"'

if ! $CLUSTER start --nodes 4 >"$WORK/cluster.out" 2>&1; then
	fail "cluster start --nodes 4" "$(tail -n 20 "$WORK/cluster.out")"
	exit 1
fi
export SLURM_CONF=$TMATCH_CLUSTER_DIR/etc/slurm.conf
echo "required $PLUGIN_ARGS" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"
unset SLURM_JOB_ID SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS SLURM_NNODES \
	SLURM_HOSTFILE SLURM_DISTRIBUTION 2>/dev/null || true

# in_alloc OUT ERR CMD... : run CMD (a shell command line) inside salloc -N4 -n8.
in_alloc() {
	out=$1 err=$2
	shift 2
	(cd "$WORK" && timeout "$T" salloc -N4 -n8 --quiet sh -c "$*" >"$out" 2>"$err" </dev/null)
}

# field LINE KEY
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

# pairs_together FILE: every heavy pair on one node and under one switch,
# hostname agreeing with the topology address. Prints problems.
pairs_together() {
	bad=0
	for r in 0 1 2 3; do
		a=$(grep "^rank=$r " "$1")
		b=$(grep "^rank=$((r + 4)) " "$1")
		if [ -z "$a" ] || [ -z "$b" ]; then
			echo "rank $r or $((r + 4)) missing"
			bad=1
			continue
		fi
		for l in "$a" "$b"; do
			addr=$(field "$l" addr)
			if [ "${addr##*.}" != "$(field "$l" host)" ]; then
				echo "hostname and SLURM_TOPOLOGY_ADDR disagree: $l"
				bad=1
			fi
		done
		sa=$(field "$a" addr | cut -d. -f2)
		sb=$(field "$b" addr | cut -d. -f2)
		if [ "$sa" != "$sb" ]; then
			echo "pair ($r,$((r + 4))) across switches: $(field "$a" addr) $(field "$b" addr)"
			bad=1
		fi
		if [ "$(field "$a" host)" != "$(field "$b" host)" ]; then
			echo "pair ($r,$((r + 4))) on two nodes: $(field "$a" host) $(field "$b" host)"
			bad=1
		fi
	done
	return $bad
}

# 1. Slurm's own layout splits the pairs (otherwise this test proves nothing).
in_alloc "$WORK/block.out" "$WORK/block.err" "srun -n8 sh -c '$REPORT'"
if [ "$(grep -c '^rank=' "$WORK/block.out")" -eq 8 ] &&
	! pairs_together "$WORK/block.out" >/dev/null; then
	pass "block distribution splits the heavy pairs across switches (the case to fix)"
else
	fail "block distribution splits the heavy pairs across switches" \
		"$(cat "$WORK/block.out" "$WORK/block.err")"
fi

# 2. treematch-srun: the pairs share a node, hence a switch.
in_alloc "$WORK/l.out" "$WORK/l.err" \
	"sh '$LAUNCHER' -n8 --treematch='$P' sh -c '$REPORT'"
rc=$?
why=$(pairs_together "$WORK/l.out")
if [ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$WORK/l.out")" -eq 8 ] && [ -z "$why" ]; then
	pass "treematch-srun --treematch=P: heavy pairs on one node and one switch (SLURM_TOPOLOGY_ADDR, hostname)"
else
	fail "treematch-srun --treematch=P: heavy pairs on one node and one switch" \
		"rc=$rc $why" "$(cat "$WORK/l.out")" "$(tail -n 5 "$WORK/l.err")"
fi

# 3. Every node runs the tasks Slurm allocated it (2), no more.
counts=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^host=/) print $i }' "$WORK/l.out" | sort | uniq -c | awk '{ print $1 }' | sort -u | tr '\n' ' ')
if [ "$counts" = "2 " ]; then
	pass "treematch-srun: every node runs its 2 allocated tasks"
else
	fail "treematch-srun: every node runs its 2 allocated tasks" "counts: $counts" "$(cat "$WORK/l.out")"
fi

# 4. The documented manual form: treematch layout > hosts; SLURM_HOSTFILE + arbitrary.
in_alloc "$WORK/h.out" "$WORK/h.err" \
	"'$CLI' layout --profile '$P' > hosts && SLURM_HOSTFILE=\$PWD/hosts srun -n8 --distribution=arbitrary sh -c '$REPORT'"
rc=$?
why=$(pairs_together "$WORK/h.out")
if [ $rc -eq 0 ] && [ -z "$why" ] && [ "$(grep -c '^rank=' "$WORK/h.out")" -eq 8 ]; then
	pass "treematch layout > hosts; SLURM_HOSTFILE=hosts srun --distribution=arbitrary: pairs together"
else
	fail "treematch layout > hosts; SLURM_HOSTFILE=hosts srun --distribution=arbitrary" \
		"rc=$rc $why" "$(cat "$WORK/h.out" "$WORK/h.err" | tail -n 12)"
fi

# 5. The plugin's per-node binding still applies on top of the layout.
in_alloc "$WORK/w.out" "$WORK/w.err" "sh '$LAUNCHER' -n8 --treematch='$P' '$W'"
rc=$?
n=0
bad=""
while read -r line; do
	c=$(field "$line" cpus)
	t=$(field "$line" tm_cpus)
	if [ -n "$t" ] && [ "$t" != "-" ] && [ "$c" = "$t" ]; then n=$((n + 1)); else bad="$bad [$line]"; fi
done <<EOF
$(grep '^rank=' "$WORK/w.out")
EOF
dups=$(grep '^rank=' "$WORK/w.out" | awk '{ print $2, $3 }' | sort | uniq -d)
if [ $rc -eq 0 ] && [ $n -eq 8 ] && [ -z "$dups" ]; then
	pass "treematch-srun: the plugin binds every task inside its node (distinct CPUs)"
else
	fail "treematch-srun: the plugin binds every task inside its node" "rc=$rc n=$n$bad dups=$dups" \
		"$(tail -n 5 "$WORK/w.err")"
fi

# 6. An MPI program still runs correctly with the new layout.
for flavour in mpich openmpi; do
	command -v "mpicc.$flavour" >/dev/null 2>&1 || continue
	exe=$WORK/mpi_hello.$flavour
	case $flavour in openmpi) mpi=pmix ;; *) mpi=pmi2 ;; esac
	name="MPI ($flavour, --mpi=$mpi) with treematch-srun: 8 ranks run and talk, pairs together"
	if [ $mpi = pmix ] && ! have_pmix; then
		skip "$name" "$NO_PMIX"
		continue
	fi
	if ! "mpicc.$flavour" -O1 -o "$exe" "$SRC/tests/e2e/mpi_hello.c" >"$WORK/mpicc.$flavour.log" 2>&1; then
		fail "$name" "cannot build: $(tail -n 3 "$WORK/mpicc.$flavour.log")"
		continue
	fi
	# started again if Open MPI itself crashed in MPI_Init (lib.sh, ompi_retry)
	ompi_retry "$WORK/m.err" in_alloc "$WORK/m.out" "$WORK/m.err" \
		"sh '$LAUNCHER' -n8 --mpi=$mpi --treematch='$P' sh -c '$REPORT; exec \"$exe\"'"
	rc=$?
	n=$(grep -c '^mpi rank=.* size=8 .*sum=8' "$WORK/m.out")
	why=$(pairs_together "$WORK/m.out")
	if [ $rc -eq 0 ] && [ "$n" -eq 8 ] && [ -z "$why" ]; then
		pass "$name"
	else
		fail "$name" "rc=$rc ranks_ok=$n $why" "$(cat "$WORK/m.out" | head -n 20)" "$(tail -n 5 "$WORK/m.err")"
	fi
done

# 7. In a batch script (SLURM_NTASKS/SLURM_NNODES of the job are set there).
cat >"$WORK/job.sh" <<EOF
#!/bin/sh
sh '$LAUNCHER' --treematch='$P' sh -c '$REPORT'
EOF
rm -f "$WORK/job.out"
jid=$(cd "$WORK" && timeout "$T" sbatch --parsable -N4 -n8 -o "$WORK/job.out" "$WORK/job.sh" 2>"$WORK/job.err")
n=0
while [ -n "$jid" ] && [ -n "$(timeout 10 squeue -h -j "$jid" -o %i 2>/dev/null)" ] && [ $n -lt $((T * 5)) ]; do
	n=$((n + 1))
	sleep 0.2
done
why=$( [ -f "$WORK/job.out" ] && pairs_together "$WORK/job.out")
if [ -n "$jid" ] && [ -f "$WORK/job.out" ] && [ "$(grep -c '^rank=' "$WORK/job.out")" -eq 8 ] && [ -z "$why" ]; then
	pass "sbatch script calling treematch-srun: pairs together"
else
	fail "sbatch script calling treematch-srun" "job=$jid $why" \
		"$(cat "$WORK/job.out" "$WORK/job.err" 2>/dev/null | tail -n 12)"
fi

# 8. Outside an allocation: plain srun, and it says so.
(cd "$WORK" && timeout "$T" sh "$LAUNCHER" -N4 -n8 --treematch="$P" sh -c "$REPORT" \
	>"$WORK/o.out" 2>"$WORK/o.err" </dev/null)
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$WORK/o.out")" -eq 8 ] &&
	grep -q 'not inside an allocation' "$WORK/o.err"; then
	pass "outside an allocation: treematch-srun runs plain srun and says why"
else
	fail "outside an allocation: treematch-srun runs plain srun and says why" "rc=$rc" \
		"$(cat "$WORK/o.out" "$WORK/o.err" | tail -n 8)"
fi
# 12-15. The compiled step plan (treematch layout --plan): made once where
# the whole job is known; each node's plugin reads only its own slice, and a
# plan that is not for the step (other nodes, an edited profile) is named in
# one line per node and the policy applies.
PLAN=$WORK/step.plan
rm -f "$PLAN"
# bound_pairs FILE: 8 whereami lines, each task bound by the plugin
# (cpus = tm_cpus), the heavy pairs on one node. Prints problems.
bound_pairs() {
	[ "$(grep -c '^rank=' "$1")" -eq 8 ] || echo "$(grep -c '^rank=' "$1") of 8 tasks"
	grep '^rank=' "$1" | while read -r line; do
		c=$(field "$line" cpus)
		[ "$c" = "$(field "$line" tm_cpus)" ] || echo "not bound by the plugin: $line"
	done
	for r in 0 1 2 3; do
		a=$(field "$(grep "^rank=$r " "$1")" node)
		b=$(field "$(grep "^rank=$((r + 4)) " "$1")" node)
		[ -n "$a" ] && [ "$a" = "$b" ] || echo "pair ($r,$((r + 4))) on '$a' and '$b'"
	done
}
in_alloc "$WORK/p.out" "$WORK/p.err" \
	"'$CLI' layout --profile '$P' --plan '$PLAN' --exec srun -n8 --treematch='$P,verbose=1' '$W'"
rc=$?
why=$(bound_pairs "$WORK/p.out")
nplan=$(grep -c 'mapped by [^ ]*plan' "$WORK/p.err")
if [ $rc -eq 0 ] && [ -s "$PLAN" ] && [ -z "$why" ] && [ "$nplan" -eq 4 ]; then
	pass "layout --plan --exec srun: the 4 nodes bind from their slices, pairs together"
else
	fail "layout --plan --exec srun: the 4 nodes bind from their slices" \
		"rc=$rc plan_lines=$nplan $why" "$(tail -n 8 "$WORK/p.err")"
fi
# treematch-srun makes the plan itself, beside the profile, and removes it.
in_alloc "$WORK/s.out" "$WORK/s.err" "sh '$LAUNCHER' -n8 --treematch='$P,verbose=1' '$W'"
rc=$?
why=$(bound_pairs "$WORK/s.out")
nplan=$(grep -c 'mapped by [^ ]*plan' "$WORK/s.err")
left=$(ls -A "$WORK" | grep -c '^\.treematch-plan')
if [ $rc -eq 0 ] && [ -z "$why" ] && [ "$nplan" -eq 4 ] && [ "$left" -eq 0 ]; then
	pass "treematch-srun --treematch=P,verbose=1: planned once, the 4 nodes bind from it, plan removed"
else
	fail "treematch-srun: planned once, the nodes bind from it, plan removed" \
		"rc=$rc plan_lines=$nplan left=$left $why" "$(tail -n 8 "$WORK/s.err")"
fi
# stale_plan NAME TAG LINES PATTERN CMD: CMD (in an allocation) runs its 8
# tasks with Slurm's binding, and LINES nodes said PATTERN then fell back.
stale_plan() {
	in_alloc "$WORK/$2.out" "$WORK/$2.err" "$5"
	rc=$?
	n=$(grep -c "is not for this step: $4.*: falling back" "$WORK/$2.err")
	if [ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$WORK/$2.out")" -eq 8 ] && [ "$n" -eq "$3" ]; then
		pass "$1: one line per node, Slurm's binding, the step runs"
	else
		fail "$1: one line per node, Slurm's binding" "rc=$rc lines=$n" \
			"$(tail -n 6 "$WORK/$2.err")"
	fi
}
# 13. The same plan for a step on other nodes (same job).
stale_plan "a plan made for other nodes" q 2 "it was made for other nodes than the step.s" \
	"'$CLI' layout --profile '$P' --plan '$PLAN' >/dev/null && srun -O -N2 -n8 --treematch='$P,plan=$PLAN' '$W'"
# 14. The profile edited after the plan was made.
P2=$WORK/split2.yml
cp "$P" "$P2"
stale_plan "the profile edited after the plan" e 4 "the profile changed since" \
	"'$CLI' layout --profile '$P2' --plan '$PLAN' --exec sh -c \"touch '$P2'; srun -n8 --treematch='$P2' '$W'\""
# 15. The same with failure=fail: the step does not start, and says why.
in_alloc "$WORK/x.out" "$WORK/x.err" \
	"'$CLI' layout --profile '$P2' --plan '$PLAN' --exec sh -c \"touch '$P2'; srun -n8 --treematch='$P2,failure=fail' '$W'\""
rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c '^rank=' "$WORK/x.out")" -eq 0 ] &&
	grep -q 'the profile changed since.*failure=fail: the tasks are not started' "$WORK/x.err"; then
	pass "a stale plan with failure=fail: the step fails with the reason"
else
	fail "a stale plan with failure=fail: the step fails with the reason" "rc=$rc" \
		"$(tail -n 6 "$WORK/x.err")"
fi

# 9-11. Transparent mode: the admin's cli_filter (cli/cli_filter.lua) makes
# plain `srun --treematch=P` use the layout. srun reads slurm.conf at every
# start, so enabling the filter needs no daemon restart.
cp "$SRC/cli/cli_filter.lua" "$TMATCH_CLUSTER_DIR/etc/cli_filter.lua"
echo "CliFilterPlugins=cli_filter/lua" >>"$SLURM_CONF"
in_alloc "$WORK/f.out" "$WORK/f.err" "srun --treematch='$P' sh -c '$REPORT'"
rc=$?
why=$(pairs_together "$WORK/f.out")
if [ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$WORK/f.out")" -eq 8 ] && [ -z "$why" ]; then
	pass "cli_filter: plain srun --treematch=P puts the heavy pairs on one node and switch"
else
	fail "cli_filter: plain srun --treematch=P puts the heavy pairs on one node and switch" \
		"rc=$rc $why" "$(cat "$WORK/f.out")" "$(tail -n 5 "$WORK/f.err")"
fi
if command -v mpicc.mpich >/dev/null 2>&1 && [ -x "$WORK/mpi_hello.mpich" ]; then
	in_alloc "$WORK/fm.out" "$WORK/fm.err" \
		"srun -n8 --mpi=pmi2 --treematch='$P' sh -c '$REPORT; exec \"$WORK/mpi_hello.mpich\"'"
	rc=$?
	n=$(grep -c '^mpi rank=.* size=8 .*sum=8' "$WORK/fm.out")
	why=$(pairs_together "$WORK/fm.out")
	if [ $rc -eq 0 ] && [ "$n" -eq 8 ] && [ -z "$why" ]; then
		pass "cli_filter: MPICH program under plain srun --treematch runs, pairs together"
	else
		fail "cli_filter: MPICH program under plain srun --treematch runs, pairs together" \
			"rc=$rc ranks_ok=$n $why" "$(tail -n 5 "$WORK/fm.err")"
	fi
fi
# The user's own distribution wins, and the filter says so.
in_alloc "$WORK/fc.out" "$WORK/fc.err" "srun -m block --treematch='$P' sh -c '$REPORT'"
if [ "$(grep -c '^rank=' "$WORK/fc.out")" -eq 8 ] && ! pairs_together "$WORK/fc.out" >/dev/null &&
	grep -q 'your --nodelist/--distribution decide the nodes' "$WORK/fc.err"; then
	pass "cli_filter: an explicit -m block is kept (and the filter says the layout is not applied)"
else
	fail "cli_filter: an explicit -m block is kept" "$(cat "$WORK/fc.out" "$WORK/fc.err" | tail -n 10)"
fi
# 16-19. Every --treematch value through the filter, and the plan it passes.
# A wrapper reports where the task landed and the plan it was given, then
# runs its arguments (learn mode looks through it for the MPI program).
WRAP=$WORK/report.sh
cat >"$WRAP" <<'EOF'
#!/bin/sh
echo "rank=$SLURM_PROCID host=$(hostname) node=$SLURMD_NODENAME addr=$SLURM_TOPOLOGY_ADDR plan=${TREEMATCH_PLAN:--}"
[ $# -gt 0 ] && exec "$@"
exit 0
EOF
chmod 755 "$WRAP"
# off: nothing to lay out, nothing said (was: "node layout not applied ...
# off: unknown profile format").
in_alloc "$WORK/g.out" "$WORK/g.err" "srun --treematch=off '$WRAP'"
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^rank=.*host=' "$WORK/g.out")" -eq 8 ] && ! grep -q 'treematch' "$WORK/g.err"; then
	pass "cli_filter: --treematch=off runs the step and says nothing"
else
	fail "cli_filter: --treematch=off runs the step and says nothing" "rc=$rc" "$(tail -n 5 "$WORK/g.err")"
fi
# A profile: laid out, and each node reads its slice of the plan passed in
# the step's environment; the plan goes when srun ends.
rm -f "$WORK"/.treematch-plan.*
in_alloc "$WORK/g.out" "$WORK/g.err" "srun --treematch='$P,verbose=1' '$WRAP'"
rc=$?
why=$(pairs_together "$WORK/g.out")
plans=$(grep -c "plan=$WORK/.treematch-plan\.[0-9]*\.[0-9]*\$" "$WORK/g.out")
left=$(ls "$WORK"/.treematch-plan.* 2>/dev/null)
if [ $rc -eq 0 ] && [ -z "$why" ] && [ "$plans" -eq 8 ] && grep -q 'mapped by plan-' "$WORK/g.err" &&
	[ -z "$left" ]; then
	pass "cli_filter: the step's plan is passed (each node maps from its slice) and removed when srun ends"
else
	fail "cli_filter: the step's plan is passed (each node maps from its slice) and removed when srun ends" \
		"rc=$rc $why plans=$plans left=$left" "$(grep -v '^rank=' "$WORK/g.out" | head -n 3)" "$(tail -n 5 "$WORK/g.err")"
fi
# learn: nothing stored yet, then laid out from the stored profile of the
# step's MPI program.
if [ -x "$WORK/mpi_hello.mpich" ]; then
	export XDG_CACHE_HOME=$WORK/cache
	rm -rf "$XDG_CACHE_HOME"
	learn="srun -n8 --mpi=pmi2 --treematch=learn,min_gain=0,verbose=1 '$WRAP' '$WORK/mpi_hello.mpich'"
	in_alloc "$WORK/g.out" "$WORK/g.err" "$learn"
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q 'node layout not applied' "$WORK/g.err" &&
		[ "$(grep -c '^mpi rank=.* size=8 .*sum=8' "$WORK/g.out")" -eq 8 ]; then
		pass "cli_filter: --treematch=learn with nothing stored runs the step, no error"
	else
		fail "cli_filter: --treematch=learn with nothing stored runs the step, no error" "rc=$rc" \
			"$(tail -n 5 "$WORK/g.err")"
	fi
	# what the first run recorded is stored now (srun stores it): replace
	# it by the split profile, whose pairs Slurm's block layout separates;
	# each node follows srun's decision, then the plan made from that entry
	"$CLI" store put "$WORK/mpi_hello.mpich" "$P" >"$WORK/g.put" 2>&1
	in_alloc "$WORK/g.out" "$WORK/g.err" "$learn"
	rc=$?
	why=$(pairs_together "$WORK/g.out")
	if [ $rc -eq 0 ] && [ -z "$why" ] && grep -q "plan=.*/.treematch-plan\." "$WORK/g.out" &&
		grep -q 'mapped by plan-' "$WORK/g.err" &&
		[ "$(grep -c '^mpi rank=.* size=8 .*sum=8' "$WORK/g.out")" -eq 8 ]; then
		pass "cli_filter: --treematch=learn lays the ranks out across nodes from the stored profile, with a plan each node places from"
	else
		fail "cli_filter: --treematch=learn lays the ranks out across nodes from the stored profile, with a plan each node places from" \
			"rc=$rc $why" "$(cat "$WORK/g.put")" "$(head -n 8 "$WORK/g.out")" "$(tail -n 5 "$WORK/g.err")"
	fi
	unset XDG_CACHE_HOME
fi
# Options alone: the site's default profile (for steps of its size).
echo "required $PLUGIN_ARGS profile=$P" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"
in_alloc "$WORK/g.out" "$WORK/g.err" "srun --treematch=verbose=1 '$WRAP'"
rc=$?
why=$(pairs_together "$WORK/g.out")
if [ $rc -eq 0 ] && [ -z "$why" ] && [ "$(grep -c '^rank=.*host=' "$WORK/g.out")" -eq 8 ]; then
	pass "cli_filter: options alone lay out the site's default profile"
else
	fail "cli_filter: options alone lay out the site's default profile" "rc=$rc $why" "$(tail -n 5 "$WORK/g.err")"
fi
# (the build's helper: an uninstalled plugin has none where it looks by default)
echo "required $PLUGIN_ARGS" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"

# 12. The network as Slurm reads it: heavy groups of four ranks, {0,1,4,5}
# and {2,3,6,7}, two nodes each, on a network of two units (switches or
# blocks), n[1-2] and n[3-4]. Slurm's block distribution puts ranks 0,1 on
# n1 and 4,5 on n3, across units, whether it orders the nodes by name or by
# the network (checked first); the layout must keep each group on the two
# nodes of one unit. The network is a tree or blocks in topology.yaml (the
# partition's topology, beside a flat cluster default; the topology.conf
# left beside it, which Slurm ignores, pairs n1 with n3: following it
# would split the groups) and BlockName lines in topology.conf. A release
# whose slurmctld reads the file runs with it beside slurm.conf (Slurm
# 25.05 for topology.yaml, 23.11 for topology/block); an older one keeps
# its two-switch topology.conf and the CLI is given the file
# (TREEMATCH_TOPOLOGY_CONF).
G=$WORK/groups.yml
{
	printf 'format: comm-profile\nversion: 1\nranks: 8\nmetrics: [bytes]\ndirected: false\nedges:\n'
	for g in "0 1 4 5" "2 3 6 7"; do
		for a in $g; do
			for b in $g; do
				[ "$a" -lt "$b" ] && echo "  - [$a, $b, 100000]"
			done
		done
	done
	echo "  - [1, 2, 10]"
} >"$G"
unit_of() { case $1 in n1 | n2) echo A ;; n3 | n4) echo B ;; *) echo "?" ;; esac; }
# groups_apart FILE: each group of four on two nodes of one unit; prints why not
groups_apart() {
	for g in "0 1 4 5" "2 3 6 7"; do
		hosts=$(for r in $g; do
			field "$(grep "^rank=$r " "$1")" node
		done | sort -u | tr '\n' ' ')
		units=$(for h in $hosts; do unit_of "$h"; done | sort -u | tr -d '\n')
		[ "$(echo $hosts | wc -w)" = 2 ] && [ "${#units}" = 1 ] && [ "$units" != "?" ] ||
			echo "group {$g} on $hosts(units $units)"
	done
}
release=$(slurmd -V | sed -n 's/^slurm[^ ]* \([0-9]*\.[0-9]*\).*/\1/p')
major=$(echo "$release" | tr -d .)
cat >"$WORK/net-tree.yaml" <<'EOF'
- topology: eth
  cluster_default: true
  flat: true
- topology: ib
  tree:
    switches:
      - switch: top
        children: sa,sb
      - switch: sa
        nodes: n[1-2]
      - switch: sb
        nodes: n[3-4]
EOF
cat >"$WORK/net-block.yaml" <<'EOF'
- topology: eth
  cluster_default: true
  flat: true
- topology: nvl
  block:
    block_sizes: [2, 4]
    blocks:
      - block: ba
        nodes: n[1-2]
      - block: bb
        nodes: n[3-4]
EOF
printf 'BlockName=ba Nodes=n[1-2]\nBlockName=bb Nodes=n[3-4]\nBlockSizes=2,4\n' >"$WORK/net-block.conf"
# t_network LABEL FILE NAME PLUGIN MIN: NAME the topology of FILE, PLUGIN the
# TopologyPlugin its slurmctld needs, MIN the first Slurm (2505, 2311) that reads it
t_network() {
	label=$1 file=$2 name=$3 plugin=$4 min=$5
	unset TREEMATCH_TOPOLOGY_CONF TREEMATCH_LAYOUT_ARGS
	if [ "$major" -ge "$min" ] 2>/dev/null; then
		how="slurmctld reads it beside slurm.conf"
		opts=
		[ -n "$name" ] && opts="Topology=$name"
		set -- --topology "$file" --topology-plugin "$plugin" --partition-opts "$opts"
	else
		how="Slurm $release's slurmctld does not read it: the CLI is given the file"
		export TREEMATCH_TOPOLOGY_CONF=$file
		[ -n "$name" ] && export TREEMATCH_LAYOUT_ARGS="--topology-name $name"
		set --
	fi
	if ! $CLUSTER start --nodes 4 "$@" >"$WORK/cluster.out" 2>&1; then
		fail "$label: cluster start ($how)" "$(tail -n 20 "$WORK/cluster.out")"
		return
	fi
	# beside a topology.yaml slurmctld read, a topology.conf it ignores
	case $file in
	*.yaml) [ -z "${TREEMATCH_TOPOLOGY_CONF:-}" ] &&
		printf 'SwitchName=s0 Nodes=n[1,3]\nSwitchName=s1 Nodes=n[2,4]\nSwitchName=top Switches=s[0-1]\n' \
			>"$TMATCH_CLUSTER_DIR/etc/topology.conf" ;;
	esac
	in_alloc "$WORK/nb.out" "$WORK/nb.err" "srun -n8 sh -c '$REPORT'"
	if [ "$(grep -c '^rank=' "$WORK/nb.out")" -eq 8 ] && [ -n "$(groups_apart "$WORK/nb.out")" ]; then
		pass "$label: block distribution puts each heavy group across units (the case to fix)"
	else
		fail "$label: block distribution puts each heavy group across units" \
			"$(cat "$WORK/nb.out" "$WORK/nb.err")"
	fi
	in_alloc "$WORK/nl.out" "$WORK/nl.err" "sh '$LAUNCHER' -n8 --treematch='$G' sh -c '$REPORT'"
	rc=$?
	why=$(groups_apart "$WORK/nl.out")
	if [ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$WORK/nl.out")" -eq 8 ] && [ -z "$why" ]; then
		pass "$label ($how): treematch-srun keeps each heavy group inside one unit"
	else
		fail "$label ($how): treematch-srun keeps each heavy group inside one unit" \
			"rc=$rc $why" "$(cat "$WORK/nl.out")" "$(tail -n 5 "$WORK/nl.err")"
	fi
	# The plugin reads the network as slurmstepd's slurm.conf gives it (no
	# plan: TREEMATCH_SRUN_PLAN=0): a group's ranks share their lowest
	# switch in TREEMATCH_POSITION, the two groups' differ.
	if [ -n "${TREEMATCH_TOPOLOGY_CONF:-}" ]; then
		skip "$label: the plugin's TREEMATCH_POSITION follows it" \
			"the plugin reads the network slurmctld reads, and Slurm $release's does not read this file"
		return
	fi
	in_alloc "$WORK/np.out" "$WORK/np.err" "TREEMATCH_SRUN_PLAN=0 sh '$LAUNCHER' -n8 --treematch='$G' \
		sh -c 'echo rank=\$SLURM_PROCID node=\$SLURMD_NODENAME pos=\$TREEMATCH_POSITION'"
	sw=$(for r in 0 1 2 3 4 5 6 7; do
		field "$(grep "^rank=$r " "$WORK/np.out")" pos | tr ',' '\n' | sed -n 's/^switch=//p'
	done | tr '\n' ' ')
	set -- $sw
	if [ $# -eq 8 ] && [ "$1" = "$2" ] && [ "$1" = "$5" ] && [ "$1" = "$6" ] &&
		[ "$3" = "$4" ] && [ "$3" = "$7" ] && [ "$3" = "$8" ] && [ "$1" != "$3" ] &&
		[ -z "$(groups_apart "$WORK/np.out")" ]; then
		pass "$label: the plugin's TREEMATCH_POSITION puts each group under one lowest switch ($sw)"
	else
		fail "$label: the plugin's TREEMATCH_POSITION puts each group under one lowest switch" \
			"switch= of ranks 0-7: $sw" "$(cat "$WORK/np.out")" "$(tail -n 5 "$WORK/np.err")"
	fi
}
t_network "tree in topology.yaml" "$WORK/net-tree.yaml" ib topology/tree 2505
t_network "block in topology.yaml" "$WORK/net-block.yaml" nvl topology/block 2505
t_network "BlockName in topology.conf" "$WORK/net-block.conf" "" topology/block 2311
unset TREEMATCH_TOPOLOGY_CONF TREEMATCH_LAYOUT_ARGS
[ "$FAILED" -eq 0 ]
