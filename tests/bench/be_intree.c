// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-bench backend for the VFIO that ships with the kernel: the modern
 * container ABI of the distribution's <linux/vfio.h>.  /dev/vfio/N is the
 * group, /dev/vfio/vfio the container holding the type1 IOMMU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/vfio.h>
#include "bench.h"

static void intree_close(struct bench_dev *d)
{
	if (d->device_fd >= 0)
		close(d->device_fd);
	if (d->group_fd >= 0)
		close(d->group_fd);
	if (d->container_fd >= 0)
		close(d->container_fd);
	d->device_fd = -1;
	d->container_fd = -1;
	d->group_fd = -1;
}

static int intree_open(struct bench_dev *d, const char *name)
{
	struct vfio_group_status status = { .argsz = sizeof(status) };
	struct vfio_region_info rinfo = { .argsz = sizeof(rinfo) };
	struct vfio_irq_info iinfo = { .argsz = sizeof(iinfo) };
	char path[64];
	int api;

	d->group_fd = d->container_fd = d->device_fd = -1;
	d->group = bench_group_of(name);
	if (d->group < 0)
		return bench_fail(d, "iommu_group of %s", name);

	d->container_fd = open("/dev/vfio/vfio", O_RDWR);
	if (d->container_fd < 0)
		return bench_fail(d, "open /dev/vfio/vfio");
	api = ioctl(d->container_fd, VFIO_GET_API_VERSION);
	if (api != VFIO_API_VERSION) {
		errno = EPROTO;
		bench_fail(d, "VFIO_GET_API_VERSION returned %d", api);
		goto err;
	}
	if (ioctl(d->container_fd, VFIO_CHECK_EXTENSION,
		  VFIO_TYPE1v2_IOMMU) <= 0) {
		errno = ENOTSUP;
		bench_fail(d, "no VFIO_TYPE1v2_IOMMU extension");
		goto err;
	}

	snprintf(path, sizeof(path), "/dev/vfio/%d", d->group);
	d->group_fd = open(path, O_RDWR);
	if (d->group_fd < 0) {
		bench_fail(d, "open %s", path);
		goto err;
	}
	if (ioctl(d->group_fd, VFIO_GROUP_GET_STATUS, &status) < 0) {
		bench_fail(d, "VFIO_GROUP_GET_STATUS on %s", path);
		goto err;
	}
	if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		errno = EBUSY;
		bench_fail(d, "group %s is not viable", path);
		goto err;
	}
	if (ioctl(d->group_fd, VFIO_GROUP_SET_CONTAINER,
		  &d->container_fd) < 0) {
		bench_fail(d, "VFIO_GROUP_SET_CONTAINER on %s", path);
		goto err;
	}
	if (ioctl(d->container_fd, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) < 0) {
		bench_fail(d, "VFIO_SET_IOMMU VFIO_TYPE1v2_IOMMU");
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
	intree_close(d);
	return -1;
}

static int intree_map(struct bench_dev *d, void *vaddr, uint64_t iova,
		      uint64_t size)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)vaddr,
		.iova = iova,
		.size = size,
	};

	return ioctl(d->container_fd, VFIO_IOMMU_MAP_DMA, &map);
}

static int intree_unmap(struct bench_dev *d, uint64_t iova, uint64_t size)
{
	struct vfio_iommu_type1_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = iova,
		.size = size,
	};

	if (ioctl(d->container_fd, VFIO_IOMMU_UNMAP_DMA, &unmap) < 0)
		return -1;
	/* type1 reports what it unmapped; anything short is a failure. */
	if (unmap.size != size) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static void *intree_bar0_mmap(struct bench_dev *d)
{
	return mmap(NULL, d->bar0_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    d->device_fd, d->bar0_offset);
}

static ssize_t intree_bar0_pread(struct bench_dev *d, void *buf, size_t len,
				 uint64_t off)
{
	return pread(d->device_fd, buf, len, d->bar0_offset + off);
}

static int intree_msi_setup(struct bench_dev *d, int efd)
{
	size_t sz = sizeof(struct vfio_irq_set) + sizeof(__s32);
	struct vfio_irq_set *set = calloc(1, sz);
	int ret;

	if (!set)
		return -1;
	set->argsz = sz;
	set->index = VFIO_PCI_MSI_IRQ_INDEX;
	set->start = 0;
	if (efd >= 0) {
		set->flags = VFIO_IRQ_SET_DATA_EVENTFD |
			     VFIO_IRQ_SET_ACTION_TRIGGER;
		set->count = 1;
		memcpy(set->data, &efd, sizeof(efd));
	} else {
		set->argsz = sizeof(*set);
		set->flags = VFIO_IRQ_SET_DATA_NONE |
			     VFIO_IRQ_SET_ACTION_TRIGGER;
		set->count = 0;
	}
	ret = ioctl(d->device_fd, VFIO_DEVICE_SET_IRQS, set);
	free(set);
	return ret;
}

const struct bench_ops bench_intree_ops = {
	.name = "intree",
	.open = intree_open,
	.map = intree_map,
	.unmap = intree_unmap,
	.bar0_mmap = intree_bar0_mmap,
	.bar0_pread = intree_bar0_pread,
	.msi_setup = intree_msi_setup,
	.close = intree_close,
};
