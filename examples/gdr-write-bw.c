/* SPDX-License-Identifier: MIT */
/*
 * gdr-write-bw: RDMA write bandwidth between two processes over rdma_cm,
 * with the buffers registered by libgpudirect, in host or GPU memory, and
 * the data checked after every size. Options and output follow perftest's
 * ib_write_bw so the two can be run side by side.
 *
 *   server:  gdr-write-bw [options]
 *   client:  gdr-write-bw [options] SERVER_ADDRESS
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <gpudirect.h>
#include <rdma/rdma_cma.h>

#include "count.h"
#include "devmem.h"
#include "unixsock.h"

#define MB 1048576.0

struct opts {
	const char *dev, *server, *mem;
	const char *import;    /* --mem=import:SOCKET: the socket */
	const char *port;      /* as given, for getaddrinfo */
	unsigned int port_num; /* the same, read by number_parse */
	size_t size;
	unsigned int iters, depth;
	int all, gbits, cuda_dev, cache, pcie;
	uint32_t path_mask;
	const char *path_name;
};

/* What the server tells the client in the accept's private data. */
struct remote {
	uint64_t addr;
	uint32_t rkey;
	uint32_t flags; /* REMOTE_*; 0 from a release before 0.4 */
	uint64_t size;
};

/* The server's buffer is another process's: its verdicts say "not
 * checked here" (2), and its owner checks the data. */
#define REMOTE_OWNER_CHECKS 1u

/*
 * What a client tells the server in the connect's private data (none
 * before 0.4): which verdicts it understands. A server whose checks are
 * its owner's takes only a client that knows the third verdict, so that
 * an older one never reads it as a failed check.
 */
struct hello {
	uint32_t magic; /* HELLO_MAGIC */
	uint32_t caps;	/* HELLO_* */
};

#define HELLO_MAGIC 0x47574257u /* "GWBW" */
#define HELLO_UNCHECKED 1u

/* -d auto: the names of the RDMA devices nearest the buffer's GPU. */
#define NEAREST_MAX 16
struct nearest {
	unsigned int num;
	char name[NEAREST_MAX][64];
};

struct conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct devmem buf; /* with --mem=import, only ptr: the owner's iova */
	struct ibv_mr *mr;
	/*
	 * With --cache the client registers its source buffer through a
	 * registration cache on every write instead of once (mr stays NULL):
	 * inflight[i] is the MR that write i holds until it completes.
	 */
	struct gdr_cache *cache;
	struct ibv_mr **inflight;
	char *ctl; /* small host buffer for control messages */
	struct ibv_mr *ctl_mr;
	struct remote peer;
	size_t max;
	struct nearest near; /* -d auto */
	/* --mem=import: the owner's export, registered at setup */
	struct gdr_export_desc desc;
	int fds[GDR_EXPORT_MAX_FDS];
};

static void die(const char *what, const char *why)
{
	fprintf(stderr, "gdr-write-bw: %s: %s\n", what, why);
	exit(1);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static struct rdma_cm_event *expect(struct conn *c, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(c->ch, &ev))
		die("rdma_get_cm_event", strerror(errno));
	if (ev->event != t) {
		fprintf(stderr,
			"gdr-write-bw: expected %s, got %s (status %d)\n",
			rdma_event_str(t), rdma_event_str(ev->event),
			ev->status);
		exit(1);
	}
	return ev;
}

/*
 * The client's registration cache. Host buffers are cached too
 * (GDR_CACHE_HOST): this program owns the buffer and invalidates it
 * before freeing it, which is the promise that mode asks for.
 */
static void setup_cache(struct conn *c, const struct opts *o,
			const struct gdr_reg_attr *reg, const char *name)
{
	struct gdr_cache_attr ca = { 0 };

	ca.comp_mask = GDR_CACHE_ATTR_FLAGS | GDR_CACHE_ATTR_REG;
	ca.flags = GDR_CACHE_HOST;
	ca.reg = *reg;
	c->cache = gdr_cache_create(c->pd, &ca);
	if (!c->cache)
		die("gdr_cache_create", gdr_last_error());
	c->inflight = calloc(o->iters, sizeof(*c->inflight));
	if (!c->inflight)
		die("calloc", strerror(errno));
	printf(" Registration    : through a cache, one gdr_cache_get() per "
	       "write, %s memory on %s\n",
	       o->mem, name);
}

