/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-bench: the backend code that reads the same in more than one ABI.
 * Most ioctl, structure and index names are shared by the headers, their
 * numbers and layouts are not: each backend includes this after its own
 * VFIO header, and so gets these functions compiled against that header.
 *
 * Not every backend has every part, so the parts beyond the device's
 * region and IRQ info are asked for before the include:
 *
 *	BE_WANT_GROUP		the group/container calls (ours, intree):
 *				GET_DEVICE_FD, MAP_DMA, UNMAP_DMA.  Where
 *				only a structure's name differs, the backend
 *				names it first:
 *		typedef struct ... be_dma_map;	  MAP_DMA's argument
 *		typedef struct ... be_dma_unmap;  UNMAP_DMA's argument
 *	BE_WANT_SET_IRQS	VFIO_DEVICE_SET_IRQS of the container ABI header
 *				(intree, iommufd); the seed ABI has its own
 *				SET_IRQ_EVENTFDS instead.
 *
 * A part nobody asked for is left out rather than made inline: it would
 * not compile against a header that lacks its names.
 */
#ifndef VFIO_BENCH_BE_COMMON_H
#define VFIO_BENCH_BE_COMMON_H

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "bench.h"

static int be_region_info(struct bench_dev *d, enum bench_region_id id,
			  struct bench_region *r)
{
	struct vfio_region_info info = {
		.argsz = sizeof(info),
		.index = id == BENCH_REGION_BAR0 ? VFIO_PCI_BAR0_REGION_INDEX :
			 VFIO_PCI_CONFIG_REGION_INDEX,
	};

	if (ioctl(d->device_fd, VFIO_DEVICE_GET_REGION_INFO, &info) < 0)
		return -1;
	r->offset = info.offset;
	r->size = info.size;
	r->mmap_ok = !!(info.flags & VFIO_REGION_INFO_FLAG_MMAP);
	return 0;
}

static int be_msi_info(struct bench_dev *d, int *count)
{
	struct vfio_irq_info info = {
		.argsz = sizeof(info),
		.index = VFIO_PCI_MSI_IRQ_INDEX,
	};

	if (ioctl(d->device_fd, VFIO_DEVICE_GET_IRQ_INFO, &info) < 0)
		return -1;
	*count = info.count;
	return 0;
}

#ifdef BE_WANT_GROUP
static int be_get_device_fd(struct bench_dev *d, const char *name)
{
	d->device_fd = ioctl(d->group_fd, VFIO_GROUP_GET_DEVICE_FD, name);
	if (d->device_fd < 0)
		return bench_fail(d, "VFIO_GROUP_GET_DEVICE_FD %s", name);
	return 0;
}

static int be_map(struct bench_dev *d, void *vaddr, uint64_t iova,
		  uint64_t size)
{
	be_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)vaddr,
		.iova = iova,
		.size = size,
	};

	return ioctl(d->container_fd, VFIO_IOMMU_MAP_DMA, &map);
}

/*
 * Unmap [iova, iova + size).  *unmapped, when not NULL: the size field as
 * the kernel left it (type1 sets it to what it unmapped).
 */
static int be_unmap_dma(struct bench_dev *d, uint64_t iova, uint64_t size,
			uint64_t *unmapped)
{
	be_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = iova,
		.size = size,
	};

	if (ioctl(d->container_fd, VFIO_IOMMU_UNMAP_DMA, &unmap) < 0)
		return -1;
	if (unmapped)
		*unmapped = unmap.size;
	return 0;
}
#endif /* BE_WANT_GROUP */

#ifdef BE_WANT_SET_IRQS
/* Connect eventfd efd to MSI vector 0; efd < 0 disables MSI. */
static int be_set_irqs_msi(struct bench_dev *d, int efd)
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
		/* DATA_NONE with count 0 is the ABI's "disable the index". */
		set->argsz = sizeof(*set);
		set->flags = VFIO_IRQ_SET_DATA_NONE |
			     VFIO_IRQ_SET_ACTION_TRIGGER;
		set->count = 0;
	}
	ret = ioctl(d->device_fd, VFIO_DEVICE_SET_IRQS, set);
	free(set);
	return ret;
}
#endif /* BE_WANT_SET_IRQS */

#endif /* VFIO_BENCH_BE_COMMON_H */
