// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-docexample: the "VFIO Usage Example" of Documentation/vfio.txt (seed
 * 002) as a guest test, built against the unmodified 2011 header (seed
 * 003) and nothing else of ours, so it shows that a program written for
 * the original ABI runs against our modules.
 *
 * It does what the documentation shows, on the first edu device bound to
 * vfio, and checks each result.  One deliberate difference: the
 * documentation passes the region structure to VFIO_DEVICE_GET_IRQ_INFO
 * (a bug); this passes struct vfio_irq_info, as the header defines.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>		/* the 2011 header needs _IO from here */
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"

#define EDU_VENDOR	0x1234
#define EDU_DEVICE	0x11e8
#define PCI_NUM_REGIONS	8	/* BAR0-5, ROM, config: our documented set */
#define PCI_INTX_IRQ	0
#define PCI_MSI_IRQ	1
#define MAP_SIZE	(1024 * 1024)

struct doc {
	char dev[64];		/* e.g. 0000:00:02.0 */
	int group_id;
	char group_path[64];	/* /dev/vfio/pci:N */
};

static long sysfs_hex(const char *dev, const char *attr)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dev, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 16);
}

static const char *link_base(const char *path, char *buf, size_t len)
{
	ssize_t n = readlink(path, buf, len - 1);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
}

static int find_edu(struct doc *d)
{
	struct dirent **list;
	int n, i, found = 0;

	n = scandir("/sys/bus/pci/devices", &list, NULL, alphasort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const char *dev = list[i]->d_name, *drv;
		char path[PATH_MAX], link[PATH_MAX];

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver",
			 dev);
		if (!found && dev[0] != '.' && strlen(dev) < sizeof(d->dev) &&
		    sysfs_hex(dev, "vendor") == EDU_VENDOR &&
		    sysfs_hex(dev, "device") == EDU_DEVICE &&
		    (drv = link_base(path, link, sizeof(link))) &&
		    !strcmp(drv, "vfio")) {
			memcpy(d->dev, dev, strlen(dev) + 1);
			found = 1;
		}
		free(list[i]);
	}
	free(list);
	return found ? 0 : -1;
}

/* $ cat /sys/bus/pci/devices/<dev>/iommu_group; ls -l /dev/vfio/pci:N;
 * ls -l /sys/devices/virtual/vfio/pci:N/devices/ */
static void doc_sysfs(struct vt *t, void *arg)
{
	struct doc *d = arg;
	char path[PATH_MAX], link[PATH_MAX], dev_real[PATH_MAX];
	char member_real[PATH_MAX];
	const char *base;
	struct stat st;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group",
		 d->dev);
	base = link_base(path, link, sizeof(link));
	VT_CHECK(t, base != NULL, "%s has no iommu_group", d->dev);
	d->group_id = atoi(base);
	snprintf(d->group_path, sizeof(d->group_path), "/dev/vfio/pci:%d",
		 d->group_id);
	VT_OK(t, stat(d->group_path, &st));
	VT_CHECK(t, S_ISCHR(st.st_mode), "%s is not a char device",
		 d->group_path);

	snprintf(path, sizeof(path), "/sys/devices/virtual/vfio/pci:%d/devices/%s",
		 d->group_id, d->dev);
	VT_CHECK(t, realpath(path, member_real) != NULL,
		 "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", d->dev);
	VT_CHECK(t, realpath(path, dev_real) != NULL, "%s", path);
	VT_CHECK(t, !strcmp(member_real, dev_real),
		 "group member link points to %s, not %s", member_real,
		 dev_real);
}

static long pinned_pages(void)
{
	long acq = -1, rel = -1;
	char line[128];
	FILE *f;
	int fd;

	/* The counters are per-cpu deltas, folded on this write. */
	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd >= 0) {
		/* EINVAL for a negative counter: folded anyway. */
		ssize_t ignored = write(fd, "1", 1);

		(void)ignored;
		close(fd);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "nr_foll_pin_acquired %ld", &acq);
		sscanf(line, "nr_foll_pin_released %ld", &rel);
	}
	fclose(f);
	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

