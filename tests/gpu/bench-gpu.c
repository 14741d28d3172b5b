/* SPDX-License-Identifier: MIT */
/*
 * Benchmarks on a real GPU, with the recording verbs table standing in for
 * the NIC (no RDMA device on the GPU machine):
 *  - steady-state gdr_register through the dmabuf backend against the raw
 *    call sequence a user would write (pointer attribute, export, the same
 *    recording ibv_reg_dmabuf_mr, close), interleaved in one run;
 *  - the first call's probe cost with cuInit already done;
 *  - file opens and reads made by steady-state calls (every open/read in
 *    the process is counted by interposition, libcuda's included).
 * Exits 77 without a GPU; 1 if steady-state calls touch files.
 */
/* Define open and open64 separately: no header redirection. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cutest.h"
#include "fakes.h"

static int counting;
static long opens, reads;

#define FORWARD(name, ret, params, args)                                       \
	ret name params                                                        \
	{                                                                      \
		static ret(*real) params;                                      \
		if (!real)                                                     \
			*(void **)&real = dlsym(RTLD_NEXT, #name);             \
		if (counting)                                                  \
			COUNTER++;                                             \
		return real args;                                              \
	}

#define COUNTER opens
int open(const char *path, int flags, ...);
int open64(const char *path, int flags, ...);
int openat(int dir, const char *path, int flags, ...);
FILE *fopen(const char *path, const char *mode);
FORWARD(fopen, FILE *, (const char *path, const char *mode), (path, mode))

/* open(2) and friends: count, then call the next definition. */
#define OPEN_WRAPPER(name, params, args)                                       \
	int name params                                                        \
	{                                                                      \
		static int(*real) params;                                      \
		va_list ap;                                                    \
		int mode = 0;                                                  \
		va_start(ap, flags);                                           \
		if (flags & O_CREAT)                                           \
			mode = va_arg(ap, int);                                \
		va_end(ap);                                                    \
		if (!real)                                                     \
			*(void **)&real = dlsym(RTLD_NEXT, #name);             \
		if (counting)                                                  \
			opens++;                                               \
		return real args;                                              \
	}
OPEN_WRAPPER(open, (const char *path, int flags, ...), (path, flags, mode))
OPEN_WRAPPER(open64, (const char *path, int flags, ...), (path, flags, mode))
OPEN_WRAPPER(openat, (int dir, const char *path, int flags, ...),
	     (dir, path, flags, mode))
#undef COUNTER
#define COUNTER reads
ssize_t read(int fd, void *buf, size_t n);
FORWARD(read, ssize_t, (int fd, void *buf, size_t n), (fd, buf, n))

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *buf;
static size_t len;

static void lib_call(void)
{
	struct ibv_mr *mr = gdr_register(&fake_pd, buf, len);

	if (!mr || gdr_deregister(mr)) {
		fprintf(stderr, "bench: %s\n", gdr_last_error());
		exit(1);
	}
}

static void raw_call(void)
{
	const struct gdr_seam *s = gdr_seam();
	unsigned int type = 0;
	struct ibv_mr *mr;
	int fd = -1;

	/* What a user writes by hand for a page-aligned cuMemAlloc buffer. */
	if (ct.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				     (CUdeviceptr)buf) ||
	    type != CU_MEMORYTYPE_DEVICE ||
	    ct.cuMemGetHandleForAddressRange(
		    &fd, (CUdeviceptr)buf, len,
		    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0)) {
		fprintf(stderr, "bench: raw export failed\n");
		exit(1);
	}
	mr = s->verbs.reg_dmabuf_mr(
		&fake_pd, 0, len, (uintptr_t)buf, fd,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_RELAXED_ORDERING);
	close(fd);
	if (!mr || s->verbs.dereg_mr(mr)) {
		fprintf(stderr, "bench: raw registration failed\n");
		exit(1);
	}
}

#define ROUNDS 101
#define PER 40

