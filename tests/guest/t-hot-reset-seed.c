// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-hot-reset-seed: bus and slot reset through the seed ABI's extension
 * (VFIO_DEVICE_GET_PCI_HOT_RESET_INFO and VFIO_DEVICE_PCI_HOT_RESET of
 * src/include/uapi/vfio.h, numbers 115 and 116), with /dev/vfio/pci:N
 * group fds; t-hot-reset has the same cases for today's ABI.  edu2 sits
 * alone behind the root port rp0; edu0 is on the root bus.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/vfio.h"

#include "vt.h"
#include "vtlib.h"

#define IOVA		0x200000ULL	/* edu masks DMA addresses to 28 bits */
#define MAX_DEVS	8

struct info_buf {
	struct vfio_pci_hot_reset_info hdr;
	struct vfio_pci_dependent_device devs[MAX_DEVS];
};

struct reset_buf {
	struct vfio_pci_hot_reset hdr;
	int32_t fds[4];
};

static void need_edu2(struct vt *t)
{
	if (access("/sys/bus/pci/devices/" VT_EDU2, F_OK))
		vt_skip(t, "no edu2 at " VT_EDU2);
}

static void edu2_open(struct vt *t, struct vt_dev *d, struct vt_edu *e)
{
	need_edu2(t);
	VT_CHECKF(t, vt_open_dev(d, VT_EDU2) == 0, "open edu2: %s",
		  strerror(errno));
	VT_CHECKF(t, vt_edu_init(e, d->device_fd) == 0, "edu2: %s",
		  strerror(errno));
}

static int hot_reset(int device_fd, uint32_t count, const int32_t *fds)
{
	struct reset_buf r;

	memset(&r, 0, sizeof(r));
	r.hdr.argsz = sizeof(r.hdr) + count * sizeof(int32_t);
	r.hdr.count = count;
	memcpy(r.fds, fds, count * sizeof(int32_t));
	return ioctl(device_fd, VFIO_DEVICE_PCI_HOT_RESET, &r);
}

/* The device answers: ID, the liveness register, n!, and a DMA. */
static void edu_works(struct vt *t, struct vt_dev *d, struct vt_edu *e)
{
	uint32_t v = 0;
	uint8_t *buf;
	int i;

	VT_OK(t, vt_enable_master(d->device_fd));
	VT_CHECKF(t, vt_edu_read(e, VT_EDU_ID, &v) == 0 &&
		  v == VT_EDU_ID_VALUE, "ID 0x%08x: %s", v, strerror(errno));
	VT_OK(t, vt_edu_write(e, VT_EDU_LIVE, 0x12345678));
	VT_CHECKF(t, vt_edu_read(e, VT_EDU_LIVE, &v) == 0 &&
		  v == ~0x12345678U, "liveness register 0x%08x", v);
	VT_OK(t, vt_edu_write(e, VT_EDU_FACT, 6));
	for (i = 0; i < 1000; i++) {
		VT_OK(t, vt_edu_read(e, VT_EDU_STATUS, &v));
		if (!(v & VT_EDU_STATUS_BUSY))
			break;
		usleep(1000);
	}
	VT_CHECKF(t, vt_edu_read(e, VT_EDU_FACT, &v) == 0 && v == 720,
		  "6! = %u", v);

	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(buf, 0x5a, 64);
	VT_OK(t, vt_map(d->iommu_fd, buf, IOVA, PG, 0));
	VT_CHECKF(t, vt_edu_dma(e, 0, IOVA, 64) == 0, "DMA in: %s",
		  strerror(errno));
	memset(buf, 0, 64);
	VT_CHECKF(t, vt_edu_dma(e, 1, IOVA, 64) == 0, "DMA out: %s",
		  strerror(errno));
	VT_CHECKF(t, buf[0] == 0x5a && buf[63] == 0x5a,
		  "DMA round trip read 0x%02x 0x%02x", buf[0], buf[63]);
	VT_OK(t, vt_unmap(d->iommu_fd, IOVA, PG));
	munmap(buf, PG);
}

