#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# run.sh - end-to-end tests of treematch.so on a real, throwaway Slurm
# (tests/e2e/cluster.sh): one node on loopback with task/affinity and
# task/none, then four nodes in network namespaces under two switches.
# Prints PASS/FAIL per test and registers the counts with tests/summary.sh.
# Needs root; always tears the cluster down (trap), even on failure.
#
#   BUILDDIR=/abs/build SRCDIR=/abs/repo sh tests/e2e/run.sh [NAME_FILTER]
set -u

SRC=${SRCDIR:-$(pwd)}
B=${BUILDDIR:-$SRC/build}
. "$SRC/tests/e2e/lib.sh"
FILTER=${1:-}
SO=$B/spank/treematch.so
W=$B/tests/e2e/whereami
WORK=$B/e2e/work
export TMATCH_CLUSTER_DIR=$B/e2e/cluster
CLUSTER="sh $SRC/tests/e2e/cluster.sh"
PLUGSTACK=$TMATCH_CLUSTER_DIR/etc/plugstack.conf
T=${TMATCH_E2E_TIMEOUT:-90} # seconds for any one srun/sbatch
START=$(date +%s)

# check NAME CONDITION-COMMAND... : pass when the command succeeds.
check() {
	name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "$(cat "$WORK/why" 2>/dev/null)"; fi
	: >"$WORK/why"
}
why() { printf '%s\n' "$*" >>"$WORK/why"; }
want() { [ -z "$FILTER" ] || case $1 in *$FILTER*) return 0 ;; *) return 1 ;; esac; }

trap 'e2e_finish e2e e2e' EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK"
: >"$WORK/why"
if [ "$(id -u)" -ne 0 ]; then
	fail "e2e needs root to start munge and Slurm daemons (run as root, as CI does)"
	exit 1
fi
for f in "$SO" "$W"; do
	if [ ! -f "$f" ]; then
		fail "missing $f: run make first"
		exit 1
	fi
done

# ---------------------------------------------------------------------------
# Fixtures

