/* SPDX-License-Identifier: MIT */
/*
 * The part of cuFile's ABI (libcufile.so.0, GPUDirect Storage) that the
 * doctor uses, declared here in the project's words from NVIDIA's cuFile
 * API reference, so that nothing in the build needs cufile.h. libcufile is
 * never linked: os/cufile-loader.c resolves every entry point at run time
 * and treats a missing one as "this libcufile does not say".
 *
 * Checked against the cufile.h of the nvidia-cufile wheels 1.14.1.1
 * (CUDA 12), 1.15.1.6 and 1.20.0.107 (CUDA 13): the values, the layout of
 * the driver properties and of the per-GPU statistics are the same in all
 * three. The level 1 statistics are not: 1.20 appended the readv/writev
 * counters, which moves everything after them (the level 3 record's GPU
 * table). So the statistics are read in every layout known here and taken
 * only in the one whose counts match the I/O the doctor itself did
 * (doctor/storage-io.c); 1.14 has no statistics calls at all.
 */
#ifndef GDR_CUFILE_ABI_H
#define GDR_CUFILE_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* CUfileOpError: 0, or 5000 + a cause. cuFileRead/cuFileWrite return
 * -1 with errno for a file system error, or minus one of these. */
#define GDR_CUFILE_BASE_ERR 5000
#define GDR_CUFILE_OPS(X)                                                      \
	X(CU_FILE_SUCCESS, 0)                                                  \
	X(CU_FILE_DRIVER_NOT_INITIALIZED, 5001)                                \
	X(CU_FILE_DRIVER_INVALID_PROPS, 5002)                                  \
	X(CU_FILE_DRIVER_UNSUPPORTED_LIMIT, 5003)                              \
	X(CU_FILE_DRIVER_VERSION_MISMATCH, 5004)                               \
	X(CU_FILE_DRIVER_VERSION_READ_ERROR, 5005)                             \
	X(CU_FILE_DRIVER_CLOSING, 5006)                                        \
	X(CU_FILE_PLATFORM_NOT_SUPPORTED, 5007)                                \
	X(CU_FILE_IO_NOT_SUPPORTED, 5008)                                      \
	X(CU_FILE_DEVICE_NOT_SUPPORTED, 5009)                                  \
	X(CU_FILE_NVFS_DRIVER_ERROR, 5010)                                     \
	X(CU_FILE_CUDA_DRIVER_ERROR, 5011)                                     \
	X(CU_FILE_CUDA_POINTER_INVALID, 5012)                                  \
	X(CU_FILE_CUDA_MEMORY_TYPE_INVALID, 5013)                              \
	X(CU_FILE_CUDA_POINTER_RANGE_ERROR, 5014)                              \
	X(CU_FILE_CUDA_CONTEXT_MISMATCH, 5015)                                 \
	X(CU_FILE_INVALID_MAPPING_SIZE, 5016)                                  \
	X(CU_FILE_INVALID_MAPPING_RANGE, 5017)                                 \
	X(CU_FILE_INVALID_FILE_TYPE, 5018)                                     \
	X(CU_FILE_INVALID_FILE_OPEN_FLAG, 5019)                                \
	X(CU_FILE_DIO_NOT_SET, 5020)                                           \
	X(CU_FILE_INVALID_VALUE, 5022)                                         \
	X(CU_FILE_MEMORY_ALREADY_REGISTERED, 5023)                             \
	X(CU_FILE_MEMORY_NOT_REGISTERED, 5024)                                 \
	X(CU_FILE_PERMISSION_DENIED, 5025)                                     \
	X(CU_FILE_DRIVER_ALREADY_OPEN, 5026)                                   \
	X(CU_FILE_HANDLE_NOT_REGISTERED, 5027)                                 \
	X(CU_FILE_HANDLE_ALREADY_REGISTERED, 5028)                             \
	X(CU_FILE_DEVICE_NOT_FOUND, 5029)                                      \
	X(CU_FILE_INTERNAL_ERROR, 5030)                                        \
	X(CU_FILE_GETNEWFD_FAILED, 5031)                                       \
	X(CU_FILE_NVFS_SETUP_ERROR, 5033)                                      \
	X(CU_FILE_IO_DISABLED, 5034)                                           \
	X(CU_FILE_GPU_MEMORY_PINNING_FAILED, 5036)                             \
	X(CU_FILE_IO_ERROR, 5044)                                              \
	X(CU_FILE_INVALID_CONTEXT_ERROR, 5047)                                 \
	X(CU_FILE_NVFS_INTERNAL_DRIVER_ERROR, 5048)                            \
	X(CU_FILE_BATCH_NOCOMPAT_ERROR, 5049)

