/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect Storage's facts, for the report: nvidia-fs against the release
 * the open kernel module needs, and what cuFile's cufile.json says
 * (compatibility mode, and whether the RDMA addresses it lists are this
 * node's). The node's list of checks (facts.c) names them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "thresholds.h"

/* --- nvidia-fs ------------------------------------------------------------- */

static const char gds_remedy[] = "only for GPUDirect Storage: modprobe "
				 "nvidia-fs (GPU Operator: gds.enabled=true)";

static void eval_gds(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_node *nd = s->node;
	const struct gdr_host_facts *h = s->host;
	const char *ver = nd->nvidia_fs_version[0] ? nd->nvidia_fs_version
			  : h			   ? h->nvfs_stats_version
						   : "";
	struct gdr_kver v;

	gdr_eval_value(
		e, "%s%s%s%s%s",
		nd->nvidia_fs ? "nvidia_fs loaded" : "nvidia_fs not loaded",
		ver[0] ? " " : "", ver,
		nd->nvidia_fs_proc ? ", /proc/driver/nvidia-fs present" : "",
		h && h->nvfs_peerdirect == 1   ? ", PeerDirect supported"
		: h && h->nvfs_peerdirect == 0 ? ", PeerDirect not supported"
					       : "");
	if (!nd->nvidia_fs) {
		gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
		e->remedy = gds_remedy;
		return;
	}
	if (gdr_parse_kernel_release(ver, &v)) {
		gdr_append(e->value, sizeof(e->value), " (version unknown)");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = "cat /sys/module/nvidia_fs/version";
		return;
	}
	if (v.major < GDS_NVFS_MAJOR ||
	    (v.major == GDS_NVFS_MAJOR &&
	     (v.minor < GDS_NVFS_MINOR ||
	      (v.minor == GDS_NVFS_MINOR && v.patch < GDS_NVFS_PATCH)))) {
		gdr_append(e->value, sizeof(e->value), " (older than %d.%d.%d)",
			   GDS_NVFS_MAJOR, GDS_NVFS_MINOR, GDS_NVFS_PATCH);
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
		e->remedy =
			"GPUDirect Storage as the GPU Operator runs it "
			"needs nvidia-fs " GDS_NVFS_STR " or newer: upgrade "
			"it (GPU Operator: gds.version)";
		return;
	}
	if (nd->nv_flavour != GDR_NV_OPEN &&
	    nd->nv_flavour != GDR_NV_PROPRIETARY) {
		/* No NVIDIA version file to tell the module by. */
		gdr_append(e->value, sizeof(e->value),
			   " (the NVIDIA kernel module's flavour is unknown)");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = "cat /proc/driver/nvidia/version";
	} else if (nd->nv_flavour == GDR_NV_PROPRIETARY) {
		gdr_append(e->value, sizeof(e->value),
			   " (without the open kernel module)");
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
		e->remedy = "nvidia-fs " GDS_NVFS_STR " and newer need the "
			    "NVIDIA open "
			    "kernel module (GPU Operator: "
			    "driver.kernelModuleType=open)";
	}
}

const struct gdr_check gdr_check_gds = {
	.key = "gpudirect_storage",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_gds,
	.describe = gdr_describe_value,
	.remedy = gds_remedy,
};

/* --- GPUDirect Storage's cufile.json ----------------------------------- */

/* An address as bytes (AF_INET or AF_INET6), for comparing "fe80::0001"
 * with "fe80::1": its family, or 0 when it is not an address. */
static int addr_bytes(const char *text, unsigned char *out)
{
	if (inet_pton(AF_INET, text, out) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, text, out) == 1)
		return AF_INET6;
	return 0;
}

/* What an entry that is not an address is, for the report: cuFile takes
 * addresses only. */
