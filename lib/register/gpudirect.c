/* SPDX-License-Identifier: MIT */
/*
 * The public entry points and the one place where a registration decides:
 * validate, classify, then walk the backends in order of preference.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "register.h"

const struct gdr_backend *const gdr_backends[] = {
	&gdr_backend_data_direct,
	&gdr_backend_dmabuf,
	&gdr_backend_peermem,
	&gdr_backend_host,
	NULL,
};

#define ATTR_KNOWN                                                             \
	(GDR_REG_ATTR_ACCESS | GDR_REG_ATTR_PATH_MASK | GDR_REG_ATTR_FLAGS)
#define FLAGS_KNOWN                                                            \
	(GDR_REG_STRICT_ORDERING | GDR_REG_SYNC_MEMOPS |                       \
	 GDR_REG_PCIE_MAPPING | GDR_REG_OWNER_RDMA_CAPABLE)
#define DEFAULT_ACCESS                                                         \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ)

/* Every path bit this library knows: the backends' list is constant, so
 * it is walked once (every registration asks). */
static uint32_t paths_known(void)
{
	static uint32_t known;
	const struct gdr_backend *const *b;
	uint32_t mask = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (mask)
		return mask;
	for (b = gdr_backends; *b; b++)
		mask |= GDR_PATH_BIT((*b)->path);
	__atomic_store_n(&known, mask, __ATOMIC_RELAXED);
	return mask;
}

GDR_PUBLIC const char *gdr_path_str(enum gdr_path path)
{
	gdr_clear_error();
	return gdr_path_name(path);
}

GDR_PUBLIC int gdr_path_parse(const char *name, enum gdr_path *path)
{
	gdr_clear_error();
	if (!name || !path) {
		gdr_fail(EINVAL, "gdr_path_parse: name and path must not be "
				 "NULL");
		return -1;
	}
	if (gdr_path_lookup(name, path) == 0)
		return 0;
	gdr_fail(EINVAL,
		 "gdr_path_parse: \"%.40s\" is not a path; use auto, "
		 "data-direct, dmabuf, peermem or host",
		 name);
	return -1;
}

GDR_PUBLIC const char *gdr_mem_type_str(enum gdr_mem_type type)
{
	gdr_clear_error();
	return gdr_mem_type_name(type);
}

static const char *result_str(enum gdr_attempt_result r)
{
	return r == GDR_ATTEMPT_USED	 ? "used"
	       : r == GDR_ATTEMPT_FAILED ? "failed"
					 : "skipped";
}

/* Why a path was skipped, when its words are not written yet. */
enum later {
	LATER_NONE = 0,	     /* written (or none) */
	LATER_CONDITION = 1, /* the first condition of the backend that fails */
	LATER_MASK = 2,	     /* not allowed by the path mask */
	LATER_MEMORY = 3,    /* the path is for the other kind of memory */
};

/* The reasons in full, for the message; the record keeps what fits. */
struct reasons {
	char text[GDR_REG_INFO_MAX_ATTEMPTS][GDR_WHY_LEN];
	bool moot[GDR_REG_INFO_MAX_ATTEMPTS]; /* the path does not apply */
	/* skipped for a condition: moot is asked only for a message */
	bool cond[GDR_REG_INFO_MAX_ATTEMPTS];
	/* skipped, reason not yet written (nobody asked): enum later */
	unsigned char later[GDR_REG_INFO_MAX_ATTEMPTS];
};

/* Copy @why into the record's attempt @i and the full text (@full: NULL
 * where nobody will read it). */
static void set_reason(struct gdr_reg_info *rec, struct reasons *full,
		       unsigned int i, const char *why)
{
	size_t n = strnlen(why, GDR_WHY_LEN - 1);

	if (full) {
		memcpy(full->text[i], why, n);
		full->text[i][n] = '\0';
	}
	if (n > sizeof(rec->attempts[i].reason) - 1)
		n = sizeof(rec->attempts[i].reason) - 1;
	memcpy(rec->attempts[i].reason, why, n);
	rec->attempts[i].reason[n] = '\0';
}

/* Write the reason of a skipped attempt now: @why is room for it. */
static void write_later(const struct gdr_req *req,
			const struct gdr_subject *subj, const char *mask_src,
			struct gdr_reg_info *rec, struct reasons *full,
			unsigned int i, char *why, size_t n)
{
	const struct gdr_backend *b = gdr_backends[i];

	why[0] = '\0';
	switch (full->later[i]) {
	case LATER_CONDITION:
		gdr_checks_first_failure(b->needs, subj, why, n);
		break;
	case LATER_MASK: gdr_fmt(why, n, "not allowed by %s", mask_src); break;
	case LATER_MEMORY:
		gdr_fmt(why, n,
			"this path registers %s memory, the buffer is %s "
			"memory",
			b->device_memory ? "device" : "host",
			gdr_mem_type_name(req->pi.type));
		break;
	default: return;
	}
	set_reason(rec, full, i, why);
	full->later[i] = LATER_NONE;
}

