/* SPDX-License-Identifier: MIT */
/* A library named libcuda.so.1 (its soname) with one entry point, for
 * test-noload: the library must find it once the program loads it. */
int cuInit(unsigned int flags);
int cuInit(unsigned int flags)
{
	(void)flags;
	return 100; /* CUDA_ERROR_NO_DEVICE */
}
