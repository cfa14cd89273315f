// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-fuzz: a seeded, bounded fuzzer over the group, IOMMU and device fds.
 *
 * Several threads share one table of fds and run random operations on it:
 * every ioctl with random argsz, flags, indexes and ranges, bad pointers
 * and bad fds, merges and unmerges of the edu groups, MAP/UNMAP storms,
 * region reads and writes at random offsets, mmaps, eventfds that are not
 * eventfds, closes in random order, and forks whose child runs a few
 * operations on the inherited fds and dies, and unloads and reloads of
 * vfio_pci under all of it.  The kernel must survive it
 * without a report (the harness watches the console), every failing call
 * must return an errno a user can understand, and afterwards nothing may
 * stay pinned or charged to the process.
 *
 * Usage: t-fuzz [SEED [ITERATIONS [SECONDS [THREADS]]]]; the same values
 * from VT_FUZZ_SEED, VT_FUZZ_ITERS, VT_FUZZ_SECS, VT_FUZZ_THREADS.  The
 * seed is printed; with THREADS=1 a seed replays the exact sequence
 * (VT_FUZZ_TRACE=1 prints every operation), with more threads each
 * thread's sequence is the same but their interleaving is not.
 *
 * The fuzzer never writes edu's DMA registers (0x80-0x9f of BAR0): a DMA
 * with a random length or address aborts QEMU 7.2 itself.
 *
 * Memory and I/O decode are toggled through the command register, so a
 * read of an mmap may raise SIGBUS (decode off): that is counted, not a
 * crash.  A few times per run, a thread reads an mmap of edu2 (the one
 * device here with a reset method, a bus reset) while another resets it:
 * every read must see edu's ID or SIGBUS, never what a device that does
 * not decode answers.
 *
 * In the last quarter of the run, which forks no more, some ioctl
 * arguments and read/write buffers lie in pages registered with
 * userfaultfd, which a server thread fills only after a delay: the kernel
 * copies from and to them while the fault is outstanding.  MAP_DMA
 * ranges never lie there.  A longterm pin cannot wait for a userfault, so
 * gup answers EFAULT at once, and a CONFIG_DEBUG_VM kernel prints a stack
 * for it ("FAULT_FLAG_ALLOW_RETRY missing") that reads as a report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define ARENA_PAGES	128	/* 0-95 RW, 96-111 read-only, 112-127 none */
#define ARENA_RW	96
#define ARENA_RO	112
#define NSLOT		32
#define NDEV		3
#define MAX_THREADS	8
#define IOVA_SPAN	(256 * PG)	/* small, so that ranges collide */
#define EDU_DMA_START	0x80
#define EDU_DMA_END	0xa0
#define MAX_ERRNO_SEEN	4096
#define MAX_RESET_MMAP	8	/* a reset holds its thread a while */
#define FORK_GAP_MS	100	/* forks at most this often, see op_fork */
#define SLOW_PAGES	8	/* userfaultfd pages, served late */
#define SLOW_DELAY_US	3000	/* the longest a fault waits to be served */
#define SLOW_REARM_MS	250	/* how often a fresh set of pages comes */
#define SLOW_AREAS	256	/* sets of pages at most, 8 MiB */

enum kind { K_NONE, K_GROUP, K_IOMMU, K_DEVICE, K_EVENTFD, K_NKINDS };

struct slot {
	int fd;
	enum kind kind;
	int dev;		/* index into fuzz.dev for groups/devices */
	unsigned int gen;	/* changes whenever the slot is reused */
};

/* An fd an operation took from the table, to judge the call's errno. */
struct picked {
	int slot;		/* -1: not from the table */
	unsigned int gen;
	int matched;		/* of the kind the operation wanted */
	enum kind kind;		/* what the slot held */
};

#define MAX_PICKS	16

struct fdev {
	char name[VT_DEV_NAME_LEN];
	int group;
	int is_edu;
	struct vfio_region_info region[VFIO_PCI_NUM_REGIONS];
};

struct fuzz {
	uint64_t seed;
	long max_iters;
	uint64_t deadline_ms;
	uint64_t slow_at_ms;	/* when the userfaultfd phase begins */
	int slow_begun;		/* __atomic: a worker has begun it */
	struct vt *t;		/* for the checks of that worker */
	int nthreads;
	int trace;
	uint8_t *arena;		/* ARENA_PAGES pages */
	struct fdev dev[NDEV];

	/* Protects slot[] and no_fork: threads pick and replace fds under it. */
	pthread_mutex_t lock;
	struct slot slot[NSLOT];
	unsigned int gen;
	int no_fork;		/* the userfaultfd phase has begun */
	uint64_t next_fork_ms;	/* op_fork's rate limit */

	/* Updated with __atomic builtins by every thread. */
	long iters;
	long calls;
	long forks;
	int forking;		/* op_forks whose child may still live */
	long errno_count[MAX_ERRNO_SEEN];
	long odd_errno;		/* errno outside the expected set */
	int odd_errno_first;
	char odd_what[128];
	long bad_mmap;		/* mmaps the region did not allow */
	char bad_mmap_what[160];
	long mmap_sigbus;	/* mmap reads with decode off */
	long decode_toggles;

	/* op_reload: under lock; the counts with __atomic builtins. */
	uint64_t next_reload_ms;
	long reloads, reload_refused, reload_failed;
	int reload_errno;

	int has_edu2;		/* bound to vfio: op_reset_mmap runs */
	int reset_mmap_busy;	/* one op_reset_mmap at a time */
	long reset_mmaps, resets, reset_reads, reset_sigbus, reset_bad;
	uint32_t reset_bad_value;

	/*
	 * The newest SLOW_PAGES registered with uffd (NULL without
	 * userfaultfd), read with __atomic; the older sets stay mapped.
	 */
	uint8_t *slow;
	uint8_t *slow_area[SLOW_AREAS];	/* slow_server's */
	int nslow_area;
	int uffd;
	int slow_stop;		/* __atomic: tells slow_server to end */
	long slow_faults;	/* served by slow_server */
	pthread_t slow_thread;
};

struct worker {
	struct fuzz *fz;
	int id;
	uint64_t rng;
	int in_child;		/* forked child: no lock, no stdio */
	struct slot *local;	/* the child's copy of the table */
	struct picked pk[MAX_PICKS];	/* this operation's fds */
	int npk;
};

/*
 * The operation each thread is in, for the crash report of a signal
 * handler, which has no argument to find it through.
 */
static __thread const char *cur_op = "setup";

/* Where a read of an mmap resumes after SIGBUS (decode off); per thread. */
static __thread sigjmp_buf *bus_jmp;

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	char msg[160];
	int n;

	(void)uc;
	if (sig == SIGBUS && bus_jmp)
		siglongjmp(*bus_jmp, 1);
	n = snprintf(msg, sizeof(msg), "not ok - t-fuzz/crash: signal %d at "
		     "address %p during %s\n", sig, si->si_addr, cur_op);
	if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
		_exit(3);
	_exit(3);
}

/* ---- random numbers ---------------------------------------------------- */

static uint64_t rnd(struct worker *w)
{
	/* xorshift64*: deterministic per seed, good enough for fuzzing */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545f4914f6cdd1dULL;
}

