/* SPDX-License-Identifier: MIT */
/*
 * gdr-info --storage PATH in the report: for cuFile (section "storage")
 * and for each path ("storageN") a value, a verdict and a remedy, from
 * the facts storage-io.c gathered live or a snapshot kept
 * (struct gdr_storage), the mount table and sysfs (storage-mount.c), and
 * the report's own RDMA items (a pair's path and PCIe distance). Every
 * remedy of GPUDirect Storage per path is written here, once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "thresholds.h"

/* --- the remedies ------------------------------------------------------- */

static const char r_install[] =
	"install cuFile: the CUDA toolkit's libcufile (package libcufile-13-0 "
	"or libcufile-12-x), or set GPUDIRECT_CUFILE_LIB to the libcufile.so.0 "
	"that the nvidia-cufile wheel put under site-packages/nvidia/cu13/lib";
static const char r_nvfs[] =
	"load nvidia-fs " GDS_NVFS_STR " or newer on the NVIDIA open kernel "
	"module (GPU Operator: --set gds.enabled=true --set "
	"driver.kernelModuleType=open)";
static const char r_nfs[] =
	"mount the export with -o proto=rdma,port=20049: GPUDirect Storage "
	"reads NFS directly only over RDMA";
static const char r_nvmeof[] =
	"connect the NVMe-oF target over RDMA (nvme connect -t rdma): "
	"GPUDirect Storage reads NVMe-oF directly only over RDMA";
static const char r_lustre[] =
	"reach the Lustre servers over LNet o2ib (RDMA): GPUDirect Storage "
	"reads Lustre directly only over o2ib";
static const char r_known[] =
	"give a path on storage that GPUDirect Storage reads directly: ext4 or "
	"XFS on local NVMe or NVMe-oF over RDMA, NFS over RDMA, Lustre, GPFS, "
	"WekaFS or BeeGFS";
static const char r_overlay[] =
	"give a path on the storage mount itself (a volume mounted into the "
	"container), not on the container's layered root";
static const char r_kind[] =
	"give a directory on the mount (a temporary file is written there and "
	"removed) or an existing regular file (only read, never written)";
static const char r_route[] =
	"put the storage network's address on an RDMA device's port, so that "
	"the route to the server leaves through it";
static const char r_compat[] =
	"set \"allow_compat_mode\": false in cufile.json, so that a read "
	"GPUDirect Storage cannot do directly fails instead of passing through "
	"host memory unnoticed";
static const char r_force[] =
	"set \"force_compat_mode\": false in cufile.json: while it is true "
	"cuFile never reads directly";
static const char r_log[] = "cuFile writes why to its log: run again with "
			    "CUFILE_LOGFILE_PATH=/tmp/cufile.log and read it";

/* --- words --------------------------------------------------------------- */

