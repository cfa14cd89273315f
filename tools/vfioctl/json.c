// SPDX-License-Identifier: GPL-2.0-only
/*
 * JSON output.  Strings are escaped fully (quotes, backslashes, control
 * bytes) because some of them (paths, driver names) come from sysfs or
 * from the command line, not from us; for the same reason they need not
 * be UTF-8, which JSON must be, so what is not is replaced.
 */
#include <stdarg.h>

#include "json.h"

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
}

/*
 * The length of the UTF-8 character at @p, or 0 when there is none: then
 * *@bad is the length of the longest start of one there (at least 1),
 * which gets a single U+FFFD, as the Unicode standard recommends and
 * decoders (Python's, browsers') do.  Overlong forms, surrogates and
 * what lies above U+10FFFF are not UTF-8 either.
 */
static size_t utf8_char(const unsigned char *p, size_t *bad)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		n = 0;
	if (*p == 0xe0)
		lo = 0xa0;
	else if (*p == 0xed)
		hi = 0x9f;
	else if (*p == 0xf0)
		lo = 0x90;
	else if (*p == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++) {
		/* The NUL at the end stops a cut character here too. */
		if (p[i] < lo || p[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	*bad = 1;
	return n;
}

static void put_string(FILE *f, const char *s)
{
	const unsigned char *p;
	size_t n, bad;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p += n) {
		n = utf8_char(p, &bad);
		if (!n) {
			fputs("\\ufffd", f);
			n = bad;
		} else if (n > 1) {
			fwrite(p, 1, n, f);
		} else if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
		} else {
			fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* Comma and key before a value; @key is ignored inside arrays. */
static void prefix(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

static void begin(struct json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void end(struct json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

void json_begin_obj(struct json *j, const char *key)
{
	begin(j, key, '{');
}

void json_end_obj(struct json *j)
{
	end(j, '}');
}

void json_begin_arr(struct json *j, const char *key)
{
	begin(j, key, '[');
}

void json_end_arr(struct json *j)
{
	end(j, ']');
}

void json_str(struct json *j, const char *key, const char *val)
{
	prefix(j, key);
	if (val)
		put_string(j->f, val);
	else
		fputs("null", j->f);
}

void json_strf(struct json *j, const char *key, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_str(j, key, buf);
}

void json_int(struct json *j, const char *key, long long val)
{
	prefix(j, key);
	fprintf(j->f, "%lld", val);
}

void json_bool(struct json *j, const char *key, bool val)
{
	prefix(j, key);
	fputs(val ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->f);
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}
