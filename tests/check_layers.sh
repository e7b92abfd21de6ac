#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check_layers.sh [ROOT] - every #include of another module's header in the
# tree's C sources is an arrow HACKING.md's table "Allowed arrows" draws.
# The table is read from ROOT/HACKING.md itself, so it stays the one truth:
# each row's first column names modules (`spank/`, `cli/`; `*/` is every
# module), the second the headers they may include, each in backquotes:
#   `m/`               m's public headers (not its *_private.h, not internal.h)
#   `m/name.h`         that header
#   `*/`               every module's public headers
#   `*/*_private.h`    every module's private header
# A module's own headers and system headers (<...>) are always allowed.
# The table "Header tiers" is read too: its second column names the headers
# of each tier in backquotes (`<module>` stands for the module the header is in,
# `*` for any part of a name):
#   public                 what the arrows above allow (`m/`, `*/`)
#   module internal        the module's own files, and who the arrows name
#                          it for (`*/*_private.h`)
#   cross-module internal  every module
# An include of another module's header that no tier names fails, and a
# header named by two tiers is the later (more internal) tier's.
# Exit 0 when every include is allowed, 1 with one line per forbidden one
# (file:line, the header, what the module may use), 2 when a table cannot
# be read.
set -u
ROOT=${1:-.}
HACKING=$ROOT/HACKING.md

[ -r "$HACKING" ] || { echo "check-layers: $HACKING: cannot read it" >&2; exit 2; }

# The table, as lines "FROM ALLOWED" (one pattern per line), from the rows
# between "Allowed arrows" and the next blank line after the table.
rules=$(awk '
	/^Allowed arrows/ { on = 1; next }
	on && /^\|/ { seen = 1
		n = split($0, col, "|")
		if (n < 4 || col[2] ~ /^[ -]*$/ || col[2] ~ /from/) next
		nf = 0; s = col[2]
		while (match(s, /`[^`]*`/)) { from[++nf] = substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH) }
		s = col[3]
		any = 0
		while (match(s, /`[^`]*`/)) {
			pat = substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH)
			if (pat !~ /\/$/ && pat !~ /\.h$/) continue
			for (i = 1; i <= nf; i++) print from[i], pat
			any = 1
		}
		if (!any) for (i = 1; i <= nf; i++) print from[i], "-"
		next }
	on && seen && !/^\|/ { exit }
' "$HACKING")
[ -n "$rules" ] || { echo "check-layers: $HACKING: no table under \"Allowed arrows\"" >&2; exit 2; }

# The tiers, as lines "TIER PATTERN" (TIER: public, private, internal), from
# the rows of the table under "### Header tiers".
tiers=$(awk '
	/^### Header tiers/ { on = 1; next }
	on && /^\|/ { seen = 1
		n = split($0, col, "|")
		if (n < 4 || col[2] ~ /^[ -]*$/ || col[2] ~ /^ *tier *$/) next
		name = col[2]; gsub(/^ +| +$/, "", name)
		if (name == "public") tier = "public"
		else if (name == "module internal") tier = "private"
		else if (name == "cross-module internal") tier = "internal"
		else next
		s = col[3]
		while (match(s, /`[^`]*`/)) {
			pat = substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH)
			if (pat ~ /^[^ ]*\/[^ ]*\.h$/) print tier, pat
		}
		next }
	on && seen && !/^\|/ { exit }
' "$HACKING")
for t in public private internal; do
	printf '%s\n' "$tiers" | grep -q "^$t " ||
	    { echo "check-layers: $HACKING: the table under \"Header tiers\" has no $t row" >&2; exit 2; }
done

cd "$ROOT" || exit 2
if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then
	files=$(git ls-files '*.c' '*.h' 2>/dev/null)
fi
[ -n "${files:-}" ] || files=$(find . -name '*.[ch]' -not -path './build*' | sed 's|^\./||' | sort)

# file line header, for each #include "dir/..." of another top-level directory
printf '%s\n' $files | while read -r f; do
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/[^"]*"' "$f" /dev/null |
	    sed 's/^\([^:]*\):\([0-9]*\):.*"\([^"]*\)".*/\1 \2 \3/'
done | awk -v rules="$rules" -v tiers="$tiers" '
	# the tier of header h: the last row of the tier table whose pattern it matches
	function tier(h,   i, p, m, t) {
		m = h; sub(/\/.*/, "", m); t = ""
		for (i = 1; i <= nt; i++) {
			p = tpat[i]; gsub(/<module>/, m, p)
			gsub(/\./, "\\.", p); gsub(/\*/, "[^/]*", p)
			if (h ~ ("^" p "$")) t = ttier[i]
		}
		return t
	}
	function public(h) { return tier(h) == "public" }
	function allowed(mod, h,   i, p, hm) {
		hm = h; sub(/\/.*/, "/", hm)
		for (i = 1; i <= nr; i++) {
			if (rfrom[i] != mod "/" && rfrom[i] != "*/") continue
			p = rpat[i]
			if (p == "-") continue
			if (p == h) return 1
			if (p == hm && public(h)) return 1
			if (p == "*/" && public(h)) return 1
			if (p == "*/*_private.h" && tier(h) == "private") return 1
		}
		return 0
	}
	function may(mod,   i, s) {
		s = ""
		for (i = 1; i <= nr; i++)
			if (rfrom[i] == mod "/" && rpat[i] != "-") s = s (s ? ", " : "") rpat[i]
		return s ? s : "nothing of ours"
	}
	BEGIN {
		n = split(rules, line, "\n")
		for (i = 1; i <= n; i++) { split(line[i], w, " "); rfrom[++nr] = w[1]; rpat[nr] = w[2]; known[w[1]] = 1 }
		n = split(tiers, line, "\n")
		for (i = 1; i <= n; i++) { split(line[i], w, " "); ttier[++nt] = w[1]; tpat[nt] = w[2] }
	}
	{
		file = $1; mod = file; sub(/\/.*/, "", mod)
		h = $3; hm = h; sub(/\/.*/, "", hm)
		if (hm == mod || h ~ /^\.\.?\//) next
		checked++
		if (!((mod "/") in known)) {
			printf "check-layers: %s:%s: #include \"%s\": HACKING.md'"'"'s arrows have no row for %s/\n", file, $2, h, mod
			bad++; next
		}
		if (tier(h) == "") {
			printf "check-layers: %s:%s: #include \"%s\": a header HACKING.md'"'"'s header tiers do not name (public, module internal or cross-module internal)\n", file, $2, h
			bad++; next
		}
		if (!allowed(mod, h)) {
			printf "check-layers: %s:%s: #include \"%s\": an arrow HACKING.md'"'"'s table does not allow (%s/ may use %s)\n", file, $2, h, mod, may(mod)
			bad++
		}
	}
	END {
		if (bad) { printf "check-layers: %d forbidden include(s) of %d across modules\n", bad, checked; exit 1 }
		printf "check-layers: %d includes across modules, every one an arrow of HACKING.md\n", checked
	}'
