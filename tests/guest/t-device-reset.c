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
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/ioctl.h>
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
	return vt_done(&t);
}
