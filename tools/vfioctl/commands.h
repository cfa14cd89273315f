/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The verbs.  Each returns an exit code (vfioctl.h); those that take
 * arguments get the ones that follow its name, in the numbers the verb
 * table of vfioctl.c allows, which refuses any for the others.
 */
#ifndef VFIOCTL_COMMANDS_H
#define VFIOCTL_COMMANDS_H

#include "config.h"
#include "vfioctl.h"

int cmd_list(const struct vfioctl *v);
int cmd_status(const struct vfioctl *v);
int cmd_check(const struct vfioctl *v);
int cmd_apply(const struct vfioctl *v);
int cmd_bind(const struct vfioctl *v, int argc, char **argv);
int cmd_unbind(const struct vfioctl *v, int argc, char **argv);
int cmd_unbind_all(const struct vfioctl *v);
int cmd_udev_owner(const struct vfioctl *v, int argc, char **argv);
int cmd_udev_claim(const struct vfioctl *v, int argc, char **argv);
int cmd_doctor(const struct vfioctl *v, int argc, char **argv);

struct conf;
struct plan;

/*
 * resolve_device() - @arg, a PCI address or a network interface, as a
 * normalised address in @addr.  Returns false (and says why) otherwise.
 */
bool resolve_device(const struct vfioctl *v, const char *arg,
		    char addr[PCI_ADDR_SIZE]);

/*
 * check_warnings() - the warnings of check beyond syntax and topology:
 * configured devices the host uses, world-accessible modes.
 */
void check_warnings(const struct vfioctl *v, struct conf *c,
		    const struct plan *p);

#endif
