#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# peers.sh - issue 21 and 39: the default mapper against the strongest
# public process mappers, every placement scored by our own evaluator.
#
#   VIEM=PATH SHAREDMAP=PATH KAFFPA=PATH IPM=PATH sh bench/peers.sh BUILDDIR [OUT.md]
#   ONLY=lammps ...          only the cases whose name has it
#   PEERS_SIZES="128 1024"   the generated cases' sizes (default 128 1024 4096)
#   PEERS_BUDGET=5           `treematch map --budget` of the budgeted column
#   VIEM_CONFIGS="..."       VieM's configurations (below; default all eight)
#
# The peers are binaries built by hand, outside this repository, from their
# authors' repositories (bench/README.md names the commits and options);
# each is taken by path, and one not given (or not executable) is left out
# with one line saying so:
#   VIEM        VieM's `viem` (Schulz and Traeff 2017; viennamapping/VieM):
#               top-down or bottom-up construction, then local search in
#               the N_C^d neighbourhood (pairs within d hops of the
#               communication graph) or N^2 (every pair); eco and strong
#               partitioning. Every configuration of VIEM_CONFIGS runs; the
#               table keeps the best and lists them all
#   SHAREDMAP   SharedMap (Woydt et al. 2024; KaHIP/SharedMap): hierarchical
#               multisection, KaHIP's strong kaffpa at every level; strong
#               configuration, one thread
#   KAFFPA      KaHIP's kaffpa --enable_mapping (KaHIP/KaHIP): a partition
#               into one block per PE, then the quotient graph mapped onto
#               the hierarchy, blocks of exactly one rank
#   IPM         KaHIP's integrated process mapping, strongmap (Faraj et
#               al. 2020; KaHIP/IntegratedProcessMapping); it can leave two
#               ranks on one PE when there are as many ranks as PEs (see
#               to_mapping)
# VIEM_CONFIGS words are PRECONF:NEIGHBOURHOOD[:bu]: eco or strong; ncD
# (N_C^d, d hops) or nsq (N^2); bu for the bottom-up construction (default
# top-down). N^2 runs up to PEERS_NSQ_MAX ranks (1024): it tries every pair.
# Cases: the bench's patterns (stencil2d, stencil3d, cg, random, hier) in
# their order and with their ranks permuted, the generated families
# (geometric, mesh, powerlaw; bench/patterns.c), partial allocations (fewer
# ranks than leaves), and the applications recorded here (bench/profiles:
# 64 ranks on four machine trees, 32 ranks on a 3 x 2 x 6 allocation).
# Every peer reads the case as a METIS graph (bench/metis_graph.c; idle
# vertices added up to the leaves when there are fewer ranks) and a
# hierarchy with one distance per level, the hop distance of our tree
# (2 x the levels climbed); its placement is written as a mapping file of
# the real ranks and scored by `treematch eval` on the original profile, as
# ours are. Times are whole processes, wall clock, one run each (the peers
# are seeded and ours is deterministic).
set -eu

B=${1:?usage: VIEM=... SHAREDMAP=... KAFFPA=... IPM=... peers.sh BUILDDIR [OUT.md]}
OUT=${2:-$B/bench/peers.md}
S=$(cd "$(dirname "$0")/.." && pwd)
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
NSQ_MAX=${PEERS_NSQ_MAX:-1024}
VIEM_CONFIGS=${VIEM_CONFIGS:-eco:nc1 eco:nc10 eco:nsq eco:nc10:bu strong:nc1 strong:nc10 strong:nsq strong:nc10:bu}
mkdir -p "$W"
. "$S/bench/profiles.sh"
for tool in "$GEN" "$MG" "$TM"; do
	[ -x "$tool" ] || { echo "peers.sh: $tool is not built (make bench-tools)" >&2; exit 1; }
done

