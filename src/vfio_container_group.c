// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: /dev/vfio/<id>, a group as today's VFIO ABI sees it.
 *
 * The node opens the same struct vfio_group as /dev/vfio/<bus>:<id>, but
 * never while the seed ABI holds the group (and the seed node not while
 * this one is open): the two ABIs give one ioctl number different
 * meanings, and neither's state means anything to the other.  Instead of
 * merging, a group joins a container (vfio_container.c), whose IOMMU
 * object it then shares, and leaves it again when this node is closed,
 * which happens only once its device fds are closed too: they hold the
 * node's file, as upstream's do.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <uapi/linux/vfio.h>

#include "compat.h"
#include "vfio_private.h"

static bool vfio_group_in_container(struct vfio_group *group)
{
	return group->iommu->container;
}

/*
 * Take @group out of its container into @fresh, a set of its own.  A
 * dead group has left the set already and keeps its reference on it.
 */
static void vfio_group_leave_container(struct vfio_group *group,
				       struct vfio_iommu *fresh)
{
	struct vfio_iommu *container = group->iommu;

	lockdep_assert_held(&vfio_lock);
	if (group->dead) {
		vfio_iommu_put(fresh);
		return;
	}
	vfio_iommu_detach_group(container, group);
	kref_get(&container->kref);
	vfio_group_set_iommu(group, fresh);
	vfio_container_group_gone(container);
	vfio_iommu_put(container);
}

static int vfio_group_set_container(struct vfio_group *group, int fd)
{
	struct vfio_iommu *container;
	struct file *file;
	int ret;

	/* A negative fd is no file: EBADF, as today's upstream says. */
	file = fget(fd);
	if (!file)
		return -EBADF;

	mutex_lock(&vfio_lock);
	if (group->dead) {
		ret = -ENODEV;
		goto out;
	}
	if (vfio_group_in_container(group)) {
		ret = -EINVAL;
		goto out;
	}
	/* Upstream built without iommufd answers an iommufd so, too. */
	if (!vfio_file_is_container(file)) {
		ret = -EBADFD;
		goto out;
	}
	container = file->private_data;
	/* Upstream claims DMA ownership here, which a host driver blocks. */
	if (!vfio_group_viable(group)) {
		ret = -EBUSY;
		goto out;
	}
	if (container->users) {
		/* Its reserved IOVAs count before its devices can DMA. */
		ret = vfio_iommu_resv_update(container, group);
		if (ret)
			goto out;
		ret = vfio_iommu_attach_group(container, group);
		if (ret)
			goto out;
	}
	/* Its own set is idle and alone (see the open): it goes. */
	kref_get(&container->kref);
	vfio_group_set_iommu(group, container);
	ret = 0;
out:
	vfio_unlock();
	fput(file);
	return ret;
}

static int vfio_group_unset_container(struct vfio_group *group)
{
	struct vfio_iommu *fresh;
	int ret = 0;

	fresh = vfio_iommu_alloc(GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;

	mutex_lock(&vfio_lock);
	if (group->dead) {
		ret = -ENODEV;
		goto out;
	}
	if (!vfio_group_in_container(group)) {
		ret = -EINVAL;
		goto out;
	}
	if (vfio_group_devices_open(group)) {
		ret = -EBUSY;
		goto out;
	}
	vfio_group_leave_container(group, fresh);
	fresh = NULL;
out:
	vfio_unlock();
	if (fresh)
		vfio_iommu_put(fresh);
	return ret;
}

static int vfio_group_get_status(struct vfio_group *group,
				 struct vfio_group_status __user *arg)
{
	size_t minsz = offsetofend(struct vfio_group_status, flags);
	struct vfio_group_status status;

	if (copy_from_user(&status, arg, minsz))
		return -EFAULT;
	if (vfio_check_argsz(status.argsz, minsz))
		return -EINVAL;

	status.flags = 0;
	mutex_lock(&vfio_lock);
	if (group->dead) {
		vfio_unlock();
		return -ENODEV;
	}
	if (vfio_group_in_container(group))
		status.flags = VFIO_GROUP_FLAGS_VIABLE |
			       VFIO_GROUP_FLAGS_CONTAINER_SET;
	else if (vfio_group_viable(group))
		status.flags = VFIO_GROUP_FLAGS_VIABLE;
	vfio_unlock();

	return copy_to_user(arg, &status, minsz) ? -EFAULT : 0;
}

/* A device of this group only: a container's others are theirs. */
static struct vfio_device *vfio_container_find_device(struct vfio_group *group,
						      const char *name)
{
	struct vfio_device *device;

	if (group->dead)
		return ERR_PTR(-ENODEV);
	device = vfio_group_match_device(group, name);
	if (IS_ERR(device))
		return device;
	if (!device)
		return ERR_PTR(-ENODEV);
	if (!vfio_group_in_container(group) || !group->iommu->type)
		return ERR_PTR(-EINVAL);
	return device;
}

static long vfio_container_group_ioctl(struct file *filep, unsigned int cmd,
				    unsigned long arg)
{
	struct vfio_group *group = filep->private_data;
	void __user *uarg = (void __user *)arg;
	int fd;

	switch (cmd) {
	case VFIO_GROUP_GET_STATUS:
		return vfio_group_get_status(group, uarg);
	case VFIO_GROUP_SET_CONTAINER:
		if (get_user(fd, (int __user *)uarg))
			return -EFAULT;
		return vfio_group_set_container(group, fd);
	case VFIO_GROUP_UNSET_CONTAINER:
		return vfio_group_unset_container(group);
	case VFIO_GROUP_GET_DEVICE_FD:
		return vfio_group_get_device_fd(group, uarg,
						vfio_container_find_device,
						filep);
	}
	return -ENOTTY;
}

/* Open once, as upstream; and not while the seed ABI uses it. */
static int vfio_container_group_claim(struct vfio_group *group)
{
	if (group->node_open || group->opened || group->iommu->users ||
	    !list_is_singular(&group->iommu->group_list))
		return -EBUSY;
	group->node_open = true;
	return 0;
}

static int vfio_container_group_open(struct inode *inode, struct file *filep)
{
	return vfio_group_open(inode, filep, vfio_container_group_claim);
}

/* Only once its device fds are closed: they hold this file. */
static int vfio_container_group_release(struct inode *inode, struct file *filep)
{
	struct vfio_group *group = filep->private_data;
	struct vfio_iommu *fresh;

	/* A set of its own to return to; small, and a close cannot fail. */
	fresh = vfio_iommu_alloc(GFP_KERNEL | __GFP_NOFAIL);

	mutex_lock(&vfio_lock);
	if (vfio_group_in_container(group))
		vfio_group_leave_container(group, fresh);
	else
		vfio_iommu_put(fresh);
	group->node_open = false;
	vfio_group_maybe_free(group);
	vfio_unlock();
	return 0;
}

const struct file_operations vfio_container_group_fops = {
	.owner		= THIS_MODULE,
	.open		= vfio_container_group_open,
	.release	= vfio_container_group_release,
	.unlocked_ioctl	= vfio_container_group_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};
