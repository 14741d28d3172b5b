/* SPDX-License-Identifier: MIT */
/*
 * Where a GPU and an RDMA device sit on the PCIe tree, from sysfs alone:
 * the path between them classified the way nvidia-smi topo -m names it,
 * the bridges on it that redirect peer-to-peer traffic (ACS), and the
 * IOMMU groups. The report and gdr_rank_nics() use all of it; a
 * registration asks only whether the RDMA device has a PCI parent
 * (gdr_nic_pci, for the PCIe mapping of C2C GPUs).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"

#define MAX_DEPTH 16

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int gdr_nic_pci(const char *name, char *bdf, size_t n)
{
	char link[PATH_MAX], rel[128];
	int err;

	gdr_fmt(rel, sizeof(rel), "/class/infiniband/%s/device", name);
	err = gdr_read_link(gdr_seam()->sysfs_root, rel, link, sizeof(link));
	if (err)
		return err;
	return gdr_bdf_normalize(base_name(link), bdf, n);
}

int gdr_nic_netdev(const char *name, char *out, size_t n)
{
	char rel[160];

	gdr_fmt(rel, sizeof(rel),
		"/class/infiniband/%s/ports/1/gid_attrs/ndevs/0", name);
	return gdr_read_file(gdr_seam()->sysfs_root, rel, out, n);
}

/*
 * The chain from the root complex down to @bdf: /sys/bus/pci/devices/BDF
 * links to .../devices/pci0000:00/0000:00:01.0/0000:01:00.0. chain[0] is
 * the root ("pci0000:00"), the last entry the device. Returns the length,
 * or -1 when the device is not in sysfs.
 */
static int chain_of(const char *bdf, char chain[][GDR_BDF_LEN], int max)
{
	char link[PATH_MAX], rel[96], *p, *save = NULL;
	int n = 0;

	gdr_fmt(rel, sizeof(rel), "/bus/pci/devices/%s", bdf);
	if (gdr_read_link(gdr_seam()->sysfs_root, rel, link, sizeof(link)))
		return -1;
	p = strstr(link, "devices/pci");
	if (!p)
		return -1;
	p += strlen("devices/");
	for (p = strtok_r(p, "/", &save); p && n < max;
	     p = strtok_r(NULL, "/", &save)) {
		if (n == 0 && strncmp(p, "pci", 3))
			return -1;
		if (n > 0 && gdr_bdf_normalize(p, chain[n], GDR_BDF_LEN))
			continue; /* not a PCI function (e.g. a virtual node) */
		if (n == 0)
			gdr_fmt(chain[0], GDR_BDF_LEN, "%s", p);
		n++;
	}
	if (n < 2 || strcmp(chain[n - 1], bdf))
		return -1;
	return n;
}

static int read_int(const char *bdf, const char *attr, long *v)
{
	char rel[128], text[64];
	int err;

	gdr_fmt(rel, sizeof(rel), "/bus/pci/devices/%s/%s", bdf, attr);
	err = gdr_read_file(gdr_seam()->sysfs_root, rel, text, sizeof(text));
	return err ? err : gdr_parse_long(text, v);
}

bool gdr_pci_exists(const char *bdf)
{
	char link[PATH_MAX], rel[96];

	gdr_fmt(rel, sizeof(rel), "/bus/pci/devices/%s", bdf);
	return gdr_read_link(gdr_seam()->sysfs_root, rel, link, sizeof(link)) ==
	       0;
}

int gdr_pci_numa(const char *bdf)
{
	long v;

	return read_int(bdf, "numa_node", &v) ? -1 : (int)v;
}

int gdr_pci_iommu_group(const char *bdf)
{
	char link[PATH_MAX], rel[128];
	long v;

	gdr_fmt(rel, sizeof(rel), "/bus/pci/devices/%s/iommu_group", bdf);
	if (gdr_read_link(gdr_seam()->sysfs_root, rel, link, sizeof(link)) ||
	    gdr_parse_long(base_name(link), &v))
		return -1;
	return (int)v;
}

/* Common prefix length of two chains (0 when the roots differ). */
static int common(char a[][GDR_BDF_LEN], int na, char b[][GDR_BDF_LEN], int nb)
{
	int k = 0;

	while (k < na && k < nb && !strcmp(a[k], b[k]))
		k++;
	return k;
}

enum gdr_distance gdr_pci_distance(const char *a, const char *b)
{
	char ca[MAX_DEPTH][GDR_BDF_LEN], cb[MAX_DEPTH][GDR_BDF_LEN];
	int na = chain_of(a, ca, MAX_DEPTH), nb = chain_of(b, cb, MAX_DEPTH);
	int k, numa_a, numa_b;

	if (na < 0 || nb < 0)
		return GDR_DIST_UNKNOWN;
	k = common(ca, na, cb, nb);
	if (k == 0) {
		/* Different host bridges: same NUMA node or across sockets. */
		numa_a = gdr_pci_numa(a);
		numa_b = gdr_pci_numa(b);
		return numa_a == numa_b ? GDR_DIST_NODE : GDR_DIST_SYS;
	}
	if (k == 1)
		return GDR_DIST_PHB; /* they meet at the host bridge */
	/*
	 * They meet at a bridge. Each hanging directly off it, or off one of
	 * its downstream ports (one switch), is PIX; anything deeper is PXB.
	 */
	return na - k <= 2 && nb - k <= 2 ? GDR_DIST_PIX : GDR_DIST_PXB;
}

