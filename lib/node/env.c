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

/* A setting's value for a message: its first 40 bytes, "..." after them
 * when there are more (never a silent cut). */
#define SHOWN_LEN 44
static const char *shown(const char *v, char *buf)
{
	gdr_fmt(buf, SHOWN_LEN, "%.40s%s", v, strlen(v) > 40 ? "..." : "");
	return buf;
}

/* In this order: gdr_env_cache_limits() names the cache's by index. */
const char *const gdr_env_names[] = {
	"GPUDIRECT_PATH",
	"GPUDIRECT_PCIE_MAPPING",
	"GPUDIRECT_RELAXED_ORDERING",
	"GPUDIRECT_CACHE_MAX_ENTRIES",
	"GPUDIRECT_CACHE_MAX_BYTES",
	"GPUDIRECT_DEBUG",
	"GPUDIRECT_CUFILE_LIB",
	NULL,
};

const char *gdr_env_cufile_json(void)
{
	const struct gdr_seam *s = gdr_seam();
	const char *v = s->getenv ? s->getenv("CUFILE_ENV_PATH_JSON") : NULL;

	return v && v[0] == '/' ? v : NULL;
}

const char *gdr_env_cufile_lib(void)
{
	const struct gdr_seam *s = gdr_seam();
	const char *v = s->getenv ? s->getenv("GPUDIRECT_CUFILE_LIB") : NULL;

	return v && v[0] ? v : NULL;
}

/* GPUDIRECT_DEBUG's one rule: on for any value but "0" or empty. */
static bool debug_on(const struct gdr_seam *s)
{
	const char *v = s->getenv ? s->getenv("GPUDIRECT_DEBUG") : NULL;

	return v && *v && strcmp(v, "0") != 0;
}

void gdr_env_preload(bool *off, bool *debug)
{
	const struct gdr_seam *s = gdr_seam();
	const char *v = s->getenv ? s->getenv("GPUDIRECT_PRELOAD") : NULL;

	*off = v && !strcmp(v, "0");
	*debug = debug_on(s);
}

void gdr_env_probe(struct gdr_node *nd, const struct gdr_seam *s)
{
	const char *v;
	char buf[SHOWN_LEN];
	enum gdr_path p;

	nd->debug = debug_on(s);
	v = s->getenv ? s->getenv("GPUDIRECT_RELAXED_ORDERING") : NULL;
	if (v && *v) {
		if (!strcmp(v, "0"))
			nd->strict_ordering = true;
		else if (strcmp(v, "1") && strcmp(v, "auto"))
			gdr_fmt(nd->env_error, sizeof(nd->env_error),
				"GPUDIRECT_RELAXED_ORDERING=%s is not 0, 1 "
				"or auto; set one of them, or unset it",
				shown(v, buf));
	}
	v = s->getenv ? s->getenv("GPUDIRECT_PCIE_MAPPING") : NULL;
	if (v && *v) {
		if (!strcmp(v, "on") || !strcmp(v, "1"))
			nd->pcie_policy = GDR_PCIE_ON;
		else if (!strcmp(v, "off") || !strcmp(v, "0"))
			nd->pcie_policy = GDR_PCIE_OFF;
		else if (strcmp(v, "auto"))
			gdr_fmt(nd->env_error, sizeof(nd->env_error),
				"GPUDIRECT_PCIE_MAPPING=%s is not auto, on "
				"or off; set one of them, or unset it",
				shown(v, buf));
	}
	v = s->getenv ? s->getenv("GPUDIRECT_PATH") : NULL;
	if (!v || !*v)
		return;
	if (gdr_path_lookup(v, &p)) {
		gdr_fmt(nd->env_error, sizeof(nd->env_error),
			"GPUDIRECT_PATH=%s is not a path; set it to auto, "
			"data-direct, dmabuf, peermem or host, or unset it",
			shown(v, buf));
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
	char buf[SHOWN_LEN];
	size_t x = 0;

	if (!v || !*v)
		return 0;
	for (p = v; *p; p++) {
		size_t d = (size_t)(*p - '0');

		if (*p < '0' || *p > '9') {
			gdr_fmt(why, n,
				"%s=%s is not a decimal number of entries "
				"or bytes (digits only; 0: no limit); set one, "
				"or unset it",
				name, shown(v, buf));
			return EINVAL;
		}
		if (x > (SIZE_MAX - d) / 10) {
			gdr_fmt(why, n,
				"%s=%s is larger than %zu, the largest "
				"number of entries or bytes; set a smaller "
				"one, 0 for no limit, or unset it",
				name, shown(v, buf), (size_t)SIZE_MAX);
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
	char buf[SHOWN_LEN];

	out[0] = '\0';
	for (name = gdr_env_names; *name; name++) {
		const char *v = s->getenv ? s->getenv(*name) : NULL;

		if (v && *v)
			gdr_append(out, n, "%s%s=%s", out[0] ? ", " : "", *name,
				   shown(v, buf));
	}
}
