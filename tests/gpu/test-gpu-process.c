/* SPDX-License-Identifier: MIT */
/*
 * What the library does to the process it lives in, on a real driver; each
 * case needs a process of its own, in the state it describes:
 *   no-init      registering host memory neither loads nor initialises
 *                CUDA, and a child forked afterwards can use CUDA
 *   fork-child   after the parent used CUDA, a forked child registers host
 *                memory, and its device memory is refused with the cause
 *   primary      the primary context a VMM export retains is released, or
 *                the caller's current context on the device is reused
 *   bar1         BAR1 from NVML matches nvidia-smi; registrations (and
 *                their failures) never load NVML; a failure asks an NVML
 *                the process has loaded
 * Exits 77 where there is no GPU.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cutest.h"
#include "fakes.h"

#define MiB (1024ull * 1024)

static int cuda_loaded(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

/* Run @fn in a child; its exit status. */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int rc = fn();

		fflush(NULL);
		_exit(rc);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int child_uses_cuda(void)
{
	char why[256];
	int rc = cutest_init(1, why, sizeof(why));

	if (rc)
		printf("child: %s\n", why);
	return rc;
}

static int have_gpu(void)
{
	char why[256];
	int rc = cutest_init(1, why, sizeof(why));

	if (rc)
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
	return rc;
}

/* CUDA up with a context (@no_context 0) and the fakes over the real
 * driver: 0, or 77/1 with the reason printed. */
static int on_gpu(int no_context)
{
	char why[256];
	int rc = cutest_init(no_context, why, sizeof(why));

	if (rc) {
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
		return rc;
	}
	fakes_reset();
	fakes_install_real_cuda();
	return 0;
}

static int no_init(void)
{
	struct gdr_reg_info info;
	char buf[8192];
	struct ibv_mr *mr;
	int rc;

	/* Is there a GPU at all? Ask in a child, so that this process never
	 * loads the driver itself. */
	rc = in_child(have_gpu);
	if (rc) {
		/* The child said why. */
		return rc;
	}
	check_scope = "host memory, libcuda never loaded";
	fakes_reset();
	fakes_install_real_cuda();
	CHECK(!cuda_loaded());
	memset(&info, 0, sizeof(info));
	mr = gdr_register_ex(&fake_pd, buf, sizeof(buf), NULL, &info,
			     sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_HOST);
	CHECK_INT(info.mem_type, GDR_MEM_HOST);
	if (mr)
		CHECK_INT(gdr_deregister(mr), 0);
	CHECK(!cuda_loaded());
	/* A CUDA worker forked now starts CUDA itself. */
	CHECK_INT(in_child(child_uses_cuda), 0);
	printf("host registration: libcuda.so.1 %s; a forked child's cuInit: "
	       "ok\n",
	       cuda_loaded() ? "LOADED" : "not loaded");
	return check_summary("no-init");
}

static CUdeviceptr parent_dev;

static int child_registers(void)
{
	struct gdr_reg_info info;
	char buf[8192];
	struct ibv_mr *mr;

	check_scope = "child: host memory";
	memset(&info, 0, sizeof(info));
	mr = gdr_register_ex(&fake_pd, buf, sizeof(buf), NULL, &info,
			     sizeof(info));
	if (!mr)
		printf("child: %s\n", gdr_last_error());
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_HOST);
	if (mr)
		CHECK_INT(gdr_deregister(mr), 0);

	/* The parent's device memory: the driver answers NOT_INITIALIZED
	 * here; the kernel would refuse the address as host memory. */
	check_scope = "child: the parent's device memory";
	fake_ibv.reg_errno = EFAULT;
	errno = 0;
	mr = gdr_register_ex(&fake_pd, (void *)parent_dev, 4096, NULL, &info,
			     sizeof(info));
	printf("child, device pointer: errno %d: %s\n", errno,
	       gdr_last_error());
	CHECK(mr == NULL);
	CHECK_INT(errno, EFAULT);
	CHECK_INT(info.mem_type, GDR_MEM_HOST);
	CHECK_HAS(gdr_last_error(), "CUDA_ERROR_NOT_INITIALIZED");
	CHECK_HAS(gdr_last_error(), "forked after its parent used CUDA");
	return check_failed ? 1 : 0;
}

static int fork_child(void)
{
	struct ibv_mr *mr;
	int rc = on_gpu(0);

	if (rc)
		return rc;
	CHECK_INT(ct.cuMemAlloc(&parent_dev, 2 * MiB), CUDA_SUCCESS);
	check_scope = "parent: device memory";
	mr = gdr_register(&fake_pd, (void *)parent_dev, 4096);
	CHECK(mr != NULL);
	if (mr)
		gdr_deregister(mr);
	check_scope = "a child forked after the parent used CUDA";
	CHECK_INT(in_child(child_registers), 0);
	ct.cuMemFree(parent_dev);
	return check_summary("fork-child");
}

static void state(CUdevice dev, int *active)
{
	unsigned int flags;

	*active = -1;
	CHECK_INT(ct.cuDevicePrimaryCtxGetState(dev, &flags, active),
		  CUDA_SUCCESS);
}

