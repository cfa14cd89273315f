// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-device-irq: the interrupts of a vfio_pci device fd
 * (src/pci/vfio_pci_intrs.c).  GET_IRQ_INFO, MSI and INTx delivered to
 * eventfds (edu raises them on request), INTx masked at delivery and
 * unmasked by ioctl or by an unmask eventfd, changing and unsetting a
 * vector, and every way SET_IRQ_EVENTFDS and UNMASK_IRQ refuse.
 *
 * Whether the kernel masked INTx is read from the device's sysfs config
 * file, which bypasses our virtualisation.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

/* SET_(UNMASK_)IRQ_EVENTFDS with a hand-made header: -1/errno or 0. */
static int set_raw(int fd, unsigned long req, uint32_t argsz, uint32_t flags,
		   uint32_t index, uint32_t count, int32_t efd)
{
	struct {
		struct vfio_irq_eventfds h;
		int32_t fds[4];
	} s;

	memset(&s, 0, sizeof(s));
	s.h.argsz = argsz;
	s.h.flags = flags;
	s.h.index = index;
	s.h.count = count;
	s.fds[0] = s.fds[1] = s.fds[2] = s.fds[3] = efd;
	return ioctl(fd, req, &s);
}

static void edu_raise(struct vt *t, int fd, uint32_t bits)
{
	vt_bar0_wr(t, fd, VT_EDU_IRQ_RAISE, bits);
}

static void edu_ack(struct vt *t, int fd)
{
	uint32_t st = vt_bar0_rd(t, fd, VT_EDU_IRQ_STATUS);

	vt_bar0_wr(t, fd, VT_EDU_IRQ_ACK, st);
}

static void unmask(struct vt *t, int fd)
{
	struct vfio_unmask_irq un = {
		.argsz = sizeof(un),
		.index = VFIO_PCI_INTX_IRQ_INDEX,
	};

	VT_OK(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un));
}

/* Is INTx masked in the device (INTx disable set by the kernel)? */
static int intx_masked(struct vt *t)
{
	return !!(vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2) &
		  VT_PCI_COMMAND_INTX_OFF);
}

/* ---- info -------------------------------------------------------------- */

static void check_irq(struct vt *t, int fd, uint32_t index, uint32_t count,
		      uint32_t flags)
{
	struct vfio_irq_info irq;

	memset(&irq, 0xff, sizeof(irq));
	irq.argsz = sizeof(irq);
	irq.index = index;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &irq));
	VT_CHECKF(t, irq.count == count && irq.flags == flags,
		  "irq index %u: count %u flags 0x%x, want %u 0x%x", index,
		  irq.count, irq.flags, count, flags);
}

static void test_irq_info(struct vt *t, struct vt_ctx *c)
{
	struct vfio_region_info reg;
	struct vfio_irq_info irq;
	int fd = vt_ctx_open(t, c, VT_EDU0);

	/* edu: INTx pin A, one MSI vector, no MSI-X. */
	check_irq(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, VFIO_IRQ_INFO_FLAG_LEVEL);
	check_irq(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, 0);
	check_irq(t, fd, VFIO_PCI_MSIX_IRQ_INDEX, 0, 0);
	check_irq(t, fd, VFIO_PCI_REQ_IRQ_INDEX, 1, 0);

	memset(&irq, 0, sizeof(irq));
	irq.argsz = sizeof(irq) - 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &irq), EINVAL);
	irq.argsz = sizeof(irq);
	irq.index = VFIO_PCI_NUM_IRQS;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &irq), EINVAL);

	/*
	 * The 2011 documentation passed a struct vfio_region_info here; its
	 * index sits where vfio_irq_info has it and its argsz is larger,
	 * so such a caller still gets the right answer in the first words.
	 */
	memset(&reg, 0, sizeof(reg));
	reg.argsz = sizeof(reg);
	reg.index = VFIO_PCI_INTX_IRQ_INDEX;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &reg));
	VT_CHECKF(t, reg.flags == VFIO_IRQ_INFO_FLAG_LEVEL && reg.resv == 1,
		  "region-struct caller: flags 0x%x count %u", reg.flags,
		  reg.resv);
	vt_close_dev(&c->d);

	/* pci-testdev has no interrupt pin and no MSI capability. */
	fd = vt_ctx_open(t, c, VT_TESTDEV0);
	check_irq(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, 0);
	check_irq(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, 0);
	check_irq(t, fd, VFIO_PCI_MSIX_IRQ_INDEX, 0, 0);
}

