# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=sh disable=SC2034 # sets variables for the script that sources it
#
# predict_cluster.sh - sourced by bench/predict.sh and bench/predict_repeat.sh:
# the modelled cluster their recordings are replayed on, and the inputs of
# the applications they share. With W (the work directory), NP, NODES and
# CORES set, writes W/topology.conf (2 leaf switches x NODES nodes under one
# top switch), W/full.machine (uplinks 1:1: each switch's uplink carries all
# its nodes' 12.5 GB/s links) and W/over.machine (4:1 oversubscribed), sets
# nnodes, topo (the nodes as 2 sockets x CORES cores) and P x Q = NP (the
# process grid of HPCC and ScaLAPACK: P <= Q, P as large as can be), and
# defines
#   want NAME           whether ONLY (unset: everything) selects the application
#   ratio FILE [DIGITS] packed / auto of a prediction's output (2 digits)
#   lu_input DIR        DIR/LU.dat: ScaLAPACK's LU test, N = 1600, on P x Q

nnodes=$((2 * NODES))
{
	echo "SwitchName=s0 Nodes=n[1-$NODES]"
	echo "SwitchName=s1 Nodes=n[$((NODES + 1))-$nnodes]"
	echo "SwitchName=top Switches=s[0-1]"
} >"$W/topology.conf"
topo="cluster:$W/topology.conf,n[1-$nnodes],synthetic:pack:2 core:$CORES pu:1"
awk -v n="$NODES" 'BEGIN { printf "node = 12.5GBps 1us\nswitch = %gGBps 2us\n", 12.5 * n }' \
	>"$W/full.machine"
awk -v n="$NODES" 'BEGIN { printf "node = 12.5GBps 1us\nswitch = %gGBps 2us\n", 12.5 * n / 4 }' \
	>"$W/over.machine"
P=1
while [ $((P * 2 * P * 2)) -le "$NP" ] && [ $((NP % (P * 2))) -eq 0 ]; do P=$((P * 2)); done
Q=$((NP / P))

want() { case $1 in *"${ONLY:-}"*) return 0 ;; *) return 1 ;; esac; }

ratio() {
	awk -v d="${2:-2}" '$1 == "packed" { p = $2 } $1 == "auto" { a = $2 }
		END { if (a > 0) printf "%.*f", d, p / a }' "$1"
}

lu_input() {
	printf "'ScaLAPACK LU'\n'treematch'\n'LU.out'\n6\n1\n1600\n1600\n1\n32\n1\n1\n1\n1\n1\n%d\n%d\n1.0\nF\n" \
		"$P" "$Q" >"$1/LU.dat"
}
