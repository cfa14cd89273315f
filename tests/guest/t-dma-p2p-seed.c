// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-dma-p2p-seed: peer-to-peer DMA through the seed ABI (src/vfio_dma.c,
 * the same code as t-dma-p2p's container ABI): the two edu groups merged
 * into one set, edu0's BAR0 mmapped from its device fd and given to the
 * set's VFIO_IOMMU_MAP_DMA.  edu1 then writes edu0's liveness register
 * (0x04, which reads back inverted) and reads its ID register through
 * the IOVA.  Nothing is pinned or charged; a range that runs from RAM
 * into the BAR is refused; unbinding edu0 takes the mapping away.
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
/* Below 256 MiB: edu masks DMA addresses to 28 bits. */
#define RAM_IOVA	0x200000ULL
#define BAR_IOVA	0x1000000ULL
#define MAGIC		0x0badf00dU

struct p2p {
	int g0, g1;			/* edu1's group is the merger */
	int iommu, dev0, dev1;
	struct vt_edu e0, e1;
	volatile uint32_t *bar;		/* edu0's BAR0, mmapped */
	uint64_t bar_size;
	uint32_t *ram;			/* one page at RAM_IOVA */
	void *extra;			/* a case's own mapping, or NULL */
	size_t extra_len;
};

/* What the running case has open: main() closes it after each case. */
static struct p2p P;

static void p2p_open(struct vt *t, struct p2p *p)
{
	int32_t other;

	p->g1 = vt_open_group_of(VT_EDU1);
	VT_CHECKF(t, p->g1 >= 0, "open the group of %s: %s", VT_EDU1,
		  strerror(errno));
	p->g0 = vt_open_group_of(VT_EDU0);
	VT_CHECKF(t, p->g0 >= 0, "open the group of %s: %s", VT_EDU0,
		  strerror(errno));
	other = p->g0;
	VT_OK(t, ioctl(p->g1, VFIO_GROUP_MERGE, &other));
	p->iommu = VT_OK(t, vt_iommu_fd(p->g1));
	p->dev0 = VT_OK(t, vt_device_fd(p->g1, VT_EDU0));
	p->dev1 = VT_OK(t, vt_device_fd(p->g1, VT_EDU1));
	VT_CHECKF(t, vt_edu_init(&p->e0, p->dev0) == 0, "edu0: %s",
		  strerror(errno));
	VT_CHECKF(t, vt_edu_init(&p->e1, p->dev1) == 0, "edu1: %s",
		  strerror(errno));
	p->bar = vt_mmap_region(p->dev0, VFIO_PCI_BAR0_REGION_INDEX,
				&p->bar_size);
	VT_CHECKF(t, p->bar, "mmap edu0's BAR0: %s", strerror(errno));
	p->ram = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, p->ram != MAP_FAILED, "mmap: %s", strerror(errno));
	VT_OK(t, vt_map(p->iommu, p->ram, RAM_IOVA, PG, RW));
}

/*
 * Close everything (the fds too: close_range() runs before this), also
 * after a failed check: an mmap of the device keeps it open.  edu0 goes
 * back to vfio when a case left it unbound.
 */
static void p2p_close(struct p2p *p)
{
	char drv[32] = "";

	if (p->extra && p->extra != MAP_FAILED)
		munmap(p->extra, p->extra_len);
	if (p->ram && p->ram != MAP_FAILED)
		munmap(p->ram, PG);
	if (p->bar)
		munmap((void *)p->bar, p->bar_size);
	memset(p, 0, sizeof(*p));
	if (vt_device_driver(VT_EDU0, drv, sizeof(drv)) == 0 && !drv[0])
		vt_bind_vfio(VT_EDU0);
}

/* edu1 copies 4 bytes of RAM at RAM_IOVA to IOVA dst. */
static void copy_out(struct vt *t, struct p2p *p, uint64_t dst)
{
	VT_OK(t, vt_edu_dma(&p->e1, 0, RAM_IOVA, 4));
	VT_OK(t, vt_edu_dma(&p->e1, 1, dst, 4));
}

static void test_seed_p2p_roundtrip(struct vt *t, void *arg)
{
	struct p2p *p = &P;
	struct vt_acct a;
	uint32_t v;

	(void)arg;
	p2p_open(t, p);
	a.pins = vt_pinned_now();
	a.kb = vt_locked_kb(0);
	VT_CHECKF(t, vt_map(p->iommu, (void *)p->bar, BAR_IOVA, p->bar_size,
			    RW) == 0,
		  "MAP_DMA of edu0's BAR0 mmap (0x%llx bytes): %s",
		  (unsigned long long)p->bar_size, strerror(errno));
	VT_CHECK_ACCT(t, &a, 0);

	p->ram[0] = MAGIC;
	copy_out(t, p, BAR_IOVA + VT_EDU_LIVE);
	v = p->bar[VT_EDU_LIVE / 4];
	VT_CHECKF(t, v == ~MAGIC, "edu0's 0x04 reads 0x%08x after edu1 wrote "
		  "0x%08x to its IOVA, want 0x%08x", v, MAGIC, ~MAGIC);
	p->ram[0] = 0;
	VT_OK(t, vt_edu_dma(&p->e1, 0, BAR_IOVA + VT_EDU_ID, 4));
	VT_OK(t, vt_edu_dma(&p->e1, 1, RAM_IOVA, 4));
	VT_CHECKF(t, p->ram[0] == p->e0.id, "edu1 read 0x%08x from edu0's ID "
		  "register through the IOVA, want 0x%08x", p->ram[0],
		  p->e0.id);

	VT_OK(t, vt_unmap(p->iommu, BAR_IOVA, p->bar_size));
	VT_CHECK_ACCT(t, &a, 0);
	p->ram[0] = ~MAGIC;
	copy_out(t, p, BAR_IOVA + VT_EDU_LIVE);
	v = p->bar[VT_EDU_LIVE / 4];
	VT_CHECKF(t, v == ~MAGIC, "edu0's 0x04 reads 0x%08x: edu1 reached it "
		  "after the unmap", v);
}

