// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: /dev/vfio/vfio, the container of today's VFIO ABI.
 *
 * A container is an IOMMU object (vfio_iommu.c) that starts empty.
 * Groups join it through their /dev/vfio/<id> node (vfio_container_group.c);
 * SET_IOMMU then opens it as the first user of a seed set is opened, and
 * the container holds that user until its last group leaves, when every
 * mapping goes and it is back to its unset state, as upstream's is.
 * MAP_DMA and UNMAP_DMA reach the DMA engine the seed IOMMU fd uses; only
 * the type1 argument rules, errnos and capability chain are upstream's.
 *
 * Nothing here is privileged by itself: the node is 0666 as upstream's,
 * and a container can do nothing until a group, whose node is guarded,
 * has joined it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <uapi/linux/vfio.h>

#include "compat.h"
#include "vfio_private.h"

/* The IOVA ranges a reply carries at most, more than any IOMMU has. */
#define VFIO_CONTAINER_MAX_RANGES	64

static const struct file_operations vfio_container_fops;

bool vfio_file_is_container(struct file *file)
{
	return file->f_op == &vfio_container_fops;
}

/*
 * A group of @iommu left it (UNSET_CONTAINER, its node's close, or its
 * last device gone): without groups a container loses its IOMMU and its
 * mappings, and SET_IOMMU may be called again.
 */
void vfio_container_group_gone(struct vfio_iommu *iommu)
{
	lockdep_assert_held(&vfio_lock);
	if (!list_empty(&iommu->group_list) || !iommu->type)
		return;
	WRITE_ONCE(iommu->type, 0);
	/* An ioctl still running keeps the domain until it returns. */
	if (atomic_dec_and_test(&iommu->type1_users))
		vfio_iommu_user_put(iommu);
}

static long vfio_container_check_extension(struct vfio_iommu *iommu,
					   unsigned long arg)
{
	long ret = 0;

	switch (arg) {
	case VFIO_TYPE1_IOMMU:
	case VFIO_TYPE1v2_IOMMU:
	case VFIO_UNMAP_ALL:
		return 1;
	case VFIO_DMA_CC_IOMMU:
		/* Known once there is a domain, as upstream's answer. */
		mutex_lock(&vfio_lock);
		ret = iommu->type && (iommu->prot & IOMMU_CACHE);
		vfio_unlock();
		return ret;
	}
	/* Never negative: QEMU takes -1 for "supported". */
	return 0;
}

static long vfio_container_set_iommu(struct vfio_iommu *iommu,
				     unsigned long arg)
{
	long ret;

	mutex_lock(&vfio_lock);
	/* Only a group gives the right to allocate a domain. */
	if (list_empty(&iommu->group_list) || iommu->type) {
		ret = -EINVAL;
		goto out;
	}
	if (arg != VFIO_TYPE1_IOMMU && arg != VFIO_TYPE1v2_IOMMU) {
		ret = -ENODEV;		/* no IOMMU driver of that type */
		goto out;
	}
	/* The last set's ioctl still runs: it is still open, join it. */
	if (atomic_inc_not_zero(&iommu->type1_users)) {
		WRITE_ONCE(iommu->type, arg);
		ret = 0;
		goto out;
	}
	ret = vfio_iommu_user_get(iommu);
	if (ret)
		goto out;
	WRITE_ONCE(iommu->type, arg);
	/* Raised last: vfio_container_use() then sees the open set. */
	atomic_set_release(&iommu->type1_users, 1);
out:
	vfio_unlock();
	return ret;
}

/* The last one out after the last group left closes the set. */
static void vfio_container_unuse(struct vfio_iommu *iommu)
{
	if (atomic_dec_and_test(&iommu->type1_users)) {
		mutex_lock(&vfio_lock);
		vfio_iommu_user_put(iommu);
		vfio_unlock();
	}
}

/*
 * The type1 ioctls share the user SET_IOMMU took, so that the domain
 * cannot go under them when the last group leaves meanwhile, and take
 * no global lock: mapping is what a VMM does most.  Any holder of the
 * container fd maps and unmaps, as with upstream's type1: a mapping
 * pins, and charges, the memory of the task that made it (vfio_dma.c).
 */
static int vfio_container_use(struct vfio_iommu *iommu)
{
	/* Fully ordered: what the opening wrote before the release is seen. */
	if (!atomic_inc_not_zero(&iommu->type1_users))
		return -EINVAL;		/* upstream: no IOMMU driver yet */
	/* Its last group gone while another ioctl runs: unset already. */
	if (!READ_ONCE(iommu->type)) {
		vfio_container_unuse(iommu);
		return -EINVAL;
	}
	return 0;
}

