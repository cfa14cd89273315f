// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-module: vfio_pci.ko must stay loaded while a device fd or mmap is
 * open.  vfio.ko must stay loaded while a group fd is open, also once
 * vfio_pci.ko (which depends on it) is gone and no device is bound: the
 * fd still answers (-ENODEV: the group went with its last device).  Afterwards vfio_pci is loaded again and the devices
 * bound to it the way /init does (new_id), so that later programs find
 * what they expect.
 *
 * test_unload_between_del_and_removed: a device deletion that vfio_pci
 * saw begin (BUS_NOTIFY_DEL_DEVICE) but never saw end, because vfio_pci
 * was unloaded before BUS_NOTIFY_REMOVED_DEVICE, must not leave later
 * IOMMU attaches asleep.  Nothing user space does runs between the two,
 * so the test-only module tests/kmod/vfio_test_hold.ko holds the deletion
 * there; without it (not built for this kernel) the case skips.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define BIND_WAIT_MS	10000

static const char *const devs[] = { VT_EDU0, VT_EDU1, VT_EDU2, VT_TESTDEV0 };

static void test_unload_with_group_fd(struct vt *t, void *arg)
{
	uint32_t flags = 0;
	int group;

	(void)arg;
	group = vt_open_group_of(VT_EDU0);
	VT_CHECKF(t, group >= 0, "open the group of %s: %s", VT_EDU0,
		  strerror(errno));
	VT_CHECKF(t, system("rmmod vfio_pci") == 0 &&
		  !vt_module_loaded("vfio_pci"), "rmmod vfio_pci failed");
	VT_CHECKF(t, system("rmmod vfio 2>/dev/null") != 0 &&
		  vt_module_loaded("vfio"), "rmmod vfio succeeded with a group "
		  "fd open");
	/* The group went with its last device: a clean error, no crash. */
	VT_ERRNO(t, vt_group_flags(group, &flags), ENODEV);
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD), ENODEV);
	VT_OK(t, close(group));
}

/*
 * A device fd reaches vfio_pci's ops and ioctl tables, and so does an
 * mmap once its fd is closed: either keeps vfio_pci loaded (rmmod answers
 * "in use" at once, as upstream's VFIO does), and the device goes on
 * working.  Before, rmmod revoked the device after the release timeout
 * and unloaded, and the next ioctl ran in freed module memory.
 */
static void test_unload_with_device_fd(struct vt *t, void *arg)
{
	struct vfio_region_info info = { .argsz = sizeof(info) };
	volatile uint32_t *bar;
	struct vt_dev d;
	uint64_t size;

	(void)arg;
	VT_OK(t, vt_open_dev(&d, VT_EDU0));
	bar = vt_mmap_region(d.device_fd, 0, &size);
	VT_CHECKF(t, bar, "mmap BAR0 of %s: %s", VT_EDU0, strerror(errno));
	VT_CHECKF(t, system("rmmod vfio_pci 2>/dev/null") != 0 &&
		  vt_module_loaded("vfio_pci"),
		  "rmmod vfio_pci succeeded with a device fd open");
	VT_OK(t, vt_region_info(d.device_fd, 0, &info));
	VT_CHECKF(t, vt_bar0_rd(t, d.device_fd, VT_EDU_ID) == VT_EDU_ID_VALUE,
		  "BAR0 pread after the refused rmmod");

	/* The mmap alone: its vma holds the device fd's file. */
	close(d.device_fd);
	d.device_fd = -1;
	VT_CHECKF(t, system("rmmod vfio_pci 2>/dev/null") != 0 &&
		  vt_module_loaded("vfio_pci"),
		  "rmmod vfio_pci succeeded with a device mmap left");
	VT_CHECKF(t, bar[VT_EDU_ID / 4] == VT_EDU_ID_VALUE,
		  "BAR0 mmap read after the refused rmmod");
	VT_OK(t, munmap((void *)bar, size));
	vt_close_dev(&d);
}