/* The lkey for a write from the first @size bytes of the buffer. */
static uint32_t src_lkey(struct conn *c, size_t size, struct ibv_mr **held)
{
	struct ibv_mr *mr;

	if (!c->cache)
		return c->mr->lkey;
	mr = gdr_cache_get(c->cache, c->buf.ptr, size ? size : 1);
	if (!mr)
		die("gdr_cache_get", gdr_last_error());
	*held = mr;
	return mr->lkey;
}

static void src_put(struct conn *c, struct ibv_mr **held)
{
	int err;

	if (!*held)
		return;
	err = gdr_cache_put(c->cache, *held);
	if (err)
		die("gdr_cache_put", gdr_last_error());
	*held = NULL;
}

/*
 * -d auto: every RDMA device at the best PCIe distance from the buffer's
 * GPU, as gdr_rank_nics() ranks the node's devices (GDR_RANK_BEST: a
 * dual-port NIC's two functions, or rails equally near, are all as good).
 * Asked before any waiting; rdma_cm still picks the device by address:
 * this says which ones to give the address of.
 */
static void nearest(const struct conn *c, struct nearest *near)
{
	struct gdr_rank_attr attr = { .policy = GDR_RANK_BEST };
	struct gdr_nic_rank r[NEAREST_MAX];
	struct ibv_context **ctxs;
	struct ibv_device **list;
	unsigned int k, got = NEAREST_MAX;
	int num = 0, opened = 0, i, err;

	if (!c->buf.cuda)
		die("-d auto", "it picks the device nearest a GPU: use it with "
			       "--mem cuda:N");
	list = ibv_get_device_list(&num);
	if (!list || num <= 0)
		die("-d auto", "no RDMA device (ibv_get_device_list)");
	ctxs = calloc((size_t)num, sizeof(*ctxs));
	if (!ctxs)
		die("-d auto", "out of memory");
	for (i = 0; i < num; i++) {
		ctxs[opened] = ibv_open_device(list[i]);
		if (ctxs[opened])
			opened++;
	}
	attr.cuda_device = c->buf.device;
	err = opened ? gdr_rank_nics(&attr, ctxs, (unsigned)opened, r, &got,
				     sizeof(r[0]))
		     : -1;
	near->num = 0;
	if (!err) {
		near->num = got < NEAREST_MAX ? got : NEAREST_MAX;
		printf(" Nearest device%s : ", near->num > 1 ? "s" : " ");
		for (k = 0; k < near->num; k++) {
			snprintf(near->name[k], sizeof(near->name[k]), "%s",
				 ibv_get_device_name(ctxs[r[k].index]->device));
			printf("%s%s%s", k ? ", " : "", near->name[k],
			       r[k].data_direct ? " (Data Direct)" : "");
		}
		printf(" (%s) to GPU %d\n",
		       near->num ? gdr_distance_str(r[0].distance) : "none",
		       c->buf.device);
	}
	for (i = 0; i < opened; i++)
		ibv_close_device(ctxs[i]);
	free(ctxs);
	ibv_free_device_list(list);
	if (err)
		die("-d auto", opened ? gdr_last_error()
				      : "no RDMA device could be opened");
}

static int is_nearest(const struct nearest *near, const char *name)
{
	unsigned int k;

	for (k = 0; k < near->num; k++)
		if (!strcmp(near->name[k], name))
			return 1;
	return 0;
}

/*
 * --mem=import:SOCKET: receive the export of `gdr-share owner SOCKET`,
 * before any waiting for a peer (a wrong socket is said at once).
 */
