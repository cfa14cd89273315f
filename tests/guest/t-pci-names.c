// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-pci-names: the PCI driver answers to both names users know: "vfio"
 * (the seed ABI's) and "vfio-pci" (driver_override, new_id and ids= as
 * libvirt, DPDK and the in-tree driver's users write them).  A device on
 * either is ours: its seed group node appears and its device fd opens.
 * Every case puts the devices back on "vfio" as /init left them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define DRV_VFIO	"/sys/bus/pci/drivers/vfio"
#define DRV_VFIO_PCI	"/sys/bus/pci/drivers/vfio-pci"
#define BIND_WAIT_MS	10000

static const char *const devs[] = { VT_EDU0, VT_EDU1, VT_EDU2, VT_TESTDEV0 };

static int driver_is(const char *dev, const char *want)
{
	char drv[64] = "";

	return vt_device_driver(dev, drv, sizeof(drv)) == 0 &&
	       !strcmp(drv, want);
}

/* The device is ours, whatever the name: the seed device fd opens. */
static void check_usable(struct vt *t, const char *dev)
{
	char node[64];
	struct vt_dev d;

	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", vt_group_id(dev));
	VT_CHECKF(t, vt_wait_path(node, 1, BIND_WAIT_MS) == 0, "%s missing",
		  node);
	VT_CHECKF(t, vt_open_dev(&d, dev) == 0, "open %s: %s", dev,
		  strerror(errno));
	vt_close_dev(&d);
}

static void test_both_drivers(struct vt *t, void *arg)
{
	char link[128] = "";
	ssize_t n;

	(void)arg;
	VT_CHECKF(t, access(DRV_VFIO, F_OK) == 0, "no %s", DRV_VFIO);
	VT_CHECKF(t, access(DRV_VFIO_PCI, F_OK) == 0, "no %s", DRV_VFIO_PCI);
	n = readlink(DRV_VFIO_PCI "/module", link, sizeof(link) - 1);
	VT_CHECKF(t, n > 0 && strstr(link, "/vfio_pci"), "vfio-pci's module "
		  "is '%s'", n > 0 ? link : strerror(errno));
}

/* driver_override=vfio-pci, as libvirt and DPDK's dpdk-devbind do. */
static void test_override_vfio_pci(struct vt *t, void *arg)
{
	int bound, ok;

	(void)arg;
	bound = vt_bind(VT_EDU1, "vfio-pci") == 0;
	ok = bound && driver_is(VT_EDU1, "vfio-pci");
	if (ok) {
		check_usable(t, VT_EDU1);
	}
	VT_CHECKF(t, vt_bind_vfio(VT_EDU1) == 0, "back to vfio: %s",
		  strerror(errno));
	VT_CHECKF(t, ok, "driver_override=vfio-pci did not bind %s to "
		  "vfio-pci: %s", VT_EDU1, bound ? "other driver" :
		  strerror(errno));
	check_usable(t, VT_EDU1);
}

/* The seed name still binds (after a stay on vfio-pci too). */
static void test_seed_name(struct vt *t, void *arg)
{
	(void)arg;
	VT_CHECKF(t, vt_bind(VT_EDU1, "vfio-pci") == 0, "bind vfio-pci: %s",
		  strerror(errno));
	VT_CHECKF(t, vt_bind(VT_EDU1, "vfio") == 0 &&
		  driver_is(VT_EDU1, "vfio"), "bind vfio: %s",
		  strerror(errno));
	check_usable(t, VT_EDU1);
}

/*
 * new_id on vfio-pci: the id moves from vfio to vfio-pci for a moment,
 * an unbound edu then probes to vfio-pci, and everything moves back.
 */
static void test_new_id(struct vt *t, void *arg)
{
	char drv[64] = "";
	int moved, bound = 0;

	(void)arg;
	moved = vt_write_file(DRV_VFIO "/remove_id", "1234 11e8") == 0 &&
		vt_write_file(DRV_VFIO_PCI "/new_id", "1234 11e8") == 0;
	if (moved && vt_unbind(VT_EDU1) == 0 &&
	    vt_write_file("/sys/bus/pci/drivers_probe", VT_EDU1) == 0)
		bound = driver_is(VT_EDU1, "vfio-pci");
	vt_device_driver(VT_EDU1, drv, sizeof(drv));
	if (bound)
		check_usable(t, VT_EDU1);

	/* Back as /init left it. */
	vt_write_file(DRV_VFIO_PCI "/remove_id", "1234 11e8");
	VT_OK(t, vt_write_file(DRV_VFIO "/new_id", "1234 11e8"));
	VT_CHECKF(t, vt_bind_vfio(VT_EDU1) == 0, "back to vfio: %s",
		  strerror(errno));
	VT_CHECKF(t, moved, "moving the id to vfio-pci failed");
	VT_CHECKF(t, bound, "%s probed to '%s', want vfio-pci", VT_EDU1, drv);
}

static int module_loaded(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

/* vfio_pci as /init loaded it, every test device on "vfio". */
static void reload_as_init(struct vt *t)
{
	char path[96];
	unsigned int i;

	if (module_loaded("vfio_pci"))
		VT_CHECKF(t, system("rmmod vfio_pci") == 0, "rmmod vfio_pci");
	VT_CHECKF(t, system(". /etc/vt.conf && modprobe vfio_pci "
			    "$VT_MODPARAMS") == 0, "modprobe vfio_pci failed");
	VT_OK(t, vt_write_file(DRV_VFIO "/new_id", "1234 11e8"));
	VT_OK(t, vt_write_file(DRV_VFIO "/new_id", "1b36 0005"));
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s",
			 devs[i]);
		if (access(path, F_OK))
			continue;	/* edu2 may be unplugged */
		snprintf(path, sizeof(path), DRV_VFIO "/%s", devs[i]);
		VT_CHECKF(t, vt_wait_path(path, 1, BIND_WAIT_MS) == 0,
			  "%s not back on vfio", devs[i]);
	}
}

