// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: the device object and its fds.
 *
 * A bus driver registers a device from its probe and unregisters it from
 * its remove.  A device fd of either ABI reads, writes and maps the
 * device's regions the same way; only the ioctls differ (struct
 * vfio_device_ops).  Unregistering a device a user holds asks the user
 * to let go, waits a bounded time, then revokes the device: see the top
 * of vfio_private.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/iommu.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "vfio_private.h"

#define VFIO_FS_MAGIC	0x7666646b	/* "vfdk" */

static unsigned int release_timeout_ms = 5000;
module_param(release_timeout_ms, uint, 0644);
MODULE_PARM_DESC(release_timeout_ms,
		 "How long unbinding a device waits for its user before revoking it (default: 5000)");

/* Device inodes, one per device: the mapping its mmaps are zapped from. */
static struct {
	struct vfsmount		*mnt;
	int			mnt_count;	/* simple_pin_fs() users */
} vfio_fs;

static const struct file_operations vfio_device_fops;
static const struct file_operations vfio_device_container_fops;
static struct file_system_type vfio_fs_type;

static void vfio_device_release(struct kref *kref)
{
	struct vfio_device *device = container_of(kref, struct vfio_device,
						  kref);

	cleanup_srcu_struct(&device->srcu);
	mutex_destroy(&device->open_lock);
	iput(device->inode);
	simple_release_fs(&vfio_fs.mnt, &vfio_fs.mnt_count);
	put_device(device->dev);
	kfree(device);
}

static void vfio_device_put(struct vfio_device *device)
{
	kref_put(&device->kref, vfio_device_release);
}

static struct inode *vfio_device_inode(void)
{
	struct inode *inode;
	int ret;

	ret = simple_pin_fs(&vfio_fs_type, &vfio_fs.mnt, &vfio_fs.mnt_count);
	if (ret)
		return ERR_PTR(ret);
	inode = alloc_anon_inode(vfio_fs.mnt->mnt_sb);
	if (IS_ERR(inode))
		simple_release_fs(&vfio_fs.mnt, &vfio_fs.mnt_count);
	return inode;
}

int vfio_register_device(struct device *dev, const struct vfio_device_ops *ops,
			 void *device_data, struct vfio_device **handle)
{
	struct iommu_group *iommu_group;
	struct vfio_device *device;
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
		simple_release_fs(&vfio_fs.mnt, &vfio_fs.mnt_count);
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

	ret = vfio_group_add_device(device, iommu_group);
	if (ret) {
		vfio_device_put(device);
		goto err_group;
	}
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
		vfio_unlock();
		return;
	}
	/*
	 * From here on GET_DEVICE_FD cannot find it.  It stays in its group
	 * until it is revoked: while its user can still make it DMA, the
	 * group must not leave the user's IOMMU domain (UNSET_CONTAINER,
	 * UNMERGE and the group's last close see it open and keep it), nor
	 * be freed under us by that close.
	 */
	device->leaving = true;
	group = device->group;
	vfio_unlock();

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
	/* Its BAR is about to be the host's: no IOVA may lead there. */
	vfio_group_drop_dma(device);

	mutex_lock(&vfio_lock);
	list_del_init(&device->group_next);
	device->group = NULL;
	vfio_group_maybe_free(group);
	vfio_unlock();
	vfio_device_put(device);
}
EXPORT_SYMBOL_GPL(vfio_unregister_device);


