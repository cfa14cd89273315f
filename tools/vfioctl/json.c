// SPDX-License-Identifier: GPL-2.0-only
/*
 * JSON output.  Strings are escaped fully (quotes, backslashes, control
 * bytes) because some of them (paths, driver names) come from sysfs or
 * from the command line, not from us.
 */
#include "json.h"

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
}

static void put_string(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
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
