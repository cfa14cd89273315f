// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-container-group: the group nodes /dev/vfio/N of today's VFIO ABI (N the
 * IOMMU group id), as upstream drivers/vfio/group.c defines them:
 * GET_STATUS, SET/UNSET_CONTAINER and their errors, GET_DEVICE_FD,
 * single open, the node permissions (a user given both nodes drives the
 * device through this one, anyone else is refused on both), and that a
 * group is in use through only one ABI at a time (/dev/vfio/pci:N of the
 * seed, or /dev/vfio/N).
 *
 * Built against the distribution's <linux/vfio.h>, never the seed header.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vt.h"
#include "vtcontainer.h"

#define IOVA		0x100000ULL
#define VFIO_MINOR	196		/* misc minor of /dev/vfio/vfio */
#define MISC_MAJOR	10
#define VIABLE		VFIO_GROUP_FLAGS_VIABLE
#define CONTAINER_SET	VFIO_GROUP_FLAGS_CONTAINER_SET

/* Run fn(arg) in a child as uid (-1: root); its failure fails the case. */
#define IN_CHILD(t, uid, fn, arg) do {					\
	char __msg[1024];						\
	if (vt_child_run((uid), (uid), NULL, (fn), (arg), #fn, __msg,	\
			 sizeof(__msg)))				\
		vt_fail((t), __FILE__, __LINE__, "uid %d: %s",		\
			(int)(uid), __msg);				\
} while (0)

static int container_open(struct vt *t)
{
	int fd = vtc_open_container();

	VT_CHECKF(t, fd >= 0, "open %s: %s", VTC_CONTAINER_PATH,
		  strerror(errno));
	return fd;
}

static int group_open(struct vt *t, const char *dev)
{
	int fd = vtc_open_group_of(dev);

	VT_CHECKF(t, fd >= 0, "open /dev/vfio/%d (group of %s): %s",
		  vt_group_id(dev), dev, strerror(errno));
	return fd;
}

static void check_status(struct vt *t, int group, uint32_t want)
{
	uint32_t flags = ~0u;

	VT_OK(t, vtc_group_status(group, &flags));
	VT_CHECKF(t, flags == want, "GROUP_GET_STATUS flags 0x%x, want 0x%x",
		  flags, want);
}

/* open() of the seed node /dev/vfio/pci:<group>. */
static int seed_open(int group)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/vfio/pci:%d", group);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* ---- GET_STATUS --------------------------------------------------------- */

static void test_status(struct vt *t, void *arg)
{
	struct vfio_group_status st = { .argsz = sizeof(st) - 1 };
	int group, container;

	(void)arg;
	group = group_open(t, VT_EDU0);
	check_status(t, group, VIABLE);
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_STATUS, &st), EINVAL);
	container = container_open(t);
	VT_OK(t, vtc_set_container(group, container));
	check_status(t, group, VIABLE | CONTAINER_SET);
	VT_OK(t, vtc_set_iommu(container, 0));
	check_status(t, group, VIABLE | CONTAINER_SET);
	/* The group holds the container: its fd may go first. */
	close(container);
	check_status(t, group, VIABLE | CONTAINER_SET);
	VT_OK(t, vtc_unset_container(group));
	check_status(t, group, VIABLE);
	close(group);
}

/* ---- SET_CONTAINER / UNSET_CONTAINER ------------------------------------ */

/*
 * vfio_group_ioctl_set_container: an fd that is not open is EBADF; an
 * open fd that is neither a container nor an iommufd is EBADFD (Linux
 * 6.2 and later; 6.1 said EINVAL); a group that has a container already
 * is EINVAL, whatever the second container.
 */