/* The C part of the example, in the documentation's order. */
static void doc_usage(struct vt *t, void *arg)
{
	struct doc *d = arg;
	int group, iommu, device;
	unsigned int i;
	struct vfio_group_info group_info = { .argsz = sizeof(group_info) };
	struct vfio_iommu_info iommu_info = { .argsz = sizeof(iommu_info) };
	struct vfio_dma_map dma_map = { .argsz = sizeof(dma_map) };
	struct vfio_dma_unmap dma_unmap = { .argsz = sizeof(dma_unmap) };
	struct vfio_device_info device_info = { .argsz = sizeof(device_info) };
	long pinned_before = pinned_pages();
	void *mem;

	VT_CHECK(t, d->group_id >= 0 && d->group_path[0], "no group (sysfs case failed)");

	/* Open the group */
	group = VT_OK(t, open(d->group_path, O_RDWR));

	/* Test the group is viable and available */
	VT_OK(t, ioctl(group, VFIO_GROUP_GET_INFO, &group_info));
	VT_CHECK(t, group_info.flags & VFIO_GROUP_FLAGS_VIABLE,
		 "group %d not viable (flags 0x%x)", d->group_id,
		 group_info.flags);
	VT_CHECK(t, !(group_info.flags & VFIO_GROUP_FLAGS_MM_LOCKED),
		 "group %d already in use", d->group_id);

	/* Get a file descriptor for the IOMMU */
	iommu = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));

	/* Test the IOMMU is what we expect */
	VT_OK(t, ioctl(iommu, VFIO_IOMMU_GET_INFO, &iommu_info));
	VT_CHECK(t, iommu_info.pgsize_bitmap & 4096,
		 "no 4 KiB IOMMU pages: 0x%llx",
		 (unsigned long long)iommu_info.pgsize_bitmap);
	VT_CHECK(t, iommu_info.iova_min == 0 &&
		 iommu_info.iova_max >= MAP_SIZE - 1,
		 "IOVA range 0x%llx-0x%llx cannot hold the example's 1MB at 0",
		 (unsigned long long)iommu_info.iova_min,
		 (unsigned long long)iommu_info.iova_max);

	/* Allocate some space and setup a DMA mapping */
	mem = mmap(0, MAP_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECK(t, mem != MAP_FAILED, "mmap: %s", strerror(errno));
	dma_map.vaddr = (uintptr_t)mem;
	dma_map.size = MAP_SIZE;
	dma_map.iova = 0; /* 1MB starting at 0x0 from device view */
	dma_map.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
	VT_OK(t, ioctl(iommu, VFIO_IOMMU_MAP_DMA, &dma_map));
	VT_CHECK(t, pinned_before < 0 ||
		 pinned_pages() - pinned_before >= MAP_SIZE / 4096,
		 "%ld pages pinned for a 1MB map",
		 pinned_pages() - pinned_before);

	/* Get a file descriptor for the device */
	device = VT_OK(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, d->dev));

	/* Test and setup the device */
	VT_OK(t, ioctl(device, VFIO_DEVICE_GET_INFO, &device_info));
	VT_CHECK(t, device_info.num_regions == PCI_NUM_REGIONS,
		 "num_regions %u", device_info.num_regions);
	VT_CHECK(t, device_info.num_irqs > PCI_MSI_IRQ, "num_irqs %u",
		 device_info.num_irqs);

	for (i = 0; i < device_info.num_regions; i++) {
		struct vfio_region_info reg = { .argsz = sizeof(reg) };

		reg.index = i;

		VT_OK(t, ioctl(device, VFIO_DEVICE_GET_REGION_INFO, &reg));
		VT_CHECK(t, reg.index == i, "index %u came back as %u", i,
			 reg.index);
		/* edu: BAR0 is 1 MiB of MMIO; config space is a region. */
		if (i == 0)
			VT_CHECK(t, reg.size == MAP_SIZE &&
				 (reg.flags & VFIO_REGION_INFO_FLAG_MMAP),
				 "BAR0 size %llu flags 0x%x",
				 (unsigned long long)reg.size, reg.flags);
		if (i == PCI_NUM_REGIONS - 1)
			VT_CHECK(t, reg.size >= 256, "config size %llu",
				 (unsigned long long)reg.size);
	}

	for (i = 0; i < device_info.num_irqs; i++) {
		struct vfio_irq_info irq = { .argsz = sizeof(irq) };

		irq.index = i;

		/* The documentation passes &reg here; the header says irq. */
		VT_OK(t, ioctl(device, VFIO_DEVICE_GET_IRQ_INFO, &irq));
		VT_CHECK(t, irq.index == i, "index %u came back as %u", i,
			 irq.index);
		if (i == PCI_INTX_IRQ)
			VT_CHECK(t, irq.count == 1 &&
				 (irq.flags & VFIO_IRQ_INFO_FLAG_LEVEL),
				 "INTx count %u flags 0x%x", irq.count,
				 irq.flags);
		if (i == PCI_MSI_IRQ)
			VT_CHECK(t, irq.count >= 1 &&
				 !(irq.flags & VFIO_IRQ_INFO_FLAG_LEVEL),
				 "MSI count %u flags 0x%x", irq.count,
				 irq.flags);
	}

	/* Gratuitous device reset and go... */
	if (device_info.flags & VFIO_DEVICE_FLAGS_RESET)
		VT_OK(t, ioctl(device, VFIO_DEVICE_RESET));
	else
		VT_CHECK(t, ioctl(device, VFIO_DEVICE_RESET) < 0,
			 "reset works but FLAGS_RESET is not set");

	/* The documentation stops here; clean up and check it all let go. */
	dma_unmap.iova = 0;
	dma_unmap.size = MAP_SIZE;
	VT_OK(t, ioctl(iommu, VFIO_IOMMU_UNMAP_DMA, &dma_unmap));
	VT_OK(t, close(device));
	VT_OK(t, close(iommu));
	group_info.flags = 0;
	VT_OK(t, ioctl(group, VFIO_GROUP_GET_INFO, &group_info));
	VT_CHECK(t, !(group_info.flags & VFIO_GROUP_FLAGS_MM_LOCKED),
		 "group still owned after the last IOMMU/device fd closed");
	VT_OK(t, close(group));
	munmap(mem, MAP_SIZE);
	VT_CHECK(t, pinned_before < 0 || pinned_pages() == pinned_before,
		 "%ld pages still pinned", pinned_pages() - pinned_before);
}

