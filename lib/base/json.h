/* SPDX-License-Identifier: MIT */
/*
 * The project's one JSON reader (and a string writer): gdr-info's snapshot
 * answers and GPUDirect Storage's cufile.json. RFC 8259 as written, with
 * one extension on request: the // and block comments cuFile accepts. A
 * key given twice means its last value, as Python and jq read it; each
 * getter answers only for its own type. Calls nothing but the C library:
 * gdr-info and the tests compile it too. Fuzzed (tests/fuzz).
 */
#ifndef GDR_JSON_H
#define GDR_JSON_H

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

/* Parse @text (all of it); NULL with a message in @err (the line and
 * what was wrong) on a syntax error or out of memory. */
struct json *json_parse(const char *text, char *err, size_t n);
/* json_parse with @flags: JSON_COMMENTS takes // and block comments
 * wherever white space may be. */
#define JSON_COMMENTS 1u
struct json *json_parse_ex(const char *text, unsigned int flags, char *err,
			   size_t n);
void json_free(struct json *j);
/* Member @key of object @o (its last, if the key is given twice), or
 * NULL; NULL too when @o is not an object. */
const struct json *json_get(const struct json *o, const char *key);
/* @j's elements when it is an array, else NULL (an object is not walked
 * as one). */
const struct json *json_items(const struct json *j);
/* Typed getters with defaults: a member of another type is @def. */
const char *json_str(const struct json *o, const char *key, const char *def);
double json_num(const struct json *o, const char *key, double def);
/* true or false: 1 or 0; else @def. */
int json_bool(const struct json *o, const char *key, int def);
/* The number as an int, INT_MIN and INT_MAX included, by its value (1e3
 * is 1000), or @def when absent or not an int (a crafted snapshot's
 * 2147483648, 1e300, NaN or 2.5: converting those would be undefined). */
int json_int(const struct json *o, const char *key, int def);
/* The number as a byte count: a whole number from 0 to 2^53 inclusive
 * (exact in a double), else @def. */
unsigned long long json_bytes(const struct json *o, const char *key,
			      unsigned long long def);

/*
 * @s as a JSON string to @f: '"' and '\\' escaped, control bytes and DEL
 * as \u00XX, every other byte as it is (json_parse gives @s back).
 */
void json_write_str(FILE *f, const char *s);

#endif