/*
 * Record what became of path @b. @why is its reason, or NULL when it is
 * written later (@later says how). @full: NULL where only the record is
 * kept (a decision recalled, which nobody reads in words).
 */
static void record(struct gdr_reg_info *rec, struct reasons *full,
		   const struct gdr_backend *b, enum gdr_attempt_result result,
		   int err, enum later later, const char *why)
{
	unsigned int i = rec->num_attempts;
	struct gdr_path_attempt *a;

	if (i >= GDR_REG_INFO_MAX_ATTEMPTS)
		return;
	a = &rec->attempts[rec->num_attempts++];
	a->path = b->path;
	a->result = result;
	a->err = gdr_errno_public(err);
	if (why && *why) {
		set_reason(rec, full, i, why);
	} else {
		a->reason[0] = '\0';
		if (full)
			full->text[i][0] = '\0';
	}
	if (full)
		full->later[i] = (unsigned char)later;
	gdr_debug("%s: %s%s%s", gdr_path_name(b->path), result_str(result),
		  why && *why ? ": " : "", why ? why : "");
}

/* The paths a caller built against 0.1 knows: 0.1 sized its record for
 * them and never sees a later one (nor is a later one tried for it). */
#define PATHS_0_1                                                              \
	(GDR_PATH_BIT(GDR_PATH_DMABUF) | GDR_PATH_BIT(GDR_PATH_PEERMEM) |      \
	 GDR_PATH_BIT(GDR_PATH_HOST))

static int check_args(struct ibv_pd *pd, void *ptr, size_t len,
		      const struct gdr_reg_attr *attr, uint32_t known,
		      bool imported, char *why, size_t n)
{
	if (attr && (attr->comp_mask & ~(uint32_t)ATTR_KNOWN)) {
		gdr_fmt(why, n,
			"gdr_reg_attr.comp_mask has unknown bits 0x%x; this "
			"library knows 0x%x: clear the others or use a newer "
			"libgpudirect",
			attr->comp_mask & ~(uint32_t)ATTR_KNOWN, ATTR_KNOWN);
		return EINVAL;
	}
	if (attr && (attr->comp_mask & GDR_REG_ATTR_FLAGS) &&
	    (attr->flags & ~(uint32_t)FLAGS_KNOWN)) {
		gdr_fmt(why, n,
			"gdr_reg_attr.flags has unknown bits 0x%x; use "
			"GDR_REG_STRICT_ORDERING, GDR_REG_SYNC_MEMOPS, "
			"GDR_REG_PCIE_MAPPING and GDR_REG_OWNER_RDMA_CAPABLE "
			"only",
			attr->flags & ~(uint32_t)FLAGS_KNOWN);
		return EINVAL;
	}
	if (attr && (attr->comp_mask & GDR_REG_ATTR_PATH_MASK) &&
	    (!attr->path_mask || (attr->path_mask & ~known))) {
		gdr_fmt(why, n,
			"gdr_reg_attr.path_mask 0x%x is empty or has bits of "
			"no path (this library knows 0x%x); combine "
			"GDR_PATH_BIT() of GDR_PATH_DATA_DIRECT, _DMABUF, "
			"_PEERMEM and _HOST",
			attr->path_mask, known);
		return EINVAL;
	}
	if (!pd) {
		gdr_fmt(why, n, "%s", gdr_msg_pd_null);
		return EINVAL;
	}
	/* An import's "pointer" is its iova, which may well be 0. */
	if (!ptr && !imported) {
		gdr_fmt(why, n, "ptr is NULL; pass the buffer to register");
		return EINVAL;
	}
	if (!len) {
		gdr_fmt(why, n, "len is 0; register at least one byte");
		return EINVAL;
	}
	if ((uintptr_t)ptr > UINTPTR_MAX - len) {
		gdr_fmt(why, n,
			"[%p, +%zu) wraps around the end of the address "
			"space; check the length",
			ptr, len);
		return EINVAL;
	}
	return 0;
}

static bool is_device(const struct gdr_ptr_info *pi)
{
	return pi->type == GDR_MEM_CUDA_DEVICE ||
	       pi->type == GDR_MEM_CUDA_POOL || pi->type == GDR_MEM_DMABUF;
}

/*
 * GDR_REG_SYNC_MEMOPS, the same on every device path: the allocation's
 * attribute, or for VMM memory (which refuses it) the current context's
 * flag. The caller asked for this side effect.
 */
