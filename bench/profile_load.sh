#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Load time and peak memory of a 1,048,576-rank 3-D stencil profile
# (128 x 128 x 64 ranks, about 3.1 million undirected edges, bytes + msgs).
#
#   sh bench/profile_load.sh BUILDDIR
#
# Usually run as `make bench-profile-load BUILDDIR=...`. The profile is
# generated once into BUILDDIR/bench/ and reused; three loads are timed.
set -eu
B=${1:?usage: profile_load.sh BUILDDIR}

bin="$B/bench/profile_load"
prof="$B/bench/stencil3d-1M.yml"
[ -s "$prof" ] || "$bin" gen 128 128 64 "$prof"
echo "profile size: $(wc -c <"$prof") bytes"
for i in 1 2 3; do
	echo "--- run $i"
	"$bin" load "$prof"
done