/*
 * ids= at load, as the in-tree vfio-pci takes it: good entries become
 * vfio-pci's ids, malformed ones are skipped with a warning naming them.
 */
static void test_ids_param(struct vt *t, void *arg)
{
	int loaded, testdev, edu_free, warned_bogus, warned_field;

	(void)arg;
	VT_CHECKF(t, system("rmmod vfio_pci") == 0, "rmmod vfio_pci (is a "
		  "device still open?)");
	loaded = system(". /etc/vt.conf && modprobe vfio_pci $VT_MODPARAMS "
			"ids=1b36:0005,bogus,,1234:11e8:1af4:zz") == 0;
	testdev = loaded && vt_wait_path(DRV_VFIO_PCI "/" VT_TESTDEV0, 1,
					 BIND_WAIT_MS) == 0;
	edu_free = loaded && driver_is(VT_EDU0, "");
	warned_bogus = system("dmesg | grep -q 'ids: ignoring malformed "
			      "entry \"bogus\"'") == 0;
	warned_field = system("dmesg | grep -q 'ids: ignoring malformed "
			      "entry \"1234:11e8:1af4:zz\"'") == 0;
	if (testdev)
		check_usable(t, VT_TESTDEV0);
	reload_as_init(t);
	VT_CHECKF(t, loaded, "modprobe vfio_pci ids=... failed");
	VT_CHECKF(t, testdev, "ids=1b36:0005 did not bind %s to vfio-pci",
		  VT_TESTDEV0);
	VT_CHECKF(t, edu_free, "a malformed edu entry bound %s", VT_EDU0);
	VT_CHECKF(t, warned_bogus && warned_field, "no warning for the "
		  "malformed entries (bogus %d, bad field %d)", warned_bogus,
		  warned_field);
}

int main(void)
{
	struct vt t = { .prog = "t-pci-names" };

	VT_RUN_CLOSE(&t, test_both_drivers);
	VT_RUN_CLOSE(&t, test_override_vfio_pci);
	VT_RUN_CLOSE(&t, test_seed_name);
	VT_RUN_CLOSE(&t, test_new_id);
	VT_RUN_CLOSE(&t, test_ids_param);
	return vt_done(&t);
}
