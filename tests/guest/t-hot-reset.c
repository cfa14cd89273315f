// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-hot-reset: bus and slot reset through today's ABI (src/pci/
 * vfio_pci_hot_reset.c, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO and
 * VFIO_DEVICE_PCI_HOT_RESET), as QEMU uses them at every VM reset of a
 * device without FLR.  edu2 sits alone behind the root port rp0: the
 * reset affects exactly it.  edu0 is on the root bus: no such reset.
 * t-hot-reset-seed does the same through the seed ABI.  The last case
 * asks the kernel's own vfio-pci (/opt/intree-vfio) the same questions
 * in the same boot and wants the same answers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vt.h"
#include "vtcontainer.h"

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

static void edu2_open(struct vt *t, struct vtc_dev *d, struct vt_edu *e)
{
	need_edu2(t);
	VT_CHECKF(t, vtc_open_dev(d, VT_EDU2, 0) == 0, "open edu2: %s",
		  strerror(errno));
	VT_CHECKF(t, vtc_edu_init(e, d->device_fd) == 0, "edu2: %s",
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
static void edu_works(struct vt *t, struct vtc_dev *d, struct vt_edu *e)
{
	uint32_t v = 0;
	uint8_t *buf;
	int i;

	VT_OK(t, vtc_enable_master(d->device_fd));
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
	VT_OK(t, vtc_map(d->container_fd, buf, IOVA, PG, 0));
	VT_CHECKF(t, vt_edu_dma(e, 0, IOVA, 64) == 0, "DMA in: %s",
		  strerror(errno));
	memset(buf, 0, 64);
	VT_CHECKF(t, vt_edu_dma(e, 1, IOVA, 64) == 0, "DMA out: %s",
		  strerror(errno));
	VT_CHECKF(t, buf[0] == 0x5a && buf[63] == 0x5a,
		  "DMA round trip read 0x%02x 0x%02x", buf[0], buf[63]);
	VT_OK(t, vtc_unmap(d->container_fd, IOVA, PG, NULL));
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
	struct vtc_dev d;
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
	vtc_close_dev(&d);
}

static void test_info_enospc(struct vt *t, void *arg)
{
	struct info_buf b;
	struct vtc_dev d;
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
	vtc_close_dev(&d);
}

/* edu0 on the root bus: no bridge to reset it through. */
static void test_root_bus(struct vt *t, void *arg)
{
	struct info_buf b;
	struct vtc_dev d;
	int32_t fd;

	(void)arg;
	VT_CHECKF(t, vtc_open_dev(&d, VT_EDU0, 0) == 0, "open edu0: %s",
		  strerror(errno));
	memset(&b, 0, sizeof(b));
	b.hdr.argsz = sizeof(b);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			  &b), ENODEV);
	fd = d.group_fd;
	VT_ERRNO(t, hot_reset(d.device_fd, 1, &fd), ENODEV);
	vtc_close_dev(&d);
}

static void test_reset(struct vt *t, void *arg)
{
	struct vtc_dev d;
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
	vtc_close_dev(&d);
}

