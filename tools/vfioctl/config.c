// SPDX-License-Identifier: GPL-2.0-only
/*
 * The devices.conf parser.  It never trusts the file: lines are bounded,
 * NUL bytes, control characters, invalid UTF-8 and anything but ASCII
 * outside a comment are errors, the file size and the number of entries
 * are capped, and every error names its line.  A file with any error is
 * rejected as a whole so that a typo changes nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/*
 * Print one problem right away: what conf_report() does for the kept
 * ones, used only when the table could not be allocated.
 */
static void diag_print(const struct conf *c, const struct conf_diag *d)
{
	fprintf(c->err, "%s:%d: %s%s\n", c->path, d->line,
		d->warning ? "warning: " : "", d->msg);
}

/* The kept problem that goes first when the table is full, or NULL. */
static struct conf_diag *diag_last(struct conf *c)
{
	struct conf_diag *last = NULL;
	size_t i;

	for (i = 0; i < c->ndiag; i++) {
		struct conf_diag *d = &c->diag[i];

		if (d->pinned)
			continue;
		if (!last || d->line > last->line ||
		    (d->line == last->line && d->seq > last->seq))
			last = d;
	}
	return last;
}

static void diag_hide(struct conf *c, bool warning)
{
	if (warning)
		c->hidden_warnings++;
	else
		c->hidden_errors++;
}

/*
 * Keep the CONF_MAX_SHOWN problems of the earliest lines, whatever order
 * they are found in: the parser goes top down, but topology checks and
 * warnings come after it, and the first lines are where to start fixing.
 */
/* How diag_add() files a problem. */
#define DIAG_WARNING	0x1
#define DIAG_MACHINE	0x2
#define DIAG_PINNED	0x4	/* never dropped for the cap */

/*
 * Keep the CONF_MAX_SHOWN problems of the earliest lines, whatever order
 * they are found in: the parser goes top down, but topology checks and
 * warnings come after it, and the first lines are where to start fixing.
 */
static void diag_add(struct conf *c, int line, unsigned int how,
		     const char *fmt, va_list ap)
{
	bool warning = how & DIAG_WARNING;
	struct conf_diag *d, *last;

	if (warning)
		c->warnings++;
	else
		c->errors++;
	if (!warning && (how & DIAG_MACHINE))
		c->machine_errors++;
	if (!c->diag)
		c->diag = calloc(CONF_MAX_SHOWN, sizeof(*c->diag));
	if (!c->diag) {
		struct conf_diag tmp = { .line = line, .warning = warning };

		vsnprintf(tmp.msg, sizeof(tmp.msg), fmt, ap);
		diag_print(c, &tmp);
		return;
	}
	if (c->ndiag < CONF_MAX_SHOWN) {
		d = &c->diag[c->ndiag++];
	} else {
		last = diag_last(c);
		if (!last || (!(how & DIAG_PINNED) && last->line <= line)) {
			diag_hide(c, warning);
			return;
		}
		diag_hide(c, last->warning);
		d = last;
	}
	d->line = line;
	d->warning = warning;
	d->machine = how & DIAG_MACHINE;
	d->pinned = how & DIAG_PINNED;
	d->seq = c->seq++;
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
}

void conf_error(struct conf *c, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_add(c, line, 0, fmt, ap);
	va_end(ap);
}

void conf_warn(struct conf *c, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_add(c, line, DIAG_WARNING, fmt, ap);
	va_end(ap);
}

void conf_machine_error(struct conf *c, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_add(c, line, DIAG_MACHINE, fmt, ap);
	va_end(ap);
}

void conf_machine_warn(struct conf *c, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_add(c, line, DIAG_WARNING | DIAG_MACHINE, fmt, ap);
	va_end(ap);
}

