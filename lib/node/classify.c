/* SPDX-License-Identifier: MIT */
/*
 * What a pointer refers to, asked of the CUDA driver in one call and
 * without side effects: a process that has not loaded libcuda.so.1 has no
 * device memory, and the driver answering "not initialised" or "not a CUDA
 * pointer" means host memory. Nothing here loads the driver or calls cuInit.
 */
#include <errno.h>
#include <string.h>

#include "node.h"

enum {
	A_TYPE,
	A_ORDINAL,
	A_MANAGED,
	A_CONTEXT,
	A_START,
	A_SIZE,
	A_BUFFER_ID,
	A_POOL, /* only asked of drivers >= 11.3 */
	A_RDMA, /* likewise */
	A_IPC,	/* likewise */
	A_COUNT
};

/* The checks on device memory once the driver has described it. */
static int check_device(void *ptr, size_t len, unsigned int rdma,
			unsigned int ipc, bool vouched, struct gdr_ptr_info *pi,
			char *why, size_t n)
{
	uintptr_t p = (uintptr_t)ptr, start = pi->range_start;
	size_t size = pi->range_size;

	if (pi->type == GDR_MEM_CUDA_MANAGED) {
		gdr_fmt(why, n,
			"%p is CUDA managed memory, which GPUDirect RDMA "
			"cannot register (it migrates); allocate the buffer "
			"with cuMemAlloc/cudaMalloc instead",
			ptr);
		return EINVAL;
	}
	/*
	 * The driver's own word decides: VMM memory made without
	 * gpuDirectRDMACapable exports anyway (seen on an H200), but NVIDIA
	 * requires the flag; pool memory is registrable only where the
	 * driver marks it capable.
	 */
	if (!rdma && pi->type == GDR_MEM_CUDA_POOL) {
		gdr_fmt(why, n,
			"%p comes from a stream-ordered memory pool "
			"(cuMemAllocAsync/cudaMallocAsync) whose memory the "
			"driver does not mark GPUDirect RDMA capable "
			"(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE=0); "
			"allocate the buffer with cuMemAlloc/cudaMalloc",
			ptr);
		return EINVAL;
	}
	/*
	 * Memory of a context that is neither RDMA nor IPC capable is what
	 * cuIpcOpenMemHandle maps in an importer (measured on the H100:
	 * the owner's cuMemAlloc reads 1 and 1). Only the owner can export
	 * it.
	 */
	if (!rdma && pi->ctx && !ipc) {
		gdr_fmt(why, n,
			"%p is CUDA IPC memory another process owns (mapped "
			"with cuIpcOpenMemHandle: the driver marks it neither "
			"GPUDirect RDMA nor IPC capable here), and only its "
			"owner can export it: register it in the owning "
			"process, or have the owner export it with "
			"gdr_export() and register that here with "
			"gdr_import_register()",
			ptr);
		return EINVAL;
	}
	/* VMM memory: made without the flag, or imported from another
	 * process (whose flags do not travel). The caller may vouch. */
	if (!rdma && !pi->ctx && !vouched) {
		gdr_fmt(why, n,
			"%p is VMM memory the driver does not mark GPUDirect "
			"RDMA capable (IS_GPU_DIRECT_RDMA_CAPABLE=0): either it "
			"was created without allocFlags.gpuDirectRDMACapable=1 "
			"(create it with the flag, on a GPU that supports "
			"GPUDirect RDMA), or it was imported from another "
			"process (cuMemImportFromShareableHandle), whose flags "
			"do not travel: have the owner export it with "
			"gdr_export() and register that with "
			"gdr_import_register(), or, if the owner created it "
			"with the flag, pass GDR_REG_OWNER_RDMA_CAPABLE",
			ptr);
		return EINVAL;
	}
	if (!rdma && pi->ctx) {
		gdr_fmt(why, n,
			"%p is device memory that is not GPUDirect RDMA capable "
			"(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE=0): "
			"allocate it on a GPU that supports GPUDirect RDMA "
			"(gdr-info)",
			ptr);
		return EINVAL;
	}
	/*
	 * Memory of a context (cuMemAlloc, pools) must stay inside its
	 * allocation: the driver exports two adjacent allocations as one
	 * dma-buf, and an MR across both would outlive the free of either.
	 * A VMM range has no context; the driver's range attribute for it
	 * is the whole reservation, holes and all (the conformance record),
	 * so the export alone judges it (it refuses a range not fully
	 * mapped).
	 */
	if (pi->ctx && start && size &&
	    (p < start || p - start > size || len > size - (p - start))) {
		gdr_fmt(why, n,
			"[%p, +%zu) runs past the end of its CUDA allocation "
			"[0x%llx, +%zu); register at most the allocation",
			ptr, len, (unsigned long long)start, size);
		return EINVAL;
	}
	return 0;
}

