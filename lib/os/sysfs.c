/* SPDX-License-Identifier: MIT */
/* Reading sysfs/procfs files below a root, through the seam. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os.h"

static int join(char *out, size_t n, const char *root, const char *path)
{
	int r = snprintf(out, n, "%s%s", root, path);

	return r < 0 || (size_t)r >= n ? ENAMETOOLONG : 0;
}

int gdr_read_bin(const char *root, const char *path, void *buf, size_t n,
		 size_t *got)
{
	const struct gdr_seam *s = gdr_seam();
	char full[PATH_MAX];
	ssize_t r;
	int fd, err;

	*got = 0;
	err = join(full, sizeof(full), root, path);
	if (err)
		return err;
	fd = s->open_file(full);
	if (fd < 0)
		return errno ? errno : EIO;
	while (*got < n) {
		r = s->read_fd(fd, (char *)buf + *got, n - *got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			/* A failed read is an error, never the end of the file. */
			err = errno ? errno : EIO;
			break;
		}
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	close(fd);
	return err;
}

int gdr_read_file(const char *root, const char *path, char *buf, size_t n)
{
	size_t got;
	int err;

	if (!n)
		return EINVAL;
	buf[0] = '\0';
	err = gdr_read_bin(root, path, buf, n - 1, &got);
	if (err) {
		buf[0] = '\0';
		return err;
	}
	buf[got] = '\0';
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		buf[--got] = '\0';
	return 0;
}

bool gdr_file_exists(const char *root, const char *path)
{
	char full[PATH_MAX];
	int fd;

	if (join(full, sizeof(full), root, path))
		return false;
	fd = gdr_seam()->open_file(full);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int gdr_read_link(const char *root, const char *path, char *buf, size_t n)
{
	char full[PATH_MAX];
	ssize_t r;
	int err;

	if (!n)
		return EINVAL;
	err = join(full, sizeof(full), root, path);
	if (err)
		return err;
	r = gdr_seam()->read_link(full, buf, n - 1);
	if (r < 0)
		return errno ? errno : EIO;
	buf[r] = '\0';
	return 0;
}