# The peers given, each announced once.
peers="" left=""
# peer NAME LABEL PATH: takes it when PATH is an executable
peer() {
	if [ -z "$3" ]; then
		left="$left- $2 left out: no binary given ($1=path/to/it)
"
	elif [ ! -x "$3" ]; then
		left="$left- $2 left out: $1=$3 is not an executable
"
	else
		peers="$peers $(echo "$1" | tr 'A-Z' 'a-z')"
	fi
}
VIEM=${VIEM:-} SHAREDMAP=${SHAREDMAP:-} KAFFPA=${KAFFPA:-} IPM=${IPM:-}
peer SHAREDMAP SharedMap "$SHAREDMAP"
peer KAFFPA "KaHIP map" "$KAFFPA"
peer IPM IPM "$IPM"
peer VIEM VieM "$VIEM"

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

# the leaves of a tleaf tree
leaves_of() { echo "$1" | awk '{ k = 1; for (l = 0; l < $2; l++) k *= $(3 + 2 * l); print k }'; }

# a VieM configuration word as its options and as a label
viem_opts() {
	echo "$1" | awk -F: '{
		o = "--preconfiguration_mapping=" $1
		if ($2 == "nsq") o = o " --local_search_neighborhood=nsquare"
		else o = o " --local_search_neighborhood=communication --communication_neighborhood_dist=" substr($2, 3)
		if ($3 == "bu") o = o " --construction_algorithm=hierarchybottomup"
		print o
	}'
}
viem_label() {
	echo "$1" | awk -F: '{
		l = $1 " " ($2 == "nsq" ? "N^2" : "N_C^" substr($2, 3))
		if ($3 == "bu") l = l " bottom-up"
		print l
	}'
}

# hop-bytes of MAP (one "RANK LEAF" line per rank) by our evaluator
score() { bench_hop_bytes "$TM" "$1" "$2" "$3"; }

# to_mapping RAW H N MAP: the peer's block of each vertex (line v: vertex
# v's PE) as a mapping file of the N real ranks. A partitioner may leave
# blocks holding two vertices and others empty when there are as many
# vertices as PEs (KaHIP's integrated mapping does, even with
# --imbalance=0); each vertex beyond a block's first then goes to the
# nearest empty leaf (the smallest subtree around its block that has one,
# its lowest such leaf): the least change that makes it a placement. Prints
# how many real ranks were moved so.
to_mapping() {
	awk -v h="$2" -v nreal="$3" '
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
						if (!(x in used)) { used[x] = 1; leaf[r] = x; moved += r < nreal; break }
				}
			}
			for (r = 0; r < nreal; r++) print r, leaf[r] > "/dev/stdout"
			print moved > "/dev/stderr"
		}' "$1" 2>"$4.moved" >"$4"
}

# run_peer NAME GRAPH TREE N MAPOUT [VIEM-CONFIG]: prints "SECONDS" or "fail"
run_peer() {
	_raw=$5.raw
	set -- "$@" $(peer_tree "$3")
	if [ $# -eq 7 ]; then set -- "$1" "$2" "$3" "$4" "$5" "" "$6" "$7"; fi
	_h=$7 _d=$8 _k=$(echo "$7" | tr ':' '\n' | awk 'BEGIN { k = 1 } { k *= $1 } END { print k }')
	_t0=$(now)
	case $1 in
	sharedmap) "$SHAREDMAP" -g "$2" -m "$_raw" -h "$_h" -d "$_d" -e 0.0 -c strong \
		-t 1 -s naive --seed "$SEED" >"$5.log" 2>&1 || { echo fail; return; } ;;
	kaffpa) "$KAFFPA" "$2" --k="$_k" --preconfiguration=strong --enable_mapping \
		--hierarchy_parameter_string="$_h" --distance_parameter_string="$_d" \
		--imbalance=0 --enforce_balance --seed="$SEED" \
		--output_filename="$_raw" >"$5.log" 2>&1 || { echo fail; return; } ;;
	ipm) "$IPM" "$2" --k="$_k" --hierarchy_parameter_string="$_h" \
		--distance_parameter_string="$_d" --seed="$SEED" --imbalance=0 \
		--output_filename="$_raw" >"$5.log" 2>&1 || { echo fail; return; } ;;
	viem) # shellcheck disable=SC2046 # the configuration's options are words
		"$VIEM" "$2" --hierarchy_parameter_string="$_h" \
		--distance_parameter_string="$_d" --seed="$SEED" $(viem_opts "$6") \
		--output_filename="$_raw" >"$5.log" 2>&1 || { echo fail; return; } ;;
	esac
	_t1=$(now)
	# VieM exits 0 without a mapping when it refuses its input
	[ -s "$_raw" ] || { echo fail; return; }
	to_mapping "$_raw" "$_h" "$4" "$5"
	elapsed "$_t0" "$_t1"
}