profile() { # file ranks edges...
	f=$1 n=$2
	shift 2
	{
		echo "format: comm-profile"
		echo "version: 1"
		echo "ranks: $n"
		echo "metrics: [bytes]"
		echo "directed: false"
		if [ $# -eq 0 ]; then echo "edges: []"; else echo "edges:"; fi
		for e in "$@"; do echo "  - [$e]"; done
	} >"$f"
}
P1=$WORK/p1.yml
P2=$WORK/p2.yml
P8=$WORK/p8.yml
profile "$P1" 1
profile "$P2" 2 "0, 1, 1000"
profile "$P8" 8 "0, 1, 500" "2, 3, 500" "4, 5, 500" "6, 7, 500" "0, 7, 10" "1, 2, 10" "3, 4, 10" "5, 6, 10"
printf 'format: comm-profile\nversion: 1\nranks: [2\nedges:\n' >"$WORK/bad.yml"

plugstack() { # admin arguments...
	echo "required $PLUGIN_ARGS $*" >"$PLUGSTACK"
}

# run OUT ERR srun-args... : srun with a timeout; returns srun's status.
run() {
	out=$1 err=$2
	shift 2
	(cd "$WORK" && timeout "$T" srun "$@" >"$out" 2>"$err" </dev/null)
}

# run_mpi OUT ERR srun-args... : run, started again if Open MPI crashed in
# MPI_Init (lib.sh, ompi_retry).
run_mpi() { ompi_retry "$2" run "$@"; }

# field LINE KEY: value of KEY= in a whereami line.
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

# Every line of whereami output bound where the plugin says: one CPU list
# per rank, equal to TREEMATCH_CPUS, and distinct within each node.
bound_as_exported() { # file expected_lines
	_n=$(grep -c '^rank=' "$1")
	if [ "$_n" -ne "$2" ]; then
		why "expected $2 task lines, got $_n"
		cat "$1" >>"$WORK/why"
		return 1
	fi
	while read -r _l; do
		_c=$(field "$_l" cpus)
		_t=$(field "$_l" tm_cpus)
		if [ "$_t" = "-" ] || [ "$_c" != "$_t" ]; then
			why "task bound to '$_c' but TREEMATCH_CPUS='$_t': $_l"
			return 1
		fi
	done <"$1"
	_dups=$(grep '^rank=' "$1" | awk '{print $2, $3}' | sort | uniq -d)
	if [ -n "$_dups" ]; then
		why "two tasks share CPUs: $_dups"
		return 1
	fi
	return 0
}

start() { # cluster.sh start arguments
	if ! $CLUSTER start "$@" >"$WORK/cluster.out" 2>&1; then
		fail "cluster start $*" "$(tail -n 20 "$WORK/cluster.out")"
		return 1
	fi
	export SLURM_CONF=$TMATCH_CLUSTER_DIR/etc/slurm.conf
	plugstack
	return 0
}

# Wait until job $1 has left the queue (poll, bounded by $T).
wait_job() {
	n=0
	while [ -n "$(timeout 10 squeue -h -j "$1" -o %i 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -gt $((T * 5)) ] && return 1
		sleep 0.2
	done
}

wait_running() {
	n=0
	while [ "$(timeout 10 squeue -h -j "$1" -o %T 2>/dev/null)" != RUNNING ]; do
		n=$((n + 1))
		[ $n -gt $((T * 5)) ] && return 1
		sleep 0.2
	done
}

build_mpi() {
	for flavour in openmpi mpich; do
		if command -v "mpicc.$flavour" >/dev/null 2>&1; then
			"mpicc.$flavour" -O1 -o "$B/tests/e2e/mpi_hello.$flavour" "$SRC/tests/e2e/mpi_hello.c" \
				>"$WORK/mpicc.$flavour.log" 2>&1
		fi
	done
}

# ---------------------------------------------------------------------------
# One node, task/affinity

t_help() {
	for cmd in srun sbatch salloc; do
		if $cmd --help 2>&1 | grep -q -- '--treematch='; then
			pass "$cmd --help lists --treematch"
		else
			fail "$cmd --help lists --treematch" "$($cmd --help 2>&1 | tail -n 3)"
		fi
	done
	if run "$WORK/h.out" "$WORK/h.err" -n1 --treematch=help true && grep -q 'treematch: .*--treematch=off' "$WORK/h.err" "$WORK/h.out"; then
		pass "srun --treematch=help prints the settings and exits 0"
	else
		fail "srun --treematch=help prints the settings and exits 0" "$(cat "$WORK/h.err")"
	fi
}

# The binding in the task equals what `treematch map` computes for the same
# profile and topology, and wins over --cpu-bind given to Slurm. The step
# takes every core of the node, so the CLI's "local" tree is the step's.
t_binds_like_cli() {
	run "$WORK/b.out" "$WORK/b.err" -n2 --cpu-bind=map_cpu:1,0 --treematch="$P2" "$W"
	rc=$?
	check "srun -n2 --cpu-bind=map_cpu:1,0 --treematch: every task bound where TREEMATCH_CPUS says (rc=$rc)" \
		bound_as_exported "$WORK/b.out" 2
	cores=$(slurmd -C | head -n 1 | tr ' ' '\n' | awk -F= '$1 == "SocketsPerBoard" { s = $2 } $1 == "CoresPerSocket" { c = $2 } END { print s * c }')
	[ "$cores" -gt 64 ] && cores=64
	pn=$WORK/ring$cores.yml
	edges=""
	r=0
	while [ $r -lt "$cores" ]; do
		[ $r -gt 0 ] && edges="$edges|$((r - 1)), $r, $((1000 * (r % 3 + 1)))"
		r=$((r + 1))
	done
	# shellcheck disable=SC2086
	(IFS='|' && profile "$pn" "$cores" ${edges#|})
	run "$WORK/b.out" "$WORK/b.err" -n "$cores" --treematch="$pn" "$W"
	expected=$(expected_from_cli "$pn" "$cores" local)
	# The CPUs of each rank: a whole core, as the CLI shows it too.
	got=$(sort -t= -k2 -n "$WORK/b.out" | while read -r l; do printf '%s ' "$(field "$l" cpus)"; done)
	[ "$(grep -c '^rank=' "$WORK/b.out")" -eq "$cores" ] || got="(no output: $(cat "$WORK/b.err"))"
	if [ -n "$expected" ] && [ "$expected" = "$got" ]; then
		pass "srun -n $cores (whole node) binds as 'treematch map' says ($got)"
	else
		fail "srun -n $cores (whole node) binds as 'treematch map' says" "map: '$expected' tasks: '$got'" \
			"$(cat "$WORK/cli.err" 2>/dev/null)"
	fi
}

# A CPU list ("0-1,4") written out, one CPU after the other ("0,1,4").
cpu_list() {
	printf '%s\n' "$1" | tr ',' '\n' | awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) printf "%s%d", n++ ? "," : "", c }'
}

# `treematch map --format srun` gives srun itself the placement, with no
# plugin: the --cpu-bind list it prints puts every task on the CPUs of its
# leaf, a whole core as the plugin binds (found with hwloc-calc: leaf i of
# "local" is core L#i). Seeds of the random mapper give different orders.
t_srun_format() {
	orders=""
	for seed in 1 2 3 4; do
		name="srun \$(treematch map -f srun), seed $seed: each task on its mapped CPUs"
		want=$("$TM" map -p "$P2" -t local -m random -s $seed -f plain |
			while read -r rank leaf; do
				printf '%s ' "$(hwloc-calc --physical-output --intersect pu "core:$leaf")"
			done)
		opt=$("$TM" map -p "$P2" -t local -m random -s $seed -f srun)
		run "$WORK/sf.out" "$WORK/sf.err" -n2 "$opt" "$W"
		rc=$?
		got=$(sort -t= -k2 -n "$WORK/sf.out" | while read -r l; do printf '%s ' "$(cpu_list "$(field "$l" cpus)")"; done)
		orders="$orders$want
"
		if [ $rc -eq 0 ] && [ -n "$want" ] && [ "$want" = "$got" ]; then
			pass "$name ($opt: $got)"
		else
			fail "$name" "$opt: want '$want' got '$got' (rc=$rc)" "$(tail -n 3 "$WORK/sf.err")"
		fi
	done
	if [ "$(printf '%s' "$orders" | sort -u | wc -l)" -ge 2 ]; then
		pass "srun --format seeds give different placements"
	else
		fail "srun --format seeds give one placement only: pick seeds that differ"
	fi
}

# CPUs per rank, in rank order, from the CLI: `treematch map` gives each
# rank's leaf, `treematch topology show` each leaf's CPUs. Seed 0 is the
# plugin's default.
expected_from_cli() { # profile ranks topology [mapper]
	"$TM" map --profile "$1" --topology "$3" --mapper "${4:-auto}" >"$WORK/cli.map" 2>"$WORK/cli.err" &&
		"$TM" topology show --topology "$3" >"$WORK/cli.topo" 2>>"$WORK/cli.err" || return 0
	awk -v n="$2" '
		FNR == NR { if ($1 ~ /^[0-9]+$/) leaf[$1] = $2; next }
		$1 == "leaf" { l = $2; sub(/:$/, "", l); for (i = 3; i < NF; i++) if ($i == "cpus") cpus[l] = $(i + 1) }
		END { for (r = 0; r < n; r++) printf "%s ", cpus[leaf[r]] }' "$WORK/cli.map" "$WORK/cli.topo"
}

t_verbose() {
	run "$WORK/v.out" "$WORK/v.err" -n2 --treematch="$P2,verbose=1" "$W"
	n=$(grep -c 'treematch: cpu-bind=MAP - n0, task .*: cpus .* mask 0x.* set' "$WORK/v.err")
	if [ "$n" -eq 2 ] && grep -q 'treematch: n0: 2 task(s) mapped by .* cost .*(packed ' "$WORK/v.err"; then
		pass "verbose=1: one cpu-bind line per task and the cost against packed"
	else
		fail "verbose=1: one cpu-bind line per task and the cost against packed" "$(cat "$WORK/v.err")"
	fi
}

t_dry_run() {
	run "$WORK/d.out" "$WORK/d.err" -n2 --cpu-bind=map_cpu:1,0 --treematch="$P2,dry_run=on" "$W"
	ok=1
	for r in 0 1; do
		line=$(grep "^rank=$r " "$WORK/d.out")
		want_cpu=$((1 - r)) # Slurm's map_cpu:1,0
		[ "$(field "$line" cpus)" = "$want_cpu" ] || { ok=0; why "rank $r: $line (Slurm's binding expected: $want_cpu)"; }
		[ "$(field "$line" tm_cpus)" != "-" ] || { ok=0; why "rank $r: no TREEMATCH_CPUS in dry-run"; }
	done
	grep -q 'not set (dry-run)' "$WORK/d.err" || { ok=0; why "no dry-run report: $(cat "$WORK/d.err")"; }
	check "dry_run=on reports the placement and binds nothing" [ $ok -eq 1 ]
}

t_errors() {
	for c in "missing:$WORK/nonexistent.yml:cannot read profile $WORK/nonexistent.yml" \
		"bad YAML:$WORK/bad.yml:bad.yml:[0-9]*:[0-9]*:" \
		"wrong rank count:$P8:8 ranks but the job step has 2 tasks"; do
		what=${c%%:*}
		rest=${c#*:}
		file=${rest%%:*}
		msg=${rest#*:}
		run "$WORK/e.out" "$WORK/e.err" -n2 --treematch="$file" "$W"
		rc=$?
		if [ $rc -eq 1 ] && grep -q "srun: error: treematch: .*$msg" "$WORK/e.err" && ! grep -q '^rank=' "$WORK/e.out"; then
			pass "$what profile fails in srun with exit 1 and names the problem"
		else
			fail "$what profile fails in srun with exit 1 and names the problem" "rc=$rc" "$(cat "$WORK/e.err")" "$(cat "$WORK/e.out")"
		fi
	done
	run "$WORK/e.out" "$WORK/e.err" -n2 --treematch="$P2,mapper=nosuch" "$W"
	rc=$?
	if [ $rc -ne 0 ] && grep -q "treematch: .*nosuch" "$WORK/e.err"; then
		pass "unknown mapper fails in srun"
	else
		fail "unknown mapper fails in srun" "rc=$rc" "$(cat "$WORK/e.err")"
	fi
}

# The id slurmctld gives the next job (a held job's, cancelled at once).
next_job_id() {
	_j=$(timeout "$T" sbatch --parsable --hold -n1 -o /dev/null --wrap true 2>/dev/null)
	[ -n "$_j" ] && timeout 10 scancel "$_j" >/dev/null 2>&1
	echo "${_j:-0}"
}

# The package's line loads the plugin "optional", and Slurm ignores an
# optional plugin's failing init_post_opt and local_user_init: a bad profile
# or a wrong rank count must stop srun all the same, before it asks for an
# allocation (no job id is used), and a step whose count only the step
# knows must not start.
t_stops_before_allocation() {
	echo "optional $SO failure=fallback max_map_time=10" >"$PLUGSTACK"
	for c in "bad YAML|-n2 --treematch=$WORK/bad.yml|bad.yml:[0-9]*:[0-9]*:" \
		"a missing profile|-n2 --treematch=$WORK/nonexistent.yml|cannot read profile .*nonexistent.yml" \
		"an unknown mapper|-n2 --treematch=$P2,mapper=nosuch|nosuch" \
		"a wrong rank count (-n 2)|-n 2 --treematch=$P8|p8.yml: the profile has 8 ranks but the job step has 2 tasks" \
		"a wrong rank count (--ntasks=2)|--ntasks=2 -l --treematch=$P8|p8.yml: the profile has 8 ranks but the job step has 2 tasks"; do
		what=${c%%|*}
		rest=${c#*|}
		args=${rest%%|*}
		msg=${rest#*|}
		before=$(next_job_id)
		# shellcheck disable=SC2086
		run "$WORK/o.out" "$WORK/o.err" $args "$W"
		rc=$?
		after=$(next_job_id)
		name="optional plugin: $what stops srun before it asks for an allocation"
		if [ $rc -eq 1 ] && grep -q "srun: error: treematch: .*$msg" "$WORK/o.err" &&
			! grep -q '^rank=' "$WORK/o.out" && [ "$before" -gt 0 ] && [ "$after" -eq $((before + 1)) ]; then
			pass "$name"
		else
			fail "$name" "rc=$rc, job ids $before then $after" "$(cat "$WORK/o.err")"
		fi
	done
	# Inside an allocation srun takes the count from it: known once the
	# step exists, and the step does not start.
	(cd "$WORK" && timeout "$T" salloc -n2 srun --treematch="$P8" "$W" >"$WORK/o.out" 2>"$WORK/o.err" </dev/null)
	rc=$?
	n=0
	while left=$(timeout 10 squeue -h -s 2>/dev/null | grep -v extern) && [ -n "$left" ] && [ $n -lt 50 ]; do
		n=$((n + 1))
		sleep 0.2
	done
	if [ $rc -ne 0 ] && grep -q "srun: error: treematch: .*p8.yml: the profile has 8 ranks but the job step has 2 tasks" "$WORK/o.err" &&
		! grep -q '^rank=' "$WORK/o.out" && [ -z "$left" ]; then
		pass "optional plugin: a count the step gives (salloc -n2 srun) stops srun before a task starts"
	else
		fail "optional plugin: a count the step gives (salloc -n2 srun) stops srun before a task starts" \
			"rc=$rc, steps left: $left" "$(cat "$WORK/o.err")" "$(cat "$WORK/o.out")"
	fi
	# The site's typo: named with its file, line and column; those who
	# asked for treematch are stopped, the others run and are told.
	echo "optional $SO max_map_time=10 failure=fallbak" >"$PLUGSTACK"
	col=$(($(printf 'optional %s max_map_time=10 ' "$SO" | wc -c) + 1))
	run "$WORK/o.out" "$WORK/o.err" -n1 "$W"
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^rank=' "$WORK/o.out" &&
		grep -q "treematch: $PLUGSTACK:1:$col: 'failure' must be .*treematch is off" "$WORK/o.err"; then
		pass "a typo in the plugstack line is named with file:line:col, and srun without --treematch runs"
	else
		fail "a typo in the plugstack line is named with file:line:col, and srun without --treematch runs" \
			"rc=$rc" "$(cat "$WORK/o.err")"
	fi
	run "$WORK/o.out" "$WORK/o.err" -n1 --treematch="$P1" "$W"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "srun: error: treematch: $PLUGSTACK:1:$col: 'failure' must be" "$WORK/o.err"; then
		pass "a typo in the plugstack line stops srun --treematch, naming file:line:col"
	else
		fail "a typo in the plugstack line stops srun --treematch, naming file:line:col" "rc=$rc" "$(cat "$WORK/o.err")"
	fi
	plugstack
}

t_sbatch() {
	cat >"$WORK/job.sh" <<EOF
#!/bin/sh
#SBATCH --treematch=$P2
#SBATCH -n 2
#SBATCH -o $WORK/job.out
#SBATCH -e $WORK/job.err
echo "batch cpus=\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status) tm=\${TREEMATCH_CPUS:--}"
srun $W
EOF
	rm -f "$WORK/job.out"
	jid=$(cd "$WORK" && timeout "$T" sbatch --parsable "$WORK/job.sh" 2>"$WORK/sb.err")
	if [ -z "$jid" ] || ! wait_job "$jid"; then
		fail "#SBATCH --treematch reaches the job's steps" "sbatch: $(cat "$WORK/sb.err")"
		return
	fi
	grep '^rank=' "$WORK/job.out" >"$WORK/job.ranks" 2>/dev/null
	check "#SBATCH --treematch reaches the job's steps" bound_as_exported "$WORK/job.ranks" 2
	if grep -q '^batch .* tm=-$' "$WORK/job.out"; then
		pass "the batch script itself is not placed"
	else
		fail "the batch script itself is not placed" "$(cat "$WORK/job.out")"
	fi
}

t_admin_default() {
	plugstack "profile=$P2"
	run "$WORK/a.out" "$WORK/a.err" -n2 "$W"
	check "admin default profile applies without --treematch" bound_as_exported "$WORK/a.out" 2
	run "$WORK/a.out" "$WORK/a.err" -n2 --treematch=off "$W"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(grep -c 'tm_cpus=-' "$WORK/a.out")" -eq 2 ]; then
		pass "--treematch=off overrides the admin default"
	else
		fail "--treematch=off overrides the admin default" "rc=$rc" "$(cat "$WORK/a.out" "$WORK/a.err")"
	fi
	run "$WORK/a.out" "$WORK/a.err" -n1 "$W"
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'tm_cpus=-' "$WORK/a.out"; then
		pass "admin default profile of another size leaves the step alone"
	else
		fail "admin default profile of another size leaves the step alone" "rc=$rc" "$(cat "$WORK/a.out" "$WORK/a.err")"
	fi
	printf '# site policy\ndefault = on\nprofile = %s\n' "$P2" >"$WORK/admin.conf"
	plugstack "admin_file=$WORK/admin.conf"
	run "$WORK/a.out" "$WORK/a.err" -n2 "$W"
	check "admin file (admin_file=) sets the site default" bound_as_exported "$WORK/a.out" 2
	plugstack "max_ranks=1"
	run "$WORK/a.out" "$WORK/a.err" -n2 --treematch="$P2" "$W"
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'srun: error: treematch: .*max_ranks\|srun: error: treematch: .*ranks' "$WORK/a.err" && ! grep -q '^rank=' "$WORK/a.out"; then
		pass "admin limit max_ranks=1 refuses a 2-rank profile in srun"
	else
		fail "admin limit max_ranks=1 refuses a 2-rank profile in srun" "rc=$rc" "$(cat "$WORK/a.err")"
	fi
	plugstack "max_file_size=16"
	run "$WORK/a.out" "$WORK/a.err" -n2 --treematch="$P2" "$W"
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'srun: error: treematch: .*p2.yml' "$WORK/a.err" && ! grep -q '^rank=' "$WORK/a.out"; then
		pass "admin limit max_file_size=16 refuses the profile in srun"
	else
		fail "admin limit max_file_size=16 refuses the profile in srun" "rc=$rc" "$(cat "$WORK/a.err")"
	fi
	plugstack "mpi_pin=on"
	run "$WORK/a.out" "$WORK/a.err" -n1 --treematch="$P1" sh -c 'echo "pin=$OMPI_MCA_hwloc_base_binding_policy,$HYDRA_BINDING,$I_MPI_PIN,$MV2_ENABLE_AFFINITY"'
	check "mpi_pin=on (admin default) exports the MPI no-rebind variables" grep -q '^pin=none,none,0,0$' "$WORK/a.out"
	run "$WORK/a.out" "$WORK/a.err" -n1 --treematch="$P1,mpi_pin=off" sh -c 'echo "pin=$I_MPI_PIN"'
	check "mpi_pin=off from the user overrides the admin default" grep -q '^pin=$' "$WORK/a.out"
	plugstack
}

# A problem found on the node (3 tasks on 2 CPUs) follows failure=.
t_node_failure() {
	profile "$WORK/p3.yml" 3 "0, 1, 10" "1, 2, 10"
	run "$WORK/f.out" "$WORK/f.err" -n3 -O --treematch="$WORK/p3.yml" "$W"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(grep -c 'tm_cpus=-' "$WORK/f.out")" -eq 3 ] &&
		[ "$(grep -c 'treematch: node n0: 3 tasks for [0-9]* CPUs\?: .*falling back' "$WORK/f.err")" -eq 1 ]; then
		pass "node problem, failure=fallback: one clear line, tasks run with Slurm's binding"
	else
		fail "node problem, failure=fallback: one clear line, tasks run with Slurm's binding" "rc=$rc" "$(cat "$WORK/f.out" "$WORK/f.err")"
	fi
	run "$WORK/f.out" "$WORK/f.err" -n3 -O --treematch="$WORK/p3.yml,failure=fail" "$W"
	rc=$?
	if [ $rc -ne 0 ] && ! grep -q '^rank=' "$WORK/f.out" && grep -q 'treematch: node n0: 3 tasks for [0-9]* CPUs\?: .*failure=fail' "$WORK/f.err" &&
		[ -n "$(timeout 10 sinfo -h -N -t idle -o %N)" ]; then
		pass "node problem, failure=fail: the step fails, the node stays up"
	else
		fail "node problem, failure=fail: the step fails, the node stays up" "rc=$rc" "$(cat "$WORK/f.out" "$WORK/f.err")" "$(sinfo -N)"
	fi
	# The site's failure=fail and limits cannot be loosened by the user:
	# srun says what it ignored, once, and the node keeps failure=fail.
	plugstack "failure=fail max_map_time=5"
	run "$WORK/f.out" "$WORK/f.err" -n3 -O --treematch="$WORK/p3.yml,failure=fallback,max_map_time=60" "$W"
	rc=$?
	name="the user cannot loosen the site's failure=fail or max_map_time: srun says so, the step fails"
	if [ $rc -ne 0 ] && ! grep -q '^rank=' "$WORK/f.out" &&
		[ "$(grep -c "treematch: ignored, users may only tighten the site's policy: failure=fallback (the site sets failure=fail), max_map_time=60 (the site's limit is 5)" "$WORK/f.err")" -eq 1 ] &&
		grep -q 'treematch: node n0: .*failure=fail' "$WORK/f.err"; then
		pass "$name"
	else
		fail "$name" "rc=$rc" "$(cat "$WORK/f.out" "$WORK/f.err")"
	fi
	plugstack
}

# Oversubscription: srun -n 4 --overcommit on a node with fewer CPUs than
# tasks (every policy, whole cores or hardware threads, has too few slots).
# The step runs with Slurm's binding, one line says why, the node stays up.
t_overcommit() {
	cpus=$(slurmd -C | head -n 1 | tr ' ' '\n' | sed -n 's/^CPUs=//p')
	n=$((cpus + 2))
	STATE=
	profile "$WORK/po.yml" $n "0, 1, 10"
	run "$WORK/o.out" "$WORK/o.err" -n $n --overcommit --treematch="$WORK/po.yml,verbose=1" "$W"
	rc=$?
	lines=$(grep -c "treematch: node n0: $n tasks for [0-9]* CPUs\\?: .*oversubscribed.*falling back to Slurm's binding" "$WORK/o.err")
	if [ $rc -eq 0 ] && [ "$(grep -c '^rank=.* tm_cpus=- ' "$WORK/o.out")" -eq $n ] && [ "$lines" -eq 1 ] &&
		! grep -q 'cpu-bind=MAP' "$WORK/o.err" && node_up n0; then
		pass "srun -n $n --overcommit on $cpus CPUs: the step runs with Slurm's binding, one line, node $STATE"
	else
		fail "srun -n $n --overcommit on $cpus CPUs: the step runs with Slurm's binding, one line, no drain" \
			"rc=$rc lines=$lines node=$STATE" "$(cat "$WORK/o.out" "$WORK/o.err")"
	fi
}

t_time_budget() {
	run "$WORK/t.out" "$WORK/t.err" -n2 --treematch="$P2,max_map_time=0.000000001" "$W"
	rc=$?
	# The mapping runs in a child of slurmstepd that is killed at the
	# deadline (spank/isolate.c): the step falls back, the node stays up.
	if [ $rc -eq 0 ] && [ "$(grep -c 'tm_cpus=-' "$WORK/t.out")" -eq 2 ] &&
		[ "$(grep -c 'treematch: n0: mapping exceeded max_map_time=1e-09 s, killed: falling back' "$WORK/t.err")" -eq 1 ] &&
		[ "$(grep -c 'treematch:' "$WORK/t.err")" -eq 1 ] &&
		[ -n "$(timeout 10 sinfo -h -N -t idle -o %N)" ]; then
		pass "mapping over max_map_time: child killed, one line, Slurm's binding kept, node not drained"
	else
		fail "mapping over max_map_time: child killed, one line, Slurm's binding kept, node not drained" "rc=$rc" "$(cat "$WORK/t.out" "$WORK/t.err")" "$(sinfo -N)"
	fi
}

t_exclusive_only() {
	plugstack "exclusive_only=on"
	run "$WORK/x.out" "$WORK/x.err" -n1 --treematch="$P1" "$W"
	rc1=$?
	run "$WORK/x2.out" "$WORK/x2.err" -n1 --exclusive --treematch="$P1" "$W"
	rc2=$?
	plugstack
	if [ $rc1 -eq 0 ] && grep -q 'tm_cpus=-' "$WORK/x.out" && grep -q 'whole node' "$WORK/x.err" &&
		[ $rc2 -eq 0 ] && bound_as_exported "$WORK/x2.out" 1; then
		pass "exclusive_only=on: shared jobs keep Slurm's binding, exclusive jobs are placed"
	else
		fail "exclusive_only=on: shared jobs keep Slurm's binding, exclusive jobs are placed" "$(cat "$WORK/x.out" "$WORK/x.err" "$WORK/x2.out" "$WORK/x2.err" "$WORK/why")"
	fi
	: >"$WORK/why"
}

# Profiles are opened with the job owner's privileges: a root-only file is
# refused to the user `nobody` in srun and, for an admin default profile,
# on the node too (slurmstepd runs as root).
# A plugin whose init fails in slurmstepd (failinit.so: the path of an
# option Slurm refuses to register, made to fail in a test build). From
# Slurm 25.05 (slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE) the
# step and the batch job fail and the node stays up; before, where a
# failed init would drain the node, the plugin goes on without its option:
# the step and the batch job run, the node stays up. Either way slurmd's
# log says why, in one of the plugin's lines.
t_failed_init() {
	fso=$B/tests/e2e/failinit.so
	if [ ! -f "$fso" ] && [ -L "$SO" ]; then
		skip "a failed init in slurmstepd" "the plugin under test is installed; failinit.so is a test build of the source tree's"
		return
	elif [ ! -f "$fso" ]; then
		fail "failed init: $fso missing (make e2e builds it)"
		return
	fi
	if nm -D "$fso" | grep -q ' slurm_spank_init_failure_mode$'; then
		fails=1 what="fails the step and the batch job"
	else
		fails=0 what="is passed over (Slurm before 25.05 would drain the node): the step and the batch job run"
	fi
	log=$TMATCH_CLUSTER_DIR/log/slurmd-n0.log
	before=$(grep -c 'treematch: cannot register --treematch:' "$log" 2>/dev/null)
	echo "required $fso ${PLUGIN_ARGS#* }" >"$PLUGSTACK"
	run "$WORK/fi.out" "$WORK/fi.err" -n1 "$W"
	rc=$?
	ranks=$(grep -c '^rank=' "$WORK/fi.out")
	cat >"$WORK/fi.sh" <<EOF
#!/bin/sh
#SBATCH -n 1
#SBATCH -o $WORK/fi-job.out
#SBATCH -e $WORK/fi-job.out
echo batch ran
EOF
	rm -f "$WORK/fi-job.out"
	jid=$(cd "$WORK" && timeout "$T" sbatch --parsable "$WORK/fi.sh" 2>"$WORK/fi-sb.err")
	[ -n "$jid" ] && wait_job "$jid"
	ran=$(grep -c '^batch ran$' "$WORK/fi-job.out" 2>/dev/null)
	after=$(grep -c 'treematch: cannot register --treematch:' "$log" 2>/dev/null)
	name="a failed init in slurmstepd $what; the node stays up"
	if [ -n "$jid" ] && node_up n0 && [ "${after:-0}" -gt "${before:-0}" ] &&
		{ { [ $fails -eq 1 ] && [ $rc -ne 0 ] && [ "$ranks" -eq 0 ] && [ "${ran:-0}" -eq 0 ]; } ||
			{ [ $fails -eq 0 ] && [ $rc -eq 0 ] && [ "$ranks" -eq 1 ] && [ "${ran:-0}" -eq 1 ]; }; }; then
		pass "$name"
	else
		fail "$name" "srun rc=$rc ranks=$ranks batch job=${jid:-none} ran=${ran:-0} node=$STATE log lines ${before:-0} -> ${after:-0}" \
			"$(cat "$WORK/fi.out" "$WORK/fi.err" "$WORK/fi-sb.err" "$WORK/fi-job.out" 2>/dev/null)" "$(sinfo -N)"
		case $STATE in drain* | drng*) timeout 10 scontrol update nodename=n0 state=resume >/dev/null 2>&1 ;; esac
	fi
	plugstack
}

t_privileges() {
	if ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null 2>&1; then
		fail "profiles are read with the user's privileges" "needs the user nobody and setpriv (util-linux)"
		return
	fi
	grp=$(id -gn nobody)
	cp "$P2" "$WORK/secret.yml"
	chmod 600 "$WORK/secret.yml"
	cp "$P2" "$WORK/public.yml"
	chmod 644 "$WORK/public.yml"
	as_nobody() { (cd "$WORK" && timeout "$T" setpriv --reuid=nobody --regid="$grp" --clear-groups "$@"); }
	as_nobody srun -n2 --treematch="$WORK/public.yml" "$W" >"$WORK/u.out" 2>"$WORK/u.err"
	check "a job of the user nobody is placed from a profile it can read" bound_as_exported "$WORK/u.out" 2
	as_nobody srun -n2 --treematch="$WORK/secret.yml" "$W" >"$WORK/u.out" 2>"$WORK/u.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'srun: error: treematch: cannot read profile .*secret.yml: Permission denied' "$WORK/u.err" &&
		! grep -q '^rank=' "$WORK/u.out"; then
		pass "srun refuses a profile the user cannot read"
	else
		fail "srun refuses a profile the user cannot read" "rc=$rc" "$(cat "$WORK/u.err" "$WORK/u.out")"
	fi
	plugstack "profile=$WORK/secret.yml"
	as_nobody srun -n2 "$W" >"$WORK/u.out" 2>"$WORK/u.err"
	rc=$?
	plugstack
	if [ $rc -eq 0 ] && [ "$(grep -c 'tm_cpus=-' "$WORK/u.out")" -eq 2 ] &&
		slurm_said "$WORK/u.err" 'treematch: n0: cannot read profile .*secret.yml: Permission denied'; then
		pass "slurmstepd (root) opens the admin's default profile as the job's user"
	else
		fail "slurmstepd (root) opens the admin's default profile as the job's user" "rc=$rc" "$(cat "$WORK/u.err" "$WORK/u.out")"
	fi
}

t_partial_node() {
	jid=$(timeout "$T" sbatch --parsable -n1 -o /dev/null --wrap 'sleep 300' 2>"$WORK/p.err")
	if [ -z "$jid" ] || ! wait_running "$jid"; then
		fail "partial node: blocker job" "$(cat "$WORK/p.err")"
		return
	fi
	run "$WORK/p.out" "$WORK/p.err" -n1 --treematch="$P1" "$W"
	run "$WORK/p0.out" "$WORK/p0.err" -n1 "$W"
	timeout 10 scancel "$jid"
	line=$(grep '^rank=0' "$WORK/p.out")
	slurm=$(field "$(grep '^rank=0' "$WORK/p0.out")" cpus)
	if bound_as_exported "$WORK/p.out" 1 && [ "$(field "$line" cpus)" = "$slurm" ]; then
		pass "partial node: the task stays inside the step's CPUs ($slurm)"
	else
		fail "partial node: the task stays inside the step's CPUs" "plugin: $line" "Slurm: $slurm" "$(cat "$WORK/p.err" "$WORK/why")"
	fi
	: >"$WORK/why"
	wait_job "$jid"
}

t_cpus_per_task() {
	run "$WORK/c.out" "$WORK/c.err" -n1 -c2 --treematch="$P1" "$W"
	line=$(grep '^rank=0' "$WORK/c.out")
	if bound_as_exported "$WORK/c.out" 1 && [ "$(field "$line" cpus)" = "0-1" ] &&
		[ "$(field "$line" omp)" = 2 ] && [ "$(field "$line" places)" = "{0},{1}" ] &&
		[ "$(field "$line" bind)" = close ]; then
		pass "cpus-per-task 2: bound to its group, OMP_NUM_THREADS/PLACES/PROC_BIND exported"
	else
		fail "cpus-per-task 2: bound to its group, OMP_NUM_THREADS/PLACES/PROC_BIND exported" "$line" "$(cat "$WORK/c.err" "$WORK/why")"
	fi
	: >"$WORK/why"
	(export OMP_NUM_THREADS=7 && run "$WORK/c.out" "$WORK/c.err" -n1 -c2 --treematch="$P1" "$W")
	line=$(grep '^rank=0' "$WORK/c.out")
	check "cpus-per-task: the user's OMP_NUM_THREADS is kept" [ "$(field "$line" omp)" = 7 ]
}

t_mpi() { # label
	for flavour in openmpi mpich; do
		exe=$B/tests/e2e/mpi_hello.$flavour
		case $flavour in openmpi) mpi=pmix ;; *) mpi=pmi2 ;; esac
		name="MPI ($flavour, --mpi=$mpi$1): ranks report the CPUs the mapping chose"
		if [ $mpi = pmix ] && ! have_pmix; then
			skip "$name" "$NO_PMIX"
			continue
		fi
		if [ ! -x "$exe" ]; then
			fail "$name" "cannot build $exe: $(cat "$WORK/mpicc.$flavour.log" 2>/dev/null)"
			continue
		fi
		run_mpi "$WORK/m.out" "$WORK/m.err" -n2 --mpi=$mpi --treematch="$P2" "$exe"
		rc=$?
		n=0
		bad=""
		for r in 0 1; do
			line=$(grep "^mpi rank=$r size=2 " "$WORK/m.out")
			c=$(field "$line" cpus)
			t=$(field "$line" tm_cpus)
			if [ -n "$line" ] && [ "$c" = "$t" ] && [ "$t" != "-" ] && [ "$(field "$line" sum)" = 2 ]; then
				n=$((n + 1))
			else
				bad="$bad rank $r: '$line'"
			fi
		done
		if [ $rc -eq 0 ] && [ $n -eq 2 ]; then pass "$name"; else fail "$name" "rc=$rc$bad" "$(tail -n 5 "$WORK/m.err")"; fi
	done
}

# ---------------------------------------------------------------------------
# One node, task/none: the plugin's binding is the only one.

t_task_none() {
	run "$WORK/n0.out" "$WORK/n0.err" -n2 "$W"
	run "$WORK/n.out" "$WORK/n.err" -n2 --treematch="$P2" "$W"
	all=$(field "$(grep '^rank=0' "$WORK/n0.out")" cpus)
	if bound_as_exported "$WORK/n.out" 2 && [ "$all" != "$(field "$(grep '^rank=0' "$WORK/n.out")" cpus)" ]; then
		pass "task/none: the plugin binds each task (without it: $all)"
	else
		fail "task/none: the plugin binds each task" "$(cat "$WORK/n.out" "$WORK/n.err" "$WORK/why")"
	fi
	: >"$WORK/why"
}

# ---------------------------------------------------------------------------
# One node declared as 2 packages x 4 cores, the plugin on that node's hwloc
# XML in dry-run: the placement of a real 8-rank profile equals the CLI's.

t_xml_like_cli() {
	for mapper in auto treematch greedy; do
		run "$WORK/x8.out" "$WORK/x8.err" -n8 --treematch="$SRC/profile/examples/lammps-8.yml,dry_run=on,mapper=$mapper" true
		rc=$?
		got=$(sed -n 's/.*task *[0-9]* *\([0-9]*\) \[[0-9]*\]: cpus \([^ ]*\) .*/\1 \2/p' "$WORK/x8.err" |
			sort -n | awk '{ printf "%s ", $2 }')
		expected=$(expected_from_cli "$SRC/profile/examples/lammps-8.yml" 8 "xml:$XML8" $mapper)
		if [ $rc -eq 0 ] && [ -n "$expected" ] && [ "$expected" = "$got" ]; then
			pass "8 ranks on a 2x4-core node (XML, dry-run, $mapper): placed as 'treematch map' says ($got)"
		else
			fail "8 ranks on a 2x4-core node (XML, dry-run, $mapper): placed as 'treematch map' says" \
				"rc=$rc map: '$expected' plugin: '$got'" "$(cat "$WORK/cli.err" "$WORK/x8.err" | tail -n 12)"
		fi
	done
	if grep -q 'treematch: n0: 8 task(s) mapped by .*, cost .*(packed ' "$WORK/x8.err"; then
		pass "dry-run reports the node's cost against packed"
	else
		fail "dry-run reports the node's cost against packed" "$(cat "$WORK/x8.err")"
	fi
}

# per_node_like_cli OUT PROFILE TOPOLOGY KEY: on every node of OUT (whereami
# lines), the first CPU of KEY (cpus: what /proc/self/status says; tm_cpus:
# TREEMATCH_CPUS) of each of the node's global ranks is where `treematch map
# --ranks <the node's ranks> --topology TOPOLOGY` puts it (the first thread
# of the leaf's CPUs). Sets CHECKED to "node:cpus..." for the message.
per_node_like_cli() {
	CHECKED=
	"$TM" topology show --topology "$3" >"$WORK/pn.topo" 2>"$WORK/pn.err" ||
		{ why "treematch topology show --topology $3: $(cat "$WORK/pn.err")"; return 1; }
	_nodes=$(grep '^rank=' "$1" | tr ' ' '\n' | sed -n 's/^node=//p' | sort -u)
	[ -n "$_nodes" ] || { why "no task lines: $(cat "$1")"; return 1; }
	for _nd in $_nodes; do
		# Slurm numbers a node's tasks in increasing global rank (block, cyclic).
		_ranks=$(grep "^rank=[0-9]* node=$_nd " "$1" | sed 's/^rank=\([0-9]*\) .*/\1/' | sort -n | paste -sd, -)
		"$TM" map --profile "$2" --topology "$3" --ranks "$_ranks" >"$WORK/pn.map" 2>"$WORK/pn.err" ||
			{ why "treematch map --ranks $_ranks: $(cat "$WORK/pn.err")"; return 1; }
		_want=$(awk 'FNR == NR { if ($1 == "leaf") { l = $2; sub(/:$/, "", l); for (i = 3; i < NF; i++) if ($i == "cpus") c[l] = $(i + 1) } next }
			{ split(c[$2], f, /[-,]/); printf "%s:%s ", $1, f[1] }' "$WORK/pn.topo" "$WORK/pn.map")
		_got=
		for _r in $(echo "$_ranks" | tr ',' ' '); do
			_c=$(field "$(grep "^rank=$_r " "$1")" "$4")
			_got="$_got$_r:${_c%%[-,]*} "
		done
		if [ "$_want" != "$_got" ]; then
			why "$_nd, ranks $_ranks: treematch map --ranks says '$_want', the tasks ($4) '$_got'"
			return 1
		fi
		CHECKED="$CHECKED $_nd[$_got]"
	done
	return 0
}

# One node declared as 1 package x 2 cores x 2 hardware threads (its hwloc
# XML, dry-run): 2 tasks with --ntasks-per-core=1 get a whole core each;
# 2 tasks by default (Slurm gives them one core) a hardware thread each of
# that core; 4 tasks (two per core) a hardware thread each, the pairs that
# talk on one core; 5 tasks with --overcommit: one line, Slurm's binding.
t_smt() {
	run "$WORK/s2.out" "$WORK/s2.err" -n2 --ntasks-per-core=1 --treematch="$P2,dry_run=on" "$W"
	got=$(sort -n -t= -k2 "$WORK/s2.out" | while read -r l; do printf '%s ' "$(field "$l" tm_cpus)"; done)
	case $got in
	"0-1 2-3 " | "2-3 0-1 ") pass "SMT node, 2 tasks on 2 cores: a whole core (both threads) each ($got)" ;;
	*) fail "SMT node, 2 tasks on 2 cores: a whole core (both threads) each" "got '$got'" "$(cat "$WORK/s2.out" "$WORK/s2.err")" ;;
	esac
	run "$WORK/s2.out" "$WORK/s2.err" -n2 --treematch="$P2,dry_run=on" "$W"
	got=$(sort -n -t= -k2 "$WORK/s2.out" | while read -r l; do printf '%s/%s ' "$(field "$l" cpus)" "$(field "$l" tm_cpus)"; done)
	case $got in
	"0-1/0 0-1/1 " | "0-1/1 0-1/0 " | "2-3/2 2-3/3 " | "2-3/3 2-3/2 ") pass "SMT node, 2 tasks Slurm put on one core: a hardware thread each (Slurm/plugin: $got)" ;;
	*) fail "SMT node, 2 tasks Slurm put on one core: a hardware thread each" "Slurm/plugin: '$got'" "$(cat "$WORK/s2.out" "$WORK/s2.err")" ;;
	esac
	profile "$WORK/p4s.yml" 4 "0, 3, 1000" "1, 2, 1000" "0, 1, 1" "2, 3, 1"
	run "$WORK/s4.out" "$WORK/s4.err" -n4 --treematch="$WORK/p4s.yml,dry_run=on" "$W"
	rc=$?
	ok=1
	c0=$(field "$(grep '^rank=0 ' "$WORK/s4.out")" tm_cpus)
	c1=$(field "$(grep '^rank=1 ' "$WORK/s4.out")" tm_cpus)
	c2=$(field "$(grep '^rank=2 ' "$WORK/s4.out")" tm_cpus)
	c3=$(field "$(grep '^rank=3 ' "$WORK/s4.out")" tm_cpus)
	all="$c0 $c1 $c2 $c3"
	for c in $all; do case $c in [0-3]) ;; *) ok=0 ;; esac; done
	[ "$(printf '%s\n' $all | sort -u | wc -l)" -eq 4 ] || ok=0
	# Core k holds PUs 2k and 2k+1 in this XML.
	[ $((c0 / 2)) -eq $((c3 / 2)) ] 2>/dev/null && [ $((c1 / 2)) -eq $((c2 / 2)) ] 2>/dev/null || ok=0
	if [ $rc -eq 0 ] && [ $ok -eq 1 ]; then
		pass "SMT node, 4 tasks on 2 cores: one hardware thread each, talking pairs share a core (0..3 on $all)"
	else
		fail "SMT node, 4 tasks on 2 cores: one hardware thread each, talking pairs share a core" "rc=$rc CPUs by rank: $all" "$(cat "$WORK/s4.out" "$WORK/s4.err")"
	fi
	profile "$WORK/p5.yml" 5 "0, 1, 10"
	run "$WORK/s5.out" "$WORK/s5.err" -n5 --overcommit --treematch="$WORK/p5.yml,dry_run=on" "$W"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(grep -c '^rank=.* tm_cpus=- ' "$WORK/s5.out")" -eq 5 ] &&
		[ "$(grep -c "treematch: node n0: 5 tasks for [0-9]* CPUs\\?: .*oversubscribed" "$WORK/s5.err")" -eq 1 ] &&
		node_up n0; then
		pass "SMT node, 5 tasks --overcommit: one line, Slurm's binding, node $STATE"
	else
		fail "SMT node, 5 tasks --overcommit: one line, Slurm's binding, node not drained" "rc=$rc node=$STATE" "$(cat "$WORK/s5.out" "$WORK/s5.err")"
	fi
}

