// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-zz-hotremove: QEMU removes edu2 (device_del through the monitor)
 * while we hold its group, IOMMU and device fds, a DMA map and an mmap
 * of BAR0.  The core must ask us (REQ eventfd), wait release_timeout_ms,
 * revoke, and let the removal finish: the device leaves sysfs in bounded
 * time, the device fd and the group fd answer -ENODEV, the old mmap
 * raises SIGBUS, closing everything works and nothing stays pinned.  Then the device is
 * plugged back and must come up on vfio again.  It runs last ("zz")
 * because it changes the topology every other program relies on.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define TIMEOUT_PARAM	"/sys/module/vfio/parameters/release_timeout_ms"
#define TEST_TIMEOUT_MS	2000	/* release_timeout_ms while we run */
#define PCIEHP_DELAY_MS	5000	/* pciehp's attention button delay */
#define SLACK_MS	10000	/* TCG and the hotplug path are slow */
#define READD_WAIT_MS	20000

struct hot {
	char name[VT_DEV_NAME_LEN];	/* edu2's PCI address */
	char path[64];			/* its sysfs directory */
	char old_timeout[32];
	int timeout_set;
};

static long pinned(void)
{
	return vt_pinned_now();
}

/* edu2 is the edu that is not edu0 or edu1 (behind the root port). */
static void find_edu2(struct vt *t, struct hot *h)
{
	char name[VT_DEV_NAME_LEN];
	int i;

	h->name[0] = '\0';
	for (i = 0; vt_find_device(VT_EDU_VENDOR, VT_EDU_DEVICE, NULL, i,
				   name) == 0; i++)
		if (strcmp(name, VT_EDU0) && strcmp(name, VT_EDU1))
			memcpy(h->name, name, sizeof(h->name));
	if (!h->name[0])
		vt_skip(t, "no third edu device (edu2) in this VM");
	snprintf(h->path, sizeof(h->path), "/sys/bus/pci/devices/%s",
		 h->name);
}

static void test_hot_remove(struct vt *t, void *arg)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };
	struct vfio_group_info ginfo = { .argsz = sizeof(ginfo) };
	struct hot *h = arg;
	uint64_t start, v = 0, gone_ms;
	struct vt_held held;
	struct vt_dev *d = &held.d;
	uint8_t *buf;
	long pins;
	uint32_t id;
	char val[32];

	find_edu2(t, h);
	pins = pinned();
	VT_CHECKF(t, vt_hold_dev(&held, h->name, 0) == 0, "hold %s (REQ eventfd, "
		  "BAR0 mmap of an edu): %s", h->name, strerror(errno));
	buf = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(buf, 0x42, 4 * PG);
	VT_OK(t, vt_map(d->iommu_fd, buf, 0x100000, 4 * PG, 0));

	if (vt_read_file(TIMEOUT_PARAM, h->old_timeout,
			 sizeof(h->old_timeout)) >= 0) {
		snprintf(val, sizeof(val), "%d", TEST_TIMEOUT_MS);
		h->timeout_set = vt_write_file(TIMEOUT_PARAM, val) == 0;
	}
	VT_CHECKF(t, h->timeout_set, "cannot set %s: %s", TIMEOUT_PARAM,
		  strerror(errno));

	start = vt_now_ms();
	vt_host("device_del edu2");
	VT_CHECKF(t, vt_wait_eventfd(held.req, PCIEHP_DELAY_MS + SLACK_MS,
				     &v) == 0, "no release request %d ms after device_del: %s",
		  PCIEHP_DELAY_MS + SLACK_MS, strerror(errno));
	printf("# release request %llu ms after device_del\n",
	       (unsigned long long)(vt_now_ms() - start));
	/* We keep everything open: the core has to revoke. */
	VT_CHECKF(t, vt_wait_path(h->path, 0, TEST_TIMEOUT_MS + SLACK_MS) == 0,
		  "%s still there %d ms after the request", h->path,
		  TEST_TIMEOUT_MS + SLACK_MS);
	gone_ms = vt_now_ms() - start;
	printf("# %s gone %llu ms after device_del\n", h->name,
	       (unsigned long long)gone_ms);
	VT_CHECKF(t, gone_ms >= TEST_TIMEOUT_MS - 100,
		  "removed after %llu ms: the core did not give the user its "
		  "%d ms", (unsigned long long)gone_ms, TEST_TIMEOUT_MS);

	VT_ERRNO(t, ioctl(d->device_fd, VFIO_DEVICE_GET_INFO, &info), ENODEV);
	VT_ERRNO(t, ioctl(d->device_fd, VFIO_DEVICE_RESET), ENODEV);
	VT_ERRNO(t, pread(d->device_fd, &id, 4, 0), ENODEV);
	/*
	 * The group went with its last device: it was detached from the
	 * IOMMU object before the device left its IOMMU group, and the fd
	 * we still hold gives nothing more.
	 */
	VT_ERRNO(t, ioctl(d->group_fd, VFIO_GROUP_GET_INFO, &ginfo), ENODEV);
	VT_ERRNO(t, ioctl(d->group_fd, VFIO_GROUP_GET_IOMMU_FD), ENODEV);
	VT_ERRNO(t, ioctl(d->group_fd, VFIO_GROUP_GET_DEVICE_FD, h->name),
		 ENODEV);
	VT_CHECKF(t, vt_read_faults(held.bar0), "the BAR0 mmap of a removed "
		  "device still reads");
	VT_OK(t, munmap((void *)held.bar0, held.bar0_size));
	held.bar0 = NULL;
	VT_OK(t, close(d->device_fd));
	d->device_fd = -1;
	VT_OK(t, vt_unmap(d->iommu_fd, 0x100000, 4 * PG));
	VT_OK(t, close(d->iommu_fd));
	d->iommu_fd = -1;
	VT_OK(t, close(d->group_fd));
	d->group_fd = -1;
	close(held.req);
	held.req = -1;
	VT_CHECKF(t, pinned() == pins, "%ld pages pinned after closing all",
		  pinned() - pins);
}

