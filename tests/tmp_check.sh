#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# tmp_check.sh - `make check` leaves nothing in /tmp (issue 34).
#
#   tmp_check.sh begin        note what /tmp holds; make an empty $BUILDDIR/tmp,
#                             the TMPDIR the unit tests run with
#                             (tests/unit/tmpdir.h)
#   tmp_check.sh run CMD...   run a unit test binary; as root, in a mount
#                             namespace of its own whose /tmp is an empty
#                             tmpfs, and what it leaves there is noted
#   tmp_check.sh end          fail (through tests/summary.sh, as check-tmp)
#                             when the run left anything in $BUILDDIR/tmp, in
#                             a unit test's own /tmp, a munge directory of this
#                             build's test clusters in /tmp, or (without root)
#                             a new name in /tmp of the kinds this tree makes
#                             there (tm-*, tm_*, tmatch*, treematch*, test_*)
#
# /tmp is shared: others working on the machine at the same time make files
# there that are not this run's. As root every unit test gets a /tmp of its
# own, so what it leaves is known exactly; the end-to-end suites make
# nothing in /tmp but their clusters' munge directories, whose names come
# from the cluster directories under $BUILDDIR/e2e.
set -u
B=${BUILDDIR:-build}
before=$B/tmp-check.before
left_file=$B/tmp-check.left

private_tmp() {
	[ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 &&
		unshare -m --propagation private true 2>/dev/null
}

case "${1:-}" in
begin)
	rm -rf "$B/tmp"
	mkdir -p "$B/tmp"
	: >"$left_file"
	ls -A /tmp >"$before" 2>/dev/null || : >"$before"
	;;
run)
	shift
	if ! private_tmp; then
		"$@"
		exit $?
	fi
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o mode=1777,size=1g tmpfs /tmp || exit 125
		left=$1
		shift
		"$@"
		rc=$?
		for f in $(ls -A /tmp); do echo "/tmp/$f (by $(basename "$1"))" >>"$left"; done
		exit $rc' tmp_check "$left_file" "$@"
	;;
end)
	left=""
	[ -d "$B/tmp" ] && for f in $(ls -A "$B/tmp"); do left="$left
  $B/tmp/$f"; done
	[ -s "$left_file" ] && left="$left
$(sed 's/^/  /' "$left_file")"
	ours=""
	for d in "$B"/e2e/*/; do
		[ -d "$d" ] || continue
		ours="$ours $(basename "$(sh "$(dirname "$0")/e2e/cluster.sh" munge-dir --dir "$d")")"
	done
	for f in $(ls -A /tmp 2>/dev/null); do
		grep -qxF -- "$f" "$before" 2>/dev/null && continue
		case $f in
		tmatch-munge-*)
			case " $ours " in *" $f "*) ;; *) continue ;; esac
			;;
		tm-* | tm_* | tmatch* | treematch* | test_*)
			private_tmp && continue # the unit tests' own /tmp was checked
			;;
		*) continue ;;
		esac
		left="$left
  /tmp/$f"
	done
	rm -f "$before" "$left_file"
	if [ -n "$left" ]; then
		echo "check-tmp: left behind by this run:$left"
		BUILDDIR=$B sh "$(dirname "$0")/summary.sh" add check-tmp 0 1
		exit 1
	fi
	echo "check-tmp: nothing left in /tmp or $B/tmp"
	BUILDDIR=$B sh "$(dirname "$0")/summary.sh" add check-tmp 1 0
	;;
*)
	echo "usage: tmp_check.sh begin|run CMD...|end" >&2
	exit 2
	;;
esac
