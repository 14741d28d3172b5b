/* SPDX-License-Identifier: MIT */
/*
 * The outside world (lib/os/): the CUDA driver, libibverbs, NVML and
 * files, each reached only through the seam, which tests and snapshot
 * replay replace. Calls down to lib/base/ only.
 */
#ifndef GDR_OS_H
#define GDR_OS_H

#include "base.h"
#include "cufile-abi.h"

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
	  (CUdeviceptr * base, size_t * size, CUdeviceptr ptr))                \
	X(cuDeviceTotalMem, cuDeviceTotalMem_v2, 3020, 0,                      \
	  (size_t * bytes, CUdevice dev))                                      \
	X(cuDeviceGetUuid, cuDeviceGetUuid_v2, 11040, 0,                       \
	  (CUuuid * uuid, CUdevice dev))                                       \
	X(cuMemcpyHtoD, cuMemcpyHtoD_v2, 3020, 0,                              \
	  (CUdeviceptr dst, const void *src, size_t n))                        \
	X(cuMemcpyDtoH, cuMemcpyDtoH_v2, 3020, 0,                              \
	  (void *dst, CUdeviceptr src, size_t n))

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

/* CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE, as an export flag */
#define GDR_CU_RANGE_FLAG_PCIE 0x1ULL

/* --- cuFile (cufile-loader.c) ------------------------------------------- */
struct gdr_cufile_ops {
#define GDR_CUFILE_MEMBER(name, req, ret, params) ret(*name) params;
	GDR_CUFILE_FUNCS(GDR_CUFILE_MEMBER)
#undef GDR_CUFILE_MEMBER
};
/* libcufile as loaded: its table, the file and how it was found. */
struct gdr_cufile_lib {
	struct gdr_cufile_ops ops;
	char file[PATH_MAX];
	char how[64];
};
/* Resolve @lib's entry points (NULL where optional and absent): 0, or
 * ENOSYS with the missing one in @why. */
int gdr_cufile_resolve(void *lib, gdr_sym_fn sym, struct gdr_cufile_ops *ops,
		       char *why, size_t n);
/* Load libcufile: the file @path ($GPUDIRECT_CUFILE_LIB) where not NULL,
 * else libcufile.so.0 by the loader's search, then in the CUDA tree; and
 * resolve it: 0, ENOENT ("cuFile is not installed") or ENOSYS, the reason
 * in @why. The seam's cufile_load in production. */
int gdr_cufile_load(struct gdr_cufile_lib *lib, const char *path, char *why,
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
	int (*query_device)(struct ibv_context *ctx,
			    struct ibv_device_attr *attr);
	/* enum ibv_fork_status; NULL before rdma-core 35. */
	int (*is_fork_initialized)(void);
};

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

/* A GPU's BAR1 aperture, the window through which a NIC reaches device
 * memory, in bytes (nvmlBAR1Memory_t). */
struct gdr_bar1 {
	unsigned long long total;
	unsigned long long used;
};
/* gdr_nvml_bar1() flags */
enum {
	/* Ask only if the process has loaded libnvidia-ml.so.1 already. */
	GDR_NVML_NOLOAD = 1u << 0,
};
/* The seam's gpu_bar1 from libnvidia-ml.so.1. */
int gdr_nvml_bar1(const char *busid, unsigned int flags, struct gdr_bar1 *b,
		  char *why, size_t n);

/* --- the process's limits (process.c) ------------------------------------ */
#define GDR_LIMIT_INFINITY (~0ULL) /* RLIM_INFINITY */
struct gdr_limits {
	unsigned long long memlock_soft, memlock_hard; /* bytes */
	unsigned long long nofile_soft, nofile_hard;
	int cap_ipc_lock; /* in the effective set: 1, 0, -1 unknown */
	/* In a user namespace other than the initial one (a rootless
	 * container, a pod with hostUsers: false), where the kernel ignores
	 * CAP_IPC_LOCK for pinning: 1, 0, -1 unknown. */
	int user_ns;
};
/* The seam's limits: the calling process's. 0, or an errno and why. */
int gdr_process_limits(struct gdr_limits *l, char *why, size_t n);

