/* SPDX-License-Identifier: MIT */
/*
 * NVML, for the two facts the CUDA driver does not give: whether a GPU is
 * attached to the CPU by NVLink-C2C (Grace Hopper, Grace Blackwell), and
 * how much of its BAR1 aperture is in use. libnvidia-ml.so.1 is opened at
 * run time and its few entry points are declared here, so no NVML header
 * is needed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "os.h"

typedef int nvml_return;		 /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
#define NVML_ERROR_NOT_SUPPORTED 3
struct nvml_c2c_info { /* nvmlC2cModeInfo_v1_t */
	unsigned int is_c2c_enabled;
};
struct nvml_bar1 { /* nvmlBAR1Memory_t */
	unsigned long long total, free, used;
};

struct nvml_ops {
	nvml_return (*init)(void); /* nvmlInit_v2 */
	nvml_return (*shutdown)(void);
	nvml_return (*by_bus_id)(const char *busid, nvml_device *dev);
	nvml_return (*c2c_mode)(nvml_device dev, struct nvml_c2c_info *info);
	nvml_return (*bar1)(nvml_device dev, struct nvml_bar1 *info);
	const char *(*error_string)(nvml_return r);
};

static const char *nvml_words(const struct nvml_ops *o, nvml_return r)
{
	const char *s = o->error_string ? o->error_string(r) : NULL;

	return s ? s : "an NVML error";
}

/*
 * Load libnvidia-ml.so.1 (with GDR_NVML_NOLOAD only if the process has it
 * already) and resolve @o. 0 with the handle in *@lib, or an errno with
 * the reason in @why.
 */
static int nvml_load(unsigned int flags, struct nvml_ops *o, void **lib,
		     char *why, size_t n)
{
	*lib = dlopen("libnvidia-ml.so.1",
		      RTLD_NOW | RTLD_LOCAL |
			      (flags & GDR_NVML_NOLOAD ? RTLD_NOLOAD : 0));
	if (!*lib) {
		gdr_fmt(why, n,
			flags & GDR_NVML_NOLOAD
				? "NVML is not loaded in this process"
				: "libnvidia-ml.so.1 could not be loaded");
		return ENOENT;
	}
	*(void **)&o->init = dlsym(*lib, "nvmlInit_v2");
	*(void **)&o->shutdown = dlsym(*lib, "nvmlShutdown");
	*(void **)&o->by_bus_id =
		dlsym(*lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&o->c2c_mode = dlsym(*lib, "nvmlDeviceGetC2cModeInfoV");
	*(void **)&o->bar1 = dlsym(*lib, "nvmlDeviceGetBAR1MemoryInfo");
	*(void **)&o->error_string = dlsym(*lib, "nvmlErrorString");
	if (!o->init || !o->shutdown || !o->by_bus_id) {
		gdr_fmt(why, n,
			"libnvidia-ml.so.1 lacks nvmlInit_v2 or "
			"nvmlDeviceGetHandleByPciBusId_v2");
		dlclose(*lib);
		return ENOSYS;
	}
	return 0;
}

/* nvmlInit, then the handle of the GPU at @busid: 0, or the NVML error
 * (initialised or not: the caller shuts down only after a 0 from init). */
static nvml_return nvml_start(const struct nvml_ops *o, const char *busid,
			      nvml_device *dev, bool *started, char *why,
			      size_t n)
{
	nvml_return r = o->init();

	*started = !r;
	if (r) {
		gdr_fmt(why, n, "nvmlInit failed: %s", nvml_words(o, r));
		return r;
	}
	r = o->by_bus_id(busid, dev);
	if (r)
		gdr_fmt(why, n, "NVML does not know the GPU at %s: %s", busid,
			nvml_words(o, r));
	return r;
}

int gdr_nvml_c2c(const char *busid, bool *c2c, char *why, size_t n)
{
	struct nvml_c2c_info info = { 0 };
	struct nvml_ops o;
	nvml_device dev;
	nvml_return r;
	bool started;
	void *lib;
	int err;

	err = nvml_load(0, &o, &lib, why, n);
	if (err)
		return err;
	if (!o.c2c_mode) {
		/* An NVML older than C2C itself: no C2C GPU runs with it. */
		*c2c = false;
		dlclose(lib);
		return 0;
	}
	r = nvml_start(&o, busid, &dev, &started, why, n);
	if (!r) {
		r = o.c2c_mode(dev, &info);
		if (r == NVML_ERROR_NOT_SUPPORTED) {
			*c2c = false;
			r = 0;
		} else if (!r) {
			*c2c = info.is_c2c_enabled != 0;
		} else {
			gdr_fmt(why, n, "NVML could not tell C2C for %s: %s",
				busid, nvml_words(&o, r));
		}
	}
	if (started)
		o.shutdown();
	/* NVML stays loaded: unloading a driver library is not worth it. */
	return r ? EIO : 0;
}

int gdr_nvml_bar1(const char *busid, unsigned int flags, struct gdr_bar1 *b,
		  char *why, size_t n)
{
	struct nvml_bar1 info = { 0 };
	struct nvml_ops o;
	nvml_device dev;
	nvml_return r;
	bool started;
	void *lib;
	int err;

	err = nvml_load(flags, &o, &lib, why, n);
	if (err)
		return err;
	if (!o.bar1) {
		gdr_fmt(why, n,
			"libnvidia-ml.so.1 lacks nvmlDeviceGetBAR1MemoryInfo");
		dlclose(lib);
		return ENOSYS;
	}
	r = nvml_start(&o, busid, &dev, &started, why, n);
	if (!r) {
		r = o.bar1(dev, &info);
		if (r)
			gdr_fmt(why, n, "NVML could not tell BAR1 for %s: %s",
				busid, nvml_words(&o, r));
	}
	if (started)
		o.shutdown();
	if (flags & GDR_NVML_NOLOAD)
		dlclose(lib); /* drops only the reference taken here */
	if (r)
		return r == NVML_ERROR_NOT_SUPPORTED ? EOPNOTSUPP : EIO;
	b->total = info.total;
	b->used = info.used;
	return 0;
}
