/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vtsys: helpers shared by every guest test program (tests/guest/t-*.c)
 * that depend on neither VFIO ABI: sysfs, binding, the edu device's
 * registers through a device fd, pinned-page counters, processes and the
 * host.  Seed-ABI programs get them through vtlib.h, today's-ABI programs
 * through vtcontainer.h.
 *
 * Conventions: every function returns >= 0 on success and -1 with errno
 * set on failure, so that it can be wrapped in VT_OK()/VT_ERRNO().  Device
 * names are PCI addresses as sysfs spells them ("0000:00:02.0").  Nothing
 * here prints vt lines; callers decide what a failure means (the one
 * check macro, VT_CHECK_ACCT, expands in the calling case).
 */
#ifndef VTSYS_H
#define VTSYS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct vt;

#define VT_DEV_NAME_LEN	16		/* "0000:00:02.0" + NUL, rounded */

/* A page of the guest: the unit of DMA maps, pins and BAR mmaps. */
#define PG		4096UL

/* The devices the harness gives every program (see tests/vm/README). */
#define VT_EDU_VENDOR		0x1234
#define VT_EDU_DEVICE		0x11e8
#define VT_TESTDEV_VENDOR	0x1b36
#define VT_TESTDEV_DEVICE	0x0005
#define VT_EDU0			"0000:00:02.0"
#define VT_EDU1			"0000:00:03.0"
#define VT_TESTDEV0		"0000:00:04.0"
/* edu2, alone behind a root port: it has a bus reset and a hotplug slot. */
#define VT_EDU2			"0000:01:00.0"
#define VT_USER_UID		1000	/* the non-root user of the guest */
#define VT_USER_GID		1000

/* ---- sysfs ------------------------------------------------------------ */

/* Read a sysfs (or any) file into buf, NUL-terminated, trailing newline
 * stripped.  Returns the length. */
int vt_read_file(const char *path, char *buf, size_t len);

/* Write the string s to path in one write(2), as `echo -n s > path`. */
int vt_write_file(const char *path, const char *s);

/* Wait up to timeout_ms for path to exist (want != 0) or to be gone. */
int vt_wait_path(const char *path, int want, int timeout_ms);

/* ---- finding and binding devices -------------------------------------- */

/*
 * Name of the nth (0-based, in address order) PCI device with this
 * vendor:device, into name (VT_DEV_NAME_LEN bytes).  When drv is not NULL
 * only devices bound to that driver count ("" = bound to none).  -1/ENODEV
 * when there is no such device.
 */
int vt_find_device(unsigned int vendor, unsigned int device, const char *drv,
		   int nth, char *name);

/* The driver dev is bound to, into drv (len bytes); "" when none. */
int vt_device_driver(const char *dev, char *drv, size_t len);

/* Wait up to timeout_ms for dev to be bound to driver; -1/ETIMEDOUT. */
int vt_wait_driver(const char *dev, const char *driver, int timeout_ms);

/* Unbind dev from its driver (no-op when it has none). */
int vt_unbind(const char *dev);

/*
 * Bind dev to driver (e.g. "vfio", "pci-stub") through driver_override,
 * unbinding it from its current driver first, and wait until it is bound.
 * driver_override is cleared again afterwards, so that the device state
 * is what /init left (new_id based binding).
 */
int vt_bind(const char *dev, const char *driver);

/* vt_bind(dev, "vfio"). */
int vt_bind_vfio(const char *dev);

/* Is module name (as in /sys/module) loaded?  1 or 0. */
int vt_module_loaded(const char *name);

/*
 * vfio_pci loaded again (unless it is) with the parameters /init gave it,
 * without a fork, and the test devices' IDs added to its new_id as /init
 * does, which binds the unbound ones.
 */
int vt_vfio_pci_reload(void);

/* The same, with @extra (NULL: none) after /init's parameters. */
int vt_vfio_pci_load(const char *extra);

/* ---- groups ----------------------------------------------------------- */

/* IOMMU group number of dev (from /sys/bus/pci/devices/<dev>/iommu_group). */
int vt_group_id(const char *dev);

/* Wait up to timeout_ms for an eventfd to fire; the counter read into
 * *value (may be NULL).  -1/ETIMEDOUT when it did not fire. */
int vt_wait_eventfd(int efd, int timeout_ms, uint64_t *value);

