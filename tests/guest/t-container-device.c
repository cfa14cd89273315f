// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-container-device: the PCI driver's answers to today's VFIO_DEVICE_*
 * ioctls, on a device fd opened through /dev/vfio/vfio and a group node
 * /dev/vfio/N, built against the distribution's <linux/vfio.h>: every
 * region's and IRQ index's info, VFIO_DEVICE_SET_IRQS with each data
 * type and action on a real edu (INTx and MSI raised by the device) and
 * every way upstream refuses a header, RESET, the hot reset ioctls and
 * the ioctls we do not offer.  The MSI-X cases (partial vector ranges,
 * the MSI-X BAR's capability) need the e1000e of the msix machine
 * (tests/vm/run-suite.sh --machine msix) and skip without it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vt.h"
#include "vtcontainer.h"

#define E1000E_VENDOR	0x8086
#define E1000E_DEVICE	0x10d3
#define E1000E_MSIX_BAR	3		/* QEMU's e1000e: table and PBA */
#define E1000E_VECTORS	5
#define SET_HDR		((uint32_t)sizeof(struct vfio_irq_set))
#define PCI_CAP_ID_EXP	0x10

static void dev_open(struct vt *t, struct vtc_dev *d, const char *dev)
{
	VT_CHECKF(t, vtc_open_dev(d, dev, 0) == 0, "open %s through "
		  "/dev/vfio/vfio and its group node: %s", dev,
		  strerror(errno));
}

static void edu_open(struct vt *t, struct vtc_dev *d, struct vt_edu *e)
{
	dev_open(t, d, VT_EDU0);
	VT_CHECKF(t, vtc_edu_init(e, d->device_fd) == 0, "edu %s: %s",
		  VT_EDU0, strerror(errno));
}

static void wr(struct vt *t, const struct vt_edu *e, uint32_t reg,
	       uint32_t v)
{
	VT_CHECKF(t, vt_edu_write(e, reg, v) == 0, "write BAR0 0x%x: %s", reg,
		  strerror(errno));
}

static void edu_ack(struct vt *t, const struct vt_edu *e)
{
	uint32_t v = 0;

	VT_CHECKF(t, vt_edu_read(e, VT_EDU_IRQ_STATUS, &v) == 0,
		  "read IRQ status: %s", strerror(errno));
	wr(t, e, VT_EDU_IRQ_ACK, v);
}

static int efd_new(struct vt *t)
{
	return VT_OK(t, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

/* Did efd fire within ms?  Its counter is read (reset) when it did. */
/* VFIO_DEVICE_SET_IRQS with any header and up to 8 data bytes. */
static int set_irqs(int fd, uint32_t argsz, uint32_t flags, uint32_t index,
		    uint32_t start, uint32_t count, const void *data,
		    size_t len)
{
	struct {
		struct vfio_irq_set hdr;
		uint8_t data[64];
	} s;

	memset(&s, 0, sizeof(s));
	s.hdr.argsz = argsz;
	s.hdr.flags = flags;
	s.hdr.index = index;
	s.hdr.start = start;
	s.hdr.count = count;
	if (len)
		memcpy(s.data, data, len);
	return ioctl(fd, VFIO_DEVICE_SET_IRQS, &s);
}

/* One eventfd on [start, start + 1) of index, or -1 to disconnect it. */
static int set_efd(int fd, uint32_t action, uint32_t index, uint32_t start,
		   int32_t efd)
{
	return set_irqs(fd, SET_HDR + 4, action | VFIO_IRQ_SET_DATA_EVENTFD,
			index, start, 1, &efd, 4);
}

static int set_bool(int fd, uint32_t action, uint32_t index, uint8_t b)
{
	return set_irqs(fd, SET_HDR + 1, action | VFIO_IRQ_SET_DATA_BOOL,
			index, 0, 1, &b, 1);
}

static int set_none(int fd, uint32_t action, uint32_t index, uint32_t start,
		    uint32_t count)
{
	return set_irqs(fd, SET_HDR, action | VFIO_IRQ_SET_DATA_NONE, index,
			start, count, NULL, 0);
}

#define TRIG	VFIO_IRQ_SET_ACTION_TRIGGER
#define MASK	VFIO_IRQ_SET_ACTION_MASK
#define UNMASK	VFIO_IRQ_SET_ACTION_UNMASK
#define INTX	VFIO_PCI_INTX_IRQ_INDEX
#define MSI	VFIO_PCI_MSI_IRQ_INDEX
#define MSIX	VFIO_PCI_MSIX_IRQ_INDEX
#define ERR	VFIO_PCI_ERR_IRQ_INDEX
#define REQ	VFIO_PCI_REQ_IRQ_INDEX

/* Has the device a PCI Express capability (read through config)? */
static int is_pcie(struct vt *t, int fd)
{
	struct vfio_region_info r;
	uint8_t pos = 0, id = 0;
	int n;

	VT_OK(t, vtc_region_info(fd, VFIO_PCI_CONFIG_REGION_INDEX, &r));
	VT_OK(t, pread(fd, &pos, 1, r.offset + 0x34));
	for (n = 0; pos && n < 48; n++) {
		VT_OK(t, pread(fd, &id, 1, r.offset + pos));
		if (id == PCI_CAP_ID_EXP)
			return 1;
		VT_OK(t, pread(fd, &pos, 1, r.offset + pos + 1));
	}
	return 0;
}

/* ---- info --------------------------------------------------------------- */

static void test_get_info(struct vt *t, void *arg)
{
	struct vfio_device_info info;
	char path[128], methods[256] = "";
	struct vtc_dev d;
	int has_reset;

	(void)arg;
	dev_open(t, &d, VT_EDU0);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset_method",
		 VT_EDU0);
	has_reset = vt_read_file(path, methods, sizeof(methods)) > 0;

	memset(&info, 0xa5, sizeof(info));
	info.argsz = sizeof(info);
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_INFO, &info));
	VT_CHECKF(t, info.flags & VFIO_DEVICE_FLAGS_PCI, "flags 0x%x: no "
		  "FLAGS_PCI", info.flags);
	VT_CHECKF(t, !!(info.flags & VFIO_DEVICE_FLAGS_RESET) == has_reset,
		  "flags 0x%x, reset_method '%s'", info.flags, methods);
	VT_CHECKF(t, !(info.flags & VFIO_DEVICE_FLAGS_CAPS), "flags 0x%x: "
		  "CAPS without capabilities", info.flags);
	VT_CHECKF(t, info.num_regions == VFIO_PCI_NUM_REGIONS &&
		  info.num_irqs == VFIO_PCI_NUM_IRQS, "regions %u irqs %u",
		  info.num_regions, info.num_irqs);
	VT_CHECKF(t, info.cap_offset == 0, "cap_offset %u", info.cap_offset);

	/* Without cap_offset: the older, shorter structure still works. */
	memset(&info, 0, sizeof(info));
	info.argsz = offsetof(struct vfio_device_info, cap_offset);
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_INFO, &info));
	VT_CHECK(t, info.num_irqs == VFIO_PCI_NUM_IRQS);

	info.argsz = offsetof(struct vfio_device_info, num_irqs) + 3;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_INFO, &info), EINVAL);
	vtc_close_dev(&d);
}