/*
 * Proof that a reset reached edu2's function: QEMU's PCI reset of a
 * device lowers its INTx, so the pending INTx status bit goes, while the
 * edu model (which has no reset of its own) still holds its interrupt
 * status.  Linux restores the config space after, but never the status
 * register.  INTx disable (set behind vfio's back) keeps the line quiet.
 */
static void edu_pending_intx(struct vt *t, struct vt_edu *e)
{
	uint16_t cmd = vt_real_cfg(t, VT_EDU2, VT_PCI_COMMAND, 2);

	vt_real_cfg_wr(t, VT_EDU2, VT_PCI_COMMAND, 2,
		       cmd | VT_PCI_COMMAND_INTX_OFF);
	VT_OK(t, vt_edu_write(e, VT_EDU_IRQ_RAISE, 1));
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU2, VT_PCI_STATUS, 2) &
		  VT_PCI_STATUS_INTX, "edu2 shows no pending INTx");
}

static void edu_reset_seen(struct vt *t, struct vt_edu *e)
{
	uint32_t v = 0;

	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU2, VT_PCI_STATUS, 2) &
		       VT_PCI_STATUS_INTX),
		  "INTx still pending: the reset did not reach edu2");
	VT_CHECKF(t, vt_edu_read(e, VT_EDU_IRQ_STATUS, &v) == 0 && v == 1,
		  "edu's interrupt status 0x%x, want 1 kept", v);
	VT_OK(t, vt_edu_write(e, VT_EDU_IRQ_ACK, v));
}

static void test_info(struct vt *t, void *arg)
{
	struct info_buf b;
	struct vt_dev d;
	struct vt_edu e;
	int group;

	(void)arg;
	edu2_open(t, &d, &e);
	group = VT_OK(t, vt_group_id(VT_EDU2));
	memset(&b, 0xff, sizeof(b));
	b.hdr.argsz = sizeof(b);
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, &b));
	VT_CHECKF(t, b.hdr.flags == 0, "flags 0x%x", b.hdr.flags);
	VT_CHECKF(t, b.hdr.count == 1, "count %u, want edu2 alone",
		  b.hdr.count);
	VT_CHECKF(t, b.devs[0].group_id == (uint32_t)group &&
		  b.devs[0].segment == 0 && b.devs[0].bus == 1 &&
		  b.devs[0].devfn == 0,
		  "device: group %u %04x:%02x:%02x.%u, want group %d 0000:01:00.0",
		  b.devs[0].group_id, b.devs[0].segment, b.devs[0].bus,
		  b.devs[0].devfn >> 3, b.devs[0].devfn & 7, group);
	/* Nothing written past the one device. */
	VT_CHECKF(t, b.devs[1].group_id == 0xffffffff, "wrote past count");
	vt_close_dev(&d);
}

static void test_info_enospc(struct vt *t, void *arg)
{
	struct info_buf b;
	struct vt_dev d;
	struct vt_edu e;

	(void)arg;
	edu2_open(t, &d, &e);
	memset(&b, 0xff, sizeof(b));
	b.hdr.argsz = sizeof(b.hdr);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			  &b), ENOSPC);
	VT_CHECKF(t, b.hdr.count == 1, "ENOSPC with count %u, want 1",
		  b.hdr.count);
	VT_CHECKF(t, b.devs[0].group_id == 0xffffffff,
		  "a device written on ENOSPC");
	/* One byte short of the device still is. */
	b.hdr.argsz = sizeof(b.hdr) + sizeof(b.devs[0]) - 1;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			  &b), ENOSPC);
	b.hdr.argsz = sizeof(b.hdr) + sizeof(b.devs[0]);
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, &b));
	b.hdr.argsz = sizeof(b.hdr) - 1;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			  &b), EINVAL);
	vt_close_dev(&d);
}

