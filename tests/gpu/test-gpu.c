/* SPDX-License-Identifier: MIT */
/*
 * The CUDA half on a real GPU and driver: pointer classification, the
 * DMA-BUF export with a recording verbs table standing in for the NIC,
 * context handling, and the probe. Exits 77 where there is no GPU.
 *
 *   test-gpu classify|dmabuf|regress|context|report|multi
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cutest.h"
#include "fakes.h"

#define MiB (1024ull * 1024)

static struct gdr_reg_info info;
static long page;

/* Register through the library; deregister at once. Returns errno or 0. */
static int reg(void *ptr, size_t len)
{
	struct ibv_mr *mr;
	int err;

	memset(&info, 0, sizeof(info));
	errno = 0;
	mr = gdr_register_ex(&fake_pd, ptr, len, NULL, &info, sizeof(info));
	err = mr ? 0 : errno;
	if (mr) {
		CHECK(mr->addr == ptr);
		CHECK_INT(mr->length, len);
		CHECK_INT(gdr_deregister(mr), 0);
	}
	return err;
}

static void classify(void)
{
	CUmemGenericAllocationHandle h;
	struct gdr_ptr_info pi;
	char why[256];
	unsigned long long id1, id2;
	CUdeviceptr d, d2, va;
	size_t gran = 2 * MiB;
	CUmemAllocationProp prop;
	void *host, *pinned;
	unsigned int capable = 9;

	check_scope = "cuMemAlloc";
	CHECK_INT(ct.cuMemAlloc(&d, 4 * MiB), CUDA_SUCCESS);
	CHECK_INT(reg((void *)d, 4 * MiB), 0);
	CHECK_INT(info.mem_type, GDR_MEM_CUDA_DEVICE);
	CHECK_INT(info.device, 0);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_STR(fake_ibv.last_exp_name, "nv_dmabuf");

	check_scope = "cuMemAllocHost";
	CHECK_INT(ct.cuMemAllocHost(&pinned, 1 * MiB), CUDA_SUCCESS);
	CHECK_INT(reg(pinned, 1 * MiB), 0);
	CHECK_INT(info.mem_type, GDR_MEM_CUDA_HOST);
	CHECK_INT(info.path, GDR_PATH_HOST);
	ct.cuMemFreeHost(pinned);

	check_scope = "malloc";
	host = malloc(1 * MiB);
	CHECK_INT(reg(host, 1 * MiB), 0);
	CHECK_INT(info.mem_type, GDR_MEM_HOST);
	CHECK_INT(info.path, GDR_PATH_HOST);
	free(host);

	check_scope = "cuMemAllocManaged";
	CHECK_INT(ct.cuMemAllocManaged(&d2, 1 * MiB, CU_MEM_ATTACH_GLOBAL),
		  CUDA_SUCCESS);
	CHECK_INT(reg((void *)d2, 1 * MiB), EINVAL);
	CHECK_INT(info.mem_type, GDR_MEM_CUDA_MANAGED);
	CHECK_HAS(gdr_last_error(), "managed memory");
	ct.cuMemFree(d2);

	check_scope = "cuMemAllocAsync (stream-ordered pool)";
	CHECK_INT(ct.cuMemAllocAsync(&d2, 1 * MiB, NULL), CUDA_SUCCESS);
	CHECK_INT(ct.cuStreamSynchronize(NULL), CUDA_SUCCESS);
	{
		unsigned int pool_rdma = 9;
		CUcontext pool_ctx = (CUcontext)1;
		int err;

		CHECK_INT(
			ct.cuPointerGetAttribute(
				&pool_rdma,
				CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
				d2),
			CUDA_SUCCESS);
		CHECK_INT(ct.cuPointerGetAttribute(
				  &pool_ctx, CU_POINTER_ATTRIBUTE_CONTEXT, d2),
			  CUDA_SUCCESS);
		err = reg((void *)d2, 1 * MiB);
		printf("default-pool memory: IS_GPU_DIRECT_RDMA_CAPABLE=%u, "
		       "context %s; registration: %s\n",
		       pool_rdma, pool_ctx ? "set" : "none",
		       err ? gdr_last_error() : gdr_path_str(info.path));
		CHECK_INT(info.mem_type, GDR_MEM_CUDA_POOL);
		/* The driver's flag decides, as for VMM memory. */
		if (pool_rdma == 1) {
			CHECK_INT(err, 0);
			CHECK_INT(info.path, GDR_PATH_DMABUF);
			CHECK_STR(fake_ibv.last_exp_name, "nv_dmabuf");
		} else {
			CHECK_INT(err, EINVAL);
			CHECK_HAS(gdr_last_error(),
				  "stream-ordered memory pool");
		}
	}
	ct.cuMemFreeAsync(d2, NULL);
	ct.cuStreamSynchronize(NULL);

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CHECK_INT(ct.cuMemGetAllocationGranularity(
			  &gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
		  CUDA_SUCCESS);
	printf("VMM granularity: %zu\n", gran);

	check_scope = "VMM with gpuDirectRDMACapable";
	CHECK_INT(cutest_vmm_alloc(0, gran, 1, &va, &h), 0);
	CHECK_INT(reg((void *)va, gran), 0);
	CHECK_INT(info.mem_type, GDR_MEM_CUDA_DEVICE);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_STR(fake_ibv.last_exp_name, "nv_dmabuf");
	cutest_vmm_free(va, gran, h);

	check_scope = "VMM without gpuDirectRDMACapable";
	CHECK_INT(cutest_vmm_alloc(0, gran, 0, &va, &h), 0);
	CHECK_INT(ct.cuPointerGetAttribute(
			  &capable,
			  CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, va),
		  CUDA_SUCCESS);
	CHECK_INT(capable, 0);
	CHECK_INT(reg((void *)va, gran), EINVAL);
	CHECK_HAS(gdr_last_error(), "gpuDirectRDMACapable=1");
	CHECK_INT(fake_ibv.live_mrs, 0);
	cutest_vmm_free(va, gran, h);

	check_scope = "VMM range partly mapped";
	{
		CUmemAccessDesc acc;
		int fds = count_fds(), err;

		CHECK_INT(ct.cuMemAddressReserve(&va, 2 * gran, 0, 0, 0), 0);
		prop.allocFlags.gpuDirectRDMACapable = 1;
		CHECK_INT(ct.cuMemCreate(&h, gran, &prop, 0), 0);
		CHECK_INT(ct.cuMemMap(va, gran, 0, h, 0), 0);
		memset(&acc, 0, sizeof(acc));
		acc.location = prop.location;
		acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		CHECK_INT(ct.cuMemSetAccess(va, gran, &acc, 1), 0);
		err = reg((void *)va, 2 * gran);
		printf("partly mapped VMM: errno %d: %s\n", err,
		       gdr_last_error());
		CHECK_INT(err, EINVAL);
		CHECK_HAS(gdr_last_error(), "cuMemGetHandleForAddressRange");
		CHECK_HAS(gdr_last_error(), "fully mapped VMM range");
		CHECK_INT(count_fds(), fds);
		CHECK_INT(fake_ibv.live_mrs, 0);
		ct.cuMemUnmap(va, gran);
		ct.cuMemAddressFree(va, 2 * gran);
		ct.cuMemRelease(h);
	}

	check_scope = "freed pointer";
	CHECK_INT(ct.cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					   d),
		  CUDA_SUCCESS);
	CHECK_INT(ct.cuMemFree(d), CUDA_SUCCESS);
	CHECK_INT(gdr_classify((void *)d, 4096, false, &pi, why, sizeof(why)),
		  0);
	CHECK_INT(pi.type, GDR_MEM_HOST);
	check_scope = "address freed and allocated again";
	CHECK_INT(ct.cuMemAlloc(&d2, 4 * MiB), CUDA_SUCCESS);
	CHECK_INT(gdr_classify((void *)d2, 4096, false, &pi, why, sizeof(why)),
		  0);
	CHECK_INT(ct.cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					   d2),
		  CUDA_SUCCESS);
	printf("realloc: same address %s, buffer id %llu -> %llu\n",
	       d == d2 ? "yes" : "no", id1, id2);
	CHECK_INT(pi.type, GDR_MEM_CUDA_DEVICE);
	CHECK(id1 != id2);
	ct.cuMemFree(d2);
}

