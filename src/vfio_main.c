// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: IOMMU groups as char devices, the devices bus drivers
 * register, device fds, and revoking a device from a user who holds it.
 *
 * A group appears as /dev/vfio/<bus>:<id> when the first of its devices
 * is bound to a vfio bus driver.  Its IOMMU object (vfio_iommu.c) is
 * shared by every group merged with it.  Opening the IOMMU object, by an
 * IOMMU fd or a device fd, makes the calling process its owner: other
 * processes get -EPERM until the last of those fds is closed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/cdev.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pci.h>
#include <linux/pseudo_fs.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "include/uapi/vfio.h"
#include "vfio_private.h"
#include "vfio_range.h"

#define VFIO_FS_MAGIC	0x7666646b	/* "vfdk" */

static unsigned int release_timeout_ms = 5000;
module_param(release_timeout_ms, uint, 0644);
MODULE_PARM_DESC(release_timeout_ms,
		 "How long unbinding a device waits for its user before revoking it (default: 5000)");

/* The topology lock: see vfio_private.h. */
DEFINE_MUTEX(vfio_lock);

static struct {
	struct class		*class;
	dev_t			devt;		/* /dev/vfio/<bus>:<id> */
	struct cdev		cdev;
	dev_t			node_devt;	/* /dev/vfio/<id> */
	struct cdev		node_cdev;
	struct idr		minors;		/* vfio_lock: minor -> group */
	struct list_head	group_list;	/* vfio_lock */
	struct vfsmount		*mnt;		/* device inodes */
	int			mnt_count;	/* simple_pin_fs() users */
} vfio;

static const struct file_operations vfio_device_fops;
static const struct file_operations vfio_device_modern_fops;
static const struct file_operations vfio_group_fops;
static struct file_system_type vfio_fs_type;

/* ---------------- groups ---------------- */

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

bool vfio_set_viable(struct vfio_iommu *iommu)
{
	struct vfio_group *group;

	list_for_each_entry(group, &iommu->group_list, iommu_next)
		if (!vfio_group_viable(group))
			return false;
	return true;
}

