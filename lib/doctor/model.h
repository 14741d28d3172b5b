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

#endif /* GDR_DOCTOR_MODEL_H */
