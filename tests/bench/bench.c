// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-bench: the benchmark's measurements, run against one VFIO backend.
 *
 *   vfio-bench --backend ours|container|intree|iommufd [--dev 0000:00:02.0]
 *              [--reps 5] [--first-rep 1]
 *              [--rows map4k,maphuge,mapthp,maphuge1g,many,msi,bar0]
 *              [--size-mib 1024] [--counts 1000,10000,100000]
 *              [--msi-iters 2000]
 *
 * Every measurement is printed as one machine-readable line
 *
 *   BENCH <backend> <row> <metric> <rep> <value>
 *
 * a failure as "ERROR <backend> <row>: <what>: <strerror>", and a row
 * that cannot run here for want of memory of its kind (THP, 1 GiB pages),
 * which is not a failure of the VFIO under test, as
 * "SKIP <backend> <row>: <why>".  Other lines start with "INFO".  The
 * host (tests/bench/report.py) takes the medians and the ratios; nothing
 * here compares the backends.
 *
 * The device is an edu (QEMU docs/specs/edu.rst): register 0x00 reads the
 * identification 0x010000ed, a write to 0x60 raises its interrupt (MSI
 * once enabled), a write to 0x64 acknowledges it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/*
 * Weak: be_iommufd.c needs 7.x uapi headers, and a vfio-bench built
 * without it should still run the other backends.
 */
extern const struct bench_ops bench_iommufd_ops __attribute__((weak));

#define KIB		1024ULL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)
#define PAGE_4K		(4 * KIB)
#define PAGE_2M		(2 * MIB)
#define PAGE_1G		GIB

/* Far above anything edu or the reserved regions of the VM use. */
#define IOVA_BIG	(4 * GIB)	/* rows map*, 1 GiB aligned */
#define IOVA_MANY	(16 * GIB)	/* row many */

#define EDU_ID		0x00
#define EDU_ID_VALUE	0x010000edU
#define EDU_IRQ_RAISE	0x60
#define EDU_IRQ_ACK	0x64

#define MAX_COUNTS	8

/* Time a BAR0 read loop runs for; long enough to swamp the clock reads. */
#define BAR0_NS		(300 * 1000 * 1000ULL)

struct bench_cfg {
	const char *dev;
	const char *name;		/* backend, as printed on each line */
	const struct bench_ops *ops;
	int reps;
	int first_rep;			/* number printed for the first rep */
	uint64_t big_size;		/* rows map4k ... maphuge1g */
	unsigned long counts[MAX_COUNTS];	/* row many */
	int ncounts;
	int msi_iters;
	char rows[128];			/* comma separated row names */
};

struct bench_run {
	const struct bench_cfg *cfg;
	struct bench_dev dev;
	int errors;
};

/* ---- helpers shared with the backends --------------------------------- */

void bench_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * The group number of a PCI device, from its iommu_group link in sysfs;
 * -1 with errno set on failure.
 */
static int group_of(const char *name)
{
	char path[128], link[256];
	const char *base;
	char *end;
	ssize_t n;
	long g;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group",
		 name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	errno = 0;
	g = strtol(base, &end, 10);
	if (errno || *end || g < 0 || g > INT_MAX) {
		errno = EINVAL;
		return -1;
	}
	return (int)g;
}

int bench_fail(struct bench_dev *d, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(d->errbuf, sizeof(d->errbuf), fmt, ap);
	va_end(ap);
	len = strlen(d->errbuf);
	snprintf(d->errbuf + len, sizeof(d->errbuf) - len, ": %s",
		 strerror(saved));
	errno = saved;
	return -1;
}

/* ---- the device -------------------------------------------------------- */

/*
 * Everything both ABIs do alike to open a device: find its group, let the
 * backend open group, IOMMU and device, then read BAR0, config space and
 * MSI.  On failure d->errbuf says what failed and nothing is left open.
 */
