/* SPDX-License-Identifier: MIT */
/*
 * The doctor's side (lib/doctor/): the node report and its facts, the
 * modelled node of snapshot replay, the private interface of gdr-info.
 * Nothing on the registration path calls it. Calls down to lib/register/
 * and below.
 */
#ifndef GDR_DOCTOR_H
#define GDR_DOCTOR_H

#include "register.h"
#include "model.h"

/* --- the node report (report.c, report-print.c, facts.c) -------------------------- */
struct gdr_report_entry {
	char *section, *key, *value, *remedy;
	enum gdr_verdict verdict;
	enum gdr_report_scope scope;
};

struct gdr_report {
	struct gdr_report_entry *items;
	unsigned int num, cap;
	int usable;
	bool oom;
};

/* gdr_report_create() of @ctxs, with each GPU's nearest RDMA devices
 * ranked among @ranked (gdr_report_create: @ctxs themselves). */
struct gdr_report *gdr_report_ranked(struct ibv_context *const *ctxs,
				     unsigned int num_ctxs,
				     struct ibv_context *const *ranked,
				     unsigned int num_ranked, uint32_t flags);
void gdr_report_print_text(const struct gdr_report *r, FILE *out);
/* "node", "gpu", "rdma_device" (the JSON's scope). */
const char *gdr_report_scope_name(enum gdr_report_scope scope);
void gdr_report_print_json(const struct gdr_report *r, FILE *out);
const char *gdr_verdict_str(enum gdr_verdict v);

/* What the doctor knows of one RDMA device (report.c): surveyed once, by
 * the report and by a snapshot's capture alike. */
struct gdr_nic_view {
	struct ibv_context *ctx;
	char name[IBV_SYSFS_NAME_MAX + 8];
	struct gdr_nic nic;
	bool have_nic; /* a PD could be allocated to probe it */
	char bdf[GDR_BDF_LEN];
	struct ibv_port_attr port;
	bool have_port;
	unsigned long long max_mr_size; /* ibv_query_device; 0 unknown */
};
void gdr_nic_look(struct ibv_context *ctx, struct gdr_nic_view *v);

/* Read cufile.json and match its addresses to @views' netdevs (facts.c). */
void gdr_cufile_look(struct gdr_cufile_view *v,
		     const struct gdr_nic_view *views, unsigned int num);

/* The report's items, in order, per scope; NULL-terminated (facts.c). */
extern const struct gdr_check *const gdr_node_checks[];
/* GPUDirect Storage's (facts-gds.c), in the node's list. */
extern const struct gdr_check gdr_check_gds, gdr_check_gds_compat,
	gdr_check_gds_addrs;
extern const struct gdr_check *const gdr_gpu_checks[];
extern const struct gdr_check *const gdr_nic_checks[];
extern const struct gdr_check *const gdr_pair_checks[];

/* Add a storage item (scope GDR_REPORT_SCOPE_STORAGE: section "storage"
 * or "storageN") to @r (report.c): its strings copied. */
void gdr_report_add(struct gdr_report *r, const char *section, const char *key,
		    enum gdr_verdict verdict, const char *remedy,
		    const char *value);

/* --- GPUDirect Storage, per path (storage*.c) ----------------------------- */
/* What carries a mount's bytes. */
enum gdr_transport {
	GDR_T_UNKNOWN = 0,
	GDR_T_NFS_RDMA,
	GDR_T_NFS_TCP, /* or UDP */
	GDR_T_NVMEOF_RDMA,
	GDR_T_NVMEOF_TCP,
	GDR_T_NVMEOF_FC,
	GDR_T_NVME_LOCAL, /* on PCIe */
	GDR_T_NVME_UNKNOWN,
	GDR_T_SCSI,
	GDR_T_BLOCK, /* another block device (virtio, device-mapper, md) */
	GDR_T_LUSTRE,
	GDR_T_GPFS,
	GDR_T_WEKAFS,
	GDR_T_BEEGFS,
	GDR_T_VIRTIOFS,
	GDR_T_OVERLAY,
	GDR_T_MEMORY, /* tmpfs, ramfs */
	GDR_T_OTHER,
};

/* The mount under a path and its transport (storage-mount.c). */
struct gdr_storage_mount {
	int err;  /* of reading the table; ENOENT: no line is its mount */
	bool cut; /* the table was longer than what was read */
	unsigned int bad_lines; /* lines not in mountinfo's form */
	struct gdr_mount m;
	enum gdr_transport transport;
	bool rdma; /* the transport is RDMA (NFS, NVMe-oF, Lustre o2ib) */
	char detail[512]; /* "nvme1n1 on nvme1 (transport rdma, traddr=...)" */
	char server[64];  /* the storage server's address, "" none */
	char blockdev[64];
	char why[160]; /* why the transport is not known */
};
/* Read this process's mount table through the seam and find @p's mount
 * (by mount id, else device and longest mount point), then its
 * transport from the options and sysfs. */
void gdr_storage_mount_look(const struct gdr_storage_path *p,
			    struct gdr_storage_mount *sm);

/* The live check (storage-io.c): look at each of @paths, load cuFile,
 * open its driver, read its properties, and read and write each path
 * through it (@bytes each, 0: GDS_IO_BYTES), every step bounded by
 * @timeout_ms (0: GDS_IO_STEP_TIMEOUT_S). Fills @st. 0 or ENOMEM. */
int gdr_storage_check(struct gdr_storage *st, const char *const *paths,
		      unsigned int num, unsigned long long bytes,
		      unsigned int timeout_ms, int gpu);
/* A step did not return in time: a thread is still inside it. */
bool gdr_storage_stuck(void);
/* The storage items of @st into @r (storage.c): a section "storage" for
 * cuFile, "storageN" per path; the RDMA device found among @ctxs. */
int gdr_storage_report(struct gdr_report *r, const struct gdr_storage *st,
		       struct ibv_context *const *ctxs, unsigned int num);

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
int gdr_model_gpu_bar1(const char *busid, unsigned int flags,
		       struct gdr_bar1 *b, char *why, size_t n);
int gdr_model_limits(struct gdr_limits *l, char *why, size_t n);
int gdr_model_if_addrs(const char *dev, char *out, size_t n);
int gdr_model_verbs_files(char *ibv, size_t n1, char *mlx5, size_t n2);
/* Make @m the model those tables answer from (it must outlive them). */
void gdr_model_use(const struct gdr_model *m);

#endif /* GDR_DOCTOR_H */
