// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms PCI bus driver: today's VFIO_DEVICE_* ioctls, those of the
 * kernel's <uapi/linux/vfio.h>, on a device fd opened through a
 * /dev/vfio/<id> group (vfio_device_ops.container_ioctl).  The seed ABI's
 * ioctls are in vfio_pci.c; both drive the same device state.
 *
 * The numbers differ from the seed ABI's: region 8 is VGA (always empty
 * here), IRQ index 3 is the AER error notification and 4 the release
 * request, which is the seed's index 3.  Both reach one req_trigger.
 * This file must never see the seed header: same names, other values.
 */
#include <linux/pci.h>
#include <linux/slab.h>
#include <uapi/linux/vfio.h>

#include "vfio_pci_private.h"
#include "vfio_pci_check.h"

static_assert(VFIO_PCI_NUM_REGIONS == 9);
static_assert(VFIO_PCI_VGA_REGION_INDEX == VFIO_PCI_VGA_INDEX);
static_assert(VFIO_PCI_NUM_IRQS == 5);
/* As the seed ABI's: see vfio_pci_index_type(). */
static_assert(VFIO_PCI_INTX_IRQ_INDEX == 0 && VFIO_PCI_MSI_IRQ_INDEX == 1 &&
	      VFIO_PCI_MSIX_IRQ_INDEX == 2);

/* IRQs of a container-ABI index (< VFIO_PCI_NUM_IRQS); 0: the index is absent. */
static u32 vfio_pci_container_irq_count(struct vfio_pci_device *vdev, u32 index)
{
	switch (index) {
	case VFIO_PCI_ERR_IRQ_INDEX:
		/* AER is what reports the errors. */
		return pci_is_pcie(vdev->pdev) ? 1 : 0;
	case VFIO_PCI_REQ_IRQ_INDEX:
		return 1;
	}
	return vfio_pci_vec_count(vdev, vfio_pci_index_type(index));
}

/*
 * The ioctls work on the core's kernel copy of their argument (struct
 * vfio_ioctl_desc, vfio_pci_container_ioctls below): *len bytes in, *len
 * bytes back out on success.
 */

#define VFIO_PCI_M_INFO_CAPSZ offsetofend(struct vfio_device_info, cap_offset)

static long vfio_pci_container_get_info(struct vfio_pci_device *vdev,
				struct vfio_device_info *info, u32 *len)
{
	/* We have no device capability; a caller who knows the field sees 0. */
	if (info->argsz >= VFIO_PCI_M_INFO_CAPSZ) {
		*len = VFIO_PCI_M_INFO_CAPSZ;
		info->cap_offset = 0;
	}
	info->flags = VFIO_DEVICE_FLAGS_PCI;
	if (vdev->reset_works)
		info->flags |= VFIO_DEVICE_FLAGS_RESET;
	info->num_regions = VFIO_PCI_NUM_REGIONS;
	info->num_irqs = VFIO_PCI_NUM_IRQS;
	return 0;
}

/* As vfio_pci_mmap() will allow: a whole-page memory BAR we mapped. */
static bool vfio_pci_container_bar_mmap(struct vfio_pci_device *vdev, u32 bar)
{
	struct pci_dev *pdev = vdev->pdev;

	return vfio_pci_bar_is_mem(pdev, bar) && vdev->barmap[bar] &&
	       pci_resource_len(pdev, bar) >= PAGE_SIZE &&
	       PAGE_ALIGNED(pci_resource_start(pdev, bar));
}

/* The one capability we may emit: the MSI-X one, sparse areas included. */
#define VFIO_PCI_M_CAP_MAX (sizeof(struct vfio_region_info_cap_sparse_mmap) + \
			    2 * sizeof(struct vfio_region_sparse_mmap_area))

/*
 * The capability of the BAR holding the MSI-X table, written to @buf;
 * returns its size.
 *
 * Policy: the device fd's mmap never refused the table's pages (the seed
 * ABI allowed it), and that is safe only because the device's MSIs go
 * through interrupt remapping: whatever the user writes to the table, an
 * MSI can only raise the vectors the kernel set up for it.  probe refuses
 * a device without that unless allow_unsafe_interrupts is set.  So when
 * the MSIs are isolated (the normal case) we say so with
 * VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, as upstream does since 4.16, and a
 * user like QEMU maps the whole BAR, registers beside the table included,
 * without trapping them.  On a device bound with allow_unsafe_interrupts
 * we advise a SPARSE_MMAP that leaves the table's pages out: it protects
 * nothing against a hostile user (that one can forge MSIs by DMA anyway),
 * but keeps a cooperating user from touching the table behind the
 * kernel's back on a platform where its contents matter.
 */
