/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading the PCI and IOMMU group topology from sysfs (or from a fake
 * tree given with --sysfs-root), and the one function that writes to it.
 */
#ifndef VFIOCTL_SYSFS_H
#define VFIOCTL_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "vfioctl.h"

#define PCI_CLASS_BRIDGE_PCI	0x0604

struct pci_dev {
	char addr[PCI_ADDR_SIZE];
	unsigned int vendor, device;
	unsigned int class;	/* 24 bits: class, subclass, prog-if */
	int group;		/* IOMMU group number, -1 without one */
	char driver[64];	/* "" when unbound */
	char override[64];	/* driver_override, "" when unset */
};

struct pci_list {
	struct pci_dev *devs;
	size_t n;
};

/*
 * sysfs_write() - write @val to the sysfs attribute @path (a full path).
 * Returns 0 or -errno.  It is the only place vfioctl changes the system,
 * which lets the host tests swap in an emulation of the kernel's side.
 */
int sysfs_write(const char *path, const char *val);

/* sysfs_path() - "<root>/<fmt...>" into @buf; false when it does not fit. */
bool sysfs_path(const struct vfioctl *v, char *buf, size_t size,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * read_attr() - read the small file @path (a sysfs attribute, a state
 * file) into @buf, without its trailing newline.  Returns 0 or -errno.
 */
int read_attr(const char *path, char *buf, size_t size);

/* pci_dev_load() - fill @d for @addr.  Returns 0 or -errno (-ENODEV). */
int pci_dev_load(const struct vfioctl *v, const char *addr,
		 struct pci_dev *d);
bool pci_dev_is_bridge(const struct pci_dev *d);

/* pci_list_load() - every PCI device, sorted by address. */
int pci_list_load(const struct vfioctl *v, struct pci_list *l);
void pci_list_free(struct pci_list *l);
struct pci_dev *pci_list_find(const struct pci_list *l, const char *addr);

/*
 * group_viable() - every member of @group (in @l) is bound to vfio, to
 * nothing, or is a PCI bridge: the condition under which the core lets a
 * user open the group.
 */
bool group_viable(const struct pci_list *l, int group);

/*
 * no_group_why() - why a device has no IOMMU group, in a few words for a
 * message: the kernel registered no IOMMU, or its command line turns it
 * off, or the IOMMUs it has do not cover the device.
 */
void no_group_why(const struct vfioctl *v, char *buf, size_t size);

bool vfio_driver_loaded(const struct vfioctl *v);

/* Attribute writes, each naming what it did in its error message. */
int pci_set_override(const struct vfioctl *v, const char *addr,
		     const char *driver);
int pci_unbind(const struct vfioctl *v, const char *addr, const char *driver);
int pci_bind(const struct vfioctl *v, const char *addr, const char *driver);
int pci_probe(const struct vfioctl *v, const char *addr);

#endif