void vfio_group_set_iommu(struct vfio_group *group, struct vfio_iommu *iommu)
{
	if (group->iommu) {
		list_del(&group->iommu_next);
		vfio_iommu_put(group->iommu);
	}
	group->iommu = iommu;
	list_add_tail(&group->iommu_next, &iommu->group_list);
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

	/* The modern ABI's node: the same group under the upstream name. */
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
	ret = iommu_group_for_each_dev(iommu_group, group,
				       vfio_group_link_dev);
	if (ret)
		goto err_kobj;

	vfio_group_set_iommu(group, iommu);
	list_add_tail(&group->group_next, &vfio.group_list);
	return group;

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

/*
 * Once nothing of a merged set is open, split it again: a later user of
 * one of its groups must not inherit the others.
 */
void vfio_iommu_dissolve(struct vfio_iommu *iommu)
{
	struct vfio_group *group, *next;
	bool first = true;

	lockdep_assert_held(&vfio_lock);
	/* A container's groups leave it by UNSET_CONTAINER only. */
	if (iommu->users || iommu->container)
		return;
	list_for_each_entry(group, &iommu->group_list, iommu_next)
		if (group->opened)
			return;

	list_for_each_entry_safe(group, next, &iommu->group_list,
				 iommu_next) {
		struct vfio_iommu *fresh;

		if (first) {
			first = false;
			continue;
		}
		fresh = vfio_iommu_alloc(GFP_KERNEL);
		if (!fresh)
			return;		/* stays merged; harmless */
		vfio_group_set_iommu(group, fresh);
	}
}

/* ---------------- devices ---------------- */

static void vfio_device_release(struct kref *kref)
{
	struct vfio_device *device = container_of(kref, struct vfio_device,
						  kref);

	cleanup_srcu_struct(&device->srcu);
	mutex_destroy(&device->open_lock);
	iput(device->inode);
	simple_release_fs(&vfio.mnt, &vfio.mnt_count);
	put_device(device->dev);
	kfree(device);
}

static void vfio_device_put(struct vfio_device *device)
{
	kref_put(&device->kref, vfio_device_release);
}

/* Find the registered vfio_device of @dev, with vfio_lock held. */
static struct vfio_device *vfio_device_find(struct device *dev)
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

static struct inode *vfio_device_inode(void)
{
	struct inode *inode;
	int ret;

	ret = simple_pin_fs(&vfio_fs_type, &vfio.mnt, &vfio.mnt_count);
	if (ret)
		return ERR_PTR(ret);
	inode = alloc_anon_inode(vfio.mnt->mnt_sb);
	if (IS_ERR(inode))
		simple_release_fs(&vfio.mnt, &vfio.mnt_count);
	return inode;
}

int vfio_register_device(struct device *dev, const struct vfio_device_ops *ops,
			 void *device_data, struct vfio_device **handle)
{
	struct iommu_group *iommu_group;
	struct vfio_device *device;
	struct vfio_group *group;
	int ret;

	if (WARN_ON(!ops || !ops->match || !ops->open || !ops->release))
		return -EINVAL;

	iommu_group = iommu_group_get(dev);
	if (!iommu_group)
		return -ENODEV;

	device = kzalloc(sizeof(*device), GFP_KERNEL);
	if (!device) {
		ret = -ENOMEM;
		goto err_group;
	}
	device->inode = vfio_device_inode();
	if (IS_ERR(device->inode)) {
		ret = PTR_ERR(device->inode);
		kfree(device);
		goto err_group;
	}
	ret = init_srcu_struct(&device->srcu);
	if (ret) {
		iput(device->inode);
		simple_release_fs(&vfio.mnt, &vfio.mnt_count);
		kfree(device);
		goto err_group;
	}
	kref_init(&device->kref);
	mutex_init(&device->open_lock);
	init_waitqueue_head(&device->release_wq);
	device->dev = get_device(dev);
	device->ops = ops;
	device->device_data = device_data;
	/* Before the device is listed: from then on an op may use it. */
	*handle = device;

	mutex_lock(&vfio_lock);
	group = vfio_group_find(iommu_group);
	if (group) {
		iommu_group_put(iommu_group);	/* the group holds one */
	} else {
		group = vfio_group_create(iommu_group, dev);
		if (IS_ERR(group)) {
			mutex_unlock(&vfio_lock);
			vfio_device_put(device);
			ret = PTR_ERR(group);
			goto err_group;
		}
	}
	device->group = group;
	list_add_tail(&device->group_next, &group->device_list);
	mutex_unlock(&vfio_lock);
	return 0;

err_group:
	iommu_group_put(iommu_group);
	return ret;
}
EXPORT_SYMBOL_GPL(vfio_register_device);

void vfio_device_zap_mmaps(struct vfio_device *device)
{
	unmap_mapping_range(device->inode->i_mapping, 0, 0, true);
}
EXPORT_SYMBOL_GPL(vfio_device_zap_mmaps);

/* Call the bus driver's release once for each successful open. */
static void vfio_device_quiesce(struct vfio_device *device)
{
	mutex_lock(&device->open_lock);
	if (device->ops_open) {
		device->ops->release(device->device_data);
		device->ops_open = false;
	}
	mutex_unlock(&device->open_lock);
}

/*
 * Stop every operation on @device for good; its fds stay until closed.
 * Once the read sections have drained nobody can map a page any more,
 * so the zap is final.
 */
static void vfio_device_revoke(struct vfio_device *device)
{
	WRITE_ONCE(device->revoked, true);
	synchronize_srcu(&device->srcu);
	vfio_device_zap_mmaps(device);
	vfio_device_quiesce(device);
}

void vfio_unregister_device(struct device *dev)
{
	struct vfio_device *device;
	struct vfio_group *group;
	long left;

	mutex_lock(&vfio_lock);
	device = vfio_device_find(dev);
	if (WARN_ON(!device)) {
		mutex_unlock(&vfio_lock);
		return;
	}
	/* From here on GET_DEVICE_FD cannot find it. */
	group = device->group;
	list_del_init(&device->group_next);
	device->group = NULL;
	mutex_unlock(&vfio_lock);

	if (READ_ONCE(device->open_count)) {
		mutex_lock(&device->open_lock);
		if (device->ops_open && device->ops->request)
			device->ops->request(device->device_data, 1);
		mutex_unlock(&device->open_lock);

		dev_info(dev, "waiting up to %u ms for its user to release it\n",
			 release_timeout_ms);
		left = wait_event_timeout(device->release_wq,
					  !READ_ONCE(device->open_count),
					  msecs_to_jiffies(release_timeout_ms));
		if (!left)
			dev_warn(dev, "user did not release it: revoking access\n");
	}
	vfio_device_revoke(device);

	mutex_lock(&vfio_lock);
	vfio_group_maybe_free(group);
	mutex_unlock(&vfio_lock);
	vfio_device_put(device);
}
EXPORT_SYMBOL_GPL(vfio_unregister_device);

bool vfio_group_add_dev(struct device *dev)
{
	struct iommu_group *iommu_group;
	struct vfio_group *group;
	bool in_use = false;

	iommu_group = iommu_group_get(dev);
	if (!iommu_group)
		return false;

	mutex_lock(&vfio_lock);
	group = vfio_group_find(iommu_group);
	if (group) {
		vfio_group_link_dev(dev, group);
		in_use = group->iommu->users > 0;
		if (in_use)
			dev_warn(dev, "added to group %d, which is in use: claimed for vfio\n",
				 group->id);
	}
	mutex_unlock(&vfio_lock);
	iommu_group_put(iommu_group);
	return in_use;
}
EXPORT_SYMBOL_GPL(vfio_group_add_dev);

void vfio_group_del_dev(struct device *dev, bool hold)
{
	struct iommu_group *iommu_group;
	struct vfio_group *group;

	iommu_group = iommu_group_get(dev);
	if (iommu_group) {
		mutex_lock(&vfio_lock);
		group = vfio_group_find(iommu_group);
		if (group)
			sysfs_remove_link(group->devices_kobj, dev_name(dev));
		mutex_unlock(&vfio_lock);
		iommu_group_put(iommu_group);
	}
	if (hold)
		vfio_iommu_removal_begin(dev);
}
EXPORT_SYMBOL_GPL(vfio_group_del_dev);

void vfio_group_removed_dev(struct device *dev)
{
	vfio_iommu_removal_end(dev);
}
EXPORT_SYMBOL_GPL(vfio_group_removed_dev);

/* ---------------- device fds ---------------- */

/* Drop one device fd, with vfio_lock held. */
static void vfio_device_close(struct vfio_device *device)
{
	struct vfio_iommu *iommu = device->iommu;

	lockdep_assert_held(&vfio_lock);
	if (!--device->open_count) {
		vfio_device_quiesce(device);
		device->iommu = NULL;
		wake_up(&device->release_wq);
	}
	/* Quiesced first: only then may its DMA mappings go. */
	vfio_iommu_user_put(iommu);
	if (!device->iommu)
		vfio_iommu_put(iommu);
}

static int vfio_device_fops_release(struct inode *inode, struct file *filep)
{
	struct vfio_device *device = filep->private_data;
	struct file *group_file;

	mutex_lock(&vfio_lock);
	group_file = device->group_file;
	vfio_device_close(device);
	if (!device->open_count)
		device->group_file = NULL;
	mutex_unlock(&vfio_lock);
	vfio_device_put(device);
	/* Last: the group's release may detach it from its container. */
	if (group_file)
		fput(group_file);
	return 0;
}

/*
 * Every op on a device fd runs between these two, and only when
 * vfio_device_enter() returned true: a revoke waits for such sections.
 */
static bool vfio_device_enter(struct vfio_device *device, int *idx)
{
	*idx = srcu_read_lock(&device->srcu);
	if (!READ_ONCE(device->revoked))
		return true;
	srcu_read_unlock(&device->srcu, *idx);
	return false;
}

static void vfio_device_exit(struct vfio_device *device, int idx)
{
	srcu_read_unlock(&device->srcu, idx);
}

static long vfio_device_fops_ioctl(struct file *filep, unsigned int cmd,
				   unsigned long arg)
{
	struct vfio_device *device = filep->private_data;
	long ret;
	int idx;

	if (!vfio_device_enter(device, &idx))
		return -ENODEV;
	ret = device->ops->ioctl(device->device_data, cmd, arg);
	vfio_device_exit(device, idx);
	return ret;
}

/* The same device, through today's ioctls: see struct vfio_device_ops. */
static long vfio_device_fops_modern_ioctl(struct file *filep,
					  unsigned int cmd, unsigned long arg)
{
	struct vfio_device *device = filep->private_data;
	long ret = -ENOTTY;
	int idx;

	if (!vfio_device_enter(device, &idx))
		return -ENODEV;
	if (device->ops->modern_ioctl)
		ret = device->ops->modern_ioctl(device->device_data, cmd, arg);
	vfio_device_exit(device, idx);
	return ret;
}

/*
 * read(2) and write(2) reach the bus driver in chunks of at most this
 * many bytes, through a kernel bounce buffer that is copied to or from
 * the user outside the SRCU read section.  A revoke waits for read
 * sections only, so it must never wait for a user page: one backed by
 * userfaultfd or FUSE may never arrive.  Nor may it wait for a huge
 * request: between chunks the loop stops on a revoke or a fatal signal.
 */
#define VFIO_RW_CHUNK	4096

/*
 * How much of a request of @left bytes at @pos goes to the bus driver
 * next.  A request of up to VFIO_RW_CHUNK bytes goes whole.  A longer one
 * is cut only at 8-byte aligned positions, so no naturally aligned access
 * of up to 8 bytes straddles a cut, and into chunks of more than 8 bytes,
 * so none looks like a single 1, 2, 4 or 8 byte access the user did not
 * make.  The bus driver then does the accesses it would do for the whole.
 */
static size_t vfio_device_rw_chunk(loff_t pos, size_t left)
{
	size_t n;

	if (left <= VFIO_RW_CHUNK)
		return left;
	n = VFIO_RW_CHUNK - ((pos + VFIO_RW_CHUNK) & 7);
	if (left - n <= 8)
		n -= 8;
	return n;
}

/* One chunk through the bus driver, unless the device was revoked. */
static ssize_t vfio_device_rw_one(struct vfio_device *device, char *kbuf,
				  size_t n, loff_t *pos, bool write)
{
	ssize_t ret;
	int idx;

	if (!vfio_device_enter(device, &idx))
		return -ENODEV;
	ret = write ? device->ops->write(device->device_data, kbuf, n, pos) :
		      device->ops->read(device->device_data, kbuf, n, pos);
	vfio_device_exit(device, idx);
	return ret;
}

/*
 * Like one call of the bus driver, also in what it returns: the bytes
 * done when any were, else the error.  A write chunk whose user buffer
 * faults is not written at all; a read chunk counts up to the fault.
 */
static ssize_t vfio_device_rw(struct vfio_device *device, char __user *ubuf,
			      size_t count, loff_t *ppos, bool write)
{
	size_t done = 0;
	ssize_t ret;
	char *kbuf;

	if (write ? !device->ops->write : !device->ops->read)
		return READ_ONCE(device->revoked) ? -ENODEV : -EINVAL;

	kbuf = kmalloc(min_t(size_t, count, VFIO_RW_CHUNK), GFP_KERNEL);
	if (!kbuf)
		return -ENOMEM;
	/* Once also for count 0: the bus driver still checks the offset. */
	do {
		size_t n = vfio_device_rw_chunk(*ppos, count - done);
		loff_t pos = *ppos;
		size_t left = 0;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (write && copy_from_user(kbuf, ubuf + done, n)) {
			ret = -EFAULT;
			break;
		}
		ret = vfio_device_rw_one(device, kbuf, n, &pos, write);
		if (ret <= 0)
			break;
		if (!write)
			left = copy_to_user(ubuf + done, kbuf, ret);
		done += ret - left;
		*ppos += ret - left;
		if (left) {
			ret = -EFAULT;
			break;
		}
		/* Cut short at the end of a region. */
		if ((size_t)ret < n)
			break;
		cond_resched();
	} while (done < count);
	kfree(kbuf);
	return done ? done : ret;
}

static ssize_t vfio_device_fops_read(struct file *filep, char __user *buf,
				     size_t count, loff_t *ppos)
{
	return vfio_device_rw(filep->private_data, buf, count, ppos, false);
}

static ssize_t vfio_device_fops_write(struct file *filep,
				      const char __user *buf,
				      size_t count, loff_t *ppos)
{
	/* Only copied from, when writing. */
	return vfio_device_rw(filep->private_data, (char __user *)buf, count,
			      ppos, true);
}

/*
 * Device memory is mapped page by page on fault, never at mmap time: a
 * mapping made before its vma is linked could escape the zap of a revoke
 * that runs in between.  vm_private_data holds the frame of page offset
 * 0, so that vm_pgoff locates every page, also after a vma split.
 */
static vm_fault_t vfio_device_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct vfio_device *device = vma->vm_file->private_data;
	unsigned long pfn = (unsigned long)vma->vm_private_data +
			    vma->vm_pgoff +
			    ((vmf->address - vma->vm_start) >> PAGE_SHIFT);
	vm_fault_t ret;
	int idx;

	if (!vfio_device_enter(device, &idx))
		return VM_FAULT_SIGBUS;
	/* The bus driver knows whether the device decodes the page now. */
	if (device->ops->fault)
		ret = device->ops->fault(device->device_data, vmf, pfn);
	else
		ret = vmf_insert_pfn(vma, vmf->address, pfn);
	vfio_device_exit(device, idx);
	return ret;
}

