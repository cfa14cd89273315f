#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --qemu-command for autopkgtest-virt-qemu.  It passes the command line
# autopkgtest built through, except what assumes KVM (autopkgtest adds
# -enable-kvm and a KVM CPU model whenever /dev/kvm exists, and KVM does
# not work on these machines), and adds the machine the tests need:
#   TCG, q35 with an Intel IOMMU doing interrupt remapping (which needs
#   the split irqchip), two edu devices (1234:11e8) for the vfio tests,
#   a pci-serial (1b36:0002, driver "serial") that devices.conf binds by
#   vendor:device and that must come back to its driver on removal, and
#   an e1000 (driver "e1000") that is never configured and must stay put.
# The devices sit at fixed slots so the guest addresses are stable:
#   00:10.0 edu   00:11.0 edu   00:12.0 pci-serial   00:13.0 e1000
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

# console=ttyS0 makes systemd start the getty whose "login:" tells
# autopkgtest the boot is done; ttyS1 carries its root shell.
append="root=/dev/vda rw rootfstype=ext4 console=ttyS0,115200 quiet"
append+=" intel_iommu=on net.ifnames=0 panic=-1 systemd.show_status=0"
# The emulated CPUs run at the mercy of the host's load: the soft lockup
# detector then reports the host being busy, not a guest problem (the
# tests still fail on a hung task, an oops or a warning).
append+=" nosoftlockup"

# shellcheck disable=SC2054 # the commas are QEMU's option syntax
cmd=(qemu-system-x86_64
	-accel tcg,thread=multi
	-machine q35,kernel-irqchip=split
	-cpu max
	-device intel-iommu,intremap=on,caching-mode=on
	-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" -append "$append"
	"${args[@]}"
	-device edu,addr=10.0
	-device edu,addr=11.0
	-device pci-serial,addr=12.0
	-device e1000,addr=13.0,netdev=unused0,romfile=
	-netdev user,id=unused0,restrict=on
)
if [ -n "${VFIO_QEMU_LOG:-}" ]; then
	printf '%q ' "${cmd[@]}" >>"$VFIO_QEMU_LOG"
	echo >>"$VFIO_QEMU_LOG"
fi
exec "${cmd[@]}"
