// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-config: the virtualised config space of vfio_pci (region 7,
 * src/pci/vfio_pci_config.c).  The IDs and the header as the device has
 * them, BAR sizing in a shadow that never reaches the device, command
 * bits that pass through or are filtered, writes that are dropped, the
 * virtual bytes, and an MSI capability only the kernel programs.
 *
 * What the kernel really programmed is read back through the device's
 * sysfs config file, which bypasses our virtualisation.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

static void test_config_ids(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	uint32_t v, real[64], virt[64];
	int i;

	v = vt_cfg_rd(t, fd, VT_PCI_VENDOR, 4);
	VT_CHECKF(t, v == (VT_EDU_VENDOR | VT_EDU_DEVICE << 16), "ids 0x%08x", v);
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_VENDOR, 2) == VT_EDU_VENDOR &&
		  vt_cfg_rd(t, fd, 2, 2) == VT_EDU_DEVICE &&
		  vt_cfg_rd(t, fd, 1, 1) == (VT_EDU_VENDOR >> 8),
		  "partial reads");
	/* Unaligned, crossing a dword. */
	v = vt_cfg_rd(t, fd, 3, 2);
	VT_CHECKF(t, (v & 0xff) == (VT_EDU_DEVICE >> 8), "unaligned 0x%x", v);

	/*
	 * The whole header in one read matches the real one except where
	 * it is virtual: command (INTx disable), BARs, ROM, the bytes at
	 * 0x0c/0x0d and 0x3c, which all start out as the real values.
	 */
	VT_CHECKF(t, pread(fd, virt, 256, vt_roff(VFIO_PCI_CONFIG_REGION_INDEX))
		  == 256, "read 256: %s", strerror(errno));
	for (i = 0; i < 64; i++)
		real[i] = vt_real_cfg(t, VT_EDU0, i * 4, 4);
	for (i = 0; i < 64; i++) {
		uint32_t mask = ~0U;

		if (i == 1)	/* status bits may change under us */
			mask = 0xffff;
		VT_CHECKF(t, (virt[i] & mask) == (real[i] & mask),
			  "dword 0x%x: virtual 0x%08x real 0x%08x", i * 4,
			  virt[i], real[i]);
	}
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_HEADER, 1) == 0, "header type");
}

static void test_config_bars(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	uint32_t real0 = vt_real_cfg(t, VT_EDU0, VT_PCI_BAR0, 4);
	uint32_t v;

	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_BAR0, 4) == real0,
		  "BAR0 starts real");

	/* Sizing: all ones reads back the size mask (1 MiB, 32-bit mem). */
	vt_cfg_wr(t, fd, VT_PCI_BAR0, 4, ~0U);
	v = vt_cfg_rd(t, fd, VT_PCI_BAR0, 4);
	VT_CHECKF(t, v == 0xfff00000, "BAR0 sizing reads 0x%08x", v);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, VT_PCI_BAR0, 4) == real0,
		  "real BAR0 moved to 0x%08x",
		  vt_real_cfg(t, VT_EDU0, VT_PCI_BAR0, 4));

	/* A value reads back as written, minus the bits below the size. */
	vt_cfg_wr(t, fd, VT_PCI_BAR0, 4, 0x12345678);
	v = vt_cfg_rd(t, fd, VT_PCI_BAR0, 4);
	VT_CHECKF(t, v == 0x12300000, "BAR0 reads 0x%08x after 0x12345678", v);
	/* Byte writes merge into the virtual BAR. */
	vt_cfg_wr(t, fd, VT_PCI_BAR0 + 3, 1, 0xab);
	v = vt_cfg_rd(t, fd, VT_PCI_BAR0, 4);
	VT_CHECKF(t, v == 0xab300000, "BAR0 reads 0x%08x after a byte write", v);

	/* Unimplemented BARs and the missing ROM stay 0. */
	vt_cfg_wr(t, fd, VT_PCI_BAR1, 4, ~0U);
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_BAR1, 4) == 0, "BAR1 not 0");
	vt_cfg_wr(t, fd, VT_PCI_ROM, 4, ~0U);
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_ROM, 4) == 0, "ROM BAR not 0");

	/* The device still decodes where the host put it. */
	VT_CHECKF(t, vt_bar0_rd(t, fd, VT_EDU_ID) == VT_EDU_ID_VALUE,
		  "BAR0 still works");
	vt_cfg_wr(t, fd, VT_PCI_BAR0, 4, real0);
	vt_close_dev(&c->d);

	/* The I/O BAR of pci-testdev: 256 ports, bit 0 set. */
	fd = vt_ctx_open(t, c, VT_TESTDEV0);
	vt_cfg_wr(t, fd, VT_PCI_BAR1, 4, ~0U);
	v = vt_cfg_rd(t, fd, VT_PCI_BAR1, 4);
	VT_CHECKF(t, v == 0xffffff01, "I/O BAR sizing reads 0x%08x", v);
	vt_cfg_wr(t, fd, VT_PCI_BAR0, 4, ~0U);
	v = vt_cfg_rd(t, fd, VT_PCI_BAR0, 4);
	VT_CHECKF(t, v == 0xfffff000, "4K BAR sizing reads 0x%08x", v);
}

