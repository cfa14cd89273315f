/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: objects shared by the core's files (groups, IOMMU objects,
 * devices).  Not seen by bus drivers.
 *
 * Locking, outermost first:
 *   vfio.lock              the topology: groups, their devices, which
 *                          IOMMU object each group uses, open counts,
 *                          domains
 *   vfio_device.open_lock  calls of the bus driver's open and release
 *   vfio_iommu.dma_lock    the DMA mappings of one IOMMU object
 *   vfio_removals_lock     (spinlock, vfio_iommu.c) the device deletions
 *                          in flight
 *
 * Device fd operations run inside vfio_device.srcu read sections, not
 * under a lock: they copy from user memory, which may fault on an mmap of
 * the device itself, with mmap_lock held.  Revoking sets @revoked, waits
 * for the read sections to end, then zaps the mappings.  read/write copy
 * user memory outside the sections, in bounded chunks, so that a user
 * page that never arrives cannot hold a revoke up.
 *
 * The mmap fault handler runs with mmap_lock held (read), inside a read
 * section, and calls the bus driver's @fault, which takes the bus
 * driver's own locks (vfio_pci: memory_lock, read).  So: mmap_lock, then
 * the bus driver's fault locks, then the mapping's i_mmap_rwsem (a zap).
 * A bus driver therefore never copies to or from user memory while it
 * holds a lock its @fault waits for.
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

/* struct vfio_resv - IOVAs [start, last] the groups' IOMMU keeps for itself */
struct vfio_resv {
	u64			start;
	u64			last;
};

/*
 * struct vfio_iommu - the IOMMU object shared by a (merged) set of groups
 *
 * It is "open" while @users > 0: then @domain exists, every group of the
 * set is attached to it with its DMA ownership claimed, and @mm is the
 * owning process.
 */
struct vfio_iommu {
	struct kref		kref;		/* groups, IOMMU fds, open devices */
	struct list_head	group_list;	/* vfio.lock */
	unsigned int		users;		/* vfio.lock: IOMMU + device fds */
	struct iommu_domain	*domain;	/* vfio.lock; stable while users */
	struct mm_struct	*mm;		/* vfio.lock; mmgrab()ed owner */
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
 */
struct vfio_group {
	struct iommu_group	*iommu_group;	/* referenced */
	int			id;		/* iommu_group_id() */
	int			minor;
	struct device		*dev;		/* /dev/vfio/<bus>:<id> */
	struct kobject		*devices_kobj;	/* links to the members */
	struct list_head	group_next;	/* vfio.group_list */
	struct list_head	iommu_next;	/* iommu->group_list */
	struct vfio_iommu	*iommu;		/* never NULL; vfio.lock */
	struct list_head	device_list;	/* vfio.lock: vfio_devices */
	unsigned int		opened;		/* vfio.lock: group fds */
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
	struct list_head		group_next;
	struct inode			*inode;	/* mapping of all its mmaps */
	unsigned int			open_count;	/* vfio.lock */
	struct vfio_iommu		*iommu;	/* vfio.lock; while open */
	wait_queue_head_t		release_wq;	/* open_count drops */

	struct srcu_struct		srcu;	/* see the top of the file */
	bool				revoked;	/* no more ops; srcu */
	struct mutex			open_lock;	/* ->open, ->release */
	bool				ops_open;	/* open_lock: ->open done */
};

/* vfio_iommu.c: the IOMMU fd and the domain's life */
extern const struct file_operations vfio_iommu_fops;
struct vfio_iommu *vfio_iommu_alloc(void);
void vfio_iommu_put(struct vfio_iommu *iommu);
int vfio_iommu_open(struct vfio_iommu *iommu);
void vfio_iommu_close(struct vfio_iommu *iommu);
int vfio_iommu_attach_group(struct vfio_iommu *iommu,
			    struct vfio_group *group);
void vfio_iommu_detach_group(struct vfio_iommu *iommu,
			     struct vfio_group *group);
void vfio_iommu_user_put(struct vfio_iommu *iommu);
int vfio_iommu_resv_update(struct vfio_iommu *iommu,
			   struct vfio_group *extra);
void vfio_iommu_removal_begin(struct device *dev);
void vfio_iommu_removal_end(struct device *dev);
void vfio_iommu_removals_exit(void);

/* vfio_main.c */
bool vfio_group_viable(struct vfio_group *group);
void vfio_iommu_dissolve(struct vfio_iommu *iommu);
extern struct mutex vfio_lock;

/* vfio_dma.c: DMA mappings of one IOMMU object */
void vfio_dma_init(struct vfio_iommu *iommu);
int vfio_dma_map(struct vfio_iommu *iommu, u64 vaddr, u64 iova, u64 size,
		 int prot);
int vfio_dma_unmap(struct vfio_iommu *iommu, u64 iova, u64 size);
void vfio_dma_unmap_all(struct vfio_iommu *iommu);
int vfio_dma_set_resv(struct vfio_iommu *iommu, struct vfio_resv *resv,
		      unsigned int nr);

#endif /* VFIO_DKMS_PRIVATE_H */