static void test_set_container_errors(struct vt *t, void *arg)
{
	int group, other, container, c2, null, efd, closed;

	(void)arg;
	group = group_open(t, VT_EDU0);
	other = group_open(t, VT_EDU1);
	null = VT_OK(t, open("/dev/null", O_RDWR | O_CLOEXEC));
	efd = VT_OK(t, eventfd(0, EFD_CLOEXEC));
	closed = VT_OK(t, dup(null));
	close(closed);

	VT_ERRNO(t, vtc_set_container(group, -1), EBADF);
	VT_ERRNO(t, vtc_set_container(group, closed), EBADF);
	VT_ERRNO(t, vtc_set_container(group, null), EBADFD);
	VT_ERRNO(t, vtc_set_container(group, efd), EBADFD);
	VT_ERRNO(t, vtc_set_container(group, other), EBADFD);
	VT_ERRNO(t, vtc_set_container(group, group), EBADFD);
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_SET_CONTAINER, NULL), EFAULT);
	check_status(t, group, VIABLE);

	container = container_open(t);
	c2 = container_open(t);
	VT_OK(t, vtc_set_container(group, container));
	VT_ERRNO(t, vtc_set_container(group, container), EINVAL);
	VT_ERRNO(t, vtc_set_container(group, c2), EINVAL);
	check_status(t, group, VIABLE | CONTAINER_SET);
	VT_OK(t, vtc_unset_container(group));
	/* and free to join another one now */
	VT_OK(t, vtc_set_container(group, c2));
	VT_OK(t, vtc_unset_container(group));
	close(c2);
	close(container);
	close(efd);
	close(null);
	close(other);
	close(group);
}

static void test_unset_without_container(struct vt *t, void *arg)
{
	int group, container;

	(void)arg;
	group = group_open(t, VT_EDU0);
	VT_ERRNO(t, vtc_unset_container(group), EINVAL);
	container = container_open(t);
	VT_OK(t, vtc_set_container(group, container));
	VT_OK(t, vtc_unset_container(group));
	VT_ERRNO(t, vtc_unset_container(group), EINVAL);
	close(container);
	close(group);
}

/* A device fd is a user of the container: UNSET is EBUSY until it goes. */
static void test_unset_busy(struct vt *t, void *arg)
{
	struct vtc_dev d;

	(void)arg;
	VT_CHECKF(t, vtc_open_dev(&d, VT_EDU0, 0) == 0, "open %s: %s",
		  VT_EDU0, strerror(errno));
	VT_ERRNO(t, vtc_unset_container(d.group_fd), EBUSY);
	check_status(t, d.group_fd, VIABLE | CONTAINER_SET);
	close(d.device_fd);
	d.device_fd = -1;
	VT_OK(t, vtc_unset_container(d.group_fd));
	check_status(t, d.group_fd, VIABLE);
	vtc_close_dev(&d);
}

/* ---- GET_DEVICE_FD -------------------------------------------------------- */

/*
 * Names are looked up first (ENODEV for a device not in this group,
 * even before a container); a known device needs a container with an
 * IOMMU set (vfio_group_use_container: EINVAL).
 */
/*
 * UNSET_CONTAINER while its device is being unbound and its fd is still
 * open: -EBUSY, as for any open device, and GET_DEVICE_FD no longer finds
 * it.  Before, the unbind took the device off its group before waiting
 * for the user, so the group could leave the container (and its IOMMU
 * domain) with the device still live.
 */
struct window_unbind {
	pthread_t thread;
	int ret, err;
};

static void *window_unbind_thread(void *arg)
{
	struct window_unbind *u = arg;

	u->ret = vt_unbind(VT_EDU1);
	u->err = errno;
	return NULL;
}

static void test_unset_during_release(struct vt *t, void *arg)
{
	struct window_unbind u = { 0 };
	struct vtc_dev d;
	int32_t req;

	(void)arg;
	VT_OK(t, vtc_open_dev(&d, VT_EDU1, 0));
	req = VT_OK(t, eventfd(0, EFD_CLOEXEC));
	VT_OK(t, vtc_set_irq_eventfds(d.device_fd, VFIO_PCI_REQ_IRQ_INDEX, 0,
				      1, &req));
	VT_CHECKF(t, pthread_create(&u.thread, NULL, window_unbind_thread,
				    &u) == 0, "pthread_create failed");
	if (vt_wait_eventfd(req, 10000, NULL)) {
		pthread_join(u.thread, NULL);
		vt_bind_vfio(VT_EDU1);
		vt_fail(t, __FILE__, __LINE__, "no release request: %s",
			strerror(errno));
	}
	errno = 0;
	VT_CHECKF(t, vtc_unset_container(d.group_fd) < 0 && errno == EBUSY,
		  "UNSET_CONTAINER during the release window: %s, not EBUSY",
		  errno ? strerror(errno) : "success");
	VT_CHECKF(t, vtc_device_fd(d.group_fd, VT_EDU1) < 0 && errno == ENODEV,
		  "GET_DEVICE_FD of the leaving device: %s, not ENODEV",
		  strerror(errno));
	close(d.device_fd);
	d.device_fd = -1;
	pthread_join(u.thread, NULL);
	VT_CHECKF(t, u.ret == 0, "unbind: %s", strerror(u.err));
	vtc_close_dev(&d);
	VT_CHECKF(t, vt_bind_vfio(VT_EDU1) == 0, "rebind %s: %s", VT_EDU1,
		  strerror(errno));
}

