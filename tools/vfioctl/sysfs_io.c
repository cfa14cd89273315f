// SPDX-License-Identifier: GPL-2.0-only
/*
 * The real sysfs write.  Kept alone in its file so that the host tests can
 * link an emulation of the kernel instead (tests/host/fake_kernel.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

int sysfs_write(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* sysfs takes an attribute in one write(); a short one is an error. */
	n = write(fd, val, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}
