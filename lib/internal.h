/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of libgpudirect. Nothing here is exported: the shared
 * library is built with hidden visibility and a version script, and the
 * tests link the internal static library instead.
 */
#ifndef GPUDIRECT_INTERNAL_H
#define GPUDIRECT_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#include <cuda.h>

#include "gpudirect.h"

#define GDR_EXPORT __attribute__((visibility("default")))

/* The driver's "operation not supported" code, seen from ibv_reg_*_mr. */
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

#define GDR_MSG_LEN 1024

/* --- the CUDA driver table (cuda-loader.c) -------------------------------
 * One line per entry point: name, the ABI symbol dlsym() falls back to when
 * the driver has no cuGetProcAddress, the CUDA version whose signature the
 * code was written for, whether it is required, and the parameters.
 */
#define GDR_CUDA_FUNCS(X)                                                      \
	X(cuInit, "cuInit", 2000, 1, (unsigned int flags))                     \
	X(cuDriverGetVersion, "cuDriverGetVersion", 2020, 1, (int *version))   \
	X(cuGetErrorName, "cuGetErrorName", 6000, 0,                           \
	  (CUresult err, const char **name))                                   \
	X(cuDeviceGetCount, "cuDeviceGetCount", 2000, 1, (int *count))         \
	X(cuDeviceGet, "cuDeviceGet", 2000, 1, (CUdevice * dev, int ordinal))  \
	X(cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000, 1,               \
	  (int *value, CUdevice_attribute attr, CUdevice dev))                 \
	X(cuDeviceGetName, "cuDeviceGetName", 2000, 1,                         \
	  (char *name, int len, CUdevice dev))                                 \
	X(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", 4010, 1,                 \
	  (char *busid, int len, CUdevice dev))                                \
	X(cuPointerGetAttributes, "cuPointerGetAttributes", 7000, 1,           \
	  (unsigned int n, CUpointer_attribute *attrs, void **data,            \
	   CUdeviceptr ptr))                                                   \
	X(cuPointerSetAttribute, "cuPointerSetAttribute", 6000, 1,             \
	  (const void *value, CUpointer_attribute attr, CUdeviceptr ptr))      \
	X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, 1,       \
	  (CUcontext * ctx, CUdevice dev))                                     \
	X(cuCtxGetCurrent, "cuCtxGetCurrent", 4000, 1, (CUcontext * ctx))      \
	X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", 4000, 1, (CUcontext ctx))   \
	X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", 4000, 1, (CUcontext * ctx))   \
	X(cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange",      \
	  11070, 0,                                                            \
	  (void *handle, CUdeviceptr ptr, size_t size,                         \
	   CUmemRangeHandleType type, unsigned long long flags))

struct gdr_cuda_ops {
#define GDR_CUDA_MEMBER(name, sym, ver, req, params) CUresult(*name) params;
	GDR_CUDA_FUNCS(GDR_CUDA_MEMBER)
#undef GDR_CUDA_MEMBER
};

/*
 * Fill @ops from libcuda.so.1. Returns 0, or -1 with the reason in @why.
 * Entries marked optional may stay NULL.
 */
int gdr_cuda_load(struct gdr_cuda_ops *ops, char *why, size_t n);

/* --- the verbs table (verbs.c) ------------------------------------------ */
struct gdr_verbs_ops {
	struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *pd, void *addr,
				       size_t len, uint64_t iova,
				       unsigned int access);
	/* NULL when libibverbs predates rdma-core 34. */
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t len, uint64_t iova, int fd,
					int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*query_device)(struct ibv_context *ctx,
			    struct ibv_device_attr *attr);
	int (*query_port)(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr);
	const char *(*device_name)(struct ibv_device *dev);
};

/* The name of @pd's RDMA device, for messages. */
const char *gdr_pd_name(struct ibv_pd *pd);

/* The real libibverbs, with ibv_reg_dmabuf_mr resolved at run time. */
void gdr_verbs_real(struct gdr_verbs_ops *ops);

/* --- the seam (seam.c) -------------------------------------------------- */
/*
 * Everything outside the process that the library reads or calls. The
 * production values come from the running system; tests install fixture
 * trees and fake tables with gdr_seam_install().
 */
struct gdr_seam {
	char sysfs_root[PATH_MAX];  /* "/sys" */
	char procfs_root[PATH_MAX]; /* "/proc" */
	/* Kernel release; empty means ask uname(). */
	char kernel_release[128];
	long page_size; /* 0 means sysconf(_SC_PAGESIZE) */
	/* Loads the CUDA table; may fail (no libcuda). */
	int (*cuda_load)(struct gdr_cuda_ops *ops, char *why, size_t n);
	struct gdr_verbs_ops verbs;
	/* Reads the environment; secure_getenv in production. */
	char *(*getenv)(const char *name);
	/* Opens a sysfs/procfs file for reading; open(2) in production. */
	int (*open_file)(const char *path);
	/* Reads a sysfs symbolic link; readlink(2) in production. */
	ssize_t (*read_link)(const char *path, char *buf, size_t n);
};

