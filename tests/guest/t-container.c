// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-container: the container /dev/vfio/vfio of today's VFIO ABI
 * and its type1 IOMMU backend, as upstream drivers/vfio/container.c and
 * vfio_iommu_type1.c define them: API version and extensions, SET_IOMMU,
 * IOMMU_GET_INFO and its capability chain, MAP_DMA/UNMAP_DMA (v1 and v2
 * unmap rules), pinned-page accounting against RLIMIT_MEMLOCK, release
 * on close and on SIGKILL, and two groups sharing one container.
 *
 * Built against the distribution's <linux/vfio.h>, never the seed header.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vt.h"
#include "vtcontainer.h"

#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)
#define IOVA		0x100000ULL	/* edu masks DMA addresses to 28 bits */
#define IOVA2		0x2000000ULL
#define SMALL_LIMIT	(64 * 1024)	/* RLIMIT_MEMLOCK for the child */
#define CHILD_PAGES	64
#define SETTLE_MS	3000		/* bound for an exit to unpin */
#define UNKNOWN_IOCTL	_IO(VFIO_TYPE, VFIO_BASE + 60)

/* ---- helpers ------------------------------------------------------------ */

static long pinned(struct vt *t)
{
	long n = vt_pinned_now();

	if (n < 0)
		vt_skip(t, "no nr_foll_pin_* in /proc/vmstat: %s",
			strerror(errno));
	return n;
}

/* Wait (bounded) for the pinned count to come back to want. */
static long settle(struct vt *t, long want)
{
	uint64_t end = vt_now_ms() + SETTLE_MS;
	long now;

	while ((now = pinned(t)) != want && vt_now_ms() < end)
		usleep(10000);
	return now;
}

static int container_open(struct vt *t)
{
	int fd = vtc_open_container();

	VT_CHECKF(t, fd >= 0, "open %s: %s", VTC_CONTAINER_PATH,
		  strerror(errno));
	return fd;
}

static int group_open(struct vt *t, const char *dev)
{
	int fd = vtc_open_group_of(dev);

	VT_CHECKF(t, fd >= 0, "open /dev/vfio/%d (group of %s): %s",
		  vt_group_id(dev), dev, strerror(errno));
	return fd;
}

/* A container with dev's group in it and an IOMMU of type (-1: none). */
struct ctr {
	int container;
	int group;
};

static void ctr_open(struct vt *t, struct ctr *c, const char *dev, int type)
{
	c->container = container_open(t);
	c->group = group_open(t, dev);
	VT_OK(t, vtc_set_container(c->group, c->container));
	if (type >= 0)
		VT_OK(t, vtc_set_iommu(c->container, type));
}

static void ctr_close(struct ctr *c)
{
	close(c->group);
	close(c->container);
}

static void *anon(struct vt *t, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	VT_CHECKF(t, p != MAP_FAILED, "mmap %zu bytes: %s", len,
		  strerror(errno));
	memset(p, 0x5a, len);
	return p;
}

static int map_raw(int fd, uint32_t argsz, uint32_t flags, void *vaddr,
		   uint64_t iova, uint64_t size)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = argsz, .flags = flags, .vaddr = (uintptr_t)vaddr,
		.iova = iova, .size = size,
	};

	return ioctl(fd, VFIO_IOMMU_MAP_DMA, &m);
}

static int unmap_raw(int fd, uint32_t argsz, uint32_t flags, uint64_t iova,
		     uint64_t size)
{
	struct vfio_iommu_type1_dma_unmap u = {
		.argsz = argsz, .flags = flags, .iova = iova, .size = size,
	};

	return ioctl(fd, VFIO_IOMMU_UNMAP_DMA, &u);
}

/* Unmap [iova, iova + size) and check what the kernel says it unmapped. */
static void unmap_expect(struct vt *t, int fd, uint64_t iova, uint64_t size,
			 uint64_t want)
{
	uint64_t got = ~0ULL;

	VT_CHECKF(t, vtc_unmap(fd, iova, size, &got) == 0,
		  "unmap [0x%llx, +0x%llx): %s", (unsigned long long)iova,
		  (unsigned long long)size, strerror(errno));
	VT_CHECKF(t, got == want, "unmap [0x%llx, +0x%llx) wrote back size "
		  "0x%llx, want 0x%llx", (unsigned long long)iova,
		  (unsigned long long)size, (unsigned long long)got,
		  (unsigned long long)want);
}

/* ---- API version and extensions ----------------------------------------- */

static void test_api_version(struct vt *t, void *arg)
{
	int fd;

	(void)arg;
	fd = container_open(t);
	VT_CHECKF(t, ioctl(fd, VFIO_GET_API_VERSION) == VFIO_API_VERSION,
		  "GET_API_VERSION %d, want %d", ioctl(fd, VFIO_GET_API_VERSION),
		  VFIO_API_VERSION);
	close(fd);
}

static void check_ext(struct vt *t, int fd, unsigned long ext, int want)
{
	int r = ioctl(fd, VFIO_CHECK_EXTENSION, ext);

	VT_CHECKF(t, r == want, "CHECK_EXTENSION(%lu) = %d (%s), want %d",
		  ext, r, r < 0 ? strerror(errno) : "-", want);
}

/*
 * Before SET_IOMMU the container polls every backend; type1 says yes to
 * both of its types and no, never an error, to anything else.  After
 * SET_IOMMU only the chosen backend answers, the same way.
 */
static void test_check_extension(struct vt *t, void *arg)
{
	static const unsigned long no[] = {
		VFIO_SPAPR_TCE_IOMMU, VFIO_NOIOMMU_IOMMU, 0xdead, 0,
	};
	struct ctr c;
	unsigned int i;
	int r;

	(void)arg;
	c.container = container_open(t);
	check_ext(t, c.container, VFIO_TYPE1_IOMMU, 1);
	check_ext(t, c.container, VFIO_TYPE1v2_IOMMU, 1);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		check_ext(t, c.container, no[i], 0);
	r = ioctl(c.container, VFIO_CHECK_EXTENSION, VFIO_UNMAP_ALL);
	VT_CHECKF(t, r == 0 || r == 1, "CHECK_EXTENSION(UNMAP_ALL) = %d", r);

	c.group = group_open(t, VT_EDU0);
	VT_OK(t, vtc_set_container(c.group, c.container));
	VT_OK(t, vtc_set_iommu(c.container, VFIO_TYPE1v2_IOMMU));
	check_ext(t, c.container, VFIO_TYPE1_IOMMU, 1);
	check_ext(t, c.container, VFIO_TYPE1v2_IOMMU, 1);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		check_ext(t, c.container, no[i], 0);
	ctr_close(&c);
}

/*
 * An ioctl the container does not know: EINVAL while no backend is set
 * (container.c passes nothing through), ENOTTY from type1 afterwards.
 */
