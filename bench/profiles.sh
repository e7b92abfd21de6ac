# SPDX-License-Identifier: BSD-3-Clause
#
# profiles.sh - sourced by the bench scripts: one benchmark pattern as a
# .mtx file, with the seeds bench.c uses (pattern seed 42, permutation seed
# 42 + 1000003 x ranks), written once; a placement's hop-bytes by our
# evaluator.
#
#   mtx=$(bench_mtx GEN WORKDIR PATTERN PERMUTED N)   # PERMUTED: 0 or 1
#   hb=$(bench_hop_bytes TREEMATCH PROFILE TREE MAPPING [ALLOWED_FILE])

bench_mtx() {
	_gen=$1 _work=$2 _pat=$3 _perm=$4 _n=$5
	if [ "$_perm" = 1 ]; then
		_mtx=$_work/$_pat-perm-$_n.mtx
		[ -s "$_mtx" ] ||
			"$_gen" "$_pat" "$_n" --seed 42 --permute $((1000003 * _n + 42)) -o "$_mtx" >&2
	else
		_mtx=$_work/$_pat-$_n.mtx
		[ -s "$_mtx" ] || "$_gen" "$_pat" "$_n" --seed 42 -o "$_mtx" >&2
	fi
	echo "$_mtx"
}

bench_hop_bytes() {
	"$1" eval -p "$2" -t "$3" --mapping "$4" ${5:+--allowed "@$5"} |
		awk '$1 == "hop_bytes" { print $2 }'
}