static size_t vfio_pci_container_msix_cap(struct vfio_pci_device *vdev, u64 bar_size,
				  u64 *buf)
{
	struct vfio_region_info_cap_sparse_mmap *sparse = (void *)buf;
	struct vfio_info_cap_header *hdr = (void *)buf;
	struct vfio_pci_area areas[2];
	unsigned int i, n;

	memset(buf, 0, VFIO_PCI_M_CAP_MAX);
	if (vdev->msi_isolated) {
		hdr->id = VFIO_REGION_INFO_CAP_MSIX_MAPPABLE;
		hdr->version = 1;
		return sizeof(*hdr);
	}
	n = vfio_pci_msix_sparse(bar_size, vdev->msix_offset, vdev->msix_size,
				 PAGE_SIZE, areas);
	sparse->header.id = VFIO_REGION_INFO_CAP_SPARSE_MMAP;
	sparse->header.version = 1;
	sparse->nr_areas = n;
	for (i = 0; i < n; i++) {
		sparse->areas[i].offset = areas[i].offset;
		sparse->areas[i].size = areas[i].size;
	}
	return sizeof(*sparse) + n * sizeof(sparse->areas[0]);
}

static long vfio_pci_container_get_region_info(struct vfio_pci_device *vdev,
				       struct vfio_region_info *arg, u32 *len)
{
	u64 capbuf[VFIO_PCI_M_CAP_MAX / sizeof(u64)];
	struct pci_dev *pdev = vdev->pdev;
	struct vfio_region_info info = *arg;
	size_t capsz = 0;

	if (info.index >= VFIO_PCI_NUM_REGIONS)
		return -EINVAL;

	info.flags = 0;
	info.cap_offset = 0;
	info.size = 0;
	info.offset = VFIO_PCI_INDEX_TO_OFFSET(info.index);
	switch (info.index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		info.size = pdev->cfg_size;
		info.flags = VFIO_REGION_INFO_FLAG_READ |
			     VFIO_REGION_INFO_FLAG_WRITE;
		break;
	case VFIO_PCI_ROM_REGION_INDEX:
		info.size = pci_resource_len(pdev, PCI_ROM_RESOURCE);
		if (info.size)
			info.flags = VFIO_REGION_INFO_FLAG_READ;
		break;
	case VFIO_PCI_VGA_REGION_INDEX:
		/* Absent (size 0) but on a VGA device, without disable_vga. */
		if (!vdev->vga)
			break;
		info.size = VFIO_PCI_VGA_SIZE;
		info.flags = VFIO_REGION_INFO_FLAG_READ |
			     VFIO_REGION_INFO_FLAG_WRITE;
		break;
	default:
		info.size = pci_resource_len(pdev, info.index);
		if (!info.size)
			break;
		/* I/O BARs too: read/write reach them, mmap cannot. */
		info.flags = VFIO_REGION_INFO_FLAG_READ |
			     VFIO_REGION_INFO_FLAG_WRITE;
		if (!vfio_pci_container_bar_mmap(vdev, info.index))
			break;
		info.flags |= VFIO_REGION_INFO_FLAG_MMAP;
		/* msix_bar is set at open and stable while the fd is. */
		if (info.index == vdev->msix_bar)
			capsz = vfio_pci_container_msix_cap(vdev, info.size, capbuf);
		break;
	}

	if (capsz) {
		info.flags |= VFIO_REGION_INFO_FLAG_CAPS;
		if (info.argsz < sizeof(info) + capsz) {
			/* Tell the caller how much to ask for next time. */
			info.argsz = sizeof(info) + capsz;
		} else {
			/* The core gave room for it: see the ioctl table. */
			memcpy(arg + 1, capbuf, capsz);
			info.cap_offset = sizeof(info);
			*len = sizeof(info) + capsz;
		}
	}
	memcpy(arg, &info, sizeof(info));
	return 0;
}

static long vfio_pci_container_get_irq_info(struct vfio_pci_device *vdev,
				    struct vfio_irq_info *info, u32 *len)
{
	if (info->index >= VFIO_PCI_NUM_IRQS)
		return -EINVAL;
	/* As upstream: the error index of a non-PCIe device does not exist. */
	if (info->index == VFIO_PCI_ERR_IRQ_INDEX && !pci_is_pcie(vdev->pdev))
		return -EINVAL;

