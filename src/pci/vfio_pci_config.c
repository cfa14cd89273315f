// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms PCI bus driver: the virtualised config space (region 7).
 *
 * The user must never move the device's decoding windows, its interrupt
 * routing or its power state behind the host's back, so config space is
 * filtered a dword at a time:
 *
 *  - BARs and the ROM BAR are virtual: writes land in a shadow that is
 *    masked by the BAR size, so sizing with all ones reads back the size
 *    mask and any other value reads back as written (minus the bits below
 *    the size); the real BARs never change.
 *  - The command register passes memory, I/O and bus master enable to
 *    the device (DMA needs bus master).  Decode changes under memory_lock
 *    (see vfio_pci_private.h): mmaps are zapped before memory decode goes
 *    off, and BARs the device lost are put back before decode comes on.
 *    INTx disable passes through too,
 *    except while an IRQ index is active: then the kernel owns that bit
 *    and the user's value is only remembered.  All other bits are dropped.
 *  - Cache line size, latency timer and interrupt line are plain virtual
 *    bytes: harmless to the user, meaningless to the device.
 *  - Everything else reads the real register and ignores writes.  That
 *    includes the MSI and MSI-X capabilities, which the kernel programs
 *    from VFIO_DEVICE_SET_IRQ_EVENTFDS: reads show what the device really
 *    has (enable bits, vector counts, the kernel's address and data).
 *
 * Callers hold vdev->lock.
 */
#include <linux/pci.h>

#include "vfio_pci_private.h"

/*
 * The bits of BAR register @bar that the user can set (@mask) and the
 * read-only type bits it always shows (@type).  The upper half of a 64-bit
 * BAR has no resource of its own: it takes its mask from the lower half.
 */
static void vfio_pci_bar_bits(struct pci_dev *pdev, int bar, u32 *mask,
			      u32 *type)
{
	unsigned long flags;
	u64 size;

	*mask = 0;
	*type = 0;
	if (bar > 0 && (pci_resource_flags(pdev, bar - 1) & IORESOURCE_MEM_64) &&
	    pci_resource_len(pdev, bar - 1)) {
		size = pci_resource_len(pdev, bar - 1);
		*mask = upper_32_bits(~(size - 1));
		return;
	}

	size = pci_resource_len(pdev, bar);
	if (!size)
		return;
	flags = pci_resource_flags(pdev, bar);
	if (flags & IORESOURCE_IO) {
		*mask = lower_32_bits(~(size - 1)) & PCI_BASE_ADDRESS_IO_MASK;
		*type = PCI_BASE_ADDRESS_SPACE_IO;
		return;
	}
	*mask = lower_32_bits(~(size - 1)) & PCI_BASE_ADDRESS_MEM_MASK;
	if (flags & IORESOURCE_MEM_64)
		*type |= PCI_BASE_ADDRESS_MEM_TYPE_64;
	if (flags & IORESOURCE_PREFETCH)
		*type |= PCI_BASE_ADDRESS_MEM_PREFETCH;
}

static u32 vfio_pci_bar_value(struct pci_dev *pdev, int bar, u32 val)
{
	u32 mask, type;

	vfio_pci_bar_bits(pdev, bar, &mask, &type);
	return (val & mask) | type;
}

static u32 vfio_pci_rom_value(struct pci_dev *pdev, u32 val)
{
	u64 size = pci_resource_len(pdev, PCI_ROM_RESOURCE);
	u32 mask;

	if (!size)
		return 0;
	mask = lower_32_bits(~(size - 1)) & PCI_ROM_ADDRESS_MASK;
	return (val & mask) | (val & PCI_ROM_ADDRESS_ENABLE);
}

/* From open: the shadow starts out as the host configured the device. */
void vfio_pci_config_init(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	u32 val;
	u16 cmd;
	int i;

	for (i = 0; i < VFIO_PCI_NUM_BARS; i++) {
		pci_read_config_dword(pdev, PCI_BASE_ADDRESS_0 + 4 * i, &val);
		vdev->rbar[i] = val;
		vdev->vbar[i] = vfio_pci_bar_value(pdev, i, val);
	}
	pci_read_config_dword(pdev, PCI_ROM_ADDRESS, &val);
	vdev->vrom = vfio_pci_rom_value(pdev, val);
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	vdev->vcmd_intx = cmd & PCI_COMMAND_INTX_DISABLE;
	pci_read_config_byte(pdev, PCI_CACHE_LINE_SIZE, &vdev->vcacheline);
	pci_read_config_byte(pdev, PCI_LATENCY_TIMER, &vdev->vlatency);
	pci_read_config_byte(pdev, PCI_INTERRUPT_LINE, &vdev->vintline);
}

static int vfio_pci_read_dword(struct vfio_pci_device *vdev, u32 where,
			       u32 *val)
{
	struct pci_dev *pdev = vdev->pdev;
	int ret;

	switch (where) {
	case PCI_BASE_ADDRESS_0 ... PCI_BASE_ADDRESS_5:
		*val = vdev->vbar[(where - PCI_BASE_ADDRESS_0) / 4];
		return 0;
	case PCI_ROM_ADDRESS:
		*val = vdev->vrom;
		return 0;
	}

	ret = pci_user_read_config_dword(pdev, where, val);
	if (ret)
		return ret;

	switch (where) {
	case PCI_COMMAND:
		*val = (*val & ~PCI_COMMAND_INTX_DISABLE) | vdev->vcmd_intx;
		break;
	case PCI_CACHE_LINE_SIZE:
		*val = (*val & 0xffff0000) | vdev->vcacheline |
		       (vdev->vlatency << 8);
		break;
	case PCI_INTERRUPT_LINE:
		*val = (*val & ~0xffU) | vdev->vintline;
		break;
	}
	return 0;
}

/*
 * A device may lose its BAR registers behind our back (a reset of its
 * own, a power state change): decoding then would claim whatever address
 * the registers hold now.  Put back the values the host assigned at open.
 */
static void vfio_pci_bar_restore(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	bool lost = false;
	u32 val;
	int i;

	lockdep_assert_held_write(&vdev->memory_lock);
	for (i = 0; i < VFIO_PCI_NUM_BARS; i++) {
		pci_read_config_dword(pdev, PCI_BASE_ADDRESS_0 + 4 * i, &val);
		if (val != vdev->rbar[i])
			lost = true;
	}
	if (!lost)
		return;
	pci_info(pdev, "BARs lost: restoring them\n");
	for (i = 0; i < VFIO_PCI_NUM_BARS; i++)
		pci_write_config_dword(pdev, PCI_BASE_ADDRESS_0 + 4 * i,
				       vdev->rbar[i]);
}

static void vfio_pci_write_command(struct vfio_pci_device *vdev, u16 val)
{
	const u16 decode = PCI_COMMAND_IO | PCI_COMMAND_MEMORY;
	const u16 pass = decode | PCI_COMMAND_MASTER;
	struct pci_dev *pdev = vdev->pdev;
	u16 cmd, new;

	vdev->vcmd_intx = val & PCI_COMMAND_INTX_DISABLE;

	down_write(&vdev->memory_lock);
	/*
	 * No mapping may outlive memory decode: an access through it would
	 * reach a device that does not decode it.  Zapped before decode goes
	 * (faults wait for memory_lock, then see it off); with decode off
	 * already there is nothing mapped, but zapping again costs little.
	 */
	if (!(val & PCI_COMMAND_MEMORY))
		vfio_device_zap_mmaps(vdev->vfio);
	if (val & decode)
		vfio_pci_bar_restore(vdev);

	/* The INTx handler flips INTx disable under irqlock. */
	spin_lock_irq(&vdev->irqlock);
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	new = (cmd & ~pass) | (val & pass);
	if (vdev->irq_type == VFIO_PCI_IRQ_NONE)
		new = (new & ~PCI_COMMAND_INTX_DISABLE) | vdev->vcmd_intx;
	if (new != cmd)
		pci_write_config_word(pdev, PCI_COMMAND, new);
	spin_unlock_irq(&vdev->irqlock);
	up_write(&vdev->memory_lock);
}

/* Apply the bytes of @val selected by @bytes to the dword at @where. */
static void vfio_pci_write_dword(struct vfio_pci_device *vdev, u32 where,
				 u32 val, u32 bytes)
{
	struct pci_dev *pdev = vdev->pdev;
	u32 cur;
	int bar;

	switch (where) {
	case PCI_BASE_ADDRESS_0 ... PCI_BASE_ADDRESS_5:
		bar = (where - PCI_BASE_ADDRESS_0) / 4;
		cur = (vdev->vbar[bar] & ~bytes) | (val & bytes);
		vdev->vbar[bar] = vfio_pci_bar_value(pdev, bar, cur);
		break;
	case PCI_ROM_ADDRESS:
		cur = (vdev->vrom & ~bytes) | (val & bytes);
		vdev->vrom = vfio_pci_rom_value(pdev, cur);
		break;
	case PCI_COMMAND:
		/* The status half (bytes 2-3) is not the user's to clear. */
		if (!(bytes & 0xffff))
			break;
		if (vfio_pci_read_dword(vdev, where, &cur))
			break;
		cur = (cur & ~bytes) | (val & bytes);
		vfio_pci_write_command(vdev, cur & 0xffff);
		break;
	case PCI_CACHE_LINE_SIZE:
		if (bytes & 0xff)
			vdev->vcacheline = val & 0xff;
		if (bytes & 0xff00)
			vdev->vlatency = (val >> 8) & 0xff;
		break;
	case PCI_INTERRUPT_LINE:
		if (bytes & 0xff)
			vdev->vintline = val & 0xff;
		break;
	default:
		/* Unknown or kernel-owned: dropped. */
		break;
	}
}

/*
 * read/write on region 7.  Any length at any offset works: the access is
 * done one dword (or the part of it the user asked for) at a time.
 */
ssize_t vfio_pci_config_rw(struct vfio_pci_device *vdev, char *buf,
			   size_t count, loff_t pos, bool write)
{
	struct pci_dev *pdev = vdev->pdev;
	size_t done = 0;
	int ret = 0;

	lockdep_assert_held(&vdev->lock);

	if (pos < 0 || pos >= pdev->cfg_size)
		return -EINVAL;
	count = min_t(size_t, count, pdev->cfg_size - pos);

	while (done < count) {
		u32 off = pos + done;
		u32 where = off & ~3U;
		u32 shift = off & 3;
		size_t n = min_t(size_t, count - done, 4 - shift);
		u32 bytes = (n == 4 ? ~0U : (1U << (8 * n)) - 1) << (8 * shift);
		__le32 le = 0;
		u32 val;

		if (write) {
			memcpy((u8 *)&le + shift, buf + done, n);
			vfio_pci_write_dword(vdev, where, le32_to_cpu(le),
					     bytes);
		} else {
			ret = vfio_pci_read_dword(vdev, where, &val);
			if (ret)
				break;
			le = cpu_to_le32(val);
			memcpy(buf + done, (u8 *)&le + shift, n);
		}
		done += n;
	}
	return done ? done : ret;
}
