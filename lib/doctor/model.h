/* SPDX-License-Identifier: MIT */
/*
 * A node as the library's probes see it, as data: what gdr-info --capture
 * writes and --from replays (through the private interface), and what the
 * unit tests' fakes answer from. The doctor layer owns these types
 * (model.c serves them through the seam); the private interface
 * (gpudirect-private.h) includes them for the programs of this tree.
 */
#ifndef GDR_DOCTOR_MODEL_H
#define GDR_DOCTOR_MODEL_H

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

/* --- GPUDirect Storage (gdr-info --storage) ------------------------------ */
#define GDR_STORAGE_MAX_PATHS 8

/* What cuFile answered on this node: gathered live by the storage check,
 * kept by a snapshot. -1 is "not asked" (or, for the parameters,
 * "this libcufile does not say"). */
struct gdr_storage_cufile {
	int load_err;	   /* 0 loaded; ENOENT: not installed; -1 not tried */
	char why[256];	   /* why not loaded, or why not asked */
	char library[256]; /* the file loaded */
	char how[64];	   /* how it was found */
	int version;	   /* cuFileGetVersion: 1150 for 1.15; -1 */
	int open_err;	   /* cuFileDriverOpen's CUfileOpError; -1 */
	int open_cu_err;   /* its CUresult */
	int props_err;	   /* cuFileDriverGetProperties'; -1 */
	unsigned int nvfs_major, nvfs_minor; /* nvidia-fs as cuFile sees it */
	unsigned int dstatusflags;	     /* storage nvidia-fs reaches */
	unsigned int dcontrolflags, fflags;
	int allow_compat, force_compat, use_p2pdma; /* 1, 0, -1 */
	char stuck[64]; /* the call that did not return in time, "" none */
};

/* The measured read and write of one path: live only. */
struct gdr_storage_io {
	int state;     /* 0 not measured (why), 1 measured */
	char why[256]; /* why not measured, or what stopped it */
	int gpu;       /* the CUDA ordinal read into */
	int readonly;  /* a named file, read and never written */
	int odirect;   /* the file was opened with O_DIRECT */
	unsigned long long bytes;
	int reg_err;		     /* cuFileHandleRegister; -1 not tried */
	long long write_ret;	     /* bytes, -errno or -CUfileOpError */
	long long read_ret;	     /* (0: not done) */
	int write_errno, read_errno; /* with a -1 return */
	unsigned long long write_ns, read_ns;
	long long pread_ret; /* pread(2) of the same bytes into host memory */
	int pread_errno;
	unsigned long long pread_ns;
	int checked;		   /* the bytes were compared */
	unsigned long long differ; /* bytes the cuFile read got wrong */
	long long first_differ;	   /* -1 none */
	int stats;		   /* 1: cuFile's statistics read */
	char stats_why[160];	   /* why not */
	unsigned long long nvfs_reads, p2p_reads, posix_reads;
	unsigned long long nvfs_writes, p2p_writes, posix_writes;
};

enum gdr_storage_kind {
	GDR_STORAGE_KIND_UNKNOWN = 0,
	GDR_STORAGE_KIND_FILE = 1,
	GDR_STORAGE_KIND_DIR = 2,
	GDR_STORAGE_KIND_FIFO = 3,
	GDR_STORAGE_KIND_CHAR = 4,
	GDR_STORAGE_KIND_BLOCK = 5,
	GDR_STORAGE_KIND_SOCKET = 6,
};

/* One --storage PATH. */
struct gdr_storage_path {
	char path[1024]; /* as given */
	int err;	 /* of looking at it: 0, or an errno */
	int kind;	 /* enum gdr_storage_kind */
	char real[1024]; /* its path with every link resolved */
	unsigned int dev_major, dev_minor;
	long long mnt_id; /* the mount's id (statx, fdinfo), -1 unknown */
	unsigned long long size;
	/* the route to the storage server: the address asked for ("" none),
	 * the errno (-1 not asked), the device and local address */
	char server[64];
	int route_err;
	char route_dev[64], route_src[64];
	struct gdr_storage_io io;
};

struct gdr_storage {
	int num_paths;
	int replayed; /* from a snapshot: nothing was measured here */
	struct gdr_storage_cufile cufile;
	struct gdr_storage_path path[GDR_STORAGE_MAX_PATHS];
};

#endif /* GDR_DOCTOR_MODEL_H */
