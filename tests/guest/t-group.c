// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-group: the group char devices, their sysfs view, VFIO_GROUP_GET_INFO
 * and group viability (Documentation/vfio.txt, "Groups, Devices, and
 * IOMMUs").  The ICH9 functions at 00:1f.x share one IOMMU group and are
 * the multi-device case: viability must follow every member's driver.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define EDU0		VT_EDU0
#define EDU1		VT_EDU1
#define TESTDEV0	VT_TESTDEV0
#define ICH9_LPC	"0000:00:1f.0"
#define ICH9_SMBUS	"0000:00:1f.3"
#define MAX_MEMBERS	16

/* vt.h's VT_CHECK takes no format arguments; this one reports values. */
/* Bounded copy that always terminates (and keeps gcc's -Wformat quiet). */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

static int open_group(struct vt *t, const char *dev)
{
	int fd = vt_open_group_of(dev);

	VT_CHECKF(t, fd >= 0, "open the group of %s: %s", dev, strerror(errno));
	return fd;
}

static uint32_t group_flags(struct vt *t, int group)
{
	uint32_t flags;

	VT_OK(t, vt_group_flags(group, &flags));
	return flags;
}

static void unbind(struct vt *t, const char *dev)
{
	VT_CHECKF(t, vt_unbind(dev) == 0, "unbind %s: %s", dev, strerror(errno));
}

static void bind_to(struct vt *t, const char *dev, const char *drv)
{
	VT_CHECKF(t, vt_bind(dev, drv) == 0, "bind %s to %s: %s", dev, drv,
		  strerror(errno));
}

static void test_node_exists(struct vt *t, void *arg)
{
	static const char *const devs[] = { EDU0, EDU1, TESTDEV0 };
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		int grp = vt_group_id(devs[i]);

		VT_CHECKF(t, grp >= 0, "%s has no iommu_group", devs[i]);
		snprintf(path, sizeof(path), "/dev/vfio/pci:%d", grp);
		VT_CHECKF(t, stat(path, &st) == 0, "stat %s: %s", path,
			  strerror(errno));
		VT_CHECKF(t, S_ISCHR(st.st_mode), "%s is not a char device",
			  path);
		snprintf(path, sizeof(path), "/sys/class/vfio/pci:%d", grp);
		VT_CHECKF(t, access(path, F_OK) == 0, "%s: %s", path,
			  strerror(errno));
	}
}

/* Names in dir (skipping dot entries), sorted, into names[]. */
static int list_dir(const char *dir, char names[][32], int max)
{
	struct dirent *de;
	int n = 0, i, j;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.')
			continue;
		copy_str(names[n++], 32, de->d_name);
	}
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char tmp[32];

			memcpy(tmp, names[j], 32);
			memcpy(names[j], names[j - 1], 32);
			memcpy(names[j - 1], tmp, 32);
		}
	return n;
}

/*
 * /sys/devices/virtual/vfio/pci:N/devices/ must hold one link per member
 * of IOMMU group N, each resolving to that member's PCI device.
 */
static void check_links(struct vt *t, int grp)
{
	char want[MAX_MEMBERS][32], got[MAX_MEMBERS][32];
	char dir[PATH_MAX], path[PATH_MAX * 2];
	char real_link[PATH_MAX], real_dev[PATH_MAX];
	int nwant, ngot, i;

	snprintf(dir, sizeof(dir), "/sys/kernel/iommu_groups/%d/devices", grp);
	nwant = list_dir(dir, want, MAX_MEMBERS);
	VT_CHECKF(t, nwant > 0, "%s: %s", dir, strerror(errno));
	snprintf(dir, sizeof(dir), "/sys/devices/virtual/vfio/pci:%d/devices",
		 grp);
	ngot = list_dir(dir, got, MAX_MEMBERS);
	VT_CHECKF(t, ngot >= 0, "%s: %s", dir, strerror(errno));
	VT_CHECKF(t, ngot == nwant, "%s has %d links, group has %d members",
		  dir, ngot, nwant);
	for (i = 0; i < nwant; i++) {
		VT_CHECKF(t, strcmp(want[i], got[i]) == 0,
			  "%s: link '%s' where member '%s' expected", dir,
			  got[i], want[i]);
		snprintf(path, sizeof(path), "%s/%s", dir, got[i]);
		VT_CHECKF(t, realpath(path, real_link), "realpath %s: %s", path,
			  strerror(errno));
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s",
			 want[i]);
		VT_CHECKF(t, realpath(path, real_dev), "realpath %s: %s", path,
			  strerror(errno));
		VT_CHECKF(t, strcmp(real_link, real_dev) == 0,
			  "link %s -> %s, device is %s", got[i], real_link,
			  real_dev);
	}
}

