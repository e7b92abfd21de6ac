#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_check_layers.sh - check_layers.sh can fail: on a copy of the tree's
# sources and HACKING.md it passes, then fails on each planted forbidden
# include (naming the file and line), and cannot pass without the table.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
say() { printf 'test_check_layers: %s\n' "$*"; }
expect() { # expect RC PATTERN: run the check on the copy
	out=$(sh "$here/tests/check_layers.sh" "$tmp/src" 2>&1); rc=$?
	if [ "$rc" -ne "$1" ] || ! printf '%s\n' "$out" | grep -q -- "$2"; then
		say "FAIL ($3): exit $rc, wanted $1 and a line matching '$2':"; printf '%s\n' "$out"
		fails=$((fails + 1))
	else
		say "ok: $3"
	fi
}
fresh() {
	rm -rf "$tmp/src" && mkdir -p "$tmp/src" &&
	    (cd "$here" && git ls-files '*.c' '*.h' HACKING.md 2>/dev/null ||
	     { find . -name '*.[ch]' -not -path './build*'; echo HACKING.md; }) |
	    (cd "$here" && xargs tar cf -) | (cd "$tmp/src" && tar xf -)
}

fresh
expect 0 'every one an arrow' "the tree as it is"

printf '#include "placement/placement_private.h"\n' >>"$tmp/src/spank/helper_main.c"
line=$(wc -l <"$tmp/src/spank/helper_main.c")
expect 1 "spank/helper_main.c:$line: #include \"placement/placement_private.h\"" \
    "a front end including placement's private header"

fresh
sed -i '1a #include "profiler/mpiabi.h"' "$tmp/src/placement/step.c"
expect 1 'placement/step.c:2: #include "profiler/mpiabi.h".*placement/ may use affinity/, conf/, profile/, treematch/' \
    "placement including the profiler"

fresh
sed -i '1a #include "placement/step.h"' "$tmp/src/conf/plugstack.c"
expect 1 'conf/plugstack.c:2: #include "placement/step.h".*conf/ may use affinity/, profile/, treematch/' \
    "the configuration files' readers including a decision"

fresh
sed -i '1a #include "affinity/affinity_private.h"' "$tmp/src/conf/topology_yaml.c"
expect 1 'conf/topology_yaml.c:2: #include "affinity/affinity_private.h": an arrow' \
    "the network's readers reaching past its builder into affinity's insides"

fresh
printf '#include "conf/plugstack.h"\n' >>"$tmp/src/affinity/cluster.c"
expect 1 'affinity/cluster.c:.*"conf/plugstack.h": an arrow' "affinity including conf/"

fresh
printf '#include "cli/cli.h"\n' >>"$tmp/src/treematch/topo.c"
expect 1 'treematch/topo.c:.*may use nothing of ours' "the core including a front end"

fresh
mkdir -p "$tmp/src/newmod" && printf '#include "treematch/treematch.h"\n' >"$tmp/src/newmod/x.c"
expect 1 'no row for newmod/' "a module the table does not name"

fresh
printf '#include "treematch/internal.h"\n' >>"$tmp/src/cli/main.c"
expect 0 'every one an arrow' "the internal tier from a front end"

fresh
printf '#include "treematch/binfmt.h"\n' >>"$tmp/src/cli/main.c"
expect 1 'cli/main.c:.*"treematch/binfmt.h": a header HACKING.md.s header tiers do not name' \
    "a header of no tier (a third tier the table does not name)"

fresh
printf '#include "profiler/record_private.h"\n' >>"$tmp/src/placement/step.c"
expect 1 'placement/step.c:.*"profiler/record_private.h": an arrow' \
    "another module's internal header (module internal tier)"

fresh
printf '#include "placement/placement_private.h"\n' >>"$tmp/src/tests/unit/test_placement_plan.c"
expect 0 'every one an arrow' "a test of placement's internals"

fresh
sed -i 's/^| module internal | `<module>\/\*_private.h` |/| module internal | `<module>\/<module>_private.h` |/' "$tmp/src/HACKING.md"
printf '#include "profiler/record_private.h"\n' >>"$tmp/src/tests/unit/test_placement_plan.c"
expect 1 'record_private.h": a header HACKING.md.s header tiers do not name' \
    "the tiers read from the table (a narrower private row)"

fresh
sed -i '/^| cross-module internal |/d' "$tmp/src/HACKING.md"
expect 2 'has no internal row' "HACKING.md without a tier"

fresh
sed -i '/^Allowed arrows/,/^$/d' "$tmp/src/HACKING.md"
expect 2 'no table' "HACKING.md without the table"

[ "$fails" -eq 0 ] || { say "$fails case(s) failed"; exit 1; }
say "all cases passed"