static void check_region(struct vt *t, int fd, uint32_t index, uint64_t size,
			 uint32_t flags)
{
	struct vfio_region_info r;

	memset(&r, 0xa5, sizeof(r));
	r.argsz = sizeof(r);
	r.index = index;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &r));
	VT_CHECKF(t, r.offset == (uint64_t)index << 40, "region %u at 0x%llx",
		  index, (unsigned long long)r.offset);
	VT_CHECKF(t, r.size == size, "region %u: size 0x%llx, want 0x%llx",
		  index, (unsigned long long)r.size, (unsigned long long)size);
	VT_CHECKF(t, r.flags == flags, "region %u: flags 0x%x, want 0x%x",
		  index, r.flags, flags);
	VT_CHECKF(t, r.cap_offset == 0, "region %u: cap_offset %u", index,
		  r.cap_offset);
}

static void test_region_info(struct vt *t, void *arg)
{
	const uint32_t rw = VFIO_REGION_INFO_FLAG_READ |
			    VFIO_REGION_INFO_FLAG_WRITE;
	struct vfio_region_info r;
	struct vtc_dev d;
	uint32_t i;

	(void)arg;
	dev_open(t, &d, VT_EDU0);
	check_region(t, d.device_fd, VFIO_PCI_BAR0_REGION_INDEX,
		     VT_EDU_BAR_SIZE,
		     rw | VFIO_REGION_INFO_FLAG_MMAP);
	for (i = VFIO_PCI_BAR1_REGION_INDEX; i <= VFIO_PCI_BAR5_REGION_INDEX;
	     i++)
		check_region(t, d.device_fd, i, 0, 0);
	/* edu has no ROM; a conventional PCI device 256 bytes of config. */
	check_region(t, d.device_fd, VFIO_PCI_ROM_REGION_INDEX, 0, 0);
	check_region(t, d.device_fd, VFIO_PCI_CONFIG_REGION_INDEX,
		     is_pcie(t, d.device_fd) ? 4096 : 256, rw);
	check_region(t, d.device_fd, VFIO_PCI_VGA_REGION_INDEX, 0, 0);

	memset(&r, 0, sizeof(r));
	r.argsz = sizeof(r);
	r.index = VFIO_PCI_NUM_REGIONS;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_REGION_INFO, &r),
		 EINVAL);
	r.index = 0;
	r.argsz = sizeof(r) - 1;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_REGION_INFO, &r),
		 EINVAL);
	vtc_close_dev(&d);
}

