/* SPDX-License-Identifier: MIT */
/*
 * Memory another process owns, pinned from both sides: for each field of
 * the descriptor, each way the socket exchange can go and each choice of
 * the export, the valid edge is accepted and the invalid one refused, and
 * every field of an export's descriptor is checked. (The import is
 * test-share-import.c; test-share.c covers the exchange as a whole,
 * test-share-attack.c a hostile sender.)
 *
 * This program defines sendmsg(2) over the system call, so that one
 * stream send can be made to take part of the message, as a stream
 * socket may: the library's objects are linked in and call this one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "share-fixture.h"

/* --- sendmsg(2), through the system call ---------------------------------- */
/* When set, the next sendmsg of one longer iovec sends this many bytes
 * (with all its fds) and says so, as a stream socket may. */
static size_t short_send;
static int sendmsg_calls;

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct msghdr cut;
	struct iovec iov;

	sendmsg_calls++;
	if (short_send && msg->msg_iovlen == 1 &&
	    msg->msg_iov[0].iov_len > short_send) {
		cut = *msg;
		iov = msg->msg_iov[0];
		iov.iov_len = short_send;
		cut.msg_iov = &iov;
		short_send = 0;
		return syscall(SYS_sendmsg, fd, &cut, flags);
	}
	return syscall(SYS_sendmsg, fd, msg, flags);
}

/* --- the descriptor: what is accepted and what is not --------------------- */
/* A descriptor gdr_export() could make, with @nfds dma-bufs. */
static void sample(struct gdr_export_desc *d, unsigned int nfds)
{
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->version = GDR_EXPORT_DESC_VERSION;
	d->num_fds = nfds;
	d->mapping[0] = GDR_DMABUF_MAPPING_DEFAULT;
	d->dmabuf_ino[0] = 1001;
	if (nfds == 2) {
		d->mapping[1] = GDR_DMABUF_MAPPING_PCIE;
		d->dmabuf_ino[1] = 1002;
	}
	d->dmabuf_size = 2 << 20;
	d->offset = 0x345;
	d->length = 100000;
	d->iova = 0x7f0012345345ull;
	d->buffer_id = 907;
	d->mem_type = GDR_MEM_CUDA_DEVICE;
	d->owner_pid = 4242;
	d->lib_version = 0x000401;
	strcpy(d->gpu_bus_id, "0000:9a:00.1");
	for (i = 0; i < 16; i++)
		d->gpu_uuid[i] = (uint8_t)(0x40 + i);
	CHECK_INT(gdr_parse_uuid("1b4e28ba-2fa1-11d2-883f-0016d3cca427",
				 d->boot_id),
		  0);
}

/* @d packs, unpacks, and comes back byte for byte. */
static void accepted(const struct gdr_export_desc *d)
{
	uint8_t w[GDR_EXPORT_WIRE_LEN];
	struct gdr_export_desc back;

	CHECK_INT(gdr_export_pack(d, w, sizeof(w)), 0);
	memset(&back, 0x5a, sizeof(back));
	CHECK_INT(gdr_export_unpack(w, sizeof(w), &back), 0);
	CHECK(!memcmp(d, &back, sizeof(back)));
}

/* @d is refused by pack (EINVAL) and, written by hand as @edit does to a
 * good descriptor's bytes, by unpack (EPROTO); both name @what. */
static void refused(const struct gdr_export_desc *d,
		    void (*edit)(uint8_t *w, const struct gdr_export_desc *d),
		    const char *what)
{
	struct gdr_export_desc good, out;
	uint8_t w[GDR_EXPORT_WIRE_LEN], keep[GDR_EXPORT_WIRE_LEN];

	memset(w, 0xee, sizeof(w));
	memcpy(keep, w, sizeof(w));
	CHECK_INT(gdr_export_pack(d, w, sizeof(w)), -1);
	CHECK_INT(errno, EINVAL);
	SAID(what);
	CHECK(!memcmp(w, keep, sizeof(w))); /* nothing written */
	sample(&good, d->num_fds);
	CHECK_INT(gdr_export_pack(&good, w, sizeof(w)), 0);
	edit(w, d);
	memset(&out, 0x5a, sizeof(out));
	CHECK_INT(gdr_export_unpack(w, sizeof(w), &out), -1);
	CHECK_INT(errno, EPROTO);
	SAID(what);
	CHECK_INT(out.version, 0);
}

