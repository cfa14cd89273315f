/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What "apply --boot" and "apply --wait" do before apply itself: decide
 * from the configuration whether there is anything to do, wait until udev
 * has processed the configured devices, and load the vfio driver.  None
 * of it holds the state lock: udev's own "udev-claim" takes that lock
 * while processing a device, so waiting for udev under it would stall
 * both until the timeout.
 */
#ifndef VFIOCTL_BOOT_H
#define VFIOCTL_BOOT_H

#include <stdbool.h>

#include "vfioctl.h"

/* What --boot waits when no --wait is given, in seconds. */
#define BOOT_WAIT_DEFAULT	60

/* The module "apply --boot" loads, and how it finds modprobe. */
#define BOOT_MODULE		"vfio_pci"
#define BOOT_MODPROBE		"modprobe"	/* looked up in $PATH */
#define BOOT_MODPROBE_ENV	"VFIOCTL_MODPROBE"

/*
 * apply_prepare() - the steps before apply.  With v->boot: end quietly
 * (*@done set, EXIT_OK) when the configuration selects no device, end
 * (EXIT_USAGE) when it is invalid, otherwise load BOOT_MODULE.  With
 * v->wait > 0: first wait up to v->wait seconds in all for udev to have
 * processed every selected device (its entry <udev-data>/+pci:ADDRESS),
 * one line for each that did not get there.  Returns the exit code to
 * end with when *@done, otherwise EXIT_OK: go on with apply.
 */
int apply_prepare(const struct vfioctl *v, bool *done);

#endif
