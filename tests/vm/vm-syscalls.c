/* SPDX-License-Identifier: MIT */
/*
 * Steady-state system calls of one registration: after a warm-up call,
 * N register+deregister pairs between two close(-1) markers, through
 * gdr_register or a bare ibv_reg_mr. Run under strace by bench-vm.sh.
 *   vm-syscalls gdr|ibv N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpudirect.h>

int main(int argc, char **argv)
{
	const size_t len = 1 << 20;
	int gdr = argc > 1 && !strcmp(argv[1], "gdr");
	int n = argc > 2 ? atoi(argv[2]) : 100, i;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	void *buf;

	list = ibv_get_device_list(NULL);
	if (!list || !list[0]) {
		fprintf(stderr, "no RDMA device\n");
		return 77;
	}
	ctx = ibv_open_device(list[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = aligned_alloc(4096, len);
	if (!pd || !buf)
		return 1;
	memset(buf, 0, len);
	/* Warm-up: the first call probes. */
	mr = gdr ? gdr_register(pd, buf, len)
		 : ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return 1;
	ibv_dereg_mr(mr);
	close(-1);
	for (i = 0; i < n; i++) {
		mr = gdr ? gdr_register(pd, buf, len)
			 : ibv_reg_mr(pd, buf, len,
				      IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE |
					      IBV_ACCESS_REMOTE_READ);
		if (!mr)
			return 1;
		if (gdr ? gdr_deregister(mr) : ibv_dereg_mr(mr))
			return 1;
	}
	close(-1);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
