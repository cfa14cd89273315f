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

	return t.failed ? 1 : 0;
}
