/* SPDX-License-Identifier: MIT */
/*
 * gdr_rank_nics() on a fixture PCIe tree: six RDMA devices around one GPU
 * (two under its switch, a Data Direct NIC whose data function is there
 * too, one at the host bridge, one on the other socket, one software
 * device), every policy, a too-small output, the GPU named by ordinal or
 * bus id, and bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"
#include "errnos.h"
#include "node.h"

#define GPU_CHAIN                                                              \
	"pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0"
#define GPU_BDF "0000:03:00.0"
#define DD_CHAIN                                                               \
	"pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:08:00.1"
#define NUM 6
#define NIC_SYS_CHAIN "pci0000:80/0000:80:01.0/0000:81:00.0"

static const struct {
	const char *name;
	const char *chain; /* NULL: no PCI parent */
	int numa;
	int dd;
} nics[NUM] = {
	{ "mlx5_sys", "pci0000:80/0000:80:01.0/0000:81:00.0", 1, 0 },
	{ "mlx5_pix_a",
	  "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:04.0/0000:04:00.0", 0,
	  0 },
	{ "mlx5_phb", "pci0000:00/0000:00:03.0/0000:06:00.0", 0, 0 },
	{ "mlx5_pix_b",
	  "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:05.0/0000:05:00.0", 0,
	  0 },
	{ "rxe0", NULL, 0, 0 },
	{ "mlx5_dd", "pci0000:00/0000:00:04.0/0000:07:00.0", 0, 1 },
};

static struct fake_nic rnics[NUM];
static struct ibv_context *ctxs[NUM];
static struct gdr_model_nic *models[NUM];
/* GPUDIRECT_PCIE_MAPPING for the next make_node (NULL: unset). */
static const char *pcie_env;

static void make_node(struct fixture *fx)
{
	char path[512], target[320];
	int i;

	fakes_reset();
	fixture_make(fx);
	fixture_write(fx->proc, "driver/nvidia/version", NV_OPEN);
	fixture_pci(fx, GPU_CHAIN, 0);
	fixture_pci(fx, DD_CHAIN, 0);
	snprintf(fake_model.gpu[0].pci_bus_id,
		 sizeof(fake_model.gpu[0].pci_bus_id), "%s", GPU_BDF);
	for (i = 0; i < NUM; i++) {
		struct gdr_model_nic *m =
			fake_add_nic(&rnics[i], nics[i].name, 1);

		ctxs[i] = &rnics[i].ctx;
		models[i] = m;
		m->mlx5 = !strncmp(nics[i].name, "mlx5", 4);
		m->data_direct_errno = nics[i].dd ? 0 : ENODEV;
		if (nics[i].dd)
			snprintf(m->data_direct_path,
				 sizeof(m->data_direct_path), "/sys/devices/%s",
				 DD_CHAIN);
		if (!nics[i].chain)
			continue;
		fixture_pci(fx, nics[i].chain, nics[i].numa);
		snprintf(path, sizeof(path), "%s/class/infiniband/%s/uevent",
			 fx->sys, nics[i].name);
		fixture_write(fx->sys, path + strlen(fx->sys) + 1, "");
		snprintf(path, sizeof(path), "%s/class/infiniband/%s/device",
			 fx->sys, nics[i].name);
		snprintf(target, sizeof(target), "../../../devices/%s",
			 nics[i].chain);
		CHECK(symlink(target, path) == 0);
	}
	if (pcie_env)
		fakes_setenv("GPUDIRECT_PCIE_MAPPING", pcie_env);
	fakes_install(fx, NULL, NULL, NULL);
}

static int rank(enum gdr_rank_policy policy, unsigned int max,
		struct gdr_nic_rank *out, unsigned int *num)
{
	struct gdr_rank_attr a = { .comp_mask = GDR_RANK_ATTR_BUS_ID,
				   .gpu_bus_id = GPU_BDF,
				   .policy = policy,
				   .max = max };

	return gdr_rank_nics(&a, ctxs, NUM, out, num, sizeof(*out));
}

