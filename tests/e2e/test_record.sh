#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_record.sh - end-to-end tests of the recorder outside Slurm
# (`treematch record -- mpirun ...`), with real MPI programs:
#   - tests/mpi/pattern.c and pattern_f.F90 (built as pattern_f, `use mpi`,
#     and pattern_f08, `use mpi_f08`) under Open MPI and MPICH: the recorded
#     point-to-point and (--collectives=logical) collective edges equal the
#     hand-computed tests/mpi/pattern*.expected exactly (neighbourhood
#     collectives on Cart, Graph and Dist_graph communicators included, in the
#     point-to-point edges, in every mode); with the argument `rma` (C and
#     both Fortran bindings) the one-sided calls of pattern.c, in
#     tests/mpi/pattern-rma.expected;
#   - the profile loads with the project's loader (treematch profile check),
#     and no temporary file is left next to it;
#   - Open MPI's pml monitoring, run in the same launch and imported with
#     `treematch profile convert --from ompi`, gives the same point-to-point
#     matrix (within 1 %; exact in practice), except for persistent sends,
#     which monitoring is known not to see (checked as exactly that gap);
#     neighbourhood and v-collectives are left out of that run (see below);
#   - LAMMPS (lmp, Open MPI) and ScaLAPACK xdlu (both MPIs) from Debian
#     packages: recorded, loaded; LAMMPS and xdlu/Open MPI compared with
#     monitoring;
#   - tests/mpi/pattern_mt.c: 4 threads per rank under MPI_THREAD_MULTIPLE;
#   - the hashed counters (forced with TREEMATCH_RECORD_DENSE_MAX=0);
#   - refusals: static programs, --treematch in the same run, scripts;
#   - collectives (the default, wire): a program whose traffic is all
#     collectives on the rows and columns of a scrambled process grid
#     (tests/fixtures/predict/collgrid.c) gets a profile with exactly that
#     traffic, the messages its trace replays, and a placement from it that
#     beats packed; the profile says `collectives: wire` (version 2);
#   - --trace: the halo of tests/fixtures/predict traced under both MPIs and
#     replayed by `treematch predict`, which places by the profile recorded
#     with it as the plugin would (its auto is treematch map's); repeated
#     phases of compute written at their least time; collectives on row and
#     column communicators written as messages; completions as the waits the
#     run observed; MPI_Ibarrier marks a trace unreplayable.
# Reports through tests/summary.sh; prints "record: N passed, N failed".
set -u

B=${BUILDDIR:?BUILDDIR must be set}
SRC=${SRCDIR:-$(pwd)}
NO_SLURM=1 # recording alone, no cluster (lib.sh)
. "$SRC/tests/e2e/lib.sh"
MPI=$B/tests/mpi
W=$B/e2e/record
rm -rf "$W"
mkdir -p "$W"
# More ranks than cores on a 2-core machine: Open MPI 4's mpirun reads the
# first, Open MPI 5's (PRRTE) only the second. Not for rankfile launches
# (test_launchers.sh): a default mapping policy there replaces the rankfile.
export OMPI_MCA_rmaps_base_oversubscribe=1
export PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
# keep Open MPI off the network interfaces and quiet about them; UCX (MPICH's
# ch4:ucx, Open MPI's pml ucx) too: it reads every interface at MPI_Init,
# and one that goes away meanwhile (CI's other releases start and stop
# their clusters' interfaces beside this run) failed MPICH's init with
# "init_worker No such device"
export OMPI_MCA_btl=self,vader
export UCX_TLS=self,sm
unset TREEMATCH_RECORD_OUTPUT TREEMATCH_RECORD_COLLECTIVES

same() { # name got-file expected-file
	if diff "$2" "$3" >"$W/diff.out" 2>&1; then pass "$1"; else fail_files "$1" "$W/diff.out"; fi
}

run() { # log abi prog [args]: record with the logical model of collectives
	log=$1 abi=$2
	shift 2
	case $abi in
	openmpi) launcher="mpirun.openmpi -np 4" ;;
	mpich) launcher="mpirun.mpich -np 4" ;;
	esac
	# shellcheck disable=SC2086
	timeout 120 "$TM" record --collectives=logical -o "$W/$log.yml" -- $launcher "$@" \
		>"$W/$log.log" 2>&1
}

