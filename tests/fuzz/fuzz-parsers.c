/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer targets for every parser of outside input. Built once per
 * target with -DTARGET_...=1 by run-fuzz.sh:
 *   kernel   gdr_parse_kernel_release (uname release strings)
 *   nvidia   gdr_parse_nvidia_version (/proc/driver/nvidia/version)
 *   number   gdr_parse_long (sysfs numbers and version files)
 *   cmdline  gdr_parse_iommu_cmdline (/proc/cmdline)
 *   cufile   gdr_parse_cufile (GPUDirect Storage's cufile.json)
 *   env      GPUDIRECT_PATH / _DEBUG / _RELAXED_ORDERING through the probe
 *   bdf      gdr_bdf_normalize (PCI addresses from CUDA and sysfs links)
 *   json     gdr-info's snapshot reader (answers.json of --from/--root)
 *   tar      gdr-info's archive reader (--from), and a round trip through
 *            its writer (--capture)
 *   desc     gdr_desc_unpack (the export descriptor another process sends),
 *            and a round trip through gdr_desc_pack
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(TARGET_TAR)
#include <stdint.h>
#include <stdio.h>
#include "tree.h"
#elif defined(TARGET_DESC)
#include <stdint.h>
#include "base.h"
#elif defined(TARGET_JSON)
#include <stdint.h>
#include <stdio.h>
#include "json.h"
#else
#include "internal.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static __attribute__((unused)) char *terminated(const uint8_t *data,
						size_t size)
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

#if defined(TARGET_TAR)
static void names_ok(const struct tree *t)
{
	size_t i;

	for (i = 0; i < t->num; i++) {
		const char *n = t->n[i].name;
		size_t l = strlen(n);

		/* A ".." component, not a name that begins with two dots
		 * ("..s" is a name like any other). */
		if (!n[0] || n[0] == '/' || !strcmp(n, "..") ||
		    !strncmp(n, "../", 3) || strstr(n, "/../") ||
		    (l >= 3 && !strcmp(n + l - 3, "/..")) ||
		    l > TREE_MAX_NAME || t->n[i].size > TREE_MAX_FILE)
			abort();
	}
	if (t->total > TREE_MAX_TOTAL || t->num > TREE_MAX_MEMBERS)
		abort();
}

/* An archive: what is kept keeps the rules, and survives a round trip. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tree t, again;
	char err[256], name[4096], *out;
	enum gdr_walk_kind kind;
	size_t len, i;

	tree_init(&t);
	tree_init(&again);
	err[0] = '\0';
	if (tree_parse_tar(&t, data, size, err, sizeof(err))) {
		if (!err[0])
			abort(); /* a refusal says why */
	} else {
		names_ok(&t);
		gdr_walk(tree_lookup, &t, "/sys/a/b", 0, name, sizeof(name),
			 &kind, NULL, NULL);
		if (tree_tar(&t, &out, &len) == 0) {
			if (tree_parse_tar(&again, (unsigned char *)out, len,
					   err, sizeof(err)) &&
			    t.num)
				abort(); /* we cannot read what we wrote */
			for (i = 0; i < t.num && t.num == again.num; i++)
				if (t.n[i].kind != GDR_WALK_LINK &&
				    t.n[i].kind != GDR_WALK_OTHER &&
				    !tree_find(&again, t.n[i].name))
					abort();
			free(out);
		}
	}
	tree_free(&t);
	tree_free(&again);
	return 0;
}
#elif defined(TARGET_DESC)
/* This node's boot id, as the importer passes it; the seeds carry it. */
static const uint8_t boot_id[16] = { 0x5e, 0xed, 0xb0, 0x07, 0x1d, 0x00,
				     0x4f, 0x2a, 0x9c, 0x11, 0x22, 0x33,
				     0x44, 0x55, 0x66, 0x77 };

/* What a descriptor that unpacked promises (gpudirect.h), and the bytes it
 * came from are the bytes it packs into. */