static void policies(void)
{
	/* nearest first; at one distance the caller's order */
	static const unsigned int order[NUM] = { 1, 3, 5, 2, 0, 4 };
	static const enum gdr_distance dist[NUM] = {
		GDR_DIST_PIX, GDR_DIST_PIX, GDR_DIST_PIX,
		GDR_DIST_PHB, GDR_DIST_SYS, GDR_DIST_UNKNOWN
	};
	struct gdr_nic_rank out[NUM + 1];
	unsigned int num, i;
	int loads = fake_cu.loads;

	check_scope = "GDR_RANK_ALL";
	num = NUM;
	CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
	CHECK_STR(gdr_last_error(), "");
	CHECK_INT(num, NUM);
	for (i = 0; i < NUM; i++) {
		CHECK_INT(out[i].index, order[i]);
		CHECK_INT(out[i].distance, dist[i]);
	}
	CHECK_INT(out[2].data_direct, 1);
	CHECK_STR(out[2].nic_bus_id, "0000:08:00.1");
	CHECK_INT(out[0].data_direct, 0);
	CHECK_STR(out[0].nic_bus_id, "0000:04:00.0");
	CHECK_INT(out[0].same_numa, 1);
	CHECK_INT(out[4].same_numa, 0);
	CHECK_STR(out[5].nic_bus_id, "");
	CHECK_INT(out[5].same_numa, -1);
	CHECK_INT(out[5].acs_redirect, -1);
	/* no config space in the fixture: ACS is unknown, never a guess */
	CHECK_INT(out[0].acs_redirect, -1);
	/* naming the GPU by bus id makes no CUDA call */
	CHECK_INT(fake_cu.loads, loads);

	check_scope = "GDR_RANK_CLOSEST";
	num = NUM;
	CHECK_INT(rank(GDR_RANK_CLOSEST, 0, out, &num), 0);
	CHECK_INT(num, 1);
	CHECK_INT(out[0].index, 1);

	check_scope = "GDR_RANK_BEST";
	num = NUM;
	CHECK_INT(rank(GDR_RANK_BEST, 0, out, &num), 0);
	CHECK_INT(num, 3);
	CHECK_INT(out[2].index, 5);

	check_scope = "GDR_RANK_BEST_N";
	num = NUM;
	CHECK_INT(rank(GDR_RANK_BEST_N, 4, out, &num), 0);
	CHECK_INT(num, 4);
	CHECK_INT(out[3].index, 2);
	num = NUM;
	CHECK_INT(rank(GDR_RANK_BEST_N, 40, out, &num), 0);
	CHECK_INT(num, NUM);

	check_scope = "room for two of six";
	memset(out, 0x5a, sizeof(out));
	num = 2;
	CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
	CHECK_INT(num, NUM);
	CHECK_INT(out[1].index, 3);
	CHECK_INT(((unsigned char *)&out[2])[0], 0x5a);
	num = 0;
	CHECK_INT(rank(GDR_RANK_ALL, 0, NULL, &num), 0);
	CHECK_INT(num, NUM);

	check_scope = "a larger caller record";
	{
		char big[NUM][sizeof(struct gdr_nic_rank) + 16];
		unsigned int k;

		memset(big, 0x5a, sizeof(big));
		num = NUM;
		CHECK_INT(gdr_rank_nics(
				  &(struct gdr_rank_attr){
					  .comp_mask = GDR_RANK_ATTR_BUS_ID,
					  .gpu_bus_id = GPU_BDF,
					  .policy = GDR_RANK_ALL },
				  ctxs, NUM, (struct gdr_nic_rank *)big, &num,
				  sizeof(big[0])),
			  0);
		CHECK_INT(((struct gdr_nic_rank *)(void *)big[1])->index, 3);
		/* what a later release would add reads 0 */
		for (k = sizeof(struct gdr_nic_rank); k < sizeof(big[0]); k++)
			CHECK_INT(big[NUM - 1][k], 0);
	}
}

