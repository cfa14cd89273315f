// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-hostile-intremap: without interrupt remapping a device's MSI write
 * can name any vector on any CPU, so a user driving the device could
 * forge interrupts for the host.  vfio_pci must refuse such a device
 * unless the administrator sets allow_unsafe_interrupts=1.
 *
 * The refusal half needs a VM whose intel-iommu has intremap=off and
 * whose devices /init leaves unbound: tests/debug/run-intremap.sh boots
 * one.  In the normal suite (remapping on) only the positive half runs:
 * the devices are bound and the override is off.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define PARAM		"/sys/module/vfio_pci/parameters/allow_unsafe_interrupts"
#define DRV		"/sys/bus/pci/drivers/vfio"
#define ECAP_IR		(1ULL << 3)	/* VT-d extended capability: IR */

struct env {
	int remapping;		/* 1: every DMAR unit has IR, 0: none, -1 */
	char param[8];
};

/* Whether the VT-d units offer interrupt remapping (ecap bit 3). */
static int dmar_remapping(void)
{
	char path[320], buf[64];
	struct dirent *de;
	int units = 0, with_ir = 0;
	DIR *d = opendir("/sys/class/iommu");

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "dmar", 4) != 0)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/iommu/%s/intel-iommu/ecap", de->d_name);
		if (vt_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		units++;
		if (strtoull(buf, NULL, 16) & ECAP_IR)
			with_ir++;
	}
	closedir(d);
	if (!units)
		return -1;
	return with_ir == units ? 1 : with_ir == 0 ? 0 : -1;
}

static void need(struct vt *t, struct env *e, int remapping)
{
	if (e->remapping < 0)
		vt_skip(t, "cannot tell whether interrupt remapping is on "
			"(no readable /sys/class/iommu/dmar*/intel-iommu/ecap)");
	if (e->remapping != remapping)
		vt_skip(t, "needs a VM with intel-iommu intremap=%s%s",
			remapping ? "on" : "off", remapping ? "" :
			": tests/debug/run-intremap.sh boots one");
	if (vt_read_file(PARAM, e->param, sizeof(e->param)) < 0)
		vt_skip(t, "%s: %s (vfio_pci not loaded?)", PARAM,
			strerror(errno));
}

static void test_bound_with_remapping(struct vt *t, void *arg)
{
	struct env *e = arg;
	char drv[64];

	need(t, e, 1);
	VT_CHECKF(t, e->param[0] == 'N' || e->param[0] == '0',
		  "allow_unsafe_interrupts is '%s' by default", e->param);
	VT_CHECKF(t, vt_device_driver(VT_EDU0, drv, sizeof(drv)) == 0 &&
		  strcmp(drv, "vfio") == 0, "%s on '%s' with remapping on",
		  VT_EDU0, drv);
}

/* Unbound, with no dynamic id of ours left behind. */
static void leave_unbound(void)
{
	char drv[64] = "";

	vt_write_file(DRV "/remove_id", "1234 11e8");
	if (vt_device_driver(VT_EDU0, drv, sizeof(drv)) == 0 &&
	    strcmp(drv, "vfio") == 0)
		vt_unbind(VT_EDU0);
}

static void test_refused_without_remapping(struct vt *t, void *arg)
{
	struct env *e = arg;
	char node[64], drv[64] = "";
	int ret, err;

	need(t, e, 0);
	VT_CHECKF(t, e->param[0] == 'N' || e->param[0] == '0',
		  "allow_unsafe_interrupts is '%s' by default", e->param);
	VT_CHECKF(t, vt_device_driver(VT_EDU0, drv, sizeof(drv)) == 0 && !drv[0],
		  "%s starts on '%s'; the VM should leave it unbound (--no-bind)",
		  VT_EDU0, drv);
	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", vt_group_id(VT_EDU0));

	/* Documentation/vfio.txt's way: new_id probes every edu. */
	VT_OK(t, vt_write_file(DRV "/new_id", "1234 11e8"));
	usleep(500000);
	vt_device_driver(VT_EDU0, drv, sizeof(drv));
	if (drv[0] || access(node, F_OK) == 0) {
		leave_unbound();
		VT_CHECKF(t, 0, "without remapping %s went to '%s' (%s %s)",
			  VT_EDU0, drv, node, access(node, F_OK) ? "absent" :
			  "present");
	}
	/* And an explicit bind is refused with an error, not ignored. */
	errno = 0;
	ret = vt_write_file(DRV "/bind", VT_EDU0);
	err = errno;
	vt_device_driver(VT_EDU0, drv, sizeof(drv));
	leave_unbound();
	VT_CHECKF(t, ret < 0, "bind of %s without remapping succeeded", VT_EDU0);
	VT_CHECKF(t, !drv[0], "after the refused bind %s is on '%s'", VT_EDU0,
		  drv);
	printf("# bind refused with %s\n", strerror(err));
}