static void put_bus(uint8_t *w, const struct gdr_export_desc *d)
{
	memcpy(w + 96, d->gpu_bus_id, 16);
}

static void put_tail(uint8_t *w, const struct gdr_export_desc *d)
{
	int i;

	for (i = 0; i < 4; i++)
		w[16 + 4 + i] = (uint8_t)(d->mapping[1] >> (8 * i));
	for (i = 0; i < 8; i++)
		w[72 + i] = (uint8_t)(d->dmabuf_ino[1] >> (8 * i));
}

static void put_type(uint8_t *w, const struct gdr_export_desc *d)
{
	int i;

	for (i = 0; i < 4; i++)
		w[80 + i] = (uint8_t)(d->mem_type >> (8 * i));
}

/* The bus id: CUDA's upper-case hex is one; 12 characters and a NUL. */
static void desc_bus_id(void)
{
	static const char *const good[] = {
		"0000:9A:00.1", /* cuDeviceGetPCIBusId's own form */
		"ABCD:EF:1F.7",
		"abcd:ef:1f.7",
		"0000:9a:00.1",
	};
	static const char *const bad_ids[] = {
		"0000:9a:00.10", /* a character past a BDF */
		"0000:9a:00.1x", "0000:9a:00.",	 "0000:9G:00.1",
		"0000:9g:00.1",	 "0000:9a:00:1", "0000-9a:00.1",
	};
	struct gdr_export_desc d;
	unsigned int i;

	node(0);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		check_scope = "descriptor: a bus id in either case is accepted";
		sample(&d, 1);
		strcpy(d.gpu_bus_id, good[i]);
		accepted(&d);
	}
	for (i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		check_scope = "descriptor: a bus id not of the BDF's shape";
		sample(&d, 1);
		strcpy(d.gpu_bus_id, bad_ids[i]);
		refused(&d, put_bus, "gpu_bus_id is not a PCI address");
	}
	check_scope = "descriptor: a bus id of 16 bytes and no NUL";
	sample(&d, 1);
	memcpy(d.gpu_bus_id, "0000:9a:00.10000", 16);
	refused(&d, put_bus, "gpu_bus_id is not a PCI address");
	done();
}

/* Past num_fds, mapping[] and dmabuf_ino[] are 0. */
static void desc_past_num_fds(void)
{
	struct gdr_export_desc d;

	node(0);
	check_scope = "descriptor: one fd, the second entries 0";
	sample(&d, 1);
	accepted(&d);

	check_scope = "descriptor: one fd, a mapping set past it";
	d.mapping[1] = GDR_DMABUF_MAPPING_PCIE;
	refused(&d, put_tail,
		"mapping[1] or dmabuf_ino[1] is set past "
		"num_fds 1");

	check_scope = "descriptor: one fd, an inode set past it";
	d.mapping[1] = 0;
	d.dmabuf_ino[1] = 1002;
	refused(&d, put_tail,
		"mapping[1] or dmabuf_ino[1] is set past "
		"num_fds 1");

	check_scope = "descriptor: two fds";
	sample(&d, 2);
	accepted(&d);
	done();
}

/* An export carries device memory: cuMemAlloc/VMM or pool. */
static void desc_mem_type(void)
{
	static const uint32_t bad_types[] = {
		GDR_MEM_UNKNOWN,
		GDR_MEM_HOST,
		GDR_MEM_CUDA_HOST,
		GDR_MEM_CUDA_MANAGED,
		GDR_MEM_DMABUF,
		7,
		0x103,
		0xffffffffu,
	};
	struct gdr_export_desc d;
	unsigned int i;

	node(0);
	check_scope = "descriptor: device and pool memory";
	sample(&d, 2);
	d.mem_type = GDR_MEM_CUDA_DEVICE;
	accepted(&d);
	d.mem_type = GDR_MEM_CUDA_POOL;
	accepted(&d);
	for (i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		check_scope = "descriptor: memory an export cannot carry";
		sample(&d, 2);
		d.mem_type = bad_types[i];
		refused(&d, put_type, "is not device memory");
	}
	done();
}

