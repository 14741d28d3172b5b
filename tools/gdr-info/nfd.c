/* SPDX-License-Identifier: MIT */
/*
 * The report as Node Feature Discovery labels: a feature file for NFD's
 * local source (features.d). The rules it follows (NFD source/local and
 * Kubernetes label syntax):
 *  - one "name=value" per line; names get the prefix
 *    feature.node.kubernetes.io/, which NFD accepts without configuration;
 *  - a name (after the prefix) and a value are at most 63 characters of
 *    [A-Za-z0-9._-], beginning and ending alphanumeric;
 *  - "# +expiry-time=RFC3339" first, so that every label expires when the
 *    DaemonSet stops refreshing them;
 *  - at most 64 KiB (NFD skips a larger file): pair labels that do not
 *    fit are dropped and gpudirect-labels.truncated=true says so;
 *  - written to a dot-file beside the target (NFD ignores those), synced,
 *    then renamed over it: NFD never reads half a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gpudirect.h>

#include "items.h"
#include "nfd.h"
#include "replace.h"
#include "storage.h"

#define PREFIX "feature.node.kubernetes.io/"
#define MAX_FILE 65536
#define TRUNCATED PREFIX "gpudirect-labels.truncated=true\n"

struct out {
	char *buf;
	size_t len, cap;
	bool dropped;
};

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

void nfd_value(const char *in, char *out, size_t n)
{
	size_t i, k = 0;

	/* The first word only: "dmabuf (Data Direct unavailable)" */
	for (i = 0; in[i] && in[i] != ' ' && k + 1 < n && k < NFD_MAX; i++) {
		char c = in[i];

		if (!alnum(c) && c != '-' && c != '_' && c != '.')
			c = '-';
		if (k == 0 && !alnum(c))
			continue; /* begin alphanumeric */
		out[k++] = c;
	}
	while (k > 0 && !alnum(out[k - 1]))
		k--; /* end alphanumeric */
	out[k] = '\0';
}

/* FNV-1a: a short, stable tag for a name cut to fit. */
static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

void nfd_device(const char *in, char *out, size_t max)
{
	size_t i, k = 0, len = strlen(in);

	if (max > NFD_MAX)
		max = NFD_MAX;
	/* A name too long keeps its start and a hash of the whole. */
	if (len > max && max > 10) {
		for (i = 0; i < max - 9; i++)
			out[k++] = alnum(in[i]) || in[i] == '_' ? in[i] : '-';
		snprintf(out + k, 10, "-%08x", fnv(in));
		return;
	}
	for (i = 0; i < len && k < max; i++)
		/* '.' separates the parts of our names: not in a device's. */
		out[k++] = alnum(in[i]) || in[i] == '_' ? in[i] : '-';
	out[k] = '\0';
}

/* Room for n more bytes (the NUL counted) at the end of o. */
static int reserve(struct out *o, size_t n)
{
	size_t cap = o->cap ? o->cap : 4096;
	char *b;

	while (o->len + n > cap)
		cap *= 2;
	if (cap == o->cap)
		return 0;
	b = realloc(o->buf, cap);
	if (!b)
		return -1;
	o->buf = b;
	o->cap = cap;
	return 0;
}

static int add(struct out *o, const char *name, const char *value,
	       bool droppable)
{
	char val[NFD_MAX + 1], line[NFD_MAX * 2 + 64];
	size_t len, room;

	nfd_value(value, val, sizeof(val));
	if (!val[0])
		snprintf(val, sizeof(val), "unknown");
	len = (size_t)snprintf(line, sizeof(line), "%s%s=%s\n", PREFIX, name,
			       val);
	/* Keep room for the truncation label. */
	room = MAX_FILE - (sizeof(TRUNCATED) - 1);
	if (o->len + len > room) {
		if (droppable) {
			o->dropped = true;
			return 0;
		}
		return -1;
	}
	if (reserve(o, len + 1))
		return -1;
	memcpy(o->buf + o->len, line, len + 1);
	o->len += len;
	return 0;
}

static const char *yes(bool b)
{
	return b ? "true" : "false";
}

