// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: the DMA mappings of one IOMMU object.
 *
 * Each MAP_DMA becomes one struct vfio_dma in an interval tree keyed by
 * IOVA, so lookup, overlap checks and splits cost O(log n).  Its pages
 * are pinned in large batches with no lock held, then every physically
 * contiguous run of them is handed to the IOMMU in a single iommu_map()
 * call under dma_lock, which picks
 * the largest page sizes the domain supports (2 MiB and 1 GiB for huge
 * pages).  Only the runs are kept, and pages are unpinned a folio at a
 * time.  Unmapping gathers the IOTLB flushes and syncs once before any
 * page is unpinned.
 *
 * A partial unmap splits a mapping: both halves keep sharing the runs.
 * The IOMMU may have used one large page across the cut, so the run
 * around each cut is unmapped whole and the part that stays is mapped
 * again.  While that happens a device's DMA to
 * the surviving part of that run may fault; the kernel's own type1 driver
 * refuses such unmaps instead.
 *
 * A range that cannot be pinned may be an mmap of a device fd of ours,
 * one of its BARs: QEMU maps every BAR of every assigned device so that
 * devices can reach each other's.  Such a mapping is one run of the BAR's
 * frames, mapped with IOMMU_MMIO; nothing is pinned or charged to
 * locked_vm, as with type1, and the device's unregister takes it out
 * (see vfio_private.h).  The RAM path pays for none of this: the BAR is
 * looked for only once pinning failed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interval_tree_generic.h>
#include <linux/iommu.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <uapi/linux/vfio.h>

#include "compat.h"
#include "vfio_dma_plan.h"
#include "vfio_private.h"
#include "vfio_range.h"

static unsigned int max_mappings = 1U << 18;
module_param(max_mappings, uint, 0644);
MODULE_PARM_DESC(max_mappings,
		 "Most DMA mappings one IOMMU object holds (default: 262144)");

/* Most pages pinned per pin_user_pages_fast() call. */
#define VFIO_PIN_BATCH		8192UL
/* Small maps pin into the stack instead of allocating a batch. */
#define VFIO_PIN_STACK		16

/*
 * struct vfio_runs - what one MAP_DMA pinned, as physically contiguous
 * runs (struct vfio_run, vfio_dma_plan.h).  A 1 GiB map of 2 MiB huge
 * pages is at most 512 runs, so huge pages cost per huge page, not per
 * 4 KiB, everywhere below.  The pieces a mapping is split into share it.
 */
struct vfio_runs {
	refcount_t	ref;
	unsigned long	nr;
	unsigned long	cap;		/* entries of run[], sentinel excluded */
	struct vfio_run	run[];
};

struct vfio_dma {
	struct rb_node		rb;
	u64			start;		/* first IOVA */
	u64			last;		/* last IOVA (inclusive) */
	u64			subtree_last;	/* interval tree */
	struct vfio_runs	*runs;
	unsigned long		first;		/* page of the MAP_DMA at @start */
	int			prot;
	/*
	 * mmgrab()ed: the mm of the task that mapped it, charged for its
	 * pinned pages.  On the container ABI any holder of the container
	 * fd maps (DPDK's secondary processes, a forked VMM), as with
	 * upstream's type1; on the seed ABI only the set's owner does.
	 */
	struct mm_struct	*mm;
	struct list_head	unmap_next;	/* on one unmap's work list */
	/*
	 * const: the device whose BAR this maps (a peer-to-peer mapping:
	 * nothing pinned nor charged), or NULL for pinned RAM.  Compared
	 * only, never dereferenced: the device's unregister removes every
	 * mapping that names it (vfio_dma_drop_device()).
	 */
	struct vfio_device	*p2p;
};

#define VFIO_DMA_START(dma)	((dma)->start)
#define VFIO_DMA_LAST(dma)	((dma)->last)

INTERVAL_TREE_DEFINE(struct vfio_dma, rb, u64, subtree_last,
		     VFIO_DMA_START, VFIO_DMA_LAST, static, vfio_dma_tree)

void vfio_dma_init(struct vfio_iommu *iommu)
{
	mutex_init(&iommu->dma_lock);
	iommu->dma_tree = RB_ROOT_CACHED;
}

