/* SPDX-License-Identifier: MIT */
/*
 * The node (lib/node/): what is probed once (driver, kernel, NICs, the
 * environment), how a pointer is classified, and the conditions that gate
 * the registration paths. Calls down to lib/os/ and lib/base/.
 */
#ifndef GDR_NODE_H
#define GDR_NODE_H

#include "os.h"

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
	/* kernel_release parsed: 0 and kver, or an errno (not a release) */
	int kver_err;
	struct gdr_kver kver;
	/* /proc/driver/nvidia/version */
	enum gdr_nv_flavour nv_flavour;
	char nv_version[64];
	int nv_err; /* errno of a failed read, GDR_NV_UNREADABLE */
	/* nvidia-peermem: the sysfs path that showed it, "" if none */
	char peermem_path[96];
	char peermem_version[64];
	/* it shows under /sys/kernel/mm/memory_peers: registered with the
	 * RDMA core's peer-memory API (MLNX_OFED/DOCA-OFED's ib_core) */
	bool peermem_registered;
	bool memory_peers; /* /sys/kernel/mm/memory_peers exists */

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
/* Where nvidia-peermem shows below /sys; NULL-terminated. The first ones
 * are below GDR_MEMORY_PEERS, where the RDMA core lists the peer-memory
 * clients registered with it; the others only say the module is loaded. */
extern const char *const gdr_peermem_paths[];
#define GDR_MEMORY_PEERS "/kernel/mm/memory_peers"