static void test_unknown_ioctl(struct vt *t, void *arg)
{
	struct ctr c;

	(void)arg;
	c.container = container_open(t);
	VT_ERRNO(t, ioctl(c.container, UNKNOWN_IOCTL), EINVAL);
	c.group = group_open(t, VT_EDU0);
	VT_OK(t, vtc_set_container(c.group, c.container));
	VT_ERRNO(t, ioctl(c.container, UNKNOWN_IOCTL), EINVAL);
	VT_OK(t, vtc_set_iommu(c.container, 0));
	VT_ERRNO(t, ioctl(c.container, UNKNOWN_IOCTL), ENOTTY);
	ctr_close(&c);
}

/* ---- SET_IOMMU ------------------------------------------------------------ */

/*
 * Only a group in the container gives the privilege to set up an IOMMU
 * (vfio_ioctl_set_iommu: an empty group list is EINVAL); until then the
 * backend ioctls have nobody to go to (EINVAL).
 */
static void test_set_iommu_without_group(struct vt *t, void *arg)
{
	struct vfio_iommu_type1_info info = { .argsz = sizeof(info) };
	int fd;
	uint8_t *buf;

	(void)arg;
	fd = container_open(t);
	buf = anon(t, PG);
	VT_ERRNO(t, vtc_set_iommu(fd, VFIO_TYPE1v2_IOMMU), EINVAL);
	VT_ERRNO(t, vtc_set_iommu(fd, VFIO_TYPE1_IOMMU), EINVAL);
	VT_ERRNO(t, ioctl(fd, VFIO_IOMMU_GET_INFO, &info), EINVAL);
	VT_ERRNO(t, vtc_map(fd, buf, IOVA, PG, RW), EINVAL);
	VT_ERRNO(t, vtc_unmap(fd, IOVA, PG, NULL), EINVAL);
	munmap(buf, PG);
	close(fd);
}

/*
 * With a group in it: a type no backend claims leaves ret at its
 * initial -ENODEV in vfio_ioctl_set_iommu (SPAPR and no-IOMMU are not
 * for an IOMMU-backed x86 group either); the first good type wins and
 * any second SET_IOMMU is EINVAL.  Unsetting the last group returns the
 * container to the unset state, where SET_IOMMU works again.
 */
static void test_set_iommu_types(struct vt *t, void *arg)
{
	struct ctr c;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, -1);
	VT_ERRNO(t, vtc_set_iommu(c.container, 0xdead), ENODEV);
	VT_ERRNO(t, vtc_set_iommu(c.container, VFIO_SPAPR_TCE_IOMMU), ENODEV);
	VT_ERRNO(t, vtc_set_iommu(c.container, VFIO_NOIOMMU_IOMMU), ENODEV);
	VT_OK(t, vtc_set_iommu(c.container, VFIO_TYPE1v2_IOMMU));
	VT_ERRNO(t, vtc_set_iommu(c.container, VFIO_TYPE1v2_IOMMU), EINVAL);
	VT_ERRNO(t, vtc_set_iommu(c.container, VFIO_TYPE1_IOMMU), EINVAL);

	VT_OK(t, vtc_unset_container(c.group));
	VT_ERRNO(t, ioctl(c.container, UNKNOWN_IOCTL), EINVAL);
	VT_ERRNO(t, vtc_set_iommu(c.container, VFIO_TYPE1_IOMMU), EINVAL);
	VT_OK(t, vtc_set_container(c.group, c.container));
	VT_OK(t, vtc_set_iommu(c.container, VFIO_TYPE1_IOMMU));
	ctr_close(&c);
}

/* ---- IOMMU_GET_INFO --------------------------------------------------------- */

static void test_iommu_info_argsz(struct vt *t, void *arg)
{
	struct vfio_iommu_type1_info info;
	const uint32_t minsz = offsetof(struct vfio_iommu_type1_info,
					cap_offset);
	struct ctr c;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, 0);

	memset(&info, 0, sizeof(info));
	info.argsz = minsz - 1;
	VT_ERRNO(t, ioctl(c.container, VFIO_IOMMU_GET_INFO, &info), EINVAL);

	/* The pre-capability size: pgsizes, the CAPS flag, the needed size. */
	memset(&info, 0, sizeof(info));
	info.argsz = minsz;
	VT_OK(t, ioctl(c.container, VFIO_IOMMU_GET_INFO, &info));
	VT_CHECKF(t, info.flags & VFIO_IOMMU_INFO_PGSIZES,
		  "flags 0x%x without PGSIZES", info.flags);
	VT_CHECKF(t, info.iova_pgsizes & PG, "iova_pgsizes 0x%llx without "
		  "4 KiB", (unsigned long long)info.iova_pgsizes);
	VT_CHECKF(t, !(info.iova_pgsizes & (PG - 1)),
		  "iova_pgsizes 0x%llx has sizes below 4 KiB",
		  (unsigned long long)info.iova_pgsizes);
	VT_CHECKF(t, info.flags & VFIO_IOMMU_INFO_CAPS,
		  "flags 0x%x without CAPS: no capability chain", info.flags);
	VT_CHECKF(t, info.argsz > sizeof(info), "argsz %u: the chain does "
		  "not ask for room", info.argsz);

	/* The struct with cap_offset but no room: cap_offset stays 0. */
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info);
	info.cap_offset = 0xdead;
	VT_OK(t, ioctl(c.container, VFIO_IOMMU_GET_INFO, &info));
	VT_CHECKF(t, info.flags & VFIO_IOMMU_INFO_CAPS, "flags 0x%x",
		  info.flags);
	VT_CHECKF(t, info.cap_offset == 0, "cap_offset %u without room for "
		  "the chain", info.cap_offset);
	VT_CHECKF(t, info.argsz > sizeof(info), "argsz %u", info.argsz);
	ctr_close(&c);
}

/*
 * Every byte GET_INFO writes back is the kernel's answer: 6.1's struct
 * ends in 4 bytes of padding (later headers name them pad), which used
 * to come back as whatever the kernel stack held.  A refused MAP_DMA
 * first leaves a pattern on the stack the ioctl path reuses, so that
 * stale bytes show.
 */
static void test_iommu_info_no_stack(struct vt *t, void *arg)
{
	const size_t end = offsetof(struct vfio_iommu_type1_info, cap_offset) +
			   sizeof(uint32_t);
	unsigned char buf[sizeof(struct vfio_iommu_type1_info)];
	struct vfio_iommu_type1_dma_map junk;
	struct vfio_iommu_type1_info *info = (void *)buf;
	struct ctr c;
	size_t i;
	int round;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, 0);
	for (round = 0; round < 16; round++) {
		memset(&junk, 0xa5, sizeof(junk));
		junk.argsz = sizeof(junk);
		VT_ERRNO(t, ioctl(c.container, VFIO_IOMMU_MAP_DMA, &junk),
			 EINVAL);
		memset(buf, 0x5a, sizeof(buf));
		info->argsz = sizeof(buf);
		VT_OK(t, ioctl(c.container, VFIO_IOMMU_GET_INFO, buf));
		for (i = end; i < sizeof(buf); i++)
			VT_CHECKF(t, buf[i] == 0,
				  "GET_INFO byte %zu (after cap_offset) is 0x%02x, not 0",
				  i, buf[i]);
	}
	ctr_close(&c);
}

