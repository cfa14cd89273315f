#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest half of `make demo`: bind an edu device the way
# Documentation/vfio.txt does, give its group node to an ordinary user and
# let that user drive the device with the example driver.

PATH=/bin:/sbin:/usr/bin:/usr/sbin
dev=0000:00:02.0
group=$(basename "$(readlink "/sys/bus/pci/devices/$dev/iommu_group")")

echo
echo "# $dev is an edu device ($(cat "/sys/bus/pci/devices/$dev/vendor"):$(cat "/sys/bus/pci/devices/$dev/device")) in IOMMU group $group"
echo "# bind every device of the group to vfio (Documentation/vfio.txt):"
# The documentation walks /sys/devices/virtual/vfio/pci:N/devices, which
# only exists once a member is bound; before that the same list is the
# kernel's /sys/kernel/iommu_groups/N/devices.
for i in /sys/kernel/iommu_groups/"$group"/devices/*; do
	dir=$(readlink -f "$i")
	if [ -L "$dir/driver" ]; then
		basename "$i" >"$dir/driver/unbind"
	fi
	vendor=$(cat "$dir/vendor")
	device=$(cat "$dir/device")
	echo "  echo $vendor $device > /sys/bus/pci/drivers/vfio/new_id"
	echo "$vendor $device" >/sys/bus/pci/drivers/vfio/new_id
	# new_id already bound it; the explicit bind is for devices that
	# matched an existing id.
	[ -L "$dir/driver" ] || basename "$i" >/sys/bus/pci/drivers/vfio/bind
done
i=0
while [ ! -c "/dev/vfio/pci:$group" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
echo "  driver of $dev: $(basename "$(readlink "/sys/bus/pci/devices/$dev/driver")")"
echo "# chown user:user /dev/vfio/pci:$group"
chown user:user "/dev/vfio/pci:$group" || exit 1
# shellcheck disable=SC2012 # show the node as the documentation does
ls -l "/dev/vfio/pci:$group" | sed 's/^/  /'
echo "# members: $(ls "/sys/devices/virtual/vfio/pci:$group/devices/")"
echo "# as user (uid 1000): edu-dma $dev"
echo
su -s /bin/sh user -c "/opt/edu-dma $dev"
rc=$?
chown root:root "/dev/vfio/pci:$group"
exit $rc
