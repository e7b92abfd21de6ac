#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# peers.sh - issue 21: the default mapper against the strongest public
# process mappers, every placement scored by our own evaluator.
#
#   sh bench/peers.sh BUILDDIR [OUT.md]
#   ONLY=lammps ...          only the cases whose name has it
#   PEERS_SIZES="128 1024"   the generated cases' sizes (default 128 1024 4096)
#   PEERS_BUDGET=5           `treematch map --budget` of the budgeted column
#
# Peers (built by bench/peers_build.sh, which `make bench-peers` runs first;
# a peer whose binary is not there is left out with one line saying why):
#   SharedMap   Woydt et al. 2024: hierarchical multisection, KaHIP's strong
#               kaffpa at every level; strong configuration, one thread
#   KaHIP map   kaffpa --preconfiguration=strong --enable_mapping
#               --enforce_balance: KaHIP's partition-then-map of the quotient
#               graph onto the hierarchy, blocks of exactly one rank
#   IPM         KaHIP's integrated process mapping (Faraj et al. 2020, the
#               VieM line: multilevel, multisection start, N_C local search),
#               strongmap; it can leave two ranks on one PE when there are as
#               many ranks as PEs (see to_mapping)
#   VieM        $VIEM (its `viem` executable), when given: no source of it
#               is at hand here
# Cases: the bench's patterns (stencil2d, stencil3d, cg, random, hier) in
# their order and with their ranks permuted, the generated families
# (geometric, mesh, powerlaw; bench/patterns.c), and the applications
# recorded here (bench/profiles/*.yml, 64 ranks) on three machine trees.
# Every peer reads the case as a METIS graph (bench/metis_graph.c) and a
# hierarchy with one distance per level, the hop distance of our tree
# (2 x the levels climbed); its placement is written as a mapping file and
# scored by `treematch eval` on the original profile, as ours are.
# Times are whole processes, wall clock, one run each (the peers are seeded
# and ours is deterministic).
set -eu

B=${1:?usage: peers.sh BUILDDIR [OUT.md]}
OUT=${2:-$B/bench/peers.md}
S=$(cd "$(dirname "$0")/.." && pwd)
PEERS=${PEERS:-$B/peers}
GEN=$B/bench/gen
MG=$B/bench/metis_graph
TM=$B/bin/treematch
W=$B/bench/work-peers
SIZES=${PEERS_SIZES:-128 1024 4096}
SEED=${PEERS_SEED:-1}
ONLY=${ONLY:-} # only the cases whose name has it
BUDGET=${PEERS_BUDGET:-5} # seconds of search for the budgeted column
# kaffpa's mapping takes 50-160 s at 1024 ranks here, far behind the
# others: not run above this many ranks
KAFFPA_MAX=${PEERS_KAFFPA_MAX:-128}
mkdir -p "$W"
. "$S/bench/profiles.sh"
for tool in "$GEN" "$MG" "$TM"; do
	[ -x "$tool" ] || { echo "peers.sh: $tool is not built (make bench-tools)" >&2; exit 1; }
done

# The peers there are, each announced once.
SHAREDMAP=$PEERS/sharedmap/bin/SharedMap
KAFFPA=$PEERS/kahip/bin/kaffpa
IPM=$PEERS/ipm/bin/strongmap
VIEM=${VIEM:-}
peers="" left=""
if [ -x "$SHAREDMAP" ]; then peers="$peers sharedmap"; else
	left="$left- SharedMap left out: $SHAREDMAP not built (bench/peers_build.sh)
"; fi
if [ -x "$KAFFPA" ]; then peers="$peers kaffpa"; else
	left="$left- KaHIP left out: $KAFFPA not built (bench/peers_build.sh)
"; fi
if [ -x "$IPM" ]; then peers="$peers ipm"; else
	left="$left- IPM left out: $IPM not built (bench/peers_build.sh)
"; fi
if [ -n "$VIEM" ] && [ -x "$VIEM" ]; then peers="$peers viem"; else
	left="$left- VieM left out: no VieM source or binary here (VIEM=path/to/viem to add it)
"; fi

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# "tleaf D a0 c0 a1 c1 ..." -> the peers' hierarchy (leaves up, levels of
# arity 1 dropped) and distances (2 x levels climbed), as "H D".
peer_tree() {
	echo "$1" | awk '{
		d = $2; h = ""; dist = ""
		for (l = d - 1; l >= 0; l--) {
			a = $(3 + 2 * l)
			if (a == 1) continue
			h = h (h == "" ? "" : ":") a
			dist = dist (dist == "" ? "" : ":") 2 * (d - l)
		}
		print h, dist
	}'
}

# hop-bytes of MAP (one "RANK LEAF" line per rank) by our evaluator
score() { bench_hop_bytes "$TM" "$1" "$2" "$3"; }

