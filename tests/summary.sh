#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Adds up the results of every test step of `make check` and prints the
# closing "N passed, N failed" line. State lives in $BUILDDIR/test-summary.
#
#   summary.sh begin                 reset the counters
#   summary.sh unit BINARY           run one Criterion binary, count its tests
#   summary.sh add NAME PASSED FAILED  record the counts of a scripted step
#   summary.sh fail-step NAME        a step that could not even report counts
#   summary.sh end                   print totals; exit 1 if anything failed
set -u
state="${BUILDDIR:-build}/test-summary"

add() { # name passed failed
	printf '%s %s %s\n' "$1" "$2" "$3" >>"$state"
}

case "${1:-}" in
begin)
	mkdir -p "$(dirname "$state")"
	: >"$state"
	;;
unit)
	bin=$2
	name=$(basename "$bin")
	log="$state.$name.log"
	# in a /tmp of its own, when it can be had (tests/tmp_check.sh)
	sh "$(dirname "$0")/tmp_check.sh" run "$bin" --jobs 1 >"$log" 2>&1
	rc=$?
	cat "$log"
	line=$(grep 'Synthesis: Tested:' "$log" | tail -n 1)
	tested=$(printf '%s' "$line" | sed -n 's/.*Tested: \([0-9]*\).*/\1/p')
	passing=$(printf '%s' "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
	if [ -z "$tested" ] || [ -z "$passing" ]; then
		echo "summary: $name printed no Criterion synthesis (exit $rc)" >&2
		add "$name" 0 1
		exit 1
	fi
	failed=$((tested - passing))
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
	fi
	# Criterion runs each test in a child and does not fail it on a
	# sanitizer report printed at the child's exit: count those here.
	reports=$(grep -c -E 'ERROR: (AddressSanitizer|LeakSanitizer)|: runtime error: ' "$log")
	if [ "$reports" -gt 0 ]; then
		echo "summary: $name: $reports sanitizer report(s)" >&2
		failed=$((failed + reports))
	fi
	add "$name" "$passing" "$failed"
	[ "$failed" -eq 0 ]
	;;
add)
	add "$2" "$3" "$4"
	;;
fail-step)
	echo "summary: step $2 failed" >&2
	add "$2" 0 1
	;;
end)
	passed=0 failed=0
	while read -r name p f; do
		passed=$((passed + p))
		failed=$((failed + f))
		if [ "$f" -ne 0 ]; then echo "FAILED: $name ($f)"; fi
	done <"$state"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	;;
*)
	echo "usage: summary.sh begin|unit BIN|add NAME P F|fail-step NAME|end" >&2
	exit 2
	;;
esac
