/* SPDX-License-Identifier: MIT */
/*
 * Memory another process owns, on the real driver: two processes, the
 * owner forked before either touches CUDA, handles passed over a unix
 * socket. The importer registers through recording verbs (no NIC here).
 *   share     cuMemAlloc and VMM memory exported by the owner, received
 *             and registered by the importer (nv dma-bufs of the right size,
 *             offset and iova); the PCIe mapping asked; pool memory refused
 *             at the owner; CUDA IPC memory and imported VMM memory refused
 *             in the importer with the words that fit them, the latter
 *             registrable when vouched for
 *   lifetime  the owner exports 1 GiB, frees it and exits: the memory stays
 *             allocated (cuMemGetInfo) while the importer holds the
 *             dma-buf, and comes back when it lets go
 *   bench     gdr_export against the bare cuMemGetHandleForAddressRange,
 *             gdr_import_register against ibv_reg_dmabuf_mr (recording
 *             verbs): medians and quartiles of paired rounds
 *   bench-parts  where gdr_export's difference goes, each part added to
 *             the bare export in the same rounds (a diagnosis)
 * Exits 77 where there is no GPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "conform.h"
#include "cutest.h"
#include "fakes.h"

#define MiB (1024ull * 1024)

static int sock_pair(int sv[2])
{
	struct timeval tv = { .tv_sec = 60 };

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return -1;
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return 0;
}

/* One byte each way: the other side is done with the step. */
static void say_done(int sock)
{
	char c = 'k';

	if (send(sock, &c, 1, 0) != 1)
		printf("FAIL send: %s\n", strerror(errno));
}

static int wait_done(int sock)
{
	char c = 0;

	return recv(sock, &c, 1, 0) == 1 && c == 'k' ? 0 : -1;
}

static int up(int with_context)
{
	char why[256];
	int rc = cutest_init(!with_context, why, sizeof(why));

	if (rc)
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
	return rc;
}

/* --- share ---------------------------------------------------------------- */
static void import_and_check(int sock, const char *what, uint64_t want_offset,
			     uint64_t want_len)
{
	struct gdr_export_desc d;
	struct gdr_reg_info info;
	struct ibv_mr *mr;
	int fds[2];

	check_scope = what;
	CHECK_INT(gdr_export_recv(sock, &d, fds), 0);
	if (d.version != GDR_EXPORT_DESC_VERSION) {
		printf("FAIL %s: %s\n", what, gdr_last_error());
		return;
	}
	CHECK_INT(d.offset, want_offset);
	CHECK_INT(d.length, want_len);
	CHECK_INT(d.owner_pid, getppid());
	CHECK(d.buffer_id != 0);
	mr = gdr_import_register(&fake_pd, &d, fds, NULL, &info, sizeof(info));
	CHECK(mr != NULL);
	if (!mr)
		printf("  %s\n", gdr_last_error());
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(info.mem_type, GDR_MEM_DMABUF);
	CHECK_INT(fake_ibv.last_fd, fds[0]);
	CHECK_INT(fake_ibv.last_offset, want_offset);
	CHECK_INT(fake_ibv.last_len, want_len);
	CHECK_INT(fake_ibv.last_iova, d.iova);
	/* The kernel's word on the fd: NVIDIA's dma-buf, of the span. */
	CHECK_INT(fake_ibv.last_dmabuf_size, d.dmabuf_size);
	CHECK(strstr(fake_ibv.last_exp_name, "nv") != NULL);
	printf("%s: %s dma-buf of %llu bytes, offset %llu, GPU %s, buffer id "
	       "%llu, exporter %s\n",
	       what, mr ? "registered" : "NOT registered",
	       (unsigned long long)d.dmabuf_size, (unsigned long long)d.offset,
	       d.gpu_bus_id, (unsigned long long)d.buffer_id,
	       fake_ibv.last_exp_name);
	if (mr)
		CHECK_INT(gdr_deregister(mr), 0);
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
}