static const struct vm_operations_struct vfio_device_vm_ops = {
	.fault = vfio_device_vm_fault,
};

static int vfio_device_fops_mmap(struct file *filep,
				 struct vm_area_struct *vma)
{
	struct vfio_device *device = filep->private_data;
	unsigned long pfn;
	int ret = -EINVAL;
	int idx;

	if (!vfio_device_enter(device, &idx))
		return -ENODEV;
	if (!device->ops->mmap)
		goto out;
	ret = device->ops->mmap(device->device_data, vma, &pfn);
	if (ret)
		goto out;
	vfio_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND |
			  VM_DONTDUMP);
	vma->vm_private_data = (void *)(pfn - vma->vm_pgoff);
	vma->vm_ops = &vfio_device_vm_ops;
out:
	vfio_device_exit(device, idx);
	return ret;
}

static const struct file_operations vfio_device_fops = {
	.owner		= THIS_MODULE,
	.release	= vfio_device_fops_release,
	.read		= vfio_device_fops_read,
	.write		= vfio_device_fops_write,
	.unlocked_ioctl	= vfio_device_fops_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= vfio_device_fops_mmap,
	.llseek		= default_llseek,
};

static const struct file_operations vfio_device_modern_fops = {
	.owner		= THIS_MODULE,
	.release	= vfio_device_fops_release,
	.read		= vfio_device_fops_read,
	.write		= vfio_device_fops_write,
	.unlocked_ioctl	= vfio_device_fops_modern_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= vfio_device_fops_mmap,
	.llseek		= default_llseek,
};

