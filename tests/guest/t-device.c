// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device: the device fd of vfio_pci.  Info ioctls and their argument
 * checks, BAR access through read/write and mmap (edu: QEMU
 * docs/specs/edu.rst; pci-testdev: an MMIO and an I/O port BAR), the
 * virtualised config space, MSI and INTx to eventfds with masking and
 * unmasking, the release-request eventfd, reset, and the quiesce when the
 * last fd goes.
 *
 * What the kernel really programmed is read back through the device's
 * sysfs config file, which bypasses our virtualisation.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define PG		4096UL
#define SHIFT		40	/* region index << SHIFT = its fd offset */
#define EDU2		"0000:01:00.0"
#define IRQ_WAIT_MS	3000	/* an interrupt that should come */
#define QUIET_MS	300	/* ... and how long one that should not */

/* edu registers */
#define EDU_ID		0x00
#define EDU_LIVE	0x04
#define EDU_FACT	0x08
#define EDU_STATUS	0x20
#define EDU_STATUS_BUSY	0x01
#define EDU_IRQ_STATUS	0x24
#define EDU_IRQ_RAISE	0x60
#define EDU_IRQ_ACK	0x64
#define EDU_DMA_SRC	0x80
#define EDU_ID_VALUE	0x010000ed
#define EDU_BAR_SIZE	(1UL << 20)

/* config space */
#define CFG_VENDOR	0x00
#define CFG_COMMAND	0x04
#define CFG_STATUS	0x06
#define CFG_CACHELINE	0x0c
#define CFG_HEADER	0x0e
#define CFG_BAR0	0x10
#define CFG_BAR1	0x14
#define CFG_ROM		0x30
#define CFG_CAP_PTR	0x34
#define CFG_INT_LINE	0x3c
#define CFG_INT_PIN	0x3d
#define CMD_IO		0x0001
#define CMD_MEMORY	0x0002
#define CMD_MASTER	0x0004
#define CMD_PARITY	0x0040
#define CMD_SERR	0x0100
#define CMD_INTX_OFF	0x0400
#define STATUS_CAP_LIST	0x0010
#define STATUS_INTX	0x0008
#define CAP_ID_MSI	0x05
#define MSI_FLAGS	2	/* offsets inside the MSI capability */
#define MSI_ADDR_LO	4
#define MSI_ENABLE	0x0001

#define NEFD	4

/*
 * What a case has open; main() closes whatever a failed check left behind,
 * so that the next case starts from the state /init gave us.
 */
struct ctx {
	struct vt_dev d;
	int efd[NEFD];
	void *map;
	size_t maplen;
	void *noaccess;		/* a PROT_NONE page: a bad user pointer */
};

static void ctx_init(struct ctx *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->d.group_fd = c->d.iommu_fd = c->d.device_fd = -1;
	for (i = 0; i < NEFD; i++)
		c->efd[i] = -1;
}

static void ctx_cleanup(struct ctx *c)
{
	void *noaccess;
	int i;

	if (c->map)
		munmap(c->map, c->maplen);
	for (i = 0; i < NEFD; i++)
		if (c->efd[i] >= 0)
			close(c->efd[i]);
	vt_close_dev(&c->d);
	noaccess = c->noaccess;
	ctx_init(c);
	c->noaccess = noaccess;
}

static int dev_open(struct vt *t, struct ctx *c, const char *name)
{
	VT_CHECKF(t, vt_open_dev(&c->d, name) == 0, "open %s: %s", name,
		  strerror(errno));
	return c->d.device_fd;
}

static int efd_new(struct vt *t, struct ctx *c, int i)
{
	c->efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	VT_CHECKF(t, c->efd[i] >= 0, "eventfd: %s", strerror(errno));
	return c->efd[i];
}

static uint64_t roff(unsigned int index)
{
	return (uint64_t)index << SHIFT;
}

/* ---- device and sysfs access -------------------------------------------- */

static uint32_t bar_rd(struct vt *t, int fd, uint32_t reg)
{
	uint32_t v = 0;

	VT_CHECKF(t, pread(fd, &v, 4, roff(0) + reg) == 4,
		  "pread BAR0+0x%x: %s", reg, strerror(errno));
	return v;
}

static void bar_wr(struct vt *t, int fd, uint32_t reg, uint32_t v)
{
	VT_CHECKF(t, pwrite(fd, &v, 4, roff(0) + reg) == 4,
		  "pwrite BAR0+0x%x: %s", reg, strerror(errno));
}

static uint32_t cfg_rd(struct vt *t, int fd, uint32_t off, size_t len)
{
	uint32_t v = 0;

	VT_CHECKF(t, pread(fd, &v, len, roff(VFIO_PCI_CONFIG_REGION_INDEX) + off)
		  == (ssize_t)len, "pread config 0x%x/%zu: %s", off, len,
		  strerror(errno));
	return v;
}

static void cfg_wr(struct vt *t, int fd, uint32_t off, size_t len, uint32_t v)
{
	VT_CHECKF(t, pwrite(fd, &v, len, roff(VFIO_PCI_CONFIG_REGION_INDEX) + off)
		  == (ssize_t)len, "pwrite config 0x%x/%zu: %s", off, len,
		  strerror(errno));
}

static off_t sysfs_config_size(struct vt *t, const char *dev)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", dev);
	VT_CHECKF(t, stat(path, &st) == 0, "stat %s: %s", path, strerror(errno));
	return st.st_size;
}

