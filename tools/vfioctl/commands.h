/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The subcommands.  Each returns an exit code (vfioctl.h); those that
 * take arguments get the ones that follow its name, main() refuses any
 * for the others.
 */
#ifndef VFIOCTL_COMMANDS_H
#define VFIOCTL_COMMANDS_H

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

#endif
