// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-iommu: the IOMMU fd's ioctls and their argument rules, on testdev0's
 * group (no DMA here, t-dma does that).  Every refused call must leave
 * nothing pinned, so the cases compare the guest's FOLL_PIN count before
 * and after.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)

struct ctx {
	int group;
	int iommu;
	uint8_t *buf;		/* BUF_PAGES pages, read/write, touched */
	long pins;		/* pinned pages when the case started */
};

#define BUF_PAGES	16

static long pinned(struct vt *t)
{
	long n = vt_pinned_now();

	if (n < 0)
		vt_skip(t, "no nr_foll_pin_* in /proc/vmstat: %s",
			strerror(errno));
	return n;
}

#define CHECK_PINS(t, c, delta) do {					\
	long __now = pinned(t);						\
	VT_CHECKF((t), __now == (c)->pins + (delta),			\
		  "%ld pages pinned, want %ld (start %ld + %ld)", __now, \
		  (c)->pins + (long)(delta), (c)->pins, (long)(delta));	\
} while (0)

static void setup(struct vt *t, struct ctx *c)
{
	c->group = vt_open_group_of(VT_TESTDEV0);
	VT_CHECKF(t, c->group >= 0, "open the group of %s: %s", VT_TESTDEV0,
		  strerror(errno));
	c->iommu = VT_OK(t, vt_iommu_fd(c->group));
	c->buf = mmap(NULL, BUF_PAGES * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, c->buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(c->buf, 0x11, BUF_PAGES * PG);
	c->pins = pinned(t);
}

static void teardown(struct ctx *c)
{
	munmap(c->buf, BUF_PAGES * PG);
	close(c->iommu);
	close(c->group);
}

static int map_raw(int iommu, uint32_t argsz, uint32_t flags, uint64_t vaddr,
		   uint64_t iova, uint64_t size)
{
	struct vfio_dma_map m = {
		.argsz = argsz, .flags = flags, .vaddr = vaddr,
		.iova = iova, .size = size,
	};

	return ioctl(iommu, VFIO_IOMMU_MAP_DMA, &m);
}

static int map(int iommu, uint32_t flags, void *vaddr, uint64_t iova,
	       uint64_t size)
{
	return map_raw(iommu, sizeof(struct vfio_dma_map), flags,
		       (uintptr_t)vaddr, iova, size);
}

static int unmap_raw(int iommu, uint32_t argsz, uint32_t flags, uint64_t iova,
		     uint64_t size)
{
	struct vfio_dma_unmap u = {
		.argsz = argsz, .flags = flags, .iova = iova, .size = size,
	};

	return ioctl(iommu, VFIO_IOMMU_UNMAP_DMA, &u);
}

/*
 * The page sizes must be the domain's.  For VT-d (the test VM) those
 * follow from the unit's capability register: 4 KiB, plus 2 MiB and 1 GiB
 * as its second-level large page support (SLLPS, bits 34-37) allows.
 */
static void check_pgsizes(struct vt *t, uint64_t bitmap)
{
	char buf[64];
	uint64_t cap, want = PG;
	unsigned int sllps;
	int levels = 0;

	if (vt_read_file("/sys/class/iommu/dmar0/intel-iommu/cap", buf,
			 sizeof(buf)) < 0) {
		printf("# no VT-d unit in sysfs: page sizes not compared\n");
		return;
	}
	cap = strtoull(buf, NULL, 16);
	sllps = (cap >> 34) & 0xf;
	while (sllps >> levels)
		levels++;
	if (levels > 2) {
		printf("# VT-d SLLPS 0x%x: not compared\n",
		       sllps);
		return;
	}
	if (levels >= 1)
		want |= 2UL << 20;
	if (levels >= 2)
		want |= 1UL << 30;
	VT_CHECKF(t, bitmap == want, "pgsize_bitmap 0x%llx, but the VT-d unit "
		  "(cap 0x%llx) gives 0x%llx", (unsigned long long)bitmap,
		  (unsigned long long)cap, (unsigned long long)want);
}

static void test_info(struct vt *t, void *arg)
{
	struct {
		struct vfio_iommu_info info;
		unsigned char tail[32];
	} big;
	struct vfio_iommu_info info;
	struct ctx c;
	long ret;

	(void)arg;
	setup(t, &c);
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info) - 1;
	VT_ERRNO(t, ioctl(c.iommu, VFIO_IOMMU_GET_INFO, &info), EINVAL);
	info.argsz = 8;
	VT_ERRNO(t, ioctl(c.iommu, VFIO_IOMMU_GET_INFO, &info), EINVAL);

	memset(&info, 0xff, sizeof(info));
	info.argsz = sizeof(info);
	ret = ioctl(c.iommu, VFIO_IOMMU_GET_INFO, &info);
	VT_CHECKF(t, ret == 0, "GET_INFO returned %ld (%s)", ret,
		  ret < 0 ? strerror(errno) : "want 0");
	printf("# iommu: iova 0x%llx-0x%llx, pgsizes 0x%llx, flags 0x%x\n",
	       (unsigned long long)info.iova_min,
	       (unsigned long long)info.iova_max,
	       (unsigned long long)info.pgsize_bitmap, info.flags);
	VT_CHECKF(t, info.flags == 0, "flags 0x%x: none is defined", info.flags);
	VT_CHECKF(t, info.iova_min < info.iova_max, "iova 0x%llx >= max 0x%llx",
		  (unsigned long long)info.iova_min,
		  (unsigned long long)info.iova_max);
	/* edu DMA needs IOVAs below 256 MiB; any VT-d aperture covers 4 GiB. */
	VT_CHECKF(t, info.iova_min == 0 && info.iova_max >= 0xffffffffULL,
		  "aperture 0x%llx-0x%llx does not cover the low 4 GiB",
		  (unsigned long long)info.iova_min,
		  (unsigned long long)info.iova_max);
	VT_CHECKF(t, ((info.iova_max + 1) & 0xfff) == 0,
		  "iova_max 0x%llx is not the end of a page",
		  (unsigned long long)info.iova_max);
	VT_CHECKF(t, info.pgsize_bitmap & PG, "pgsize_bitmap 0x%llx lacks 4 KiB",
		  (unsigned long long)info.pgsize_bitmap);
	VT_CHECKF(t, !(info.pgsize_bitmap & (PG - 1)),
		  "pgsize_bitmap 0x%llx has sizes below 4 KiB",
		  (unsigned long long)info.pgsize_bitmap);

	check_pgsizes(t, info.pgsize_bitmap);

	memset(&big, 0x5a, sizeof(big));
	big.info.argsz = sizeof(big);
	VT_CHECKF(t, ioctl(c.iommu, VFIO_IOMMU_GET_INFO, &big) == 0,
		  "GET_INFO with argsz %zu: %s", sizeof(big), strerror(errno));
	VT_CHECKF(t, big.info.pgsize_bitmap == info.pgsize_bitmap &&
		  big.info.iova_max == info.iova_max,
		  "a larger argsz changed the answer");
	VT_CHECKF(t, big.tail[0] == 0x5a && big.tail[31] == 0x5a,
		  "kernel wrote past struct vfio_iommu_info");
	teardown(&c);
}

