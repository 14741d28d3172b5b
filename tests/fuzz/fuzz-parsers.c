/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer targets for every parser of outside input. Built once per
 * target with -DTARGET_...=1 by run-fuzz.sh:
 *   kernel   gdr_parse_kernel_release (uname release strings)
 *   nvidia   gdr_parse_nvidia_version (/proc/driver/nvidia/version)
 *   number   gdr_parse_long (sysfs numbers and version files)
 *   env      GPUDIRECT_PATH / _DEBUG / _RELAXED_ORDERING through the probe
 *   bdf      gdr_bdf_normalize (PCI addresses from CUDA and sysfs links)
 *   json     gdr-info's snapshot reader (answers.json of --from/--root)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#ifdef TARGET_JSON
#include "json.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *terminated(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

#ifdef TARGET_ENV
static const char *env_path, *env_debug, *env_ro;

static char *fuzz_getenv(const char *name)
{
	if (!strcmp(name, "GPUDIRECT_PATH"))
		return (char *)env_path;
	if (!strcmp(name, "GPUDIRECT_DEBUG"))
		return (char *)env_debug;
	if (!strcmp(name, "GPUDIRECT_RELAXED_ORDERING"))
		return (char *)env_ro;
	return NULL;
}

static int no_cuda(struct gdr_cuda_ops *ops, unsigned int flags, char *why,
		   size_t n)
{
	memset(ops, 0, sizeof(*ops));
	gdr_fmt(why, n, "no CUDA (fuzzing)");
	return ENOENT;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = terminated(data, size);

	if (!s)
		return 0;
#if defined(TARGET_KERNEL)
	{
		struct gdr_kver v;

		if (gdr_parse_kernel_release(s, &v) == 0 &&
		    (v.major < 0 || v.minor < 0 || v.patch < 0))
			abort();
	}
#elif defined(TARGET_NVIDIA)
	{
		char ver[64];
		enum gdr_nv_flavour f =
			gdr_parse_nvidia_version(s, ver, sizeof(ver));

		if (strlen(ver) >= sizeof(ver) || f > GDR_NV_UNPARSED)
			abort();
		if ((f == GDR_NV_OPEN || f == GDR_NV_PROPRIETARY) && !ver[0])
			abort();
	}
#elif defined(TARGET_NUMBER)
	{
		long v;

		gdr_parse_long(s, &v);
	}
#elif defined(TARGET_ENV)
	{
		/* "PATH\0DEBUG\0RO": three values from one input. */
		struct gdr_seam seam;
		const struct gdr_node *nd;
		enum gdr_path p;

		size_t at = strlen(s) + 1;

		env_path = s;
		env_debug = at < size ? s + at : "";
		at += at < size ? strlen(s + at) + 1 : 0;
		env_ro = at < size ? s + at : "";
		gdr_seam_default(&seam);
		strcpy(seam.sysfs_root, "/nonexistent-fuzz");
		strcpy(seam.procfs_root, "/nonexistent-fuzz");
		strcpy(seam.kernel_release, "6.1.0");
		seam.cuda_load = no_cuda;
		seam.getenv = fuzz_getenv;
		gdr_seam_install(&seam);
		nd = gdr_node_get();
		/* A bad GPUDIRECT_PATH sets no mask. */
		if (!strncmp(nd->env_error, "GPUDIRECT_PATH=", 15) &&
		    nd->env_mask)
			abort();
		if (!nd->env_error[0] && *env_path &&
		    gdr_path_parse(env_path, &p))
			abort();
		if (nd->strict_ordering && strcmp(env_ro, "0"))
			abort();
		gdr_seam_install(NULL);
	}
#elif defined(TARGET_BDF)
	{
		char out[GDR_BDF_LEN];

		if (gdr_bdf_normalize(s, out, sizeof(out)) == 0 &&
		    strlen(out) != 12)
			abort();
	}
#elif defined(TARGET_JSON)
	{
		char err[128];
		struct json *j = json_parse(s, err, sizeof(err));

		if (j) {
			json_str(j, "format", "");
			json_num(json_get(j, "cuda"), "driver_version", 0);
		} else if (!err[0]) {
			abort(); /* a failure must say why */
		}
		json_free(j);
	}
#else
#error "define one TARGET_*"
#endif
	free(s);
	return 0;
}