/* ---- MSI --------------------------------------------------------------- */

static void test_msi(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	int32_t efd = vt_ctx_eventfd(t, c, 0);
	uint64_t n = 0;
	int i;

	/* An MSI is a DMA write: the user must allow bus mastering. */
	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MEMORY |
			VT_PCI_COMMAND_MASTER, 0);
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &efd);
	VT_CHECKF(t, vt_irq_listed("vfio-msi[0](" VT_EDU0 ")") == 1,
		  "no vfio-msi[0](" VT_EDU0 ") in /proc/interrupts");

	for (i = 0; i < 3; i++) {
		VT_CHECKF(t, !vt_fired(efd, 0), "eventfd set before raise %d",
			  i);
		edu_raise(t, fd, 1);
		VT_CHECKF(t, vt_wait_eventfd(efd, VT_IRQ_WAIT_MS, &n) == 0,
			  "no MSI %d within %d ms", i, VT_IRQ_WAIT_MS);
		VT_CHECKF(t, vt_bar0_rd(t, fd, VT_EDU_IRQ_STATUS) == 1,
			  "irq status");
		edu_ack(t, fd);
	}

	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, NULL);
	VT_CHECKF(t, vt_irq_listed("vfio-msi[0](" VT_EDU0 ")") == 0,
		  "MSI handler still registered after count 0");
	VT_CHECKF(t, !vt_fired(efd, 0), "eventfd signalled after count 0");
}

static void test_msi_change(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	int32_t e1 = vt_ctx_eventfd(t, c, 0), e2 = vt_ctx_eventfd(t, c, 1);
	int32_t none = -1;
	uint32_t pos;

	vt_set_cmd_bits(t, fd, VT_PCI_COMMAND_MEMORY |
			VT_PCI_COMMAND_MASTER, 0);

	/*
	 * -1: MSI on, vector left unconnected; an MSI goes nowhere.  Its
	 * message must still be a real one: an unprogrammed vector would
	 * make the device DMA to address 0.
	 */
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &none);
	pos = vt_find_cap(t, fd, VT_PCI_CAP_ID_MSI);
	VT_CHECKF(t, pos &&
		  vt_real_cfg(t, VT_EDU0, pos + VT_PCI_MSI_ADDR_LO, 4),
		  "unconnected MSI vector has address 0");
	edu_raise(t, fd, 1);
	VT_CHECKF(t, !vt_fired(e1, VT_IRQ_QUIET_MS) && !vt_fired(e2, 0),
		  "unconnected fired");
	edu_ack(t, fd);

	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &e1);
	edu_raise(t, fd, 1);
	VT_CHECKF(t, vt_fired(e1, VT_IRQ_WAIT_MS), "no MSI on e1");
	edu_ack(t, fd);

	/* Change: only the new eventfd hears it. */
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &e2);
	edu_raise(t, fd, 1);
	VT_CHECKF(t, vt_fired(e2, VT_IRQ_WAIT_MS), "no MSI on e2");
	VT_CHECKF(t, !vt_fired(e1, 0), "old eventfd still signalled");
	edu_ack(t, fd);

	/* Unset again. */
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &none);
	edu_raise(t, fd, 1);
	VT_CHECKF(t, !vt_fired(e2, VT_IRQ_QUIET_MS), "unset vector fired");
	edu_ack(t, fd);
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, NULL);
}

/* ---- argument checks --------------------------------------------------- */

