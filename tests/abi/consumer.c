/* SPDX-License-Identifier: MIT */
/* A program that knows libgpudirect only through pkg-config. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gpudirect.h>

int main(void)
{
	struct gdr_report *r;
	char buf[64];

	errno = 0;
	if (gdr_register(NULL, buf, sizeof(buf)) != NULL || errno != EINVAL ||
	    !strstr(gdr_last_error(), "pd is NULL")) {
		fprintf(stderr, "consumer: unexpected answer to a NULL pd\n");
		return 1;
	}
	r = gdr_report_create(NULL, 0, 0);
	if (!r) {
		fprintf(stderr, "consumer: %s\n", gdr_last_error());
		return 1;
	}
	printf("consumer: report with %u items, usable=%d\n",
	       gdr_report_num_items(r), gdr_report_usable(r));
	gdr_report_destroy(r);
	return 0;
}
