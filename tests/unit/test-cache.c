/* SPDX-License-Identifier: MIT */
/*
 * The registration cache over the fakes: hits and misses, whole
 * allocations, buffer-id validation (freed, reallocated, VMM chunks),
 * eviction and limits, invalidation and purge, host memory, concurrency of
 * misses, and every outside call failing in turn.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fakes.h"
#include "errnos.h"
#include <unistd.h>

#define MiB (1024ull * 1024)

static struct fixture fx;

/* A cache over fresh fakes, with the environment's GPUDIRECT_PATH and
 * GPUDIRECT_DEBUG (NULL: unset) and the cache's gdr_reg_attr (NULL: none). */
static struct gdr_cache *fresh_with(uint32_t flags, size_t max_entries,
				    size_t max_bytes, const char *env_path,
				    const char *debug,
				    const struct gdr_reg_attr *reg)
{
	struct gdr_cache_attr attr = { 0 };

	fakes_reset();
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, env_path, debug);
	attr.comp_mask = GDR_CACHE_ATTR_FLAGS;
	attr.flags = flags;
	if (max_entries != (size_t)-1) {
		attr.comp_mask |= GDR_CACHE_ATTR_MAX_ENTRIES;
		attr.max_entries = max_entries;
	}
	if (max_bytes) {
		attr.comp_mask |= GDR_CACHE_ATTR_MAX_BYTES;
		attr.max_bytes = max_bytes;
	}
	if (reg) {
		attr.comp_mask |= GDR_CACHE_ATTR_REG;
		attr.reg = *reg;
	}
	return gdr_cache_create(&fake_pd, &attr);
}

static struct gdr_cache *fresh(uint32_t flags, size_t max_entries,
			       size_t max_bytes)
{
	return fresh_with(flags, max_entries, max_bytes, NULL, NULL, NULL);
}

static struct gdr_cache_stats stats(struct gdr_cache *c)
{
	struct gdr_cache_stats st;

	memset(&st, 0xff, sizeof(st));
	CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
	return st;
}

/* get, check it covers, put; the MR (for comparisons only). */
static struct ibv_mr *cycle(struct gdr_cache *c, void *p, size_t len)
{
	struct ibv_mr *mr = gdr_cache_get(c, p, len);

	CHECK(mr != NULL);
	if (!mr) {
		printf("get: %s\n", gdr_last_error());
		return NULL;
	}
	CHECK((uintptr_t)mr->addr <= (uintptr_t)p &&
	      (uintptr_t)p + len <= (uintptr_t)mr->addr + mr->length);
	CHECK_INT(gdr_cache_put(c, mr), 0);
	return mr;
}

static void done(struct gdr_cache *c)
{
	char why[256] = "";

	/* Free entries listed once; every live entry findable by its MR. */
	CHECK_(gdr_cache_audit(c, why, sizeof(why)) == 0, "gdr_cache_audit: %s",
	       why);
	CHECK_INT(gdr_cache_destroy(c), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
}

static void hits_and_misses(void)
{
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	struct ibv_mr *a, *b;
	char *p;

	check_scope = "a miss, then hits";
	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 4 * MiB);
	a = cycle(c, p, 4096);
	b = cycle(c, p, 4096);
	CHECK(a == b);
	CHECK_INT(fake_ibv.dmabuf_calls, 1);
	st = stats(c);
	CHECK_INT(st.misses, 1);
	CHECK_INT(st.hits, 1);
	CHECK_INT(st.entries, 1);
	CHECK_INT(st.bytes, 4096);
	CHECK_INT(st.in_use, 0);

	check_scope = "a sub-range of an entry hits, a wider range misses";
	cycle(c, p + 100, 1000);
	CHECK_INT(fake_ibv.dmabuf_calls, 1);
	cycle(c, p, 8192);
	CHECK_INT(fake_ibv.dmabuf_calls, 2);
	CHECK_INT(stats(c).entries, 2);
	done(c);
}

static void whole_allocation(void)
{
	struct gdr_cache *c;
	struct ibv_mr *a, *b;
	char *p, *big;

	check_scope = "whole allocation: sub-buffers of one block hit";
	c = fresh(GDR_CACHE_WHOLE_ALLOC, (size_t)-1, 0);
	p = fake_alloc_device(0, 4 * MiB);
	a = cycle(c, p + 100, 1 * MiB);
	CHECK(a && a->addr == (void *)p);
	CHECK_INT(a ? a->length : 0, 4 * MiB);
	b = cycle(c, p + 3 * MiB, 65536);
	CHECK(a == b);
	CHECK_INT(fake_ibv.dmabuf_calls, 1);
	CHECK_INT(stats(c).hits, 1);

	check_scope = "whole allocation bounded by the ratio";
	big = fake_alloc_device(0, 64 * MiB);
	a = cycle(c, big, 1 * MiB); /* 64 > 16 x 1: the buffer alone */
	CHECK(a && a->addr == (void *)big);
	CHECK_INT(a ? a->length : 0, 1 * MiB);
	a = cycle(c, big + 8 * MiB, 8 * MiB); /* 64 <= 16 x 8: whole */
	CHECK_INT(a ? a->length : 0, 64 * MiB);
	done(c);

	/* Never wider than the NIC's max_mr_size: the buffer fits, its
	 * allocation does not. */
	check_scope = "whole allocation bounded by the NIC's max_mr_size";
	c = fresh(GDR_CACHE_WHOLE_ALLOC, (size_t)-1, 0);
	fake_model.nic[0].max_mr_size = 2 * MiB;
	p = fake_alloc_device(0, 4 * MiB);
	a = cycle(c, p, 1 * MiB);
	CHECK(a && a->addr == (void *)p);
	CHECK_INT(a ? a->length : 0, 1 * MiB);
	fake_model.nic[0].max_mr_size = 4 * MiB; /* a new probe: fits */
	gdr_probe_reset();
	a = cycle(c, p + 2 * MiB, 1 * MiB);
	CHECK_INT(a ? a->length : 0, 4 * MiB);
	done(c);
}