static void receive_import(struct conn *c, const char *path)
{
	struct timeval tv = { .tv_sec = 10 };
	char err[512];
	int s = unixsock_connect(path, err, sizeof(err));

	if (s < 0)
		die("--mem=import", err);
	/* An owner that never sends must not hold this program forever. */
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("setsockopt(SO_RCVTIMEO)", strerror(errno));
	if (gdr_export_recv(s, &c->desc, c->fds))
		die("gdr_export_recv",
		    errno == EAGAIN ? "the owner sent nothing in 10 s"
				    : gdr_last_error());
	close(s);
	if (c->desc.length < c->max) {
		fprintf(stderr,
			"gdr-write-bw: the owner's buffer has %llu bytes, "
			"fewer than -s %zu: give -s at most %llu\n",
			(unsigned long long)c->desc.length, c->max,
			(unsigned long long)c->desc.length);
		exit(1);
	}
	printf(" Imported        : %llu bytes of GPU %s from pid %u "
	       "(buffer id %llu)\n",
	       (unsigned long long)c->desc.length, c->desc.gpu_bus_id,
	       c->desc.owner_pid, (unsigned long long)c->desc.buffer_id);
	/* Addressed by the owner's iova, the descriptor's default. */
	c->buf.ptr = (void *)(uintptr_t)c->desc.iova;
	c->buf.len = c->max;
}

/* Register the received export; the MR then holds the dma-buf. */
static struct ibv_mr *import_register(struct conn *c,
				      const struct gdr_reg_attr *attr,
				      struct gdr_reg_info *info)
{
	struct ibv_mr *mr;
	int i;

	mr = gdr_import_register(c->pd, &c->desc, c->fds, attr, info,
				 sizeof(*info));
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	if (!mr)
		die("gdr_import_register", gdr_last_error());
	return mr;
}

/* PD, buffer, registration through libgpudirect, CQ and QP on @id. */
static void setup(struct conn *c, const struct opts *o, struct rdma_cm_id *id)
{
	struct gdr_reg_attr attr = { 0 };
	struct gdr_reg_info info = { 0 };
	struct ibv_qp_init_attr qa;
	const char *name = ibv_get_device_name(id->verbs->device);
	unsigned int i;

	if (o->dev && !strcmp(o->dev, "auto")) {
		if (!is_nearest(&c->near, name))
			fprintf(stderr,
				"gdr-write-bw: warning: rdma_cm chose %s, but "
				"%s %s nearer GPU %d: give an address of %s%s\n",
				name, c->near.name[0],
				c->near.num > 1 ? "and others are" : "is",
				c->buf.device, c->near.name[0],
				c->near.num > 1 ? " or of another nearest one"
						: "");
	} else if (o->dev && strcmp(o->dev, name))
		fprintf(stderr,
			"gdr-write-bw: warning: rdma_cm chose %s, not %s "
			"(the address decides the device)\n",
			name, o->dev);
	c->pd = ibv_alloc_pd(id->verbs);
	if (!c->pd)
		die("ibv_alloc_pd", strerror(errno));
	if (o->path_mask) {
		attr.comp_mask |= GDR_REG_ATTR_PATH_MASK;
		attr.path_mask = o->path_mask;
	}
	if (o->pcie) {
		attr.comp_mask |= GDR_REG_ATTR_FLAGS;
		attr.flags |= GDR_REG_PCIE_MAPPING;
	}
	if (o->cache && o->server) {
		setup_cache(c, o, &attr, name);
		goto verbs;
	}
	if (o->import)
		c->mr = import_register(c, &attr, &info);
	else
		c->mr = gdr_register_ex(c->pd, c->buf.ptr, c->max, &attr, &info,
					sizeof(info));
	if (!c->mr)
		die("gdr_register", gdr_last_error());
	if (o->import)
		printf(" Registration    : %s path, the owner's %llu bytes (a "
		       "dma-buf; this process cannot read them)",
		       gdr_path_str(info.path),
		       (unsigned long long)c->desc.length);
	else
		printf(" Registration    : %s path, %zu bytes of %s memory",
		       gdr_path_str(info.path), c->max,
		       gdr_mem_type_str(info.mem_type));
	if (info.device >= 0)
		printf(" on GPU %d", info.device);
	printf(" on %s\n", name);
	for (i = 0; (info.mem_type == GDR_MEM_CUDA_DEVICE ||
		     info.mem_type == GDR_MEM_DMABUF) &&
		    i < info.num_attempts;
	     i++)
		if (info.attempts[i].reason[0])
			printf("   %-8s %s: %s\n",
			       gdr_path_str(info.attempts[i].path),
			       info.attempts[i].result == GDR_ATTEMPT_FAILED
				       ? "failed"
				       : "skipped",
			       info.attempts[i].reason);

verbs:
	c->ctl = calloc(1, 64);
	if (!c->ctl)
		die("calloc", strerror(errno));
	c->ctl_mr = ibv_reg_mr(c->pd, c->ctl, 64, IBV_ACCESS_LOCAL_WRITE);
	if (!c->ctl_mr)
		die("ibv_reg_mr(control)", strerror(errno));
	c->cq = ibv_create_cq(id->verbs, (int)(o->depth * 2 + 16), NULL, NULL,
			      0);
	if (!c->cq)
		die("ibv_create_cq", strerror(errno));
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = o->depth + 4;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, c->pd, &qa))
		die("rdma_create_qp", strerror(errno));
	c->id = id;
}