static void by_ordinal(void)
{
	struct gdr_rank_attr a = { .cuda_device = 0,
				   .policy = GDR_RANK_CLOSEST };
	struct gdr_nic_rank out[1];
	unsigned int num = 1;

	check_scope = "the GPU by CUDA ordinal";
	CHECK_INT(gdr_rank_nics(&a, ctxs, NUM, out, &num, sizeof(out[0])), 0);
	CHECK_INT(out[0].index, 1);
	check_scope =
		"a GPU without the PCIe mapping: Data Direct cannot reach it";
	{
		struct gdr_nic_rank all[NUM];

		num = NUM;
		a.policy = GDR_RANK_ALL;
		gdr_pcie_map_set(0, GDR_PCIE_MAP_UNSUPPORTED);
		CHECK_INT(gdr_rank_nics(&a, ctxs, NUM, all, &num,
					sizeof(all[0])),
			  0);
		/* mlx5_dd now moves data through its own function, at the
		 * host bridge, after the PHB device that came before it */
		CHECK_INT(all[2].index, 2);
		CHECK_INT(all[3].index, 5);
		CHECK_INT(all[3].distance, GDR_DIST_PHB);
		CHECK_INT(all[3].data_direct, 1);
		CHECK_STR(all[3].nic_bus_id, "0000:07:00.0");
		gdr_pcie_map_set(0, GDR_PCIE_MAP_UNTRIED);
		a.policy = GDR_RANK_CLOSEST;
		num = 1;
	}
	check_scope = "an ordinal out of range";
	a.cuda_device = 3;
	errno = 0;
	CHECK_INT(gdr_rank_nics(&a, ctxs, NUM, out, &num, sizeof(out[0])), -1);
	CHECK_INT(errno, ENODEV);
	CHECK_HAS(gdr_last_error(), "CUDA device 3 is not a GPU");
}

static void no_cuda(void)
{
	struct gdr_rank_attr a = { .cuda_device = 0,
				   .policy = GDR_RANK_CLOSEST };
	struct gdr_nic_rank out[1];
	struct fixture fx;
	unsigned int num = 1;

	check_scope = "CUDA not loaded by the process";
	make_node(&fx);
	fake_cu.not_loaded = 1;
	errno = 0;
	CHECK_INT(gdr_rank_nics(&a, ctxs, NUM, out, &num, sizeof(out[0])), -1);
	CHECK_INT(errno, ENODEV);
	CHECK_HAS(gdr_last_error(), "gdr_rank_attr.gpu_bus_id");
	CHECK_INT(fake_cu.inits, 0);
	fixture_remove(&fx);
}