/*
 * How long to wait for an interrupt that should come, and how long to
 * watch for one that should not: TCG is slow, but a missing interrupt
 * must not hold a case up for long.
 */
#define VT_IRQ_WAIT_MS		3000
#define VT_IRQ_QUIET_MS		300

/* Did the eventfd fire within ms?  1 or 0; a firing consumes the count. */
int vt_fired(int efd, int ms);

/* ---- the edu device (QEMU docs/specs/edu.rst) ------------------------ */

#define VT_EDU_BAR_SIZE		(1UL << 20)	/* BAR0 */

/* BAR0 registers */
#define VT_EDU_ID		0x00	/* 0xRRrr00ed */
#define VT_EDU_ID_VALUE		0x010000ed	/* QEMU 7.2's: 1.0 */
#define VT_EDU_LIVE		0x04	/* reads back inverted */
#define VT_EDU_FACT		0x08
#define VT_EDU_STATUS		0x20
#define VT_EDU_STATUS_BUSY	0x01
#define VT_EDU_IRQ_STATUS	0x24
#define VT_EDU_IRQ_RAISE	0x60
#define VT_EDU_IRQ_ACK		0x64
#define VT_EDU_DMA_SRC		0x80
#define VT_EDU_DMA_DST		0x88
#define VT_EDU_DMA_CNT		0x90
#define VT_EDU_DMA_CMD		0x98
#define VT_EDU_DMA_RUN		0x1
#define VT_EDU_DMA_TO_RAM	0x2	/* edu buffer -> PCI bus */
#define VT_EDU_BUF		0x40000	/* its 4 KiB buffer */
/*
 * QEMU 7.2's edu aborts the VM on a transfer that reaches the last byte
 * of its buffer and masks DMA addresses to 28 bits.
 */
#define VT_EDU_DMA_MAX		4095
#define VT_EDU_DMA_WAIT_MS	5000

/*
 * Config space (any device's, <linux/pci_regs.h> under shorter names):
 * the header, then the MSI capability's offsets from its position.
 */
#define VT_PCI_VENDOR		0x00
#define VT_PCI_COMMAND		0x04
#define VT_PCI_COMMAND_IO	0x0001
#define VT_PCI_COMMAND_MEMORY	0x0002
#define VT_PCI_COMMAND_MASTER	0x0004
#define VT_PCI_COMMAND_PARITY	0x0040
#define VT_PCI_COMMAND_SERR	0x0100
#define VT_PCI_COMMAND_INTX_OFF	0x0400
#define VT_PCI_STATUS		0x06
#define VT_PCI_STATUS_INTX	0x0008
#define VT_PCI_STATUS_CAP_LIST	0x0010
#define VT_PCI_CACHELINE	0x0c
#define VT_PCI_HEADER		0x0e
#define VT_PCI_BAR0		0x10
#define VT_PCI_BAR1		0x14
#define VT_PCI_ROM		0x30
#define VT_PCI_CAP_PTR		0x34
#define VT_PCI_INT_LINE		0x3c
#define VT_PCI_INT_PIN		0x3d
#define VT_PCI_CAP_ID_MSI	0x05
#define VT_PCI_CAP_ID_VNDR	0x09
#define VT_PCI_MSI_FLAGS	2
#define VT_PCI_MSI_ADDR_LO	4
#define VT_PCI_MSI_ENABLE	0x0001

/* BAR0 of an edu through its device fd. */
struct vt_edu {
	int device_fd;
	uint64_t bar0;		/* BAR0's offset in the device fd */
	uint64_t bar0_size;
	uint32_t id;		/* ID register, read by vt[m]_edu_init() */
};

/* One 32-bit register of BAR0. */
int vt_edu_read(const struct vt_edu *e, uint32_t reg, uint32_t *v);
int vt_edu_write(const struct vt_edu *e, uint32_t reg, uint32_t v);

/*
 * One DMA transfer of len bytes (at most VT_EDU_DMA_MAX, else -1/EINVAL)
 * between the start of edu's buffer and iova: from iova into the buffer,
 * or with to_ram from the buffer to iova.  Waits VT_EDU_DMA_WAIT_MS for
 * the engine to finish, -1/ETIMEDOUT when it did not.
 */
int vt_edu_dma(const struct vt_edu *e, int to_ram, uint64_t iova,
	       uint32_t len);