static int sync_memops(const struct gdr_req *req, char *why, size_t n)
{
	const struct gdr_cuda_ops *cu = req->cu;
	const struct gdr_dev *d = gdr_dev_get(req->pi.device);
	unsigned int one = 1, flags = 0;
	CUcontext cur = NULL;
	CUdevice dev;
	char name[64];
	CUresult r;

	if (req->pi.ctx) {
		r = cu->cuPointerSetAttribute(&one,
					      CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
					      (CUdeviceptr)(uintptr_t)req->ptr);
		if (r == CUDA_SUCCESS)
			return 0;
		gdr_fmt(why, n,
			"GDR_REG_SYNC_MEMOPS: cuPointerSetAttribute(SYNC_MEMOPS) "
			"on %p failed with %s; register without the flag",
			req->ptr, gdr_cu_errname(cu, r, name, sizeof(name)));
		return gdr_cu_errno(r);
	}
	if (!cu->cuCtxSetFlags || !cu->cuCtxGetFlags) {
		gdr_fmt(why, n,
			"GDR_REG_SYNC_MEMOPS on VMM memory sets "
			"CU_CTX_SYNC_MEMOPS with cuCtxSetFlags, which this "
			"driver lacks (CUDA 12.1 or newer); upgrade the driver "
			"or register without the flag");
		return ENOSYS;
	}
	r = cu->cuCtxGetCurrent(&cur);
	if (r != CUDA_SUCCESS || !cur || !d ||
	    cu->cuCtxGetDevice(&dev) != CUDA_SUCCESS || dev != d->dev) {
		gdr_fmt(why, n,
			"GDR_REG_SYNC_MEMOPS on VMM memory sets "
			"CU_CTX_SYNC_MEMOPS on the current context, and no "
			"context of GPU %d is current: make one current "
			"(cuCtxSetCurrent) first, or register without the flag",
			req->pi.device);
		return EINVAL;
	}
	r = cu->cuCtxGetFlags(&flags);
	if (r == CUDA_SUCCESS && !(flags & CU_CTX_SYNC_MEMOPS))
		r = cu->cuCtxSetFlags(flags | CU_CTX_SYNC_MEMOPS);
	if (r == CUDA_SUCCESS)
		return 0;
	gdr_fmt(why, n,
		"GDR_REG_SYNC_MEMOPS: setting CU_CTX_SYNC_MEMOPS on the "
		"current context failed with %s; register without the flag",
		gdr_cu_errname(cu, r, name, sizeof(name)));
	return gdr_cu_errno(r);
}

/* Join the reasons of the paths that could have taken this memory. */
/* Whether @mask leaves @b the only path for memory of its kind (a path
 * forced by gdr_reg_attr.path_mask or by GPUDIRECT_PATH, whose mask keeps
 * host memory's path beside it). */
static bool only_path(uint32_t mask, const struct gdr_backend *b)
{
	const struct gdr_backend *const *o;

	for (o = gdr_backends; *o; o++)
		if (*o != b && (*o)->device_memory == b->device_memory &&
		    (mask & GDR_PATH_BIT((*o)->path)))
			return false;
	return (mask & GDR_PATH_BIT(b->path)) != 0;
}

static void explain(const struct gdr_reg_info *rec, const struct reasons *full,
		    bool device, uint32_t mask, char *buf, size_t n)
{
	const struct gdr_backend *const *b = gdr_backends;
	bool first = true;
	unsigned int i;

	for (i = 0; i < rec->num_attempts && b[i]; i++) {
		const struct gdr_path_attempt *a = &rec->attempts[i];

		/* A path for the other kind of memory says nothing unless
		 * the caller asked for it alone; one that does not concern
		 * this NIC at all (the record keeps its reason) says nothing
		 * unless it was the only path left for this memory. */
		if (b[i]->device_memory != device &&
		    mask != GDR_PATH_BIT(b[i]->path))
			continue;
		if (full->moot[i] && !only_path(mask, b[i]))
			continue;
		gdr_append(buf, n, "%s%s %s: %s", first ? "" : "; ",
			   gdr_path_name(a->path), result_str(a->result),
			   full->text[i]);
		first = false;
	}
}

/*
 * Whether path @b is skipped for @req, recorded if so (with its reason
 * when @texts): not in @mask, for the other kind of memory, or a condition
 * it needs fails.
 */
static bool skip_path(const struct gdr_req *req, const struct gdr_subject *subj,
		      const struct gdr_backend *b, uint32_t mask,
		      const char *mask_src, bool device,
		      struct gdr_reg_info *rec, struct reasons *full,
		      bool texts, char *why, size_t n)
{
	unsigned int at = rec->num_attempts;
	int e;

	if (!(mask & GDR_PATH_BIT(b->path))) {
		record(rec, full, b, GDR_ATTEMPT_SKIPPED, 0, LATER_MASK, NULL);
		if (texts)
			write_later(req, subj, mask_src, rec, full, at, why, n);
		return true;
	}
	if (b->device_memory != device) {
		record(rec, full, b, GDR_ATTEMPT_SKIPPED, EOPNOTSUPP,
		       LATER_MEMORY, NULL);
		if (texts)
			write_later(req, subj, mask_src, rec, full, at, why, n);
		return true;
	}
	e = gdr_checks_first_failure(b->needs, subj, texts ? why : NULL, n);
	if (!e)
		return false;
	if (at < GDR_REG_INFO_MAX_ATTEMPTS)
		full->cond[at] = true;
	record(rec, full, b, GDR_ATTEMPT_SKIPPED, e,
	       texts ? LATER_NONE : LATER_CONDITION, texts ? why : NULL);
	return true;
}

