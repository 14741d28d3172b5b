/* SPDX-License-Identifier: MIT */
/*
 * gdr_register_multi(): one buffer on several fake NICs. One
 * classification and one export serve every PD that takes the same
 * mapping; each PD gets its own path; the export's fd is closed before the
 * call returns; a failure at any position releases what was made and names
 * the PD; bad arguments are refused with EINVAL and a reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fakes.h"
#include "errnos.h"

#define PM_NV_MEM "kernel/mm/memory_peers/nv_mem/version"
#define MAX_NICS 8

/* The NICs of the node. */
static struct fake_nic nics[MAX_NICS];
static struct ibv_pd *pds[MAX_NICS];

enum nic_kind {
	NIC_DMABUF = 0, /* mlx5, DMA-BUF MRs, no Data Direct function */
	NIC_NO_DMABUF,	/* refuses DMA-BUF MRs: peermem where it is loaded */
	NIC_DD,		/* mlx5 with a Data Direct function */
	NIC_UNKNOWN,	/* not in the model: no path at all */
};

static const char *kind_name[] = { "dmabuf", "nodmabuf", "dd", "unknown" };

/* NIC @i of kind @k (after fakes_reset(), before fakes_install()). */
static void nic(int i, enum nic_kind k)
{
	struct gdr_model_nic *m;
	char name[64];

	snprintf(name, sizeof(name), "fake_%s_%d", kind_name[k], i);
	m = fake_add_nic(&nics[i], name, k != NIC_UNKNOWN);
	pds[i] = &nics[i].pd;
	if (k == NIC_NO_DMABUF) {
		m->dmabuf_probe_errno = EOPNOTSUPP;
		m->mlx5 = 0;
	}
	if (k == NIC_DD)
		m->data_direct_errno = 0;
}

/* A fresh node with @n NICs of @kinds; @peermem: nvidia-peermem loaded. */
static void node(struct fixture *fx, const enum nic_kind *kinds, int n,
		 int peermem)
{
	int i;

	fakes_reset();
	fixture_make(fx);
	fixture_write(fx->proc, "driver/nvidia/version", NV_OPEN);
	if (peermem)
		fixture_write(fx->sys, PM_NV_MEM, "1.1\n");
	for (i = 0; i < n; i++)
		nic(i, kinds[i]);
	fakes_install(fx, NULL, NULL, NULL);
}

static void healthy_rails(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF, NIC_DMABUF,
					   NIC_DMABUF };
	struct gdr_reg_info infos[4];
	struct ibv_mr *mrs[4];
	struct fixture fx;
	int i, fds;
	void *p;

	check_scope = "four DMA-BUF rails: one export";
	node(&fx, k, 4, 0);
	p = fake_alloc_device(0, 4 << 20);
	fds = count_fds();
	memset(infos, 0xa5, sizeof(infos));
	CHECK_INT(gdr_register_multi(pds, 4, (char *)p + 100, 1 << 20, NULL,
				     mrs, infos, sizeof(infos[0])),
		  0);
	CHECK_STR(gdr_last_error(), "");
	CHECK_INT(fake_cu.exports, 1);
	CHECK_INT(fake_ibv.dmabuf_calls, 4);
	/* The export's fd is closed; each MR holds its own reference. */
	CHECK_INT(count_fds(), fds + 4);
	for (i = 0; i < 4; i++) {
		CHECK(mrs[i] != NULL);
		if (!mrs[i])
			continue;
		CHECK(mrs[i]->pd == pds[i]);
		CHECK(mrs[i]->addr == (char *)p + 100);
		CHECK_INT(mrs[i]->length, 1 << 20);
		CHECK_INT(infos[i].path, GDR_PATH_DMABUF);
		CHECK_INT(infos[i].mem_type, GDR_MEM_CUDA_DEVICE);
		CHECK_INT(infos[i].export_index, 0);
		CHECK_INT(infos[i].comp_mask,
			  GDR_REG_INFO_BASIC | GDR_REG_INFO_EXPORT);
	}
	CHECK_INT(gdr_deregister_multi(mrs, 4), 0);
	for (i = 0; i < 4; i++)
		CHECK(mrs[i] == NULL);
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(count_fds(), fds);

	check_scope = "four rails, then one gdr_register each";
	fake_cu.exports = 0;
	for (i = 0; i < 4; i++) {
		mrs[i] = gdr_register(pds[i], p, 1 << 20);
		CHECK(mrs[i] != NULL);
	}
	CHECK_INT(fake_cu.exports, 4);
	CHECK_INT(gdr_deregister_multi(mrs, 4), 0);
	fixture_remove(&fx);
}

/* @quiet: no records, so that a PD whose device answered like the one
 * before it takes that PD's decision (it must come out the same). */
