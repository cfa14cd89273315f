// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-close: the last close of a device fd (src/vfio_device.c).  The
 * bus driver resets the device then, which takes 100 ms for a function
 * level reset and, on real hardware, up to a minute for a device slow to
 * come back.  That must hold up nobody else: another user's open of
 * another group goes through meanwhile.  And a new fd of the device
 * itself is refused until the close is over, not handed a device in the
 * middle of its reset.
 *
 * The slow device is the slow machine's virtio-rng behind a root port
 * (run-suite.sh --machine slow), which has FLR; this program binds it to
 * vfio for its cases and gives it back.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define VIRTIO_VENDOR	0x1af4
#define VIRTIO_RNG	0x1044	/* non-transitional virtio-rng */
#define CLOSE_HEAD_MS	20	/* how far into the close the open starts */

static void skip_if_quick(struct vt *t, const char *dev,
			  const struct vt_closer *cl)
{
	if (cl->end_ms - cl->start_ms <= 2 * CLOSE_HEAD_MS)
		vt_skip(t, "the close of %s took only %llu ms: nothing to overlap",
			dev, (unsigned long long)(cl->end_ms - cl->start_ms));
}

/* The FLR device, bound to vfio, into dev; its driver into drv. */
static void slow_dev(struct vt *t, char *dev, char *drv, size_t len)
{
	if (vt_find_device(VIRTIO_VENDOR, VIRTIO_RNG, NULL, 0, dev) < 0)
		vt_skip(t, "no virtio-rng with FLR (run-suite.sh --machine slow)");
	VT_OK(t, vt_device_driver(dev, drv, len));
	VT_CHECKF(t, vt_bind_vfio(dev) == 0, "bind %s to vfio: %s", dev,
		  strerror(errno));
}

static void slow_dev_restore(const char *dev, const char *drv)
{
	if (*drv)
		vt_bind(dev, drv);
	else
		vt_unbind(dev);
}

/*
 * The preamble of both cases: bind the slow device to vfio (names into
 * dev and drv), open it into *a and start the last close of its device
 * fd in *thr, which the case joins.  a->device_fd is left -1.
 */
static void open_and_start_close(struct vt *t, char *dev, char *drv,
				 size_t len, struct vt_dev *a,
				 struct vt_closer *cl, pthread_t *thr)
{
	int ret;

	slow_dev(t, dev, drv, len);
	ret = vt_open_dev(a, dev);
	if (ret < 0)
		slow_dev_restore(dev, drv);
	VT_CHECKF(t, ret == 0, "open %s: %s", dev, strerror(errno));
	*cl = (struct vt_closer){ .fd = a->device_fd };
	a->device_fd = -1;
	vt_start_close(t, thr, cl, CLOSE_HEAD_MS);
}

/* The slow device's reset must not hold up edu0's user. */
static void test_reset_does_not_block_others(struct vt *t, void *arg)
{
	char dev[VT_DEV_NAME_LEN], drv[64];
	struct vt_dev a, b;
	struct vt_closer cl;
	uint64_t begin, end;
	pthread_t thr;
	int ret;

	(void)arg;
	open_and_start_close(t, dev, drv, sizeof(drv), &a, &cl, &thr);
	begin = vt_now_ms();
	ret = vt_open_dev(&b, VT_EDU0);
	end = vt_now_ms();
	pthread_join(thr, NULL);
	VT_CHECKF(t, ret == 0, "open %s: %s", VT_EDU0, strerror(errno));
	printf("# last close of %s: %llu ms; open of %s %llu ms into it: "
	       "%llu ms\n", dev,
	       (unsigned long long)(cl.end_ms - cl.start_ms), VT_EDU0,
	       (unsigned long long)(begin - cl.start_ms),
	       (unsigned long long)(end - begin));
	vt_close_dev(&b);
	vt_close_dev(&a);
	slow_dev_restore(dev, drv);
	skip_if_quick(t, dev, &cl);
	VT_CHECKF(t, end < cl.end_ms,
		  "the open of %s ended %llu ms after %s's close did",
		  VT_EDU0, (unsigned long long)(end - cl.end_ms), dev);
}

/* A second fd of a device mid-close: EBUSY, then fine once it is done. */
static void test_open_while_closing(struct vt *t, void *arg)
{
	char dev[VT_DEV_NAME_LEN], drv[64];
	struct vt_closer cl;
	struct vt_dev a;
	pthread_t thr;
	int fd, ret;

	(void)arg;
	open_and_start_close(t, dev, drv, sizeof(drv), &a, &cl, &thr);
	fd = vt_device_fd(a.group_fd, dev);
	if (fd < 0 && errno == EBUSY)
		fd = -2;	/* refused mid-close, as it should be */
	pthread_join(thr, NULL);
	if (fd >= 0)
		close(fd);
	a.device_fd = vt_device_fd(a.group_fd, dev);
	ret = a.device_fd >= 0 ? 0 : errno;
	vt_close_dev(&a);
	slow_dev_restore(dev, drv);
	skip_if_quick(t, dev, &cl);
	VT_CHECKF(t, fd == -2, "GET_DEVICE_FD during the last close: %d (%s), "
		  "want EBUSY", fd, fd == -1 ? strerror(errno) : "an fd");
	VT_CHECKF(t, ret == 0, "GET_DEVICE_FD after the close: %s",
		  strerror(ret));
}

int main(void)
{
	struct vt t = { .prog = "t-device-close" };

	VT_RUN_CLOSE(&t, test_reset_does_not_block_others);
	VT_RUN_CLOSE(&t, test_open_while_closing);
	return vt_done(&t);
}