# --- exact patterns, both ABIs, C and Fortran ------------------------------
expected "$SRC/tests/mpi/pattern.expected" >"$W/p2p.exp"
expected "$SRC/tests/mpi/pattern-coll.expected" >"$W/coll.exp"
expected "$SRC/tests/mpi/pattern-rma.expected" >"$W/rma.exp"
expected "$SRC/tests/mpi/pattern-neighbor.expected" >"$W/neighbor.exp"
for abi in openmpi mpich; do
	for prog in pattern pattern_f pattern_f08; do
		name=$prog.$abi
		if ! run "$name" "$abi" "$MPI/$name"; then
			fail_files "$name: treematch record runs" "$W/$name.log"
			continue
		fi
		pass "$name: treematch record runs"
		edges "$W/$name.yml" edges >"$W/$name.p2p"
		same "$name: point-to-point edges exact" "$W/$name.p2p" "$W/p2p.exp"
		edges "$W/$name.yml" coll_edges >"$W/$name.coll"
		same "$name: collective edges (logical model) exact" "$W/$name.coll" "$W/coll.exp"
		if "$TM" profile check "$W/$name.yml" >"$W/$name.check" 2>&1; then
			pass "$name: profile loads (treematch profile check)"
		else
			fail_files "$name: profile loads (treematch profile check)" "$W/$name.check"
		fi
	done
	for prog in pattern pattern_f pattern_f08; do
		name=rma.$prog.$abi
		if run "$name" "$abi" "$MPI/$prog.$abi" rma; then
			edges "$W/$name.yml" edges >"$W/$name.p2p"
			same "$name: one-sided calls counted exactly" "$W/$name.p2p" "$W/rma.exp"
		else
			fail_files "$name: treematch record runs" "$W/$name.log"
		fi
	done
done

# `use mpi_f08` counts of both kinds: tests/mpi/counts_f08.F90 with default
# INTEGER counts (Open MPI 6's mpi_send_f08ts_ ...) and with
# INTEGER(MPI_COUNT_KIND) ones (-DBIG: mpi_send_c_f08ts_ ...), the same
# profile, its point-to-point edges as computed; an mpi_f08 module without
# the large-count procedures (before MPI 4) skips the second, said
awk 'BEGIN { for (r = 0; r < 4; r++) {
	print r, (r + 1) % 4, 1, 800; print r, (r + 3) % 4, 1, 400; print r, (r + 2) % 4, 1, 80 } }' |
	sort -n -k1,1 -k2,2 >"$W/counts.exp"
for abi in openmpi mpich; do
	for kind in int big; do
		name=counts_$kind.$abi
		flag=
		[ $kind = big ] && flag=-DBIG
		if ! "mpif90.$abi" -cpp -O1 $flag -J "$W" -o "$W/$name" "$SRC/tests/mpi/counts_f08.F90" \
			>"$W/$name.cc" 2>&1; then
			if [ $kind = big ] && grep -qi 'no specific subroutine\|no specific procedure' "$W/$name.cc"; then
				skip "$name: large-count mpi_f08 calls recorded" \
					"$(mpirun.$abi --version 2>&1 | head -n 1)'s mpi_f08 has no MPI_COUNT_KIND procedures (MPI 4)"
			else
				fail_files "$name: builds" "$W/$name.cc"
			fi
			continue
		fi
		if run "$name" "$abi" "$W/$name"; then
			edges "$W/$name.yml" edges >"$W/$name.p2p"
			edges "$W/$name.yml" coll_edges >"$W/$name.coll"
			same "$name: mpi_f08 point-to-point edges exact" "$W/$name.p2p" "$W/counts.exp"
			if [ $kind = big ] && [ -s "$W/counts_int.$abi.coll" ]; then
				same "$name: collective edges as with default-kind counts" "$W/$name.coll" \
					"$W/counts_int.$abi.coll"
			elif [ $kind = int ] && [ ! -s "$W/$name.coll" ]; then
				fail_files "$name: collective edges recorded" "$W/$name.yml"
			fi
		else
			fail_files "$name: treematch record runs" "$W/$name.log"
		fi
	done
done

# MPI_THREAD_MULTIPLE: 4 threads per rank send concurrently, on
# MPI_COMM_WORLD and on per-thread dups (see tests/mpi/pattern_mt.c)
mt_expected() { # ranks iters
	awk -v n="$1" -v it="$2" 'BEGIN {
		for (r = 0; r < n; r++) {
			nx = (r + 1) % n; pv = (r + n - 1) % n
			m[r " " nx] += 4 * it; b[r " " nx] += 80 * it
			m[r " " pv] += 4 * it; b[r " " pv] += 16 * it
		}
		for (k in m) print k, m[k], b[k]
	}' | sort -n -k1,1 -k2,2
}
for mt in "openmpi 3 500" "mpich 2 40"; do
	set -- $mt
	mt_expected "$2" "$3" >"$W/mt.exp"
	via=
	case $1 in
	openmpi)
		launcher="mpirun.openmpi -np $2 --mca btl $(ompi_sm_threads_btl)"
		if ompi_6rc2; then via=", over TCP: 6.0.0rc2's sm BTL hangs with threads"; fi
		;;
	mpich) launcher="mpirun.mpich -np $2" ;;
	esac
	: >"$W/diff.out"
	# shellcheck disable=SC2086
	# 3 ranks of 4 threads polling on 2 cores: minutes when CI's three
	# releases run side by side
	if timeout 300 "$TM" record -o "$W/mt.$1.yml" -- $launcher "$MPI/pattern_mt.$1" "$3" \
		>"$W/mt.$1.log" 2>&1 && edges "$W/mt.$1.yml" edges | diff - "$W/mt.exp" >"$W/diff.out"; then
		pass "pattern_mt.$1: concurrent threads counted exactly ($2 ranks x 4 threads$via)"
	else
		fail_files "pattern_mt.$1: concurrent threads counted exactly" "$W/diff.out" "$W/mt.$1.log"
	fi