static void freed_and_reallocated(void)
{
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	struct ibv_mr *a, *b, *held;
	char *p;

	check_scope = "freed and allocated again at the same address";
	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 1 * MiB);
	a = cycle(c, p, 65536);
	fake_realloc(p); /* a new buffer id under the same address */
	b = gdr_cache_get(c, p, 65536);
	CHECK(b != NULL);
	st = stats(c);
	CHECK_INT(st.stale, 1);
	CHECK_INT(st.misses, 2);
	CHECK_INT(st.hits, 0);
	CHECK_INT(fake_ibv.dmabuf_calls, 2);
	CHECK_INT(fake_ibv.live_mrs, 1); /* the stale one is gone */
	if (b)
		gdr_cache_put(c, b);
	(void)a;

	check_scope = "freed: the driver no longer knows the address";
	fake_free(p);
	fake_alloc_device(0, 1 * MiB); /* elsewhere */
	b = gdr_cache_get(c, p, 65536);
	/* Not device memory any more: refused or host, never the old MR. */
	CHECK_INT(stats(c).stale, 2);
	if (b)
		gdr_cache_put(c, b);
	CHECK_INT(stats(c).entries, 0);

	check_scope = "stale while in use: the holder keeps a valid MR";
	p = fake_alloc_device(0, 1 * MiB);
	held = gdr_cache_get(c, p, 4096);
	CHECK(held != NULL);
	fake_realloc(p);
	b = gdr_cache_get(c, p, 4096);
	CHECK(b != NULL && b != held);
	CHECK_INT(fake_ibv.live_mrs, 2);
	CHECK_INT(stats(c).in_use, 2);
	CHECK_INT(gdr_cache_put(c, held), 0);
	CHECK_INT(fake_ibv.live_mrs, 1);
	CHECK_INT(gdr_cache_put(c, b), 0);
	CHECK_INT(stats(c).entries, 1);
	done(c);
}

static void vmm_chunks(void)
{
	struct gdr_cache_get_info info;
	struct gdr_cache *c;
	struct ibv_mr *mr;
	char *r;

	/* The driver's model (tests/conform): RANGE_* is the whole
	 * reservation at every chunk; each chunk its own buffer id. */
	check_scope = "a VMM range of 4 chunks: each validated by its own id";
	c = fresh(0, (size_t)-1, 0);
	r = fake_vmm(0, 4, 2 * MiB, 0);
	mr = gdr_cache_get_ex(c, r, 8 * MiB, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.result, GDR_CACHE_RESULT_MISS);
	CHECK_INT(info.num_mappings, 4);
	CHECK_INT(fake_cu.range_calls, 4);
	gdr_cache_put(c, mr);
	cycle(c, r + 4096, 4096);	/* chunk 0 */
	cycle(c, r + 7 * MiB, 4096);	/* chunk 3 */
	cycle(c, r + 2 * MiB, 2 * MiB); /* chunk 1 exactly */
	cycle(c, r + 4 * MiB - 1, 2);	/* across chunks 1 and 2 */
	CHECK_INT(fake_ibv.dmabuf_calls, 1);
	CHECK_INT(stats(c).hits, 4);

	check_scope = "a VMM chunk replaced: the whole range is stale";
	fake_vmm_replace(r + 6 * MiB);
	cycle(c, r + 4096, 4096); /* chunk 0 still what it was */
	CHECK_INT(stats(c).stale, 0);
	mr = gdr_cache_get_ex(c, r, 8 * MiB, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.result, GDR_CACHE_RESULT_MISS);
	CHECK_INT(stats(c).stale, 1);
	CHECK_INT(fake_ibv.dmabuf_calls, 2);
	if (mr)
		gdr_cache_put(c, mr);

	check_scope = "a hit starting exactly at the replaced chunk";
	fake_vmm_replace(r + 6 * MiB);
	cycle(c, r + 6 * MiB, 4096);
	CHECK_INT(stats(c).stale, 2);

	check_scope = "a hit ending exactly where the replaced chunk starts";
	cycle(c, r, 8 * MiB); /* cached again */
	fake_vmm_replace(r + 6 * MiB);
	cycle(c, r + 4 * MiB, 2 * MiB); /* chunk 2 only: still valid */
	CHECK_INT(stats(c).stale, 2);

	check_scope = "a VMM chunk unmapped: a hole is stale";
	cycle(c, r, 8 * MiB);
	fake_free(r + 2 * MiB);
	CHECK(gdr_cache_get(c, r, 8 * MiB) == NULL); /* cannot export */
	CHECK_INT(stats(c).stale, 4);
	CHECK_INT(stats(c).entries, 0);
	done(c);
}

/* A replaced chunk under one entry makes every entry over it stale. */
static void stale_drops_overlaps(void)
{
	struct gdr_cache *c;
	char *p;

	check_scope = "a stale hit drops every entry over the freed memory";
	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 4 * MiB);
	cycle(c, p, 4096);
	cycle(c, p + MiB, 4096);
	cycle(c, p + 2 * MiB, 4096);
	CHECK_INT(fake_ibv.live_mrs, 3);
	fake_realloc(p);
	cycle(c, p + MiB, 4096); /* stale: all three go, one comes back */
	CHECK_INT(stats(c).stale, 1);
	CHECK_INT(stats(c).entries, 1);
	CHECK_INT(fake_ibv.live_mrs, 1);
	done(c);
}

