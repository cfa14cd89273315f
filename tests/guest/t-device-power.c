// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-power: the power state src/pci/vfio_pci.c keeps a device in.
 * As with the kernel's vfio-pci, a device bound to vfio that no user has
 * open is runtime suspended, which puts a device with a PM capability
 * in D3hot; an open brings it to D0 for as long as the user has it, and
 * disable_idle_d3=1 leaves the devices bound afterwards in D0.
 *
 * edu has no PM capability, so this uses the msix machine's e1000e:
 *
 *   tests/vm/run-suite.sh --machine msix --only t-device-power
 *
 * and every case skips without it.  The NIC is bound to vfio here and
 * unbound again at the end.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define E1000E_VENDOR	0x8086
#define E1000E_DEVICE	0x10d3
#define E1000_STATUS	0x08
#define SETTLE_MS	3000
#define PARAM_IDLE_D3	"/sys/module/vfio_pci/parameters/disable_idle_d3"

struct nic {
	char name[VT_DEV_NAME_LEN];
	int present;		/* 1 bound to vfio, 0 absent, -1 bind failed */
};

static void dev_attr(struct vt *t, const char *dev, const char *attr,
		     char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dev, attr);
	VT_CHECKF(t, vt_read_file(path, buf, len) >= 0, "read %s: %s", path,
		  strerror(errno));
}

/* Wait for power_state to read @want; the last value read into @seen. */
static int wait_power(struct vt *t, const char *dev, const char *want,
		      int ms, char *seen, size_t len)
{
	uint64_t end = vt_now_ms() + ms;

	for (;;) {
		dev_attr(t, dev, "power_state", seen, len);
		if (!strcmp(seen, want))
			return 1;
		if (vt_now_ms() >= end)
			return 0;
		usleep(20000);
	}
}

#define CHECK_POWER(t, dev, want, ms) do {				\
	char seen_[32];							\
									\
	VT_CHECKF(t, wait_power(t, dev, want, ms, seen_,		\
				sizeof(seen_)),				\
		  "%s: power_state %s after %d ms, want %s", dev,	\
		  seen_, ms, want);					\
} while (0)

static void need_nic(struct vt *t, struct nic *n)
{
	char path[256];

	VT_CHECKF(t, n->present >= 0, "%s could not be bound to vfio", n->name);
	if (!n->present)
		vt_skip(t, "no e1000e (run-suite.sh --machine msix)");
	/* Without CONFIG_PM devices stay in D0, with any driver. */
	snprintf(path, sizeof(path),
		 "/sys/bus/pci/devices/%s/power/runtime_status", n->name);
	if (access(path, F_OK))
		vt_skip(t, "kernel without runtime PM (CONFIG_PM): no idle D3");
}

/* Bound and idle: runtime suspended, in D3hot. */
static void test_idle_d3hot(struct vt *t, void *arg)
{
	struct nic *n = arg;
	char st[32];

	need_nic(t, n);
	CHECK_POWER(t, n->name, "D3hot", SETTLE_MS);
	dev_attr(t, n->name, "power/runtime_status", st, sizeof(st));
	VT_CHECKF(t, !strcmp(st, "suspended"), "runtime_status %s", st);
}

/* An open device is in D0 and works; its close suspends it again. */
static void test_open_d0(struct vt *t, void *arg)
{
	struct nic *n = arg;
	struct vt_dev d = { .group_fd = -1, .iommu_fd = -1, .device_fd = -1 };
	char st[32];
	uint32_t v;

	need_nic(t, n);
	CHECK_POWER(t, n->name, "D3hot", SETTLE_MS);
	VT_CHECKF(t, vt_open_dev(&d, n->name) == 0, "open %s: %s", n->name,
		  strerror(errno));
	dev_attr(t, n->name, "power_state", st, sizeof(st));
	if (strcmp(st, "D0")) {
		vt_close_dev(&d);
		VT_CHECKF(t, 0, "open device in %s, want D0", st);
	}
	v = vt_cfg_rd(t, d.device_fd, 0, 2);
	VT_CHECKF(t, v == E1000E_VENDOR, "vendor %#x", v);
	vt_set_cmd_bits(t, d.device_fd, 0x2, 0);	/* memory decode */
	v = vt_bar0_rd(t, d.device_fd, E1000_STATUS);
	VT_CHECKF(t, v != 0xffffffff, "STATUS reads all ones in D0");
	/* Held open, it stays in D0. */
	usleep(500000);
	dev_attr(t, n->name, "power_state", st, sizeof(st));
	vt_close_dev(&d);
	VT_CHECKF(t, !strcmp(st, "D0"), "open device went to %s", st);
	CHECK_POWER(t, n->name, "D3hot", SETTLE_MS);
}

