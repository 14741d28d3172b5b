/* SPDX-License-Identifier: MIT */
/*
 * gdr-info --nfd's label parts (tools/gdr-info/nfd.c), from both sides:
 * a value is the first word of what the report says, in NFD's characters,
 * beginning and ending alphanumeric, at most 63 characters and never past
 * its buffer; a device name keeps [A-Za-z0-9_-], and one too long keeps its
 * start and a hash of the whole. Over a report made here: the GPU count
 * of a value that is not a number, a value with nothing NFD-safe in it, the
 * self-test's overall label, and one device's name the same in every label.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "items.h"
#include "nfd.h"

static int failed, passed;

static void value_is(const char *in, size_t n, const char *want)
{
	char out[256]; /* n is at most 128: out[n] shows a write past it */

	memset(out, 'Z', sizeof(out));
	nfd_value(in, out, n);
	if (!strcmp(out, want) && strlen(out) < n && out[n] == 'Z') {
		passed++;
	} else {
		failed++;
		printf("FAIL nfd_value(\"%s\", %zu): \"%s\", want \"%s\"\n", in,
		       n, out, want);
	}
}

static void device_is(const char *in, size_t max, const char *want)
{
	char out[NFD_MAX + 1];

	nfd_device(in, out, max);
	if (!strcmp(out, want)) {
		passed++;
	} else {
		failed++;
		printf("FAIL nfd_device(\"%s\", %zu): \"%s\", want \"%s\"\n",
		       in, max, out, want);
	}
}

/* A report of @n items (section, key, value; scope), as the library keeps
 * one. */
struct item {
	const char *section, *key, *value;
	enum gdr_report_scope scope;
};

static struct gdr_report *report_of(const struct item *it, unsigned int n)
{
	static struct gdr_report_entry e[8];
	static struct gdr_report r;
	unsigned int i;

	memset(e, 0, sizeof(e));
	for (i = 0; i < n && i < 8; i++) {
		e[i].section = (char *)it[i].section;
		e[i].key = (char *)it[i].key;
		e[i].value = (char *)it[i].value;
		e[i].remedy = (char *)"";
		e[i].verdict = GDR_VERDICT_INFO;
		e[i].scope = it[i].scope;
	}
	r.items = e;
	r.num = r.cap = i;
	r.usable = 0;
	return &r;
}

static void gpus_are(const char *count, int want)
{
	struct item it = { "node", "cuda_devices", count,
			   GDR_REPORT_SCOPE_NODE };
	int got = report_gpus(report_of(&it, 1));

	if (got == want) {
		passed++;
	} else {
		failed++;
		printf("FAIL cuda_devices \"%s\": %d GPUs, want %d\n", count,
		       got, want);
	}
}

/* The labels nfd_render gives @r (with @nst self-tests) hold @line. */
static void labels_hold(const struct gdr_report *r,
			const struct nfd_selftest *st, unsigned int nst,
			const char *line, const char *what)
{
	char *text = NULL;
	size_t len = 0;

	if (!nfd_render(r, st, nst, true, 3600, &text, &len) && text &&
	    strstr(text, line)) {
		passed++;
	} else {
		failed++;
		printf("FAIL %s: no \"%s\" in:\n%s\n", what, line,
		       text ? text : "(nothing)");
	}
	free(text);
}

/* 300 self-test labels, some 20 KiB: the text grows past its first
 * 4 KiB, every label whole, and its length is the text's. */
static void many_labels(const struct gdr_report *r)
{
	static struct nfd_selftest st[300];
	char *text = NULL, line[96];
	size_t len = 0;
	unsigned int i, found = 0;

	for (i = 0; i < 300; i++) {
		snprintf(st[i].nic, sizeof(st[i].nic), "nic%u", i);
		st[i].gpu = 0;
		st[i].ok = true;
	}
	if (!nfd_render(r, st, 300, true, 3600, &text, &len) && text) {
		for (i = 0; i < 300; i++) {
			snprintf(line, sizeof(line),
				 "/gpudirect-gpu0.nic%u.selftest=pass\n", i);
			found += strstr(text, line) != NULL;
		}
	}
	if (text && found == 300 && len == strlen(text) && len > 8192) {
		passed++;
	} else {
		failed++;
		printf("FAIL 300 self-test labels: %u found, %zu bytes\n",
		       found, len);
	}
	free(text);
}

