// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-container-edu: a user program of today's VFIO ABI, built against the
 * distribution's own <linux/vfio.h>, driving QEMU's edu end to end the
 * way a real user does: container, group node, device fd; BAR0 through
 * read/write and mmap; a DMA round trip through an IOVA; MSI and INTx
 * (with mask/unmask) to eventfds; and the REQ interrupt asking the user
 * to let go when the host unbinds the device.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vt.h"
#include "vtcontainer.h"

#define IOVA		0x200000ULL	/* edu masks DMA addresses to 28 bits */
#define REQ_WAIT_MS	10000
#define UNBIND_WAIT_MS	10000

static void dev_open(struct vt *t, struct vtc_dev *d, const char *dev)
{
	VT_CHECKF(t, vtc_open_dev(d, dev, 0) == 0, "open %s through "
		  "/dev/vfio/vfio and its group node: %s", dev,
		  strerror(errno));
}

static void edu_open(struct vt *t, struct vtc_dev *d, struct vt_edu *e,
		     const char *dev)
{
	dev_open(t, d, dev);
	VT_CHECKF(t, vtc_edu_init(e, d->device_fd) == 0, "edu %s: %s", dev,
		  strerror(errno));
}

static uint32_t rd(struct vt *t, const struct vt_edu *e, uint32_t reg)
{
	uint32_t v = 0;

	VT_CHECKF(t, vt_edu_read(e, reg, &v) == 0, "read BAR0 0x%x: %s", reg,
		  strerror(errno));
	return v;
}

static void wr(struct vt *t, const struct vt_edu *e, uint32_t reg,
	       uint32_t v)
{
	VT_CHECKF(t, vt_edu_write(e, reg, v) == 0, "write BAR0 0x%x: %s", reg,
		  strerror(errno));
}

