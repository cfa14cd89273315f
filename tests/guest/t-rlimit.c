// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-rlimit: pinned pages and their charge.  MAP_DMA pins every page (the
 * guest-wide FOLL_PIN count goes up by exactly the mapped pages) and
 * charges it to the owner's locked memory (VmLck), against RLIMIT_MEMLOCK
 * unless the owner has CAP_IPC_LOCK; unmap and close give back both.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)
#define SMALL_LIMIT	(64 * 1024)	/* RLIMIT_MEMLOCK for the child */
#define HUGE_2M		(2UL << 20)

/*
 * Run fn in a forked child; a failure there comes back as the parent's
 * failure.  prep runs first in the child, outside the checks (privilege
 * changes).
 */
static void in_child(struct vt *t, vt_child_fn prep, vt_child_fn fn,
		     void *arg)
{
	char msg[1024];

	if (vt_child_run((uid_t)-1, (gid_t)-1, prep, fn, arg, t->name, msg,
			 sizeof(msg)))
		vt_fail(t, __FILE__, __LINE__, "in the child: %s", msg);
}

static long pinned(struct vt *t)
{
	long n = vt_pinned_now();

	if (n < 0 && errno == ENOENT)
		vt_skip(t, "no nr_foll_pin_* in /proc/vmstat");
	VT_CHECKF(t, n >= 0, "read the pin counters: %s", strerror(errno));
	return n;
}

static long locked_kb(struct vt *t)
{
	long kb = vt_locked_kb(0);

	VT_CHECKF(t, kb >= 0, "no VmLck in /proc/self/status: %s",
		  strerror(errno));
	return kb;
}

static void acct_start(struct vt *t, struct vt_acct *a)
{
	a->pins = pinned(t);
	a->kb = locked_kb(t);
}

static void *anon(struct vt *t, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	VT_CHECKF(t, p != MAP_FAILED, "mmap %zu bytes: %s", len, strerror(errno));
	memset(p, 0x33, len);
	return p;
}

struct owner {
	int group;
	int iommu;
};

static void owner_open(struct vt *t, struct owner *o)
{
	o->group = vt_open_group_of(VT_TESTDEV0);
	VT_CHECKF(t, o->group >= 0, "open the group of %s: %s", VT_TESTDEV0,
		  strerror(errno));
	o->iommu = VT_OK(t, vt_iommu_fd(o->group));
}

static void test_pins_follow_maps(struct vt *t, void *arg)
{
	const size_t npages = 64;
	struct owner o;
	struct vt_acct a;
	uint8_t *buf;

	(void)arg;
	owner_open(t, &o);
	buf = anon(t, npages * PG);
	acct_start(t, &a);
	VT_OK(t, vt_map(o.iommu, buf, 0x1000000, npages * PG, RW));
	VT_CHECK_ACCT(t, &a, npages);
	VT_OK(t, vt_unmap(o.iommu, 0x1000000, 16 * PG));
	VT_CHECK_ACCT(t, &a, npages - 16);
	VT_OK(t, vt_unmap(o.iommu, 0x1000000, npages * PG));
	VT_CHECK_ACCT(t, &a, 0);
	munmap(buf, npages * PG);
	close(o.iommu);
	close(o.group);
}

/* Transparent huge pages: 2 MiB aligned anonymous memory, 4 KiB units. */
static void test_pins_thp(struct vt *t, void *arg)
{
	const size_t len = 4 * HUGE_2M;
	uint8_t *raw, *buf;
	struct owner o;
	struct vt_acct a;

	(void)arg;
	owner_open(t, &o);
	raw = mmap(NULL, len + HUGE_2M, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, raw != MAP_FAILED, "mmap: %s", strerror(errno));
	buf = (uint8_t *)(((uintptr_t)raw + HUGE_2M - 1) & ~(HUGE_2M - 1));
	madvise(buf, len, MADV_HUGEPAGE);
	memset(buf, 0x44, len);
	acct_start(t, &a);
	VT_OK(t, vt_map(o.iommu, buf, 0x2000000, len, RW));
	VT_CHECK_ACCT(t, &a, len / PG);
	/* Cut one huge page in the middle of its IOVA range. */
	VT_OK(t, vt_unmap(o.iommu, 0x2000000 + HUGE_2M + 3 * PG, 5 * PG));
	VT_CHECK_ACCT(t, &a, len / PG - 5);
	close(o.iommu);
	VT_CHECK_ACCT(t, &a, 0);
	munmap(raw, len + HUGE_2M);
	close(o.group);
}

