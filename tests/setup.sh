#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install what building and testing vfio-dkms needs on a bare Debian 12
# machine, and unpack the guest kernel into the cache.  Idempotent and
# quick when everything is already there.  Prints the cache directory's
# environment on stdout for `eval`.
set -euo pipefail

CACHE=${VFIO_CACHE:-/var/cache/vfio-dkms}
BACKPORTS_LIST=/etc/apt/sources.list.d/vfio-dkms-backports.list

log() { echo "setup: $*" >&2; }

need_pkgs=()
want() {
	local pkg
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
			grep -q 'install ok installed' || need_pkgs+=("$pkg")
	done
}

apt_updated=
apt_update() {
	[ -n "$apt_updated" ] && return
	log "apt-get update"
	apt-get update -qq >&2
	apt_updated=1
}

apt_install() {
	[ $# -gt 0 ] || return 0
	apt_update
	log "installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "$@" >&2
}

if [ "$(id -u)" -ne 0 ]; then
	echo "setup: must run as root (apt-get, /var/cache)" >&2
	exit 1
fi

# 6.12 headers come from bookworm-backports: a private sources list next
# to the image's own mirror, nothing else changed.
if [ ! -f "$BACKPORTS_LIST" ]; then
	echo 'deb http://deb.debian.org/debian bookworm-backports main' \
		>"$BACKPORTS_LIST"
	apt_updated=
fi

want build-essential kmod cpio gzip xz-utils qemu-system-x86 \
	busybox-static sparse linux-headers-amd64 python3 \
	socat file
apt_install "${need_pkgs[@]}"
need_pkgs=()

# Newest 6.12 header tree for the build test.
if ! ls -d /usr/src/linux-headers-6.12.*-amd64 >/dev/null 2>&1; then
	apt_update
	h612=$(apt-cache search --names-only \
		'^linux-headers-6\.12\.[0-9.]*\+deb12-amd64$' |
		awk '{print $1}' | sort -V | tail -n 1)
	if [ -n "$h612" ]; then
		apt_install -t bookworm-backports "$h612"
	else
		log "no 6.12 headers in bookworm-backports"
	fi
fi

# The guest boots the distribution kernel whose headers are installed.
kver=$(find /usr/src -maxdepth 1 -name 'linux-headers-6.1.*-amd64' \
	-printf '%f\n' | sed 's/^linux-headers-//' | sort -V | tail -n 1)
[ -n "$kver" ] || { echo "setup: no 6.1 headers" >&2; exit 1; }
mkdir -p "$CACHE"
kimg=$CACHE/kernel-$kver
if [ ! -f "$kimg/boot/vmlinuz-$kver" ]; then
	log "fetching linux-image-$kver"
	tmp=$(mktemp -d "$CACHE/dl.XXXXXX")
	if ! (cd "$tmp" && apt-get download -qq "linux-image-$kver" >&2); then
		apt_update
		(cd "$tmp" && apt-get download -qq "linux-image-$kver" >&2)
	fi
	rm -rf "$kimg.tmp"
	dpkg-deb -x "$tmp"/linux-image-*.deb "$kimg.tmp"
	rm -rf "$tmp" "$kimg"
	mv "$kimg.tmp" "$kimg"
fi

# checkpatch.pl is not in the header packages: take it (and the data files
# it reads) from Debian's kernel source package.
cp_dir=$CACHE/checkpatch
if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
	want linux-source-6.1
	apt_install "${need_pkgs[@]}"
	need_pkgs=()
	tarball=$(find /usr/src -maxdepth 1 -name 'linux-source-6.1*.tar.xz' |
		sort -V | tail -n 1)
	top=$(basename "$tarball" .tar.xz)
	rm -rf "$cp_dir.tmp" && mkdir -p "$cp_dir.tmp"
	tar -C "$cp_dir.tmp" --strip-components=1 -xJf "$tarball" \
		"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch"
	rm -rf "$cp_dir" && mv "$cp_dir.tmp" "$cp_dir"
fi

cat <<EOV
VFIO_CACHE=$CACHE
VFIO_GUEST_KVER=$kver
VFIO_GUEST_KERNEL=$kimg/boot/vmlinuz-$kver
VFIO_GUEST_MODULES=$kimg/lib/modules/$kver
VFIO_CHECKPATCH=$cp_dir/scripts/checkpatch.pl
EOV
