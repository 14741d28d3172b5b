/* SPDX-License-Identifier: MIT */
/*
 * The node report: every condition of checks.c evaluated for the node,
 * each CUDA device, each RDMA device and each GPU x RDMA device pair, and
 * for each pair the path a registration would take, found by walking the
 * same backend table gdr_register() walks. Printing is report-print.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

static void add(struct gdr_report *r, enum gdr_report_scope scope,
		const char *section, const char *key, enum gdr_verdict verdict,
		const char *remedy, const char *value)
{
	struct gdr_report_entry *it;

	if (r->oom)
		return;
	if (r->num == r->cap) {
		unsigned int cap = r->cap ? r->cap * 2 : 32;
		struct gdr_report_entry *n =
			realloc(r->items, cap * sizeof(*n));

		if (!n) {
			r->oom = true;
			return;
		}
		r->items = n;
		r->cap = cap;
	}
	it = &r->items[r->num];
	it->section = strdup(section);
	it->key = strdup(key);
	it->value = strdup(value);
	it->remedy = strdup(remedy);
	it->verdict = verdict;
	it->scope = scope;
	if (!it->section || !it->key || !it->value || !it->remedy) {
		free(it->section);
		free(it->key);
		free(it->value);
		free(it->remedy);
		r->oom = true;
		return;
	}
	r->num++;
}

void gdr_report_add(struct gdr_report *r, const char *section, const char *key,
		    enum gdr_verdict verdict, const char *remedy,
		    const char *value)
{
	add(r, GDR_REPORT_SCOPE_STORAGE, section, key, verdict, remedy, value);
}

/* Evaluate @checks for @s into section @section of @scope; "%d" keys take
 * @ordinal. */
static void add_checks(struct gdr_report *r, enum gdr_report_scope scope,
		       const char *section,
		       const struct gdr_check *const *checks,
		       const struct gdr_subject *s, int ordinal)
{
	struct gdr_eval e;
	char key[64];

	for (; *checks; checks++) {
		gdr_check_eval(*checks, s, &e, false);
		if (e.skip)
			continue;
		gdr_fmt(key, sizeof(key), (*checks)->key, ordinal);
		add(r, scope, section, key, e.verdict,
		    gdr_check_remedy(*checks, &e), e.value);
	}
}

/* What the ranking of a GPU's nearest devices shows of a device: its name
 * and PCI address (what gdr_nic_look() learns without asking the device anything). */
static void rank_look(struct ibv_context *ctx, struct gdr_nic_view *v)
{
	const struct gdr_seam *s = gdr_seam();
	const char *name;

	memset(v, 0, sizeof(*v));
	v->ctx = ctx;
	name = s->verbs.device_name(ctx->device);
	gdr_fmt(v->name, sizeof(v->name), "%s", name ? name : "rdma");
	if (gdr_nic_pci(v->name, v->bdf, sizeof(v->bdf)))
		v->bdf[0] = '\0';
}

/* One RDMA device surveyed: a PD to probe it, its PCI parent, port 1. */
void gdr_nic_look(struct ibv_context *ctx, struct gdr_nic_view *v)
{
	const struct gdr_seam *s = gdr_seam();
	struct ibv_pd *pd;
	int err;

	rank_look(ctx, v);
	pd = s->verbs.alloc_pd(ctx);
	if (pd) {
		gdr_nic_get(pd, &v->nic);
		v->have_nic = true;
		err = s->verbs.dealloc_pd(pd);
		if (err)
			gdr_debug("%s: ibv_dealloc_pd failed: %s", v->name,
				  gdr_errno_name(err));
	}
	memset(&v->port, 0, sizeof(v->port));
	v->have_port = s->verbs.query_port(ctx, 1, &v->port) == 0;
	if (s->verbs.query_device) {
		struct ibv_device_attr attr;

		memset(&attr, 0, sizeof(attr));
		if (s->verbs.query_device(ctx, &attr) == 0)
			v->max_mr_size = attr.max_mr_size;
	}
}

