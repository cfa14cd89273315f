// SPDX-License-Identifier: GPL-2.0-only
/*
 * vtcontainer: helpers of the guest test programs that speak today's VFIO
 * ABI.  See vtcontainer.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vtcontainer.h"

int vtc_open_container(void)
{
	return open(VTC_CONTAINER_PATH, O_RDWR | O_CLOEXEC);
}

int vtc_open_group(int group, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/vfio/%d", group);
	return open(path, flags | O_CLOEXEC);
}

int vtc_open_group_of(const char *dev)
{
	int group = vt_group_id(dev);

	if (group < 0)
		return -1;
	return vtc_open_group(group, O_RDWR);
}

int vtc_group_status(int group_fd, uint32_t *flags)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };

	if (ioctl(group_fd, VFIO_GROUP_GET_STATUS, &st) < 0)
		return -1;
	*flags = st.flags;
	return 0;
}

int vtc_set_container(int group_fd, int container_fd)
{
	return ioctl(group_fd, VFIO_GROUP_SET_CONTAINER, &container_fd);
}

int vtc_unset_container(int group_fd)
{
	return ioctl(group_fd, VFIO_GROUP_UNSET_CONTAINER);
}

int vtc_set_iommu(int container_fd, int type)
{
	return ioctl(container_fd, VFIO_SET_IOMMU,
		     type ? type : VFIO_TYPE1v2_IOMMU);
}

int vtc_device_fd(int group_fd, const char *dev)
{
	return ioctl(group_fd, VFIO_GROUP_GET_DEVICE_FD, dev);
}

static void vtc_dev_reset(struct vtc_dev *d, const char *dev)
{
	memset(d, 0, sizeof(*d));
	d->container_fd = d->group_fd = d->device_fd = -1;
	snprintf(d->name, sizeof(d->name), "%s", dev);
}

/* The part both ways of opening share: group in container, device fd. */
static int vtc_join(struct vtc_dev *d, int iommu_type)
{
	d->group = vt_group_id(d->name);
	if (d->group < 0)
		return -1;
	d->group_fd = vtc_open_group(d->group, O_RDWR);
	if (d->group_fd < 0)
		return -1;
	if (vtc_set_container(d->group_fd, d->container_fd) < 0)
		return -1;
	if (iommu_type >= 0 && vtc_set_iommu(d->container_fd, iommu_type) < 0)
		return -1;
	d->device_fd = vtc_device_fd(d->group_fd, d->name);
	return d->device_fd < 0 ? -1 : 0;
}

int vtc_open_dev(struct vtc_dev *d, const char *dev, int iommu_type)
{
	int err;

	vtc_dev_reset(d, dev);
	d->container_fd = vtc_open_container();
	if (d->container_fd >= 0 && vtc_join(d, iommu_type) == 0)
		return 0;
	err = errno;
	vtc_close_dev(d);
	errno = err;
	return -1;
}

int vtc_open_dev_in(struct vtc_dev *d, const char *dev, int container_fd)
{
	int err;

	vtc_dev_reset(d, dev);
	d->container_fd = fcntl(container_fd, F_DUPFD_CLOEXEC, 0);
	if (d->container_fd >= 0 && vtc_join(d, -1) == 0)
		return 0;
	err = errno;
	vtc_close_dev(d);
	errno = err;
	return -1;
}

void vtc_close_dev(struct vtc_dev *d)
{
	/* device before group before container, as a user tears down */
	if (d->device_fd >= 0)
		close(d->device_fd);
	if (d->group_fd >= 0)
		close(d->group_fd);
	if (d->container_fd >= 0)
		close(d->container_fd);
	d->container_fd = d->group_fd = d->device_fd = -1;
}

int vtc_map(int container_fd, void *vaddr, uint64_t iova, uint64_t size,
	    uint32_t flags)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = flags ? flags :
			 VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)vaddr,
		.iova = iova,
		.size = size,
	};

	return ioctl(container_fd, VFIO_IOMMU_MAP_DMA, &map);
}

int vtc_unmap_flags(int container_fd, uint64_t iova, uint64_t size,
		    uint32_t flags, uint64_t *unmapped)
{
	struct vfio_iommu_type1_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.flags = flags,
		.iova = iova,
		.size = size,
	};
	int ret;

	ret = ioctl(container_fd, VFIO_IOMMU_UNMAP_DMA, &unmap);
	if (ret >= 0 && unmapped)
		*unmapped = unmap.size;
	return ret;
}

int vtc_unmap(int container_fd, uint64_t iova, uint64_t size,
	      uint64_t *unmapped)
{
	return vtc_unmap_flags(container_fd, iova, size, 0, unmapped);
}

