/* SPDX-License-Identifier: MIT */
/*
 * The unix sockets of the example programs (gdr-share's owner and
 * importer, gdr-write-bw --mem=import): a path is claimed only where
 * nothing is, or where a socket is left that nobody listens on any more,
 * and only what this process bound is ever removed.
 */
#ifndef GDR_COMMON_UNIXSOCK_H
#define GDR_COMMON_UNIXSOCK_H

#include <stddef.h>
#include <sys/types.h>

/* A socket this process bound at a path: its fd and the inode it made. */
struct unixsock {
	int fd;
	dev_t dev;
	ino_t ino;
	const char *path;
};

/*
 * Listen (SOCK_SEQPACKET) at @path: a new name, or a socket that refuses
 * connections (its owner is gone: killed, crashed), which is replaced.
 * Anything else there, a file, a link, a directory, a socket that answers
 * (a live owner's) or one of another type, is refused and left as it is.
 * 0, or -1 with the reason (which names the cause and what to do) in @err.
 */
int unixsock_listen(const char *path, struct unixsock *s, char *err, size_t n);

/* Close the socket and remove its path, only if the path is still the
 * socket this process bound (never what replaced it since). */
void unixsock_close(struct unixsock *s);

/* Connect (close-on-exec) to @path: SOCK_SEQPACKET, or SOCK_STREAM where
 * the listener is a stream socket (gdr_export_recv reads a descriptor
 * from either). The fd, or -1 with the reason in @err. */
int unixsock_connect(const char *path, char *err, size_t n);

#endif