static void test_unsafe_allowed(struct vt *t, void *arg)
{
	struct env *e = arg;
	struct vfio_region_info ri;
	struct vt_dev d = { .group_fd = -1, .iommu_fd = -1, .device_fd = -1 };
	uint64_t bar0, v = 0;
	uint16_t cmd;
	uint32_t one = 1;
	int32_t efd = -1;
	int ok, fired, err;

	need(t, e, 0);
	VT_OK(t, vt_write_file(PARAM, "Y"));
	if (vt_write_file(DRV "/new_id", "1234 11e8") < 0 &&
	    vt_write_file(DRV "/bind", VT_EDU0) < 0) {
		vt_write_file(PARAM, e->param);
		leave_unbound();
		VT_CHECKF(t, 0, "bind with allow_unsafe_interrupts=Y: %s",
			  strerror(errno));
	}
	ok = vt_open_dev(&d, VT_EDU0) == 0;
	if (!ok) {
		/* new_id may still be binding: give it a moment */
		usleep(500000);
		ok = vt_open_dev(&d, VT_EDU0) == 0;
	}
	fired = -1;
	if (ok && vt_region_info(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
				 &ri) == 0) {
		bar0 = ri.offset;
		vt_region_info(d.device_fd, VFIO_PCI_CONFIG_REGION_INDEX, &ri);
		cmd = 0;
		if (pread(d.device_fd, &cmd, 2,
			  ri.offset + VT_PCI_COMMAND) == 2) {
			cmd |= VT_PCI_COMMAND_MEMORY | VT_PCI_COMMAND_MASTER;
			if (pwrite(d.device_fd, &cmd, 2,
				   ri.offset + VT_PCI_COMMAND) != 2)
				perror("t-hostile-intremap: PCI_COMMAND");
		}
		efd = eventfd(0, EFD_CLOEXEC);
		fired = 0;
		if (efd >= 0 &&
		    vt_set_irq_eventfds(d.device_fd, VFIO_PCI_MSI_IRQ_INDEX, 1,
					&efd) == 0 &&
		    pwrite(d.device_fd, &one, 4, bar0 + VT_EDU_IRQ_RAISE) == 4)
			fired = vt_wait_eventfd(efd, 3000, &v) == 0;
		if (pwrite(d.device_fd, &one, 4, bar0 + VT_EDU_IRQ_ACK) != 4)
			perror("t-hostile-intremap: ack");
		vt_set_irq_eventfds(d.device_fd, VFIO_PCI_MSI_IRQ_INDEX, 0,
				    NULL);
	}
	err = errno;
	if (efd >= 0)
		close(efd);
	vt_close_dev(&d);
	leave_unbound();
	vt_write_file(PARAM, e->param);
	VT_CHECKF(t, ok, "open %s with allow_unsafe_interrupts=Y: %s", VT_EDU0,
		  strerror(err));
	VT_CHECKF(t, fired == 1, "no MSI from %s with the override on", VT_EDU0);
	printf("# with allow_unsafe_interrupts=Y the MSI arrived (count %llu)\n",
	       (unsigned long long)v);
}

int main(void)
{
	struct vt t = { .prog = "t-hostile-intremap" };
	struct env e = { .remapping = dmar_remapping() };

	printf("# interrupt remapping: %s\n", e.remapping > 0 ? "on" :
	       e.remapping == 0 ? "off" : "unknown");
	VT_RUN(&t, test_bound_with_remapping, &e);
	VT_RUN(&t, test_refused_without_remapping, &e);
	VT_RUN(&t, test_unsafe_allowed, &e);
	return vt_done(&t);
}
