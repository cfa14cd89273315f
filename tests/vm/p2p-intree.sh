#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest half of the peer-to-peer reference run: t-dma-p2p (and, when
# built, t-dma-p2p-seed) on our VFIO, then, in the same boot, on the kernel's own (/opt/intree-vfio) with
# --in-tree, so that the two sets of results can be compared line by line:
#
#   tests/vm/run-suite.sh --only '^t-dma-p2p' \
#       --add tests/vm/p2p-intree.sh --run 'sh /opt/p2p-intree.sh'
#
# Prints the programs' ok/not ok/skip lines; the exit status is 0 only
# when both runs passed.
PCI=/sys/bus/pci/devices
DEVS="0000:00:02.0 0000:00:03.0 0000:00:04.0 0000:01:00.0"

/tests/t-dma-p2p
ours=$?
if [ -x /tests/t-dma-p2p-seed ]; then
	/tests/t-dma-p2p-seed || ours=1
fi

for d in $DEVS; do
	[ -e "$PCI/$d/driver" ] && echo "$d" >"$PCI/$d/driver/unbind"
done
if ! rmmod vfio_pci vfio; then
	echo "not ok - p2p-intree/setup: rmmod of our vfio_pci vfio failed"
	exit 1
fi
for ko in /opt/intree-vfio/*.ko; do
	if ! out=$(insmod "$ko" 2>&1); then
		echo "not ok - p2p-intree/setup: insmod $ko: $out"
		exit 1
	fi
done
for d in 0000:00:02.0 0000:00:03.0; do
	echo vfio-pci >"$PCI/$d/driver_override"
	echo "$d" >/sys/bus/pci/drivers_probe
done
i=0
while ! [ -c /dev/vfio/2 ] || ! [ -c /dev/vfio/3 ]; do
	i=$((i + 1))
	if [ "$i" -gt 50 ]; then
		echo "not ok - p2p-intree/setup: no /dev/vfio/2 and 3: $(ls /dev/vfio)"
		exit 1
	fi
	sleep 0.1
done
/tests/t-dma-p2p --in-tree
intree=$?
echo "p2p-intree: ours $ours, in-tree $intree"
[ "$ours" = 0 ] && [ "$intree" = 0 ]