static const char *not_addr_kind(const char *text)
{
	unsigned char b[16];
	char head[48];
	const char *slash = strchr(text, '/');
	size_t i, n = strlen(text);
	bool letter = false;

	if (slash && (size_t)(slash - text) < sizeof(head) && slash[1] &&
	    strspn(slash + 1, "0123456789") == strlen(slash + 1)) {
		memcpy(head, text, (size_t)(slash - text));
		head[slash - text] = '\0';
		if (addr_bytes(head, b))
			return "a CIDR block, not an IP address";
	}
	for (i = 0; i < n; i++) {
		char c = text[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			letter = true;
		else if (!(c >= '0' && c <= '9') && c != '-' && c != '.')
			return "not an IP address";
	}
	/* Letters, digits, '-' and '.' only: RFC 1123's host names (and
	 * netdev names such as eth0, which read the same). */
	return letter && text[0] != '-' && text[0] != '.'
		       ? "a host name, not an IP address"
		       : "not an IP address";
}

/* Whether @want is one of the space-separated addresses of @list. */
static bool same_addr_in(const char *want, const char *list)
{
	unsigned char a[16], b[16];
	char word[64];
	int fa = addr_bytes(want, a), len;

	if (!fa)
		return false;
	while (sscanf(list, " %63s%n", word, &len) == 1) {
		if (addr_bytes(word, b) == fa &&
		    !memcmp(a, b, fa == AF_INET ? 4 : 16))
			return true;
		list += len;
	}
	return false;
}

/* cuFile reads $CUFILE_ENV_PATH_JSON, else /etc/cufile.json; a replay
 * reads the path the capture read (the seam's cufile_path). */
void gdr_cufile_look(struct gdr_cufile_view *v,
		     const struct gdr_nic_view *views, unsigned int num)
{
	const struct gdr_seam *s = gdr_seam();
	const char *env =
		s->cufile_path[0] ? s->cufile_path : gdr_env_cufile_json();
	const size_t max = GDR_CUFILE_MAX_BYTES;
	char addrs[GDR_IF_ADDRS_LEN], *text;
	unsigned int i, k;
	size_t got = 0;

	memset(v, 0, sizeof(*v));
	text = malloc(max + 2);
	if (!text) {
		v->err = ENOMEM;
		return;
	}
	if (env) {
		gdr_fmt(v->path, sizeof(v->path), "%s", env);
		/* Under --host-root, the host's file of that name. */
		v->err =
			gdr_read_bin(gdr_open_root(), env, text, max + 1, &got);
	} else {
		gdr_fmt(v->path, sizeof(v->path), "/etc/cufile.json");
		v->err = gdr_read_bin(s->etc_root, "/cufile.json", text,
				      max + 1, &got);
	}
	text[got] = '\0';
	if (!v->err && got > max)
		v->err = EFBIG; /* cuFile would read all of it: we cannot */
	else if (!v->err && strlen(text) != got)
		v->err = EINVAL, v->not_json = true; /* a NUL byte */
	if (!v->err) {
		v->err = gdr_parse_cufile(text, &v->c);
		v->not_json = v->err == EINVAL;
	}
	free(text);
	if (v->err)
		return;
	for (i = 0; i < num; i++) {
		char dev[64];
		int err;

		/* RoCE and rxe: port 1's netdev; InfiniBand has none. */
		if (gdr_nic_netdev(views[i].name, dev, sizeof(dev)) ||
		    !dev[0] || !s->if_addrs)
			continue;
		err = s->if_addrs(dev, addrs, sizeof(addrs));
		if (err) {
			v->addrs_err = err;
			continue;
		}
		v->addrs_known = true;
		for (k = 0; k < v->c.num_addrs; k++)
			if (!v->owner[k][0] &&
			    same_addr_in(v->c.addrs[k], addrs))
				gdr_fmt(v->owner[k], sizeof(v->owner[k]), "%s",
					views[i].name);
	}
}

static void eval_gds_compat(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_cufile_view *v = s->cufile;

	if (!v || v->err == ENOENT) {
		e->skip = true; /* no cufile.json: no GPUDirect Storage here */
		return;
	}
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
	if (v->err) {
		gdr_eval_value(e, "unknown (%s: %s%s%s)", v->path,
			       v->not_json	 ? "not JSON with comments as "
						   "cuFile reads it"
			       : v->err == EFBIG ? "larger than the 256 KiB "
						   "the doctor reads"
						 : gdr_errno_name(v->err),
			       v->not_json && v->c.why[0] ? ": " : "",
			       v->not_json ? v->c.why : "");
		e->verdict = GDR_VERDICT_UNKNOWN;
		e->remedy = "";
	} else if (v->c.allow_compat_mode == -2) {
		gdr_eval_value(e,
			       "not true or false (%s): what cuFile does with "
			       "it is not known here",
			       v->path);
		e->verdict = GDR_VERDICT_WRONG;
		e->remedy = "set \"allow_compat_mode\" to true or false (a "
			    "JSON boolean, not a string or number)";
	} else if (v->c.allow_compat_mode == 1) {
		gdr_eval_value(e,
			       "true (%s): where GPUDirect Storage cannot "
			       "be used, cuFile moves the data through a "
			       "CPU bounce buffer without saying so",
			       v->path);
		e->remedy = "set \"allow_compat_mode\": false to have cuFile "
			    "fail instead of falling back, or expect the "
			    "bounce buffer's speed";
	} else if (v->c.allow_compat_mode == 0) {
		gdr_eval_value(e, "false (%s)", v->path);
		e->verdict = GDR_VERDICT_OK;
	} else {
		gdr_eval_value(e, "not set (%s)", v->path);
	}
}

const struct gdr_check gdr_check_gds_compat = {
	.key = "gds_compat_mode",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_gds_compat,
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_gds_addrs(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_cufile_view *v = s->cufile;
	unsigned int k, stale = 0, not_addr = 0;

	if (!v || v->err) {
		e->skip = true; /* said by gds_compat_mode */
		return;
	}
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
	if (!v->c.has_addr_list ||
	    (!v->c.num_addrs && !v->c.dropped && !v->c.not_addrs)) {
		gdr_eval_value(e,
			       "%s (%s): GPUDirect Storage uses no RDMA "
			       "device",
			       v->c.has_addr_list ? "empty" : "not set",
			       v->path);
		return;
	}
	e->value[0] = '\0';
	for (k = 0; k < v->c.num_addrs; k++) {
		unsigned char b[16];
		bool addr = addr_bytes(v->c.addrs[k], b) != 0;

		gdr_append(e->value, sizeof(e->value), "%s%s (%s)",
			   k ? ", " : "", v->c.addrs[k],
			   !addr	    ? not_addr_kind(v->c.addrs[k])
			   : v->owner[k][0] ? v->owner[k]
			   : v->addrs_known ? "on no RDMA device here"
					    : "unknown");
		/* Only an address can be on no device here: what is not one
		 * is wrong whatever the node, never stale. */
		stale += addr && !v->owner[k][0];
		not_addr += !addr;
	}
	if (v->c.not_addrs)
		gdr_append(e->value, sizeof(e->value),
			   "%s%u entries not IP addresses (not strings, empty, "
			   "or longer than any address)",
			   e->value[0] ? "; " : "", v->c.not_addrs);
	not_addr += v->c.not_addrs;
	if (not_addr) {
		e->verdict = GDR_VERDICT_WRONG;
		e->remedy = "cuFile's rdma_dev_addr_list holds entries that "
			    "are not IP addresses (cuFile takes neither host "
			    "names nor CIDR blocks nor device names): list "
			    "the IP addresses of the RDMA devices' netdevs "
			    "(ip -br addr)";
	} else if (!v->addrs_known) {
		e->verdict = GDR_VERDICT_UNKNOWN;
		e->remedy = v->addrs_err == EXDEV
				    ? "under --host-root this network "
				      "namespace is not the host's: its "
				      "addresses are not the host's NICs'"
				    : "no RDMA device's addresses could be "
				      "read (an InfiniBand port has no netdev "
				      "of its own here)";
	} else if (stale) {
		e->verdict = GDR_VERDICT_WRONG;
		e->remedy =
			"cuFile's rdma_dev_addr_list names addresses that no "
			"RDMA device on this node has: GDS then uses the "
			"wrong NIC or none; list the addresses of the "
			"RDMA devices' netdevs (ip -br addr)";
	} else if (v->c.dropped) {
		/* What was judged is fine, but not all of it was. */
		e->verdict = GDR_VERDICT_UNKNOWN;
		e->remedy = "";
	} else {
		e->verdict = GDR_VERDICT_OK;
	}
	if (v->c.dropped)
		gdr_append(e->value, sizeof(e->value),
			   "; %u entries not judged (past the first %d)",
			   v->c.dropped, GDR_CUFILE_MAX_ADDRS);
}

const struct gdr_check gdr_check_gds_addrs = {
	.key = "gds_rdma_addrs",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_gds_addrs,
	.describe = gdr_describe_value,
	.remedy = "",
};