static void bad_arguments(void)
{
	struct gdr_rank_attr a = { .comp_mask = GDR_RANK_ATTR_BUS_ID,
				   .gpu_bus_id = GPU_BDF,
				   .policy = GDR_RANK_ALL };
	struct ibv_context *holes[2] = { ctxs[0], NULL };
	struct gdr_nic_rank out[NUM];
	unsigned int num = NUM;

#define REFUSED(scope, e, call, words)                                         \
	do {                                                                   \
		check_scope = scope;                                           \
		errno = 0;                                                     \
		CHECK_INT(call, -1);                                           \
		CHECK_INT(errno, e);                                           \
		CHECK_HAS(gdr_last_error(), words);                            \
	} while (0)
	REFUSED("NULL attr", EINVAL,
		gdr_rank_nics(NULL, ctxs, NUM, out, &num, sizeof(out[0])),
		"must not be NULL");
	REFUSED("NULL num_out", EINVAL,
		gdr_rank_nics(&a, ctxs, NUM, out, NULL, sizeof(out[0])),
		"must not be NULL");
	num = 2;
	REFUSED("NULL out with room", EINVAL,
		gdr_rank_nics(&a, ctxs, NUM, NULL, &num, sizeof(out[0])),
		"nor out when");
	num = NUM;
	REFUSED("a small rank_size", EINVAL,
		gdr_rank_nics(&a, ctxs, NUM, out, &num, 8), "rank_size 8");
	num = 2;
	REFUSED("records past the end of the address space", EINVAL,
		gdr_rank_nics(&a, ctxs, NUM, out, &num, SIZE_MAX / 2),
		"past the end of the address space");
	REFUSED("no devices", EINVAL,
		gdr_rank_nics(&a, ctxs, 0, out, &num, sizeof(out[0])),
		"num_ctxs is 0");
	REFUSED("a NULL device", EINVAL,
		gdr_rank_nics(&a, holes, 2, out, &num, sizeof(out[0])),
		"ctxs[1]");
	a.comp_mask |= 1u << 7;
	REFUSED("unknown comp_mask bits", EINVAL,
		gdr_rank_nics(&a, ctxs, NUM, out, &num, sizeof(out[0])),
		"unknown bits 0x80");
	a.comp_mask = GDR_RANK_ATTR_BUS_ID;
	a.policy = (enum gdr_rank_policy)9;
	REFUSED("an unknown policy", EINVAL,
		gdr_rank_nics(&a, ctxs, NUM, out, &num, sizeof(out[0])),
		"policy 9");
	a.policy = GDR_RANK_BEST_N;
	REFUSED("BEST_N of 0", EINVAL,
		gdr_rank_nics(&a, ctxs, NUM, out, &num, sizeof(out[0])),
		"with max 0");
	a.policy = GDR_RANK_ALL;
	a.gpu_bus_id = "not-a-bdf";
	REFUSED("a bus id that is no address", EINVAL,
		gdr_rank_nics(&a, ctxs, NUM, out, &num, sizeof(out[0])),
		"is not a PCI address");
	a.gpu_bus_id = "0000:99:00.0";
	REFUSED("a GPU not in sysfs", ENODEV,
		gdr_rank_nics(&a, ctxs, NUM, out, &num, sizeof(out[0])),
		"0000:99:00.0 is not in");
	check_scope = "names";
	CHECK_STR(gdr_distance_str(GDR_DIST_PIX), "PIX");
	CHECK_STR(gdr_distance_str(GDR_DIST_SYS), "SYS");
	CHECK_STR(gdr_distance_str(GDR_DIST_UNKNOWN), "unknown");
	CHECK_STR(gdr_distance_str((enum gdr_distance)0), "invalid");
}

/* Extended capability headers: id, version 1, the next one's offset. */
#define ECAP(id, next) ((id) | 1u << 16 | (unsigned)(next) << 20)
#define BRIDGE_01 "pci0000:00/0000:00:01.0/0000:01:00.0"
#define BRIDGE_02_00 BRIDGE_01 "/0000:02:00.0"
#define BRIDGE_02_04 BRIDGE_01 "/0000:02:04.0"

/* Write @size bytes of config space for the function at @chain: up to
 * two extended capabilities, @cap_a at 0x100 and @cap_b at 0x140 (0:
 * none), with ACS control @ctl in whichever is ACS. */
static void write_config(const struct fixture *fx, const char *chain,
			 size_t size, unsigned int cap_a, unsigned int cap_b,
			 unsigned int ctl)
{
	unsigned char cfg[4096];
	char path[512];
	unsigned int caps[2] = { cap_a, cap_b }, at[2] = { 0x100, 0x140 };
	FILE *f;
	int i, k;

	memset(cfg, 0, sizeof(cfg));
	for (i = 0; i < 2; i++) {
		for (k = 0; k < 4; k++)
			cfg[at[i] + k] = (unsigned char)(caps[i] >> (8 * k));
		if ((caps[i] & 0xffff) == 0x000d) {
			cfg[at[i] + 6] = (unsigned char)ctl;
			cfg[at[i] + 7] = (unsigned char)(ctl >> 8);
		}
	}
	snprintf(path, sizeof(path), "%s/devices/%s/config", fx->sys, chain);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(fwrite(cfg, 1, size, f), size);
	fclose(f);
}

static int acs_of(unsigned int index)
{
	struct gdr_nic_rank out[NUM];
	unsigned int num = NUM, i;

	CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
	for (i = 0; i < num; i++)
		if (out[i].index == index)
			return out[i].acs_redirect;
	CHECK_(0, "device %u not ranked", index);
	return -2;
}

/*
 * ACS on the path from the GPU to mlx5_pix_a (bridges 01:00.0, 02:00.0
 * and 02:04.0), from the bridges' extended config space: an ACS
 * capability found behind another one, a short (unprivileged, 256-byte)
 * config space as unknown, and a device not in sysfs as unknown.
 */
