// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the PCI topology.  Paths are built below v->sysfs so that the
 * same code runs on /sys and on a fake tree in the host tests.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sysfs.h"

bool sysfs_path(const struct vfioctl *v, char *buf, size_t size,
		const char *fmt, ...)
{
	va_list ap;
	int n, m;

	n = snprintf(buf, size, "%s/", v->sysfs);
	if (n < 0 || (size_t)n >= size)
		return false;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return m >= 0 && (size_t)m < size - n;
}

int read_attr(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_hex(const char *path, unsigned int *val)
{
	char buf[32], *end;
	int err = read_attr(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	*val = (unsigned int)strtoul(buf, &end, 16);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

/* The last component of the symlink at @path, "" when there is none. */
static int link_name(const char *path, char *buf, size_t size)
{
	char target[4096];
	const char *base;
	ssize_t n;

	buf[0] = '\0';
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return errno == ENOENT ? 0 : -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= size)
		return -ENAMETOOLONG;
	strcpy(buf, base);
	return 0;
}

int pci_dev_load(const struct vfioctl *v, const char *addr, struct pci_dev *d)
{
	char path[4096], grp[32], *end;
	struct stat st;
	int err;

	memset(d, 0, sizeof(*d));
	if (!parse_pci_addr(addr, d->addr))
		return -EINVAL;
	if (!sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s", d->addr))
		return -ENAMETOOLONG;
	if (stat(path, &st))
		return errno == ENOENT ? -ENODEV : -errno;

	sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s/vendor", d->addr);
	err = read_hex(path, &d->vendor);
	if (!err) {
		sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s/device",
			   d->addr);
		err = read_hex(path, &d->device);
	}
	if (!err) {
		sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s/class",
			   d->addr);
		err = read_hex(path, &d->class);
	}
	if (err)
		return err;

	sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s/driver", d->addr);
	err = link_name(path, d->driver, sizeof(d->driver));
	if (err)
		return err;

	sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s/iommu_group",
		   d->addr);
	err = link_name(path, grp, sizeof(grp));
	if (err)
		return err;
	d->group = -1;
	if (grp[0]) {
		long g = strtol(grp, &end, 10);

		if (*end || g < 0 || g > 0x7fffffff)
			return -EINVAL;
		d->group = (int)g;
	}

	/* Unset reads "(null)"; kernels without the attribute: unset too. */
	sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s/driver_override",
		   d->addr);
	err = read_attr(path, d->override, sizeof(d->override));
	if (err == -ENOENT || (!err && !strcmp(d->override, "(null)")))
		d->override[0] = '\0';
	else if (err)
		return err;
	return 0;
}

bool pci_dev_is_bridge(const struct pci_dev *d)
{
	return (d->class >> 8) == PCI_CLASS_BRIDGE_PCI;
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(((const struct pci_dev *)a)->addr,
		      ((const struct pci_dev *)b)->addr);
}

int pci_list_load(const struct vfioctl *v, struct pci_list *l)
{
	char path[4096];
	struct dirent *de;
	size_t cap = 0;
	int err = 0;
	DIR *dir;

	l->devs = NULL;
	l->n = 0;
	if (!sysfs_path(v, path, sizeof(path), "bus/pci/devices"))
		return -ENAMETOOLONG;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char addr[PCI_ADDR_SIZE];

		if (!parse_pci_addr(de->d_name, addr) ||
		    strcmp(addr, de->d_name))
			continue;
		if (l->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct pci_dev *n = realloc(l->devs, ncap * sizeof(*n));

			if (!n) {
				err = -ENOMEM;
				break;
			}
			l->devs = n;
			cap = ncap;
		}
		err = pci_dev_load(v, de->d_name, &l->devs[l->n]);
		/* A device that vanished while we looked is simply gone. */
		if (err == -ENODEV) {
			err = 0;
			continue;
		}
		if (err)
			break;
		l->n++;
	}
	closedir(dir);
	if (err) {
		pci_list_free(l);
		return err;
	}
	qsort(l->devs, l->n, sizeof(*l->devs), cmp_dev);
	return 0;
}

void pci_list_free(struct pci_list *l)
{
	free(l->devs);
	l->devs = NULL;
	l->n = 0;
}