done

# hashed counters (used beyond 65536 ranks), forced on a small job
if TREEMATCH_RECORD_DENSE_MAX=0 timeout 120 "$TM" record --collectives=logical -o "$W/hash.yml" -- \
	mpirun.openmpi -np 4 "$MPI/pattern.openmpi" rma >"$W/hash.log" 2>&1 &&
	edges "$W/hash.yml" edges | diff - "$W/rma.exp" >"$W/diff.out" 2>&1 &&
	edges "$W/hash.yml" coll_edges | diff - "$W/coll.exp" >>"$W/diff.out" 2>&1; then
	pass "hashed counters give the same exact edges"
else
	fail_files "hashed counters give the same exact edges" "$W/diff.out"
fi

# output known to some ranks only: nobody records, nobody hangs at finalize
rm -f "$W/part.yml"
if timeout 60 mpirun.mpich -genv LD_PRELOAD "$B/profiler/libtreematch-record-mpich.so" \
	-n 2 -env TREEMATCH_RECORD_OUTPUT "$W/part.yml" "$MPI/pattern.mpich" : \
	-n 2 "$MPI/pattern.mpich" >"$W/part.log" 2>&1 && [ ! -e "$W/part.yml" ] &&
	grep -q 'another rank could not set up' "$W/part.log"; then
	pass "ranks that disagree at MPI_Init: nothing recorded, no hang, a message"
else
	fail_files "ranks that disagree at MPI_Init: nothing recorded, no hang, a message" "$W/part.log"
fi