static void test_get_device_fd(struct vt *t, void *arg)
{
	static const char *const bad[] = {
		VT_EDU1, "0000:00:1f.0", "0000:00:02.1", "00:02.0", "edu",
		"",
	};
	int group, container, fd, fd2, flags;
	unsigned int i;

	(void)arg;
	group = group_open(t, VT_EDU0);
	VT_ERRNO(t, vtc_device_fd(group, VT_EDU0), EINVAL);
	VT_ERRNO(t, vtc_device_fd(group, VT_EDU1), ENODEV);
	container = container_open(t);
	VT_OK(t, vtc_set_container(group, container));
	VT_ERRNO(t, vtc_device_fd(group, VT_EDU0), EINVAL);
	VT_OK(t, vtc_set_iommu(container, 0));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		fd = vtc_device_fd(group, bad[i]);
		VT_CHECKF(t, fd == -1 && errno == ENODEV, "GET_DEVICE_FD "
			  "\"%s\": %d/%s, want -1/ENODEV", bad[i], fd,
			  strerror(errno));
	}
	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_DEVICE_FD, NULL), EFAULT);

	fd = VT_OK(t, vtc_device_fd(group, VT_EDU0));
	flags = VT_OK(t, fcntl(fd, F_GETFD));
	VT_CHECKF(t, flags & FD_CLOEXEC, "device fd without FD_CLOEXEC");
	flags = VT_OK(t, fcntl(fd, F_GETFL));
	VT_CHECKF(t, (flags & O_ACCMODE) == O_RDWR, "device fd flags 0x%x",
		  flags);
	/* Upstream counts opens: a second fd of the same device is fine. */
	fd2 = VT_OK(t, vtc_device_fd(group, VT_EDU0));
	VT_CHECKF(t, fd2 != fd, "same fd twice");
	close(fd2);
	close(fd);
	close(container);
	close(group);
}

/*
 * A device fd holds its group file: the group stays in use (and its
 * container with its mappings) after the group fd is closed, until the
 * device fd goes.
 */
static void test_device_holds_group(struct vt *t, void *arg)
{
	struct vtc_dev d;
	uint8_t *buf;
	int again;

	(void)arg;
	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	buf[0] = 1;
	VT_CHECKF(t, vtc_open_dev(&d, VT_EDU0, 0) == 0, "open %s: %s",
		  VT_EDU0, strerror(errno));
	close(d.group_fd);
	d.group_fd = -1;
	VT_ERRNO(t, vtc_open_group_of(VT_EDU0), EBUSY);
	VT_OK(t, vtc_map(d.container_fd, buf, IOVA, PG, 0));
	VT_OK(t, vtc_unmap(d.container_fd, IOVA, PG, NULL));
	close(d.device_fd);
	d.device_fd = -1;
	again = VT_OK(t, vtc_open_group_of(VT_EDU0));
	check_status(t, again, VIABLE);
	close(again);
	vtc_close_dev(&d);
	munmap(buf, PG);
}

/* ---- opening the node ---------------------------------------------------- */

/* One open file per group (vfio_group_fops_open: "Seems not" needed). */
static void test_single_open(struct vt *t, void *arg)
{
	int a, b;

	(void)arg;
	a = group_open(t, VT_EDU0);
	VT_ERRNO(t, vtc_open_group_of(VT_EDU0), EBUSY);
	/* Another group is another story. */
	b = group_open(t, VT_EDU1);
	close(b);
	close(a);
	a = group_open(t, VT_EDU0);
	close(a);
}

static void test_unknown_ioctl(struct vt *t, void *arg)
{
	int group;

	(void)arg;
	group = group_open(t, VT_EDU0);
	VT_ERRNO(t, ioctl(group, _IO(VFIO_TYPE, VFIO_BASE + 60)), ENOTTY);
	VT_ERRNO(t, ioctl(group, VFIO_GET_API_VERSION), ENOTTY);
	VT_ERRNO(t, ioctl(group, VFIO_IOMMU_MAP_DMA, NULL), ENOTTY);
	close(group);
}