/* Does the kernel know a reset method for dev? (sysfs reset_method) */
static int sysfs_has_reset(const char *dev)
{
	char path[128], buf[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset_method",
		 dev);
	if (vt_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	return buf[0] != '\0';
}

/* Position of capability id in config space, 0 when absent. */
static uint32_t find_cap(struct vt *t, int fd, uint8_t id)
{
	uint32_t pos;
	int guard = 48;

	if (!(cfg_rd(t, fd, CFG_STATUS, 2) & STATUS_CAP_LIST))
		return 0;
	pos = cfg_rd(t, fd, CFG_CAP_PTR, 1) & ~3U;
	while (pos >= 0x40 && guard--) {
		if (cfg_rd(t, fd, pos, 1) == id)
			return pos;
		pos = cfg_rd(t, fd, pos + 1, 1) & ~3U;
	}
	return 0;
}

static void set_cmd_bits(struct vt *t, int fd, uint16_t set, uint16_t clear)
{
	uint16_t cmd = cfg_rd(t, fd, CFG_COMMAND, 2);

	cfg_wr(t, fd, CFG_COMMAND, 2, (cmd | set) & ~clear);
}

/* eventfd fired within ms? (consumes the count) */
static int fired(int efd, int ms)
{
	return vt_wait_eventfd(efd, ms, NULL) == 0;
}

static void set_irqs(struct vt *t, int fd, uint32_t index, uint32_t count,
		     const int32_t *fds)
{
	VT_CHECKF(t, vt_set_irq_eventfds(fd, index, count, fds) == 0,
		  "SET_IRQ_EVENTFDS index %u count %u: %s", index, count,
		  strerror(errno));
}

/* SET_(UNMASK_)IRQ_EVENTFDS with a hand-made header: -1/errno or 0. */
static int set_raw(int fd, unsigned long req, uint32_t argsz, uint32_t flags,
		   uint32_t index, uint32_t count, int32_t efd)
{
	struct {
		struct vfio_irq_eventfds h;
		int32_t fds[4];
	} s;

	memset(&s, 0, sizeof(s));
	s.h.argsz = argsz;
	s.h.flags = flags;
	s.h.index = index;
	s.h.count = count;
	s.fds[0] = s.fds[1] = s.fds[2] = s.fds[3] = efd;
	return ioctl(fd, req, &s);
}

/* ---- info ioctls ------------------------------------------------------- */

static void test_device_info(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	struct vfio_device_info info;
	struct {
		struct vfio_device_info i;
		uint32_t extra[4];
	} big;
	uint32_t want = sysfs_has_reset(VT_EDU0) ? VFIO_DEVICE_FLAGS_RESET : 0;

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
		  r.offset == roff(index) && r.resv == 0,
		  "region %u: size 0x%llx flags 0x%x offset 0x%llx resv 0x%x; "
		  "want size 0x%llx flags 0x%x offset 0x%llx", index,
		  (unsigned long long)r.size, r.flags,
		  (unsigned long long)r.offset, r.resv, (unsigned long long)size,
		  flags, (unsigned long long)roff(index));
}

static void test_region_info_edu(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	uint32_t i;

	check_region(t, fd, VFIO_PCI_BAR0_REGION_INDEX, EDU_BAR_SIZE,
		     VFIO_REGION_INFO_FLAG_MMAP);
	for (i = VFIO_PCI_BAR1_REGION_INDEX; i <= VFIO_PCI_BAR5_REGION_INDEX;
	     i++)
		check_region(t, fd, i, 0, 0);
	/* edu has no ROM: size 0 means not implemented. */
	check_region(t, fd, VFIO_PCI_ROM_REGION_INDEX, 0, 0);
	check_region(t, fd, VFIO_PCI_CONFIG_REGION_INDEX,
		     sysfs_config_size(t, VT_EDU0), 0);
}

static void test_region_info_testdev(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_TESTDEV0);

	/* 4 KiB MMIO BAR (mmap) and a 256 byte I/O port BAR (no mmap). */
	check_region(t, fd, VFIO_PCI_BAR0_REGION_INDEX, PG,
		     VFIO_REGION_INFO_FLAG_MMAP);
	check_region(t, fd, VFIO_PCI_BAR1_REGION_INDEX, 256, 0);
	check_region(t, fd, VFIO_PCI_BAR2_REGION_INDEX, 0, 0);
	check_region(t, fd, VFIO_PCI_CONFIG_REGION_INDEX,
		     sysfs_config_size(t, VT_TESTDEV0), 0);
}

static void test_region_info_args(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
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
	VT_CHECKF(t, big.r.size == EDU_BAR_SIZE &&
		  big.extra == 0x1122334455667788ULL,
		  "long argsz: size 0x%llx tail 0x%llx",
		  (unsigned long long)big.r.size,
		  (unsigned long long)big.extra);
}

static void check_irq(struct vt *t, int fd, uint32_t index, uint32_t count,
		      uint32_t flags)
{
	struct vfio_irq_info irq;

	memset(&irq, 0xff, sizeof(irq));
	irq.argsz = sizeof(irq);
	irq.index = index;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &irq));
	VT_CHECKF(t, irq.count == count && irq.flags == flags,
		  "irq index %u: count %u flags 0x%x, want %u 0x%x", index,
		  irq.count, irq.flags, count, flags);
}

static void test_irq_info(struct vt *t, struct ctx *c)
{
	struct vfio_region_info reg;
	struct vfio_irq_info irq;
	int fd = dev_open(t, c, VT_EDU0);

	/* edu: INTx pin A, one MSI vector, no MSI-X. */
	check_irq(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, VFIO_IRQ_INFO_FLAG_LEVEL);
	check_irq(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, 0);
	check_irq(t, fd, VFIO_PCI_MSIX_IRQ_INDEX, 0, 0);
	check_irq(t, fd, VFIO_PCI_REQ_IRQ_INDEX, 1, 0);

	memset(&irq, 0, sizeof(irq));
	irq.argsz = sizeof(irq) - 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &irq), EINVAL);
	irq.argsz = sizeof(irq);
	irq.index = VFIO_PCI_NUM_IRQS;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &irq), EINVAL);

	/*
	 * The 2011 documentation passed a struct vfio_region_info here; its
	 * index sits where vfio_irq_info has it and its argsz is larger,
	 * so such a caller still gets the right answer in the first words.
	 */
	memset(&reg, 0, sizeof(reg));
	reg.argsz = sizeof(reg);
	reg.index = VFIO_PCI_INTX_IRQ_INDEX;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &reg));
	VT_CHECKF(t, reg.flags == VFIO_IRQ_INFO_FLAG_LEVEL && reg.resv == 1,
		  "region-struct caller: flags 0x%x count %u", reg.flags,
		  reg.resv);
	vt_close_dev(&c->d);

	/* pci-testdev has no interrupt pin and no MSI capability. */
	fd = dev_open(t, c, VT_TESTDEV0);
	check_irq(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, 0);
	check_irq(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, 0);
	check_irq(t, fd, VFIO_PCI_MSIX_IRQ_INDEX, 0, 0);
}

/* ---- BAR access -------------------------------------------------------- */

