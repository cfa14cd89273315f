/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Editing devices.conf for "bind --save" and "unbind --save": the new
 * file is written next to the old one, parsed back (a file with an error
 * is never installed), and renamed over it only when the device moved.
 * Comments, blank lines and other entries are kept byte for byte.
 */
#ifndef VFIOCTL_CONFEDIT_H
#define VFIOCTL_CONFEDIT_H

#include <stddef.h>

struct conf_edit {
	const char *path;	/* devices.conf */
	char tmp[4200];		/* the prepared new file, "" when none */
};

/*
 * conf_edit_prepare() - write the new file to ed->tmp: the line of the
 * PCI address @addr replaced by "@addr @opts" (appended when there is
 * none), or, with @opts NULL, removed.  Returns 0, or -errno / -EINVAL
 * (the new file does not parse; the errors were reported).
 */
int conf_edit_prepare(struct conf_edit *ed, const char *addr,
		      const char *opts);
/* conf_edit_commit() - install ed->tmp.  Returns 0 or -errno. */
int conf_edit_commit(struct conf_edit *ed);
/* conf_edit_abort() - remove ed->tmp. */
void conf_edit_abort(struct conf_edit *ed);

#endif
