/* SPDX-License-Identifier: MIT */
/*
 * The RDMA devices nearest a GPU (gdr_rank_nics): each device's PCI
 * function that moves the data (its Data Direct function where it has
 * one) placed against the GPU on the PCIe tree, from sysfs only, then
 * ordered by distance, ACS redirection and the caller's order. The doctor's
 * pair table and gdr-write-bw -d auto answer from the same ranking.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

#define KNOWN_MASK GDR_RANK_ATTR_BUS_ID
#define MAX_CTXS 1024

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int gdr_data_direct_bdf(const char *path, char *bdf, size_t n)
{
	if (!path[0] || gdr_bdf_normalize(base_name(path), bdf, n))
		return EINVAL;
	return gdr_pci_exists(bdf) ? 0 : ENOENT;
}

/*
 * The GPU's PCI address, without starting CUDA, and whether a Data Direct
 * registration could reach it (*@dd_ok): not with GPUDIRECT_PCIE_MAPPING=off,
 * nor, for a GPU named by ordinal, where the driver lacks the PCIe mapping
 * or the GPU answered NOT_SUPPORTED to it. 0, or an errno.
 */
static int gpu_address(const struct gdr_rank_attr *attr, char *bdf, size_t n,
		       bool *dd_ok, char *why, size_t wn)
{
	const struct gdr_cuda *c;
	char busid[32];
	CUdevice dev;

	*dd_ok = gdr_node_get()->pcie_policy != GDR_PCIE_OFF;
	if (attr->comp_mask & GDR_RANK_ATTR_BUS_ID) {
		if (!attr->gpu_bus_id ||
		    gdr_bdf_normalize(attr->gpu_bus_id, bdf, n)) {
			gdr_fmt(why, wn,
				"gdr_rank_attr.gpu_bus_id \"%.40s\" is not a "
				"PCI address; pass one like 0000:17:00.0",
				attr->gpu_bus_id ? attr->gpu_bus_id : "(null)");
			return EINVAL;
		}
	} else {
		c = gdr_cuda_get(false);
		if (c->state != GDR_CUDA_READY) {
			gdr_fmt(why, wn,
				"CUDA device %d: %s; initialise CUDA in this "
				"process first (cuInit), or name the GPU by "
				"gdr_rank_attr.gpu_bus_id",
				attr->cuda_device, c->why);
			return ENODEV;
		}
		/* Only the two calls the address needs: gdr_dev_get() would
		 * also ask the attributes and, on a 12.8 driver, NVML. */
		if (attr->cuda_device < 0 ||
		    attr->cuda_device >= c->num_devices ||
		    c->cu.cuDeviceGet(&dev, attr->cuda_device) !=
			    CUDA_SUCCESS ||
		    c->cu.cuDeviceGetPCIBusId(busid, (int)sizeof(busid), dev) !=
			    CUDA_SUCCESS ||
		    gdr_bdf_normalize(busid, bdf, n)) {
			gdr_fmt(why, wn,
				"CUDA device %d is not a GPU of this process "
				"(%d visible)",
				attr->cuda_device, c->num_devices);
			return ENODEV;
		}
		*dd_ok = *dd_ok && gdr_cuda_has_pcie_mapping(c) &&
			 gdr_pcie_map_get(attr->cuda_device) !=
				 GDR_PCIE_MAP_UNSUPPORTED;
	}
	if (!gdr_pci_exists(bdf)) {
		gdr_fmt(why, wn,
			"GPU %s is not in %s/bus/pci/devices; check the address "
			"(lspci -D), or mount the host's /sys in the container",
			bdf, gdr_seam()->sysfs_root);
		return ENODEV;
	}
	return 0;
}

/* Place device @ctx against the GPU at @gpu (@dd_ok: its Data Direct
 * function moves the data where it has one). */