/*
 * The capability chain of GET_INFO, in a buffer the caller frees, with
 * each header's @next already an offset from the start of the reply:
 * the IOVA ranges, then how many more mappings fit (QEMU sizes its
 * memory listener by that).  Each capability is 8-byte aligned.
 */
static void *vfio_container_caps(struct vfio_iommu *iommu, size_t *size)
{
	struct vfio_iommu_type1_info_cap_iova_range *iova;
	struct vfio_iommu_type1_info_dma_avail *avail;
	size_t iova_sz, avail_off;
	struct vfio_resv *ranges;
	unsigned int i, n;
	void *buf;

	ranges = kcalloc(VFIO_CONTAINER_MAX_RANGES, sizeof(*ranges),
			 GFP_KERNEL);
	if (!ranges)
		return ERR_PTR(-ENOMEM);
	n = min_t(unsigned int, VFIO_CONTAINER_MAX_RANGES,
		  vfio_dma_iova_ranges(iommu, ranges,
				       VFIO_CONTAINER_MAX_RANGES));

	iova_sz = ALIGN(struct_size(iova, iova_ranges, n), 8);
	avail_off = iova_sz;
	*size = avail_off + ALIGN(sizeof(*avail), 8);
	buf = kzalloc(*size, GFP_KERNEL);
	if (!buf) {
		kfree(ranges);
		return ERR_PTR(-ENOMEM);
	}

	iova = buf;
	iova->header.id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE;
	iova->header.version = 1;
	iova->header.next = sizeof(struct vfio_iommu_type1_info) + avail_off;
	iova->nr_iovas = n;
	for (i = 0; i < n; i++) {
		iova->iova_ranges[i].start = ranges[i].start;
		iova->iova_ranges[i].end = ranges[i].last;
	}
	kfree(ranges);

	avail = buf + avail_off;
	avail->header.id = VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL;
	avail->header.version = 1;
	avail->avail = vfio_dma_avail(iommu);
	return buf;
}

static long vfio_container_get_info(struct vfio_iommu *iommu,
				    struct vfio_iommu_type1_info __user *arg)
{
	size_t minsz = offsetofend(struct vfio_iommu_type1_info,
				   iova_pgsizes);
	struct vfio_iommu_type1_info info;
	unsigned long pgsizes;
	size_t capsz;
	void *caps;
	long ret = 0;

	/*
	 * 6.1's structure ends in 4 bytes of padding that later headers
	 * name @pad: both are copied back, so both must be zero.
	 */
	memset(&info, 0, sizeof(info));
	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (vfio_check_argsz(info.argsz, minsz))
		return -EINVAL;
	/* Write back no more than the caller's structure holds. */
	minsz = min_t(size_t, info.argsz, sizeof(info));

	/* Never below a CPU page: nothing smaller can be pinned. */
	pgsizes = iommu->domain->pgsize_bitmap;
	if (pgsizes & ~PAGE_MASK)
		pgsizes = (pgsizes & PAGE_MASK) | PAGE_SIZE;
	info.flags = VFIO_IOMMU_INFO_PGSIZES | VFIO_IOMMU_INFO_CAPS;
	info.iova_pgsizes = pgsizes;
	info.cap_offset = 0;

	caps = vfio_container_caps(iommu, &capsz);
	if (IS_ERR(caps))
		return PTR_ERR(caps);
	if (info.argsz < sizeof(info) + capsz) {
		/* Tell the caller how much to allocate, as upstream does. */
		info.argsz = sizeof(info) + capsz;
	} else {
		if (copy_to_user((u8 __user *)arg + sizeof(info), caps, capsz))
			ret = -EFAULT;
		info.cap_offset = sizeof(info);
	}
	kfree(caps);
	if (!ret && copy_to_user(arg, &info, minsz))
		ret = -EFAULT;
	return ret;
}

static long vfio_container_map(struct vfio_iommu *iommu,
			       struct vfio_iommu_type1_dma_map __user *arg)
{
	size_t minsz = offsetofend(struct vfio_iommu_type1_dma_map, size);
	struct vfio_iommu_type1_dma_map map;
	int prot;

	if (copy_from_user(&map, arg, minsz))
		return -EFAULT;
	if (vfio_check_argsz(map.argsz, minsz))
		return -EINVAL;
	/* No VADDR updates: nothing here can wait for a vaddr to return. */
	prot = vfio_dma_map_prot(map.flags);
	if (prot < 0)
		return prot;

