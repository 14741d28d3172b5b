/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of libgpudirect. Nothing here is exported: the shared
 * library is built with hidden visibility and a version script, and the
 * tests link the internal static library instead. docs/hacking.md gives
 * the layout and the conventions.
 *
 * Error convention, everywhere in lib/:
 *  - a function returning int returns 0 on success or a positive errno
 *    value; it does not rely on errno;
 *  - a function returning a pointer returns NULL and sets errno;
 *  - words for the user go into a caller's (char *why, size_t n) buffer;
 *  - only the public entry points set gdr_last_error() (gdr_fail()).
 */
#ifndef GPUDIRECT_INTERNAL_H
#define GPUDIRECT_INTERNAL_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cuda-abi.h"
#include "gpudirect.h"

#define GDR_EXPORT __attribute__((visibility("default")))

/* The kernel's internal "not supported" code, which some RDMA drivers let
 * escape from ibv_reg_*_mr. User space must never see it from us. */
#define GDR_ENOTSUPP 524

/* A file the library reads that is not a regular file (a FIFO, a device,
 * a socket): the seam's open refuses it, never blocks on it. Past every
 * real errno; named by gdr_errno_name(). */
#define GDR_ENOTREG 4097

#define GDR_MSG_LEN 1024
/* A reason in words; the public record keeps the first GDR_REASON_LEN. */
#define GDR_WHY_LEN 512
#define GDR_VALUE_LEN 512

/* --- the CUDA driver table (cuda-loader.c) -------------------------------
 * One line per entry point: name, the ABI symbol, the CUDA version whose
 * signature the code was written for (cuGetProcAddress hands back that
 * ABI), whether the library cannot work without it, and the parameters.
 */
#define GDR_CU_FUNCS(X)                                                        \
	X(cuInit, cuInit, 2000, 1, (unsigned int flags))                       \
	X(cuDriverGetVersion, cuDriverGetVersion, 2020, 1, (int *version))     \
	X(cuGetErrorName, cuGetErrorName, 6000, 0,                             \
	  (CUresult err, const char **name))                                   \
	X(cuDeviceGetCount, cuDeviceGetCount, 2000, 1, (int *count))           \
	X(cuDeviceGet, cuDeviceGet, 2000, 1, (CUdevice * dev, int ordinal))    \
	X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000, 1,                 \
	  (int *value, CUdevice_attribute attr, CUdevice dev))                 \
	X(cuDeviceGetName, cuDeviceGetName, 2000, 1,                           \
	  (char *name, int len, CUdevice dev))                                 \
	X(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId, 4010, 1,                   \
	  (char *busid, int len, CUdevice dev))                                \
	X(cuPointerGetAttribute, cuPointerGetAttribute, 4000, 1,               \
	  (void *data, CUpointer_attribute attr, CUdeviceptr ptr))             \
	X(cuPointerGetAttributes, cuPointerGetAttributes, 7000, 1,             \
	  (unsigned int n, CUpointer_attribute *attrs, void **data,            \
	   CUdeviceptr ptr))                                                   \
	X(cuPointerSetAttribute, cuPointerSetAttribute, 6000, 1,               \
	  (const void *value, CUpointer_attribute attr, CUdeviceptr ptr))      \
	X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, 1,         \
	  (CUcontext * ctx, CUdevice dev))                                     \
	X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, 11000, 0,   \
	  (CUdevice dev))                                                      \
	X(cuCtxGetCurrent, cuCtxGetCurrent, 4000, 1, (CUcontext * ctx))        \
	X(cuCtxGetDevice, cuCtxGetDevice, 2000, 1, (CUdevice * dev))           \
	X(cuCtxPushCurrent, cuCtxPushCurrent_v2, 4000, 1, (CUcontext ctx))     \
	X(cuCtxPopCurrent, cuCtxPopCurrent_v2, 4000, 1, (CUcontext * ctx))     \
	X(cuCtxGetFlags, cuCtxGetFlags, 7000, 0, (unsigned int *flags))        \
	X(cuCtxSetFlags, cuCtxSetFlags, 12010, 0, (unsigned int flags))        \
	X(cuMemGetHandleForAddressRange, cuMemGetHandleForAddressRange, 11070, \
	  0,                                                                   \
	  (void *handle, CUdeviceptr ptr, size_t size,                         \
	   CUmemRangeHandleType type, unsigned long long flags))               \
	X(cuMemAlloc, cuMemAlloc_v2, 3020, 0,                                  \
	  (CUdeviceptr * dptr, size_t size))                                   \
	X(cuMemFree, cuMemFree_v2, 3020, 0, (CUdeviceptr dptr))                \
	X(cuMemGetAddressRange, cuMemGetAddressRange_v2, 3020, 0,              \
	  (CUdeviceptr * base, size_t * size, CUdeviceptr ptr))

