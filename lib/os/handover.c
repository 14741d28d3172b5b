/* SPDX-License-Identifier: MIT */
/*
 * What handing memory to another process needs from the system besides
 * the dma-buf's own facts (dmabuf.c): the node's boot id, and one message
 * with fds over a unix socket (SCM_RIGHTS) each way.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "os.h"

/* A hex digit's value, -1 for anything else. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int gdr_parse_uuid(const char *text, uint8_t out[16])
{
	unsigned int i = 0;
	int hi, lo;

	while (*text && i < 16) {
		if (*text == '-') {
			text++;
			continue;
		}
		hi = hexval(text[0]);
		lo = hi < 0 ? -1 : hexval(text[1]);
		if (lo < 0)
			return EINVAL;
		out[i++] = (uint8_t)(hi << 4 | lo);
		text += 2;
	}
	return i == 16 && !*text ? 0 : EINVAL;
}

/* The boot id, read once per seam: it changes only with a reboot. Once
 * known it is read without the lock (an export asks each time). */
static pthread_mutex_t boot_lock = PTHREAD_MUTEX_INITIALIZER;
static bool boot_known; /* atomic: set after boot_bytes, under the lock */
static uint8_t boot_bytes[16];

void gdr_boot_id_forget(void)
{
	pthread_mutex_lock(&boot_lock);
	__atomic_store_n(&boot_known, false, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&boot_lock);
}

int gdr_boot_id(uint8_t id[16], char *why, size_t n)
{
	char text[64];
	int err = 0;

	if (__atomic_load_n(&boot_known, __ATOMIC_ACQUIRE)) {
		memcpy(id, boot_bytes, sizeof(boot_bytes));
		return 0;
	}
	/* A file read under the lock (no driver call): once per process. */
	pthread_mutex_lock(&boot_lock);
	if (!boot_known) {
		err = gdr_read_file(gdr_seam()->procfs_root,
				    "/sys/kernel/random/boot_id", text,
				    sizeof(text));
		if (!err && gdr_parse_uuid(text, boot_bytes))
			err = EPROTO;
		if (!err)
			__atomic_store_n(&boot_known, true, __ATOMIC_RELEASE);
	}
	if (!err)
		memcpy(id, boot_bytes, sizeof(boot_bytes));
	pthread_mutex_unlock(&boot_lock);
	if (err)
		gdr_fmt(why, n,
			"the node's boot id (%s/sys/kernel/random/boot_id) "
			"could not be read: %s",
			gdr_seam()->procfs_root, strerror(err));
	return err;
}

/*
 * This process's id without a system call each time: kept in a page the
 * kernel empties in a child (MADV_WIPEONFORK, Linux 4.14), so that a
 * child of fork(), _Fork() or a clone() without CLONE_VM asks again. A
 * child that shares the memory (vfork, clone with CLONE_VM but not
 * CLONE_THREAD) would share the page too: vfork children run no code of
 * ours before exec, and the pid is for messages only (gpudirect.h).
 * Where the kernel refuses the advice, getpid() every time. The page (one
 * a process, a few bytes used) is never given back.
 */
static pid_t *pid_page; /* atomic; MAP_FAILED: none to be had */

pid_t gdr_self_pid(void)
{
	pid_t *page = __atomic_load_n(&pid_page, __ATOMIC_ACQUIRE), pid;
	pid_t *mine, *expected = NULL;

	if (!page) {
		mine = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE),
			    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (mine != (pid_t *)MAP_FAILED &&
		    madvise(mine, (size_t)sysconf(_SC_PAGESIZE),
			    MADV_WIPEONFORK)) {
			munmap(mine, (size_t)sysconf(_SC_PAGESIZE));
			mine = (pid_t *)MAP_FAILED;
		}
		/* One page for the process: a thread that lost the race
		 * gives its own back. */
		if (!__atomic_compare_exchange_n(&pid_page, &expected, mine,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE) &&
		    mine != (pid_t *)MAP_FAILED)
			munmap(mine, (size_t)sysconf(_SC_PAGESIZE));
		page = __atomic_load_n(&pid_page, __ATOMIC_ACQUIRE);
	}
	if (page == (pid_t *)MAP_FAILED)
		return getpid();
	pid = __atomic_load_n(page, __ATOMIC_RELAXED);
	if (!pid) {
		pid = getpid();
		__atomic_store_n(page, pid, __ATOMIC_RELAXED);
	}
	return pid;
}

