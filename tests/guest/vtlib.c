// SPDX-License-Identifier: GPL-2.0-only
/*
 * vtlib: helpers of the guest test programs that speak the seed ABI
 * (/dev/vfio/pci:N, "uapi/vfio.h").  See vtlib.h; the ABI-free helpers
 * are in vtsys.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vt.h"
#include "vtlib.h"

int vt_open_group(int group, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/vfio/pci:%d", group);
	return open(path, flags | O_CLOEXEC);
}

int vt_open_group_of(const char *dev)
{
	int group = vt_group_id(dev);

	if (group < 0)
		return -1;
	return vt_open_group(group, O_RDWR);
}

int vt_group_flags(int group_fd, uint32_t *flags)
{
	struct vfio_group_info info = { .argsz = sizeof(info) };

	if (ioctl(group_fd, VFIO_GROUP_GET_INFO, &info) < 0)
		return -1;
	*flags = info.flags;
	return 0;
}

int vt_iommu_fd(int group_fd)
{
	return ioctl(group_fd, VFIO_GROUP_GET_IOMMU_FD);
}

int vt_device_fd(int group_fd, const char *dev)
{
	return ioctl(group_fd, VFIO_GROUP_GET_DEVICE_FD, dev);
}

int vt_open_dev(struct vt_dev *d, const char *dev)
{
	return vt_open_dev_named(d, dev, dev);
}

int vt_open_dev_named(struct vt_dev *d, const char *dev, const char *name)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->group_fd = d->iommu_fd = d->device_fd = -1;
	snprintf(d->name, sizeof(d->name), "%s", dev);
	d->group = vt_group_id(dev);
	if (d->group < 0)
		return -1;
	d->group_fd = vt_open_group(d->group, O_RDWR);
	if (d->group_fd < 0)
		goto fail;
	d->iommu_fd = vt_iommu_fd(d->group_fd);
	if (d->iommu_fd < 0)
		goto fail;
	d->device_fd = vt_device_fd(d->group_fd, name);
	if (d->device_fd < 0)
		goto fail;
	return 0;
fail:
	err = errno;
	vt_close_dev(d);
	errno = err;
	return -1;
}

void vt_close_dev(struct vt_dev *d)
{
	if (d->device_fd >= 0)
		close(d->device_fd);
	if (d->iommu_fd >= 0)
		close(d->iommu_fd);
	if (d->group_fd >= 0)
		close(d->group_fd);
	d->group_fd = d->iommu_fd = d->device_fd = -1;
}

int vt_map(int iommu_fd, void *vaddr, uint64_t iova, uint64_t size,
	   uint32_t flags)
{
	struct vfio_dma_map map = {
		.argsz = sizeof(map),
		.flags = flags ? flags :
			 VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)vaddr,
		.iova = iova,
		.size = size,
	};

	return ioctl(iommu_fd, VFIO_IOMMU_MAP_DMA, &map);
}

int vt_unmap(int iommu_fd, uint64_t iova, uint64_t size)
{
	struct vfio_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = iova,
		.size = size,
	};

	return ioctl(iommu_fd, VFIO_IOMMU_UNMAP_DMA, &unmap);
}

int vt_region_info(int device_fd, uint32_t index,
		   struct vfio_region_info *info)
{
	memset(info, 0, sizeof(*info));
	info->argsz = sizeof(*info);
	info->index = index;
	return ioctl(device_fd, VFIO_DEVICE_GET_REGION_INFO, info);
}

void *vt_mmap_region(int device_fd, uint32_t index, uint64_t *size)
{
	struct vfio_region_info info;
	void *p;

	if (vt_region_info(device_fd, index, &info) < 0)
		return NULL;
	if (!info.size) {
		errno = ENXIO;
		return NULL;
	}
	p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 device_fd, info.offset);
	if (p == MAP_FAILED)
		return NULL;
	if (size)
		*size = info.size;
	return p;
}

int vt_set_irq_eventfds(int device_fd, uint32_t index, uint32_t count,
			const int32_t *fds)
{
	struct vfio_irq_eventfds *set;
	size_t sz = sizeof(*set) + count * sizeof(int32_t);
	int ret, err;

	set = calloc(1, sz);
	if (!set)
		return -1;
	set->argsz = sz;
	set->index = index;
	set->count = count;
	if (count)
		memcpy(set->eventfds, fds, count * sizeof(int32_t));
	ret = ioctl(device_fd, VFIO_DEVICE_SET_IRQ_EVENTFDS, set);
	err = errno;
	free(set);
	errno = err;
	return ret;
}

int vt_edu_init(struct vt_edu *e, int device_fd)
{
	struct vfio_region_info info;

	memset(e, 0, sizeof(*e));
	e->device_fd = device_fd;
	if (vt_region_info(device_fd, VFIO_PCI_BAR0_REGION_INDEX, &info) < 0)
		return -1;
	e->bar0 = info.offset;
	e->bar0_size = info.size;
	if (vt_edu_read(e, VT_EDU_ID, &e->id) < 0)
		return -1;
	if ((e->id & 0xffff) != 0x00ed) {
		errno = ENODEV;
		return -1;
	}
	return vt_enable_master(device_fd);
}

int vt_enable_master(int device_fd)
{
	struct vfio_region_info info;

	if (vt_region_info(device_fd, VFIO_PCI_CONFIG_REGION_INDEX, &info) < 0)
		return -1;
	return vt_enable_master_at(device_fd, info.offset);
}

int vt_hold_dev(struct vt_held *h, const char *dev, int efd_flags)
{
	struct vfio_irq_info irq = {
		.argsz = sizeof(irq), .index = VFIO_PCI_REQ_IRQ_INDEX,
	};
	int32_t efd;
	int err;

	h->req = -1;
	h->bar0 = NULL;
	h->bar0_size = 0;
	if (vt_open_dev(&h->d, dev) < 0)
		return -1;
	if (ioctl(h->d.device_fd, VFIO_DEVICE_GET_IRQ_INFO, &irq) < 0)
		goto fail;
	if (irq.count < 1) {
		errno = ENXIO;
		goto fail;
	}
	h->req = eventfd(0, EFD_CLOEXEC | efd_flags);
	if (h->req < 0)
		goto fail;
	efd = h->req;
	if (vt_set_irq_eventfds(h->d.device_fd, VFIO_PCI_REQ_IRQ_INDEX, 1,
				&efd) < 0)
		goto fail;
	h->bar0 = vt_mmap_region(h->d.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
				 &h->bar0_size);
	if (!h->bar0)
		goto fail;
	if ((h->bar0[VT_EDU_ID / 4] & 0xffff) != 0x00ed) {
		errno = ENODEV;
		goto fail;
	}
	return 0;
fail:
	err = errno;
	vt_release_held(h);
	errno = err;
	return -1;
}

void vt_release_held(struct vt_held *h)
{
	if (h->bar0)
		munmap((void *)h->bar0, h->bar0_size);
	h->bar0 = NULL;
	vt_close_dev(&h->d);
	if (h->req >= 0)
		close(h->req);
	h->req = -1;
}


uint32_t vt_bar0_rd(struct vt *t, int fd, uint32_t reg)
{
	uint32_t v = 0;

	VT_CHECKF(t, pread(fd, &v, 4, vt_roff(0) + reg) == 4,
		  "pread BAR0+0x%x: %s", reg, strerror(errno));
	return v;
}

void vt_bar0_wr(struct vt *t, int fd, uint32_t reg, uint32_t v)
{
	VT_CHECKF(t, pwrite(fd, &v, 4, vt_roff(0) + reg) == 4,
		  "pwrite BAR0+0x%x: %s", reg, strerror(errno));
}

uint32_t vt_cfg_rd(struct vt *t, int fd, uint32_t off, size_t len)
{
	uint32_t v = 0;

	VT_CHECKF(t, pread(fd, &v, len,
			   vt_roff(VFIO_PCI_CONFIG_REGION_INDEX) + off) ==
		  (ssize_t)len, "pread config 0x%x/%zu: %s", off, len,
		  strerror(errno));
	return v;
}

void vt_cfg_wr(struct vt *t, int fd, uint32_t off, size_t len, uint32_t v)
{
	VT_CHECKF(t, pwrite(fd, &v, len,
			    vt_roff(VFIO_PCI_CONFIG_REGION_INDEX) + off) ==
		  (ssize_t)len, "pwrite config 0x%x/%zu: %s", off, len,
		  strerror(errno));
}

uint32_t vt_find_cap(struct vt *t, int fd, uint8_t id)
{
	uint32_t pos;
	int guard = 48;		/* a looped list must not hang us */

	if (!(vt_cfg_rd(t, fd, VT_PCI_STATUS, 2) & VT_PCI_STATUS_CAP_LIST))
		return 0;
	pos = vt_cfg_rd(t, fd, VT_PCI_CAP_PTR, 1) & ~3U;
	while (pos >= 0x40 && guard--) {
		if (vt_cfg_rd(t, fd, pos, 1) == id)
			return pos;
		pos = vt_cfg_rd(t, fd, pos + 1, 1) & ~3U;
	}
	return 0;
}

