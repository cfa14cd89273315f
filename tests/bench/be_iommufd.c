// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-bench backend for the kernel's iommufd: the VFIO device cdev
 * (/dev/vfio/devices/vfioN) bound to an iommufd (/dev/iommu), mappings in
 * an IO address space (IOAS) of that iommufd.  This is the path the
 * kernel's own VFIO selftests and newer QEMU take; it has no group and no
 * container, so nothing of the group/container helpers applies, but the
 * device fd answers the same region, IRQ info and SET_IRQS calls as the
 * group's device fd.
 *
 * Built against a 7.x <linux/vfio.h> and <linux/iommufd.h> (-I$UAPI):
 * BIND_IOMMUFD, ATTACH_IOMMUFD_PT and the IOAS calls are newer than the
 * host's headers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/iommufd.h>
#include <linux/vfio.h>
#include "bench.h"

#define BE_WANT_SET_IRQS
#include "be_common.h"

/* The device fd first: closing it detaches and unbinds the device. */
static void iommufd_close(struct bench_dev *d)
{
	bench_close_fd(&d->device_fd);
	bench_close_fd(&d->iommufd);
}

/*
 * The name of the device's VFIO cdev ("vfioN"): the one entry of its
 * vfio-dev directory in sysfs.  The cdev's number has nothing to do with
 * the group's, so it has to be looked up.
 */
static int cdev_name(struct bench_dev *d, const char *name, char *buf,
		     size_t len)
{
	char path[128];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vfio-dev",
		 name);
	dir = opendir(path);
	if (!dir)
		return bench_fail(d, "%s (kernel without VFIO_DEVICE_CDEV, or %s not bound to vfio-pci?)",
				  path, name);
	errno = ENOENT;
	while ((e = readdir(dir)) != NULL) {
		if (strncmp(e->d_name, "vfio", 4) || !e->d_name[4])
			continue;
		snprintf(buf, len, "%s", e->d_name);
		closedir(dir);
		return 0;
	}
	closedir(dir);
	return bench_fail(d, "no vfioN entry in %s", path);
}

static int iommufd_open(struct bench_dev *d, const char *name)
{
	struct vfio_device_bind_iommufd bind = { .argsz = sizeof(bind) };
	struct vfio_device_attach_iommufd_pt attach = {
		.argsz = sizeof(attach),
	};
	struct iommu_ioas_alloc alloc = { .size = sizeof(alloc) };
	char cdev[NAME_MAX + 1], path[NAME_MAX + 32];

	d->iommufd = open("/dev/iommu", O_RDWR);
	if (d->iommufd < 0)
		return bench_fail(d, "open /dev/iommu");
	if (cdev_name(d, name, cdev, sizeof(cdev)) < 0)
		return -1;
	snprintf(path, sizeof(path), "/dev/vfio/devices/%s", cdev);
	d->device_fd = open(path, O_RDWR);
	if (d->device_fd < 0)
		return bench_fail(d, "open %s", path);

	/* Until it is bound, the cdev refuses every other ioctl. */
	bind.iommufd = d->iommufd;
	if (ioctl(d->device_fd, VFIO_DEVICE_BIND_IOMMUFD, &bind) < 0)
		return bench_fail(d, "VFIO_DEVICE_BIND_IOMMUFD %s", path);
	if (ioctl(d->iommufd, IOMMU_IOAS_ALLOC, &alloc) < 0)
		return bench_fail(d, "IOMMU_IOAS_ALLOC");
	d->ioas_id = alloc.out_ioas_id;
	/*
	 * Attaching to the IOAS makes the kernel pick (or create) the
	 * hardware page table for it: from here on IOAS mappings reach
	 * the IOMMU, as VFIO_SET_IOMMU does for a container.
	 */
	attach.pt_id = d->ioas_id;
	if (ioctl(d->device_fd, VFIO_DEVICE_ATTACH_IOMMUFD_PT, &attach) < 0)
		return bench_fail(d, "VFIO_DEVICE_ATTACH_IOMMUFD_PT ioas %u",
				  d->ioas_id);
	return 0;
}

static int iommufd_map(struct bench_dev *d, void *vaddr, uint64_t iova,
		       uint64_t size)
{
	struct iommu_ioas_map map = {
		.size = sizeof(map),
		/* At the IOVA asked for, as MAP_DMA does: same rows. */
		.flags = IOMMU_IOAS_MAP_FIXED_IOVA | IOMMU_IOAS_MAP_READABLE |
			 IOMMU_IOAS_MAP_WRITEABLE,
		.ioas_id = d->ioas_id,
		.user_va = (uintptr_t)vaddr,
		.length = size,
		.iova = iova,
	};

	return ioctl(d->iommufd, IOMMU_IOAS_MAP, &map);
}

static int iommufd_unmap(struct bench_dev *d, uint64_t iova, uint64_t size)
{
	struct iommu_ioas_unmap unmap = {
		.size = sizeof(unmap),
		.ioas_id = d->ioas_id,
		.iova = iova,
		.length = size,
	};

	if (ioctl(d->iommufd, IOMMU_IOAS_UNMAP, &unmap) < 0)
		return -1;
	/* Like type1, it reports what it unmapped; short is a failure. */
	if (unmap.length != size) {
		errno = EIO;
		return -1;
	}
	return 0;
}

const struct bench_ops bench_iommufd_ops = {
	.open = iommufd_open,
	.region_info = be_region_info,
	.msi_info = be_msi_info,
	.map = iommufd_map,
	.unmap = iommufd_unmap,
	.msi_setup = be_set_irqs_msi,
	.close = iommufd_close,
};
