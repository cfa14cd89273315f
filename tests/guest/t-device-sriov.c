// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-sriov: SR-IOV PFs and VFs bound to vfio (seed ABI; the
 * container ABI's view of a VF is t-container-sriov).
 *
 * A PF bound to vfio takes sriov_numvfs writes only with vfio_pci's
 * enable_sriov set: without it -ENOENT, the kernel's errno for a driver
 * that cannot configure VFs.  Its VFs are claimed for vfio-pci as they
 * appear, and cannot be removed while one is open.  Such a VF opens only
 * with its PF's VF token in GET_DEVICE_FD's name ("ADDR vf_token=UUID"):
 * in this ABI, which has no VFIO_DEVICE_FEATURE, the token a PF is opened
 * with while none of its VFs is open; the null UUID until then.
 *
 * A VF's vendor and device IDs read all ones in hardware and its memory
 * enable is hard-wired to 0: config space shows the IDs the kernel has
 * and a virtual memory enable that reads back as written and gates BAR
 * access as a real one does (EIO, SIGBUS while off).
 *
 * Needs the sriov machine (an NVMe PF with two VFs behind a root port)
 * and the guest's nvme driver (--intree nvme): tests/vm/run.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define PF	VT_NVME_PF
#define VF0	VT_NVME_VF0
#define VF1	"0000:02:00.2"

#define TOK0	"00000000-0000-0000-0000-000000000000"
#define TOK1	"5a6b0e0c-7e53-4d38-9d6d-1b3a8f0c2a11"

static void need_pf(struct vt *t)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/sriov_totalvfs",
		 PF);
	if (access(path, F_OK))
		vt_skip(t, "no SR-IOV PF at %s: machine sriov only", PF);
}

static unsigned long sysfs_hex(struct vt *t, const char *dev,
			       const char *attr)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dev, attr);
	VT_CHECKF(t, vt_read_file(path, buf, sizeof(buf)) > 0, "%s: %s", path,
		  strerror(errno));
	return strtoul(buf, NULL, 16);
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

/* The PF back as /init left it: no VFs, no driver, enable_sriov off. */
static void pf_cleanup(void)
{
	vt_vfio_enable_sriov(1);
	vt_sriov_numvfs(PF, 0);
	vt_vfio_enable_sriov(0);
	vt_unbind(PF);
}

/*
 * The PF's power_state, after @ms for it to settle; "-" on a kernel
 * without runtime PM (CONFIG_PM), where devices stay in D0.
 */
static int pf_power(struct vt *t, int ms, char *buf, size_t len)
{
	if (access("/sys/bus/pci/devices/" PF "/power/runtime_status", F_OK))
		return 0;
	usleep(ms * 1000);
	VT_OK(t, vt_read_file("/sys/bus/pci/devices/" PF "/power_state", buf,
			      len));
	return 1;
}

static void test_pf_numvfs(struct vt *t, void *arg)
{
	char buf[64], path[128];
	struct vt_dev d;

	(void)arg;
	need_pf(t);
	VT_OK(t, vt_bind(PF, "vfio"));

	VT_OK(t, vt_vfio_enable_sriov(0));
	VT_ERRNO(t, vt_sriov_numvfs(PF, 2), ENOENT);
	VT_CHECKF(t, system("dmesg | grep -q 'sriov_numvfs: refused; load vfio_pci with enable_sriov=1'") == 0,
		  "no log line saying to set enable_sriov");
	VT_CHECKF(t, access("/sys/bus/pci/devices/" VF0, F_OK),
		  "a VF appeared without enable_sriov");

	/* Idle, the PF is in D3hot (it has a PM capability)... */
	if (pf_power(t, 2000, buf, sizeof(buf)))
		VT_CHECKF(t, !strcmp(buf, "D3hot"), "idle PF in %s", buf);

	VT_OK(t, vt_vfio_enable_sriov(1));
	VT_OK(t, vt_sriov_numvfs(PF, 2));
	wait_driver(t, VF0, "vfio-pci");
	wait_driver(t, VF1, "vfio-pci");
	/* ...but not while its VFs live in it. */
	if (pf_power(t, 2000, buf, sizeof(buf)))
		VT_CHECKF(t, !strcmp(buf, "D0"), "PF with VFs in %s", buf);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override",
		 VF0);
	VT_OK(t, vt_read_file(path, buf, sizeof(buf)));
	VT_CHECKF(t, !strcmp(buf, "vfio-pci"), "VF driver_override \"%s\"",
		  buf);

	/* Open (with the PF's first token): its VFs stay. */
	VT_OK(t, vt_open_dev_named(&d, VF0, VF0 " vf_token=" TOK0));
	VT_ERRNO(t, vt_sriov_numvfs(PF, 0), EBUSY);
	VT_CHECKF(t, !access("/sys/bus/pci/devices/" VF0, F_OK),
		  "VF gone while open");
	vt_close_dev(&d);

	VT_OK(t, vt_sriov_numvfs(PF, 0));
	VT_OK(t, vt_wait_path("/sys/bus/pci/devices/" VF0, 0, 2000));
	if (pf_power(t, 2000, buf, sizeof(buf)))
		VT_CHECKF(t, !strcmp(buf, "D3hot"), "PF without VFs in %s",
			  buf);
	pf_cleanup();
}

