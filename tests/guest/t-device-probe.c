// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-probe: what the vfio PCI driver accepts.  It binds through
 * driver_override as well as new_id, refuses a bridge (it owns other
 * devices' windows and bus numbers) with -EINVAL, and exports its
 * parameters and a version matching the core's.
 *
 * The bridge is edu2's PCIe root port: it is taken off pcieport for the
 * attempt and given back, so edu2's hotplug slot works again afterwards.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <sys/klog.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define DEVS		"/sys/bus/pci/devices"
#define KLOG_READ_ALL	3
#define KLOG_SIZE	10

/* Is needle in the kernel log? */
static int klog_has(const char *needle)
{
	int size = klogctl(KLOG_SIZE, NULL, 0);
	char *buf;
	int n, found;

	if (size <= 0)
		return -1;
	buf = malloc(size + 1);
	if (!buf)
		return -1;
	n = klogctl(KLOG_READ_ALL, buf, size);
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	found = strstr(buf, needle) != NULL;
	free(buf);
	return found;
}

static void sysfs_write(struct vt *t, const char *path, const char *s)
{
	VT_CHECKF(t, vt_write_file(path, s) == 0, "write '%s' to %s: %s", s,
		  path, strerror(errno));
}

/* The root port above edu2, e.g. "0000:00:05.0", into port. */
static void edu2_port(struct vt *t, char *port, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX];

	snprintf(path, sizeof(path), DEVS "/" VT_EDU2 "/..");
	if (!realpath(path, real))
		vt_skip(t, "no edu2 at " VT_EDU2);
	snprintf(port, len, "%s", basename(real));
}

static void test_bridge_refused(struct vt *t, void *arg)
{
	char port[64], drv[64], got[64], path[PATH_MAX], msg[128];
	uint8_t type = 0xff;
	int fd;

	(void)arg;
	edu2_port(t, port, sizeof(port));
	snprintf(path, sizeof(path), DEVS "/%s/config", port);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	VT_CHECKF(t, fd >= 0, "open %s: %s", path, strerror(errno));
	VT_CHECKF(t, pread(fd, &type, 1, 0x0e) == 1, "read header type");
	close(fd);
	VT_CHECKF(t, (type & 0x7f) == 1, "%s header type 0x%x, not a bridge",
		  port, type);
	VT_OK(t, vt_device_driver(port, drv, sizeof(drv)));
	VT_CHECKF(t, !strcmp(drv, "pcieport"), "%s on driver '%s'", port, drv);

	/* Off pcieport, offered to vfio alone. */
	VT_OK(t, vt_unbind(port));
	snprintf(path, sizeof(path), DEVS "/%s/driver_override", port);
	sysfs_write(t, path, "vfio");
	/* 6.1 ignores probe errors here: judge by the outcome. */
	vt_write_file("/sys/bus/pci/drivers_probe", port);
	sysfs_write(t, path, "\n");
	VT_OK(t, vt_device_driver(port, drv, sizeof(drv)));
	snprintf(got, sizeof(got), "%s", drv);

	/* Back to pcieport before judging, so the slot always returns. */
	if (strcmp(drv, "pcieport")) {
		if (!strcmp(drv, "vfio"))
			vt_unbind(port);
		sysfs_write(t, "/sys/bus/pci/drivers/pcieport/bind", port);
	}
	VT_OK(t, vt_device_driver(port, drv, sizeof(drv)));
	VT_CHECKF(t, !strcmp(drv, "pcieport"), "%s not back on pcieport: '%s'",
		  port, drv);

	VT_CHECKF(t, got[0] == '\0', "bridge ended on driver '%s'", got);
	/* 6.1 and 6.12 word the driver core's message differently. */
	snprintf(msg, sizeof(msg), "vfio: probe of %s failed with error -22",
		 port);
	snprintf(path, sizeof(path),
		 "vfio %s: probe with driver vfio failed with error -22",
		 port);
	VT_CHECKF(t, klog_has(msg) == 1 || klog_has(path) == 1,
		  "no '%s' in the kernel log", msg);
}

static void test_driver_override(struct vt *t, void *arg)
{
	struct vt_dev d;
	uint32_t id = 0;

	(void)arg;
	/* edu1 off vfio, then back through driver_override, not new_id. */
	VT_OK(t, vt_unbind(VT_EDU1));
	VT_OK(t, vt_bind_vfio(VT_EDU1));
	VT_CHECKF(t, vt_open_dev(&d, VT_EDU1) == 0, "open edu1: %s",
		  strerror(errno));
	if (pread(d.device_fd, &id, 4, 0) != 4 || id != 0x010000ed) {
		vt_close_dev(&d);
		vt_fail(t, __FILE__, __LINE__, "edu1 id 0x%08x", id);
	}
	vt_close_dev(&d);
}

static void test_module_info(struct vt *t, void *arg)
{
	char ours[64], core[64], unsafe[8];

	(void)arg;
	VT_OK(t, vt_read_file("/sys/module/vfio_pci/version", ours,
			      sizeof(ours)));
	VT_OK(t, vt_read_file("/sys/module/vfio/version", core, sizeof(core)));
	VT_CHECKF(t, !strcmp(ours, core), "vfio_pci %s, vfio %s", ours, core);
	VT_OK(t, vt_read_file("/sys/module/vfio_pci/parameters/"
			      "allow_unsafe_interrupts", unsafe,
			      sizeof(unsafe)));
	VT_CHECKF(t, !strcmp(unsafe, "N"), "allow_unsafe_interrupts=%s", unsafe);
	/* No id table: only what new_id/driver_override name is bound. */
	VT_CHECKF(t, access("/sys/bus/pci/drivers/vfio/new_id", W_OK) == 0,
		  "no new_id");
}

int main(void)
{
	struct vt t = { .prog = "t-device-probe" };

	VT_RUN(&t, test_bridge_refused, NULL);
	VT_RUN(&t, test_driver_override, NULL);
	VT_RUN(&t, test_module_info, NULL);
	return vt_done(&t);
}