/* The largest GPU's memory in bytes, 0 when no GPU answers. */
static unsigned long long largest_gpu(const struct gdr_cuda *cuda)
{
	unsigned long long most = 0;
	int d;

	for (d = 0; cuda->state == GDR_CUDA_READY &&
		    cuda->cu.cuDeviceTotalMem && d < cuda->num_devices;
	     d++) {
		const struct gdr_dev *dev = gdr_dev_get(d);
		size_t bytes = 0;

		if (dev &&
		    cuda->cu.cuDeviceTotalMem(&bytes, dev->dev) ==
			    CUDA_SUCCESS &&
		    bytes > most)
			most = bytes;
	}
	return most;
}

static void subject_of(struct gdr_subject *s, const struct gdr_node *nd,
		       const struct gdr_host_facts *host,
		       const struct gdr_cuda *cuda,
		       const struct gdr_nic_view *v)
{
	memset(s, 0, sizeof(*s));
	s->node = nd;
	s->host = host;
	s->cuda = cuda;
	if (v) {
		s->nic = v->have_nic ? &v->nic : NULL;
		s->nic_name = v->name;
		s->nic_bdf = v->bdf;
		s->port = v->have_port ? &v->port : NULL;
		s->max_mr_size = v->max_mr_size;
	}
}

/*
 * The path device memory on GPU @s->dev would take with @s->nic: the first
 * device backend none of whose conditions fails. Its name, with the
 * titles of the ones passed over; else NULL with every reason in @why.
 */
static const struct gdr_backend *pair_path(const struct gdr_subject *s,
					   char *value, size_t vn, char *why,
					   size_t n)
{
	const struct gdr_backend *const *b;
	char reason[GDR_WHY_LEN], skipped[128] = "";
	const struct gdr_node *nd = s->node;

	why[0] = '\0';
	/* What this process's registrations would do: a bad GPUDIRECT_*
	 * fails every one of them; GPUDIRECT_PATH leaves paths out. */
	if (nd && nd->env_error[0]) {
		gdr_fmt(why, n, "%s", nd->env_error);
		gdr_fmt(value, vn, "none");
		return NULL;
	}
	for (b = gdr_backends; *b; b++) {
		if (!(*b)->device_memory)
			continue;
		if (nd && nd->env_mask &&
		    !(nd->env_mask & GDR_PATH_BIT((*b)->path))) {
			gdr_append(why, n, "%s%s: left out by GPUDIRECT_PATH",
				   why[0] ? "; " : "",
				   gdr_path_name((*b)->path));
			continue;
		}
		if (gdr_checks_first_failure((*b)->needs, s, reason,
					     sizeof(reason))) {
			gdr_append(why, n, "%s%s: %s", why[0] ? "; " : "",
				   gdr_path_name((*b)->path), reason);
			if (gdr_backend_applies(*b, s))
				gdr_append(skipped, sizeof(skipped), "%s%s",
					   skipped[0] ? ", " : "", (*b)->title);
			continue;
		}
		gdr_fmt(value, vn, "%s", gdr_path_name((*b)->path));
		if (skipped[0])
			gdr_append(value, vn, " (%s unavailable)", skipped);
		return *b;
	}
	gdr_fmt(value, vn, "none");
	return NULL;
}

/* A pair's remedy: the reason of each device path (Data Direct, DMA-BUF,
 * nvidia-peermem), joined. */
#define PAIR_WHY_LEN (3 * GDR_WHY_LEN + 32)

static void pair_items(struct gdr_report *r, const struct gdr_nic_view *v,
		       struct gdr_subject *s, int ordinal)
{
	char key[32], value[128], why[PAIR_WHY_LEN];

	s->dev = gdr_dev_get(ordinal);
	add_checks(r, GDR_REPORT_SCOPE_RDMA_DEVICE, v->name, gdr_pair_checks, s,
		   ordinal);
	gdr_fmt(key, sizeof(key), "path_gpu%d", ordinal);
	if (pair_path(s, value, sizeof(value), why, sizeof(why))) {
		r->usable = 1;
		add(r, GDR_REPORT_SCOPE_RDMA_DEVICE, v->name, key,
		    GDR_VERDICT_OK, "", value);
	} else {
		add(r, GDR_REPORT_SCOPE_RDMA_DEVICE, v->name, key,
		    GDR_VERDICT_MISSING, why, value);
	}
}

