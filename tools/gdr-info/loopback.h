/* SPDX-License-Identifier: MIT */
/* One RDMA write between two RC QPs of the same device, for self-tests. */
#ifndef GDR_EXAMPLES_LOOPBACK_H
#define GDR_EXAMPLES_LOOPBACK_H

#include <infiniband/verbs.h>

/*
 * Write @len bytes from @src's memory to @dst's through two RC QPs on
 * @pd's device connected to each other (port 1; LID on InfiniBand, the
 * IPv4-mapped or first GID on RoCE). Returns 0 when the write completed,
 * -1 with the reason in @err.
 */
int loopback_write(struct ibv_pd *pd, struct ibv_mr *src, struct ibv_mr *dst,
		   size_t len, char *err, size_t n);

#endif
