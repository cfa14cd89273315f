// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-reset: what src/pci/vfio_pci.c does to the device itself
 * around a user: VFIO_DEVICE_RESET (edu2, alone behind a root port, has
 * a bus reset; edu on the root bus has none) and the quiesce when the
 * last fd goes, which leaves no bus mastering, no MSI and no virtual BAR
 * value of the last user behind.
 *
 * The device's real state is read through its sysfs config file, which
 * bypasses our virtualisation.
 *
 * test_handover_resets needs the slow machine's virtio-rng (FLR and a
 * status byte a reset clears); elsewhere it skips.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

static void test_reset(struct vt *t, struct vt_ctx *c)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };
	int fd = vt_ctx_open(t, c, VT_EDU0);
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
	if (access("/sys/bus/pci/devices/" VT_EDU2, F_OK))
		vt_skip(t, "no edu2 at " VT_EDU2);
	fd = vt_ctx_open(t, c, VT_EDU2);
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info);
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_INFO, &info));
	VT_CHECKF(t, !!(info.flags & VFIO_DEVICE_FLAGS_RESET) ==
		  vt_has_reset(VT_EDU2),
		  "RESET flag 0x%x vs sysfs reset_method", info.flags);
	if (!(info.flags & VFIO_DEVICE_FLAGS_RESET))
		vt_skip(t, "edu2 has no reset method");

	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MEMORY |
			VT_PCI_COMMAND_MASTER, 0);
	bar0 = vt_real_cfg(t, VT_EDU2, VT_PCI_BAR0, 4);
	vt_bar0_wr(t, fd, VT_EDU_LIVE, 1);
	VT_OK(t, ioctl(fd, VFIO_DEVICE_RESET));
	/* The config space is back where it was: BARs and command. */
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU2, VT_PCI_BAR0, 4) == bar0,
		  "BAR0 lost");
	VT_CHECKF(t, (vt_real_cfg(t, VT_EDU2, VT_PCI_COMMAND, 2) &
		      (VT_PCI_COMMAND_MEMORY | VT_PCI_COMMAND_MASTER)) ==
		  (VT_PCI_COMMAND_MEMORY | VT_PCI_COMMAND_MASTER),
		  "command 0x%x after reset",
		  vt_real_cfg(t, VT_EDU2, VT_PCI_COMMAND, 2));
	VT_CHECKF(t, vt_bar0_rd(t, fd, VT_EDU_ID) == VT_EDU_ID_VALUE,
		  "id after reset");
	VT_CHECKF(t, vt_edu_factorial(t, fd, 6) == 720, "edu dead after reset");
}

static void test_quiesce_on_close(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU1);
	int32_t efd = vt_ctx_eventfd(t, c, 0);
	uint32_t bar0 = vt_real_cfg(t, VT_EDU1, VT_PCI_BAR0, 4);
	uint32_t pos;

	/* Before: what /init left (bound, not open). */
	pos = vt_find_cap(t, fd, VT_PCI_CAP_ID_MSI);
	VT_CHECKF(t, pos, "no MSI cap");
	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MEMORY |
			VT_PCI_COMMAND_MASTER, 0);
	vt_cfg_wr(t, fd, VT_PCI_BAR0, 4, ~0U);
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &efd);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU1, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_MASTER, "bus master not on");
	VT_CHECKF(t, vt_irq_listed("vfio-msi[0](" VT_EDU1 ")") == 1,
		  "MSI not registered");

	/* The device fd goes last: the group and IOMMU fds close first. */
	close(c->d.group_fd);
	c->d.group_fd = -1;
	close(c->d.iommu_fd);
	c->d.iommu_fd = -1;
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU1, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_MASTER,
		  "quiesced while the device fd is still open");
	close(c->d.device_fd);
	c->d.device_fd = -1;

	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU1, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_MASTER),
		  "bus master still on after the last close: 0x%x",
		  vt_real_cfg(t, VT_EDU1, VT_PCI_COMMAND, 2));
	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU1, pos + VT_PCI_MSI_FLAGS, 2) &
		       VT_PCI_MSI_ENABLE),
		  "MSI still enabled after the last close");
	VT_CHECKF(t, vt_irq_listed("vfio-msi[0](" VT_EDU1 ")") == 0,
		  "MSI handler left registered");
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU1, VT_PCI_BAR0, 4) == bar0,
		  "BAR0 changed");

	/* Open again: a clean device, the virtual BAR back to real. */
	fd = vt_ctx_open(t, c, VT_EDU1);
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_BAR0, 4) == bar0,
		  "virtual BAR0 kept the last user's value");
	VT_CHECKF(t, !(vt_cfg_rd(t, fd, pos + VT_PCI_MSI_FLAGS, 2) &
		       VT_PCI_MSI_ENABLE), "MSI on at the next open");
	VT_CHECKF(t, vt_bar0_rd(t, fd, VT_EDU_ID) == VT_EDU_ID_VALUE,
		  "edu1 after reopen");
}

