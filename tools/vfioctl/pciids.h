/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Vendor and device names from the PCI ID database (pci.ids, as shipped
 * by pciutils or hwdata), parsed directly: without the file, names are
 * simply empty and the IDs stand alone.
 */
#ifndef VFIOCTL_PCIIDS_H
#define VFIOCTL_PCIIDS_H

#include "sysfs.h"

/* Longer names are cut, between two UTF-8 characters. */
struct pci_name {
	char vendor[96];
	char device[128];
};

/* Where pci.ids is looked for when --pci-ids is not given. */
#define PCI_IDS_DEFAULTS "/usr/share/misc/pci.ids:/usr/share/hwdata/pci.ids"

/*
 * pci_ids_names() - fill @out[i] for each device of @l from the first
 * readable file of the colon-separated @paths; "" for what is not found.
 */
void pci_ids_names(const char *paths, const struct pci_list *l,
		   struct pci_name *out);

#endif
