/* SPDX-License-Identifier: MIT */
/* json.h: the reader, the getters and the string writer. */
#include <ctype.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct parser {
	const char *p, *start;
	char *err;
	size_t n;
	int depth;
	unsigned int flags;
};

static struct json *value(struct parser *ps);

/* strtod in the C locale: a program that set LC_NUMERIC (a decimal
 * comma) must not make "1.5" unreadable. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static double c_strtod(const char *p, char **end)
{
	pthread_once(&c_locale_once, c_locale_init);
	return c_locale ? strtod_l(p, end, c_locale) : strtod(p, end);
}

static struct json *fail(struct parser *ps, const char *what)
{
	const char *q;
	int line = 1;

	for (q = ps->start; q < ps->p; q++)
		line += *q == '\n';
	if (!ps->err[0])
		snprintf(ps->err, ps->n, "line %d: %s", line, what);
	return NULL;
}

/* White space as JSON has it (space, tab, newline, carriage return), and
 * with JSON_COMMENTS the comments; false on an unterminated comment. */
static bool ws(struct parser *ps)
{
	for (;;) {
		while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
		       *ps->p == '\r')
			ps->p++;
		if (!(ps->flags & JSON_COMMENTS) || ps->p[0] != '/')
			return true;
		if (ps->p[1] == '/') {
			while (*ps->p && *ps->p != '\n')
				ps->p++;
		} else if (ps->p[1] == '*') {
			const char *end = strstr(ps->p + 2, "*/");

			if (!end) {
				fail(ps, "a comment is not closed");
				return false;
			}
			ps->p = end + 2;
		} else {
			return true;
		}
	}
}

/* A number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 * (no +, no leading zeros, no hex, inf or nan, which strtod would take).
 * Its length, or 0. */
static size_t number_len(const char *p)
{
	const char *q = p;

	if (*q == '-')
		q++;
	if (*q == '0')
		q++;
	else if (*q >= '1' && *q <= '9')
		while (isdigit((unsigned char)*q))
			q++;
	else
		return 0;
	if (*q == '.') {
		if (!isdigit((unsigned char)q[1]))
			return 0;
		for (q++; isdigit((unsigned char)*q); q++)
			;
	}
	if (*q == 'e' || *q == 'E') {
		q++;
		if (*q == '+' || *q == '-')
			q++;
		if (!isdigit((unsigned char)*q))
			return 0;
		while (isdigit((unsigned char)*q))
			q++;
	}
	return (size_t)(q - p);
}

/* Four hex digits at @p: the value, or -1. */
static long hex4(const char *p)
{
	long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		int c = (unsigned char)p[i];

		if (!isxdigit(c))
			return -1;
		v = v * 16 + (isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
	}
	return v;
}

