/* SPDX-License-Identifier: MIT */
/*
 * libgpudirect: register GPU (or host) memory with an RDMA device in one
 * call, through the best path the node supports, and say exactly why when
 * it cannot.
 *
 * Every symbol and type here starts with gdr_ / GDR_ but none of them
 * collides with gdrcopy's gdrapi.h, so both headers can be included in one
 * translation unit and both libraries loaded in one process.
 */
#ifndef GPUDIRECT_H
#define GPUDIRECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUDIRECT_VERSION_MAJOR 0
#define GPUDIRECT_VERSION_MINOR 5
#define GPUDIRECT_VERSION_MICRO 0

/*
 * The registration paths. Device memory tries them in the library's order
 * of preference (Data Direct, DMA-BUF, then nvidia-peermem); GDR_PATH_HOST
 * is the only path for host memory. Later releases add paths with new values: nothing
 * in this header is sized by the number of paths.
 */
enum gdr_path {
	/* nothing registered */
	GDR_PATH_NONE = 0,
	/* cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr */
	GDR_PATH_DMABUF = 1,
	/* ibv_reg_mr on the device pointer (nvidia-peermem) */
	GDR_PATH_PEERMEM = 2,
	/* ibv_reg_mr on host memory */
	GDR_PATH_HOST = 3,
	/*
	 * Since 0.2: a dma-buf exported with the PCIe mapping
	 * (CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) registered with
	 * mlx5dv_reg_dmabuf_mr(MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT), for
	 * NICs with a Data Direct function (ConnectX-8 class)
	 */
	GDR_PATH_DATA_DIRECT = 4,
};

/* A bit per path, for gdr_reg_attr.path_mask. */
#define GDR_PATH_BIT(p) (1u << (p))
#define GDR_PATH_MASK_ALL                                                      \
	(GDR_PATH_BIT(GDR_PATH_DMABUF) | GDR_PATH_BIT(GDR_PATH_PEERMEM) |      \
	 GDR_PATH_BIT(GDR_PATH_HOST) | GDR_PATH_BIT(GDR_PATH_DATA_DIRECT))

/* What kind of memory a pointer refers to, as the CUDA driver reports it. */
enum gdr_mem_type {
	/* not classified: an argument error, or the CUDA driver's pointer
	 * query failed */
	GDR_MEM_UNKNOWN = 0,
	GDR_MEM_HOST = 1,	  /* ordinary host memory, or no CUDA driver */
	GDR_MEM_CUDA_HOST = 2,	  /* page-locked host memory known to CUDA */
	GDR_MEM_CUDA_DEVICE = 3,  /* device memory (cuMemAlloc, VMM) */
	GDR_MEM_CUDA_MANAGED = 4, /* managed memory: refused */
	/* stream-ordered pool memory (cuMemAllocAsync) */
	GDR_MEM_CUDA_POOL = 5,
	/* Since 0.4: a dma-buf this process was given (gdr_import_register,
	 * gdr_register_dmabuf): memory another process or device owns */
	GDR_MEM_DMABUF = 6,
};

/**
 * gdr_register - register @len bytes at @ptr with protection domain @pd.
 *
 * A drop-in for ibv_reg_mr(). @ptr may be host memory or CUDA device memory;
 * the library classifies it, picks the best path (DMA-BUF, then
 * nvidia-peermem, for device memory; plain registration for host memory)
 * and falls back only when a path answers "not supported". The access flags
 * are IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
 * IBV_ACCESS_REMOTE_READ, plus IBV_ACCESS_RELAXED_ORDERING for device
 * memory.
 *
 * The returned MR has mr->addr == @ptr and mr->length == @len on every path.
 * Release it with gdr_deregister() (ibv_dereg_mr() works too).
 *
 * Registering host memory never loads or initialises the CUDA driver: a
 * pointer is only classified as device memory when the process has
 * initialised CUDA itself.
 *
 * Returns the MR, or NULL with errno set; gdr_last_error() then says why
 * and what to do about it. gdr_register(3) lists every errno.
 */
struct ibv_mr *gdr_register(struct ibv_pd *pd, void *ptr, size_t len);

/**
 * gdr_deregister - release an MR returned by gdr_register().
 *
 * Returns 0, or an errno value (as ibv_dereg_mr() does). NULL gives EINVAL.
 */
int gdr_deregister(struct ibv_mr *mr);

/**
 * gdr_last_error - the cause and remedy of this thread's last failure.
 *
 * The text stays valid until this thread's next call into the library.
 * Returns "" when the last call succeeded (every call clears it first).
 * Never NULL.
 */
const char *gdr_last_error(void);

/* --- extended registration --------------------------------------------- */

/* Bits of gdr_reg_attr.comp_mask: which fields the caller filled in. */
enum gdr_reg_attr_mask {
	GDR_REG_ATTR_ACCESS = 1u << 0,	  /* attr.access is valid */
	GDR_REG_ATTR_PATH_MASK = 1u << 1, /* attr.path_mask is valid */
	GDR_REG_ATTR_FLAGS = 1u << 2,	  /* attr.flags is valid */
};

