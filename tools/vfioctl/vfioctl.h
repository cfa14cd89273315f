/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfioctl: what every part of the tool shares.  There are no globals: the
 * command line is parsed into one struct vfioctl and passed down.
 */
#ifndef VFIOCTL_H
#define VFIOCTL_H

#include <stdbool.h>
#include <stdio.h>

#define VFIOCTL_VERSION "1.0"

/* The name our PCI bus driver registers with (DESIGN.md, ABI). */
#define VFIO_DRIVER "vfio"

/* Exit codes, documented in vfioctl(8). */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,		/* usage or configuration error, nothing done */
	EXIT_PARTIAL = 2,	/* some devices failed, the others were done */
	EXIT_FAILED = 3,	/* the operation failed, the device is as it was */
	EXIT_RESTORE = 4,	/* restoring a device failed: it needs a look */
	EXIT_DIFFERS = 5,	/* status: the system differs from the config;
				 * doctor: a finding is "fail";
				 * check: the file is valid, but this machine
				 * cannot apply it as written */
	EXIT_HELD = 6,		/* unbind: a process holds a device, which
				 * stays on vfio; the others were done */
};

struct vfioctl {
	const char *sysfs;	/* stands for /sys */
	const char *config;	/* devices.conf */
	const char *state_dir;	/* remembered previous drivers */
	const char *dev_dir;	/* where the group nodes appear */
	const char *proc;	/* stands for /proc (routes, mounts, consoles) */
	const char *root;	/* stands for / (doctor: /lib, /etc, /usr) */
	const char *udev_data;	/* stands for /run/udev/data */
	const char *modprobe;	/* run by apply --boot: $VFIOCTL_MODPROBE */
	bool force;		/* take devices the host is using */
	bool save;		/* bind/unbind: also edit the configuration */
	bool dry_run;		/* apply: say what would be done, do nothing */
	bool syntax;		/* check: the file alone, not this machine */
	bool boot;		/* apply: the unit's path, see boot.h */
	int wait;		/* apply: seconds to wait for udev, -1: unset */
	const char *class;	/* list: only this kind of device, or NULL */
	const char *pci_ids;	/* pci.ids files, colon-separated */
	bool json;		/* list, status, doctor: JSON output */
	unsigned long long memlock_for;	/* doctor: bytes to map, 0: unset */
};

/* Messages go to stderr prefixed with the program name. */
void msg_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void msg_info(const struct vfioctl *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * msg_usage() - a usage error: one line on stderr, which ends with a
 * pointer to --help.  Returns EXIT_USAGE.
 */
int msg_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