static struct vfio_runs *vfio_runs_alloc(unsigned long cap)
{
	struct vfio_runs *runs;

	runs = kvmalloc(struct_size(runs, run, cap + 1), GFP_KERNEL_ACCOUNT);
	if (!runs)
		return NULL;
	refcount_set(&runs->ref, 1);
	runs->nr = 0;
	runs->cap = cap;
	return runs;
}

static void vfio_runs_put(struct vfio_runs *runs)
{
	if (refcount_dec_and_test(&runs->ref))
		kvfree(runs);
}

/* The run holding page @pgoff of the mapping: O(log runs). */
static unsigned long vfio_runs_find(const struct vfio_runs *runs,
				    unsigned long pgoff)
{
	return vfio_run_find(runs->run, runs->nr, pgoff);
}

static inline unsigned long vfio_dma_pgoff(const struct vfio_dma *dma,
					   u64 iova)
{
	return dma->first + ((iova - dma->start) >> PAGE_SHIFT);
}

static inline u64 vfio_dma_iova(const struct vfio_dma *dma,
				unsigned long pgoff)
{
	return dma->start + ((u64)(pgoff - dma->first) << PAGE_SHIFT);
}

/* Unpin pages [from, to) of @runs, a folio at a time. */
static void vfio_runs_unpin(const struct vfio_runs *runs, unsigned long from,
			    unsigned long to, bool dirty)
{
	unsigned long i, end;

	if (from >= to)
		return;
	for (i = vfio_runs_find(runs, from); from < to; i++, from = end) {
		end = min(runs->run[i + 1].pgoff, to);
		unpin_user_page_range_dirty_lock(pfn_to_page(runs->run[i].pfn +
							     from -
							     runs->run[i].pgoff),
						 end - from, dirty);
	}
}

/* Map pages [from, to) of @dma again, one iommu_map() per run. */
static int vfio_dma_remap(struct vfio_iommu *iommu, struct vfio_dma *dma,
			  unsigned long from, unsigned long to)
{
	const struct vfio_runs *runs = dma->runs;
	unsigned long i, end;
	int ret;

	if (from >= to)
		return 0;
	for (i = vfio_runs_find(runs, from); from < to; i++, from = end) {
		end = min(runs->run[i + 1].pgoff, to);
		ret = vfio_iommu_map(iommu->domain, vfio_dma_iova(dma, from),
				     PFN_PHYS(runs->run[i].pfn + from -
					      runs->run[i].pgoff),
				     (size_t)(end - from) << PAGE_SHIFT,
				     dma->prot | iommu->prot);
		if (ret)
			return ret;
	}
	return 0;
}

static void vfio_dma_free(struct vfio_dma *dma)
{
	vfio_runs_put(dma->runs);
	if (dma->mm)
		mmdrop(dma->mm);
	kfree(dma);
}

/* Release @npages of locked memory charged to @mm, if it is alive. */
static void vfio_dma_uncharge_mm(struct mm_struct *mm, unsigned long npages)
{
	if (!npages || !mmget_not_zero(mm))
		return;
	account_locked_vm(mm, npages, false);
	mmput(mm);
}

/*
 * Pages unpinned by one unmap, to be uncharged from the mms they were
 * charged to, once dma_lock is dropped: account_locked_vm() takes the
 * mm's mmap_lock.  Mappings of one unmap nearly always share one mm, so
 * only a change of mm pays an uncharge on the way.
 */
struct vfio_uncharge {
	struct mm_struct	*mm;	/* mmgrab()ed while set */
	unsigned long		npages;
};

static void vfio_uncharge_flush(struct vfio_uncharge *u)
{
	if (!u->mm)
		return;
	vfio_dma_uncharge_mm(u->mm, u->npages);
	mmdrop(u->mm);
	u->mm = NULL;
	u->npages = 0;
}

static void vfio_uncharge_add(struct vfio_uncharge *u, struct vfio_dma *dma,
			      unsigned long npages)
{
	if (u->mm != dma->mm) {
		vfio_uncharge_flush(u);
		mmgrab(dma->mm);
		u->mm = dma->mm;
	}
	u->npages += npages;
}