/* ---- a device handed to the next user ------------------------------- */

#define VIRTIO_VENDOR		0x1af4
#define VIRTIO_RNG		0x1044	/* non-transitional virtio-rng, with FLR */
#define VIRTIO_CAP_CFG_TYPE	3	/* struct virtio_pci_cap */
#define VIRTIO_CAP_BAR		4
#define VIRTIO_CAP_OFFSET	8
#define VIRTIO_PCI_CAP_COMMON	1
#define VIRTIO_COMMON_STATUS	20	/* device_status, u8 */
#define VIRTIO_STATUS_A_USER	0x03	/* ACKNOWLEDGE | DRIVER */
#define HANDOVER_ROUNDS		30
#define HANDOVER_READERS	4

/* Region offset of the virtio device's status byte (common config). */
static uint64_t virtio_status_off(struct vt *t, int fd)
{
	uint32_t pos = vt_find_cap(t, fd, VT_PCI_CAP_ID_VNDR);

	for (; pos; pos = vt_cfg_rd(t, fd, pos + 1, 1) & ~3U)
		if (vt_cfg_rd(t, fd, pos, 1) == VT_PCI_CAP_ID_VNDR &&
		    vt_cfg_rd(t, fd, pos + VIRTIO_CAP_CFG_TYPE, 1) ==
		    VIRTIO_PCI_CAP_COMMON)
			return vt_roff(vt_cfg_rd(t, fd, pos + VIRTIO_CAP_BAR, 1)) +
			       vt_cfg_rd(t, fd, pos + VIRTIO_CAP_OFFSET, 4) +
			       VIRTIO_COMMON_STATUS;
	vt_fail(t, __FILE__, __LINE__, "no virtio common config capability");
	return 0;
}

/*
 * A user-space process that only reads driver_override, until the write
 * end of the pipe @stop is closed.
 */
static pid_t spin_driver_override(const char *dev, const int stop[2])
{
	char path[128], buf[64];
	struct pollfd p = { .fd = stop[0], .events = POLLIN };
	unsigned int n;
	pid_t pid;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override",
		 dev);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(stop[1]);
		for (n = 1; n % 256 || poll(&p, 1, 0) == 0; n++)
			vt_read_file(path, buf, sizeof(buf));
		_exit(0);
	}
	return pid;
}

/*
 * What user A programmed into the device is gone when user B opens it:
 * the release resets it, and where that failed the open does, or fails
 * with EAGAIN.  Processes reading the device's driver_override take its
 * device lock over and over, which a single trylock at the release lost
 * to: B then got A's device.  The virtio-rng of the slow machine has FLR
 * and a status byte that a reset clears.
 */
static void test_handover_resets(struct vt *t, struct vt_ctx *c)
{
	pid_t readers[HANDOVER_READERS];
	char dev[VT_DEV_NAME_LEN], drv[64];
	int round, i, fd, tries, stop[2];
	uint8_t st;
	uint64_t off;

	if (vt_find_device(VIRTIO_VENDOR, VIRTIO_RNG, NULL, 0, dev) < 0)
		vt_skip(t, "no virtio-rng with FLR (run-suite.sh --machine slow)");
	VT_OK(t, vt_device_driver(dev, drv, sizeof(drv)));
	VT_CHECKF(t, vt_bind_vfio(dev) == 0, "bind %s to vfio: %s", dev,
		  strerror(errno));
	/* The cleanup closes the write end however the case ends. */
	VT_OK(t, pipe2(stop, O_CLOEXEC));
	c->efd[0] = stop[1];
	for (i = 0; i < HANDOVER_READERS; i++)
		readers[i] = spin_driver_override(dev, stop);
	close(stop[0]);

	for (round = 0; round < HANDOVER_ROUNDS; round++) {
		/* B's open may lose to the readers, then says so: EAGAIN. */
		for (tries = 0; tries < 20; tries++) {
			if (vt_open_dev(&c->d, dev) == 0 || errno != EAGAIN)
				break;
		}
		fd = c->d.device_fd;
		VT_CHECKF(t, fd >= 0, "round %d: open %s: %s", round, dev,
			  strerror(errno));
		vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MEMORY, 0);
		off = virtio_status_off(t, fd);
		VT_CHECKF(t, pread(fd, &st, 1, off) == 1, "read status: %s",
			  strerror(errno));
		VT_CHECKF(t, st == 0,
			  "round %d: the open found status 0x%x: the last user's device",
			  round, st);
		st = VIRTIO_STATUS_A_USER;
		VT_CHECKF(t, pwrite(fd, &st, 1, off) == 1, "write status: %s",
			  strerror(errno));
		st = 0;
		VT_CHECKF(t, pread(fd, &st, 1, off) == 1 &&
			  st == VIRTIO_STATUS_A_USER,
			  "status 0x%x after writing 0x%x", st,
			  VIRTIO_STATUS_A_USER);
		vt_close_dev(&c->d);
	}
	close(c->efd[0]);
	c->efd[0] = -1;
	for (i = 0; i < HANDOVER_READERS; i++)
		waitpid(readers[i], NULL, 0);
	if (*drv)
		vt_bind(dev, drv);
	else
		vt_unbind(dev);
}

