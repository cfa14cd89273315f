// SPDX-License-Identifier: GPL-2.0-only
/*
 * edu-dma: a complete user-space driver for QEMU's "edu" teaching device
 * (1234:11e8), written against nothing but the VFIO ABI header.
 *
 * It follows Documentation/vfio.txt step by step: open the group, check
 * that it is viable, get the IOMMU fd, map a buffer for DMA at an IOVA
 * that differs from its address, get the device fd by name, map BAR0,
 * connect the MSI to an eventfd, then make the device copy a buffer from
 * RAM into its own memory and back, waiting for the MSI after each copy,
 * and check the data.  It builds against the original 2011 header
 * unchanged, which is why it defines its own region and IRQ indexes.
 *
 * usage: edu-dma [0000:00:02.0]   (default: the first edu bound to vfio)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>		/* before vfio.h: the 2011 header needs _IO */
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vfio.h"

/* PCI indexes of the vfio PCI bus driver (documented in our header). */
#define PCI_BAR0_REGION		0
#define PCI_CONFIG_REGION	7
#define PCI_MSI_IRQ		1

#define PCI_COMMAND		0x04
#define PCI_COMMAND_MEMORY	0x2
#define PCI_COMMAND_MASTER	0x4

/* The edu device (QEMU docs/specs/edu.rst). */
#define EDU_VENDOR		0x1234
#define EDU_DEVICE		0x11e8
#define EDU_ID			0x00	/* 0xRRrr00ed: major, minor */
#define EDU_LIVENESS		0x04	/* reads back the inverse */
#define EDU_FACTORIAL		0x08
#define EDU_STATUS		0x20
#define   EDU_STATUS_COMPUTING	0x01
#define   EDU_STATUS_IRQ_FACT	0x80	/* raise an IRQ when done */
#define EDU_IRQ_STATUS		0x24
#define EDU_IRQ_RAISE		0x60
#define EDU_IRQ_ACK		0x64
#define EDU_DMA_SRC		0x80
#define EDU_DMA_DST		0x88
#define EDU_DMA_COUNT		0x90
#define EDU_DMA_CMD		0x98
#define   EDU_DMA_RUN		0x1
#define   EDU_DMA_TO_RAM	0x2	/* direction: device -> RAM */
#define   EDU_DMA_IRQ		0x4	/* raise EDU_IRQ_DMA when done */
#define EDU_IRQ_FACT		0x001
#define EDU_IRQ_DMA		0x100
#define EDU_DMA_BUF		0x40000	/* the device's 4 KiB buffer */

/*
 * edu masks DMA addresses to 28 bits, so the IOVA must be below 256 MiB;
 * any such value different from the buffer's address shows translation.
 * QEMU 7.2 aborts the VM on a transfer reaching the last byte of the
 * device buffer, hence less than 4 KiB per transfer.
 */
#define DMA_IOVA		0x100000ULL
#define DMA_LEN			4000
#define BUF_SIZE		(2 * 4096)	/* source page, destination page */
#define IRQ_TIMEOUT_MS		5000

struct edu {
	char name[64];
	int group_id;
	int group;		/* fds, -1 when closed */
	int iommu;
	int device;
	int efd;
	volatile uint8_t *bar;	/* BAR0 mmap */
	size_t bar_size;
	uint8_t *buf;		/* DMA buffer: src at 0, dst at 4096 */
	int mapped;		/* buf is mapped at DMA_IOVA */
	int irq_set;		/* MSI connected */
};