enum gdr_cufile_op {
#define GDR_CUFILE_OP_ENUM(name, value) GDR_##name = value,
	GDR_CUFILE_OPS(GDR_CUFILE_OP_ENUM)
#undef GDR_CUFILE_OP_ENUM
};

/* CUfileError_t, returned by value: cuFile's cause, and CUDA's where the
 * cause is CU_FILE_CUDA_DRIVER_ERROR. */
struct gdr_cufile_error {
	int err;    /* enum CUfileOpError */
	int cu_err; /* CUresult */
};

/* CUfileDriverStatusFlags_t: bit positions of the driver properties'
 * dstatusflags, the storage nvidia-fs reaches on this node. 10 is not
 * used; 11 (NVMe P2P) is deprecated. */
#define GDR_CUFILE_FS_FLAGS(X)                                                 \
	X(LUSTRE, 0, "Lustre")                                                 \
	X(WEKAFS, 1, "WekaFS")                                                 \
	X(NFS, 2, "NFS")                                                       \
	X(GPFS, 3, "GPFS")                                                     \
	X(NVME, 4, "NVMe")                                                     \
	X(NVMEOF, 5, "NVMe-oF")                                                \
	X(SCSI, 6, "SCSI")                                                     \
	X(SCALEFLUX_CSD, 7, "ScaleFlux CSD")                                   \
	X(NVMESH, 8, "NVMesh")                                                 \
	X(BEEGFS, 9, "BeeGFS")                                                 \
	X(NVME_P2P, 11, "NVMe P2P")                                            \
	X(SCATEFS, 12, "ScateFS")                                              \
	X(VIRTIOFS, 13, "virtiofs")                                            \
	X(PANFS, 14, "PanFS")

enum gdr_cufile_fs {
#define GDR_CUFILE_FS_ENUM(name, bit, words) GDR_CUFILE_FS_##name = bit,
	GDR_CUFILE_FS_FLAGS(GDR_CUFILE_FS_ENUM)
#undef GDR_CUFILE_FS_ENUM
};

/* CUfileDriverControlFlags_t (dcontrolflags) and CUfileFeatureFlags_t
 * (fflags): bit positions. */
#define GDR_CUFILE_CTL_POLL 0
#define GDR_CUFILE_CTL_ALLOW_COMPAT 1
#define GDR_CUFILE_FEAT_DYN_ROUTING 0
#define GDR_CUFILE_FEAT_BATCH_IO 1
#define GDR_CUFILE_FEAT_STREAMS 2
#define GDR_CUFILE_FEAT_PARALLEL_IO 3
#define GDR_CUFILE_FEAT_P2P 4 /* PCI P2PDMA, without nvidia-fs */

/* CUfileDrvProps_t */
struct gdr_cufile_props {
	struct {
		unsigned int major_version, minor_version;
		size_t poll_thresh_size, max_direct_io_size;
		unsigned int dstatusflags, dcontrolflags;
	} nvfs;
	unsigned int fflags;
	unsigned int max_device_cache_size, per_buffer_cache_size;
	unsigned int max_device_pinned_mem_size;
	unsigned int max_batch_io_size, max_batch_io_timeout_msecs;
};

/* CUfileDescr_t with CU_FILE_HANDLE_TYPE_OPAQUE_FD. */
#define GDR_CUFILE_HANDLE_FD 1
struct gdr_cufile_descr {
	int type;
	union {
		int fd;
		void *handle;
	} handle;
	const void *fs_ops; /* NULL: the kernel's file system */
};

