// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stand-in for the kernel's side of the sysfs files vfioctl writes, for
 * the host tests.  It replaces tools/vfioctl/sysfs_io.c at link time and
 * acts on a fake tree the way the PCI core would: unbind removes the
 * driver link, bind and drivers_probe create it when the driver matches
 * (driver_override first, else the driver's "ids" file), driver_override
 * stores "(null)" when cleared.
 *
 * Environment:
 *   FAKE_SYSFS   the fake tree (the same as --sysfs-root)
 *   FAKE_LOG     every write is appended as "<path below root> <value>"
 *   FAKE_FAIL    comma-separated paths below root whose writes fail (EIO)
 *   FAKE_NOOP    comma-separated paths whose writes succeed but do nothing
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysfs.h"

static bool listed(const char *var, const char *rel)
{
	const char *list = getenv(var), *p;
	size_t len = strlen(rel);

	for (p = list; p && *p; ) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && !strncmp(p, rel, n))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static void log_write(const char *rel, const char *val)
{
	const char *path = getenv("FAKE_LOG");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%s %s\n", rel, strcmp(val, "\n") ? val : "\\n");
	fclose(f);
}

static int put_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(val, f);
	return fclose(f) ? -errno : 0;
}

static void get_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static void current_driver(const char *root, const char *dev, char *buf,
			   size_t size)
{
	char path[4096], target[4096];
	ssize_t n;
	char *base;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/driver", root, dev);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(buf, size, "%s", base ? base + 1 : target);
}

static bool matches(const char *root, const char *dev, const char *drv)
{
	char path[4096], ov[128], v[32], d[32], id[64], line[128];
	FILE *f;
	bool ok = false;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/driver_override",
		 root, dev);
	get_file(path, ov, sizeof(ov));
	if (ov[0] && strcmp(ov, "(null)"))
		return !strcmp(ov, drv);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/vendor", root, dev);
	get_file(path, v, sizeof(v));
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/device", root, dev);
	get_file(path, d, sizeof(d));
	snprintf(id, sizeof(id), "%s:%s", v[0] ? v + 2 : "", d[0] ? d + 2 : "");
	snprintf(path, sizeof(path), "%s/bus/pci/drivers/%s/ids", root, drv);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!ok && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ok = !strcmp(line, id);
	}
	fclose(f);
	return ok;
}

static int do_bind(const char *root, const char *dev, const char *drv)
{
	char path[4096], link[4096], cur[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/bus/pci/drivers/%s", root, drv);
	if (stat(path, &st))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", root, dev);
	if (stat(path, &st))
		return -ENODEV;
	current_driver(root, dev, cur, sizeof(cur));
	if (cur[0])
		return -EBUSY;
	if (!matches(root, dev, drv))
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/driver", root, dev);
	snprintf(link, sizeof(link), "%s/bus/pci/drivers/%s", root, drv);
	if (symlink(link, path))
		return -errno;
	snprintf(path, sizeof(path), "%s/bus/pci/drivers/%s/%s", root, drv, dev);
	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", root, dev);
	if (symlink(link, path))
		return -errno;
	return 0;
}

static int do_unbind(const char *root, const char *dev, const char *drv)
{
	char path[4096], cur[128];

	current_driver(root, dev, cur, sizeof(cur));
	if (strcmp(cur, drv))
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/driver", root, dev);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bus/pci/drivers/%s/%s", root, drv, dev);
	unlink(path);
	return 0;
}

static int do_probe(const char *root, const char *dev)
{
	char path[4096], cur[128];
	struct dirent **names;
	int i, n;

	current_driver(root, dev, cur, sizeof(cur));
	if (cur[0])
		return 0;
	snprintf(path, sizeof(path), "%s/bus/pci/drivers", root);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && !cur[0] &&
		    matches(root, dev, names[i]->d_name) &&
		    !do_bind(root, dev, names[i]->d_name))
			cur[0] = 'x';
		free(names[i]);
	}
	free(names);
	return 0;
}

int sysfs_write(const char *path, const char *val)
{
	const char *root = getenv("FAKE_SYSFS"), *rel;
	char drv[256], dev[64], tail[64];
	size_t len;

	if (!root)
		return -ENOSYS;
	len = strlen(root);
	if (strncmp(path, root, len) || path[len] != '/')
		return -EXDEV;
	rel = path + len + 1;
	log_write(rel, val);
	if (listed("FAKE_FAIL", rel))
		return -EIO;
	if (listed("FAKE_NOOP", rel))
		return 0;

	snprintf(dev, sizeof(dev), "%s", val);
	if (sscanf(rel, "bus/pci/devices/%63[^/]/%63s", dev, tail) == 2 &&
	    !strcmp(tail, "driver_override"))
		return put_file(path, strcmp(val, "\n") ? val : "(null)\n");
	if (sscanf(rel, "bus/pci/drivers/%255[^/]/%63s", drv, tail) == 2) {
		if (!strcmp(tail, "bind"))
			return do_bind(root, val, drv);
		if (!strcmp(tail, "unbind"))
			return do_unbind(root, val, drv);
	}
	if (!strcmp(rel, "bus/pci/drivers_probe"))
		return do_probe(root, val);
	/* uevent and anything else: the log is all the test looks at. */
	return 0;
}
