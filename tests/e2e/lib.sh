# SPDX-License-Identifier: BSD-3-Clause
#
# lib.sh - sourced by the end-to-end scripts (run.sh, test_layout.sh,
# test_record.sh, test_record_srun.sh): the CLI of this build, the MPI
# environment, result counting and reporting, and the profile readers the
# recording tests share.
# The sourcing script sets B (build directory) and SRC (source tree) first,
# and CLUSTER (its cluster.sh command) and START (date +%s) after, if it has
# them.
CLUSTER=
START=

# plugstack.conf's words for the plugin of this build: it names the helper
# program the build made (a package's plugin starts the one installed with
# it).
PLUGIN_ARGS=$B/spank/treematch.so
[ -x "$B/spank/treematch-helper" ] && PLUGIN_ARGS="$PLUGIN_ARGS helper=$B/spank/treematch-helper"

# The treematch CLI `make` built.
TM=$B/bin/treematch
[ -x "$TM" ] || TM=$B/treematch
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# A `make ... SANITIZE=1` build: the plugin carries ASan and UBSan code, but
# Slurm's programs that load it (srun, sbatch, salloc, slurmd, slurmstepd)
# are not linked with the sanitizer runtimes, which must then be preloaded.
# Exported here, they reach the daemons cluster.sh starts, the clients the
# tests run and the tasks. A task recorded with --treematch-record gets the
# (uninstrumented) recorder preloaded ahead of them, which defines none of
# the runtime's symbols: the link-order check is off for that. Leak checking
# is off: Slurm keeps its allocations until exit, on purpose. Scripts that
# start no Slurm (test_record.sh) set NO_SLURM=1 and need none of this.
if [ -z "${NO_SLURM:-}" ] && nm -D "$B/spank/treematch.so" 2>/dev/null | grep -q ' U __asan_init'; then
	LD_PRELOAD="$(${CC:-cc} -print-file-name=libasan.so) $(${CC:-cc} -print-file-name=libubsan.so)"
	ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
	export LD_PRELOAD ASAN_OPTIONS
fi

# pass NAME; fail NAME [LINE...]: count and print one result, with the
# lines that say why it failed.
PASSED=0
FAILED=0
pass() {
	echo "PASS: $1"
	PASSED=$((PASSED + 1))
}
fail() {
	echo "FAIL: $1"
	shift
	for l in "$@"; do printf '    %s\n' "$l"; done
	FAILED=$((FAILED + 1))
}
# skip NAME WHY: a test this release cannot run, said in one line (never a
# silent pass); counted apart.
SKIPPED=0
skip() {
	echo "SKIP: $1: $2"
	SKIPPED=$((SKIPPED + 1))
}

# What the release ships, for the tests that depend on it:
# have_pmix: srun has mpi/pmix (Debian's Slurm 26.05 has none: "Remove
# pmix", its changelog), without which Open MPI cannot start under srun.
# The cluster must be up (SLURM_CONF).
have_pmix() {
	srun --mpi=list 2>&1 | grep -q pmix
}
NO_PMIX="this Slurm has no mpi/pmix plugin (Debian's Slurm 26.05 dropped it): Open MPI cannot start under srun"
# ompi_6rc2: the Open MPI is forky's 6.0.0rc2, whose known faults follow.
ompi_6rc2() {
	mpirun.openmpi --version 2>/dev/null | grep -q '6\.0\.0rc2'
}
# ompi_monitoring_ok: Open MPI's pml monitoring runs (6.0.0rc2's segfaults in
# mca_common_monitoring_add_procs at MPI_Init, without the recorder too).
ompi_monitoring_ok() {
	! ompi_6rc2
}
NO_MONITORING="Open MPI 6.0.0rc2's own monitoring component segfaults (mca_common_monitoring_add_procs), with or without the recorder"
# ompi_sm_threads_btl: the BTL list for threads sending concurrently on one
# node. 6.0.0rc2's sm BTL hangs under MPI_THREAD_MULTIPLE (tests/mpi/
# pattern_mt with 3 ranks, without the recorder: 8 runs of 10), so that
# release goes over TCP on loopback; the recorder counts above the BTL.
# Printed as mpirun's arguments after --mca btl.
ompi_sm_threads_btl() {
	if ompi_6rc2; then echo "self,tcp --mca btl_tcp_if_include lo"; else echo self,vader; fi
}
# shipped PKG: the release's archive has PKG (apt knows a candidate): a test
# whose package is missing on a release that ships it fails; skips else.
shipped() {
	apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'
}
# slurm_said FILE PATTERN: a message of slurmstepd's forwarded to srun's
# stderr: "slurmstepd[-NODE]: error: PATTERN" (22.05, 24.11), or, since
# 26.05, "[DATE] error: PATTERN" without the program's name.
slurm_said() {
	grep -Eq "(slurmstepd[^ ]*: (error: )?|^\[[^]]*\] (error: )?)$2" "$1"
}