#define DEVLOCK_HOLD	"/sys/module/vfio_test_devlock/parameters/hold"
#define DEVLOCK_MS	1500

static int devlock_held(void)
{
	char buf[8] = "";

	vt_read_file(DEVLOCK_HOLD, buf, sizeof(buf));
	return buf[0] == '1';
}

/* Poll (every 10 ms, up to ms) until devlock_held() is want. */
static int devlock_wait(int want, int ms)
{
	for (; ms > 0 && devlock_held() != want; ms -= 10)
		usleep(10000);
	return devlock_held() == want;
}

/*
 * The same handover with the device lock held by the kernel across A's
 * close (tests/kmod/vfio_test_devlock.ko), which the release's reset
 * cannot win: B's open while it is held fails with EAGAIN, and once it
 * is let go B gets a reset device.  Before, the release gave up at once
 * and the open reset nothing: B got A's status byte.
 */
static void test_handover_lock_held(struct vt *t, struct vt_ctx *c)
{
	char dev[VT_DEV_NAME_LEN], drv[64], cmd[96];
	uint8_t st = VIRTIO_STATUS_A_USER;
	uint64_t off;
	int fd;

	if (vt_find_device(VIRTIO_VENDOR, VIRTIO_RNG, NULL, 0, dev) < 0)
		vt_skip(t, "no virtio-rng with FLR (run-suite.sh --machine slow)");
	if (system("modprobe vfio_test_devlock 2>/dev/null") != 0)
		vt_skip(t, "no vfio_test_devlock.ko (tests/kmod not built for this kernel)");
	VT_OK(t, vt_device_driver(dev, drv, sizeof(drv)));
	VT_CHECKF(t, vt_bind_vfio(dev) == 0, "bind %s to vfio: %s", dev,
		  strerror(errno));

	fd = vt_ctx_open(t, c, dev);
	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MEMORY, 0);
	off = virtio_status_off(t, fd);
	VT_CHECKF(t, pwrite(fd, &st, 1, off) == 1, "write status: %s",
		  strerror(errno));
	snprintf(cmd, sizeof(cmd), "%s %d", dev, DEVLOCK_MS);
	VT_OK(t, vt_write_file(DEVLOCK_HOLD, cmd));
	VT_CHECKF(t, devlock_wait(1, 1000), "device lock of %s not taken",
		  dev);
	vt_close_dev(&c->d);

	if (devlock_held()) {
		errno = 0;
		if (vt_open_dev(&c->d, dev) == 0) {
			fd = c->d.device_fd;
			vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MEMORY, 0);
			st = 0xff;
			VT_CHECKF(t, pread(fd, &st, 1, off) == 1,
				  "read status: %s", strerror(errno));
			vt_fail(t, __FILE__, __LINE__,
				"open with the device lock held succeeded without a reset: status 0x%x",
				st);
		}
		VT_CHECKF(t, errno == EAGAIN,
			  "open with the device lock held: %s, not EAGAIN",
			  strerror(errno));
	}
	VT_CHECKF(t, devlock_wait(0, 2 * DEVLOCK_MS), "device lock still held");
	fd = vt_ctx_open(t, c, dev);
	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MEMORY, 0);
	VT_CHECKF(t, pread(fd, &st, 1, off) == 1, "read status: %s",
		  strerror(errno));
	VT_CHECKF(t, st == 0, "the next open found status 0x%x: A's device",
		  st);
	vt_close_dev(&c->d);
	if (*drv)
		vt_bind(dev, drv);
	else
		vt_unbind(dev);
}

int main(void)
{
	struct vt t = { .prog = "t-device-reset" };
	struct vt_ctx c;

	if (vt_ctx_setup(&c)) {
		fprintf(stderr, "t-device-reset: mmap PROT_NONE: %s\n",
			strerror(errno));
		return 2;
	}
	VT_RUN_CTX(&t, &c, test_reset);
	VT_RUN_CTX(&t, &c, test_quiesce_on_close);
	VT_RUN_CTX(&t, &c, test_handover_resets);
	VT_RUN_CTX(&t, &c, test_handover_lock_held);
	return vt_done(&t);
}
