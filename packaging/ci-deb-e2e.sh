#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# ci-deb-e2e.sh - issue 9's CI step: build the Debian packages, install them
# the way an admin does, and test the INSTALLED files:
#
#   1. packaging/build-deb.sh (dpkg-buildpackage -us -uc -b; runs the unit
#      tests) into OUTDIR, unless --no-build and OUTDIR already has .debs;
#      lintian on them: no error, no warning (this release's lintian);
#   2. apt-get install ./OUTDIR/*.deb (dependencies from the archive);
#   3. checks of what was installed: files in place, the soname and only
#      tmatch_* symbols exported by the library, only Slurm's entry points
#      exported by the plugin, pkg-config, a program built against
#      libtreematch-dev, the CLI and its man pages;
#   4. the admin's one step: treematch config check on the installed
#      plugstack line, link it into /etc/slurm/plugstack.conf.d/, check the
#      whole stack, start a throwaway Slurm (tests/e2e/cluster.sh) whose
#      plugstack.conf is Debian's own /etc/slurm/plugstack.conf, and check
#      srun --treematch= binds tasks and, with that "optional" line, a bad
#      profile stops srun before it asks for an allocation;
#   5. the end-to-end suite tests/e2e/run.sh with its plugin and CLI paths
#      pointing at the installed files (a scratch BUILDDIR of symlinks).
#
#   sh packaging/ci-deb-e2e.sh [--no-build] [--purge] [OUTDIR]
#
# --purge removes the packages and the link at the end (for machines that
# are not throwaway CI runners). Needs root. The last line is
# "N passed, N failed"; the exit status is 1 if anything failed.
set -u

NO_BUILD=0
PURGE=0
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--no-build) NO_BUILD=1 ;;
	--purge) PURGE=1 ;;
	-*)
		echo "usage: $0 [--no-build] [--purge] [OUTDIR]" >&2
		exit 2
		;;
	*) OUT=$1 ;;
	esac
	shift
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$SRC/build/deb}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/treematch-ci-deb.XXXXXX")
# The e2e suite runs some jobs as the user nobody: its cluster directory
# (under WORK) must be traversable by everyone.
chmod 0755 "$WORK"
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
PLUGIN=/usr/lib/$MULTIARCH/slurm-wlm/treematch.so
SNIPPET_SRC=/etc/slurm/treematch/plugstack.conf
SNIPPET=/etc/slurm/plugstack.conf.d/treematch.conf
VERSION=$(sed -n 's/^VERSION *:= *//p' "$SRC/Makefile")
CLUSTER_DIR=$WORK/cluster
SUITE_PASSED=0
SUITE_FAILED=0
PASSED=0
FAILED=0
SNIPPET_ADDED=0

pass() {
	echo "PASS: $1"
	PASSED=$((PASSED + 1))
}
fail() {
	echo "FAIL: $1"
	FAILED=$((FAILED + 1))
}
check() { # name command...: pass when the command succeeds
	name=$1
	shift
	if "$@" >"$WORK/out" 2>&1; then
		pass "$name"
	else
		fail "$name"
		sed 's/^/    /' "$WORK/out" | tail -n 20
	fi
}

