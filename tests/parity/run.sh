#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The parity stage of `make check`: unchanged Debian 12 binaries drive
# the kernel's VFIO and then ours in one boot of the test VM, through
# the ABI they were built for, and what they saw is compared
# (tests/parity/guest.sh): dpdk-devbind.py, driverctl, dpdk-testpmd
# on two e1000e joined by a QEMU hub, and QEMU 7.2 with -device
# vfio-pci.  Their tree is made once under the cache
# (tests/parity/rootfs.sh) and shared with the guest over 9p.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
if ! dir=$(tests/parity/rootfs.sh); then
	echo "not ok - clients/rootfs: tests/parity/rootfs.sh failed"
	exit 1
fi
exec tests/vm/run-suite.sh --machine clients --no-programs \
	--intree virtio_pci --intree 9pnet_virtio --intree 9p \
	--qemu-args "-virtfs local,path=$dir,mount_tag=clients,security_model=none,readonly=on" \
	--hugepages 256 --timeout 900 \
	--add tests/parity/guest.sh --add tests/parity/qemu-edu.py \
	--run "sh /opt/guest.sh" "$@"
