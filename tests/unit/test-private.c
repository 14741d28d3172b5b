/* SPDX-License-Identifier: MIT */
/*
 * The private interface (gpudirect-private.h) over the fakes:
 *   - gdr_private_model_read: what a capture records of each GPU (C2C
 *     yes, no and unknown; total memory) is what the node answered;
 *   - gdr_private_replay: models past its limits refused;
 *   - gdr_private_reg_device, the preload's call: device memory (cuMemAlloc,
 *     capable VMM) registered with the caller's iova and access, the
 *     library's refusal of device memory (pool, VMM without
 *     gpuDirectRDMACapable, cuMemAlloc memory no path takes) given with
 *     its errno and reason, and everything that is not device memory (or
 *     no buffer) ENXIO with nothing said.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>

#include "check.h"
#include "fakes.h"
#include "private/gpudirect-private.h"

static struct fixture fx;

static void node(void)
{
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
}

static ssize_t no_link(const char *path, char *buf, size_t n)
{
	(void)path, (void)buf, (void)n;
	errno = ENOENT;
	return -1;
}

static int no_file(const char *path)
{
	(void)path;
	errno = ENOENT;
	return -1;
}

static void model_read(void)
{
	static struct gdr_model m;
	int c2c[] = { 1, 0, -1 };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		check_scope = "model_read: a GPU's C2C answer and memory";
		fakes_reset();
		fixture_make(&fx);
		fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
		fake_model.gpu[0].c2c = c2c[i];
		snprintf(fake_model.gpu[0].c2c_why,
			 sizeof(fake_model.gpu[0].c2c_why), "%s",
			 c2c[i] < 0 ? "the test's reason" : "");
		fake_model.gpu[0].total_mem = 80ULL << 30;
		fakes_install(&fx, NULL, NULL, NULL);
		CHECK_INT(gdr_private_model_read(&m, NULL, 0), 0);
		CHECK(m.num_gpus >= 1);
		CHECK_INT(m.gpu[0].c2c, c2c[i]);
		if (c2c[i] < 0)
			CHECK_HAS(m.gpu[0].c2c_why, "the test's reason");
		CHECK(m.gpu[0].total_mem == 80ULL << 30);
		fixture_remove(&fx);
	}
	/* A NIC's DMA-BUF answer as a replay reads it back: EBADF (the
	 * probe's bad fd reached the driver) where it takes dma-bufs, the
	 * probe's errno where not. */
	for (i = 0; i < 2; i++) {
		struct ibv_context *ctx = &fake_context;
		int probe = i ? EOPNOTSUPP : EBADF;

		check_scope = "model_read: a NIC's DMA-BUF probe";
		node();
		fake_model.nic[0].dmabuf_probe_errno = probe;
		gdr_model_use(&fake_model);
		CHECK_INT(gdr_private_model_read(&m, &ctx, 1), 0);
		CHECK_INT(m.num_nics, 1);
		CHECK_INT(m.nic[0].dmabuf_probe_errno, probe);
		CHECK_STR(m.nic[0].name, fake_model.nic[0].name);
		fixture_remove(&fx);
	}
}

