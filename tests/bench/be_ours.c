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
#include <sys/ioctl.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "bench.h"

#define BE_WANT_GROUP
typedef struct vfio_dma_map be_dma_map;
typedef struct vfio_dma_unmap be_dma_unmap;
#include "be_common.h"

static void ours_close(struct bench_dev *d)
{
	bench_close_fd(&d->device_fd);
	bench_close_fd(&d->container_fd);
	bench_close_fd(&d->group_fd);
}

static int ours_open(struct bench_dev *d, const char *name)
{
	struct vfio_group_info ginfo = { .argsz = sizeof(ginfo) };
	char path[64];

	snprintf(path, sizeof(path), "/dev/vfio/pci:%d", d->group);
	d->group_fd = open(path, O_RDWR);
	if (d->group_fd < 0)
		return bench_fail(d, "open %s", path);
	if (ioctl(d->group_fd, VFIO_GROUP_GET_INFO, &ginfo) < 0)
		return bench_fail(d, "VFIO_GROUP_GET_INFO on %s", path);
	if (!(ginfo.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		errno = EBUSY;
		return bench_fail(d, "group %s is not viable", path);
	}
	d->container_fd = ioctl(d->group_fd, VFIO_GROUP_GET_IOMMU_FD);
	if (d->container_fd < 0)
		return bench_fail(d, "VFIO_GROUP_GET_IOMMU_FD on %s", path);
	return be_get_device_fd(d, name);
}

/* The group ABI does not report what it unmapped. */
static int ours_unmap(struct bench_dev *d, uint64_t iova, uint64_t size)
{
	return be_unmap_dma(d, iova, size, NULL);
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
	.open = ours_open,
	.region_info = be_region_info,
	.msi_info = be_msi_info,
	.map = be_map,
	.unmap = ours_unmap,
	.msi_setup = ours_msi_setup,
	.close = ours_close,
};
