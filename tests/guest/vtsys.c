// SPDX-License-Identifier: GPL-2.0-only
/*
 * vtsys: the helpers of the guest test programs that do not depend on
 * either VFIO ABI (sysfs, binding, edu registers through any device fd,
 * pinned-page counters, processes, the host).  See vtsys.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/fuse.h>
#include <linux/nvme_ioctl.h>

#include "vt.h"
#include "vtsys.h"

#define PCI_DEVICES	"/sys/bus/pci/devices"
#define PCI_DRIVERS	"/sys/bus/pci/drivers"
#define BIND_TIMEOUT_MS	5000
#define VFIO_NEW_ID	PCI_DRIVERS "/vfio/new_id"

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

int vt_module_loaded(const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

/* VT_MODPARAMS="..." of /etc/vt.conf, what /init loaded vfio_pci with. */
static void vfio_pci_params(char *buf, size_t len)
{
	char line[512], *v, *end;
	FILE *f = fopen("/etc/vt.conf", "re");

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VT_MODPARAMS=\"", 14))
			continue;
		v = line + 14;
		end = strrchr(v, '"');
		if (end)
			*end = 0;
		if (strlen(v) < len)
			memcpy(buf, v, strlen(v) + 1);
	}
	if (f)
		fclose(f);
}

/*
 * Without a fork (t-fuzz calls it beside its other threads): the module
 * file straight into finit_module(), vfio being loaded already.
 */
int vt_vfio_pci_reload(void)
{
	return vt_vfio_pci_load(NULL);
}

