// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: the group object.
 *
 * A group appears when the first of its devices is bound to a vfio bus
 * driver, with two nodes: /dev/vfio/<bus>:<id> for the seed ABI
 * (vfio_seed_group.c) and /dev/vfio/<id> for today's
 * (vfio_container_group.c); both find it by the same minor.  It is killed
 * when its last device is unregistered and freed when its last fd is
 * closed.  Which IOMMU object it belongs to is vfio_iommu.c's business.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cdev.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "compat.h"
#include "vfio_private.h"

static struct {
	struct class		*class;
	dev_t			devt;		/* /dev/vfio/<bus>:<id> */
	struct cdev		cdev;
	dev_t			node_devt;	/* /dev/vfio/<id> */
	struct cdev		node_cdev;
	struct idr		minors;		/* vfio_lock: minor -> group */
	struct list_head	group_list;	/* vfio_lock */
	/*
	 * The IOMMU groups of group_list by id, changed under vfio_lock and
	 * read without it: the bus notifier sees every device the host adds
	 * or deletes, and must not wait on VFIO's users for one that is in
	 * no group of ours (see vfio_group_known()).
	 */
	struct xarray		known;		/* id -> iommu_group */
} vfio;

/*
 * Whether @iommu_group is one we have a group for, without vfio_lock.  A
 * group made at the same time publishes itself here before it walks its
 * members (vfio_group_create()), and a new member joins the IOMMU group
 * before the bus notifier runs: either the walk sees the member or this
 * sees the group.
 */
static bool vfio_group_known(struct iommu_group *iommu_group)
{
	return xa_load(&vfio.known, iommu_group_id(iommu_group)) ==
	       iommu_group;
}

static struct vfio_group *vfio_group_find(struct iommu_group *iommu_group)
{
	struct vfio_group *group;

	list_for_each_entry(group, &vfio.group_list, group_next)
		if (group->iommu_group == iommu_group)
			return group;
	return NULL;
}

static struct vfio_device *vfio_group_find_device(struct vfio_group *group,
						  struct device *dev)
{
	struct vfio_device *device;

	list_for_each_entry(device, &group->device_list, group_next)
		if (device->dev == dev)
			return device;
	return NULL;
}

static int vfio_group_link_dev(struct device *dev, void *data)
{
	struct vfio_group *group = data;

	/* Hot-add may race with the links made when the group appeared. */
	if (sysfs_create_link_nowarn(group->devices_kobj, &dev->kobj,
				     dev_name(dev)) == -ENOMEM)
		return -ENOMEM;
	return 0;
}

/*
 * A member of the group may be used by the host only when it cannot DMA
 * on its own behalf: bound to us, bound to nothing, or a bridge.
 */
static int vfio_dev_viable(struct device *dev, void *data)
{
	struct vfio_group *group = data;

	if (!READ_ONCE(dev->driver))
		return 0;
	if (vfio_group_find_device(group, dev))
		return 0;
	if (dev_is_pci(dev) && pci_is_bridge(to_pci_dev(dev)))
		return 0;
	return -EBUSY;
}

bool vfio_group_viable(struct vfio_group *group)
{
	lockdep_assert_held(&vfio_lock);
	return !iommu_group_for_each_dev(group->iommu_group, group,
					 vfio_dev_viable);
}

static struct vfio_group *vfio_group_create(struct iommu_group *iommu_group,
					    struct device *dev)
{
	struct vfio_group *group;
	struct vfio_iommu *iommu;
	int ret;

	group = kzalloc(sizeof(*group), GFP_KERNEL);
	iommu = vfio_iommu_alloc(GFP_KERNEL);
	if (!group || !iommu) {
		ret = -ENOMEM;
		goto err_free;
	}
	INIT_LIST_HEAD(&group->device_list);
	group->iommu_group = iommu_group;
	group->id = iommu_group_id(iommu_group);

	/*
	 * Opening a node looks the group up by its minor alone, and a user
	 * may keep the inode of an old node (an O_PATH fd, a bind mount):
	 * a minor handed out again would open another group through it.
	 * Cycle through all 2^20 before any comes back.
	 */
	group->minor = idr_alloc_cyclic(&vfio.minors, group, 0,
					MINORMASK + 1, GFP_KERNEL);
	if (group->minor < 0) {
		ret = group->minor;
		goto err_free;
	}