static void check_irq(struct vt *t, int fd, uint32_t index, uint32_t count,
		      uint32_t flags)
{
	struct vfio_irq_info info;

	memset(&info, 0xa5, sizeof(info));
	info.argsz = sizeof(info);
	info.index = index;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &info));
	VT_CHECKF(t, info.count == count, "IRQ index %u: count %u, want %u",
		  index, info.count, count);
	VT_CHECKF(t, info.flags == flags, "IRQ index %u: flags 0x%x, want "
		  "0x%x", index, info.flags, flags);
}

static void test_irq_info(struct vt *t, void *arg)
{
	const uint32_t efd = VFIO_IRQ_INFO_EVENTFD;
	const uint32_t nores = efd | VFIO_IRQ_INFO_NORESIZE;
	struct vfio_irq_info info;
	struct vtc_dev d;

	(void)arg;
	dev_open(t, &d, VT_EDU0);
	check_irq(t, d.device_fd, INTX, 1, efd | VFIO_IRQ_INFO_MASKABLE |
		  VFIO_IRQ_INFO_AUTOMASKED);
	check_irq(t, d.device_fd, MSI, 1, nores);	/* edu: one vector */
	check_irq(t, d.device_fd, MSIX, 0, nores);
	check_irq(t, d.device_fd, REQ, 1, nores);

	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info);
	info.index = ERR;
	if (is_pcie(t, d.device_fd)) {
		check_irq(t, d.device_fd, ERR, 1, nores);
	} else {
		/* As upstream: a conventional device has no error index. */
		VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_IRQ_INFO,
				  &info), EINVAL);
	}
	info.index = VFIO_PCI_NUM_IRQS;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_IRQ_INFO, &info),
		 EINVAL);
	info.index = INTX;
	info.argsz = sizeof(info) - 1;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_IRQ_INFO, &info),
		 EINVAL);
	vtc_close_dev(&d);
}

/* ---- SET_IRQS refusals ---------------------------------------------------- */

