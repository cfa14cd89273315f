// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-hostile-hotplug: the device is hot-removed (QEMU device_del of edu2
 * behind its PCIe root port) while a hostile user keeps it busy from
 * three threads, DMA transfers, MMIO through an mmap of BAR0 and an
 * interrupt loop on an MSI eventfd, and ignores the release request.
 *
 * The removal must finish in bounded time (pciehp's 5 s button delay
 * plus vfio's release_timeout_ms, with room for TCG); every thread must
 * end on an error (ENODEV from pread/pwrite, SIGBUS from the zapped
 * mapping, nothing more from the interrupt), never hang; the kernel
 * must stay silent (the harness checks the console); once the fds are
 * closed nothing stays pinned.  edu2 is then plugged back and must come
 * back bound to vfio through /init's new_id.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define EDU2_SYSFS	"/sys/bus/pci/devices/" VT_EDU2
#define DMA_LEN		2048	/* well inside edu's 4 KiB buffer */
#define IOVA		0x100000
#define REMOVE_MS	60000	/* 5 s button + 5 s release + TCG */
#define BACK_MS		30000
#define WORK_MS		20000	/* for every thread to get going */

struct busy {
	struct vt_held h;	/* fds, REQ eventfd, mmap of BAR0 */
	struct vt_edu e;	/* BAR0 through the device fd */
	uint8_t *buf;		/* 2 pages mapped at IOVA */
	int msi;		/* eventfd */
	int stop;		/* __atomic: threads end */
};

struct worker {
	struct busy *b;
	pthread_t th;
	long ops;		/* __atomic: successful rounds */
	int err;		/* errno that ended it, 0 when stopped */
	int sigbus;		/* the mapping faulted */
	int started;
};

static int stopped(struct busy *b)
{
	return __atomic_load_n(&b->stop, __ATOMIC_RELAXED);
}

/* DMA RAM -> edu -> RAM through the mapped IOVA, until the fd fails. */
static void *dma_thread(void *arg)
{
	struct worker *w = arg;
	struct busy *b = w->b;
	const struct vt_edu *e = &b->e;
	uint32_t cmd;
	int i, dir = 0;

	while (!stopped(b)) {
		if (vt_edu_write(e, VT_EDU_DMA_SRC, dir ? VT_EDU_BUF : IOVA) ||
		    vt_edu_write(e, VT_EDU_DMA_DST,
				 dir ? IOVA + PG : VT_EDU_BUF) ||
		    vt_edu_write(e, VT_EDU_DMA_CNT, DMA_LEN) ||
		    vt_edu_write(e, VT_EDU_DMA_CMD, VT_EDU_DMA_RUN |
				 (dir ? VT_EDU_DMA_TO_RAM : 0)))
			goto failed;
		for (i = 0; i < 1000; i++) {
			if (vt_edu_read(e, VT_EDU_DMA_CMD, &cmd))
				goto failed;
			/* a removed device reads all ones */
			if (!(cmd & VT_EDU_DMA_RUN) || cmd == ~0u)
				break;
			usleep(2000);
		}
		dir = !dir;
		__atomic_add_fetch(&w->ops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
failed:
	w->err = errno;
	return NULL;
}

/*
 * SIGBUS arrives on the faulting thread with no argument to say where
 * to resume: each thread points this at its own jump buffer.
 */
static __thread sigjmp_buf *bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	if (bus_jmp)
		siglongjmp(*bus_jmp, 1);
	_exit(99);
}

/* MMIO through the mapping: liveness register reads back inverted. */
static void *mmio_thread(void *arg)
{
	struct worker *w = arg;
	struct busy *b = w->b;
	sigjmp_buf jb;
	volatile uint32_t x = 0x1234;

	bus_jmp = &jb;
	if (sigsetjmp(jb, 1)) {
		w->sigbus = 1;
		bus_jmp = NULL;
		return NULL;
	}
	while (!stopped(b)) {
		b->h.bar0[VT_EDU_LIVE / 4] = x;
		(void)b->h.bar0[VT_EDU_LIVE / 4];
		x++;
		__atomic_add_fetch(&w->ops, 1, __ATOMIC_RELAXED);
		usleep(1000);
	}
	bus_jmp = NULL;
	return NULL;
}

/* Raise, wait for the MSI, acknowledge; until the fd fails. */
static void *irq_thread(void *arg)
{
	struct worker *w = arg;
	struct busy *b = w->b;

	while (!stopped(b)) {
		if (vt_edu_write(&b->e, VT_EDU_IRQ_RAISE, 1))
			goto failed;
		if (vt_wait_eventfd(b->msi, 500, NULL) == 0)
			__atomic_add_fetch(&w->ops, 1, __ATOMIC_RELAXED);
		if (vt_edu_write(&b->e, VT_EDU_IRQ_ACK, 1))
			goto failed;
	}
	return NULL;
failed:
	w->err = errno;
	return NULL;
}

static void busy_open(struct vt *t, struct busy *b)
{
	int32_t efd;

	VT_CHECKF(t, vt_hold_dev(&b->h, VT_EDU2, EFD_NONBLOCK) == 0,
		  "hold %s: %s",
		  VT_EDU2, strerror(errno));
	VT_CHECKF(t, vt_edu_init(&b->e, b->h.d.device_fd) == 0,
		  "%s: edu setup (id register 0x%08x): %s", VT_EDU2, b->e.id,
		  strerror(errno));
	b->buf = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	VT_CHECKF(t, b->buf != MAP_FAILED, "mmap: %s", strerror(errno));
	VT_OK(t, vt_map(b->h.d.iommu_fd, b->buf, IOVA, 2 * PG, 0));
	b->msi = VT_OK(t, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	efd = b->msi;
	VT_OK(t, vt_set_irq_eventfds(b->h.d.device_fd, VFIO_PCI_MSI_IRQ_INDEX,
				     1, &efd));
}

static void busy_close(struct busy *b)
{
	if (b->h.d.iommu_fd >= 0)
		vt_unmap(b->h.d.iommu_fd, IOVA, 2 * PG);
	vt_release_held(&b->h);
	if (b->msi >= 0)
		close(b->msi);
	if (b->buf && b->buf != MAP_FAILED)
		munmap(b->buf, 2 * PG);
	b->buf = NULL;
	b->msi = -1;
}

/* Plug edu2 back; /init's new_id binds it to vfio again. */
/*
 * The driver link appears before the driver's probe runs: edu2 is back
 * on vfio once its group node is there too.
 */
static int plug_back(void)
{
	char drv[64] = "", node[64];
	uint64_t end, now;

	if (vt_plug_edu2(EDU2_SYSFS, BACK_MS))
		return -1;
	end = vt_now_ms() + BACK_MS;
	while ((now = vt_now_ms()) < end) {
		if (vt_device_driver(VT_EDU2, drv, sizeof(drv)) == 0 &&
		    strcmp(drv, "vfio") == 0) {
			snprintf(node, sizeof(node), "/dev/vfio/pci:%d",
				 vt_group_id(VT_EDU2));
			return vt_wait_path(node, 1, (int)(end - now));
		}
		usleep(100000);
	}
	return vt_bind_vfio(VT_EDU2);
}

static void test_remove_busy(struct vt *t, void *arg)
{
	struct busy b = { .msi = -1, .h.req = -1 };
	struct worker w[3];
	void *(*fn[3])(void *) = { dma_thread, mmio_thread, irq_thread };
	const char *what[3] = { "DMA", "mmap MMIO", "MSI" };
	struct sigaction sa, old;
	struct vfio_device_info info = { .argsz = sizeof(info) };
	uint64_t start, ms, req = 0;
	long pins0, pins;
	int i, all;

	(void)arg;
	b.h.d.group_fd = b.h.d.iommu_fd = b.h.d.device_fd = -1;
	if (access(EDU2_SYSFS, F_OK) != 0)
		vt_skip(t, "no %s (edu2 behind the root port)", VT_EDU2);
	pins0 = VT_OK(t, vt_pinned_now());
	busy_open(t, &b);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	memset(w, 0, sizeof(w));
	for (i = 0; i < 3; i++) {
		w[i].b = &b;
		w[i].started = pthread_create(&w[i].th, NULL, fn[i],
					      &w[i]) == 0;
		VT_CHECKF(t, w[i].started, "pthread_create failed");
	}
	/* Only remove once every kind of traffic is really flowing. */
	start = vt_now_ms();
	do {
		usleep(100000);
		all = 1;
		for (i = 0; i < 3; i++)
			all &= __atomic_load_n(&w[i].ops, __ATOMIC_RELAXED) > 0;
	} while (!all && vt_now_ms() - start < WORK_MS);
	if (!all) {
		__atomic_store_n(&b.stop, 1, __ATOMIC_RELAXED);
		for (i = 0; i < 3; i++)
			pthread_join(w[i].th, NULL);
		busy_close(&b);
		sigaction(SIGBUS, &old, NULL);
		VT_CHECKF(t, 0, "traffic did not start: DMA %ld, MMIO %ld, MSI "
			  "%ld rounds", w[0].ops, w[1].ops, w[2].ops);
	}

	start = vt_now_ms();
	vt_host("device_del edu2");
	i = vt_wait_path(EDU2_SYSFS, 0, REMOVE_MS);
	ms = vt_now_ms() - start;
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++)
		pthread_join(w[i].th, NULL);
	sigaction(SIGBUS, &old, NULL);
	printf("# removal took %llu ms; rounds: DMA %ld, MMIO %ld, MSI %ld; "
	       "DMA ended on '%s', MMIO %s, MSI ended on '%s'\n",
	       (unsigned long long)ms, w[0].ops, w[1].ops, w[2].ops,
	       w[0].err ? strerror(w[0].err) : "stop",
	       w[1].sigbus ? "SIGBUS" : "no fault",
	       w[2].err ? strerror(w[2].err) : "stop");
	fflush(stdout);

	if (access(EDU2_SYSFS, F_OK) == 0) {
		busy_close(&b);
		VT_CHECKF(t, 0, "%s still present %llu ms after device_del",
			  VT_EDU2,
			  (unsigned long long)ms);
	}
	(void)vt_wait_eventfd(b.h.req, 0, &req);
	for (i = 0; i < 3; i++)
		if (w[i].err && w[i].err != ENODEV && w[i].err != EIO) {
			busy_close(&b);
			VT_CHECKF(t, 0, "%s thread ended on %s, want ENODEV",
				  what[i], strerror(w[i].err));
		}
	errno = 0;
	i = ioctl(b.h.d.device_fd, VFIO_DEVICE_GET_INFO, &info);
	{
		int e = errno;
		int dma_err = w[0].err, irq_err = w[2].err, bus = w[1].sigbus;

		busy_close(&b);
		VT_CHECKF(t, i == -1 && e == ENODEV, "DEVICE_GET_INFO after the "
			  "removal: %d/%s, want ENODEV", i, strerror(e));
		VT_CHECKF(t, req > 0, "no release request on the REQ eventfd");
		VT_CHECKF(t, dma_err, "the DMA thread never saw an error");
		VT_CHECKF(t, irq_err, "the interrupt thread never saw an error");
		VT_CHECKF(t, bus, "the mmap of a removed device did not fault");
	}
	for (i = 0; i < 20; i++) {
		pins = vt_pinned_now();
		if (pins == pins0)
			break;
		usleep(100000);
	}
	VT_CHECKF(t, pins == pins0, "%ld pages pinned after closing everything",
		  pins - pins0);
}

static void test_plug_back(struct vt *t, void *arg)
{
	int g, fd;

	(void)arg;
	VT_CHECKF(t, plug_back() == 0, "edu2 not back on vfio: %s",
		  strerror(errno));
	g = vt_open_group_of(VT_EDU2);
	VT_CHECKF(t, g >= 0, "group of the re-added edu2: %s", strerror(errno));
	fd = vt_device_fd(g, VT_EDU2);
	VT_CHECKF(t, fd >= 0, "device fd of the re-added edu2: %s",
		  strerror(errno));
	close(fd);
	close(g);
}

int main(void)
{
	struct vt t = { .prog = "t-hostile-hotplug" };

	VT_RUN(&t, test_remove_busy, NULL);
	VT_RUN(&t, test_plug_back, NULL);
	return vt_done(&t);
}
