/* SPDX-License-Identifier: MIT */
/*
 * The registration decision (DESIGN section 3) as a table of scenarios run
 * over fake CUDA and verbs tables and fixture sysfs/procfs trees. Each
 * scenario checks the path taken, errno, the message, the MR's addr and
 * length, and that no fd or MR is left behind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fakes.h"

#define PM_NV_MEM "kernel/mm/memory_peers/nv_mem/version"
#define PM_NV_MEM_NC "kernel/mm/memory_peers/nv_mem_nc/version"
#define PM_MODULE "module/nvidia_peermem/version"
#define PM_OLD "module/nv_peer_mem/version"

enum ptr_kind { P_DEVICE, P_HOST, P_CUDA_HOST, P_MANAGED, P_POOL, P_VMM,
		P_VMM_NOT_RDMA, P_PAST_END };

struct scenario {
	const char *name;
	/* the node */
	const char *nv;	     /* /proc/driver/nvidia/version, NULL: absent */
	const char *kernel;  /* NULL: 6.1.0-57-amd64 */
	const char *peermem; /* sysfs file that shows peermem, NULL: none */
	int no_libcuda;
	CUresult init_result;
	int driver;	     /* 0: 13000 */
	int two_gpus_attr1;  /* 2 GPUs; DMA_BUF_SUPPORTED of GPU 1 is this-1 */
	int probe_errno;     /* 0: EBADF */
	int no_dmabuf_symbol;
	/* the buffer */
	enum ptr_kind ptr;
	int gpu;
	/* what the calls answer */
	int dmabuf_errno, reg_errno;
	CUresult export_result;
	/* the request */
	const char *env_path;
	uint32_t mask; /* 0: none given */
	uint32_t flags;
	/* expected */
	enum gdr_path want_path;
	int want_errno;
	const char *want_msg;
	enum gdr_mem_type want_mem;
};

#define B(p) GDR_PATH_BIT(GDR_PATH_##p)