struct gdr_cuda_ops {
#define GDR_CUDA_MEMBER(name, sym, ver, req, params) CUresult(*name) params;
	GDR_CU_FUNCS(GDR_CUDA_MEMBER)
#undef GDR_CUDA_MEMBER
};

/* gdr_cuda_load() flags */
enum {
	/* Only use libcuda.so.1 if the process has loaded it already. */
	GDR_CUDA_NOLOAD = 1u << 0,
};

/* A symbol lookup: dlsym() on a library handle, or a test's table. */
typedef void *(*gdr_sym_fn)(void *lib, const char *name);

/*
 * Resolve every entry point from @lib through cuGetProcAddress (the
 * CUDA 12 signature, or the 11.3 one on older drivers), or by its ABI
 * symbol on drivers without it. 0, or ENOSYS with the missing one in @why.
 */
int gdr_cuda_resolve(void *lib, gdr_sym_fn sym, struct gdr_cuda_ops *ops,
		     char *why, size_t n);
/*
 * Open libcuda.so.1 (with GDR_CUDA_NOLOAD, only if it is already loaded
 * in the process) and resolve the table. 0, ENOENT when the library is
 * not there (or not loaded), ENOSYS when an entry point is missing.
 */
int gdr_cuda_load(struct gdr_cuda_ops *ops, unsigned int flags, char *why,
		  size_t n);

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
	int (*query_port)(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr);
	const char *(*device_name)(struct ibv_device *dev);
	/* The kernel's index of the device; NULL before rdma-core 32. */
	int (*device_index)(struct ibv_device *dev);
};

/* The name of @pd's RDMA device, for messages. */
const char *gdr_pd_name(struct ibv_pd *pd);

/*
 * mlx5 direct verbs (libmlx5.so.1), for Data Direct: rdma-core v54
 * (MLX5_1.25) added the two Data Direct calls. Declared here: no installed
 * header is needed.
 */
#define GDR_MLX5DV_DATA_DIRECT                                                 \
	(1 << 0) /* MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT */
struct gdr_mlx5_ops {
	bool (*is_supported)(struct ibv_device *dev);
	/* 0 and the path; ENODEV when the device has no Data Direct
	 * function */
	int (*data_direct_path)(struct ibv_context *ctx, char *buf, size_t n);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t len, uint64_t iova, int fd,
					int access, int mlx5_access);
};
/* Load libmlx5.so.1 and resolve the table: 0, or ENOENT/ENOSYS with the
 * reason in @why. */
int gdr_mlx5_load(struct gdr_mlx5_ops *ops, char *why, size_t n);
/* Why the Data Direct calls are missing, in words (verbs.c). */
extern const char gdr_mlx5_too_old[], gdr_mlx5_absent[];

/* --- NVML (nvml.c) ---------------------------------------------------------- */
/* The seam's gpu_c2c from libnvidia-ml.so.1. */
int gdr_nvml_c2c(const char *busid, bool *c2c, char *why, size_t n);

/* The real libibverbs, with the newer entry points resolved at run time. */
void gdr_verbs_real(struct gdr_verbs_ops *ops);

/* --- the seam (seam.c) -------------------------------------------------- */
/*
 * Everything outside the process that the library reads or calls. The
 * production values come from the running system; tests and snapshot
 * replay install fixture trees and modelled tables with gdr_seam_install().
 */
