/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cutest.h"

struct cutest ct;

int cutest_init(int no_context, char *why, size_t n)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	char missing[512] = "";
	CUdevice dev;
	CUresult r;

	if (!lib) {
		snprintf(why, n, "no CUDA driver: libcuda.so.1 not found (%s)",
			 dlerror());
		return 77;
	}
#define CUTEST_LOAD(name, sym, needed, params)                                 \
	*(void **)&ct.name = dlsym(lib, sym);                                  \
	if (!ct.name && needed)                                                \
		snprintf(missing + strlen(missing),                            \
			 sizeof(missing) - strlen(missing), " %s", sym);
	CUTEST_FUNCS(CUTEST_LOAD)
#undef CUTEST_LOAD
	if (!ct.cuInit || !ct.cuDeviceGetCount) {
		snprintf(why, n,
			 "libcuda.so.1 lacks cuInit or cuDeviceGetCount: "
			 "a broken driver installation");
		return 1;
	}
	r = ct.cuInit(0);
	if (r != CUDA_SUCCESS) {
		snprintf(why, n, "no usable GPU: cuInit failed with %d", r);
		return 77;
	}
	if (ct.cuDeviceGetCount(&ct.num_devices) || ct.num_devices < 1) {
		snprintf(why, n, "no GPU: cuDeviceGetCount found none");
		return 77;
	}
	/* A GPU is here: a missing entry point is a failure, not a skip. */
	if (missing[0]) {
		snprintf(why, n,
			 "a GPU is present but libcuda.so.1 lacks what "
			 "the tests need:%s (driver too old?)",
			 missing);
		return 1;
	}
	if (no_context)
		return 0;
	if (ct.cuDeviceGet(&dev, 0) ||
	    ct.cuDevicePrimaryCtxRetain(&ct.primary, dev) ||
	    ct.cuCtxSetCurrent(ct.primary)) {
		snprintf(why, n, "GPU 0 has no usable primary context");
		return 1;
	}
	return 0;
}

int cutest_vmm_map(int dev, size_t size, CUmemGenericAllocationHandle h,
		   CUdeviceptr *va)
{
	CUmemAccessDesc acc;

	if (ct.cuMemAddressReserve(va, size, 0, 0, 0))
		return -1;
	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = dev;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if (ct.cuMemMap(*va, size, 0, h, 0) ||
	    ct.cuMemSetAccess(*va, size, &acc, 1)) {
		ct.cuMemAddressFree(*va, size);
		return -1;
	}
	return 0;
}

int cutest_vmm_alloc_ex(int dev, size_t size, int rdma_capable,
			CUmemAllocationHandleType types, CUdeviceptr *va,
			CUmemGenericAllocationHandle *h)
{
	CUmemAllocationProp prop;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.requestedHandleTypes = types;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	prop.allocFlags.gpuDirectRDMACapable = (unsigned char)rdma_capable;
	if (ct.cuMemCreate(h, size, &prop, 0))
		return -1;
	if (cutest_vmm_map(dev, size, *h, va)) {
		ct.cuMemRelease(*h);
		return -1;
	}
	return 0;
}

int cutest_vmm_alloc(int dev, size_t size, int rdma_capable, CUdeviceptr *va,
		     CUmemGenericAllocationHandle *h)
{
	return cutest_vmm_alloc_ex(dev, size, rdma_capable,
				   CU_MEM_HANDLE_TYPE_NONE, va, h);
}

void cutest_vmm_free(CUdeviceptr va, size_t size,
		     CUmemGenericAllocationHandle h)
{
	ct.cuMemUnmap(va, size);
	ct.cuMemAddressFree(va, size);
	ct.cuMemRelease(h);
}

double cutest_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int cutest_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}