/* Whether a condition of @b can change within a call (gdr_check.changes). */
static bool needs_change(const struct gdr_backend *b)
{
	const struct gdr_check *const *c;

	for (c = b->needs; *c; c++)
		if ((*c)->changes)
			return true;
	return false;
}

/* Keep the decision that registered with backend @used for the call's
 * next PD (struct gdr_reg_decided says when it holds). */
static void remember(struct gdr_reg_decided *dec,
		     const struct gdr_reg_info *rec, const struct reasons *full,
		     const struct gdr_nic *nic, unsigned int used)
{
	unsigned int i;

	dec->valid = false;
	if (used >= GDR_REG_INFO_MAX_ATTEMPTS ||
	    needs_change(gdr_backends[used]))
		return;
	for (i = 0; i < used; i++) {
		if (rec->attempts[i].result != GDR_ATTEMPT_SKIPPED)
			return;
		dec->skipped[i].path = rec->attempts[i].path;
		dec->skipped[i].err = rec->attempts[i].err;
		dec->skipped[i].later = full->later[i];
		dec->skipped[i].cond = full->cond[i];
	}
	if (nic)
		dec->nic = *nic;
	dec->used = used;
	dec->valid = true;
}

/* The skipped paths of @dec into the record, as if walked again (@full:
 * NULL where the reasons will not be written). */
static void recall(const struct gdr_reg_decided *dec, struct gdr_reg_info *rec,
		   struct reasons *full)
{
	unsigned int i;

	for (i = 0; i < dec->used; i++) {
		rec->attempts[i].path = dec->skipped[i].path;
		rec->attempts[i].result = GDR_ATTEMPT_SKIPPED;
		rec->attempts[i].err = dec->skipped[i].err;
		rec->attempts[i].reason[0] = '\0';
		if (!full)
			continue;
		full->text[i][0] = '\0';
		full->later[i] = dec->skipped[i].later;
		full->cond[i] = dec->skipped[i].cond;
	}
	rec->num_attempts = dec->used;
}

/* A recalled path that failed: its errno and reason. */
struct recalled {
	int err;
	const char *why;
};

/*
 * Walk the backends. @texts: the caller wants every reason (it asked for
 * the record); otherwise the reasons of paths skipped for a condition are
 * written only if the registration fails, so that the steady state formats
 * no sentence nobody reads. @dec: a multi-PD call's last decision, or
 * NULL; @failed: that decision's path, tried first for this PD, failed
 * (the walk goes on after it), or NULL. @found: the PD's device (device
 * memory).
 */
static __attribute__((noinline)) struct ibv_mr *
try_paths(struct gdr_req *req, uint32_t mask, const char *mask_src,
	  struct gdr_reg_info *rec, bool texts, struct gdr_reg_decided *dec,
	  const struct recalled *failed, const struct gdr_nic *found, char *msg,
	  size_t msg_len, int *err_out)
{
	const struct gdr_backend *const *bp;
	bool device = is_device(&req->pi);
	struct gdr_subject subj;
	struct reasons full; /* texts written as recorded; flags below */
	char why[GDR_WHY_LEN];
	int first_hard = 0, e;
	struct ibv_mr *mr;
	unsigned int i, from = 0;

	memset(full.moot, 0, sizeof(full.moot));
	memset(full.cond, 0, sizeof(full.cond));
	memset(full.later, 0, sizeof(full.later));
	memset(&subj, 0, sizeof(subj));
	subj.node = req->node;
	subj.memo = req->memo;
	subj.nic = found;
	subj.imported = req->imp != NULL;
	if (device && !req->imp) {
		subj.cuda = gdr_cuda_get(false);
		subj.dev = gdr_dev_get(req->pi.device);
	}
	if (failed) {
		from = dec->used;
		recall(dec, rec, &full);
		record(rec, &full, gdr_backends[from], GDR_ATTEMPT_FAILED,
		       failed->err, LATER_NONE, failed->why);
		if (gdr_err_is_unsupported(failed->err))
			from++;
		else
			first_hard = failed->err;
	}
	for (bp = gdr_backends + from; *bp && !first_hard; bp++) {
		const struct gdr_backend *b = *bp;

		why[0] = '\0';
		if (skip_path(req, &subj, b, mask, mask_src, device, rec, &full,
			      texts, why, sizeof(why)))
			continue;
		mr = b->reg(req, why, sizeof(why));
		if (mr) {
			/* A backend may say how it registered (the PCIe
			 * mapping's policy). */
			i = rec->num_attempts;
			record(rec, &full, b, GDR_ATTEMPT_USED, 0, LATER_NONE,
			       why);
			rec->path = b->path;
			if (dec)
				remember(dec, rec, &full, found, i);
			return mr;
		}
		e = errno ? errno : EIO;
		record(rec, &full, b, GDR_ATTEMPT_FAILED, e, LATER_NONE, why);
		/* Only "not supported" moves on to the next path. */
		if (!gdr_err_is_unsupported(e))
			first_hard = e;
	}
	/* No path could take it (whichever "not supported" each said), or
	 * one failed for real. */
	*err_out = first_hard ? first_hard : EOPNOTSUPP;
	for (i = 0; i < rec->num_attempts && gdr_backends[i]; i++)
		if (full.cond[i])
			full.moot[i] =
				!gdr_backend_applies(gdr_backends[i], &subj);
	for (i = 0; i < rec->num_attempts && gdr_backends[i]; i++)
		write_later(req, &subj, mask_src, rec, &full, i, why,
			    sizeof(why));
	if (req->imp)
		gdr_fmt(msg, msg_len,
			"cannot register [0x%llx, +%zu) (dma-buf fd %d at "
			"offset %llu",
			(unsigned long long)req->iova, req->len,
			req->imp->fd[0] >= 0 ? req->imp->fd[0]
					     : req->imp->fd[1],
			(unsigned long long)req->imp->offset);
	else
		gdr_fmt(msg, msg_len, "cannot register [%p, +%zu) (%s",
			req->ptr, req->len, gdr_mem_type_name(req->pi.type));
	if (device && !req->imp)
		gdr_append(msg, msg_len, " on GPU %d", req->pi.device);
	gdr_append(msg, msg_len, ") with %s: ", gdr_pd_name(req->pd));
	explain(rec, &full, device, mask, msg, msg_len);
	return NULL;
}

