/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The configuration applied to the devices actually present: which
 * devices are meant for vfio, with which entry, and what is wrong with
 * that in this machine's IOMMU topology.
 */
#ifndef VFIOCTL_PLAN_H
#define VFIOCTL_PLAN_H

#include <sys/stat.h>

#include "config.h"
#include "sysfs.h"

struct target {
	const struct pci_dev *dev;
	const struct conf_entry *e;
};

struct plan {
	struct target *t;
	size_t n;
};

/*
 * plan_build() - match the entries of @c against @l.  Always errors: a
 * device matched by two entries, two devices of one group asking for
 * different owner, group or mode.  With @strict (check) also errors,
 * otherwise warnings: a configured address that is not present, a device
 * without IOMMU group, a group with members nobody configured.  All are
 * about this machine (c->machine_errors).  Returns 0 or -ENOMEM.
 */
int plan_build(struct plan *p, struct conf *c, const struct pci_list *l,
	       bool strict);
void plan_free(struct plan *p);

/* conf_match() - the entry that names @d, or NULL. */
const struct conf_entry *conf_match(const struct conf *c,
				    const struct pci_dev *d);

/*
 * group_ownership() - the owner/group/mode the node of @group gets: the
 * union of what its configured devices ask for.  Returns false (and says
 * why on stderr) when they disagree.
 */
bool group_ownership(const struct conf *c, const struct pci_list *l,
		     int group, struct conf_entry *out);

/*
 * What a node gets for the fields nobody configured: root:root 0600, the
 * kernel's own default.  udev-owner always prints all three so that a
 * "change" event narrows a node whose configuration was removed.
 */
#define NODE_DEFAULT_OWNER	"root"
#define NODE_DEFAULT_GROUP	"root"
#define NODE_DEFAULT_MODE	0600

/*
 * ownership_fill_defaults() - complete @own with the defaults for what it
 * does not set.  The has_* flags keep saying what was configured.
 */
void ownership_fill_defaults(struct conf_entry *own);

/* ownership_wider() - @st grants more than @own (filled) allows. */
bool ownership_wider(const struct conf_entry *own, const struct stat *st);

#endif
