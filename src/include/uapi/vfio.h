/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vfio-dkms user ABI: IOMMU groups, the IOMMU object and devices.
 *
 * This is the 2011 VFIO group ABI.  Every ioctl number, structure layout
 * and flag value is fixed: a program built against the original header
 * runs unchanged.  It is installed as <vfio-dkms/vfio.h> so that it does
 * not collide with the distribution's <linux/vfio.h>, which describes the
 * later, incompatible container ABI.
 *
 * Extending the ABI: every structure starts with argsz and flags.  The
 * caller sets argsz to the size of the structure it knows; the kernel
 * rejects an argsz smaller than the fields it needs (-EINVAL), accepts a
 * larger one, and rejects flag bits it does not know (-EINVAL).  New fields
 * are appended and announced by new flag bits.  The ioctl numbers carry no
 * size for that reason.
 */
#ifndef _UAPI_VFIO_DKMS_VFIO_H
#define _UAPI_VFIO_DKMS_VFIO_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define VFIO_TYPE	(';')
#define VFIO_BASE	100

/* ---------------- group file descriptors: /dev/vfio/<bus>:<group> ------- */

/*
 * VFIO_GROUP_GET_INFO: fill in struct vfio_group_info.  The kernel writes
 * the whole flags word; bits the caller left set are never kept.
 */
struct vfio_group_info {
	__u32	argsz;
	__u32	flags;
#define VFIO_GROUP_FLAGS_VIABLE		(1 << 0) /* every member usable */
#define VFIO_GROUP_FLAGS_MM_LOCKED	(1 << 1) /* owned by a process */
};

#define VFIO_GROUP_GET_INFO		_IO(VFIO_TYPE, VFIO_BASE + 0)

/*
 * VFIO_GROUP_MERGE: argument is a pointer to an __s32 holding the fd of
 * another group.  That group (the mergee) must have no IOMMU or device fd
 * open (-EBUSY); this group may be in use.  Afterwards both share one
 * IOMMU object and either group fd reaches every device of the set.
 */
#define VFIO_GROUP_MERGE		_IOW(VFIO_TYPE, VFIO_BASE + 1, __s32)

/*
 * VFIO_GROUP_UNMERGE: take this group out of its merged set (-EINVAL when
 * it is not merged).  None of its devices may be open (-EBUSY).
 */
#define VFIO_GROUP_UNMERGE		_IO(VFIO_TYPE, VFIO_BASE + 2)

/*
 * VFIO_GROUP_GET_IOMMU_FD: return a new fd for the IOMMU object of the
 * (merged) group.  The first IOMMU or device fd makes the calling process
 * the owner of the set: other processes then get -EPERM until the last of
 * those fds is closed.  Fails with -EBUSY when the group is not viable.
 */
#define VFIO_GROUP_GET_IOMMU_FD		_IO(VFIO_TYPE, VFIO_BASE + 3)

/*
 * VFIO_GROUP_GET_DEVICE_FD: argument is a NUL-terminated device name (for
 * PCI, "0000:00:03.0"); returns a new device fd.  -ENODEV when no device
 * of the set has that name.
 */
#define VFIO_GROUP_GET_DEVICE_FD	_IOW(VFIO_TYPE, VFIO_BASE + 4, char)

/* ---------------- IOMMU file descriptors ------------------------------- */

/* VFIO_IOMMU_GET_INFO: fill in struct vfio_iommu_info. */
struct vfio_iommu_info {
	__u32	argsz;
	__u32	flags;
	__u64	iova_max;	/* highest usable IOVA */
	__u64	iova_min;	/* lowest usable IOVA */
	__u64	pgsize_bitmap;	/* IOMMU page sizes; lowest = granularity */
};

#define VFIO_IOMMU_GET_INFO		_IO(VFIO_TYPE, VFIO_BASE + 5)

/*
 * VFIO_IOMMU_MAP_DMA: pin size bytes of the process at vaddr and make
 * them visible to the devices at iova.  At least one of READ and WRITE;
 * vaddr, iova and size aligned to the smallest IOMMU page; no wrap; no
 * overlap with an existing mapping (-EBUSY).  Pinned pages are charged to
 * RLIMIT_MEMLOCK of the owner (-ENOMEM past it).
 */