/* Every refusal leaves no reference behind: the groups reopen after. */
static void test_refused(struct vt *t, void *arg)
{
	struct vtc_dev d, other;
	struct reset_buf r;
	struct vt_edu e;
	int32_t fds[2];
	int efd, g0;

	(void)arg;
	edu2_open(t, &d, &e);
	VT_CHECKF(t, vtc_open_dev(&other, VT_EDU0, 0) == 0, "open edu0: %s",
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
	fds[0] = d.container_fd;
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
	vtc_close_dev(&other);
	close(efd);
	efd = vtc_open_group(g0, O_RDWR);
	VT_CHECKF(t, efd >= 0, "edu0's group does not reopen: %s",
		  strerror(errno));
	close(efd);
	vtc_close_dev(&d);
	efd = vtc_open_group_of(VT_EDU2);
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
	struct vtc_dev d;
	struct vt_edu e;
	uint64_t size;
	pthread_t th;
	int32_t fd;
	int i, ret = 0;

	(void)arg;
	edu2_open(t, &d, &e);
	r.bar = vtc_mmap_region(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
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
	vtc_close_dev(&d);
}

/* ---- a reset that reaches two devices (machine hotreset) ----------- */

#define EDU3	"0000:02:00.0"	/* function 0 of the two-function edu */
#define EDU4	"0000:02:00.1"

/*
 * Both functions are in one group, so its fd covers both; with the
 * second function unbound the reset would reach a device that is not
 * the user's: refused, while INFO still lists it.
 */
static void test_two_functions(struct vt *t, void *arg)
{
	struct info_buf b;
	struct vtc_dev d;
	int32_t fd;
	int g;

	(void)arg;
	if (access("/sys/bus/pci/devices/" EDU4, F_OK))
		vt_skip(t, "no two-function edu at " EDU3 " (run-suite.sh "
			"--machine hotreset)");
	g = VT_OK(t, vt_group_id(EDU3));
	VT_CHECKF(t, vt_group_id(EDU4) == g, "the functions' groups differ");
	VT_CHECKF(t, vtc_open_dev(&d, EDU3, 0) == 0, "open " EDU3 ": %s",
		  strerror(errno));
	memset(&b, 0, sizeof(b));
	b.hdr.argsz = sizeof(b);
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, &b));
	VT_CHECKF(t, b.hdr.count == 2 &&
		  b.devs[0].group_id == (uint32_t)g && b.devs[0].bus == 2 &&
		  b.devs[0].devfn == 0 &&
		  b.devs[1].group_id == (uint32_t)g && b.devs[1].bus == 2 &&
		  b.devs[1].devfn == 1,
		  "INFO: %u devices, want 02:00.0 and 02:00.1 in group %d",
		  b.hdr.count, g);
	fd = d.group_fd;
	VT_CHECKF(t, hot_reset(d.device_fd, 1, &fd) == 0, "hot reset: %s",
		  strerror(errno));

	/* The other function unbound: not the user's any more. */
	VT_OK(t, vt_unbind(EDU4));
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, &b));
	VT_CHECKF(t, b.hdr.count == 2, "INFO lists %u", b.hdr.count);
	VT_ERRNO(t, hot_reset(d.device_fd, 1, &fd), EINVAL);

	/* Bound again (its group in use), the reset goes through again. */
	VT_CHECKF(t, vt_bind_vfio(EDU4) == 0, "rebind " EDU4 ": %s",
		  strerror(errno));
	VT_CHECKF(t, hot_reset(d.device_fd, 1, &fd) == 0,
		  "hot reset after the rebind: %s", strerror(errno));
	vtc_close_dev(&d);
}

/* ---- the kernel's own vfio-pci as the reference -------------------- */

#define INTREE_DIR	"/opt/intree-vfio"
#define N_ANSWERS	8

/* What one VFIO answers: INFO and RESET of edu2 and edu0. */
struct answers {
	int err[N_ANSWERS];		/* 0 or errno, per question */
	struct info_buf info;		/* edu2's INFO */
};

static int ask(int ret)
{
	return ret < 0 ? errno : 0;
}

static void ask_all(struct vt *t, struct answers *a)
{
	struct vtc_dev d, other;
	struct info_buf b;
	int32_t fds[2];
	int efd;

	memset(a, 0, sizeof(*a));
	VT_CHECKF(t, vtc_open_dev(&d, VT_EDU2, 0) == 0, "open edu2: %s",
		  strerror(errno));
	VT_CHECKF(t, vtc_open_dev(&other, VT_EDU0, 0) == 0, "open edu0: %s",
		  strerror(errno));
	efd = VT_OK(t, eventfd(0, EFD_CLOEXEC));

	a->info.hdr.argsz = sizeof(a->info);
	a->err[0] = ask(ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			      &a->info));
	memset(&b, 0, sizeof(b));
	b.hdr.argsz = sizeof(b.hdr);
	a->err[1] = ask(ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			      &b));
	a->err[2] = b.hdr.count;	/* the count ENOSPC tells */
	b.hdr.argsz = sizeof(b);
	a->err[3] = ask(ioctl(other.device_fd,
			      VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, &b));
	fds[0] = d.group_fd;
	a->err[4] = ask(hot_reset(d.device_fd, 1, fds));
	fds[0] = other.group_fd;
	a->err[5] = ask(hot_reset(d.device_fd, 1, fds));
	fds[0] = efd;
	a->err[6] = ask(hot_reset(d.device_fd, 1, fds));
	fds[0] = d.group_fd;
	fds[1] = d.group_fd;
	a->err[7] = ask(hot_reset(d.device_fd, 2, fds));
	close(efd);
	vtc_close_dev(&other);
	vtc_close_dev(&d);
}

static int load_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret, err;

	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, "", 0);
	err = errno;
	close(fd);
	errno = err;
	return ret && err != EEXIST ? -1 : 0;
}

static int ko_filter(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 3 && !strcmp(e->d_name + n - 3, ".ko");
}

/* Whether run-suite.sh found the kernel's VFIO as modules to put there. */
static int has_intree(void)
{
	struct dirent **list;
	int n = scandir(INTREE_DIR, &list, ko_filter, alphasort), i;

	for (i = 0; i < n; i++)
		free(list[i]);
	if (n >= 0)
		free(list);
	return n > 0;
}

