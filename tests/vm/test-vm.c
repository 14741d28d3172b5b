/* SPDX-License-Identifier: MIT */
/*
 * Guest tests on a real RDMA device (Soft-RoCE rxe0 in the QEMU guest):
 *   host     gdr_register on host memory, then a real RDMA write between
 *            two loopback RC QPs with the data checked
 *   probe    the NIC's real answer to the DMA-BUF probe (EOPNOTSUPP on rxe)
 *            and a forced DMA-BUF registration failing with it
 *   badinput bad arguments on a real PD: documented errnos, no fd or MR left
 *   threads  4 threads x 1000 register/deregister on the real device
 *   cache    GDR_CACHE_HOST on the real device: RDMA writes through cached
 *            MRs, a hit returns the same MR, invalidate registers anew,
 *            destroy leaves no MR; without the flag host memory passes
 *            through
 *   multi    with two devices (rxe0, rxe1): gdr_register_multi on host
 *            memory over both PDs, an RDMA write through each device's
 *            MRs with the data checked, no MR left after
 *            gdr_deregister_multi
 *   dmabuf   a real dma-buf (udmabuf, else vgem) on rxe: the kernel's checks of the
 *            fd, a descriptor and the fd over a real unix socket, and the
 *            importer's registration refused with rxe's real answer
 *            (EOPNOTSUPP) and the library's words; without either, the
 *            not-a-dma-buf refusal only
 *   serve SOCKET  an owner for gdr-write-bw --mem=import:SOCKET: hands one
 *            importer a descriptor of a real 1 MiB dma-buf (udmabuf, else
 *            vgem) with its fd, then exits
 * Exits 77 when there is no RDMA device (serve: no dma-buf).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"
#include "loopback.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static int open_device(char *why, size_t n)
{
	struct ibv_device **list;
	int num = 0;

	list = ibv_get_device_list(&num);
	if (!list || num == 0) {
		snprintf(why, n,
			 "no RDMA device (ibv_get_device_list found none)");
		if (list)
			ibv_free_device_list(list);
		return -1;
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!ctx) {
		snprintf(why, n, "ibv_open_device failed: %s", strerror(errno));
		return -1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		snprintf(why, n, "ibv_alloc_pd failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void host_write(void)
{
	struct gdr_reg_info info;
	const size_t len = 1 << 20;
	struct ibv_mr *ma, *mb;
	unsigned char *a, *b;
	char err[256] = "";
	size_t i, wrong = 0;

	check_scope = "host memory + RDMA write";
	a = aligned_alloc(4096, len);
	b = aligned_alloc(4096, len);
	CHECK(a && b);
	for (i = 0; i < len; i++) {
		a[i] = (unsigned char)(i * 31 + 7);
		b[i] = 0;
	}
	ma = gdr_register_ex(pd, a, len, NULL, &info, sizeof(info));
	CHECK(ma != NULL);
	CHECK_INT(info.path, GDR_PATH_HOST);
	CHECK_INT(info.mem_type, GDR_MEM_HOST);
	mb = gdr_register(pd, b, len);
	CHECK(mb != NULL);
	if (!ma || !mb) {
		printf("registration failed: %s\n", gdr_last_error());
		return;
	}
	CHECK(ma->addr == a);
	CHECK_INT(ma->length, len);

	CHECK_INT(loopback_write(pd, ma, mb, len, err, sizeof(err)), 0);
	if (err[0])
		printf("loopback write: %s\n", err);
	for (i = 0; i < len; i++)
		wrong += a[i] != b[i];
	CHECK_INT(wrong, 0);
	printf("RDMA write of %zu bytes through MRs from gdr_register: %zu "
	       "bytes differ\n",
	       len, wrong);

	CHECK_INT(gdr_deregister(ma), 0);
	CHECK_INT(gdr_deregister(mb), 0);
	free(a);
	free(b);
}

static void probe(void)
{
	struct gdr_reg_info info;
	struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_PATH_MASK,
				     .path_mask =
					     GDR_PATH_BIT(GDR_PATH_DMABUF) };
	const char *name = ibv_get_device_name(ctx->device);
	struct gdr_report_item it;
	struct gdr_report *r;
	struct ibv_mr *mr;
	struct fixture fx;
	unsigned int i;
	char want[128];
	void *dev;
	int fds, found = 0;

	check_scope = "the real DMA-BUF probe";
	/* The real kernel's answer to the raw probe. */
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
	CHECK(mr == NULL);
	printf("ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0) on %s: errno %d (%s)\n",
	       name, errno, strerror(errno));
	CHECK_INT(errno, EOPNOTSUPP);

	r = gdr_report_create(&ctx, 1, 0);
	CHECK(r != NULL);
	for (i = 0; r && i < gdr_report_num_items(r); i++) {
		if (gdr_report_item(r, i, &it, sizeof(it)) ||
		    strcmp(it.key, "dmabuf_mr"))
			continue;
		found = 1;
		CHECK_STR(it.section, name);
		CHECK_STR(it.value, "unsupported (ibv_reg_dmabuf_mr probe "
				    "answered EOPNOTSUPP)");
		CHECK_INT(it.verdict, GDR_VERDICT_MISSING);
	}
	CHECK(found);
	gdr_report_destroy(r);

	/*
	 * A forced DMA-BUF registration of "device memory": the CUDA half is
	 * faked (no GPU in the guest), the verbs are the real rxe device.
	 */
	check_scope = "forced DMA-BUF on the real device";
	fakes_reset();
	fake_real_verbs = 1;
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	dev = fake_alloc_device(0, 1 << 20);
	fds = count_fds();
	errno = 0;
	mr = gdr_register_ex(pd, dev, 65536, &attr, &info, sizeof(info));
	CHECK(mr == NULL);
	CHECK_INT(errno, EOPNOTSUPP);
	snprintf(want, sizeof(want),
		 "RDMA device %s does not support DMA-BUF memory regions "
		 "(ibv_reg_dmabuf_mr answered EOPNOTSUPP)",
		 name);
	CHECK_HAS(gdr_last_error(), want);
	CHECK_INT(info.path, GDR_PATH_NONE);
	CHECK_INT(info.num_attempts, 4);
	CHECK_INT(info.attempts[1].path, GDR_PATH_DMABUF);
	CHECK_INT(info.attempts[1].err, EOPNOTSUPP);
	CHECK_INT(count_fds(), fds);
	printf("forced dmabuf: %s\n", gdr_last_error());
	/* The default mask falls through to nothing (no peermem here). */
	mr = gdr_register_ex(pd, dev, 65536, NULL, &info, sizeof(info));
	CHECK(mr == NULL);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_HAS(gdr_last_error(), "nvidia-peermem is not loaded");
	/* Data Direct: the real libmlx5 and the real device say no. */
	CHECK_INT(info.attempts[0].path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(info.attempts[0].result, GDR_ATTEMPT_SKIPPED);
	CHECK_HAS(info.attempts[0].reason, "not an mlx5 device");
	printf("data-direct on %s: %s\n", name, info.attempts[0].reason);
	fixture_remove(&fx);
	fake_real_verbs = 0;
	gdr_seam_install(NULL);
}

