/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether the host itself is using a PCI device, so that vfioctl never
 * takes it from under a running system without --force (or the "force"
 * keyword of devices.conf): a network interface that is up or carries
 * routes, a block device that is mounted, used as swap or held by another
 * block device (device mapper, md), the boot VGA device, the console.
 * Everything is read below v->sysfs and v->proc, so the host tests can
 * fake it.
 */
#ifndef VFIOCTL_INUSE_H
#define VFIOCTL_INUSE_H

#include <stdbool.h>
#include <stddef.h>

#include "sysfs.h"
#include "vfioctl.h"

/*
 * dev_in_use() - true when the host uses @d; @why (of @size bytes) then
 * says how, e.g. "network interface eth0 is up".  Something that cannot
 * be read counts as not in use, except the device's own sysfs directory.
 */
bool dev_in_use(const struct vfioctl *v, const struct pci_dev *d, char *why,
		size_t size);

/*
 * dev_held() - true when a process has a node of @d's IOMMU group open
 * (/dev/vfio/pci:N or /dev/vfio/N, as QEMU and DPDK keep them while they
 * use the device); @why (of @size bytes) then names them, e.g.
 * "PID 1234 (qemu-system-x86)".  A process that closed the group and
 * kept only the device's own descriptor is not seen.
 */
bool dev_held(const struct vfioctl *v, const struct pci_dev *d, char *why,
	      size_t size);

/*
 * dev_net_names() - the network interfaces of @d into @buf, each name
 * ended by a NUL, the list by an empty name ("" when there is none).
 * Not joined with a separator: an interface name may hold a comma.
 */
void dev_net_names(const struct vfioctl *v, const struct pci_dev *d,
		   char *buf, size_t size);

#endif
