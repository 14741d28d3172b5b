/* SPDX-License-Identifier: MIT */
/*
 * Resolving the CUDA driver's entry points the way each driver generation
 * offers them, with the same binary: cuGetProcAddress_v2 (CUDA 12+), the
 * 4-argument cuGetProcAddress of 11.3-11.8, and plain ABI symbols before
 * that. Each fake driver is a symbol table. Then NVML the same way: this
 * program's dlopen/dlsym/dlclose hand libnvidia-ml.so.1 out as a fake
 * symbol table (with or without the C2C query), so gdr_nvml_c2c() and
 * gdr_nvml_bar1() run as they would over a real one.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fakes.h"

/* Which generation the fake driver is, and what it was asked. */
static int generation; /* 12, 11 (11.8), 10 (before 11.3) */
static int asked_version[64];
static char asked_name[64][48];
static int asked;

static CUresult d_init(unsigned int f)
{
	return CUDA_SUCCESS;
}
static CUresult d_version(int *v)
{
	*v = generation == 12 ? 12080 : generation == 11 ? 11080 : 11020;
	return CUDA_SUCCESS;
}
static CUresult d_any(void)
{
	return CUDA_SUCCESS;
}

/* The driver's own names and the API version each appeared in. */
static const struct {
	const char *name;
	int since;
	void *fn;
} known[] = {
	{ "cuInit", 2000, (void *)d_init },
	{ "cuDriverGetVersion", 2020, (void *)d_version },
	{ "cuCtxSetFlags", 12010, (void *)d_any },
	{ "cuMemGetHandleForAddressRange", 11070, (void *)d_any },
};

static void *lookup(const char *name, int version)
{
	size_t i;

	if (asked < 64) {
		snprintf(asked_name[asked], sizeof(asked_name[0]), "%s", name);
		asked_version[asked++] = version;
	}
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i].name, name))
			return known[i].since <= (generation == 12   ? 12080
						  : generation == 11 ? 11080
								     : 11020)
				       ? known[i].fn
				       : NULL;
	/* Everything else exists in every generation here. */
	return (void *)d_any;
}