static const struct scenario table[] = {
	{ .name = "healthy node: dmabuf", .nv = NV_OPEN,
	  .want_path = GDR_PATH_DMABUF, .want_mem = GDR_MEM_CUDA_DEVICE },
	{ .name = "no libcuda: host pointer registers as host", .nv = NV_OPEN,
	  .no_libcuda = 1, .ptr = P_HOST, .want_path = GDR_PATH_HOST,
	  .want_mem = GDR_MEM_HOST },
	{ .name = "cuInit finds no device: host path", .nv = NV_OPEN,
	  .init_result = CUDA_ERROR_NO_DEVICE, .ptr = P_HOST,
	  .want_path = GDR_PATH_HOST, .want_mem = GDR_MEM_HOST },
	{ .name = "proprietary module, no peermem", .nv = NV_PROPRIETARY,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "proprietary kernel module, which cannot export DMA-BUF; "
		      "install the open kernel module (GPU Operator: --set "
		      "driver.kernelModuleType=open)" },
	{ .name = "proprietary module + peermem (memory_peers/nv_mem)",
	  .nv = NV_PROPRIETARY, .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "kernel 5.10, no peermem", .nv = NV_OPEN,
	  .kernel = "5.10.0-28-amd64", .want_errno = EOPNOTSUPP,
	  .want_msg = "kernel 5.10.0-28-amd64 is older than 5.12" },
	{ .name = "kernel 4.18 (RHEL 8) + nv_peer_mem", .nv = NV_OPEN,
	  .kernel = "4.18.0-513.el8.x86_64", .peermem = PM_OLD,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "kernel 5.12.0-rc1+ is new enough", .nv = NV_OPEN,
	  .kernel = "5.12.0-rc1+", .want_path = GDR_PATH_DMABUF },
	{ .name = "driver 11.4, no peermem", .nv = NV_OPEN, .driver = 11040,
	  .want_errno = EOPNOTSUPP, .want_msg = "older than 11.7" },
	{ .name = "driver 11.4 + nvidia_peermem module", .nv = NV_OPEN,
	  .driver = 11040, .peermem = PM_MODULE,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "GPU 1 of 2 lacks DMA-BUF: its memory is refused",
	  .nv = NV_OPEN, .two_gpus_attr1 = 1, .gpu = 1,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "GPU 1 (Fake H200 1) reports "
		      "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=0" },
	{ .name = "GPU 1 of 2 lacks DMA-BUF: GPU 0 still uses it",
	  .nv = NV_OPEN, .two_gpus_attr1 = 1, .gpu = 0,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPU 1 memory while GPU 0's context is current",
	  .nv = NV_OPEN, .two_gpus_attr1 = 2, .gpu = 1,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPU 1 VMM memory: GPU 1's primary context", .nv = NV_OPEN,
	  .two_gpus_attr1 = 2, .gpu = 1, .ptr = P_VMM,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "NIC answers EOPNOTSUPP, no peermem", .nv = NV_OPEN,
	  .probe_errno = EOPNOTSUPP, .want_errno = EOPNOTSUPP,
	  .want_msg = "RDMA device fake_mlx5_0 does not support DMA-BUF" },
	{ .name = "NIC answers EPROTONOSUPPORT + nv_mem_nc", .nv = NV_OPEN,
	  .probe_errno = EPROTONOSUPPORT, .peermem = PM_NV_MEM_NC,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "NIC answers EINVAL (unknown): a real registration decides",
	  .nv = NV_OPEN, .probe_errno = EINVAL, .want_path = GDR_PATH_DMABUF },
	{ .name = "NIC answers EINVAL, registration says EOPNOTSUPP: peermem",
	  .nv = NV_OPEN, .probe_errno = EINVAL, .dmabuf_errno = EOPNOTSUPP,
	  .peermem = PM_NV_MEM, .want_path = GDR_PATH_PEERMEM },
	{ .name = "neither path: open module, NIC without DMA-BUF, no peermem",
	  .nv = NV_OPEN, .probe_errno = EOPNOTSUPP, .want_errno = EOPNOTSUPP,
	  .want_msg = "peermem skipped: nvidia-peermem is not loaded" },
	{ .name = "plain host pointer", .nv = NV_OPEN, .ptr = P_HOST,
	  .want_path = GDR_PATH_HOST, .want_mem = GDR_MEM_HOST },
	{ .name = "CUDA pinned host pointer takes the host path", .nv = NV_OPEN,
	  .ptr = P_CUDA_HOST, .want_path = GDR_PATH_HOST,
	  .want_mem = GDR_MEM_CUDA_HOST },
	{ .name = "managed pointer refused", .nv = NV_OPEN, .ptr = P_MANAGED,
	  .want_errno = EINVAL, .want_msg = "CUDA managed memory",
	  .want_mem = GDR_MEM_CUDA_MANAGED },
	{ .name = "stream-ordered pool pointer refused", .nv = NV_OPEN,
	  .ptr = P_POOL, .want_errno = EINVAL,
	  .want_msg = "stream-ordered memory pool",
	  .want_mem = GDR_MEM_CUDA_POOL },
	{ .name = "range past the end of the allocation refused",
	  .nv = NV_OPEN, .ptr = P_PAST_END, .want_errno = EINVAL,
	  .want_msg = "runs past the end of its CUDA allocation" },
	{ .name = "VMM memory: exported under the primary context",
	  .nv = NV_OPEN, .ptr = P_VMM, .want_path = GDR_PATH_DMABUF },
	{ .name = "VMM memory without gpuDirectRDMACapable refused",
	  .nv = NV_OPEN, .ptr = P_VMM_NOT_RDMA, .want_errno = EINVAL,
	  .want_msg = "allocFlags.gpuDirectRDMACapable=1" },
	{ .name = "forced dmabuf that works", .nv = NV_OPEN,
	  .peermem = PM_NV_MEM, .mask = B(DMABUF),
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "forced dmabuf that fails does not fall back",
	  .nv = NV_OPEN, .probe_errno = EOPNOTSUPP, .peermem = PM_NV_MEM,
	  .mask = B(DMABUF), .want_errno = EOPNOTSUPP,
	  .want_msg = "does not support DMA-BUF memory regions" },
	{ .name = "forced dmabuf, registration fails: no fallback",
	  .nv = NV_OPEN, .dmabuf_errno = EOPNOTSUPP, .peermem = PM_NV_MEM,
	  .mask = B(DMABUF), .want_errno = EOPNOTSUPP,
	  .want_msg = "ibv_reg_dmabuf_mr(offset 100, 5000 bytes) on "
		      "fake_mlx5_0 failed with EOPNOTSUPP" },
	{ .name = "forced peermem that works", .nv = NV_OPEN,
	  .peermem = PM_NV_MEM, .mask = B(PEERMEM),
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "forced peermem without the module", .nv = NV_OPEN,
	  .mask = B(PEERMEM), .want_errno = EOPNOTSUPP,
	  .want_msg = "modprobe nvidia-peermem" },
	{ .name = "forced host for device memory", .nv = NV_OPEN,
	  .mask = B(HOST), .want_errno = EOPNOTSUPP,
	  .want_msg = "the buffer is cuda-device memory" },
	{ .name = "dmabuf registration fails with 524, peermem succeeds",
	  .nv = NV_OPEN, .dmabuf_errno = ENOTSUPP, .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "dmabuf registration ENOMEM is reported, not hidden",
	  .nv = NV_OPEN, .dmabuf_errno = ENOMEM, .peermem = PM_NV_MEM,
	  .want_errno = ENOMEM, .want_msg = "failed with ENOMEM" },
	{ .name = "export CUDA_ERROR_NOT_SUPPORTED falls back to peermem",
	  .nv = NV_OPEN, .export_result = CUDA_ERROR_NOT_SUPPORTED,
	  .peermem = PM_NV_MEM, .want_path = GDR_PATH_PEERMEM },
	{ .name = "export CUDA_ERROR_INVALID_VALUE is an error",
	  .nv = NV_OPEN, .export_result = CUDA_ERROR_INVALID_VALUE,
	  .peermem = PM_NV_MEM, .want_errno = EINVAL,
	  .want_msg = "cuMemGetHandleForAddressRange" },
	{ .name = "peermem EFAULT names nvidia-peermem", .nv = NV_PROPRIETARY,
	  .peermem = PM_NV_MEM, .reg_errno = EFAULT, .want_errno = EFAULT,
	  .want_msg = "nvidia-peermem is most likely not loaded" },
	{ .name = "host EFAULT names an unmapped range", .nv = NV_OPEN,
	  .ptr = P_HOST, .reg_errno = EFAULT, .want_errno = EFAULT,
	  .want_msg = "not mapped in this process" },
	{ .name = "host ENOMEM names the memlock limit", .nv = NV_OPEN,
	  .ptr = P_HOST, .reg_errno = ENOMEM, .want_errno = ENOMEM,
	  .want_msg = "ulimit -l" },
	{ .name = "rdma-core without ibv_reg_dmabuf_mr + peermem",
	  .nv = NV_OPEN, .no_dmabuf_symbol = 1, .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "rdma-core without ibv_reg_dmabuf_mr, no peermem",
	  .nv = NV_OPEN, .no_dmabuf_symbol = 1, .want_errno = EOPNOTSUPP,
	  .want_msg = "rdma-core older than v34" },
	{ .name = "no /proc/driver/nvidia/version: CUDA decides", .nv = NULL,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPUDIRECT_PATH=peermem", .nv = NV_OPEN,
	  .peermem = PM_NV_MEM, .env_path = "peermem",
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "GPUDIRECT_PATH=dmabuf still registers host memory",
	  .nv = NV_OPEN, .env_path = "dmabuf", .ptr = P_HOST,
	  .want_path = GDR_PATH_HOST },
	{ .name = "GPUDIRECT_PATH=host refuses device memory", .nv = NV_OPEN,
	  .env_path = "host", .want_errno = EOPNOTSUPP,
	  .want_msg = "dmabuf skipped: not allowed by GPUDIRECT_PATH" },
	{ .name = "GPUDIRECT_PATH=bogus is an error", .nv = NV_OPEN,
	  .env_path = "bogus", .want_errno = EINVAL,
	  .want_msg = "GPUDIRECT_PATH=bogus is not a path" },
	{ .name = "path_mask overrides GPUDIRECT_PATH", .nv = NV_OPEN,
	  .env_path = "host", .mask = B(DMABUF) | B(HOST),
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "sync-memops on peermem", .nv = NV_OPEN,
	  .peermem = PM_NV_MEM, .mask = B(PEERMEM),
	  .flags = GDR_REG_SYNC_MEMOPS, .want_path = GDR_PATH_PEERMEM },
	{ .name = "strict ordering", .nv = NV_OPEN,
	  .flags = GDR_REG_STRICT_ORDERING, .want_path = GDR_PATH_DMABUF },
};

