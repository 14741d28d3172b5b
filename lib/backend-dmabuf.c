/* SPDX-License-Identifier: MIT */
/*
 * The DMA-BUF backend: export the page-aligned span around the buffer as a
 * dma-buf with cuMemGetHandleForAddressRange and register it with
 * ibv_reg_dmabuf_mr, offset and iova chosen so that the MR covers exactly
 * [ptr, ptr + len) at virtual address ptr.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int gdr_dmabuf_range(uintptr_t ptr, size_t len, long page,
		     struct gdr_dmabuf_range *r)
{
	uintptr_t mask = (uintptr_t)page - 1;
	uintptr_t end;

	if (page <= 0 || (mask & (uintptr_t)page) || len == 0 ||
	    ptr > UINTPTR_MAX - len || ptr + len > UINTPTR_MAX - mask) {
		errno = EINVAL;
		return -1;
	}
	r->base = ptr & ~mask;
	end = (ptr + len + mask) & ~mask;
	r->size = end - r->base;
	r->offset = ptr - r->base;
	return 0;
}

int gdr_dmabuf_eligible(const struct gdr_node *node, const struct gdr_dev *dev,
			const struct gdr_nic *nic, char *why, size_t n)
{
	if (!node->cu.cuMemGetHandleForAddressRange ||
	    node->driver_version < 11070) {
		gdr_fmt(why, n,
			"the CUDA driver API is %d.%d, older than 11.7 which "
			"added DMA-BUF export; upgrade the NVIDIA driver (R515 "
			"or newer) or load nvidia-peermem",
			node->driver_version / 1000,
			node->driver_version % 1000 / 10);
		return EOPNOTSUPP;
	}
	if (node->kernel_ok == GDR_NO) {
		gdr_fmt(why, n,
			"kernel %s is older than 5.12, the first with DMA-BUF "
			"memory regions; upgrade the kernel or load "
			"nvidia-peermem",
			node->kernel_release);
		return EOPNOTSUPP;
	}
	if (node->nv_flavour == GDR_NV_PROPRIETARY) {
		gdr_fmt(why, n,
			"the NVIDIA driver %s is the proprietary kernel module, "
			"which cannot export DMA-BUF; install the open kernel "
			"module (GPU Operator: --set "
			"driver.kernelModuleType=open) or load nvidia-peermem",
			node->nv_version);
		return EOPNOTSUPP;
	}
	if (!dev || dev->dmabuf_attr != 1) {
		gdr_fmt(why, n,
			"GPU %d (%s) reports CU_DEVICE_ATTRIBUTE_DMA_BUF_"
			"SUPPORTED=0; this GPU or driver cannot export "
			"DMA-BUF: use the open kernel module on a Turing or "
			"newer data-center GPU, or load nvidia-peermem",
			dev ? dev->ordinal : -1, dev ? dev->name : "unknown");
		return EOPNOTSUPP;
	}
	if (!node->verbs_dmabuf) {
		gdr_fmt(why, n,
			"the loaded libibverbs has no ibv_reg_dmabuf_mr "
			"(rdma-core older than v34); upgrade rdma-core or load "
			"nvidia-peermem");
		return EOPNOTSUPP;
	}
	if (nic && nic->dmabuf == GDR_NO) {
		gdr_fmt(why, n,
			"RDMA device %s does not support DMA-BUF memory "
			"regions (ibv_reg_dmabuf_mr answered %s); use a device "
			"and kernel driver with DMA-BUF support (mlx5, efa, "
			"irdma, bnxt_re) or load nvidia-peermem",
			nic->name, gdr_errno_name(nic->err));
		return EOPNOTSUPP;
	}
	return 0;
}

static int dmabuf_eligible(const struct gdr_req *req, char *why, size_t n)
{
	return gdr_dmabuf_eligible(req->node, gdr_dev_get(req->pi.device),
				   gdr_nic_get(req->pd), why, n);
}

/* Export [r->base, +r->size) with @ctx current; the caller's is restored. */
static CUresult export_range(const struct gdr_cuda_ops *cu, CUcontext ctx,
			     const struct gdr_dmabuf_range *r, int *fd,
			     const char **step)
{
	CUcontext cur = NULL, popped;
	CUresult res, pop;
	bool pushed = false;

	*step = "cuCtxGetCurrent";
	res = cu->cuCtxGetCurrent(&cur);
	if (res != CUDA_SUCCESS)
		return res;
	if (cur != ctx) {
		*step = "cuCtxPushCurrent";
		res = cu->cuCtxPushCurrent(ctx);
		if (res != CUDA_SUCCESS)
			return res;
		pushed = true;
	}
	*step = "cuMemGetHandleForAddressRange";
	res = cu->cuMemGetHandleForAddressRange(
		fd, (CUdeviceptr)r->base, r->size,
		CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (pushed) {
		pop = cu->cuCtxPopCurrent(&popped);
		if (pop != CUDA_SUCCESS && res == CUDA_SUCCESS) {
			*step = "cuCtxPopCurrent";
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
			res = pop;
		}
	}
	return res;
}

static struct ibv_mr *dmabuf_reg(const struct gdr_req *req, char *why,
				 size_t n)
{
	const struct gdr_seam *s = gdr_seam();
	const struct gdr_cuda_ops *cu = &req->node->cu;
	struct gdr_dmabuf_range r;
	struct gdr_dev *dev;
	const char *step;
	CUcontext ctx = req->pi.ctx;
	struct ibv_mr *mr;
	char name[64];
	CUresult res;
	int fd = -1, err;

	if (gdr_dmabuf_range((uintptr_t)req->ptr, req->len,
			     req->node->page_size, &r)) {
		gdr_fmt(why, n, "[%p, +%zu) overflows the address space",
			req->ptr, req->len);
		return NULL;
	}
	/* VMM memory has no owning context: use the device's primary one. */
	if (!ctx) {
		dev = gdr_dev_get(req->pi.device);
		err = dev ? gdr_dev_primary_ctx(dev, &ctx, why, n) : ENODEV;
		if (err) {
			if (!dev)
				gdr_fmt(why, n, "GPU %d is not visible",
					req->pi.device);
			errno = err;
			return NULL;
		}
	}
	res = export_range(cu, ctx, &r, &fd, &step);
	if (res != CUDA_SUCCESS) {
		gdr_fmt(why, n,
			"%s(0x%lx, %zu) failed with %s%s", step,
			(unsigned long)r.base, r.size,
			gdr_cu_errname(cu, res, name, sizeof(name)),
			res == CUDA_ERROR_INVALID_VALUE
				? ": the page-aligned span is not one "
				  "cuMemAlloc allocation or a fully mapped "
				  "VMM range; register memory from "
				  "cuMemAlloc/cudaMalloc, or VMM memory "
				  "created with gpuDirectRDMACapable"
				: "");
		errno = gdr_cu_errno(res);
		return NULL;
	}
	errno = 0;
	mr = s->verbs.reg_dmabuf_mr(req->pd, r.offset, req->len,
				    (uintptr_t)req->ptr, fd, req->access);
	err = errno ? errno : EIO;
	/* The MR holds its own reference to the dma-buf. */
	if (close(fd))
		gdr_debug("close(dma-buf fd %d) failed: %s", fd,
			  strerror(errno));
	if (!mr) {
		gdr_fmt(why, n,
			"ibv_reg_dmabuf_mr(offset %llu, %zu bytes) on %s failed "
			"with %s (%s)",
			(unsigned long long)r.offset, req->len,
			gdr_pd_name(req->pd),
			gdr_errno_name(err), strerror(err));
		errno = err;
		return NULL;
	}
	/* libibverbs leaves the dma-buf offset in addr; callers expect ptr. */
	mr->addr = req->ptr;
	return mr;
}

const struct gdr_backend gdr_backend_dmabuf = {
	.path = GDR_PATH_DMABUF,
	.name = "dmabuf",
	.device_memory = true,
	.needs = "open NVIDIA kernel module, kernel >= 5.12, CUDA driver API "
		 ">= 11.7, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED on the GPU, "
		 "ibv_reg_dmabuf_mr in libibverbs and DMA-BUF MR support in "
		 "the RDMA device",
	.eligible = dmabuf_eligible,
	.reg = dmabuf_reg,
};
