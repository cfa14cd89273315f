// SPDX-License-Identifier: GPL-2.0-only
/*
 * t-pci-decode: BAR access follows the device's memory decode and reset.
 *
 * An access to a BAR the device does not decode (memory enable off in the
 * command register, or a reset in progress) is an Unsupported Request on
 * real hardware, which many servers escalate to a fatal error.  So while
 * memory decode is off, read/write of a BAR fails with EIO and its mmap
 * raises SIGBUS (mappings made before are zapped); with decode back on
 * both work again.  A reset zaps the mappings and holds every access off
 * until it is done.  Turning decode on puts back BAR registers the device
 * lost, and open clears a bus master bit firmware left set.
 *
 * The ROM and MSI-X cases need a device with a ROM and an MSI-X table:
 * they are in t-device-msix (the msix machine of tests/vm/machines.toml).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/vfio.h"
#include "vt.h"
#include "vtlib.h"

#define RESETS		100
#define RESET_SECS	30		/* a bound, should resets be slow */

static uint16_t cmd_rd(struct vt *t, int fd)
{
	uint16_t v = 0;

	VT_CHECKF(t, pread(fd, &v, 2, vt_roff(VFIO_PCI_CONFIG_REGION_INDEX) +
			   VT_PCI_COMMAND) == 2, "pread command: %s",
		  strerror(errno));
	return v;
}

static void cmd_wr(struct vt *t, int fd, uint16_t v)
{
	VT_CHECKF(t, pwrite(fd, &v, 2, vt_roff(VFIO_PCI_CONFIG_REGION_INDEX) +
			    VT_PCI_COMMAND) == 2, "pwrite command: %s",
		  strerror(errno));
}

static void set_mem(struct vt *t, int fd, int on)
{
	uint16_t cmd = cmd_rd(t, fd);

	cmd = on ? cmd | VT_PCI_COMMAND_MEMORY : cmd & ~VT_PCI_COMMAND_MEMORY;
	cmd_wr(t, fd, cmd);
}

static volatile uint32_t *map_bar0(struct vt *t, int fd, uint64_t *size)
{
	void *p = vt_mmap_region(fd, VFIO_PCI_BAR0_REGION_INDEX, size);

	VT_CHECKF(t, p != NULL, "mmap BAR0: %s", strerror(errno));
	return p;
}

/*
 * Memory decode off: pread/pwrite EIO, the mmap (faulted in before, so
 * it must have been zapped) SIGBUS, also a mapping made while off.
 * Decode on: everything back.
 */
static void test_decode_off(struct vt *t, void *arg)
{
	struct vt_dev d;
	struct vt_edu e;
	volatile uint32_t *bar, *late;
	uint64_t size, lsize;
	uint32_t v = 0;

	(void)arg;
	VT_CHECKF(t, vt_open_dev(&d, VT_EDU0) == 0, "open: %s",
		  strerror(errno));
	/* A failed case before may have left it open with decode off. */
	set_mem(t, d.device_fd, 1);
	VT_CHECKF(t, vt_edu_init(&e, d.device_fd) == 0, "edu: %s",
		  strerror(errno));
	bar = map_bar0(t, d.device_fd, &size);
	VT_CHECKF(t, bar[0] == VT_EDU_ID_VALUE, "ID 0x%x through the mmap",
		  bar[0]);

	set_mem(t, d.device_fd, 0);
	VT_CHECKF(t, !(vt_real_cfg(t, VT_EDU0, VT_PCI_COMMAND, 2) &
		       VT_PCI_COMMAND_MEMORY), "memory decode still on");
	VT_ERRNO(t, pread(d.device_fd, &v, 4, e.bar0 + VT_EDU_ID), EIO);
	VT_ERRNO(t, pwrite(d.device_fd, &v, 4, e.bar0 + VT_EDU_LIVE), EIO);
	VT_CHECKF(t, vt_read_faults(bar), "mmap read with decode off did not "
		  "raise SIGBUS");
	late = map_bar0(t, d.device_fd, &lsize);
	VT_CHECKF(t, vt_read_faults(late + 1), "fresh mmap read with decode "
		  "off did not raise SIGBUS");

	set_mem(t, d.device_fd, 1);
	VT_CHECKF(t, vt_edu_read(&e, VT_EDU_ID, &v) == 0 &&
		  v == VT_EDU_ID_VALUE,
		  "pread after decode on: 0x%x: %s", v, strerror(errno));
	VT_CHECKF(t, !vt_read_faults(bar) && bar[0] == VT_EDU_ID_VALUE,
		  "mmap after decode on");
	VT_CHECKF(t, !vt_read_faults(late) && late[0] == VT_EDU_ID_VALUE,
		  "fresh mmap after decode on");
	VT_CHECKF(t, vt_edu_write(&e, VT_EDU_LIVE, 0x1234) == 0 &&
		  vt_edu_read(&e, VT_EDU_LIVE, &v) == 0 && v == ~0x1234U,
		  "liveness 0x%x", v);
	munmap((void *)late, lsize);
	munmap((void *)bar, size);
	vt_close_dev(&d);
}

