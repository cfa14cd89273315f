// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms PCI bus driver: read/write of the BARs (regions 0-5) and the
 * expansion ROM (region 6).
 *
 * Device registers often only decode naturally aligned accesses of the
 * size they were designed for.  An access of exactly 1, 2, 4 or (MMIO) 8
 * aligned bytes is done as one access of that size; anything longer is
 * split into naturally aligned 4 byte accesses (2 and 1 at unaligned
 * ends), because most registers are 32 bits wide and many devices ignore
 * 8 byte accesses to them.
 * Data is kept in the device's little-endian byte order, so a read of a
 * 32-bit register gives the same bytes as the device would put on the bus.
 * An access starting outside the region fails with -EINVAL; one running
 * past its end is cut short.
 */
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/pci.h>

#include "vfio_pci_private.h"

static size_t vfio_pci_access_size(u64 off, size_t left, size_t max)
{
	if (max >= 8 && left >= 8 && !(off & 7))
		return 8;
	if (left >= 4 && !(off & 3))
		return 4;
	if (left >= 2 && !(off & 1))
		return 2;
	return 1;
}

/* One access of 1, 2, 4 or 8 bytes, in the device's (little) endianness. */
union vfio_pci_io_val {
	u8 b;
	__le16 w;
	__le32 l;
	__le64 q;
};

static void vfio_pci_io_read(void __iomem *addr, size_t n, char *buf)
{
	union vfio_pci_io_val v;

	switch (n) {
	case 8:
		v.q = cpu_to_le64(readq(addr));
		break;
	case 4:
		v.l = cpu_to_le32(ioread32(addr));
		break;
	case 2:
		v.w = cpu_to_le16(ioread16(addr));
		break;
	default:
		v.b = ioread8(addr);
		break;
	}
	memcpy(buf, &v, n);
}

static void vfio_pci_io_write(void __iomem *addr, size_t n, const char *buf)
{
	union vfio_pci_io_val v;

	memcpy(&v, buf, n);
	switch (n) {
	case 8:
		writeq(le64_to_cpu(v.q), addr);
		break;
	case 4:
		iowrite32(le32_to_cpu(v.l), addr);
		break;
	case 2:
		iowrite16(le16_to_cpu(v.w), addr);
		break;
	default:
		iowrite8(v.b, addr);
		break;
	}
}

ssize_t vfio_pci_bar_rw(struct vfio_pci_device *vdev, char *buf,
			size_t count, loff_t pos, bool write)
{
	struct pci_dev *pdev = vdev->pdev;
	int bar = VFIO_PCI_INDEX(pos);
	u64 off = pos & VFIO_PCI_OFFSET_MASK;
	u64 size = pci_resource_len(pdev, bar);
	void __iomem *base = vdev->barmap[bar];
	size_t max = 4, done = 0;

	if (!base || off >= size)
		return -EINVAL;
	count = min_t(u64, count, size - off);
	/* 8 byte accesses only when asked for exactly (never for ports). */
	if (count == 8 && vfio_pci_bar_is_mem(pdev, bar))
		max = 8;

	while (done < count) {
		size_t n = vfio_pci_access_size(off + done, count - done, max);

		if (write)
			vfio_pci_io_write(base + off + done, n, buf + done);
		else
			vfio_pci_io_read(base + off + done, n, buf + done);
		done += n;
	}
	return done;
}

/*
 * The ROM is mapped only while it is read: pci_map_rom() turns its decoder
 * on (the ROM may share a decoder with a BAR) and pci_unmap_rom() turns it
 * off again.  The caller holds vdev->lock, as this changes config space.
 */
ssize_t vfio_pci_rom_read(struct vfio_pci_device *vdev, char *buf,
			  size_t count, loff_t pos)
{
	struct pci_dev *pdev = vdev->pdev;
	u64 off = pos & VFIO_PCI_OFFSET_MASK;
	u64 size = pci_resource_len(pdev, PCI_ROM_RESOURCE);
	void __iomem *rom;
	size_t romsize;

	lockdep_assert_held(&vdev->lock);

	if (off >= size)
		return -EINVAL;
	count = min_t(u64, count, size - off);

	rom = pci_map_rom(pdev, &romsize);
	if (!rom)
		return -EIO;
	/* pci_map_rom() maps the whole BAR; romsize is just the image. */
	memcpy_fromio(buf, rom + off, count);
	pci_unmap_rom(pdev, rom);
	return count;
}