static void place(struct ibv_context *ctx, const char *gpu, bool dd_ok,
		  const struct gdr_mlx5 *m, struct gdr_nic_rank *r)
{
	const struct gdr_seam *s = gdr_seam();
	const char *name = s->verbs.device_name(ctx->device);
	char path[128], acs[256];
	int g, k;

	r->distance = GDR_DIST_UNKNOWN;
	r->acs_redirect = -1;
	r->same_numa = -1;
	/* The Data Direct function moves the data where there is one, sysfs
	 * shows it and the GPU can take that path; else the device's own PCI
	 * function. */
	if (m->present && m->ops.is_supported && m->ops.data_direct_path &&
	    m->ops.is_supported(ctx->device) &&
	    m->ops.data_direct_path(ctx, path, sizeof(path)) == 0) {
		r->data_direct = 1;
		if (!dd_ok || gdr_data_direct_bdf(path, r->nic_bus_id,
						  sizeof(r->nic_bus_id)))
			r->nic_bus_id[0] = '\0';
	}
	if (!r->nic_bus_id[0] &&
	    (!name || gdr_nic_pci(name, r->nic_bus_id, sizeof(r->nic_bus_id))))
		r->nic_bus_id[0] = '\0';
	if (!r->nic_bus_id[0])
		return;
	r->distance = gdr_pci_distance(gpu, r->nic_bus_id);
	if (r->distance == GDR_DIST_UNKNOWN)
		return;
	r->acs_redirect =
		gdr_pci_acs_redirects(gpu, r->nic_bus_id, acs, sizeof(acs));
	g = gdr_pci_numa(gpu);
	k = gdr_pci_numa(r->nic_bus_id);
	if (g >= 0 && k >= 0)
		r->same_numa = g == k;
}

/* ACS: none redirecting first, then unknown, then redirecting. */
static int acs_rank(int acs)
{
	return acs == 0 ? 0 : acs < 0 ? 1 : 2;
}

static int before(const struct gdr_nic_rank *a, const struct gdr_nic_rank *b)
{
	if (a->distance != b->distance)
		return a->distance < b->distance;
	if (acs_rank(a->acs_redirect) != acs_rank(b->acs_redirect))
		return acs_rank(a->acs_redirect) < acs_rank(b->acs_redirect);
	return a->index < b->index;
}

static int check_rank_args(const struct gdr_rank_attr *attr,
			   struct ibv_context *const *ctxs, unsigned int num,
			   const struct gdr_nic_rank *out,
			   const unsigned int *num_out, size_t rank_size,
			   char *why, size_t n)
{
	unsigned int i;

	if (!attr || !ctxs || !num_out || (!out && *num_out)) {
		gdr_fmt(why, n,
			"gdr_rank_nics: attr, ctxs and num_out must not be "
			"NULL, nor out when *num_out is not 0");
		return EINVAL;
	}
	if (attr->comp_mask & ~(uint32_t)KNOWN_MASK) {
		gdr_fmt(why, n,
			"gdr_rank_attr.comp_mask has unknown bits 0x%x; this "
			"library knows 0x%x",
			attr->comp_mask & ~(uint32_t)KNOWN_MASK, KNOWN_MASK);
		return EINVAL;
	}
	if ((unsigned)attr->policy > GDR_RANK_ALL ||
	    (attr->policy == GDR_RANK_BEST_N && !attr->max)) {
		gdr_fmt(why, n,
			"gdr_rank_attr.policy %d%s: use GDR_RANK_CLOSEST, "
			"_BEST, _BEST_N with max >= 1, or _ALL",
			(int)attr->policy,
			attr->policy == GDR_RANK_BEST_N ? " with max 0" : "");
		return EINVAL;
	}
	if (rank_size < GDR_NIC_RANK_MIN_SIZE) {
		gdr_fmt(why, n,
			"rank_size %zu is smaller than struct gdr_nic_rank "
			"(%zu); pass sizeof(*out)",
			rank_size, (size_t)GDR_NIC_RANK_MIN_SIZE);
		return EINVAL;
	}
	if (*num_out && rank_size > (UINTPTR_MAX - (uintptr_t)out) / *num_out) {
		gdr_fmt(why, n,
			"rank_size %zu carries %u records past the end of the "
			"address space; pass sizeof(*out)",
			rank_size, *num_out);
		return EINVAL;
	}
	if (num == 0 || num > MAX_CTXS) {
		gdr_fmt(why, n,
			"gdr_rank_nics: num_ctxs is %u; pass 1 to %u open "
			"devices",
			num, MAX_CTXS);
		return EINVAL;
	}
	for (i = 0; i < num; i++)
		if (!ctxs[i] || !ctxs[i]->device) {
			gdr_fmt(why, n,
				"gdr_rank_nics: ctxs[%u] is not an open device "
				"(ibv_open_device)",
				i);
			return EINVAL;
		}
	return 0;
}