/*
 * A group is in use through one ABI at a time: while the seed node is
 * open the container node is EBUSY and the other way round, and each opens
 * again once the other is closed.
 */
static void test_cross_abi_exclusion(struct vt *t, void *arg)
{
	int g = vt_group_id(VT_EDU0), seed, ctr;

	(void)arg;
	VT_CHECKF(t, g >= 0, "group of %s: %s", VT_EDU0, strerror(errno));
	seed = seed_open(g);
	VT_CHECKF(t, seed >= 0, "open /dev/vfio/pci:%d: %s", g,
		  strerror(errno));
	VT_ERRNO(t, vtc_open_group(g, O_RDWR), EBUSY);
	close(seed);

	ctr = VT_OK(t, vtc_open_group(g, O_RDWR));
	VT_ERRNO(t, seed_open(g), EBUSY);
	close(ctr);

	seed = seed_open(g);
	VT_CHECKF(t, seed >= 0, "open /dev/vfio/pci:%d after the container node "
		  "closed: %s", g, strerror(errno));
	close(seed);
	ctr = VT_OK(t, vtc_open_group(g, O_RDWR));
	check_status(t, ctr, VIABLE);
	close(ctr);
}

/* ---- the nodes ------------------------------------------------------------ */

static void check_node(struct vt *t, const char *path, mode_t mode)
{
	struct stat st;

	VT_CHECKF(t, stat(path, &st) == 0, "stat %s: %s", path,
		  strerror(errno));
	VT_CHECKF(t, S_ISCHR(st.st_mode), "%s: mode 0%o is not a char device",
		  path, st.st_mode);
	VT_CHECKF(t, (st.st_mode & 07777) == mode, "%s: mode 0%o, want 0%o",
		  path, st.st_mode & 07777, mode);
	VT_CHECKF(t, st.st_uid == 0 && st.st_gid == 0, "%s: owner %d:%d",
		  path, (int)st.st_uid, (int)st.st_gid);
}

static void child_user_nodes(struct vt *t, void *arg)
{
	int g = *(int *)arg, c;

	VT_ERRNO(t, vtc_open_group(g, O_RDWR), EACCES);
	VT_ERRNO(t, vtc_open_group(g, O_RDONLY), EACCES);
	c = VT_OK(t, vtc_open_container());
	VT_CHECKF(t, ioctl(c, VFIO_GET_API_VERSION) == VFIO_API_VERSION,
		  "GET_API_VERSION as a user");
	VT_CHECKF(t, ioctl(c, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) == 1,
		  "CHECK_EXTENSION(TYPE1v2) as a user");
	VT_ERRNO(t, vtc_set_iommu(c, 0), EINVAL);
	close(c);
}

/*
 * /dev/vfio/vfio is the misc device 10:196 for everyone (0666): it
 * gives nothing without a group.  A group node is root's alone (0600)
 * until an administrator hands it out; a plain user gets EACCES.
 */
static void test_node_permissions(struct vt *t, void *arg)
{
	static const char *const devs[] = {
		VT_EDU0, VT_EDU1, VT_TESTDEV0,
	};
	struct stat st;
	char path[64];
	unsigned int i;
	int g;

	(void)arg;
	check_node(t, VTC_CONTAINER_PATH, 0666);
	VT_OK(t, stat(VTC_CONTAINER_PATH, &st));
	VT_CHECKF(t, major(st.st_rdev) == MISC_MAJOR &&
		  minor(st.st_rdev) == VFIO_MINOR, "%s is %u:%u, want %d:%d",
		  VTC_CONTAINER_PATH, major(st.st_rdev), minor(st.st_rdev),
		  MISC_MAJOR, VFIO_MINOR);
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		g = vt_group_id(devs[i]);
		VT_CHECKF(t, g >= 0, "group of %s: %s", devs[i],
			  strerror(errno));
		snprintf(path, sizeof(path), "/dev/vfio/%d", g);
		check_node(t, path, 0600);
	}
	g = vt_group_id(VT_EDU0);
	IN_CHILD(t, VT_USER_UID, child_user_nodes, &g);
}