static void mixed_rails(int quiet)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_NO_DMABUF, NIC_DD,
					   NIC_DD, NIC_DMABUF };
	static const enum gdr_path want[] = { GDR_PATH_DMABUF, GDR_PATH_PEERMEM,
					      GDR_PATH_DATA_DIRECT,
					      GDR_PATH_DATA_DIRECT,
					      GDR_PATH_DMABUF };
	/* plain export first (0), the PCIe-mapped one second (1) */
	static const int want_export[] = { 0, -1, 1, 1, 0 };
	struct gdr_reg_info infos[5];
	struct ibv_mr *mrs[5];
	struct fixture fx;
	int i, fds;
	void *p;

	check_scope = quiet ? "mixed rails, no records: each PD its own path"
			    : "mixed rails: each PD its own path";
	node(&fx, k, 5, 1);
	p = fake_alloc_device(0, 2 << 20);
	fds = count_fds();
	CHECK_INT(gdr_register_multi(pds, 5, p, 2 << 20, NULL, mrs,
				     quiet ? NULL : infos, sizeof(infos[0])),
		  0);
	CHECK_INT(fake_cu.exports, 2);
	CHECK_INT(fake_cu.flagged_exports, 1);
	CHECK_INT(fake_ibv.dmabuf_calls, 2);
	CHECK_INT(fake_ibv.mlx5_reg_calls, 2);
	CHECK_INT(fake_ibv.reg_calls, 1);
	/* four MRs hold a dma-buf; the peermem one holds none */
	CHECK_INT(count_fds(), fds + 4);
	for (i = 0; i < 5; i++) {
		check_scope = nics[i].dev.name;
		if (!quiet) {
			CHECK_INT(infos[i].path, want[i]);
			CHECK_INT(infos[i].export_index, want_export[i]);
		}
		CHECK(mrs[i] && mrs[i]->addr == p);
	}
	CHECK_INT(gdr_deregister_multi(mrs, 5), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(count_fds(), fds);
	fixture_remove(&fx);
}

/* A PD with no path at position @bad of 4: nothing stays registered. */
static void fails_at(int bad)
{
	enum nic_kind k[4] = { NIC_DMABUF, NIC_DMABUF, NIC_DMABUF, NIC_DMABUF };
	struct gdr_reg_info infos[4];
	struct ibv_mr *mrs[4];
	struct fixture fx;
	char want[64], scope[64];
	int i, fds;
	void *p;

	snprintf(scope, sizeof(scope), "the PD at %d has no path", bad);
	check_scope = scope;
	k[bad] = NIC_UNKNOWN;
	node(&fx, k, 4, 0);
	p = fake_alloc_device(0, 1 << 20);
	fds = count_fds();
	memset(mrs, 0xa5, sizeof(mrs));
	memset(infos, 0xa5, sizeof(infos));
	errno = 0;
	CHECK_INT(gdr_register_multi(pds, 4, p, 4096, NULL, mrs, infos,
				     sizeof(infos[0])),
		  -1);
	CHECK_INT(errno, EOPNOTSUPP);
	snprintf(want, sizeof(want), "pds[%d] (%s) of 4: cannot register", bad,
		 nics[bad].dev.name);
	CHECK_HAS(gdr_last_error(), want);
	if (bad) {
		snprintf(want, sizeof(want),
			 "the MRs made on pds[0..%d] are released", bad - 1);
		CHECK_HAS(gdr_last_error(), want);
	}
	for (i = 0; i < 4; i++) {
		CHECK(mrs[i] == NULL);
		CHECK_INT(infos[i].path,
			  i < bad ? GDR_PATH_DMABUF : GDR_PATH_NONE);
		if (i > bad)
			CHECK_INT(infos[i].num_attempts, 0);
	}
	CHECK(infos[bad].num_attempts > 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(count_fds(), fds);
	CHECK_INT(fake_cu.exports, bad ? 1 : 0);
	fixture_remove(&fx);
}

static void host_and_flags(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_NO_DMABUF,
					   NIC_DMABUF };
	struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_FLAGS,
				     .flags = GDR_REG_SYNC_MEMOPS };
	struct gdr_reg_info infos[3];
	struct ibv_mr *mrs[3];
	struct ibv_pd *two[2];
	struct fixture fx;
	void *host, *p;
	int i;

	check_scope = "host memory on three rails";
	node(&fx, k, 3, 0);
	host = aligned_alloc(4096, 65536);
	CHECK_INT(gdr_register_multi(pds, 3, host, 65536, NULL, mrs, infos,
				     sizeof(infos[0])),
		  0);
	CHECK_INT(fake_cu.exports, 0);
	for (i = 0; i < 3; i++) {
		int a;

		CHECK_INT(infos[i].path, GDR_PATH_HOST);
		CHECK_INT(infos[i].export_index, -1);
		/* Each record says why the device paths were skipped, and
		 * the host path that took it has no reason to give. */
		CHECK_INT(infos[i].num_attempts, 4);
		for (a = 0; a < 3; a++) {
			CHECK_INT(infos[i].attempts[a].result,
				  GDR_ATTEMPT_SKIPPED);
			CHECK_HAS(infos[i].attempts[a].reason,
				  "this path registers device memory, the "
				  "buffer is host memory");
		}
		CHECK_INT(infos[i].attempts[3].path, GDR_PATH_HOST);
		CHECK_INT(infos[i].attempts[3].result, GDR_ATTEMPT_USED);
		CHECK_STR(infos[i].attempts[3].reason, "");
	}
	CHECK_INT(gdr_deregister_multi(mrs, 3), 0);

	check_scope = "GDR_REG_SYNC_MEMOPS is applied once";
	p = fake_alloc_device(0, 1 << 20);
	two[0] = pds[0];
	two[1] = pds[2];
	CHECK_INT(gdr_register_multi(two, 2, p, 4096, &attr, mrs, NULL, 0), 0);
	CHECK_INT(fake_cu.set_attr_calls, 1);
	CHECK_INT(gdr_deregister_multi(mrs, 2), 0);

	check_scope = "a 0.2-sized record gets no export_index";
	{
		char small[GDR_REG_INFO_MIN_SIZE +
			   GDR_REG_INFO_MAX_ATTEMPTS *
				   sizeof(struct gdr_path_attempt) +
			   8];
		struct gdr_reg_info *r = (struct gdr_reg_info *)(void *)small;
		size_t sz = offsetof(struct gdr_reg_info, export_index);

		memset(small, 0x5a, sizeof(small));
		CHECK_INT(gdr_register_multi(pds, 1, p, 4096, NULL, mrs, r, sz),
			  0);
		CHECK_INT(r->comp_mask, GDR_REG_INFO_BASIC);
		CHECK((unsigned char)small[sz] == 0x5a);
		CHECK_INT(gdr_deregister_multi(mrs, 1), 0);
	}
	check_scope = "records an odd number of bytes apart";
	{
		/* Any info_size is the caller's to choose: records need not
		 * be aligned (an unaligned store is undefined; UBSan sees
		 * it). */
		size_t sz = sizeof(struct gdr_reg_info) + 1;
		char *odd = calloc(2, sz);
		int idx = -2;

		CHECK_INT(gdr_register_multi(two, 2, p, 4096, NULL, mrs, infos,
					     sizeof(infos[0])),
			  0);
		CHECK_INT(gdr_deregister_multi(mrs, 2), 0);
		CHECK(odd != NULL);
		if (odd) {
			CHECK_INT(gdr_register_multi(
					  two, 2, p, 4096, NULL, mrs,
					  (struct gdr_reg_info *)(void *)odd,
					  sz),
				  0);
			memcpy(&idx,
			       odd + sz +
				       offsetof(struct gdr_reg_info,
						export_index),
			       sizeof(idx));
			CHECK_INT(idx, infos[1].export_index);
			CHECK_INT(gdr_deregister_multi(mrs, 2), 0);
			free(odd);
		}
	}
	free(host);
	fixture_remove(&fx);
}