# min A B ("" for none)
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || (b != "" && b + 0 < a + 0)) ? b : a }'; }

# row NAME PROFILE TREE [BOUND]: one table row (and one of the VieM table
# in $W/viem.rows)
row() {
	_name=$1 _prof=$2 _tree=$3 _bound=${4:-}
	case $_name in *"$ONLY"*) ;; *) return 0 ;; esac
	_base=$W/$(echo "$_name" | tr ' /' '__')
	_k=$(leaves_of "$_tree")
	_graph=$_base.graph
	[ -s "$_graph" ] || "$MG" "$_prof" "$_graph" "$_k" 2>/dev/null
	_t0=$(now)
	"$TM" map -p "$_prof" -t "$_tree" >"$_base.auto.map"
	_t1=$(now)
	_n=$(wc -l <"$_base.auto.map")
	_auto=$(score "$_prof" "$_tree" "$_base.auto.map")
	_line="| $_name | $_n | $_k | $_auto | $(elapsed "$_t0" "$_t1")"
	_t0=$(now)
	"$TM" map -p "$_prof" -t "$_tree" --search-time "$BUDGET" >"$_base.budget.map"
	_t1=$(now)
	_line="$_line | $(score "$_prof" "$_tree" "$_base.budget.map") | $(elapsed "$_t0" "$_t1")"
	_best="" _vs="" _vrow="| $_name | $_auto"
	for _p in sharedmap kaffpa ipm viem; do
		case " $peers " in *" $_p "*) ;; *)
			[ "$_p" = viem ] && _line="$_line | - | - | -" || _line="$_line | - | -"
			continue ;;
		esac
		if [ "$_p" = kaffpa ] && [ "$_n" -gt "$KAFFPA_MAX" ]; then
			_line="$_line | - | -"
			continue
		fi
		if [ "$_p" = viem ]; then
			_vbest="" _vcfg="-" _vsec="-"
			for _c in $VIEM_CONFIGS; do
				case $_c in *nsq*) if [ "$_n" -gt "$NSQ_MAX" ]; then
					_vrow="$_vrow | -"
					continue
				fi ;; esac
				_m=$_base.viem-$(echo "$_c" | tr ':' '-').map
				_sec=$(run_peer viem "$_graph" "$_tree" "$_n" "$_m" "$_c")
				if [ "$_sec" = fail ]; then
					_vrow="$_vrow | failed"
					continue
				fi
				_cost=$(score "$_prof" "$_tree" "$_m")
				_vrow="$_vrow | $_cost"
				if [ -z "$_vbest" ] || awk -v a="$_cost" -v b="$_vbest" 'BEGIN { exit !(a + 0 < b + 0) }'; then
					_vbest=$_cost _vcfg=$(viem_label "$_c") _vsec=$_sec
				fi
			done
			_line="$_line | ${_vbest:--} | $_vcfg | $_vsec"
			_best=$(min "$_best" "$_vbest")
			_vs=$(min "$_vs" "$_vbest")
			continue
		fi
		_sec=$(run_peer "$_p" "$_graph" "$_tree" "$_n" "$_base.$_p.map")
		if [ "$_sec" = fail ]; then
			_line="$_line | failed ($(tail -n 1 "$_base.$_p.map.log" | cut -c1-60)) | -"
			continue
		fi
		_cost=$(score "$_prof" "$_tree" "$_base.$_p.map")
		_moved=$(cat "$_base.$_p.map.moved")
		[ "$_moved" = 0 ] || _cost="$_cost ($_moved moved)"
		_line="$_line | $_cost | $_sec"
		_best=$(min "$_best" "${_cost%% *}")
		[ "$_p" != sharedmap ] || _vs=$(min "$_vs" "${_cost%% *}")
	done
	_r1=- _r2=-
	[ -z "$_vs" ] || _r1=$(awk -v a="$_auto" -v b="$_vs" 'BEGIN { printf "%.4f", a / b }')
	[ -z "$_best" ] || _r2=$(awk -v a="$_auto" -v b="$_best" 'BEGIN { printf "%.4f", a / b }')
	[ -n "$_bound" ] || _bound=-
	echo "$_line | $_r1 | $_r2 | $_bound |"
	case " $peers " in *" viem "*) echo "$_vrow |" >>"$W/viem.rows" ;; esac
}