static void test_set_irqs_refused(struct vt *t, void *arg)
{
	const uint32_t efd_trig = VFIO_IRQ_SET_DATA_EVENTFD | TRIG;
	struct vtc_dev d;
	int32_t efds[2];
	int fd, null_fd;

	(void)arg;
	dev_open(t, &d, VT_EDU0);
	fd = d.device_fd;
	efds[0] = efd_new(t);
	efds[1] = efd_new(t);

	/* The header. */
	VT_ERRNO(t, set_irqs(fd, SET_HDR - 1, VFIO_IRQ_SET_DATA_NONE | TRIG,
			     INTX, 0, 1, NULL, 0), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, VFIO_PCI_NUM_IRQS, 0, 1), EINVAL);
	VT_ERRNO(t, set_irqs(fd, SET_HDR, TRIG | (1u << 9), INTX, 0, 1, NULL,
			     0), EINVAL);
	VT_ERRNO(t, set_irqs(fd, SET_HDR, TRIG, INTX, 0, 1, NULL, 0), EINVAL);
	VT_ERRNO(t, set_irqs(fd, SET_HDR + 8, VFIO_IRQ_SET_DATA_NONE |
			     VFIO_IRQ_SET_DATA_BOOL | TRIG, INTX, 0, 1, NULL,
			     0), EINVAL);
	/* Ranges: edu has one MSI vector and no MSI-X. */
	VT_ERRNO(t, set_irqs(fd, SET_HDR + 8, efd_trig, MSI, 0, 2, efds, 8),
		 EINVAL);
	VT_ERRNO(t, set_efd(fd, TRIG, MSI, 1, efds[0]), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, MSI, 1, 0), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, MSI, 1, UINT32_MAX), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, MSIX, 0, 0), EINVAL);
	VT_ERRNO(t, set_efd(fd, TRIG, MSIX, 0, efds[0]), EINVAL);
	if (!is_pcie(t, fd))
		VT_ERRNO(t, set_efd(fd, TRIG, ERR, 0, efds[0]), EINVAL);
	/* The data must fit in argsz. */
	VT_ERRNO(t, set_irqs(fd, SET_HDR + 3, efd_trig, INTX, 0, 1, efds, 4),
		 EINVAL);
	VT_ERRNO(t, set_irqs(fd, SET_HDR, VFIO_IRQ_SET_DATA_BOOL | TRIG, INTX,
			     0, 1, NULL, 0), EINVAL);

	/* No action, two actions, an action the index lacks: -ENOTTY. */
	VT_ERRNO(t, set_irqs(fd, SET_HDR, VFIO_IRQ_SET_DATA_NONE, INTX, 0, 1,
			     NULL, 0), ENOTTY);
	VT_ERRNO(t, set_none(fd, MASK | UNMASK, INTX, 0, 1), ENOTTY);
	VT_ERRNO(t, set_none(fd, MASK, MSI, 0, 1), ENOTTY);
	VT_ERRNO(t, set_none(fd, UNMASK, REQ, 0, 1), ENOTTY);

	/* Actions on an index that is off. */
	VT_ERRNO(t, set_none(fd, MASK, INTX, 0, 1), EINVAL);
	VT_ERRNO(t, set_none(fd, UNMASK, INTX, 0, 1), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, INTX, 0, 1), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, MSI, 0, 1), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, INTX, 0, 0), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, MSI, 0, 0), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, REQ, 0, 1), EINVAL);
	VT_ERRNO(t, set_irqs(fd, SET_HDR, efd_trig, MSI, 0, 0, NULL, 0),
		 EINVAL);

	/* Not eventfds: nothing gets enabled. */
	null_fd = VT_OK(t, open("/dev/null", O_RDONLY | O_CLOEXEC));
	VT_ERRNO(t, set_efd(fd, TRIG, MSI, 0, null_fd), EINVAL);
	VT_ERRNO(t, set_efd(fd, TRIG, INTX, 0, 1000), EBADF);
	VT_ERRNO(t, set_none(fd, TRIG, MSI, 0, 1), EINVAL);

	/* One type at a time. */
	VT_OK(t, set_efd(fd, TRIG, INTX, 0, efds[0]));
	VT_ERRNO(t, set_efd(fd, TRIG, MSI, 0, efds[1]), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, MSI, 0, 0), EINVAL);
	/* INTx is one vector, and has no masking eventfd. */
	VT_ERRNO(t, set_efd(fd, MASK, INTX, 0, efds[1]), EINVAL);
	/* Its own trigger as the unmask eventfd would loop. */
	VT_ERRNO(t, set_efd(fd, UNMASK, INTX, 0, efds[0]), EINVAL);
	VT_OK(t, set_none(fd, TRIG, INTX, 0, 0));
	VT_OK(t, set_efd(fd, TRIG, MSI, 0, efds[1]));
	VT_ERRNO(t, set_efd(fd, TRIG, INTX, 0, efds[0]), EINVAL);
	VT_OK(t, set_none(fd, TRIG, MSI, 0, 0));
	vtc_close_dev(&d);
}

/* ---- INTx ----------------------------------------------------------------- */

