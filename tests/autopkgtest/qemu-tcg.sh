#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --qemu-command for autopkgtest-virt-qemu.  It passes the command line
# autopkgtest built through, except what assumes KVM (autopkgtest adds
# -enable-kvm and a KVM CPU model whenever /dev/kvm exists, and KVM does
# not work on these machines), and puts the machine the tests need in
# front: the autopkgtest profile of tests/vm/machines.toml (TCG, q35
# with an Intel IOMMU doing interrupt remapping, edu devices, a
# pci-serial and an e1000 at fixed slots), read through
# `tests/vm/vmrun.py --print-args`.  Its devices come before
# autopkgtest's, so that QEMU gives autopkgtest's disks other slots.
#
# The image has no boot loader: the kernel and initramfs come from the
# image directory that build-image.sh printed, given in
# VFIO_AUTOPKGTEST_IMAGE_DIR (or as the first argument before "--").
# VFIO_QEMU_LOG, when set, receives the final command line.
set -euo pipefail

dir=${VFIO_AUTOPKGTEST_IMAGE_DIR:-}
if [ $# -ge 2 ] && [ "$2" = -- ]; then
	dir=$1
	shift 2
fi
if [ -z "$dir" ] || [ ! -f "$dir/vmlinuz" ] || [ ! -f "$dir/initrd.img" ]; then
	echo "qemu-tcg: set VFIO_AUTOPKGTEST_IMAGE_DIR to the directory" \
		"build-image.sh printed (got \"$dir\")" >&2
	exit 2
fi

args=()
while [ $# -gt 0 ]; do
	case $1 in
	-enable-kvm | --enable-kvm)
		;;
	-accel | -machine | -M | -cpu)
		# Ours below; a second -machine would override q35's options.
		shift
		;;
	*)
		args+=("$1")
		;;
	esac
	shift
done

# The machine's own kernel arguments (console, IOMMU) come from the
# profile; these are the image's.  The emulated CPUs run at the mercy of
# the host's load: the soft lockup detector then reports the host being
# busy, not a guest problem (the tests still fail on a hung task, an
# oops or a warning).
append="root=/dev/vda rw rootfstype=ext4 quiet net.ifnames=0"
append+=" systemd.show_status=0 nosoftlockup"

here=$(cd "$(dirname "$0")" && pwd)
machine=$(python3 "$here/../vm/vmrun.py" --print-args --machine autopkgtest \
	--kernel "$dir/vmlinuz" --initrd "$dir/initrd.img" --append "$append")
mapfile -t cmd <<<"$machine"
cmd+=("${args[@]}")
if [ -n "${VFIO_QEMU_LOG:-}" ]; then
	printf '%q ' "${cmd[@]}" >>"$VFIO_QEMU_LOG"
	echo >>"$VFIO_QEMU_LOG"
fi
exec "${cmd[@]}"