static int fail(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	fprintf(stderr, "edu-dma: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	return -1;
}

static int fail_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "edu-dma: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint32_t rd32(struct edu *e, unsigned int off)
{
	return *(volatile uint32_t *)(e->bar + off);
}

static void wr32(struct edu *e, unsigned int off, uint32_t val)
{
	*(volatile uint32_t *)(e->bar + off) = val;
}

static void wr64(struct edu *e, unsigned int off, uint64_t val)
{
	*(volatile uint64_t *)(e->bar + off) = val;
}

static int read_sysfs(const char *dev, const char *attr, char *buf,
		      size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dev, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int bound_to_vfio(const char *dev)
{
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	return !strcmp(strrchr(link, '/') ? strrchr(link, '/') + 1 : link,
		       "vfio");
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The first edu (in address order) bound to the vfio driver. */
static int find_edu(struct edu *e)
{
	struct dirent **list;
	int n, i, found = -1;

	n = scandir("/sys/bus/pci/devices", &list, NULL, name_cmp);
	if (n < 0)
		return fail("scan /sys/bus/pci/devices");
	for (i = 0; i < n; i++) {
		char v[16], d[16];
		const char *dev = list[i]->d_name;

		if (found < 0 && dev[0] != '.' &&
		    strlen(dev) < sizeof(e->name) &&
		    !read_sysfs(dev, "vendor", v, sizeof(v)) &&
		    !read_sysfs(dev, "device", d, sizeof(d)) &&
		    strtoul(v, NULL, 16) == EDU_VENDOR &&
		    strtoul(d, NULL, 16) == EDU_DEVICE && bound_to_vfio(dev)) {
			memcpy(e->name, dev, strlen(dev) + 1);
			found = i;
		}
		free(list[i]);
	}
	free(list);
	if (found < 0)
		return fail_msg("no edu device (%04x:%04x) bound to vfio; bind one with\n"
				"  echo \"%04x %04x\" > /sys/bus/pci/drivers/vfio/new_id",
				EDU_VENDOR, EDU_DEVICE, EDU_VENDOR, EDU_DEVICE);
	return 0;
}

static int open_group(struct edu *e)
{
	struct vfio_group_info info = { .argsz = sizeof(info) };
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group",
		 e->name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return fail("%s: no IOMMU group (%s)", e->name, path);
	link[n] = '\0';
	base = strrchr(link, '/');
	e->group_id = atoi(base ? base + 1 : link);

	snprintf(path, sizeof(path), "/dev/vfio/pci:%d", e->group_id);
	e->group = open(path, O_RDWR);
	if (e->group < 0)
		return fail("open %s", path);
	printf("group:   %s is in IOMMU group %d, opened %s\n", e->name,
	       e->group_id, path);

	if (ioctl(e->group, VFIO_GROUP_GET_INFO, &info) < 0)
		return fail("VFIO_GROUP_GET_INFO");
	if (!(info.flags & VFIO_GROUP_FLAGS_VIABLE))
		return fail_msg("group %d is not viable: bind every device in /sys/devices/virtual/vfio/pci:%d/devices to vfio",
				e->group_id, e->group_id);
	if (info.flags & VFIO_GROUP_FLAGS_MM_LOCKED)
		return fail_msg("group %d is in use by another process",
				e->group_id);
	printf("         viable, not in use\n");
	return 0;
}

static int setup_iommu(struct edu *e)
{
	struct vfio_iommu_info info = { .argsz = sizeof(info) };
	struct vfio_dma_map map = { .argsz = sizeof(map) };

	e->iommu = ioctl(e->group, VFIO_GROUP_GET_IOMMU_FD);
	if (e->iommu < 0)
		return fail("VFIO_GROUP_GET_IOMMU_FD");
	if (ioctl(e->iommu, VFIO_IOMMU_GET_INFO, &info) < 0)
		return fail("VFIO_IOMMU_GET_INFO");
	printf("iommu:   IOVA 0x%" PRIx64 "-0x%" PRIx64 ", page sizes 0x%" PRIx64 "\n",
	       (uint64_t)info.iova_min, (uint64_t)info.iova_max,
	       (uint64_t)info.pgsize_bitmap);
	if (DMA_IOVA < info.iova_min || DMA_IOVA + BUF_SIZE - 1 > info.iova_max)
		return fail_msg("IOVA 0x%llx is outside the IOMMU's range",
				DMA_IOVA);

	e->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->buf == MAP_FAILED) {
		e->buf = NULL;
		return fail("mmap %d bytes", BUF_SIZE);
	}
	map.vaddr = (uintptr_t)e->buf;
	map.iova = DMA_IOVA;
	map.size = BUF_SIZE;
	map.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
	if (ioctl(e->iommu, VFIO_IOMMU_MAP_DMA, &map) < 0)
		return fail("VFIO_IOMMU_MAP_DMA %d bytes at iova 0x%llx",
			    BUF_SIZE, DMA_IOVA);
	e->mapped = 1;
	printf("dma map: %d bytes at address %p -> IOVA 0x%llx (read/write)\n",
	       BUF_SIZE, (void *)e->buf, DMA_IOVA);
	return 0;
}

static int setup_device(struct edu *e)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };
	struct vfio_region_info reg = { .argsz = sizeof(reg) };
	struct vfio_region_info cfg = { .argsz = sizeof(cfg) };
	uint16_t cmd;
	uint32_t id;

	e->device = ioctl(e->group, VFIO_GROUP_GET_DEVICE_FD, e->name);
	if (e->device < 0)
		return fail("VFIO_GROUP_GET_DEVICE_FD %s", e->name);
	if (ioctl(e->device, VFIO_DEVICE_GET_INFO, &info) < 0)
		return fail("VFIO_DEVICE_GET_INFO");
	printf("device:  %s: %u regions, %u IRQ indexes%s\n", e->name,
	       info.num_regions, info.num_irqs,
	       info.flags & VFIO_DEVICE_FLAGS_RESET ? ", reset supported" : "");

	reg.index = PCI_BAR0_REGION;
	if (ioctl(e->device, VFIO_DEVICE_GET_REGION_INFO, &reg) < 0)
		return fail("VFIO_DEVICE_GET_REGION_INFO BAR0");
	if (!(reg.flags & VFIO_REGION_INFO_FLAG_MMAP) || reg.size < 0x100)
		return fail_msg("BAR0 cannot be mmap'ed (flags 0x%x, size %llu)",
				reg.flags, (unsigned long long)reg.size);
	e->bar = mmap(NULL, reg.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      e->device, reg.offset);
	if (e->bar == MAP_FAILED) {
		e->bar = NULL;
		return fail("mmap BAR0");
	}
	e->bar_size = reg.size;

	/* The DMA engine only works with bus mastering on. */
	cfg.index = PCI_CONFIG_REGION;
	if (ioctl(e->device, VFIO_DEVICE_GET_REGION_INFO, &cfg) < 0)
		return fail("VFIO_DEVICE_GET_REGION_INFO config");
	if (pread(e->device, &cmd, sizeof(cmd), cfg.offset + PCI_COMMAND) !=
	    sizeof(cmd))
		return fail("read the PCI command register");
	cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	if (pwrite(e->device, &cmd, sizeof(cmd), cfg.offset + PCI_COMMAND) !=
	    sizeof(cmd))
		return fail("write the PCI command register");

	id = rd32(e, EDU_ID);
	if ((id & 0xff) != 0xed)
		return fail_msg("BAR0 register 0 reads 0x%08x, not an edu", id);
	wr32(e, EDU_LIVENESS, 0x12345678);
	if (rd32(e, EDU_LIVENESS) != ~0x12345678u)
		return fail_msg("liveness check failed: wrote 0x12345678, read 0x%08x",
				rd32(e, EDU_LIVENESS));
	printf("BAR0:    %zu bytes mmap'ed; edu version %u.%u, liveness check ok\n",
	       e->bar_size, id >> 24, (id >> 16) & 0xff);
	return 0;
}