/* --- the socket ----------------------------------------------------------- */
/*
 * A stream whose first piece carries the fds, then the peer goes with
 * data of ours unread (the kernel then resets the stream): the receive
 * fails with the socket's ECONNRESET, and the fds of the piece are
 * closed and not handed out.
 */
static void recv_piece_then_reset(void)
{
	struct gdr_export_desc d, got;
	uint8_t w[GDR_EXPORT_WIRE_LEN];
	int fds[2], rfds[2], sv[2], before;
	char *p;

	check_scope = "recv: a stream reset after a piece with fds";
	node(0);
	p = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p, 4096, GDR_EXPORT_PCIE_MAPPING, &d, fds), 0);
	CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), 0);
	pair(SOCK_STREAM, sv);
	CHECK_INT(write(sv[1], "?", 1), 1); /* never read by sv[0] */
	CHECK_INT(send_raw(sv[0], w, 100, fds, 2), 0);
	close(sv[0]);
	before = count_fds();
	memset(&got, 0x5a, sizeof(got));
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), -1);
	CHECK_INT(errno, ECONNRESET);
	SAID("recvmsg on socket");
	CHECK_INT(count_fds(), before);
	CHECK_INT(rfds[0], -1);
	CHECK_INT(rfds[1], -1);
	CHECK_INT(got.version, 0);
	close_fds(rfds, 2);
	close(sv[1]);
	close_fds(fds, 2);
	done();
}

/* A stream that takes part of the message: an error, never "sent". */
static void send_partial(void)
{
	struct gdr_export_desc d, got;
	int fds[2], rfds[2], sv[2], calls, before;
	char *p;

	check_scope = "send: a stream takes 100 of the 160 bytes";
	node(0);
	p = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), 0);
	pair(SOCK_STREAM, sv);
	calls = sendmsg_calls;
	short_send = 100;
	CHECK_INT(gdr_export_send(sv[0], &d, fds), -1);
	CHECK_INT(errno, EMSGSIZE);
	SAID("only part of the descriptor went");
	CHECK_INT(short_send, 0);	     /* the library's call took it */
	CHECK_INT(sendmsg_calls, calls + 1); /* and was not repeated */

	check_scope = "send: what went is refused by the reader";
	close(sv[0]);
	before = count_fds();
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), -1);
	CHECK_INT(errno, EPROTO);
	CHECK_INT(count_fds(), before);
	close_fds(rfds, 2);

	check_scope = "send: the whole message is success";
	close(sv[1]);
	pair(SOCK_STREAM, sv);
	CHECK_INT(gdr_export_send(sv[0], &d, fds), 0);
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), 0);
	CHECK(!memcmp(&d, &got, sizeof(d)));
	close_fds(rfds, 2);
	close(sv[0]);
	close(sv[1]);
	close_fds(fds, 1);
	done();
}

/*
 * A signal while the call sleeps in recvmsg or sendmsg, its handler
 * installed without SA_RESTART: the kernel answers EINTR, and the library
 * asks again. A helper thread sends the signal once /proc says the main
 * thread sleeps in that system call, waits until the handler ran (the
 * call was interrupted), and only then gives what the call waits for.
 */
static pid_t main_tid;
static pthread_t main_thread;
/* Set by the handler, read by the helper: a lock-free atomic, which a
 * handler may write. */
static int handled;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&handled, 1, __ATOMIC_SEQ_CST);
}

/* Whether thread @tid sleeps in system call @nr, within 5 s. */
static int sleeps_in(pid_t tid, long nr)
{
	char path[64], buf[128];
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (i = 0; i < 50000; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = '\0';
			if (strtol(buf, NULL, 10) == nr)
				return 1;
		}
		usleep(100);
	}
	return 0;
}

struct helper {
	long nr;	  /* the system call to interrupt */
	int sock;	  /* recv: send the message here; send: drain it */
	size_t drain;	  /* send: the bytes that fill the stream */
	const uint8_t *w; /* recv: the message */
	const int *fds;
	unsigned int nfds;
	int slept, was_handled;
};