	group->dev = device_create(vfio.class, NULL,
				   MKDEV(MAJOR(vfio.devt), group->minor),
				   group, "%s:%d", dev->bus->name, group->id);
	if (IS_ERR(group->dev)) {
		ret = PTR_ERR(group->dev);
		goto err_idr;
	}

	/* The container ABI's node: the same group under the upstream name. */
	group->node_dev = device_create(vfio.class, NULL,
					MKDEV(MAJOR(vfio.node_devt),
					      group->minor),
					group, "%d", group->id);
	if (IS_ERR(group->node_dev)) {
		ret = PTR_ERR(group->node_dev);
		goto err_dev;
	}

	group->devices_kobj = kobject_create_and_add("devices",
						     &group->dev->kobj);
	if (!group->devices_kobj) {
		ret = -ENOMEM;
		goto err_node;
	}
	/* Published before the walk: see vfio_group_known(). */
	ret = xa_err(xa_store(&vfio.known, group->id, iommu_group,
			      GFP_KERNEL));
	if (ret)
		goto err_kobj;
	ret = iommu_group_for_each_dev(iommu_group, group,
				       vfio_group_link_dev);
	if (ret)
		goto err_known;

	vfio_group_set_iommu(group, iommu);
	list_add_tail(&group->group_next, &vfio.group_list);
	return group;

err_known:
	xa_erase(&vfio.known, group->id);
err_kobj:
	kobject_put(group->devices_kobj);
err_node:
	device_destroy(vfio.class, MKDEV(MAJOR(vfio.node_devt), group->minor));
err_dev:
	device_destroy(vfio.class, MKDEV(MAJOR(vfio.devt), group->minor));
err_idr:
	idr_remove(&vfio.minors, group->minor);
err_free:
	kfree(iommu);
	kfree(group);
	return ERR_PTR(ret);
}

/*
 * Put @device in the group of @iommu_group, making the group if it is
 * the first.  The group keeps the caller's reference on @iommu_group;
 * on failure (-errno) it stays the caller's.
 */
int vfio_group_add_device(struct vfio_device *device,
			  struct iommu_group *iommu_group)
{
	struct vfio_group *group;

	mutex_lock(&vfio_lock);
	group = vfio_group_find(iommu_group);
	if (group) {
		iommu_group_put(iommu_group);	/* the group holds one */
	} else {
		group = vfio_group_create(iommu_group, device->dev);
		if (IS_ERR(group)) {
			vfio_unlock();
			return PTR_ERR(group);
		}
	}
	device->group = group;
	list_add_tail(&device->group_next, &group->device_list);
	vfio_unlock();
	return 0;
}

/*
 * The last device of @group has been unregistered: the group is gone for
 * good, also for a user who still holds its fd (that fd answers -ENODEV
 * from now on; a device bound later makes a new group).  Its IOMMU group
 * gets its DMA ownership back and returns to its default domain now, not
 * at the last close: when a hot-removed device was the last member, the
 * IOMMU core (6.12) requires both by the time the device leaves the IOMMU
 * group, and an IOMMU group without members must never be attached again.
 */
static void vfio_group_kill(struct vfio_group *group)
{
	lockdep_assert_held(&vfio_lock);
	if (group->dead)
		return;
	vfio_iommu_detach_group(group->iommu, group);
	/* Off the set: it keeps its reference on group->iommu until freed. */
	list_del_init(&group->iommu_next);
	list_del(&group->group_next);
	xa_erase(&vfio.known, group->id);
	kobject_put(group->devices_kobj);
	device_destroy(vfio.class, MKDEV(MAJOR(vfio.node_devt), group->minor));
	device_destroy(vfio.class, MKDEV(MAJOR(vfio.devt), group->minor));
	idr_remove(&vfio.minors, group->minor);
	group->dead = true;
	/* A container keeps its IOMMU only while it has groups. */
	if (group->iommu->container)
		vfio_container_group_gone(group->iommu);
}

