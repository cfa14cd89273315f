// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-bench backend for the VFIO that ships with the kernel: the
 * container ABI of the distribution's <linux/vfio.h>.  /dev/vfio/N is the
 * group, /dev/vfio/vfio the container holding the type1 IOMMU.
 *
 * Our module answers the same ABI on the same nodes, so this code is
 * also the backend "container": our vfio.ko driven as QEMU or DPDK drive it
 * today.  Nothing differs but the name printed on its lines, which the
 * guest script picks to match the modules it loaded and bench.c maps to
 * this one table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/vfio.h>
#include "bench.h"

#define BE_WANT_GROUP
#define BE_WANT_SET_IRQS
typedef struct vfio_iommu_type1_dma_map be_dma_map;
typedef struct vfio_iommu_type1_dma_unmap be_dma_unmap;
#include "be_common.h"

static void intree_close(struct bench_dev *d)
{
	bench_close_fd(&d->device_fd);
	bench_close_fd(&d->group_fd);
	bench_close_fd(&d->container_fd);
}

static int intree_open(struct bench_dev *d, const char *name)
{
	struct vfio_group_status status = { .argsz = sizeof(status) };
	char path[64];
	int api;

	d->container_fd = open("/dev/vfio/vfio", O_RDWR);
	if (d->container_fd < 0)
		return bench_fail(d, "open /dev/vfio/vfio");
	api = ioctl(d->container_fd, VFIO_GET_API_VERSION);
	if (api != VFIO_API_VERSION) {
		errno = EPROTO;
		return bench_fail(d, "VFIO_GET_API_VERSION returned %d", api);
	}
	if (ioctl(d->container_fd, VFIO_CHECK_EXTENSION,
		  VFIO_TYPE1v2_IOMMU) <= 0) {
		errno = ENOTSUP;
		return bench_fail(d, "no VFIO_TYPE1v2_IOMMU extension");
	}

	snprintf(path, sizeof(path), "/dev/vfio/%d", d->group);
	d->group_fd = open(path, O_RDWR);
	if (d->group_fd < 0)
		return bench_fail(d, "open %s", path);
	if (ioctl(d->group_fd, VFIO_GROUP_GET_STATUS, &status) < 0)
		return bench_fail(d, "VFIO_GROUP_GET_STATUS on %s", path);
	if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		errno = EBUSY;
		return bench_fail(d, "group %s is not viable", path);
	}
	if (ioctl(d->group_fd, VFIO_GROUP_SET_CONTAINER, &d->container_fd) < 0)
		return bench_fail(d, "VFIO_GROUP_SET_CONTAINER on %s", path);
	if (ioctl(d->container_fd, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) < 0)
		return bench_fail(d, "VFIO_SET_IOMMU VFIO_TYPE1v2_IOMMU");
	return be_get_device_fd(d, name);
}

static int intree_unmap(struct bench_dev *d, uint64_t iova, uint64_t size)
{
	uint64_t unmapped;

	if (be_unmap_dma(d, iova, size, &unmapped) < 0)
		return -1;
	/* type1 reports what it unmapped; anything short is a failure. */
	if (unmapped != size) {
		errno = EIO;
		return -1;
	}
	return 0;
}

const struct bench_ops bench_intree_ops = {
	.open = intree_open,
	.region_info = be_region_info,
	.msi_info = be_msi_info,
	.map = be_map,
	.unmap = intree_unmap,
	.msi_setup = be_set_irqs_msi,
	.close = intree_close,
};
