#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Fetch Debian packages of any suite without touching the host's apt
# configuration or installing anything:
#   scripts/fetch-debs.sh SUITE DIR PKG...
# downloads PKG... (exact names) from SUITE and unpacks each into DIR.
# The suite's package lists live in a private apt state under
# $VFIO_CACHE/apt/SUITE, on the same mirror as the host's own Debian
# entry; the host's sources, lists and pins are never read or written.
#   scripts/fetch-debs.sh SUITE --search REGEX
# prints the package names of SUITE that match REGEX, one a line.
set -euo pipefail

CACHE=${VFIO_CACHE:-/var/cache/vfio-dkms}
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
die() { echo "fetch-debs: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: fetch-debs.sh SUITE DIR PKG... | SUITE --search REGEX"
suite=$1
state=$CACHE/apt/$suite

aptp() {
	apt-get -q -o Dir::Etc::SourceList="$state/sources.list" \
		-o Dir::Etc::SourceParts="$state/empty" \
		-o Dir::Etc::Preferences="$state/empty/none" \
		-o Dir::Etc::PreferencesParts="$state/empty" \
		-o Dir::State="$state/state" -o Dir::Cache="$state/cache" \
		-o Dir::State::status="$state/status" \
		-o APT::Sandbox::User=root -o APT::Get::List-Cleanup=0 "$@"
}
aptcache() {
	apt-cache -o Dir::Etc::SourceList="$state/sources.list" \
		-o Dir::Etc::SourceParts="$state/empty" \
		-o Dir::State="$state/state" -o Dir::Cache="$state/cache" \
		-o Dir::State::status="$state/status" "$@"
}

# Lists older than a day are refreshed: a new kernel ABI replaces the
# old packages in the archive.
if [ ! -f "$state/sources.list" ] ||
   [ -n "$(find "$state/stamp" -mmin +1440 2>/dev/null)" ] ||
   [ ! -f "$state/stamp" ]; then
	uri=$(host_debian_mirror)
	if [ -z "$uri" ]; then
		apt-get update -qq >&2
		uri=$(host_debian_mirror)
	fi
	[ -n "$uri" ] || die "no Debian entry in this machine's apt sources"
	mkdir -p "$state/state/lists/partial" "$state/cache/archives/partial" \
		"$state/empty"
	: >"$state/status"
	echo "deb $uri $suite main" >"$state/sources.list"
	aptp update -qq >&2 || die "apt-get update of $suite failed"
	touch "$state/stamp"
fi

if [ "$2" = --search ]; then
	[ $# -eq 3 ] || die "usage: fetch-debs.sh SUITE --search REGEX"
	aptcache search --names-only "$3" | awk '{ print $1 }' | sort -V
	exit 0
fi

dir=$2
shift 2
[ $# -gt 0 ] || die "no package named"
dl=$(mktemp -d "$CACHE/dl.XXXXXX")
trap 'rm -rf "$dl"' EXIT
(cd "$dl" && aptp download -qq "$@" >&2) || die "download of $* from $suite failed"
mkdir -p "$dir"
for deb in "$dl"/*.deb; do
	dpkg-deb -x "$deb" "$dir"
done
