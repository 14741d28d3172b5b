/* SPDX-License-Identifier: MIT */
/*
 * NVML, for the one fact the CUDA driver does not give: whether a GPU is
 * attached to the CPU by NVLink-C2C (Grace Hopper, Grace Blackwell).
 * libnvidia-ml.so.1 is opened at run time and its few entry points are
 * declared here, so no NVML header is needed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "os.h"

typedef int nvml_return;		 /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
struct nvml_c2c_info {			 /* nvmlC2cModeInfo_v1_t */
	unsigned int is_c2c_enabled;
};

struct nvml_ops {
	nvml_return (*init)(void); /* nvmlInit_v2 */
	nvml_return (*shutdown)(void);
	nvml_return (*by_bus_id)(const char *busid, nvml_device *dev);
	nvml_return (*c2c_mode)(nvml_device dev, struct nvml_c2c_info *info);
	const char *(*error_string)(nvml_return r);
};

static const char *nvml_words(const struct nvml_ops *o, nvml_return r)
{
	const char *s = o->error_string ? o->error_string(r) : NULL;

	return s ? s : "an NVML error";
}

int gdr_nvml_c2c(const char *busid, bool *c2c, char *why, size_t n)
{
	struct nvml_c2c_info info = { 0 };
	struct nvml_ops o;
	nvml_device dev;
	nvml_return r;
	void *lib;

	lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		gdr_fmt(why, n, "libnvidia-ml.so.1 could not be loaded");
		return ENOENT;
	}
	*(void **)&o.init = dlsym(lib, "nvmlInit_v2");
	*(void **)&o.shutdown = dlsym(lib, "nvmlShutdown");
	*(void **)&o.by_bus_id = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&o.c2c_mode = dlsym(lib, "nvmlDeviceGetC2cModeInfoV");
	*(void **)&o.error_string = dlsym(lib, "nvmlErrorString");
	if (!o.init || !o.shutdown || !o.by_bus_id) {
		gdr_fmt(why, n,
			"libnvidia-ml.so.1 lacks nvmlInit_v2 or "
			"nvmlDeviceGetHandleByPciBusId_v2");
		dlclose(lib);
		return ENOSYS;
	}
	if (!o.c2c_mode) {
		/* An NVML older than C2C itself: no C2C GPU runs with it. */
		*c2c = false;
		dlclose(lib);
		return 0;
	}
	r = o.init();
	if (r) {
		gdr_fmt(why, n, "nvmlInit failed: %s", nvml_words(&o, r));
		dlclose(lib);
		return EIO;
	}
	r = o.by_bus_id(busid, &dev);
	if (!r)
		r = o.c2c_mode(dev, &info);
	if (r == 3 /* NVML_ERROR_NOT_SUPPORTED */) {
		*c2c = false;
		r = 0;
	} else if (!r) {
		*c2c = info.is_c2c_enabled != 0;
	} else {
		gdr_fmt(why, n, "NVML could not tell C2C for %s: %s", busid,
			nvml_words(&o, r));
	}
	o.shutdown();
	/* NVML stays loaded: unloading a driver library is not worth it. */
	return r ? EIO : 0;
}
