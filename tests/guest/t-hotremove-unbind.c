// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-hotremove-unbind: unbinding edu1 from vfio while a user holds its
 * device fd.  The core signals the release request (IRQ index 3) and
 * waits release_timeout_ms for the user to close; a user who does gets
 * the unbind done at once, one who does not is revoked (ioctls and
 * read/write -ENODEV, the mmap SIGBUS).  Either way the unbind finishes
 * in bounded time: the seed's unbind could block forever.  That holds
 * also for a user whose threads sit in pread/pwrite on a buffer whose
 * pages never arrive (userfaultfd): the revoke must not wait for them.
 * edu1 is put back on vfio after each case.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define TIMEOUT_PARAM	"/sys/module/vfio/parameters/release_timeout_ms"
#define TEST_TIMEOUT_MS	1500	/* release_timeout_ms while we run */
#define SLACK_MS	3000	/* TCG is slow: bound is timeout + this */

struct unbinder {
	pthread_t thread;
	const char *dev;
	int ret, err;
	uint64_t ms;			/* how long the unbind write took */
};

static void *unbind_thread(void *arg)
{
	struct unbinder *u = arg;
	uint64_t start = vt_now_ms();

	u->ret = vt_unbind(u->dev);
	u->err = errno;
	u->ms = vt_now_ms() - start;
	return NULL;
}

static int timeout_ms(struct vt *t)
{
	char buf[32];

	if (vt_read_file(TIMEOUT_PARAM, buf, sizeof(buf)) < 0)
		vt_skip(t, "%s: %s", TIMEOUT_PARAM, strerror(errno));
	return atoi(buf);
}

static void holder_open(struct vt *t, struct vt_held *h, const char *dev)
{
	VT_CHECKF(t, vt_hold_dev(h, dev, 0) == 0, "hold %s (REQ eventfd, BAR0 "
		  "mmap of an edu): %s", dev, strerror(errno));
}

/*
 * Put dev back on vfio for later cases and programs, and check its group
 * node is back and hands out the device again.
 */
static void rebind(struct vt *t, const char *dev)
{
	char node[64];
	int group, fd;

	VT_CHECKF(t, vt_bind_vfio(dev) == 0, "rebind %s to vfio: %s", dev,
		  strerror(errno));
	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", vt_group_id(dev));
	VT_CHECKF(t, vt_wait_path(node, 1, 3000) == 0, "%s not back", node);
	group = VT_OK(t, vt_open_group_of(dev));
	fd = VT_OK(t, vt_device_fd(group, dev));
	close(fd);
	close(group);
}

struct saved_timeout {
	char old[32];
	int set;
};

static void set_timeout(struct vt *t, struct saved_timeout *s)
{
	char buf[32];

	s->set = 0;
	if (vt_read_file(TIMEOUT_PARAM, s->old, sizeof(s->old)) < 0)
		vt_skip(t, "%s: %s", TIMEOUT_PARAM, strerror(errno));
	snprintf(buf, sizeof(buf), "%d", TEST_TIMEOUT_MS);
	VT_CHECKF(t, vt_write_file(TIMEOUT_PARAM, buf) == 0, "write %s: %s",
		  TIMEOUT_PARAM, strerror(errno));
	s->set = 1;
}

static void restore_timeout(struct saved_timeout *s)
{
	if (s->set && vt_write_file(TIMEOUT_PARAM, s->old))
		printf("# restore %s: %s\n", TIMEOUT_PARAM, strerror(errno));
	s->set = 0;
}

typedef void (*held_fn)(struct vt *t, struct vt_held *h,
			struct saved_timeout *s);

/*
 * Run body on edu1 held by us, with release_timeout_ms at
 * TEST_TIMEOUT_MS until body restores it; then close what body left,
 * restore the timeout and put edu1 back on vfio.  A failed check in body
 * does the same before it ends the case.
 */
static void with_held_edu1(struct vt *t, held_fn body)
{
	struct saved_timeout s;
	volatile int restore = 0;
	struct vt_held h;
	jmp_buf outer;
	int j;

	set_timeout(t, &s);
	memcpy(outer, t->fail_jmp, sizeof(jmp_buf));
	j = setjmp(t->fail_jmp);
	if (j == 0) {
		restore = 1;
		holder_open(t, &h, VT_EDU1);
		body(t, &h, &s);
		vt_release_held(&h);
		restore_timeout(&s);
		rebind(t, VT_EDU1);
		memcpy(t->fail_jmp, outer, sizeof(jmp_buf));
		return;
	}
	memcpy(t->fail_jmp, outer, sizeof(jmp_buf));
	if (restore) {
		restore_timeout(&s);
		close_range(3, ~0U, 0);
		vt_bind_vfio(VT_EDU1);
	}
	longjmp(t->fail_jmp, j);
}