static void bad_arguments(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF };
	struct ibv_pd *dup[2], *null_pd[2];
	struct ibv_mr *mrs[2];
	struct gdr_reg_info info;
	struct fixture fx;
	void *p;

	node(&fx, k, 2, 0);
	p = fake_alloc_device(0, 1 << 20);
	dup[0] = dup[1] = pds[0];
	null_pd[0] = pds[0];
	null_pd[1] = NULL;
#define REFUSED(scope, call, words)                                            \
	do {                                                                   \
		check_scope = scope;                                           \
		errno = 0;                                                     \
		CHECK_INT(call, -1);                                           \
		CHECK_INT(errno, EINVAL);                                      \
		CHECK_HAS(gdr_last_error(), words);                            \
	} while (0)
	REFUSED("NULL pds",
		gdr_register_multi(NULL, 2, p, 4096, NULL, mrs, NULL, 0),
		"must not be NULL");
	REFUSED("NULL mrs",
		gdr_register_multi(pds, 2, p, 4096, NULL, NULL, NULL, 0),
		"must not be NULL");
	REFUSED("num 0",
		gdr_register_multi(pds, 0, p, 4096, NULL, mrs, NULL, 0),
		"num is 0");
	REFUSED("num over the maximum",
		gdr_register_multi(pds, GDR_REG_MULTI_MAX + 1, p, 4096, NULL,
				   mrs, NULL, 0),
		"GDR_REG_MULTI_MAX");
	REFUSED("a NULL PD",
		gdr_register_multi(null_pd, 2, p, 4096, NULL, mrs, NULL, 0),
		"pds[1] is NULL");
	check_scope = "an argument error leaves no garbage in mrs";
	memset(mrs, 0xa5, sizeof(mrs));
	CHECK_INT(gdr_register_multi(dup, 2, p, 4096, NULL, mrs, NULL, 0), -1);
	CHECK(mrs[0] == NULL && mrs[1] == NULL);
	REFUSED("a PD twice",
		gdr_register_multi(dup, 2, p, 4096, NULL, mrs, NULL, 0),
		"pds[1] is pds[0] again");
	REFUSED("a small info_size",
		gdr_register_multi(pds, 2, p, 4096, NULL, mrs, &info, 4),
		"info_size 4");
	REFUSED("len 0", gdr_register_multi(pds, 2, p, 0, NULL, mrs, NULL, 0),
		"len is 0");
	check_scope = "records past the end of the address space";
	memset(&info, 0xa5, sizeof(info));
	memset(mrs, 0xa5, sizeof(mrs));
	REFUSED("records past the end of the address space",
		gdr_register_multi(pds, 2, p, 4096, NULL, mrs, &info,
				   SIZE_MAX / 2),
		"past the end of the address space");
	CHECK_INT(info.comp_mask, 0xa5a5a5a5u);	 /* not written */
	CHECK(mrs[0] == NULL && mrs[1] == NULL); /* num is known: cleared */
	check_scope = "num out of range: the arrays are not written";
	memset(mrs, 0xa5, sizeof(mrs));
	CHECK_INT(gdr_register_multi(pds, GDR_REG_MULTI_MAX + 1, p, 4096, NULL,
				     mrs, &info, sizeof(info)),
		  -1);
	CHECK(mrs[0] == (struct ibv_mr *)(uintptr_t)0xa5a5a5a5a5a5a5a5ull);
	CHECK_INT(info.comp_mask, 0xa5a5a5a5u);
	/* the call's own error names no PD */
	CHECK(strncmp(gdr_last_error(), "pds[", 4) != 0);
	CHECK_INT(fake_ibv.live_mrs, 0);

	check_scope = "gdr_deregister_multi: one MR that will not go";
	CHECK_INT(gdr_register_multi(pds, 2, p, 4096, NULL, mrs, NULL, 0), 0);
	fake_ibv.dereg_errno = EBUSY;
	errno = 0;
	CHECK_INT(gdr_deregister_multi(mrs, 2), EBUSY);
	CHECK_INT(errno, EBUSY);
	CHECK_HAS(gdr_last_error(), "mrs[0]");
	CHECK_HAS(gdr_last_error(), "something still holds it: destroy the "
				    "memory windows bound to it");
	CHECK(mrs[0] != NULL && mrs[1] != NULL);
	/* not memory windows: the device's trouble, said as such */
	fake_ibv.dereg_errno = EIO;
	CHECK_INT(gdr_deregister_multi(mrs, 2), EIO);
	CHECK_HAS(gdr_last_error(), "see the kernel log");
	CHECK(!strstr(gdr_last_error(), "memory windows"));
	fake_ibv.dereg_errno = 0;
	CHECK_INT(gdr_deregister_multi(mrs, 2), 0);
	CHECK(mrs[0] == NULL && mrs[1] == NULL);
	CHECK_INT(gdr_deregister_multi(NULL, 2), EINVAL);
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

