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
 *
 * A BAR is accessed only while the device decodes it (memory_lock, see
 * vfio_pci_private.h): otherwise the access fails with -EIO.  The buffers
 * are the core's kernel bounce buffers, so that no copy to or from user
 * memory, which may fault on the device's own mmap, happens under
 * memory_lock.
 *
 * The MSI-X table belongs to the kernel, which programs it from
 * VFIO_DEVICE_SET_IRQ_EVENTFDS: read/write skip it, as upstream does
 * (reads of it return all ones, writes are dropped), so that a user who
 * writes a whole BAR back cannot undo the kernel's vectors.  The PBA is
 * read-only by specification and passes through.
 */
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/pci.h>
#include <linux/vgaarb.h>

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

static void vfio_pci_io_read(void __iomem *addr, size_t n, u8 *buf)
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

static void vfio_pci_io_write(void __iomem *addr, size_t n, const u8 *buf)
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

/*
 * Access @count bytes of @bar at @off from or into @data, with the BAR
 * decoded all along, or fail with -EIO.  Splits as the file's top says;
 * no access crosses an edge of the MSI-X table, which is skipped.
 */
static int vfio_pci_bar_chunk(struct vfio_pci_device *vdev, int bar,
			      u64 off, u8 *data, size_t count, size_t max,
			      bool write)
{
	void __iomem *base = vdev->barmap[bar];
	u64 xstart = 0, xend = 0;
	size_t done = 0;

	if (bar == vdev->msix_bar) {
		xstart = vdev->msix_offset;
		xend = xstart + vdev->msix_size;
	}

	down_read(&vdev->memory_lock);
	if (!vfio_pci_bar_decoded(vdev, bar)) {
		up_read(&vdev->memory_lock);
		return -EIO;
	}
	while (done < count) {
		u64 pos = off + done;
		size_t left = count - done, n;

		if (pos >= xstart && pos < xend) {
			n = min_t(u64, left, xend - pos);
			if (!write)
				memset(data + done, 0xff, n);
			done += n;
			continue;
		}
		if (pos < xstart)
			left = min_t(u64, left, xstart - pos);
		n = vfio_pci_access_size(pos, left, max);
		if (write)
			vfio_pci_io_write(base + pos, n, data + done);
		else
			vfio_pci_io_read(base + pos, n, data + done);
		done += n;
	}
	up_read(&vdev->memory_lock);
	return 0;
}

ssize_t vfio_pci_bar_rw(struct vfio_pci_device *vdev, char *buf,
			size_t count, loff_t pos, bool write)
{
	struct pci_dev *pdev = vdev->pdev;
	int bar = VFIO_PCI_INDEX(pos);
	u64 off = pos & VFIO_PCI_OFFSET_MASK;
	u64 size = pci_resource_len(pdev, bar);
	size_t max = 4;
	int ret;

	if (!vdev->barmap[bar] || off >= size)
		return -EINVAL;
	count = min_t(u64, count, size - off);
	/* 8 byte accesses only when asked for exactly (never for ports). */
	if (count == 8 && vfio_pci_bar_is_mem(pdev, bar))
		max = 8;

	ret = vfio_pci_bar_chunk(vdev, bar, off, (u8 *)buf, count, max,
				 write);
	return ret ? ret : count;
}

/*
 * The ROM is mapped only while it is read: pci_map_rom() turns its decoder
 * on (the ROM may share a decoder with a BAR) and pci_unmap_rom() turns it
 * off again.  The ROM decodes only with memory decode on too, which the
 * user may have turned off: it is turned on for the read, under
 * memory_lock so that no user access sees it, and put back as the user
 * set it.  The caller holds vdev->lock, as this changes config space;
 * @buf is a kernel buffer (the core bounces user memory).
 */
ssize_t vfio_pci_rom_read(struct vfio_pci_device *vdev, char *buf,
			  size_t count, loff_t pos)
{
	struct pci_dev *pdev = vdev->pdev;
	u64 off = pos & VFIO_PCI_OFFSET_MASK;
	u64 size = pci_resource_len(pdev, PCI_ROM_RESOURCE);
	void __iomem *rom;
	size_t romsize;
	u16 cmd;

	lockdep_assert_held(&vdev->lock);

	if (off >= size)
		return -EINVAL;
	count = min_t(u64, count, size - off);

	/* Memory decode on around the read, as the user left it after. */
	cmd = vfio_pci_memory_lock_and_enable(vdev);
	/* pci_map_rom() maps the whole BAR; romsize is just the image. */
	rom = pci_map_rom(pdev, &romsize);
	if (rom) {
		memcpy_fromio(buf, rom + off, count);
		pci_unmap_rom(pdev, rom);
	}
	vfio_pci_memory_unlock_and_restore(vdev, cmd);
	return rom ? count : -EIO;
}

/*
 * The legacy VGA ranges of region 8, at their own addresses: the
 * frame buffer and text memory, and the two banks of VGA registers.
 */
static const struct vfio_pci_vga_range {
	u32	start;
	u32	len;
	bool	io;
} vfio_pci_vga_ranges[] = {
	{ 0xa0000, 0x20000, false },
	{ 0x3b0, 0x0c, true },
	{ 0x3c0, 0x20, true },
};

static const struct vfio_pci_vga_range *vfio_pci_vga_range(u64 off)
{
	const struct vfio_pci_vga_range *r;

	for (r = vfio_pci_vga_ranges;
	     r < vfio_pci_vga_ranges + ARRAY_SIZE(vfio_pci_vga_ranges); r++)
		if (off >= r->start && off < r->start + r->len)
			return r;
	return NULL;
}

/*
 * Region 8.  The VGA arbiter routes the legacy range to this device for
 * the access (it may wait for another VGA user: interruptibly), and as
 * for a BAR, nothing reaches a device whose decode of it is off.
 */
ssize_t vfio_pci_vga_rw(struct vfio_pci_device *vdev, char *buf,
			size_t count, loff_t pos, bool write)
{
	u64 off = pos & VFIO_PCI_OFFSET_MASK;
	const struct vfio_pci_vga_range *r = vfio_pci_vga_range(off);
	unsigned int rsrc;
	void __iomem *base;
	size_t done, n;
	ssize_t ret;

	if (!vdev->vga || !r)
		return -EINVAL;
	count = min_t(u64, count, r->start + r->len - off);
	rsrc = r->io ? VGA_RSRC_LEGACY_IO : VGA_RSRC_LEGACY_MEM;
	ret = vga_get_interruptible(vdev->pdev, rsrc);
	if (ret)
		return ret;
	base = r->io ? ioport_map(r->start, r->len) :
		       ioremap(r->start, r->len);
	if (!base) {
		ret = -ENOMEM;
		goto out_put;
	}

	down_read(&vdev->memory_lock);
	if (!vfio_pci_decodes(vdev, r->io)) {
		ret = -EIO;
		goto out_unlock;
	}
	for (done = 0; done < count; done += n) {
		n = vfio_pci_access_size(off + done, count - done, 4);
		if (write)
			vfio_pci_io_write(base + off - r->start + done, n,
					  (u8 *)buf + done);
		else
			vfio_pci_io_read(base + off - r->start + done, n,
					 (u8 *)buf + done);
	}
	ret = count;
out_unlock:
	up_read(&vdev->memory_lock);
	if (r->io)
		ioport_unmap(base);
	else
		iounmap(base);
out_put:
	vga_put(vdev->pdev, rsrc);
	return ret;
}