/* Drop one device fd, with vfio_lock held. */
static void vfio_device_close(struct vfio_device *device)
{
	struct vfio_iommu *iommu = device->iommu;

	lockdep_assert_held(&vfio_lock);
	if (!--device->open_count) {
		vfio_device_quiesce(device);
		device->iommu = NULL;
		/* No fd is left that can reach the bus driver's code. */
		module_put(device->ops->owner);
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
	if (device->open_count == 1) {
		/*
		 * The last fd: the bus driver's release resets the device,
		 * which can take a second (a bus reset) or a minute (a
		 * device that is slow to come back), so it runs with
		 * vfio.lock dropped.  The device stays open meanwhile, and
		 * with it its IOMMU object's mappings; @closing turns new
		 * fds away until it is quiet.
		 */
		device->closing = true;
		vfio_unlock();
		vfio_device_quiesce(device);
		mutex_lock(&vfio_lock);
		device->closing = false;
	}
	group_file = device->group_file;
	vfio_device_close(device);
	if (!device->open_count)
		device->group_file = NULL;
	vfio_unlock();
	vfio_device_put(device);
	/* Last: the group's release may detach it from its container. */
	if (group_file)
		fput(group_file);
	return 0;
}

/*
 * Every op on a device fd runs between these two, and does nothing but
 * fail when vfio_device_enter() returned false (revoked): a revoke waits
 * for such sections to end.
 */
static bool vfio_device_enter(struct vfio_device *device, int *idx)
	__acquires(&device->srcu)
{
	*idx = srcu_read_lock(&device->srcu);
	return !READ_ONCE(device->revoked);
}

static void vfio_device_exit(struct vfio_device *device, int idx)
	__releases(&device->srcu)
{
	srcu_read_unlock(&device->srcu, idx);
}

static const struct vfio_ioctl_desc *
vfio_ioctl_find(const struct vfio_ioctl_desc *desc, unsigned int cmd)
{
	for (; desc && desc->cmd; desc++)
		if (desc->cmd == cmd)
			return desc;
	return NULL;
}

/*
 * Most device ioctls carry a small fixed-size argument (INTx's UNMASK_IRQ
 * runs once per interrupt): up to this much lives on the stack.
 */
#define VFIO_IOCTL_ONSTACK	64

/*
 * An ioctl's argument is copied in before the SRCU read section and back
 * out after it, as read(2)'s bytes are: a revoke must never wait for a
 * user page that may never arrive (userfaultfd, FUSE).  @desc says how
 * much to copy; nothing of the argument is touched when the ioctl is not
 * one of @op's.  Every argument begins with its argsz, which must cover
 * the fixed part: checked here once, so the ops need not.
 */
static long vfio_device_ioctl(struct vfio_device *device,
			      const struct vfio_ioctl_desc *desc,
			      long (*op)(void *device_data, unsigned int cmd,
					 void *arg, u32 *len),
			      unsigned int cmd, void __user *uarg)
{
	u64 onstack[VFIO_IOCTL_ONSTACK / sizeof(u64)];
	u32 len = 0, size = 0, datasz = 0;
	void *buf = onstack;
	long ret;
	int idx;

	desc = vfio_ioctl_find(desc, cmd);
	if (!desc || !op)
		return -ENOTTY;
	if (desc->minsz) {
		size = max(desc->minsz, desc->bufsz);
		if (size > sizeof(onstack)) {
			buf = kzalloc(size, GFP_KERNEL_ACCOUNT);
			if (!buf)
				return -ENOMEM;
		} else {
			memset(buf, 0, size);
		}
		if (copy_from_user(buf, uarg, desc->minsz)) {
			ret = -EFAULT;
			goto out;
		}
		if (desc->datasz)
			datasz = desc->datasz(buf);
		/* A device that is gone says so first, as every op does. */
		if (*(u32 *)buf < desc->minsz ||
		    datasz > VFIO_IOCTL_DATA_MAX) {
			ret = READ_ONCE(device->revoked) ? -ENODEV : -EINVAL;
			goto out;
		}
		len = desc->minsz + datasz;
		if (len > size) {
			void *more = kmalloc(len, GFP_KERNEL_ACCOUNT);

			if (!more) {
				ret = -ENOMEM;
				goto out;
			}
			/* The data part after it is copied in whole. */
			memcpy(more, buf, desc->minsz);
			if (buf != onstack)
				kfree(buf);
			buf = more;
			size = len;
		}
		if (datasz && copy_from_user(buf + desc->minsz,
					     uarg + desc->minsz, datasz)) {
			ret = -EFAULT;
			goto out;
		}
	}

	if (vfio_device_enter(device, &idx))
		ret = op(device->device_data, cmd, buf, &len);
	else
		ret = -ENODEV;
	vfio_device_exit(device, idx);

	if (WARN_ON_ONCE(len > size))
		ret = -EIO;
	else if ((!ret || (ret == -ENOSPC && desc->out_on_enospc)) &&
		 len && copy_to_user(uarg, buf, len))
		ret = -EFAULT;
out:
	if (buf != onstack)
		kfree(buf);
	return ret;
}

static long vfio_device_fops_ioctl(struct file *filep, unsigned int cmd,
				   unsigned long arg)
{
	struct vfio_device *device = filep->private_data;

	return vfio_device_ioctl(device, device->ops->ioctls,
				 device->ops->ioctl, cmd, (void __user *)arg);
}

/* The same device, through today's ioctls: see struct vfio_device_ops. */
static long vfio_device_fops_container_ioctl(struct file *filep,
					  unsigned int cmd, unsigned long arg)
{
	struct vfio_device *device = filep->private_data;

	return vfio_device_ioctl(device, device->ops->container_ioctls,
				 device->ops->container_ioctl, cmd,
				 (void __user *)arg);
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

	if (!vfio_device_enter(device, &idx)) {
		vfio_device_exit(device, idx);
		return -ENODEV;
	}
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

	if (!vfio_device_enter(device, &idx)) {
		vfio_device_exit(device, idx);
		return VM_FAULT_SIGBUS;
	}
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

/*
 * The BAR behind [vaddr, vaddr + size) of the caller's address space, for
 * a MAP_DMA that could not pin it (vfio_dma.c): 0 when the whole range
 * lies in one mmap of a device fd of ours, with the device (referenced:
 * vfio_device_dma_put() it) in *@devp and the frame of @vaddr in *@pfn.
 * -ENOENT when no part of the range is such an mmap, so that the caller
 * keeps the error pinning gave; -EINVAL when only part of it is (the rest
 * is RAM, unmapped, or another device's mmap); -EFAULT when the mmap
 * does not allow the access @prot asks for the device, as pinning a
 * page for it would have refused.
 */
int vfio_device_dma_get(u64 vaddr, u64 size, int prot,
			struct vfio_device **devp, unsigned long *pfn)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma, *first;
	u64 end = vaddr + size, addr;
	int ret = -ENOENT;

	mmap_read_lock(mm);
	first = find_vma_intersection(mm, vaddr, end);
	for (vma = first, addr = vaddr; vma;
	     vma = find_vma_intersection(mm, addr, end)) {
		if (vma->vm_ops == &vfio_device_vm_ops) {
			ret = -EINVAL;
			break;
		}
		addr = vma->vm_end;
	}
	if (ret == -ENOENT)
		goto out;
	if (vma != first || vma->vm_start > vaddr || vma->vm_end < end)
		goto out;
	ret = -EFAULT;
	if (((prot & IOMMU_READ) && !(vma->vm_flags & VM_READ)) ||
	    ((prot & IOMMU_WRITE) && !(vma->vm_flags & VM_WRITE)))
		goto out;
	*devp = vma->vm_file->private_data;
	kref_get(&(*devp)->kref);
	*pfn = (unsigned long)vma->vm_private_data + vma->vm_pgoff +
	       ((vaddr - vma->vm_start) >> PAGE_SHIFT);
	ret = 0;
out:
	mmap_read_unlock(mm);
	return ret;
}

/*
 * Enter @device for a mapping of its BAR to go in: false when it is
 * revoked.  vfio_device_dma_put() leaves it.  A revoke waits for the
 * section, then removes the mappings it let in (vfio_device_drop_dma()).
 */
bool vfio_device_dma_enter(struct vfio_device *device, int *idx)
	__acquires(&device->srcu)
{
	return vfio_device_enter(device, idx);
}

void vfio_device_dma_exit(struct vfio_device *device, int idx)
	__releases(&device->srcu)
{
	vfio_device_exit(device, idx);
}

void vfio_device_dma_put(struct vfio_device *device)
{
	vfio_device_put(device);
}

static int vfio_device_fops_mmap(struct file *filep,
				 struct vm_area_struct *vma)
{
	struct vfio_device *device = filep->private_data;
	unsigned long pfn;
	int ret = -EINVAL;
	int idx;

	if (!vfio_device_enter(device, &idx)) {
		vfio_device_exit(device, idx);
		return -ENODEV;
	}
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

static const struct file_operations vfio_device_container_fops = {
	.owner		= THIS_MODULE,
	.release	= vfio_device_fops_release,
	.read		= vfio_device_fops_read,
	.write		= vfio_device_fops_write,
	.unlocked_ioctl	= vfio_device_fops_container_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= vfio_device_fops_mmap,
	.llseek		= default_llseek,
};

/* Open @device for one more fd, with vfio_lock held. */
static int vfio_device_open(struct vfio_device *device,
			    struct vfio_iommu *iommu)
{
	int ret;

	/* Its last fd is being closed: it is about to be reset. */
	if (device->closing)
		return -EBUSY;
	ret = vfio_iommu_user_get(iommu);
	if (ret)
		return ret;
	if (!device->open_count) {
		/*
		 * Held until the last fd closes, revoked or not: every op
		 * on the fds reads the bus driver's tables first.  Fails
		 * while its module is being unloaded.
		 */
		if (!try_module_get(device->ops->owner)) {
			vfio_iommu_user_put(iommu);
			return -ENODEV;
		}
		mutex_lock(&device->open_lock);
		ret = READ_ONCE(device->revoked) ? -ENODEV :
			device->ops->open(device->device_data);
		device->ops_open = !ret;
		mutex_unlock(&device->open_lock);
		if (ret) {
			module_put(device->ops->owner);
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
 * A new fd of @device, opened in @iommu, with vfio_lock held.  A container
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
				  group_file ? &vfio_device_container_fops :
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


/* ---- peers: devices an op of another device must own (vfio.h) ---------- */

static bool vfio_file_is_group(struct file *file)
{
	return file->f_op == &vfio_container_group_fops ||
	       file->f_op == &vfio_seed_group_fops;
}

/* Whether @group is the group of one of @files[@nfiles]. */
static bool vfio_group_in_files(struct vfio_group *group, struct file **files,
				unsigned int nfiles)
{
	unsigned int i;

	for (i = 0; i < nfiles; i++)
		if (files[i]->private_data == group)
			return true;
	return false;
}

/* Hold @dev for an op of @caller in @iommu, with vfio_lock held. */
static int vfio_peer_get_locked(struct vfio_device *caller,
				struct vfio_iommu *iommu, struct device *dev,
				struct file **files, unsigned int nfiles,
				struct vfio_peer *peer)
{
	struct vfio_device *device;

	lockdep_assert_held(&vfio_lock);
	device = vfio_device_find(dev);
	/* Unbound, on a host driver, or another bus driver's: not ours. */
	if (!device || device->leaving || READ_ONCE(device->revoked) ||
	    device->ops != caller->ops || !device->group)
		return -EINVAL;
	if (!vfio_group_in_files(device->group, files, nfiles))
		return -EINVAL;
	if (device->open_count && device->iommu != iommu)
		return -EBUSY;
	kref_get(&device->kref);
	/*
	 * A revoke waits for this section: remove() waits for us.  It is
	 * left by vfio_peer_put(), not here: tell sparse so.
	 */
	peer->srcu_idx = srcu_read_lock(&device->srcu);
	__release(&device->srcu);
	peer->device = device;
	peer->device_data = device->device_data;
	return 0;
}

static void vfio_peer_put(struct vfio_peer *peer)
{
	/* Entered by vfio_peer_get_locked(). */
	__acquire(&peer->device->srcu);
	srcu_read_unlock(&peer->device->srcu, peer->srcu_idx);
	vfio_device_put(peer->device);
	peer->device = NULL;
}

int vfio_peers_get(struct vfio_device *caller, const s32 *fds,
		   unsigned int nfds, struct device *const *devs,
		   unsigned int ndevs, struct vfio_peer *peers)
{
	struct vfio_iommu *iommu;
	struct file **files;
	unsigned int i, n = 0;
	int ret = 0;

	files = kcalloc(nfds, sizeof(*files), GFP_KERNEL);
	if (!files)
		return -ENOMEM;
	for (; n < nfds; n++) {
		files[n] = fget(fds[n]);
		if (!files[n]) {
			ret = -EBADF;
			goto out;
		}
		if (!vfio_file_is_group(files[n])) {
			fput(files[n]);
			ret = -EINVAL;
			goto out;
		}
	}

	mutex_lock(&vfio_lock);
	/* Open while its fd's op runs, unless revoked meanwhile. */
	iommu = caller->iommu;
	if (!iommu || READ_ONCE(caller->revoked)) {
		ret = -ENODEV;
		goto unlock;
	}
	/* A group of another container or set is another user's. */
	for (i = 0; i < nfds; i++) {
		struct vfio_group *group = files[i]->private_data;

		if (group->dead || group->iommu != iommu) {
			ret = -EINVAL;
			goto unlock;
		}
	}
	for (i = 0; i < ndevs; i++) {
		ret = vfio_peer_get_locked(caller, iommu, devs[i], files, nfds,
					   &peers[i]);
		if (ret) {
			while (i--)
				vfio_peer_put(&peers[i]);
			break;
		}
	}
unlock:
	vfio_unlock();
out:
	while (n--)
		fput(files[n]);
	kfree(files);
	return ret;
}
EXPORT_SYMBOL_GPL(vfio_peers_get);

void vfio_peers_put(struct vfio_peer *peers, unsigned int ndevs)
{
	unsigned int i;

	for (i = 0; i < ndevs; i++)
		vfio_peer_put(&peers[i]);
}
EXPORT_SYMBOL_GPL(vfio_peers_put);

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
