/* SPDX-License-Identifier: MIT */
/* The report: items, verdicts, usable, text and JSON from fixtures. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fakes.h"
#include "errnos.h"
#include "doctor.h"

static char *print(struct gdr_report *r, enum gdr_report_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK_INT(gdr_report_print(r, f, fmt), 0);
	fclose(f);
	return buf;
}

static const char *find(struct gdr_report *r, const char *section,
			const char *key, enum gdr_verdict *v)
{
	struct gdr_report_item it;
	unsigned int i;

	for (i = 0; i < gdr_report_num_items(r); i++) {
		if (gdr_report_item(r, i, &it, sizeof(it)))
			break;
		if (!strcmp(it.section, section) && !strcmp(it.key, key)) {
			*v = it.verdict;
			return it.value;
		}
	}
	return NULL;
}

/* Fresh fakes over a fixture with @nv as /proc/driver/nvidia/version. */
static void start(struct fixture *fx, const char *nv, const char *kernel)
{
	fixture_make(fx);
	if (nv)
		fixture_write(fx->proc, "driver/nvidia/version", nv);
	fakes_install(fx, kernel, NULL, NULL);
}

/* What the report prints is UTF-8: each valid sequence as it came (up to
 * U+10FFFF), each byte of one that is not (a stray continuation byte, an
 * overlong form, a surrogate, past U+10FFFF) as U+FFFD in JSON and \xNN
 * in text. */
static void utf8_values(void)
{
	static const struct {
		const char *in, *json, *text;
	} rows[] = {
		{ "a\xc3\xa9z", "a\xc3\xa9z", "a\xc3\xa9z" },
		{ "a\xe2\x82\xacz", "a\xe2\x82\xacz", "a\xe2\x82\xacz" },
		{ "a\xf0\x9d\x84\x9ez", "a\xf0\x9d\x84\x9ez",
		  "a\xf0\x9d\x84\x9ez" },
		{ "a\xf4\x8f\xbf\xbfz", "a\xf4\x8f\xbf\xbfz",
		  "a\xf4\x8f\xbf\xbfz" },
		{ "a\xed\x9f\xbfz", "a\xed\x9f\xbfz", "a\xed\x9f\xbfz" },
		{ "a\xc0\x80z", "a\\ufffd\\ufffdz", "a\\xc0\\x80z" },
		{ "a\xc1\xbfz", "a\\ufffd\\ufffdz", "a\\xc1\\xbfz" },
		{ "a\xe0\x80\x80z", "a\\ufffd\\ufffd\\ufffdz",
		  "a\\xe0\\x80\\x80z" },
		{ "a\xed\xa0\x80z", "a\\ufffd\\ufffd\\ufffdz",
		  "a\\xed\\xa0\\x80z" },
		{ "a\xed\xbf\xbfz", "a\\ufffd\\ufffd\\ufffdz",
		  "a\\xed\\xbf\\xbfz" },
		{ "a\xf0\x80\x80\x80z", "a\\ufffd\\ufffd\\ufffd\\ufffdz",
		  "a\\xf0\\x80\\x80\\x80z" },
		{ "a\xf4\x90\x80\x80z", "a\\ufffd\\ufffd\\ufffd\\ufffdz",
		  "a\\xf4\\x90\\x80\\x80z" },
		{ "a\x80z", "a\\ufffdz", "a\\x80z" },
		{ "a\x7fz", "a\\u007fz", "a\\x7fz" },
		{ "a\xc3(z", "a\\ufffd(z", "a\\xc3(z" },
		{ "a\xe2\x82z", "a\\ufffd\\ufffdz", "a\\xe2\\x82z" },
		{ "a\xc3", "a\\ufffd", "a\\xc3" },
		{ "a\xf5\x80z", "a\\ufffd\\ufffdz", "a\\xf5\\x80z" },
	};
	struct fixture fx;
	struct gdr_report *r;
	char want[96], *json, *text;
	unsigned int i;

	fakes_reset();
	start(&fx, NV_OPEN, "6.18.44-fc-v973-gpu");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		check_scope = rows[i].in;
		r = gdr_report_create(NULL, 0, 0);
		CHECK(r != NULL);
		if (!r)
			continue;
		gdr_report_add(r, "storage", "probe", GDR_VERDICT_INFO, "",
			       rows[i].in);
		json = print(r, GDR_REPORT_JSON);
		text = print(r, GDR_REPORT_TEXT);
		snprintf(want, sizeof(want), "\"value\": \"%s\"", rows[i].json);
		CHECK_HAS(json, want);
		snprintf(want, sizeof(want), " %s\n", rows[i].text);
		CHECK_HAS(text, want);
		free(json);
		free(text);
		gdr_report_destroy(r);
	}

	/* The key column is 26 characters wide, not 26 bytes. */
	check_scope = "a key of two-byte characters, padded";
	r = gdr_report_create(NULL, 0, 0);
	CHECK(r != NULL);
	if (r) {
		gdr_report_add(r, "storage", "cl\xc3\xa9", GDR_VERDICT_INFO, "",
			       "v");
		text = print(r, GDR_REPORT_TEXT);
		snprintf(want, sizeof(want), "\n  cl\xc3\xa9%23s info     v\n",
			 "");
		CHECK_HAS(text, want);
		free(text);
		check_scope = "gdr_report_print: no stream";
		CHECK_INT(gdr_report_print(r, NULL, GDR_REPORT_TEXT), -1);
		CHECK_INT(errno, EINVAL);
		CHECK_HAS(gdr_last_error(), "must not be NULL");
		gdr_report_destroy(r);
	}
	fixture_remove(&fx);
}