/*
 * The RDMA devices nearest GPU @d, as gdr_rank_nics(GDR_RANK_BEST) ranks
 * them: "mlx5_0, mlx5_1 (PIX)". Nothing when there are no devices.
 */
static void nearest_item(struct gdr_report *r, const char *section,
			 const struct gdr_dev *d,
			 const struct gdr_nic_view *views,
			 struct ibv_context *const *ctxs, unsigned int num)
{
	/* By ordinal: the report has started CUDA, and the GPU's answer to
	 * the PCIe mapping says whether Data Direct functions count. */
	struct gdr_rank_attr attr = { .cuda_device = d->ordinal,
				      .policy = GDR_RANK_BEST };
	struct gdr_nic_rank *best;
	char value[GDR_VALUE_LEN] = "", why[GDR_WHY_LEN];
	unsigned int i, n = num;

	if (!num)
		return;
	best = calloc(num, sizeof(*best));
	if (!best) {
		r->oom = true;
		return;
	}
	if (gdr_rank(&attr, ctxs, num, best, &n, sizeof(*best), why,
		     sizeof(why))) {
		add(r, GDR_REPORT_SCOPE_GPU, section, "nearest_rdma",
		    GDR_VERDICT_UNKNOWN, why, "unknown");
	} else if (best[0].distance == GDR_DIST_UNKNOWN) {
		add(r, GDR_REPORT_SCOPE_GPU, section, "nearest_rdma",
		    GDR_VERDICT_UNKNOWN,
		    "no RDMA device's PCI path is in sysfs (software devices "
		    "such as rxe have none)",
		    "unknown");
	} else {
		/* The distance always shows: names that do not fit before it
		 * are counted, not cut. */
		const char *dist = gdr_distance_name(best[0].distance);
		size_t room = sizeof(value) - strlen(dist) - 32;
		char name[GDR_VALUE_LEN];
		unsigned int shown = 0;

		for (i = 0; i < n && i < num; i++) {
			gdr_fmt(name, sizeof(name), "%s%s%s", i ? ", " : "",
				views[best[i].index].name,
				best[i].data_direct &&
						strcmp(best[i].nic_bus_id,
						       views[best[i].index].bdf)
					? " (its Data Direct function)"
					: "");
			if (strlen(value) + strlen(name) >= room)
				break;
			gdr_append(value, sizeof(value), "%s", name);
			shown++;
		}
		if (shown < n && shown < num)
			gdr_append(value, sizeof(value), " and %u more",
				   (n < num ? n : num) - shown);
		gdr_append(value, sizeof(value), ": %s", dist);
		add(r, GDR_REPORT_SCOPE_GPU, section, "nearest_rdma",
		    GDR_VERDICT_INFO, "", value);
	}
	free(best);
}

static void gpu_items(struct gdr_report *r, const struct gdr_node *nd,
		      const struct gdr_host_facts *host,
		      const struct gdr_cuda *cuda, int ordinal,
		      const struct gdr_nic_view *views,
		      struct ibv_context *const *ctxs, unsigned int num_ctxs)
{
	struct gdr_bar1_view bar1;
	struct gdr_subject s;
	char section[16];

	subject_of(&s, nd, host, cuda, NULL);
	s.dev = gdr_dev_get(ordinal);
	if (!s.dev)
		return;
	/* The report may start NVML: the caller asked for it. */
	gdr_bar1_read(s.dev, 0, &bar1);
	s.bar1 = &bar1;
	gdr_fmt(section, sizeof(section), "gpu%d", ordinal);
	add_checks(r, GDR_REPORT_SCOPE_GPU, section, gdr_gpu_checks, &s,
		   ordinal);
	nearest_item(r, section, s.dev, views, ctxs, num_ctxs);
}

/*
 * The report of @ctxs; each GPU's nearest RDMA devices are ranked among
 * @ranked (every device of the node where the report shows fewer).
 */
