// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-owner: the mm ownership lock and non-root use.  Once a process holds
 * an IOMMU or device fd of a group, every other process (a forked child
 * has a new mm) gets -EPERM for everything but GET_INFO until the owner's
 * last such fd closes.  File permissions on /dev/vfio/pci:N are the only
 * gate for an unprivileged user.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define OTHER_UID	1001	/* an unprivileged uid that owns nothing */

/* Run fn(arg) in a child as uid (-1: root); its failure fails the case. */
#define IN_CHILD(t, uid, fn, arg) do {					\
	char __msg[1024];						\
	if (vt_child_run((uid), (uid), NULL, (fn), (arg), #fn, __msg,	\
			 sizeof(__msg)))				\
		vt_fail((t), __FILE__, __LINE__, "uid %d: %s",		\
			(int)(uid), __msg);				\
} while (0)

static int open_group(struct vt *t, const char *dev)
{
	int fd = vt_open_group_of(dev);

	VT_CHECKF(t, fd >= 0, "open the group of %s: %s", dev, strerror(errno));
	return fd;
}

struct two_groups {
	int a;		/* edu0's group fd, owned by the parent */
	int b;		/* edu1's group fd, idle */
};

/* Everything but GET_INFO is refused to a process that is not the owner. */
static void child_refused(struct vt *t, void *arg)
{
	struct two_groups *g = arg;
	struct vfio_group_info info = {
		.argsz = sizeof(info), .flags = 0,
	};
	int32_t fd = g->b;
	int own;

	VT_OK(t, ioctl(g->a, VFIO_GROUP_GET_INFO, &info));
	VT_CHECKF(t, info.flags & VFIO_GROUP_FLAGS_MM_LOCKED,
		  "flags 0x%x: MM_LOCKED not shown to another process",
		  info.flags);
	VT_CHECKF(t, info.flags & VFIO_GROUP_FLAGS_VIABLE,
		  "flags 0x%x: VIABLE missing", info.flags);
	VT_ERRNO(t, ioctl(g->a, VFIO_GROUP_MERGE, &fd), EPERM);
	VT_ERRNO(t, ioctl(g->a, VFIO_GROUP_UNMERGE), EPERM);
	VT_ERRNO(t, ioctl(g->a, VFIO_GROUP_GET_IOMMU_FD), EPERM);
	VT_ERRNO(t, ioctl(g->a, VFIO_GROUP_GET_DEVICE_FD, VT_EDU0), EPERM);

	/* Opening the node anew changes nothing: the lock is the group's. */
	own = VT_OK(t, vt_open_group_of(VT_EDU0));
	VT_ERRNO(t, ioctl(own, VFIO_GROUP_GET_IOMMU_FD), EPERM);
	VT_ERRNO(t, ioctl(own, VFIO_GROUP_GET_DEVICE_FD, VT_EDU0), EPERM);
	close(own);
}

static void test_other_process_eperm(struct vt *t, void *arg)
{
	struct two_groups g;
	int iommu;

	(void)arg;
	g.a = open_group(t, VT_EDU0);
	g.b = open_group(t, VT_EDU1);
	iommu = VT_OK(t, vt_iommu_fd(g.a));
	IN_CHILD(t, (uid_t)-1, child_refused, &g);
	close(iommu);
	close(g.a);
	close(g.b);
}

/*
 * The owner's IOMMU fd, inherited over fork: the child's pages would be
 * pinned into the owner's IOMMU and charged to nobody, so MAP and UNMAP
 * are refused; GET_INFO is harmless and works.
 */
static void child_inherited_iommu(struct vt *t, void *arg)
{
	struct vfio_iommu_info info = { .argsz = sizeof(info) };
	int iommu = *(int *)arg;
	uint8_t *page;

	VT_OK(t, ioctl(iommu, VFIO_IOMMU_GET_INFO, &info));
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, page != MAP_FAILED, "mmap: %s", strerror(errno));
	page[0] = 1;
	VT_ERRNO(t, vt_map(iommu, page, 0x200000, 4096, 0), EPERM);
	/* The parent's map at 0x100000 is not the child's to remove. */
	VT_ERRNO(t, vt_unmap(iommu, 0x100000, 4096), EPERM);
}