static uint64_t below(struct worker *w, uint64_t n)
{
	return n ? rnd(w) % n : 0;
}

/* True with probability pct percent. */
static int chance(struct worker *w, unsigned int pct)
{
	return below(w, 100) < pct;
}

/* ---- bookkeeping ------------------------------------------------------- */

/*
 * The errnos a VFIO call may legitimately return to a fuzzer.  Anything
 * else (ERESTARTSYS/ENOTSUPP leaking out, ENOENT from a lookup, ...) is
 * a kernel bug worth a report.
 */
static int errno_expected(int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case EBADF: case EPERM: case EBUSY:
	case ENODEV: case ENOMEM: case ENOTTY: case ENOSPC: case ENXIO:
	case EIO: case EEXIST: case E2BIG: case EACCES: case EAGAIN:
	case EOVERFLOW: case ERANGE: case ENOENT: case EMFILE:
	case EOPNOTSUPP:
		return 1;
	default:
		return 0;
	}
}

/*
 * Whether the call was made on the objects the operation meant: every fd
 * it took from the table was of the wanted kind and was not closed (and
 * its number reused) by another thread meanwhile.  Only then does the
 * errno say something about our code.
 */
static int picks_held(struct worker *w)
{
	int i, held = 1;

	pthread_mutex_lock(&w->fz->lock);
	for (i = 0; i < w->npk && held; i++)
		held = w->pk[i].matched &&
		       w->fz->slot[w->pk[i].slot].gen == w->pk[i].gen;
	pthread_mutex_unlock(&w->fz->lock);
	return held;
}

static void account(struct worker *w, long ret, const char *what)
{
	struct fuzz *fz = w->fz;
	int e = errno;

	if (w->in_child)
		return;
	__atomic_add_fetch(&fz->calls, 1, __ATOMIC_RELAXED);
	if (ret != -1)
		return;
	if (e >= 0 && e < MAX_ERRNO_SEEN)
		__atomic_add_fetch(&fz->errno_count[e], 1, __ATOMIC_RELAXED);
	if (!errno_expected(e) && picks_held(w) &&
	    __atomic_add_fetch(&fz->odd_errno, 1, __ATOMIC_RELAXED) == 1) {
		fz->odd_errno_first = e;
		snprintf(fz->odd_what, sizeof(fz->odd_what), "%s", what);
	}
}

