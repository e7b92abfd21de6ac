#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_record_srun.sh - srun --treematch-record=FILE on a real, throwaway
# Slurm (tests/e2e/cluster.sh), then replay with --treematch=FILE:
#   - 1 node: tests/mpi/pattern (C, Open MPI/pmix) and pattern_f (Fortran,
#     MPICH/pmi2, with collectives=logical): edges exactly as hand-computed;
#   - LAMMPS (lmp, Open MPI) and ScaLAPACK xdlu (MPICH): recorded under srun,
#     loaded, then replayed with --treematch= of the recorded profile;
#   - --treematch-record with --treematch in one step is refused by srun;
#     a statically linked program fails the step with a message;
#   - learn mode (--treematch=learn): the first run recorded and stored by
#     srun, the second placed from the store, min_gain, a damaged entry,
#     a step without MPI;
#   - 4 nodes in network namespaces: pattern over 4 nodes, exact, and the
#     provenance lists the 4 nodes.
# Needs root; tears the cluster down on exit. Reports through summary.sh.
# TMATCH_E2E_NODES1=0 / TMATCH_E2E_NODES4=0 skip a part.
set -u

SRC=${SRCDIR:-$(pwd)}
B=${BUILDDIR:?BUILDDIR must be set}
. "$SRC/tests/e2e/lib.sh"
MPI=$B/tests/mpi
WORK=$B/e2e/record-srun
export TMATCH_CLUSTER_DIR=$B/e2e/cluster-record
CLUSTER="sh $SRC/tests/e2e/cluster.sh"
T=${TMATCH_E2E_TIMEOUT:-120}
export OMPI_MCA_btl=self,vader,tcp
# the recorders of this build, not an installed copy
export TREEMATCH_RECORD_LIBDIR=$B/profiler
unset TREEMATCH_RECORD_OUTPUT TREEMATCH_RECORD_COLLECTIVES

trap 'e2e_finish record-srun test_record_srun' EXIT
trap 'exit 130' INT TERM

rm -rf "$WORK"
mkdir -p "$WORK"
if [ "$(id -u)" -ne 0 ]; then
	fail "srun recording tests need root (munge and Slurm daemons)"
	exit 1
fi

expected "$SRC/tests/mpi/pattern.expected" >"$WORK/p2p.exp"
expected "$SRC/tests/mpi/pattern-coll.expected" >"$WORK/coll.exp"

