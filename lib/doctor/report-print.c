/* SPDX-License-Identifier: MIT */
/* The report as text for people and as JSON (docs/report-schema.json). */
#include <errno.h>
#include <string.h>

#include "doctor.h"

const char *gdr_verdict_str(enum gdr_verdict v)
{
	switch (v) {
	case GDR_VERDICT_OK: return "ok";
	case GDR_VERDICT_MISSING: return "missing";
	case GDR_VERDICT_WRONG: return "wrong";
	case GDR_VERDICT_UNKNOWN: return "unknown";
	case GDR_VERDICT_INFO: /* fall through */
	default: return "info";
	}
}

/*
 * The length of the UTF-8 sequence at @s (1 to 4), or 0 where it is not
 * one: a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF. What the report prints comes from the node and snapshots.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned long u;
	int len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, u = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, u = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, u = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		u = (u << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (u < 0x800 || (u >= 0xd800 && u <= 0xdfff))) ||
	    (len == 4 && (u < 0x10000 || u > 0x10ffff)))
		return 0;
	return len;
}

/* A JSON string: always valid UTF-8 (a byte that is not becomes U+FFFD). */
static void json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		int len = utf8_len(s);

		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else if (*s < 0x20 || *s == 0x7f)
			fprintf(out, "\\u%04x", *s);
		else if (!len)
			fputs("\\ufffd", out);
		else
			fwrite(s, 1, (size_t)len, out);
		s += len ? len : 1;
	}
	fputc('"', out);
}

/* A C1 control character (U+0080 to U+009F: 0xc2 0x80..0x9f in UTF-8),
 * which terminals act on as they do on C0 (0x9b is CSI). */
static bool c1(const unsigned char *s, int len)
{
	return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* Text for a terminal: no control byte of the input reaches it (an escape
 * sequence in a device name, C0 or C1), nor a byte that is not UTF-8.
 * Padded to @width characters. */
static void text_str(FILE *out, const char *str, int width)
{
	const unsigned char *s = (const unsigned char *)str;
	int shown = 0;

	while (*s) {
		int len = utf8_len(s);

		if (*s < 0x20 || *s == 0x7f || !len || c1(s, len)) {
			shown += fprintf(out, "\\x%02x", *s);
			s++;
			continue;
		}
		fwrite(s, 1, (size_t)len, out);
		s += len;
		shown++;
	}
	for (; shown < width; shown++)
		fputc(' ', out);
}

const char *gdr_report_scope_name(enum gdr_report_scope scope)
{
	switch (scope) {
	case GDR_REPORT_SCOPE_NODE: return "node";
	case GDR_REPORT_SCOPE_GPU: return "gpu";
	case GDR_REPORT_SCOPE_RDMA_DEVICE: return "rdma_device";
	case GDR_REPORT_SCOPE_STORAGE: return "storage";
	case GDR_REPORT_SCOPE_UNKNOWN: /* fall through */
	default: return "unknown";
	}
}

/* Whether @s is @word followed by at least one digit and nothing else. */
static bool numbered(const char *s, const char *word)
{
	size_t n = strlen(word);

	return !strncmp(s, word, n) && s[n] &&
	       strspn(s + n, "0123456789") == strlen(s + n);
}

/* An RDMA device's name that reads as another scope's section ("node",
 * "gpu0", "storage1"): its header says what it is. */
static bool looks_reserved(const char *section)
{
	return !strcmp(section, "node") || !strcmp(section, "storage") ||
	       numbered(section, "gpu") || numbered(section, "storage");
}

void gdr_report_print_json(const struct gdr_report *r, FILE *out)
{
	unsigned int i;

	fprintf(out,
		"{\n  \"schema\": \"libgpudirect-report\",\n"
		"  \"schema_version\": 1,\n"
		"  \"library_version\": \"%d.%d.%d\",\n"
		"  \"gpudirect_rdma_usable\": %s,\n  \"items\": [",
		GPUDIRECT_VERSION_MAJOR, GPUDIRECT_VERSION_MINOR,
		GPUDIRECT_VERSION_MICRO, r->usable ? "true" : "false");
	for (i = 0; i < r->num; i++) {
		const struct gdr_report_entry *it = &r->items[i];

		fputs(i ? ",\n    {" : "\n    {", out);
		fputs("\"section\": ", out);
		json_str(out, it->section);
		fputs(", \"key\": ", out);
		json_str(out, it->key);
		fputs(", \"value\": ", out);
		json_str(out, it->value);
		fprintf(out, ", \"verdict\": \"%s\", \"remedy\": ",
			gdr_verdict_str(it->verdict));
		json_str(out, it->remedy);
		fprintf(out, ", \"scope\": \"%s\"}",
			gdr_report_scope_name(it->scope));
	}
	fputs("\n  ]\n}\n", out);
}

void gdr_report_print_text(const struct gdr_report *r, FILE *out)
{
	enum gdr_report_scope scope = GDR_REPORT_SCOPE_UNKNOWN;
	const char *section = "";
	unsigned int i;

	fprintf(out, "libgpudirect %d.%d.%d report\n", GPUDIRECT_VERSION_MAJOR,
		GPUDIRECT_VERSION_MINOR, GPUDIRECT_VERSION_MICRO);
	for (i = 0; i < r->num; i++) {
		const struct gdr_report_entry *it = &r->items[i];

		if (strcmp(section, it->section) || scope != it->scope) {
			section = it->section;
			scope = it->scope;
			fputs("\n[", out);
			text_str(out, section, 0);
			if (scope == GDR_REPORT_SCOPE_RDMA_DEVICE &&
			    looks_reserved(section))
				fputs(" (RDMA device)", out);
			fputs("]\n", out);
		}
		fputs("  ", out);
		text_str(out, it->key, 26);
		fprintf(out, " %-8s ", gdr_verdict_str(it->verdict));
		text_str(out, it->value, 0);
		fputc('\n', out);
		if (it->remedy[0] && it->verdict != GDR_VERDICT_OK) {
			fprintf(out, "  %-26s          -> ", "");
			text_str(out, it->remedy, 0);
			fputc('\n', out);
		}
	}
	fprintf(out, "\nGPUDirect RDMA: %s\n",
		r->usable ? "usable on at least one GPU x RDMA device pair"
			  : "NOT usable on this node (see the items above)");
}

GDR_PUBLIC int gdr_report_print(const struct gdr_report *r, FILE *out,
				enum gdr_report_format format)
{
	gdr_clear_error();
	if (!r || !out ||
	    (format != GDR_REPORT_TEXT && format != GDR_REPORT_JSON)) {
		gdr_fail(EINVAL, "gdr_report_print: report and stream must "
				 "not be NULL, format TEXT or JSON");
		return -1;
	}
	/* Only what this call's writes leave in errno may be reported. */
	errno = 0;
	if (format == GDR_REPORT_JSON)
		gdr_report_print_json(r, out);
	else
		gdr_report_print_text(r, out);
	if (fflush(out) == EOF || ferror(out)) {
		int err = errno ? errno : EIO;

		gdr_fail(err, "writing the report failed: %s", strerror(err));
		return -1;
	}
	return 0;
}
