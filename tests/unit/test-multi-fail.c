/* SPDX-License-Identifier: MIT */
/*
 * gdr_register_multi() failing part-way, record by record, and
 * gdr_deregister_multi() against a release the kernel answers with its
 * internal 524. The buffer is on GPU 1 of two, so that a record that
 * names GPU 0 or no GPU where the buffer's is due is told apart.
 *
 * gdr_register_multi(3): record i is that of pds[i]. Those before the
 * failing PD describe MRs made and released; the failing PD's says what
 * was tried; a PD never tried has path GDR_PATH_NONE and no attempts, on
 * the buffer the call classified (its memory type and GPU, as every
 * other record of the call); export_index -1 wherever no MR stays.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fakes.h"
#include "errnos.h"

#define NUM 4
#define GPU 1

static struct fake_nic nics[NUM];
static struct ibv_pd *pds[NUM];

/* A node of two GPUs and NUM DMA-BUF NICs, except NIC @bad (-1: none),
 * which the node does not know: no path takes it. */
static void node(struct fixture *fx, int bad)
{
	char name[32];
	int i;

	fakes_reset();
	fixture_make(fx);
	fixture_write(fx->proc, "driver/nvidia/version", NV_OPEN);
	fake_model.num_gpus = 2;
	for (i = 0; i < NUM; i++) {
		snprintf(name, sizeof(name), "fake_rail_%d", i);
		fake_add_nic(&nics[i], name, i != bad);
		pds[i] = &nics[i].pd;
	}
	fakes_install(fx, NULL, NULL, NULL);
}

/* Record @r is that of a PD that was never tried, on a buffer of
 * @mem_type on GPU @device. */
static void untried(const struct gdr_reg_info *r, enum gdr_mem_type mem_type,
		    int device)
{
	CHECK_INT(r->comp_mask, GDR_REG_INFO_BASIC | GDR_REG_INFO_EXPORT);
	CHECK_INT(r->path, GDR_PATH_NONE);
	CHECK_INT(r->num_attempts, 0);
	CHECK_INT(r->mem_type, mem_type);
	CHECK_INT(r->device, device);
	CHECK_INT(r->export_index, -1);
}