static int dev_open(const struct bench_ops *ops, struct bench_dev *d,
		    const char *name)
{
	struct bench_region reg;

	d->group_fd = d->container_fd = d->device_fd = d->iommufd = -1;
	d->ioas_id = 0;
	d->group = group_of(name);
	if (d->group < 0)
		return bench_fail(d, "iommu_group of %s", name);
	if (ops->open(d, name) < 0)
		goto err;

	if (ops->region_info(d, BENCH_REGION_BAR0, &reg) < 0) {
		bench_fail(d, "VFIO_DEVICE_GET_REGION_INFO BAR0 of %s", name);
		goto err;
	}
	d->bar0_offset = reg.offset;
	d->bar0_size = reg.size;
	d->bar0_mmap_ok = reg.mmap_ok;

	if (ops->region_info(d, BENCH_REGION_CONFIG, &reg) < 0) {
		bench_fail(d, "VFIO_DEVICE_GET_REGION_INFO config of %s", name);
		goto err;
	}
	d->config_offset = reg.offset;

	if (ops->msi_info(d, &d->msi_count) < 0) {
		bench_fail(d, "VFIO_DEVICE_GET_IRQ_INFO MSI of %s", name);
		goto err;
	}
	return 0;
err:
	ops->close(d);
	return -1;
}

/* BAR0 whole, MAP_FAILED on failure. */
static void *bar0_mmap(struct bench_dev *d)
{
	return mmap(NULL, d->bar0_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    d->device_fd, d->bar0_offset);
}

/* pread of len bytes at off inside BAR0. */
static ssize_t bar0_pread(struct bench_dev *d, void *buf, size_t len,
			  uint64_t off)
{
	return pread(d->device_fd, buf, len, d->bar0_offset + off);
}

/* ---- output ----------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void result(struct bench_run *r, const char *row, const char *metric,
		   int rep, double value)
{
	printf("BENCH %s %s %s %d %.6g\n", r->cfg->name, row, metric,
	       r->cfg->first_rep + rep - 1, value);
	fflush(stdout);
}

static void error(struct bench_run *r, const char *row, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reports errno's text; call it before anything can change errno. */
static void error(struct bench_run *r, const char *row, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	printf("ERROR %s %s: ", r->cfg->name, row);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(": %s\n", strerror(saved));
	fflush(stdout);
	r->errors++;
}

/* A row that cannot run here; not counted as an error. */
static void skip(struct bench_run *r, const char *row, const char *why)
{
	printf("SKIP %s %s: %s\n", r->cfg->name, row, why);
	fflush(stdout);
}

