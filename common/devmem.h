/* SPDX-License-Identifier: MIT */
/*
 * A buffer in host or CUDA device memory for the example programs, the
 * tools and the tests. The CUDA driver is opened with dlopen so that the programs run,
 * host memory only, on machines without it.
 */
#ifndef GDR_COMMON_DEVMEM_H
#define GDR_COMMON_DEVMEM_H

#include <stddef.h>

struct devmem {
	void *ptr;
	size_t len;
	int cuda;   /* 1: device memory */
	int device; /* CUDA ordinal */
};

/* The largest GPU ordinal "cuda:N" takes. */
#define DEVMEM_MAX_ORDINAL 65535

/*
 * What @spec names, without allocating or loading anything: *@cuda 1 and
 * the ordinal in *@device for "cuda" (0) or "cuda:N", *@cuda 0 for "host".
 * 0, or -1 with the reason in @err.
 */
int devmem_parse(const char *spec, int *cuda, int *device, char *err, size_t n);

/*
 * Allocate @len bytes as @spec says: "host", "cuda" (device 0) or "cuda:N".
 * Returns 0, or -1 with the reason in @err.
 */
int devmem_alloc(const char *spec, size_t len, struct devmem *m, char *err,
		 size_t n);
void devmem_free(struct devmem *m);
/* Copy between the buffer at @off and host memory. 0 or -1. */
int devmem_write(struct devmem *m, size_t off, const void *src, size_t n);
int devmem_read(struct devmem *m, size_t off, void *dst, size_t n);

/*
 * The bytes gdr-write-bw writes at offset @i of a @size-byte message, and
 * checks on arrival: gdr-share's owner fills and checks them too when the
 * buffer is its own.
 */
static inline unsigned char devmem_pattern(size_t i, size_t size)
{
	return (unsigned char)(i * 7 + size * 13 + 1);
}

/*
 * Write those bytes for a @size-byte message at the buffer's start (their
 * complement with @invert, so that nothing left over passes a check).
 * 0, or -1 (out of memory, or the copy failed).
 */
int devmem_fill(struct devmem *m, size_t size, int invert);

/*
 * Check them: 0 when all @size are there, k + 1 when byte k is the first
 * that is not, -1 when the buffer could not be read.
 */
long long devmem_check(struct devmem *m, size_t size);

#endif