/*
 * The device's real config space, len (1, 2 or 4) bytes at off, read or
 * written through sysfs behind vfio's back (as root).  A failed access
 * fails the case.
 */
uint32_t vt_real_cfg(struct vt *t, const char *dev, uint32_t off,
		     size_t len);
void vt_real_cfg_wr(struct vt *t, const char *dev, uint32_t off,
		    size_t len, uint32_t v);

/* Size of dev's sysfs config file (what config space it has); a failed
 * stat fails the case. */
off_t vt_sysfs_config_size(struct vt *t, const char *dev);

/* Does the kernel know a reset method for dev (sysfs reset_method)?
 * 1 or 0. */
int vt_has_reset(const char *dev);

/*
 * Let the device decode memory and master the bus: PCI_COMMAND of the
 * config space found at cfg_off in device_fd, checked by reading it
 * back: -1/EIO when the bits did not stick.
 */
int vt_enable_master_at(int device_fd, uint64_t cfg_off);

/*
 * 1 when reading *p raises SIGBUS (a revoked or zapped mapping), 0 when
 * it reads something.  The SIGBUS handler is restored afterwards.
 */
int vt_read_faults(volatile uint32_t *p);

/*
 * Is there a line in /proc/interrupts naming action?  1 or 0; -1 when
 * the file cannot be read.
 */
int vt_irq_listed(const char *action);

/* First index i < len where p[i] is not v, or -1: what DMA changed. */
long vt_fill_diff(const uint8_t *p, size_t len, uint8_t v);

/* ---- pinned page accounting ------------------------------------------- */

/*
 * /proc/vmstat nr_foll_pin_acquired and nr_foll_pin_released.  Their
 * difference is the number of pages pinned with FOLL_PIN right now in the
 * whole guest, so take a snapshot before and compare after.  The per-cpu
 * deltas are folded first (vm/stat_refresh), so the count is exact.  Only
 * root may do that: a vt_child_run() child that is not root asks its
 * parent to read them; elsewhere a non-root caller gets -1/EACCES.
 */
struct vt_pins {
	long acquired;
	long released;
};
int vt_read_pins(struct vt_pins *p);

/* acquired - released, or -1 on error. */
long vt_pinned_now(void);

/*
 * Whether the page frame behind @addr (present, of this process) has
 * PG_dirty set: 1 or 0, from /proc/self/pagemap and /proc/kpageflags;
 * -1 with errno when it cannot be read (not root, not present).  An
 * anonymous page written by the CPU alone is not PG_dirty (its PTE is);
 * an unpin that says the device may have written it makes it so.
 */
int vt_page_dirty(const void *addr);

/* VmLck of the process pid (0 = self) in KiB, from /proc/<pid>/status. */
long vt_locked_kb(pid_t pid);

/*
 * What MAP_DMA moves, taken at a start point: the pinned pages
 * (vt_pinned_now()) and this process's VmLck.
 */
struct vt_acct {
	long pins;
	long kb;
};

/*
 * Fail the calling case (a check, like VT_CHECKF) unless pinned pages
 * and VmLck are both `pages` 4 KiB pages above the start in *a.
 */
#define VT_CHECK_ACCT(t, a, pages) do {					\
	long __p = vt_pinned_now(), __k = vt_locked_kb(0);		\
	long __want = (long)(pages);					\
	VT_CHECKF((t), __p == (a)->pins + __want,			\
		  "%ld pages pinned, want %ld + %ld", __p, (a)->pins,	\
		  __want);						\
	VT_CHECKF((t), __k == (a)->kb + __want * 4,			\
		  "VmLck %ld kB, want %ld + %ld", __k, (a)->kb,		\
		  __want * 4);						\
} while (0)

/* ---- processes and the host ------------------------------------------- */

/*
 * Run fn(arg) in a forked child as uid/gid (after setgroups(0), setgid,
 * setuid; uid -1 keeps root).  Returns fn's return value as passed
 * through exit(): 0..255, or 128 + signal when the child was killed, or
 * -1 when fork/wait failed.  stdout is flushed before forking.
 */
int vt_run_as(uid_t uid, gid_t gid, int (*fn)(void *arg), void *arg);

