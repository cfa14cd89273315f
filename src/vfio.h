/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: the interface between the VFIO core (vfio.ko) and the bus
 * drivers that hand devices to it (vfio_pci.ko).
 */
#ifndef VFIO_DKMS_VFIO_H
#define VFIO_DKMS_VFIO_H

#include <linux/device.h>
#include <linux/fs.h>
#include <linux/mm.h>


/* Above the in-tree VFIO's "0.3", so that DKMS installs it in its place. */
#define VFIO_DKMS_VERSION	"1.0"

/*
 * The largest data part an ioctl may carry after its fixed part (MSI-X's
 * 2048 eventfds with room to spare); more gets -EINVAL.
 */
#define VFIO_IOCTL_DATA_MAX	(16 * 1024)

/**
 * struct vfio_ioctl_desc - how the core carries one device ioctl's argument
 * @cmd:    the ioctl number
 * @minsz:  the size of the argument's fixed part, which begins with a
 *          __u32 argsz; 0 when the ioctl takes no argument.  The core
 *          refuses an argsz below it with -EINVAL before the op runs.
 * @bufsz:  how much room the op may write its answer in (0: @minsz)
 * @datasz: for an argument whose fixed part is followed by data, how many
 *          bytes of data to copy in, judged from the fixed part alone
 *          (already copied): 0 when the fixed part asks for none or is
 *          invalid (the op refuses it then), else at most
 *          VFIO_IOCTL_DATA_MAX.  The op gets *len = @minsz + that.
 * @out_on_enospc: the op's answer (*len bytes) is copied back when it
 *          fails with -ENOSPC too: the size the user's buffer lacks, as
 *          GET_PCI_HOT_RESET_INFO tells it.  Otherwise only on success.
 *
 * The core copies exactly what the ioctl reads of the user's memory, and
 * writes back only what the op says it wrote: an argument reaches user
 * memory as it did when the ops copied it themselves.
 */
struct vfio_ioctl_desc {
	unsigned int	cmd;
	u32		minsz;
	u32		bufsz;
	u32		(*datasz)(const void *arg);
	bool		out_on_enospc;
};

/**
 * struct vfio_device_ops - what a bus driver does for its devices
 * @owner:   the bus driver's module (THIS_MODULE).  The core holds a
 *           reference on it from a device's first open to its last close,
 *           so that the module cannot be unloaded while a device fd (or
 *           an mmap, which holds one) can still reach these ops and the
 *           @ioctls tables: rmmod answers "in use", as upstream's does.
 * @match:   whether @buf names @dev (VFIO_GROUP_GET_DEVICE_FD): 1 when it
 *           does, 0 when not, or a -errno when it names @dev but the
 *           device may not be handed out with what else @buf says (a
 *           missing or wrong SR-IOV VF token: -EACCES).  Called with the
 *           core's vfio.lock held; the first -errno ends the search.
 * @open:    the first device fd is being created: enable the device
 * @release: the last device fd closed, or the device was revoked: quiesce
 *           it (bus master off, IRQs freed, reset, config restored).  No
 *           other op runs at the same time or afterwards until @open.
 * @read:    read(2)/pread(2) on a device fd: fill @buf (a kernel buffer)
 *           with @count bytes at *@ppos and advance *@ppos by what it
 *           returns, the bytes done (short at the end of a region)
 * @write:   write(2)/pwrite(2) on a device fd, from the kernel buffer @buf
 * @ioctl:   the seed ABI's VFIO_DEVICE_* ioctls (include/uapi/vfio.h), on a
 *           device fd from a /dev/vfio/<bus>:<id> group.  @arg is a kernel
 *           copy of the argument, *@len bytes as @ioctls describes it; on
 *           success the op sets *@len to how much of @arg the core copies
 *           back to the user (0: nothing).
 * @ioctls:  the ioctls @ioctl answers, ended by an entry with cmd 0
 * @container_ioctl: today's VFIO_DEVICE_* ioctls (the kernel's
 *           <uapi/linux/vfio.h>), on a device fd from a /dev/vfio/<id>
 *           group, as @ioctl.  The two ABIs give one ioctl number
 *           different meanings, so each front end calls only its own op.
 * @container_ioctls: the ioctls @container_ioctl answers, as @ioctls
 * @mmap:    check that @vma may map device memory (offset, size, flags)
 *           and set its vm_page_prot; return the page frame of its first
 *           page in @pfn.  Install nothing: the core maps the frames on
 *           fault and zaps them when it revokes the device.
 * @request: the host wants the device back; tell the user (may be called
 *           several times, @count says how often so far).  Optional.
 * @fault:   an mmap of @vma faulted at @vmf, whose frame is @pfn: insert it
 *           with vmf_insert_pfn() when the device may be accessed there
 *           now, else return VM_FAULT_SIGBUS.  Called with mmap_lock held
 *           (read), so it must not wait for anything that copies to or
 *           from user memory.  Optional: without it the core inserts @pfn.
 *
 * The core serialises @open and @release against everything else and
 * never calls any op after vfio_unregister_device() has returned.
 *
 * @read, @write and the ioctls never see user memory: the core copies it
 * outside the time it waits for when revoking.  It passes a request of up to 4 KiB
 * whole; a longer one comes in several calls of more than 8 bytes each,
 * cut at 8-byte aligned positions, so the driver can treat each call as
 * the whole request (an access of exactly 1, 2, 4 or 8 bytes is one the
 * user made).
 *
 * No op may sleep on the device lock (device_lock()/pci_dev_lock()): the
 * core revokes a device from inside the bus driver's remove, which holds
 * it, while waiting for ops in flight.  Reset with pci_try_reset_function()
 * or pci_dev_trylock() + __pci_reset_function_locked() and report -EAGAIN.
 */