static void test_config_command(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	uint16_t real, v;

	real = vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2);
	VT_CHECKF(t, real & VT_PCI_COMMAND_MEMORY,
		  "memory decode off after open: 0x%x", real);

	/* Bus master passes through (DMA needs it). */
	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MASTER, 0);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_MASTER, "bus master did not reach the device");
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_MASTER, "virtual master");
	vt_set_cmd_bits(t, fd, 0, VT_PCI_COMMAND_MASTER);
	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_MASTER), "bus master not cleared");

	/* SERR and parity are not the user's: dropped. */
	real = vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2);
	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_SERR | VT_PCI_COMMAND_PARITY, 0);
	v = vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2);
	VT_CHECKF(t, (v & (VT_PCI_COMMAND_SERR | VT_PCI_COMMAND_PARITY)) ==
		  (real & (VT_PCI_COMMAND_SERR | VT_PCI_COMMAND_PARITY)),
		  "filtered bits reached the device: 0x%x", v);
	/* A byte write of the high half alone: same filter. */
	vt_cfg_wr(t, fd, VT_PCI_COMMAND + 1, 1, VT_PCI_COMMAND_SERR >> 8);
	v = vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2);
	VT_CHECKF(t, (v & VT_PCI_COMMAND_SERR) == (real & VT_PCI_COMMAND_SERR),
		  "SERR via byte write");

	/* INTx disable passes through while no IRQ index is active. */
	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_INTX_OFF, 0);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_INTX_OFF,
		  "INTx disable did not reach the device");
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_INTX_OFF, "INTx disable not shown");
	vt_set_cmd_bits(t, fd, 0, VT_PCI_COMMAND_INTX_OFF);
	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_INTX_OFF), "INTx disable not cleared");

	/* Status is not writable (its error bits are write-1-to-clear). */
	real = vt_real_cfg(t, VT_EDU0, VT_PCI_STATUS, 2);
	vt_cfg_wr(t, fd, VT_PCI_STATUS, 2, 0xffff);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, VT_PCI_STATUS, 2) == real,
		  "status changed");
}

static void test_config_dropped(struct vt *t, struct vt_ctx *c)
{
	static const uint32_t ro[] = { VT_PCI_VENDOR, 0x08, VT_PCI_CAP_PTR,
				       0x2c, 0x40, 0x80, 0xfc };
	int fd = vt_ctx_open(t, c, VT_EDU0);
	uint32_t before, real;
	unsigned int i;

	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
		before = vt_cfg_rd(t, fd, ro[i], 4);
		real = vt_real_cfg(t, VT_EDU0, ro[i], 4);
		vt_cfg_wr(t, fd, ro[i], 4, ~before);
		VT_CHECKF(t, vt_cfg_rd(t, fd, ro[i], 4) == before &&
			  vt_real_cfg(t, VT_EDU0, ro[i], 4) == real,
			  "write to 0x%x was not dropped", ro[i]);
	}
	/* Interrupt pin and header type are read only. */
	before = vt_cfg_rd(t, fd, VT_PCI_INT_PIN, 1);
	vt_cfg_wr(t, fd, VT_PCI_INT_PIN, 1, before ^ 0xff);
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_INT_PIN, 1) == before,
		  "pin changed");
	VT_CHECKF(t, before == 1, "edu interrupt pin %u", before);

	/* Interrupt line and cache line size are virtual bytes. */
	real = vt_real_cfg(t, VT_EDU0, VT_PCI_INT_LINE, 1);
	vt_cfg_wr(t, fd, VT_PCI_INT_LINE, 1, real ^ 0x5a);
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_INT_LINE, 1) == (real ^ 0x5a),
		  "interrupt line not virtual");
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, VT_PCI_INT_LINE, 1) == real,
		  "interrupt line reached the device");
	vt_cfg_wr(t, fd, VT_PCI_CACHELINE, 1, 0x10);
	VT_CHECKF(t, vt_cfg_rd(t, fd, VT_PCI_CACHELINE, 1) == 0x10,
		  "cache line size");

	/* Bounds: the config region is exactly config space. */
	VT_ERRNO(t, pread(fd, &before, 4,
			  vt_roff(VFIO_PCI_CONFIG_REGION_INDEX) +
			  vt_sysfs_config_size(t, VT_EDU0)), EINVAL);
	VT_CHECKF(t, pread(fd, &before, 4,
			   vt_roff(VFIO_PCI_CONFIG_REGION_INDEX) +
			   vt_sysfs_config_size(t, VT_EDU0) - 2) == 2,
		  "read across the end of config space not cut short");
	VT_ERRNO(t, pread(fd, c->noaccess, 4,
			  vt_roff(VFIO_PCI_CONFIG_REGION_INDEX)), EFAULT);
}

