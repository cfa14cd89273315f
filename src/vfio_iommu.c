// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: the IOMMU object of a (merged) set of groups and its fd.
 *
 * The object is opened by its first user (an IOMMU fd or a device fd):
 * a paging domain is allocated, every group of the set is claimed from
 * the host's DMA API (iommu_group_claim_dma_owner(), which also keeps
 * host drivers from binding to a member later) and attached.  The last
 * user's close unmaps everything and gives the groups back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/iommu.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "vfio_private.h"
#include "vfio_range.h"

/*
 * Linux 6.1 frees a departing device's IOMMU driver data (the driver's
 * release_device) before it takes the device out of its iommu_group, and
 * without the group's lock: setting a domain on that group in between
 * (iommu_detach_group() puts the default one back) dereferences the freed
 * data.  So a device's deletion counts as in flight from
 * BUS_NOTIFY_DEL_DEVICE to BUS_NOTIFY_REMOVED_DEVICE, which comes after
 * the IOMMU core's own notifier, and attach and detach wait until none
 * is.  A list, not a lock held across the notifier chain: that would
 * nest inside the bus notifier rwsem.  The deleting thread takes nothing
 * of ours in between, so the wait is as short as the deletion.
 *
 * Each deletion is an entry for its device, so that an end pairs only
 * with its own begin: a REMOVED whose DEL came before the bus driver
 * registered its notifier ends nothing.  The bus driver may also go
 * between the two and never tell us the end; a deletion is over anyway
 * once the device has left its IOMMU group (the IOMMU core clears
 * dev->iommu_group last), so the waiters check that too, and poll.
 */
struct vfio_removal {
	struct list_head	next;		/* vfio_removals */
	struct device		*dev;		/* referenced */
};

static DEFINE_SPINLOCK(vfio_removals_lock);
static LIST_HEAD(vfio_removals);	/* under vfio_removals_lock */
static DECLARE_WAIT_QUEUE_HEAD(vfio_removals_wq);

/* How often a waiter looks for deletions whose end we were not told. */
#define VFIO_REMOVAL_POLL	(HZ / 10)

static bool vfio_removal_done(const struct vfio_removal *r)
{
	return !READ_ONCE(r->dev->iommu_group);
}

/* Free the finished entries, @dev's (when not NULL), or with @all all. */
static void vfio_iommu_removals_prune(struct device *dev, bool all)
{
	struct vfio_removal *r, *next;
	LIST_HEAD(done);

	spin_lock(&vfio_removals_lock);
	list_for_each_entry_safe(r, next, &vfio_removals, next)
		if (all || r->dev == dev || vfio_removal_done(r))
			list_move(&r->next, &done);
	spin_unlock(&vfio_removals_lock);

	list_for_each_entry_safe(r, next, &done, next) {
		put_device(r->dev);
		kfree(r);
	}
}

void vfio_iommu_removal_begin(struct device *dev)
{
	struct vfio_removal *r;

	vfio_iommu_removals_prune(NULL, false);
	r = kmalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		dev_warn(dev, "no memory to hold domain changes during its deletion\n");
		return;
	}
	r->dev = get_device(dev);
	spin_lock(&vfio_removals_lock);
	list_add_tail(&r->next, &vfio_removals);
	spin_unlock(&vfio_removals_lock);
}

void vfio_iommu_removal_end(struct device *dev)
{
	vfio_iommu_removals_prune(dev, false);
	wake_up_all(&vfio_removals_wq);
}

/* At module exit no waiter is left: forget what was not ended. */
void vfio_iommu_removals_exit(void)
{
	vfio_iommu_removals_prune(NULL, true);
}

static bool vfio_iommu_no_removals(void)
{
	struct vfio_removal *r;
	bool idle = true;

	spin_lock(&vfio_removals_lock);
	list_for_each_entry(r, &vfio_removals, next) {
		if (!vfio_removal_done(r)) {
			idle = false;
			break;
		}
	}
	spin_unlock(&vfio_removals_lock);
	return idle;
}

static void vfio_iommu_wait_removals(void)
{
	while (!wait_event_timeout(vfio_removals_wq, vfio_iommu_no_removals(),
				   VFIO_REMOVAL_POLL))
		;
}

struct vfio_iommu *vfio_iommu_alloc(gfp_t gfp)
{
	struct vfio_iommu *iommu;

