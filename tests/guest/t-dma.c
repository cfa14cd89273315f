// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-dma: DMA end to end through edu0 and the IOMMU.  The edu device
 * copies between a 4 KiB buffer of its own (at 0x40000 in its DMA
 * address space) and "PCI addresses", which here are IOVAs of our IOMMU
 * fd: a mapping must send the device to exactly the process memory it
 * names, honour READ/WRITE, and stop working when it is removed.
 *
 * QEMU 7.2's edu aborts the VM on a transfer that reaches the last byte
 * of its buffer and masks DMA addresses to 28 bits: transfers stay below
 * 4096 bytes and IOVAs below 256 MiB.  A blocked transfer makes the guest
 * log a DMAR fault ("DMAR: [DMA Read NO_PASID] Request device [00:02.0]
 * fault addr ..."); that is the expected outcome, not a kernel bug.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define PG		4096UL
#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)

/* edu registers (QEMU docs/specs/edu.rst) */
#define EDU_ID		0x00
#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_CNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_DMA_RUN	0x1
#define EDU_DMA_TO_RAM	0x2	/* direction: edu buffer -> PCI bus */
#define EDU_BUF		0x40000
#define EDU_DMA_MAX	4095	/* never the buffer's last byte */
#define EDU_DMA_WAIT_MS	5000

#define PCI_COMMAND		0x04
#define PCI_COMMAND_MEMORY	0x2
#define PCI_COMMAND_MASTER	0x4

#define CHECKF(t, cond, ...) do {					\
	if (!(cond))							\
		vt_fail((t), __FILE__, __LINE__, __VA_ARGS__);		\
} while (0)

struct edu {
	int group;
	int iommu;
	int dev;
	uint64_t bar0;		/* BAR0's offset in the device fd */
};

static uint32_t edu_rd(struct vt *t, struct edu *e, uint32_t reg)
{
	uint32_t v = 0;

	CHECKF(t, pread(e->dev, &v, 4, e->bar0 + reg) == 4,
	       "read edu reg 0x%x: %s", reg, strerror(errno));
	return v;
}

static void edu_wr(struct vt *t, struct edu *e, uint32_t reg, uint32_t v)
{
	CHECKF(t, pwrite(e->dev, &v, 4, e->bar0 + reg) == 4,
	       "write edu reg 0x%x: %s", reg, strerror(errno));
}

static void edu_open(struct vt *t, struct edu *e, const char *name)
{
	struct vfio_region_info reg;
	uint16_t cmd = 0;
	uint32_t id;

	e->group = vt_open_group_of(name);
	CHECKF(t, e->group >= 0, "open the group of %s: %s", name,
	       strerror(errno));
	e->iommu = VT_OK(t, vt_iommu_fd(e->group));
	e->dev = VT_OK(t, vt_device_fd(e->group, name));
	VT_OK(t, vt_region_info(e->dev, VFIO_PCI_BAR0_REGION_INDEX, &reg));
	CHECKF(t, reg.size >= 0x100, "BAR0 size 0x%llx",
	       (unsigned long long)reg.size);
	e->bar0 = reg.offset;
	id = edu_rd(t, e, EDU_ID);
	CHECKF(t, (id & 0xffff) == 0x00ed, "%s: id register 0x%08x", name, id);

	/* The device may only master the bus once the user allows it. */
	VT_OK(t, vt_region_info(e->dev, VFIO_PCI_CONFIG_REGION_INDEX, &reg));
	CHECKF(t, pread(e->dev, &cmd, 2, reg.offset + PCI_COMMAND) == 2,
	       "read PCI_COMMAND: %s", strerror(errno));
	cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	CHECKF(t, pwrite(e->dev, &cmd, 2, reg.offset + PCI_COMMAND) == 2,
	       "write PCI_COMMAND: %s", strerror(errno));
	cmd = 0;
	CHECKF(t, pread(e->dev, &cmd, 2, reg.offset + PCI_COMMAND) == 2,
	       "read PCI_COMMAND: %s", strerror(errno));
	CHECKF(t, cmd & PCI_COMMAND_MASTER,
	       "bus master not enabled: PCI_COMMAND 0x%04x", cmd);
}

static void edu_close(struct edu *e)
{
	close(e->dev);
	close(e->iommu);
	close(e->group);
}

