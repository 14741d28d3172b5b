/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "unixsock.h"

/* @path as an address, or -1 with the reason: a path that does not fit
 * sun_path is refused (bind would take a cut one, connect another). */
static int addr_of(const char *path, struct sockaddr_un *a, char *err, size_t n)
{
	size_t len = strlen(path);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (!len || len >= sizeof(a->sun_path)) {
		snprintf(err, n,
			 "%s: a unix socket path takes 1 to %zu bytes, this "
			 "one has %zu: name a shorter path",
			 len ? path : "\"\"", sizeof(a->sun_path) - 1, len);
		return -1;
	}
	memcpy(a->sun_path, path, len);
	return 0;
}

/* What is at @path, for a message. */
static const char *kind_of(mode_t m)
{
	return S_ISLNK(m)    ? "a symbolic link"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISREG(m)  ? "a regular file"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
			     : "not a socket";
}

/*
 * Whether the socket at @a has a listener: 1 a live one (it accepted, its
 * backlog is full, or it is of another type), 0 none (ECONNREFUSED: its
 * owner is gone), -1 cannot tell (errno set).
 */
static int answers(const struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);
	int r, e;

	if (fd < 0)
		return -1;
	r = connect(fd, (const struct sockaddr *)a, sizeof(*a));
	e = errno;
	close(fd);
	if (!r || e == EAGAIN || e == EINPROGRESS || e == EPROTOTYPE)
		return 1;
	if (e == ECONNREFUSED)
		return 0;
	errno = e;
	return -1;
}

int unixsock_listen(const char *path, struct unixsock *s, char *err, size_t n)
{
	struct sockaddr_un a;
	struct stat st, was;
	int tries;

	s->fd = -1;
	s->path = path;
	if (addr_of(path, &a, err, n))
		return -1;
	s->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		snprintf(err, n, "socket(AF_UNIX): %s", strerror(errno));
		return -1;
	}
	/* Twice at most: once more after a stale socket was removed. */
	for (tries = 0; tries < 2; tries++) {
		if (!bind(s->fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		if (errno != EADDRINUSE) {
			snprintf(err, n, "cannot bind %s: %s", path,
				 strerror(errno));
			goto fail;
		}
		if (lstat(path, &was)) {
			if (errno == ENOENT)
				continue; /* gone meanwhile: bind again */
			snprintf(err, n, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (!S_ISSOCK(was.st_mode)) {
			snprintf(err, n,
				 "%s exists and is %s: nothing was changed "
				 "(name a new path)",
				 path, kind_of(was.st_mode));
			goto fail;
		}
		switch (answers(&a)) {
		case 1:
			snprintf(err, n,
				 "%s is a socket another process listens on "
				 "(another owner?): nothing was changed (stop "
				 "it, or name a new path)",
				 path);
			goto fail;
		case -1:
			snprintf(err, n,
				 "%s is a socket whose listener cannot be "
				 "told (%s): nothing was changed (name a new "
				 "path)",
				 path, strerror(errno));
			goto fail;
		}
		/* Nobody listens: an owner that was killed left it. Removed
		 * only if it is still the socket found refusing. */
		if (tries || lstat(path, &st) || st.st_dev != was.st_dev ||
		    st.st_ino != was.st_ino || unlink(path)) {
			snprintf(err, n,
				 "%s: a socket nobody listens on, which "
				 "could not be replaced (%s): remove it, or "
				 "name a new path",
				 path,
				 tries ? "it came back" : strerror(errno));
			goto fail;
		}
	}
	if (tries == 2) {
		snprintf(err, n, "cannot bind %s: %s", path,
			 strerror(EADDRINUSE));
		goto fail;
	}
	/* The inode made here: only this one is removed at the end. A
	 * path that cannot be looked at now is left where it is. */
	if (lstat(path, &st)) {
		snprintf(err, n, "%s: %s", path, strerror(errno));
		goto fail;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	if (listen(s->fd, 8)) {
		snprintf(err, n, "cannot listen on %s: %s", path,
			 strerror(errno));
		unixsock_close(s);
		return -1;
	}
	return 0;
fail:
	close(s->fd);
	s->fd = -1;
	return -1;
}

void unixsock_close(struct unixsock *s)
{
	struct stat st;

	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	if (!lstat(s->path, &st) && S_ISSOCK(st.st_mode) &&
	    st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
}

int unixsock_connect(const char *path, char *err, size_t n)
{
	struct sockaddr_un a;
	int fd, type = SOCK_SEQPACKET;

	if (addr_of(path, &a, err, n))
		return -1;
again:
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, n, "socket(AF_UNIX): %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;

		/* An owner listening on a stream socket (a Python owner's
		 * socket.socket(AF_UNIX)): the descriptor reads the same. */
		if (e == EPROTOTYPE && type == SOCK_SEQPACKET) {
			close(fd);
			type = SOCK_STREAM;
			goto again;
		}

		snprintf(err, n, "cannot connect to %s: %s%s", path,
			 strerror(e),
			 e == ECONNREFUSED ? " (nobody listens there: is the "
					     "owner running?)"
			 : e == ENOENT	   ? " (start the owner first)"
					   : "");
		close(fd);
		return -1;
	}
	return fd;
}