/* edu0 on the root bus: no bridge to reset it through. */
static void test_root_bus(struct vt *t, void *arg)
{
	struct info_buf b;
	struct vt_dev d;
	int32_t fd;

	(void)arg;
	VT_CHECKF(t, vt_open_dev(&d, VT_EDU0) == 0, "open edu0: %s",
		  strerror(errno));
	memset(&b, 0, sizeof(b));
	b.hdr.argsz = sizeof(b);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			  &b), ENODEV);
	fd = d.group_fd;
	VT_ERRNO(t, hot_reset(d.device_fd, 1, &fd), ENODEV);
	vt_close_dev(&d);
}

static void test_reset(struct vt *t, void *arg)
{
	struct vt_dev d;
	struct timespec t0, t1;
	struct vt_edu e;
	uint32_t bar0;
	int32_t fd;
	long ms;
	int i;

	(void)arg;
	edu2_open(t, &d, &e);
	edu_works(t, &d, &e);
	bar0 = vt_real_cfg(t, VT_EDU2, VT_PCI_BAR0, 4);
	fd = d.group_fd;
	for (i = 0; i < 3; i++) {
		edu_pending_intx(t, &e);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		VT_CHECKF(t, hot_reset(d.device_fd, 1, &fd) == 0,
			  "hot reset %d: %s", i, strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 +
		     (t1.tv_nsec - t0.tv_nsec) / 1000000;
		printf("# hot reset %d of edu2: %ld ms\n", i, ms);
		/* The config space is back: BAR and decode. */
		VT_CHECKF(t, vt_real_cfg(t, VT_EDU2, VT_PCI_BAR0, 4) == bar0,
			  "BAR0 lost");
		VT_CHECKF(t, vt_real_cfg(t, VT_EDU2, VT_PCI_COMMAND, 2) &
			  VT_PCI_COMMAND_MEMORY, "memory decode off after");
		edu_reset_seen(t, &e);
		edu_works(t, &d, &e);
	}
	vt_close_dev(&d);
}

/* Every refusal leaves no reference behind: the groups reopen after. */
static void test_refused(struct vt *t, void *arg)
{
	struct vt_dev d, other;
	struct reset_buf r;
	struct vt_edu e;
	int32_t fds[2];
	int efd, g0;

	(void)arg;
	edu2_open(t, &d, &e);
	VT_CHECKF(t, vt_open_dev(&other, VT_EDU0) == 0, "open edu0: %s",
		  strerror(errno));
	g0 = other.group;

	VT_ERRNO(t, hot_reset(d.device_fd, 0, NULL), EINVAL);
	/* Not edu2's group: the reset needs its group's fd. */
	fds[0] = other.group_fd;
	VT_ERRNO(t, hot_reset(d.device_fd, 1, fds), EINVAL);
	/* Not a group at all. */
	efd = VT_OK(t, eventfd(0, EFD_CLOEXEC));
	fds[0] = efd;
	VT_ERRNO(t, hot_reset(d.device_fd, 1, fds), EINVAL);
	fds[0] = d.iommu_fd;
	VT_ERRNO(t, hot_reset(d.device_fd, 1, fds), EINVAL);
	fds[0] = -1;
	VT_ERRNO(t, hot_reset(d.device_fd, 1, fds), EBADF);
	/* Right one, plus a bad one; and more fds than devices. */
	fds[0] = d.group_fd;
	fds[1] = efd;
	VT_ERRNO(t, hot_reset(d.device_fd, 2, fds), EINVAL);
	fds[1] = d.group_fd;
	VT_ERRNO(t, hot_reset(d.device_fd, 2, fds), EINVAL);
	/* flags, and an argsz that leaves the fd out */
	memset(&r, 0, sizeof(r));
	r.hdr.argsz = sizeof(r.hdr) + sizeof(int32_t);
	r.hdr.flags = 1;
	r.hdr.count = 1;
	r.fds[0] = d.group_fd;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_PCI_HOT_RESET, &r), EINVAL);
	r.hdr.flags = 0;
	r.hdr.argsz = sizeof(r.hdr);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_PCI_HOT_RESET, &r), EINVAL);
	r.hdr.argsz = sizeof(r.hdr) - 1;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_PCI_HOT_RESET, &r), EINVAL);

	/* Still fine with its own group, and nothing was kept. */
	fds[0] = d.group_fd;
	VT_OK(t, hot_reset(d.device_fd, 1, fds));
	vt_close_dev(&other);
	close(efd);
	efd = vt_open_group(g0, O_RDWR);
	VT_CHECKF(t, efd >= 0, "edu0's group does not reopen: %s",
		  strerror(errno));
	close(efd);
	vt_close_dev(&d);
	efd = vt_open_group_of(VT_EDU2);
	VT_CHECKF(t, efd >= 0, "edu2's group does not reopen: %s",
		  strerror(errno));
	close(efd);
}

