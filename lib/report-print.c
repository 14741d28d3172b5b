/* SPDX-License-Identifier: MIT */
/* The report as text for people and as JSON (docs/report-schema.json). */
#include <errno.h>
#include <string.h>

#include "internal.h"

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

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
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
		fputc('}', out);
	}
	fputs("\n  ]\n}\n", out);
}

void gdr_report_print_text(const struct gdr_report *r, FILE *out)
{
	const char *section = "";
	unsigned int i;

	fprintf(out, "libgpudirect %d.%d.%d report\n", GPUDIRECT_VERSION_MAJOR,
		GPUDIRECT_VERSION_MINOR, GPUDIRECT_VERSION_MICRO);
	for (i = 0; i < r->num; i++) {
		const struct gdr_report_entry *it = &r->items[i];

		if (strcmp(section, it->section)) {
			section = it->section;
			fprintf(out, "\n[%s]\n", section);
		}
		fprintf(out, "  %-26s %-8s %s\n", it->key,
			gdr_verdict_str(it->verdict), it->value);
		if (it->remedy[0] && it->verdict != GDR_VERDICT_OK)
			fprintf(out, "  %-26s          -> %s\n", "",
				it->remedy);
	}
	fprintf(out, "\nGPUDirect RDMA: %s\n",
		r->usable ? "usable on at least one GPU x RDMA device pair"
			  : "NOT usable on this node (see the items above)");
}

GDR_EXPORT int gdr_report_print(const struct gdr_report *r, FILE *out,
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