/*
 * Find extended capability @id in @bdf's config space (read into @cfg of
 * 4096 bytes): its offset, 0 when absent, -1 when the extended space is
 * unreadable (it needs root).
 */
static int ext_cap(const char *bdf, unsigned int id, unsigned char *cfg)
{
	char rel[128];
	unsigned int off = 0x100, hops = 0;
	size_t n;

	gdr_fmt(rel, sizeof(rel), "/bus/pci/devices/%s/config", bdf);
	if (gdr_read_bin(gdr_seam()->sysfs_root, rel, cfg, 4096, &n) ||
	    n < 0x104)
		return -1;
	while (off && off + 8 <= (unsigned)n && hops++ < 64) {
		unsigned int hdr = cfg[off] | cfg[off + 1] << 8 |
				   cfg[off + 2] << 16 |
				   (unsigned)cfg[off + 3] << 24;

		if (hdr == 0 || hdr == 0xffffffffu)
			return 0;
		if ((hdr & 0xffff) == id)
			return (int)off;
		off = (hdr >> 20) & 0xffc;
		if (off < 0x100)
			return 0;
	}
	return 0;
}

#define EXT_CAP_ACS 0x000d
#define EXT_CAP_ATS 0x000f
#define ACS_REDIRECT 0x0c	   /* P2P request and completion redirect */
#define ACS_DIRECT_TRANSLATED 0x40 /* P2P direct translated */
#define ATS_ENABLE 0x8000	   /* ATS control register, bit 15 */

/* The ACS control register of @bdf: -1 unreadable, 0 no ACS, else 1 +
 * the control bits. */
static int acs_control(const char *bdf)
{
	unsigned char cfg[4096];
	int off = ext_cap(bdf, EXT_CAP_ACS, cfg);

	if (off <= 0)
		return off;
	return 1 + (cfg[off + 6] | cfg[off + 7] << 8);
}

enum gdr_ats gdr_pci_ats(const char *bdf)
{
	unsigned char cfg[4096];
	int off = ext_cap(bdf, EXT_CAP_ATS, cfg);

	if (off < 0)
		return GDR_ATS_UNKNOWN;
	if (!off)
		return GDR_ATS_ABSENT;
	return (cfg[off + 6] | cfg[off + 7] << 8) & ATS_ENABLE
		       ? GDR_ATS_ENABLED
		       : GDR_ATS_DISABLED;
}

bool gdr_pci_acs_direct_translated(const char *bridges)
{
	char bdf[GDR_BDF_LEN];
	const char *p = bridges;
	int len, any = 0;

	while (sscanf(p, "%15s%n", bdf, &len) == 1) {
		int ctl = acs_control(bdf);

		if (ctl <= 0 || !((ctl - 1) & ACS_DIRECT_TRANSLATED))
			return false;
		any = 1;
		p += len;
	}
	return any;
}

int gdr_pci_iommu_type(const char *bdf, char *out, size_t n, bool *no_group)
{
	char link[PATH_MAX], rel[128];
	long v;
	int err;

	*no_group = false;
	gdr_fmt(rel, sizeof(rel), "/bus/pci/devices/%s/iommu_group", bdf);
	err = gdr_read_link(gdr_seam()->sysfs_root, rel, link, sizeof(link));
	if (err || gdr_parse_long(base_name(link), &v) || v < 0) {
		*no_group = err == ENOENT;
		gdr_fmt(out, n, "%s", err ? gdr_errno_name(err) : link);
		return err ? err : EINVAL;
	}
	gdr_fmt(rel, sizeof(rel), "/kernel/iommu_groups/%ld/type", v);
	err = gdr_read_file(gdr_seam()->sysfs_root, rel, out, n);
	if (err)
		gdr_fmt(out, n, "/sys%s", rel);
	return err;
}

int gdr_pci_acs_redirects(const char *a, const char *b, char *out, size_t n)
{
	char ca[MAX_DEPTH][GDR_BDF_LEN], cb[MAX_DEPTH][GDR_BDF_LEN];
	int na = chain_of(a, ca, MAX_DEPTH), nb = chain_of(b, cb, MAX_DEPTH);
	int k, i, count = 0, unknown = 0;
	size_t used = 0;

	if (n)
		out[0] = '\0';
	if (na < 0 || nb < 0)
		return -1;
	k = common(ca, na, cb, nb);
	/* Bridges below the meeting point on both sides, and the point. */
	for (i = (k > 1 ? k - 1 : 1); i < na - 1 || i < nb - 1; i++) {
		const char *sides[2] = { i < na - 1 ? ca[i] : NULL,
					 i < nb - 1 && i >= k ? cb[i] : NULL };
		int s;

		for (s = 0; s < 2; s++) {
			int ctl;

			if (!sides[s])
				continue;
			ctl = acs_control(sides[s]);
			if (ctl < 0) {
				unknown = 1;
			} else if (ctl > 0 && ((ctl - 1) & ACS_REDIRECT)) {
				gdr_fmt(out + used, n - used, "%s%s",
					count ? " " : "", sides[s]);
				used = strlen(out);
				count++;
			}
		}
	}
	return unknown && !count ? -1 : count;
}
