/* SPDX-License-Identifier: MIT */
/*
 * What a dma-buf fd is, in the kernel's own answers: the seam's
 * dmabuf_facts in production (tests model dma-bufs with memfds).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "os.h"

/* The dma-buf pseudo file system (include/uapi/linux/magic.h). */
#define DMA_BUF_MAGIC 0x444d4142

/* The device number of the dma-buf file system, once one fd proved it
 * (0: not yet): then one fstat(2) tells a dma-buf and all its facts. */
static dev_t dmabuf_dev;

int gdr_dmabuf_facts_real(int fd, struct gdr_dmabuf_facts *f, char *why,
			  size_t n)
{
	dev_t known = __atomic_load_n(&dmabuf_dev, __ATOMIC_RELAXED);
	struct statfs fs;
	struct stat st;

	memset(f, 0, sizeof(*f));
	if (fd < 0 || fstat(fd, &st)) {
		gdr_fmt(why, n, "fd %d is not open", fd);
		return EBADF;
	}
	if (!known || st.st_dev != known) {
		if (fstatfs(fd, &fs)) {
			gdr_fmt(why, n, "fstatfs on fd %d failed: %s", fd,
				strerror(errno));
			return errno ? errno : EIO;
		}
		if ((unsigned long)fs.f_type != DMA_BUF_MAGIC) {
			gdr_fmt(why, n,
				"fd %d is not a dma-buf (its file system has "
				"magic 0x%lx, not the dma-buf one)",
				fd, (unsigned long)fs.f_type);
			return GDR_ENOTDMABUF;
		}
		__atomic_store_n(&dmabuf_dev, st.st_dev, __ATOMIC_RELAXED);
	}
	/* The kernel sets a dma-buf inode's size to the buffer's (every
	 * kernel with DMA-BUF memory regions, 5.12 on). */
	if (st.st_size <= 0) {
		gdr_fmt(why, n, "dma-buf fd %d says it is %lld bytes", fd,
			(long long)st.st_size);
		return EIO;
	}
	f->size = (uint64_t)st.st_size;
	f->ino = (uint64_t)st.st_ino;
	return 0;
}