/*
 * The corrected call: GET_IRQ_INFO takes struct vfio_irq_info, and an
 * argsz shorter than that structure is refused rather than read past.
 */
static void doc_irq_info_struct(struct vt *t, void *arg)
{
	struct doc *d = arg;
	struct vfio_irq_info irq = { .argsz = sizeof(irq) };
	int group, iommu, device;

	group = VT_OK(t, open(d->group_path, O_RDWR));
	iommu = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));
	device = VT_OK(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, d->dev));

	irq.index = PCI_MSI_IRQ;
	VT_OK(t, ioctl(device, VFIO_DEVICE_GET_IRQ_INFO, &irq));
	VT_CHECK(t, irq.argsz == sizeof(irq) && irq.count >= 1,
		 "argsz %u count %u", irq.argsz, irq.count);

	memset(&irq, 0, sizeof(irq));
	irq.argsz = offsetof(struct vfio_irq_info, index);
	irq.index = PCI_MSI_IRQ;
	VT_ERRNO(t, ioctl(device, VFIO_DEVICE_GET_IRQ_INFO, &irq), EINVAL);

	close(device);
	close(iommu);
	close(group);
}

int main(void)
{
	struct vt t = { .prog = "docexample" };
	struct doc d = { .group_id = -1 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (find_edu(&d)) {
		printf("skip - docexample/all: no edu device bound to vfio\n");
		return 0;
	}
	printf("docexample: using %s\n", d.dev);
	VT_RUN(&t, doc_sysfs, &d);
	VT_RUN(&t, doc_usage, &d);
	VT_RUN(&t, doc_irq_info_struct, &d);
	return vt_done(&t);
}
