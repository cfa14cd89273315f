// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the devices.conf parser (tools/vfioctl/config.c): good
 * files parse to the right entries, every error names its line, hostile
 * files (long lines, NUL bytes, huge files) are rejected without harm.
 * One line per case: "ok - config/<name>" or "not ok - config/<name>: why".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

struct suite {
	const char *dir;	/* scratch directory for the files */
	int failed, passed;
};

struct result {
	struct conf c;
	char *err;		/* everything the parser reported */
	size_t err_len;
	int ret;
};

static void write_file(const struct suite *s, const char *name,
		       const void *data, size_t len, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", s->dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "test_config: writing %s: %s\n", path,
			strerror(errno));
		exit(2);
	}
}

static void parse(const struct suite *s, const char *name, const void *data,
		  size_t len, struct result *r)
{
	char path[4096];
	FILE *err;

	write_file(s, name, data, len, path, sizeof(path));
	err = open_memstream(&r->err, &r->err_len);
	if (!err) {
		perror("open_memstream");
		exit(2);
	}
	r->ret = conf_load(&r->c, strdup(path), err);
	conf_report(&r->c);
	fclose(err);
}

static void done(struct result *r)
{
	free((char *)r->c.path);
	conf_free(&r->c);
	free(r->err);
}

static void report(struct suite *s, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* @fmt NULL: the case passed. */
static void report(struct suite *s, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (!fmt) {
		printf("ok - config/%s\n", name);
		s->passed++;
		return;
	}
	printf("not ok - config/%s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	s->failed++;
}

/* The file parses with no error into @n entries. */
static bool clean(struct suite *s, const char *name, struct result *r,
		  size_t n)
{
	if (r->ret || r->c.errors || r->c.n != n) {
		report(s, name, "ret %d, %d errors, %zu entries (want %zu): %s",
		       r->ret, r->c.errors, r->c.n, n, r->err);
		return false;
	}
	return true;
}

/*
 * The file has exactly @errors errors and the report holds
 * "<name>:<line>: <msg>" (the text after the path).
 */
static void expect_error(struct suite *s, const char *name, const char *data,
			 size_t len, int errors, const char *want)
{
	struct result r;
	char needle[512];

	parse(s, name, data, len, &r);
	snprintf(needle, sizeof(needle), "/%s:%s", name, want);
	if (r.ret)
		report(s, name, "conf_load returned %d", r.ret);
	else if (r.c.errors != errors)
		report(s, name, "%d errors, want %d: %s", r.c.errors, errors,
		       r.err);
	else if (!strstr(r.err, needle))
		report(s, name, "no \"%s\" in: %s", needle, r.err);
	else
		report(s, name, NULL);
	done(&r);
}

#define ERR(s, name, text, n, want) \
	expect_error(s, name, text, sizeof(text) - 1, n, want)

static void test_good(struct suite *s)
{
	static const char text[] =
		"# vfio devices\n"
		"\n"
		"   \t  # indented comment\n"
		"0000:03:00.0 owner=root group=root mode=0660\n"
		"04:00.1\tmode=600   # short address, trailing comment\n"
		"8086:10D3 owner=0 group=0\r\n"
		"0000:AB:1F.7\n";
	const struct conf_entry *e;
	struct result r;

	parse(s, "good", text, sizeof(text) - 1, &r);
	if (!clean(s, "good", &r, 4))
		goto out;
	e = r.c.entries;
	if (e[0].line != 4 || e[0].kind != CONF_ADDR ||
	    strcmp(e[0].addr, "0000:03:00.0") || !e[0].has_owner ||
	    e[0].uid != 0 || strcmp(e[0].owner, "root") || !e[0].has_group ||
	    e[0].gid != 0 || !e[0].has_mode || e[0].mode != 0660) {
		report(s, "good", "entry 1 wrong");
		goto out;
	}
	if (e[1].line != 5 || strcmp(e[1].addr, "0000:04:00.1") ||
	    e[1].has_owner || e[1].has_group || e[1].mode != 0600) {
		report(s, "good", "entry 2 (short address) wrong: %s %o",
		       e[1].addr, e[1].mode);
		goto out;
	}
	if (e[2].line != 6 || e[2].kind != CONF_ID || e[2].vendor != 0x8086 ||
	    e[2].device != 0x10d3 || !e[2].has_owner || e[2].uid != 0 ||
	    e[2].has_mode) {
		report(s, "good", "entry 3 (vendor:device, CRLF) wrong");
		goto out;
	}
	if (e[3].line != 7 || strcmp(e[3].addr, "0000:ab:1f.7")) {
		report(s, "good", "entry 4 (no newline at end) wrong: %s",
		       e[3].addr);
		goto out;
	}
	report(s, "good", NULL);
out:
	done(&r);
}

/* Names in comments, and the mark some editors start a UTF-8 file with. */
static void test_utf8(struct suite *s)
{
	static const char text[] =
		"\xef\xbb\xbf# NIC f\xc3\xbcr M\xc3\xbcller\n"
		"0000:03:00.0 mode=0600  # "
		"\xe6\x97\xa5\xe6\x9c\xac, \xf0\x9f\x96\xa7\n";
	/* Split: "\xbf0" would be one hex escape. */
	static const char bom_entry[] = "\xef\xbb\xbf" "0000:03:00.0\n";
	struct result r;

	parse(s, "utf8-comments", text, sizeof(text) - 1, &r);
	if (clean(s, "utf8-comments", &r, 1))
		report(s, "utf8-comments", NULL);
	done(&r);
	parse(s, "bom-entry", bom_entry, sizeof(bom_entry) - 1, &r);
	if (!clean(s, "bom-entry", &r, 1))
		goto out;
	if (strcmp(r.c.entries[0].addr, "0000:03:00.0"))
		report(s, "bom-entry", "address %s", r.c.entries[0].addr);
	else
		report(s, "bom-entry", NULL);
out:
	done(&r);
}

static void test_empty(struct suite *s)
{
	struct result r;

	parse(s, "empty", "", 0, &r);
	if (clean(s, "empty", &r, 0))
		report(s, "empty", NULL);
	done(&r);
}

static void test_missing(struct suite *s)
{
	struct conf c;
	int ret = conf_load(&c, "/nonexistent/devices.conf", stderr);

	if (ret != -ENOENT)
		report(s, "missing-file", "returned %d, want -ENOENT", ret);
	else
		report(s, "missing-file", NULL);
	conf_free(&c);
}

static void test_errors(struct suite *s)
{
	ERR(s, "bad-device", "# c\n0000:03:00.0\nfoo mode=0600\n", 1,
	    "3: bad device \"foo\"");
	ERR(s, "bad-slot", "\n0000:03:20.0\n", 1, "2: bad device");
	ERR(s, "bad-function", "0000:03:00.8\n", 1, "1: bad device");
	ERR(s, "bad-hex", "0000:0g:00.0\n", 1, "1: bad device");
	ERR(s, "bad-id", "\n\n8086:10d\n", 1, "3: bad device");
	ERR(s, "unknown-option", "0000:03:00.0 colour=red\n", 1,
	    "1: unknown option \"colour\"");
	ERR(s, "no-equals", "0000:03:00.0\n0000:03:00.1 owner\n", 1,
	    "2: expected key=value, found \"owner\"");
	ERR(s, "empty-key", "0000:03:00.0 =root\n", 1,
	    "1: expected key=value");
	ERR(s, "empty-owner", "0000:03:00.0 owner=\n", 1,
	    "1: bad owner name \"\"");
	ERR(s, "unknown-user", "\n0000:03:00.0 owner=no-such-user-vfio\n", 1,
	    "2: unknown user \"no-such-user-vfio\"");
	ERR(s, "unknown-group", "0000:03:00.0 group=no-such-group-vfio\n", 1,
	    "1: unknown group \"no-such-group-vfio\"");
	ERR(s, "hostile-name", "0000:03:00.0 owner=a$(reboot)\n", 1,
	    "1: bad owner name");
	ERR(s, "mode-not-octal", "0000:03:00.0 mode=0689\n", 1,
	    "1: bad mode \"0689\"");
	ERR(s, "mode-setuid", "0000:03:00.0 mode=4660\n", 1,
	    "1: bad mode \"4660\" (only permission bits");
	ERR(s, "mode-too-long", "0000:03:00.0 mode=000660\n", 1,
	    "1: bad mode \"000660\"");
	ERR(s, "mode-empty", "0000:03:00.0 mode=\n", 1, "1: bad mode \"\"");
	ERR(s, "mode-twice", "0000:03:00.0 mode=0600 mode=0600\n", 1,
	    "1: mode= given twice");
	ERR(s, "owner-twice", "0000:03:00.0 owner=root owner=0\n", 1,
	    "1: owner= given twice");
	ERR(s, "duplicate-address",
	    "0000:03:00.0\n# x\n03:00.0 mode=0600\n", 1,
	    "3: duplicate entry (first at line 1)");
	ERR(s, "duplicate-id", "8086:10d3\n8086:10D3\n", 1,
	    "2: duplicate entry (first at line 1)");
	ERR(s, "control-byte", "0000:03:00.0\n0000:03:00.1 \x1b[2J\n", 1,
	    "2: invalid byte 0x1b");
	ERR(s, "non-ascii", "0000:03:00.0 owner=r\xc3\xb6t\n", 1,
	    "1: non-ASCII character U+00F6 outside a comment");
	ERR(s, "non-ascii-nbsp", "# ok\n0000:03:00.0\xc2\xa0mode=0600\n", 1,
	    "2: non-ASCII character U+00A0 outside a comment");
	ERR(s, "invalid-utf8-comment", "0000:03:00.0 # M\xfcller\n", 1,
	    "1: invalid UTF-8 (byte 0xfc at byte 17 of the line)");
	ERR(s, "truncated-utf8", "# \xc3\n", 1, "1: invalid UTF-8");
	ERR(s, "overlong-utf8", "# \xc0\xaf\n", 1, "1: invalid UTF-8");
	ERR(s, "surrogate-utf8", "# \xed\xa0\x80\n", 1, "1: invalid UTF-8");
	ERR(s, "bidi-in-comment", "0000:03:00.0 # \xe2\x80\xae x\n", 1,
	    "1: invisible control character U+202E");
	/* Split: "\xbf04" would be one hex escape. */
	ERR(s, "bom-not-first", "0000:03:00.0\n\xef\xbb\xbf" "04:00.0\n", 1,
	    "2: non-ASCII character U+FEFF outside a comment");
	ERR(s, "spaces-around-equals", "0000:03:00.0 owner = root\n", 1,
	    "1: spaces around \"=\": write owner=root, with no spaces");
	ERR(s, "spaces-after-equals",
	    "0000:03:00.0 mode=0600 owner= root group =root\n", 1,
	    "1: spaces around \"=\": write owner=root, with no spaces");
	ERR(s, "tabs-around-equals", "\n0000:03:00.0\tmode\t=\t0600 # c\n", 1,
	    "2: spaces around \"=\": write mode=0600, with no spaces");
	ERR(s, "vendor-wildcard", "# every Intel device\n8086:* mode=0600\n", 1,
	    "2: \"8086:*\": wildcards are not supported");
	ERR(s, "function-wildcard", "0000:03:00.*\n", 1,
	    "1: \"0000:03:00.*\": wildcards are not supported");
	ERR(s, "class-device", "class=0x0200 group=kvm\n", 1,
	    "1: \"class=0x0200\": class matches are not supported");
	ERR(s, "class-option", "8086:10d3 class=0x0200\n", 1,
	    "1: \"class=0x0200\": class matches are not supported");
	ERR(s, "several-errors-keep-lines",
	    "bad1\n0000:03:00.0\nbad3\n0000:03:00.0\n", 3,
	    "4: duplicate entry (first at line 2)");
}

/* The line with "key = value" is still read as meant, for check's sake. */
static void test_spaced_entry(struct suite *s)
{
	static const char text[] = "0000:03:00.0 mode = 0600 owner = 0\n";
	struct result r;

	parse(s, "spaces-entry-kept", text, sizeof(text) - 1, &r);
	if (r.c.errors != 1 || r.c.n != 1 || !r.c.entries[0].has_mode ||
	    r.c.entries[0].mode != 0600 || !r.c.entries[0].has_owner ||
	    !strstr(r.err, "write mode=0600, with"))
		report(s, "spaces-entry-kept", "%d errors, %zu entries: %s",
		       r.c.errors, r.c.n, r.err);
	else
		report(s, "spaces-entry-kept", NULL);
	done(&r);
}

static void test_nul(struct suite *s)
{
	static const char text[] = "0000:03:00.0\n0000:03:\0000.1\n04:00.0 x\n";

	expect_error(s, "nul-byte", text, sizeof(text) - 1, 2, "2: NUL byte");
	expect_error(s, "nul-byte-next-line", text, sizeof(text) - 1, 2,
		     "3: expected key=value");
}

static void test_long_lines(struct suite *s)
{
	size_t max = CONF_MAX_LINE - 1;
	char *buf = malloc(3 * CONF_MAX_LINE + 64);
	struct result r;
	size_t n;

	/* Exactly the longest line allowed: padded with blanks, parses. */
	n = (size_t)sprintf(buf, "0000:03:00.0");
	memset(buf + n, ' ', max - n);
	n = max;
	buf[n++] = '\n';
	parse(s, "line-at-limit", buf, n, &r);
	if (clean(s, "line-at-limit", &r, 1))
		report(s, "line-at-limit", NULL);
	done(&r);

	/* One byte more is an error; the next line still parses. */
	n = (size_t)sprintf(buf, "0000:03:00.0");
	memset(buf + n, ' ', max + 1 - n);
	n = max + 1;
	n += (size_t)sprintf(buf + n, "\n0000:04:00.0\nbad\n");
	expect_error(s, "line-too-long", buf, n, 2,
		     "1: line too long (at most 1023 bytes)");
	parse(s, "line-too-long-next", buf, n, &r);
	if (r.c.n != 1 || strcmp(r.c.entries[0].addr, "0000:04:00.0") ||
	    r.c.entries[0].line != 2 || !strstr(r.err, ":3: bad device"))
		report(s, "line-too-long-next", "lines after it: %s", r.err);
	else
		report(s, "line-too-long-next", NULL);
	done(&r);
	free(buf);
}

static void test_huge(struct suite *s)
{
	size_t size = CONF_MAX_SIZE + 4096, n = 0;
	char *buf = malloc(size);
	struct result r;

	/* Comment lines of 100 bytes: over the size limit at line 10486. */
	while (n + 100 <= size) {
		memset(buf + n, '#', 99);
		buf[n + 99] = '\n';
		n += 100;
	}
	expect_error(s, "huge-file", buf, n, 1,
		     "10486: file too large (at most 1048576 bytes)");
	free(buf);

	/* Many entries: the cap is an error, memory stays bounded. */
	buf = malloc(16 * (CONF_MAX_ENTRIES + 10));
	n = 0;
	for (int i = 0; i < CONF_MAX_ENTRIES + 1; i++)
		n += (size_t)sprintf(buf + n, "%04x:00:00.0\n", i);
	parse(s, "too-many-entries", buf, n, &r);
	if (r.c.errors != 1 || r.c.n != CONF_MAX_ENTRIES ||
	    !strstr(r.err, ":4097: too many entries"))
		report(s, "too-many-entries", "%d errors, %zu entries: %.200s",
		       r.c.errors, r.c.n, r.err);
	else
		report(s, "too-many-entries", NULL);
	done(&r);
	free(buf);
}

/* How often @needle occurs in @hay. */
static int count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

static void test_error_cap(struct suite *s)
{
	char *buf = malloc(8 * 200);
	struct result r;
	size_t n = 0;
	int lines;

	for (int i = 0; i < 200; i++)
		n += (size_t)sprintf(buf + n, "bad%d\n", i);
	parse(s, "error-cap", buf, n, &r);
	lines = count(r.err, ": bad device");
	if (r.c.errors != 200 || lines != 50 ||
	    !strstr(r.err, "error-cap: 150 more errors not shown\n"))
		report(s, "error-cap", "%d errors counted, %d reported: %.300s",
		       r.c.errors, lines, r.err + (r.err_len > 300 ?
						   r.err_len - 300 : 0));
	else
		report(s, "error-cap", NULL);
	done(&r);
	free(buf);
}

/*
 * Problems found after parsing (topology, warnings) on earlier lines come
 * out before the parser's, and the cap keeps the earliest lines.
 */
static void test_diag_order(struct suite *s)
{
	static const char text[] = "0000:03:00.0\n\nbad3\n";
	char path[4096], *out = NULL;
	struct conf c;
	size_t len = 0;
	FILE *f;

	write_file(s, "diag-order", text, sizeof(text) - 1, path,
		   sizeof(path));
	f = open_memstream(&out, &len);
	if (!f || conf_load(&c, path, f)) {
		report(s, "diag-order", "cannot load");
		return;
	}
	conf_warn(&c, 1, "w1");
	conf_error(&c, 2, "e2");
	conf_report(&c);
	fflush(f);
	if (!strstr(out, ":1: warning: w1\n") || !strstr(out, ":2: e2\n") ||
	    strstr(out, ":1: warning") > strstr(out, ":2: e2") ||
	    strstr(out, ":2: e2") > strstr(out, ":3: bad device"))
		report(s, "diag-order", "not by line: %s", out);
	else
		report(s, "diag-order", NULL);
	conf_free(&c);
	fclose(f);
	free(out);
}

static void test_diag_cap_by_line(struct suite *s)
{
	char *buf = malloc(8 * 100), path[4096], *out = NULL;
	struct conf c;
	size_t n = 0, len = 0;
	FILE *f;
	int i;

	/* Lines 1-40 blank, errors on 41-100, then warnings on 1-40. */
	for (i = 0; i < 40; i++)
		buf[n++] = '\n';
	for (i = 40; i < 100; i++)
		n += (size_t)sprintf(buf + n, "bad%d\n", i + 1);
	write_file(s, "diag-cap-by-line", buf, n, path, sizeof(path));
	f = open_memstream(&out, &len);
	if (!f || conf_load(&c, path, f)) {
		report(s, "diag-cap-by-line", "cannot load");
		free(buf);
		return;
	}
	for (i = 1; i <= 40; i++)
		conf_warn(&c, i, "w%d", i);
	conf_report(&c);
	fflush(f);
	if (count(out, ": warning: w") != 40 ||
	    count(out, ": bad device") != 10 ||
	    !strstr(out, ":50: bad device \"bad50\"") ||
	    strstr(out, ":51: ") ||
	    !strstr(out, "diag-cap-by-line: 50 more errors not shown\n"))
		report(s, "diag-cap-by-line", "wrong 50 kept: %s", out);
	else
		report(s, "diag-cap-by-line", NULL);
	conf_free(&c);
	fclose(f);
	free(out);
	free(buf);
}

/* The line where parsing stopped is said even past the cap. */
static void test_diag_cap_stop(struct suite *s)
{
	size_t size = CONF_MAX_SIZE + 4096, n = 0;
	char *buf = malloc(size);
	struct result r;

	for (int i = 0; i < 200; i++)
		n += (size_t)sprintf(buf + n, "bad%d\n", i);
	while (n + 100 <= size) {
		memset(buf + n, '#', 99);
		buf[n + 99] = '\n';
		n += 100;
	}
	parse(s, "diag-cap-stop", buf, n, &r);
	if (r.c.errors != 201 || count(r.err, ": bad device") != 49 ||
	    !strstr(r.err, ": file too large") ||
	    !strstr(r.err, "151 more errors not shown"))
		report(s, "diag-cap-stop", "%d errors: %.200s", r.c.errors,
		       r.err + (r.err_len > 200 ? r.err_len - 200 : 0));
	else
		report(s, "diag-cap-stop", NULL);
	done(&r);
	free(buf);
}

static void test_addr_parsing(struct suite *s)
{
	static const char *const good[][2] = {
		{ "0000:00:00.0", "0000:00:00.0" },
		{ "FFFF:FF:1F.7", "ffff:ff:1f.7" },
		{ "3a:00.1", "0000:3a:00.1" },
		/* Intel VMD puts its devices in domains from 10000. */
		{ "10000:E0:06.0", "10000:e0:06.0" },
		{ "ffffffff:ff:1f.7", "ffffffff:ff:1f.7" },
	};
	static const char *const bad[] = {
		"", "0000:00:00", "0000:00:00.", "00000:00:00.0",
		"0000:000:00.0", "0000:00:00.00", "0000-00:00.0",
		"0000:00:00.0 ", "x000:00:00.0", "0000:00:1g.0",
		"000:00:00.0", "010000:e0:06.0", "100000000:00:00.0",
		"1000g:00:00.0", ":00:00.0", "10000:e0:06",
	};
	char out[32];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!parse_pci_addr(good[i][0], out) ||
		    strcmp(out, good[i][1])) {
			report(s, "pci-address", "\"%s\" rejected or wrong",
			       good[i][0]);
			return;
		}
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse_pci_addr(bad[i], out)) {
			report(s, "pci-address", "\"%s\" accepted", bad[i]);
			return;
		}
	}
	report(s, "pci-address", NULL);
}