# to_mapping RAW H MAP: the peer's block of each rank (line r: rank r's PE)
# as a mapping file. A partitioner may leave blocks holding two ranks and
# others empty when there are as many ranks as PEs (KaHIP's integrated
# mapping does, even with --imbalance=0); each rank beyond a block's first
# then goes to the nearest empty leaf (the smallest subtree around its block
# that has one, its lowest such leaf): the least change that makes it a
# placement. Prints how many ranks were moved so.
to_mapping() {
	awk -v h="$2" '
		BEGIN { nl = split(h, a, ":"); span[0] = 1
			for (l = 1; l <= nl; l++) span[l] = span[l - 1] * a[l]
			k = span[nl] }
		{ blk[NR - 1] = $1; n = NR }
		END {
			moved = 0
			for (r = 0; r < n; r++) {
				b = blk[r]
				if (!(b in used)) { used[b] = 1; leaf[r] = b; continue }
				leaf[r] = -1
			}
			for (r = 0; r < n; r++) {
				if (leaf[r] >= 0) continue
				b = blk[r]
				for (l = 1; l <= nl && leaf[r] < 0; l++) {
					base = int(b / span[l]) * span[l]
					for (x = base; x < base + span[l]; x++)
						if (!(x in used)) { used[x] = 1; leaf[r] = x; moved++; break }
				}
			}
			for (r = 0; r < n; r++) print r, leaf[r] > "/dev/stdout"
			print moved > "/dev/stderr"
		}' "$1" 2>"$3.moved" >"$3"
	cat "$3.moved"
}

# run_peer NAME PROFILE GRAPH TREE MAPOUT: prints "SECONDS" or "fail"
run_peer() {
	_raw=$5.raw
	set -- "$@" $(peer_tree "$4")
	_h=$6 _d=$7 _k=$(echo "$6" | tr ':' '\n' | awk 'BEGIN { k = 1 } { k *= $1 } END { print k }')
	_t0=$(now)
	case $1 in
	sharedmap) "$SHAREDMAP" -g "$3" -m "$_raw" -h "$_h" -d "$_d" -e 0.0 -c strong \
		-t 1 -s naive --seed "$SEED" >"$5.log" 2>&1 || { echo fail; return; } ;;
	kaffpa) "$KAFFPA" "$3" --k="$_k" --preconfiguration=strong --enable_mapping \
		--hierarchy_parameter_string="$_h" --distance_parameter_string="$_d" \
		--imbalance=0 --enforce_balance --seed="$SEED" \
		--output_filename="$_raw" >"$5.log" 2>&1 || { echo fail; return; } ;;
	ipm) "$IPM" "$3" --k="$_k" --hierarchy_parameter_string="$_h" \
		--distance_parameter_string="$_d" --seed="$SEED" --imbalance=0 \
		--output_filename="$_raw" >"$5.log" 2>&1 || { echo fail; return; } ;;
	viem) "$VIEM" "$3" --hierarchy_parameter_string="$_h" \
		--distance_parameter_string="$_d" --seed="$SEED" \
		--output_filename="$_raw" >"$5.log" 2>&1 || { echo fail; return; } ;;
	esac
	_t1=$(now)
	to_mapping "$_raw" "$_h" "$5" >/dev/null
	elapsed "$_t0" "$_t1"
}

# case NAME PROFILE TREE [BOUND]: one table row
row() {
	_name=$1 _prof=$2 _tree=$3 _bound=${4:-}
	case $_name in *"$ONLY"*) ;; *) return 0 ;; esac
	_base=$W/$(echo "$_name" | tr ' /' '__')
	_graph=$_base.graph
	[ -s "$_graph" ] || "$MG" "$_prof" "$_graph" 2>/dev/null
	_n=$(head -n 1 "$_graph" | awk '{ print $1 }')
	_t0=$(now)
	"$TM" map -p "$_prof" -t "$_tree" >"$_base.auto.map"
	_t1=$(now)
	_auto=$(score "$_prof" "$_tree" "$_base.auto.map")
	_line="| $_name | $_n | $_auto | $(elapsed "$_t0" "$_t1")"
	_t0=$(now)
	"$TM" map -p "$_prof" -t "$_tree" --budget "$BUDGET" >"$_base.budget.map"
	_t1=$(now)
	_line="$_line | $(score "$_prof" "$_tree" "$_base.budget.map") | $(elapsed "$_t0" "$_t1")"
	_best=""
	for _p in sharedmap kaffpa ipm viem; do
		case " $peers " in *" $_p "*) ;; *) _line="$_line | - | -"; continue ;; esac
		if [ "$_p" = kaffpa ] && [ "$_n" -gt "$KAFFPA_MAX" ]; then
			_line="$_line | - | -"
			continue
		fi
		_sec=$(run_peer "$_p" "$_prof" "$_graph" "$_tree" "$_base.$_p.map")
		if [ "$_sec" = fail ]; then
			_line="$_line | failed ($(tail -n 1 "$_base.$_p.map.log" | cut -c1-60)) | -"
			continue
		fi
		_cost=$(score "$_prof" "$_tree" "$_base.$_p.map")
		_moved=$(cat "$_base.$_p.map.moved")
		[ "$_moved" = 0 ] || _cost="$_cost ($_moved moved)"
		_line="$_line | $_cost | $_sec"
		_best=$(awk -v a="$_best" -v b="${_cost%% *}" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
	done
	_ratio=-
	[ -z "$_best" ] || _ratio=$(awk -v a="$_auto" -v b="$_best" 'BEGIN { printf "%.4f", a / b }')
	[ -n "$_bound" ] || _bound=-
	echo "$_line | $_ratio | $_bound |"
}

