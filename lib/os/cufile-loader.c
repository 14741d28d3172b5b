/* SPDX-License-Identifier: MIT */
/*
 * cuFile (GPUDirect Storage's libcufile.so.0), loaded at run time as
 * libcuda is: never linked, every entry point resolved by name, a missing
 * one left NULL ("this libcufile does not say") unless the doctor cannot
 * work without it. Where it is looked for, in order:
 *
 *  1. $GPUDIRECT_CUFILE_LIB (@env), a path to the library file: the copy that
 *     the nvidia-cufile wheel installs with PyTorch lives in the Python
 *     environment (site-packages/nvidia/cu13/lib/libcufile.so.0 for CUDA
 *     13, .../nvidia/cufile/lib/ for CUDA 12), where no search finds it;
 *  2. "libcufile.so.0" by the dynamic loader's search: LD_LIBRARY_PATH,
 *     then ld.so.cache, where the CUDA toolkit's packages list their
 *     library directory;
 *  3. the CUDA tree's usual places, for a toolkit installed without
 *     registering its directory (the runfile, a container image).
 *
 * Loading it runs its constructors, and its calls can block: the caller
 * (doctor/storage-io.c) does both on a thread it can leave behind.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"

struct entry {
	const char *name;
	int required;
	size_t offset;
};

static const struct entry entries[] = {
#define GDR_CUFILE_ENTRY(n, req, ret, params)                                  \
	{ #n, req, offsetof(struct gdr_cufile_ops, n) },
	GDR_CUFILE_FUNCS(GDR_CUFILE_ENTRY)
#undef GDR_CUFILE_ENTRY
};

/* The CUDA tree's library directories, where the search may not look. */
static const char *const tree[] = {
	"/usr/local/cuda/lib64/libcufile.so.0",
	"/usr/local/cuda/targets/x86_64-linux/lib/libcufile.so.0",
	"/usr/local/cuda/targets/sbsa-linux/lib/libcufile.so.0",
	NULL,
};

int gdr_cufile_resolve(void *lib, gdr_sym_fn sym, struct gdr_cufile_ops *ops,
		       char *why, size_t n)
{
	size_t i;

	memset(ops, 0, sizeof(*ops));
	for (i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		void *fn = sym(lib, entries[i].name);

		if (!fn && entries[i].required) {
			gdr_fmt(why, n,
				"this libcufile lacks %s: it is not a cuFile "
				"the doctor can use",
				entries[i].name);
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

int gdr_cufile_load(struct gdr_cufile_lib *out, const char *env, char *why,
		    size_t n)
{
	struct link_map *lm = NULL;
	char first[256] = "";
	const char *err;
	void *lib = NULL;
	int e, i;

	memset(out, 0, sizeof(*out));
	if (env && env[0]) {
		lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			err = dlerror();
			gdr_fmt(why, n,
				"GPUDIRECT_CUFILE_LIB=%s could not be loaded "
				"(%s)",
				env, err ? err : "unknown error");
			return ENOENT;
		}
		gdr_fmt(out->how, sizeof(out->how), "GPUDIRECT_CUFILE_LIB");
	} else {
		lib = dlopen("libcufile.so.0", RTLD_NOW | RTLD_LOCAL);
		err = lib ? NULL : dlerror();
		gdr_fmt(first, sizeof(first), "%s", err ? err : "");
		for (i = 0; !lib && tree[i]; i++) {
			lib = dlopen(tree[i], RTLD_NOW | RTLD_LOCAL);
			if (!lib)
				dlerror(); /* not there either: clear it */
		}
		if (!lib) {
			gdr_fmt(why, n,
				"cuFile is not installed: libcufile.so.0 was "
				"not found (%s)",
				first[0] ? first : "unknown error");
			return ENOENT;
		}
		gdr_fmt(out->how, sizeof(out->how),
			i ? "the CUDA tree" : "the dynamic loader's search");
	}
	e = gdr_cufile_resolve(lib, dl_sym, &out->ops, why, n);
	if (e) {
		dlclose(lib);
		return e;
	}
	/* The file the loader took, for the report. */
	if (!dlinfo(lib, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name &&
	    lm->l_name[0])
		gdr_fmt(out->file, sizeof(out->file), "%s", lm->l_name);
	else
		gdr_fmt(out->file, sizeof(out->file), "%s",
			env && env[0] ? env : "libcufile.so.0");
	/* Stays loaded for the life of the process (a thread may still be
	 * inside it). */
	return 0;
}
