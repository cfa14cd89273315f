// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: /dev/vfio/<bus>:<id>, a group as the seed ABI sees it.
 *
 * Groups merge into sets that share one IOMMU object; the first IOMMU fd
 * or device fd opens the set and makes the calling process its owner:
 * other processes get -EPERM until the last of those fds is closed.  The
 * node cannot be opened while the group's /dev/vfio/<id> is.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "include/uapi/vfio.h"
#include "vfio_private.h"

/* Group ioctls other than GET_INFO belong to the owner of the set. */
static int vfio_check_owner(struct vfio_iommu *iommu)
{
	if (iommu->mm && iommu->mm != current->mm)
		return -EPERM;
	return 0;
}

/* ... and a dead group (its last device gone) has nothing left to give. */
static int vfio_group_check(struct vfio_group *group)
{
	lockdep_assert_held(&vfio_lock);
	if (group->dead)
		return -ENODEV;
	return vfio_check_owner(group->iommu);
}

static int vfio_group_get_iommu_fd(struct vfio_group *group)
{
	struct vfio_iommu *iommu;
	int ret;

	mutex_lock(&vfio_lock);
	iommu = group->iommu;
	ret = vfio_group_check(group);
	if (ret)
		goto out;
	ret = vfio_iommu_user_get(iommu);
	if (ret)
		goto out;

	kref_get(&iommu->kref);
	ret = anon_inode_getfd("[vfio-iommu]", &vfio_iommu_fops, iommu,
			       O_RDWR | O_CLOEXEC);
	if (ret < 0) {
		vfio_iommu_user_put(iommu);
		vfio_iommu_put(iommu);
	}
out:
	vfio_unlock();
	return ret;
}

/* Any device of @group's set: merged groups share their devices. */
static struct vfio_device *vfio_seed_find_device(struct vfio_group *group,
						 const char *name)
{
	struct vfio_group *member;
	struct vfio_device *device;
	int ret;

	ret = vfio_group_check(group);
	if (ret)
		return ERR_PTR(ret);
	list_for_each_entry(member, &group->iommu->group_list, iommu_next) {
		device = vfio_group_match_device(member, name);
		if (device)	/* or an error */
			return device;
	}
	return ERR_PTR(-ENODEV);
}

static int vfio_group_merge(struct vfio_group *group, int fd)
{
	struct vfio_group *new;
	struct vfio_iommu *iommu;
	struct file *file;
	int ret;

	file = fget(fd);
	if (!file)
		return -EBADF;
	if (file->f_op != &vfio_seed_group_fops) {
		ret = -EINVAL;
		goto out_fput;
	}
	new = file->private_data;

	mutex_lock(&vfio_lock);
	iommu = group->iommu;
	ret = vfio_group_check(group);
	if (!ret)
		ret = vfio_group_check(new);
	if (ret)
		goto out;
	if (new == group || new->iommu == iommu) {
		ret = -EINVAL;
		goto out;
	}
	/* Mappings cannot move between sets: the mergee must be idle. */
	if (new->iommu->users) {
		ret = -EBUSY;
		goto out;
	}
	if (iommu->users) {
		if (!vfio_group_viable(new)) {
			ret = -EBUSY;
			goto out;
		}
		/* Its reserved IOVAs count before its devices can DMA. */
		ret = vfio_iommu_resv_update(iommu, new);
		if (ret)
			goto out;
		ret = vfio_iommu_attach_group(iommu, new);
		if (ret)
			goto out;
	}
	kref_get(&iommu->kref);
	vfio_group_set_iommu(new, iommu);
out:
	vfio_unlock();
out_fput:
	fput(file);
	return ret;
}

static int vfio_group_unmerge(struct vfio_group *group)
{
	struct vfio_iommu *iommu, *fresh;
	int ret = 0;

	fresh = vfio_iommu_alloc(GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;

	mutex_lock(&vfio_lock);
	iommu = group->iommu;
	ret = vfio_group_check(group);
	if (ret)
		goto out;
	if (list_is_singular(&iommu->group_list)) {
		ret = -EINVAL;
		goto out;
	}
	if (vfio_group_devices_open(group)) {
		ret = -EBUSY;
		goto out;
	}
	vfio_iommu_detach_group(iommu, group);
	vfio_group_set_iommu(group, fresh);
	fresh = NULL;
out:
	vfio_unlock();
	kfree(fresh);
	return ret;
}

static int vfio_group_get_info(struct vfio_group *group,
			       struct vfio_group_info __user *arg)
{
	size_t minsz = offsetofend(struct vfio_group_info, flags);
	struct vfio_group_info info;

	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (vfio_check_argsz(info.argsz, minsz))
		return -EINVAL;

	/* Every bit is ours to say: the seed kept stale user bits. */
	info.flags = 0;
	mutex_lock(&vfio_lock);
	if (group->dead) {
		vfio_unlock();
		return -ENODEV;
	}
	if (vfio_set_viable(group->iommu))
		info.flags |= VFIO_GROUP_FLAGS_VIABLE;
	if (group->iommu->mm)
		info.flags |= VFIO_GROUP_FLAGS_MM_LOCKED;
	vfio_unlock();

	/* The seed returned copy_to_user()'s byte count as the result. */
	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static long vfio_group_fops_ioctl(struct file *filep, unsigned int cmd,
				  unsigned long arg)
{
	struct vfio_group *group = filep->private_data;
	void __user *uarg = (void __user *)arg;
	int fd;

	switch (cmd) {
	case VFIO_GROUP_GET_INFO:
		return vfio_group_get_info(group, uarg);
	case VFIO_GROUP_MERGE:
		if (get_user(fd, (int __user *)uarg))
			return -EFAULT;
		if (fd < 0)
			return -EBADF;
		return vfio_group_merge(group, fd);
	case VFIO_GROUP_UNMERGE:
		return vfio_group_unmerge(group);
	case VFIO_GROUP_GET_IOMMU_FD:
		return vfio_group_get_iommu_fd(group);
	case VFIO_GROUP_GET_DEVICE_FD:
		return vfio_group_get_device_fd(group, uarg,
						vfio_seed_find_device, NULL);
	}
	return -ENOTTY;
}

/* Counted in @opened; not while in use through /dev/vfio/<id>. */
static int vfio_seed_group_claim(struct vfio_group *group)
{
	if (group->node_open)
		return -EBUSY;
	group->opened++;
	return 0;
}

static int vfio_group_fops_open(struct inode *inode, struct file *filep)
{
	return vfio_group_open(inode, filep, vfio_seed_group_claim);
}

static int vfio_group_fops_release(struct inode *inode, struct file *filep)
{
	struct vfio_group *group = filep->private_data;

	mutex_lock(&vfio_lock);
	group->opened--;
	vfio_iommu_dissolve(group->iommu);
	vfio_group_maybe_free(group);
	vfio_unlock();
	return 0;
}

const struct file_operations vfio_seed_group_fops = {
	.owner		= THIS_MODULE,
	.open		= vfio_group_fops_open,
	.release	= vfio_group_fops_release,
	.unlocked_ioctl	= vfio_group_fops_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};
