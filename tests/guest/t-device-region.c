// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-region: what a device fd of vfio_pci says about itself and
 * its regions, and the BARs through them (src/pci/vfio_pci.c's info
 * ioctls, src/pci/vfio_pci_rdwr.c, the read/write/mmap of
 * src/vfio_device.c).  DEVICE_GET_INFO and GET_REGION_INFO and their
 * argument checks; BAR0 of edu (QEMU docs/specs/edu.rst) through
 * read/write, its splitting and bounds, and mmap; pci-testdev's MMIO and
 * I/O port BARs; the missing ROM.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

/* ---- info ioctls ------------------------------------------------------- */

static void test_device_info(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	struct vfio_device_info info;
	struct {
		struct vfio_device_info i;
		uint32_t extra[4];
	} big;
	uint32_t want = vt_has_reset(VT_EDU0) ? VFIO_DEVICE_FLAGS_RESET : 0;

	/* Stale bits in the caller's flags must not survive (seed bug). */
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info);
	info.flags = ~0U;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_INFO, &info));
	VT_CHECKF(t, info.flags == want, "flags 0x%x, want 0x%x", info.flags,
		  want);
	VT_CHECKF(t, info.num_regions == VFIO_PCI_NUM_REGIONS,
		  "num_regions %u", info.num_regions);
	VT_CHECKF(t, info.num_irqs == VFIO_PCI_NUM_IRQS, "num_irqs %u",
		  info.num_irqs);

	/* A newer caller's bigger struct is fine; its tail is untouched. */
	memset(&big, 0xa5, sizeof(big));
	big.i.argsz = sizeof(big);
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_INFO, &big));
	VT_CHECKF(t, big.i.num_regions == VFIO_PCI_NUM_REGIONS &&
		  big.extra[0] == 0xa5a5a5a5, "long argsz: regions %u tail 0x%x",
		  big.i.num_regions, big.extra[0]);

	info.argsz = sizeof(info) - 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_INFO, &info), EINVAL);
	info.argsz = 0;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_INFO, &info), EINVAL);
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_INFO, c->noaccess), EFAULT);

	/* Not a device ioctl at all, or a group one on a device fd. */
	VT_ERRNO(t, ioctl(fd, _IO(VFIO_TYPE, VFIO_BASE + 40)), ENOTTY);
	VT_ERRNO(t, ioctl(fd, VFIO_GROUP_GET_INFO, &info), ENOTTY);
}

static void check_region(struct vt *t, int fd, uint32_t index, uint64_t size,
			 uint32_t flags)
{
	struct vfio_region_info r;

	memset(&r, 0xff, sizeof(r));
	r.argsz = sizeof(r);
	r.index = index;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &r));
	VT_CHECKF(t, r.index == index && r.size == size && r.flags == flags &&
		  r.offset == vt_roff(index) && r.resv == 0,
		  "region %u: size 0x%llx flags 0x%x offset 0x%llx resv 0x%x; "
		  "want size 0x%llx flags 0x%x offset 0x%llx", index,
		  (unsigned long long)r.size, r.flags,
		  (unsigned long long)r.offset, r.resv, (unsigned long long)size,
		  flags, (unsigned long long)vt_roff(index));
}

static void test_region_info_edu(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	uint32_t i;

	check_region(t, fd, VFIO_PCI_BAR0_REGION_INDEX, VT_EDU_BAR_SIZE,
		     VFIO_REGION_INFO_FLAG_MMAP);
	for (i = VFIO_PCI_BAR1_REGION_INDEX; i <= VFIO_PCI_BAR5_REGION_INDEX;
	     i++)
		check_region(t, fd, i, 0, 0);
	/* edu has no ROM: size 0 means not implemented. */
	check_region(t, fd, VFIO_PCI_ROM_REGION_INDEX, 0, 0);
	check_region(t, fd, VFIO_PCI_CONFIG_REGION_INDEX,
		     vt_sysfs_config_size(t, VT_EDU0), 0);
}

static void test_region_info_testdev(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_TESTDEV0);

	/* 4 KiB MMIO BAR (mmap) and a 256 byte I/O port BAR (no mmap). */
	check_region(t, fd, VFIO_PCI_BAR0_REGION_INDEX, PG,
		     VFIO_REGION_INFO_FLAG_MMAP);
	check_region(t, fd, VFIO_PCI_BAR1_REGION_INDEX, 256, 0);
	check_region(t, fd, VFIO_PCI_BAR2_REGION_INDEX, 0, 0);
	check_region(t, fd, VFIO_PCI_CONFIG_REGION_INDEX,
		     vt_sysfs_config_size(t, VT_TESTDEV0), 0);
}

