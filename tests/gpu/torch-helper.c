/* SPDX-License-Identifier: MIT */
/*
 * What the PyTorch tests (tests/gpu/test-torch.py) load with ctypes: a
 * registration cache on the real CUDA driver with the recording verbs
 * standing in for the NIC (as in the gpu suite), a ground truth for every
 * MR it hands out, the count of the driver's pointer questions, and a
 * small allocator for torch.cuda.memory.CUDAPluggableAllocator that
 * invalidates the cache before it frees (the trusted mode's promise).
 *
 * Ground truth: when the cache gives out an MR it registered just now,
 * every mapping under the MR's range is noted with its buffer id; an MR
 * served for [a, b) is stale when some mapping under [a, b) is not the one
 * noted there (RDMA through it would reach memory that is not there any
 * more). The rest of the MR's range is not what the get serves (the
 * cache's contract: docs/design.md).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "fakes.h"

/* What test-torch.py calls (ctypes). */
int gt_init(unsigned int flags);
const char *gt_error(void);
void *gt_get(uint64_t ptr, uint64_t len, int *result);
int gt_put(void *mr);
int gt_stale(void *mr, uint64_t a, uint64_t len);
int gt_invalidate(uint64_t ptr, uint64_t len);
int gt_purge(void);
long gt_queries(void);
void gt_stats(uint64_t *out);
int gt_live_mrs(void);
int gt_destroy(void);
void gt_set_invalidate_on_free(int on);
void *gt_malloc(ssize_t size, int device, void *stream);
void gt_free(void *ptr, ssize_t size, int device, void *stream);

#define MAX_MRS 4096
#define MAX_MAPS 128

struct mapping {
	uintptr_t base;
	size_t size;
	unsigned long long id;
};

struct truth {
	struct ibv_mr *mr;
	int n;
	struct mapping m[MAX_MAPS];
};

static struct truth truths[MAX_MRS];
static int num_truths;
static struct gdr_cuda_ops real; /* the driver, not counted */
static struct gdr_cache *cache;
static int invalidate_on_free = 1;
static char error[1024];

/* The mapping holding @a now, with its buffer id. */
static int mapping_at(uintptr_t a, struct mapping *m)
{
	CUdeviceptr base;
	size_t size;

	if (real.cuMemGetAddressRange(&base, &size, a) ||
	    real.cuPointerGetAttribute(&m->id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
				       a))
		return -1;
	m->base = (uintptr_t)base;
	m->size = size;
	return 0;
}

/* Every mapping under [a, b), noted. */
static int ids(uintptr_t a, uintptr_t b, struct truth *t)
{
	t->n = 0;
	while (a < b && t->n < MAX_MAPS) {
		if (mapping_at(a, &t->m[t->n]))
			return -1;
		a = t->m[t->n].base + t->m[t->n].size;
		t->n++;
	}
	return a < b ? -1 : 0;
}

/* The driver the process loaded (torch did), its calls not counted. */
static int load_real(void)
{
	char why[256];

	if (real.cuMemAlloc)
		return 0;
	if (gdr_cuda_load(&real, GDR_CUDA_NOLOAD, why, sizeof(why))) {
		snprintf(error, sizeof(error), "%s", why);
		return -1;
	}
	return 0;
}

static struct truth *truth_of(struct ibv_mr *mr)
{
	int i;

	for (i = 0; i < num_truths; i++)
		if (truths[i].mr == mr)
			return &truths[i];
	return NULL;
}

int gt_init(unsigned int flags)
{
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS,
				       .flags = flags };

	if (load_real())
		return -1;
	fakes_reset();
	fake_cu.count_queries = 1;
	fakes_install_real_cuda();
	fake_ibv.lean = 1;
	cache = gdr_cache_create(&fake_pd, &attr);
	if (!cache) {
		snprintf(error, sizeof(error), "%s", gdr_last_error());
		return -1;
	}
	return 0;
}

