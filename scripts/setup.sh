#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install what building and testing vfio-dkms needs on a bare Debian 12
# machine, and unpack the guest kernel into the cache.  Idempotent and
# quick when everything is already there.  Prints the cache directory's
# environment on stdout for `eval`.
#
# The host rule: only packages of the host's own release are installed,
# and only when missing; no apt source, pin or kernel image is added.
# Kernels, headers and tools of other suites are unpacked under the cache
# (scripts/fetch-debs.sh).
#
# VFIO_SETUP_PROFILE=demo (make demo) sets up only what the demo needs:
# the VM and the module build for the guest kernel, no build checkers.
set -euo pipefail

CACHE=${VFIO_CACHE:-/var/cache/vfio-dkms}
PROFILE=${VFIO_SETUP_PROFILE:-check}
OLD_BACKPORTS_LIST=/etc/apt/sources.list.d/vfio-dkms-backports.list
FETCH=$(cd "$(dirname "$0")" && pwd)/fetch-debs.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

log() { echo "setup: $*" >&2; }

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

# An earlier version of this script added bookworm-backports to the
# host's apt sources; take that back.  Nothing here changes the host's
# sources again: what comes from another suite is fetched into the cache.
if [ -f "$OLD_BACKPORTS_LIST" ]; then
	log "removing $OLD_BACKPORTS_LIST (left by an older vfio-dkms checkout)"
	rm -f "$OLD_BACKPORTS_LIST"
fi

want build-essential kmod cpio gzip xz-utils qemu-system-x86 \
	linux-headers-amd64 python3 socat file
[ "$PROFILE" = demo ] || want sparse dwarves
# What scripts/warm-caches.sh needs in the background (chroots, testbed
# images, the debug kernel), installed here so that it never runs apt
# beside a stage that does.
[ "$PROFILE" = demo ] || want mmdebstrap qemu-utils e2fsprogs \
	bc bison flex libelf-dev libssl-dev linux-source-6.1
# And what the stages that run side by side would install (the
# autopkgtest stage, started right after this, beside pkg and the rest):
# the package build (debian/control's Build-Depends) and its checkers.
[ "$PROFILE" = demo ] || want autopkgtest dpkg-dev debhelper dh-dkms dkms \
	fakeroot lintian rpm rpmlint git
apt_install "${need_pkgs[@]}"
need_pkgs=()

# busybox for the test VM's initramfs, unpacked from busybox-static
# without installing it: the host keeps whichever busybox it has.
busybox=$CACHE/busybox/bin/busybox
if [ ! -x "$busybox" ]; then
	log "fetching busybox-static"
	rm -rf "$CACHE/busybox.tmp"
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/dl.XXXXXX")
	# apt-get download runs as _apt when that user may write there.
	chown _apt "$tmp" 2>/dev/null || true
	if ! (cd "$tmp" && apt-get download -qq busybox-static >&2); then
		apt_update
		(cd "$tmp" && apt-get download -qq busybox-static >&2)
	fi
	dpkg-deb -x "$tmp"/busybox-static_*.deb "$CACHE/busybox.tmp"
	rm -rf "$tmp" "$CACHE/busybox"
	mv "$CACHE/busybox.tmp" "$CACHE/busybox"
fi

# Header trees of kernels the host does not run, for the W=1 build test:
# the newest 6.12 of bookworm-backports, unpacked under the cache with
# its kbuild tools.  Its package would pull a backports kernel image
# onto the host; unpacked, it is only a directory.
trees=()
[ "$PROFILE" = demo ] || for d in /usr/src/linux-headers-*-amd64; do
	[ -f "$d/Makefile" ] && trees+=("$d")
done
bpo=
[ "$PROFILE" = demo ] || bpo=$("$FETCH" bookworm-backports --search \
	'^linux-headers-6\.12\.[0-9.]*\+deb12-amd64$' | tail -n 1 || true)
if [ -n "$bpo" ]; then
	kv=${bpo#linux-headers-}
	base=${kv%-amd64}
	kroot=$CACHE/kernels/$kv
	ktree=$kroot/usr/src/linux-headers-$kv
	if [ ! -f "$kroot/.done" ]; then
		log "fetching headers $kv from bookworm-backports"
		rm -rf "$kroot"
		"$FETCH" bookworm-backports "$kroot" "linux-headers-$kv" \
			"linux-headers-$base-common" "linux-kbuild-$base"
		# The arch tree includes the common one by absolute path.
		sed -i "s|^include /usr/src/|include $kroot/usr/src/|" \
			"$ktree/Makefile"
		touch "$kroot/.done"
	fi
	trees+=("$ktree")
elif [ "$PROFILE" != demo ]; then
	log "no 6.12 headers in bookworm-backports"
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
	# apt-get download runs as _apt when that user may write there.
	chown _apt "$tmp" 2>/dev/null || true
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
if [ "$PROFILE" != demo ] && [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
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
VFIO_BUSYBOX=$busybox
VFIO_KERNEL_TREES="${trees[*]}"
EOV