/*
 * The driver refuses the export (NOT_SUPPORTED: DMA-BUF is "not
 * supported" for this buffer) and nvidia-peermem takes every rail: the
 * refusal is asked once per call, not once per PD, and each record says
 * why DMA-BUF failed.
 */
static void export_refused_once(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF, NIC_DMABUF };
	struct gdr_reg_info infos[3];
	struct ibv_mr *mrs[3];
	struct fixture fx;
	int i, quiet;

	for (quiet = 0; quiet < 2; quiet++) {
		check_scope = quiet ? "an export refused, no records"
				    : "an export refused, with records";
		node(&fx, k, 3, 1);
		fake_cu.export_result = CUDA_ERROR_NOT_SUPPORTED;
		CHECK_INT(gdr_register_multi(
				  pds, 3, fake_alloc_device(0, 1 << 20), 4096,
				  NULL, mrs, quiet ? NULL : infos,
				  sizeof(infos[0])),
			  0);
		fake_cu.export_result = 0;
		CHECK_INT(fake_cu.exports, 1);
		CHECK_INT(fake_ibv.dmabuf_calls, 0);
		CHECK_INT(fake_ibv.reg_calls, 3);
		for (i = 0; !quiet && i < 3; i++) {
			CHECK_INT(infos[i].path, GDR_PATH_PEERMEM);
			CHECK_INT(infos[i].attempts[1].path, GDR_PATH_DMABUF);
			CHECK_INT(infos[i].attempts[1].result,
				  GDR_ATTEMPT_FAILED);
			CHECK_HAS(infos[i].attempts[1].reason,
				  "cuMemGetHandleForAddressRange");
		}
		CHECK_INT(gdr_deregister_multi(mrs, 3), 0);
		fixture_remove(&fx);
	}
}

/* The second release answers EBUSY, the others work. */
static int dereg_calls;
static void second_dereg_busy(void)
{
	fake_ibv.dereg_errno = ++dereg_calls == 2 ? EBUSY : 0;
}

/*
 * The fourth rail has no path and none of the three MRs made before it can
 * be released: the message names every one that stays (and the errno of
 * the first), and they stay in mrs for gdr_deregister_multi().
 */
static void roll_back_fails(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF, NIC_DMABUF,
					   NIC_UNKNOWN };
	struct ibv_mr *mrs[4];
	struct fixture fx;
	void *p;

	check_scope = "a roll-back whose releases fail";
	node(&fx, k, 4, 0);
	p = fake_alloc_device(0, 1 << 20);
	fake_ibv.dereg_errno = EBUSY;
	errno = 0;
	CHECK_INT(gdr_register_multi(pds, 4, p, 4096, NULL, mrs, NULL, 0), -1);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_HAS(gdr_last_error(),
		  "; releasing the MRs of pds[0, 1, 2] failed (the first with "
		  "EBUSY");
	CHECK_HAS(gdr_last_error(), "they stay in mrs at the same places "
				    "(release them with gdr_deregister_multi)");
	CHECK(!strstr(gdr_last_error(), "are released"));
	CHECK(mrs[0] && mrs[1] && mrs[2] && !mrs[3]);
	CHECK_INT(fake_ibv.live_mrs, 3);
	fake_ibv.dereg_errno = 0;
	CHECK_INT(gdr_deregister_multi(mrs, 4), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);

	check_scope = "a roll-back where one release fails";
	fake_ibv.dereg_hook = second_dereg_busy;
	dereg_calls = 0;
	CHECK_INT(gdr_register_multi(pds, 4, p, 4096, NULL, mrs, NULL, 0), -1);
	fake_ibv.dereg_hook = NULL;
	fake_ibv.dereg_errno = 0;
	CHECK_HAS(gdr_last_error(), "; releasing the MR of pds[1] failed with "
				    "EBUSY");
	CHECK_HAS(gdr_last_error(), "it stays in mrs[1] (release it with");
	CHECK(!mrs[0] && mrs[1] && !mrs[2]);
	CHECK_INT(gdr_deregister_multi(mrs, 4), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

/*
 * Two Data Direct rails on a GPU that refuses the PCIe mapping: the first
 * PD learns it (one PCIe-mapped export, refused) and falls back to
 * DMA-BUF; the second must not ask again. The node and GPU verdicts are
 * asked once per call, but this one changes within the call: it is never
 * taken from that memo. With and without the record (the quiet path).
 */
/*
 * Rails that answer alike in runs, without records: each run's later PDs
 * take the first one's decision, and a device that answers otherwise
 * (refuses DMA-BUF; has a Data Direct function) gets its own; the counts
 * of each kind of registration say which path every PD took. Then the same
 * with records (every PD decided in full) must agree.
 */
static void alike_rails(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF,	  NIC_DMABUF,
					   NIC_NO_DMABUF, NIC_NO_DMABUF,
					   NIC_DMABUF,	  NIC_DD,
					   NIC_DD,	  NIC_DMABUF };
	static const enum gdr_path want[] = {
		GDR_PATH_DMABUF,      GDR_PATH_DMABUF, GDR_PATH_PEERMEM,
		GDR_PATH_PEERMEM,     GDR_PATH_DMABUF, GDR_PATH_DATA_DIRECT,
		GDR_PATH_DATA_DIRECT, GDR_PATH_DMABUF,
	};
	struct gdr_reg_info infos[8];
	struct ibv_mr *mrs[8];
	struct fixture fx;
	int quiet, i;
	void *p;

	for (quiet = 1; quiet >= 0; quiet--) {
		check_scope = quiet ? "rails alike in runs, no records"
				    : "rails alike in runs, records";
		node(&fx, k, 8, 1);
		p = fake_alloc_device(0, 2 << 20);
		CHECK_INT(gdr_register_multi(pds, 8, p, 2 << 20, NULL, mrs,
					     quiet ? NULL : infos,
					     sizeof(infos[0])),
			  0);
		CHECK_INT(fake_ibv.dmabuf_calls, 4);
		CHECK_INT(fake_ibv.mlx5_reg_calls, 2);
		CHECK_INT(fake_ibv.reg_calls, 2);
		CHECK_INT(fake_cu.exports, 2);
		for (i = 0; i < 8; i++) {
			CHECK(mrs[i] && mrs[i]->pd == pds[i]);
			if (!quiet) {
				CHECK_INT(infos[i].path, want[i]);
				CHECK_INT(infos[i].num_attempts,
					  want[i] == GDR_PATH_DATA_DIRECT ? 1
					  : want[i] == GDR_PATH_DMABUF	  ? 2
									  : 3);
			}
		}
		CHECK_INT(gdr_deregister_multi(mrs, 8), 0);
		CHECK_INT(fake_ibv.live_mrs, 0);
		fixture_remove(&fx);
	}
}

