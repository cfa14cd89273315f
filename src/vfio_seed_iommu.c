// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: the seed ABI's IOMMU fd, one user of a set's IOMMU
 * object (vfio_iommu.c) that maps the owner's memory for DMA.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/iommu.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "include/uapi/vfio.h"
#include "vfio_private.h"

static int vfio_iommu_get_info(struct vfio_iommu *iommu,
			       struct vfio_iommu_info __user *arg)
{
	size_t minsz = offsetofend(struct vfio_iommu_info, pgsize_bitmap);
	struct vfio_iommu_info info;

	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (vfio_check_argsz(info.argsz, minsz))
		return -EINVAL;

	info.flags = 0;
	info.iova_min = iommu->domain->geometry.aperture_start;
	info.iova_max = iommu->domain->geometry.aperture_end;
	info.pgsize_bitmap = iommu->domain->pgsize_bitmap;

	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static int vfio_iommu_map_ioctl(struct vfio_iommu *iommu,
				struct vfio_dma_map __user *arg)
{
	size_t minsz = offsetofend(struct vfio_dma_map, size);
	struct vfio_dma_map map;
	int prot, ret;

	if (copy_from_user(&map, arg, minsz))
		return -EFAULT;
	if (vfio_check_argsz(map.argsz, minsz))
		return -EINVAL;
	prot = vfio_dma_map_prot(map.flags);
	if (prot < 0)
		return prot;

	ret = vfio_dma_map(iommu, map.vaddr, map.iova, map.size, prot);
	/* The seed ABI documents EBUSY for an overlap. */
	return ret == -EEXIST ? -EBUSY : ret;
}

static int vfio_iommu_unmap_ioctl(struct vfio_iommu *iommu,
				  struct vfio_dma_unmap __user *arg)
{
	size_t minsz = offsetofend(struct vfio_dma_unmap, size);
	struct vfio_dma_unmap unmap;
	u64 unmapped;

	if (copy_from_user(&unmap, arg, minsz))
		return -EFAULT;
	if (vfio_check_argsz(unmap.argsz, minsz) || unmap.flags)
		return -EINVAL;

	return vfio_dma_unmap(iommu, unmap.iova, unmap.size, false, &unmapped);
}

static long vfio_iommu_fops_ioctl(struct file *filep, unsigned int cmd,
				  unsigned long arg)
{
	struct vfio_iommu *iommu = filep->private_data;
	void __user *uarg = (void __user *)arg;

	if (cmd == VFIO_IOMMU_GET_INFO)
		return vfio_iommu_get_info(iommu, uarg);

	/* Pages are pinned in, and charged to, the owner's mm only. */
	if (cmd == VFIO_IOMMU_MAP_DMA || cmd == VFIO_IOMMU_UNMAP_DMA) {
		if (current->mm != iommu->mm)
			return -EPERM;
		if (cmd == VFIO_IOMMU_MAP_DMA)
			return vfio_iommu_map_ioctl(iommu, uarg);
		return vfio_iommu_unmap_ioctl(iommu, uarg);
	}
	return -ENOTTY;
}

static int vfio_iommu_fops_release(struct inode *inode, struct file *filep)
{
	struct vfio_iommu *iommu = filep->private_data;

	mutex_lock(&vfio_lock);
	vfio_iommu_user_put(iommu);
	vfio_unlock();
	vfio_iommu_put(iommu);
	return 0;
}

const struct file_operations vfio_iommu_fops = {
	.owner		= THIS_MODULE,
	.release	= vfio_iommu_fops_release,
	.unlocked_ioctl	= vfio_iommu_fops_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};
