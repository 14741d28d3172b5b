/* SPDX-License-Identifier: MIT */
/*
 * A verbs program as people write them, knowing nothing of libgpudirect:
 * open the first RDMA device, allocate a buffer, ibv_reg_mr it, say what
 * came back, deregister. Built against libibverbs only; the CUDA driver is
 * opened with dlopen, as a program that links -lcuda would have it loaded.
 *
 *   reg-program KIND [OFFSET [FORM [rereg|rereg-all|leak|late]]]
 *
 * KIND: host, host-cuda, host-libcuda, cuda, managed, pool, vmm, vmm-noflag
 * or model. host-cuda is host memory (malloc) in a process that has
 * initialised CUDA and made a context current; host-libcuda is host memory
 * in a process that has only loaded libcuda.so.1 (the fake one of
 * tests/fakes/libcuda will do); model is memory the kernel cannot pin
 * (PROT_NONE, refused by the stand-in libibverbs as GPU memory is) in a
 * process that has loaded libcuda.so.1, which the preload's model library
 * (model-library.c) takes for device memory.
 *
 * FORM is how the program asks, as verbs.h expands it:
 *   const    ibv_reg_mr with constant access (binds ibv_reg_mr@IBVERBS_1.1)
 *   var      ibv_reg_mr with access in a variable (the header's inline
 *            calls ibv_reg_mr_iova2)
 *   iova     ibv_reg_mr_iova with an iova of its own (0x7700000 + the
 *            page offset)
 *   ex, ex-iova  ibv_reg_mr_ex (rdma-core 59) with the address, and the
 *            iova too; found with dlvsym, since the headers here predate it
 *   ex-fd    ibv_reg_mr_ex of a file's pages by fd (a memfd standing in
 *            for a dma-buf), which is not an address
 * rereg: then ibv_rereg_mr with a new translation, and one with new access.
 * rereg-all: then ibv_rereg_mr with every combination of the three flags
 * that has translation or PD, and access alone ("rereg 0xF: R errno E").
 * late: first a registration of host memory before libcuda.so.1 is loaded
 * ("first: ..."), then KIND's memory as usual.
 * leak: then 8 more registrations and deregistrations, and the count of
 * open fds before and after them ("fds: +N").
 *
 * Prints "registered addr=.. length=.." or "ibv_reg_mr: errno N (...)",
 * and whether libcuda.so.1 is loaded at the end. Exit 0 registered, 1 not,
 * 77 no CUDA driver (or no such memory) for a CUDA kind.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* rdma-core 59's ibv_mr_init_attr: the headers here predate it. */
#include "reg-mr-ex.h"

/* The CUDA driver's calls this program makes (cuda.h's signatures). */
static int (*init)(unsigned int);
static int (*dev_get)(int *, int);
static int (*ctx_retain)(void **, int);
static int (*ctx_set)(void *);
static int (*mem_alloc)(unsigned long long *, size_t);
static int (*mem_managed)(unsigned long long *, size_t, unsigned int);
static int (*mem_async)(unsigned long long *, size_t, void *);
static int (*stream_sync)(void *);
static int (*granularity)(size_t *, const void *, int);
static int (*reserve)(unsigned long long *, size_t, size_t, unsigned long long,
		      unsigned long long);
static int (*create)(unsigned long long *, size_t, const void *,
		     unsigned long long);
static int (*map)(unsigned long long, size_t, size_t, unsigned long long,
		  unsigned long long);
static int (*set_access)(unsigned long long, size_t, const void *, size_t);

/* cuda.h's CUmemAllocationProp and CUmemAccessDesc, laid out by hand. */
struct alloc_prop {
	int type; /* CU_MEM_ALLOCATION_TYPE_PINNED = 1 */
	int handle_types;
	int loc_type; /* CU_MEM_LOCATION_TYPE_DEVICE = 1 */
	int loc_id;
	void *win32;
	unsigned char compression, rdma_capable;
	unsigned short usage;
	unsigned char reserved[4];
};

struct access_desc {
	int loc_type, loc_id;
	int flags; /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3 */
};