static void test_sysfs_links(struct vt *t, void *arg)
{
	(void)arg;
	check_links(t, vt_group_id(EDU0));
	check_links(t, vt_group_id(EDU1));
	check_links(t, vt_group_id(TESTDEV0));
}

static void test_info_argsz(struct vt *t, void *arg)
{
	struct {
		struct vfio_group_info info;
		unsigned char tail[64];
	} big;
	struct vfio_group_info info;
	int group = open_group(t, EDU0);

	(void)arg;
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info) - 1;
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_INFO, &info), EINVAL);
	info.argsz = 0;
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_INFO, &info), EINVAL);

	/* A newer user's larger struct is accepted; its tail is not ours. */
	memset(&big, 0x5a, sizeof(big));
	big.info.argsz = sizeof(big);
	big.info.flags = 0;
	VT_CHECKF(t, ioctl(group, VFIO_GROUP_GET_INFO, &big) == 0,
		  "GET_INFO with argsz %zu: %s", sizeof(big), strerror(errno));
	VT_CHECKF(t, big.info.flags & VFIO_GROUP_FLAGS_VIABLE,
		  "flags 0x%x lack VIABLE", big.info.flags);
	VT_CHECKF(t, big.tail[0] == 0x5a && big.tail[63] == 0x5a,
		  "kernel wrote past struct vfio_group_info");
	close(group);
}

/*
 * Seed bugs: the 2011 code or-ed bits into the caller's flags (stale bits
 * survived) and returned copy_to_user()'s byte count.  Both fixed: the
 * result is 0 and flags is exactly what holds now.
 */
static void test_info_flags_rewritten(struct vt *t, void *arg)
{
	struct vfio_group_info info;
	int group = open_group(t, EDU0);
	long ret;

	(void)arg;
	info.argsz = sizeof(info);
	info.flags = 0xffffffff;
	ret = ioctl(group, VFIO_GROUP_GET_INFO, &info);
	VT_CHECKF(t, ret == 0, "GET_INFO returned %ld (%s), want 0", ret,
		  ret < 0 ? strerror(errno) : "a byte count?");
	VT_CHECKF(t, info.flags == VFIO_GROUP_FLAGS_VIABLE,
		  "idle edu group: flags 0x%x, want exactly VIABLE (0x%x)",
		  info.flags, VFIO_GROUP_FLAGS_VIABLE);
	VT_CHECKF(t, info.argsz == sizeof(info), "argsz changed to %u",
		  info.argsz);
	close(group);
}

static void test_mm_locked_lifecycle(struct vt *t, void *arg)
{
	int group = open_group(t, EDU0);
	int iommu, dev;
	uint32_t f;

	(void)arg;
	f = group_flags(t, group);
	VT_CHECKF(t, !(f & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "MM_LOCKED (0x%x) with only the group open", f);

	iommu = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));
	f = group_flags(t, group);
	VT_CHECKF(t, f & VFIO_GROUP_FLAGS_MM_LOCKED,
		  "no MM_LOCKED (0x%x) with the IOMMU fd open", f);
	VT_OK(t, close(iommu));
	f = group_flags(t, group);
	VT_CHECKF(t, !(f & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "MM_LOCKED (0x%x) after the IOMMU fd closed", f);

	dev = VT_OK(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, EDU0));
	f = group_flags(t, group);
	VT_CHECKF(t, f & VFIO_GROUP_FLAGS_MM_LOCKED,
		  "no MM_LOCKED (0x%x) with a device fd open", f);
	VT_OK(t, close(dev));
	f = group_flags(t, group);
	VT_CHECKF(t, !(f & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "MM_LOCKED (0x%x) after the device fd closed", f);

	/* Lock held until the last of several fds goes. */
	iommu = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));
	dev = VT_OK(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, EDU0));
	VT_OK(t, close(iommu));
	f = group_flags(t, group);
	VT_CHECKF(t, f & VFIO_GROUP_FLAGS_MM_LOCKED,
		  "MM_LOCKED dropped (0x%x) while a device fd is open", f);
	VT_OK(t, close(dev));
	f = group_flags(t, group);
	VT_CHECKF(t, !(f & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "MM_LOCKED (0x%x) after the last fd closed", f);
	close(group);
}