# gen_row PATTERN N PERMUTED [LEAVES]: one generated case on the reference
# tree of LEAVES (default N) leaves
gen_row() {
	_tree=$("$GEN" --tree "${4:-$2}")
	_bound=
	case $1 in stencil*) [ -n "${4:-}" ] ||
		_bound=$("$GEN" --bound "$1" "$2" $(echo "$_tree" |
			awk '{ for (l = 0; l < $2; l++) printf " %s", $(3 + 2 * l) }')) ;;
	esac
	_label="$1 $2"
	[ "$3" = 0 ] || _label="$_label perm"
	[ -z "${4:-}" ] || _label="$_label on $4"
	row "$_label" "$(bench_mtx "$GEN" "$W" "$1" "$3" "$2")" "$_tree" "$_bound"
}

# 128 and 1024 ranks: every pattern, in order and permuted (dense hier at
# 128 only: 523,776 pairs at 1024 take the peers minutes), and partial
# allocations (fewer ranks than leaves); 4096: the sparse ones whose
# numbering carries no help (permuted or random).
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
			p=$((n - n / 16))
			for pat in stencil3d random geometric; do gen_row "$pat" "$p" 1 "$n"; done
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
		row "$app, 6 nodes x 2 x 6" "$prof" "tleaf 3 6 1 2 1 6 1"
	done
	for prof in "$S"/bench/profiles/32/*.yml; do
		[ -f "$prof" ] || continue
		app=$(basename "$prof" .yml)
		row "$app 32, 3 nodes x 2 x 6" "$prof" "tleaf 3 3 1 2 1 6 1"
		row "$app 32, 2 nodes x 2 x 8" "$prof" "tleaf 3 2 1 2 1 8 1"
	done
}

# The summary of a table this script wrote: how often ours is at or below
# the better of VieM and SharedMap and below the best peer, the geometric
# means against each peer and each VieM configuration, what --budget adds.
summary() {
	awk -v cfgs="$VIEM_CONFIGS" 'BEGIN { FS = " *\\| *"; print ""; print "## Summary"; print "" }
	/^\| / && $2 != "case" && $2 !~ /^-/ && NF == 21 {
		ours = $5 + 0; budget = $7 + 0
		if ($18 != "-") {
			nv++; r = $18 + 0; lv += log(r); if (r <= 1.00005) okv++
			if (r > worstv) { worstv = r; wvcase = $2 }
		}
		if ($19 != "-") {
			nr++; r = $19 + 0; lr += log(r); if (r <= 1.00005) ok++
			if (r > worst) { worst = r; wcase = $2 }
		}
		for (c = 9; c <= 15; c += 2)
			if ($c != "-" && $c !~ /failed/) {
				split($c, v, " "); p = v[1] + 0
				if (p > 0) { n[c]++; l[c] += log(ours / p) }
			}
		if (budget > 0) { nb++; lb += log(budget / ours); if (budget < ours * 0.99995) better++ }
		if ($20 != "-" && $20 != "") { ns++; b = ours / ($20 + 0); if (b > wb) wb = b }
	}
	/^\| / && $2 != "case" && $2 !~ /^-/ && NF != 21 {
		# the VieM configurations table: case, ours, one cost per configuration
		ours = $3 + 0
		for (c = 4; c < NF; c++)
			if ($c != "-" && $c != "failed" && $c + 0 > 0) {
				vn[c]++; vl[c] += log(ours / ($c + 0)); if ($c + 0 < ours * 0.99995) vb[c]++
			}
	}
	END {
		if (!nr) { print "- no peer ran"; exit }
		if (nv) {
			printf "- ours at or below the better of VieM and SharedMap: %d of %d cases\n", okv, nv
			printf "- ours / the better of VieM and SharedMap: geometric mean %.4f, worst %.4f (%s)\n", exp(lv / nv), worstv, wvcase
		}
		printf "- ours at or below the best peer: %d of %d cases\n", ok, nr
		printf "- ours / best peer: geometric mean %.4f, worst %.4f (%s)\n", exp(lr / nr), worst, wcase
		split("SharedMap, KaHIP map, IPM, VieM (best configuration)", name, ", ")
		for (c = 9; c <= 15; c += 2)
			if (n[c]) printf "- ours / %s: geometric mean %.4f over %d cases\n", name[(c - 7) / 2], exp(l[c] / n[c]), n[c]
		nc = split(cfgs, cfg, " ")
		for (c = 4; c < 4 + nc; c++)
			if (vn[c]) printf "- ours / VieM %s: geometric mean %.4f over %d cases, VieM below ours on %d\n", cfg[c - 3], exp(vl[c] / vn[c]), vn[c], vb[c]
		if (nb) printf "- auto --budget / auto: geometric mean %.4f, lower on %d of %d cases\n", exp(lb / nb), better, nb
		if (ns) printf "- stencils: ours / lower bound at most %.4f (%d cases)\n", wb, ns
	}' "$1"
}

start=$(now)
: >"$W/viem.rows"
{
	echo "# Default mapper against the public process mappers"
	echo
	echo "Produced by \`sh bench/peers.sh\` (\`make bench-peers\`) on $(date -u '+%Y-%m-%d %H:%M UTC')" \
		"($(nproc) CPUs, load at start $(cut -d' ' -f1-3 /proc/loadavg))."
	echo "Hop-bytes by our evaluator (\`treematch eval\`) on the original profile;"
	echo "times in seconds, whole process, wall clock; VieM: the best of its"
	echo "configurations (all of them in the second table), its time that run's;"
	echo "vs VieM+SM = ours / the better of VieM and SharedMap, vs best = ours /"
	echo "the best peer (<= 1: at or below); bound: a proven lower bound (stencils)."
	echo
	[ -z "$left" ] || printf '%s\n' "$left"
	echo "| case | ranks | leaves | ours (auto) | s | auto --budget $BUDGET | s | SharedMap | s | KaHIP map | s | IPM strong | s | VieM | configuration | s | vs VieM+SM | vs best | bound |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	synthetic
	recorded
	echo
	echo "Total: $(elapsed "$start" "$(now)") s."
	if [ -s "$W/viem.rows" ]; then
		echo
		echo "### VieM, every configuration"
		echo
		printf '| case | ours (auto)'
		for c in $VIEM_CONFIGS; do printf ' | %s' "$(viem_label "$c")"; done
		echo " |"
		printf '|---|---'
		for c in $VIEM_CONFIGS; do printf '|---'; done
		echo "|"
		cat "$W/viem.rows"
	fi
} | tee "$OUT"
summary "$OUT" | tee -a "$OUT"