/* Smallest granule the domain maps, never below a CPU page. */
static u64 vfio_dma_align_mask(struct vfio_iommu *iommu)
{
	unsigned long bitmap = iommu->domain->pgsize_bitmap;

	return ((1ULL << __ffs(bitmap)) - 1) | ~PAGE_MASK;
}

/* Does [start, last] touch an IOVA range the IOMMU reserves? */
static bool vfio_dma_hits_resv(struct vfio_iommu *iommu, u64 start, u64 last)
{
	unsigned int i;

	lockdep_assert_held(&iommu->dma_lock);
	for (i = 0; i < iommu->nr_resv; i++)
		if (start <= iommu->resv[i].last &&
		    iommu->resv[i].start <= last)
			return true;
	return false;
}

/*
 * Replace the reserved ranges by @resv (@nr entries, ours from now on).
 * A set that gains a group may gain reserved ranges: -EINVAL, and
 * nothing changed, when an existing mapping lies in one.
 */
int vfio_dma_set_resv(struct vfio_iommu *iommu, struct vfio_resv *resv,
		      unsigned int nr)
{
	unsigned int i;

	mutex_lock(&iommu->dma_lock);
	for (i = 0; i < nr; i++) {
		if (vfio_dma_tree_iter_first(&iommu->dma_tree, resv[i].start,
					     resv[i].last)) {
			mutex_unlock(&iommu->dma_lock);
			kfree(resv);
			return -EINVAL;
		}
	}
	swap(iommu->resv, resv);
	iommu->nr_resv = nr;
	mutex_unlock(&iommu->dma_lock);
	kfree(resv);
	return 0;
}

/*
 * Building a mapping: pages are pinned a batch at a time and folded into
 * the open run; a run is closed and recorded as soon as the next page
 * does not continue it.  Nothing is mapped into the IOMMU yet: pinning
 * may wait for good on the user's pages, so it runs with no lock held,
 * and the runs are mapped afterwards under dma_lock (vfio_dma_map()).
 */
struct vfio_map_state {
	struct vfio_dma		*dma;
	struct vfio_open_run	run;		/* not yet recorded */
	unsigned long		recorded;	/* pages in closed runs */
};

static int vfio_map_close_run(struct vfio_map_state *st)
{
	struct vfio_dma *dma = st->dma;
	struct vfio_runs *runs = dma->runs, *bigger;

	if (!st->run.len)
		return 0;
	if (runs->nr == runs->cap) {
		bigger = vfio_runs_alloc(runs->cap * 2);
		if (!bigger)
			return -ENOMEM;
		bigger->nr = runs->nr;
		memcpy(bigger->run, runs->run, runs->nr * sizeof(runs->run[0]));
		kvfree(runs);
		dma->runs = runs = bigger;
	}
	runs->run[runs->nr].pgoff = st->run.pgoff;
	runs->run[runs->nr].pfn = st->run.pfn;
	runs->nr++;
	runs->run[runs->nr].pgoff = st->run.pgoff + st->run.len;
	st->recorded += st->run.len;
	st->run.len = 0;
	return 0;
}

/* Fold @n freshly pinned pages, the first being page @pgoff, in. */
static int vfio_map_add_pages(struct vfio_map_state *st, struct page **pages,
			      unsigned long pgoff, unsigned long n)
{
	unsigned long i, pfn;
	int ret;

	for (i = 0; i < n; i++) {
		pfn = page_to_pfn(pages[i]);
		if (vfio_run_extend(&st->run, pfn))
			continue;
		ret = vfio_map_close_run(st);
		if (ret) {
			unpin_user_pages(pages + i, n - i);
			return ret;
		}
		st->run.pgoff = pgoff + i;
		st->run.pfn = pfn;
		st->run.len = 1;
	}
	return 0;
}

