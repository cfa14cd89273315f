// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms core: the DMA mappings of one IOMMU object.
 *
 * Each MAP_DMA becomes one struct vfio_dma in an interval tree keyed by
 * IOVA, so lookup, overlap checks and splits cost O(log n).  Its pages
 * are pinned in large batches into one array, and every physically
 * contiguous run of them is handed to the IOMMU in a single iommu_map()
 * call, which picks the largest page sizes the domain supports (2 MiB
 * and 1 GiB for huge pages).  Unmapping gathers the IOTLB flushes and
 * syncs once before any page is unpinned.
 *
 * A partial unmap splits a mapping: both halves keep sharing the page
 * array.  The IOMMU may have used one large page across the cut, so the
 * physically contiguous run around each cut is unmapped whole and the
 * part that stays is mapped again.  While that happens a device's DMA to
 * the surviving part of that run may fault; the kernel's own type1 driver
 * refuses such unmaps instead.
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

#include "compat.h"
#include "vfio_private.h"
#include "vfio_range.h"

static unsigned int max_mappings = 1U << 18;
module_param(max_mappings, uint, 0644);
MODULE_PARM_DESC(max_mappings,
		 "Most DMA mappings one IOMMU object holds (default: 262144)");

/* Pages pinned per pin_user_pages_fast() call, between resched points. */
#define VFIO_PIN_BATCH	(1U << 16)

/* The pinned pages of one MAP_DMA, shared by the pieces it splits into. */
struct vfio_pages {
	refcount_t	ref;
	struct page	*page[];
};

struct vfio_dma {
	struct rb_node		rb;
	u64			start;		/* first IOVA */
	u64			last;		/* last IOVA (inclusive) */
	u64			subtree_last;	/* interval tree */
	struct vfio_pages	*pages;
	unsigned long		first;		/* pages->page[] of @start */
	int			prot;
	struct list_head	unmap_next;	/* on one unmap's work list */
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

static inline struct page **vfio_dma_page(struct vfio_dma *dma, u64 iova)
{
	return &dma->pages->page[dma->first +
				 ((iova - dma->start) >> PAGE_SHIFT)];
}

static void vfio_pages_put(struct vfio_pages *pages)
{
	if (refcount_dec_and_test(&pages->ref))
		kvfree(pages);
}

/* Charge or release @npages of locked memory to the owner, if alive. */
static void vfio_dma_uncharge(struct vfio_iommu *iommu, unsigned long npages)
{
	if (!npages || !mmget_not_zero(iommu->mm))
		return;
	account_locked_vm(iommu->mm, npages, false);
	mmput(iommu->mm);
}

/* Smallest granule the domain maps, never below a CPU page. */
static u64 vfio_dma_align_mask(struct vfio_iommu *iommu)
{
	unsigned long bitmap = iommu->domain->pgsize_bitmap;

	return ((1ULL << __ffs(bitmap)) - 1) | ~PAGE_MASK;
}

static int vfio_pin_pages(u64 vaddr, unsigned long npages, int prot,
			  struct page **pages)
{
	unsigned int gup = FOLL_LONGTERM;
	unsigned long done = 0;
	int ret;

	if (prot & IOMMU_WRITE)
		gup |= FOLL_WRITE;

