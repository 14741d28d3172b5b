/* SPDX-License-Identifier: MIT */
/*
 * lib/base/cuda-abi.h against a CUDA toolkit's cuda.h: every value, type and
 * entry point signature the library declares for itself must equal the
 * toolkit's. Compiled only where a toolkit is found (check-cuda-abi.sh).
 */
#include <stddef.h>

#include <cuda.h>

#define GDR_CUDA_ABI_LISTS_ONLY
#include "internal.h"

#define SAME(name, value) _Static_assert(name == value, #name);
GDR_CU_RESULTS_2000(SAME)
GDR_CU_MEMORYTYPES_2000(SAME)
GDR_CU_DEVICE_ATTRS_11070(SAME)
GDR_CU_POINTER_ATTRS_11030(SAME)
GDR_CU_MISC_11070(SAME)
#if CUDA_VERSION >= 12000
GDR_CU_MISC_12000(SAME)
#endif
#if CUDA_VERSION >= 12080
GDR_CU_MISC_12080(SAME)
#endif
#undef SAME

#define TYPE(name, what)                                                       \
	_Static_assert(__builtin_types_compatible_p(name, what), #name);
GDR_CU_TYPES(TYPE)
#undef TYPE

/* Each entry point the library resolves, with the signature it calls. */
#define SIGNATURE(name, sym, ver, req, params)                                 \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&sym),          \
						    CUresult(*) params),       \
		       #sym);
GDR_CU_FUNCS(SIGNATURE)
#undef SIGNATURE

size_t cuda_abi_toolkit[] = {
#define OFF(type, member) offsetof(type, member),
	GDR_CU_STRUCT_MEMBERS(OFF)
#undef OFF
		sizeof(CUmemLocation),
	sizeof(CUmemAllocationProp),
	sizeof(CUmemAccessDesc),
};