/* CUFileBoolConfigParameter_t, in enum order. */
#define GDR_CUFILE_PARAM_ALLOW_COMPAT 1 /* properties.allow_compat_mode */
#define GDR_CUFILE_PARAM_FORCE_COMPAT 2 /* force_compat_mode */
#define GDR_CUFILE_PARAM_USE_P2PDMA 7	/* use_pci_p2pdma */
/* CUFileStringConfigParameter_t: the log file's path. */
#define GDR_CUFILE_PARAM_LOGFILE_PATH 1

/* CUfilePerGpuStats_t: the same in 1.15 and 1.20. */
struct gdr_cufile_gpu_stats {
	unsigned char uuid[16];
	uint64_t read_bytes, read_bw, read_util, read_us;
	uint64_t n_total_reads, n_p2p_reads, n_nvfs_reads, n_posix_reads;
	uint64_t n_unaligned_reads, n_dr_reads, n_sparse, n_inline;
	uint64_t n_reads_err;
	uint64_t write_bytes, write_bw, write_util, write_us;
	uint64_t n_total_writes, n_p2p_writes, n_nvfs_writes, n_posix_writes;
	uint64_t n_unaligned_writes, n_dr_writes, n_writes_err;
	uint64_t n_mmap, n_mmap_ok, n_mmap_err, n_mmap_free, reg_bytes;
};
_Static_assert(sizeof(struct gdr_cufile_gpu_stats) == 248,
	       "CUfilePerGpuStats_t is 16 bytes and 29 counters");

#define GDR_CUFILE_STATS_GPUS 16
/*
 * Where the level 3 record's GPU count sits: after the level 2 record
 * (level 1, then two 32-entry histograms of 8 bytes). Level 1 is 512
 * bytes in 1.15 and 624 in 1.20 (7 more counters of two and 10 of one).
 */
#define GDR_CUFILE_L1_BYTES_1_15 512
#define GDR_CUFILE_L1_BYTES_1_20 624
#define GDR_CUFILE_L2_HIST_BYTES (2 * 32 * 8)
/* The room a level 3 record may need: the larger layout, with a margin
 * for a release that grows it again (the doctor then says it cannot read
 * the statistics rather than read past its buffer). */
#define GDR_CUFILE_L3_ROOM 16384

/* Entry points: name, whether the doctor needs it, the signature. */
#define GDR_CUFILE_FUNCS(X)                                                    \
	X(cuFileDriverOpen, 1, struct gdr_cufile_error, (void))                \
	X(cuFileDriverClose, 0, struct gdr_cufile_error, (void))               \
	X(cuFileDriverClose_v2, 0, struct gdr_cufile_error, (void))            \
	X(cuFileDriverGetProperties, 1, struct gdr_cufile_error,               \
	  (struct gdr_cufile_props * props))                                   \
	X(cuFileHandleRegister, 1, struct gdr_cufile_error,                    \
	  (void **fh, struct gdr_cufile_descr *descr))                         \
	X(cuFileHandleDeregister, 1, void, (void *fh))                         \
	X(cuFileBufRegister, 0, struct gdr_cufile_error,                       \
	  (const void *buf, size_t len, int flags))                            \
	X(cuFileBufDeregister, 0, struct gdr_cufile_error, (const void *buf))  \
	X(cuFileRead, 1, ssize_t,                                              \
	  (void *fh, void *buf, size_t size, off_t file_off, off_t buf_off))   \
	X(cuFileWrite, 1, ssize_t,                                             \
	  (void *fh, const void *buf, size_t size, off_t file_off,             \
	   off_t buf_off))                                                     \
	X(cuFileGetVersion, 0, struct gdr_cufile_error, (int *version))        \
	X(cuFileGetParameterBool, 0, struct gdr_cufile_error,                  \
	  (int param, bool *value))                                            \
	X(cuFileSetParameterString, 0, struct gdr_cufile_error,                \
	  (int param, const char *value))                                      \
	X(cuFileSetStatsLevel, 0, struct gdr_cufile_error, (int level))        \
	X(cuFileStatsStart, 0, struct gdr_cufile_error, (void))                \
	X(cuFileStatsStop, 0, struct gdr_cufile_error, (void))                 \
	X(cuFileStatsReset, 0, struct gdr_cufile_error, (void))                \
	X(cuFileGetStatsL3, 0, struct gdr_cufile_error, (void *stats))

#endif /* GDR_CUFILE_ABI_H */
