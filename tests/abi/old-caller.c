/* SPDX-License-Identifier: MIT */
/*
 * A program written against libgpudirect 0.1: its structs have the 0.1
 * sizes (struct gdr_reg_info with room for 4 attempts) and it binds to the
 * GPUDIRECT_0.1 symbols, as a binary built then does. The library must fill
 * what 0.1 promised and write nothing past the caller's structs.
 *
 * Built twice: against the shared library (the real symbol binding), and
 * against the internal library with the fakes (a registration that records
 * every path).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#ifdef WITH_FAKES
#include "check.h"
#include "fakes.h"
#else
static int check_passed, check_failed;
#define CHECK(c)                                                               \
	do {                                                                   \
		if (c) {                                                       \
			check_passed++;                                        \
		} else {                                                       \
			check_failed++;                                        \
			fprintf(stderr, "FAIL %s:%d %s\n", __FILE__, __LINE__, \
				#c);                                           \
		}                                                              \
	} while (0)
#endif

/* The 0.1 header's structs, as a program compiled then has them. */
struct attempt_0_1 {
	int path, result, err;
	char reason[256];
};

struct info_0_1 {
	uint32_t comp_mask;
	int path, mem_type, device;
	unsigned int num_attempts;
	struct attempt_0_1 attempts[4];
};

struct item_0_1 {
	const char *section, *key, *value;
	int verdict;
	const char *remedy;
};

struct attr_0_1 {
	uint32_t comp_mask;
	int access;
	uint32_t path_mask;
	uint32_t flags;
};

struct gdr_report;
struct ibv_mr *reg_ex_0_1(struct ibv_pd *pd, void *ptr, size_t len,
			  const struct attr_0_1 *attr, struct info_0_1 *info);
int item_0_1(const struct gdr_report *r, unsigned int index,
	     struct item_0_1 *item);
__asm__(".symver reg_ex_0_1, gdr_register_ex@GPUDIRECT_0.1");
__asm__(".symver item_0_1, gdr_report_item@GPUDIRECT_0.1");

struct gdr_report *gdr_report_create(struct ibv_context *const *ctxs,
				     unsigned int num_ctxs, uint32_t flags);
void gdr_report_destroy(struct gdr_report *report);
const char *gdr_last_error(void);

#define GUARD 64

/* The struct, then guard bytes that must stay untouched. */
struct guarded_info {
	struct info_0_1 info;
	unsigned char guard[GUARD];
};

static int untouched(const unsigned char *g)
{
	int i;

	for (i = 0; i < GUARD; i++)
		if (g[i] != 0xa5)
			return 0;
	return 1;
}

