/* SPDX-License-Identifier: MIT */
/*
 * The cache beside UCX's ucs_rcache, in one program, on the CPU: both
 * driven with the same fake registration (the fake verbs' ibv_reg_mr: a
 * calloc'd MR), host memory (GDR_CACHE_HOST: no CUDA call), the same
 * addresses in the same order. Cases: a hit (get + put) on one entry, on
 * 1k entries, on 100k entries 64 KiB apart, on 100k heap-like ranges
 * (random sizes packed like malloc's), and a miss (get, put, invalidate:
 * a registration and a deregistration each time). The process has not
 * loaded the CUDA driver (a process registering host memory). Each round times both
 * (CPU time of the thread), the order alternating by round; the ratio
 * ours/UCX of each round, then the median and quartiles of the ratios.
 *
 * UCX's parameters: alignment 16 (UCS_RCACHE_MIN_ALIGNMENT), no memory
 * events (the caller invalidates, as ours), no limits.
 *
 * Skips (77) without libucx-dev (UCX 1.13's ucs/memory/rcache.h).
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "check.h"
#include "fakes.h"

#ifdef HAVE_UCX
#include <ucs/memory/rcache.h>
#endif

#define ROUNDS 21
#define BIG 100000

#ifndef HAVE_UCX
int main(void)
{
	printf("SKIP: built without UCX (apt-get install libucx-dev, then "
	       "reconfigure): nothing to compare with\n");
	return 77;
}
#else

static struct fixture fx;

static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* --- UCX's side, with the same fake registration ------------------------- */

struct ucx_region {
	ucs_rcache_region_t super;
	struct ibv_mr *mr;
};

static ucs_status_t u_reg(void *ctx, ucs_rcache_t *rc, void *arg,
			  ucs_rcache_region_t *r, uint16_t flags)
{
	struct ucx_region *u = (struct ucx_region *)r;
	size_t len = r->super.end - r->super.start;

	u->mr = gdr_seam()->verbs.reg_mr_iova2(&fake_pd, (void *)r->super.start,
					       len, r->super.start, 0);
	return u->mr ? UCS_OK : UCS_ERR_IO_ERROR;
}

static void u_dereg(void *ctx, ucs_rcache_t *rc, ucs_rcache_region_t *r)
{
	gdr_seam()->verbs.dereg_mr(((struct ucx_region *)r)->mr);
}

static void u_dump(void *ctx, ucs_rcache_t *rc, ucs_rcache_region_t *r,
		   char *buf, size_t max)
{
	if (max)
		buf[0] = '\0';
}

static void u_done(void *arg)
{
}

static const ucs_rcache_ops_t u_ops = { u_reg, u_dereg, u_dump };

static ucs_rcache_t *ucx_new(void)
{
	ucs_rcache_params_t p;
	ucs_rcache_t *rc;

	memset(&p, 0, sizeof(p));
	p.region_struct_size = sizeof(struct ucx_region);
	p.alignment = UCS_RCACHE_MIN_ALIGNMENT;
	p.max_alignment = 4096;
	p.ucm_events = 0;
	p.ops = &u_ops;
	p.max_regions = (unsigned long)-1;
	p.max_size = (size_t)-1;
	p.max_unreleased = (size_t)-1;
	if (ucs_rcache_create(&p, "bench", NULL, &rc) != UCS_OK)
		exit(1);
	return rc;
}

/* --- the work ---------------------------------------------------------- */

static char *addr[BIG];
static size_t len[BIG];
static size_t num, stride_at;

/* The next address: one entry, or a prime stride over all of them. */
static size_t next(void)
{
	if (num == 1)
		return 0;
	stride_at = (stride_at + 7919) % num;
	return stride_at;
}

static void ours_hits(struct gdr_cache *c, int k)
{
	while (k--) {
		size_t i = next();
		struct ibv_mr *mr = gdr_cache_get(c, addr[i], len[i]);

		if (!mr || gdr_cache_put(c, mr))
			exit(1);
	}
}

static void ucx_hits(ucs_rcache_t *rc, int k)
{
	ucs_rcache_region_t *r;

	while (k--) {
		size_t i = next();

		if (ucs_rcache_get(rc, addr[i], len[i], PROT_READ | PROT_WRITE,
				   NULL, &r) != UCS_OK)
			exit(1);
		ucs_rcache_region_put(rc, r);
	}
}

