/* SPDX-License-Identifier: MIT */
#include <ctype.h>
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

static char *string(struct parser *ps)
{
	size_t cap = 32, len = 0;
	char *s;

	if (*ps->p != '"' || !(s = malloc(cap)))
		return NULL;
	ps->p++;
	while (*ps->p && *ps->p != '"') {
		char c = *ps->p++;

		if (c == '\\') {
			if (!*ps->p) /* never step past the terminator */
				break;
			c = *ps->p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'u': /* keep it simple: \u00XX only */
				if (strncmp(ps->p, "00", 2) ||
				    !isxdigit((unsigned char)ps->p[2]) ||
				    !isxdigit((unsigned char)ps->p[3]) ||
				    (ps->p[2] == '0' && ps->p[3] == '0')) {
					free(s);
					return NULL;
				}
				c = (char)strtol((char[]){ ps->p[2], ps->p[3],
							   0 },
						 NULL, 16);
				ps->p += 4;
				break;
			case '"':
			case '\\':
			case '/': break;
			default: free(s); return NULL;
			}
		}
		if (len + 2 > cap) {
			char *t = realloc(s, cap *= 2);

			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
		}
		s[len++] = c;
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
