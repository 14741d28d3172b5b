/* SPDX-License-Identifier: MIT */
/*
 * The part of the CUDA driver ABI that libgpudirect and its tests use,
 * declared here from NVIDIA's documented driver API (cuda.h reference) so
 * that the library builds from free sources alone, without the CUDA
 * toolkit. libcuda.so.1 is never linked: every entry point is resolved at
 * run time (cuda-loader.c).
 *
 * The values are kept in X-macro lists. tests/abi/cuda-abi-check.c
 * includes a toolkit's cuda.h and this header with GDR_CUDA_ABI_LISTS_ONLY
 * and checks every value, type and entry point signature against it.
 *
 * With -Dcuda-headers=toolkit (meson), GDR_USE_TOOLKIT_CUDA_H is defined
 * and the toolkit's own cuda.h is used instead.
 */
#ifndef GDR_CUDA_ABI_H
#define GDR_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Values: X(name, value). The version suffix is the first CUDA release
 * whose cuda.h has them (the check compiles a list only against a toolkit
 * at least that new). */
#define GDR_CU_RESULTS_2000(X)                                                 \
	X(CUDA_SUCCESS, 0)                                                     \
	X(CUDA_ERROR_INVALID_VALUE, 1)                                         \
	X(CUDA_ERROR_OUT_OF_MEMORY, 2)                                         \
	X(CUDA_ERROR_NOT_INITIALIZED, 3)                                       \
	X(CUDA_ERROR_DEINITIALIZED, 4)                                         \
	X(CUDA_ERROR_NO_DEVICE, 100)                                           \
	X(CUDA_ERROR_INVALID_DEVICE, 101)                                      \
	X(CUDA_ERROR_INVALID_CONTEXT, 201)                                     \
	X(CUDA_ERROR_NOT_FOUND, 500)                                           \
	X(CUDA_ERROR_NOT_PERMITTED, 800)                                       \
	X(CUDA_ERROR_NOT_SUPPORTED, 801)                                       \
	X(CUDA_ERROR_UNKNOWN, 999)

#define GDR_CU_DEVICE_ATTRS_11070(X)                                           \
	X(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, 86)                \
	X(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 110)    \
	X(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, 116)                  \
	X(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 124)

#define GDR_CU_POINTER_ATTRS_11030(X)                                          \
	X(CU_POINTER_ATTRIBUTE_CONTEXT, 1)                                     \
	X(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 2)                                 \
	X(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 6)                                 \
	X(CU_POINTER_ATTRIBUTE_BUFFER_ID, 7)                                   \
	X(CU_POINTER_ATTRIBUTE_IS_MANAGED, 8)                                  \
	X(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 9)                              \
	X(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, 10)                 \
	X(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, 11)                           \
	X(CU_POINTER_ATTRIBUTE_RANGE_SIZE, 12)                                 \
	X(CU_POINTER_ATTRIBUTE_MAPPED, 13)                                     \
	X(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, 15)                 \
	X(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, 17)

#define GDR_CU_MEMORYTYPES_2000(X)                                             \
	X(CU_MEMORYTYPE_HOST, 1)                                               \
	X(CU_MEMORYTYPE_DEVICE, 2)                                             \
	X(CU_MEMORYTYPE_ARRAY, 3)                                              \
	X(CU_MEMORYTYPE_UNIFIED, 4)

#define GDR_CU_MISC_11070(X)                                                   \
	X(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 1)                              \
	X(CU_GET_PROC_ADDRESS_DEFAULT, 0)                                      \
	X(CU_CTX_SYNC_MEMOPS, 0x80)                                            \
	X(CU_MEM_ATTACH_GLOBAL, 1)                                             \
	X(CU_MEM_ALLOCATION_TYPE_PINNED, 1)                                    \
	X(CU_MEM_LOCATION_TYPE_DEVICE, 1)                                      \
	X(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, 3)                               \
	X(CU_MEM_ALLOC_GRANULARITY_MINIMUM, 0)

#define GDR_CU_MISC_12000(X) X(CU_GET_PROC_ADDRESS_SUCCESS, 0)

#define GDR_CU_MISC_12080(X) X(CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE, 1)

/* Scalar and handle types: X(name, what it is). */
#define GDR_CU_TYPES(X)                                                        \
	X(CUdevice, int)                                                       \
	X(CUdeviceptr, unsigned long long)                                     \
	X(CUcontext, struct CUctx_st *)                                        \
	X(CUstream, struct CUstream_st *)                                      \
	X(CUmemoryPool, struct CUmemPoolHandle_st *)                           \
	X(cuuint64_t, uint64_t)                                                \
	X(CUmemGenericAllocationHandle, unsigned long long)