static void post_recv(struct conn *c)
{
	struct ibv_sge sge = { (uintptr_t)c->ctl, 16, c->ctl_mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	int e = ibv_post_recv(c->id->qp, &wr, &bad);

	/* The post calls return their errno; errno is not theirs. */
	if (e)
		die("ibv_post_recv", strerror(e));
}

static void wait_wc(struct conn *c, struct ibv_wc *wc)
{
	int n;

	do {
		n = ibv_poll_cq(c->cq, 1, wc);
	} while (n == 0);
	if (n < 0)
		die("ibv_poll_cq", "failed");
	if (wc->status != IBV_WC_SUCCESS)
		die("completion", ibv_wc_status_str(wc->status));
}

static void send_ctl(struct conn *c, uint32_t value)
{
	struct ibv_sge sge = { (uintptr_t)c->ctl + 32, 4, c->ctl_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;
	int e;

	memcpy(c->ctl + 32, &value, 4);
	if ((e = ibv_post_send(c->id->qp, &wr, &bad)))
		die("ibv_post_send", strerror(e));
	wait_wc(c, &wc);
}

static int server(const struct opts *o, struct conn *c)
{
	struct rdma_conn_param param;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin;
	struct ibv_wc wc;
	int i, failures = 0;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)o->port_num);
	if (rdma_create_id(c->ch, &c->listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->listen, (struct sockaddr *)&sin) ||
	    rdma_listen(c->listen, 1))
		die("rdma_cm listen", strerror(errno));
	printf(" Waiting for a client on port %s\n", o->port);
	fflush(stdout);
	ev = expect(c, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (o->import) {
		struct hello h = { 0 };

		if (ev->param.conn.private_data_len >= sizeof(h))
			memcpy(&h, ev->param.conn.private_data, sizeof(h));
		if (h.magic != HELLO_MAGIC || !(h.caps & HELLO_UNCHECKED)) {
			rdma_reject(ev->id, NULL, 0);
			rdma_ack_cm_event(ev);
			die("connect",
			    "the client is a gdr-write-bw older than 0.4, "
			    "which would read this server's 'checked by the "
			    "owner' as a failed check: run the same release "
			    "on both sides");
		}
	}
	setup(c, o, ev->id);
	rdma_ack_cm_event(ev);
	for (i = 0; i < 8; i++)
		post_recv(c);
	c->peer.addr = (uintptr_t)c->buf.ptr;
	c->peer.rkey = c->mr->rkey;
	c->peer.size = c->max;
	c->peer.flags = o->import ? REMOTE_OWNER_CHECKS : 0;
	memset(&param, 0, sizeof(param));
	param.private_data = &c->peer;
	param.private_data_len = sizeof(c->peer);
	param.responder_resources = param.initiator_depth = 1;
	if (rdma_accept(c->id, &param))
		die("rdma_accept", strerror(errno));
	rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_ESTABLISHED));

	for (;;) {
		long long bad;
		size_t size;

		wait_wc(c, &wc);
		if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM)
			continue;
		size = ntohl(wc.imm_data);
		post_recv(c);
		if (size == 0)
			break;
		/* Another process's memory: only its owner can read it. */
		if (o->import) {
			send_ctl(c, 2);
			continue;
		}
		bad = size > c->max ? -1 : devmem_check(&c->buf, size);
		if (bad < 0)
			fprintf(stderr,
				"gdr-write-bw: data check FAILED at size %zu: "
				"%s\n",
				size,
				size > c->max ? "larger than the buffer"
					      : "the buffer cannot be read");
		else if (bad)
			fprintf(stderr,
				"gdr-write-bw: data check FAILED at "
				"size %zu, byte %lld\n",
				size, bad - 1);
		send_ctl(c, bad ? 0 : 1);
		failures += bad != 0;
	}
	return failures ? 1 : 0;
}

