// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of the config-space write policy
 * (src/pci/vfio_pci_config_perm.h): the tables, the byte masks of an
 * access, the command register filter and the capability walk over
 * made-up config spaces.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/pci_regs.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;

#include "pci/vfio_pci_config_perm.h"

struct tally {
	int passed, failed;
};

static void check(struct tally *t, bool cond, const char *name)
{
	printf("%s - unit/config_perm/%s\n", cond ? "ok" : "not ok", name);
	if (cond)
		t->passed++;
	else
		t->failed++;
}

/* A config space to walk: little-endian bytes, as the device has them. */
struct space {
	u8 b[PCI_CFG_SPACE_EXP_SIZE];
	u32 reads;
};

static u32 space_rd(void *ctx, u32 where)
{
	struct space *s = ctx;

	s->reads++;
	return s->b[where] | s->b[where + 1] << 8 | s->b[where + 2] << 16 |
	       (u32)s->b[where + 3] << 24;
}

static void space_wr(struct space *s, u32 where, u32 val)
{
	int i;

	for (i = 0; i < 4; i++)
		s->b[where + i] = val >> (8 * i);
}

/* A standard capability @id at @pos whose next pointer is @next. */
static void std_cap(struct space *s, u32 pos, u8 id, u8 next)
{
	space_wr(s, pos, id | next << 8);
}

static void test_header(struct tally *t)
{
	const struct vfio_cfg_perm *p;
	u8 map[PCI_CFG_SPACE_EXP_SIZE / 4];
	bool ok = true;
	u32 w;

	memset(map, VFIO_CFG_NONE, sizeof(map));
	p = vfio_cfg_perm_at(map, PCI_VENDOR_ID);
	check(t, p->kind == VFIO_CFG_ID && !p->write && !p->virt,
	      "header/ids-read-only");
	p = vfio_cfg_perm_at(map, PCI_COMMAND);
	check(t, p->kind == VFIO_CFG_COMMAND && !(p->write & 0xffff0000),
	      "header/status-half-never-written");
	check(t, (p->write & PCI_COMMAND_MEMORY) &&
	      (p->write & PCI_COMMAND_MASTER) &&
	      !(p->write & PCI_COMMAND_SERR) &&
	      !(p->write & PCI_COMMAND_PARITY),
	      "header/command-passes-decode-and-master-only");
	for (w = PCI_BASE_ADDRESS_0; w <= PCI_BASE_ADDRESS_5; w += 4)
		ok &= vfio_cfg_perm_at(map, w)->kind == VFIO_CFG_BAR;
	check(t, ok, "header/six-bars-are-shadows");
	check(t, vfio_cfg_perm_at(map, PCI_ROM_ADDRESS)->kind == VFIO_CFG_ROM,
	      "header/rom-is-a-shadow");
	p = vfio_cfg_perm_at(map, PCI_INTERRUPT_LINE);
	check(t, p->kind == VFIO_CFG_VIRT && p->virt == 0xff,
	      "header/interrupt-line-virtual-pin-real");
	p = vfio_cfg_perm_at(map, PCI_CACHE_LINE_SIZE);
	check(t, p->kind == VFIO_CFG_VIRT && p->virt == 0xffff,
	      "header/header-type-and-bist-real");
	check(t, vfio_cfg_perm_at(map, PCI_CAPABILITY_LIST)->kind ==
	      VFIO_CFG_REAL, "header/capability-pointer-real");
	check(t, vfio_cfg_perm_at(map, 0x40)->kind == VFIO_CFG_REAL &&
	      vfio_cfg_perm_at(map, 0xffc)->kind == VFIO_CFG_REAL,
	      "header/outside-any-capability-read-only");
}

static void test_caps_read_only(struct tally *t)
{
	bool ok = true;
	int i;

	/* No capability takes writes yet: the day one does, this says so. */
	for (i = 0; i < 256; i++)
		ok &= vfio_cfg_caps[i].kind == VFIO_CFG_REAL &&
		      !vfio_cfg_caps[i].write;
	check(t, ok, "caps/every-capability-read-only");
}

static void test_bytes(struct tally *t)
{
	check(t, vfio_cfg_bytes(0, 4) == 0xffffffff, "bytes/dword");
	check(t, vfio_cfg_bytes(2, 2) == 0xffff0000, "bytes/upper-word");
	check(t, vfio_cfg_bytes(1, 1) == 0x0000ff00, "bytes/byte-1");
	check(t, vfio_cfg_bytes(3, 1) == 0xff000000, "bytes/byte-3");
	check(t, vfio_cfg_merge(0x11223344, 0xaabbccdd, 0x0000ff00) ==
	      0x1122cc44, "bytes/merge-one-byte");
}