#ifndef GDR_CUDA_ABI_LISTS_ONLY
#ifdef GDR_USE_TOOLKIT_CUDA_H
#include <cuda.h>
#else

#define GDR_CU_ENUM_ITEM(name, value) name = value,

/* Every enum the driver API passes by value is an int-sized C enum. */
/* The lists expand into the enum bodies. */
/* clang-format off */
typedef enum cudaError_enum { GDR_CU_RESULTS_2000(GDR_CU_ENUM_ITEM) } CUresult;

typedef enum CUdevice_attribute_enum {
	GDR_CU_DEVICE_ATTRS_11070(GDR_CU_ENUM_ITEM)
	CU_DEVICE_ATTRIBUTE_MAX_ = 0x7fffffff
} CUdevice_attribute;

typedef enum CUpointer_attribute_enum {
	GDR_CU_POINTER_ATTRS_11030(GDR_CU_ENUM_ITEM)
	CU_POINTER_ATTRIBUTE_MAX_ = 0x7fffffff
} CUpointer_attribute;

typedef enum CUmemorytype_enum {
	GDR_CU_MEMORYTYPES_2000(GDR_CU_ENUM_ITEM)
} CUmemorytype;
/* clang-format on */

typedef enum CUmemRangeHandleType_enum {
	CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1,
	CU_MEM_RANGE_HANDLE_TYPE_MAX = 0x7fffffff
} CUmemRangeHandleType;

typedef enum CUmemRangeFlags_enum {
	CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE = 1,
} CUmemRangeFlags;

typedef enum CUdriverProcAddress_flags_enum {
	CU_GET_PROC_ADDRESS_DEFAULT = 0,
} CUdriverProcAddress_flags;

typedef enum CUdriverProcAddressQueryResult_enum {
	CU_GET_PROC_ADDRESS_SUCCESS = 0,
	CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
	CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} CUdriverProcAddressQueryResult;

typedef enum CUctx_flags_enum {
	CU_CTX_SYNC_MEMOPS = 0x80,
} CUctx_flags;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef uint64_t cuuint64_t;
typedef struct CUuuid_st {
	char bytes[16];
} CUuuid;

/* --- used by the gpu tests only (VMM and allocation kinds) ------------- */
typedef unsigned long long CUmemGenericAllocationHandle;

typedef enum CUmemAttach_flags_enum {
	CU_MEM_ATTACH_GLOBAL = 1,
} CUmemAttach_flags;

typedef enum CUmemAllocationType_enum {
	CU_MEM_ALLOCATION_TYPE_PINNED = 1,
} CUmemAllocationType;

typedef enum CUmemAllocationHandleType_enum {
	CU_MEM_HANDLE_TYPE_NONE = 0,
	CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1,
} CUmemAllocationHandleType;

typedef struct CUipcMemHandle_st {
	char reserved[64];
} CUipcMemHandle;

typedef enum CUipcMem_flags_enum {
	CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1,
} CUipcMem_flags;

typedef enum CUmemLocationType_enum {
	CU_MEM_LOCATION_TYPE_DEVICE = 1,
} CUmemLocationType;

typedef enum CUmemAccess_flags_enum {
	CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
} CUmemAccess_flags;

typedef enum CUmemAllocationGranularity_flags_enum {
	CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
} CUmemAllocationGranularity_flags;

typedef struct CUmemLocation_st {
	CUmemLocationType type;
	int id;
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
	CUmemAllocationType type;
	CUmemAllocationHandleType requestedHandleTypes;
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc_st {
	CUmemLocation location;
	CUmemAccess_flags flags;
} CUmemAccessDesc;

#undef GDR_CU_ENUM_ITEM
#endif /* GDR_USE_TOOLKIT_CUDA_H */
#endif /* GDR_CUDA_ABI_LISTS_ONLY */

/*
 * Struct layouts the gpu tests hand to the driver: X(type, member). The
 * check compares sizeof and offsetof against the toolkit's.
 */
#define GDR_CU_STRUCT_MEMBERS(X)                                               \
	X(CUmemLocation, type)                                                 \
	X(CUmemLocation, id)                                                   \
	X(CUmemAllocationProp, type)                                           \
	X(CUmemAllocationProp, requestedHandleTypes)                           \
	X(CUmemAllocationProp, location)                                       \
	X(CUmemAllocationProp, win32HandleMetaData)                            \
	X(CUmemAllocationProp, allocFlags.gpuDirectRDMACapable)                \
	X(CUmemAllocationProp, allocFlags.usage)                               \
	X(CUmemAccessDesc, location)                                           \
	X(CUmemAccessDesc, flags)

#endif /* GDR_CUDA_ABI_H */