static void acs(void)
{
	struct fixture fx;
	char out[256];

	check_scope = "ACS from config space";
	make_node(&fx);
	fixture_pci(&fx, BRIDGE_01, 0);
	fixture_pci(&fx, BRIDGE_02_00, 0);
	fixture_pci(&fx, BRIDGE_02_04, 0);
	/* AER first, then ACS with P2P request and completion redirect. */
	write_config(&fx, BRIDGE_01, 4096, ECAP(0x0001, 0x140), ECAP(0x000d, 0),
		     0x000c);
	write_config(&fx, BRIDGE_02_00, 4096, ECAP(0x000d, 0), 0, 0);
	write_config(&fx, BRIDGE_02_04, 4096, 0, 0, 0);
	CHECK_INT(acs_of(1), 1);
	CHECK_INT(gdr_pci_acs_redirects(GPU_BDF, "0000:04:00.0", out,
					sizeof(out)),
		  1);
	CHECK_STR(out, "0000:01:00.0");
	/* The other end is not in sysfs: unknown, whatever the bridges on
	 * this side say. */
	CHECK_INT(gdr_pci_acs_redirects(GPU_BDF, "0000:99:00.0", out,
					sizeof(out)),
		  -1);

	check_scope = "ACS: a bridge's config space cut at 256 bytes";
	write_config(&fx, BRIDGE_01, 4096, ECAP(0x000d, 0), 0, 0);
	write_config(&fx, BRIDGE_02_04, 256, 0, 0, 0);
	CHECK_INT(acs_of(1), -1);
	write_config(&fx, BRIDGE_02_04, 4096, 0, 0, 0);
	CHECK_INT(acs_of(1), 0);

	/* ACS known on one side of the meeting point only: unknown where
	 * the side that is known redirects nothing, the known redirect
	 * where it does (the traffic goes up whatever the other side
	 * says). The GPU's side (02:00.0) and the device's (02:04.0) in
	 * turn; the switch's upstream port 01:00.0 reads none. */
	check_scope = "ACS: the GPU's side unreadable";
	write_config(&fx, BRIDGE_01, 4096, ECAP(0x000d, 0), 0, 0);
	write_config(&fx, BRIDGE_02_00, 256, 0, 0, 0);
	write_config(&fx, BRIDGE_02_04, 4096, ECAP(0x000d, 0), 0, 0);
	CHECK_INT(acs_of(1), -1);
	write_config(&fx, BRIDGE_02_04, 4096, ECAP(0x000d, 0), 0, 0x000c);
	CHECK_INT(acs_of(1), 1);
	CHECK_INT(gdr_pci_acs_redirects(GPU_BDF, "0000:04:00.0", out,
					sizeof(out)),
		  1);
	CHECK_STR(out, "0000:02:04.0");
	check_scope = "ACS: the device's side unreadable";
	write_config(&fx, BRIDGE_02_00, 4096, ECAP(0x000d, 0), 0, 0x000c);
	write_config(&fx, BRIDGE_02_04, 256, 0, 0, 0);
	CHECK_INT(acs_of(1), 1);
	CHECK_INT(gdr_pci_acs_redirects(GPU_BDF, "0000:04:00.0", out,
					sizeof(out)),
		  1);
	CHECK_STR(out, "0000:02:00.0");
	write_config(&fx, BRIDGE_02_00, 4096, ECAP(0x000d, 0), 0, 0);
	CHECK_INT(acs_of(1), -1);

	check_scope = "ACS orders one distance: none, unknown, redirecting";
	write_config(&fx, BRIDGE_01, 4096, ECAP(0x000d, 0), 0, 0);
	write_config(&fx, BRIDGE_02_00, 4096, ECAP(0x000d, 0), 0, 0);
	write_config(&fx, BRIDGE_02_04, 4096, ECAP(0x000d, 0), 0, 0x000c);
	fixture_pci(&fx, BRIDGE_01 "/0000:02:05.0", 0);
	write_config(&fx, BRIDGE_01 "/0000:02:05.0", 4096, ECAP(0x000d, 0), 0,
		     0);
	{
		struct gdr_nic_rank o[NUM];
		unsigned int num = NUM;

		CHECK_INT(rank(GDR_RANK_ALL, 0, o, &num), 0);
		CHECK_INT(o[0].index, 3);
		CHECK_INT(o[0].acs_redirect, 0);
		CHECK_INT(o[1].index, 5);
		CHECK_INT(o[1].acs_redirect, -1);
		CHECK_INT(o[2].index, 1);
		CHECK_INT(o[2].acs_redirect, 1);
	}
	fixture_remove(&fx);
}