struct gdr_seam {
	char sysfs_root[PATH_MAX];  /* "/sys" */
	char procfs_root[PATH_MAX]; /* "/proc" */
	/* Kernel release; empty means ask uname(). */
	char kernel_release[128];
	long page_size; /* 0 means sysconf(_SC_PAGESIZE) */
	/* Loads the CUDA table (gdr_cuda_load's contract). */
	int (*cuda_load)(struct gdr_cuda_ops *ops, unsigned int flags,
			 char *why, size_t n);
	struct gdr_verbs_ops verbs;
	/* Loads the mlx5 direct verbs (gdr_mlx5_load's contract). */
	int (*mlx5_load)(struct gdr_mlx5_ops *ops, char *why, size_t n);
	/*
	 * Whether the GPU at PCI @busid is attached to the CPU by C2C
	 * (NVLink-C2C: Grace Hopper, Grace Blackwell), from NVML: 0 with
	 * *@c2c set, or an errno with the reason in @why.
	 */
	int (*gpu_c2c)(const char *busid, bool *c2c, char *why, size_t n);
	/* Reads the environment; secure_getenv in production. */
	char *(*getenv)(const char *name);
	/* open(2) for reading, read(2) and readlink(2). */
	int (*open_file)(const char *path);
	ssize_t (*read_fd)(int fd, void *buf, size_t n);
	ssize_t (*read_link)(const char *path, char *buf, size_t n);
};

/* The seam in force. Filled from the real system on first use. */
const struct gdr_seam *gdr_seam(void);
/*
 * Replace the seam (NULL restores the real system) and forget every
 * cached probe. Not thread-safe against concurrent calls into the library.
 */
void gdr_seam_install(const struct gdr_seam *seam);
/* A seam filled with the real system's values, to edit. */
void gdr_seam_default(struct gdr_seam *seam);

/* --- files and parsers (sysfs.c) ---------------------------------------- */
/* Read a file below @root into @buf (NUL-terminated, trailing newline and
 * spaces stripped). 0 or an errno; a read error is an error, never EOF. */
int gdr_read_file(const char *root, const char *path, char *buf, size_t n);
bool gdr_file_exists(const char *root, const char *path);
/* Read up to @n bytes of a file into @buf; @got is the count. 0 or errno. */
int gdr_read_bin(const char *root, const char *path, void *buf, size_t n,
		 size_t *got);
/* The target of a symbolic link below @root, NUL-terminated. 0 or errno. */
int gdr_read_link(const char *root, const char *path, char *buf, size_t n);

struct gdr_kver {
	int major, minor, patch;
};
/* Parse "5.12.0-rc1+", "6.18.44-fc-v973-gpu", "4.18.0-513.el8.x86_64".
 * 0 or EINVAL. */
int gdr_parse_kernel_release(const char *s, struct gdr_kver *v);
int gdr_kver_cmp(const struct gdr_kver *a, int major, int minor);

enum gdr_nv_flavour {
	GDR_NV_ABSENT = 0, /* no /proc/driver/nvidia/version */
	GDR_NV_OPEN = 1,   /* "Open Kernel Module" */
	GDR_NV_PROPRIETARY = 2,
	GDR_NV_UNPARSED = 3,   /* present but not understood */
	GDR_NV_UNREADABLE = 4, /* present, but reading it failed */
};
/* Parse /proc/driver/nvidia/version text: flavour and "580.159.04".
 * NULL text: the file is absent; "" (empty, or NUL bytes): unparsed. */
enum gdr_nv_flavour gdr_parse_nvidia_version(const char *text, char *ver,
					     size_t n);
/* Parse a decimal (or 0x) number from a sysfs attribute. 0 or EINVAL. */
int gdr_parse_long(const char *s, long *out);

/* --- PCIe topology (topology.c) ---------------------------------------- */
#define GDR_BDF_LEN 16
/* "0000:3B:00.0" or "00000000:3b:00.0" -> "0000:3b:00.0". 0 or EINVAL. */
int gdr_bdf_normalize(const char *in, char *out, size_t n);
/* The PCI address of RDMA device @name's parent device. 0 or errno. */
int gdr_nic_pci(const char *name, char *bdf, size_t n);
/* The network device under RDMA device @name's port 1 (RoCE). 0 or errno. */
int gdr_nic_netdev(const char *name, char *out, size_t n);
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

/* The names of paths and memory types (gpudirect.c): what the public
 * gdr_path_str/_parse and gdr_mem_type_str answer, without touching
 * gdr_last_error(), for the library's own messages. */
const char *gdr_path_name(enum gdr_path path);
int gdr_path_lookup(const char *name, enum gdr_path *path); /* 0 or -1 */
const char *gdr_mem_type_name(enum gdr_mem_type type);

/* --- errors and debug (error.c) ----------------------------------------- */
void gdr_clear_error(void);
/* Set this thread's message and errno (after gdr_errno_public()). Returns
 * NULL for convenience. Only public entry points call it. */