static void test_intx(struct vt *t, void *arg)
{
	struct vtc_dev d;
	struct vt_edu e;
	int32_t efd, efd2, ufd;
	int fd;

	(void)arg;
	edu_open(t, &d, &e);
	fd = d.device_fd;
	efd = efd_new(t);
	efd2 = efd_new(t);
	ufd = efd_new(t);

	VT_OK(t, set_efd(fd, TRIG, INTX, 0, efd));
	wr(t, &e, VT_EDU_IRQ_RAISE, 1);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no INTx within %d ms",
		  VT_IRQ_WAIT_MS);
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx again while auto-masked");
	edu_ack(t, &e);

	/* Unmask by eventfd: the next interrupt comes through. */
	VT_OK(t, set_efd(fd, UNMASK, INTX, 0, ufd));
	VT_OK(t, eventfd_write(ufd, 1));
	usleep(100 * 1000);	/* the unmask runs from a work item */
	wr(t, &e, VT_EDU_IRQ_RAISE, 2);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no INTx after the unmask "
		  "eventfd");
	edu_ack(t, &e);
	VT_OK(t, set_efd(fd, UNMASK, INTX, 0, -1));	/* disconnect it */
	VT_OK(t, set_bool(fd, UNMASK, INTX, 1));

	/* MASK with BOOL 1 holds the interrupt; BOOL 0 does nothing. */
	VT_OK(t, set_bool(fd, MASK, INTX, 0));
	VT_OK(t, set_bool(fd, MASK, INTX, 1));
	wr(t, &e, VT_EDU_IRQ_RAISE, 4);
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx while masked by the user");
	VT_OK(t, set_bool(fd, UNMASK, INTX, 0));
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx after UNMASK with BOOL 0");
	VT_OK(t, set_none(fd, UNMASK, INTX, 0, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS),
		  "pending INTx not delivered on "
		  "unmask");
	edu_ack(t, &e);
	VT_OK(t, set_none(fd, UNMASK, INTX, 0, 1));

	/* Loopback. */
	VT_OK(t, set_none(fd, TRIG, INTX, 0, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no loopback (DATA_NONE)");
	VT_OK(t, set_bool(fd, TRIG, INTX, 0));
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS), "loopback with BOOL 0");
	VT_OK(t, set_bool(fd, TRIG, INTX, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no loopback (BOOL 1)");

	/* A new trigger while enabled replaces the old one. */
	VT_OK(t, set_efd(fd, TRIG, INTX, 0, efd2));
	wr(t, &e, VT_EDU_IRQ_RAISE, 8);
	VT_CHECKF(t, vt_fired(efd2, VT_IRQ_WAIT_MS),
		  "no INTx on the new eventfd");
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx on the replaced eventfd");
	edu_ack(t, &e);
	VT_OK(t, set_none(fd, UNMASK, INTX, 0, 1));

	/*
	 * count 0 disables: loopback is refused then.  (No raise: a level
	 * interrupt without a handler would storm the guest's line.)
	 */
	VT_OK(t, set_none(fd, TRIG, INTX, 0, 0));
	VT_ERRNO(t, set_none(fd, TRIG, INTX, 0, 1), EINVAL);
	VT_ERRNO(t, set_none(fd, UNMASK, INTX, 0, 1), EINVAL);
	vtc_close_dev(&d);
}

/* ---- MSI ------------------------------------------------------------------ */

static void test_msi(struct vt *t, void *arg)
{
	struct vtc_dev d;
	struct vt_edu e;
	int32_t efd, efd2, none = -1;
	int fd;

	(void)arg;
	edu_open(t, &d, &e);
	fd = d.device_fd;
	efd = efd_new(t);
	efd2 = efd_new(t);

	VT_OK(t, set_efd(fd, TRIG, MSI, 0, efd));
	wr(t, &e, VT_EDU_IRQ_RAISE, 1);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no MSI within %d ms",
		  VT_IRQ_WAIT_MS);
	edu_ack(t, &e);
	wr(t, &e, VT_EDU_IRQ_RAISE, 2);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no second MSI (edge, no "
		  "masking)");
	edu_ack(t, &e);

	/* Loopback. */
	VT_OK(t, set_none(fd, TRIG, MSI, 0, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no loopback (DATA_NONE)");
	VT_OK(t, set_bool(fd, TRIG, MSI, 0));
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS), "loopback with BOOL 0");
	VT_OK(t, set_bool(fd, TRIG, MSI, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no loopback (BOOL 1)");
	/* MSI has no masking here, as upstream. */
	VT_ERRNO(t, set_none(fd, UNMASK, MSI, 0, 1), ENOTTY);

	/* Another eventfd on the enabled vector, then none. */
	VT_OK(t, set_efd(fd, TRIG, MSI, 0, efd2));
	wr(t, &e, VT_EDU_IRQ_RAISE, 4);
	VT_CHECKF(t, vt_fired(efd2, VT_IRQ_WAIT_MS),
		  "no MSI on the new eventfd");
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "MSI on the replaced eventfd");
	edu_ack(t, &e);
	VT_OK(t, set_irqs(fd, SET_HDR + 4, VFIO_IRQ_SET_DATA_EVENTFD | TRIG,
			  MSI, 0, 1, &none, 4));
	wr(t, &e, VT_EDU_IRQ_RAISE, 8);
	VT_CHECKF(t, !vt_fired(efd2, VT_IRQ_QUIET_MS),
		  "MSI on a disconnected vector");
	edu_ack(t, &e);
	/* Loopback skips the unconnected vector. */
	VT_OK(t, set_none(fd, TRIG, MSI, 0, 1));

	VT_OK(t, set_none(fd, TRIG, MSI, 0, 0));
	VT_ERRNO(t, set_none(fd, TRIG, MSI, 0, 1), EINVAL);
	/* INTx is free again. */
	VT_OK(t, set_efd(fd, TRIG, INTX, 0, efd));
	VT_OK(t, set_none(fd, TRIG, INTX, 0, 0));
	vtc_close_dev(&d);
}

/* ---- REQ and ERR ---------------------------------------------------------- */

static void test_req(struct vt *t, void *arg)
{
	struct vtc_dev d;
	int32_t efd;
	int fd;

	(void)arg;
	dev_open(t, &d, VT_EDU0);
	fd = d.device_fd;
	efd = efd_new(t);

	VT_ERRNO(t, set_none(fd, TRIG, REQ, 0, 0), EINVAL);
	VT_OK(t, set_efd(fd, TRIG, REQ, 0, efd));
	VT_OK(t, set_none(fd, TRIG, REQ, 0, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS),
		  "no REQ loopback (DATA_NONE)");
	VT_OK(t, set_bool(fd, TRIG, REQ, 0));
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "REQ loopback with BOOL 0");
	VT_OK(t, set_bool(fd, TRIG, REQ, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no REQ loopback (BOOL 1)");
	VT_ERRNO(t, set_irqs(fd, SET_HDR, VFIO_IRQ_SET_DATA_EVENTFD | TRIG,
			     REQ, 0, 0, NULL, 0), EINVAL);
	/* count 0 DATA_NONE clears it: loopback has nothing to fire then. */
	VT_OK(t, set_none(fd, TRIG, REQ, 0, 0));
	VT_ERRNO(t, set_none(fd, TRIG, REQ, 0, 1), EINVAL);
	VT_OK(t, set_efd(fd, TRIG, REQ, 0, efd));
	VT_OK(t, set_efd(fd, TRIG, REQ, 0, -1));
	VT_ERRNO(t, set_none(fd, TRIG, REQ, 0, 1), EINVAL);
	vtc_close_dev(&d);
}

/* ---- the bus driver's module ---------------------------------------------- */

/*
 * A device fd keeps vfio_pci loaded, as the kernel's VFIO keeps the bound
 * driver's module: rmmod answers "in use" at once and the fd goes on
 * working.  Before, rmmod revoked the device after the release timeout,
 * unloaded, and the next GET_INFO ran in freed module memory.
 */
static void test_fd_pins_driver(struct vt *t, void *arg)
{
	struct vfio_device_info info;
	struct vtc_dev d;
	int unloaded;

	(void)arg;
	dev_open(t, &d, VT_EDU0);
	unloaded = system("rmmod vfio_pci 2>/dev/null") == 0 ||
		   !vt_module_loaded("vfio_pci");
	if (unloaded) {
		vtc_close_dev(&d);
		vt_vfio_pci_reload();
		vt_wait_path("/sys/bus/pci/drivers/vfio/" VT_EDU0, 1, 10000);
		vt_fail(t, __FILE__, __LINE__,
			"rmmod vfio_pci succeeded with a device fd open");
	}
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info);
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_INFO, &info));
	VT_CHECKF(t, info.num_regions >= VFIO_PCI_CONFIG_REGION_INDEX + 1,
		  "%u regions after the refused rmmod", info.num_regions);
	vtc_close_dev(&d);
}

