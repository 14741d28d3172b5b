/* SPDX-License-Identifier: MIT */
/*
 * A libcuda.so.1 (by file name and soname) for gdr-info's live mode in the
 * doctor tests: a 12.4 driver with one GPU at the PCI address
 * $GDR_FAKE_GPU_BUSID (that of a layout's GPU, whose sysfs --host-root
 * then shows), DMA-BUF and GPUDirect RDMA supported. Only the entry
 * points the library requires, by their ABI names (no cuGetProcAddress:
 * the loader falls back to dlsym). No memory, no contexts; with
 * GDR_FAKE_GPU_MEMORY=1 a primary context and "device memory" that is
 * host memory (for the storage check over the stand-in libcufile, which
 * reads and writes it as such, and for common/devmem's tests: with
 * GDR_FAKE_GPU_COPY_FAIL=1 every copy fails, and fake_cuda_allocations
 * counts the allocations not freed).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;

#define OK 0
#define INVALID_VALUE 1
#define INVALID_DEVICE 101
#define NOT_SUPPORTED 801

#define EXPORT __attribute__((visibility("default")))

/* What libcuda.so.1 exports, as the library calls it (os.h). */
EXPORT CUresult cuInit(unsigned int flags);
EXPORT CUresult cuDriverGetVersion(int *v);
EXPORT CUresult cuDeviceGetCount(int *n);
EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal);
EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d);
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d);
EXPORT CUresult cuDeviceGetPCIBusId(char *busid, int len, CUdevice d);
EXPORT CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p);
EXPORT CUresult cuPointerGetAttributes(unsigned int n, int *attrs, void **data,
				       CUdeviceptr p);
EXPORT CUresult cuPointerSetAttribute(const void *v, int attr, CUdeviceptr p);
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d);
EXPORT CUresult cuCtxGetCurrent(CUcontext *c);
EXPORT CUresult cuCtxGetDevice(CUdevice *d);
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c);
EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *c);
EXPORT CUresult cuMemGetHandleForAddressRange(void *h, CUdeviceptr p,
					      size_t size, int type,
					      unsigned long long flags);

EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return OK;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	*v = 12040;
	return OK;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
	*n = 1;
	return OK;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (ordinal != 0)
		return INVALID_DEVICE;
	*d = 0;
	return OK;
}

/* Every attribute asked is a yes (DMA-BUF, RDMA, RDMA with VMM...). */
EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
	(void)attr;
	if (d != 0)
		return INVALID_DEVICE;
	*v = 1;
	return OK;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	if (d != 0 || len <= 0)
		return INVALID_VALUE;
	snprintf(name, (size_t)len, "Fake GPU");
	return OK;
}

EXPORT CUresult cuDeviceGetPCIBusId(char *busid, int len, CUdevice d)
{
	const char *b = getenv("GDR_FAKE_GPU_BUSID");

	if (d != 0 || len <= 0)
		return INVALID_VALUE;
	snprintf(busid, (size_t)len, "%s", b ? b : "0000:03:00.0");
	return OK;
}

EXPORT CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p)
{
	(void)data, (void)attr, (void)p;
	return INVALID_VALUE;
}

EXPORT CUresult cuPointerGetAttributes(unsigned int n, int *attrs, void **data,
				       CUdeviceptr p)
{
	(void)n, (void)attrs, (void)data, (void)p;
	return INVALID_VALUE;
}

EXPORT CUresult cuPointerSetAttribute(const void *v, int attr, CUdeviceptr p)
{
	(void)v, (void)attr, (void)p;
	return INVALID_VALUE;
}

static int memory(void)
{
	const char *m = getenv("GDR_FAKE_GPU_MEMORY");

	return m && m[0] == '1';
}

static char context; /* the one primary context's handle */

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	if (!memory() || d != 0)
		return NOT_SUPPORTED;
	*c = &context;
	return OK;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d);
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	return d == 0 ? OK : INVALID_DEVICE;
}

/* The context made current (common/devmem's programs do). */
EXPORT CUresult cuCtxSetCurrent(CUcontext c);
EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
	return memory() && c == &context ? OK : INVALID_VALUE;
}

/* What cuMemAlloc gave and cuMemFree has not taken back. */
EXPORT int fake_cuda_allocations;

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	void *m = NULL;

	/* Aligned as device memory is, and as O_DIRECT wants. */
	if (!memory() || posix_memalign(&m, 4096, n))
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	*p = (CUdeviceptr)m;
	fake_cuda_allocations++;
	return OK;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p);
EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	free((void *)p);
	fake_cuda_allocations--;
	return OK;
}

/* GDR_FAKE_GPU_COPY_FAIL=1: every copy fails, as after a GPU fault. */
static int copy_fails(void)
{
	const char *f = getenv("GDR_FAKE_GPU_COPY_FAIL");

	return f && f[0] == '1';
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	if (copy_fails())
		return INVALID_VALUE;
	memcpy((void *)dst, src, n);
	return OK;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	if (copy_fails())
		return INVALID_VALUE;
	memcpy(dst, (const void *)src, n);
	return OK;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
	*c = NULL;
	return OK;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
	(void)d;
	return INVALID_VALUE;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	return memory() && c == &context ? OK : INVALID_VALUE;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
	if (!memory())
		return INVALID_VALUE;
	*c = &context;
	return OK;
}

/* Present, as in every 12.4 driver (the replay's model assumes it). */
EXPORT CUresult cuMemGetHandleForAddressRange(void *h, CUdeviceptr p,
					      size_t size, int type,
					      unsigned long long flags)
{
	(void)h, (void)p, (void)size, (void)type, (void)flags;
	return INVALID_VALUE;
}