static uint32_t edu_factorial(struct vt *t, int fd, uint32_t n)
{
	uint64_t end = vt_now_ms() + 2000;

	bar_wr(t, fd, EDU_FACT, n);
	while (bar_rd(t, fd, EDU_STATUS) & EDU_STATUS_BUSY) {
		VT_CHECKF(t, vt_now_ms() < end, "factorial still busy");
		usleep(1000);
	}
	return bar_rd(t, fd, EDU_FACT);
}

static void test_bar_rw(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	uint64_t q = 0x0123456789abcdefULL, q2 = 0;
	uint32_t v, buf[3];

	v = bar_rd(t, fd, EDU_ID);
	VT_CHECKF(t, v == EDU_ID_VALUE, "edu id 0x%08x", v);

	/* Liveness: the register reads back the inverse of what we wrote. */
	bar_wr(t, fd, EDU_LIVE, 0x12345678);
	v = bar_rd(t, fd, EDU_LIVE);
	VT_CHECKF(t, v == ~0x12345678U, "liveness read 0x%08x", v);

	v = edu_factorial(t, fd, 5);
	VT_CHECKF(t, v == 120, "5! = %u", v);
	v = edu_factorial(t, fd, 12);
	VT_CHECKF(t, v == 479001600, "12! = %u", v);

	/* An 8 byte register done as one 8 byte access. */
	VT_CHECKF(t, pwrite(fd, &q, 8, roff(0) + EDU_DMA_SRC) == 8,
		  "pwrite 8: %s", strerror(errno));
	VT_CHECKF(t, pread(fd, &q2, 8, roff(0) + EDU_DMA_SRC) == 8,
		  "pread 8: %s", strerror(errno));
	VT_CHECKF(t, q2 == q, "8 byte register read 0x%llx",
		  (unsigned long long)q2);

	/*
	 * 12 bytes from 0: split into 4 byte accesses (edu ignores 8 byte
	 * ones below 0x80, as many devices would).
	 */
	memset(buf, 0, sizeof(buf));
	VT_CHECKF(t, pread(fd, buf, 12, roff(0)) == 12, "pread 12: %s",
		  strerror(errno));
	VT_CHECKF(t, buf[0] == EDU_ID_VALUE && buf[1] == ~0x12345678U &&
		  buf[2] == 479001600, "split read 0x%x 0x%x 0x%x", buf[0],
		  buf[1], buf[2]);

	/* read(2)/write(2) at the file position work the same way. */
	VT_CHECKF(t, lseek(fd, roff(0) + EDU_LIVE, SEEK_SET) ==
		  (off_t)(roff(0) + EDU_LIVE), "lseek: %s", strerror(errno));
	v = 0xcafe0000;
	VT_CHECKF(t, write(fd, &v, 4) == 4, "write: %s", strerror(errno));
	VT_CHECKF(t, lseek(fd, roff(0) + EDU_LIVE, SEEK_SET) >= 0, "lseek");
	VT_CHECKF(t, read(fd, &v, 4) == 4, "read: %s", strerror(errno));
	VT_CHECKF(t, v == ~0xcafe0000U, "read(2) liveness 0x%08x", v);

	/* Bounds: cut short at the end, refused past it. */
	VT_CHECKF(t, pread(fd, &q, 8, roff(0) + EDU_BAR_SIZE - 4) == 4,
		  "read across the end: %s", strerror(errno));
	VT_ERRNO(t, pread(fd, &v, 4, roff(0) + EDU_BAR_SIZE), EINVAL);
	VT_ERRNO(t, pwrite(fd, &v, 4, roff(0) + EDU_BAR_SIZE), EINVAL);
	/* No BAR1; no region 8; an offset inside no region. */
	VT_ERRNO(t, pread(fd, &v, 4, roff(1)), EINVAL);
	VT_ERRNO(t, pread(fd, &v, 4, roff(VFIO_PCI_NUM_REGIONS)), EINVAL);
	VT_ERRNO(t, pread(fd, &v, 4, roff(60)), EINVAL);
	/* Zero bytes is no access. */
	VT_CHECKF(t, pread(fd, &v, 0, roff(0)) == 0, "0 byte read");
	/* Bad user buffer: a clean EFAULT. */
	VT_ERRNO(t, pread(fd, c->noaccess, 4, roff(0)), EFAULT);
	VT_ERRNO(t, pwrite(fd, c->noaccess, 4, roff(0) + EDU_LIVE),
		 EFAULT);
}

static void test_bar_mmap(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	volatile uint32_t *r;
	uint64_t end;
	void *p;

	c->map = mmap(NULL, EDU_BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, roff(0));
	VT_CHECKF(t, c->map != MAP_FAILED, "mmap BAR0: %s", strerror(errno));
	c->maplen = EDU_BAR_SIZE;
	r = c->map;

	VT_CHECKF(t, r[EDU_ID / 4] == EDU_ID_VALUE, "mmap id 0x%08x",
		  r[EDU_ID / 4]);
	r[EDU_LIVE / 4] = 0x0badf00d;
	VT_CHECKF(t, r[EDU_LIVE / 4] == ~0x0badf00dU, "mmap liveness 0x%08x",
		  r[EDU_LIVE / 4]);
	/* Both paths reach the same register. */
	VT_CHECKF(t, bar_rd(t, fd, EDU_LIVE) == ~0x0badf00dU, "pread after mmap");

	r[EDU_FACT / 4] = 10;
	end = vt_now_ms() + 2000;
	while (r[EDU_STATUS / 4] & EDU_STATUS_BUSY)
		VT_CHECKF(t, vt_now_ms() < end, "factorial busy");
	VT_CHECKF(t, r[EDU_FACT / 4] == 3628800, "mmap 10! = %u",
		  r[EDU_FACT / 4]);

	/* A page inside the BAR alone. */
	p = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, roff(0) + 3 * PG);
	VT_CHECKF(t, p != MAP_FAILED, "mmap one page: %s", strerror(errno));
	munmap(p, PG);

	/* Private, past the end, too long, ROM, config: all refused. */
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, roff(0)) ==
		 MAP_FAILED ? -1 : 0, EINVAL);
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
			 roff(0) + EDU_BAR_SIZE) == MAP_FAILED ? -1 : 0,
		 EINVAL);
	VT_ERRNO(t, mmap(NULL, EDU_BAR_SIZE + PG, PROT_READ, MAP_SHARED, fd,
			 roff(0)) == MAP_FAILED ? -1 : 0, EINVAL);
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, roff(1)) ==
		 MAP_FAILED ? -1 : 0, EINVAL);
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
			 roff(VFIO_PCI_ROM_REGION_INDEX)) == MAP_FAILED ?
		 -1 : 0, EINVAL);
	VT_ERRNO(t, mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
			 roff(VFIO_PCI_CONFIG_REGION_INDEX)) == MAP_FAILED ?
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