/* --- network addresses (netdev.c) ---------------------------------------- */
/* The IP addresses of network device @dev, space-separated into @out
 * ("" when it has none): 0; ENOBUFS when not all fit (the whole leading
 * ones written); ENODEV when this network namespace has no such
 * interface; EXDEV under --host-root (this namespace is not the host's);
 * or an errno. GDR_IF_ADDRS_LEN holds 90 IPv6 addresses. */
#define GDR_IF_ADDRS_LEN 4096
int gdr_if_addrs(const char *dev, char *out, size_t n);

/* This process is in the network namespace of the host's init (under
 * --host-root, whether its own interfaces and routes are the host's). */
bool gdr_host_network(void);
/* The network device the kernel routes @addr (IPv4 or IPv6) through, and
 * the local address it would send from ("" when it names none): 0, or
 * EINVAL (not an address), EXDEV (under --host-root in another network
 * namespace), EHOSTUNREACH, ENETUNREACH or the netlink errno. route.c */
int gdr_route_get(const char *addr, char *dev, size_t n, char *src, size_t sn);

/* The files of the loaded libibverbs and libmlx5 ("libibverbs.so.1.14.44.0":
 * rdma-core 44), "" when unknown or not loaded; 0, or ENOENT. */
int gdr_verbs_files(char *ibv, size_t n1, char *mlx5, size_t n2);

/* The real libibverbs, with the newer entry points resolved at run time. */
void gdr_verbs_real(struct gdr_verbs_ops *ops);

/* --- sharing memory with another process (share.c) --------------------- */
/* What the kernel says of a dma-buf fd. */
struct gdr_dmabuf_facts {
	uint64_t size; /* its bytes */
	uint64_t ino;  /* its inode: the same in every process holding it */
};
/*
 * The seam's dmabuf_facts in production (dmabuf.c): 0 with *@f,
 * GDR_ENOTDMABUF when @fd is open but not a dma-buf, EBADF when it is not
 * open, or the errno of a failed look (the reason in @why). After the
 * first dma-buf, one fstat(2) a call.
 */
int gdr_dmabuf_facts_real(int fd, struct gdr_dmabuf_facts *f, char *why,
			  size_t n);
/* "xxxxxxxx-xxxx-..." (dashes anywhere, 32 hex digits) into 16 bytes: 0 or
 * EINVAL. */
int gdr_parse_uuid(const char *text, uint8_t out[16]);
/* The node's boot id (procfs sys/kernel/random/boot_id), read once until
 * gdr_boot_id_forget() (a new seam): 0, or an errno with the reason in
 * @why. */
int gdr_boot_id(uint8_t id[16], char *why, size_t n);
void gdr_boot_id_forget(void);
/* getpid(), asked of the kernel once per process (and again in a child). */
pid_t gdr_self_pid(void);
/* The most fds one message carries (GDR_EXPORT_MAX_FDS). */
#define GDR_FDS_MAX 2
/* One sendmsg of @buf with @nfds fds (SCM_RIGHTS), EINTR retried: 0, the
 * errno, or EMSGSIZE when only part of @buf went. */
int gdr_fds_send(int sock, const void *buf, size_t len, const int *fds,
		 unsigned int nfds);
/* What gdr_fds_recv() received. */
struct gdr_fds_msg {
	size_t got;	   /* bytes */
	unsigned int nfds; /* fds kept in @fds */
	bool stream;	   /* a SOCK_STREAM socket */
	bool data_cut;	   /* the message was longer than the buffer */
	bool extra_fds;	   /* more fds than @max came: the rest were closed */
	bool fds_cut;	   /* MSG_CTRUNC: fds the kernel could not hand over
			     * (this process's fd table is full) */
};
/*
 * Receive one message with its fds (close-on-exec) into @buf: a message of
 * a SOCK_SEQPACKET or SOCK_DGRAM socket, up to @len bytes (a longer one is
 * cut, *@m says so); of a SOCK_STREAM socket, @len - 1 bytes, read in as
 * many pieces as they come, never past them (the end of the stream before
 * that: fewer). The first @max fds in @fds, any more closed. 0, or the
 * errno with no fd kept.
 */
int gdr_fds_recv(int sock, void *buf, size_t len, int *fds, unsigned int max,
		 struct gdr_fds_msg *m);

