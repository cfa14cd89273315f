/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * devices.conf: one device per line, "#" starts a comment.
 *
 *	0000:03:00.0	owner=alice group=kvm mode=0660
 *	1234:11e8	mode=0600
 *	0000:05:00.0	force
 *
 * The first word is a PCI address (DDDD:BB:DD.F, the domain with more
 * digits when the kernel gives it more, or BB:DD.F meaning domain 0000)
 * or vendor:device in hex, which stands for every matching
 * device.  See devices.conf(5).
 */
#ifndef VFIOCTL_CONFIG_H
#define VFIOCTL_CONFIG_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* Limits that keep a hostile file from costing memory or time. */
#define CONF_MAX_LINE		1024	/* bytes, newline included */
#define CONF_MAX_SIZE		(1024 * 1024)
#define CONF_MAX_ENTRIES	4096
#define CONF_NAME_MAX		64

/*
 * A normalised PCI address and its NUL: the kernel prints the domain with
 * at least four hex digits and up to eight ("10000:e0:06.0" behind an
 * Intel VMD controller), so the longest is "ffffffff:ff:1f.7".
 */
#define PCI_ADDR_SIZE		20

/*
 * Errors and warnings together, the earliest lines first: what is printed
 * of them, the rest only counted.  A file that is wrong throughout (or
 * thousands of vendor:device lines that match nothing) stays readable.
 */
#define CONF_MAX_SHOWN		50
#define CONF_MSG_MAX		768	/* one message, without file:line */

enum conf_kind { CONF_ADDR, CONF_ID };

struct conf_entry {
	int line;
	enum conf_kind kind;
	char addr[PCI_ADDR_SIZE];	/* normalised, CONF_ADDR */
	unsigned int vendor;	/* CONF_ID */
	unsigned int device;
	char owner[CONF_NAME_MAX];	/* as written: a name or a number */
	char group[CONF_NAME_MAX];
	bool has_owner, has_group, has_mode;
	bool force;		/* "force": take it even when the host uses it */
	uid_t uid;		/* -1 when not looked up: CONF_SYNTAX */
	gid_t gid;
	unsigned int mode;
};

/* One problem found in the file, kept until conf_report(). */
struct conf_diag {
	int line;
	bool warning;
	bool machine;		/* about this machine, not the file alone */
	bool pinned;		/* where parsing stopped: never dropped */
	unsigned long seq;	/* keeps one line's messages in order */
	char msg[CONF_MSG_MAX];
};

struct conf {
	const char *path;
	struct conf_entry *entries;
	size_t n;
	int errors;		/* counted, also those not shown */
	int machine_errors;	/* of errors: those about this machine */
	int warnings;
	unsigned int flags;	/* of conf_load_flags() */
	FILE *err;		/* where "file:line: message" goes */
	struct conf_diag *diag;	/* at most CONF_MAX_SHOWN, see conf_report */
	size_t ndiag;
	unsigned long seq;
	unsigned long hidden_errors, hidden_warnings;
};

/*
 * conf_load() - parse @path into @c.  Every problem is counted in
 * c->errors and kept for conf_report(), which prints it on @err as
 * "path:line: message".  Returns 0 when the file was read (check
 * c->errors), -errno when it could not be opened or read at all.
 * c->entries is valid until conf_free().
 */
int conf_load(struct conf *c, const char *path, FILE *err);

/*
 * Only the file, not the machine it is on: user and group names are not
 * looked up (a file is often written before its users exist, or for
 * another machine), only checked to be well-formed.
 */
#define CONF_SYNTAX		0x1
/* conf_load_flags() - conf_load() with CONF_* @flags. */
int conf_load_flags(struct conf *c, const char *path, FILE *err,
		    unsigned int flags);
/* conf_free() - conf_report() what is left, then free @c. */
void conf_free(struct conf *c);

/* conf_error() - count a problem found at @line of @c, keep its text. */
void conf_error(struct conf *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* conf_warn() - the same for a problem that leaves the file valid. */
void conf_warn(struct conf *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * conf_machine_error(), conf_machine_warn() - the same for a problem of
 * @line on this machine only: an unknown user, an absent device, the
 * IOMMU topology.  The same file may be right elsewhere; check tells the
 * two kinds apart by its exit status.
 */
void conf_machine_error(struct conf *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void conf_machine_warn(struct conf *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * conf_report() - print the kept problems sorted by line, then one line
 * counting those beyond CONF_MAX_SHOWN, and forget them (the counts in
 * c->errors and c->warnings stay).  Callers report once they found all
 * they will find, so that parse, topology and usage problems interleave
 * by line.
 */
void conf_report(struct conf *c);
/* conf_diag_sort() - the kept problems in the order conf_report() uses. */
void conf_diag_sort(struct conf *c);
/* conf_diag_clear() - forget the kept problems without printing them. */
void conf_diag_clear(struct conf *c);

/* Device name parsing, shared with the command line. */
/*
 * parse_pci_addr() - "dddd:bb:dd.f" as the kernel names devices (the
 * domain in 4 to 8 hex digits, no leading zero beyond 4), or "bb:dd.f"
 * for domain 0000, into its normalised, lower-case form in @out.
 */
bool parse_pci_addr(const char *s, char out[PCI_ADDR_SIZE]);
bool parse_pci_id(const char *s, unsigned int *vendor, unsigned int *device);

/* conf_entry_describe() - "owner=alice group=kvm mode=0660" into @buf. */
void conf_entry_describe(const struct conf_entry *e, char *buf, size_t size);

#endif