static const char *op_name(int err, char *buf, size_t n)
{
	switch (err) {
#define GDR_CUFILE_OP_CASE(name, value)                                        \
	case value: gdr_fmt(buf, n, "%s (%d)", #name, value); return buf;
		GDR_CUFILE_OPS(GDR_CUFILE_OP_CASE)
#undef GDR_CUFILE_OP_CASE
	default: gdr_fmt(buf, n, "cuFile error %d", err); return buf;
	}
}

/* A cuFileRead/cuFileWrite answer that is not the bytes asked for. */
static void ret_words(long long ret, int err, unsigned long long want,
		      char *buf, size_t n)
{
	char name[96];

	if (ret >= 0)
		gdr_fmt(buf, n, "moved %lld of %llu bytes", ret, want);
	else if (ret == -1)
		gdr_fmt(buf, n, "failed: %s", gdr_errno_name(err));
	else if (-ret > GDR_CUFILE_BASE_ERR)
		gdr_fmt(buf, n, "failed: %s",
			op_name((int)-ret, name, sizeof(name)));
	else
		gdr_fmt(buf, n, "failed: %s", gdr_errno_name((int)-ret));
}

static void bytes_words(unsigned long long b, char *buf, size_t n)
{
	if (b >= (1ULL << 20) && !(b & ((1ULL << 20) - 1)))
		gdr_fmt(buf, n, "%llu MiB", b >> 20);
	else if (b >= 1024 && !(b & 1023))
		gdr_fmt(buf, n, "%llu KiB", b >> 10);
	else
		gdr_fmt(buf, n, "%llu bytes", b);
}

/* "64 MiB in 12.3 ms (5.46 GB/s)" */
static void rate(unsigned long long b, unsigned long long ns, char *buf,
		 size_t n)
{
	char size[32];

	bytes_words(b, size, sizeof(size));
	if (!ns)
		ns = 1;
	gdr_fmt(buf, n, "%s in %.1f ms (%.2f GB/s)", size, (double)ns / 1e6,
		(double)b / (double)ns);
}

static const char *kind_words(int kind)
{
	switch (kind) {
	case GDR_STORAGE_KIND_FILE: return "a regular file";
	case GDR_STORAGE_KIND_DIR: return "a directory";
	case GDR_STORAGE_KIND_FIFO: return "a FIFO";
	case GDR_STORAGE_KIND_CHAR: return "a character device";
	case GDR_STORAGE_KIND_BLOCK: return "a block device";
	case GDR_STORAGE_KIND_SOCKET: return "a socket";
	default: return "not a file or directory";
	}
}

/* The cuFile driver status bit of a transport, -1 where none. */
static int fs_bit(enum gdr_transport t)
{
	switch (t) {
	case GDR_T_NFS_RDMA:
	case GDR_T_NFS_TCP: return GDR_CUFILE_FS_NFS;
	case GDR_T_NVMEOF_RDMA:
	case GDR_T_NVMEOF_TCP:
	case GDR_T_NVMEOF_FC: return GDR_CUFILE_FS_NVMEOF;
	case GDR_T_NVME_LOCAL: return GDR_CUFILE_FS_NVME;
	case GDR_T_SCSI: return GDR_CUFILE_FS_SCSI;
	case GDR_T_LUSTRE: return GDR_CUFILE_FS_LUSTRE;
	case GDR_T_GPFS: return GDR_CUFILE_FS_GPFS;
	case GDR_T_WEKAFS: return GDR_CUFILE_FS_WEKAFS;
	case GDR_T_BEEGFS: return GDR_CUFILE_FS_BEEGFS;
	case GDR_T_VIRTIOFS: return GDR_CUFILE_FS_VIRTIOFS;
	default: return -1;
	}
}

/* The transport's own remedy where it is why the bytes are not direct. */
static const char *transport_remedy(const struct gdr_storage_mount *sm)
{
	switch (sm->transport) {
	case GDR_T_NFS_TCP: return r_nfs;
	case GDR_T_NVMEOF_TCP:
	case GDR_T_NVMEOF_FC: return r_nvmeof;
	case GDR_T_LUSTRE: return sm->rdma || !sm->server[0] ? NULL : r_lustre;
	case GDR_T_OVERLAY: return r_overlay;
	case GDR_T_BLOCK:
	case GDR_T_MEMORY:
	case GDR_T_OTHER:
	case GDR_T_UNKNOWN: return r_known;
	default: return NULL;
	}
}

/* --- what the report already says ------------------------------------- */

static const struct gdr_report_entry *find(const struct gdr_report *r,
					   const char *section, const char *key)
{
	unsigned int i;

	for (i = 0; i < r->num; i++)
		if (!strcmp(r->items[i].section, section) &&
		    !strcmp(r->items[i].key, key))
			return &r->items[i];
	return NULL;
}

/* The RDMA device among @ctxs whose netdev is @dev (RoCE, rxe: port 1's),
 * or whose PCI function @dev is (IPoIB). Its name, or NULL. */
static const char *nic_of(const char *dev, struct ibv_context *const *ctxs,
			  unsigned int num)
{
	const struct gdr_seam *s = gdr_seam();
	char nd[64], path[128], target[PATH_MAX], bdf[GDR_BDF_LEN];
	const char *pci = NULL, *name;
	unsigned int i;

	gdr_fmt(path, sizeof(path), "/class/net/%s/device", dev);
	if (!gdr_read_link(s->sysfs_root, path, target, sizeof(target))) {
		pci = strrchr(target, '/');
		pci = pci ? pci + 1 : target;
	}
	for (i = 0; i < num; i++) {
		name = s->verbs.device_name(ctxs[i]->device);
		if (!name)
			continue;
		if (!gdr_nic_netdev(name, nd, sizeof(nd)) && !strcmp(nd, dev))
			return name;
	}
	for (i = 0; pci && i < num; i++) {
		name = s->verbs.device_name(ctxs[i]->device);
		if (name && !gdr_nic_pci(name, bdf, sizeof(bdf)) &&
		    !strcmp(bdf, pci))
			return name;
	}
	return NULL;
}

/* --- the node's cuFile -------------------------------------------------- */

static void cufile_items(struct gdr_report *r, const struct gdr_storage *st)
{
	const struct gdr_storage_cufile *cf = &st->cufile;
	char v[GDR_VALUE_LEN], name[96], list[256];
	unsigned int b;

	if (cf->load_err < 0) {
		gdr_report_add(r, "storage", "cufile_library",
			       GDR_VERDICT_UNKNOWN, "", cf->why);
		return;
	}
	if (cf->load_err) {
		gdr_report_add(r, "storage", "cufile_library",
			       cf->load_err == ENOENT ? GDR_VERDICT_MISSING
						      : GDR_VERDICT_WRONG,
			       r_install, cf->why);
		return;
	}
	gdr_fmt(v, sizeof(v), "%s (found by %s)", cf->library, cf->how);
	if (cf->version > 0)
		gdr_append(v, sizeof(v), ", cuFile %d.%d (cuFileGetVersion %d)",
			   cf->version / 1000, cf->version % 1000 / 10,
			   cf->version);
	gdr_report_add(r, "storage", "cufile_library", GDR_VERDICT_OK, "", v);
	if (cf->open_err < 0) {
		gdr_fmt(v, sizeof(v), "not opened: %s did not return in time",
			cf->stuck[0] ? cf->stuck : "loading");
		gdr_report_add(r, "storage", "cufile_driver",
			       GDR_VERDICT_UNKNOWN, r_log, v);
		return;
	}
	if (cf->open_err) {
		gdr_fmt(v, sizeof(v), "cuFileDriverOpen answered %s",
			op_name(cf->open_err, name, sizeof(name)));
		if (cf->open_err == GDR_CU_FILE_CUDA_DRIVER_ERROR)
			gdr_append(v, sizeof(v), ", CUDA error %d",
				   cf->open_cu_err);
		gdr_report_add(
			r, "storage", "cufile_driver", GDR_VERDICT_MISSING,
			cf->open_err == GDR_CU_FILE_DRIVER_NOT_INITIALIZED
				? r_nvfs
				: r_log,
			v);
		return;
	}
	if (cf->props_err) {
		gdr_fmt(v, sizeof(v),
			"open; cuFileDriverGetProperties "
			"answered %s",
			op_name(cf->props_err, name, sizeof(name)));
		gdr_report_add(r, "storage", "cufile_driver",
			       GDR_VERDICT_UNKNOWN, r_log, v);
		return;
	}
	if (cf->nvfs_major) {
		gdr_fmt(v, sizeof(v), "open, nvidia-fs %u.%u as cuFile sees it",
			cf->nvfs_major, cf->nvfs_minor);
		gdr_report_add(r, "storage", "cufile_driver", GDR_VERDICT_OK,
			       "", v);
	} else {
		gdr_report_add(r, "storage", "cufile_driver", GDR_VERDICT_WRONG,
			       r_nvfs,
			       "open without nvidia-fs: cuFile reads and "
			       "writes through host memory (compatibility "
			       "mode) unless PCI P2PDMA serves a file");
	}
	list[0] = '\0';
	for (b = 0; b < 32; b++) {
		const char *w = NULL;

		if (!(cf->dstatusflags & (1u << b)))
			continue;
		switch (b) {
#define GDR_CUFILE_FS_CASE(fsname, bit, words)                                 \
	case bit: w = words; break;
			GDR_CUFILE_FS_FLAGS(GDR_CUFILE_FS_CASE)
#undef GDR_CUFILE_FS_CASE
		}
		if (w)
			gdr_append(list, sizeof(list), "%s%s",
				   list[0] ? ", " : "", w);
		else
			gdr_append(list, sizeof(list), "%sbit %u",
				   list[0] ? ", " : "", b);
	}
	gdr_fmt(v, sizeof(v), "nvidia-fs reaches%s%s; PCI P2PDMA %s",
		list[0] ? ": " : " nothing", list,
		cf->fflags & (1u << GDR_CUFILE_FEAT_P2P) ? "supported"
							 : "not supported");
	if (cf->allow_compat >= 0)
		gdr_append(v, sizeof(v),
			   "; allow_compat_mode %s, force_compat_mode %s, "
			   "use_pci_p2pdma %s",
			   cf->allow_compat ? "true" : "false",
			   cf->force_compat == 1   ? "true"
			   : cf->force_compat == 0 ? "false"
						   : "unknown",
			   cf->use_p2pdma == 1	 ? "true"
			   : cf->use_p2pdma == 0 ? "false"
						 : "unknown");
	gdr_report_add(r, "storage", "cufile_properties",
		       cf->force_compat == 1   ? GDR_VERDICT_WRONG
		       : cf->allow_compat != 0 ? GDR_VERDICT_INFO
					       : GDR_VERDICT_OK,
		       cf->force_compat == 1 ? r_force : r_compat, v);
}

/* --- one path ------------------------------------------------------------ */

enum mode {
	MODE_NONE = 0, /* nothing was moved through cuFile */
	MODE_DIRECT,
	MODE_COMPAT,
	MODE_MIXED,
	MODE_UNKNOWN,
};

/* What one path's items found, for its summary. */
struct path_view {
	struct gdr_storage_mount sm;
	const char *nic;    /* the RDMA device carrying it, or NULL */
	bool addrs_missing; /* cufile.json does not list its address */
	char addr_remedy[GDR_WHY_LEN];
	bool p2p; /* PCI P2PDMA can serve it */
	enum mode mode;
	char mode_words[GDR_VALUE_LEN];
};

static void section_of(char *sec, size_t n, int i)
{
	gdr_fmt(sec, n, "storage%d", i);
}

static void path_item(struct gdr_report *r, const char *sec,
		      const struct gdr_storage_path *p)
{
	char v[GDR_VALUE_LEN], size[32];

	if (p->err) {
		gdr_fmt(v, sizeof(v), "%s: %s", p->path,
			gdr_errno_name(p->err));
		gdr_report_add(r, sec, "path", GDR_VERDICT_MISSING, r_kind, v);
		return;
	}
	bytes_words(p->size, size, sizeof(size));
	gdr_fmt(v, sizeof(v), "%s: %s", p->path, kind_words(p->kind));
	if (p->kind == GDR_STORAGE_KIND_FILE)
		gdr_append(v, sizeof(v), " of %s (read, never written)", size);
	else if (p->kind == GDR_STORAGE_KIND_DIR)
		gdr_append(v, sizeof(v),
			   " (a temporary file is written and removed there)");
	else
		gdr_append(v, sizeof(v), ", never opened");
	if (strcmp(p->real, p->path))
		gdr_append(v, sizeof(v), "; it resolves to %s", p->real);
	if (p->kind == GDR_STORAGE_KIND_FILE || p->kind == GDR_STORAGE_KIND_DIR)
		gdr_report_add(r, sec, "path", GDR_VERDICT_INFO, "", v);
	else
		gdr_report_add(r, sec, "path", GDR_VERDICT_WRONG, r_kind, v);
}

static void mount_items(struct gdr_report *r, const char *sec,
			const struct gdr_storage_path *p, struct path_view *pv)
{
	const struct gdr_storage_mount *sm = &pv->sm;
	enum gdr_verdict verdict = GDR_VERDICT_OK;
	const char *remedy = "";
	char v[GDR_VALUE_LEN], ro[8];

	if (sm->err) {
		if (sm->err == ENOENT)
			gdr_fmt(v, sizeof(v),
				"unknown: no line of /proc/self/mountinfo is "
				"its mount (mount id %lld, device %u:%u)%s",
				p->mnt_id, p->dev_major, p->dev_minor,
				sm->cut ? "; the table was read only to 256 KiB"
					: "");
		else
			gdr_fmt(v, sizeof(v),
				"unknown: /proc/self/mountinfo: %s",
				sm->err == EINVAL ? "not the kernel's table"
						  : gdr_errno_name(sm->err));
		gdr_report_add(r, sec, "mount", GDR_VERDICT_UNKNOWN, "", v);
		return;
	}
	gdr_fmt(v, sizeof(v), "%s on %s (%s, %s)", sm->m.source, sm->m.point,
		sm->m.fstype,
		gdr_mount_option(sm->m.options, "ro", ro, sizeof(ro))
			? "read-write"
			: "read-only");
	if (sm->bad_lines)
		gdr_append(v, sizeof(v),
			   "; %u lines of the table not in mountinfo's form "
			   "were passed over",
			   sm->bad_lines);
	gdr_report_add(r, sec, "mount", GDR_VERDICT_INFO, "", v);

	gdr_fmt(v, sizeof(v), "%s", sm->detail);
	switch (sm->transport) {
	case GDR_T_NFS_RDMA:
	case GDR_T_NVMEOF_RDMA:
	case GDR_T_NVME_LOCAL: break;
	case GDR_T_LUSTRE:
		if (sm->server[0])
			gdr_append(v, sizeof(v), ", servers over %s",
				   sm->rdma ? "o2ib (RDMA)" : "LNet, not o2ib");
		verdict = !sm->server[0] ? GDR_VERDICT_INFO
			  : sm->rdma	 ? GDR_VERDICT_OK
					 : GDR_VERDICT_WRONG;
		break;
	case GDR_T_SCSI:
	case GDR_T_GPFS:
	case GDR_T_WEKAFS:
	case GDR_T_BEEGFS:
	case GDR_T_VIRTIOFS:
		/* Known to cuFile; how the client moves data is not seen
		 * here. */
		verdict = GDR_VERDICT_INFO;
		break;
	case GDR_T_NVME_UNKNOWN:
		gdr_fmt(v, sizeof(v), "NVMe, transport unknown: %s", sm->why);
		verdict = GDR_VERDICT_UNKNOWN;
		break;
	case GDR_T_OVERLAY:
		gdr_fmt(v, sizeof(v),
			"overlay (a container's layered file system): not "
			"known to GPUDirect Storage");
		verdict = GDR_VERDICT_WRONG;
		break;
	case GDR_T_MEMORY:
		gdr_fmt(v, sizeof(v),
			"%s (memory, not storage): not known to GPUDirect "
			"Storage",
			sm->m.fstype);
		verdict = GDR_VERDICT_WRONG;
		break;
	case GDR_T_UNKNOWN:
		gdr_fmt(v, sizeof(v), "unknown: %s", sm->why);
		verdict = GDR_VERDICT_UNKNOWN;
		break;
	default:
		gdr_append(v, sizeof(v), ": not known to GPUDirect Storage");
		verdict = GDR_VERDICT_WRONG;
		break;
	}
	if (verdict == GDR_VERDICT_WRONG && transport_remedy(sm))
		remedy = transport_remedy(sm);
	else if (sm->transport == GDR_T_NFS_TCP ||
		 sm->transport == GDR_T_NVMEOF_TCP ||
		 sm->transport == GDR_T_NVMEOF_FC)
		remedy = transport_remedy(sm);
	if (sm->transport == GDR_T_NFS_TCP ||
	    sm->transport == GDR_T_NVMEOF_TCP ||
	    sm->transport == GDR_T_NVMEOF_FC)
		verdict = GDR_VERDICT_WRONG;
	gdr_report_add(r, sec, "transport", verdict, remedy, v);
}

/* The route to the server, the RDMA device on it, its pairs with the
 * GPUs, and cuFile's list of RDMA addresses. */
static void rdma_items(struct gdr_report *r, const char *sec,
		       const struct gdr_storage_path *p, struct path_view *pv,
		       struct ibv_context *const *ctxs, unsigned int num)
{
	const struct gdr_storage_mount *sm = &pv->sm;
	struct gdr_cufile_view *cv;
	struct gdr_nic_view *views;
	char v[GDR_VALUE_LEN], key[32];
	unsigned int i, k;
	int g;

	if (p->route_err < 0)
		return;
	if (p->route_err) {
		gdr_fmt(v, sizeof(v), "unknown: no route to %s (%s)", p->server,
			p->route_err == EXDEV
				? "under --host-root this network namespace "
				  "is not the host's"
				: gdr_errno_name(p->route_err));
		gdr_report_add(r, sec, "rdma_device", GDR_VERDICT_UNKNOWN, "",
			       v);
		return;
	}
	pv->nic = nic_of(p->route_dev, ctxs, num);
	if (!pv->nic) {
		gdr_fmt(v, sizeof(v),
			"none: the route to %s leaves through %s, which is no "
			"RDMA device's",
			p->server, p->route_dev);
		gdr_report_add(r, sec, "rdma_device",
			       sm->rdma ? GDR_VERDICT_WRONG : GDR_VERDICT_INFO,
			       sm->rdma ? r_route : "", v);
		return;
	}
	gdr_fmt(v, sizeof(v), "%s: the route to %s leaves through %s%s%s",
		pv->nic, p->server, p->route_dev,
		p->route_src[0] ? " from " : "", p->route_src);
	if (!sm->rdma)
		gdr_append(v, sizeof(v),
			   " (over TCP: the RDMA device is "
			   "not used)");
	gdr_report_add(r, sec, "rdma_device",
		       sm->rdma ? GDR_VERDICT_OK : GDR_VERDICT_INFO, "", v);
	/* Each GPU with that device, as the report judged the pair. */
	for (g = 0; g < GDR_MODEL_MAX_GPUS; g++) {
		const struct gdr_report_entry *path, *topo;

		gdr_fmt(key, sizeof(key), "path_gpu%d", g);
		path = find(r, pv->nic, key);
		if (!path)
			break;
		gdr_fmt(key, sizeof(key), "topology_gpu%d", g);
		topo = find(r, pv->nic, key);
		gdr_fmt(v, sizeof(v), "%s with gpu%d: path %s, PCIe %s",
			pv->nic, g, path->value,
			topo ? topo->value : "unknown");
		gdr_fmt(key, sizeof(key), "rdma_gpu%d", g);
		gdr_report_add(r, sec, key, path->verdict, path->remedy, v);
	}
	if (!sm->rdma)
		return;
	/* cuFile's own list of the RDMA addresses it may use. */
	cv = malloc(sizeof(*cv));
	views = calloc(num ? num : 1, sizeof(*views));
	if (!cv || !views) {
		free(cv);
		free(views);
		r->oom = true;
		return;
	}
	for (i = 0; i < num; i++) {
		const char *name =
			gdr_seam()->verbs.device_name(ctxs[i]->device);

		views[i].ctx = ctxs[i];
		gdr_fmt(views[i].name, sizeof(views[i].name), "%s",
			name ? name : "");
	}
	gdr_cufile_look(cv, views, num);
	if (cv->err && cv->err != ENOENT) {
		gdr_fmt(v, sizeof(v), "unknown (%s: %s)", cv->path,
			gdr_errno_name(cv->err));
		gdr_report_add(r, sec, "cufile_rdma_addrs", GDR_VERDICT_UNKNOWN,
			       "", v);
	} else {
		bool listed = false;

		for (k = 0; !cv->err && k < cv->c.num_addrs; k++)
			listed |= !strcmp(cv->owner[k], pv->nic);
		gdr_fmt(pv->addr_remedy, sizeof(pv->addr_remedy),
			"list %s's address%s%s in cufile.json's "
			"properties.rdma_dev_addr_list, so that cuFile reads "
			"over it",
			pv->nic, p->route_src[0] ? " " : "", p->route_src);
		if (cv->err)
			gdr_fmt(v, sizeof(v), "no cufile.json (%s)", cv->path);
		else
			gdr_fmt(v, sizeof(v), "%s %s %s's address", cv->path,
				listed ? "lists" : "does not list", pv->nic);
		pv->addrs_missing = !listed;
		gdr_report_add(r, sec, "cufile_rdma_addrs",
			       listed ? GDR_VERDICT_OK : GDR_VERDICT_WRONG,
			       pv->addr_remedy, v);
	}
	free(cv);
	free(views);
}

/* Whether cuFile reaches this transport directly here, from its driver
 * properties. */
static void support_item(struct gdr_report *r, const char *sec,
			 const struct gdr_storage *st, struct path_view *pv)
{
	const struct gdr_storage_cufile *cf = &st->cufile;
	int bit = fs_bit(pv->sm.transport);
	char v[GDR_VALUE_LEN];

	if (cf->load_err || cf->open_err || cf->props_err || pv->sm.err)
		return;
	pv->p2p = pv->sm.transport == GDR_T_NVME_LOCAL &&
		  (cf->fflags & (1u << GDR_CUFILE_FEAT_P2P)) &&
		  cf->use_p2pdma == 1;
	if (bit < 0) {
		gdr_fmt(v, sizeof(v),
			"no: cuFile has no direct path to %s (%s)",
			pv->sm.detail[0] ? pv->sm.detail : pv->sm.m.fstype,
			pv->sm.m.fstype);
		gdr_report_add(r, sec, "cufile_support", GDR_VERDICT_WRONG,
			       transport_remedy(&pv->sm)
				       ? transport_remedy(&pv->sm)
				       : r_known,
			       v);
	} else if (cf->dstatusflags & (1u << bit)) {
		gdr_fmt(v, sizeof(v),
			"yes: nvidia-fs reaches this file system here (driver "
			"properties, dstatusflags 0x%x)",
			cf->dstatusflags);
		gdr_report_add(r, sec, "cufile_support", GDR_VERDICT_OK, "", v);
	} else if (pv->p2p) {
		gdr_report_add(r, sec, "cufile_support", GDR_VERDICT_OK, "",
			       "yes: through PCI P2PDMA, without nvidia-fs "
			       "(driver properties and use_pci_p2pdma)");
	} else {
		gdr_fmt(v, sizeof(v),
			"no: nvidia-fs does not reach this file system here "
			"(driver properties, dstatusflags 0x%x)",
			cf->dstatusflags);
		gdr_report_add(r, sec, "cufile_support", GDR_VERDICT_WRONG,
			       r_nvfs, v);
	}
}

/* Which mode served the bytes: cuFile's counts where it gave them, else
 * what its properties and the file allow; never guessed. */
static void mode_of(const struct gdr_storage *st,
		    const struct gdr_storage_path *p, struct path_view *pv)
{
	const struct gdr_storage_io *io = &p->io;
	const struct gdr_storage_cufile *cf = &st->cufile;
	unsigned long long direct = io->nvfs_reads + io->p2p_reads +
				    io->nvfs_writes + io->p2p_writes;
	unsigned long long posix = io->posix_reads + io->posix_writes;
	int bit = fs_bit(pv->sm.transport);
	const char *no_direct = NULL;

	if (io->stats) {
		pv->mode = !posix   ? MODE_DIRECT
			   : direct ? MODE_MIXED
				    : MODE_COMPAT;
		gdr_fmt(pv->mode_words, sizeof(pv->mode_words),
			"%s (cuFile's statistics: reads %llu through "
			"nvidia-fs, %llu P2PDMA, %llu POSIX; writes %llu, %llu, "
			"%llu)",
			pv->mode == MODE_DIRECT	 ? "direct"
			: pv->mode == MODE_MIXED ? "partly direct, partly "
						   "through host memory"
						 : "compat: through host "
						   "memory",
			io->nvfs_reads, io->p2p_reads, io->posix_reads,
			io->nvfs_writes, io->p2p_writes, io->posix_writes);
		return;
	}
	/* No counts: only what rules direct I/O out is said. */
	if (!io->odirect)
		no_direct = "the file was not opened with O_DIRECT (the file "
			    "system refused it), which direct I/O needs";
	else if (bit < 0)
		no_direct = "cuFile has no direct path to this file system";
	else if (!cf->props_err && !(cf->dstatusflags & (1u << bit)) &&
		 !pv->p2p)
		no_direct = "nvidia-fs does not reach this file system here "
			    "and PCI P2PDMA does not serve it";
	if (no_direct) {
		pv->mode = MODE_COMPAT;
		gdr_fmt(pv->mode_words, sizeof(pv->mode_words),
			"compat: through host memory (from cuFile's properties "
			"and the file system: %s; cuFile's statistics: %s)",
			no_direct, io->stats_why);
	} else {
		pv->mode = MODE_UNKNOWN;
		gdr_fmt(pv->mode_words, sizeof(pv->mode_words),
			"unknown: direct I/O is possible here, and without "
			"cuFile's statistics (%s) nothing shows which mode "
			"served the bytes",
			io->stats_why);
	}
}

/* The measured items; a replay shows the capture's as not measured here. */
static void io_items(struct gdr_report *r, const char *sec,
		     const struct gdr_storage *st,
		     const struct gdr_storage_path *p, struct path_view *pv)
{
	const struct gdr_storage_io *io = &p->io;
	const char *pre = st->replayed ? "not measured here (a snapshot); at "
					 "capture: "
				       : "";
	char v[GDR_VALUE_LEN], w[GDR_VALUE_LEN], t[GDR_VALUE_LEN], name[96];
	enum gdr_verdict verdict;

#define ITEM(key, verd, remedy, ...)                                           \
	do {                                                                   \
		gdr_fmt(t, sizeof(t), __VA_ARGS__);                            \
		gdr_fmt(v, sizeof(v), "%s%s", pre, t);                         \
		gdr_report_add(r, sec, key,                                    \
			       st->replayed ? GDR_VERDICT_UNKNOWN : (verd),    \
			       st->replayed ? "" : (remedy), v);               \
	} while (0)

	if (!io->state) {
		ITEM("cufile_io", GDR_VERDICT_UNKNOWN, "", "not measured: %s",
		     io->why);
		return;
	}
	if (io->reg_err) {
		ITEM("cufile_io", GDR_VERDICT_WRONG,
		     io->reg_err == GDR_CU_FILE_IO_NOT_SUPPORTED ? r_known
								 : r_log,
		     "cuFileHandleRegister answered %s",
		     op_name(io->reg_err, name, sizeof(name)));
		return;
	}
	if (io->readonly) {
		ITEM("cufile_write", GDR_VERDICT_INFO, "",
		     "not written: a named file is only read");
	} else if (io->write_ret == (long long)io->bytes) {
		rate(io->bytes, io->write_ns, w, sizeof(w));
		ITEM("cufile_write", GDR_VERDICT_OK, "",
		     "%s from gpu%d's memory", w, io->gpu);
	} else {
		ret_words(io->write_ret, io->write_errno, io->bytes, w,
			  sizeof(w));
		ITEM("cufile_write", GDR_VERDICT_WRONG, r_log, "cuFileWrite %s",
		     w);
		return;
	}
	if (io->read_ret != (long long)io->bytes) {
		ret_words(io->read_ret, io->read_errno, io->bytes, w,
			  sizeof(w));
		ITEM("cufile_read", GDR_VERDICT_WRONG, r_log, "cuFileRead %s",
		     w);
		return;
	}
	rate(io->bytes, io->read_ns, w, sizeof(w));
	gdr_fmt(v, sizeof(v), "%s into gpu%d's memory", w, io->gpu);
	if (!io->checked) {
		verdict = GDR_VERDICT_UNKNOWN;
		gdr_append(v, sizeof(v), ", not checked: %s", io->why);
	} else if (io->differ) {
		verdict = GDR_VERDICT_WRONG;
		gdr_append(v, sizeof(v),
			   "; %llu of its bytes differ from what %s (the "
			   "first at byte %lld)",
			   io->differ,
			   io->readonly ? "pread read" : "was written",
			   io->first_differ);
	} else {
		verdict = GDR_VERDICT_OK;
		gdr_append(v, sizeof(v), ", every byte as %s",
			   io->readonly ? "pread reads it" : "written");
	}
	ITEM("cufile_read", verdict, r_log, "%s", v);
	if (io->pread_ret == (long long)io->bytes) {
		rate(io->bytes, io->pread_ns, w, sizeof(w));
		ITEM("pread", GDR_VERDICT_INFO, "", "%s into host memory%s", w,
		     io->odirect ? " (O_DIRECT)" : " (through the page cache)");
	} else {
		ret_words(io->pread_ret, io->pread_errno, io->bytes, w,
			  sizeof(w));
		ITEM("pread", GDR_VERDICT_UNKNOWN, "", "pread %s", w);
	}
	mode_of(st, p, pv);
	ITEM("served_by",
	     pv->mode == MODE_DIRECT	? GDR_VERDICT_OK
	     : pv->mode == MODE_UNKNOWN ? GDR_VERDICT_UNKNOWN
					: GDR_VERDICT_WRONG,
	     "", "%s", pv->mode_words);
	if (io->differ)
		pv->mode = MODE_NONE; /* failed: the data is wrong */
#undef ITEM
}

/* The path's answer in one item: direct, compat, failed or not known,
 * with every remedy that applies. */
static void summary(struct gdr_report *r, const char *sec,
		    const struct gdr_storage *st,
		    const struct gdr_storage_path *p,
		    const struct path_view *pv)
{
	const struct gdr_storage_cufile *cf = &st->cufile;
	const struct gdr_storage_io *io = &p->io;
	char v[GDR_VALUE_LEN], rem[3 * GDR_WHY_LEN] = "";
	enum gdr_verdict verdict;
	const char *t;

	if (p->err) {
		gdr_fmt(v, sizeof(v),
			"not checked: the path could not be looked "
			"at (%s)",
			gdr_errno_name(p->err));
		gdr_report_add(r, sec, "gds", GDR_VERDICT_WRONG, r_kind, v);
		return;
	}
	if (p->kind != GDR_STORAGE_KIND_FILE &&
	    p->kind != GDR_STORAGE_KIND_DIR) {
		gdr_report_add(r, sec, "gds", GDR_VERDICT_WRONG, r_kind,
			       "not checked: the path is not a directory or a "
			       "regular file");
		return;
	}
	if (cf->load_err) {
		gdr_report_add(r, sec, "gds",
			       cf->load_err < 0 ? GDR_VERDICT_UNKNOWN
						: GDR_VERDICT_MISSING,
			       cf->load_err < 0 ? "" : r_install,
			       cf->load_err < 0 ? "not checked: no CUDA device"
						: "not checked: cuFile is not "
						  "installed");
		return;
	}
	if (cf->open_err) {
		gdr_report_add(
			r, sec, "gds", GDR_VERDICT_MISSING,
			cf->open_err == GDR_CU_FILE_DRIVER_NOT_INITIALIZED
				? r_nvfs
				: r_log,
			"not checked: cuFile's driver did not open");
		return;
	}
	if (!io->state) {
		gdr_fmt(v, sizeof(v), "not measured: %s", io->why);
		gdr_report_add(r, sec, "gds", GDR_VERDICT_UNKNOWN, "", v);
		return;
	}
	if (pv->mode == MODE_NONE) {
		gdr_report_add(r, sec, "gds",
			       st->replayed ? GDR_VERDICT_UNKNOWN
					    : GDR_VERDICT_WRONG,
			       st->replayed ? "" : r_log,
			       st->replayed ? "not measured here (a snapshot); "
					      "at capture: failed"
					    : "failed: cuFile did not read and "
					      "write the bytes intact (see the "
					      "items above)");
		return;
	}
	if (pv->mode == MODE_DIRECT) {
		verdict = GDR_VERDICT_OK;
		gdr_fmt(v, sizeof(v),
			"direct: cuFile %s gpu%d's memory without host "
			"memory%s%s, every byte checked",
			io->readonly ? "read into" : "wrote from and read into",
			io->gpu, pv->nic ? ", over " : "",
			pv->nic ? pv->nic : "");
	} else if (pv->mode == MODE_UNKNOWN) {
		verdict = GDR_VERDICT_UNKNOWN;
		gdr_fmt(v, sizeof(v),
			"not known: the bytes are right, the "
			"mode that served them is not shown");
	} else {
		verdict = GDR_VERDICT_WRONG;
		gdr_fmt(v, sizeof(v),
			"compat: cuFile moved the bytes through host memory%s",
			pv->mode == MODE_MIXED ? " (some of them)" : "");
		/* What would make it direct, then what makes a fallback an
		 * error. */
		t = transport_remedy(&pv->sm);
		if (t)
			gdr_append(rem, sizeof(rem), "%s", t);
		if (!cf->nvfs_major && !pv->p2p)
			gdr_append(rem, sizeof(rem), "%s%s", rem[0] ? "; " : "",
				   r_nvfs);
		if (pv->addrs_missing)
			gdr_append(rem, sizeof(rem), "%s%s", rem[0] ? "; " : "",
				   pv->addr_remedy);
		gdr_append(rem, sizeof(rem), "%s%s", rem[0] ? "; then " : "",
			   r_compat);
	}
	if (st->replayed) {
		char at[GDR_VALUE_LEN];

		gdr_fmt(at, sizeof(at),
			"not measured here (a snapshot); at capture: %s", v);
		gdr_report_add(r, sec, "gds", GDR_VERDICT_UNKNOWN, "", at);
		return;
	}
	gdr_report_add(r, sec, "gds", verdict, rem, v);
}

int gdr_storage_report(struct gdr_report *r, const struct gdr_storage *st,
		       struct ibv_context *const *ctxs, unsigned int num)
{
	struct path_view *pv;
	char sec[24];
	int i;

	if (!st->num_paths)
		return 0;
	pv = malloc(sizeof(*pv));
	if (!pv)
		return ENOMEM;
	cufile_items(r, st);
	for (i = 0; i < st->num_paths && i < GDR_STORAGE_MAX_PATHS; i++) {
		const struct gdr_storage_path *p = &st->path[i];

		memset(pv, 0, sizeof(*pv));
		section_of(sec, sizeof(sec), i);
		path_item(r, sec, p);
		if (!p->err) {
			gdr_storage_mount_look(p, &pv->sm);
			mount_items(r, sec, p, pv);
			rdma_items(r, sec, p, pv, ctxs, num);
			support_item(r, sec, st, pv);
		} else {
			pv->sm.err = p->err;
		}
		if (!p->err &&
		    (p->kind == GDR_STORAGE_KIND_FILE ||
		     p->kind == GDR_STORAGE_KIND_DIR) &&
		    !st->cufile.load_err && !st->cufile.open_err)
			io_items(r, sec, st, p, pv);
		summary(r, sec, st, p, pv);
	}
	free(pv);
	return r->oom ? ENOMEM : 0;
}