/* A device that is not mlx5 is not asked the mlx5 direct verbs' question,
 * whatever it would answer. */
static void not_mlx5_not_asked(void)
{
	struct gdr_nic_rank out[NUM];
	unsigned int num = NUM, i;
	struct fixture fx;

	check_scope = "a non-mlx5 device has no Data Direct function";
	make_node(&fx);
	models[4]->data_direct_errno = 0;
	snprintf(models[4]->data_direct_path,
		 sizeof(models[4]->data_direct_path), "/sys/devices/%s",
		 DD_CHAIN);
	CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
	for (i = 0; i < num; i++)
		if (out[i].index == 4) {
			CHECK_INT(out[i].data_direct, 0);
			CHECK_STR(out[i].nic_bus_id, "");
		}
	fixture_remove(&fx);
}

/* out[i] for device @index (NULL when not among the @num ranked). */
static const struct gdr_nic_rank *ranked(const struct gdr_nic_rank *out,
					 unsigned int num, unsigned int index)
{
	unsigned int i;

	for (i = 0; i < num; i++)
		if (out[i].index == index)
			return &out[i];
	CHECK_(0, "device %u not ranked", index);
	return NULL;
}

/*
 * same_numa is 1 or 0 only when sysfs gives the NUMA node of both ends;
 * -1 when either is unknown ("-1" in numa_node, as the kernel writes it
 * without NUMA information, or no file), whatever the other end says.
 */
static void numa_one_side(void)
{
	struct gdr_nic_rank out[NUM];
	const struct gdr_nic_rank *r;
	unsigned int num;
	struct fixture fx;

	make_node(&fx);
	check_scope = "NUMA: the GPU's unknown";
	fixture_write(fx.sys, "devices/" GPU_CHAIN "/numa_node", "-1\n");
	num = NUM;
	CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
	CHECK_INT(num, NUM);
	if ((r = ranked(out, num, 1))) /* node 0 */
		CHECK_INT(r->same_numa, -1);
	if ((r = ranked(out, num, 0))) /* node 1 */
		CHECK_INT(r->same_numa, -1);
	if ((r = ranked(out, num, 1))) /* the distance is still known */
		CHECK_INT(r->distance, GDR_DIST_PIX);

	check_scope = "NUMA: one device's unknown";
	fixture_write(fx.sys, "devices/" GPU_CHAIN "/numa_node", "0\n");
	fixture_write(fx.sys, "devices/" DD_CHAIN "/numa_node", "-1\n");
	fixture_write(fx.sys, "devices/" NIC_SYS_CHAIN "/numa_node", "-1\n");
	num = NUM;
	CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
	if ((r = ranked(out, num, 5))) /* measured from its DD function */
		CHECK_INT(r->same_numa, -1);
	if ((r = ranked(out, num, 0)))
		CHECK_INT(r->same_numa, -1);
	if ((r = ranked(out, num, 1))) /* both known, the same */
		CHECK_INT(r->same_numa, 1);

	check_scope = "NUMA: a device without the file";
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/devices/%s/numa_node", fx.sys,
			 nics[1].chain);
		CHECK_INT(unlink(path), 0);
	}
	fixture_write(fx.sys, "devices/" NIC_SYS_CHAIN "/numa_node", "1\n");
	num = NUM;
	CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
	if ((r = ranked(out, num, 1)))
		CHECK_INT(r->same_numa, -1);
	if ((r = ranked(out, num, 0))) /* both known, not the same */
		CHECK_INT(r->same_numa, 0);
	fixture_remove(&fx);
}