static int count_mrs(void)
{
	FILE *p = popen("rdma resource show mr 2>/dev/null | wc -l", "r");
	int n = -1;

	if (!p)
		return -1;
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

static void badinput(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int fds, mrs;
	char buf[64];
	void *gone;

	check_scope = "bad inputs on a real PD";
	gone = mmap(NULL, (size_t)page * 4, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(gone != MAP_FAILED);
	CHECK_INT(munmap(gone, (size_t)page * 4), 0);
	fds = count_fds();
	mrs = count_mrs();

	CHECK(gdr_register(NULL, buf, sizeof(buf)) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_register(pd, buf, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_register(pd, (void *)(UINTPTR_MAX - 100), 4096) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "wraps around");
	CHECK(gdr_register(pd, gone, (size_t)page * 4) == NULL);
	CHECK_INT(errno, EFAULT);
	CHECK_HAS(gdr_last_error(), "not mapped in this process");
	printf("unmapped address: %s\n", gdr_last_error());
	CHECK(gdr_register(pd, NULL, 4096) == NULL);
	CHECK_INT(errno, EINVAL);

	CHECK_INT(count_fds(), fds);
	CHECK_INT(count_mrs(), mrs);
	printf("after bad inputs: %d fds (before %d), %d MR lines (before %d)\n",
	       count_fds(), fds, count_mrs(), mrs);
}

/* One loopback write of @len bytes from @a to @b through @ma/@mb. */
static size_t write_and_compare(struct ibv_mr *ma, struct ibv_mr *mb,
				unsigned char *a, unsigned char *b, size_t len,
				unsigned char seed)
{
	char err[256] = "";
	size_t i, wrong = 0;

	for (i = 0; i < len; i++) {
		a[i] = (unsigned char)(i * 13 + seed);
		b[i] = 0;
	}
	CHECK_INT(loopback_write(pd, ma, mb, len, err, sizeof(err)), 0);
	if (err[0])
		printf("loopback write: %s\n", err);
	for (i = 0; i < len; i++)
		wrong += a[i] != b[i];
	return wrong;
}

static void cache(void)
{
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS,
				       .flags = GDR_CACHE_HOST };
	const size_t len = 1 << 20;
	struct ibv_mr *ma, *mb, *again, *fresh;
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	unsigned char *a, *b;
	int mrs = count_mrs(), fds = count_fds(), i;
	size_t wrong = 0;

	check_scope = "registration cache on a real PD";
	a = aligned_alloc(4096, len);
	b = aligned_alloc(4096, len);
	c = gdr_cache_create(pd, &attr);
	CHECK(a && b && c);
	if (!a || !b || !c) {
		printf("setup failed: %s\n", gdr_last_error());
		return;
	}
	/* Ten writes, each through MRs taken from the cache and put back. */
	for (i = 0; i < 10; i++) {
		ma = gdr_cache_get(c, a, len);
		mb = gdr_cache_get(c, b, len);
		CHECK(ma && mb);
		if (!ma || !mb) {
			printf("gdr_cache_get: %s\n", gdr_last_error());
			return;
		}
		wrong += write_and_compare(ma, mb, a, b, len, (unsigned char)i);
		CHECK_INT(gdr_cache_put(c, ma), 0);
		CHECK_INT(gdr_cache_put(c, mb), 0);
	}
	CHECK_INT(wrong, 0);
	CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
	CHECK_INT(st.misses, 2);
	CHECK_INT(st.hits, 18);
	CHECK_INT(st.entries, 2);
	CHECK_INT(count_mrs(), mrs + 2);
	printf("10 RDMA writes through cached MRs: %zu bytes differ, %llu "
	       "hits, %llu misses, %d MRs in the kernel\n",
	       wrong, (unsigned long long)st.hits,
	       (unsigned long long)st.misses, count_mrs() - mrs);

	/* A sub-range hits the same registration. */
	ma = gdr_cache_get(c, a + 4096, 4096);
	again = gdr_cache_get(c, a, len);
	CHECK(ma && ma == again);
	CHECK_INT(gdr_cache_put(c, ma), 0);
	CHECK_INT(gdr_cache_put(c, again), 0);

	/* The caller's promise kept: invalidate, then the next get registers. */
	CHECK_INT(gdr_cache_invalidate(c, a, len), 0);
	CHECK_INT(count_mrs(), mrs + 1);
	fresh = gdr_cache_get(c, a, len);
	mb = gdr_cache_get(c, b, len);
	CHECK(fresh && mb);
	if (fresh && mb) {
		CHECK_INT(write_and_compare(fresh, mb, a, b, len, 99), 0);
		CHECK_INT(gdr_cache_put(c, fresh), 0);
		CHECK_INT(gdr_cache_put(c, mb), 0);
	}
	CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
	CHECK_INT(st.invalidations, 1);
	CHECK_INT(st.misses, 3);

	CHECK_INT(gdr_cache_destroy(c), 0);
	CHECK_INT(count_mrs(), mrs);

	/* Without GDR_CACHE_HOST: registered on get, gone on put. */
	c = gdr_cache_create(pd, NULL);
	CHECK(c != NULL);
	if (c) {
		ma = gdr_cache_get(c, a, len);
		CHECK(ma != NULL);
		CHECK_INT(count_mrs(), mrs + 1);
		if (ma)
			CHECK_INT(gdr_cache_put(c, ma), 0);
		CHECK_INT(count_mrs(), mrs);
		CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
		CHECK_INT(st.passthrough, 1);
		CHECK_INT(st.entries, 0);
		CHECK_INT(gdr_cache_destroy(c), 0);
	}
	CHECK_INT(count_fds(), fds);
	free(a);
	free(b);
}

static void *worker(void *arg)
{
	const size_t len = 16384;
	unsigned char *b = aligned_alloc(4096, len);
	long fails = 0;
	int i;

	(void)arg;
	if (!b)
		return (void *)1;
	memset(b, 1, len);
	for (i = 0; i < 1000; i++) {
		struct ibv_mr *mr = gdr_register(pd, b, len);

		if (!mr || mr->addr != b || gdr_deregister(mr))
			fails++;
	}
	free(b);
	return (void *)fails;
}

static void threads(void)
{
	pthread_t t[4];
	void *ret;
	long fails = 0;
	int i, fds = count_fds();

	check_scope = "4 threads x 1000 registrations";
	gdr_seam_install(NULL); /* cold: the first calls race on the probe */
	for (i = 0; i < 4; i++)
		CHECK_INT(pthread_create(&t[i], NULL, worker, NULL), 0);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		fails += (long)ret;
	}
	CHECK_INT(fails, 0);
	CHECK_INT(count_fds(), fds);
	printf("4 threads x 1000 gdr_register/gdr_deregister: %ld failures\n",
	       fails);
}

/* Both sides of a write on every device of the node, registered once. */
static void multi(void)
{
	struct ibv_context *ctx2[2] = { ctx, NULL };
	struct ibv_pd *pds[2] = { pd, NULL };
	struct ibv_mr *ma[2], *mb[2];
	struct gdr_reg_info infos[2];
	struct ibv_device **list;
	const size_t len = 1 << 20;
	unsigned char *a, *b;
	char err[256];
	int num = 0, mrs0, i;
	size_t k, wrong;

	check_scope = "one buffer on two rxe devices";
	list = ibv_get_device_list(&num);
	CHECK(list && num >= 2);
	if (!list || num < 2) {
		printf("this test needs two RDMA devices, found %d\n", num);
		if (list)
			ibv_free_device_list(list);
		return;
	}
	/* the other device (the list's order is the kernel's) */
	for (i = 0; i < num && !ctx2[1]; i++)
		if (strcmp(ibv_get_device_name(list[i]),
			   ibv_get_device_name(ctx->device)))
			ctx2[1] = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	CHECK(ctx2[1] != NULL);
	if (!ctx2[1])
		return;
	pds[1] = ibv_alloc_pd(ctx2[1]);
	CHECK(pds[1] != NULL);
	mrs0 = count_mrs();
	a = aligned_alloc(4096, len);
	b = aligned_alloc(4096, len);
	CHECK(a && b);
	for (k = 0; k < len; k++)
		a[k] = (unsigned char)(k * 13 + 5);
	CHECK_INT(gdr_register_multi(pds, 2, a, len, NULL, ma, infos,
				     sizeof(infos[0])),
		  0);
	CHECK_INT(gdr_register_multi(pds, 2, b, len, NULL, mb, NULL, 0), 0);
	for (i = 0; i < 2; i++) {
		CHECK_INT(infos[i].path, GDR_PATH_HOST);
		CHECK_INT(infos[i].export_index, -1);
		CHECK(ma[i] && ma[i]->pd == pds[i] && ma[i]->addr == a);
	}
	if (!ma[0] || !mb[0]) {
		printf("registration failed: %s\n", gdr_last_error());
		return;
	}
	for (i = 0; i < 2; i++) {
		memset(b, 0, len);
		err[0] = '\0';
		CHECK_INT(loopback_write(pds[i], ma[i], mb[i], len, err,
					 sizeof(err)),
			  0);
		if (err[0])
			printf("loopback write on %s: %s\n",
			       ibv_get_device_name(ctx2[i]->device), err);
		for (wrong = 0, k = 0; k < len; k++)
			wrong += a[k] != b[k];
		CHECK_INT(wrong, 0);
		printf("RDMA write of %zu bytes on %s through MRs from "
		       "gdr_register_multi: %zu bytes differ\n",
		       len, ibv_get_device_name(ctx2[i]->device), wrong);
	}
	CHECK_INT(gdr_deregister_multi(ma, 2), 0);
	CHECK_INT(gdr_deregister_multi(mb, 2), 0);
	CHECK_INT(count_mrs(), mrs0);
	free(a);
	free(b);
	ibv_dealloc_pd(pds[1]);
	ibv_close_device(ctx2[1]);
}

/* The udmabuf UAPI (linux/udmabuf.h), stable since Linux 4.20. */
struct vm_udmabuf_create {
	uint32_t memfd;
	uint32_t flags;
	uint64_t offset;
	uint64_t size;
};
#define VM_UDMABUF_CREATE _IOW('u', 0x42, struct vm_udmabuf_create)
#define VM_UDMABUF_FLAGS_CLOEXEC 0x01

/*
 * The DRM UAPI (drm.h, drm_mode.h) for a vgem dumb buffer exported as a
 * dma-buf (PRIME), where the guest kernel has no udmabuf (Debian 12's).
 */
struct vm_drm_create_dumb {
	uint32_t height, width, bpp, flags, handle, pitch;
	uint64_t size;
};
struct vm_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};
#define VM_DRM_IOCTL_MODE_CREATE_DUMB                                          \
	_IOWR('d', 0xB2, struct vm_drm_create_dumb)
