/* SPDX-License-Identifier: MIT */
/*
 * The C peer of the guest's Python test (tests/vm/test-python.py), loaded
 * with ctypes: an RDMA write between two RC QPs on the PD the Python
 * package opened, from and to the addresses and with the keys Python
 * passes (an lkey and an rkey of MRs the package registered); nothing of
 * the MRs but those numbers reaches this side.
 */
#include <stdint.h>
#include <string.h>

#include "loopback.h"

int gdrpy_rdma_write(struct ibv_pd *pd, uint64_t src, uint32_t lkey,
		     uint64_t dst, uint32_t rkey, size_t len, char *err,
		     size_t n);

int gdrpy_rdma_write(struct ibv_pd *pd, uint64_t src, uint32_t lkey,
		     uint64_t dst, uint32_t rkey, size_t len, char *err,
		     size_t n)
{
	struct ibv_mr s, d;

	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	s.addr = (void *)(uintptr_t)src;
	s.lkey = lkey;
	d.addr = (void *)(uintptr_t)dst;
	d.rkey = rkey;
	return loopback_write(pd, &s, &d, len, err, n);
}