/* Plugged back, the device comes up on vfio (new_id) with its node. */
static void test_hot_readd(struct vt *t, void *arg)
{
	struct hot *h = arg;
	char drv_path[PATH_MAX], drv[64], node[64];
	uint32_t id = 0;
	struct vt_dev d;
	uint64_t end, now;

	if (!h->name[0])
		vt_skip(t, "no edu2 to put back");
	if (access(h->path, F_OK) == 0)
		vt_skip(t, "%s was never removed", h->name);
	end = vt_now_ms() + READD_WAIT_MS;
	VT_CHECKF(t, vt_plug_edu2(h->path, READD_WAIT_MS) == 0,
		  "%s not back after %d ms", h->name, READD_WAIT_MS);
	now = vt_now_ms();
	snprintf(drv_path, sizeof(drv_path), "%s/driver", h->path);
	VT_CHECKF(t, vt_wait_path(drv_path, 1, now < end ?
				  (int)(end - now) : 0) == 0,
		  "%s not back with a driver after %d ms", h->name,
		  READD_WAIT_MS);
	VT_OK(t, vt_device_driver(h->name, drv, sizeof(drv)));
	VT_CHECKF(t, strcmp(drv, "vfio") == 0, "re-added %s is on '%s'", h->name,
		  drv);
	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", vt_group_id(h->name));
	VT_CHECKF(t, vt_wait_path(node, 1, 3000) == 0, "%s missing", node);
	VT_CHECKF(t, vt_open_dev(&d, h->name) == 0, "open %s again: %s",
		  h->name, strerror(errno));
	{
		struct vfio_region_info reg;

		VT_OK(t, vt_region_info(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
					&reg));
		VT_CHECKF(t, pread(d.device_fd, &id, 4, reg.offset) == 4,
			  "pread: %s", strerror(errno));
	}
	VT_CHECKF(t, (id & 0xffff) == 0x00ed, "re-added edu2 id 0x%08x", id);
	vt_close_dev(&d);
}

/*
 * The group's domain given back while the device is half removed: Linux
 * 6.1 frees the device's IOMMU data before it leaves its group, and a
 * detach in between oopsed in intel_iommu_attach_device().  Close the
 * IOMMU fd the moment the device leaves sysfs, a few times.
 */
static void test_close_while_removed(struct vt *t, void *arg)
{
	struct hot *h = arg;
	char drv_path[PATH_MAX], node[64];
	int round, group, iommu;
	uint64_t end;
	uint8_t *buf;

	if (!h->name[0] || access(h->path, F_OK) != 0)
		vt_skip(t, "edu2 is not there");
	snprintf(drv_path, sizeof(drv_path), "%s/driver", h->path);
	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(buf, 0x42, PG);
	for (round = 0; round < 3; round++) {
		snprintf(node, sizeof(node), "/dev/vfio/pci:%d",
			 vt_group_id(h->name));
		VT_CHECKF(t, vt_wait_path(node, 1, 3000) == 0, "%s missing",
			  node);
		group = VT_OK(t, vt_open_group_of(h->name));
		iommu = VT_OK(t, vt_iommu_fd(group));
		VT_OK(t, vt_map(iommu, buf, 0x100000, PG, 0));
		vt_host("device_del edu2");
		/* Spin, not poll: the window is well under a millisecond. */
		end = vt_now_ms() + PCIEHP_DELAY_MS + SLACK_MS;
		while (access(h->path, F_OK) == 0 && vt_now_ms() < end)
			;
		VT_CHECKF(t, access(h->path, F_OK) != 0,
			  "round %d: %s not removed", round, h->name);
		VT_OK(t, close(iommu));
		VT_OK(t, close(group));
		VT_CHECKF(t, vt_plug_edu2(h->path, READD_WAIT_MS) == 0 &&
			  vt_wait_path(drv_path, 1, READD_WAIT_MS) == 0,
			  "round %d: %s not back with a driver", round,
			  h->name);
	}
	munmap(buf, PG);
}

