/* SPDX-License-Identifier: MIT */
/*
 * The import of memory another process owns, pinned from both sides: the
 * options (flags read only where comp_mask names them, those a dma-buf
 * has no use for refused by the single and the multi form before CUDA or
 * the NIC is asked), export_index as the place in fds, the record of a
 * refusal, info_size at its least, the highest iova, and every output of
 * a success (the MR and the record).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "share-fixture.h"

static void export_one(size_t len, uint32_t flags, struct gdr_export_desc *d,
		       int *fds)
{
	char *p = fake_alloc_device(0, 4 << 20);

	CHECK_INT(gdr_export(p + 0x1234, len, flags, d, fds), 0);
}

/* Every output of a successful import: the MR and the record. */
static void import_fields(void)
{
	struct gdr_export_desc d;
	struct gdr_reg_info info;
	struct ibv_mr *mr;
	int fds[2];

	check_scope = "import: the MR and every field of the record";
	node(1);
	export_one(100000, GDR_EXPORT_PCIE_MAPPING, &d, fds);
	memset(&info, 0xa5, sizeof(info));
	mr = gdr_import_register(plain, &d, fds, NULL, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_STR(gdr_last_error(), "");
	CHECK(mr && mr->addr == (void *)(uintptr_t)d.iova);
	CHECK(mr && mr->length == 100000);
	CHECK(mr && mr->pd == plain);
	CHECK_INT(fake_ibv.last_fd, fds[0]);
	CHECK_INT(fake_ibv.last_offset, d.offset);
	CHECK_INT(fake_ibv.last_iova, d.iova);
	CHECK_INT(info.comp_mask, GDR_REG_INFO_BASIC | GDR_REG_INFO_EXPORT);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(info.mem_type, GDR_MEM_DMABUF);
	CHECK_INT(info.device, -1);
	CHECK_INT(info.export_index, 0);
	/* Data Direct first (the NIC has no such function), then DMA-BUF. */
	CHECK_INT(info.num_attempts, 2);
	CHECK_INT(info.attempts[0].path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(info.attempts[0].result, GDR_ATTEMPT_SKIPPED);
	CHECK(info.attempts[0].err != 0);
	CHECK(info.attempts[0].reason[0] != '\0');
	printf("  import record: DD skipped (%d): %s\n", info.attempts[0].err,
	       info.attempts[0].reason);
	CHECK_INT(info.attempts[1].path, GDR_PATH_DMABUF);
	CHECK_INT(info.attempts[1].result, GDR_ATTEMPT_USED);
	CHECK_INT(info.attempts[1].err, 0);
	CHECK_STR(info.attempts[1].reason, "");
	if (mr)
		CHECK_INT(gdr_deregister(mr), 0);

	check_scope = "import: the MR and record through Data Direct";
	memset(&info, 0xa5, sizeof(info));
	mr = gdr_import_register(&dd_nic.pd, &d, fds, NULL, &info,
				 sizeof(info));
	CHECK(mr != NULL);
	CHECK(mr && mr->addr == (void *)(uintptr_t)d.iova);
	CHECK(mr && mr->length == 100000);
	CHECK_INT(fake_ibv.last_fd, fds[1]);
	CHECK_INT(info.path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(info.mem_type, GDR_MEM_DMABUF);
	CHECK_INT(info.device, -1);
	CHECK_INT(info.export_index, 1);
	CHECK_INT(info.num_attempts, 1);
	CHECK_INT(info.attempts[0].path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(info.attempts[0].result, GDR_ATTEMPT_USED);
	CHECK_INT(info.attempts[0].err, 0);
	CHECK_STR(info.attempts[0].reason, "");
	if (mr)
		CHECK_INT(gdr_deregister(mr), 0);

	check_scope = "import: a path that fails keeps device -1";
	fake_ibv.dmabuf_errno = EINVAL;
	memset(&info, 0x5a, sizeof(info));
	CHECK(gdr_import_register(plain, &d, fds, NULL, &info, sizeof(info)) ==
	      NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(info.path, GDR_PATH_NONE);
	CHECK_INT(info.mem_type, GDR_MEM_DMABUF);
	CHECK_INT(info.device, -1);
	CHECK_INT(info.export_index, -1);
	CHECK_INT(info.num_attempts, 2);
	CHECK_INT(info.attempts[1].result, GDR_ATTEMPT_FAILED);
	CHECK_INT(info.attempts[1].err, EINVAL);
	fake_ibv.dmabuf_errno = 0;
	close_fds(fds, 2);
	done();
}

/* @flags is read only where comp_mask has GDR_REG_ATTR_FLAGS. */
static void import_flags_unmasked(void)
{
	struct gdr_reg_attr attr = {
		.comp_mask = 0,
		.flags = GDR_REG_SYNC_MEMOPS | GDR_REG_OWNER_RDMA_CAPABLE |
			 GDR_REG_PCIE_MAPPING | 0xf0000000u,
	};
	struct ibv_pd *pds[2];
	struct gdr_export_desc d;
	struct gdr_reg_info info, infos[2];
	struct ibv_mr *mr, *mrs[2];
	int fds[2];

	node(1);
	export_one(4096, GDR_EXPORT_PCIE_MAPPING, &d, fds);

	check_scope = "import: flags without GDR_REG_ATTR_FLAGS are not read";
	mr = gdr_import_register(plain, &d, fds, &attr, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(fake_ibv.last_fd, fds[0]); /* not the PCIe-mapped one */
	CHECK_INT(info.export_index, 0);
	if (mr)
		gdr_deregister(mr);

	check_scope = "import: the same flags with the mask bit";
	attr.comp_mask = GDR_REG_ATTR_FLAGS;
	CHECK(gdr_import_register(plain, &d, fds, &attr, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	attr.flags = GDR_REG_PCIE_MAPPING;
	mr = gdr_import_register(plain, &d, fds, &attr, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.last_fd, fds[1]);
	CHECK_INT(info.export_index, 1);
	if (mr)
		gdr_deregister(mr);

	check_scope = "import multi: flags without the mask bit are not read";
	attr.comp_mask = GDR_REG_ATTR_PATH_MASK;
	attr.path_mask = GDR_PATH_BIT(GDR_PATH_DMABUF);
	attr.flags = GDR_REG_SYNC_MEMOPS | GDR_REG_OWNER_RDMA_CAPABLE;
	pds[0] = plain;
	pds[1] = &dd_nic.pd;
	CHECK_INT(gdr_import_register_multi(pds, 2, &d, fds, &attr, mrs, infos,
					    sizeof(infos[0])),
		  0);
	CHECK_INT(infos[0].path, GDR_PATH_DMABUF);
	CHECK_INT(infos[1].path, GDR_PATH_DMABUF);
	gdr_deregister_multi(mrs, 2);

	check_scope = "bare fd: flags without the mask bit are not read";
	attr.comp_mask = 0;
	attr.flags = GDR_REG_PCIE_MAPPING | GDR_REG_SYNC_MEMOPS;
	mr = gdr_register_dmabuf(&dd_nic.pd, fds[0], 0, 4096, 0x10000, &attr,
				 &info, sizeof(info));
	CHECK(mr != NULL);
	/* Taken as plainly mapped: DMA-BUF, not the Data Direct function. */
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(fake_ibv.mlx5_reg_calls, 0);
	if (mr)
		gdr_deregister(mr);
	attr.comp_mask = GDR_REG_ATTR_FLAGS;
	attr.flags = GDR_REG_PCIE_MAPPING;
	mr = gdr_register_dmabuf(&dd_nic.pd, fds[1], 0, 4096, 0x10000, &attr,
				 &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DATA_DIRECT);
	if (mr)
		gdr_deregister(mr);
	close_fds(fds, 2);
	done();
}

/* export_index names the fd by its place in @fds, whatever the mapping
 * order: here the PCIe-mapped one first. */
static void import_pcie_first(void)
{
	struct gdr_export_desc d, r, got;
	struct gdr_reg_info info;
	struct ibv_mr *mr;
	int fds[2], rfds[2], swapped[2], sv[2];

	node(1);
	export_one(4096, GDR_EXPORT_PCIE_MAPPING, &d, fds);
	r = d;
	r.mapping[0] = GDR_DMABUF_MAPPING_PCIE;
	r.mapping[1] = GDR_DMABUF_MAPPING_DEFAULT;
	r.dmabuf_ino[0] = d.dmabuf_ino[1];
	r.dmabuf_ino[1] = d.dmabuf_ino[0];
	swapped[0] = fds[1];
	swapped[1] = fds[0];

	check_scope = "import: PCIe first, DMA-BUF takes fds[1]";
	mr = gdr_import_register(plain, &r, swapped, NULL, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(fake_ibv.last_fd, swapped[1]);
	CHECK_INT(info.export_index, 1);
	if (mr)
		gdr_deregister(mr);

	check_scope = "import: PCIe first, Data Direct takes fds[0]";
	mr = gdr_import_register(&dd_nic.pd, &r, swapped, NULL, &info,
				 sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(fake_ibv.last_fd, swapped[0]);
	CHECK_INT(info.export_index, 0);
	if (mr)
		gdr_deregister(mr);

	check_scope = "import: PCIe first, over the socket";
	pair(SOCK_SEQPACKET, sv);
	CHECK_INT(gdr_export_send(sv[0], &r, swapped), 0);
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), 0);
	CHECK(!memcmp(&r, &got, sizeof(r)));
	CHECK_INT(ino_of(rfds[0]), d.dmabuf_ino[1]);
	mr = gdr_import_register(plain, &got, rfds, NULL, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.last_fd, rfds[1]);
	CHECK_INT(info.export_index, 1);
	if (mr)
		gdr_deregister(mr);
	close_fds(rfds, 2);
	close(sv[0]);
	close(sv[1]);
	close_fds(fds, 2);
	done();
}

/* A refusal before any path: the record says "nothing", device -1. */
static void import_refused_record(void)
{
	struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_FLAGS,
				     .flags = GDR_REG_SYNC_MEMOPS };
	struct gdr_export_desc d;
	struct gdr_reg_info info;
	int fds[2], bad[2];

	node(0);
	export_one(4096, 0, &d, fds);

	check_scope = "import refused: options";
	memset(&info, 0, sizeof(info)); /* device 0 is GPU 0: must change */
	CHECK(gdr_import_register(plain, &d, fds, &attr, &info, sizeof(info)) ==
	      NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(info.comp_mask, GDR_REG_INFO_BASIC | GDR_REG_INFO_EXPORT);
	CHECK_INT(info.path, GDR_PATH_NONE);
	CHECK_INT(info.mem_type, GDR_MEM_UNKNOWN);
	CHECK_INT(info.device, -1);
	CHECK_INT(info.num_attempts, 0);
	CHECK_INT(info.export_index, -1);

	check_scope = "import refused: an fd not open";
	bad[0] = 999;
	bad[1] = -1;
	memset(&info, 0, sizeof(info));
	CHECK(gdr_import_register(plain, &d, bad, NULL, &info, sizeof(info)) ==
	      NULL);
	CHECK_INT(errno, EBADF);
	CHECK_INT(info.path, GDR_PATH_NONE);
	CHECK_INT(info.device, -1);
	CHECK_INT(info.export_index, -1);

	check_scope = "bare fd refused: past the dma-buf";
	memset(&info, 0, sizeof(info));
	CHECK(gdr_register_dmabuf(plain, fds[0], 8192, 1, 0, NULL, &info,
				  sizeof(info)) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(info.path, GDR_PATH_NONE);
	CHECK_INT(info.device, -1);
	CHECK_INT(info.export_index, -1);
	CHECK_INT(fake_ibv.dmabuf_calls, 0);
	close_fds(fds, 1);
	done();
}

/* info_size: GDR_REG_INFO_MIN_SIZE is enough, a byte less is refused. */
static void import_info_size(void)
{
	union {
		struct gdr_reg_info info;
		unsigned char b[sizeof(struct gdr_reg_info)];
	} u;
	struct gdr_export_desc d;
	struct ibv_mr *mr;
	size_t i, min = GDR_REG_INFO_MIN_SIZE;
	int fds[2], calls, intact;

	node(0);
	export_one(4096, 0, &d, fds);

	check_scope = "import: a record of GDR_REG_INFO_MIN_SIZE bytes";
	memset(u.b, 0x5a, sizeof(u.b));
	mr = gdr_import_register(plain, &d, fds, NULL, &u.info, min);
	CHECK(mr != NULL);
	CHECK_INT(u.info.comp_mask, GDR_REG_INFO_BASIC);
	CHECK_INT(u.info.path, GDR_PATH_DMABUF);
	CHECK_INT(u.info.mem_type, GDR_MEM_DMABUF);
	CHECK_INT(u.info.device, -1);
	CHECK_INT(u.info.num_attempts, 0); /* no room for one */
	for (intact = 1, i = min; i < sizeof(u.b); i++)
		intact &= u.b[i] == 0x5a;
	CHECK_INT(intact, 1);
	if (mr)
		gdr_deregister(mr);

	check_scope = "bare fd: a record of GDR_REG_INFO_MIN_SIZE bytes";
	memset(u.b, 0x5a, sizeof(u.b));
	mr = gdr_register_dmabuf(plain, fds[0], 0, 4096, 0, NULL, &u.info, min);
	CHECK(mr != NULL);
	CHECK_INT(u.info.path, GDR_PATH_DMABUF);
	if (mr)
		gdr_deregister(mr);

	check_scope = "import: a record a byte short of it";
	calls = fake_ibv.dmabuf_calls;
	memset(u.b, 0x5a, sizeof(u.b));
	CHECK(gdr_import_register(plain, &d, fds, NULL, &u.info, min - 1) ==
	      NULL);
	CHECK_INT(errno, EINVAL);
	SAID("info_size");
	for (intact = 1, i = 0; i < sizeof(u.b); i++)
		intact &= u.b[i] == 0x5a;
	CHECK_INT(intact, 1);
	CHECK(gdr_register_dmabuf(plain, fds[0], 0, 4096, 0, NULL, &u.info,
				  min - 1) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(fake_ibv.dmabuf_calls, calls);
	close_fds(fds, 1);
	done();
}

/* Every call into the fake CUDA driver a registration could make. */
static long cuda_calls(void)
{
	return (long)fake_cu.inits + fake_cu.loads + fake_cu.exports +
	       fake_cu.set_attr_calls + fake_cu.push_calls + fake_cu.pop_calls +
	       fake_cu.retains + fake_cu.releases + fake_cu.set_flags_calls +
	       fake_cu.ptr_attr_calls + fake_cu.ptr_attrs_calls +
	       fake_cu.range_calls;
}

/* The multi form refuses the options a dma-buf has no use for, as the
 * single one does, before anything is asked of CUDA or the NIC. */
static void import_multi_attr(void)
{
	struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_FLAGS };
	struct gdr_export_desc d;
	struct ibv_pd *pds[2];
	struct ibv_mr *mrs[2];
	int fds[2], status = -1, calls;
	pid_t child;

	node(1);
	export_one(4096, 0, &d, fds);
	pds[0] = plain;
	pds[1] = &dd_nic.pd;
	fake_cu.count_queries = 1;

	check_scope = "import multi: GDR_REG_OWNER_RDMA_CAPABLE refused";
	attr.flags = GDR_REG_OWNER_RDMA_CAPABLE;
	calls = fake_ibv.dmabuf_calls;
	CHECK_INT(gdr_import_register_multi(pds, 2, &d, fds, &attr, mrs, NULL,
					    0),
		  -1);
	CHECK_INT(errno, EINVAL);
	SAID("do not apply to a dma-buf");
	CHECK(mrs[0] == NULL && mrs[1] == NULL);
	CHECK_INT(fake_ibv.dmabuf_calls, calls);
	gdr_deregister_multi(mrs, 2); /* none, unless it took the flag */

	/* In a child: a library that took it would go on to CUDA, which an
	 * importer need not have loaded at all. */
	check_scope = "import multi: GDR_REG_SYNC_MEMOPS refused, no CUDA";
	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child == 0) {
		long before = cuda_calls();
		int rc, err;

		attr.flags = GDR_REG_SYNC_MEMOPS;
		rc = gdr_import_register_multi(pds, 2, &d, fds, &attr, mrs,
					       NULL, 0);
		err = errno;
		_exit(rc != -1		       ? 1
		      : err != EINVAL	       ? 2
		      : cuda_calls() != before ? 3
		      : mrs[0] || mrs[1]       ? 4
					       : 0);
	}
	CHECK_INT(waitpid(child, &status, 0), child);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("  multi with GDR_REG_SYNC_MEMOPS: %s %d\n",
		       WIFEXITED(status) ? "exit" : "killed by signal",
		       WIFEXITED(status) ? WEXITSTATUS(status)
					 : WTERMSIG(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	check_scope = "import multi: the options that apply are taken";
	attr.comp_mask = GDR_REG_ATTR_FLAGS | GDR_REG_ATTR_ACCESS;
	attr.flags = GDR_REG_STRICT_ORDERING;
	attr.access = IBV_ACCESS_LOCAL_WRITE;
	CHECK_INT(gdr_import_register_multi(pds, 2, &d, fds, &attr, mrs, NULL,
					    0),
		  0);
	CHECK_INT(fake_ibv.last_access, IBV_ACCESS_LOCAL_WRITE);
	gdr_deregister_multi(mrs, 2);
	close_fds(fds, 1);
	done();
}

/*
 * The highest iova: the range may end at 2^64 - 1 (iova + length, the
 * MR's end, still an address), not at 2^64, which wraps to 0.
 */
static void import_iova_top(void)
{
	struct gdr_export_desc d;
	struct gdr_reg_info info;
	struct ibv_mr *mr;
	uint64_t top;
	int fds[2];

	node(0);
	export_one(4096, 0, &d, fds);

	check_scope = "import: the highest iova";
	top = UINT64_MAX - d.length;
	d.iova = top;
	mr = gdr_import_register(plain, &d, fds, NULL, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.last_iova, top);
	CHECK(mr && mr->addr == (void *)(uintptr_t)top);
	if (mr)
		gdr_deregister(mr);

	check_scope = "import: one above it";
	d.iova = top + 1;
	CHECK(gdr_import_register(plain, &d, fds, NULL, &info, sizeof(info)) ==
	      NULL);
	CHECK_INT(errno, EINVAL);
	SAID("wraps around");
	CHECK_INT(info.device, -1);

	check_scope = "bare fd: the highest iova";
	mr = gdr_register_dmabuf(plain, fds[0], 0, 4096, UINT64_MAX - 4096,
				 NULL, NULL, 0);
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.last_iova, UINT64_MAX - 4096);
	CHECK(mr && mr->addr == (void *)(uintptr_t)(UINT64_MAX - 4096));
	if (mr)
		gdr_deregister(mr);
	mr = gdr_register_dmabuf(plain, fds[0], 4095, 1, UINT64_MAX - 1, NULL,
				 NULL, 0);
	CHECK(mr != NULL);
	if (mr)
		gdr_deregister(mr);

	check_scope = "bare fd: one above it";
	CHECK(gdr_register_dmabuf(plain, fds[0], 0, 4096, UINT64_MAX - 4095,
				  NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	/* refused by the dma-buf call's own check, with its words */
	SAID("iova 0xfffffffffffff000 + len 4096 wraps around the end of the "
	     "address space");
	CHECK(gdr_register_dmabuf(plain, fds[0], 4095, 1, UINT64_MAX, NULL,
				  NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	close_fds(fds, 1);
	done();
}

int main(void)
{
	import_fields();
	import_flags_unmasked();
	import_pcie_first();
	import_refused_record();
	import_info_size();
	import_multi_attr();
	import_iova_top();
	return check_summary("share-import");
}
