/* SPDX-License-Identifier: MIT */
/*
 * gdr-info: is GPUDirect RDMA usable on this node, and if not, what to
 * change. Prints the library's report for every RDMA device.
 *
 *   gdr-info [--json] [-d DEVICE]
 *
 * Exit status: 0 usable on at least one GPU x RDMA device pair, 1 not
 * usable, 2 internal error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpudirect.h>

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	enum gdr_report_format fmt = GDR_REPORT_TEXT;
	struct ibv_context **ctxs = NULL;
	struct ibv_device **list;
	struct gdr_report *report;
	const char *want = NULL;
	unsigned int nctx = 0, i;
	int n = 0, c, ret;

	while ((c = getopt_long(argc, argv, "jd:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': fmt = GDR_REPORT_JSON; break;
		case 'd': want = optarg; break;
		default:
			fprintf(stderr, "usage: %s [--json] [-d DEVICE]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}

	list = ibv_get_device_list(&n);
	if (n > 0) {
		ctxs = calloc((size_t)n, sizeof(*ctxs));
		if (!ctxs) {
			perror("gdr-info");
			return 2;
		}
	}
	for (c = 0; c < n; c++) {
		const char *name = ibv_get_device_name(list[c]);

		if (want && strcmp(name, want))
			continue;
		ctxs[nctx] = ibv_open_device(list[c]);
		if (!ctxs[nctx])
			fprintf(stderr, "gdr-info: cannot open %s: %s\n", name,
				strerror(errno));
		else
			nctx++;
	}
	if (want && !nctx)
		fprintf(stderr, "gdr-info: RDMA device %s not found\n", want);

	report = gdr_report_create(ctxs, nctx, 0);
	if (!report) {
		fprintf(stderr, "gdr-info: %s\n", gdr_last_error());
		ret = 2;
	} else {
		ret = gdr_report_print(report, stdout, fmt) ? 2
		      : gdr_report_usable(report)	 ? 0
							 : 1;
		gdr_report_destroy(report);
	}
	for (i = 0; i < nctx; i++)
		ibv_close_device(ctxs[i]);
	free(ctxs);
	if (list)
		ibv_free_device_list(list);
	return ret;
}
