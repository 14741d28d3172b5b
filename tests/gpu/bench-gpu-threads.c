/* SPDX-License-Identifier: MIT */
/*
 * The cache's hits across threads on a real GPU, each thread on its own
 * buffer, with 1, 2, 4, 8 and 16 threads (the recording verbs stand in for
 * the NIC):
 *   query      one cuPointerGetAttribute(BUFFER_ID): what the driver costs
 *   validated  gdr_cache_get + put of device memory (the default mode)
 *   trusted    the same with GDR_CACHE_TRUSTED (no driver call on a hit)
 *   host       host memory with GDR_CACHE_HOST (no driver call at all)
 *   floor      one query and then a trusted get + put: what a validated hit
 *              cannot go below (its query plus the cache's own work)
 * Each round runs every case once, their order rotating by round; a case
 * gives each thread's ns per operation; the median and quartiles over all
 * rounds and threads are printed, with the goals: validated at N threads
 * at most 1.5x a query at N threads, host at 16 threads at most 1.5x host
 * at 1. Exits 77 without a GPU.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cutest.h"
#include "fakes.h"

#define MAX_THREADS 16
#define ROUNDS 11
#define OPS 20000
#define LEN (64 * 1024)

enum kase { QUERY, VALIDATED, TRUSTED, HOST, FLOOR, NUM_CASES };
static const char *const names[NUM_CASES] = { "query", "validated", "trusted",
					      "host", "floor" };

static struct gdr_cache *caches[NUM_CASES];
static CUdeviceptr dev[MAX_THREADS];
static char *host[MAX_THREADS];
static const struct gdr_cuda_ops *cu;
static pthread_barrier_t start, done;
static int nthreads;
static enum kase current;
static double per_op[MAX_THREADS];
static int failed;

static void *worker(void *arg)
{
	int me = (int)(long)arg, i;

	if (ct.cuCtxSetCurrent(ct.primary))
		__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
	for (;;) {
		enum kase k;
		double t0;
		void *p;

		pthread_barrier_wait(&start);
		k = current;
		if (me >= nthreads || (int)k < 0) {
			pthread_barrier_wait(&done);
			if ((int)k < 0)
				return NULL;
			continue;
		}
		p = k == HOST ? (void *)host[me] : (void *)(uintptr_t)dev[me];
		t0 = cutest_now_ns();
		for (i = 0; i < OPS; i++) {
			struct ibv_mr *mr;
			unsigned long long id;

			if (k == QUERY || k == FLOOR) {
				if (cu->cuPointerGetAttribute(
					    &id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					    (CUdeviceptr)(uintptr_t)p + 64))
					failed = 1;
				if (k == QUERY)
					continue;
			}
			mr = gdr_cache_get(caches[k == FLOOR ? TRUSTED : k],
					   (char *)p + 64, 4096);
			if (!mr ||
			    gdr_cache_put(caches[k == FLOOR ? TRUSTED : k], mr))
				__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
		}
		per_op[me] = (cutest_now_ns() - t0) / OPS;
		pthread_barrier_wait(&done);
	}
}

int main(void)
{
	static const int counts[] = { 1, 2, 4, 8, 16 };
	static double v[NUM_CASES][5][ROUNDS * MAX_THREADS];
	double med[NUM_CASES][5];
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS };
	pthread_t t[MAX_THREADS];
	char why[256];
	int rc, c, r, k, i, n;

	rc = cutest_init(0, why, sizeof(why));
	if (rc) {
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
		return rc;
	}
	fakes_reset();
	fakes_install_real_cuda();
	fake_ibv.lean = 1;
	for (i = 0; i < MAX_THREADS; i++) {
		if (ct.cuMemAlloc(&dev[i], LEN))
			return 1;
		host[i] = aligned_alloc(4096, LEN);
		if (!host[i])
			return 1;
		memset(host[i], 0, LEN);
	}
	attr.flags = 0;
	caches[VALIDATED] = gdr_cache_create(&fake_pd, &attr);
	attr.flags = GDR_CACHE_TRUSTED;
	caches[TRUSTED] = gdr_cache_create(&fake_pd, &attr);
	attr.flags = GDR_CACHE_HOST;
	caches[HOST] = gdr_cache_create(&fake_pd, &attr);
	cu = &gdr_cuda_table()->cu;
	if (!caches[VALIDATED] || !caches[TRUSTED] || !caches[HOST] || !cu) {
		printf("FAIL: %s\n", gdr_last_error());
		return 1;
	}
	pthread_barrier_init(&start, NULL, MAX_THREADS + 1);
	pthread_barrier_init(&done, NULL, MAX_THREADS + 1);
	for (i = 0; i < MAX_THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)i);
	for (c = 0; c < 5; c++) {
		nthreads = counts[c];
		for (r = 0; r < ROUNDS; r++) {
			for (k = 0; k < NUM_CASES; k++) {
				int kk = (k + r) % NUM_CASES;

				current = (enum kase)kk;
				pthread_barrier_wait(&start);
				pthread_barrier_wait(&done);
				for (i = 0; i < nthreads; i++)
					v[kk][c][r * nthreads + i] = per_op[i];
			}
		}
		for (k = 0; k < NUM_CASES; k++)
			qsort(v[k][c], (size_t)(ROUNDS * nthreads),
			      sizeof(double), cutest_cmp_double);
	}
	current = (enum kase) - 1;
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&done);
	for (i = 0; i < MAX_THREADS; i++)
		pthread_join(t[i], NULL);

	printf("bench: cache hits per thread, each thread on its own buffer; "
	       "ns per get+put (a query: per call), median [quartiles] of %d "
	       "rounds x threads\n",
	       ROUNDS);
	printf("bench: %-10s", "threads");
	for (c = 0; c < 5; c++)
		printf(" %21d", counts[c]);
	printf("\n");
	for (k = 0; k < NUM_CASES; k++) {
		printf("bench: %-10s", names[k]);
		for (c = 0; c < 5; c++) {
			n = ROUNDS * counts[c];
			med[k][c] = v[k][c][n / 2];
			printf(" %6.0f [%6.0f..%6.0f]", med[k][c],
			       v[k][c][n / 4], v[k][c][3 * n / 4]);
		}
		printf("\n");
	}
	for (c = 0; c < 5; c++)
		printf("bench: %2d threads: validated / query %.2f (goal 1.5: "
		       "%s), trusted / trusted at 1 thread %.2f, host / host "
		       "at 1 thread %.2f\n",
		       counts[c], med[VALIDATED][c] / med[QUERY][c],
		       med[VALIDATED][c] / med[QUERY][c] <= 1.5 ? "met"
								: "NOT met",
		       med[TRUSTED][c] / med[TRUSTED][0],
		       med[HOST][c] / med[HOST][0]);
	for (c = 0; c < 5; c++)
		printf("bench: %2d threads: floor (query + trusted hit) / query "
		       "%.2f, validated / floor %.2f\n",
		       counts[c], med[FLOOR][c] / med[QUERY][c],
		       med[VALIDATED][c] / med[FLOOR][c]);
	printf("bench: host at 16 threads / host at 1: %.2f (goal 1.5: %s)\n",
	       med[HOST][4] / med[HOST][0],
	       med[HOST][4] / med[HOST][0] <= 1.5 ? "met" : "NOT met");
	for (k = VALIDATED; k <= HOST; k++)
		if (gdr_cache_destroy(caches[k]))
			failed = 1;
	if (failed)
		printf("FAIL: a get, put or query failed\n");
	return failed;
}
