// SPDX-License-Identifier: GPL-2.0-only
/*
 * Compare the ABI table built against the seed header with the one built
 * against ours (abi_table.c) and print one vt line per category.  Exit
 * status 1 when any value differs.
 */
#include <stdio.h>
#include <string.h>

#include "abi_table.h"

static const char *const cats[] = {
	"ioctl-numbers", "flags", "struct-layout",
};

int main(void)
{
	unsigned int c, i, n, bad_total = 0;

	if (abi_seed_len != abi_ours_len) {
		printf("not ok - abi/table: %u entries against the seed, %u against ours\n",
		       abi_seed_len, abi_ours_len);
		return 1;
	}
	for (c = 0; c < sizeof(cats) / sizeof(cats[0]); c++) {
		unsigned int bad = 0;

		for (i = n = 0; i < abi_seed_len; i++) {
			const struct abi_entry *s = &abi_seed[i];
			const struct abi_entry *o = &abi_ours[i];

			if (strcmp(s->cat, cats[c]))
				continue;
			n++;
			if (!strcmp(s->name, o->name) && s->value == o->value)
				continue;
			if (!bad++)
				printf("not ok - abi/%s:", cats[c]);
			if (strcmp(s->name, o->name))
				printf(" entry %u is %s in the seed table, %s in ours;",
				       i, s->name, o->name);
			else
				printf(" %s seed 0x%llx ours 0x%llx;", s->name,
				       s->value, o->value);
		}
		if (bad)
			printf(" (%u of %u differ)\n", bad, n);
		else
			printf("ok - abi/%s: %u values identical to the seed header\n",
			       cats[c], n);
		bad_total += bad;
	}
	return bad_total ? 1 : 0;
}
