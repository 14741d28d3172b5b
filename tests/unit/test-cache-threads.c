/* SPDX-License-Identifier: MIT */
/*
 * The cache under concurrency (meant for TSan too): 8 threads x 10 000
 * get/put/invalidate over overlapping ranges of a few allocations, some
 * freed and reallocated meanwhile. Every MR handed out covers what was
 * asked; at the end nothing is in use and destroy releases everything.
 */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "fakes.h"

#define THREADS 8
#define ITERS 10000
#define ALLOCS 4
#define MiB (1024ull * 1024)

static struct gdr_cache *cache;
static char *base[ALLOCS];
static pthread_barrier_t start;
static long bad, gets;

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 7919u + 1;
	long b = 0, g = 0;
	int i;

	pthread_barrier_wait(&start);
	for (i = 0; i < ITERS; i++) {
		char *p = base[rand_r(&seed) % ALLOCS];
		size_t off = (size_t)(rand_r(&seed) % 16) * 65536;
		size_t len = (size_t)(rand_r(&seed) % 4 + 1) * 65536;
		int op = rand_r(&seed) % 16;
		struct ibv_mr *mr;

		if (op == 0) {
			gdr_cache_invalidate(cache, p + off, len);
			continue;
		}
		if (op == 1) {
			gdr_cache_purge(cache);
			continue;
		}
		mr = gdr_cache_get(cache, p + off, len);
		g++;
		if (!mr || (uintptr_t)mr->addr > (uintptr_t)(p + off) ||
		    (uintptr_t)(p + off + len) >
			    (uintptr_t)mr->addr + mr->length) {
			b++;
			continue;
		}
		if (gdr_cache_put(cache, mr))
			b++;
	}
	__atomic_add_fetch(&bad, b, __ATOMIC_RELAXED);
	__atomic_add_fetch(&gets, g, __ATOMIC_RELAXED);
	return NULL;
}

int main(void)
{
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS |
						    GDR_CACHE_ATTR_MAX_ENTRIES,
				       .flags = GDR_CACHE_WHOLE_ALLOC,
				       .max_entries = 6 };
	struct gdr_cache_stats st;
	pthread_t t[THREADS];
	struct fixture fx;
	long i;

	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	fake_ibv.lean = 1;
	for (i = 0; i < ALLOCS; i++)
		base[i] = fake_alloc_device(0, (i % 2 ? 2 : 32) * MiB);
	cache = gdr_cache_create(&fake_pd, &attr);
	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	check_scope = "8 threads x 10000 get/put/invalidate/purge";
	CHECK_INT(bad, 0);
	CHECK_INT(gdr_cache_query_stats(cache, &st, sizeof(st)), 0);
	CHECK_INT(st.in_use, 0);
	CHECK_INT(st.hits + st.misses + st.passthrough + st.uncached, gets);
	CHECK_INT(fake_ibv.live_mrs, st.entries);
	printf("%d threads x %d: %ld gets, %llu hits, %llu misses, %llu "
	       "evictions, %llu invalidated, %ld bad\n",
	       THREADS, ITERS, gets, (unsigned long long)st.hits,
	       (unsigned long long)st.misses, (unsigned long long)st.evictions,
	       (unsigned long long)st.invalidations, bad);
	CHECK_INT(gdr_cache_destroy(cache), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
	gdr_seam_install(NULL);
	return check_summary("cache-threads");
}
