/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-bench: one benchmark, three VFIO ABIs.
 *
 * The 2011 group ABI (ours, src/include/uapi/vfio.h) and the
 * container ABI (the distribution's <linux/vfio.h>) reuse the same ioctl
 * and structure names with different meanings, so their headers cannot
 * be included together.  Each backend lives in its own translation unit
 * (be_ours.c, be_intree.c) and is reached only through struct bench_ops;
 * bench.c holds the measurements and knows neither header.  The backend
 * code that reads the same under both headers is written once, in
 * be_common.h, which each backend compiles against its own header.
 *
 * The container ABI is served by two kernels' code: the in-kernel VFIO
 * and our module, which answers it on /dev/vfio/vfio and /dev/vfio/N
 * next to the seed ABI.  Both are driven by the one backend of
 * be_intree.c, under two names ("intree", "container") so that the host
 * can tell whose figures a line carries; the name is the one given to
 * --backend, not part of the ops.
 *
 * The kernel's third way in, iommufd with the VFIO device cdev
 * (/dev/iommu, /dev/vfio/devices/vfioN), has no group and no container:
 * be_iommufd.c, built against a 7.x <linux/vfio.h> and <linux/iommufd.h>
 * that the host's own headers may be too old to have.  A build without
 * it still links (bench.c takes bench_iommufd_ops as a weak symbol) and
 * says so when asked for that backend.
 */
#ifndef VFIO_BENCH_H
#define VFIO_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Per-backend state: the fds of one device and its IOMMU context. */
struct bench_dev {
	int group;		/* IOMMU group number */
	int group_fd;
	int container_fd;	/* in-kernel: /dev/vfio/vfio; ours: IOMMU fd */
	int device_fd;		/* iommufd: the cdev /dev/vfio/devices/vfioN */
	int iommufd;		/* iommufd: /dev/iommu */
	uint32_t ioas_id;	/* iommufd: the IOAS the device is attached to */
	uint64_t bar0_offset;	/* BAR0 offset in the device fd */
	uint64_t bar0_size;
	int bar0_mmap_ok;	/* the region advertises mmap */
	uint64_t config_offset;	/* config space offset in the device fd */
	int msi_count;		/* MSI vectors advertised */
	char errbuf[256];	/* what failed, for the caller's message */
};

/* What VFIO_DEVICE_GET_REGION_INFO says about one region. */
struct bench_region {
	uint64_t offset;	/* in the device fd */
	uint64_t size;
	int mmap_ok;		/* the region advertises mmap */
};

enum bench_region_id {
	BENCH_REGION_BAR0,
	BENCH_REGION_CONFIG,
};

/*
 * Only what differs between the ABIs: the ioctls, with their own numbers
 * and structures.  What they share (opening a device, reading its regions,
 * the timing loops) is in bench.c; both reach a region by mmap or pread of
 * the device fd at the region's offset, so bench.c does that itself.
 */
struct bench_ops {
	/*
	 * Open group d->group, its IOMMU and the device fd of PCI device
	 * name (sysfs form); iommufd: the device's cdev and /dev/iommu,
	 * bound and attached to a new IOAS.  On failure d->errbuf says
	 * what failed and the fds opened so far are left for close().
	 */
	int (*open)(struct bench_dev *d, const char *name);
	/* VFIO_DEVICE_GET_REGION_INFO of one region into *r. */
	int (*region_info)(struct bench_dev *d, enum bench_region_id id,
			   struct bench_region *r);
	/* VFIO_DEVICE_GET_IRQ_INFO of MSI: the vectors it has in *count. */
	int (*msi_info)(struct bench_dev *d, int *count);
	/* Map [vaddr, vaddr + size) at iova, read/write. */
	int (*map)(struct bench_dev *d, void *vaddr, uint64_t iova,
		   uint64_t size);
	int (*unmap)(struct bench_dev *d, uint64_t iova, uint64_t size);
	/* Connect eventfd efd to MSI vector 0; efd < 0 disables MSI. */
	int (*msi_setup)(struct bench_dev *d, int efd);
	/* Close the fds that are open, in the order the ABI wants. */
	void (*close)(struct bench_dev *d);
};

extern const struct bench_ops bench_ours_ops;
extern const struct bench_ops bench_intree_ops;	/* "intree" and "container" */
/* Not linked in without 7.x headers; bench.c declares it weak. */
extern const struct bench_ops bench_iommufd_ops;

/* Shared by the backends: close *fd if it is open and mark it closed. */
void bench_close_fd(int *fd);

/*
 * Record a failure in d->errbuf (with errno's text appended) and return
 * -1, keeping errno.
 */
int bench_fail(struct bench_dev *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* VFIO_BENCH_H */
