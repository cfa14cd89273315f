// SPDX-License-Identifier: GPL-2.0-only
/*
 * pci.ids:	"vvvv  Vendor name" at the start of a line, then its
 * devices as "\tdddd  Device name" (and subsystems, "\t\t...", which we
 * skip); the device classes ("C cc  ...") follow the vendors.  Lines
 * beginning with '#' are comments, anywhere.  One pass over the file
 * fills the names of every device in the list.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pciids.h"

/* "hhhh  name": the ID in @id, the name (newline cut) returned. */
static char *id_line(char *s, unsigned int *id)
{
	char *end;
	int i;

	for (i = 0; i < 4; i++)
		if (!isxdigit((unsigned char)s[i]))
			return NULL;
	if (s[4] != ' ' || s[5] != ' ')
		return NULL;
	*id = (unsigned int)strtoul(s, &end, 16);
	s[strcspn(s, "\n")] = '\0';
	return s + 6;
}

/*
 * @name into @buf; one too long for it is cut before the character that
 * does not fit, not in its middle: pci.ids is UTF-8, and half a
 * character is not text (the JSON output must be UTF-8).
 */
static void copy_name(char *buf, size_t size, const char *name)
{
	size_t n = strlen(name);

	if (n >= size) {
		n = size - 1;
		/* name[n] is the first byte left out: not a continuation. */
		while (n && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(buf, name, n);
	buf[n] = '\0';
}

static FILE *open_first(const char *paths)
{
	char path[4096];
	const char *p = paths;
	FILE *f;

	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);

		if (n && n < sizeof(path)) {
			memcpy(path, p, n);
			path[n] = '\0';
			f = fopen(path, "re");
			if (f)
				return f;
		}
		p = colon ? colon + 1 : NULL;
	}
	return NULL;
}

void pci_ids_names(const char *paths, const struct pci_list *l,
		   struct pci_name *out)
{
	unsigned int vendor = 0x10000, id;
	char line[512], *name;
	size_t i;
	FILE *f;

	for (i = 0; i < l->n; i++)
		out[i].vendor[0] = out[i].device[0] = '\0';
	f = open_first(paths);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == 'C' && line[1] == ' ')
			break;		/* the class list: no vendors after it */
		/* Comments also stand between one vendor's devices. */
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (line[0] != '\t') {
			name = id_line(line, &id);
			vendor = name ? id : 0x10000;
			for (i = 0; name && i < l->n; i++)
				if (l->devs[i].vendor == id)
					copy_name(out[i].vendor,
						  sizeof(out[i].vendor), name);
			continue;
		}
		if (line[1] == '\t' || vendor > 0xffff)
			continue;
		name = id_line(line + 1, &id);
		for (i = 0; name && i < l->n; i++)
			if (l->devs[i].vendor == vendor &&
			    l->devs[i].device == id)
				copy_name(out[i].device, sizeof(out[i].device),
					  name);
	}
	fclose(f);
}
