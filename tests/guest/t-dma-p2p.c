// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-dma-p2p: peer-to-peer DMA through the container ABI, as QEMU sets it
 * up: both edu groups in one container, edu0's BAR0 mmapped from its
 * device fd and that mmap given to VFIO_IOMMU_MAP_DMA (src/vfio_dma.c).
 * edu1's DMA engine then writes to and reads from edu0's registers
 * through the IOVA.  Such a map pins nothing and charges nothing; ranges
 * that are only partly a BAR mmap, and VM_PFNMAP mappings of other
 * drivers, are refused.  Unbinding edu0 takes its BAR out of the
 * container.  With --in-tree the same cases run on the guest kernel's
 * own VFIO (/opt/intree-vfio), the reference the results must match
 * (it maps the partial ranges and other drivers' VM_PFNMAP mmaps, which
 * ours refuses: those cases print its answers and skip there).
 *
 * edu register 0x04 reads back the bitwise NOT of what was written.  A
 * blocked transfer makes the guest log a DMAR fault: that is expected.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vt.h"
#include "vtcontainer.h"

#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)
/* Below 256 MiB: edu masks DMA addresses to 28 bits. */
#define RAM_IOVA	0x200000ULL
#define BAR_IOVA	0x1000000ULL
#define MAGIC		0x5a17c0deU

static int in_tree;

struct p2p {
	struct vtc_dev d0, d1;
	struct vt_edu e0, e1;
	volatile uint32_t *bar;		/* edu0's BAR0, mmapped */
	uint64_t bar_size;
	uint64_t bar_off;		/* its offset in the device fd */
	uint32_t *ram;			/* one page at RAM_IOVA */
	void *extra;			/* a case's own mapping, or NULL */
	size_t extra_len;
};

/* What the running case has open: main() closes it after each case. */
static struct p2p P;

static void p2p_open(struct vt *t, struct p2p *p)
{
	struct vfio_region_info info;

	memset(p, 0, sizeof(*p));
	p->d0.container_fd = p->d1.container_fd = -1;
	VT_CHECKF(t, vtc_open_dev(&p->d0, VT_EDU0, 0) == 0, "open %s: %s",
		  VT_EDU0, strerror(errno));
	VT_CHECKF(t, vtc_open_dev_in(&p->d1, VT_EDU1, p->d0.container_fd) == 0,
		  "put %s into the container of %s: %s", VT_EDU1, VT_EDU0,
		  strerror(errno));
	VT_CHECKF(t, vtc_edu_init(&p->e0, p->d0.device_fd) == 0, "edu0: %s",
		  strerror(errno));
	VT_CHECKF(t, vtc_edu_init(&p->e1, p->d1.device_fd) == 0, "edu1: %s",
		  strerror(errno));
	VT_OK(t, vtc_region_info(p->d0.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
				 &info));
	p->bar_off = info.offset;
	p->bar = vtc_mmap_region(p->d0.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
				 &p->bar_size);
	VT_CHECKF(t, p->bar, "mmap edu0's BAR0: %s", strerror(errno));
	p->ram = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, p->ram != MAP_FAILED, "mmap: %s", strerror(errno));
	VT_OK(t, vtc_map(p->d0.container_fd, p->ram, RAM_IOVA, PG, RW));
}

/*
 * Close everything; after a failed check too, since an mmap of the
 * device keeps it open for the next case.  edu0 goes back to vfio when
 * a case left it unbound.
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
	if (p->d1.container_fd >= 0)
		vtc_close_dev(&p->d1);
	if (p->d0.container_fd >= 0)
		vtc_close_dev(&p->d0);
	memset(p, 0, sizeof(*p));
	p->d0.container_fd = p->d1.container_fd = -1;
	if (!in_tree && vt_device_driver(VT_EDU0, drv, sizeof(drv)) == 0 &&
	    !drv[0])
		vt_bind_vfio(VT_EDU0);
}

/* edu1 copies 4 bytes of RAM at RAM_IOVA to IOVA dst. */
static void copy_out(struct vt *t, struct p2p *p, uint64_t dst)
{
	VT_OK(t, vt_edu_dma(&p->e1, 0, RAM_IOVA, 4));
	VT_OK(t, vt_edu_dma(&p->e1, 1, dst, 4));
}