#define VM_DRM_IOCTL_PRIME_HANDLE_TO_FD                                        \
	_IOWR('d', 0x2d, struct vm_drm_prime_handle)

/* A 1 MiB dma-buf from the vgem driver, or -1 (the reason printed). */
static int make_vgem_dmabuf(void)
{
	struct vm_drm_create_dumb c = { .height = 256,
					.width = 1024,
					.bpp = 32 };
	struct vm_drm_prime_handle p = { .flags = O_CLOEXEC | O_RDWR,
					 .fd = -1 };
	char path[32];
	int i, dev = -1;

	/* vgem is the only DRM device of the guest: its card node. */
	for (i = 0; i < 8 && dev < 0; i++) {
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		dev = open(path, O_RDWR | O_CLOEXEC);
	}
	if (dev < 0) {
		printf("no /dev/dri/card* here (%s)\n", strerror(errno));
		return -1;
	}
	if (ioctl(dev, VM_DRM_IOCTL_MODE_CREATE_DUMB, &c)) {
		printf("%s: DRM_IOCTL_MODE_CREATE_DUMB: %s\n", path,
		       strerror(errno));
		close(dev);
		return -1;
	}
	p.handle = c.handle;
	if (ioctl(dev, VM_DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		printf("%s: DRM_IOCTL_PRIME_HANDLE_TO_FD: %s\n", path,
		       strerror(errno));
	/* The dma-buf holds the buffer; the device can go. */
	close(dev);
	printf("dma-buf from %s: a %llu-byte vgem dumb buffer\n", path,
	       (unsigned long long)c.size);
	return p.fd;
}

/* A 1 MiB dma-buf of host pages, or -1 (the reason printed). */
static int make_udmabuf(void)
{
	struct vm_udmabuf_create c = { .flags = VM_UDMABUF_FLAGS_CLOEXEC,
				       .size = 1 << 20 };
	int dev, mfd, buf;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		printf("no /dev/udmabuf here (%s)\n", strerror(errno));
		return -1;
	}
	mfd = memfd_create("vm-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, 1 << 20) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		printf("memfd for udmabuf: %s\n", strerror(errno));
		close(dev);
		return -1;
	}
	c.memfd = (uint32_t)mfd;
	buf = ioctl(dev, VM_UDMABUF_CREATE, &c);
	if (buf < 0)
		printf("UDMABUF_CREATE: %s\n", strerror(errno));
	close(mfd);
	close(dev);
	return buf;
}

static void dmabuf(void)
{
	struct gdr_reg_attr only = { .comp_mask = GDR_REG_ATTR_PATH_MASK,
				     .path_mask =
					     GDR_PATH_BIT(GDR_PATH_DMABUF) };
	struct gdr_export_desc d, got;
	struct gdr_dmabuf_facts f;
	struct gdr_reg_info info;
	char why[256];
	struct stat st;
	int buf, fds, mrs, sv[2], rfds[2], mfd;

	fds = count_fds();
	mrs = count_mrs();
	check_scope = "dma-buf: not a dma-buf";
	mfd = memfd_create("plain", MFD_CLOEXEC);
	CHECK(ftruncate(mfd, 1 << 20) == 0);
	CHECK(gdr_register_dmabuf(pd, mfd, 0, 4096, 0, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "is not a dma-buf (its file system");
	close(mfd);

	buf = make_udmabuf();
	if (buf < 0)
		buf = make_vgem_dmabuf();
	if (buf < 0) {
		printf("dma-buf: only the not-a-dma-buf refusal was tried\n");
		CHECK_INT(count_fds(), fds);
		return;
	}
	check_scope = "dma-buf: the kernel's facts of a udmabuf";
	CHECK_INT(gdr_dmabuf_facts_real(buf, &f, why, sizeof(why)), 0);
	CHECK_INT(f.size, 1 << 20);
	CHECK_INT(fstat(buf, &st), 0);
	CHECK_INT(f.ino, st.st_ino);
	/* Once the dma-buf file system is known, an fd on another is still
	 * asked and refused (not taken by its device number). */
	check_scope = "dma-buf: a memfd after a real dma-buf";
	mfd = memfd_create("plain", MFD_CLOEXEC);
	CHECK(mfd >= 0 && ftruncate(mfd, 1 << 20) == 0);
	CHECK_INT(gdr_dmabuf_facts_real(mfd, &f, why, sizeof(why)),
		  GDR_ENOTDMABUF);
	CHECK_HAS(why, "is not a dma-buf");
	close(mfd);
	CHECK_INT(gdr_dmabuf_facts_real(buf, &f, why, sizeof(why)), 0);
	CHECK_INT(f.size, 1 << 20);

	check_scope = "dma-buf: rxe refuses it";
	CHECK(gdr_register_dmabuf(pd, buf, 4096, 8192, 0x1000, NULL, &info,
				  sizeof(info)) == NULL);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_HAS(gdr_last_error(), "does not support DMA-BUF memory regions");
	CHECK_INT(info.mem_type, GDR_MEM_DMABUF);
	printf("dma-buf on rxe: %s\n", gdr_last_error());
	CHECK(gdr_register_dmabuf(pd, buf, 4096, 8192, 0x1000, &only, NULL,
				  0) == NULL);
	CHECK_INT(errno, EOPNOTSUPP);

	check_scope = "dma-buf: over a real unix socket";
	memset(&d, 0, sizeof(d));
	d.version = GDR_EXPORT_DESC_VERSION;
	d.num_fds = 1;
	d.dmabuf_size = 1 << 20;
	d.offset = 4096;
	d.length = 8192;
	d.iova = 0x1000;
	d.buffer_id = 1;
	d.dmabuf_ino[0] = (uint64_t)st.st_ino;
	d.mem_type = GDR_MEM_CUDA_DEVICE;
	strcpy(d.gpu_bus_id, "0000:00:00.0");
	CHECK_INT(gdr_boot_id(d.boot_id, why, sizeof(why)), 0);
	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	CHECK_INT(gdr_export_send(sv[0], &d, &buf), 0);
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), 0);
	CHECK(gdr_import_register(pd, &got, rfds, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_HAS(gdr_last_error(), "(dma-buf fd");
	close(rfds[0]);
	/* A short message with the fd: refused, the fd closed. */
	d.length = 1 << 21;
	CHECK_INT(gdr_export_send(sv[0], &d, &buf), -1);
	CHECK_INT(errno, EINVAL);
	d.length = 8192;
	CHECK(send(sv[0], "GDRX", 4, 0) == 4);
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), -1);
	CHECK_INT(errno, EPROTO);
	close(sv[0]);
	close(sv[1]);
	close(buf);
	CHECK_INT(count_fds(), fds);
	CHECK_INT(count_mrs(), mrs);
}

