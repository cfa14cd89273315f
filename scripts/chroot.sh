#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A Debian build chroot for one distribution of the kernel matrix, made
# once with mmdebstrap under the cache (trixie-backports: from a copy of
# trixie's) and brought up to date on every call, so that "newest" means
# what a new user would get today:
#   scripts/chroot.sh DIST [PACKAGE...]
# DIST is trixie, trixie-backports or sid.  The chroot holds that
# distribution's compiler and build-essential, its newest kernel image
# and headers (from trixie-backports for trixie-backports), and kmod,
# and the PACKAGEs, if any (e.g. a source package's build dependencies):
# a caller that names packages gets them installed in the chroot, under
# its lock, and kept up to date with the rest; the others do not see
# them as missing.
# Prints shell assignments for eval on stdout:
#   CHROOT  the directory     KVER  the kernel release it has
#   KTREE   the header tree inside it, as seen from the chroot
# The host is not changed beyond installing mmdebstrap (a package of the
# host's own release): the chroot has its own apt sources.
set -euo pipefail

CACHE=${VFIO_CACHE:-/var/cache/vfio-dkms}
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
die() { echo "chroot: $*" >&2; exit 1; }
log() { echo "chroot: $*" >&2; }

[ $# -ge 1 ] || die "usage: scripts/chroot.sh trixie|trixie-backports|sid [PACKAGE...]"
dist=$1
shift
extra_pkgs=("$@")
# sid's Release is valid for a week only; a mirror that is a snapshot
# (as this project's machines use) serves it past that date.
aptopts=()
case $dist in
trixie) suite=trixie extra='' pin='' ;;
trixie-backports) suite=trixie extra=trixie-backports pin="-t trixie-backports" ;;
sid) suite=sid extra='' pin=''
	aptopts=(--aptopt='Acquire::Check-Valid-Until "false"') ;;
*) die "unknown distribution $dist" ;;
esac
[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap, chroot)"
want mmdebstrap
install_wanted

uri=$(host_debian_mirror)
[ -n "$uri" ] || die "no Debian entry in this machine's apt sources"

dir=$CACHE/chroot/$dist
mkdir -p "$CACHE/chroot"
exec 7>"$CACHE/chroot/$dist.lock"
flock -w 3600 7 || die "gave up waiting for $dir.lock"

# INITRD=No: the kernel's postinst hooks (initramfs-tools' and dracut's
# alike) make no initramfs; the VM boots the kernel with one of its own.
in_chroot() {
	chroot "$dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive INITRD=No "$@"
}

# chroot_apt_install PACKAGE...: refresh the chroot's package lists and
# install or upgrade the PACKAGEs (from trixie-backports there).
# shellcheck disable=SC2086 # $pin: 0 or 2 words
chroot_apt_install() {
	in_chroot apt-get update -qq >&2 &&
		in_chroot apt-get install -y -qq \
			-o Dpkg::Options::=--force-confold $pin "$@" >&2
}

pkgs=(kmod linux-image-amd64 linux-headers-amd64 "${extra_pkgs[@]}")
# sid's mirror is rewritten several times a day: a run that meets it
# half-synced fails at apt-get update, and a second one usually does not.
mmdebstrap_once() {
	# shellcheck disable=SC2086,SC2016 # $pin: 0 or 2 words; $1: mmdebstrap's
	mmdebstrap --variant=buildd --mode=root -q "${aptopts[@]}" \
		--aptopt='APT::Install-Recommends "false"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--customize-hook='mkdir -p "$1/etc/initramfs-tools" && echo update_initramfs=no >"$1/etc/initramfs-tools/update-initramfs.conf"' \
		--customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive INITRD=No apt-get install -y -q -o Dpkg::Options::=--force-confold $pin ${pkgs[*]} >&2" \
		"$suite" "$dir" "${mirrors[@]}" >&2
}
# trixie-backports is trixie with a newer kernel: a copy of the trixie
# chroot with the backports suite added costs a kernel's download and
# unpacking, where a second mmdebstrap costs a whole base system again
# (from cold caches, 9.5 minutes of a make check against 2).
derive_from_trixie() {
	local base=$CACHE/chroot/trixie
	"$0" trixie >/dev/null
	# Under trixie's lock: its own update may be rewriting it.
	(flock -w 3600 6 && rm -rf "$dir" && cp -a "$base" "$dir") \
		6>"$base.lock" || return 1
	rm -f "$dir/.done"
	rm -rf "$dir/tmp/"*
	echo "deb $uri $extra main" >"$dir/etc/apt/sources.list.d/$extra.list"
	chroot_apt_install "${pkgs[@]}"
}
if [ ! -f "$dir/.done" ] && [ "$dist" = trixie-backports ]; then
	log "making the $dist chroot from the trixie one (a few minutes, once)"
	derive_from_trixie || { rm -rf "$dir"; die "cannot make $dist from trixie"; }
	touch "$dir/.done"
elif [ ! -f "$dir/.done" ]; then
	log "making the $dist chroot with mmdebstrap (a few minutes, once)"
	rm -rf "$dir"
	mirrors=("deb $uri $suite main")
	[ -z "$extra" ] || mirrors+=("deb $uri $extra main")
	# The kernel packages go in after the base, so that a backports
	# kernel can be asked for by suite.  The VM boots the kernel with an
	# initramfs of its own: the distribution's is never generated (the
	# update_initramfs=no below is for initramfs-tools' triggers, which
	# do not look at INITRD).
	mmdebstrap_once || { rm -rf "$dir"; sleep 30; mmdebstrap_once; } ||
		die "mmdebstrap of $dist failed"
	touch "$dir/.done"
elif [ -n "$(find "$dir/.done" -mmin +720)" ]; then
	# Half a day old: take what the archive has now.
	log "updating the $dist chroot"
	if chroot_apt_install "${pkgs[@]}"; then
		in_chroot apt-get autoremove -y -qq --purge >&2 || true
		touch "$dir/.done"
	else
		log "update failed; using the chroot as it is"
	fi
fi
# Packages a caller asks for that the chroot does not have yet (it was
# made for another caller): installed once, then updated with the rest.
missing=()
for p in "${extra_pkgs[@]}"; do
	# shellcheck disable=SC2016 # dpkg-query's field, not the shell's
	in_chroot dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null |
		grep -q '^.i' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]} in the $dist chroot"
	chroot_apt_install "${missing[@]}" ||
		die "cannot install ${missing[*]} in the $dist chroot"
fi

# The newest kernel that has both its image and its headers.
kver=
for k in $(find "$dir/usr/src" -maxdepth 1 -name 'linux-headers-*-amd64' \
	-printf '%f\n' | sed 's/^linux-headers-//' | sort -V); do
	[ -f "$dir/boot/vmlinuz-$k" ] && kver=$k
done
[ -n "$kver" ] || die "no kernel with image and headers in $dir"
log "$dist: kernel $kver, $(in_chroot gcc --version | head -n 1)"
cat <<EOV
CHROOT=$dir
KVER=$kver
KTREE=/usr/src/linux-headers-$kver
EOV