static char *fresh_base;
static size_t fresh_at;

/* Misses on ranges not seen before: each undone by an invalidate (@undo),
 * or, as a transport meets them, left in the cache (the round's end
 * empties it, untimed). */
static void ours_misses(struct gdr_cache *c, int k, int undo)
{
	while (k--) {
		char *p = fresh_base + (fresh_at++ % BIG) * 4096;
		struct ibv_mr *mr = gdr_cache_get(c, p, 4096);

		if (!mr || gdr_cache_put(c, mr) ||
		    (undo && gdr_cache_invalidate(c, p, 4096)))
			exit(1);
	}
}

static void ucx_misses(ucs_rcache_t *rc, int k, int undo)
{
	ucs_rcache_region_t *r;

	while (k--) {
		char *p = fresh_base + (fresh_at++ % BIG) * 4096;

		if (ucs_rcache_get(rc, p, 4096, PROT_READ | PROT_WRITE, NULL,
				   &r) != UCS_OK)
			exit(1);
		if (undo)
			ucs_rcache_region_invalidate(rc, r, u_done, NULL);
		ucs_rcache_region_put(rc, r);
	}
}

static const char *only; /* argv[1]: run the cases starting with it */

/* One case: rounds of @k operations each, alternating who goes first.
 * @misses: 0 hits, 1 misses undone by an invalidate, 2 misses whose
 * entries stay (both caches emptied between rounds, untimed). */
static void run(const char *name, int misses, int k)
{
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS |
						    GDR_CACHE_ATTR_MAX_ENTRIES,
				       .flags = GDR_CACHE_HOST,
				       .max_entries = 0 };
	struct gdr_cache *c = gdr_cache_create(&fake_pd, &attr);
	ucs_rcache_t *rc = ucx_new();
	double ratio[ROUNDS], ours[ROUNDS], theirs[ROUNDS], t0;
	size_t i;
	int r, side;

	if (!c)
		exit(1);
	if (only && strncmp(name, only, strlen(only))) {
		gdr_cache_destroy(c);
		ucs_rcache_destroy(rc);
		return;
	}
	/* Fill both before timing. */
	for (i = 0; !misses && i < num; i++) {
		ucs_rcache_region_t *reg;
		struct ibv_mr *mr = gdr_cache_get(c, addr[i], len[i]);

		if (!mr || gdr_cache_put(c, mr) ||
		    ucs_rcache_get(rc, addr[i], len[i], PROT_READ | PROT_WRITE,
				   NULL, &reg) != UCS_OK)
			exit(1);
		ucs_rcache_region_put(rc, reg);
	}
	for (r = 0; r < ROUNDS; r++) {
		for (side = 0; side < 2; side++) {
			int mine = (side + r) % 2 == 0;
			size_t keep = stride_at;

			t0 = cpu_ns();
			if (mine && misses)
				ours_misses(c, k, misses == 1);
			else if (mine)
				ours_hits(c, k);
			else if (misses)
				ucx_misses(rc, k, misses == 1);
			else
				ucx_hits(rc, k);
			(mine ? ours : theirs)[r] = (cpu_ns() - t0) / k;
			/* Both start each round as new, untimed. */
			if (misses == 2 && mine) {
				if (gdr_cache_destroy(c))
					exit(1);
				c = gdr_cache_create(&fake_pd, &attr);
				if (!c)
					exit(1);
			}
			if (misses == 2 && !mine) {
				ucs_rcache_destroy(rc);
				rc = ucx_new();
			}
			if (!side)
				stride_at = keep; /* the same addresses */
		}
		ratio[r] = ours[r] / theirs[r];
	}
	if (gdr_cache_destroy(c))
		exit(1);
	ucs_rcache_destroy(rc);
	qsort(ratio, ROUNDS, sizeof(double), cmp);
	qsort(ours, ROUNDS, sizeof(double), cmp);
	qsort(theirs, ROUNDS, sizeof(double), cmp);
	printf("bench: %-28s ours %7.1f ns, UCX %7.1f ns: ratio %.3f "
	       "(quartiles %.3f..%.3f)%s\n",
	       name, ours[ROUNDS / 2], theirs[ROUNDS / 2], ratio[ROUNDS / 2],
	       ratio[ROUNDS / 4], ratio[3 * ROUNDS / 4],
	       ratio[ROUNDS / 2] <= 0.8 ? "" : "  (goal 0.8: NOT met)");
}

