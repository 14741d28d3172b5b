/* SPDX-License-Identifier: MIT */
/*
 * What the node, the CUDA driver, each CUDA device and each RDMA device can
 * do, found out once and cached. The steady state reads no files.
 *
 * Nothing here takes a lock: each answer is built outside any lock and
 * published with one atomic compare-and-swap of a pointer; concurrent first
 * calls may each probe, and the first to publish wins. So a fork() at any
 * moment, also from inside the CUDA driver (cuInit may run nvidia-modprobe),
 * leaves nothing locked in the child, and no atfork handler is needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "node.h"
#include "thresholds.h"

/* The CUDA state and its devices, published together. */
struct cuda_state {
	struct gdr_cuda pub;
	struct gdr_dev *devs[]; /* num_devices slots, each published once */
};

static struct gdr_node *node;
static struct gdr_cuda_lib *table;
static struct cuda_state *cuda;
static struct gdr_nic *nics[GDR_NIC_CACHE_MAX];
static struct gdr_mlx5 *mlx5;
#define PCIE_MAP_MAX 64
static int pcie_map[PCIE_MAP_MAX]; /* enum gdr_pcie_map, atomic */

/* Publish @obj in @slot unless another thread was first; the winner. */
static void *publish(void *slot, void *obj)
{
	void *expected = NULL;

	if (__atomic_compare_exchange_n((void **)slot, &expected, obj, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return obj;
	free(obj);
	return expected;
}

static void *load(void *slot)
{
	return __atomic_load_n((void **)slot, __ATOMIC_ACQUIRE);
}

/* --- the node ------------------------------------------------------------ */

/* The places below /sys where nvidia-peermem (or MLNX_OFED's nv_peer_mem)
 * shows. */
const char *const gdr_peermem_paths[] = {
	GDR_MEMORY_PEERS "/nv_mem/version",
	GDR_MEMORY_PEERS "/nv_mem_nc/version",
	"/module/nvidia_peermem/version",
	"/module/nv_peer_mem/version",
	NULL,
};

static void probe_kernel(struct gdr_node *nd, const struct gdr_seam *s)
{
	struct utsname u;

	if (s->kernel_release[0])
		gdr_fmt(nd->kernel_release, sizeof(nd->kernel_release), "%s",
			s->kernel_release);
	else if (uname(&u) == 0)
		gdr_fmt(nd->kernel_release, sizeof(nd->kernel_release), "%s",
			u.release);
	/* once: the kernel condition is asked by every registration */
	nd->kver_err = gdr_parse_kernel_release(nd->kernel_release, &nd->kver);
}

static void probe_files(struct gdr_node *nd, const struct gdr_seam *s)
{
	char text[1024];
	size_t i;
	int err;

	err = gdr_read_file(s->procfs_root, "/driver/nvidia/version", text,
			    sizeof(text));
	if (!err) {
		nd->nv_flavour = gdr_parse_nvidia_version(
			text, nd->nv_version, sizeof(nd->nv_version));
	} else if (err == ENOENT || err == ENOTDIR) {
		nd->nv_flavour = GDR_NV_ABSENT;
	} else {
		nd->nv_flavour = GDR_NV_UNREADABLE;
		nd->nv_err = err;
	}

	for (i = 0; gdr_peermem_paths[i]; i++) {
		err = gdr_read_file(s->sysfs_root, gdr_peermem_paths[i],
				    nd->peermem_version,
				    sizeof(nd->peermem_version));
		if (err == ENOENT || err == ENOTDIR)
			continue;
		/* The file is there: the module is loaded, whatever the read
		 * said of its version. */
		if (err)
			gdr_fmt(nd->peermem_version,
				sizeof(nd->peermem_version), "unreadable: %s",
				gdr_errno_name(err));
		gdr_fmt(nd->peermem_path, sizeof(nd->peermem_path), "/sys%s",
			gdr_peermem_paths[i]);
		nd->peermem_registered =
			!strncmp(gdr_peermem_paths[i], GDR_MEMORY_PEERS,
				 strlen(GDR_MEMORY_PEERS));
		break;
	}
	nd->memory_peers = gdr_file_exists(s->sysfs_root, GDR_MEMORY_PEERS);
	nd->nvidia_fs_proc =
		gdr_file_exists(s->procfs_root, "/driver/nvidia-fs");
	if (gdr_read_file(s->sysfs_root, "/module/nvidia_fs/version",
			  nd->nvidia_fs_version,
			  sizeof(nd->nvidia_fs_version)) == 0 ||
	    nd->nvidia_fs_proc)
		nd->nvidia_fs = true;
}

static const char *flavour_str(enum gdr_nv_flavour f)
{
	switch (f) {
	case GDR_NV_OPEN: return "open";
	case GDR_NV_PROPRIETARY: return "proprietary";
	case GDR_NV_UNPARSED: return "unparsed";
	case GDR_NV_UNREADABLE: return "unreadable";
	case GDR_NV_ABSENT: /* fall through */
	default: return "absent";
	}
}

const struct gdr_node *gdr_node_get(void)
{
	const struct gdr_seam *s;
	struct gdr_node *nd = load(&node);
	static const struct gdr_node oom = {
		.env_error = "out of memory while probing the node",
		.oom = true,
		.kver_err = EINVAL, /* no release read */
		.page_size = 4096,
	};

	if (nd)
		return nd;
	s = gdr_seam();
	nd = calloc(1, sizeof(*nd));
	if (!nd)
		return &oom; /* not cached: the next call tries again */
	gdr_env_probe(nd, s);
	probe_kernel(nd, s);
	probe_files(nd, s);
	nd->verbs_dmabuf = s->verbs.reg_dmabuf_mr != NULL;
	nd->page_size = s->page_size > 0 ? s->page_size : sysconf(_SC_PAGESIZE);
	if (nd->page_size <= 0)
		nd->page_size = 4096;
	nd = publish(&node, nd);
	__atomic_store_n(&gdr_debug_on, nd->debug, __ATOMIC_RELAXED);
	gdr_debug("node: kernel %s, nvidia %s %s, peermem %s, "
		  "ibv_reg_dmabuf_mr %s, page %ld",
		  nd->kernel_release, nd->nv_version[0] ? nd->nv_version : "-",
		  flavour_str(nd->nv_flavour),
		  nd->peermem_path[0] ? nd->peermem_path : "absent",
		  nd->verbs_dmabuf ? "present" : "absent", nd->page_size);
	return nd;
}

/* --- the CUDA driver ----------------------------------------------------- */

static const struct gdr_cuda_lib *get_table(unsigned int flags, char *why,
					    size_t n)
{
	struct gdr_cuda_lib *t = load(&table);
	char name[64];
	CUresult r;
	int err;

	struct gdr_cuda_lib got;

	if (t)
		return t;
	/* Asked on every registration of host memory while the process has
	 * no CUDA: nothing is allocated for a "no". */
	err = gdr_seam()->cuda_load(&got.cu, flags, why, n);
	if (!err) {
		r = got.cu.cuDriverGetVersion(&got.driver_version);
		if (r != CUDA_SUCCESS) {
			gdr_fmt(why, n,
				"cuDriverGetVersion failed with %s; check the "
				"NVIDIA driver installation (nvidia-smi)",
				gdr_cu_errname(&got.cu, r, name, sizeof(name)));
			err = EIO;
		}
	}
	if (err)
		return NULL; /* not cached: the process may load CUDA later */
	t = malloc(sizeof(*t));
	if (!t) {
		gdr_fmt(why, n, "out of memory while loading libcuda.so.1");
		return NULL;
	}
	*t = got;
	return publish(&table, t);
}

const struct gdr_cuda_lib *gdr_cuda_table(void)
{
	/* Nobody reads why it is not loaded: no words are made (n = 0). */
	return get_table(GDR_CUDA_NOLOAD, NULL, 0);
}

/* The first look at CUDA (and every look while it fails): kept out of
 * gdr_cuda_get(), which every registration of device memory calls. */
static __attribute__((noinline)) const struct gdr_cuda *cuda_probe(bool init)
{
	static __thread struct gdr_cuda failed;
	const struct gdr_cuda_lib *lib;
	const struct gdr_cuda_ops *cu;
	struct cuda_state *st;
	char name[64];
	CUresult r;
	int count = 0, version;

	memset(&failed, 0, sizeof(failed));
	lib = get_table(init ? 0 : GDR_CUDA_NOLOAD, failed.why,
			sizeof(failed.why));
	if (!lib) {
		failed.state = GDR_CUDA_ABSENT;
		return &failed;
	}
	cu = &lib->cu;
	version = lib->driver_version;
	failed.state = GDR_CUDA_FAILED;
	failed.cu = *cu;
	/* Only where the caller asked for it: the report and the doctor. */
	if (init) {
		r = cu->cuInit(0);
		if (r != CUDA_SUCCESS) {
			gdr_fmt(failed.why, sizeof(failed.why),
				"cuInit failed with %s%s",
				gdr_cu_errname(cu, r, name, sizeof(name)),
				r == CUDA_ERROR_NO_DEVICE
					? ": no NVIDIA GPU is visible to this "
					  "process (check CUDA_VISIBLE_DEVICES "
					  "and the container's device list)"
					: "; check that the NVIDIA driver is "
					  "loaded (nvidia-smi)");
			return &failed;
		}
	}
	r = cu->cuDeviceGetCount(&count);
	failed.driver_version = version;
	if (r != CUDA_SUCCESS || count < 0) {
		gdr_fmt(failed.why, sizeof(failed.why),
			"the CUDA driver failed to report its devices (%s)",
			gdr_cu_errname(cu, r, name, sizeof(name)));
		return &failed;
	}
	st = calloc(1, sizeof(*st) + (size_t)count * sizeof(st->devs[0]));
	if (!st) {
		gdr_fmt(failed.why, sizeof(failed.why),
			"out of memory while probing CUDA devices");
		return &failed;
	}
	st->pub.state = GDR_CUDA_READY;
	st->pub.cu = *cu;
	st->pub.driver_version = version;
	st->pub.num_devices = count;
	st = publish(&cuda, st);
	gdr_debug("cuda: driver API %d, %d device(s)%s", version, count,
		  init ? "" : " (initialised by the application)");
	return &st->pub;
}

const struct gdr_cuda *gdr_cuda_get(bool init)
{
	struct cuda_state *st = load(&cuda);

	return st ? &st->pub : cuda_probe(init);
}

/* An attribute: its value, 0 where the driver does not know it (an older
 * driver); false when the driver failed otherwise (not cached then). */
static bool attribute(const struct gdr_cuda_ops *cu, int *v,
		      CUdevice_attribute a, CUdevice dev)
{
	CUresult r = cu->cuDeviceGetAttribute(v, a, dev);

	if (r == CUDA_SUCCESS)
		return true;
	*v = 0;
	return r == CUDA_ERROR_INVALID_VALUE;
}

/*
 * C2C matters only where the PCIe mapping exists (driver 12.8+): only
 * there is NVML asked.
 */
static void probe_c2c(struct gdr_dev *d, const struct gdr_cuda *c)
{
	const struct gdr_seam *s = gdr_seam();
	bool c2c = false;
	int err, atomics = 1;

	d->c2c = GDR_UNKNOWN;
	if (!gdr_cuda_has_pcie_mapping(c)) {
		gdr_fmt(d->c2c_why, sizeof(d->c2c_why),
			"not asked: it matters only with the PCIe mapping");
		return;
	}
	/*
	 * A link without native host atomics is PCIe: no C2C, and no need to
	 * start NVML (tens of milliseconds, and a file it keeps open) in
	 * the caller's process. Only a GPU whose link has them is asked.
	 */
	if (c->cu.cuDeviceGetAttribute(
		    &atomics, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED,
		    d->dev) == CUDA_SUCCESS &&
	    !atomics) {
		d->c2c = GDR_NO;
		return;
	}
	if (!s->gpu_c2c) {
		gdr_fmt(d->c2c_why, sizeof(d->c2c_why),
			"NVML is not available");
		return;
	}
	err = s->gpu_c2c(d->busid, &c2c, d->c2c_why, sizeof(d->c2c_why));
	if (!err)
		d->c2c = c2c ? GDR_YES : GDR_NO;
}

/* Fill @d; false when an answer may have been a passing failure. */
static bool fill_dev(const struct gdr_cuda *c, struct gdr_dev *d, int ordinal)
{
	const struct gdr_cuda_ops *cu = &c->cu;
	char name[64];
	bool sure = true;
	CUresult r;

	d->ordinal = ordinal;
	strcpy(d->name, "unknown");
	strcpy(d->busid, "unknown");
	r = cu->cuDeviceGet(&d->dev, ordinal);
	if (r != CUDA_SUCCESS) {
		gdr_fmt(d->why, sizeof(d->why),
			"cuDeviceGet(%d) failed with %s", ordinal,
			gdr_cu_errname(cu, r, name, sizeof(name)));
		return false;
	}
	sure &= attribute(cu, &d->dmabuf_attr,
			  CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, d->dev);
	sure &= attribute(cu, &d->gdr_attr,
			  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
			  d->dev);
	sure &= attribute(
		cu, &d->gdr_vmm_attr,
		CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
		d->dev);
	if (cu->cuDeviceGetName(d->name, sizeof(d->name), d->dev) !=
	    CUDA_SUCCESS)
		strcpy(d->name, "unknown");
	if (cu->cuDeviceGetPCIBusId(d->busid, sizeof(d->busid), d->dev) !=
	    CUDA_SUCCESS)
		strcpy(d->busid, "unknown");
	d->name[sizeof(d->name) - 1] = '\0';
	d->busid[sizeof(d->busid) - 1] = '\0';
	/* As a descriptor has it. Where it cannot be, pci_id stays empty
	 * (the record was zeroed) and gdr_export refuses the GPU. */
	(void)gdr_bdf_normalize(d->busid, d->pci_id, sizeof(d->pci_id));
	if (cu->cuDeviceGetUuid) {
		CUuuid u;

		d->has_uuid = cu->cuDeviceGetUuid(&u, d->dev) == CUDA_SUCCESS;
		if (d->has_uuid)
			memcpy(d->uuid, u.bytes, sizeof(d->uuid));
	}
	probe_c2c(d, c);
	return sure;
}

void gdr_host_facts_read(const struct gdr_node *nd, struct gdr_host_facts *h)
{
	const struct gdr_seam *s = gdr_seam();
	char text[4097]; /* COMMAND_LINE_SIZE: 2048 on x86, 4096 on arm64 */

	memset(h, 0, sizeof(*h));
	h->cmdline_err =
		gdr_read_file(s->procfs_root, "/cmdline", text, sizeof(text));
	if (!h->cmdline_err)
		gdr_parse_iommu_cmdline(text, h->iommu_cmdline,
					sizeof(h->iommu_cmdline));
	h->ofed = gdr_file_exists(s->sysfs_root, "/module/mlx_compat");
	if (h->ofed &&
	    gdr_read_file(s->sysfs_root, "/module/mlx_compat/version",
			  h->ofed_version, sizeof(h->ofed_version)))
		h->ofed_version[0] = '\0';
	h->nvfs_peerdirect = -1;
	if (nd->nvidia_fs_proc &&
	    gdr_read_file(s->procfs_root, "/driver/nvidia-fs/stats", text,
			  sizeof(text)) == 0)
		gdr_parse_nvfs_stats(text, h->nvfs_stats_version,
				     sizeof(h->nvfs_stats_version),
				     &h->nvfs_peerdirect);
}

void gdr_limits_read(struct gdr_limits_view *v)
{
	const struct gdr_seam *s = gdr_seam();

	memset(v, 0, sizeof(*v));
	v->err = s->limits ? s->limits(&v->l, v->why, sizeof(v->why)) : ENOSYS;
	if (v->err && !v->why[0])
		gdr_fmt(v->why, sizeof(v->why), "the limits are unknown (%s)",
			gdr_errno_name(v->err));
}

void gdr_bar1_read(const struct gdr_dev *d, unsigned int flags,
		   struct gdr_bar1_view *v)
{
	const struct gdr_seam *s = gdr_seam();

	memset(v, 0, sizeof(*v));
	if (!s->gpu_bar1) {
		v->err = ENOSYS;
		gdr_fmt(v->why, sizeof(v->why), "NVML is not available");
		return;
	}
	v->err = s->gpu_bar1(d->busid, flags, &v->b, v->why, sizeof(v->why));
	if (v->err && !v->why[0])
		gdr_fmt(v->why, sizeof(v->why), "NVML answered %s",
			gdr_errno_name(v->err));
	if (!v->err && (!v->b.total || v->b.used > v->b.total)) {
		/* An answer no GPU gives (or a crafted snapshot's). */
		gdr_fmt(v->why, sizeof(v->why),
			"NVML answered %llu of %llu bytes used", v->b.used,
			v->b.total);
		v->err = EIO;
	}
}

/* A GPU's first look (and every look while it fails): kept out of
 * gdr_dev_get(), which every registration of device memory calls. */
static __attribute__((noinline)) const struct gdr_dev *dev_probe(int ordinal)
{
	static __thread struct gdr_dev passing;
	struct cuda_state *st = load(&cuda);
	struct gdr_dev *d;

	if (!st) {
		gdr_cuda_get(false);
		st = load(&cuda);
	}
	if (!st || ordinal < 0 || ordinal >= st->pub.num_devices)
		return NULL;
	d = load(&st->devs[ordinal]);
	if (d)
		return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (!fill_dev(&st->pub, d, ordinal)) {
		/* A failure may pass: answer with it, cache nothing. */
		passing = *d;
		free(d);
		gdr_debug("gpu%d: %s (not cached)", ordinal,
			  passing.why[0] ? passing.why
					 : "an attribute query failed");
		return &passing;
	}
	d = publish(&st->devs[ordinal], d);
	gdr_debug("gpu%d: %s %s dma_buf_supported=%d gdr_supported=%d "
		  "gdr_vmm=%d c2c=%s%s%s",
		  ordinal, d->name, d->busid, d->dmabuf_attr, d->gdr_attr,
		  d->gdr_vmm_attr,
		  d->c2c == GDR_YES  ? "yes"
		  : d->c2c == GDR_NO ? "no"
				     : "unknown",
		  d->why[0] ? " " : "", d->why);
	return d;
}

const struct gdr_dev *gdr_dev_get(int ordinal)
{
	struct cuda_state *st = load(&cuda);
	struct gdr_dev *d;

	if (st && ordinal >= 0 && ordinal < st->pub.num_devices) {
		d = load(&st->devs[ordinal]);
		if (d)
			return d;
	}
	return dev_probe(ordinal);
}

enum gdr_pcie_map gdr_pcie_map_get(int ordinal)
{
	if (ordinal < 0 || ordinal >= PCIE_MAP_MAX)
		return GDR_PCIE_MAP_UNTRIED;
	return (enum gdr_pcie_map)__atomic_load_n(&pcie_map[ordinal],
						  __ATOMIC_ACQUIRE);
}

void gdr_pcie_map_set(int ordinal, enum gdr_pcie_map state)
{
	if (ordinal < 0 || ordinal >= PCIE_MAP_MAX)
		return;
	__atomic_store_n(&pcie_map[ordinal], (int)state, __ATOMIC_RELEASE);
	gdr_debug("gpu%d: PCIe-mapped dma-buf %s", ordinal,
		  state == GDR_PCIE_MAP_OK ? "supported" : "not supported");
}

/*
 * For the report (the caller started CUDA): ask the GPU once whether it
 * exports a PCIe-mapped dma-buf, with a 2 MiB allocation of its own in the
 * device's primary context. Registrations then know without asking.
 */
void gdr_pcie_map_probe(int ordinal)
{
	const struct gdr_cuda *c = gdr_cuda_get(false);
	const struct gdr_dev *d = gdr_dev_get(ordinal);
	const struct gdr_cuda_ops *cu = &c->cu;
	const size_t size = 2u << 20;
	CUcontext ctx, popped;
	CUdeviceptr p = 0;
	char name[64];
	CUresult r;
	int fd = -1;

	if (gdr_node_get()->pcie_policy == GDR_PCIE_OFF ||
	    !gdr_cuda_has_pcie_mapping(c) || !d || d->why[0] ||
	    gdr_pcie_map_get(ordinal) != GDR_PCIE_MAP_UNTRIED ||
	    !cu->cuMemAlloc || !cu->cuMemFree ||
	    !cu->cuMemGetHandleForAddressRange)
		return;
	r = cu->cuDevicePrimaryCtxRetain(&ctx, d->dev);
	if (r != CUDA_SUCCESS) {
		gdr_debug("gpu%d: PCIe mapping not probed: "
			  "cuDevicePrimaryCtxRetain failed with %s",
			  ordinal, gdr_cu_errname(cu, r, name, sizeof(name)));
		return;
	}
	r = cu->cuCtxPushCurrent(ctx);
	if (r == CUDA_SUCCESS) {
		r = cu->cuMemAlloc(&p, size);
		if (r == CUDA_SUCCESS) {
			r = cu->cuMemGetHandleForAddressRange(
				&fd, p, size,
				CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
				GDR_CU_RANGE_FLAG_PCIE);
			if (r == CUDA_SUCCESS) {
				if (close(fd))
					gdr_debug("close(dma-buf fd) failed");
				gdr_pcie_map_set(ordinal, GDR_PCIE_MAP_OK);
			} else if (r == CUDA_ERROR_NOT_SUPPORTED) {
				gdr_pcie_map_set(ordinal,
						 GDR_PCIE_MAP_UNSUPPORTED);
			}
			if (cu->cuMemFree(p) != CUDA_SUCCESS)
				gdr_debug("gpu%d: cuMemFree of the PCIe probe "
					  "failed",
					  ordinal);
		}
		if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_SUPPORTED)
			gdr_debug("gpu%d: PCIe mapping probe failed with %s",
				  ordinal,
				  gdr_cu_errname(cu, r, name, sizeof(name)));
		/* Once more if it fails, as a registration does: the
		 * caller's context stack must be as it was. */
		if (cu->cuCtxPopCurrent(&popped) != CUDA_SUCCESS &&
		    cu->cuCtxPopCurrent(&popped) != CUDA_SUCCESS)
			gdr_debug("gpu%d: cuCtxPopCurrent failed twice; the "
				  "caller's context stack is not restored",
				  ordinal);
	}
	if (cu->cuDevicePrimaryCtxRelease &&
	    cu->cuDevicePrimaryCtxRelease(d->dev) != CUDA_SUCCESS)
		gdr_debug("gpu%d: cuDevicePrimaryCtxRelease failed", ordinal);
}

/* --- mlx5 direct verbs ----------------------------------------------------- */

const struct gdr_mlx5 *gdr_mlx5_get(void)
{
	static const struct gdr_mlx5 oom = {
		.why = "out of memory while loading the mlx5 direct verbs",
	};
	const struct gdr_seam *s;
	struct gdr_mlx5 *m = load(&mlx5);
	int err;

	if (m)
		return m;
	s = gdr_seam();
	m = calloc(1, sizeof(*m));
	if (!m)
		return &oom;
	err = s->mlx5_load ? s->mlx5_load(&m->ops, m->why, sizeof(m->why))
			   : ENOENT;
	if (!s->mlx5_load)
		gdr_fmt(m->why, sizeof(m->why), "no mlx5 direct verbs");
	m->present = !err;
	m = publish(&mlx5, m);
	gdr_debug("mlx5dv Data Direct calls: %s",
		  m->present ? "present" : m->why);
	return m;
}

/* --- RDMA devices -------------------------------------------------------- */

void gdr_nic_key(struct ibv_context *ctx, struct gdr_nic_key *key)
{
	const struct gdr_seam *s = gdr_seam();
	const char *name = gdr_dev_name(ctx);

	gdr_copy(key->name, sizeof(key->name), name ? name : "unknown");
	key->index = s->verbs.device_index && ctx->device
			     ? s->verbs.device_index(ctx->device)
			     : -1;
}

static bool same(const struct gdr_nic_key *a, const struct gdr_nic_key *b)
{
	return a->index == b->index && !strcmp(a->name, b->name);
}

/* @k is the key of a device with this @index and @name (compared as far
 * as the key keeps it), without building a key. */
static bool is_key_of(const struct gdr_nic_key *k, int index, const char *name)
{
	return k->index == index &&
	       !strncmp(k->name, name, sizeof(k->name) - 1);
}

bool gdr_nic_same_answers(const struct gdr_nic *a, const struct gdr_nic *b)
{
	/* dd_path is empty but for a Data Direct function's device */
	return a->dmabuf == b->dmabuf && a->err == b->err && a->mr == b->mr &&
	       a->data_direct == b->data_direct && a->mlx5 == b->mlx5 &&
	       a->pci == b->pci && a->dd_err == b->dd_err &&
	       ((!a->dd_path[0] && !b->dd_path[0]) ||
		!strcmp(a->dd_path, b->dd_path));
}

/* Data Direct: the mlx5 direct verbs answer where the function is. */
static void probe_data_direct(struct ibv_pd *pd, struct gdr_nic *nic)
{
	const struct gdr_mlx5 *m = gdr_mlx5_get();
	struct ibv_device *dev = pd->context->device;

	nic->mlx5 = m->ops.is_supported && dev && m->ops.is_supported(dev);
	if (!nic->mlx5) {
		nic->data_direct = GDR_NO;
		return;
	}
	if (!m->present) {
		nic->data_direct = GDR_UNKNOWN;
		nic->dd_err = ENOSYS;
		return;
	}
	nic->dd_err = m->ops.data_direct_path(pd->context, nic->dd_path,
					      sizeof(nic->dd_path));
	if (!nic->dd_err) {
		nic->dd_path[sizeof(nic->dd_path) - 1] = '\0';
		nic->data_direct = GDR_YES;
	} else {
		nic->dd_path[0] = '\0';
		nic->data_direct = nic->dd_err == ENODEV ? GDR_NO : GDR_UNKNOWN;
	}
	gdr_debug("%s: Data Direct %s%s%s", nic->key.name,
		  nic->data_direct == GDR_YES  ? "at "
		  : nic->data_direct == GDR_NO ? "absent"
					       : "unknown: ",
		  nic->data_direct == GDR_YES ? nic->dd_path : "",
		  nic->data_direct == GDR_UNKNOWN ? gdr_errno_name(nic->dd_err)
						  : "");
}

static void probe_nic(const struct gdr_seam *s, struct ibv_pd *pd,
		      struct gdr_nic *nic)
{
	char bdf[GDR_BDF_LEN];
	struct ibv_device_attr attr;
	struct ibv_mr *mr;
	int err;

	nic->pci = gdr_nic_pci(nic->key.name, bdf, sizeof(bdf)) == 0;
	/* The longest MR the device takes: a longer registration is refused
	 * before it is made (a caller that cut it to fit would get remote
	 * access errors past the end). */
	memset(&attr, 0, sizeof(attr));
	nic->max_mr_size =
		s->verbs.query_device &&
				!s->verbs.query_device(pd->context, &attr)
			? attr.max_mr_size
			: 0;
	probe_data_direct(pd, nic);

	if (!s->verbs.reg_dmabuf_mr) {
		nic->dmabuf = GDR_NO;
		nic->err = ENOSYS;
		return;
	}
	/*
	 * fd -1 never names a dma-buf: a device with the path answers EBADF
	 * when the kernel tries to import it; one without answers
	 * EOPNOTSUPP (or EPROTONOSUPPORT from older kernels).
	 */
	errno = 0;
	mr = s->verbs.reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
	nic->err = mr ? 0 : errno;
	if (mr) {
		/* Nothing was asked for: release whatever came back. */
		nic->mr = true;
		nic->dmabuf = GDR_UNKNOWN;
		err = s->verbs.dereg_mr(mr);
		if (err)
			gdr_debug("%s: the probe's MR could not be released: "
				  "%s",
				  nic->key.name, gdr_errno_name(err));
	} else if (nic->err == EBADF) {
		nic->dmabuf = GDR_YES;
	} else if (nic->err == EOPNOTSUPP || nic->err == EPROTONOSUPPORT) {
		nic->dmabuf = GDR_NO;
	} else {
		nic->dmabuf = GDR_UNKNOWN;
	}
	gdr_debug("%s: ibv_reg_dmabuf_mr probe answered %s: DMA-BUF %s",
		  nic->key.name, mr ? "an MR" : gdr_errno_name(nic->err),
		  nic->dmabuf == GDR_YES  ? "supported"
		  : nic->dmabuf == GDR_NO ? "unsupported"
					  : "unknown");
}

/* The device's name as its key keeps it, asked once into *@name. */
static const char *key_name(struct ibv_context *ctx, const char **name)
{
	if (!*name) {
		*name = gdr_dev_name(ctx);
		if (!*name)
			*name = "unknown";
	}
	return *name;
}

const struct gdr_nic *gdr_nic_find(struct ibv_pd *pd, struct gdr_nic *spare)
{
	const struct gdr_seam *s = gdr_seam();
	struct ibv_context *ctx = pd->context;
	const char *name = NULL;
	struct gdr_nic *nic, *mine;
	int index;
	unsigned int i;

	index = s->verbs.device_index && ctx->device
			? s->verbs.device_index(ctx->device)
			: -1;
	/* Steady state: immutable, published entries, nothing copied; the
	 * name is asked only of an entry with the same index. Devices are
	 * mostly met in index order, so the slot of that number first. */
	if (index >= 0 && index < GDR_NIC_CACHE_MAX) {
		nic = load(&nics[index]);
		if (nic && nic->key.index == index &&
		    is_key_of(&nic->key, index, key_name(ctx, &name)))
			return nic;
	}
	for (i = 0; i < GDR_NIC_CACHE_MAX; i++) {
		nic = load(&nics[i]);
		if (!nic)
			break;
		if (nic->key.index == index &&
		    is_key_of(&nic->key, index, key_name(ctx, &name)))
			return nic;
	}
	gdr_node_get();
	memset(spare, 0, sizeof(*spare));
	gdr_nic_key(ctx, &spare->key);
	probe_nic(s, pd, spare);
	mine = malloc(sizeof(*mine));
	if (!mine)
		return spare; /* answered, just not cached */
	*mine = *spare;
	for (; i < GDR_NIC_CACHE_MAX; i++) {
		nic = publish(&nics[i], mine);
		if (nic == mine || same(&nic->key, &spare->key))
			return spare; /* publish() freed ours if it lost */
		mine = malloc(sizeof(*mine));
		if (!mine)
			return spare;
		*mine = *spare;
	}
	/* The cache is full: this device is probed on every call. */
	free(mine);
	gdr_debug("%s: %d RDMA devices cached already; not caching this one",
		  spare->key.name, GDR_NIC_CACHE_MAX);
	return spare;
}

void gdr_nic_get(struct ibv_pd *pd, struct gdr_nic *out)
{
	const struct gdr_nic *nic = gdr_nic_find(pd, out);

	if (nic != out)
		*out = *nic;
}

void gdr_probe_reset(void)
{
	struct cuda_state *st;
	unsigned int i;
	int d;

	for (i = 0; i < GDR_NIC_CACHE_MAX; i++) {
		free(nics[i]);
		nics[i] = NULL;
	}
	free(mlx5);
	mlx5 = NULL;
	for (d = 0; d < PCIE_MAP_MAX; d++)
		pcie_map[d] = GDR_PCIE_MAP_UNTRIED;
	gdr_boot_id_forget();
	st = cuda;
	if (st) {
		for (d = 0; d < st->pub.num_devices; d++)
			free(st->devs[d]);
		free(st);
	}
	cuda = NULL;
	free(table);
	table = NULL;
	free(node);
	node = NULL;
	__atomic_store_n(&gdr_debug_on, 0, __ATOMIC_RELAXED);
}

void gdr_seam_install(const struct gdr_seam *s)
{
	gdr_probe_reset();
	gdr_seam_set(s);
}

bool gdr_cuda_has_pcie_mapping(const struct gdr_cuda *c)
{
	return c && c->state == GDR_CUDA_READY &&
	       c->driver_version >= CUDA_PCIE_MAPPING_API;
}
