// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-kill: a process that dies holding maps (SIGKILL, or exit without
 * closing anything) must leave nothing pinned and must release the
 * group's ownership so that the next process can take it.  One killed
 * in the middle of a pread of a whole BAR must die at once, not after
 * the last of its many trapped MMIO accesses.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define RW		(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)
#define CHILD_PAGES	256
#define SETTLE_MS	3000	/* bound for the exit path to unpin */

enum how_to_die { DIE_SIGKILL, DIE_EXIT };

struct victim {
	pid_t pid;
	int ready;	/* read end: one byte once the child holds its maps */
};

static long pinned(struct vt *t)
{
	long n = vt_pinned_now();

	if (n < 0)
		vt_skip(t, "no nr_foll_pin_* in /proc/vmstat: %s",
			strerror(errno));
	return n;
}

/* Child: take dev's group, map CHILD_PAGES in two maps, hold a device fd. */
static void __attribute__((noreturn)) victim_body(int ready, const char *dev,
						  enum how_to_die how)
{
	int group, iommu, device;
	uint8_t *buf;
	char c = 'r';

	/* Never outlive a test program that failed before killing us. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	group = vt_open_group_of(dev);
	if (group < 0)
		_exit(10);
	iommu = vt_iommu_fd(group);
	if (iommu < 0)
		_exit(11);
	buf = mmap(NULL, CHILD_PAGES * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(12);
	memset(buf, 0x66, CHILD_PAGES * PG);
	if (vt_map(iommu, buf, 0x100000, CHILD_PAGES / 2 * PG, RW) ||
	    vt_map(iommu, buf + CHILD_PAGES / 2 * PG, 0x1000000,
		   CHILD_PAGES / 2 * PG, RW))
		_exit(13);
	device = vt_device_fd(group, dev);
	if (device < 0)
		_exit(14);
	if (write(ready, &c, 1) != 1)
		_exit(15);
	if (how == DIE_EXIT)
		_exit(0);	/* every fd still open */
	for (;;)
		pause();
}

static void victim_start(struct vt *t, struct victim *v, const char *dev,
			 enum how_to_die how)
{
	int p[2], status;
	char c;

	VT_OK(t, pipe(p));
	fflush(stdout);
	v->pid = VT_OK(t, fork());
	if (v->pid == 0) {
		close(p[0]);
		victim_body(p[1], dev, how);
	}
	close(p[1]);
	v->ready = p[0];
	if (read(v->ready, &c, 1) != 1) {
		waitpid(v->pid, &status, 0);
		vt_fail(t, __FILE__, __LINE__,
			"child never got ready (status 0x%x: exit 10 open, "
			"11 iommu fd, 13 map, 14 device fd)", status);
	}
}

/* Wait (bounded) for the pinned count to drop back to want. */
static long settle(struct vt *t, long want)
{
	uint64_t end = vt_now_ms() + SETTLE_MS;
	long now;

	while ((now = pinned(t)) != want && vt_now_ms() < end)
		usleep(10000);
	return now;
}