static void test_testdev_portio(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_TESTDEV0);
	uint64_t base = roff(VFIO_PCI_BAR1_REGION_INDEX);
	struct testdev_hdr h;
	uint8_t sel = 0, b;
	uint16_t w = 0;
	uint32_t l = 0;

	/* Port I/O on, then select "portio-no-eventfd". */
	set_cmd_bits(t, fd, CMD_IO, 0);
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

static void test_testdev_mmio(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_TESTDEV0);
	volatile uint8_t *m;
	char name[16];
	uint32_t off, cnt;
	int i;

	c->map = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      roff(0));
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
	VT_CHECKF(t, pread(fd, &cnt, 4, roff(0) + 12) == 4 && cnt == 1,
		  "pread count %u", cnt);
}

static void test_rom(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	uint32_t v = 0;

	/* Read only, and edu has none: every access is refused cleanly. */
	VT_ERRNO(t, pread(fd, &v, 4, roff(VFIO_PCI_ROM_REGION_INDEX)), EINVAL);
	VT_ERRNO(t, pwrite(fd, &v, 4, roff(VFIO_PCI_ROM_REGION_INDEX)),
		 EINVAL);
}

/* ---- config space ------------------------------------------------------ */

static void test_config_ids(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	uint32_t v, real[64], virt[64];
	int i;

	v = cfg_rd(t, fd, CFG_VENDOR, 4);
	VT_CHECKF(t, v == (VT_EDU_VENDOR | VT_EDU_DEVICE << 16), "ids 0x%08x", v);
	VT_CHECKF(t, cfg_rd(t, fd, CFG_VENDOR, 2) == VT_EDU_VENDOR &&
		  cfg_rd(t, fd, 2, 2) == VT_EDU_DEVICE &&
		  cfg_rd(t, fd, 1, 1) == (VT_EDU_VENDOR >> 8), "partial reads");
	/* Unaligned, crossing a dword. */
	v = cfg_rd(t, fd, 3, 2);
	VT_CHECKF(t, (v & 0xff) == (VT_EDU_DEVICE >> 8), "unaligned 0x%x", v);

	/*
	 * The whole header in one read matches the real one except where
	 * it is virtual: command (INTx disable), BARs, ROM, the bytes at
	 * 0x0c/0x0d and 0x3c, which all start out as the real values.
	 */
	VT_CHECKF(t, pread(fd, virt, 256, roff(VFIO_PCI_CONFIG_REGION_INDEX))
		  == 256, "read 256: %s", strerror(errno));
	for (i = 0; i < 64; i++)
		real[i] = vt_real_cfg(t, VT_EDU0, i * 4, 4);
	for (i = 0; i < 64; i++) {
		uint32_t mask = ~0U;

		if (i == 1)	/* status bits may change under us */
			mask = 0xffff;
		VT_CHECKF(t, (virt[i] & mask) == (real[i] & mask),
			  "dword 0x%x: virtual 0x%08x real 0x%08x", i * 4,
			  virt[i], real[i]);
	}
	VT_CHECKF(t, cfg_rd(t, fd, CFG_HEADER, 1) == 0, "header type");
}

static void test_config_bars(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	uint32_t real0 = vt_real_cfg(t, VT_EDU0, CFG_BAR0, 4);
	uint32_t v;

	VT_CHECKF(t, cfg_rd(t, fd, CFG_BAR0, 4) == real0, "BAR0 starts real");

	/* Sizing: all ones reads back the size mask (1 MiB, 32-bit mem). */
	cfg_wr(t, fd, CFG_BAR0, 4, ~0U);
	v = cfg_rd(t, fd, CFG_BAR0, 4);
	VT_CHECKF(t, v == 0xfff00000, "BAR0 sizing reads 0x%08x", v);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, CFG_BAR0, 4) == real0,
		  "real BAR0 moved to 0x%08x", vt_real_cfg(t, VT_EDU0, CFG_BAR0, 4));

	/* A value reads back as written, minus the bits below the size. */
	cfg_wr(t, fd, CFG_BAR0, 4, 0x12345678);
	v = cfg_rd(t, fd, CFG_BAR0, 4);
	VT_CHECKF(t, v == 0x12300000, "BAR0 reads 0x%08x after 0x12345678", v);
	/* Byte writes merge into the virtual BAR. */
	cfg_wr(t, fd, CFG_BAR0 + 3, 1, 0xab);
	v = cfg_rd(t, fd, CFG_BAR0, 4);
	VT_CHECKF(t, v == 0xab300000, "BAR0 reads 0x%08x after a byte write", v);

	/* Unimplemented BARs and the missing ROM stay 0. */
	cfg_wr(t, fd, CFG_BAR1, 4, ~0U);
	VT_CHECKF(t, cfg_rd(t, fd, CFG_BAR1, 4) == 0, "BAR1 not 0");
	cfg_wr(t, fd, CFG_ROM, 4, ~0U);
	VT_CHECKF(t, cfg_rd(t, fd, CFG_ROM, 4) == 0, "ROM BAR not 0");

	/* The device still decodes where the host put it. */
	VT_CHECKF(t, bar_rd(t, fd, EDU_ID) == EDU_ID_VALUE, "BAR0 still works");
	cfg_wr(t, fd, CFG_BAR0, 4, real0);
	vt_close_dev(&c->d);

	/* The I/O BAR of pci-testdev: 256 ports, bit 0 set. */
	fd = dev_open(t, c, VT_TESTDEV0);
	cfg_wr(t, fd, CFG_BAR1, 4, ~0U);
	v = cfg_rd(t, fd, CFG_BAR1, 4);
	VT_CHECKF(t, v == 0xffffff01, "I/O BAR sizing reads 0x%08x", v);
	cfg_wr(t, fd, CFG_BAR0, 4, ~0U);
	v = cfg_rd(t, fd, CFG_BAR0, 4);
	VT_CHECKF(t, v == 0xfffff000, "4K BAR sizing reads 0x%08x", v);
}

