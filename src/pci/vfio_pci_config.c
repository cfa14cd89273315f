// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms PCI bus driver: the virtualised config space (region 7).
 *
 * What a read or write of each dword does is data: the header's and each
 * capability's permissions in vfio_pci_config_perm.h.  The code here
 * carries them out a dword at a time:
 *
 *  - BAR and ROM BAR writes land in a shadow masked by the BAR size; the
 *    real BARs never change.
 *  - Command register writes reach the device under memory_lock (see
 *    vfio_pci_private.h): mmaps are zapped before memory decode goes off,
 *    and BARs the device lost are put back before decode comes on.  The
 *    decode bits written are kept in vdev->decode, which BAR accesses
 *    check; a VF's memory enable lives there only.
 *  - A VF's vendor and device IDs come from the kernel's pci_dev.
 *  - Virtual bytes (cache line size, latency timer, interrupt line) live
 *    in the shadow; everything else reads the real register and ignores
 *    writes.  That includes the MSI and MSI-X capabilities, which the
 *    kernel programs from the IRQ ioctls: reads show what the device
 *    really has (enable bits, vector counts, the kernel's address/data).
 *
 * Callers hold vdev->lock.
 */
#include <linux/pci.h>

#include "vfio_pci_config_perm.h"
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

static u32 vfio_pci_config_dword(void *ctx, u32 where)
{
	u32 val;

	if (pci_read_config_dword(ctx, where, &val))
		return ~0U;
	return val;
}

/*
 * From open: the shadow starts out as the host configured the device,
 * and the map of capabilities is taken once (their layout is fixed).
 */
void vfio_pci_config_init(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	const struct vfio_cfg_perm *perm;
	u32 where, val;
	u16 cmd;

	vfio_cfg_map_caps(vfio_pci_config_dword, pdev, pdev->cfg_size,
			  vdev->cfg_map);

	for (where = 0; where < PCI_STD_HEADER_SIZEOF; where += 4) {
		perm = &vfio_cfg_header[where / 4];
		pci_read_config_dword(pdev, where, &val);
		switch (perm->kind) {
		case VFIO_CFG_BAR:
			vdev->rbar[(where - PCI_BASE_ADDRESS_0) / 4] = val;
			val = vfio_pci_bar_value(pdev,
					(where - PCI_BASE_ADDRESS_0) / 4, val);
			break;
		case VFIO_CFG_ROM:
			val = vfio_pci_rom_value(pdev, val);
			break;
		}
		vdev->vconfig[where / 4] = val;
	}
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	vdev->vcmd_intx = cmd & PCI_COMMAND_INTX_DISABLE;

	/* A VF's virtual memory enable starts off, as its real one reads. */
	down_write(&vdev->memory_lock);
	vdev->decode = 0;
	vfio_pci_decode_sync(vdev);
	up_write(&vdev->memory_lock);
}

static int vfio_pci_read_dword(struct vfio_pci_device *vdev, u32 where,
			       u32 *val)
{
	const struct vfio_cfg_perm *perm;
	int ret;

	perm = vfio_cfg_perm_at(vdev->cfg_map, where);
	if (perm->kind == VFIO_CFG_BAR || perm->kind == VFIO_CFG_ROM) {
		*val = vdev->vconfig[where / 4];
		return 0;
	}

	ret = pci_user_read_config_dword(vdev->pdev, where, val);
	if (ret)
		return ret;

	switch (perm->kind) {
	case VFIO_CFG_ID:
		if (vdev->pdev->is_virtfn)
			*val = vdev->pdev->vendor | vdev->pdev->device << 16;
		break;
	case VFIO_CFG_COMMAND:
		/* decode: its writers hold lock too. */
		*val = (*val & 0xffff0000) |
		       vfio_cfg_command_view(*val & 0xffff, vdev->vcmd_intx,
					     vdev->decode,
					     vdev->pdev->no_command_memory);
		break;
	case VFIO_CFG_VIRT:
		*val = vfio_cfg_merge(*val, vdev->vconfig[where / 4],
				      perm->virt);
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

static void vfio_pci_write_command(struct vfio_pci_device *vdev, u16 val,
				   u32 write)
{
	const u16 decode = PCI_COMMAND_IO | PCI_COMMAND_MEMORY;
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

	/*
	 * The INTx handler flips INTx disable under irqlock.  Without a
	 * real memory enable, the user's bit is only ours to keep.
	 */
	if (pdev->no_command_memory)
		write &= ~PCI_COMMAND_MEMORY;
	spin_lock_irq(&vdev->irqlock);
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	new = vfio_cfg_command(cmd, val, write,
			       vdev->irq_type != VFIO_PCI_IRQ_NONE);
	if (new != cmd)
		pci_write_config_word(pdev, PCI_COMMAND, new);
	spin_unlock_irq(&vdev->irqlock);
	if (pdev->no_command_memory)
		vdev->decode = (new & PCI_COMMAND_IO) |
			       (val & PCI_COMMAND_MEMORY);
	else
		vdev->decode = new & decode;
	up_write(&vdev->memory_lock);
}

/* Apply the bytes of @val selected by @bytes to the dword at @where. */
static void vfio_pci_write_dword(struct vfio_pci_device *vdev, u32 where,
				 u32 val, u32 bytes)
{
	const struct vfio_cfg_perm *perm;
	struct pci_dev *pdev = vdev->pdev;
	u32 *shadow = NULL;
	u32 cur;

	perm = vfio_cfg_perm_at(vdev->cfg_map, where);
	if (where < PCI_STD_HEADER_SIZEOF)
		shadow = &vdev->vconfig[where / 4];

	switch (perm->kind) {
	case VFIO_CFG_BAR:
		cur = vfio_cfg_merge(*shadow, val, bytes);
		*shadow = vfio_pci_bar_value(pdev,
					     (where - PCI_BASE_ADDRESS_0) / 4,
					     cur);
		break;
	case VFIO_CFG_ROM:
		*shadow = vfio_pci_rom_value(pdev,
					     vfio_cfg_merge(*shadow, val, bytes));
		break;
	case VFIO_CFG_VIRT:
		*shadow = vfio_cfg_merge(*shadow, val, bytes & perm->virt);
		break;
	case VFIO_CFG_COMMAND:
		if (!(bytes & perm->write))
			break;
		if (vfio_pci_read_dword(vdev, where, &cur))
			break;
		cur = vfio_cfg_merge(cur, val, bytes);
		vfio_pci_write_command(vdev, cur & 0xffff, perm->write);
		break;
	default:
		/* The device's, or the kernel's: dropped. */
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
		u32 bytes = vfio_cfg_bytes(shift, n);
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