/*
 * The chain (asked for with the size the kernel wanted) has the usable
 * IOVA ranges, sorted and disjoint, none touching the x86 MSI window
 * 0xfee00000-0xfeefffff (VT-d reports it reserved), and covering the
 * IOVAs these tests use.
 */
static void test_iommu_info_iova_ranges(struct vt *t, void *arg)
{
	const struct vfio_iommu_type1_info_cap_iova_range *r;
	const struct vfio_info_cap_header *h;
	struct vfio_iommu_type1_info *info = NULL;
	int covered = 0;
	struct ctr c;
	uint32_t i;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, 0);
	VT_OK(t, vtc_iommu_info(c.container, &info));
	VT_CHECKF(t, info->flags & VFIO_IOMMU_INFO_CAPS, "flags 0x%x",
		  info->flags);
	VT_CHECKF(t, info->cap_offset >= sizeof(*info) &&
		  info->cap_offset < info->argsz, "cap_offset %u, argsz %u",
		  info->cap_offset, info->argsz);
	h = vtc_find_cap(info, info->argsz, info->cap_offset,
			 VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE);
	VT_CHECKF(t, h, "no IOVA_RANGE capability in the chain");
	r = (const void *)h;
	VT_CHECKF(t, h->version == 1, "IOVA_RANGE version %u", h->version);
	VT_CHECKF(t, r->nr_iovas >= 1 && (const char *)&r->iova_ranges[
		  r->nr_iovas] <= (const char *)info + info->argsz,
		  "nr_iovas %u does not fit argsz %u", r->nr_iovas,
		  info->argsz);
	for (i = 0; i < r->nr_iovas; i++) {
		uint64_t s = r->iova_ranges[i].start, e = r->iova_ranges[i].end;

		VT_CHECKF(t, s <= e, "range %u: 0x%llx > 0x%llx", i,
			  (unsigned long long)s, (unsigned long long)e);
		VT_CHECKF(t, !i || s > r->iova_ranges[i - 1].end,
			  "range %u not after range %u", i, i - 1);
		VT_CHECKF(t, e < VTC_MSI_BASE || s > VTC_MSI_END,
			  "range %u [0x%llx, 0x%llx] overlaps the MSI window",
			  i, (unsigned long long)s, (unsigned long long)e);
		if (s <= IOVA && e >= 0xfffffffULL)
			covered = 1;
	}
	VT_CHECKF(t, covered, "no range covers [0x%llx, 0xfffffff]",
		  (unsigned long long)IOVA);
	free(info);
	ctr_close(&c);
}

/* type1 also reports how many more mappings it takes (DMA_AVAIL). */
static void test_iommu_info_dma_avail(struct vt *t, void *arg)
{
	const struct vfio_iommu_type1_info_dma_avail *a, *b;
	struct vfio_iommu_type1_info *info = NULL;
	struct ctr c;
	uint8_t *buf;
	uint32_t before;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, 0);
	VT_OK(t, vtc_iommu_info(c.container, &info));
	a = (const void *)vtc_find_cap(info, info->argsz, info->cap_offset,
				       VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL);
	VT_CHECKF(t, a, "no DMA_AVAIL capability in the chain");
	VT_CHECKF(t, a->avail > 1, "avail %u", a->avail);
	before = a->avail;
	free(info);
	buf = anon(t, PG);
	VT_OK(t, vtc_map(c.container, buf, IOVA, PG, RW));
	VT_OK(t, vtc_iommu_info(c.container, &info));
	b = (const void *)vtc_find_cap(info, info->argsz, info->cap_offset,
				       VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL);
	VT_CHECKF(t, b && b->avail == before - 1, "avail %u after one map, "
		  "was %u", b ? b->avail : 0, before);
	free(info);
	ctr_close(&c);
	munmap(buf, PG);
}

/* ---- MAP_DMA ----------------------------------------------------------------- */

static void test_map_dma(struct vt *t, void *arg)
{
	const uint32_t asz = sizeof(struct vfio_iommu_type1_dma_map);
	uint8_t *buf, *ro, *hole;
	long start;
	struct ctr c;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, 0);
	buf = anon(t, 16 * PG);
	/* read-only, with a real page behind it (not the zero page) */
	ro = anon(t, PG);
	VT_OK(t, mprotect(ro, PG, PROT_READ));
	hole = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, hole != MAP_FAILED, "mmap: %s", strerror(errno));
	munmap(hole, PG);	/* an address with nothing behind it */
	start = pinned(t);

	VT_OK(t, vtc_map(c.container, buf, IOVA, 4 * PG, RW));
	VT_CHECKF(t, pinned(t) == start + 4, "%ld pages pinned, want 4",
		  pinned(t) - start);

	/* Overlaps, whatever their shape. */
	VT_ERRNO(t, vtc_map(c.container, buf + 4 * PG, IOVA, 4 * PG, RW),
		 EEXIST);
	VT_ERRNO(t, vtc_map(c.container, buf + 4 * PG, IOVA + 3 * PG, 2 * PG,
			    RW), EEXIST);
	VT_ERRNO(t, vtc_map(c.container, buf + 4 * PG, IOVA - PG, 2 * PG, RW),
		 EEXIST);
	VT_ERRNO(t, vtc_map(c.container, buf + 4 * PG, IOVA - PG, 8 * PG, RW),
		 EEXIST);
	VT_ERRNO(t, vtc_map(c.container, buf + 4 * PG, IOVA + PG, PG, RW),
		 EEXIST);
	/* Adjacent is fine, the same memory twice too. */
	VT_OK(t, vtc_map(c.container, buf + 4 * PG, IOVA + 4 * PG, PG, RW));
	VT_OK(t, vtc_map(c.container, buf, IOVA + 8 * PG, PG,
			 VFIO_DMA_MAP_FLAG_READ));

	/* IOVAs outside the usable ranges: the MSI window. */
	VT_ERRNO(t, vtc_map(c.container, buf, VTC_MSI_BASE, PG, RW), EINVAL);
	VT_ERRNO(t, vtc_map(c.container, buf, VTC_MSI_BASE - PG, 2 * PG, RW),
		 EINVAL);
	VT_ERRNO(t, vtc_map(c.container, buf, VTC_MSI_END + 1 - PG, 2 * PG,
			    RW), EINVAL);

	/* Alignment, size, wrap, flags, argsz. */
	VT_ERRNO(t, vtc_map(c.container, buf, IOVA + 0x10800, PG, RW), EINVAL);
	VT_ERRNO(t, vtc_map(c.container, buf + 0x10, IOVA + 0x10000, PG, RW),
		 EINVAL);
	VT_ERRNO(t, vtc_map(c.container, buf, IOVA + 0x10000, PG + 1, RW),
		 EINVAL);
	VT_ERRNO(t, vtc_map(c.container, buf, IOVA + 0x10000, 0, RW), EINVAL);
	VT_ERRNO(t, vtc_map(c.container, buf, ~0ULL - PG + 1, 2 * PG, RW),
		 EINVAL);
	VT_ERRNO(t, map_raw(c.container, asz, 0, buf, IOVA + 0x10000, PG),
		 EINVAL);
	VT_ERRNO(t, map_raw(c.container, asz, RW | (1u << 7), buf,
			    IOVA + 0x10000, PG), EINVAL);
	VT_ERRNO(t, map_raw(c.container, asz - 1, RW, buf, IOVA + 0x10000,
			    PG), EINVAL);

	/* Memory that cannot be pinned for the access asked for. */
	VT_ERRNO(t, vtc_map(c.container, hole, IOVA + 0x10000, PG, RW),
		 EFAULT);
	VT_ERRNO(t, vtc_map(c.container, ro, IOVA + 0x10000, PG, RW), EFAULT);
	VT_OK(t, vtc_map(c.container, ro, IOVA + 0x10000, PG,
			 VFIO_DMA_MAP_FLAG_READ));

	VT_CHECKF(t, pinned(t) == start + 7, "%ld pages pinned after the "
		  "failed maps, want 7", pinned(t) - start);
	unmap_expect(t, c.container, 0, 0x10000000, 7 * PG);
	VT_CHECKF(t, pinned(t) == start, "%ld pages still pinned after the "
		  "unmap", pinned(t) - start);
	ctr_close(&c);
	munmap(buf, 16 * PG);
	munmap(ro, PG);
}

