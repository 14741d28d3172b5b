/* SPDX-License-Identifier: MIT */
/* The layouts lib/base/cuda-abi.h declares, as numbers to compare. */
#include <stddef.h>

#include "cuda-abi.h"

size_t cuda_abi_ours[] = {
#define OFF(type, member) offsetof(type, member),
	GDR_CU_STRUCT_MEMBERS(OFF)
#undef OFF
		sizeof(CUmemLocation),
	sizeof(CUmemAllocationProp),
	sizeof(CUmemAccessDesc),
};

/* Our enums, written out by hand where not made from the lists, hold the
 * lists' values. */
#define SAME(name, value) _Static_assert(name == value, #name);
GDR_CU_MISC_11070(SAME)
GDR_CU_MISC_12000(SAME)
GDR_CU_MISC_12080(SAME)
#undef SAME
