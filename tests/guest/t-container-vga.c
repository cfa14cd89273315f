// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-container-vga: region 8 of the container ABI, the legacy VGA ranges
 * (src/pci/vfio_pci_rdwr.c), on the test VM's standard VGA (QEMU's
 * 1234:1111 at 00:01.0, class 0x0300, which no guest driver claims).
 * QEMU's x-vga=on passes a VGA card's legacy registers and memory to a
 * guest through it.  The region is at its own addresses: 0xa0000-0xbffff
 * memory, 0x3b0-0x3bb and 0x3c0-0x3df I/O ports; disable_vga=1 takes it
 * away from the devices bound afterwards, and a device of another class
 * never has it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "vt.h"
#include "vtcontainer.h"

#define VGA_VENDOR	0x1234
#define VGA_DEVICE	0x1111
#define VGA_SIZE	0xc0000
#define VGA_SEQ_INDEX	0x3c4
#define VGA_TEXT_END	(0xb8000 + 80 * 25 * 2)	/* 80x25 colour text */
#define PARAM_NO_VGA	"/sys/module/vfio_pci/parameters/disable_vga"
#define CMD_IO		0x1
#define CMD_MEMORY	0x2
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct vga {
	char name[VT_DEV_NAME_LEN];
	int present;		/* 1 bound to vfio, 0 absent, -1 bind failed */
};

static uint64_t r8(uint64_t addr)
{
	return ((uint64_t)VFIO_PCI_VGA_REGION_INDEX << 40) + addr;
}

static void need_vga(struct vt *t, struct vga *v)
{
	VT_CHECKF(t, v->present >= 0, "%s could not be bound to vfio", v->name);
	if (!v->present)
		vt_skip(t, "no VGA %04x:%04x in this VM", VGA_VENDOR, VGA_DEVICE);
}

static void vga_open(struct vt *t, struct vga *v, struct vtc_dev *d)
{
	need_vga(t, v);
	VT_CHECKF(t, vtc_open_dev(d, v->name, 0) == 0, "open %s: %s", v->name,
		  strerror(errno));
}

static void set_cmd(struct vt *t, int fd, uint16_t bits)
{
	uint16_t cmd;
	off_t off = ((off_t)VFIO_PCI_CONFIG_REGION_INDEX << 40) + 4;

	VT_CHECKF(t, pread(fd, &cmd, 2, off) == 2, "command: %s",
		  strerror(errno));
	cmd |= bits;
	VT_CHECKF(t, pwrite(fd, &cmd, 2, off) == 2, "command: %s",
		  strerror(errno));
}

/* A VGA device has the region, readable and writable, 0xc0000 long. */
static void test_info(struct vt *t, void *arg)
{
	struct vtc_dev d;
	struct vfio_region_info r;

	vga_open(t, arg, &d);
	VT_CHECKF(t, vtc_region_info(d.device_fd, VFIO_PCI_VGA_REGION_INDEX,
				     &r) == 0, "REGION_INFO 8: %s",
		  strerror(errno));
	vtc_close_dev(&d);
	VT_CHECKF(t, r.size == VGA_SIZE && r.offset == r8(0) &&
		  r.flags == (VFIO_REGION_INFO_FLAG_READ |
			      VFIO_REGION_INFO_FLAG_WRITE),
		  "size %#llx offset %#llx flags %#x", (unsigned long long)r.size,
		  (unsigned long long)r.offset, r.flags);
}

/* The sequencer's index register takes what is written and reads it. */
static void test_io(struct vt *t, void *arg)
{
	struct vtc_dev d;
	uint8_t idx, back[2];
	int i;

	vga_open(t, arg, &d);
	set_cmd(t, d.device_fd, CMD_IO);
	for (i = 0; i < 2; i++) {
		idx = i ? 0x04 : 0x02;
		VT_CHECKF(t, pwrite(d.device_fd, &idx, 1, r8(VGA_SEQ_INDEX)) == 1,
			  "write port %#x: %s", VGA_SEQ_INDEX, strerror(errno));
		VT_CHECKF(t, pread(d.device_fd, &back[i], 1,
				   r8(VGA_SEQ_INDEX)) == 1,
			  "read port %#x: %s", VGA_SEQ_INDEX, strerror(errno));
	}
	vtc_close_dev(&d);
	VT_CHECKF(t, back[0] == 0x02 && back[1] == 0x04,
		  "sequencer index read back %#x, %#x", back[0], back[1]);
}

