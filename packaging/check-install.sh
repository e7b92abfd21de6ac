#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-install.sh - `make install` and `make uninstall` do what the README
# says: every file goes under DESTDIR at the PREFIX/LIBDIR/SLURM_PLUGINDIR
# given, the pkg-config file names those paths, and uninstall leaves no file
# behind. Run by `make check` (step check-install) with the build already
# done; registers its counts with tests/summary.sh.
#
#   BUILDDIR=/abs/build sh packaging/check-install.sh    (exit 1 on failure)
set -u
B=${BUILDDIR:?BUILDDIR must be set}
SRC=$(cd "$(dirname "$0")/.." && pwd)
D=$(mktemp -d "${TMPDIR:-/tmp}/treematch-install.XXXXXX")
trap 'rm -rf "$D"' EXIT
PASSED=0
FAILED=0
ok() {
	if [ "$1" = 0 ]; then
		echo "PASS: $2"
		PASSED=$((PASSED + 1))
	else
		echo "FAIL: $2"
		FAILED=$((FAILED + 1))
	fi
}

# Every directory variable is given: a caller's own (the RPM build passes
# BINDIR, MANDIR, ... to make) would otherwise reach this make via MAKEFLAGS.
VARS="BUILDDIR=$B PREFIX=/opt/tm LIBDIR=/opt/tm/lib64 SLURM_PLUGINDIR=/opt/slurm/plugins
BINDIR=/opt/tm/bin INCLUDEDIR=/opt/tm/include MANDIR=/opt/tm/share/man DATADIR=/opt/tm/share
SYSCONFDIR=/opt/tm/etc PKGCONFIGDIR=/opt/tm/lib64/pkgconfig LIBEXECDIR=/opt/tm/libexec
SLURM_SYSCONFDIR=/opt/tm/etc/slurm COMPLETIONDIR=/opt/tm/share/bash-completion/completions
RECORD_LIBDIR=/opt/tm/lib64/treematch"
# shellcheck disable=SC2086
make -C "$SRC" --no-print-directory $VARS install DESTDIR="$D/root" >"$D/install.log" 2>&1
ok $? "make install DESTDIR PREFIX LIBDIR SLURM_PLUGINDIR"
R=$D/root
for f in /opt/tm/bin/treematch /opt/tm/lib64/libtreematch.so.0 /opt/tm/lib64/libtreematch.so \
	/opt/tm/lib64/libtreematch.a /opt/tm/include/treematch/treematch.h \
	/opt/tm/lib64/pkgconfig/treematch.pc /opt/slurm/plugins/treematch.so \
	/opt/tm/share/man/man1/treematch.1 /opt/tm/share/man/man5/treematch-profile.5 \
	/opt/tm/share/man/man8/treematch.8 /opt/tm/libexec/treematch/treematch-helper \
	/opt/tm/etc/slurm/treematch/plugstack.conf \
	/opt/tm/share/slurm-treematch/cli_filter.lua /opt/tm/bin/treematch-srun \
	/opt/tm/share/bash-completion/completions/treematch \
	/opt/tm/share/bash-completion/completions/treematch-srun; do
	[ -e "$R$f" ]
	ok $? "installed $f"
done
stray=$(cd "$R" && find . ! -type d | grep -v -e '^\./opt/tm/' -e '^\./opt/slurm/plugins/' || true)
[ -z "$stray" ]
ok $? "nothing installed outside PREFIX and SLURM_PLUGINDIR${stray:+: $stray}"
# the plugin starts the helper LIBEXECDIR holds, and only root may change it
grep -qa '/opt/tm/libexec/treematch/treematch-helper' "$R/opt/slurm/plugins/treematch.so"
ok $? "the plugin names the helper installed in LIBEXECDIR"
[ "$(stat -c %a "$R/opt/tm/libexec/treematch/treematch-helper")" = 755 ]
ok $? "the helper is 0755"
[ "$(readlink "$R/opt/tm/lib64/libtreematch.so.0")" = "$(basename "$B"/libtreematch.so.0.*)" ]
ok $? "libtreematch.so.0 links to the versioned library"
grep -qx 'libdir=/opt/tm/lib64' "$R/opt/tm/lib64/pkgconfig/treematch.pc" &&
	grep -qx 'includedir=/opt/tm/include' "$R/opt/tm/lib64/pkgconfig/treematch.pc"
ok $? "treematch.pc names LIBDIR and INCLUDEDIR"
PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_LIBDIR=$R/opt/tm/lib64/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
	pkg-config --cflags --libs treematch >"$D/pc" 2>&1 &&
	grep -q -- "-L$R/opt/tm/lib64 -ltreematch" "$D/pc"