/* The user closes on the request: the unbind does not wait it out. */
static void cooperative(struct vt *t, struct vt_held *h, int timeout)
{
	struct unbinder u = { .dev = VT_EDU1 };
	uint64_t v = 0;
	char drv[64];

	VT_CHECKF(t, pthread_create(&u.thread, NULL, unbind_thread, &u) == 0,
		  "pthread_create failed");
	if (vt_wait_eventfd(h->req, timeout + SLACK_MS, &v)) {
		pthread_join(u.thread, NULL);
		vt_fail(t, __FILE__, __LINE__, "no release request within "
			"%d ms: %s", timeout + SLACK_MS, strerror(errno));
	}
	munmap((void *)h->bar0, h->bar0_size);
	h->bar0 = NULL;
	close(h->d.device_fd);
	h->d.device_fd = -1;
	pthread_join(u.thread, NULL);
	VT_CHECKF(t, u.ret == 0, "unbind: %s", strerror(u.err));
	printf("# cooperative unbind took %llu ms (timeout %d ms)\n",
	       (unsigned long long)u.ms, timeout);
	VT_CHECKF(t, u.ms < (uint64_t)timeout,
		  "unbind took %llu ms although the user closed at once",
		  (unsigned long long)u.ms);
	VT_CHECKF(t, vt_device_driver(VT_EDU1, drv, sizeof(drv)) == 0 && !drv[0],
		  "after unbind %s is on '%s'", VT_EDU1, drv);
}

static void user_closes(struct vt *t, struct vt_held *h,
			struct saved_timeout *s)
{
	/* A long timeout shows that nobody waited for it. */
	restore_timeout(s);
	cooperative(t, h, timeout_ms(t));
}

static void test_unbind_user_closes(struct vt *t, void *arg)
{
	(void)arg;
	with_held_edu1(t, user_closes);
}

/* The user ignores the request: revoked after the timeout. */
static void revoked(struct vt *t, struct vt_held *h)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };
	struct unbinder u = { .dev = VT_EDU1 };
	uint32_t id;
	uint64_t v = 0;
	long pins;

	pins = vt_pinned_now();
	VT_CHECKF(t, pthread_create(&u.thread, NULL, unbind_thread, &u) == 0,
		  "pthread_create failed");
	if (vt_wait_eventfd(h->req, TEST_TIMEOUT_MS + SLACK_MS, &v)) {
		pthread_join(u.thread, NULL);
		vt_fail(t, __FILE__, __LINE__, "no release request: %s",
			strerror(errno));
	}
	pthread_join(u.thread, NULL);
	VT_CHECKF(t, u.ret == 0, "unbind: %s", strerror(u.err));
	printf("# unbind with an unresponsive user took %llu ms (timeout %d)\n",
	       (unsigned long long)u.ms, TEST_TIMEOUT_MS);
	VT_CHECKF(t, u.ms >= TEST_TIMEOUT_MS - 100,
		  "unbind took %llu ms: it did not wait for the user",
		  (unsigned long long)u.ms);
	VT_CHECKF(t, u.ms < TEST_TIMEOUT_MS + SLACK_MS,
		  "unbind took %llu ms, bound %d ms", (unsigned long long)u.ms,
		  TEST_TIMEOUT_MS + SLACK_MS);

	VT_ERRNO(t, ioctl(h->d.device_fd, VFIO_DEVICE_GET_INFO, &info), ENODEV);
	VT_ERRNO(t, ioctl(h->d.device_fd, VFIO_DEVICE_RESET), ENODEV);
	VT_ERRNO(t, pread(h->d.device_fd, &id, 4, 0), ENODEV);
	VT_ERRNO(t, pwrite(h->d.device_fd, &id, 4, 0), ENODEV);
	VT_CHECKF(t, vt_read_faults(h->bar0), "the revoked BAR0 mmap still reads");
	/* The IOMMU side is the group's and stays usable. */
	VT_OK(t, vt_unmap(h->d.iommu_fd, 0, 1ULL << 30));
	VT_OK(t, munmap((void *)h->bar0, h->bar0_size));
	h->bar0 = NULL;
	VT_OK(t, close(h->d.device_fd));
	h->d.device_fd = -1;
	VT_OK(t, close(h->d.iommu_fd));
	h->d.iommu_fd = -1;
	VT_OK(t, close(h->d.group_fd));
	h->d.group_fd = -1;
	VT_CHECKF(t, vt_pinned_now() <= pins, "pins grew from %ld to %ld", pins,
		  vt_pinned_now());
}