struct race {
	int group;
	int stop;		/* __atomic */
	long opened, refused;	/* GET_IOMMU_FD results */
	int bad_errno;		/* an errno other than ENODEV/EBUSY */
};

static void *iommu_fd_loop(void *arg)
{
	struct race *r = arg;
	int fd;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		fd = ioctl(r->group, VFIO_GROUP_GET_IOMMU_FD);
		if (fd >= 0) {
			__atomic_add_fetch(&r->opened, 1, __ATOMIC_RELAXED);
			close(fd);
		} else if (errno == ENODEV || errno == EBUSY) {
			__atomic_add_fetch(&r->refused, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_store_n(&r->bad_errno, errno,
					 __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/*
 * Opening the IOMMU object takes one of the group's devices for the
 * domain; with only the group fd open, edu2 is unbound at once and then
 * deleted, and an open that took it from the IOMMU group sleeps on the
 * deletion (vfio waits for it before attaching) and must not use it
 * afterwards: it is freed by then.  Two threads ask for IOMMU fds all
 * through the removal.  A use after free shows only under KASAN (the
 * debug kernel stage); here every call must end in an fd, ENODEV or
 * EBUSY, and nothing may hang.
 */
static void test_iommu_fd_during_remove(struct vt *t, void *arg)
{
	struct hot *h = arg;
	char drv_path[PATH_MAX], node[64];
	struct race r;
	pthread_t th[2];
	uint64_t end;
	int round, i;

	if (!h->name[0] || access(h->path, F_OK) != 0)
		vt_skip(t, "edu2 is not there");
	snprintf(drv_path, sizeof(drv_path), "%s/driver", h->path);
	for (round = 0; round < 3; round++) {
		memset(&r, 0, sizeof(r));
		snprintf(node, sizeof(node), "/dev/vfio/pci:%d",
			 vt_group_id(h->name));
		VT_CHECKF(t, vt_wait_path(node, 1, 3000) == 0, "%s missing",
			  node);
		r.group = VT_OK(t, vt_open_group_of(h->name));
		for (i = 0; i < 2; i++)
			VT_CHECKF(t, pthread_create(&th[i], NULL,
						    iommu_fd_loop, &r) == 0,
				  "pthread_create failed");
		vt_host("device_del edu2");
		end = vt_now_ms() + PCIEHP_DELAY_MS + SLACK_MS;
		while (access(h->path, F_OK) == 0 && vt_now_ms() < end)
			usleep(1000);
		usleep(100000);
		__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
		for (i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		printf("# round %d: %ld IOMMU fds opened, %ld refused\n",
		       round, r.opened, r.refused);
		VT_CHECKF(t, access(h->path, F_OK) != 0,
			  "round %d: %s not removed", round, h->name);
		VT_CHECKF(t, !r.bad_errno, "round %d: GET_IOMMU_FD: %s",
			  round, strerror(r.bad_errno));
		VT_CHECKF(t, r.refused > 0, "round %d: GET_IOMMU_FD never "
			  "refused on a group whose device is gone", round);
		VT_OK(t, close(r.group));
		VT_CHECKF(t, vt_plug_edu2(h->path, READD_WAIT_MS) == 0 &&
			  vt_wait_path(drv_path, 1, READD_WAIT_MS) == 0,
			  "round %d: %s not back with a driver", round,
			  h->name);
	}
}

int main(void)
{
	struct vt t = { .prog = "t-zz-hotremove" };
	struct hot h;

	memset(&h, 0, sizeof(h));
	VT_RUN_CLOSE_ARG(&t, test_hot_remove, &h);
	if (h.timeout_set && vt_write_file(TIMEOUT_PARAM, h.old_timeout))
		printf("# restore %s: %s\n", TIMEOUT_PARAM, strerror(errno));
	VT_RUN_CLOSE_ARG(&t, test_hot_readd, &h);
	VT_RUN_CLOSE_ARG(&t, test_close_while_removed, &h);
	VT_RUN_CLOSE_ARG(&t, test_iommu_fd_during_remove, &h);
	return vt_done(&t);
}
