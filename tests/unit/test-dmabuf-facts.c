/* SPDX-License-Identifier: MIT */
/*
 * gdr_dmabuf_facts_real, the production check of a dma-buf fd, on a
 * machine without dma-bufs: this program's own fstatfs says the dma-buf
 * file system's magic for the memfds it marks, as the kernel does for a
 * real dma-buf (its pseudo file system, DMA_BUF_MAGIC), and its fstat
 * adds 2^32 to a marked fd's inode number on request. Everything else
 * (sizes, inode numbers, device numbers, other fds) is the kernel's.
 *
 * The kernel's answers for a real dma-buf (the inode's size is the
 * buffer's, its number unique, one device for all) are the vm suite's
 * (udmabuf, vgem) and the GPU suite's (CUDA's exports) to prove; this
 * pins the code's side: the size and inode as the kernel gave them, in
 * 64 bits; a 0-byte one refused (EIO); the file system asked again for
 * an fd on another device once the dma-buf one is known.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "check.h"
#include "os.h"

#define DMA_BUF_MAGIC 0x444d4142 /* include/uapi/linux/magic.h */

static int marked[8], nmarked;
static int ino_high = -1; /* the fd whose inode number gets 2^32 added */
static int statfs_calls;

static int is_marked(int fd)
{
	int i;

	for (i = 0; i < nmarked; i++)
		if (marked[i] == fd)
			return 1;
	return 0;
}

/* The fstatfs and fstat of this program (the library's static objects
 * are linked in: their calls land here), under both symbol names, since
 * the headers send the calls of a build with 64-bit file offsets to
 * fstat64 and fstatfs64 (the same structs on a 64-bit machine). */
static int fake_fstatfs(const char *name, int fd, struct statfs *fs)
{
	int (*r)(int, struct statfs *);

	*(void **)&r = dlsym(RTLD_NEXT, name);
	if (!r) {
		errno = ENOSYS;
		return -1;
	}
	statfs_calls++;
	if (r(fd, fs))
		return -1;
	if (is_marked(fd))
		fs->f_type = DMA_BUF_MAGIC;
	return 0;
}

static int fake_fstat(const char *name, int fd, struct stat *st)
{
	int (*r)(int, struct stat *);

	*(void **)&r = dlsym(RTLD_NEXT, name);
	if (!r) {
		errno = ENOSYS;
		return -1;
	}
	if (r(fd, st))
		return -1;
	if (fd == ino_high)
		st->st_ino += (ino_t)1 << 32;
	return 0;
}

_Static_assert(sizeof(struct stat) == sizeof(struct stat64) &&
		       sizeof(struct statfs) == sizeof(struct statfs64),
	       "a 64-bit machine: one layout for both names");

int t_fstatfs(int fd, struct statfs *fs) __asm__("fstatfs");
int t_fstatfs64(int fd, struct statfs *fs) __asm__("fstatfs64");
int t_fstat(int fd, struct stat *st) __asm__("fstat");
int t_fstat64(int fd, struct stat *st) __asm__("fstat64");

int t_fstatfs(int fd, struct statfs *fs)
{
	return fake_fstatfs("fstatfs", fd, fs);
}

int t_fstatfs64(int fd, struct statfs *fs)
{
	return fake_fstatfs("fstatfs64", fd, fs);
}

int t_fstat(int fd, struct stat *st)
{
	return fake_fstat("fstat", fd, st);
}

int t_fstat64(int fd, struct stat *st)
{
	return fake_fstat("fstat64", fd, st);
}

/* A memfd of @size bytes (sparse), marked a dma-buf. */
static int fake_dmabuf(off_t size)
{
	int fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_INT(ftruncate(fd, size), 0);
	marked[nmarked++] = fd;
	return fd;
}

static void facts_of(int fd, uint64_t size, uint64_t ino)
{
	struct gdr_dmabuf_facts f;
	char why[256];

	memset(&f, 0x5a, sizeof(f));
	CHECK_INT(gdr_dmabuf_facts_real(fd, &f, why, sizeof(why)), 0);
	CHECK(f.size == size);
	CHECK(f.ino == ino);
}

int main(void)
{
	struct gdr_dmabuf_facts f;
	struct stat st;
	char why[256], said[96];
	int a, b, big, empty, p[2], calls;

	check_scope = "a plain fd before any dma-buf";
	CHECK_INT(pipe(p), 0);
	CHECK_INT(gdr_dmabuf_facts_real(p[0], &f, why, sizeof(why)),
		  GDR_ENOTDMABUF);
	snprintf(said, sizeof(said), "fd %d is not a dma-buf", p[0]);
	CHECK_HAS(why, said);
	/* the refused fd's device is not remembered as the dma-buf one */
	CHECK_INT(gdr_dmabuf_facts_real(p[1], &f, why, sizeof(why)),
		  GDR_ENOTDMABUF);

	check_scope = "a dma-buf: its size and inode, as fstat gives them";
	a = fake_dmabuf(1 << 20);
	CHECK_INT(fstat(a, &st), 0);
	facts_of(a, 1 << 20, (uint64_t)st.st_ino);

	check_scope = "a second dma-buf: one fstat, the file system not asked";
	b = fake_dmabuf(3 << 20);
	CHECK_INT(fstat(b, &st), 0);
	calls = statfs_calls;
	facts_of(b, 3 << 20, (uint64_t)st.st_ino);
	CHECK_INT(statfs_calls, calls);

	check_scope = "a plain fd after: on another device, asked and refused";
	CHECK_INT(gdr_dmabuf_facts_real(p[1], &f, why, sizeof(why)),
		  GDR_ENOTDMABUF);
	CHECK_HAS(why, "is not a dma-buf (its file system has magic 0x");
	CHECK(f.size == 0 && f.ino == 0);
	CHECK_INT(statfs_calls, calls + 1);

	check_scope = "a dma-buf of 5 GiB: the size in 64 bits";
	big = fake_dmabuf((off_t)5 << 30);
	CHECK_INT(fstat(big, &st), 0);
	facts_of(big, (uint64_t)5 << 30, (uint64_t)st.st_ino);

	check_scope = "an inode number past 2^32: kept whole";
	ino_high = big;
	CHECK_INT(fstat(big, &st), 0);
	CHECK(st.st_ino > UINT32_MAX);
	facts_of(big, (uint64_t)5 << 30, (uint64_t)st.st_ino);
	ino_high = -1;

	check_scope = "a dma-buf that says 0 bytes: EIO, said";
	empty = fake_dmabuf(0);
	memset(&f, 0x5a, sizeof(f));
	CHECK_INT(gdr_dmabuf_facts_real(empty, &f, why, sizeof(why)), EIO);
	snprintf(said, sizeof(said), "dma-buf fd %d says it is 0 bytes", empty);
	CHECK_HAS(why, said);
	CHECK(f.size == 0 && f.ino == 0);

	check_scope = "a closed fd: EBADF, not open";
	close(p[0]);
	CHECK_INT(gdr_dmabuf_facts_real(p[0], &f, why, sizeof(why)), EBADF);
	CHECK_HAS(why, "is not open");
	CHECK_INT(gdr_dmabuf_facts_real(-1, &f, why, sizeof(why)), EBADF);

	close(p[1]);
	close(a);
	close(b);
	close(big);
	close(empty);
	return check_summary("dmabuf-facts");
}