void *gdr_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* snprintf that never overflows and always terminates. */
void gdr_fmt(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void gdr_vfmt(char *buf, size_t n, const char *fmt, va_list ap);
/* Append to the string in @buf. */
void gdr_append(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set by the node probe from GPUDIRECT_DEBUG; read atomically. */
extern int gdr_debug_on;
/* One line on stderr when GPUDIRECT_DEBUG is set (the check inline: the
 * hot paths pay a load, not a call). */
void gdr_debug_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define gdr_debug(...)                                                         \
	do {                                                                   \
		if (__atomic_load_n(&gdr_debug_on, __ATOMIC_RELAXED))          \
			gdr_debug_line(__VA_ARGS__);                           \
	} while (0)
/* The name of a CUDA error, or its number. */
const char *gdr_cu_errname(const struct gdr_cuda_ops *cu, CUresult r, char *buf,
			   size_t n);
/* The errno that best matches a CUDA error. */
int gdr_cu_errno(CUresult r);
/* "EOPNOTSUPP", "EBADF", ... for messages. */
const char *gdr_errno_name(int err);
/* "EOPNOTSUPP (Operation not supported)"; says what a 524 was. */
const char *gdr_errno_words(int err, char *buf, size_t n);
/* Sentences more than one public call says. */
extern const char gdr_msg_pd_null[];
/* True when @err means "this path is not supported here". */
bool gdr_err_is_unsupported(int err);
/* The errno a caller may see for @err: the kernel-internal 524 becomes
 * EOPNOTSUPP (the message says what it was). */
int gdr_errno_public(int err);

/* --- probes and capability caches (probe.c) ----------------------------- */
/*
 * Every cache is published once with an atomic pointer store and never
 * changes afterwards; concurrent first calls may each probe, and the first
 * to publish wins. No lock is held across a call into CUDA, verbs or the
 * dynamic loader, and none is taken by an atfork handler: there is none.
 */
enum gdr_tristate {
	GDR_NO = 0,
	GDR_YES = 1,
	GDR_UNKNOWN = 2,
};

/* What the process sees without the CUDA driver: probed once. */
/* GPUDIRECT_PCIE_MAPPING: when a dma-buf is exported with the PCIe
 * mapping. */
enum gdr_pcie_policy {
	GDR_PCIE_AUTO = 0, /* Data Direct; DMA-BUF for C2C GPUs, NIC on PCIe */
	GDR_PCIE_ON = 1,   /* every DMA-BUF export */
	GDR_PCIE_OFF = 2,  /* never (no Data Direct either) */
};

struct gdr_node {
	char kernel_release[128];
	/* /proc/driver/nvidia/version */
	enum gdr_nv_flavour nv_flavour;
	char nv_version[64];
	int nv_err; /* errno of a failed read, GDR_NV_UNREADABLE */
	/* nvidia-peermem: the sysfs path that showed it, "" if none */
	char peermem_path[96];
	char peermem_version[64];
	/* GPUDirect Storage */
	bool nvidia_fs;
	bool nvidia_fs_proc; /* /proc/driver/nvidia-fs exists */
	char nvidia_fs_version[64];
	/* verbs */
	bool verbs_dmabuf; /* ibv_reg_dmabuf_mr present */
	/* environment */
	bool debug;
	uint32_t env_mask;   /* GPUDIRECT_PATH; 0: no override */
	char env_error[160]; /* a bad GPUDIRECT_*, in words */
	bool oom;	     /* not probed: out of memory (env_error says so) */
	bool strict_ordering;		  /* GPUDIRECT_RELAXED_ORDERING=0 */
	enum gdr_pcie_policy pcie_policy; /* GPUDIRECT_PCIE_MAPPING */
	long page_size;
};

/* The node, probed once per process. Never NULL. */
const struct gdr_node *gdr_node_get(void);
/* Where nvidia-peermem shows below /sys; NULL-terminated. */
extern const char *const gdr_peermem_paths[];

struct gdr_dev {
	int ordinal;
	CUdevice dev;
	char name[128];
	char busid[32];
	int dmabuf_attr;  /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
	int gdr_attr;	  /* ..._GPU_DIRECT_RDMA_SUPPORTED */
	int gdr_vmm_attr; /* ..._GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED */
	char why[160];	  /* why cuDeviceGet failed, "" if it did not */
	/* attached to the CPU by C2C (asked where the driver has the PCIe
	 * mapping, 12.8+; GDR_UNKNOWN otherwise, with the reason) */
	enum gdr_tristate c2c;
	char c2c_why[128];
};

/*
 * Whether a GPU exports dma-bufs with the PCIe mapping, learnt from the
 * first flagged export (or the report's probe) and remembered per device,
 * so that a GPU that cannot is never asked again.
 */
enum gdr_pcie_map {
	GDR_PCIE_MAP_UNTRIED = 0,
	GDR_PCIE_MAP_OK = 1,
	GDR_PCIE_MAP_UNSUPPORTED = 2, /* answered CUDA_ERROR_NOT_SUPPORTED */
};
enum gdr_pcie_map gdr_pcie_map_get(int ordinal);
void gdr_pcie_map_set(int ordinal, enum gdr_pcie_map state);
/* Find out for GPU @ordinal now, with an allocation of its own (the report;
 * CUDA started). Nothing when known, off, or the driver lacks it. */
void gdr_pcie_map_probe(int ordinal);

enum gdr_cuda_state {
	GDR_CUDA_ABSENT = 0, /* libcuda.so.1 not loaded (or not loadable) */
	GDR_CUDA_FAILED = 1, /* loaded, but not usable: see why */
	GDR_CUDA_READY = 2,  /* version and devices known */
};

/* The CUDA driver as the library sees it. */
struct gdr_cuda {
	enum gdr_cuda_state state;
	char why[256];
	struct gdr_cuda_ops cu;
	int driver_version;
	int num_devices;
};

/* The loaded driver: its table and version (cuDriverGetVersion needs no
 * cuInit). */
struct gdr_cuda_lib {
	struct gdr_cuda_ops cu;
	int driver_version;
};

/*
 * The CUDA driver if libcuda.so.1 is loaded in the process, else NULL. It
 * never loads the library and never calls cuInit: the registration path.
 */
const struct gdr_cuda_lib *gdr_cuda_table(void);
/*
 * The driver's version and devices. With @init (the report and the
 * doctor, where the caller asked for it) libcuda.so.1 is loaded and
 * cuInit called; without it, only what an application that initialised
 * CUDA has made available is used. Never NULL. A usable answer is cached;
 * a failure is not, so a later call may succeed.
 */
const struct gdr_cuda *gdr_cuda_get(bool init);
/* CUDA device @ordinal, its attributes read once. NULL if out of range or
 * CUDA is not ready. */
const struct gdr_dev *gdr_dev_get(int ordinal);

/* Identity of an RDMA device: what stays the same while it exists. */
struct gdr_nic_key {
	char name[IBV_SYSFS_NAME_MAX];
	int index; /* the kernel's device index, -1 when unknown */
};

/* What an RDMA device answered to ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0). */
struct gdr_nic {
	struct gdr_nic_key key;
	enum gdr_tristate dmabuf;
	int err; /* the errno it answered, 0 if an MR came back */
	bool mr; /* the probe got an MR (and released it) */
	/* Data Direct: GDR_YES with the function's sysfs path; GDR_NO when
	 * the device answered ENODEV or is not mlx5; GDR_UNKNOWN with
	 * dd_err when the mlx5 direct verbs are missing or failed. */
	enum gdr_tristate data_direct;
	bool mlx5;
	bool pci; /* the device has a PCI parent in sysfs */
	int dd_err;
	char dd_path[128];
};

/* The mlx5 direct verbs, loaded once (only where device memory is
 * registered or the report asks). */
struct gdr_mlx5 {
	bool present;
	char why[160];
	struct gdr_mlx5_ops ops;
};
const struct gdr_mlx5 *gdr_mlx5_get(void);

#define GDR_NIC_CACHE_MAX 64
/* The DMA-BUF answer of @pd's device, asked once per device identity (at
 * most GDR_NIC_CACHE_MAX cached). Copied to @out. */
void gdr_nic_get(struct ibv_pd *pd, struct gdr_nic *out);
/* The identity of @ctx's device. */
void gdr_nic_key(struct ibv_context *ctx, struct gdr_nic_key *key);
/* Forget every cached probe (gdr_seam_install). */
void gdr_probe_reset(void);

/* --- pointer classification (classify.c) -------------------------------- */
/* Why a pointer was classified as host memory. */
enum gdr_host_why {
	GDR_HOST_NOT_CUDA = 0,	      /* CUDA does not know the pointer */
	GDR_HOST_NO_CUDA = 1,	      /* libcuda.so.1 is not loaded */
	GDR_HOST_NOT_INITIALIZED = 2, /* CUDA is not initialised here */
	GDR_HOST_CUDA_HOST = 3,	      /* page-locked host memory of CUDA */
};

struct gdr_ptr_info {
	enum gdr_mem_type type;
	enum gdr_host_why host_why;
	int device;	       /* CUDA ordinal, -1 for host */
	CUcontext ctx;	       /* owning context, NULL for VMM and pools */
	uintptr_t range_start; /* the allocation holding ptr, 0 if unknown */
	size_t range_size;
	unsigned long long buffer_id;
};
/* Classify [ptr, ptr+len). 0, or an errno with the reason in @why
 * (managed or array memory, range past the allocation, no RDMA flag). */
int gdr_classify(void *ptr, size_t len, struct gdr_ptr_info *pi, char *why,
		 size_t n);

/* --- conditions (checks.c) ---------------------------------------------- */
enum gdr_scope {
	GDR_SCOPE_NODE,
	GDR_SCOPE_GPU,
	GDR_SCOPE_NIC,
	GDR_SCOPE_PAIR, /* a GPU x NIC pair */
};

/* What a condition means for a path that needs it. */
enum gdr_pass {
	GDR_PASS = 0,
	GDR_FAIL = 1,	   /* the path cannot work */
	GDR_UNDECIDED = 2, /* not known here: let a real registration decide */
};

/* What a condition is evaluated against; NULL members are absent. */
struct gdr_subject {
	const struct gdr_node *node;
	const struct gdr_cuda *cuda;
	const struct gdr_dev *dev;
	const struct gdr_nic *nic;
	const char *nic_name;
	const char *nic_bdf;		  /* "" when not on PCI */
	const struct ibv_port_attr *port; /* port 1, NULL if the query failed */
	unsigned int num_nics;
	/* set by the report before the node items: some pair registers
	 * through DMA-BUF, so nvidia-peermem is not needed */
	bool dmabuf_usable;
};

struct gdr_eval {
	enum gdr_verdict verdict;
	enum gdr_pass pass;
	char value[GDR_VALUE_LEN];
	/* Where the remedy depends on the observation (else NULL). */
	const char *remedy;
	bool skip;  /* nothing to report here (e.g. no PCI parent) */
	bool quiet; /* the verdict only: value stays "" (the hot path) */
};

/*
 * One prerequisite or fact: evaluated into a value, a verdict and what it
 * means for a path; the remedy is written here and nowhere else.
 */
struct gdr_check {
	const char *key; /* the report's key; "%d" takes the GPU ordinal */
	enum gdr_scope scope;
	void (*eval)(const struct gdr_subject *s, struct gdr_eval *e);
	/* The problem in words, for a registration's reason. */
	void (*describe)(const struct gdr_subject *s, const struct gdr_eval *e,
			 char *buf, size_t n);
	const char *remedy;
};

/* The report's items, in order, per scope; NULL-terminated. */
extern const struct gdr_check *const gdr_node_checks[];
extern const struct gdr_check *const gdr_gpu_checks[];
extern const struct gdr_check *const gdr_nic_checks[];
extern const struct gdr_check *const gdr_pair_checks[];

/* Every condition a backend lists. */
extern const struct gdr_check gdr_check_kernel, gdr_check_nvidia_driver,
	gdr_check_cuda_api, gdr_check_peermem, gdr_check_verbs_dmabuf,
	gdr_check_gpu_dmabuf, gdr_check_nic_dmabuf, gdr_check_mlx5dv,
	gdr_check_cuda_pcie, gdr_check_nic_data_direct, gdr_check_gpu_pcie;

/* The driver exports PCIe-mapped dma-bufs (its API is new enough). */
bool gdr_cuda_has_pcie_mapping(const struct gdr_cuda *c);

/* Evaluate @c for @s: verdict ok and pass unless the check says else;
 * @quiet skips writing the value. */
void gdr_check_eval(const struct gdr_check *c, const struct gdr_subject *s,
		    struct gdr_eval *e, bool quiet);
/* The remedy of an evaluated check: "" when ok, else the observation's
 * own or the check's. */
const char *gdr_check_remedy(const struct gdr_check *c,
			     const struct gdr_eval *e);
/*
 * Walk @needs (NULL-terminated) and stop at the first that fails. 0 when
 * none does, else EOPNOTSUPP with "problem; remedy" in @why (unless @why
 * is NULL: then nothing is formatted).
 */
int gdr_checks_first_failure(const struct gdr_check *const *needs,
			     const struct gdr_subject *s, char *why, size_t n);

/* --- backends (backend-*.c) --------------------------------------------- */
/* One registration request, as the dispatcher hands it to a backend. */
struct gdr_req {
	struct ibv_pd *pd;
	void *ptr;
	size_t len;
	int access;
	uint32_t flags; /* GDR_REG_* */
	const struct gdr_node *node;
	const struct gdr_cuda_ops *cu; /* NULL for host memory */
	struct gdr_ptr_info pi;
	bool nic_pci; /* the RDMA device has a PCI parent */
};

struct gdr_backend {
	enum gdr_path path;
	const char *name;  /* as gdr_path_str() names it */
	const char *title; /* in the report: "DMA-BUF", "nvidia-peermem" */
	/* true: registers CUDA device memory; false: host memory */
	bool device_memory;
	/* The conditions it needs, NULL-terminated; its eligibility is the
	 * first that fails. */
	const struct gdr_check *const *needs;
	/* Where this condition fails the path does not apply to the pair at
	 * all (no Data Direct function): the report does not name it as
	 * unavailable. NULL: it always applies. */
	const struct gdr_check *applies;
	/* The MR, or NULL with errno set and the reason in @why. */
	struct ibv_mr *(*reg)(const struct gdr_req *req, char *why, size_t n);
};

extern const struct gdr_backend gdr_backend_data_direct;
extern const struct gdr_backend gdr_backend_dmabuf;
extern const struct gdr_backend gdr_backend_peermem;
extern const struct gdr_backend gdr_backend_host;

/* Does path @b concern @s's pair at all (its `applies` condition)? */
bool gdr_backend_applies(const struct gdr_backend *b,
			 const struct gdr_subject *s);

/* Every backend, in order of preference; NULL-terminated. */
extern const struct gdr_backend *const gdr_backends[];

/* The host and peermem backends: ibv_reg_mr_iova2(ptr, iova = ptr) with
 * the failure explained; @efault names the likely cause of EFAULT. */
struct ibv_mr *gdr_reg_va(const struct gdr_req *req, const char *efault,
			  char *why, size_t n);

/* --- dmabuf arithmetic and export (backend-dmabuf.c) -------------------- */
struct gdr_dmabuf_range {
	uintptr_t base;	 /* first byte exported, page aligned */
	size_t size;	 /* bytes exported, page multiple */
	uint64_t offset; /* ptr - base */
};
/* 0, or EINVAL when ptr + len overflows after alignment. */
int gdr_dmabuf_range(uintptr_t ptr, size_t len, long page,
		     struct gdr_dmabuf_range *r);
/* CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE */
#define GDR_CU_RANGE_FLAG_PCIE 0x1ULL
/*
 * Export the page-aligned span around req's buffer as a dma-buf (with the
 * PCIe mapping if @pcie) under the right context. 0 with *@fd and *@r, or
 * an errno with the reason in @why; *@res is the driver's answer.
 */
int gdr_dmabuf_export(const struct gdr_req *req, bool pcie,
		      struct gdr_dmabuf_range *r, int *fd, CUresult *res,
		      char *why, size_t n);
/* After a registration call named @call on @fd (errno set by it when @mr
 * is NULL): close @fd, fix mr->addr, or explain the failure. */
struct ibv_mr *gdr_dmabuf_finish(const struct gdr_req *req,
				 const struct gdr_dmabuf_range *r, int fd,
				 struct ibv_mr *mr, const char *call,
				 const char *extra, char *why, size_t n);

/* --- the node report (report.c, report-print.c) -------------------------- */
struct gdr_report_entry {
	char *section, *key, *value, *remedy;
	enum gdr_verdict verdict;
};

struct gdr_report {
	struct gdr_report_entry *items;
	unsigned int num, cap;
	int usable;
	bool oom;
};

void gdr_report_print_text(const struct gdr_report *r, FILE *out);
void gdr_report_print_json(const struct gdr_report *r, FILE *out);
const char *gdr_verdict_str(enum gdr_verdict v);

/* --- reserved address space (vmem.c) ------------------------------------ */
/* Reserve @size bytes of address space (no memory yet). NULL with errno. */
void *gdr_vmem_reserve(size_t size);
/* Make [@old, @size) of it usable, zeroed: 0 or an errno. */
int gdr_vmem_commit(void *p, size_t old, size_t size);
/* Give it all back; @used: what was committed. */
void gdr_vmem_free(void *p, size_t reserved, size_t used);
/* Bytes committed now (for the memory benchmark). */
size_t gdr_vmem_committed(void);

/* --- range index (ranges.c) ---------------------------------------------- */
#define RANGES_BLOCK 32 /* ranges per block */
struct gdr_range {
	uintptr_t start, end; /* [start, end) */
	void *item;
};
struct gdr_ranges_block;
struct gdr_ranges_dir;
struct gdr_ranges_chunk;
/*
 * Zero-initialised. One writer at a time (insert, remove, clear and the
 * plain queries, under the caller's lock); readers without a lock use the
 * _read calls, which answer EAGAIN when a writer changed the index
 * meanwhile (then retry, or take the lock).
 */
struct gdr_ranges {
	unsigned long seq; /* odd while the writer changes the index */
	struct gdr_ranges_dir *dir;
	size_t count;
	size_t max_len; /* the longest range held since the index was empty */
	struct gdr_ranges_block *spare;	 /* free blocks, kept for reuse */
	struct gdr_ranges_chunk *chunks; /* where the blocks live */
	size_t num_chunk_blocks;
};
/* Add [start, end) -> @item. 0, or ENOMEM with the index unchanged. */
int gdr_ranges_insert(struct gdr_ranges *x, uintptr_t start, uintptr_t end,
		      void *item);
/* Remove the range of @item that starts at @start. 0 or ENOENT. */
int gdr_ranges_remove(struct gdr_ranges *x, uintptr_t start, void *item);
/* An item whose range has start <= a and end >= b (the one starting
 * nearest before @a first), or NULL. */
void *gdr_ranges_cover(const struct gdr_ranges *x, uintptr_t a, uintptr_t b);
/* gdr_ranges_cover() without the lock: 0 with *@item (NULL: none), or
 * EAGAIN. */
int gdr_ranges_cover_read(const struct gdr_ranges *x, uintptr_t a, uintptr_t b,
			  void **item);
/* Without the lock: up to @max items whose range is exactly [start, end)
 * into @out, their number in *@n. 0 or EAGAIN. */
int gdr_ranges_exact_read(const struct gdr_ranges *x, uintptr_t start,
			  uintptr_t end, void **out, unsigned int max,
			  unsigned int *n);
/* Up to @max items overlapping [a, b) into @out, in start order; how many. */
unsigned int gdr_ranges_overlaps(const struct gdr_ranges *x, uintptr_t a,
				 uintptr_t b, void **out, unsigned int max);
/* How many blocks hold the ranges (for tests). */
size_t gdr_ranges_num_blocks(const struct gdr_ranges *x);
/* Free everything (no reader may be inside); the index is empty again. */
void gdr_ranges_clear(struct gdr_ranges *x);

/* --- registration for the cache (gpudirect.c) ----------------------------- */
/* gdr_register_ex() without touching gdr_last_error(): 0 and the MR in
 * *@mr, or an errno with the message in @why. @pi: the buffer's
 * classification when the caller has it (NULL: classified here). */
int gdr_register_internal(struct ibv_pd *pd, void *ptr, size_t len,
			  const struct gdr_reg_attr *attr,
			  const struct gdr_ptr_info *pi, struct ibv_mr **mr,
			  char *why, size_t n);

/* --- the modelled node (model.c) ----------------------------------------- */
struct gdr_model;
/*
 * CUDA and verbs tables that answer from @m (gpudirect-private.h): the
 * node-level calls of snapshot replay and of the unit tests' fakes. The
 * registration-level calls answer "not supported"; the fakes replace them.
 */
void gdr_model_cuda_ops(struct gdr_cuda_ops *ops);
void gdr_model_verbs_ops(struct gdr_verbs_ops *ops);
int gdr_model_cuda_load(struct gdr_cuda_ops *ops, unsigned int flags, char *why,
			size_t n);
int gdr_model_mlx5_load(struct gdr_mlx5_ops *ops, char *why, size_t n);
int gdr_model_gpu_c2c(const char *busid, bool *c2c, char *why, size_t n);
/* Make @m the model those tables answer from (it must outlive them). */
void gdr_model_use(const struct gdr_model *m);

#endif /* GPUDIRECT_INTERNAL_H */
