// SPDX-License-Identifier: GPL-2.0-only
/*
 * In-use checks, after dpdk-devbind's "*Active*" refusal but wider: a
 * device is ours only when nothing on the host would break by losing it.
 * A device "is under" a PCI device when its sysfs path (symlinks
 * resolved) lies below the PCI device's: that covers NVMe namespaces,
 * disks behind a SATA or SAS controller, framebuffers and serial ports.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inuse.h"

#define NET_IFF_UP	0x1	/* <net/if.h> IFF_UP, kept here: no libc clash */

struct use {
	const struct vfioctl *v;
	char pci_real[PATH_MAX];	/* the PCI device's resolved path */
	char *why;
	size_t size;
};

static bool said(struct use *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool said(struct use *u, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(u->why, u->size, fmt, ap);
	va_end(ap);
	return true;
}

/* @path, with its symlinks resolved, is the PCI device or lies below it. */
static bool is_under(const struct use *u, const char *path)
{
	char real[PATH_MAX];
	size_t len = strlen(u->pci_real);

	if (!realpath(path, real))
		return false;
	return !strncmp(real, u->pci_real, len) &&
	       (real[len] == '/' || !real[len]);
}

static bool proc_path(const struct vfioctl *v, char *buf, size_t size,
		      const char *rel)
{
	int n = snprintf(buf, size, "%s/%s", v->proc, rel);

	return n > 0 && (size_t)n < size;
}

/* @ifname is the device column of a route in /proc/net/route or ipv6_route. */
static bool has_routes(const struct vfioctl *v, const char *ifname)
{
	static const struct {
		const char *file;
		int column;	/* of the interface name, from 0 */
		bool header;
	} tables[] = {
		{ "net/route", 0, true },
		{ "net/ipv6_route", 9, false },
	};
	char path[4096], line[512];
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		FILE *f;
		bool first = true;

		if (!proc_path(v, path, sizeof(path), tables[i].file))
			continue;
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *save, *w;
			int col = 0;

			if (first && tables[i].header) {
				first = false;
				continue;
			}
			for (w = strtok_r(line, " \t\n", &save); w;
			     w = strtok_r(NULL, " \t\n", &save), col++)
				if (col == tables[i].column)
					break;
			if (w && !strcmp(w, ifname)) {
				fclose(f);
				return true;
			}
		}
		fclose(f);
	}
	return false;
}

/*
 * Every interface of /sys/class/net that lies under the device: not only
 * <dev>/net/IF, virtio puts it at <dev>/virtio0/net/IF.
 */
static bool net_in_use(struct use *u)
{
	char dir[4096], path[4400], buf[64];
	struct dirent *de;
	DIR *dh;
	bool busy = false;

	if (!sysfs_path(u->v, dir, sizeof(dir), "class/net"))
		return false;
	dh = opendir(dir);
	if (!dh)
		return false;
	while (!busy && (de = readdir(dh))) {
		unsigned long flags = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!is_under(u, path))
			continue;
		snprintf(path, sizeof(path), "%s/%s/operstate", dir,
			 de->d_name);
		if (!read_attr(path, buf, sizeof(buf)) && !strcmp(buf, "up")) {
			busy = said(u, "network interface %s is up",
				    de->d_name);
			break;
		}
		snprintf(path, sizeof(path), "%s/%s/flags", dir, de->d_name);
		if (!read_attr(path, buf, sizeof(buf)))
			flags = strtoul(buf, NULL, 16);
		if (flags & NET_IFF_UP)
			busy = said(u, "network interface %s is up (IFF_UP)",
				    de->d_name);
		else if (has_routes(u->v, de->d_name))
			busy = said(u, "network interface %s carries routes",
				    de->d_name);
	}
	closedir(dh);
	return busy;
}

/*
 * "maj:min" is mounted (mountinfo's third field), or /dev/@name is a
 * mount's source (the field after the type, past " - "): btrfs and
 * others show an anonymous 0:N instead of the disk's numbers.  The
 * mount point goes to @where.
 */
