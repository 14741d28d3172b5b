/* SPDX-License-Identifier: MIT */
/*
 * Registering host memory in a process without CUDA: the question "is
 * libcuda.so.1 loaded?" costs no dlopen (which would search the library
 * path) while nothing new was loaded, and a libcuda.so.1 the program
 * loads later is seen at the next call.
 *   test-noload STUB   STUB: a library whose soname is libcuda.so.1
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fakes.h"

static int dlopens;

/* Every dlopen the library makes lands here first. */
void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	dlopens++;
	return real(file, mode);
}

static int register_host(int times)
{
	static char buf[65536];
	int i, fails = 0;

	for (i = 0; i < times; i++) {
		struct ibv_mr *mr = gdr_register(&fake_pd, buf, sizeof(buf));

		if (!mr || gdr_deregister(mr))
			fails++;
	}
	return fails;
}

int main(int argc, char **argv)
{
	struct gdr_cuda_ops ops;
	char why[256];
	void *stub;
	int before;

	if (argc < 2) {
		fprintf(stderr, "usage: %s STUB\n", argv[0]);
		return 2;
	}
	check_scope = "no libcuda in the process";
	if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
		printf("SKIP: libcuda.so.1 is already loaded here\n");
		return 77;
	}
	fakes_reset();
	fakes_install_real_cuda();
	CHECK_INT(register_host(1), 0); /* the first call probes */
	CHECK_INT(gdr_cuda_load(&ops, GDR_CUDA_NOLOAD, why, sizeof(why)),
		  ENOENT);
	CHECK_HAS(why, "not loaded");
	before = dlopens;
	CHECK_INT(register_host(100), 0);
	CHECK_INT(gdr_cuda_load(&ops, GDR_CUDA_NOLOAD, why, sizeof(why)),
		  ENOENT);
	CHECK_INT(dlopens - before, 0);
	printf("100 host registrations without CUDA: %d dlopen calls\n",
	       dlopens - before);

	check_scope = "libcuda loaded later";
	stub = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	CHECK(stub != NULL);
	if (!stub) {
		printf("dlopen(%s): %s\n", argv[1], dlerror());
		return check_summary("noload");
	}
	before = dlopens;
	why[0] = 0;
	/* The stub is found by its soname; it lacks the driver's entry
	 * points, so the load fails for that reason, not as "not loaded". */
	CHECK(gdr_cuda_load(&ops, GDR_CUDA_NOLOAD, why, sizeof(why)) != 0);
	CHECK(!strstr(why, "not loaded"));
	CHECK_INT(dlopens - before, 1);
	printf("after loading a libcuda.so.1: %d dlopen, \"%s\"\n",
	       dlopens - before, why);
	/* Once found, it is found at every later call too: a library that
	 * is loaded is never remembered as absent. */
	before = dlopens;
	why[0] = 0;
	CHECK(gdr_cuda_load(&ops, GDR_CUDA_NOLOAD, why, sizeof(why)) != 0);
	CHECK(!strstr(why, "not loaded"));
	CHECK_INT(dlopens - before, 1);
	dlclose(stub);

	/* Without GDR_CUDA_NOLOAD and nowhere to load it from, the reason
	 * says what to install (unless this machine has a driver). */
	check_scope = "no libcuda.so.1 to load";
	why[0] = 0;
	if (gdr_cuda_load(&ops, 0, why, sizeof(why)) == ENOENT) {
		CHECK_HAS(why, "libcuda.so.1 could not be loaded (");
		CHECK_HAS(why, "install the NVIDIA driver, or in a container "
			       "mount the driver libraries (NVIDIA Container "
			       "Toolkit)");
	}
	gdr_seam_install(NULL);
	return check_summary("noload");
}