struct pci_dev *pci_list_find(const struct pci_list *l, const char *addr)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->devs[i].addr, addr))
			return &l->devs[i];
	return NULL;
}

bool group_viable(const struct pci_list *l, int group)
{
	size_t i;

	if (group < 0)
		return false;
	for (i = 0; i < l->n; i++) {
		const struct pci_dev *d = &l->devs[i];

		if (d->group != group || pci_dev_is_bridge(d))
			continue;
		if (d->driver[0] && strcmp(d->driver, VFIO_DRIVER))
			return false;
	}
	return true;
}

/* Whether /sys/class/iommu has a unit: the kernel found and enabled one. */
static bool iommu_registered(const struct vfioctl *v)
{
	char dir[4096];
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (!sysfs_path(v, dir, sizeof(dir), "class/iommu"))
		return false;
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = de->d_name[0] != '.';
	closedir(d);
	return found;
}

/*
 * The word of the kernel command line @cmdline that turns the IOMMU off:
 * iommu=off, or intel_iommu= or amd_iommu= with "off" among the
 * comma-separated settings.  NULL when there is none.  @cmdline is cut
 * into its words.
 */
static const char *iommu_off_word(char *cmdline)
{
	static const char *const keys[] = { "intel_iommu=", "amd_iommu=",
					    "iommu=" };
	char *word, *save, *opt, *save_opt, val[256];
	size_t i, n;

	for (word = strtok_r(cmdline, " \t", &save); word;
	     word = strtok_r(NULL, " \t", &save)) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			n = strlen(keys[i]);
			if (strncmp(word, keys[i], n) ||
			    strlen(word + n) >= sizeof(val))
				continue;
			strcpy(val, word + n);
			for (opt = strtok_r(val, ",", &save_opt); opt;
			     opt = strtok_r(NULL, ",", &save_opt))
				if (!strcmp(opt, "off"))
					return word;
		}
	}
	return NULL;
}

void no_group_why(const struct vfioctl *v, char *buf, size_t size)
{
	char path[4096], cmdline[4096];
	const char *off = NULL;

	if (iommu_registered(v)) {
		snprintf(buf, size, "not behind an IOMMU");
		return;
	}
	snprintf(path, sizeof(path), "%s/cmdline", v->proc);
	if (!read_attr(path, cmdline, sizeof(cmdline)))
		off = iommu_off_word(cmdline);
	if (off)
		snprintf(buf, size, "IOMMU off: %s", off);
	else
		snprintf(buf, size, "no IOMMU: see vfioctl doctor");
}

bool vfio_driver_loaded(const struct vfioctl *v)
{
	char path[4096];
	struct stat st;

	return sysfs_path(v, path, sizeof(path), "bus/pci/drivers/%s",
			  VFIO_DRIVER) && !stat(path, &st) && S_ISDIR(st.st_mode);
}

int pci_set_override(const struct vfioctl *v, const char *addr,
		     const char *driver)
{
	char path[4096];

	if (!sysfs_path(v, path, sizeof(path),
			"bus/pci/devices/%s/driver_override", addr))
		return -ENAMETOOLONG;
	/* A lone newline is how the kernel is told to clear the override. */
	return sysfs_write(path, driver[0] ? driver : "\n");
}

int pci_unbind(const struct vfioctl *v, const char *addr, const char *driver)
{
	char path[4096];

	if (!sysfs_path(v, path, sizeof(path), "bus/pci/drivers/%s/unbind",
			driver))
		return -ENAMETOOLONG;
	return sysfs_write(path, addr);
}

int pci_bind(const struct vfioctl *v, const char *addr, const char *driver)
{
	char path[4096];

	if (!sysfs_path(v, path, sizeof(path), "bus/pci/drivers/%s/bind",
			driver))
		return -ENAMETOOLONG;
	return sysfs_write(path, addr);
}

int pci_probe(const struct vfioctl *v, const char *addr)
{
	char path[4096];

	if (!sysfs_path(v, path, sizeof(path), "bus/pci/drivers_probe"))
		return -ENAMETOOLONG;
	return sysfs_write(path, addr);
}
