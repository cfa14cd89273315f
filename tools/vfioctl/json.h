/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A minimal JSON writer: enough for --json, no parsing.  It keeps track
 * of where commas go so that callers just emit values in order.
 */
#ifndef VFIOCTL_JSON_H
#define VFIOCTL_JSON_H

#include <stdbool.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];	/* nothing written yet at this level */
};

void json_init(struct json *j, FILE *f);
void json_begin_obj(struct json *j, const char *key);
void json_end_obj(struct json *j);
void json_begin_arr(struct json *j, const char *key);
void json_end_arr(struct json *j);
/*
 * A NULL @val writes null.  What of @val is not UTF-8 becomes U+FFFD, a
 * replacement for each invalid sequence.
 */
void json_str(struct json *j, const char *key, const char *val);
/* json_strf() - a string from printf's @fmt. */
void json_strf(struct json *j, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void json_int(struct json *j, const char *key, long long val);
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
/* json_end() - finish the document with a newline. */
void json_end(struct json *j);

#endif
