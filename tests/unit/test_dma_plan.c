// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of the DMA engine's decisions (src/vfio_dma_plan.h),
 * compiled exactly as the kernel compiles them: building runs of
 * contiguous frames, finding a page's run, and planning the IOMMU range
 * an unmap takes out around a cut.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define max(a, b)	((a) > (b) ? (a) : (b))
#define min(a, b)	((a) < (b) ? (a) : (b))

#include "vfio_dma_plan.h"

struct tally {
	int passed, failed;
};

static void check(struct tally *t, bool cond, const char *name)
{
	printf("%s - unit/dma_plan/%s\n", cond ? "ok" : "not ok", name);
	if (cond)
		t->passed++;
	else
		t->failed++;
}

static void test_run_extend(struct tally *t)
{
	struct vfio_open_run r = { 0 };
	bool ok = true;

	ok &= !vfio_run_extend(&r, 100);	/* nothing open yet */
	r = (struct vfio_open_run){ .pgoff = 7, .pfn = 100, .len = 1 };
	ok &= vfio_run_extend(&r, 101) && r.len == 2;
	ok &= vfio_run_extend(&r, 102) && r.len == 3;
	ok &= !vfio_run_extend(&r, 104) && r.len == 3;	/* a gap */
	ok &= !vfio_run_extend(&r, 99) && r.len == 3;	/* backwards */
	ok &= r.pgoff == 7 && r.pfn == 100;
	check(t, ok, "run_extend");
}

/* Runs of 3, 7, 1 and 9 pages: boundaries 0 3 10 11 20. */
static const struct vfio_run four[] = {
	{ 0, 500 }, { 3, 900 }, { 10, 50 }, { 11, 70 }, { 20, 0 },
};

static void test_run_find(struct tally *t)
{
	static const unsigned long page[] = { 0, 2, 3, 9, 10, 11, 19 };
	static const unsigned long want[] = { 0, 0, 1, 1, 2, 3, 3 };
	const struct vfio_run one[] = { { 0, 1 }, { 5, 0 } };
	bool ok = true;
	unsigned int i;

	for (i = 0; i < sizeof(page) / sizeof(page[0]); i++)
		ok &= vfio_run_find(four, 4, page[i]) == want[i];
	ok &= vfio_run_find(one, 1, 0) == 0 && vfio_run_find(one, 1, 4) == 0;
	check(t, ok, "run_find");
}

static bool cut_is(const struct vfio_cut *c, unsigned long from,
		   unsigned long to, unsigned long ufrom, unsigned long uto)
{
	return c->from == from && c->to == to && c->ufrom == ufrom &&
	       c->uto == uto;
}

static void test_cut_cases(struct tally *t)
{
	const struct vfio_run single[] = { { 0, 100 }, { 10, 0 } };
	const struct vfio_run pages[] = {
		{ 0, 9 }, { 1, 3 }, { 2, 7 }, { 3, 1 }, { 4, 0 },
	};
	struct vfio_cut c;

	vfio_cut_plan(four, 4, 0, 20, 0, 20, &c);
	check(t, cut_is(&c, 0, 20, 0, 20), "cut_whole_mapping");
	vfio_cut_plan(single, 1, 0, 10, 4, 6, &c);
	check(t, cut_is(&c, 4, 6, 0, 10), "cut_inside_run_takes_run");
	vfio_cut_plan(four, 4, 0, 20, 3, 10, &c);
	check(t, cut_is(&c, 3, 10, 3, 10), "cut_on_run_boundaries");
	vfio_cut_plan(four, 4, 0, 20, 4, 11, &c);
	check(t, cut_is(&c, 4, 11, 3, 11), "cut_low_end_inside_run");
	vfio_cut_plan(four, 4, 0, 20, 3, 12, &c);
	check(t, cut_is(&c, 3, 12, 3, 20), "cut_high_end_inside_run");
	/* A piece of a split mapping, pages [5, 10) of the single run. */
	vfio_cut_plan(single, 1, 5, 10, 6, 7, &c);
	check(t, cut_is(&c, 6, 7, 5, 10), "cut_clipped_to_piece");
	/* A piece [0, 15) of runs [0, 10) and [10, 20). */
	vfio_cut_plan((const struct vfio_run[]){ { 0, 1 }, { 10, 50 },
						 { 20, 0 } },
		      2, 0, 15, 12, 13, &c);
	check(t, cut_is(&c, 12, 13, 10, 15), "cut_clipped_to_piece_end");
	/* 4 KiB pages that are not contiguous: every page its own run. */
	vfio_cut_plan(pages, 4, 0, 4, 1, 3, &c);
	check(t, cut_is(&c, 1, 3, 1, 3), "cut_single_page_runs");
}

/*
 * Against a brute-force reading of the rule: the IOMMU range starts at
 * the last run boundary at or before the cut (not before the piece) and
 * ends at the first one at or after it (not after the piece).
 */
static void test_cut_random(struct tally *t)
{
	struct vfio_run run[65];
	unsigned long nr, i, first, end, from, to, lo, hi;
	struct vfio_cut c;
	unsigned int round, bad = 0;

	srand(12345);
	for (round = 0; round < 100000; round++) {
		nr = 1 + rand() % 64;
		run[0].pgoff = 0;
		for (i = 1; i <= nr; i++)
			run[i].pgoff = run[i - 1].pgoff + 1 + rand() % 8;
		first = rand() % run[nr].pgoff;
		end = first + 1 + rand() % (run[nr].pgoff - first);
		from = first + rand() % (end - first);
		to = from + 1 + rand() % (end - from);

		lo = first;
		hi = end;
		for (i = 0; i <= nr; i++) {
			if (run[i].pgoff <= from && run[i].pgoff > lo)
				lo = run[i].pgoff;
			if (run[i].pgoff >= to && run[i].pgoff < hi)
				hi = run[i].pgoff;
		}
		vfio_cut_plan(run, nr, first, end, from, to, &c);
		if (!cut_is(&c, from, to, lo, hi)) {
			if (!bad++)
				printf("# round %u: nr %lu piece [%lu, %lu) cut [%lu, %lu): got [%lu, %lu), want [%lu, %lu)\n",
				       round, nr, first, end, from, to,
				       c.ufrom, c.uto, lo, hi);
		}
	}
	check(t, !bad, "cut_random_against_brute_force");
}

int main(void)
{
	struct tally t = { 0, 0 };

	test_run_extend(&t);
	test_run_find(&t);
	test_cut_cases(&t);
	test_cut_random(&t);
	return t.failed ? 1 : 0;
}
