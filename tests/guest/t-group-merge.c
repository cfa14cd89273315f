// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-group-merge: VFIO_GROUP_MERGE / VFIO_GROUP_UNMERGE with the two edu
 * groups.  The mergee must be idle (-EBUSY), the merger may be in use;
 * a merged set has one IOMMU object, reachable (with every device of the
 * set) from any of its group fds; a group with an open device cannot
 * leave (-EBUSY); after unmerge the groups are independent again.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)

static int open_group(struct vt *t, const char *dev)
{
	int fd = vt_open_group_of(dev);

	VT_CHECKF(t, fd >= 0, "open the group of %s: %s", dev, strerror(errno));
	return fd;
}

static int merge(int group, int32_t other)
{
	return ioctl(group, VFIO_GROUP_MERGE, &other);
}

static int unmerge(int group)
{
	return ioctl(group, VFIO_GROUP_UNMERGE);
}

static uint32_t group_flags(struct vt *t, int group)
{
	uint32_t f;

	VT_OK(t, vt_group_flags(group, &f));
	return f;
}

/* ---- just enough edu to prove where a device's DMA goes ---------------- */

static void edu_setup(struct vt *t, struct vt_edu *e, int dev)
{
	VT_CHECKF(t, vt_edu_init(e, dev) == 0,
		  "edu setup (id register 0x%08x): %s", e->id, strerror(errno));
}