/* The seam in force. Filled from the real system on first use. */
const struct gdr_seam *gdr_seam(void);
/*
 * Replace the seam (NULL restores the real system) and forget every
 * cached probe. Only for tests: not exported, not thread-safe against
 * concurrent registrations.
 */
void gdr_seam_install(const struct gdr_seam *seam);
/* A seam filled with the real system's values, for tests to edit. */
void gdr_seam_default(struct gdr_seam *seam);

/* --- files and parsers (sysfs.c) ---------------------------------------- */
/* Read a file below @root into @buf (NUL-terminated, trailing newline
 * stripped). Returns 0, or -1 with errno set. */
int gdr_read_file(const char *root, const char *path, char *buf, size_t n);
bool gdr_file_exists(const char *root, const char *path);
/* Read up to @n bytes of a file; returns the count, or -1 with errno. */
ssize_t gdr_read_bin(const char *root, const char *path, void *buf, size_t n);
/* The target of a symbolic link below @root, NUL-terminated; 0 or -1. */
int gdr_read_link(const char *root, const char *path, char *buf, size_t n);

struct gdr_kver {
	int major, minor, patch;
};
/* Parse "5.12.0-rc1+", "6.18.44-fc-v973-gpu", "4.18.0-513.el8.x86_64". */
int gdr_parse_kernel_release(const char *s, struct gdr_kver *v);
int gdr_kver_cmp(const struct gdr_kver *a, int major, int minor);

enum gdr_nv_flavour {
	GDR_NV_ABSENT = 0,	/* no /proc/driver/nvidia/version */
	GDR_NV_OPEN = 1,	/* "Open Kernel Module" */
	GDR_NV_PROPRIETARY = 2,
	GDR_NV_UNPARSED = 3,	/* present but not understood */
};
/* Parse /proc/driver/nvidia/version text: flavour and "580.159.04". */
enum gdr_nv_flavour gdr_parse_nvidia_version(const char *text, char *ver,
					     size_t n);
/* Parse a decimal number from a sysfs attribute. Returns 0 or -1. */
int gdr_parse_long(const char *s, long *out);

/* --- PCIe topology (topology.c) ---------------------------------------- */
#define GDR_BDF_LEN 16
/* "0000:3B:00.0" or "00000000:3b:00.0" -> "0000:3b:00.0". 0 or -1. */
int gdr_bdf_normalize(const char *in, char *out, size_t n);
/* The PCI address of RDMA device @name's parent device. 0 or -1. */
int gdr_nic_pci(const char *name, char *bdf, size_t n);
/* How two PCI devices connect, as nvidia-smi topo -m names it:
 * "PIX", "PXB", "PHB", "NODE", "SYS", or "unknown". */
const char *gdr_pci_distance(const char *a, const char *b);
/* The NUMA node and IOMMU group of a PCI device; -1 when unknown. */
int gdr_pci_numa(const char *bdf);
int gdr_pci_iommu_group(const char *bdf);
/*
 * The bridges between @a and @b (their common ancestor included) whose
 * ACS control has P2P request or completion redirect enabled, written to
 * @out as "BDF BDF ..." ("" when none). Returns how many, or -1 when
 * none was found but some bridge's extended config space could not be
 * read (that needs root), or the paths are not in sysfs.
 */
int gdr_pci_acs_redirects(const char *a, const char *b, char *out, size_t n);