/* WHOLE_ALLOC on VMM memory widens to the chunks, not the reservation. */
static void whole_vmm(void)
{
	struct gdr_cache_attr attr = { .comp_mask =
					       GDR_CACHE_ATTR_FLAGS |
					       GDR_CACHE_ATTR_MAX_REG_RATIO,
				       .flags = GDR_CACHE_WHOLE_ALLOC,
				       .max_reg_ratio = 4 };
	struct gdr_cache *c;
	struct ibv_mr *mr;
	char *r;

	check_scope = "whole allocation of VMM memory: the chunks touched";
	c = fresh(0, (size_t)-1, 0);
	gdr_cache_destroy(c);
	c = gdr_cache_create(&fake_pd, &attr);
	r = fake_vmm(0, 8, 2 * MiB, 0);
	mr = cycle(c, r + 2 * MiB + 100, MiB);
	CHECK(mr && mr->addr == (void *)(r + 2 * MiB));
	CHECK_INT(mr ? mr->length : 0, 2 * MiB);
	mr = cycle(c, r + 7 * MiB, 2 * MiB); /* chunks 3 and 4 */
	CHECK(mr && mr->addr == (void *)(r + 6 * MiB));
	CHECK_INT(mr ? mr->length : 0, 4 * MiB);

	check_scope =
		"whole allocation at exactly the ratio, and one byte past";
	mr = cycle(c, r + 12 * MiB + 4096, MiB / 2); /* 2 MiB = 4 x 512 KiB */
	CHECK_INT(mr ? mr->length : 0, 2 * MiB);
	mr = cycle(c, r + 14 * MiB + 4096, MiB / 2 - 1);
	CHECK_INT(mr ? mr->length : 0, MiB / 2 - 1);
	done(c);
}