static int labels(struct out *o, const struct gdr_report *r,
		  const struct nfd_selftest *st, unsigned int nst, bool ran)
{
	const char *names[NFD_MAX_NICS], *v;
	char name[128], dev[NFD_MAX + 1], key[32], num[16];
	enum gdr_verdict verdict = GDR_VERDICT_UNKNOWN;
	unsigned int i, n, passed = 0;
	int g, gpus;
	bool dmabuf = false, dd = false;
	int err = 0;

	n = report_rdma_devices(r, names, NFD_MAX_NICS);
	gpus = report_gpus(r);
	for (i = 0; i < n; i++)
		for (g = 0; g < gpus; g++) {
			snprintf(key, sizeof(key), "path_gpu%d", g);
			v = report_value(r, GDR_REPORT_SCOPE_RDMA_DEVICE,
					 names[i], key, NULL);
			dmabuf |= v && !strncmp(v, "dmabuf", 6);
			dd |= v && !strncmp(v, "data-direct", 11);
		}

	snprintf(num, sizeof(num), "%d.%d.%d", GPUDIRECT_VERSION_MAJOR,
		 GPUDIRECT_VERSION_MINOR, GPUDIRECT_VERSION_MICRO);
	err |= add(o, "gpudirect-version", num, false);
	err |= add(o, "gpudirect-rdma.usable", yes(gdr_report_usable(r) == 1),
		   false);
	err |= add(o, "gpudirect-dmabuf.ready", yes(dmabuf || dd), false);
	err |= add(o, "gpudirect-data-direct.ready", yes(dd), false);
	v = report_value(r, GDR_REPORT_SCOPE_NODE, "node", "nvidia_peermem",
			 &verdict);
	err |= add(o, "gpudirect-peermem.ready",
		   yes(v && verdict == GDR_VERDICT_OK), false);
	v = report_value(r, GDR_REPORT_SCOPE_NODE, "node", "gpudirect_storage",
			 &verdict);
	err |= add(o, "gpudirect-gds.ready",
		   yes(v && verdict == GDR_VERDICT_OK), false);
	/* Where --storage paths were checked: what the worst of them
	 * proved (direct, compat, fail, unknown). */
	v = storage_label(r);
	if (v)
		err |= add(o, "gpudirect-gds.storage", v, false);
	/* Translated DMA on any GPU or RDMA device (iommu_mode wrong); said
	 * only where some device's mode is known. */
	{
		bool known = false, translated = false;
		char sec[16];

		for (g = 0; g < gpus + (int)n; g++) {
			if (g < gpus)
				snprintf(sec, sizeof(sec), "gpu%d", g);
			v = report_value(r,
					 g < gpus
						 ? GDR_REPORT_SCOPE_GPU
						 : GDR_REPORT_SCOPE_RDMA_DEVICE,
					 g < gpus ? sec : names[g - gpus],
					 "iommu_mode", &verdict);
			if (!v || (verdict != GDR_VERDICT_OK &&
				   verdict != GDR_VERDICT_WRONG))
				continue;
			known = true;
			translated |= verdict == GDR_VERDICT_WRONG;
		}
		if (known)
			err |= add(o, "gpudirect-iommu.translated",
				   yes(translated), false);
	}
	snprintf(num, sizeof(num), "%d", gpus);
	err |= add(o, "gpudirect-gpu.count", num, false);
	snprintf(num, sizeof(num), "%u", n);
	err |= add(o, "gpudirect-rdma.devices", num, false);
	err |= add(o, "gpudirect-host-only", yes(gpus == 0 && n > 0), false);
	if (ran) {
		for (i = 0; i < nst; i++)
			passed += st[i].ok;
		err |= add(o, "gpudirect-selftest",
			   nst == 0	   ? "none"
			   : passed == nst ? "pass"
					   : "fail",
			   false);
	}
	/* Per pair: "gpudirect-gpuN.DEV.path" and friends; a device name
	 * keeps at most what leaves room for the longest suffix. */
	for (i = 0; i < n; i++) {
		nfd_device(names[i], dev,
			   NFD_MAX - strlen("gpudirect-gpu99..selftest"));
		for (g = 0; g < gpus; g++) {
			snprintf(key, sizeof(key), "path_gpu%d", g);
			snprintf(name, sizeof(name), "gpudirect-gpu%d.%s.path",
				 g, dev);
			v = report_value(r, GDR_REPORT_SCOPE_RDMA_DEVICE,
					 names[i], key, NULL);
			err |= add(o, name, v ? v : "unknown", true);
			snprintf(key, sizeof(key), "topology_gpu%d", g);
			snprintf(name, sizeof(name), "gpudirect-gpu%d.%s.pcie",
				 g, dev);
			v = report_value(r, GDR_REPORT_SCOPE_RDMA_DEVICE,
					 names[i], key, NULL);
			err |= add(o, name, v ? v : "unknown", true);
		}
	}
	for (i = 0; i < nst; i++) {
		nfd_device(st[i].nic, dev,
			   NFD_MAX - strlen("gpudirect-gpu99..selftest"));
		if (st[i].gpu < 0)
			snprintf(name, sizeof(name),
				 "gpudirect-host.%s.selftest", dev);
		else
			snprintf(name, sizeof(name),
				 "gpudirect-gpu%d.%s.selftest", st[i].gpu, dev);
		err |= add(o, name, st[i].ok ? "pass" : "fail", true);
	}
	return err;
}

static void expiry_line(struct out *o, long seconds)
{
	char stamp[32];
	time_t t = time(NULL) + seconds;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	o->len = (size_t)snprintf(o->buf, o->cap,
				  "# libgpudirect gdr-info: GPUDirect RDMA "
				  "readiness\n# +expiry-time=%s\n",
				  stamp);
}

int nfd_render(const struct gdr_report *r, const struct nfd_selftest *st,
	       unsigned int nst, bool ran, long expiry, char **text,
	       size_t *len)
{
	struct out o = { .cap = 4096 };

	o.buf = malloc(o.cap);
	if (!o.buf)
		return -1;
	expiry_line(&o, expiry);
	if (labels(&o, r, st, nst, ran)) {
		free(o.buf);
		return -1;
	}
	if (o.dropped) {
		/* add() kept room in the file, not always in the buffer. */
		if (reserve(&o, sizeof(TRUNCATED))) {
			free(o.buf);
			return -1;
		}
		memcpy(o.buf + o.len, TRUNCATED, sizeof(TRUNCATED));
		o.len += sizeof(TRUNCATED) - 1;
	}
	*text = o.buf;
	*len = o.len;
	return 0;
}

int nfd_write(const char *file, const char *text, size_t len, char *err,
	      size_t n)
{
	/* A dot-file beside it (NFD skips those), renamed: atomic. */
	return replace_file(file, text, len, err, n);
}
