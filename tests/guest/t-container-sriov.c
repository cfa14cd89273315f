// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-container-sriov: an SR-IOV VF bound to vfio through today's
 * container ABI (<linux/vfio.h>), what QEMU sees of it: its vendor and
 * device IDs in config space (all ones in hardware), a memory enable
 * that reads back as written (hard-wired to 0 in a VF) and BAR0 through
 * read and mmap while it is on, EIO and SIGBUS while it is off.  The
 * seed ABI's view and the PF side are t-device-sriov.
 *
 * VF tokens (VFIO_DEVICE_FEATURE_PCI_VF_TOKEN, "ADDR vf_token=UUID" in
 * GET_DEVICE_FD), the kernel's rule: a VF of a PF bound to vfio opens
 * only with the token the PF's user set (EACCES without or with another),
 * a PF with VFs open only with that token too; a token where none applies
 * (a VF of a host driver's PF, edu) is EINVAL.  The feature: PROBE and SET
 * on a PF, GET EINVAL, ENOTTY on anything else.
 *
 * Needs the sriov machine and the guest's nvme driver (tests/vm/run.sh).
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

#define PF	VT_NVME_PF
#define VF0	VT_NVME_VF0

#define TOK1	"5a6b0e0c-7e53-4d38-9d6d-1b3a8f0c2a11"
#define TOK2	"0f9e1d2c-3b4a-4958-8776-a5b4c3d2e1f0"
#define TOK0	"00000000-0000-0000-0000-000000000000"

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
	/* Its PF is the host's: no token applies. */
	VT_ERRNO(t, vtc_device_fd(d.group_fd, VF0 " vf_token=" TOK1), EINVAL);
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

/* VFIO_DEVICE_FEATURE with a UUID after the header. */
static int feature(int fd, uint32_t flags, const char *uuid, uint32_t argsz)
{
	struct {
		struct vfio_device_feature hdr;
		uint8_t uuid[16];
	} f;
	unsigned int i, b;

	memset(&f, 0, sizeof(f));
	f.hdr.argsz = argsz;
	f.hdr.flags = flags;
	for (i = 0; uuid && *uuid && i < 16; uuid += 2) {
		if (*uuid == '-')
			uuid++;
		if (sscanf(uuid, "%2x", &b) != 1)
			return -2;	/* a bad UUID of the test's own */
		f.uuid[i++] = b;
	}
	return ioctl(fd, VFIO_DEVICE_FEATURE, &f);
}

#define TOKEN_SET	(VFIO_DEVICE_FEATURE_PCI_VF_TOKEN | VFIO_DEVICE_FEATURE_SET)
#define FULL	(sizeof(struct vfio_device_feature) + 16)

/* The group of dev in a container of its own, type1 set: *group_fd. */
static int group_in_container(struct vt *t, const char *dev, int *group_fd)
{
	int c = VT_OK(t, vtc_open_container());

	*group_fd = VT_OK(t, vtc_open_group_of(dev));
	VT_OK(t, vtc_set_container(*group_fd, c));
	VT_OK(t, vtc_set_iommu(c, 0));
	return c;
}

/* dev's driver becomes want within 2 s. */
static void wait_driver(struct vt *t, const char *dev, const char *want)
{
	char drv[64] = "";

	if (vt_wait_driver(dev, want, 2000) == 0)
		return;
	vt_device_driver(dev, drv, sizeof(drv));
	vt_fail(t, __FILE__, __LINE__, "%s: driver \"%s\", want \"%s\"", dev,
		drv, want);
}

static void pf_cleanup(void)
{
	vt_vfio_enable_sriov(1);
	vt_sriov_numvfs(PF, 0);
	vt_vfio_enable_sriov(0);
	vt_unbind(PF);
}

/*
 * A PF's reset (at its first open and its release) takes its VFs away in
 * QEMU's NVMe (VF Enable drops with an FLR; the VFs come back offline):
 * the PF is opened before its VFs exist and its VFs are gone before it
 * is closed.  Its later opens are further fds, which do not reset.
 */
static void test_vf_token(struct vt *t, void *arg)
{
	int pfc, pfg, pfd, pfd2, vfc, vfg, vfd;

	(void)arg;
	if (access("/sys/bus/pci/devices/" PF "/sriov_totalvfs", F_OK))
		vt_skip(t, "no SR-IOV PF at %s: machine sriov only", PF);
	VT_OK(t, vt_bind(PF, "vfio-pci"));

	/* The PF, none of its VFs open: no token needed. */
	pfc = group_in_container(t, PF, &pfg);
	pfd = VT_OK(t, vtc_device_fd(pfg, PF));
	VT_OK(t, vt_vfio_enable_sriov(1));
	VT_OK(t, vt_sriov_numvfs(PF, 2));
	wait_driver(t, VF0, "vfio-pci");

	VT_OK(t, feature(pfd, VFIO_DEVICE_FEATURE_PCI_VF_TOKEN |
			 VFIO_DEVICE_FEATURE_PROBE, NULL, FULL));
	VT_OK(t, feature(pfd, TOKEN_SET | VFIO_DEVICE_FEATURE_PROBE, NULL,
			 sizeof(struct vfio_device_feature)));
	VT_ERRNO(t, feature(pfd, VFIO_DEVICE_FEATURE_PCI_VF_TOKEN |
			    VFIO_DEVICE_FEATURE_GET, NULL, FULL), EINVAL);
	VT_ERRNO(t, feature(pfd, VFIO_DEVICE_FEATURE_PCI_VF_TOKEN |
			    VFIO_DEVICE_FEATURE_PROBE |
			    VFIO_DEVICE_FEATURE_GET, NULL, FULL), EINVAL);
	VT_ERRNO(t, feature(pfd, TOKEN_SET, TOK1, FULL - 1), EINVAL);
	VT_ERRNO(t, feature(pfd, VFIO_DEVICE_FEATURE_PCI_VF_TOKEN, TOK1,
			    FULL), EINVAL);
	VT_ERRNO(t, feature(pfd, TOKEN_SET | (1u << 19), TOK1, FULL), EINVAL);
	VT_ERRNO(t, feature(pfd, VFIO_DEVICE_FEATURE_MIGRATION |
			    VFIO_DEVICE_FEATURE_PROBE, NULL, FULL), ENOTTY);
	VT_OK(t, feature(pfd, TOKEN_SET, TOK1, FULL));

	/* A VF: the PF's token, nothing else. */
	vfc = group_in_container(t, VF0, &vfg);
	VT_ERRNO(t, vtc_device_fd(vfg, VF0), EACCES);
	VT_ERRNO(t, vtc_device_fd(vfg, VF0 " vf_token=" TOK0), EACCES);
	VT_ERRNO(t, vtc_device_fd(vfg, VF0 " vf_token=" TOK2), EACCES);
	VT_ERRNO(t, vtc_device_fd(vfg, VF0 " vf_token=5a6b0e0c"), EINVAL);
	VT_ERRNO(t, vtc_device_fd(vfg, VF0 " vf_token=" TOK1 " x=1"), EINVAL);
	VT_ERRNO(t, vtc_device_fd(vfg, VF0 "x vf_token=" TOK1), ENODEV);
	vfd = VT_OK(t, vtc_device_fd(vfg, VF0 "  vf_token=" TOK1));
	VT_ERRNO(t, feature(vfd, VFIO_DEVICE_FEATURE_PCI_VF_TOKEN |
			    VFIO_DEVICE_FEATURE_PROBE, NULL, FULL), ENOTTY);

	/* The PF again while the VF is open: only with the token. */
	VT_ERRNO(t, vtc_device_fd(pfg, PF), EACCES);
	VT_ERRNO(t, vtc_device_fd(pfg, PF " vf_token=" TOK2), EACCES);
	pfd2 = VT_OK(t, vtc_device_fd(pfg, PF " vf_token=" TOK1));
	close(pfd2);

	/* No VF open: a PF's token given at open is its new one. */
	close(vfd);
	pfd2 = VT_OK(t, vtc_device_fd(pfg, PF " vf_token=" TOK2));
	close(pfd2);
	VT_ERRNO(t, vtc_device_fd(vfg, VF0 " vf_token=" TOK1), EACCES);
	vfd = VT_OK(t, vtc_device_fd(vfg, VF0 " vf_token=" TOK2));
	close(vfd);
	close(vfg);
	close(vfc);

	/* VFs gone before the PF's release resets it. */
	VT_OK(t, vt_sriov_numvfs(PF, 0));
	close(pfd);
	close(pfg);
	close(pfc);
}

/* edu is neither PF nor VF: no token, no feature. */
static void test_token_edu(struct vt *t, void *arg)
{
	struct vtc_dev d;

	(void)arg;
	VT_CHECKF(t, vtc_open_dev(&d, VT_EDU0, 0) == 0, "open %s: %s",
		  VT_EDU0, strerror(errno));
	VT_ERRNO(t, vtc_device_fd(d.group_fd, VT_EDU0 " vf_token=" TOK1),
		 EINVAL);
	VT_ERRNO(t, feature(d.device_fd, VFIO_DEVICE_FEATURE_PCI_VF_TOKEN |
			    VFIO_DEVICE_FEATURE_PROBE, NULL, FULL), ENOTTY);
	VT_ERRNO(t, feature(d.device_fd, TOKEN_SET, TOK1, FULL), ENOTTY);
	vtc_close_dev(&d);
}

int main(void)
{
	struct vt t = { .prog = "t-container-sriov" };

	VT_RUN_CLOSE(&t, test_vf);
	vt_unbind(VF0);
	vt_sriov_numvfs(PF, 0);
	vt_unbind(PF);
	VT_RUN_CLOSE(&t, test_vf_token);
	pf_cleanup();
	VT_RUN_CLOSE(&t, test_token_edu);
	return vt_done(&t);
}
