// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of the PCI driver's pure checks of the container-ABI device
 * ioctls (src/pci/vfio_pci_check.h), compiled exactly as the kernel
 * compiles them, against the distribution's <linux/vfio.h>.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/vfio.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;

#include "pci/vfio_pci_check.h"

struct tally {
	int passed, failed;
};

static void check(struct tally *t, bool cond, const char *name)
{
	if (cond) {
		printf("ok - unit/pci_check/%s\n", name);
		t->passed++;
	} else {
		printf("not ok - unit/pci_check/%s\n", name);
		t->failed++;
	}
}

#define HDR	((u32)sizeof(struct vfio_irq_set))
#define NONE	VFIO_IRQ_SET_DATA_NONE
#define BOOL	VFIO_IRQ_SET_DATA_BOOL
#define EFD	VFIO_IRQ_SET_DATA_EVENTFD
#define TRIG	VFIO_IRQ_SET_ACTION_TRIGGER
#define MASK	VFIO_IRQ_SET_ACTION_MASK
#define UNMASK	VFIO_IRQ_SET_ACTION_UNMASK
#define NIRQ	VFIO_PCI_NUM_IRQS

/* vfio_pci_irq_set_check() with the data size thrown away. */
static int chk(u32 argsz, u32 flags, u32 index, u32 start, u32 count,
	       u32 max)
{
	u32 ds = 12345;
	int ret = vfio_pci_irq_set_check(argsz, flags, index, start, count,
					 NIRQ, max, &ds);

	if (ret && ds != 0)
		return -999;	/* must be reset on failure too */
	return ret;
}

static int chk_size(u32 argsz, u32 flags, u32 start, u32 count, u32 max,
		    u32 want)
{
	u32 ds = 0;
	int ret = vfio_pci_irq_set_check(argsz, flags, 1, start, count, NIRQ,
					 max, &ds);

	return ret ? ret : (ds == want ? 0 : -998);
}

static void test_irq_set(struct tally *t)
{
	check(t, HDR == 20, "hdr_is_20_bytes");
	check(t, chk(HDR, EFD | TRIG, 1, 0, 1, 1) == -EINVAL,
	      "argsz_no_room_for_data");
	check(t, chk(HDR + 4, EFD | TRIG, 1, 0, 1, 1) == 0,
	      "eventfd_one");
	check(t, chk(HDR - 1, NONE | TRIG, 0, 0, 1, 1) == -EINVAL,
	      "argsz_short");
	check(t, chk(HDR, NONE | TRIG, NIRQ, 0, 1, 1) == -EINVAL,
	      "index_too_big");
	check(t, chk(HDR, NONE | TRIG | (1u << 6), 0, 0, 1, 1) == -EINVAL,
	      "unknown_flag");
	check(t, chk(HDR + 8, NONE | BOOL | TRIG, 0, 0, 1, 1) == -EINVAL,
	      "two_data_types");
	check(t, chk(HDR + 8, BOOL | EFD | TRIG, 0, 0, 1, 1) == -EINVAL,
	      "bool_and_eventfd");
	check(t, chk(HDR, TRIG, 0, 0, 1, 1) == -EINVAL, "no_data_type");
	check(t, chk(HDR, NONE | MASK | TRIG, 0, 0, 1, 1) == 0,
	      "two_actions_left_to_dispatch");
	check(t, chk(HDR, NONE | TRIG, 0, 0, 0, 1) == 0, "count0_none");
	check(t, chk(HDR, NONE | TRIG, 0, 0, 0, 0) == -EINVAL,
	      "count0_absent_index");
	check(t, chk(HDR, NONE | TRIG, 0, 1, 0, 1) == -EINVAL,
	      "start_at_max");
	check(t, chk(HDR, NONE | TRIG, 1, 0, 3, 2) == -EINVAL,
	      "count_past_max");
	check(t, chk(HDR, NONE | TRIG, 1, 1, 1, 2) == 0, "start_1_count_1");
	check(t, chk(HDR, NONE | TRIG, 2, 1, UINT32_MAX, 2048) == -EINVAL,
	      "start_count_wraps");
	check(t, chk(HDR, NONE | TRIG, 2, UINT32_MAX, 2, 2048) == -EINVAL,
	      "start_huge");
	check(t, chk(HDR + 4 * 31, EFD | TRIG, 2, 1, 32, 2048) == -EINVAL,
	      "eventfds_short_by_one");
	check(t, chk_size(HDR + 4 * 32, EFD | TRIG, 1, 32, 64, 128) == 0,
	      "eventfds_size");
	check(t, chk_size(HDR + 3, BOOL | TRIG, 0, 3, 4, 3) == 0,
	      "bools_size");
	check(t, chk_size(HDR + 2, BOOL | TRIG, 0, 3, 4, 3) == -EINVAL,
	      "bools_short");
	check(t, chk_size(HDR + 4096, EFD | TRIG, 0, 0, 4, 0) == 0,
	      "eventfd_count0_no_data");
	check(t, chk_size(HDR + 4096, NONE | UNMASK, 0, 1, 1, 0) == 0,
	      "none_no_data");

	check(t, vfio_pci_irq_set_action(NONE | TRIG) == TRIG, "action_trig");
	check(t, vfio_pci_irq_set_action(EFD | UNMASK) == UNMASK,
	      "action_unmask");
	check(t, vfio_pci_irq_set_action(BOOL | MASK) == MASK, "action_mask");
	check(t, vfio_pci_irq_set_action(NONE) == 0, "action_none");
	check(t, vfio_pci_irq_set_action(MASK | TRIG) == 0, "action_two");
	check(t, vfio_pci_irq_set_action(VFIO_IRQ_SET_ACTION_TYPE_MASK) == 0,
	      "action_all");
}