static void print_header(const struct opts *o, const char *dev)
{
	printf("---------------------------------------------------------------------------------------\n");
	printf("                    RDMA_Write BW Test (libgpudirect)\n");
	printf(" Device          : %s\n", dev);
	printf(" Memory          : %s\n", o->mem);
	printf(" TX depth        : %u\n", o->depth);
	printf("---------------------------------------------------------------------------------------\n");
	printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
	       o->gbits ? "Gb/sec" : "MB/sec", o->gbits ? "Gb/sec" : "MB/sec");
}

static double units(const struct opts *o, double bytes_per_s)
{
	return o->gbits ? bytes_per_s * 8 / 1e9 : bytes_per_s / MB;
}

/* iters writes of size bytes to the peer, @depth outstanding. */
static void run_size(struct conn *c, const struct opts *o, size_t size,
		     double *posted_at, double *done_at)
{
	struct ibv_sge sge = { (uintptr_t)c->buf.ptr, (uint32_t)size, 0 };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[16];
	unsigned int posted = 0, done = 0, i;
	double t0, t1, peak = 0, avg;
	int n, e;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = c->peer.addr;
	wr.wr.rdma.rkey = c->peer.rkey;

	t0 = now();
	while (done < o->iters) {
		while (posted < o->iters && posted - done < o->depth) {
			posted_at[posted] = now();
			sge.lkey = src_lkey(c, size,
					    c->inflight ? &c->inflight[posted]
							: NULL);
			if ((e = ibv_post_send(c->id->qp, &wr, &bad)))
				die("ibv_post_send", strerror(e));
			posted++;
		}
		n = ibv_poll_cq(c->cq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq", "failed");
		for (i = 0; i < (unsigned)n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("RDMA write",
				    ibv_wc_status_str(wc[i].status));
			/* An RC send queue completes in order. */
			if (c->inflight)
				src_put(c, &c->inflight[done]);
			done_at[done++] = now();
		}
	}
	t1 = now();
	avg = (double)size * o->iters / (t1 - t0);
	/*
	 * Peak, as perftest defines it: the best average over any run of
	 * writes, from posting the first to completing the last.
	 */
	if (o->iters <= 20000) {
		double best = 1e30;
		unsigned int j;

		for (i = 0; i < o->iters; i++)
			for (j = i; j < o->iters; j++) {
				double t = (done_at[j] - posted_at[i]) /
					   (j - i + 1);

				if (t > 0 && t < best)
					best = t;
			}
		peak = (double)size / best;
	}
	if (peak < avg)
		peak = avg;
	printf(" %-10zu %-14u %-18.2f %-20.2f %-.6f\n", size, o->iters,
	       units(o, peak), units(o, avg), o->iters / (t1 - t0) / 1e6);
	fflush(stdout);
}

/*
 * Tell the server which size just landed and wait for its verdict: 1 the
 * data is right, 0 it is not, 2 the server could not look (its buffer is
 * another process's).
 */
static uint32_t verify(struct conn *c, size_t size)
{
	struct ibv_sge sge = { (uintptr_t)c->buf.ptr, (uint32_t)size, 0 };
	struct ibv_send_wr wr, *bad;
	struct ibv_mr *held = NULL;
	struct ibv_wc wc;
	uint32_t ok = 0;
	int e;

	sge.lkey = src_lkey(c, size, &held);

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = size ? 1 : 0;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl((uint32_t)size);
	wr.wr.rdma.remote_addr = c->peer.addr;
	wr.wr.rdma.rkey = c->peer.rkey;
	if ((e = ibv_post_send(c->id->qp, &wr, &bad)))
		die("ibv_post_send", strerror(e));
	for (;;) {
		wait_wc(c, &wc);
		if (wc.opcode == IBV_WC_RDMA_WRITE && held)
			src_put(c, &held);
		if (wc.opcode == IBV_WC_RECV)
			break;
	}
	/* The reply can only follow the write, whose completion came first. */
	src_put(c, &held);
	memcpy(&ok, c->ctl, 4);
	post_recv(c);
	return ok;
}

static int client(const struct opts *o, struct conn *c)
{
	static const struct hello hello = { HELLO_MAGIC, HELLO_UNCHECKED };
	struct rdma_conn_param param;
	struct rdma_cm_event *ev;
	struct addrinfo *ai;
	double *posted_at, *done_at;
	size_t size;
	int failures = 0, unchecked = 0, i, e;
	uint32_t verdict;

	if ((e = getaddrinfo(o->server, o->port, NULL, &ai))) {
		fprintf(stderr, "gdr-write-bw: %s: %s\n", o->server,
			e == EAI_SYSTEM ? strerror(errno) : gai_strerror(e));
		exit(1);
	}
	if (rdma_create_id(c->ch, &c->listen, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->listen, NULL, ai->ai_addr, 2000))
		die("rdma_resolve_addr", strerror(errno));
	freeaddrinfo(ai);
	rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(c->listen, 2000))
		die("rdma_resolve_route", strerror(errno));
	rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED));
	setup(c, o, c->listen);
	for (i = 0; i < 8; i++)
		post_recv(c);
	memset(&param, 0, sizeof(param));
	param.responder_resources = param.initiator_depth = 1;
	param.retry_count = 7;
	param.private_data = &hello;
	param.private_data_len = sizeof(hello);
	if (rdma_connect(c->id, &param))
		die("rdma_connect", strerror(errno));
	ev = expect(c, RDMA_CM_EVENT_ESTABLISHED);
	if (ev->param.conn.private_data_len < sizeof(c->peer))
		die("connect", "the server sent no buffer description");
	memcpy(&c->peer, ev->param.conn.private_data, sizeof(c->peer));
	rdma_ack_cm_event(ev);
	if (c->peer.size < c->max)
		die("connect", "the server's buffer is smaller; give it the "
			       "same -s/-a");
	if (c->peer.flags & REMOTE_OWNER_CHECKS)
		printf(" The server's buffer is another process's: its owner "
		       "checks the data (gdr-share owner --check)\n");

	posted_at = calloc(o->iters, sizeof(double));
	done_at = calloc(o->iters, sizeof(double));
	if (!posted_at || !done_at)
		die("calloc", strerror(errno));
	print_header(o, ibv_get_device_name(c->id->verbs->device));
	for (size = o->all ? 2 : o->size; size <= o->size; size *= 2) {
		/* An imported source holds what its owner put there
		 * (gdr-share owner --fill=SIZE: this size's pattern). */
		if (!o->import && devmem_fill(&c->buf, size, 0))
			die("buffer", "cannot fill the source buffer");
		run_size(c, o, size, posted_at, done_at);
		verdict = verify(c, size);
		if (verdict == 2 && (c->peer.flags & REMOTE_OWNER_CHECKS)) {
			unchecked++;
		} else if (verdict != 1) {
			fprintf(stderr,
				"gdr-write-bw: data check FAILED at size %zu\n",
				size);
			failures++;
		}
		if (!o->all)
			break;
	}
	printf("---------------------------------------------------------------------------------------\n");
	if (failures || !unchecked)
		printf(" Data check      : %s\n",
		       failures ? "FAILED" : "passed");
	else
		printf(" Data check      : left to the owner of the server's "
		       "buffer (gdr-share owner --check=%zu)\n",
		       o->size);
	if (c->cache) {
		struct gdr_cache_stats st;

		if (gdr_cache_query_stats(c->cache, &st, sizeof(st)))
			die("gdr_cache_query_stats", gdr_last_error());
		printf(" Cache           : %llu hits, %llu misses, %llu "
		       "entries\n",
		       (unsigned long long)st.hits,
		       (unsigned long long)st.misses,
		       (unsigned long long)st.entries);
	}
	/* Size 0 tells the server to stop. */
	{
		struct ibv_send_wr wr, *bad;
		struct ibv_wc wc;

		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = 0;
		wr.wr.rdma.remote_addr = c->peer.addr;
		wr.wr.rdma.rkey = c->peer.rkey;
		if ((e = ibv_post_send(c->id->qp, &wr, &bad)))
			die("ibv_post_send", strerror(e));
		do
			wait_wc(c, &wc);
		while (wc.opcode != IBV_WC_RDMA_WRITE);
	}
	free(posted_at);
	free(done_at);
	return failures ? 1 : 0;
}

