// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-module: vfio.ko must stay loaded while a group fd is open, also once
 * vfio_pci.ko (which depends on it) is gone and no device is bound: the
 * fd still answers (-ENODEV: the group went with its last device).  Afterwards vfio_pci is loaded again and the devices
 * bound to it the way /init does (new_id), so that later programs find
 * what they expect.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define NEW_ID		"/sys/bus/pci/drivers/vfio/new_id"
#define BIND_WAIT_MS	10000

static const char *const devs[] = { VT_EDU0, VT_EDU1, VT_EDU2, VT_TESTDEV0 };

static int module_loaded(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

static void test_unload_with_group_fd(struct vt *t, void *arg)
{
	uint32_t flags = 0;
	int group;

	(void)arg;
	group = vt_open_group_of(VT_EDU0);
	VT_CHECKF(t, group >= 0, "open the group of %s: %s", VT_EDU0,
		  strerror(errno));
	VT_CHECKF(t, system("rmmod vfio_pci") == 0 &&
		  !module_loaded("vfio_pci"), "rmmod vfio_pci failed");
	VT_CHECKF(t, system("rmmod vfio 2>/dev/null") != 0 &&
		  module_loaded("vfio"), "rmmod vfio succeeded with a group "
		  "fd open");
	/* The group went with its last device: a clean error, no crash. */
	VT_ERRNO(t, vt_group_flags(group, &flags), ENODEV);
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD), ENODEV);
	VT_OK(t, close(group));
}

/* vfio_pci back, every test device on it, as /init left them. */
static void test_reload(struct vt *t, void *arg)
{
	char path[96];
	unsigned int i;

	(void)arg;
	if (!module_loaded("vfio_pci"))
		/* With the parameters /init loaded it with. */
		VT_CHECKF(t, system(". /etc/vt.conf && "
				    "modprobe vfio_pci $VT_MODPARAMS") == 0,
			  "modprobe vfio_pci failed");
	VT_OK(t, vt_write_file(NEW_ID, "1234 11e8"));
	VT_OK(t, vt_write_file(NEW_ID, "1b36 0005"));
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s",
			 devs[i]);
		if (access(path, F_OK))
			continue;	/* edu2 may be unplugged */
		snprintf(path, sizeof(path),
			 "/sys/bus/pci/drivers/vfio/%s", devs[i]);
		VT_CHECKF(t, vt_wait_path(path, 1, BIND_WAIT_MS) == 0,
			  "%s not back on vfio", devs[i]);
		snprintf(path, sizeof(path), "/dev/vfio/pci:%d",
			 vt_group_id(devs[i]));
		VT_CHECKF(t, vt_wait_path(path, 1, BIND_WAIT_MS) == 0,
			  "%s missing", path);
	}
}

int main(void)
{
	struct vt t = { .prog = "t-module" };

	VT_RUN_CLOSE(&t, test_unload_with_group_fd);
	VT_RUN_CLOSE(&t, test_reload);
	return vt_done(&t);
}