static void trace(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void trace(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->fz->trace || w->in_child)
		return;
	fprintf(stderr, "# [%d] ", w->id);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static struct slot *table(struct worker *w)
{
	return w->in_child ? w->local : w->fz->slot;
}

static void tab_lock(struct worker *w)
{
	if (!w->in_child)
		pthread_mutex_lock(&w->fz->lock);
}

static void tab_unlock(struct worker *w)
{
	if (!w->in_child)
		pthread_mutex_unlock(&w->fz->lock);
}

/*
 * An fd to call on: mostly one of the wanted kind, sometimes any fd of the
 * table (wrong fd type), rarely a number that is no fd at all.  *dev gets
 * the slot's device index.  The fd may be closed by another thread before
 * it is used: that race is part of the fuzzing.
 */
static int pick(struct worker *w, enum kind want, int *dev)
{
	struct slot *s = table(w);
	int i, start, fd = -1;

	struct picked *pk = w->npk < MAX_PICKS ? &w->pk[w->npk++] : NULL;

	*dev = (int)below(w, NDEV);
	if (pk)
		*pk = (struct picked){ .slot = -1 };
	if (chance(w, 2))
		return chance(w, 50) ? -1 : 1000 + (int)below(w, 100);
	start = (int)below(w, NSLOT);
	tab_lock(w);
	for (i = 0; i < NSLOT; i++) {
		struct slot *c = &s[(start + i) % NSLOT];

		if (c->kind == K_NONE)
			continue;
		if (c->kind == want || chance(w, 5)) {
			fd = c->fd;
			*dev = c->dev;
			if (pk)
				*pk = (struct picked){
					.slot = (start + i) % NSLOT,
					.gen = c->gen,
					.matched = c->kind == want,
					.kind = c->kind,
				};
			break;
		}
	}
	tab_unlock(w);
	return fd;
}

/* Put a new fd in a free slot; without one, close it again. */
static void keep(struct worker *w, int fd, enum kind kind, int dev)
{
	struct slot *s = table(w);
	int i, start = (int)below(w, NSLOT);

	if (fd < 0)
		return;
	tab_lock(w);
	for (i = 0; i < NSLOT; i++) {
		struct slot *c = &s[(start + i) % NSLOT];

		if (c->kind == K_NONE) {
			c->fd = fd;
			c->kind = kind;
			c->dev = dev;
			c->gen = ++w->fz->gen;
			tab_unlock(w);
			return;
		}
	}
	tab_unlock(w);
	close(fd);
}

/* Take a random slot out of the table and close its fd. */
static void op_close(struct worker *w)
{
	struct slot *s = table(w);
	int i, start = (int)below(w, NSLOT), fd = -1;

	tab_lock(w);
	for (i = 0; i < NSLOT; i++) {
		struct slot *c = &s[(start + i) % NSLOT];

		if (c->kind != K_NONE) {
			fd = c->fd;
			c->kind = K_NONE;
			c->fd = -1;
			c->gen = ++w->fz->gen;
			break;
		}
	}
	tab_unlock(w);
	if (fd >= 0) {
		trace(w, "close %d", fd);
		account(w, close(fd), "close");
	}
}

/* ---- argument generators ----------------------------------------------- */

/* argsz: mostly right, sometimes short, zero, a little or a lot longer. */
static uint32_t rand_argsz(struct worker *w, uint32_t right)
{
	switch (below(w, 10)) {
	case 0: return 0;
	case 1: return (uint32_t)below(w, right);
	case 2: return right + (uint32_t)below(w, 64);
	case 3: return (uint32_t)rnd(w);
	default: return right;
	}
}

static uint32_t rand_flags(struct worker *w, uint32_t usual)
{
	switch (below(w, 8)) {
	case 0: return (uint32_t)rnd(w);
	case 1: return 1u << below(w, 32);
	case 2: return 0;
	default: return usual;
	}
}

static uint32_t rand_index(struct worker *w, uint32_t n)
{
	switch (below(w, 8)) {
	case 0: return (uint32_t)rnd(w);
	case 1: return n + (uint32_t)below(w, 4);
	case 2: return ~0u;
	default: return (uint32_t)below(w, n);
	}
}

/* @len bytes in the userfaultfd pages, or NULL when there are none. */
static void *slow_ptr(struct worker *w, size_t len)
{
	uint8_t *slow = __atomic_load_n(&w->fz->slow, __ATOMIC_ACQUIRE);

	if (!slow || len > SLOW_PAGES * PG)
		return NULL;
	return slow + below(w, SLOW_PAGES * PG - len + 1);
}

/* A user address: inside the arena mostly, else hostile. */
static uint64_t rand_vaddr(struct worker *w)
{
	uint64_t base = (uintptr_t)w->fz->arena;

	switch (below(w, 12)) {
	case 0: return 0;
	case 1: return 0xffff800000000000ULL + below(w, 1 << 20) * PG;
	case 2: return base + ARENA_RO * PG + below(w, 16) * PG; /* PROT_NONE */
	case 3: return base + ARENA_RW * PG + below(w, 16) * PG; /* read-only */
	case 4: return base + below(w, ARENA_PAGES * PG);	 /* unaligned */
	case 5: return (uint64_t)rnd(w);
	default: return base + below(w, ARENA_RW) * PG;
	}
}

static uint64_t rand_iova(struct worker *w)
{
	switch (below(w, 10)) {
	case 0: return (uint64_t)rnd(w);
	case 1: return ~0ULL - below(w, 4) * PG + 1;	/* wraps */
	case 2: return below(w, IOVA_SPAN) | 1;		/* unaligned */
	case 3: return 1ULL << below(w, 64);
	default: return below(w, IOVA_SPAN / PG) * PG;
	}
}

static uint64_t rand_size(struct worker *w)
{
	switch (below(w, 10)) {
	case 0: return 0;
	case 1: return (uint64_t)rnd(w);
	case 2: return ~0ULL - below(w, 3) * PG;
	case 3: return 1 + below(w, 3 * PG);		/* unaligned */
	case 4: return IOVA_SPAN;
	default: return (1 + below(w, 16)) * PG;
	}
}

/*
 * A pointer to an argument buffer: mostly buf, sometimes NULL, a kernel
 * address or a buffer whose tail runs into a PROT_NONE page.
 */
static void *rand_argp(struct worker *w, void *buf, size_t len)
{
	uint8_t *none = w->fz->arena + ARENA_RO * PG;
	void *slow;

	switch (below(w, 20)) {
	case 0: return NULL;
	case 1: return (void *)0xffffffff81000000UL;
	case 2:
		/* the struct straddles the end of a read-only page */
		return none - (len > 1 ? 1 + below(w, len - 1) : 1);
	case 3:
		/* a page that arrives late; buf's contents are lost there */
		slow = slow_ptr(w, len);
		return slow ? slow : buf;
	default: return buf;
	}
}

/* ---- operations -------------------------------------------------------- */

static void op_open_group(struct worker *w)
{
	struct fuzz *fz = w->fz;
	int dev = (int)below(w, NDEV), fd;
	char node[64];

	snprintf(node, sizeof(node), "/dev/vfio/pci:%d", fz->dev[dev].group);
	fd = open(node, chance(w, 90) ? O_RDWR : O_RDONLY);
	account(w, fd, "open group");
	trace(w, "open %s = %d", node, fd);
	keep(w, fd, K_GROUP, dev);
}

static void op_group_info(struct worker *w)
{
	struct vfio_group_info info[2];
	int dev, fd = pick(w, K_GROUP, &dev);
	long r;

	memset(info, 0, sizeof(info));
	info[0].argsz = rand_argsz(w, sizeof(info[0]));
	info[0].flags = (uint32_t)rnd(w);
	r = ioctl(fd, VFIO_GROUP_GET_INFO, rand_argp(w, info, sizeof(info[0])));
	account(w, r, "GROUP_GET_INFO");
}

static void op_merge(struct worker *w)
{
	int dev, fd = pick(w, K_GROUP, &dev), other;
	int32_t arg;
	long r;

	other = pick(w, K_GROUP, &dev);
	arg = chance(w, 85) ? other : (int32_t)below(w, 3) - 1;
	r = ioctl(fd, VFIO_GROUP_MERGE, chance(w, 95) ? (void *)&arg : NULL);
	account(w, r, "GROUP_MERGE");
	trace(w, "merge %d <- %d = %ld", fd, arg, r);
}

static void op_unmerge(struct worker *w)
{
	int dev, fd = pick(w, K_GROUP, &dev);
	long r;

	r = ioctl(fd, VFIO_GROUP_UNMERGE);
	account(w, r, "GROUP_UNMERGE");
	trace(w, "unmerge %d = %ld", fd, r);
}

static void op_get_iommu_fd(struct worker *w)
{
	int dev, fd = pick(w, K_GROUP, &dev);
	long r;

	r = ioctl(fd, VFIO_GROUP_GET_IOMMU_FD);
	account(w, r, "GET_IOMMU_FD");
	trace(w, "iommu fd of %d = %ld", fd, r);
	keep(w, (int)r, K_IOMMU, dev);
}

static void op_get_device_fd(struct worker *w)
{
	struct fuzz *fz = w->fz;
	int dev, fd = pick(w, K_GROUP, &dev), named = dev;
	char name[300];
	const char *arg = name;
	long r;

	switch (below(w, 10)) {
	case 0:
		memset(name, 'a' + (int)below(w, 26), sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		break;
	case 1:
		snprintf(name, sizeof(name), "%s", fz->dev[below(w, NDEV)].name);
		name[below(w, strlen(name))] = '\0';	/* a prefix */
		break;
	case 2:
		arg = rand_argp(w, name, 13);
		snprintf(name, sizeof(name), "%s", fz->dev[dev].name);
		if (arg != name && arg)
			arg = (const char *)(fz->arena + ARENA_RO * PG - 3);
		break;
	case 3:
		/* Another group's device: given out when the two are merged. */
		named = (int)below(w, NDEV);
		snprintf(name, sizeof(name), "%s", fz->dev[named].name);
		break;
	default:
		snprintf(name, sizeof(name), "%s", fz->dev[dev].name);
	}
	r = ioctl(fd, VFIO_GROUP_GET_DEVICE_FD, arg);
	account(w, r, "GET_DEVICE_FD");
	trace(w, "device fd of %d = %ld", fd, r);
	keep(w, (int)r, K_DEVICE, named);
}

static void op_iommu_info(struct worker *w)
{
	struct vfio_iommu_info info[2];
	int dev, fd = pick(w, K_IOMMU, &dev);
	long r;

	memset(info, 0, sizeof(info));
	info[0].argsz = rand_argsz(w, sizeof(info[0]));
	info[0].flags = rand_flags(w, 0);
	r = ioctl(fd, VFIO_IOMMU_GET_INFO, rand_argp(w, info, sizeof(info[0])));
	account(w, r, "IOMMU_GET_INFO");
}

static void do_map(struct worker *w, int fd)
{
	struct vfio_dma_map map = {
		.argsz = rand_argsz(w, sizeof(map)),
		.flags = rand_flags(w, VFIO_DMA_MAP_FLAG_READ |
				    VFIO_DMA_MAP_FLAG_WRITE),
		.vaddr = rand_vaddr(w),
		.iova = rand_iova(w),
		.size = rand_size(w),
	};
	long r;

	r = ioctl(fd, VFIO_IOMMU_MAP_DMA, rand_argp(w, &map, sizeof(map)));
	account(w, r, "MAP_DMA");
	trace(w, "map %d iova 0x%" PRIx64 " size 0x%" PRIx64 " = %ld", fd,
	      (uint64_t)map.iova, (uint64_t)map.size, r);
}

static void do_unmap(struct worker *w, int fd)
{
	struct vfio_dma_unmap unmap = {
		.argsz = rand_argsz(w, sizeof(unmap)),
		.flags = rand_flags(w, 0),
		.iova = rand_iova(w),
		.size = chance(w, 20) ? IOVA_SPAN : rand_size(w),
	};
	long r;

	r = ioctl(fd, VFIO_IOMMU_UNMAP_DMA,
		  rand_argp(w, &unmap, sizeof(unmap)));
	account(w, r, "UNMAP_DMA");
	trace(w, "unmap %d iova 0x%" PRIx64 " size 0x%" PRIx64 " = %ld", fd,
	      (uint64_t)unmap.iova, (uint64_t)unmap.size, r);
}

static void op_map(struct worker *w)
{
	int dev, fd = pick(w, K_IOMMU, &dev);

	do_map(w, fd);
}

static void op_unmap(struct worker *w)
{
	int dev, fd = pick(w, K_IOMMU, &dev);

	do_unmap(w, fd);
}

/* Many maps and unmaps in a row on one fd. */
static void op_storm(struct worker *w)
{
	int dev, fd = pick(w, K_IOMMU, &dev), i, n = 10 + (int)below(w, 40);

	for (i = 0; i < n; i++) {
		if (chance(w, 55))
			do_map(w, fd);
		else
			do_unmap(w, fd);
	}
}

/*
 * Replace part of the arena with fresh pages while they may be mapped
 * for DMA: the pins must keep the old pages, and unmap must release them.
 */
static void op_remap_arena(struct worker *w)
{
	uint8_t *p = w->fz->arena + below(w, ARENA_RW - 8) * PG;
	size_t len = (1 + below(w, 8)) * PG;
	void *q;

	q = mmap(p, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	account(w, q == MAP_FAILED ? -1 : 0, "mmap arena");
	if (q != MAP_FAILED)
		memset(q, (int)below(w, 256), len);
}

static void op_device_info(struct worker *w)
{
	union {
		struct vfio_device_info dev;
		struct vfio_region_info region;
		struct vfio_irq_info irq;
		uint8_t raw[64];
	} u;
	int dev, fd = pick(w, K_DEVICE, &dev);
	unsigned long cmd;
	size_t len;
	long r;

	memset(&u, 0, sizeof(u));
	switch (below(w, 3)) {
	case 0:
		cmd = VFIO_DEVICE_GET_INFO;
		len = sizeof(u.dev);
		u.dev.flags = (uint32_t)rnd(w);
		break;
	case 1:
		cmd = VFIO_DEVICE_GET_REGION_INFO;
		len = sizeof(u.region);
		u.region.index = rand_index(w, VFIO_PCI_NUM_REGIONS);
		u.region.resv = chance(w, 10) ? (uint32_t)rnd(w) : 0;
		break;
	default:
		cmd = VFIO_DEVICE_GET_IRQ_INFO;
		len = sizeof(u.irq);
		u.irq.index = rand_index(w, VFIO_PCI_NUM_IRQS);
	}
	u.dev.argsz = rand_argsz(w, (uint32_t)len);
	r = ioctl(fd, cmd, rand_argp(w, &u, len));
	account(w, r, "DEVICE_GET_*_INFO");
}

/* An eventfd from the table, or something that is not one. */
static int32_t rand_eventfd(struct worker *w)
{
	int dev;

	switch (below(w, 8)) {
	case 0: return -1;
	case 1: return (int32_t)rnd(w);
	case 2: return pick(w, K_GROUP, &dev);	/* not an eventfd */
	case 3: return -2;
	default: return pick(w, K_EVENTFD, &dev);
	}
}

static void op_new_eventfd(struct worker *w)
{
	int fd = eventfd(0, EFD_CLOEXEC | (chance(w, 50) ? EFD_NONBLOCK : 0));

	account(w, fd, "eventfd");
	keep(w, fd, K_EVENTFD, 0);
}

static void op_set_irqs(struct worker *w)
{
	struct {
		struct vfio_irq_eventfds hdr;
		int32_t fds[8];
	} s;
	int dev, fd = pick(w, K_DEVICE, &dev);
	unsigned long cmd;
	uint32_t i, n;
	long r;

	memset(&s, 0, sizeof(s));
	cmd = chance(w, 75) ? VFIO_DEVICE_SET_IRQ_EVENTFDS :
			      VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS;
	s.hdr.index = rand_index(w, VFIO_PCI_NUM_IRQS);
	switch (below(w, 8)) {
	case 0: n = (uint32_t)rnd(w); break;		/* huge count */
	case 1: n = 8 + (uint32_t)below(w, 64); break;	/* beyond argsz */
	case 2: n = 0; break;
	default: n = 1 + (uint32_t)below(w, 4);
	}
	s.hdr.count = n;
	for (i = 0; i < 8; i++)
		s.fds[i] = rand_eventfd(w);
	s.hdr.argsz = rand_argsz(w, (uint32_t)(sizeof(s.hdr) +
					       (n < 8 ? n : 8) * 4));
	s.hdr.flags = rand_flags(w, 0);
	r = ioctl(fd, cmd, rand_argp(w, &s, sizeof(s)));
	account(w, r, "SET_IRQ_EVENTFDS");
	trace(w, "set irqs %d index %u count %u = %ld", fd, s.hdr.index, n, r);
}

static void op_unmask(struct worker *w)
{
	struct vfio_unmask_irq u = {
		.argsz = rand_argsz(w, sizeof(u)),
		.flags = rand_flags(w, 0),
		.index = rand_index(w, VFIO_PCI_NUM_IRQS),
		.subindex = chance(w, 70) ? 0 : (uint32_t)rnd(w),
	};
	int dev, fd = pick(w, K_DEVICE, &dev);
	long r;

	r = ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, rand_argp(w, &u, sizeof(u)));
	account(w, r, "UNMASK_IRQ");
}

static void op_reset(struct worker *w)
{
	int dev, fd = pick(w, K_DEVICE, &dev);
	long r;

	r = ioctl(fd, VFIO_DEVICE_RESET);
	account(w, r, "DEVICE_RESET");
}

/* Any ioctl number near ours, or any at all, on any fd. */
static void op_random_ioctl(struct worker *w)
{
	uint8_t buf[256];
	int dev, fd = pick(w, (enum kind)below(w, K_NKINDS), &dev);
	unsigned long cmd;
	size_t i;
	long r;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rnd(w);
	if (chance(w, 80))
		cmd = _IO(VFIO_TYPE, VFIO_BASE + below(w, 24));
	else
		cmd = (unsigned long)(uint32_t)rnd(w);
	/* the types of ours: some commands carry a size in their number */
	if (chance(w, 20))
		cmd |= (unsigned long)below(w, 1 << 14) << _IOC_SIZESHIFT;
	r = ioctl(fd, cmd, rand_argp(w, buf, 32));
	account(w, r, "random ioctl");
	/* a group ioctl that hands out an fd: keep it, or it pins till exit */
	if (r >= 0 && cmd == VFIO_GROUP_GET_IOMMU_FD)
		keep(w, (int)r, K_IOMMU, dev);
	else if (r >= 0 && cmd == VFIO_GROUP_GET_DEVICE_FD)
		keep(w, (int)r, K_DEVICE, dev);
}

/*
 * Whether a write at device fd position pos keeps clear of edu's DMA
 * registers.  Region N starts at N << 40 and the index is all the bits
 * above, so only BAR0's own offsets can reach them.
 */
static int safe_write(struct fuzz *fz, int dev, uint64_t pos, size_t len)
{
	uint64_t bar0 = fz->dev[dev].region[VFIO_PCI_BAR0_REGION_INDEX].offset;

	if (!fz->dev[dev].is_edu)
		return 1;
	return pos + len <= bar0 + EDU_DMA_START || pos >= bar0 + EDU_DMA_END;
}

static void op_rw(struct worker *w)
{
	struct fuzz *fz = w->fz;
	uint8_t buf[8192];
	int dev, fd = pick(w, K_DEVICE, &dev), write_it = chance(w, 40);
	uint32_t index = rand_index(w, VFIO_PCI_NUM_REGIONS);
	const struct vfio_region_info *ri;
	uint64_t off, base;
	size_t len;
	void *p = buf, *slow;
	long r;

	ri = index < VFIO_PCI_NUM_REGIONS ? &fz->dev[dev].region[index] : NULL;
	base = ri ? ri->offset : (uint64_t)index << 40;
	switch (below(w, 6)) {
	case 0: len = 1 + below(w, sizeof(buf)); break;
	case 1: len = 0; break;
	default: len = 1u << below(w, 4);		/* 1, 2, 4, 8 */
	}
	if (ri && ri->size && chance(w, 85))
		off = below(w, ri->size + 16);
	else
		off = chance(w, 50) ? rnd(w) : below(w, 1 << 20);
	if (len && chance(w, 70))
		off &= ~(uint64_t)((len > 4 ? 4 : len) - 1);
	if (chance(w, 3))
		p = chance(w, 50) ? NULL : fz->arena + ARENA_RO * PG - 2;
	else if (chance(w, 5) && (slow = slow_ptr(w, len)))
		p = slow;
	if (write_it) {
		/*
		 * Every device gets the same checks, including the edu
		 * whose fd this may not be: the slot's device can change
		 * under a concurrent close and reopen.
		 */
		for (r = 0; r < NDEV; r++)
			if (!safe_write(fz, (int)r, base + off, len))
				return;
		memset(buf, (int)below(w, 256), sizeof(buf));
		r = pwrite(fd, p, len, (off_t)(base + off));
	} else {
		r = pread(fd, p, len, (off_t)(base + off));
	}
	account(w, r, write_it ? "pwrite" : "pread");
}

static void op_mmap(struct worker *w)
{
	struct fuzz *fz = w->fz;
	int dev, fd = pick(w, K_DEVICE, &dev);
	uint32_t index = rand_index(w, VFIO_PCI_NUM_REGIONS);
	const struct vfio_region_info *ri;
	uint64_t off = 0, len = PG;
	volatile uint32_t *word;
	void *p;

	ri = index < VFIO_PCI_NUM_REGIONS ? &fz->dev[dev].region[index] : NULL;
	if (ri) {
		off = ri->offset;
		len = ri->size ? ri->size : PG;
		if (chance(w, 20))
			len += PG * below(w, 4);
		if (chance(w, 10))
			off += PG * below(w, 4);
	} else {
		off = below(w, 64) << 40;
	}
	p = mmap(NULL, len, PROT_READ | (chance(w, 50) ? PROT_WRITE : 0),
		 chance(w, 90) ? MAP_SHARED : MAP_PRIVATE, fd, (off_t)off);
	account(w, p == MAP_FAILED ? -1 : 0, "mmap region");
	if (p == MAP_FAILED)
		return;
	/*
	 * Only a region that says MMAP may be mapped, and not past its end;
	 * judged only when the fd still is the device picked (another thread
	 * may have closed it and opened another device under that number).
	 */
	if (ri && (!(ri->flags & VFIO_REGION_INFO_FLAG_MMAP) ||
		   off + len > ri->offset + ri->size) && picks_held(w) &&
	    __atomic_add_fetch(&fz->bad_mmap, 1, __ATOMIC_RELAXED) == 1)
		snprintf(fz->bad_mmap_what, sizeof(fz->bad_mmap_what),
			 "%s region %u offset 0x%" PRIx64 " length 0x%" PRIx64
			 " (size 0x%" PRIx64 ", flags 0x%x)", fz->dev[dev].name,
			 index, (uint64_t)(off - ri->offset), (uint64_t)len,
			 (uint64_t)ri->size,
			 ri->flags);
	if (chance(w, 30)) {
		/* the mapping must outlive the fd or die cleanly: a copy */
		int copy = dup(fd);

		if (copy >= 0)
			close(copy);
	}
	if (ri && ri->size >= 4) {
		sigjmp_buf jb;

		word = (volatile uint32_t *)p + below(w, ri->size / 4);
		bus_jmp = &jb;
		if (sigsetjmp(jb, 1) == 0)
			(void)*word;
		else
			__atomic_add_fetch(&fz->mmap_sigbus, 1,
					   __ATOMIC_RELAXED);
		bus_jmp = NULL;
	}
	munmap(p, len);
}

/* Memory and I/O decode (and bus master) on or off, as a user would. */
static void op_decode(struct worker *w)
{
	int dev, fd = pick(w, K_DEVICE, &dev);
	off_t pos = (off_t)((uint64_t)VFIO_PCI_CONFIG_REGION_INDEX << 40) +
		    VT_PCI_COMMAND;
	uint16_t cmd = 0;
	long r;

	r = pread(fd, &cmd, 2, pos);
	account(w, r, "pread command");
	if (r != 2)
		return;
	cmd ^= (uint16_t)(below(w, 8) & (VT_PCI_COMMAND_MEMORY | 0x1 |
					 VT_PCI_COMMAND_MASTER));
	/* mostly with memory on: an mmap is worth reading then */
	if (chance(w, 60))
		cmd |= VT_PCI_COMMAND_MEMORY;
	r = pwrite(fd, &cmd, 2, pos);
	account(w, r, "pwrite command");
	if (r == 2)
		__atomic_add_fetch(&w->fz->decode_toggles, 1, __ATOMIC_RELAXED);
}

struct reset_reader {
	struct fuzz *fz;
	volatile uint32_t *bar;
	volatile int stop;
};

static void *reset_reader_main(void *arg)
{
	struct reset_reader *r = arg;
	struct fuzz *fz = r->fz;
	sigjmp_buf jb;
	uint32_t v;

	bus_jmp = &jb;
	while (!r->stop) {
		if (sigsetjmp(jb, 1)) {
			__atomic_add_fetch(&fz->reset_sigbus, 1,
					   __ATOMIC_RELAXED);
			continue;
		}
		v = r->bar[0];
		__atomic_add_fetch(&fz->reset_reads, 1, __ATOMIC_RELAXED);
		if (v != VT_EDU_ID_VALUE &&
		    __atomic_add_fetch(&fz->reset_bad, 1, __ATOMIC_RELAXED) == 1)
			fz->reset_bad_value = v;
	}
	bus_jmp = NULL;
	return NULL;
}

/* Reset edu2 while another thread reads its mmap. */
static void op_reset_mmap(struct worker *w)
{
	struct fuzz *fz = w->fz;
	struct reset_reader r = { .fz = fz };
	struct vt_dev d;
	pthread_t th;
	uint64_t size;
	int i, n;

	if (w->in_child || !fz->has_edu2 ||
	    __atomic_exchange_n(&fz->reset_mmap_busy, 1, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_add_fetch(&fz->reset_mmaps, 1, __ATOMIC_RELAXED) >
	    MAX_RESET_MMAP)
		goto out;
	if (vt_open_dev(&d, VT_EDU2) < 0) {
		account(w, -1, "open edu2");
		goto out;
	}
	r.bar = vt_mmap_region(d.device_fd, VFIO_PCI_BAR0_REGION_INDEX, &size);
	account(w, r.bar ? 0 : -1, "mmap edu2");
	if (!r.bar || pthread_create(&th, NULL, reset_reader_main, &r)) {
		if (r.bar)
			munmap((void *)r.bar, size);
		vt_close_dev(&d);
		goto out;
	}
	n = 1 + (int)below(w, 2);
	for (i = 0; i < n; i++) {
		long ret = ioctl(d.device_fd, VFIO_DEVICE_RESET);

		account(w, ret, "DEVICE_RESET edu2");
		if (!ret)
			__atomic_add_fetch(&fz->resets, 1, __ATOMIC_RELAXED);
	}
	r.stop = 1;
	pthread_join(th, NULL);
	munmap((void *)r.bar, size);
	vt_close_dev(&d);
out:
	__atomic_store_n(&fz->reset_mmap_busy, 0, __ATOMIC_RELEASE);
}

/* Whether the slot PK was taken from still holds that fd. */
static int slot_unchanged(struct worker *w, const struct picked *pk)
{
	int same;

	tab_lock(w);
	same = table(w)[pk->slot].gen == pk->gen;
	tab_unlock(w);
	return same;
}

static void op_dup(struct worker *w)
{
	int dev, kind = (int)(1 + below(w, K_NKINDS - 1));
	int fd = pick(w, (enum kind)kind, &dev);
	int copy = dup(fd);

	account(w, copy, "dup");
	/*
	 * A copy of what the slot really held, not of what was asked for;
	 * and only if it still held it after the dup: had another thread
	 * closed it and the number gone to a new file meanwhile, the copy
	 * is of that file, and kept under the slot's kind it would make a
	 * later call on "a device" fail with the new file's errno.
	 */
	if (copy >= 0 && w->npk > 0 && w->pk[w->npk - 1].slot >= 0 &&
	    slot_unchanged(w, &w->pk[w->npk - 1]))
		keep(w, copy, w->pk[w->npk - 1].kind, dev);
	else if (copy >= 0)
		close(copy);
}

static void run_ops(struct worker *w, long n);

/*
 * Fork: the child runs a few operations on the inherited fds (the seed
 * ABI answers most with -EPERM: the mm lock belongs to the parent; the
 * container ABI maps for any holder, charged to the child) and dies,
 * either by exit with everything open or by SIGKILL.  The lock is held across fork so
 * the child's copy of the table is consistent and its mutex unused.
 */
static void op_fork(struct worker *w)
{
	struct fuzz *fz = w->fz;
	struct slot copy[NSLOT];
	int status;
	pid_t pid;

	if (w->in_child)
		return;
	fflush(stdout);
	fflush(stderr);
	/*
	 * Every fork leaves the whole process copy-on-write while its child
	 * lives, and the workers' COW breaks (page-table lock held, TLB flush
	 * IPI sent) are what locks the TCG guest up (see slow_phase).  Ten
	 * forks a second test inheritance and exit as well as the fifty
	 * that came without a limit.
	 */
	pthread_mutex_lock(&fz->lock);
	if (fz->no_fork || vt_now_ms() < fz->next_fork_ms) {
		pthread_mutex_unlock(&fz->lock);
		return;
	}
	fz->next_fork_ms = vt_now_ms() + FORK_GAP_MS;
	__atomic_add_fetch(&fz->forking, 1, __ATOMIC_RELAXED);
	memcpy(copy, fz->slot, sizeof(copy));
	pid = fork();
	if (pid == 0) {
		struct worker child = {
			.fz = fz, .id = w->id, .rng = w->rng ^ 0x5a5a5a5aULL,
			.in_child = 1, .local = copy,
		};

		run_ops(&child, 1 + (long)below(&child, 30));
		if (chance(&child, 50))
			raise(SIGKILL);
		_exit(0);
	}
	pthread_mutex_unlock(&fz->lock);
	account(w, pid, "fork");
	if (pid >= 0) {
		__atomic_add_fetch(&fz->forks, 1, __ATOMIC_RELAXED);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	__atomic_sub_fetch(&fz->forking, 1, __ATOMIC_RELEASE);
}

typedef void (*op_fn)(struct worker *w);

struct op {
	op_fn fn;
	unsigned int weight;
	const char *name;
};

/*
 * rmmod vfio_pci and load it again, at most every RELOAD_GAP_MS.  The
 * unload is refused while any device fd or mmap is open (each open
 * device holds a reference on the module); otherwise it takes every
 * group from under the other threads, whose fds answer ENODEV and whose
 * opens ENOENT until new_id has bound the devices again.
 */
#define RELOAD_GAP_MS	2000

static void op_reload(struct worker *w)
{
	struct fuzz *fz = w->fz;
	uint64_t now = vt_now_ms();
	int go;

	if (w->in_child)
		return;
	pthread_mutex_lock(&fz->lock);
	go = now >= fz->next_reload_ms;
	if (go)
		fz->next_reload_ms = now + RELOAD_GAP_MS;
	pthread_mutex_unlock(&fz->lock);
	if (!go)
		return;
	if (syscall(SYS_delete_module, "vfio_pci", O_NONBLOCK)) {
		trace(w, "rmmod vfio_pci: %s", strerror(errno));
		__atomic_add_fetch(&fz->reload_refused, 1, __ATOMIC_RELAXED);
		return;
	}
	trace(w, "rmmod vfio_pci: done, loading it again");
	if (vt_vfio_pci_reload()) {
		fz->reload_errno = errno;
		__atomic_add_fetch(&fz->reload_failed, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&fz->reloads, 1, __ATOMIC_RELAXED);
}

#define OP(fn, weight) { fn, weight, #fn }

static const struct op ops[] = {
	OP(op_open_group, 8),	OP(op_close, 8),	OP(op_group_info, 4),
	OP(op_merge, 5),	OP(op_unmerge, 4),	OP(op_get_iommu_fd, 6),
	OP(op_get_device_fd, 6),OP(op_iommu_info, 3),	OP(op_map, 10),
	OP(op_unmap, 8),	OP(op_storm, 2),	OP(op_remap_arena, 1),
	OP(op_device_info, 5),	OP(op_new_eventfd, 3),	OP(op_set_irqs, 8),
	OP(op_unmask, 3),	OP(op_reset, 1),	OP(op_random_ioctl, 4),
	OP(op_rw, 8),		OP(op_mmap, 3),		OP(op_dup, 2),
	OP(op_fork, 1),		OP(op_decode, 3),	OP(op_reset_mmap, 1),
	OP(op_reload, 1),
};

static void run_ops(struct worker *w, long n)
{
	unsigned int total = 0, r;
	size_t i;
	long k;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		total += ops[i].weight;
	for (k = 0; k < n; k++) {
		r = (unsigned int)below(w, total);
		for (i = 0; r >= ops[i].weight; i++)
			r -= ops[i].weight;
		cur_op = ops[i].name;
		w->npk = 0;
		ops[i].fn(w);
	}
}

static void slow_phase(struct vt *t, struct fuzz *fz);

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct fuzz *fz = w->fz;
	uint64_t now;

	while ((now = vt_now_ms()) < fz->deadline_ms) {
		long it = __atomic_add_fetch(&fz->iters, 1, __ATOMIC_RELAXED);

		if (it > fz->max_iters)
			break;
		if ((now >= fz->slow_at_ms || it >= fz->max_iters / 4 * 3) &&
		    !__atomic_exchange_n(&fz->slow_begun, 1, __ATOMIC_ACQ_REL))
			slow_phase(fz->t, fz);
		run_ops(w, 1);
	}
	return NULL;
}

/* ---- setup and checks -------------------------------------------------- */

static uint64_t param(int argc, char **argv, int i, const char *env,
		      uint64_t dflt)
{
	const char *s = argc > i ? argv[i] : getenv(env);

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

static void dev_setup(struct vt *t, struct fdev *d, const char *name,
		      int is_edu)
{
	struct vt_dev v;
	uint32_t i;

	snprintf(d->name, sizeof(d->name), "%s", name);
	d->is_edu = is_edu;
	VT_OK(t, vt_open_dev(&v, name));
	d->group = v.group;
	for (i = 0; i < VFIO_PCI_NUM_REGIONS; i++)
		VT_OK(t, vt_region_info(v.device_fd, i, &d->region[i]));
	vt_close_dev(&v);
}

/* Merges outlive the fds: take every group apart again. */
static void unmerge_all(struct fuzz *fz)
{
	int i, fd;

	for (i = 0; i < NDEV; i++) {
		fd = vt_open_group(fz->dev[i].group, O_RDWR);
		if (fd < 0)
			continue;
		while (ioctl(fd, VFIO_GROUP_UNMERGE) == 0)
			printf("# cleanup: unmerged the group of %s\n",
			       fz->dev[i].name);
		close(fd);
	}
}

/* Close what is left, in random order. */
static void close_all(struct fuzz *fz, struct worker *w)
{
	int left = NSLOT;

	while (left-- > 0)
		op_close(w);
	(void)fz;
}

/* A fresh set of SLOW_PAGES registered with uffd, or NULL. */
static uint8_t *slow_area(struct fuzz *fz)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	uint8_t *p;

	if (fz->nslow_area == SLOW_AREAS)
		return NULL;
	p = mmap(NULL, SLOW_PAGES * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	reg.range.start = (uintptr_t)p;
	reg.range.len = SLOW_PAGES * PG;
	if (ioctl(fz->uffd, UFFDIO_REGISTER, &reg)) {
		munmap(p, SLOW_PAGES * PG);
		return NULL;
	}
	fz->slow_area[fz->nslow_area++] = p;
	return p;
}

/*
 * Serve the userfaultfd pages' faults, each after a random delay of up
 * to SLOW_DELAY_US (late, never lost: every call must end), and offer a
 * fresh set of pages every SLOW_REARM_MS, so that calls keep meeting
 * missing ones.  Fresh pages, not the served ones dropped again: a drop
 * is a TLB shootdown, and with one a second the guest locked up under
 * TCG (both vCPUs stuck for good, one waiting for the other to take its
 * flush IPI), which fresh pages never did.
 */
static void *slow_server(void *arg)
{
	static uint8_t fill[PG] __attribute__((aligned(PG)));
	struct fuzz *fz = arg;
	uint64_t rng = fz->seed | 1, rearm = vt_now_ms() + SLOW_REARM_MS;
	struct uffd_msg msg;
	uint8_t *p;

	memset(fill, 0x5a, sizeof(fill));
	while (!__atomic_load_n(&fz->slow_stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { .fd = fz->uffd, .events = POLLIN };
		struct uffdio_copy copy = { .src = (uintptr_t)fill,
					    .len = PG };

		if (vt_now_ms() >= rearm) {
			p = slow_area(fz);
			if (p)
				__atomic_store_n(&fz->slow, p, __ATOMIC_RELEASE);
			rearm = vt_now_ms() + SLOW_REARM_MS;
		}
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(fz->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		usleep(rng % SLOW_DELAY_US);
		copy.dst = msg.arg.pagefault.address & ~(uint64_t)(PG - 1);
		/* EEXIST: another fault on the page came first. */
		if (ioctl(fz->uffd, UFFDIO_COPY, &copy) == 0)
			__atomic_add_fetch(&fz->slow_faults, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* The userfaultfd pages and their server; none when uffd is not there. */
static void slow_start(struct vt *t, struct fuzz *fz)
{
	struct uffdio_api api = { .api = UFFD_API };
	uint8_t *p;

	fz->slow = NULL;
	fz->nslow_area = 0;
	fz->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fz->uffd < 0) {
		printf("# no userfaultfd (%s): no late pages\n",
		       strerror(errno));
		return;
	}
	VT_OK(t, ioctl(fz->uffd, UFFDIO_API, &api));
	p = slow_area(fz);
	VT_CHECKF(t, p, "userfaultfd pages: %s", strerror(errno));
	VT_CHECKF(t, pthread_create(&fz->slow_thread, NULL, slow_server,
				    fz) == 0, "pthread_create failed");
	/* The workers run already: from here on they may take the pages. */
	__atomic_store_n(&fz->slow, p, __ATOMIC_RELEASE);
}

static void slow_stop(struct fuzz *fz)
{
	int i;

	if (!fz->slow)
		return;
	__atomic_store_n(&fz->slow_stop, 1, __ATOMIC_RELEASE);
	pthread_join(fz->slow_thread, NULL);
	close(fz->uffd);
	for (i = 0; i < fz->nslow_area; i++)
		munmap(fz->slow_area[i], SLOW_PAGES * PG);
}

/*
 * The last quarter of the run (in time or in iterations, whichever ends
 * it) hands out the userfaultfd pages, and forks no more.  Under TCG the
 * guest sometimes locks up while a fork's child lives: one vCPU breaking
 * copy-on-write (a fault, a MAP_DMA pin) sends the TLB flush IPI with the
 * page-table lock held, the other spins on that lock with interrupts on
 * and never takes the IPI.  No VFIO code is
 * on either stack, and a real machine takes the IPI.  Without a fork
 * limit it came once in about two minutes of fuzzing; with the thread
 * that serves the late pages beside the forks (it wakes every few
 * milliseconds), within a minute.  Without forks nothing is copied on
 * write, so the two stay apart.  The worker that first sees the time
 * starts the phase, so that no extra thread wakes before it.
 */
static void slow_phase(struct vt *t, struct fuzz *fz)
{
	pthread_mutex_lock(&fz->lock);
	fz->no_fork = 1;
	pthread_mutex_unlock(&fz->lock);
	while (__atomic_load_n(&fz->forking, __ATOMIC_ACQUIRE))
		usleep(1000);
	slow_start(t, fz);
}

struct start {
	long pins;
	long vmlck;
};

static void test_fuzz(struct vt *t, void *arg)
{
	struct fuzz *fz = arg;
	struct worker w[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	struct start s;
	uint64_t t0;
	long pins, vmlck;
	int i, e;

	s.pins = VT_OK(t, vt_pinned_now());
	s.vmlck = VT_OK(t, vt_locked_kb(0));
	fz->arena = mmap(NULL, ARENA_PAGES * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VT_CHECKF(t, fz->arena != MAP_FAILED, "arena: %s", strerror(errno));
	memset(fz->arena, 0x5a, ARENA_PAGES * PG);
	VT_OK(t, mprotect(fz->arena + ARENA_RW * PG, 16 * PG, PROT_READ));
	VT_OK(t, mprotect(fz->arena + ARENA_RO * PG, 16 * PG, PROT_NONE));
	dev_setup(t, &fz->dev[0], VT_EDU0, 1);
	dev_setup(t, &fz->dev[1], VT_EDU1, 1);
	dev_setup(t, &fz->dev[2], VT_TESTDEV0, 0);
	{
		char drv[32];

		fz->has_edu2 = !vt_device_driver(VT_EDU2, drv, sizeof(drv)) &&
			       !strcmp(drv, "vfio");
	}
	for (i = 0; i < NSLOT; i++) {
		fz->slot[i].fd = -1;
		fz->slot[i].kind = K_NONE;
	}
	t0 = vt_now_ms();
	fz->slow_at_ms = t0 + fz->deadline_ms * 3 / 4;
	fz->deadline_ms += t0;
	fz->t = t;
	for (i = 0; i < fz->nthreads; i++) {
		w[i] = (struct worker){ .fz = fz, .id = i,
					.rng = fz->seed * 0x9e3779b97f4a7c15ULL +
					       (uint64_t)i + 1 };
		e = pthread_create(&th[i], NULL, worker_main, &w[i]);
		VT_CHECKF(t, e == 0, "pthread_create: %s", strerror(e));
	}
	for (i = 0; i < fz->nthreads; i++)
		pthread_join(th[i], NULL);
	close_all(fz, &w[0]);
	unmerge_all(fz);
	slow_stop(fz);

	printf("# t-fuzz: seed %" PRIu64 ", %d threads, %ld iterations, "
	       "%ld calls, %ld forks in %.1f s\n", fz->seed, fz->nthreads,
	       fz->iters > fz->max_iters ? fz->max_iters : fz->iters,
	       fz->calls, fz->forks, (vt_now_ms() - t0) / 1000.0);
	printf("# errnos:");
	for (e = 0; e < MAX_ERRNO_SEEN; e++)
		if (fz->errno_count[e])
			printf(" %s=%ld", strerrorname_np(e) ?
			       strerrorname_np(e) : "?", fz->errno_count[e]);
	printf("\n# %ld decode toggles, %ld mmap reads raised SIGBUS; "
	       "edu2: %ld resets, %ld reads beside them (%ld SIGBUS); "
	       "%ld late userfaultfd pages served",
	       fz->decode_toggles, fz->mmap_sigbus, fz->resets,
	       fz->reset_reads, fz->reset_sigbus, fz->slow_faults);
	printf("\n# vfio_pci: %ld unloads and reloads, %ld unloads refused "
	       "(a device open)", fz->reloads, fz->reload_refused);
	printf("\n# reproduce: t-fuzz %" PRIu64 " %ld <secs> 1 "
	       "(VT_FUZZ_TRACE=1 to print every call)\n", fz->seed,
	       fz->max_iters);
	fflush(stdout);

	VT_CHECKF(t, fz->calls > 0, "no calls were made");
	VT_CHECKF(t, !fz->reload_failed, "%ld reloads of vfio_pci failed: %s",
		  fz->reload_failed, strerror(fz->reload_errno));
	VT_CHECKF(t, vt_module_loaded("vfio_pci"), "vfio_pci not loaded at the end");
	VT_CHECKF(t, !fz->slow || fz->slow_faults > 0, "no call touched the "
		  "userfaultfd pages");
	VT_CHECKF(t, fz->odd_errno == 0, "%ld calls failed with an unexpected "
		    "errno, first %d (%s) from %s", fz->odd_errno,
		    fz->odd_errno_first, strerror(fz->odd_errno_first),
		    fz->odd_what);

	VT_CHECKF(t, fz->reset_bad == 0, "%ld reads of edu2's mmap during a "
		    "reset saw 0x%x, not the ID: the device was accessed "
		    "while it did not decode", fz->reset_bad,
		    fz->reset_bad_value);
	VT_CHECKF(t, fz->bad_mmap == 0, "%ld mmaps succeeded beyond what the "
		    "region allows, first: %s", fz->bad_mmap, fz->bad_mmap_what);

	/*
	 * Releases run when the last reference goes, some of them from
	 * work items: allow them a bound, and say how long they took.
	 */
	t0 = vt_now_ms();
	for (i = 0; i < 300; i++) {
		pins = vt_pinned_now();
		vmlck = vt_locked_kb(0);
		if (pins == s.pins && vmlck == s.vmlck)
			break;
		usleep(100000);
	}
	if (i)
		printf("# pins and VmLck back after %llu ms\n",
		       (unsigned long long)(vt_now_ms() - t0));
	VT_CHECKF(t, pins == s.pins, "%ld pages still pinned after the fuzzer "
		    "closed everything", pins - s.pins);
	VT_CHECKF(t, vmlck == s.vmlck, "VmLck %ld kB, was %ld kB", vmlck,
		    s.vmlck);
	munmap(fz->arena, ARENA_PAGES * PG);
}

int main(int argc, char **argv)
{
	struct vt t = { .prog = "t-fuzz" };
	struct fuzz *fz;
	uint64_t secs;

	fz = calloc(1, sizeof(*fz));
	if (!fz) {
		perror("t-fuzz: calloc");
		return 2;
	}
	pthread_mutex_init(&fz->lock, NULL);
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_crash;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
	}
	fz->seed = param(argc, argv, 1, "VT_FUZZ_SEED",
			 (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
	fz->max_iters = (long)param(argc, argv, 2, "VT_FUZZ_ITERS", 20000);
	secs = param(argc, argv, 3, "VT_FUZZ_SECS", 20);
	fz->nthreads = (int)param(argc, argv, 4, "VT_FUZZ_THREADS", 3);
	if (fz->nthreads < 1 || fz->nthreads > MAX_THREADS)
		fz->nthreads = 3;
	fz->trace = getenv("VT_FUZZ_TRACE") != NULL;
	fz->deadline_ms = secs * 1000;
	printf("# t-fuzz: seed %" PRIu64 " (max %ld iterations, %" PRIu64
	       " s, %d threads)\n", fz->seed, fz->max_iters, secs,
	       fz->nthreads);
	fflush(stdout);

	VT_RUN(&t, test_fuzz, fz);
	return vt_done(&t);
}