/* Bits of gdr_reg_attr.flags. */
enum gdr_reg_flags {
	/*
	 * Do not add IBV_ACCESS_RELAXED_ORDERING for device memory (as
	 * GPUDIRECT_RELAXED_ORDERING=0 does for the whole process).
	 */
	GDR_REG_STRICT_ORDERING = 1u << 0,
	/*
	 * Make synchronous memory operations on the buffer synchronise, on
	 * every device path: CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on the
	 * allocation, or, for VMM memory, which refuses that attribute,
	 * CU_CTX_SYNC_MEMOPS on the current context (driver 12.1 or newer).
	 */
	GDR_REG_SYNC_MEMOPS = 1u << 1,
	/*
	 * Since 0.2: export device memory with the PCIe mapping on the
	 * DMA-BUF path too (as GPUDIRECT_PCIE_MAPPING=on does for the whole
	 * process). Where the GPU or the driver (older than 12.8) cannot, the
	 * DMA-BUF path is not taken, and the reason says so.
	 */
	GDR_REG_PCIE_MAPPING = 1u << 2,
	/*
	 * Since 0.4: the caller vouches that VMM memory the driver does not
	 * mark GPUDirect RDMA capable was created with
	 * allocFlags.gpuDirectRDMACapable=1 by its owner: memory imported
	 * with cuMemImportFromShareableHandle, whose flags do not travel.
	 * If that is false, NVIDIA does not promise that the NIC's accesses
	 * reach the memory correctly: the registration can succeed and
	 * transfers then fail or move wrong data. Memory of a context (CUDA
	 * IPC, cuMemAlloc on a GPU without GPUDirect RDMA) is still refused.
	 */
	GDR_REG_OWNER_RDMA_CAPABLE = 1u << 3,
};

/**
 * struct gdr_reg_attr - options of gdr_register_ex().
 * @comp_mask: GDR_REG_ATTR_* bits naming the fields that are set; unknown
 *             bits are refused with EINVAL.
 * @access:    ibv_access_flags to use instead of the default.
 * @path_mask: GDR_PATH_BIT() of the paths that may be tried, in the
 *             library's order of preference. A single bit forces that path:
 *             it never falls back. Overrides GPUDIRECT_PATH.
 * @flags:     GDR_REG_* bits.
 *
 * The struct never grows: struct gdr_cache_attr embeds it. (An import's
 * iova is its descriptor's field, or gdr_register_dmabuf()'s argument.)
 */
struct gdr_reg_attr {
	uint32_t comp_mask;
	int access;
	uint32_t path_mask;
	uint32_t flags;
};

/* What became of one path during a registration. */
enum gdr_attempt_result {
	GDR_ATTEMPT_SKIPPED = 0, /* not tried: not allowed or not eligible */
	GDR_ATTEMPT_FAILED = 1,	 /* tried; it failed (errno in ->err) */
	GDR_ATTEMPT_USED = 2,	 /* tried; it gave the MR */
};

#define GDR_REASON_LEN 256

struct gdr_path_attempt {
	enum gdr_path path;
	enum gdr_attempt_result result;
	int err;		     /* errno value, 0 when used */
	char reason[GDR_REASON_LEN]; /* why skipped or failed, in words */
};

/* Bits of gdr_reg_info.comp_mask: which fields the library filled in. */
enum gdr_reg_info_mask {
	GDR_REG_INFO_BASIC = 1u << 0,  /* path .. attempts */
	GDR_REG_INFO_EXPORT = 1u << 1, /* since 0.3: export_index */
};

/* Room for the attempts of every path a release may add. */
#define GDR_REG_INFO_MAX_ATTEMPTS 8

/**
 * struct gdr_reg_info - the decision record of gdr_register_ex().
 * @comp_mask:    set by the library: GDR_REG_INFO_* bits of the fields it
 *                filled in.
 * @path:         the path that registered, GDR_PATH_NONE on failure.
 * @mem_type:     what the pointer was classified as.
 * @device:       CUDA device ordinal owning the memory, -1 for host memory.
 * @num_attempts: entries used in @attempts, one per path considered, in the
 *                order they were considered.
 * @export_index: since 0.3 (GDR_REG_INFO_EXPORT): the dma-buf export the
 *                MR was registered from, numbered in the order the call
 *                made them, from 0 (an export made for a path that then
 *                failed keeps its number: the next may be 1); in
 *                gdr_register_multi(), PDs with the same number share one
 *                export, and a PD whose path needs a differently mapped
 *                export (the PCIe mapping) has another. -1 when the path
 *                exports nothing (nvidia-peermem, host) or nothing was
 *                registered.
 *
 * The caller passes sizeof(struct gdr_reg_info) as it was compiled; a
 * newer library never writes past it.
 */
struct gdr_reg_info {
	uint32_t comp_mask;
	enum gdr_path path;
	enum gdr_mem_type mem_type;
	int device;
	unsigned int num_attempts;
	struct gdr_path_attempt attempts[GDR_REG_INFO_MAX_ATTEMPTS];
	int export_index;
};

/* The smallest info_size gdr_register_ex() accepts: the fields before
 * the attempts. */
#define GDR_REG_INFO_MIN_SIZE offsetof(struct gdr_reg_info, attempts)

/**
 * gdr_register_ex - gdr_register() with options and a decision record.
 * @attr:      options, or NULL for the defaults.
 * @info:      filled with the decision (also on failure), or NULL.
 * @info_size: sizeof(*info); the library writes no byte past it and only
 *             as many attempts as fit. At least GDR_REG_INFO_MIN_SIZE.
 *
 * Returns the MR, or NULL with errno set.
 */
struct ibv_mr *gdr_register_ex(struct ibv_pd *pd, void *ptr, size_t len,
			       const struct gdr_reg_attr *attr,
			       struct gdr_reg_info *info, size_t info_size);

/* --- one buffer on several NICs (since 0.3) -------------------------------- */

/* The most protection domains one gdr_register_multi() call takes. */
#define GDR_REG_MULTI_MAX 256