	info->count = vfio_pci_container_irq_count(vdev, info->index);
	info->flags = VFIO_IRQ_INFO_EVENTFD;
	if (info->index == VFIO_PCI_INTX_IRQ_INDEX)
		info->flags |= VFIO_IRQ_INFO_MASKABLE |
			       VFIO_IRQ_INFO_AUTOMASKED;
	else
		info->flags |= VFIO_IRQ_INFO_NORESIZE;
	return 0;
}

/* ---------------- VFIO_DEVICE_SET_IRQS --------------------------------- */

static int vfio_pci_container_intx_mask(struct vfio_pci_device *vdev,
				const struct vfio_irq_set *hdr, u32 dtype,
				const void *data)
{
	if (vdev->irq_type != VFIO_PCI_IRQ_INTX || hdr->start ||
	    hdr->count != 1)
		return -EINVAL;
	switch (dtype) {
	case VFIO_IRQ_SET_DATA_NONE:
		return vfio_pci_intx_mask(vdev);
	case VFIO_IRQ_SET_DATA_BOOL:
		return *(const u8 *)data ? vfio_pci_intx_mask(vdev) : 0;
	}
	/* A masking eventfd: upstream has none either. */
	return -EINVAL;
}

static int vfio_pci_container_intx_unmask(struct vfio_pci_device *vdev,
				  const struct vfio_irq_set *hdr, u32 dtype,
				  const void *data)
{
	if (vdev->irq_type != VFIO_PCI_IRQ_INTX || hdr->start ||
	    hdr->count != 1)
		return -EINVAL;
	switch (dtype) {
	case VFIO_IRQ_SET_DATA_NONE:
		return vfio_pci_intx_unmask_user(vdev);
	case VFIO_IRQ_SET_DATA_BOOL:
		return *(const u8 *)data ? vfio_pci_intx_unmask_user(vdev) : 0;
	}
	return vfio_pci_intx_set_unmask_fd(vdev, *(const s32 *)data);
}

/* ACTION_TRIGGER of INTx, MSI or MSI-X (@type). */
static int vfio_pci_container_trigger(struct vfio_pci_device *vdev,
			      enum vfio_pci_irq_type type,
			      const struct vfio_irq_set *hdr, u32 dtype,
			      const void *data)
{
	bool intx = type == VFIO_PCI_IRQ_INTX;

	if (vdev->irq_type == type && !hdr->count &&
	    dtype == VFIO_IRQ_SET_DATA_NONE) {
		vfio_pci_irq_disable(vdev, type);
		return 0;
	}
	if (vdev->irq_type != type && vdev->irq_type != VFIO_PCI_IRQ_NONE)
		return -EINVAL;
	if (intx && (hdr->start || hdr->count != 1))
		return -EINVAL;

	if (dtype == VFIO_IRQ_SET_DATA_EVENTFD) {
		/* Nothing to connect: fine on an enabled index, as upstream. */
		if (!hdr->count)
			return vdev->irq_type == type ? 0 : -EINVAL;
		return vfio_pci_irq_set_triggers(vdev, type, hdr->start,
						 hdr->count, data);
	}
	/* DATA_NONE and DATA_BOOL: loopback, only while enabled. */
	return vfio_pci_irq_fire(vdev, type, hdr->start, hdr->count,
				 dtype == VFIO_IRQ_SET_DATA_BOOL ? data : NULL);
}

/* ACTION_TRIGGER of ERR or REQ: one eventfd, loopback for testing. */
static int vfio_pci_container_notify(struct vfio_pci_device *vdev,
			     enum vfio_pci_notify which,
			     const struct vfio_irq_set *hdr, u32 dtype,
			     const void *data)
{
	switch (dtype) {
	case VFIO_IRQ_SET_DATA_NONE:
		/* As upstream: with no eventfd there is nothing to do it to. */
		if (!vfio_pci_notify_present(vdev, which))
			return -EINVAL;
		if (hdr->count)
			vfio_pci_notify_signal(vdev, which);
		else
			vfio_pci_notify_set_fd(vdev, which, -1);
		return 0;
	case VFIO_IRQ_SET_DATA_BOOL:
		if (!hdr->count)
			return -EINVAL;
		if (*(const u8 *)data)
			vfio_pci_notify_signal(vdev, which);
		return 0;
	}
	if (!hdr->count)
		return -EINVAL;
	return vfio_pci_notify_set_fd(vdev, which, *(const s32 *)data);
}