/* edu1 copies 4 bytes at IOVA src into RAM at RAM_IOVA; what came. */
static uint32_t copy_in(struct vt *t, struct p2p *p, uint64_t src)
{
	p->ram[0] = 0;
	VT_OK(t, vt_edu_dma(&p->e1, 0, src, 4));
	VT_OK(t, vt_edu_dma(&p->e1, 1, RAM_IOVA, 4));
	return p->ram[0];
}

/*
 * The map goes in with nothing pinned or charged; edu1 writes edu0's
 * liveness register and reads its ID register through it; the unmap
 * says the whole BAR was mapped, and afterwards edu1 reaches edu0 no
 * more.
 */
static void test_p2p_roundtrip(struct vt *t, void *arg)
{
	int c;
	struct p2p *p = &P;
	struct vt_acct a;
	uint64_t unmapped = 0;
	uint32_t v;

	(void)arg;
	p2p_open(t, p);
	c = p->d0.container_fd;
	a.pins = vt_pinned_now();
	a.kb = vt_locked_kb(0);
	VT_CHECKF(t, vtc_map(c, (void *)p->bar, BAR_IOVA, p->bar_size, RW) == 0,
		  "MAP_DMA of edu0's BAR0 mmap (0x%llx bytes): %s",
		  (unsigned long long)p->bar_size, strerror(errno));
	VT_CHECK_ACCT(t, &a, 0);

	p->ram[0] = MAGIC;
	copy_out(t, p, BAR_IOVA + VT_EDU_LIVE);
	v = p->bar[VT_EDU_LIVE / 4];
	VT_CHECKF(t, v == ~MAGIC, "edu0's 0x04 reads 0x%08x after edu1 wrote "
		  "0x%08x to its IOVA, want 0x%08x", v, MAGIC, ~MAGIC);
	v = copy_in(t, p, BAR_IOVA + VT_EDU_ID);
	VT_CHECKF(t, v == p->e0.id, "edu1 read 0x%08x from edu0's ID register "
		  "through the IOVA, want 0x%08x", v, p->e0.id);

	VT_OK(t, vtc_unmap(c, BAR_IOVA, p->bar_size, &unmapped));
	VT_CHECKF(t, unmapped == p->bar_size, "unmapped 0x%llx, want 0x%llx",
		  (unsigned long long)unmapped,
		  (unsigned long long)p->bar_size);
	VT_CHECK_ACCT(t, &a, 0);
	p->ram[0] = ~MAGIC;
	copy_out(t, p, BAR_IOVA + VT_EDU_LIVE);
	v = p->bar[VT_EDU_LIVE / 4];
	VT_CHECKF(t, v == ~MAGIC, "edu0's 0x04 reads 0x%08x: edu1 reached it "
		  "after the unmap", v);
}

/*
 * A part of the BAR at an IOVA that is not 2 MiB aligned.  type1v2 does
 * not split mappings: t-dma-p2p-seed splits one.
 */
static void test_p2p_part(struct vt *t, void *arg)
{
	struct p2p *p = &P;
	uint64_t unmapped = 0;
	int c;
	uint32_t v;

	(void)arg;
	p2p_open(t, p);
	c = p->d0.container_fd;
	/* Its first two pages, at an IOVA that is not 2 MiB aligned. */
	VT_OK(t, vtc_map(c, (void *)p->bar, BAR_IOVA + PG, 2 * PG, RW));
	p->ram[0] = 0x1234;
	copy_out(t, p, BAR_IOVA + PG + VT_EDU_LIVE);
	v = p->bar[VT_EDU_LIVE / 4];
	VT_CHECKF(t, v == ~0x1234U, "edu0's 0x04 reads 0x%08x, want 0x%08x",
		  v, ~0x1234U);
	VT_OK(t, vtc_unmap(c, BAR_IOVA, 4 * PG, &unmapped));
	VT_CHECKF(t, unmapped == 2 * PG, "unmapped 0x%llx, want 0x%lx",
		  (unsigned long long)unmapped, 2 * PG);
}