/**
 * gdr_register_multi - register [@ptr, +@len) on each of @num protection
 * domains, as gdr_register_ex() would on each alone, for the cost of one.
 * @pds:       @num distinct PDs, none NULL, of any RDMA devices.
 * @num:       1 to GDR_REG_MULTI_MAX.
 * @attr:      options for every PD, as for gdr_register_ex(), or NULL;
 *             GDR_REG_SYNC_MEMOPS is applied once.
 * @mrs:       room for @num MRs: mrs[i] is registered on pds[i].
 * @infos:     NULL, or @num decision records laid out @info_size bytes
 *             apart (an array of struct gdr_reg_info); record i is that
 *             of pds[i], filled also on failure (a PD never tried has
 *             path GDR_PATH_NONE and no attempts; its mem_type and device
 *             are the buffer's, as in every record, once the call has
 *             classified it).
 * @info_size: sizeof(struct gdr_reg_info), at least GDR_REG_INFO_MIN_SIZE.
 *
 * The buffer is classified once and device memory is exported as a
 * dma-buf at most once per mapping: one plain export, and one PCIe-mapped
 * export where some PD's path needs it (Data Direct; DMA-BUF from a
 * C2C-attached GPU to a NIC on PCIe). Each export's fd serves every PD
 * that takes it and is closed before the call returns (each MR holds its
 * own reference). Each PD gets its own path: a NIC without DMA-BUF MRs
 * takes nvidia-peermem, a NIC with a Data Direct function takes Data
 * Direct; the records say which export each MR came from.
 *
 * All or nothing: when the registration on pds[k] fails, the MRs made on
 * pds[0..k-1] are released and every mrs[i] is NULL (those whose release
 * fails stay, and the message says which); errno is that of the failure
 * and gdr_last_error() names the PD ("pds[k] (mlx5_3) of N: ..."). The
 * records of pds[0..k-1] then describe MRs that were made and released.
 * A failure of the call itself (bad arguments, a buffer that cannot be
 * registered at all) names no PD; mrs[] is all NULL from the start, unless
 * @num is out of range: then neither @mrs nor @infos is written. Where
 * @info_size carries the records past the end of the address space,
 * @infos is not written (mrs[] is all NULL).
 *
 * Returns 0, or -1 with errno set. Release with gdr_deregister_multi().
 */
int gdr_register_multi(struct ibv_pd *const *pds, unsigned int num, void *ptr,
		       size_t len, const struct gdr_reg_attr *attr,
		       struct ibv_mr **mrs, struct gdr_reg_info *infos,
		       size_t info_size);

/**
 * gdr_deregister_multi - release the @num MRs in @mrs (NULL entries are
 * skipped), setting each released entry to NULL.
 *
 * Every MR is tried; one that cannot be released stays in @mrs. Returns 0,
 * or (as gdr_deregister() does) the errno value of the first that failed,
 * also left in errno and named in gdr_last_error().
 */
int gdr_deregister_multi(struct ibv_mr **mrs, unsigned int num);

/*
 * How a GPU and an RDMA device connect on PCIe, nearest first, as
 * nvidia-smi topo -m names them (gdr_distance_str).
 */
enum gdr_distance {
	GDR_DIST_PIX = 1,     /* through at most one PCIe switch */
	GDR_DIST_PXB = 2,     /* through several switches, not the CPU */
	GDR_DIST_PHB = 3,     /* through the CPU's host bridge */
	GDR_DIST_NODE = 4,    /* between host bridges of one NUMA node */
	GDR_DIST_SYS = 5,     /* across NUMA nodes */
	GDR_DIST_UNKNOWN = 6, /* a path not in sysfs (rxe, a VM's devices) */
};

/* Which of the ranked RDMA devices gdr_rank_nics() answers. */
enum gdr_rank_policy {
	GDR_RANK_CLOSEST = 0, /* the nearest one */
	GDR_RANK_BEST = 1,    /* every one at the nearest distance */
	GDR_RANK_BEST_N = 2,  /* the gdr_rank_attr.max nearest */
	GDR_RANK_ALL = 3,     /* all of them, nearest first */
};

/* Bits of gdr_rank_attr.comp_mask. */
enum gdr_rank_attr_mask {
	GDR_RANK_ATTR_BUS_ID = 1u << 0, /* attr.gpu_bus_id names the GPU */
};

/**
 * struct gdr_rank_attr - the question of gdr_rank_nics().
 * @comp_mask:   GDR_RANK_ATTR_* bits; unknown bits are refused.
 * @cuda_device: the GPU as a CUDA device ordinal, in this process's
 *               numbering (CUDA_VISIBLE_DEVICES applies). The library
 *               never initialises CUDA for it: the process must have.
 * @gpu_bus_id:  with GDR_RANK_ATTR_BUS_ID, the GPU's PCI address instead
 *               ("0000:17:00.0", as cuDeviceGetPCIBusId or nvidia-smi
 *               give it): then no CUDA call at all is made.
 * @policy:      enum gdr_rank_policy.
 * @max:         for GDR_RANK_BEST_N, how many (at least 1).
 */
struct gdr_rank_attr {
	uint32_t comp_mask;
	int cuda_device;
	const char *gpu_bus_id;
	enum gdr_rank_policy policy;
	unsigned int max;
};

