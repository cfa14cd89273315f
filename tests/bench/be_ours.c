// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-bench backend for our module: the 2011 group ABI of
 * src/include/uapi/vfio.h.  /dev/vfio/pci:N is the group; the IOMMU fd
 * and the device fd both come from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "bench.h"

static void ours_close(struct bench_dev *d)
{
	if (d->device_fd >= 0)
		close(d->device_fd);
	if (d->container_fd >= 0)
		close(d->container_fd);
	if (d->group_fd >= 0)
		close(d->group_fd);
	d->device_fd = -1;
	d->container_fd = -1;
	d->group_fd = -1;
}

static int ours_open(struct bench_dev *d, const char *name)
{
	struct vfio_group_info ginfo = { .argsz = sizeof(ginfo) };
	struct vfio_region_info rinfo = { .argsz = sizeof(rinfo) };
	struct vfio_irq_info iinfo = { .argsz = sizeof(iinfo) };
	char path[64];

	d->group_fd = d->container_fd = d->device_fd = -1;
	d->group = bench_group_of(name);
	if (d->group < 0)
		return bench_fail(d, "iommu_group of %s", name);

	snprintf(path, sizeof(path), "/dev/vfio/pci:%d", d->group);
	d->group_fd = open(path, O_RDWR);
	if (d->group_fd < 0)
		return bench_fail(d, "open %s", path);
	if (ioctl(d->group_fd, VFIO_GROUP_GET_INFO, &ginfo) < 0) {
		bench_fail(d, "VFIO_GROUP_GET_INFO on %s", path);
		goto err;
	}
	if (!(ginfo.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		errno = EBUSY;
		bench_fail(d, "group %s is not viable", path);
		goto err;
	}
	d->container_fd = ioctl(d->group_fd, VFIO_GROUP_GET_IOMMU_FD);
	if (d->container_fd < 0) {
		bench_fail(d, "VFIO_GROUP_GET_IOMMU_FD on %s", path);
		goto err;
	}
	d->device_fd = ioctl(d->group_fd, VFIO_GROUP_GET_DEVICE_FD, name);
	if (d->device_fd < 0) {
		bench_fail(d, "VFIO_GROUP_GET_DEVICE_FD %s", name);
		goto err;
	}

	rinfo.index = VFIO_PCI_BAR0_REGION_INDEX;
	if (ioctl(d->device_fd, VFIO_DEVICE_GET_REGION_INFO, &rinfo) < 0) {
		bench_fail(d, "VFIO_DEVICE_GET_REGION_INFO BAR0 of %s", name);
		goto err;
	}
	d->bar0_offset = rinfo.offset;
	d->bar0_size = rinfo.size;
	d->bar0_mmap_ok = !!(rinfo.flags & VFIO_REGION_INFO_FLAG_MMAP);

	rinfo.index = VFIO_PCI_CONFIG_REGION_INDEX;
	if (ioctl(d->device_fd, VFIO_DEVICE_GET_REGION_INFO, &rinfo) < 0) {
		bench_fail(d, "VFIO_DEVICE_GET_REGION_INFO config of %s", name);
		goto err;
	}
	d->config_offset = rinfo.offset;

	iinfo.index = VFIO_PCI_MSI_IRQ_INDEX;
	if (ioctl(d->device_fd, VFIO_DEVICE_GET_IRQ_INFO, &iinfo) < 0) {
		bench_fail(d, "VFIO_DEVICE_GET_IRQ_INFO MSI of %s", name);
		goto err;
	}
	d->msi_count = iinfo.count;
	return 0;
err:
	ours_close(d);
	return -1;
}

static int ours_map(struct bench_dev *d, void *vaddr, uint64_t iova,
		    uint64_t size)
{
	struct vfio_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)vaddr,
		.iova = iova,
		.size = size,
	};

	return ioctl(d->container_fd, VFIO_IOMMU_MAP_DMA, &map);
}

static int ours_unmap(struct bench_dev *d, uint64_t iova, uint64_t size)
{
	struct vfio_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = iova,
		.size = size,
	};

	return ioctl(d->container_fd, VFIO_IOMMU_UNMAP_DMA, &unmap);
}

static void *ours_bar0_mmap(struct bench_dev *d)
{
	return mmap(NULL, d->bar0_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    d->device_fd, d->bar0_offset);
}

static ssize_t ours_bar0_pread(struct bench_dev *d, void *buf, size_t len,
			       uint64_t off)
{
	return pread(d->device_fd, buf, len, d->bar0_offset + off);
}

static int ours_msi_setup(struct bench_dev *d, int efd)
{
	size_t sz = sizeof(struct vfio_irq_eventfds) + sizeof(__s32);
	struct vfio_irq_eventfds *set = calloc(1, sz);
	int ret;

	if (!set)
		return -1;
	set->argsz = sz;
	set->index = VFIO_PCI_MSI_IRQ_INDEX;
	if (efd >= 0) {
		set->count = 1;
		set->eventfds[0] = efd;
	}
	ret = ioctl(d->device_fd, VFIO_DEVICE_SET_IRQ_EVENTFDS, set);
	free(set);
	return ret;
}

const struct bench_ops bench_ours_ops = {
	.name = "ours",
	.open = ours_open,
	.map = ours_map,
	.unmap = ours_unmap,
	.bar0_mmap = ours_bar0_mmap,
	.bar0_pread = ours_bar0_pread,
	.msi_setup = ours_msi_setup,
	.close = ours_close,
};