static void test_command(struct tally *t)
{
	const u32 w = vfio_cfg_header[PCI_COMMAND / 4].write;
	const u16 hw = PCI_COMMAND_SERR | PCI_COMMAND_MEMORY;

	check(t, vfio_cfg_command(hw, 0, w, false) == PCI_COMMAND_SERR,
	      "command/decode-off-keeps-host-bits");
	check(t, vfio_cfg_command(0, 0xffff, w, false) == w,
	      "command/all-ones-sets-only-permitted-bits");
	check(t, vfio_cfg_command(PCI_COMMAND_INTX_DISABLE, 0, w, true) ==
	      PCI_COMMAND_INTX_DISABLE,
	      "command/intx-disable-kernel-owned-while-irq-active");
	check(t, vfio_cfg_command(PCI_COMMAND_INTX_DISABLE, 0, w, false) == 0,
	      "command/intx-disable-user-owned-when-idle");
	/* A VF: memory enable reads 0 in hardware, the user's bit shows. */
	check(t, vfio_cfg_command_view(PCI_COMMAND_MASTER, 0,
				       PCI_COMMAND_MEMORY, true) ==
	      (PCI_COMMAND_MASTER | PCI_COMMAND_MEMORY),
	      "command/view-virtual-memory-enable-on");
	check(t, vfio_cfg_command_view(PCI_COMMAND_MEMORY, 0, 0, true) == 0,
	      "command/view-virtual-memory-enable-off");
	check(t, vfio_cfg_command_view(PCI_COMMAND_MEMORY |
				       PCI_COMMAND_INTX_DISABLE, 0, 0, false) ==
	      PCI_COMMAND_MEMORY,
	      "command/view-real-memory-enable-user-intx");
}

static void test_walk(struct tally *t)
{
	static struct space s;
	u8 map[PCI_CFG_SPACE_EXP_SIZE / 4];

	/* PM at 0x40, MSI at 0x50, PCIe at 0x70; AER at 0x100, ACS 0x140. */
	memset(&s, 0, sizeof(s));
	space_wr(&s, PCI_COMMAND, PCI_STATUS_CAP_LIST << 16);
	s.b[PCI_CAPABILITY_LIST] = 0x40;
	std_cap(&s, 0x40, PCI_CAP_ID_PM, 0x50);
	std_cap(&s, 0x50, PCI_CAP_ID_MSI, 0x70);
	std_cap(&s, 0x70, PCI_CAP_ID_EXP, 0);
	space_wr(&s, 0x100, PCI_EXT_CAP_ID_ERR | 1 << 16 | 0x140 << 20);
	space_wr(&s, 0x140, PCI_EXT_CAP_ID_ACS | 1 << 16);
	vfio_cfg_map_caps(space_rd, &s, sizeof(s.b), map);
	check(t, map[0x00 / 4] == VFIO_CFG_NONE && map[0x3c / 4] ==
	      VFIO_CFG_NONE, "walk/header-in-no-capability");
	check(t, map[0x40 / 4] == PCI_CAP_ID_PM && map[0x4c / 4] ==
	      PCI_CAP_ID_PM, "walk/pm-runs-to-next");
	check(t, map[0x50 / 4] == PCI_CAP_ID_MSI && map[0x6c / 4] ==
	      PCI_CAP_ID_MSI, "walk/msi");
	check(t, map[0x70 / 4] == PCI_CAP_ID_EXP && map[0xfc / 4] ==
	      PCI_CAP_ID_EXP, "walk/last-runs-to-end-of-space");
	check(t, map[0x100 / 4] == VFIO_CFG_EXT + PCI_EXT_CAP_ID_ERR &&
	      map[0x13c / 4] == VFIO_CFG_EXT + PCI_EXT_CAP_ID_ERR &&
	      map[0x140 / 4] == VFIO_CFG_EXT + PCI_EXT_CAP_ID_ACS &&
	      map[0xffc / 4] == VFIO_CFG_EXT + PCI_EXT_CAP_ID_ACS,
	      "walk/extended-list");

	/* Without the status bit there is no list to follow. */
	space_wr(&s, PCI_COMMAND, 0);
	vfio_cfg_map_caps(space_rd, &s, PCI_CFG_SPACE_SIZE, map);
	check(t, map[0x40 / 4] == VFIO_CFG_NONE,
	      "walk/no-cap-list-status-bit");

	/* A list that points back at itself ends. */
	space_wr(&s, PCI_COMMAND, PCI_STATUS_CAP_LIST << 16);
	std_cap(&s, 0x70, PCI_CAP_ID_EXP, 0x40);
	space_wr(&s, 0x140, PCI_EXT_CAP_ID_ACS | 1 << 16 | 0x100 << 20);
	s.reads = 0;
	vfio_cfg_map_caps(space_rd, &s, sizeof(s.b), map);
	check(t, s.reads < 1000 && map[0x50 / 4] == PCI_CAP_ID_MSI,
	      "walk/looping-lists-end");

	/* A conventional device's 256 bytes: the extended walk stays out. */
	s.reads = 0;
	vfio_cfg_map_caps(space_rd, &s, PCI_CFG_SPACE_SIZE, map);
	check(t, s.reads < 60, "walk/conventional-space-no-extended-walk");
}

int main(void)
{
	struct tally t = { 0, 0 };

	test_header(&t);
	test_caps_read_only(&t);
	test_bytes(&t);
	test_command(&t);
	test_walk(&t);
	return t.failed ? 1 : 0;
}
