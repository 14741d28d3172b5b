/* SPDX-License-Identifier: MIT */
/*
 * The environment: every GPUDIRECT_* setting the library reads, parsed
 * here and nowhere else, through the seam's getenv (secure_getenv: a
 * setuid program reads none). gdr_env_names lists them; the README's
 * table of settings is checked against it (tests/unit/check-docs.py).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "node.h"

/* In this order: gdr_env_cache_limits() names the cache's by index. */
const char *const gdr_env_names[] = {
	"GPUDIRECT_PATH",
	"GPUDIRECT_PCIE_MAPPING",
	"GPUDIRECT_RELAXED_ORDERING",
	"GPUDIRECT_CACHE_MAX_ENTRIES",
	"GPUDIRECT_CACHE_MAX_BYTES",
	"GPUDIRECT_DEBUG",
	NULL,
};

const char *gdr_env_cufile_json(void)
{
	const struct gdr_seam *s = gdr_seam();
	const char *v = s->getenv ? s->getenv("CUFILE_ENV_PATH_JSON") : NULL;

	return v && v[0] == '/' ? v : NULL;
}

void gdr_env_probe(struct gdr_node *nd, const struct gdr_seam *s)
{
	const char *v = s->getenv ? s->getenv("GPUDIRECT_DEBUG") : NULL;
	enum gdr_path p;

	nd->debug = v && *v && strcmp(v, "0") != 0;
	v = s->getenv ? s->getenv("GPUDIRECT_RELAXED_ORDERING") : NULL;
	if (v && *v) {
		if (!strcmp(v, "0"))
			nd->strict_ordering = true;
		else if (strcmp(v, "1") && strcmp(v, "auto"))
			gdr_fmt(nd->env_error, sizeof(nd->env_error),
				"GPUDIRECT_RELAXED_ORDERING=%.40s is not 0, 1 "
				"or auto; set one of them, or unset it",
				v);
	}
	v = s->getenv ? s->getenv("GPUDIRECT_PCIE_MAPPING") : NULL;
	if (v && *v) {
		if (!strcmp(v, "on") || !strcmp(v, "1"))
			nd->pcie_policy = GDR_PCIE_ON;
		else if (!strcmp(v, "off") || !strcmp(v, "0"))
			nd->pcie_policy = GDR_PCIE_OFF;
		else if (strcmp(v, "auto"))
			gdr_fmt(nd->env_error, sizeof(nd->env_error),
				"GPUDIRECT_PCIE_MAPPING=%.40s is not auto, on "
				"or off; set one of them, or unset it",
				v);
	}
	v = s->getenv ? s->getenv("GPUDIRECT_PATH") : NULL;
	if (!v || !*v)
		return;
	if (gdr_path_lookup(v, &p)) {
		gdr_fmt(nd->env_error, sizeof(nd->env_error),
			"GPUDIRECT_PATH=%.40s is not a path; set it to auto, "
			"data-direct, dmabuf, peermem or host, or unset it",
			v);
		return;
	}
	/* Host memory can only ever take the host path. */
	if (p != GDR_PATH_NONE)
		nd->env_mask = GDR_PATH_BIT(p) | GDR_PATH_BIT(GDR_PATH_HOST);
}

static int env_size(const char *name, size_t *out, char *why, size_t n)
{
	const struct gdr_seam *s = gdr_seam();
	const char *v = s->getenv ? s->getenv(name) : NULL, *p;
	size_t x = 0;

	if (!v || !*v)
		return 0;
	for (p = v; *p; p++) {
		size_t d = (size_t)(*p - '0');

		if (*p < '0' || *p > '9') {
			gdr_fmt(why, n,
				"%s=%.40s is not a decimal number of entries "
				"or bytes (digits only; 0: no limit); set one, "
				"or unset it",
				name, v);
			return EINVAL;
		}
		if (x > (SIZE_MAX - d) / 10) {
			gdr_fmt(why, n,
				"%s=%.40s is larger than %zu, the largest "
				"number of entries or bytes; set a smaller "
				"one, 0 for no limit, or unset it",
				name, v, (size_t)SIZE_MAX);
			return EINVAL;
		}
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

int gdr_env_cache_limits(size_t *max_entries, size_t *max_bytes, char *why,
			 size_t n)
{
	int err = env_size(gdr_env_names[3], max_entries, why, n);

	return err ? err : env_size(gdr_env_names[4], max_bytes, why, n);
}

void gdr_env_list(char *out, size_t n)
{
	const struct gdr_seam *s = gdr_seam();
	const char *const *name;

	out[0] = '\0';
	for (name = gdr_env_names; *name; name++) {
		const char *v = s->getenv ? s->getenv(*name) : NULL;

		if (v && *v)
			gdr_append(out, n, "%s%s=%.40s", out[0] ? ", " : "",
				   *name, v);
	}
}
