// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-dma-model: the DMA mapping engine (src/vfio_dma.c) against a model.
 *
 * A seeded random sequence of MAP_DMA and UNMAP_DMA over a window of IOVA
 * pages runs twice: on 4 KiB anonymous pages, and on 2 MiB hugetlbfs
 * pages, with aligned maps that the IOMMU backs with 2 MiB pages and
 * small unmaps that cut inside them.  The model (the buffer page behind
 * each IOVA page, or none) predicts every call's result and the pinned
 * page count and VmLck after it; edu0's DMA checks that translations next
 * to each cut, and elsewhere, still reach the right memory, reading one
 * place and writing another, the whole buffer compared with a shadow.
 *
 * Then the max_mappings cap (ENOSPC for a map and for a split), and,
 * through the kernel's iommu:map tracepoint, that huge pages (hugetlbfs
 * and THP) reach the IOMMU as 2 MiB aligned runs, which the domain maps
 * with its 2 MiB pages.
 *
 * The seed is printed; "t-dma-model SEED" (or VT_MODEL_SEED) replays it.
 * edu's DMA engine takes 100 ms a transfer, so DMA checks are budgeted.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define HPG		(2UL << 20)
#define HPG_PAGES	(HPG / PG)
#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)
#define WIN_IOVA	0x8000000UL	/* 2 MiB aligned, below edu's 28 bits */
#define SPOT_LEN	256
#define MAX_MAPPINGS	"/sys/module/vfio/parameters/max_mappings"
#define TRACEFS		"/sys/kernel/tracing"
#define TRACE_INST	TRACEFS "/instances/t-dma-model"

/* What main() hands every case. */
struct run {
	uint64_t seed;		/* of the model sequences */
	char saved_cap[32];	/* max_mappings before test_max_mappings */
};

struct model {
	struct vt *t;
	struct vt_dev d;
	struct vt_edu regs;
	uint8_t *buf;		/* what the window maps */
	uint8_t *shadow;	/* what buf must hold */
	size_t buf_pages;
	int32_t *page_of;	/* window page -> buffer page, or -1 */
	unsigned long win_pages;
	unsigned long mapped;	/* window pages mapped */
	struct vt_acct acct;	/* before the first map */
	uint64_t rng;
	bool huge;
	unsigned long max_spots;
	unsigned long maps, refused, unmaps, spots;
};

static uint64_t rnd(struct model *m)
{
	/* xorshift64*: one sequence per seed */
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return m->rng * 0x2545f4914f6cdd1dULL;
}

static unsigned long below(struct model *m, unsigned long n)
{
	return n ? rnd(m) % n : 0;
}

