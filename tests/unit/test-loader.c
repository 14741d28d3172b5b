/* SPDX-License-Identifier: MIT */
/*
 * Resolving the CUDA driver's entry points the way each driver generation
 * offers them, with the same binary: cuGetProcAddress_v2 (CUDA 12+), the
 * 4-argument cuGetProcAddress of 11.3-11.8, and plain ABI symbols before
 * that. Each fake driver is a symbol table.
 */
#include <errno.h>
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
	return check_summary("loader");
}
