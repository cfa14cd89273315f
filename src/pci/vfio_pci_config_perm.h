/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: what a user read or write of config space (region 7) does,
 * as data.  Every dword belongs to the standard header or to one
 * capability; its owner's entry says whether it reads the device or a
 * per-open shadow, and which bits a write may change.  The decisions
 * around the tables (the byte mask of an access, the command register's
 * new value, the capability walk) are pure functions on plain integers,
 * so that the host unit tests compile this file as it is.  The includer
 * provides <linux/pci_regs.h>.
 */
#ifndef VFIO_PCI_CONFIG_PERM_H
#define VFIO_PCI_CONFIG_PERM_H

#ifdef __KERNEL__
#include <linux/pci_regs.h>
#include <linux/types.h>
#endif

enum vfio_cfg_kind {
	VFIO_CFG_REAL,		/* reads the device; writes are dropped */
	VFIO_CFG_VIRT,		/* the bits in @virt are a shadow; the rest REAL */
	VFIO_CFG_BAR,		/* a shadow BAR, masked by the BAR's size */
	VFIO_CFG_ROM,		/* the shadow ROM BAR */
	VFIO_CFG_COMMAND,	/* the bits in @write reach the device */
	VFIO_CFG_ID,		/* vendor and device ID: see the header */
};

struct vfio_cfg_perm {
	u8	kind;
	u32	virt;
	u32	write;
};

#define VFIO_CFG_HDR_DWORDS	(PCI_STD_HEADER_SIZEOF / 4)

/*
 * The type 0 header.  Dwords not named here (class, subsystem,
 * capability pointer, interrupt pin) read the device and ignore writes.
 * So do the IDs, except that an SR-IOV VF's read all ones in hardware
 * (the PF's SR-IOV capability has them): a VF shows the IDs the kernel
 * took from there, as upstream's does.
 * The user must never move the device's decoding windows, so the BARs
 * and the ROM BAR are shadows: sizing with all ones reads back the size
 * mask, any other value reads back as written, and the real registers
 * never change.  Cache line size, latency timer and interrupt line mean
 * nothing to the device and are the user's to play with.  Of the
 * command register, decode and bus master pass through (DMA needs bus
 * master); INTx disable too, except while an IRQ index is active, when
 * the kernel owns it.  A device whose memory enable is hard-wired to 0
 * (a VF; the kernel's no_command_memory) gets a virtual one instead,
 * which reads back as written and gates the user's BAR accesses all the
 * same (vfio_cfg_command_view).  The status half is not the user's to
 * clear.
 */
static const struct vfio_cfg_perm vfio_cfg_header[VFIO_CFG_HDR_DWORDS] = {
	[PCI_VENDOR_ID / 4] = { .kind = VFIO_CFG_ID },
	[PCI_COMMAND / 4] = {
		.kind = VFIO_CFG_COMMAND,
		.write = PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
			 PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE,
	},
	[PCI_CACHE_LINE_SIZE / 4] = {
		.kind = VFIO_CFG_VIRT,
		.virt = 0x0000ffff,	/* cache line size, latency timer */
	},
	[PCI_BASE_ADDRESS_0 / 4 ... PCI_BASE_ADDRESS_5 / 4] = {
		.kind = VFIO_CFG_BAR,
	},
	[PCI_ROM_ADDRESS / 4] = {
		.kind = VFIO_CFG_ROM,
	},
	[PCI_INTERRUPT_LINE / 4] = {
		.kind = VFIO_CFG_VIRT,
		.virt = 0x000000ff,	/* interrupt line */
	},
};

/*
 * Capabilities, by ID (extended ones at VFIO_CFG_EXT + ID).  Every one
 * reads the device, so the user sees what the device really has; none
 * takes writes yet, each for its own reason.  An ID not listed gets the
 * same, which is also what a capability we cannot parse gets.
 */
#define VFIO_CFG_EXT		0x80
#define VFIO_CFG_NONE		0xff	/* not in any capability */

static const struct vfio_cfg_perm vfio_cfg_caps[256] = {
	/* D-state changes can lose BARs and config behind the host. */
	[PCI_CAP_ID_PM] = { .kind = VFIO_CFG_REAL },
	/*
	 * The kernel programs both from SET_IRQS; a user's write would
	 * aim the device's interrupts at an address of its choosing.
	 */
	[PCI_CAP_ID_MSI] = { .kind = VFIO_CFG_REAL },
	[PCI_CAP_ID_MSIX] = { .kind = VFIO_CFG_REAL },
	/*
	 * Device control holds FLR initiate, max payload and relaxed
	 * ordering, link control ASPM and retrain: all the host's.
	 */
	[PCI_CAP_ID_EXP] = { .kind = VFIO_CFG_REAL },
	/* Meaning unknown to us: read-only is the safe side. */
	[PCI_CAP_ID_VNDR] = { .kind = VFIO_CFG_REAL },
	/* Error masks and severities decide whether the host panics. */
	[VFIO_CFG_EXT + PCI_EXT_CAP_ID_ERR] = { .kind = VFIO_CFG_REAL },
	/* ACS is what makes the IOMMU group safe to give away. */
	[VFIO_CFG_EXT + PCI_EXT_CAP_ID_ACS] = { .kind = VFIO_CFG_REAL },
	/* Resizing a BAR moves it behind the host's resource tree. */
	[VFIO_CFG_EXT + PCI_EXT_CAP_ID_REBAR] = { .kind = VFIO_CFG_REAL },
	/* Enabling VFs creates devices outside this group. */
	[VFIO_CFG_EXT + PCI_EXT_CAP_ID_SRIOV] = { .kind = VFIO_CFG_REAL },
};

