/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vtlib: helpers shared by the guest test programs (tests/guest/t-*.c).
 *
 * Conventions: every function returns >= 0 on success and -1 with errno
 * set on failure, so that it can be wrapped in VT_OK()/VT_ERRNO().  Device
 * names are PCI addresses as sysfs spells them ("0000:00:02.0").  Nothing
 * here prints vt lines; callers decide what a failure means.
 */
#ifndef VTLIB_H
#define VTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uapi/vfio.h"

#define VT_DEV_NAME_LEN	16		/* "0000:00:02.0" + NUL, rounded */

/* The devices the harness gives every program (see tests/vm/README). */
#define VT_EDU_VENDOR		0x1234
#define VT_EDU_DEVICE		0x11e8
#define VT_TESTDEV_VENDOR	0x1b36
#define VT_TESTDEV_DEVICE	0x0005
#define VT_EDU0			"0000:00:02.0"
#define VT_EDU1			"0000:00:03.0"
#define VT_TESTDEV0		"0000:00:04.0"
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

/* ---- groups, IOMMU and device fds ------------------------------------- */

/* IOMMU group number of dev (from /sys/bus/pci/devices/<dev>/iommu_group). */
int vt_group_id(const char *dev);

/* open("/dev/vfio/pci:<group>", flags). */
int vt_open_group(int group, int flags);

/* Open the group node of dev, O_RDWR. */
int vt_open_group_of(const char *dev);

/* VFIO_GROUP_GET_INFO; the flags word into *flags. */
int vt_group_flags(int group_fd, uint32_t *flags);

/* VFIO_GROUP_GET_IOMMU_FD. */
int vt_iommu_fd(int group_fd);

/* VFIO_GROUP_GET_DEVICE_FD for dev. */
int vt_device_fd(int group_fd, const char *dev);

/*
 * Everything a device test usually wants: the group, IOMMU and device fds
 * of dev.  Undo with vt_close_dev().  On failure nothing stays open.
 */
struct vt_dev {
	char name[VT_DEV_NAME_LEN];
	int group;		/* group number */
	int group_fd;
	int iommu_fd;
	int device_fd;
};
int vt_open_dev(struct vt_dev *d, const char *dev);
void vt_close_dev(struct vt_dev *d);

/* VFIO_IOMMU_MAP_DMA of [vaddr, vaddr + size) at iova.  flags 0 means
 * read and write. */
int vt_map(int iommu_fd, void *vaddr, uint64_t iova, uint64_t size,
	   uint32_t flags);

/* VFIO_IOMMU_UNMAP_DMA of [iova, iova + size). */
int vt_unmap(int iommu_fd, uint64_t iova, uint64_t size);

/* VFIO_DEVICE_GET_REGION_INFO for index into *info. */
int vt_region_info(int device_fd, uint32_t index,
		   struct vfio_region_info *info);

/* mmap region index of the device whole, read/write; NULL + errno on
 * failure.  The size is stored in *size when size is not NULL. */
void *vt_mmap_region(int device_fd, uint32_t index, uint64_t *size);

/*
 * VFIO_DEVICE_SET_IRQ_EVENTFDS with count eventfds from fds (count 0
 * disables the index).
 */
int vt_set_irq_eventfds(int device_fd, uint32_t index, uint32_t count,
			const int32_t *fds);

/* Wait up to timeout_ms for an eventfd to fire; the counter read into
 * *value (may be NULL).  -1/ETIMEDOUT when it did not fire. */
int vt_wait_eventfd(int efd, int timeout_ms, uint64_t *value);

/* ---- pinned page accounting ------------------------------------------- */

/*
 * /proc/vmstat nr_foll_pin_acquired and nr_foll_pin_released.  Their
 * difference is the number of pages pinned with FOLL_PIN right now in the
 * whole guest, so take a snapshot before and compare after.  As root the
 * per-cpu deltas are folded first (vm/stat_refresh); any other uid cannot
 * do that, so the call then sleeps about 2 s for the kernel to fold them.
 */
struct vt_pins {
	long acquired;
	long released;
};
int vt_read_pins(struct vt_pins *p);

/* acquired - released, or -1 on error. */
long vt_pinned_now(void);

/* VmLck of the process pid (0 = self) in KiB, from /proc/<pid>/status. */
long vt_locked_kb(pid_t pid);

/* ---- processes and the host ------------------------------------------- */

/*
 * Run fn(arg) in a forked child as uid/gid (after setgroups(0), setgid,
 * setuid; uid -1 keeps root).  Returns fn's return value as passed
 * through exit(): 0..255, or 128 + signal when the child was killed, or
 * -1 when fork/wait failed.  stdout is flushed before forking.
 */
int vt_run_as(uid_t uid, gid_t gid, int (*fn)(void *arg), void *arg);

/*
 * Ask the host harness to run a QEMU monitor command (printed as a
 * "VT-HOST <cmd>" line).  The host gives no answer: poll for the effect
 * with a bound (vt_wait_path()).
 */
void vt_host(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t vt_now_ms(void);

#endif /* VTLIB_H */
