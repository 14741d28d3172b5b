/* SPDX-License-Identifier: MIT */
/* The CUDA driver calls the GPU tests make themselves (allocation kinds,
 * contexts), resolved from libcuda.so.1 by their ABI names. */
#ifndef GDR_CUTEST_H
#define GDR_CUTEST_H

#include "cuda-abi.h"

/* X(name, ABI symbol, needed: the tests cannot run without it, params) */
#define CUTEST_FUNCS(X)                                                        \
	X(cuInit, "cuInit", 1, (unsigned int))                                 \
	X(cuDeviceGet, "cuDeviceGet", 1, (CUdevice *, int))                    \
	X(cuDeviceGetCount, "cuDeviceGetCount", 1, (int *))                    \
	X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 1,             \
	  (CUcontext *, CUdevice))                                             \
	X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 1,        \
	  (CUdevice))                                                          \
	X(cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState", 1,         \
	  (CUdevice, unsigned int *, int *))                                   \
	X(cuCtxSetCurrent, "cuCtxSetCurrent", 1, (CUcontext))                  \
	X(cuCtxGetCurrent, "cuCtxGetCurrent", 1, (CUcontext *))                \
	X(cuCtxGetFlags, "cuCtxGetFlags", 1, (unsigned int *))                 \
	X(cuCtxCreate, "cuCtxCreate_v2", 1,                                    \
	  (CUcontext *, unsigned int, CUdevice))                               \
	X(cuCtxDestroy, "cuCtxDestroy_v2", 1, (CUcontext))                     \
	X(cuMemAlloc, "cuMemAlloc_v2", 1, (CUdeviceptr *, size_t))             \
	X(cuMemFree, "cuMemFree_v2", 1, (CUdeviceptr))                         \
	X(cuMemGetInfo, "cuMemGetInfo_v2", 1, (size_t *, size_t *))            \
	X(cuMemAllocHost, "cuMemAllocHost_v2", 1, (void **, size_t))           \
	X(cuMemFreeHost, "cuMemFreeHost", 1, (void *))                         \
	X(cuMemAllocManaged, "cuMemAllocManaged", 1,                           \
	  (CUdeviceptr *, size_t, unsigned int))                               \
	X(cuMemAllocAsync, "cuMemAllocAsync", 1,                               \
	  (CUdeviceptr *, size_t, CUstream))                                   \
	X(cuMemFreeAsync, "cuMemFreeAsync", 1, (CUdeviceptr, CUstream))        \
	X(cuStreamSynchronize, "cuStreamSynchronize", 1, (CUstream))           \
	X(cuMemCreate, "cuMemCreate", 1,                                       \
	  (CUmemGenericAllocationHandle *, size_t,                             \
	   const CUmemAllocationProp *, unsigned long long))                   \
	X(cuMemRelease, "cuMemRelease", 1, (CUmemGenericAllocationHandle))     \
	X(cuMemAddressReserve, "cuMemAddressReserve", 1,                       \
	  (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))    \
	X(cuMemAddressFree, "cuMemAddressFree", 1, (CUdeviceptr, size_t))      \
	X(cuMemMap, "cuMemMap", 1,                                             \
	  (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,          \
	   unsigned long long))                                                \
	X(cuMemUnmap, "cuMemUnmap", 1, (CUdeviceptr, size_t))                  \
	X(cuMemSetAccess, "cuMemSetAccess", 1,                                 \
	  (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t))              \
	X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity", 1,   \
	  (size_t *, const CUmemAllocationProp *,                              \
	   CUmemAllocationGranularity_flags))                                  \
	X(cuPointerGetAttribute, "cuPointerGetAttribute", 1,                   \
	  (void *, CUpointer_attribute, CUdeviceptr))                          \
	X(cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange", 1,   \
	  (void *, CUdeviceptr, size_t, CUmemRangeHandleType,                  \
	   unsigned long long))                                                \
	X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", 1,                                  \
	  (CUdeviceptr, const void *, size_t))                                 \
	X(cuIpcGetMemHandle, "cuIpcGetMemHandle", 1,                           \
	  (CUipcMemHandle *, CUdeviceptr))                                     \
	X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", 1,                      \
	  (CUdeviceptr *, CUipcMemHandle, unsigned int))                       \
	X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", 1, (CUdeviceptr))        \
	X(cuMemExportToShareableHandle, "cuMemExportToShareableHandle", 1,     \
	  (void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType,    \
	   unsigned long long))                                                \
	X(cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle", 1, \
	  (CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType))

struct cutest {
#define CUTEST_MEMBER(n, sym, needed, params) CUresult(*n) params;
	CUTEST_FUNCS(CUTEST_MEMBER)
#undef CUTEST_MEMBER
	CUcontext primary;
	int num_devices;
};

extern struct cutest ct;

/*
 * Load the driver, initialise it and make device 0's primary context
 * current (unless @no_context). Returns 0; 77 with the reason when there is
 * no driver or no GPU (the caller skips); 1 with the reason when a GPU is
 * there but the driver lacks an entry point the tests need (a failure).
 */
int cutest_init(int no_context, char *why, size_t n);

/* A VMM allocation of @size (granularity multiple) on @dev, mapped and
 * accessible, with or without gpuDirectRDMACapable. */
int cutest_vmm_alloc(int dev, size_t size, int rdma_capable, CUdeviceptr *va,
		     CUmemGenericAllocationHandle *h);
/* The same with @types of shareable handle (cuMemExportToShareableHandle). */
int cutest_vmm_alloc_ex(int dev, size_t size, int rdma_capable,
			CUmemAllocationHandleType types, CUdeviceptr *va,
			CUmemGenericAllocationHandle *h);
/* Reserve, map @h (of @size) and give @dev read-write access at *@va. */
int cutest_vmm_map(int dev, size_t size, CUmemGenericAllocationHandle h,
		   CUdeviceptr *va);
void cutest_vmm_free(CUdeviceptr va, size_t size,
		     CUmemGenericAllocationHandle h);

/* For the benchmarks: CLOCK_MONOTONIC in ns, and a qsort comparison of
 * doubles. */
double cutest_now_ns(void);
int cutest_cmp_double(const void *a, const void *b);

#endif