/* The host reads config space of an idle device, which stays idle. */
static void test_sysfs_config_idle(struct vt *t, void *arg)
{
	struct nic *n = arg;

	need_nic(t, n);
	CHECK_POWER(t, n->name, "D3hot", SETTLE_MS);
	VT_CHECKF(t, vt_real_cfg(t, n->name, 0, 2) == E1000E_VENDOR,
		  "sysfs config of a suspended device");
	CHECK_POWER(t, n->name, "D3hot", SETTLE_MS);
}

static void rebind(struct vt *t, struct nic *n)
{
	VT_CHECKF(t, vt_unbind(n->name) == 0, "unbind %s: %s", n->name,
		  strerror(errno));
	VT_CHECKF(t, vt_bind_vfio(n->name) == 0, "bind %s: %s", n->name,
		  strerror(errno));
}

/* disable_idle_d3=1: devices bound from then on stay in D0. */
static void test_disable_idle_d3(struct vt *t, void *arg)
{
	struct nic *n = arg;
	struct vt_dev d = { .group_fd = -1, .iommu_fd = -1, .device_fd = -1 };
	char st[32];

	need_nic(t, n);
	VT_CHECKF(t, vt_write_file(PARAM_IDLE_D3, "Y") == 0, "%s: %s",
		  PARAM_IDLE_D3, strerror(errno));
	rebind(t, n);
	usleep(SETTLE_MS * 1000 / 2);
	dev_attr(t, n->name, "power_state", st, sizeof(st));
	VT_CHECKF(t, !strcmp(st, "D0"), "idle with disable_idle_d3: %s", st);
	VT_CHECKF(t, vt_open_dev(&d, n->name) == 0, "open %s: %s", n->name,
		  strerror(errno));
	vt_close_dev(&d);
	usleep(SETTLE_MS * 1000 / 2);
	dev_attr(t, n->name, "power_state", st, sizeof(st));
	VT_CHECKF(t, !strcmp(st, "D0"), "closed with disable_idle_d3: %s", st);

	/* The device keeps what it was bound with; a rebind takes N. */
	VT_CHECKF(t, vt_write_file(PARAM_IDLE_D3, "N") == 0, "%s: %s",
		  PARAM_IDLE_D3, strerror(errno));
	usleep(SETTLE_MS * 1000 / 2);
	dev_attr(t, n->name, "power_state", st, sizeof(st));
	VT_CHECKF(t, !strcmp(st, "D0"), "parameter change moved it to %s", st);
	rebind(t, n);
	CHECK_POWER(t, n->name, "D3hot", SETTLE_MS);
}

/* Unbound, the device is in D0 and runtime PM is as the PCI core had it. */
static void test_unbind_d0(struct vt *t, void *arg)
{
	struct nic *n = arg;
	char st[32];

	need_nic(t, n);
	CHECK_POWER(t, n->name, "D3hot", SETTLE_MS);
	VT_CHECKF(t, vt_unbind(n->name) == 0, "unbind %s: %s", n->name,
		  strerror(errno));
	n->present = 0;
	dev_attr(t, n->name, "power_state", st, sizeof(st));
	VT_CHECKF(t, !strcmp(st, "D0"), "unbound device in %s", st);
	dev_attr(t, n->name, "power/control", st, sizeof(st));
	VT_CHECKF(t, !strcmp(st, "on"), "power/control %s after unbind", st);
}

int main(void)
{
	struct vt t = { .prog = "t-device-power" };
	struct nic n;

	memset(&n, 0, sizeof(n));
	n.present = vt_find_device(E1000E_VENDOR, E1000E_DEVICE, NULL, 0,
				   n.name) == 0;
	if (n.present && vt_bind_vfio(n.name) < 0) {
		printf("t-device-power: cannot bind %s to vfio: %s\n", n.name,
		       strerror(errno));
		n.present = -1;
	}

	VT_RUN(&t, test_idle_d3hot, &n);
	VT_RUN(&t, test_open_d0, &n);
	VT_RUN(&t, test_sysfs_config_idle, &n);
	VT_RUN(&t, test_disable_idle_d3, &n);
	VT_RUN(&t, test_unbind_d0, &n);

	vt_write_file(PARAM_IDLE_D3, "N");
	if (n.present > 0)
		vt_unbind(n.name);
	return vt_done(&t);
}
