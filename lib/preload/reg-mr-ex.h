/* SPDX-License-Identifier: MIT */
/*
 * ibv_reg_mr_ex's argument as rdma-core 59 and later lay it out (older
 * headers have none: the preload and its tests build against any). A
 * field is read only where its comp_mask bit says the caller set it: the
 * struct grows at its tail (buf came after dmah).
 */
#ifndef GDR_PRELOAD_REG_MR_EX_H
#define GDR_PRELOAD_REG_MR_EX_H

#include <stddef.h>
#include <stdint.h>

struct mr_init_attr {
	size_t length;
	int access;
	uint64_t comp_mask; /* MR_MASK_* */
	uint64_t iova;
	void *addr;
	int fd;
	uint64_t fd_offset;
	void *dmah;
	void *buf;
};

/* enum ibv_mr_init_attr_mask */
#define MR_MASK_IOVA (1ULL << 0)
#define MR_MASK_ADDR (1ULL << 1)
#define MR_MASK_FD (1ULL << 2)
#define MR_MASK_FD_OFFSET (1ULL << 3)

#endif