static void test_device_fd_by_name(struct vt *t, void *arg)
{
	int group = open_group(t, EDU0);
	int dev;

	(void)arg;
	dev = VT_OK(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, EDU0));
	close(dev);
	/* A device of another (unmerged) group, and no device at all. */
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, EDU1), ENODEV);
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, "0000:00:02"),
		 ENODEV);
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, ""), ENODEV);
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, (void *)8), EFAULT);
	{
		/* A name far longer than any device's is refused cleanly. */
		char *name = malloc(3 * 4096);
		long ret;

		VT_CHECKF(t, name, "malloc failed");
		memset(name, 'a', 3 * 4096 - 1);
		name[3 * 4096 - 1] = '\0';
		errno = 0;
		ret = ioctl(group, VFIO_GROUP_GET_DEVICE_FD, name);
		free(name);
		VT_CHECKF(t, ret == -1 && (errno == EINVAL || errno == ENODEV ||
					   errno == ENAMETOOLONG),
			  "12 KiB device name: %ld/%s", ret, strerror(errno));
	}
	close(group);
}

/* Every IOMMU fd of a group is the one IOMMU object of that group. */
static void test_iommu_fds_shared(struct vt *t, void *arg)
{
	int group = open_group(t, EDU0);
	int io1, io2;
	uint8_t *page;

	(void)arg;
	io1 = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));
	io2 = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));
	VT_CHECKF(t, io1 != io2, "same fd number twice");
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, page != MAP_FAILED, "mmap: %s", strerror(errno));
	page[0] = 1;
	VT_OK(t, vt_map(io1, page, 0x100000, 4096, 0));
	VT_ERRNO(t, vt_map(io2, page, 0x100000, 4096, 0), EBUSY);
	VT_OK(t, vt_unmap(io2, 0x100000, 4096));
	VT_OK(t, vt_map(io1, page, 0x100000, 4096, 0));
	VT_OK(t, close(io2));
	/* The other fd still holds the object and its map. */
	VT_ERRNO(t, vt_map(io1, page, 0x100000, 4096, 0), EBUSY);
	VT_OK(t, vt_unmap(io1, 0x100000, 4096));
	close(io1);
	munmap(page, 4096);
	close(group);
}

/*
 * The IOMMU and device fds outlive the group fd they came from: the
 * ownership stays until they close, whoever looks.
 */
static void test_group_fd_closed_first(struct vt *t, void *arg)
{
	int group = open_group(t, EDU0);
	int iommu, dev, again;
	uint8_t *page;
	uint32_t f, id = 0;
	struct vfio_region_info reg;

	(void)arg;
	iommu = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));
	dev = VT_OK(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, EDU0));
	VT_OK(t, close(group));

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, page != MAP_FAILED, "mmap: %s", strerror(errno));
	page[0] = 1;
	VT_OK(t, vt_map(iommu, page, 0x100000, 4096, 0));
	VT_OK(t, vt_region_info(dev, VFIO_PCI_BAR0_REGION_INDEX, &reg));
	VT_CHECKF(t, pread(dev, &id, 4, reg.offset) == 4, "pread: %s",
		  strerror(errno));
	VT_CHECKF(t, (id & 0xffff) == 0x00ed, "edu id 0x%08x", id);

	again = open_group(t, EDU0);
	f = group_flags(t, again);
	VT_CHECKF(t, f & VFIO_GROUP_FLAGS_MM_LOCKED,
		  "flags 0x%x: fds open but not MM_LOCKED", f);
	VT_OK(t, close(dev));
	VT_OK(t, close(iommu));
	f = group_flags(t, again);
	VT_CHECKF(t, !(f & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "flags 0x%x: MM_LOCKED after the last fd closed", f);
	close(again);
	munmap(page, 4096);
}

/* The minor number of dev's group node, or -1. */
static int node_minor(const char *dev)
{
	char node[64];
	struct stat st;

	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", vt_group_id(dev));
	if (stat(node, &st))
		return -1;
	return (int)minor(st.st_rdev);
}