#define DEV_OFF 100
#define LEN 5000

/* A fake allocation on GPU 0, to be marked by the caller. */
static struct fake_alloc *device_with(size_t size)
{
	fake_alloc_device(0, size);
	return &fake_cu.allocs[fake_cu.num_allocs - 1];
}

/* An unaligned pointer into the last allocation. */
static void *last_dev(void)
{
	return (char *)fake_cu.allocs[fake_cu.num_allocs - 1].start + DEV_OFF;
}

static void *make_ptr(const struct scenario *sc, void *host)
{
	struct fake_alloc *a;

	switch (sc->ptr) {
	case P_HOST:
		return host;
	case P_CUDA_HOST:
		fake_add_alloc((uintptr_t)host, 65536, 0, CU_MEMORYTYPE_HOST);
		return host;
	case P_MANAGED:
		device_with(1 << 20)->managed = 1;
		break;
	case P_POOL:
		device_with(1 << 20)->pool = 1;
		break;
	case P_VMM:
		fake_alloc_device(sc->gpu, 1 << 21);
		fake_cu.allocs[fake_cu.num_allocs - 1].vmm = 1;
		break;
	case P_VMM_NOT_RDMA:
		a = device_with(1 << 21);
		a->vmm = 1;
		a->not_rdma = 1;
		break;
	case P_PAST_END:
		device_with(4096);
		break;
	case P_DEVICE: /* fall through */
	default:
		fake_alloc_device(sc->gpu, 1 << 20);
		break;
	}
	return last_dev();
}

