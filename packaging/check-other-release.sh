#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-other-release.sh - packages built here, offered to a Debian root of
# another release (.ci/debian-root): apt must refuse slurm-treematch there
# with its own unmet-dependency message naming Slurm, because that
# release's slurmd would refuse the plugin at the first srun. The other
# packages go in the same transaction, so Slurm is the only thing missing.
#
#   sh packaging/check-other-release.sh DEBDIR [ROOT]
set -eu
DEBS=${1:?usage: check-other-release.sh DEBDIR [ROOT]}
ROOT=${2:-/var/tmp/treematch-ci/trixie/root}
SRC=$(cd "$(dirname "$0")/.." && pwd)
this=$(sh "$SRC/packaging/slurm-version.sh")

ls "$DEBS"/slurm-treematch_*.deb >/dev/null 2>&1 || { echo "FAIL: no .deb in $DEBS"; exit 1; }
[ -x "$ROOT/usr/bin/apt-get" ] || { echo "FAIL: no Debian root at $ROOT"; exit 1; }
other=$(chroot "$ROOT" dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins 2>/dev/null || true)
[ -n "$other" ] || { echo "FAIL: the root has no Slurm (run tests/install-deps.sh in it)"; exit 1; }
case "$other" in
"$this".*) echo "FAIL: the root's Slurm $other is the same release as this build's ($this)"; exit 1 ;;
esac

mkdir -p "$ROOT/tmp/other-release"
rm -f "$ROOT"/tmp/other-release/*.deb
cp "$DEBS"/libtreematch0_*.deb "$DEBS"/treematch_*.deb "$DEBS"/slurm-treematch_*.deb \
	"$ROOT/tmp/other-release/"
set +e
out=$(chroot "$ROOT" /bin/sh -c 'DEBIAN_FRONTEND=noninteractive apt-get \
	-o DPkg::Lock::Timeout=600 install -y --no-install-recommends --simulate \
	/tmp/other-release/libtreematch0_*.deb /tmp/other-release/treematch_*.deb \
	/tmp/other-release/slurm-treematch_*.deb' 2>&1)
rc=$?
set -e
rm -rf "$ROOT/tmp/other-release"
if [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -q "slurm-treematch : Depends: slurm-wlm-basic-plugins"; then
	echo "PASS: apt refuses slurm-treematch built for Slurm $this next to Slurm $other:"
	printf '%s\n' "$out" | grep -A1 "slurm-treematch : Depends" | sed 's/^/    /'
	exit 0
fi
echo "FAIL: apt did not refuse slurm-treematch built for Slurm $this next to Slurm $other (rc=$rc)"
printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /'
exit 1
