// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checks that need the topology.  The group is what user space opens, so
 * the rules are per group: one owner for the node, and every member that
 * could hold DMA (anything but a bridge) must be ours or the group is not
 * viable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static bool entry_names(const struct conf_entry *e, const struct pci_dev *d)
{
	if (e->kind == CONF_ADDR)
		return !strcmp(e->addr, d->addr);
	return e->vendor == d->vendor && e->device == d->device;
}

/*
 * An address entry is more specific than a vendor:device one; when both
 * name a device, plan_build() reports it, and the address wins here.
 */
const struct conf_entry *conf_match(const struct conf *c,
				    const struct pci_dev *d)
{
	const struct conf_entry *id = NULL;
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct conf_entry *e = &c->entries[i];

		if (!entry_names(e, d))
			continue;
		if (e->kind == CONF_ADDR)
			return e;
		if (!id)
			id = e;
	}
	return id;
}

/*
 * Report a problem as an error or, when not @strict, as a warning; every
 * problem found here is about this machine's devices, not the file alone.
 */
#define topo_problem(c, strict, line, ...)				\
	do {								\
		if (strict)						\
			conf_machine_error(c, line, __VA_ARGS__);	\
		else							\
			conf_machine_warn(c, line, __VA_ARGS__);	\
	} while (0)

static const struct target *find_target(const struct plan *p,
					const struct pci_dev *d)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->t[i].dev == d)
			return &p->t[i];
	return NULL;
}

static void check_pair(struct conf *c, const struct target *a,
		       const struct target *b)
{
	const struct conf_entry *x = a->e, *y = b->e;

	if (x->has_owner && y->has_owner && x->uid != y->uid)
		conf_machine_error(c, y->line,
				   "%s has owner=%s but %s (line %d) in the same IOMMU group %d has owner=%s",
				   b->dev->addr, y->owner, a->dev->addr,
				   x->line, a->dev->group, x->owner);
	if (x->has_group && y->has_group && x->gid != y->gid)
		conf_machine_error(c, y->line,
				   "%s has group=%s but %s (line %d) in the same IOMMU group %d has group=%s",
				   b->dev->addr, y->group, a->dev->addr,
				   x->line, a->dev->group, x->group);
	if (x->has_mode && y->has_mode && x->mode != y->mode)
		conf_machine_error(c, y->line,
				   "%s has mode=%04o but %s (line %d) in the same IOMMU group %d has mode=%04o",
				   b->dev->addr, y->mode, a->dev->addr,
				   x->line, a->dev->group, x->mode);
}

static void check_groups(struct plan *p, struct conf *c,
			 const struct pci_list *l, bool strict)
{
	size_t i, j;

	for (i = 0; i < p->n; i++) {
		const struct target *a = &p->t[i];
		bool first = true;

		if (a->dev->group < 0)
			continue;
		/* Only the group's first target reports for the group. */
		for (j = 0; j < i; j++)
			if (p->t[j].dev->group == a->dev->group)
				first = false;
		if (!first)
			continue;
		for (j = i + 1; j < p->n; j++)
			if (p->t[j].dev->group == a->dev->group)
				check_pair(c, a, &p->t[j]);
		for (j = 0; j < l->n; j++) {
			const struct pci_dev *m = &l->devs[j];

			if (m->group != a->dev->group || find_target(p, m) ||
			    pci_dev_is_bridge(m))
				continue;
			topo_problem(c, strict, a->e->line,
				     "IOMMU group %d of %s also holds %s (%04x:%04x, %s), which is not configured: the group cannot be used until it is",
				     a->dev->group, a->dev->addr, m->addr,
				     m->vendor, m->device,
				     m->driver[0] ? m->driver : "no driver");
		}
	}
}

int plan_build(struct plan *p, struct conf *c, const struct pci_list *l,
	       bool strict)
{
	size_t i, j, cap = 0;

	p->t = NULL;
	p->n = 0;
	for (i = 0; i < c->n; i++) {
		const struct conf_entry *e = &c->entries[i];
		bool found = false;

		for (j = 0; j < l->n; j++) {
			const struct pci_dev *d = &l->devs[j];
			const struct target *t;

			if (!entry_names(e, d))
				continue;
			found = true;
			t = find_target(p, d);
			if (t) {
				conf_machine_error(c, e->line,
						   "%s is also configured at line %d",
						   d->addr, t->e->line);
				continue;
			}
			if (d->group < 0)
				topo_problem(c, strict, e->line,
					     "%s has no IOMMU group (is the IOMMU on?)",
					     d->addr);
			if (p->n == cap) {
				size_t ncap = cap ? cap * 2 : 16;
				struct target *n = realloc(p->t,
							   ncap * sizeof(*n));

				if (!n) {
					plan_free(p);
					return -ENOMEM;
				}
				p->t = n;
				cap = ncap;
			}
			p->t[p->n].dev = d;
			p->t[p->n].e = e;
			p->n++;
		}
		if (found)
			continue;
		if (e->kind == CONF_ADDR)
			topo_problem(c, strict, e->line, "%s is not present",
				     e->addr);
		else
			conf_machine_warn(c, e->line,
					  "no device %04x:%04x is present",
					  e->vendor, e->device);
	}
	check_groups(p, c, l, strict);
	return 0;
}

void plan_free(struct plan *p)
{
	free(p->t);
	p->t = NULL;
	p->n = 0;
}

bool group_ownership(const struct conf *c, const struct pci_list *l,
		     int group, struct conf_entry *out)
{
	const struct conf_entry *from_owner = NULL, *from_group = NULL;
	const struct conf_entry *from_mode = NULL;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < l->n; i++) {
		const struct conf_entry *e;

		if (l->devs[i].group != group)
			continue;
		e = conf_match(c, &l->devs[i]);
		if (!e)
			continue;
		if (e->has_owner) {
			if (from_owner && from_owner->uid != e->uid)
				goto conflict;
			from_owner = e;
		}
		if (e->has_group) {
			if (from_group && from_group->gid != e->gid)
				goto conflict;
			from_group = e;
		}
		if (e->has_mode) {
			if (from_mode && from_mode->mode != e->mode)
				goto conflict;
			from_mode = e;
		}
	}
	if (from_owner) {
		memcpy(out->owner, from_owner->owner, sizeof(out->owner));
		out->uid = from_owner->uid;
		out->has_owner = true;
	}
	if (from_group) {
		memcpy(out->group, from_group->group, sizeof(out->group));
		out->gid = from_group->gid;
		out->has_group = true;
	}
	if (from_mode) {
		out->mode = from_mode->mode;
		out->has_mode = true;
	}
	return true;

conflict:
	fprintf(stderr,
		"vfioctl: IOMMU group %d: its devices ask for different ownership in %s; run vfioctl check\n",
		group, c->path);
	return false;
}

void ownership_fill_defaults(struct conf_entry *own)
{
	if (!own->has_owner) {
		snprintf(own->owner, sizeof(own->owner), "%s",
			 NODE_DEFAULT_OWNER);
		own->uid = 0;
	}
	if (!own->has_group) {
		snprintf(own->group, sizeof(own->group), "%s",
			 NODE_DEFAULT_GROUP);
		own->gid = 0;
	}
	if (!own->has_mode)
		own->mode = NODE_DEFAULT_MODE;
}

bool ownership_wider(const struct conf_entry *own, const struct stat *st)
{
	return st->st_uid != own->uid || st->st_gid != own->gid ||
	       (st->st_mode & 07777 & ~own->mode);
}