static void replay_limits(void)
{
	static struct gdr_model m;
	struct gdr_files files = { no_file, no_link };
	struct ibv_context **ctxs;
	unsigned int num;
	char why[256];

	check_scope = "replay: models past the limits";
	memset(&m, 0, sizeof(m));
	m.num_nics = GDR_MODEL_MAX_NICS + 1;
	CHECK_INT(gdr_private_replay(&m, &files, &ctxs, &num, why, sizeof(why)),
		  EINVAL);
	CHECK_HAS(why, "at most");
	m.num_nics = -1;
	CHECK_INT(gdr_private_replay(&m, &files, &ctxs, &num, why, sizeof(why)),
		  EINVAL);
	m.num_nics = 0;
	m.num_gpus = GDR_MODEL_MAX_GPUS + 1;
	CHECK_INT(gdr_private_replay(&m, &files, &ctxs, &num, why, sizeof(why)),
		  EINVAL);
	m.num_gpus = -1;
	CHECK_INT(gdr_private_replay(&m, &files, &ctxs, &num, why, sizeof(why)),
		  EINVAL);
	m.num_gpus = 0;
	CHECK_INT(gdr_private_replay(&m, NULL, &ctxs, &num, why, sizeof(why)),
		  EINVAL);
	/* files with either reader missing: nothing to read the node by */
	files.open_file = NULL;
	CHECK_INT(gdr_private_replay(&m, &files, &ctxs, &num, why, sizeof(why)),
		  EINVAL);
	CHECK_HAS(why, "with files to read");
	files.open_file = no_file;
	files.read_link = NULL;
	CHECK_INT(gdr_private_replay(&m, &files, &ctxs, &num, why, sizeof(why)),
		  EINVAL);
	files.read_link = no_link;
	/* At the limits: taken; twice, and ended twice (nothing freed
	 * twice). */
	m.num_nics = GDR_MODEL_MAX_NICS;
	CHECK_INT(gdr_private_replay(&m, &files, &ctxs, &num, why, sizeof(why)),
		  0);
	CHECK_INT(num, GDR_MODEL_MAX_NICS);
	CHECK_INT(gdr_private_replay(&m, &files, &ctxs, &num, why, sizeof(why)),
		  0);
	gdr_private_replay_end();
	gdr_private_replay_end();
}

/* --host-root: DIR/sys and DIR/proc must be directories, whatever fd an
 * open of them gets (0 too, with stdin closed). */
static void host_root(void)
{
	char dir[256], why[512];
	int in;

	check_scope = "host_root: sys a regular file";
	node();
	snprintf(dir, sizeof(dir), "%s/hr", fx.root);
	fixture_write(fx.root, "hr/proc/version", "Linux\n");
	fixture_write(fx.root, "hr/sys", "not a directory\n");
	CHECK_INT(gdr_private_host_root(dir, why, sizeof(why)), ENOENT);
	CHECK_HAS(why, "/sys is not a directory inside");
	check_scope = "host_root: sys a regular file, stdin closed";
	in = dup(0);
	close(0);
	CHECK_INT(gdr_private_host_root(dir, why, sizeof(why)), ENOENT);
	CHECK_HAS(why, "/sys is not a directory inside");
	CHECK(fcntl(0, F_GETFD) < 0); /* nothing left open on 0 */
	dup2(in, 0);
	close(in);

	check_scope = "host_root: sys a directory, no proc";
	snprintf(dir, sizeof(dir), "%s/hr2", fx.root);
	fixture_write(fx.root, "hr2/sys/kernel/x", "1\n");
	CHECK_INT(gdr_private_host_root(dir, why, sizeof(why)), ENOENT);
	CHECK_HAS(why, "/proc is not a directory inside");
	check_scope = "host_root: both directories";
	fixture_write(fx.root, "hr2/proc/version", "Linux\n");
	CHECK_INT(gdr_private_host_root(dir, why, sizeof(why)), 0);
	CHECK_INT(gdr_open_root_set(NULL), 0);
	fixture_remove(&fx);
	gdr_seam_install(NULL);
}

/* gdr_private_record: each file and link read, once, in the order first
 * read; one that could not be read is not listed. */
static void record(void)
{
	const char *const *paths;
	char a[512], b[512], missing[512], buf[64];
	unsigned int before, n;
	int fd, i;

	check_scope = "record: files read";
	node();
	snprintf(a, sizeof(a), "%s/a", fx.root);
	snprintf(b, sizeof(b), "%s/b", fx.root);
	snprintf(missing, sizeof(missing), "%s/missing", fx.root);
	fixture_write(fx.root, "a", "1\n");
	fixture_write(fx.root, "b", "2\n");
	CHECK_INT(gdr_private_record(), 0);
	CHECK_INT(gdr_private_record(), 0); /* twice: still one recorder */
	before = gdr_private_recorded(&paths);
	for (i = 0; i < 2; i++) {
		fd = gdr_seam()->open_file(a);
		CHECK(fd >= 0);
		close(fd);
	}
	CHECK(gdr_seam()->open_file(missing) < 0);
	CHECK(gdr_seam()->read_link(missing, buf, sizeof(buf)) < 0);
	fd = gdr_seam()->open_file(b);
	CHECK(fd >= 0);
	close(fd);
	n = gdr_private_recorded(&paths);
	CHECK_INT(n, before + 2);
	if (n == before + 2) {
		CHECK_STR(paths[before], a);
		CHECK_STR(paths[before + 1], b);
	}
	fixture_remove(&fx);
	gdr_seam_install(NULL);
}