/**
 * struct gdr_nic_rank - one RDMA device, as ranked for the GPU.
 * @index:        its index in the caller's @ctxs.
 * @distance:     enum gdr_distance between the GPU and @nic_bus_id.
 * @acs_redirect: bridges on that path that redirect peer-to-peer traffic
 *                (ACS), or -1 when unknown (reading them needs root); where
 *                only some can be read, those known to redirect (-1 when
 *                none of them does).
 * @same_numa:    1 when GPU and device share a NUMA node, 0 when not, -1
 *                unknown.
 * @data_direct:  1 when the device has a Data Direct function (mlx5),
 *                else 0.
 * @nic_bus_id:   the PCI address @distance was measured from: the Data
 *                Direct function where sysfs shows it and the GPU can
 *                take the Data Direct path (not with
 *                GPUDIRECT_PCIE_MAPPING=off; for a GPU named by ordinal,
 *                not where its driver lacks the PCIe mapping or it
 *                answered NOT_SUPPORTED to it), else the device's own PCI
 *                function; "" when it has none (rxe).
 */
struct gdr_nic_rank {
	unsigned int index;
	enum gdr_distance distance;
	int acs_redirect;
	int same_numa;
	int data_direct;
	char nic_bus_id[16];
};

/* The smallest rank_size gdr_rank_nics() accepts: the 0.3 record. Later
 * releases add fields at the end and fill only what the caller has room
 * for; a record larger than this release's has its later bytes set to 0
 * (a field a later release adds reads 0 from this one). */
#define GDR_NIC_RANK_MIN_SIZE (offsetof(struct gdr_nic_rank, nic_bus_id) + 16)

/**
 * gdr_rank_nics - rank the RDMA devices @ctxs by PCIe distance from a GPU.
 * @attr:      the GPU and the policy.
 * @ctxs:      @num_ctxs open devices (ibv_open_device()).
 * @out:       room for *@num_out records laid out @rank_size bytes apart.
 * @num_out:   in: the room in @out; out: how many devices the policy
 *             chose (more than the room when @out was too small: the
 *             first that fit were written).
 * @rank_size: sizeof(struct gdr_nic_rank), at least GDR_NIC_RANK_MIN_SIZE.
 *
 * The order: nearer distance first; at one distance, a path without ACS
 * redirection first, then one where it is unknown, then one that
 * redirects; then the order of @ctxs. Devices with no PCI path (rxe) rank
 * last, as GDR_DIST_UNKNOWN; port state is not considered. Only sysfs is
 * read (and, for mlx5 devices, where their Data Direct function is), plus,
 * for a GPU named by ordinal, what the CUDA driver the process started
 * says of it; no device is probed or registered with.
 *
 * Returns 0, or -1 with errno: EINVAL for bad arguments (@num_ctxs 0 or
 * above 1024 among them), ENODEV when the GPU is not known (the ordinal is
 * not visible, CUDA is not initialised in this process, or the bus id is
 * not in sysfs), ENOMEM; the cause in gdr_last_error().
 */
int gdr_rank_nics(const struct gdr_rank_attr *attr,
		  struct ibv_context *const *ctxs, unsigned int num_ctxs,
		  struct gdr_nic_rank *out, unsigned int *num_out,
		  size_t rank_size);

/**
 * gdr_distance_str - the name of a distance: "PIX", "PXB", "PHB", "NODE",
 * "SYS", "unknown"; "invalid" outside the enum.
 */
const char *gdr_distance_str(enum gdr_distance distance);

/**
 * gdr_path_str - the name of a path: "none", "data-direct", "dmabuf",
 * "peermem", "host".
 * Returns "invalid" for values outside the enum.
 */
const char *gdr_path_str(enum gdr_path path);

/**
 * gdr_path_parse - the path named by @name ("dmabuf", "peermem", "host";
 * "auto" gives GDR_PATH_NONE, meaning no preference).
 * Returns 0, or -1 with errno EINVAL for any other name.
 */
int gdr_path_parse(const char *name, enum gdr_path *path);

/**
 * gdr_mem_type_str - the name of a memory type: "unknown", "host",
 * "cuda-host", "cuda-device", "cuda-managed", "cuda-pool", "dma-buf".
 */
const char *gdr_mem_type_str(enum gdr_mem_type type);

/* --- memory another process owns (since 0.4) ------------------------------ */

/*
 * The owner of device memory exports it as dma-buf file descriptors with
 * gdr_export(); another process (a transfer engine) receives them with a
 * descriptor, over a unix socket (gdr_export_send/gdr_export_recv) or any
 * other way, and registers them with gdr_import_register(). The importer
 * needs no CUDA: only the NIC's DMA-BUF support. A dma-buf from any other
 * exporter registers with gdr_register_dmabuf().
 */

/* The most dma-buf fds one export has: the plain one and the PCIe-mapped. */
#define GDR_EXPORT_MAX_FDS 2
/* The version of struct gdr_export_desc this library writes and reads. */
#define GDR_EXPORT_DESC_VERSION 1
/* The bytes of a packed descriptor (gdr_export_pack): fixed. */
#define GDR_EXPORT_WIRE_LEN 160

/* Bits of gdr_export()'s @flags. */
enum gdr_export_flags {
	/*
	 * Also export the PCIe-mapped dma-buf (for NICs with a Data Direct
	 * function, and for a C2C-attached GPU read by a NIC on PCIe). The
	 * call fails with EOPNOTSUPP where the driver (older than 12.8) or
	 * the GPU cannot make it.
	 */
	GDR_EXPORT_PCIE_MAPPING = 1u << 0,
};

/* How a dma-buf maps the GPU's memory. */
enum gdr_dmabuf_mapping {
	GDR_DMABUF_MAPPING_DEFAULT = 0, /* the driver's choice */
	/* CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE */
	GDR_DMABUF_MAPPING_PCIE = 1,
};