static void teardown(struct conn *c, int o_import)
{
	if (c->id) {
		rdma_disconnect(c->id);
		rdma_destroy_qp(c->id);
	}
	if (c->mr && gdr_deregister(c->mr))
		fprintf(stderr, "gdr-write-bw: %s\n", gdr_last_error());
	/* The promise GDR_CACHE_HOST asks for: invalidate before freeing. */
	if (c->cache && (gdr_cache_invalidate(c->cache, c->buf.ptr, c->max) ||
			 gdr_cache_destroy(c->cache)))
		fprintf(stderr, "gdr-write-bw: %s\n", gdr_last_error());
	free(c->inflight);
	if (c->ctl_mr)
		ibv_dereg_mr(c->ctl_mr);
	free(c->ctl);
	if (!o_import)
		devmem_free(&c->buf);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id && c->id != c->listen)
		rdma_destroy_id(c->id);
	if (c->listen)
		rdma_destroy_id(c->listen);
	rdma_destroy_event_channel(c->ch);
}

/* @s as a count, or a usage error (exit 2): a "1M" read as 1 would make
 * sizes no peer or owner agrees with. */
static unsigned long long number(const char *s)
{
	unsigned long long v;

	if (count_parse(s, UINT32_MAX, &v)) {
		fprintf(stderr,
			"gdr-write-bw: %s is not a count (decimal digits, "
			"1 to %u)\n",
			s, UINT32_MAX);
		exit(2);
	}
	return v;
}