/* The first registration of the call answers EOPNOTSUPP, the rest work. */
static int hook_calls;
static void first_refused(void)
{
	fake_ibv.dmabuf_errno = hook_calls++ ? 0 : EOPNOTSUPP;
}

/*
 * A path that failed is not a decision to keep: the first rail's DMA-BUF
 * registration answers EOPNOTSUPP (it falls back to nvidia-peermem), and
 * the second, answering alike to the probe, tries DMA-BUF again and gets
 * it (no records: the reuse applies).
 */
static void failed_path_tried_again(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF };
	struct ibv_mr *mrs[2];
	struct fixture fx;

	check_scope = "a path that failed on one rail is tried on the next";
	node(&fx, k, 2, 1);
	hook_calls = 0;
	fake_ibv.reg_hook = first_refused;
	CHECK_INT(gdr_register_multi(pds, 2, fake_alloc_device(0, 1 << 20),
				     1 << 20, NULL, mrs, NULL, 0),
		  0);
	fake_ibv.reg_hook = NULL;
	CHECK_INT(fake_ibv.dmabuf_calls, 2);
	CHECK_INT(fake_ibv.reg_calls, 1);
	CHECK_INT(gdr_deregister_multi(mrs, 2), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

/* The DMA-BUF registration of the rail at hook_at answers hook_errno. */
static int hook_at, hook_errno;
static void dmabuf_fails_at(void)
{
	fake_ibv.dmabuf_errno =
		fake_ibv.dmabuf_calls == hook_at + 1 ? hook_errno : 0;
}

/*
 * A later rail, answering alike, tries the path the rail before it took,
 * and that registration fails with @err: "not supported" moves on to the
 * next path (nvidia-peermem where @peermem); any other errno ends the
 * call with that errno, names the PD and releases the MRs made.
 */
static void recalled_fails(int err, int peermem)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF, NIC_DMABUF,
					   NIC_DMABUF };
	struct ibv_mr *mrs[4];
	struct fixture fx;
	char scope[96], want[96];
	int i, fds, rc;
	void *p;

	snprintf(scope, sizeof(scope),
		 "the third rail's recalled DMA-BUF answers %s, peermem %s",
		 gdr_errno_name(err), peermem ? "loaded" : "absent");
	check_scope = scope;
	node(&fx, k, 4, peermem);
	p = fake_alloc_device(0, 1 << 20);
	fds = count_fds();
	hook_at = 2;
	hook_errno = err;
	fake_ibv.reg_hook = dmabuf_fails_at;
	errno = 0;
	rc = gdr_register_multi(pds, 4, p, 1 << 20, NULL, mrs, NULL, 0);
	fake_ibv.reg_hook = NULL;
	fake_ibv.dmabuf_errno = 0;
	if (gdr_err_is_unsupported(err) && peermem) {
		CHECK_INT(rc, 0);
		/* the fourth rail goes back to DMA-BUF: a failure is not a
		 * decision */
		CHECK_INT(fake_ibv.dmabuf_calls, 4);
		CHECK_INT(fake_ibv.reg_calls, 1);
		for (i = 0; i < 4; i++)
			CHECK(mrs[i] != NULL);
		CHECK_INT(fake_ibv.live_mrs, 4);
		CHECK_INT(gdr_deregister_multi(mrs, 4), 0);
	} else {
		CHECK_INT(rc, -1);
		CHECK_INT(errno,
			  gdr_err_is_unsupported(err) ? EOPNOTSUPP : err);
		snprintf(want, sizeof(want),
			 "pds[2] (%s) of 4: cannot register", nics[2].dev.name);
		CHECK_HAS(gdr_last_error(), want);
		CHECK_HAS(gdr_last_error(), "dmabuf failed: ibv_reg_dmabuf_mr");
		CHECK_HAS(gdr_last_error(), gdr_errno_name(err));
		CHECK_HAS(gdr_last_error(), "are released");
		/* no other path hides a real error */
		CHECK_INT(fake_ibv.reg_calls, 0);
		CHECK_INT(fake_ibv.dmabuf_calls, 3);
		for (i = 0; i < 4; i++)
			CHECK(mrs[i] == NULL);
	}
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(count_fds(), fds);
	CHECK_INT(fake_cu.exports, 1);
	fixture_remove(&fx);
}