/* Heap bytes of @n fake MRs (what the registration allocates), to take
 * out of both caches' counts. */
static size_t mr_bytes(size_t n)
{
	static struct ibv_mr *mrs[BIG];
	size_t before = mallinfo2().uordblks, after, i;

	for (i = 0; i < n; i++)
		mrs[i] = gdr_seam()->verbs.reg_mr_iova2(
			&fake_pd, addr[i], len[i], (uintptr_t)addr[i], 0);
	after = mallinfo2().uordblks;
	for (i = 0; i < n; i++)
		gdr_seam()->verbs.dereg_mr(mrs[i]);
	return after - before;
}

/* Heap bytes per cached host entry at @n entries, ours and UCX's. */
static void memory(size_t n)
{
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS |
						    GDR_CACHE_ATTR_MAX_ENTRIES,
				       .flags = GDR_CACHE_HOST,
				       .max_entries = 0 };
	size_t mrs = mr_bytes(n), before, ours, theirs, i;
	struct gdr_cache *c;
	ucs_rcache_t *rc;

	before = mallinfo2().uordblks + gdr_vmem_committed();
	c = gdr_cache_create(&fake_pd, &attr);
	for (i = 0; i < n; i++) {
		struct ibv_mr *mr = gdr_cache_get(c, addr[i], len[i]);

		if (!mr || gdr_cache_put(c, mr))
			exit(1);
	}
	ours = mallinfo2().uordblks + gdr_vmem_committed() - before - mrs;
	if (gdr_cache_destroy(c))
		exit(1);
	before = mallinfo2().uordblks;
	rc = ucx_new();
	for (i = 0; i < n; i++) {
		ucs_rcache_region_t *reg;

		if (ucs_rcache_get(rc, addr[i], len[i], PROT_READ | PROT_WRITE,
				   NULL, &reg) != UCS_OK)
			exit(1);
		ucs_rcache_region_put(rc, reg);
	}
	theirs = mallinfo2().uordblks - before - mrs;
	ucs_rcache_destroy(rc);
	printf("bench: memory at %zu entries (the MRs apart): ours %.1f "
	       "bytes per entry, UCX %.1f%s\n",
	       n, (double)ours / (double)n, (double)theirs / (double)n,
	       ours <= 128 * n ? "" : "  (goal 128: NOT met)");
}

int main(int argc, char **argv)
{
	size_t span = (size_t)BIG * 65536, i, at;
	char *base, *heap;
	uint64_t seed = 88172645463325252ull;

	only = argc > 1 ? argv[1] : NULL;
	if (fixture_make(&fx))
		return 1;
	fakes_reset();
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	fake_ibv.lean = 1;
	fake_cu.not_loaded = 1; /* a host-memory process: no CUDA */
	base = mmap(NULL, span, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	heap = mmap(NULL, span, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	fresh_base = mmap(NULL, (size_t)BIG * 4096, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED || heap == MAP_FAILED ||
	    fresh_base == MAP_FAILED)
		return 1;
	printf("bench: the cache beside UCX %s's ucs_rcache, host memory, "
	       "the same fake registration; CPU time per operation, median "
	       "of %d rounds\n",
	       UCX_VERSION, ROUNDS);
	num = 1;
	addr[0] = base;
	len[0] = 4096;
	run("hit, 1 entry", 0, 200000);
	for (i = 0; i < BIG; i++) {
		addr[i] = base + i * 65536;
		len[i] = 4096;
	}
	num = 1000;
	run("hit, 1k entries", 0, 100000);
	num = BIG;
	run("hit, 100k entries 64 KiB apart", 0, 100000);
	for (i = 0, at = 0; i < BIG; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		len[i] = 64 + (size_t)(seed % 8128);
		addr[i] = heap + at;
		at += (len[i] + 16 + 15) & ~(size_t)15;
	}
	run("hit, 100k heap-like ranges", 0, 100000);
	run("miss (get, put, invalidate)", 1, 50000);
	run("miss (get registers, put)", 2, 20000);
	if (!only)
		memory(BIG);
	fixture_remove(&fx);
	return 0;
}
#endif