# Four nodes declared as 2 packages x 4 cores, the plugin on that hwloc XML
# in dry-run, 8 tasks per node (the step has every core, as the CLI's tree):
# on every node the CPUs per global rank (TREEMATCH_CPUS) are what
# `treematch map --ranks` says for the node's ranks on the same XML.
t_multinode_xml() {
	edges=""
	r=0
	while [ $r -lt 32 ]; do
		# Under -m block (ranks 8k..8k+7 on a node) local task i talks
		# with local task 7-i; under -m cyclic (ranks j, j+4, ...) with
		# local task i+4. Neither node mapping is the identity, and they
		# differ: a node mapping the wrong ranks' rows is caught.
		i=$((r % 8))
		[ $i -lt 4 ] && edges="$edges|$r, $((r + 7 - 2 * i)), 1000"
		[ $r -lt 16 ] && edges="$edges|$r, $((r + 16)), 900"
		r=$((r + 1))
	done
	# shellcheck disable=SC2086
	(IFS='|' && profile "$WORK/p32.yml" 32 ${edges#|})
	for dist in block cyclic; do
		run "$WORK/mx.out" "$WORK/mx.err" -N4 -n32 -m $dist --treematch="$WORK/p32.yml,dry_run=on" "$W"
		rc=$?
		if [ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$WORK/mx.out")" -eq 32 ] && per_node_like_cli "$WORK/mx.out" "$WORK/p32.yml" "xml:$XML8" tm_cpus; then
			pass "4 nodes of 2x4 cores (XML, dry-run), -m $dist: each node as 'treematch map --ranks' says:$CHECKED"
		else
			fail "4 nodes of 2x4 cores (XML, dry-run), -m $dist: each node as 'treematch map --ranks' says" "rc=$rc" \
				"$(cat "$WORK/why")" "$(cat "$WORK/mx.out")" "$(tail -n 5 "$WORK/mx.err")"
		fi
		: >"$WORK/why"
	done
}

# ---------------------------------------------------------------------------
# Four nodes, two switches

t_multinode() {
	run "$WORK/m4.out" "$WORK/m4.err" -N4 -n8 --treematch="$P8,verbose=1" "$W"
	rc=$?
	check "4 nodes: srun -N4 -n8 binds every task (rc=$rc)" bound_as_exported "$WORK/m4.out" 8
	ok=1
	for r in 0 1 2 3 4 5 6 7; do
		line=$(grep "^rank=$r " "$WORK/m4.out")
		node=n$((r / 2 + 1))
		sw=$((r / 4))
		[ "$(field "$line" node)" = "$node" ] || { ok=0; why "rank $r not on $node: $line"; }
		case ,$(field "$line" pos) in
		*,switch=$sw/2,node=$((r / 2 % 2))/2,*) ;;
		*) ok=0; why "rank $r: position $(field "$line" pos) lacks switch=$sw/2,node=$((r / 2 % 2))/2" ;;
		esac
	done
	check "4 nodes: TREEMATCH_POSITION gives the switch and node of each task" [ $ok -eq 1 ]
	n=$(grep -c 'treematch: cpu-bind=MAP - n[1-4], task' "$WORK/m4.err")
	check "4 nodes: one verbose line per task ($n)" [ "$n" -eq 8 ]
	# a prediction saved beside the profile (treematch predict --save):
	# said once per step, by the first node, from the numbers alone
	cp "$P8" "$WORK/p8p.yml"
	printf 'treematch-prediction 1\n# secret-comment\npacked 0.4\nauto 0.1\n' >"$WORK/p8p.yml.predict"
	chmod 644 "$WORK/p8p.yml" "$WORK/p8p.yml.predict"
	run "$WORK/mp.out" "$WORK/mp.err" -N4 -n8 --treematch="$WORK/p8p.yml,verbose=1" "$W"
	rc=$?
	n=$(grep -c "treematch: predicted run time ($WORK/p8p.yml.predict, .*): auto 0.1 s, packed 0.4 s: 4.00x" "$WORK/mp.err")
	ok=1
	[ $rc -eq 0 ] && bound_as_exported "$WORK/mp.out" 8 || { ok=0; why "not bound (rc=$rc)"; }
	[ "$n" -eq 1 ] || { ok=0; why "$n prediction lines: $(cat "$WORK/mp.err")"; }
	! grep -q secret "$WORK/mp.err" || { ok=0; why "the file's text echoed: $(cat "$WORK/mp.err")"; }
	check "4 nodes, verbose=1: the saved prediction said once, from its numbers" [ $ok -eq 1 ]
	# Each node maps the sub-profile of its global ranks: the CPUs the
	# kernel enforces per rank equal `treematch map --ranks` on that node's
	# tree (the nodes share this machine's hardware: --topology local).
	for dist in block cyclic; do
		run "$WORK/mc.out" "$WORK/mc.err" -N4 -n8 -m $dist --treematch="$P8,verbose=1" "$W"
		rc=$?
		if [ $rc -eq 0 ] && bound_as_exported "$WORK/mc.out" 8 && per_node_like_cli "$WORK/mc.out" "$P8" local cpus; then
			pass "4 nodes, -m $dist: each node's CPUs per global rank (/proc) as 'treematch map --ranks' says:$CHECKED"
		else
			fail "4 nodes, -m $dist: each node's CPUs per global rank (/proc) as 'treematch map --ranks' says" "rc=$rc" \
				"$(cat "$WORK/why")" "$(tail -n 5 "$WORK/mc.err")"
		fi
		: >"$WORK/why"
	done
	for flavour in mpich openmpi; do
		exe=$B/tests/e2e/mpi_hello.$flavour
		case $flavour in openmpi) mpi=pmix ;; *) mpi=pmi2 ;; esac
		name="4 nodes: $flavour over $mpi, 8 ranks on the CPUs the mapping chose"
		if [ $mpi = pmix ] && ! have_pmix; then
			skip "$name" "$NO_PMIX"
			continue
		fi
		if [ ! -x "$exe" ]; then
			fail "$name" "cannot build $exe"
			continue
		fi
		run_mpi "$WORK/mm.out" "$WORK/mm.err" -N4 -n8 --mpi=$mpi --treematch="$P8" "$exe"
		n=$(grep -c '^mpi rank=.* size=8 .*sum=8' "$WORK/mm.out")
		bad=$(grep '^mpi rank=' "$WORK/mm.out" | awk '{ c=$4; t=$5; sub(/cpus=/,"",c); sub(/tm_cpus=/,"",t); if (c != t || t == "-") print }')
		if [ "$n" -eq 8 ] && [ -z "$bad" ]; then
			pass "$name"
		else
			fail "$name" "$(cat "$WORK/mm.out")" "$(tail -n 5 "$WORK/mm.err")"
		fi
	done
}