/* The second DMA-BUF registration of the call fails with EPERM. */
static void second_refused(void)
{
	fake_ibv.dmabuf_errno = hook_calls++ ? EPERM : 0;
}

/*
 * pds[1] answers like pds[0] and takes its decision (no records), then its
 * registration fails: the message is the one the full walk writes (with
 * records), path for path. @masked: a path mask without Data Direct (its
 * skip is then said), else the default (Data Direct does not concern these
 * NICs: not said).
 */
static void recalled_then_failed(int masked)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF };
	struct gdr_reg_attr attr = {
		.comp_mask = GDR_REG_ATTR_PATH_MASK,
		.path_mask = GDR_PATH_BIT(GDR_PATH_DMABUF) |
			     GDR_PATH_BIT(GDR_PATH_PEERMEM) |
			     GDR_PATH_BIT(GDR_PATH_HOST),
	};
	struct gdr_reg_info infos[2];
	char msg[2][GDR_MSG_LEN];
	struct ibv_mr *mrs[2];
	struct fixture fx;
	int quiet;
	void *p;

	check_scope = masked ? "a recalled decision fails: the same message "
			       "(path mask)"
			     : "a recalled decision fails: the same message";
	node(&fx, k, 2, 0);
	p = fake_alloc_device(0, 1 << 20);
	for (quiet = 0; quiet < 2; quiet++) {
		hook_calls = 0;
		fake_ibv.dmabuf_errno = 0;
		fake_ibv.reg_hook = second_refused;
		CHECK_INT(gdr_register_multi(
				  pds, 2, p, 4096, masked ? &attr : NULL, mrs,
				  quiet ? NULL : infos, sizeof(infos[0])),
			  -1);
		fake_ibv.reg_hook = NULL;
		fake_ibv.dmabuf_errno = 0;
		snprintf(msg[quiet], sizeof(msg[quiet]), "%s",
			 gdr_last_error());
	}
	CHECK_STR(msg[1], msg[0]);
	CHECK_HAS(msg[1], "pds[1] (fake_dmabuf_1) of 2: cannot register");
	if (masked)
		CHECK_HAS(msg[1], "data-direct skipped: not allowed by "
				  "gdr_reg_attr.path_mask");
	else
		CHECK(!strstr(msg[1], "data-direct"));
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

/* The path field of record @i of records @size bytes apart. */
static enum gdr_path path_at(const void *recs, size_t size, int i)
{
	enum gdr_path path;

	memcpy(&path,
	       (const char *)recs + (size_t)i * size +
		       offsetof(struct gdr_reg_info, path),
	       sizeof(path));
	return path;
}

/* Records of exactly GDR_REG_INFO_MIN_SIZE bytes are accepted and reset;
 * a smaller info_size is refused without a byte written. */
static void record_sizes(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF };
	unsigned char small[2][GDR_REG_INFO_MIN_SIZE];
	struct ibv_pd *dup[2];
	struct gdr_reg_info info;
	struct ibv_mr *mrs[2];
	struct fixture fx;
	unsigned int n;
	void *p;

	check_scope = "records of GDR_REG_INFO_MIN_SIZE";
	node(&fx, k, 2, 0);
	p = fake_alloc_device(0, 1 << 20);
	memset(small, 0xa5, sizeof(small));
	CHECK_INT(gdr_register_multi(pds, 2, p, 4096, NULL, mrs,
				     (struct gdr_reg_info *)(void *)small,
				     GDR_REG_INFO_MIN_SIZE),
		  0);
	CHECK_INT(path_at(small, GDR_REG_INFO_MIN_SIZE, 1), GDR_PATH_DMABUF);
	CHECK_INT(gdr_deregister_multi(mrs, 2), 0);
	dup[0] = dup[1] = pds[0];
	memset(small, 0xa5, sizeof(small));
	CHECK_INT(gdr_register_multi(dup, 2, p, 4096, NULL, mrs,
				     (struct gdr_reg_info *)(void *)small,
				     GDR_REG_INFO_MIN_SIZE),
		  -1);
	CHECK_INT(path_at(small, GDR_REG_INFO_MIN_SIZE, 1), GDR_PATH_NONE);
	memcpy(&n, small[1] + offsetof(struct gdr_reg_info, num_attempts),
	       sizeof(n));
	CHECK_INT(n, 0);

	check_scope = "a small info_size: nothing written";
	memset(&info, 0x5a, sizeof(info));
	CHECK_INT(gdr_register_multi(pds, 2, p, 4096, NULL, mrs, &info, 4), -1);
	CHECK(((unsigned char *)&info)[4] == 0x5a);
	CHECK(((unsigned char *)&info)[GDR_REG_INFO_MIN_SIZE - 1] == 0x5a);
	/* one byte short: refused, EINVAL, nothing written */
	errno = 0;
	CHECK_INT(gdr_register_multi(pds, 2, p, 4096, NULL, mrs, &info,
				     GDR_REG_INFO_MIN_SIZE - 1),
		  -1);
	CHECK_INT(errno, EINVAL);
	CHECK(((unsigned char *)&info)[0] == 0x5a);
	CHECK(((unsigned char *)&info)[GDR_REG_INFO_MIN_SIZE - 2] == 0x5a);
	fixture_remove(&fx);
}