/*
 * What the kernel's type1 answers to the ranges of test_p2p_mixed(),
 * which ours refuses by design (a mapping is all pinned RAM or all one
 * BAR): said in comment lines, then the case skips.
 */
static void mixed_in_tree(struct vt *t, struct p2p *p, uint8_t *area)
{
	const struct {
		const char *what;
		size_t off, len;
	} r[] = {
		{ "RAM page then BAR page", 0, 2 * PG },
		{ "last BAR page then RAM page", p->bar_size, 2 * PG },
		{ "RAM, whole BAR, RAM", 0, p->bar_size + 2 * PG },
	};
	int c = p->d0.container_fd, ret;
	unsigned int i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		ret = vtc_map(c, area + r[i].off, BAR_IOVA, r[i].len, RW);
		printf("# in-tree MAP_DMA of %s: %s\n", r[i].what,
		       ret ? strerror(errno) : "mapped");
		if (!ret)
			vtc_unmap(c, BAR_IOVA, r[i].len, NULL);
	}
	vt_skip(t, "ours refuses these ranges by design: the kernel's "
		"answers are above");
}

/*
 * Ranges that are only partly a BAR mmap: RAM then BAR, BAR then RAM
 * (past its end), BAR then nothing.  -EINVAL, nothing mapped, nothing
 * left pinned or charged.
 */
static void test_p2p_mixed(struct vt *t, void *arg)
{
	struct p2p *p = &P;
	struct vt_acct a;
	uint64_t unmapped = 1;
	uint8_t *area;
	size_t len;
	void *bar;
	int c;

	(void)arg;
	p2p_open(t, p);
	c = p->d0.container_fd;
	/* RAM page, edu0's BAR0, RAM page: one stretch of addresses. */
	len = PG + p->bar_size + PG;
	p->extra_len = len;
	p->extra = area = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	VT_CHECKF(t, area != MAP_FAILED, "mmap: %s", strerror(errno));
	bar = mmap(area + PG, p->bar_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_FIXED, p->d0.device_fd, p->bar_off);
	VT_CHECKF(t, bar == area + PG, "mmap BAR0 at %p: %s", area + PG,
		  strerror(errno));

	a.pins = vt_pinned_now();
	a.kb = vt_locked_kb(0);
	if (in_tree)
		mixed_in_tree(t, p, area);
	VT_ERRNO(t, vtc_map(c, area, BAR_IOVA, 2 * PG, RW), EINVAL);
	VT_ERRNO(t, vtc_map(c, area + p->bar_size, BAR_IOVA, 2 * PG, RW),
		 EINVAL);
	VT_ERRNO(t, vtc_map(c, area, BAR_IOVA, len, RW), EINVAL);
	VT_CHECK_ACCT(t, &a, 0);
	munmap(area + PG + p->bar_size, PG);
	VT_ERRNO(t, vtc_map(c, area + PG, BAR_IOVA, p->bar_size + PG, RW),
		 EINVAL);
	VT_CHECK_ACCT(t, &a, 0);
	VT_OK(t, vtc_unmap(c, BAR_IOVA, p->bar_size + 2 * PG, &unmapped));
	VT_CHECKF(t, unmapped == 0, "a refused map left 0x%llx bytes mapped",
		  (unsigned long long)unmapped);
	/* And the whole BAR from the same mmap is fine. */
	VT_OK(t, vtc_map(c, area + PG, BAR_IOVA, p->bar_size, RW));
	VT_CHECK_ACCT(t, &a, 0);
	VT_OK(t, vtc_unmap(c, BAR_IOVA, p->bar_size, NULL));
}

/* A read-only mmap of the BAR maps for device reads only: -EFAULT. */
static void test_p2p_read_only(struct vt *t, void *arg)
{
	struct p2p *p = &P;
	void *ro;
	int c;

	(void)arg;
	p2p_open(t, p);
	c = p->d0.container_fd;
	p->extra_len = p->bar_size;
	p->extra = ro = mmap(NULL, p->bar_size, PROT_READ, MAP_SHARED,
			     p->d0.device_fd, p->bar_off);
	VT_CHECKF(t, ro != MAP_FAILED, "mmap BAR0 read-only: %s",
		  strerror(errno));
	VT_ERRNO(t, vtc_map(c, ro, BAR_IOVA, p->bar_size, RW), EFAULT);
	VT_OK(t, vtc_map(c, ro, BAR_IOVA, p->bar_size,
			 VFIO_DMA_MAP_FLAG_READ));
	VT_OK(t, vtc_unmap(c, BAR_IOVA, p->bar_size, NULL));
}