	iommu = kzalloc(sizeof(*iommu), gfp);
	if (!iommu)
		return NULL;
	kref_init(&iommu->kref);
	INIT_LIST_HEAD(&iommu->group_list);
	vfio_dma_init(iommu);
	return iommu;
}

static void vfio_iommu_release(struct kref *kref)
{
	struct vfio_iommu *iommu = container_of(kref, struct vfio_iommu, kref);

	WARN_ON(iommu->users || iommu->domain || iommu->remains);
	kfree(iommu);
}

void vfio_iommu_put(struct vfio_iommu *iommu)
{
	kref_put(&iommu->kref, vfio_iommu_release);
}

int vfio_iommu_attach_group(struct vfio_iommu *iommu, struct vfio_group *group)
{
	int ret;

	lockdep_assert_held(&vfio_lock);
	vfio_iommu_wait_removals();
	ret = iommu_group_claim_dma_owner(group->iommu_group, iommu);
	if (ret)
		return ret;
	/*
	 * Not while a container's MAP_DMA or UNMAP_DMA runs in the domain:
	 * IOMMU drivers expect attach and detach serialized with map and
	 * unmap (intel-iommu's IOTLB flush after a map walks the domain's
	 * IOMMUs, which a detach frees).
	 */
	mutex_lock(&iommu->dma_lock);
	ret = iommu_attach_group(iommu->domain, group->iommu_group);
	mutex_unlock(&iommu->dma_lock);
	if (ret) {
		iommu_group_release_dma_owner(group->iommu_group);
		return ret;
	}
	group->attached = true;
	return 0;
}

void vfio_iommu_detach_group(struct vfio_iommu *iommu, struct vfio_group *group)
{
	lockdep_assert_held(&vfio_lock);
	if (!group->attached)
		return;
	vfio_iommu_wait_removals();
	mutex_lock(&iommu->dma_lock);		/* see the attach */
	iommu_detach_group(iommu->domain, group->iommu_group);
	mutex_unlock(&iommu->dma_lock);
	iommu_group_release_dma_owner(group->iommu_group);
	group->attached = false;
}

/*
 * The IOVAs the IOMMU keeps for itself in any group of the set (x86: the
 * interrupt window at 0xfee00000): a mapping there would never be what
 * the device reaches, and DMA into it may raise interrupts instead.
 * Relaxable direct regions (RMRRs that assignment may drop) stay
 * usable.  @extra is a group about to join the set.
 */
int vfio_iommu_resv_update(struct vfio_iommu *iommu, struct vfio_group *extra)
{
	struct iommu_resv_region *region, *next;
	struct vfio_group *group;
	struct vfio_resv *resv = NULL;
	unsigned int nr = 0;
	LIST_HEAD(regions);
	int ret = 0;

	lockdep_assert_held(&vfio_lock);
	list_for_each_entry(group, &iommu->group_list, iommu_next) {
		ret = iommu_get_group_resv_regions(group->iommu_group,
						   &regions);
		if (ret)
			goto out;
	}
	if (extra) {
		ret = iommu_get_group_resv_regions(extra->iommu_group,
						   &regions);
		if (ret)
			goto out;
	}
	list_for_each_entry(region, &regions, list)
		if (region->type != IOMMU_RESV_DIRECT_RELAXABLE &&
		    region->length)
			nr++;
	if (nr) {
		resv = kcalloc(nr, sizeof(*resv), GFP_KERNEL_ACCOUNT);
		if (!resv) {
			ret = -ENOMEM;
			goto out;
		}
	}
	nr = 0;
	list_for_each_entry(region, &regions, list) {
		if (region->type == IOMMU_RESV_DIRECT_RELAXABLE ||
		    !region->length)
			continue;
		resv[nr].start = region->start;
		resv[nr].last = region->start + region->length - 1;
		nr++;
	}
	ret = vfio_dma_set_resv(iommu, resv, nr);
out:
	list_for_each_entry_safe(region, next, &regions, list)
		kfree(region);
	return ret;
}

static int vfio_first_dev(struct device *dev, void *data)
{
	/* The group's lock is held: @dev is still a member. */
	*(struct device **)data = get_device(dev);
	return 1;
}