/*
 * A node's inode outlives its group (an O_PATH fd here, a bind mount or
 * a copy made with mknod elsewhere): once the group is gone, opening it
 * must not reach whichever group got the same minor next.  edu0 and
 * edu1 both leave vfio, the one whose minor is higher comes back first
 * and would get the other's minor from a lowest-free allocator.
 */
static void test_stale_node(struct vt *t, void *arg)
{
	const char *a = EDU0, *b = EDU1;
	int ma = node_minor(EDU0), mb = node_minor(EDU1), path, fd, err;
	char node[64], proc[64];

	(void)arg;
	VT_CHECKF(t, ma >= 0 && mb >= 0, "no group nodes of %s and %s", EDU0,
		  EDU1);
	if (mb < ma) {
		a = EDU1;
		b = EDU0;
	}
	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", vt_group_id(a));
	path = VT_OK(t, open(node, O_PATH | O_CLOEXEC));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path);
	unbind(t, a);
	unbind(t, b);
	bind_to(t, b, "vfio");
	printf("# %s had minor %d; %s came back with minor %d\n", a,
	       ma < mb ? ma : mb, b, node_minor(b));
	errno = 0;
	fd = open(proc, O_RDWR | O_CLOEXEC);
	err = errno;
	if (fd >= 0)
		close(fd);
	bind_to(t, a, "vfio");
	VT_CHECKF(t, fd < 0, "the old node of %s's group opened: it reached "
		  "%s's new group", a, b);
	VT_CHECKF(t, err == ENODEV || err == ENXIO, "open of the old node: "
		  "%s, want ENODEV or ENXIO", strerror(err));
	close(path);
}

static long module_refcnt(struct vt *t)
{
	char buf[32];

	VT_CHECKF(t, vt_read_file("/sys/module/vfio/refcnt", buf,
				  sizeof(buf)) >= 0,
		  "/sys/module/vfio/refcnt: %s", strerror(errno));
	return strtol(buf, NULL, 10);
}

/*
 * An open group fd keeps vfio.ko loaded through its file operations and
 * through the char device it was opened by: chrdev_open() takes the
 * cdev first, and only the cdev's owner covers the time until the fops
 * are taken.  So two references per fd, and the module stays put.
 */
static void test_fd_pins_module(struct vt *t, void *arg)
{
	long before, open_cnt;
	int group;

	(void)arg;
	before = module_refcnt(t);
	group = open_group(t, EDU0);
	open_cnt = module_refcnt(t);
	VT_CHECKF(t, system("rmmod vfio 2>/dev/null") != 0,
		  "rmmod vfio succeeded with a group fd open");
	(void)group_flags(t, group);
	close(group);
	VT_CHECKF(t, open_cnt == before + 2, "vfio refcnt %ld with a group fd "
		  "open, %ld without: the cdev holds no module reference",
		  open_cnt, before);
	VT_CHECKF(t, module_refcnt(t) == before, "vfio refcnt %ld after the "
		  "close, was %ld", module_refcnt(t), before);
}

/* ---- the bus notifier and devices of no group of ours ----------------- */

#define TRACEFS		"/sys/kernel/tracing"
#define LOCK_INST	TRACEFS "/instances/vt-group"
#define LOCK_EVENT	"vt_group/vfio_lock"
#define LOCK_EVDIR	LOCK_INST "/events/" LOCK_EVENT

/* The address of a symbol of [module] (NULL: the kernel's), or 0. */
static unsigned long ksym(const char *sym, const char *module)
{
	char line[256], name[128], mod[64];
	unsigned long addr, found = 0;
	char type;
	FILE *f;
	int n;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		mod[0] = '\0';
		n = sscanf(line, "%lx %c %127s [%63[^]]]", &addr, &type, name,
			   mod);
		if (n >= 3 && !strcmp(name, sym) &&
		    !strcmp(mod, module ? module : ""))
			found = addr;
	}
	fclose(f);
	return found;
}

/*
 * A PCI device that is in no group of ours and alone in its IOMMU group,
 * not a bridge: one the host may delete and find again without touching
 * anything of vfio's.  Returns 0 with its name in @dev, or -1.
 */