static int setup_msi(struct edu *e)
{
	struct vfio_irq_info irq = { .argsz = sizeof(irq) };
	struct {
		struct vfio_irq_eventfds set;
		int32_t fd;
	} req;

	irq.index = PCI_MSI_IRQ;
	if (ioctl(e->device, VFIO_DEVICE_GET_IRQ_INFO, &irq) < 0)
		return fail("VFIO_DEVICE_GET_IRQ_INFO MSI");
	if (irq.count < 1)
		return fail_msg("the device has no MSI");
	e->efd = eventfd(0, EFD_CLOEXEC);
	if (e->efd < 0)
		return fail("eventfd");
	memset(&req, 0, sizeof(req));
	req.set.argsz = sizeof(req);
	req.set.index = PCI_MSI_IRQ;
	req.set.count = 1;
	req.fd = e->efd;
	if (ioctl(e->device, VFIO_DEVICE_SET_IRQ_EVENTFDS, &req) < 0)
		return fail("VFIO_DEVICE_SET_IRQ_EVENTFDS MSI");
	e->irq_set = 1;
	printf("msi:     %u vector(s); vector 0 -> eventfd %d\n", irq.count,
	       e->efd);
	return 0;
}

/* Wait for the MSI, check and acknowledge the cause; returns ms waited. */
static double wait_irq(struct edu *e, uint32_t want, double start)
{
	struct pollfd pfd = { .fd = e->efd, .events = POLLIN };
	uint64_t count;
	uint32_t status;
	int n;

	n = poll(&pfd, 1, IRQ_TIMEOUT_MS);
	if (n < 0)
		return fail("poll the MSI eventfd");
	if (n == 0)
		return fail_msg("no MSI within %d ms (irq status 0x%x)",
				IRQ_TIMEOUT_MS, rd32(e, EDU_IRQ_STATUS));
	if (read(e->efd, &count, sizeof(count)) != sizeof(count))
		return fail("read the MSI eventfd");
	status = rd32(e, EDU_IRQ_STATUS);
	wr32(e, EDU_IRQ_ACK, status);
	if (!(status & want))
		return fail_msg("MSI arrived with irq status 0x%x, want 0x%x",
				status, want);
	return now_ms() - start;
}