/* What the driver says of @p in this process. */
static void attrs(const char *what, CUdeviceptr p)
{
	unsigned int rdma = 9, ipc = 9;
	unsigned long long id = 0;
	CUcontext ctx = NULL;

	ct.cuPointerGetAttribute(
		&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p);
	ct.cuPointerGetAttribute(
		&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p);
	ct.cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p);
	ct.cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p);
	printf("%s: IS_GPU_DIRECT_RDMA_CAPABLE=%u IS_LEGACY_CUDA_IPC_CAPABLE=%u "
	       "BUFFER_ID=%llu context=%s\n",
	       what, rdma, ipc, id, ctx ? "yes" : "none");
}

static int importer(int sock)
{
	struct gdr_reg_attr vouch = { .comp_mask = GDR_REG_ATTR_FLAGS,
				      .flags = GDR_REG_OWNER_RDMA_CAPABLE };
	struct gdr_reg_info info;
	CUmemGenericAllocationHandle h;
	struct gdr_export_desc d;
	CUipcMemHandle ipc;
	CUdeviceptr p, va;
	struct ibv_mr *mr;
	struct gdr_fds_msg fm;
	int rc, fds[2], vfd;
	uint64_t size;

	rc = up(1);
	if (rc)
		return rc;
	fakes_reset();
	fakes_install_real_cuda();

	import_and_check(sock, "cuMemAlloc exported by the owner", 0x234,
			 1 * MiB);
	say_done(sock);
	import_and_check(sock, "VMM exported by the owner", 0, 8 * MiB);
	say_done(sock);

	check_scope = "CUDA IPC memory in the importer";
	CHECK(recv(sock, &ipc, sizeof(ipc), 0) == sizeof(ipc));
	CHECK_INT(ct.cuIpcOpenMemHandle(&p, ipc,
					CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
		  0);
	attrs("CUDA IPC memory, importer", p);
	CHECK(gdr_register(&fake_pd, (void *)p, 4096) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "CUDA IPC memory another process owns");
	printf("gdr_register of CUDA IPC memory: %s\n", gdr_last_error());
	CHECK_INT(gdr_export((void *)p, 4096, 0, &d, fds), -1);
	CHECK_HAS(gdr_last_error(), "CUDA IPC memory");
	CHECK_INT(ct.cuIpcCloseMemHandle(p), 0);
	say_done(sock);

	check_scope = "imported VMM memory";
	vfd = -1;
	CHECK_INT(gdr_fds_recv(sock, &size, sizeof(size), &vfd, 1, &fm), 0);
	CHECK(fm.nfds == 1 && fm.got == sizeof(size) && !fm.data_cut &&
	      !fm.fds_cut && !fm.extra_fds);
	CHECK_INT(ct.cuMemImportFromShareableHandle(
			  &h, (void *)(uintptr_t)vfd,
			  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		  0);
	CHECK_INT(cutest_vmm_map(0, size, h, &va), 0);
	attrs("VMM memory imported, importer", va);
	CHECK(gdr_register(&fake_pd, (void *)va, 4096) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "cuMemImportFromShareableHandle");
	printf("gdr_register of imported VMM memory: %s\n", gdr_last_error());
	mr = gdr_register_ex(&fake_pd, (void *)va, size, &vouch, &info,
			     sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(fake_ibv.last_dmabuf_size, size);
	printf("vouched (GDR_REG_OWNER_RDMA_CAPABLE): %s, dma-buf of %zu bytes\n",
	       mr ? "registered" : gdr_last_error(), fake_ibv.last_dmabuf_size);
	if (mr)
		gdr_deregister(mr);
	cutest_vmm_free(va, size, h);
	close(vfd);
	say_done(sock);
	return check_summary("gpu-share (importer)");
}

static int owner(int sock)
{
	CUmemGenericAllocationHandle h;
	struct gdr_export_desc d;
	CUdeviceptr p, va, q;
	CUipcMemHandle ipc;
	int rc, fds[2], vfd = -1;
	uint64_t size = 64 * MiB;

	rc = up(1);
	if (rc)
		return rc;
	check_scope = "owner: cuMemAlloc";
	CHECK_INT(ct.cuMemAlloc(&p, 64 * MiB), 0);
	CHECK_INT(gdr_export((void *)(p + 0x1234), 1 * MiB, 0, &d, fds), 0);
	CHECK_INT(d.num_fds, 1);
	CHECK_INT(gdr_export_send(sock, &d, fds), 0);
	close(fds[0]);
	CHECK_INT(wait_done(sock), 0);

	check_scope = "owner: the PCIe mapping asked";
	rc = gdr_export((void *)p, 4096, GDR_EXPORT_PCIE_MAPPING, &d, fds);
	printf("GDR_EXPORT_PCIE_MAPPING: %s\n",
	       rc ? gdr_last_error() : "two dma-bufs");
	CHECK(rc == 0 || errno == EOPNOTSUPP);
	if (!rc) {
		CHECK_INT(d.num_fds, 2);
		close(fds[0]);
		close(fds[1]);
	}

	check_scope = "owner: VMM with gpuDirectRDMACapable";
	CHECK_INT(cutest_vmm_alloc_ex(0, size, 1,
				      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
				      &va, &h),
		  0);
	attrs("VMM memory, owner", va);
	CHECK_INT(gdr_export((void *)(va + 4 * MiB), 8 * MiB, 0, &d, fds), 0);
	CHECK_INT(gdr_export_send(sock, &d, fds), 0);
	close(fds[0]);
	CHECK_INT(wait_done(sock), 0);

	check_scope = "owner: CUDA IPC";
	attrs("cuMemAlloc memory, owner", p);
	CHECK_INT(ct.cuIpcGetMemHandle(&ipc, p), 0);
	CHECK(send(sock, &ipc, sizeof(ipc), 0) == sizeof(ipc));
	CHECK_INT(wait_done(sock), 0);

	check_scope = "owner: VMM shared as a POSIX fd";
	CHECK_INT(ct.cuMemExportToShareableHandle(
			  &vfd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
		  0);
	CHECK_INT(gdr_fds_send(sock, &size, sizeof(size), &vfd, 1), 0);
	CHECK_INT(wait_done(sock), 0);
	close(vfd);
	cutest_vmm_free(va, size, h);

	check_scope = "owner: pool memory from the default pool";
	CHECK_INT(ct.cuMemAllocAsync(&q, 1 * MiB, NULL), 0);
	CHECK_INT(ct.cuStreamSynchronize(NULL), 0);
	attrs("pool memory, owner", q);
	rc = gdr_export((void *)q, 1 * MiB, 0, &d, fds);
	printf("gdr_export of default-pool memory: %s\n",
	       rc ? gdr_last_error() : "exported");
	if (!rc)
		close(fds[0]);
	ct.cuMemFreeAsync(q, NULL);
	ct.cuStreamSynchronize(NULL);
	ct.cuMemFree(p);
	return check_summary("gpu-share (owner)");
}

/* Fork the importer before either side touches CUDA. */
static int two(int (*first)(int), int (*second)(int))
{
	int sv[2], status, rc;
	pid_t pid;

	if (sock_pair(sv))
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		rc = second(sv[1]);
		fflush(NULL);
		_exit(rc);
	}
	close(sv[1]);
	rc = first(sv[0]);
	close(sv[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	if (rc == 77 || status == 77)
		return 77;
	return rc || status ? 1 : 0;
}

/* --- lifetime ------------------------------------------------------------- */
#define LIFE (1024 * MiB)

static int life_owner(int sock)
{
	struct gdr_export_desc d;
	CUdeviceptr p;
	int rc, fds[2];

	if (wait_done(sock)) /* the importer measured its baseline */
		return 1;
	rc = up(1);
	if (rc)
		return rc;
	if (ct.cuMemAlloc(&p, LIFE) ||
	    gdr_export((void *)p, LIFE, 0, &d, fds)) {
		printf("FAIL owner: %s\n", gdr_last_error());
		return 1;
	}
	rc = gdr_export_send(sock, &d, fds);
	close(fds[0]);
	/* Free it and go away: the importer still holds the dma-buf. */
	ct.cuMemFree(p);
	return rc ? 1 : 0;
}

static size_t free_now(void)
{
	size_t f = 0, t = 0;

	ct.cuMemGetInfo(&f, &t);
	return f;
}

static int life_importer(int sock)
{
	struct gdr_export_desc d;
	struct ibv_mr *mr;
	size_t b0, f1, f2, f3;
	int rc, fds[2], status;

	rc = up(1);
	if (rc)
		return rc;
	fakes_reset();
	fakes_install_real_cuda();
	b0 = free_now();
	say_done(sock);
	check_scope = "lifetime";
	CHECK_INT(gdr_export_recv(sock, &d, fds), 0);
	mr = gdr_import_register(&fake_pd, &d, fds, NULL, NULL, 0);
	CHECK(mr != NULL);
	/* The owner has freed the buffer and exited. */
	CHECK(wait(&status) > 0 && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	sleep(1);
	f1 = free_now();
	close(fds[0]);
	f2 = free_now();
	if (mr)
		gdr_deregister(mr);
	sleep(1);
	f3 = free_now();
	printf("lifetime: free GPU memory %llu MiB before; %llu MiB after the "
	       "owner freed 1024 MiB and exited, the importer holding the fd "
	       "and an MR; %llu MiB with the MR only; %llu MiB once released\n",
	       b0 / MiB, f1 / MiB, f2 / MiB, f3 / MiB);
	/* held: 1 GiB (give or take the driver's rounding) still gone */
	CHECK(b0 - f1 >= LIFE - 64 * MiB);
	CHECK(b0 - f2 >= LIFE - 64 * MiB);
	CHECK(f3 + 64 * MiB >= b0);
	return check_summary("gpu-share lifetime");
}

/* The importer is the parent here (it outlives the owner). */
static int lifetime(void)
{
	int sv[2], rc;
	pid_t pid;

	if (sock_pair(sv))
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		rc = life_owner(sv[1]);
		fflush(NULL);
		_exit(rc);
	}
	close(sv[1]);
	rc = pid > 0 ? life_importer(sv[0]) : 1;
	close(sv[0]);
	return rc;
}

/* --- bench ---------------------------------------------------------------- */
#define ROUNDS 101
#define CALLS 40

static double q(double *v, int n, double at)
{
	qsort(v, (size_t)n, sizeof(*v), cutest_cmp_double);
	return v[(int)(at * (n - 1) + 0.5)];
}

/* ns per call of @what, over 20000 calls. */
#define PER_CALL(what)                                                         \
	({                                                                     \
		double t_ = cutest_now_ns();                                   \
		for (int c_ = 0; c_ < 20000; c_++) {                           \
			what;                                                  \
		}                                                              \
		(cutest_now_ns() - t_) / 20000;                                \
	})

/*
 * What gdr_export does beside the driver's export, each part timed alone
 * on the same buffer and dma-buf: where the difference from the bare
 * call goes (a diagnosis beside the ratio, not a goal).
 */
static void parts(CUdeviceptr p, int fd)
{
	struct gdr_ptr_info pi;
	struct gdr_dmabuf_facts f;
	uint8_t boot[16];
	char why[256];
	CUcontext cur;
	struct stat st;
	double cls, facts, fst, pid, bid, ctx;

	cls = PER_CALL(gdr_classify((void *)p, 64 * MiB, false, &pi, why,
				    sizeof(why)));
	facts = PER_CALL(gdr_dmabuf_facts_real(fd, &f, why, sizeof(why)));
	fst = PER_CALL(fstat(fd, &st));
	pid = PER_CALL(getpid());
	bid = PER_CALL(gdr_boot_id(boot, why, sizeof(why)));
	ctx = PER_CALL(ct.cuCtxGetCurrent(&cur));
	printf("bench: export's parts, ns a call: classification %.0f, the "
	       "dma-buf's facts %.0f (one fstat %.0f), getpid %.0f, boot id "
	       "%.0f, cuCtxGetCurrent %.0f: %.0f in all\n",
	       cls, facts, fst, pid, bid, ctx, cls + facts + pid + bid + ctx);
}

static int bench(void)
{
	double ex[ROUNDS], raw[ROUNDS], imp[ROUNDS], reg[ROUNDS], r1[ROUNDS],
		r2[ROUNDS], t0;
	const struct gdr_seam *s;
	struct gdr_export_desc d;
	struct ibv_mr *mr;
	CUdeviceptr p;
	int rc, i, k, fds[2], fd;

	rc = up(1);
	if (rc)
		return rc;
	fakes_reset();
	fakes_install_real_cuda();
	fake_ibv.lean = 1; /* no fdinfo look-up in the recording verbs */
	s = gdr_seam();
	if (ct.cuMemAlloc(&p, 64 * MiB) ||
	    gdr_export((void *)p, 64 * MiB, 0, &d, fds)) {
		printf("FAIL bench setup: %s\n", gdr_last_error());
		return 1;
	}
	for (i = 0; i < ROUNDS; i++) {
		for (k = 0; k < 2; k++) {
			bool lib_first = (i & 1) == 0;
			int which = lib_first ? k : 1 - k;
			int c, f2[2];

			t0 = cutest_now_ns();
			for (c = 0; c < CALLS; c++) {
				if (which == 0) {
					if (!gdr_export((void *)p, 64 * MiB, 0,
							&d, f2))
						close(f2[0]);
				} else if (!ct.cuMemGetHandleForAddressRange(
						   &fd, p, 64 * MiB,
						   CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
						   0)) {
					close(fd);
				}
			}
			(which == 0 ? ex : raw)[i] =
				(cutest_now_ns() - t0) / CALLS / 1000;
			t0 = cutest_now_ns();
			for (c = 0; c < CALLS; c++) {
				if (which == 0) {
					mr = gdr_import_register(&fake_pd, &d,
								 fds, NULL,
								 NULL, 0);
					if (mr)
						gdr_deregister(mr);
				} else {
					mr = s->verbs.reg_dmabuf_mr(
						&fake_pd, d.offset, d.length,
						d.iova, fds[0],
						IBV_ACCESS_LOCAL_WRITE);
					if (mr)
						s->verbs.dereg_mr(mr);
				}
			}
			(which == 0 ? imp : reg)[i] =
				(cutest_now_ns() - t0) / CALLS / 1000;
		}
		r1[i] = ex[i] / raw[i];
		r2[i] = imp[i] / reg[i];
	}
	printf("bench: %d rounds x %d calls, order alternating, 64 MiB "
	       "cuMemAlloc buffer\n",
	       ROUNDS, CALLS);
	printf("bench: gdr_export+close median %.2f us, bare "
	       "cuMemGetHandleForAddressRange+close %.2f us\n",
	       q(ex, ROUNDS, 0.5), q(raw, ROUNDS, 0.5));
	printf("bench: export ratio library/bare = %.4f (quartiles "
	       "%.4f..%.4f)\n",
	       q(r1, ROUNDS, 0.5), q(r1, ROUNDS, 0.25), q(r1, ROUNDS, 0.75));
	printf("bench: gdr_import_register+gdr_deregister median %.2f us, "
	       "ibv_reg_dmabuf_mr+ibv_dereg_mr (recording verbs) %.2f us\n",
	       q(imp, ROUNDS, 0.5), q(reg, ROUNDS, 0.5));
	printf("bench: import ratio library/bare = %.4f (quartiles "
	       "%.4f..%.4f); the library adds one fstat per fd and its "
	       "walk\n",
	       q(r2, ROUNDS, 0.5), q(r2, ROUNDS, 0.25), q(r2, ROUNDS, 0.75));
	parts(p, fds[0]);
	close(fds[0]);
	ct.cuMemFree(p);
	return 0;
}

/* What cuPointerGetAttributes costs by the number of attributes asked,
 * in the order gdr_classify asks them. */
static void attr_costs(const struct gdr_cuda_lib *lib, CUdeviceptr p)
{
	CUpointer_attribute a[CONF_CLASSIFY_ATTRS];
	unsigned long long v[10][2];
	void *data[10];
	int i, k;

	memcpy(a, conf_classify_attrs, sizeof(a));
	for (i = 0; i < 10; i++)
		data[i] = v[i];
	for (k = 1; k <= 10; k++) {
		double ns = PER_CALL(lib->cu.cuPointerGetAttributes(
			(unsigned int)k, a, data, p));

		printf("bench-parts: cuPointerGetAttributes, first %2d "
		       "attributes: %.0f ns\n",
		       k, ns);
	}
	for (i = 0; i < 10; i++) {
		double ns = PER_CALL(
			lib->cu.cuPointerGetAttributes(1, &a[i], data, p));

		printf("bench-parts: attribute %d alone: %.0f ns\n", (int)a[i],
		       ns);
	}
}

/*
 * Where gdr_export's difference from the bare export goes, measured in
 * place: each round times the bare export+close, the same with one of the
 * library's parts added (its classification, the dma-buf's fstat,
 * getpid, the classification and the fstat together), and gdr_export
 * itself; each is divided by the bare time of its round. The order
 * turns each round. A diagnosis, not a goal.
 */
#define PARTS 6
static int bench_parts(void)
{
	static const char *const name[PARTS] = {
		"bare export+close",	       "bare + gdr_classify",
		"bare + fstat of the dma-buf", "bare + getpid",
		"bare + gdr_classify + fstat", "gdr_export+close",
	};
	double t[PARTS][ROUNDS], r[PARTS][ROUNDS], t0;
	const struct gdr_cuda_lib *lib;
	struct gdr_export_desc d;
	struct gdr_ptr_info pi;
	char why[256];
	struct stat st;
	CUdeviceptr p;
	int rc, i, k, c, w, fd, f2[2];

	rc = up(1);
	if (rc)
		return rc;
	fakes_reset();
	fakes_install_real_cuda();
	if (ct.cuMemAlloc(&p, 64 * MiB) ||
	    gdr_export((void *)p, 64 * MiB, 0, &d, f2)) {
		printf("FAIL bench setup: %s\n", gdr_last_error());
		return 1;
	}
	close(f2[0]);
	lib = gdr_cuda_table();
	for (i = 0; i < ROUNDS; i++) {
		for (k = 0; k < PARTS; k++) {
			w = (k + i) % PARTS;
			t0 = cutest_now_ns();
			for (c = 0; c < CALLS; c++) {
				if (w == 5) {
					if (!gdr_export((void *)p, 64 * MiB, 0,
							&d, f2))
						close(f2[0]);
					continue;
				}
				if (w == 1 || w == 4)
					gdr_classify((void *)p, 64 * MiB, false,
						     &pi, why, sizeof(why));
				if (w == 3)
					(void)getpid();
				if (ct.cuMemGetHandleForAddressRange(
					    &fd, p, 64 * MiB,
					    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
					    0))
					continue;
				if (w == 2 || w == 4)
					fstat(fd, &st);
				close(fd);
			}
			t[w][i] = (cutest_now_ns() - t0) / CALLS;
		}
		for (w = 0; w < PARTS; w++)
			r[w][i] = t[w][i] / t[0][i];
	}
	printf("bench-parts: %d rounds x %d calls, order turning, 64 MiB "
	       "cuMemAlloc buffer; each against the bare export of its "
	       "round\n",
	       ROUNDS, CALLS);
	for (w = 0; w < PARTS; w++)
		printf("bench-parts: %-40s median %8.0f ns, ratio %.4f "
		       "(quartiles %.4f..%.4f)\n",
		       name[w], q(t[w], ROUNDS, 0.5), q(r[w], ROUNDS, 0.5),
		       q(r[w], ROUNDS, 0.25), q(r[w], ROUNDS, 0.75));
	attr_costs(lib, p);
	ct.cuMemFree(p);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "share";

	if (!strcmp(what, "share"))
		return two(owner, importer);
	if (!strcmp(what, "lifetime"))
		return lifetime();
	if (!strcmp(what, "bench"))
		return bench();
	if (!strcmp(what, "bench-parts"))
		return bench_parts();
	printf("usage: test-gpu-share share|lifetime|bench|bench-parts\n");
	return 2;
}