/* ---------------- group fds ---------------- */

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

/* Count one more user of @iommu, opening it for the first. */
int vfio_iommu_user_get(struct vfio_iommu *iommu)
{
	int ret;

	lockdep_assert_held(&vfio_lock);
	if (!iommu->users) {
		if (!vfio_set_viable(iommu))
			return -EBUSY;
		ret = vfio_iommu_open(iommu);
		if (ret)
			return ret;
	}
	iommu->users++;
	return 0;
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
	mutex_unlock(&vfio_lock);
	return ret;
}

static struct vfio_device *vfio_set_match_device(struct vfio_iommu *iommu,
						 const char *name)
{
	struct vfio_group *group;
	struct vfio_device *device;

	list_for_each_entry(group, &iommu->group_list, iommu_next)
		list_for_each_entry(device, &group->device_list, group_next)
			if (device->ops->match(device->dev, name))
				return device;
	return NULL;
}

/* Open @device for one more fd, with vfio_lock held. */
static int vfio_device_open(struct vfio_device *device,
			    struct vfio_iommu *iommu)
{
	int ret;

	ret = vfio_iommu_user_get(iommu);
	if (ret)
		return ret;
	if (!device->open_count) {
		mutex_lock(&device->open_lock);
		ret = READ_ONCE(device->revoked) ? -ENODEV :
			device->ops->open(device->device_data);
		device->ops_open = !ret;
		mutex_unlock(&device->open_lock);
		if (ret) {
			vfio_iommu_user_put(iommu);
			return ret;
		}
		kref_get(&iommu->kref);
		device->iommu = iommu;
	}
	device->open_count++;
	return 0;
}