/*
 * The PF sets the token when none of its VFs is open, else needs it.  A
 * PF's reset (first open, release) takes its VFs away in QEMU's NVMe:
 * the PF is open before they exist and until they are gone; its later
 * opens are further fds, which do not reset it.
 */
static void test_vf_token(struct vt *t, void *arg)
{
	struct vt_dev pf, vf;
	int fd;

	(void)arg;
	need_pf(t);
	VT_OK(t, vt_bind(PF, "vfio"));
	VT_OK(t, vt_open_dev_named(&pf, PF, PF " vf_token=" TOK1));
	VT_OK(t, vt_vfio_enable_sriov(1));
	VT_OK(t, vt_sriov_numvfs(PF, 2));
	wait_driver(t, VF0, "vfio-pci");

	VT_ERRNO(t, vt_open_dev(&vf, VF0), EACCES);
	VT_ERRNO(t, vt_open_dev_named(&vf, VF0, VF0 " vf_token=" TOK0), EACCES);
	VT_ERRNO(t, vt_open_dev_named(&vf, VF0, VF0 " vf_token=" TOK1 "0"), EINVAL);
	VT_OK(t, vt_open_dev_named(&vf, VF0, VF0 " vf_token=" TOK1));

	/* A VF is open: the PF needs the token. */
	VT_ERRNO(t, vt_device_fd(pf.group_fd, PF), EACCES);
	VT_ERRNO(t, vt_device_fd(pf.group_fd, PF " vf_token=" TOK0), EACCES);
	fd = VT_OK(t, vt_device_fd(pf.group_fd, PF " vf_token=" TOK1));
	close(fd);
	vt_close_dev(&vf);

	/* None open: the PF opens without one, and the token stays. */
	fd = VT_OK(t, vt_device_fd(pf.group_fd, PF));
	close(fd);
	VT_ERRNO(t, vt_open_dev(&vf, VF0), EACCES);
	VT_OK(t, vt_open_dev_named(&vf, VF0, VF0 " vf_token=" TOK1));
	vt_close_dev(&vf);

	/* No PF or VF: a token is an error. */
	VT_ERRNO(t, vt_open_dev_named(&vf, VT_EDU0, VT_EDU0 " vf_token=" TOK1),
		 EINVAL);
	VT_OK(t, vt_sriov_numvfs(PF, 0));
	vt_close_dev(&pf);
	pf_cleanup();
}

static int bar0_pread(int fd, uint32_t *v)
{
	return pread(fd, v, 4, vt_roff(VFIO_PCI_BAR0_REGION_INDEX)) == 4 ?
	       0 : -1;
}