struct gdr_dev {
	int ordinal;
	CUdevice dev;
	char name[128];
	char busid[32];
	/* busid as a descriptor has it ("0000:65:00.0", lower case), or ""
	 * where it cannot hold it */
	char pci_id[16];
	int dmabuf_attr;  /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
	int gdr_attr;	  /* ..._GPU_DIRECT_RDMA_SUPPORTED */
	int gdr_vmm_attr; /* ..._GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED */
	char why[160];	  /* why cuDeviceGet failed, "" if it did not */
	/* attached to the CPU by C2C (asked where the driver has the PCIe
	 * mapping, 12.8+; GDR_UNKNOWN otherwise, with the reason) */
	enum gdr_tristate c2c;
	char c2c_why[128];
	/* cuDeviceGetUuid, when the driver answered */
	bool has_uuid;
	uint8_t uuid[16];
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
	/* ibv_query_device's max_mr_size; 0 when the query failed */
	unsigned long long max_mr_size;
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
/* The same answer without the copy: the cached entry (immutable until
 * gdr_probe_reset), or @spare filled where it is not cached. */
const struct gdr_nic *gdr_nic_find(struct ibv_pd *pd, struct gdr_nic *spare);
/* @a and @b answered alike (every field but the device's identity). */
bool gdr_nic_same_answers(const struct gdr_nic *a, const struct gdr_nic *b);
/* The identity of @ctx's device. */
void gdr_nic_key(struct ibv_context *ctx, struct gdr_nic_key *key);
/* Forget every cached probe (gdr_seam_install). */
void gdr_probe_reset(void);
/*
 * Replace the seam (NULL restores the real system) and forget every
 * cached probe. Not thread-safe against concurrent calls into the library.
 */
void gdr_seam_install(const struct gdr_seam *seam);

/* --- the RDMA devices nearest a GPU (rank.c) ------------------------------ */
/* The PCI address of the Data Direct function at sysfs @path: 0 when it
 * is in sysfs, else an errno. */
int gdr_data_direct_bdf(const char *path, char *bdf, size_t n);
/* gdr_rank_nics() without touching gdr_last_error(): 0, or an errno with
 * the reason in @why. */
int gdr_rank(const struct gdr_rank_attr *attr, struct ibv_context *const *ctxs,
	     unsigned int num, struct gdr_nic_rank *out, unsigned int *num_out,
	     size_t rank_size, char *why, size_t n);

/* The driver exports PCIe-mapped dma-bufs (its API is new enough). */
bool gdr_cuda_has_pcie_mapping(const struct gdr_cuda *c);

/* --- the environment (env.c) ------------------------------------------ */
/* Every GPUDIRECT_* name the library reads; NULL-terminated. */
extern const char *const gdr_env_names[];
/* The node's settings (debug, ordering, PCIe mapping, path) into @nd; a
 * bad value is described in nd->env_error. */
void gdr_env_probe(struct gdr_node *nd, const struct gdr_seam *s);
/* For libgpudirect-preload.so: GPUDIRECT_PRELOAD=0 (interpose nothing) and
 * GPUDIRECT_DEBUG (say every decision), read now. */
void gdr_env_preload(bool *off, bool *debug);
/* The cache's limits from GPUDIRECT_CACHE_MAX_ENTRIES and _BYTES:
 * decimal digits only, each into its out when set (else left as it is).
 * 0, or EINVAL with the reason in @why. */
int gdr_env_cache_limits(size_t *max_entries, size_t *max_bytes, char *why,
			 size_t n);
/* cuFile's own setting, which the report follows: the cufile.json it reads
 * ($CUFILE_ENV_PATH_JSON, when an absolute path), or NULL. */
const char *gdr_env_cufile_json(void);
/* GPUDIRECT_CUFILE_LIB: the libcufile file the storage check loads (the
 * nvidia-cufile wheel's), or NULL for the search. */
const char *gdr_env_cufile_lib(void);
/* The GPUDIRECT_* settings this process has, "NAME=value, ..." into @out
 * ("" when none; each value cut at 40 bytes). */
void gdr_env_list(char *out, size_t n);

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
/* @vouched: the caller says VMM memory not marked RDMA capable was made
 * so by its owner (GDR_REG_OWNER_RDMA_CAPABLE). */
int gdr_classify(void *ptr, size_t len, bool vouched, struct gdr_ptr_info *pi,
		 char *why, size_t n);

/* --- BAR1 (probe.c) ------------------------------------------------------ */
/* A GPU's BAR1 as read at one moment: err 0 and b, or an errno and why. */
struct gdr_bar1_view {
	int err;
	struct gdr_bar1 b;
	char why[128];
};
/* Read GPU @d's BAR1 now through the seam (GDR_NVML_* @flags); never
 * cached, as it changes with every registration. */
void gdr_bar1_read(const struct gdr_dev *d, unsigned int flags,
		   struct gdr_bar1_view *v);

/* --- what only the report reads of the host (probe.c) ------------------- */
/*
 * Facts of the node that decide no registration: read by the report, each
 * time it runs, never by gdr_register (whose first call reads only what
 * its paths need).
 */
struct gdr_host_facts {
	/* The network driver stack: MLNX_OFED/DOCA-OFED (its mlx_compat
	 * module loaded), else the kernel's inbox drivers */
	bool ofed;
	char ofed_version[64];
	/* The kernel command line's IOMMU words ("intel_iommu=on iommu=pt",
	 * "" none); cmdline_err: the errno of reading /proc/cmdline */
	char iommu_cmdline[160];
	int cmdline_err;
	/* /proc/driver/nvidia-fs/stats: its driver version, PeerDirect
	 * (1, 0, -1 not said) */
	char nvfs_stats_version[64];
	int nvfs_peerdirect;
};
void gdr_host_facts_read(const struct gdr_node *nd, struct gdr_host_facts *h);

/* --- the process's limits (probe.c) -------------------------------------- */
/* Its locked-memory and open-files limits as read at one moment. */
struct gdr_limits_view {
	int err;
	struct gdr_limits l;
	char why[96];
};
void gdr_limits_read(struct gdr_limits_view *v);

/* --- conditions (conditions.c) ------------------------------------------- */
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

/* GPUDirect Storage's cufile.json as the report reads it: err ENOENT when
 * there is none. Each address of its rdma_dev_addr_list with the RDMA
 * device whose netdev has it ("" none). */
struct gdr_cufile_view {
	int err;
	char path[PATH_MAX];
	struct gdr_cufile c;
	char owner[GDR_CUFILE_MAX_ADDRS][64];
	bool addrs_known; /* some RDMA device's addresses were read */
	int addrs_err;	  /* the last errno of reading them (EXDEV: the
			   * host's are not this network namespace's) */
	bool not_json;	  /* err is EINVAL because the text is not JSON */
};

/* What a condition is evaluated against; NULL members are absent. */
/*
 * The verdicts of node and GPU conditions asked once per call: the PDs of
 * a multi-PD registration share the node and the GPU, so only their NIC
 * conditions are asked again (gdr_checks_first_failure).
 */
#define GDR_CHECK_MEMO_MAX 16
struct gdr_check_memo {
	const struct gdr_check *check[GDR_CHECK_MEMO_MAX];
	enum gdr_pass pass[GDR_CHECK_MEMO_MAX];
	unsigned int n;
};

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
	/* the GPU's BAR1 as read for this evaluation; NULL: not read */
	const struct gdr_bar1_view *bar1;
	/* a registration of a dma-buf another process exported: the
	 * conditions of the GPU's side are not asked */
	bool imported;
	/* a registration call's verdicts so far; NULL: ask every time */
	struct gdr_check_memo *memo;
	/* the report's host facts; NULL: not read (a registration) */
	const struct gdr_host_facts *host;
	/* the process's limits as read for this evaluation; NULL: not read */
	const struct gdr_limits_view *limits;
	/* cufile.json as read for the report; NULL: not read */
	const struct gdr_cufile_view *cufile;
	/* the NIC's max_mr_size, and the largest GPU's memory (0 unknown) */
	unsigned long long max_mr_size, largest_gpu;
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
	/* The verdict can change within a call (an answer the call itself
	 * learns): never taken from the memo. */
	bool changes;
	/* About the GPU and its driver: the exporter's concern, not asked
	 * for a dma-buf this process was given (gdr_subject.imported). */
	bool gpu_side;
};

