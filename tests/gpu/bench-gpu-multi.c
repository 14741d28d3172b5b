/* SPDX-License-Identifier: MIT */
/*
 * One 64 MiB cuMemAlloc buffer on 8 PDs, on a real GPU with the recording
 * verbs table standing in for 8 NICs (the GPU machine has none), three
 * ways, interleaved in one run with the order rotating every round:
 *  - multi: gdr_register_multi() on the 8 PDs, then gdr_deregister_multi();
 *  - single: 8 gdr_register() calls (8 classifications, 8 exports), then 8
 *    gdr_deregister();
 *  - raw: what the multi call should cost at most: one memory-type query,
 *    one export, 8 ibv_reg_dmabuf_mr on its fd, the close, 8 deregs.
 * Goals: multi/raw <= 1.02 (one export plus the 8 registrations), and
 * multi cheaper than single. Exits 77 without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cutest.h"
#include "fakes.h"

#define RAILS 8
#define ROUNDS 101
#define PER 50

static struct fake_nic rails[RAILS];
static struct ibv_pd *pds[RAILS];
static struct ibv_mr *mrs[RAILS];
static void *buf;
static size_t len = 64ull << 20;

static void die(const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, gdr_last_error());
	exit(1);
}

static void multi_call(void)
{
	if (gdr_register_multi(pds, RAILS, buf, len, NULL, mrs, NULL, 0))
		die("gdr_register_multi");
	if (gdr_deregister_multi(mrs, RAILS))
		die("gdr_deregister_multi");
}

static void single_call(void)
{
	int i;

	for (i = 0; i < RAILS; i++) {
		mrs[i] = gdr_register(pds[i], buf, len);
		if (!mrs[i])
			die("gdr_register");
	}
	for (i = 0; i < RAILS; i++)
		if (gdr_deregister(mrs[i]))
			die("gdr_deregister");
}

static void raw_call(void)
{
	const struct gdr_seam *s = gdr_seam();
	unsigned int type = 0;
	int fd = -1, i;

	if (ct.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				     (CUdeviceptr)buf) ||
	    type != CU_MEMORYTYPE_DEVICE ||
	    ct.cuMemGetHandleForAddressRange(
		    &fd, (CUdeviceptr)buf, len,
		    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0)) {
		fprintf(stderr, "bench: raw export failed\n");
		exit(1);
	}
	for (i = 0; i < RAILS; i++) {
		mrs[i] = s->verbs.reg_dmabuf_mr(
			pds[i], 0, len, (uintptr_t)buf, fd,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_RELAXED_ORDERING);
		if (!mrs[i]) {
			fprintf(stderr, "bench: raw registration failed\n");
			exit(1);
		}
	}
	close(fd);
	for (i = 0; i < RAILS; i++)
		if (s->verbs.dereg_mr(mrs[i])) {
			fprintf(stderr, "bench: raw dereg failed\n");
			exit(1);
		}
}

static void (*const way[3])(void) = { multi_call, single_call, raw_call };
static const char *const way_name[3] = { "multi", "single", "raw" };

int main(void)
{
	static double t[3][ROUNDS], mr_t[ROUNDS], ms_t[ROUNDS];
	int exports[3] = { 0, 0, 0 };
	double t0;
	char why[256];
	CUdeviceptr d;
	int i, k, w, n;

	i = cutest_init(0, why, sizeof(why));
	if (i) {
		printf("%s: %s\n", i == 77 ? "SKIP" : "FAIL", why);
		return i;
	}
	if (ct.cuMemAlloc(&d, len)) {
		printf("bench: cuMemAlloc failed\n");
		return 1;
	}
	buf = (void *)d;
	fakes_reset();
	fake_ibv.lean = 1;
	for (i = 0; i < RAILS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "rail_mlx5_%d", i);
		fake_add_nic(&rails[i], name, 1);
		pds[i] = &rails[i].pd;
	}
	fakes_install_real_cuda();
	/* The exports each way makes (the library's, counted by the fakes). */
	for (w = 0; w < 2; w++) {
		fake_cu.exports = 0;
		way[w]();
		exports[w] = fake_cu.exports;
	}
	exports[2] = 1;
	for (i = 0; i < 20; i++) /* warm all three */
		for (w = 0; w < 3; w++)
			way[w]();
	for (i = 0; i < ROUNDS; i++) {
		for (n = 0; n < 3; n++) {
			w = (i + n) % 3; /* rotate which goes first */
			t0 = cutest_now_ns();
			for (k = 0; k < PER; k++)
				way[w]();
			t[w][i] = (cutest_now_ns() - t0) / PER;
		}
		mr_t[i] = t[0][i] / t[2][i];
		ms_t[i] = t[0][i] / t[1][i];
	}
	for (w = 0; w < 3; w++)
		qsort(t[w], ROUNDS, sizeof(double), cutest_cmp_double);
	qsort(mr_t, ROUNDS, sizeof(double), cutest_cmp_double);
	qsort(ms_t, ROUNDS, sizeof(double), cutest_cmp_double);
	printf("bench: one 64 MiB cuMemAlloc buffer on %d PDs (recording "
	       "verbs), %d rounds x %d calls each, order rotating\n",
	       RAILS, ROUNDS, PER);
	for (w = 0; w < 3; w++)
		printf("bench: %-6s median %8.2f us per buffer (quartiles "
		       "%.2f..%.2f), %d export%s\n",
		       way_name[w], t[w][ROUNDS / 2] / 1e3,
		       t[w][ROUNDS / 4] / 1e3, t[w][3 * ROUNDS / 4] / 1e3,
		       exports[w], exports[w] == 1 ? "" : "s");
	printf("bench: multi/raw, median of %d paired rounds = %.4f (quartiles "
	       "%.4f..%.4f; goal <= 1.02: %s)\n",
	       ROUNDS, mr_t[ROUNDS / 2], mr_t[ROUNDS / 4], mr_t[3 * ROUNDS / 4],
	       mr_t[ROUNDS / 2] <= 1.02 ? "met" : "NOT met");
	printf("bench: multi/single = %.4f (quartiles %.4f..%.4f; goal < 1: "
	       "%s)\n",
	       ms_t[ROUNDS / 2], ms_t[ROUNDS / 4], ms_t[3 * ROUNDS / 4],
	       ms_t[ROUNDS / 2] < 1 ? "met" : "NOT met");
	ct.cuMemFree(d);
	return exports[0] == 1 && exports[1] == RAILS ? 0 : 1;
}