/*
 * Run fn(ct, arg) in a forked child under a vt of its own (case name
 * name), after prep(ct, arg) when prep is not NULL, and as uid/gid when
 * uid is not -1 (setgroups(0), setgid, setuid).  The child's vt lines go
 * to a pipe, not the console.  The parent stays root and answers the
 * child's vt_read_pins() calls meanwhile.  Returns 0 when fn passed; -1 otherwise,
 * with the child's failure text (or why it could not run) in msg.
 */
typedef void (*vt_child_fn)(struct vt *t, void *arg);
int vt_child_run(uid_t uid, gid_t gid, vt_child_fn prep, vt_child_fn fn,
		 void *arg, const char *name, char *msg, size_t msglen);

/*
 * Ask the host harness to run a QEMU monitor command (printed as a
 * "VT-HOST <cmd>" line).  The host gives no answer: poll for the effect
 * with a bound (vt_wait_path()).
 */
void vt_host(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Plug edu2 back into its hotplug slot (QEMU device_add) after a
 * device_del, and wait up to timeout_ms for its sysfs directory path.
 * -1/ETIMEDOUT when it did not come.
 */
int vt_plug_edu2(const char *path, int timeout_ms);

/* ---- SR-IOV: the sriov machine's NVMe PF (tests/vm/machines.toml) ---- */

#define VT_NVME_VENDOR		0x1b36
#define VT_NVME_DEVICE		0x0010
#define VT_NVME_PF		"0000:02:00.0"
#define VT_NVME_VF0		"0000:02:00.1"

/* Write n to pf's sriov_numvfs (0 removes its VFs). */
int vt_sriov_numvfs(const char *pf, int n);

/* Set vfio_pci's enable_sriov parameter (0 or 1). */
int vt_vfio_enable_sriov(int on);

/*
 * One VF of pf that answers: pf bound to the guest's nvme driver (loaded
 * here), its VF 0 created unbound, given the flexible queue and interrupt
 * resources a QEMU VF needs and set online through the PF's admin queue
 * (NVMe Virtualization Management): until then QEMU's VF reads 0 at
 * every register.  The VF is left unbound.  On failure, why in msg.
 */
int vt_nvme_vf_online(const char *pf, char *msg, size_t msglen);

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t vt_now_ms(void);

/*
 * A close(2) run in a thread of its own, for cases that do something
 * else while a slow last close is under way: fd is closed, start_ms and
 * end_ms (vt_now_ms()) say when the close began and returned.
 */
struct vt_closer {
	int fd;
	uint64_t start_ms, end_ms;
};

/*
 * Start closing cl->fd in thread *thr and return head_ms after the
 * close began; the caller pthread_join()s *thr before reading
 * cl->end_ms.  A failed pthread_create fails the case.
 */
void vt_start_close(struct vt *t, pthread_t *thr, struct vt_closer *cl,
		    int head_ms);

/* ---- a FUSE file whose reads are never answered ------------------------ */

/*
 * What any user can make through a user namespace: a file on FUSE whose
 * server answers everything but READ.  A fault on its page cache, as
 * pinning a MAP_PRIVATE mapping of it does, waits until the server
 * answers, here until vt_fuse_stop().  The file is @path, @size bytes.
 */
#define VT_FUSE_PENDING	16

struct vt_fuse {
	int dev;			/* /dev/fuse */
	char dir[64];			/* the mount point */
	char path[80];			/* its one file */
	uint64_t size;
	pthread_t server;
	pthread_mutex_t lock;		/* what follows */
	uint64_t pending[VT_FUSE_PENDING];	/* unanswered READs */
	int npending;
	int reads;			/* READs seen */
	int stopping;			/* answer READs with EIO now */
};

/*
 * Load fuse, mount it on a fresh directory under /tmp and start the
 * server thread.  -1/errno when the kernel has no FUSE (ENODEV).
 */
int vt_fuse_start(struct vt_fuse *f, uint64_t size);

/* READ requests seen so far (none answered until vt_fuse_stop()). */
int vt_fuse_reads(struct vt_fuse *f);

/* Answer every pending and later READ with EIO: the waiters go on. */
void vt_fuse_fail_reads(struct vt_fuse *f);

/*
 * vt_fuse_fail_reads(), unmount and end the server, which happens once
 * the file is let go of: the caller has closed and unmapped it.
 */
void vt_fuse_stop(struct vt_fuse *f);

#endif /* VTSYS_H */