static void test_region_info_args(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	struct {
		struct vfio_region_info r;
		uint64_t extra;
	} big;
	struct vfio_region_info r;

	memset(&r, 0, sizeof(r));
	r.argsz = sizeof(r) - 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &r), EINVAL);
	r.argsz = sizeof(r);
	r.index = VFIO_PCI_NUM_REGIONS;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &r), EINVAL);
	r.index = ~0U;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &r), EINVAL);
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, NULL), EFAULT);

	memset(&big, 0, sizeof(big));
	big.r.argsz = sizeof(big);
	big.r.index = VFIO_PCI_BAR0_REGION_INDEX;
	big.extra = 0x1122334455667788ULL;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &big));
	VT_CHECKF(t, big.r.size == VT_EDU_BAR_SIZE &&
		  big.extra == 0x1122334455667788ULL,
		  "long argsz: size 0x%llx tail 0x%llx",
		  (unsigned long long)big.r.size,
		  (unsigned long long)big.extra);
}

/* ---- BAR access -------------------------------------------------------- */

static void test_bar_rw(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	uint64_t q = 0x0123456789abcdefULL, q2 = 0;
	uint32_t v, buf[3];

	v = vt_bar0_rd(t, fd, VT_EDU_ID);
	VT_CHECKF(t, v == VT_EDU_ID_VALUE, "edu id 0x%08x", v);

	/* Liveness: the register reads back the inverse of what we wrote. */
	vt_bar0_wr(t, fd, VT_EDU_LIVE, 0x12345678);
	v = vt_bar0_rd(t, fd, VT_EDU_LIVE);
	VT_CHECKF(t, v == ~0x12345678U, "liveness read 0x%08x", v);

	v = vt_edu_factorial(t, fd, 5);
	VT_CHECKF(t, v == 120, "5! = %u", v);
	v = vt_edu_factorial(t, fd, 12);
	VT_CHECKF(t, v == 479001600, "12! = %u", v);

	/* An 8 byte register done as one 8 byte access. */
	VT_CHECKF(t, pwrite(fd, &q, 8, vt_roff(0) + VT_EDU_DMA_SRC) == 8,
		  "pwrite 8: %s", strerror(errno));
	VT_CHECKF(t, pread(fd, &q2, 8, vt_roff(0) + VT_EDU_DMA_SRC) == 8,
		  "pread 8: %s", strerror(errno));
	VT_CHECKF(t, q2 == q, "8 byte register read 0x%llx",
		  (unsigned long long)q2);

	/*
	 * 12 bytes from 0: split into 4 byte accesses (edu ignores 8 byte
	 * ones below 0x80, as many devices would).
	 */
	memset(buf, 0, sizeof(buf));
	VT_CHECKF(t, pread(fd, buf, 12, vt_roff(0)) == 12, "pread 12: %s",
		  strerror(errno));
	VT_CHECKF(t, buf[0] == VT_EDU_ID_VALUE && buf[1] == ~0x12345678U &&
		  buf[2] == 479001600, "split read 0x%x 0x%x 0x%x", buf[0],
		  buf[1], buf[2]);

	/* read(2)/write(2) at the file position work the same way. */
	VT_CHECKF(t, lseek(fd, vt_roff(0) + VT_EDU_LIVE, SEEK_SET) ==
		  (off_t)(vt_roff(0) + VT_EDU_LIVE), "lseek: %s",
		  strerror(errno));
	v = 0xcafe0000;
	VT_CHECKF(t, write(fd, &v, 4) == 4, "write: %s", strerror(errno));
	VT_CHECKF(t, lseek(fd, vt_roff(0) + VT_EDU_LIVE, SEEK_SET) >= 0,
		  "lseek");
	VT_CHECKF(t, read(fd, &v, 4) == 4, "read: %s", strerror(errno));
	VT_CHECKF(t, v == ~0xcafe0000U, "read(2) liveness 0x%08x", v);

	/* Bounds: cut short at the end, refused past it. */
	VT_CHECKF(t, pread(fd, &q, 8, vt_roff(0) + VT_EDU_BAR_SIZE - 4) == 4,
		  "read across the end: %s", strerror(errno));
	VT_ERRNO(t, pread(fd, &v, 4, vt_roff(0) + VT_EDU_BAR_SIZE), EINVAL);
	VT_ERRNO(t, pwrite(fd, &v, 4, vt_roff(0) + VT_EDU_BAR_SIZE), EINVAL);
	/* No BAR1; no region 8; an offset inside no region. */
	VT_ERRNO(t, pread(fd, &v, 4, vt_roff(1)), EINVAL);
	VT_ERRNO(t, pread(fd, &v, 4, vt_roff(VFIO_PCI_NUM_REGIONS)), EINVAL);
	VT_ERRNO(t, pread(fd, &v, 4, vt_roff(60)), EINVAL);
	/* Zero bytes is no access. */
	VT_CHECKF(t, pread(fd, &v, 0, vt_roff(0)) == 0, "0 byte read");
	/* Bad user buffer: a clean EFAULT. */
	VT_ERRNO(t, pread(fd, c->noaccess, 4, vt_roff(0)), EFAULT);
	VT_ERRNO(t, pwrite(fd, c->noaccess, 4, vt_roff(0) + VT_EDU_LIVE),
		 EFAULT);
}