/* ---- reset and the rest --------------------------------------------------- */

static void test_reset(struct vt *t, void *arg)
{
	struct vfio_device_info info;
	struct vtc_dev d;
	struct vt_edu e;
	uint32_t v = 0;

	(void)arg;
	edu_open(t, &d, &e);
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info);
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_INFO, &info));
	if (!(info.flags & VFIO_DEVICE_FLAGS_RESET)) {
		VT_ERRNO(t, vtc_reset(d.device_fd), EINVAL);
		vtc_close_dev(&d);
		return;
	}
	wr(t, &e, VT_EDU_FACT, 5);
	VT_OK(t, vtc_reset(d.device_fd));
	VT_OK(t, vtc_enable_master(d.device_fd));
	VT_CHECKF(t, vt_edu_read(&e, VT_EDU_ID, &v) == 0 && v == e.id,
		  "ID after reset 0x%x: %s", v, strerror(errno));
	vtc_close_dev(&d);
}

static void test_hot_reset(struct vt *t, void *arg)
{
	struct vfio_pci_hot_reset_info info;
	struct vfio_pci_hot_reset hr;
	struct vtc_dev d;

	(void)arg;
	dev_open(t, &d, VT_EDU0);
	memset(&info, 0, sizeof(info));
	info.argsz = sizeof(info);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			  &info), ENODEV);
	info.argsz = sizeof(info) - 1;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO,
			  &info), EINVAL);
	memset(&hr, 0, sizeof(hr));
	hr.argsz = sizeof(hr);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_PCI_HOT_RESET, &hr), ENODEV);
	hr.flags = 1;
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_PCI_HOT_RESET, &hr), EINVAL);
	vtc_close_dev(&d);
}