/* Pin and record @npages pages at @vaddr into st->dma. */
static int vfio_map_pin(struct vfio_map_state *st, u64 vaddr,
			unsigned long npages)
{
	struct page *stack_batch[VFIO_PIN_STACK], **batch = stack_batch;
	unsigned int gup = FOLL_LONGTERM;
	unsigned long done = 0, max = VFIO_PIN_STACK;
	struct vfio_dma *dma = st->dma;
	int ret = 0, n;

	if (dma->prot & IOMMU_WRITE)
		gup |= FOLL_WRITE;
	if (npages > VFIO_PIN_STACK) {
		max = min(npages, VFIO_PIN_BATCH);
		batch = kvmalloc_array(max, sizeof(*batch), GFP_KERNEL);
		if (!batch)
			return -ENOMEM;
	}

	while (done < npages) {
		n = pin_user_pages_fast(vaddr + ((u64)done << PAGE_SHIFT),
					min(npages - done, max), gup, batch);
		if (n <= 0) {
			ret = n ?: -EFAULT;
			break;
		}
		ret = vfio_map_add_pages(st, batch, done, n);
		if (ret)
			break;
		done += n;
		if (done < npages && fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	if (!ret)
		ret = vfio_map_close_run(st);
	if (batch != stack_batch)
		kvfree(batch);
	if (!ret)
		return 0;

	/* Undo: closed runs are recorded, the open one pinned; no device saw them. */
	if (dma->runs->nr)
		vfio_runs_unpin(dma->runs, 0, st->recorded, false);
	if (st->run.len)
		unpin_user_page_range_dirty_lock(pfn_to_page(st->run.pfn),
						 st->run.len, false);
	return ret;
}

/*
 * Map every run of a new @dma, one iommu_map() each.  On failure nothing
 * of it stays mapped (iommu_map() undoes its own part), and the caller
 * unpins it dirty: the device could write to what was mapped meanwhile.
 */
static int vfio_dma_map_runs(struct vfio_iommu *iommu, struct vfio_dma *dma)
{
	const struct vfio_runs *runs = dma->runs;
	unsigned long i;
	int ret = 0;

	lockdep_assert_held(&iommu->dma_lock);
	for (i = 0; i < runs->nr; i++) {
		ret = vfio_iommu_map(iommu->domain,
				     vfio_dma_iova(dma, runs->run[i].pgoff),
				     PFN_PHYS(runs->run[i].pfn),
				     (size_t)(runs->run[i + 1].pgoff -
					      runs->run[i].pgoff) << PAGE_SHIFT,
				     dma->prot | iommu->prot);
		if (ret)
			break;
	}
	if (ret && i)
		iommu_unmap(iommu->domain, dma->start,
			    (size_t)runs->run[i].pgoff << PAGE_SHIFT);
	return ret;
}

/* Whether @dma may go into the tree now: 0 or why not. */
static int vfio_dma_can_insert(struct vfio_iommu *iommu, struct vfio_dma *dma)
{
	lockdep_assert_held(&iommu->dma_lock);
	if (vfio_dma_hits_resv(iommu, dma->start, dma->last))
		return -EINVAL;
	if (iommu->dma_count >= max_mappings)
		return -ENOSPC;
	if (vfio_dma_tree_iter_first(&iommu->dma_tree, dma->start, dma->last))
		return -EEXIST;
	return 0;
}

/*
 * The IOMMU_* prot of a MAP_DMA's @flags, which both ABIs define alike:
 * READ and WRITE, from the device's point of view.  Any other bit, or
 * neither, is -EINVAL.
 */
int vfio_dma_map_prot(u32 flags)
{
	int prot = 0;

	if (flags & ~(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE))
		return -EINVAL;
	if (flags & VFIO_DMA_MAP_FLAG_READ)
		prot |= IOMMU_READ;
	if (flags & VFIO_DMA_MAP_FLAG_WRITE)
		prot |= IOMMU_WRITE;
	return prot ?: -EINVAL;
}

/*
 * MAP_DMA of a range that could not be pinned (why: @err) when it is a
 * BAR mmap of one of our devices: map the BAR's frames as one run.
 * @dma is as vfio_dma_map() made it, with no run recorded.  0 when it
 * went in; @err when the range holds no BAR of ours (unmapped, or another
 * driver's VM_PFNMAP/VM_IO mmap: we could not tell when its frames stop
 * being its own, so we never map them); -EINVAL when only part of the
 * range is one BAR mmap (it runs past the mmap, and so past the BAR, into
 * RAM or another mmap): a mapping is either all pinned or all MMIO, so
 * that unmapping it knows what to undo; -EFAULT when the mmap does not
 * allow the device's access; -ENODEV when the device is being unbound.
 * Nothing stays mapped on failure.
 */
static int vfio_dma_map_mmio(struct vfio_iommu *iommu, struct vfio_dma *dma,
			     u64 vaddr, unsigned long npages, int err)
{
	struct vfio_runs *runs = dma->runs;
	struct vfio_device *device;
	unsigned long pfn;
	int ret, idx;

	ret = vfio_device_dma_get(vaddr, (u64)npages << PAGE_SHIFT, dma->prot,
				  &device, &pfn);
	if (ret)
		return ret == -ENOENT ? err : ret;

	runs->nr = 1;
	runs->run[0].pgoff = 0;
	runs->run[0].pfn = pfn;
	runs->run[1].pgoff = npages;
	dma->p2p = device;
	/* As the DMA API maps a resource: device memory, never cached. */
	dma->prot |= IOMMU_MMIO;

	/* Inside the section, so that its revoke sweeps what goes in. */
	if (vfio_device_dma_enter(device, &idx)) {
		mutex_lock(&iommu->dma_lock);
		ret = vfio_dma_can_insert(iommu, dma);
		if (!ret)
			ret = vfio_dma_map_runs(iommu, dma);
		if (!ret) {
			vfio_dma_tree_insert(dma, &iommu->dma_tree);
			iommu->dma_count++;
		}
		mutex_unlock(&iommu->dma_lock);
	} else {
		ret = -ENODEV;
	}
	vfio_device_dma_exit(device, idx);
	vfio_device_dma_put(device);
	return ret;
}

int vfio_dma_map(struct vfio_iommu *iommu, u64 vaddr, u64 iova, u64 size,
		 int prot)
{
	struct iommu_domain_geometry *geo = &iommu->domain->geometry;
	u64 mask = vfio_dma_align_mask(iommu);
	struct vfio_map_state st = { };
	unsigned long npages;
	struct vfio_dma *dma;
	bool dirty = false;
	int ret;

	if (vfio_check_range(iova, size, mask) ||
	    vfio_check_range(vaddr, size, mask))
		return -EINVAL;
	if (!vfio_range_within(iova, size, geo->aperture_start,
			       geo->aperture_end))
		return -EINVAL;
	npages = size >> PAGE_SHIFT;

	dma = kzalloc(sizeof(*dma), GFP_KERNEL_ACCOUNT);
	if (!dma)
		return -ENOMEM;
	dma->runs = vfio_runs_alloc(min(npages, 64UL));
	if (!dma->runs) {
		kfree(dma);
		return -ENOMEM;
	}
	dma->start = iova;
	dma->last = iova + size - 1;
	dma->prot = prot;
	dma->mm = current->mm;
	mmgrab(dma->mm);
	st.dma = dma;

	/* What would fail anyway fails before anything is pinned. */
	mutex_lock(&iommu->dma_lock);
	ret = vfio_dma_can_insert(iommu, dma);
	mutex_unlock(&iommu->dma_lock);
	if (ret)
		goto err_free;
	/*
	 * Fails past RLIMIT_MEMLOCK unless CAP_IPC_LOCK, which a large BAR
	 * may be: it is looked for then too.
	 */
	ret = account_locked_vm(current->mm, npages, true);
	if (ret)
		goto err_mmio;
	/*
	 * With no lock held: faulting the user's pages in may wait for
	 * good (a FUSE file whose server never answers, userfaultfd), and
	 * attach, detach and the reserved ranges take dma_lock under
	 * vfio.lock.  Meanwhile other maps and unmaps go on, so the checks
	 * are made again before the mapping goes in.
	 */
	ret = vfio_map_pin(&st, vaddr, npages);
	if (ret) {
		account_locked_vm(current->mm, npages, false);
		goto err_mmio;
	}

	mutex_lock(&iommu->dma_lock);
	ret = vfio_dma_can_insert(iommu, dma);
	if (!ret) {
		ret = vfio_dma_map_runs(iommu, dma);
		dirty = ret && (dma->prot & IOMMU_WRITE);
	}
	if (ret) {
		mutex_unlock(&iommu->dma_lock);
		vfio_runs_unpin(dma->runs, 0, npages, dirty);
		goto err_uncharge;
	}
	vfio_dma_tree_insert(dma, &iommu->dma_tree);
	iommu->dma_count++;
	mutex_unlock(&iommu->dma_lock);
	return 0;

err_mmio:
	/* Nothing of the range is pinned now, nor charged. */
	dma->runs->nr = 0;
	ret = vfio_dma_map_mmio(iommu, dma, vaddr, npages, ret);
	if (!ret)
		return 0;
	goto err_free;
err_uncharge:
	account_locked_vm(current->mm, npages, false);
err_free:
	vfio_dma_free(dma);
	return ret;
}

/* Plan taking IOVAs [start, last] (clipped to @dma) out of @dma. */
static void vfio_dma_plan_cut(struct vfio_dma *dma, u64 start, u64 last,
			      struct vfio_cut *cut)
{
	const struct vfio_runs *runs = dma->runs;

	vfio_cut_plan(runs->run, runs->nr, dma->first,
		      vfio_dma_pgoff(dma, dma->last) + 1,
		      vfio_dma_pgoff(dma, max(start, dma->start)),
		      vfio_dma_pgoff(dma, min(last, dma->last)) + 1, cut);
}

/* Map back what a window took out around the kept parts of @dma. */
static void vfio_dma_restore(struct vfio_iommu *iommu, struct vfio_dma *dma,
			     const struct vfio_cut *cut)
{
	int ret;

	ret = vfio_dma_remap(iommu, dma, cut->ufrom, cut->from);
	if (!ret)
		ret = vfio_dma_remap(iommu, dma, cut->to, cut->uto);
	if (ret)
		pr_warn_ratelimited("remapping IOVA %#llx..%#llx after a split failed (%d)\n",
				    vfio_dma_iova(dma, cut->ufrom),
				    vfio_dma_iova(dma, cut->uto) - 1, ret);
}

/*
 * Shrink or split @dma after pages [cut->from, cut->to) are gone.  @spare
 * is used for the upper half of a split.  Returns true when it was.
 */
static bool vfio_dma_trim(struct vfio_iommu *iommu, struct vfio_dma *dma,
			  const struct vfio_cut *cut, struct vfio_dma *spare)
{
	bool keep_lo = cut->from > dma->first;
	bool keep_hi = cut->to <= vfio_dma_pgoff(dma, dma->last);

	vfio_dma_tree_remove(dma, &iommu->dma_tree);
	if (!keep_lo && !keep_hi) {
		vfio_dma_free(dma);
		iommu->dma_count--;
		return false;
	}
	if (keep_lo && keep_hi) {
		*spare = *dma;
		refcount_inc(&dma->runs->ref);
		mmgrab(spare->mm);
		spare->start = vfio_dma_iova(dma, cut->to);
		spare->first = cut->to;
		vfio_dma_tree_insert(spare, &iommu->dma_tree);
		iommu->dma_count++;
		dma->last = vfio_dma_iova(dma, cut->from) - 1;
	} else if (keep_hi) {
		dma->start = vfio_dma_iova(dma, cut->to);
		dma->first = cut->to;
	} else {
		dma->last = vfio_dma_iova(dma, cut->from) - 1;
	}
	vfio_dma_tree_insert(dma, &iommu->dma_tree);
	return keep_lo && keep_hi;
}

/*
 * Unmap [iova, iova + size) and say how many bytes were mapped there in
 * @unmapped.  With @whole, a mapping that reaches out of the range is
 * never split: -EINVAL and nothing unmapped, as type1v2 does.
 */
int vfio_dma_unmap(struct vfio_iommu *iommu, u64 iova, u64 size,
		   bool whole, u64 *unmapped)
{
	struct iommu_iotlb_gather gather;
	struct vfio_dma *dma, *next, *spare = NULL;
	struct vfio_uncharge u = { };
	unsigned long unpinned = 0;
	u64 last = iova + size - 1;
	struct vfio_cut cut;
	LIST_HEAD(work);
	int ret = 0;

	if (vfio_check_range(iova, size, vfio_dma_align_mask(iommu)))
		return -EINVAL;

	*unmapped = 0;
	mutex_lock(&iommu->dma_lock);
	for (dma = vfio_dma_tree_iter_first(&iommu->dma_tree, iova, last);
	     dma; dma = vfio_dma_tree_iter_next(dma, iova, last)) {
		if (whole && (dma->start < iova || dma->last > last)) {
			ret = -EINVAL;
			goto out;
		}
		/* Only a mapping containing the whole range is split. */
		if (dma->start < iova && dma->last > last) {
			if (iommu->dma_count >= max_mappings) {
				ret = -ENOSPC;
				goto out;
			}
			spare = kzalloc(sizeof(*spare), GFP_KERNEL_ACCOUNT);
			if (!spare) {
				ret = -ENOMEM;
				goto out;
			}
		}
		list_add_tail(&dma->unmap_next, &work);
	}

	iommu_iotlb_gather_init(&gather);
	list_for_each_entry(dma, &work, unmap_next) {
		vfio_dma_plan_cut(dma, iova, last, &cut);
		iommu_unmap_fast(iommu->domain, vfio_dma_iova(dma, cut.ufrom),
				 (size_t)(cut.uto - cut.ufrom) << PAGE_SHIFT,
				 &gather);
	}
	/* No page may be unpinned while a device can still reach it. */
	iommu_iotlb_sync(iommu->domain, &gather);

	list_for_each_entry_safe(dma, next, &work, unmap_next) {
		vfio_dma_plan_cut(dma, iova, last, &cut);
		vfio_dma_restore(iommu, dma, &cut);
		if (!dma->p2p) {
			vfio_runs_unpin(dma->runs, cut.from, cut.to,
					dma->prot & IOMMU_WRITE);
			vfio_uncharge_add(&u, dma, cut.to - cut.from);
		}
		unpinned += cut.to - cut.from;
		if (vfio_dma_trim(iommu, dma, &cut, spare))
			spare = NULL;
	}
	*unmapped = (u64)unpinned << PAGE_SHIFT;
out:
	mutex_unlock(&iommu->dma_lock);
	vfio_uncharge_flush(&u);
	kfree(spare);
	return ret;
}

/* Unmap everything; returns the bytes that were mapped. */
u64 vfio_dma_unmap_all(struct vfio_iommu *iommu)
{
	struct iommu_iotlb_gather gather;
	struct vfio_uncharge u = { };
	struct rb_node *node;
	struct vfio_dma *dma;
	unsigned long unpinned = 0, first, end;

	mutex_lock(&iommu->dma_lock);
	iommu_iotlb_gather_init(&gather);
	for (node = rb_first_cached(&iommu->dma_tree); node;
	     node = rb_next(node)) {
		dma = rb_entry(node, struct vfio_dma, rb);
		iommu_unmap_fast(iommu->domain, dma->start,
				 dma->last - dma->start + 1, &gather);
	}
	iommu_iotlb_sync(iommu->domain, &gather);

	while ((node = rb_first_cached(&iommu->dma_tree))) {
		dma = rb_entry(node, struct vfio_dma, rb);
		first = dma->first;
		end = vfio_dma_pgoff(dma, dma->last) + 1;
		if (!dma->p2p) {
			vfio_runs_unpin(dma->runs, first, end,
					dma->prot & IOMMU_WRITE);
			vfio_uncharge_add(&u, dma, end - first);
		}
		unpinned += end - first;
		vfio_dma_tree_remove(dma, &iommu->dma_tree);
		vfio_dma_free(dma);
		cond_resched();
	}
	iommu->dma_count = 0;
	mutex_unlock(&iommu->dma_lock);
	vfio_uncharge_flush(&u);
	return (u64)unpinned << PAGE_SHIFT;
}

/*
 * Take every mapping of @device's BARs out of @iommu (open): the device
 * is being unbound.  Nothing was pinned for them; the IOTLB is synced
 * before its bus driver lets go of the BARs.
 */
void vfio_dma_drop_device(struct vfio_iommu *iommu,
			  struct vfio_device *device)
{
	struct iommu_iotlb_gather gather;
	struct rb_node *node, *next;
	struct vfio_dma *dma;
	unsigned long n = 0;

	mutex_lock(&iommu->dma_lock);
	iommu_iotlb_gather_init(&gather);
	for (node = rb_first_cached(&iommu->dma_tree); node;
	     node = rb_next(node)) {
		dma = rb_entry(node, struct vfio_dma, rb);
		if (dma->p2p != device)
			continue;
		iommu_unmap_fast(iommu->domain, dma->start,
				 dma->last - dma->start + 1, &gather);
		n++;
	}
	iommu_iotlb_sync(iommu->domain, &gather);

	for (node = rb_first_cached(&iommu->dma_tree); n && node;
	     node = next) {
		next = rb_next(node);
		dma = rb_entry(node, struct vfio_dma, rb);
		if (dma->p2p != device)
			continue;
		vfio_dma_tree_remove(dma, &iommu->dma_tree);
		vfio_dma_free(dma);
		iommu->dma_count--;
		n--;
	}
	mutex_unlock(&iommu->dma_lock);
}

struct vfio_dma_remains *vfio_dma_remains_alloc(void)
{
	struct vfio_dma_remains *rem;

	rem = kzalloc(sizeof(*rem), GFP_KERNEL_ACCOUNT);
	if (rem)
		INIT_LIST_HEAD(&rem->next);
	return rem;
}

/*
 * Move @iommu's mappings, domain and owner into @rem, leaving the object
 * closed and empty; its groups are detached already.  Unpinning half a
 * gigabyte takes long enough that it is not done here, under vfio.lock,
 * but by vfio_dma_reap() once the lock is dropped.
 */
void vfio_dma_bury(struct vfio_iommu *iommu, struct vfio_dma_remains *rem)
{
	mutex_lock(&iommu->dma_lock);
	rem->tree = iommu->dma_tree;
	iommu->dma_tree = RB_ROOT_CACHED;
	iommu->dma_count = 0;
	mutex_unlock(&iommu->dma_lock);
	rem->domain = iommu->domain;
	rem->mm = iommu->mm;
	iommu->domain = NULL;
	iommu->mm = NULL;
}

/*
 * Free what vfio_dma_bury() kept.  The domain goes first, whole: with no
 * group attached there is no IOTLB entry of it to flush page by page, and
 * once it is gone no translation to the pages is left anywhere.
 */
void vfio_dma_reap(struct vfio_dma_remains *rem)
{
	struct vfio_uncharge u = { };
	unsigned long first, end;
	struct rb_node *node;
	struct vfio_dma *dma;

	iommu_domain_free(rem->domain);
	while ((node = rb_first_cached(&rem->tree))) {
		dma = rb_entry(node, struct vfio_dma, rb);
		first = dma->first;
		end = vfio_dma_pgoff(dma, dma->last) + 1;
		if (!dma->p2p) {
			vfio_runs_unpin(dma->runs, first, end,
					dma->prot & IOMMU_WRITE);
			vfio_uncharge_add(&u, dma, end - first);
		}
		vfio_dma_tree_remove(dma, &rem->tree);
		vfio_dma_free(dma);
		cond_resched();
	}
	vfio_uncharge_flush(&u);
	mmdrop(rem->mm);
	kfree(rem);
}

/* How many more mappings fit under max_mappings. */
u32 vfio_dma_avail(struct vfio_iommu *iommu)
{
	u32 avail;

	mutex_lock(&iommu->dma_lock);
	avail = iommu->dma_count < max_mappings ?
		max_mappings - iommu->dma_count : 0;
	mutex_unlock(&iommu->dma_lock);
	return avail;
}

/* The IOVA ranges a mapping may use: see vfio_iova_ranges(). */
unsigned int vfio_dma_iova_ranges(struct vfio_iommu *iommu,
				  struct vfio_resv *out, unsigned int max)
{
	struct iommu_domain_geometry *geo = &iommu->domain->geometry;
	unsigned int n;

	mutex_lock(&iommu->dma_lock);
	n = vfio_iova_ranges(geo->aperture_start, geo->aperture_end,
			     iommu->resv, iommu->nr_resv, out, max);
	mutex_unlock(&iommu->dma_lock);
	return n;
}
