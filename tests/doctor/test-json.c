/* SPDX-License-Identifier: MIT */
/*
 * The project's JSON writer and reader (lib/base/json.c): every string
 * the writer writes reads back byte for byte, over every byte value and
 * the character classes (escapes, control bytes, DEL, UTF-8 of 1-4 bytes,
 * bytes that are not UTF-8); the reader decodes \u escapes and surrogate
 * pairs to UTF-8 and refuses what a C string cannot hold or JSON does not
 * allow; nesting is capped, never a stack overflow.
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int failed, passed;

/* Allocation faults (meson.build wraps calloc and malloc): the
 * fail_at-th allocation from now on fails; 0: none does. */
static int fail_at, allocs;
void *__real_calloc(size_t n, size_t size);
void *__real_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t size);

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_at && ++allocs == fail_at ? NULL : __real_calloc(n, size);
}

void *__wrap_malloc(size_t size)
{
	return fail_at && ++allocs == fail_at ? NULL : __real_malloc(size);
}

#define CHECK(c, ...)                                                          \
	do {                                                                   \
		if (c) {                                                       \
			passed++;                                              \
		} else {                                                       \
			failed++;                                              \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);            \
			printf(__VA_ARGS__);                                   \
			printf("\n");                                          \
		}                                                              \
	} while (0)

static void hexdump(const char *what, const char *s)
{
	printf("  %s:", what);
	for (; *s; s++)
		printf(" %02x", (unsigned char)*s);
	printf("\n");
}

/* Write @s as the value and the key of an object, read it back. */
static void round_trip(const char *s)
{
	char *text = NULL, err[128];
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);
	struct json *j;
	int raw = 0;

	if (!f) {
		CHECK(0, "open_memstream failed");
		return;
	}
	fputs("{", f);
	json_write_str(f, s);
	fputs(": ", f);
	json_write_str(f, s);
	fputs("}", f);
	if (fclose(f)) {
		CHECK(0, "writing to memory failed");
		free(text);
		return;
	}
	for (i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			raw = 1;
	CHECK(!raw, "the writer left a control byte raw");
	j = json_parse(text, err, sizeof(err));
	CHECK(j != NULL, "written text does not parse: %s", err);
	if (j) {
		const struct json *m = j->child;

		CHECK(j->type == JSON_OBJ && m && m->type == JSON_STR,
		      "not an object with one string member");
		if (m && m->key && m->str) {
			CHECK(!strcmp(m->key, s), "the key does not read back");
			CHECK(!strcmp(m->str, s),
			      "the value does not read back");
			if (strcmp(m->str, s)) {
				hexdump("wrote", s);
				hexdump("read", m->str);
			}
		}
		json_free(j);
	}
	free(text);
}

/* What json_write_str writes for @s is exactly @want (json.h: only '"',
 * '\\', control bytes and DEL are escaped; answers.json stays readable). */
static void writes_as(const char *s, const char *want)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		CHECK(0, "open_memstream failed");
		return;
	}
	json_write_str(f, s);
	if (fclose(f)) {
		CHECK(0, "writing to memory failed");
		free(text);
		return;
	}
	CHECK(!strcmp(text, want), "%s is written as %s", want, text);
	free(text);
}

/* "..." parsed as a string: NULL when refused. */
static char *read_str(const char *json)
{
	char err[128], *s = NULL;
	struct json *j = json_parse(json, err, sizeof(err));

	if (j && j->type == JSON_STR)
		s = strdup(j->str);
	json_free(j);
	return s;
}

static void reads_as(const char *json, const char *want)
{
	char *got = read_str(json);

	if (want) {
		CHECK(got && !strcmp(got, want), "%s does not read as expected",
		      json);
		if (got && strcmp(got, want)) {
			hexdump("want", want);
			hexdump("got", got);
		}
	} else {
		CHECK(!got, "%s is accepted; it must be refused", json);
	}
	free(got);
}

