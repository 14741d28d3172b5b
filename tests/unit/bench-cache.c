/* SPDX-License-Identifier: MIT */
/*
 * The cache's own cost on the CPU, over the fakes (no CUDA call on a hit of
 * host memory with GDR_CACHE_HOST): a hit with 1, 1k and 100k live
 * entries, on one entry and spread over all of them, and the put that
 * follows. The GPU benchmark (tests/gpu/bench-gpu.c) adds the buffer-id
 * query of device memory on top of this.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "check.h"
#include "fakes.h"

#define ROUNDS 31
#define PER 1000

static struct fixture fx;

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * @n live entries, then gets alternating by round between two patterns:
 * each on another entry (a prime stride: cold entries, memory latency
 * shows) and all on the same entry. Medians into @spread, @same, @put.
 */
static void run(char *base, size_t n, double *spread, double *same, double *put)
{
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS |
						    GDR_CACHE_ATTR_MAX_ENTRIES,
				       .flags = GDR_CACHE_HOST };
	static double ts[ROUNDS], tr[ROUNDS], tp[ROUNDS];
	static struct ibv_mr *mrs[PER];
	struct gdr_cache *c = gdr_cache_create(&fake_pd, &attr);
	size_t i, at = 0;
	int r, k, pass;

	if (!c)
		exit(1);
	for (i = 0; i < n; i++) {
		struct ibv_mr *mr = gdr_cache_get(c, base + i * 4096, 4096);

		if (!mr || gdr_cache_put(c, mr))
			exit(1);
	}
	for (r = 0; r < ROUNDS; r++) {
		for (pass = 0; pass < 2; pass++) {
			int spreading = (pass + r) % 2 == 0;
			double t0 = now_ns();

			for (k = 0; k < PER; k++) {
				if (spreading)
					at = (at + 7919) % n;
				mrs[k] = gdr_cache_get(c, base + at * 4096 + 64,
						       1024);
			}
			(spreading ? ts : tr)[r] = (now_ns() - t0) / PER;
			t0 = now_ns();
			for (k = 0; k < PER; k++)
				if (!mrs[k] || gdr_cache_put(c, mrs[k]))
					exit(1);
			if (spreading)
				tp[r] = (now_ns() - t0) / PER;
		}
	}
	if (gdr_cache_destroy(c))
		exit(1);
	qsort(ts, ROUNDS, sizeof(double), cmp);
	qsort(tr, ROUNDS, sizeof(double), cmp);
	qsort(tp, ROUNDS, sizeof(double), cmp);
	*spread = ts[ROUNDS / 2];
	*same = tr[ROUNDS / 2];
	*put = tp[ROUNDS / 2];
}

int main(void)
{
	static const size_t counts[] = { 1, 1000, 100000 };
	size_t span = counts[2] * 4096;
	double spread, same, put;
	char *base;
	int i;

	fakes_reset();
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	base = mmap(NULL, span, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return 1;
	printf("bench: cache hit of host memory (GDR_CACHE_HOST, no CUDA "
	       "call), median of %d rounds x %d\n",
	       ROUNDS, PER);
	for (i = 0; i < 3; i++) {
		run(base, counts[i], &spread, &same, &put);
		printf("bench:   %6zu live entries: get %.1f ns on one entry, "
		       "%.1f ns each on another (put %.1f ns)\n",
		       counts[i], same, spread, put);
	}
	munmap(base, span);
	fixture_remove(&fx);
	return 0;
}
