/* SPDX-License-Identifier: MIT */
/* What a pointer refers to, asked of the CUDA driver in one call. */
#include <errno.h>
#include <string.h>

#include "internal.h"

enum {
	A_TYPE,
	A_ORDINAL,
	A_MANAGED,
	A_CONTEXT,
	A_START,
	A_SIZE,
	A_POOL, /* only asked of drivers >= 11.3 */
	A_RDMA, /* likewise */
	A_COUNT
};

int gdr_classify(const struct gdr_node *node, void *ptr, size_t len,
		 struct gdr_ptr_info *pi)
{
	CUpointer_attribute attrs[A_COUNT] = {
		[A_TYPE] = CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		[A_ORDINAL] = CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		[A_MANAGED] = CU_POINTER_ATTRIBUTE_IS_MANAGED,
		[A_CONTEXT] = CU_POINTER_ATTRIBUTE_CONTEXT,
		[A_START] = CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		[A_SIZE] = CU_POINTER_ATTRIBUTE_RANGE_SIZE,
		[A_POOL] = CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
		[A_RDMA] = CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
	};
	unsigned int type = 0, managed = 0, rdma = 1;
	int ordinal = -1;
	CUcontext ctx = NULL;
	CUdeviceptr start = 0;
	size_t size = 0;
	void *pool = NULL;
	void *data[A_COUNT] = {
		[A_TYPE] = &type,     [A_ORDINAL] = &ordinal,
		[A_MANAGED] = &managed, [A_CONTEXT] = &ctx,
		[A_START] = &start,   [A_SIZE] = &size,
		[A_POOL] = &pool,     [A_RDMA] = &rdma,
	};
	unsigned int n = node->driver_version >= 11030 ? A_COUNT : A_POOL;
	uintptr_t p = (uintptr_t)ptr;
	char name[64];
	CUresult r;

	memset(pi, 0, sizeof(*pi));
	pi->type = GDR_MEM_HOST;
	pi->device = -1;
	if (!node->cuda_ok)
		return 0;

	r = node->cu.cuPointerGetAttributes(n, attrs, data, (CUdeviceptr)p);
	if (r != CUDA_SUCCESS) {
		gdr_fail(gdr_cu_errno(r),
			 "cuPointerGetAttributes(%p) failed with %s; the CUDA "
			 "driver could not classify the buffer",
			 ptr, gdr_cu_errname(&node->cu, r, name, sizeof(name)));
		return -1;
	}
	pi->ctx = ctx;
	pi->range_start = (uintptr_t)start;
	pi->range_size = size;
	switch (type) {
	case 0: /* not known to CUDA: ordinary host memory */
		return 0;
	case CU_MEMORYTYPE_HOST:
		pi->type = managed ? GDR_MEM_CUDA_MANAGED : GDR_MEM_CUDA_HOST;
		break;
	case CU_MEMORYTYPE_DEVICE:
		pi->type = managed ? GDR_MEM_CUDA_MANAGED
			 : pool	   ? GDR_MEM_CUDA_POOL
				   : GDR_MEM_CUDA_DEVICE;
		pi->device = ordinal;
		break;
	default:
		gdr_fail(EINVAL,
			 "%p is CUDA memory of type %u (array or unified), "
			 "which cannot be registered; register memory from "
			 "cuMemAlloc/cudaMalloc or host memory",
			 ptr, type);
		return -1;
	}
	if (pi->type == GDR_MEM_CUDA_MANAGED) {
		gdr_fail(EINVAL,
			 "%p is CUDA managed memory, which GPUDirect RDMA "
			 "cannot register (it migrates); allocate the buffer "
			 "with cuMemAlloc/cudaMalloc instead",
			 ptr);
		return -1;
	}
	if (pi->type == GDR_MEM_CUDA_POOL) {
		gdr_fail(EINVAL,
			 "%p comes from a stream-ordered memory pool "
			 "(cuMemAllocAsync/cudaMallocAsync), which this "
			 "library does not register; allocate the buffer with "
			 "cuMemAlloc/cudaMalloc instead",
			 ptr);
		return -1;
	}
	/*
	 * VMM memory made without gpuDirectRDMACapable still exports (seen on
	 * an H200), but NVIDIA requires the flag for GPUDirect RDMA.
	 */
	if (pi->type == GDR_MEM_CUDA_DEVICE && !rdma) {
		gdr_fail(EINVAL,
			 "%p is device memory that is not GPUDirect RDMA capable "
			 "(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE=0): "
			 "create VMM memory with allocFlags.gpuDirectRDMACapable"
			 "=1 (cuMemCreate), on a GPU that supports GPUDirect "
			 "RDMA (gdr-info)",
			 ptr);
		return -1;
	}
	/* Device memory must stay inside the allocation the driver knows. */
	if (pi->type == GDR_MEM_CUDA_DEVICE && start && size &&
	    (p < (uintptr_t)start || p - (uintptr_t)start > size ||
	     len > size - (p - (uintptr_t)start))) {
		gdr_fail(EINVAL,
			 "[%p, +%zu) runs past the end of its CUDA allocation "
			 "[0x%llx, +%zu); register at most the allocation",
			 ptr, len, (unsigned long long)start, size);
		return -1;
	}
	return 0;
}