/**
 * struct gdr_export_desc - what an importer needs to register an export.
 * @version:     GDR_EXPORT_DESC_VERSION.
 * @num_fds:     how many fds the export has (1 or 2), in the order of
 *               @mapping; @mapping and @dmabuf_ino past it are 0.
 * @mapping:     enum gdr_dmabuf_mapping of fds[i]; no two alike, in any
 *               order (an importer names the fd it took by its index).
 * @dmabuf_size: the bytes each dma-buf spans: the page-aligned span
 *               around the buffer.
 * @offset:      where the buffer starts in the dma-buf.
 * @length:      the buffer's bytes (@offset + @length <= @dmabuf_size).
 * @iova:        the owner's address of the buffer, the importer's default
 *               iova: an MR then has the address the owner's own MR would
 *               have, so peers need not know who registered. @iova +
 *               @length is at most 2^64 - 1 (the MR's end does not wrap).
 * @buffer_id:   the allocation's CU_POINTER_ATTRIBUTE_BUFFER_ID (unique
 *               on the node, not per process).
 * @dmabuf_ino:  the inode of each dma-buf: ties the fds received to this
 *               descriptor (fds of another export are refused).
 * @mem_type:    enum gdr_mem_type of the owner's memory: GDR_MEM_CUDA_DEVICE
 *               or GDR_MEM_CUDA_POOL, the kinds an export carries.
 * @owner_pid:   the exporting process, in its own PID namespace (for
 *               messages only).
 * @lib_version: the owner's libgpudirect, major << 16 | minor << 8 | micro.
 * @gpu_bus_id:  the exporting GPU's PCI address, "0000:65:00.0": 12
 *               characters and a NUL, hex digits of either case (CUDA
 *               writes upper case; gdr_export() writes lower).
 * @gpu_uuid:    the GPU's UUID (cuDeviceGetUuid), 16 bytes.
 * @boot_id:     the owner's node and boot (/proc/sys/kernel/random/
 *               boot_id, 16 bytes): a descriptor from another node, or
 *               from before a reboot, is refused.
 */
struct gdr_export_desc {
	uint32_t version;
	uint32_t num_fds;
	uint32_t mapping[GDR_EXPORT_MAX_FDS];
	uint64_t dmabuf_size;
	uint64_t offset;
	uint64_t length;
	uint64_t iova;
	uint64_t buffer_id;
	uint64_t dmabuf_ino[GDR_EXPORT_MAX_FDS];
	uint32_t mem_type;
	uint32_t owner_pid;
	uint32_t lib_version;
	char gpu_bus_id[16];
	uint8_t gpu_uuid[16];
	uint8_t boot_id[16];
};

/**
 * gdr_export - export the device memory [@ptr, +@len) as dma-buf fds, the
 * way the library's own registrations do: the page-aligned span around
 * it, under the context that owns it (VMM and pool memory: the current
 * context of its GPU, else the primary one, retained for the call only).
 * @flags: GDR_EXPORT_* bits.
 * @desc:  filled in for the importer.
 * @fds:   room for GDR_EXPORT_MAX_FDS: fds[i] (close-on-exec) has mapping
 *         desc->mapping[i]; the rest are -1. The caller owns them: close
 *         them once sent (an importer's MR holds its own reference).
 *
 * Memory the library would refuse to register (host, managed, memory not
 * GPUDirect RDMA capable, a range past its allocation) is refused alike,
 * with the same words. Returns 0, or -1 with errno set (EINVAL, ENODEV,
 * EOPNOTSUPP, ENOMEM, EIO) and nothing left open.
 */
int gdr_export(void *ptr, size_t len, uint32_t flags,
	       struct gdr_export_desc *desc, int *fds);

/**
 * gdr_export_pack - write @desc as GDR_EXPORT_WIRE_LEN bytes into @buf
 * (@size at least that): little-endian, fixed layout, with a magic and
 * the version first. Returns 0, or -1 with errno EINVAL (@size too small,
 * a field out of range).
 */
int gdr_export_pack(const struct gdr_export_desc *desc, void *buf, size_t size);

/**
 * gdr_export_unpack - read a packed descriptor of @size bytes from another
 * process (untrusted): every field is checked. Returns 0, or -1 with
 * errno: EPROTO (not a descriptor, a version this library does not read,
 * a field out of range: the message says which), EXDEV (made on another
 * node or before a reboot).
 */
int gdr_export_unpack(const void *buf, size_t size,
		      struct gdr_export_desc *desc);

/**
 * gdr_export_send - send @desc and its desc->num_fds @fds over the
 * connected unix socket @sock in one message (SCM_RIGHTS). The fds stay
 * the caller's. Returns 0, or -1 with errno (the socket's, or EINVAL).
 */
int gdr_export_send(int sock, const struct gdr_export_desc *desc,
		    const int *fds);

/**
 * gdr_export_recv - receive one gdr_export_send() message from @sock
 * (blocking as the socket is set up: SO_RCVTIMEO bounds the wait). The
 * descriptor is unpacked and its fds checked (dma-bufs, the descriptor's
 * own, of its size); @fds (room for GDR_EXPORT_MAX_FDS) gets them, the
 * caller owns them. On any failure every fd that arrived is closed and
 * @fds is all -1: ECONNRESET (the peer closed), EPROTO (a short, long or
 * malformed message, fds missing or extra, not dma-bufs), EXDEV, or the
 * socket's errno. Returns 0 or -1 with errno set.
 */
int gdr_export_recv(int sock, struct gdr_export_desc *desc, int *fds);