static void test_not_offered(struct vt *t, void *arg)
{
	uint8_t buf[256];
	struct vtc_dev d;

	(void)arg;
	dev_open(t, &d, VT_EDU0);
	memset(buf, 0, sizeof(buf));
	*(uint32_t *)buf = sizeof(buf);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_FEATURE, buf), ENOTTY);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_IOEVENTFD, buf), ENOTTY);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_QUERY_GFX_PLANE, buf),
		 ENOTTY);
	VT_ERRNO(t, ioctl(d.device_fd, VFIO_DEVICE_GET_GFX_DMABUF, buf),
		 ENOTTY);
	VT_ERRNO(t, ioctl(d.device_fd, _IO(VFIO_TYPE, VFIO_BASE + 99), buf),
		 ENOTTY);
	vtc_close_dev(&d);
}

/* ---- MSI-X (e1000e, msix machine) ------------------------------------------ */

struct nic {
	int present;		/* 1 bound to vfio, 0 absent, -1 bind failed */
	char name[VT_DEV_NAME_LEN];
};

static void nic_open(struct vt *t, struct nic *n, struct vtc_dev *d)
{
	if (!n->present)
		vt_skip(t, "no e1000e (run-suite.sh --machine msix)");
	VT_CHECKF(t, n->present > 0, "cannot bind the e1000e to vfio");
	dev_open(t, d, n->name);
}

/*
 * The BAR of the MSI-X table: the capability chain's argsz protocol, and
 * MSIX_MAPPABLE (the VM has interrupt remapping).
 */
static void test_msix_cap(struct vt *t, void *arg)
{
	struct {
		struct vfio_region_info info;
		uint8_t caps[256];
	} r;
	const struct vfio_info_cap_header *cap;
	uint32_t need;
	struct vtc_dev d;
	int32_t efd;

	nic_open(t, arg, &d);
	memset(&r, 0, sizeof(r));
	r.info.argsz = sizeof(r.info);
	r.info.index = E1000E_MSIX_BAR;
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_REGION_INFO, &r));
	VT_CHECKF(t, r.info.flags & VFIO_REGION_INFO_FLAG_CAPS, "flags 0x%x: "
		  "no CAPS on the MSI-X BAR", r.info.flags);
	VT_CHECKF(t, r.info.flags & VFIO_REGION_INFO_FLAG_MMAP, "flags 0x%x",
		  r.info.flags);
	need = r.info.argsz;
	VT_CHECKF(t, need > sizeof(r.info) && need <= sizeof(r), "argsz %u",
		  need);
	VT_CHECKF(t, r.info.cap_offset == 0, "cap_offset %u with a short "
		  "argsz", r.info.cap_offset);

	r.info.argsz = need;
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_REGION_INFO, &r));
	VT_CHECKF(t, r.info.cap_offset == sizeof(r.info), "cap_offset %u",
		  r.info.cap_offset);
	cap = vtc_find_cap(&r, need, r.info.cap_offset,
			   VFIO_REGION_INFO_CAP_MSIX_MAPPABLE);
	VT_CHECKF(t, cap && cap->version == 1 && cap->next == 0,
		  "no MSIX_MAPPABLE v1 capability");

	/* A PCIe device has the error index. */
	check_irq(t, d.device_fd, ERR, 1, VFIO_IRQ_INFO_EVENTFD |
		  VFIO_IRQ_INFO_NORESIZE);
	efd = efd_new(t);
	VT_OK(t, set_efd(d.device_fd, TRIG, ERR, 0, efd));
	VT_OK(t, set_bool(d.device_fd, TRIG, ERR, 1));
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no ERR loopback");
	VT_OK(t, set_none(d.device_fd, TRIG, ERR, 0, 0));
	VT_ERRNO(t, set_none(d.device_fd, TRIG, ERR, 0, 1), EINVAL);

	/* The other BARs have none. */
	memset(&r, 0, sizeof(r));
	r.info.argsz = sizeof(r);
	r.info.index = VFIO_PCI_BAR0_REGION_INDEX;
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_REGION_INFO, &r));
	VT_CHECKF(t, !(r.info.flags & VFIO_REGION_INFO_FLAG_CAPS) &&
		  r.info.argsz == sizeof(r), "BAR0: flags 0x%x argsz %u",
		  r.info.flags, r.info.argsz);
	vtc_close_dev(&d);
}