static void test_map_flags(struct vt *t, void *arg)
{
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_ERRNO(t, map(c.iommu, 0, c.buf, 0x10000, PG), EINVAL);
	VT_ERRNO(t, map(c.iommu, RW | (1 << 2), c.buf, 0x10000, PG), EINVAL);
	VT_ERRNO(t, map(c.iommu, RW | (1U << 31), c.buf, 0x10000, PG), EINVAL);
	VT_ERRNO(t, map(c.iommu, VFIO_DMA_MAP_FLAG_READ | (1 << 8), c.buf,
			0x10000, PG), EINVAL);
	CHECK_PINS(t, &c, 0);
	/* Either bit alone is enough. */
	VT_OK(t, map(c.iommu, VFIO_DMA_MAP_FLAG_READ, c.buf, 0x10000, PG));
	VT_OK(t, map(c.iommu, VFIO_DMA_MAP_FLAG_WRITE, c.buf + PG, 0x11000,
		     PG));
	CHECK_PINS(t, &c, 2);
	VT_OK(t, vt_unmap(c.iommu, 0x10000, 2 * PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

static void test_map_argsz(struct vt *t, void *arg)
{
	struct {
		struct vfio_dma_map m;
		unsigned char tail[16];
	} big;
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_ERRNO(t, map_raw(c.iommu, sizeof(struct vfio_dma_map) - 1, RW,
			    (uintptr_t)c.buf, 0x10000, PG), EINVAL);
	VT_ERRNO(t, map_raw(c.iommu, 0, RW, (uintptr_t)c.buf, 0x10000, PG),
		 EINVAL);
	VT_ERRNO(t, unmap_raw(c.iommu, sizeof(struct vfio_dma_unmap) - 1, 0,
			      0x10000, PG), EINVAL);
	CHECK_PINS(t, &c, 0);

	memset(&big, 0, sizeof(big));
	big.m.argsz = sizeof(big);
	big.m.flags = RW;
	big.m.vaddr = (uintptr_t)c.buf;
	big.m.iova = 0x10000;
	big.m.size = PG;
	VT_OK(t, ioctl(c.iommu, VFIO_IOMMU_MAP_DMA, &big));
	CHECK_PINS(t, &c, 1);
	VT_OK(t, unmap_raw(c.iommu, sizeof(struct vfio_dma_unmap) + 16, 0,
			   0x10000, PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

static void test_map_alignment(struct vt *t, void *arg)
{
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_ERRNO(t, map(c.iommu, RW, c.buf + 8, 0x10000, PG), EINVAL);
	VT_ERRNO(t, map(c.iommu, RW, c.buf + 2048, 0x10000, PG), EINVAL);
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0x10008, PG), EINVAL);
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0x10800, PG), EINVAL);
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0x10000, PG + 8), EINVAL);
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0x10000, 2048), EINVAL);
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0x10000, 1), EINVAL);
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