/* vfio_pci back, every test device on it, as /init left them. */
static void test_reload(struct vt *t, void *arg)
{
	char path[96];
	unsigned int i;

	(void)arg;
	VT_CHECKF(t, vt_vfio_pci_reload() == 0, "vfio_pci back: %s",
		  strerror(errno));
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

/*
 * The kernel's vfio-pci options that device assignment guides set:
 * nointxmask works as the kernel's (INTx masked at the interrupt
 * controller, never through the device's INTx disable bit), as do
 * disable_idle_d3 (t-device-power), disable_vga (t-container-vga) and
 * enable_sriov (PFs bound here create VFs: t-device-sriov, which says so
 * in the log), and the module loads.  Before, each was "unknown
 * parameter ... ignored".
 */
#define GUIDE_OPTS	"nointxmask=1 disable_vga=1 disable_idle_d3=1 enable_sriov=1"
#define PARAM_DIR	"/sys/module/vfio_pci/parameters/"

static int param_is(const char *name, char want)
{
	char path[96], buf[8] = "";

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return vt_read_file(path, buf, sizeof(buf)) > 0 && buf[0] == want;
}

static void intx_without_mask_bit(struct vt *t)
{
	struct vt_dev d;
	int32_t efd;

	VT_OK(t, vt_open_dev(&d, VT_EDU1));
	efd = VT_OK(t, eventfd(0, EFD_CLOEXEC));
	VT_OK(t, vt_set_irq_eventfds(d.device_fd, VFIO_PCI_INTX_IRQ_INDEX, 1,
				     &efd));
	vt_set_cmd_bits(t, d.device_fd, VT_PCI_COMMAND_MEMORY, 0);
	vt_bar0_wr(t, d.device_fd, VT_EDU_IRQ_RAISE, 1);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no INTx with nointxmask");
	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU1, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_INTX_OFF),
		  "nointxmask=1, yet the device's INTx disable bit masks it");
	/* Masked at the controller: the next one waits for the unmask. */
	vt_bar0_wr(t, d.device_fd, VT_EDU_IRQ_ACK, 1);
	vt_bar0_wr(t, d.device_fd, VT_EDU_IRQ_RAISE, 2);
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS), "INTx while masked");
	vt_close_dev(&d);
	close(efd);
}

static void test_guide_options(struct vt *t, void *arg)
{
	int loaded;

	(void)arg;
	VT_CHECKF(t, system("rmmod vfio_pci") == 0, "rmmod vfio_pci failed");
	loaded = vt_vfio_pci_load(GUIDE_OPTS) == 0;
	if (!loaded) {
		int err = errno;

		vt_vfio_pci_reload();
		vt_fail(t, __FILE__, __LINE__, "vfio_pci with %s: %s",
			GUIDE_OPTS, strerror(err));
	}
	VT_CHECKF(t, vt_wait_path("/sys/bus/pci/drivers/vfio/" VT_EDU1, 1,
				  BIND_WAIT_MS) == 0, "%s not back on vfio",
		  VT_EDU1);
	VT_CHECKF(t, param_is("nointxmask", 'Y') &&
		  param_is("disable_vga", 'Y') &&
		  param_is("disable_idle_d3", 'Y') &&
		  param_is("enable_sriov", 'Y'),
		  "parameters not as asked");
	VT_CHECKF(t, system("dmesg | grep -q 'enable_sriov=1: PFs bound to vfio take sriov_numvfs'") == 0,
		  "no message about enable_sriov");
	intx_without_mask_bit(t);
	VT_CHECKF(t, system("rmmod vfio_pci") == 0, "rmmod vfio_pci failed");
}

#define HOLD_DEV	VT_EDU1
#define HOLD_PARAMS	"/sys/module/vfio_test_hold/parameters/"
#define ATTACH_WAIT_MS	5000
/* vfio_test_hold's state parameter (tests/kmod/vfio_test_hold.c). */
enum { HOLD_IDLE, HOLD_HELD, HOLD_DELETED, HOLD_REMOVED, HOLD_ENDED_LOADED };
#define UNLOAD_WAIT_MS	20000

static int hold_state(void)
{
	char buf[16];

	if (vt_read_file(HOLD_PARAMS "state", buf, sizeof(buf)) < 0)
		return -1;
	return atoi(buf);
}

/* Wait up to ms for the state to be one of [lo, hi]; returns it. */
static int hold_wait_state(int lo, int hi, int ms)
{
	uint64_t end = vt_now_ms() + ms;
	int st;

	for (;;) {
		st = hold_state();
		if ((st >= lo && st <= hi) || vt_now_ms() >= end)
			return st;
		usleep(10000);
	}
}

/* sh -c cmd in a child; its pid, or -1. */
static pid_t spawn_sh(const char *cmd)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The exit status of child pid within ms; -1 while it still runs. */
static int reap_within(pid_t pid, int ms)
{
	uint64_t end = vt_now_ms() + ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
			       128 + WTERMSIG(status);
		if (r < 0 || vt_now_ms() >= end)
			return -1;
		usleep(10000);
	}
}

