// SPDX-License-Identifier: GPL-2.0-only
/*
 * vtlib: helpers shared by the guest test programs.  See vtlib.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vtlib.h"

#define PCI_DEVICES	"/sys/bus/pci/devices"
#define PCI_DRIVERS	"/sys/bus/pci/drivers"
#define BIND_TIMEOUT_MS	5000
#define VT_PINS_FOLD_WAIT_MS	2100	/* two vmstat intervals and a bit */

uint64_t vt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int vt_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	err = errno;
	close(fd);
	if (n < 0) {
		errno = err;
		return -1;
	}
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return (int)n;
}

int vt_write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, s, len);
	err = errno;
	close(fd);
	if (n < 0) {
		errno = err;
		return -1;
	}
	if ((size_t)n != len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int vt_wait_path(const char *path, int want, int timeout_ms)
{
	uint64_t end = vt_now_ms() + timeout_ms;

	for (;;) {
		int present = access(path, F_OK) == 0;

		if (present == !!want)
			return 0;
		if (vt_now_ms() >= end)
			break;
		usleep(10000);
	}
	errno = ETIMEDOUT;
	return -1;
}

static int read_hex(const char *dev, const char *attr, unsigned int *val)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/%s", dev, attr);
	if (vt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	*val = (unsigned int)strtoul(buf, NULL, 16);
	return 0;
}

int vt_device_driver(const char *dev, char *drv, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver", dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		if (errno != ENOENT)
			return -1;
		/* No driver, but only when the device itself exists. */
		snprintf(path, sizeof(path), PCI_DEVICES "/%s", dev);
		if (access(path, F_OK))
			return -1;
		drv[0] = '\0';
		return 0;
	}
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	snprintf(drv, len, "%s", base);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

int vt_find_device(unsigned int vendor, unsigned int device, const char *drv,
		   int nth, char *name)
{
	char *names[256];
	int n = 0, i, found = -1;
	struct dirent *de;
	DIR *dir;

	dir = opendir(PCI_DEVICES);
	if (!dir)
		return -1;
	while ((de = readdir(dir)) && n < (int)(sizeof(names) / sizeof(*names))) {
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	}
	closedir(dir);
	/* readdir order is not address order; tests want a stable nth. */
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		unsigned int v, d;
		char cur[64];

		if (!names[i] || read_hex(names[i], "vendor", &v) ||
		    read_hex(names[i], "device", &d) ||
		    v != vendor || d != device)
			continue;
		if (drv && (vt_device_driver(names[i], cur, sizeof(cur)) ||
			    strcmp(cur, drv)))
			continue;
		if (nth-- == 0) {
			found = i;
			break;
		}
	}
	if (found >= 0)
		snprintf(name, VT_DEV_NAME_LEN, "%s", names[found]);
	for (i = 0; i < n; i++)
		free(names[i]);
	if (found < 0) {
		errno = ENODEV;
		return -1;
	}
	return 0;
}

int vt_unbind(const char *dev)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver/unbind", dev);
	if (access(path, F_OK))
		return 0;
	if (vt_write_file(path, dev) < 0)
		return -1;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver", dev);
	return vt_wait_path(path, 0, BIND_TIMEOUT_MS);
}

int vt_bind(const char *dev, const char *driver)
{
	char path[PATH_MAX], cur[64];
	int ret = 0, err = 0;

	if (vt_device_driver(dev, cur, sizeof(cur)) < 0)
		return -1;
	if (!strcmp(cur, driver))
		return 0;
	if (vt_unbind(dev) < 0)
		return -1;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver_override", dev);
	if (vt_write_file(path, driver) < 0)
		return -1;
	/* drivers_probe reports the probe's error (e.g. vfio refusing). */
	if (vt_write_file("/sys/bus/pci/drivers_probe", dev) < 0) {
		ret = -1;
		err = errno;
	}
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver_override", dev);
	vt_write_file(path, "\n");
	if (ret) {
		errno = err;
		return -1;
	}
	if (vt_device_driver(dev, cur, sizeof(cur)) < 0)
		return -1;
	if (strcmp(cur, driver)) {
		errno = ENXIO;
		return -1;
	}
	return 0;
}

int vt_bind_vfio(const char *dev)
{
	return vt_bind(dev, "vfio");
}

int vt_group_id(const char *dev)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/iommu_group", dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	base = strrchr(link, '/');
	return atoi(base ? base + 1 : link);
}

int vt_open_group(int group, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/vfio/pci:%d", group);
	return open(path, flags | O_CLOEXEC);
}

int vt_open_group_of(const char *dev)
{
	int group = vt_group_id(dev);

	if (group < 0)
		return -1;
	return vt_open_group(group, O_RDWR);
}

int vt_group_flags(int group_fd, uint32_t *flags)
{
	struct vfio_group_info info = { .argsz = sizeof(info) };

	if (ioctl(group_fd, VFIO_GROUP_GET_INFO, &info) < 0)
		return -1;
	*flags = info.flags;
	return 0;
}

int vt_iommu_fd(int group_fd)
{
	return ioctl(group_fd, VFIO_GROUP_GET_IOMMU_FD);
}

int vt_device_fd(int group_fd, const char *dev)
{
	return ioctl(group_fd, VFIO_GROUP_GET_DEVICE_FD, dev);
}

