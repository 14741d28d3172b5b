/* SPDX-License-Identifier: MIT */
/*
 * A --storage path as this process sees it (the live mount the doctor
 * reads and writes through cuFile; never resolved under --host-root,
 * whose tree is the host's). As open.c does for the node's files, the
 * path is first resolved to an O_PATH descriptor, which opens nothing,
 * and only a regular file or a directory is then opened, the very inode
 * that was looked at: a FIFO, a device node or a socket there is
 * described and never opened (opening a tape rewinds it, a FIFO blocks).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "os.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U /* Linux 5.8 */
#endif

/* The mount id from /proc/self/fdinfo (Linux 3.15), where statx has
 * none: -1 when unknown. */
static long long fdinfo_mnt_id(int fd)
{
	char path[64], buf[512];
	long long id = -1;
	ssize_t r;
	int f;

	gdr_fmt(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	r = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (r > 0) {
		char *at;

		buf[r] = '\0';
		at = strstr(buf, "\nmnt_id:");
		if (at && sscanf(at + 8, "%lld", &id) != 1)
			id = -1;
	}
	return id;
}

int gdr_path_look(const char *path, struct gdr_path_facts *f)
{
	struct statx stx;
	struct stat st;
	char self[64];
	ssize_t r;
	int fd, err = 0;

	memset(f, 0, sizeof(*f));
	f->mnt_id = -1;
	f->fd = -1;
	if (strlen(path) >= sizeof(f->real))
		return ENAMETOOLONG;
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno ? errno : EIO;
	if (fstat(fd, &st)) {
		err = errno ? errno : EIO;
		close(fd);
		return err;
	}
	f->mode = st.st_mode;
	f->size = (unsigned long long)st.st_size;
	f->dev_major = major(st.st_dev);
	f->dev_minor = minor(st.st_dev);
	if (!statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) &&
	    (stx.stx_mask & STATX_MNT_ID))
		f->mnt_id = (long long)stx.stx_mnt_id;
	else
		f->mnt_id = fdinfo_mnt_id(fd);
	/* The path the kernel has for it, every link resolved. */
	gdr_fmt(self, sizeof(self), "/proc/self/fd/%d", fd);
	r = readlink(self, f->real, sizeof(f->real) - 1);
	if (r > 0) {
		f->real[r] = '\0';
	} else if (!realpath(path, f->real)) {
		gdr_fmt(f->real, sizeof(f->real), "%s", path);
	}
	f->fd = fd;
	return 0;
}

int gdr_path_reopen(const struct gdr_path_facts *f, int flags)
{
	char self[64];
	struct stat now;
	int fd, err;

	if (S_ISDIR(f->mode))
		return openat(f->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!S_ISREG(f->mode)) {
		errno = GDR_ENOTREG;
		return -1;
	}
	gdr_fmt(self, sizeof(self), "/proc/self/fd/%d", f->fd);
	fd = open(self, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	/* The inode looked at, still a regular file. */
	if (fstat(fd, &now) || !S_ISREG(now.st_mode)) {
		err = errno;
		close(fd);
		errno = err ? err : GDR_ENOTREG;
		return -1;
	}
	return fd;
}
