/* SPDX-License-Identifier: MIT */
/*
 * The driver conformance scenarios: what an application does with CUDA
 * memory (every kind the library meets) and every answer the classifier and
 * the registration cache read about it, written as a transcript with
 * addresses relative to named allocations and ids numbered in order of
 * appearance. The transcript made on the GPU machine is kept in
 * tests/conform/record-*.txt; the unit fakes must produce it exactly
 * (tests/unit/test-conform.c) and so must the live driver
 * (tests/gpu/test-gpu-conform.c), so a fake that answers differently from
 * the driver fails a test.
 */
#ifndef GDR_CONFORM_H
#define GDR_CONFORM_H

#include <stdio.h>

#include "internal.h"

/* What the application calls: the same signatures as the driver's. */
struct conf_app {
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemAllocHost)(void **, size_t);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuMemAddressReserve)(CUdeviceptr *, size_t, size_t,
					CUdeviceptr, unsigned long long);
	CUresult (*cuMemAddressFree)(CUdeviceptr, size_t);
	CUresult (*cuMemCreate)(CUmemGenericAllocationHandle *, size_t,
				const CUmemAllocationProp *,
				unsigned long long);
	CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
	CUresult (*cuMemMap)(CUdeviceptr, size_t, size_t,
			     CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*cuMemUnmap)(CUdeviceptr, size_t);
	CUresult (*cuMemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *,
				   size_t);
	CUresult (*cuMemGetAllocationGranularity)(
		size_t *, const CUmemAllocationProp *,
		CUmemAllocationGranularity_flags);
	/* the context the application made current (device 0's primary) */
	CUcontext primary;
};

/*
 * Run every scenario: allocations through @app, questions through @cu (the
 * table the library uses), the transcript to @out. 0, or 1 when an
 * allocation the scenarios need failed (said in the transcript).
 */
int conf_run(const struct conf_app *app, const struct gdr_cuda_ops *cu,
	     FILE *out);

/*
 * Compare the transcript in @got (a file's contents) with the record in
 * @path line by line; print the first differences. 0 when equal.
 */
int conf_compare(const char *got, const char *path, const char *who);

/* The attributes gdr_classify asks (classify.c), in its order. */
#define CONF_CLASSIFY_ATTRS 10
extern const CUpointer_attribute conf_classify_attrs[CONF_CLASSIFY_ATTRS];

#endif