static void run(const struct scenario *sc)
{
	struct gdr_reg_info info = { .comp_mask = GDR_REG_INFO_BASIC };
	struct gdr_reg_attr attr = { 0 };
	CUcontext caller = (CUcontext)(uintptr_t)0xc0ffee;
	struct fixture fx;
	struct ibv_mr *mr;
	void *host, *ptr;
	int fds, err;

	check_scope = sc->name;
	fakes_reset();
	if (fixture_make(&fx)) {
		CHECK_(0, "fixture: %s", strerror(errno));
		return;
	}
	if (sc->nv)
		fixture_write(fx.proc, "driver/nvidia/version", sc->nv);
	if (sc->peermem)
		fixture_write(fx.sys, sc->peermem, "1.1\n");
	fake_cu.load_fails = sc->no_libcuda;
	fake_cu.init_result = sc->init_result;
	if (sc->driver)
		fake_cu.driver_version = sc->driver;
	if (sc->two_gpus_attr1) {
		fake_cu.num_devices = 2;
		fake_cu.dmabuf_attr[1] = sc->two_gpus_attr1 - 1;
	}
	if (sc->probe_errno)
		fake_ibv.probe_errno = sc->probe_errno;
	fake_ibv.no_dmabuf_symbol = sc->no_dmabuf_symbol;
	fake_ibv.dmabuf_errno = sc->dmabuf_errno;
	fake_ibv.reg_errno = sc->reg_errno;
	fake_cu.export_result = sc->export_result;
	/* With two GPUs, the caller has GPU 0's context current. */
	if (sc->two_gpus_attr1)
		caller = (CUcontext)(uintptr_t)0x1000;
	fake_current = caller;
	fakes_install(&fx, sc->kernel, sc->env_path, NULL);

	host = aligned_alloc(4096, 65536);
	ptr = make_ptr(sc, host);
	if (sc->mask) {
		attr.comp_mask |= GDR_REG_ATTR_PATH_MASK;
		attr.path_mask = sc->mask;
	}
	if (sc->flags) {
		attr.comp_mask |= GDR_REG_ATTR_FLAGS;
		attr.flags = sc->flags;
	}

	fds = count_fds();
	errno = 0;
	mr = gdr_register_ex(&fake_pd, ptr, LEN, &attr, &info);
	err = errno;

	if (sc->want_errno) {
		CHECK(mr == NULL);
		CHECK_INT(err, sc->want_errno);
		CHECK_INT(info.path, GDR_PATH_NONE);
		if (sc->want_msg)
			CHECK_HAS(gdr_last_error(), sc->want_msg);
	} else {
		CHECK(mr != NULL);
		CHECK_INT(info.path, sc->want_path);
		CHECK_STR(gdr_last_error(), "");
	}
	if (sc->want_mem)
		CHECK_INT(info.mem_type, sc->want_mem);
	CHECK(info.num_attempts <= GDR_PATH_COUNT);
	if (mr) {
		/* Looks like ibv_reg_mr's MR on every path. */
		CHECK(mr->addr == ptr);
		CHECK_INT(mr->length, LEN);
		CHECK_INT(gdr_deregister(mr), 0);
	}
	if (info.path == GDR_PATH_DMABUF) {
		uintptr_t base = (uintptr_t)ptr & ~(uintptr_t)4095;

		CHECK(fake_ibv.last_fd_open);
		CHECK_INT(fake_ibv.last_iova, (uintptr_t)ptr);
		CHECK_INT(fake_ibv.last_offset, (uintptr_t)ptr - base);
		CHECK_INT(fake_cu.last_export_base, base);
		CHECK_INT(fake_cu.last_export_size % 4096, 0);
		/* Exported under the owning device's context ... */
		CHECK(fake_cu.ctx_at_export ==
		      (CUcontext)(uintptr_t)(0x1000 + sc->gpu));
		CHECK_INT(fake_ibv.last_access & IBV_ACCESS_RELAXED_ORDERING,
			  sc->flags & GDR_REG_STRICT_ORDERING
				  ? 0
				  : IBV_ACCESS_RELAXED_ORDERING);
	}
	if (info.path == GDR_PATH_HOST)
		CHECK_INT(fake_ibv.last_access & IBV_ACCESS_RELAXED_ORDERING, 0);
	if (sc->flags & GDR_REG_SYNC_MEMOPS)
		CHECK_INT(fake_cu.set_attr_calls, 1);
	/* ... and the caller's context is current again. */
	CHECK(fake_current == caller);
	/* Nothing left behind: no fd, no MR. */
	CHECK_INT(count_fds(), fds);
	CHECK_INT(fake_ibv.live_mrs, 0);

	free(host);
	fixture_remove(&fx);
}