/* One edu DMA transfer; waits (bounded) for the engine to finish. */
static void edu_dma(struct vt *t, struct edu *e, uint32_t src, uint32_t dst,
		    uint32_t len, int to_ram)
{
	uint64_t end;

	CHECKF(t, len <= EDU_DMA_MAX, "edu transfer of %u bytes", len);
	edu_wr(t, e, EDU_DMA_SRC, src);
	edu_wr(t, e, EDU_DMA_DST, dst);
	edu_wr(t, e, EDU_DMA_CNT, len);
	edu_wr(t, e, EDU_DMA_CMD, EDU_DMA_RUN | (to_ram ? EDU_DMA_TO_RAM : 0));
	end = vt_now_ms() + EDU_DMA_WAIT_MS;
	while (edu_rd(t, e, EDU_DMA_CMD) & EDU_DMA_RUN) {
		CHECKF(t, vt_now_ms() < end, "edu DMA not done after %d ms",
		       EDU_DMA_WAIT_MS);
		usleep(2000);
	}
}

/* RAM at iova -> edu buffer */
static void to_dev(struct vt *t, struct edu *e, uint64_t iova, uint32_t len)
{
	edu_dma(t, e, iova, EDU_BUF, len, 0);
}

/* edu buffer -> RAM at iova */
static void to_ram(struct vt *t, struct edu *e, uint64_t iova, uint32_t len)
{
	edu_dma(t, e, EDU_BUF, iova, len, 1);
}

static uint8_t *buffer(struct vt *t, size_t pages)
{
	uint8_t *p = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECKF(t, p != MAP_FAILED, "mmap %zu pages: %s", pages,
	       strerror(errno));
	return p;
}

static uint8_t pat(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 7 + seed * 13 + (i >> 8));
}

static void pattern(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(i, seed);
}

/*
 * First index i < len where p[i] is not byte from + i of the pattern,
 * or -1.
 */
static long pattern_diff_at(const uint8_t *p, size_t len, unsigned int seed,
			    size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(from + i, seed))
			return (long)i;
	return -1;
}

static long pattern_diff(const uint8_t *p, size_t len, unsigned int seed)
{
	return pattern_diff_at(p, len, seed, 0);
}