/*
 * A new fd of @device, opened in @iommu, with vfio_lock held.  A modern
 * one holds @group_file, the /dev/vfio/<id> file it came from, as
 * upstream's do: the group stays in its container while a device fd is
 * open.  The ABIs never share a device, so one file serves all its fds.
 */
int vfio_device_new_fd(struct vfio_device *device, struct vfio_iommu *iommu,
		       struct file *group_file)
{
	struct file *file;
	int fd, ret;

	lockdep_assert_held(&vfio_lock);
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	ret = vfio_device_open(device, iommu);
	if (ret)
		goto err_fd;

	kref_get(&device->kref);
	file = anon_inode_getfile("[vfio-device]",
				  group_file ? &vfio_device_modern_fops :
					       &vfio_device_fops,
				  device, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		vfio_device_close(device);
		vfio_device_put(device);
		goto err_fd;
	}
	if (group_file)
		device->group_file = get_file(group_file);
	/* pread/pwrite at region offsets, and one mapping to zap on revoke */
	file->f_mode |= FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE;
	file->f_mapping = device->inode->i_mapping;
	fd_install(fd, file);
	return fd;

err_fd:
	put_unused_fd(fd);
	return ret;
}

static int vfio_group_get_device_fd(struct vfio_group *group,
				    const char *name)
{
	struct vfio_device *device;
	struct vfio_iommu *iommu;
	int ret;

	mutex_lock(&vfio_lock);
	iommu = group->iommu;
	ret = vfio_group_check(group);
	if (ret)
		goto out;
	device = vfio_set_match_device(iommu, name);
	if (!device) {
		ret = -ENODEV;
		goto out;
	}

	ret = vfio_device_new_fd(device, iommu, NULL);
out:
	mutex_unlock(&vfio_lock);
	return ret;
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
	if (file->f_op != &vfio_group_fops) {
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
	mutex_unlock(&vfio_lock);
out_fput:
	fput(file);
	return ret;
}

static int vfio_group_unmerge(struct vfio_group *group)
{
	struct vfio_iommu *iommu, *fresh;
	struct vfio_device *device;
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
	list_for_each_entry(device, &group->device_list, group_next) {
		if (device->open_count) {
			ret = -EBUSY;
			goto out;
		}
	}
	vfio_iommu_detach_group(iommu, group);
	vfio_group_set_iommu(group, fresh);
	fresh = NULL;
out:
	mutex_unlock(&vfio_lock);
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
		mutex_unlock(&vfio_lock);
		return -ENODEV;
	}
	if (vfio_set_viable(group->iommu))
		info.flags |= VFIO_GROUP_FLAGS_VIABLE;
	if (group->iommu->mm)
		info.flags |= VFIO_GROUP_FLAGS_MM_LOCKED;
	mutex_unlock(&vfio_lock);

	/* The seed returned copy_to_user()'s byte count as the result. */
	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static long vfio_group_fops_ioctl(struct file *filep, unsigned int cmd,
				  unsigned long arg)
{
	struct vfio_group *group = filep->private_data;
	void __user *uarg = (void __user *)arg;
	char *name;
	int fd, ret;

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
		name = strndup_user(uarg, PAGE_SIZE);
		if (IS_ERR(name))
			return PTR_ERR(name);
		ret = vfio_group_get_device_fd(group, name);
		kfree(name);
		return ret;
	}
	return -ENOTTY;
}