/**
 * gdr_import_register - register an export another process made with
 * gdr_export() on @pd: Data Direct with the PCIe-mapped fd where the NIC
 * has that function, else DMA-BUF with the plain fd (no nvidia-peermem:
 * there is no address here to pin). @fds as gdr_export_recv() gives
 * them; they are checked against @desc and stay the caller's (the MR
 * holds its own reference: close them when done).
 * @attr: as for gdr_register_ex(); GDR_REG_SYNC_MEMOPS and
 *        GDR_REG_OWNER_RDMA_CAPABLE do not apply (EINVAL);
 *        GDR_REG_PCIE_MAPPING takes the PCIe-mapped fd on the DMA-BUF
 *        path too. The MR's iova is desc->iova: set another there
 *        before the call to have another.
 * @info: the decision record, as for gdr_register_ex() (@info_size at
 *        least GDR_REG_INFO_MIN_SIZE); mem_type GDR_MEM_DMABUF, device -1,
 *        export_index the index in @fds of the fd registered. A call
 *        refused before any path leaves device -1, export_index -1.
 *
 * The MR's addr is its iova. It keeps the owner's memory alive until it
 * is released with gdr_deregister(), whatever the owner frees or however
 * it exits. Returns the MR, or NULL with errno set.
 */
struct ibv_mr *gdr_import_register(struct ibv_pd *pd,
				   const struct gdr_export_desc *desc,
				   const int *fds,
				   const struct gdr_reg_attr *attr,
				   struct gdr_reg_info *info, size_t info_size);

/**
 * gdr_import_register_multi - gdr_import_register() on each of @num PDs,
 * all or nothing, with gdr_register_multi()'s arguments, records and
 * errors. Release with gdr_deregister_multi().
 */
int gdr_import_register_multi(struct ibv_pd *const *pds, unsigned int num,
			      const struct gdr_export_desc *desc,
			      const int *fds, const struct gdr_reg_attr *attr,
			      struct ibv_mr **mrs, struct gdr_reg_info *infos,
			      size_t info_size);

/**
 * gdr_register_dmabuf - register [@offset, +@len) of the dma-buf @fd from
 * any exporter (another GPU vendor's, udmabuf) on @pd at address @iova,
 * with the library's checks, record and words: DMA-BUF, or Data Direct
 * when GDR_REG_PCIE_MAPPING says the fd has the PCIe mapping. @fd stays
 * the caller's. Returns the MR (addr @iova), or NULL with errno set.
 */
struct ibv_mr *gdr_register_dmabuf(struct ibv_pd *pd, int fd, uint64_t offset,
				   size_t len, uint64_t iova,
				   const struct gdr_reg_attr *attr,
				   struct gdr_reg_info *info, size_t info_size);

/* --- registration cache ------------------------------------------------- */

/*
 * A cache of registrations for one protection domain, for transports that
 * register user buffers on every transfer. Two modes for device memory:
 *
 * - validated (the default): every hit asks the CUDA driver for the buffer
 *   id of each mapping under the requested range (one for cuMemAlloc and
 *   pool memory, one per VMM chunk the range touches) and compares it
 *   with what was registered, so memory freed, unmapped or replaced under
 *   an address is never served a stale MR. Nothing in the CUDA driver is
 *   patched or intercepted. A hit costs those driver queries, which the
 *   driver serialises across threads.
 * - trusted (GDR_CACHE_TRUSTED): a hit asks the driver nothing; the
 *   caller promises to call gdr_cache_invalidate() before memory under a
 *   cached range goes back to the driver (cuMemFree, cuMemUnmap, a
 *   caching allocator releasing a segment).
 *
 * A hit takes no lock and writes nothing shared but the entry's own
 * reference count.
 */
struct gdr_cache;

/* Bits of gdr_cache_attr.comp_mask: which fields the caller set. */
enum gdr_cache_attr_mask {
	GDR_CACHE_ATTR_MAX_ENTRIES = 1u << 0,
	GDR_CACHE_ATTR_MAX_BYTES = 1u << 1,
	GDR_CACHE_ATTR_FLAGS = 1u << 2,
	GDR_CACHE_ATTR_MAX_REG_RATIO = 1u << 3,
	GDR_CACHE_ATTR_REG = 1u << 4,
};

/* Bits of gdr_cache_attr.flags. */
enum gdr_cache_flags {
	/*
	 * Register the whole CUDA allocation around a buffer, when it is at
	 * most max_reg_ratio times the buffer, so that sub-buffers of one
	 * caching-allocator block (PyTorch, RMM) hit one entry.
	 */
	GDR_CACHE_WHOLE_ALLOC = 1u << 0,
	/*
	 * Cache host memory too. Host memory has no cheap validity check:
	 * the caller promises to call gdr_cache_invalidate() before it frees
	 * or remaps cached host memory. Without this flag host memory passes
	 * through: registered on get, deregistered on put.
	 */
	GDR_CACHE_HOST = 1u << 1,
	/*
	 * Since 0.3: trusted mode for device memory: a hit makes no driver
	 * call. The caller promises gdr_cache_invalidate() before it frees,
	 * unmaps or otherwise gives back memory under a cached range;
	 * gdr_cache_purge() remains the safety net that finds entries whose
	 * memory is gone. Without the promise kept, an MR may outlive its
	 * memory.
	 */
	GDR_CACHE_TRUSTED = 1u << 2,
};

/*
 * The most mappings (VMM chunks) one cached entry may span: a validated
 * hit asks the driver once per mapping the requested range touches, so a
 * range over more is registered for that get only (not cached), and
 * gdr_cache_get_ex() says why.
 */
