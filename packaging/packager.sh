#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# packager.sh - "Name <address>" of whoever builds the packages: the
# Maintainer of the .deb (and its changelog's signature), the Packager of
# the .rpm. Debian's own variables first (DEBFULLNAME, DEBEMAIL, as dch
# reads them; DEBEMAIL may hold "Name <address>"), else the author of the
# commit being built. A site that builds its own packages is their
# maintainer: there is no placeholder to ship.
#
#   sh packaging/packager.sh      (exit 1 with what to set when unknown)
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
case ${DEBEMAIL:-} in
*'<'*'>'*) who=$DEBEMAIL ;;
?*@?*) who="${DEBFULLNAME:-$(git -C "$src" log -1 --format=%an 2>/dev/null || true)} <$DEBEMAIL>" ;;
*) who=$(git -C "$src" log -1 --format='%an <%ae>' 2>/dev/null || true) ;;
esac
case $who in
?*' <'?*@?*'>') printf '%s\n' "$who" ;;
*)
	echo "packager: who builds these packages? Set DEBFULLNAME and DEBEMAIL" \
		"(e.g. DEBFULLNAME='Jane Admin' DEBEMAIL=jane@example.org)" >&2
	exit 1
	;;
esac
