/* SPDX-License-Identifier: MIT */
/*
 * One 64 MiB cuMemAlloc buffer on 8 PDs, on a real GPU with the recording
 * verbs table standing in for 8 NICs (the GPU machine has none), five
 * ways, taking turns call by call in one run, the first of each turn
 * rotating:
 *  - multi: gdr_register_multi() on the 8 PDs, then gdr_deregister_multi();
 *  - single: 8 gdr_register() calls (8 classifications, 8 exports), then 8
 *    gdr_deregister();
 *  - raw: bare verbs, no library: one memory-type query, one export, 8
 *    ibv_reg_dmabuf_mr on its fd, the close, 8 deregs;
 *  - one, raw1: one gdr_register() + gdr_deregister() on one PD, and its
 *    bare-verbs twin (query, export, one ibv_reg_dmabuf_mr, close, dereg).
 * The goal: the multi call costs at most one export plus the 8
 * registrations. Those are measured, per round, as raw + 8 x (one - raw1):
 * the bare verbs' one export and 8 registrations, plus 8 times what the
 * library adds to one registration. Also printed: multi/raw against the
 * bare verbs, with an aim of 1.02 (the library's decisions of 8 PDs
 * within 2% of verbs that cost almost nothing here), and multi/single
 * (< 1). Exits 77 without a GPU.
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

/* What @on registrations of the buffer cost without the library. */
static void raw_on(int on)
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
	for (i = 0; i < on; i++) {
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
	for (i = 0; i < on; i++)
		if (s->verbs.dereg_mr(mrs[i])) {
			fprintf(stderr, "bench: raw dereg failed\n");
			exit(1);
		}
}

static void one_call(void)
{
	mrs[0] = gdr_register(pds[0], buf, len);
	if (!mrs[0])
		die("gdr_register");
	if (gdr_deregister(mrs[0]))
		die("gdr_deregister");
}

static void raw1_call(void)
{
	raw_on(1);
}

static void raw8_call(void)
{
	raw_on(RAILS);
}

#define WAYS 5
static void (*const way[WAYS])(void) = { multi_call, single_call, raw8_call,
					 one_call, raw1_call };
static const char *const way_name[WAYS] = { "multi", "single", "raw", "one",
					    "raw1" };

/* Median and quartiles of @v (@n values, sorted here) into @q. */
static void quartiles(double *v, int n, double q[3])
{
	qsort(v, (size_t)n, sizeof(double), cutest_cmp_double);
	q[0] = v[n / 4];
	q[1] = v[n / 2];
	q[2] = v[3 * n / 4];
}

int main(void)
{
	static double t[WAYS][ROUNDS], mr_t[ROUNDS], ms_t[ROUNDS],
		goal_t[ROUNDS];
	double t0, q[WAYS][3], mr[3], ms[3], goal[3];
	int exports[2] = { 0, 0 };
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
	/* The exports of the library's two ways, counted by the fakes. */
	for (w = 0; w < 2; w++) {
		fake_cu.exports = 0;
		way[w]();
		exports[w] = fake_cu.exports;
	}
	for (i = 0; i < 20; i++) /* warm every way */
		for (w = 0; w < WAYS; w++)
			way[w]();
	/* The ways take turns call by call (the first of each turn
	 * rotating), so that a round's drift is shared by all of them: the
	 * goal's bound is a difference of two of them. */
	for (i = 0; i < ROUNDS; i++) {
		for (k = 0; k < PER; k++)
			for (n = 0; n < WAYS; n++) {
				w = (i + k + n) % WAYS;
				t0 = cutest_now_ns();
				way[w]();
				t[w][i] += cutest_now_ns() - t0;
			}
		for (w = 0; w < WAYS; w++)
			t[w][i] /= PER;
		mr_t[i] = t[0][i] / t[2][i];
		ms_t[i] = t[0][i] / t[1][i];
		/* one export and 8 registrations: raw + 8 x (one - raw1) */
		goal_t[i] = t[0][i] / (t[2][i] + RAILS * (t[3][i] - t[4][i]));
	}
	printf("bench: one 64 MiB cuMemAlloc buffer on %d PDs (recording "
	       "verbs), %d rounds x %d calls each, taking turns call by call\n",
	       RAILS, ROUNDS, PER);
	for (w = 0; w < WAYS; w++) {
		quartiles(t[w], ROUNDS, q[w]);
		printf("bench: %-6s median %8.2f us per buffer (quartiles "
		       "%.2f..%.2f)",
		       way_name[w], q[w][1] / 1e3, q[w][0] / 1e3,
		       q[w][2] / 1e3);
		if (w < 2)
			printf(", %d export%s", exports[w],
			       exports[w] == 1 ? "" : "s");
		printf("\n");
	}
	quartiles(goal_t, ROUNDS, goal);
	quartiles(mr_t, ROUNDS, mr);
	quartiles(ms_t, ROUNDS, ms);
	printf("bench: the library's part of one registration (one - raw1, "
	       "medians) %.2f us; the bound raw + 8 x that %.2f us\n",
	       (q[3][1] - q[4][1]) / 1e3,
	       (q[2][1] + RAILS * (q[3][1] - q[4][1])) / 1e3);
	printf("bench: multi / (one export + 8 registrations), median of %d "
	       "paired rounds = %.4f (quartiles %.4f..%.4f; goal <= 1: %s)\n",
	       ROUNDS, goal[1], goal[0], goal[2],
	       goal[1] <= 1 ? "met" : "NOT met");
	printf("bench: multi/raw (bare verbs) = %.4f (quartiles %.4f..%.4f; aim "
	       "<= 1.02: %s)\n",
	       mr[1], mr[0], mr[2], mr[1] <= 1.02 ? "met" : "NOT met");
	printf("bench: multi/single = %.4f (quartiles %.4f..%.4f; goal < 1: "
	       "%s)\n",
	       ms[1], ms[0], ms[2], ms[1] < 1 ? "met" : "NOT met");
	ct.cuMemFree(d);
	return exports[0] == 1 && exports[1] == RAILS ? 0 : 1;
}
