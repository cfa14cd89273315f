// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms: the VFIO core module.
 *
 * The objects, one file each: groups (vfio_group.c), devices and their
 * fds (vfio_device.c), IOMMU objects (vfio_iommu.c) and their DMA
 * mappings (vfio_dma.c).  Two front ends serve them: the seed ABI of
 * 2011 (vfio_seed_group.c, vfio_seed_iommu.c) and today's container ABI
 * (vfio_container.c, vfio_container_group.c).  Locking: vfio_private.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>

#include "vfio_private.h"

/* The topology lock: see vfio_private.h. */
DEFINE_MUTEX(vfio_lock);

static int __init vfio_init(void)
{
	int ret;

	ret = vfio_group_init();
	if (ret)
		return ret;
	ret = vfio_container_init();
	if (ret) {
		vfio_group_exit();
		return ret;
	}
	pr_info("VFIO core (group and container ABIs) version " VFIO_DKMS_VERSION "\n");
	return 0;
}

static void __exit vfio_exit(void)
{
	vfio_container_exit();
	vfio_iommu_removals_exit();
	vfio_group_exit();
}

module_init(vfio_init);
module_exit(vfio_exit);

MODULE_VERSION(VFIO_DKMS_VERSION);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("VFIO core: IOMMU groups, DMA mapping and device access for user-space drivers");