/* Ours out, the kernel's in (numbered in insmod order), edu0/2 bound. */
static void load_intree(struct vt *t)
{
	char path[PATH_MAX];
	struct dirent **list;
	int i, n;

	VT_CHECKF(t, !syscall(SYS_delete_module, "vfio_pci", O_NONBLOCK) &&
		  !syscall(SYS_delete_module, "vfio", O_NONBLOCK),
		  "rmmod ours: %s", strerror(errno));
	n = scandir(INTREE_DIR, &list, ko_filter, alphasort);
	VT_CHECKF(t, n > 0, "no modules in " INTREE_DIR);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), INTREE_DIR "/%s", list[i]->d_name);
		if (load_file(path) < 0)
			vt_fail(t, __FILE__, __LINE__, "insmod %s: %s", path,
				strerror(errno));
		free(list[i]);
	}
	free(list);
	VT_CHECKF(t, vt_bind(VT_EDU2, "vfio-pci") == 0 &&
		  vt_bind(VT_EDU0, "vfio-pci") == 0,
		  "bind to the kernel's vfio-pci: %s", strerror(errno));
}

/* Back to what /init left: ours loaded, the four devices on "vfio". */
static void load_ours(void)
{
	static const char *const mods[] = {
		"vfio_pci", "vfio_pci_core", "vfio_iommu_type1",
		"vfio_virqfd", "vfio", "iommufd", "irqbypass",
	};
	char path[PATH_MAX];
	struct utsname u;
	unsigned int i;

	vt_unbind(VT_EDU2);
	vt_unbind(VT_EDU0);
	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		syscall(SYS_delete_module, mods[i], O_NONBLOCK);
	if (uname(&u))
		return;
	snprintf(path, sizeof(path), "/lib/modules/%s/updates/vfio.ko",
		 u.release);
	if (load_file(path) == 0)
		vt_vfio_pci_reload();
}

/* ask_all() of the kernel's vfio-pci; ours is back after, failed or not. */
static void ask_intree(struct vt *t, struct answers *a)
{
	jmp_buf outer;

	memcpy(outer, t->fail_jmp, sizeof(outer));
	if (setjmp(t->fail_jmp)) {
		memcpy(t->fail_jmp, outer, sizeof(outer));
		close_range(3, ~0U, 0);
		load_ours();
		longjmp(t->fail_jmp, 1);
	}
	load_intree(t);
	ask_all(t, a);
	memcpy(t->fail_jmp, outer, sizeof(outer));
	load_ours();
}

static void test_intree_info(struct vt *t, void *arg)
{
	static const char *const what[N_ANSWERS] = {
		"INFO edu2", "INFO short argsz", "count with ENOSPC",
		"INFO edu0", "RESET own group", "RESET other container's group",
		"RESET eventfd", "RESET 2 fds for 1 device",
	};
	struct answers ours, theirs;
	int i, failed = 0;

	(void)arg;
	need_edu2(t);
	if (!has_intree())
		vt_skip(t, "no kernel VFIO modules in %s (this kernel has "
			"none as modules)", INTREE_DIR);
	ask_all(t, &ours);
	ask_intree(t, &theirs);
	for (i = 0; i < N_ANSWERS; i++) {
		printf("# %-30s ours %d, in-tree %d\n", what[i], ours.err[i],
		       theirs.err[i]);
		failed |= ours.err[i] != theirs.err[i];
	}
	VT_CHECKF(t, !failed, "answers differ (see the # lines)");
	VT_CHECKF(t, ours.info.hdr.count == theirs.info.hdr.count &&
		  !memcmp(ours.info.devs, theirs.info.devs,
			  ours.info.hdr.count * sizeof(ours.info.devs[0])),
		  "INFO lists differ: %u devices, in-tree %u",
		  ours.info.hdr.count, theirs.info.hdr.count);
}

int main(void)
{
	struct vt t = { .prog = "t-hot-reset" };

	VT_RUN_CLOSE(&t, test_info);
	VT_RUN_CLOSE(&t, test_info_enospc);
	VT_RUN_CLOSE(&t, test_root_bus);
	VT_RUN_CLOSE(&t, test_reset);
	VT_RUN_CLOSE(&t, test_refused);
	VT_RUN_CLOSE(&t, test_reset_mmapped);
	VT_RUN_CLOSE(&t, test_two_functions);
	VT_RUN_CLOSE(&t, test_intree_info);
	return vt_done(&t);
}
