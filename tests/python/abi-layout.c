/* SPDX-License-Identifier: MIT */
/*
 * The layouts the Python package mirrors (python/gpudirect/_lib.py), as the
 * compiler lays them out from include/gpudirect.h and infiniband/verbs.h:
 * tests/python/test_abi.py compares them with the package's ctypes
 * structs and constants, so that a change of the header fails a test.
 *
 * Each line: "size STRUCT N", "field STRUCT.FIELD OFFSET SIZE",
 * "const NAME VALUE". "prefix STRUCT" marks a struct of which the package
 * mirrors only the first fields (no size compared).
 */
#include <stdio.h>

#include <gpudirect.h>

#define SIZE(s) printf("size %s %zu\n", #s, sizeof(struct s))
#define FIELD(s, f)                                                            \
	printf("field %s.%s %zu %zu\n", #s, #f, offsetof(struct s, f),         \
	       sizeof(((struct s *)0)->f))
#define CONST(n) printf("const %s %lld\n", #n, (long long)(n))

int main(void)
{
	SIZE(gdr_reg_attr);
	FIELD(gdr_reg_attr, comp_mask);
	FIELD(gdr_reg_attr, access);
	FIELD(gdr_reg_attr, path_mask);
	FIELD(gdr_reg_attr, flags);
	SIZE(gdr_path_attempt);
	FIELD(gdr_path_attempt, path);
	FIELD(gdr_path_attempt, result);
	FIELD(gdr_path_attempt, err);
	FIELD(gdr_path_attempt, reason);
	SIZE(gdr_reg_info);
	FIELD(gdr_reg_info, comp_mask);
	FIELD(gdr_reg_info, path);
	FIELD(gdr_reg_info, mem_type);
	FIELD(gdr_reg_info, device);
	FIELD(gdr_reg_info, num_attempts);
	FIELD(gdr_reg_info, attempts);
	FIELD(gdr_reg_info, export_index);
	SIZE(gdr_rank_attr);
	FIELD(gdr_rank_attr, comp_mask);
	FIELD(gdr_rank_attr, cuda_device);
	FIELD(gdr_rank_attr, gpu_bus_id);
	FIELD(gdr_rank_attr, policy);
	FIELD(gdr_rank_attr, max);
	SIZE(gdr_nic_rank);
	FIELD(gdr_nic_rank, index);
	FIELD(gdr_nic_rank, distance);
	FIELD(gdr_nic_rank, acs_redirect);
	FIELD(gdr_nic_rank, same_numa);
	FIELD(gdr_nic_rank, data_direct);
	FIELD(gdr_nic_rank, nic_bus_id);
	SIZE(gdr_export_desc);
	FIELD(gdr_export_desc, version);
	FIELD(gdr_export_desc, num_fds);
	FIELD(gdr_export_desc, mapping);
	FIELD(gdr_export_desc, dmabuf_size);
	FIELD(gdr_export_desc, offset);
	FIELD(gdr_export_desc, length);
	FIELD(gdr_export_desc, iova);
	FIELD(gdr_export_desc, buffer_id);
	FIELD(gdr_export_desc, dmabuf_ino);
	FIELD(gdr_export_desc, mem_type);
	FIELD(gdr_export_desc, owner_pid);
	FIELD(gdr_export_desc, lib_version);
	FIELD(gdr_export_desc, gpu_bus_id);
	FIELD(gdr_export_desc, gpu_uuid);
	FIELD(gdr_export_desc, boot_id);
	SIZE(gdr_cache_attr);
	FIELD(gdr_cache_attr, comp_mask);
	FIELD(gdr_cache_attr, flags);
	FIELD(gdr_cache_attr, max_entries);
	FIELD(gdr_cache_attr, max_bytes);
	FIELD(gdr_cache_attr, max_reg_ratio);
	FIELD(gdr_cache_attr, reg);
	SIZE(gdr_cache_get_info);
	FIELD(gdr_cache_get_info, comp_mask);
	FIELD(gdr_cache_get_info, result);
	FIELD(gdr_cache_get_info, num_mappings);
	FIELD(gdr_cache_get_info, reason);
	SIZE(gdr_cache_stats);
	FIELD(gdr_cache_stats, hits);
	FIELD(gdr_cache_stats, misses);
	FIELD(gdr_cache_stats, stale);
	FIELD(gdr_cache_stats, evictions);
	FIELD(gdr_cache_stats, invalidations);
	FIELD(gdr_cache_stats, passthrough);
	FIELD(gdr_cache_stats, entries);
	FIELD(gdr_cache_stats, bytes);
	FIELD(gdr_cache_stats, in_use);
	FIELD(gdr_cache_stats, uncached);
	SIZE(gdr_report_item);
	FIELD(gdr_report_item, section);
	FIELD(gdr_report_item, key);
	FIELD(gdr_report_item, value);
	FIELD(gdr_report_item, verdict);
	FIELD(gdr_report_item, remedy);
	FIELD(gdr_report_item, scope);
	SIZE(ibv_mr);
	FIELD(ibv_mr, context);
	FIELD(ibv_mr, pd);
	FIELD(ibv_mr, addr);
	FIELD(ibv_mr, length);
	FIELD(ibv_mr, handle);
	FIELD(ibv_mr, lkey);
	FIELD(ibv_mr, rkey);
	printf("prefix ibv_pd\n");
	FIELD(ibv_pd, context);
	FIELD(ibv_pd, handle);
	printf("prefix ibv_context\n");
	FIELD(ibv_context, device);
	CONST(GDR_PATH_NONE);
	CONST(GDR_PATH_DMABUF);
	CONST(GDR_PATH_PEERMEM);
	CONST(GDR_PATH_HOST);
	CONST(GDR_PATH_DATA_DIRECT);
	CONST(GDR_MEM_UNKNOWN);
	CONST(GDR_MEM_HOST);
	CONST(GDR_MEM_CUDA_HOST);
	CONST(GDR_MEM_CUDA_DEVICE);
	CONST(GDR_MEM_CUDA_MANAGED);
	CONST(GDR_MEM_CUDA_POOL);
	CONST(GDR_MEM_DMABUF);
	CONST(GDR_REG_ATTR_ACCESS);
	CONST(GDR_REG_ATTR_PATH_MASK);
	CONST(GDR_REG_ATTR_FLAGS);
	CONST(GDR_REG_STRICT_ORDERING);
	CONST(GDR_REG_SYNC_MEMOPS);
	CONST(GDR_REG_PCIE_MAPPING);
	CONST(GDR_REG_OWNER_RDMA_CAPABLE);
	CONST(GDR_ATTEMPT_SKIPPED);
	CONST(GDR_ATTEMPT_FAILED);
	CONST(GDR_ATTEMPT_USED);
	CONST(GDR_REG_INFO_BASIC);
	CONST(GDR_REG_INFO_EXPORT);
	CONST(GDR_REASON_LEN);
	CONST(GDR_REG_INFO_MAX_ATTEMPTS);
	CONST(GDR_REG_MULTI_MAX);
	CONST(GDR_DIST_PIX);
	CONST(GDR_DIST_PXB);
	CONST(GDR_DIST_PHB);
	CONST(GDR_DIST_NODE);
	CONST(GDR_DIST_SYS);
	CONST(GDR_DIST_UNKNOWN);
	CONST(GDR_RANK_CLOSEST);
	CONST(GDR_RANK_BEST);
	CONST(GDR_RANK_BEST_N);
	CONST(GDR_RANK_ALL);
	CONST(GDR_RANK_ATTR_BUS_ID);
	CONST(GDR_EXPORT_MAX_FDS);
	CONST(GDR_EXPORT_DESC_VERSION);
	CONST(GDR_EXPORT_WIRE_LEN);
	CONST(GDR_EXPORT_PCIE_MAPPING);
	CONST(GDR_DMABUF_MAPPING_DEFAULT);
	CONST(GDR_DMABUF_MAPPING_PCIE);
	CONST(GDR_CACHE_ATTR_MAX_ENTRIES);
	CONST(GDR_CACHE_ATTR_MAX_BYTES);
	CONST(GDR_CACHE_ATTR_FLAGS);
	CONST(GDR_CACHE_ATTR_MAX_REG_RATIO);
	CONST(GDR_CACHE_ATTR_REG);
	CONST(GDR_CACHE_WHOLE_ALLOC);
	CONST(GDR_CACHE_HOST);
	CONST(GDR_CACHE_TRUSTED);
	CONST(GDR_CACHE_MAX_MAPPINGS);
	CONST(GDR_CACHE_RESULT_HIT);
	CONST(GDR_CACHE_RESULT_MISS);
	CONST(GDR_CACHE_RESULT_UNCACHED);
	CONST(GDR_CACHE_GET_INFO_BASIC);
	CONST(GDR_VERDICT_OK);
	CONST(GDR_VERDICT_MISSING);
	CONST(GDR_VERDICT_WRONG);
	CONST(GDR_VERDICT_UNKNOWN);
	CONST(GDR_VERDICT_INFO);
	CONST(GDR_REPORT_TEXT);
	CONST(GDR_REPORT_JSON);
	CONST(GDR_REPORT_SCOPE_UNKNOWN);
	CONST(GDR_REPORT_SCOPE_NODE);
	CONST(GDR_REPORT_SCOPE_GPU);
	CONST(GDR_REPORT_SCOPE_RDMA_DEVICE);
	CONST(GDR_REPORT_SCOPE_STORAGE);
	CONST(IBV_ACCESS_LOCAL_WRITE);
	CONST(IBV_ACCESS_REMOTE_WRITE);
	CONST(IBV_ACCESS_REMOTE_READ);
	CONST(IBV_ACCESS_REMOTE_ATOMIC);
	CONST(IBV_ACCESS_RELAXED_ORDERING);
	return 0;
}
