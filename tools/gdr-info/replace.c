/* SPDX-License-Identifier: MIT */
/* replace.h: a whole file or none, only over a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replace.h"

/* What @mode is, for a message. */
static const char *kind_name(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISDIR(mode))
		return "a directory";
	return "not a regular file";
}

int replace_check(const char *file, int *exists, char *err, size_t n)
{
	struct stat st;

	*exists = 0;
	if (!file[0]) {
		snprintf(err, n, "an empty file name; name a file");
		return -1;
	}
	if (lstat(file, &st)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, n, "%s: %s", file, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, n,
			 "%s is %s: only a regular file or a new name is "
			 "written; nothing was changed (name a file)",
			 file, kind_name(st.st_mode));
		return -1;
	}
	*exists = 1;
	return 0;
}

int replace_file(const char *file, const void *data, size_t len, char *err,
		 size_t n)
{
	const char *slash = strrchr(file, '/');
	char tmp[4096];
	size_t done = 0;
	int fd, exists;

	/* Before anything is made beside it: a device, FIFO, socket,
	 * directory or link at @file is refused with nothing changed. */
	if (replace_check(file, &exists, err, n))
		return -1;
	/* A dot-file in the same directory: NFD skips it, rename is atomic. */
	if (slash)
		snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX",
			 (int)(slash - file), file, slash + 1);
	else
		snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", file);
	fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, n, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	while (done < len) {
		ssize_t w = write(fd, (const char *)data + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, n, "writing %s failed: %s", tmp,
				 w < 0 ? strerror(errno) : "short write");
			goto fail;
		}
		done += (size_t)w;
	}
	if (fchmod(fd, 0644) || fsync(fd)) {
		snprintf(err, n, "syncing %s failed: %s", tmp, strerror(errno));
		goto fail;
	}
	if (close(fd)) {
		fd = -1;
		snprintf(err, n, "closing %s failed: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	/* A new name stays new: what appeared there meanwhile is refused,
	 * not replaced. Over a regular file, the file checked again. */
	if (!exists) {
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, file,
			      RENAME_NOREPLACE) == 0)
			return 0;
		/* Something appeared at the new name: refused, whatever it
		 * is (what kind, if replace_check can tell). */
		if (errno == EEXIST) {
			if (!replace_check(file, &exists, err, n))
				snprintf(err, n,
					 "%s appeared while it was written: "
					 "nothing was replaced (name a new "
					 "file, or that one)",
					 file);
			goto fail;
		}
		/* EINVAL or ENOSYS: a file system without RENAME_NOREPLACE:
		 * checked and renamed as over a file that existed. */
		if (errno != EINVAL && errno != ENOSYS) {
			snprintf(err, n, "renaming %s to %s failed: %s", tmp,
				 file, strerror(errno));
			goto fail;
		}
	}
	if (replace_check(file, &exists, err, n))
		goto fail;
	if (rename(tmp, file)) {
		snprintf(err, n, "renaming %s to %s failed: %s", tmp, file,
			 strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
}
