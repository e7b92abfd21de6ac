#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# node_time.sh - issue 21's node-size target: the default mapper (auto) on
# cases of at most 256 ranks, as a whole `treematch map` process (start,
# reading the profile, mapping, printing), against 50 ms.
#   - bench/gen's patterns at 64, 128 and 256 ranks, in order and permuted,
#     on one node of 2 sockets x 2, 4 or 8 groups x 16 cores;
#   - the applications recorded here (bench/profiles, 64 ranks) on a node of
#     2 x 2 x 16 and of 2 x 2 x 4 L3 x 4.
# Wall time from date +%N around each run, median of REPS; the hop-bytes of
# the placement from `treematch eval` (the same run each time: auto is
# deterministic).
#
#   sh bench/node_time.sh BUILDDIR [REPS] [OUT.md]     (make bench-node)
set -eu

B=${1:?usage: node_time.sh BUILDDIR [REPS] [OUT.md]}
REPS=${2:-5}
OUT=${3:-$(dirname "$0")/results/node-time.md}
SRC=$(cd "$(dirname "$0")/.." && pwd)
GEN=$B/bench/gen
TM=$B/bin/treematch
W=$B/bench/work-node
LIMIT_MS=50
mkdir -p "$W" "$(dirname "$OUT")"
. "$(dirname "$0")/profiles.sh"
for tool in "$GEN" "$TM"; do
	[ -x "$tool" ] || { echo "node_time.sh: $tool is not built (make bench-tools all)" >&2; exit 1; }
done

over=0
total=0
# row LABEL PROFILE TREE: one table row, the median of REPS whole runs
row() {
	_i=0
	: >"$W/times"
	while [ "$_i" -lt "$REPS" ]; do
		_t0=$(date +%s%N)
		"$TM" map -p "$2" -t "$3" >"$W/map.out"
		_t1=$(date +%s%N)
		echo $(((_t1 - _t0) / 1000)) >>"$W/times"
		_i=$((_i + 1))
	done
	_us=$(sort -n "$W/times" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	_hb=$(bench_hop_bytes "$TM" "$2" "$3" "$W/map.out")
	_ms=$(awk -v u="$_us" 'BEGIN { printf "%.1f", u / 1000 }')
	_mark=
	if [ "$_us" -gt $((LIMIT_MS * 1000)) ]; then
		_mark=" over"
		over=$((over + 1))
	fi
	total=$((total + 1))
	echo "| $1 | $3 | $_ms$_mark | $_hb |"
}

{
	echo "<!-- SPDX-License-Identifier: BSD-3-Clause -->"
	echo "# The default mapper on node-size cases (issue 21: <= 256 ranks, < $LIMIT_MS ms)"
	echo
	echo "    make bench-node      # sh bench/node_time.sh BUILDDIR [REPS] [OUT.md]"
	echo
	echo "Whole \`treematch map\` processes (auto), wall time, median of $REPS runs;"
	echo "hop-bytes of the placement from \`treematch eval\`. $(date -u +%Y-%m-%d),"
	echo "$(nproc) cores, $(uname -m)."
	echo
	echo "| case | tree | ms | hop-bytes |"
	echo "|---|---|---|---|"
	for n in 64 128 256; do
		tree="tleaf 3 2 1 $((n / 32)) 1 16 1"
		for pat in stencil2d stencil3d cg hier random geometric mesh powerlaw; do
			f=$W/$pat-$n.mtx
			[ -s "$f" ] || "$GEN" "$pat" "$n" -o "$f"
			row "$pat $n" "$f" "$tree"
			f=$W/$pat-$n-perm.mtx
			[ -s "$f" ] || "$GEN" "$pat" "$n" --permute 7 -o "$f"
			row "$pat $n perm" "$f" "$tree"
		done
	done
	for p in "$SRC"/bench/profiles/*.yml; do
		app=$(basename "$p" .yml)
		row "$app 64" "$p" "tleaf 3 2 1 2 1 16 1"
		row "$app 64" "$p" "tleaf 4 2 1 2 1 4 1 4 1"
	done
	echo
	echo "$over of $total cases over $LIMIT_MS ms."
} | tee "$OUT"