static void *helper(void *arg)
{
	struct helper *h = arg;
	char buf[4096];
	size_t got = 0;
	ssize_t n;
	int i;

	h->slept = sleeps_in(main_tid, h->nr);
	pthread_kill(main_thread, SIGUSR1);
	for (i = 0; i < 50000 && !__atomic_load_n(&handled, __ATOMIC_SEQ_CST);
	     i++)
		usleep(100);
	h->was_handled = __atomic_load_n(&handled, __ATOMIC_SEQ_CST);
	if (!h->drain) {
		send_raw(h->sock, h->w, GDR_EXPORT_WIRE_LEN, h->fds, h->nfds);
		return NULL;
	}
	while (got < h->drain) {
		n = read(h->sock, buf,
			 h->drain - got < sizeof(buf) ? h->drain - got
						      : sizeof(buf));
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return NULL;
}

static void eintr(void)
{
	struct sigaction sa, old;
	struct gdr_export_desc d, got;
	uint8_t w[GDR_EXPORT_WIRE_LEN], fill[4096];
	struct helper h;
	pthread_t t;
	int fds[2], rfds[2], sv[2], rc, err, small = 4096;
	ssize_t n;
	char *p;

	node(0);
	p = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p, 4096, GDR_EXPORT_PCIE_MAPPING, &d, fds), 0);
	CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), 0);
	main_tid = (pid_t)syscall(SYS_gettid);
	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = 0; /* no SA_RESTART: the kernel says EINTR */
	sigemptyset(&sa.sa_mask);
	CHECK_INT(sigaction(SIGUSR1, &sa, &old), 0);

	check_scope = "recv: a signal while it waits (EINTR) is waited out";
	pair(SOCK_SEQPACKET, sv);
	memset(&h, 0, sizeof(h));
	h.nr = SYS_recvmsg;
	h.sock = sv[0];
	h.w = w;
	h.fds = fds;
	h.nfds = 2;
	__atomic_store_n(&handled, 0, __ATOMIC_SEQ_CST);
	CHECK_INT(pthread_create(&t, NULL, helper, &h), 0);
	rc = gdr_export_recv(sv[1], &got, rfds);
	err = errno;
	pthread_join(t, NULL);
	CHECK_INT(h.slept, 1);
	CHECK_INT(h.was_handled, 1);
	CHECK_INT(rc, 0);
	if (rc)
		printf("  recv after a signal: %s (%s)\n", strerror(err),
		       gdr_last_error());
	CHECK(!memcmp(&d, &got, sizeof(d)));
	close_fds(rfds, 2);
	close(sv[0]);
	close(sv[1]);

	check_scope = "send: a signal while the stream is full (EINTR) is "
		      "waited out";
	pair(SOCK_STREAM, sv);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	memset(fill, 'f', sizeof(fill));
	memset(&h, 0, sizeof(h));
	while ((n = send(sv[0], fill, sizeof(fill), MSG_DONTWAIT)) > 0)
		h.drain += (size_t)n;
	CHECK_INT(errno, EAGAIN);
	CHECK(h.drain > 0);
	h.nr = SYS_sendmsg;
	h.sock = sv[1];
	__atomic_store_n(&handled, 0, __ATOMIC_SEQ_CST);
	CHECK_INT(pthread_create(&t, NULL, helper, &h), 0);
	rc = gdr_export_send(sv[0], &d, fds);
	err = errno;
	pthread_join(t, NULL);
	CHECK_INT(h.slept, 1);
	CHECK_INT(h.was_handled, 1);
	CHECK_INT(rc, 0);
	if (rc)
		printf("  send after a signal: %s (%s)\n", strerror(err),
		       gdr_last_error());
	/* What arrives after the filler is the descriptor, whole. */
	if (!rc) {
		CHECK_INT(gdr_export_recv(sv[1], &got, rfds), 0);
		CHECK(!memcmp(&d, &got, sizeof(d)));
		close_fds(rfds, 2);
	}
	close(sv[0]);
	close(sv[1]);
	sigaction(SIGUSR1, &old, NULL);
	close_fds(fds, 2);
	done();
}