/*
 * Decide and register. @dec: a multi-PD call's last decision, or NULL. A
 * PD whose device answered like that decision's tries its path first,
 * with nothing else set up (the record of the paths before it copied from
 * the decision); only if that fails, or there is no such decision, are
 * the backends walked.
 */
static struct ibv_mr *decide(struct gdr_req *req, uint32_t mask,
			     const char *mask_src, struct gdr_reg_info *rec,
			     bool texts, struct gdr_reg_decided *dec, char *msg,
			     size_t msg_len, int *err_out)
{
	const struct gdr_nic *found = NULL;
	const struct gdr_backend *b;
	struct recalled failed;
	char why[GDR_WHY_LEN];
	struct gdr_nic nic;
	struct ibv_mr *mr;

	/* Words only for someone who reads them: the record, the debug
	 * lines, or a failure (then written by the walk). Not the 4 KiB of
	 * texts: this runs on every registration. */
	texts = texts || __atomic_load_n(&gdr_debug_on, __ATOMIC_RELAXED);
	if (texts)
		dec = NULL; /* a decision recalled has no words */
	if (is_device(&req->pi)) {
		found = gdr_nic_find(req->pd, &nic);
		req->nic_pci = found->pci;
		if (found->max_mr_size && req->len > found->max_mr_size) {
			gdr_fmt(msg, msg_len,
				"cannot register [%p, +%zu) with %s: %zu bytes "
				"is longer than its max_mr_size, %llu bytes "
				"(ibv_query_device); register it in pieces no "
				"longer than that, one MR each (never one MR "
				"cut short: the rest would give remote access "
				"errors)",
				req->ptr, req->len, gdr_pd_name(req->pd),
				req->len, found->max_mr_size);
			*err_out = EINVAL;
			return NULL;
		}
	}
	if (!dec || !dec->valid ||
	    (found && !gdr_nic_same_answers(found, &dec->nic)))
		return try_paths(req, mask, mask_src, rec, texts, dec, NULL,
				 found, msg, msg_len, err_out);
	/* An earlier PD of the call whose device answered alike: its path,
	 * whose conditions held for that PD. */
	b = gdr_backends[dec->used];
	why[0] = '\0';
	mr = b->reg(req, why, sizeof(why));
	if (!mr) {
		failed.err = errno ? errno : EIO;
		failed.why = why;
		return try_paths(req, mask, mask_src, rec, texts, dec, &failed,
				 found, msg, msg_len, err_out);
	}
	/* The record as the walk would leave it; nobody reads its words
	 * (no texts), so none but a backend's note are written. */
	recall(dec, rec, NULL);
	rec->attempts[dec->used].path = b->path;
	rec->attempts[dec->used].result = GDR_ATTEMPT_USED;
	rec->attempts[dec->used].err = 0;
	rec->attempts[dec->used].reason[0] = '\0';
	if (why[0])
		set_reason(rec, NULL, dec->used, why);
	rec->num_attempts = dec->used + 1;
	rec->path = b->path;
	return mr;
}

/* The 0.1 struct gdr_reg_info had room for 4 attempts. */
#define INFO_SIZE_0_1                                                          \
	(GDR_REG_INFO_MIN_SIZE + 4 * sizeof(struct gdr_path_attempt))

