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

#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)

struct edu {
	int group;
	int iommu;
	int dev;
	struct vt_edu regs;
};

static void edu_open(struct vt *t, struct edu *e, const char *name)
{
	e->group = vt_open_group_of(name);
	VT_CHECKF(t, e->group >= 0, "open the group of %s: %s", name,
		  strerror(errno));
	e->iommu = VT_OK(t, vt_iommu_fd(e->group));
	e->dev = VT_OK(t, vt_device_fd(e->group, name));
	/* The device may only master the bus once the user allows it. */
	VT_CHECKF(t, vt_edu_init(&e->regs, e->dev) == 0,
		  "%s (id register 0x%08x): enable bus mastering: %s", name,
		  e->regs.id, strerror(errno));
	VT_CHECKF(t, e->regs.bar0_size >= 0x100, "BAR0 size 0x%llx",
		  (unsigned long long)e->regs.bar0_size);
}

static void edu_close(struct edu *e)
{
	close(e->dev);
	close(e->iommu);
	close(e->group);
}

/* RAM at iova -> edu buffer */
static void to_dev(struct vt *t, struct edu *e, uint64_t iova, uint32_t len)
{
	VT_OK(t, vt_edu_dma(&e->regs, 0, iova, len));
}

/* edu buffer -> RAM at iova */
static void to_ram(struct vt *t, struct edu *e, uint64_t iova, uint32_t len)
{
	VT_OK(t, vt_edu_dma(&e->regs, 1, iova, len));
}

static uint8_t *buffer(struct vt *t, size_t pages)
{
	uint8_t *p = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	VT_CHECKF(t, p != MAP_FAILED, "mmap %zu pages: %s", pages,
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
	VT_CHECKF(t, (uintptr_t)b != iova, "buffer happens to sit at its IOVA");
	pattern(b, PG, 1);
	memset(b + PG, 0xcc, 3 * PG);
	VT_OK(t, vt_map(e.iommu, b, iova, 4 * PG, RW));

	to_dev(t, &e, iova, len);
	to_ram(t, &e, iova + PG, len);
	d = pattern_diff(b + PG, len, 1);
	VT_CHECKF(t, d < 0, "RAM -> edu -> RAM: byte %ld differs (0x%02x)", d,
		  d < 0 ? 0 : b[PG + d]);
	d = vt_fill_diff(b + PG + len, PG - len, 0xcc);
	VT_CHECKF(t, d < 0, "edu wrote past its %u bytes (offset %ld)", len, d);

	/* A transfer starting inside a page lands at that offset. */
	to_ram(t, &e, iova + 2 * PG + 0x123, 256);
	d = vt_fill_diff(b + 2 * PG, 0x123, 0xcc);
	VT_CHECKF(t, d < 0, "bytes before the offset changed (%ld)", d);
	d = pattern_diff(b + 2 * PG + 0x123, 256, 1);
	VT_CHECKF(t, d < 0, "transfer at offset 0x123: byte %ld differs", d);
	d = vt_fill_diff(b + 2 * PG + 0x123 + 256, PG - 0x123 - 256, 0xcc);
	VT_CHECKF(t, d < 0, "bytes after the transfer changed (%ld)", d);

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
	VT_CHECKF(t, d < 0, "first 1000 bytes: byte %ld differs", d);
	d = pattern_diff_at(hi + PG, 2000, 2, 1000);
	VT_CHECKF(t, d < 0, "rest in the second map: byte %ld differs", d);
	d = vt_fill_diff(lo, 2 * PG - 1000, 0xcc);
	VT_CHECKF(t, d < 0, "first buffer changed before the IOVA (%ld)", d);
	d = vt_fill_diff(hi + PG + 2000, 2 * PG - 2000, 0xdd);
	VT_CHECKF(t, d < 0, "second buffer changed after the transfer (%ld)", d);

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
	d = vt_fill_diff(b + PG, PG, 0xcc);
	VT_CHECKF(t, d < 0, "edu wrote through an unmapped IOVA (offset %ld)", d);

	pattern(b, PG, 4);
	to_dev(t, &e, iova, len);	/* must not fetch pattern 4 */
	VT_OK(t, vt_map(e.iommu, b, iova2, 2 * PG, RW));
	to_ram(t, &e, iova2 + PG, len);
	VT_CHECKF(t, pattern_diff(b + PG, len, 4) >= 0,
		  "edu read memory through an unmapped IOVA");
	/* And the new mapping is live: the old pattern came back. */
	d = pattern_diff(b + PG, len, 3);
	VT_CHECKF(t, d < 0 || vt_fill_diff(b + PG, len, 0) < 0,
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
	d = vt_fill_diff(b + PG, PG, 0xcc);
	VT_CHECKF(t, d < 0, "edu wrote into a READ-only mapping (offset %ld)", d);
	VT_OK(t, vt_unmap(e.iommu, iova, 2 * PG));

	/* The read did happen: write the buffer out through a WRITE map. */
	VT_OK(t, vt_map(e.iommu, b + PG, iova, PG, VFIO_DMA_MAP_FLAG_WRITE));
	to_ram(t, &e, iova, len);
	d = pattern_diff(b + PG, len, 5);
	VT_CHECKF(t, d < 0, "READ-only map: the device read wrong data (%ld)", d);
	VT_OK(t, vt_unmap(e.iommu, iova, PG));
	munmap(b, 2 * PG);
	edu_close(&e);
}

int main(void)
{
	struct vt t = { .prog = "t-dma" };

	VT_RUN_CLOSE(&t, test_roundtrip);
	VT_RUN_CLOSE(&t, test_across_maps);
	VT_RUN_CLOSE(&t, test_unmapped_unreachable);
	VT_RUN_CLOSE(&t, test_read_only_map);
	return vt_done(&t);
}
