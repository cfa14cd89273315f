// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every number of the 2011 VFIO ABI that a compiled program depends on:
 * ioctl request values, structure sizes, alignments, field offsets and
 * sizes, flag bits.  Built once against the seed header and once against
 * ours (-DABI_TABLE=... -DABI_TABLE_LEN=...), since the two headers cannot
 * share a translation unit; abi_compare.c checks the two tables agree.
 */
#include <stddef.h>
#include <sys/ioctl.h>		/* the 2011 header relies on it for _IO */

#include "uapi/vfio.h"

#include "abi_table.h"

/* Stringified here, not in a helper macro, so the names stay unexpanded. */
#define IOC(x)		{ "ioctl-numbers", #x, (unsigned long long)(x) }
#define FLAG(x)		{ "flags", #x, (unsigned long long)(x) }
#define STRUCT(s)							\
	{ "struct-layout", "sizeof(struct " #s ")", sizeof(struct s) },	\
	{ "struct-layout", "alignof(struct " #s ")", _Alignof(struct s) }
#define FIELD(s, f)							\
	{ "struct-layout", "offsetof(" #s ", " #f ")",			\
	  offsetof(struct s, f) },					\
	{ "struct-layout", "sizeof(" #s "." #f ")",			\
	  sizeof(((struct s *)0)->f) }

const struct abi_entry ABI_TABLE[] = {
	IOC(VFIO_TYPE),
	IOC(VFIO_BASE),
	IOC(VFIO_GROUP_GET_INFO),
	IOC(VFIO_GROUP_MERGE),
	IOC(VFIO_GROUP_UNMERGE),
	IOC(VFIO_GROUP_GET_IOMMU_FD),
	IOC(VFIO_GROUP_GET_DEVICE_FD),
	IOC(VFIO_IOMMU_GET_INFO),
	IOC(VFIO_IOMMU_MAP_DMA),
	IOC(VFIO_IOMMU_UNMAP_DMA),
	IOC(VFIO_DEVICE_GET_INFO),
	IOC(VFIO_DEVICE_GET_REGION_INFO),
	IOC(VFIO_DEVICE_GET_IRQ_INFO),
	IOC(VFIO_DEVICE_SET_IRQ_EVENTFDS),
	IOC(VFIO_DEVICE_UNMASK_IRQ),
	IOC(VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS),
	IOC(VFIO_DEVICE_RESET),

	FLAG(VFIO_GROUP_FLAGS_VIABLE),
	FLAG(VFIO_GROUP_FLAGS_MM_LOCKED),
	FLAG(VFIO_DMA_MAP_FLAG_READ),
	FLAG(VFIO_DMA_MAP_FLAG_WRITE),
	FLAG(VFIO_DEVICE_FLAGS_RESET),
	FLAG(VFIO_REGION_INFO_FLAG_MMAP),
	FLAG(VFIO_REGION_INFO_FLAG_RO),
	FLAG(VFIO_IRQ_INFO_FLAG_LEVEL),

	STRUCT(vfio_group_info),
	FIELD(vfio_group_info, argsz),
	FIELD(vfio_group_info, flags),

	STRUCT(vfio_iommu_info),
	FIELD(vfio_iommu_info, argsz),
	FIELD(vfio_iommu_info, flags),
	FIELD(vfio_iommu_info, iova_max),
	FIELD(vfio_iommu_info, iova_min),
	FIELD(vfio_iommu_info, pgsize_bitmap),

	STRUCT(vfio_dma_map),
	FIELD(vfio_dma_map, argsz),
	FIELD(vfio_dma_map, flags),
	FIELD(vfio_dma_map, vaddr),
	FIELD(vfio_dma_map, iova),
	FIELD(vfio_dma_map, size),

	STRUCT(vfio_dma_unmap),
	FIELD(vfio_dma_unmap, argsz),
	FIELD(vfio_dma_unmap, flags),
	FIELD(vfio_dma_unmap, iova),
	FIELD(vfio_dma_unmap, size),

	STRUCT(vfio_device_info),
	FIELD(vfio_device_info, argsz),
	FIELD(vfio_device_info, flags),
	FIELD(vfio_device_info, num_regions),
	FIELD(vfio_device_info, num_irqs),

	STRUCT(vfio_region_info),
	FIELD(vfio_region_info, argsz),
	FIELD(vfio_region_info, flags),
	FIELD(vfio_region_info, index),
	FIELD(vfio_region_info, resv),
	FIELD(vfio_region_info, size),
	FIELD(vfio_region_info, offset),

	STRUCT(vfio_irq_info),
	FIELD(vfio_irq_info, argsz),
	FIELD(vfio_irq_info, flags),
	FIELD(vfio_irq_info, index),
	FIELD(vfio_irq_info, count),

	STRUCT(vfio_irq_eventfds),
	FIELD(vfio_irq_eventfds, argsz),
	FIELD(vfio_irq_eventfds, flags),
	FIELD(vfio_irq_eventfds, index),
	FIELD(vfio_irq_eventfds, count),
	{ "struct-layout", "offsetof(vfio_irq_eventfds, eventfds)",
	  offsetof(struct vfio_irq_eventfds, eventfds) },
	{ "struct-layout", "sizeof(vfio_irq_eventfds.eventfds[0])",
	  sizeof(((struct vfio_irq_eventfds *)0)->eventfds[0]) },

	STRUCT(vfio_unmask_irq),
	FIELD(vfio_unmask_irq, argsz),
	FIELD(vfio_unmask_irq, flags),
	FIELD(vfio_unmask_irq, index),
	FIELD(vfio_unmask_irq, subindex),
};

const unsigned int ABI_TABLE_LEN = sizeof(ABI_TABLE) / sizeof(ABI_TABLE[0]);
