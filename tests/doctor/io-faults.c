/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD for gdr-info in the doctor tests: what a disk or a network
 * file system may do to reads and writes of regular files, on request.
 *
 *   GDR_IO_WRITE_MAX=N      each write(2) to a regular file writes at most
 *                           N bytes (short writes: the caller must go on;
 *                           past 10000 calls, EFBIG)
 *   GDR_IO_WRITE_ERRNO=E    each write(2) to a regular file fails with E
 *                           (neither touches a memfd: a replay's own files)
 *   GDR_IO_READ_EINTR=TAIL  the first read(2) of a regular file whose name
 *                           ends in TAIL fails with EINTR (a signal)
 *   GDR_IO_READ_EIO=TAIL    each read(2) of such a file fails with EIO
 *   GDR_IO_PLANT_FIFO=PATH  the first write(2) to a regular file first
 *                           makes a FIFO at PATH (something appearing at
 *                           a new output name while it is written)
 *   GDR_IO_PLANT_FILE=PATH  the same with a regular file ("planted\n")
 *   GDR_IO_SWAP_FIFO=PATH   the first write(2) to a regular file first
 *                           replaces what is at PATH (an output that was
 *                           checked as a regular file) with a FIFO
 *   GDR_IO_NO_OPENAT2=1     openat2(2) fails with ENOSYS, as on kernels
 *                           before 5.6 (the library then walks the host
 *                           tree itself)
 *   GDR_IO_OPENAT2_EAGAIN=N each of the first N openat2(2) calls fails
 *                           with EAGAIN (a rename elsewhere raced a "..")
 *   GDR_IO_RENAMEAT2_ERRNO=E renameat2(2) fails with E (EINVAL: a file
 *                           system without RENAME_NOREPLACE)
 *   GDR_IO_RENAME_ERRNO=E   rename(2) fails with E
 *   GDR_IO_NO_PROC_FD=1     opening /proc/self/fd/N fails with ENOENT, as
 *                           where /proc is not mounted
 *   GDR_IO_OPEN_HANG=TAIL   opening a path whose name ends in TAIL never
 *                           returns (a hard NFS mount whose server is gone)
 *   GDR_IO_NO_TMPFILE=1     openat(2) with O_TMPFILE fails with EOPNOTSUPP,
 *                           as on a file system without O_TMPFILE (vfat,
 *                           NFS before 4.2 servers, FUSE ones)
 *
 * Pipes, terminals and everything else pass through untouched.
 */
/* open() and open64() each defined here, neither renamed to the other. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int regular(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode);
}

/* The name of the file open at @fd into @name ("" if none). */
static void fd_name(int fd, char *name, size_t n)
{
	char link[64];
	ssize_t r;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	r = readlink(link, name, n - 1);
	name[r < 0 ? 0 : r] = '\0';
}

/* Does the file open at @fd have a name ending in @tail? */
static int named(int fd, const char *tail)
{
	char name[4096];
	size_t len, tl = strlen(tail);

	fd_name(fd, name, sizeof(name));
	len = strlen(name);
	return len >= tl && !strcmp(name + len - tl, tail);
}

static int memfd(int fd)
{
	char name[4096];

	fd_name(fd, name, sizeof(name));
	return !strncmp(name, "/memfd:", 7);
}

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	static int interrupted;
	const char *eintr = getenv("GDR_IO_READ_EINTR");
	const char *eio = getenv("GDR_IO_READ_EIO");

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "read");
	if (eio && regular(fd) && named(fd, eio)) {
		errno = EIO;
		return -1;
	}
	if (eintr && !interrupted && regular(fd) && named(fd, eintr)) {
		interrupted = 1;
		errno = EINTR;
		return -1;
	}
	return real(fd, buf, n);
}

