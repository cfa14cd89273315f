// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-fault: allocation failure injection on our paths.
 *
 * For each path (group open, merge, GET_IOMMU_FD, GET_DEVICE_FD, MAP_DMA,
 * a splitting UNMAP_DMA, SET_IRQ_EVENTFDS) the call is repeated with the
 * Nth slab or page allocation of the calling thread failing
 * (/proc/thread-self/fail-nth, N = 1, 2, ...), until a call gets through
 * without reaching its Nth allocation.  Every call that saw a failure must
 * return an out-of-memory style errno or succeed consistently; after each
 * attempt nothing stays pinned or charged, the group is not left owned,
 * and the same call without injection works.  kmemleak, when the kernel
 * has it, is scanned by tests/debug/run.sh after the suite.
 *
 * Needs CONFIG_FAULT_INJECTION (fail-nth) and, for slab and page
 * allocations that may sleep to be failed, the failslab/fail_page_alloc
 * debugfs knobs; skips with the reason on a kernel without them (the
 * distribution kernel).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define MAX_NTH		400
#define MAP_PAGES	16
#define DBG		"/sys/kernel/debug"

/* A debugfs knob and the value it had before the test. */
struct knob {
	const char *path;
	const char *want;
	char saved[32];
	int changed;
};

struct fctx {
	int nth_fd;		/* /proc/thread-self/fail-nth */
	struct knob knobs[8];
	int nknobs;
	long base_pins;
	long base_vmlck;
	uint8_t *buf;		/* MAP_PAGES pages, faulted in */
	int group_a;		/* IOMMU group of edu0 */
	long injected;		/* faults that hit a call, all paths */
	long attempts;
};

enum path {
	P_OPEN, P_MERGE, P_MERGE_BUSY, P_IOMMU_FD, P_DEVICE_FD, P_MAP,
	P_UNMAP_SPLIT, P_IRQ_MSI, P_IRQ_INTX,
};

/* ---- fail-nth ---------------------------------------------------------- */

static void arm(struct vt *t, struct fctx *c, int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%d", n);

	VT_CHECKF(t, pwrite(c->nth_fd, s, (size_t)len, 0) == len,
		    "arm fail-nth %d: %s", n, strerror(errno));
}

/* Disarm; whether the armed failure was injected. */
static int disarm(struct fctx *c)
{
	char s[16] = "";
	ssize_t len = pread(c->nth_fd, s, sizeof(s) - 1, 0);
	int left = len > 0 ? atoi(s) : -1;

	if (pwrite(c->nth_fd, "0", 1, 0) != 1)
		perror("t-fault: disarm fail-nth");
	return left == 0;
}

/* ---- setup ------------------------------------------------------------- */

static void knob_set(struct vt *t, struct fctx *c, const char *path,
		     const char *want)
{
	struct knob *k = &c->knobs[c->nknobs++];

	k->path = path;
	k->want = want;
	VT_OK(t, vt_read_file(path, k->saved, sizeof(k->saved)));
	VT_OK(t, vt_write_file(path, want));
	k->changed = 1;
}

static void knobs_restore(struct fctx *c)
{
	int i;

	for (i = 0; i < c->nknobs; i++)
		if (c->knobs[i].changed &&
		    vt_write_file(c->knobs[i].path, c->knobs[i].saved) < 0)
			fprintf(stderr, "t-fault: restore %s: %s\n",
				c->knobs[i].path, strerror(errno));
	c->nknobs = 0;
}

/*
 * fail-nth bypasses probability and intervals, but each injector still
 * skips allocations that may sleep (all of ours) and, for pages, order 0
 * and highmem ones unless told otherwise.  verbose=0: a stack dump per
 * failure would swamp the serial console under TCG.
 */