static int foreign_device(char dev[VT_DEV_NAME_LEN])
{
	char path[PATH_MAX], buf[64];
	struct dirent *d, *m;
	int found = -1, members;
	DIR *dir, *grp;
	int id;

	dir = opendir("/sys/bus/pci/devices");
	if (!dir)
		return -1;
	while (found && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class",
			 d->d_name);
		if (vt_read_file(path, buf, sizeof(buf)) < 0 ||
		    strtoul(buf, NULL, 16) >> 16 == 0x06)
			continue;
		id = vt_group_id(d->d_name);
		snprintf(path, sizeof(path), "/dev/vfio/%d", id);
		if (id < 0 || access(path, F_OK) == 0)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/kernel/iommu_groups/%d/devices", id);
		grp = opendir(path);
		if (!grp)
			continue;
		members = 0;
		while ((m = readdir(grp)))
			members += m->d_name[0] != '.';
		closedir(grp);
		if (members == 1) {
			copy_str(dev, VT_DEV_NAME_LEN, d->d_name);
			found = 0;
		}
	}
	closedir(dir);
	return found;
}

/*
 * A kprobe on the kernel's mutex_lock() that records the calls taking
 * vfio.ko's vfio_lock, in a tracefs instance of our own; or a skip.
 */
static void lock_trace_start(struct vt *t)
{
	unsigned long lock = ksym("vfio_lock", "vfio");
	/* Lockdep kernels lock through mutex_lock_nested(). */
	const char *fn = ksym("mutex_lock_nested", NULL) ?
			 "mutex_lock_nested" : "mutex_lock";
	char cmd[128];
	struct stat st;

	if (!lock)
		vt_skip(t, "no vfio_lock in /proc/kallsyms (kernel without "
			"KALLSYMS_ALL?)");
	if (stat(TRACEFS "/kprobe_events", &st) != 0)
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	if (stat(TRACEFS "/kprobe_events", &st) != 0)
		vt_skip(t, "no %s/kprobe_events (kernel without kprobe events)",
			TRACEFS);
	rmdir(LOCK_INST);
	vt_write_file(TRACEFS "/kprobe_events", "-:" LOCK_EVENT);
	snprintf(cmd, sizeof(cmd), "p:%s %s lock=%%di:x64", LOCK_EVENT, fn);
	VT_OK(t, vt_write_file(TRACEFS "/kprobe_events", cmd));
	VT_CHECKF(t, mkdir(LOCK_INST, 0700) == 0, "mkdir %s: %s", LOCK_INST,
		  strerror(errno));
	snprintf(cmd, sizeof(cmd), "lock == 0x%lx", lock);
	VT_OK(t, vt_write_file(LOCK_EVDIR "/filter", cmd));
	VT_OK(t, vt_write_file(LOCK_EVDIR "/enable", "1"));
}