static int want_row(const struct bench_cfg *cfg, const char *row)
{
	size_t n = strlen(row);
	const char *p = cfg->rows;

	while ((p = strstr(p, row)) != NULL) {
		if ((p == cfg->rows || p[-1] == ',') &&
		    (p[n] == ',' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

/* ---- memory ----------------------------------------------------------- */

/* What backs the buffer of a mapping row. */
enum backing {
	MEM_4K,		/* anonymous 4 KiB pages, THP kept away */
	MEM_HUGE_2M,	/* hugetlbfs, 2 MiB pages */
	MEM_THP,	/* anonymous, 2 MiB transparent huge pages */
	MEM_HUGE_1G,	/* hugetlbfs, 1 GiB pages */
};

/* A row's buffer: p is what gets DMA-mapped, [base, base + len) the mmap. */
struct buf {
	char *p;
	void *base;
	uint64_t len;
};

#define THP_SYSFS	"/sys/kernel/mm/transparent_hugepage"
#define HUGE_1G_SYSFS	"/sys/kernel/mm/hugepages/hugepages-1048576kB"

/* The first line of a sysfs file, without its newline; "?" if unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f || !fgets(buf, len, f))
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * AnonHugePages of the mapping that holds addr, in bytes, from
 * /proc/self/smaps: how much of it really is THP.  -1 if not found.
 */
static long long thp_bytes(const void *addr)
{
	unsigned long start, end, a = (unsigned long)addr;
	unsigned long long kib;
	char line[256];
	int inside = 0;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* Field names are not "<hex>-<hex>", mapping headers are. */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			inside = start <= a && a < end;
			continue;
		}
		if (inside &&
		    sscanf(line, "AnonHugePages: %llu kB", &kib) == 1) {
			fclose(f);
			return (long long)(kib * KIB);
		}
	}
	fclose(f);
	return -1;
}

/*
 * THP is not ours to have: the kernel may be built without it, have it
 * off, or be out of free 2 MiB blocks.  Returns 0 with the whole buffer
 * in huge pages, 1 (and why) when it is not, -1 (and why, errno) when
 * something else failed.
 */
static int alloc_thp(struct buf *b, uint64_t size, char *why, size_t len)
{
	char enabled[128], defrag[128];
	long long huge;
	uint64_t off;
	char *p, *a;

	read_line(THP_SYSFS "/enabled", enabled, sizeof(enabled));
	if (!strcmp(enabled, "?")) {
		snprintf(why, len, "no %s/enabled: kernel without THP",
			 THP_SYSFS);
		return 1;
	}
	if (strstr(enabled, "[never]")) {
		snprintf(why, len, "THP is off (%s/enabled: %s)", THP_SYSFS,
			 enabled);
		return 1;
	}
	/* One extra 2 MiB to cut an aligned buffer out of. */
	p = mmap(NULL, size + PAGE_2M, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(why, len, "mmap %llu MiB anonymous",
			 (unsigned long long)(size / MIB));
		return -1;
	}
	a = (char *)(((uintptr_t)p + PAGE_2M - 1) & ~(uintptr_t)(PAGE_2M - 1));
	if (a > p)
		munmap(p, a - p);
	munmap(a + size, p + PAGE_2M - a);
	b->p = b->base = a;
	b->len = size;
	if (madvise(a, size, MADV_HUGEPAGE) < 0) {
		snprintf(why, len, "madvise(MADV_HUGEPAGE): %s",
			 strerror(errno));
		munmap(a, size);
		return 1;
	}
	for (off = 0; off < size; off += PAGE_4K)
		a[off] = (char)off;
	huge = thp_bytes(a);
	if (huge < (long long)size) {
		read_line(THP_SYSFS "/defrag", defrag, sizeof(defrag));
		snprintf(why, len, "only %lld of %llu MiB came as THP (AnonHugePages in /proc/self/smaps; enabled: %s, defrag: %s)",
			 huge < 0 ? -1 : huge / (long long)MIB,
			 (unsigned long long)(size / MIB), enabled, defrag);
		munmap(a, size);
		return 1;
	}
	return 0;
}

/*
 * 1 GiB pages exist only when the CPU has them (pdpe1gb) and someone
 * reserved them, at boot or in sysfs; without them the row is skipped,
 * with what sysfs says.  A buffer smaller than 1 GiB (--size-mib) still
 * takes a whole page and maps its first part.
 */
static int alloc_huge_1g(struct buf *b, uint64_t size, char *why, size_t len)
{
	uint64_t alloc = (size + PAGE_1G - 1) & ~(PAGE_1G - 1);
	char nr[32], nfree[32];
	uint64_t off;
	char *p;

	/* 30: log2 of 1 GiB, the page size asked for. */
	p = mmap(NULL, alloc, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
		 (30 << MAP_HUGE_SHIFT), -1, 0);
	if (p == MAP_FAILED) {
		int saved = errno;

		if (access(HUGE_1G_SYSFS, F_OK) < 0) {
			snprintf(why, len, "no 1 GiB huge pages in this kernel or CPU (no %s)",
				 HUGE_1G_SYSFS);
			return 1;
		}
		read_line(HUGE_1G_SYSFS "/nr_hugepages", nr, sizeof(nr));
		read_line(HUGE_1G_SYSFS "/free_hugepages", nfree,
			  sizeof(nfree));
		snprintf(why, len, "no %llu free 1 GiB huge page(s): mmap MAP_HUGETLB|MAP_HUGE_1GB: %s (nr_hugepages %s, free %s; boot with hugepagesz=1G hugepages=%llu)",
			 (unsigned long long)(alloc / PAGE_1G),
			 strerror(saved), nr, nfree,
			 (unsigned long long)(alloc / PAGE_1G));
		return 1;
	}
	for (off = 0; off < alloc; off += PAGE_2M)
		p[off] = (char)off;
	b->p = b->base = p;
	b->len = alloc;
	return 0;
}

/*
 * size bytes of private anonymous memory backed as m asks, faulted in
 * before any timing so that the benchmark measures pinning and IOMMU
 * work, not page faults.  Returns 0; 1 when memory of that kind cannot
 * be had here (THP, 1 GiB pages), with why; -1 on failure, with why
 * and errno.
 */
static int alloc_buf(struct buf *b, uint64_t size, enum backing m,
		     char *why, size_t len)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	uint64_t step = PAGE_4K;
	uint64_t off;
	char *p;

	if (m == MEM_THP)
		return alloc_thp(b, size, why, len);
	if (m == MEM_HUGE_1G)
		return alloc_huge_1g(b, size, why, len);
	if (m == MEM_HUGE_2M) {
		flags |= MAP_HUGETLB | (21 << MAP_HUGE_SHIFT);
		step = PAGE_2M;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) {
		if (m == MEM_HUGE_2M)
			snprintf(why, len, "mmap %llu MiB MAP_HUGETLB (boot with hugepages=%llu or more)",
				 (unsigned long long)(size / MIB),
				 (unsigned long long)(size / PAGE_2M));
		else
			snprintf(why, len, "mmap %llu MiB anonymous",
				 (unsigned long long)(size / MIB));
		return -1;
	}
	if (m == MEM_4K && madvise(p, size, MADV_NOHUGEPAGE) < 0) {
		snprintf(why, len, "madvise(MADV_NOHUGEPAGE)");
		munmap(p, size);
		return -1;
	}
	for (off = 0; off < size; off += step)
		p[off] = (char)off;
	b->p = b->base = p;
	b->len = size;
	return 0;
}

static void free_buf(struct buf *b)
{
	munmap(b->base, b->len);
}

/* ---- rows 1, 2, 2b, 2c: one big MAP_DMA + UNMAP_DMA ------------------- */

static void row_big(struct bench_run *r, const char *row, enum backing m)
{
	const struct bench_ops *ops = r->cfg->ops;
	uint64_t size = r->cfg->big_size;
	uint64_t t0, t1, t2;
	char why[512];
	struct buf b;
	int ret, rep;

	ret = alloc_buf(&b, size, m, why, sizeof(why));
	if (ret > 0) {
		skip(r, row, why);
		return;
	}
	if (ret < 0) {
		error(r, row, "%s", why);
		return;
	}
	if (m == MEM_THP)
		printf("INFO %s %s: %llu MiB, all of it THP\n", r->cfg->name,
		       row, (unsigned long long)(size / MIB));
	for (rep = 1; rep <= r->cfg->reps; rep++) {
		t0 = now_ns();
		if (ops->map(&r->dev, b.p, IOVA_BIG, size) < 0) {
			error(r, row, "MAP_DMA %llu MiB at 0x%llx",
			      (unsigned long long)(size / MIB),
			      (unsigned long long)IOVA_BIG);
			break;
		}
		t1 = now_ns();
		if (ops->unmap(&r->dev, IOVA_BIG, size) < 0) {
			error(r, row, "UNMAP_DMA %llu MiB at 0x%llx",
			      (unsigned long long)(size / MIB),
			      (unsigned long long)IOVA_BIG);
			break;
		}
		t2 = now_ns();
		result(r, row, "gib_s", rep,
		       ((double)size / GIB) / ((t2 - t0) / 1e9));
		result(r, row, "map_ms", rep, (t1 - t0) / 1e6);
		result(r, row, "unmap_ms", rep, (t2 - t1) / 1e6);
	}
	free_buf(&b);
}

/* ---- row 3: many separate 4 KiB mappings ------------------------------ */

/*
 * Mapping i is the page buf + i * 4 KiB at IOVA_MANY + i * 8 KiB: the
 * one-page holes keep neighbours from being merged into one mapping by
 * either implementation, so every call really adds or removes one entry.
 */
static uint64_t many_iova(unsigned long i)
{
	return IOVA_MANY + (uint64_t)i * 2 * PAGE_4K;
}

static void unmap_first(struct bench_run *r, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		r->cfg->ops->unmap(&r->dev, many_iova(i), PAGE_4K);
}

static void row_many(struct bench_run *r)
{
	const struct bench_ops *ops = r->cfg->ops;
	unsigned long max = 0, n, i;
	char row[32], why[256];
	uint64_t t0, t1, t2;
	struct buf b;
	char *buf;
	int c, rep;

	for (c = 0; c < r->cfg->ncounts; c++)
		if (r->cfg->counts[c] > max)
			max = r->cfg->counts[c];
	if (alloc_buf(&b, max * PAGE_4K, MEM_4K, why, sizeof(why)) < 0) {
		error(r, "many", "%s", why);
		return;
	}
	buf = b.p;
	for (c = 0; c < r->cfg->ncounts; c++) {
		n = r->cfg->counts[c];
		snprintf(row, sizeof(row), "many-%lu", n);
		for (rep = 1; rep <= r->cfg->reps; rep++) {
			t0 = now_ns();
			for (i = 0; i < n; i++)
				if (ops->map(&r->dev, buf + i * PAGE_4K,
					     many_iova(i), PAGE_4K) < 0)
					break;
			t1 = now_ns();
			if (i < n) {
				error(r, row, "MAP_DMA number %lu of %lu",
				      i + 1, n);
				unmap_first(r, i);
				goto out;
			}
			for (i = 0; i < n; i++)
				if (ops->unmap(&r->dev, many_iova(i),
					       PAGE_4K) < 0)
					break;
			t2 = now_ns();
			if (i < n) {
				error(r, row, "UNMAP_DMA number %lu of %lu",
				      i + 1, n);
				/* Best effort: drop what is left. */
				while (++i < n)
					ops->unmap(&r->dev, many_iova(i),
						   PAGE_4K);
				goto out;
			}
			result(r, row, "map_ns", rep, (double)(t1 - t0) / n);
			result(r, row, "unmap_ns", rep, (double)(t2 - t1) / n);
		}
	}
out:
	free_buf(&b);
}

/* ---- row 4: MSI round trip -------------------------------------------- */

/* Only there to make a blocked read() return EINTR. */
static void on_alarm(int sig)
{
	(void)sig;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of n sorted samples. */
static uint64_t percentile(const uint64_t *s, int n, int pct)
{
	int k = (n * pct + 99) / 100;

	if (k < 1)
		k = 1;
	return s[k - 1];
}

/*
 * One round trip: raise the edu interrupt with an MMIO write, block in
 * read() on the eventfd until the MSI arrives, then acknowledge it
 * (outside the timed part).  Returns the ns taken, 0 on failure.
 */
static uint64_t msi_once(volatile uint32_t *bar, int efd)
{
	uint64_t t0, t1, count;

	t0 = now_ns();
	bar[EDU_IRQ_RAISE / 4] = 1;
	if (read(efd, &count, sizeof(count)) != sizeof(count))
		return 0;
	t1 = now_ns();
	bar[EDU_IRQ_ACK / 4] = 1;
	return t1 - t0 ? t1 - t0 : 1;
}

#define PCI_COMMAND		0x04
#define PCI_COMMAND_MASTER	0x4

/*
 * An MSI is a memory write by the device: QEMU drops it unless bus
 * mastering is on, and neither VFIO turns it on by itself.  Both ABIs
 * reach config space by pread/pwrite at the config region's offset.
 * Sets bus mastering to on and returns the old command word in *old.
 */
static int set_bus_master(struct bench_dev *d, int on, uint16_t *old)
{
	uint64_t off = d->config_offset + PCI_COMMAND;
	uint16_t cmd;

	if (pread(d->device_fd, &cmd, sizeof(cmd), off) != sizeof(cmd))
		return -1;
	if (old)
		*old = cmd;
	cmd = on ? cmd | PCI_COMMAND_MASTER : cmd & ~PCI_COMMAND_MASTER;
	if (pwrite(d->device_fd, &cmd, sizeof(cmd), off) != sizeof(cmd))
		return -1;
	return 0;
}

/*
 * The CPU the device's MSI is delivered to: the IRQ whose action name in
 * /proc/interrupts carries the device name (both VFIOs name it
 * "vfio-msi...(<dev>)"), then its effective affinity.  -1 when unknown.
 */
static int msi_cpu(const char *dev)
{
	char line[1024], path[64];
	int irq = -1, cpu = -1;
	FILE *f;

	f = fopen("/proc/interrupts", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "vfio-msi") && strstr(line, dev) &&
		    sscanf(line, " %d:", &irq) == 1)
			break;
	fclose(f);
	if (irq < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/irq/%d/effective_affinity_list",
		 irq);
	f = fopen(path, "r");
	if (!f) {
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list",
			 irq);
		f = fopen(path, "r");
	}
	if (!f)
		return -1;
	if (fscanf(f, "%d", &cpu) != 1)
		cpu = -1;
	fclose(f);
	return cpu;
}