static void test_bar_mmap(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	volatile uint32_t *r;
	uint64_t end;
	void *p;

	c->map = mmap(NULL, VT_EDU_BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, vt_roff(0));
	VT_CHECKF(t, c->map != MAP_FAILED, "mmap BAR0: %s", strerror(errno));
	c->maplen = VT_EDU_BAR_SIZE;
	r = c->map;

	VT_CHECKF(t, r[VT_EDU_ID / 4] == VT_EDU_ID_VALUE, "mmap id 0x%08x",
		  r[VT_EDU_ID / 4]);
	r[VT_EDU_LIVE / 4] = 0x0badf00d;
	VT_CHECKF(t, r[VT_EDU_LIVE / 4] == ~0x0badf00dU, "mmap liveness 0x%08x",
		  r[VT_EDU_LIVE / 4]);
	/* Both paths reach the same register. */
	VT_CHECKF(t, vt_bar0_rd(t, fd, VT_EDU_LIVE) == ~0x0badf00dU,
		  "pread after mmap");

	r[VT_EDU_FACT / 4] = 10;
	end = vt_now_ms() + 2000;
	while (r[VT_EDU_STATUS / 4] & VT_EDU_STATUS_BUSY)
		VT_CHECKF(t, vt_now_ms() < end, "factorial busy");
	VT_CHECKF(t, r[VT_EDU_FACT / 4] == 3628800, "mmap 10! = %u",
		  r[VT_EDU_FACT / 4]);

	/* A page inside the BAR alone. */
	p = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, vt_roff(0) + 3 * PG);
	VT_CHECKF(t, p != MAP_FAILED, "mmap one page: %s", strerror(errno));
	munmap(p, PG);

	/* Private, past the end, too long, ROM, config: all refused. */
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, vt_roff(0)) ==
		 MAP_FAILED ? -1 : 0, EINVAL);
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
			 vt_roff(0) + VT_EDU_BAR_SIZE) == MAP_FAILED ? -1 : 0,
		 EINVAL);
	VT_ERRNO(t, mmap(NULL, VT_EDU_BAR_SIZE + PG, PROT_READ, MAP_SHARED, fd,
			 vt_roff(0)) == MAP_FAILED ? -1 : 0, EINVAL);
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, vt_roff(1)) ==
		 MAP_FAILED ? -1 : 0, EINVAL);
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
			 vt_roff(VFIO_PCI_ROM_REGION_INDEX)) == MAP_FAILED ?
		 -1 : 0, EINVAL);
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
			 vt_roff(VFIO_PCI_CONFIG_REGION_INDEX)) == MAP_FAILED ?
		 -1 : 0, EINVAL);
}

/*
 * pci-testdev: writing a test number to offset 0 selects a test whose
 * header (number, width, offset, data, count, name) then reads back byte
 * by byte; a write of data at offset bumps count.  Port I/O tests are
 * numbered from 0 on the I/O BAR too (the device adds its own base).
 */
struct testdev_hdr {
	uint8_t test;
	uint8_t width;
	uint8_t pad0[2];
	uint32_t offset;
	uint8_t data;
	uint8_t pad1[3];
	uint32_t count;
	char name[32];
};

