// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bind and unbind through driver_override.  Every step that changes the
 * system is undone on a later failure, in reverse order, so a device is
 * never left half-bound: either it ends on vfio, or it ends where it
 * started, or (only when the undo itself fails) vfioctl says exactly what
 * state it is in.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bind.h"
#include "inuse.h"
#include "sysfs.h"

static bool state_path(const struct vfioctl *v, const char *addr,
		       char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s.driver", v->state_dir, addr);

	return n > 0 && (size_t)n < size;
}

static int mkdir_p(const char *dir)
{
	char tmp[4096], *p;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int state_lock(const struct vfioctl *v)
{
	char path[4096];
	int fd, err;

	err = mkdir_p(v->state_dir);
	if (err)
		return err;
	if (snprintf(path, sizeof(path), "%s/lock", v->state_dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX)) {
		if (errno == EINTR)
			continue;
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

bool state_exists(const struct vfioctl *v, const char *addr)
{
	char path[4096];

	return state_path(v, addr, path, sizeof(path)) && !access(path, F_OK);
}

/* Written to a temporary file and renamed, so a crash leaves old or new. */
static int state_save(const struct vfioctl *v, const char *addr,
		      const char *prev)
{
	char path[4096], tmp[4200];
	int err, fd;
	size_t len;

	err = mkdir_p(v->state_dir);
	if (err)
		return err;
	if (!state_path(v, addr, path, sizeof(path)))
		return -ENAMETOOLONG;
	/* A name of its own: a stale or foreign .tmp is never reused. */
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	len = strlen(prev);
	errno = 0;
	if (write(fd, prev, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		err = errno ? -errno : -EIO;
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static int state_load(const struct vfioctl *v, const char *addr,
		      char *buf, size_t size)
{
	char path[4096];
	int err;

	if (!state_path(v, addr, path, sizeof(path)))
		return -ENAMETOOLONG;
	err = read_attr(path, buf, size);
	if (err)
		return err;
	/* A driver name is one word; anything else is not ours. */
	if (!buf[0] || strpbrk(buf, "/ \t"))
		return -EINVAL;
	return 0;
}

static void state_remove(const struct vfioctl *v, const char *addr)
{
	char path[4096];

	if (state_path(v, addr, path, sizeof(path)) && unlink(path) &&
	    errno != ENOENT)
		msg_err("%s: cannot remove %s: %s", addr, path,
			strerror(errno));
}

/* Put @addr back to @orig after a failed bind; true when that worked. */
static bool bind_undo(const struct vfioctl *v, const struct pci_dev *orig,
		      bool override_set)
{
	struct pci_dev now;
	bool ok = true;
	int err;

	err = pci_dev_load(v, orig->addr, &now);
	if (err) {
		msg_err("%s: cannot read it back to restore it: %s",
			orig->addr, strerror(-err));
		return false;
	}
	if (now.driver[0] && strcmp(now.driver, orig->driver)) {
		err = pci_unbind(v, orig->addr, now.driver);
		if (err) {
			msg_err("%s: restore: unbinding from %s: %s",
				orig->addr, now.driver, strerror(-err));
			ok = false;
		}
	}
	if (override_set) {
		err = pci_set_override(v, orig->addr, orig->override);
		if (err) {
			msg_err("%s: restore: resetting driver_override: %s",
				orig->addr, strerror(-err));
			ok = false;
		}
	}
	if (ok && orig->driver[0] && strcmp(now.driver, orig->driver)) {
		err = pci_bind(v, orig->addr, orig->driver);
		if (err) {
			msg_err("%s: restore: binding back to %s: %s",
				orig->addr, orig->driver, strerror(-err));
			ok = false;
		}
	}
	if (!ok)
		return false;
	err = pci_dev_load(v, orig->addr, &now);
	if (err || strcmp(now.driver, orig->driver) ||
	    strcmp(now.override, orig->override)) {
		msg_err("%s: restore: it is on \"%s\" (override \"%s\"), not back on \"%s\"",
			orig->addr, err ? "?" : now.driver,
			err ? "?" : now.override, orig->driver);
		return false;
	}
	return true;
}

/*
 * Record where @d comes from, before anything changes.  Not for a device
 * claimed on hotplug while vfio was not loaded, which waits with our
 * override and no driver: its state file still holds where it came from,
 * which must not be replaced by "(none)"; *@kept then says so.  Returns 0
 * or -errno (said).
 */
static int bind_record(const struct vfioctl *v, const struct pci_dev *d,
		       bool claim, bool *kept)
{
	const char *prev;
	int err;

	*kept = !strcmp(d->override, VFIO_DRIVER) && !d->driver[0] &&
		state_exists(v, d->addr);
	if (*kept)
		return 0;
	prev = d->driver[0] ? d->driver : claim ? STATE_PROBE : STATE_NONE;
	err = state_save(v, d->addr, prev);
	if (err)
		msg_err("%s: cannot record its driver in %s: %s", d->addr,
			v->state_dir, strerror(-err));
	return err;
}

/*
 * The steps of dev_bind() that change @d: our driver_override, off its
 * driver, onto vfio, unless vfio is not @loaded (then o->pending).
 * Returns 0, or -1 (said) when they must be undone; *@override_set tells
 * bind_undo() whether the override is ours to reset.
 */
static int bind_move(const struct vfioctl *v, const struct pci_dev *d,
		     struct bind_opts *o, bool loaded, bool *override_set)
{
	struct pci_dev now;
	int err;

	*override_set = false;
	if (strcmp(d->override, VFIO_DRIVER)) {
		err = pci_set_override(v, d->addr, VFIO_DRIVER);
		if (err) {
			msg_err("%s: setting driver_override: %s", d->addr,
				strerror(-err));
			return -1;
		}
		*override_set = true;
	}
	if (d->driver[0]) {
		err = pci_unbind(v, d->addr, d->driver);
		if (err) {
			msg_err("%s: unbinding from %s: %s", d->addr,
				d->driver, strerror(-err));
			return -1;
		}
	}
	if (!loaded) {
		o->pending = true;
		return 0;
	}
	err = pci_bind(v, d->addr, VFIO_DRIVER);
	if (err) {
		msg_err("%s: binding to %s: %s", d->addr, VFIO_DRIVER,
			strerror(-err));
		return -1;
	}
	err = pci_dev_load(v, d->addr, &now);
	if (err || strcmp(now.driver, VFIO_DRIVER)) {
		msg_err("%s: did not end up on %s (driver \"%s\")", d->addr,
			VFIO_DRIVER, err ? "?" : now.driver);
		return -1;
	}
	return 0;
}

enum bind_result dev_bind(const struct vfioctl *v, const char *addr,
			  struct bind_opts *o)
{
	bool loaded, override_set, kept_state;
	struct pci_dev d;
	int err;

	o->pending = false;
	o->already = false;
	o->prev[0] = '\0';
	o->why[0] = '\0';
	err = pci_dev_load(v, addr, &d);
	if (err) {
		msg_err("%s: %s", addr, err == -ENODEV ? "no such PCI device" :
			strerror(-err));
		return BIND_FAILED;
	}
	if (!strcmp(d.driver, VFIO_DRIVER)) {
		o->already = true;
		return BIND_OK;
	}
	/* Like dpdk-devbind's "*Active*": never from under the host. */
	if (!o->force && dev_in_use(v, &d, o->why, sizeof(o->why)))
		return BIND_REFUSED;
	if (d.group < 0) {
		msg_err("%s: has no IOMMU group (is the IOMMU on? intel_iommu=on or amd_iommu=on)",
			d.addr);
		return BIND_FAILED;
	}
	loaded = vfio_driver_loaded(v);
	if (!loaded && !o->claim) {
		msg_err("%s: the vfio driver is not loaded (modprobe vfio_pci)",
			d.addr);
		return BIND_FAILED;
	}
	snprintf(o->prev, sizeof(o->prev), "%s", d.driver);
	if (bind_record(v, &d, o->claim, &kept_state))
		return BIND_FAILED;
	if (!bind_move(v, &d, o, loaded, &override_set))
		return BIND_OK;
	if (!bind_undo(v, &d, override_set)) {
		msg_err("%s: could not be restored; its previous driver is recorded in %s",
			d.addr, v->state_dir);
		return BIND_RESTORE_FAILED;
	}
	if (!kept_state)
		state_remove(v, d.addr);
	msg_err("%s: restored to %s", d.addr,
		d.driver[0] ? d.driver : "no driver");
	return BIND_FAILED;
}

/*
 * The last step of dev_unbind(): @d, off vfio and without our override,
 * back to @prev (a driver, STATE_NONE or STATE_PROBE); its state is
 * forgotten either way.
 */
static enum bind_result give_back(const struct vfioctl *v,
				  const struct pci_dev *d, const char *prev)
{
	struct pci_dev now;
	int err;

	if (!strcmp(prev, STATE_NONE)) {
		state_remove(v, d->addr);
		return BIND_OK;
	}
	if (strcmp(prev, STATE_PROBE)) {
		err = pci_bind(v, d->addr, prev);
		if (err)
			msg_err("%s: binding back to %s: %s; letting the kernel choose",
				d->addr, prev, strerror(-err));
		else
			goto check;
	}
	err = pci_probe(v, d->addr);
	if (err) {
		msg_err("%s: drivers_probe: %s; it has no driver now",
			d->addr, strerror(-err));
		state_remove(v, d->addr);
		return BIND_RESTORE_FAILED;
	}
check:
	state_remove(v, d->addr);
	err = pci_dev_load(v, d->addr, &now);
	if (!err && strcmp(prev, STATE_PROBE) && strcmp(now.driver, prev)) {
		msg_err("%s: wanted %s back, it is on \"%s\"", d->addr, prev,
			now.driver);
		return BIND_RESTORE_FAILED;
	}
	return BIND_OK;
}

/*
 * Unbinding waits for the user to let go (the driver asks it to) and so
 * takes the device from a running VM or DPDK process: only when told.
 */
bool unbind_refused(const struct vfioctl *v, const struct pci_dev *d)
{
	char why[256];

	if (!dev_held(v, d, why, sizeof(why)))
		return false;
	if (v->force) {
		msg_err("%s: taking it from %s (forced)", d->addr, why);
		return false;
	}
	msg_err("%s: refused: in use by %s (stop it first, or force to take it anyway)",
		d->addr, why);
	return true;
}

enum bind_result dev_unbind(const struct vfioctl *v, const char *addr)
{
	char prev[64];
	struct pci_dev d;
	int err;

	err = pci_dev_load(v, addr, &d);
	if (err) {
		if (err == -ENODEV && state_exists(v, addr)) {
			/* It left the bus: nothing to give back. */
			state_remove(v, addr);
			msg_info(v, "%s: gone, forgot its state", addr);
			return BIND_OK;
		}
		msg_err("%s: %s", addr, err == -ENODEV ? "no such PCI device" :
			strerror(-err));
		return BIND_FAILED;
	}
	if (strcmp(d.driver, VFIO_DRIVER) && strcmp(d.override, VFIO_DRIVER)) {
		if (state_exists(v, d.addr)) {
			/* Someone moved it by hand: their choice stands. */
			state_remove(v, d.addr);
			return BIND_OK;
		}
		msg_err("%s: is not bound to %s (driver \"%s\")", d.addr,
			VFIO_DRIVER, d.driver);
		return BIND_FAILED;
	}
	if (unbind_refused(v, &d))
		return BIND_REFUSED;
	err = state_load(v, d.addr, prev, sizeof(prev));
	if (err == -ENOENT) {
		/* Bound by hand (new_id, echo): let the kernel choose. */
		snprintf(prev, sizeof(prev), "%s", STATE_PROBE);
	} else if (err) {
		msg_err("%s: bad state file in %s: %s; letting the kernel choose a driver",
			d.addr, v->state_dir, strerror(-err));
		snprintf(prev, sizeof(prev), "%s", STATE_PROBE);
	}

	if (d.driver[0]) {
		err = pci_unbind(v, d.addr, VFIO_DRIVER);
		if (err) {
			msg_err("%s: unbinding from %s: %s", d.addr,
				VFIO_DRIVER, strerror(-err));
			return BIND_FAILED;
		}
	}
	if (!strcmp(d.override, VFIO_DRIVER)) {
		err = pci_set_override(v, d.addr, "");
		if (err) {
			msg_err("%s: clearing driver_override: %s", d.addr,
				strerror(-err));
			if (d.driver[0] && pci_bind(v, d.addr, VFIO_DRIVER)) {
				msg_err("%s: left without a driver, driver_override still %s",
					d.addr, VFIO_DRIVER);
				return BIND_RESTORE_FAILED;
			}
			return BIND_FAILED;
		}
	}

	return give_back(v, &d, prev);
}
