/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: objects shared by the core's files (groups, IOMMU objects,
 * devices).  Not seen by bus drivers.
 *
 * Locking of both modules, outermost first (each field names its lock):
 *   device_lock(dev)       the driver core, around the bus driver's probe
 *                          and remove; vfio_unregister_device() runs
 *                          under it, so no op may wait for it
 *   vfio.lock              the topology: groups, their devices, which
 *                          IOMMU object each group uses, open counts,
 *                          domains, containers' types.  Attach and detach
 *                          wait under it for device deletions in flight
 *                          (vfio_iommu.c), which take nothing of ours
 *                          until they end
 *   vfio_device.open_lock  calls of the bus driver's open and release
 *   vfio_pci_device.lock   (vfio_pci) ioctls, config space, open state
 *   vfio_pci_vf_token_lock (vfio_pci) PFs' SR-IOV VF tokens; under
 *                          vfio.lock in the bus driver's match
 *   vfio_pci_device.memory_lock  (vfio_pci, rwsem) BAR decode
 *   vfio_iommu.dma_lock    the DMA mappings of one IOMMU object, and
 *                          its domain's attach and detach against them.
 *                          Never held while user memory is pinned or
 *                          faulted in: that may wait for good (FUSE,
 *                          userfaultfd), and vfio.lock waits for it
 *   vfio_pci_device.irqlock, vfio_removals_lock  (spinlocks, innermost)
 *
 * Nothing that takes long runs under vfio.lock on a user's behalf: an
 * IOMMU object's last close detaches its groups under it, but leaves the
 * unpinning (up to all of the owner's memory) to vfio_unlock(), which
 * the closing task calls and which does it after the mutex is released;
 * a device's last close resets it with the lock dropped (vfio_device.c).
 *
 * The type1 and seed IOMMU ioctls map and unmap under dma_lock only:
 * they hold a user of the IOMMU object, which keeps its domain: the seed
 * IOMMU fd is one, a container's ioctls share the one its SET_IOMMU took
 * (vfio_iommu.type1_users) without taking vfio.lock.
 *
 * Device fd operations run inside vfio_device.srcu read sections, not
 * under a lock: they copy from user memory, which may fault on an mmap of
 * the device itself, with mmap_lock held.  Revoking sets @revoked, waits
 * for the read sections to end, then zaps the mappings.  read/write copy
 * user memory outside the sections, in bounded chunks, so that a user
 * page that never arrives cannot hold a revoke up.
 *
 * vfio_peers_get() enters other devices' read sections (under vfio.lock:
 * entering never waits) for a bus driver op that resets them too, and
 * vfio_peers_put() leaves them: a revoke of one of them waits for that
 * op, which takes no lock the revoking remove() holds (vfio.h).
 *
 * The mmap fault handler runs with mmap_lock held (read), inside a read
 * section, and calls the bus driver's @fault, which takes the bus
 * driver's own locks (vfio_pci: memory_lock, read).  So: mmap_lock, then
 * the bus driver's fault locks, then the mapping's i_mmap_rwsem (a zap).
 * A bus driver therefore never copies to or from user memory while it
 * holds a lock its @fault waits for.
 *
 * Peer-to-peer mappings: a MAP_DMA of a user range that is an mmap of
 * one of our device fds maps that device's BAR (vfio_dma.c).  Nothing is
 * pinned and no reference is kept on the device: the mapping is of bus
 * addresses that are ours only while the device is bound to its vfio bus
 * driver.  So it cannot outlive that binding: vfio_unregister_device(),
 * after the revoke, removes every mapping of the device's BARs from every
 * open IOMMU object (vfio_group_drop_dma(), under vfio.lock, then each
 * object's dma_lock), without waiting for any user, so an unbind or a hot
 * removal is never held up by it.  The mapping goes in inside the
 * device's SRCU read section, after a check that it is not revoked, so
 * the revoke's synchronize_srcu() orders every such insert before that
 * sweep.  A release of the last device fd leaves the mappings, as the
 * kernel's type1 does: the BAR is still the device's, and still ours.
 * The mapping's device pointer (vfio_dma.p2p) is compared, never
 * dereferenced.
 *
 * Module references: every file of ours names THIS_MODULE as its owner,
 * so vfio.ko stays while any fd (and so any mmap or IOMMU object a user
 * reaches through one) is open.  A device's first open takes a reference
 * on its bus driver's module (vfio_device_ops.owner) and its last close
 * drops it, as upstream's VFIO does: a revoked device's fds still read
 * the bus driver's ioctl tables before they fail with -ENODEV, so making
 * every path after a revoke independent of the bus driver would mean a
 * second copy of them.  rmmod of a bus driver with a device open answers
 * "in use"; unbinding the device (sysfs, a hot removal) still revokes it
 * after release_timeout_ms.
 */
#ifndef VFIO_DKMS_PRIVATE_H
#define VFIO_DKMS_PRIVATE_H

#include <linux/iommu.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/srcu.h>
#include <linux/wait.h>

#include "vfio.h"
#include "vfio_range.h"

/*
 * struct vfio_dma_remains - what a closed IOMMU object leaves to undo:
 * its mappings, the domain they are in, and the owner they are charged
 * to.  The domain is attached to no group any more, so no device reaches
 * the pages, and the object itself may already be open again with a
 * domain of its own.  Allocated at open, so that closing cannot fail.
 */
struct vfio_dma_remains {
	struct list_head	next;	/* vfio.lock: until it is reaped */
	struct rb_root_cached	tree;
	struct iommu_domain	*domain;
	struct mm_struct	*mm;	/* mmgrab()ed */
};

/*
 * struct vfio_iommu - the IOMMU object shared by a set of groups
 *
 * The seed ABI's groups each start in a set of their own and join others
 * by merging; an open of /dev/vfio/vfio makes an empty set, a container,
 * that groups of the container ABI join by SET_CONTAINER.  It is "open"
 * while @users > 0: then @domain exists, every group of the set is
 * attached to it with its DMA ownership claimed, and @mm is the owning
 * process.  A container is open from SET_IOMMU until its last group
 * leaves.
 */
struct vfio_iommu {
	struct kref		kref;		/* groups, IOMMU fds, open devices */
	struct list_head	group_list;	/* vfio.lock */
	/* vfio.lock: IOMMU and device fds, a container's SET_IOMMU */
	unsigned int		users;
	bool			container;	/* const: /dev/vfio/vfio's */
	/* vfio.lock: a container's VFIO_TYPE1*_IOMMU, 0 before SET_IOMMU */
	u32			type;
	/*
	 * A container's SET_IOMMU and its type1 ioctls in flight, which
	 * hold one user between them, so that map and unmap need not take
	 * vfio.lock.  Raised from zero and the user taken under vfio.lock;
	 * whoever drops it to zero puts the user under vfio.lock.
	 */
	atomic_t		type1_users;
	struct iommu_domain	*domain;	/* vfio.lock; stable while users */
	struct mm_struct	*mm;		/* vfio.lock; mmgrab()ed owner */
	/* vfio.lock; while open: where closing puts the mappings */
	struct vfio_dma_remains	*remains;
	int			prot;		/* extra IOMMU_* prot (CACHE) */

	struct mutex		dma_lock;	/* everything below */
	struct rb_root_cached	dma_tree;	/* struct vfio_dma by IOVA */
	unsigned int		dma_count;	/* nodes in dma_tree */
	struct vfio_resv	*resv;		/* also vfio.lock to replace */
	unsigned int		nr_resv;	/* entries of @resv */
};

/*
 * struct vfio_group - one IOMMU group with a device bound to a vfio driver
 *
 * Once its last device is unregistered it is @dead: detached, out of its
 * set (but holding its reference on @iommu), off vfio.group_list, without
 * a node, and kept only until its last fd is closed.
 *
 * A group is used through one ABI at a time: its seed node cannot be
 * opened while its container node is, and the container node only while
 * nothing of the seed ABI holds the group (no seed fd of it, nothing
 * open in its set, not merged).
 */
struct vfio_group {
	struct iommu_group	*iommu_group;	/* referenced */
	int			id;		/* iommu_group_id() */
	int			minor;
	struct device		*dev;		/* /dev/vfio/<bus>:<id> */
	struct device		*node_dev;	/* /dev/vfio/<id> */
	struct kobject		*devices_kobj;	/* links to the members */
	struct list_head	group_next;	/* vfio.group_list */
	struct list_head	iommu_next;	/* iommu->group_list */
	struct vfio_iommu	*iommu;		/* never NULL; vfio.lock */
	struct list_head	device_list;	/* vfio.lock: vfio_devices */
	unsigned int		opened;		/* vfio.lock: seed group fds */
	bool			node_open;	/* vfio.lock: <id> node open */
	bool			attached;	/* vfio.lock: in iommu->domain */
	bool			dead;		/* vfio.lock: see above */
};

/* struct vfio_device - a device a bus driver registered */
struct vfio_device {
	struct kref			kref;	/* registration + open fds */
	struct device			*dev;	/* referenced */
	const struct vfio_device_ops	*ops;
	void				*device_data;
	struct vfio_group		*group;	/* vfio.lock; NULL once gone */
	struct list_head		group_next;	/* vfio.lock */
	/*
	 * vfio.lock: being unregistered.  It stays on its group's list,
	 * keeping the group (and its IOMMU domain) until it is revoked, but
	 * GET_DEVICE_FD no longer finds it.
	 */
	bool				leaving;
	struct inode			*inode;	/* mapping of all its mmaps */
	unsigned int			open_count;	/* vfio.lock */
	bool				closing;	/* vfio.lock: last fd's release */
	struct vfio_iommu		*iommu;	/* vfio.lock; while open */
	/* vfio.lock: the /dev/vfio/<id> file its fds hold; NULL: seed */
	struct file			*group_file;
	wait_queue_head_t		release_wq;	/* open_count drops */

	struct srcu_struct		srcu;	/* see the top of the file */
	bool				revoked;	/* no more ops; srcu */
	struct mutex			open_lock;	/* ->open, ->release */
	bool				ops_open;	/* open_lock: ->open done */
};

extern struct mutex vfio_lock;
void vfio_unlock(void);

/* vfio_group.c: the group object and its nodes */
int vfio_group_init(void);
void vfio_group_exit(void);
bool vfio_group_viable(struct vfio_group *group);
int vfio_group_open(struct inode *inode, struct file *filep,
		    int (*claim)(struct vfio_group *group));
struct vfio_device *vfio_group_match_device(struct vfio_group *group,
					    const char *name);
bool vfio_group_devices_open(struct vfio_group *group);
int vfio_group_get_device_fd(struct vfio_group *group, void __user *uarg,
			     struct vfio_device *(*find)(struct vfio_group *group,
							 const char *name),
			     struct file *group_file);
struct vfio_device *vfio_device_find(struct device *dev);
int vfio_group_add_device(struct vfio_device *device,
			  struct iommu_group *iommu_group);
void vfio_group_maybe_free(struct vfio_group *group);
void vfio_group_drop_dma(struct vfio_device *device);

/* vfio_device.c: the device object and its fds */
int vfio_device_new_fd(struct vfio_device *device, struct vfio_iommu *iommu,
		       struct file *group_file);
int vfio_device_dma_get(u64 vaddr, u64 size, int prot,
			struct vfio_device **devp, unsigned long *pfn);
bool vfio_device_dma_enter(struct vfio_device *device, int *idx);
void vfio_device_dma_exit(struct vfio_device *device, int idx);
void vfio_device_dma_put(struct vfio_device *device);

/* vfio_iommu.c: the IOMMU object: its sets of groups, its domain's life */
struct vfio_iommu *vfio_iommu_alloc(gfp_t gfp);
void vfio_iommu_put(struct vfio_iommu *iommu);
bool vfio_set_viable(struct vfio_iommu *iommu);
void vfio_group_set_iommu(struct vfio_group *group, struct vfio_iommu *iommu);
int vfio_iommu_user_get(struct vfio_iommu *iommu);
void vfio_iommu_user_put(struct vfio_iommu *iommu);
void vfio_iommu_dissolve(struct vfio_iommu *iommu);
int vfio_iommu_open(struct vfio_iommu *iommu);
void vfio_iommu_close(struct vfio_iommu *iommu);
int vfio_iommu_attach_group(struct vfio_iommu *iommu,
			    struct vfio_group *group);
void vfio_iommu_detach_group(struct vfio_iommu *iommu,
			     struct vfio_group *group);
int vfio_iommu_resv_update(struct vfio_iommu *iommu,
			   struct vfio_group *extra);
void vfio_iommu_removal_begin(struct device *dev);
void vfio_iommu_removal_end(struct device *dev);
void vfio_iommu_removals_exit(void);

/* vfio_seed_group.c, vfio_seed_iommu.c: the seed ABI's fds */
extern const struct file_operations vfio_seed_group_fops;
extern const struct file_operations vfio_iommu_fops;

/* vfio_container.c: /dev/vfio/vfio and the type1 IOMMU on it */
int vfio_container_init(void);
void vfio_container_exit(void);
bool vfio_file_is_container(struct file *file);
void vfio_container_group_gone(struct vfio_iommu *iommu);

/* vfio_container_group.c: /dev/vfio/<id> */
extern const struct file_operations vfio_container_group_fops;

/* vfio_dma.c: DMA mappings of one IOMMU object */
void vfio_dma_init(struct vfio_iommu *iommu);
int vfio_dma_map_prot(u32 flags);
int vfio_dma_map(struct vfio_iommu *iommu, u64 vaddr, u64 iova, u64 size,
		 int prot);
int vfio_dma_unmap(struct vfio_iommu *iommu, u64 iova, u64 size,
		   bool whole, u64 *unmapped);
u64 vfio_dma_unmap_all(struct vfio_iommu *iommu);
void vfio_dma_drop_device(struct vfio_iommu *iommu,
			  struct vfio_device *device);
struct vfio_dma_remains *vfio_dma_remains_alloc(void);
void vfio_dma_bury(struct vfio_iommu *iommu, struct vfio_dma_remains *rem);
void vfio_dma_reap(struct vfio_dma_remains *rem);
u32 vfio_dma_avail(struct vfio_iommu *iommu);
unsigned int vfio_dma_iova_ranges(struct vfio_iommu *iommu,
				  struct vfio_resv *out, unsigned int max);
int vfio_dma_set_resv(struct vfio_iommu *iommu, struct vfio_resv *resv,
		      unsigned int nr);

#endif /* VFIO_DKMS_PRIVATE_H */