/*
 * GPUDIRECT_PCIE_MAPPING=off: no registration takes Data Direct, so no
 * device is measured from its Data Direct function (gdr_nic_rank's
 * nic_bus_id): mlx5_dd moves data through its own function, at the host
 * bridge, and ranks after the PHB device before it; it still has the
 * function (data_direct 1). The same for a GPU named by ordinal.
 */
static void pcie_mapping_off(void)
{
	struct gdr_rank_attr by_ordinal = { .cuda_device = 0,
					    .policy = GDR_RANK_ALL };
	struct gdr_nic_rank out[NUM];
	unsigned int num, pass;
	struct fixture fx;

	pcie_env = "off";
	make_node(&fx);
	pcie_env = NULL;
	for (pass = 0; pass < 2; pass++) {
		check_scope = pass ? "GPUDIRECT_PCIE_MAPPING=off, by ordinal"
				   : "GPUDIRECT_PCIE_MAPPING=off, by bus id";
		num = NUM;
		if (pass)
			CHECK_INT(gdr_rank_nics(&by_ordinal, ctxs, NUM, out,
						&num, sizeof(out[0])),
				  0);
		else
			CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
		CHECK_INT(num, NUM);
		CHECK_INT(out[0].index, 1);
		CHECK_INT(out[1].index, 3);
		CHECK_INT(out[2].index, 2);
		CHECK_INT(out[3].index, 5);
		CHECK_INT(out[3].distance, GDR_DIST_PHB);
		CHECK_INT(out[3].data_direct, 1);
		CHECK_STR(out[3].nic_bus_id, "0000:07:00.0");
	}
	fixture_remove(&fx);
	/* auto (unset): measured from the Data Direct function, PIX */
	check_scope = "GPUDIRECT_PCIE_MAPPING unset";
	make_node(&fx);
	num = NUM;
	CHECK_INT(rank(GDR_RANK_ALL, 0, out, &num), 0);
	CHECK_INT(out[2].index, 5);
	CHECK_STR(out[2].nic_bus_id, "0000:08:00.1");
	fixture_remove(&fx);
}

/*
 * The records written are the chosen ones, however much room there is:
 * nothing past *num_out as the call leaves it (the policy's count) is
 * touched, and *num_out is the count.
 */
static void no_more_than_chosen(void)
{
	static const struct {
		enum gdr_rank_policy policy;
		unsigned int max, chosen;
	} cases[] = {
		{ GDR_RANK_CLOSEST, 0, 1 },
		{ GDR_RANK_BEST, 0, 3 },
		{ GDR_RANK_BEST_N, 4, 4 },
		{ GDR_RANK_BEST_N, 1, 1 },
	};
	struct gdr_nic_rank out[NUM];
	struct fixture fx;
	unsigned int c, num;
	size_t k;

	make_node(&fx);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		check_scope = "room for all, fewer chosen";
		memset(out, 0x5a, sizeof(out));
		num = NUM;
		CHECK_INT(rank(cases[c].policy, cases[c].max, out, &num), 0);
		CHECK_INT(num, cases[c].chosen);
		CHECK_INT(out[0].index, 1);
		CHECK_INT(out[cases[c].chosen - 1].index,
			  cases[c].chosen == 4	 ? 2u
			  : cases[c].chosen == 3 ? 5u
						 : 1u);
		for (k = cases[c].chosen * sizeof(out[0]); k < sizeof(out); k++)
			if (((unsigned char *)out)[k] != 0x5a) {
				CHECK_(0,
				       "policy %d: byte %zu past %u records "
				       "written",
				       (int)cases[c].policy, k,
				       cases[c].chosen);
				break;
			}
	}
	fixture_remove(&fx);
}

int main(void)
{
	struct fixture fx;

	make_node(&fx);
	policies();
	by_ordinal();
	bad_arguments();
	fixture_remove(&fx);
	no_cuda();
	acs();
	not_mlx5_not_asked();
	numa_one_side();
	pcie_mapping_off();
	no_more_than_chosen();
	printf("rank: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}