/* The user edu0's group nodes are handed to, and one they are not. */
#define OTHER_UID	1001

struct owned_node {
	char path[64];
	struct stat st;
};

/* What an administrator (udev) does: both nodes of a group to VT_USER. */
static int give_nodes(struct vt *t, struct owned_node n[2], int g)
{
	int i;

	snprintf(n[0].path, sizeof(n[0].path), "/dev/vfio/pci:%d", g);
	snprintf(n[1].path, sizeof(n[1].path), "/dev/vfio/%d", g);
	for (i = 0; i < 2; i++) {
		VT_CHECKF(t, stat(n[i].path, &n[i].st) == 0, "stat %s: %s",
			  n[i].path, strerror(errno));
		if (chown(n[i].path, VT_USER_UID, VT_USER_GID) ||
		    chmod(n[i].path, 0600)) {
			vt_fail(t, __FILE__, __LINE__, "chown/chmod %s: %s",
				n[i].path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void take_nodes(struct owned_node n[2])
{
	int i;

	for (i = 0; i < 2; i++)
		if (chown(n[i].path, n[i].st.st_uid, n[i].st.st_gid) ||
		    chmod(n[i].path, n[i].st.st_mode & 07777))
			printf("# restore %s: %s\n", n[i].path,
			       strerror(errno));
}

/* The owner: container, group, type1v2, a DMA map and BAR0, as DPDK. */
static void child_owner_drives(struct vt *t, void *arg)
{
	struct vfio_region_info r;
	struct vtc_dev d;
	uint32_t id = 0;
	void *buf;

	(void)arg;
	VT_OK(t, vtc_open_dev(&d, VT_EDU0, VFIO_TYPE1v2_IOMMU));
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	VT_OK(t, vtc_map(d.container_fd, buf, 0x100000, 4096,
			 VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE));
	VT_OK(t, vtc_region_info(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX, &r));
	VT_CHECKF(t, pread(d.device_fd, &id, 4, r.offset + VT_EDU_ID) == 4,
		  "pread of BAR0: %s", strerror(errno));
	VT_CHECKF(t, id == VT_EDU_ID_VALUE, "edu ID 0x%08x", id);
	VT_OK(t, vtc_unmap(d.container_fd, 0x100000, 4096, NULL));
	vtc_close_dev(&d);
	munmap(buf, 4096);
}

/* Anyone else: neither node opens, whichever ABI it belongs to. */
static void child_other_refused(struct vt *t, void *arg)
{
	struct owned_node *n = arg;
	int i;

	for (i = 0; i < 2; i++)
		VT_CHECKF(t, open(n[i].path, O_RDWR) < 0 && errno == EACCES,
			  "open %s as uid %d: %s (want EACCES)", n[i].path,
			  (int)getuid(), strerror(errno));
}

/*
 * A group handed to a user is theirs through today's node as through
 * the seed ABI's (t-owner drives that one); a third user is refused on
 * both.
 */
static void test_owner_nodes(struct vt *t, void *arg)
{
	struct owned_node n[2];
	int g = vt_group_id(VT_EDU0);

	(void)arg;
	VT_CHECKF(t, g >= 0, "group of %s: %s", VT_EDU0, strerror(errno));
	if (give_nodes(t, n, g) == 0) {
		IN_CHILD(t, VT_USER_UID, child_owner_drives, NULL);
		IN_CHILD(t, OTHER_UID, child_other_refused, n);
	}
	take_nodes(n);
}

int main(void)
{
	struct vt t = { .prog = "t-container-group" };

	VT_RUN_CLOSE(&t, test_status);
	VT_RUN_CLOSE(&t, test_set_container_errors);
	VT_RUN_CLOSE(&t, test_unset_without_container);
	VT_RUN_CLOSE(&t, test_unset_busy);
	VT_RUN_CLOSE(&t, test_unset_during_release);
	VT_RUN_CLOSE(&t, test_get_device_fd);
	VT_RUN_CLOSE(&t, test_device_holds_group);
	VT_RUN_CLOSE(&t, test_single_open);
	VT_RUN_CLOSE(&t, test_unknown_ioctl);
	VT_RUN_CLOSE(&t, test_cross_abi_exclusion);
	VT_RUN_CLOSE(&t, test_node_permissions);
	VT_RUN_CLOSE(&t, test_owner_nodes);
	return vt_done(&t);
}