/* With _FORTIFY_SOURCE (Ubuntu's compilers set it by default) a program's
 * read() calls are __read_chk(): the same fault applies. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		abort();
	return read(fd, buf, n);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	static long short_writes;
	const char *max = getenv("GDR_IO_WRITE_MAX");
	const char *err = getenv("GDR_IO_WRITE_ERRNO");

	static int planted;
	const char *plant = getenv("GDR_IO_PLANT_FIFO");
	const char *plant_file = getenv("GDR_IO_PLANT_FILE");
	const char *swap = getenv("GDR_IO_SWAP_FIFO");

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "write");
	if ((plant || plant_file || swap) && !planted && regular(fd) &&
	    !memfd(fd)) {
		planted = 1;
		if (swap) {
			unlink(swap);
			mkfifo(swap, 0600);
		} else if (plant) {
			mkfifo(plant, 0600);
		} else {
			FILE *f = fopen(plant_file, "wx");

			if (f) {
				fputs("planted\n", f);
				fclose(f);
			}
		}
	}
	if ((max || err) && regular(fd) && !memfd(fd)) {
		if (err) {
			errno = atoi(err);
			return -1;
		}
		/* A caller that never gets done stops here, not the disk. */
		if (++short_writes > 10000) {
			errno = EFBIG;
			return -1;
		}
		if (n > (size_t)atol(max))
			n = (size_t)atol(max);
	}
	return real(fd, buf, n);
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "syscall");
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
#ifdef SYS_openat2
	static long eagains;

	if (nr == SYS_openat2 && getenv("GDR_IO_NO_OPENAT2")) {
		errno = ENOSYS;
		return -1;
	}
	if (nr == SYS_openat2 && getenv("GDR_IO_OPENAT2_EAGAIN") &&
	    eagains < atol(getenv("GDR_IO_OPENAT2_EAGAIN"))) {
		eagains++;
		errno = EAGAIN;
		return -1;
	}
#endif
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* GDR_IO_OPEN_HANG: an open of @path that never returns. */
static void hang_on(const char *path)
{
	const char *tail = getenv("GDR_IO_OPEN_HANG");
	size_t n = tail ? strlen(tail) : 0, len = strlen(path);

	if (n && len >= n && !strcmp(path + len - n, tail))
		for (;;)
			pause();
}

static int no_proc_fd(const char *path)
{
	return getenv("GDR_IO_NO_PROC_FD") &&
	       !strncmp(path, "/proc/self/fd/", 14);
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;
	va_list ap;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "open");
	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	hang_on(path);
	if (no_proc_fd(path)) {
		errno = ENOENT;
		return -1;
	}
	return real(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "open64");
	hang_on(path);
	if (no_proc_fd(path)) {
		errno = ENOENT;
		return -1;
	}
	return real(path, flags, mode);
}

static int openat_any(const char *name, int dir, const char *path, int flags,
		      va_list ap)
{
	int (*real)(int, const char *, int, ...);
	mode_t mode = 0;

	*(void **)&real = dlsym(RTLD_NEXT, name);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	if ((flags & O_TMPFILE) == O_TMPFILE && getenv("GDR_IO_NO_TMPFILE")) {
		errno = EOPNOTSUPP;
		return -1;
	}
	hang_on(path);
	if (no_proc_fd(path)) {
		errno = ENOENT;
		return -1;
	}
	return real(dir, path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = openat_any("openat", dir, path, flags, ap);
	va_end(ap);
	return fd;
}

int openat64(int dir, const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = openat_any("openat64", dir, path, flags, ap);
	va_end(ap);
	return fd;
}

int renameat2(int olddir, const char *oldpath, int newdir, const char *newpath,
	      unsigned int flags)
{
	static int (*real)(int, const char *, int, const char *, unsigned int);
	const char *e = getenv("GDR_IO_RENAMEAT2_ERRNO");

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "renameat2");
	if (e) {
		errno = atoi(e);
		return -1;
	}
	return real(olddir, oldpath, newdir, newpath, flags);
}

int rename(const char *oldpath, const char *newpath)
{
	static int (*real)(const char *, const char *);
	const char *e = getenv("GDR_IO_RENAME_ERRNO");

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "rename");
	if (e) {
		errno = atoi(e);
		return -1;
	}
	return real(oldpath, newpath);
}
