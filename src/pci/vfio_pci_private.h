/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: state shared by the files of the PCI bus driver (vfio_pci.ko).
 *
 * Device fd layout: region N lives at offset N << VFIO_PCI_OFFSET_SHIFT.
 * 40 bits leave room for a 1 TiB BAR while the eight PCI regions still end
 * far below the largest loff_t, and the shift is fixed so that a user can
 * compute offsets without asking (they are also in REGION_INFO).
 *
 * Locking, outermost first (each field says what guards it):
 *   vfio_pci_device.lock         ioctls, config space, open-time state
 *   vfio_pci_vf_token_lock       (one mutex, vfio_pci.c) the SR-IOV VF
 *                                token state of every PF bound here;
 *                                taken under vfio.lock (match), open_lock
 *                                and lock (open, release), takes nothing
 *   vfio_pci_device.memory_lock  the device's memory and I/O decode
 *   vfio_pci_device.irqlock      INTx state, command register updates
 * The mmap fault handler runs under mmap_lock and takes memory_lock for
 * read, so mmap_lock comes before memory_lock: see memory_lock's rule.
 * A bus or slot reset (vfio_pci_hot_reset.c) holds several devices' lock
 * and memory_lock at once: its caller's lock it takes as every ioctl does,
 * every other one only by trylock, so no order between devices exists.
 */
#ifndef VFIO_PCI_PRIVATE_H
#define VFIO_PCI_PRIVATE_H

#include <linux/eventfd.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/poll.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/uuid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "../vfio.h"

#define VFIO_PCI_OFFSET_SHIFT	40
#define VFIO_PCI_OFFSET_MASK	((1ULL << VFIO_PCI_OFFSET_SHIFT) - 1)
#define VFIO_PCI_INDEX(off)	((u64)(off) >> VFIO_PCI_OFFSET_SHIFT)
#define VFIO_PCI_INDEX_TO_OFFSET(i)	((u64)(i) << VFIO_PCI_OFFSET_SHIFT)

#define VFIO_PCI_NUM_BARS	6

/*
 * Region 8 of the container ABI (the seed ABI has no such region): the
 * legacy VGA ranges a VGA device decodes besides its BARs, each at its
 * own address (vfio_pci_rdwr.c).
 */
#define VFIO_PCI_VGA_INDEX	8
#define VFIO_PCI_VGA_SIZE	0xc0000

/* What the device's interrupts are currently routed through. */
enum vfio_pci_irq_type {
	VFIO_PCI_IRQ_NONE,
	VFIO_PCI_IRQ_INTX,
	VFIO_PCI_IRQ_MSI,
	VFIO_PCI_IRQ_MSIX,
};

/* One MSI or MSI-X vector handed to the user. */
struct vfio_pci_vector {
	struct eventfd_ctx	*trigger;	/* NULL: left unconnected */
	int			irq;		/* Linux IRQ number */
	char			*name;		/* shown in /proc/interrupts */
};

/* The eventfd whose writes unmask INTx (SET_UNMASK_IRQ_EVENTFDS). */
struct vfio_pci_unmask {
	struct eventfd_ctx	*ctx;
	wait_queue_entry_t	wait;
	poll_table		pt;
	struct work_struct	work;
	struct vfio_pci_device	*vdev;
};

struct vfio_pci_device {
	struct pci_dev		*pdev;

	struct vfio_device	*vfio;		/* the core's handle; probe */

	/*
	 * Serialises the user's ioctls, config space accesses and ROM reads
	 * against each other, and protects the open-time state below
	 * (saved_state, the virtual config, irq_type, vectors, unmask).
	 * BAR read/write and mmap only use barmap, which is set up by open
	 * and torn down by release; the core never runs those concurrently
	 * with other ops, so they do not take it (only memory_lock).
	 */
	struct mutex		lock;