static int collect(struct gdr_report *r, struct ibv_context *const *ctxs,
		   unsigned int num_ctxs, struct ibv_context *const *ranked,
		   unsigned int num_ranked)
{
	const struct gdr_node *nd = gdr_node_get();
	/* The caller asked for a report: this is where CUDA is started. */
	const struct gdr_cuda *cuda = gdr_cuda_get(true);
	int ndev = cuda->state == GDR_CUDA_READY ? cuda->num_devices : 0;
	struct gdr_limits_view limits;
	struct gdr_cufile_view *cufile;
	struct gdr_host_facts *host;
	unsigned long long gpu_mem;
	struct gdr_nic_view *views, *rviews;
	struct gdr_subject s;
	bool all_dmabuf;
	unsigned int i;
	int d;

	views = num_ctxs ? calloc(num_ctxs, sizeof(*views)) : NULL;
	rviews = ranked != ctxs && num_ranked
			 ? calloc(num_ranked, sizeof(*rviews))
			 : views;
	host = malloc(sizeof(*host));
	if ((num_ctxs && !views) || (num_ranked && !rviews) || !host) {
		if (rviews != views)
			free(rviews);
		free(views);
		free(host);
		return ENOMEM;
	}
	gdr_host_facts_read(nd, host);
	for (i = 0; i < num_ctxs; i++)
		gdr_nic_look(ctxs[i], &views[i]);
	/* Devices only ranked: their names and PCI addresses, nothing
	 * asked of the devices themselves (a broken one beside the device
	 * shown must not hold up its report). */
	for (i = 0; rviews != views && i < num_ranked; i++)
		rank_look(ranked[i], &rviews[i]);

	/* Each GPU's answer to the PCIe mapping first: the paths below
	 * depend on it, the node's items as much as the pairs'. */
	for (d = 0; d < ndev; d++)
		gdr_pcie_map_probe(d);
	/* Whether every pair takes a DMA-BUF path (plain or Data Direct),
	 * for the node's peermem item. */
	all_dmabuf = ndev > 0 && num_ctxs > 0;
	for (i = 0; i < num_ctxs && all_dmabuf; i++) {
		char value[128], why[PAIR_WHY_LEN];
		const struct gdr_backend *b;

		subject_of(&s, nd, host, cuda, &views[i]);
		for (d = 0; d < ndev && all_dmabuf; d++) {
			s.dev = gdr_dev_get(d);
			b = pair_path(&s, value, sizeof(value), why,
				      sizeof(why));
			if (b != &gdr_backend_dmabuf &&
			    b != &gdr_backend_data_direct)
				all_dmabuf = false;
		}
	}
	subject_of(&s, nd, host, cuda, NULL);
	s.dmabuf_usable = all_dmabuf;
	s.num_nics = num_ctxs;
	gdr_limits_read(&limits);
	s.limits = &limits;
	cufile = malloc(sizeof(*cufile));
	if (cufile) {
		gdr_cufile_look(cufile, views, num_ctxs);
		s.cufile = cufile;
	}
	add_checks(r, GDR_REPORT_SCOPE_NODE, "node", gdr_node_checks, &s, 0);
	for (d = 0; d < ndev; d++)
		gpu_items(r, nd, host, cuda, d, rviews, ranked, num_ranked);
	gpu_mem = largest_gpu(cuda);
	for (i = 0; i < num_ctxs; i++) {
		subject_of(&s, nd, host, cuda, &views[i]);
		s.largest_gpu = gpu_mem;
		add_checks(r, GDR_REPORT_SCOPE_RDMA_DEVICE, views[i].name,
			   gdr_nic_checks, &s, 0);
		for (d = 0; d < ndev; d++)
			pair_items(r, &views[i], &s, d);
	}
	if (rviews != views)
		free(rviews);
	free(views);
	free(cufile);
	free(host);
	return r->oom ? ENOMEM : 0;
}