static void reg_device(void)
{
	struct ibv_mr *mr = (struct ibv_mr *)1;
	char why[512], host[64];
	char *p;

	check_scope = "reg_device: device memory, the caller's iova and access";
	node();
	p = fake_alloc_device(0, 4 << 20);
	CHECK_INT(gdr_private_reg_device(&fake_pd, p + 0x1234, 8192, 0x9000,
					 IBV_ACCESS_LOCAL_WRITE |
						 IBV_ACCESS_REMOTE_READ,
					 &mr, why, sizeof(why)),
		  0);
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.dmabuf_calls, 1);
	CHECK_INT(fake_ibv.last_iova, 0x9000);
	CHECK_INT(fake_ibv.last_access,
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK_INT(fake_ibv.last_offset, 0x234);
	if (mr) {
		CHECK(mr->addr == p + 0x1234);
		CHECK_INT(mr->length, 8192);
		CHECK_INT(gdr_deregister(mr), 0);
	}
	CHECK_INT(fake_ibv.live_mrs, 0);

	check_scope = "reg_device: device memory the library refuses";
	fake_cu.allocs[fake_cu.num_allocs - 1].not_rdma = 1;
	fake_cu.allocs[fake_cu.num_allocs - 1].pool = 1;
	mr = (struct ibv_mr *)1;
	CHECK_INT(gdr_private_reg_device(&fake_pd, p, 4096, 0, 1, &mr, why,
					 sizeof(why)),
		  EINVAL);
	CHECK(mr == NULL);
	CHECK_HAS(why, "stream-ordered memory pool");
	CHECK_INT(fake_ibv.dmabuf_calls, 1);

	check_scope = "reg_device: not device memory, or no buffer: ENXIO";
	strcpy(why, "stale");
	CHECK_INT(gdr_private_reg_device(&fake_pd, host, sizeof(host), 0, 1,
					 &mr, why, sizeof(why)),
		  ENXIO);
	CHECK(mr == NULL);
	CHECK_STR(why, "");
	/* A pointer CUDA answers for with an error, not a memory type: not
	 * the library's either, and the classification's words not kept. */
	fake_cu.attrs_result = CUDA_ERROR_UNKNOWN;
	strcpy(why, "stale");
	CHECK_INT(gdr_private_reg_device(&fake_pd, host, sizeof(host), 0, 1,
					 &mr, why, sizeof(why)),
		  ENXIO);
	CHECK_STR(why, "");
	fake_cu.attrs_result = CUDA_SUCCESS;
	strcpy(why, "stale");
	CHECK_INT(gdr_private_reg_device(&fake_pd, p, 0, 0, 1, &mr, why,
					 sizeof(why)),
		  ENXIO);
	CHECK_STR(why, "");
	CHECK_INT(gdr_private_reg_device(NULL, p, 4096, 0, 1, &mr, why,
					 sizeof(why)),
		  ENXIO);
	CHECK_INT(gdr_private_reg_device(&fake_pd, NULL, 4096, 0, 1, &mr, why,
					 sizeof(why)),
		  ENXIO);
	CHECK_INT(fake_ibv.dmabuf_calls + fake_ibv.reg_calls, 1);
	fixture_remove(&fx);
}

/*
 * Device memory the library refuses is said, not passed on in silence:
 * cuMemAlloc memory no path takes (a NIC that refuses dma-bufs, no
 * nvidia-peermem) and VMM memory made without gpuDirectRDMACapable each
 * come back with an errno other than ENXIO (the preload's "not mine") and
 * their reason, no MR; pool memory was above. Then VMM memory that is
 * capable is registered as cuMemAlloc memory is, at the caller's iova.
 */
