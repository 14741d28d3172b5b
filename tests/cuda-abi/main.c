/* SPDX-License-Identifier: MIT */
#include <stdio.h>

extern size_t cuda_abi_ours[], cuda_abi_toolkit[];

#include "cuda-abi.h"

static const char *const what[] = {
#define NAME(type, member) #type "." #member,
	GDR_CU_STRUCT_MEMBERS(NAME)
#undef NAME
		"sizeof(CUmemLocation)",
	"sizeof(CUmemAllocationProp)",
	"sizeof(CUmemAccessDesc)",
};

int main(void)
{
	unsigned int i, bad = 0, n = sizeof(what) / sizeof(what[0]);

	for (i = 0; i < n; i++) {
		if (cuda_abi_ours[i] == cuda_abi_toolkit[i])
			continue;
		printf("FAIL %s: %zu in lib/base/cuda-abi.h, %zu in cuda.h\n",
		       what[i], cuda_abi_ours[i], cuda_abi_toolkit[i]);
		bad++;
	}
	printf("cuda-abi: %u layouts compared; values, types and entry point "
	       "signatures checked at compile time\n",
	       n);
	printf("%d passed, %d failed\n", bad ? 0 : 1, bad ? 1 : 0);
	return bad ? 1 : 0;
}
