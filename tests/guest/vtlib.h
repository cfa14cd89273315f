/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vtlib: helpers of the guest test programs that speak the seed ABI
 * (/dev/vfio/pci:N and "uapi/vfio.h").  Conventions as in vtsys.h, whose
 * ABI-free helpers come with this header.  Programs of today's ABI use
 * vtcontainer.h instead: the two uapi headers share names with other
 * numbers, so no file may include both.
 */
#ifndef VTLIB_H
#define VTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uapi/vfio.h"
#include "vtsys.h"

struct vt;

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
/* The same with @name as GET_DEVICE_FD's string ("ADDR vf_token=UUID"). */
int vt_open_dev_named(struct vt_dev *d, const char *dev, const char *name);
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

/* ---- one device's regions, checked ----------------------------------- */

/*
 * The seed ABI puts region index at a fixed offset of the device fd
 * (VFIO_PCI_OFFSET_SHIFT in src/pci/vfio_pci.c): cases that probe the
 * offsets themselves, past the ends and between regions, use it directly
 * rather than asking GET_REGION_INFO every time.
 */
#define VT_REGION_SHIFT		40

static inline uint64_t vt_roff(unsigned int index)
{
	return (uint64_t)index << VT_REGION_SHIFT;
}

/*
 * The helpers below are checks, like VT_CHECKF(): a failed access fails
 * the calling case.  fd is a device fd.
 */

/* A 32-bit register of BAR0 through read/write. */
uint32_t vt_bar0_rd(struct vt *t, int fd, uint32_t reg);
void vt_bar0_wr(struct vt *t, int fd, uint32_t reg, uint32_t v);

/* len (1, 2 or 4) bytes at off of the virtual config space (region 7). */
uint32_t vt_cfg_rd(struct vt *t, int fd, uint32_t off, size_t len);
void vt_cfg_wr(struct vt *t, int fd, uint32_t off, size_t len, uint32_t v);

/* Position of capability id in the virtual config space, 0 when absent. */
uint32_t vt_find_cap(struct vt *t, int fd, uint8_t id);

/* Set, then clear, bits of the virtual command register. */
void vt_set_cmd_bits(struct vt *t, int fd, uint16_t set, uint16_t clear);

/* vt_set_irq_eventfds(), which must succeed. */
void vt_set_irqs(struct vt *t, int fd, uint32_t index, uint32_t count,
		 const int32_t *fds);

/* Have an edu compute n! through BAR0 (bounded wait); the result. */
uint32_t vt_edu_factorial(struct vt *t, int fd, uint32_t n);

/* ---- what a device case has open ------------------------------------- */

#define VT_CTX_EFDS	4

/*
 * What a device case has open; its main() runs each case with
 * VT_RUN_CTX(), which closes whatever a failed check left behind, so
 * that the next case starts from the state /init gave.
 */
struct vt_ctx {
	struct vt_dev d;
	int efd[VT_CTX_EFDS];
	void *map;		/* unmapped at cleanup when set */
	size_t maplen;
	void *noaccess;		/* PROT_NONE: a bad user pointer */
};

/* Empty c and map its noaccess page: -1 when that mmap failed. */
int vt_ctx_setup(struct vt_ctx *c);

/* Unmap, close and empty everything of c but its noaccess page. */
void vt_ctx_cleanup(struct vt_ctx *c);

/* vt_open_dev(&c->d, dev), which must succeed; the device fd. */
int vt_ctx_open(struct vt *t, struct vt_ctx *c, const char *dev);

/* A nonblocking eventfd in c->efd[i], which must be created; the fd. */
int vt_ctx_eventfd(struct vt *t, struct vt_ctx *c, int i);

#define VT_RUN_CTX(t, c, fn) do {					\
	VT_RUN(t, fn, c);						\
	vt_ctx_cleanup(c);						\
} while (0)

#endif /* VTLIB_H */