struct reader {
	/* Device memory: every read must reach it, as vtlib's vt_held. */
	volatile uint32_t *bar;
	int stop;		/* __atomic */
	unsigned long reads, bad;
	uint32_t last_bad;
};

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	uint32_t v;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		v = r->bar[VT_EDU_ID / 4];
		r->reads++;
		if (v != VT_EDU_ID_VALUE) {
			r->bad++;
			r->last_bad = v;
		}
	}
	return NULL;
}

/*
 * A reset while BAR0 is mapped and read all the time: the mapping is
 * zapped for the reset and faults back in after, and no read ever meets
 * the device with decode off (it would read all ones).
 */
static void test_reset_mmapped(struct vt *t, void *arg)
{
	struct reader r = { 0 };
	struct vt_dev d;
	struct vt_edu e;
	uint64_t size;
	pthread_t th;
	int32_t fd;
	int i, ret = 0;

	(void)arg;
	edu2_open(t, &d, &e);
	r.bar = vt_mmap_region(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
				&size);
	VT_CHECKF(t, r.bar, "mmap BAR0: %s", strerror(errno));
	VT_CHECKF(t, r.bar[VT_EDU_ID / 4] == VT_EDU_ID_VALUE, "mapped ID");
	fd = d.group_fd;
	VT_CHECKF(t, pthread_create(&th, NULL, read_loop, &r) == 0,
		  "pthread_create");
	for (i = 0; i < 5 && !ret; i++) {
		ret = hot_reset(d.device_fd, 1, &fd);
		usleep(2000);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	VT_CHECKF(t, !ret, "hot reset %d: %s", i, strerror(errno));
	VT_CHECKF(t, r.reads > 0, "the reader never read");
	VT_CHECKF(t, !r.bad, "%lu of %lu mapped reads were 0x%08x", r.bad,
		  r.reads, r.last_bad);
	/* Faults back in after the last one, writes too. */
	r.bar[VT_EDU_LIVE / 4] = 0x0f0f0f0f;
	VT_CHECKF(t, r.bar[VT_EDU_LIVE / 4] == ~0x0f0f0f0fU,
		  "mapped liveness register after reset");
	printf("# %lu mapped reads during 5 hot resets\n", r.reads);
	munmap((void *)r.bar, size);
	vt_close_dev(&d);
}

int main(void)
{
	struct vt t = { .prog = "t-hot-reset-seed" };

	VT_RUN_CLOSE(&t, test_info);
	VT_RUN_CLOSE(&t, test_info_enospc);
	VT_RUN_CLOSE(&t, test_root_bus);
	VT_RUN_CLOSE(&t, test_reset);
	VT_RUN_CLOSE(&t, test_refused);
	VT_RUN_CLOSE(&t, test_reset_mmapped);
	return vt_done(&t);
}