static void test_irq_set_errors(struct vt *t, struct vt_ctx *c)
{
	const unsigned long S = VFIO_DEVICE_SET_IRQ_EVENTFDS;
	const unsigned long U = VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS;
	const uint32_t hsz = sizeof(struct vfio_irq_eventfds);
	int fd = vt_ctx_open(t, c, VT_EDU0);
	int32_t efd = vt_ctx_eventfd(t, c, 0), e2 = vt_ctx_eventfd(t, c, 1);
	struct vfio_unmask_irq un;

	/* Argument checks. */
	VT_ERRNO(t, set_raw(fd, S, hsz - 1, 0, 1, 0, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 1, 1, 1, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_NUM_IRQS, 1, efd),
		 EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 8, 0, 1, 2, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_MSIX_IRQ_INDEX, 1,
			    efd), EINVAL);
	/* argsz too small for the eventfds it claims */
	VT_ERRNO(t, set_raw(fd, S, hsz + 3, 0, 1, 1, efd), EINVAL);
	VT_ERRNO(t, ioctl(fd, S, NULL), EFAULT);

	/* Bad eventfds, and nothing is left half set up afterwards. */
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 1, 1, 999), EBADF);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 1, 1, -7), EBADF);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 1, 1, fd), EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 0, 1, 999), EBADF);
	VT_CHECKF(t, vt_irq_listed("(" VT_EDU0 ")") == 0,
		  "an IRQ stayed registered after a failed set");
	/* If MSI were half on, INTx would be refused with EBUSY. */
	vt_set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, &efd);

	/* One index at a time. */
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 1, 1, e2), EBUSY);
	/* count 0 of an inactive index is a no-op, not an error. */
	VT_OK(t, set_raw(fd, S, hsz, 0, VFIO_PCI_MSI_IRQ_INDEX, 0, -1));
	VT_OK(t, set_raw(fd, S, hsz, 0, VFIO_PCI_MSIX_IRQ_INDEX, 0, -1));
	vt_set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, NULL);
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 1, &e2);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 0, 1, efd), EBUSY);

	/* Unmask applies to INTx only, and only while it is on. */
	memset(&un, 0, sizeof(un));
	un.argsz = sizeof(un);
	un.index = VFIO_PCI_MSI_IRQ_INDEX;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	un.index = VFIO_PCI_INTX_IRQ_INDEX;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 0, 0, 1, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 0, 1, 1, efd), EINVAL);
	vt_set_irqs(t, fd, VFIO_PCI_MSI_IRQ_INDEX, 0, NULL);

	vt_set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, &efd);
	un.argsz = sizeof(un) - 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	un.argsz = sizeof(un);
	un.flags = 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	un.flags = 0;
	un.subindex = 1;
	VT_ERRNO(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un), EINVAL);
	un.subindex = 0;
	VT_OK(t, ioctl(fd, VFIO_DEVICE_UNMASK_IRQ, &un));
	VT_ERRNO(t, set_raw(fd, U, hsz + 8, 0, 0, 2, efd), EINVAL);
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 0, 0, 1, 999), EBADF);
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 1, 0, 1, efd), EINVAL);
	/* The trigger cannot be its own unmask (an endless unmask loop). */
	VT_ERRNO(t, set_raw(fd, U, hsz + 4, 0, 0, 1, efd), EINVAL);
	VT_OK(t, set_raw(fd, U, hsz + 4, 0, 0, 1, e2));
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 0, 1, e2), EINVAL);
	VT_OK(t, set_raw(fd, U, hsz + 4, 0, 0, 1, -1));
	vt_set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, NULL);

	/* The release request index: one eventfd, set and unset. */
	VT_OK(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_REQ_IRQ_INDEX, 1, efd));
	VT_OK(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_REQ_IRQ_INDEX, 1, -1));
	VT_ERRNO(t, set_raw(fd, S, hsz + 8, 0, VFIO_PCI_REQ_IRQ_INDEX, 2, efd),
		 EINVAL);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, VFIO_PCI_REQ_IRQ_INDEX, 1, 999),
		 EBADF);
	VT_OK(t, set_raw(fd, S, hsz, 0, VFIO_PCI_REQ_IRQ_INDEX, 0, -1));

	/* pci-testdev has no pin: no INTx to enable. */
	vt_close_dev(&c->d);
	fd = vt_ctx_open(t, c, VT_TESTDEV0);
	VT_ERRNO(t, set_raw(fd, S, hsz + 4, 0, 0, 1, efd), EINVAL);
}

/* ---- INTx -------------------------------------------------------------- */