/*
 * Warm up, then r->cfg->reps times iters round trips, on CPU cpu.  Under
 * TCG, where the reader sits decides the figure: on the CPU that takes
 * the MSI the interrupt is taken right after the MMIO write; elsewhere it
 * has to wake a halted vCPU thread on a shared host, which costs 10-100x
 * more and varies with the host's load.  So both are measured, as
 * separate rows, and the affinity is set explicitly.
 */
static void msi_measure(struct bench_run *r, const char *row,
			volatile uint32_t *bar, int efd, int cpu,
			uint64_t *lat)
{
	int iters = r->cfg->msi_iters;
	cpu_set_t set;
	int rep, i;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		error(r, row, "sched_setaffinity to CPU %d", cpu);
		return;
	}
	alarm(30);
	for (i = 0; i < 50; i++)	/* warm-up: paths, caches, TLB */
		if (!msi_once(bar, efd))
			break;
	alarm(0);
	if (i < 50) {
		error(r, row, "warm-up round trip %d: no interrupt", i + 1);
		return;
	}
	for (rep = 1; rep <= r->cfg->reps; rep++) {
		alarm(30 + iters / 20);
		for (i = 0; i < iters; i++) {
			lat[i] = msi_once(bar, efd);
			if (!lat[i])
				break;
		}
		alarm(0);
		if (i < iters) {
			error(r, row, "round trip %d of %d: no interrupt",
			      i + 1, iters);
			return;
		}
		qsort(lat, iters, sizeof(*lat), cmp_u64);
		result(r, row, "p50_us", rep,
		       percentile(lat, iters, 50) / 1e3);
		result(r, row, "p99_us", rep,
		       percentile(lat, iters, 99) / 1e3);
	}
}