static int vfio_pci_container_set_irqs_locked(struct vfio_pci_device *vdev,
				      const struct vfio_irq_set *hdr,
				      const void *data)
{
	u32 dtype = hdr->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
	u32 action = vfio_pci_irq_set_action(hdr->flags);

	lockdep_assert_held(&vdev->lock);

	switch (hdr->index) {
	case VFIO_PCI_INTX_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_MASK)
			return vfio_pci_container_intx_mask(vdev, hdr, dtype, data);
		if (action == VFIO_IRQ_SET_ACTION_UNMASK)
			return vfio_pci_container_intx_unmask(vdev, hdr, dtype, data);
		fallthrough;
	case VFIO_PCI_MSI_IRQ_INDEX:
	case VFIO_PCI_MSIX_IRQ_INDEX:
		/* MSI masking is not offered, as upstream. */
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			return vfio_pci_container_trigger(vdev,
						  vfio_pci_index_type(hdr->index),
						  hdr, dtype, data);
		break;
	case VFIO_PCI_ERR_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			return vfio_pci_container_notify(vdev, VFIO_PCI_NOTIFY_ERR,
						 hdr, dtype, data);
		break;
	case VFIO_PCI_REQ_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			return vfio_pci_container_notify(vdev, VFIO_PCI_NOTIFY_REQ,
						 hdr, dtype, data);
		break;
	}
	/* No action, several, or one the index does not have. */
	return -ENOTTY;
}

#define VFIO_PCI_M_SET_IRQS_MINSZ offsetofend(struct vfio_irq_set, count)

/*
 * The data to copy in after the header, judged from it alone: no index
 * has more vectors than MSI-X's 2048.  The ioctl checks again against
 * the device.
 */
static u32 vfio_pci_container_set_irqs_datasz(const void *arg)
{
	const struct vfio_irq_set *hdr = arg;
	u32 data_size;

	if (vfio_pci_irq_set_check(hdr->argsz, hdr->flags, hdr->index,
				   hdr->start, hdr->count, VFIO_PCI_NUM_IRQS,
				   PCI_MSIX_FLAGS_QSIZE + 1, &data_size))
		return 0;
	return data_size;
}

static long vfio_pci_container_set_irqs(struct vfio_pci_device *vdev,
				struct vfio_irq_set *hdr, u32 *len)
{
	u32 data_size, max = 0;
	long ret;

	/* The counts are the device's, fixed: no lock needed. */
	if (hdr->index < VFIO_PCI_NUM_IRQS)
		max = vfio_pci_container_irq_count(vdev, hdr->index);
	ret = vfio_pci_irq_set_check(hdr->argsz, hdr->flags, hdr->index,
				     hdr->start, hdr->count, VFIO_PCI_NUM_IRQS,
				     max, &data_size);
	if (ret)
		return ret;
	if (*len - VFIO_PCI_M_SET_IRQS_MINSZ < data_size)
		return -EINVAL;
	*len = 0;

	mutex_lock(&vdev->lock);
	ret = vfio_pci_container_set_irqs_locked(vdev, hdr, hdr->data);
	mutex_unlock(&vdev->lock);
	return ret;
}

/* Bus and slot reset: vfio_pci_hot_reset.c serves both ABIs. */
VFIO_PCI_HR_LAYOUT(vfio_pci_hot_reset_info, vfio_pci_hot_reset,
		   vfio_pci_dependent_device);

#define VFIO_PCI_M_FEATURE_MINSZ offsetofend(struct vfio_device_feature, flags)
#define VFIO_PCI_M_FEATURE_FLAGS (VFIO_DEVICE_FEATURE_MASK | \
				  VFIO_DEVICE_FEATURE_GET | \
				  VFIO_DEVICE_FEATURE_SET | \
				  VFIO_DEVICE_FEATURE_PROBE)

/* A SET of the VF token carries a UUID after the header; nothing else. */
static u32 vfio_pci_container_feature_datasz(const void *arg)
{
	const struct vfio_device_feature *hdr = arg;

	if ((hdr->flags & VFIO_DEVICE_FEATURE_MASK) !=
	    VFIO_DEVICE_FEATURE_PCI_VF_TOKEN ||
	    (hdr->flags & ~VFIO_PCI_M_FEATURE_FLAGS) ||
	    (hdr->flags & (VFIO_DEVICE_FEATURE_PROBE |
			   VFIO_DEVICE_FEATURE_GET)) ||
	    !(hdr->flags & VFIO_DEVICE_FEATURE_SET) ||
	    hdr->argsz < VFIO_PCI_M_FEATURE_MINSZ + sizeof(uuid_t))
		return 0;
	return sizeof(uuid_t);
}