static void nesting(int depth, int ok)
{
	char *t = malloc((size_t)depth * 2 + 1), err[128];
	struct json *j;
	int i;

	if (!t) {
		CHECK(0, "out of memory");
		return;
	}
	for (i = 0; i < depth; i++) {
		t[i] = '[';
		t[depth * 2 - 1 - i] = ']';
	}
	t[depth * 2] = '\0';
	j = json_parse(t, err, sizeof(err));
	if (ok)
		CHECK(j != NULL, "%d levels refused: %s", depth, err);
	else
		CHECK(!j && strstr(err, "nested too deeply"), "%d levels: %s",
		      depth, j ? "accepted" : err);
	json_free(j);
	free(t);
}

/* @text parsed (with @flags): NULL when refused, @err saying why. */
static struct json *parse(const char *text, unsigned int flags, char *err,
			  size_t n)
{
	return json_parse_ex(text, flags, err, n);
}

/*
 * CR LF line ends (a file edited on Windows, a cufile.json copied from
 * one): RFC 8259 counts CR as white space, and a // comment ends at the
 * LF after it. A lone CR separates tokens too; the line of an error is
 * counted by LF, so CR LF lines are numbered as LF lines are.
 */
static void crlf(void)
{
	char err[128];
	struct json *j;

	j = parse("{\r\n \"a\": 1,\r\n \"b\": [true,\r\nnull]\r\n}\r\n", 0, err,
		  sizeof(err));
	CHECK(j && json_num(j, "a", 0) == 1 && json_items(json_get(j, "b")) &&
		      json_items(json_get(j, "b"))->type == JSON_BOOL &&
		      json_items(json_get(j, "b"))->next->type == JSON_NULL,
	      "CR LF as white space: %s", err);
	json_free(j);
	j = parse("\r7\r", 0, err, sizeof(err));
	CHECK(j && j->type == JSON_NUM && j->num == 7, "a lone CR: %s", err);
	json_free(j);
	j = parse("{\r\n\"a\": 1\r\n\r\nx}", 0, err, sizeof(err));
	CHECK(!j && strstr(err, "line 4: expected , or a closing bracket"),
	      "an error after three CR LF lines: %s", j ? "accepted" : err);
	json_free(j);
	/* Comments on CR LF lines: the CR ends nothing, the LF ends a //
	 * comment, a block comment runs across both. */
	j = parse("// head\r\n{ \"a\": 1, // tail\r\n /* x\r\n y */ \"b\": 2 "
		  "}\r\n// end\r\n",
		  JSON_COMMENTS, err, sizeof(err));
	CHECK(j && json_num(j, "a", 0) == 1 && json_num(j, "b", 0) == 2,
	      "comments on CR LF lines: %s", err);
	json_free(j);
	/* Without JSON_COMMENTS the same text is refused. */
	j = parse("// head\r\n1", 0, err, sizeof(err));
	CHECK(!j && err[0], "a comment without JSON_COMMENTS");
	json_free(j);
	/* CR inside a string is a control byte: escaped in JSON, so raw it
	 * is refused; escaped it reads back. */
	reads_as("\"a\rb\"", NULL);
	reads_as("\"a\\r\\nb\"", "a\r\nb");
}

/* The value of @text's member "v" through json_int and json_bytes. */
static void number_edges(const char *text, int want_int,
			 unsigned long long want_bytes)
{
	char err[128], doc[160];
	struct json *j;

	snprintf(doc, sizeof(doc), "{\"v\": %s}", text);
	j = parse(doc, 0, err, sizeof(err));
	CHECK(j != NULL, "%s does not parse: %s", text, err);
	CHECK(json_int(j, "v", -77) == want_int, "json_int(%s) is %d, want %d",
	      text, json_int(j, "v", -77), want_int);
	CHECK(json_bytes(j, "v", 77) == want_bytes,
	      "json_bytes(%s) is %llu, want %llu", text, json_bytes(j, "v", 77),
	      want_bytes);
	json_free(j);
}

/*
 * json.h: json_int gives the number when it is a whole number inside
 * int (INT_MIN and INT_MAX themselves included), else the default;
 * json_bytes a whole number from 0 to 2^53 inclusive, else the default.
 * A number written with a fraction or an exponent counts by its value.
 * (-77 and 77: the defaults, told apart from every real answer.)
 */