	while (done < npages) {
		ret = pin_user_pages_fast(vaddr + (done << PAGE_SHIFT),
					  min_t(unsigned long, npages - done,
						VFIO_PIN_BATCH),
					  gup, pages + done);
		if (ret <= 0) {
			ret = ret ?: -EFAULT;
			goto err;
		}
		done += ret;
		if (done < npages && fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err;
		}
		cond_resched();
	}
	return 0;

err:
	unpin_user_pages(pages, done);
	return ret;
}

/* Length in pages of the physically contiguous run starting at @pages. */
static unsigned long vfio_run_len(struct page **pages, unsigned long max)
{
	unsigned long pfn = page_to_pfn(pages[0]), n;

	for (n = 1; n < max; n++)
		if (page_to_pfn(pages[n]) != pfn + n)
			break;
	return n;
}

/* Map @npages pages at @iova, one iommu_map() per contiguous run. */
static int vfio_iommu_map_pages(struct vfio_iommu *iommu, u64 iova,
				struct page **pages, unsigned long npages,
				int prot)
{
	unsigned long done = 0, n;
	int ret;

	while (done < npages) {
		n = vfio_run_len(pages + done, npages - done);
		ret = vfio_iommu_map(iommu->domain, iova + (done << PAGE_SHIFT),
				     page_to_phys(pages[done]),
				     n << PAGE_SHIFT, prot | iommu->prot);
		if (ret) {
			if (done)
				iommu_unmap(iommu->domain, iova,
					    done << PAGE_SHIFT);
			return ret;
		}
		done += n;
	}
	return 0;
}

int vfio_dma_map(struct vfio_iommu *iommu, u64 vaddr, u64 iova, u64 size,
		 int prot)
{
	struct iommu_domain_geometry *geo = &iommu->domain->geometry;
	u64 mask = vfio_dma_align_mask(iommu);
	unsigned long npages;
	struct vfio_dma *dma;
	size_t bytes;
	int ret;

	if (vfio_check_range(iova, size, mask) ||
	    vfio_check_range(vaddr, size, mask))
		return -EINVAL;
	if (!vfio_range_within(iova, size, geo->aperture_start,
			       geo->aperture_end))
		return -EINVAL;

	npages = size >> PAGE_SHIFT;
	bytes = struct_size((struct vfio_pages *)NULL, page, npages);
	if (bytes > INT_MAX)	/* kvmalloc()'s limit: split it in user space */
		return -ENOMEM;

	dma = kzalloc(sizeof(*dma), GFP_KERNEL_ACCOUNT);
	if (!dma)
		return -ENOMEM;
	dma->pages = kvmalloc(bytes, GFP_KERNEL_ACCOUNT);
	if (!dma->pages) {
		kfree(dma);
		return -ENOMEM;
	}
	refcount_set(&dma->pages->ref, 1);
	dma->start = iova;
	dma->last = iova + size - 1;
	dma->prot = prot;

	mutex_lock(&iommu->dma_lock);
	if (iommu->dma_count >= max_mappings) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	if (vfio_dma_tree_iter_first(&iommu->dma_tree, dma->start,
				     dma->last)) {
		ret = -EBUSY;
		goto err_unlock;
	}
	/* Fails past RLIMIT_MEMLOCK unless CAP_IPC_LOCK. */
	ret = account_locked_vm(current->mm, npages, true);
	if (ret)
		goto err_unlock;
	ret = vfio_pin_pages(vaddr, npages, prot, dma->pages->page);
	if (ret)
		goto err_uncharge;
	ret = vfio_iommu_map_pages(iommu, iova, dma->pages->page, npages,
				   prot);
	if (ret)
		goto err_unpin;

	vfio_dma_tree_insert(dma, &iommu->dma_tree);
	iommu->dma_count++;
	mutex_unlock(&iommu->dma_lock);
	return 0;

err_unpin:
	unpin_user_pages(dma->pages->page, npages);
err_uncharge:
	account_locked_vm(current->mm, npages, false);
err_unlock:
	mutex_unlock(&iommu->dma_lock);
	vfio_pages_put(dma->pages);
	kfree(dma);
	return ret;
}

/*
 * The IOVA range around a cut at @cut (the first IOVA past the cut) that
 * the IOMMU may have covered with one large page: the physically
 * contiguous run of @dma through the cut.  Empty when the pages on both
 * sides are not contiguous, or the cut is at an end of @dma.
 */
static void vfio_dma_cut_window(struct vfio_dma *dma, u64 cut,
				u64 *wstart, u64 *wend)
{
	struct page **lo, **hi, **base = vfio_dma_page(dma, dma->start);
	unsigned long pfn;

	*wstart = *wend = cut;
	if (cut <= dma->start || cut > dma->last)
		return;

	hi = vfio_dma_page(dma, cut);
	lo = hi - 1;
	pfn = page_to_pfn(*hi);
	if (page_to_pfn(*lo) != pfn - 1)
		return;

	while (lo > base && page_to_pfn(lo[-1]) == page_to_pfn(*lo) - 1)
		lo--;
	*wstart = dma->start + ((u64)(lo - base) << PAGE_SHIFT);
	*wend = cut + ((u64)vfio_run_len(hi, ((dma->last - cut) >>
					      PAGE_SHIFT) + 1) << PAGE_SHIFT);
}

/*
 * Work out one mapping's part of an unmap of [start, last]: what to take
 * out of the IOMMU (whole windows around cuts) and what to map back.
 */
struct vfio_cut {
	u64 from, to;		/* removed: [from, to) */
	u64 ustart, uend;	/* unmapped from the IOMMU: [ustart, uend) */
};

static void vfio_dma_plan_cut(struct vfio_dma *dma, u64 start, u64 last,
			      struct vfio_cut *cut)
{
	u64 ws, we;

	cut->from = max(start, dma->start);
	cut->to = min(last, dma->last) + 1;
	cut->ustart = cut->from;
	cut->uend = cut->to;