static bool mounted(const struct vfioctl *v, const char *majmin,
		    const char *name, char *where, size_t size)
{
	char path[4096], line[4096];
	bool found = false;
	FILE *f;

	if (!proc_path(v, path, sizeof(path), "self/mountinfo"))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *save, *w, *mm = NULL, *mp = NULL, *src = NULL;
		int col = 0, after = -1;

		for (w = strtok_r(line, " \n", &save); w;
		     w = strtok_r(NULL, " \n", &save), col++) {
			if (col == 2)
				mm = w;
			else if (col == 4)
				mp = w;
			else if (col > 5 && after < 0 && !strcmp(w, "-"))
				after = col;
			else if (after > 0 && col == after + 2)
				src = w;
		}
		if (mm && mp && (!strcmp(mm, majmin) ||
				 (src && !strncmp(src, "/dev/", 5) &&
				  !strcmp(src + 5, name)))) {
			snprintf(where, size, "%s", mp);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* /dev/@name is listed in /proc/swaps. */
static bool swapped_on(const struct vfioctl *v, const char *name)
{
	char path[4096], line[1024], dev[300];
	bool found = false;
	FILE *f;

	if (!proc_path(v, path, sizeof(path), "swaps"))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	snprintf(dev, sizeof(dev), "/dev/%s", name);
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, dev, strlen(dev)) &&
			(line[strlen(dev)] == ' ' || line[strlen(dev)] == '\t');
	fclose(f);
	return found;
}

/* The first entry of the directory @dir other than . and .., or "". */
static void first_entry(const char *dir, char *buf, size_t size)
{
	struct dirent *de;
	DIR *dh;

	buf[0] = '\0';
	dh = opendir(dir);
	if (!dh)
		return;
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(buf, size, "%s", de->d_name);
		break;
	}
	closedir(dh);
}

/* One block device or partition, its sysfs directory @dir. */
static bool blk_busy(struct use *u, const char *dir, const char *name)
{
	char path[4400], buf[64], where[1024], holder[256];

	snprintf(path, sizeof(path), "%s/dev", dir);
	if (read_attr(path, buf, sizeof(buf)))
		buf[0] = '\0';
	if (mounted(u->v, buf, name, where, sizeof(where)))
		return said(u, "block device %s is mounted on %s", name, where);
	if (swapped_on(u->v, name))
		return said(u, "block device %s is in use as swap", name);
	snprintf(path, sizeof(path), "%s/holders", dir);
	first_entry(path, holder, sizeof(holder));
	if (holder[0])
		return said(u, "block device %s is held by %s", name, holder);
	return false;
}

static bool block_in_use(struct use *u)
{
	char dir[4096], disk[4400], part[4700];
	struct dirent *de, *pe;
	bool busy = false;
	DIR *dh, *ph;

	if (!sysfs_path(u->v, dir, sizeof(dir), "block"))
		return false;
	dh = opendir(dir);
	if (!dh)
		return false;
	while (!busy && (de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(disk, sizeof(disk), "%s/%s/device", dir, de->d_name);
		if (!is_under(u, disk))
			continue;
		snprintf(disk, sizeof(disk), "%s/%s", dir, de->d_name);
		busy = blk_busy(u, disk, de->d_name);
		/* Partitions are the subdirectories with a "partition" file. */
		ph = busy ? NULL : opendir(disk);
		if (!ph)
			continue;
		while (!busy && (pe = readdir(ph))) {
			if (pe->d_name[0] == '.')
				continue;
			snprintf(part, sizeof(part), "%s/%s/partition", disk,
				 pe->d_name);
			if (access(part, F_OK))
				continue;
			snprintf(part, sizeof(part), "%s/%s", disk, pe->d_name);
			busy = blk_busy(u, part, pe->d_name);
		}
		closedir(ph);
	}
	closedir(dh);
	return busy;
}

/*
 * The console: a tty of /proc/consoles whose device is under ours (a PCI
 * serial card), or, for the virtual terminals (tty0, ttyN), a
 * framebuffer under ours that fbcon draws them on.
 */
static bool console_in_use(struct use *u)
{
	char path[4096], line[512], link[4400], fb[4096];
	struct dirent *de;
	bool busy = false;
	FILE *f;
	DIR *dh;

	if (!proc_path(u->v, path, sizeof(path), "consoles"))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!busy && fgets(line, sizeof(line), f)) {
		char name[64];

		if (sscanf(line, "%63s", name) != 1)
			continue;
		if (!strncmp(name, "tty", 3) &&
		    strspn(name + 3, "0123456789") == strlen(name + 3)) {
			if (!sysfs_path(u->v, fb, sizeof(fb), "class/graphics"))
				continue;
			dh = opendir(fb);
			if (!dh)
				continue;
			while (!busy && (de = readdir(dh))) {
				if (strncmp(de->d_name, "fb", 2))
					continue;
				snprintf(link, sizeof(link), "%s/%s/device",
					 fb, de->d_name);
				if (is_under(u, link))
					busy = said(u, "framebuffer %s shows the console (%s)",
						    de->d_name, name);
			}
			closedir(dh);
			continue;
		}
		if (sysfs_path(u->v, link, sizeof(link), "class/tty/%s/device",
			       name) && is_under(u, link))
			busy = said(u, "it is the console (%s)", name);
	}
	fclose(f);
	return busy;
}