static void numbers(void)
{
	number_edges("2147483647", 2147483647, 2147483647ull);
	number_edges("2147483648", -77, 2147483648ull);
	number_edges("-2147483648", -2147483647 - 1, 77);
	number_edges("-2147483649", -77, 77);
	number_edges("0", 0, 0);
	number_edges("-0", 0, 0);
	number_edges("-1", -1, 77);
	number_edges("1e3", 1000, 1000);
	number_edges("1E+2", 100, 100);
	number_edges("2.147483647e9", 2147483647, 2147483647ull);
	number_edges("2.5", -77, 77);
	number_edges("25e-1", -77, 77);
	number_edges("4096.0", 4096, 4096);
	number_edges("1e300", -77, 77);
	number_edges("1e400", -77, 77); /* strtod's HUGE_VAL */
	number_edges("9007199254740992", -77, 9007199254740992ull);
	number_edges("9007199254740994", -77, 77);
}

/* Surrogates at each edge of their ranges: only a high one (D800-DBFF)
 * followed by a low one (DC00-DFFF) is a character. */
static void surrogates(void)
{
	reads_as("\"\\udc00\"", NULL); /* the first low surrogate, alone */
	reads_as("\"\\udfff\"", NULL); /* the last low surrogate */
	reads_as("\"\\ud800\"", NULL); /* the first high surrogate */
	reads_as("\"\\udbff\"", NULL); /* the last high surrogate */
	reads_as("\"\\ud800x\"", NULL);
	reads_as("\"\\udc00\\ud800\"", NULL);	 /* a pair the wrong way */
	reads_as("\"\\ud800\\udbff\"", NULL);	 /* high, then high */
	reads_as("\"\\udbff\\ue000\"", NULL);	 /* high, then past the lows */
	reads_as("\"\\ud7ff\"", "\xed\x9f\xbf"); /* just below: a character */
	reads_as("\"\\ue000\"", "\xee\x80\x80"); /* just above */
	reads_as("\"\\ud800\\udc00\"", "\xf0\x90\x80\x80"); /* U+10000 */
	reads_as("\"\\ud800\\udfff\"", "\xf0\x90\x8f\xbf"); /* U+103FF */
	reads_as("\"\\udbff\\udc00\"", "\xf4\x8f\xb0\x80"); /* U+10FC00 */
	reads_as("\"\\u0001\"", "\x01"); /* the first byte after NUL */
}

/* A block comment ends at the first "*" "/" after its opening "/" "*":
 * the "/" of "/" "*" "/" is inside the comment, not its end. */
static void block_comments(void)
{
	static const struct {
		const char *text;
		double want; /* -1: refused */
	} cases[] = {
		{ "/*/ 1 */ 2", 2 }, { "/**/3", 3 },  { "/***/4", 4 },
		{ "/* a **/ 5", 5 }, { "/*/*/6", 6 }, { "[/*/ ] */ 7]", 7 },
		{ "/*/", -1 },	     { "/*/ 1", -1 }, { "/* a */ */ 1", -1 },
		{ "/ 1", -1 },	     { "/*", -1 },
	};
	char err[128];
	struct json *j;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct json *v;

		j = parse(cases[i].text, JSON_COMMENTS, err, sizeof(err));
		v = j && j->type == JSON_ARR ? json_items(j) : j;
		if (cases[i].want < 0)
			CHECK(!j && err[0], "%s is accepted", cases[i].text);
		else
			CHECK(v && v->type == JSON_NUM &&
				      v->num == cases[i].want,
			      "%s: %s", cases[i].text,
			      j ? "another value" : err);
		json_free(j);
	}
	j = parse("/*/", JSON_COMMENTS, err, sizeof(err));
	CHECK(!j && strstr(err, "comment is not closed"), "/*/: %s",
	      j ? "accepted" : err);
	json_free(j);
}