static void test_config_msi_cap(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	uint32_t pos, flags, addr, rflags;
	int32_t efd;

	pos = vt_find_cap(t, fd, VT_PCI_CAP_ID_MSI);
	VT_CHECKF(t, pos, "edu has no MSI capability in the virtual config");
	flags = vt_cfg_rd(t, fd, pos + VT_PCI_MSI_FLAGS, 2);
	addr = vt_cfg_rd(t, fd, pos + VT_PCI_MSI_ADDR_LO, 4);
	VT_CHECKF(t, !(flags & VT_PCI_MSI_ENABLE), "MSI enabled at open: 0x%x",
		  flags);

	/* The kernel owns MSI: enable and address writes are dropped. */
	vt_cfg_wr(t, fd, pos + VT_PCI_MSI_FLAGS, 2, flags | VT_PCI_MSI_ENABLE);
	vt_cfg_wr(t, fd, pos + VT_PCI_MSI_ADDR_LO, 4, 0xfee00000);
	VT_CHECKF(t, vt_cfg_rd(t, fd, pos + VT_PCI_MSI_FLAGS, 2) == flags,
		  "MSI flags now 0x%x",
		  vt_cfg_rd(t, fd, pos + VT_PCI_MSI_FLAGS, 2));
	VT_CHECKF(t, vt_cfg_rd(t, fd, pos + VT_PCI_MSI_ADDR_LO, 4) == addr,
		  "MSI address written");
	rflags = vt_real_cfg(t, VT_EDU0, pos + VT_PCI_MSI_FLAGS, 2);
	VT_CHECKF(t, !(rflags & VT_PCI_MSI_ENABLE),
		  "MSI enabled in the device");

	/* Enabled through the ioctl, the capability shows it. */
	efd = vt_ctx_eventfd(t, c, 0);
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &efd);
	flags = vt_cfg_rd(t, fd, pos + VT_PCI_MSI_FLAGS, 2);
	VT_CHECKF(t, (flags & VT_PCI_MSI_ENABLE) &&
		  (vt_real_cfg(t, VT_EDU0, pos + VT_PCI_MSI_FLAGS, 2) &
		   VT_PCI_MSI_ENABLE), "MSI on but flags 0x%x", flags);
	/* ... and the user still cannot turn it off behind the kernel. */
	vt_cfg_wr(t, fd, pos + VT_PCI_MSI_FLAGS, 2, flags & ~VT_PCI_MSI_ENABLE);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, pos + VT_PCI_MSI_FLAGS, 2) &
		  VT_PCI_MSI_ENABLE, "user disabled MSI");
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, NULL);
	VT_CHECKF(t, !(vt_cfg_rd(t, fd, pos + VT_PCI_MSI_FLAGS, 2) &
		       VT_PCI_MSI_ENABLE),
		  "MSI still shown enabled after count 0");
}

int main(void)
{
	struct vt t = { .prog = "t-device-config" };
	struct vt_ctx c;

	if (vt_ctx_setup(&c)) {
		fprintf(stderr, "t-device-config: mmap PROT_NONE: %s\n",
			strerror(errno));
		return 2;
	}
	VT_RUN_CTX(&t, &c, test_config_ids);
	VT_RUN_CTX(&t, &c, test_config_bars);
	VT_RUN_CTX(&t, &c, test_config_command);
	VT_RUN_CTX(&t, &c, test_config_dropped);
	VT_RUN_CTX(&t, &c, test_config_msi_cap);
	return vt_done(&t);
}
