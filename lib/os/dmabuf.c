/* SPDX-License-Identifier: MIT */
/*
 * What a dma-buf fd is, in the kernel's own answers: the seam's
 * dmabuf_facts in production (tests model dma-bufs with memfds).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "os.h"

/* The dma-buf pseudo file system (include/uapi/linux/magic.h). */
#define DMA_BUF_MAGIC 0x444d4142

/* exp_name from /proc/self/fdinfo/@fd, "" when the kernel does not say. */
static void exporter_name(int fd, char *out, size_t n)
{
	char path[64], buf[1024], *p, *end;
	ssize_t got;
	int ffd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ffd = open(path, O_RDONLY | O_CLOEXEC);
	if (ffd < 0)
		return;
	got = read(ffd, buf, sizeof(buf) - 1);
	close(ffd);
	if (got <= 0)
		return;
	buf[got] = '\0';
	p = strstr(buf, "\nexp_name:");
	if (!p)
		return;
	p += strlen("\nexp_name:");
	p += strspn(p, " \t");
	end = p + strcspn(p, "\n");
	*end = '\0';
	gdr_copy(out, n, p);
}

int gdr_dmabuf_facts_real(int fd, struct gdr_dmabuf_facts *f, char *why,
			  size_t n)
{
	struct statfs fs;
	struct stat st;
	off_t end;

	memset(f, 0, sizeof(*f));
	if (fd < 0 || fstat(fd, &st)) {
		gdr_fmt(why, n, "fd %d is not open", fd);
		return EBADF;
	}
	if (fstatfs(fd, &fs)) {
		gdr_fmt(why, n, "fstatfs on fd %d failed: %s", fd,
			strerror(errno));
		return errno ? errno : EIO;
	}
	if ((unsigned long)fs.f_type != DMA_BUF_MAGIC) {
		gdr_fmt(why, n,
			"fd %d is not a dma-buf (its file system has magic "
			"0x%lx, not the dma-buf one)",
			fd, (unsigned long)fs.f_type);
		return GDR_ENOTDMABUF;
	}
	/* A dma-buf's size is its end: lseek(SEEK_END) is what it offers. */
	end = lseek(fd, 0, SEEK_END);
	if (end <= 0) {
		gdr_fmt(why, n, "lseek(SEEK_END) on dma-buf fd %d failed: %s",
			fd, end < 0 ? strerror(errno) : "size 0");
		return end < 0 && errno ? errno : EIO;
	}
	f->size = (uint64_t)end;
	f->ino = (uint64_t)st.st_ino;
	exporter_name(fd, f->exporter, sizeof(f->exporter));
	return 0;
}