int main(void)
{
	static const char *classes[] = {
		"",
		"plain text 0123456789",
		"\"quoted\" and \\backslash\\ and /slash/",
		"\\u0041 is not an escape once written",
		"\x01\x02\x1b[2J\x1f\x7f",
		"tab\there\nnewline\rreturn\bback\fform",
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", /* 2, 3, 4 bytes */
		"\xef\xbb\xbf BOM",
		"\xff\xfe not UTF-8 \xc3 truncated \xe2\x82",
		"\xed\xa0\x80 an encoded surrogate",
		"\xc0\xaf overlong",
	};
	char one[2] = { 0, 0 };
	unsigned int i;

	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		round_trip(classes[i]);
	for (i = 1; i < 256; i++) { /* every byte but NUL, alone */
		one[0] = (char)i;
		round_trip(one);
	}

	/* The writer's bytes: printable ASCII and UTF-8 as they are. */
	writes_as("mlx5_0 ~ 6.8.0-test", "\"mlx5_0 ~ 6.8.0-test\"");
	writes_as("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	writes_as("a\"b\\c\x01\x7f", "\"a\\\"b\\\\c\\u0001\\u007f\"");

	/* The reader's escapes. */
	reads_as("\"\\u0041\\u00e9\\u20ac\"", "A\xc3\xa9\xe2\x82\xac");
	reads_as("\"\\u00E9\\u20AC\"", "\xc3\xa9\xe2\x82\xac");
	reads_as("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80");
	reads_as("\"\\uD83D\\uDE00\"", "\xf0\x9f\x98\x80");
	reads_as("\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	reads_as("\"\\u07ff\\u0800\\uffff\"",
		 "\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf"); /* class edges */
	reads_as("\"\\u007f\\u0080\"", "\x7f\xc2\x80");
	reads_as("\"\\n\\t\\r\\b\\f\\\"\\\\\\/\"", "\n\t\r\b\f\"\\/");
	reads_as("\"raw \xc3\xa9 and \xff\"", "raw \xc3\xa9 and \xff");
	reads_as("\"\\ud83d\"", NULL);	      /* a lone high surrogate */
	reads_as("\"\\ude00\"", NULL);	      /* a lone low surrogate */
	reads_as("\"\\ud83d\\u0041\"", NULL); /* high, then not a low one */
	reads_as("\"\\ud83d\\ud83d\"", NULL);
	reads_as("\"\\u0000\"", NULL); /* a C string cannot hold it */
	reads_as("\"\\u00\"", NULL);
	reads_as("\"\\u00g0\"", NULL);
	reads_as("\"\\x41\"", NULL);
	reads_as("\"\\", NULL);
	reads_as("\"unterminated", NULL);
	reads_as("\"raw\x01control\"", NULL);
	reads_as("\"raw\x1f-control\"", NULL);	    /* the last control byte */
	reads_as("\"raw control\"", "raw control"); /* 0x20 is not one */
	reads_as("\"raw\nnewline\"", NULL);

	/* What is JSON and what is not: numbers as RFC 8259 writes them
	 * (strtod alone takes +1, 0x10, inf, nan, .5, 1.), literals whole,
	 * white space of JSON only, nothing after the value. */
	{
		static const char *const good[] = {
			"0",
			"-0",
			"12",
			"-1.5e+3",
			"1E9",
			"0.25",
			"[]",
			"{}",
			" [1, \"a\", true, false, null] ",
			"{\"a\": {\"b\": []}}",
		};
		static const char *const bad[] = {
			"+1",	      "0x10",  "inf",	    "nan",	 "NaN",
			"Infinity",   ".5",    "1.",	    "01",	 "1e",
			"-",	      "tru",   "truex",	    "nul",	 "[1,]",
			"{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{a: 1}",	 "1 2",
			"\v1",	      "\f[]",  "// c\n1",   "/* c */ 1", "",
			"[",	      "'a'",
		};
		char err[128];
		struct json *j;

		for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
			j = json_parse(good[i], err, sizeof(err));
			CHECK(j != NULL, "%s does not parse: %s", good[i], err);
			json_free(j);
		}
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			j = json_parse(bad[i], err, sizeof(err));
			CHECK(j == NULL && err[0], "%s parses", bad[i]);
			json_free(j);
		}
		/* Comments only when asked, wherever white space may be. */
		j = json_parse_ex("// c\n{ /* x */ \"a\" /* y */ : // z\n 1 } "
				  "// end",
				  JSON_COMMENTS, err, sizeof(err));
		CHECK(j && json_num(j, "a", 0) == 1, "comments: %s", err);
		json_free(j);
		j = json_parse_ex("{\"a\": \"// not /* one\"}", JSON_COMMENTS,
				  err, sizeof(err));
		CHECK(j && !strcmp(json_str(j, "a", ""), "// not /* one"),
		      "a comment inside a string");
		json_free(j);
		j = json_parse_ex("{\n\n/* open", JSON_COMMENTS, err,
				  sizeof(err));
		CHECK(!j && strstr(err, "line 3") &&
			      strstr(err, "comment is not closed"),
		      "an open comment: %s", err);
		json_free(j);
		/* A key twice: the last; types respected by each getter. */
		j = json_parse("{\"k\": 1, \"b\": true, \"s\": \"x\", "
			       "\"k\": 2, \"o\": {\"x\": 1}, \"n\": null}",
			       err, sizeof(err));
		CHECK(j && json_num(j, "k", 0) == 2, "the last of a key");
		CHECK(j && json_num(j, "b", 7) == 7,
		      "a boolean read as a number");
		CHECK(j && json_bool(j, "b", 7) == 1 &&
			      json_bool(j, "k", 7) == 7,
		      "json_bool");
		CHECK(j && json_int(j, "s", 7) == 7 && !json_str(j, "k", NULL),
		      "a string as a number, a number as a string");
		CHECK(j && !json_items(json_get(j, "o")) &&
			      !json_items(json_get(j, "n")),
		      "an object or null walked as an array");
		CHECK(j && !json_get(json_get(j, "k"), "x"),
		      "a member of a number");
		json_free(j);
		j = json_parse("[[1]]", err, sizeof(err));
		CHECK(j && json_items(j) && json_items(json_items(j)) &&
			      !json_get(j, "x"),
		      "json_items of arrays; json_get of an array");
		json_free(j);
	}

	/* A program's decimal comma (LC_NUMERIC) does not change JSON. */
	{
		static const char *const comma[] = { "de_DE.UTF-8",
						     "fr_FR.UTF-8",
						     "de_DE.utf8",
						     "ru_RU.UTF-8" };
		const char *got = NULL;
		char err[128];
		struct json *j;

		for (i = 0; i < 4 && !got; i++)
			got = setlocale(LC_NUMERIC, comma[i]);
		if (!got) {
			printf("SKIP the decimal comma: no such locale here\n");
		} else {
			j = json_parse("{\"a\": 1.5}", err, sizeof(err));
			CHECK(j && json_num(j, "a", 0) == 1.5,
			      "1.5 under %s: %s", got, err);
			json_free(j);
			setlocale(LC_NUMERIC, "C");
		}
	}

	/* Every allocation of a parse failing in turn: NULL and "out of
	 * memory", never a crash (ASan and valgrind see no leak). */
	{
		const char *text = "{\"a\": 1, \"b\": \"s\", \"c\": [true, "
				   "null, {\"d\": \"\\u00e9\"}]}";
		char err[128];
		struct json *j;
		int k, oom = 0;

		for (k = 1;; k++) {
			fail_at = k;
			allocs = 0;
			j = json_parse(text, err, sizeof(err));
			fail_at = 0;
			if (j) {
				json_free(j);
				break;
			}
			oom += strstr(err, "out of memory") != NULL;
			CHECK(strstr(err, "out of memory") ||
				      strstr(err, "bad string") ||
				      strstr(err, "expected"),
			      "allocation %d failing: %s", k, err);
		}
		CHECK(k > 5 && oom >= 3,
		      "%d allocations, %d said out of memory", k, oom);
	}

	crlf();
	numbers();
	surrogates();
	block_comments();

	/* Nesting: the cap is 32 levels; far deeper is refused, not a crash. */
	nesting(32, 1);
	nesting(33, 0);
	nesting(100000, 0);

	printf("json: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