int gdr_rank(const struct gdr_rank_attr *attr, struct ibv_context *const *ctxs,
	     unsigned int num, struct gdr_nic_rank *out, unsigned int *num_out,
	     size_t rank_size, char *why, size_t n)
{
	char gpu[GDR_BDF_LEN];
	struct gdr_nic_rank *all, tmp;
	bool dd_ok;
	unsigned int i, j, chosen, room;
	const struct gdr_mlx5 *m;
	int err;

	err = check_rank_args(attr, ctxs, num, out, num_out, rank_size, why, n);
	if (!err)
		err = gpu_address(attr, gpu, sizeof(gpu), &dd_ok, why, n);
	if (err)
		return err;
	all = calloc(num, sizeof(*all));
	if (!all) {
		gdr_fmt(why, n, "out of memory ranking %u devices", num);
		return ENOMEM;
	}
	m = gdr_mlx5_get();
	for (i = 0; i < num; i++) {
		all[i].index = i;
		place(ctxs[i], gpu, dd_ok, m, &all[i]);
		/* insertion: stable, and num is small */
		for (j = i; j > 0 && before(&all[j], &all[j - 1]); j--) {
			tmp = all[j];
			all[j] = all[j - 1];
			all[j - 1] = tmp;
		}
	}
	switch (attr->policy) {
	case GDR_RANK_CLOSEST: chosen = 1; break;
	case GDR_RANK_BEST:
		for (chosen = 1;
		     chosen < num && all[chosen].distance == all[0].distance;
		     chosen++)
			;
		break;
	case GDR_RANK_BEST_N: chosen = attr->max < num ? attr->max : num; break;
	default: chosen = num; break;
	}
	room = *num_out < chosen ? *num_out : chosen;
	for (i = 0; i < room; i++) {
		char *rec = (char *)out + (size_t)i * rank_size;

		memcpy(rec, &all[i],
		       rank_size < sizeof(all[i]) ? rank_size : sizeof(all[i]));
		/* A caller built against a later release: the fields this one
		 * does not know read 0. */
		if (rank_size > sizeof(all[i]))
			memset(rec + sizeof(all[i]), 0,
			       rank_size - sizeof(all[i]));
	}
	*num_out = chosen;
	free(all);
	return 0;
}

GDR_PUBLIC int gdr_rank_nics(const struct gdr_rank_attr *attr,
			     struct ibv_context *const *ctxs,
			     unsigned int num_ctxs, struct gdr_nic_rank *out,
			     unsigned int *num_out, size_t rank_size)
{
	char why[GDR_MSG_LEN];
	int err;

	gdr_clear_error();
	err = gdr_rank(attr, ctxs, num_ctxs, out, num_out, rank_size, why,
		       sizeof(why));
	if (!err)
		return 0;
	gdr_fail(err, "%s", why);
	return -1;
}

GDR_PUBLIC const char *gdr_distance_str(enum gdr_distance distance)
{
	gdr_clear_error();
	return gdr_distance_name(distance);
}
