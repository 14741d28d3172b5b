/* SPDX-License-Identifier: MIT */
/* The names of registration paths, memory types and PCIe distances: the
 * only place they are spelt (the public gdr_path_str/_parse,
 * gdr_mem_type_str and gdr_distance_str, the backends, the report and
 * GPUDIRECT_PATH all use these). */
#include <string.h>

#include "base.h"

static const char *const path_names[] = {
	[GDR_PATH_NONE] = "none",
	[GDR_PATH_DMABUF] = "dmabuf",
	[GDR_PATH_PEERMEM] = "peermem",
	[GDR_PATH_HOST] = "host",
	[GDR_PATH_DATA_DIRECT] = "data-direct",
};
#define NUM_PATHS (sizeof(path_names) / sizeof(path_names[0]))

const char *gdr_path_name(enum gdr_path path)
{
	if ((unsigned)path >= NUM_PATHS)
		return "invalid";
	return path_names[path];
}

int gdr_path_lookup(const char *name, enum gdr_path *path)
{
	unsigned int i;

	if (strcmp(name, "auto") == 0) {
		*path = GDR_PATH_NONE;
		return 0;
	}
	for (i = GDR_PATH_NONE + 1; i < NUM_PATHS; i++) {
		if (strcmp(name, path_names[i]) == 0) {
			*path = (enum gdr_path)i;
			return 0;
		}
	}
	return -1;
}

const char *gdr_mem_type_name(enum gdr_mem_type type)
{
	switch (type) {
	case GDR_MEM_HOST: return "host";
	case GDR_MEM_CUDA_HOST: return "cuda-host";
	case GDR_MEM_CUDA_DEVICE: return "cuda-device";
	case GDR_MEM_CUDA_MANAGED: return "cuda-managed";
	case GDR_MEM_CUDA_POOL: return "cuda-pool";
	case GDR_MEM_DMABUF: return "dma-buf";
	case GDR_MEM_UNKNOWN: /* fall through */
	default: return "unknown";
	}
}

const char *gdr_distance_name(enum gdr_distance d)
{
	switch (d) {
	case GDR_DIST_PIX: return "PIX";
	case GDR_DIST_PXB: return "PXB";
	case GDR_DIST_PHB: return "PHB";
	case GDR_DIST_NODE: return "NODE";
	case GDR_DIST_SYS: return "SYS";
	case GDR_DIST_UNKNOWN: return "unknown";
	default: return "invalid";
	}
}