/* Kill @group once no device is in it, and free it once no fd is open. */
void vfio_group_maybe_free(struct vfio_group *group)
{
	lockdep_assert_held(&vfio_lock);
	if (!list_empty(&group->device_list))
		return;
	vfio_group_kill(group);
	if (group->opened || group->node_open)
		return;
	vfio_iommu_put(group->iommu);
	iommu_group_put(group->iommu_group);
	kfree(group);
}

/* Find the registered vfio_device of @dev, with vfio_lock held. */
struct vfio_device *vfio_device_find(struct device *dev)
{
	struct vfio_group *group;
	struct vfio_device *device;

	list_for_each_entry(group, &vfio.group_list, group_next) {
		device = vfio_group_find_device(group, dev);
		if (device)
			return device;
	}
	return NULL;
}

/*
 * Remove the mappings of @device's BARs from every open IOMMU object
 * (see the top of vfio_private.h).  Each is reached through a group of
 * it: an object with no live group has none attached, so no device can
 * reach its domain.  An object with several groups is swept once for
 * each, which finds nothing the second time.
 */
void vfio_group_drop_dma(struct vfio_device *device)
{
	struct vfio_group *group;

	mutex_lock(&vfio_lock);
	list_for_each_entry(group, &vfio.group_list, group_next)
		if (group->iommu->users && group->iommu->domain)
			vfio_dma_drop_device(group->iommu, device);
	vfio_unlock();
}

bool vfio_group_add_dev(struct device *dev)
{
	struct iommu_group *iommu_group;
	struct vfio_group *group;
	bool in_use = false;

	iommu_group = iommu_group_get(dev);
	if (!iommu_group)
		return false;
	if (!vfio_group_known(iommu_group)) {
		iommu_group_put(iommu_group);
		return false;
	}

	mutex_lock(&vfio_lock);
	group = vfio_group_find(iommu_group);
	if (group) {
		vfio_group_link_dev(dev, group);
		in_use = group->iommu->users > 0;
		if (in_use)
			dev_warn(dev, "added to group %d, which is in use: claimed for vfio\n",
				 group->id);
	}
	vfio_unlock();
	iommu_group_put(iommu_group);
	return in_use;
}
EXPORT_SYMBOL_GPL(vfio_group_add_dev);

void vfio_group_del_dev(struct device *dev, bool hold)
{
	struct iommu_group *iommu_group;
	struct vfio_group *group;

	iommu_group = iommu_group_get(dev);
	if (iommu_group && vfio_group_known(iommu_group)) {
		mutex_lock(&vfio_lock);
		group = vfio_group_find(iommu_group);
		if (group)
			sysfs_remove_link(group->devices_kobj, dev_name(dev));
		vfio_unlock();
	}
	if (iommu_group)
		iommu_group_put(iommu_group);
	/*
	 * Held for any device, ours or not: a group we never saw may become
	 * ours while the deletion runs.  This takes a spinlock, not
	 * vfio_lock.
	 */
	if (hold)
		vfio_iommu_removal_begin(dev);
}
EXPORT_SYMBOL_GPL(vfio_group_del_dev);

void vfio_group_removed_dev(struct device *dev)
{
	vfio_iommu_removal_end(dev);
}
EXPORT_SYMBOL_GPL(vfio_group_removed_dev);

/*
 * Open the group of @inode, a node of either ABI, for @filep: @claim, with
 * vfio_lock held, counts the open of its node or refuses it (-EBUSY).  The
 * minor finds nothing once the group is gone.
 */
int vfio_group_open(struct inode *inode, struct file *filep,
		    int (*claim)(struct vfio_group *group))
{
	struct vfio_group *group;
	int ret;

	mutex_lock(&vfio_lock);
	group = idr_find(&vfio.minors, iminor(inode));
	ret = group ? claim(group) : -ENODEV;
	if (!ret)
		filep->private_data = group;
	vfio_unlock();
	return ret;
}

/*
 * The device of @group named @name, with vfio_lock held; NULL if none,
 * ERR_PTR() when the bus driver refuses the name of one (vfio.h: @match).
 */
