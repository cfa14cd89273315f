/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: argument checks shared by the ioctls.  Pure functions on
 * plain integers, so that the host unit tests compile them as they are.
 */
#ifndef VFIO_DKMS_RANGE_H
#define VFIO_DKMS_RANGE_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#endif

/*
 * A user structure carries its own size: shorter than the fields we need
 * is an error, longer is a newer caller and fine.
 */
static inline int vfio_check_argsz(u32 argsz, size_t minsz)
{
	return argsz < minsz ? -EINVAL : 0;
}

/*
 * [start, start + size) must be non-empty, aligned to @align_mask + 1 at
 * both ends and must not wrap around the top of the address space.
 */
static inline int vfio_check_range(u64 start, u64 size, u64 align_mask)
{
	if (!size || (start & align_mask) || (size & align_mask))
		return -EINVAL;
	if (start + size - 1 < start)
		return -EINVAL;
	return 0;
}

/* Does [start, start + size) lie within [lo, hi] (inclusive)? */
static inline bool vfio_range_within(u64 start, u64 size, u64 lo, u64 hi)
{
	return start >= lo && start + size - 1 <= hi;
}

/* Do [a, a + alen) and [b, b + blen) share a byte?  Lengths non-zero. */
static inline bool vfio_ranges_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a <= b + blen - 1 && b <= a + alen - 1;
}

/* struct vfio_resv - IOVAs [start, last] an IOMMU keeps for itself */
struct vfio_resv {
	u64	start;
	u64	last;
};

/*
 * The usable IOVA ranges: [lo, hi] less the @nr reserved ranges of @resv,
 * which may overlap each other and come in any order.  The first @max
 * ranges go to @out, in ascending order; returns how many there are in
 * all, so that a caller can size its buffer with a first call.
 */
static inline unsigned int vfio_iova_ranges(u64 lo, u64 hi,
					    const struct vfio_resv *resv,
					    unsigned int nr,
					    struct vfio_resv *out,
					    unsigned int max)
{
	unsigned int n = 0, i;
	u64 cur = lo;

	if (lo > hi)
		return 0;
	for (;;) {
		const struct vfio_resv *next = NULL;

		/* The lowest reserved range that is not wholly below @cur. */
		for (i = 0; i < nr; i++) {
			if (resv[i].last < cur || resv[i].start > hi)
				continue;
			if (!next || resv[i].start < next->start)
				next = &resv[i];
		}
		if (!next || next->start > cur) {
			if (n < max) {
				out[n].start = cur;
				out[n].last = next ? next->start - 1 : hi;
			}
			n++;
		}
		if (!next || next->last >= hi)
			return n;
		cur = next->last + 1;
	}
}

#endif /* VFIO_DKMS_RANGE_H */