/* One importer served a descriptor of a real dma-buf on @path. */
static int serve(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct gdr_export_desc d;
	char why[256] = "the socket path is too long";
	struct stat st;
	int buf, ls, s, rc;

	buf = make_udmabuf();
	if (buf < 0)
		buf = make_vgem_dmabuf();
	if (buf < 0 || fstat(buf, &st))
		return 77;
	memset(&d, 0, sizeof(d));
	d.version = GDR_EXPORT_DESC_VERSION;
	d.num_fds = 1;
	d.dmabuf_size = 1 << 20;
	d.length = 1 << 20;
	d.iova = 0x10000000;
	d.buffer_id = 1;
	d.dmabuf_ino[0] = (uint64_t)st.st_ino;
	d.mem_type = GDR_MEM_CUDA_DEVICE;
	d.owner_pid = (uint32_t)getpid();
	strcpy(d.gpu_bus_id, "0000:00:00.0");
	if (gdr_boot_id(d.boot_id, why, sizeof(why)) ||
	    strlen(path) >= sizeof(a.sun_path)) {
		printf("serve: %s\n", why);
		return 1;
	}
	strcpy(a.sun_path, path);
	ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ls, 1)) {
		printf("serve: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("serve: a 1 MiB dma-buf on %s\n", path);
	fflush(stdout);
	s = accept(ls, NULL, NULL);
	rc = s < 0 || gdr_export_send(s, &d, &buf) ? 1 : 0;
	if (rc)
		printf("serve: %s\n",
		       s < 0 ? strerror(errno) : gdr_last_error());
	if (s >= 0)
		close(s);
	close(ls);
	unlink(path);
	close(buf);
	return rc;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	char why[256];

	if (!strcmp(what, "serve") && argc > 2)
		return serve(argv[2]);

	if (open_device(why, sizeof(why))) {
		printf("SKIP: %s\n", why);
		return 77;
	}
	if (!strcmp(what, "host") || !strcmp(what, "all"))
		host_write();
	if (!strcmp(what, "probe") || !strcmp(what, "all"))
		probe();
	if (!strcmp(what, "badinput") || !strcmp(what, "all"))
		badinput();
	if (!strcmp(what, "threads") || !strcmp(what, "all"))
		threads();
	if (!strcmp(what, "cache") || !strcmp(what, "all"))
		cache();
	if (!strcmp(what, "multi"))
		multi();
	if (!strcmp(what, "dmabuf") || !strcmp(what, "all"))
		dmabuf();
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return check_summary(what);
}