static void usage(const char *prog)
{
	printf("usage: %s [options] [SERVER_ADDRESS]\n"
	       "  -d, --ib-dev=DEV       RDMA device (informational: rdma_cm picks it by address);\n"
	       "                         auto: say which device is nearest the --mem cuda:N GPU\n"
	       "  -p, --port=PORT        rdma_cm port (18515)\n"
	       "  -s, --size=BYTES       message size (65536)\n"
	       "  -n, --iters=N          iterations per size (5000)\n"
	       "  -a, --all              every size from 2 to 2^23 bytes\n"
	       "  -t, --tx-depth=N       writes in flight (128)\n"
	       "  -F, --CPU-freq         accepted for perftest compatibility\n"
	       "      --report_gbits     report Gb/s\n"
	       "      --mem=host|cuda[:N]  where the buffers live (host)\n"
	       "      --mem=import:SOCKET  the buffer another process owns and\n"
	       "                         serves on SOCKET (gdr-share owner SOCKET)\n"
	       "      --use_cuda=N       the same as --mem=cuda:N\n"
	       "      --path=auto|data-direct|dmabuf|peermem|host  registration path (auto)\n"
	       "      --use_cuda_dmabuf  the same as --path=dmabuf\n"
	       "      --use_data_direct  the same as --path=data-direct\n"
	       "      --use_cuda_pcie_mapping  export GPU memory with the PCIe mapping\n"
	       "      --cache            client: register through a gdr_cache on every write\n",
	       prog);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, 'a' },
		{ "tx-depth", required_argument, NULL, 't' },
		{ "CPU-freq", no_argument, NULL, 'F' },
		{ "report_gbits", no_argument, NULL, 'G' },
		{ "mem", required_argument, NULL, 'M' },
		{ "use_cuda", required_argument, NULL, 'U' },
		{ "path", required_argument, NULL, 'P' },
		{ "use_cuda_dmabuf", no_argument, NULL, 'D' },
		{ "cache", no_argument, NULL, 'C' },
		{ "use_data_direct", no_argument, NULL, 'X' },
		{ "use_cuda_pcie_mapping", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static char cuda_spec[32];
	unsigned long long v;
	char err[256];
	struct opts o = { .port = "18515",
			  .port_num = 18515,
			  .size = 65536,
			  .iters = 5000,
			  .depth = 128,
			  .mem = "host" };
	enum gdr_path path;
	struct conn c;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "d:p:s:n:at:Fh", lo, NULL)) !=
	       -1) {
		switch (ch) {
		case 'd': o.dev = optarg; break;
		case 'p':
			if (number_parse(optarg, 1, 65535, &v)) {
				fprintf(stderr,
					"gdr-write-bw: -p takes a port "
					"(decimal digits, 1 to 65535), not "
					"'%s'\n",
					optarg);
				return 2;
			}
			o.port = optarg;
			o.port_num = (unsigned int)v;
			break;
		case 's': o.size = (size_t)number(optarg); break;
		case 'n': o.iters = (unsigned)number(optarg); break;
		case 'a': o.all = 1; break;
		case 't': o.depth = (unsigned)number(optarg); break;
		case 'F': break;
		case 'G': o.gbits = 1; break;
		case 'C': o.cache = 1; break;
		case 'M': o.mem = optarg; break;
		case 'U':
			/* The ordinal read whole by the one parser, then
			 * written back: nothing is cut. */
			if (number_parse(optarg, 0, DEVMEM_MAX_ORDINAL, &v)) {
				fprintf(stderr,
					"gdr-write-bw: --use_cuda takes a GPU "
					"ordinal (decimal digits, 0 to %d), "
					"not '%s'\n",
					DEVMEM_MAX_ORDINAL, optarg);
				return 2;
			}
			snprintf(cuda_spec, sizeof(cuda_spec), "cuda:%llu", v);
			o.mem = cuda_spec;
			break;
		case 'Y': o.pcie = 1; break;
		case 'X': optarg = (char *)"data-direct"; goto path;
		case 'D': optarg = (char *)"dmabuf"; /* fall through */
		case 'P':
		path:
			if (gdr_path_parse(optarg, &path)) {
				fprintf(stderr,
					"gdr-write-bw: --path must be auto, "
					"data-direct, dmabuf, peermem or "
					"host\n");
				return 2;
			}
			o.path_name = optarg;
			o.path_mask =
				path == GDR_PATH_NONE ? 0 : GDR_PATH_BIT(path);
			break;
		case 'h': usage(argv[0]); return 0;
		default: usage(argv[0]); return 2;
		}
	}
	if (optind < argc)
		o.server = argv[optind];
	if (o.all)
		o.size = 1u << 23;
	if (!o.size || o.size > (1u << 30) || !o.iters || !o.depth) {
		fprintf(stderr,
			"gdr-write-bw: -s must be 1..2^30, -n and -t at least 1\n");
		return 2;
	}
	if (!strncmp(o.mem, "import:", 7)) {
		o.import = o.mem + 7;
		/* The owner fills or checks one size's pattern; the cache
		 * registers this process's pointers. */
		if (!*o.import || o.all || o.cache ||
		    (o.dev && !strcmp(o.dev, "auto"))) {
			fprintf(stderr,
				"gdr-write-bw: --mem=import:SOCKET takes a "
				"socket, one size (-s, not -a), no --cache "
				"and no -d auto\n");
			return 2;
		}
	}
	memset(&c, 0, sizeof(c));
	c.max = o.size;
	/* The buffer first: a missing GPU is reported before any waiting. */
	if (o.import)
		receive_import(&c, o.import);
	else if (devmem_alloc(o.mem, c.max, &c.buf, err, sizeof(err)))
		die("buffer", err);
	if (o.dev && !strcmp(o.dev, "auto"))
		nearest(&c, &c.near);
	c.ch = rdma_create_event_channel();
	if (!c.ch)
		die("rdma_create_event_channel",
		    errno == ENODEV ? "no RDMA device (see gdr-info)"
				    : strerror(errno));
	rc = o.server ? client(&o, &c) : server(&o, &c);
	teardown(&c, o.import != NULL);
	return rc;
}