/* Every condition a backend lists. */
extern const struct gdr_check gdr_check_kernel, gdr_check_nvidia_driver,
	gdr_check_cuda_api, gdr_check_peermem, gdr_check_verbs_dmabuf,
	gdr_check_gpu_dmabuf, gdr_check_nic_dmabuf, gdr_check_mlx5dv,
	gdr_check_cuda_pcie, gdr_check_nic_data_direct, gdr_check_gpu_pcie;
/* A fact the report shows and a failed registration names (not a gate). */
extern const struct gdr_check gdr_check_gpu_bar1;
/* The network driver stack; judged against nvidia-peermem's needs. */
extern const struct gdr_check gdr_check_rdma_stack;
/* The process's locked-memory and open-files limits (facts). */
extern const struct gdr_check gdr_check_memlock, gdr_check_nofile;
/* After the kernel refused a host registration with ENOMEM: append the
 * locked-memory limit as the process has it, and what to do, to @msg. */
void gdr_memlock_explain(char *msg, size_t n);
/*
 * After the NIC refused @len bytes of GPU @d's memory with @err (ENOMEM,
 * EFAULT or EINVAL; others say nothing): the words on BAR1 in @clause
 * ("; ..." to append). GDR_BAR1_LIKELY: BAR1 is nearly used up or too
 * small for @len, with the remedy (the caller puts it right after the
 * errno, before its path's own general words, so that no length limit cuts
 * it); GDR_BAR1_UNKNOWN: that it may be the cause, its use not known here
 * (for the end of the reason); GDR_BAR1_NOT_IT: "" (BAR1 has room, or the
 * errno is another). Asks NVML only if the process has loaded it.
 */
enum gdr_bar1_says {
	GDR_BAR1_NOT_IT = 0,
	GDR_BAR1_LIKELY,
	GDR_BAR1_UNKNOWN,
};
#define GDR_BAR1_CLAUSE_LEN 384
/* What to do about a translated IOMMU (the doctor's iommu_mode item and
 * registration failures say the same). */
extern const char gdr_iommu_translated_remedy[];
/*
 * After the NIC refused device memory with ENOMEM: where RDMA device
 * @name's IOMMU domain translates (DMA, DMA-FQ), append that as a likely
 * cause beside BAR1, with the remedy, to @msg. Nothing otherwise.
 */
void gdr_iommu_explain(const char *name, int err, char *msg, size_t n);
enum gdr_bar1_says gdr_bar1_cause(const struct gdr_dev *d, int err, size_t len,
				  char *clause, size_t n);

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

/* What a check's evaluation writes: its value (unless quiet), its verdict
 * and pass; the value as the description ("KEY is VALUE"). */
void gdr_eval_value(struct gdr_eval *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void gdr_eval_verdict(struct gdr_eval *e, enum gdr_verdict v, enum gdr_pass p);
void gdr_describe_value(const struct gdr_subject *s, const struct gdr_eval *e,
			char *buf, size_t n);

#endif /* GDR_NODE_H */
