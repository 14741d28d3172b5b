/* SPDX-License-Identifier: MIT */
/*
 * What the preload costs: ibv_reg_mr + ibv_dereg_mr of one buffer, CALLS
 * times, as the program makes them (run it with and without gdr-run), or
 * gdr_register + gdr_deregister of the same buffer called directly.
 *
 *   bench-preload host|cuda|direct CALLS
 *
 * Prints the ns per pair. Exit 77 without CUDA for cuda and direct.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpudirect.h>

static int (*init)(unsigned int);
static int (*dev_get)(int *, int);
static int (*ctx_retain)(void **, int);
static int (*ctx_set)(void *);
static int (*mem_alloc)(unsigned long long *, size_t);

static void *cuda_buffer(size_t len)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW), *ctx;
	unsigned long long p = 0;
	int dev;

	if (!lib)
		return NULL;
	*(void **)&init = dlsym(lib, "cuInit");
	*(void **)&dev_get = dlsym(lib, "cuDeviceGet");
	*(void **)&ctx_retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
	*(void **)&ctx_set = dlsym(lib, "cuCtxSetCurrent");
	*(void **)&mem_alloc = dlsym(lib, "cuMemAlloc_v2");
	if (!init || !dev_get || !ctx_retain || !ctx_set || !mem_alloc ||
	    init(0) || dev_get(&dev, 0) || ctx_retain(&ctx, dev) ||
	    ctx_set(ctx) || mem_alloc(&p, len))
		return NULL;
	return (void *)(uintptr_t)p;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "host";
	int calls = argc > 2 ? atoi(argv[2]) : 1000, i, n = 0;
	size_t len = 1 << 20;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	double t0;
	void *buf;

	if (!list || !n)
		return 77;
	ctx = ibv_open_device(list[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd)
		return 1;
	buf = strcmp(kind, "host") ? cuda_buffer(len) : malloc(len);
	if (!buf)
		return 77;
	/* One pair first, untimed: the steady state is measured, not the
	 * first call's look-ups (the preload's symbols, the library's probe). */
	t0 = now_ns();
	for (i = -1; i < calls; i++) {
		if (i == 0)
			t0 = now_ns();
		mr = !strcmp(kind, "direct")
			     ? gdr_register(pd, buf, len)
			     : ibv_reg_mr(pd, buf, len,
					  IBV_ACCESS_LOCAL_WRITE |
						  IBV_ACCESS_REMOTE_WRITE |
						  IBV_ACCESS_REMOTE_READ);
		if (!mr) {
			fprintf(stderr, "registration failed\n");
			return 1;
		}
		if (!strcmp(kind, "direct") ? gdr_deregister(mr)
					    : ibv_dereg_mr(mr))
			return 1;
	}
	printf("%.1f\n", (now_ns() - t0) / calls);
	if (!strcmp(kind, "host"))
		free(buf);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