/*
 * A device of the set for the IOMMU calls that want one, referenced: the
 * attach below sleeps while deletions are in flight, and a member that is
 * being deleted is freed once it has left its group.  One bound to us
 * and not being unregistered first, as it cannot be on its way out
 * while vfio.lock is held; else
 * any member of a group whose devices were all unbound, taken once no
 * deletion is in flight.
 */
static struct device *vfio_iommu_get_dev(struct vfio_iommu *iommu)
{
	struct vfio_device *device;
	struct vfio_group *group;
	struct device *dev = NULL;

	list_for_each_entry(group, &iommu->group_list, iommu_next)
		list_for_each_entry(device, &group->device_list, group_next)
			if (!device->leaving)
				return get_device(device->dev);
	/* Not one whose deletion is under way (attach waits anyway). */
	vfio_iommu_wait_removals();
	list_for_each_entry(group, &iommu->group_list, iommu_next) {
		iommu_group_for_each_dev(group->iommu_group, &dev,
					 vfio_first_dev);
		if (dev)
			break;
	}
	return dev;
}

/* Open the set for the current process; the caller checked viability. */
int vfio_iommu_open(struct vfio_iommu *iommu)
{
	struct vfio_group *group, *failed;
	struct device *dev;
	int ret;

	lockdep_assert_held(&vfio_lock);
	iommu->remains = vfio_dma_remains_alloc();
	if (!iommu->remains)
		return -ENOMEM;
	dev = vfio_iommu_get_dev(iommu);
	if (!dev) {
		ret = -ENODEV;
		goto err_remains;
	}

	iommu->domain = vfio_domain_alloc(dev);
	if (!iommu->domain) {
		put_device(dev);
		ret = -ENOMEM;
		goto err_remains;
	}
	iommu->prot = device_iommu_capable(dev, IOMMU_CAP_CACHE_COHERENCY) ?
		      IOMMU_CACHE : 0;
	put_device(dev);

	list_for_each_entry(group, &iommu->group_list, iommu_next) {
		ret = vfio_iommu_attach_group(iommu, group);
		if (ret) {
			failed = group;
			goto err_detach;
		}
	}

	ret = vfio_iommu_resv_update(iommu, NULL);
	if (ret) {
		failed = NULL;
		goto err_detach;
	}

	iommu->mm = current->mm;
	mmgrab(iommu->mm);
	return 0;

err_detach:
	list_for_each_entry(group, &iommu->group_list, iommu_next) {
		if (group == failed)
			break;
		vfio_iommu_detach_group(iommu, group);
	}
	iommu_domain_free(iommu->domain);
	iommu->domain = NULL;
err_remains:
	kfree(iommu->remains);
	iommu->remains = NULL;
	return ret;
}

/* Closed IOMMU objects' mappings, for the task that closed them. */
static LIST_HEAD(vfio_remains);		/* vfio.lock */

/*
 * Its devices are quiesced: detach the groups, which ends all DMA into
 * the mappings, and leave the mappings to the caller's vfio_unlock().
 */
void vfio_iommu_close(struct vfio_iommu *iommu)
{
	struct vfio_group *group;

	lockdep_assert_held(&vfio_lock);
	list_for_each_entry(group, &iommu->group_list, iommu_next)
		vfio_iommu_detach_group(iommu, group);
	vfio_dma_set_resv(iommu, NULL, 0);
	vfio_dma_bury(iommu, iommu->remains);
	list_add_tail(&iommu->remains->next, &vfio_remains);
	iommu->remains = NULL;
}

/*
 * Release vfio.lock, then unpin what the IOMMU objects closed under it
 * held.  Only the holder adds to the list, and it empties the list
 * before it lets go, so each task reaps its own closes, and its close()
 * returns with nothing of it pinned.
 */
void vfio_unlock(void)
{
	struct vfio_dma_remains *rem, *next;
	LIST_HEAD(reap);

	lockdep_assert_held(&vfio_lock);
	list_splice_init(&vfio_remains, &reap);
	mutex_unlock(&vfio_lock);
	list_for_each_entry_safe(rem, next, &reap, next)
		vfio_dma_reap(rem);
}

/* One user (IOMMU fd or device fd) fewer; the last closes the set. */
void vfio_iommu_user_put(struct vfio_iommu *iommu)
{
	lockdep_assert_held(&vfio_lock);
	if (--iommu->users)
		return;
	vfio_iommu_close(iommu);
	vfio_iommu_dissolve(iommu);
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
