#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# headroom.sh - issue 3: how much better than the default mapper can a
# placement be? On a sample of the benchmark's cases (every pattern family,
# the reference tree, odd shapes, a partial allocation, ordered and
# permuted), bench/anneal runs a long simulated annealing (tens of millions
# of moves, seconds to a minute each) starting from the default mapper's
# placement; both placements are scored by `treematch eval`.
#
#   sh bench/headroom.sh BUILDDIR [OUT.md]
#
# Needs $BUILDDIR/bench/gen, $BUILDDIR/bench/anneal and $BUILDDIR/bin/treematch
# (make bench-tools builds them). About 4 minutes on one core.
set -eu

B=${1:?usage: headroom.sh BUILDDIR [OUT.md]}
OUT=${2:-$B/bench/headroom-results.md}
GEN=$B/bench/gen
ANNEAL=$B/bench/anneal
TM=$B/bin/treematch
WORK=$B/bench/work-headroom
mkdir -p "$WORK"
. "$(dirname "$0")/profiles.sh"
for tool in "$GEN" "$ANNEAL" "$TM"; do
	[ -x "$tool" ] || { echo "headroom.sh: $tool is not built (run make bench-tools)" >&2; exit 1; }
done

# The partial allocation of the bench: 4 x 16 x 2 x 4 cores, 6 of every 8 used.
PARTIAL=$WORK/allowed-6-of-8-cores.txt
awk 'BEGIN { for (l = 0; l < 512; l++) if (l % 8 != 3 && l % 8 != 7) print l }' > "$PARTIAL"

{
	echo "# Headroom: the default mapper against a long annealing"
	echo
	echo "Produced by \`make bench-headroom BUILDDIR=$B\` (\`sh bench/headroom.sh\`) on" \
		"$(date -u '+%Y-%m-%d %H:%M UTC'), load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "bench/anneal starts from the default mapper's placement and runs simulated"
	echo "annealing on the tree's hop-bytes (swaps and moves of a rank near one of"
	echo "its neighbours, Metropolis acceptance, temperature from the median pair"
	echo "weight down to a thousandth of it). Both placements are scored by"
	echo "\`treematch eval\`. annealed / default is how much a search thousands of"
	echo "times longer than the default mapper still finds: the room left for any"
	echo "mapper on that case, as far as search can tell."
	echo
	echo "| machine | pattern | ranks | default hop-bytes | default time | annealed hop-bytes | annealed / default | moves | annealing time |"
	echo "|---|---|---|---|---|---|---|---|---|"
} > "$OUT"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

run() { # label tree pattern permute(0/1) ranks [moves] [allowed-file]
	label=$1 tree=$2 pat=$3 perm=$4 n=$5 moves=${6:-} allowed=${7:-}
	name=$pat
	[ "$perm" = 1 ] && name="$pat (perm)"
	mtx=$(bench_mtx "$GEN" "$WORK" "$pat" "$perm" "$n")
	t0=$(now)
	"$TM" map --profile "$mtx" --topology "$tree" ${allowed:+--allowed "@$allowed"} \
		> "$WORK/default.map"
	t1=$(now)
	"$ANNEAL" --topology "$tree" --profile "$mtx" ${allowed:+--allowed "@$allowed"} \
		${moves:+--moves "$moves"} -o "$WORK/annealed.map" > "$WORK/anneal.out"
	t2=$(now)
	d=$(bench_hop_bytes "$TM" "$mtx" "$tree" "$WORK/default.map" "$allowed")
	a=$(bench_hop_bytes "$TM" "$mtx" "$tree" "$WORK/annealed.map" "$allowed")
	m=$(awk '$1 == "moves" { print $2 }' "$WORK/anneal.out")
	awk -v l="$label" -v p="$name" -v n="$n" -v d="$d" -v a="$a" -v m="$m" \
		-v td="$(elapsed "$t0" "$t1")" -v ta="$(elapsed "$t1" "$t2")" 'BEGIN {
		printf "| %s | %s | %d | %.6g | %.3f s | %.6g | %.4f | %.3g | %.0f s |\n",
		       l, p, n, d, td, a, a / d, m, ta
	}' >> "$OUT"
	echo "headroom.sh: $label $name $n: default $d, annealed $a" >&2
}

REF256="tleaf 4 2 1 16 1 2 1 4 1"
REF1024="tleaf 4 8 1 16 1 2 1 4 1"
run reference "$REF1024" stencil2d 1 1024
run reference "$REF1024" stencil3d 1 1024
run reference "$REF1024" cg 1 1024
run reference "$REF1024" random 0 1024
run reference "$REF256" hier 1 256 1500000
run "a3: 3^6" "tleaf 6 3 1 3 1 3 1 3 1 3 1 3 1" stencil2d 1 729
run "a5: 5^4" "tleaf 4 5 1 5 1 5 1 5 1" stencil3d 0 625
run "a5: 5^4" "tleaf 4 5 1 5 1 5 1 5 1" hier 1 625 1000000
run "a6: 6^4" "tleaf 4 6 1 6 1 6 1 6 1" stencil3d 1 1296
run "a10: 10^3" "tleaf 3 10 1 10 1 10 1" random 0 1000
run "3x10x2x14" "tleaf 4 3 1 10 1 2 1 14 1" cg 1 512
run "3x10x2x14" "tleaf 4 3 1 10 1 2 1 14 1" random 0 840
run "4x16x2x4 6-of-8-cores" "tleaf 4 4 1 16 1 2 1 4 1" stencil3d 0 384 "" "$PARTIAL"
run "4x16x2x4 6-of-8-cores" "tleaf 4 4 1 16 1 2 1 4 1" random 0 384 "" "$PARTIAL"

awk -F'|' '/^\| [^-m]/ && $8 + 0 > 0 { s += log($8); c++; if ($8 < w || !w) w = $8 }
	END { printf "\nOver %d cases: annealed / default %.4f on average (geometric), best %.4f.\n", c, exp(s / c), w }' \
	"$OUT" >> "$OUT"
cat "$OUT"
