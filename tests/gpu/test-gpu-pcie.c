/* SPDX-License-Identifier: MIT */
/*
 * The PCIe mapping on a real GPU and driver, with a recorded NIC that has a
 * Data Direct function in front (the GPU machine has no NIC):
 *  - 1000 registrations: the GPU's real answer to the flagged export
 *    decides. Where it is NOT_SUPPORTED (the H200 on an x86 PCIe node),
 *    exactly one flagged export is made, every registration takes plain
 *    DMA-BUF and its record says why; where the GPU has the mapping, each
 *    registration takes Data Direct with a flagged export;
 *  - GPUDIRECT_PCIE_MAPPING=on where the GPU cannot: DMA-BUF is not taken,
 *    EOPNOTSUPP with the reason (no peermem here);
 *  - the report: the GPU's pcie_mapping item is its real answer.
 * Exits 77 without a GPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cutest.h"
#include "fakes.h"

#define MiB ((size_t)1024 * 1024)

static const char *item(struct gdr_report *r, const char *sec, const char *key)
{
	static struct gdr_report_item it;
	unsigned int i;

	for (i = 0; i < gdr_report_num_items(r); i++)
		if (!gdr_report_item(r, i, &it, sizeof(it)) &&
		    !strcmp(it.section, sec) && !strcmp(it.key, key))
			return it.value;
	return "(absent)";
}

int main(void)
{
	struct gdr_reg_info info;
	struct gdr_report *r;
	CUdeviceptr d;
	char why[256];
	int rc, i, dd = 0, plain = 0, reasons = 0, supported = -1;

	rc = cutest_init(0, why, sizeof(why));
	if (rc) {
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
		return rc;
	}
	check_scope = "1000 registrations through a Data Direct NIC";
	fakes_reset();
	fake_model.nic[0].data_direct_errno =
		0; /* the recorded NIC has the function */
	fakes_install_real_cuda();
	CHECK_INT(ct.cuMemAlloc(&d, 4 * MiB), CUDA_SUCCESS);
	for (i = 0; i < 1000; i++) {
		struct ibv_mr *mr =
			gdr_register_ex(&fake_pd, (void *)d, 1 * MiB, NULL,
					&info, sizeof(info));

		if (!mr) {
			printf("registration %d: %s\n", i, gdr_last_error());
			CHECK(mr != NULL);
			break;
		}
		if (i == 0)
			printf("first record: %s: %s\n",
			       gdr_path_str(info.attempts[0].path),
			       info.attempts[0].reason);
		dd += info.path == GDR_PATH_DATA_DIRECT;
		plain += info.path == GDR_PATH_DMABUF;
		reasons += strstr(info.attempts[0].reason,
				  "CUDA_ERROR_NOT_SUPPORTED") != NULL;
		CHECK_INT(gdr_deregister(mr), 0);
	}
	supported = gdr_pcie_map_get(0) == GDR_PCIE_MAP_OK;
	printf("this GPU %s the PCIe mapping: %d data-direct, %d dmabuf, %d "
	       "flagged exports, %d records naming NOT_SUPPORTED\n",
	       supported ? "has" : "lacks", dd, plain, fake_cu.flagged_exports,
	       reasons);
	if (supported) {
		CHECK_INT(dd, 1000);
		CHECK_INT(fake_cu.flagged_exports, 1000);
		CHECK_INT(fake_ibv.mlx5_reg_calls, 1000);
	} else {
		CHECK_INT(gdr_pcie_map_get(0), GDR_PCIE_MAP_UNSUPPORTED);
		CHECK_INT(plain, 1000);
		CHECK_INT(reasons, 1000);
		CHECK_INT(fake_cu.flagged_exports, 1);
		CHECK_INT(fake_ibv.mlx5_reg_calls, 0);
		CHECK_INT(fake_ibv.dmabuf_calls, 1000);
	}

	check_scope = "GPUDIRECT_PCIE_MAPPING=on";
	if (!supported) {
		struct ibv_mr *mr;

		setenv("GPUDIRECT_PCIE_MAPPING", "on", 1);
		fakes_reset();
		fakes_install_real_cuda();
		errno = 0;
		mr = gdr_register(&fake_pd, (void *)d, 1 * MiB);
		CHECK(mr == NULL);
		CHECK_INT(errno, EOPNOTSUPP);
		CHECK_HAS(gdr_last_error(), "dmabuf failed");
		printf("forced PCIe mapping: %s\n", gdr_last_error());
		if (mr)
			gdr_deregister(mr);
		unsetenv("GPUDIRECT_PCIE_MAPPING");
	}

	check_scope = "the report asks the GPU";
	{
		struct ibv_context *ctxs[1] = { &fake_context };

		fakes_reset();
		fake_model.nic[0].data_direct_errno = 0;
		fakes_install_real_cuda();
		r = gdr_report_create(ctxs, 1, 0);
		CHECK(r != NULL);
		if (r) {
			printf("report: gpu0 pcie_mapping: %s; c2c: %s; "
			       "path_gpu0: %s\n",
			       item(r, "gpu0", "pcie_mapping"),
			       item(r, "gpu0", "c2c"),
			       item(r, "fake_mlx5_0", "path_gpu0"));
			CHECK_HAS(item(r, "gpu0", "pcie_mapping"),
				  supported ? "supported" : "not supported");
			CHECK_STR(item(r, "fake_mlx5_0", "path_gpu0"),
				  supported
					  ? "data-direct"
					  : "dmabuf (Data Direct unavailable)");
			gdr_report_destroy(r);
		}
	}
	CHECK_INT(ct.cuMemFree(d), CUDA_SUCCESS);
	gdr_seam_install(NULL);
	return check_summary("pcie");
}