/*
 * QEMU enables MSI-X with the vectors it needs so far and later sets
 * triggers on ranges starting past 0: those update allocated vectors;
 * a range past them is refused (no resizing, as upstream before 6.5).
 */
static void test_msix_partial(struct vt *t, void *arg)
{
	struct vtc_dev d;
	int32_t efd[3];
	int fd, i;

	nic_open(t, arg, &d);
	fd = d.device_fd;
	check_irq(t, fd, MSIX, E1000E_VECTORS, VFIO_IRQ_INFO_EVENTFD |
		  VFIO_IRQ_INFO_NORESIZE);
	for (i = 0; i < 3; i++)
		efd[i] = efd_new(t);

	/* Vectors 0 and 1, with 0 left unconnected. */
	VT_OK(t, set_efd(fd, TRIG, MSIX, 1, efd[1]));
	VT_OK(t, set_none(fd, TRIG, MSIX, 0, 2));
	VT_CHECKF(t, vt_fired(efd[1], VT_IRQ_WAIT_MS),
		  "no loopback on vector 1");
	VT_OK(t, set_efd(fd, TRIG, MSIX, 0, efd[0]));
	VT_OK(t, set_efd(fd, TRIG, MSIX, 1, efd[2]));
	VT_OK(t, set_none(fd, TRIG, MSIX, 1, 1));
	VT_CHECKF(t, vt_fired(efd[2], VT_IRQ_WAIT_MS) &&
		  !vt_fired(efd[1], 0) && !vt_fired(efd[0], 0),
		  "loopback of vector 1 not (only) on its new eventfd");
	VT_OK(t, set_bool(fd, TRIG, MSIX, 1));
	VT_CHECKF(t, vt_fired(efd[0], VT_IRQ_WAIT_MS),
		  "no loopback on vector 0");
	VT_ERRNO(t, set_efd(fd, TRIG, MSIX, 2, efd[1]), EINVAL);
	VT_ERRNO(t, set_none(fd, TRIG, MSIX, 1, 2), EINVAL);
	VT_OK(t, set_none(fd, TRIG, MSIX, 0, 0));

	/* Enabled again with all of them. */
	VT_OK(t, set_efd(fd, TRIG, MSIX, E1000E_VECTORS - 1, efd[1]));
	VT_OK(t, set_none(fd, TRIG, MSIX, E1000E_VECTORS - 1, 1));
	VT_CHECKF(t, vt_fired(efd[1], VT_IRQ_WAIT_MS),
		  "no loopback on the last "
		  "vector");
	VT_OK(t, set_none(fd, TRIG, MSIX, 0, 0));
	vtc_close_dev(&d);
}

int main(void)
{
	struct vt t = { .prog = "t-container-device" };
	struct nic n;

	VT_RUN_CLOSE(&t, test_get_info);
	VT_RUN_CLOSE(&t, test_region_info);
	VT_RUN_CLOSE(&t, test_irq_info);
	VT_RUN_CLOSE(&t, test_set_irqs_refused);
	VT_RUN_CLOSE(&t, test_intx);
	VT_RUN_CLOSE(&t, test_msi);
	VT_RUN_CLOSE(&t, test_req);
	VT_RUN_CLOSE(&t, test_reset);
	VT_RUN_CLOSE(&t, test_fd_pins_driver);
	VT_RUN_CLOSE(&t, test_hot_reset);
	VT_RUN_CLOSE(&t, test_not_offered);

	memset(&n, 0, sizeof(n));
	n.present = vt_find_device(E1000E_VENDOR, E1000E_DEVICE, NULL, 0,
				   n.name) == 0;
	if (n.present && vt_bind_vfio(n.name) < 0)
		n.present = -1;
	VT_RUN_CLOSE_ARG(&t, test_msix_cap, &n);
	VT_RUN_CLOSE_ARG(&t, test_msix_partial, &n);
	if (n.present > 0)
		vt_unbind(n.name);
	return vt_done(&t);
}
