/* SPDX-License-Identifier: MIT */
/* A small JSON reader and string writer for gdr-info's snapshot answers
 * file. */
#ifndef GDR_EXAMPLES_JSON_H
#define GDR_EXAMPLES_JSON_H

#include <stdio.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
	enum json_type type;
	char *key;	    /* member name inside an object */
	char *str;	    /* JSON_STR */
	double num;	    /* JSON_NUM, JSON_BOOL */
	struct json *child; /* first element or member */
	struct json *next;  /* next sibling */
};

/* Parse @text; NULL with a message in @err on a syntax error. */
struct json *json_parse(const char *text, char *err, size_t n);
void json_free(struct json *j);
/* Member @key of object @o, or NULL. */
const struct json *json_get(const struct json *o, const char *key);
/* Typed getters with defaults. */
const char *json_str(const struct json *o, const char *key, const char *def);
double json_num(const struct json *o, const char *key, double def);
/* The number as an int, or @def when absent or not an int (a crafted
 * snapshot's 1e300, NaN or 2.5: converting those would be undefined). */
int json_int(const struct json *o, const char *key, int def);
/* The number as a byte count: a whole number from 0 to 2^53 (exact in a
 * double), else @def. */
unsigned long long json_bytes(const struct json *o, const char *key,
			      unsigned long long def);

/*
 * @s as a JSON string to @f: '"' and '\\' escaped, control bytes and DEL
 * as \u00XX, every other byte as it is (json_parse gives @s back).
 */
void json_write_str(FILE *f, const char *s);

#endif
