// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms PCI bus driver: bus and slot reset for the user, the work of
 * both ABIs' GET_PCI_HOT_RESET_INFO and PCI_HOT_RESET (their argument
 * handling is in vfio_pci_container_ioctl.c and vfio_pci.c).
 *
 * A device without a function reset of its own (most GPUs, many
 * multi-function cards) can still be reset through the bridge above it:
 * its hotplug slot, else a secondary bus reset.  Either resets every
 * device behind it too, so the user must own all of them: each bound to
 * this driver and in a group the user passes an fd of, in the caller's
 * container or merged set (vfio_peers_get() checks that in the core).
 * The scope is the kernel's pci_reset_bus()'s: the slot when it can be
 * reset, else the bus with everything below it.
 *
 * Locks: the caller's @lock as every ioctl takes it, then each other
 * device's @lock and every device's memory_lock (write) only by trylock:
 * two users resetting two devices of one bus must not wait for each
 * other, and none of these locks may be waited for in an order another
 * path does not know.  Contention is retried for a bounded while, then
 * reported as -EBUSY; the device locks the PCI core takes for the reset
 * are tried by pci_reset_bus() itself (-EAGAIN), never slept on: a
 * remove() holding one may be waiting for us (see vfio.h).
 */
#include <linux/delay.h>
#include <linux/iommu.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/slab.h>

#include "vfio_pci_private.h"

static_assert(sizeof(struct vfio_pci_hr_dev) == 8);

/* The devices a bus or slot reset of @pdev affects. */
struct vfio_pci_hr_walk {
	struct pci_dev	*pdev;
	bool		slot;
	unsigned int	n;
	unsigned int	max;
	struct pci_dev	**devs;		/* NULL: count them only */
	int		err;
};

/* Whether a slot reset of @w->pdev reaches @dev, on or below its bus. */
static bool vfio_pci_hr_in_slot(struct vfio_pci_hr_walk *w,
				struct pci_dev *dev)
{
	while (dev->bus != w->pdev->bus) {
		dev = dev->bus->self;
		if (!dev)
			return false;
	}
	return dev->slot == w->pdev->slot;
}

static int vfio_pci_hr_walk_one(struct pci_dev *dev, void *data)
{
	struct vfio_pci_hr_walk *w = data;

	if (w->slot && !vfio_pci_hr_in_slot(w, dev))
		return 0;
	if (w->devs) {
		/* One appeared since we counted: the caller tries again. */
		if (w->n == w->max) {
			w->err = -EAGAIN;
			return 1;
		}
		w->devs[w->n] = pci_dev_get(dev);
	}
	w->n++;
	return 0;
}

static void vfio_pci_hr_put_devs(struct pci_dev **devs, unsigned int n)
{
	while (n--)
		pci_dev_put(devs[n]);
	kfree(devs);
}

/*
 * The devices a reset of @pdev reaches, referenced, in *@devs (free with
 * vfio_pci_hr_put_devs()); returns how many, or -ENODEV when neither a
 * slot nor a bus reset is possible (a device on a root bus).
 */
static int vfio_pci_hr_devs(struct pci_dev *pdev, struct pci_dev ***devs)
{
	struct vfio_pci_hr_walk w = { .pdev = pdev };

	/* As pci_reset_bus() will choose. */
	w.slot = !pci_probe_reset_slot(pdev->slot);
	if (!w.slot && pci_probe_reset_bus(pdev->bus))
		return -ENODEV;

	pci_walk_bus(pdev->bus, vfio_pci_hr_walk_one, &w);
	/* pdev itself is one: never 0. */
	if (WARN_ON_ONCE(!w.n))
		return -ENODEV;
	w.max = w.n;
	w.n = 0;
	w.devs = kcalloc(w.max, sizeof(*w.devs), GFP_KERNEL);
	if (!w.devs)
		return -ENOMEM;
	pci_walk_bus(pdev->bus, vfio_pci_hr_walk_one, &w);
	/* Hotplug meanwhile: as upstream, the user may ask again. */
	if (w.err || w.n != w.max) {
		vfio_pci_hr_put_devs(w.devs, w.n);
		return -EAGAIN;
	}
	*devs = w.devs;
	return w.n;
}

/*
 * Fill @out with up to VFIO_PCI_HR_MAX_DEVS devices, *@count set to how
 * many a reset affects; -ENOSPC when @argsz has no room for them after
 * the fixed part (*@count still set), -ENODEV when no bus or slot reset
 * exists.
 */
