/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfioctl doctor: why a device can or cannot be handed to a user, and
 * what to do about it.  Every check adds findings to one table; the
 * table is printed once, as text or JSON.  See DOCTOR in vfioctl(8).
 */
#ifndef VFIOCTL_DOCTOR_H
#define VFIOCTL_DOCTOR_H

#include <stddef.h>

#include "config.h"
#include "vfioctl.h"

enum verdict { V_OK, V_WARN, V_FAIL };

struct finding {
	enum verdict verdict;
	const char *check;	/* stable name: "iommu", "member", ... */
	char subject[PCI_ADDR_SIZE];	/* "host" or a PCI address */
	char what[768];		/* what was found */
	char fix[512];		/* a command or a file to edit, "" if none */
};

struct findings {
	struct finding *f;
	size_t n, cap;
};

/*
 * parse_size() - "4G", "512M", "64k" or bytes (binary units) into
 * @bytes.  Returns false when @s is not a size.
 */
bool parse_size(const char *s, unsigned long long *bytes);

#endif