/* ---- reset against a reader of the mmap -------------------------------- */

struct reader {
	volatile uint32_t *bar;
	volatile int stop;
	long reads, sigbus, bad;
	uint32_t bad_value;
};

static __thread sigjmp_buf *reader_jmp;

static void reader_sigbus(int sig)
{
	(void)sig;
	if (reader_jmp)
		siglongjmp(*reader_jmp, 1);
	_exit(128 + SIGBUS);
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	sigjmp_buf jb;
	uint32_t v;

	reader_jmp = &jb;
	while (!r->stop) {
		if (sigsetjmp(jb, 1)) {
			r->sigbus++;
			continue;
		}
		v = r->bar[0];
		r->reads++;
		if (v != VT_EDU_ID_VALUE) {
			if (!r->bad)
				r->bad_value = v;
			r->bad++;
		}
	}
	reader_jmp = NULL;
	return NULL;
}

/*
 * Thread A reads the mmap in a loop while this thread resets the device
 * RESETS times (or for at most RESET_SECS).
 * During a reset the device decodes nothing (the reset saves and clears
 * the command register): every read must either see the device's ID,
 * with the access held off until the reset is over, or fail cleanly.
 * edu0 has no reset method on the root bus; edu2 behind the root port
 * has a bus reset.
 */
static void test_reset_vs_mmap(struct vt *t, void *arg)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };
	struct sigaction sa, old;
	struct reader r;
	struct vt_dev d;
	struct vt_edu e;
	pthread_t th;
	uint64_t size, t0;
	uint32_t v = 0;
	int i, err;

	(void)arg;
	if (access("/sys/bus/pci/devices/" VT_EDU2, F_OK))
		vt_skip(t, "no edu2 at " VT_EDU2);
	VT_CHECKF(t, vt_open_dev(&d, VT_EDU2) == 0, "open: %s",
		  strerror(errno));
	VT_OK(t, ioctl(d.device_fd, VFIO_DEVICE_GET_INFO, &info));
	if (!(info.flags & VFIO_DEVICE_FLAGS_RESET))
		vt_skip(t, "edu2 has no reset method");
	VT_CHECKF(t, vt_edu_init(&e, d.device_fd) == 0, "edu: %s",
		  strerror(errno));
	memset(&r, 0, sizeof(r));
	r.bar = map_bar0(t, d.device_fd, &size);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = reader_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	err = pthread_create(&th, NULL, reader_main, &r);
	VT_CHECKF(t, err == 0, "pthread_create: %s", strerror(err));
	t0 = vt_now_ms();
	for (i = 0; i < RESETS && vt_now_ms() - t0 < RESET_SECS * 1000; i++)
		if (ioctl(d.device_fd, VFIO_DEVICE_RESET) < 0)
			break;
	err = errno;
	r.stop = 1;
	pthread_join(th, NULL);
	sigaction(SIGBUS, &old, NULL);
	printf("# %d resets in %.1f s; reader: %ld reads, %ld SIGBUS, %ld "
	       "bad\n", i, (vt_now_ms() - t0) / 1000.0, r.reads, r.sigbus,
	       r.bad);
	VT_CHECKF(t, i > 0 && (i == RESETS || vt_now_ms() - t0 >=
			       RESET_SECS * 1000),
		  "reset %d failed: %s", i, strerror(err));
	VT_CHECKF(t, r.bad == 0, "%ld of %ld reads during resets saw 0x%x, "
		  "not the ID: the device was accessed while it did not "
		  "decode", r.bad, r.reads, r.bad_value);
	VT_CHECKF(t, r.reads > 0, "the reader never got through");

	/* The device works afterwards, decode as the user left it. */
	VT_CHECKF(t, cmd_rd(t, d.device_fd) & VT_PCI_COMMAND_MEMORY,
		  "memory decode off after the resets");
	VT_CHECKF(t, vt_edu_read(&e, VT_EDU_ID, &v) == 0 &&
		  v == VT_EDU_ID_VALUE,
		  "ID 0x%x after the resets", v);
	VT_CHECKF(t, r.bar[0] == VT_EDU_ID_VALUE, "mmap after the resets");
	munmap((void *)r.bar, size);
	vt_close_dev(&d);
}

