/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vtcontainer: helpers of the guest test programs that speak today's VFIO
 * ABI: the container /dev/vfio/vfio, group nodes /dev/vfio/N (N the IOMMU
 * group id), the type1 IOMMU backends and today's device ioctls, all
 * from the distribution's <linux/vfio.h>.  Such a program includes this
 * header and never vtlib.h (the seed uapi header reuses the names with
 * other numbers); the ABI-free helpers come with vtsys.h.
 *
 * Conventions as in vtsys.h: >= 0 on success, -1 with errno set on
 * failure.
 */
#ifndef VTCONTAINER_H
#define VTCONTAINER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/vfio.h>

#include "vtsys.h"

#define VTC_CONTAINER_PATH	"/dev/vfio/vfio"

/* Where the x86 IOMMU drivers reserve the MSI doorbells (IOVA). */
#define VTC_MSI_BASE		0xfee00000ULL
#define VTC_MSI_END		0xfeefffffULL	/* last byte */

/* ---- container and group ---------------------------------------------- */

/* open("/dev/vfio/vfio", O_RDWR). */
int vtc_open_container(void);

/* open("/dev/vfio/<group>", flags). */
int vtc_open_group(int group, int flags);

/* Open the group node of dev (by its iommu_group link), O_RDWR. */
int vtc_open_group_of(const char *dev);

/* VFIO_GROUP_GET_STATUS; the flags word into *flags. */
int vtc_group_status(int group_fd, uint32_t *flags);

/* VFIO_GROUP_SET_CONTAINER / VFIO_GROUP_UNSET_CONTAINER. */
int vtc_set_container(int group_fd, int container_fd);
int vtc_unset_container(int group_fd);

/* VFIO_SET_IOMMU; type 0 means VFIO_TYPE1v2_IOMMU. */
int vtc_set_iommu(int container_fd, int type);

/* VFIO_GROUP_GET_DEVICE_FD for dev (a PCI name, "0000:00:02.0"). */
int vtc_device_fd(int group_fd, const char *dev);

/*
 * Everything a device test usually wants: a container with an IOMMU of
 * type iommu_type (0: type1v2), dev's group in it and dev's device fd.
 * vtc_open_dev_in() puts dev's group into an existing container whose
 * IOMMU is set already (d->container_fd is then a dup of container_fd).
 * Undo with vtc_close_dev(); on failure nothing stays open.
 */
struct vtc_dev {
	char name[VT_DEV_NAME_LEN];
	int group;		/* IOMMU group id */
	int container_fd;
	int group_fd;
	int device_fd;
};
int vtc_open_dev(struct vtc_dev *d, const char *dev, int iommu_type);
int vtc_open_dev_in(struct vtc_dev *d, const char *dev, int container_fd);
void vtc_close_dev(struct vtc_dev *d);

/* ---- the type1 IOMMU -------------------------------------------------- */

/*
 * VFIO_IOMMU_MAP_DMA of [vaddr, vaddr + size) at iova; flags 0 means
 * VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE.
 */
int vtc_map(int container_fd, void *vaddr, uint64_t iova, uint64_t size,
	    uint32_t flags);

/*
 * VFIO_IOMMU_UNMAP_DMA of [iova, iova + size) with flags; the size the
 * kernel wrote back (what it unmapped) into *unmapped when not NULL.
 */
int vtc_unmap_flags(int container_fd, uint64_t iova, uint64_t size,
		    uint32_t flags, uint64_t *unmapped);

/* vtc_unmap_flags() with flags 0. */
int vtc_unmap(int container_fd, uint64_t iova, uint64_t size,
	      uint64_t *unmapped);

/*
 * VFIO_IOMMU_GET_INFO with the argsz protocol: asks with the bare
 * struct, then again with the argsz the kernel asked for.  *info is
 * malloc()ed (free() it) and holds the capability chain, if any.
 */
int vtc_iommu_info(int container_fd, struct vfio_iommu_type1_info **info);

/*
 * The capability with this id in the chain of an info buffer (info of
 * size argsz, chain starting at cap_offset; 0 = none), or NULL.  A chain
 * that leaves the buffer or loops counts as no match.
 */
const struct vfio_info_cap_header *vtc_find_cap(const void *info,
						uint32_t argsz,
						uint32_t cap_offset,
						uint16_t id);

/* ---- device fds ------------------------------------------------------- */

/* VFIO_DEVICE_GET_REGION_INFO for index into *info (no capabilities). */
int vtc_region_info(int device_fd, uint32_t index,
		    struct vfio_region_info *info);

/* mmap region index whole, read/write; NULL + errno on failure.  The
 * size is stored in *size when size is not NULL. */
void *vtc_mmap_region(int device_fd, uint32_t index, uint64_t *size);

/* VFIO_DEVICE_GET_IRQ_INFO for index into *info. */
int vtc_irq_info(int device_fd, uint32_t index, struct vfio_irq_info *info);

/*
 * VFIO_DEVICE_SET_IRQS, ACTION_TRIGGER with DATA_EVENTFD: count eventfds
 * from fds on vectors start.. of index.  count 0 disables the index
 * (DATA_NONE with count 0).
 */
int vtc_set_irq_eventfds(int device_fd, uint32_t index, uint32_t start,
			 uint32_t count, const int32_t *fds);

/*
 * VFIO_DEVICE_SET_IRQS with DATA_NONE and action (VFIO_IRQ_SET_ACTION_
 * MASK, _UNMASK or _TRIGGER) on vectors start..start + count - 1.
 */
int vtc_irq_action(int device_fd, uint32_t index, uint32_t action,
		   uint32_t start, uint32_t count);

/* VFIO_DEVICE_RESET. */
int vtc_reset(int device_fd);

/*
 * Let the device decode memory and master the bus (PCI_COMMAND through
 * the config region); -1/EIO when the bits did not stick.
 */
int vtc_enable_master(int device_fd);

/*
 * Find BAR0 behind device_fd, read the ID register into e->id (-1/ENODEV
 * when it is not an edu's), then vtc_enable_master().  The other edu
 * helpers of vtsys.h (vt_edu_read/write/dma) then work on e.
 */
int vtc_edu_init(struct vt_edu *e, int device_fd);

#endif /* VTCONTAINER_H */
