/* SPDX-License-Identifier: MIT */
/*
 * What the tests of memory another process owns that pin each contract
 * from both sides share (test-share-edges.c, test-share-import.c): a node
 * with a plain NIC and one with a Data Direct function, socket pairs that
 * never hang, each public call's errno recorded for the errno contract.
 */
#ifndef GDR_TEST_SHARE_FIXTURE_H
#define GDR_TEST_SHARE_FIXTURE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"

#include "share-calls.h"

static struct fixture fx;
static struct fake_nic dd_nic, plain_nic;
/* The plain DMA-BUF NIC's PD. */
static struct ibv_pd *plain;

/* A fresh node: the fakes, the boot id; with @dd a plain NIC and one
 * with a Data Direct function, else the default NIC alone. */
static inline void node_setup(int dd)
{
	struct gdr_model_nic *m;

	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fixture_write(fx.proc, "sys/kernel/random/boot_id", BOOT_ID);
	plain = &fake_pd;
	if (dd) {
		fake_add_nic(&plain_nic, "fake_plain", 1);
		plain = &plain_nic.pd;
		m = fake_add_nic(&dd_nic, "fake_dd", 1);
		m->data_direct_errno = 0;
	}
}

static inline void node(int dd)
{
	node_setup(dd);
	fakes_install(&fx, NULL, NULL, NULL);
}

static inline void done(void)
{
	fixture_remove(&fx);
}

/* Socket pairs never hang a test: a receive or a send waits 5 s at most. */
static inline void pair(int type, int sv[2])
{
	struct timeval tv = { .tv_sec = 5 };
	int i;

	CHECK_INT(socketpair(AF_UNIX, type, 0, sv), 0);
	for (i = 0; i < 2; i++) {
		setsockopt(sv[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(sv[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
}

/* One message of @len bytes with @n fds, by hand. */
static inline int send_raw(int sock, const void *buf, size_t len,
			   const int *fds, unsigned int n)
{
	char ctl[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	memset(ctl, 0, sizeof(ctl));
	if (n) {
		m.msg_control = ctl;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	return sendmsg(sock, &m, 0) == (ssize_t)len ? 0 : -1;
}

static inline void close_fds(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

static inline uint64_t ino_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return 0;
	return (uint64_t)st.st_ino;
}

#endif