static void user_holds(struct vt *t, struct vt_held *h,
		       struct saved_timeout *s)
{
	uint8_t *buf;

	(void)s;
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(buf, 1, 8192);
	VT_OK(t, vt_map(h->d.iommu_fd, buf, 0x100000, 8192, 0));
	revoked(t, h);
}

static void test_unbind_user_holds(struct vt *t, void *arg)
{
	(void)arg;
	with_held_edu1(t, user_holds);
}

/* One pread, pwrite or ioctl (cmd) of the device fd, in its own thread. */
struct stuck_io {
	pthread_t thread;
	int fd, write;
	unsigned long cmd;
	void *buf;
	size_t len;
	uint64_t off;
	ssize_t ret;
	int err;
};

static void *stuck_io_thread(void *arg)
{
	struct stuck_io *io = arg;

	if (io->cmd)
		io->ret = ioctl(io->fd, io->cmd, io->buf);
	else if (io->write)
		io->ret = pwrite(io->fd, io->buf, io->len, io->off);
	else
		io->ret = pread(io->fd, io->buf, io->len, io->off);
	io->err = errno;
	return NULL;
}

/* pthread_timedjoin_np() with a bound in ms from now: 0 when joined. */
static int join_within(pthread_t thread, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return pthread_timedjoin_np(thread, NULL, &ts);
}

/* Read page-fault messages from uffd until want arrived or ms passed. */
static int wait_faults(int uffd, int want, int ms)
{
	uint64_t end = vt_now_ms() + ms;
	struct uffd_msg msg;
	int got = 0;

	while (got < want && vt_now_ms() < end) {
		struct pollfd p = { .fd = uffd, .events = POLLIN };

		if (poll(&p, 1, 100) <= 0)
			continue;
		while (read(uffd, &msg, sizeof(msg)) == sizeof(msg))
			if (msg.event == UFFD_EVENT_PAGEFAULT)
				got++;
	}
	return got;
}

#define STUCK_IOS	5
#define STUCK_PAGES	6

/*
 * Five threads block in a user copy: config space read into a missing
 * page, two pages of BAR0 read starting in a missing page, a config
 * write from a missing page, and two ioctls whose argument is in a
 * missing page (GET_REGION_INFO, SET_IRQ_EVENTFDS).  Nobody serves the
 * faults.  The unbind must still revoke after release_timeout_ms.  Once
 * the userfaultfd is closed the copies complete: the config write and the
 * ioctls must not reach the device (-ENODEV), the BAR0 read must stop
 * after the chunk it was copying (short count or error), the config read
 * returns.
 * Checked only after every thread is joined, so that a failure leaves
 * nothing of ours running.
 */