/* VMM memory: one allocation mapped read-write on device @dev. */
static int vmm_alloc(unsigned long long *p, size_t len, int dev, int rdma)
{
	struct alloc_prop prop = { .type = 1,
				   .loc_type = 1,
				   .loc_id = dev,
				   .rdma_capable = (unsigned char)rdma };
	struct access_desc acc = { 1, dev, 3 };
	unsigned long long h;
	size_t g = 0;

	if (granularity(&g, &prop, 0) || !g)
		return 1;
	len = (len + g - 1) / g * g;
	return reserve(p, len, 0, 0, 0) || create(&h, len, &prop, 0) ||
	       map(*p, len, 0, h, 0) || set_access(*p, len, &acc, 1);
}

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
	*(void **)&stream_sync = dlsym(lib, "cuStreamSynchronize");
	*(void **)&granularity = dlsym(lib, "cuMemGetAllocationGranularity");
	*(void **)&reserve = dlsym(lib, "cuMemAddressReserve");
	*(void **)&create = dlsym(lib, "cuMemCreate");
	*(void **)&map = dlsym(lib, "cuMemMap");
	*(void **)&set_access = dlsym(lib, "cuMemSetAccess");
	if (!init || !dev_get || !ctx_retain || !ctx_set || !mem_alloc ||
	    !mem_managed || !mem_async || !stream_sync || !granularity ||
	    !reserve || !create || !map || !set_access || init(0) ||
	    dev_get(&dev, 0) || ctx_retain(&ctx, dev) || ctx_set(ctx))
		return NULL;
	if (!strcmp(kind, "host-cuda"))
		return malloc(len);
	if (!strcmp(kind, "managed"))
		r = mem_managed(&p, len, 1);
	else if (!strcmp(kind, "pool"))
		r = mem_async(&p, len, NULL) || stream_sync(NULL);
	else if (!strcmp(kind, "vmm"))
		r = vmm_alloc(&p, len, dev, 1);
	else if (!strcmp(kind, "vmm-noflag"))
		r = vmm_alloc(&p, len, dev, 0);
	else
		r = mem_alloc(&p, len);
	return r ? NULL : (void *)(uintptr_t)p;
}

static const int want = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ;
static volatile int want_var = IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

static struct ibv_mr *reg(const char *form, struct ibv_pd *pd, char *p,
			  size_t len)
{
	struct ibv_mr *(*reg_ex)(struct ibv_pd *, struct mr_init_attr *);
	struct mr_init_attr a = { .length = len,
				  .access = want,
				  .comp_mask = MR_MASK_ADDR,
				  .addr = p };
	uint64_t iova = 0x7700000 + ((uintptr_t)p & 4095);
	struct ibv_mr *mr;

	if (!strcmp(form, "var"))
		return ibv_reg_mr(pd, p, len, want_var);
	if (!strcmp(form, "iova"))
		return ibv_reg_mr_iova(pd, p, len, iova,
				       IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ);
	if (!strncmp(form, "ex", 2)) {
		*(void **)&reg_ex =
			dlvsym(RTLD_DEFAULT, "ibv_reg_mr_ex", "IBVERBS_1.15");
		if (!reg_ex) {
			errno = ENOSYS;
			return NULL;
		}
		if (!strcmp(form, "ex-iova") || !strcmp(form, "ex-fd")) {
			a.comp_mask |= MR_MASK_IOVA;
			a.iova = iova;
		}
		if (!strcmp(form, "ex-fd")) {
			a.comp_mask =
				MR_MASK_IOVA | MR_MASK_FD | MR_MASK_FD_OFFSET;
			a.addr = NULL;
			a.fd = memfd_create("reg-program", MFD_CLOEXEC);
			a.fd_offset = (uintptr_t)p & 4095;
			if (a.fd < 0)
				return NULL;
			mr = ftruncate(a.fd, (off_t)(len + 4096))
				     ? NULL
				     : reg_ex(pd, &a);
			close(a.fd);
			return mr;
		}
		return reg_ex(pd, &a);
	}
	return ibv_reg_mr(pd, p, len,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* ibv_rereg_mr of a registered MR: a new translation, then new access. */
static void rereg(struct ibv_mr *mr, char *p, size_t len)
{
	int r;

	errno = 0;
	r = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, p, len / 2,
			 want);
	printf("rereg translation: %d errno %d\n", r, r ? errno : 0);
	errno = 0;
	r = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			 IBV_ACCESS_LOCAL_WRITE);
	printf("rereg access: %d errno %d\n", r, r ? errno : 0);
}