/* ---- UNMAP_DMA ------------------------------------------------------------- */

static void unmap_arg_errors(struct vt *t, int fd)
{
	const uint32_t asz = sizeof(struct vfio_iommu_type1_dma_unmap);

	VT_ERRNO(t, unmap_raw(fd, asz, 0, IOVA + 0x800, PG), EINVAL);
	VT_ERRNO(t, unmap_raw(fd, asz, 0, IOVA, 0), EINVAL);
	VT_ERRNO(t, unmap_raw(fd, asz, 0, IOVA, PG + 1), EINVAL);
	VT_ERRNO(t, unmap_raw(fd, asz, 1u << 7, IOVA, PG), EINVAL);
	VT_ERRNO(t, unmap_raw(fd, asz - 1, 0, IOVA, PG), EINVAL);
	VT_ERRNO(t, unmap_raw(fd, asz, 0, ~0ULL - PG + 1, 2 * PG), EINVAL);
}

/*
 * type1v2: an unmap must cover whole mappings; one that bisects a
 * mapping at either end is EINVAL and changes nothing.  An unmap over
 * nothing succeeds with size 0; one over several mappings reports their
 * sum.
 */
static void test_unmap_v2(struct vt *t, void *arg)
{
	struct ctr c;
	uint8_t *buf;
	long start;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, VFIO_TYPE1v2_IOMMU);
	buf = anon(t, 8 * PG);
	start = pinned(t);
	VT_OK(t, vtc_map(c.container, buf, IOVA, 4 * PG, RW));
	VT_OK(t, vtc_map(c.container, buf + 4 * PG, IOVA + 4 * PG, 4 * PG,
			 RW));
	unmap_arg_errors(t, c.container);

	VT_ERRNO(t, vtc_unmap(c.container, IOVA, PG, NULL), EINVAL);
	VT_ERRNO(t, vtc_unmap(c.container, IOVA + PG, 3 * PG, NULL), EINVAL);
	VT_ERRNO(t, vtc_unmap(c.container, IOVA + 2 * PG, 4 * PG, NULL),
		 EINVAL);
	VT_ERRNO(t, vtc_unmap(c.container, IOVA - PG, 2 * PG, NULL), EINVAL);
	VT_CHECKF(t, pinned(t) == start + 8, "%ld pinned after refused "
		  "unmaps, want 8", pinned(t) - start);

	unmap_expect(t, c.container, IOVA + 0x100000, 16 * PG, 0);
	unmap_expect(t, c.container, IOVA, 4 * PG, 4 * PG);
	VT_CHECKF(t, pinned(t) == start + 4, "%ld pinned, want 4",
		  pinned(t) - start);
	VT_OK(t, vtc_map(c.container, buf, IOVA, 4 * PG, RW));
	unmap_expect(t, c.container, IOVA - 4 * PG, 16 * PG, 8 * PG);
	VT_CHECKF(t, pinned(t) == start, "%ld still pinned",
		  pinned(t) - start);
	ctr_close(&c);
	munmap(buf, 8 * PG);
}

/*
 * type1 (v1) keeps the old contract: an unmap starting inside a mapping
 * succeeds having unmapped nothing (size 0 written back); one covering
 * a mapping's first IOVA unmaps the whole mapping and reports its full
 * size.
 */
static void test_unmap_v1(struct vt *t, void *arg)
{
	struct ctr c;
	uint8_t *buf;
	long start;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, VFIO_TYPE1_IOMMU);
	buf = anon(t, 8 * PG);
	start = pinned(t);
	VT_OK(t, vtc_map(c.container, buf, IOVA, 4 * PG, RW));
	unmap_arg_errors(t, c.container);

	/*
	 * v1 cuts a mapping where asked, as the seed ABI does (upstream's
	 * v1 would unmap nothing here and report 0): the page goes, the
	 * pages around it stay mapped and pinned.
	 */
	unmap_expect(t, c.container, IOVA + PG, PG, PG);
	VT_CHECKF(t, pinned(t) == start + 3, "%ld pinned, want 3",
		  pinned(t) - start);
	VT_ERRNO(t, vtc_map(c.container, buf, IOVA, PG, RW), EEXIST);
	VT_ERRNO(t, vtc_map(c.container, buf, IOVA + 2 * PG, PG, RW), EEXIST);
	VT_OK(t, vtc_map(c.container, buf + PG, IOVA + PG, PG, RW));

	unmap_expect(t, c.container, IOVA, 4 * PG, 4 * PG);
	VT_CHECKF(t, pinned(t) == start, "%ld still pinned",
		  pinned(t) - start);
	VT_OK(t, vtc_map(c.container, buf, IOVA + PG, PG, RW));
	unmap_expect(t, c.container, 0, 0x10000000, PG);
	ctr_close(&c);
	munmap(buf, 8 * PG);
}