/* The error where parsing stops: shown even when the table is full. */
static void conf_stop(struct conf *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void conf_stop(struct conf *c, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_add(c, line, DIAG_PINNED, fmt, ap);
	va_end(ap);
}

static int diag_cmp(const void *a, const void *b)
{
	const struct conf_diag *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void conf_diag_sort(struct conf *c)
{
	if (c->ndiag)
		qsort(c->diag, c->ndiag, sizeof(*c->diag), diag_cmp);
}

void conf_diag_clear(struct conf *c)
{
	c->ndiag = 0;
	c->hidden_errors = 0;
	c->hidden_warnings = 0;
}

/* "3 more errors and 1 more warning", the parts that are not zero. */
static void say_hidden(FILE *f, unsigned long e, unsigned long w)
{
	if (e)
		fprintf(f, "%lu more error%s", e, e == 1 ? "" : "s");
	if (e && w)
		fputs(" and ", f);
	if (w)
		fprintf(f, "%lu more warning%s", w, w == 1 ? "" : "s");
}

void conf_report(struct conf *c)
{
	size_t i;

	conf_diag_sort(c);
	for (i = 0; i < c->ndiag; i++)
		diag_print(c, &c->diag[i]);
	if (c->hidden_errors || c->hidden_warnings) {
		fprintf(c->err, "%s: ", c->path);
		say_hidden(c->err, c->hidden_errors, c->hidden_warnings);
		fputs(" not shown\n", c->err);
	}
	conf_diag_clear(c);
}

static bool hex_run(const char *s, size_t len, unsigned int *val)
{
	unsigned int v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		v = v * 16 + (isdigit((unsigned char)s[i]) ? s[i] - '0' :
			      (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	*val = v;
	return true;
}

/*
 * The domain as the kernel prints it ("%04x"): four hex digits, or more
 * without a leading zero.  Other spellings of the same number are refused
 * rather than normalised, so that every name of a device is the one its
 * sysfs directory has.
 */
static bool parse_domain(const char *s, size_t len, unsigned int *dom)
{
	if (len < 4 || len > 8 || (len > 4 && s[0] == '0'))
		return false;
	return hex_run(s, len, dom);
}

bool parse_pci_addr(const char *s, char out[PCI_ADDR_SIZE])
{
	unsigned int dom = 0, bus, slot, fn;
	const char *colon;

	if (strlen(s) != 7) {	/* dddd:bb:dd.f, not bb:dd.f */
		colon = strchr(s, ':');
		if (!colon || !parse_domain(s, colon - s, &dom))
			return false;
		s = colon + 1;
		if (strlen(s) != 7)
			return false;
	}
	if (s[2] != ':' || s[5] != '.')
		return false;
	if (!hex_run(s, 2, &bus) || !hex_run(s + 3, 2, &slot) ||
	    !hex_run(s + 6, 1, &fn))
		return false;
	if (slot > 0x1f || fn > 7)
		return false;
	snprintf(out, PCI_ADDR_SIZE, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
	return true;
}

bool parse_pci_id(const char *s, unsigned int *vendor, unsigned int *device)
{
	if (strlen(s) != 9 || s[4] != ':')
		return false;
	return hex_run(s, 4, vendor) && hex_run(s + 5, 4, device);
}

static bool parse_number(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/*
 * A user or group name that is not in this machine's database: an error
 * about the machine (the file may be right where the name exists), with
 * the reason when the lookup itself failed rather than found nothing
 * (getpwnam(3) lists the errno values that mean "not found").
 */
static void unknown_name(struct conf *c, int line, const char *what,
			 const char *name, int err)
{
	if (err && err != ENOENT && err != ESRCH && err != EBADF &&
	    err != EPERM)
		conf_machine_error(c, line, "looking up %s \"%s\": %s", what,
				   name, strerror(err));
	else
		conf_machine_error(c, line, "unknown %s \"%s\"", what, name);
}

static void set_owner(struct conf *c, struct conf_entry *e, const char *val)
{
	struct passwd *pw;
	unsigned long n;

	if (parse_number(val, 0x7fffffff, &n)) {
		e->uid = (uid_t)n;
	} else if (c->flags & CONF_SYNTAX) {
		e->uid = (uid_t)-1;
	} else {
		errno = 0;
		pw = getpwnam(val);
		if (!pw) {
			unknown_name(c, e->line, "user", val, errno);
			return;
		}
		e->uid = pw->pw_uid;
	}
	snprintf(e->owner, sizeof(e->owner), "%s", val);
	e->has_owner = true;
}

static void set_group(struct conf *c, struct conf_entry *e, const char *val)
{
	struct group *gr;
	unsigned long n;

	if (parse_number(val, 0x7fffffff, &n)) {
		e->gid = (gid_t)n;
	} else if (c->flags & CONF_SYNTAX) {
		e->gid = (gid_t)-1;
	} else {
		errno = 0;
		gr = getgrnam(val);
		if (!gr) {
			unknown_name(c, e->line, "group", val, errno);
			return;
		}
		e->gid = gr->gr_gid;
	}
	snprintf(e->group, sizeof(e->group), "%s", val);
	e->has_group = true;
}

static void set_mode(struct conf *c, struct conf_entry *e, const char *val)
{
	unsigned long v;
	char *end;

	/*
	 * Octal only, and no setuid/setgid/sticky bits: they mean nothing
	 * on a char device and usually betray a typo.
	 */
	if (!*val || strspn(val, "01234567") != strlen(val) ||
	    strlen(val) > 4) {
		conf_error(c, e->line, "bad mode \"%s\" (octal, e.g. 0660)",
			   val);
		return;
	}
	v = strtoul(val, &end, 8);
	if (v > 0777) {
		conf_error(c, e->line,
			   "bad mode \"%s\" (only permission bits, at most 0777)",
			   val);
		return;
	}
	e->mode = (unsigned int)v;
	e->has_mode = true;
}

/* A name in owner=/group= is a user name: keep it to portable bytes. */
static bool name_ok(const char *s)
{
	size_t len = strlen(s);

	if (!len || len >= CONF_NAME_MAX)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len;
}

/*
 * "8086:*", "0000:03:00.*", "class=0x0200": refused, not matched.  A line
 * takes its devices from the host at boot and on hotplug, before anything
 * uses them, so the in-use checks cannot protect the host's own NIC, disk
 * controller or chipset from a pattern that happens to cover them, and a
 * machine that boots without them cannot be reached to fix the file.
 * devices.conf(5) says so at length; the message points there.
 */
static void refuse_wide(struct conf *c, int line, const char *word)
{
	conf_error(c, line,
		   "\"%.32s\": %s are not supported, they could take the host's own devices; name each device by address or vendor:device (vfioctl list --class shows them, see devices.conf(5))",
		   word, strncmp(word, "class", 5) ? "wildcards" :
		   "class matches");
}

static void parse_option(struct conf *c, struct conf_entry *e, char *word)
{
	char *eq = strchr(word, '=');
	char *val;

	if (!strcmp(word, "force")) {
		if (e->force)
			conf_error(c, e->line, "force given twice");
		e->force = true;
		return;
	}
	if (!eq || eq == word) {
		conf_error(c, e->line,
			   "expected key=value, found \"%s\"", word);
		return;
	}
	*eq = '\0';
	val = eq + 1;
	if (!strcmp(word, "owner") || !strcmp(word, "group")) {
		bool owner = word[0] == 'o';

		if ((owner && e->has_owner) || (!owner && e->has_group)) {
			conf_error(c, e->line, "%s= given twice", word);
			return;
		}
		if (!name_ok(val)) {
			conf_error(c, e->line, "bad %s name \"%s\"", word, val);
			return;
		}
		if (owner)
			set_owner(c, e, val);
		else
			set_group(c, e, val);
	} else if (!strcmp(word, "class")) {
		*eq = '=';
		refuse_wide(c, e->line, word);
	} else if (!strcmp(word, "mode")) {
		if (e->has_mode) {
			conf_error(c, e->line, "mode= given twice");
			return;
		}
		set_mode(c, e, val);
	} else {
		conf_error(c, e->line,
			   "unknown option \"%s\" (owner=, group=, mode=, force)",
			   word);
	}
}

static bool same_device(const struct conf_entry *a, const struct conf_entry *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == CONF_ADDR)
		return !strcmp(a->addr, b->addr);
	return a->vendor == b->vendor && a->device == b->device;
}

#define BLANKS " \t\r"

/* The blank-separated word of @s around @pos into @word. */
static void word_at(const char *s, size_t pos, char *word, size_t size)
{
	size_t start = pos, len;

	while (start && !strchr(BLANKS, s[start - 1]))
		start--;
	len = strcspn(s + start, BLANKS);
	snprintf(word, size, "%.*s", (int)len, s + start);
}

/*
 * "owner = root" is what one writes in most configuration files, and
 * word by word it is three errors that do not say what is wrong.  Close
 * the blanks around each "=" of the options @s, in place, so that the
 * line parses as meant, and return true with the first option so closed
 * in @word: the caller reports the line once, with the way to write it.
 */
static bool close_equals(char *s, char *word, size_t size)
{
	size_t r = 0, w = 0, n, first = SIZE_MAX;

	while (s[r]) {
		n = strspn(s + r, BLANKS);
		if (n && s[r + n] == '=' && w) {
			/* Blanks between a key and its "=". */
			if (first == SIZE_MAX)
				first = w;
			r += n;
			continue;
		}
		if (s[r] != '=') {
			s[w++] = s[r++];
			continue;
		}
		s[w++] = s[r++];
		n = strspn(s + r, BLANKS);
		if (n && s[r + n]) {
			/* Blanks between the "=" and its value. */
			if (first == SIZE_MAX)
				first = w - 1;
			r += n;
		}
	}
	s[w] = '\0';
	if (first == SIZE_MAX)
		return false;
	word_at(s, first, word, size);
	return true;
}

static void parse_line(struct conf *c, char *buf, int line, size_t *cap)
{
	struct conf_entry e = { .line = line };
	char *save, *word, *hash, hint[80];
	size_t i;

	hash = strchr(buf, '#');
	if (hash)
		*hash = '\0';
	word = strtok_r(buf, " \t\r", &save);
	if (!word)
		return;
	if (parse_pci_addr(word, e.addr)) {
		e.kind = CONF_ADDR;
	} else if (parse_pci_id(word, &e.vendor, &e.device)) {
		e.kind = CONF_ID;
	} else {
		if (!strncmp(word, "class=", 6) || strpbrk(word, "*?["))
			refuse_wide(c, line, word);
		else
			conf_error(c, line,
				   "bad device \"%.32s\" (want 0000:03:00.0 or vendor:device like 8086:10d3)",
				   word);
		return;
	}
	if (close_equals(save, hint, sizeof(hint)))
		conf_error(c, line,
			   "spaces around \"=\": write %s, with no spaces",
			   hint);
	while ((word = strtok_r(NULL, " \t\r", &save)))
		parse_option(c, &e, word);

	for (i = 0; i < c->n; i++) {
		if (same_device(&c->entries[i], &e)) {
			conf_error(c, line, "duplicate entry (first at line %d)",
				   c->entries[i].line);
			return;
		}
	}
	if (c->n >= CONF_MAX_ENTRIES) {
		conf_error(c, line, "too many entries (at most %d)",
			   CONF_MAX_ENTRIES);
		return;
	}
	if (c->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct conf_entry *n = realloc(c->entries, ncap * sizeof(*n));

		if (!n) {
			conf_error(c, line, "out of memory");
			return;
		}
		c->entries = n;
		*cap = ncap;
	}
	c->entries[c->n++] = e;
}

/*
 * The length of the UTF-8 sequence at @s and its code point in @cp, or 0
 * when it is not valid UTF-8: a stray continuation byte, a truncated
 * sequence, an overlong form, a surrogate, beyond U+10FFFF.
 */
static size_t utf8_char(const unsigned char *s, unsigned int *cp)
{
	static const unsigned int min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t n, i;

	if (s[0] < 0x80)
		n = 1;
	else if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	*cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if (*cp < min[n] || *cp > 0x10ffff ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Characters that make a line look other than it is: the C1 controls
 * (refused for the same reason as the ASCII ones) and the bidirectional
 * formatting ones, which reorder what an editor or "cat" shows.
 */
static bool hidden_char(unsigned int cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * Beyond ASCII only valid UTF-8 in a comment: people write names there
 * ("NIC für Müller").  Elsewhere a non-ASCII byte can only be a mistake
 * (a look-alike letter, a pasted non-breaking space) whose meaning the
 * parser would have to guess, so it is an error naming the character.
 */
static bool text_ok(struct conf *c, const char *buf, int line)
{
	const unsigned char *p = (const unsigned char *)buf;
	bool comment = false;
	unsigned int cp;
	size_t i, n;

	for (i = 0; p[i]; i += n) {
		n = utf8_char(p + i, &cp);
		if (!n) {
			conf_error(c, line,
				   "invalid UTF-8 (byte 0x%02x at byte %zu of the line)",
				   p[i], i + 1);
			return false;
		}
		if (cp == '#')
			comment = true;
		if (cp < 0x80)
			continue;
		if (!comment) {
			conf_error(c, line,
				   "non-ASCII character U+%04X outside a comment (devices, options and names are ASCII)",
				   cp);
			return false;
		}
		if (hidden_char(cp)) {
			conf_error(c, line,
				   "invisible control character U+%04X in a comment (it changes how the line looks)",
				   cp);
			return false;
		}
	}
	return true;
}

/* A whole line of @len bytes in @buf, checked, then parsed. */
static void take_line(struct conf *c, char *buf, size_t len, int line,
		      size_t *cap)
{
	buf[len] = '\0';
	/* Editors on other systems open a UTF-8 file with a byte-order mark. */
	if (line == 1 && !strncmp(buf, "\xef\xbb\xbf", 3))
		buf += 3;
	if (text_ok(c, buf, line))
		parse_line(c, buf, line, cap);
}

int conf_load(struct conf *c, const char *path, FILE *err)
{
	return conf_load_flags(c, path, err, 0);
}

int conf_load_flags(struct conf *c, const char *path, FILE *err,
		    unsigned int flags)
{
	char buf[CONF_MAX_LINE];
	size_t len = 0, total = 0, cap = 0;
	int line = 1, ch, ret = 0;
	bool bad = false;	/* this line already has a byte-level error */
	FILE *f;

	memset(c, 0, sizeof(*c));
	c->path = path;
	c->err = err;
	c->flags = flags;
	f = fopen(path, "re");
	if (!f)
		return -errno;

	for (;;) {
		ch = getc(f);
		if (ch == EOF)
			break;
		if (++total > CONF_MAX_SIZE) {
			/* Where parsing stops is always said, cap or not. */
			conf_stop(c, line, "file too large (at most %d bytes)",
				  CONF_MAX_SIZE);
			bad = true;
			break;
		}
		if (ch == '\n') {
			if (!bad)
				take_line(c, buf, len, line, &cap);
			len = 0;
			bad = false;
			line++;
			continue;
		}
		if (bad)
			continue;
		/*
		 * Control bytes but tab and CR are errors; bytes from 0x80
		 * are kept, take_line() checks them as UTF-8.
		 */
		if (ch == '\0') {
			conf_error(c, line, "NUL byte");
			bad = true;
		} else if (ch < 0x20 ? ch != '\t' && ch != '\r' : ch == 0x7f) {
			conf_error(c, line, "invalid byte 0x%02x", ch);
			bad = true;
		} else if (len >= sizeof(buf) - 1) {
			conf_error(c, line, "line too long (at most %d bytes)",
				   CONF_MAX_LINE - 1);
			bad = true;
		} else {
			buf[len++] = (char)ch;
		}
	}
	if (ferror(f))
		ret = -EIO;
	else if (len && !bad)
		take_line(c, buf, len, line, &cap);
	fclose(f);
	return ret;
}

void conf_free(struct conf *c)
{
	/* A caller that returns early still tells what it found. */
	if (c->ndiag || c->hidden_errors || c->hidden_warnings)
		conf_report(c);
	free(c->diag);
	c->diag = NULL;
	free(c->entries);
	c->entries = NULL;
	c->n = 0;
}

void conf_entry_describe(const struct conf_entry *e, char *buf, size_t size)
{
	int n = 0;

	buf[0] = '\0';
	if (e->has_owner)
		n += snprintf(buf + n, size - n, "owner=%s ", e->owner);
	if (e->has_group && (size_t)n < size)
		n += snprintf(buf + n, size - n, "group=%s ", e->group);
	if (e->has_mode && (size_t)n < size)
		n += snprintf(buf + n, size - n, "mode=%04o ", e->mode);
	if (e->force && (size_t)n < size)
		n += snprintf(buf + n, size - n, "force ");
	if (n > 0 && (size_t)n <= size)
		buf[n - 1] = '\0';
}
