/* SPDX-License-Identifier: MIT */
/*
 * gdr_last_error() is "" after every public call that succeeds (its man
 * page: "" when the last call succeeded), whatever failed before it, and
 * names the cause after one that fails. Every exported function of the
 * version script (argv[1]) must have its case here: a new public call
 * without one fails this test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"

#define MAX_SEEN 64
static const char *seen[MAX_SEEN];
static int num_seen;

/* A failed call first, so that there is an error to clear. */
static void fail_first(void)
{
	CHECK(gdr_register(NULL, NULL, 1) == NULL);
	CHECK(gdr_last_error()[0] != '\0');
}

#define AFTER_FAILURE(name, call)                                              \
	do {                                                                   \
		fail_first();                                                  \
		call;                                                          \
		check_scope = name;                                            \
		CHECK_STR(gdr_last_error(), "");                               \
		if (num_seen < MAX_SEEN)                                       \
			seen[num_seen++] = name;                               \
	} while (0)

static int covered(const char *name)
{
	int i;

	for (i = 0; i < num_seen; i++)
		if (!strcmp(seen[i], name))
			return 1;
	return 0;
}

/* Every "gdr_*;" of the public nodes (not the private one) is covered. */
static void every_export(const char *map)
{
	char line[256], name[128];
	FILE *f = fopen(map, "r");
	int private_node = 0, n = 0;

	check_scope = "the version script";
	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "GPUDIRECT_PRIVATE"))
			private_node = 1;
		else if (strstr(line, "GPUDIRECT_0."))
			private_node = 0;
		if (private_node ||
		    sscanf(line, " %127[a-z0-9_];", name) != 1 ||
		    strncmp(name, "gdr_", 4) || !strcmp(name, "gdr_last_error"))
			continue;
		n++;
		if (!covered(name)) {
			printf("FAIL %s has no case: does it clear "
			       "gdr_last_error() on success?\n",
			       name);
			CHECK(0);
		}
	}
	fclose(f);
	CHECK(n >= 20);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctxs[1] = { &fake_context };
	struct gdr_cache_get_info gi;
	struct gdr_cache_stats st;
	struct gdr_reg_info info;
	struct gdr_report_item it;
	struct gdr_report *r = NULL;
	struct gdr_cache *c = NULL;
	struct ibv_mr *mr = NULL, *mrs[1];
	struct ibv_pd *pds[1] = { &fake_pd };
	struct gdr_rank_attr ra = { .comp_mask = GDR_RANK_ATTR_BUS_ID,
				    .gpu_bus_id = "0000:06:00.0" };
	struct gdr_nic_rank rank;
	unsigned int nrank = 1;
	struct gdr_export_desc desc, got;
	uint8_t wire[GDR_EXPORT_WIRE_LEN];
	int fds[GDR_EXPORT_MAX_FDS], rfds[GDR_EXPORT_MAX_FDS], sv[2];
	struct fixture fx;
	enum gdr_path p;
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	void *dev;

	if (argc < 2) {
		printf("usage: test-last-error LIBGPUDIRECT_MAP\n");
		return 2;
	}
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	dev = fake_alloc_device(0, 1 << 20);

	AFTER_FAILURE("gdr_register", mr = gdr_register(&fake_pd, dev, 4096));
	CHECK(mr != NULL);
	AFTER_FAILURE("gdr_deregister", CHECK_INT(gdr_deregister(mr), 0));
	AFTER_FAILURE("gdr_register_ex",
		      mr = gdr_register_ex(&fake_pd, dev, 4096, NULL, &info,
					   sizeof(info)));
	CHECK(mr != NULL);
	if (mr)
		gdr_deregister(mr);
	AFTER_FAILURE("gdr_register_multi",
		      CHECK_INT(gdr_register_multi(pds, 1, dev, 4096, NULL, mrs,
						   NULL, 0),
				0));
	CHECK(mrs[0] != NULL);
	AFTER_FAILURE("gdr_deregister_multi",
		      CHECK_INT(gdr_deregister_multi(mrs, 1), 0));
	CHECK(mrs[0] == NULL);

	/* Memory another process owns: export, hand over, import. */
	fixture_write(fx.proc, "sys/kernel/random/boot_id",
		      "1b4e28ba-2fa1-11d2-883f-0016d3cca427\n");
	AFTER_FAILURE("gdr_export",
		      CHECK_INT(gdr_export(dev, 4096, 0, &desc, fds), 0));
	AFTER_FAILURE("gdr_export_pack",
		      CHECK_INT(gdr_export_pack(&desc, wire, sizeof(wire)), 0));
	AFTER_FAILURE("gdr_export_unpack",
		      CHECK_INT(gdr_export_unpack(wire, sizeof(wire), &desc),
				0));
	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	AFTER_FAILURE("gdr_export_send",
		      CHECK_INT(gdr_export_send(sv[0], &desc, fds), 0));
	AFTER_FAILURE("gdr_export_recv",
		      CHECK_INT(gdr_export_recv(sv[1], &got, rfds), 0));
	AFTER_FAILURE("gdr_import_register",
		      mr = gdr_import_register(&fake_pd, &got, rfds, NULL, NULL,
					       0));
	CHECK(mr != NULL);
	if (mr)
		gdr_deregister(mr);
	AFTER_FAILURE("gdr_import_register_multi",
		      CHECK_INT(gdr_import_register_multi(pds, 1, &got, rfds,
							  NULL, mrs, NULL, 0),
				0));
	gdr_deregister_multi(mrs, 1);
	AFTER_FAILURE("gdr_register_dmabuf",
		      mr = gdr_register_dmabuf(&fake_pd, fds[0], 0, 4096, 0,
					       NULL, NULL, 0));
	CHECK(mr != NULL);
	if (mr)
		gdr_deregister(mr);
	close(sv[0]);
	close(sv[1]);
	close(fds[0]);
	close(rfds[0]);

	fixture_pci(&fx, "pci0000:00/0000:00:02.0/0000:06:00.0", 0);
	AFTER_FAILURE("gdr_rank_nics",
		      CHECK_INT(gdr_rank_nics(&ra, ctxs, 1, &rank, &nrank,
					      sizeof(rank)),
				0));
	AFTER_FAILURE("gdr_distance_str",
		      CHECK_STR(gdr_distance_str(GDR_DIST_PHB), "PHB"));

	AFTER_FAILURE("gdr_cache_create", c = gdr_cache_create(&fake_pd, NULL));
	CHECK(c != NULL);
	AFTER_FAILURE("gdr_cache_get", mr = gdr_cache_get(c, dev, 4096));
	CHECK(mr != NULL);
	AFTER_FAILURE("gdr_cache_put", gdr_cache_put(c, mr));
	memset(&gi, 0, sizeof(gi));
	AFTER_FAILURE("gdr_cache_get_ex",
		      mr = gdr_cache_get_ex(c, dev, 4096, &gi, sizeof(gi)));
	CHECK(mr != NULL);
	gdr_cache_put(c, mr);
	AFTER_FAILURE("gdr_cache_invalidate",
		      gdr_cache_invalidate(c, dev, 4096));
	AFTER_FAILURE("gdr_cache_purge", gdr_cache_purge(c));
	AFTER_FAILURE("gdr_cache_query_stats",
		      CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0));
	AFTER_FAILURE("gdr_cache_destroy", gdr_cache_destroy(c));

	AFTER_FAILURE("gdr_report_create", r = gdr_report_create(ctxs, 1, 0));
	CHECK(r != NULL);
	AFTER_FAILURE("gdr_report_num_items",
		      CHECK(gdr_report_num_items(r) > 0));
	AFTER_FAILURE("gdr_report_item",
		      CHECK_INT(gdr_report_item(r, 0, &it, sizeof(it)), 0));
	AFTER_FAILURE("gdr_report_usable", gdr_report_usable(r));
	out = open_memstream(&text, &len);
	CHECK(out != NULL);
	if (out) {
		AFTER_FAILURE(
			"gdr_report_print",
			CHECK_INT(gdr_report_print(r, out, GDR_REPORT_JSON),
				  0));
		fclose(out);
		free(text);
	}
	AFTER_FAILURE("gdr_report_destroy", gdr_report_destroy(r));

	AFTER_FAILURE("gdr_path_str",
		      CHECK_STR(gdr_path_str(GDR_PATH_DMABUF), "dmabuf"));
	AFTER_FAILURE("gdr_path_parse",
		      CHECK_INT(gdr_path_parse("peermem", &p), 0));
	AFTER_FAILURE("gdr_mem_type_str",
		      CHECK_STR(gdr_mem_type_str(GDR_MEM_HOST), "host"));

	/* The failures that set it. */
	check_scope = "failures name their cause";
	CHECK_INT(gdr_path_parse("bogus", &p), -1);
	CHECK(strstr(gdr_last_error(), "bogus") != NULL);
	CHECK(gdr_report_item(NULL, 0, &it, sizeof(it)) != 0);
	CHECK(gdr_last_error()[0] != '\0');

	every_export(argv[1]);
	fixture_remove(&fx);
	return check_summary("last-error");
}