/* Copy what fits of @rec into the caller's @info of @size bytes. */
void gdr_reg_give_info(const struct gdr_reg_info *rec,
		       struct gdr_reg_info *info, size_t size, bool v0_1)
{
	struct gdr_reg_info out = *rec;
	size_t room = (size - GDR_REG_INFO_MIN_SIZE) /
		      sizeof(struct gdr_path_attempt);
	unsigned int i, k = 0;

	/* A 0.1 caller knows the 0.1 paths only: it sees what 0.1 did. */
	if (v0_1) {
		for (i = 0; i < out.num_attempts; i++)
			if (out.attempts[i].path <= GDR_PATH_HOST)
				out.attempts[k++] = out.attempts[i];
		out.num_attempts = k;
	}

	if (out.num_attempts > room)
		out.num_attempts = (unsigned int)room;
	out.comp_mask = GDR_REG_INFO_BASIC;
	if (size >= offsetof(struct gdr_reg_info, export_index) +
			    sizeof(out.export_index))
		out.comp_mask |= GDR_REG_INFO_EXPORT;
	memcpy(info, &out,
	       GDR_REG_INFO_MIN_SIZE +
		       out.num_attempts * sizeof(struct gdr_path_attempt));
	/* Records @size bytes apart need not be aligned for an int. */
	if (out.comp_mask & GDR_REG_INFO_EXPORT)
		memcpy((char *)info +
			       offsetof(struct gdr_reg_info, export_index),
		       &out.export_index, sizeof(out.export_index));
}

void gdr_reg_call_init(struct gdr_reg_call *call)
{
	memset(call, 0, offsetof(struct gdr_reg_call, memo));
	call->memo.n = 0;
	call->decided.valid = false;
	gdr_exports_init(&call->xs);
}

void gdr_reg_call_end(struct gdr_reg_call *call)
{
	gdr_exports_close(&call->xs);
}

/*
 * What a registration settles before it decides: the arguments checked,
 * the path mask, the buffer classified (once per call), the request
 * (GDR_REG_SYNC_MEMOPS is applied after, once per call). 0, or an errno
 * with the reason in @why.
 */
static int settle(struct gdr_reg_call *call, struct ibv_pd *pd, void *ptr,
		  size_t len, const struct gdr_reg_attr *attr, uint32_t known,
		  struct gdr_reg_info *rec, struct gdr_req *req, char *why,
		  size_t n)
{
	const struct gdr_node *node;
	int err;

	call->mask_src = call->imp ? "a dma-buf, which has no address here to "
				     "pin or lock"
			 : known == paths_known()
				 ? "the default"
				 : "the 0.1 ABI this program was built against";
	call->mask = known;
	err = check_args(pd, ptr, len, attr, known, call->imp != NULL, why, n);
	if (err)
		return err;
	node = gdr_node_get();
	if (node->env_error[0]) {
		gdr_fmt(why, n, "%s", node->env_error);
		return node->oom ? ENOMEM : EINVAL;
	}
	if (attr && (attr->comp_mask & GDR_REG_ATTR_PATH_MASK)) {
		call->mask = attr->path_mask;
		call->mask_src = "gdr_reg_attr.path_mask";
	} else if (node->env_mask) {
		call->mask = node->env_mask & known;
		call->mask_src =
			call->imp ? "GPUDIRECT_PATH and a dma-buf's paths"
			: known == paths_known()
				? "GPUDIRECT_PATH"
				: "GPUDIRECT_PATH and the 0.1 ABI this "
				  "program was built against";
	}

	memset(req, 0, sizeof(*req));
	req->pd = pd;
	req->ptr = ptr;
	req->len = len;
	req->node = node;
	req->flags = attr && (attr->comp_mask & GDR_REG_ATTR_FLAGS)
			     ? attr->flags
			     : 0;
	req->xs = &call->xs;
	req->memo = &call->memo;
	req->imp = call->imp;
	req->iova = call->has_iova ? call->iova : (uint64_t)(uintptr_t)ptr;
	if (!call->classified) {
		err = gdr_classify(ptr, len,
				   req->flags & GDR_REG_OWNER_RDMA_CAPABLE,
				   &call->pi, why, n);
		if (err) {
			rec->mem_type = call->pi.type;
			rec->device = call->pi.device;
			return err;
		}
		call->classified = true;
	}
	req->pi = call->pi;
	rec->mem_type = req->pi.type;
	rec->device = req->pi.device;
	if (is_device(&req->pi) && !call->imp)
		req->cu = &gdr_cuda_table()->cu;
	if (attr && (attr->comp_mask & GDR_REG_ATTR_ACCESS)) {
		req->access = attr->access;
	} else {
		req->access = DEFAULT_ACCESS;
		if (is_device(&req->pi) &&
		    !(req->flags & GDR_REG_STRICT_ORDERING) &&
		    !node->strict_ordering)
			req->access |= IBV_ACCESS_RELAXED_ORDERING;
	}
	return 0;
}

