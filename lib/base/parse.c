/* SPDX-License-Identifier: MIT */
/* Parsers of outside text: kernel releases, the NVIDIA version file,
 * numbers of sysfs attributes. No I/O. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "json.h"

/* Read a decimal run at *s, at most 6 digits; advance *s. */
static int number(const char **s, int *out)
{
	long v = 0;
	int digits = 0;

	while (isdigit((unsigned char)**s)) {
		if (++digits > 6)
			return EINVAL;
		v = v * 10 + (**s - '0');
		(*s)++;
	}
	if (!digits)
		return EINVAL;
	*out = (int)v;
	return 0;
}

int gdr_parse_kernel_release(const char *s, struct gdr_kver *v)
{
	if (!s || !v)
		return EINVAL;
	v->major = v->minor = v->patch = 0;
	if (number(&s, &v->major) || *s++ != '.' || number(&s, &v->minor))
		return EINVAL;
	/* The patch level is optional ("6.8-rc1"); anything may follow. */
	if (*s == '.') {
		s++;
		if (number(&s, &v->patch))
			v->patch = 0;
	}
	return 0;
}

int gdr_kver_cmp(const struct gdr_kver *a, int major, int minor)
{
	if (a->major != major)
		return a->major < major ? -1 : 1;
	if (a->minor != minor)
		return a->minor < minor ? -1 : 1;
	return 0;
}

enum gdr_nv_flavour gdr_parse_nvidia_version(const char *text, char *ver,
					     size_t n)
{
	const char *p, *line_end, *q;
	size_t len;

	if (n)
		ver[0] = '\0';
	if (!text)
		return GDR_NV_ABSENT;
	/* An empty (or NUL-filled) file is there but says nothing. */
	if (!*text)
		return GDR_NV_UNPARSED;
	p = strstr(text, "NVRM version:");
	if (!p)
		return GDR_NV_UNPARSED;
	line_end = strchr(p, '\n');
	if (!line_end)
		line_end = p + strlen(p);
	/* The version is the first token shaped like 580.159.04 on the line. */
	for (q = p; q < line_end; q++) {
		if (isdigit((unsigned char)*q) && (q == p || q[-1] == ' ')) {
			len = strspn(q, "0123456789.");
			if (len < (size_t)(line_end - q) && q[len] != ' ' &&
			    q[len] != '\t')
				continue;
			if (!memchr(q, '.', len))
				continue;
			if (n) {
				if (len >= n)
					len = n - 1;
				memcpy(ver, q, len);
				ver[len] = '\0';
			}
			break;
		}
	}
	if (n && !ver[0])
		return GDR_NV_UNPARSED;
	/* "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04 ..." */
	if (memmem(p, (size_t)(line_end - p), "Open Kernel Module", 18))
		return GDR_NV_OPEN;
	return GDR_NV_PROPRIETARY;
}

int gdr_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s)
		return EINVAL;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return EINVAL;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s)
		return EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return EINVAL;
	*out = v;
	return 0;
}

void gdr_parse_iommu_cmdline(const char *cmdline, char *out, size_t n)
{
	static const char *const keys[] = {
		"iommu=",	"iommu.passthrough=", "iommu.strict=",
		"intel_iommu=", "amd_iommu=",	      NULL
	};
	const char *p = cmdline ? cmdline : "";
	size_t used = 0;

	if (!n)
		return;
	out[0] = '\0';
	while (*p) {
		const char *end;
		size_t len, i;

		while (*p && isspace((unsigned char)*p))
			p++;
		for (end = p; *end && !isspace((unsigned char)*end); end++)
			;
		len = (size_t)(end - p);
		for (i = 0; keys[i]; i++) {
			size_t k = strlen(keys[i]);

			if (len < k || strncmp(p, keys[i], k))
				continue;
			/* The word, if it fits whole with its separator. */
			if (used + (used ? 1 : 0) + len < n) {
				if (used)
					out[used++] = ' ';
				memcpy(out + used, p, len);
				used += len;
				out[used] = '\0';
			}
			break;
		}
		p = end;
	}
}

void gdr_parse_nvfs_stats(const char *text, char *ver, size_t n,
			  int *peerdirect)
{
	const char *p, *q;
	size_t len;

	if (n)
		ver[0] = '\0';
	*peerdirect = -1;
	if (!text)
		return;
	p = strstr(text, "Driver(version:");
	if (p && n) {
		p += strlen("Driver(version:");
		while (*p == ' ')
			p++;
		for (q = p; *q && *q != ')' && *q != '\n' &&
			    !isspace((unsigned char)*q);
		     q++)
			;
		len = (size_t)(q - p);
		if (*q == ')' && len && len < n) {
			memcpy(ver, p, len);
			ver[len] = '\0';
		}
	}
	p = strstr(text, "PeerDirect Supported:");
	if (p) {
		p += strlen("PeerDirect Supported:");
		while (*p == ' ')
			p++;
		if (!strncmp(p, "True", 4) || !strncmp(p, "true", 4))
			*peerdirect = 1;
		else if (!strncmp(p, "False", 5) || !strncmp(p, "false", 5))
			*peerdirect = 0;
	}
}

int gdr_parse_cufile(const char *text, struct gdr_cufile *c)
{
	const struct json *props, *v, *e;
	struct json *root;
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->allow_compat_mode = -1;
	if (!text)
		return EINVAL;
	root = json_parse_ex(text, JSON_COMMENTS, c->why, sizeof(c->why));
	if (!root)
		return strstr(c->why, "out of memory") ? ENOMEM : EINVAL;
	props = json_get(root, "properties");
	if (root->type != JSON_OBJ) {
		gdr_fmt(c->why, sizeof(c->why), "not a JSON object");
		err = EINVAL;
		goto out;
	}
	if (props && props->type != JSON_OBJ) {
		gdr_fmt(c->why, sizeof(c->why),
			"\"properties\" is not an object");
		err = EINVAL;
		goto out;
	}
	v = json_get(props, "allow_compat_mode");
	if (v)
		c->allow_compat_mode = v->type == JSON_BOOL ? (int)v->num : -2;
	v = json_get(props, "rdma_dev_addr_list");
	if (v && v->type != JSON_ARR) {
		gdr_fmt(c->why, sizeof(c->why),
			"\"properties\": \"rdma_dev_addr_list\" is not an "
			"array");
		err = EINVAL;
		goto out;
	}
	c->has_addr_list = v != NULL;
	for (e = json_items(v); e; e = e->next) {
		size_t len = e->type == JSON_STR ? strlen(e->str) : 0;

		if (!len || len >= sizeof(c->addrs[0]))
			c->not_addrs++;
		else if (c->num_addrs == GDR_CUFILE_MAX_ADDRS)
			c->dropped++;
		else
			memcpy(c->addrs[c->num_addrs++], e->str, len + 1);
	}
out:
	json_free(root);
	return err;
}

int gdr_bdf_normalize(const char *in, char *out, size_t n)
{
	unsigned int dom, bus, dev, fn;
	char tail;

	if (!in ||
	    sscanf(in, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 ||
	    dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return EINVAL;
	gdr_fmt(out, n, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}