/* The PD at @bad has no path: every record as documented. */
static void fails_at(int bad)
{
	struct gdr_reg_info infos[NUM];
	struct ibv_mr *mrs[NUM];
	struct fixture fx;
	char scope[64];
	int i, a;
	void *p;

	snprintf(scope, sizeof(scope), "records: pds[%d] of %d fails", bad,
		 NUM);
	check_scope = scope;
	node(&fx, bad);
	p = fake_alloc_device(GPU, 1 << 20);
	memset(infos, 0xa5, sizeof(infos));
	memset(mrs, 0xa5, sizeof(mrs));
	errno = 0;
	CHECK_INT(gdr_register_multi(pds, NUM, p, 8192, NULL, mrs, infos,
				     sizeof(infos[0])),
		  -1);
	CHECK_INT(errno, EOPNOTSUPP);
	for (i = 0; i < NUM; i++) {
		const struct gdr_reg_info *r = &infos[i];

		CHECK(mrs[i] == NULL);
		if (i > bad) {
			untried(r, GDR_MEM_CUDA_DEVICE, GPU);
			continue;
		}
		CHECK_INT(r->comp_mask,
			  GDR_REG_INFO_BASIC | GDR_REG_INFO_EXPORT);
		CHECK_INT(r->mem_type, GDR_MEM_CUDA_DEVICE);
		CHECK_INT(r->device, GPU);
		CHECK(r->num_attempts >= 1 &&
		      r->num_attempts <= GDR_REG_INFO_MAX_ATTEMPTS);
		if (i < bad) {
			/* made on DMA-BUF from the call's one export, then
			 * released */
			CHECK_INT(r->path, GDR_PATH_DMABUF);
			CHECK_INT(r->export_index, 0);
			CHECK_INT(r->attempts[r->num_attempts - 1].path,
				  GDR_PATH_DMABUF);
			CHECK_INT(r->attempts[r->num_attempts - 1].result,
				  GDR_ATTEMPT_USED);
			continue;
		}
		/* the failing PD: tried, nothing used */
		CHECK_INT(r->path, GDR_PATH_NONE);
		CHECK_INT(r->export_index, -1);
		for (a = 0;
		     a < (int)r->num_attempts && a < GDR_REG_INFO_MAX_ATTEMPTS;
		     a++)
			CHECK(r->attempts[a].result != GDR_ATTEMPT_USED);
	}
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

/* Failures of the call itself: before any PD was tried. */
static void call_fails(void)
{
	struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_FLAGS,
				     .flags = GDR_REG_SYNC_MEMOPS };
	struct gdr_reg_info infos[NUM];
	struct ibv_mr *mrs[NUM];
	struct fixture fx;
	int i;
	void *p;

	/* GDR_REG_SYNC_MEMOPS refused after the buffer was classified:
	 * every record is on GPU 1, none tried. */
	check_scope = "records: GDR_REG_SYNC_MEMOPS refused";
	node(&fx, -1);
	p = fake_alloc_device(GPU, 1 << 20);
	fake_cu.set_attr_result = CUDA_ERROR_NOT_PERMITTED;
	memset(infos, 0xa5, sizeof(infos));
	errno = 0;
	CHECK_INT(gdr_register_multi(pds, NUM, p, 8192, &attr, mrs, infos,
				     sizeof(infos[0])),
		  -1);
	CHECK_INT(errno, EPERM);
	CHECK(strncmp(gdr_last_error(), "pds[", 4) != 0);
	for (i = 0; i < NUM; i++)
		untried(&infos[i], GDR_MEM_CUDA_DEVICE, GPU);
	fake_cu.set_attr_result = CUDA_SUCCESS;

	/* The buffer not classified (the pointer query failed): no record
	 * names a memory type or a GPU. */
	check_scope = "records: the buffer not classified";
	fake_cu.attrs_result = CUDA_ERROR_OUT_OF_MEMORY;
	memset(infos, 0xa5, sizeof(infos));
	errno = 0;
	CHECK_INT(gdr_register_multi(pds, NUM, p, 8192, NULL, mrs, infos,
				     sizeof(infos[0])),
		  -1);
	CHECK_INT(errno, ENOMEM);
	for (i = 0; i < NUM; i++)
		untried(&infos[i], GDR_MEM_UNKNOWN, -1);
	fake_cu.attrs_result = CUDA_SUCCESS;
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

/* Only the second release answers 524. */
static int dereg_calls;

static void second_answers_524(void)
{
	fake_ibv.dereg_errno = ++dereg_calls == 2 ? GDR_ENOTSUPP : 0;
}

/*
 * gdr_deregister_multi() never returns 524, the kernel's internal
 * ENOTSUPP, nor leaves it in errno: EOPNOTSUPP, as every public call
 * (gdr_register(3)); the MR stays in mrs, the message says 524 in words.
 */
static void deregister_524(void)
{
	struct ibv_mr *mrs[NUM], *one;
	struct fixture fx;
	int i;
	void *p;

	check_scope = "gdr_deregister_multi: ibv_dereg_mr answers 524";
	node(&fx, -1);
	p = fake_alloc_device(GPU, 1 << 20);
	CHECK_INT(gdr_register_multi(pds, NUM, p, 8192, NULL, mrs, NULL, 0), 0);
	fake_ibv.dereg_errno = GDR_ENOTSUPP;
	errno = 0;
	CHECK_INT(gdr_deregister_multi(mrs, NUM), EOPNOTSUPP);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_HAS(gdr_last_error(), "ibv_dereg_mr of mrs[0] failed with 524 "
				    "(the kernel's internal ENOTSUPP, "
				    "reported as EOPNOTSUPP)");
	for (i = 0; i < NUM; i++)
		CHECK(mrs[i] != NULL);
	fake_ibv.dereg_errno = 0;
	CHECK_INT(gdr_deregister_multi(mrs, NUM), 0);
	for (i = 0; i < NUM; i++)
		CHECK(mrs[i] == NULL);

	/* One of four: the others released, that one kept and named. */
	check_scope = "gdr_deregister_multi: mrs[1] answers 524";
	CHECK_INT(gdr_register_multi(pds, NUM, p, 8192, NULL, mrs, NULL, 0), 0);
	dereg_calls = 0;
	fake_ibv.dereg_hook = second_answers_524;
	errno = 0;
	CHECK_INT(gdr_deregister_multi(mrs, NUM), EOPNOTSUPP);
	CHECK_INT(errno, EOPNOTSUPP);
	fake_ibv.dereg_hook = NULL;
	fake_ibv.dereg_errno = 0;
	CHECK_HAS(gdr_last_error(), "mrs[1] failed with 524");
	CHECK(mrs[0] == NULL && mrs[1] != NULL && mrs[2] == NULL &&
	      mrs[3] == NULL);
	CHECK_INT(gdr_deregister_multi(mrs, NUM), 0);

	check_scope = "gdr_deregister: ibv_dereg_mr answers 524";
	one = gdr_register(pds[0], p, 8192);
	CHECK(one != NULL);
	fake_ibv.dereg_errno = GDR_ENOTSUPP;
	errno = 0;
	CHECK_INT(gdr_deregister(one), EOPNOTSUPP);
	CHECK_INT(errno, EOPNOTSUPP);
	fake_ibv.dereg_errno = 0;
	CHECK_INT(gdr_deregister(one), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

int main(void)
{
	int bad;

	for (bad = 0; bad < NUM; bad++)
		fails_at(bad);
	call_fails();
	deregister_524();
	return check_summary("multi-fail");
}
