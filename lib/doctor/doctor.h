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
