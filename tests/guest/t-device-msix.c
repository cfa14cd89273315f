// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-msix: MSI-X and extended config space, on an Intel 82574L
 * (QEMU e1000e), which the standard VM does not have: the msix machine
 * of tests/vm/machines.toml has one,
 *
 *   tests/vm/run-suite.sh --machine msix --only t-device-msix
 *
 * and every case skips without it.  No driver in the guest claims the
 * NIC; it is bound to vfio here and unbound again at the end.
 *
 * Interrupts come from the NIC's own cause logic: IVAR routes a cause to
 * an MSI-X vector, IMS enables it and a write to ICS raises it.
 *
 * The NIC also has what edu lacks for the decode cases of t-pci-decode:
 * an expansion ROM (QEMU's efi-e1000e.rom) and an MSI-X table in a BAR.
 * Both are read or programmed by the kernel with memory decode on for
 * the moment, whatever the user set, which stays as it was.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define E1000E_VENDOR	0x8086
#define E1000E_DEVICE	0x10d3
#define THROTTLE_MS	20

/* 82574L registers (BAR0) */
#define E1000_ICR	0xc0
#define E1000_ICS	0xc8
#define E1000_IMS	0xd0
#define E1000_IMC	0xd8
#define E1000_IVAR	0xe4
#define CAUSE_RXQ0	0x00100000
#define CAUSE_TXQ0	0x00400000
#define IVAR_VALID	0x8

#define CAP_ID_MSIX	0x11
#define MSIX_ENABLE	0x8000
#define MSIX_TABLE	4		/* BIR and offset, in the capability */
#define MSIX_PBA	8
#define MAXV		8
#define ROM_ENABLE	0x1

struct nic {
	char name[VT_DEV_NAME_LEN];
	int present;		/* 1 bound to vfio, 0 absent, -1 bind failed */
	struct vt_dev d;
	int efd[MAXV];
	uint32_t msix_pos;	/* MSI-X capability offset */
	uint32_t nvec;		/* its table size */
};

static uint32_t cfg_rd(struct vt *t, struct nic *n, uint32_t off, size_t len)
{
	uint32_t v = 0;

	VT_CHECKF(t, pread(n->d.device_fd, &v, len,
			   vt_roff(VFIO_PCI_CONFIG_REGION_INDEX) + off) ==
		  (ssize_t)len, "pread config 0x%x: %s", off, strerror(errno));
	return v;
}

static void cfg_wr(struct vt *t, struct nic *n, uint32_t off, size_t len,
		   uint32_t v)
{
	VT_CHECKF(t, pwrite(n->d.device_fd, &v, len,
			    vt_roff(VFIO_PCI_CONFIG_REGION_INDEX) + off) ==
		  (ssize_t)len, "pwrite config 0x%x: %s", off, strerror(errno));
}

/* One BAR0 register write: 0, or -1 with errno. */
static int reg_put(struct nic *n, uint32_t reg, uint32_t v)
{
	return pwrite(n->d.device_fd, &v, 4, vt_roff(0) + reg) == 4 ? 0 : -1;
}

static void reg_wr(struct vt *t, struct nic *n, uint32_t reg, uint32_t v)
{
	VT_CHECKF(t, reg_put(n, reg, v) == 0, "pwrite BAR0+0x%x: %s", reg,
		  strerror(errno));
}

static uint32_t reg_rd(struct vt *t, struct nic *n, uint32_t reg)
{
	uint32_t v = 0;

	VT_CHECKF(t, pread(n->d.device_fd, &v, 4, vt_roff(0) + reg) == 4,
		  "pread BAR0+0x%x: %s", reg, strerror(errno));
	return v;
}

/* Interrupts counted so far (all CPUs) for the line naming action. */
static long irq_count(const char *action)
{
	char line[1024];
	long total = -1;
	FILE *f = fopen("/proc/interrupts", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (!strstr(line, action))
			continue;
		p = strchr(line, ':');
		if (!p)
			break;
		total = 0;
		for (p++;; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			total += v;
		}
		break;
	}
	fclose(f);
	return total;
}

static int vectors_listed(struct nic *n)
{
	char action[64];
	uint32_t i;
	int cnt = 0;

	for (i = 0; i < n->nvec; i++) {
		snprintf(action, sizeof(action), "vfio-msix[%u](%s)", i,
			 n->name);
		cnt += vt_irq_listed(action) == 1;
	}
	return cnt;
}

static void nic_open(struct vt *t, struct nic *n)
{
	uint32_t pos;
	int guard = 48, i;

	VT_CHECKF(t, n->present >= 0, "%s could not be bound to vfio", n->name);
	if (!n->present)
		vt_skip(t, "no e1000e (run-suite.sh --machine msix)");
	VT_CHECKF(t, vt_open_dev(&n->d, n->name) == 0, "open %s: %s", n->name,
		  strerror(errno));
	for (i = 0; i < MAXV; i++) {
		n->efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		VT_CHECKF(t, n->efd[i] >= 0, "eventfd: %s", strerror(errno));
	}
	n->msix_pos = 0;
	pos = cfg_rd(t, n, 0x34, 1) & ~3U;
	while (pos >= 0x40 && guard--) {
		if (cfg_rd(t, n, pos, 1) == CAP_ID_MSIX) {
			n->msix_pos = pos;
			break;
		}
		pos = cfg_rd(t, n, pos + 1, 1) & ~3U;
	}
	VT_CHECKF(t, n->msix_pos, "no MSI-X capability");
	n->nvec = (cfg_rd(t, n, n->msix_pos + 2, 2) & 0x7ff) + 1;
	VT_CHECKF(t, n->nvec <= MAXV, "%u MSI-X vectors", n->nvec);
}

/*
 * QEMU's e1000e throttles every MSI-X vector: each message arms a timer
 * (EITR, never under 128 us there) whose expiry asserts that MSI-X is
 * still enabled, and the assertion aborts the whole VM.  A real 82574L
 * has no such trap, but here MSI-X may only be switched off (count 0, or
 * the release on the last close) once the device is silenced and those
 * timers have run out.
 */
static int nic_silence(struct nic *n)
{
	if (n->d.device_fd < 0)
		return 0;
	if (reg_put(n, E1000_IMC, ~0U) || reg_put(n, E1000_ICR, ~0U))
		return -1;
	usleep(THROTTLE_MS * 1000);
	return 0;
}

static void nic_close(struct nic *n)
{
	int i;

	/* A device fd that no longer writes has had its MSI-X torn down. */
	nic_silence(n);
	for (i = 0; i < MAXV; i++) {
		if (n->efd[i] >= 0)
			close(n->efd[i]);
		n->efd[i] = -1;
	}
	vt_close_dev(&n->d);
}

static void test_info(struct vt *t, void *arg)
{
	struct nic *n = arg;
	struct vfio_irq_info irq = { .argsz = sizeof(irq) };
	struct vfio_region_info reg = { .argsz = sizeof(reg) };
	char path[128];
	struct stat st;

	nic_open(t, n);
	irq.index = VFIO_PCI_MSIX_IRQ_INDEX;
	VT_OK(t, ioctl(n->d.device_fd, VFIO_DEVICE_GET_IRQ_INFO, &irq));
	VT_CHECKF(t, irq.count == n->nvec && irq.flags == 0,
		  "MSI-X: count %u flags 0x%x, table size %u", irq.count,
		  irq.flags, n->nvec);

	/* PCIe: 4 KiB of config space, all of it readable. */
	reg.index = VFIO_PCI_CONFIG_REGION_INDEX;
	VT_OK(t, ioctl(n->d.device_fd, VFIO_DEVICE_GET_REGION_INFO, &reg));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config",
		 n->name);
	VT_CHECKF(t, stat(path, &st) == 0, "stat %s", path);
	VT_CHECKF(t, reg.size == (uint64_t)st.st_size && reg.size == 4096,
		  "config region 0x%llx, sysfs %lld",
		  (unsigned long long)reg.size, (long long)st.st_size);
	VT_CHECKF(t, cfg_rd(t, n, 0x100, 4) == vt_real_cfg(t, n->name, 0x100, 4),
		  "extended config differs");
	cfg_wr(t, n, 0x100, 4, ~cfg_rd(t, n, 0x100, 4));
	VT_CHECKF(t, cfg_rd(t, n, 0x100, 4) == vt_real_cfg(t, n->name, 0x100, 4),
		  "extended config write not dropped");
	nic_close(n);
}

