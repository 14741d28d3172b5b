/* SPDX-License-Identifier: MIT */
/*
 * What the node, each CUDA device and each RDMA device can do, found out
 * once and cached: the node on the first call of the process, a device the
 * first time memory on it is registered, an RDMA device the first time one
 * of its protection domains is used. The steady state reads no files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

int gdr_debug_on;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdr_node node;
static int node_ready; /* atomic */
/* Prepended under the lock, read without it (atomic loads). */
static struct gdr_nic *nics;

/* The four places where nvidia-peermem (or MLNX_OFED's nv_peer_mem) shows. */
static const char *const peermem_paths[] = {
	"/kernel/mm/memory_peers/nv_mem/version",
	"/kernel/mm/memory_peers/nv_mem_nc/version",
	"/module/nvidia_peermem/version",
	"/module/nv_peer_mem/version",
};

static void probe_env(struct gdr_node *nd, const struct gdr_seam *s)
{
	const char *v = s->getenv ? s->getenv("GPUDIRECT_DEBUG") : NULL;
	enum gdr_path p;

	nd->debug = v && *v && strcmp(v, "0") != 0;
	v = s->getenv ? s->getenv("GPUDIRECT_PATH") : NULL;
	if (!v || !*v)
		return;
	if (gdr_path_parse(v, &p)) {
		gdr_fmt(nd->env_error, sizeof(nd->env_error),
			"GPUDIRECT_PATH=%.40s is not a path; set it to auto, "
			"dmabuf, peermem or host, or unset it",
			v);
		return;
	}
	/* Host memory can only ever take the host path. */
	if (p != GDR_PATH_NONE)
		nd->env_mask = GDR_PATH_BIT(p) | GDR_PATH_BIT(GDR_PATH_HOST);
}

static void probe_kernel(struct gdr_node *nd, const struct gdr_seam *s)
{
	struct utsname u;

	if (s->kernel_release[0]) {
		gdr_fmt(nd->kernel_release, sizeof(nd->kernel_release), "%s",
			s->kernel_release);
	} else if (uname(&u) == 0) {
		gdr_fmt(nd->kernel_release, sizeof(nd->kernel_release), "%s",
			u.release);
	}
	if (gdr_parse_kernel_release(nd->kernel_release, &nd->kver))
		nd->kernel_ok = GDR_UNKNOWN;
	else
		nd->kernel_ok = gdr_kver_cmp(&nd->kver, 5, 12) >= 0 ? GDR_YES
								   : GDR_NO;
}

static void probe_files(struct gdr_node *nd, const struct gdr_seam *s)
{
	char text[1024];
	size_t i;

	if (gdr_read_file(s->procfs_root, "/driver/nvidia/version", text,
			  sizeof(text)) == 0)
		nd->nv_flavour = gdr_parse_nvidia_version(
			text, nd->nv_version, sizeof(nd->nv_version));
	else
		nd->nv_flavour = GDR_NV_ABSENT;

	for (i = 0; i < sizeof(peermem_paths) / sizeof(peermem_paths[0]);
	     i++) {
		if (gdr_read_file(s->sysfs_root, peermem_paths[i],
				  nd->peermem_version,
				  sizeof(nd->peermem_version)) == 0) {
			gdr_fmt(nd->peermem_path, sizeof(nd->peermem_path),
				"/sys%s", peermem_paths[i]);
			break;
		}
	}
	nd->nvidia_fs_proc = gdr_file_exists(s->procfs_root,
					     "/driver/nvidia-fs");
	if (gdr_read_file(s->sysfs_root, "/module/nvidia_fs/version",
			  nd->nvidia_fs_version,
			  sizeof(nd->nvidia_fs_version)) == 0 ||
	    nd->nvidia_fs_proc)
		nd->nvidia_fs = true;
}

