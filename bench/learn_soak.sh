#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# learn_soak.sh - issue 34's figure: hung steps among STEPS learn steps of an
# MPI program (MPICH over pmi2, 4 nodes in network namespaces, PARALLEL at a
# time) while the program's store entry is forgotten, stored again and
# damaged (bit flips, a truncated .meta) every 0.05-0.3 s. It is the first
# part of tests/e2e/test_nohang.sh (make e2e-nohang runs 40 steps), run
# longer; each step is bounded by TIMEOUT seconds, and one that reaches it
# counts as hung. Prints the counts and a Markdown line
# (bench/results/learn_soak.md keeps them).
#
#   BUILDDIR=/abs/build SRCDIR=/abs/repo sh bench/learn_soak.sh
#   STEPS=500 PARALLEL=4 TIMEOUT=60
set -u
B=${BUILDDIR:?BUILDDIR must be set}
S=${SRCDIR:-$(pwd)}
STEPS=${STEPS:-500}
PARALLEL=${PARALLEL:-4}
TIMEOUT=${TIMEOUT:-60}
mkdir -p "$B/e2e"
t0=$(date +%s)
NOHANG_STEPS=$STEPS NOHANG_PARALLEL=$PARALLEL NOHANG_TIMEOUT=$TIMEOUT NOHANG_ONLY_CHURN=1 \
	BUILDDIR=$B SRCDIR=$S sh "$S/tests/e2e/test_nohang.sh" >"$B/e2e/learn_soak.log" 2>&1
rc=$?
line=$(grep '^learn under churn:' "$B/e2e/learn_soak.log")
echo "$line"
grep -E '^(PASS|FAIL|    step)' "$B/e2e/learn_soak.log"
echo "| $(date +%Y-%m-%d) | $(git -C "$S" rev-parse --short HEAD 2>/dev/null) | $(slurmd -V 2>&1 | head -n 1) | ${line#learn under churn: } | $(($(date +%s) - t0)) s |"
exit $rc