static void test_pins_hugetlbfs(struct vt *t, void *arg)
{
	const char *path = "/dev/hugepages/t-rlimit";
	struct owner o;
	struct vt_acct a;
	uint8_t *buf;
	int fd;

	(void)arg;
	fd = open(path, O_CREAT | O_RDWR, 0600);
	if (fd < 0)
		vt_skip(t, "%s: %s (hugetlbfs not mounted?)", path,
			strerror(errno));
	unlink(path);
	buf = mmap(NULL, 2 * HUGE_2M, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	close(fd);
	if (buf == MAP_FAILED)
		vt_skip(t, "no 2 MiB huge pages (hugepages= on the command "
			"line): %s", strerror(errno));
	memset(buf, 0x55, 2 * HUGE_2M);
	owner_open(t, &o);
	acct_start(t, &a);
	VT_OK(t, vt_map(o.iommu, buf, 0x4000000, 2 * HUGE_2M, RW));
	VT_CHECK_ACCT(t, &a, 2 * HUGE_2M / PG);
	VT_OK(t, vt_unmap(o.iommu, 0x4000000, HUGE_2M));
	VT_CHECK_ACCT(t, &a, HUGE_2M / PG);
	VT_OK(t, vt_unmap(o.iommu, 0x4000000, 2 * HUGE_2M));
	VT_CHECK_ACCT(t, &a, 0);
	munmap(buf, 2 * HUGE_2M);
	close(o.iommu);
	close(o.group);
}

/* Closing the IOMMU fd with maps in place gives the charge back too. */
static void test_close_uncharges(struct vt *t, void *arg)
{
	struct owner o;
	struct vt_acct a;
	uint8_t *buf;

	(void)arg;
	owner_open(t, &o);
	buf = anon(t, 32 * PG);
	acct_start(t, &a);
	VT_OK(t, vt_map(o.iommu, buf, 0x1000000, 16 * PG, RW));
	VT_OK(t, vt_map(o.iommu, buf + 16 * PG, 0x3000000, 16 * PG, RW));
	VT_CHECK_ACCT(t, &a, 32);
	VT_OK(t, close(o.iommu));
	VT_CHECK_ACCT(t, &a, 0);
	munmap(buf, 32 * PG);
	close(o.group);
}

/* Open the group as root, then become the plain user with a small limit. */
static void prep_limited_user(struct vt *t, void *arg)
{
	struct rlimit rl = { SMALL_LIMIT, SMALL_LIMIT };
	struct owner *o = arg;

	o->group = vt_open_group_of(VT_TESTDEV0);
	VT_CHECKF(t, o->group >= 0, "open the group: %s", strerror(errno));
	VT_OK(t, setrlimit(RLIMIT_MEMLOCK, &rl));
	VT_OK(t, setgroups(0, NULL));
	VT_OK(t, setgid(VT_USER_GID));
	VT_OK(t, setuid(VT_USER_UID));
}

static void prep_limited_root(struct vt *t, void *arg)
{
	struct rlimit rl = { SMALL_LIMIT, SMALL_LIMIT };
	struct owner *o = arg;

	o->group = vt_open_group_of(VT_TESTDEV0);
	VT_CHECKF(t, o->group >= 0, "open the group: %s", strerror(errno));
	VT_OK(t, setrlimit(RLIMIT_MEMLOCK, &rl));
}

static void child_over_limit(struct vt *t, void *arg)
{
	const size_t limit_pages = SMALL_LIMIT / PG;
	struct owner *o = arg;
	struct vt_acct a;
	uint8_t *buf;

	o->iommu = VT_OK(t, vt_iommu_fd(o->group));
	buf = anon(t, 4 * limit_pages * PG);
	acct_start(t, &a);
	/* Half the limit fits. */
	VT_OK(t, vt_map(o->iommu, buf, 0x1000000, limit_pages / 2 * PG, RW));
	VT_CHECK_ACCT(t, &a, limit_pages / 2);
	/* One more map that would cross it fails and pins nothing. */
	VT_ERRNO(t, vt_map(o->iommu, buf + limit_pages * PG, 0x2000000,
			   limit_pages * PG, RW), ENOMEM);
	VT_CHECK_ACCT(t, &a, limit_pages / 2);
	/* A single map past the limit on its own, likewise. */
	VT_OK(t, vt_unmap(o->iommu, 0x1000000, limit_pages / 2 * PG));
	VT_ERRNO(t, vt_map(o->iommu, buf, 0x1000000, 4 * limit_pages * PG,
			   RW), ENOMEM);
	VT_CHECK_ACCT(t, &a, 0);
	/* Exactly the limit is allowed. */
	VT_OK(t, vt_map(o->iommu, buf, 0x1000000, limit_pages * PG, RW));
	VT_CHECK_ACCT(t, &a, limit_pages);
	VT_OK(t, vt_unmap(o->iommu, 0x1000000, limit_pages * PG));
	VT_CHECK_ACCT(t, &a, 0);
	close(o->iommu);
	close(o->group);
}

static void test_rlimit_enomem(struct vt *t, void *arg)
{
	struct owner o = { -1, -1 };
	long start;

	(void)arg;
	start = pinned(t);
	in_child(t, prep_limited_user, child_over_limit, &o);
	VT_CHECKF(t, pinned(t) == start, "%ld pages still pinned after the "
		  "child exited", pinned(t) - start);
}

static void child_exempt(struct vt *t, void *arg)
{
	const size_t npages = 4 * SMALL_LIMIT / PG;
	struct owner *o = arg;
	struct vt_acct a;
	uint8_t *buf;

	o->iommu = VT_OK(t, vt_iommu_fd(o->group));
	buf = anon(t, npages * PG);
	a.pins = pinned(t);
	VT_OK(t, vt_map(o->iommu, buf, 0x1000000, npages * PG, RW));
	VT_CHECKF(t, pinned(t) == a.pins + (long)npages,
		  "%ld pinned, want %ld", pinned(t), a.pins + (long)npages);
	VT_OK(t, vt_unmap(o->iommu, 0x1000000, npages * PG));
	close(o->iommu);
	close(o->group);
}

/* CAP_IPC_LOCK (root) is not held to RLIMIT_MEMLOCK. */
static void test_cap_ipc_lock_exempt(struct vt *t, void *arg)
{
	struct owner o = { -1, -1 };

	(void)arg;
	in_child(t, prep_limited_root, child_exempt, &o);
}

int main(void)
{
	struct vt t = { .prog = "t-rlimit" };

	VT_RUN_CLOSE(&t, test_pins_follow_maps);
	VT_RUN_CLOSE(&t, test_pins_thp);
	VT_RUN_CLOSE(&t, test_pins_hugetlbfs);
	VT_RUN_CLOSE(&t, test_close_uncharges);
	VT_RUN_CLOSE(&t, test_rlimit_enomem);
	VT_RUN_CLOSE(&t, test_cap_ipc_lock_exempt);
	return vt_done(&t);
}