static int primary(void)
{
	CUmemGenericAllocationHandle h;
	CUcontext ctx, cur;
	CUdevice dev;
	CUdeviceptr va;
	struct ibv_mr *mr;
	int before, after, rc = on_gpu(1);

	if (rc)
		return rc;
	CHECK_INT(ct.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	/* VMM memory, made with a context that is then given up. */
	CHECK_INT(ct.cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	CHECK_INT(ct.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	CHECK_INT(cutest_vmm_alloc(0, 2 * MiB, 1, &va, &h), 0);
	CHECK_INT(ct.cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	CHECK_INT(ct.cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);

	check_scope = "VMM export with no context current";
	state(dev, &before);
	mr = gdr_register(&fake_pd, (void *)va, 2 * MiB);
	if (!mr)
		printf("%s\n", gdr_last_error());
	CHECK(mr != NULL);
	state(dev, &after);
	printf("primary context active before %d, after %d\n", before, after);
	CHECK_INT(after, before);
	CHECK_INT(ct.cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == NULL);
	if (mr)
		gdr_deregister(mr);

	check_scope = "VMM export with the caller's context on the device";
	CHECK_INT(ct.cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	CHECK_INT(ct.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	mr = gdr_register(&fake_pd, (void *)va, 2 * MiB);
	CHECK(mr != NULL);
	CHECK_INT(ct.cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == ctx);
	if (mr)
		gdr_deregister(mr);
	CHECK_INT(ct.cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	CHECK_INT(ct.cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
	cutest_vmm_free(va, 2 * MiB, h);
	return check_summary("primary");
}

static int nvml_loaded(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

/* nvidia-smi's BAR1 total of GPU 0 in MiB, or -1. */
static long smi_bar1_total(void)
{
	FILE *p = popen("nvidia-smi -i 0 -q -d MEMORY 2>/dev/null", "r");
	char line[256];
	long mib = -1;
	int in_bar1 = 0;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, "BAR1 Memory Usage"))
			in_bar1 = 1;
		else if (in_bar1 && strstr(line, "Total") &&
			 sscanf(strchr(line, ':') ? strchr(line, ':') + 1 : "",
				"%ld", &mib) == 1)
			break;
	}
	pclose(p);
	return mib;
}

/* A registration of @dev's memory that verbs refuse with ENOMEM. */
static void failing_registration(CUdeviceptr dev, const char *want,
				 const char * not )
{
	struct ibv_mr *mr;

	fake_ibv.dmabuf_errno = ENOMEM;
	errno = 0;
	mr = gdr_register(&fake_pd, (void *)dev, 2 * MiB);
	CHECK(mr == NULL);
	CHECK_INT(errno, ENOMEM);
	printf("ENOMEM: %s\n", gdr_last_error());
	if (want)
		CHECK_HAS(gdr_last_error(), want);
	if (not )
		CHECK_(!strstr(gdr_last_error(), not ),
		       "the message says \"%s\"", not );
	if (mr)
		gdr_deregister(mr);
	fake_ibv.dmabuf_errno = 0;
}

static int bar1(void)
{
	const struct gdr_dev *d;
	struct gdr_bar1_view v, again;
	CUdeviceptr dev;
	struct ibv_mr *mr;
	long smi;
	int rc = on_gpu(0);

	if (rc)
		return rc;
	CHECK_INT(ct.cuMemAlloc(&dev, 2 * MiB), CUDA_SUCCESS);

	check_scope = "registrations leave NVML alone";
	CHECK(!nvml_loaded());
	mr = gdr_register(&fake_pd, (void *)dev, 2 * MiB);
	CHECK(mr != NULL);
	if (mr)
		gdr_deregister(mr);
	d = gdr_dev_get(0);
	CHECK(d != NULL);
	if (!d)
		return check_summary("bar1");
	printf("gpu0 c2c %s; NVML %s after a registration\n",
	       d->c2c == GDR_YES  ? "yes"
	       : d->c2c == GDR_NO ? "no"
				  : "unknown",
	       nvml_loaded() ? "LOADED" : "not loaded");
	if (d->c2c != GDR_YES) /* the C2C probe asks NVML on Grace only */
		CHECK(!nvml_loaded());
	gdr_bar1_read(d, GDR_NVML_NOLOAD, &v);
	CHECK_INT(v.err, ENOENT);
	CHECK_HAS(v.why, "not loaded in this process");
	CHECK(!nvml_loaded());

	check_scope = "a failure with NVML not loaded";
	failing_registration(dev, "not known here: NVML is not loaded", NULL);
	CHECK(!nvml_loaded());

	check_scope = "the report's read";
	gdr_bar1_read(d, 0, &v);
	printf("BAR1: err %d (%s), %llu of %llu bytes used\n", v.err, v.why,
	       v.b.used, v.b.total);
	CHECK_INT(v.err, 0);
	CHECK(v.b.total > 0 && v.b.used <= v.b.total);
	smi = smi_bar1_total();
	printf("nvidia-smi: BAR1 total %ld MiB; NVML here %llu MiB\n", smi,
	       v.b.total >> 20);
	if (smi >= 0)
		CHECK_INT((long)(v.b.total >> 20), smi);
	else
		printf("nvidia-smi gave no BAR1 total: not compared\n");
	CHECK(nvml_loaded());

	check_scope = "NVML loaded: a failure asks it";
	gdr_bar1_read(d, GDR_NVML_NOLOAD, &again);
	CHECK_INT(again.err, 0);
	CHECK_INT(again.b.total, v.b.total);
	/* An idle GPU's BAR1 is not the cause: nothing said of it. */
	if ((long double)v.b.used * 100 < (long double)v.b.total * 50)
		failing_registration(dev, NULL, "BAR1");
	ct.cuMemFree(dev);
	return check_summary("bar1");
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!strcmp(what, "no-init"))
		return no_init();
	if (!strcmp(what, "fork-child"))
		return fork_child();
	if (!strcmp(what, "primary"))
		return primary();
	if (!strcmp(what, "bar1"))
		return bar1();
	fprintf(stderr, "usage: %s no-init|fork-child|primary|bar1\n", argv[0]);
	return 2;
}