static void test_inherited_iommu_fd(struct vt *t, void *arg)
{
	int group = open_group(t, VT_EDU0);
	long pins, now;
	uint8_t *page;
	int iommu;

	(void)arg;
	iommu = VT_OK(t, vt_iommu_fd(group));
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, page != MAP_FAILED, "mmap: %s", strerror(errno));
	page[0] = 1;
	VT_OK(t, vt_map(iommu, page, 0x100000, 4096, 0));
	pins = vt_pinned_now();
	IN_CHILD(t, (uid_t)-1, child_inherited_iommu, &iommu);
	now = vt_pinned_now();
	VT_CHECKF(t, now == pins, "pinned pages went from %ld to %ld", pins, now);
	/* Our map survived the child's attempt. */
	VT_ERRNO(t, vt_map(iommu, page, 0x100000, 4096, 0), EBUSY);
	VT_OK(t, vt_unmap(iommu, 0x100000, 4096));
	close(iommu);
	close(group);
	munmap(page, 4096);
}

/* A device fd alone makes the opener the owner too. */
static void child_iommu_refused(struct vt *t, void *arg)
{
	int group = VT_OK(t, vt_open_group_of(arg));

	VT_ERRNO(t, ioctl(group, VFIO_GROUP_GET_IOMMU_FD), EPERM);
	close(group);
}

static void test_device_fd_owns(struct vt *t, void *arg)
{
	int group = open_group(t, VT_EDU0);
	int dev;

	(void)arg;
	dev = VT_OK(t, vt_device_fd(group, VT_EDU0));
	IN_CHILD(t, (uid_t)-1, child_iommu_refused, VT_EDU0);
	close(dev);
	close(group);
}

/* The whole set can be taken: IOMMU fd, device fd, MM_LOCKED shown. */
static void child_takes(struct vt *t, void *arg)
{
	int group = VT_OK(t, vt_open_group_of(arg));
	uint32_t flags;
	int iommu, dev;

	VT_OK(t, vt_group_flags(group, &flags));
	VT_CHECKF(t, !(flags & VFIO_GROUP_FLAGS_MM_LOCKED),
		  "flags 0x%x: still MM_LOCKED after the owner let go", flags);
	iommu = VT_OK(t, vt_iommu_fd(group));
	dev = VT_OK(t, vt_device_fd(group, arg));
	VT_OK(t, vt_group_flags(group, &flags));
	VT_CHECKF(t, flags & VFIO_GROUP_FLAGS_MM_LOCKED,
		  "flags 0x%x: the new owner is not shown", flags);
	close(dev);
	close(iommu);
	close(group);
}

static void test_owner_closes_all(struct vt *t, void *arg)
{
	int group = open_group(t, VT_EDU0);
	int iommu, dev;

	(void)arg;
	iommu = VT_OK(t, vt_iommu_fd(group));
	dev = VT_OK(t, vt_device_fd(group, VT_EDU0));
	close(dev);
	close(iommu);
	close(group);
	IN_CHILD(t, (uid_t)-1, child_takes, VT_EDU0);

	/* And the child's exit handed it back to us. */
	group = open_group(t, VT_EDU0);
	iommu = VT_OK(t, vt_iommu_fd(group));
	close(iommu);
	close(group);
}

/* Closing the IOMMU and device fds is enough; the group fd may stay. */
static void test_owner_keeps_group_fd(struct vt *t, void *arg)
{
	int group = open_group(t, VT_EDU0);
	int iommu;

	(void)arg;
	iommu = VT_OK(t, vt_iommu_fd(group));
	close(iommu);
	IN_CHILD(t, (uid_t)-1, child_takes, VT_EDU0);
	close(group);
}

struct node {
	char path[64];
	struct stat st;
};