int vtc_iommu_info(int container_fd, struct vfio_iommu_type1_info **info)
{
	struct vfio_iommu_type1_info *p, *q;
	uint32_t argsz = sizeof(*p);
	int err;

	p = calloc(1, argsz);
	if (!p)
		return -1;
	for (;;) {
		p->argsz = argsz;
		if (ioctl(container_fd, VFIO_IOMMU_GET_INFO, p) < 0)
			goto fail;
		/* the kernel raises argsz when the chain did not fit */
		if (p->argsz <= argsz)
			break;
		argsz = p->argsz;
		q = realloc(p, argsz);
		if (!q)
			goto fail;
		p = q;
		memset(p, 0, argsz);
	}
	*info = p;
	return 0;
fail:
	err = errno;
	free(p);
	errno = err;
	return -1;
}

const struct vfio_info_cap_header *vtc_find_cap(const void *info,
						uint32_t argsz,
						uint32_t cap_offset,
						uint16_t id)
{
	const struct vfio_info_cap_header *h;
	uint32_t off = cap_offset;
	int hops = 0;

	while (off) {
		if (off < sizeof(uint32_t) * 2 || off > argsz ||
		    argsz - off < sizeof(*h) || ++hops > 64)
			return NULL;
		h = (const void *)((const char *)info + off);
		if (h->id == id)
			return h;
		off = h->next;
	}
	return NULL;
}

int vtc_region_info(int device_fd, uint32_t index,
		    struct vfio_region_info *info)
{
	memset(info, 0, sizeof(*info));
	info->argsz = sizeof(*info);
	info->index = index;
	return ioctl(device_fd, VFIO_DEVICE_GET_REGION_INFO, info);
}

void *vtc_mmap_region(int device_fd, uint32_t index, uint64_t *size)
{
	struct vfio_region_info info;
	void *p;

	if (vtc_region_info(device_fd, index, &info) < 0)
		return NULL;
	if (!info.size || !(info.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
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

int vtc_irq_info(int device_fd, uint32_t index, struct vfio_irq_info *info)
{
	memset(info, 0, sizeof(*info));
	info->argsz = sizeof(*info);
	info->index = index;
	return ioctl(device_fd, VFIO_DEVICE_GET_IRQ_INFO, info);
}

int vtc_set_irq_eventfds(int device_fd, uint32_t index, uint32_t start,
			 uint32_t count, const int32_t *fds)
{
	struct vfio_irq_set *set;
	size_t sz = sizeof(*set) + count * sizeof(int32_t);
	int ret, err;

	set = calloc(1, sz);
	if (!set)
		return -1;
	set->argsz = sz;
	set->flags = VFIO_IRQ_SET_ACTION_TRIGGER |
		     (count ? VFIO_IRQ_SET_DATA_EVENTFD : VFIO_IRQ_SET_DATA_NONE);
	set->index = index;
	set->start = start;
	set->count = count;
	if (count)
		memcpy(set->data, fds, count * sizeof(int32_t));
	ret = ioctl(device_fd, VFIO_DEVICE_SET_IRQS, set);
	err = errno;
	free(set);
	errno = err;
	return ret;
}

int vtc_irq_action(int device_fd, uint32_t index, uint32_t action,
		   uint32_t start, uint32_t count)
{
	struct vfio_irq_set set = {
		.argsz = sizeof(set),
		.flags = action | VFIO_IRQ_SET_DATA_NONE,
		.index = index,
		.start = start,
		.count = count,
	};

	return ioctl(device_fd, VFIO_DEVICE_SET_IRQS, &set);
}

int vtc_reset(int device_fd)
{
	return ioctl(device_fd, VFIO_DEVICE_RESET);
}

int vtc_enable_master(int device_fd)
{
	struct vfio_region_info info;

	if (vtc_region_info(device_fd, VFIO_PCI_CONFIG_REGION_INDEX,
			    &info) < 0)
		return -1;
	return vt_enable_master_at(device_fd, info.offset);
}

int vtc_edu_init(struct vt_edu *e, int device_fd)
{
	struct vfio_region_info info;

	memset(e, 0, sizeof(*e));
	e->device_fd = device_fd;
	if (vtc_region_info(device_fd, VFIO_PCI_BAR0_REGION_INDEX, &info) < 0)
		return -1;
	e->bar0 = info.offset;
	e->bar0_size = info.size;
	if (vt_edu_read(e, VT_EDU_ID, &e->id) < 0)
		return -1;
	if ((e->id & 0xffff) != 0x00ed) {
		errno = ENODEV;
		return -1;
	}
	return vtc_enable_master(device_fd);
}