int main(void)
{
	struct guarded_info gi;
	struct {
		struct item_0_1 item;
		unsigned char guard[GUARD];
	} gt;
	struct gdr_report *r;
	char buf[256];

	CHECK(sizeof(struct info_0_1) == 20 + 4 * 268);

	/* A NULL pd fails before anything: the record says so, no more. */
	memset(&gi, 0xa5, sizeof(gi));
	gi.info.comp_mask = 1; /* GDR_REG_INFO_BASIC */
	errno = 0;
	CHECK(reg_ex_0_1(NULL, buf, sizeof(buf), NULL, &gi.info) == NULL);
	CHECK(errno == EINVAL);
	CHECK(strstr(gdr_last_error(), "pd is NULL") != NULL);
	CHECK(gi.info.path == 0);
	CHECK(gi.info.num_attempts == 0);
	CHECK(untouched(gi.guard));

	/* Without GDR_REG_INFO_BASIC a 0.1 caller gets nothing written. */
	memset(&gi, 0xa5, sizeof(gi));
	gi.info.comp_mask = 0;
	CHECK(reg_ex_0_1(NULL, buf, sizeof(buf), NULL, &gi.info) == NULL);
	CHECK(gi.info.path == (int)0xa5a5a5a5);
	CHECK(untouched(gi.guard));

#ifdef WITH_FAKES
	{
		struct fixture fx;
		struct ibv_mr *mr;
		void *dev;

		/* Every path considered: dmabuf and peermem refused, host
		 * not for device memory. */
		fakes_reset();
		fake_model.nic[0].dmabuf_probe_errno = EOPNOTSUPP;
		fixture_make(&fx);
		fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
		fakes_install(&fx, NULL, NULL, NULL);
		dev = fake_alloc_device(0, 1 << 20);
		memset(&gi, 0xa5, sizeof(gi));
		gi.info.comp_mask = 1;
		mr = reg_ex_0_1(&fake_pd, dev, 4096, NULL, &gi.info);
		CHECK(mr == NULL);
		CHECK(gi.info.num_attempts == 3);
		CHECK(gi.info.attempts[0].path == GDR_PATH_DMABUF);
		CHECK(strstr(gi.info.attempts[0].reason, "fake_mlx5_0") !=
		      NULL);
		CHECK(gi.info.mem_type == GDR_MEM_CUDA_DEVICE);
		CHECK(untouched(gi.guard));

		/* The 0.2 call with room for one attempt gets one. */
		{
			struct {
				struct gdr_reg_info info;
				unsigned char guard[GUARD];
			} g2;
			size_t small = GDR_REG_INFO_MIN_SIZE +
				       sizeof(struct gdr_path_attempt);

			memset(&g2, 0xa5, sizeof(g2));
			mr = gdr_register_ex(&fake_pd, dev, 4096, NULL,
					     &g2.info, small);
			CHECK(mr == NULL);
			CHECK(g2.info.num_attempts == 1);
			CHECK(((unsigned char *)&g2.info)[small] == 0xa5);
			CHECK(untouched(g2.guard));
			errno = 0;
			CHECK(gdr_register_ex(
				      &fake_pd, dev, 4096, NULL, &g2.info,
				      GDR_REG_INFO_MIN_SIZE - 1) == NULL);
			CHECK(errno == EINVAL);
		}
		/* A Data Direct NIC: 0.2 would take data-direct (path 4),
		 * which a 0.1 caller does not know: it is not tried, and
		 * the record holds only the paths 0.1 knew. */
		fakes_reset();
		fake_model.nic[0].data_direct_errno =
			0; /* the NIC has a Data Direct function */
		fakes_install(&fx, "6.12.0", NULL, NULL);
		dev = fake_alloc_device(0, 1 << 20);
		memset(&gi, 0xa5, sizeof(gi));
		gi.info.comp_mask = 1;
		mr = reg_ex_0_1(&fake_pd, dev, 4096, NULL, &gi.info);
		CHECK(mr != NULL);
		CHECK(gi.info.path == GDR_PATH_DMABUF);
		CHECK(gi.info.num_attempts == 1);
		CHECK(gi.info.attempts[0].path == GDR_PATH_DMABUF);
		CHECK(fake_ibv.mlx5_reg_calls == 0);
		CHECK(untouched(gi.guard));
		if (mr)
			gdr_deregister(mr);
		/* ... while a 0.2 caller on the same NIC gets Data Direct. */
		{
			struct gdr_reg_info info;

			mr = gdr_register_ex(&fake_pd, dev, 4096, NULL, &info,
					     sizeof(info));
			CHECK(mr != NULL && info.path == GDR_PATH_DATA_DIRECT);
			if (mr)
				gdr_deregister(mr);
		}
		/* A 0.1 path mask with bit 4 was unknown to 0.1. */
		{
			struct attr_0_1 a = { 2, 0, 1u << 4, 0 };

			errno = 0;
			CHECK(reg_ex_0_1(&fake_pd, dev, 4096, &a, NULL) ==
			      NULL);
			CHECK(errno == EINVAL);
		}

		fixture_remove(&fx);
	}
#endif

	/* A 0.1 report item. */
	r = gdr_report_create(NULL, 0, 0);
	CHECK(r != NULL);
	if (r) {
		memset(&gt, 0xa5, sizeof(gt));
		CHECK(item_0_1(r, 0, &gt.item) == 0);
		CHECK(gt.item.section && !strcmp(gt.item.section, "node"));
		CHECK(untouched(gt.guard));
		gdr_report_destroy(r);
	}
	printf("0.1 caller: %d passed, %d failed\n", check_passed,
	       check_failed);
	return check_failed ? 1 : 0;
}