static void fill_random(struct model *m, uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = rnd(m);

		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* The first mapped window page at or after a random one, or -1. */
static long random_mapped(struct model *m)
{
	unsigned long i, p = below(m, m->win_pages);

	for (i = 0; i < m->win_pages; i++, p = (p + 1) % m->win_pages)
		if (m->page_of[p] >= 0)
			return (long)p;
	return -1;
}

/*
 * DMA through two translations: fresh bytes at window page @from go to
 * the device, and from it to window page @to.  Whatever either
 * translation got wrong shows up in the buffer against its shadow.
 */
static void spot(struct model *m, unsigned long from, unsigned long to)
{
	size_t off_from, off_to, src, dst, len = m->buf_pages * PG, i;

	if (m->spots == m->max_spots)
		return;
	m->spots++;
	off_from = below(m, PG / SPOT_LEN) * SPOT_LEN;
	off_to = below(m, PG / SPOT_LEN) * SPOT_LEN;
	src = (size_t)m->page_of[from] * PG + off_from;
	dst = (size_t)m->page_of[to] * PG + off_to;
	fill_random(m, m->buf + src, SPOT_LEN);
	memcpy(m->shadow + src, m->buf + src, SPOT_LEN);
	VT_CHECKF(m->t, vt_edu_dma(&m->regs, 0, WIN_IOVA + from * PG + off_from,
				   SPOT_LEN) == 0, "DMA from window page %lu: %s",
		  from, strerror(errno));
	VT_CHECKF(m->t, vt_edu_dma(&m->regs, 1, WIN_IOVA + to * PG + off_to,
				   SPOT_LEN) == 0, "DMA to window page %lu: %s",
		  to, strerror(errno));
	memmove(m->shadow + dst, m->shadow + src, SPOT_LEN);
	if (!memcmp(m->buf, m->shadow, len))
		return;
	for (i = 0; i < len && m->buf[i] == m->shadow[i]; i++)
		;
	vt_fail(m->t, __FILE__, __LINE__, "DMA window page %lu +0x%zx (buffer "
		"page %d) -> window page %lu +0x%zx (buffer page %d): buffer "
		"byte 0x%zx (page %zu) is 0x%02x, want 0x%02x", from, off_from,
		m->page_of[from], to, off_to, m->page_of[to], i, i / PG,
		m->buf[i], m->shadow[i]);
}

static void spot_random(struct model *m)
{
	long a = random_mapped(m), b = random_mapped(m);

	if (a >= 0 && b >= 0)
		spot(m, a, b);
}

static void op_map(struct model *m, unsigned long s, unsigned long len,
		   unsigned long v)
{
	bool busy = false;
	unsigned long i;
	int ret;

	for (i = s; i < s + len; i++)
		busy |= m->page_of[i] >= 0;
	errno = 0;
	ret = vt_map(m->d.iommu_fd, m->buf + v * PG, WIN_IOVA + s * PG,
		     len * PG, RW);
	if (busy) {
		VT_CHECKF(m->t, ret == -1 && errno == EBUSY,
			  "map of window pages %lu+%lu over a mapping: %d/%s, "
			  "want EBUSY", s, len, ret, strerror(errno));
		m->refused++;
	} else {
		VT_CHECKF(m->t, ret == 0, "map of window pages %lu+%lu at "
			  "buffer page %lu: %s", s, len, v, strerror(errno));
		for (i = 0; i < len; i++)
			m->page_of[s + i] = (int32_t)(v + i);
		m->mapped += len;
		m->maps++;
	}
	VT_CHECK_ACCT(m->t, &m->acct, m->mapped);
}

static void op_unmap(struct model *m, unsigned long s, unsigned long len)
{
	unsigned long i;

	VT_CHECKF(m->t, vt_unmap(m->d.iommu_fd, WIN_IOVA + s * PG,
				 len * PG) == 0,
		  "unmap of window pages %lu+%lu: %s", s, len, strerror(errno));
	for (i = s; i < s + len; i++) {
		if (m->page_of[i] >= 0)
			m->mapped--;
		m->page_of[i] = -1;
	}
	m->unmaps++;
	VT_CHECK_ACCT(m->t, &m->acct, m->mapped);

	/* What a cut kept on either side must still translate right. */
	if (s > 0 && s + len < m->win_pages && m->page_of[s - 1] >= 0 &&
	    m->page_of[s + len] >= 0 && below(m, 2))
		spot(m, s - 1, s + len);
}

/* A map: mostly small and anywhere; on hugetlbfs, a quarter of them
 * huge-page aligned at both ends so that the IOMMU uses 2 MiB pages. */
static void random_map(struct model *m)
{
	unsigned long s, len, v;

	if (m->huge && !below(m, 4)) {
		len = HPG_PAGES * (1 + below(m, 2));
		s = below(m, (m->win_pages - len) / HPG_PAGES + 1) * HPG_PAGES;
		v = below(m, (m->buf_pages - len) / HPG_PAGES + 1) * HPG_PAGES;
	} else {
		len = 1 + below(m, 24);
		s = below(m, m->win_pages - len + 1);
		v = below(m, m->buf_pages - len + 1);
	}
	op_map(m, s, len, v);
}

static void random_unmap(struct model *m)
{
	unsigned long s, len;

	len = below(m, 8) ? 1 + below(m, 16) : 1 + below(m, m->win_pages / 4);
	s = below(m, m->win_pages - len + 1);
	op_unmap(m, s, len);
}

/* Seed from "t-dma-model SEED", VT_MODEL_SEED or the clock; never 0. */
static uint64_t pick_seed(const char *arg)
{
	const char *s = arg ? arg : getenv("VT_MODEL_SEED");
	struct timespec ts;
	uint64_t seed;

	if (s && *s) {
		seed = strtoull(s, NULL, 0);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
	}
	return seed ? seed : 1;
}

static void run_model(struct vt *t, struct model *m, const struct run *r,
		      int ops)
{
	unsigned long i;
	int op;

	m->t = t;
	m->rng = r->seed ^ (m->huge ? 0x9e3779b97f4a7c15ULL : 0);
	if (!m->rng)
		m->rng = 1;
	VT_CHECKF(t, vt_open_dev(&m->d, VT_EDU0) == 0, "open %s: %s", VT_EDU0,
		  strerror(errno));
	VT_CHECKF(t, vt_edu_init(&m->regs, m->d.device_fd) == 0,
		  "edu init: %s", strerror(errno));
	m->shadow = malloc(m->buf_pages * PG);
	m->page_of = malloc(m->win_pages * sizeof(*m->page_of));
	VT_CHECKF(t, m->shadow && m->page_of, "out of memory");
	for (i = 0; i < m->win_pages; i++)
		m->page_of[i] = -1;
	fill_random(m, m->buf, m->buf_pages * PG);
	memcpy(m->shadow, m->buf, m->buf_pages * PG);

	m->acct.pins = vt_pinned_now();
	m->acct.kb = vt_locked_kb(0);
	VT_CHECKF(t, m->acct.pins >= 0 && m->acct.kb >= 0,
		  "pin or VmLck count: %s", strerror(errno));

	for (op = 0; op < ops; op++) {
		if (below(m, 100) < 55)
			random_map(m);
		else
			random_unmap(m);
		if (op % 16 == 15)
			spot_random(m);
	}
	printf("# t-dma-model: %s: %d operations: %lu maps, %lu refused as "
	       "overlapping, %lu unmaps, %lu DMA checks, %lu pages mapped at "
	       "the end\n", m->huge ? "hugetlbfs" : "4 KiB pages", ops,
	       m->maps, m->refused, m->unmaps, m->spots, m->mapped);
	VT_CHECKF(t, m->maps > (unsigned long)ops / 8 && m->refused &&
		  m->spots, "the sequence exercised too little");

	/* Everything goes in one call, across every mapping left. */
	op_unmap(m, 0, m->win_pages);
	free(m->page_of);
	free(m->shadow);
	vt_close_dev(&m->d);
}

static void test_model_small_pages(struct vt *t, void *arg)
{
	struct model m = { .win_pages = 512, .buf_pages = 256,
			   .max_spots = 24 };

	m.buf = mmap(NULL, m.buf_pages * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, m.buf != MAP_FAILED, "mmap: %s", strerror(errno));
	run_model(t, &m, arg, 600);
	munmap(m.buf, m.buf_pages * PG);
}

static void test_model_huge_pages(struct vt *t, void *arg)
{
	struct model m = { .win_pages = 4 * HPG_PAGES,
			   .buf_pages = 3 * HPG_PAGES, .huge = true,
			   .max_spots = 24 };

	m.buf = mmap(NULL, m.buf_pages * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (m.buf == MAP_FAILED)
		vt_skip(t, "3 huge pages of 2 MiB: %s (hugepages= on the "
			"kernel command line?)", strerror(errno));
	run_model(t, &m, arg, 300);
	munmap(m.buf, m.buf_pages * PG);
}

/* ---- the max_mappings cap ------------------------------------------- */

static void test_max_mappings(struct vt *t, void *arg)
{
	const uint64_t base = 0x1000000;
	struct run *r = arg;
	uint8_t *b;
	long pins;
	int group, iommu, i;

	VT_OK(t, vt_read_file(MAX_MAPPINGS, r->saved_cap,
			      sizeof(r->saved_cap)));
	group = vt_open_group_of(VT_TESTDEV0);
	VT_CHECKF(t, group >= 0, "open the group of %s: %s", VT_TESTDEV0,
		  strerror(errno));
	iommu = VT_OK(t, vt_iommu_fd(group));
	b = mmap(NULL, 32 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, b != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(b, 1, 32 * PG);
	pins = vt_pinned_now();

	VT_OK(t, vt_write_file(MAX_MAPPINGS, "8"));
	/* Seven single pages with holes between them, then four pages. */
	for (i = 0; i < 7; i++)
		VT_OK(t, vt_map(iommu, b + i * PG, base + 2 * i * PG, PG, RW));
	VT_OK(t, vt_map(iommu, b + 8 * PG, base + 16 * PG, 4 * PG, RW));
	VT_ERRNO(t, vt_map(iommu, b + 12 * PG, base + 24 * PG, PG, RW), ENOSPC);
	/* Splitting the four pages would make a ninth: refused, intact. */
	VT_ERRNO(t, vt_unmap(iommu, base + 17 * PG, PG), ENOSPC);
	VT_CHECKF(t, vt_pinned_now() == pins + 11, "%ld pinned, want %ld",
		  vt_pinned_now(), pins + 11);
	/* Trimming an end makes no new mapping. */
	VT_OK(t, vt_unmap(iommu, base + 19 * PG, PG));
	/* One fewer, and the split goes through: full again. */
	VT_OK(t, vt_unmap(iommu, base, PG));
	VT_OK(t, vt_unmap(iommu, base + 17 * PG, PG));
	VT_ERRNO(t, vt_map(iommu, b + 12 * PG, base + 24 * PG, PG, RW), ENOSPC);
	VT_CHECKF(t, vt_pinned_now() == pins + 8, "%ld pinned, want %ld",
		  vt_pinned_now(), pins + 8);

	/* Raised again, the same object takes more. */
	VT_OK(t, vt_write_file(MAX_MAPPINGS, r->saved_cap));
	VT_OK(t, vt_map(iommu, b + 12 * PG, base + 24 * PG, PG, RW));
	VT_OK(t, vt_unmap(iommu, base, 32 * PG));
	VT_CHECKF(t, vt_pinned_now() == pins, "%ld pinned after the unmap, "
		  "want %ld", vt_pinned_now(), pins);
	munmap(b, 32 * PG);
	close(iommu);
	close(group);
}

/* ---- huge pages as large IOMMU pages --------------------------------- */

static void need_2m_pages(struct vt *t, int iommu)
{
	struct vfio_iommu_info info = { .argsz = sizeof(info) };

	VT_OK(t, ioctl(iommu, VFIO_IOMMU_GET_INFO, &info));
	if (!(info.pgsize_bitmap & HPG))
		vt_skip(t, "the domain has no 2 MiB pages (pgsize_bitmap "
			"0x%llx)", (unsigned long long)info.pgsize_bitmap);
}

/* A tracefs instance recording iommu:map events, or a skip. */
static void trace_start(struct vt *t)
{
	struct stat st;

	if (stat(TRACEFS "/instances", &st) != 0)
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	if (stat(TRACEFS "/events/iommu/map", &st) != 0)
		vt_skip(t, "no iommu:map tracepoint in %s (kernel without "
			"tracing)", TRACEFS);
	rmdir(TRACE_INST);
	VT_CHECKF(t, mkdir(TRACE_INST, 0700) == 0, "mkdir %s: %s", TRACE_INST,
		  strerror(errno));
	VT_OK(t, vt_write_file(TRACE_INST "/events/iommu/map/enable", "1"));
}

/*
 * Stop tracing and check the iommu:map calls that fell in [iova, iova +
 * size): they cover it exactly, in at most @max_calls calls, each one
 * 2 MiB aligned in IOVA and physical address and whole 2 MiB long.
 */
static void trace_check(struct vt *t, uint64_t iova, uint64_t size,
			int max_calls)
{
	uint64_t covered = 0, a, e, pa, sz;
	int calls = 0;
	char line[512];
	const char *p;
	FILE *f;

	VT_OK(t, vt_write_file(TRACE_INST "/events/iommu/map/enable", "0"));
	f = fopen(TRACE_INST "/trace", "re");
	VT_CHECKF(t, f, "open the trace: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "iova=0x");
		if (!p || sscanf(p, "iova=0x%" SCNx64 " - 0x%" SCNx64
				 " paddr=0x%" SCNx64 " size=%" SCNu64,
				 &a, &e, &pa, &sz) != 4)
			continue;
		if (a < iova || a >= iova + size)
			continue;
		calls++;
		covered += sz;
		if ((a | pa | sz) & (HPG - 1)) {
			fclose(f);
			vt_fail(t, __FILE__, __LINE__, "iommu_map(iova 0x%"
				PRIx64 ", paddr 0x%" PRIx64 ", size 0x%" PRIx64
				") cannot use 2 MiB pages", a, pa, sz);
		}
	}
	fclose(f);
	rmdir(TRACE_INST);
	printf("# t-dma-model: %" PRIu64 " MiB in %d iommu_map() calls\n",
	       size >> 20, calls);
	VT_CHECKF(t, covered == size && calls >= 1 && calls <= max_calls,
		  "%d iommu_map() calls covered 0x%" PRIx64 " of 0x%" PRIx64
		  " (at most %d calls wanted)", calls, covered, size,
		  max_calls);
}

static void huge_map_case(struct vt *t, uint8_t *p, size_t len)
{
	const uint64_t iova = WIN_IOVA;
	int group, iommu;

	group = vt_open_group_of(VT_TESTDEV0);
	VT_CHECKF(t, group >= 0, "open the group of %s: %s", VT_TESTDEV0,
		  strerror(errno));
	iommu = VT_OK(t, vt_iommu_fd(group));
	need_2m_pages(t, iommu);
	trace_start(t);
	VT_OK(t, vt_map(iommu, p, iova, len, RW));
	trace_check(t, iova, len, (int)(len / HPG));
	VT_OK(t, vt_unmap(iommu, iova, len));
	close(iommu);
	close(group);
}

static void test_hugetlbfs_iommu_pages(struct vt *t, void *arg)
{
	const size_t len = 4 * HPG;
	uint8_t *p;

	(void)arg;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED)
		vt_skip(t, "4 huge pages of 2 MiB: %s", strerror(errno));
	memset(p, 0x5a, len);
	huge_map_case(t, p, len);
	munmap(p, len);
}

/* AnonHugePages of the mapping holding @addr, in kB, from smaps. */
static long anon_huge_kb(const void *addr)
{
	unsigned long lo, hi, a = (unsigned long)addr;
	char line[256];
	bool in = false;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = lo <= a && a < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static void test_thp_iommu_pages(struct vt *t, void *arg)
{
	const size_t len = 4 * HPG;
	uint8_t *raw, *p;
	long kb;

	(void)arg;
	raw = mmap(NULL, len + HPG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, raw != MAP_FAILED, "mmap: %s", strerror(errno));
	p = (uint8_t *)(((uintptr_t)raw + HPG - 1) & ~(HPG - 1));
	if (madvise(p, len, MADV_HUGEPAGE) != 0) {
		munmap(raw, len + HPG);
		vt_skip(t, "madvise(MADV_HUGEPAGE): %s", strerror(errno));
	}
	memset(p, 0xa5, len);
	kb = anon_huge_kb(p);
	if (kb < (long)(len >> 10)) {
		munmap(raw, len + HPG);
		vt_skip(t, "THP backed %ld kB of the %zu kB (memory too "
			"fragmented, or THP off)", kb, len >> 10);
	}
	huge_map_case(t, p, len);
	munmap(raw, len + HPG);
}

int main(int argc, char **argv)
{
	struct vt t = { .prog = "t-dma-model" };
	struct run r = { .seed = pick_seed(argc > 1 ? argv[1] : NULL) };

	printf("# t-dma-model: seed %" PRIu64 " (t-dma-model %" PRIu64
	       " replays it)\n", r.seed, r.seed);
	VT_RUN_CLOSE_ARG(&t, test_model_small_pages, &r);
	VT_RUN_CLOSE_ARG(&t, test_model_huge_pages, &r);
	VT_RUN_CLOSE_ARG(&t, test_max_mappings, &r);
	if (r.saved_cap[0])
		vt_write_file(MAX_MAPPINGS, r.saved_cap);
	VT_RUN_CLOSE(&t, test_hugetlbfs_iommu_pages);
	VT_RUN_CLOSE(&t, test_thp_iommu_pages);
	rmdir(TRACE_INST);
	return vt_done(&t);
}