static void probe_cuda(struct gdr_node *nd, const struct gdr_seam *s)
{
	char name[64];
	CUresult r;

	if (!s->cuda_load ||
	    s->cuda_load(&nd->cu, nd->cuda_why, sizeof(nd->cuda_why)))
		return;
	r = nd->cu.cuInit(0);
	if (r != CUDA_SUCCESS) {
		gdr_fmt(nd->cuda_why, sizeof(nd->cuda_why),
			"cuInit failed with %s%s",
			gdr_cu_errname(&nd->cu, r, name, sizeof(name)),
			r == CUDA_ERROR_NO_DEVICE
				? ": no NVIDIA GPU is visible to this process "
				  "(check CUDA_VISIBLE_DEVICES and the "
				  "container's device list)"
				: "; check that the NVIDIA driver is loaded "
				  "(nvidia-smi)");
		return;
	}
	r = nd->cu.cuDriverGetVersion(&nd->driver_version);
	if (r == CUDA_SUCCESS)
		r = nd->cu.cuDeviceGetCount(&nd->num_devices);
	if (r != CUDA_SUCCESS) {
		gdr_fmt(nd->cuda_why, sizeof(nd->cuda_why),
			"the CUDA driver failed to report its version or "
			"devices (%s)",
			gdr_cu_errname(&nd->cu, r, name, sizeof(name)));
		nd->num_devices = 0;
		return;
	}
	if (nd->num_devices > 0) {
		nd->devs = calloc((size_t)nd->num_devices, sizeof(*nd->devs));
		if (!nd->devs) {
			gdr_fmt(nd->cuda_why, sizeof(nd->cuda_why),
				"out of memory while probing CUDA devices");
			nd->num_devices = 0;
			return;
		}
	}
	nd->cuda_ok = true;
}

static void probe_node(struct gdr_node *nd)
{
	const struct gdr_seam *s = gdr_seam();

	memset(nd, 0, sizeof(*nd));
	probe_env(nd, s);
	probe_kernel(nd, s);
	probe_files(nd, s);
	probe_cuda(nd, s);
	nd->verbs_dmabuf = s->verbs.reg_dmabuf_mr != NULL;
	nd->page_size = s->page_size > 0 ? s->page_size
					 : sysconf(_SC_PAGESIZE);
	if (nd->page_size <= 0)
		nd->page_size = 4096;
}

/*
 * fork(): hold the lock across it, so that a child never inherits it locked
 * by a thread that does not exist there (a probe in progress would
 * otherwise deadlock the child's first registration).
 */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static void atfork_child(void)
{
	pthread_mutex_unlock(&lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_register(void)
{
	if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child))
		gdr_debug("pthread_atfork failed: fork() during a first "
			  "registration may deadlock the child");
}

const struct gdr_node *gdr_node_get(void)
{
	if (__atomic_load_n(&node_ready, __ATOMIC_ACQUIRE))
		return &node;
	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&lock);
	if (!node_ready) {
		probe_node(&node);
		__atomic_store_n(&gdr_debug_on, node.debug, __ATOMIC_RELAXED);
		__atomic_store_n(&node_ready, 1, __ATOMIC_RELEASE);
		gdr_debug("node: kernel %s (%s 5.12), nvidia %s %s, peermem %s, "
			  "cuda %d (%s), ibv_reg_dmabuf_mr %s, page %ld",
			  node.kernel_release,
			  node.kernel_ok == GDR_YES ? ">=" : "not >=",
			  node.nv_version[0] ? node.nv_version : "-",
			  node.nv_flavour == GDR_NV_OPEN ? "open"
			  : node.nv_flavour == GDR_NV_PROPRIETARY ? "proprietary"
								 : "absent",
			  node.peermem_path[0] ? node.peermem_path : "absent",
			  node.driver_version,
			  node.cuda_ok ? "ok" : node.cuda_why,
			  node.verbs_dmabuf ? "present" : "absent",
			  node.page_size);
	}
	pthread_mutex_unlock(&lock);
	return &node;
}

static void fill_dev(const struct gdr_node *nd, struct gdr_dev *d, int ordinal)
{
	const struct gdr_cuda_ops *cu = &nd->cu;
	char name[64];
	CUresult r;

	d->ordinal = ordinal;
	r = cu->cuDeviceGet(&d->dev, ordinal);
	if (r != CUDA_SUCCESS) {
		gdr_fmt(d->why, sizeof(d->why), "cuDeviceGet(%d) failed: %s",
			ordinal, gdr_cu_errname(cu, r, name, sizeof(name)));
		return;
	}
	/* An attribute the driver does not know reads as 0 (unsupported). */
	if (cu->cuDeviceGetAttribute(&d->dmabuf_attr,
				     CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
				     d->dev) != CUDA_SUCCESS)
		d->dmabuf_attr = 0;
	if (cu->cuDeviceGetAttribute(&d->gdr_attr,
				     CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
				     d->dev) != CUDA_SUCCESS)
		d->gdr_attr = 0;
	if (cu->cuDeviceGetAttribute(
		    &d->gdr_vmm_attr,
		    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
		    d->dev) != CUDA_SUCCESS)
		d->gdr_vmm_attr = 0;
	if (cu->cuDeviceGetName(d->name, sizeof(d->name), d->dev) !=
	    CUDA_SUCCESS)
		strcpy(d->name, "unknown");
	if (cu->cuDeviceGetPCIBusId(d->busid, sizeof(d->busid), d->dev) !=
	    CUDA_SUCCESS)
		strcpy(d->busid, "unknown");
	d->name[sizeof(d->name) - 1] = '\0';
	d->busid[sizeof(d->busid) - 1] = '\0';
	gdr_debug("gpu%d: %s %s dma_buf_supported=%d gdr_supported=%d "
		  "gdr_vmm=%d",
		  ordinal, d->name, d->busid, d->dmabuf_attr, d->gdr_attr,
		  d->gdr_vmm_attr);
}