/*
 * A VM_PFNMAP mapping that is not a device fd's of ours: the sysfs
 * resource file of pci-testdev's BAR.  We cannot tell how long its
 * frames stay the device's: -EFAULT, as before this feature.
 */
static void test_p2p_foreign_pfnmap(struct vt *t, void *arg)
{
	char path[96];
	struct p2p *p = &P;
	void *m;
	int fd;

	(void)arg;
	p2p_open(t, p);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0",
		 VT_TESTDEV0);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0)
		vt_skip(t, "open %s: %s", path, strerror(errno));
	m = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		vt_skip(t, "mmap %s: %s", path, strerror(errno));
	p->extra = m;
	p->extra_len = PG;
	if (in_tree) {
		if (vtc_map(p->d0.container_fd, m, BAR_IOVA, PG, RW) == 0) {
			printf("# in-tree MAP_DMA of a sysfs resource mmap: "
			       "mapped\n");
			vtc_unmap(p->d0.container_fd, BAR_IOVA, PG, NULL);
		} else {
			printf("# in-tree MAP_DMA of a sysfs resource mmap: "
			       "%s\n", strerror(errno));
		}
		vt_skip(t, "ours refuses other drivers' VM_PFNMAP mappings "
			"by design: the kernel's answer is above");
	}
	VT_ERRNO(t, vtc_map(p->d0.container_fd, m, BAR_IOVA, PG, RW), EFAULT);
}

/*
 * Unbinding edu0 takes its BAR out of the container it was mapped into
 * (edu1's, which stays in use): nothing is left to unmap afterwards, and
 * edu1 cannot reach the BAR any more.
 */
static void test_p2p_unbind(struct vt *t, void *arg)
{
	uint64_t unmapped = 1;
	struct p2p *p = &P;
	int c;

	(void)arg;
	if (in_tree)
		vt_skip(t, "the kernel's type1 keeps the mapping on unbind");
	p2p_open(t, p);
	c = p->d0.container_fd;
	VT_OK(t, vtc_map(c, (void *)p->bar, BAR_IOVA, p->bar_size, RW));
	VT_ERRNO(t, vtc_map(c, p->ram, BAR_IOVA, PG, RW), EEXIST);
	/* Let edu0 go: the container stays open through edu1's group. */
	munmap((void *)p->bar, p->bar_size);
	p->bar = NULL;
	vtc_close_dev(&p->d0);
	p->d0.container_fd = -1;
	VT_OK(t, vt_unbind(VT_EDU0));
	VT_OK(t, vtc_unmap(p->d1.container_fd, BAR_IOVA, p->bar_size,
			   &unmapped));
	VT_OK(t, vt_bind_vfio(VT_EDU0));
	VT_CHECKF(t, unmapped == 0, "0x%llx bytes of edu0's BAR still mapped "
		  "after its unbind", (unsigned long long)unmapped);
}

#define RUN(t, fn) do {						\
	VT_RUN_CLOSE(t, fn);						\
	p2p_close(&P);							\
} while (0)

int main(int argc, char **argv)
{
	struct vt t = { .prog = "t-dma-p2p" };

	in_tree = argc > 1 && !strcmp(argv[1], "--in-tree");
	if (in_tree)
		t.prog = "t-dma-p2p-intree";
	P.d0.container_fd = P.d1.container_fd = -1;
	RUN(&t, test_p2p_roundtrip);
	RUN(&t, test_p2p_part);
	RUN(&t, test_p2p_mixed);
	RUN(&t, test_p2p_read_only);
	RUN(&t, test_p2p_foreign_pfnmap);
	RUN(&t, test_p2p_unbind);
	return vt_done(&t);
}