/* Every combination with translation or PD, then access alone; each
 * argument given as libibverbs wants it for the flags set. */
static void rereg_all(struct ibv_mr *mr, struct ibv_pd *pd, char *p, size_t len)
{
	static const int flags[] = {
		IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS,
		IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD,
		IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
			IBV_REREG_MR_CHANGE_ACCESS,
		IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS,
		IBV_REREG_MR_CHANGE_PD,
		IBV_REREG_MR_CHANGE_ACCESS,
	};
	unsigned int i;
	size_t n;
	char *at;
	int f, r, a;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		f = flags[i];
		at = f & IBV_REREG_MR_CHANGE_TRANSLATION ? p : NULL;
		n = at ? len / 2 : 0;
		a = f & IBV_REREG_MR_CHANGE_ACCESS ? IBV_ACCESS_LOCAL_WRITE : 0;
		errno = 0;
		r = ibv_rereg_mr(mr, f, f & IBV_REREG_MR_CHANGE_PD ? pd : NULL,
				 at, n, a);
		printf("rereg 0x%x: %d errno %d\n", f, r, r ? errno : 0);
	}
}

/* Host memory registered and released before libcuda.so.1 is loaded. */
static void first_host(const char *form, struct ibv_pd *pd, size_t len)
{
	char *h = malloc(len);
	struct ibv_mr *mr = h ? reg(form, pd, h, len) : NULL;

	if (mr) {
		printf("first: registered addr=%p (buffer %p)\n", mr->addr,
		       (void *)h);
		if (ibv_dereg_mr(mr))
			printf("first: ibv_dereg_mr failed\n");
	} else {
		printf("first: ibv_reg_mr: errno %d\n", errno);
	}
	free(h);
}

/* model: memory no kernel pins, in a process that loaded libcuda.so.1. */
static void *model_alloc(const char *kind, size_t len)
{
	void *p;

	if (!dlopen("libcuda.so.1", RTLD_NOW))
		return NULL;
	if (!strcmp(kind, "host-libcuda"))
		return malloc(len);
	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "host";
	size_t off = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;
	const char *form = argc > 3 ? argv[3] : "const";
	const char *then = argc > 4 ? argv[4] : "";
	size_t len = 1 << 20;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	void *buf, *cuda;
	int n = 0, rc, i, fds;

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
	if (!strcmp(then, "late"))
		first_host(form, pd, len);
	if (!strcmp(kind, "host")) {
		buf = malloc(len + off);
	} else if (!strcmp(kind, "model") || !strcmp(kind, "host-libcuda")) {
		buf = model_alloc(kind, len + off);
	} else {
		buf = cuda_alloc(kind, len + off);
	}
	/* What it opened is closed on the way out (a sanitizer build counts
	 * it as a leak otherwise). */
	if (!buf) {
		printf("no %s memory here\n", kind);
		rc = 77;
		goto out;
	}
	mr = reg(form, pd, (char *)buf + off, len);
	if (mr) {
		printf("registered addr=%p length=%zu (buffer %p) lkey=0x%x\n",
		       mr->addr, mr->length, (void *)((char *)buf + off),
		       mr->lkey);
		if (!strcmp(then, "rereg"))
			rereg(mr, (char *)buf + off, len);
		if (!strcmp(then, "rereg-all"))
			rereg_all(mr, pd, (char *)buf + off, len);
		rc = ibv_dereg_mr(mr);
		if (rc)
			printf("ibv_dereg_mr failed: %d\n", rc);
		rc = rc ? 1 : 0;
	} else {
		printf("ibv_reg_mr: errno %d (%s)\n", errno, strerror(errno));
		rc = 1;
	}
	if (!strcmp(then, "leak")) {
		fds = open_fds();
		for (i = 0; i < 8; i++) {
			mr = reg(form, pd, (char *)buf + off, len);
			if (mr && ibv_dereg_mr(mr))
				printf("ibv_dereg_mr failed: %d\n", errno);
		}
		printf("fds: %+d\n", open_fds() - fds);
	}
	cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	printf("libcuda.so.1 %s\n", cuda ? "loaded" : "not loaded");
	if (cuda)
		dlclose(cuda);
	if (!strncmp(kind, "host", 4))
		free(buf);
	else if (!strcmp(kind, "model"))
		munmap(buf, len + off);
out:
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return rc;
}