int gdr_reg_one(struct gdr_reg_call *call, struct ibv_pd *pd, void *ptr,
		size_t len, const struct gdr_reg_attr *attr, uint32_t known,
		struct gdr_reg_info *rec, bool texts, struct ibv_mr **mr,
		char *why, size_t n)
{
	struct gdr_req one, *req = &one;
	int err;

	memset(rec, 0, GDR_REG_INFO_MIN_SIZE); /* attempts as recorded */
	rec->device = -1;
	rec->export_index = -1;
	call->xs.last = -1;
	*mr = NULL;
	why[0] = '\0';
	/* A later PD of a multi-PD call: the same buffer, attributes and
	 * mask, settled by the first PD; only the PD is new. */
	if (call->settled && pd) {
		req = &call->req;
		req->pd = pd;
		rec->mem_type = req->pi.type;
		rec->device = req->pi.device;
	} else {
		err = settle(call, pd, ptr, len, attr, known, rec, req, why, n);
		if (err)
			return err;
		if (call->reuse) {
			call->req = one;
			call->settled = true;
			req = &call->req;
		}
	}
	gdr_debug("register %p +%zu: %s%s%d, access 0x%x, paths 0x%x (%s)", ptr,
		  len, gdr_mem_type_name(req->pi.type),
		  req->pi.device >= 0 ? " on GPU " : " ", req->pi.device,
		  req->access, call->mask, call->mask_src);
	/* An import has no address of its own to set the attribute on (its
	 * attr is refused before this; kept out here all the same). */
	if ((req->flags & GDR_REG_SYNC_MEMOPS) && is_device(&req->pi) &&
	    !call->imp && !call->synced) {
		err = sync_memops(req, why, n);
		if (err)
			return err;
		call->synced = true;
	}
	*mr = decide(req, call->mask, call->mask_src, rec, texts,
		     call->reuse ? &call->decided : NULL, why, n, &err);
	if (*mr)
		rec->export_index = call->xs.last;
	return *mr ? 0 : err;
}

uint32_t gdr_reg_paths(void)
{
	return paths_known();
}

/*
 * Host memory with nothing to decide: no attributes, no debug lines
 * wanted. Only the host path can take it, so the
 * walk over the device paths (and its record, which nobody reads here) is
 * skipped. NULL when this does not apply or the registration failed: then
 * the whole walk runs, asks again and words the reason as always.
 */
static struct ibv_mr *host_direct(struct ibv_pd *pd, void *ptr, size_t len,
				  const struct gdr_reg_attr *attr,
				  const struct gdr_ptr_info *pi)
{
	const struct gdr_node *node;
	struct gdr_req req;
	char why[GDR_WHY_LEN];

	if (attr || !pi || is_device(pi) || !pd || !ptr || !len ||
	    (uintptr_t)ptr > UINTPTR_MAX - len)
		return NULL;
	/* After the probe, which reads GPUDIRECT_DEBUG. GPUDIRECT_PATH
	 * always leaves host memory its path (env.c). */
	node = gdr_node_get();
	if (node->env_error[0] || node->debug)
		return NULL;
	memset(&req, 0, sizeof(req));
	req.pd = pd;
	req.ptr = ptr;
	req.len = len;
	req.iova = (uint64_t)(uintptr_t)ptr;
	req.node = node;
	req.pi = *pi;
	req.access = DEFAULT_ACCESS;
	return gdr_backend_host.reg(&req, why, sizeof(why));
}

int gdr_register_internal(struct ibv_pd *pd, void *ptr, size_t len,
			  const struct gdr_reg_attr *attr,
			  const struct gdr_ptr_info *pi, struct ibv_mr **mr,
			  char *why, size_t n)
{
	struct gdr_reg_info rec;
	struct gdr_reg_call call;
	int err;

	*mr = host_direct(pd, ptr, len, attr, pi);
	if (*mr)
		return 0;
	gdr_reg_call_init(&call);
	if (pi) {
		call.pi = *pi;
		call.classified = true;
	}
	err = gdr_reg_one(&call, pd, ptr, len, attr, paths_known(), &rec, false,
			  mr, why, n);
	gdr_reg_call_end(&call);
	return gdr_errno_public(err);
}

struct ibv_mr *gdr_reg_small_info(size_t info_size)
{
	return gdr_fail(EINVAL,
			"info_size %zu is smaller than the first fields of "
			"struct gdr_reg_info (%zu); pass sizeof(*info)",
			info_size, (size_t)GDR_REG_INFO_MIN_SIZE);
}

