/* SPDX-License-Identifier: MIT */
/* The CUDA driver calls the GPU tests make themselves (allocation kinds,
 * contexts), resolved from libcuda.so.1 by their ABI names. */
#ifndef GDR_CUTEST_H
#define GDR_CUTEST_H

#include "cuda-abi.h"

#define CUTEST_FUNCS(X)                                                        \
	X(cuInit, "cuInit", (unsigned int))                                    \
	X(cuDeviceGet, "cuDeviceGet", (CUdevice *, int))                       \
	X(cuDeviceGetCount, "cuDeviceGetCount", (int *))                       \
	X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                \
	  (CUcontext *, CUdevice))                                             \
	X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                     \
	X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext *))                   \
	X(cuCtxCreate, "cuCtxCreate_v2", (CUcontext *, unsigned int, CUdevice)) \
	X(cuCtxDestroy, "cuCtxDestroy_v2", (CUcontext))                        \
	X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                \
	X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                            \
	X(cuMemAllocHost, "cuMemAllocHost_v2", (void **, size_t))              \
	X(cuMemFreeHost, "cuMemFreeHost", (void *))                            \
	X(cuMemAllocManaged, "cuMemAllocManaged",                              \
	  (CUdeviceptr *, size_t, unsigned int))                               \
	X(cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr *, size_t, CUstream)) \
	X(cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr, CUstream))           \
	X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream))              \
	X(cuMemCreate, "cuMemCreate",                                          \
	  (CUmemGenericAllocationHandle *, size_t,                             \
	   const CUmemAllocationProp *, unsigned long long))                   \
	X(cuMemRelease, "cuMemRelease", (CUmemGenericAllocationHandle))        \
	X(cuMemAddressReserve, "cuMemAddressReserve",                          \
	  (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))    \
	X(cuMemAddressFree, "cuMemAddressFree", (CUdeviceptr, size_t))         \
	X(cuMemMap, "cuMemMap",                                                \
	  (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,          \
	   unsigned long long))                                                \
	X(cuMemUnmap, "cuMemUnmap", (CUdeviceptr, size_t))                     \
	X(cuMemSetAccess, "cuMemSetAccess",                                    \
	  (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t))              \
	X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity",      \
	  (size_t *, const CUmemAllocationProp *,                              \
	   CUmemAllocationGranularity_flags))                                  \
	X(cuPointerGetAttribute, "cuPointerGetAttribute",                      \
	  (void *, CUpointer_attribute, CUdeviceptr))                          \
	X(cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange",      \
	  (void *, CUdeviceptr, size_t, CUmemRangeHandleType,                  \
	   unsigned long long))

struct cutest {
#define CUTEST_MEMBER(n, sym, params) CUresult(*n) params;
	CUTEST_FUNCS(CUTEST_MEMBER)
#undef CUTEST_MEMBER
	CUcontext primary;
	int num_devices;
};

extern struct cutest ct;

/*
 * Load the driver, initialise it and make device 0's primary context
 * current. Returns 0, or -1 with the reason (the caller skips with 77).
 */
int cutest_init(char *why, size_t n);

/* A VMM allocation of @size (granularity multiple) on @dev, mapped and
 * accessible, with or without gpuDirectRDMACapable. */
int cutest_vmm_alloc(int dev, size_t size, int rdma_capable, CUdeviceptr *va,
		     CUmemGenericAllocationHandle *h);
void cutest_vmm_free(CUdeviceptr va, size_t size,
		     CUmemGenericAllocationHandle h);

#endif
