#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the Debian testbed image that autopkgtest-virt-qemu boots, from
# the package registry only, and print the directory holding it (with
# --hash: print only the recipe's hash, build nothing):
#   build-image.sh [--hash] [SUITE]
# SUITE is bookworm (Debian 12, the default) or trixie (Debian 13).
#   image.qcow2   ext4 on the whole disk (the VM sees it as /dev/vda)
#   vmlinuz, initrd.img, kver   the image's own kernel, booted with -kernel
#                               by qemu-tcg.sh, so the disk needs no loader
#
# Why not autopkgtest-build-qemu: it runs vmdb2, which wants loop devices,
# kpartx and a boot loader install; a rootfs directory from mmdebstrap and
# mkfs.ext4 -d need none of that and run anywhere root can chroot.
#
# The image is cached under $VFIO_CACHE/autopkgtest/<hash>, the hash of
# the recipe (suite, packages, options, customize hook) and the mirror
# list, so it is rebuilt only when the recipe changes.  Old images of
# the same suite are removed when a new one is built; each suite keeps
# its own.
set -euo pipefail
# The whole script is one block, read before it runs: editing the file
# during a run (a long one, here) cannot change what the run does.
{

CACHE=${VFIO_CACHE:-/var/cache/vfio-dkms}/autopkgtest
hash_only=
if [ "${1:-}" = --hash ]; then
	hash_only=1
	shift
fi
SUITE=${1:-bookworm}
# Disk size: the rootfs is about 1 GiB; the rest is room for the DKMS
# build, the test packages and the logs.  The qcow2 stays sparse.
DISK_SIZE=6G

# What the tests need: the kernel and its headers for DKMS, the build
# tools, the init system and udev that bind devices at boot, sudo and
# passwd for the unprivileged users, python3 and apt-utils for
# autopkgtest's own helpers in the testbed, pciutils and kmod for the
# checks.  Everything is installed up front because the testbed has no
# package lists: autopkgtest installs only from the .debs it is given.
PACKAGES=(
	linux-image-amd64 linux-headers-amd64 dkms build-essential
	systemd systemd-sysv udev dbus sudo passwd python3-minimal
	apt-utils kmod pciutils procps initramfs-tools
)
case $SUITE in
bookworm) ;;
trixie)
	# dkms 3.1 and later sign the modules they build with a key of
	# their own, which openssl makes on first use; dkms only recommends
	# nothing of the kind, and without openssl it builds them unsigned.
	PACKAGES+=(openssl)
	;;
*)
	echo "build-image: unknown suite $SUITE (bookworm or trixie)" >&2
	exit 2
	;;