# atomic write: nothing but the profiles (and our own files) in the directory
if ls "$W"/*.yml.* >/dev/null 2>&1; then
	fail_files "no temporary file left next to the profiles"
else
	pass "no temporary file left next to the profiles"
fi
if grep -q '^ranks: 4$' "$W/pattern.openmpi.yml" &&
	grep -q 'tool: {name: treematch-record' "$W/pattern.openmpi.yml" &&
	grep -q 'mpi_library: "Open MPI' "$W/pattern.openmpi.yml" &&
	grep -q 'mpi_library: "MPICH' "$W/pattern.mpich.yml" &&
	grep -q 'scope: \[p2p, coll_logical\]' "$W/pattern.mpich.yml"; then
	pass "provenance names the tool, the MPI library and the scope"
else
	fail_files "provenance names the tool, the MPI library and the scope" "$W/pattern.mpich.yml"
fi

# --collectives=off: no coll_edges, a version 1 profile as before
if timeout 120 "$TM" record --collectives=off -o "$W/nocoll.yml" -- mpirun.mpich -np 4 \
	"$MPI/pattern.mpich" >"$W/nocoll.log" 2>&1 && ! grep -q '^coll_edges:' "$W/nocoll.yml" &&
	grep -q '^version: 1$' "$W/nocoll.yml" && ! grep -q '^collectives:' "$W/nocoll.yml" &&
	edges "$W/nocoll.yml" edges | diff - "$W/p2p.exp" >/dev/null; then
	pass "--collectives=off: same edges, no coll_edges, version 1"
else
	fail_files "--collectives=off: same edges, no coll_edges, version 1" "$W/nocoll.log"
fi
# the default: the collectives as the messages they send, placed by (version 2)
if timeout 120 "$TM" record -o "$W/wire.yml" -- mpirun.openmpi -np 4 "$MPI/pattern.openmpi" \
	>"$W/wire.log" 2>&1 && grep -q '^version: 2$' "$W/wire.yml" &&
	grep -q '^collectives: wire$' "$W/wire.yml" &&
	grep -q 'scope: \[p2p, coll_wire\]' "$W/wire.yml" &&
	edges "$W/wire.yml" edges | diff - "$W/p2p.exp" >/dev/null &&
	[ "$(edges "$W/wire.yml" coll_edges | wc -l)" -gt 0 ] &&
	! edges "$W/wire.yml" coll_edges | diff - "$W/coll.exp" >/dev/null &&
	"$TM" profile check "$W/wire.yml" >"$W/wire.check" 2>&1 &&
	grep -q 'used here: bytes, point-to-point and collectives' "$W/wire.check"; then
	pass "by default: collectives recorded as their messages (wire), counted by placement"
else
	fail_files "by default: collectives recorded as their messages (wire), counted by placement" \
		"$W/wire.log" "$W/wire.check"
fi

# --- Open MPI monitoring, same launch --------------------------------------
# compare A B: every pair of A and B within 1 % in bytes and msgs
within1() {
	awk 'NR == FNR { a[$1 " " $2] = $3 " " $4; next }
	{ k = $1 " " $2; if (!(k in a)) { print "only in monitoring: " $0; bad = 1; next }
	  split(a[k], x, " "); delete a[k]
	  for (i = 3; i <= 4; i++) { d = x[i - 2] - $i; if (d < 0) d = -d
	    if (d > 0.01 * $i) { print "pair " k ": recorder " a[k] " vs monitoring " $3 " " $4; bad = 1 } } }
	END { for (k in a) { print "only in recorder: " k; bad = 1 } exit bad }' "$1" "$2"
}

monitor() { # name prog [args]: record + monitoring in one Open MPI launch
	name=$1
	shift
	rm -rf "$W/$name.mon"
	mkdir -p "$W/$name.mon"
	timeout 180 "$TM" record -o "$W/$name.yml" -- mpirun.openmpi -np 4 \
		--mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 \
		--mca pml_monitoring_filename "$W/$name.mon/m" "$@" >"$W/$name.log" 2>&1 &&
		"$TM" profile convert --from ompi -o "$W/$name.mon.yml" "$W/$name.mon"/m.*.prof \
			>>"$W/$name.log" 2>&1
}

# `pattern monitored` leaves out the neighbourhood collectives (step 10) and
# collectives_both (every collective, blocking and I-). Open MPI 4.1.4's
# coll/monitoring wrappers of the former read any topology as a Cartesian one
# and die (SIGFPE in mca_topo_base_cart_shift) on Graph and Dist_graph
# communicators; its pml monitoring lists the messages of blocking
# MPI_Alltoallv and MPI_Alltoallw among the user (E) lines (measured; their
# I- forms and the other v-collectives, tried one by one, do not show there).
# That run's edges must be pattern.expected minus pattern-neighbor.expected,
# exactly.
awk 'NR == FNR { n[$1 " " $2] = $3 " " $4; next }
($1 " " $2) in n { split(n[$1 " " $2], x, " "); $3 -= x[1]; $4 -= x[2] }
$3 > 0 { print }' "$W/neighbor.exp" "$W/p2p.exp" >"$W/monitored.exp"
if ! ompi_monitoring_ok; then
	skip "pattern: recorder = Open MPI monitoring (same launch)" "$NO_MONITORING"
elif monitor mon.pattern "$MPI/pattern.openmpi" monitored; then
	edges "$W/mon.pattern.yml" edges >"$W/mon.pattern.rec"
	edges "$W/mon.pattern.mon.yml" edges >"$W/mon.pattern.ompi"
	same "pattern monitored: edges exact (pattern.expected - pattern-neighbor.expected)" \
		"$W/mon.pattern.rec" "$W/monitored.exp"
	# monitoring does not see persistent sends: 1 -> 2 lacks 5 x 64 B
	awk '$1 == 1 && $2 == 2 { $3 -= 5; $4 -= 320 } { print }' "$W/mon.pattern.rec" \
		>"$W/mon.pattern.rec-persist"
	if within1 "$W/mon.pattern.rec-persist" "$W/mon.pattern.ompi" >"$W/diff.out"; then
		pass "pattern: recorder = Open MPI monitoring (but its known persistent-send gap)"
	else
		fail_files "pattern: recorder = Open MPI monitoring (but its known persistent-send gap)" \
			"$W/diff.out"
	fi
else
	fail_files "pattern: record with Open MPI monitoring in the same launch" "$W/mon.pattern.log"
fi

# --- real applications from Debian packages --------------------------------
if ! ompi_monitoring_ok; then
	skip "lammps: recorder = Open MPI monitoring within 1 %" "$NO_MONITORING"
elif command -v lmp >/dev/null 2>&1; then
	if monitor lammps lmp -in "$SRC/tests/mpi/in.melt" -log none -screen none; then
		edges "$W/lammps.yml" edges >"$W/lammps.rec"
		edges "$W/lammps.mon.yml" edges >"$W/lammps.ompi"
		if [ -s "$W/lammps.rec" ] && within1 "$W/lammps.rec" "$W/lammps.ompi" >"$W/diff.out"; then
			pass "lammps: recorder = Open MPI monitoring within 1 % ($(wc -l <"$W/lammps.rec") pairs)"
		else
			fail_files "lammps: recorder = Open MPI monitoring within 1 %" "$W/diff.out"
		fi
	else
		fail_files "lammps: record with Open MPI monitoring" "$W/lammps.log"
	fi
else
	echo "note: lmp not installed (package lammps): LAMMPS test not run"
	fail_files "lammps installed (tests/install-deps.sh lists it)"
fi
XDLU_OMPI=/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests/xdlu
if [ -x "$XDLU_OMPI" ] && ! ompi_monitoring_ok; then
	skip "xdlu (Open MPI): recorder = Open MPI monitoring within 1 %" "$NO_MONITORING"
elif [ -x "$XDLU_OMPI" ]; then
	mkdir -p "$W/xdlu-ompi"
	cp "$SRC/tests/mpi/LU.dat" "$W/xdlu-ompi/"
	if (cd "$W/xdlu-ompi" && monitor xdlu-ompi "$XDLU_OMPI"); then
		edges "$W/xdlu-ompi.yml" edges >"$W/xdlu-ompi.rec"
		edges "$W/xdlu-ompi.mon.yml" edges >"$W/xdlu-ompi.ompi"
		if [ -s "$W/xdlu-ompi.rec" ] &&
			within1 "$W/xdlu-ompi.rec" "$W/xdlu-ompi.ompi" >"$W/diff.out"; then
			pass "xdlu (Open MPI): recorder = Open MPI monitoring within 1 % ($(wc -l <"$W/xdlu-ompi.rec") pairs)"
		else
			fail_files "xdlu (Open MPI): recorder = Open MPI monitoring within 1 %" "$W/diff.out"
		fi
	else
		fail_files "xdlu (Open MPI): record with Open MPI monitoring" "$W/xdlu-ompi.log"
	fi
fi
XDLU=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu
if [ -x "$XDLU" ]; then
	mkdir -p "$W/xdlu"
	cp "$SRC/tests/mpi/LU.dat" "$W/xdlu/"
	if (cd "$W/xdlu" && timeout 180 "$TM" record -o "$W/xdlu.yml" -- mpirun.mpich -np 4 \
		"$XDLU" >"$W/xdlu.log" 2>&1) && grep -q 'passed' "$W/xdlu.log" &&
		"$TM" profile check "$W/xdlu.yml" >/dev/null 2>&1 &&
		[ "$(edges "$W/xdlu.yml" edges | wc -l)" -ge 4 ]; then
		pass "xdlu (MPICH): recorded, loads, 2x2 grid traffic present"
	else
		fail_files "xdlu (MPICH): recorded, loads, 2x2 grid traffic present" "$W/xdlu.log"
	fi
elif ! shipped scalapack-mpi-test; then
	skip "xdlu (MPICH and Open MPI): recorded" \
		"this release ships no scalapack-mpi-test (forky's ScaLAPACK builds no test programs)"
else
	fail_files "scalapack-mpi-test installed (tests/install-deps.sh lists it)"
fi

# --- refusals ---------------------------------------------------------------
expect_refusal() { # name pattern command...
	name=$1 pat=$2
	shift 2
	if "$@" >"$W/refuse.log" 2>&1; then
		fail_files "$name: refused" "$W/refuse.log"
	elif grep -q "$pat" "$W/refuse.log"; then
		pass "$name: refused with a clear message"
	else
		fail_files "$name: refused with a clear message" "$W/refuse.log"
	fi
}
expect_refusal "static program" "statically linked" \
	"$TM" record -o "$W/x.yml" -- "$MPI/static_prog"
expect_refusal "record and place in one run" "recording and placing" \
	"$TM" record -o "$W/x.yml" -- srun --treematch=p.yml "$MPI/pattern.openmpi"
printf '#!/bin/sh\nexec "$@"\n' >"$W/wrap.sh"
chmod +x "$W/wrap.sh"
expect_refusal "script without --mpi" "mpi=openmpi" \
	"$TM" record -o "$W/x.yml" -- "$W/wrap.sh" true
expect_refusal "unwritable output directory" "/nonexistent" \
	"$TM" record -o /nonexistent/x.yml -- "$MPI/pattern.openmpi"
expect_refusal "program that never calls MPI_Finalize" "was not written" \
	"$TM" record --mpi=openmpi -o "$W/x.yml" -- true
# a script naming its MPI with --mpi works
if timeout 120 "$TM" record --mpi=mpich -o "$W/wrapped.yml" -- "$W/wrap.sh" mpirun.mpich -np 4 \
	"$MPI/pattern.mpich" >"$W/wrapped.log" 2>&1 &&
	edges "$W/wrapped.yml" edges | diff - "$W/p2p.exp" >/dev/null; then
	pass "script with --mpi=mpich: recorded exactly"
else
	fail_files "script with --mpi=mpich: recorded exactly" "$W/wrapped.log"
fi

# the time-independent trace (--trace) and treematch predict: the halo
# fixture's program under real Open MPI and MPICH, traced, then replayed by
# SimGrid: mapped, the scrambled ring is predicted faster than packed;
# completions and wildcard receives are written as the run matched them; a
# non-blocking barrier is said not replayable, and predict refuses it with
# the reason's file
FFLAGS="-cpp -ffree-line-length-none -O1 -fallow-argument-mismatch -w"

# same_trace A B: the traces in A and B hold the same actions, rank by rank:
# every line but compute and waits in the same order, the same waits (the
# order in which requests complete is the run's)
same_trace() {
	for f in "$1"/rank-*.txt; do
		g=$2/$(basename "$f")
		[ -f "$g" ] &&
			[ "$(grep -v ' compute \| wait ' "$f")" = "$(grep -v ' compute \| wait ' "$g")" ] &&
			[ "$(grep ' wait ' "$f" | sort)" = "$(grep ' wait ' "$g" | sort)" ] || return 1
	done
}

# traced ABI KEY NP PROGRAM: record and trace NP ranks of $W/PROGRAM.ABI
# into $W/trace-KEY-ABI, which must be replayable (an index, no reason)
traced() {
	rm -rf "$W/trace-$2-$1"
	timeout 120 "$TM" record -o "$W/$2-$1.yml" --trace "$W/trace-$2-$1" -- \
		"mpirun.$1" -np "$3" "$W/$4.$1" >"$W/trace-$2-$1.log" 2>&1 &&
		[ -s "$W/trace-$2-$1/trace.txt" ] && [ ! -e "$W/trace-$2-$1/NOT-REPLAYABLE" ]
}
# replays ABI KEY TOPOLOGY: treematch predict replays that trace
replays() {
	"$TM" predict --trace "$W/trace-$2-$1/trace.txt" --topology "$3" \
		>"$W/predict-$2-$1.out" 2>&1
}

for abi in openmpi mpich; do
	if ! "mpicc.$abi" -O1 -o "$W/halo.$abi" "$SRC/tests/fixtures/predict/halo.c" >"$W/halo.cc" 2>&1 ||
		! "mpicc.$abi" -O1 -o "$W/completions.$abi" \
			"$SRC/tests/fixtures/predict/completions.c" >>"$W/halo.cc" 2>&1 ||
		! "mpicc.$abi" -O1 -o "$W/ibarrier.$abi" "$SRC/tests/fixtures/predict/ibarrier.c" \
			>>"$W/halo.cc" 2>&1 ||
		! "mpicc.$abi" -O1 -o "$W/vcoll.$abi" "$SRC/tests/fixtures/predict/vcoll.c" \
			>>"$W/halo.cc" 2>&1 ||
		! "mpicc.$abi" -O1 -o "$W/grid.$abi" "$SRC/tests/fixtures/predict/grid.c" \
			>>"$W/halo.cc" 2>&1 ||
		! "mpicc.$abi" -O1 -o "$W/collgrid.$abi" "$SRC/tests/fixtures/predict/collgrid.c" \
			>>"$W/halo.cc" 2>&1 ||
		! "mpicc.$abi" -O1 -o "$W/persistent.$abi" \
			"$SRC/tests/fixtures/predict/persistent.c" >>"$W/halo.cc" 2>&1 ||
		! "mpicc.$abi" -O1 -o "$W/twin_c.$abi" "$SRC/tests/fixtures/predict/twin.c" \
			>>"$W/halo.cc" 2>&1 ||
		! "mpif90.$abi" $FFLAGS -J "$W" -o "$W/twin_f.$abi" \
			"$SRC/tests/fixtures/predict/twin.F90" >>"$W/halo.cc" 2>&1 ||
		! "mpif90.$abi" $FFLAGS -DF08 -J "$W" -o "$W/twin_f08.$abi" \
			"$SRC/tests/fixtures/predict/twin.F90" >>"$W/halo.cc" 2>&1; then
		fail_files "trace ($abi): build the programs" "$W/halo.cc"
		continue
	fi
	rm -rf "$W/trace-$abi" "$W/trace-any-$abi" "$W/trace-c-$abi"
	if timeout 120 "$TM" record -o "$W/halo-$abi.yml" --trace "$W/trace-$abi" -- \
		"mpirun.$abi" -np 8 "$W/halo.$abi" >"$W/trace-$abi.log" 2>&1 &&
		[ "$(ls "$W/trace-$abi"/rank-*.txt | wc -l)" = 8 ] &&
		"$TM" predict --trace "$W/trace-$abi/trace.txt" \
			--topology "cluster:none,n[1-2],synthetic:pack:2 core:2 pu:1" \
			>"$W/predict-$abi.out" 2>&1 &&
		awk '$1 == "packed" { p = $2 } $1 == "auto" { a = $2 } END { exit !(a > 0 && a < p) }' \
			"$W/predict-$abi.out"; then
		pass "trace ($abi): recorded with the profile, replayed, mapped predicted faster"
	else
		fail_files "trace ($abi): recorded with the profile, replayed, mapped predicted faster" \
			"$W/trace-$abi.log" "$W/predict-$abi.out"
	fi
	if traced "$abi" v 4 vcoll &&
		grep -q '^1 alltoallv 80 8 16 24 32 64 16 16 16 16 6 6$' "$W/trace-v-$abi/rank-1.txt" &&
		replays "$abi" v "tleaf 2 2 10 2 1"; then
		pass "trace ($abi): v-collectives and reduce-scatter traced and replayed"
	else
		fail_files "trace ($abi): v-collectives and reduce-scatter traced and replayed" \
			"$W/trace-v-$abi.log" "$W/predict-v-$abi.out"
	fi
	# row and column communicators: their collectives are written as the
	# messages between members (rank 1 receives row 0's bcast from rank 0,
	# then its reduce to row rank 1 from ranks 2 and 3, and sends its 2
	# doubles of the gatherv to rank 3); every message sent is received, and
	# the trace replays
	if traced "$abi" g 8 grid &&
		grep -A3 '^1 recv 0 1073741824 8192 6$' "$W/trace-g-$abi/rank-1.txt" |
		grep -q '^1 recv 3 1073741824 4096 6$' &&
		grep -q '^1 send 3 1073741824 16 6$' "$W/trace-g-$abi/rank-1.txt" &&
		cat "$W/trace-g-$abi"/rank-*.txt | awk '
			$2 == "send" && $4 == 1073741824 { s[$1 " " $3 " " $5]++ }
			$2 == "recv" && $4 == 1073741824 { r[$3 " " $1 " " $5]++ }
			END { for (k in s) if (s[k] != r[k]) exit 1
			      for (k in r) if (s[k] != r[k]) exit 1
			      exit !length(s) }' &&
		replays "$abi" g "tleaf 3 2 1 2 1 2 1"; then
		pass "trace ($abi): collectives on row and column communicators replayed as messages"
	else
		fail_files "trace ($abi): collectives on row and column communicators replayed as messages" \
			"$W/trace-g-$abi.log" "$W/predict-g-$abi.out"
	fi
	# traffic that is all collectives on the rows and columns of a scrambled
	# 2 x 4 process grid (collgrid.c, 10 iterations): the profile carries it
	# all (no point-to-point; per iteration 2 rows x 3 x 256 KiB of bcast, 4
	# columns x 2 x 64 KiB of allreduce, 2 rows x 4 x 3 x 16 KiB of
	# allgather), each pair as the messages the trace replays between them
	# (one lowering), and the placement from it beats packed on 2 nodes;
	# predict places by that profile as the plugin would (its auto is
	# treematch map's, on the same machine) and says so
	cg_topo="cluster:none,n[1-2],synthetic:pack:2 core:2 pu:1"
	if traced "$abi" cg 8 collgrid &&
		[ "$(edges "$W/cg-$abi.yml" edges | wc -l)" = 0 ] &&
		[ "$(edges "$W/cg-$abi.yml" coll_edges | awk '{ b += $4 } END { print b }')" = \
			$((10 * (2 * 3 * 262144 + 4 * 2 * 65536 + 2 * 4 * 3 * 16384))) ] &&
		cat "$W/trace-cg-$abi"/rank-*.txt | awk '
			($2 == "send" || $2 == "isend") && $4 == 1073741824 { m[$1 " " $3]++; b[$1 " " $3] += $5 }
			END { for (k in m) print k, m[k], b[k] }' | sort -n -k1,1 -k2,2 >"$W/cg-$abi.sent" &&
		edges "$W/cg-$abi.yml" coll_edges | diff - "$W/cg-$abi.sent" >"$W/cg-$abi.diff" &&
		"$TM" map -p "$W/cg-$abi.yml" -t "$cg_topo" >"$W/cg-$abi.map" &&
		"$TM" eval -p "$W/cg-$abi.yml" -t "$cg_topo" --mapping "$W/cg-$abi.map" >"$W/cg-$abi.eval" &&
		awk '$1 == "hop_bytes" { exit !($2 > 0 && $2 < $3) }' "$W/cg-$abi.eval" &&
		"$TM" predict --trace "$W/trace-cg-$abi/trace.txt" --topology "$cg_topo" \
			--mapping auto --mapping packed --keep "$W/keep-cg-$abi" >"$W/predict-cg-$abi.out" 2>&1 &&
		grep -q "placements from $W/trace-cg-$abi/profile.yml as the plugin places by it (bytes, point-to-point and collectives)" \
			"$W/predict-cg-$abi.out" &&
		[ "$(sed 's/^h//' "$W/keep-cg-$abi/mapping0.hosts" | tr '\n' ' ')" = \
			"$(awk '{ print $2 }' "$W/cg-$abi.map" | tr '\n' ' ')" ]; then
		pass "collectives on row and column communicators: in the profile, placed better than packed, predict places as the plugin"
	else
		fail_files "collectives on row and column communicators: in the profile, placed better than packed, predict places as the plugin" \
			"$W/trace-cg-$abi.log" "$W/cg-$abi.diff" "$W/cg-$abi.eval" "$W/predict-cg-$abi.out"
	fi
	# compute: each repeated phase at the least time it took (the halo's
	# iterations: one value per phase on every rank), a phase that occurs
	# once divided by the inflation the repeated ones showed
	rm -rf "$W/trace-h6-$abi"
	if timeout 120 "$TM" record -o "$W/h6-$abi.yml" --trace "$W/trace-h6-$abi" -- \
		"mpirun.$abi" -np 8 "$W/halo.$abi" 6 >"$W/trace-h6-$abi.log" 2>&1 &&
		(for f in "$W/trace-h6-$abi"/rank-*.txt; do
			awk '/ compute / { c = $3; next }
				c != "" { k = p "|" $0; if (k in v && v[k] != c) exit 1; v[k] = c; n[k]++ }
				{ p = $0; c = "" }
				END { for (k in n) if (n[k] >= 5) r++; exit !(r >= 5) }' "$f" || exit 1
		done); then
		pass "trace ($abi): repeated phases of compute written at one time each"
	else
		fail_files "trace ($abi): repeated phases of compute written at one time each" \
			"$W/trace-h6-$abi.log"
	fi
	# completions (Waitany, Test loops, Testall, Waitsome, Testany, a Waitall
	# of one of two pending requests) are written as the waits the run
	# observed, 12 on each rank; a Waitall of every pending request as
	# SMPI's waitall, MPI_PROC_NULL's requests in it as nothing; receives from
	# MPI_ANY_SOURCE with MPI_ANY_TAG, blocking or not, as the messages
	# they matched, a cancelled one as a receive the rank sends itself
	if traced "$abi" c 4 completions &&
		[ "$(grep -c ' wait ' "$W/trace-c-$abi/rank-2.txt")" = 12 ] &&
		[ "$(grep ' waitall' "$W/trace-c-$abi/rank-2.txt")" = "2 waitall 2" ] &&
		grep -q '^0 waitall 3$' "$W/trace-c-$abi/rank-0.txt" &&
		[ "$(grep -E '^0 recv [123] 1[123] 8 6$' "$W/trace-c-$abi/rank-0.txt" |
			awk '{ print $3 + 10 - $4 }' | sort -u)" = 0 ] &&
		[ "$(grep -cE '^0 recv [123] ' "$W/trace-c-$abi/rank-0.txt")" = 3 ] &&
		[ "$(grep -E '^0 irecv +[123] +2[123] +8 6$' "$W/trace-c-$abi/rank-0.txt" |
			awk '{ print $3 + 20 - $4 }' | sort -u)" = 0 ] &&
		[ "$(grep -cE '^0 irecv +[123] +2[123] +8 6$' "$W/trace-c-$abi/rank-0.txt")" = 3 ] &&
		grep -A3 -E '^0 irecv +0 +1073741825 +8 6$' "$W/trace-c-$abi/rank-0.txt" |
		grep -q '^0 wait 0 0 1073741825$' &&
		replays "$abi" c "tleaf 2 2 1 2 1"; then
		pass "trace ($abi): completions and wildcard receives written as the run matched them"
	else
		fail_files "trace ($abi): completions and wildcard receives written as the run matched them" \
			"$W/trace-c-$abi.log" "$W/predict-c-$abi.out"
	fi
	# persistent requests (PETSc's scatters): each start written as the
	# isend or irecv it begins (rank 1: three rounds of the ring, each
	# completed by one waitall), a wildcard one as the message it matched,
	# MPI_PROC_NULL's and a wait on an inactive request as nothing
	if traced "$abi" p 4 persistent &&
		[ "$(grep -v compute "$W/trace-p-$abi/rank-1.txt" | sed -n 2,10p | sort | uniq -c |
			awk '{ print $1 }' | sort -u)" = 3 ] &&
		[ "$(grep -c '^1 isend 2 30 16 6$' "$W/trace-p-$abi/rank-1.txt")" = 3 ] &&
		[ "$(grep -c '^1 irecv 0 30 16 6$' "$W/trace-p-$abi/rank-1.txt")" = 3 ] &&
		[ "$(grep -c '^1 waitall 2$' "$W/trace-p-$abi/rank-1.txt")" = 3 ] &&
		[ "$(grep -cE '^1 irecv +2 +42 +8 6$' "$W/trace-p-$abi/rank-1.txt")" = 2 ] &&
		[ "$(grep -c '^1 wait ' "$W/trace-p-$abi/rank-1.txt")" = 2 ] &&
		replays "$abi" p "tleaf 2 2 1 2 1"; then
		pass "trace ($abi): persistent requests written as each start's message"
	else
		fail_files "trace ($abi): persistent requests written as each start's message" \
			"$W/trace-p-$abi.log" "$W/predict-p-$abi.out"
	fi
	# the Fortran bindings (`use mpi` and `use mpi_f08`) traced as the C
	# ones: twin.F90 makes twin.c's calls (point-to-point, wildcards with
	# no status, every completion, persistent requests, collectives on the
	# world and on halves); same actions, and the trace replays
	if traced "$abi" tc 4 twin_c && traced "$abi" tf 4 twin_f && traced "$abi" tf08 4 twin_f08 &&
		[ "$(grep -c ' ' "$W/trace-tc-$abi/rank-1.txt")" -gt 50 ] &&
		same_trace "$W/trace-tc-$abi" "$W/trace-tf-$abi" &&
		same_trace "$W/trace-tc-$abi" "$W/trace-tf08-$abi" &&
		replays "$abi" tf "tleaf 2 2 1 2 1"; then
		pass "trace ($abi): Fortran (use mpi, use mpi_f08) traced as C, and replayed"
	else
		fail_files "trace ($abi): Fortran (use mpi, use mpi_f08) traced as C, and replayed" \
			"$W/trace-tf-$abi.log" "$W/trace-tf08-$abi.log" "$W/predict-tf-$abi.out"
	fi
	# a non-blocking collective cannot be replayed: said, refused
	if timeout 120 "$TM" record -o "$W/any-$abi.yml" --trace "$W/trace-any-$abi" -- \
		"mpirun.$abi" -np 4 "$W/ibarrier.$abi" >"$W/trace-any-$abi.log" 2>&1 &&
		grep -q 'MPI_Ibarrier' "$W/trace-any-$abi/NOT-REPLAYABLE" &&
		grep -q 'cannot be replayed' "$W/trace-any-$abi.log" &&
		! "$TM" predict --trace "$W/trace-any-$abi/trace.txt" --topology "tleaf 1 4 1" \
			>"$W/predict-any-$abi.out" 2>&1 &&
		grep -q 'NOT-REPLAYABLE says what it used' "$W/predict-any-$abi.out"; then
		pass "trace ($abi): MPI_Ibarrier is said not replayable, predict refuses it"
	else
		fail_files "trace ($abi): MPI_Ibarrier is said not replayable, predict refuses it" \
			"$W/trace-any-$abi.log" "$W/predict-any-$abi.out"
	fi
done

e2e_finish record test_record
[ "$FAILED" -eq 0 ]