/* Arguments are checked before anything else is touched. */
static void bad_arguments(void)
{
	struct gdr_reg_attr attr = { 0 };
	struct fixture fx;
	char buf[64];
	int fds;

	check_scope = "bad arguments";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	fds = count_fds();

	errno = 0;
	CHECK(gdr_register(NULL, buf, 64) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "pd is NULL");
	CHECK(gdr_register(&fake_pd, NULL, 64) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "ptr is NULL");
	CHECK(gdr_register(&fake_pd, buf, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "len is 0");
	CHECK(gdr_register(&fake_pd, (void *)(UINTPTR_MAX - 10), 64) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "wraps around");

	attr.comp_mask = 1u << 30;
	CHECK(gdr_register_ex(&fake_pd, buf, 64, &attr, NULL) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "comp_mask has unknown bits 0x40000000");
	attr.comp_mask = GDR_REG_ATTR_FLAGS;
	attr.flags = 1u << 7;
	CHECK(gdr_register_ex(&fake_pd, buf, 64, &attr, NULL) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "flags has unknown bits");
	attr.comp_mask = GDR_REG_ATTR_PATH_MASK;
	attr.path_mask = 0;
	CHECK(gdr_register_ex(&fake_pd, buf, 64, &attr, NULL) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "path_mask 0x0");
	attr.path_mask = GDR_PATH_BIT(GDR_PATH_NONE);
	CHECK(gdr_register_ex(&fake_pd, buf, 64, &attr, NULL) == NULL);
	CHECK_INT(errno, EINVAL);

	CHECK_INT(gdr_deregister(NULL), EINVAL);
	CHECK_HAS(gdr_last_error(), "mr is NULL");
	CHECK_INT(fake_ibv.reg_calls + fake_ibv.dmabuf_calls, 0);
	CHECK_INT(count_fds(), fds);

	/* A failing ibv_dereg_mr is passed on with its errno. */
	{
		struct ibv_mr *mr = gdr_register(&fake_pd, buf, 64);

		CHECK(mr != NULL);
		fake_ibv.dereg_errno = EBUSY;
		CHECK_INT(gdr_deregister(mr), EBUSY);
		CHECK_HAS(gdr_last_error(), "ibv_dereg_mr failed with EBUSY");
		fake_ibv.dereg_errno = 0;
		CHECK_INT(gdr_deregister(mr), 0);
		CHECK_STR(gdr_last_error(), "");
	}
	fixture_remove(&fx);
}

/* Probes run once; later registrations neither re-read nor re-ask. */
static void cached(void)
{
	struct gdr_reg_info info = { .comp_mask = GDR_REG_INFO_BASIC };
	struct fixture fx;
	struct ibv_mr *mr;
	void *p;
	int i;

	check_scope = "probes are cached";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_PROPRIETARY);
	fixture_write(fx.sys, PM_NV_MEM, "1.1\n");
	fakes_install(&fx, NULL, NULL, NULL);
	p = (char *)fake_alloc_device(0, 1 << 20) + 4096;
	for (i = 0; i < 3; i++) {
		mr = gdr_register_ex(&fake_pd, p, 4096, NULL, &info);
		CHECK(mr != NULL);
		CHECK_INT(info.path, GDR_PATH_PEERMEM);
		if (mr)
			gdr_deregister(mr);
		/* Take the files away: the cached answers must not change. */
		fixture_remove(&fx);
	}
	CHECK_INT(fake_ibv.probes, 1);
	/* A second RDMA device context gets its own probe. */
	{
		struct ibv_context ctx2 = fake_context;
		struct ibv_pd pd2 = { .context = &ctx2 };

		mr = gdr_register(&pd2, p, 4096);
		CHECK(mr != NULL);
		if (mr)
			gdr_deregister(mr);
		CHECK_INT(fake_ibv.probes, 2);
	}
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		run(&table[i]);
	printf("%zu scenarios\n", i);
	CHECK(i >= 25);
	bad_arguments();
	cached();
	gdr_seam_install(NULL);
	return check_summary("decide");
}