static void test_config_command(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	uint16_t real, v;

	real = vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2);
	VT_CHECKF(t, real & CMD_MEMORY, "memory decode off after open: 0x%x",
		  real);

	/* Bus master passes through (DMA needs it). */
	set_cmd_bits(t, fd, CMD_MASTER, 0);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2) & CMD_MASTER,
		  "bus master did not reach the device");
	VT_CHECKF(t, cfg_rd(t, fd, CFG_COMMAND, 2) & CMD_MASTER, "virtual master");
	set_cmd_bits(t, fd, 0, CMD_MASTER);
	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2) & CMD_MASTER),
		  "bus master not cleared");

	/* SERR and parity are not the user's: dropped. */
	real = vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2);
	set_cmd_bits(t, fd, CMD_SERR | CMD_PARITY, 0);
	v = vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2);
	VT_CHECKF(t, (v & (CMD_SERR | CMD_PARITY)) == (real & (CMD_SERR |
		  CMD_PARITY)), "filtered bits reached the device: 0x%x", v);
	/* A byte write of the high half alone: same filter. */
	cfg_wr(t, fd, CFG_COMMAND + 1, 1, CMD_SERR >> 8);
	v = vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2);
	VT_CHECKF(t, (v & CMD_SERR) == (real & CMD_SERR), "SERR via byte write");

	/* INTx disable passes through while no IRQ index is active. */
	set_cmd_bits(t, fd, CMD_INTX_OFF, 0);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2) & CMD_INTX_OFF,
		  "INTx disable did not reach the device");
	VT_CHECKF(t, cfg_rd(t, fd, CFG_COMMAND, 2) & CMD_INTX_OFF,
		  "INTx disable not shown");
	set_cmd_bits(t, fd, 0, CMD_INTX_OFF);
	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2) & CMD_INTX_OFF),
		  "INTx disable not cleared");

	/* Status is not writable (its error bits are write-1-to-clear). */
	real = vt_real_cfg(t, VT_EDU0, CFG_STATUS, 2);
	cfg_wr(t, fd, CFG_STATUS, 2, 0xffff);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, CFG_STATUS, 2) == real,
		  "status changed");
}

static void test_config_dropped(struct vt *t, struct ctx *c)
{
	static const uint32_t ro[] = { CFG_VENDOR, 0x08, CFG_CAP_PTR, 0x2c,
				       0x40, 0x80, 0xfc };
	int fd = dev_open(t, c, VT_EDU0);
	uint32_t before, real;
	unsigned int i;

	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
		before = cfg_rd(t, fd, ro[i], 4);
		real = vt_real_cfg(t, VT_EDU0, ro[i], 4);
		cfg_wr(t, fd, ro[i], 4, ~before);
		VT_CHECKF(t, cfg_rd(t, fd, ro[i], 4) == before &&
			  vt_real_cfg(t, VT_EDU0, ro[i], 4) == real,
			  "write to 0x%x was not dropped", ro[i]);
	}
	/* Interrupt pin and header type are read only. */
	before = cfg_rd(t, fd, CFG_INT_PIN, 1);
	cfg_wr(t, fd, CFG_INT_PIN, 1, before ^ 0xff);
	VT_CHECKF(t, cfg_rd(t, fd, CFG_INT_PIN, 1) == before, "pin changed");
	VT_CHECKF(t, before == 1, "edu interrupt pin %u", before);

	/* Interrupt line and cache line size are virtual bytes. */
	real = vt_real_cfg(t, VT_EDU0, CFG_INT_LINE, 1);
	cfg_wr(t, fd, CFG_INT_LINE, 1, real ^ 0x5a);
	VT_CHECKF(t, cfg_rd(t, fd, CFG_INT_LINE, 1) == (real ^ 0x5a),
		  "interrupt line not virtual");
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, CFG_INT_LINE, 1) == real,
		  "interrupt line reached the device");
	cfg_wr(t, fd, CFG_CACHELINE, 1, 0x10);
	VT_CHECKF(t, cfg_rd(t, fd, CFG_CACHELINE, 1) == 0x10, "cache line size");

	/* Bounds: the config region is exactly config space. */
	VT_ERRNO(t, pread(fd, &before, 4,
			  roff(VFIO_PCI_CONFIG_REGION_INDEX) +
			  sysfs_config_size(t, VT_EDU0)), EINVAL);
	VT_CHECKF(t, pread(fd, &before, 4, roff(VFIO_PCI_CONFIG_REGION_INDEX) +
			   sysfs_config_size(t, VT_EDU0) - 2) == 2,
		  "read across the end of config space not cut short");
	VT_ERRNO(t, pread(fd, c->noaccess, 4,
			  roff(VFIO_PCI_CONFIG_REGION_INDEX)), EFAULT);
}

static void test_config_msi_cap(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	uint32_t pos, flags, addr, rflags;
	int32_t efd;

	pos = find_cap(t, fd, CAP_ID_MSI);
	VT_CHECKF(t, pos, "edu has no MSI capability in the virtual config");
	flags = cfg_rd(t, fd, pos + MSI_FLAGS, 2);
	addr = cfg_rd(t, fd, pos + MSI_ADDR_LO, 4);
	VT_CHECKF(t, !(flags & MSI_ENABLE), "MSI enabled at open: 0x%x", flags);

	/* The kernel owns MSI: enable and address writes are dropped. */
	cfg_wr(t, fd, pos + MSI_FLAGS, 2, flags | MSI_ENABLE);
	cfg_wr(t, fd, pos + MSI_ADDR_LO, 4, 0xfee00000);
	VT_CHECKF(t, cfg_rd(t, fd, pos + MSI_FLAGS, 2) == flags,
		  "MSI flags now 0x%x", cfg_rd(t, fd, pos + MSI_FLAGS, 2));
	VT_CHECKF(t, cfg_rd(t, fd, pos + MSI_ADDR_LO, 4) == addr,
		  "MSI address written");
	rflags = vt_real_cfg(t, VT_EDU0, pos + MSI_FLAGS, 2);
	VT_CHECKF(t, !(rflags & MSI_ENABLE), "MSI enabled in the device");

	/* Enabled through the ioctl, the capability shows it. */
	efd = efd_new(t, c, 0);
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &efd);
	flags = cfg_rd(t, fd, pos + MSI_FLAGS, 2);
	VT_CHECKF(t, (flags & MSI_ENABLE) &&
		  (vt_real_cfg(t, VT_EDU0, pos + MSI_FLAGS, 2) & MSI_ENABLE),
		  "MSI on but flags 0x%x", flags);
	/* ... and the user still cannot turn it off behind the kernel. */
	cfg_wr(t, fd, pos + MSI_FLAGS, 2, flags & ~MSI_ENABLE);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, pos + MSI_FLAGS, 2) & MSI_ENABLE,
		  "user disabled MSI");
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, NULL);
	VT_CHECKF(t, !(cfg_rd(t, fd, pos + MSI_FLAGS, 2) & MSI_ENABLE),
		  "MSI still shown enabled after count 0");
}