	/* -EEXIST on an overlap: DPDK tolerates exactly that errno. */
	return vfio_dma_map(iommu, map.vaddr, map.iova, map.size, prot);
}

/*
 * type1 (v1) may cut a mapping, as the seed ABI does; type1v2 refuses to
 * bisect one.  Either way the bytes unmapped are written back.
 */
static long vfio_container_unmap(struct vfio_iommu *iommu,
				 struct vfio_iommu_type1_dma_unmap __user *arg)
{
	size_t minsz = offsetofend(struct vfio_iommu_type1_dma_unmap, size);
	struct vfio_iommu_type1_dma_unmap unmap;
	u64 unmapped;
	int ret;

	if (copy_from_user(&unmap, arg, minsz))
		return -EFAULT;
	/* No dirty bitmaps (no dirty tracking) and no VADDR. */
	if (vfio_check_argsz(unmap.argsz, minsz) ||
	    unmap.flags & ~VFIO_DMA_UNMAP_FLAG_ALL)
		return -EINVAL;

	if (unmap.flags & VFIO_DMA_UNMAP_FLAG_ALL) {
		if (unmap.iova || unmap.size)
			return -EINVAL;
		unmapped = vfio_dma_unmap_all(iommu);
	} else {
		ret = vfio_dma_unmap(iommu, unmap.iova, unmap.size,
				     READ_ONCE(iommu->type) ==
					VFIO_TYPE1v2_IOMMU,
				     &unmapped);
		if (ret)
			return ret;
	}
	unmap.size = unmapped;
	return copy_to_user(arg, &unmap, minsz) ? -EFAULT : 0;
}

static long vfio_container_type1_ioctl(struct vfio_iommu *iommu,
				       unsigned int cmd, void __user *uarg)
{
	long ret;

	switch (cmd) {
	case VFIO_IOMMU_GET_INFO:
	case VFIO_IOMMU_MAP_DMA:
	case VFIO_IOMMU_UNMAP_DMA:
		break;
	default:
		/* Upstream: -EINVAL without an IOMMU, its own answer with. */
		mutex_lock(&vfio_lock);
		ret = iommu->type ? -ENOTTY : -EINVAL;
		vfio_unlock();
		return ret;
	}

	ret = vfio_container_use(iommu);
	if (ret)
		return ret;
	switch (cmd) {
	case VFIO_IOMMU_GET_INFO:
		ret = vfio_container_get_info(iommu, uarg);
		break;
	case VFIO_IOMMU_MAP_DMA:
		ret = vfio_container_map(iommu, uarg);
		break;
	default:
		ret = vfio_container_unmap(iommu, uarg);
		break;
	}
	vfio_container_unuse(iommu);
	return ret;
}

static long vfio_container_ioctl(struct file *filep, unsigned int cmd,
				 unsigned long arg)
{
	struct vfio_iommu *iommu = filep->private_data;

	switch (cmd) {
	case VFIO_GET_API_VERSION:
		return VFIO_API_VERSION;
	case VFIO_CHECK_EXTENSION:
		return vfio_container_check_extension(iommu, arg);
	case VFIO_SET_IOMMU:
		return vfio_container_set_iommu(iommu, arg);
	}
	return vfio_container_type1_ioctl(iommu, cmd, (void __user *)arg);
}

static int vfio_container_open(struct inode *inode, struct file *filep)
{
	struct vfio_iommu *iommu;

	iommu = vfio_iommu_alloc(GFP_KERNEL);
	if (!iommu)
		return -ENOMEM;
	iommu->container = true;
	filep->private_data = iommu;
	return 0;
}

/* Its groups keep the container, and their mappings, until they leave. */
static int vfio_container_release(struct inode *inode, struct file *filep)
{
	vfio_iommu_put(filep->private_data);
	return 0;
}

static const struct file_operations vfio_container_fops = {
	.owner		= THIS_MODULE,
	.open		= vfio_container_open,
	.release	= vfio_container_release,
	.unlocked_ioctl	= vfio_container_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice vfio_container_dev = {
	.minor		= VFIO_MINOR,
	.name		= "vfio",
	.fops		= &vfio_container_fops,
	.nodename	= "vfio/vfio",
	.mode		= 0666,
};

int vfio_container_init(void)
{
	return misc_register(&vfio_container_dev);
}

void vfio_container_exit(void)
{
	misc_deregister(&vfio_container_dev);
}

/* An open of /dev/vfio/vfio loads us, as it loads the in-tree VFIO. */
MODULE_ALIAS_MISCDEV(VFIO_MINOR);
MODULE_ALIAS("devname:vfio/vfio");