static CUresult gp_v2(const char *name, void **fn, int version,
		      cuuint64_t flags, CUdriverProcAddressQueryResult *st)
{
	*fn = lookup(name, version);
	*st = *fn ? CU_GET_PROC_ADDRESS_SUCCESS
		  : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* 11.3..11.8: no status argument. */
static CUresult gp_v1(const char *name, void **fn, int version,
		      cuuint64_t flags)
{
	*fn = lookup(name, version);
	return *fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static const char *missing_symbol;

static void *sym(void *lib, const char *name)
{
	(void)lib;
	if (!strcmp(name, "cuGetProcAddress_v2"))
		return generation == 12 ? (void *)gp_v2 : NULL;
	if (!strcmp(name, "cuGetProcAddress"))
		/* A 12.x driver exports the old form too; 11.x only it. */
		return generation >= 11 ? (void *)gp_v1 : NULL;
	if (missing_symbol && !strcmp(name, missing_symbol))
		return NULL;
	if (!strcmp(name, "cuInit"))
		return (void *)d_init;
	if (!strcmp(name, "cuDriverGetVersion"))
		return (void *)d_version;
	if (!strcmp(name, "cuCtxSetFlags") || !strcmp(name, "cuGetErrorName"))
		return NULL;
	return (void *)d_any;
}

static int asked_for(const char *name)
{
	int i;

	for (i = 0; i < asked; i++)
		if (!strcmp(asked_name[i], name))
			return asked_version[i];
	return -1;
}

/* The sanitizers' runtimes call dlsym before their own start: a
 * replacement would run instrumented code too early, so those builds skip
 * the NVML test (the plain build and valgrind run it). */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* --- a fake libnvidia-ml.so.1 ---------------------------------------------- */

static char nvml_handle; /* what dlopen("libnvidia-ml.so.1") hands out */
static int nvml_present, nvml_no_c2c, nvml_c2c_on;
static int nvml_inits, nvml_shutdowns, nvml_opens, nvml_closes;
static char nvml_asked_busid[32];

static int n_init(void)
{
	nvml_inits++;
	return 0;
}
static int n_shutdown(void)
{
	nvml_shutdowns++;
	return 0;
}
static int n_by_bus_id(const char *busid, void **dev)
{
	snprintf(nvml_asked_busid, sizeof(nvml_asked_busid), "%s", busid);
	*dev = &nvml_handle;
	return 0;
}
static int n_c2c(void *dev, unsigned int *is_c2c_enabled)
{
	(void)dev;
	*is_c2c_enabled = (unsigned int)nvml_c2c_on;
	return 0;
}
static int n_bar1(void *dev, unsigned long long *info)
{
	(void)dev;
	info[0] = 64ull << 30; /* total, free, used */
	info[1] = 60ull << 30;
	info[2] = 4ull << 30;
	return 0;
}
static const char *n_error_string(int r)
{
	(void)r;
	return "fake NVML error";
}

static void *(*real_dlopen)(const char *, int);
static void *(*real_dlsym)(void *, const char *);
static int (*real_dlclose)(void *);

/* dlsym itself is replaced, so the real one comes by version. */
static void real_dl(void)
{
	static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5",
						"GLIBC_2.17", NULL };
	int i;

	for (i = 0; !real_dlsym && versions[i]; i++)
		*(void **)&real_dlsym = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
	if (!real_dlopen)
		*(void **)&real_dlopen = real_dlsym(RTLD_NEXT, "dlopen");
	if (!real_dlclose)
		*(void **)&real_dlclose = real_dlsym(RTLD_NEXT, "dlclose");
}

void *dlopen(const char *file, int mode)
{
	real_dl();
	if (file && !strcmp(file, "libnvidia-ml.so.1")) {
		if (!nvml_present)
			return NULL;
		nvml_opens++;
		return &nvml_handle;
	}
	return real_dlopen(file, mode);
}

void *dlsym(void *lib, const char *name)
{
	real_dl();
	if (lib != &nvml_handle)
		return real_dlsym(lib, name);
	if (!strcmp(name, "nvmlInit_v2"))
		return (void *)n_init;
	if (!strcmp(name, "nvmlShutdown"))
		return (void *)n_shutdown;
	if (!strcmp(name, "nvmlDeviceGetHandleByPciBusId_v2"))
		return (void *)n_by_bus_id;
	if (!strcmp(name, "nvmlDeviceGetC2cModeInfoV"))
		return nvml_no_c2c ? NULL : (void *)n_c2c;
	if (!strcmp(name, "nvmlDeviceGetBAR1MemoryInfo"))
		return (void *)n_bar1;
	if (!strcmp(name, "nvmlErrorString"))
		return (void *)n_error_string;
	return NULL;
}

int dlclose(void *lib)
{
	real_dl();
	if (lib == &nvml_handle) {
		nvml_closes++;
		return 0;
	}
	return real_dlclose(lib);
}

/* C2C as NVML tells it, an NVML older than the C2C query, BAR1, and no
 * NVML at all. */
static void nvml(void)
{
	const char *gpu = "00000009:01:00.0";
	struct gdr_bar1 b;
	char why[256];
	bool c2c;

	check_scope = "NVML: a C2C-attached GPU";
	nvml_present = 1;
	nvml_c2c_on = 1;
	c2c = false;
	why[0] = '\0';
	CHECK_INT(gdr_nvml_c2c(gpu, &c2c, why, sizeof(why)), 0);
	CHECK(c2c);
	CHECK_STR(nvml_asked_busid, gpu);
	CHECK_INT(nvml_inits, 1);
	CHECK_INT(nvml_shutdowns, 1);

	check_scope = "NVML: a PCIe GPU";
	nvml_c2c_on = 0;
	c2c = true;
	CHECK_INT(gdr_nvml_c2c(gpu, &c2c, why, sizeof(why)), 0);
	CHECK(!c2c);

	check_scope = "NVML older than the C2C query: not C2C";
	nvml_no_c2c = 1;
	nvml_c2c_on = 1;
	c2c = true;
	CHECK_INT(gdr_nvml_c2c(gpu, &c2c, why, sizeof(why)), 0);
	CHECK(!c2c);
	/* It is not even started, and its handle is given back. */
	CHECK_INT(nvml_inits, 2);
	CHECK_INT(nvml_closes, 1);
	nvml_no_c2c = 0;

	check_scope = "NVML: BAR1";
	memset(&b, 0, sizeof(b));
	CHECK_INT(gdr_nvml_bar1(gpu, 0, &b, why, sizeof(why)), 0);
	CHECK_INT(b.total, 64ull << 30);
	CHECK_INT(b.used, 4ull << 30);
	CHECK_INT(nvml_inits, nvml_shutdowns);

	check_scope = "no NVML";
	nvml_present = 0;
	CHECK_INT(gdr_nvml_c2c(gpu, &c2c, why, sizeof(why)), ENOENT);
	CHECK_STR(why, "libnvidia-ml.so.1 could not be loaded");
	CHECK_INT(gdr_nvml_bar1(gpu, GDR_NVML_NOLOAD, &b, why, sizeof(why)),
		  ENOENT);
	CHECK_STR(why, "NVML is not loaded in this process");
}
#else
static void nvml(void)
{
	printf("SKIP: NVML through a fake libnvidia-ml.so.1: a sanitizer "
	       "build cannot replace dlsym\n");
}
#endif

/* libcufile's entry points by name; the one named @cufile_missing
 * absent. */
static const char *cufile_missing;
static char cufile_there;

static void *cufile_sym(void *lib, const char *name)
{
	(void)lib;
	return cufile_missing && !strcmp(name, cufile_missing) ? NULL
							       : &cufile_there;
}

/* Each entry point missing in turn: a required one refuses the library
 * by its name with nothing resolved kept; an optional one is left NULL,
 * the rest taken. */
static void cufile_entries(void)
{
	static const struct {
		const char *name;
		int required;
		size_t offset;
	} all[] = {
#define E(n, req, ret, params) { #n, req, offsetof(struct gdr_cufile_ops, n) },
		GDR_CUFILE_FUNCS(E)
#undef E
	};
	static const struct gdr_cufile_ops zero;
	struct gdr_cufile_ops ops;
	char why[256], want[128];
	unsigned int i, k;
	void *fn;

	check_scope = "libcufile: every entry point there";
	cufile_missing = NULL;
	CHECK_INT(gdr_cufile_resolve(NULL, cufile_sym, &ops, why, sizeof(why)),
		  0);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		check_scope = all[i].name;
		cufile_missing = all[i].name;
		memset(&ops, 0x5a, sizeof(ops));
		why[0] = '\0';
		if (all[i].required) {
			CHECK_INT(gdr_cufile_resolve(NULL, cufile_sym, &ops,
						     why, sizeof(why)),
				  ENOSYS);
			snprintf(want, sizeof(want),
				 "this libcufile lacks %s:", all[i].name);
			CHECK_HAS(why, want);
			CHECK(!memcmp(&ops, &zero, sizeof(ops)));
			continue;
		}
		CHECK_INT(gdr_cufile_resolve(NULL, cufile_sym, &ops, why,
					     sizeof(why)),
			  0);
		for (k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
			memcpy(&fn, (char *)&ops + all[k].offset, sizeof(fn));
			CHECK(fn == (k == i ? NULL : (void *)&cufile_there));
		}
	}
}