/* The fds a message carries are exactly the descriptor's num_fds. */
static void recv_fd_count(void)
{
	struct gdr_export_desc d, other, got;
	uint8_t w[GDR_EXPORT_WIRE_LEN];
	int fds[2], ofds[2], two[2], rfds[2], sv[2], before;
	char *p;

	node(0);
	p = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), 0);
	CHECK_INT(gdr_export(p + 8192, 4096, 0, &other, ofds), 0);
	CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), 0);
	pair(SOCK_SEQPACKET, sv);

	check_scope = "recv: one fd for num_fds 1";
	CHECK_INT(send_raw(sv[0], w, sizeof(w), fds, 1), 0);
	before = count_fds();
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), 0);
	CHECK_INT(count_fds(), before + 1);
	CHECK(rfds[0] >= 0);
	CHECK_INT(rfds[1], -1);
	CHECK_INT(ino_of(rfds[0]), d.dmabuf_ino[0]);
	close_fds(rfds, 2);

	check_scope = "recv: two fds for num_fds 1";
	two[0] = fds[0];
	two[1] = ofds[0];
	CHECK_INT(send_raw(sv[0], w, sizeof(w), two, 2), 0);
	before = count_fds();
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), -1);
	CHECK_INT(errno, EPROTO);
	SAID("the descriptor names 1 dma-bufs and the message carried 2 fds");
	CHECK_INT(count_fds(), before);
	CHECK_INT(rfds[0], -1);
	CHECK_INT(rfds[1], -1);
	CHECK_INT(got.version, 0);
	close_fds(rfds, 2);

	check_scope = "recv: the same fd twice for num_fds 1";
	two[1] = fds[0];
	CHECK_INT(send_raw(sv[0], w, sizeof(w), two, 2), 0);
	before = count_fds();
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), -1);
	CHECK_INT(errno, EPROTO);
	CHECK_INT(count_fds(), before);
	close_fds(rfds, 2);

	check_scope = "recv: an empty message with fds is not the end";
	CHECK_INT(send_raw(sv[0], w, 0, fds, 1), 0);
	before = count_fds();
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), -1);
	CHECK_INT(errno, EPROTO);
	SAID("the 0 bytes received are not a libgpudirect export descriptor");
	CHECK_INT(count_fds(), before);
	CHECK_INT(rfds[0], -1);
	close_fds(rfds, 2);

	check_scope = "recv: an empty message with two fds";
	CHECK_INT(send_raw(sv[0], w, 0, two, 2), 0);
	before = count_fds();
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), -1);
	CHECK_INT(errno, EPROTO);
	CHECK_INT(count_fds(), before);
	close_fds(rfds, 2);

	check_scope = "recv: an empty message without fds is the end";
	CHECK_INT(send_raw(sv[0], w, 0, NULL, 0), 0);
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), -1);
	CHECK_INT(errno, ECONNRESET);
	SAID("closed the socket (or sent an empty message)");
	close_fds(rfds, 2);

	close(sv[0]);
	close(sv[1]);
	close_fds(fds, 1);
	close_fds(ofds, 1);
	done();
}

/* --- the export --------------------------------------------------------- */
/* Export [p + 0x1234, +5000) of GPU 0 on a node set up by node_setup (and
 * the test) with @flags: the descriptor's mappings. */
static int export_count(uint32_t flags, struct gdr_export_desc *d, int *fds)
{
	char *p = fake_alloc_device(0, 1 << 20);

	CHECK_INT(gdr_export(p + 0x1234, 5000, flags, d, fds), 0);
	return (int)d->num_fds;
}