static void user_stuck(struct vt *t, struct vt_held *h,
		       struct saved_timeout *s)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct vfio_region_info bar0, cfg;
	/* Static: a failed check must not leave threads on a dead stack. */
	static struct unbinder u;
	static struct stuck_io io[STUCK_IOS];
	int uffd, faults, unbound, created, i, ended = 1;
	uint64_t start, waited;
	uint32_t id;
	uint8_t *area;

	(void)s;
	u = (struct unbinder){ .dev = VT_EDU1 };
	VT_OK(t, vt_region_info(h->d.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
				&bar0));
	VT_OK(t, vt_region_info(h->d.device_fd, VFIO_PCI_CONFIG_REGION_INDEX,
				&cfg));
	VT_CHECKF(t, bar0.size >= 2 * PG, "BAR0 is %llu bytes",
		  (unsigned long long)bar0.size);
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		vt_skip(t, "userfaultfd: %s", strerror(errno));
	VT_OK(t, ioctl(uffd, UFFDIO_API, &api));
	area = mmap(NULL, STUCK_PAGES * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, area != MAP_FAILED, "mmap: %s", strerror(errno));
	reg.range.start = (uintptr_t)area;
	reg.range.len = STUCK_PAGES * PG;
	VT_OK(t, ioctl(uffd, UFFDIO_REGISTER, &reg));

	io[0] = (struct stuck_io){ .fd = h->d.device_fd, .buf = area,
				   .len = 256, .off = cfg.offset };
	io[1] = (struct stuck_io){ .fd = h->d.device_fd, .buf = area + PG,
				   .len = 2 * PG, .off = bar0.offset };
	/* Interrupt line: a virtual byte, harmless if it got through. */
	io[2] = (struct stuck_io){ .fd = h->d.device_fd, .write = 1,
				   .buf = area + 3 * PG, .len = 1,
				   .off = cfg.offset + 0x3c };
	io[3] = (struct stuck_io){ .fd = h->d.device_fd, .buf = area + 4 * PG,
				   .cmd = VFIO_DEVICE_GET_REGION_INFO };
	io[4] = (struct stuck_io){ .fd = h->d.device_fd, .buf = area + 5 * PG,
				   .cmd = VFIO_DEVICE_SET_IRQ_EVENTFDS };
	for (i = 0; i < STUCK_IOS; i++)
		VT_CHECKF(t, pthread_create(&io[i].thread, NULL,
					    stuck_io_thread, &io[i]) == 0,
			  "pthread_create failed");
	/* From here on nothing may end the case before the joins. */
	faults = wait_faults(uffd, STUCK_IOS, 5000);

	start = vt_now_ms();
	created = pthread_create(&u.thread, NULL, unbind_thread, &u) == 0;
	unbound = created &&
		  join_within(u.thread, TEST_TIMEOUT_MS + SLACK_MS) == 0;
	waited = vt_now_ms() - start;
	printf("# unbind with %d threads stuck in user copies: %s after %llu "
	       "ms (timeout %d ms)\n", faults, unbound ? "done" : "still blocked",
	       (unsigned long long)waited, TEST_TIMEOUT_MS);

	/* Let the copies finish: the faults are then served with zeroes. */
	close(uffd);
	for (i = 0; i < STUCK_IOS; i++)
		if (join_within(io[i].thread, 10000))
			ended = 0;
	if (created && !unbound && join_within(u.thread, 10000))
		ended = 0;
	VT_CHECKF(t, ended, "a thread still blocked 10 s after the "
		  "userfaultfd was closed");

	VT_CHECKF(t, created, "pthread_create failed");
	VT_CHECKF(t, unbound, "unbind still blocked after %llu ms (timeout "
		  "%d ms) by threads stuck in user copies",
		  (unsigned long long)waited, TEST_TIMEOUT_MS);
	VT_CHECKF(t, faults == STUCK_IOS, "%d of %d threads faulted on the "
		  "userfaultfd pages", faults, STUCK_IOS);
	VT_CHECKF(t, u.ret == 0, "unbind: %s", strerror(u.err));
	printf("# config read %zd/%s, BAR0 read %zd/%s, config write %zd/%s, "
	       "GET_REGION_INFO %zd/%s, SET_IRQ_EVENTFDS %zd/%s\n",
	       io[0].ret, strerror(io[0].err), io[1].ret, strerror(io[1].err),
	       io[2].ret, strerror(io[2].err), io[3].ret, strerror(io[3].err),
	       io[4].ret, strerror(io[4].err));
	for (i = 2; i < STUCK_IOS; i++)
		VT_CHECKF(t, io[i].ret == -1 && io[i].err == ENODEV,
			  "%s from a page that came after the revoke: %zd/%s, "
			  "want -1/ENODEV", i == 2 ? "config write" : "ioctl",
			  io[i].ret, strerror(io[i].err));
	VT_CHECKF(t, io[1].ret < (ssize_t)(2 * PG),
		  "BAR0 read went on after the revoke: %zd of %lu bytes",
		  io[1].ret, 2 * PG);
	VT_CHECKF(t, io[0].ret == 256 || io[0].ret == -1,
		  "config read: %zd/%s", io[0].ret, strerror(io[0].err));
	VT_ERRNO(t, pread(h->d.device_fd, &id, 4, bar0.offset), ENODEV);
	munmap(area, STUCK_PAGES * PG);
}

