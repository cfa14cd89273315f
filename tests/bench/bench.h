/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-bench: one benchmark, two VFIO ABIs.
 *
 * The 2011 group ABI (ours, src/include/uapi/vfio.h) and the modern
 * container ABI (the distribution's <linux/vfio.h>) reuse the same ioctl
 * and structure names with different meanings, so their headers cannot
 * be included together.  Each backend lives in its own translation unit
 * (be_ours.c, be_intree.c) and is reached only through struct bench_ops;
 * bench.c holds the measurements and knows neither header.
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
	int device_fd;
	uint64_t bar0_offset;	/* BAR0 offset in the device fd */
	uint64_t bar0_size;
	int bar0_mmap_ok;	/* the region advertises mmap */
	uint64_t config_offset;	/* config space offset in the device fd */
	int msi_count;		/* MSI vectors advertised */
	char errbuf[256];	/* what failed, for the caller's message */
};

struct bench_ops {
	const char *name;	/* "ours" or "intree", as printed */
	/* Open group, IOMMU and device fd of PCI device name (sysfs form). */
	int (*open)(struct bench_dev *d, const char *name);
	/* Map [vaddr, vaddr + size) at iova, read/write. */
	int (*map)(struct bench_dev *d, void *vaddr, uint64_t iova,
		   uint64_t size);
	int (*unmap)(struct bench_dev *d, uint64_t iova, uint64_t size);
	/* mmap BAR0 whole, MAP_FAILED on failure. */
	void *(*bar0_mmap)(struct bench_dev *d);
	/* pread of len bytes at off inside BAR0. */
	ssize_t (*bar0_pread)(struct bench_dev *d, void *buf, size_t len,
			      uint64_t off);
	/* Connect eventfd efd to MSI vector 0; efd < 0 disables MSI. */
	int (*msi_setup)(struct bench_dev *d, int efd);
	void (*close)(struct bench_dev *d);
};

extern const struct bench_ops bench_ours_ops;
extern const struct bench_ops bench_intree_ops;

/*
 * Shared by the backends: the group number of a PCI device, from its
 * iommu_group link in sysfs; -1 with errno set on failure.
 */
int bench_group_of(const char *name);

/*
 * Record a failure in d->errbuf (with errno's text appended) and return
 * -1, keeping errno.
 */
int bench_fail(struct bench_dev *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* VFIO_BENCH_H */
