/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: pure decisions of the PCI driver's container-ABI device ioctls
 * (VFIO_DEVICE_SET_IRQS checks, the MSI-X sparse mmap areas).  Plain
 * integers in and out, so that the host unit tests compile them as they
 * are.  The includer provides the container ABI's constants: the kernel's
 * <uapi/linux/vfio.h> in the module, the distribution's <linux/vfio.h> in
 * the unit tests.  Never include the seed header next to this one.
 */
#ifndef VFIO_PCI_CHECK_H
#define VFIO_PCI_CHECK_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#endif

/*
 * The header of VFIO_DEVICE_SET_IRQS as upstream checks it: argsz covers
 * the fixed part, @index is below @num_indexes, no unknown flag bit,
 * exactly one data type, and [start, start + count) within the @max IRQs
 * of the index (so an index without IRQs takes nothing, not even a
 * count 0 disable).  The data array must fit in argsz; its size is
 * returned in *@data_size.  The action is not checked here: an action the
 * index does not implement (none, several, or MASK on MSI) is -ENOTTY
 * from the dispatcher, as upstream.
 */
static inline int vfio_pci_irq_set_check(u32 argsz, u32 flags, u32 index,
					 u32 start, u32 count,
					 u32 num_indexes, u32 max,
					 u32 *data_size)
{
	const u32 minsz = 5 * sizeof(u32);	/* argsz..count */
	u32 size;

	*data_size = 0;
	if (argsz < minsz || index >= num_indexes ||
	    (flags & ~(VFIO_IRQ_SET_DATA_TYPE_MASK |
		       VFIO_IRQ_SET_ACTION_TYPE_MASK)))
		return -EINVAL;
	/* Also catches start + count wrapping around. */
	if (start >= max || count > max - start)
		return -EINVAL;

	switch (flags & VFIO_IRQ_SET_DATA_TYPE_MASK) {
	case VFIO_IRQ_SET_DATA_NONE:
		size = 0;
		break;
	case VFIO_IRQ_SET_DATA_BOOL:
		size = sizeof(u8);
		break;
	case VFIO_IRQ_SET_DATA_EVENTFD:
		size = sizeof(s32);
		break;
	default:
		return -EINVAL;
	}
	/* count <= max, which is at most 2048 (MSI-X): no overflow. */
	if (argsz - minsz < (u64)count * size)
		return -EINVAL;
	*data_size = count * size;
	return 0;
}

/* The single action of @flags, or 0 when there are none or several. */
static inline u32 vfio_pci_irq_set_action(u32 flags)
{
	u32 action = flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;

	return action && !(action & (action - 1)) ? action : 0;
}

/* An mmap-able piece of a BAR, relative to its start. */
struct vfio_pci_area {
	u64 offset;
	u64 size;
};

/*
 * The parts of a BAR of @bar_size bytes that may be mapped when the pages
 * holding the MSI-X table ([@table_offset, + @table_size)) must stay out:
 * at most one area before and one after.  @page_size is a power of two
 * and @bar_size a multiple of it (BARs of a page or more are naturally
 * aligned).  Returns the number of areas written to @areas, 0 to 2.
 */
static inline unsigned int vfio_pci_msix_sparse(u64 bar_size, u64 table_offset,
						u64 table_size, u64 page_size,
						struct vfio_pci_area areas[2])
{
	u64 start = table_offset & ~(page_size - 1);
	u64 end = (table_offset + table_size + page_size - 1) &
		  ~(page_size - 1);
	unsigned int n = 0;

	/* A table outside the BAR (broken device) hides nothing. */
	if (!table_size || table_offset >= bar_size) {
		areas[0].offset = 0;
		areas[0].size = bar_size;
		return bar_size ? 1 : 0;
	}
	if (end > bar_size)
		end = bar_size;
	if (start) {
		areas[n].offset = 0;
		areas[n].size = start;
		n++;
	}
	if (end < bar_size) {
		areas[n].offset = end;
		areas[n].size = bar_size - end;
		n++;
	}
	return n;
}

#endif /* VFIO_PCI_CHECK_H */