int gdr_classify(void *ptr, size_t len, bool vouched, struct gdr_ptr_info *pi,
		 char *why, size_t n)
{
	CUpointer_attribute attrs[A_COUNT] = {
		[A_TYPE] = CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		[A_ORDINAL] = CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		[A_MANAGED] = CU_POINTER_ATTRIBUTE_IS_MANAGED,
		[A_CONTEXT] = CU_POINTER_ATTRIBUTE_CONTEXT,
		[A_START] = CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		[A_SIZE] = CU_POINTER_ATTRIBUTE_RANGE_SIZE,
		[A_BUFFER_ID] = CU_POINTER_ATTRIBUTE_BUFFER_ID,
		[A_POOL] = CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
		[A_RDMA] = CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
		[A_IPC] = CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
	};
	const struct gdr_cuda_lib *lib = gdr_cuda_table();
	unsigned int type = 0, managed = 0, rdma = 1, ipc = 1;
	unsigned long long buffer_id = 0;
	int ordinal = -1;
	CUcontext ctx = NULL;
	CUdeviceptr start = 0;
	size_t size = 0;
	void *pool = NULL;
	void *data[A_COUNT] = {
		[A_TYPE] = &type,	    [A_ORDINAL] = &ordinal,
		[A_MANAGED] = &managed,	    [A_CONTEXT] = &ctx,
		[A_START] = &start,	    [A_SIZE] = &size,
		[A_BUFFER_ID] = &buffer_id, [A_POOL] = &pool,
		[A_RDMA] = &rdma,	    [A_IPC] = &ipc,
	};
	char name[64];
	CUresult r;

	memset(pi, 0, sizeof(*pi));
	pi->type = GDR_MEM_HOST;
	pi->device = -1;
	if (!lib) {
		pi->host_why = GDR_HOST_NO_CUDA;
		return 0;
	}
	r = lib->cu.cuPointerGetAttributes(
		lib->driver_version >= 11030 ? A_COUNT : A_POOL, attrs, data,
		(CUdeviceptr)(uintptr_t)ptr);
	/* No side effects: a driver this process has not initialised (or
	 * a child forked after its parent did) has no device memory. */
	if (r == CUDA_ERROR_NOT_INITIALIZED) {
		pi->host_why = GDR_HOST_NOT_INITIALIZED;
		return 0;
	}
	/* Not a pointer the driver knows (malloc memory on the H200). */
	if (r == CUDA_ERROR_INVALID_VALUE) {
		pi->host_why = GDR_HOST_NOT_CUDA;
		return 0;
	}
	if (r != CUDA_SUCCESS) {
		/* Not classified: the record must not call it host memory. */
		pi->type = GDR_MEM_UNKNOWN;
		gdr_fmt(why, n,
			"cuPointerGetAttributes(%p) failed with %s; the CUDA "
			"driver could not classify the buffer: check the "
			"driver (nvidia-smi) and that CUDA is usable here",
			ptr, gdr_cu_errname(&lib->cu, r, name, sizeof(name)));
		return gdr_cu_errno(r);
	}
	pi->ctx = ctx;
	pi->range_start = (uintptr_t)start;
	pi->range_size = size;
	pi->buffer_id = buffer_id;
	switch (type) {
	case 0: /* not known to CUDA: ordinary host memory */
		pi->host_why = GDR_HOST_NOT_CUDA;
		return 0;
	case CU_MEMORYTYPE_HOST:
		if (!managed) {
			pi->type = GDR_MEM_CUDA_HOST;
			pi->host_why = GDR_HOST_CUDA_HOST;
			return 0;
		}
		pi->type = GDR_MEM_CUDA_MANAGED;
		break;
	case CU_MEMORYTYPE_DEVICE:
		pi->type = managed ? GDR_MEM_CUDA_MANAGED
			   : pool  ? GDR_MEM_CUDA_POOL
				   : GDR_MEM_CUDA_DEVICE;
		pi->device = ordinal;
		break;
	default:
		gdr_fmt(why, n,
			"%p is CUDA memory of type %u (array or unified), "
			"which cannot be registered; register memory from "
			"cuMemAlloc/cudaMalloc or host memory",
			ptr, type);
		return EINVAL;
	}
	return check_device(ptr, len, rdma, ipc, vouched, pi, why, n);
}