static void export_pcie_policy(void)
{
	struct gdr_export_desc d;
	const struct gdr_dev *g;
	int fds[2];

	check_scope = "export: a C2C GPU gets the PCIe-mapped dma-buf too";
	node_setup(0);
	fake_model.gpu[0].c2c = 1;
	fakes_install(&fx, NULL, NULL, NULL);
	CHECK_INT(export_count(0, &d, fds), 2);
	CHECK_INT(d.mapping[1], GDR_DMABUF_MAPPING_PCIE);
	CHECK_INT(fake_cu.flagged_exports, 1);
	close_fds(fds, 2);
	done();

	check_scope = "export: GPUDIRECT_PCIE_MAPPING=off, a C2C GPU";
	node_setup(0);
	fake_model.gpu[0].c2c = 1;
	fakes_setenv("GPUDIRECT_PCIE_MAPPING", "off");
	fakes_install(&fx, NULL, NULL, NULL);
	CHECK_INT(export_count(0, &d, fds), 1);
	CHECK_INT(d.mapping[1], 0);
	CHECK_INT(d.dmabuf_ino[1], 0);
	CHECK(fds[0] >= 0);
	CHECK_INT(fds[1], -1);
	CHECK_INT(fake_cu.flagged_exports, 0);
	CHECK_INT(fake_cu.exports, 1);
	g = gdr_dev_get(0);
	CHECK(g && g->c2c == GDR_YES); /* C2C it is: the variable said no */
	close_fds(fds, 2);
	done();

	check_scope = "export: a GPU whose C2C link NVML cannot tell";
	node_setup(0);
	fake_model.gpu[0].c2c = -1;
	fakes_install(&fx, NULL, NULL, NULL);
	CHECK_INT(export_count(0, &d, fds), 1);
	g = gdr_dev_get(0);
	CHECK(g && g->c2c == GDR_UNKNOWN);
	CHECK_INT(fake_cu.flagged_exports, 0);
	CHECK_INT(fds[1], -1);
	close_fds(fds, 2);

	check_scope = "export: that GPU, the PCIe mapping asked";
	CHECK_INT(export_count(GDR_EXPORT_PCIE_MAPPING, &d, fds), 2);
	CHECK_INT(fake_cu.flagged_exports, 1);
	close_fds(fds, 2);
	done();

	check_scope = "export: a GPU on PCIe";
	node_setup(0);
	fake_model.gpu[0].c2c = 0;
	fakes_install(&fx, NULL, NULL, NULL);
	CHECK_INT(export_count(0, &d, fds), 1);
	CHECK_INT(fake_cu.flagged_exports, 0);
	close_fds(fds, 2);
	done();
}

/* Every field of the descriptor gdr_export() writes. */
static void export_fields(void)
{
	struct gdr_export_desc d;
	struct fake_alloc *a;
	uint8_t boot[16];
	int fds[2], i;
	char *p;

	check_scope = "export: every field of the descriptor";
	node(0);
	CHECK_INT(gdr_parse_uuid("1b4e28ba-2fa1-11d2-883f-0016d3cca427", boot),
		  0);
	p = fake_alloc_device(0, 4 << 20);
	a = &fake_cu.allocs[fake_cu.num_allocs - 1];
	memset(&d, 0xa5, sizeof(d));
	CHECK_INT(gdr_export(p + 0x3456, 0x2345, GDR_EXPORT_PCIE_MAPPING, &d,
			     fds),
		  0);
	CHECK_INT(d.version, GDR_EXPORT_DESC_VERSION);
	CHECK_INT(d.num_fds, 2);
	CHECK_INT(d.mapping[0], GDR_DMABUF_MAPPING_DEFAULT);
	CHECK_INT(d.mapping[1], GDR_DMABUF_MAPPING_PCIE);
	/* [p + 0x3000, p + 0x6000): the pages around the buffer */
	CHECK_INT(d.dmabuf_size, 0x3000);
	CHECK_INT(d.offset, 0x456);
	CHECK_INT(d.length, 0x2345);
	CHECK_INT(d.iova, (uintptr_t)p + 0x3456);
	CHECK_INT(d.buffer_id, a->buffer_id);
	CHECK(a->buffer_id != 0);
	CHECK(fds[0] >= 0 && fds[1] >= 0);
	CHECK_INT(d.dmabuf_ino[0], ino_of(fds[0]));
	CHECK_INT(d.dmabuf_ino[1], ino_of(fds[1]));
	CHECK(d.dmabuf_ino[0] != d.dmabuf_ino[1]);
	CHECK_INT(d.mem_type, GDR_MEM_CUDA_DEVICE);
	CHECK_INT(d.owner_pid, getpid());
	CHECK_INT(d.lib_version, GPUDIRECT_VERSION_MAJOR << 16 |
					 GPUDIRECT_VERSION_MINOR << 8 |
					 GPUDIRECT_VERSION_MICRO);
	CHECK_STR(d.gpu_bus_id, "0000:06:00.0");
	for (i = strlen(d.gpu_bus_id); i < 16; i++)
		CHECK_INT(d.gpu_bus_id[i], 0);
	for (i = 0; i < 16; i++)
		CHECK_INT(d.gpu_uuid[i], 0xd0); /* the fake GPU 0's */
	CHECK(!memcmp(d.boot_id, boot, 16));
	/* Each dma-buf is the span, and what the driver was asked for. */
	CHECK_INT(fake_cu.last_export_base, (uintptr_t)p + 0x3000);
	CHECK_INT(fake_cu.last_export_size, 0x3000);
	close_fds(fds, 2);

	check_scope = "export: pool memory is carried as pool memory";
	a = &fake_cu.allocs[fake_cu.num_allocs];
	p = fake_alloc_device(0, 1 << 20);
	a->pool = 1;
	a->not_rdma = 0;
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), 0);
	CHECK_INT(d.mem_type, GDR_MEM_CUDA_POOL);
	CHECK_INT(d.num_fds, 1);
	CHECK_INT(d.mapping[1], 0);
	CHECK_INT(d.dmabuf_ino[1], 0);
	CHECK_INT(fds[1], -1);
	close_fds(fds, 2);
	done();
}