static void test_testdev_portio(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_TESTDEV0);
	uint64_t base = vt_roff(VFIO_PCI_BAR1_REGION_INDEX);
	struct testdev_hdr h;
	uint8_t sel = 0, b;
	uint16_t w = 0;
	uint32_t l = 0;

	/* Port I/O on, then select "portio-no-eventfd". */
	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_IO, 0);
	VT_CHECKF(t, pwrite(fd, &sel, 1, base) == 1, "select: %s",
		  strerror(errno));

	/* 1, 2, 4 byte reads and a 24 byte read split over all of them. */
	memset(&h, 0, sizeof(h));
	VT_CHECKF(t, pread(fd, &h, 34, base) == 34, "pread header: %s",
		  strerror(errno));
	VT_CHECKF(t, h.width == 1 && !strcmp(h.name, "portio-no-eventfd"),
		  "header: width %u name '%.20s'", h.width, h.name);
	VT_CHECKF(t, pread(fd, &b, 1, base + 16) == 1 && b == 'p', "byte 0x%x",
		  b);
	VT_CHECKF(t, pread(fd, &w, 2, base + 16) == 2 && w == ('p' | 'o' << 8),
		  "word 0x%x", w);
	VT_CHECKF(t, pread(fd, &l, 4, base + 4) == 4 && l == h.offset,
		  "dword 0x%x, offset 0x%x", l, h.offset);
	VT_CHECKF(t, h.offset < 256, "test offset 0x%x", h.offset);

	/* The write the test counts; an 8 byte I/O access is split. */
	VT_CHECKF(t, pwrite(fd, &h.data, 1, base + h.offset) == 1,
		  "pwrite data: %s", strerror(errno));
	VT_CHECKF(t, pread(fd, &l, 4, base + 12) == 4 && l == 1,
		  "count after one write: %u", l);
	VT_CHECKF(t, pread(fd, &h, 8, base) == 8, "8 byte port read");

	VT_ERRNO(t, pread(fd, &l, 4, base + 256), EINVAL);
	/* I/O ports cannot be mapped. */
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, base) ==
		 MAP_FAILED ? -1 : 0, EINVAL);
}

static void test_testdev_mmio(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_TESTDEV0);
	volatile uint8_t *m;
	char name[16];
	uint32_t off, cnt;
	int i;

	c->map = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      vt_roff(0));
	VT_CHECKF(t, c->map != MAP_FAILED, "mmap testdev BAR0: %s",
		  strerror(errno));
	c->maplen = PG;
	m = c->map;

	m[0] = 0;	/* "mmio-no-eventfd" */
	for (i = 0; i < 15; i++)
		name[i] = m[16 + i];
	name[15] = 0;
	VT_CHECKF(t, !strcmp(name, "mmio-no-eventfd"), "name '%s'", name);
	off = m[4] | m[5] << 8 | m[6] << 16 | (uint32_t)m[7] << 24;
	VT_CHECKF(t, off < PG, "offset 0x%x", off);
	m[off] = m[8];
	cnt = m[12] | m[13] << 8;
	VT_CHECKF(t, cnt == 1, "count %u after one mmap write", cnt);
	/* pread sees the same device state. */
	VT_CHECKF(t, pread(fd, &cnt, 4, vt_roff(0) + 12) == 4 && cnt == 1,
		  "pread count %u", cnt);
}

static void test_rom(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	uint32_t v = 0;

	/* Read only, and edu has none: every access is refused cleanly. */
	VT_ERRNO(t, pread(fd, &v, 4, vt_roff(VFIO_PCI_ROM_REGION_INDEX)),
		 EINVAL);
	VT_ERRNO(t, pwrite(fd, &v, 4, vt_roff(VFIO_PCI_ROM_REGION_INDEX)),
		 EINVAL);
}

int main(void)
{
	struct vt t = { .prog = "t-device-region" };
	struct vt_ctx c;

	if (vt_ctx_setup(&c)) {
		fprintf(stderr, "t-device-region: mmap PROT_NONE: %s\n",
			strerror(errno));
		return 2;
	}
	VT_RUN_CTX(&t, &c, test_device_info);
	VT_RUN_CTX(&t, &c, test_region_info_edu);
	VT_RUN_CTX(&t, &c, test_region_info_testdev);
	VT_RUN_CTX(&t, &c, test_region_info_args);
	VT_RUN_CTX(&t, &c, test_bar_rw);
	VT_RUN_CTX(&t, &c, test_bar_mmap);
	VT_RUN_CTX(&t, &c, test_testdev_portio);
	VT_RUN_CTX(&t, &c, test_testdev_mmio);
	VT_RUN_CTX(&t, &c, test_rom);
	return vt_done(&t);
}
