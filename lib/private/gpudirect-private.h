/* SPDX-License-Identifier: MIT */
/*
 * libgpudirect's private interface, for the programs built from this tree
 * (gdr-info) and its tests. It is not installed and has no stability
 * promise: the symbols are exported under the version node
 * GPUDIRECT_PRIVATE_<major>.<minor> of this release only, so a program
 * built against another release's private interface fails to load instead
 * of misbehaving (rdma-core's IBVERBS_PRIVATE_* scheme).
 */
#ifndef GPUDIRECT_PRIVATE_H
#define GPUDIRECT_PRIVATE_H

#include <sys/types.h>

#include <gpudirect.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GDR_MODEL_MAX_GPUS 16
#define GDR_MODEL_MAX_NICS 32

/* What the CUDA driver says of one GPU. */
struct gdr_model_gpu {
	char name[128];
	char pci_bus_id[32];
	int dmabuf_supported; /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
	int gpudirect_rdma_supported; /* ..._GPU_DIRECT_RDMA_SUPPORTED */
	int gpudirect_rdma_with_vmm;  /* ..._WITH_CUDA_VMM_SUPPORTED */
	int c2c;	   /* NVLink-C2C to the CPU: 1, 0, -1 unknown */
	char c2c_why[128]; /* why unknown */
	/* the CUresult of a PCIe-mapped export, -1 when not tried */
	int pcie_mapping;
	/* NVML's BAR1 answer: 0 and the bytes, or the errno and why */
	int bar1_errno;
	char bar1_why[128];
	unsigned long long bar1_total, bar1_used;
	unsigned long long total_mem; /* cuDeviceTotalMem; 0 unknown */
};

/* What verbs say of one RDMA device. */
struct gdr_model_nic {
	char name[64];
	int dmabuf_probe_errno; /* answer to ibv_reg_dmabuf_mr(pd,0,0,0,-1,0) */
	int port_state;		/* enum ibv_port_state of port 1 */
	int link_layer;		/* IBV_LINK_LAYER_* */
	int mlx5;		/* mlx5dv_is_supported */
	/* mlx5dv_get_data_direct_sysfs_path: 0 and the path, or an errno */
	int data_direct_errno;
	char data_direct_path[128];
	/* ibv_query_device's max_mr_size; 0: the query failed */
	unsigned long long max_mr_size;
	/* its netdev (port 1's) and that netdev's IP addresses, space-
	 * separated, or the errno of finding them */
	char netdev[64];
	int addrs_errno;
	char addrs[4096]; /* GDR_IF_ADDRS_LEN */
};

/*
 * A node as the library's probes see it, apart from the sysfs and procfs
 * files: the kernel release, and the answers of the CUDA driver and the
 * RDMA devices. gdr-info --capture writes one, --from replays it.
 */
struct gdr_model {
	char kernel_release[128];
	char cuda_error[256]; /* "" when the CUDA driver loads and starts */
	int driver_version;   /* cuDriverGetVersion */
	int num_gpus;
	struct gdr_model_gpu gpu[GDR_MODEL_MAX_GPUS];
	int libibverbs_dmabuf; /* ibv_reg_dmabuf_mr present */
	/* libmlx5: 0 absent, 1 mlx5dv_is_supported only (rdma-core before
	 * v54), 2 the Data Direct calls too */
	int mlx5dv;
	int num_nics;
	struct gdr_model_nic nic[GDR_MODEL_MAX_NICS];
	/* the capturing process's limits (~0ULL: unlimited), or the errno
	 * of reading them */
	int limits_errno;
	char limits_why[96];
	unsigned long long memlock_soft, memlock_hard;
	unsigned long long nofile_soft, nofile_hard;
	int cap_ipc_lock; /* 1, 0, -1 unknown */
	int user_ns;	  /* in a user namespace: 1, 0, -1 unknown */
	/* the cufile.json the capture read from $CUFILE_ENV_PATH_JSON, ""
	 * for /etc/cufile.json */
	char cufile_path[256];
	/* the loaded rdma-core libraries' files, "" unknown / not loaded */
	char libibverbs_file[64];
	char libmlx5_file[64];
	/* ibv_is_fork_initialized(): enum ibv_fork_status, -1 absent */
	int fork_status;
	/* the process has libnvidia-ml.so.1 loaded (what a registration's
	 * GDR_NVML_NOLOAD query finds; never captured: a report loads it) */
	int nvml_loaded;
};