/* Text memory: what is written past the 80x25 screen reads back. */
static void test_memory(struct vt *t, void *arg)
{
	struct vtc_dev d;
	uint32_t pat = 0x1f411f42, back = 0;
	ssize_t w, r;

	vga_open(t, arg, &d);
	set_cmd(t, d.device_fd, CMD_IO | CMD_MEMORY);
	w = pwrite(d.device_fd, &pat, 4, r8(VGA_TEXT_END + 64));
	r = pread(d.device_fd, &back, 4, r8(VGA_TEXT_END + 64));
	vtc_close_dev(&d);
	VT_CHECKF(t, w == 4 && r == 4, "write %zd, read %zd: %s", w, r,
		  strerror(errno));
	VT_CHECKF(t, back == pat, "text memory reads %#x after %#x", back, pat);
}

/* Between and past the ranges: nothing. */
static void test_outside(struct vt *t, void *arg)
{
	struct vtc_dev d;
	uint8_t b;
	uint64_t holes[] = { 0, 0x3af, 0x3bc, 0x3e0, 0x9ffff, VGA_SIZE };
	unsigned int i;

	vga_open(t, arg, &d);
	for (i = 0; i < ARRAY_SIZE(holes); i++) {
		errno = 0;
		if (pread(d.device_fd, &b, 1, r8(holes[i])) != -1 ||
		    errno != EINVAL) {
			vtc_close_dev(&d);
			VT_CHECKF(t, 0, "read at %#llx: want EINVAL, got %s",
				  (unsigned long long)holes[i],
				  strerror(errno));
		}
	}
	vtc_close_dev(&d);
}

/* With decode off, nothing reaches the device. */
static void test_decode_off(struct vt *t, void *arg)
{
	struct vtc_dev d;
	uint8_t b;
	uint16_t cmd = 0;
	off_t off = ((off_t)VFIO_PCI_CONFIG_REGION_INDEX << 40) + 4;

	vga_open(t, arg, &d);
	VT_CHECKF(t, pwrite(d.device_fd, &cmd, 2, off) == 2, "command: %s",
		  strerror(errno));
	errno = 0;
	VT_CHECKF(t, pread(d.device_fd, &b, 1, r8(VGA_SEQ_INDEX)) == -1 &&
		  errno == EIO, "port read with I/O decode off: %s",
		  strerror(errno));
	vtc_close_dev(&d);
}

/* Another class has no region 8; nor has a VGA with disable_vga=1. */
static void test_absent(struct vt *t, void *arg)
{
	struct vga *v = arg;
	struct vtc_dev d;
	struct vfio_region_info r;
	uint8_t b;
	int refused;

	VT_CHECKF(t, vtc_open_dev(&d, VT_EDU0, 0) == 0, "open edu0: %s",
		  strerror(errno));
	VT_OK(t, vtc_region_info(d.device_fd, VFIO_PCI_VGA_REGION_INDEX, &r));
	errno = 0;
	refused = pread(d.device_fd, &b, 1, r8(VGA_SEQ_INDEX)) == -1 &&
		  errno == EINVAL;
	vtc_close_dev(&d);
	VT_CHECKF(t, r.size == 0 && r.flags == 0 && refused,
		  "edu: region 8 size %#llx flags %#x",
		  (unsigned long long)r.size, r.flags);

	need_vga(t, v);
	VT_CHECKF(t, vt_write_file(PARAM_NO_VGA, "Y") == 0, "%s: %s",
		  PARAM_NO_VGA, strerror(errno));
	if (vt_unbind(v->name) || vt_bind_vfio(v->name)) {
		vt_write_file(PARAM_NO_VGA, "N");
		VT_CHECKF(t, 0, "rebind %s: %s", v->name, strerror(errno));
	}
	vt_write_file(PARAM_NO_VGA, "N");
	vga_open(t, v, &d);
	VT_OK(t, vtc_region_info(d.device_fd, VFIO_PCI_VGA_REGION_INDEX, &r));
	vtc_close_dev(&d);
	VT_CHECKF(t, r.size == 0, "disable_vga=1: region 8 size %#llx",
		  (unsigned long long)r.size);
	VT_CHECKF(t, vt_unbind(v->name) == 0 && vt_bind_vfio(v->name) == 0,
		  "rebind %s: %s", v->name, strerror(errno));
}

int main(void)
{
	struct vt t = { .prog = "t-container-vga" };
	struct vga v;

	memset(&v, 0, sizeof(v));
	v.present = vt_find_device(VGA_VENDOR, VGA_DEVICE, NULL, 0,
				   v.name) == 0;
	if (v.present && vt_bind_vfio(v.name) < 0) {
		printf("t-container-vga: cannot bind %s to vfio: %s\n", v.name,
		       strerror(errno));
		v.present = -1;
	}

	VT_RUN(&t, test_info, &v);
	VT_RUN(&t, test_io, &v);
	VT_RUN(&t, test_memory, &v);
	VT_RUN(&t, test_outside, &v);
	VT_RUN(&t, test_decode_off, &v);
	VT_RUN(&t, test_absent, &v);

	if (v.present > 0)
		vt_unbind(v.name);
	return vt_done(&t);
}
