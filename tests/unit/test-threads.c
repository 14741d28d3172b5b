/* SPDX-License-Identifier: MIT */
/*
 * Concurrency: many threads call gdr_register at once on a cold process
 * (they race on the first probes, which publish with one compare-and-swap
 * each), then 8 threads x 10000 register and
 * deregister over the fakes, device and host memory mixed. Meant for TSan
 * too (tools/run.sh builds it with -fsanitize=thread).
 */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "fakes.h"

#define THREADS 8
#define ITERS 10000

static void *dev;
static pthread_barrier_t start;
static long failures;
static char host[THREADS][4096];

static void *worker(void *arg)
{
	long id = (long)arg, bad = 0;
	int i, iters = ITERS;

	pthread_barrier_wait(&start);
	for (i = 0; i < iters; i++) {
		void *p = (i + id) % 2 ? dev : host[id];
		struct gdr_reg_info info;
		struct ibv_mr *mr = gdr_register_ex(&fake_pd, p, 4096, NULL,
						    &info, sizeof(info));

		if (!mr || mr->addr != p ||
		    info.path != (p == dev ? GDR_PATH_DMABUF : GDR_PATH_HOST) ||
		    gdr_deregister(mr))
			bad++;
	}
	__atomic_add_fetch(&failures, bad, __ATOMIC_RELAXED);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	struct fixture fx;
	long i;

	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	dev = fake_alloc_device(0, 1 << 20);
	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	check_scope = "8 threads x 10000, cold start";
	CHECK_INT(failures, 0);
	/* Racing first calls may each probe (no lock is held across the
	 * probe); the answers agree, and later calls probe no more. */
	CHECK(fake_ibv.probes >= 1 && fake_ibv.probes <= THREADS);
	CHECK_INT(fake_ibv.live_mrs, 0);
	printf("%d threads x %d registrations: %ld failures, %d NIC probes\n",
	       THREADS, ITERS, failures, fake_ibv.probes);
	fixture_remove(&fx);
	gdr_seam_install(NULL);
	return check_summary("threads");
}