/* Stop recording: how many times vfio_lock was taken since the start. */
static int lock_trace_stop(struct vt *t)
{
	char line[512];
	int calls = 0;
	FILE *f;

	VT_OK(t, vt_write_file(LOCK_EVDIR "/enable", "0"));
	f = fopen(LOCK_INST "/trace", "re");
	VT_CHECKF(t, f, "open the trace: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		calls += line[0] != '#' && strstr(line, "vfio_lock:") != NULL;
	fclose(f);
	rmdir(LOCK_INST);
	vt_write_file(TRACEFS "/kprobe_events", "-:" LOCK_EVENT);
	return calls;
}

/*
 * The bus notifier sees every device the host adds or deletes.  For one
 * in no group of ours it must not take vfio_lock, which a VFIO user's
 * operation may hold: host hotplug would wait on VFIO's users.  Deletes
 * and finds again (remove, rescan) such a device, counting the times
 * vfio_lock is taken meanwhile.  Then opens a group, which must count,
 * to show the count works.
 */
static void test_foreign_hotplug_lockless(struct vt *t, void *arg)
{
	char dev[VT_DEV_NAME_LEN], path[PATH_MAX];
	int during, control, group;

	(void)arg;
	if (foreign_device(dev))
		vt_skip(t, "no PCI device alone in an IOMMU group outside "
			"vfio");
	lock_trace_start(t);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", dev);
	if (vt_write_file(path, "1") < 0) {
		lock_trace_stop(t);
		vt_fail(t, __FILE__, __LINE__, "remove %s: %s", dev,
			strerror(errno));
	}
	vt_write_file("/sys/bus/pci/rescan", "1");
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", dev);
	if (vt_wait_path(path, 1, 5000)) {
		lock_trace_stop(t);
		vt_fail(t, __FILE__, __LINE__, "%s did not come back after a "
			"rescan", dev);
	}
	during = lock_trace_stop(t);

	lock_trace_start(t);
	group = open_group(t, EDU0);
	close(group);
	control = lock_trace_stop(t);
	printf("# vfio_lock taken %d times while %s was deleted and found "
	       "again, %d times for a group open\n", during, dev, control);
	VT_CHECKF(t, control > 0, "the kprobe saw no vfio_lock for a group "
		  "open: the count is broken");
	VT_CHECKF(t, during == 0, "vfio_lock taken %d times for %s, a device "
		  "in no group of ours", during, dev);
}

static void test_unknown_ioctl(struct vt *t, void *arg)
{
	struct termios tio;
	int group = open_group(t, EDU0);

	(void)arg;
	VT_ERRNO(t, ioctl(group, _IO(VFIO_TYPE, VFIO_BASE + 50)), ENOTTY);
	/* A device ioctl number is not a group ioctl. */
	VT_ERRNO(t, ioctl(group, VFIO_DEVICE_RESET), ENOTTY);
	VT_ERRNO(t, ioctl(group, TCGETS, &tio), ENOTTY);
	close(group);
}

/* pci-stub stands in for a host driver; load it if /init did not. */
static void ensure_pci_stub(struct vt *t, int *loaded)
{
	char path[PATH_MAX];
	struct utsname u;
	int fd, ret;

	*loaded = 0;
	if (access("/sys/bus/pci/drivers/pci-stub", F_OK) == 0)
		return;
	/* modprobe knows where the harness put it; a bare path is plan B. */
	if (system("modprobe pci-stub 2>/dev/null") == 0 &&
	    access("/sys/bus/pci/drivers/pci-stub", F_OK) == 0) {
		*loaded = 1;
		return;
	}
	uname(&u);
	snprintf(path, sizeof(path),
		 "/lib/modules/%s/kernel/drivers/pci/pci-stub.ko", u.release);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		vt_skip(t, "no pci-stub driver: modprobe failed, no %s (%s)",
			path, strerror(errno));
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	VT_CHECKF(t, ret == 0, "finit_module %s: %s", path, strerror(errno));
	*loaded = 1;
}

struct saved_dev {
	char bdf[32];
	char drv[64];
};

struct ich9 {
	int grp;
	int n;
	struct saved_dev dev[MAX_MEMBERS];
	int stub_loaded;
};

static void ich9_restore(struct ich9 *s)
{
	char now[64];
	int i;

	for (i = 0; i < s->n; i++) {
		const char *dev = s->dev[i].bdf;
		const char *drv = s->dev[i].drv;

		if (vt_device_driver(dev, now, sizeof(now)) == 0 &&
		    strcmp(now, drv) == 0)
			continue;
		if (drv[0] ? vt_bind(dev, drv) : vt_unbind(dev))
			printf("# restore: %s back to '%s': %s\n", dev, drv,
			       strerror(errno));
	}
	if (s->stub_loaded &&
	    syscall(SYS_delete_module, "pci_stub", O_NONBLOCK))
		printf("# restore: unload pci_stub: %s\n", strerror(errno));
}

static void ich9_save(struct vt *t, struct ich9 *s)
{
	char names[MAX_MEMBERS][32];
	char dir[PATH_MAX];
	int i;

	s->grp = vt_group_id(ICH9_LPC);
	VT_CHECKF(t, s->grp >= 0, "%s has no iommu_group", ICH9_LPC);
	snprintf(dir, sizeof(dir), "/sys/kernel/iommu_groups/%d/devices",
		 s->grp);
	s->n = list_dir(dir, names, MAX_MEMBERS);
	VT_CHECKF(t, s->n > 0, "%s: %s", dir, strerror(errno));
	for (i = 0; i < s->n; i++) {
		copy_str(s->dev[i].bdf, sizeof(s->dev[i].bdf), names[i]);
		VT_CHECKF(t, vt_device_driver(names[i], s->dev[i].drv,
					      sizeof(s->dev[i].drv)) == 0,
			  "driver of %s: %s", names[i], strerror(errno));
	}
}

/*
 * The whole viability story on the multi-function group, each step a
 * check: one member on vfio and the rest unbound is viable; a member on a
 * host driver makes it non-viable and the group refuses IOMMU and device
 * fds; unbinding that member makes it viable again.
 */
static void ich9_body(struct vt *t, struct ich9 *s)
{
	char node[64];
	uint32_t f;
	int group, i, fd;
	int has_smbus = 0;

	VT_CHECKF(t, s->n >= 2, "ICH9 group %d has %d members, want several",
		  s->grp, s->n);
	for (i = 0; i < s->n; i++) {
		if (strcmp(s->dev[i].bdf, ICH9_SMBUS) == 0)
			has_smbus = 1;
		if (strcmp(s->dev[i].bdf, ICH9_LPC) != 0)
			unbind(t, s->dev[i].bdf);
	}
	VT_CHECKF(t, has_smbus, "%s is not in group %d", ICH9_SMBUS, s->grp);
	bind_to(t, ICH9_LPC, "vfio");

	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", s->grp);
	group = open(node, O_RDWR);
	VT_CHECKF(t, group >= 0, "open %s after binding %s: %s", node, ICH9_LPC,
		  strerror(errno));
	check_links(t, s->grp);
	f = group_flags(t, group);
	VT_CHECKF(t, f & VFIO_GROUP_FLAGS_VIABLE,
		  "not viable (0x%x) with %s on vfio, others unbound", f,
		  ICH9_LPC);

	bind_to(t, ICH9_SMBUS, "pci-stub");
	{
		struct vfio_group_info info = {
			.argsz = sizeof(info), .flags = 0xffffffff,
		};

		VT_OK(t, ioctl(group, VFIO_GROUP_GET_INFO, &info));
		VT_CHECKF(t, !(info.flags & VFIO_GROUP_FLAGS_VIABLE),
			  "VIABLE (0x%x) with %s on pci-stub", info.flags,
			  ICH9_SMBUS);
		VT_CHECKF(t, info.flags == 0, "stale flags 0x%x on an idle, "
			  "non-viable group", info.flags);
	}
	errno = 0;
	fd = ioctl(group, VFIO_GROUP_GET_IOMMU_FD);
	VT_CHECKF(t, fd == -1 && errno == EBUSY,
		  "GET_IOMMU_FD on a non-viable group: %d/%s, want EBUSY", fd,
		  strerror(errno));
	errno = 0;
	fd = ioctl(group, VFIO_GROUP_GET_DEVICE_FD, ICH9_LPC);
	VT_CHECKF(t, fd == -1 && errno == EBUSY,
		  "GET_DEVICE_FD on a non-viable group: %d/%s, want EBUSY", fd,
		  strerror(errno));
	f = group_flags(t, group);
	VT_CHECKF(t, !(f & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "refused fds left MM_LOCKED set (0x%x)", f);

	unbind(t, ICH9_SMBUS);
	f = group_flags(t, group);
	VT_CHECKF(t, f & VFIO_GROUP_FLAGS_VIABLE,
		  "still not viable (0x%x) after unbinding %s", f, ICH9_SMBUS);
	fd = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));
	close(fd);
	close(group);
}