finish() {
	TMATCH_CLUSTER_DIR=$CLUSTER_DIR sh "$SRC/tests/e2e/cluster.sh" stop >/dev/null 2>&1
	if [ "$SNIPPET_ADDED" = 1 ] && [ "$PURGE" = 1 ]; then
		rm -f "$SNIPPET"
	fi
	if [ "$PURGE" = 1 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 purge -y \
			slurm-treematch treematch libtreematch-dev libtreematch0 >/dev/null 2>&1
	fi
	rm -rf "$WORK"
	total_p=$((PASSED + SUITE_PASSED))
	total_f=$((FAILED + SUITE_FAILED))
	echo "ci-deb-e2e: installed-file checks $PASSED passed, $FAILED failed;" \
		"e2e suite on the installed files $SUITE_PASSED passed, $SUITE_FAILED failed"
	echo "$total_p passed, $total_f failed"
	[ "$total_f" -eq 0 ]
}
trap 'finish; exit $?' EXIT
trap 'exit 130' INT TERM

if [ "$(id -u)" -ne 0 ]; then
	fail "needs root (apt-get install, Slurm daemons)"
	exit 1
fi

# 1. Build ------------------------------------------------------------------
if [ "$NO_BUILD" = 0 ] || ! ls "$OUT"/*.deb >/dev/null 2>&1; then
	rm -f "$OUT"/*.deb "$OUT"/*.buildinfo "$OUT"/*.changes
	if sh "$SRC/packaging/build-deb.sh" "$OUT" >"$WORK/build.log" 2>&1; then
		pass "dpkg-buildpackage -us -uc -b (unit tests inside)"
	else
		fail "dpkg-buildpackage -us -uc -b"
		tail -n 40 "$WORK/build.log" | sed 's/^/    /'
		exit 1
	fi
fi
for p in libtreematch0 libtreematch-dev slurm-treematch treematch; do
	f=$(ls "$OUT/${p}_"*.deb 2>/dev/null | head -n 1)
	if [ -n "$f" ]; then
		pass "package $p built ($(du -k "$f" | cut -f1) KiB)"
	else
		fail "package $p built"
	fi
done
# Debian's checks of the packages, as this release's lintian makes them:
# errors and warnings fail (information and pedantic tags are listed).
if ! command -v lintian >/dev/null 2>&1; then
	fail "lintian is installed (tests/install-deps.sh)"
elif lintian --fail-on error,warning --display-info "$OUT"/*.deb >"$WORK/lintian.log" 2>&1; then
	pass "lintian $(lintian --version | sed 's/^Lintian v//'): no error, no warning" \
		"($(grep -c '^I:' "$WORK/lintian.log") information tags)"
else
	fail "lintian: no error, no warning"
	grep -E '^[EW]:' "$WORK/lintian.log" | sed 's/^/    /'
fi

# 2. Install as an admin would ------------------------------------------------
export DEBIAN_FRONTEND=noninteractive
if (cd "$OUT" && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends \
	--reinstall ./libtreematch0_*.deb ./libtreematch-dev_*.deb ./slurm-treematch_*.deb \
	./treematch_*.deb) >"$WORK/install.log" 2>&1; then
	pass "apt-get install ./*.deb"
else
	fail "apt-get install ./*.deb"
	tail -n 30 "$WORK/install.log" | sed 's/^/    /'
	exit 1
fi

# 3. What was installed ------------------------------------------------------
# Tied to the Slurm it was built against: slurmd refuses a plugin of
# another release, so apt must not install it next to one.
SLURM_DEP=$(sh "$SRC/packaging/slurm-version.sh" --deb)
check "slurm-treematch depends on its Slurm release ($SLURM_DEP)" sh -c \
	"dpkg-deb -f '$OUT'/slurm-treematch_*.deb Depends | grep -qF '$SLURM_DEP'"
check "plugin in Slurm's plugin directory ($PLUGIN)" test -f "$PLUGIN"
check "plugstack line installed, disabled ($SNIPPET_SRC)" grep -q "^optional $PLUGIN" "$SNIPPET_SRC"
check "bash completion installed" test -f /usr/share/bash-completion/completions/treematch
check "libtreematch.so.0 is the soname" sh -c \
	"readelf -d /usr/lib/$MULTIARCH/libtreematch.so.0 | grep -q 'SONAME.*\[libtreematch.so.0\]'"
check "library exports only tmatch_* (internals hidden)" sh -c \
	"[ -z \"\$(nm -D --defined-only /usr/lib/$MULTIARCH/libtreematch.so.0 |
	   awk '{print \$3}' | grep -v '^tmatch_[a-z]' | grep -v '^_')\" ] &&
	 ! nm -D --defined-only /usr/lib/$MULTIARCH/libtreematch.so.0 | grep -q ' tmatch__'"
check "plugin exports only Slurm entry points" sh -c \
	"[ -z \"\$(nm -D --defined-only $PLUGIN | awk '{print \$3}' |
	   grep -v -e '^slurm_spank_' -e '^plugin_' -e '^spank_plugin_version\$' -e '^_')\" ]"
check "treematch --version is $VERSION" sh -c "treematch --version | grep -qx 'treematch $VERSION'"
check "pkg-config treematch is $VERSION" sh -c "[ \"\$(pkg-config --modversion treematch)\" = $VERSION ]"
for page in treematch.1 treematch.8 treematch-profile.5; do
	name=${page%.*}
	sect=${page##*.}
	check "man page $page installed and renders" sh -c \
		"man -w $sect $name >/dev/null && MANWIDTH=80 man $sect $name 2>/dev/null | grep -q ."
done
cat >"$WORK/use.c" <<'EOF'
/* SPDX-License-Identifier: BSD-3-Clause */
#include <treematch/treematch.h>
#include <treematch/affinity.h>
#include <treematch/config.h>
#include <treematch/profile.h>
#include <treematch/topology.h>
#include <stdio.h>
int main(void)
{
	tmatch_error_t err;
	tmatch_topo_t *t = tmatch_topo_from_tleaf("tleaf 2 2 10 4 1", &err);
	if (!t)
		return 1;
	printf("%d\n", tmatch_topo_nb_leaves(t));
	tmatch_topo_destroy(t);
	return 0;
}
EOF
check "a program builds against libtreematch-dev and runs" sh -c \
	"cc -o '$WORK/use' '$WORK/use.c' \$(pkg-config --cflags --libs treematch) &&
	 ldd '$WORK/use' | grep -q 'libtreematch.so.0 => /.*/libtreematch.so.0' && [ \"\$('$WORK/use')\" = 8 ]"
check "treematch draw writes SVG from the installed CLI" sh -c \
	"treematch draw --profile '$SRC/docs/examples/stencil32.mtx' \
	   --topology 'tleaf 3 2 100 2 10 8 1' -o '$WORK/d.svg' --png '$WORK/d.png' &&
	 xmllint --noout '$WORK/d.svg' && test -s '$WORK/d.png'"

# 4. The admin's one step, then srun --treematch= ----------------------------
if [ ! -f /etc/slurm/plugstack.conf ]; then
	fail "Debian's /etc/slurm/plugstack.conf exists (package slurm-wlm-basic-plugins)"
elif [ -e "$SNIPPET" ] && ! cmp -s "$SNIPPET_SRC" "$SNIPPET"; then
	fail "$SNIPPET already exists with other content: not overwriting it"
else
	check "treematch config check passes the installed line" treematch config check "$SNIPPET_SRC"
	[ -e "$SNIPPET" ] || SNIPPET_ADDED=1
	mkdir -p /etc/slurm/plugstack.conf.d
	[ -e "$SNIPPET" ] || ln -s ../treematch/plugstack.conf "$SNIPPET"
	check "plugstack.conf includes plugstack.conf.d" \
		grep -q '^include /etc/slurm/plugstack.conf.d/\*.conf' /etc/slurm/plugstack.conf
	check "treematch config check finds the enabled line through Debian's plugstack.conf" \
		sh -c "SLURM_CONF=/etc/slurm/slurm.conf treematch config check /etc/slurm/plugstack.conf |
		       grep -q '^line: $SNIPPET:[0-9]*: optional $PLUGIN'"
	if TMATCH_CLUSTER_DIR=$CLUSTER_DIR sh "$SRC/tests/e2e/cluster.sh" start --nodes 1 \
		--plugstack /etc/slurm/plugstack.conf >"$WORK/cluster.log" 2>&1; then
		pass "throwaway Slurm started with Debian's plugstack.conf"
		SLURM_CONF=$CLUSTER_DIR/etc/slurm.conf
		export SLURM_CONF
		check "srun --help lists --treematch" sh -c "timeout 60 srun --help | grep -q -- --treematch"
		printf '0 1000\n1000 0\n' >"$WORK/two.mat"
		treematch profile convert -o "$WORK/two.yml" "$WORK/two.mat" >/dev/null 2>&1
		check "srun -n2 --treematch=PROFILE binds each task" sh -c "
			cd '$WORK' && timeout 90 srun -n 2 --treematch=two.yml,verbose=1 \
			  sh -c 'echo rank=\$SLURM_PROCID tm=\${TREEMATCH_CPUS:-none} \
			    \$(grep Cpus_allowed_list: /proc/self/status)' >srun.out 2>&1;
			cat srun.out;
			[ \$(grep -c 'tm=[0-9]' srun.out) -eq 2 ] && grep -q '^treematch:' srun.out"
		# The package's line is "optional": a bad profile stops srun all the
		# same, before it asks for an allocation (no job id is used).
		check "a bad profile stops srun before it asks for an allocation" sh -c "
			cd '$WORK' && printf 'format: nope\n' >bad.yml &&
			a=\$(timeout 60 sbatch --parsable --hold -n1 -o /dev/null --wrap true) &&
			! timeout 60 srun -n 2 --treematch=bad.yml true >bad.out 2>&1;
			b=\$(timeout 60 sbatch --parsable --hold -n1 -o /dev/null --wrap true);
			timeout 10 scancel \$a \$b; cat bad.out; echo \"job ids \$a \$b\";
			grep -q 'treematch:.*bad.yml:[0-9]*:[0-9]*:' bad.out && [ \$b -eq \$((a + 1)) ]"
		TMATCH_CLUSTER_DIR=$CLUSTER_DIR sh "$SRC/tests/e2e/cluster.sh" stop >/dev/null 2>&1
		unset SLURM_CONF
	else
		fail "throwaway Slurm started with Debian's plugstack.conf"
		tail -n 20 "$WORK/cluster.log" | sed 's/^/    /'
	fi
fi

# 5. The end-to-end suite against the installed plugin and CLI ---------------
# run.sh takes its plugin and CLI from BUILDDIR: give it one whose files are
# links to the installed ones (the task helper is built from source).
EB=$WORK/installed-build
mkdir -p "$EB/spank" "$EB/bin" "$EB/tests/e2e" "$EB/profiler"
ln -s "$PLUGIN" "$EB/spank/treematch.so"
ln -s /usr/bin/treematch "$EB/bin/treematch"
for r in /usr/lib/"$MULTIARCH"/treematch/libtreematch-record-*.so; do
	[ -e "$r" ] && ln -s "$r" "$EB/profiler/"
done
if [ ! -f "$SRC/tests/e2e/run.sh" ]; then
	fail "tests/e2e/run.sh exists"
elif ! cc -O1 -o "$EB/tests/e2e/whereami" "$SRC/tests/e2e/whereami.c"; then
	fail "build the e2e task helper"
else
	sh "$SRC/tests/summary.sh" begin >/dev/null 2>&1 || true
	BUILDDIR=$EB SRCDIR=$SRC sh "$SRC/tests/e2e/run.sh" 2>&1 | tee "$WORK/e2e.log"
	line=$(grep '^e2e: [0-9]* passed, [0-9]* failed' "$WORK/e2e.log" | tail -n 1)
	SUITE_PASSED=$(printf '%s' "$line" | sed -n 's/^e2e: \([0-9]*\) passed.*/\1/p')
	SUITE_FAILED=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	if [ -z "$SUITE_PASSED" ] || [ -z "$SUITE_FAILED" ]; then
		fail "e2e suite printed its totals"
		SUITE_PASSED=0
		SUITE_FAILED=0
	fi
fi
exit 0
