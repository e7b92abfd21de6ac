#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# in-root.sh - what CI runs inside a Debian root (.ci/debian-root run: trixie,
# forky), a copy of the checkout at /src: the same gates as on the host,
# against that release's Slurm (24.11, 26.05), hwloc, Open MPI (5, 6) and
# compilers. Each step's time is printed, to see where the minutes go.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "in-root: $(. /etc/os-release && echo "$PRETTY_NAME"), $(slurmd -V), hwloc $(pkg-config --modversion hwloc 2>/dev/null || echo '?')"
T0=$(date +%s)
# Both roots build in /src and share the host's network: without a salt
# their clusters take the same ports and bridge (tests/e2e/cluster.sh).
TMATCH_CLUSTER_SALT=$(. /etc/os-release && echo "${VERSION_CODENAME:-$ID}")
export TMATCH_CLUSTER_SALT
step() { echo "in-root: $1 done after $(($(date +%s) - T0)) s"; }
sh tests/install-deps.sh
step install-deps
make format-check
make lint
step "format-check, lint"
# The README's two commands.
make demo
step demo
make deps && make check WERROR=1
step "make check"
# Packages of this release, installed and tested as installed.
sh packaging/ci-deb-e2e.sh "$PWD/build/ci-deb"
step packages