esac

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"
log() { echo "build-image: $*" >&2; }
die() { echo "build-image: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (chroot, mkfs)"

want mmdebstrap qemu-utils e2fsprogs
install_wanted || die "cannot install ${need_pkgs[*]}"

# The testbed uses the same Debian mirror as this machine: take the
# $SUITE, -updates and -security entries of the host's apt sources
# (whatever mirror the host is configured with), nothing else.  A suite
# the host does not list (trixie on this Debian 12 host) comes from the
# same mirrors as the host's own release: its entries with the suite
# renamed.  Nothing is added to the host's sources.
host_suite=$(sed -n "s/^VERSION_CODENAME=//p" /etc/os-release)
mirrors() {
	# shellcheck disable=SC2016 # $(...) are apt's fields, not the shell's
	apt-get indextargets --format '$(ORIGIN)|$(REPO_URI)|$(RELEASE)' \
		'Identifier: Packages' 2>/dev/null |
		awk -F'|' -v s="$SUITE" -v h="$host_suite" '
			function ours(r, x) {
				return r == x || r == x "-updates" || r == x "-security"
			}
			$1 != "Debian" { next }
			ours($3, s) { print "deb " $2 " " $3 " main"; next }
			h != "" && h != s && ours($3, h) {
				r = s substr($3, length(h) + 1)
				print "deb " $2 " " r " main"
			}' | sort -u
}
sources=$(mirrors)
if [ -z "$sources" ]; then
	host_apt update -qq >&2
	sources=$(mirrors)
fi
[ -n "$sources" ] || die "no Debian $SUITE entry in this machine's apt sources"
grep -q " $SUITE main\$" <<<"$sources" ||
	die "the apt sources lack the $SUITE suite itself"

# The recipe: what goes into the image and how.  Only these feed the
# hash, so editing the rest of this script reuses the cached image; bump
# RECIPE_VERSION when a change elsewhere changes the image.
RECIPE_VERSION=1
# No documentation, man pages or translations: a third less to unpack.
MMDEBSTRAP_OPTS=(
	--variant=minbase --mode=root
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/info/*'
	--aptopt='APT::Install-Recommends "false"'
)
# The customize hook runs after the packages are in, with the root
# directory as $1.
CUSTOMIZE=$(cat <<'EOF'
#!/bin/sh
set -eu
r=$1

echo vfio-testbed >"$r/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tvfio-testbed\n' >"$r/etc/hosts"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$r/etc/fstab"

# autopkgtest-virt-qemu drives the VM through a root shell on the second
# serial port; it waits for a login prompt on the first one (the getty
# systemd starts for console=ttyS0) to know the boot is over.
cat >"$r/etc/systemd/system/autopkgtest-shell@.service" <<'UNIT'
[Unit]
Description=Root shell for autopkgtest on %I
ConditionPathExists=/dev/%I
After=systemd-user-sessions.service

[Service]
# autopkgtest-virt-qemu 5.28 waits 5 s for a "# " after "type python3"
# unless the prompt came in the same read as the answer, and its prompt
# ends in "]# ", not "\n# ": when a busy host reads both at once it
# waits for a prompt that never comes.  bash's PROMPT_COMMAND holds each
# prompt back a little, so it always arrives in a read of its own.
Environment=PROMPT_COMMAND="sleep 0.5"
ExecStart=/bin/bash --norc --noprofile --noediting -i
StandardInput=tty-fail
StandardOutput=tty
StandardError=tty
TTYPath=/dev/%I
SendSIGHUP=yes
# The shell exits when autopkgtest hangs up or the tty goes away.
SuccessExitStatus=0 208 SIGHUP SIGINT SIGTERM SIGPIPE

[Install]
WantedBy=multi-user.target
UNIT
mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
ln -sf ../autopkgtest-shell@.service \
	"$r/etc/systemd/system/multi-user.target.wants/autopkgtest-shell@ttyS1.service"

# Root logs in without a password on the console, for debugging by hand.
chroot "$r" passwd -d root >/dev/null

# A small initramfs: the emulated CPUs unpack it and run its udev on
# every boot, and the reboot test boots twice.  Only what finds the root
# file system on the virtio disk; everything else loads from the disk.
echo MODULES=list >"$r/etc/initramfs-tools/conf.d/vfio-testbed"
printf '%s\n' virtio_pci virtio_blk ext4 >>"$r/etc/initramfs-tools/modules"
chroot "$r" update-initramfs -u -k all

# After each boot autopkgtest-virt-qemu mounts its shared directory
# over 9p and allows 10 s for it: loading the 9p modules then (xz and
# signature checked, under TCG, with the boot's services still
# starting) can take longer on a busy host.  Load them while booting,
# which has the reboot timeout.
printf '%s\n' 9pnet_virtio 9p >"$r/etc/modules-load.d/autopkgtest-9p.conf"

# Nothing in the testbed may wait for a network or run periodic jobs that
# compete with the test for the two emulated CPUs.
for t in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	 fstrim.timer; do
	ln -sf /dev/null "$r/etc/systemd/system/$t"
done

# Boot the way a distribution's CI testbed does; nothing kept from the
# build machine.
rm -f "$r/etc/machine-id" "$r/var/lib/dbus/machine-id"
: >"$r/etc/machine-id"
EOF
)
hash=$( { echo "$RECIPE_VERSION $SUITE $DISK_SIZE"
	  printf '%s\n' "${PACKAGES[@]}" "${MMDEBSTRAP_OPTS[@]}"
	  echo "$CUSTOMIZE"; echo "$sources"; } | sha256sum | cut -c1-16)
if [ -n "$hash_only" ]; then
	echo "$hash"
	exit 0
fi
out=$CACHE/$hash
if [ -f "$out/done" ]; then
	log "cached image $out (recipe unchanged)"
	echo "$out"
	exit 0
fi

mkdir -p "$CACHE"
exec 8>"$CACHE/build.lock"
flock 8
if [ -f "$out/done" ]; then
	echo "$out"
	exit 0
fi

start=$(date +%s)
work=$(mktemp -d "$CACHE/build.XXXXXX")
root=$work/root
cleanup() {
	# mmdebstrap unmounts on its own; a failed hook may leave mounts.
	local m
	awk -v r="$root" 'index($2, r) == 1 { print $2 }' /proc/mounts |
		sort -r | while read -r m; do
			umount -l "$m" 2>/dev/null || true
		done
	rm -rf "$work"
}
trap cleanup EXIT

printf '%s\n' "$CUSTOMIZE" >"$work/customize.sh"
chmod 755 "$work/customize.sh"

log "mmdebstrap $SUITE (${#PACKAGES[@]} packages) into $root"
mmdebstrap "${MMDEBSTRAP_OPTS[@]}" \
	--include="$(IFS=,; echo "${PACKAGES[*]}")" \
	--customize-hook="$work/customize.sh \"\$1\"" \
	"$SUITE" "$root" - <<<"$sources" >"$work/mmdebstrap.log" 2>&1 || {
	tail -n 30 "$work/mmdebstrap.log" >&2
	die "mmdebstrap failed"
}
mmdebstrap_s=$(($(date +%s) - start))

# The trailing slash: with merged /usr (trixie), lib/modules is a link.
kver=$(find "$root/lib/modules/" -mindepth 1 -maxdepth 1 -printf '%f\n' |
	sort -V | tail -n 1)
[ -n "$kver" ] || die "no kernel in the image"
[ -d "$root/usr/src/linux-headers-$kver" ] ||
	die "the headers for $kver are not in the image"
[ -f "$root/boot/initrd.img-$kver" ] || die "no initramfs for $kver"

cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/initrd.img"
echo "$kver" >"$work/kver"
echo "$SUITE" >"$work/suite"

log "ext4 image from $(du -sh "$root" | cut -f1) of files"
mkfs.ext4 -q -F -L vfio-root -d "$root" "$work/image.raw" "$DISK_SIZE" >&2
qemu-img convert -O qcow2 "$work/image.raw" "$work/image.qcow2" >&2
rm -f "$work/image.raw"
rm -rf "$root"

cp "$work/mmdebstrap.log" "$work/build.log"
rm -f "$work/mmdebstrap.log" "$work/customize.sh"
total_s=$(($(date +%s) - start))
printf 'mmdebstrap %d s, total %d s, kernel %s, qcow2 %s\n' \
	"$mmdebstrap_s" "$total_s" "$kver" \
	"$(du -h "$work/image.qcow2" | cut -f1)" >"$work/timing"
log "$(cat "$work/timing")"

# Publish atomically, then drop images of older recipes of this suite
# (an image from before the suite was recorded is a bookworm one).
for old in "$CACHE"/*/done; do
	[ -e "$old" ] || continue
	old=$(dirname "$old")
	[ "$(cat "$old/suite" 2>/dev/null || echo bookworm)" = "$SUITE" ] ||
		continue
	rm -rf "$old"
done
rm -rf "$out"
mv "$work" "$out"
trap - EXIT
touch "$out/done"
echo "$out"
}