# case PATTERN N PERMUTED: one generated case on the reference tree
gen_row() {
	_tree=$("$GEN" --tree "$2")
	_bound=
	case $1 in stencil*)
		_bound=$("$GEN" --bound "$1" "$2" $(echo "$_tree" |
			awk '{ for (l = 0; l < $2; l++) printf " %s", $(3 + 2 * l) }')) ;;
	esac
	_label="$1 $2"
	[ "$3" = 0 ] || _label="$_label perm"
	row "$_label" "$(bench_mtx "$GEN" "$W" "$1" "$3" "$2")" "$_tree" "$_bound"
}

# 128 and 1024 ranks: every pattern, in order and permuted (dense hier at
# 128 only: 523,776 pairs at 1024 take the peers minutes); 4096: the
# sparse ones whose numbering carries no help (permuted or random).
synthetic() {
	for n in $SIZES; do
		if [ "$n" -le 1024 ]; then
			for pat in stencil2d stencil3d cg mesh; do
				gen_row "$pat" "$n" 0
				gen_row "$pat" "$n" 1
			done
			gen_row random "$n" 0
			gen_row geometric "$n" 0
			gen_row powerlaw "$n" 0
			[ "$n" -gt 128 ] || { gen_row hier "$n" 0; gen_row hier "$n" 1; }
		else
			for pat in stencil3d cg mesh; do gen_row "$pat" "$n" 1; done
			for pat in random geometric powerlaw; do gen_row "$pat" "$n" 0; done
		fi
	done
}

recorded() {
	for prof in "$S"/bench/profiles/*.yml; do
		app=$(basename "$prof" .yml)
		row "$app, 8 nodes x 2 x 4" "$prof" "tleaf 3 8 1 2 1 4 1"
		row "$app, 2 nodes x 2 x 16" "$prof" "tleaf 3 2 1 2 1 16 1"
		row "$app, 2 x 2 x 4 L3 x 4" "$prof" "tleaf 4 2 1 2 1 4 1 4 1"
	done
}

# The summary of a table this script wrote: how often ours is at or below
# the best peer, the geometric means against each peer, what --budget adds.
summary() {
	awk 'BEGIN { FS = " *\\| *"; print ""; print "## Summary"; print "" }
	/^\| / && $2 != "case" && $2 !~ /^-/ {
		ours = $4 + 0; budget = $6 + 0
		if ($16 != "-") {
			nr++; r = $16 + 0; lr += log(r); if (r <= 1.00005) ok++
			if (r > worst) { worst = r; wcase = $2 }
		}
		for (c = 8; c <= 14; c += 2)
			if ($c != "-" && $c !~ /failed/) {
				split($c, v, " "); p = v[1] + 0
				if (p > 0) { n[c]++; l[c] += log(ours / p) }
			}
		if (budget > 0) { nb++; lb += log(budget / ours); if (budget < ours * 0.99995) better++ }
		if ($17 != "-" && $17 != "") { ns++; b = ours / ($17 + 0); if (b > wb) wb = b }
	}
	END {
		if (!nr) { print "- no peer ran"; exit }
		printf "- ours at or below the best peer: %d of %d cases\n", ok, nr
		printf "- ours / best peer: geometric mean %.4f, worst %.4f (%s)\n", exp(lr / nr), worst, wcase
		split("SharedMap, KaHIP map, IPM, VieM", name, ", ")
		for (c = 8; c <= 14; c += 2)
			if (n[c]) printf "- ours / %s: geometric mean %.4f over %d cases\n", name[(c - 6) / 2], exp(l[c] / n[c]), n[c]
		if (nb) printf "- auto --budget / auto: geometric mean %.4f, lower on %d of %d cases\n", exp(lb / nb), better, nb
		if (ns) printf "- stencils: ours / lower bound at most %.4f (%d cases)\n", wb, ns
	}' "$1"
}

start=$(now)
{
	echo "# Default mapper against the public process mappers"
	echo
	echo "Produced by \`make bench-peers\` on $(date -u '+%Y-%m-%d %H:%M UTC')" \
		"($(nproc) CPUs, load at start $(cut -d' ' -f1-3 /proc/loadavg))."
	echo "Hop-bytes by our evaluator (\`treematch eval\`) on the original profile;"
	echo "times in seconds, whole process, wall clock; ratio = ours / best peer"
	echo "(<= 1: at or below every peer); bound: a proven lower bound (stencils)."
	echo
	[ -z "$left" ] || printf '%s\n' "$left"
	echo "| case | ranks | ours (auto) | s | auto --budget $BUDGET | s | SharedMap | s | KaHIP map | s | IPM strong | s | VieM | s | ratio | bound |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	synthetic
	recorded
	echo
	echo "Total: $(elapsed "$start" "$(now)") s."
} | tee "$OUT"
summary "$OUT" | tee -a "$OUT"
