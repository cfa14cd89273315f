// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-hotremove-unbind: unbinding edu1 from vfio while a user holds its
 * device fd.  The core signals the release request (IRQ index 3) and
 * waits release_timeout_ms for the user to close; a user who does gets
 * the unbind done at once, one who does not is revoked (ioctls and
 * read/write -ENODEV, the mmap SIGBUS).  Either way the unbind finishes
 * in bounded time: the seed's unbind could block forever.  edu1 is put
 * back on vfio after each case.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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

int main(void)
{
	struct vt t = { .prog = "t-hotremove-unbind" };

	VT_RUN_CLOSE(&t, test_unbind_user_closes);
	VT_RUN_CLOSE(&t, test_unbind_user_holds);
	return vt_done(&t);
}