	/*
	 * The device's memory and I/O decode.  An access to a BAR whose
	 * decoder is off is an Unsupported Request that many platforms turn
	 * into a fatal error, so none may ever reach the device:
	 *  - write: while the command register's decode bits change (config
	 *    write), while the kernel itself turns memory decode on for a
	 *    moment (ROM read, MSI-X vector setup and teardown) and for the
	 *    whole of a reset.  A writer that may leave memory decode off
	 *    zaps the user's mmaps first, before decode goes.
	 *  - read: around each BAR access of read/write and in the mmap fault
	 *    handler; both check @decode under it and fail (-EIO, SIGBUS)
	 *    when the BAR is not decoded.
	 * Order: lock, then memory_lock, then irqlock; the fault handler
	 * holds mmap_lock when it takes memory_lock.  Hence never copy to or
	 * from user memory under memory_lock, in either mode: the copy may
	 * fault on the device's own mmap and wait for memory_lock again.
	 */
	struct rw_semaphore	memory_lock;

	/*
	 * memory_lock: the command register's decode bits (PCI_COMMAND_IO,
	 * PCI_COMMAND_MEMORY) as this driver last left them, so that the
	 * BAR access check reads no config space.  Written with lock and
	 * memory_lock (write) held: by open, by the user's command writes
	 * and after a reset (from the device's command register, which the
	 * reset restored).  Read under memory_lock in either mode, or under
	 * lock (config reads).  The kernel's own moments of memory decode
	 * (vfio_pci_memory_lock_and_enable) hold memory_lock for write and
	 * leave it alone.  For a device with pdev->no_command_memory (a VF:
	 * memory enable is hard-wired to 0 and its BARs are decoded as long
	 * as the PF says so) the memory bit is purely the user's.  A device
	 * that drops decode by itself (an internal reset) goes unnoticed,
	 * as it does by upstream's check, which reads its virtual copy too.
	 */
	u16			decode;

	/*
	 * Protects intx_masked, intx_trigger, err_trigger and req_trigger
	 * (their writers also hold lock), and makes the
	 * read-modify-write of the real command register atomic against
	 * the INTx handler, which flips its INTx-disable bit.  Taken in hard
	 * IRQ context.
	 */
	spinlock_t		irqlock;

	bool			enabled;	/* between open and release */
	bool			removing;	/* remove() holds the dev lock */
	bool			reset_works;
	/*
	 * lock: the device may hold a previous owner's programming: no
	 * reset since it was bound, or the reset at the last release
	 * failed.  The next open resets it, or fails with -EAGAIN.
	 */
	bool			needs_reset;
	bool			pci_2_3;	/* INTx masking via command */
	bool			msi_isolated;	/* interrupt remapping; probe */
	bool			idle_d3;	/* D3hot while not open; probe */
	bool			vga;		/* has region 8; probe */

	struct pci_saved_state	*saved_state;

	void __iomem		*barmap[VFIO_PCI_NUM_BARS];
	bool			bar_requested[VFIO_PCI_NUM_BARS];

	/* The real BAR registers at open, put back if the device loses them. */
	u32			rbar[VFIO_PCI_NUM_BARS];

	/* Where the MSI-X table is: read/write never reach it.  msix_bar -1: none. */
	int			msix_bar;
	u32			msix_offset;
	u32			msix_size;

	/*
	 * Virtual config space (vfio_pci_config_perm.h says which bits):
	 * the shadow of the header's dwords, what the user sees and last
	 * wrote, and which capability each dword of the space belongs to.
	 */
	u32			vconfig[PCI_STD_HEADER_SIZEOF / 4];
	u16			vcmd_intx;	/* user's INTx disable bit */
	u8			cfg_map[PCI_CFG_SPACE_EXP_SIZE / 4];

	enum vfio_pci_irq_type	irq_type;
	int			num_vectors;	/* MSI/MSI-X vectors in use */
	struct vfio_pci_vector	*vectors;
	bool			intx_masked;
	struct eventfd_ctx	*intx_trigger;
	char			*intx_name;
	struct vfio_pci_unmask	*unmask;
	struct eventfd_ctx	*err_trigger;	/* AER error_detected */
	struct eventfd_ctx	*req_trigger;	/* release request */

