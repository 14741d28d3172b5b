/* SPDX-License-Identifier: MIT */
/*
 * The C side of the Python benchmarks (tests/python/bench.py), loaded with
 * ctypes into the same process: the same work done from C in a loop, one
 * call for the whole loop, so that no Python runs between its operations.
 */
#include <time.h>

#include <gpudirect.h>

double gdrpy_reg_loop(struct ibv_pd *pd, void *ptr, size_t len, int n);
double gdrpy_get_loop(struct gdr_cache *cache, void *ptr, size_t len, int n);
double gdrpy_reg_ex_loop(struct ibv_pd *pd, void *ptr, size_t len, int n);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per gdr_register() + gdr_deregister() of [@ptr, +@len), @n times;
 * -1 when one failed (gdr_last_error() says why). */
double gdrpy_reg_loop(struct ibv_pd *pd, void *ptr, size_t len, int n)
{
	double t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_mr *mr = gdr_register(pd, ptr, len);

		if (!mr || gdr_deregister(mr))
			return -1;
	}
	return (now_ns() - t0) / n;
}

/* The same with gdr_register_ex() and its decision record, as the
 * Python package asks for it. */
double gdrpy_reg_ex_loop(struct ibv_pd *pd, void *ptr, size_t len, int n)
{
	struct gdr_reg_info info;
	double t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_mr *mr = gdr_register_ex(pd, ptr, len, NULL, &info,
						    sizeof(info));

		if (!mr || gdr_deregister(mr))
			return -1;
	}
	return (now_ns() - t0) / n;
}

/* ns per gdr_cache_get() + gdr_cache_put(), @n times; -1 on a failure. */
double gdrpy_get_loop(struct gdr_cache *cache, void *ptr, size_t len, int n)
{
	double t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_mr *mr = gdr_cache_get(cache, ptr, len);

		if (!mr || gdr_cache_put(cache, mr))
			return -1;
	}
	return (now_ns() - t0) / n;
}
