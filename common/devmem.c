/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count.h"
#include "devmem.h"

typedef int (*fn_init)(unsigned int);
typedef int (*fn_dev_get)(int *, int);
typedef int (*fn_retain)(void **, int);
typedef int (*fn_set)(void *);
typedef int (*fn_alloc)(unsigned long long *, size_t);
typedef int (*fn_free)(unsigned long long);
typedef int (*fn_htod)(unsigned long long, const void *, size_t);
typedef int (*fn_dtoh)(void *, unsigned long long, size_t);

/* A GPU's ordinal: decimal digits only ("cuda:abc" is not GPU 0). */
static int ordinal(const char *s, int *out)
{
	unsigned long long v;

	if (number_parse(s, 0, DEVMEM_MAX_ORDINAL, &v))
		return 0;
	*out = (int)v;
	return 1;
}

static struct {
	fn_init init;
	fn_dev_get dev_get;
	fn_retain retain;
	fn_set set;
	fn_alloc alloc;
	fn_free free;
	fn_htod htod;
	fn_dtoh dtoh;
} cu;

static int load(char *err, size_t n)
{
	void *lib;

	if (cu.init)
		return 0;
	lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		snprintf(err, n, "no CUDA driver on this machine (%s)",
			 dlerror());
		return -1;
	}
	cu.dev_get = (fn_dev_get)dlsym(lib, "cuDeviceGet");
	cu.retain = (fn_retain)dlsym(lib, "cuDevicePrimaryCtxRetain");
	cu.set = (fn_set)dlsym(lib, "cuCtxSetCurrent");
	cu.alloc = (fn_alloc)dlsym(lib, "cuMemAlloc_v2");
	cu.free = (fn_free)dlsym(lib, "cuMemFree_v2");
	cu.htod = (fn_htod)dlsym(lib, "cuMemcpyHtoD_v2");
	cu.dtoh = (fn_dtoh)dlsym(lib, "cuMemcpyDtoH_v2");
	cu.init = (fn_init)dlsym(lib, "cuInit");
	if (!cu.init || !cu.dev_get || !cu.retain || !cu.set || !cu.alloc ||
	    !cu.free || !cu.htod || !cu.dtoh) {
		cu.init = NULL;
		snprintf(err, n, "libcuda.so.1 lacks a basic entry point");
		return -1;
	}
	return 0;
}

int devmem_parse(const char *spec, int *cuda, int *device, char *err, size_t n)
{
	*cuda = 0;
	*device = 0;
	if (strcmp(spec, "host") == 0)
		return 0;
	if (strncmp(spec, "cuda", 4) != 0 ||
	    (spec[4] && (spec[4] != ':' || !ordinal(spec + 5, device)))) {
		snprintf(err, n,
			 "unknown memory '%s': use host, cuda or cuda:N (N a "
			 "GPU's ordinal: decimal digits)",
			 spec);
		return -1;
	}
	*cuda = 1;
	return 0;
}

int devmem_alloc(const char *spec, size_t len, struct devmem *m, char *err,
		 size_t n)
{
	unsigned long long dptr;
	char why[200];
	void *ctx;
	int dev, r;

	memset(m, 0, sizeof(*m));
	m->len = len;
	if (devmem_parse(spec, &m->cuda, &m->device, err, n))
		return -1;
	m->cuda = 0; /* set once the memory is there */
	if (strcmp(spec, "host") == 0) {
		/* Page aligned, as RDMA buffers usually are. */
		if (posix_memalign(&m->ptr, 4096, len ? len : 1)) {
			snprintf(err, n, "out of host memory for %zu bytes",
				 len);
			return -1;
		}
		memset(m->ptr, 0, len);
		return 0;
	}
	if (load(why, sizeof(why))) {
		snprintf(err, n, "cuda:%d: %s", m->device, why);
		return -1;
	}
	if ((r = cu.init(0)) || (r = cu.dev_get(&dev, m->device)) ||
	    (r = cu.retain(&ctx, dev)) || (r = cu.set(ctx))) {
		snprintf(err, n, "CUDA device %d is not usable (CUDA error %d)",
			 m->device, r);
		return -1;
	}
	if ((r = cu.alloc(&dptr, len))) {
		snprintf(err, n, "cuMemAlloc(%zu) failed with CUDA error %d",
			 len, r);
		return -1;
	}
	m->ptr = (void *)(unsigned long)dptr;
	m->cuda = 1;
	return 0;
}

void devmem_free(struct devmem *m)
{
	if (!m->ptr)
		return;
	if (m->cuda)
		cu.free((unsigned long long)(unsigned long)m->ptr);
	else
		free(m->ptr);
	m->ptr = NULL;
}

int devmem_write(struct devmem *m, size_t off, const void *src, size_t n)
{
	if (!m->cuda) {
		memcpy((char *)m->ptr + off, src, n);
		return 0;
	}
	return cu.htod((unsigned long long)(unsigned long)m->ptr + off, src, n)
		       ? -1
		       : 0;
}

int devmem_read(struct devmem *m, size_t off, void *dst, size_t n)
{
	if (!m->cuda) {
		memcpy(dst, (char *)m->ptr + off, n);
		return 0;
	}
	return cu.dtoh(dst, (unsigned long long)(unsigned long)m->ptr + off, n)
		       ? -1
		       : 0;
}

int devmem_fill(struct devmem *m, size_t size, int invert)
{
	unsigned char *p = malloc(size ? size : 1);
	size_t k;
	int rc;

	if (!p)
		return -1;
	for (k = 0; k < size; k++)
		p[k] = (unsigned char)(invert ? ~devmem_pattern(k, size)
					      : devmem_pattern(k, size));
	rc = devmem_write(m, 0, p, size);
	free(p);
	return rc;
}

long long devmem_check(struct devmem *m, size_t size)
{
	unsigned char *p = malloc(size ? size : 1);
	long long bad = 0;
	size_t k;

	if (!p || devmem_read(m, 0, p, size)) {
		free(p);
		return -1;
	}
	for (k = 0; !bad && k < size; k++)
		if (p[k] != devmem_pattern(k, size))
			bad = (long long)k + 1;
	free(p);
	return bad;
}