int vt_vfio_pci_load(const char *extra)
{
	static const char *const ids[] = { "1234 11e8", "1b36 0005" };
	char params[512], path[160];
	struct utsname u;
	unsigned int i;
	int fd, ret, err;

	if (!vt_module_loaded("vfio_pci")) {
		vfio_pci_params(params, sizeof(params) / 2);
		if (extra)
			snprintf(params + strlen(params),
				 sizeof(params) - strlen(params), " %s", extra);
		if (uname(&u))
			return -1;
		snprintf(path, sizeof(path),
			 "/lib/modules/%s/updates/vfio_pci.ko", u.release);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		ret = syscall(SYS_finit_module, fd, params, 0);
		err = errno;
		close(fd);
		if (ret && err != EEXIST) {
			errno = err;
			return -1;
		}
	}
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (vt_write_file(VFIO_NEW_ID, ids[i]) < 0 && errno != EEXIST)
			return -1;
	return 0;
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

int vt_wait_driver(const char *dev, const char *driver, int timeout_ms)
{
	uint64_t end = vt_now_ms() + timeout_ms;
	char cur[64];

	for (;;) {
		if (vt_device_driver(dev, cur, sizeof(cur)) == 0 &&
		    !strcmp(cur, driver))
			return 0;
		if (vt_now_ms() >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		usleep(50000);
	}
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

int vt_fired(int efd, int ms)
{
	return vt_wait_eventfd(efd, ms, NULL) == 0;
}

int vt_edu_read(const struct vt_edu *e, uint32_t reg, uint32_t *v)
{
	ssize_t n = pread(e->device_fd, v, 4, e->bar0 + reg);

	if (n == 4)
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

int vt_edu_write(const struct vt_edu *e, uint32_t reg, uint32_t v)
{
	ssize_t n = pwrite(e->device_fd, &v, 4, e->bar0 + reg);

	if (n == 4)
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

int vt_edu_dma(const struct vt_edu *e, int to_ram, uint64_t iova,
	       uint32_t len)
{
	uint64_t end;
	uint32_t cmd;

	if (len > VT_EDU_DMA_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (vt_edu_write(e, VT_EDU_DMA_SRC, to_ram ? VT_EDU_BUF : iova) ||
	    vt_edu_write(e, VT_EDU_DMA_DST, to_ram ? iova : VT_EDU_BUF) ||
	    vt_edu_write(e, VT_EDU_DMA_CNT, len) ||
	    vt_edu_write(e, VT_EDU_DMA_CMD, VT_EDU_DMA_RUN |
			 (to_ram ? VT_EDU_DMA_TO_RAM : 0)))
		return -1;
	end = vt_now_ms() + VT_EDU_DMA_WAIT_MS;
	for (;;) {
		if (vt_edu_read(e, VT_EDU_DMA_CMD, &cmd))
			return -1;
		if (!(cmd & VT_EDU_DMA_RUN))
			return 0;
		if (vt_now_ms() >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		usleep(2000);
	}
}

static void vt_real_cfg_rw(struct vt *t, const char *dev, uint32_t off,
			   size_t len, uint32_t *v, int write)
{
	char path[128];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", dev);
	fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	VT_CHECKF(t, fd >= 0, "open %s: %s", path, strerror(errno));
	r = write ? pwrite(fd, v, len, off) : pread(fd, v, len, off);
	close(fd);
	VT_CHECKF(t, r == (ssize_t)len, "%s %s at 0x%x: %s",
		  write ? "write" : "read", path, off, strerror(errno));
}

uint32_t vt_real_cfg(struct vt *t, const char *dev, uint32_t off,
		     size_t len)
{
	uint32_t v = 0;

	vt_real_cfg_rw(t, dev, off, len, &v, 0);
	return v;
}

void vt_real_cfg_wr(struct vt *t, const char *dev, uint32_t off,
		    size_t len, uint32_t v)
{
	vt_real_cfg_rw(t, dev, off, len, &v, 1);
}

off_t vt_sysfs_config_size(struct vt *t, const char *dev)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", dev);
	VT_CHECKF(t, stat(path, &st) == 0, "stat %s: %s", path,
		  strerror(errno));
	return st.st_size;
}

int vt_has_reset(const char *dev)
{
	char path[128], buf[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset_method",
		 dev);
	if (vt_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	return buf[0] != '\0';
}

int vt_enable_master_at(int device_fd, uint64_t cfg_off)
{
	const uint16_t want = VT_PCI_COMMAND_MEMORY | VT_PCI_COMMAND_MASTER;
	uint64_t off = cfg_off + VT_PCI_COMMAND;
	uint16_t cmd = 0;

	errno = 0;
	if (pread(device_fd, &cmd, 2, off) != 2)
		goto io;
	cmd |= want;
	if (pwrite(device_fd, &cmd, 2, off) != 2)
		goto io;
	cmd = 0;
	if (pread(device_fd, &cmd, 2, off) != 2)
		goto io;
	if ((cmd & want) == want)
		return 0;
	errno = EIO;
	return -1;
io:
	if (!errno)
		errno = EIO;
	return -1;
}

/*
 * Where vt_read_faults() resumes after SIGBUS.  A signal handler has no
 * argument to carry it, so it has to live here; per thread, so that
 * threads may probe at the same time.
 */
static __thread sigjmp_buf *bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	if (bus_jmp)
		siglongjmp(*bus_jmp, 1);
	_exit(128 + SIGBUS);
}

int vt_read_faults(volatile uint32_t *p)
{
	struct sigaction sa, old;
	volatile int faulted = 0;
	sigjmp_buf jb;
	uint32_t v;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	bus_jmp = &jb;
	if (sigsetjmp(jb, 1) == 0) {
		v = *p;
		(void)v;
	} else {
		faulted = 1;
	}
	bus_jmp = NULL;
	sigaction(SIGBUS, &old, NULL);
	return faulted;
}

long vt_fill_diff(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

int vt_irq_listed(const char *action)
{
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/interrupts", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, action))
			found = 1;
	fclose(f);
	return found;
}

/*
 * In a vt_child_run() child: its end of a socket to the parent, which
 * stays root and reads the pin counters for it (vt_pins_serve()); -1
 * anywhere else.
 */
static int vt_pins_sock = -1;

/* What the parent sends back for one request: errno or 0, and the counts. */
struct vt_pins_answer {
	int err;
	struct vt_pins pins;
};

/* Ask the parent for exact counters; the child cannot fold them itself. */
static int vt_pins_ask_parent(struct vt_pins *p)
{
	struct vt_pins_answer a;
	ssize_t n;

	if (send(vt_pins_sock, "?", 1, MSG_NOSIGNAL) != 1)
		return -1;
	do
		n = recv(vt_pins_sock, &a, sizeof(a), MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(a)) {
		errno = n < 0 ? errno : EPIPE;
		return -1;
	}
	if (a.err) {
		errno = a.err;
		return -1;
	}
	*p = a.pins;
	return 0;
}

int vt_read_pins(struct vt_pins *p)
{
	char line[128];
	int seen = 0, refresh;
	FILE *f;

	/*
	 * vmstat counters are per-cpu deltas folded in lazily, by
	 * vmstat_shepherd about every second or not at all on a quiet CPU;
	 * without this refresh a pin or unpin may not show yet.  Only root
	 * may write it (0600, chmod refused), so a child that dropped root
	 * asks its vt_child_run() parent, which still is root: exact, with
	 * no waiting for the kernel to fold them some time.
	 */
	refresh = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (refresh < 0) {
		if ((errno == EACCES || errno == EPERM) && vt_pins_sock >= 0)
			return vt_pins_ask_parent(p);
		return -1;
	}
	/* EINVAL when a counter is negative: folded anyway */
	if (write(refresh, "1", 1) < 0 && errno != EINVAL) {
		int err = errno;

		close(refresh);
		errno = err;
		return -1;
	}
	close(refresh);

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

/*
 * Parent side of vt_pins_ask_parent(): answer one request on sock.
 * 0, or -1 when the child closed its end.
 */
static int vt_pins_serve(int sock)
{
	struct vt_pins_answer a = { 0 };
	char req;
	ssize_t n;

	n = recv(sock, &req, 1, 0);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0)
		return -1;
	if (vt_read_pins(&a.pins) < 0)
		a.err = errno ? errno : EIO;
	/* The child may be gone (killed): no SIGPIPE for that. */
	send(sock, &a, sizeof(a), MSG_NOSIGNAL);
	return 0;
}

long vt_pinned_now(void)
{
	struct vt_pins p;

	if (vt_read_pins(&p) < 0)
		return -1;
	return p.acquired - p.released;
}

int vt_page_dirty(const void *addr)
{
	const uint64_t pfn_mask = (1ULL << 55) - 1, present = 1ULL << 63;
	const int kpf_dirty = 4;	/* KPF_DIRTY, <linux/kernel-page-flags.h> */
	uint64_t entry, flags;
	ssize_t n;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, &entry, sizeof(entry),
		  (off_t)((uintptr_t)addr / PG * sizeof(entry)));
	close(fd);
	if (n != sizeof(entry) || !(entry & present) || !(entry & pfn_mask)) {
		errno = n < 0 ? errno : ENOENT;
		return -1;
	}
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, &flags, sizeof(flags),
		  (off_t)((entry & pfn_mask) * sizeof(flags)));
	close(fd);
	if (n != sizeof(flags)) {
		errno = n < 0 ? errno : EIO;
		return -1;
	}
	return !!(flags & (1ULL << kpf_dirty));
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

#define VT_FAIL_PREFIX	"not ok - "

int vt_child_run(uid_t uid, gid_t gid, vt_child_fn prep, vt_child_fn fn,
		 void *arg, const char *name, char *msg, size_t msglen)
{
	struct pollfd pf[2];
	size_t len = 0;
	const char *m;
	int p[2], sv[2], status;
	char junk[256];
	ssize_t n;
	pid_t pid;

	msg[0] = '\0';
	if (pipe2(p, O_CLOEXEC)) {
		snprintf(msg, msglen, "pipe: %s", strerror(errno));
		return -1;
	}
	/* The child's pin counter requests (vt_read_pins()). */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		snprintf(msg, msglen, "socketpair: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(msg, msglen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		struct vt ct = { .prog = "child", .name = name };
		int j;

		close(p[0]);
		close(sv[0]);
		dup2(p[1], STDOUT_FILENO);
		close(p[1]);
		vt_pins_sock = sv[1];
		if (uid != (uid_t)-1 &&
		    (setgroups(0, NULL) || setgid(gid) || setuid(uid))) {
			printf(VT_FAIL_PREFIX "setuid(%d): %s\n", (int)uid,
			       strerror(errno));
			fflush(stdout);
			_exit(1);
		}
		j = setjmp(ct.fail_jmp);
		if (j == 0) {
			if (prep)
				prep(&ct, arg);
			fn(&ct, arg);
		}
		fflush(stdout);
		_exit(j);
	}
	close(p[1]);
	close(sv[1]);
	/*
	 * Collect the child's output until it closes it, and meanwhile read
	 * the pin counters whenever it asks.  Output past msg is drained
	 * and dropped, so that the child never blocks on a full pipe.
	 */
	pf[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = sv[0], .events = POLLIN };
	while (pf[0].fd >= 0) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents && vt_pins_serve(pf[1].fd) < 0)
			pf[1].fd = -1;
		if (!pf[0].revents)
			continue;
		if (len < msglen - 1)
			n = read(p[0], msg + len, msglen - 1 - len);
		else
			n = read(p[0], junk, sizeof(junk));
		if (n > 0 && len < msglen - 1)
			len += n;
		else if (n == 0 || (n < 0 && errno != EINTR))
			pf[0].fd = -1;
	}
	msg[len] = '\0';
	close(p[0]);
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			snprintf(msg, msglen, "waitpid: %s", strerror(errno));
			return -1;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	while (len && msg[len - 1] == '\n')
		msg[--len] = '\0';
	m = strstr(msg, VT_FAIL_PREFIX);
	if (m)
		memmove(msg, m + strlen(VT_FAIL_PREFIX),
			strlen(m + strlen(VT_FAIL_PREFIX)) + 1);
	if (!msg[0])
		snprintf(msg, msglen, "child status 0x%x", status);
	return -1;
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

int vt_plug_edu2(const char *path, int timeout_ms)
{
	uint64_t end = vt_now_ms() + timeout_ms;

	/*
	 * The guest drops the device before pciehp powers the slot off and
	 * QEMU really deletes it; until then device_add fails on the
	 * duplicate id.  So ask again every few seconds.
	 */
	while (access(path, F_OK) != 0) {
		uint64_t now = vt_now_ms();

		if (now >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		vt_host("device_add edu,id=edu2,bus=rp0");
		vt_wait_path(path, 1, end - now < 5000 ? (int)(end - now) :
			     5000);
	}
	return 0;
}

static void *vt_close_thread(void *arg)
{
	struct vt_closer *cl = arg;

	__atomic_store_n(&cl->start_ms, vt_now_ms(), __ATOMIC_RELEASE);
	close(cl->fd);
	cl->end_ms = vt_now_ms();
	return NULL;
}

void vt_start_close(struct vt *t, pthread_t *thr, struct vt_closer *cl,
		    int head_ms)
{
	int ret;

	ret = pthread_create(thr, NULL, vt_close_thread, cl);
	VT_CHECKF(t, ret == 0, "pthread_create: %s", strerror(ret));
	while (!__atomic_load_n(&cl->start_ms, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(head_ms * 1000);
}

/* ---- a FUSE file whose reads are never answered ------------------------ */

#define FUSE_BUF	(132 * 1024)	/* >= max_write + a page */
#define FUSE_FILE_INO	2

/* One reply: header and @len bytes of @body, with @error (-errno). */
static void fuse_reply(int dev, uint64_t unique, int error, const void *body,
		       size_t len)
{
	struct fuse_out_header h = {
		.len = sizeof(h) + len, .error = error, .unique = unique,
	};
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = (void *)body, .iov_len = len },
	};

	if (writev(dev, iov, len ? 2 : 1) < 0 && errno != ENOENT)
		fprintf(stderr, "vt_fuse: reply to %llu: %s\n",
			(unsigned long long)unique, strerror(errno));
}

static void fuse_fill_attr(const struct vt_fuse *f, uint64_t ino,
			   struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	a->blksize = 4096;
	if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
	} else {
		a->mode = S_IFREG | 0644;
		a->size = f->size;
		a->blocks = f->size / 512;
	}
}

/* READ: kept unanswered, unless vt_fuse_stop() has begun. */
static void fuse_read(struct vt_fuse *f, uint64_t unique)
{
	int eio = 0;

	pthread_mutex_lock(&f->lock);
	f->reads++;
	if (f->stopping || f->npending == VT_FUSE_PENDING)
		eio = 1;
	else
		f->pending[f->npending++] = unique;
	pthread_mutex_unlock(&f->lock);
	if (eio)
		fuse_reply(f->dev, unique, -EIO, NULL, 0);
}

static void fuse_handle(struct vt_fuse *f, const struct fuse_in_header *in,
			const void *arg)
{
	union {
		struct fuse_init_out init;
		struct fuse_entry_out entry;
		struct fuse_attr_out attr;
		struct fuse_open_out open;
	} out;

	memset(&out, 0, sizeof(out));
	switch (in->opcode) {
	case FUSE_INIT:
		out.init.major = FUSE_KERNEL_VERSION;
		out.init.minor = ((const struct fuse_init_in *)arg)->minor <
				 FUSE_KERNEL_MINOR_VERSION ?
				 ((const struct fuse_init_in *)arg)->minor :
				 FUSE_KERNEL_MINOR_VERSION;
		out.init.max_write = 4096;
		fuse_reply(f->dev, in->unique, 0, &out.init, sizeof(out.init));
		return;
	case FUSE_LOOKUP:
		if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "f")) {
			fuse_reply(f->dev, in->unique, -ENOENT, NULL, 0);
			return;
		}
		out.entry.nodeid = FUSE_FILE_INO;
		out.entry.entry_valid = out.entry.attr_valid = 3600;
		fuse_fill_attr(f, FUSE_FILE_INO, &out.entry.attr);
		fuse_reply(f->dev, in->unique, 0, &out.entry, sizeof(out.entry));
		return;
	case FUSE_GETATTR:
		out.attr.attr_valid = 3600;
		fuse_fill_attr(f, in->nodeid, &out.attr.attr);
		fuse_reply(f->dev, in->unique, 0, &out.attr, sizeof(out.attr));
		return;
	case FUSE_OPEN:
		out.open.fh = 1;
		fuse_reply(f->dev, in->unique, 0, &out.open, sizeof(out.open));
		return;
	case FUSE_READ:
		fuse_read(f, in->unique);
		return;
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_ACCESS:
		fuse_reply(f->dev, in->unique, 0, NULL, 0);
		return;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		return;		/* no reply */
	default:
		fuse_reply(f->dev, in->unique, -ENOSYS, NULL, 0);
	}
}

static void *fuse_server(void *arg)
{
	struct vt_fuse *f = arg;
	char *buf = malloc(FUSE_BUF);
	ssize_t n;

	while (buf) {
		n = read(f->dev, buf, FUSE_BUF);
		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			break;	/* ENODEV: unmounted and let go of */
		fuse_handle(f, (struct fuse_in_header *)buf,
			    buf + sizeof(struct fuse_in_header));
	}
	free(buf);
	return NULL;
}

int vt_fuse_start(struct vt_fuse *f, uint64_t size)
{
	char opts[128];
	int err;

	memset(f, 0, sizeof(*f));
	f->size = size;
	pthread_mutex_init(&f->lock, NULL);
	if (access("/dev/fuse", F_OK) &&
	    system("modprobe fuse 2>/dev/null") != 0) {
		errno = ENODEV;
		return -1;
	}
	f->dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (f->dev < 0)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/vt-fuse-%d", getpid());
	snprintf(f->path, sizeof(f->path), "%s/f", f->dir);
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0", f->dev);
	if ((mkdir(f->dir, 0755) && errno != EEXIST) ||
	    mount("vt-fuse", f->dir, "fuse", MS_NOSUID | MS_NODEV, opts))
		goto fail;
	err = pthread_create(&f->server, NULL, fuse_server, f);
	if (!err)
		return 0;
	umount2(f->dir, MNT_DETACH);
	errno = err;
fail:
	err = errno;
	close(f->dev);
	rmdir(f->dir);
	errno = err;
	return -1;
}

int vt_fuse_reads(struct vt_fuse *f)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->reads;
	pthread_mutex_unlock(&f->lock);
	return n;
}

void vt_fuse_fail_reads(struct vt_fuse *f)
{
	int i;

	pthread_mutex_lock(&f->lock);
	f->stopping = 1;
	for (i = 0; i < f->npending; i++)
		fuse_reply(f->dev, f->pending[i], -EIO, NULL, 0);
	f->npending = 0;
	pthread_mutex_unlock(&f->lock);
}

void vt_fuse_stop(struct vt_fuse *f)
{
	vt_fuse_fail_reads(f);
	umount2(f->dir, MNT_DETACH);
	pthread_join(f->server, NULL);
	close(f->dev);
	rmdir(f->dir);
}

/* ---- SR-IOV ----------------------------------------------------------- */

int vt_sriov_numvfs(const char *pf, int n)
{
	char path[PATH_MAX], val[16];

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/sriov_numvfs", pf);
	snprintf(val, sizeof(val), "%d", n);
	return vt_write_file(path, val);
}

int vt_vfio_enable_sriov(int on)
{
	return vt_write_file("/sys/module/vfio_pci/parameters/enable_sriov",
			     on ? "1" : "0");
}

#define NVME_ADMIN_IDENTIFY	0x06
#define NVME_ADMIN_VIRT_MGMT	0x1c
#define NVME_CNS_SEC_CTRL_LIST	0x15
#define NVME_VM_PRI_FLEXIBLE	0x1	/* actions of Virtualization Mgmt */
#define NVME_VM_SEC_ASSIGN	0x8
#define NVME_VM_SEC_ONLINE	0x9
#define NVME_RT_VQ		0	/* resource types: queues ... */
#define NVME_RT_VI		1	/* ... and interrupts */

static int nvme_admin(int fd, uint8_t op, uint32_t cdw10, uint32_t cdw11,
		      void *data, uint32_t len)
{
	struct nvme_admin_cmd c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	c.cdw10 = cdw10;
	c.cdw11 = cdw11;
	c.addr = (uintptr_t)data;
	c.data_len = len;
	ret = ioctl(fd, NVME_IOCTL_ADMIN_CMD, &c);
	if (ret > 0) {		/* an NVMe status */
		errno = EIO;
		return -ret;
	}
	return ret;
}

static int virt_mgmt(int fd, unsigned int act, unsigned int rt,
		     unsigned int cntlid, unsigned int nr)
{
	return nvme_admin(fd, NVME_ADMIN_VIRT_MGMT,
			  act | rt << 8 | cntlid << 16, nr, NULL, 0);
}

/* The /dev node of the NVMe controller on pf, opened; -1 when none. */
static int nvme_ctrl_open(const char *pf, int timeout_ms)
{
	char path[PATH_MAX];
	struct dirent *de;
	uint64_t end = vt_now_ms() + timeout_ms;
	DIR *d;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/nvme", pf);
	for (;;) {
		d = opendir(path);
		while (d && (de = readdir(d))) {
			char node[300];
			int fd;

			if (strncmp(de->d_name, "nvme", 4))
				continue;
			snprintf(node, sizeof(node), "/dev/%s", de->d_name);
			fd = open(node, O_RDWR | O_CLOEXEC);
			if (fd >= 0) {
				closedir(d);
				return fd;
			}
		}
		if (d)
			closedir(d);
		if (vt_now_ms() > end) {
			errno = ETIMEDOUT;
			return -1;
		}
		usleep(50000);
	}
}

/* Admin commands fail while the controller resets: retry for a while. */
static int nvme_admin_retry(int fd, uint8_t op, uint32_t cdw10,
			    uint32_t cdw11, void *data, uint32_t len)
{
	int ret, i;

	for (i = 0; i < 50; i++) {
		ret = nvme_admin(fd, op, cdw10, cdw11, data, len);
		if (ret >= 0 || errno != EBUSY)
			break;
		usleep(100000);
	}
	return ret;
}

int vt_nvme_vf_online(const char *pf, char *msg, size_t msglen)
{
	char path[PATH_MAX];
	uint8_t list[4096];
	unsigned int scid;
	int fd, ret;

	fd = -1;
	if (system("modprobe nvme 2>/dev/null")) {
		snprintf(msg, msglen, "modprobe nvme failed (run with --intree nvme)");
		goto fail;
	}
	if (vt_bind(pf, "nvme")) {
		snprintf(msg, msglen, "bind %s to nvme: %s", pf, strerror(errno));
		goto fail;
	}
	fd = nvme_ctrl_open(pf, 10000);
	if (fd < 0) {
		snprintf(msg, msglen, "no nvme controller node for %s: %s", pf,
			 strerror(errno));
		goto fail;
	}
	/*
	 * QEMU gives the PF every flexible resource at first: hand them
	 * back (effective at the PF's next reset), so that the VF can have
	 * them.
	 */
	if (virt_mgmt(fd, NVME_VM_PRI_FLEXIBLE, NVME_RT_VQ, 0, 0) ||
	    virt_mgmt(fd, NVME_VM_PRI_FLEXIBLE, NVME_RT_VI, 0, 0)) {
		snprintf(msg, msglen, "primary flexible allocation: %s",
			 strerror(errno));
		goto fail;
	}
	close(fd);
	fd = -1;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/reset", pf);
	if (vt_write_file(path, "1")) {
		snprintf(msg, msglen, "reset %s: %s", pf, strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/sriov_drivers_autoprobe",
		 pf);
	if (vt_write_file(path, "0")) {
		snprintf(msg, msglen, "sriov_drivers_autoprobe: %s", strerror(errno));
		goto fail;
	}
	if (vt_sriov_numvfs(pf, 1)) {
		snprintf(msg, msglen, "sriov_numvfs=1 on nvme: %s", strerror(errno));
		goto fail;
	}
	fd = nvme_ctrl_open(pf, 10000);
	if (fd < 0) {
		snprintf(msg, msglen, "nvme node gone after reset: %s", strerror(errno));
		goto fail;
	}
	memset(list, 0, sizeof(list));
	ret = nvme_admin_retry(fd, NVME_ADMIN_IDENTIFY, NVME_CNS_SEC_CTRL_LIST,
			       0, list, sizeof(list));
	if (ret < 0 || !list[0]) {
		snprintf(msg, msglen, "identify secondary controllers: ret %d, %u entries",
			 ret, list[0]);
		goto fail;
	}
	/* Entry 0 at byte 32: SCID in its first two bytes. */
	scid = list[32] | list[33] << 8;
	if (virt_mgmt(fd, NVME_VM_SEC_ASSIGN, NVME_RT_VQ, scid, 2) ||
	    virt_mgmt(fd, NVME_VM_SEC_ASSIGN, NVME_RT_VI, scid, 1) ||
	    virt_mgmt(fd, NVME_VM_SEC_ONLINE, 0, scid, 0)) {
		snprintf(msg, msglen, "assign/online secondary %u: %s", scid,
			 strerror(errno));
		goto fail;
	}
	close(fd);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	errno = EIO;
	return -1;
}