/* Code point @u as UTF-8 into @out: its length. */
static int utf8(unsigned long u, char *out)
{
	if (u < 0x80) {
		out[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		out[0] = (char)(0xc0 | (u >> 6));
		out[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	if (u < 0x10000) {
		out[0] = (char)(0xe0 | (u >> 12));
		out[1] = (char)(0x80 | ((u >> 6) & 0x3f));
		out[2] = (char)(0x80 | (u & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (u >> 18));
	out[1] = (char)(0x80 | ((u >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((u >> 6) & 0x3f));
	out[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

/*
 * A \u escape at ps->p (past the 'u'): its UTF-8 into @out, a surrogate
 * pair as one code point. The length, or -1 for a malformed escape, a
 * lone surrogate or NUL (a C string cannot hold it).
 */
static int escape_u(struct parser *ps, char *out)
{
	long hi = hex4(ps->p), lo;

	if (hi <= 0 || (hi >= 0xdc00 && hi <= 0xdfff))
		return -1;
	ps->p += 4;
	if (hi < 0xd800 || hi > 0xdbff)
		return utf8((unsigned long)hi, out);
	if (ps->p[0] != '\\' || ps->p[1] != 'u')
		return -1;
	lo = hex4(ps->p + 2);
	if (lo < 0xdc00 || lo > 0xdfff)
		return -1;
	ps->p += 6;
	return utf8(0x10000 + (((unsigned long)hi - 0xd800) << 10) +
			    ((unsigned long)lo - 0xdc00),
		    out);
}

static char *string(struct parser *ps)
{
	size_t cap = 32, len = 0;
	char *s, buf[4];
	int k;

	if (*ps->p != '"' || !(s = malloc(cap)))
		return NULL;
	ps->p++;
	while (*ps->p && *ps->p != '"') {
		char c = *ps->p++;

		k = 1;
		buf[0] = c;
		if ((unsigned char)c < 0x20) {
			free(s); /* control bytes are escaped in JSON */
			return NULL;
		}
		if (c == '\\') {
			if (!*ps->p) /* never step past the terminator */
				break;
			c = *ps->p++;
			switch (c) {
			case 'n': buf[0] = '\n'; break;
			case 't': buf[0] = '\t'; break;
			case 'r': buf[0] = '\r'; break;
			case 'b': buf[0] = '\b'; break;
			case 'f': buf[0] = '\f'; break;
			case 'u':
				k = escape_u(ps, buf);
				if (k < 0) {
					free(s);
					return NULL;
				}
				break;
			case '"':
			case '\\':
			case '/': buf[0] = c; break;
			default: free(s); return NULL;
			}
		}
		if (len + (size_t)k + 1 > cap) {
			char *t = realloc(s, cap *= 2);

			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
		}
		memcpy(s + len, buf, (size_t)k);
		len += (size_t)k;
	}
	if (*ps->p != '"') {
		free(s);
		return NULL;
	}
	ps->p++;
	s[len] = '\0';
	return s;
}

static struct json *container(struct parser *ps, int obj)
{
	struct json *j = calloc(1, sizeof(*j)), **tail;

	if (!j)
		return fail(ps, "out of memory");
	j->type = obj ? JSON_OBJ : JSON_ARR;
	tail = &j->child;
	ps->p++;
	if (!ws(ps)) {
		json_free(j);
		return NULL;
	}
	if (*ps->p == (obj ? '}' : ']')) {
		ps->p++;
		return j;
	}
	for (;;) {
		char *key = NULL;
		struct json *v;

		if (!ws(ps)) {
			json_free(j);
			return NULL;
		}
		if (obj) {
			key = string(ps);
			if (!key || !ws(ps) || *ps->p != ':') {
				free(key);
				json_free(j);
				return fail(ps, "expected \"key\":");
			}
			ps->p++;
		}
		v = value(ps);
		if (!v) {
			free(key);
			json_free(j);
			return NULL;
		}
		v->key = key;
		*tail = v;
		tail = &v->next;
		if (!ws(ps)) {
			json_free(j);
			return NULL;
		}
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == (obj ? '}' : ']')) {
			ps->p++;
			return j;
		}
		json_free(j);
		return fail(ps, "expected , or a closing bracket");
	}
}

static struct json *value(struct parser *ps)
{
	struct json *j;
	char *end;

	if (!ws(ps))
		return NULL;
	if (++ps->depth > 32)
		return fail(ps, "nested too deeply");
	if (*ps->p == '{' || *ps->p == '[') {
		j = container(ps, *ps->p == '{');
		ps->depth--;
		return j;
	}
	ps->depth--;
	j = calloc(1, sizeof(*j));
	if (!j)
		return fail(ps, "out of memory");
	if (*ps->p == '"') {
		j->type = JSON_STR;
		j->str = string(ps);
		if (!j->str) {
			free(j);
			return fail(ps, "bad string");
		}
	} else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
		j->type = JSON_BOOL;
		j->num = ps->p[0] == 't';
		ps->p += ps->p[0] == 't' ? 4 : 5;
	} else if (!strncmp(ps->p, "null", 4)) {
		j->type = JSON_NULL;
		ps->p += 4;
	} else {
		size_t len = number_len(ps->p);

		j->type = JSON_NUM;
		j->num = len ? c_strtod(ps->p, &end) : 0;
		if (!len || end != ps->p + len) {
			free(j);
			return fail(ps, "not a JSON value");
		}
		ps->p = end;
	}
	return j;
}

struct json *json_parse_ex(const char *text, unsigned int flags, char *err,
			   size_t n)
{
	struct parser ps = { text, text, err, n, 0, flags };
	struct json *j;

	err[0] = '\0';
	j = value(&ps);
	if (j && (!ws(&ps) || *ps.p)) {
		json_free(j);
		return fail(&ps, "text after the value");
	}
	return j;
}

struct json *json_parse(const char *text, char *err, size_t n)
{
	return json_parse_ex(text, 0, err, n);
}

void json_free(struct json *j)
{
	while (j) {
		struct json *next = j->next;

		json_free(j->child);
		free(j->key);
		free(j->str);
		free(j);
		j = next;
	}
}

const struct json *json_get(const struct json *o, const char *key)
{
	const struct json *c, *last = NULL;

	for (c = o && o->type == JSON_OBJ ? o->child : NULL; c; c = c->next)
		if (c->key && !strcmp(c->key, key))
			last = c;
	return last;
}

const struct json *json_items(const struct json *j)
{
	return j && j->type == JSON_ARR ? j->child : NULL;
}

const char *json_str(const struct json *o, const char *key, const char *def)
{
	const struct json *v = json_get(o, key);

	return v && v->type == JSON_STR ? v->str : def;
}

double json_num(const struct json *o, const char *key, double def)
{
	const struct json *v = json_get(o, key);

	return v && v->type == JSON_NUM ? v->num : def;
}

int json_bool(const struct json *o, const char *key, int def)
{
	const struct json *v = json_get(o, key);

	return v && v->type == JSON_BOOL ? (int)v->num : def;
}

int json_int(const struct json *o, const char *key, int def)
{
	double v = json_num(o, key, def);

	/* NaN fails both comparisons. */
	if (!(v >= INT_MIN && v <= INT_MAX) || v != (double)(int)v)
		return def;
	return (int)v;
}

unsigned long long json_bytes(const struct json *o, const char *key,
			      unsigned long long def)
{
	double v = json_num(o, key, -1);

	if (!(v >= 0 && v <= 9007199254740992.0) ||
	    v != (double)(unsigned long long)v)
		return def;
	return (unsigned long long)v;
}

void json_write_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