# ---------------------------------------------------------------------------

build_mpi
if want affinity; then
	if start --nodes 1 --task-plugin task/affinity; then
		t_help
		t_binds_like_cli
		t_srun_format
		t_verbose
		t_dry_run
		t_errors
		t_stops_before_allocation
		t_sbatch
		t_admin_default
		t_privileges
		t_partial_node
		t_node_failure
		t_overcommit
		t_time_budget
		t_exclusive_only
		t_failed_init
		t_cpus_per_task
		t_mpi ""
	fi
fi
if want none; then
	if start --nodes 1 --task-plugin task/none; then
		t_task_none
		t_mpi ", task/none"
	fi
fi
if want xml; then
	XML8=$WORK/node8.xml
	if lstopo -f --of xml -i "pack:2 core:4 pu:1" "$XML8" >"$WORK/lstopo.err" 2>&1; then
		if start --nodes 1 --task-plugin task/none --shape "CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=1"; then
			plugstack "topology_xml=$XML8"
			t_xml_like_cli
		fi
	else
		fail "lstopo writes a synthetic XML topology" "$(cat "$WORK/lstopo.err")"
	fi
	XMLSMT=$WORK/node-smt.xml
	if lstopo -f --of xml -i "pack:1 core:2 pu:2" "$XMLSMT" >"$WORK/lstopo.err" 2>&1; then
		if start --nodes 1 --task-plugin task/none --shape "CPUs=4 Sockets=1 CoresPerSocket=2 ThreadsPerCore=2"; then
			plugstack "topology_xml=$XMLSMT"
			t_smt
		fi
	else
		fail "lstopo writes a synthetic SMT XML topology" "$(cat "$WORK/lstopo.err")"
	fi