void vt_set_cmd_bits(struct vt *t, int fd, uint16_t set, uint16_t clear)
{
	uint16_t cmd = vt_cfg_rd(t, fd, VT_PCI_COMMAND, 2);

	vt_cfg_wr(t, fd, VT_PCI_COMMAND, 2, (cmd | set) & ~clear);
}

void vt_set_irqs(struct vt *t, int fd, uint32_t index, uint32_t count,
		 const int32_t *fds)
{
	VT_CHECKF(t, vt_set_irq_eventfds(fd, index, count, fds) == 0,
		  "SET_IRQ_EVENTFDS index %u count %u: %s", index, count,
		  strerror(errno));
}

uint32_t vt_edu_factorial(struct vt *t, int fd, uint32_t n)
{
	uint64_t end = vt_now_ms() + 2000;

	vt_bar0_wr(t, fd, VT_EDU_FACT, n);
	while (vt_bar0_rd(t, fd, VT_EDU_STATUS) & VT_EDU_STATUS_BUSY) {
		VT_CHECKF(t, vt_now_ms() < end, "factorial still busy");
		usleep(1000);
	}
	return vt_bar0_rd(t, fd, VT_EDU_FACT);
}

static void vt_ctx_init(struct vt_ctx *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->d.group_fd = c->d.iommu_fd = c->d.device_fd = -1;
	for (i = 0; i < VT_CTX_EFDS; i++)
		c->efd[i] = -1;
}

int vt_ctx_setup(struct vt_ctx *c)
{
	vt_ctx_init(c);
	c->noaccess = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	if (c->noaccess == MAP_FAILED) {
		c->noaccess = NULL;
		return -1;
	}
	return 0;
}

void vt_ctx_cleanup(struct vt_ctx *c)
{
	void *noaccess;
	int i;

	if (c->map)
		munmap(c->map, c->maplen);
	for (i = 0; i < VT_CTX_EFDS; i++)
		if (c->efd[i] >= 0)
			close(c->efd[i]);
	vt_close_dev(&c->d);
	noaccess = c->noaccess;
	vt_ctx_init(c);
	c->noaccess = noaccess;
}

int vt_ctx_open(struct vt *t, struct vt_ctx *c, const char *dev)
{
	VT_CHECKF(t, vt_open_dev(&c->d, dev) == 0, "open %s: %s", dev,
		  strerror(errno));
	return c->d.device_fd;
}

int vt_ctx_eventfd(struct vt *t, struct vt_ctx *c, int i)
{
	c->efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	VT_CHECKF(t, c->efd[i] >= 0, "eventfd: %s", strerror(errno));
	return c->efd[i];
}