/*
 * Two pages of the BAR at an offset; unmapping the upper one splits the
 * mapping, and the lower one still leads to edu0's registers.
 */
static void test_seed_p2p_split(struct vt *t, void *arg)
{
	struct p2p *p = &P;
	uint32_t v;

	(void)arg;
	p2p_open(t, p);
	VT_OK(t, vt_map(p->iommu, (void *)p->bar, BAR_IOVA + PG, 2 * PG, RW));
	VT_OK(t, vt_unmap(p->iommu, BAR_IOVA + 2 * PG, PG));
	/* The upper page is free again, the lower one is not. */
	VT_OK(t, vt_map(p->iommu, p->ram, BAR_IOVA + 2 * PG, PG, RW));
	VT_ERRNO(t, vt_map(p->iommu, p->ram, BAR_IOVA + PG, PG, RW), EBUSY);
	p->ram[0] = 0x4321;
	copy_out(t, p, BAR_IOVA + PG + VT_EDU_LIVE);
	v = p->bar[VT_EDU_LIVE / 4];
	VT_CHECKF(t, v == ~0x4321U, "after a split edu0's 0x04 reads 0x%08x, "
		  "want 0x%08x", v, ~0x4321U);
	VT_OK(t, vt_unmap(p->iommu, BAR_IOVA, 4 * PG));
}

/* RAM then BAR in one range: -EINVAL, nothing mapped or pinned. */
static void test_seed_p2p_mixed(struct vt *t, void *arg)
{
	struct p2p *p = &P;
	struct vfio_region_info info;
	struct vt_acct a;
	uint8_t *area;
	void *bar;

	(void)arg;
	p2p_open(t, p);
	VT_OK(t, vt_region_info(p->dev0, VFIO_PCI_BAR0_REGION_INDEX, &info));
	p->extra_len = PG + p->bar_size;
	p->extra = area = mmap(NULL, p->extra_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			       -1, 0);
	VT_CHECKF(t, area != MAP_FAILED, "mmap: %s", strerror(errno));
	bar = mmap(area + PG, p->bar_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_FIXED, p->dev0, info.offset);
	VT_CHECKF(t, bar == area + PG, "mmap BAR0 at %p: %s", area + PG,
		  strerror(errno));
	a.pins = vt_pinned_now();
	a.kb = vt_locked_kb(0);
	VT_ERRNO(t, vt_map(p->iommu, area, BAR_IOVA, 2 * PG, RW), EINVAL);
	VT_CHECK_ACCT(t, &a, 0);
	/* Nothing of it stayed: the IOVA range is free. */
	VT_OK(t, vt_map(p->iommu, bar, BAR_IOVA, 2 * PG, RW));
	VT_OK(t, vt_unmap(p->iommu, BAR_IOVA, 2 * PG));
}

/*
 * Unbinding edu0 takes its BAR out of the set's IOMMU, which stays in
 * use through edu1: the IOVA range is free again afterwards.
 */
static void test_seed_p2p_unbind(struct vt *t, void *arg)
{
	struct p2p *p = &P;

	(void)arg;
	p2p_open(t, p);
	VT_OK(t, vt_map(p->iommu, (void *)p->bar, BAR_IOVA, p->bar_size, RW));
	munmap((void *)p->bar, p->bar_size);
	p->bar = NULL;
	close(p->dev0);
	/* The seed ABI's errno for an overlap. */
	VT_ERRNO(t, vt_map(p->iommu, p->ram, BAR_IOVA, PG, RW), EBUSY);
	VT_OK(t, vt_unbind(VT_EDU0));
	VT_CHECKF(t, vt_map(p->iommu, p->ram, BAR_IOVA, PG, RW) == 0,
		  "map RAM where edu0's BAR was mapped after its unbind: %s",
		  strerror(errno));
	VT_OK(t, vt_unmap(p->iommu, BAR_IOVA, PG));
	VT_OK(t, vt_bind_vfio(VT_EDU0));
}

#define RUN(t, fn) do {						\
	VT_RUN_CLOSE(t, fn);						\
	p2p_close(&P);							\
} while (0)

int main(void)
{
	struct vt t = { .prog = "t-dma-p2p-seed" };

	RUN(&t, test_seed_p2p_roundtrip);
	RUN(&t, test_seed_p2p_split);
	RUN(&t, test_seed_p2p_mixed);
	RUN(&t, test_seed_p2p_unbind);
	return vt_done(&t);
}