/*
 * While the group is in use no host driver that does DMA may take a
 * member: binding i2c-i801 (the SMBus function's own driver) must fail
 * and leave the group viable and usable.  Once the group is idle the
 * same bind works, so the refusal was for the group's sake.  (pci-stub
 * is no test of this: it declares driver_managed_dma, and the kernel
 * lets it bind to a claimed group.)
 */
#define SMBUS_DRIVER	"i801_smbus"

static void ensure_i801(struct vt *t, int *loaded)
{
	*loaded = 0;
	if (access("/sys/bus/pci/drivers/" SMBUS_DRIVER, F_OK) == 0)
		return;
	if (system("modprobe i2c-i801 2>/dev/null") != 0 ||
	    access("/sys/bus/pci/drivers/" SMBUS_DRIVER, F_OK) != 0)
		vt_skip(t, "no i2c-i801 module in the guest (run-suite.sh "
			"--intree i2c-i801)");
	*loaded = 1;
}

static void ich9_in_use_body(struct vt *t, struct ich9 *s)
{
	char node[64], drv[64];
	int group, iommu, i, ret, loaded;
	uint8_t *page;
	uint32_t f;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->dev[i].bdf, ICH9_LPC) != 0)
			unbind(t, s->dev[i].bdf);
	ensure_i801(t, &loaded);
	/* Loading the module may have bound it already: undo that. */
	unbind(t, ICH9_SMBUS);
	bind_to(t, ICH9_LPC, "vfio");
	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", s->grp);
	group = VT_OK(t, open(node, O_RDWR));
	iommu = VT_OK(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD));

	ret = vt_bind(ICH9_SMBUS, SMBUS_DRIVER);
	VT_OK(t, vt_device_driver(ICH9_SMBUS, drv, sizeof(drv)));
	VT_CHECKF(t, strcmp(drv, SMBUS_DRIVER) != 0,
		  "%s took %s while its group is in use (bind: %d)",
		  SMBUS_DRIVER, ICH9_SMBUS, ret);
	f = group_flags(t, group);
	VT_CHECKF(t, (f & VFIO_GROUP_FLAGS_VIABLE) &&
		  (f & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "in-use group after a refused host bind: flags 0x%x", f);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, page != MAP_FAILED, "mmap: %s", strerror(errno));
	page[0] = 1;
	VT_OK(t, vt_map(iommu, page, 0x100000, 4096, 0));
	VT_OK(t, vt_unmap(iommu, 0x100000, 4096));
	munmap(page, 4096);
	VT_OK(t, close(iommu));

	/* An idle group does not stop the host. */
	bind_to(t, ICH9_SMBUS, SMBUS_DRIVER);
	f = group_flags(t, group);
	VT_CHECKF(t, !(f & VFIO_GROUP_FLAGS_VIABLE),
		  "VIABLE (0x%x) with %s on %s", f, ICH9_SMBUS, SMBUS_DRIVER);
	close(group);
	unbind(t, ICH9_SMBUS);
	if (loaded && system("rmmod i2c_i801 2>/dev/null") != 0)
		printf("# could not unload i2c_i801\n");
}