static void reg_device_refused(void)
{
	struct ibv_mr *mr;
	char why[512];
	char *p;
	int err;

	check_scope = "reg_device: cuMemAlloc memory no path takes";
	node();
	fake_ibv.dmabuf_errno = EOPNOTSUPP;
	p = fake_alloc_device(0, 4 << 20);
	mr = (struct ibv_mr *)1;
	why[0] = '\0';
	err = gdr_private_reg_device(&fake_pd, p, 8192, (uintptr_t)p, 7, &mr,
				     why, sizeof(why));
	CHECK_INT(err, EOPNOTSUPP);
	CHECK(mr == NULL);
	CHECK_HAS(why, "dmabuf failed");
	CHECK_HAS(why, "EOPNOTSUPP");
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);

	check_scope = "reg_device: VMM memory without gpuDirectRDMACapable";
	node();
	p = fake_vmm(0, 1, 2 << 20, 1);
	mr = (struct ibv_mr *)1;
	why[0] = '\0';
	err = gdr_private_reg_device(&fake_pd, p, 8192, (uintptr_t)p, 7, &mr,
				     why, sizeof(why));
	CHECK_INT(err, EINVAL);
	CHECK(mr == NULL);
	CHECK_HAS(why, "gpuDirectRDMACapable");
	CHECK_INT(fake_ibv.dmabuf_calls, 0);

	check_scope = "reg_device: capable VMM memory, the caller's iova";
	p = fake_vmm(0, 1, 2 << 20, 0);
	CHECK_INT(gdr_private_reg_device(&fake_pd, p + 0x1234, 8192, 0x7700234,
					 7, &mr, why, sizeof(why)),
		  0);
	CHECK_INT(fake_ibv.dmabuf_calls, 1);
	CHECK_INT(fake_ibv.last_iova, 0x7700234);
	CHECK_INT(fake_ibv.last_access, 7);
	if (mr) {
		CHECK(mr->addr == p + 0x1234);
		CHECK_INT(gdr_deregister(mr), 0);
	}
	fixture_remove(&fx);
}

/* gdr_private_report_create clears the thread's last error (a report
 * made is a call that succeeded); gdr_private_storage_report refuses
 * what it cannot read. */
static void report_calls(void)
{
	static struct gdr_storage st;
	struct gdr_report *r;

	check_scope = "report_create: the last error cleared";
	node();
	CHECK(gdr_register(NULL, NULL, 0) == NULL);
	CHECK(gdr_last_error()[0] != '\0');
	r = gdr_private_report_create(NULL, 0, NULL, 0);
	CHECK(r != NULL);
	CHECK_STR(gdr_last_error(), "");

	check_scope = "report_create: one shown, ranked among two";
	{
		struct ibv_context *one[2] = { &fake_context, NULL };
		struct ibv_context *two[2] = { &fake_context, &fake_context };
		struct gdr_report_item it;
		struct gdr_report *q;
		const char *count = NULL;
		unsigned int i;

		q = gdr_private_report_create(one, 1, two, 2);
		CHECK(q != NULL);
		for (i = 0; q && i < gdr_report_num_items(q); i++)
			if (!gdr_report_item(q, i, &it, sizeof(it)) &&
			    !strcmp(it.section, "node") &&
			    !strcmp(it.key, "rdma_devices"))
				count = it.value;
		/* the devices the report is of, not those ranked */
		CHECK(count && !strcmp(count, "1"));
		gdr_report_destroy(q);

		check_scope = "report_create: a NULL context last";
		CHECK(gdr_private_report_create(one, 2, two, 2) == NULL);
		CHECK_INT(errno, EINVAL);
		CHECK_HAS(gdr_last_error(), "ctxs[1] is NULL");
	}

	check_scope = "storage_report: arguments";
	CHECK_INT(gdr_private_storage_report(NULL, &st, NULL, 0), EINVAL);
	CHECK_INT(gdr_private_storage_report(r, NULL, NULL, 0), EINVAL);
	CHECK_INT(gdr_private_storage_report(r, &st, NULL, 1), EINVAL);
	gdr_report_destroy(r);
	fixture_remove(&fx);
	gdr_seam_install(NULL);
}

int main(void)
{
	model_read();
	replay_limits();
	host_root();
	record();
	report_calls();
	reg_device();
	reg_device_refused();
	return check_summary("private");
}
