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
 * Exits 77 where there is no GPU.
 */
#include <dlfcn.h>
#include <errno.h>
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
	char why[256];
	struct ibv_mr *mr;
	int rc = cutest_init(0, why, sizeof(why));

	if (rc) {
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
		return rc;
	}
	fakes_reset();
	fakes_install_real_cuda();
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
	char why[256];
	int before, after, rc = cutest_init(1, why, sizeof(why));

	if (rc) {
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
		return rc;
	}
	fakes_reset();
	fakes_install_real_cuda();
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

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!strcmp(what, "no-init"))
		return no_init();
	if (!strcmp(what, "fork-child"))
		return fork_child();
	if (!strcmp(what, "primary"))
		return primary();
	fprintf(stderr, "usage: %s no-init|fork-child|primary\n", argv[0]);
	return 2;
}