static int vfio_pci_hot_reset_info(struct vfio_pci_device *vdev, u32 argsz,
				   u32 *count, struct vfio_pci_hr_dev *out)
{
	struct iommu_group *group;
	struct pci_dev **devs;
	int n, i, ret = 0;

	n = vfio_pci_hr_devs(vdev->pdev, &devs);
	if (n < 0)
		return n;
	*count = n;
	if (n > VFIO_PCI_HR_MAX_DEVS) {
		/* Far beyond any real bridge; the answer would not fit. */
		ret = -E2BIG;
		goto out;
	}
	if (argsz < VFIO_PCI_HR_MINSZ + n * sizeof(*out)) {
		ret = -ENOSPC;
		goto out;
	}
	for (i = 0; i < n; i++) {
		group = iommu_group_get(&devs[i]->dev);
		/* As upstream: without a group it cannot be the user's. */
		if (!group) {
			ret = -EPERM;
			goto out;
		}
		out[i].group_id = iommu_group_id(group);
		iommu_group_put(group);
		out[i].segment = pci_domain_nr(devs[i]->bus);
		out[i].bus = devs[i]->bus->number;
		out[i].devfn = devs[i]->devfn;
	}
out:
	vfio_pci_hr_put_devs(devs, n);
	return ret;
}

/*
 * Devices no user has open may be runtime suspended (vfio_pci.c): out of
 * D3hot for the reset, which would otherwise take them to D0 behind the
 * PM core's back and leave them there, and back to idle after it.
 */
static int vfio_pci_hr_resume(struct vfio_peer *peers, unsigned int n)
{
	struct vfio_pci_device *v;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		v = peers[i].device_data;
		if (!v->idle_d3)
			continue;
		ret = pm_runtime_resume_and_get(&v->pdev->dev);
		if (ret < 0)
			goto undo;
	}
	return 0;
undo:
	while (i--) {
		v = peers[i].device_data;
		if (v->idle_d3)
			pm_runtime_put(&v->pdev->dev);
	}
	return ret;
}

static void vfio_pci_hr_suspend(struct vfio_peer *peers, unsigned int n)
{
	struct vfio_pci_device *v;
	unsigned int i;

	for (i = 0; i < n; i++) {
		v = peers[i].device_data;
		if (v->idle_d3)
			pm_runtime_put(&v->pdev->dev);
	}
}

/* How long contention on the devices' locks is retried: about 20 ms. */
#define VFIO_PCI_HR_TRIES	100

/*
 * Take every held device's lock (but @vdev's, which the caller holds) and
 * memory_lock for write, or none of them.
 */
static bool vfio_pci_hr_trylock(struct vfio_pci_device *vdev,
				struct vfio_peer *peers, unsigned int n)
{
	struct vfio_pci_device *v;
	unsigned int i;

	for (i = 0; i < n; i++) {
		v = peers[i].device_data;
		if (v != vdev && !mutex_trylock(&v->lock))
			goto undo;
		if (!down_write_trylock(&v->memory_lock)) {
			if (v != vdev)
				mutex_unlock(&v->lock);
			goto undo;
		}
	}
	return true;
undo:
	while (i--) {
		v = peers[i].device_data;
		up_write(&v->memory_lock);
		if (v != vdev)
			mutex_unlock(&v->lock);
	}
	return false;
}

static void vfio_pci_hr_unlock(struct vfio_pci_device *vdev,
			       struct vfio_peer *peers, unsigned int n)
{
	struct vfio_pci_device *v;
	unsigned int i;

	for (i = 0; i < n; i++) {
		v = peers[i].device_data;
		up_write(&v->memory_lock);
		if (v != vdev)
			mutex_unlock(&v->lock);
	}
}

/* With the devices held and locked: reset them, config space restored. */
static int vfio_pci_hr_do(struct vfio_pci_device *vdev,
			  struct vfio_peer *peers, unsigned int n)
{
	struct vfio_pci_device *v;
	unsigned int i;
	int ret;