	vfio_dma_cut_window(dma, cut->from, &ws, &we);
	if (ws < cut->ustart)
		cut->ustart = ws;
	vfio_dma_cut_window(dma, cut->to, &ws, &we);
	if (we > cut->uend)
		cut->uend = we;
}

/* Map back what a window took out around the kept parts of @dma. */
static void vfio_dma_restore(struct vfio_iommu *iommu, struct vfio_dma *dma,
			     const struct vfio_cut *cut)
{
	int ret = 0;

	if (cut->ustart < cut->from)
		ret = vfio_iommu_map_pages(iommu, cut->ustart,
					   vfio_dma_page(dma, cut->ustart),
					   (cut->from - cut->ustart) >>
					   PAGE_SHIFT, dma->prot);
	if (!ret && cut->uend > cut->to)
		ret = vfio_iommu_map_pages(iommu, cut->to,
					   vfio_dma_page(dma, cut->to),
					   (cut->uend - cut->to) >> PAGE_SHIFT,
					   dma->prot);
	if (ret)
		pr_warn_ratelimited("remapping IOVA %#llx..%#llx after a split failed (%d)\n",
				    cut->ustart, cut->uend - 1, ret);
}

/*
 * Shrink or split @dma after [cut->from, cut->to) is gone.  @spare is
 * used for the upper half of a split.  Returns true when @spare was used.
 */
static bool vfio_dma_trim(struct vfio_iommu *iommu, struct vfio_dma *dma,
			  const struct vfio_cut *cut, struct vfio_dma *spare)
{
	bool keep_lo = cut->from > dma->start;
	bool keep_hi = cut->to <= dma->last;

	vfio_dma_tree_remove(dma, &iommu->dma_tree);
	if (!keep_lo && !keep_hi) {
		vfio_pages_put(dma->pages);
		kfree(dma);
		iommu->dma_count--;
		return false;
	}
	if (keep_lo && keep_hi) {
		*spare = *dma;
		refcount_inc(&dma->pages->ref);
		spare->first += (cut->to - dma->start) >> PAGE_SHIFT;
		spare->start = cut->to;
		vfio_dma_tree_insert(spare, &iommu->dma_tree);
		iommu->dma_count++;
		dma->last = cut->from - 1;
	} else if (keep_hi) {
		dma->first += (cut->to - dma->start) >> PAGE_SHIFT;
		dma->start = cut->to;
	} else {
		dma->last = cut->from - 1;
	}
	vfio_dma_tree_insert(dma, &iommu->dma_tree);
	return keep_lo && keep_hi;
}

int vfio_dma_unmap(struct vfio_iommu *iommu, u64 iova, u64 size)
{
	struct iommu_iotlb_gather gather;
	struct vfio_dma *dma, *next, *spare;
	unsigned long unpinned = 0;
	u64 last = iova + size - 1;
	struct vfio_cut cut;
	LIST_HEAD(work);
	int ret = 0;

	if (vfio_check_range(iova, size, vfio_dma_align_mask(iommu)))
		return -EINVAL;

	/* At most one mapping can be split by one unmap: have room for it. */
	spare = kzalloc(sizeof(*spare), GFP_KERNEL_ACCOUNT);
	if (!spare)
		return -ENOMEM;

	mutex_lock(&iommu->dma_lock);
	for (dma = vfio_dma_tree_iter_first(&iommu->dma_tree, iova, last);
	     dma; dma = vfio_dma_tree_iter_next(dma, iova, last)) {
		if (dma->start < iova && dma->last > last &&
		    iommu->dma_count >= max_mappings) {
			ret = -ENOSPC;
			goto out;
		}
		list_add_tail(&dma->unmap_next, &work);
	}

	iommu_iotlb_gather_init(&gather);
	list_for_each_entry(dma, &work, unmap_next) {
		vfio_dma_plan_cut(dma, iova, last, &cut);
		iommu_unmap_fast(iommu->domain, cut.ustart,
				 cut.uend - cut.ustart, &gather);
	}
	/* No page may be unpinned while a device can still reach it. */
	iommu_iotlb_sync(iommu->domain, &gather);

	list_for_each_entry_safe(dma, next, &work, unmap_next) {
		unsigned long n;

		vfio_dma_plan_cut(dma, iova, last, &cut);
		vfio_dma_restore(iommu, dma, &cut);
		n = (cut.to - cut.from) >> PAGE_SHIFT;
		unpin_user_pages_dirty_lock(vfio_dma_page(dma, cut.from), n,
					    dma->prot & IOMMU_WRITE);
		unpinned += n;
		if (vfio_dma_trim(iommu, dma, &cut, spare))
			spare = NULL;
	}
out:
	mutex_unlock(&iommu->dma_lock);
	vfio_dma_uncharge(iommu, unpinned);
	kfree(spare);
	return ret;
}

void vfio_dma_unmap_all(struct vfio_iommu *iommu)
{
	struct iommu_iotlb_gather gather;
	struct rb_node *node;
	struct vfio_dma *dma;
	unsigned long unpinned = 0, n;

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
		n = (dma->last - dma->start + 1) >> PAGE_SHIFT;
		unpin_user_pages_dirty_lock(vfio_dma_page(dma, dma->start), n,
					    dma->prot & IOMMU_WRITE);
		unpinned += n;
		vfio_dma_tree_remove(dma, &iommu->dma_tree);
		vfio_pages_put(dma->pages);
		kfree(dma);
		cond_resched();
	}
	iommu->dma_count = 0;
	mutex_unlock(&iommu->dma_lock);
	vfio_dma_uncharge(iommu, unpinned);
}