struct vfio_device_ops {
	struct module	*owner;
	int	(*match)(struct device *dev, const char *buf);
	int	(*open)(void *device_data);
	void	(*release)(void *device_data);
	ssize_t	(*read)(void *device_data, char *buf, size_t count,
			loff_t *ppos);
	ssize_t	(*write)(void *device_data, const char *buf, size_t count,
			 loff_t *ppos);
	long	(*ioctl)(void *device_data, unsigned int cmd, void *arg,
			 u32 *len);
	const struct vfio_ioctl_desc *ioctls;
	long	(*container_ioctl)(void *device_data, unsigned int cmd, void *arg,
				u32 *len);
	const struct vfio_ioctl_desc *container_ioctls;
	int	(*mmap)(void *device_data, struct vm_area_struct *vma,
			unsigned long *pfn);
	void	(*request)(void *device_data, unsigned int count);
	vm_fault_t (*fault)(void *device_data, struct vm_fault *vmf,
			    unsigned long pfn);
};

struct vfio_device;

/*
 * vfio_register_device() - a bus driver bound @dev (from its probe).
 * Creates the group's char device when this is its first bound member.
 * Stores the core's handle of the device in *@handle before any op can
 * run; it stays valid until vfio_unregister_device() returns.
 * Returns 0, -ENODEV when @dev has no IOMMU group, or -ENOMEM.
 */
int vfio_register_device(struct device *dev, const struct vfio_device_ops *ops,
			 void *device_data, struct vfio_device **handle);

/*
 * vfio_device_zap_mmaps() - unmap every user mapping of the device's
 * memory.  Pages fault back in through @fault, which decides whether they
 * may.  Takes no lock of the core: callable under the bus driver's locks,
 * but not while copying to or from user memory is in progress in the
 * same thread (it takes the mappings' i_mmap_rwsem).
 */
void vfio_device_zap_mmaps(struct vfio_device *device);

/**
 * struct vfio_peer - another device of the same bus driver, held for a
 * while by an op of @caller (a bus or slot reset that touches it too)
 * @device_data: the peer's, as it was registered
 *
 * The rest is the core's: while held, the peer cannot be revoked, so its
 * bus driver's remove (which frees @device_data) waits until it is let go.
 */
struct vfio_peer {
	void			*device_data;
	struct vfio_device	*device;
	int			srcu_idx;
};

/*
 * vfio_peers_get() - from an op of @caller's device fd (with its ioctl's
 * kernel copy of the user's group fds, @fds[@nfds]), hold the registered
 * devices of @devs[@ndevs] in @peers[@ndevs], but only when the user owns
 * every one: each must be registered with @caller's ops and not leaving,
 * and in the group of one of @fds, which must be group fds (either ABI)
 * of groups in @caller's container or merged set.  A peer open through
 * another IOMMU object is another user's.  Returns 0, or -EBADF (an fd
 * that is no file), -EINVAL (an fd that is no group of @caller's user, a
 * device not ours or in none of the groups), -EBUSY (another user's),
 * -ENODEV (@caller is revoked).  No reference is kept on failure.
 * May sleep (vfio.lock); never waits for a device lock.
 */
int vfio_peers_get(struct vfio_device *caller, const s32 *fds,
		   unsigned int nfds, struct device *const *devs,
		   unsigned int ndevs, struct vfio_peer *peers);
/* vfio_peers_put() - let go of what vfio_peers_get() held. */
void vfio_peers_put(struct vfio_peer *peers, unsigned int ndevs);

/*
 * vfio_unregister_device() - the bus driver is unbinding @dev (from its
 * remove).  When a user holds the device, the core asks it to let go
 * (@request), waits a bounded time, then revokes: mmaps are zapped,
 * @release is called and later calls on the fds fail with -ENODEV.  It
 * never blocks for longer than the vfio module's release_timeout_ms.
 */
void vfio_unregister_device(struct device *dev);

/*
 * vfio_group_add_dev() / vfio_group_del_dev() - @dev appeared on or is
 * leaving the bus (the bus driver's notifier: BUS_NOTIFY_ADD_DEVICE and
 * BUS_NOTIFY_DEL_DEVICE).  vfio_group_add_dev() returns true when @dev
 * joined a group that a user holds: the bus driver must then claim the
 * device so that no host driver touches it.  With @hold, no IOMMU domain
 * is set on any group until vfio_group_removed_dev() (at
 * BUS_NOTIFY_REMOVED_DEVICE); @hold must be false while a driver of ours
 * is still bound to @dev, as its removal needs the core.  For a device
 * in no group of ours they take no lock that a VFIO user can hold.
 */
bool vfio_group_add_dev(struct device *dev);
void vfio_group_del_dev(struct device *dev, bool hold);
void vfio_group_removed_dev(struct device *dev);

#endif /* VFIO_DKMS_VFIO_H */
