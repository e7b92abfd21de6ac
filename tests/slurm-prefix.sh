#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# slurm-prefix.sh - the plugin built against a Slurm that is not the
# distribution's, as `make SLURM_PREFIX=DIR` documents: the given
# include/slurm directory (another release's headers, as a SchedMD package
# or a source install in /opt would give them) is laid out as PREFIX/include
# /slurm, the plugin is built there with warnings as errors, its SPANK items
# are checked against that spank.h, and the plugin must carry that release's
# version, which is what slurmd compares when it loads it.
#
#   sh tests/slurm-prefix.sh /path/to/include/slurm
set -eu
HDRS=${1:?usage: slurm-prefix.sh INCLUDE_SLURM_DIR}
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ -r "$HDRS/spank.h" ] && [ -r "$HDRS/slurm_version.h" ] ||
	{ echo "FAIL: slurm-prefix: no spank.h and slurm_version.h in $HDRS"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/treematch-prefix.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/prefix/include"
cp -r "$HDRS" "$W/prefix/include/slurm"
B=$W/build

want=$(SLURM_PREFIX=$W/prefix sh "$SRC/packaging/slurm-version.sh" --number)
mine=$(sh "$SRC/packaging/slurm-version.sh" --number 2>/dev/null || echo none)
echo "slurm-prefix: building against $HDRS (Slurm $want; this system's: $mine)"
make -C "$SRC" --no-print-directory -s BUILDDIR="$B" SLURM_PREFIX="$W/prefix" WERROR=1 \
	"$B/spank/treematch.so" >"$W/build.log" 2>&1 ||
	{ tail -n 30 "$W/build.log"; echo "FAIL: slurm-prefix: the plugin does not build"; exit 1; }
make -C "$SRC" --no-print-directory -s BUILDDIR="$B" SLURM_PREFIX="$W/prefix" \
	check-spank-items >"$W/items.log" 2>&1 ||
	{ cat "$W/items.log"; echo "FAIL: slurm-prefix: SPANK item types differ"; exit 1; }

cat >"$W/version.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL) : NULL;
	const unsigned int *v = h ? dlsym(h, "plugin_version") : NULL;

	if (!v) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	printf("0x%x\n", *v);
	return 0;
}
C
cc -o "$W/version" "$W/version.c" -ldl
got=$("$W/version" "$B/spank/treematch.so")
if [ "$(printf '%d' "$got")" -ne "$(printf '%d' "$want")" ]; then
	echo "FAIL: slurm-prefix: the plugin says Slurm $got, the headers $want"
	exit 1
fi
echo "PASS: slurm-prefix: treematch.so built against $HDRS carries Slurm $got (slurmd compares it)"
