/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Moving one device onto vfio and back.  The previous driver is written to
 * <state-dir>/<address>.driver before anything changes, so that unbind
 * (or a rollback) knows where the device belongs:
 *
 *	a driver name	bind it back to that driver
 *	(none)		it had no driver: leave it without one
 *	(probe)		claimed on hotplug before any driver took it: let the
 *			kernel probe it as if it had just appeared
 */
#ifndef VFIOCTL_BIND_H
#define VFIOCTL_BIND_H

#include <stdbool.h>

#include "sysfs.h"
#include "vfioctl.h"

#define STATE_NONE	"(none)"
#define STATE_PROBE	"(probe)"

enum bind_result {
	BIND_OK,
	BIND_FAILED,		/* nothing changed, or everything undone */
	BIND_RESTORE_FAILED,	/* the undo failed too: reported in detail */
	BIND_REFUSED,		/* the host uses it (o->why); nothing done */
};

struct bind_opts {
	/*
	 * udev hotplug claim: an unbound device is recorded as (probe), and
	 * the vfio driver may be missing (the rule loads it next; the
	 * override makes it bind as soon as it registers).
	 */
	bool claim;
	bool force;		/* take it even when the host uses it */
	bool pending;		/* out: waiting for the vfio driver */
	bool already;		/* out: it was on vfio already */
	char prev[64];		/* out: the driver it came from, or "" */
	char why[512];		/* out: BIND_REFUSED, how the host uses it */
};

enum bind_result dev_bind(const struct vfioctl *v, const char *addr,
			  struct bind_opts *o);
enum bind_result dev_unbind(const struct vfioctl *v, const char *addr);

/*
 * unbind_refused() - true when a process holds @d and --force was not
 * given; either way a held device is reported with its holders.
 */
bool unbind_refused(const struct vfioctl *v, const struct pci_dev *d);

/*
 * state_lock() - take <state-dir>/lock exclusively (flock), waiting for
 * another vfioctl to finish: every command that changes a device or the
 * state directory holds it from start to end, so that parallel calls
 * (udev workers, a unit, an admin) see each other's results whole.
 * Returns the descriptor, released at exit, or -errno.
 */
int state_lock(const struct vfioctl *v);

/* state_exists() - vfioctl moved @addr and has not given it back yet. */
bool state_exists(const struct vfioctl *v, const char *addr);

#endif