/* A descriptor of another version is not written or sent: pack and send
 * refuse it (EINVAL), naming the version, and write nothing. */
static void desc_version(void)
{
	static const unsigned int bad[] = { 0, GDR_EXPORT_DESC_VERSION + 1,
					    0xffffffffu };
	struct gdr_export_desc d;
	uint8_t w[GDR_EXPORT_WIRE_LEN], keep[GDR_EXPORT_WIRE_LEN];
	int fds[2], sv[2];
	char got;
	unsigned int i;

	node(0);
	pair(SOCK_SEQPACKET, sv);
	fds[0] = fds[1] = sv[0];
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		check_scope = "descriptor: another version";
		sample(&d, 1);
		d.version = bad[i];
		memset(w, 0xee, sizeof(w));
		memcpy(keep, w, sizeof(w));
		CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), -1);
		CHECK_INT(errno, EINVAL);
		SAID("this library reads version");
		CHECK(!memcmp(w, keep, sizeof(w)));
		CHECK_INT(gdr_export_send(sv[0], &d, fds), -1);
		CHECK_INT(errno, EINVAL);
		SAID("this library reads version");
		CHECK_INT((int)recv(sv[1], &got, 1, MSG_DONTWAIT), -1);
		CHECK_INT(errno, EAGAIN);
	}
	check_scope = "descriptor: this version";
	sample(&d, 1);
	accepted(&d);
	close(sv[0]);
	close(sv[1]);
	done();
}

/* gdr_fds_send and gdr_fds_recv carry at most GDR_FDS_MAX fds: that many
 * go, one more is EINVAL with nothing sent (no write past the control
 * buffer). */
static void fds_max(void)
{
	int fds[GDR_FDS_MAX + 1], rfds[GDR_FDS_MAX + 1], sv[2];
	struct gdr_fds_msg m;
	char buf[4];
	unsigned int i;

	check_scope = "gdr_fds_send: GDR_FDS_MAX + 1 fds";
	pair(SOCK_SEQPACKET, sv);
	for (i = 0; i <= GDR_FDS_MAX; i++)
		fds[i] = sv[0];
	CHECK_INT(gdr_fds_send(sv[0], "x", 1, fds, GDR_FDS_MAX + 1), EINVAL);
	CHECK_INT((int)recv(sv[1], buf, 1, MSG_DONTWAIT), -1);
	CHECK_INT(errno, EAGAIN);

	check_scope = "gdr_fds_recv: room for GDR_FDS_MAX + 1";
	CHECK_INT(gdr_fds_recv(sv[1], buf, sizeof(buf), rfds, GDR_FDS_MAX + 1,
			       &m),
		  EINVAL);

	check_scope = "gdr_fds_send: GDR_FDS_MAX fds";
	CHECK_INT(gdr_fds_send(sv[0], "y", 1, fds, GDR_FDS_MAX), 0);
	CHECK_INT(gdr_fds_recv(sv[1], buf, sizeof(buf), rfds, GDR_FDS_MAX, &m),
		  0);
	CHECK_INT((int)m.got, 1);
	CHECK_INT((int)m.nfds, GDR_FDS_MAX);
	CHECK(buf[0] == 'y');
	for (i = 0; i < m.nfds; i++)
		close(rfds[i]);
	close(sv[0]);
	close(sv[1]);
	done();
}

int main(void)
{
	desc_version();
	fds_max();
	desc_bus_id();
	desc_past_num_fds();
	desc_mem_type();
	recv_piece_then_reset();
	send_partial();
	eintr();
	recv_fd_count();
	export_pcie_policy();
	export_fields();
	return check_summary("share-edges");
}