/* --- a --storage path (storage-path.c) ----------------------------- */
/* What a path is, as this process sees it (never under --host-root). */
struct gdr_path_facts {
	int fd;		   /* the O_PATH descriptor (the caller closes it) */
	unsigned int mode; /* st_mode */
	unsigned long long size;
	unsigned int dev_major, dev_minor;
	long long mnt_id; /* -1 unknown (kernels before 3.15) */
	char real[1024];  /* every link resolved */
};
/* Look at @path without opening it: 0 with *@f (and f->fd), or an errno. */
int gdr_path_look(const char *path, struct gdr_path_facts *f);
/* Open what gdr_path_look() saw, only if a regular file (with @flags:
 * O_RDONLY, O_RDWR, O_DIRECT) or a directory: the fd, or -1 with errno
 * (GDR_ENOTREG for anything else, never opened). */
int gdr_path_reopen(const struct gdr_path_facts *f, int flags);

/* --- the seam (seam.c) -------------------------------------------------- */
/*
 * Everything outside the process that the library reads or calls. The
 * production values come from the running system; tests and snapshot
 * replay install fixture trees and modelled tables with gdr_seam_install() (node.h).
 */
struct gdr_seam {
	char sysfs_root[PATH_MAX];  /* "/sys" */
	char procfs_root[PATH_MAX]; /* "/proc" */
	char etc_root[PATH_MAX];    /* "/etc" */
	/* The cufile.json to read; "": $CUFILE_ENV_PATH_JSON, else
	 * /etc/cufile.json (a replay names the capture's). */
	char cufile_path[PATH_MAX];
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
	/*
	 * The BAR1 total and use of the GPU at PCI @busid, from NVML: 0 with
	 * *@b set, or an errno with the reason in @why; ENOENT when NVML
	 * cannot be loaded or, with GDR_NVML_NOLOAD, is not loaded.
	 */
	int (*gpu_bar1)(const char *busid, unsigned int flags,
			struct gdr_bar1 *b, char *why, size_t n);
	/* The process's locked-memory and open-files limits
	 * (gdr_process_limits' contract). */
	int (*limits)(struct gdr_limits *l, char *why, size_t n);
	/* The rdma-core libraries' files (gdr_verbs_files' contract). */
	int (*verbs_files)(char *ibv, size_t n1, char *mlx5, size_t n2);
	/* A netdev's IP addresses (gdr_if_addrs' contract). */
	int (*if_addrs)(const char *dev, char *out, size_t n);
	/* Loads cuFile (gdr_cufile_load's contract). */
	int (*cufile_load)(struct gdr_cufile_lib *lib, const char *path,
			   char *why, size_t n);
	/* Reads the environment; secure_getenv in production. */
	char *(*getenv)(const char *name);
	/* What dma-buf @fd is (gdr_dmabuf_facts_real's contract). */
	int (*dmabuf_facts)(int fd, struct gdr_dmabuf_facts *f, char *why,
			    size_t n);
	/* open(2) for reading, read(2) and readlink(2). */
	int (*open_file)(const char *path);
	ssize_t (*read_fd)(int fd, void *buf, size_t n);
	ssize_t (*read_link)(const char *path, char *buf, size_t n);
};

/* The seam in force. Filled from the real system on first use. */
const struct gdr_seam *gdr_seam(void);
/*
 * Replace the seam (NULL restores the real system). Only
 * gdr_seam_install() (node.h), which also forgets what was probed through
 * the old one, calls it.
 */
void gdr_seam_set(const struct gdr_seam *seam);
/* A seam filled with the real system's values, to edit. */
void gdr_seam_default(struct gdr_seam *seam);
/* The name of @ctx's RDMA device as the seam's verbs give it, or NULL;
 * of @pd's, for messages ("the RDMA device" when unknown). */
const char *gdr_dev_name(struct ibv_context *ctx);
const char *gdr_pd_name(struct ibv_pd *pd);

/* --- opening a node's file (open.c) ------------------------------------ */
/*
 * The seam's open_file in production: @path resolved to an O_PATH
 * descriptor first, and opened for reading (O_NONBLOCK) only if it is a
 * regular file or a directory: anything else is GDR_ENOTREG, never opened.
 * Under a root (gdr_open_root_set), resolved inside it. An fd or -1 with
 * errno.
 */
int gdr_open_node(const char *path);
/* The seam's read_link in production: readlink(2), inside the root. */
ssize_t gdr_readlink_node(const char *path, char *buf, size_t n);
/* lstat(2) of @path, inside the root (a link at the end is what is
 * described; links before it resolve inside the root). 0 or an errno. */