int main(void)
{
	static double lib_t[ROUNDS], raw_t[ROUNDS], ratio_t[ROUNDS];
	static double attrs_t[ROUNDS], attr1_t[ROUNDS];
	double t0, first, steady, ratio;
	char why[256];
	CUdeviceptr d;
	long o, r;
	int i, k;

	i = cutest_init(0, why, sizeof(why));
	if (i) {
		printf("%s: %s\n", i == 77 ? "SKIP" : "FAIL", why);
		return i;
	}
	len = 64ull << 20;
	if (ct.cuMemAlloc(&d, len)) {
		printf("bench: cuMemAlloc failed\n");
		return 1;
	}
	buf = (void *)d;
	fakes_reset();
	fake_ibv.lean = 1;
	fakes_install_real_cuda();

	/* cuInit was called by cutest_init: the first call pays the probe. */
	t0 = now_ns();
	lib_call();
	first = now_ns() - t0;

	for (i = 0; i < 50; i++) { /* warm both */
		lib_call();
		raw_call();
	}
	/* Alternate which goes first, so that order does not bias. */
	for (i = 0; i < ROUNDS; i++) {
		int first_lib = i % 2 == 0, pass;

		for (pass = 0; pass < 2; pass++) {
			int lib = pass == 0 ? first_lib : !first_lib;

			t0 = now_ns();
			for (k = 0; k < PER; k++)
				lib ? lib_call() : raw_call();
			(lib ? lib_t : raw_t)[i] = (now_ns() - t0) / PER;
		}
		ratio_t[i] = lib_t[i] / raw_t[i];
	}
	/* What classification costs: the library's one multi-attribute
	 * query against the single attribute of the raw sequence. */
	for (i = 0; i < ROUNDS; i++) {
		struct gdr_ptr_info pi;
		unsigned int type;
		char msg[256];

		t0 = now_ns();
		for (k = 0; k < PER; k++)
			gdr_classify(buf, len, &pi, msg, sizeof(msg));
		attrs_t[i] = (now_ns() - t0) / PER;
		t0 = now_ns();
		for (k = 0; k < PER; k++)
			ct.cuPointerGetAttribute(
				&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				(CUdeviceptr)buf);
		attr1_t[i] = (now_ns() - t0) / PER;
	}
	qsort(attrs_t, ROUNDS, sizeof(double), cmp);
	qsort(attr1_t, ROUNDS, sizeof(double), cmp);
	qsort(ratio_t, ROUNDS, sizeof(double), cmp);
	qsort(lib_t, ROUNDS, sizeof(double), cmp);
	qsort(raw_t, ROUNDS, sizeof(double), cmp);
	steady = lib_t[ROUNDS / 2];
	ratio = ratio_t[ROUNDS / 2];

	counting = 1;
	for (i = 0; i < 1000; i++)
		lib_call();
	counting = 0;
	o = opens;
	r = reads;

	printf("bench: buffer 64 MiB cuMemAlloc, %d rounds x %d calls each, "
	       "interleaved, order alternating\n",
	       ROUNDS, PER);
	printf("bench: gdr_register+gdr_deregister (dmabuf): median %.2f us/call "
	       "(min %.2f, max %.2f)\n",
	       steady / 1e3, lib_t[0] / 1e3, lib_t[ROUNDS - 1] / 1e3);
	printf("bench: raw attribute+export+reg+close+dereg:  median %.2f us/call "
	       "(min %.2f, max %.2f)\n",
	       raw_t[ROUNDS / 2] / 1e3, raw_t[0] / 1e3,
	       raw_t[ROUNDS - 1] / 1e3);
	printf("bench: ratio library/raw, median of %d paired rounds = %.4f "
	       "(quartiles %.4f..%.4f; goal <= 1.02: %s)\n",
	       ROUNDS, ratio, ratio_t[ROUNDS / 4], ratio_t[3 * ROUNDS / 4],
	       ratio <= 1.02 ? "met" : "NOT met");
	printf("bench: classification: gdr_classify %.3f us vs one "
	       "cuPointerGetAttribute %.3f us\n",
	       attrs_t[ROUNDS / 2] / 1e3, attr1_t[ROUNDS / 2] / 1e3);
	printf("bench: first call %.1f us, steady %.1f us: probe cost %.1f us "
	       "(cuInit excluded; goal < 1000 us: %s)\n",
	       first / 1e3, steady / 1e3, (first - steady) / 1e3,
	       first - steady < 1e6 ? "met" : "NOT met");
	printf("bench: steady state, 1000 calls: %ld file opens, %ld reads "
	       "(goal 0: %s)\n",
	       o, r, o == 0 && r == 0 ? "met" : "NOT met");
	ct.cuMemFree(d);
	return o == 0 && r == 0 ? 0 : 1;
}