/* ---- interrupts -------------------------------------------------------- */

static void edu_raise(struct vt *t, int fd, uint32_t bits)
{
	bar_wr(t, fd, EDU_IRQ_RAISE, bits);
}

static void edu_ack(struct vt *t, int fd)
{
	uint32_t st = bar_rd(t, fd, EDU_IRQ_STATUS);

	bar_wr(t, fd, EDU_IRQ_ACK, st);
}

static void test_msi(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	int32_t efd = efd_new(t, c, 0);
	uint64_t n = 0;
	int i;

	/* An MSI is a DMA write: the user must allow bus mastering. */
	set_cmd_bits(t, fd, CMD_MEMORY | CMD_MASTER, 0);
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &efd);
	VT_CHECKF(t, vt_irq_listed("vfio-msi[0](" VT_EDU0 ")") == 1,
		  "no vfio-msi[0](" VT_EDU0 ") in /proc/interrupts");

	for (i = 0; i < 3; i++) {
		VT_CHECKF(t, !fired(efd, 0), "eventfd set before raise %d", i);
		edu_raise(t, fd, 1);
		VT_CHECKF(t, vt_wait_eventfd(efd, IRQ_WAIT_MS, &n) == 0,
			  "no MSI %d within %d ms", i, IRQ_WAIT_MS);
		VT_CHECKF(t, bar_rd(t, fd, EDU_IRQ_STATUS) == 1, "irq status");
		edu_ack(t, fd);
	}

	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, NULL);
	VT_CHECKF(t, vt_irq_listed("vfio-msi[0](" VT_EDU0 ")") == 0,
		  "MSI handler still registered after count 0");
	VT_CHECKF(t, !fired(efd, 0), "eventfd signalled after count 0");
}

static void test_msi_change(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	int32_t e1 = efd_new(t, c, 0), e2 = efd_new(t, c, 1), none = -1;
	uint32_t pos;

	set_cmd_bits(t, fd, CMD_MEMORY | CMD_MASTER, 0);

	/*
	 * -1: MSI on, vector left unconnected; an MSI goes nowhere.  Its
	 * message must still be a real one: an unprogrammed vector would
	 * make the device DMA to address 0.
	 */
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &none);
	pos = find_cap(t, fd, CAP_ID_MSI);
	VT_CHECKF(t, pos && vt_real_cfg(t, VT_EDU0, pos + MSI_ADDR_LO, 4),
		  "unconnected MSI vector has address 0");
	edu_raise(t, fd, 1);
	VT_CHECKF(t, !fired(e1, QUIET_MS) && !fired(e2, 0), "unconnected fired");
	edu_ack(t, fd);

	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &e1);
	edu_raise(t, fd, 1);
	VT_CHECKF(t, fired(e1, IRQ_WAIT_MS), "no MSI on e1");
	edu_ack(t, fd);

	/* Change: only the new eventfd hears it. */
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &e2);
	edu_raise(t, fd, 1);
	VT_CHECKF(t, fired(e2, IRQ_WAIT_MS), "no MSI on e2");
	VT_CHECKF(t, !fired(e1, 0), "old eventfd still signalled");
	edu_ack(t, fd);

	/* Unset again. */
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &none);
	edu_raise(t, fd, 1);
	VT_CHECKF(t, !fired(e2, QUIET_MS), "unset vector fired");
	edu_ack(t, fd);
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, NULL);
}

static void test_irq_set_errors(struct vt *t, struct ctx *c)
{
	const unsigned long S = VFIO_DEVICE_SET_IRQ_EVENTFDS;
	const unsigned long U = VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS;
	const uint32_t hsz = sizeof(struct vfio_irq_eventfds);
	int fd = dev_open(t, c, VT_EDU0);
	int32_t efd = efd_new(t, c, 0), e2 = efd_new(t, c, 1);
	struct vfio_unmask_irq un;

	/* Argument checks. */
	VT_ERRNO(t, set_raw(fd, S, hsz - 1, 0, 1, 0, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 1, 1, 1, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_NUM_IRQS, 1, efd),
		 EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 8, 0, 1, 2, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_MSIX_IRQ_INDEX, 1,
			    efd), EINVAL);
	/* argsz too small for the eventfds it claims */
	VT_ERRNO(t, set_raw(fd, S, hsz + 3, 0, 1, 1, efd), EINVAL);
	VT_ERRNO(t, ioctl(fd, S, NULL), EFAULT);

	/* Bad eventfds, and nothing is left half set up afterwards. */
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 1, 1, 999), EBADF);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 1, 1, -7), EBADF);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 1, 1, fd), EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 0, 1, 999), EBADF);
	VT_CHECKF(t, vt_irq_listed("(" VT_EDU0 ")") == 0,
		  "an IRQ stayed registered after a failed set");
	/* If MSI were half on, INTx would be refused with EBUSY. */
	set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, &efd);

	/* One index at a time. */
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 1, 1, e2), EBUSY);
	/* count 0 of an inactive index is a no-op, not an error. */
	VT_OK(t, set_raw(fd, S, hsz, 0, VFIO_PCI_MSI_IRQ_INDEX, 0, -1));
	VT_OK(t, set_raw(fd, S, hsz, 0, VFIO_PCI_MSIX_IRQ_INDEX, 0, -1));
	set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, NULL);
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &e2);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 0, 1, efd), EBUSY);

	/* Unmask applies to INTx only, and only while it is on. */
	memset(&un, 0, sizeof(un));
	un.argsz = sizeof(un);
	un.index = VFIO_PCI_MSI_IRQ_INDEX;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	un.index = VFIO_PCI_INTX_IRQ_INDEX;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 0, 0, 1, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 0, 1, 1, efd), EINVAL);
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, NULL);

	set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, &efd);
	un.argsz = sizeof(un) - 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	un.argsz = sizeof(un);
	un.flags = 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	un.flags = 0;
	un.subindex = 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	un.subindex = 0;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un));
	VT_ERRNO(t, set_raw(fd, U, hsz + 8, 0, 0, 2, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 0, 0, 1, 999), EBADF);
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 1, 0, 1, efd), EINVAL);
	/* The trigger cannot be its own unmask (an endless unmask loop). */
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 0, 0, 1, efd), EINVAL);
	VT_OK(t, set_raw(fd, U, hsz + 4, 0, 0, 1, e2));
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 0, 1, e2), EINVAL);
	VT_OK(t, set_raw(fd, U, hsz + 4, 0, 0, 1, -1));
	set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, NULL);

	/* The release request index: one eventfd, set and unset. */
	VT_OK(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_REQ_IRQ_INDEX, 1, efd));
	VT_OK(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_REQ_IRQ_INDEX, 1, -1));
	VT_ERRNO(t, set_raw(fd, S, hsz + 8, 0, VFIO_PCI_REQ_IRQ_INDEX, 2, efd),
		 EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_REQ_IRQ_INDEX, 1, 999),
		 EBADF);
	VT_OK(t, set_raw(fd, S, hsz, 0, VFIO_PCI_REQ_IRQ_INDEX, 0, -1));

	/* pci-testdev has no pin: no INTx to enable. */
	vt_close_dev(&c->d);
	fd = dev_open(t, c, VT_TESTDEV0);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 0, 1, efd), EINVAL);
}

