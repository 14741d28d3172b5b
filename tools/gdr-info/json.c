/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct parser {
	const char *p;
	char *err;
	size_t n;
	int depth;
};

static struct json *value(struct parser *ps);

static void ws(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static struct json *fail(struct parser *ps, const char *what)
{
	if (!ps->err[0])
		snprintf(ps->err, ps->n, "%s near \"%.20s\"", what, ps->p);
	return NULL;
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
	ws(ps);
	if (*ps->p == (obj ? '}' : ']')) {
		ps->p++;
		return j;
	}
	for (;;) {
		char *key = NULL;
		struct json *v;

		ws(ps);
		if (obj) {
			key = string(ps);
			ws(ps);
			if (!key || *ps->p != ':') {
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
		ws(ps);
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

	ws(ps);
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
		j->type = JSON_NUM;
		j->num = strtod(ps->p, &end);
		if (end == ps->p) {
			free(j);
			return fail(ps, "unexpected character");
		}
		ps->p = end;
	}
	return j;
}

struct json *json_parse(const char *text, char *err, size_t n)
{
	struct parser ps = { text, err, n, 0 };
	struct json *j;

	err[0] = '\0';
	j = value(&ps);
	if (j) {
		ws(&ps);
		if (*ps.p) {
			json_free(j);
			return fail(&ps, "trailing text");
		}
	}
	return j;
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
	const struct json *c;

	for (c = o && o->type == JSON_OBJ ? o->child : NULL; c; c = c->next)
		if (c->key && !strcmp(c->key, key))
			return c;
	return NULL;
}

const char *json_str(const struct json *o, const char *key, const char *def)
{
	const struct json *v = json_get(o, key);

	return v && v->type == JSON_STR ? v->str : def;
}

double json_num(const struct json *o, const char *key, double def)
{
	const struct json *v = json_get(o, key);

	return v && (v->type == JSON_NUM || v->type == JSON_BOOL) ? v->num
								  : def;
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
