/* SPDX-License-Identifier: MIT */
/*
 * A verbs program as people write them, knowing nothing of libgpudirect:
 * open the first RDMA device, allocate a buffer, ibv_reg_mr it, say what
 * came back, deregister. Built against libibverbs only; the CUDA driver is
 * opened with dlopen, as a program that links -lcuda would have it loaded.
 *
 *   reg-program host|cuda|managed|pool [OFFSET]
 *
 * Prints "registered addr=.. length=.." or "ibv_reg_mr: errno N (...)",
 * and whether libcuda.so.1 is loaded at the end. Exit 0 registered, 1 not,
 * 77 no CUDA driver for a CUDA kind.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

/* The CUDA driver's calls this program makes (cuda.h's signatures). */
static int (*init)(unsigned int);
static int (*dev_get)(int *, int);
static int (*ctx_retain)(void **, int);
static int (*ctx_set)(void *);
static int (*mem_alloc)(unsigned long long *, size_t);
static int (*mem_managed)(unsigned long long *, size_t, unsigned int);
static int (*mem_async)(unsigned long long *, size_t, void *);
static int (*sync)(void *);

static void *cuda_alloc(const char *kind, size_t len)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	unsigned long long p = 0;
	void *ctx;
	int dev, r;

	if (!lib)
		return NULL;
	*(void **)&init = dlsym(lib, "cuInit");
	*(void **)&dev_get = dlsym(lib, "cuDeviceGet");
	*(void **)&ctx_retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
	*(void **)&ctx_set = dlsym(lib, "cuCtxSetCurrent");
	*(void **)&mem_alloc = dlsym(lib, "cuMemAlloc_v2");
	*(void **)&mem_managed = dlsym(lib, "cuMemAllocManaged");
	*(void **)&mem_async = dlsym(lib, "cuMemAllocAsync");
	*(void **)&sync = dlsym(lib, "cuStreamSynchronize");
	if (!init || !dev_get || !ctx_retain || !ctx_set || !mem_alloc ||
	    !mem_managed || !mem_async || !sync || init(0) ||
	    dev_get(&dev, 0) || ctx_retain(&ctx, dev) || ctx_set(ctx))
		return NULL;
	if (!strcmp(kind, "managed"))
		r = mem_managed(&p, len, 1);
	else if (!strcmp(kind, "pool"))
		r = mem_async(&p, len, NULL) || sync(NULL);
	else
		r = mem_alloc(&p, len);
	return r ? NULL : (void *)(uintptr_t)p;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "host";
	size_t off = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;
	size_t len = 1 << 20;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	void *buf, *cuda;
	int n = 0, rc;

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		printf("no RDMA device\n");
		return 77;
	}
	ctx = ibv_open_device(list[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		printf("no PD: %s\n", strerror(errno));
		return 1;
	}
	if (!strcmp(kind, "host")) {
		buf = malloc(len + off);
	} else {
		buf = cuda_alloc(kind, len + off);
		if (!buf) {
			printf("no CUDA %s memory here\n", kind);
			return 77;
		}
	}
	mr = ibv_reg_mr(pd, (char *)buf + off, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	if (mr) {
		printf("registered addr=%p length=%zu (buffer %p) lkey=0x%x\n",
		       mr->addr, mr->length, (void *)((char *)buf + off),
		       mr->lkey);
		rc = ibv_dereg_mr(mr) ? 1 : 0;
		if (rc)
			printf("ibv_dereg_mr failed\n");
	} else {
		printf("ibv_reg_mr: errno %d (%s)\n", errno, strerror(errno));
		rc = 1;
	}
	cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	printf("libcuda.so.1 %s\n", cuda ? "loaded" : "not loaded");
	if (cuda)
		dlclose(cuda);
	if (!strcmp(kind, "host"))
		free(buf);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return rc;
}