	/*
	 * SR-IOV VF tokens (vfio_pci.c: vfio_pci_check_vf_token()).  A PF
	 * (sriov_pf, set by probe) is on vfio_pci_pfs from probe to remove;
	 * vf_token is the UUID its VFs' users must name, vf_users how many
	 * of its VFs are open here.  vf_counted: this VF's open is counted
	 * in its PF's vf_users.  All three: vfio_pci_vf_token_lock.
	 */
	bool			sriov_pf;
	struct list_head	pf_next;
	uuid_t			vf_token;
	unsigned int		vf_users;
	bool			vf_counted;
};

/* The eventfds that are not device interrupts. */
enum vfio_pci_notify {
	VFIO_PCI_NOTIFY_ERR,
	VFIO_PCI_NOTIFY_REQ,
};

static inline bool vfio_pci_bar_is_mem(struct pci_dev *pdev, int bar)
{
	return pci_resource_flags(pdev, bar) & IORESOURCE_MEM;
}

static inline bool vfio_pci_bar_is_io(struct pci_dev *pdev, int bar)
{
	return pci_resource_flags(pdev, bar) & IORESOURCE_IO;
}

/* vfio_pci.c */
void vfio_pci_set_vf_token(struct vfio_pci_device *vdev, const uuid_t *uuid);
int vfio_pci_reset(struct vfio_pci_device *vdev);
bool vfio_pci_decodes(struct vfio_pci_device *vdev, bool io);
bool vfio_pci_bar_decoded(struct vfio_pci_device *vdev, int bar);
void vfio_pci_decode_sync(struct vfio_pci_device *vdev);
u16 vfio_pci_memory_lock_and_enable(struct vfio_pci_device *vdev);
void vfio_pci_memory_unlock_and_restore(struct vfio_pci_device *vdev,
					u16 cmd);

/* vfio_pci_config.c */
void vfio_pci_config_init(struct vfio_pci_device *vdev);
ssize_t vfio_pci_config_rw(struct vfio_pci_device *vdev, char *buf,
			   size_t count, loff_t pos, bool write);

/* vfio_pci_rdwr.c */
ssize_t vfio_pci_bar_rw(struct vfio_pci_device *vdev, char *buf,
			size_t count, loff_t pos, bool write);
ssize_t vfio_pci_rom_read(struct vfio_pci_device *vdev, char *buf,
			  size_t count, loff_t pos);
ssize_t vfio_pci_vga_rw(struct vfio_pci_device *vdev, char *buf,
			size_t count, loff_t pos, bool write);

/* vfio_pci_container_ioctl.c: the container ABI's device ioctls */
long vfio_pci_container_ioctl(void *device_data, unsigned int cmd, void *arg,
			   u32 *len);
extern const struct vfio_ioctl_desc vfio_pci_container_ioctls[];

/*
 * vfio_pci_hot_reset.c: bus and slot reset for both ABIs.  One device a
 * reset affects, laid out as both ABIs' struct vfio_pci_dependent_device
 * (each ABI's file checks that).
 */
struct vfio_pci_hr_dev {
	u32	group_id;
	u16	segment;
	u8	bus;
	u8	devfn;
};

/*
 * Both ABIs' hot reset arguments: argsz, flags, count, then the devices
 * (INFO) or the group fds (RESET).  Each ABI's file checks its structs
 * against these with VFIO_PCI_HR_LAYOUT(), so one handler serves both.
 */
struct vfio_pci_hr_info {
	u32			argsz;
	u32			flags;
	u32			count;
	struct vfio_pci_hr_dev	devices[];
};

struct vfio_pci_hr_reset {
	u32	argsz;
	u32	flags;
	u32	count;
	s32	group_fds[];
};

#define VFIO_PCI_HR_MINSZ	offsetof(struct vfio_pci_hr_info, devices)

