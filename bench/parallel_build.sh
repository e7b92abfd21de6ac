#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# parallel_build.sh - the build graph holds under any -j: RUNS times, a fresh
# `git clone` of this repository's HEAD into a scratch directory is built
# with `make -jJOBS` (default: 5 runs of make -j16). A missing prerequisite
# shows up as a failed run (a link before its archive, an object before its
# generated header); each run's wall time is printed beside it.
#
#   sh bench/parallel_build.sh [RUNS] [JOBS]      (exit 1 if any run fails)
#
# Commit first: the clone sees HEAD, not the working tree. CI runs it
# (.ci/run); it is not part of `make check` (it builds everything RUNS times).
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
JOBS=${2:-16}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tm-parallel-build.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

fail=0
head=$(git -C "$SRC" rev-parse --short HEAD) || exit 1
echo "parallel_build: $RUNS clean clones of $head, make -j$JOBS each ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
i=1
while [ "$i" -le "$RUNS" ]; do
	rm -rf "$WORK/clone"
	git clone -q "$SRC" "$WORK/clone" || exit 1
	t0=$(date +%s.%N)
	if make -C "$WORK/clone" -j"$JOBS" >"$WORK/make.log" 2>&1; then
		res=ok
	else
		res=FAILED
		fail=1
	fi
	t1=$(date +%s.%N)
	printf 'run %d: %s in %.1f s\n' "$i" "$res" "$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')"
	if [ "$res" = FAILED ]; then
		grep -m 5 -E 'Error|error:|No such file' "$WORK/make.log" | sed 's/^/    /'
		cp "$WORK/make.log" "${TMPDIR:-/tmp}/tm-parallel-build-run$i.log"
		echo "    full log: ${TMPDIR:-/tmp}/tm-parallel-build-run$i.log"
	fi
	i=$((i + 1))
done
[ "$fail" -eq 0 ] && echo "parallel_build: all $RUNS runs built" ||
	echo "parallel_build: some runs failed"
exit "$fail"