run() { # name srun-args...: in $WORK, stdout/stderr to $WORK/name.{out,err}
	name=$1
	shift
	(cd "$WORK" && timeout "$T" srun "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null)
}

start() {
	if ! $CLUSTER start "$@" >"$WORK/cluster.out" 2>&1; then
		fail_files "cluster start $*" "$WORK/cluster.out"
		return 1
	fi
	export SLURM_CONF=$TMATCH_CLUSTER_DIR/etc/slurm.conf
	echo "required $PLUGIN_ARGS" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"
}

# the plugin placed the step (verbose=1 summary line, no fallback)
placed() {
	grep -q 'treematch:' "$1" && ! grep -q 'falling back' "$1"
}

exact() { # tag description yml section expected-file
	edges "$3" "$4" >"$WORK/$1.got"
	if [ -s "$3" ] && diff "$WORK/$1.got" "$5" >"$WORK/$1.diff" 2>&1; then
		pass "$2"
	else
		fail_files "$2" "$WORK/$1.diff" "$WORK/$1.err"
	fi
}

# mpi_hello's lines "mpi rank=R size=S cpus=LIST tm_cpus=LIST sum=S" of FILE:
# every rank bound where the plugin said (tm_cpus set and equal to cpus), or
# none placed by it (tm_cpus=-).
all_placed() {
	[ "$(grep -c '^mpi rank=' "$1")" = "$2" ] &&
		! grep '^mpi rank=' "$1" | grep -q 'tm_cpus=- ' &&
		! grep '^mpi rank=' "$1" | sed 's/.* cpus=\([^ ]*\) tm_cpus=\([^ ]*\) .*/\1 \2/' |
			awk '$1 != $2 { bad = 1 } END { exit !bad }'
}
none_placed() {
	[ "$(grep -c '^mpi rank=' "$1")" = "$2" ] &&
		[ "$(grep -c '^mpi rank=.* tm_cpus=- ' "$1")" = "$2" ]
}

# learn mode (issue 20): run 1 records and keeps Slurm's binding, srun
# stores the profile; run 2 is placed from the store, seen from inside the
# tasks; below min_gain Slurm's binding is kept; a damaged entry is
# discarded in one line and the step runs (and records again); a step
# without MPI learns nothing.
t_learn() {
	# Open MPI over PMIx, or MPICH over PMI-2 where Slurm has no PMIx: learn
	# mode is the same either way
	if have_pmix; then
		lmpi=openmpi lpmi=pmix
	else
		lmpi=mpich lpmi=pmi2
		echo "note: learn mode runs MPICH over PMI-2: $NO_PMIX"
	fi
	hello=$WORK/mpi_hello.$lmpi
	if ! "mpicc.$lmpi" -O1 -o "$hello" "$SRC/tests/e2e/mpi_hello.c" >"$WORK/mpicc.log" 2>&1; then
		fail_files "learn: build mpi_hello" "$WORK/mpicc.log"
		return
	fi
	export XDG_CACHE_HOME=$WORK/xdg
	store=$XDG_CACHE_HOME/treematch/store
	rm -rf "$XDG_CACHE_HOME"
	learn="--treematch=learn,verbose=1,min_gain=0"

	ompi_retry "$WORK/learn1.err" run learn1 -n2 --mpi=$lpmi "$learn" "$hello"
	if none_placed "$WORK/learn1.out" 2 && grep -q 'this run is recorded' "$WORK/learn1.err" &&
		[ "$(ls "$store"/*.meta 2>/dev/null | wc -l)" = 1 ] &&
		[ -z "$(ls -A "$store" | grep '^\.rec-')" ] &&
		"$TM" store list >"$WORK/learn-list.out" 2>&1 &&
		awk -v exe="mpi_hello.$lmpi" '$2 == 2 && index($NF, exe) { ok = 1 } END { exit !ok }' "$WORK/learn-list.out"; then
		pass "learn: run 1 keeps Slurm's binding, is recorded and stored"
	else
		fail_files "learn: run 1 keeps Slurm's binding, is recorded and stored" \
			"$WORK/learn1.out" "$WORK/learn1.err" "$WORK/learn-list.out"
	fi

	ompi_retry "$WORK/learn2.err" run learn2 -n2 --mpi=$lpmi "$learn" "$hello"
	if all_placed "$WORK/learn2.out" 2 && grep -q 'from the stored profile' "$WORK/learn2.err" &&
		grep -q 'mapped by' "$WORK/learn2.err"; then
		pass "learn: run 2 is placed from the store (bindings seen by the ranks)"
	else
		fail_files "learn: run 2 is placed from the store (bindings seen by the ranks)" \
			"$WORK/learn2.out" "$WORK/learn2.err"
	fi

	# this node's two cores share everything: no gain, Slurm's binding kept
	ompi_retry "$WORK/learn3.err" run learn3 -n2 --mpi=$lpmi --treematch=learn,verbose=1 "$hello"
	if none_placed "$WORK/learn3.out" 2 && grep -q 'less than min_gain=2 %' "$WORK/learn3.err"; then
		pass "learn: below min_gain=2 % Slurm's binding is kept, and said"
	else
		fail_files "learn: below min_gain=2 % Slurm's binding is kept, and said" \
			"$WORK/learn3.out" "$WORK/learn3.err"
	fi

	prof=$(ls "$store"/*.compiled | head -n 1)
	printf 'damage' | dd of="$prof" bs=1 seek=40 conv=notrunc 2>/dev/null
	ompi_retry "$WORK/learn4.err" run learn4 -n2 --mpi=$lpmi "$learn" "$hello"
	rc=$?
	if [ $rc -eq 0 ] && none_placed "$WORK/learn4.out" 2 &&
		[ "$(grep -c 'discarded the stored profile' "$WORK/learn4.err")" = 1 ] &&
		[ "$(ls "$store"/*.meta 2>/dev/null | wc -l)" = 1 ] && "$TM" store find "$hello" --ntasks 2 \
		>/dev/null 2>&1; then
		pass "learn: a damaged entry is discarded in one line, the step runs and records again"
	else
		fail_files "learn: a damaged entry is discarded in one line, the step runs and records again" \
			"$WORK/learn4.out" "$WORK/learn4.err"
	fi

	if run learn5 -n1 --treematch=learn,verbose=1 /bin/true &&
		grep -q 'not learned' "$WORK/learn5.err" && [ "$(ls "$store"/*.meta | wc -l)" = 1 ]; then
		pass "learn: a step without MPI learns nothing and runs"
	else
		fail_files "learn: a step without MPI learns nothing and runs" "$WORK/learn5.err"
	fi
	unset XDG_CACHE_HOME

	# the site's policy: every step learns, into the site store, nothing asked of users
	site=$WORK/site
	mkdir -p "$site"
	chmod 1777 "$site"
	conf=$TMATCH_CLUSTER_DIR/etc/plugstack.conf
	cp "$conf" "$WORK/plugstack.saved"
	echo "required $PLUGIN_ARGS default=learn store=$site verbose=1 min_gain=0" >"$conf"
	ompi_retry "$WORK/site1.err" run site1 -n2 --mpi=$lpmi "$hello"
	ompi_retry "$WORK/site2.err" run site2 -n2 --mpi=$lpmi "$hello"
	ompi_retry "$WORK/site3.err" run site3 -n2 --mpi=$lpmi --treematch=off "$hello"
	if none_placed "$WORK/site1.out" 2 && all_placed "$WORK/site2.out" 2 &&
		none_placed "$WORK/site3.out" 2 && ! grep -q learn "$WORK/site3.err" &&
		[ "$(ls "$site/$(id -u)"/*.meta 2>/dev/null | wc -l)" = 1 ] &&
		[ "$(stat -c %a "$site/$(id -u)")" = 700 ]; then
		pass "learn: default=learn with a site store: run 1 stored, run 2 placed, off honoured"
	else
		fail_files "learn: default=learn with a site store: run 1 stored, run 2 placed, off honoured" \
			"$WORK/site1.err" "$WORK/site2.out" "$WORK/site2.err" "$WORK/site3.err"
	fi
	cp "$WORK/plugstack.saved" "$conf"
}

if [ "${TMATCH_E2E_NODES1:-1}" = 1 ] && start --nodes 1; then
	if srun --help 2>&1 | grep -q -- '--treematch-record='; then
		pass "srun --help lists --treematch-record"
	else
		fail_files "srun --help lists --treematch-record"
	fi

	if have_pmix; then
		run c-ompi -n4 -O --mpi=pmix --treematch-record=c-ompi.yml "$MPI/pattern.openmpi"
		exact c-ompi "c-ompi: srun-recorded C/Open MPI edges exact" "$WORK/c-ompi.yml" edges \
			"$WORK/p2p.exp"
	else
		skip "c-ompi: srun-recorded C/Open MPI edges exact" "$NO_PMIX"
	fi

	run f-mpich -n4 -O --mpi=pmi2 --treematch-record=f-mpich.yml,collectives=logical \
		"$MPI/pattern_f.mpich"
	exact f-mpich "f-mpich: srun-recorded Fortran/MPICH edges exact" "$WORK/f-mpich.yml" edges \
		"$WORK/p2p.exp"
	exact f-mpich "f-mpich: srun-recorded Fortran/MPICH collectives (logical model) exact" \
		"$WORK/f-mpich.yml" coll_edges "$WORK/coll.exp"
	if grep -q '^  job: {id: [0-9]*, step: [0-9]*}' "$WORK/f-mpich.yml" &&
		grep -q '^collectives: logical$' "$WORK/f-mpich.yml" &&
		{ ! have_pmix || grep -q '^collectives: wire$' "$WORK/c-ompi.yml"; }; then
		pass "provenance records the Slurm job and step; the collectives' model is said"
	else
		fail_files "provenance records the Slurm job and step; the collectives' model is said" \
			"$WORK/f-mpich.yml" "$WORK/c-ompi.yml"
	fi

	# refusals
	if ! run both -n4 -O --mpi=pmi2 --treematch-record=x.yml --treematch=f-mpich.yml \
		"$MPI/pattern.mpich" && grep -q 'treematch-record and --treematch' "$WORK/both.err" &&
		[ ! -e "$WORK/x.yml" ]; then
		pass "recording and placing in one step: refused by srun with a message"
	else
		fail_files "recording and placing in one step: refused by srun with a message" "$WORK/both.err"
	fi
	if ! run static -n1 --treematch-record=s.yml "$MPI/static_prog" &&
		grep -q 'statically linked' "$WORK/static.err"; then
		pass "static program: the step fails with a message"
	else
		fail_files "static program: the step fails with a message" "$WORK/static.err"
	fi
	if ! run badopt -n1 --treematch-record=x.yml,sideways "$MPI/pattern.mpich" &&
		grep -q "valid options are collectives" "$WORK/badopt.err"; then
		pass "unknown --treematch-record option: refused, valid ones listed"
	else
		fail_files "unknown --treematch-record option: refused, valid ones listed" "$WORK/badopt.err"
	fi

	t_learn
	$CLUSTER stop >/dev/null 2>&1
fi

if [ "${TMATCH_E2E_NODES4:-1}" = 1 ] && start --nodes 4; then
	# The emulated nodes share one kernel, /tmp and /dev/shm: Open MPI's
	# shared-memory BTL crashed once here (vader poll, LAMMPS replay), so
	# ranks talk over TCP between namespaces, as on real nodes.
	export OMPI_MCA_btl=self,tcp
	run n4 -N4 -n4 --mpi=pmi2 --treematch-record=n4.yml "$MPI/pattern.mpich"
	exact n4 "n4: 4 nodes, MPICH/pmi2 edges exact" "$WORK/n4.yml" edges "$WORK/p2p.exp"
	if [ "$(grep -c '^    - {name: "n[1-4]", ranks: \[[0-3]\]}' "$WORK/n4.yml" 2>/dev/null)" = 4 ]; then
		pass "n4: provenance lists the 4 nodes and their ranks"
	else
		fail_files "n4: provenance lists the 4 nodes and their ranks" "$WORK/n4.yml"
	fi
	# learn mode over 4 nodes: rank 0's node writes the recording into the
	# store (here /tmp, shared like a home directory), srun stores it; the
	# stored profile is exactly the pattern; the next run is placed on each node
	export XDG_CACHE_HOME=$WORK/xdg4
	rm -rf "$XDG_CACHE_HOME"
	learn="--treematch=learn,verbose=1,min_gain=0"
	run learn-n4a -N4 -n4 --mpi=pmi2 "$learn" "$MPI/pattern.mpich"
	run learn-n4b -N4 -n4 --mpi=pmi2 "$learn" "$MPI/pattern.mpich"
	prof=$(ls "$XDG_CACHE_HOME"/treematch/store/*.compiled 2>/dev/null | head -n 1)
	if [ -n "$prof" ] && "$TM" profile convert -o "$WORK/learn-n4.yml" "$prof" >"$WORK/learn-n4.conv" 2>&1 &&
		[ "$(grep -c 'nothing stored yet' "$WORK/learn-n4a.err")" = 4 ]; then
		exact learn-n4 "learn: 4 nodes, the stored profile is the pattern's edges" \
			"$WORK/learn-n4.yml" edges "$WORK/p2p.exp"
	else
		fail_files "learn: 4 nodes, the stored profile is the pattern's edges" \
			"$WORK/learn-n4a.err" "$WORK/learn-n4.conv"
	fi
	if [ "$(grep -c 'task(s) mapped by' "$WORK/learn-n4b.err")" = 4 ] &&
		[ "$(grep -c 'cpu-bind=MAP' "$WORK/learn-n4b.err")" = 4 ]; then
		pass "learn: 4 nodes, the next run is placed from the store on every node"
	else
		fail_files "learn: 4 nodes, the next run is placed from the store on every node" \
			"$WORK/learn-n4b.err"
	fi
	unset XDG_CACHE_HOME
	# real applications: record, then replay the recorded profile
	if ! have_pmix; then
		skip "lammps (Open MPI): recorded and replayed under srun on 4 nodes" "$NO_PMIX"
	elif command -v lmp >/dev/null 2>&1; then
		ompi_retry "$WORK/lmp-rec.err" run lmp-rec -N4 -n8 --mpi=pmix --treematch-record=lammps.yml \
			lmp -in "$SRC/tests/mpi/in.melt" -log none -screen none
		if [ -s "$WORK/lammps.yml" ] && "$TM" profile check "$WORK/lammps.yml" \
			>"$WORK/lammps.check" 2>&1 && [ "$(edges "$WORK/lammps.yml" edges | wc -l)" -ge 4 ]; then
			pass "lammps: recorded under srun on 4 nodes, loads"
		else
			fail_files "lammps: recorded under srun on 4 nodes, loads" "$WORK/lmp-rec.err" "$WORK/lammps.check"
		fi
		if ompi_retry "$WORK/lmp-play.err" run lmp-play -N4 -n8 --mpi=pmix --treematch="$WORK/lammps.yml,verbose=1" \
			lmp -in "$SRC/tests/mpi/in.melt" -log none -screen none &&
			placed "$WORK/lmp-play.err"; then
			pass "lammps: replayed with --treematch= of the recorded profile, placed"
		else
			fail_files "lammps: replayed with --treematch= of the recorded profile, placed" "$WORK/lmp-play.err"
		fi
	else
		fail_files "lammps installed (tests/install-deps.sh lists it)"
	fi
	XDLU=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu
	if [ -x "$XDLU" ]; then
		cp "$SRC/tests/mpi/LU.dat" "$WORK/"
		run xdlu-rec -N2 -n4 --mpi=pmi2 --treematch-record=xdlu.yml "$XDLU"
		if [ -s "$WORK/xdlu.yml" ] && "$TM" profile check "$WORK/xdlu.yml" >/dev/null 2>&1 &&
			grep -q passed "$WORK/xdlu-rec.out"; then
			pass "xdlu (MPICH): recorded under srun on 2 nodes, loads"
		else
			fail_files "xdlu (MPICH): recorded under srun on 2 nodes, loads" "$WORK/xdlu-rec.err"
		fi
		if run xdlu-play -N2 -n4 --mpi=pmi2 --treematch="$WORK/xdlu.yml,verbose=1" "$XDLU" &&
			grep -q passed "$WORK/xdlu-play.out" && placed "$WORK/xdlu-play.err"; then
			pass "xdlu (MPICH): replayed with --treematch= of the recorded profile, placed"
		else
			fail_files "xdlu (MPICH): replayed with --treematch= of the recorded profile, placed" \
				"$WORK/xdlu-play.err"
		fi
	elif ! shipped scalapack-mpi-test; then
		skip "xdlu (MPICH): recorded and replayed under srun" \
			"this release ships no scalapack-mpi-test (forky's ScaLAPACK builds no test programs)"
	else
		fail_files "scalapack-mpi-test installed (tests/install-deps.sh lists it)"
	fi
fi
[ "$FAILED" -eq 0 ]
