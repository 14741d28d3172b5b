/* SPDX-License-Identifier: MIT */
/*
 * gdr-register-one: the smallest complete use of libgpudirect. Open an
 * RDMA device, allocate a buffer (host or GPU), register it with one call,
 * print what was chosen and why, and release everything.
 *
 *   gdr-register-one [-d DEVICE] [--mem host|cuda[:N]] [-s BYTES]
 *
 * Exit status: 0 registered, 1 registration failed, 2 a usage error, 77 no
 * RDMA device.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpudirect.h>

#include "count.h"
#include "devmem.h"

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "mem", required_argument, NULL, 'm' },
		{ "size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *want = NULL, *mem = "host";
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct gdr_reg_info info = { 0 };
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct devmem buf;
	size_t len = 1 << 20;
	unsigned long long v;
	char err[256];
	unsigned int i;
	int n, c, ret = 1;

	while ((c = getopt_long(argc, argv, "d:m:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': want = optarg; break;
		case 'm': mem = optarg; break;
		case 's':
			/* Decimal digits only: "1M" is refused, not 1 byte. */
			if (count_parse(optarg, SIZE_MAX, &v)) {
				fprintf(stderr,
					"%s: -s takes a byte count (decimal "
					"digits, more than 0), not '%s'\n",
					argv[0], optarg);
				return 2;
			}
			len = (size_t)v;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-d DEVICE] [--mem "
				"host|cuda[:N]] [-s BYTES]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}

	/* 1. An RDMA device and a protection domain, as for ibv_reg_mr. */
	list = ibv_get_device_list(&n);
	for (c = 0; list && c < n && !ctx; c++)
		if (!want || strcmp(ibv_get_device_name(list[c]), want) == 0)
			ctx = ibv_open_device(list[c]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "gdr-register-one: %s\n",
			want ? "that RDMA device was not found or not opened"
			     : "no RDMA device on this machine (see gdr-info)");
		return 77;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		perror("ibv_alloc_pd");
		goto close;
	}

	/* 2. The buffer: host memory, or device memory on a GPU. */
	if (devmem_alloc(mem, len, &buf, err, sizeof(err))) {
		fprintf(stderr, "gdr-register-one: %s\n", err);
		goto pd;
	}

	/* 3. One call; the decision record says which path and why. */
	mr = gdr_register_ex(pd, buf.ptr, len, NULL, &info, sizeof(info));
	if (!mr) {
		fprintf(stderr, "gdr-register-one: %s\n", gdr_last_error());
	} else {
		printf("registered %zu bytes of %s memory on %s through %s: "
		       "lkey 0x%x rkey 0x%x addr %p\n",
		       len, gdr_mem_type_str(info.mem_type),
		       ibv_get_device_name(ctx->device),
		       gdr_path_str(info.path), mr->lkey, mr->rkey, mr->addr);
		ret = 0;
	}
	for (i = 0; i < info.num_attempts; i++)
		printf("  %-8s %s%s%s\n", gdr_path_str(info.attempts[i].path),
		       info.attempts[i].result == GDR_ATTEMPT_USED ? "used"
		       : info.attempts[i].result == GDR_ATTEMPT_FAILED
			       ? "failed"
			       : "skipped",
		       info.attempts[i].reason[0] ? ": " : "",
		       info.attempts[i].reason);

	/* 4. Release in reverse order. */
	if (mr && gdr_deregister(mr)) {
		fprintf(stderr, "gdr-register-one: %s\n", gdr_last_error());
		ret = 1;
	}
	devmem_free(&buf);
pd:
	ibv_dealloc_pd(pd);
close:
	ibv_close_device(ctx);
	return ret;
}
