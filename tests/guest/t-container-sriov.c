// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-container-sriov: an SR-IOV VF bound to vfio through today's
 * container ABI (<linux/vfio.h>), what QEMU sees of it: its vendor and
 * device IDs in config space (all ones in hardware), a memory enable
 * that reads back as written (hard-wired to 0 in a VF) and BAR0 through
 * read and mmap while it is on, EIO and SIGBUS while it is off.  The
 * seed ABI's view and the PF side are t-device-sriov.
 *
 * Needs the sriov machine and the guest's nvme driver (tests/vm/run.sh).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vt.h"
#include "vtcontainer.h"

#define PF	VT_NVME_PF
#define VF0	VT_NVME_VF0

static uint32_t cfg_rd(struct vt *t, int fd, uint64_t cfg, uint32_t off,
		       size_t len)
{
	uint32_t v = 0;

	VT_CHECKF(t, pread(fd, &v, len, cfg + off) == (ssize_t)len,
		  "config read at %#x: %s", off, strerror(errno));
	return v;
}

static void set_mem(struct vt *t, int fd, uint64_t cfg, int on)
{
	uint16_t cmd = cfg_rd(t, fd, cfg, VT_PCI_COMMAND, 2);

	cmd = on ? cmd | VT_PCI_COMMAND_MEMORY : cmd & ~VT_PCI_COMMAND_MEMORY;
	VT_CHECKF(t, pwrite(fd, &cmd, 2, cfg + VT_PCI_COMMAND) == 2,
		  "command write: %s", strerror(errno));
}

static unsigned long sysfs_hex(struct vt *t, const char *attr)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", VF0, attr);
	VT_CHECKF(t, vt_read_file(path, buf, sizeof(buf)) > 0, "%s: %s", path,
		  strerror(errno));
	return strtoul(buf, NULL, 16);
}

static void test_vf(struct vt *t, void *arg)
{
	struct vfio_region_info cfgr, barr;
	volatile uint32_t *bar;
	uint32_t ids, cap = 0, v = 0;
	uint64_t size, cfg;
	struct vtc_dev d;
	char msg[256];

	(void)arg;
	if (access("/sys/bus/pci/devices/" PF "/sriov_totalvfs", F_OK))
		vt_skip(t, "no SR-IOV PF at %s: machine sriov only", PF);
	if (vt_nvme_vf_online(PF, msg, sizeof(msg)))
		vt_fail(t, __FILE__, __LINE__, "VF setup: %s", msg);
	VT_OK(t, vt_bind(VF0, "vfio-pci"));
	VT_OK(t, vtc_open_dev(&d, VF0, 0));
	VT_OK(t, vtc_region_info(d.device_fd, VFIO_PCI_CONFIG_REGION_INDEX,
				 &cfgr));
	VT_OK(t, vtc_region_info(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
				 &barr));
	cfg = cfgr.offset;

	ids = sysfs_hex(t, "vendor") | sysfs_hex(t, "device") << 16;
	v = cfg_rd(t, d.device_fd, cfg, VT_PCI_VENDOR, 4);
	VT_CHECKF(t, v == ids, "config IDs %08x, sysfs %08x", v, ids);

	VT_CHECKF(t, !(cfg_rd(t, d.device_fd, cfg, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_MEMORY), "memory enable on at open");
	VT_ERRNO(t, pread(d.device_fd, &v, 4, barr.offset), EIO);

	set_mem(t, d.device_fd, cfg, 1);
	VT_CHECKF(t, cfg_rd(t, d.device_fd, cfg, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_MEMORY, "memory enable reads back 0");
	VT_CHECKF(t, pread(d.device_fd, &cap, 4, barr.offset) == 4,
		  "BAR0 read: %s", strerror(errno));
	VT_CHECKF(t, cap != 0, "NVMe CAP (low) reads 0");
	bar = vtc_mmap_region(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX, &size);
	VT_CHECKF(t, bar != NULL, "mmap BAR0: %s", strerror(errno));
	VT_CHECKF(t, !vt_read_faults(bar) && bar[0] == cap,
		  "mmap CAP, pread %08x", cap);

	set_mem(t, d.device_fd, cfg, 0);
	VT_ERRNO(t, pread(d.device_fd, &v, 4, barr.offset), EIO);
	VT_CHECKF(t, vt_read_faults(bar), "mmap read with MSE off worked");
	munmap((void *)bar, size);
	vtc_close_dev(&d);
}

int main(void)
{
	struct vt t = { .prog = "t-container-sriov" };

	VT_RUN_CLOSE(&t, test_vf);
	vt_unbind(VF0);
	vt_sriov_numvfs(PF, 0);
	vt_unbind(PF);
	return vt_done(&t);
}