struct gdr_report *gdr_report_ranked(struct ibv_context *const *ctxs,
				     unsigned int num_ctxs,
				     struct ibv_context *const *ranked,
				     unsigned int num_ranked, uint32_t flags)
{
	struct gdr_report *r;
	unsigned int i;

	if (flags || (num_ctxs && !ctxs) || (num_ranked && !ranked))
		return gdr_fail(EINVAL, "gdr_report_create: flags must be 0 "
					"and ctxs must hold num_ctxs contexts");
	for (i = 0; i < num_ctxs; i++)
		if (!ctxs[i])
			return gdr_fail(EINVAL,
					"gdr_report_create: ctxs[%u] is NULL",
					i);
	for (i = 0; i < num_ranked; i++)
		if (!ranked[i])
			return gdr_fail(EINVAL,
					"gdr_report_create: the devices to "
					"rank hold a NULL context at %u",
					i);
	r = calloc(1, sizeof(*r));
	if (!r)
		return gdr_fail(ENOMEM, "out of memory for the report");
	if (collect(r, ctxs, num_ctxs, ranked, num_ranked)) {
		gdr_report_destroy(r);
		return gdr_fail(ENOMEM, "out of memory for the report");
	}
	return r;
}

GDR_PUBLIC struct gdr_report *gdr_report_create(struct ibv_context *const *ctxs,
						unsigned int num_ctxs,
						uint32_t flags)
{
	gdr_clear_error();
	return gdr_report_ranked(ctxs, num_ctxs, ctxs, num_ctxs, flags);
}

GDR_PUBLIC void gdr_report_destroy(struct gdr_report *r)
{
	unsigned int i;

	gdr_clear_error();
	if (!r)
		return;
	for (i = 0; i < r->num; i++) {
		free(r->items[i].section);
		free(r->items[i].key);
		free(r->items[i].value);
		free(r->items[i].remedy);
	}
	free(r->items);
	free(r);
}

GDR_PUBLIC unsigned int gdr_report_num_items(const struct gdr_report *r)
{
	gdr_clear_error();
	return r ? r->num : 0;
}

/*
 * gdr_report_item@@GPUDIRECT_0.2 copies into a caller-sized item; the
 * 0.1 symbol had no size, and its struct is the one this release has.
 */
GDR_PUBLIC int gdr_report_item_0_2(const struct gdr_report *r,
				   unsigned int index,
				   struct gdr_report_item *item,
				   size_t item_size);
GDR_SYMVER_DEFAULT(gdr_report_item_0_2, "gdr_report_item", "GPUDIRECT_0.2");

GDR_PUBLIC int gdr_report_item_0_2(const struct gdr_report *r,
				   unsigned int index,
				   struct gdr_report_item *item,
				   size_t item_size)
{
	struct gdr_report_item it;

	gdr_clear_error();
	if (!r || !item || index >= r->num ||
	    item_size < GDR_REPORT_ITEM_MIN_SIZE) {
		gdr_fail(EINVAL,
			 "gdr_report_item: report and item must not be NULL, "
			 "index must be below gdr_report_num_items() (%u) and "
			 "item_size at least %zu",
			 r ? r->num : 0, (size_t)GDR_REPORT_ITEM_MIN_SIZE);
		return -1;
	}
	memset(&it, 0, sizeof(it));
	it.section = r->items[index].section;
	it.key = r->items[index].key;
	it.value = r->items[index].value;
	it.verdict = r->items[index].verdict;
	it.remedy = r->items[index].remedy;
	it.scope = r->items[index].scope;
	/* What the caller's struct has room for: an older caller's ends
	 * before the fields it does not know. */
	memcpy(item, &it, item_size < sizeof(it) ? item_size : sizeof(it));
	return 0;
}

GDR_PUBLIC int gdr_report_item_0_1(const struct gdr_report *r,
				   unsigned int index,
				   struct gdr_report_item *item);
GDR_SYMVER_COMPAT(gdr_report_item_0_1, "gdr_report_item", "GPUDIRECT_0.1");

GDR_PUBLIC int gdr_report_item_0_1(const struct gdr_report *r,
				   unsigned int index,
				   struct gdr_report_item *item)
{
	/* 0.1's struct: the fields before scope. */
	return gdr_report_item_0_2(r, index, item, GDR_REPORT_ITEM_MIN_SIZE);
}

GDR_PUBLIC int gdr_report_usable(const struct gdr_report *r)
{
	gdr_clear_error();
	return r ? r->usable : 0;
}