static void desc_ok(const struct gdr_export_desc *d, const uint8_t *in,
		    size_t size)
{
	uint8_t again[GDR_EXPORT_WIRE_LEN];
	char why[256];
	unsigned int i, j;

	if (size != GDR_EXPORT_WIRE_LEN ||
	    d->version != GDR_EXPORT_DESC_VERSION)
		abort();
	if (d->num_fds < 1 || d->num_fds > GDR_EXPORT_MAX_FDS)
		abort();
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++) {
		if (i >= d->num_fds) {
			if (d->mapping[i] || d->dmabuf_ino[i])
				abort();
			continue;
		}
		if (d->mapping[i] != GDR_DMABUF_MAPPING_DEFAULT &&
		    d->mapping[i] != GDR_DMABUF_MAPPING_PCIE)
			abort();
		if (!d->dmabuf_ino[i])
			abort();
		for (j = 0; j < i; j++)
			if (d->mapping[j] == d->mapping[i])
				abort();
	}
	if (!d->dmabuf_size || d->dmabuf_size % 4096)
		abort();
	if (!d->length || d->offset > d->dmabuf_size ||
	    d->length > d->dmabuf_size - d->offset)
		abort();
	if (d->iova + d->length < d->iova)
		abort();
	if (d->mem_type != GDR_MEM_CUDA_DEVICE &&
	    d->mem_type != GDR_MEM_CUDA_POOL)
		abort();
	/* "dddd:bb:dd.f": 12 characters, then the NUL. */
	if (strnlen(d->gpu_bus_id, sizeof(d->gpu_bus_id)) != 12 ||
	    d->gpu_bus_id[4] != ':' || d->gpu_bus_id[7] != ':' ||
	    d->gpu_bus_id[10] != '.')
		abort();
	if (gdr_desc_pack(d, again, why, sizeof(why)) ||
	    memcmp(again, in, sizeof(again)))
		abort();
}

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return 0;
	return 1;
}

/* A refusal says why and leaves nothing behind. */
static void refused(int err, const struct gdr_export_desc *d, const char *why)
{
	if ((err != EPROTO && err != EXDEV) || !why[0] ||
	    !all_zero(d, sizeof(*d)))
		abort();
}

/* Bytes from another process: checked with this node's boot id and with
 * none; what is accepted keeps every promise. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gdr_export_desc mine, any;
	char why[512], why_any[512];
	int err, err_any;

	why[0] = why_any[0] = '\0';
	err = gdr_desc_unpack(data, size, boot_id, &mine, why, sizeof(why));
	err_any = gdr_desc_unpack(data, size, NULL, &any, why_any,
				  sizeof(why_any));
	if (err_any)
		refused(err_any, &any, why_any);
	else
		desc_ok(&any, data, size);
	if (err) {
		refused(err, &mine, why);
		/* Another boot only for a descriptor that is fine otherwise. */
		if ((err == EXDEV) !=
		    (!err_any && memcmp(any.boot_id, boot_id, sizeof(boot_id))))
			abort();
		if (err == EPROTO && !err_any)
			abort();
	} else {
		desc_ok(&mine, data, size);
		if (err_any || memcmp(&mine, &any, sizeof(mine)) ||
		    memcmp(mine.boot_id, boot_id, sizeof(boot_id)))
			abort();
	}
	return 0;
}
#else
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
#elif defined(TARGET_CUFILE)
	{
		struct gdr_cufile c;
		unsigned int i;

		if (gdr_parse_cufile(s, &c) == 0) {
			if (c.num_addrs > GDR_CUFILE_MAX_ADDRS)
				abort();
			for (i = 0; i < c.num_addrs; i++)
				if (strlen(c.addrs[i]) >= sizeof(c.addrs[i]))
					abort();
		}
	}
#elif defined(TARGET_CMDLINE)
	{
		char out[24];

		/* Always terminated, never longer than the buffer, and only
		 * whole words of the input. */
		gdr_parse_iommu_cmdline(s, out, sizeof(out));
		if (strlen(out) >= sizeof(out) ||
		    (out[0] && !strstr(s, out) && !strchr(out, ' ')))
			abort();
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
		    gdr_path_lookup(env_path, &p))
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
		const struct json *e;
		struct json *j = json_parse(s, err, sizeof(err)), *c;

		if (j) {
			json_str(j, "format", "");
			json_num(json_get(j, "cuda"), "driver_version", 0);
			for (e = json_items(json_get(j, "rdma_devices")); e;
			     e = e->next)
				json_bool(e, "mlx5", 0);
		} else if (!err[0]) {
			abort(); /* a failure must say why */
		}
		/* With comments: what parses without them parses the same. */
		c = json_parse_ex(s, JSON_COMMENTS, err, sizeof(err));
		if ((j && !c) || (!c && !err[0]))
			abort();
		json_free(c);
		json_free(j);
	}
#else
#error "define one TARGET_*"
#endif
	free(s);
	return 0;
}
#endif