#define VFIO_PCI_HR_LAYOUT(info, reset, dev)				\
	static_assert(sizeof(struct dev) ==				\
		      sizeof(struct vfio_pci_hr_dev) &&			\
		      offsetof(struct dev, segment) ==			\
		      offsetof(struct vfio_pci_hr_dev, segment) &&	\
		      offsetof(struct dev, bus) ==			\
		      offsetof(struct vfio_pci_hr_dev, bus) &&		\
		      offsetof(struct dev, devfn) ==			\
		      offsetof(struct vfio_pci_hr_dev, devfn) &&	\
		      offsetof(struct info, count) ==			\
		      offsetof(struct vfio_pci_hr_info, count) &&	\
		      offsetof(struct info, devices) == VFIO_PCI_HR_MINSZ && \
		      offsetof(struct reset, count) ==			\
		      offsetof(struct vfio_pci_hr_reset, count) &&	\
		      offsetof(struct reset, group_fds) ==		\
		      offsetof(struct vfio_pci_hr_reset, group_fds))

/* The most devices INFO reports, so that its answer fits the core's buffer. */
#define VFIO_PCI_HR_MAX_DEVS	(VFIO_IOCTL_DATA_MAX / sizeof(struct vfio_pci_hr_dev))

/*
 * The two ioctls as both ABIs' tables call them, on a struct
 * vfio_pci_hr_info or vfio_pci_hr_reset, and the length of RESET's
 * group fds judged from its header.
 */
long vfio_pci_ioctl_hot_reset_info(struct vfio_pci_device *vdev,
				   struct vfio_pci_hr_info *hdr, u32 *len);
u32 vfio_pci_hot_reset_datasz(const void *arg);
long vfio_pci_ioctl_hot_reset(struct vfio_pci_device *vdev,
			      struct vfio_pci_hr_reset *hdr, u32 *len);

/* vfio_pci_intrs.c: the IRQ type of either ABI's IRQ index; no lock. */
enum vfio_pci_irq_type vfio_pci_index_type(unsigned int index);

/*
 * vfio_pci_intrs.c.  The seed ABI's entry points take its IRQ indexes;
 * the others take an IRQ type and are what the container ABI's
 * VFIO_DEVICE_SET_IRQS (vfio_pci_container_ioctl.c) is built from.  All but the
 * signal functions want vdev->lock held.
 */
unsigned int vfio_pci_vec_count(struct vfio_pci_device *vdev,
				enum vfio_pci_irq_type type);
int vfio_pci_irq_set_triggers(struct vfio_pci_device *vdev,
			      enum vfio_pci_irq_type type, unsigned int start,
			      unsigned int count, const s32 *fds);
int vfio_pci_irq_fire(struct vfio_pci_device *vdev,
		      enum vfio_pci_irq_type type, unsigned int start,
		      unsigned int count, const u8 *bools);
void vfio_pci_irq_disable(struct vfio_pci_device *vdev,
			  enum vfio_pci_irq_type type);
int vfio_pci_intx_mask(struct vfio_pci_device *vdev);
int vfio_pci_intx_unmask_user(struct vfio_pci_device *vdev);
int vfio_pci_intx_set_unmask_fd(struct vfio_pci_device *vdev, s32 fd);
int vfio_pci_notify_set_fd(struct vfio_pci_device *vdev,
			   enum vfio_pci_notify which, s32 fd);
bool vfio_pci_notify_present(struct vfio_pci_device *vdev,
			     enum vfio_pci_notify which);
bool vfio_pci_notify_signal(struct vfio_pci_device *vdev,
			    enum vfio_pci_notify which);
int vfio_pci_irq_count(struct vfio_pci_device *vdev, unsigned int index);
int vfio_pci_set_irq_eventfds(struct vfio_pci_device *vdev,
			      unsigned int index, unsigned int count,
			      const s32 *fds);
int vfio_pci_set_unmask_eventfds(struct vfio_pci_device *vdev,
				 unsigned int index, unsigned int count,
				 const s32 *fds);
int vfio_pci_unmask_irq(struct vfio_pci_device *vdev, unsigned int index,
			unsigned int subindex);
void vfio_pci_irqs_disable_all(struct vfio_pci_device *vdev);
void vfio_pci_signal_request(struct vfio_pci_device *vdev);

#endif /* VFIO_PCI_PRIVATE_H */
