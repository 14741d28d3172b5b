/* SPDX-License-Identifier: MIT */
/*
 * The conditions table: every remedy sentence exists once, every condition
 * a backend needs is one the report shows, and a backend's eligibility is
 * the first condition that fails.
 */
#include <string.h>

#include "check.h"
#include "fakes.h"

/* A node's kernel release as the probe keeps it: the text and its parse. */
static void set_release(struct gdr_node *node, const char *release)
{
	snprintf(node->kernel_release, sizeof(node->kernel_release), "%s",
		 release);
	node->kver_err =
		gdr_parse_kernel_release(node->kernel_release, &node->kver);
}

static const struct gdr_check *const *const lists[] = {
	gdr_node_checks,
	gdr_gpu_checks,
	gdr_nic_checks,
	gdr_pair_checks,
};

static int in_report(const struct gdr_check *c)
{
	size_t l;
	const struct gdr_check *const *p;

	for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		for (p = lists[l]; *p; p++)
			if (*p == c)
				return 1;
	return 0;
}

int main(void)
{
	const struct gdr_check *all[128];
	const struct gdr_backend *const *b;
	const struct gdr_check *const *p;
	unsigned int n = 0, i, j;
	size_t l;

	check_scope = "one remedy, one place";
	for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		for (p = lists[l]; *p && n < 128; p++)
			all[n++] = *p;
	CHECK(n > 20);
	for (i = 0; i < n; i++) {
		CHECK(all[i]->key && all[i]->eval && all[i]->describe &&
		      all[i]->remedy);
		for (j = i + 1; j < n; j++) {
			if (!all[i]->remedy[0] || all[i] == all[j])
				continue;
			CHECK_(strcmp(all[i]->remedy, all[j]->remedy),
			       "%s and %s share the remedy \"%s\"", all[i]->key,
			       all[j]->key, all[i]->remedy);
		}
	}

	check_scope = "backends list conditions the report shows";
	for (b = gdr_backends; *b; b++) {
		CHECK((*b)->needs != NULL);
		if ((*b)->device_memory)
			CHECK((*b)->needs[0] != NULL);
		for (p = (*b)->needs; *p; p++) {
			CHECK_(in_report(*p),
			       "%s needs %s, which the report "
			       "does not show",
			       gdr_path_name((*b)->path), (*p)->key);
			CHECK((*p)->remedy[0]);
		}
	}

	check_scope = "eligibility is the first failed condition";
	{
		struct gdr_node node;
		struct gdr_cuda cuda;
		struct gdr_dev dev;
		struct gdr_nic nic;
		struct gdr_subject s;
		char why[GDR_WHY_LEN];

		memset(&node, 0, sizeof(node));
		set_release(&node, "5.4.0");
		node.nv_flavour = GDR_NV_PROPRIETARY;
		strcpy(node.nv_version, "535.104.05");
		node.verbs_dmabuf = true;
		memset(&cuda, 0, sizeof(cuda));
		cuda.state = GDR_CUDA_READY;
		cuda.driver_version = 13000;
		cuda.cu.cuMemGetHandleForAddressRange =
			(void *)(uintptr_t)1; /* present, never called */
		memset(&dev, 0, sizeof(dev));
		dev.dmabuf_attr = 1;
		memset(&nic, 0, sizeof(nic));
		nic.dmabuf = GDR_YES;
		memset(&s, 0, sizeof(s));
		s.node = &node;
		s.cuda = &cuda;
		s.dev = &dev;
		s.nic = &nic;
		/* Kernel and module both fail: the kernel comes first. */
		CHECK_INT(gdr_checks_first_failure(gdr_backend_dmabuf.needs, &s,
						   why, sizeof(why)),
			  EOPNOTSUPP);
		CHECK_HAS(why, "kernel 5.4.0 is older than 5.12; ");
		CHECK_HAS(why, gdr_check_kernel.remedy);
		set_release(&node, "6.8.0");
		CHECK_INT(gdr_checks_first_failure(gdr_backend_dmabuf.needs, &s,
						   why, sizeof(why)),
			  EOPNOTSUPP);
		CHECK_HAS(why, gdr_check_nvidia_driver.remedy);
		node.nv_flavour = GDR_NV_OPEN;
		CHECK_INT(gdr_checks_first_failure(gdr_backend_dmabuf.needs, &s,
						   why, sizeof(why)),
			  0);
		/* Undecided answers never refuse a path. */
		nic.dmabuf = GDR_UNKNOWN;
		set_release(&node, "garbage");
		node.nv_flavour = GDR_NV_UNPARSED;
		CHECK_INT(gdr_checks_first_failure(gdr_backend_dmabuf.needs, &s,
						   why, sizeof(why)),
			  0);
		nic.dmabuf = GDR_NO;
		nic.err = EOPNOTSUPP;
		CHECK_INT(gdr_checks_first_failure(gdr_backend_dmabuf.needs, &s,
						   why, sizeof(why)),
			  EOPNOTSUPP);
		CHECK_HAS(why, gdr_check_nic_dmabuf.remedy);

		/* GPUDIRECT_PCIE_MAPPING=off: the GPU's pcie_mapping row says
		 * so, even on a driver that has the mapping. */
		check_scope = "pcie_mapping with GPUDIRECT_PCIE_MAPPING=off";
		{
			struct gdr_eval e;

			node.pcie_policy = GDR_PCIE_OFF;
			gdr_check_eval(&gdr_check_gpu_pcie, &s, &e, false);
			CHECK_STR(e.value, "off (GPUDIRECT_PCIE_MAPPING=off)");
			CHECK_INT(e.verdict, GDR_VERDICT_INFO);
			CHECK_INT(e.pass, GDR_FAIL);
			node.pcie_policy = GDR_PCIE_AUTO;
			gdr_check_eval(&gdr_check_gpu_pcie, &s, &e, false);
			CHECK(strcmp(e.value,
				     "off (GPUDIRECT_PCIE_MAPPING=off)") != 0);
		}
	}
	return check_summary("checks");
}