const char *gt_error(void)
{
	return error;
}

/* An MR over [ptr, +len); *@result: GDR_CACHE_RESULT_*. */
void *gt_get(uint64_t ptr, uint64_t len, int *result)
{
	struct gdr_cache_get_info info;
	struct ibv_mr *mr;
	struct truth *t;

	mr = gdr_cache_get_ex(cache, (void *)(uintptr_t)ptr, len, &info,
			      sizeof(info));
	*result = (int)info.result;
	if (!mr) {
		snprintf(error, sizeof(error), "%s", gdr_last_error());
		return NULL;
	}
	if (info.result != GDR_CACHE_RESULT_HIT) {
		t = truth_of(mr);
		if (!t && num_truths < MAX_MRS)
			t = &truths[num_truths++];
		if (t) {
			t->mr = mr;
			if (ids((uintptr_t)mr->addr,
				(uintptr_t)mr->addr + mr->length, t))
				t->n = -1;
		}
	}
	return mr;
}

int gt_put(void *mr)
{
	return gdr_cache_put(cache, mr);
}

/* 1 when @mr, served for [a, +len), no longer maps the memory there. */
int gt_stale(void *p, uint64_t a, uint64_t len)
{
	struct ibv_mr *mr = p;
	struct truth *t = truth_of(mr);
	struct mapping now;
	int i;

	if (!t || t->n < 0)
		return -1; /* no ground truth: the caller fails */
	for (i = 0; i < t->n; i++) {
		uintptr_t at = a > t->m[i].base ? a : t->m[i].base;

		if (at >= a + len || at >= t->m[i].base + t->m[i].size)
			continue;
		if (mapping_at(at, &now) || now.base != t->m[i].base ||
		    now.size != t->m[i].size || now.id != t->m[i].id)
			return 1;
	}
	return 0;
}

int gt_invalidate(uint64_t ptr, uint64_t len)
{
	return gdr_cache_invalidate(cache, (void *)(uintptr_t)ptr, len);
}

int gt_purge(void)
{
	return gdr_cache_purge(cache);
}

/* The driver's pointer questions so far (cuPointerGetAttribute(s),
 * cuMemGetAddressRange), the ground truth's own not counted. */
long gt_queries(void)
{
	return (long)fake_cu.ptr_attr_calls + fake_cu.ptr_attrs_calls +
	       fake_cu.range_calls;
}

/* hits, misses, stale, entries, in_use, uncached */
void gt_stats(uint64_t *out)
{
	struct gdr_cache_stats st;

	memset(&st, 0, sizeof(st));
	gdr_cache_query_stats(cache, &st, sizeof(st));
	out[0] = st.hits;
	out[1] = st.misses;
	out[2] = st.stale;
	out[3] = st.entries;
	out[4] = st.in_use;
	out[5] = st.uncached;
}

int gt_live_mrs(void)
{
	return fake_ibv.live_mrs;
}

int gt_destroy(void)
{
	int err = gdr_cache_destroy(cache);

	if (err)
		snprintf(error, sizeof(error), "%s", gdr_last_error());
	else
		cache = NULL; /* tensors freed later invalidate nothing */
	return err;
}

/* --- torch.cuda.memory.CUDAPluggableAllocator ------------------------------ */

void gt_set_invalidate_on_free(int on)
{
	invalidate_on_free = on;
}

void *gt_malloc(ssize_t size, int device, void *stream)
{
	CUdeviceptr p = 0;

	if (load_real() || real.cuMemAlloc(&p, (size_t)size))
		return NULL;
	return (void *)(uintptr_t)p;
}

void gt_free(void *ptr, ssize_t size, int device, void *stream)
{
	/* The promise of GDR_CACHE_TRUSTED: the cache hears first. */
	if (invalidate_on_free && cache)
		gdr_cache_invalidate(cache, ptr, (size_t)size);
	if (!load_real())
		real.cuMemFree((CUdeviceptr)(uintptr_t)ptr);
}