# fail_files NAME [FILE...]: fail, showing the end of each FILE that exists.
fail_files() {
	echo "FAIL: $1"
	shift
	for f in "$@"; do
		[ -n "$f" ] && [ -f "$f" ] && sed 's/^/     | /' "$f" | tail -n 25
	done
	FAILED=$((FAILED + 1))
	return 0
}

# e2e_finish LABEL STEP: stop the test cluster if the script started one
# ($CLUSTER), print the counts (and the time since $START if set) and
# register them with tests/summary.sh as STEP.
e2e_finish() {
	[ -n "${CLUSTER:-}" ] && $CLUSTER stop >/dev/null 2>&1
	_skipped=
	[ "$SKIPPED" -eq 0 ] || _skipped=", $SKIPPED skipped"
	echo "$1: $PASSED passed, $FAILED failed$_skipped${START:+ in $(($(date +%s) - START)) s}"
	BUILDDIR=$B sh "$SRC/tests/summary.sh" add "$2" "$PASSED" "$FAILED" 2>/dev/null || true
}

# edges FILE SECTION: "src dst msgs bytes" rows of SECTION (edges or
# coll_edges) of a profile, whatever the column order the writer chose, sorted.
edges() {
	awk -v want="$2" '
	/^[A-Za-z_]+:/ { sec = $1; sub(":", "", sec); next }
	sec == want && /columns:/ {
		s = $0; gsub(/[][,]/, " ", s); n = split(s, c, " ")
		for (i = 2; i <= n; i++) col[c[i]] = i - 2
		next
	}
	sec == want && /^ *- *\[/ {
		s = $0; gsub(/[][,-]/, " ", s); n = split(s, v, " ")
		print v[col["src"] + 1], v[col["dst"] + 1], v[col["msgs"] + 1], v[col["bytes"] + 1]
	}' "$1" | sort -n -k1,1 -k2,2
}

# expected FILE: a hand-computed tests/mpi/*.expected, comments dropped, sorted
# as edges sorts.
expected() {
	grep -v '^#' "$1" | sort -n -k1,1 -k2,2
}

# ompi_retry ERRFILE COMMAND...: run COMMAND (an srun writing its stderr to
# ERRFILE); start it again, twice at most, when it failed because Open MPI
# itself crashed in MPI_Init. Debian 12's Open MPI 4.1.4 TCP BTL jumps to a
# NULL handler when a peer connects while the rank is still in MPI_Init
# (core dump: mca_btl_tcp.so from opal_progress in ompi_mpi_init); on the
# four-namespace cluster about 1 step in 15, with or without this plugin
# (measured: 1 of 20 with an empty plugstack.conf). Debian 13's Open MPI
# 5.0.7 has its own: a segfault in mca_pml_ob1_recv_frag_callback_match
# under ompi_mpi_init, 1 step in 5 there with an empty plugstack.conf.
# Only those signatures are retried, after slurmctld has had the time to
# clean up the killed step, and each retry is printed: a wrong binding or
# any other failure is reported at once. Returns COMMAND's last status.
ompi_retry() {
	_oerr=$1
	shift
	_otries=0
	while :; do
		"$@"
		_orc=$?
		[ $_orc -ne 0 ] && [ $_otries -lt 2 ] &&
			grep -q 'Process received signal\|failed to TCP connect to a peer MPI process\|(ompi_mpi_init+' "$_oerr" ||
			return $_orc
		_otries=$((_otries + 1))
		sleep 5
		echo "note: Open MPI crashed in MPI_Init (its own race, not the plugin); step started again ($_otries)"
	done
}

# node_up NODE: wait (up to 10 s, past "completing") until NODE is idle,
# mixed or allocated; fails at once if it is drained, down or failing.
# Sets STATE.
node_up() {
	_n=0
	while [ $_n -lt 50 ]; do
		STATE=$(timeout 10 sinfo -h -n "$1" -o %t 2>&1)
		case $STATE in
		idle* | mix* | alloc*) return 0 ;;
		drain* | drng* | down* | fail*) return 1 ;;
		esac
		_n=$((_n + 1))
		sleep 0.2
	done
	return 1
}