#define GDR_CACHE_MAX_MAPPINGS 64

/**
 * struct gdr_cache_attr - options of gdr_cache_create().
 * @comp_mask:     GDR_CACHE_ATTR_* bits naming the fields that are set;
 *                 unknown bits are refused with EINVAL.
 * @flags:         GDR_CACHE_* bits.
 * @max_entries:   idle entries beyond this are released, least recently
 *                 used first (default: GPUDIRECT_CACHE_MAX_ENTRIES, else
 *                 4096; 0 means no limit).
 * @max_bytes:     likewise for the bytes registered (default:
 *                 GPUDIRECT_CACHE_MAX_BYTES, else no limit).
 * @max_reg_ratio: for GDR_CACHE_WHOLE_ALLOC, the largest allocation size
 *                 over buffer size registered whole (default 16).
 * @reg:           options for each registration, as for gdr_register_ex().
 */
struct gdr_cache_attr {
	uint32_t comp_mask;
	uint32_t flags;
	size_t max_entries;
	size_t max_bytes;
	unsigned int max_reg_ratio;
	struct gdr_reg_attr reg;
};

/**
 * gdr_cache_create - a registration cache for @pd.
 * @attr: options, or NULL for the defaults.
 *
 * Returns the cache (release it with gdr_cache_destroy()), or NULL with
 * errno set.
 */
struct gdr_cache *gdr_cache_create(struct ibv_pd *pd,
				   const struct gdr_cache_attr *attr);

/**
 * gdr_cache_destroy - release every registration and the cache.
 * Returns 0, or EBUSY (and destroys nothing) while an MR from
 * gdr_cache_get() has not been put back, EINVAL for NULL.
 */
int gdr_cache_destroy(struct gdr_cache *cache);

/**
 * gdr_cache_get - an MR covering [@ptr, @ptr + @len), from the cache or
 * registered now. Its lkey and rkey are valid for the whole range; with
 * GDR_CACHE_WHOLE_ALLOC it may cover more: mr->addr and mr->length give
 * what it covers (iova == virtual address, as for gdr_register()). Every
 * get is matched by a gdr_cache_put(); the MR stays valid until then,
 * even if the cache invalidates it meanwhile.
 *
 * Returns the MR, or NULL with errno set (gdr_register(3)'s errnos).
 */
struct ibv_mr *gdr_cache_get(struct gdr_cache *cache, void *ptr, size_t len);

/* What gdr_cache_get_ex() did. */
enum gdr_cache_result {
	GDR_CACHE_RESULT_HIT = 1,      /* served from the cache */
	GDR_CACHE_RESULT_MISS = 2,     /* registered now, and cached */
	GDR_CACHE_RESULT_UNCACHED = 3, /* registered now for this get only */
};

/* Bits of gdr_cache_get_info.comp_mask: which fields the library set. */
enum gdr_cache_get_info_mask {
	GDR_CACHE_GET_INFO_BASIC = 1u << 0, /* result .. reason */
};

/**
 * struct gdr_cache_get_info - the record of one gdr_cache_get_ex().
 * @comp_mask:    set by the library: GDR_CACHE_GET_INFO_* bits.
 * @result:       GDR_CACHE_RESULT_*; 0 when the get failed.
 * @num_mappings: the mappings (VMM chunks, allocations) under the MR's
 *                range that a validated hit compares; 0 for host memory.
 * @reason:       why the range was not cached (UNCACHED), else "".
 */
struct gdr_cache_get_info {
	uint32_t comp_mask;
	uint32_t result;
	uint32_t num_mappings;
	char reason[GDR_REASON_LEN];
};

/**
 * gdr_cache_get_ex - gdr_cache_get() with a record of what it did.
 * @info:      filled in (also on failure), or NULL.
 * @info_size: sizeof(*info) as the caller was compiled; the library
 *             writes no byte past it. At least
 *             offsetof(struct gdr_cache_get_info, reason).
 *
 * Since 0.3. Returns the MR, or NULL with errno set.
 */
struct ibv_mr *gdr_cache_get_ex(struct gdr_cache *cache, void *ptr, size_t len,
				struct gdr_cache_get_info *info,
				size_t info_size);

/**
 * gdr_cache_put - give back an MR from gdr_cache_get().
 * Returns 0, EINVAL when @mr did not come from this cache (or was put
 * back already), or the errno of a deregistration that failed.
 */
int gdr_cache_put(struct gdr_cache *cache, struct ibv_mr *mr);

/**
 * gdr_cache_invalidate - forget every entry overlapping [@ptr, @ptr +
 * @len): idle ones are deregistered now, those in use when put back. Call
 * it before freeing memory the cache may hold (required for host memory
 * with GDR_CACHE_HOST; for device memory it releases the pinned memory at
 * once instead of at the next check). Returns 0 or EINVAL.
 */
int gdr_cache_invalidate(struct gdr_cache *cache, void *ptr, size_t len);

/**
 * gdr_cache_purge - check every idle device-memory entry (validated and
 * trusted) against the buffer ids of its mappings now and deregister the
 * stale ones, so that freed GPU memory the cache still pinned is
 * released. Returns 0, EINVAL for NULL, or ENOMEM.
 */
int gdr_cache_purge(struct gdr_cache *cache);