static uint64_t state = 88172645463325252ull;
static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static void dmabuf(void)
{
	CUmemGenericAllocationHandle h;
	struct {
		CUdeviceptr base;
		size_t size;
		const char *what;
	} a[3];
	int i, fds, bad = 0, tail_ok = 0;

	CHECK_INT(ct.cuMemAlloc(&a[0].base, 64 * MiB), CUDA_SUCCESS);
	a[0].size = 64 * MiB;
	a[0].what = "cuMemAlloc 64 MiB";
	CHECK_INT(ct.cuMemAlloc(&a[1].base, 1 * MiB + 123), CUDA_SUCCESS);
	a[1].size = 1 * MiB + 123;
	a[1].what = "cuMemAlloc 1 MiB + 123";
	CHECK_INT(cutest_vmm_alloc(0, 4 * MiB, 1, &a[2].base, &h), 0);
	a[2].size = 4 * MiB;
	a[2].what = "VMM 4 MiB";

	fds = count_fds();
	for (i = 0; i < 1200; i++) {
		int k = (int)(rnd() % 3);
		size_t off = (size_t)(rnd() % a[k].size);
		size_t len = (size_t)(rnd() % (a[k].size - off)) + 1;
		uintptr_t ptr = (uintptr_t)a[k].base + off;
		int err;

		check_scope = a[k].what;
		/* A quarter short, to hit page edges often. */
		if (i % 4 == 0 && len > 65536)
			len = (size_t)(rnd() % 65536) + 1;
		err = reg((void *)ptr, len);
		if (err) {
			if (bad++ < 5)
				printf("FAILED %s off %zu len %zu: %s\n",
				       a[k].what, off, len, gdr_last_error());
			CHECK_INT(err, 0);
			continue;
		}
		CHECK_INT(info.path, GDR_PATH_DMABUF);
		CHECK_STR(fake_ibv.last_exp_name, "nv_dmabuf");
		CHECK(fake_ibv.last_fd_open);
		CHECK(fake_ibv.last_offset + len <= fake_ibv.last_dmabuf_size);
		CHECK_INT(fake_ibv.last_iova, ptr);
		CHECK_INT(fake_ibv.last_iova % (uint64_t)page,
			  fake_ibv.last_offset % (uint64_t)page);
		/* Closed once the call returned. */
		CHECK(fcntl(fake_ibv.last_fd, F_GETFD) == -1 && errno == EBADF);
		if (k == 1 && off + len > (1 * MiB))
			tail_ok++;
	}
	/* And some that surely reach into its last partial page. */
	for (i = 0; i < 50; i++) {
		size_t off = 1 * MiB - (size_t)(rnd() % 8192);
		size_t len = a[1].size - off - (size_t)(rnd() % 100);

		check_scope = "the last partial page";
		CHECK_INT(reg((void *)(a[1].base + off), len), 0);
		CHECK_INT(info.path, GDR_PATH_DMABUF);
		CHECK(fake_ibv.last_offset + len <= fake_ibv.last_dmabuf_size);
		if (off + len > 1 * MiB)
			tail_ok++;
	}
	printf("1250 sub-ranges: %d failed; %d reached into the last "
	       "partial page of the 1 MiB + 123 allocation\n",
	       bad, tail_ok);
	CHECK(tail_ok >= 40);

	/* An allocation that is not a page multiple: its last page exports. */
	check_scope = "the tail of a 1 MiB + 123 allocation";
	CHECK_INT(reg((void *)(a[1].base + a[1].size - 100), 100), 0);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(fake_ibv.last_dmabuf_size, 4096);
	CHECK_INT(reg((void *)a[1].base, a[1].size), 0);
	CHECK_INT(fake_ibv.last_dmabuf_size, 1 * MiB + 4096);
	CHECK_INT(count_fds(), fds);

	check_scope = "ranges past the end of an allocation";
	for (i = 0; i < 60; i++) {
		int k = (int)(rnd() % 3);
		size_t off = (size_t)(rnd() % a[k].size);
		size_t len = a[k].size - off + 1 + (size_t)(rnd() % 10000);

		CHECK_INT(reg((void *)(a[k].base + off), len), EINVAL);
		/* cuMemAlloc memory is checked against its allocation; a VMM
		 * range (no context) is judged by the export. */
		CHECK_HAS(gdr_last_error(),
			  k == 2 ? "fully mapped VMM range"
				 : "runs past the end of its CUDA allocation");
	}
	CHECK_INT(count_fds(), fds);
	CHECK_INT(fake_ibv.live_mrs, 0);
	ct.cuMemFree(a[0].base);
	ct.cuMemFree(a[1].base);
	cutest_vmm_free(a[2].base, a[2].size, h);
}

