#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the Debian packages of slurm-treematch without touching the work tree.
#
#   packaging/build-deb.sh OUTDIR
#
# Copies the source (the files git tracks, as they are in the work tree; or
# the whole tree when there is no git) to a scratch directory, adds
# packaging/debian as debian/, runs `dpkg-buildpackage -us -uc -b` there (the
# build runs the unit tests, see debian/rules) and puts the .deb, .buildinfo
# and .changes files into OUTDIR. Set DEB_BUILD_OPTIONS as usual (nocheck,
# parallel=2, ...); SOURCE_FILES=all takes every file of the work tree
# instead of the tracked ones (untracked work in progress). Needs dpkg-dev, debhelper and the Build-Depends of
# packaging/debian/control (tests/install-deps.sh installs them).
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

for tool in dpkg-buildpackage dh; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "build-deb: $tool is missing: apt-get install dpkg-dev debhelper" >&2
		exit 1
	fi
done

# The package version must be the one the Makefile builds.
version=$(sed -n 's/^VERSION *:= *//p' "$src/Makefile")
debversion=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$src/packaging/debian/changelog")
case "$debversion" in
"$version" | "$version"-*) ;;
*)
	echo "build-deb: packaging/debian/changelog says $debversion but the Makefile" \
		"builds $version: add a changelog entry (dch -v $version)" >&2
	exit 1
	;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/treematch-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
tree="$work/slurm-treematch-$version"
mkdir -p "$tree"

if [ "${SOURCE_FILES:-git}" = git ] &&
	git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Tracked files only: no build directories, no half-written files of
	# others; deleted-but-not-committed files are skipped.
	git -C "$src" ls-files -z | (cd "$src" && xargs -0 sh -c '
		for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
		(cd "$src" && tar --null -T - -cf -) | (cd "$tree" && tar -xf -)
else
	(cd "$src" && tar --exclude='./build*' --exclude='./.git' --exclude='./debian' -cf - .) |
		(cd "$tree" && tar -xf -)
fi
rm -rf "$tree/debian"
cp -r "$src/packaging/debian" "$tree/debian"
# The maintainer is whoever builds (packaging/packager.sh says who).
packager=$(sh "$src/packaging/packager.sh") || exit 1
sed -i "s|@PACKAGER@|$packager|" "$tree/debian/control" "$tree/debian/changelog"

echo "build-deb: building in $tree"
(cd "$tree" && dpkg-buildpackage -us -uc -b)

found=0
for f in "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes; do
	[ -e "$f" ] || continue
	cp "$f" "$out/"
	found=$((found + 1))
done
if [ "$found" -eq 0 ]; then
	echo "build-deb: dpkg-buildpackage produced no package" >&2
	exit 1
fi
echo "build-deb: packages in $out:"
ls -l "$out"/*.deb