static void test_intx(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	int32_t efd = vt_ctx_eventfd(t, c, 0);

	vt_set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, &efd);
	VT_CHECKF(t, vt_irq_listed("vfio-intx(" VT_EDU0 ")") == 1,
		  "no vfio-intx(" VT_EDU0 ") in /proc/interrupts");
	VT_CHECKF(t, !intx_masked(t), "INTx masked before any interrupt");

	/* Delivered, and masked at delivery. */
	edu_raise(t, fd, 1);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no INTx within %d ms",
		  VT_IRQ_WAIT_MS);
	VT_CHECKF(t, intx_masked(t), "INTx not masked after delivery");
	/* The user's view of INTx disable is its own (it never set it). */
	VT_CHECKF(t, !(vt_cfg_rd(t, fd, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_INTX_OFF),
		  "virtual command shows the kernel's mask");

	/* Serviced, raised again: masked, so nothing arrives. */
	edu_ack(t, fd);
	edu_raise(t, fd, 2);
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "INTx delivered while masked");
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, VT_PCI_STATUS, 2) &
		  VT_PCI_STATUS_INTX, "device does not show its pending INTx");

	/* Unmask with the line still up: the user hears it (again). */
	unmask(t, fd);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS),
		  "pending INTx not reported on unmask");
	edu_ack(t, fd);
	/* Now nothing pending: unmask really unmasks ... */
	unmask(t, fd);
	VT_CHECKF(t, !intx_masked(t), "INTx still masked after unmask");
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS),
		  "spurious INTx after unmask");
	/* ... and the next one is delivered (and masked) again. */
	edu_raise(t, fd, 4);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no INTx after unmask");
	VT_CHECKF(t, intx_masked(t), "not masked after the second delivery");
	edu_ack(t, fd);
	unmask(t, fd);

	vt_set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, NULL);
	VT_CHECKF(t, vt_irq_listed("vfio-intx(" VT_EDU0 ")") == 0,
		  "INTx handler still registered after count 0");
}

static void test_intx_unmask_eventfd(struct vt *t, struct vt_ctx *c)
{
	int fd = vt_ctx_open(t, c, VT_EDU0);
	int32_t efd = vt_ctx_eventfd(t, c, 0), ufd = vt_ctx_eventfd(t, c, 1);
	uint64_t one = 1;

	vt_set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 1, &efd);
	VT_OK(t, set_raw(fd, VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS,
			 sizeof(struct vfio_irq_eventfds) + 4, 0, 0, 1, ufd));

	edu_raise(t, fd, 1);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS), "no INTx");
	edu_ack(t, fd);
	edu_raise(t, fd, 1);
	VT_CHECKF(t, !vt_fired(efd, VT_IRQ_QUIET_MS), "INTx while masked");

	/* A write to the unmask eventfd acts as UNMASK_IRQ. */
	VT_CHECKF(t, write(ufd, &one, 8) == 8, "write unmask eventfd");
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS),
		  "pending INTx not reported");
	edu_ack(t, fd);
	VT_CHECKF(t, write(ufd, &one, 8) == 8, "write unmask eventfd");
	/* The unmask runs from a work item: give it a moment. */
	{
		uint64_t end = vt_now_ms() + VT_IRQ_WAIT_MS;

		while (intx_masked(t) && vt_now_ms() < end)
			usleep(1000);
	}
	VT_CHECKF(t, !intx_masked(t), "unmask eventfd did not unmask");
	/* The kernel consumed the unmask count. */
	VT_CHECKF(t, !vt_fired(ufd, 0), "unmask eventfd still readable");
	edu_raise(t, fd, 1);
	VT_CHECKF(t, vt_fired(efd, VT_IRQ_WAIT_MS),
		  "no INTx after eventfd unmask");
	edu_ack(t, fd);

	/* Closing our copy of the eventfd is harmless: the kernel has its
	 * own reference until the index goes. */
	close(ufd);
	c->efd[1] = -1;
	vt_set_irqs(t, fd, VFIO_PCI_INTX_IRQ_INDEX, 0, NULL);
}

int main(void)
{
	struct vt t = { .prog = "t-device-irq" };
	struct vt_ctx c;

	if (vt_ctx_setup(&c)) {
		fprintf(stderr, "t-device-irq: mmap PROT_NONE: %s\n",
			strerror(errno));
		return 2;
	}
	VT_RUN_CTX(&t, &c, test_irq_info);
	VT_RUN_CTX(&t, &c, test_msi);
	VT_RUN_CTX(&t, &c, test_msi_change);
	VT_RUN_CTX(&t, &c, test_irq_set_errors);
	VT_RUN_CTX(&t, &c, test_intx);
	VT_RUN_CTX(&t, &c, test_intx_unmask_eventfd);
	return vt_done(&t);
}