	/*
	 * Decode goes off for the reset: no BAR access may reach any of
	 * the devices, through the user's mmaps either.  They fault back
	 * in once memory_lock is released and decode is restored.
	 */
	for (i = 0; i < n; i++) {
		v = peers[i].device_data;
		vfio_device_zap_mmaps(v->vfio);
	}
	/*
	 * Saves each device's config space, resets, restores it; it tries
	 * the devices' locks and answers -EAGAIN when one is held.
	 */
	for (i = 0; i < VFIO_PCI_HR_TRIES; i++) {
		ret = pci_reset_bus(vdev->pdev);
		if (ret != -EAGAIN)
			break;
		usleep_range(100, 200);
	}
	if (ret)
		return ret;
	/*
	 * Nothing of a previous owner is left in them now; the decode
	 * bits are what the restore put back.
	 */
	for (i = 0; i < n; i++) {
		v = peers[i].device_data;
		v->needs_reset = false;
		vfio_pci_decode_sync(v);
	}
	return 0;
}

static int vfio_pci_hot_reset(struct vfio_pci_device *vdev, const s32 *fds,
			      u32 count)
{
	struct vfio_peer *peers;
	struct pci_dev **devs;
	struct device **dev;
	int n, i, ret;

	n = vfio_pci_hr_devs(vdev->pdev, &devs);
	if (n < 0)
		return n;
	/* As upstream: more groups than devices cannot all matter. */
	ret = -EINVAL;
	if (!count || count > n)
		goto out_devs;

	ret = -ENOMEM;
	peers = kcalloc(n, sizeof(*peers), GFP_KERNEL);
	dev = kcalloc(n, sizeof(*dev), GFP_KERNEL);
	if (!peers || !dev)
		goto out_free;
	for (i = 0; i < n; i++)
		dev[i] = &devs[i]->dev;
	ret = vfio_peers_get(vdev->vfio, fds, count, dev, n, peers);
	if (ret)
		goto out_free;
	ret = vfio_pci_hr_resume(peers, n);
	if (ret)
		goto out_peers;

	mutex_lock(&vdev->lock);
	for (i = 0; i < VFIO_PCI_HR_TRIES; i++) {
		if (vfio_pci_hr_trylock(vdev, peers, n))
			break;
		usleep_range(100, 200);
	}
	if (i == VFIO_PCI_HR_TRIES) {
		ret = -EBUSY;
	} else {
		ret = vfio_pci_hr_do(vdev, peers, n);
		vfio_pci_hr_unlock(vdev, peers, n);
	}
	mutex_unlock(&vdev->lock);
	vfio_pci_hr_suspend(peers, n);
out_peers:
	vfio_peers_put(peers, n);
out_free:
	kfree(dev);
	kfree(peers);
out_devs:
	vfio_pci_hr_put_devs(devs, n);
	return ret;
}

/*
 * The devices a reset of this one affects, with their groups.  Too small
 * an argsz gets -ENOSPC with count set (the core copies the fixed part
 * back for it: see the ioctl tables), as upstream.
 */
long vfio_pci_ioctl_hot_reset_info(struct vfio_pci_device *vdev,
				   struct vfio_pci_hr_info *hdr, u32 *len)
{
	u32 count = 0;
	int ret;

	hdr->flags = 0;
	ret = vfio_pci_hot_reset_info(vdev, hdr->argsz, &count, hdr->devices);
	hdr->count = count;
	if (!ret)
		*len = VFIO_PCI_HR_MINSZ + count * sizeof(hdr->devices[0]);
	else
		*len = ret == -ENOSPC ? VFIO_PCI_HR_MINSZ : 0;
	return ret;
}

/* The group fds to copy in after the header, judged from it alone. */
u32 vfio_pci_hot_reset_datasz(const void *arg)
{
	const struct vfio_pci_hr_reset *hdr = arg;

	if (hdr->argsz < VFIO_PCI_HR_MINSZ || hdr->flags ||
	    hdr->count > VFIO_IOCTL_DATA_MAX / sizeof(s32) ||
	    hdr->argsz - VFIO_PCI_HR_MINSZ < hdr->count * sizeof(s32))
		return 0;
	return hdr->count * sizeof(s32);
}

/* Reset the slot or bus, given an fd of every group it touches. */
long vfio_pci_ioctl_hot_reset(struct vfio_pci_device *vdev,
			      struct vfio_pci_hr_reset *hdr, u32 *len)
{
	if (hdr->flags)
		return -EINVAL;
	if (hdr->argsz - VFIO_PCI_HR_MINSZ < (u64)hdr->count * sizeof(s32) ||
	    *len - VFIO_PCI_HR_MINSZ < (u64)hdr->count * sizeof(s32))
		return -EINVAL;
	*len = 0;
	return vfio_pci_hot_reset(vdev, hdr->group_fds, hdr->count);
}