static int vfio_group_fops_open(struct inode *inode, struct file *filep)
{
	struct vfio_group *group;

	int ret = 0;

	mutex_lock(&vfio_lock);
	group = idr_find(&vfio.minors, iminor(inode));
	if (!group) {
		ret = -ENODEV;
	} else if (group->node_open) {
		/* In use through /dev/vfio/<id>. */
		ret = -EBUSY;
	} else {
		group->opened++;
		filep->private_data = group;
	}
	mutex_unlock(&vfio_lock);
	return ret;
}

/* The group of a node's minor, with vfio_lock held; NULL once gone. */
struct vfio_group *vfio_group_from_minor(unsigned int minor)
{
	lockdep_assert_held(&vfio_lock);
	return idr_find(&vfio.minors, minor);
}

static int vfio_group_fops_release(struct inode *inode, struct file *filep)
{
	struct vfio_group *group = filep->private_data;

	mutex_lock(&vfio_lock);
	group->opened--;
	vfio_iommu_dissolve(group->iommu);
	vfio_group_maybe_free(group);
	mutex_unlock(&vfio_lock);
	return 0;
}

static const struct file_operations vfio_group_fops = {
	.owner		= THIS_MODULE,
	.open		= vfio_group_fops_open,
	.release	= vfio_group_fops_release,
	.unlocked_ioctl	= vfio_group_fops_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* ---------------- module ---------------- */

static int vfio_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, VFIO_FS_MAGIC) ? 0 : -ENOMEM;
}