/*
 * The device lost its BAR0 (written behind our back with decode off);
 * turning memory decode on puts it back, and the mmap reaches the device
 * at its real address again.
 */
static void test_bar_restore(struct vt *t, void *arg)
{
	struct vt_dev d;
	struct vt_edu e;
	volatile uint32_t *bar;
	uint32_t bar0, v = 0;
	uint64_t size;

	(void)arg;
	VT_CHECKF(t, vt_open_dev(&d, VT_EDU0) == 0, "open: %s",
		  strerror(errno));
	/* A failed case before may have left it open with decode off. */
	set_mem(t, d.device_fd, 1);
	VT_CHECKF(t, vt_edu_init(&e, d.device_fd) == 0, "edu: %s",
		  strerror(errno));
	bar = map_bar0(t, d.device_fd, &size);
	bar0 = vt_real_cfg(t, VT_EDU0, VT_PCI_BAR0, 4);

	set_mem(t, d.device_fd, 0);
	vt_real_cfg_wr(t, VT_EDU0, VT_PCI_BAR0, 4, 0);
	VT_CHECKF(t, (vt_real_cfg(t, VT_EDU0, VT_PCI_BAR0, 4) & ~0xfU) == 0,
		  "BAR0 write did not stick");
	set_mem(t, d.device_fd, 1);
	VT_CHECKF(t, vt_real_cfg(t, VT_EDU0, VT_PCI_BAR0, 4) == bar0,
		  "BAR0 0x%x after decode on, was 0x%x",
		  vt_real_cfg(t, VT_EDU0, VT_PCI_BAR0, 4), bar0);
	VT_CHECKF(t, vt_edu_read(&e, VT_EDU_ID, &v) == 0 &&
		  v == VT_EDU_ID_VALUE,
		  "ID 0x%x after the restore", v);
	VT_CHECKF(t, !vt_read_faults(bar) && bar[0] == VT_EDU_ID_VALUE,
		  "mmap after the restore");
	munmap((void *)bar, size);
	vt_close_dev(&d);
}

/*
 * A device left mastering (here: set through sysfs while nobody holds
 * it) must not be live at open: bus master is off once the device fd
 * exists, and the user turns it on when ready.
 */
static void test_open_clears_master(struct vt *t, void *arg)
{
	struct vt_dev d;
	uint16_t cmd;

	(void)arg;
	cmd = vt_real_cfg(t, VT_EDU1, VT_PCI_COMMAND, 2);
	vt_real_cfg_wr(t, VT_EDU1, VT_PCI_COMMAND, 2,
		    cmd | VT_PCI_COMMAND_MASTER);
	VT_CHECKF(t, vt_open_dev(&d, VT_EDU1) == 0, "open: %s",
		  strerror(errno));
	cmd = vt_real_cfg(t, VT_EDU1, VT_PCI_COMMAND, 2);
	VT_CHECKF(t, !(cmd & VT_PCI_COMMAND_MASTER),
		  "bus master on at open: command 0x%x", cmd);
	VT_CHECKF(t, !(cmd_rd(t, d.device_fd) & VT_PCI_COMMAND_MASTER),
		  "bus master shown on at open");
	/* And release does not put it back from the saved state. */
	vt_close_dev(&d);
	cmd = vt_real_cfg(t, VT_EDU1, VT_PCI_COMMAND, 2);
	VT_CHECKF(t, !(cmd & VT_PCI_COMMAND_MASTER),
		  "bus master on after release: command 0x%x", cmd);
}

int main(void)
{
	struct vt t = { .prog = "t-pci-decode" };

	VT_RUN_CLOSE(&t, test_decode_off);
	VT_RUN_CLOSE(&t, test_reset_vs_mmap);
	VT_RUN_CLOSE(&t, test_bar_restore);
	VT_RUN_CLOSE(&t, test_open_clears_master);
	return vt_done(&t);
}
