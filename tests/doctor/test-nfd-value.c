/* SPDX-License-Identifier: MIT */
/*
 * gdr-info --nfd's label parts (tools/gdr-info/nfd.c), from both sides:
 * a value is the first word of what the report says, in NFD's characters,
 * beginning and ending alphanumeric, at most 63 characters and never past
 * its buffer; a device name keeps [A-Za-z0-9_-], and one too long keeps its
 * start and a hash of the whole.
 */
#include <stdio.h>
#include <string.h>

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

	printf("nfd-value: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