static void test_vf_config_bar(struct vt *t, void *arg)
{
	char msg[256];
	volatile uint32_t *bar;
	uint32_t ids, cap = 0, v = 0;
	struct vfio_irq_info irq;
	uint64_t size;
	struct vt_dev d;

	(void)arg;
	need_pf(t);
	if (vt_nvme_vf_online(PF, msg, sizeof(msg)))
		vt_fail(t, __FILE__, __LINE__, "VF setup: %s", msg);
	VT_OK(t, vt_bind(VF0, "vfio"));
	VT_OK(t, vt_open_dev(&d, VF0));

	/* IDs: all ones in hardware, the kernel's in ours. */
	ids = sysfs_hex(t, VF0, "vendor") | sysfs_hex(t, VF0, "device") << 16;
	VT_CHECKF(t, vt_real_cfg(t, VF0, VT_PCI_VENDOR, 4) == 0xffffffff,
		  "VF IDs in hardware not all ones: a VF?");
	v = vt_cfg_rd(t, d.device_fd, VT_PCI_VENDOR, 4);
	VT_CHECKF(t, v == ids, "config IDs %08x, sysfs %08x", v, ids);
	VT_CHECKF(t, vt_cfg_rd(t, d.device_fd, VT_PCI_VENDOR, 2) ==
		  (ids & 0xffff), "vendor word");
	VT_CHECKF(t, vt_cfg_rd(t, d.device_fd, VT_PCI_VENDOR + 2, 2) ==
		  ids >> 16, "device word");

	/* No INTx: a VF has none (QEMU's pin register says 1). */
	memset(&irq, 0, sizeof(irq));
	irq.argsz = sizeof(irq);
	irq.index = VFIO_PCI_INTX_IRQ_INDEX;
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_IRQ_INFO, &irq));
	VT_CHECKF(t, irq.count == 0, "VF INTx count %u", irq.count);

	/* Memory enable off: no BAR access. */
	VT_CHECKF(t, !(vt_cfg_rd(t, d.device_fd, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_MEMORY), "memory enable on at open");
	VT_ERRNO(t, bar0_pread(d.device_fd, &v), EIO);

	/*
	 * On: reads back set.  (QEMU 7.2's VF has a writable memory enable,
	 * which pci_enable_device() turned on: the real bit tells nothing.)
	 */
	vt_set_cmd_bits(t, d.device_fd, VT_PCI_COMMAND_MEMORY, 0);
	VT_CHECKF(t, vt_cfg_rd(t, d.device_fd, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_MEMORY, "memory enable reads back 0");
	VT_OK(t, bar0_pread(d.device_fd, &cap));
	VT_CHECKF(t, cap != 0, "NVMe CAP (low) reads 0");
	bar = vt_mmap_region(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX, &size);
	VT_CHECKF(t, bar != NULL, "mmap BAR0: %s", strerror(errno));
	VT_CHECKF(t, !vt_read_faults(bar), "mmap read faults with MSE on");
	VT_CHECKF(t, bar[0] == cap, "mmap CAP %08x, pread %08x", bar[0], cap);

	/* Off again: EIO and SIGBUS, as for any device. */
	vt_set_cmd_bits(t, d.device_fd, 0, VT_PCI_COMMAND_MEMORY);
	VT_CHECKF(t, !(vt_cfg_rd(t, d.device_fd, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_MEMORY), "memory enable reads back 1");
	VT_ERRNO(t, bar0_pread(d.device_fd, &v), EIO);
	VT_CHECKF(t, vt_read_faults(bar), "mmap read with MSE off worked");

	/* And on: the mapping faults in again. */
	vt_set_cmd_bits(t, d.device_fd, VT_PCI_COMMAND_MEMORY, 0);
	VT_CHECKF(t, !vt_read_faults(bar) && bar[0] == cap,
		  "mmap after MSE on again");
	munmap((void *)bar, size);
	vt_close_dev(&d);

	VT_OK(t, vt_unbind(VF0));
	VT_OK(t, vt_sriov_numvfs(PF, 0));
	VT_OK(t, vt_unbind(PF));
}

int main(void)
{
	struct vt t = { .prog = "t-device-sriov" };

	VT_RUN_CLOSE(&t, test_pf_numvfs);
	pf_cleanup();
	VT_RUN_CLOSE(&t, test_vf_token);
	pf_cleanup();
	VT_RUN_CLOSE(&t, test_vf_config_bar);
	vt_unbind(VF0);
	vt_sriov_numvfs(PF, 0);
	vt_unbind(PF);
	return vt_done(&t);
}
