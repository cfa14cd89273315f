/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vtlib: helpers of the guest test programs that speak the seed ABI
 * (/dev/vfio/pci:N and "uapi/vfio.h").  Conventions as in vtsys.h, whose
 * ABI-free helpers come with this header.  Programs of today's ABI use
 * vtmodern.h instead: the two uapi headers share names with other
 * numbers, so no file may include both.
 */
#ifndef VTLIB_H
#define VTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uapi/vfio.h"
#include "vtsys.h"

/* ---- groups, IOMMU and device fds ------------------------------------- */

/* open("/dev/vfio/pci:<group>", flags). */
int vt_open_group(int group, int flags);

/* Open the group node of dev, O_RDWR. */
int vt_open_group_of(const char *dev);

/* VFIO_GROUP_GET_INFO; the flags word into *flags. */
int vt_group_flags(int group_fd, uint32_t *flags);

/* VFIO_GROUP_GET_IOMMU_FD. */
int vt_iommu_fd(int group_fd);

/* VFIO_GROUP_GET_DEVICE_FD for dev. */
int vt_device_fd(int group_fd, const char *dev);

/*
 * Everything a device test usually wants: the group, IOMMU and device fds
 * of dev.  Undo with vt_close_dev().  On failure nothing stays open.
 */
struct vt_dev {
	char name[VT_DEV_NAME_LEN];
	int group;		/* group number */
	int group_fd;
	int iommu_fd;
	int device_fd;
};
int vt_open_dev(struct vt_dev *d, const char *dev);
void vt_close_dev(struct vt_dev *d);

/* VFIO_IOMMU_MAP_DMA of [vaddr, vaddr + size) at iova.  flags 0 means
 * read and write. */
int vt_map(int iommu_fd, void *vaddr, uint64_t iova, uint64_t size,
	   uint32_t flags);

/* VFIO_IOMMU_UNMAP_DMA of [iova, iova + size). */
int vt_unmap(int iommu_fd, uint64_t iova, uint64_t size);

/* VFIO_DEVICE_GET_REGION_INFO for index into *info. */
int vt_region_info(int device_fd, uint32_t index,
		   struct vfio_region_info *info);

/* mmap region index of the device whole, read/write; NULL + errno on
 * failure.  The size is stored in *size when size is not NULL. */
void *vt_mmap_region(int device_fd, uint32_t index, uint64_t *size);

/*
 * VFIO_DEVICE_SET_IRQ_EVENTFDS with count eventfds from fds (count 0
 * disables the index).
 */
int vt_set_irq_eventfds(int device_fd, uint32_t index, uint32_t count,
			const int32_t *fds);

/*
 * Find BAR0 behind device_fd and read the ID register into e->id (-1/
 * ENODEV when that is not an edu's), then vt_enable_master() so that it
 * can DMA.
 */
int vt_edu_init(struct vt_edu *e, int device_fd);

/*
 * Let the device decode memory and master the bus (PCI_COMMAND through
 * the config region), checked by reading it back: -1/EIO when the bits
 * did not stick.
 */
int vt_enable_master(int device_fd);

/*
 * A device the way a user who ignores the release request holds it: its
 * vt_dev fds, an eventfd (EFD_CLOEXEC | efd_flags) on the REQ index, and
 * a mmap of BAR0 whose ID register must read as an edu's (-1/ENODEV).
 * The REQ index must have a vector (-1/ENXIO).  Undo with
 * vt_release_held(); on failure nothing stays open.
 */
struct vt_held {
	struct vt_dev d;
	int req;			/* eventfd on the REQ index */
	volatile uint32_t *bar0;	/* mmap of BAR0 */
	uint64_t bar0_size;
};
int vt_hold_dev(struct vt_held *h, const char *dev, int efd_flags);

/* Unmap BAR0 and close whatever of h is still open (fds set to -1). */
void vt_release_held(struct vt_held *h);

#endif /* VTLIB_H */