static void test_msix_enable(struct vt *t, void *arg)
{
	const uint32_t hsz = sizeof(struct vfio_irq_eventfds);
	struct nic *n = arg;
	struct {
		struct vfio_irq_eventfds h;
		int32_t fds[MAXV + 1];
	} s;
	int32_t fds[MAXV];
	uint32_t i;

	nic_open(t, n);
	for (i = 0; i < n->nvec; i++)
		fds[i] = n->efd[i];

	/* More vectors than the table has. */
	memset(&s, 0, sizeof(s));
	s.h.argsz = hsz + (n->nvec + 1) * 4;
	s.h.index = VFIO_PCI_MSIX_IRQ_INDEX;
	s.h.count = n->nvec + 1;
	VT_ERRNO(t, ioctl(n->d.device_fd, VFIO_DEVICE_SET_IRQ_EVENTFDS, &s),
		 EINVAL);

	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 n->nvec, fds) == 0, "enable MSI-X: %s",
		  strerror(errno));
	VT_CHECKF(t, vectors_listed(n) == (int)n->nvec, "%d of %u vectors "
		  "registered", vectors_listed(n), n->nvec);
	VT_CHECKF(t, vt_real_cfg(t, n->name, n->msix_pos + 2, 2) & MSIX_ENABLE,
		  "MSI-X not enabled in the device");
	VT_CHECKF(t, cfg_rd(t, n, n->msix_pos + 2, 2) & MSIX_ENABLE,
		  "MSI-X enable not shown");
	/* The user cannot switch it off behind the kernel's back. */
	cfg_wr(t, n, n->msix_pos + 2, 2, 0);
	VT_CHECKF(t, vt_real_cfg(t, n->name, n->msix_pos + 2, 2) & MSIX_ENABLE,
		  "user write reached the MSI-X control");

	/* MSI and INTx conflict with it. */
	VT_ERRNO(t, vt_set_irq_eventfds(n->d.device_fd,
					VFIO_PCI_MSI_IRQ_INDEX, 1, fds), EBUSY);
	VT_ERRNO(t, vt_set_irq_eventfds(n->d.device_fd,
					VFIO_PCI_INTX_IRQ_INDEX, 1, fds),
		 EBUSY);

	/* Fewer vectors: re-enabled with 2. */
	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 2, fds) == 0, "2 vectors: %s",
		  strerror(errno));
	VT_CHECKF(t, vectors_listed(n) == 2, "%d vectors after shrinking",
		  vectors_listed(n));

	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 0, NULL) == 0, "disable: %s",
		  strerror(errno));
	VT_CHECKF(t, vectors_listed(n) == 0, "vectors left after count 0");
	VT_CHECKF(t, !(vt_real_cfg(t, n->name, n->msix_pos + 2, 2) & MSIX_ENABLE),
		  "MSI-X still on after count 0");
	nic_close(n);
}