static void test_unbind_user_stuck(struct vt *t, void *arg)
{
	(void)arg;
	with_held_edu1(t, user_stuck);
}

/* ---- the release window: the device stays in its group ---------------- */

#define WINDOW_IOVA	0x200000ULL

/* Start unbinding the held device and wait for its release request. */
static void window_open(struct vt *t, struct vt_held *h, struct unbinder *u)
{
	uint64_t v = 0;

	u->dev = h->d.name;
	VT_CHECKF(t, pthread_create(&u->thread, NULL, unbind_thread, u) == 0,
		  "pthread_create failed");
	if (vt_wait_eventfd(h->req, TEST_TIMEOUT_MS + SLACK_MS, &v)) {
		pthread_join(u->thread, NULL);
		vt_fail(t, __FILE__, __LINE__, "no release request: %s",
			strerror(errno));
	}
}

/* The user lets go: the unbind ends at once. */
static void window_close(struct vt *t, struct vt_held *h, struct unbinder *u)
{
	munmap((void *)h->bar0, h->bar0_size);
	h->bar0 = NULL;
	close(h->d.device_fd);
	h->d.device_fd = -1;
	pthread_join(u->thread, NULL);
	VT_CHECKF(t, u->ret == 0, "unbind: %s", strerror(u->err));
}

/*
 * The group's last fd (and the IOMMU fd) closed while the unbind waits:
 * the device, still open and bus master, must stay in the user's IOMMU
 * domain, so its DMA through a mapped IOVA still comes back.  Before, the
 * close detached and freed the group, and the unbind freed it again.
 */
static void group_closes(struct vt *t, struct vt_held *h,
			 struct saved_timeout *s)
{
	struct unbinder u = { 0 };
	struct vt_edu e;
	uint8_t *buf;

	restore_timeout(s);
	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(buf, 0x3c, PG);
	VT_OK(t, vt_map(h->d.iommu_fd, buf, WINDOW_IOVA, PG, 0));
	VT_OK(t, vt_edu_init(&e, h->d.device_fd));

	window_open(t, h, &u);
	VT_OK(t, close(h->d.iommu_fd));
	h->d.iommu_fd = -1;
	VT_OK(t, close(h->d.group_fd));
	h->d.group_fd = -1;
	/* From RAM into edu's buffer, and back to the next bytes. */
	VT_OK(t, vt_edu_dma(&e, 0, WINDOW_IOVA, 64));
	VT_OK(t, vt_edu_dma(&e, 1, WINDOW_IOVA + 64, 64));
	VT_CHECKF(t, !memcmp(buf, buf + 64, 64),
		  "DMA after the group's close did not come back (0x%02x): the group left the IOMMU domain",
		  buf[64]);
	window_close(t, h, &u);
	munmap(buf, PG);
}

static void test_window_group_close(struct vt *t, void *arg)
{
	(void)arg;
	with_held_edu1(t, group_closes);
}

/*
 * UNMERGE of the unbinding device's group while its fd is open: -EBUSY,
 * as for any open device.  Before, the group left the set (and the
 * domain) with the device still live.
 */
static void test_window_unmerge(struct vt *t, void *arg)
{
	struct vt_held h = { .d = { .device_fd = -1 } };
	struct unbinder u = { 0 };
	int32_t g0;

	(void)arg;
	g0 = VT_OK(t, vt_open_group_of(VT_EDU0));
	VT_CHECKF(t, vt_hold_dev(&h, VT_EDU1, 0) == 0, "hold %s: %s", VT_EDU1,
		  strerror(errno));
	VT_OK(t, ioctl(h.d.group_fd, VFIO_GROUP_MERGE, &g0));
	window_open(t, &h, &u);
	VT_ERRNO(t, ioctl(h.d.group_fd, VFIO_GROUP_UNMERGE), EBUSY);
	window_close(t, &h, &u);
	vt_release_held(&h);
	close(g0);
	rebind(t, VT_EDU1);
}

int main(void)
{
	struct vt t = { .prog = "t-hotremove-unbind" };

	VT_RUN_CLOSE(&t, test_unbind_user_closes);
	VT_RUN_CLOSE(&t, test_unbind_user_holds);
	VT_RUN_CLOSE(&t, test_unbind_user_stuck);
	VT_RUN_CLOSE(&t, test_window_group_close);
	VT_RUN_CLOSE(&t, test_window_unmerge);
	return vt_done(&t);
}
