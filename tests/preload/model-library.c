/* SPDX-License-Identifier: MIT */
/*
 * The library the preload calls, as a model: libgpudirect-preload-model.so
 * is lib/preload/preload.c (its symbol versions, its version script)
 * linked with this file in place of libgpudirect.so.1, so that a program
 * enters the preload's own ibv_reg_mr, ibv_reg_mr_iova, ibv_reg_mr_iova2,
 * ibv_reg_mr_ex, ibv_rereg_mr and ibv_dereg_mr with device memory where
 * there is no GPU. Over the stand-in libibverbs:
 *   - device memory is memory no process can read (PROT_NONE: the
 *     stand-in's ibv_reg_mr refuses it with EFAULT, as a kernel without
 *     nvidia-peermem refuses GPU memory); anything else is not the
 *     library's (ENXIO, nothing said);
 *   - device memory is registered as the library's DMA-BUF path does: an
 *     ibv_reg_dmabuf_mr of a file (a memfd standing in for the dma-buf) at
 *     the buffer's page offset, with exactly the caller's iova and access,
 *     the MR's addr then the caller's address, the fd closed;
 *   - $MODEL_REFUSE=ERRNO:REASON[|REASON...] refuses device memory with
 *     that errno, the reasons in turn, one a call;
 *   - every call is logged to $STANDIN_LOG ("library ADDR LEN iova=..
 *     access=..: device|not device|refused"): one line a question asked.
 * GPUDIRECT_DEBUG=1 says every decision; GPUDIRECT_PRELOAD=0 turns the
 * preload off (the model reads no other value: the real rule is the
 * library's, pinned by the real preload's tests).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "gpudirect-private.h"

static unsigned int asked;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	const char *path = getenv("STANDIN_LOG");
	va_list ap;
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static int readable(void *addr)
{
	char b;
	struct iovec local = { &b, 1 }, remote = { addr, 1 };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
}

/* The @k-th reason of $MODEL_REFUSE (in turn) into @why; its errno or 0. */
static int refusal(unsigned int k, char *why, size_t n)
{
	const char *spec = getenv("MODEL_REFUSE"), *r, *end;
	unsigned int count = 1, i;
	int err;

	if (!spec || !*spec)
		return 0;
	err = atoi(spec);
	r = strchr(spec, ':');
	r = r ? r + 1 : "";
	for (end = r; (end = strchr(end, '|')); end++)
		count++;
	for (i = 0; i < k % count; i++)
		r = strchr(r, '|') + 1;
	end = strchr(r, '|');
	snprintf(why, n, "%.*s", (int)(end ? (size_t)(end - r) : strlen(r)), r);
	return err;
}

int gdr_private_reg_device(struct ibv_pd *pd, void *addr, size_t len,
			   uint64_t iova, int access, struct ibv_mr **mr,
			   char *why, size_t n)
{
	size_t off = (uintptr_t)addr & 4095;
	int err, fd;

	*mr = NULL;
	if (n)
		why[0] = '\0';
	if (!pd || !addr || !len || readable(addr)) {
		logf_("library %p %zu iova=0x%llx access=0x%x: not device\n",
		      addr, len, (unsigned long long)iova, access);
		return ENXIO;
	}
	err = refusal(asked++, why, n);
	if (err) {
		logf_("library %p %zu iova=0x%llx access=0x%x: refused\n", addr,
		      len, (unsigned long long)iova, access);
		return err;
	}
	logf_("library %p %zu iova=0x%llx access=0x%x: device\n", addr, len,
	      (unsigned long long)iova, access);
	fd = memfd_create("model-dmabuf", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)(off + len))) {
		err = errno;
		snprintf(why, n, "the model's dma-buf: %s", strerror(err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	*mr = ibv_reg_dmabuf_mr(pd, off, len, iova, fd, access);
	err = *mr ? 0 : errno;
	close(fd);
	if (err) {
		snprintf(why, n, "the NIC refused the model's dma-buf: %s",
			 strerror(err));
		return err;
	}
	(*mr)->addr = addr; /* libibverbs puts the offset there */
	return 0;
}

void gdr_private_preload_env(int *off, int *debug)
{
	const char *v = getenv("GPUDIRECT_PRELOAD");

	*off = v && !strcmp(v, "0");
	v = getenv("GPUDIRECT_DEBUG");
	*debug = v && !strcmp(v, "1");
}
