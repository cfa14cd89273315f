/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: the DMA engine's decisions, apart from the pinning and the
 * IOMMU calls that carry them out (vfio_dma.c).  Pure functions on page
 * offsets and frame numbers, so that the host unit tests compile them as
 * they are.
 *
 * A mapping's pages are recorded as physically contiguous runs: run @i
 * covers pages run[i].pgoff .. run[i + 1].pgoff - 1 of the MAP_DMA that
 * made it (run[nr].pgoff is its page count), starting at frame
 * run[i].pfn.  Each run went to the IOMMU in one call, which may have
 * used large pages anywhere inside it.
 */
#ifndef VFIO_DKMS_DMA_PLAN_H
#define VFIO_DKMS_DMA_PLAN_H

#ifdef __KERNEL__
#include <linux/minmax.h>
#include <linux/types.h>
#endif

struct vfio_run {
	unsigned long	pgoff;
	unsigned long	pfn;
};

/*
 * The run being built while pages are pinned: @len pages from page
 * @pgoff at frame @pfn.  vfio_run_extend() says whether frame @pfn,
 * pinned for the page after it, continues it (and then takes it in).
 */
struct vfio_open_run {
	unsigned long	pgoff;
	unsigned long	pfn;
	unsigned long	len;
};

static inline bool vfio_run_extend(struct vfio_open_run *r, unsigned long pfn)
{
	if (!r->len || pfn != r->pfn + r->len)
		return false;
	r->len++;
	return true;
}

/* The run of the @nr in @run holding page @pgoff: O(log nr); nr > 0. */
static inline unsigned long vfio_run_find(const struct vfio_run *run,
					  unsigned long nr, unsigned long pgoff)
{
	unsigned long lo = 0, hi = nr - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (run[mid].pgoff <= pgoff)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * One mapping's part of an unmap: the pages removed, and the wider range
 * taken out of the IOMMU.  A cut inside a run takes out the whole run,
 * since the IOMMU may hold it in pages larger than the cut, and the part
 * that stays is mapped back.
 */
struct vfio_cut {
	unsigned long from, to;		/* removed pages [from, to) */
	unsigned long ufrom, uto;	/* unmapped from the IOMMU */
};

/*
 * Plan taking pages [from, to) out of a mapping that holds pages
 * [first, end) of the runs @run (@nr of them); [from, to) lies within
 * [first, end).  The IOMMU range never reaches outside [first, end):
 * the pages beyond belong to other pieces of a split mapping, which
 * keep their own IOMMU entries.
 */
static inline void vfio_cut_plan(const struct vfio_run *run, unsigned long nr,
				 unsigned long first, unsigned long end,
				 unsigned long from, unsigned long to,
				 struct vfio_cut *cut)
{
	unsigned long i;

	cut->from = from;
	cut->to = to;
	cut->ufrom = from;
	cut->uto = to;
	if (from > first) {
		i = vfio_run_find(run, nr, from);
		if (run[i].pgoff < from)
			cut->ufrom = max(run[i].pgoff, first);
	}
	if (to < end) {
		i = vfio_run_find(run, nr, to);
		if (run[i].pgoff < to)
			cut->uto = min(run[i + 1].pgoff, end);
	}
}

#endif /* VFIO_DKMS_DMA_PLAN_H */
