/* SPDX-License-Identifier: MIT */
/* replace.h: a whole file or none, never through a link. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replace.h"

int replace_file(const char *file, const void *data, size_t len, char *err,
		 size_t n)
{
	const char *slash = strrchr(file, '/');
	char tmp[4096];
	size_t done = 0;
	int fd;

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
