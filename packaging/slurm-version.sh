#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# slurm-version.sh - the Slurm release the plugin is built against, read
# from the slurm_version.h the compiler finds, with the Makefile's rule
# (SLURM_PREFIX, else pkg-config's slurm, else the system's; CC, CPPFLAGS
# as given), so packages are tied to it without a
# version typed by hand. slurmd and srun refuse a SPANK plugin of another
# major.minor release, so a package must not install next to one.
#
#   sh packaging/slurm-version.sh           22.05
#   sh packaging/slurm-version.sh --deb     Debian Depends on that release
#   sh packaging/slurm-version.sh --next    the first release after it: 22.06
#   sh packaging/slurm-version.sh --number  SLURM_VERSION_NUMBER, 0x160508
set -eu
CC=${CC:-cc}
flags=${CPPFLAGS:-}
if [ -n "${SLURM_PREFIX:-}" ]; then
	flags="-I$SLURM_PREFIX/include $flags"
elif pkg-config --exists slurm 2>/dev/null; then
	flags="$(pkg-config --cflags slurm) $flags"
fi
# shellcheck disable=SC2086
num=$(printf '#include <slurm/slurm_version.h>\nSLURM_VERSION_NUMBER\n' |
	$CC $flags -E -P -x c - 2>/dev/null | tail -n 1 | tr -d ' ')
case "$num" in
0x[0-9a-fA-F]*) ;;
*)
	echo "slurm-version: no slurm/slurm_version.h found (install libslurm-dev," \
		"or build with SLURM_PREFIX=DIR)" >&2
	exit 1
	;;
esac
major=$((num >> 16 & 255))
minor=$((num >> 8 & 255))
this=$(printf '%02d.%02d' "$major" "$minor")
next=$(printf '%02d.%02d' "$major" $((minor + 1)))
case "${1:-}" in
"") echo "$this" ;;
--next) echo "$next" ;;
--number) echo "$num" ;;
# Every Debian package that loads SPANK plugins (slurmd, slurm-client,
# slurmctld) depends on slurm-wlm-basic-plugins of its own version.
--deb) echo "slurm-wlm-basic-plugins (>= $this), slurm-wlm-basic-plugins (<< $next~)" ;;
*)
	echo "usage: $0 [--deb|--next|--number]" >&2
	exit 2
	;;
esac