static void test_map_size_zero(struct vt *t, void *arg)
{
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0x10000, 0), EINVAL);
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

static void test_map_wrap(struct vt *t, void *arg)
{
	struct ctx c;

	(void)arg;
	setup(t, &c);
	/* iova + size wraps past 2^64. */
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0xfffffffffffff000ULL, 2 * PG),
		 EINVAL);
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0x10000, 0xfffffffffffff000ULL),
		 EINVAL);
	/* vaddr + size wraps. */
	VT_ERRNO(t, map_raw(c.iommu, sizeof(struct vfio_dma_map), RW,
			    0xfffffffffffff000ULL, 0x10000, 2 * PG), EINVAL);
	VT_ERRNO(t, unmap_raw(c.iommu, sizeof(struct vfio_dma_unmap), 0,
			      0xfffffffffffff000ULL, 2 * PG), EINVAL);
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

/* The last page of the aperture maps; the first page past it does not. */
static void test_map_aperture(struct vt *t, void *arg)
{
	struct vfio_iommu_info info = { .argsz = sizeof(info) };
	uint64_t top;
	struct ctx c;
	int ret;

	(void)arg;
	setup(t, &c);
	VT_OK(t, ioctl(c.iommu, VFIO_IOMMU_GET_INFO, &info));
	if (info.iova_max == ~0ULL)
		vt_skip(t, "the aperture ends at 2^64: nothing lies past it");
	top = info.iova_max + 1 - PG;
	/* Straddling the end: its last page lies past iova_max. */
	ret = map(c.iommu, RW, c.buf, top, 2 * PG);
	VT_CHECKF(t, ret == -1, "map straddling the aperture's end succeeded");
	CHECK_PINS(t, &c, 0);
	VT_OK(t, map(c.iommu, RW, c.buf, top, PG));
	CHECK_PINS(t, &c, 1);
	errno = 0;
	ret = map(c.iommu, RW, c.buf + PG, info.iova_max + 1, PG);
	VT_CHECKF(t, ret == -1 && errno != 0,
		  "map at iova_max + 1 (0x%llx) succeeded",
		  (unsigned long long)info.iova_max + 1);
	VT_CHECKF(t, ret == -1 && (errno == EINVAL || errno == EFAULT ||
				   errno == ERANGE),
		  "map past the aperture: %s, want EINVAL (or EFAULT/ERANGE)",
		  strerror(errno));
	CHECK_PINS(t, &c, 1);
	VT_OK(t, vt_unmap(c.iommu, top, PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

/*
 * The window the IOMMU keeps for itself (x86: MSI writes at 0xfee00000,
 * the group's reserved_regions in sysfs) is no IOVA of ours: a map there
 * or across its edge is EINVAL with nothing pinned; the pages around it
 * map.
 */
static void test_map_reserved(struct vt *t, void *arg)
{
	unsigned long long lo = 0, hi = 0;
	char path[96], line[128];
	struct ctx c;
	FILE *f;
	int ret;

	(void)arg;
	snprintf(path, sizeof(path),
		 "/sys/kernel/iommu_groups/%d/reserved_regions",
		 vt_group_id(VT_TESTDEV0));
	f = fopen(path, "r");
	VT_CHECKF(t, f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " msi") &&
		    sscanf(line, "%llx %llx", &lo, &hi) == 2)
			break;
	fclose(f);
	if (!hi)
		vt_skip(t, "no msi window in %s", path);
	VT_CHECKF(t, lo == 0xfee00000ULL && hi == 0xfeefffffULL,
		  "msi window 0x%llx-0x%llx, want 0xfee00000-0xfeefffff", lo,
		  hi);

	setup(t, &c);
	errno = 0;
	ret = map(c.iommu, RW, c.buf, lo, PG);
	VT_CHECKF(t, ret == -1 && errno == EINVAL,
		  "map at 0x%llx (the msi window): %d/%s, want -1/EINVAL", lo,
		  ret, strerror(errno));
	CHECK_PINS(t, &c, 0);
	errno = 0;
	ret = map(c.iommu, RW, c.buf, hi + 1 - PG, PG);
	VT_CHECKF(t, ret == -1 && errno == EINVAL,
		  "map of the window's last page: %d/%s, want -1/EINVAL", ret,
		  strerror(errno));
	errno = 0;
	ret = map(c.iommu, RW, c.buf, lo - PG, 2 * PG);
	VT_CHECKF(t, ret == -1 && errno == EINVAL,
		  "map across the window's start: %d/%s, want -1/EINVAL", ret,
		  strerror(errno));
	CHECK_PINS(t, &c, 0);
	VT_OK(t, map(c.iommu, RW, c.buf, lo - PG, PG));
	VT_OK(t, map(c.iommu, RW, c.buf + PG, hi + 1, PG));
	CHECK_PINS(t, &c, 2);
	VT_OK(t, vt_unmap(c.iommu, lo - PG, PG));
	VT_OK(t, vt_unmap(c.iommu, hi + 1, PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

static void test_map_overlap(struct vt *t, void *arg)
{
	const uint64_t base = 0x100000;
	uint8_t *b;
	struct ctx c;

	(void)arg;
	setup(t, &c);
	b = c.buf;
	VT_OK(t, map(c.iommu, RW, b, base, 4 * PG));
	CHECK_PINS(t, &c, 4);
	/* exact */
	VT_ERRNO(t, map(c.iommu, RW, b + 4 * PG, base, 4 * PG), EBUSY);
	/* partial, above and below */
	VT_ERRNO(t, map(c.iommu, RW, b + 4 * PG, base + 2 * PG, 4 * PG), EBUSY);
	VT_ERRNO(t, map(c.iommu, RW, b + 4 * PG, base - 2 * PG, 3 * PG), EBUSY);
	/* containing */
	VT_ERRNO(t, map(c.iommu, RW, b + 4 * PG, base - PG, 6 * PG), EBUSY);
	/* contained */
	VT_ERRNO(t, map(c.iommu, RW, b + 4 * PG, base + PG, PG), EBUSY);
	/* last page only */
	VT_ERRNO(t, map(c.iommu, RW, b + 4 * PG, base + 3 * PG, PG), EBUSY);
	CHECK_PINS(t, &c, 4);
	/* Neighbours on both sides do not overlap. */
	VT_OK(t, map(c.iommu, RW, b + 4 * PG, base + 4 * PG, PG));
	VT_OK(t, map(c.iommu, RW, b + 5 * PG, base - PG, PG));
	CHECK_PINS(t, &c, 6);
	VT_OK(t, vt_unmap(c.iommu, base - PG, 6 * PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

static void test_map_unmapped_vaddr(struct vt *t, void *arg)
{
	uint8_t *p;
	struct ctx c;

	(void)arg;
	setup(t, &c);
	p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, p != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(p, 1, 4 * PG);
	/* Last page missing: the first three must be unpinned again. */
	VT_OK(t, munmap(p + 3 * PG, PG));
	VT_ERRNO(t, map(c.iommu, RW, p, 0x10000, 4 * PG), EFAULT);
	CHECK_PINS(t, &c, 0);
	/* Nothing there at all. */
	VT_OK(t, munmap(p, 3 * PG));
	VT_ERRNO(t, map(c.iommu, RW, p, 0x10000, 2 * PG), EFAULT);
	CHECK_PINS(t, &c, 0);
	/* The failed calls left no mapping behind. */
	VT_OK(t, map(c.iommu, RW, c.buf, 0x10000, 4 * PG));
	VT_OK(t, vt_unmap(c.iommu, 0x10000, 4 * PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

/* PG_dirty of the page at @p, or a skip when it cannot be read. */
static int page_dirty(struct vt *t, const void *p)
{
	int dirty = vt_page_dirty(p);

	if (dirty < 0)
		vt_skip(t, "page flags of %p: %s", p, strerror(errno));
	return dirty;
}

/* @n fresh anonymous pages, written by the CPU and not PG_dirty. */
static uint8_t *clean_pages(struct vt *t, size_t n)
{
	uint8_t *p;

	p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, p != MAP_FAILED, "mmap: %s", strerror(errno));
	/* A huge page would be one frame for all: keep them 4 KiB. */
	madvise(p, n * PG, MADV_NOHUGEPAGE);
	memset(p, 1, n * PG);
	if (page_dirty(t, p))
		vt_skip(t, "a fresh anonymous page is PG_dirty on this kernel");
	return p;
}

/*
 * The device may write a page mapped for WRITE until it is unmapped, so
 * an unpin must dirty it, or the page cache may drop what the device
 * wrote.  A map that fails half way through pinning has mapped nothing
 * yet (the pages go into the IOMMU once all are pinned, vfio_dma.c): no
 * device saw its pages, and they come back clean.  Shown on anonymous
 * pages, whose PG_dirty only such an unpin sets; a successful map and
 * unmap show that the flag is seen.
 */
static void test_map_error_dirties(struct vt *t, void *arg)
{
	uint8_t *p;
	struct ctx c;

	(void)arg;
	setup(t, &c);
	p = clean_pages(t, 4);
	VT_OK(t, map(c.iommu, RW, p, 0x10000, 4 * PG));
	VT_OK(t, vt_unmap(c.iommu, 0x10000, 4 * PG));
	VT_CHECKF(t, page_dirty(t, p) == 1, "a page mapped READ|WRITE is "
		  "not PG_dirty after its unmap");
	munmap(p, 4 * PG);

	/* Last page missing: the map fails after pinning the first three. */
	p = clean_pages(t, 4);
	VT_OK(t, munmap(p + 3 * PG, PG));
	VT_ERRNO(t, map(c.iommu, VFIO_DMA_MAP_FLAG_READ, p, 0x10000, 4 * PG),
		 EFAULT);
	VT_CHECKF(t, page_dirty(t, p) == 0, "a page pinned for a READ-only "
		  "map was unpinned dirty");
	VT_ERRNO(t, map(c.iommu, RW, p, 0x10000, 4 * PG), EFAULT);
	CHECK_PINS(t, &c, 0);
	VT_CHECKF(t, page_dirty(t, p) == 0, "a map that failed while "
		  "pinning unpinned a page dirty: was it mapped for the "
		  "device before every page was pinned?");
	munmap(p, 3 * PG);
	teardown(&c);
}

static void test_map_readonly(struct vt *t, void *arg)
{
	uint8_t *p;
	struct ctx c;
	int ret;

	(void)arg;
	setup(t, &c);
	p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, p != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(p, 0x22, 2 * PG);
	VT_OK(t, mprotect(p, 2 * PG, PROT_READ));
	VT_OK(t, map(c.iommu, VFIO_DMA_MAP_FLAG_READ, p, 0x20000, 2 * PG));
	CHECK_PINS(t, &c, 2);

	errno = 0;
	ret = map(c.iommu, VFIO_DMA_MAP_FLAG_WRITE, p, 0x30000, 2 * PG);
	VT_CHECKF(t, ret == -1 && (errno == EFAULT || errno == EPERM),
		  "device-writable map of PROT_READ memory: %d/%s, want "
		  "EFAULT or EPERM", ret, strerror(errno));
	ret = map(c.iommu, RW, p, 0x30000, 2 * PG);
	VT_CHECKF(t, ret == -1 && (errno == EFAULT || errno == EPERM),
		  "READ|WRITE map of PROT_READ memory: %d/%s", ret,
		  strerror(errno));
	CHECK_PINS(t, &c, 2);
	VT_OK(t, vt_unmap(c.iommu, 0x20000, 2 * PG));
	CHECK_PINS(t, &c, 0);
	munmap(p, 2 * PG);
	teardown(&c);
}

static void test_unmap_splits(struct vt *t, void *arg)
{
	const uint64_t base = 0x200000;
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_OK(t, map(c.iommu, RW, c.buf, base, 4 * PG));
	VT_OK(t, vt_unmap(c.iommu, base + PG, 2 * PG));
	CHECK_PINS(t, &c, 2);
	/* Both ends are still mapped... */
	VT_ERRNO(t, map(c.iommu, RW, c.buf + 8 * PG, base, PG), EBUSY);
	VT_ERRNO(t, map(c.iommu, RW, c.buf + 8 * PG, base + 3 * PG, PG), EBUSY);
	VT_ERRNO(t, map(c.iommu, RW, c.buf + 8 * PG, base, 2 * PG), EBUSY);
	/* ...and the hole is free, in one piece or two. */
	VT_OK(t, map(c.iommu, RW, c.buf + PG, base + PG, 2 * PG));
	CHECK_PINS(t, &c, 4);
	VT_OK(t, vt_unmap(c.iommu, base + PG, 2 * PG));
	VT_OK(t, map(c.iommu, RW, c.buf + PG, base + PG, PG));
	VT_OK(t, map(c.iommu, RW, c.buf + 2 * PG, base + 2 * PG, PG));
	CHECK_PINS(t, &c, 4);
	/* Cutting off a head and a tail works as well. */
	VT_OK(t, vt_unmap(c.iommu, base, PG));
	VT_OK(t, vt_unmap(c.iommu, base + 3 * PG, PG));
	CHECK_PINS(t, &c, 2);
	VT_OK(t, map(c.iommu, RW, c.buf, base, PG));
	VT_OK(t, vt_unmap(c.iommu, base, 4 * PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

static void test_unmap_spans_maps(struct vt *t, void *arg)
{
	const uint64_t base = 0x300000;
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_OK(t, map(c.iommu, RW, c.buf, base, PG));
	VT_OK(t, map(c.iommu, RW, c.buf + PG, base + 2 * PG, 2 * PG));
	VT_OK(t, map(c.iommu, RW, c.buf + 3 * PG, base + 7 * PG, PG));
	CHECK_PINS(t, &c, 4);
	VT_OK(t, vt_unmap(c.iommu, base, 16 * PG));
	CHECK_PINS(t, &c, 0);
	/* Every one of them is gone: the whole range maps again. */
	VT_OK(t, map(c.iommu, RW, c.buf, base, 8 * PG));
	CHECK_PINS(t, &c, 8);
	VT_OK(t, vt_unmap(c.iommu, base, 8 * PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

static void test_unmap_nothing(struct vt *t, void *arg)
{
	struct ctx c;
	long ret;

	(void)arg;
	setup(t, &c);
	ret = vt_unmap(c.iommu, 0x400000, 4 * PG);
	VT_CHECKF(t, ret == 0, "unmap of an empty range: %ld (%s), want 0", ret,
		  ret < 0 ? strerror(errno) : "not 0");
	/* Next to a mapping, still nothing to do. */
	VT_OK(t, map(c.iommu, RW, c.buf, 0x500000, PG));
	ret = vt_unmap(c.iommu, 0x501000, PG);
	VT_CHECKF(t, ret == 0, "unmap next to a mapping: %ld (%s)", ret,
		  ret < 0 ? strerror(errno) : "not 0");
	CHECK_PINS(t, &c, 1);
	VT_OK(t, vt_unmap(c.iommu, 0x500000, PG));
	teardown(&c);
}

static void test_unmap_args(struct vt *t, void *arg)
{
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_OK(t, map(c.iommu, RW, c.buf, 0x600000, 2 * PG));
	VT_ERRNO(t, unmap_raw(c.iommu, sizeof(struct vfio_dma_unmap), 0,
			      0x600008, PG), EINVAL);
	VT_ERRNO(t, unmap_raw(c.iommu, sizeof(struct vfio_dma_unmap), 0,
			      0x600000, PG + 8), EINVAL);
	VT_ERRNO(t, unmap_raw(c.iommu, sizeof(struct vfio_dma_unmap), 1 << 5,
			      0x600000, PG), EINVAL);
	/* The refused unmaps left the mapping intact. */
	CHECK_PINS(t, &c, 2);
	VT_ERRNO(t, map(c.iommu, RW, c.buf, 0x600000, PG), EBUSY);
	VT_OK(t, vt_unmap(c.iommu, 0x600000, 2 * PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

/* Closing the IOMMU fd with maps in place unpins them all. */
static void test_close_unpins(struct vt *t, void *arg)
{
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_OK(t, map(c.iommu, RW, c.buf, 0x700000, 4 * PG));
	VT_OK(t, map(c.iommu, RW, c.buf + 8 * PG, 0x800000, 8 * PG));
	CHECK_PINS(t, &c, 12);
	VT_OK(t, close(c.iommu));
	c.iommu = -1;
	CHECK_PINS(t, &c, 0);
	/* A fresh IOMMU fd starts empty. */
	c.iommu = VT_OK(t, vt_iommu_fd(c.group));
	VT_OK(t, map(c.iommu, RW, c.buf, 0x700000, 4 * PG));
	VT_OK(t, vt_unmap(c.iommu, 0x700000, 4 * PG));
	CHECK_PINS(t, &c, 0);
	teardown(&c);
}

/*
 * One user's close must not hold up another user's open: unpinning
 * half a gigabyte happens after the topology lock is dropped.  A thread
 * closes an IOMMU fd with BIG_MAP pinned BIG_MAPS times over; once it is inside close(), this
 * thread opens another group's IOMMU and maps a page, and must be done
 * before the close is.  With the unpin under the lock, the open waited
 * for the whole close.
 */
#define BIG_MAP		(512UL << 20)
#define BIG_MAPS	8
#define CLOSE_HEAD_MS	20	/* how far into the close the open starts */

static void test_close_does_not_block_others(struct vt *t, void *arg)
{
	struct vt_closer cl = { .fd = -1 };
	uint64_t begin, end;
	int group, other, iommu, i;
	pthread_t thr;
	void *big;
	int ret;

	(void)arg;
	big = mmap(NULL, BIG_MAP, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED)
		vt_skip(t, "mmap %lu MiB: %s", BIG_MAP >> 20, strerror(errno));
	/* 4 KiB pages, the costly case: a huge page unpins in one go. */
	madvise(big, BIG_MAP, MADV_NOHUGEPAGE);
	memset(big, 0x5a, BIG_MAP);
	group = VT_OK(t, vt_open_group_of(VT_TESTDEV0));
	other = VT_OK(t, vt_open_group_of(VT_EDU1));
	cl.fd = VT_OK(t, vt_iommu_fd(group));
	/* The same pages at BIG_MAPS IOVAs: a close long enough to see. */
	for (i = 0; i < BIG_MAPS; i++)
		VT_OK(t, vt_map(cl.fd, big, (i + 1) * (1ULL << 32), BIG_MAP,
				VFIO_DMA_MAP_FLAG_READ |
				VFIO_DMA_MAP_FLAG_WRITE));

	vt_start_close(t, &thr, &cl, CLOSE_HEAD_MS);
	begin = vt_now_ms();
	iommu = vt_iommu_fd(other);
	ret = iommu < 0 ? -1 : vt_map(iommu, big, 0x100000, PG,
				      VFIO_DMA_MAP_FLAG_READ);
	end = vt_now_ms();
	pthread_join(thr, NULL);
	VT_CHECKF(t, iommu >= 0 && ret == 0, "open and map in %s: %s",
		  VT_EDU1, strerror(errno));
	printf("# close of %d x %lu MiB pinned: %llu ms; another group's "
	       "open+map %llu ms into it: %llu ms\n", BIG_MAPS, BIG_MAP >> 20,
	       (unsigned long long)(cl.end_ms - cl.start_ms),
	       (unsigned long long)(begin - cl.start_ms),
	       (unsigned long long)(end - begin));
	if (cl.end_ms - cl.start_ms <= CLOSE_HEAD_MS * 2)
		vt_skip(t, "the close took only %llu ms: nothing to overlap",
			(unsigned long long)(cl.end_ms - cl.start_ms));
	VT_CHECKF(t, end < cl.end_ms,
		  "the open+map ended %llu ms after the other close did",
		  (unsigned long long)(end - cl.end_ms));
	close(iommu);
	close(other);
	close(group);
	munmap(big, BIG_MAP);
}

static void test_unknown_ioctl(struct vt *t, void *arg)
{
	struct ctx c;

	(void)arg;
	setup(t, &c);
	VT_ERRNO(t, ioctl(c.iommu, _IO(VFIO_TYPE, VFIO_BASE + 60)), ENOTTY);
	VT_ERRNO(t, ioctl(c.iommu, VFIO_GROUP_GET_IOMMU_FD), ENOTTY);
	teardown(&c);
}

int main(void)
{
	struct vt t = { .prog = "t-iommu" };

	VT_RUN_CLOSE(&t, test_info);
	VT_RUN_CLOSE(&t, test_map_flags);
	VT_RUN_CLOSE(&t, test_map_argsz);
	VT_RUN_CLOSE(&t, test_map_alignment);
	VT_RUN_CLOSE(&t, test_map_size_zero);
	VT_RUN_CLOSE(&t, test_map_wrap);
	VT_RUN_CLOSE(&t, test_map_aperture);
	VT_RUN_CLOSE(&t, test_map_reserved);
	VT_RUN_CLOSE(&t, test_map_overlap);
	VT_RUN_CLOSE(&t, test_map_unmapped_vaddr);
	VT_RUN_CLOSE(&t, test_map_error_dirties);
	VT_RUN_CLOSE(&t, test_map_readonly);
	VT_RUN_CLOSE(&t, test_unmap_splits);
	VT_RUN_CLOSE(&t, test_unmap_spans_maps);
	VT_RUN_CLOSE(&t, test_unmap_nothing);
	VT_RUN_CLOSE(&t, test_unmap_args);
	VT_RUN_CLOSE(&t, test_close_unpins);
	VT_RUN_CLOSE(&t, test_close_does_not_block_others);
	VT_RUN_CLOSE(&t, test_unknown_ioctl);
	return vt_done(&t);
}