/*
 * VFIO_DEVICE_FEATURE: only PCI_VF_TOKEN, as upstream checks it: on an
 * SR-IOV PF, PROBE and SET (GET would tell a previous user's token);
 * -ENOTTY for any other feature or device.
 */
static long vfio_pci_container_feature(struct vfio_pci_device *vdev,
				       struct vfio_device_feature *hdr,
				       u32 *len)
{
	u32 flags = hdr->flags, got = *len;

	*len = 0;
	if (flags & ~VFIO_PCI_M_FEATURE_FLAGS)
		return -EINVAL;
	if (!(flags & VFIO_DEVICE_FEATURE_PROBE) &&
	    (flags & VFIO_DEVICE_FEATURE_GET) &&
	    (flags & VFIO_DEVICE_FEATURE_SET))
		return -EINVAL;
	if ((flags & VFIO_DEVICE_FEATURE_MASK) !=
	    VFIO_DEVICE_FEATURE_PCI_VF_TOKEN || !vdev->sriov_pf)
		return -ENOTTY;
	if (flags & VFIO_DEVICE_FEATURE_GET)
		return -EINVAL;
	if (flags & VFIO_DEVICE_FEATURE_PROBE)
		return 0;
	if (!(flags & VFIO_DEVICE_FEATURE_SET) ||
	    got < VFIO_PCI_M_FEATURE_MINSZ + sizeof(uuid_t))
		return -EINVAL;
	vfio_pci_set_vf_token(vdev, (const uuid_t *)hdr->data);
	return 0;
}

long vfio_pci_container_ioctl(void *device_data, unsigned int cmd, void *arg,
			   u32 *len)
{
	struct vfio_pci_device *vdev = device_data;

	switch (cmd) {
	case VFIO_DEVICE_GET_INFO:
		return vfio_pci_container_get_info(vdev, arg, len);
	case VFIO_DEVICE_GET_REGION_INFO:
		return vfio_pci_container_get_region_info(vdev, arg, len);
	case VFIO_DEVICE_GET_IRQ_INFO:
		return vfio_pci_container_get_irq_info(vdev, arg, len);
	case VFIO_DEVICE_SET_IRQS:
		return vfio_pci_container_set_irqs(vdev, arg, len);
	case VFIO_DEVICE_RESET:
		return vfio_pci_reset(vdev);
	case VFIO_DEVICE_GET_PCI_HOT_RESET_INFO:
		return vfio_pci_ioctl_hot_reset_info(vdev, arg, len);
	case VFIO_DEVICE_PCI_HOT_RESET:
		return vfio_pci_ioctl_hot_reset(vdev, arg, len);
	case VFIO_DEVICE_FEATURE:
		return vfio_pci_container_feature(vdev, arg, len);
	}
	return -ENOTTY;
}

/*
 * What each ioctl reads and writes of its argument.  Anything else
 * (IOEVENTFD, QUERY_GFX_PLANE, ...; DEVICE_FEATURE's features other than
 * PCI_VF_TOKEN) is not offered and
 * gets -ENOTTY from the core.
 */
const struct vfio_ioctl_desc vfio_pci_container_ioctls[] = {
	{ VFIO_DEVICE_GET_INFO,
	  offsetofend(struct vfio_device_info, num_irqs),
	  VFIO_PCI_M_INFO_CAPSZ },
	{ VFIO_DEVICE_GET_REGION_INFO,
	  offsetofend(struct vfio_region_info, offset),
	  sizeof(struct vfio_region_info) + VFIO_PCI_M_CAP_MAX },
	{ VFIO_DEVICE_GET_IRQ_INFO,
	  offsetofend(struct vfio_irq_info, count) },
	{ VFIO_DEVICE_SET_IRQS, VFIO_PCI_M_SET_IRQS_MINSZ, 0,
	  vfio_pci_container_set_irqs_datasz },
	{ VFIO_DEVICE_RESET },
	{ VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, VFIO_PCI_HR_MINSZ,
	  VFIO_PCI_HR_MINSZ + VFIO_IOCTL_DATA_MAX, NULL, true },
	{ VFIO_DEVICE_PCI_HOT_RESET, VFIO_PCI_HR_MINSZ, 0,
	  vfio_pci_hot_reset_datasz },
	{ VFIO_DEVICE_FEATURE, VFIO_PCI_M_FEATURE_MINSZ, 0,
	  vfio_pci_container_feature_datasz },
	{ }
};