static void node_save(struct vt *t, struct node *n, const char *dev)
{
	int grp = vt_group_id(dev);

	VT_CHECKF(t, grp >= 0, "no iommu_group for %s", dev);
	snprintf(n->path, sizeof(n->path), "/dev/vfio/pci:%d", grp);
	VT_CHECKF(t, stat(n->path, &n->st) == 0, "stat %s: %s", n->path,
		  strerror(errno));
}

static void node_restore(struct node *n)
{
	if (chown(n->path, n->st.st_uid, n->st.st_gid) ||
	    chmod(n->path, n->st.st_mode & 07777))
		printf("# restore %s: %s\n", n->path, strerror(errno));
}

/* Documentation/vfio.txt's usage example, as an unprivileged user. */
static void child_user_drives(struct vt *t, void *arg)
{
	struct vfio_region_info reg;
	uint32_t flags, id = 0;
	int group, iommu, dev;
	void *buf;

	(void)arg;
	group = VT_OK(t, vt_open_group_of(VT_EDU0));
	VT_OK(t, vt_group_flags(group, &flags));
	VT_CHECKF(t, flags & VFIO_GROUP_FLAGS_VIABLE, "flags 0x%x", flags);
	iommu = VT_OK(t, vt_iommu_fd(group));
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, buf != MAP_FAILED, "mmap: %s", strerror(errno));
	VT_OK(t, vt_map(iommu, buf, 0x100000, 4096, 0));
	dev = VT_OK(t, vt_device_fd(group, VT_EDU0));
	VT_OK(t, vt_region_info(dev, VFIO_PCI_BAR0_REGION_INDEX, &reg));
	VT_CHECKF(t, pread(dev, &id, 4, reg.offset + VT_EDU_ID) == 4,
		  "pread BAR0: %s", strerror(errno));
	VT_CHECKF(t, (id & 0xffff) == 0x00ed, "edu id register 0x%08x", id);
	VT_OK(t, vt_unmap(iommu, 0x100000, 4096));
	close(dev);
	close(iommu);
	close(group);
}

static void child_open_refused(struct vt *t, void *arg)
{
	int fd;

	errno = 0;
	fd = vt_open_group_of(arg);
	VT_CHECKF(t, fd < 0 && errno == EACCES,
		  "open the group of %s as uid %d: fd %d, %s (want EACCES)",
		  (const char *)arg, (int)getuid(), fd, strerror(errno));
}

/*
 * Give the group node of edu0 to VT_USER_UID (mode 0600), run fn as uid
 * in a child, and put the node back before judging.
 */
static void with_user_node(struct vt *t, uid_t uid, vt_child_fn fn,
			   void *arg, const char *name)
{
	char msg[1024];
	struct node n;
	int ret = -1;

	node_save(t, &n, VT_EDU0);
	if (chown(n.path, VT_USER_UID, VT_USER_GID) == 0 &&
	    chmod(n.path, 0600) == 0)
		ret = vt_child_run(uid, uid, NULL, fn, arg, name, msg,
				   sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "chown/chmod %s: %s", n.path,
			 strerror(errno));
	node_restore(&n);
	VT_CHECKF(t, ret == 0, "uid %d: %s", (int)uid, msg);
}

static void test_nonroot_user(struct vt *t, void *arg)
{
	(void)arg;
	with_user_node(t, VT_USER_UID, child_user_drives, NULL,
		       "user_drives");
}

static void test_other_uid_eacces(struct vt *t, void *arg)
{
	(void)arg;
	with_user_node(t, OTHER_UID, child_open_refused, VT_EDU0,
		       "open_refused");
}

int main(void)
{
	struct vt t = { .prog = "t-owner" };

	VT_RUN_CLOSE(&t, test_other_process_eperm);
	VT_RUN_CLOSE(&t, test_inherited_iommu_fd);
	VT_RUN_CLOSE(&t, test_device_fd_owns);
	VT_RUN_CLOSE(&t, test_owner_closes_all);
	VT_RUN_CLOSE(&t, test_owner_keeps_group_fd);
	VT_RUN_CLOSE(&t, test_nonroot_user);
	VT_RUN_CLOSE(&t, test_other_uid_eacces);
	return vt_done(&t);
}
