/* SPDX-License-Identifier: MIT */
/*
 * What device memory is under a range (the mappings and the buffer ids
 * of the physical allocations mapped there, as the driver reports them)
 * and whether a cached entry still registers that memory: the validated
 * mode's check on every hit.
 */
#include "cache-int.h"

/*
 * Are the mappings under [a, b) still the physical allocations @e
 * registered? One buffer-id query per mapping the range touches. When not,
 * *@gone is the extent of the mapping that changed.
 */
bool cache_still_valid(const struct gdr_cuda_ops *cu, const struct entry *e,
		       uintptr_t a, uintptr_t b, struct gdr_range *gone)
{
	const struct map *m = maps_of(e);
	unsigned long long id;
	unsigned int i;

	for (i = 0; i < e->num_maps; i++) {
		uintptr_t at = a > m[i].start ? a : m[i].start;

		if (at >= b || at >= m[i].start + m[i].size)
			continue;
		if (cu->cuPointerGetAttribute(
			    &id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
			    (CUdeviceptr)at) != CUDA_SUCCESS ||
		    id != m[i].id) {
			gone->start = m[i].start;
			gone->end = m[i].start + m[i].size;
			return false;
		}
	}
	return true;
}

/*
 * The mappings under [a, b) as the driver reports them, into @m (room for
 * @max). Their number, or -EINVAL when the driver cannot describe them (a
 * hole, no entry point), -E2BIG past @max.
 */
static int describe(const struct gdr_cuda_ops *cu, uintptr_t a, uintptr_t b,
		    struct map *m, int max)
{
	uintptr_t at = a;
	int n = 0;

	if (!cu->cuMemGetAddressRange)
		return -EINVAL;
	while (at < b) {
		CUdeviceptr base = 0;
		size_t size = 0;
		unsigned long long id = 0;

		if (n == max)
			return -E2BIG;
		if (cu->cuMemGetAddressRange(&base, &size, (CUdeviceptr)at) !=
			    CUDA_SUCCESS ||
		    !size || (uintptr_t)base > at ||
		    (uintptr_t)base + size <= at ||
		    cu->cuPointerGetAttribute(&id,
					      CU_POINTER_ATTRIBUTE_BUFFER_ID,
					      (CUdeviceptr)at) != CUDA_SUCCESS)
			return -EINVAL;
		m[n].start = (uintptr_t)base;
		m[n].size = size;
		m[n].id = id;
		n++;
		at = (uintptr_t)base + size;
	}
	return n;
}

/*
 * Classify and describe [ptr, +len) with no lock held. 0, or an errno with
 * the message in @why.
 */
int cache_plan_miss(struct gdr_cache *c, void *ptr, size_t len, struct plan *p,
		    char *why, size_t n)
{
	const struct gdr_cuda_lib *lib;
	struct gdr_ptr_info *pi = &p->pi;
	uintptr_t a = (uintptr_t)ptr, b = a + len, wa, wb;
	int err, k;

	p->a = a;
	p->b = b;
	p->num_maps = 0;
	p->why[0] = '\0';
	err = gdr_classify(ptr, len,
			   c->have_reg &&
				   (c->reg.comp_mask & GDR_REG_ATTR_FLAGS) &&
				   (c->reg.flags & GDR_REG_OWNER_RDMA_CAPABLE),
			   pi, why, n);
	if (err)
		return err;
	p->device = pi->type == GDR_MEM_CUDA_DEVICE ||
		    pi->type == GDR_MEM_CUDA_POOL;
	if (!p->device) {
		p->kind = (c->flags & GDR_CACHE_HOST) ? K_HOST : K_PASS;
		if (p->kind == K_PASS)
			gdr_fmt(p->why, sizeof(p->why),
				"host memory is cached only with "
				"GDR_CACHE_HOST: registered for this get "
				"only");
		return 0;
	}
	p->kind = (c->flags & GDR_CACHE_TRUSTED) ? K_TRUSTED : K_VALIDATED;
	lib = gdr_cuda_table();
	k = lib ? describe(&lib->cu, a, b, p->maps, GDR_CACHE_MAX_MAPPINGS)
		: -EINVAL;
	if (k < 0) {
		p->kind = K_PASS;
		if (k == -E2BIG)
			gdr_fmt(p->why, sizeof(p->why),
				"[%p, +%zu) spans more than %d mappings (VMM "
				"chunks), each a driver query on every hit: "
				"registered for this get only",
				ptr, len, GDR_CACHE_MAX_MAPPINGS);
		else
			gdr_fmt(p->why, sizeof(p->why),
				"the CUDA driver does not describe the "
				"mappings under [%p, +%zu) "
				"(cuMemGetAddressRange): registered for this "
				"get only",
				ptr, len);
		return 0;
	}
	p->num_maps = k;
	/* The whole allocation: every mapping the buffer touches (a
	 * cuMemAlloc or pool allocation, or the VMM chunks), not the VMM
	 * reservation, if at most max_reg_ratio times the buffer. */
	wa = p->maps[0].start;
	wb = p->maps[k - 1].start + p->maps[k - 1].size;
	if ((c->flags & GDR_CACHE_WHOLE_ALLOC) &&
	    (!c->max_reg_ratio || (wb - wa) / c->max_reg_ratio < len ||
	     ((wb - wa) / c->max_reg_ratio == len &&
	      (wb - wa) % c->max_reg_ratio == 0))) {
		struct gdr_nic spare;
		unsigned long long most =
			gdr_nic_find(c->pd, &spare)->max_mr_size;

		/* Never wider than the NIC takes: the buffer alone may fit
		 * where its whole allocation does not. */
		if (!most || wb - wa <= most) {
			p->a = wa;
			p->b = wb;
		}
	}
	return 0;
}

/* Store @p's mappings in @e. 0 or ENOMEM. */
int cache_maps_set(struct entry *e, const struct plan *p)
{
	if (p->num_maps > 1) {
		e->u.many = malloc((size_t)p->num_maps * sizeof(struct map));
		if (!e->u.many)
			return ENOMEM;
		memcpy(e->u.many, p->maps,
		       (size_t)p->num_maps * sizeof(struct map));
	} else if (p->num_maps == 1) {
		e->u.one = p->maps[0];
	}
	e->num_maps = (uint16_t)p->num_maps;
	return 0;
}

/* A validated hit still maps what it registered (the common case; a
 * stale one goes the slow way, which asks again and drops it). */
bool cache_hit_valid(const struct entry *e, uintptr_t a, uintptr_t b)
{
	const struct gdr_cuda_lib *lib = gdr_cuda_table();
	struct gdr_range gone;

	return lib && cache_still_valid(&lib->cu, e, a, b, &gone);
}