static void row_msi(struct bench_run *r)
{
	const struct bench_ops *ops = r->cfg->ops;
	struct sigaction sa = { .sa_handler = on_alarm };
	volatile uint32_t *bar;
	cpu_set_t saved;
	uint64_t *lat;
	uint16_t cmd;
	int efd, cpu, other;

	if (r->dev.msi_count < 1) {
		errno = ENOTSUP;
		error(r, "msi", "device reports %d MSI vectors",
		      r->dev.msi_count);
		return;
	}
	if (sched_getaffinity(0, sizeof(saved), &saved) < 0) {
		error(r, "msi", "sched_getaffinity");
		return;
	}
	lat = calloc(r->cfg->msi_iters, sizeof(*lat));
	if (!lat) {
		error(r, "msi", "calloc");
		return;
	}
	bar = bar0_mmap(&r->dev);
	if (bar == MAP_FAILED) {
		error(r, "msi", "mmap BAR0");
		goto out_free;
	}
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0) {
		error(r, "msi", "eventfd");
		goto out_unmap;
	}
	if (set_bus_master(&r->dev, 1, &cmd) < 0) {
		error(r, "msi", "enable bus mastering in config space");
		goto out_close;
	}
	if (ops->msi_setup(&r->dev, efd) < 0) {
		error(r, "msi", "connect an eventfd to MSI");
		goto out_master;
	}
	/* No SA_RESTART: the alarms in msi_measure bound a lost interrupt. */
	sigaction(SIGALRM, &sa, NULL);

	cpu = msi_cpu(r->cfg->dev);
	if (cpu < 0) {
		errno = ENOENT;
		error(r, "msi", "no vfio-msi IRQ of %s in /proc/interrupts",
		      r->cfg->dev);
		goto out_disable;
	}
	for (other = 0; other < CPU_SETSIZE; other++)
		if (other != cpu && CPU_ISSET(other, &saved))
			break;
	printf("INFO %s msi: IRQ on CPU %d, remote reader on CPU %d\n",
	       r->cfg->name, cpu, other < CPU_SETSIZE ? other : -1);
	msi_measure(r, "msi", bar, efd, cpu, lat);
	if (other < CPU_SETSIZE)
		msi_measure(r, "msi-remote", bar, efd, other, lat);
	if (sched_setaffinity(0, sizeof(saved), &saved) < 0)
		error(r, "msi", "restore the CPU affinity");