/* VFIO_DMA_UNMAP_FLAG_ALL, when the container says it has it. */
static void test_unmap_all(struct vt *t, void *arg)
{
	const uint32_t asz = sizeof(struct vfio_iommu_type1_dma_unmap);
	struct ctr c;
	uint8_t *buf;
	long start;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, 0);
	if (ioctl(c.container, VFIO_CHECK_EXTENSION, VFIO_UNMAP_ALL) != 1) {
		ctr_close(&c);
		vt_skip(t, "VFIO_UNMAP_ALL not advertised");
	}
	buf = anon(t, 8 * PG);
	start = pinned(t);
	VT_OK(t, vtc_map(c.container, buf, IOVA, 4 * PG, RW));
	VT_OK(t, vtc_map(c.container, buf + 4 * PG, 0x8000000, 4 * PG, RW));
	VT_ERRNO(t, unmap_raw(c.container, asz, VFIO_DMA_UNMAP_FLAG_ALL,
			      IOVA, 0), EINVAL);
	VT_ERRNO(t, unmap_raw(c.container, asz, VFIO_DMA_UNMAP_FLAG_ALL, 0,
			      PG), EINVAL);
	VT_ERRNO(t, unmap_raw(c.container, asz, VFIO_DMA_UNMAP_FLAG_ALL |
			      VFIO_DMA_UNMAP_FLAG_GET_DIRTY_BITMAP, 0, 0),
		 EINVAL);
	{
		uint64_t got = ~0ULL;

		VT_OK(t, vtc_unmap_flags(c.container, 0, 0,
					 VFIO_DMA_UNMAP_FLAG_ALL, &got));
		VT_CHECKF(t, got == 8 * PG, "UNMAP_ALL wrote back 0x%llx, "
			  "want 0x%lx", (unsigned long long)got, 8 * PG);
	}
	VT_CHECKF(t, pinned(t) == start, "%ld still pinned",
		  pinned(t) - start);
	VT_OK(t, vtc_map(c.container, buf, IOVA, 4 * PG, RW));
	unmap_expect(t, c.container, IOVA, 4 * PG, 4 * PG);
	ctr_close(&c);
	munmap(buf, 8 * PG);
}

/* ---- accounting and release --------------------------------------------- */

/* Open the container and group as root, then drop to the user. */
static void prep_limited_user(struct vt *t, void *arg)
{
	struct rlimit rl = { SMALL_LIMIT, SMALL_LIMIT };
	struct ctr *c = arg;

	ctr_open(t, c, VT_TESTDEV0, 0);
	VT_OK(t, setrlimit(RLIMIT_MEMLOCK, &rl));
	VT_OK(t, setgroups(0, NULL));
	VT_OK(t, setgid(VT_USER_GID));
	VT_OK(t, setuid(VT_USER_UID));
}

static void child_over_limit(struct vt *t, void *arg)
{
	const size_t limit_pages = SMALL_LIMIT / PG;
	struct ctr *c = arg;
	struct vt_acct a;
	uint8_t *buf;

	buf = anon(t, 4 * limit_pages * PG);
	a.pins = pinned(t);
	a.kb = vt_locked_kb(0);
	VT_OK(t, vtc_map(c->container, buf, IOVA, limit_pages / 2 * PG, RW));
	VT_CHECK_ACCT(t, &a, limit_pages / 2);
	/* A map that would cross the limit fails and pins nothing. */
	VT_ERRNO(t, vtc_map(c->container, buf + limit_pages * PG, 0x2000000,
			    limit_pages * PG, RW), ENOMEM);
	VT_CHECK_ACCT(t, &a, limit_pages / 2);
	unmap_expect(t, c->container, IOVA, limit_pages / 2 * PG,
		     limit_pages / 2 * PG);
	VT_ERRNO(t, vtc_map(c->container, buf, IOVA, 4 * limit_pages * PG,
			    RW), ENOMEM);
	VT_CHECK_ACCT(t, &a, 0);
	/* Exactly the limit is allowed. */
	VT_OK(t, vtc_map(c->container, buf, IOVA, limit_pages * PG, RW));
	VT_CHECK_ACCT(t, &a, limit_pages);
	/* ... and the IOVA of a failed map is free again. */
	VT_OK(t, vtc_unmap(c->container, IOVA, limit_pages * PG, NULL));
	VT_CHECK_ACCT(t, &a, 0);
	ctr_close(c);
}

static void test_rlimit_enomem(struct vt *t, void *arg)
{
	struct ctr c = { -1, -1 };
	char msg[1024];
	long start;

	(void)arg;
	start = pinned(t);
	if (vt_child_run((uid_t)-1, (gid_t)-1, prep_limited_user,
			 child_over_limit, &c, t->name, msg, sizeof(msg)))
		vt_fail(t, __FILE__, __LINE__, "in the child: %s", msg);
	VT_CHECKF(t, settle(t, start) == start, "%ld pages still pinned "
		  "after the child exited", pinned(t) - start);
}

/*
 * The group holds the container: closing the container fd alone keeps
 * the IOMMU and its mappings (upstream frees them when the last group
 * leaves); closing the group then unpins everything.
 */
static void test_close_unpins(struct vt *t, void *arg)
{
	struct vtc_dev d;
	uint8_t *buf;
	long start;

	(void)arg;
	buf = anon(t, 32 * PG);
	start = pinned(t);
	VT_CHECKF(t, vtc_open_dev(&d, VT_EDU0, 0) == 0, "open %s: %s",
		  VT_EDU0, strerror(errno));
	VT_OK(t, vtc_map(d.container_fd, buf, IOVA, 16 * PG, RW));
	VT_OK(t, vtc_map(d.container_fd, buf + 16 * PG, 0x3000000, 16 * PG,
			 RW));
	VT_CHECKF(t, pinned(t) == start + 32, "%ld pinned, want 32",
		  pinned(t) - start);
	close(d.container_fd);
	d.container_fd = -1;
	VT_CHECKF(t, pinned(t) == start + 32, "%ld pinned after closing the "
		  "container fd with its group still in it, want 32",
		  pinned(t) - start);
	close(d.device_fd);
	d.device_fd = -1;
	close(d.group_fd);
	d.group_fd = -1;
	VT_CHECKF(t, settle(t, start) == start, "%ld pages still pinned "
		  "after closing everything", pinned(t) - start);
	munmap(buf, 32 * PG);
}

/*
 * Unsetting the last group deprivileges the container: the backend and
 * its mappings go, and its ioctls are EINVAL again.
 */
static void test_unset_last_group_unpins(struct vt *t, void *arg)
{
	struct ctr c;
	uint8_t *buf;
	long start;

	(void)arg;
	buf = anon(t, 16 * PG);
	start = pinned(t);
	ctr_open(t, &c, VT_EDU0, 0);
	VT_OK(t, vtc_map(c.container, buf, IOVA, 16 * PG, RW));
	VT_CHECKF(t, pinned(t) == start + 16, "%ld pinned, want 16",
		  pinned(t) - start);
	VT_OK(t, vtc_unset_container(c.group));
	VT_CHECKF(t, pinned(t) == start, "%ld still pinned after the last "
		  "group left", pinned(t) - start);
	VT_ERRNO(t, vtc_map(c.container, buf, IOVA, PG, RW), EINVAL);
	VT_OK(t, vtc_set_container(c.group, c.container));
	VT_OK(t, vtc_set_iommu(c.container, 0));
	/* A fresh backend: the old IOVA is free. */
	VT_OK(t, vtc_map(c.container, buf, IOVA, 16 * PG, RW));
	ctr_close(&c);
	VT_CHECKF(t, settle(t, start) == start, "%ld still pinned",
		  pinned(t) - start);
	munmap(buf, 16 * PG);
}

/*
 * A thread that maps and unmaps one page in a loop while the last group
 * leaves: MAP_DMA and UNMAP_DMA hold the container's IOMMU without
 * vfio.lock (vfio_container_use()), so the set closes when the last of
 * them returns, and every call either worked or found the container
 * unset.
 */
struct mapper {
	int container;
	uint8_t *buf;
	volatile int stop;
	long ok, einval, other;
	int other_errno;
};

