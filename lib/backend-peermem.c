/* SPDX-License-Identifier: MIT */
/*
 * The peermem backend: ibv_reg_mr on the device pointer, which the kernel
 * resolves through the peer-memory client nvidia-peermem (or MLNX_OFED's
 * nv_peer_mem).
 */
#include <errno.h>

#include "internal.h"

int gdr_peermem_eligible(const struct gdr_node *node, char *why, size_t n)
{
	if (node->peermem_path[0])
		return 0;
	gdr_fmt(why, n,
		"nvidia-peermem is not loaded (none of "
		"/sys/kernel/mm/memory_peers/nv_mem{,_nc}/version, "
		"/sys/module/nvidia_peermem/version, "
		"/sys/module/nv_peer_mem/version exists); run 'modprobe "
		"nvidia-peermem' (GPU Operator: driver.rdma.enabled=true) or "
		"use DMA-BUF");
	return EOPNOTSUPP;
}

static int peermem_eligible(const struct gdr_req *req, char *why, size_t n)
{
	return gdr_peermem_eligible(req->node, why, n);
}

static struct ibv_mr *peermem_reg(const struct gdr_req *req, char *why,
				  size_t n)
{
	const struct gdr_cuda_ops *cu = &req->node->cu;
	unsigned int one = 1;
	char name[64];
	CUresult r;

	if (req->flags & GDR_REG_SYNC_MEMOPS) {
		r = cu->cuPointerSetAttribute(&one,
					      CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
					      (CUdeviceptr)(uintptr_t)req->ptr);
		if (r != CUDA_SUCCESS) {
			gdr_fmt(why, n,
				"cuPointerSetAttribute(SYNC_MEMOPS) failed "
				"with %s (VMM memory does not allow it); "
				"register without GDR_REG_SYNC_MEMOPS",
				gdr_cu_errname(cu, r, name, sizeof(name)));
			errno = gdr_cu_errno(r);
			return NULL;
		}
	}
	return gdr_reg_va(req,
			  "the kernel could not pin the device memory: "
			  "nvidia-peermem is most likely not loaded or not "
			  "bound to this RDMA stack; run 'modprobe "
			  "nvidia-peermem' (GPU Operator: "
			  "driver.rdma.enabled=true, with host MOFED "
			  "driver.rdma.useHostMofed=true)",
			  why, n);
}

const struct gdr_backend gdr_backend_peermem = {
	.path = GDR_PATH_PEERMEM,
	.name = "peermem",
	.device_memory = true,
	.needs = "nvidia-peermem (or nv_peer_mem) loaded",
	.eligible = peermem_eligible,
	.reg = peermem_reg,
};