int vt_open_dev(struct vt_dev *d, const char *dev)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->group_fd = d->iommu_fd = d->device_fd = -1;
	snprintf(d->name, sizeof(d->name), "%s", dev);
	d->group = vt_group_id(dev);
	if (d->group < 0)
		return -1;
	d->group_fd = vt_open_group(d->group, O_RDWR);
	if (d->group_fd < 0)
		goto fail;
	d->iommu_fd = vt_iommu_fd(d->group_fd);
	if (d->iommu_fd < 0)
		goto fail;
	d->device_fd = vt_device_fd(d->group_fd, dev);
	if (d->device_fd < 0)
		goto fail;
	return 0;
fail:
	err = errno;
	vt_close_dev(d);
	errno = err;
	return -1;
}

void vt_close_dev(struct vt_dev *d)
{
	if (d->device_fd >= 0)
		close(d->device_fd);
	if (d->iommu_fd >= 0)
		close(d->iommu_fd);
	if (d->group_fd >= 0)
		close(d->group_fd);
	d->group_fd = d->iommu_fd = d->device_fd = -1;
}

int vt_map(int iommu_fd, void *vaddr, uint64_t iova, uint64_t size,
	   uint32_t flags)
{
	struct vfio_dma_map map = {
		.argsz = sizeof(map),
		.flags = flags ? flags :
			 VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)vaddr,
		.iova = iova,
		.size = size,
	};

	return ioctl(iommu_fd, VFIO_IOMMU_MAP_DMA, &map);
}

int vt_unmap(int iommu_fd, uint64_t iova, uint64_t size)
{
	struct vfio_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = iova,
		.size = size,
	};

	return ioctl(iommu_fd, VFIO_IOMMU_UNMAP_DMA, &unmap);
}

int vt_region_info(int device_fd, uint32_t index,
		   struct vfio_region_info *info)
{
	memset(info, 0, sizeof(*info));
	info->argsz = sizeof(*info);
	info->index = index;
	return ioctl(device_fd, VFIO_DEVICE_GET_REGION_INFO, info);
}

void *vt_mmap_region(int device_fd, uint32_t index, uint64_t *size)
{
	struct vfio_region_info info;
	void *p;

	if (vt_region_info(device_fd, index, &info) < 0)
		return NULL;
	if (!info.size) {
		errno = ENXIO;
		return NULL;
	}
	p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 device_fd, info.offset);
	if (p == MAP_FAILED)
		return NULL;
	if (size)
		*size = info.size;
	return p;
}

int vt_set_irq_eventfds(int device_fd, uint32_t index, uint32_t count,
			const int32_t *fds)
{
	struct vfio_irq_eventfds *set;
	size_t sz = sizeof(*set) + count * sizeof(int32_t);
	int ret, err;

	set = calloc(1, sz);
	if (!set)
		return -1;
	set->argsz = sz;
	set->index = index;
	set->count = count;
	if (count)
		memcpy(set->eventfds, fds, count * sizeof(int32_t));
	ret = ioctl(device_fd, VFIO_DEVICE_SET_IRQ_EVENTFDS, set);
	err = errno;
	free(set);
	errno = err;
	return ret;
}

int vt_wait_eventfd(int efd, int timeout_ms, uint64_t *value)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	uint64_t v;
	int n;

	n = poll(&pfd, 1, timeout_ms);
	if (n < 0)
		return -1;
	if (n == 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return -1;
	if (value)
		*value = v;
	return 0;
}

int vt_read_pins(struct vt_pins *p)
{
	char line[128];
	int seen = 0, refresh;
	FILE *f;

	/*
	 * vmstat counters are per-cpu deltas folded in lazily; without
	 * this refresh a pin or unpin may not show yet (needs root).
	 */
	refresh = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (refresh >= 0) {
		/* EINVAL when a counter is negative: folded anyway */
		ssize_t ignored = write(refresh, "1", 1);

		(void)ignored;
		close(refresh);
	} else if (errno == EACCES || errno == EPERM) {
		/*
		 * Not root (the file is 0600 and refuses chmod): rely on
		 * the kernel's own folding instead, which vmstat_shepherd
		 * does every second (sysctl vm.stat_interval) and a CPU
		 * does on going idle.
		 */
		usleep(VT_PINS_FOLD_WAIT_MS * 1000);
	}

	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "nr_foll_pin_acquired %ld", &p->acquired) == 1)
			seen |= 1;
		else if (sscanf(line, "nr_foll_pin_released %ld",
				&p->released) == 1)
			seen |= 2;
	}
	fclose(f);
	if (seen != 3) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

long vt_pinned_now(void)
{
	struct vt_pins p;

	if (vt_read_pins(&p) < 0)
		return -1;
	return p.acquired - p.released;
}

long vt_locked_kb(pid_t pid)
{
	char path[64], line[128];
	long kb = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld", &kb) == 1)
			break;
	fclose(f);
	if (kb < 0)
		errno = ENOENT;
	return kb;
}

int vt_run_as(uid_t uid, gid_t gid, int (*fn)(void *arg), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (uid != (uid_t)-1) {
			if (setgroups(0, NULL) || setgid(gid) || setuid(uid)) {
				fprintf(stderr, "vt_run_as: uid %d: %s\n",
					(int)uid, strerror(errno));
				_exit(127);
			}
		}
		status = fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(status & 0xff);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

void vt_host(const char *fmt, ...)
{
	va_list ap;

	/* On a line of its own, so that the host watcher sees it. */
	fflush(stdout);
	printf("VT-HOST ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}