static void report_cases(void)
{
	/* 40 characters: past the room a self-test label leaves (38) */
	static const char dev40[] = "abcdefghij0123456789abcdefghij0123456789";
	struct item it[] = {
		{ "node", "cuda_devices", "1", GDR_REPORT_SCOPE_NODE },
		{ "mlx5_0", "path_gpu0", "((( )))",
		  GDR_REPORT_SCOPE_RDMA_DEVICE },
		{ dev40, "path_gpu0", "dmabuf", GDR_REPORT_SCOPE_RDMA_DEVICE },
	};
	struct nfd_selftest st[2] = { { "mlx5_0", 0, true },
				      { "mlx5_0", -1, false } };
	const struct gdr_report *r;
	char dev[NFD_MAX + 1], line[160];

	/* The count is the library's number; anything else is no GPU. */
	gpus_are("2", 2);
	gpus_are("65536", 65536);
	gpus_are("65537", 0);
	gpus_are("unknown", 0);
	gpus_are("-1", 0);
	gpus_are("", 0);
	/* (report_of's storage is one: the report of several items after) */
	r = report_of(it, 3);
	/* A value with nothing NFD-safe in it is "unknown", never empty. */
	labels_hold(r, st, 0, "gpudirect-gpu0.mlx5_0.path=unknown\n",
		    "a path of no safe character");
	/* The self-test passes only where every pair passed. */
	labels_hold(r, st, 2, "gpudirect-selftest=fail\n", "one of two passed");
	labels_hold(r, st, 1, "gpudirect-selftest=pass\n", "one of one passed");
	labels_hold(r, st, 0, "gpudirect-selftest=none\n", "none ran");
	/* A long device name is cut the same way in its path and self-test
	 * labels: one device, one name. */
	nfd_device(dev40, dev, NFD_MAX - strlen("gpudirect-gpu99..selftest"));
	snprintf(line, sizeof(line), "gpudirect-gpu0.%s.path=dmabuf\n", dev);
	labels_hold(r, st, 0, line, "a 40-character device's path label");
	snprintf(st[0].nic, sizeof(st[0].nic), "%s", dev40);
	snprintf(line, sizeof(line), "gpudirect-gpu0.%s.selftest=pass\n", dev);
	labels_hold(r, st, 1, line, "a 40-character device's self-test label");
	many_labels(r);
}

int main(void)
{
	char long_in[200], want[NFD_MAX + 1];

	value_is("dmabuf (Data Direct unavailable)", 64, "dmabuf");
	value_is("PIX", 64, "PIX");
	value_is("data-direct", 64, "data-direct");
	value_is("-x-", 64, "x");
	value_is(".abc.", 64, "abc");
	value_is("(none)", 64, "none");
	value_is("_a_b_", 64, "a_b");
	value_is("--", 64, "");
	value_is("", 64, "");
	value_is("a/b:c", 64, "a-b-c");
	value_is("abcdef", 4, "abc");
	value_is("ab-def", 4, "ab");
	memset(long_in, 'v', 100);
	long_in[100] = '\0';
	memset(want, 'v', NFD_MAX);
	want[NFD_MAX] = '\0';
	value_is(long_in, 128, want);
	long_in[NFD_MAX - 1] = '.'; /* the cut ends on a dot: trimmed */
	want[NFD_MAX - 1] = '\0';
	value_is(long_in, 128, want);

	device_is("mlx5_0", NFD_MAX, "mlx5_0");
	device_is("a.b c", NFD_MAX, "a-b-c");
	device_is("node", NFD_MAX, "node");
	memset(long_in, 'x', 30); /* exactly at the limit: kept whole */
	long_in[30] = '\0';
	device_is(long_in, 30, long_in);
	memset(long_in, 'n', 70);
	long_in[70] = '\0';
	nfd_device(long_in, want, 30);
	if (strlen(want) == 30 && !strncmp(want, long_in, 21) &&
	    want[21] == '-')
		passed++;
	else
		failed++, printf("FAIL a long device name: \"%s\"\n", want);

	report_cases();
	printf("nfd-value: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