/* More mappings than an entry may validate: registered, not cached. */
static void many_mappings(void)
{
	struct gdr_cache_get_info info;
	struct gdr_cache *c;
	struct ibv_mr *mr;
	char *r;

	check_scope = "a range over more than GDR_CACHE_MAX_MAPPINGS chunks";
	c = fresh(0, (size_t)-1, 0);
	r = fake_vmm(0, GDR_CACHE_MAX_MAPPINGS + 1, 2 * MiB, 0);
	memset(&info, 0x5a, sizeof(info));
	mr = gdr_cache_get_ex(c, r, (GDR_CACHE_MAX_MAPPINGS + 1) * 2 * MiB,
			      &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.result, GDR_CACHE_RESULT_UNCACHED);
	CHECK_HAS(info.reason, "more than 64 mappings");
	CHECK_STR(gdr_last_error(), "");
	CHECK_INT(stats(c).uncached, 1);
	/* Device memory: counted as uncached only, never as host
	 * passthrough. */
	CHECK_INT(stats(c).passthrough, 0);
	CHECK_INT(stats(c).entries, 0);
	CHECK_INT(fake_ibv.live_mrs, 1);
	CHECK_INT(gdr_cache_put(c, mr), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	mr = cycle(c, r, GDR_CACHE_MAX_MAPPINGS * 2 * MiB); /* exactly 64 */
	CHECK_INT(stats(c).entries, 1);
	done(c);
}

/* Trusted mode: no driver question on a hit; purge is the safety net. */
static void trusted(void)
{
	struct gdr_cache *c;
	char *p, *r;
	int calls;

	check_scope = "trusted: a hit asks the driver nothing";
	c = fresh(GDR_CACHE_TRUSTED, (size_t)-1, 0);
	p = fake_alloc_device(0, 4 * MiB);
	r = fake_vmm(0, 4, 2 * MiB, 0);
	cycle(c, p, 4096);
	cycle(c, r, 8 * MiB);
	calls = fake_cu.ptr_attr_calls + fake_cu.range_calls;
	cycle(c, p + 100, 100);
	cycle(c, r + 4096, 7 * MiB);
	CHECK_INT(fake_cu.ptr_attr_calls + fake_cu.range_calls, calls);
	CHECK_INT(stats(c).hits, 2);

	check_scope = "trusted: the caller's invalidate is what keeps it right";
	CHECK_INT(gdr_cache_invalidate(c, r + 6 * MiB, 2 * MiB), 0);
	fake_vmm_replace(r + 6 * MiB);
	cycle(c, r, 8 * MiB);
	CHECK_INT(stats(c).misses, 3);

	check_scope = "trusted: purge finds memory freed without invalidate";
	fake_realloc(p);
	CHECK_INT(gdr_cache_purge(c), 0);
	CHECK_INT(stats(c).stale, 1);
	CHECK_INT(stats(c).entries, 1);
	done(c);
}

/* A registration answering EAGAIN is an error like any other. */
static void eagain(void)
{
	struct gdr_cache *c;
	char *p;

	check_scope = "a registration failing with EAGAIN";
	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 1 * MiB);
	fake_ibv.dmabuf_errno = EAGAIN;
	errno = 0;
	CHECK(gdr_cache_get(c, p, 4096) == NULL);
	CHECK_INT(errno, EAGAIN);
	errno_seen("gdr_cache_get", errno);
	CHECK_HAS(gdr_last_error(), "EAGAIN");
	fake_ibv.dmabuf_errno = 0;
	CHECK_INT(stats(c).entries, 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	cycle(c, p, 4096);
	done(c);
}

/* An invalidate while the registration of a range is in flight. */
static struct gdr_cache *flight_cache;
static char *flight_ptr;
static pthread_barrier_t in_flight, invalidated;

static void flight_hook(void)
{
	fake_ibv.reg_hook = NULL;
	pthread_barrier_wait(&in_flight);
	pthread_barrier_wait(&invalidated);
}

static void *flight_get(void *arg)
{
	return gdr_cache_get(flight_cache, flight_ptr, 65536);
}

static void invalidate_in_flight(void)
{
	struct ibv_mr *mr, *again;
	pthread_t t;
	void *ret;

	check_scope = "an invalidate landing while a registration is in flight";
	flight_cache = fresh(0, (size_t)-1, 0);
	flight_ptr = fake_alloc_device(0, 1 * MiB);
	pthread_barrier_init(&in_flight, NULL, 2);
	pthread_barrier_init(&invalidated, NULL, 2);
	fake_ibv.reg_hook = flight_hook;
	pthread_create(&t, NULL, flight_get, NULL);
	pthread_barrier_wait(&in_flight);
	CHECK_INT(gdr_cache_invalidate(flight_cache, flight_ptr, 4096), 0);
	pthread_barrier_wait(&invalidated);
	pthread_join(t, &ret);
	mr = ret;
	CHECK(mr != NULL);
	/* Its caller has it; the cache keeps nothing of before the
	 * invalidate. */
	CHECK_INT(stats(flight_cache).entries, 0);
	again = gdr_cache_get(flight_cache, flight_ptr, 65536);
	CHECK(again != NULL && again != mr);
	CHECK_INT(fake_ibv.dmabuf_calls, 2);
	CHECK_INT(gdr_cache_put(flight_cache, mr), 0);
	CHECK_INT(gdr_cache_put(flight_cache, again), 0);
	CHECK_INT(fake_ibv.live_mrs, 1);
	pthread_barrier_destroy(&in_flight);
	pthread_barrier_destroy(&invalidated);
	done(flight_cache);
}

/* Many MRs out at once, most not cached (the outside table grows). */
static void many_out(void)
{
	static char host[200 * 4096];
	struct ibv_mr *mr[200];
	struct gdr_cache *c;
	int i, bad = 0;

	check_scope = "200 MRs given out at once, host memory not cached";
	c = fresh(0, (size_t)-1, 0);
	for (i = 0; i < 200; i++)
		mr[i] = gdr_cache_get(c, host + i * 4096, 4096);
	CHECK_INT(stats(c).in_use, 200);
	for (i = 199; i >= 0; i--)
		bad += !mr[i] || gdr_cache_put(c, mr[i]) != 0;
	CHECK_INT(bad, 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(stats(c).in_use, 0);
	done(c);
}

/* Every successful call leaves gdr_last_error() empty. */
static void clears_error(void)
{
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	struct ibv_mr *mr;
	char *p;

	check_scope = "successful cache calls clear the last error";
	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 1 * MiB);
#define AFTER_FAILURE(call)                                                    \
	do {                                                                   \
		gdr_cache_get(c, NULL, 1);                                     \
		CHECK(gdr_last_error()[0] != '\0');                            \
		call;                                                          \
		CHECK_STR(gdr_last_error(), "");                               \
	} while (0)
	AFTER_FAILURE(mr = gdr_cache_get(c, p, 4096));
	AFTER_FAILURE(gdr_cache_put(c, mr));
	AFTER_FAILURE(mr = gdr_cache_get(c, p, 4096)); /* a hit */
	AFTER_FAILURE(gdr_cache_put(c, mr));
	AFTER_FAILURE(gdr_cache_invalidate(c, p, 4096));
	AFTER_FAILURE(gdr_cache_purge(c));
	AFTER_FAILURE(gdr_cache_query_stats(c, &st, sizeof(st)));
	AFTER_FAILURE(gdr_cache_destroy(c));
	AFTER_FAILURE(c = gdr_cache_create(&fake_pd, NULL));
#undef AFTER_FAILURE
	done(c);
}

/* Spans that wrap around the address space are refused. */
static void wrapping(void)
{
	struct gdr_cache *c;

	check_scope = "ranges that wrap around the address space";
	c = fresh(0, (size_t)-1, 0);
	CHECK_INT(gdr_cache_invalidate(c, (void *)(UINTPTR_MAX - 10), 20),
		  EINVAL);
	CHECK(gdr_cache_get(c, (void *)(UINTPTR_MAX - 10), 20) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(gdr_cache_invalidate(c, (void *)(UINTPTR_MAX - 10), 10), 0);
	done(c);
}

static void limits(void)
{
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	struct ibv_mr *held[3];
	char *p[4];
	int i;

	check_scope = "eviction: least recently put back first";
	c = fresh(0, 2, 0);
	for (i = 0; i < 4; i++)
		p[i] = fake_alloc_device(0, 1 * MiB);
	cycle(c, p[0], 4096);
	cycle(c, p[1], 4096);
	cycle(c, p[0], 4096); /* p[0] is now the more recent */
	cycle(c, p[2], 4096); /* evicts p[1] */
	st = stats(c);
	CHECK_INT(st.entries, 2);
	CHECK_INT(st.evictions, 1);
	CHECK_INT(fake_ibv.live_mrs, 2);
	cycle(c, p[0], 4096);
	CHECK_INT(stats(c).hits, 2);
	cycle(c, p[1], 4096); /* a miss again */
	CHECK_INT(stats(c).misses, 4);

	check_scope = "entries in use are never evicted";
	for (i = 0; i < 3; i++)
		held[i] = gdr_cache_get(c, p[i + 1], 8192);
	st = stats(c);
	CHECK_INT(st.in_use, 3);
	CHECK(st.entries >= 3); /* over the limit while held */
	for (i = 0; i < 3; i++)
		CHECK(held[i] && gdr_cache_put(c, held[i]) == 0);
	cycle(c, p[0], 16384); /* now the limit applies again */
	CHECK_INT(stats(c).entries, 2);
	done(c);

	check_scope = "the byte limit";
	c = fresh(0, 0, 3 * 65536);
	for (i = 0; i < 4; i++)
		p[i] = fake_alloc_device(0, 1 * MiB);
	for (i = 0; i < 4; i++)
		cycle(c, p[i], 65536);
	st = stats(c);
	CHECK_INT(st.bytes, 3 * 65536);
	CHECK_INT(st.evictions, 1);
	done(c);
}

static void invalidate_purge(void)
{
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	struct ibv_mr *held;
	char *p;

	check_scope = "invalidate across several entries";
	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 4 * MiB);
	cycle(c, p, 4096);
	cycle(c, p + 1 * MiB, 4096);
	cycle(c, p + 2 * MiB, 8192);
	cycle(c, p + 3 * MiB, 4096);
	held = gdr_cache_get(c, p + 2 * MiB, 4096);
	CHECK_INT(gdr_cache_invalidate(c, p + 4096, 2 * MiB), 0);
	st = stats(c);
	CHECK_INT(st.invalidations, 2);
	CHECK_INT(st.entries, 2);
	/* The held one stays registered until it is put back. */
	CHECK_INT(fake_ibv.live_mrs, 3);
	CHECK_INT(gdr_cache_put(c, held), 0);
	CHECK_INT(fake_ibv.live_mrs, 2);
	cycle(c, p + 1 * MiB, 4096);
	CHECK_INT(stats(c).misses, 5);

	check_scope = "purge drops the entries of freed memory";
	fake_realloc(p); /* freed and reused */
	CHECK_INT(gdr_cache_purge(c), 0);
	st = stats(c);
	CHECK_INT(st.entries, 0);
	CHECK_INT(st.stale, 3);
	CHECK_INT(fake_ibv.live_mrs, 0);
	done(c);
}

static void host_memory(void)
{
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	static char buf[3 * 65536];
	struct ibv_mr *a, *b;

	check_scope = "host memory passes through by default";
	c = fresh(0, (size_t)-1, 0);
	a = gdr_cache_get(c, buf, 4096);
	CHECK(a != NULL);
	CHECK_INT(fake_ibv.live_mrs, 1);
	CHECK_INT(gdr_cache_put(c, a), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	cycle(c, buf, 4096);
	st = stats(c);
	CHECK_INT(st.passthrough, 2);
	CHECK_INT(st.hits, 0);
	CHECK_INT(st.entries, 0);
	CHECK_INT(fake_ibv.reg_calls, 2);
	done(c);

	check_scope = "host memory cached when the caller opts in";
	c = fresh(GDR_CACHE_HOST, (size_t)-1, 0);
	a = cycle(c, buf, 65536);
	b = cycle(c, buf + 100, 100);
	CHECK(a == b);
	CHECK_INT(fake_ibv.reg_calls, 1);
	CHECK_INT(stats(c).hits, 1);
	CHECK_INT(gdr_cache_invalidate(c, buf, 1), 0);
	cycle(c, buf, 4096);
	CHECK_INT(fake_ibv.reg_calls, 2);
	done(c);

	/* comp_mask names the fields that are set: flags without
	 * GDR_CACHE_ATTR_FLAGS are not read, so host memory still passes
	 * through. */
	check_scope = "flags are ignored without GDR_CACHE_ATTR_FLAGS";
	{
		struct gdr_cache_attr attr = { 0 };

		fakes_reset();
		fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
		fakes_install(&fx, NULL, NULL, NULL);
		attr.comp_mask = GDR_CACHE_ATTR_MAX_ENTRIES;
		attr.max_entries = 16;
		attr.flags = GDR_CACHE_HOST;
		c = gdr_cache_create(&fake_pd, &attr);
		CHECK(c != NULL);
		cycle(c, buf, 4096);
		cycle(c, buf, 4096);
		st = stats(c);
		CHECK_INT(st.passthrough, 2);
		CHECK_INT(st.entries, 0);
		CHECK_INT(fake_ibv.reg_calls, 2);
		done(c);
	}
}

/*
 * A put of an MR that was released already (a second put): EINVAL, and
 * the released MR is never read (the fake makes its memory PROT_NONE, as
 * freed memory is to ASan: a read crashes the test).
 */
static void second_put(void)
{
	static char host[65536];
	struct ibv_mr *a, *b, *mr[300];
	struct gdr_cache *c;
	char *p;
	int i, bad = 0;

	check_scope = "a second put of a pass-through MR (freed by then)";
	c = fresh(0, (size_t)-1, 0);
	fake_ibv.guard_freed = 1;
	a = gdr_cache_get(c, host, 4096);
	CHECK(a != NULL);
	CHECK_INT(gdr_cache_put(c, a), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(gdr_cache_put(c, a), EINVAL);
	CHECK_HAS(gdr_last_error(), "not one the cache gave out");
	/* Another get meanwhile: the stale MR is not in the thread's hint. */
	a = gdr_cache_get(c, host, 4096);
	b = gdr_cache_get(c, host + 8192, 4096);
	CHECK(a && b);
	CHECK_INT(gdr_cache_put(c, a), 0);
	CHECK_INT(gdr_cache_put(c, a), EINVAL);
	CHECK_INT(fake_ibv.live_mrs, 1); /* b's, untouched */
	CHECK_INT(gdr_cache_put(c, b), 0);
	done(c);

	check_scope = "a second put after the last put of an invalidated entry";
	c = fresh(0, (size_t)-1, 0);
	fake_ibv.guard_freed = 1;
	p = fake_alloc_device(0, 1 * MiB);
	a = gdr_cache_get(c, p, 4096);
	b = gdr_cache_get(c, p, 4096); /* a hit: the same entry */
	CHECK(a && a == b);
	CHECK_INT(gdr_cache_invalidate(c, p, 1 * MiB), 0);
	CHECK_INT(fake_ibv.live_mrs, 1); /* in use: kept until its last put */
	CHECK_INT(gdr_cache_put(c, a), 0);
	CHECK_INT(gdr_cache_put(c, b), 0); /* the last: released */
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(gdr_cache_put(c, a), EINVAL);
	CHECK_INT(gdr_cache_put(c, b), EINVAL);
	done(c);

	check_scope = "a second put of an evicted entry's MR";
	c = fresh(GDR_CACHE_HOST, 1, 0);
	fake_ibv.guard_freed = 1;
	a = gdr_cache_get(c, host, 4096);
	CHECK_INT(gdr_cache_put(c, a), 0);
	b = gdr_cache_get(c, host + 32768, 4096); /* evicts a's entry */
	CHECK_INT(stats(c).evictions, 1);
	CHECK_INT(gdr_cache_put(c, a), EINVAL);
	CHECK_INT(gdr_cache_put(c, b), 0);
	done(c);

	/* Many MRs out at once, put back in another order: each found
	 * without its hint (the MR hint's pairs, then the MR table). */
	check_scope = "300 cached MRs put back in reverse, then again";
	c = fresh(0, (size_t)-1, 0);
	fake_ibv.guard_freed = 1;
	p = fake_alloc_device(0, 300 * 65536);
	for (i = 0; i < 300; i++)
		mr[i] = gdr_cache_get(c, p + (size_t)i * 65536, 4096);
	for (i = 299; i >= 0; i--)
		bad += !mr[i] || gdr_cache_put(c, mr[i]) != 0;
	CHECK_INT(bad, 0);
	CHECK_INT(stats(c).in_use, 0);
	CHECK_INT(gdr_cache_invalidate(c, p, 300 * 65536), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	for (i = 0, bad = 0; i < 300; i++)
		bad += gdr_cache_put(c, mr[i]) != EINVAL;
	CHECK_INT(bad, 0);
	done(c);
	fake_ibv.guard_freed = 0;
}

/*
 * The window between a put's find and its give-back: a stale second put
 * finds an idle entry, and before it gives the reference back the entry
 * is dropped, freed and opened again for another get's MR (the free
 * list empty, so the freed entry is the next one taken). The stale put
 * must not take the new life's reference: EINVAL, the new MR still
 * registered and its own put 0.
 */
static struct ibv_mr *pause_other;
static char *pause_range;
static char pause_host[4096];

static void pause_reuse(struct gdr_cache *c, struct ibv_mr *mr)
{
	(void)mr;
	gdr_cache_put_pause = NULL; /* once */
	CHECK_INT(gdr_cache_invalidate(c, pause_range, 4096), 0);
	pause_other = gdr_cache_get(c, pause_host, sizeof(pause_host));
	CHECK(pause_other != NULL);
}

static void put_window(void)
{
	struct ibv_mr *mr[64], *stale;
	struct gdr_cache *c;
	int i, bad = 0, live;
	char *p;

	check_scope = "a stale put whose entry is reused in the put's window";
	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 64 * 65536);
	/* 64 cached entries, idle: one slab, its free list empty. */
	for (i = 0; i < 64; i++) {
		mr[i] = gdr_cache_get(c, p + (size_t)i * 65536, 4096);
		bad += !mr[i] || gdr_cache_put(c, mr[i]) != 0;
	}
	CHECK_INT(bad, 0);
	stale = mr[5];
	pause_range = p + 5 * 65536;
	gdr_cache_put_pause = pause_reuse;
	live = fake_ibv.live_mrs;
	CHECK_INT(gdr_cache_put(c, stale), EINVAL);
	gdr_cache_put_pause = NULL;
	/* mr[5] released by the invalidate, the host MR registered. */
	CHECK_INT(fake_ibv.live_mrs, live);
	CHECK(pause_other != NULL);
	if (pause_other)
		CHECK_INT(gdr_cache_put(c, pause_other), 0);
	CHECK_INT(fake_ibv.live_mrs, live - 1);
	done(c);
}

static void errors(void)
{
	struct gdr_cache_attr attr = { 0 };
	struct gdr_cache *c;
	struct ibv_mr *a, other = { 0 };
	unsigned char guard[sizeof(struct gdr_cache_stats) + 16];
	char *p;

	check_scope = "bad arguments";
	fakes_reset();
	fakes_install(&fx, NULL, NULL, NULL);
	errno = 0;
	CHECK(gdr_cache_create(NULL, NULL) == NULL);
	CHECK_INT(errno, EINVAL);
	attr.comp_mask = 1u << 20;
	CHECK(gdr_cache_create(&fake_pd, &attr) == NULL);
	CHECK_HAS(gdr_last_error(), "comp_mask has unknown bits");
	attr.comp_mask = GDR_CACHE_ATTR_FLAGS;
	attr.flags = 1u << 9;
	CHECK(gdr_cache_create(&fake_pd, &attr) == NULL);
	CHECK_INT(errno, EINVAL);

	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 1 * MiB);
	CHECK(gdr_cache_get(c, NULL, 10) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_cache_get(c, p, 0) == NULL);
	{
		struct gdr_cache_get_info info;

		errno = 0;
		CHECK(gdr_cache_get_ex(c, p, 4096, &info, 4) == NULL);
		CHECK_INT(errno, EINVAL);
		errno_seen("gdr_cache_get_ex", errno);
		CHECK_HAS(gdr_last_error(), "struct gdr_cache_get_info");
		memset(&info, 0x5a, sizeof(info));
		CHECK(gdr_cache_get_ex(c, NULL, 4096, &info, sizeof(info)) ==
		      NULL);
		errno_seen("gdr_cache_get_ex", errno);
		CHECK_INT(info.result, 0);
		fake_ibv.dmabuf_errno = EAGAIN;
		CHECK(gdr_cache_get_ex(c, p, 4096, &info, sizeof(info)) ==
		      NULL);
		errno_seen("gdr_cache_get_ex", errno);
		CHECK_INT(errno, EAGAIN);
		fake_ibv.dmabuf_errno = 0;
	}
	{
		/* Host memory CUDA does not know, refused by the kernel:
		 * EFAULT naming the causes for a process with CUDA loaded
		 * (not the texts of a process without CUDA or before
		 * cuInit). */
		static char host[4096];

		fake_ibv.reg_errno = EFAULT;
		errno = 0;
		CHECK(gdr_cache_get(c, host, sizeof(host)) == NULL);
		CHECK_INT(errno, EFAULT);
		errno_seen("gdr_cache_get", errno);
		log_message(gdr_last_error());
		CHECK_HAS(gdr_last_error(),
			  "the range is not mapped in this process (freed, "
			  "never allocated, or a freed CUDA buffer)");
		fake_ibv.reg_errno = 0;
	}
	CHECK_INT(gdr_cache_put(c, &other), EINVAL);
	CHECK_HAS(gdr_last_error(), "not one the cache gave out");
	a = gdr_cache_get(c, p, 4096);
	CHECK_INT(gdr_cache_destroy(c), EBUSY);
	CHECK_HAS(gdr_last_error(), "not put back");
	CHECK_INT(gdr_cache_put(c, a), 0);
	CHECK_INT(gdr_cache_put(c, a), EINVAL); /* twice */
	CHECK_INT(gdr_cache_invalidate(c, p, 0), EINVAL);
	memset(guard, 0xa5, sizeof(guard));
	CHECK_INT(gdr_cache_query_stats(c, (struct gdr_cache_stats *)guard,
					sizeof(guard)),
		  0);
	CHECK_INT(guard[sizeof(struct gdr_cache_stats)], 0xa5);
	CHECK_INT(gdr_cache_query_stats(c, (struct gdr_cache_stats *)guard, 8),
		  EINVAL);
	done(c);
	CHECK_INT(gdr_cache_destroy(NULL), EINVAL);
	CHECK_INT(gdr_cache_purge(NULL), EINVAL);
	CHECK(gdr_cache_create(NULL, NULL) == NULL);
	CHECK_INT(errno, EINVAL);

	check_scope = "a deregistration that fails at destroy";
	c = fresh(0, (size_t)-1, 0);
	p = fake_alloc_device(0, 1 * MiB);
	cycle(c, p, 4096);
	fake_ibv.dereg_errno = EBUSY;
	CHECK_INT(gdr_cache_destroy(c), EBUSY);
	CHECK_HAS(gdr_last_error(), "call gdr_cache_destroy() again");
	CHECK_INT(fake_ibv.live_mrs, 1);
	fake_ibv.dereg_errno = 0;
	done(c);

	check_scope = "limits from the environment";
	fakes_reset();
	fakes_setenv("GPUDIRECT_CACHE_MAX_ENTRIES", "1");
	fakes_install(&fx, NULL, NULL, NULL);
	c = gdr_cache_create(&fake_pd, NULL);
	CHECK(c != NULL);
	p = fake_alloc_device(0, 1 * MiB);
	cycle(c, p, 4096);
	cycle(c, p + 8192, 4096);
	CHECK_INT(stats(c).entries, 1);
	CHECK_INT(stats(c).evictions, 1);
	done(c);
	fakes_reset();
	fakes_setenv("GPUDIRECT_CACHE_MAX_BYTES", "lots");
	fakes_install(&fx, NULL, NULL, NULL);
	CHECK(gdr_cache_create(&fake_pd, NULL) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(),
		  "GPUDIRECT_CACHE_MAX_BYTES=lots is not a decimal number");
	{
		/* Digits only: no octal, hex, sign or space. */
		static const char *const bad[] = {
			"010", "0x10", " -1", "+5",
			"-1",  "5 ",   "1e3", "99999999999999999999999"
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			fakes_reset();
			fakes_setenv("GPUDIRECT_CACHE_MAX_ENTRIES",
				     bad[i][0] == '0' && bad[i][1] == '1'
					     ? "010x"
					     : bad[i]);
			fakes_install(&fx, NULL, NULL, NULL);
			CHECK(gdr_cache_create(&fake_pd, NULL) == NULL);
			CHECK_HAS(gdr_last_error(),
				  "GPUDIRECT_CACHE_MAX_ENTRIES=");
		}
		/* 010 is ten, not eight. */
		fakes_reset();
		fakes_setenv("GPUDIRECT_CACHE_MAX_ENTRIES", "010");
		fakes_install(&fx, NULL, NULL, NULL);
		c = gdr_cache_create(&fake_pd, NULL);
		CHECK(c != NULL);
		p = fake_alloc_device(0, 16 * MiB);
		for (i = 0; i < 12; i++)
			cycle(c, p + i * MiB, 4096);
		CHECK_INT(stats(c).entries, 10);
		done(c);
	}

	check_scope = "registration options pass through";
	fakes_reset();
	fixture_write(fx.sys, "module/nvidia_peermem/version", "580\n");
	fixture_write(fx.sys, "kernel/mm/memory_peers/nv_mem/version", "580\n");
	fakes_install(&fx, NULL, NULL, NULL);
	attr.comp_mask = GDR_CACHE_ATTR_REG;
	attr.reg.comp_mask = GDR_REG_ATTR_PATH_MASK;
	attr.reg.path_mask = GDR_PATH_BIT(GDR_PATH_PEERMEM);
	c = gdr_cache_create(&fake_pd, &attr);
	p = fake_alloc_device(0, 1 * MiB);
	cycle(c, p, 4096);
	CHECK_INT(fake_ibv.dmabuf_calls, 0);
	CHECK_INT(fake_ibv.reg_calls, 1);
	done(c);
	fixture_remove(&fx);
	fixture_make(&fx);
}

/* Many threads miss on one range at once: one registration. */
static struct gdr_cache *race_cache;
static char *race_ptr;
static pthread_barrier_t race_start;
static struct ibv_mr *race_mr[8];

static void *racer(void *arg)
{
	long i = (long)arg;

	pthread_barrier_wait(&race_start);
	race_mr[i] = gdr_cache_get(race_cache, race_ptr, 65536);
	return NULL;
}

static void concurrent_misses(void)
{
	pthread_t t[8];
	long i;

	check_scope = "concurrent misses on one range: one registration";
	race_cache = fresh(0, (size_t)-1, 0);
	race_ptr = fake_alloc_device(0, 1 * MiB);
	fake_cu.init_delay_ms = 0;
	pthread_barrier_init(&race_start, NULL, 8);
	for (i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, racer, (void *)i);
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&race_start);
	for (i = 0; i < 8; i++) {
		CHECK(race_mr[i] != NULL && race_mr[i] == race_mr[0]);
		if (race_mr[i])
			gdr_cache_put(race_cache, race_mr[i]);
	}
	CHECK_INT(fake_ibv.dmabuf_calls, 1);
	CHECK_INT(stats(race_cache).misses, 1);
	CHECK_INT(stats(race_cache).hits, 7);
	done(race_cache);
}

/* Every outside call fails in turn: the cache stays consistent. */
static int sequence(struct gdr_cache *c, char *dev)
{
	static char host[8192];
	struct ibv_mr *a, *b;
	int bad = 0;

	a = gdr_cache_get(c, dev, 4096);
	b = gdr_cache_get(c, dev, 4096);
	if (a && gdr_cache_put(c, a))
		bad++;
	if (b && gdr_cache_put(c, b))
		bad++;
	fake_realloc(dev);
	a = gdr_cache_get(c, dev + 4096, 4096);
	if (a && gdr_cache_put(c, a))
		bad++;
	a = gdr_cache_get(c, host, sizeof(host));
	if (a && gdr_cache_put(c, a))
		bad++;
	gdr_cache_purge(c);
	gdr_cache_invalidate(c, dev, 1 * MiB);
	return bad;
}

static void faults(void)
{
	struct gdr_cache *c;
	struct gdr_cache_stats st;
	long n, total = 0;
	int fds;
	char *dev;

	for (n = 1;; n++) {
		char scope[96];

		c = fresh(0, (size_t)-1, 0);
		dev = fake_alloc_device(0, 1 * MiB);
		fds = count_fds();
		fault_calls = 0;
		fault_where = NULL;
		fault_at = n;
		sequence(c, dev);
		fault_at = 0;
		if (!fault_where) {
			done(c);
			total = n - 1;
			break;
		}
		snprintf(scope, sizeof(scope), "cache, call %ld (%s) fails", n,
			 fault_where);
		check_scope = scope;
		st = stats(c);
		CHECK_INT(st.in_use, 0);
		/* Everything registered is held: entries, and MRs whose
		 * deregistration failed (kept for a retry). */
		CHECK(fake_ibv.live_mrs >= (int)st.entries);
		/* Still usable. */
		dev = fake_alloc_device(0, 1 * MiB);
		cycle(c, dev, 4096);
		CHECK_INT(gdr_cache_destroy(c), 0);
		CHECK_INT(fake_ibv.live_mrs, 0);
		CHECK_INT(count_fds(), fds);
	}
	printf("cache fault injection: %ld calls, each failed once\n", total);
	check_scope = "cache fault injection";
	CHECK(total >= 10);
}

/*
 * A put finds its entry from the get just before it without reading the
 * MR; that shortcut must stay within one cache: an MR from cache A put to
 * cache B is refused even straight after A gave it out, and puts that
 * follow gets of another cache still find their own entries.
 */
static void puts_find_their_cache(void)
{
	struct gdr_cache_attr attr = { 0 };
	struct gdr_cache *a, *b;
	struct ibv_mr *ma, *mb;
	char *p;

	check_scope = "puts go to the cache that gave the MR";
	a = fresh(0, (size_t)-1, 0);
	b = gdr_cache_create(&fake_pd, &attr);
	CHECK(a && b);
	p = fake_alloc_device(0, 2 * MiB);
	ma = gdr_cache_get(a, p, 4096);
	CHECK(ma != NULL);
	CHECK_INT(gdr_cache_put(b, ma), EINVAL);
	CHECK(strstr(gdr_last_error(), "not one the cache gave out") != NULL);
	mb = gdr_cache_get(b, p, 4096);
	CHECK(mb != NULL && mb != ma);
	CHECK_INT(gdr_cache_put(a, ma), 0);
	CHECK_INT(gdr_cache_put(a, ma), EINVAL); /* put back already */
	CHECK_INT(gdr_cache_put(b, mb), 0);
	CHECK_INT(stats(a).entries, 1);
	CHECK_INT(stats(b).entries, 1);
	CHECK_INT(gdr_cache_destroy(b), 0);
	done(a);
}

/*
 * Host memory a cache registers takes the host path straight away only
 * when nothing else could matter: the cache's gdr_reg_attr and
 * GPUDIRECT_DEBUG each send it through the whole decision, as
 * gdr_register() does.
 */
static struct gdr_cache *host_cache(const char *env_path, const char *debug,
				    const struct gdr_reg_attr *reg)
{
	return fresh_with(GDR_CACHE_HOST, (size_t)-1, 0, env_path, debug, reg);
}

static void host_walk_when_asked(void)
{
	static char buf[8192] __attribute__((aligned(4096)));
	struct gdr_reg_attr reg = { 0 };
	struct gdr_cache *c;
	struct ibv_mr *mr;
	char out[4096];
	FILE *f;
	int saved;
	size_t got;

	check_scope = "host memory, the cache's access flags";
	reg.comp_mask = GDR_REG_ATTR_ACCESS;
	reg.access = IBV_ACCESS_LOCAL_WRITE;
	c = host_cache(NULL, NULL, &reg);
	CHECK(c != NULL);
	mr = gdr_cache_get(c, buf, 4096);
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.last_access, IBV_ACCESS_LOCAL_WRITE);
	CHECK_INT(gdr_cache_put(c, mr), 0);
	done(c);

	/* GPUDIRECT_PATH chooses the path of device memory only: host
	 * memory keeps the host path (README). */
	check_scope = "host memory, GPUDIRECT_PATH=dmabuf";
	c = host_cache("dmabuf", NULL, NULL);
	CHECK(c != NULL);
	mr = gdr_cache_get(c, buf, 4096);
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.reg_calls, 1);
	if (mr)
		CHECK_INT(gdr_cache_put(c, mr), 0);
	done(c);

	check_scope = "host memory, GPUDIRECT_DEBUG=1";
	c = host_cache(NULL, "1", NULL);
	CHECK(c != NULL);
	f = tmpfile();
	CHECK(f != NULL);
	if (!c || !f)
		return;
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(f), 2);
	mr = gdr_cache_get(c, buf + 4096, 4096);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	CHECK(mr != NULL);
	rewind(f);
	got = fread(out, 1, sizeof(out) - 1, f);
	out[got] = '\0';
	fclose(f);
	/* the decision's lines: each path, the host one used */
	CHECK_HAS(out, "dmabuf: skipped");
	CHECK_HAS(out, "host: used");
	if (mr)
		CHECK_INT(gdr_cache_put(c, mr), 0);
	done(c);
}

int main(void)
{
	if (fixture_make(&fx))
		return 1;
	hits_and_misses();
	puts_find_their_cache();
	host_walk_when_asked();
	whole_allocation();
	freed_and_reallocated();
	vmm_chunks();
	stale_drops_overlaps();
	whole_vmm();
	many_mappings();
	trusted();
	eagain();
	invalidate_in_flight();
	many_out();
	clears_error();
	wrapping();
	limits();
	invalidate_purge();
	host_memory();
	second_put();
	put_window();
	errors();
	concurrent_misses();
	faults();
	fixture_remove(&fx);
	gdr_seam_install(NULL);
	return check_summary("cache");
}