static void check_released(struct vt *t, const char *dev, long start)
{
	uint32_t flags;
	int group, iommu;
	long now;

	now = settle(t, start);
	VT_CHECKF(t, now == start, "%ld pages still pinned %d ms after the "
		  "owner died", now - start, SETTLE_MS);
	group = vt_open_group_of(dev);
	VT_CHECKF(t, group >= 0, "open the group of %s: %s", dev,
		  strerror(errno));
	VT_OK(t, vt_group_flags(group, &flags));
	VT_CHECKF(t, !(flags & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "group still MM_LOCKED (0x%x) after its owner died", flags);
	iommu = VT_OK(t, vt_iommu_fd(group));
	/* The dead owner's IOVAs are free again. */
	{
		uint8_t *b = mmap(NULL, PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		VT_CHECKF(t, b != MAP_FAILED, "mmap: %s", strerror(errno));
		b[0] = 1;
		VT_OK(t, vt_map(iommu, b, 0x100000, PG, RW));
		VT_OK(t, vt_unmap(iommu, 0x100000, PG));
		munmap(b, PG);
	}
	close(iommu);
	close(group);
}

static void test_sigkill_unpins(struct vt *t, void *arg)
{
	struct victim v;
	long start, held;
	int status;

	(void)arg;
	start = pinned(t);
	victim_start(t, &v, VT_EDU0, DIE_SIGKILL);
	held = pinned(t);
	if (held != start + CHILD_PAGES) {
		kill(v.pid, SIGKILL);
		waitpid(v.pid, &status, 0);
		vt_fail(t, __FILE__, __LINE__, "child's maps pinned %ld "
			"pages, want %d", held - start, CHILD_PAGES);
	}
	VT_OK(t, kill(v.pid, SIGKILL));
	VT_OK(t, waitpid(v.pid, &status, 0));
	VT_CHECKF(t, WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "child status 0x%x", status);
	close(v.ready);
	check_released(t, VT_EDU0, start);
}

static void test_exit_unpins(struct vt *t, void *arg)
{
	struct victim v;
	long start;
	int status;

	(void)arg;
	start = pinned(t);
	victim_start(t, &v, VT_EDU1, DIE_EXIT);
	VT_OK(t, waitpid(v.pid, &status, 0));
	VT_CHECKF(t, WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child status 0x%x", status);
	close(v.ready);
	check_released(t, VT_EDU1, start);
}

/* Several owners killed at once, on different groups. */
static void test_sigkill_many(struct vt *t, void *arg)
{
	static const char *const devs[] = { VT_EDU0, VT_EDU1, VT_TESTDEV0 };
	struct victim v[3];
	long start;
	int i, status;

	(void)arg;
	start = pinned(t);
	for (i = 0; i < 3; i++)
		victim_start(t, &v[i], devs[i], DIE_SIGKILL);
	for (i = 0; i < 3; i++)
		kill(v[i].pid, SIGKILL);
	for (i = 0; i < 3; i++) {
		VT_OK(t, waitpid(v[i].pid, &status, 0));
		close(v[i].ready);
	}
	for (i = 0; i < 3; i++)
		check_released(t, devs[i], start);
}

#define KILL_BOUND_MS	2000	/* SIGKILL to reaped, whatever the pread */
#define READ_MAX	(256UL << 20)	/* longest pread the reader makes */
#define READ_BACKING	(2UL << 20)	/* memory behind its buffer */

/*
 * The largest memory BAR of a device bound to vfio: its name into dev
 * and its region index, size into *size.  edu's 1 MiB BAR0 in the usual
 * VM; a bigger one when the VM was given one (pci-testdev,membar=512M).
 */
static int biggest_bar(char *dev, uint64_t *size)
{
	static const char drvdir[] = "/sys/bus/pci/drivers/vfio";
	int best = -1, i;
	struct dirent *e;
	char path[300];
	DIR *dir;

	*size = 0;
	dir = opendir(drvdir);
	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		unsigned long long st, en, fl;
		FILE *f;

		if (strlen(e->d_name) != 12 || e->d_name[4] != ':')
			continue;
		snprintf(path, sizeof(path), "%s/%s/resource", drvdir,
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		for (i = 0; i < 6 &&
		     fscanf(f, "%llx %llx %llx", &st, &en, &fl) == 3; i++) {
			if (!(fl & 0x200) || !en || en - st + 1 <= *size)
				continue;	/* not IORESOURCE_MEM or smaller */
			*size = en - st + 1;
			best = i;
			snprintf(dev, VT_DEV_NAME_LEN, "%s", e->d_name);
		}
		fclose(f);
	}
	closedir(dir);
	return best;
}

/*
 * A READ_MAX buffer of READ_BACKING bytes mapped over and over: a huge
 * pread must not need as much guest memory.
 */
static uint8_t *read_buffer(void)
{
	uint8_t *buf;
	size_t off;
	int fd;

	fd = memfd_create("t-kill", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, READ_BACKING))
		return NULL;
	buf = mmap(NULL, READ_MAX, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	for (off = 0; buf != MAP_FAILED && off < READ_MAX; off += READ_BACKING)
		if (mmap(buf + off, READ_BACKING, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
			buf = MAP_FAILED;
	close(fd);
	return buf == MAP_FAILED ? NULL : buf;
}

/* Child: pread the BAR through the inherited fd, for ever. */
static void __attribute__((noreturn)) reader_body(int ready, int fd,
						  uint64_t off, size_t len)
{
	uint8_t *buf = read_buffer();
	char c = 'r';

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!buf || write(ready, &c, 1) != 1)
		_exit(10);
	for (;;)
		if (pread(fd, buf, len, off) < 0)
			_exit(11);
}

/*
 * A pread of a whole BAR is one access per 4 bytes, each trapping into
 * QEMU: about 30 ms for edu's 1 MiB, which any kernel finishes within
 * the bound, but some 20 s for READ_MAX of a big BAR, which only a pread
 * that gives up on a fatal signal does: the slow machine's 512 MiB
 * pci-testdev (run-suite.sh --machine slow) shows that.  The
 * kill lands early in the child's first pread.  The device fd stays open in
 * the parent, so the child's exit does not release the device and the
 * time measured is that of the pread giving up.
 */
static void test_sigkill_in_bar_pread(struct vt *t, void *arg)
{
	struct vfio_region_info info;
	char dev[VT_DEV_NAME_LEN];
	uint64_t size, start, took;
	int bar, p[2], status;
	struct vt_dev d;
	size_t len;
	pid_t pid;
	char c;

	(void)arg;
	bar = biggest_bar(dev, &size);
	if (bar < 0)
		vt_skip(t, "no memory BAR on a device bound to vfio");
	VT_OK(t, vt_open_dev(&d, dev));
	VT_OK(t, vt_region_info(d.device_fd, bar, &info));
	len = info.size < READ_MAX ? info.size : READ_MAX;

	VT_OK(t, pipe(p));
	fflush(stdout);
	pid = VT_OK(t, fork());
	if (pid == 0) {
		close(p[0]);
		reader_body(p[1], d.device_fd, info.offset, len);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		vt_fail(t, __FILE__, __LINE__, "child never got ready "
			"(status 0x%x)", status);
	}
	usleep(300000);
	start = vt_now_ms();
	VT_OK(t, kill(pid, SIGKILL));
	VT_OK(t, waitpid(pid, &status, 0));
	took = vt_now_ms() - start;
	printf("# %s BAR%d: pread of %zu bytes, SIGKILL to reaped %llu ms\n",
	       dev, bar, len, (unsigned long long)took);
	VT_CHECKF(t, WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "child status 0x%x", status);
	VT_CHECKF(t, took < KILL_BOUND_MS, "the killed reader of %s BAR%d "
		  "took %llu ms to die", dev, bar, (unsigned long long)took);
	close(p[0]);
	vt_close_dev(&d);
}

int main(void)
{
	struct vt t = { .prog = "t-kill" };

	VT_RUN_CLOSE(&t, test_sigkill_unpins);
	VT_RUN_CLOSE(&t, test_exit_unpins);
	VT_RUN_CLOSE(&t, test_sigkill_many);
	VT_RUN_CLOSE(&t, test_sigkill_in_bar_pread);
	return vt_done(&t);
}