/* The attach itself, in a child: it may sleep for good. */
static int attach_child(void)
{
	int group, iommu;

	group = vt_open_group_of(HOLD_DEV);
	if (group < 0)
		_exit(2);
	iommu = vt_iommu_fd(group);
	_exit(iommu >= 0 ? 0 : 3);
}

/* edu1 back from its removal and on vfio, vfio_test_hold gone. */
static void hold_restore(struct vt *t)
{
	system("rmmod vfio_test_hold 2>/dev/null");
	vt_write_file("/sys/bus/pci/rescan", "1");
	test_reload(t, NULL);
}

static void test_unload_between_del_and_removed(struct vt *t, void *arg)
{
	char path[128], cmd[160];
	struct utsname u;
	pid_t rm, unload, attach;
	int st, rc;

	(void)arg;
	VT_OK(t, uname(&u));
	snprintf(path, sizeof(path), "/lib/modules/%s/updates/vfio_test_hold.ko",
		 u.release);
	if (access(path, F_OK))
		vt_skip(t, "no vfio_test_hold.ko for %s (tests/kmod not built for this kernel)",
			u.release);
	VT_CHECKF(t, system("modprobe vfio_test_hold dev=" HOLD_DEV) == 0,
		  "modprobe vfio_test_hold failed");

	/*
	 * vfio_pci counts the deletion in DEL; then the deletion waits,
	 * outside the bus notifier chain, until vfio_pci is unloaded.
	 */
	rm = spawn_sh("echo 1 > /sys/bus/pci/devices/" HOLD_DEV "/remove");
	VT_CHECKF(t, rm > 0, "fork: %s", strerror(errno));
	st = hold_wait_state(HOLD_HELD, HOLD_ENDED_LOADED, 10000);
	VT_CHECKF(t, st == HOLD_HELD, "removal of %s not held (state %d)",
		  HOLD_DEV, st);

	unload = spawn_sh("rmmod vfio_pci");
	VT_CHECKF(t, unload > 0, "fork: %s", strerror(errno));
	rc = reap_within(unload, UNLOAD_WAIT_MS);
	if (rc == -1) {
		vt_write_file(HOLD_PARAMS "release", "1");
		vt_fail(t, __FILE__, __LINE__,
			"rmmod vfio_pci still running after %d s while a device's deletion was under way",
			UNLOAD_WAIT_MS / 1000);
	}
	VT_CHECKF(t, rc == 0, "rmmod vfio_pci: status %d", rc);

	rc = reap_within(rm, 10000);
	VT_CHECKF(t, rc == 0, "removal of %s: status %d", HOLD_DEV, rc);
	st = hold_wait_state(HOLD_REMOVED, HOLD_ENDED_LOADED, 5000);
	hold_restore(t);
	VT_CHECKF(t, st == HOLD_REMOVED,
		  "held removal of %s ended in state %d, not after vfio_pci's unload",
		  HOLD_DEV, st);

	attach = fork();
	VT_CHECKF(t, attach >= 0, "fork: %s", strerror(errno));
	if (attach == 0)
		attach_child();
	rc = reap_within(attach, ATTACH_WAIT_MS);
	if (rc == -1) {
		/* Asleep uninterruptibly under vfio.lock: it stays. */
		kill(attach, SIGKILL);
		snprintf(cmd, sizeof(cmd), "cat /proc/%d/stack >/dev/kmsg", attach);
		system(cmd);
		vt_fail(t, __FILE__, __LINE__,
			"attach still asleep after %d s: a deletion begun before vfio_pci was unloaded was never ended",
			ATTACH_WAIT_MS / 1000);
	}
	VT_CHECKF(t, rc == 0, "GET_IOMMU_FD on the group of %s: status %d",
		  HOLD_DEV, rc);
}

int main(void)
{
	struct vt t = { .prog = "t-module" };

	VT_RUN_CLOSE(&t, test_unload_with_device_fd);
	VT_RUN_CLOSE(&t, test_unload_with_group_fd);
	VT_RUN_CLOSE(&t, test_reload);
	VT_RUN_CLOSE(&t, test_guide_options);
	VT_RUN_CLOSE(&t, test_reload);
	/* Last: on failure an attach sleeps for good under vfio.lock. */
	VT_RUN_CLOSE(&t, test_unload_between_del_and_removed);
	return vt_done(&t);
}