out_disable:
	signal(SIGALRM, SIG_DFL);
	if (ops->msi_setup(&r->dev, -1) < 0)
		error(r, "msi", "disable MSI");
out_master:
	if (!(cmd & PCI_COMMAND_MASTER) && set_bus_master(&r->dev, 0, NULL) < 0)
		error(r, "msi", "restore the command register");
out_close:
	close(efd);
out_unmap:
	munmap((void *)bar, r->dev.bar0_size);
out_free:
	free(lat);
}

/* ---- row 5: BAR0 reads, mmap vs pread --------------------------------- */

static void row_bar0(struct bench_run *r)
{
	volatile uint32_t *bar;
	uint64_t t0, t, n;
	uint32_t v;
	int rep, bad, i;

	if (bar0_pread(&r->dev, &v, sizeof(v), EDU_ID) != sizeof(v)) {
		error(r, "bar0", "pread BAR0 0x%x", EDU_ID);
		return;
	}
	if (v != EDU_ID_VALUE) {
		errno = EIO;
		error(r, "bar0", "pread BAR0 0x0 = 0x%08x, not 0x%08x", v,
		      EDU_ID_VALUE);
		return;
	}
	bar = bar0_mmap(&r->dev);
	if (bar == MAP_FAILED) {
		error(r, "bar0", "mmap BAR0 (%llu bytes, mmap flag %d)",
		      (unsigned long long)r->dev.bar0_size,
		      r->dev.bar0_mmap_ok);
		return;
	}
	if (bar[EDU_ID / 4] != EDU_ID_VALUE) {
		errno = EIO;
		error(r, "bar0", "mmap load of 0x0 = 0x%08x, not 0x%08x",
		      bar[EDU_ID / 4], EDU_ID_VALUE);
		goto out;
	}
	for (rep = 1; rep <= r->cfg->reps; rep++) {
		bad = 0;
		n = 0;
		t0 = now_ns();
		do {
			for (i = 0; i < 1000; i++)
				bad |= bar[EDU_ID / 4] != EDU_ID_VALUE;
			n += 1000;
			t = now_ns();
		} while (t - t0 < BAR0_NS);
		if (bad) {
			errno = EIO;
			error(r, "bar0", "an mmap load did not return the id");
			break;
		}
		result(r, "bar0", "mmap_ops_s", rep, n / ((t - t0) / 1e9));

		n = 0;
		t0 = now_ns();
		do {
			for (i = 0; i < 100; i++) {
				if (bar0_pread(&r->dev, &v, sizeof(v), EDU_ID) !=
				    sizeof(v))
					bad = -1;
				bad |= v != EDU_ID_VALUE;
			}
			n += 100;
			t = now_ns();
		} while (!bad && t - t0 < BAR0_NS);
		if (bad) {
			if (bad > 0)
				errno = EIO;
			error(r, "bar0", "pread of BAR0 0x0 failed or was wrong");
			break;
		}
		result(r, "bar0", "pread_ops_s", rep, n / ((t - t0) / 1e9));
	}
out:
	munmap((void *)bar, r->dev.bar0_size);
}