static int setup(struct vt *t, struct fctx *c)
{
	if (access("/proc/thread-self/fail-nth", W_OK) != 0)
		vt_skip(t, "kernel without CONFIG_FAULT_INJECTION "
			"(/proc/thread-self/fail-nth: %s)", strerror(errno));
	if (access(DBG "/failslab/ignore-gfp-wait", W_OK) != 0)
		vt_skip(t, "kernel without CONFIG_FAILSLAB and "
			"FAULT_INJECTION_DEBUG_FS (%s/failslab: %s)", DBG,
			strerror(errno));
	knob_set(t, c, DBG "/failslab/ignore-gfp-wait", "N");
	knob_set(t, c, DBG "/failslab/verbose", "0");
	if (access(DBG "/fail_page_alloc/ignore-gfp-wait", W_OK) == 0) {
		knob_set(t, c, DBG "/fail_page_alloc/ignore-gfp-wait", "N");
		knob_set(t, c, DBG "/fail_page_alloc/ignore-gfp-highmem", "N");
		knob_set(t, c, DBG "/fail_page_alloc/min-order", "0");
		knob_set(t, c, DBG "/fail_page_alloc/verbose", "0");
	} else {
		printf("# no fail_page_alloc: slab failures only\n");
	}
	c->nth_fd = VT_OK(t, open("/proc/thread-self/fail-nth",
				  O_RDWR | O_CLOEXEC));
	c->buf = mmap(NULL, MAP_PAGES * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	VT_CHECKF(t, c->buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(c->buf, 0x3c, MAP_PAGES * PG);
	c->group_a = VT_OK(t, vt_group_id(VT_EDU0));
	c->base_pins = VT_OK(t, vt_pinned_now());
	c->base_vmlck = VT_OK(t, vt_locked_kb(0));
	return 0;
}

/* ---- one attempt per path ---------------------------------------------- */

/*
 * Errnos an allocation failure may turn into.  EBUSY: the kernel's
 * request_region() says busy when it cannot allocate its resource.
 */
static int oom_errno(int e)
{
	return e == ENOMEM || e == EFAULT || e == ENOSPC || e == EAGAIN ||
	       e == ENFILE || e == EMFILE || e == EBUSY;
}

/*
 * GET_DEVICE_FD runs pci_enable_device(), which for a device with an INTx
 * pin evaluates ACPI _PRT; ACPICA does not survive an allocation failure
 * there (a failed reference count update, "Could not update object
 * reference count", later turns into a KASAN use-after-free in
 * acpi_ns_get_attached_object).  That is not our code: open pci-testdev,
 * which has no pin, on that path.
 */
static const char *path_dev(enum path p)
{
	return p == P_DEVICE_FD ? VT_TESTDEV0 : VT_EDU0;
}

/* The state an attempt sets up before the armed call. */
struct fixture {
	int a, b;		/* group fds: edu0, edu1 */
	int iommu_a;
	int device;
	int efd;
	int mapped;
};

static void fix_close(struct fixture *f)
{
	if (f->device >= 0)
		close(f->device);
	if (f->efd >= 0)
		close(f->efd);
	if (f->iommu_a >= 0)
		close(f->iommu_a);
	if (f->b >= 0) {
		ioctl(f->b, VFIO_GROUP_UNMERGE);
		close(f->b);
	}
	if (f->a >= 0) {
		ioctl(f->a, VFIO_GROUP_UNMERGE);
		close(f->a);
	}
	f->a = f->b = f->iommu_a = f->device = f->efd = -1;
}

static void fix_open(struct vt *t, struct fixture *f, enum path p,
		     struct fctx *c)
{
	f->a = f->b = f->iommu_a = f->device = f->efd = -1;
	f->mapped = 0;
	if (p == P_OPEN)
		return;
	f->a = VT_OK(t, vt_open_group_of(path_dev(p)));
	if (p == P_MERGE || p == P_MERGE_BUSY)
		f->b = VT_OK(t, vt_open_group_of(VT_EDU1));
	if (p == P_MERGE || p == P_IOMMU_FD)
		return;
	f->iommu_a = VT_OK(t, vt_iommu_fd(f->a));
	if (p == P_MERGE_BUSY || p == P_DEVICE_FD || p == P_MAP)
		return;
	if (p == P_UNMAP_SPLIT) {
		VT_OK(t, vt_map(f->iommu_a, c->buf, 0x100000, 4 * PG, 0));
		f->mapped = 1;
		return;
	}
	f->device = VT_OK(t, vt_device_fd(f->a, VT_EDU0));
	f->efd = VT_OK(t, eventfd(0, EFD_CLOEXEC));
}

/* The call under test; its result, errno in *err. */
static long call(struct fixture *f, enum path p, struct fctx *c, int *err)
{
	int32_t efd = f->efd;
	long r;

	switch (p) {
	case P_OPEN:
		r = vt_open_group(c->group_a, O_RDWR);
		break;
	case P_MERGE:
	case P_MERGE_BUSY:
		r = ioctl(f->a, VFIO_GROUP_MERGE, &f->b);
		break;
	case P_IOMMU_FD:
		r = vt_iommu_fd(f->a);
		break;
	case P_DEVICE_FD:
		r = vt_device_fd(f->a, path_dev(p));
		break;
	case P_MAP:
		r = vt_map(f->iommu_a, c->buf, 0x200000, MAP_PAGES * PG, 0);
		break;
	case P_UNMAP_SPLIT:
		r = vt_unmap(f->iommu_a, 0x100000 + PG, PG);
		break;
	case P_IRQ_MSI:
		r = vt_set_irq_eventfds(f->device, VFIO_PCI_MSI_IRQ_INDEX, 1,
					&efd);
		break;
	case P_IRQ_INTX:
		r = vt_set_irq_eventfds(f->device, VFIO_PCI_INTX_IRQ_INDEX, 1,
					&efd);
		break;
	default:
		r = -1;
		errno = EINVAL;
	}
	*err = errno;
	return r;
}

/* Undo a successful call, so that the fixture closes cleanly. */
static void undo(struct vt *t, struct fixture *f, enum path p, long r)
{
	switch (p) {
	case P_OPEN:
	case P_IOMMU_FD:
	case P_DEVICE_FD:
		close((int)r);
		break;
	case P_MERGE:
	case P_MERGE_BUSY:
		VT_OK(t, ioctl(f->b, VFIO_GROUP_UNMERGE));
		break;
	case P_MAP:
		VT_OK(t, vt_unmap(f->iommu_a, 0x200000, MAP_PAGES * PG));
		break;
	case P_UNMAP_SPLIT:
		/* the rest of the split map must still be whole */
		VT_OK(t, vt_unmap(f->iommu_a, 0x100000, 4 * PG));
		break;
	case P_IRQ_MSI:
	case P_IRQ_INTX:
		VT_OK(t, vt_set_irq_eventfds(f->device, p == P_IRQ_MSI ?
					     VFIO_PCI_MSI_IRQ_INDEX :
					     VFIO_PCI_INTX_IRQ_INDEX, 0,
					     NULL));
		break;
	}
}

/* Nothing pinned, charged or owned once every fd of an attempt is shut. */
static void check_clean(struct vt *t, struct fctx *c, const char *what,
			int n, const char *dev)
{
	long pins = vt_pinned_now(), vmlck = vt_locked_kb(0);
	uint32_t flags = 0;
	int g;

	VT_CHECKF(t, pins == c->base_pins, "%s, fail-nth %d: %ld pages still "
		    "pinned", what, n, pins - c->base_pins);
	VT_CHECKF(t, vmlck == c->base_vmlck, "%s, fail-nth %d: VmLck %ld kB, "
		    "was %ld", what, n, vmlck, c->base_vmlck);
	g = VT_OK(t, vt_open_group_of(dev));
	VT_OK(t, vt_group_flags(g, &flags));
	close(g);
	VT_CHECKF(t, !(flags & VFIO_GROUP_FLAGS_MM_LOCKED) &&
		    (flags & VFIO_GROUP_FLAGS_VIABLE), "%s, fail-nth %d: group "
		    "flags 0x%x afterwards", what, n, flags);
}

static void run_path(struct vt *t, struct fctx *c, enum path p,
		     const char *what, int max_n);

/*
 * MSI setup allocates the /proc/irq/N entries, and kernel/irq/proc.c
 * ignores a failure there but WARNs (fs/proc/generic.c remove_proc_entry)
 * when the vector is freed.  Not our code: on that path only page and
 * atomic allocations fail, sleeping slab allocations are left alone.
 * INTx setup has the same problem (request_irq() creates the entries of
 * a new vector), and so has its release (pci_disable_device() frees the
 * vector whose entries are missing).
 */
static void run_path_pages(struct vt *t, struct fctx *c, enum path p,
			   const char *what)
{
	const char *knob = DBG "/failslab/ignore-gfp-wait";
	jmp_buf outer;
	int failed;

	VT_OK(t, vt_write_file(knob, "Y"));
	memcpy(outer, t->fail_jmp, sizeof(outer));
	failed = setjmp(t->fail_jmp);
	if (!failed)
		run_path(t, c, p, what, 0);
	memcpy(t->fail_jmp, outer, sizeof(outer));
	VT_OK(t, vt_write_file(knob, "N"));
	if (failed)
		longjmp(t->fail_jmp, failed);
}

/* N = 1, 2, ... until a call gets through untouched, or up to max_n. */
static void run_path(struct vt *t, struct fctx *c, enum path p,
		     const char *what, int max_n)
{
	struct fixture f;
	long r;
	int n, err, injected, failed = 0, hits = 0;

	for (n = 1; n <= (max_n ? max_n : MAX_NTH); n++) {
		fix_open(t, &f, p, c);
		arm(t, c, n);
		r = call(&f, p, c, &err);
		injected = disarm(c);
		c->attempts++;
		if (injected) {
			hits++;
			c->injected++;
		}
		if (r < 0) {
			failed++;
			if (!injected || !oom_errno(err)) {
				fix_close(&f);
				VT_CHECKF(t, 0, "%s, fail-nth %d: failed with "
					    "%s (%s a fault)", what, n,
					    strerror(err), injected ?
					    "after" : "without");
			}
		} else {
			undo(t, &f, p, r);
		}
		fix_close(&f);
		check_clean(t, c, what, n, path_dev(p));

		/* The same call without a fault works afterwards. */
		fix_open(t, &f, p, c);
		r = call(&f, p, c, &err);
		if (r < 0) {
			fix_close(&f);
			VT_CHECKF(t, 0, "%s: after fail-nth %d the plain call "
				    "fails: %s", what, n, strerror(err));
		}
		undo(t, &f, p, r);
		fix_close(&f);
		check_clean(t, c, what, n, path_dev(p));
		if (!injected)
			break;
	}
	VT_CHECKF(t, n <= MAX_NTH, "%s still reaches allocation %d", what,
		    MAX_NTH);
	printf("# %s: %d allocations failed in turn, %d calls failed "
	       "cleanly, %d got through\n", what, hits, failed, hits - failed);
	fflush(stdout);
}

#define PATH_CASE(fn, p, what)						\
static void fn(struct vt *t, void *arg)					\
{									\
	struct fctx *c = arg;						\
									\
	if (c->nth_fd < 0)						\
		setup(t, c);						\
	run_path(t, c, p, what, 0);					\
}

PATH_CASE(test_fault_open, P_OPEN, "group open")
PATH_CASE(test_fault_merge, P_MERGE, "GROUP_MERGE idle")
PATH_CASE(test_fault_merge_busy, P_MERGE_BUSY, "GROUP_MERGE with an IOMMU")
PATH_CASE(test_fault_iommu_fd, P_IOMMU_FD, "GET_IOMMU_FD")
PATH_CASE(test_fault_device_fd, P_DEVICE_FD, "GET_DEVICE_FD")
PATH_CASE(test_fault_map, P_MAP, "MAP_DMA 16 pages")
PATH_CASE(test_fault_unmap_split, P_UNMAP_SPLIT, "UNMAP_DMA splitting")
/*
 * The IRQ paths make their own allocations first (the eventfd array and
 * the vector tables) and only then call into the IRQ core: fail every
 * kind of allocation for those, then only page and atomic ones.
 */
#define OUR_IRQ_ALLOCS	3

#define IRQ_CASE(fn, p, what)						\
static void fn(struct vt *t, void *arg)					\
{									\
	struct fctx *c = arg;						\
									\
	if (c->nth_fd < 0)						\
		setup(t, c);						\
	run_path(t, c, p, what " (our allocations)", OUR_IRQ_ALLOCS);	\
	run_path_pages(t, c, p, what " (no sleeping slab failures)");	\
}

IRQ_CASE(test_fault_irq_msi, P_IRQ_MSI, "SET_IRQ_EVENTFDS MSI")
IRQ_CASE(test_fault_irq_intx, P_IRQ_INTX, "SET_IRQ_EVENTFDS INTx")

/* The paths above together must have had something to fail. */
static void test_fault_total(struct vt *t, void *arg)
{
	struct fctx *c = arg;

	printf("# t-fault: %ld faults injected in %ld attempts\n",
	       c->injected, c->attempts);
	fflush(stdout);
	VT_CHECKF(t, c->injected > 0, "no allocation could be failed at all: "
		  "is fail-nth working?");
}

int main(void)
{
	struct vt t = { .prog = "t-fault" };
	struct fctx c = { .nth_fd = -1 };

	VT_RUN(&t, test_fault_open, &c);
	if (c.nth_fd >= 0) {
		VT_RUN(&t, test_fault_merge, &c);
		VT_RUN(&t, test_fault_merge_busy, &c);
		VT_RUN(&t, test_fault_iommu_fd, &c);
		VT_RUN(&t, test_fault_device_fd, &c);
		VT_RUN(&t, test_fault_map, &c);
		VT_RUN(&t, test_fault_unmap_split, &c);
		VT_RUN(&t, test_fault_irq_msi, &c);
		VT_RUN(&t, test_fault_irq_intx, &c);
		VT_RUN(&t, test_fault_total, &c);
		close(c.nth_fd);
	}
	knobs_restore(&c);
	if (c.buf && c.buf != MAP_FAILED)
		munmap(c.buf, MAP_PAGES * PG);
	return vt_done(&t);
}