struct vfio_dma_map {
	__u32	argsz;
	__u32	flags;
#define VFIO_DMA_MAP_FLAG_READ	(1 << 0)	/* device may read */
#define VFIO_DMA_MAP_FLAG_WRITE	(1 << 1)	/* device may write */
	__u64	vaddr;		/* process virtual address */
	__u64	iova;		/* IO virtual address */
	__u64	size;		/* bytes */
};

#define VFIO_IOMMU_MAP_DMA		_IO(VFIO_TYPE, VFIO_BASE + 6)

/*
 * VFIO_IOMMU_UNMAP_DMA: remove every mapped page in [iova, iova + size).
 * The range may span several mappings and may cut one, which is split.
 */
struct vfio_dma_unmap {
	__u32	argsz;
	__u32	flags;
	__u64	iova;		/* IO virtual address */
	__u64	size;		/* bytes */
};

#define VFIO_IOMMU_UNMAP_DMA		_IO(VFIO_TYPE, VFIO_BASE + 7)

/* ---------------- device file descriptors ------------------------------ */

/* VFIO_DEVICE_GET_INFO: fill in struct vfio_device_info. */
struct vfio_device_info {
	__u32	argsz;
	__u32	flags;
#define VFIO_DEVICE_FLAGS_RESET	(1 << 0)	/* VFIO_DEVICE_RESET works */
	__u32	num_regions;	/* highest region index + 1 */
	__u32	num_irqs;	/* highest IRQ index + 1 */
};

#define VFIO_DEVICE_GET_INFO		_IO(VFIO_TYPE, VFIO_BASE + 8)

/*
 * VFIO_DEVICE_GET_REGION_INFO: the caller sets index; the kernel fills in
 * the rest.  read/write/pread/pwrite at offset reach the region; mmap is
 * allowed when FLAG_MMAP is set.  A region of size 0 is not implemented.
 *
 * PCI region indexes: BAR0..BAR5 are 0..5, the expansion ROM is 6 (read
 * only), config space is 7 (virtualised by the kernel).  vfio_pci places
 * region N at offset N << 40; programs should use the offset reported.
 */
struct vfio_region_info {
	__u32	argsz;
	__u32	flags;
#define VFIO_REGION_INFO_FLAG_MMAP	(1 << 0) /* mmap supported */
#define VFIO_REGION_INFO_FLAG_RO	(1 << 1) /* read only */
	__u32	index;		/* region index */
	__u32	resv;		/* reserved, zero */
	__u64	size;		/* bytes */
	__u64	offset;		/* offset of the region in the device fd */
};

#define VFIO_DEVICE_GET_REGION_INFO	_IO(VFIO_TYPE, VFIO_BASE + 9)

enum {
	VFIO_PCI_BAR0_REGION_INDEX,
	VFIO_PCI_BAR1_REGION_INDEX,
	VFIO_PCI_BAR2_REGION_INDEX,
	VFIO_PCI_BAR3_REGION_INDEX,
	VFIO_PCI_BAR4_REGION_INDEX,
	VFIO_PCI_BAR5_REGION_INDEX,
	VFIO_PCI_ROM_REGION_INDEX,
	VFIO_PCI_CONFIG_REGION_INDEX,
	VFIO_PCI_NUM_REGIONS
};

/*
 * VFIO_DEVICE_GET_IRQ_INFO: the caller sets index (struct vfio_irq_info,
 * not the region structure the original documentation passed); the
 * kernel fills in flags and count.  count 0 means not implemented.
 *
 * PCI IRQ indexes: INTx is 0 (level, count 1 when the device has a pin),
 * MSI is 1, MSI-X is 2, and 3 is the release request: its eventfd is
 * signalled when the host wants the device back (unbind, hot remove); the
 * user should close the device fds, after a grace period they are revoked.
 */
struct vfio_irq_info {
	__u32	argsz;
	__u32	flags;
#define VFIO_IRQ_INFO_FLAG_LEVEL	(1 << 0) /* level (1), edge (0) */
	__u32	index;		/* IRQ index */
	__u32	count;		/* IRQs in this index */
};