/*
 * With MSI-X on, reading ICR does not clear it, and a cause still set in
 * ICR raises no new interrupt: clear it (write 1 to clear) before each.
 */
static void raise_cause(struct vt *t, struct nic *n, uint32_t cause)
{
	reg_wr(t, n, E1000_ICR, ~0U);
	reg_wr(t, n, E1000_ICS, cause);
}

static void test_msix_delivery(struct vt *t, void *arg)
{
	struct nic *n = arg;
	int32_t fds[MAXV];
	char vec2[64];
	long before;
	uint16_t cmd;
	uint32_t i;

	nic_open(t, n);
	snprintf(vec2, sizeof(vec2), "vfio-msix[2](%s)", n->name);
	VT_CHECKF(t, n->nvec >= 3, "only %u vectors", n->nvec);
	cmd = cfg_rd(t, n, VT_PCI_COMMAND, 2);
	cfg_wr(t, n, VT_PCI_COMMAND, 2,
	       cmd | VT_PCI_COMMAND_MEMORY | VT_PCI_COMMAND_MASTER);
	for (i = 0; i < n->nvec; i++)
		fds[i] = n->efd[i];
	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 n->nvec, fds) == 0, "enable MSI-X: %s",
		  strerror(errno));

	/* RXQ0 -> vector 2, TXQ0 -> vector 1. */
	reg_wr(t, n, E1000_IVAR, (IVAR_VALID | 2) | (IVAR_VALID | 1) << 8);
	reg_wr(t, n, E1000_IMS, CAUSE_RXQ0 | CAUSE_TXQ0);

	raise_cause(t, n, CAUSE_TXQ0);
	VT_CHECKF(t, vt_fired(n->efd[1], VT_IRQ_WAIT_MS),
		  "no MSI-X on vector 1");
	VT_CHECKF(t, reg_rd(t, n, E1000_ICR) & CAUSE_TXQ0, "ICR lacks TXQ0");
	VT_CHECKF(t, !vt_fired(n->efd[2], 0) && !vt_fired(n->efd[0], 0),
		  "TXQ0 reached another vector");
	raise_cause(t, n, CAUSE_RXQ0);
	VT_CHECKF(t, vt_fired(n->efd[2], VT_IRQ_WAIT_MS),
		  "no MSI-X on vector 2");
	VT_CHECKF(t, !vt_fired(n->efd[1], 0), "RXQ0 reached vector 1");
	raise_cause(t, n, CAUSE_RXQ0);
	VT_CHECKF(t, vt_fired(n->efd[2], VT_IRQ_WAIT_MS),
		  "no second MSI-X on vector 2");

	/*
	 * Vector 2 unconnected (-1): its interrupt still arrives (the count
	 * in /proc/interrupts grows) and is swallowed; then it is connected
	 * to another eventfd.
	 */
	fds[2] = -1;
	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 n->nvec, fds) == 0, "unset vector 2: %s",
		  strerror(errno));
	before = irq_count(vec2);
	raise_cause(t, n, CAUSE_RXQ0);
	VT_CHECKF(t, !vt_fired(n->efd[2], VT_IRQ_QUIET_MS),
		  "unset vector still signals");
	VT_CHECKF(t, before >= 0 && irq_count(vec2) > before,
		  "no interrupt counted on the unset vector (%ld -> %ld)",
		  before, irq_count(vec2));
	fds[2] = n->efd[5 % MAXV];
	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 n->nvec, fds) == 0, "set vector 2: %s",
		  strerror(errno));
	raise_cause(t, n, CAUSE_RXQ0);
	VT_CHECKF(t, vt_fired(n->efd[5 % MAXV], VT_IRQ_WAIT_MS),
		  "no MSI-X on the new eventfd of vector 2");

	VT_CHECKF(t, nic_silence(n) == 0, "silence the NIC: %s",
		  strerror(errno));
	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 0, NULL) == 0, "disable: %s",
		  strerror(errno));
	nic_close(n);
}

