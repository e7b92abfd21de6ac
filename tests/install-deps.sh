#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Installs, from the archive of the Debian release it runs on (12 bookworm,
# 13 trixie or forky), everything slurm-treematch needs to build, test,
# benchmark and package. Does nothing for packages already present; needs
# root (or sudo) only when something is missing. What a release does not
# ship is left out with one line saying so (the tests that need it say they
# skip it, and why).
#
#   sh tests/install-deps.sh           build, test, benchmark, package
#   sh tests/install-deps.sh --bench   and the applications `make
#                                      bench-predict` records (GROMACS, HPCC,
#                                      PETSc and its examples: large, so not
#                                      for CI), and cmake and g++, with which
#                                      the peer mappers of `make bench-peers`
#                                      are built by hand (bench/README.md)
set -eu

# Names that differ between releases: the sanitizer and libFuzzer runtime
# has the compiler's version in its name on Debian 12 only; PETSc's examples
# the PETSc release's. forky's ScaLAPACK builds no test programs any more
# (scalapack-mpi-test is gone): the recorder's ScaLAPACK cases skip there.
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
SCALAPACK_TEST=scalapack-mpi-test
case "$codename" in
bookworm) CLANG_RT=libclang-rt-14-dev PETSC_EXAMPLES=libpetsc3.18-dev-examples ;;
trixie) CLANG_RT=libclang-rt-dev PETSC_EXAMPLES=libpetsc3.22-dev-examples ;;
*)
	CLANG_RT=libclang-rt-dev PETSC_EXAMPLES=libpetsc3.25-dev-examples SCALAPACK_TEST=
	echo "install-deps: $codename has no scalapack-mpi-test: the ScaLAPACK (xdlu) recordings are skipped"
	;;
esac

PKGS="build-essential pkg-config git
libhwloc-dev hwloc libhwloc-plugins libyaml-dev libcriterion-dev libseccomp-dev
libelf-dev nettle-dev libxxhash-dev
slurmd slurmctld slurm-client libslurm-dev munge
iproute2 util-linux procps psmisc
openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran
lammps $SCALAPACK_TEST
libscotch-dev libmetis-dev
clang clang-format clang-tidy cppcheck $CLANG_RT
time
libxml2-utils librsvg2-bin jq debhelper rpm lintian
libsimgrid-dev"
if [ "${1:-}" = --bench ]; then
	PKGS="$PKGS gromacs hpcc libpetsc-real-dev $PETSC_EXAMPLES cmake g++"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "install-deps: everything is installed"
	exit 0
fi
echo "install-deps: installing$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update
# shellcheck disable=SC2086
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends $missing