struct gdr_dev *gdr_dev_get(int ordinal)
{
	const struct gdr_node *nd = gdr_node_get();
	struct gdr_dev *d;

	if (!nd->cuda_ok || ordinal < 0 || ordinal >= nd->num_devices)
		return NULL;
	d = &nd->devs[ordinal];
	if (__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE))
		return d;
	pthread_mutex_lock(&lock);
	if (!d->ready) {
		fill_dev(nd, d, ordinal);
		__atomic_store_n(&d->ready, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	return d;
}

int gdr_dev_primary_ctx(struct gdr_dev *d, CUcontext *ctx, char *why,
			size_t n)
{
	const struct gdr_node *nd = gdr_node_get();
	char name[64];
	CUresult r = CUDA_SUCCESS;

	pthread_mutex_lock(&lock);
	if (!d->primary)
		r = nd->cu.cuDevicePrimaryCtxRetain(&d->primary, d->dev);
	*ctx = d->primary;
	pthread_mutex_unlock(&lock);
	if (r != CUDA_SUCCESS) {
		gdr_fmt(why, n,
			"cuDevicePrimaryCtxRetain on GPU %d failed with %s",
			d->ordinal, gdr_cu_errname(&nd->cu, r, name,
						   sizeof(name)));
		return gdr_cu_errno(r);
	}
	return 0;
}

static void probe_nic(const struct gdr_seam *s, struct ibv_pd *pd,
		      struct gdr_nic *nic)
{
	struct ibv_mr *mr;
	const char *name;

	name = s->verbs.device_name ? s->verbs.device_name(pd->context->device)
				    : NULL;
	gdr_fmt(nic->name, sizeof(nic->name), "%s", name ? name : "unknown");
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
	nic->err = errno;
	if (mr) {
		s->verbs.dereg_mr(mr);
		nic->dmabuf = GDR_UNKNOWN;
		nic->err = 0;
	} else if (nic->err == EBADF) {
		nic->dmabuf = GDR_YES;
	} else if (nic->err == EOPNOTSUPP || nic->err == EPROTONOSUPPORT) {
		nic->dmabuf = GDR_NO;
	} else {
		nic->dmabuf = GDR_UNKNOWN;
	}
	gdr_debug("%s: ibv_reg_dmabuf_mr probe answered %s: DMA-BUF %s",
		  nic->name, mr ? "an MR" : gdr_errno_name(nic->err),
		  nic->dmabuf == GDR_YES  ? "supported"
		  : nic->dmabuf == GDR_NO ? "unsupported"
					  : "unknown");
}

const struct gdr_nic *gdr_nic_get(struct ibv_pd *pd)
{
	const struct gdr_seam *s = gdr_seam();
	struct ibv_context *ctx = pd->context;
	struct gdr_nic *nic;

	gdr_node_get();
	/* Steady state: a lock-free walk; entries are complete once linked. */
	for (nic = __atomic_load_n(&nics, __ATOMIC_ACQUIRE); nic;
	     nic = nic->next)
		if (nic->ctx == ctx && nic->dev == ctx->device)
			return nic;
	pthread_mutex_lock(&lock);
	for (nic = nics; nic; nic = nic->next)
		if (nic->ctx == ctx && nic->dev == ctx->device)
			break;
	if (!nic) {
		nic = calloc(1, sizeof(*nic));
		if (nic) {
			nic->ctx = ctx;
			nic->dev = ctx->device;
			probe_nic(s, pd, nic);
			nic->next = nics;
			__atomic_store_n(&nics, nic, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&lock);
	return nic;
}

void gdr_probe_reset(void)
{
	struct gdr_nic *nic;

	pthread_mutex_lock(&lock);
	while ((nic = nics)) {
		nics = nic->next;
		free(nic);
	}
	free(node.devs);
	memset(&node, 0, sizeof(node));
	__atomic_store_n(&node_ready, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&gdr_debug_on, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}