int gdr_register_device_iova(struct ibv_pd *pd, void *ptr, size_t len,
			     uint64_t iova, int access, struct ibv_mr **mr,
			     char *why, size_t n)
{
	struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_ACCESS,
				     .access = access };
	struct gdr_reg_info rec;
	struct gdr_reg_call call;
	struct gdr_ptr_info pi;
	int err;

	*mr = NULL;
	if (n)
		why[0] = '\0';
	if (!pd || !ptr || !len)
		return ENXIO;
	err = gdr_classify(ptr, len, false, &pi, why, n);
	/* Device memory the library refuses (not RDMA capable, past its
	 * allocation, CUDA IPC): the reason, for the caller to say. */
	if (err &&
	    (pi.type == GDR_MEM_CUDA_DEVICE || pi.type == GDR_MEM_CUDA_POOL))
		return err;
	/* Anything else is not the library's: the caller passes it on. */
	if (err ||
	    (pi.type != GDR_MEM_CUDA_DEVICE && pi.type != GDR_MEM_CUDA_POOL)) {
		if (n)
			why[0] = '\0';
		return ENXIO;
	}
	gdr_reg_call_init(&call);
	call.has_iova = true;
	call.iova = iova;
	call.pi = pi;
	call.classified = true;
	err = gdr_reg_one(&call, pd, ptr, len, &attr, paths_known(), &rec,
			  false, mr, why, n);
	gdr_reg_call_end(&call);
	return gdr_errno_public(err);
}

static struct ibv_mr *register_ex(struct ibv_pd *pd, void *ptr, size_t len,
				  const struct gdr_reg_attr *attr,
				  struct gdr_reg_info *info, size_t info_size,
				  bool v0_1)
{
	struct gdr_reg_info rec;
	struct gdr_reg_call call;
	struct ibv_mr *mr;
	char why[GDR_MSG_LEN];
	int err;

	gdr_clear_error();
	if (info && info_size < GDR_REG_INFO_MIN_SIZE)
		return gdr_reg_small_info(info_size);
	gdr_reg_call_init(&call);
	err = gdr_reg_one(&call, pd, ptr, len, attr,
			  v0_1 ? PATHS_0_1 : paths_known(), &rec, info != NULL,
			  &mr, why, sizeof(why));
	gdr_reg_call_end(&call);
	if (info)
		gdr_reg_give_info(&rec, info, info_size, v0_1);
	if (!err)
		return mr;
	return gdr_fail(err, "%s", why);
}

/*
 * Versioned symbols: gdr_register_ex@@GPUDIRECT_0.2 is the current ABI
 * (caller-sized info); gdr_register_ex@GPUDIRECT_0.1 keeps programs built
 * against 0.1 working. Both names are listed in the version script.
 */
GDR_PUBLIC struct ibv_mr *gdr_register_ex_0_2(struct ibv_pd *pd, void *ptr,
					      size_t len,
					      const struct gdr_reg_attr *attr,
					      struct gdr_reg_info *info,
					      size_t info_size);
GDR_SYMVER_DEFAULT(gdr_register_ex_0_2, "gdr_register_ex", "GPUDIRECT_0.2");

GDR_PUBLIC struct ibv_mr *gdr_register_ex_0_2(struct ibv_pd *pd, void *ptr,
					      size_t len,
					      const struct gdr_reg_attr *attr,
					      struct gdr_reg_info *info,
					      size_t info_size)
{
	return register_ex(pd, ptr, len, attr, info, info_size, false);
}

/*
 * The 0.1 ABI: struct gdr_reg_info with room for 4 attempts, filled only
 * when the caller set GDR_REG_INFO_BASIC in its comp_mask. Programs built
 * against 0.1 bind to this symbol version.
 */

GDR_PUBLIC struct ibv_mr *gdr_register_ex_0_1(struct ibv_pd *pd, void *ptr,
					      size_t len,
					      const struct gdr_reg_attr *attr,
					      struct gdr_reg_info *info);
GDR_SYMVER_COMPAT(gdr_register_ex_0_1, "gdr_register_ex", "GPUDIRECT_0.1");

GDR_PUBLIC struct ibv_mr *gdr_register_ex_0_1(struct ibv_pd *pd, void *ptr,
					      size_t len,
					      const struct gdr_reg_attr *attr,
					      struct gdr_reg_info *info)
{
	if (info && !(info->comp_mask & GDR_REG_INFO_BASIC))
		info = NULL;
	return register_ex(pd, ptr, len, attr, info, INFO_SIZE_0_1, true);
}

GDR_PUBLIC struct ibv_mr *gdr_register(struct ibv_pd *pd, void *ptr, size_t len)
{
	return register_ex(pd, ptr, len, NULL, NULL, 0, false);
}

GDR_PUBLIC int gdr_deregister(struct ibv_mr *mr)
{
	char words[96];
	int err;

	gdr_clear_error();
	if (!mr) {
		gdr_fail(EINVAL, "mr is NULL; pass an MR from gdr_register()");
		return EINVAL;
	}
	err = gdr_seam()->verbs.dereg_mr(mr);
	if (err) {
		gdr_fail(err,
			 "ibv_dereg_mr failed with %s; the MR stays "
			 "registered: %s",
			 gdr_errno_words(err, words, sizeof(words)),
			 gdr_dereg_remedy(err));
		return gdr_errno_public(err);
	}
	return 0;
}