/* The permission of the dword at @where, given the map of capabilities. */
static inline const struct vfio_cfg_perm *
vfio_cfg_perm_at(const u8 *cap_map, u32 where)
{
	static const struct vfio_cfg_perm none = { .kind = VFIO_CFG_REAL };

	if (where < PCI_STD_HEADER_SIZEOF)
		return &vfio_cfg_header[where / 4];
	if (cap_map[where / 4] == VFIO_CFG_NONE)
		return &none;
	return &vfio_cfg_caps[cap_map[where / 4]];
}

/* The bits of a dword that an access of @n bytes at byte @shift covers. */
static inline u32 vfio_cfg_bytes(u32 shift, u32 n)
{
	return (n >= 4 ? ~0U : (1U << (8 * n)) - 1) << (8 * shift);
}

/* @cur with the bits in @bytes taken from @val. */
static inline u32 vfio_cfg_merge(u32 cur, u32 val, u32 bytes)
{
	return (cur & ~bytes) | (val & bytes);
}

/*
 * The command register the device gets when the user writes @user over
 * the device's @hw: the @write bits of the permission pass through, but
 * INTx disable stays as the kernel set it while @kernel_intx (an IRQ
 * index is active).
 */
static inline u16 vfio_cfg_command(u16 hw, u16 user, u32 write,
				   bool kernel_intx)
{
	u16 pass = write;

	if (kernel_intx)
		pass &= ~PCI_COMMAND_INTX_DISABLE;
	return (hw & ~pass) | (user & pass);
}

/*
 * The command register the user reads: the device's @hw with the user's
 * INTx disable bit (@intx), and when @mem_virtual the user's memory
 * enable (@mem) over the device's hard-wired 0.
 */
static inline u16 vfio_cfg_command_view(u16 hw, u16 intx, u16 mem,
					bool mem_virtual)
{
	u16 virt = PCI_COMMAND_INTX_DISABLE;
	u16 val = intx & PCI_COMMAND_INTX_DISABLE;

	if (mem_virtual) {
		virt |= PCI_COMMAND_MEMORY;
		val |= mem & PCI_COMMAND_MEMORY;
	}
	return (hw & ~virt) | val;
}

/*
 * Fill @map (one byte per dword of the @cfg_size bytes of config space)
 * with the capability each dword belongs to, reading the device through
 * @rd.  A capability runs to the next one's start or the end of its
 * space, as upstream sizes the ones it does not know.  The walks stop
 * after as many steps as the space has dwords, so a looping list ends.
 */
static inline void vfio_cfg_map_caps(u32 (*rd)(void *ctx, u32 where),
				     void *ctx, u32 cfg_size, u8 *map)
{
	u32 pos, next, i, ttl, end;
	u32 hdr;
	u8 id;

	for (i = 0; i < cfg_size / 4; i++)
		map[i] = VFIO_CFG_NONE;

	/* Standard list: byte pointers into 0x40..0xff. */
	if (rd(ctx, PCI_STATUS & ~3U) >> 16 & PCI_STATUS_CAP_LIST) {
		pos = rd(ctx, PCI_CAPABILITY_LIST) & 0xfc;
		for (ttl = 48; pos >= PCI_STD_HEADER_SIZEOF && ttl; ttl--) {
			hdr = rd(ctx, pos);
			id = hdr & 0xff;
			next = (hdr >> 8) & 0xfc;
			end = next > pos ? next : PCI_CFG_SPACE_SIZE;
			if (id == VFIO_CFG_NONE || id >= VFIO_CFG_EXT)
				id = 0;
			for (i = pos; i < end; i += 4)
				map[i / 4] = id;
			pos = next;
		}
	}

	if (cfg_size <= PCI_CFG_SPACE_SIZE)
		return;
	/* Extended list: starts at 0x100, offsets in bits 31:20. */
	pos = PCI_CFG_SPACE_SIZE;
	for (ttl = (cfg_size - PCI_CFG_SPACE_SIZE) / 8; ttl; ttl--) {
		hdr = rd(ctx, pos);
		if (!hdr || hdr == ~0U)
			break;
		next = PCI_EXT_CAP_NEXT(hdr);
		end = next > pos && next < cfg_size ? next : cfg_size;
		id = PCI_EXT_CAP_ID(hdr) < VFIO_CFG_EXT - 1 ?
		     VFIO_CFG_EXT + PCI_EXT_CAP_ID(hdr) : 0;
		for (i = pos; i < end; i += 4)
			map[i / 4] = id;
		if (next <= pos || next >= cfg_size)
			break;
		pos = next;
	}
}

#endif /* VFIO_PCI_CONFIG_PERM_H */