int main(void)
{
	struct gdr_cuda_ops ops;
	char why[256];
	int v;

	check_scope = "a CUDA 12.8 driver: cuGetProcAddress_v2";
	generation = 12;
	asked = 0;
	CHECK_INT(gdr_cuda_resolve(NULL, sym, &ops, why, sizeof(why)), 0);
	CHECK(ops.cuInit == d_init);
	CHECK(ops.cuCtxSetFlags != NULL);
	/* Each asked for at the version its signature was written for. */
	CHECK_INT(asked_for("cuMemGetHandleForAddressRange"), 11070);
	CHECK_INT(asked_for("cuCtxPushCurrent"), 4000);
	CHECK_INT(asked_for("cuDevicePrimaryCtxRelease"), 11000);

	check_scope = "an 11.8 driver: the 4-argument cuGetProcAddress";
	generation = 11;
	asked = 0;
	CHECK_INT(gdr_cuda_resolve(NULL, sym, &ops, why, sizeof(why)), 0);
	CHECK(ops.cuInit == d_init);
	CHECK(ops.cuDriverGetVersion == d_version);
	CHECK_INT(ops.cuDriverGetVersion(&v), CUDA_SUCCESS);
	CHECK_INT(v, 11080);
	CHECK(ops.cuMemGetHandleForAddressRange != NULL);
	/* Added in 12.1: absent, and optional. */
	CHECK(ops.cuCtxSetFlags == NULL);
	CHECK_INT(asked_for("cuMemGetHandleForAddressRange"), 11070);

	check_scope = "an 11.2 driver: ABI symbols";
	generation = 10;
	asked = 0;
	CHECK_INT(gdr_cuda_resolve(NULL, sym, &ops, why, sizeof(why)), 0);
	CHECK_INT(asked, 0);
	CHECK(ops.cuInit == d_init);
	CHECK(ops.cuCtxSetFlags == NULL);
	CHECK(ops.cuGetErrorName == NULL);

	check_scope = "a driver without a required entry point";
	missing_symbol = "cuPointerGetAttributes";
	CHECK_INT(gdr_cuda_resolve(NULL, sym, &ops, why, sizeof(why)), ENOSYS);
	CHECK_HAS(why, "libcuda.so.1 lacks cuPointerGetAttributes (CUDA 7.0 "
		       "API); upgrade the NVIDIA driver");
	CHECK(ops.cuInit == NULL);
	missing_symbol = NULL;

	nvml();
	cufile_entries();
	return check_summary("loader");
}