static void *mapper_thread(void *arg)
{
	struct mapper *m = arg;
	int ret;

	while (!m->stop) {
		ret = vtc_map(m->container, m->buf, IOVA, PG, RW);
		if (!ret)
			ret = vtc_unmap(m->container, IOVA, PG, NULL);
		if (!ret) {
			m->ok++;
		} else if (errno == EINVAL) {
			m->einval++;
		} else {
			m->other++;
			m->other_errno = errno;
		}
	}
	return NULL;
}

static void test_unset_during_maps(struct vt *t, void *arg)
{
	struct mapper m = { 0 };
	pthread_t thread;
	struct ctr c;
	int round;
	long start;

	(void)arg;
	m.buf = anon(t, PG);
	start = pinned(t);
	ctr_open(t, &c, VT_EDU0, 0);
	m.container = c.container;
	for (round = 0; round < 20; round++) {
		m.stop = 0;
		VT_CHECKF(t, !pthread_create(&thread, NULL, mapper_thread, &m),
			  "pthread_create");
		usleep(2000 + 1000 * round);
		VT_OK(t, vtc_unset_container(c.group));
		usleep(2000);
		m.stop = 1;
		pthread_join(thread, NULL);
		VT_CHECKF(t, settle(t, start) == start, "round %d: %ld pinned "
			  "after the last group left", round,
			  pinned(t) - start);
		VT_ERRNO(t, vtc_map(c.container, m.buf, IOVA, PG, RW), EINVAL);
		VT_OK(t, vtc_set_container(c.group, c.container));
		VT_OK(t, vtc_set_iommu(c.container, 0));
	}
	VT_CHECKF(t, !m.other, "%ld calls failed with %s", m.other,
		  strerror(m.other_errno));
	VT_CHECKF(t, m.ok > 0 && m.einval > 0, "%ld calls worked, %ld found "
		  "the container unset: the race was not run", m.ok, m.einval);
	/* The set opened again is a fresh one that maps. */
	VT_OK(t, vtc_map(c.container, m.buf, IOVA, PG, RW));
	ctr_close(&c);
	VT_CHECKF(t, settle(t, start) == start, "%ld still pinned",
		  pinned(t) - start);
	munmap(m.buf, PG);
}