int main(void)
{
	struct ibv_context *ctxs[1] = { &fake_context };
	struct gdr_report_item it;
	struct gdr_report *r;
	enum gdr_verdict v = GDR_VERDICT_INFO;
	struct fixture fx;
	char *text;

	check_scope = "open module node with a DMA-BUF NIC";
	fakes_reset();
	fake_model.num_gpus = 2;
	fake_model.gpu[1].dmabuf_supported = 0;
	start(&fx, NV_OPEN, "6.18.44-fc-v973-gpu");
	r = gdr_report_create(ctxs, 1, 0);
	CHECK(r != NULL);
	CHECK_INT(gdr_report_usable(r), 1);
	CHECK_STR(find(r, "node", "kernel", &v), "6.18.44-fc-v973-gpu");
	CHECK_INT(v, GDR_VERDICT_OK);
	CHECK_STR(find(r, "node", "nvidia_driver", &v),
		  "580.159.04 (open kernel module)");
	CHECK_INT(v, GDR_VERDICT_OK);
	CHECK_STR(find(r, "node", "cuda_driver_api", &v), "13.0 (13000)");
	CHECK_STR(find(r, "gpu1", "dmabuf_supported", &v), "0");
	CHECK_INT(v, GDR_VERDICT_WRONG);
	CHECK_STR(find(r, "fake_mlx5_0", "path_gpu0", &v), "dmabuf");
	CHECK_INT(v, GDR_VERDICT_OK);
	CHECK_STR(find(r, "fake_mlx5_0", "path_gpu1", &v), "none");
	CHECK_INT(v, GDR_VERDICT_MISSING);
	CHECK_HAS(find(r, "fake_mlx5_0", "dmabuf_mr", &v), "EBADF");
	text = print(r, GDR_REPORT_TEXT);
	CHECK_HAS(text, "GPUDirect RDMA: usable");
	CHECK_HAS(text, "[gpu1]");
	free(text);
	text = print(r, GDR_REPORT_JSON);
	CHECK_HAS(text, "\"gpudirect_rdma_usable\": true");
	CHECK_HAS(text, "\"schema_version\": 1");
	CHECK_HAS(text,
		  "{\"section\": \"node\", \"key\": \"kernel\", "
		  "\"value\": \"6.18.44-fc-v973-gpu\", \"verdict\": \"ok\"");
	free(text);
	CHECK_INT(gdr_report_item(r, gdr_report_num_items(r), &it, sizeof(it)),
		  -1);
	CHECK_INT(errno, EINVAL);
	gdr_report_destroy(r);
	fixture_remove(&fx);

	check_scope = "proprietary module, kernel 5.4, no peermem, no NIC";
	fakes_reset();
	start(&fx, NV_PROPRIETARY, "5.4.0-182-generic");
	r = gdr_report_create(NULL, 0, 0);
	CHECK(r != NULL);
	CHECK_INT(gdr_report_usable(r), 0);
	find(r, "node", "kernel", &v);
	CHECK_INT(v, GDR_VERDICT_WRONG);
	find(r, "node", "nvidia_driver", &v);
	CHECK_INT(v, GDR_VERDICT_WRONG);
	CHECK_STR(find(r, "node", "rdma_devices", &v), "0");
	CHECK_INT(v, GDR_VERDICT_MISSING);
	text = print(r, GDR_REPORT_TEXT);
	CHECK_HAS(text, "driver.kernelModuleType=open");
	CHECK_HAS(text, "NOT usable");
	free(text);
	gdr_report_destroy(r);
	fixture_remove(&fx);

	check_scope = "no CUDA at all, peermem through nv_peer_mem";
	fakes_reset();
	fakes_no_libcuda();
	fixture_make(&fx);
	fixture_write(fx.sys, "module/nv_peer_mem/version", "1.3-0\n");
	fixture_write(fx.sys, "kernel/mm/memory_peers/nv_mem/version",
		      "1.3-0\n");
	fixture_write(fx.sys, "module/nvidia_fs/version", "2.17.5\n");
	fakes_install(&fx, NULL, NULL, NULL);
	r = gdr_report_create(ctxs, 1, 0);
	CHECK(r != NULL);
	CHECK_INT(gdr_report_usable(r), 0);
	CHECK_STR(find(r, "node", "cuda_driver_api", &v), "unavailable");
	CHECK_INT(v, GDR_VERDICT_MISSING);
	CHECK_HAS(find(r, "node", "nvidia_peermem", &v), "1.3-0");
	CHECK_INT(v, GDR_VERDICT_OK);
	/* 2.17.5 is new enough, but needs the open module: without the
	 * NVIDIA version file, which module is not known. */
	CHECK_HAS(find(r, "node", "gpudirect_storage", &v),
		  "2.17.5 (the NVIDIA kernel module's flavour is unknown)");
	CHECK_INT(v, GDR_VERDICT_UNKNOWN);
	text = print(r, GDR_REPORT_JSON);
	CHECK_HAS(text, "\"gpudirect_rdma_usable\": false");
	free(text);
	gdr_report_destroy(r);
	fixture_remove(&fx);

	check_scope = "a DMA-BUF GPU beside a NIC that refuses DMA-BUF";
	fakes_reset();
	fake_model.nic[0].dmabuf_probe_errno = EOPNOTSUPP;
	start(&fx, NV_OPEN, NULL);
	r = gdr_report_create(ctxs, 1, 0);
	CHECK(r != NULL);
	CHECK_INT(gdr_report_usable(r), 0);
	find(r, "gpu0", "dmabuf_supported", &v);
	CHECK_INT(v, GDR_VERDICT_OK);
	CHECK_HAS(find(r, "fake_mlx5_0", "dmabuf_mr", &v), "EOPNOTSUPP");
	CHECK_INT(v, GDR_VERDICT_MISSING);
	CHECK_STR(find(r, "fake_mlx5_0", "path_gpu0", &v), "none");
	CHECK_INT(v, GDR_VERDICT_MISSING);
	CHECK_STR(find(r, "node", "nvidia_peermem", &v), "not loaded");
	CHECK_INT(v, GDR_VERDICT_MISSING);
	gdr_report_destroy(r);
	fixture_remove(&fx);

	check_scope = "the same with nvidia-peermem";
	fakes_reset();
	fake_model.nic[0].dmabuf_probe_errno = EOPNOTSUPP;
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fixture_write(fx.sys, "module/nvidia_peermem/version", "580\n");
	fixture_write(fx.sys, "kernel/mm/memory_peers/nv_mem/version", "580\n");
	fakes_install(&fx, NULL, NULL, NULL);
	r = gdr_report_create(ctxs, 1, 0);
	CHECK(r != NULL);
	CHECK_INT(gdr_report_usable(r), 1);
	CHECK_STR(find(r, "fake_mlx5_0", "path_gpu0", &v),
		  "peermem (DMA-BUF unavailable)");
	gdr_report_destroy(r);
	fixture_remove(&fx);

	check_scope = "a NIC whose probe answer is neither yes nor no";
	fakes_reset();
	fake_model.nic[0].dmabuf_probe_errno = EINVAL;
	start(&fx, NV_OPEN, NULL);
	r = gdr_report_create(ctxs, 1, 0);
	CHECK(r != NULL);
	CHECK_HAS(find(r, "fake_mlx5_0", "dmabuf_mr", &v), "unknown");
	CHECK_INT(v, GDR_VERDICT_UNKNOWN);
	{
		struct gdr_report_item item;
		unsigned int i;

		for (i = 0; i < gdr_report_num_items(r); i++)
			if (!gdr_report_item(r, i, &item, sizeof(item)) &&
			    !strcmp(item.key, "dmabuf_mr")) {
				CHECK_HAS(item.remedy, "a real registration "
						       "decides");
				CHECK(!strstr(item.remedy,
					      "does not register"));
			}
	}
	/* Undecided is no reason to refuse the path. */
	CHECK_STR(find(r, "fake_mlx5_0", "path_gpu0", &v), "dmabuf");
	gdr_report_destroy(r);
	fixture_remove(&fx);

	check_scope = "reading /proc/driver/nvidia/version fails";
	fakes_reset();
	start(&fx, NV_OPEN, NULL);
	fault_calls = 0;
	fault_at = 2; /* the read after the file's open */
	r = gdr_report_create(NULL, 0, 0);
	fault_at = 0;
	CHECK_STR(fault_where, "read");
	CHECK(r != NULL);
	CHECK_STR(find(r, "node", "nvidia_driver", &v),
		  "/proc/driver/nvidia/version could not be read (EIO)");
	CHECK_INT(v, GDR_VERDICT_UNKNOWN);
	gdr_report_destroy(r);
	fixture_remove(&fx);

	/* Read, but not understood: said so (not "could not be read"), and
	 * undecided, with the remedy of looking by hand. */
	check_scope = "/proc/driver/nvidia/version not understood";
	fakes_reset();
	start(&fx, "NVRM version: no number here\n", NULL);
	r = gdr_report_create(NULL, 0, 0);
	CHECK(r != NULL);
	CHECK_STR(find(r, "node", "nvidia_driver", &v),
		  "unrecognised /proc/driver/nvidia/version");
	CHECK_INT(v, GDR_VERDICT_UNKNOWN);
	{
		struct gdr_report_item item;
		unsigned int i;

		for (i = 0; i < gdr_report_num_items(r); i++)
			if (!gdr_report_item(r, i, &item, sizeof(item)) &&
			    !strcmp(item.key, "nvidia_driver"))
				CHECK_HAS(item.remedy, "by hand");
	}
	gdr_report_destroy(r);
	fixture_remove(&fx);

	check_scope = "cuDeviceGet fails: the reason shows";
	fakes_reset();
	fake_cu.dev_get_result = CUDA_ERROR_INVALID_DEVICE;
	start(&fx, NV_OPEN, NULL);
	r = gdr_report_create(ctxs, 1, 0);
	CHECK(r != NULL);
	CHECK_HAS(find(r, "gpu0", "dmabuf_supported", &v),
		  "cuDeviceGet(0) failed with CUDA_ERROR_INVALID_DEVICE");
	CHECK_INT(v, GDR_VERDICT_UNKNOWN);
	CHECK_STR(find(r, "fake_mlx5_0", "path_gpu0", &v), "none");
	gdr_report_destroy(r);
	fixture_remove(&fx);

	/* RDMA devices named like the other sections: their items keep
	 * their scope, the text says which section is the device. */
	check_scope = "RDMA devices named node and gpu0";
	{
		struct fake_nic n1, n2, n3;
		/* gpu0 first: its section follows the GPU's of that name. */
		struct ibv_context *both[3] = { &n2.ctx, &n1.ctx, &n3.ctx };
		unsigned int i, node = 0, gpu = 0, dev_node = 0, dev_gpu0 = 0;

		fakes_reset();
		fake_add_nic(&n1, "node", 1);
		fake_add_nic(&n2, "gpu0", 1);
		fake_add_nic(&n3, "storage1", 1);
		start(&fx, NV_OPEN, NULL);
		r = gdr_report_create(both, 3, 0);
		CHECK(r != NULL);
		for (i = 0; r && i < gdr_report_num_items(r); i++) {
			memset(&it, 0, sizeof(it));
			CHECK_INT(gdr_report_item(r, i, &it, sizeof(it)), 0);
			if (!strcmp(it.section, "node")) {
				node += it.scope == GDR_REPORT_SCOPE_NODE;
				dev_node += it.scope ==
					    GDR_REPORT_SCOPE_RDMA_DEVICE;
			} else if (!strcmp(it.section, "gpu0")) {
				gpu += it.scope == GDR_REPORT_SCOPE_GPU;
				dev_gpu0 += it.scope ==
					    GDR_REPORT_SCOPE_RDMA_DEVICE;
			}
			CHECK(it.scope >= GDR_REPORT_SCOPE_NODE &&
			      it.scope <= GDR_REPORT_SCOPE_RDMA_DEVICE);
		}
		CHECK(node > 5 && gpu > 5 && dev_node > 5 && dev_gpu0 > 5);
		CHECK_INT(dev_node, dev_gpu0);
		text = print(r, GDR_REPORT_TEXT);
		CHECK_HAS(text, "\n[node]\n");
		CHECK_HAS(text, "\n[gpu0]\n");
		CHECK_HAS(text, "\n[node (RDMA device)]\n");
		CHECK_HAS(text, "\n[gpu0 (RDMA device)]\n");
		CHECK_HAS(text, "\n[storage1 (RDMA device)]\n");
		free(text);
		{
			struct fake_nic m1, m2, m3, m4;
			struct ibv_context *odd[4] = { &m1.ctx, &m2.ctx,
						       &m3.ctx, &m4.ctx };
			struct gdr_report *q;

			check_scope = "RDMA devices named storage, gpu, gpux";
			fake_add_nic(&m1, "storage", 1);
			fake_add_nic(&m2, "gpu", 1);
			fake_add_nic(&m3, "gpux", 1);
			fake_add_nic(&m4, "storage1x", 1);
			q = gdr_report_create(odd, 4, 0);
			CHECK(q != NULL);
			text = q ? print(q, GDR_REPORT_TEXT) : NULL;
			CHECK_HAS(text, "\n[storage (RDMA device)]\n");
			CHECK_HAS(text, "\n[gpu]\n");
			CHECK_HAS(text, "\n[gpux]\n");
			CHECK_HAS(text, "\n[storage1x]\n");
			free(text);
			gdr_report_destroy(q);
		}
		text = print(r, GDR_REPORT_JSON);
		CHECK_HAS(text,
			  "\"section\": \"node\", \"key\": \"dmabuf_mr\"");
		CHECK_HAS(text, "\"scope\": \"rdma_device\"}");
		CHECK_HAS(text, "\"section\": \"node\", \"key\": \"kernel\"");
		CHECK_HAS(text, "\"scope\": \"node\"}");
		CHECK_HAS(text, "\"scope\": \"gpu\"}");
		free(text);
		gdr_report_destroy(r);
		fixture_remove(&fx);
	}

	check_scope = "unknown NUMA node and IOMMU group in words";
	fakes_reset();
	start(&fx, NV_OPEN, NULL);
	r = gdr_report_create(NULL, 0, 0);
	CHECK_STR(find(r, "gpu0", "numa_node", &v),
		  "unknown (sysfs gives no NUMA node)");
	CHECK_STR(find(r, "gpu0", "iommu_group", &v),
		  "none (no IOMMU group in sysfs)");

	gdr_report_destroy(r);
	fixture_remove(&fx);

	/* Three-byte UTF-8 (lead bytes 0xe2 and 0xe4) from the node reaches
	 * the text and the JSON as it is, not as U+FFFD; a GPU whose bus id
	 * is no PCI address has no NUMA node to look up. */
	check_scope = "UTF-8 in names, a bus id that is no PCI address";
	fakes_reset();
	snprintf(fake_model.gpu[0].pci_bus_id,
		 sizeof(fake_model.gpu[0].pci_bus_id), "not-a-bdf");
	start(&fx, NV_OPEN, "6.8.0-\xe2\x82\xac\xe4\xb8\xad");
	r = gdr_report_create(NULL, 0, 0);
	CHECK(r != NULL);
	CHECK_STR(find(r, "gpu0", "numa_node", &v),
		  "unknown (sysfs gives no NUMA node)");
	text = print(r, GDR_REPORT_TEXT);
	CHECK_HAS(text, "6.8.0-\xe2\x82\xac\xe4\xb8\xad");
	free(text);
	text = print(r, GDR_REPORT_JSON);
	CHECK_HAS(text, "\"value\": \"6.8.0-\xe2\x82\xac\xe4\xb8\xad\"");
	free(text);
	gdr_report_destroy(r);
	fixture_remove(&fx);

	fakes_reset();
	start(&fx, NV_OPEN, NULL);
	r = gdr_report_create(NULL, 0, 0);
	check_scope = "printing: errors are this call's";
	{
		FILE *full = fopen("/dev/full", "w");

		CHECK(full != NULL);
		if (full) {
			errno = EBADF; /* stale */
			CHECK_INT(gdr_report_print(r, full, GDR_REPORT_TEXT),
				  -1);
			CHECK_INT(errno, ENOSPC);
			CHECK_HAS(gdr_last_error(),
				  "writing the report failed");
			fclose(full);
		}
		errno = EBADF;
		text = print(r, GDR_REPORT_JSON);
		CHECK_STR(gdr_last_error(), "");
		free(text);
	}

	check_scope = "items are caller-sized";
	{
		unsigned char buf[sizeof(struct gdr_report_item) + 16];

		memset(buf, 0xa5, sizeof(buf));
		CHECK_INT(gdr_report_item(r, 0, (struct gdr_report_item *)buf,
					  sizeof(buf)),
			  0);
		CHECK_INT(buf[sizeof(struct gdr_report_item)], 0xa5);
		CHECK_INT(buf[sizeof(buf) - 1], 0xa5);
		{
			struct gdr_report_item whole;

			memcpy(&whole, buf, sizeof(whole));
			CHECK_STR(whole.section, "node");
			CHECK_INT(whole.scope, GDR_REPORT_SCOPE_NODE);
		}
		/* The first release's size: taken, every field it has
		 * written, nothing past it (the scope is 0.5's). */
		memset(buf, 0xa5, sizeof(buf));
		CHECK_INT(gdr_report_item(r, 0, (struct gdr_report_item *)buf,
					  GDR_REPORT_ITEM_MIN_SIZE),
			  0);
		CHECK_INT(buf[GDR_REPORT_ITEM_MIN_SIZE], 0xa5);
		{
			struct gdr_report_item old;

			memcpy(&old, buf, GDR_REPORT_ITEM_MIN_SIZE);
			CHECK_STR(old.section, "node");
			CHECK(old.key && old.value && old.remedy);
		}
		CHECK_INT(GDR_REPORT_ITEM_MIN_SIZE,
			  offsetof(struct gdr_report_item, scope));
		errno = 0;
		CHECK_INT(gdr_report_item(r, 0, (struct gdr_report_item *)buf,
					  GDR_REPORT_ITEM_MIN_SIZE - 1),
			  -1);
		CHECK_INT(errno, EINVAL);
	}
	gdr_report_destroy(r);
	fixture_remove(&fx);

	check_scope = "bad arguments";
	CHECK(gdr_report_create(NULL, 1, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_report_create(ctxs, 1, 1) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(gdr_report_print(NULL, stdout, GDR_REPORT_TEXT), -1);
	CHECK_INT(gdr_report_num_items(NULL), 0);
	CHECK_INT(gdr_report_usable(NULL), 0);
	gdr_report_destroy(NULL);

	gdr_seam_install(NULL);
	utf8_values();
	return check_summary("report");
}