static int dma(struct edu *e, uint64_t src, uint64_t dst, int to_ram)
{
	double start = now_ms(), waited;

	wr64(e, EDU_DMA_SRC, src);
	wr64(e, EDU_DMA_DST, dst);
	wr64(e, EDU_DMA_COUNT, DMA_LEN);
	wr64(e, EDU_DMA_CMD, EDU_DMA_RUN | EDU_DMA_IRQ |
			     (to_ram ? EDU_DMA_TO_RAM : 0));
	waited = wait_irq(e, EDU_IRQ_DMA, start);
	if (waited < 0)
		return -1;
	if (rd32(e, EDU_DMA_CMD) & EDU_DMA_RUN)
		return fail_msg("MSI came but the DMA is still running");
	printf("dma:     %s %d bytes, %s 0x%" PRIx64 " -> %s 0x%" PRIx64
	       ", MSI after %.1f ms\n",
	       to_ram ? "device -> RAM" : "RAM -> device", DMA_LEN,
	       to_ram ? "device" : "IOVA", src, to_ram ? "IOVA" : "device",
	       dst, waited);
	return 0;
}

static int run_dma(struct edu *e)
{
	uint8_t *src = e->buf, *dst = e->buf + 4096;
	uint32_t x = 0x2545f491;
	double start, waited;
	uint32_t fact;
	int i;

	/* A pattern no zeroed or stale page could contain by accident. */
	for (i = 0; i < DMA_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		src[i] = (uint8_t)x;
	}
	memset(dst, 0, 4096);

	if (dma(e, DMA_IOVA, EDU_DMA_BUF, 0) ||
	    dma(e, EDU_DMA_BUF, DMA_IOVA + 4096, 1))
		return -1;
	for (i = 0; i < DMA_LEN; i++)
		if (src[i] != dst[i])
			return fail_msg("data mismatch at byte %d: sent 0x%02x, got 0x%02x",
					i, src[i], dst[i]);
	printf("verify:  %d bytes came back unchanged through IOVA 0x%llx\n",
	       DMA_LEN, DMA_IOVA);

	/* The factorial unit and its completion interrupt, for good measure. */
	start = now_ms();
	wr32(e, EDU_STATUS, EDU_STATUS_IRQ_FACT);
	wr32(e, EDU_FACTORIAL, 10);
	waited = wait_irq(e, EDU_IRQ_FACT, start);
	if (waited < 0)
		return -1;
	fact = rd32(e, EDU_FACTORIAL);
	wr32(e, EDU_STATUS, 0);
	if (fact != 3628800)
		return fail_msg("10! computed as %u", fact);
	printf("compute: 10! = %u, MSI after %.1f ms\n", fact, waited);
	return 0;
}

static void teardown(struct edu *e)
{
	struct vfio_dma_unmap unmap = { .argsz = sizeof(unmap) };
	struct vfio_irq_eventfds off = { .argsz = sizeof(off) };

	if (e->irq_set) {
		off.index = PCI_MSI_IRQ;
		off.count = 0;
		if (ioctl(e->device, VFIO_DEVICE_SET_IRQ_EVENTFDS, &off) < 0)
			fail("disable MSI");
	}
	if (e->bar)
		munmap((void *)e->bar, e->bar_size);
	if (e->mapped) {
		unmap.iova = DMA_IOVA;
		unmap.size = BUF_SIZE;
		if (ioctl(e->iommu, VFIO_IOMMU_UNMAP_DMA, &unmap) < 0)
			fail("VFIO_IOMMU_UNMAP_DMA");
	}
	if (e->buf)
		munmap(e->buf, BUF_SIZE);
	if (e->efd >= 0)
		close(e->efd);
	if (e->device >= 0)
		close(e->device);
	if (e->iommu >= 0)
		close(e->iommu);
	if (e->group >= 0)
		close(e->group);
}

int main(int argc, char **argv)
{
	struct edu e = {
		.group = -1, .iommu = -1, .device = -1, .efd = -1,
	};
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [PCI device, e.g. 0000:00:02.0]\n",
			argv[0]);
		return 2;
	}
	if (argc == 2)
		snprintf(e.name, sizeof(e.name), "%s", argv[1]);
	else if (find_edu(&e))
		return 1;

	printf("edu-dma: driving %s from user space as uid %d\n", e.name,
	       (int)getuid());
	ret = open_group(&e) || setup_iommu(&e) || setup_device(&e) ||
	      setup_msi(&e) || run_dma(&e);
	teardown(&e);
	if (ret) {
		printf("edu-dma: FAILED\n");
		return 1;
	}
	printf("edu-dma: success: DMA round trip and MSI verified\n");
	return 0;
}