/* --- errors and debug (error.c) ----------------------------------------- */
void gdr_clear_error(void);
/* Set this thread's message and errno; returns NULL for convenience. */
void *gdr_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* snprintf that never overflows and always terminates. */
void gdr_fmt(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void gdr_vfmt(char *buf, size_t n, const char *fmt, va_list ap);
/* Set by the node probe from GPUDIRECT_DEBUG; read atomically. */
extern int gdr_debug_on;
void gdr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The name of a CUDA error, or its number. */
const char *gdr_cu_errname(const struct gdr_cuda_ops *cu, CUresult r,
			   char *buf, size_t n);
/* The errno that best matches a CUDA error. */
int gdr_cu_errno(CUresult r);
/* "EOPNOTSUPP", "EBADF", ... for messages. */
const char *gdr_errno_name(int err);
/* True when @err means "this path is not supported here". */
bool gdr_err_is_unsupported(int err);

/* --- probe and capability caches (probe.c) ------------------------------ */
enum gdr_tristate {
	GDR_NO = 0,
	GDR_YES = 1,
	GDR_UNKNOWN = 2,
};

struct gdr_node {
	/* kernel */
	char kernel_release[128];
	struct gdr_kver kver;
	enum gdr_tristate kernel_ok; /* >= 5.12 */
	/* NVIDIA kernel driver */
	enum gdr_nv_flavour nv_flavour;
	char nv_version[64];
	/* nvidia-peermem: the sysfs path that showed it, "" if none */
	char peermem_path[96];
	char peermem_version[64];
	/* GPUDirect Storage */
	bool nvidia_fs;
	bool nvidia_fs_proc; /* /proc/driver/nvidia-fs exists */
	char nvidia_fs_version[64];
	/* CUDA */
	bool cuda_ok; /* loaded and cuInit succeeded */
	char cuda_why[256];
	struct gdr_cuda_ops cu;
	int driver_version;
	int num_devices;
	struct gdr_dev *devs;
	/* verbs */
	bool verbs_dmabuf; /* ibv_reg_dmabuf_mr present */
	/* environment */
	bool debug;
	uint32_t env_mask;   /* 0: no override */
	char env_error[160]; /* a bad GPUDIRECT_PATH, in words */
	long page_size;
};

struct gdr_dev {
	int ready; /* atomic: 1 once filled */
	int ordinal;
	CUdevice dev;
	char name[128];
	char busid[32];
	int dmabuf_attr;     /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
	int gdr_attr;	     /* ..._GPU_DIRECT_RDMA_SUPPORTED */
	int gdr_vmm_attr;    /* ..._GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED */
	CUcontext primary;   /* retained on first need, never released */
	char why[160];	     /* why a query failed, "" if none */
};

/* What an RDMA device answered to ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0). */
struct gdr_nic {
	struct gdr_nic *next;
	struct ibv_context *ctx;
	struct ibv_device *dev;
	enum gdr_tristate dmabuf;
	int err; /* the errno it answered */
	char name[IBV_SYSFS_NAME_MAX];
};

/* The node, probed once per process. Never NULL. */
const struct gdr_node *gdr_node_get(void);
/* CUDA device @ordinal, its attributes read once. NULL if out of range. */
struct gdr_dev *gdr_dev_get(int ordinal);
/* @d's primary context, retained once. 0, or an errno with @why. */
int gdr_dev_primary_ctx(struct gdr_dev *d, CUcontext *ctx, char *why,
			size_t n);
/* The DMA-BUF answer of @pd's device, asked once per context. */
const struct gdr_nic *gdr_nic_get(struct ibv_pd *pd);
/* Forget every cached probe (tests). */
void gdr_probe_reset(void);

/* --- pointer classification (classify.c) -------------------------------- */
struct gdr_ptr_info {
	enum gdr_mem_type type;
	int device;	      /* CUDA ordinal, -1 for host */
	CUcontext ctx;	      /* owning context, may be NULL (VMM) */
	uintptr_t range_start; /* the allocation holding ptr, 0 if unknown */
	size_t range_size;
};
/* Classify [ptr, ptr+len). Returns 0, or -1 with errno and the error
 * message set (managed, pool, array memory, range past the allocation). */
int gdr_classify(const struct gdr_node *node, void *ptr, size_t len,
		 struct gdr_ptr_info *pi);

/* --- backends (backend-*.c) --------------------------------------------- */
/* One registration request, as the dispatcher hands it to a backend. */
struct gdr_req {
	struct ibv_pd *pd;
	void *ptr;
	size_t len;
	int access;
	uint32_t flags; /* GDR_REG_* */
	const struct gdr_node *node;
	struct gdr_ptr_info pi;
};

struct gdr_backend {
	enum gdr_path path;
	const char *name;
	/* true: registers CUDA device memory; false: host memory */
	bool device_memory;
	/* What the path needs, in words, for docs and the report. */
	const char *needs;
	/*
	 * 0 when the path can be tried for @req, else an errno (EOPNOTSUPP)
	 * with the reason and remedy in @why.
	 */
	int (*eligible)(const struct gdr_req *req, char *why, size_t n);
	/* The MR, or NULL with errno set and the reason in @why. */
	struct ibv_mr *(*reg)(const struct gdr_req *req, char *why, size_t n);
};

extern const struct gdr_backend gdr_backend_dmabuf;
extern const struct gdr_backend gdr_backend_peermem;
extern const struct gdr_backend gdr_backend_host;

/* Every backend, in order of preference. */
extern const struct gdr_backend *const gdr_backends[];
extern const unsigned int gdr_num_backends;

/* Shared by the peermem and host backends: ibv_reg_mr_iova2(ptr, iova=ptr)
 * with the failure explained; @hint is appended to an EFAULT message. */
struct ibv_mr *gdr_reg_va(const struct gdr_req *req, const char *hint,
			  char *why, size_t n);

/* --- dmabuf arithmetic (backend-dmabuf.c) ------------------------------- */
struct gdr_dmabuf_range {
	uintptr_t base;	 /* first byte exported, page aligned */
	size_t size;	 /* bytes exported, page multiple */
	uint64_t offset; /* ptr - base */
};
/* Returns 0, or -1 (EINVAL) when ptr + len overflows after alignment. */
int gdr_dmabuf_range(uintptr_t ptr, size_t len, long page,
		     struct gdr_dmabuf_range *r);

/*
 * Whether device memory on @dev can go through the DMA-BUF path with
 * @nic (NULL: skip the NIC check). 0, or EOPNOTSUPP with the reason.
 */
int gdr_dmabuf_eligible(const struct gdr_node *node, const struct gdr_dev *dev,
			const struct gdr_nic *nic, char *why, size_t n);
/* Whether the peermem path is there. 0, or EOPNOTSUPP with the reason. */
int gdr_peermem_eligible(const struct gdr_node *node, char *why, size_t n);

#endif /* GPUDIRECT_INTERNAL_H */