static void unmask(struct vt *t, int fd)
{
	struct vfio_unmask_irq un = {
		.argsz = sizeof(un),
		.index = VFIO_PCI_INTX_IRQ_INDEX,
	};

	VT_OK(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un));
}

/* Is INTx masked in the device (INTx disable set by the kernel)? */
static int intx_masked(struct vt *t)
{
	return !!(vt_real_cfg(t, VT_EDU0, CFG_COMMAND, 2) & CMD_INTX_OFF);
}

static void test_intx(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	int32_t efd = efd_new(t, c, 0);

	set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, &efd);
	VT_CHECKF(t, vt_irq_listed("vfio-intx(" VT_EDU0 ")") == 1,
		  "no vfio-intx(" VT_EDU0 ") in /proc/interrupts");
	VT_CHECKF(t, !intx_masked(t), "INTx masked before any interrupt");

	/* Delivered, and masked at delivery. */
	edu_raise(t, fd, 1);
	VT_CHECKF(t, fired(efd, IRQ_WAIT_MS), "no INTx within %d ms",
		  IRQ_WAIT_MS);
	VT_CHECKF(t, intx_masked(t), "INTx not masked after delivery");
	/* The user's view of INTx disable is its own (it never set it). */
	VT_CHECKF(t, !(cfg_rd(t, fd, CFG_COMMAND, 2) & CMD_INTX_OFF),
		  "virtual command shows the kernel's mask");

	/* Serviced, raised again: masked, so nothing arrives. */
	edu_ack(t, fd);
	edu_raise(t, fd, 2);
	VT_CHECKF(t, !fired(efd, QUIET_MS), "INTx delivered while masked");
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, CFG_STATUS, 2) & STATUS_INTX,
		  "device does not show its pending INTx");

	/* Unmask with the line still up: the user hears it (again). */
	unmask(t, fd);
	VT_CHECKF(t, fired(efd, IRQ_WAIT_MS), "pending INTx not reported on unmask");
	edu_ack(t, fd);
	/* Now nothing pending: unmask really unmasks ... */
	unmask(t, fd);
	VT_CHECKF(t, !intx_masked(t), "INTx still masked after unmask");
	VT_CHECKF(t, !fired(efd, QUIET_MS), "spurious INTx after unmask");
	/* ... and the next one is delivered (and masked) again. */
	edu_raise(t, fd, 4);
	VT_CHECKF(t, fired(efd, IRQ_WAIT_MS), "no INTx after unmask");
	VT_CHECKF(t, intx_masked(t), "not masked after the second delivery");
	edu_ack(t, fd);
	unmask(t, fd);

	set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, NULL);
	VT_CHECKF(t, vt_irq_listed("vfio-intx(" VT_EDU0 ")") == 0,
		  "INTx handler still registered after count 0");
}

static void test_intx_unmask_eventfd(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU0);
	int32_t efd = efd_new(t, c, 0), ufd = efd_new(t, c, 1);
	uint64_t one = 1;

	set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, &efd);
	VT_OK(t, set_raw(fd, VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS,
			 sizeof(struct vfio_irq_eventfds) + 4, 0, 0, 1, ufd));

	edu_raise(t, fd, 1);
	VT_CHECKF(t, fired(efd, IRQ_WAIT_MS), "no INTx");
	edu_ack(t, fd);
	edu_raise(t, fd, 1);
	VT_CHECKF(t, !fired(efd, QUIET_MS), "INTx while masked");

	/* A write to the unmask eventfd acts as UNMASK_IRQ. */
	VT_CHECKF(t, write(ufd, &one, 8) == 8, "write unmask eventfd");
	VT_CHECKF(t, fired(efd, IRQ_WAIT_MS), "pending INTx not reported");
	edu_ack(t, fd);
	VT_CHECKF(t, write(ufd, &one, 8) == 8, "write unmask eventfd");
	/* The unmask runs from a work item: give it a moment. */
	{
		uint64_t end = vt_now_ms() + IRQ_WAIT_MS;

		while (intx_masked(t) && vt_now_ms() < end)
			usleep(1000);
	}
	VT_CHECKF(t, !intx_masked(t), "unmask eventfd did not unmask");
	/* The kernel consumed the unmask count. */
	VT_CHECKF(t, !fired(ufd, 0), "unmask eventfd still readable");
	edu_raise(t, fd, 1);
	VT_CHECKF(t, fired(efd, IRQ_WAIT_MS), "no INTx after eventfd unmask");
	edu_ack(t, fd);

	/* Closing our copy of the eventfd is harmless: the kernel has its
	 * own reference until the index goes. */
	close(ufd);
	c->efd[1] = -1;
	set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, NULL);
}

