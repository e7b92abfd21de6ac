#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# in-root.sh - what CI runs inside the Debian 13 root (.ci/debian-root run),
# a copy of the checkout at /src: the same gates as on the host, against
# that release's Slurm 24.11, hwloc, Open MPI 5 and compilers.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "in-root: $(. /etc/os-release && echo "$PRETTY_NAME"), $(slurmd -V), hwloc $(pkg-config --modversion hwloc 2>/dev/null || echo '?')"
sh tests/install-deps.sh
make format-check
make lint
# The README's two commands.
make demo
make deps && make check WERROR=1
# Packages of this release, installed and tested as installed.
sh packaging/ci-deb-e2e.sh "$PWD/build/ci-deb"
