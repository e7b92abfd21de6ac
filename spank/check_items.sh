#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check_items.sh - the types spank/spank_private.h gives each SPANK item
# (TM_ITEM_TYPE_*, TM_ITEM_ARG_*) against the ones the spank.h being built
# against documents in its enum spank_item comments ("(uint32_t *)",
# "(uint32_t, uint32_t *)"). TM_ITEM refuses at compile time a call whose
# argument does not match the table; this keeps the table true to Slurm.
#
#   sh spank/check_items.sh SPANK_H [PRIVATE_H]   (make check-spank-items)
set -u
H=${1:?usage: check_items.sh SPANK_H [PRIVATE_H]}
P=${2:-$(dirname "$0")/spank_private.h}
[ -r "$H" ] || { echo "check-spank-items: cannot read $H"; exit 1; }

# norm TEXT: one space after commas, none before '*'.
norm() { printf '%s' "$1" | sed 's/[[:space:]]\{1,\}/ /g; s/ *\*/*/g; s/\*\([^*,)]\)/* \1/g; s/ *, */, /g; s/^ //; s/ $//'; }

# the enum's entries, each on one line: "S_NAME (types)"; comment marks
# dropped (a comment may run over two lines), and in the parentheses only
# the parts that are C types ("(=1 if --overcommit option is used,
# uint32_t *)" gives "(uint32_t *)")
items=$(sed -n '/^enum spank_item/,/^};/p' "$H" | tr '\n' ' ' | sed 's|/\*||g; s|\*/||g' |
	sed 's/\(S_[A-Z_]*\),/\n\1 /g' | sed -n 's/^\(S_[A-Z_]*\) .*(\([^()]*\*\)).*/\1 \2/p' |
	awk '{ name = $1; $1 = ""; n = split($0, part, ","); out = ""
	       for (i = 1; i <= n; i++) {
	           p = part[i]; gsub(/^ +| +$/, "", p)
	           if (p ~ /^[a-z_][a-z_0-9]*( *[*])*$/) out = out (out == "" ? "" : ", ") p
	       }
	       print name " (" out ")" }')
fail=0
n=0
for item in $(sed -n 's/^#define TM_ITEM_TYPE_\(S_[A-Z_]*\) .*/\1/p' "$P"); do
	type=$(sed -n "s/^#define TM_ITEM_TYPE_$item[[:space:]]\{1,\}//p" "$P")
	arg=$(sed -n "s/^#define TM_ITEM_ARG_$item[[:space:]]\{1,\}//p" "$P")
	want="($(norm "${arg:+$arg, }$type *"))"
	got=$(printf '%s\n' "$items" | sed -n "s/^$item (\(.*\))$/(\1)/p")
	got=$(norm "$got")
	n=$((n + 1))
	if [ -z "$got" ]; then
		echo "check-spank-items: $item: not in $H"
		fail=1
	elif [ "$got" != "$want" ]; then
		echo "check-spank-items: $item: spank.h says $got, spank_private.h $want"
		fail=1
	fi
done
[ $n -gt 0 ] || { echo "check-spank-items: no TM_ITEM_TYPE_ in $P"; exit 1; }
[ $fail -eq 0 ] && echo "check-spank-items: $n items match $H"
exit $fail