/*
 * Many stuck MRs: the message stays whole (its remedy at the end), names
 * the first few by index and counts the rest; no index is cut.
 */
static void roll_back_many(void)
{
	enum { N = 200 };
	static struct ibv_pd *many[N];
	static struct ibv_pd extra[N];
	static struct ibv_mr *mrs[N];
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_UNKNOWN };
	struct fixture fx;
	const char *m;
	int i;

	check_scope = "a roll-back of 199 stuck MRs";
	node(&fx, k, 2, 0);
	for (i = 0; i < N - 1; i++) {
		extra[i] = nics[0].pd; /* more PDs of the first device */
		many[i] = &extra[i];
	}
	many[N - 1] = pds[1];
	fake_ibv.dereg_errno = EIO;
	CHECK_INT(gdr_register_multi(many, N, fake_alloc_device(0, 1 << 20),
				     4096, NULL, mrs, NULL, 0),
		  -1);
	fake_ibv.dereg_errno = 0;
	m = gdr_last_error();
	CHECK_HAS(m, "pds[199] (fake_unknown_1) of 200: cannot register");
	CHECK_HAS(m, "; releasing the MRs of pds[0, 1, 2, 3, 4, 5, 6, 7, 8");
	CHECK_HAS(m, "] and ");
	CHECK_HAS(m, " more failed (the first with EIO");
	CHECK_HAS(m, "(release them with gdr_deregister_multi)");
	CHECK_INT(fake_ibv.live_mrs, N - 1);
	CHECK_INT(gdr_deregister_multi(mrs, N), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

/* A Data Direct registration that fails hard is the PD's failure (its
 * one attempt), named as such. */
static void one_attempt_failure(void)
{
	static const enum nic_kind k[] = { NIC_DD, NIC_DD };
	struct ibv_mr *mrs[2];
	struct fixture fx;
	void *p;

	check_scope = "a PD that failed at its first path is named";
	node(&fx, k, 2, 0);
	p = fake_alloc_device(0, 1 << 20);
	fake_ibv.mlx5_reg_errno = EPERM;
	CHECK_INT(gdr_register_multi(pds, 2, p, 4096, NULL, mrs, NULL, 0), -1);
	fake_ibv.mlx5_reg_errno = 0;
	CHECK_HAS(gdr_last_error(), "pds[0] (fake_dd_0) of 2: ");
	fixture_remove(&fx);
}

/* GDR_REG_MULTI_MAX PDs and an argument error: every MR slot is NULL. */
static void max_pds_cleared(void)
{
	static struct ibv_pd *many[GDR_REG_MULTI_MAX];
	static struct ibv_mr *mrs[GDR_REG_MULTI_MAX];
	static char dummy[GDR_REG_MULTI_MAX];
	unsigned int i;
	int bad = 0;

	check_scope = "GDR_REG_MULTI_MAX PDs, the last one twice";
	for (i = 0; i < GDR_REG_MULTI_MAX; i++)
		many[i] = (struct ibv_pd *)(void *)&dummy[i];
	many[GDR_REG_MULTI_MAX - 1] = many[0];
	memset(mrs, 0xa5, sizeof(mrs));
	CHECK_INT(gdr_register_multi(many, GDR_REG_MULTI_MAX, dummy, 4096, NULL,
				     mrs, NULL, 0),
		  -1);
	for (i = 0; i < GDR_REG_MULTI_MAX; i++)
		bad += mrs[i] != NULL;
	CHECK_INT(bad, 0);
}

/*
 * What a multi-PD call keeps of each decision (struct gdr_reg_decided),
 * seen from inside: kept when every path before the used one was skipped
 * and the used one has no condition that changes within a call, with the
 * device's answers; a later alike PD takes it; a decision whose path failed
 * first, or whose path needs a changing condition (Data Direct: the PCIe
 * mapping), is not kept.
 */
static void decision_kept(void)
{
	static const enum nic_kind k[] = { NIC_DMABUF, NIC_DMABUF, NIC_DD };
	struct gdr_reg_call call;
	struct gdr_reg_info rec;
	struct ibv_mr *mr[4];
	char why[GDR_MSG_LEN];
	struct fixture fx;
	void *p;
	int i;

	check_scope = "the decision a multi-PD call keeps";
	node(&fx, k, 3, 1);
	p = fake_alloc_device(0, 1 << 20);
	gdr_reg_call_init(&call);
	call.reuse = true;
	CHECK_INT(gdr_reg_one(&call, pds[0], p, 4096, NULL, gdr_reg_paths(),
			      &rec, false, &mr[0], why, sizeof(why)),
		  0);
	CHECK(call.decided.valid);
	CHECK_INT(call.decided.used, 1);
	CHECK_INT(call.decided.skipped[0].path, GDR_PATH_DATA_DIRECT);
	CHECK(call.decided.skipped[0].cond);
	CHECK_STR(call.decided.nic.key.name, "fake_dmabuf_0");
	CHECK_INT(gdr_reg_one(&call, pds[1], p, 4096, NULL, gdr_reg_paths(),
			      &rec, false, &mr[1], why, sizeof(why)),
		  0);
	CHECK_INT(rec.path, GDR_PATH_DMABUF);
	CHECK_INT(rec.num_attempts, 2);
	CHECK_INT(rec.attempts[0].result, GDR_ATTEMPT_SKIPPED);
	CHECK_INT(rec.attempts[1].result, GDR_ATTEMPT_USED);
	CHECK(call.decided.valid);
	/* Data Direct needs the PCIe mapping, which may change: not kept */
	CHECK_INT(gdr_reg_one(&call, pds[2], p, 4096, NULL, gdr_reg_paths(),
			      &rec, false, &mr[2], why, sizeof(why)),
		  0);
	CHECK_INT(rec.path, GDR_PATH_DATA_DIRECT);
	CHECK(!call.decided.valid);
	gdr_reg_call_end(&call);
	for (i = 0; i < 3; i++)
		CHECK_INT(gdr_deregister(mr[i]), 0);

	check_scope = "a decision whose path failed first is not kept";
	gdr_reg_call_init(&call);
	call.reuse = true;
	CHECK_INT(gdr_reg_one(&call, pds[0], p, 4096, NULL, gdr_reg_paths(),
			      &rec, false, &mr[0], why, sizeof(why)),
		  0);
	CHECK(call.decided.valid);
	hook_calls = 0;
	fake_ibv.reg_hook = first_refused;
	CHECK_INT(gdr_reg_one(&call, pds[1], p, 4096, NULL, gdr_reg_paths(),
			      &rec, false, &mr[1], why, sizeof(why)),
		  0);
	fake_ibv.reg_hook = NULL;
	fake_ibv.dmabuf_errno = 0;
	CHECK_INT(rec.path, GDR_PATH_PEERMEM);
	CHECK(!call.decided.valid);
	gdr_reg_call_end(&call);
	for (i = 0; i < 2; i++)
		CHECK_INT(gdr_deregister(mr[i]), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

static void dd_rails_pcie_refused(void)
{
	static const enum nic_kind k[] = { NIC_DD, NIC_DD };
	struct gdr_reg_info infos[2];
	struct ibv_mr *mrs[2];
	struct fixture fx;
	int quiet, i;
	void *p;

	for (quiet = 0; quiet < 2; quiet++) {
		check_scope = quiet ? "two DD rails, PCIe refused, no record"
				    : "two DD rails, PCIe refused, record";
		node(&fx, k, 2, 0);
		fake_model.gpu[0].pcie_mapping = CUDA_ERROR_NOT_SUPPORTED;
		p = fake_alloc_device(0, 2 << 20);
		CHECK_INT(gdr_register_multi(pds, 2, p, 2 << 20, NULL, mrs,
					     quiet ? NULL : infos,
					     sizeof(infos[0])),
			  0);
		CHECK_INT(fake_cu.flagged_exports, 1);
		CHECK_INT(fake_cu.exports, 2); /* the refused one, the plain */
		CHECK_INT(fake_ibv.mlx5_reg_calls, 0);
		CHECK_INT(fake_ibv.dmabuf_calls, 2);
		for (i = 0; !quiet && i < 2; i++)
			CHECK_INT(infos[i].path, GDR_PATH_DMABUF);
		CHECK_INT(gdr_deregister_multi(mrs, 2), 0);
		fixture_remove(&fx);
	}
}

/*
 * A long reason and a roll-back that fails: the reason is cut to leave
 * room for what the roll-back says (which MR stays, and what to do), so
 * that the remedy is never the part cut off.
 */
static void long_reason_roll_back(void)
{
	static const char long_name[] =
		"rail_with_a_very_long_device_name_of_sixty_three_characters_x";
	struct gdr_model_nic *m;
	struct ibv_mr *mrs[2];
	struct fixture fx;
	const char *msg;

	check_scope = "a long reason, then a roll-back that fails";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fixture_write(fx.sys, PM_NV_MEM, "1.1\n"); /* peermem loaded */
	fake_add_nic(&nics[0], "fake_dmabuf_0", 1);
	pds[0] = &nics[0].pd;
	m = fake_add_nic(&nics[1], long_name, 1);
	m->dmabuf_probe_errno = EOPNOTSUPP; /* peermem's rail */
	m->mlx5 = 0;
	pds[1] = &nics[1].pd;
	fakes_install(&fx, NULL, NULL, NULL);
	fake_ibv.reg_errno = EFAULT; /* peermem's registration */
	fake_ibv.dereg_errno = EBUSY;
	CHECK_INT(gdr_register_multi(pds, 2, fake_alloc_device(0, 1 << 20),
				     4096, NULL, mrs, NULL, 0),
		  -1);
	fake_ibv.dereg_errno = 0;
	fake_ibv.reg_errno = 0;
	msg = gdr_last_error();
	printf("%zu: %s\n", strlen(msg), msg);
	CHECK_HAS(msg, "pds[1] (");
	CHECK_HAS(msg, "; releasing the MR of pds[0] failed with EBUSY");
	CHECK_HAS(msg, "(release it with gdr_deregister_multi)");
	CHECK(mrs[0] != NULL && mrs[1] == NULL);
	CHECK_INT(gdr_deregister_multi(mrs, 2), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

int main(void)
{
	int i;

	healthy_rails();
	mixed_rails(0);
	mixed_rails(1);
	alike_rails();
	failed_path_tried_again();
	recalled_fails(EOPNOTSUPP, 1);
	recalled_fails(EOPNOTSUPP, 0);
	recalled_fails(ENOMEM, 1);
	recalled_fails(EFAULT, 0);
	dd_rails_pcie_refused();
	for (i = 0; i < 4; i++)
		fails_at(i);
	host_and_flags();
	bad_arguments();
	roll_back_fails();
	roll_back_many();
	long_reason_roll_back();
	export_refused_once();
	recalled_then_failed(0);
	recalled_then_failed(1);
	record_sizes();
	one_attempt_failure();
	max_pds_cleared();
	decision_kept();
	printf("multi: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}
