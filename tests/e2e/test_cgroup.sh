#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_cgroup.sh - the plugin under Slurm's cgroup confinement: a one-node
# cluster with task/cgroup,task/affinity and proctrack/cgroup
# (ConstrainCores), so every step lives in a cpuset cgroup of the cores
# Slurm gave it. Each task reports its cgroup's CPUs (read from inside,
# /proc/self/cgroup, v1 or v2), its affinity and TREEMATCH_CPUS; every
# binding must be the plugin's and lie inside the step's cgroup, also with
# two jobs side by side. Where the host does not let slurmd create cgroups
# (a container, cgroup v2 without delegation), the suite says so in one
# line and the other suites run as usual.
#
#   BUILDDIR=... SRCDIR=... sh tests/e2e/test_cgroup.sh   (make e2e-cgroup)
set -u

SRC=${SRCDIR:-$(pwd)}
B=${BUILDDIR:-$SRC/build}
. "$SRC/tests/e2e/lib.sh"
SO=$B/spank/treematch.so
WORK=$B/e2e/work-cgroup
export TMATCH_CLUSTER_DIR=$B/e2e/cluster-cgroup
CLUSTER="sh $SRC/tests/e2e/cluster.sh"
T=${TMATCH_E2E_TIMEOUT:-90}
START=$(date +%s)

trap 'e2e_finish e2e-cgroup e2e-cgroup' EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK"
if [ "$(id -u)" -ne 0 ]; then
	fail "e2e-cgroup needs root to start munge and Slurm daemons (run as root, as CI does)"
	exit 1
fi
[ -f "$SO" ] || { fail "missing $SO: run make first"; exit 1; }

if ! $CLUSTER start --cgroup >"$WORK/cluster.out" 2>&1; then
	why=$(grep -h -i -m1 'cgroup' "$TMATCH_CLUSTER_DIR"/log/slurmd-*.log "$WORK/cluster.out" 2>/dev/null |
		cut -c1-160)
	echo "e2e-cgroup: this host does not let slurmd confine steps to cgroups" \
		"(${why:-slurmd did not start}): cgroup suite not run, the other suites are"
	CLUSTER=
	exit 0
fi
. "$TMATCH_CLUSTER_DIR/env"
echo "required $PLUGIN_ARGS failure=fail" >"$TMATCH_CLUSTER_DIR/etc/plugstack.conf"

profile() { # FILE RANKS: a chain of RANKS ranks
	{
		printf 'format: comm-profile\nversion: 1\nranks: %d\nmetrics: [bytes]\n' "$2"
		printf 'directed: false\n'
		if [ "$2" -eq 1 ]; then
			printf 'edges: []\n'
		else
			printf 'edges:\n'
			i=0
			while [ "$i" -lt $(($2 - 1)) ]; do
				printf '  - [%d, %d, 1000]\n' "$i" $((i + 1))
				i=$((i + 1))
			done
		fi
	} >"$1"
}
P1=$WORK/p1.yml
P2=$WORK/p2.yml
profile "$P1" 1
profile "$P2" 2

# In the task: its cgroup's CPUs (v1 cpuset hierarchy, else v2), its
# affinity and the plugin's TREEMATCH_CPUS, on one line.
REPORT='
cg=$(awk -F: "\$2 == \"cpuset\" { print \$3 }" /proc/self/cgroup)
if [ -n "$cg" ]; then f=/sys/fs/cgroup/cpuset$cg/cpuset.effective_cpus
else f=/sys/fs/cgroup$(awk -F: "\$1 == 0 { print \$3 }" /proc/self/cgroup)/cpuset.cpus.effective; fi
echo "rank=$SLURM_PROCID cgroup=$(cat "$f" 2>/dev/null || echo none) affinity=$(awk "/^Cpus_allowed_list/ { print \$2 }" /proc/self/status) treematch=${TREEMATCH_CPUS:-unset}"'