static long fill_diff(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

static void test_roundtrip(struct vt *t, void *arg)
{
	const uint64_t iova = 0x100000;
	const uint32_t len = 4000;
	struct edu e;
	uint8_t *b;
	long d;

	(void)arg;
	edu_open(t, &e, VT_EDU0);
	b = buffer(t, 4);
	CHECKF(t, (uintptr_t)b != iova, "buffer happens to sit at its IOVA");
	pattern(b, PG, 1);
	memset(b + PG, 0xcc, 3 * PG);
	VT_OK(t, vt_map(e.iommu, b, iova, 4 * PG, RW));

	to_dev(t, &e, iova, len);
	to_ram(t, &e, iova + PG, len);
	d = pattern_diff(b + PG, len, 1);
	CHECKF(t, d < 0, "RAM -> edu -> RAM: byte %ld differs (0x%02x)", d,
	       d < 0 ? 0 : b[PG + d]);
	d = fill_diff(b + PG + len, PG - len, 0xcc);
	CHECKF(t, d < 0, "edu wrote past its %u bytes (offset %ld)", len, d);

	/* A transfer starting inside a page lands at that offset. */
	to_ram(t, &e, iova + 2 * PG + 0x123, 256);
	d = fill_diff(b + 2 * PG, 0x123, 0xcc);
	CHECKF(t, d < 0, "bytes before the offset changed (%ld)", d);
	d = pattern_diff(b + 2 * PG + 0x123, 256, 1);
	CHECKF(t, d < 0, "transfer at offset 0x123: byte %ld differs", d);
	d = fill_diff(b + 2 * PG + 0x123 + 256, PG - 0x123 - 256, 0xcc);
	CHECKF(t, d < 0, "bytes after the transfer changed (%ld)", d);

	VT_OK(t, vt_unmap(e.iommu, iova, 4 * PG));
	munmap(b, 4 * PG);
	edu_close(&e);
}

/* Two maps next to each other in IOVA space, far apart in the process. */
static void test_across_maps(struct vt *t, void *arg)
{
	const uint64_t iova = 0x300000;
	uint8_t *src, *lo, *hi;
	struct edu e;
	long d;

	(void)arg;
	edu_open(t, &e, VT_EDU0);
	src = buffer(t, 1);
	lo = buffer(t, 3);
	hi = buffer(t, 3);
	pattern(src, PG, 2);
	memset(lo, 0xcc, 3 * PG);
	memset(hi, 0xdd, 3 * PG);
	VT_OK(t, vt_map(e.iommu, src, 0x200000, PG, RW));
	/* Map the middle page of each so that a stray write is visible. */
	VT_OK(t, vt_map(e.iommu, lo + PG, iova, PG, RW));
	VT_OK(t, vt_map(e.iommu, hi + PG, iova + PG, PG, RW));

	to_dev(t, &e, 0x200000, 3000);
	to_ram(t, &e, iova + PG - 1000, 3000);
	d = pattern_diff(lo + 2 * PG - 1000, 1000, 2);
	CHECKF(t, d < 0, "first 1000 bytes: byte %ld differs", d);
	d = pattern_diff_at(hi + PG, 2000, 2, 1000);
	CHECKF(t, d < 0, "rest in the second map: byte %ld differs", d);
	d = fill_diff(lo, 2 * PG - 1000, 0xcc);
	CHECKF(t, d < 0, "first buffer changed before the IOVA (%ld)", d);
	d = fill_diff(hi + PG + 2000, 2 * PG - 2000, 0xdd);
	CHECKF(t, d < 0, "second buffer changed after the transfer (%ld)", d);

	VT_OK(t, vt_unmap(e.iommu, 0, 0x10000000));
	edu_close(&e);
}

/*
 * After UNMAP_DMA the device reaches neither direction: a write into the
 * old IOVA leaves the memory alone, and a read from it does not fetch
 * the memory's new contents.
 */
static void test_unmapped_unreachable(struct vt *t, void *arg)
{
	const uint64_t iova = 0x400000, iova2 = 0x800000;
	const uint32_t len = 2048;
	struct edu e;
	uint8_t *b;
	long d;

	(void)arg;
	edu_open(t, &e, VT_EDU0);
	b = buffer(t, 2);
	pattern(b, PG, 3);
	VT_OK(t, vt_map(e.iommu, b, iova, 2 * PG, RW));
	to_dev(t, &e, iova, len);	/* edu buffer holds pattern 3 */
	VT_OK(t, vt_unmap(e.iommu, iova, 2 * PG));

	memset(b + PG, 0xcc, PG);
	to_ram(t, &e, iova + PG, len);
	d = fill_diff(b + PG, PG, 0xcc);
	CHECKF(t, d < 0, "edu wrote through an unmapped IOVA (offset %ld)", d);

	pattern(b, PG, 4);
	to_dev(t, &e, iova, len);	/* must not fetch pattern 4 */
	VT_OK(t, vt_map(e.iommu, b, iova2, 2 * PG, RW));
	to_ram(t, &e, iova2 + PG, len);
	CHECKF(t, pattern_diff(b + PG, len, 4) >= 0,
	       "edu read memory through an unmapped IOVA");
	/* And the new mapping is live: the old pattern came back. */
	d = pattern_diff(b + PG, len, 3);
	CHECKF(t, d < 0 || fill_diff(b + PG, len, 0) < 0,
	       "edu buffer is neither the old data nor zero (byte %ld)", d);
	VT_OK(t, vt_unmap(e.iommu, iova2, 2 * PG));
	munmap(b, 2 * PG);
	edu_close(&e);
}

/* READ means the device may read; without WRITE it may not write. */
static void test_read_only_map(struct vt *t, void *arg)
{
	const uint64_t iova = 0x500000;
	const uint32_t len = 1024;
	struct edu e;
	uint8_t *b;
	long d;

	(void)arg;
	edu_open(t, &e, VT_EDU0);
	b = buffer(t, 2);
	pattern(b, PG, 5);
	memset(b + PG, 0xcc, PG);
	VT_OK(t, vt_map(e.iommu, b, iova, 2 * PG, VFIO_DMA_MAP_FLAG_READ));
	to_dev(t, &e, iova, len);
	to_ram(t, &e, iova + PG, len);
	d = fill_diff(b + PG, PG, 0xcc);
	CHECKF(t, d < 0, "edu wrote into a READ-only mapping (offset %ld)", d);
	VT_OK(t, vt_unmap(e.iommu, iova, 2 * PG));

	/* The read did happen: write the buffer out through a WRITE map. */
	VT_OK(t, vt_map(e.iommu, b + PG, iova, PG, VFIO_DMA_MAP_FLAG_WRITE));
	to_ram(t, &e, iova, len);
	d = pattern_diff(b + PG, len, 5);
	CHECKF(t, d < 0, "READ-only map: the device read wrong data (%ld)", d);
	VT_OK(t, vt_unmap(e.iommu, iova, PG));
	munmap(b, 2 * PG);
	edu_close(&e);
}

#define RUN(t, fn) do {							\
	VT_RUN(t, fn, NULL);						\
	close_range(3, ~0U, 0);						\
} while (0)

int main(void)
{
	struct vt t = { .prog = "t-dma" };

	RUN(&t, test_roundtrip);
	RUN(&t, test_across_maps);
	RUN(&t, test_unmapped_unreachable);
	RUN(&t, test_read_only_map);
	return vt_done(&t);
}
