/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef ABI_TABLE_H
#define ABI_TABLE_H

/* One number of the ABI: category, what it is, its value. */
struct abi_entry {
	const char *cat;
	const char *name;
	unsigned long long value;
};

extern const struct abi_entry abi_seed[], abi_ours[];
extern const unsigned int abi_seed_len, abi_ours_len;

#endif /* ABI_TABLE_H */