ok $? "pkg-config reads treematch.pc"
# The installed headers together, as a program of the site's uses them:
# Slurm's network read through treematch/topology.h, what it returns
# through treematch/affinity.h (both name tmatch_affinity_conf_t).
cat >"$D/use.c" <<'EOF'
/* SPDX-License-Identifier: BSD-3-Clause */
#include <treematch/topology.h>
#include <treematch/affinity.h>
#include <treematch/config.h>
#include <treematch/profile.h>
#include <treematch/treematch.h>
#include <stdio.h>
int main(void)
{
	tmatch_error_t err;
	tmatch_affinity_conf_t *c = tmatch_conf_topology_parse(
	    "SwitchName=s0 Nodes=n[1-2]\nSwitchName=top Switches=s0\n", "t.conf", &err);

	if (!c)
		return 1;
	printf("%d\n", tmatch_affinity_conf_nb_switches(c));
	tmatch_affinity_conf_destroy(c);
	return 0;
}
EOF
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$R/opt/tm/include" -o "$D/use" "$D/use.c" \
	-L"$R/opt/tm/lib64" -ltreematch >"$D/use.log" 2>&1 &&
	[ "$(LD_LIBRARY_PATH=$R/opt/tm/lib64 "$D/use")" = 2 ]
ok $? "a program reads topology.conf through the installed headers and library"
grep -q '^optional /opt/slurm/plugins/treematch.so ' "$R/opt/tm/etc/slurm/treematch/plugstack.conf" &&
	grep -q 'ln -s /opt/tm/etc/slurm/treematch/plugstack.conf' "$R/opt/tm/etc/slurm/treematch/plugstack.conf"
ok $? "the plugstack line points at SLURM_PLUGINDIR and says how to enable it"
# The admin's one command, then the check the admin runs: the installed
# line is one the plugin reads without a problem.
mkdir -p "$D/etc/plugstack.conf.d"
printf 'ClusterName=x\n' >"$D/etc/slurm.conf"
printf 'include %s/etc/plugstack.conf.d/*.conf\n' "$D" >"$D/etc/plugstack.conf"
sed "s|/opt/slurm/plugins/treematch.so|$B/spank/treematch.so|" \
	"$R/opt/tm/etc/slurm/treematch/plugstack.conf" >"$D/treematch-line.conf"
ln -s "$D/treematch-line.conf" "$D/etc/plugstack.conf.d/treematch.conf"
SLURM_CONF=$D/etc/slurm.conf "$R/opt/tm/bin/treematch" config check >"$D/check.out" 2>&1 &&
	grep -q 'plugstack.conf.d/treematch.conf:[0-9]*: optional ' "$D/check.out"
rc=$?
[ $rc = 0 ] || sed 's/^/    /' "$D/check.out"
ok $rc "the enabled line passes treematch config check"

# The soname, and only the public API exported: internals (tmatch__*) and
# static helpers stay hidden in the library, the plugin shows Slurm only
# its entry points.
so=$(ls "$B"/libtreematch.so.0.* | head -n 1)
readelf -d "$so" | grep -q 'SONAME.*\[libtreematch\.so\.0\]'
ok $? "the library's soname is libtreematch.so.0"
bad=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^tmatch_[a-z]' | grep -v '^_' || true)
[ -z "$bad" ] && [ -n "$(nm -D --defined-only "$so" | grep ' tmatch_[a-z]')" ]
ok $? "the library exports only tmatch_* names${bad:+: $(echo $bad)}"
if [ -f "$B/spank/treematch.so" ]; then
	bad=$(nm -D --defined-only "$B/spank/treematch.so" | awk '{print $3}' |
		grep -v -e '^slurm_spank_' -e '^plugin_' -e '^spank_plugin_version$' -e '^_' || true)
	[ -z "$bad" ]
	ok $? "the plugin exports only Slurm's entry points${bad:+: $(echo $bad)}"
fi

# shellcheck disable=SC2086
make -C "$SRC" --no-print-directory $VARS uninstall DESTDIR="$D/root" >"$D/uninstall.log" 2>&1
ok $? "make uninstall"
left=$(cd "$R" && find . ! -type d)
[ -z "$left" ]
ok $? "uninstall removes every installed file${left:+: $(echo $left)}"

echo "check-install: $PASSED passed, $FAILED failed"
# Under `make check` (REPORTED=1) the counts go to tests/summary.sh and the
# step itself succeeds, so a failure is counted once, not once more as a
# failed step.
if [ "${REPORTED:-0}" = 1 ]; then
	BUILDDIR=$B sh "$SRC/tests/summary.sh" add check-install "$PASSED" "$FAILED" && exit 0
fi
[ "$FAILED" -eq 0 ]