int gdr_fds_send(int sock, const void *buf, size_t len, const int *fds,
		 unsigned int nfds)
{
	union {
		struct cmsghdr align;
		char b[CMSG_SPACE(sizeof(int) * GDR_FDS_MAX)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t sent;

	if (nfds > GDR_FDS_MAX)
		return EINVAL;
	memset(&ctl, 0, sizeof(ctl));
	if (nfds) {
		msg.msg_control = ctl.b;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return errno ? errno : EIO;
	/* A stream socket may take part of it: the message is then broken
	 * for the reader, which says so. */
	return (size_t)sent == len ? 0 : EMSGSIZE;
}

/* Take the fds of every SCM_RIGHTS in @msg: the first @max into @fds,
 * the rest closed; their count in *@nfds, *@extra when some were closed. */
static void take_fds(struct msghdr *msg, int *fds, unsigned int max,
		     unsigned int *nfds, bool *extra)
{
	struct cmsghdr *c;
	size_t i, k;
	int fd;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (*nfds < max) {
				fds[(*nfds)++] = fd;
			} else {
				close(fd);
				*extra = true;
			}
		}
	}
}

/* Room for SCM_CREDENTIALS, SCM_PIDFD and SCM_SECURITY (a receiver with
 * SO_PASSCRED, SO_PASSPIDFD or SO_PASSSEC set gets them first) and for more
 * fds than a message may carry, so that extra ones arrive and are closed
 * rather than being dropped by the kernel unseen. */
#define CTL_ROOM 1024

/* One recvmsg into @buf + @len, EINTR retried: bytes, 0 at the end, or
 * -1 with errno; fds taken into @m. */
static ssize_t recv_one(int sock, void *buf, size_t len, int *fds,
			unsigned int max, struct gdr_fds_msg *m)
{
	union {
		struct cmsghdr align;
		char b[CTL_ROOM];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	msg.msg_control = ctl.b;
	msg.msg_controllen = sizeof(ctl.b);
	do
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	take_fds(&msg, fds, max, &m->nfds, &m->extra_fds);
	m->data_cut |= (msg.msg_flags & MSG_TRUNC) != 0;
	m->fds_cut |= (msg.msg_flags & MSG_CTRUNC) != 0;
	return r;
}

int gdr_fds_recv(int sock, void *buf, size_t len, int *fds, unsigned int max,
		 struct gdr_fds_msg *m)
{
	socklen_t tl = sizeof(int);
	int type = 0, i;
	size_t want;
	ssize_t r;

	memset(m, 0, sizeof(*m));
	if (max > GDR_FDS_MAX || !len)
		return EINVAL;
	/* Not a socket: recvmsg below says so (ENOTSOCK, EBADF). */
	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl))
		type = 0;
	m->stream = type == SOCK_STREAM;
	/* A stream has no message edges: read the message's bytes, no more
	 * (the next message stays), in as many pieces as it comes. */
	want = m->stream ? len - 1 : len;
	r = recv_one(sock, buf, want, fds, max, m);
	if (r < 0)
		goto fail;
	m->got = (size_t)r;
	while (m->stream && r > 0 && m->got < want) {
		r = recv_one(sock, (char *)buf + m->got, want - m->got, fds,
			     max, m);
		if (r < 0)
			goto fail;
		m->got += (size_t)r;
	}
	return 0;
fail:
	r = errno ? errno : EIO;
	/* Closed and forgotten: a number left behind would name whatever
	 * the process opens next. */
	for (i = 0; i < (int)m->nfds; i++) {
		close(fds[i]);
		fds[i] = -1;
	}
	m->nfds = 0;
	return (int)r;
}