/* Child: container, group, IOMMU, CHILD_PAGES mapped, a device fd. */
static void __attribute__((noreturn)) victim(int ready, const char *dev)
{
	struct vtc_dev d;
	uint8_t *buf;
	char c = 'r';

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (vtc_open_dev(&d, dev, 0))
		_exit(10);
	buf = mmap(NULL, CHILD_PAGES * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(12);
	memset(buf, 0x66, CHILD_PAGES * PG);
	if (vtc_map(d.container_fd, buf, IOVA, CHILD_PAGES / 2 * PG, RW) ||
	    vtc_map(d.container_fd, buf + CHILD_PAGES / 2 * PG, 0x1000000,
		    CHILD_PAGES / 2 * PG, RW))
		_exit(13);
	if (write(ready, &c, 1) != 1)
		_exit(15);
	for (;;)
		pause();
}

static void test_sigkill_unpins(struct vt *t, void *arg)
{
	int p[2], status;
	long start, held;
	struct ctr c;
	uint8_t *buf;
	pid_t pid;
	char ch;

	(void)arg;
	start = pinned(t);
	VT_OK(t, pipe(p));
	fflush(stdout);
	pid = VT_OK(t, fork());
	if (pid == 0) {
		close(p[0]);
		victim(p[1], VT_EDU0);
	}
	close(p[1]);
	if (read(p[0], &ch, 1) != 1) {
		waitpid(pid, &status, 0);
		vt_fail(t, __FILE__, __LINE__, "child never got ready (status "
			"0x%x: exit 10 open, 13 map)", status);
	}
	close(p[0]);
	held = pinned(t);
	kill(pid, SIGKILL);
	VT_OK(t, waitpid(pid, &status, 0));
	VT_CHECKF(t, held == start + CHILD_PAGES, "child's maps pinned %ld "
		  "pages, want %d", held - start, CHILD_PAGES);
	VT_CHECKF(t, WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "child status 0x%x", status);
	VT_CHECKF(t, settle(t, start) == start, "%ld pages still pinned %d ms "
		  "after the owner died", pinned(t) - start, SETTLE_MS);

	/* Group and IOVAs are free for the next user. */
	ctr_open(t, &c, VT_EDU0, 0);
	buf = anon(t, PG);
	VT_OK(t, vtc_map(c.container, buf, IOVA, PG, RW));
	unmap_expect(t, c.container, IOVA, PG, PG);
	ctr_close(&c);
	munmap(buf, PG);
}

/*
 * Any holder of the container fd maps, as with upstream's type1 (DPDK's
 * secondary processes, a VMM that forks): a forked child maps its own
 * memory, charged to its own mm, not the parent's.  The mapping stays
 * until it is unmapped, also after the child is gone, and the parent's
 * unmap unpins it.  Before, the child got EPERM.
 */
#define FORK_PAGES	4

static int fork_mapper(int container, int report)
{
	long before = vt_locked_kb(0), delta;
	uint8_t *buf;

	buf = mmap(NULL, FORK_PAGES * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 11;
	memset(buf, 0x5c, FORK_PAGES * PG);
	if (vtc_map(container, buf, IOVA2, FORK_PAGES * PG, RW))
		return errno == EPERM ? 12 : 13;
	delta = vt_locked_kb(0) - before;
	return write(report, &delta, sizeof(delta)) == sizeof(delta) ? 0 : 14;
}

static void test_fork_child_maps(struct vt *t, void *arg)
{
	long start, parent_kb, child_kb = -1;
	int p[2], status;
	struct ctr c;
	pid_t pid;

	(void)arg;
	ctr_open(t, &c, VT_EDU0, 0);
	start = pinned(t);
	parent_kb = vt_locked_kb(0);
	VT_OK(t, pipe(p));
	fflush(stdout);
	pid = VT_OK(t, fork());
	if (pid == 0) {
		close(p[0]);
		_exit(fork_mapper(c.container, p[1]));
	}
	close(p[1]);
	VT_OK(t, waitpid(pid, &status, 0));
	VT_CHECKF(t, read(p[0], &child_kb, sizeof(child_kb)) ==
		  sizeof(child_kb) || !WIFEXITED(status) ||
		  WEXITSTATUS(status), "no report from the child");
	close(p[0]);
	VT_CHECKF(t, WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child status 0x%x (exit 12: MAP_DMA refused with EPERM, 13: failed otherwise)",
		  status);
	VT_CHECKF(t, child_kb == FORK_PAGES * PG / 1024,
		  "the child's VmLck grew by %ld kB, want %ld", child_kb,
		  FORK_PAGES * PG / 1024);
	VT_CHECKF(t, vt_locked_kb(0) == parent_kb,
		  "the parent's VmLck moved from %ld to %ld kB", parent_kb,
		  vt_locked_kb(0));
	VT_CHECKF(t, pinned(t) == start + FORK_PAGES,
		  "%ld pages pinned after the child's exit, want %d",
		  pinned(t) - start, FORK_PAGES);
	unmap_expect(t, c.container, IOVA2, FORK_PAGES * PG,
		     FORK_PAGES * PG);
	VT_CHECKF(t, pinned(t) == start, "%ld pages still pinned after the unmap",
		  pinned(t) - start);
	ctr_close(&c);
}

/* ---- a MAP_DMA whose pages never arrive ------------------------------------ */

/*
 * Pinning faults the user's pages in, which may wait for good: a FUSE
 * file whose server never answers, which any user can make through a
 * user namespace (here the test's own server, vt_fuse).  A userfaultfd
 * page cannot show it: a long-term pin gives up on those at once.  Such a MAP_DMA may stall its own
 * container's mappings, nothing else: another thread of the same user
 * attaching a group to that container, another user's whole open, map
 * and close of another group, and the unbind of the stuck user's device
 * all go on.  Before, the pin held the container's dma_lock, the attach
 * waited for it under the global vfio.lock, and everything else waited
 * for that.
 */
#define STUCK_PAGES	4
#define OTHERS_MS	1000	/* the bound for another user's cycle */

/*
 * The stuck pin holds this process's mmap_lock, so nothing here may
 * take it for writing meanwhile (a thread's stack, a malloc'ed buffer):
 * every thread is made up front and waits for its go.
 */
static void wait_go(volatile int *go)
{
	while (!*go)
		usleep(1000);
}

struct stuck_map {
	pthread_t thread;
	int container;
	void *buf;
	int ret, err;
	volatile int go;
};

static void *stuck_map_thread(void *arg)
{
	struct stuck_map *m = arg;

	wait_go(&m->go);
	m->ret = vtc_map(m->container, m->buf, IOVA, STUCK_PAGES * PG, RW);
	m->err = errno;
	return NULL;
}

struct attacher {
	pthread_t thread;
	int container, group;
	uint64_t ms;
	int ret, err;
	volatile int go, done;
};

/* Wait up to ms for a thread's done flag: 1, or 0 when it still runs. */
static int wait_done(volatile int *done, int ms)
{
	uint64_t end = vt_now_ms() + ms;

	while (!*done && vt_now_ms() < end)
		usleep(5000);
	return *done;
}

static void *attach_thread(void *arg)
{
	struct attacher *a = arg;
	uint64_t start;

	wait_go(&a->go);
	start = vt_now_ms();
	a->ret = vtc_set_container(a->group, a->container);
	a->err = errno;
	a->ms = vt_now_ms() - start;
	a->done = 1;
	return NULL;
}

static void *unbind_thread(void *arg)
{
	struct attacher *a = arg;
	uint64_t start;

	wait_go(&a->go);
	start = vt_now_ms();
	a->ret = vt_unbind(VT_EDU0);
	a->err = errno;
	a->ms = vt_now_ms() - start;
	a->done = 1;
	return NULL;
}

/* Wait up to ms for the server's first READ: 1, or 0 when none came. */
static int first_read(struct vt_fuse *f, int ms)
{
	uint64_t end = vt_now_ms() + ms;

	while (!vt_fuse_reads(f) && vt_now_ms() < end)
		usleep(5000);
	return vt_fuse_reads(f) > 0;
}

/*
 * Another user's whole cycle on the testdev's group, in a child forked
 * before the stuck MAP_DMA: a fork after it would wait for the mmap_lock
 * that the stuck pin holds in this process.  other_user_go() starts the
 * cycle and returns how long it took in ms (-2: not within 10 times the
 * bound, -1: it failed).
 */
struct other_user {
	pid_t pid;
	int go;
};

static void other_user_child(int go)
{
	int container, group;
	uint8_t *buf, c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	container = vtc_open_container();
	group = vtc_open_group_of(VT_TESTDEV0);
	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (container < 0 || group < 0 || buf == MAP_FAILED ||
	    vtc_set_container(group, container) ||
	    vtc_set_iommu(container, VFIO_TYPE1v2_IOMMU) ||
	    vtc_map(container, buf, IOVA, PG, RW) ||
	    vtc_unmap(container, IOVA, PG, NULL))
		_exit(1);
	_exit(0);
}

static int other_user_start(struct other_user *o)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(stdout);
	o->pid = fork();
	if (o->pid == 0) {
		close(p[1]);
		other_user_child(p[0]);
	}
	close(p[0]);
	o->go = p[1];
	return o->pid < 0 ? -1 : 0;
}

static long other_user_go(struct other_user *o)
{
	uint64_t start = vt_now_ms();
	int status;

	if (write(o->go, "g", 1) != 1)
		return -1;
	close(o->go);
	while (waitpid(o->pid, &status, WNOHANG) == 0) {
		/* Asleep in the kernel, maybe for good: reaped later. */
		if (vt_now_ms() - start > 10 * OTHERS_MS) {
			kill(o->pid, SIGKILL);
			return -2;
		}
		usleep(5000);
	}
	o->pid = -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ?
	       (long)(vt_now_ms() - start) : -1;
}

static void test_stuck_pin_blocks_nobody(struct vt *t, void *arg)
{
	struct attacher a = { .ret = -1 }, u = { .ret = -1 };
	struct stuck_map m = { .ret = -1 };
	int fd, faulted, attached, unbound;
	struct other_user o;
	struct vt_fuse f;
	long other;
	struct ctr c;

	(void)arg;
	VT_OK(t, other_user_start(&o));
	if (vt_fuse_start(&f, STUCK_PAGES * PG)) {
		close(o.go);
		waitpid(o.pid, NULL, 0);
		vt_skip(t, "no FUSE in this kernel: %s", strerror(errno));
	}
	fd = open(f.path, O_RDONLY | O_CLOEXEC);
	m.buf = fd < 0 ? MAP_FAILED :
		mmap(NULL, STUCK_PAGES * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE, fd, 0);
	if (m.buf == MAP_FAILED) {
		close(o.go);
		waitpid(o.pid, NULL, 0);
		vt_fuse_stop(&f);
		vt_fail(t, __FILE__, __LINE__, "open and mmap %s: %s", f.path,
			strerror(errno));
	}
	ctr_open(t, &c, VT_EDU1, VFIO_TYPE1v2_IOMMU);
	m.container = c.container;
	a.container = c.container;
	a.group = vtc_open_group_of(VT_EDU0);

	/* Nothing below may fail the case before the reads are answered. */
	pthread_create(&m.thread, NULL, stuck_map_thread, &m);
	pthread_create(&a.thread, NULL, attach_thread, &a);
	pthread_create(&u.thread, NULL, unbind_thread, &u);
	m.go = 1;
	faulted = first_read(&f, 5000);
	a.go = 1;
	attached = faulted && wait_done(&a.done, OTHERS_MS);
	other = other_user_go(&o);
	u.go = 1;
	unbound = faulted && wait_done(&u.done, 5000);

	vt_fuse_fail_reads(&f);
	pthread_join(m.thread, NULL);
	pthread_join(a.thread, NULL);
	pthread_join(u.thread, NULL);
	if (o.pid > 0)
		waitpid(o.pid, NULL, 0);
	printf("# stuck MAP_DMA: attach %llu ms, another user's cycle %ld ms, unbind %llu ms\n",
	       (unsigned long long)a.ms, other, (unsigned long long)u.ms);
	ctr_close(&c);
	close(a.group);
	munmap(m.buf, STUCK_PAGES * PG);
	close(fd);
	vt_fuse_stop(&f);
	vt_bind_vfio(VT_EDU0);

	VT_CHECKF(t, faulted, "the MAP_DMA never asked the FUSE server for its page");
	VT_CHECKF(t, m.ret < 0 && m.err == EFAULT,
		  "the MAP_DMA whose page never came: %d/%s, not EFAULT", m.ret,
		  strerror(m.err));
	VT_CHECKF(t, attached && a.ret == 0,
		  "SET_CONTAINER beside the stuck MAP_DMA: %s after %llu ms",
		  a.ret ? strerror(a.err) : "not done", (unsigned long long)a.ms);
	VT_CHECKF(t, other >= 0 && other <= OTHERS_MS,
		  "another user's open, map and close took %ld ms (bound %d; -2: stuck)",
		  other, OTHERS_MS);
	VT_CHECKF(t, unbound && u.ret == 0,
		  "unbinding the stuck user's device: %s after %llu ms",
		  u.ret ? strerror(u.err) : "not done", (unsigned long long)u.ms);
}

/* ---- two groups in one container ------------------------------------------ */

static void edu_up(struct vt *t, struct vt_edu *e, const struct vtc_dev *d)
{
	VT_CHECKF(t, vtc_edu_init(e, d->device_fd) == 0, "edu %s: %s",
		  d->name, strerror(errno));
}

/* edu copies len bytes from iova src to iova dst through its buffer. */
static void edu_copy(struct vt *t, struct vt_edu *e, uint64_t src,
		     uint64_t dst, uint32_t len)
{
	VT_CHECKF(t, vt_edu_dma(e, 0, src, len) == 0, "DMA from 0x%llx: %s",
		  (unsigned long long)src, strerror(errno));
	VT_CHECKF(t, vt_edu_dma(e, 1, dst, len) == 0, "DMA to 0x%llx: %s",
		  (unsigned long long)dst, strerror(errno));
}

static void test_two_groups(struct vt *t, void *arg)
{
	const uint32_t len = 2048;
	struct vtc_dev d0, d1;
	struct vt_edu e0, e1;
	uint8_t *buf;
	uint32_t flags, i;
	long start;

	(void)arg;
	VT_CHECKF(t, vt_group_id(VT_EDU0) != vt_group_id(VT_EDU1),
		  "edu0 and edu1 share group %d", vt_group_id(VT_EDU0));
	buf = anon(t, 4 * PG);
	for (i = 0; i < PG; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	memset(buf + PG, 0, 3 * PG);
	start = pinned(t);
	VT_CHECKF(t, vtc_open_dev(&d0, VT_EDU0, 0) == 0, "open %s: %s",
		  VT_EDU0, strerror(errno));
	VT_CHECKF(t, vtc_open_dev_in(&d1, VT_EDU1, d0.container_fd) == 0,
		  "put %s into the container of %s: %s", VT_EDU1, VT_EDU0,
		  strerror(errno));
	VT_OK(t, vtc_group_status(d1.group_fd, &flags));
	VT_CHECKF(t, flags == (VFIO_GROUP_FLAGS_VIABLE |
			       VFIO_GROUP_FLAGS_CONTAINER_SET),
		  "second group's status 0x%x", flags);
	/* One IOMMU for both: a map through either fd is the same map. */
	VT_OK(t, vtc_map(d1.container_fd, buf, IOVA, 4 * PG, RW));
	VT_ERRNO(t, vtc_map(d0.container_fd, buf, IOVA, PG, RW), EEXIST);
	VT_CHECKF(t, pinned(t) == start + 4, "%ld pinned, want 4",
		  pinned(t) - start);

	edu_up(t, &e0, &d0);
	edu_up(t, &e1, &d1);
	edu_copy(t, &e0, IOVA, IOVA + PG, len);
	edu_copy(t, &e1, IOVA, IOVA + 2 * PG, len);
	VT_CHECKF(t, !memcmp(buf, buf + PG, len), "edu0's copy differs");
	VT_CHECKF(t, !memcmp(buf, buf + 2 * PG, len), "edu1's copy differs");
	VT_CHECKF(t, vt_fill_diff(buf + PG + len, PG - len, 0) < 0,
		  "edu0 wrote past its %u bytes", len);

	/* edu1's group leaves; the IOMMU and edu0's DMA stay. */
	close(d1.device_fd);
	d1.device_fd = -1;
	VT_OK(t, vtc_unset_container(d1.group_fd));
	VT_CHECKF(t, pinned(t) == start + 4, "%ld pinned after one group "
		  "left, want 4", pinned(t) - start);
	memset(buf + 3 * PG, 0, PG);
	edu_copy(t, &e0, IOVA, IOVA + 3 * PG, len);
	VT_CHECKF(t, !memcmp(buf, buf + 3 * PG, len), "edu0's copy differs "
		  "after edu1 left");
	vtc_close_dev(&d1);
	vtc_close_dev(&d0);
	VT_CHECKF(t, settle(t, start) == start, "%ld still pinned",
		  pinned(t) - start);
	munmap(buf, 4 * PG);
}

int main(void)
{
	struct vt t = { .prog = "t-container" };

	VT_RUN_CLOSE(&t, test_api_version);
	VT_RUN_CLOSE(&t, test_check_extension);
	VT_RUN_CLOSE(&t, test_unknown_ioctl);
	VT_RUN_CLOSE(&t, test_set_iommu_without_group);
	VT_RUN_CLOSE(&t, test_set_iommu_types);
	VT_RUN_CLOSE(&t, test_iommu_info_argsz);
	VT_RUN_CLOSE(&t, test_iommu_info_no_stack);
	VT_RUN_CLOSE(&t, test_iommu_info_iova_ranges);
	VT_RUN_CLOSE(&t, test_iommu_info_dma_avail);
	VT_RUN_CLOSE(&t, test_map_dma);
	VT_RUN_CLOSE(&t, test_unmap_v2);
	VT_RUN_CLOSE(&t, test_unmap_v1);
	VT_RUN_CLOSE(&t, test_unmap_all);
	VT_RUN_CLOSE(&t, test_rlimit_enomem);
	VT_RUN_CLOSE(&t, test_close_unpins);
	VT_RUN_CLOSE(&t, test_unset_last_group_unpins);
	VT_RUN_CLOSE(&t, test_unset_during_maps);
	VT_RUN_CLOSE(&t, test_sigkill_unpins);
	VT_RUN_CLOSE(&t, test_fork_child_maps);
	VT_RUN_CLOSE(&t, test_stuck_pin_blocks_nobody);
	VT_RUN_CLOSE(&t, test_two_groups);
	return vt_done(&t);
}