static int efd_new(struct vt *t)
{
	return VT_OK(t, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

/* Did efd fire within ms?  Its counter is read (reset) when it did. */
static void edu_ack(struct vt *t, const struct vt_edu *e)
{
	wr(t, e, VT_EDU_IRQ_ACK, rd(t, e, VT_EDU_IRQ_STATUS));
}

static void check_irq_info(struct vt *t, int fd, uint32_t index,
			   uint32_t count, uint32_t flags)
{
	struct vfio_irq_info info;

	VT_OK(t, vtc_irq_info(fd, index, &info));
	VT_CHECKF(t, info.count == count, "IRQ index %u: count %u, want %u",
		  index, info.count, count);
	VT_CHECKF(t, (info.flags & flags) == flags, "IRQ index %u: flags "
		  "0x%x, want 0x%x set", index, info.flags, flags);
}

/* ---- BAR0 ------------------------------------------------------------------ */

static void test_bar0(struct vt *t, void *arg)
{
	struct vfio_region_info r;
	volatile uint32_t *bar;
	struct vtc_dev d;
	struct vt_edu e;
	uint64_t size = 0;
	uint32_t id = 0;

	(void)arg;
	edu_open(t, &d, &e, VT_EDU0);
	VT_OK(t, vtc_region_info(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX, &r));
	VT_CHECKF(t, r.size == VT_EDU_BAR_SIZE, "BAR0 size 0x%llx",
		  (unsigned long long)r.size);
	VT_CHECKF(t, (r.flags & (VFIO_REGION_INFO_FLAG_READ |
				 VFIO_REGION_INFO_FLAG_WRITE |
				 VFIO_REGION_INFO_FLAG_MMAP)) ==
		  (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE |
		   VFIO_REGION_INFO_FLAG_MMAP), "BAR0 flags 0x%x", r.flags);

	/* read(2) at the region's offset */
	VT_CHECKF(t, pread(d.device_fd, &id, 4, r.offset + VT_EDU_ID) == 4,
		  "pread of the ID register: %s", strerror(errno));
	VT_CHECKF(t, id == VT_EDU_ID_VALUE, "ID register 0x%08x, want 0x%08x",
		  id,
		  VT_EDU_ID_VALUE);
	wr(t, &e, VT_EDU_LIVE, 0x12345678);
	VT_CHECKF(t, rd(t, &e, VT_EDU_LIVE) == ~0x12345678u,
		  "liveness register reads 0x%08x", rd(t, &e, VT_EDU_LIVE));

	/* mmap of the same */
	bar = vtc_mmap_region(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX, &size);
	VT_CHECKF(t, bar, "mmap BAR0: %s", strerror(errno));
	VT_CHECKF(t, bar[VT_EDU_ID / 4] == VT_EDU_ID_VALUE, "mmap'ed ID 0x%08x",
		  bar[VT_EDU_ID / 4]);
	bar[VT_EDU_LIVE / 4] = 0xa5a5f00f;
	VT_CHECKF(t, bar[VT_EDU_LIVE / 4] == ~0xa5a5f00fu,
		  "mmap'ed liveness register reads 0x%08x",
		  bar[VT_EDU_LIVE / 4]);
	/* factorial: the device computes, through the mapping */
	bar[VT_EDU_FACT / 4] = 5;
	{
		uint64_t end = vt_now_ms() + 2000;

		while ((bar[VT_EDU_STATUS / 4] & VT_EDU_STATUS_BUSY) &&
		       vt_now_ms() < end)
			usleep(1000);
	}
	VT_CHECKF(t, bar[VT_EDU_FACT / 4] == 120, "5! = %u",
		  bar[VT_EDU_FACT / 4]);
	munmap((void *)bar, size);
	vtc_close_dev(&d);
}

/* ---- DMA --------------------------------------------------------------------- */

static void test_dma_round_trip(struct vt *t, void *arg)
{
	const uint32_t len = 4000;
	struct vtc_dev d;
	struct vt_edu e;
	uint8_t *buf;
	uint32_t i;
	long diff;

	(void)arg;
	edu_open(t, &d, &e, VT_EDU0);
	buf = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	for (i = 0; i < PG; i++)
		buf[i] = (uint8_t)(i ^ (i >> 8) ^ 0x3c);
	memset(buf + PG, 0xee, PG);
	VT_OK(t, vtc_map(d.container_fd, buf, IOVA, 2 * PG, 0));

	/* RAM -> edu's buffer -> RAM at another IOVA */
	VT_CHECKF(t, vt_edu_dma(&e, 0, IOVA, len) == 0, "DMA from IOVA "
		  "0x%llx: %s", IOVA, strerror(errno));
	VT_CHECKF(t, vt_edu_dma(&e, 1, IOVA + PG, len) == 0, "DMA to IOVA "
		  "0x%llx: %s", IOVA + PG, strerror(errno));
	for (i = 0; i < len; i++)
		VT_CHECKF(t, buf[PG + i] == buf[i], "byte %u: 0x%02x, want "
			  "0x%02x", i, buf[PG + i], buf[i]);
	diff = vt_fill_diff(buf + PG + len, PG - len, 0xee);
	VT_CHECKF(t, diff < 0, "byte %ld past the transfer changed",
		  (long)len + diff);

	/* The device sees the user's later writes: the pages are shared. */
	memset(buf, 0x77, 64);
	VT_CHECKF(t, vt_edu_dma(&e, 0, IOVA, 64) == 0, "DMA: %s",
		  strerror(errno));
	VT_CHECKF(t, vt_edu_dma(&e, 1, IOVA + PG, 64) == 0, "DMA: %s",
		  strerror(errno));
	VT_CHECKF(t, vt_fill_diff(buf + PG, 64, 0x77) < 0,
		  "second transfer did not land");
	VT_OK(t, vtc_unmap(d.container_fd, IOVA, 2 * PG, NULL));
	vtc_close_dev(&d);
	munmap(buf, 2 * PG);
}

/* ---- interrupts ---------------------------------------------------------------- */

static void test_msi(struct vt *t, void *arg)
{
	struct vtc_dev d;
	struct vt_edu e;
	int32_t efd;
	uint64_t n;
	int i;

	(void)arg;
	edu_open(t, &d, &e, VT_EDU0);
	check_irq_info(t, d.device_fd, VFIO_PCI_MSI_IRQ_INDEX, 1,
		       VFIO_IRQ_INFO_EVENTFD);
	efd = efd_new(t);
	VT_OK(t, vtc_set_irq_eventfds(d.device_fd, VFIO_PCI_MSI_IRQ_INDEX, 0,
				      1, &efd));
	for (i = 0; i < 3; i++) {
		VT_CHECKF(t, !vt_fired(efd, 0), "eventfd set before raise %d",
			  i);
		wr(t, &e, VT_EDU_IRQ_RAISE, 1u << i);
		n = 0;
		VT_CHECKF(t, vt_wait_eventfd(efd, VT_IRQ_WAIT_MS, &n) == 0,
			  "no MSI %d within %d ms", i, VT_IRQ_WAIT_MS);
		VT_CHECKF(t, n == 1, "eventfd counted %llu for one MSI",
			  (unsigned long long)n);
		VT_CHECKF(t, rd(t, &e, VT_EDU_IRQ_STATUS) == 1u << i,
			  "edu irq status 0x%x", rd(t, &e, VT_EDU_IRQ_STATUS));
		edu_ack(t, &e);
	}
	/* Loopback: ACTION_TRIGGER with DATA_NONE fires the vector. */
	VT_OK(t, vtc_irq_action(d.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
				VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS),
		  "software trigger did not fire");

	VT_OK(t, vtc_set_irq_eventfds(d.device_fd, VFIO_PCI_MSI_IRQ_INDEX, 0,
				      0, NULL));
	wr(t, &e, VT_EDU_IRQ_RAISE, 1);
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "MSI after it was disabled");
	edu_ack(t, &e);
	close(efd);
	vtc_close_dev(&d);
}

/*
 * INTx is level triggered and auto-masked: after one interrupt nothing
 * more arrives until the user acks the device and unmasks.  A MASK
 * holds an interrupt back; UNMASK with the line still asserted delivers
 * it.
 */
static void test_intx_mask(struct vt *t, void *arg)
{
	const int fd_index = VFIO_PCI_INTX_IRQ_INDEX;
	struct vtc_dev d;
	struct vt_edu e;
	int32_t efd;

	(void)arg;
	edu_open(t, &d, &e, VT_EDU0);
	check_irq_info(t, d.device_fd, fd_index, 1, VFIO_IRQ_INFO_EVENTFD |
		       VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED);
	efd = efd_new(t);
	VT_OK(t, vtc_set_irq_eventfds(d.device_fd, fd_index, 0, 1, &efd));

	wr(t, &e, VT_EDU_IRQ_RAISE, 1);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no INTx within %d ms",
		  VT_IRQ_WAIT_MS);
	/* auto-masked: the line stays up, yet nothing more comes */
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx fired again while masked");
	edu_ack(t, &e);
	VT_OK(t, vtc_irq_action(d.device_fd, fd_index,
				VFIO_IRQ_SET_ACTION_UNMASK, 0, 1));
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx after ack and unmask");

	/* Again after the unmask. */
	wr(t, &e, VT_EDU_IRQ_RAISE, 2);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no second INTx");
	edu_ack(t, &e);
	VT_OK(t, vtc_irq_action(d.device_fd, fd_index,
				VFIO_IRQ_SET_ACTION_UNMASK, 0, 1));

	/* User mask: held back, then delivered by the unmask. */
	VT_OK(t, vtc_irq_action(d.device_fd, fd_index,
				VFIO_IRQ_SET_ACTION_MASK, 0, 1));
	wr(t, &e, VT_EDU_IRQ_RAISE, 4);
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx fired while masked by the "
		  "user");
	VT_OK(t, vtc_irq_action(d.device_fd, fd_index,
				VFIO_IRQ_SET_ACTION_UNMASK, 0, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS),
		  "pending INTx not delivered on "
		  "unmask");
	edu_ack(t, &e);
	VT_OK(t, vtc_irq_action(d.device_fd, fd_index,
				VFIO_IRQ_SET_ACTION_UNMASK, 0, 1));

	VT_OK(t, vtc_set_irq_eventfds(d.device_fd, fd_index, 0, 0, NULL));
	wr(t, &e, VT_EDU_IRQ_RAISE, 1);
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx after it was disabled");
	edu_ack(t, &e);
	close(efd);
	vtc_close_dev(&d);
}