/* A five-digit domain in the file, normalised as the kernel names it. */
static void test_wide_domain(struct suite *s)
{
	static const char text[] =
		"10000:E0:06.0 mode=0600\n"
		"ffffffff:00:00.0\n";
	struct result r;

	parse(s, "wide-domain", text, sizeof(text) - 1, &r);
	if (!clean(s, "wide-domain", &r, 2))
		goto out;
	if (strcmp(r.c.entries[0].addr, "10000:e0:06.0") ||
	    strcmp(r.c.entries[1].addr, "ffffffff:00:00.0"))
		report(s, "wide-domain", "addresses %s %s",
		       r.c.entries[0].addr, r.c.entries[1].addr);
	else
		report(s, "wide-domain", NULL);
out:
	done(&r);
	ERR(s, "wide-domain-duplicate", "10000:e0:06.0\n10000:E0:06.0\n", 1,
	    "2: duplicate entry (first at line 1)");
}

int main(int argc, char **argv)
{
	struct suite s = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: test_config SCRATCH-DIR\n");
		return 2;
	}
	s.dir = argv[1];
	test_good(&s);
	test_empty(&s);
	test_utf8(&s);
	test_missing(&s);
	test_errors(&s);
	test_spaced_entry(&s);
	test_nul(&s);
	test_long_lines(&s);
	test_huge(&s);
	test_error_cap(&s);
	test_diag_order(&s);
	test_diag_cap_by_line(&s);
	test_diag_cap_stop(&s);
	test_addr_parsing(&s);
	test_wide_domain(&s);
	fprintf(stderr, "test_config: %d passed, %d failed\n", s.passed,
		s.failed);
	return s.failed ? 1 : 0;
}