fi
if want multi; then
	# Network namespaces need CAP_NET_ADMIN; without them, four slurmd on
	# loopback (all "nodes" share one hostname: Open MPI needs TCP then).
	echo "TMATCH_E2E_FORCE_4LO set" >"$WORK/cluster4.out"
	if [ -z "${TMATCH_E2E_FORCE_4LO:-}" ] &&
		$CLUSTER start --nodes 4 --task-plugin task/affinity >"$WORK/cluster4.out" 2>&1; then
		export SLURM_CONF=$TMATCH_CLUSTER_DIR/etc/slurm.conf
		plugstack
		t_multinode
		XML8=$WORK/node8.xml
		if lstopo -f --of xml -i "pack:2 core:4 pu:1" "$XML8" >"$WORK/lstopo.err" 2>&1 &&
			start --nodes 4 --task-plugin task/none --shape "CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=1"; then
			plugstack "topology_xml=$XML8"
			t_multinode_xml
		fi
	else
		echo "note: 4 nodes in network namespaces unavailable ($(tail -n 1 "$WORK/cluster4.out")); using 4 slurmd on loopback"
		if start --nodes 4lo --task-plugin task/affinity; then
			export OMPI_MCA_btl=self,tcp
			t_multinode
		fi
	fi
fi
[ "$FAILED" -eq 0 ]