static uint8_t *buffer(struct vt *t, uint8_t fill)
{
	uint8_t *p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	VT_CHECKF(t, p != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(p, fill, 2 * PG);
	return p;
}

/* ---- cases ------------------------------------------------------------- */

static void test_merge_bad_fds(struct vt *t, void *arg)
{
	int a = open_group(t, VT_EDU0);
	int other, closed, iommu;

	(void)arg;
	VT_ERRNO(t, merge(a, a), EINVAL);
	other = VT_OK(t, open("/dev/null", O_RDWR));
	VT_ERRNO(t, merge(a, other), EINVAL);
	close(other);
	/* An IOMMU fd is a vfio fd, but not a group. */
	{
		int b = open_group(t, VT_EDU1);

		iommu = VT_OK(t, vt_iommu_fd(b));
		VT_ERRNO(t, merge(a, iommu), EINVAL);
		close(iommu);
		close(b);
	}
	closed = VT_OK(t, dup(a));
	close(closed);
	VT_ERRNO(t, merge(a, closed), EBADF);
	errno = 0;
	VT_CHECKF(t, merge(a, -1) == -1 && (errno == EINVAL || errno == EBADF),
		  "merge of fd -1: %s", strerror(errno));
	VT_ERRNO(t, ioctl(a, VFIO_GROUP_MERGE, (void *)8), EFAULT);
	close(a);
}

static void test_unmerge_not_merged(struct vt *t, void *arg)
{
	int a = open_group(t, VT_EDU0);

	(void)arg;
	VT_ERRNO(t, unmerge(a), EINVAL);
	close(a);
}

static void test_merge_busy_mergee(struct vt *t, void *arg)
{
	int a = open_group(t, VT_EDU0);
	int b = open_group(t, VT_EDU1);
	int fd;

	(void)arg;
	fd = VT_OK(t, vt_iommu_fd(b));
	VT_ERRNO(t, merge(a, b), EBUSY);
	close(fd);
	fd = VT_OK(t, vt_device_fd(b, VT_EDU1));
	VT_ERRNO(t, merge(a, b), EBUSY);
	close(fd);
	/* Refused merges changed nothing. */
	VT_ERRNO(t, unmerge(b), EINVAL);
	VT_ERRNO(t, vt_device_fd(a, VT_EDU1), ENODEV);
	close(b);
	close(a);
}

/* Both idle; either member may leave, then neither is merged. */
static void test_merge_idle(struct vt *t, void *arg)
{
	int a = open_group(t, VT_EDU0);
	int b = open_group(t, VT_EDU1);
	int dev;

	(void)arg;
	VT_OK(t, merge(a, b));
	/* Merged: each fd reaches the other group's device. */
	dev = VT_OK(t, vt_device_fd(b, VT_EDU0));
	close(dev);
	/* Already one set: merging again must not succeed. */
	errno = 0;
	VT_CHECKF(t, merge(a, b) == -1 && (errno == EINVAL || errno == EBUSY),
		  "second merge of the same pair: %s, want EINVAL or EBUSY",
		  strerror(errno));
	VT_OK(t, unmerge(a));			/* the merger leaves */
	VT_ERRNO(t, unmerge(b), EINVAL);
	VT_ERRNO(t, unmerge(a), EINVAL);
	VT_ERRNO(t, vt_device_fd(b, VT_EDU0), ENODEV);
	close(b);
	close(a);
}

/*
 * The documented flow: merge an idle group into one in use, use one
 * IOMMU for both devices, take the group out again.
 */
static void test_merge_in_use(struct vt *t, void *arg)
{
	const uint64_t iova = 0x100000;
	int a, b, iommu_a, iommu_b, dev1, dev0;
	uint8_t *buf_a, *buf_b;
	long d, pins, now;
	struct vt_edu e;
	uint32_t f;

	(void)arg;
	pins = vt_pinned_now();
	a = open_group(t, VT_EDU0);
	b = open_group(t, VT_EDU1);
	iommu_a = VT_OK(t, vt_iommu_fd(a));
	buf_a = buffer(t, 0xcc);
	memset(buf_a, 0x5e, 1000);
	VT_OK(t, vt_map(iommu_a, buf_a, iova, 2 * PG, RW));

	VT_OK(t, merge(a, b));
	f = group_flags(t, b);
	VT_CHECKF(t, f & VFIO_GROUP_FLAGS_MM_LOCKED,
		  "merged group's flags 0x%x: the set's owner is not shown", f);
	VT_CHECKF(t, f & VFIO_GROUP_FLAGS_VIABLE, "merged set not viable: 0x%x",
		  f);

	/* One IOMMU object: B's IOMMU fd sees A's mapping. */
	iommu_b = VT_OK(t, vt_iommu_fd(b));
	VT_ERRNO(t, vt_map(iommu_b, buf_a, iova, PG, RW), EBUSY);
	close(iommu_b);

	/* edu1 (group B), reached through A's fd, DMAs via A's map. */
	dev1 = VT_OK(t, vt_device_fd(a, VT_EDU1));
	dev0 = VT_OK(t, vt_device_fd(b, VT_EDU0));
	close(dev0);
	edu_setup(t, &e, dev1);
	VT_OK(t, vt_edu_dma(&e, 0, iova, 1000));
	VT_OK(t, vt_edu_dma(&e, 1, iova + PG, 1000));
	d = vt_fill_diff(buf_a + PG, 1000, 0x5e);
	VT_CHECKF(t, d < 0, "edu1 DMA through the merged IOMMU: byte %ld is "
		  "0x%02x", d, d < 0 ? 0 : buf_a[PG + d]);

	/* B may not leave while its device is open... */
	VT_ERRNO(t, unmerge(b), EBUSY);
	close(dev1);
	/* ...and may once it is closed, A staying in use. */
	VT_OK(t, unmerge(b));
	VT_ERRNO(t, unmerge(b), EINVAL);
	VT_ERRNO(t, vt_device_fd(a, VT_EDU1), ENODEV);
	VT_ERRNO(t, vt_device_fd(b, VT_EDU0), ENODEV);

	/* Independent again: B gets an IOMMU of its own, empty. */
	f = group_flags(t, b);
	VT_CHECKF(t, !(f & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "unmerged idle group still MM_LOCKED: 0x%x", f);
	iommu_b = VT_OK(t, vt_iommu_fd(b));
	buf_b = buffer(t, 0x77);
	VT_OK(t, vt_map(iommu_b, buf_b, iova, 2 * PG, RW));
	dev1 = VT_OK(t, vt_device_fd(b, VT_EDU1));
	edu_setup(t, &e, dev1);
	memset(buf_a + PG, 0xcc, PG);
	VT_OK(t, vt_edu_dma(&e, 0, iova, 1000));
	VT_OK(t, vt_edu_dma(&e, 1, iova + PG, 1000));
	d = vt_fill_diff(buf_b + PG, 1000, 0x77);
	VT_CHECKF(t, d < 0, "edu1 after unmerge: byte %ld of B's buffer", d);
	d = vt_fill_diff(buf_a + PG, PG, 0xcc);
	VT_CHECKF(t, d < 0, "edu1 after unmerge still reached A's memory (%ld)",
		  d);
	/* A's mapping survived B's departure. */
	VT_ERRNO(t, vt_map(iommu_a, buf_a, iova, PG, RW), EBUSY);

	close(dev1);
	close(iommu_b);
	now = vt_pinned_now();
	VT_CHECKF(t, now == pins + 2, "B's IOMMU closed: %ld pages pinned, want "
		  "%ld (A's map)", now - pins, 2L);
	close(iommu_a);
	now = vt_pinned_now();
	VT_CHECKF(t, now == pins, "every IOMMU fd closed, %ld pages still pinned",
		  now - pins);
	close(b);
	close(a);
	munmap(buf_a, 2 * PG);
	munmap(buf_b, 2 * PG);
}

/*
 * A failed case may leave the groups merged: take them apart so that the
 * next case and the next program find two independent groups.
 */
static void unmerge_all(void)
{
	int a = vt_open_group_of(VT_EDU0);
	int b = vt_open_group_of(VT_EDU1);

	if (b >= 0 && unmerge(b) == 0)
		printf("# cleanup: unmerged the group of %s\n", VT_EDU1);
	if (a >= 0 && unmerge(a) == 0)
		printf("# cleanup: unmerged the group of %s\n", VT_EDU0);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

#define RUN(t, fn) do {							\
	VT_RUN_CLOSE(t, fn);						\
	unmerge_all();							\
} while (0)

int main(void)
{
	struct vt t = { .prog = "t-group-merge" };

	RUN(&t, test_merge_bad_fds);
	RUN(&t, test_unmerge_not_merged);
	RUN(&t, test_merge_busy_mergee);
	RUN(&t, test_merge_idle);
	RUN(&t, test_merge_in_use);
	return vt_done(&t);
}