#define PG	4096ULL

static bool areas_are(const struct vfio_pci_area *a, unsigned int n,
		      unsigned int want_n, u64 o0, u64 s0, u64 o1, u64 s1)
{
	if (n != want_n)
		return false;
	if (n >= 1 && (a[0].offset != o0 || a[0].size != s0))
		return false;
	if (n >= 2 && (a[1].offset != o1 || a[1].size != s1))
		return false;
	return true;
}

static void test_sparse(struct tally *t)
{
	struct vfio_pci_area a[2];
	unsigned int n;

	/* e1000e: 16 KiB BAR3, table at 0, 5 vectors. */
	n = vfio_pci_msix_sparse(0x4000, 0, 5 * 16, PG, a);
	check(t, areas_are(a, n, 1, 0x1000, 0x3000, 0, 0), "table_at_start");

	n = vfio_pci_msix_sparse(0x4000, 0x3000, 0x100, PG, a);
	check(t, areas_are(a, n, 1, 0, 0x3000, 0, 0), "table_in_last_page");

	n = vfio_pci_msix_sparse(0x10000, 0x2800, 0x1000, PG, a);
	check(t, areas_are(a, n, 2, 0, 0x2000, 0x4000, 0xc000),
	      "table_straddles_pages");

	n = vfio_pci_msix_sparse(0x10000, 0x2000, 0x1000, PG, a);
	check(t, areas_are(a, n, 2, 0, 0x2000, 0x3000, 0xd000),
	      "table_exact_page");

	n = vfio_pci_msix_sparse(0x1000, 0x800, 0x10, PG, a);
	check(t, n == 0, "table_fills_one_page_bar");

	n = vfio_pci_msix_sparse(0x4000, 0x3ff0, 0x100, PG, a);
	check(t, areas_are(a, n, 1, 0, 0x3000, 0, 0), "table_runs_past_bar");

	n = vfio_pci_msix_sparse(0x4000, 0x8000, 0x100, PG, a);
	check(t, areas_are(a, n, 1, 0, 0x4000, 0, 0), "table_outside_bar");

	n = vfio_pci_msix_sparse(0x200000, 0x10000, 2048 * 16, 0x200000, a);
	check(t, n == 0, "huge_page_covers_bar");

	n = vfio_pci_msix_sparse(1ULL << 39, (1ULL << 39) - 0x1000, 0x1000,
				 PG, a);
	check(t, areas_are(a, n, 1, 0, (1ULL << 39) - 0x1000, 0, 0),
	      "big_bar_table_at_end");
}

int main(void)
{
	struct tally t = { 0 };

	test_irq_set(&t);
	test_sparse(&t);
	return t.failed ? 1 : 0;
}
