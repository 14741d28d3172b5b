/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver, loaded at run time. libcuda.so.1 is opened by its soname
 * only and never linked; each entry point is resolved with cuGetProcAddress
 * at the CUDA version its signature was written for, so that a newer driver
 * hands back the ABI this code expects. cuInit is never called here.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include "os.h"

/* cuGetProcAddress as exported since CUDA 12 ("_v2"), and as in 11.3..11.8,
 * where it had no status argument. */
typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, cuuint64_t,
				   CUdriverProcAddressQueryResult *);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, cuuint64_t);

struct entry {
	const char *name;
	const char *abi_symbol;
	int version;
	int required;
	size_t offset;
};

static const struct entry entries[] = {
#define GDR_CUDA_ENTRY(n, sym, ver, req, params)                               \
	{ #n, #sym, ver, req, offsetof(struct gdr_cuda_ops, n) },
	GDR_CU_FUNCS(GDR_CUDA_ENTRY)
#undef GDR_CUDA_ENTRY
};

static void *resolve(void *lib, gdr_sym_fn sym, get_proc_v2_fn gp2,
		     get_proc_v1_fn gp1, const struct entry *e)
{
	CUdriverProcAddressQueryResult status;
	void *fn = NULL;

	if (gp2) {
		if (gp2(e->name, &fn, e->version, CU_GET_PROC_ADDRESS_DEFAULT,
			&status) == CUDA_SUCCESS &&
		    status == CU_GET_PROC_ADDRESS_SUCCESS)
			return fn;
		return NULL;
	}
	if (gp1) {
		if (gp1(e->name, &fn, e->version,
			CU_GET_PROC_ADDRESS_DEFAULT) == CUDA_SUCCESS)
			return fn;
		return NULL;
	}
	/* A driver older than 11.3: the ABI symbol itself. */
	return sym(lib, e->abi_symbol);
}

int gdr_cuda_resolve(void *lib, gdr_sym_fn sym, struct gdr_cuda_ops *ops,
		     char *why, size_t n)
{
	get_proc_v2_fn gp2;
	get_proc_v1_fn gp1 = NULL;
	size_t i;

	memset(ops, 0, sizeof(*ops));
	/* A 12.x driver exports both; the 11.x one only the 4-argument form
	 * under the plain name. */
	*(void **)&gp2 = sym(lib, "cuGetProcAddress_v2");
	if (!gp2)
		*(void **)&gp1 = sym(lib, "cuGetProcAddress");
	for (i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		void *fn = resolve(lib, sym, gp2, gp1, &entries[i]);

		if (!fn && entries[i].required) {
			gdr_fmt(why, n,
				"libcuda.so.1 lacks %s (CUDA %d.%d API); "
				"upgrade the NVIDIA driver",
				entries[i].name, entries[i].version / 1000,
				entries[i].version % 1000 / 10);
			memset(ops, 0, sizeof(*ops));
			return ENOSYS;
		}
		memcpy((char *)ops + entries[i].offset, &fn, sizeof(fn));
	}
	return 0;
}

static void *dl_sym(void *lib, const char *name)
{
	return dlsym(lib, name);
}

/*
 * dlopen(RTLD_NOLOAD) of a soname that is not loaded still searches the
 * library path (ld.so.cache and a few openat calls). Registering host
 * memory asks on every call, so remember the loader's counters of objects
 * added and removed at the last "not loaded": while they stay the same,
 * nothing new can be libcuda.
 */
struct dl_counts {
	unsigned long long adds, subs;
};

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct dl_counts *c = data;

	if (size <
	    offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		return -1; /* no counters: always ask */
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	return 1;
}

static unsigned long long absent_adds, absent_subs; /* atomic */

static bool known_absent(struct dl_counts *now)
{
	if (dl_iterate_phdr(first_object, now) != 1) {
		now->adds = now->subs = 0;
		return false;
	}
	return __atomic_load_n(&absent_adds, __ATOMIC_ACQUIRE) == now->adds &&
	       __atomic_load_n(&absent_subs, __ATOMIC_ACQUIRE) == now->subs;
}

int gdr_cuda_load(struct gdr_cuda_ops *ops, unsigned int flags, char *why,
		  size_t n)
{
	struct dl_counts now = { 0, 0 };
	const char *err;
	void *lib = NULL;
	int e;

	/* Counters read before asking: a load racing with us changes them. */
	if (!(flags & GDR_CUDA_NOLOAD) || !known_absent(&now))
		lib = dlopen("libcuda.so.1",
			     RTLD_NOW | RTLD_LOCAL |
				     (flags & GDR_CUDA_NOLOAD ? RTLD_NOLOAD
							      : 0));
	if (!lib && (flags & GDR_CUDA_NOLOAD) && now.adds) {
		__atomic_store_n(&absent_adds, now.adds, __ATOMIC_RELEASE);
		__atomic_store_n(&absent_subs, now.subs, __ATOMIC_RELEASE);
	}
	if (!lib) {
		memset(ops, 0, sizeof(*ops));
		err = dlerror(); /* also clears the state it leaves */
		if (flags & GDR_CUDA_NOLOAD)
			gdr_fmt(why, n,
				"libcuda.so.1 is not loaded in this "
				"process");
		else
			gdr_fmt(why, n,
				"libcuda.so.1 could not be loaded (%s); "
				"install the NVIDIA driver, or in a container "
				"mount the driver libraries (NVIDIA Container "
				"Toolkit)",
				err ? err : "unknown error");
		return ENOENT;
	}
	e = gdr_cuda_resolve(lib, dl_sym, ops, why, n);
	if (e) {
		dlclose(lib);
		return e;
	}
	/* The library stays loaded for the life of the process. */
	return 0;
}

const char *gdr_cu_errname(const struct gdr_cuda_ops *cu, CUresult r, char *buf,
			   size_t n)
{
	const char *name = NULL;

	if (cu && cu->cuGetErrorName &&
	    cu->cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
		return name;
	gdr_fmt(buf, n, "CUDA error %d", (int)r);
	return buf;
}