/* ---- REQ on unbind --------------------------------------------------------------- */

struct unbinder {
	pthread_t thread;
	const char *dev;
	int ret, err;
};

static void *unbind_thread(void *arg)
{
	struct unbinder *u = arg;

	u->ret = vt_unbind(u->dev);
	u->err = errno;
	return NULL;
}

static void rebind(struct vt *t, const char *dev, const char *node)
{
	struct vtc_dev d;

	VT_CHECKF(t, vt_bind_vfio(dev) == 0, "rebind %s to vfio: %s", dev,
		  strerror(errno));
	VT_CHECKF(t, vt_wait_path(node, 1, 3000) == 0, "%s not back after "
		  "rebinding", node);
	dev_open(t, &d, dev);
	vtc_close_dev(&d);
}

/*
 * The host unbinds edu1 while we hold its device fd: vfio-pci raises
 * REQ (index 4) to ask for it back; we close on the request and the
 * unbind completes; the group node goes with the last device of the
 * group.  edu1 is bound to vfio again afterwards.
 */
static void test_req_on_unbind(struct vt *t, void *arg)
{
	struct unbinder u = { .dev = VT_EDU1 };
	char node[64], drv[64];
	struct vtc_dev d;
	int32_t efd;
	int started;

	(void)arg;
	snprintf(node, sizeof(node), "/dev/vfio/%d", vt_group_id(VT_EDU1));
	dev_open(t, &d, VT_EDU1);
	check_irq_info(t, d.device_fd, VFIO_PCI_REQ_IRQ_INDEX, 1,
		       VFIO_IRQ_INFO_EVENTFD);
	efd = efd_new(t);
	VT_OK(t, vtc_set_irq_eventfds(d.device_fd, VFIO_PCI_REQ_IRQ_INDEX, 0,
				      1, &efd));

	started = pthread_create(&u.thread, NULL, unbind_thread, &u) == 0;
	if (!started) {
		vtc_close_dev(&d);
		vt_fail(t, __FILE__, __LINE__, "pthread_create failed");
	}
	if (!vt_fired(efd, REQ_WAIT_MS)) {
		vtc_close_dev(&d);
		pthread_join(u.thread, NULL);
		rebind(t, VT_EDU1, node);
		vt_fail(t, __FILE__, __LINE__, "no REQ within %d ms of the "
			"unbind", REQ_WAIT_MS);
	}
	/* Let go, as asked. */
	close(d.device_fd);
	d.device_fd = -1;
	pthread_join(u.thread, NULL);
	vtc_close_dev(&d);
	close(efd);
	if (u.ret) {
		rebind(t, VT_EDU1, node);
		vt_fail(t, __FILE__, __LINE__, "unbind: %s", strerror(u.err));
	}
	VT_CHECKF(t, vt_device_driver(VT_EDU1, drv, sizeof(drv)) == 0 &&
		  !drv[0], "after unbind %s is on '%s'", VT_EDU1, drv);
	if (vt_wait_path(node, 0, UNBIND_WAIT_MS)) {
		rebind(t, VT_EDU1, node);
		vt_fail(t, __FILE__, __LINE__, "%s still there with no device "
			"of its group on vfio", node);
	}
	rebind(t, VT_EDU1, node);
}

int main(void)
{
	struct vt t = { .prog = "t-container-edu" };

	VT_RUN_CLOSE(&t, test_bar0);
	VT_RUN_CLOSE(&t, test_dma_round_trip);
	VT_RUN_CLOSE(&t, test_msi);
	VT_RUN_CLOSE(&t, test_intx_mask);
	VT_RUN_CLOSE(&t, test_req_on_unbind);
	return vt_done(&t);
}