#define VFIO_DEVICE_GET_IRQ_INFO	_IO(VFIO_TYPE, VFIO_BASE + 10)

enum {
	VFIO_PCI_INTX_IRQ_INDEX,
	VFIO_PCI_MSI_IRQ_INDEX,
	VFIO_PCI_MSIX_IRQ_INDEX,
	VFIO_PCI_REQ_IRQ_INDEX,
	VFIO_PCI_NUM_IRQS
};

/*
 * VFIO_DEVICE_SET_IRQ_EVENTFDS: connect count eventfds to the IRQs of an
 * index, which enables them.  -1 leaves that sub-index unconnected;
 * count 0 disconnects and disables the whole index.
 */
struct vfio_irq_eventfds {
	__u32	argsz;
	__u32	flags;
	__u32	index;		/* IRQ index */
	__u32	count;		/* number of eventfds */
	__s32	eventfds[];	/* eventfd per sub-index, -1 to unset */
};

#define VFIO_DEVICE_SET_IRQ_EVENTFDS	_IO(VFIO_TYPE, VFIO_BASE + 11)

/*
 * VFIO_DEVICE_UNMASK_IRQ: level triggered IRQs are masked when they are
 * delivered and stay masked until this ioctl (or a write to the unmask
 * eventfd) unmasks them.
 */
struct vfio_unmask_irq {
	__u32	argsz;
	__u32	flags;
	__u32	index;		/* IRQ index */
	__u32	subindex;	/* sub-index to unmask */
};

#define VFIO_DEVICE_UNMASK_IRQ		_IO(VFIO_TYPE, VFIO_BASE + 12)

/*
 * VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS: struct vfio_irq_eventfds as above;
 * a write to such an eventfd unmasks that IRQ, as VFIO_DEVICE_UNMASK_IRQ.
 */
#define VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS	_IO(VFIO_TYPE, VFIO_BASE + 13)

/* VFIO_DEVICE_RESET: reset the device (when FLAGS_RESET is set). */
#define VFIO_DEVICE_RESET		_IO(VFIO_TYPE, VFIO_BASE + 14)

/*
 * Extensions of vfio-dkms to the 2011 ABI (numbers after the seed's).
 *
 * VFIO_DEVICE_GET_PCI_HOT_RESET_INFO: the devices that a bus or slot
 * reset of this device would reset with it: the slot's when the
 * device's hotplug slot can be reset, else everything on and below its
 * bus.  The kernel sets flags to 0 and count, and fills in devices[]
 * when argsz has room for all of them after the fixed part; else it
 * fails with -ENOSPC and count set (the header is written back).
 * -ENODEV: neither reset exists (a device on a root bus).
 */
struct vfio_pci_dependent_device {
	__u32	group_id;	/* IOMMU group: /dev/vfio/pci:<group_id> */
	__u16	segment;
	__u8	bus;
	__u8	devfn;		/* PCI_DEVFN(slot, function) */
};

struct vfio_pci_hot_reset_info {
	__u32	argsz;
	__u32	flags;
	__u32	count;
	struct vfio_pci_dependent_device	devices[];
};

#define VFIO_DEVICE_GET_PCI_HOT_RESET_INFO	_IO(VFIO_TYPE, VFIO_BASE + 15)

/*
 * VFIO_DEVICE_PCI_HOT_RESET: do that reset.  group_fds[] holds count
 * group fds (/dev/vfio/pci:N) of the caller's merged set, and every
 * device the reset affects must be bound to vfio and in one of those
 * groups: -EINVAL otherwise, or when an fd is no such group (-EBADF: no
 * file), when count is 0 or more than the devices affected, or argsz
 * does not cover group_fds[].  -EBUSY: another user has one of the
 * devices, or their locks stayed taken; -EAGAIN: the host is using one
 * (try again).  The devices' config space is restored afterwards, and
 * their mmaps fault back in.
 */
struct vfio_pci_hot_reset {
	__u32	argsz;
	__u32	flags;		/* zero */
	__u32	count;
	__s32	group_fds[];
};

#define VFIO_DEVICE_PCI_HOT_RESET	_IO(VFIO_TYPE, VFIO_BASE + 16)

#endif /* _UAPI_VFIO_DKMS_VFIO_H */
