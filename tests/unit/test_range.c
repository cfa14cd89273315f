// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of the core's argument checks (src/vfio_range.h),
 * compiled exactly as the kernel compiles them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint32_t u32;
typedef uint64_t u64;

#include "vfio_range.h"

struct tally {
	int passed, failed;
};

static void check(struct tally *t, bool cond, const char *name)
{
	if (cond) {
		printf("ok - unit/range/%s\n", name);
		t->passed++;
	} else {
		printf("not ok - unit/range/%s\n", name);
		t->failed++;
	}
}

#define PG	0xfffULL

/* Do the @n ranges of @out match the @want ones (pairs start, last)? */
static bool ranges_are(const struct vfio_resv *out, unsigned int n,
		       const u64 *want, unsigned int nwant)
{
	unsigned int i;

	if (n != nwant)
		return false;
	for (i = 0; i < n; i++)
		if (out[i].start != want[2 * i] || out[i].last != want[2 * i + 1])
			return false;
	return true;
}

static void test_iova_ranges(struct tally *t)
{
	/* x86: the interrupt window inside a 48-bit aperture. */
	const struct vfio_resv msi = { 0xfee00000, 0xfeefffff };
	const u64 msi_want[] = { 0, 0xfedfffff, 0xfef00000, (1ULL << 48) - 1 };
	/* Unsorted, overlapping, one touching each end. */
	const struct vfio_resv mix[] = {
		{ 0x5000, 0x5fff }, { 0, 0xfff }, { 0x5800, 0x6fff },
		{ 0x9000, 0xffff }, { 0x3000, 0x3fff },
	};
	const u64 mix_want[] = { 0x1000, 0x2fff, 0x4000, 0x4fff,
				 0x7000, 0x8fff };
	const struct vfio_resv all = { 0, ~0ULL };
	struct vfio_resv out[4];
	unsigned int n;

	n = vfio_iova_ranges(0, (1ULL << 48) - 1, NULL, 0, out, 4);
	check(t, n == 1 && out[0].start == 0 && out[0].last == (1ULL << 48) - 1,
	      "iova_ranges_none_reserved");
	n = vfio_iova_ranges(0, (1ULL << 48) - 1, &msi, 1, out, 4);
	check(t, ranges_are(out, n, msi_want, 2), "iova_ranges_msi_window");
	n = vfio_iova_ranges(0, 0xffff, mix, 5, out, 4);
	check(t, ranges_are(out, n, mix_want, 3), "iova_ranges_unsorted_overlap");
	n = vfio_iova_ranges(0, 0xffff, mix, 5, out, 1);
	check(t, n == 3 && out[0].start == 0x1000 && out[0].last == 0x2fff,
	      "iova_ranges_count_beyond_max");
	n = vfio_iova_ranges(0, ~0ULL, &all, 1, out, 4);
	check(t, n == 0, "iova_ranges_all_reserved");
	n = vfio_iova_ranges(0x1000, 0x1fff, &msi, 1, out, 4);
	check(t, n == 1 && out[0].start == 0x1000 && out[0].last == 0x1fff,
	      "iova_ranges_reserved_outside");
	n = vfio_iova_ranges(0, ~0ULL, &msi, 1, out, 4);
	check(t, n == 2 && out[1].last == ~0ULL, "iova_ranges_top_of_space");
}

int main(void)
{
	struct tally t = { 0 };

	check(&t, vfio_check_argsz(8, 8) == 0, "argsz_exact");
	check(&t, vfio_check_argsz(7, 8) == -EINVAL, "argsz_short");
	check(&t, vfio_check_argsz(4096, 8) == 0, "argsz_longer");
	check(&t, vfio_check_argsz(0, 8) == -EINVAL, "argsz_zero");

	check(&t, vfio_check_range(0, 4096, PG) == 0, "range_page_at_zero");
	check(&t, vfio_check_range(0x100000, 1 << 20, PG) == 0, "range_1m");
	check(&t, vfio_check_range(0, 0, PG) == -EINVAL, "range_empty");
	check(&t, vfio_check_range(0x1001, 4096, PG) == -EINVAL,
	      "range_unaligned_start");
	check(&t, vfio_check_range(0x1000, 4095, PG) == -EINVAL,
	      "range_unaligned_size");
	check(&t, vfio_check_range(~0ULL - 4095, 4096, PG) == 0,
	      "range_last_page");
	check(&t, vfio_check_range(~0ULL - 4095, 8192, PG) == -EINVAL,
	      "range_wraps");
	check(&t, vfio_check_range(0x1000, ~0ULL - 4095, PG) == 0,
	      "range_ends_at_top");
	check(&t, vfio_check_range(0x2000, ~0ULL - 4095, PG) == -EINVAL,
	      "range_huge_wraps");
	check(&t, vfio_check_range(0, ~0ULL - 4095, PG) == 0,
	      "range_all_but_last_page");
	check(&t, vfio_check_range(0x200000, 0x1000, 0x1fffff) == -EINVAL,
	      "range_below_granule");

	check(&t, vfio_range_within(0x1000, 0x1000, 0, 0xffff), "within");
	check(&t, vfio_range_within(0xf000, 0x1000, 0, 0xffff),
	      "within_last_page");
	check(&t, !vfio_range_within(0xf000, 0x2000, 0, 0xffff),
	      "within_past_end");
	check(&t, !vfio_range_within(0, 0x1000, 0x1000, 0xffff),
	      "within_before_start");
	check(&t, vfio_range_within(0, ~0ULL, 0, ~0ULL), "within_everything");

	check(&t, vfio_ranges_overlap(0, 0x2000, 0x1000, 0x1000),
	      "overlap_contained");
	check(&t, vfio_ranges_overlap(0x1000, 0x1000, 0, 0x2000),
	      "overlap_containing");
	check(&t, vfio_ranges_overlap(0, 0x2000, 0x1000, 0x2000),
	      "overlap_partial");
	check(&t, !vfio_ranges_overlap(0, 0x1000, 0x1000, 0x1000),
	      "overlap_adjacent");
	check(&t, vfio_ranges_overlap(0x1000, 0x1000, 0x1000, 0x1000),
	      "overlap_identical");
	check(&t, vfio_ranges_overlap(~0ULL - 0xfff, 0x1000, 0, ~0ULL),
	      "overlap_top_page");

	test_iova_ranges(&t);
	return t.failed ? 1 : 0;
}
