/* SPDX-License-Identifier: MIT */
/*
 * The peermem backend: ibv_reg_mr on the device pointer, which the kernel
 * resolves through the peer-memory client nvidia-peermem (or MLNX_OFED's
 * nv_peer_mem).
 */
#include "backends.h"

static struct ibv_mr *peermem_reg(const struct gdr_req *req, char *why,
				  size_t n)
{
	char efault[512];

	/* Eligible means the module's marker is there, so an EFAULT has
	 * another cause than a missing module. */
	gdr_fmt(efault, sizeof(efault),
		"nvidia-peermem is loaded (%s) but the kernel could not pin "
		"the device memory: the module may be bound to another RDMA "
		"stack than this device's (inbox rdma-core against "
		"MLNX_OFED: load the nvidia-peermem built for the running "
		"stack; GPU Operator with host MOFED: "
		"driver.rdma.useHostMofed=true), or the memory cannot be "
		"pinned (freed meanwhile, or not GPUDirect RDMA capable)",
		req->node->peermem_path);
	return gdr_reg_va(req, efault, why, n);
}

static const struct gdr_check *const peermem_needs[] = {
	&gdr_check_peermem,
	NULL,
};

const struct gdr_backend gdr_backend_peermem = {
	.path = GDR_PATH_PEERMEM,
	.title = "nvidia-peermem",
	.device_memory = true,
	.needs = peermem_needs,
	.reg = peermem_reg,
};