bool dev_in_use(const struct vfioctl *v, const struct pci_dev *d, char *why,
		size_t size)
{
	struct use u = { .v = v, .why = why, .size = size };
	char path[4096], buf[16];

	why[0] = '\0';
	if (!sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s", d->addr) ||
	    !realpath(path, u.pci_real))
		return said(&u, "cannot resolve %s: %s", path, strerror(errno));
	if (sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s/boot_vga",
		       d->addr) &&
	    !read_attr(path, buf, sizeof(buf)) && !strcmp(buf, "1"))
		return said(&u, "it is the boot VGA device");
	return net_in_use(&u) || block_in_use(&u) || console_in_use(&u);
}

/* @target, a /proc/PID/fd link, is a node of IOMMU group @group. */
static bool is_group_node(const char *target, int group)
{
	char name[32];

	snprintf(name, sizeof(name), "/dev/vfio/pci:%d", group);
	if (!strcmp(target, name))
		return true;
	snprintf(name, sizeof(name), "/dev/vfio/%d", group);
	return !strcmp(target, name);
}

/* Process @pid has a node of @group open. */
static bool pid_holds(const struct vfioctl *v, const char *pid, int group)
{
	char dir[4096], path[4400], target[PATH_MAX];
	struct dirent *de;
	bool held = false;
	ssize_t n;
	DIR *fds;

	if (snprintf(dir, sizeof(dir), "%s/%s/fd", v->proc, pid) >=
	    (int)sizeof(dir))
		return false;
	fds = opendir(dir);
	if (!fds)
		return false;	/* gone, or a kernel thread */
	while (!held && (de = readdir(fds))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		held = is_group_node(target, group);
	}
	closedir(fds);
	return held;
}

static int cmp_pid(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

bool dev_held(const struct vfioctl *v, const struct pci_dev *d, char *why,
	      size_t size)
{
	char rel[32], path[4096], comm[64];
	size_t len = 0, n = 0, cap = 0, i;
	long *pids = NULL, *grown;
	struct dirent *de;
	DIR *proc;

	why[0] = '\0';
	if (d->group < 0)
		return false;
	proc = opendir(v->proc);
	if (!proc)
		return false;
	while ((de = readdir(proc))) {
		if (!de->d_name[0] || de->d_name[strspn(de->d_name, "0123456789")] ||
		    !pid_holds(v, de->d_name, d->group))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			grown = realloc(pids, cap * sizeof(*pids));
			if (!grown)
				break;
			pids = grown;
		}
		pids[n++] = strtol(de->d_name, NULL, 10);
	}
	closedir(proc);
	/* The lowest PIDs first, three of them: a message, not a listing. */
	if (n)
		qsort(pids, n, sizeof(*pids), cmp_pid);
	for (i = 0; i < n && i < 3; i++) {
		snprintf(rel, sizeof(rel), "%ld/comm", pids[i]);
		if (!proc_path(v, path, sizeof(path), rel) ||
		    read_attr(path, comm, sizeof(comm)))
			snprintf(comm, sizeof(comm), "?");
		len += snprintf(why + len, len < size ? size - len : 0,
				"%sPID %ld (%s)", i ? ", " : "", pids[i], comm);
	}
	if (n > 3 && len < size)
		snprintf(why + len, size - len, " and %zu more", n - 3);
	free(pids);
	return n > 0;
}

void dev_net_names(const struct vfioctl *v, const struct pci_dev *d,
		   char *buf, size_t size)
{
	struct use u = { .v = v };
	char dir[4096], path[4400];
	struct dirent **names;
	size_t len = 0;
	int i, n;

	buf[0] = '\0';
	if (!sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s", d->addr) ||
	    !realpath(path, u.pci_real) ||
	    !sysfs_path(v, dir, sizeof(dir), "class/net"))
		return;
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(names[i]->d_name);

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		/* The name, its NUL and the empty name that ends the list. */
		if (names[i]->d_name[0] != '.' && is_under(&u, path) &&
		    len + nl + 2 <= size) {
			memcpy(buf + len, names[i]->d_name, nl + 1);
			len += nl + 1;
			buf[len] = '\0';
		}
		free(names[i]);
	}
	free(names);
}