/* Where the MSI-X table (or PBA, at cap + pba) is in the device fd. */
static uint64_t msix_pos(struct vt *t, struct nic *n, uint32_t which)
{
	uint32_t v = cfg_rd(t, n, n->msix_pos + which, 4);

	VT_CHECKF(t, (v & 7) < 6, "MSI-X BIR %u", v & 7);
	return vt_roff(v & 7) + (v & ~7U);
}

/*
 * Memory decode off while the user enables MSI-X: the kernel writes the
 * vector table in BAR3 all the same (with decode on for the moment), so
 * the vectors fire once the user turns decode back on, and the command
 * register shows decode off meanwhile, as the user set it.
 */
static void test_msix_mem_off(struct vt *t, void *arg)
{
	struct nic *n = arg;
	int32_t fds[MAXV];
	uint16_t cmd;
	uint32_t i;

	nic_open(t, n);
	VT_CHECKF(t, n->nvec >= 2, "only %u vectors", n->nvec);
	for (i = 0; i < n->nvec; i++)
		fds[i] = n->efd[i];
	cmd = cfg_rd(t, n, VT_PCI_COMMAND, 2);
	cfg_wr(t, n, VT_PCI_COMMAND, 2,
	       (cmd | VT_PCI_COMMAND_MASTER) & ~VT_PCI_COMMAND_MEMORY);
	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 n->nvec, fds) == 0, "enable MSI-X: %s",
		  strerror(errno));
	VT_CHECKF(t, !(vt_real_cfg(t, n->name, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_MEMORY),
		  "memory decode left on: command 0x%x",
		  vt_real_cfg(t, n->name, VT_PCI_COMMAND, 2));
	VT_CHECKF(t, !(cfg_rd(t, n, VT_PCI_COMMAND, 2) & VT_PCI_COMMAND_MEMORY),
		  "memory decode shown on");

	cfg_wr(t, n, VT_PCI_COMMAND, 2,
	       cmd | VT_PCI_COMMAND_MASTER | VT_PCI_COMMAND_MEMORY);
	reg_wr(t, n, E1000_IVAR, (IVAR_VALID | 1) << 8);
	reg_wr(t, n, E1000_IMS, CAUSE_TXQ0);
	reg_wr(t, n, E1000_ICR, ~0U);
	reg_wr(t, n, E1000_ICS, CAUSE_TXQ0);
	VT_CHECKF(t, vt_fired(n->efd[1], VT_IRQ_WAIT_MS),
		  "no MSI-X on vector 1: "
		  "the table was not programmed with memory decode off");

	/* Teardown masks the vectors: with decode off again, as the user. */
	VT_CHECKF(t, nic_silence(n) == 0, "silence the NIC: %s",
		  strerror(errno));
	cfg_wr(t, n, VT_PCI_COMMAND, 2,
	       (cmd | VT_PCI_COMMAND_MASTER) & ~VT_PCI_COMMAND_MEMORY);
	VT_CHECKF(t, vt_set_irq_eventfds(n->d.device_fd, VFIO_PCI_MSIX_IRQ_INDEX,
					 0, NULL) == 0, "disable: %s",
		  strerror(errno));
	VT_CHECKF(t, !(vt_real_cfg(t, n->name, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_MEMORY),
		  "memory decode left on after disable");
	nic_close(n);
}

/*
 * read/write skip the MSI-X table, which the kernel owns: reads return
 * all ones and writes are dropped (the table itself, seen through an
 * mmap, keeps the kernel's values).  The PBA passes through.
 */
static void test_msix_table_rw(struct vt *t, void *arg)
{
	struct nic *n = arg;
	uint32_t buf[8], i, ctl, ctl2;
	uint64_t table, pba, size;
	uint32_t pba_v = 0;
	volatile uint32_t *map;
	int bir;

	nic_open(t, n);
	cfg_wr(t, n, VT_PCI_COMMAND, 2,
	       cfg_rd(t, n, VT_PCI_COMMAND, 2) | VT_PCI_COMMAND_MEMORY);
	table = msix_pos(t, n, MSIX_TABLE);
	pba = msix_pos(t, n, MSIX_PBA);
	bir = (int)(table >> VT_REGION_SHIFT);

	memset(buf, 0, sizeof(buf));
	VT_CHECKF(t, pread(n->d.device_fd, buf, sizeof(buf), (off_t)table) ==
		  (ssize_t)sizeof(buf), "pread table: %s", strerror(errno));
	for (i = 0; i < 8; i++)
		VT_CHECKF(t, buf[i] == ~0U, "table word %u reads 0x%x", i,
			  buf[i]);
	VT_CHECKF(t, pread(n->d.device_fd, &pba_v, 4, (off_t)pba) == 4,
		  "pread PBA: %s", strerror(errno));

	map = vt_mmap_region(n->d.device_fd, (uint32_t)bir, &size);
	VT_CHECKF(t, map != NULL, "mmap BAR%d: %s", bir, strerror(errno));
	/* Vector 0's control word: masked (1) while nobody uses it. */
	ctl = map[((table & 0xffffffffffULL) + 12) / 4];
	memset(buf, 0, sizeof(buf));
	VT_CHECKF(t, pwrite(n->d.device_fd, buf, 16, (off_t)table) == 16,
		  "pwrite table: %s", strerror(errno));
	ctl2 = map[((table & 0xffffffffffULL) + 12) / 4];
	munmap((void *)map, size);
	VT_CHECKF(t, ctl2 == ctl, "vector 0 control 0x%x -> 0x%x: a write "
		  "reached the table", ctl, ctl2);
	nic_close(n);
}

/*
 * The ROM reads with memory decode off (turned on for the read only),
 * and the command register and ROM BAR stay as the user left them.
 */
static void test_rom_mem_off(struct vt *t, void *arg)
{
	struct vfio_region_info reg = { .argsz = sizeof(reg) };
	struct nic *n = arg;
	uint8_t sig[2] = { 0, 0 };
	uint16_t cmd;

	nic_open(t, n);
	reg.index = VFIO_PCI_ROM_REGION_INDEX;
	VT_OK(t, ioctl(n->d.device_fd, VFIO_DEVICE_GET_REGION_INFO, &reg));
	if (!reg.size)
		vt_skip(t, "the e1000e has no ROM (QEMU found no romfile)");
	cmd = cfg_rd(t, n, VT_PCI_COMMAND, 2) & ~VT_PCI_COMMAND_MEMORY;
	cfg_wr(t, n, VT_PCI_COMMAND, 2, cmd);
	VT_CHECKF(t, pread(n->d.device_fd, sig, 2, (off_t)reg.offset) == 2,
		  "pread ROM with decode off: %s", strerror(errno));
	VT_CHECKF(t, sig[0] == 0x55 && sig[1] == 0xaa,
		  "ROM signature %02x %02x", sig[0], sig[1]);
	VT_CHECKF(t, cfg_rd(t, n, VT_PCI_COMMAND, 2) == cmd &&
		  !(vt_real_cfg(t, n->name, VT_PCI_COMMAND, 2) &
		    VT_PCI_COMMAND_MEMORY),
		  "command 0x%x (device 0x%x) after the ROM read, set 0x%x",
		  cfg_rd(t, n, VT_PCI_COMMAND, 2),
		  vt_real_cfg(t, n->name, VT_PCI_COMMAND, 2), cmd);
	VT_CHECKF(t, !(vt_real_cfg(t, n->name, VT_PCI_ROM, 4) & ROM_ENABLE),
		  "ROM decoder left on");
	nic_close(n);
}

int main(void)
{
	struct vt t = { .prog = "t-device-msix" };
	struct nic n;
	int i;

	memset(&n, 0, sizeof(n));
	n.d.group_fd = n.d.iommu_fd = n.d.device_fd = -1;
	for (i = 0; i < MAXV; i++)
		n.efd[i] = -1;
	n.present = vt_find_device(E1000E_VENDOR, E1000E_DEVICE, NULL, 0,
				   n.name) == 0;
	if (n.present && vt_bind_vfio(n.name) < 0) {
		printf("t-device-msix: cannot bind %s to vfio: %s\n", n.name,
		       strerror(errno));
		n.present = -1;
	}

	VT_RUN(&t, test_info, &n);
	nic_close(&n);
	VT_RUN(&t, test_msix_enable, &n);
	nic_close(&n);
	VT_RUN(&t, test_msix_delivery, &n);
	nic_close(&n);
	VT_RUN(&t, test_msix_mem_off, &n);
	nic_close(&n);
	VT_RUN(&t, test_msix_table_rw, &n);
	nic_close(&n);
	VT_RUN(&t, test_rom_mem_off, &n);
	nic_close(&n);

	if (n.present > 0)
		vt_unbind(n.name);
	return vt_done(&t);
}