/*
 * Fill @m with what this node answers for @ctxs (starting CUDA, as the
 * report does). 0 or an errno.
 */
int gdr_private_model_read(struct gdr_model *m, struct ibv_context *const *ctxs,
			   unsigned int num);

/*
 * Where a replay reads the node's files: an open(2) and a readlink(2) of
 * the node's own paths ("/sys/...", "/proc/..."), served from memory by
 * the caller (gdr-info's snapshot tree). open_file answers an fd the
 * library reads and closes, or -1 with errno: ENOENT, or
 * GDR_PRIVATE_ENOTREG for what is not a regular file.
 */
struct gdr_files {
	int (*open_file)(const char *path);
	ssize_t (*read_link)(const char *path, char *buf, size_t n);
};

/* The errno of a file that is not a regular file (a FIFO, a device). */
#define GDR_PRIVATE_ENOTREG 4097

/*
 * Answer from @m from now on, reading the node's files through @files.
 * @m and @files must outlive their use. The model's RDMA devices are
 * returned in @ctxs (@num entries, owned by the library until
 * gdr_private_replay_end()). 0 or an errno with the reason in @why.
 */
int gdr_private_replay(const struct gdr_model *m, const struct gdr_files *files,
		       struct ibv_context ***ctxs, unsigned int *num, char *why,
		       size_t n);
/* Back to the live node; frees what gdr_private_replay() returned. */
void gdr_private_replay_end(void);

/*
 * Read the host's sysfs and procfs below @dir (@dir/sys, @dir/proc; a
 * container that mounts the host's / at /host), CUDA and verbs live. @dir
 * may be relative or a link: the library keeps its real path. The report
 * still shows the host's own paths. 0 or an errno with @why.
 */
int gdr_private_host_root(const char *dir, char *why, size_t n);

/*
 * From now on remember every file and link the library reads (below the
 * roots in force). gdr_private_recorded() lists them, the real paths as
 * opened, in the order first read; the strings stay valid.
 */
int gdr_private_record(void);
unsigned int gdr_private_recorded(const char *const **paths);

/*
 * Open the node's file @path for reading as the library does: a regular
 * file or directory only, checked before it is opened, and resolved
 * inside the --host-root in force. An fd, or -1 with errno.
 */
int gdr_private_open(const char *path);
/*
 * lstat(2) and readlink(2) of the node's @path as the library resolves it:
 * inside the --host-root in force (a link on the way never leads out of
 * it), the last name not followed. 0 or an errno; the length or -1 with
 * errno.
 */
struct stat;
int gdr_private_lstat(const char *path, struct stat *st);
ssize_t gdr_private_readlink(const char *path, char *buf, size_t n);

/*
 * gdr_report_create() of @ctxs, with each GPU's nearest_rdma ranked among
 * @all (gdr-info -d: the report shows one device, the nearest are the
 * node's).
 */
struct gdr_report *gdr_private_report_create(struct ibv_context *const *ctxs,
					     unsigned int num_ctxs,
					     struct ibv_context *const *all,
					     unsigned int num_all);

/*
 * For libgpudirect-preload.so: register [@addr, +@len) if it is device
 * memory the library registers (cuMemAlloc, VMM, capable pool memory),
 * with exactly @access at @iova, through the library's walk. 0 and *@mr;
 * ENXIO with *@mr NULL and @why "" when it is not device memory (host,
 * managed, unknown to CUDA: the caller goes to libibverbs); else an errno
 * with the reason in @why (device memory no path took, or that the
 * library refuses: not RDMA capable, CUDA IPC, past its allocation).
 * Never loads CUDA; gdr_last_error() untouched.
 */
int gdr_private_reg_device(struct ibv_pd *pd, void *addr, size_t len,
			   uint64_t iova, int access, struct ibv_mr **mr,
			   char *why, size_t n);

/* For libgpudirect-preload.so: *@off when GPUDIRECT_PRELOAD=0, *@debug
 * when GPUDIRECT_DEBUG asks for every decision. */
void gdr_private_preload_env(int *off, int *debug);

#ifdef __cplusplus
}
#endif

#endif /* GPUDIRECT_PRIVATE_H */