static void ich9_run(struct vt *t, void (*body)(struct vt *, struct ich9 *))
{
	struct ich9 s;
	jmp_buf outer;
	int j;

	memset(&s, 0, sizeof(s));
	ich9_save(t, &s);
	ensure_pci_stub(t, &s.stub_loaded);

	/* Restore the members whether a check failed, skipped or not. */
	memcpy(outer, t->fail_jmp, sizeof(jmp_buf));
	j = setjmp(t->fail_jmp);
	if (j == 0) {
		body(t, &s);
		memcpy(t->fail_jmp, outer, sizeof(jmp_buf));
		ich9_restore(&s);
		return;
	}
	memcpy(t->fail_jmp, outer, sizeof(jmp_buf));
	/* An fd left open by the failed check would keep the group busy. */
	close_range(3, ~0U, 0);
	ich9_restore(&s);
	longjmp(t->fail_jmp, j);
}

static void test_ich9_viability(struct vt *t, void *arg)
{
	(void)arg;
	ich9_run(t, ich9_body);
}

static void test_ich9_in_use_refuses_host(struct vt *t, void *arg)
{
	(void)arg;
	ich9_run(t, ich9_in_use_body);
}

int main(void)
{
	struct vt t = { .prog = "t-group" };

	VT_RUN_CLOSE(&t, test_node_exists);
	VT_RUN_CLOSE(&t, test_sysfs_links);
	VT_RUN_CLOSE(&t, test_info_argsz);
	VT_RUN_CLOSE(&t, test_info_flags_rewritten);
	VT_RUN_CLOSE(&t, test_mm_locked_lifecycle);
	VT_RUN_CLOSE(&t, test_device_fd_by_name);
	VT_RUN_CLOSE(&t, test_iommu_fds_shared);
	VT_RUN_CLOSE(&t, test_group_fd_closed_first);
	VT_RUN_CLOSE(&t, test_unknown_ioctl);
	VT_RUN_CLOSE(&t, test_stale_node);
	VT_RUN_CLOSE(&t, test_fd_pins_module);
	VT_RUN_CLOSE(&t, test_foreign_hotplug_lockless);
	VT_RUN_CLOSE(&t, test_ich9_viability);
	VT_RUN_CLOSE(&t, test_ich9_in_use_refuses_host);
	return vt_done(&t);
}