static struct file_system_type vfio_fs_type = {
	.name			= "vfio-dkms",
	.owner			= THIS_MODULE,
	.init_fs_context	= vfio_fs_init_fs_context,
	.kill_sb		= kill_anon_super,
};

static char *vfio_devnode(vfio_devnode_dev *dev, umode_t *mode)
{
	return kasprintf(GFP_KERNEL, "vfio/%s", dev_name(dev));
}

static int __init vfio_init(void)
{
	int ret;

	idr_init(&vfio.minors);
	INIT_LIST_HEAD(&vfio.group_list);

	vfio.class = vfio_class_create("vfio");
	if (IS_ERR(vfio.class))
		return PTR_ERR(vfio.class);
	vfio.class->devnode = vfio_devnode;

	ret = alloc_chrdev_region(&vfio.devt, 0, MINORMASK + 1, "vfio");
	if (ret)
		goto err_class;

	cdev_init(&vfio.cdev, &vfio_group_fops);
	/*
	 * An open of a node holds the cdev before the fops: without an
	 * owner, that window has no module reference and the module (the
	 * cdev is in it) could go.
	 */
	vfio.cdev.owner = THIS_MODULE;
	ret = cdev_add(&vfio.cdev, vfio.devt, MINORMASK + 1);
	if (ret)
		goto err_region;

	ret = alloc_chrdev_region(&vfio.node_devt, 0, MINORMASK + 1,
				  "vfio-group");
	if (ret)
		goto err_cdev;
	cdev_init(&vfio.node_cdev, &vfio_modern_group_fops);
	vfio.node_cdev.owner = THIS_MODULE;
	ret = cdev_add(&vfio.node_cdev, vfio.node_devt, MINORMASK + 1);
	if (ret)
		goto err_node_region;

	ret = vfio_container_init();
	if (ret)
		goto err_node_cdev;

	pr_info("VFIO core (group and container ABIs) version " VFIO_DKMS_VERSION "\n");
	return 0;

err_node_cdev:
	cdev_del(&vfio.node_cdev);
err_node_region:
	unregister_chrdev_region(vfio.node_devt, MINORMASK + 1);
err_cdev:
	cdev_del(&vfio.cdev);
err_region:
	unregister_chrdev_region(vfio.devt, MINORMASK + 1);
err_class:
	class_destroy(vfio.class);
	return ret;
}

static void __exit vfio_exit(void)
{
	/* Bus drivers depend on us and open fds pin the module. */
	WARN_ON(!list_empty(&vfio.group_list));
	vfio_iommu_removals_exit();
	vfio_container_exit();
	cdev_del(&vfio.node_cdev);
	unregister_chrdev_region(vfio.node_devt, MINORMASK + 1);
	cdev_del(&vfio.cdev);
	unregister_chrdev_region(vfio.devt, MINORMASK + 1);
	class_destroy(vfio.class);
	idr_destroy(&vfio.minors);
}

module_init(vfio_init);
module_exit(vfio_exit);

MODULE_VERSION(VFIO_DKMS_VERSION);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("VFIO core: IOMMU groups, DMA mapping and device access for user-space drivers");