/* ---- reset and release ------------------------------------------------- */

static void test_reset(struct vt *t, struct ctx *c)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };
	int fd = dev_open(t, c, VT_EDU0);
	uint32_t bar0;

	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_INFO, &info));
	if (!(info.flags & VFIO_DEVICE_FLAGS_RESET)) {
		/* edu on the root bus has no FLR, PM or bus reset. */
		VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_RESET), EINVAL);
	} else {
		VT_OK(t, ioctl(fd, VFIO_DEVICE_RESET));
	}
	vt_close_dev(&c->d);

	/* edu2 sits alone behind a root port: a bus reset exists. */
	if (access("/sys/bus/pci/devices/" EDU2, F_OK))
		vt_skip(t, "no edu2 at " EDU2);
	fd = dev_open(t, c, EDU2);
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info);
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_INFO, &info));
	VT_CHECKF(t, !!(info.flags & VFIO_DEVICE_FLAGS_RESET) ==
		  sysfs_has_reset(EDU2), "RESET flag 0x%x vs sysfs reset_method",
		  info.flags);
	if (!(info.flags & VFIO_DEVICE_FLAGS_RESET))
		vt_skip(t, "edu2 has no reset method");

	set_cmd_bits(t, fd, CMD_MEMORY | CMD_MASTER, 0);
	bar0 = vt_real_cfg(t, EDU2, CFG_BAR0, 4);
	bar_wr(t, fd, EDU_LIVE, 1);
	VT_OK(t, ioctl(fd, VFIO_DEVICE_RESET));
	/* The config space is back where it was: BARs and command. */
	VT_CHECKF(t, vt_real_cfg(t, EDU2, CFG_BAR0, 4) == bar0, "BAR0 lost");
	VT_CHECKF(t, (vt_real_cfg(t, EDU2, CFG_COMMAND, 2) &
		      (CMD_MEMORY | CMD_MASTER)) == (CMD_MEMORY | CMD_MASTER),
		  "command 0x%x after reset", vt_real_cfg(t, EDU2, CFG_COMMAND, 2));
	VT_CHECKF(t, bar_rd(t, fd, EDU_ID) == EDU_ID_VALUE, "id after reset");
	VT_CHECKF(t, edu_factorial(t, fd, 6) == 720, "edu dead after reset");
}

static void test_quiesce_on_close(struct vt *t, struct ctx *c)
{
	int fd = dev_open(t, c, VT_EDU1);
	int32_t efd = efd_new(t, c, 0);
	uint32_t bar0 = vt_real_cfg(t, VT_EDU1, CFG_BAR0, 4);
	uint32_t pos;

	/* Before: what /init left (bound, not open). */
	pos = find_cap(t, fd, CAP_ID_MSI);
	VT_CHECKF(t, pos, "no MSI cap");
	set_cmd_bits(t, fd, CMD_MEMORY | CMD_MASTER, 0);
	cfg_wr(t, fd, CFG_BAR0, 4, ~0U);
	set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &efd);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU1, CFG_COMMAND, 2) & CMD_MASTER,
		  "bus master not on");
	VT_CHECKF(t, vt_irq_listed("vfio-msi[0](" VT_EDU1 ")") == 1,
		  "MSI not registered");

	/* The device fd goes last: the group and IOMMU fds close first. */
	close(c->d.group_fd);
	c->d.group_fd = -1;
	close(c->d.iommu_fd);
	c->d.iommu_fd = -1;
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU1, CFG_COMMAND, 2) & CMD_MASTER,
		  "quiesced while the device fd is still open");
	close(c->d.device_fd);
	c->d.device_fd = -1;

	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU1, CFG_COMMAND, 2) & CMD_MASTER),
		  "bus master still on after the last close: 0x%x",
		  vt_real_cfg(t, VT_EDU1, CFG_COMMAND, 2));
	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU1, pos + MSI_FLAGS, 2) & MSI_ENABLE),
		  "MSI still enabled after the last close");
	VT_CHECKF(t, vt_irq_listed("vfio-msi[0](" VT_EDU1 ")") == 0,
		  "MSI handler left registered");
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU1, CFG_BAR0, 4) == bar0, "BAR0 changed");

	/* Open again: a clean device, the virtual BAR back to real. */
	fd = dev_open(t, c, VT_EDU1);
	VT_CHECKF(t, cfg_rd(t, fd, CFG_BAR0, 4) == bar0,
		  "virtual BAR0 kept the last user's value");
	VT_CHECKF(t, !(cfg_rd(t, fd, pos + MSI_FLAGS, 2) & MSI_ENABLE),
		  "MSI on at the next open");
	VT_CHECKF(t, bar_rd(t, fd, EDU_ID) == EDU_ID_VALUE, "edu1 after reopen");
}

#define RUN(t, c, fn) do {						\
	VT_RUN(t, fn, c);						\
	ctx_cleanup(c);							\
} while (0)

int main(void)
{
	struct vt t = { .prog = "t-device" };
	struct ctx c;

	ctx_init(&c);
	c.noaccess = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (c.noaccess == MAP_FAILED) {
		fprintf(stderr, "t-device: mmap PROT_NONE: %s\n",
			strerror(errno));
		return 2;
	}
	RUN(&t, &c, test_device_info);
	RUN(&t, &c, test_region_info_edu);
	RUN(&t, &c, test_region_info_testdev);
	RUN(&t, &c, test_region_info_args);
	RUN(&t, &c, test_irq_info);
	RUN(&t, &c, test_bar_rw);
	RUN(&t, &c, test_bar_mmap);
	RUN(&t, &c, test_testdev_portio);
	RUN(&t, &c, test_testdev_mmio);
	RUN(&t, &c, test_rom);
	RUN(&t, &c, test_config_ids);
	RUN(&t, &c, test_config_bars);
	RUN(&t, &c, test_config_command);
	RUN(&t, &c, test_config_dropped);
	RUN(&t, &c, test_config_msi_cap);
	RUN(&t, &c, test_msi);
	RUN(&t, &c, test_msi_change);
	RUN(&t, &c, test_irq_set_errors);
	RUN(&t, &c, test_intx);
	RUN(&t, &c, test_intx_unmask_eventfd);
	RUN(&t, &c, test_reset);
	RUN(&t, &c, test_quiesce_on_close);
	return vt_done(&t);
}