/**
 * struct gdr_cache_stats - what a cache did.
 * @hits:          gets served from the cache (validated)
 * @misses:        gets that registered
 * @stale:         entries found stale (buffer id changed, memory freed)
 * @evictions:     idle entries released for the limits
 * @invalidations: entries dropped by gdr_cache_invalidate()
 * @passthrough:   host-memory gets registered without caching
 * @entries:       live entries
 * @bytes:         bytes they register
 * @in_use:        MRs given out and not yet put back
 * @uncached:      since 0.3: device-memory gets registered without caching
 *                 (more than GDR_CACHE_MAX_MAPPINGS mappings, or mappings
 *                 the driver could not describe)
 *
 * A caller compiled against 0.2 passes the 0.2 size and gets the 0.2
 * fields.
 */
struct gdr_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t stale;
	uint64_t evictions;
	uint64_t invalidations;
	uint64_t passthrough;
	uint64_t entries;
	uint64_t bytes;
	uint64_t in_use;
	uint64_t uncached;
};

/**
 * gdr_cache_query_stats - copy the statistics into @stats, which has
 * @stats_size bytes (sizeof(*stats) as the caller was compiled); a newer
 * library never writes past it. Returns 0, or EINVAL for NULL or a size
 * smaller than the first release of the struct.
 */
int gdr_cache_query_stats(struct gdr_cache *cache,
			  struct gdr_cache_stats *stats, size_t stats_size);

/* --- node report ---------------------------------------------------------- */

struct gdr_report;

/* Verdict on one prerequisite. */
enum gdr_verdict {
	GDR_VERDICT_OK = 0,
	GDR_VERDICT_MISSING = 1, /* absent: GPUDirect needs it */
	GDR_VERDICT_WRONG = 2,	 /* present, but the wrong kind or version */
	GDR_VERDICT_UNKNOWN = 3, /* could not be determined */
	GDR_VERDICT_INFO = 4,	 /* a fact, no verdict */
};

/*
 * What a report item describes (since 0.5). The section's name alone
 * does not say it: an RDMA device may be named "node" or "gpu0".
 */
enum gdr_report_scope {
	GDR_REPORT_SCOPE_UNKNOWN = 0, /* a library before 0.5 (see below) */
	GDR_REPORT_SCOPE_NODE = 1,
	GDR_REPORT_SCOPE_GPU = 2,	  /* section "gpuN": CUDA device N */
	GDR_REPORT_SCOPE_RDMA_DEVICE = 3, /* section: the device's name */
	/* GPUDirect Storage (gdr-info --storage, 0.5): section "storage"
	 * (cuFile on the node) or "storageN" (the Nth path checked) */
	GDR_REPORT_SCOPE_STORAGE = 4,
};

/**
 * struct gdr_report_item - one observed prerequisite.
 * @section: "node", "gpu0", "gpu1", ..., or the RDMA device's name.
 * @key:     what was checked, e.g. "kernel", "dmabuf_supported".
 * @value:   what was observed.
 * @verdict: GDR_VERDICT_*.
 * @remedy:  what to change, or "" when nothing needs changing.
 * @scope:   GDR_REPORT_SCOPE_* (since 0.5): what @section names. A
 *           library before 0.5 does not write it: zero the item before
 *           the call and read GDR_REPORT_SCOPE_UNKNOWN there.
 */
struct gdr_report_item {
	const char *section;
	const char *key;
	const char *value;
	enum gdr_verdict verdict;
	const char *remedy;
	enum gdr_report_scope scope;
};

/* The size of the first release of struct gdr_report_item (0.1): the
 * smallest item_size gdr_report_item() takes. */
#define GDR_REPORT_ITEM_MIN_SIZE                                               \
	(offsetof(struct gdr_report_item, remedy) + sizeof(const char *))

/**
 * gdr_report_create - probe the node, every CUDA device and the RDMA
 * devices in @ctxs (@num_ctxs entries, may be 0) and record every
 * prerequisite with its observed value, verdict and remedy.
 * @flags: must be 0.
 *
 * Returns the report (free it with gdr_report_destroy()), or NULL with
 * errno set.
 */
struct gdr_report *gdr_report_create(struct ibv_context *const *ctxs,
				     unsigned int num_ctxs, uint32_t flags);

void gdr_report_destroy(struct gdr_report *report);

/** gdr_report_num_items - how many items the report holds. */
unsigned int gdr_report_num_items(const struct gdr_report *report);

/**
 * gdr_report_item - copy item @index into @item, which has @item_size
 * bytes (sizeof(struct gdr_report_item) as the caller was compiled); a
 * newer library never writes past it, and fills the fields that fit. The
 * strings belong to the report. Returns 0, or -1 with errno EINVAL when
 * @report or @item is NULL, @index is out of range or @item_size is
 * smaller than GDR_REPORT_ITEM_MIN_SIZE.
 */
int gdr_report_item(const struct gdr_report *report, unsigned int index,
		    struct gdr_report_item *item, size_t item_size);

/**
 * gdr_report_usable - 1 when device memory can be registered for RDMA on
 * at least one CUDA device x RDMA device pair of the report (through DMA-BUF
 * or nvidia-peermem), else 0.
 */
int gdr_report_usable(const struct gdr_report *report);

enum gdr_report_format {
	GDR_REPORT_TEXT = 0,
	GDR_REPORT_JSON = 1,
};

/**
 * gdr_report_print - write the report to @out as text or JSON.
 * Returns 0, or -1 with errno set: EINVAL for bad arguments, the errno of
 * the failed write otherwise (EIO when the stream gives none).
 */
int gdr_report_print(const struct gdr_report *report, FILE *out,
		     enum gdr_report_format format);

#ifdef __cplusplus
}
#endif

#endif /* GPUDIRECT_H */
