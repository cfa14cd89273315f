#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest test: the example driver, compiled against the unmodified 2011
# header, completes its DMA round trip and MSI, as root and as uid 1000
# with the group node chowned to it (Documentation/vfio.txt's
# "chown user:user /dev/vfio/pci:240").  vt lines, see tests/guest/vt.h.

bin=/tests/edu-dma-seed
failed=0

run_case() {	# case name, command...
	name=$1
	shift
	out=$("$@" 2>&1)
	rc=$?
	# The transcript goes to the log either way (indented: not a vt line).
	echo "$out" | sed 's/^/    /'
	if [ $rc -eq 0 ] &&
	   echo "$out" | grep -q 'success: DMA round trip and MSI verified'; then
		echo "ok - seed-edu-dma/$name"
	else
		echo "not ok - seed-edu-dma/$name: edu-dma built against the seed header failed"
		failed=1
	fi
}

run_case root "$bin"

dev=$(for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x11e8 ] &&
		[ "$(basename "$(readlink "$d/driver")")" = vfio ] &&
		basename "$d" && break
done)
if [ -z "$dev" ]; then
	echo "not ok - seed-edu-dma/user: no edu bound to vfio"
	exit 1
fi
node=/dev/vfio/pci:$(basename "$(readlink "/sys/bus/pci/devices/$dev/iommu_group")")
owner=$(stat -c %u:%g "$node")
mode=$(stat -c %a "$node")
chown 1000:1000 "$node"
run_case user su -s /bin/sh user -c "$bin $dev"
# Without the chown the same user must be refused, cleanly.
chown "$owner" "$node"
chmod "$mode" "$node"
if out=$(su -s /bin/sh user -c "$bin $dev" 2>&1); then
	echo "not ok - seed-edu-dma/user-denied: uid 1000 drove $node owned by $owner mode $mode"
	failed=1
elif echo "$out" | grep -q 'Permission denied'; then
	echo "ok - seed-edu-dma/user-denied"
else
	echo "$out" | sed 's/^/    /'
	echo "not ok - seed-edu-dma/user-denied: failed, but not with EACCES"
	failed=1
fi
exit $failed