struct vfio_device *vfio_group_match_device(struct vfio_group *group,
					    const char *name)
{
	struct vfio_device *device;
	int ret;

	lockdep_assert_held(&vfio_lock);
	list_for_each_entry(device, &group->device_list, group_next) {
		if (device->leaving)
			continue;
		ret = device->ops->match(device->dev, name);
		if (ret < 0)
			return ERR_PTR(ret);
		if (ret)
			return device;
	}
	return NULL;
}

/* Whether a device of @group is open, with vfio_lock held. */
bool vfio_group_devices_open(struct vfio_group *group)
{
	struct vfio_device *device;

	lockdep_assert_held(&vfio_lock);
	list_for_each_entry(device, &group->device_list, group_next)
		if (device->open_count)
			return true;
	return false;
}

/*
 * VFIO_GROUP_GET_DEVICE_FD of either ABI: a new fd of the device whose
 * name @uarg points to.  @find, with vfio_lock held, finds it as @group's
 * ABI does or says why not (ERR_PTR); @group_file, the container ABI's
 * /dev/vfio/<id> file or NULL, is passed on to vfio_device_new_fd().
 */
int vfio_group_get_device_fd(struct vfio_group *group, void __user *uarg,
			     struct vfio_device *(*find)(struct vfio_group *group,
							 const char *name),
			     struct file *group_file)
{
	struct vfio_device *device;
	char *name;
	int ret;

	name = strndup_user(uarg, PAGE_SIZE);
	if (IS_ERR(name))
		return PTR_ERR(name);

	mutex_lock(&vfio_lock);
	device = find(group, name);
	if (IS_ERR(device))
		ret = PTR_ERR(device);
	else
		ret = vfio_device_new_fd(device, group->iommu, group_file);
	vfio_unlock();
	kfree(name);
	return ret;
}

static char *vfio_devnode(vfio_devnode_dev *dev, umode_t *mode)
{
	return kasprintf(GFP_KERNEL, "vfio/%s", dev_name(dev));
}

/*
 * The minors of one ABI's nodes, opened with @fops.  An open of a node
 * holds the cdev before the fops: without an owner, that window has no
 * module reference and the module (the cdev is in it) could go.
 */
static int vfio_group_add_cdev(struct cdev *cdev, dev_t *devt,
			       const char *name,
			       const struct file_operations *fops)
{
	int ret;

	ret = alloc_chrdev_region(devt, 0, MINORMASK + 1, name);
	if (ret)
		return ret;
	cdev_init(cdev, fops);
	cdev->owner = THIS_MODULE;
	ret = cdev_add(cdev, *devt, MINORMASK + 1);
	if (ret)
		unregister_chrdev_region(*devt, MINORMASK + 1);
	return ret;
}

static void vfio_group_del_cdev(struct cdev *cdev, dev_t devt)
{
	cdev_del(cdev);
	unregister_chrdev_region(devt, MINORMASK + 1);
}

int vfio_group_init(void)
{
	int ret;

	idr_init(&vfio.minors);
	INIT_LIST_HEAD(&vfio.group_list);
	xa_init(&vfio.known);

	vfio.class = vfio_class_create("vfio");
	if (IS_ERR(vfio.class))
		return PTR_ERR(vfio.class);
	vfio.class->devnode = vfio_devnode;

	ret = vfio_group_add_cdev(&vfio.cdev, &vfio.devt, "vfio",
				  &vfio_seed_group_fops);
	if (ret)
		goto err_class;
	ret = vfio_group_add_cdev(&vfio.node_cdev, &vfio.node_devt,
				  "vfio-group", &vfio_container_group_fops);
	if (ret)
		goto err_cdev;
	return 0;

err_cdev:
	vfio_group_del_cdev(&vfio.cdev, vfio.devt);
err_class:
	class_destroy(vfio.class);
	return ret;
}

void vfio_group_exit(void)
{
	/* Bus drivers depend on us and open fds pin the module. */
	WARN_ON(!list_empty(&vfio.group_list));
	vfio_group_del_cdev(&vfio.node_cdev, vfio.node_devt);
	vfio_group_del_cdev(&vfio.cdev, vfio.devt);
	class_destroy(vfio.class);
	idr_destroy(&vfio.minors);
	xa_destroy(&vfio.known);
}