struct stat;
int gdr_lstat_node(const char *path, struct stat *st);
/*
 * From now on, resolve every path of gdr_open_node/gdr_readlink_node
 * inside @real (a directory's real path; NULL, "" or "/": none): links
 * absolute or climbing stay below it, a path not below it is EXDEV. Set
 * before any read. 0 or an errno.
 */
int gdr_open_root_set(const char *real);
/* The root in force, "" when none: a path from outside the node's tree
 * ($CUFILE_ENV_PATH_JSON) is read below it. */
const char *gdr_open_root(void);
/* stat(2) of the root's proc/@pid_ns ("1/ns/net"), its directory resolved
 * inside the root, the namespace link itself followed only where that
 * directory is on procfs. 0 or an errno (ENOENT without a root, EXDEV
 * where the root's proc is not procfs). */
struct stat;
int gdr_root_ns_stat(const char *pid_ns, struct stat *st);

/* --- files (sysfs.c) ------------------------------------------------ */
/* Read a file below @root into @buf (NUL-terminated, trailing newline and
 * spaces stripped). 0 or an errno; a read error is an error, never EOF. */
int gdr_read_file(const char *root, const char *path, char *buf, size_t n);
bool gdr_file_exists(const char *root, const char *path);
/* Read up to @n bytes of a file into @buf; @got is the count. 0 or errno. */
int gdr_read_bin(const char *root, const char *path, void *buf, size_t n,
		 size_t *got);
/* The target of a symbolic link below @root, NUL-terminated. 0 or errno. */
int gdr_read_link(const char *root, const char *path, char *buf, size_t n);

/* --- PCIe topology (topology.c) ---------------------------------------- */
/* The PCI address of RDMA device @name's parent device. 0 or errno. */
int gdr_nic_pci(const char *name, char *bdf, size_t n);
/* The network device under RDMA device @name's port 1 (RoCE). 0 or errno. */
int gdr_nic_netdev(const char *name, char *out, size_t n);
/* How two PCI devices connect, as nvidia-smi topo -m names it
 * (gdr_distance_name). */
enum gdr_distance gdr_pci_distance(const char *a, const char *b);
/* PCI function @bdf is in sysfs. */
bool gdr_pci_exists(const char *bdf);
/* The NUMA node and IOMMU group of a PCI device; -1 when unknown. */
int gdr_pci_numa(const char *bdf);
int gdr_pci_iommu_group(const char *bdf);
/* The type of @bdf's IOMMU group (/sys/kernel/iommu_groups/N/type:
 * "identity", "DMA", "DMA-FQ", "unmanaged", "blocked") into @out: 0,
 * ENOENT when the device has no IOMMU group, or the errno of reading the
 * type (ENOENT there too: kernels before 5.11 have no type; then @out
 * says which file). */
int gdr_pci_iommu_type(const char *bdf, char *out, size_t n, bool *no_group);
/* The PCIe ATS capability of @bdf, from its extended config space. */
enum gdr_ats {
	GDR_ATS_UNKNOWN = -1, /* the extended config space is unreadable */
	GDR_ATS_ABSENT = 0,   /* no ATS capability */
	GDR_ATS_DISABLED = 1, /* capable, not enabled */
	GDR_ATS_ENABLED = 2,  /* ATS control: Enable set */
};
enum gdr_ats gdr_pci_ats(const char *bdf);
/* Whether every bridge in @bridges ("BDF BDF ...", as
 * gdr_pci_acs_redirects writes) has ACS Direct Translated P2P enabled. */
bool gdr_pci_acs_direct_translated(const char *bridges);
/*
 * The bridges between @a and @b (their common ancestor included) whose
 * ACS control has P2P request or completion redirect enabled, written to
 * @out as "BDF BDF ..." ("" when none). Returns how many, or -1 when
 * none was found but some bridge's extended config space could not be
 * read (that needs root), or the paths are not in sysfs.
 */
int gdr_pci_acs_redirects(const char *a, const char *b, char *out, size_t n);

/* --- CUDA error names (cuda-loader.c) ------------------------------------ */
/* The name of a CUDA error, or its number. */
const char *gdr_cu_errname(const struct gdr_cuda_ops *cu, CUresult r, char *buf,
			   size_t n);

#endif /* GDR_OS_H */