# inside OUT: every line's affinity is its treematch CPUs and lies inside
# its cgroup (lists like "0-3,6" expanded).
inside() {
	awk '
	function expand(list, set,    n, part, i, r, a) {
		delete set
		n = split(list, part, ",")
		for (i = 1; i <= n; i++) {
			if (split(part[i], r, "-") == 2) { for (a = r[1]; a <= r[2]; a++) set[a] = 1 }
			else if (part[i] ~ /^[0-9]+$/) set[part[i]] = 1
		}
	}
	/^rank=/ {
		lines++
		for (i = 2; i <= 4; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["treematch"] == "unset" || v["cgroup"] == "none") { bad++; next }
		expand(v["affinity"], aff); expand(v["treematch"], tm); expand(v["cgroup"], cg)
		for (c in aff) if (!(c in cg) || !(c in tm)) bad++
		for (c in tm) if (!(c in aff)) bad++
	}
	END { exit !(lines > 0 && bad == 0) }' "$1"
}

# 1. one task, one CPU: bound by the plugin inside its step's cgroup
timeout "$T" srun -n1 -c1 --treematch="$P1" sh -c "$REPORT" >"$WORK/one.out" 2>"$WORK/one.err"
rc=$?
if [ $rc -eq 0 ] && inside "$WORK/one.out"; then
	pass "task/cgroup: srun -n1 -c1 --treematch: bound inside the step's cpuset cgroup ($(cut -d' ' -f2-3 "$WORK/one.out"))"
else
	fail_files "task/cgroup: srun -n1 -c1 --treematch: bound inside the step's cpuset cgroup (rc=$rc)" \
		"$WORK/one.out" "$WORK/one.err"
fi

# 2. two tasks: each inside, on distinct CPUs
timeout "$T" srun -n2 --treematch="$P2" sh -c "$REPORT" >"$WORK/two.out" 2>"$WORK/two.err"
rc=$?
if [ $rc -eq 0 ] && inside "$WORK/two.out" && [ "$(grep -c '^rank=' "$WORK/two.out")" -eq 2 ] &&
	[ "$(sed -n 's/.*treematch=//p' "$WORK/two.out" | sort -u | wc -l)" -eq 2 ]; then
	pass "task/cgroup: srun -n2 --treematch: both tasks inside the cgroup, distinct CPUs"
else
	fail_files "task/cgroup: srun -n2 --treematch: both tasks inside the cgroup, distinct CPUs (rc=$rc)" \
		"$WORK/two.out" "$WORK/two.err"
fi

# 3. two one-CPU jobs side by side: each bound inside its own cgroup, and
#    the two cgroups (and bindings) do not overlap
timeout "$T" srun -n1 -c1 --treematch="$P1" sh -c "$REPORT; sleep 3" >"$WORK/a.out" 2>"$WORK/a.err" &
a=$!
sleep 1
timeout "$T" srun -n1 -c1 --treematch="$P1" sh -c "$REPORT" >"$WORK/b.out" 2>"$WORK/b.err"
rcb=$?
wait $a
rca=$?
ca=$(sed -n 's/.*cgroup=\([^ ]*\).*/\1/p' "$WORK/a.out")
cb=$(sed -n 's/.*cgroup=\([^ ]*\).*/\1/p' "$WORK/b.out")
if [ $rca -eq 0 ] && [ $rcb -eq 0 ] && inside "$WORK/a.out" && inside "$WORK/b.out" &&
	[ -n "$ca" ] && [ "$ca" != "$cb" ]; then
	pass "task/cgroup: two jobs side by side, each bound inside its own cgroup ($ca, $cb)"
else
	fail_files "task/cgroup: two jobs side by side, each bound inside its own cgroup (rc=$rca,$rcb; $ca, $cb)" \
		"$WORK/a.out" "$WORK/a.err" "$WORK/b.out" "$WORK/b.err"
fi
