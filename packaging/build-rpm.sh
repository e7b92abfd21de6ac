#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the RPM packages of slurm-treematch.
#
#   packaging/build-rpm.sh OUTDIR
#
# Makes slurm-treematch-VERSION.tar.gz from the files git tracks (as they are
# in the work tree), then runs rpmbuild -bb packaging/treematch.spec in a
# scratch _topdir and copies the RPMs to OUTDIR. On Debian (package `rpm`)
# the build dependencies are Debian packages the RPM database does not know,
# so RPM_NODEPS=1 (the default there) passes --nodeps; on an RPM system set
# RPM_NODEPS=0 to have rpmbuild check BuildRequires. SOURCE_FILES=all takes
# every file of the work tree instead of the tracked ones; RPMBUILD_FLAGS adds
# options (e.g. --nocheck).
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

if ! command -v rpmbuild >/dev/null 2>&1; then
	echo "build-rpm: rpmbuild is missing: apt-get install rpm (Debian) or dnf install rpm-build" >&2
	exit 1
fi
version=$(sed -n 's/^VERSION *:= *//p' "$src/Makefile")
specversion=$(sed -n 's/^Version: *//p' "$src/packaging/treematch.spec")
if [ "$version" != "$specversion" ]; then
	echo "build-rpm: packaging/treematch.spec says $specversion but the Makefile builds" \
		"$version: update Version: and %changelog" >&2
	exit 1
fi
if [ -z "${RPM_NODEPS:-}" ]; then
	if [ -f /etc/debian_version ]; then RPM_NODEPS=1; else RPM_NODEPS=0; fi
fi
nodeps=""
if [ "$RPM_NODEPS" = 1 ]; then nodeps="--nodeps"; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/treematch-rpm.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/SOURCES" "$work/stage/slurm-treematch-$version"
if [ "${SOURCE_FILES:-git}" = git ] &&
	git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$src" ls-files -z | (cd "$src" && xargs -0 sh -c '
		for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
		(cd "$src" && tar --null -T - -cf -) |
		(cd "$work/stage/slurm-treematch-$version" && tar -xf -)
else
	(cd "$src" && tar --exclude='./build*' --exclude='./.git' -cf - .) |
		(cd "$work/stage/slurm-treematch-$version" && tar -xf -)
fi
tar -C "$work/stage" -czf "$work/SOURCES/slurm-treematch-$version.tar.gz" \
	"slurm-treematch-$version"

echo "build-rpm: rpmbuild -bb $nodeps ${RPMBUILD_FLAGS:-} packaging/treematch.spec"
# shellcheck disable=SC2086
# The Slurm release of the headers this build uses: the package requires it.
slurm_this=$(sh "$src/packaging/slurm-version.sh") || exit 1
slurm_next=$(sh "$src/packaging/slurm-version.sh" --next)
# The packager is whoever builds (packaging/packager.sh says who).
packager=$(sh "$src/packaging/packager.sh") || exit 1
sed "s|@PACKAGER@|$packager|" "$src/packaging/treematch.spec" >"$work/treematch.spec"
rpmbuild -bb $nodeps ${RPMBUILD_FLAGS:-} --define "_topdir $work" \
	--define "slurm_this $slurm_this" --define "slurm_next $slurm_next" \
	--define "packager $packager" "$work/treematch.spec"

found=0
for f in "$work"/RPMS/*/*.rpm; do
	[ -e "$f" ] || continue
	cp "$f" "$out/"
	found=$((found + 1))
done
if [ "$found" -eq 0 ]; then
	echo "build-rpm: rpmbuild produced no package" >&2
	exit 1
fi
echo "build-rpm: packages in $out:"
ls -l "$out"/*.rpm