/* What UCX and libfabric each got wrong, and what driver 580 does. */
static void regress(void)
{
	CUmemGenericAllocationHandle h[4];
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUdeviceptr va, a, b;
	size_t gran = 2 * MiB;
	int i, fds = count_fds(), err;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	CHECK_INT(ct.cuMemGetAllocationGranularity(
			  &gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
		  CUDA_SUCCESS);

	check_scope = "VMM range of 4 separate physical allocations";
	CHECK_INT(ct.cuMemAddressReserve(&va, 4 * gran, 0, 0, 0), 0);
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	for (i = 0; i < 4; i++) {
		CHECK_INT(ct.cuMemCreate(&h[i], gran, &prop, 0), 0);
		CHECK_INT(ct.cuMemMap(va + (CUdeviceptr)i * gran, gran, 0, h[i],
				      0),
			  0);
	}
	CHECK_INT(ct.cuMemSetAccess(va, 4 * gran, &acc, 1), 0);
	err = reg((void *)va, 4 * gran);
	printf("4-chunk VMM range: %s, dma-buf of %zu bytes\n",
	       err ? gdr_last_error() : "one MR", fake_ibv.last_dmabuf_size);
	CHECK_INT(err, 0);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	/* One MR over the whole range, not the first chunk. */
	CHECK_INT(fake_ibv.last_len, 4 * gran);
	CHECK_INT(fake_ibv.last_dmabuf_size, 4 * gran);

	check_scope = "a VMM span crossing a chunk boundary";
	err = reg((void *)(va + gran - 4096), 8192);
	CHECK_INT(err, 0);
	CHECK_INT(fake_ibv.last_dmabuf_size, 8192);
	err = reg((void *)(va + gran + 100), 2 * gran);
	CHECK_INT(err, 0);
	CHECK_INT(fake_ibv.last_len, 2 * gran);
	for (i = 0; i < 4; i++)
		ct.cuMemUnmap(va + (CUdeviceptr)i * gran, gran);
	ct.cuMemAddressFree(va, 4 * gran);
	for (i = 0; i < 4; i++)
		ct.cuMemRelease(h[i]);

	/*
	 * Two cuMemAlloc allocations side by side export as one dma-buf on
	 * driver 580; the library refuses a span across both, because the MR
	 * would keep either alive past its own cuMemFree.
	 */
	check_scope = "a span across two adjacent cuMemAlloc allocations";
	CHECK_INT(ct.cuMemAlloc(&a, 4 * MiB), CUDA_SUCCESS);
	CHECK_INT(ct.cuMemAlloc(&b, 4 * MiB), CUDA_SUCCESS);
	printf("adjacent cuMemAlloc: second at first %+lld bytes\n",
	       (long long)(b - a));
	err = reg((void *)(a + 4 * MiB - 4096), 8192);
	CHECK_INT(err, EINVAL);
	CHECK_HAS(gdr_last_error(), "runs past the end of its CUDA allocation");
	CHECK_INT(reg((void *)a, 4 * MiB), 0);
	CHECK_INT(reg((void *)b, 4 * MiB), 0);
	ct.cuMemFree(a);
	ct.cuMemFree(b);
	CHECK_INT(count_fds(), fds);
	CHECK_INT(fake_ibv.live_mrs, 0);
}

static void context(void)
{
	CUcontext cur = (CUcontext)1, other = NULL;
	CUdeviceptr d;
	CUdevice dev;

	CHECK_INT(ct.cuMemAlloc(&d, 2 * MiB), CUDA_SUCCESS);

	check_scope = "no current context";
	CHECK_INT(ct.cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	CHECK_INT(reg((void *)d, 2 * MiB), 0);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(ct.cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == NULL);

	check_scope = "another context current";
	CHECK_INT(ct.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	CHECK_INT(ct.cuCtxCreate(&other, 0, dev), CUDA_SUCCESS);
	CHECK_INT(ct.cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == other);
	CHECK_INT(reg((void *)d, 2 * MiB), 0);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(ct.cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == other);
	CHECK_INT(ct.cuCtxDestroy(other), CUDA_SUCCESS);
	CHECK_INT(ct.cuCtxSetCurrent(ct.primary), CUDA_SUCCESS);

	check_scope = "the primary context current";
	CHECK_INT(reg((void *)d, 2 * MiB), 0);
	CHECK_INT(ct.cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == ct.primary);
	ct.cuMemFree(d);

	check_scope = "GDR_REG_SYNC_MEMOPS on cuMemAlloc and VMM memory";
	{
		struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_FLAGS,
					     .flags = GDR_REG_SYNC_MEMOPS };
		CUmemGenericAllocationHandle h;
		unsigned int sync = 0, flags = 0;
		struct ibv_mr *mr;
		CUdeviceptr va;

		CHECK_INT(ct.cuMemAlloc(&d, 2 * MiB), CUDA_SUCCESS);
		mr = gdr_register_ex(&fake_pd, (void *)d, 2 * MiB, &attr, &info,
				     sizeof(info));
		CHECK(mr != NULL);
		CHECK_INT(ct.cuPointerGetAttribute(
				  &sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d),
			  CUDA_SUCCESS);
		CHECK_INT(sync, 1);
		if (mr)
			gdr_deregister(mr);
		ct.cuMemFree(d);

		CHECK_INT(cutest_vmm_alloc(0, 2 * MiB, 1, &va, &h), 0);
		mr = gdr_register_ex(&fake_pd, (void *)va, 2 * MiB, &attr,
				     &info, sizeof(info));
		printf("sync-memops on VMM memory: %s\n",
		       mr ? "ok" : gdr_last_error());
		CHECK(mr != NULL);
		CHECK_INT(ct.cuCtxGetFlags(&flags), CUDA_SUCCESS);
		CHECK(flags & CU_CTX_SYNC_MEMOPS);
		if (mr)
			gdr_deregister(mr);
		cutest_vmm_free(va, 2 * MiB, h);
	}
}

static const char *item(struct gdr_report *r, const char *sec, const char *key,
			enum gdr_verdict *v)
{
	struct gdr_report_item it;
	unsigned int i;

	for (i = 0; i < gdr_report_num_items(r); i++)
		if (!gdr_report_item(r, i, &it, sizeof(it)) &&
		    !strcmp(it.section, sec) && !strcmp(it.key, key)) {
			*v = it.verdict;
			return it.value;
		}
	return NULL;
}

static void report(void)
{
	enum gdr_verdict v = GDR_VERDICT_INFO;
	struct ibv_device **list;
	const struct gdr_node *nd;
	const struct gdr_cuda *c;
	struct gdr_report *r;
	int n = 0;

	check_scope = "probe on this machine";
	gdr_seam_install(NULL);
	nd = gdr_node_get();
	c = gdr_cuda_get(true);
	printf("kernel %s, nvidia %s (flavour %d), driver API %d, %d GPU(s), "
	       "peermem '%s'\n",
	       nd->kernel_release, nd->nv_version, nd->nv_flavour,
	       c->driver_version, c->num_devices, nd->peermem_path);
	CHECK_INT(nd->nv_flavour, GDR_NV_OPEN);
	CHECK(c->driver_version >= 11070);
	CHECK_INT(c->state, GDR_CUDA_READY);
	r = gdr_report_create(NULL, 0, 0);
	CHECK(r != NULL);
	if (!r)
		return;
	gdr_report_print(r, stdout, GDR_REPORT_TEXT);
	CHECK_HAS(item(r, "node", "nvidia_driver", &v), "open kernel module");
	CHECK_INT(v, GDR_VERDICT_OK);
	item(r, "node", "cuda_driver_api", &v);
	CHECK_INT(v, GDR_VERDICT_OK);
	CHECK_STR(item(r, "gpu0", "dmabuf_supported", &v), "1");
	CHECK_INT(v, GDR_VERDICT_OK);
	CHECK_STR(item(r, "gpu0", "gpudirect_rdma_supported", &v), "1");
	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	printf("RDMA devices: %d\n", n);
	CHECK_STR(item(r, "node", "rdma_devices", &v), "0");
	gdr_report_destroy(r);

	/*
	 * The real CUDA half decides the pair's path, with a recorded NIC in
	 * front: one that takes DMA-BUF, then one that refuses it.
	 */
	check_scope = "report: this GPU with a DMA-BUF NIC";
	{
		struct ibv_context *ctxs[1] = { &fake_context };

		fakes_reset();
		fakes_install_real_cuda();
		r = gdr_report_create(ctxs, 1, 0);
		CHECK(r != NULL);
		if (!r)
			return;
		CHECK_INT(gdr_report_usable(r), 1);
		CHECK_STR(item(r, "fake_mlx5_0", "path_gpu0", &v), "dmabuf");
		CHECK_INT(v, GDR_VERDICT_OK);
		gdr_report_destroy(r);

		check_scope = "report: this GPU with a NIC without DMA-BUF";
		fakes_reset();
		fake_model.nic[0].dmabuf_probe_errno = EOPNOTSUPP;
		fakes_install_real_cuda();
		r = gdr_report_create(ctxs, 1, 0);
		CHECK(r != NULL);
		if (!r)
			return;
		CHECK_INT(gdr_report_usable(r), 0);
		CHECK_STR(item(r, "fake_mlx5_0", "path_gpu0", &v), "none");
		CHECK_INT(v, GDR_VERDICT_MISSING);
		CHECK_HAS(item(r, "fake_mlx5_0", "dmabuf_mr", &v),
			  "EOPNOTSUPP");
		gdr_report_destroy(r);
	}
}

#define RAILS 8

/*
 * One buffer on eight recorded NICs through gdr_register_multi(): the
 * real driver exports each buffer exactly once, every PD's
 * ibv_reg_dmabuf_mr gets that fd, the call closes it, and a NIC that
 * cannot take the buffer releases what the others got.
 */
static void multi(void)
{
	static struct fake_nic rails[RAILS];
	struct ibv_pd *pds[RAILS];
	struct ibv_mr *mrs[RAILS];
	struct gdr_reg_info infos[RAILS];
	CUmemGenericAllocationHandle h;
	CUdeviceptr base[2];
	size_t size[2] = { 64 * MiB, 4 * MiB };
	int i, k, it, fds, bad = 0;

	fakes_reset();
	for (i = 0; i < RAILS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "rail_mlx5_%d", i);
		fake_add_nic(&rails[i], name, 1);
		pds[i] = &rails[i].pd;
	}
	fakes_install_real_cuda();
	CHECK_INT(ct.cuMemAlloc(&base[0], size[0]), CUDA_SUCCESS);
	CHECK_INT(cutest_vmm_alloc(0, size[1], 1, &base[1], &h), 0);
	fds = count_fds();
	for (it = 0; it < 200; it++) {
		int kind = (int)(rnd() % 2);
		size_t off = (size_t)(rnd() % size[kind]);
		size_t len = (size_t)(rnd() % (size[kind] - off)) + 1;
		void *ptr = (void *)(uintptr_t)(base[kind] + off);

		check_scope =
			kind ? "eight rails, VMM" : "eight rails, cuMemAlloc";
		fake_cu.exports = 0;
		fake_ibv.dmabuf_calls = 0;
		if (gdr_register_multi(pds, RAILS, ptr, len, NULL, mrs, infos,
				       sizeof(infos[0]))) {
			if (bad++ < 5)
				printf("FAILED off %zu len %zu: %s\n", off, len,
				       gdr_last_error());
			CHECK(0);
			continue;
		}
		CHECK_INT(fake_cu.exports, 1);
		CHECK_INT(fake_ibv.dmabuf_calls, RAILS);
		CHECK_STR(fake_ibv.last_exp_name, "nv_dmabuf");
		CHECK(fake_ibv.last_offset + len <= fake_ibv.last_dmabuf_size);
		/* the export's fd is closed; each MR holds the dma-buf */
		CHECK(fcntl(fake_ibv.last_fd, F_GETFD) == -1 && errno == EBADF);
		CHECK_INT(count_fds(), fds + RAILS);
		for (k = 0; k < RAILS; k++) {
			CHECK_INT(infos[k].path, GDR_PATH_DMABUF);
			CHECK_INT(infos[k].export_index, 0);
			CHECK(mrs[k]->addr == ptr && mrs[k]->length == len);
		}
		CHECK_INT(gdr_deregister_multi(mrs, RAILS), 0);
		CHECK_INT(count_fds(), fds);
	}
	check_scope = "the sixth rail is not in the node";
	snprintf(rails[5].dev.name, sizeof(rails[5].dev.name), "gone_5");
	errno = 0;
	CHECK_INT(gdr_register_multi(pds, RAILS, (void *)(uintptr_t)base[0],
				     MiB, NULL, mrs, NULL, 0),
		  -1);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_HAS(gdr_last_error(), "pds[5] (gone_5) of 8");
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(count_fds(), fds);
	CHECK_INT(ct.cuMemFree(base[0]), CUDA_SUCCESS);
	cutest_vmm_free(base[1], size[1], h);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	char why[256];
	int rc;

	rc = cutest_init(0, why, sizeof(why));
	if (rc) {
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
		return rc;
	}
	page = sysconf(_SC_PAGESIZE);
	fakes_reset();
	fakes_install_real_cuda();
	if (!strcmp(what, "classify"))
		classify();
	else if (!strcmp(what, "dmabuf"))
		dmabuf();
	else if (!strcmp(what, "context"))
		context();
	else if (!strcmp(what, "report"))
		report();
	else if (!strcmp(what, "regress"))
		regress();
	else if (!strcmp(what, "multi"))
		multi();
	else {
		fprintf(stderr,
			"usage: %s classify|dmabuf|regress|context|report\n",
			argv[0]);
		return 2;
	}
	return check_summary(what);
}