/* ---- options ---------------------------------------------------------- */

/* The rows, in the order they run; the default of --rows. */
#define ALL_ROWS	"map4k,maphuge,mapthp,maphuge1g,many,msi,bar0"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vfio-bench --backend ours|container|intree|iommufd [--dev NAME]\n"
		"       [--reps N] [--first-rep N] (the number printed for the first rep)\n"
		"       [--rows %s] [--size-mib M]\n"
		"       [--counts N,N,...] [--msi-iters N]\n", ALL_ROWS);
}

/* Every name in the comma separated list s is a row's. */
static int check_rows(const char *s)
{
	static const char *const names[] = {
		"map4k", "maphuge", "mapthp", "maphuge1g", "many", "msi",
		"bar0",
	};
	size_t n, i;

	while (*s) {
		n = strcspn(s, ",");
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i]) == n && !strncmp(s, names[i], n))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -1;
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

static int parse_counts(struct bench_cfg *cfg, const char *s)
{
	char *end;

	cfg->ncounts = 0;
	while (*s) {
		if (cfg->ncounts == MAX_COUNTS)
			return -1;
		errno = 0;
		cfg->counts[cfg->ncounts] = strtoul(s, &end, 10);
		if (errno || end == s || cfg->counts[cfg->ncounts] == 0 ||
		    cfg->counts[cfg->ncounts] > 1000000)
			return -1;
		cfg->ncounts++;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return cfg->ncounts ? 0 : -1;
}

static int parse_args(struct bench_cfg *cfg, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "dev", required_argument, NULL, 'd' },
		{ "reps", required_argument, NULL, 'r' },
		{ "first-rep", required_argument, NULL, 'f' },
		{ "rows", required_argument, NULL, 'R' },
		{ "size-mib", required_argument, NULL, 's' },
		{ "counts", required_argument, NULL, 'c' },
		{ "msi-iters", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	/* "container" is our module answering the in-kernel ABI: same calls. */
	static const struct {
		const char *name;
		const struct bench_ops *ops;
	} backends[] = {
		{ "ours", &bench_ours_ops },
		{ "intree", &bench_intree_ops },
		{ "container", &bench_intree_ops },
		{ "iommufd", &bench_iommufd_ops },
	};
	unsigned long mib;
	size_t i;
	int c;

	cfg->dev = "0000:00:02.0";
	cfg->name = NULL;
	cfg->ops = NULL;
	cfg->reps = 5;
	cfg->first_rep = 1;
	cfg->big_size = GIB;
	cfg->msi_iters = 2000;
	snprintf(cfg->rows, sizeof(cfg->rows), "%s", ALL_ROWS);
	parse_counts(cfg, "1000,10000,100000");

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
				if (!strcmp(optarg, backends[i].name))
					break;
			if (i == sizeof(backends) / sizeof(backends[0])) {
				fprintf(stderr, "vfio-bench: unknown backend '%s'\n",
					optarg);
				return -1;
			}
			/* A weak symbol: NULL when be_iommufd.o is missing. */
			if (!backends[i].ops) {
				fprintf(stderr, "vfio-bench: backend '%s' not built in (needs 7.x uapi headers)\n",
					optarg);
				return -1;
			}
			cfg->name = backends[i].name;
			cfg->ops = backends[i].ops;
			break;
		case 'd':
			cfg->dev = optarg;
			break;
		case 'r':
			cfg->reps = atoi(optarg);
			if (cfg->reps < 1 || cfg->reps > 1000) {
				fprintf(stderr, "vfio-bench: bad --reps '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'f':
			cfg->first_rep = atoi(optarg);
			if (cfg->first_rep < 1) {
				fprintf(stderr, "vfio-bench: bad --first-rep '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'R':
			/* A typo would otherwise just leave a row out. */
			if (strlen(optarg) >= sizeof(cfg->rows) ||
			    check_rows(optarg) < 0) {
				fprintf(stderr, "vfio-bench: bad --rows '%s' (of %s)\n",
					optarg, ALL_ROWS);
				return -1;
			}
			snprintf(cfg->rows, sizeof(cfg->rows), "%s", optarg);
			break;
		case 's':
			mib = strtoul(optarg, NULL, 10);
			if (mib < 2 || mib > 65536 || mib % 2) {
				fprintf(stderr, "vfio-bench: bad --size-mib '%s' (even, 2..65536)\n",
					optarg);
				return -1;
			}
			cfg->big_size = mib * MIB;
			break;
		case 'c':
			if (parse_counts(cfg, optarg) < 0) {
				fprintf(stderr, "vfio-bench: bad --counts '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'm':
			cfg->msi_iters = atoi(optarg);
			if (cfg->msi_iters < 10 || cfg->msi_iters > 1000000) {
				fprintf(stderr, "vfio-bench: bad --msi-iters '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (!cfg->ops || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct bench_cfg cfg;
	struct bench_run run = { .cfg = &cfg };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_args(&cfg, argc, argv) < 0)
		return 2;

	/* Both implementations charge pins to RLIMIT_MEMLOCK. */
	if (setrlimit(RLIMIT_MEMLOCK, &unlimited) < 0)
		printf("INFO %s setrlimit(RLIMIT_MEMLOCK, unlimited): %s\n",
		       cfg.name, strerror(errno));

	if (dev_open(cfg.ops, &run.dev, cfg.dev) < 0) {
		printf("ERROR %s open: %s\n", cfg.name, run.dev.errbuf);
		return 1;
	}
	printf("INFO %s device %s group %d BAR0 offset 0x%llx size 0x%llx mmap %d MSI %d\n",
	       cfg.name, cfg.dev, run.dev.group,
	       (unsigned long long)run.dev.bar0_offset,
	       (unsigned long long)run.dev.bar0_size, run.dev.bar0_mmap_ok,
	       run.dev.msi_count);

	if (want_row(&cfg, "map4k"))
		row_big(&run, "map4k", MEM_4K);
	if (want_row(&cfg, "maphuge"))
		row_big(&run, "maphuge", MEM_HUGE_2M);
	if (want_row(&cfg, "mapthp"))
		row_big(&run, "mapthp", MEM_THP);
	if (want_row(&cfg, "maphuge1g"))
		row_big(&run, "maphuge1g", MEM_HUGE_1G);
	if (want_row(&cfg, "many"))
		row_many(&run);
	if (want_row(&cfg, "msi"))
		row_msi(&run);
	if (want_row(&cfg, "bar0"))
		row_bar0(&run);

	cfg.ops->close(&run.dev);
	printf("INFO %s done, %d errors\n", cfg.name, run.errors);
	return run.errors ? 1 : 0;
}
